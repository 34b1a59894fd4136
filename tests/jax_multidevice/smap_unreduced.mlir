module @jit_unreduced attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<4x6xf32>, %arg1: tensor<6x3xf32>) -> (tensor<4x3xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {"y"}]> : tensor<4x6xf32>
    %1 = sdy.sharding_constraint %arg1 <@mesh, [{"y"}, {}]> : tensor<6x3xf32>
    %2 = sdy.manual_computation(%0, %1) in_shardings=[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}], unreduced={"y"}>] manual_axes={"x", "y"} (%arg2: tensor<2x3xf32>, %arg3: tensor<3x3xf32>) {
      %4 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
      sdy.return %4 : tensor<2x3xf32>
    } : (tensor<4x6xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
    %3 = sdy.manual_computation(%2) in_shardings=[<@mesh, [{"x"}, {}], unreduced={"y"}>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%arg2: tensor<2x3xf32>) {
      %4 = "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
        %7 = stablehlo.add %arg3, %arg4 : tensor<f32>
        stablehlo.return %7 : tensor<f32>
      }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
      %6 = stablehlo.multiply %4, %5 : tensor<2x3xf32>
      sdy.return %6 : tensor<2x3xf32>
    } : (tensor<4x3xf32>) -> tensor<4x3xf32>
    return %3 : tensor<4x3xf32>
  }
}
