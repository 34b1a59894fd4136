"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<i32>, tensor<i32>) -> tensor<i32>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg12: tensor<i32>, %arg13: tensor<i32>):
    %21 = "stablehlo.add"(%arg12, %arg13) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "func.return"(%21) : (tensor<i32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i32>) -> tensor<i32>, sym_name = "region_1.2", sym_visibility = "private"}> ({
  ^bb0(%arg10: tensor<i32>, %arg11: tensor<i32>):
    %20 = "stablehlo.add"(%arg10, %arg11) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "func.return"(%20) : (tensor<i32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5x6xi1>, tensor<5x6xi32>, tensor<5x6xi32>) -> tensor<5x6xi32>, sym_name = "_where.3", sym_visibility = "private"}> ({
  ^bb0(%arg7: tensor<5x6xi1>, %arg8: tensor<5x6xi32>, %arg9: tensor<5x6xi32>):
    %19 = "stablehlo.select"(%arg7, %arg8, %arg9) : (tensor<5x6xi1>, tensor<5x6xi32>, tensor<5x6xi32>) -> tensor<5x6xi32>
    "func.return"(%19) : (tensor<5x6xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5x6xi1>, tensor<5x6xi1>, tensor<5x6xi32>) -> (tensor<5x6xi1>, tensor<5x6xi1>, tensor<5x6xi1>, tensor<5x6xi1>, tensor<i32>, tensor<5xi32>, tensor<5x6xi32>, tensor<5x6xi32>, tensor<5x6xui16>, tensor<5x6xui16>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<5x6xi1>, %arg1: tensor<5x6xi1>, %arg2: tensor<5x6xi32>):
    %0 = "stablehlo.and"(%arg0, %arg1) : (tensor<5x6xi1>, tensor<5x6xi1>) -> tensor<5x6xi1>
    %1 = "stablehlo.or"(%arg0, %arg1) : (tensor<5x6xi1>, tensor<5x6xi1>) -> tensor<5x6xi1>
    %2 = "stablehlo.xor"(%arg0, %arg1) : (tensor<5x6xi1>, tensor<5x6xi1>) -> tensor<5x6xi1>
    %3 = "stablehlo.not"(%arg0) : (tensor<5x6xi1>) -> tensor<5x6xi1>
    %4 = "stablehlo.convert"(%arg0) : (tensor<5x6xi1>) -> tensor<5x6xi32>
    %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %6 = "stablehlo.reduce"(%4, %5) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg5: tensor<i32>, %arg6: tensor<i32>):
      %18 = "stablehlo.add"(%arg5, %arg6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%18) : (tensor<i32>) -> ()
    }) : (tensor<5x6xi32>, tensor<i32>) -> tensor<i32>
    %7 = "stablehlo.not"(%arg1) : (tensor<5x6xi1>) -> tensor<5x6xi1>
    %8 = "stablehlo.and"(%arg0, %7) : (tensor<5x6xi1>, tensor<5x6xi1>) -> tensor<5x6xi1>
    %9 = "stablehlo.convert"(%8) : (tensor<5x6xi1>) -> tensor<5x6xi32>
    %10 = "stablehlo.reduce"(%9, %5) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>):
      %17 = "stablehlo.add"(%arg3, %arg4) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%17) : (tensor<i32>) -> ()
    }) : (tensor<5x6xi32>, tensor<i32>) -> tensor<5xi32>
    %11 = "stablehlo.negate"(%arg2) : (tensor<5x6xi32>) -> tensor<5x6xi32>
    %12 = "func.call"(%arg0, %arg2, %11) <{callee = @_where.3}> : (tensor<5x6xi1>, tensor<5x6xi32>, tensor<5x6xi32>) -> tensor<5x6xi32>
    %13 = "stablehlo.not"(%arg2) : (tensor<5x6xi32>) -> tensor<5x6xi32>
    %14 = "stablehlo.convert"(%arg2) : (tensor<5x6xi32>) -> tensor<5x6xui16>
    %15 = "stablehlo.popcnt"(%14) : (tensor<5x6xui16>) -> tensor<5x6xui16>
    %16 = "stablehlo.count_leading_zeros"(%14) : (tensor<5x6xui16>) -> tensor<5x6xui16>
    "func.return"(%0, %1, %2, %3, %6, %10, %12, %13, %15, %16) : (tensor<5x6xi1>, tensor<5x6xi1>, tensor<5x6xi1>, tensor<5x6xi1>, tensor<i32>, tensor<5xi32>, tensor<5x6xi32>, tensor<5x6xi32>, tensor<5x6xui16>, tensor<5x6xui16>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
