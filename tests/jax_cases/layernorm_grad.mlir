module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x8xf32>) -> (tensor<3x8xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<3x8xf32>, tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<3xf32>) -> tensor<3x1xf32>
    %cst_0 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<3x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x8xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<3x8xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %6:5 = call @_var(%arg0, %c) : (tensor<3x8xf32>, tensor<i32>) -> (tensor<3x1xf32>, tensor<3x8xf32>, tensor<f32>, tensor<i1>, tensor<3x1xf32>)
    %cst_1 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %8 = stablehlo.add %6#0, %7 : tensor<3x1xf32>
    %9 = stablehlo.sqrt %8 : tensor<3x1xf32>
    %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %11 = stablehlo.divide %10, %9 : tensor<3x1xf32>
    %12 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x8xf32>
    %13 = stablehlo.divide %5, %12 : tensor<3x8xf32>
    %14 = stablehlo.multiply %9, %9 : tensor<3x1xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %16 = stablehlo.divide %15, %14 : tensor<3x1xf32>
    %17 = stablehlo.multiply %13, %13 : tensor<3x8xf32>
    %18 = stablehlo.multiply %17, %13 : tensor<3x8xf32>
    %19 = stablehlo.multiply %13, %13 : tensor<3x8xf32>
    %cst_4 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<3x8xf32>
    %21 = stablehlo.multiply %20, %19 : tensor<3x8xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %22 = stablehlo.reduce(%18 init: %cst_5) applies stablehlo.add across dimensions = [0, 1] : (tensor<3x8xf32>, tensor<f32>) -> tensor<f32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<3x8xf32>
    %24 = stablehlo.multiply %23, %21 : tensor<3x8xf32>
    %25 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x8xf32>
    %26 = stablehlo.multiply %24, %25 : tensor<3x8xf32>
    %27 = stablehlo.multiply %26, %5 : tensor<3x8xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.reduce(%27 init: %cst_7) applies stablehlo.add across dimensions = [1] : (tensor<3x8xf32>, tensor<f32>) -> tensor<3xf32>
    %29 = stablehlo.reshape %28 : (tensor<3xf32>) -> tensor<3x1xf32>
    %30 = stablehlo.negate %29 : tensor<3x1xf32>
    %31 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x8xf32>
    %32 = stablehlo.divide %24, %31 : tensor<3x8xf32>
    %33 = stablehlo.multiply %30, %11 : tensor<3x1xf32>
    %34 = call @_var_0(%6#1, %6#2, %6#3, %6#4, %33) : (tensor<3x8xf32>, tensor<f32>, tensor<i1>, tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x8xf32>
    %35 = stablehlo.negate %32 : tensor<3x8xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.reduce(%35 init: %cst_8) applies stablehlo.add across dimensions = [1] : (tensor<3x8xf32>, tensor<f32>) -> tensor<3xf32>
    %37 = stablehlo.reshape %36 : (tensor<3xf32>) -> tensor<3x1xf32>
    %38 = stablehlo.add %34, %32 : tensor<3x8xf32>
    %cst_9 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %39 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %40 = stablehlo.divide %37, %39 : tensor<3x1xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.reduce(%40 init: %cst_10) applies stablehlo.add across dimensions = [1] : (tensor<3x1xf32>, tensor<f32>) -> tensor<3xf32>
    %42 = stablehlo.broadcast_in_dim %41, dims = [0] : (tensor<3xf32>) -> tensor<3x8xf32>
    %43 = stablehlo.add %38, %42 : tensor<3x8xf32>
    return %43 : tensor<3x8xf32>
  }
  func.func private @_var(%arg0: tensor<3x8xf32>, %arg1: tensor<i32>) -> (tensor<3x1xf32>, tensor<3x8xf32>, tensor<f32>, tensor<i1>, tensor<3x1xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<3x8xf32>, tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<3xf32>) -> tensor<3x1xf32>
    %cst_0 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<3x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x8xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<3x8xf32>
    %6 = chlo.square %5 : tensor<3x8xf32> -> tensor<3x8xf32>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3x8xf32>
    %8 = stablehlo.multiply %7, %5 : tensor<3x8xf32>
    %9 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %10 = stablehlo.subtract %cst_2, %9 : tensor<f32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.reduce(%6 init: %cst_3) applies stablehlo.add across dimensions = [1] : (tensor<3x8xf32>, tensor<f32>) -> tensor<3xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<3xf32>) -> tensor<3x1xf32>
    %13 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %14 = stablehlo.divide %12, %13 : tensor<3x1xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.compare GT, %10, %cst_4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_5 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %16:2 = call @_where(%15, %14, %cst_5) : (tensor<i1>, tensor<3x1xf32>, tensor<f32>) -> (tensor<3x1xf32>, tensor<3x1xf32>)
    return %16#0, %8, %10, %15, %16#1 : tensor<3x1xf32>, tensor<3x8xf32>, tensor<f32>, tensor<i1>, tensor<3x1xf32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<3x1xf32>, %arg2: tensor<f32>) -> (tensor<3x1xf32>, tensor<3x1xf32>) {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<i1>, tensor<3x1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    return %2, %3 : tensor<3x1xf32>, tensor<3x1xf32>
  }
  func.func private @_var_0(%arg0: tensor<3x8xf32>, %arg1: tensor<f32>, %arg2: tensor<i1>, %arg3: tensor<3x1xf32>, %arg4: tensor<3x1xf32>) -> tensor<3x8xf32> {
    %0 = call @_where_1(%arg2, %arg3, %arg4) : (tensor<i1>, tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %2 = stablehlo.divide %0, %1 : tensor<3x1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<3x1xf32>, tensor<f32>) -> tensor<3xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<3xf32>) -> tensor<3x8xf32>
    %5 = stablehlo.multiply %4, %arg0 : tensor<3x8xf32>
    %6 = stablehlo.negate %5 : tensor<3x8xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<3x8xf32>, tensor<f32>) -> tensor<3xf32>
    %8 = stablehlo.reshape %7 : (tensor<3xf32>) -> tensor<3x1xf32>
    %cst_1 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %10 = stablehlo.divide %8, %9 : tensor<3x1xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.reduce(%10 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<3x1xf32>, tensor<f32>) -> tensor<3xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<3xf32>) -> tensor<3x8xf32>
    %13 = stablehlo.add %5, %12 : tensor<3x8xf32>
    return %13 : tensor<3x8xf32>
  }
  func.func private @_where_1(%arg0: tensor<i1>, %arg1: tensor<3x1xf32>, %arg2: tensor<3x1xf32>) -> tensor<3x1xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
    %1 = stablehlo.select %arg0, %arg2, %0 : tensor<i1>, tensor<3x1xf32>
    return %1 : tensor<3x1xf32>
  }
}
