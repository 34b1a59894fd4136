module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x6xi32>, %arg1: tensor<3x10xf32>) -> (tensor<2x3xi32> {jax.result_info = "result[0][0]"}, tensor<2x3xi32> {jax.result_info = "result[0][1]"}, tensor<3x2xbf16> {jax.result_info = "result[1][0]"}, tensor<3x2xi32> {jax.result_info = "result[1][1]"}) {
    %values, %indices = chlo.top_k(%arg0, k = 3) : tensor<2x6xi32> -> (tensor<2x3xi32>, tensor<2x3xi32>)
    %0 = stablehlo.convert %arg1 : (tensor<3x10xf32>) -> tensor<3x10xbf16>
    %values_0, %indices_1 = chlo.top_k(%0, k = 2) : tensor<3x10xbf16> -> (tensor<3x2xbf16>, tensor<3x2xi32>)
    return %values, %indices, %values_0, %indices_1 : tensor<2x3xi32>, tensor<2x3xi32>, tensor<3x2xbf16>, tensor<3x2xi32>
  }
}
