module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16x4xf32>) -> (tensor<8x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<8x16xf32>) -> tensor<8x16xbf16>
    %1 = stablehlo.convert %arg1 : (tensor<16x4xf32>) -> tensor<16x4xbf16>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xbf16>
    %3 = stablehlo.convert %2 : (tensor<8x4xbf16>) -> tensor<8x4xf32>
    return %3 : tensor<8x4xf32>
  }
}
