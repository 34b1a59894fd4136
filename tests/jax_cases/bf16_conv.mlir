module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x3x6x6xf32>, %arg1: tensor<4x3x3x3xf32>) -> (tensor<1x4x6x6xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xbf16>
    %1 = stablehlo.convert %arg1 : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xbf16>
    %2 = stablehlo.convolution(%0, %1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x3x6x6xbf16>, tensor<4x3x3x3xbf16>) -> tensor<1x4x6x6xbf16>
    return %2 : tensor<1x4x6x6xbf16>
  }
}
