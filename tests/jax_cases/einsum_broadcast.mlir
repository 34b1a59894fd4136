module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x1x3x4xf32>, %arg1: tensor<1x5x4x2xf32>) -> (tensor<2x5x3x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reshape %arg1 : (tensor<1x5x4x2xf32>) -> tensor<5x4x2xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<2x1x3x4xf32>) -> tensor<2x3x4xf32>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [2], precision = [DEFAULT, DEFAULT] : (tensor<5x4x2xf32>, tensor<2x3x4xf32>) -> tensor<5x2x2x3xf32>
    %3 = stablehlo.transpose %2, dims = [2, 0, 3, 1] : (tensor<5x2x2x3xf32>) -> tensor<2x5x3x2xf32>
    return %3 : tensor<2x5x3x2xf32>
  }
}
