module @jit_nested attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<4x8xf32>) -> (tensor<2x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", ?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={"a"} (%arg1: tensor<2x8xf32>) {
      %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{?}, {"b", ?}]>] out_shardings=[<@mesh, [{?}, {"b", ?}]>] manual_axes={"b"} (%arg2: tensor<2x4xf32>) {
        %3 = stablehlo.sine %arg2 : tensor<2x4xf32>
        %4 = "stablehlo.all_reduce"(%3) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
        ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
          %14 = stablehlo.add %arg3, %arg4 : tensor<f32>
          stablehlo.return %14 : tensor<f32>
        }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
        %c = stablehlo.constant dense<1> : tensor<ui32>
        %c_0 = stablehlo.constant dense<2> : tensor<ui32>
        %5 = stablehlo.partition_id : tensor<ui32>
        %6 = stablehlo.divide %5, %c : tensor<ui32>
        %7 = stablehlo.remainder %6, %c_0 : tensor<ui32>
        %8 = stablehlo.convert %7 : (tensor<ui32>) -> tensor<i32>
        %9 = stablehlo.convert %8 : (tensor<i32>) -> tensor<f32>
        %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
        %10 = stablehlo.add %cst, %9 : tensor<f32>
        %11 = stablehlo.convert %10 : tensor<f32>
        %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
        %13 = stablehlo.multiply %4, %12 : tensor<2x4xf32>
        sdy.return %13 : tensor<2x4xf32>
      } : (tensor<2x8xf32>) -> tensor<2x8xf32>
      %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %3 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
        %4 = sdy.sharding_constraint %3 <@mesh, []> : tensor<f32>
        stablehlo.return %4 : tensor<f32>
      }) : (tensor<2x8xf32>) -> tensor<2x8xf32>
      sdy.return %2 : tensor<2x8xf32>
    } : (tensor<4x8xf32>) -> tensor<2x8xf32>
    return %0 : tensor<2x8xf32>
  }
}
