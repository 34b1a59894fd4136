"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>) -> (tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<6x7xi32>, %arg1: tensor<6x7xi32>, %arg2: tensor<6x7xi32>):
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %1 = "stablehlo.subtract"(%arg0, %arg1) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %2 = "stablehlo.multiply"(%arg0, %arg1) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %3 = "stablehlo.divide"(%arg0, %arg1) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %4 = "stablehlo.remainder"(%arg0, %arg1) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %5 = "stablehlo.and"(%arg0, %arg1) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %6 = "stablehlo.or"(%arg0, %arg1) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %7 = "stablehlo.xor"(%arg0, %arg1) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %8 = "stablehlo.not"(%arg0) : (tensor<6x7xi32>) -> tensor<6x7xi32>
    %9 = "stablehlo.shift_left"(%arg0, %arg2) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %10 = "stablehlo.shift_right_arithmetic"(%arg0, %arg2) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %11 = "stablehlo.shift_right_logical"(%arg0, %arg2) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %12 = "stablehlo.maximum"(%arg0, %arg1) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    %13 = "stablehlo.minimum"(%arg0, %arg1) : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi32>
    "func.return"(%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13) : (tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>, tensor<6x7xi32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
