module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<21xf64>) -> (tensor<21xi64> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f64>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<21xf64>
    %1 = stablehlo.multiply %arg0, %0 : tensor<21xf64>
    %2 = call @round(%1) : (tensor<21xf64>) -> tensor<21xf64>
    %3 = stablehlo.negate %2 : tensor<21xf64>
    %4 = call @argsort(%3) : (tensor<21xf64>) -> tensor<21xi64>
    return %4 : tensor<21xi64>
  }
  func.func private @round(%arg0: tensor<21xf64>) -> tensor<21xf64> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<21xf64>
    return %0 : tensor<21xf64>
  }
  func.func private @argsort(%arg0: tensor<21xf64>) -> tensor<21xi64> {
    %0 = stablehlo.iota dim = 0 : tensor<21xi64>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f64>, %arg2: tensor<f64>, %arg3: tensor<i64>, %arg4: tensor<i64>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %2 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %3 = stablehlo.select %2, %cst_0, %arg1 : tensor<i1>, tensor<f64>
      %4 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
      %5 = stablehlo.select %4, %cst_1, %3 : tensor<i1>, tensor<f64>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %6 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %7 = stablehlo.select %6, %cst_3, %arg2 : tensor<i1>, tensor<f64>
      %8 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
      %9 = stablehlo.select %8, %cst_4, %7 : tensor<i1>, tensor<f64>
      %10 = stablehlo.compare LT, %5, %9, TOTALORDER : (tensor<f64>, tensor<f64>) -> tensor<i1>
      stablehlo.return %10 : tensor<i1>
    }) : (tensor<21xf64>, tensor<21xi64>) -> (tensor<21xf64>, tensor<21xi64>)
    return %1#1 : tensor<21xi64>
  }
}
