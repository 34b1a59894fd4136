module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xi32>, %arg1: tensor<16xi32>) -> (tensor<16xi32> {jax.result_info = "result[0]"}, tensor<16xi32> {jax.result_info = "result[1]"}, tensor<16xi32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<31> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16xi32>
    %1 = stablehlo.and %arg1, %0 : tensor<16xi32>
    %2 = stablehlo.shift_left %arg0, %1 : tensor<16xi32>
    %c_0 = stablehlo.constant dense<31> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<16xi32>
    %4 = stablehlo.and %arg1, %3 : tensor<16xi32>
    %5 = stablehlo.shift_right_arithmetic %arg0, %4 : tensor<16xi32>
    %c_1 = stablehlo.constant dense<31> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<16xi32>
    %7 = stablehlo.and %arg1, %6 : tensor<16xi32>
    %8 = stablehlo.shift_right_logical %arg0, %7 : tensor<16xi32>
    return %2, %5, %8 : tensor<16xi32>, tensor<16xi32>, tensor<16xi32>
  }
}
