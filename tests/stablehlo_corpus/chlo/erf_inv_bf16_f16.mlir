module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<53xf32>) -> (tensor<53xbf16> {jax.result_info = "result[0]"}, tensor<53xf16> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xbf16>
    %1 = chlo.erf_inv %0 : tensor<53xbf16> -> tensor<53xbf16>
    %2 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xf16>
    %3 = chlo.erf_inv %2 : tensor<53xf16> -> tensor<53xf16>
    return %1, %3 : tensor<53xbf16>, tensor<53xf16>
  }
}
