"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<5xf32>) -> tensor<5xf32>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg9: tensor<5xf32>):
    %34 = "stablehlo.cosine"(%arg9) : (tensor<5xf32>) -> tensor<5xf32>
    %35 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %36 = "stablehlo.broadcast_in_dim"(%35) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5xf32>
    %37 = "stablehlo.subtract"(%34, %36) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
    "func.return"(%37) : (tensor<5xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5xf32>) -> tensor<5xf32>, sym_name = "region_1.2", sym_visibility = "private"}> ({
  ^bb0(%arg8: tensor<5xf32>):
    %30 = "stablehlo.sine"(%arg8) : (tensor<5xf32>) -> tensor<5xf32>
    %31 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %32 = "stablehlo.broadcast_in_dim"(%31) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5xf32>
    %33 = "stablehlo.multiply"(%30, %32) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
    "func.return"(%33) : (tensor<5xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_2.3", sym_visibility = "private"}> ({
  ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
    %29 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%29) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5xf32>) -> tensor<5xf32>, sym_name = "region_3.4", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<5xf32>):
    %26 = "stablehlo.negate"(%arg5) : (tensor<5xf32>) -> tensor<5xf32>
    %27 = "stablehlo.multiply"(%26, %arg5) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
    %28 = "stablehlo.exponential"(%27) : (tensor<5xf32>) -> tensor<5xf32>
    "func.return"(%28) : (tensor<5xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5xf32>) -> tensor<5xf32>, sym_name = "region_4.5", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<5xf32>):
    %23 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %24 = "stablehlo.broadcast_in_dim"(%23) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5xf32>
    %25 = "stablehlo.multiply"(%arg4, %24) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
    "func.return"(%25) : (tensor<5xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i1>, tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<i1>, %arg1: tensor<5xf32>):
    %0 = "stablehlo.convert"(%arg0) : (tensor<i1>) -> tensor<i32>
    %1 = "stablehlo.case"(%0) ({
      %19 = "stablehlo.cosine"(%arg1) : (tensor<5xf32>) -> tensor<5xf32>
      %20 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5xf32>
      %22 = "stablehlo.subtract"(%19, %21) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
      "stablehlo.return"(%22) : (tensor<5xf32>) -> ()
    }, {
      %15 = "stablehlo.sine"(%arg1) : (tensor<5xf32>) -> tensor<5xf32>
      %16 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %17 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5xf32>
      %18 = "stablehlo.multiply"(%15, %17) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
      "stablehlo.return"(%18) : (tensor<5xf32>) -> ()
    }) : (tensor<i32>) -> tensor<5xf32>
    %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%arg1, %2) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %14 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%14) : (tensor<f32>) -> ()
    }) : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
    %4 = "stablehlo.constant"() <{value = dense<1.000000e+02> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.compare"(%3, %4) <{comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %6 = "stablehlo.convert"(%5) : (tensor<i1>) -> tensor<i32>
    %7 = "stablehlo.case"(%6) ({
      %11 = "stablehlo.negate"(%arg1) : (tensor<5xf32>) -> tensor<5xf32>
      %12 = "stablehlo.multiply"(%11, %arg1) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
      %13 = "stablehlo.exponential"(%12) : (tensor<5xf32>) -> tensor<5xf32>
      "stablehlo.return"(%13) : (tensor<5xf32>) -> ()
    }, {
      %8 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5xf32>
      %10 = "stablehlo.multiply"(%arg1, %9) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
      "stablehlo.return"(%10) : (tensor<5xf32>) -> ()
    }) : (tensor<i32>) -> tensor<5xf32>
    "func.return"(%1, %7) : (tensor<5xf32>, tensor<5xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
