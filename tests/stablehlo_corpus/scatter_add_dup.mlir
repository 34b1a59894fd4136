"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
    %10 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%10) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8x4xf32>, tensor<6xi32>, tensor<6x4xf32>) -> tensor<8x4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8x4xf32>, %arg1: tensor<6xi32>, %arg2: tensor<6x4xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<6xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
    %3 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<6xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<6xi1>, tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
    %7 = "stablehlo.reshape"(%6) : (tensor<6xi32>) -> tensor<6x1xi32>
    %8 = "stablehlo.scatter"(%arg0, %7, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %9 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<8x4xf32>, tensor<6x1xi32>, tensor<6x4xf32>) -> tensor<8x4xf32>
    "func.return"(%8) : (tensor<8x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
