module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x32xf32>, %arg1: tensor<32x16xf32>, %arg2: tensor<16x3xf32>) -> (tensor<4x3xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<4x32xf32>) -> tensor<4x32xbf16>
    %1 = stablehlo.convert %arg1 : (tensor<32x16xf32>) -> tensor<32x16xbf16>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x32xbf16>, tensor<32x16xbf16>) -> tensor<4x16xbf16>
    %3 = call @relu(%2) : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
    %4 = stablehlo.convert %arg2 : (tensor<16x3xf32>) -> tensor<16x3xbf16>
    %5 = stablehlo.dot_general %3, %4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xbf16>, tensor<16x3xbf16>) -> tensor<4x3xbf16>
    return %5 : tensor<4x3xbf16>
  }
  func.func private @relu(%arg0: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<4x16xbf16>
    %1 = stablehlo.maximum %arg0, %0 : tensor<4x16xbf16>
    return %1 : tensor<4x16xbf16>
  }
}
