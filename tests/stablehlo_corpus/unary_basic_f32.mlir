"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>, sym_name = "round.1", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<4x5x6xf32>):
    %17 = "stablehlo.round_nearest_even"(%arg1) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    "func.return"(%17) : (tensor<4x5x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x5x6xf32>) -> (tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4x5x6xf32>):
    %0 = "stablehlo.abs"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %1 = "stablehlo.negate"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %2 = "stablehlo.floor"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %3 = "stablehlo.ceil"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %4 = "stablehlo.sign"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %5 = "func.call"(%arg0) <{callee = @round.1}> : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %6 = "stablehlo.exponential"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %7 = "stablehlo.abs"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %8 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x5x6xf32>
    %10 = "stablehlo.add"(%7, %9) : (tensor<4x5x6xf32>, tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %11 = "stablehlo.log"(%10) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %12 = "stablehlo.abs"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %13 = "stablehlo.sqrt"(%12) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %14 = "stablehlo.tanh"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %15 = "stablehlo.sine"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    %16 = "stablehlo.cosine"(%arg0) : (tensor<4x5x6xf32>) -> tensor<4x5x6xf32>
    "func.return"(%0, %1, %2, %3, %4, %5, %6, %11, %13, %14, %15, %16) : (tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>, tensor<4x5x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
