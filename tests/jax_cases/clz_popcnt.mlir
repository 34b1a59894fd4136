module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xi32>) -> (tensor<16xi32> {jax.result_info = "result[0]"}, tensor<16xi32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.count_leading_zeros %arg0 : tensor<16xi32>
    %1 = stablehlo.popcnt %arg0 : tensor<16xi32>
    return %0, %1 : tensor<16xi32>, tensor<16xi32>
  }
}
