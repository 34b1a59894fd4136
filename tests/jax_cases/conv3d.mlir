module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x2x5x6x4xf32>, %arg1: tensor<3x2x2x3x2xf32>) -> (tensor<1x3x5x3x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1, 2]x[o, i, 0, 1, 2]->[b, f, 0, 1, 2], window = {stride = [1, 2, 1], pad = [[0, 1], [0, 1], [0, 1]], lhs_dilate = [1, 1, 1], rhs_dilate = [1, 1, 1], reverse = [false, false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x2x5x6x4xf32>, tensor<3x2x2x3x2xf32>) -> tensor<1x3x5x3x4xf32>
    return %0 : tensor<1x3x5x3x4xf32>
  }
}
