module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xf32>) -> (tensor<12xi32> {jax.result_info = "result[0]"}, tensor<12xf16> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<3.000000e+02> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<12xf32>
    %2 = stablehlo.convert %1 : (tensor<12xf32>) -> tensor<12xbf16>
    %3 = stablehlo.convert %2 : (tensor<12xbf16>) -> tensor<12xi32>
    %cst_0 = stablehlo.constant dense<1.000000e+05> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %5 = stablehlo.multiply %arg0, %4 : tensor<12xf32>
    %6 = stablehlo.convert %5 : (tensor<12xf32>) -> tensor<12xf16>
    return %3, %6 : tensor<12xi32>, tensor<12xf16>
  }
}
