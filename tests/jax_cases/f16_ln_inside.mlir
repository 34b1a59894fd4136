module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x20xf32>) -> (tensor<3x20xf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<3x20xf32>) -> tensor<3x20xf16>
    %1 = stablehlo.convert %0 : (tensor<3x20xf16>) -> tensor<3x20xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<3x20xf32>, tensor<f32>) -> tensor<3xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<3xf32>) -> tensor<3x1xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+01> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %5 = stablehlo.divide %3, %4 : tensor<3x1xf32>
    %6 = stablehlo.convert %5 : (tensor<3x1xf32>) -> tensor<3x1xf16>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<3x1xf16>) -> tensor<3x20xf16>
    %8 = stablehlo.subtract %0, %7 : tensor<3x20xf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %9 = call @_var(%0, %c) : (tensor<3x20xf16>, tensor<i32>) -> tensor<3x1xf16>
    %cst_1 = stablehlo.constant dense<1.000400e-03> : tensor<f16>
    %10 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f16>) -> tensor<3x1xf16>
    %11 = stablehlo.add %9, %10 : tensor<3x1xf16>
    %12 = stablehlo.rsqrt %11 : tensor<3x1xf16>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<3x1xf16>) -> tensor<3x20xf16>
    %14 = stablehlo.multiply %8, %13 : tensor<3x20xf16>
    return %14 : tensor<3x20xf16>
  }
  func.func private @_var(%arg0: tensor<3x20xf16>, %arg1: tensor<i32>) -> tensor<3x1xf16> {
    %0 = stablehlo.convert %arg0 : (tensor<3x20xf16>) -> tensor<3x20xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<3x20xf32>, tensor<f32>) -> tensor<3xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<3xf32>) -> tensor<3x1xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %4 = stablehlo.divide %2, %3 : tensor<3x1xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x20xf32>
    %6 = stablehlo.subtract %0, %5 : tensor<3x20xf32>
    %7 = chlo.square %6 : tensor<3x20xf32> -> tensor<3x20xf32>
    %8 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<2.000000e+01> : tensor<f32>
    %9 = stablehlo.subtract %cst_1, %8 : tensor<f32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.reduce(%7 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<3x20xf32>, tensor<f32>) -> tensor<3xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<3xf32>) -> tensor<3x1xf32>
    %12 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %13 = stablehlo.divide %11, %12 : tensor<3x1xf32>
    %14 = stablehlo.convert %13 : (tensor<3x1xf32>) -> tensor<3x1xf16>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.compare GT, %9, %cst_3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %16 = call @_where(%15, %14, %cst_4) : (tensor<i1>, tensor<3x1xf16>, tensor<f32>) -> tensor<3x1xf16>
    return %16 : tensor<3x1xf16>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<3x1xf16>, %arg2: tensor<f32>) -> tensor<3x1xf16> {
    %0 = stablehlo.convert %arg2 : (tensor<f32>) -> tensor<f16>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f16>) -> tensor<3x1xf16>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<i1>, tensor<3x1xf16>
    return %2 : tensor<3x1xf16>
  }
}
