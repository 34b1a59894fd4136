"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<6xf32>, tensor<4xf32>, tensor<2x3x4xf32>, tensor<f32>) -> (tensor<6x4xf32>, tensor<3x5x4xf32>, tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<6xf32>, %arg1: tensor<4xf32>, %arg2: tensor<2x3x4xf32>, %arg3: tensor<f32>):
    %0 = "stablehlo.reshape"(%arg0) : (tensor<6xf32>) -> tensor<6x1xf32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<6x1xf32>) -> tensor<6x1xf32>
    %2 = "stablehlo.reshape"(%1) : (tensor<6x1xf32>) -> tensor<6xf32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<6xf32>) -> tensor<6x4xf32>
    %4 = "stablehlo.reshape"(%arg1) : (tensor<4xf32>) -> tensor<1x4xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %6 = "stablehlo.reshape"(%5) : (tensor<1x4xf32>) -> tensor<4xf32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<6x4xf32>
    %8 = "stablehlo.add"(%3, %7) : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
    %9 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 2>}> : (tensor<4xf32>) -> tensor<3x5x4xf32>
    %10 = "stablehlo.reshape"(%arg2) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
    %11 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<6x4xf32>
    %12 = "stablehlo.multiply"(%10, %11) : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
    %13 = "stablehlo.transpose"(%arg2) <{permutation = array<i64: 2, 0, 1>}> {result_layout = dense<[0, 2, 1]> : tensor<3xindex>, xla_shape = "f32[4,2,3]{0,2,1}"} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    %14 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x3x4xf32>
    %15 = "stablehlo.add"(%arg2, %14) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    "func.return"(%8, %9, %12, %13, %15) : (tensor<6x4xf32>, tensor<3x5x4xf32>, tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false, mhlo.xla_entry_computation_result_layout = [dense<[1, 0]> : tensor<2xindex>, dense<[2, 1, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[0, 2, 1]> : tensor<3xindex>, dense<[2, 1, 0]> : tensor<3xindex>], mhlo.xla_entry_computation_result_tiles = [[], [], [], [], []]} : () -> ()
