module @jit_i1e attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<52xf32>) -> (tensor<52xf32> {jax.result_info = "result"}) {
    %0 = chlo.bessel_i1e %arg0 : tensor<52xf32> -> tensor<52xf32>
    return %0 : tensor<52xf32>
  }
}
