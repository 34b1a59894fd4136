module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4x5xf64>, %arg1: tensor<2x3x6x5xf64>) -> (tensor<2x3x4x6xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4x5xf64>, tensor<2x3x6x5xf64>) -> tensor<2x3x4x6xf64>
    return %0 : tensor<2x3x4x6xf64>
  }
}
