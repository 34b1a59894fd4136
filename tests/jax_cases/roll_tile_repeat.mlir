module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x5xf32>) -> (tensor<3x5xf32> {jax.result_info = "result[0]"}, tensor<6x5xf32> {jax.result_info = "result[1]"}, tensor<6x5xf32> {jax.result_info = "result[2]"}) {
    %0 = call @_roll_static(%arg0) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<3x5xf32>) -> tensor<1x3x1x5xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x3x1x5xf32>) -> tensor<2x3x1x5xf32>
    %3 = stablehlo.reshape %2 : (tensor<2x3x1x5xf32>) -> tensor<6x5xf32>
    %4 = stablehlo.broadcast_in_dim %arg0, dims = [0, 2] : (tensor<3x5xf32>) -> tensor<3x2x5xf32>
    %5 = stablehlo.reshape %4 : (tensor<3x2x5xf32>) -> tensor<6x5xf32>
    return %0, %3, %5 : tensor<3x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>
  }
  func.func private @_roll_static(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %0 = stablehlo.slice %arg0 [0:3, 3:5] : (tensor<3x5xf32>) -> tensor<3x2xf32>
    %1 = stablehlo.slice %arg0 [0:3, 0:3] : (tensor<3x5xf32>) -> tensor<3x3xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 1 : (tensor<3x2xf32>, tensor<3x3xf32>) -> tensor<3x5xf32>
    return %2 : tensor<3x5xf32>
  }
}
