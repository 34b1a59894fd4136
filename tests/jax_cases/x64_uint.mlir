module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xui64>, %arg1: tensor<10xui64>) -> (tensor<10xui64> {jax.result_info = "result[0]"}, tensor<10xui64> {jax.result_info = "result[1]"}, tensor<10xui64> {jax.result_info = "result[2]"}, tensor<10xui64> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<10xui64>
    %1 = stablehlo.multiply %arg0, %arg1 : tensor<10xui64>
    %c = stablehlo.constant dense<5> : tensor<ui64>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui64>) -> tensor<10xui64>
    %3 = stablehlo.shift_right_logical %arg0, %2 : tensor<10xui64>
    %4 = stablehlo.maximum %arg0, %arg1 : tensor<10xui64>
    return %0, %1, %3, %4 : tensor<10xui64>, tensor<10xui64>, tensor<10xui64>, tensor<10xui64>
  }
}
