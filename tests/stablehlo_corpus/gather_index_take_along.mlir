"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<i1>, tensor<i1>) -> tensor<i1>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg7: tensor<i1>, %arg8: tensor<i1>):
    %32 = "stablehlo.and"(%arg7, %arg8) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    "func.return"(%32) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<10x6xf32>, tensor<10x3xi32>) -> tensor<10x3xf32>, sym_name = "take_along_axis.2", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<10x6xf32>, %arg4: tensor<10x3xi32>):
    %10 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<10x3xi32>
    %12 = "stablehlo.compare"(%arg4, %11) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<10x3xi32>, tensor<10x3xi32>) -> tensor<10x3xi1>
    %13 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<10x3xi32>
    %15 = "stablehlo.add"(%arg4, %14) : (tensor<10x3xi32>, tensor<10x3xi32>) -> tensor<10x3xi32>
    %16 = "stablehlo.select"(%12, %15, %arg4) : (tensor<10x3xi1>, tensor<10x3xi32>, tensor<10x3xi32>) -> tensor<10x3xi32>
    %17 = "stablehlo.reshape"(%16) : (tensor<10x3xi32>) -> tensor<10x3x1xi32>
    %18 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %19 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<10x3x1xi32>
    %20 = "stablehlo.compare"(%17, %19) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<10x3x1xi32>, tensor<10x3x1xi32>) -> tensor<10x3x1xi1>
    %21 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<10x3x1xi32>
    %23 = "stablehlo.compare"(%17, %22) <{comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<10x3x1xi32>, tensor<10x3x1xi32>) -> tensor<10x3x1xi1>
    %24 = "stablehlo.and"(%20, %23) : (tensor<10x3x1xi1>, tensor<10x3x1xi1>) -> tensor<10x3x1xi1>
    %25 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %26 = "stablehlo.reduce"(%24, %25) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg5: tensor<i1>, %arg6: tensor<i1>):
      %31 = "stablehlo.and"(%arg5, %arg6) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%31) : (tensor<i1>) -> ()
    }) : (tensor<10x3x1xi1>, tensor<i1>) -> tensor<10x3xi1>
    %27 = "stablehlo.gather"(%arg3, %17) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<10x6xf32>, tensor<10x3x1xi32>) -> tensor<10x3xf32>
    %28 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %29 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<10x3xf32>
    %30 = "stablehlo.select"(%26, %27, %29) : (tensor<10x3xi1>, tensor<10x3xf32>, tensor<10x3xf32>) -> tensor<10x3xf32>
    "func.return"(%30) : (tensor<10x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<10x6xf32>, tensor<7xi32>, tensor<10x3xi32>) -> (tensor<7x6xf32>, tensor<10x3xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<10x6xf32>, %arg1: tensor<7xi32>, %arg2: tensor<10x3xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<7xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %3 = "stablehlo.constant"() <{value = dense<10> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<7xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<7xi1>, tensor<7xi32>, tensor<7xi32>) -> tensor<7xi32>
    %7 = "stablehlo.reshape"(%6) : (tensor<7xi32>) -> tensor<7x1xi32>
    %8 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 6>}> : (tensor<10x6xf32>, tensor<7x1xi32>) -> tensor<7x6xf32>
    %9 = "func.call"(%arg0, %arg2) <{callee = @take_along_axis.2}> : (tensor<10x6xf32>, tensor<10x3xi32>) -> tensor<10x3xf32>
    "func.return"(%8, %9) : (tensor<7x6xf32>, tensor<10x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
