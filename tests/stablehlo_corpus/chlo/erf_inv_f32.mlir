module @jit_erfinv attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<53xf32>) -> (tensor<53xf32> {jax.result_info = "result"}) {
    %0 = chlo.erf_inv %arg0 : tensor<53xf32> -> tensor<53xf32>
    return %0 : tensor<53xf32>
  }
}
