module @jit_cnn_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["d"=4]> {stablehlo.mesh = {axes = [{name = "d", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<3x3x3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {}]>}, %arg1: tensor<64x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<8x8x8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}, {}, {}]>}, %arg3: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}]>}) -> (tensor<3x3x3x4xf32> {jax.result_info = "result[0]"}, tensor<64x5xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}, tensor<f32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.convolution(%arg2, %arg0) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<8x8x8x4xf32>
    %1 = call @relu(%0) : (tensor<8x8x8x4xf32>) -> tensor<8x8x8x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8x8x4xf32>
    %3 = stablehlo.compare GT, %0, %2, FLOAT : (tensor<8x8x8x4xf32>, tensor<8x8x8x4xf32>) -> tensor<8x8x8x4xi1>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<f32>
    %5 = "stablehlo.reduce_window"(%1, %4) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %47 = stablehlo.maximum %arg4, %arg5 : tensor<f32>
      stablehlo.return %47 : tensor<f32>
    }) : (tensor<8x8x8x4xf32>, tensor<f32>) -> tensor<8x4x4x4xf32>
    %6 = stablehlo.reshape %5 : (tensor<8x4x4x4xf32>) -> tensor<8x64xf32>
    %7 = stablehlo.dot_general %6, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x5xf32>) -> tensor<8x5xf32>
    %8:3 = call @log_softmax(%7) : (tensor<8x5xf32>) -> (tensor<8x5xf32>, tensor<8x5xf32>, tensor<8x1xf32>)
    %9 = stablehlo.broadcast_in_dim %arg3, dims = [0] : (tensor<8xi32>) -> tensor<8x1xi32>
    %10:2 = call @take_along_axis(%8#0, %9) : (tensor<8x5xf32>, tensor<8x1xi32>) -> (tensor<8x1xf32>, tensor<8x1x1xi32>)
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.reduce(%10#0 init: %cst_1) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %12 = stablehlo.divide %11, %cst_2 : tensor<f32>
    %13 = stablehlo.negate %12 : tensor<f32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %14 = stablehlo.negate %cst_3 : tensor<f32>
    %cst_4 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %15 = stablehlo.divide %14, %cst_4 : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %17 = call @take_along_axis_0(%10#1, %16) : (tensor<8x1x1xi32>, tensor<8x1xf32>) -> tensor<8x5xf32>
    %18 = call @log_softmax_1(%8#1, %8#2, %17) : (tensor<8x5xf32>, tensor<8x1xf32>, tensor<8x5xf32>) -> tensor<8x5xf32>
    %19 = stablehlo.dot_general %18, %6, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x5xf32>, tensor<8x64xf32>) -> tensor<5x64xf32>
    %20 = stablehlo.transpose %19, dims = [1, 0] : (tensor<5x64xf32>) -> tensor<64x5xf32>
    %21 = stablehlo.dot_general %18, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x5xf32>, tensor<64x5xf32>) -> tensor<8x64xf32>
    %22 = stablehlo.reshape %21 : (tensor<8x64xf32>) -> tensor<8x4x4x4xf32>
    %cst_5 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %23 = stablehlo.pad %1, %cst_5, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<8x8x8x4xf32>, tensor<f32>) -> tensor<8x8x8x4xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %24 = "stablehlo.select_and_scatter"(%23, %22, %cst_6) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %47 = stablehlo.compare GE, %arg4, %arg5, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %47 : tensor<i1>
    }, {
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %47 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %47 : tensor<f32>
    }) : (tensor<8x8x8x4xf32>, tensor<8x4x4x4xf32>, tensor<f32>) -> tensor<8x8x8x4xf32>
    %25 = stablehlo.slice %24 [0:8, 0:8, 0:8, 0:4] : (tensor<8x8x8x4xf32>) -> tensor<8x8x8x4xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x8x8x4xf32>
    %27 = stablehlo.select %3, %25, %26 : tensor<8x8x8x4xi1>, tensor<8x8x8x4xf32>
    %28 = stablehlo.convolution(%arg2, %27) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x3xf32>, tensor<8x8x8x4xf32>) -> tensor<3x3x3x4xf32>
    %29 = stablehlo.convolution(%arg2, %arg0) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<8x8x8x4xf32>
    %30 = call @relu(%29) : (tensor<8x8x8x4xf32>) -> tensor<8x8x8x4xf32>
    %cst_8 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<f32>
    %32 = "stablehlo.reduce_window"(%30, %31) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %47 = stablehlo.maximum %arg4, %arg5 : tensor<f32>
      stablehlo.return %47 : tensor<f32>
    }) : (tensor<8x8x8x4xf32>, tensor<f32>) -> tensor<8x4x4x4xf32>
    %33 = stablehlo.reshape %32 : (tensor<8x4x4x4xf32>) -> tensor<8x64xf32>
    %34 = stablehlo.dot_general %33, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x5xf32>) -> tensor<8x5xf32>
    %35 = call @argmax(%34) : (tensor<8x5xf32>) -> tensor<8xi32>
    %36 = stablehlo.compare EQ, %35, %arg3, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %37 = stablehlo.convert %36 : (tensor<8xi1>) -> tensor<8xi32>
    %38 = stablehlo.convert %37 : (tensor<8xi32>) -> tensor<8xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %39 = stablehlo.reduce(%38 init: %cst_9) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    %cst_10 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %40 = stablehlo.divide %39, %cst_10 : tensor<f32>
    %cst_11 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<3x3x3x4xf32>
    %42 = stablehlo.multiply %41, %28 : tensor<3x3x3x4xf32>
    %43 = stablehlo.subtract %arg0, %42 : tensor<3x3x3x4xf32>
    %cst_12 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %44 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<64x5xf32>
    %45 = stablehlo.multiply %44, %20 : tensor<64x5xf32>
    %46 = stablehlo.subtract %arg1, %45 : tensor<64x5xf32>
    return %43, %46, %13, %40 : tensor<3x3x3x4xf32>, tensor<64x5xf32>, tensor<f32>, tensor<f32>
  }
  func.func private @relu(%arg0: tensor<8x8x8x4xf32>) -> tensor<8x8x8x4xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8x8x4xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x8x8x4xf32>
    return %1 : tensor<8x8x8x4xf32>
  }
  func.func private @log_softmax(%arg0: tensor<8x5xf32>) -> (tensor<8x5xf32>, tensor<8x5xf32>, tensor<8x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<8x5xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<8xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x5xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<8x5xf32>
    %6 = stablehlo.exponential %5 : tensor<8x5xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<8x5xf32>, tensor<f32>) -> tensor<8xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %9 = stablehlo.log %8 : tensor<8x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x5xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<8x5xf32>
    return %11, %6, %8 : tensor<8x5xf32>, tensor<8x5xf32>, tensor<8x1xf32>
  }
  func.func private @take_along_axis(%arg0: tensor<8x5xf32>, %arg1: tensor<8x1xi32>) -> (tensor<8x1xf32>, tensor<8x1x1xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x1xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi1>
    %c_0 = stablehlo.constant dense<5> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<8x1xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<8x1xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<8x1xi1>, tensor<8x1xi32>
    %5 = stablehlo.reshape %4 : (tensor<8x1xi32>) -> tensor<8x1x1xi32>
    %c_1 = stablehlo.constant dense<4> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<8x1x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<8x1x1xi32>, tensor<8x1x1xi32>) -> tensor<8x1x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<8x1x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<8x1x1xi32>, tensor<8x1x1xi32>) -> tensor<8x1x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<8x1x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<8x1x1xi1>, tensor<i1>) -> tensor<8x1xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<8x5xf32>, tensor<8x1x1xi32>) -> tensor<8x1xf32>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %15 = stablehlo.select %12, %13, %14 : tensor<8x1xi1>, tensor<8x1xf32>
    return %15, %5 : tensor<8x1xf32>, tensor<8x1x1xi32>
  }
  func.func private @take_along_axis_0(%arg0: tensor<8x1x1xi32>, %arg1: tensor<8x1xf32>) -> tensor<8x5xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x5xf32>
    %1 = "stablehlo.scatter"(%0, %arg0, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<8x5xf32>, tensor<8x1x1xi32>, tensor<8x1xf32>) -> tensor<8x5xf32>
    return %1 : tensor<8x5xf32>
  }
  func.func private @log_softmax_1(%arg0: tensor<8x5xf32>, %arg1: tensor<8x1xf32>, %arg2: tensor<8x5xf32>) -> tensor<8x5xf32> {
    %0 = stablehlo.negate %arg2 : tensor<8x5xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x5xf32>, tensor<f32>) -> tensor<8xf32>
    %2 = stablehlo.reshape %1 : (tensor<8xf32>) -> tensor<8x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<8x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<8xf32>) -> tensor<8x5xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<8x5xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<8x5xf32>
    return %7 : tensor<8x5xf32>
  }
  func.func private @argmax(%arg0: tensor<8x5xf32>) -> tensor<8xi32> {
    %0 = stablehlo.iota dim = 1 : tensor<8x5xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<8x5xf32>, tensor<8x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %1#1 : tensor<8xi32>
  }
}
