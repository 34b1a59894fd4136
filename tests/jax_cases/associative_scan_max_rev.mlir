module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<19x5xf32>) -> (tensor<19x5xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<19x5xf32>
    %1 = stablehlo.slice %0 [0:18:2, 0:5] : (tensor<19x5xf32>) -> tensor<9x5xf32>
    %2 = stablehlo.slice %0 [1:19:2, 0:5] : (tensor<19x5xf32>) -> tensor<9x5xf32>
    %3 = stablehlo.maximum %1, %2 : tensor<9x5xf32>
    %4 = stablehlo.slice %3 [0:8:2, 0:5] : (tensor<9x5xf32>) -> tensor<4x5xf32>
    %5 = stablehlo.slice %3 [1:9:2, 0:5] : (tensor<9x5xf32>) -> tensor<4x5xf32>
    %6 = stablehlo.maximum %4, %5 : tensor<4x5xf32>
    %7 = stablehlo.slice %6 [0:3:2, 0:5] : (tensor<4x5xf32>) -> tensor<2x5xf32>
    %8 = stablehlo.slice %6 [1:4:2, 0:5] : (tensor<4x5xf32>) -> tensor<2x5xf32>
    %9 = stablehlo.maximum %7, %8 : tensor<2x5xf32>
    %10 = stablehlo.slice %9 [0:1:2, 0:5] : (tensor<2x5xf32>) -> tensor<1x5xf32>
    %11 = stablehlo.slice %9 [1:2:2, 0:5] : (tensor<2x5xf32>) -> tensor<1x5xf32>
    %12 = stablehlo.maximum %10, %11 : tensor<1x5xf32>
    %13 = stablehlo.slice %12 [0:0, 0:5] : (tensor<1x5xf32>) -> tensor<0x5xf32>
    %14 = stablehlo.slice %9 [2:2:2, 0:5] : (tensor<2x5xf32>) -> tensor<0x5xf32>
    %15 = stablehlo.maximum %13, %14 : tensor<0x5xf32>
    %16 = stablehlo.slice %9 [0:1, 0:5] : (tensor<2x5xf32>) -> tensor<1x5xf32>
    %17 = stablehlo.concatenate %16, %15, dim = 0 : (tensor<1x5xf32>, tensor<0x5xf32>) -> tensor<1x5xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.pad %17, %cst, low = [0, 0], high = [1, 0], interior = [1, 0] : (tensor<1x5xf32>, tensor<f32>) -> tensor<2x5xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.pad %12, %cst_0, low = [1, 0], high = [0, 0], interior = [1, 0] : (tensor<1x5xf32>, tensor<f32>) -> tensor<2x5xf32>
    %20 = stablehlo.add %18, %19 : tensor<2x5xf32>
    %21 = stablehlo.slice %20 [0:1, 0:5] : (tensor<2x5xf32>) -> tensor<1x5xf32>
    %22 = stablehlo.slice %6 [2:4:2, 0:5] : (tensor<4x5xf32>) -> tensor<1x5xf32>
    %23 = stablehlo.maximum %21, %22 : tensor<1x5xf32>
    %24 = stablehlo.slice %6 [0:1, 0:5] : (tensor<4x5xf32>) -> tensor<1x5xf32>
    %25 = stablehlo.concatenate %24, %23, dim = 0 : (tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<2x5xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.pad %25, %cst_1, low = [0, 0], high = [1, 0], interior = [1, 0] : (tensor<2x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %27 = stablehlo.pad %20, %cst_2, low = [1, 0], high = [0, 0], interior = [1, 0] : (tensor<2x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    %28 = stablehlo.add %26, %27 : tensor<4x5xf32>
    %29 = stablehlo.slice %3 [2:9:2, 0:5] : (tensor<9x5xf32>) -> tensor<4x5xf32>
    %30 = stablehlo.maximum %28, %29 : tensor<4x5xf32>
    %31 = stablehlo.slice %3 [0:1, 0:5] : (tensor<9x5xf32>) -> tensor<1x5xf32>
    %32 = stablehlo.concatenate %31, %30, dim = 0 : (tensor<1x5xf32>, tensor<4x5xf32>) -> tensor<5x5xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %33 = stablehlo.pad %32, %cst_3, low = [0, 0], high = [0, 0], interior = [1, 0] : (tensor<5x5xf32>, tensor<f32>) -> tensor<9x5xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %34 = stablehlo.pad %28, %cst_4, low = [1, 0], high = [1, 0], interior = [1, 0] : (tensor<4x5xf32>, tensor<f32>) -> tensor<9x5xf32>
    %35 = stablehlo.add %33, %34 : tensor<9x5xf32>
    %36 = stablehlo.slice %0 [2:19:2, 0:5] : (tensor<19x5xf32>) -> tensor<9x5xf32>
    %37 = stablehlo.maximum %35, %36 : tensor<9x5xf32>
    %38 = stablehlo.slice %0 [0:1, 0:5] : (tensor<19x5xf32>) -> tensor<1x5xf32>
    %39 = stablehlo.concatenate %38, %37, dim = 0 : (tensor<1x5xf32>, tensor<9x5xf32>) -> tensor<10x5xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %40 = stablehlo.pad %39, %cst_5, low = [0, 0], high = [0, 0], interior = [1, 0] : (tensor<10x5xf32>, tensor<f32>) -> tensor<19x5xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.pad %35, %cst_6, low = [1, 0], high = [1, 0], interior = [1, 0] : (tensor<9x5xf32>, tensor<f32>) -> tensor<19x5xf32>
    %42 = stablehlo.add %40, %41 : tensor<19x5xf32>
    %43 = stablehlo.reverse %42, dims = [0] : tensor<19x5xf32>
    return %43 : tensor<19x5xf32>
  }
}
