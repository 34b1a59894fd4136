"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>), sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg19: tensor<f32>, %arg20: tensor<i32>, %arg21: tensor<f32>, %arg22: tensor<i32>):
    %43 = "stablehlo.compare"(%arg19, %arg21) <{comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %44 = "stablehlo.compare"(%arg19, %arg19) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %45 = "stablehlo.or"(%43, %44) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %46 = "stablehlo.select"(%45, %arg19, %arg21) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %47 = "stablehlo.compare"(%arg19, %arg21) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %48 = "stablehlo.compare"(%arg20, %arg22) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %49 = "stablehlo.and"(%47, %48) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %50 = "stablehlo.or"(%45, %49) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %51 = "stablehlo.select"(%50, %arg20, %arg22) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "func.return"(%46, %51) : (tensor<f32>, tensor<i32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<12x20xf32>) -> tensor<12xi32>, sym_name = "argmax.2", sym_visibility = "private"}> ({
  ^bb0(%arg14: tensor<12x20xf32>):
    %29 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<20xi32>
    %30 = "stablehlo.broadcast_in_dim"(%29) <{broadcast_dimensions = array<i64: 1>}> : (tensor<20xi32>) -> tensor<12x20xi32>
    %31 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %32 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %33:2 = "stablehlo.reduce"(%arg14, %30, %31, %32) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg15: tensor<f32>, %arg16: tensor<i32>, %arg17: tensor<f32>, %arg18: tensor<i32>):
      %34 = "stablehlo.compare"(%arg15, %arg17) <{comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %35 = "stablehlo.compare"(%arg15, %arg15) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %36 = "stablehlo.or"(%34, %35) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %37 = "stablehlo.select"(%36, %arg15, %arg17) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %38 = "stablehlo.compare"(%arg15, %arg17) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %39 = "stablehlo.compare"(%arg16, %arg18) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %40 = "stablehlo.and"(%38, %39) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %41 = "stablehlo.or"(%36, %40) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %42 = "stablehlo.select"(%41, %arg16, %arg18) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%37, %42) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<12x20xf32>, tensor<12x20xi32>, tensor<f32>, tensor<i32>) -> (tensor<12xf32>, tensor<12xi32>)
    "func.return"(%33#1) : (tensor<12xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>), sym_name = "region_1.3", sym_visibility = "private"}> ({
  ^bb0(%arg10: tensor<f32>, %arg11: tensor<i32>, %arg12: tensor<f32>, %arg13: tensor<i32>):
    %20 = "stablehlo.compare"(%arg10, %arg12) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %21 = "stablehlo.compare"(%arg10, %arg10) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %22 = "stablehlo.or"(%20, %21) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %23 = "stablehlo.select"(%22, %arg10, %arg12) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %24 = "stablehlo.compare"(%arg10, %arg12) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %25 = "stablehlo.compare"(%arg11, %arg13) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %26 = "stablehlo.and"(%24, %25) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %27 = "stablehlo.or"(%22, %26) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %28 = "stablehlo.select"(%27, %arg11, %arg13) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "func.return"(%23, %28) : (tensor<f32>, tensor<i32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<12x20xf32>) -> tensor<20xi32>, sym_name = "argmin.4", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<12x20xf32>):
    %6 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<12xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<12xi32>) -> tensor<12x20xi32>
    %8 = "stablehlo.constant"() <{value = dense<0x7F800000> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %10:2 = "stablehlo.reduce"(%arg5, %7, %8, %9) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<i32>, %arg8: tensor<f32>, %arg9: tensor<i32>):
      %11 = "stablehlo.compare"(%arg6, %arg8) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %12 = "stablehlo.compare"(%arg6, %arg6) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %13 = "stablehlo.or"(%11, %12) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %14 = "stablehlo.select"(%13, %arg6, %arg8) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %15 = "stablehlo.compare"(%arg6, %arg8) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %16 = "stablehlo.compare"(%arg7, %arg9) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %17 = "stablehlo.and"(%15, %16) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %18 = "stablehlo.or"(%13, %17) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %19 = "stablehlo.select"(%18, %arg7, %arg9) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%14, %19) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<12x20xf32>, tensor<12x20xi32>, tensor<f32>, tensor<i32>) -> (tensor<20xf32>, tensor<20xi32>)
    "func.return"(%10#1) : (tensor<20xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_2.5", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %5 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%5) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<12x20xf32>) -> (tensor<12xi32>, tensor<20xi32>, tensor<12xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<12x20xf32>):
    %0 = "func.call"(%arg0) <{callee = @argmax.2}> : (tensor<12x20xf32>) -> tensor<12xi32>
    %1 = "func.call"(%arg0) <{callee = @argmin.4}> : (tensor<12x20xf32>) -> tensor<20xi32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%arg0, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %4 = "stablehlo.maximum"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%4) : (tensor<f32>) -> ()
    }) : (tensor<12x20xf32>, tensor<f32>) -> tensor<12xf32>
    "func.return"(%0, %1, %3) : (tensor<12xi32>, tensor<20xi32>, tensor<12xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
