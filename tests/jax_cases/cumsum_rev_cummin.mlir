module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<9x2xf32>) -> (tensor<9x2xf32> {jax.result_info = "result[0]"}, tensor<9x2xf32> {jax.result_info = "result[1]"}) {
    %0 = call @_flip(%arg0) : (tensor<9x2xf32>) -> tensor<9x2xf32>
    %1 = call @cumsum(%0) : (tensor<9x2xf32>) -> tensor<9x2xf32>
    %2 = call @_flip(%1) : (tensor<9x2xf32>) -> tensor<9x2xf32>
    %3 = call @cummin(%arg0) : (tensor<9x2xf32>) -> tensor<9x2xf32>
    return %2, %3 : tensor<9x2xf32>, tensor<9x2xf32>
  }
  func.func private @_flip(%arg0: tensor<9x2xf32>) -> tensor<9x2xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<9x2xf32>
    return %0 : tensor<9x2xf32>
  }
  func.func private @cumsum(%arg0: tensor<9x2xf32>) -> tensor<9x2xf32> {
    %0 = call @cumsum_0(%arg0) : (tensor<9x2xf32>) -> tensor<9x2xf32>
    return %0 : tensor<9x2xf32>
  }
  func.func private @cumsum_0(%arg0: tensor<9x2xf32>) -> tensor<9x2xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[8, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 9, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<9x2xf32>, tensor<f32>) -> tensor<9x2xf32>
    return %1 : tensor<9x2xf32>
  }
  func.func private @cummin(%arg0: tensor<9x2xf32>) -> tensor<9x2xf32> {
    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 8], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 9, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.minimum %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<9x2xf32>, tensor<f32>) -> tensor<9x2xf32>
    return %1 : tensor<9x2xf32>
  }
}
