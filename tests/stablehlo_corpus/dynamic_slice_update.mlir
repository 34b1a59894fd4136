"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<6x8xf32>, tensor<i32>, tensor<i32>, tensor<2x3xf32>) -> (tensor<3x4xf32>, tensor<6x8xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<6x8xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<2x3xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.compare"(%arg1, %0) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.add"(%arg1, %2) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %4 = "stablehlo.select"(%1, %3, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %5 = "stablehlo.compare"(%arg2, %0) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %6 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
    %7 = "stablehlo.add"(%arg2, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %8 = "stablehlo.select"(%5, %7, %arg2) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %9 = "stablehlo.dynamic_slice"(%arg0, %4, %8) <{slice_sizes = array<i64: 3, 4>}> : (tensor<6x8xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
    %10 = "stablehlo.compare"(%arg2, %0) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %11 = "stablehlo.add"(%arg2, %2) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %12 = "stablehlo.select"(%10, %11, %arg2) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %13 = "stablehlo.compare"(%arg1, %0) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %14 = "stablehlo.add"(%arg1, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %15 = "stablehlo.select"(%13, %14, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %16 = "stablehlo.dynamic_update_slice"(%arg0, %arg3, %12, %15) : (tensor<6x8xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<6x8xf32>
    "func.return"(%9, %16) : (tensor<3x4xf32>, tensor<6x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
