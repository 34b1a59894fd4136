"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg20: tensor<f32>, %arg21: tensor<f32>):
    %47 = "stablehlo.maximum"(%arg20, %arg21) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%47) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_1.2", sym_visibility = "private"}> ({
  ^bb0(%arg18: tensor<f32>, %arg19: tensor<f32>):
    %46 = "stablehlo.add"(%arg18, %arg19) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%46) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<16x10xf32>) -> tensor<16x10xf32>, sym_name = "log_softmax.3", sym_visibility = "private"}> ({
  ^bb0(%arg13: tensor<16x10xf32>):
    %25 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %26 = "stablehlo.reduce"(%arg13, %25) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg16: tensor<f32>, %arg17: tensor<f32>):
      %45 = "stablehlo.maximum"(%arg16, %arg17) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%45) : (tensor<f32>) -> ()
    }) : (tensor<16x10xf32>, tensor<f32>) -> tensor<16xf32>
    %27 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16xf32>
    %29 = "stablehlo.maximum"(%26, %28) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %30 = "stablehlo.reshape"(%29) : (tensor<16xf32>) -> tensor<16x1xf32>
    %31 = "stablehlo.broadcast_in_dim"(%30) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<16x1xf32>) -> tensor<16x1xf32>
    %32 = "stablehlo.reshape"(%31) : (tensor<16x1xf32>) -> tensor<16xf32>
    %33 = "stablehlo.broadcast_in_dim"(%32) <{broadcast_dimensions = array<i64: 0>}> : (tensor<16xf32>) -> tensor<16x10xf32>
    %34 = "stablehlo.subtract"(%arg13, %33) : (tensor<16x10xf32>, tensor<16x10xf32>) -> tensor<16x10xf32>
    %35 = "stablehlo.exponential"(%34) : (tensor<16x10xf32>) -> tensor<16x10xf32>
    %36 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %37 = "stablehlo.reduce"(%35, %36) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg14: tensor<f32>, %arg15: tensor<f32>):
      %44 = "stablehlo.add"(%arg14, %arg15) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%44) : (tensor<f32>) -> ()
    }) : (tensor<16x10xf32>, tensor<f32>) -> tensor<16xf32>
    %38 = "stablehlo.reshape"(%37) : (tensor<16xf32>) -> tensor<16x1xf32>
    %39 = "stablehlo.log"(%38) : (tensor<16x1xf32>) -> tensor<16x1xf32>
    %40 = "stablehlo.broadcast_in_dim"(%39) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<16x1xf32>) -> tensor<16x1xf32>
    %41 = "stablehlo.reshape"(%40) : (tensor<16x1xf32>) -> tensor<16xf32>
    %42 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64: 0>}> : (tensor<16xf32>) -> tensor<16x10xf32>
    %43 = "stablehlo.subtract"(%34, %42) : (tensor<16x10xf32>, tensor<16x10xf32>) -> tensor<16x10xf32>
    "func.return"(%43) : (tensor<16x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<16x10xi1>, tensor<16x10xf32>, tensor<f32>) -> tensor<16x10xf32>, sym_name = "_where.4", sym_visibility = "private"}> ({
  ^bb0(%arg10: tensor<16x10xi1>, %arg11: tensor<16x10xf32>, %arg12: tensor<f32>):
    %23 = "stablehlo.broadcast_in_dim"(%arg12) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x10xf32>
    %24 = "stablehlo.select"(%arg10, %arg11, %23) : (tensor<16x10xi1>, tensor<16x10xf32>, tensor<16x10xf32>) -> tensor<16x10xf32>
    "func.return"(%24) : (tensor<16x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_2.5", sym_visibility = "private"}> ({
  ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
    %22 = "stablehlo.add"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%22) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_3.6", sym_visibility = "private"}> ({
  ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
    %21 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%21) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<16x10xf32>, tensor<16xi32>) -> (tensor<f32>, tensor<16x10xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<16x10xf32>, %arg1: tensor<16xi32>):
    %0 = "stablehlo.reshape"(%arg1) : (tensor<16xi32>) -> tensor<16x1xi32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<16x1xi32>) -> tensor<16x1xi32>
    %2 = "stablehlo.reshape"(%1) : (tensor<16x1xi32>) -> tensor<16xi32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<16xi32>) -> tensor<16x10xi32>
    %4 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<10xi32>
    %5 = "stablehlo.reshape"(%4) : (tensor<10xi32>) -> tensor<1x10xi32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x10xi32>) -> tensor<1x10xi32>
    %7 = "stablehlo.reshape"(%6) : (tensor<1x10xi32>) -> tensor<10xi32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 1>}> : (tensor<10xi32>) -> tensor<16x10xi32>
    %9 = "stablehlo.compare"(%3, %8) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<16x10xi32>, tensor<16x10xi32>) -> tensor<16x10xi1>
    %10 = "func.call"(%arg0) <{callee = @log_softmax.3}> : (tensor<16x10xf32>) -> tensor<16x10xf32>
    %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "func.call"(%9, %10, %11) <{callee = @_where.4}> : (tensor<16x10xi1>, tensor<16x10xf32>, tensor<f32>) -> tensor<16x10xf32>
    %13 = "stablehlo.reduce"(%12, %11) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %20 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%20) : (tensor<f32>) -> ()
    }) : (tensor<16x10xf32>, tensor<f32>) -> tensor<16xf32>
    %14 = "stablehlo.reduce"(%13, %11) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %19 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%19) : (tensor<f32>) -> ()
    }) : (tensor<16xf32>, tensor<f32>) -> tensor<f32>
    %15 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.divide"(%14, %15) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %17 = "stablehlo.negate"(%16) : (tensor<f32>) -> tensor<f32>
    %18 = "stablehlo.exponential"(%10) : (tensor<16x10xf32>) -> tensor<16x10xf32>
    "func.return"(%17, %18) : (tensor<f32>, tensor<16x10xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
