module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4x5xf32>, %arg1: tensor<5x2x3x6xf32>) -> (tensor<2x4x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [1], contracting_dims = [1, 3] x [2, 0], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4x5xf32>, tensor<5x2x3x6xf32>) -> tensor<2x4x6xf32>
    return %0 : tensor<2x4x6xf32>
  }
}
