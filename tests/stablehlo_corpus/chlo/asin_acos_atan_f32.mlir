module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<53xf32>) -> (tensor<53xf32> {jax.result_info = "result[0]"}, tensor<53xf32> {jax.result_info = "result[1]"}, tensor<53xf32> {jax.result_info = "result[2]"}) {
    %0 = chlo.asin %arg0 : tensor<53xf32> -> tensor<53xf32>
    %1 = chlo.acos %arg0 : tensor<53xf32> -> tensor<53xf32>
    %2 = chlo.atan %arg0 : tensor<53xf32> -> tensor<53xf32>
    return %0, %1, %2 : tensor<53xf32>, tensor<53xf32>, tensor<53xf32>
  }
}
