"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg12: tensor<f32>, %arg13: tensor<f32>):
    %9 = "stablehlo.maximum"(%arg12, %arg13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%9) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<i1>, sym_name = "region_1.2", sym_visibility = "private"}> ({
  ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
    %8 = "stablehlo.compare"(%arg10, %arg11) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "func.return"(%8) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_2.3", sym_visibility = "private"}> ({
  ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
    %7 = "stablehlo.add"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%7) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<1x6x6x2xf32>, tensor<1x3x3x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x6x6x2xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<1x6x6x2xf32>, %arg1: tensor<1x3x3x2xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %6 = "stablehlo.maximum"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%6) : (tensor<f32>) -> ()
    }) : (tensor<1x6x6x2xf32>, tensor<f32>) -> tensor<1x3x3x2xf32>
    %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.select_and_scatter"(%arg0, %arg1, %2) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %5 = "stablehlo.compare"(%arg4, %arg5) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%5) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %4 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%4) : (tensor<f32>) -> ()
    }) : (tensor<1x6x6x2xf32>, tensor<1x3x3x2xf32>, tensor<f32>) -> tensor<1x6x6x2xf32>
    "func.return"(%1, %3) : (tensor<1x3x3x2xf32>, tensor<1x6x6x2xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
