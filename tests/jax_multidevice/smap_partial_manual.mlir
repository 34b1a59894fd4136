module @jit_partial_manual attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}, %arg1: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<4x4xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"a", ?}, {?}]>, <@mesh, [{?}, {?}]>] out_shardings=[<@mesh, [{"a", ?}, {?}]>] manual_axes={"a"} (%arg2: tensor<2x6xf32>, %arg3: tensor<6x4xf32>) {
      %1 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x6xf32>, tensor<6x4xf32>) -> tensor<2x4xf32>
      %2 = sdy.sharding_constraint %1 <@mesh, [{?}, {?}]> : tensor<2x4xf32>
      %3 = stablehlo.tanh %2 : tensor<2x4xf32>
      %4 = sdy.sharding_constraint %3 <@mesh, [{?}, {?}]> : tensor<2x4xf32>
      %5 = "stablehlo.all_reduce"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %18 = stablehlo.add %arg4, %arg5 : tensor<f32>
        %19 = sdy.sharding_constraint %18 <@mesh, []> : tensor<f32>
        stablehlo.return %19 : tensor<f32>
      }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
      %6 = "stablehlo.all_gather"(%4) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> : (tensor<2x4xf32>) -> tensor<4x4xf32>
      %7 = stablehlo.slice %6 [0:2, 0:4] : (tensor<4x4xf32>) -> tensor<2x4xf32>
      %8 = sdy.sharding_constraint %7 <@mesh, [{?}, {?}]> : tensor<2x4xf32>
      %9 = sdy.manual_computation() in_shardings=[] out_shardings=[<@mesh, []>] manual_axes={"b"} () {
        %c = stablehlo.constant dense<2> : tensor<ui32>
        %c_0 = stablehlo.constant dense<2> : tensor<ui32>
        %18 = stablehlo.partition_id : tensor<ui32>
        %19 = stablehlo.divide %18, %c : tensor<ui32>
        %20 = stablehlo.remainder %19, %c_0 : tensor<ui32>
        %21 = stablehlo.convert %20 : (tensor<ui32>) -> tensor<i32>
        sdy.return %21 : tensor<i32>
      } : () -> tensor<i32>
      %10 = stablehlo.convert %9 : (tensor<i32>) -> tensor<f32>
      %11 = sdy.sharding_constraint %10 <@mesh, []> : tensor<f32>
      %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
      %13 = sdy.sharding_constraint %12 <@mesh, [{?}, {?}]> : tensor<2x4xf32>
      %14 = stablehlo.multiply %8, %13 : tensor<2x4xf32>
      %15 = sdy.sharding_constraint %14 <@mesh, [{?}, {?}]> : tensor<2x4xf32>
      %16 = stablehlo.add %5, %15 : tensor<2x4xf32>
      %17 = sdy.sharding_constraint %16 <@mesh, [{?}, {?}]> : tensor<2x4xf32>
      sdy.return %17 : tensor<2x4xf32>
    } : (tensor<4x6xf32>, tensor<6x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}
