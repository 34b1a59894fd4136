module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<47xf32>, %arg1: tensor<47xf32>) -> (tensor<47xbf16> {jax.result_info = "result[0]"}, tensor<47xf16> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<47xf32>) -> tensor<47xbf16>
    %1 = stablehlo.convert %arg1 : (tensor<47xf32>) -> tensor<47xbf16>
    %2 = chlo.next_after %0, %1 : tensor<47xbf16>, tensor<47xbf16> -> tensor<47xbf16>
    %3 = stablehlo.convert %arg0 : (tensor<47xf32>) -> tensor<47xf16>
    %4 = stablehlo.convert %arg1 : (tensor<47xf32>) -> tensor<47xf16>
    %5 = chlo.next_after %3, %4 : tensor<47xf16>, tensor<47xf16> -> tensor<47xf16>
    return %2, %5 : tensor<47xbf16>, tensor<47xf16>
  }
}
