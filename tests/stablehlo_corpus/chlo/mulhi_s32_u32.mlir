module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xi32>, %arg1: tensor<12xi32>, %arg2: tensor<12xui32>, %arg3: tensor<12xui32>) -> (tensor<12xi32> {jax.result_info = "result[0]"}, tensor<12xui32> {jax.result_info = "result[1]"}) {
    %0 = chlo.mulhi %arg0, %arg1 : tensor<12xi32>, tensor<12xi32> -> tensor<12xi32>
    %1 = chlo.mulhi %arg2, %arg3 : tensor<12xui32>, tensor<12xui32> -> tensor<12xui32>
    return %0, %1 : tensor<12xi32>, tensor<12xui32>
  }
}
