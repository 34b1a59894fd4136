"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<i1>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg13: tensor<f32>, %arg14: tensor<f32>):
    %39 = "stablehlo.compare"(%arg13, %arg13) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %40 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %41 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %42 = "stablehlo.compare"(%arg13, %41) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %43 = "stablehlo.select"(%42, %41, %arg13) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %44 = "stablehlo.select"(%39, %40, %43) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %45 = "stablehlo.compare"(%arg14, %arg14) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %46 = "stablehlo.compare"(%arg14, %41) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %47 = "stablehlo.select"(%46, %41, %arg14) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %48 = "stablehlo.select"(%45, %40, %47) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %49 = "stablehlo.compare"(%44, %48) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "func.return"(%49) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<6x9xf32>) -> tensor<6x9xf32>, sym_name = "sort.2", sym_visibility = "private"}> ({
  ^bb0(%arg10: tensor<6x9xf32>):
    %27 = "stablehlo.sort"(%arg10) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg11: tensor<f32>, %arg12: tensor<f32>):
      %28 = "stablehlo.compare"(%arg11, %arg11) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %29 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %30 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %31 = "stablehlo.compare"(%arg11, %30) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %32 = "stablehlo.select"(%31, %30, %arg11) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %33 = "stablehlo.select"(%28, %29, %32) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %34 = "stablehlo.compare"(%arg12, %arg12) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %35 = "stablehlo.compare"(%arg12, %30) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %36 = "stablehlo.select"(%35, %30, %arg12) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %37 = "stablehlo.select"(%34, %29, %36) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %38 = "stablehlo.compare"(%33, %37) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%38) : (tensor<i1>) -> ()
    }) : (tensor<6x9xf32>) -> tensor<6x9xf32>
    "func.return"(%27) : (tensor<6x9xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>) -> tensor<i1>, sym_name = "region_1.3", sym_visibility = "private"}> ({
  ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>, %arg8: tensor<i32>, %arg9: tensor<i32>):
    %16 = "stablehlo.compare"(%arg6, %arg6) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %17 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %18 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %19 = "stablehlo.compare"(%arg6, %18) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %20 = "stablehlo.select"(%19, %18, %arg6) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %21 = "stablehlo.select"(%16, %17, %20) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %22 = "stablehlo.compare"(%arg7, %arg7) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %23 = "stablehlo.compare"(%arg7, %18) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %24 = "stablehlo.select"(%23, %18, %arg7) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %25 = "stablehlo.select"(%22, %17, %24) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %26 = "stablehlo.compare"(%21, %25) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "func.return"(%26) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<6x9xf32>) -> tensor<6x9xi32>, sym_name = "argsort.4", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<6x9xf32>):
    %2 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<6xi32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<6xi32>) -> tensor<6x9xi32>
    %4:2 = "stablehlo.sort"(%arg1, %3) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<i32>, %arg5: tensor<i32>):
      %5 = "stablehlo.compare"(%arg2, %arg2) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %7 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %8 = "stablehlo.compare"(%arg2, %7) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %9 = "stablehlo.select"(%8, %7, %arg2) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %10 = "stablehlo.select"(%5, %6, %9) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %11 = "stablehlo.compare"(%arg3, %arg3) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %12 = "stablehlo.compare"(%arg3, %7) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %13 = "stablehlo.select"(%12, %7, %arg3) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %14 = "stablehlo.select"(%11, %6, %13) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %15 = "stablehlo.compare"(%10, %14) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%15) : (tensor<i1>) -> ()
    }) : (tensor<6x9xf32>, tensor<6x9xi32>) -> (tensor<6x9xf32>, tensor<6x9xi32>)
    "func.return"(%4#1) : (tensor<6x9xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<6x9xf32>) -> (tensor<6x9xf32>, tensor<6x9xi32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<6x9xf32>):
    %0 = "func.call"(%arg0) <{callee = @sort.2}> : (tensor<6x9xf32>) -> tensor<6x9xf32>
    %1 = "func.call"(%arg0) <{callee = @argsort.4}> : (tensor<6x9xf32>) -> tensor<6x9xi32>
    "func.return"(%0, %1) : (tensor<6x9xf32>, tensor<6x9xi32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
