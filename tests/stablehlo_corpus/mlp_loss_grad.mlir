"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg15: tensor<f32>, %arg16: tensor<f32>):
    %39 = "stablehlo.add"(%arg15, %arg16) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%39) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_1.2", sym_visibility = "private"}> ({
  ^bb0(%arg13: tensor<f32>, %arg14: tensor<f32>):
    %38 = "stablehlo.add"(%arg13, %arg14) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%38) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_2.3", sym_visibility = "private"}> ({
  ^bb0(%arg11: tensor<f32>, %arg12: tensor<f32>):
    %37 = "stablehlo.add"(%arg11, %arg12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%37) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<6x16xf32>, tensor<16xf32>, tensor<16x3xf32>, tensor<12x6xf32>, tensor<12x3xf32>) -> (tensor<f32>, tensor<6x16xf32>, tensor<16xf32>, tensor<16x3xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<6x16xf32>, %arg1: tensor<16xf32>, %arg2: tensor<16x3xf32>, %arg3: tensor<12x6xf32>, %arg4: tensor<12x3xf32>):
    %0 = "stablehlo.dot"(%arg3, %arg0) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<12x6xf32>, tensor<6x16xf32>) -> tensor<12x16xf32>
    %1 = "stablehlo.reshape"(%arg1) : (tensor<16xf32>) -> tensor<1x16xf32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %3 = "stablehlo.reshape"(%2) : (tensor<1x16xf32>) -> tensor<16xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<12x16xf32>
    %5 = "stablehlo.add"(%0, %4) : (tensor<12x16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
    %6 = "stablehlo.tanh"(%5) : (tensor<12x16xf32>) -> tensor<12x16xf32>
    %7 = "stablehlo.dot"(%6, %arg2) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<12x16xf32>, tensor<16x3xf32>) -> tensor<12x3xf32>
    %8 = "stablehlo.subtract"(%7, %arg4) : (tensor<12x3xf32>, tensor<12x3xf32>) -> tensor<12x3xf32>
    %9 = "stablehlo.multiply"(%8, %8) : (tensor<12x3xf32>, tensor<12x3xf32>) -> tensor<12x3xf32>
    %10 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.reduce"(%9, %10) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %36 = "stablehlo.add"(%arg9, %arg10) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%36) : (tensor<f32>) -> ()
    }) : (tensor<12x3xf32>, tensor<f32>) -> tensor<f32>
    %12 = "stablehlo.constant"() <{value = dense<3.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.divide"(%11, %12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %14 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<12x3xf32>
    %16 = "stablehlo.multiply"(%8, %15) : (tensor<12x3xf32>, tensor<12x3xf32>) -> tensor<12x3xf32>
    %17 = "stablehlo.constant"() <{value = dense<0.027777778> : tensor<f32>}> : () -> tensor<f32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<12x3xf32>
    %19 = "stablehlo.multiply"(%16, %18) : (tensor<12x3xf32>, tensor<12x3xf32>) -> tensor<12x3xf32>
    %20 = "stablehlo.dot_general"(%19, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<12x3xf32>, tensor<16x3xf32>) -> tensor<12x16xf32>
    %21 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<12x16xf32>
    %23 = "stablehlo.subtract"(%22, %6) : (tensor<12x16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
    %24 = "stablehlo.multiply"(%20, %23) : (tensor<12x16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
    %25 = "stablehlo.multiply"(%24, %6) : (tensor<12x16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
    %26 = "stablehlo.add"(%24, %25) : (tensor<12x16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
    %27 = "stablehlo.dot_general"(%26, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<12x16xf32>, tensor<12x6xf32>) -> tensor<16x6xf32>
    %28 = "stablehlo.transpose"(%27) <{permutation = array<i64: 1, 0>}> {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[6,16]{0,1}"} : (tensor<16x6xf32>) -> tensor<6x16xf32>
    %29 = "stablehlo.reduce"(%26, %10) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %35 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%35) : (tensor<f32>) -> ()
    }) : (tensor<12x16xf32>, tensor<f32>) -> tensor<16xf32>
    %30 = "stablehlo.reshape"(%29) : (tensor<16xf32>) -> tensor<1x16xf32>
    %31 = "stablehlo.reduce"(%30, %10) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %34 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%34) : (tensor<f32>) -> ()
    }) : (tensor<1x16xf32>, tensor<f32>) -> tensor<16xf32>
    %32 = "stablehlo.dot_general"(%19, %6) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<12x3xf32>, tensor<12x16xf32>) -> tensor<3x16xf32>
    %33 = "stablehlo.transpose"(%32) <{permutation = array<i64: 1, 0>}> {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,3]{0,1}"} : (tensor<3x16xf32>) -> tensor<16x3xf32>
    "func.return"(%13, %28, %31, %33) : (tensor<f32>, tensor<6x16xf32>, tensor<16xf32>, tensor<16x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false, mhlo.xla_entry_computation_result_layout = [dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], mhlo.xla_entry_computation_result_tiles = [[], [], [], []]} : () -> ()
