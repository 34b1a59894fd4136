module @jit_dp_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["d"=4]> {stablehlo.mesh = {axes = [{name = "d", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg2: tensor<16x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg3: tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg4: tensor<16x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg5: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}, %arg6: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}) -> (tensor<6x16xf32> {jax.result_info = "result[0]"}, tensor<16xf32> {jax.result_info = "result[1]"}, tensor<16x3xf32> {jax.result_info = "result[2]"}, tensor<6x16xf32> {jax.result_info = "result[3]"}, tensor<16x3xf32> {jax.result_info = "result[4]"}, tensor<f32> {jax.result_info = "result[5]"}) {
    %0 = stablehlo.dot_general %arg5, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x6xf32>, tensor<6x16xf32>) -> tensor<8x16xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<8x16xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x16xf32>
    %4 = stablehlo.tanh %3 : tensor<8x16xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %6 = stablehlo.subtract %5, %4 : tensor<8x16xf32>
    %7 = stablehlo.dot_general %4, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x3xf32>) -> tensor<8x3xf32>
    %8 = stablehlo.subtract %7, %arg6 : tensor<8x3xf32>
    %9 = stablehlo.multiply %8, %8 : tensor<8x3xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %11 = stablehlo.multiply %10, %8 : tensor<8x3xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.reduce(%9 init: %cst_1) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x3xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<2.400000e+01> : tensor<f32>
    %13 = stablehlo.divide %12, %cst_2 : tensor<f32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_4 = stablehlo.constant dense<2.400000e+01> : tensor<f32>
    %14 = stablehlo.divide %cst_3, %cst_4 : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %16 = stablehlo.multiply %15, %11 : tensor<8x3xf32>
    %17 = stablehlo.dot_general %16, %4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x3xf32>, tensor<8x16xf32>) -> tensor<3x16xf32>
    %18 = stablehlo.transpose %17, dims = [1, 0] : (tensor<3x16xf32>) -> tensor<16x3xf32>
    %19 = stablehlo.dot_general %16, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x3xf32>, tensor<16x3xf32>) -> tensor<8x16xf32>
    %20 = stablehlo.multiply %19, %6 : tensor<8x16xf32>
    %21 = stablehlo.multiply %20, %4 : tensor<8x16xf32>
    %22 = stablehlo.add %20, %21 : tensor<8x16xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %23 = stablehlo.reduce(%22 init: %cst_5) applies stablehlo.add across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
    %24 = stablehlo.reshape %23 : (tensor<16xf32>) -> tensor<1x16xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %25 = stablehlo.reduce(%24 init: %cst_6) applies stablehlo.add across dimensions = [0] : (tensor<1x16xf32>, tensor<f32>) -> tensor<16xf32>
    %26 = stablehlo.dot_general %22, %arg5, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<8x6xf32>) -> tensor<16x6xf32>
    %27 = stablehlo.transpose %26, dims = [1, 0] : (tensor<16x6xf32>) -> tensor<6x16xf32>
    %cst_7 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<6x16xf32>
    %29 = stablehlo.multiply %28, %arg3 : tensor<6x16xf32>
    %30 = stablehlo.add %29, %27 : tensor<6x16xf32>
    %cst_8 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<16x3xf32>
    %32 = stablehlo.multiply %31, %arg4 : tensor<16x3xf32>
    %33 = stablehlo.add %32, %18 : tensor<16x3xf32>
    %cst_9 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<6x16xf32>
    %35 = stablehlo.multiply %34, %30 : tensor<6x16xf32>
    %36 = stablehlo.subtract %arg0, %35 : tensor<6x16xf32>
    %cst_10 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %37 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %38 = stablehlo.multiply %37, %25 : tensor<16xf32>
    %39 = stablehlo.subtract %arg1, %38 : tensor<16xf32>
    %cst_11 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<16x3xf32>
    %41 = stablehlo.multiply %40, %33 : tensor<16x3xf32>
    %42 = stablehlo.subtract %arg2, %41 : tensor<16x3xf32>
    return %36, %39, %42, %30, %33, %13 : tensor<6x16xf32>, tensor<16xf32>, tensor<16x3xf32>, tensor<6x16xf32>, tensor<16x3xf32>, tensor<f32>
  }
}
