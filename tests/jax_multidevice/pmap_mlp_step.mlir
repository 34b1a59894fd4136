module @jit__fun attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["i"=4]> {stablehlo.mesh = {axes = [{name = "i", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<3x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<4x5x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}, {}]>}, %arg3: tensor<4x5x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}, {}]>}) -> (tensor<4x3x8xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}, {}]>}, tensor<4x8x2xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}, {}]>}) {
    %0:2 = sdy.manual_computation(%arg0, %arg1, %arg2, %arg3) in_shardings=[<@mesh, [{}, {}]>, <@mesh, [{}, {}]>, <@mesh, [{"i"}, {}, {}]>, <@mesh, [{"i"}, {}, {}]>] out_shardings=[<@mesh, [{"i"}, {}, {}]>, <@mesh, [{"i"}, {}, {}]>] manual_axes={"i"} (%arg4: tensor<3x8xf32>, %arg5: tensor<8x2xf32>, %arg6: tensor<1x5x3xf32>, %arg7: tensor<1x5x2xf32>) {
      %1 = stablehlo.reshape %arg6 : (tensor<1x5x3xf32>) -> tensor<5x3xf32>
      %2 = stablehlo.reshape %arg7 : (tensor<1x5x2xf32>) -> tensor<5x2xf32>
      %3 = stablehlo.dot_general %1, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x3xf32>, tensor<3x8xf32>) -> tensor<5x8xf32>
      %4 = stablehlo.tanh %3 : tensor<5x8xf32>
      %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x8xf32>
      %6 = stablehlo.subtract %5, %4 : tensor<5x8xf32>
      %7 = stablehlo.dot_general %4, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x8xf32>, tensor<8x2xf32>) -> tensor<5x2xf32>
      %8 = stablehlo.subtract %7, %2 : tensor<5x2xf32>
      %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %9 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<5x2xf32>
      %10 = stablehlo.multiply %9, %8 : tensor<5x2xf32>
      %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %cst_2 = stablehlo.constant dense<1.000000e+01> : tensor<f32>
      %11 = stablehlo.divide %cst_1, %cst_2 : tensor<f32>
      %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<f32>) -> tensor<5x2xf32>
      %13 = stablehlo.multiply %12, %10 : tensor<5x2xf32>
      %14 = stablehlo.dot_general %13, %4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x2xf32>, tensor<5x8xf32>) -> tensor<2x8xf32>
      %15 = stablehlo.transpose %14, dims = [1, 0] : (tensor<2x8xf32>) -> tensor<8x2xf32>
      %16 = stablehlo.dot_general %13, %arg5, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<5x2xf32>, tensor<8x2xf32>) -> tensor<5x8xf32>
      %17 = stablehlo.multiply %16, %6 : tensor<5x8xf32>
      %18 = stablehlo.multiply %17, %4 : tensor<5x8xf32>
      %19 = stablehlo.add %17, %18 : tensor<5x8xf32>
      %20 = stablehlo.dot_general %19, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x8xf32>, tensor<5x3xf32>) -> tensor<8x3xf32>
      %21 = stablehlo.transpose %20, dims = [1, 0] : (tensor<8x3xf32>) -> tensor<3x8xf32>
      %22 = "stablehlo.all_reduce"(%21) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
        %36 = stablehlo.add %arg8, %arg9 : tensor<f32>
        stablehlo.return %36 : tensor<f32>
      }) : (tensor<3x8xf32>) -> tensor<3x8xf32>
      %cst_3 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
      %23 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<3x8xf32>
      %24 = stablehlo.divide %22, %23 : tensor<3x8xf32>
      %25 = "stablehlo.all_reduce"(%15) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
        %36 = stablehlo.add %arg8, %arg9 : tensor<f32>
        stablehlo.return %36 : tensor<f32>
      }) : (tensor<8x2xf32>) -> tensor<8x2xf32>
      %cst_4 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
      %26 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
      %27 = stablehlo.divide %25, %26 : tensor<8x2xf32>
      %cst_5 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
      %28 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<3x8xf32>
      %29 = stablehlo.multiply %28, %24 : tensor<3x8xf32>
      %30 = stablehlo.subtract %arg4, %29 : tensor<3x8xf32>
      %cst_6 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
      %31 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
      %32 = stablehlo.multiply %31, %27 : tensor<8x2xf32>
      %33 = stablehlo.subtract %arg5, %32 : tensor<8x2xf32>
      %34 = stablehlo.broadcast_in_dim %30, dims = [1, 2] : (tensor<3x8xf32>) -> tensor<1x3x8xf32>
      %35 = stablehlo.broadcast_in_dim %33, dims = [1, 2] : (tensor<8x2xf32>) -> tensor<1x8x2xf32>
      sdy.return %34, %35 : tensor<1x3x8xf32>, tensor<1x8x2xf32>
    } : (tensor<3x8xf32>, tensor<8x2xf32>, tensor<4x5x3xf32>, tensor<4x5x2xf32>) -> (tensor<4x3x8xf32>, tensor<4x8x2xf32>)
    return %0#0, %0#1 : tensor<4x3x8xf32>, tensor<4x8x2xf32>
  }
}
