// Every chlo op xlac imports beyond the element-wise ones, as jaxlib 0.10.2's MLIR
// prints it (generic form); tests/hlo/test_chlo_import.py runs it.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xi1>, tensor<3xi32>, tensor<2xi64>, tensor<6x4xf32>, tensor<2x4x5xf32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x2xf32>, tensor<2x2xi32>, tensor<3xi32>, tensor<6x5xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>, tensor<2x3xf32>, tensor<2x3xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<2x3xi1>, %arg3: tensor<3xi32>, %arg4: tensor<2xi64>, %arg5: tensor<6x4xf32>, %arg6: tensor<2x4x5xf32>, %arg7: tensor<2xf32>):
    %0 = "chlo.broadcast_add"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %1 = "chlo.broadcast_compare"(%arg0, %arg1) <{compare_type = #chlo<comparison_type FLOAT>, comparison_direction = #chlo<comparison_direction GT>}> : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    %2 = "chlo.broadcast_select"(%arg2, %arg0, %arg1) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %3 = "chlo.constant_like"(%arg0) <{value = 1.500000e+00 : f32}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %4 = "chlo.constant"() <{value = dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
    %5 = "chlo.is_inf"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xi1>
    %6 = "chlo.is_pos_inf"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xi1>
    %7 = "chlo.is_neg_inf"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xi1>
    %8:2 = "chlo.top_k"(%arg0) <{k = 2 : i64}> {is_stable = true} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
    %9 = "chlo.mulhi"(%arg3, %arg3) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %10 = "chlo.ragged_dot"(%arg5, %arg6, %arg4) <{precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>], ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>}> : (tensor<6x4xf32>, tensor<2x4x5xf32>, tensor<2xi64>) -> tensor<6x5xf32>
    %11:2 = "chlo.scan"(%arg0, %arg1) <{dimension = 0 : i64, is_associative = true, is_reverse = true, operandSegmentSizes = array<i32: 1, 1>, resultSegmentSizes = array<i32: 1, 1>}> ({
    ^bb0(%arg8: tensor<3xf32>, %arg9: tensor<3xf32>):
      %19 = "stablehlo.add"(%arg8, %arg9) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%19, %19) : (tensor<3xf32>, tensor<3xf32>) -> ()
    }) : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
    %12 = "chlo.broadcast_subtract"(%arg0, %arg7) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
    %13 = "chlo.broadcast_complex"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xcomplex<f32>>
    %14 = "chlo.conj"(%13) : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>
    %15 = "chlo.constant_like"(%13) <{value = #complex.number<:f32 1.000000e+00, 2.000000e+00> : complex<f32>}> : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>
    %16 = "chlo._asin_acos_kernel"(%13) : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>
    %17 = "chlo.broadcast_zeta"(%3, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %18 = "chlo.erfc"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    "func.return"(%0, %1, %2, %3, %4, %5, %6, %7, %8#0, %8#1, %9, %10, %11#0, %11#1, %12, %14, %15, %16, %17, %18) : (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x2xf32>, tensor<2x2xi32>, tensor<3xi32>, tensor<6x5xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
  }) : () -> ()
}) : () -> ()
