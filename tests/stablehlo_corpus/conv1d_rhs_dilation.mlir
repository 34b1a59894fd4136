"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<2x4x20xf32>, tensor<6x4x3xf32>) -> tensor<2x6x16xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x4x20xf32>, %arg1: tensor<6x4x3xf32>):
    %0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1>, padding = dense<0> : tensor<1x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 2>, window_reversal = array<i1: false>, window_strides = array<i64: 1>}> : (tensor<2x4x20xf32>, tensor<6x4x3xf32>) -> tensor<2x6x16xf32>
    "func.return"(%0) : (tensor<2x6x16xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
