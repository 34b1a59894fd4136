module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<47xf32>) -> (tensor<47xbf16> {jax.result_info = "result[0]"}, tensor<47xf16> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<47xf32>) -> tensor<47xbf16>
    %1 = chlo.bessel_i1e %0 : tensor<47xbf16> -> tensor<47xbf16>
    %2 = stablehlo.convert %arg0 : (tensor<47xf32>) -> tensor<47xf16>
    %3 = chlo.bessel_i1e %2 : tensor<47xf16> -> tensor<47xf16>
    return %1, %3 : tensor<47xbf16>, tensor<47xf16>
  }
}
