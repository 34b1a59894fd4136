"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg20: tensor<f32>, %arg21: tensor<f32>):
    %35 = "stablehlo.maximum"(%arg20, %arg21) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%35) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_1.2", sym_visibility = "private"}> ({
  ^bb0(%arg18: tensor<f32>, %arg19: tensor<f32>):
    %34 = "stablehlo.add"(%arg18, %arg19) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%34) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_2.3", sym_visibility = "private"}> ({
  ^bb0(%arg16: tensor<f32>, %arg17: tensor<f32>):
    %33 = "stablehlo.add"(%arg16, %arg17) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%33) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<6x10xf32>) -> tensor<6x10xf32>, sym_name = "cumsum_0.4", sym_visibility = "private"}> ({
  ^bb0(%arg13: tensor<6x10xf32>):
    %30 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %31 = "stablehlo.reduce_window"(%arg13, %30) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [9, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 10>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg14: tensor<f32>, %arg15: tensor<f32>):
      %32 = "stablehlo.add"(%arg14, %arg15) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%32) : (tensor<f32>) -> ()
    }) : (tensor<6x10xf32>, tensor<f32>) -> tensor<6x10xf32>
    "func.return"(%31) : (tensor<6x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<6x10xf32>) -> tensor<6x10xf32>, sym_name = "cumsum.5", sym_visibility = "private"}> ({
  ^bb0(%arg12: tensor<6x10xf32>):
    %29 = "func.call"(%arg12) <{callee = @cumsum_0.4}> : (tensor<6x10xf32>) -> tensor<6x10xf32>
    "func.return"(%29) : (tensor<6x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_3.6", sym_visibility = "private"}> ({
  ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
    %28 = "stablehlo.multiply"(%arg10, %arg11) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%28) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<6x10xf32>) -> tensor<6x10xf32>, sym_name = "cumprod_1.7", sym_visibility = "private"}> ({
  ^bb0(%arg7: tensor<6x10xf32>):
    %25 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %26 = "stablehlo.reduce_window"(%arg7, %25) <{base_dilations = array<i64: 1, 1>, padding = dense<[[5, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 6, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %27 = "stablehlo.multiply"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%27) : (tensor<f32>) -> ()
    }) : (tensor<6x10xf32>, tensor<f32>) -> tensor<6x10xf32>
    "func.return"(%26) : (tensor<6x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<6x10xf32>) -> tensor<6x10xf32>, sym_name = "cumprod.8", sym_visibility = "private"}> ({
  ^bb0(%arg6: tensor<6x10xf32>):
    %24 = "func.call"(%arg6) <{callee = @cumprod_1.7}> : (tensor<6x10xf32>) -> tensor<6x10xf32>
    "func.return"(%24) : (tensor<6x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<6x10xf32>, tensor<6x10xf32>) -> (tensor<6xf32>, tensor<6x10xf32>, tensor<6x10xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<6x10xf32>, %arg1: tensor<6x10xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %23 = "stablehlo.maximum"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%23) : (tensor<f32>) -> ()
    }) : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<6xf32>
    %4 = "stablehlo.maximum"(%1, %3) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %5 = "stablehlo.is_finite"(%4) : (tensor<6xf32>) -> tensor<6xi1>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<6xf32>
    %8 = "stablehlo.select"(%5, %4, %7) : (tensor<6xi1>, tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %9 = "stablehlo.reshape"(%8) : (tensor<6xf32>) -> tensor<6x1xf32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<6x1xf32>) -> tensor<6x1xf32>
    %11 = "stablehlo.reshape"(%10) : (tensor<6x1xf32>) -> tensor<6xf32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64: 0>}> : (tensor<6xf32>) -> tensor<6x10xf32>
    %13 = "stablehlo.subtract"(%arg0, %12) : (tensor<6x10xf32>, tensor<6x10xf32>) -> tensor<6x10xf32>
    %14 = "stablehlo.exponential"(%13) : (tensor<6x10xf32>) -> tensor<6x10xf32>
    %15 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.reduce"(%14, %15) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %22 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%22) : (tensor<f32>) -> ()
    }) : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %17 = "stablehlo.abs"(%16) : (tensor<6xf32>) -> tensor<6xf32>
    %18 = "stablehlo.log"(%17) : (tensor<6xf32>) -> tensor<6xf32>
    %19 = "stablehlo.add"(%18, %8) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %20 = "func.call"(%arg0) <{callee = @cumsum.5}> : (tensor<6x10xf32>) -> tensor<6x10xf32>
    %21 = "func.call"(%arg1) <{callee = @cumprod.8}> : (tensor<6x10xf32>) -> tensor<6x10xf32>
    "func.return"(%19, %20, %21) : (tensor<6xf32>, tensor<6x10xf32>, tensor<6x10xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
