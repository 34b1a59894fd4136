module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xi32>, %arg1: tensor<12xi32>) -> (tensor<12xi32> {jax.result_info = "result[0]"}, tensor<12xi32> {jax.result_info = "result[1]"}, tensor<12xi32> {jax.result_info = "result[2]"}, tensor<12xi32> {jax.result_info = "result[3]"}, tensor<12xi32> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.minimum %arg0, %arg1 : tensor<12xi32>
    %1 = stablehlo.maximum %arg0, %arg1 : tensor<12xi32>
    %2 = stablehlo.abs %arg0 : tensor<12xi32>
    %3 = stablehlo.sign %arg0 : tensor<12xi32>
    %4 = stablehlo.negate %arg0 : tensor<12xi32>
    return %0, %1, %2, %3, %4 : tensor<12xi32>, tensor<12xi32>, tensor<12xi32>, tensor<12xi32>, tensor<12xi32>
  }
}
