module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x5x33xf32>, %arg1: tensor<2x33x3xf32>) -> (tensor<2x5x3xf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<2x5x33xf32>) -> tensor<2x5x33xf16>
    %1 = stablehlo.convert %arg1 : (tensor<2x33x3xf32>) -> tensor<2x33x3xf16>
    %2 = stablehlo.dot_general %0, %1, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x5x33xf16>, tensor<2x33x3xf16>) -> tensor<2x5x3xf16>
    return %2 : tensor<2x5x3xf16>
  }
}
