module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x37xf32>) -> (tensor<6x37xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:6, 0:36:2] : (tensor<6x37xf32>) -> tensor<6x18xf32>
    %1 = stablehlo.slice %arg0 [0:6, 1:37:2] : (tensor<6x37xf32>) -> tensor<6x18xf32>
    %2 = stablehlo.add %0, %1 : tensor<6x18xf32>
    %3 = stablehlo.slice %2 [0:6, 0:17:2] : (tensor<6x18xf32>) -> tensor<6x9xf32>
    %4 = stablehlo.slice %2 [0:6, 1:18:2] : (tensor<6x18xf32>) -> tensor<6x9xf32>
    %5 = stablehlo.add %3, %4 : tensor<6x9xf32>
    %6 = stablehlo.slice %5 [0:6, 0:8:2] : (tensor<6x9xf32>) -> tensor<6x4xf32>
    %7 = stablehlo.slice %5 [0:6, 1:9:2] : (tensor<6x9xf32>) -> tensor<6x4xf32>
    %8 = stablehlo.add %6, %7 : tensor<6x4xf32>
    %9 = stablehlo.slice %8 [0:6, 0:3:2] : (tensor<6x4xf32>) -> tensor<6x2xf32>
    %10 = stablehlo.slice %8 [0:6, 1:4:2] : (tensor<6x4xf32>) -> tensor<6x2xf32>
    %11 = stablehlo.add %9, %10 : tensor<6x2xf32>
    %12 = stablehlo.slice %11 [0:6, 0:1:2] : (tensor<6x2xf32>) -> tensor<6x1xf32>
    %13 = stablehlo.slice %11 [0:6, 1:2:2] : (tensor<6x2xf32>) -> tensor<6x1xf32>
    %14 = stablehlo.add %12, %13 : tensor<6x1xf32>
    %15 = stablehlo.slice %14 [0:6, 0:0] : (tensor<6x1xf32>) -> tensor<6x0xf32>
    %16 = stablehlo.slice %11 [0:6, 2:2:2] : (tensor<6x2xf32>) -> tensor<6x0xf32>
    %17 = stablehlo.add %15, %16 : tensor<6x0xf32>
    %18 = stablehlo.slice %11 [0:6, 0:1] : (tensor<6x2xf32>) -> tensor<6x1xf32>
    %19 = stablehlo.concatenate %18, %17, dim = 1 : (tensor<6x1xf32>, tensor<6x0xf32>) -> tensor<6x1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.pad %19, %cst, low = [0, 0], high = [0, 1], interior = [0, 1] : (tensor<6x1xf32>, tensor<f32>) -> tensor<6x2xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %21 = stablehlo.pad %14, %cst_0, low = [0, 1], high = [0, 0], interior = [0, 1] : (tensor<6x1xf32>, tensor<f32>) -> tensor<6x2xf32>
    %22 = stablehlo.add %20, %21 : tensor<6x2xf32>
    %23 = stablehlo.slice %22 [0:6, 0:1] : (tensor<6x2xf32>) -> tensor<6x1xf32>
    %24 = stablehlo.slice %8 [0:6, 2:4:2] : (tensor<6x4xf32>) -> tensor<6x1xf32>
    %25 = stablehlo.add %23, %24 : tensor<6x1xf32>
    %26 = stablehlo.slice %8 [0:6, 0:1] : (tensor<6x4xf32>) -> tensor<6x1xf32>
    %27 = stablehlo.concatenate %26, %25, dim = 1 : (tensor<6x1xf32>, tensor<6x1xf32>) -> tensor<6x2xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.pad %27, %cst_1, low = [0, 0], high = [0, 1], interior = [0, 1] : (tensor<6x2xf32>, tensor<f32>) -> tensor<6x4xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = stablehlo.pad %22, %cst_2, low = [0, 1], high = [0, 0], interior = [0, 1] : (tensor<6x2xf32>, tensor<f32>) -> tensor<6x4xf32>
    %30 = stablehlo.add %28, %29 : tensor<6x4xf32>
    %31 = stablehlo.slice %5 [0:6, 2:9:2] : (tensor<6x9xf32>) -> tensor<6x4xf32>
    %32 = stablehlo.add %30, %31 : tensor<6x4xf32>
    %33 = stablehlo.slice %5 [0:6, 0:1] : (tensor<6x9xf32>) -> tensor<6x1xf32>
    %34 = stablehlo.concatenate %33, %32, dim = 1 : (tensor<6x1xf32>, tensor<6x4xf32>) -> tensor<6x5xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %35 = stablehlo.pad %34, %cst_3, low = [0, 0], high = [0, 0], interior = [0, 1] : (tensor<6x5xf32>, tensor<f32>) -> tensor<6x9xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.pad %30, %cst_4, low = [0, 1], high = [0, 1], interior = [0, 1] : (tensor<6x4xf32>, tensor<f32>) -> tensor<6x9xf32>
    %37 = stablehlo.add %35, %36 : tensor<6x9xf32>
    %38 = stablehlo.slice %37 [0:6, 0:8] : (tensor<6x9xf32>) -> tensor<6x8xf32>
    %39 = stablehlo.slice %2 [0:6, 2:18:2] : (tensor<6x18xf32>) -> tensor<6x8xf32>
    %40 = stablehlo.add %38, %39 : tensor<6x8xf32>
    %41 = stablehlo.slice %2 [0:6, 0:1] : (tensor<6x18xf32>) -> tensor<6x1xf32>
    %42 = stablehlo.concatenate %41, %40, dim = 1 : (tensor<6x1xf32>, tensor<6x8xf32>) -> tensor<6x9xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %43 = stablehlo.pad %42, %cst_5, low = [0, 0], high = [0, 1], interior = [0, 1] : (tensor<6x9xf32>, tensor<f32>) -> tensor<6x18xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %44 = stablehlo.pad %37, %cst_6, low = [0, 1], high = [0, 0], interior = [0, 1] : (tensor<6x9xf32>, tensor<f32>) -> tensor<6x18xf32>
    %45 = stablehlo.add %43, %44 : tensor<6x18xf32>
    %46 = stablehlo.slice %arg0 [0:6, 2:37:2] : (tensor<6x37xf32>) -> tensor<6x18xf32>
    %47 = stablehlo.add %45, %46 : tensor<6x18xf32>
    %48 = stablehlo.slice %arg0 [0:6, 0:1] : (tensor<6x37xf32>) -> tensor<6x1xf32>
    %49 = stablehlo.concatenate %48, %47, dim = 1 : (tensor<6x1xf32>, tensor<6x18xf32>) -> tensor<6x19xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %50 = stablehlo.pad %49, %cst_7, low = [0, 0], high = [0, 0], interior = [0, 1] : (tensor<6x19xf32>, tensor<f32>) -> tensor<6x37xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %51 = stablehlo.pad %45, %cst_8, low = [0, 1], high = [0, 1], interior = [0, 1] : (tensor<6x18xf32>, tensor<f32>) -> tensor<6x37xf32>
    %52 = stablehlo.add %50, %51 : tensor<6x37xf32>
    return %52 : tensor<6x37xf32>
  }
}
