module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<30xf32>) -> (tensor<30xbf16> {jax.result_info = "result[0]"}, tensor<30xbf16> {jax.result_info = "result[1]"}, tensor<30xbf16> {jax.result_info = "result[2]"}, tensor<30xbf16> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<30xf32>) -> tensor<30xbf16>
    %1 = stablehlo.exponential %0 : tensor<30xbf16>
    %2 = stablehlo.convert %arg0 : (tensor<30xf32>) -> tensor<30xbf16>
    %3 = stablehlo.sine %2 : tensor<30xbf16>
    %4 = stablehlo.abs %arg0 : tensor<30xf32>
    %5 = stablehlo.convert %4 : (tensor<30xf32>) -> tensor<30xbf16>
    %6 = stablehlo.sqrt %5 : tensor<30xbf16>
    %7 = stablehlo.convert %arg0 : (tensor<30xf32>) -> tensor<30xbf16>
    %8 = chlo.erf %7 : tensor<30xbf16> -> tensor<30xbf16>
    return %1, %3, %6, %8 : tensor<30xbf16>, tensor<30xbf16>, tensor<30xbf16>, tensor<30xbf16>
  }
}
