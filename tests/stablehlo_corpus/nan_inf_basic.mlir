"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<16xi1>, tensor<f32>, tensor<16xf32>) -> tensor<16xf32>, sym_name = "_where.1", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<16xi1>, %arg3: tensor<f32>, %arg4: tensor<16xf32>):
    %10 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16xf32>
    %11 = "stablehlo.select"(%arg2, %10, %arg4) : (tensor<16xi1>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    "func.return"(%11) : (tensor<16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<16xf32>, tensor<16xf32>) -> (tensor<16xi1>, tensor<16xi1>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<16xf32>, %arg1: tensor<16xf32>):
    %0 = "stablehlo.is_finite"(%arg0) : (tensor<16xf32>) -> tensor<16xi1>
    %1 = "stablehlo.compare"(%arg0, %arg0) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
    %2 = "stablehlo.compare"(%arg0, %arg0) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
    %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "func.call"(%2, %3, %arg0) <{callee = @_where.1}> : (tensor<16xi1>, tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
    %5 = "stablehlo.maximum"(%arg0, %arg1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %6 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16xf32>
    %8 = "stablehlo.add"(%arg0, %7) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %9 = "stablehlo.divide"(%7, %arg0) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    "func.return"(%0, %1, %4, %5, %8, %9) : (tensor<16xi1>, tensor<16xi1>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
