"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<9x12xf32>) -> tensor<9x12xf32>, sym_name = "_flip.1", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<9x12xf32>):
    %11 = "stablehlo.reverse"(%arg3) <{dimensions = array<i64: 1>}> : (tensor<9x12xf32>) -> tensor<9x12xf32>
    "func.return"(%11) : (tensor<9x12xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<9x12xf32>, tensor<f32>) -> tensor<12x15xf32>, sym_name = "_pad.2", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<9x12xf32>, %arg2: tensor<f32>):
    %10 = "stablehlo.pad"(%arg1, %arg2) <{edge_padding_high = array<i64: 2, 3>, edge_padding_low = array<i64: 1, 0>, interior_padding = array<i64: 0, 0>}> : (tensor<9x12xf32>, tensor<f32>) -> tensor<12x15xf32>
    "func.return"(%10) : (tensor<12x15xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<9x12xf32>) -> (tensor<4x4xf32>, tensor<3x3xf32>, tensor<9x12xf32>, tensor<9x8xf32>, tensor<12x15xf32>, tensor<18x11xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<9x12xf32>):
    %0 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 8, 12>, start_indices = array<i64: 1, 0>, strides = array<i64: 2, 3>}> : (tensor<9x12xf32>) -> tensor<4x4xf32>
    %1 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 9, 5>, start_indices = array<i64: 6, 2>, strides = array<i64: 1, 1>}> : (tensor<9x12xf32>) -> tensor<3x3xf32>
    %2 = "func.call"(%arg0) <{callee = @_flip.1}> : (tensor<9x12xf32>) -> tensor<9x12xf32>
    %3 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 9, 4>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<9x12xf32>) -> tensor<9x4xf32>
    %4 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 9, 12>, start_indices = array<i64: 0, 8>, strides = array<i64: 1, 1>}> : (tensor<9x12xf32>) -> tensor<9x4xf32>
    %5 = "stablehlo.concatenate"(%3, %4) <{dimension = 1 : i64}> : (tensor<9x4xf32>, tensor<9x4xf32>) -> tensor<9x8xf32>
    %6 = "stablehlo.constant"() <{value = dense<-1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "func.call"(%arg0, %6) <{callee = @_pad.2}> : (tensor<9x12xf32>, tensor<f32>) -> tensor<12x15xf32>
    %8 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.pad"(%arg0, %8) <{edge_padding_high = array<i64: 2, -3>, edge_padding_low = array<i64: -1, 2>, interior_padding = array<i64: 1, 0>}> : (tensor<9x12xf32>, tensor<f32>) -> tensor<18x11xf32>
    "func.return"(%0, %1, %2, %5, %7, %9) : (tensor<4x4xf32>, tensor<3x3xf32>, tensor<9x12xf32>, tensor<9x8xf32>, tensor<12x15xf32>, tensor<18x11xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
