"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg19: tensor<f32>, %arg20: tensor<f32>):
    %21 = "stablehlo.add"(%arg19, %arg20) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%21) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_1.2", sym_visibility = "private"}> ({
  ^bb0(%arg17: tensor<f32>, %arg18: tensor<f32>):
    %20 = "stablehlo.maximum"(%arg17, %arg18) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%20) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_2.3", sym_visibility = "private"}> ({
  ^bb0(%arg15: tensor<f32>, %arg16: tensor<f32>):
    %19 = "stablehlo.minimum"(%arg15, %arg16) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%19) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_3.4", sym_visibility = "private"}> ({
  ^bb0(%arg13: tensor<f32>, %arg14: tensor<f32>):
    %18 = "stablehlo.multiply"(%arg13, %arg14) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%18) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_4.5", sym_visibility = "private"}> ({
  ^bb0(%arg11: tensor<f32>, %arg12: tensor<f32>):
    %17 = "stablehlo.add"(%arg11, %arg12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%17) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<7x9x5xf32>) -> (tensor<9x5xf32>, tensor<7x5xf32>, tensor<f32>, tensor<7x9xf32>, tensor<9xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<7x9x5xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %16 = "stablehlo.add"(%arg9, %arg10) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%16) : (tensor<f32>) -> ()
    }) : (tensor<7x9x5xf32>, tensor<f32>) -> tensor<9x5xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%arg0, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %15 = "stablehlo.maximum"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%15) : (tensor<f32>) -> ()
    }) : (tensor<7x9x5xf32>, tensor<f32>) -> tensor<7x5xf32>
    %4 = "stablehlo.constant"() <{value = dense<0x7F800000> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.reduce"(%arg0, %4) <{dimensions = array<i64: 0, 1, 2>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %14 = "stablehlo.minimum"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%14) : (tensor<f32>) -> ()
    }) : (tensor<7x9x5xf32>, tensor<f32>) -> tensor<f32>
    %6 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.reduce"(%arg0, %6) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %13 = "stablehlo.multiply"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%13) : (tensor<f32>) -> ()
    }) : (tensor<7x9x5xf32>, tensor<f32>) -> tensor<7x9xf32>
    %8 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0, 2>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %12 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<7x9x5xf32>, tensor<f32>) -> tensor<9xf32>
    %9 = "stablehlo.constant"() <{value = dense<3.500000e+01> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<9xf32>
    %11 = "stablehlo.divide"(%8, %10) : (tensor<9xf32>, tensor<9xf32>) -> tensor<9xf32>
    "func.return"(%1, %3, %5, %7, %11) : (tensor<9x5xf32>, tensor<7x5xf32>, tensor<f32>, tensor<7x9xf32>, tensor<9xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
