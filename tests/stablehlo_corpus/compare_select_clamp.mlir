"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<10x10xi1>, tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xf32>, sym_name = "_where.1", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<10x10xi1>, %arg3: tensor<10x10xf32>, %arg4: tensor<10x10xf32>):
    %16 = "stablehlo.select"(%arg2, %arg3, %arg4) : (tensor<10x10xi1>, tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xf32>
    "func.return"(%16) : (tensor<10x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<10x10xf32>, tensor<10x10xf32>) -> (tensor<10x10xi1>, tensor<10x10xi1>, tensor<10x10xi1>, tensor<10x10xi1>, tensor<10x10xi1>, tensor<10x10xi1>, tensor<10x10xf32>, tensor<10x10xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<10x10xf32>, %arg1: tensor<10x10xf32>):
    %0 = "stablehlo.compare"(%arg0, %arg1) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xi1>
    %1 = "stablehlo.compare"(%arg0, %arg1) <{comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xi1>
    %2 = "stablehlo.compare"(%arg0, %arg1) <{comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xi1>
    %3 = "stablehlo.compare"(%arg0, %arg1) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xi1>
    %4 = "stablehlo.compare"(%arg0, %arg1) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xi1>
    %5 = "stablehlo.compare"(%arg0, %arg1) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xi1>
    %6 = "stablehlo.compare"(%arg0, %arg1) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xi1>
    %7 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<10x10xf32>
    %9 = "stablehlo.multiply"(%arg1, %8) : (tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xf32>
    %10 = "func.call"(%6, %arg0, %9) <{callee = @_where.1}> : (tensor<10x10xi1>, tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xf32>
    %11 = "stablehlo.constant"() <{value = dense<-5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<10x10xf32>
    %13 = "stablehlo.constant"() <{value = dense<7.500000e-01> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<10x10xf32>
    %15 = "stablehlo.clamp"(%12, %arg0, %14) : (tensor<10x10xf32>, tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xf32>
    "func.return"(%0, %1, %2, %3, %4, %5, %10, %15) : (tensor<10x10xi1>, tensor<10x10xi1>, tensor<10x10xi1>, tensor<10x10xi1>, tensor<10x10xi1>, tensor<10x10xi1>, tensor<10x10xf32>, tensor<10x10xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
