module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<50x3xf32>) -> (tensor<3xbf16> {jax.result_info = "result[0]"}, tensor<3xbf16> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<50x3xf32>) -> tensor<50x3xbf16>
    %1 = stablehlo.convert %0 : (tensor<50x3xbf16>) -> tensor<50x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<50x3xf32>, tensor<f32>) -> tensor<3xf32>
    %cst_0 = stablehlo.constant dense<5.000000e+01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %4 = stablehlo.divide %2, %3 : tensor<3xf32>
    %5 = stablehlo.convert %4 : (tensor<3xf32>) -> tensor<3xbf16>
    %6 = stablehlo.convert %arg0 : (tensor<50x3xf32>) -> tensor<50x3xbf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %7 = call @_var(%6, %c) : (tensor<50x3xbf16>, tensor<i32>) -> tensor<3xbf16>
    return %5, %7 : tensor<3xbf16>, tensor<3xbf16>
  }
  func.func private @_var(%arg0: tensor<50x3xbf16>, %arg1: tensor<i32>) -> tensor<3xbf16> {
    %0 = stablehlo.convert %arg0 : (tensor<50x3xbf16>) -> tensor<50x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<50x3xf32>, tensor<f32>) -> tensor<3xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %cst_0 = stablehlo.constant dense<5.000000e+01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
    %4 = stablehlo.divide %2, %3 : tensor<1x3xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<50x3xf32>
    %6 = stablehlo.subtract %0, %5 : tensor<50x3xf32>
    %7 = chlo.square %6 : tensor<50x3xf32> -> tensor<50x3xf32>
    %8 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<5.000000e+01> : tensor<f32>
    %9 = stablehlo.subtract %cst_1, %8 : tensor<f32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.reduce(%7 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<50x3xf32>, tensor<f32>) -> tensor<3xf32>
    %11 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %12 = stablehlo.divide %10, %11 : tensor<3xf32>
    %13 = stablehlo.convert %12 : (tensor<3xf32>) -> tensor<3xbf16>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.compare GT, %9, %cst_3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = call @_where(%14, %13, %cst_4) : (tensor<i1>, tensor<3xbf16>, tensor<f32>) -> tensor<3xbf16>
    return %15 : tensor<3xbf16>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<3xbf16>, %arg2: tensor<f32>) -> tensor<3xbf16> {
    %0 = stablehlo.convert %arg2 : (tensor<f32>) -> tensor<bf16>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<bf16>) -> tensor<3xbf16>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<i1>, tensor<3xbf16>
    return %2 : tensor<3xbf16>
  }
}
