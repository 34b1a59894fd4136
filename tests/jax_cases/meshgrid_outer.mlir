module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<6xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<6xf32>) -> tensor<1x6xf32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x6xf32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x6xf32>) -> tensor<4x6xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<4x6xf32>
    %5 = call @outer(%arg0, %arg1) : (tensor<4xf32>, tensor<6xf32>) -> tensor<4x6xf32>
    %6 = stablehlo.add %4, %5 : tensor<4x6xf32>
    return %6 : tensor<4x6xf32>
  }
  func.func private @outer(%arg0: tensor<4xf32>, %arg1: tensor<6xf32>) -> tensor<4x6xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<6xf32>) -> tensor<1x6xf32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x6xf32>
    %3 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<1x6xf32>) -> tensor<4x6xf32>
    %4 = stablehlo.add %2, %3 : tensor<4x6xf32>
    return %4 : tensor<4x6xf32>
  }
}
