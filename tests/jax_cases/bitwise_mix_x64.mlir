module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xi64>, %arg1: tensor<10xi64>) -> (tensor<10xi64> {jax.result_info = "result[0]"}, tensor<10xi64> {jax.result_info = "result[1]"}, tensor<10xi64> {jax.result_info = "result[2]"}, tensor<10xi64> {jax.result_info = "result[3]"}, tensor<10xi64> {jax.result_info = "result[4]"}, tensor<10xi64> {jax.result_info = "result[5]"}) {
    %0 = stablehlo.and %arg0, %arg1 : tensor<10xi64>
    %1 = stablehlo.or %arg0, %arg1 : tensor<10xi64>
    %2 = stablehlo.xor %arg0, %arg1 : tensor<10xi64>
    %3 = stablehlo.not %arg0 : tensor<10xi64>
    %c = stablehlo.constant dense<3> : tensor<i64>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<10xi64>
    %5 = stablehlo.shift_left %arg0, %4 : tensor<10xi64>
    %c_0 = stablehlo.constant dense<2> : tensor<i64>
    %6 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i64>) -> tensor<10xi64>
    %7 = stablehlo.shift_right_arithmetic %arg0, %6 : tensor<10xi64>
    return %0, %1, %2, %3, %5, %7 : tensor<10xi64>, tensor<10xi64>, tensor<10xi64>, tensor<10xi64>, tensor<10xi64>, tensor<10xi64>
  }
}
