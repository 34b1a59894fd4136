module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x33xf32>) -> (tensor<4x33xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<4x33xf32>) -> tensor<4x33xbf16>
    %cst = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x33xbf16>, tensor<bf16>) -> tensor<4xbf16>
    %cst_0 = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<bf16>) -> tensor<4xbf16>
    %3 = stablehlo.maximum %2, %1 : tensor<4xbf16>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<4xbf16>) -> tensor<4x1xbf16>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<4x1xbf16>) -> tensor<4x33xbf16>
    %6 = stablehlo.subtract %0, %5 : tensor<4x33xbf16>
    %7 = stablehlo.exponential %6 : tensor<4x33xbf16>
    %8 = stablehlo.convert %7 : (tensor<4x33xbf16>) -> tensor<4x33xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<4x33xf32>, tensor<f32>) -> tensor<4xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %11 = stablehlo.convert %10 : (tensor<4x1xf32>) -> tensor<4x1xbf16>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<4x1xbf16>) -> tensor<4x33xbf16>
    %13 = stablehlo.divide %7, %12 : tensor<4x33xbf16>
    return %13 : tensor<4x33xbf16>
  }
}
