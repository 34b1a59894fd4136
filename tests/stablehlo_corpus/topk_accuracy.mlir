"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<i1>, tensor<i1>) -> tensor<i1>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg8: tensor<i1>, %arg9: tensor<i1>):
    %21 = "stablehlo.or"(%arg8, %arg9) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    "func.return"(%21) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_1.2", sym_visibility = "private"}> ({
  ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
    %20 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%20) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<16x10xf32>, tensor<16xi32>) -> (tensor<16x3xi32>, tensor<16xf32>, tensor<f32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<16x10xf32>, %arg1: tensor<16xi32>):
    %0:2 = "mhlo.topk"(%arg0) <{k = 3 : i64, largest = true}> : (tensor<16x10xf32>) -> (tensor<16x3xf32>, tensor<16x3xi32>)
    %1 = "stablehlo.slice"(%0#0) <{limit_indices = array<i64: 16, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<16x3xf32>) -> tensor<16x1xf32>
    %2 = "stablehlo.reshape"(%1) : (tensor<16x1xf32>) -> tensor<16xf32>
    %3 = "stablehlo.slice"(%0#0) <{limit_indices = array<i64: 16, 3>, start_indices = array<i64: 0, 2>, strides = array<i64: 1, 1>}> : (tensor<16x3xf32>) -> tensor<16x1xf32>
    %4 = "stablehlo.reshape"(%3) : (tensor<16x1xf32>) -> tensor<16xf32>
    %5 = "stablehlo.subtract"(%2, %4) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %6 = "stablehlo.reshape"(%arg1) : (tensor<16xi32>) -> tensor<16x1xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<16x1xi32>) -> tensor<16x1xi32>
    %8 = "stablehlo.reshape"(%7) : (tensor<16x1xi32>) -> tensor<16xi32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 0>}> : (tensor<16xi32>) -> tensor<16x3xi32>
    %10 = "stablehlo.compare"(%0#1, %9) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<16x3xi32>, tensor<16x3xi32>) -> tensor<16x3xi1>
    %11 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
    %12 = "stablehlo.reduce"(%10, %11) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg4: tensor<i1>, %arg5: tensor<i1>):
      %19 = "stablehlo.or"(%arg4, %arg5) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%19) : (tensor<i1>) -> ()
    }) : (tensor<16x3xi1>, tensor<i1>) -> tensor<16xi1>
    %13 = "stablehlo.convert"(%12) : (tensor<16xi1>) -> tensor<16xf32>
    %14 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.reduce"(%13, %14) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %18 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%18) : (tensor<f32>) -> ()
    }) : (tensor<16xf32>, tensor<f32>) -> tensor<f32>
    %16 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %17 = "stablehlo.divide"(%15, %16) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%0#1, %5, %17) : (tensor<16x3xi32>, tensor<16xf32>, tensor<f32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
