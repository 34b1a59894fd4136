module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf64>) -> (tensor<7x8xf64> {jax.result_info = "result[0]"}, tensor<5x6xf64> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0 = call @_pad(%arg0, %c) : (tensor<3x4xf64>, tensor<i64>) -> tensor<7x8xf64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %1 = call @_pad_0(%arg0, %c_0) : (tensor<3x4xf64>, tensor<i64>) -> tensor<5x6xf64>
    return %0, %1 : tensor<7x8xf64>, tensor<5x6xf64>
  }
  func.func private @_pad(%arg0: tensor<3x4xf64>, %arg1: tensor<i64>) -> tensor<7x8xf64> {
    %0 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<3x4xf64>) -> tensor<1x4xf64>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 2] : (tensor<1x4xf64>) -> tensor<1x2x4xf64>
    %2 = stablehlo.reshape %1 : (tensor<1x2x4xf64>) -> tensor<2x4xf64>
    %3 = stablehlo.slice %arg0 [2:3, 0:4] : (tensor<3x4xf64>) -> tensor<1x4xf64>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 2] : (tensor<1x4xf64>) -> tensor<1x2x4xf64>
    %5 = stablehlo.reshape %4 : (tensor<1x2x4xf64>) -> tensor<2x4xf64>
    %6 = stablehlo.concatenate %2, %arg0, %5, dim = 0 : (tensor<2x4xf64>, tensor<3x4xf64>, tensor<2x4xf64>) -> tensor<7x4xf64>
    %7 = stablehlo.slice %6 [0:7, 0:1] : (tensor<7x4xf64>) -> tensor<7x1xf64>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<7x1xf64>) -> tensor<7x1x2xf64>
    %9 = stablehlo.reshape %8 : (tensor<7x1x2xf64>) -> tensor<7x2xf64>
    %10 = stablehlo.slice %6 [0:7, 3:4] : (tensor<7x4xf64>) -> tensor<7x1xf64>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<7x1xf64>) -> tensor<7x1x2xf64>
    %12 = stablehlo.reshape %11 : (tensor<7x1x2xf64>) -> tensor<7x2xf64>
    %13 = stablehlo.concatenate %9, %6, %12, dim = 1 : (tensor<7x2xf64>, tensor<7x4xf64>, tensor<7x2xf64>) -> tensor<7x8xf64>
    return %13 : tensor<7x8xf64>
  }
  func.func private @_pad_0(%arg0: tensor<3x4xf64>, %arg1: tensor<i64>) -> tensor<5x6xf64> {
    %0 = stablehlo.slice %arg0 [2:3, 0:4] : (tensor<3x4xf64>) -> tensor<1x4xf64>
    %1 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<3x4xf64>) -> tensor<1x4xf64>
    %2 = stablehlo.concatenate %0, %arg0, %1, dim = 0 : (tensor<1x4xf64>, tensor<3x4xf64>, tensor<1x4xf64>) -> tensor<5x4xf64>
    %3 = stablehlo.slice %2 [0:5, 3:4] : (tensor<5x4xf64>) -> tensor<5x1xf64>
    %4 = stablehlo.slice %2 [0:5, 0:1] : (tensor<5x4xf64>) -> tensor<5x1xf64>
    %5 = stablehlo.concatenate %3, %2, %4, dim = 1 : (tensor<5x1xf64>, tensor<5x4xf64>, tensor<5x1xf64>) -> tensor<5x6xf64>
    return %5 : tensor<5x6xf64>
  }
}
