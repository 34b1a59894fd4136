module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<15xi64>) -> (tensor<15xi64> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<-10> : tensor<i64>
    %c_0 = stablehlo.constant dense<10> : tensor<i64>
    %0 = call @clip(%arg0, %c, %c_0) : (tensor<15xi64>, tensor<i64>, tensor<i64>) -> tensor<15xi64>
    return %0 : tensor<15xi64>
  }
  func.func private @clip(%arg0: tensor<15xi64>, %arg1: tensor<i64>, %arg2: tensor<i64>) -> tensor<15xi64> {
    %0 = stablehlo.convert %arg1 : tensor<i64>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i64>) -> tensor<15xi64>
    %2 = stablehlo.maximum %1, %arg0 : tensor<15xi64>
    %3 = stablehlo.convert %arg2 : tensor<i64>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<i64>) -> tensor<15xi64>
    %5 = stablehlo.minimum %4, %2 : tensor<15xi64>
    return %5 : tensor<15xi64>
  }
}
