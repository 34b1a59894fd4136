"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_1.1", sym_visibility = "private"}> ({
  ^bb0(%arg27: tensor<f32>, %arg28: tensor<f32>):
    %33 = "stablehlo.add"(%arg27, %arg28) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%33) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8x8xf32>, tensor<i32>, tensor<8xf32>) -> (tensor<i32>, tensor<8xf32>), sym_name = "closed_call.2", sym_visibility = "private"}> ({
  ^bb0(%arg22: tensor<8x8xf32>, %arg23: tensor<i32>, %arg24: tensor<8xf32>):
    %23 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %24 = "stablehlo.add"(%arg23, %23) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %25 = "stablehlo.dot"(%arg22, %arg24) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %26 = "stablehlo.multiply"(%25, %25) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %27 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %28 = "stablehlo.reduce"(%26, %27) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg25: tensor<f32>, %arg26: tensor<f32>):
      %32 = "stablehlo.add"(%arg25, %arg26) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%32) : (tensor<f32>) -> ()
    }) : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    %29 = "stablehlo.sqrt"(%28) : (tensor<f32>) -> tensor<f32>
    %30 = "stablehlo.broadcast_in_dim"(%29) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
    %31 = "stablehlo.divide"(%25, %30) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%24, %31) : (tensor<i32>, tensor<8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i32>, tensor<8xf32>, tensor<8x8xf32>) -> (tensor<i32>, tensor<i32>, tensor<8xf32>, tensor<8x8xf32>), sym_name = "region_0.3", sym_visibility = "private"}> ({
  ^bb0(%arg18: tensor<i32>, %arg19: tensor<i32>, %arg20: tensor<8xf32>, %arg21: tensor<8x8xf32>):
    %20 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %21 = "stablehlo.add"(%arg18, %20) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %22:2 = "func.call"(%arg21, %arg19, %arg20) <{callee = @closed_call.2}> : (tensor<8x8xf32>, tensor<i32>, tensor<8xf32>) -> (tensor<i32>, tensor<8xf32>)
    "func.return"(%21, %22#0, %22#1, %arg21) : (tensor<i32>, tensor<i32>, tensor<8xf32>, tensor<8x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i32>, tensor<8xf32>, tensor<8x8xf32>) -> tensor<i1>, sym_name = "region_2.4", sym_visibility = "private"}> ({
  ^bb0(%arg14: tensor<i32>, %arg15: tensor<i32>, %arg16: tensor<8xf32>, %arg17: tensor<8x8xf32>):
    %18 = "stablehlo.constant"() <{value = dense<12> : tensor<i32>}> : () -> tensor<i32>
    %19 = "stablehlo.compare"(%arg14, %18) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "func.return"(%19) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_3.5", sym_visibility = "private"}> ({
  ^bb0(%arg12: tensor<f32>, %arg13: tensor<f32>):
    %17 = "stablehlo.add"(%arg12, %arg13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%17) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8x8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<f32>, tensor<f32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8x8xf32>, %arg1: tensor<8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1:4 = "stablehlo.while"(%0, %0, %arg1, %arg0) ({
    ^bb0(%arg8: tensor<i32>, %arg9: tensor<i32>, %arg10: tensor<8xf32>, %arg11: tensor<8x8xf32>):
      %15 = "stablehlo.constant"() <{value = dense<12> : tensor<i32>}> : () -> tensor<i32>
      %16 = "stablehlo.compare"(%arg8, %15) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%16) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg4: tensor<i32>, %arg5: tensor<i32>, %arg6: tensor<8xf32>, %arg7: tensor<8x8xf32>):
      %12 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %13 = "stablehlo.add"(%arg4, %12) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %14:2 = "func.call"(%arg7, %arg5, %arg6) <{callee = @closed_call.2}> : (tensor<8x8xf32>, tensor<i32>, tensor<8xf32>) -> (tensor<i32>, tensor<8xf32>)
      "stablehlo.return"(%13, %14#0, %14#1, %arg7) : (tensor<i32>, tensor<i32>, tensor<8xf32>, tensor<8x8xf32>) -> ()
    }) : (tensor<i32>, tensor<i32>, tensor<8xf32>, tensor<8x8xf32>) -> (tensor<i32>, tensor<i32>, tensor<8xf32>, tensor<8x8xf32>)
    %2 = "stablehlo.dot"(%arg0, %1#2) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %3 = "stablehlo.dot"(%1#2, %2) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
    %4 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8xf32>
    %5 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
    %7 = "stablehlo.add"(%4, %6) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %8 = "stablehlo.multiply"(%1#2, %7) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.reduce"(%8, %9) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%11) : (tensor<f32>) -> ()
    }) : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%1#2, %3, %10) : (tensor<8xf32>, tensor<f32>, tensor<f32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
