// Every chlo op xlac imports beyond the element-wise ones, as jaxlib 0.10.2's MLIR
// prints it (pretty form); tests/hlo/test_chlo_import.py runs it.
module {
  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<2x3xi1>, %arg3: tensor<3xi32>, %arg4: tensor<2xi64>, %arg5: tensor<6x4xf32>, %arg6: tensor<2x4x5xf32>, %arg7: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x2xf32>, tensor<2x2xi32>, tensor<3xi32>, tensor<6x5xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>, tensor<2x3xf32>, tensor<2x3xf32>) {
    %0 = chlo.broadcast_add %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %1 = chlo.broadcast_compare %arg0, %arg1 {compare_type = #chlo<comparison_type FLOAT>, comparison_direction = #chlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    %2 = chlo.broadcast_select %arg2, %arg0, %arg1 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %3 = "chlo.constant_like"(%arg0) <{value = 1.500000e+00 : f32}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %4 = chlo.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
    %5 = chlo.is_inf %arg0 : tensor<2x3xf32> -> tensor<2x3xi1>
    %6 = chlo.is_pos_inf %arg0 : tensor<2x3xf32> -> tensor<2x3xi1>
    %7 = chlo.is_neg_inf %arg0 : tensor<2x3xf32> -> tensor<2x3xi1>
    %values, %indices = chlo.top_k(%arg0, k = 2) {is_stable = true} : tensor<2x3xf32> -> (tensor<2x2xf32>, tensor<2x2xi32>)
    %8 = chlo.mulhi %arg3, %arg3 : tensor<3xi32>, tensor<3xi32> -> tensor<3xi32>
    %9 = "chlo.ragged_dot"(%arg5, %arg6, %arg4) <{precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>], ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>}> : (tensor<6x4xf32>, tensor<2x4x5xf32>, tensor<2xi64>) -> tensor<6x5xf32>
    %10:2 = chlo.scan(%arg0) inits (%arg1) dimension=0  attributes {is_associative = true, is_reverse = true} {
    ^bb0(%input: tensor<3xf32>, %carry: tensor<3xf32>):
      %18 = stablehlo.add %input, %carry : tensor<3xf32>
      stablehlo.return %18, %18 : tensor<3xf32>, tensor<3xf32>
    } : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
    %11 = chlo.broadcast_subtract %arg0, %arg7 {broadcast_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
    %12 = chlo.broadcast_complex %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xcomplex<f32>>
    %13 = chlo.conj %12 : tensor<2x3xcomplex<f32>> -> tensor<2x3xcomplex<f32>>
    %14 = "chlo.constant_like"(%12) <{value = #complex.number<:f32 1.000000e+00, 2.000000e+00> : complex<f32>}> : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>
    %15 = chlo._asin_acos_kernel %12 : tensor<2x3xcomplex<f32>> -> tensor<2x3xcomplex<f32>>
    %16 = chlo.broadcast_zeta %3, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %17 = chlo.erfc %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    return %0, %1, %2, %3, %4, %5, %6, %7, %values, %indices, %8, %9, %10#0, %10#1, %11, %13, %14, %15, %16, %17 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x2xf32>, tensor<2x2xi32>, tensor<3xi32>, tensor<6x5xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>, tensor<2x3xf32>, tensor<2x3xf32>
  }
}
