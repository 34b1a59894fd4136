"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<5x5xf32>) -> (tensor<5x5xi32>, tensor<5x5xf32>, tensor<5x5xui32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<5x5xf32>):
    %0 = "stablehlo.bitcast_convert"(%arg0) : (tensor<5x5xf32>) -> tensor<5x5xi32>
    %1 = "stablehlo.bitcast_convert"(%arg0) : (tensor<5x5xf32>) -> tensor<5x5xui32>
    %2 = "stablehlo.constant"() <{value = dense<2147483648> : tensor<ui32>}> : () -> tensor<ui32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5x5xui32>
    %4 = "stablehlo.xor"(%1, %3) : (tensor<5x5xui32>, tensor<5x5xui32>) -> tensor<5x5xui32>
    %5 = "stablehlo.bitcast_convert"(%4) : (tensor<5x5xui32>) -> tensor<5x5xf32>
    %6 = "stablehlo.constant"() <{value = dense<23> : tensor<ui32>}> : () -> tensor<ui32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5x5xui32>
    %8 = "stablehlo.shift_right_logical"(%1, %7) : (tensor<5x5xui32>, tensor<5x5xui32>) -> tensor<5x5xui32>
    %9 = "stablehlo.constant"() <{value = dense<255> : tensor<ui32>}> : () -> tensor<ui32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5x5xui32>
    %11 = "stablehlo.and"(%8, %10) : (tensor<5x5xui32>, tensor<5x5xui32>) -> tensor<5x5xui32>
    "func.return"(%0, %5, %11) : (tensor<5x5xi32>, tensor<5x5xf32>, tensor<5x5xui32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
