module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x64xf64>, %arg1: tensor<64xf64>) -> (tensor<4x64xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<4x64xf64>) -> tensor<4x64xbf16>
    %1 = stablehlo.convert %arg0 : (tensor<4x64xf64>) -> tensor<4x64xbf16>
    %2 = stablehlo.multiply %1, %1 : tensor<4x64xbf16>
    %3 = stablehlo.convert %2 : (tensor<4x64xbf16>) -> tensor<4x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x64xf32>, tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %cst_0 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %7 = stablehlo.divide %5, %6 : tensor<4x1xf32>
    %8 = stablehlo.convert %7 : (tensor<4x1xf32>) -> tensor<4x1xbf16>
    %cst_1 = stablehlo.constant dense<9.983770e-07> : tensor<bf16>
    %9 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<bf16>) -> tensor<4x1xbf16>
    %10 = stablehlo.add %8, %9 : tensor<4x1xbf16>
    %11 = stablehlo.rsqrt %10 : tensor<4x1xbf16>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<4x1xbf16>) -> tensor<4x64xbf16>
    %13 = stablehlo.multiply %0, %12 : tensor<4x64xbf16>
    %14 = stablehlo.convert %arg1 : (tensor<64xf64>) -> tensor<64xbf16>
    %15 = stablehlo.broadcast_in_dim %14, dims = [1] : (tensor<64xbf16>) -> tensor<1x64xbf16>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<1x64xbf16>) -> tensor<4x64xbf16>
    %17 = stablehlo.multiply %13, %16 : tensor<4x64xbf16>
    return %17 : tensor<4x64xbf16>
  }
}
