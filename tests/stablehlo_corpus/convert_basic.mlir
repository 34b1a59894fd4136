"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<3x8xf32>, tensor<3x8xi32>, tensor<3x8xf32>) -> (tensor<3x8xi32>, tensor<3x8xf32>, tensor<3x8xf16>, tensor<3x8xi1>, tensor<3x8xf32>, tensor<3x8xui8>, tensor<3x8xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<3x8xf32>, %arg1: tensor<3x8xi32>, %arg2: tensor<3x8xf32>):
    %0 = "stablehlo.convert"(%arg0) : (tensor<3x8xf32>) -> tensor<3x8xi32>
    %1 = "stablehlo.convert"(%arg1) : (tensor<3x8xi32>) -> tensor<3x8xf32>
    %2 = "stablehlo.convert"(%arg0) : (tensor<3x8xf32>) -> tensor<3x8xf16>
    %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x8xf32>
    %5 = "stablehlo.compare"(%arg0, %4) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xi1>
    %6 = "stablehlo.compare"(%arg0, %4) <{comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xi1>
    %7 = "stablehlo.convert"(%6) : (tensor<3x8xi1>) -> tensor<3x8xf32>
    %8 = "stablehlo.convert"(%arg2) : (tensor<3x8xf32>) -> tensor<3x8xui8>
    %9 = "stablehlo.reduce_precision"(%arg0) <{exponent_bits = 8 : i32, mantissa_bits = 7 : i32}> : (tensor<3x8xf32>) -> tensor<3x8xf32>
    "func.return"(%0, %1, %2, %5, %7, %8, %9) : (tensor<3x8xi32>, tensor<3x8xf32>, tensor<3x8xf16>, tensor<3x8xi1>, tensor<3x8xf32>, tensor<3x8xui8>, tensor<3x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
