module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<57xf32>) -> (tensor<57xbf16> {jax.result_info = "result[0]"}, tensor<57xf16> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<57xf32>) -> tensor<57xbf16>
    %1 = chlo.digamma %0 : tensor<57xbf16> -> tensor<57xbf16>
    %2 = stablehlo.convert %arg0 : (tensor<57xf32>) -> tensor<57xf16>
    %3 = chlo.digamma %2 : tensor<57xf16> -> tensor<57xf16>
    return %1, %3 : tensor<57xbf16>, tensor<57xf16>
  }
}
