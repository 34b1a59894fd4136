module @jit__fun attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["i"=4]> {stablehlo.mesh = {axes = [{name = "i", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<4x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}) -> (tensor<4x5xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}, tensor<4x5xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}) {
    %0:2 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"i"}, {}]>] out_shardings=[<@mesh, [{"i"}, {}]>, <@mesh, [{"i"}, {}]>] manual_axes={"i"} (%arg1: tensor<1x5xf32>) {
      %1 = stablehlo.reshape %arg1 : (tensor<1x5xf32>) -> tensor<5xf32>
      %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %8 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %8 : tensor<f32>
      }) : (tensor<5xf32>) -> tensor<5xf32>
      %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
      %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %4 = stablehlo.divide %2, %3 : tensor<5xf32>
      %5 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %8 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
        stablehlo.return %8 : tensor<f32>
      }) : (tensor<5xf32>) -> tensor<5xf32>
      %6 = stablehlo.broadcast_in_dim %4, dims = [1] : (tensor<5xf32>) -> tensor<1x5xf32>
      %7 = stablehlo.broadcast_in_dim %5, dims = [1] : (tensor<5xf32>) -> tensor<1x5xf32>
      sdy.return %6, %7 : tensor<1x5xf32>, tensor<1x5xf32>
    } : (tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>)
    return %0#0, %0#1 : tensor<4x5xf32>, tensor<4x5xf32>
  }
}
