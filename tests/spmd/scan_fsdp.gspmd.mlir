module @jit_scan_fsdp attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}, %arg1: tensor<3x8x8xf32> {mhlo.sharding = "{devices=[1,4,1]<=[4]}"}, %arg2: tensor<3x8xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}) -> (tensor<8x8xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:5 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %arg2, %iterArg_1 = %c, %iterArg_2 = %arg0, %iterArg_3 = %0) : tensor<3x8x8xf32>, tensor<3x8xf32>, tensor<i32>, tensor<8x8xf32>, tensor<3xf32>
    cond {
      %c_4 = stablehlo.constant dense<3> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg_1, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %2 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_1) : (tensor<3x8x8xf32>, tensor<i32>) -> tensor<8x8xf32>
      %3 = func.call @dynamic_index_in_dim_0(%iterArg_0, %iterArg_1) : (tensor<3x8xf32>, tensor<i32>) -> tensor<8xf32>
      %4:2 = func.call @closed_call(%iterArg_2, %2, %3) : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> (tensor<8x8xf32>, tensor<f32>)
      %5 = func.call @dynamic_update_index_in_dim(%iterArg_3, %4#1, %iterArg_1) : (tensor<3xf32>, tensor<f32>, tensor<i32>) -> tensor<3xf32>
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %6 = stablehlo.add %iterArg_1, %c_4 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_0, %6, %4#0, %5 : tensor<3x8x8xf32>, tensor<3x8xf32>, tensor<i32>, tensor<8x8xf32>, tensor<3xf32>
    }
    return %1#3, %1#4 : tensor<8x8xf32>, tensor<3xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<3x8x8xf32>, %arg1: tensor<i32>) -> tensor<8x8xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 8, 8] : (tensor<3x8x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
  func.func private @dynamic_index_in_dim_0(%arg0: tensor<3x8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 8] : (tensor<3x8xf32>, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8xf32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
  func.func private @closed_call(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<f32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<8x8xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x8xf32>
    %4 = stablehlo.tanh %3 : tensor<8x8xf32>
    %5 = stablehlo.multiply %4, %4 : tensor<8x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<f32>
    return %4, %6 : tensor<8x8xf32>, tensor<f32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<3xf32>, %arg1: tensor<f32>, %arg2: tensor<i32>) -> tensor<3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2 : (tensor<3xf32>, tensor<1xf32>, tensor<i32>) -> tensor<3xf32>
    return %1 : tensor<3xf32>
  }
}
