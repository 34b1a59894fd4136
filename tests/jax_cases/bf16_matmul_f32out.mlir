module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x64xf32>, %arg1: tensor<64x4xf32>) -> (tensor<8x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<8x64xf32>) -> tensor<8x64xbf16>
    %1 = stablehlo.convert %arg1 : (tensor<64x4xf32>) -> tensor<64x4xbf16>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xbf16>, tensor<64x4xbf16>) -> tensor<8x4xf32>
    return %2 : tensor<8x4xf32>
  }
}
