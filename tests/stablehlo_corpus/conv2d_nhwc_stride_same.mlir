"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<2x9x9x3xf32>, tensor<3x3x3x8xf32>, tensor<8xf32>) -> tensor<2x5x5x8xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x9x9x3xf32>, %arg1: tensor<3x3x3x8xf32>, %arg2: tensor<8xf32>):
    %0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 2, 2>}> : (tensor<2x9x9x3xf32>, tensor<3x3x3x8xf32>) -> tensor<2x5x5x8xf32>
    %1 = "stablehlo.reshape"(%arg2) : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
    %3 = "stablehlo.reshape"(%2) : (tensor<1x1x1x8xf32>) -> tensor<8xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 3>}> : (tensor<8xf32>) -> tensor<2x5x5x8xf32>
    %5 = "stablehlo.add"(%0, %4) : (tensor<2x5x5x8xf32>, tensor<2x5x5x8xf32>) -> tensor<2x5x5x8xf32>
    "func.return"(%5) : (tensor<2x5x5x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
