module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<20xf32>, %arg1: tensor<20xf32>) -> (tensor<20xf32> {jax.result_info = "result[0]"}, tensor<20xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.tan %arg0 : tensor<20xf32>
    %1 = stablehlo.atan2 %arg0, %arg1 : tensor<20xf32>
    return %0, %1 : tensor<20xf32>, tensor<20xf32>
  }
}
