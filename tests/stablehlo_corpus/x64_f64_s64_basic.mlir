"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<f64>, tensor<f64>) -> tensor<f64>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg12: tensor<f64>, %arg13: tensor<f64>):
    %45 = "stablehlo.add"(%arg12, %arg13) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    "func.return"(%45) : (tensor<f64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<10xi1>, tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>, sym_name = "_where.2", sym_visibility = "private"}> ({
  ^bb0(%arg9: tensor<10xi1>, %arg10: tensor<10xi64>, %arg11: tensor<10xi64>):
    %44 = "stablehlo.select"(%arg9, %arg10, %arg11) : (tensor<10xi1>, tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    "func.return"(%44) : (tensor<10xi64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>, sym_name = "floor_divide.3", sym_visibility = "private"}> ({
  ^bb0(%arg7: tensor<10xi64>, %arg8: tensor<10xi64>):
    %31 = "stablehlo.sign"(%arg7) : (tensor<10xi64>) -> tensor<10xi64>
    %32 = "stablehlo.sign"(%arg8) : (tensor<10xi64>) -> tensor<10xi64>
    %33 = "stablehlo.compare"(%31, %32) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi1>
    %34 = "stablehlo.remainder"(%arg7, %arg8) : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    %35 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %36 = "stablehlo.broadcast_in_dim"(%35) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<10xi64>
    %37 = "stablehlo.compare"(%34, %36) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi1>
    %38 = "stablehlo.and"(%33, %37) : (tensor<10xi1>, tensor<10xi1>) -> tensor<10xi1>
    %39 = "stablehlo.divide"(%arg7, %arg8) : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    %40 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %41 = "stablehlo.broadcast_in_dim"(%40) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<10xi64>
    %42 = "stablehlo.subtract"(%39, %41) : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    %43 = "func.call"(%38, %42, %39) <{callee = @_where.2}> : (tensor<10xi1>, tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    "func.return"(%43) : (tensor<10xi64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>, sym_name = "remainder.4", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<10xi64>, %arg6: tensor<10xi64>):
    %17 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<10xi64>
    %19 = "stablehlo.compare"(%arg6, %18) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi1>
    %20 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<10xi64>
    %22 = "func.call"(%19, %21, %arg6) <{callee = @_where.2}> : (tensor<10xi1>, tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    %23 = "stablehlo.remainder"(%arg5, %22) : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    %24 = "stablehlo.compare"(%23, %18) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi1>
    %25 = "stablehlo.compare"(%22, %18) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi1>
    %26 = "stablehlo.compare"(%24, %25) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<10xi1>, tensor<10xi1>) -> tensor<10xi1>
    %27 = "stablehlo.compare"(%23, %18) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi1>
    %28 = "stablehlo.and"(%26, %27) : (tensor<10xi1>, tensor<10xi1>) -> tensor<10xi1>
    %29 = "stablehlo.add"(%23, %22) : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    %30 = "stablehlo.select"(%28, %29, %23) : (tensor<10xi1>, tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    "func.return"(%30) : (tensor<10xi64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5x6xf64>, tensor<10xi64>, tensor<10xi64>) -> (tensor<5x6xf64>, tensor<5x6xf64>, tensor<5x5xf64>, tensor<5xf64>, tensor<10xi64>, tensor<10xi64>, tensor<10xi64>, tensor<10xi64>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<5x6xf64>, %arg1: tensor<10xi64>, %arg2: tensor<10xi64>):
    %0 = "stablehlo.exponential"(%arg0) : (tensor<5x6xf64>) -> tensor<5x6xf64>
    %1 = "stablehlo.abs"(%arg0) : (tensor<5x6xf64>) -> tensor<5x6xf64>
    %2 = "stablehlo.log_plus_one"(%1) : (tensor<5x6xf64>) -> tensor<5x6xf64>
    %3 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}> {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f64[6,5]{0,1}"} : (tensor<5x6xf64>) -> tensor<6x5xf64>
    %4 = "stablehlo.dot"(%arg0, %3) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<5x6xf64>, tensor<6x5xf64>) -> tensor<5x5xf64>
    %5 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f64>}> : () -> tensor<f64>
    %6 = "stablehlo.reduce"(%arg0, %5) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f64>, %arg4: tensor<f64>):
      %16 = "stablehlo.add"(%arg3, %arg4) : (tensor<f64>, tensor<f64>) -> tensor<f64>
      "stablehlo.return"(%16) : (tensor<f64>) -> ()
    }) : (tensor<5x6xf64>, tensor<f64>) -> tensor<5xf64>
    %7 = "stablehlo.multiply"(%arg1, %arg2) : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    %8 = "stablehlo.constant"() <{value = dense<7> : tensor<i64>}> : () -> tensor<i64>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<10xi64>
    %10 = "stablehlo.add"(%7, %9) : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    %11 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<10xi64>
    %13 = "stablehlo.shift_right_arithmetic"(%arg1, %12) : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    %14 = "func.call"(%arg1, %arg2) <{callee = @floor_divide.3}> : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    %15 = "func.call"(%arg1, %arg2) <{callee = @remainder.4}> : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi64>
    "func.return"(%0, %2, %4, %6, %10, %13, %14, %15) : (tensor<5x6xf64>, tensor<5x6xf64>, tensor<5x5xf64>, tensor<5xf64>, tensor<10xi64>, tensor<10xi64>, tensor<10xi64>, tensor<10xi64>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
