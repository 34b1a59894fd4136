module @jit__fun attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["i"=4]> {stablehlo.mesh = {axes = [{name = "i", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}) -> (tensor<4x4xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"i"}, {}]>] out_shardings=[<@mesh, [{"i"}, {}]>] manual_axes={"i"} (%arg1: tensor<1x4xf32>) {
      %1 = stablehlo.reshape %arg1 : (tensor<1x4xf32>) -> tensor<4xf32>
      %c = stablehlo.constant dense<0> : tensor<i32>
      %c_0 = stablehlo.constant dense<0> : tensor<i32>
      %2:3 = stablehlo.while(%iterArg = %c_0, %iterArg_1 = %c, %iterArg_2 = %1) : tensor<i32>, tensor<i32>, tensor<4xf32>
      cond {
        %c_3 = stablehlo.constant dense<5> : tensor<i32>
        %4 = stablehlo.compare LT, %iterArg, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %4 : tensor<i1>
      } do {
        %4:2 = func.call @closed_call(%iterArg_1, %iterArg_2) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
        %c_3 = stablehlo.constant dense<1> : tensor<i32>
        %5 = stablehlo.add %iterArg, %c_3 : tensor<i32>
        stablehlo.return %5, %4#0, %4#1 : tensor<i32>, tensor<i32>, tensor<4xf32>
      }
      %3 = stablehlo.broadcast_in_dim %2#2, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
      sdy.return %3 : tensor<1x4xf32>
    } : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
  func.func private @closed_call(%arg0: tensor<i32>, %arg1: tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg0, %c : tensor<i32>
    %cst = stablehlo.constant dense<1.500000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.multiply %arg1, %1 : tensor<4xf32>
    %3 = "stablehlo.all_reduce"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %9 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %9 : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.divide %3, %4 : tensor<4xf32>
    %6 = stablehlo.convert %arg0 : (tensor<i32>) -> tensor<f32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %8 = stablehlo.add %5, %7 : tensor<4xf32>
    return %0, %8 : tensor<i32>, tensor<4xf32>
  }
}
