"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<10x4x3xf32>, tensor<i32>) -> tensor<4x3xf32>, sym_name = "dynamic_index_in_dim.1", sym_visibility = "private"}> ({
  ^bb0(%arg41: tensor<10x4x3xf32>, %arg42: tensor<i32>):
    %30 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %31 = "stablehlo.dynamic_slice"(%arg41, %arg42, %30, %30) <{slice_sizes = array<i64: 1, 4, 3>}> : (tensor<10x4x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x3xf32>
    %32 = "stablehlo.reshape"(%31) : (tensor<1x4x3xf32>) -> tensor<4x3xf32>
    "func.return"(%32) : (tensor<4x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x3xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>), sym_name = "closed_call.2", sym_visibility = "private"}> ({
  ^bb0(%arg36: tensor<3x8xf32>, %arg37: tensor<8x8xf32>, %arg38: tensor<8xf32>, %arg39: tensor<4x8xf32>, %arg40: tensor<4x3xf32>):
    %21 = "stablehlo.dot"(%arg40, %arg36) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x3xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
    %22 = "stablehlo.dot"(%arg39, %arg37) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %23 = "stablehlo.add"(%21, %22) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %24 = "stablehlo.reshape"(%arg38) : (tensor<8xf32>) -> tensor<1x8xf32>
    %25 = "stablehlo.broadcast_in_dim"(%24) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %26 = "stablehlo.reshape"(%25) : (tensor<1x8xf32>) -> tensor<8xf32>
    %27 = "stablehlo.broadcast_in_dim"(%26) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xf32>) -> tensor<4x8xf32>
    %28 = "stablehlo.add"(%23, %27) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %29 = "stablehlo.tanh"(%28) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%29, %29) : (tensor<4x8xf32>, tensor<4x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<10x4x8xf32>, tensor<4x8xf32>, tensor<i32>) -> tensor<10x4x8xf32>, sym_name = "dynamic_update_index_in_dim.3", sym_visibility = "private"}> ({
  ^bb0(%arg33: tensor<10x4x8xf32>, %arg34: tensor<4x8xf32>, %arg35: tensor<i32>):
    %18 = "stablehlo.reshape"(%arg34) : (tensor<4x8xf32>) -> tensor<1x4x8xf32>
    %19 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %20 = "stablehlo.dynamic_update_slice"(%arg33, %18, %arg35, %19, %19) : (tensor<10x4x8xf32>, tensor<1x4x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<10x4x8xf32>
    "func.return"(%20) : (tensor<10x4x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<4x8xf32>, tensor<10x4x8xf32>, tensor<10x4x3xf32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> (tensor<i32>, tensor<4x8xf32>, tensor<10x4x8xf32>, tensor<10x4x3xf32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>), sym_name = "region_0.4", sym_visibility = "private"}> ({
  ^bb0(%arg26: tensor<i32>, %arg27: tensor<4x8xf32>, %arg28: tensor<10x4x8xf32>, %arg29: tensor<10x4x3xf32>, %arg30: tensor<3x8xf32>, %arg31: tensor<8x8xf32>, %arg32: tensor<8xf32>):
    %13 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %14 = "stablehlo.add"(%arg26, %13) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %15 = "func.call"(%arg29, %arg26) <{callee = @dynamic_index_in_dim.1}> : (tensor<10x4x3xf32>, tensor<i32>) -> tensor<4x3xf32>
    %16:2 = "func.call"(%arg30, %arg31, %arg32, %arg27, %15) <{callee = @closed_call.2}> : (tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x3xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
    %17 = "func.call"(%arg28, %16#1, %arg26) <{callee = @dynamic_update_index_in_dim.3}> : (tensor<10x4x8xf32>, tensor<4x8xf32>, tensor<i32>) -> tensor<10x4x8xf32>
    "func.return"(%14, %16#0, %17, %arg29, %arg30, %arg31, %arg32) : (tensor<i32>, tensor<4x8xf32>, tensor<10x4x8xf32>, tensor<10x4x3xf32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<4x8xf32>, tensor<10x4x8xf32>, tensor<10x4x3xf32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<i1>, sym_name = "region_1.5", sym_visibility = "private"}> ({
  ^bb0(%arg19: tensor<i32>, %arg20: tensor<4x8xf32>, %arg21: tensor<10x4x8xf32>, %arg22: tensor<10x4x3xf32>, %arg23: tensor<3x8xf32>, %arg24: tensor<8x8xf32>, %arg25: tensor<8xf32>):
    %11 = "stablehlo.constant"() <{value = dense<10> : tensor<i32>}> : () -> tensor<i32>
    %12 = "stablehlo.compare"(%arg19, %11) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "func.return"(%12) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<10x4x3xf32>, tensor<4x8xf32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<10x4x8xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<10x4x3xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<3x8xf32>, %arg3: tensor<8x8xf32>, %arg4: tensor<8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<10x4x8xf32>
    %3:7 = "stablehlo.while"(%0, %arg1, %2, %arg0, %arg2, %arg3, %arg4) ({
    ^bb0(%arg12: tensor<i32>, %arg13: tensor<4x8xf32>, %arg14: tensor<10x4x8xf32>, %arg15: tensor<10x4x3xf32>, %arg16: tensor<3x8xf32>, %arg17: tensor<8x8xf32>, %arg18: tensor<8xf32>):
      %9 = "stablehlo.constant"() <{value = dense<10> : tensor<i32>}> : () -> tensor<i32>
      %10 = "stablehlo.compare"(%arg12, %9) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%10) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg5: tensor<i32>, %arg6: tensor<4x8xf32>, %arg7: tensor<10x4x8xf32>, %arg8: tensor<10x4x3xf32>, %arg9: tensor<3x8xf32>, %arg10: tensor<8x8xf32>, %arg11: tensor<8xf32>):
      %4 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.add"(%arg5, %4) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %6 = "func.call"(%arg8, %arg5) <{callee = @dynamic_index_in_dim.1}> : (tensor<10x4x3xf32>, tensor<i32>) -> tensor<4x3xf32>
      %7:2 = "func.call"(%arg9, %arg10, %arg11, %arg6, %6) <{callee = @closed_call.2}> : (tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x3xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
      %8 = "func.call"(%arg7, %7#1, %arg5) <{callee = @dynamic_update_index_in_dim.3}> : (tensor<10x4x8xf32>, tensor<4x8xf32>, tensor<i32>) -> tensor<10x4x8xf32>
      "stablehlo.return"(%5, %7#0, %8, %arg8, %arg9, %arg10, %arg11) : (tensor<i32>, tensor<4x8xf32>, tensor<10x4x8xf32>, tensor<10x4x3xf32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> ()
    }) : (tensor<i32>, tensor<4x8xf32>, tensor<10x4x8xf32>, tensor<10x4x3xf32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> (tensor<i32>, tensor<4x8xf32>, tensor<10x4x8xf32>, tensor<10x4x3xf32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>)
    "func.return"(%3#1, %3#2) : (tensor<4x8xf32>, tensor<10x4x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
