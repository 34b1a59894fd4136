module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<52xf64>) -> (tensor<52xf64> {jax.result_info = "result[0]"}, tensor<52xf64> {jax.result_info = "result[1]"}) {
    %0 = chlo.lgamma %arg0 : tensor<52xf64> -> tensor<52xf64>
    %1 = chlo.digamma %arg0 : tensor<52xf64> -> tensor<52xf64>
    return %0, %1 : tensor<52xf64>, tensor<52xf64>
  }
}
