module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<53xf32>) -> (tensor<53xf32> {jax.result_info = "result[0]"}, tensor<53xf32> {jax.result_info = "result[1]"}) {
    %0 = chlo.sinh %arg0 : tensor<53xf32> -> tensor<53xf32>
    %1 = chlo.cosh %arg0 : tensor<53xf32> -> tensor<53xf32>
    return %0, %1 : tensor<53xf32>, tensor<53xf32>
  }
}
