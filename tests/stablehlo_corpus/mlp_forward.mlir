"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<16x64xf32>) -> tensor<16x64xf32>, sym_name = "relu.1", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<16x64xf32>):
    %13 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x64xf32>
    %15 = "stablehlo.maximum"(%arg5, %14) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
    "func.return"(%15) : (tensor<16x64xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<16x32xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64x10xf32>, tensor<10xf32>) -> tensor<16x10xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<16x32xf32>, %arg1: tensor<32x64xf32>, %arg2: tensor<64xf32>, %arg3: tensor<64x10xf32>, %arg4: tensor<10xf32>):
    %0 = "stablehlo.dot"(%arg0, %arg1) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
    %1 = "stablehlo.reshape"(%arg2) : (tensor<64xf32>) -> tensor<1x64xf32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x64xf32>) -> tensor<1x64xf32>
    %3 = "stablehlo.reshape"(%2) : (tensor<1x64xf32>) -> tensor<64xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 1>}> : (tensor<64xf32>) -> tensor<16x64xf32>
    %5 = "stablehlo.add"(%0, %4) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
    %6 = "func.call"(%5) <{callee = @relu.1}> : (tensor<16x64xf32>) -> tensor<16x64xf32>
    %7 = "stablehlo.dot"(%6, %arg3) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<16x64xf32>, tensor<64x10xf32>) -> tensor<16x10xf32>
    %8 = "stablehlo.reshape"(%arg4) : (tensor<10xf32>) -> tensor<1x10xf32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x10xf32>) -> tensor<1x10xf32>
    %10 = "stablehlo.reshape"(%9) : (tensor<1x10xf32>) -> tensor<10xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 1>}> : (tensor<10xf32>) -> tensor<16x10xf32>
    %12 = "stablehlo.add"(%7, %11) : (tensor<16x10xf32>, tensor<16x10xf32>) -> tensor<16x10xf32>
    "func.return"(%12) : (tensor<16x10xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
