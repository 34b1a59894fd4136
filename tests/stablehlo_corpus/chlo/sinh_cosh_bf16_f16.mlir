module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<47xf32>) -> (tensor<47xbf16> {jax.result_info = "result[0]"}, tensor<47xbf16> {jax.result_info = "result[1]"}, tensor<47xf16> {jax.result_info = "result[2]"}, tensor<47xf16> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<47xf32>) -> tensor<47xbf16>
    %1 = chlo.sinh %0 : tensor<47xbf16> -> tensor<47xbf16>
    %2 = stablehlo.convert %arg0 : (tensor<47xf32>) -> tensor<47xbf16>
    %3 = chlo.cosh %2 : tensor<47xbf16> -> tensor<47xbf16>
    %4 = stablehlo.convert %arg0 : (tensor<47xf32>) -> tensor<47xf16>
    %5 = chlo.sinh %4 : tensor<47xf16> -> tensor<47xf16>
    %6 = stablehlo.convert %arg0 : (tensor<47xf32>) -> tensor<47xf16>
    %7 = chlo.cosh %6 : tensor<47xf16> -> tensor<47xf16>
    return %1, %3, %5, %7 : tensor<47xbf16>, tensor<47xbf16>, tensor<47xf16>, tensor<47xf16>
  }
}
