module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<53xf64>) -> (tensor<53xf64> {jax.result_info = "result[0]"}, tensor<53xf64> {jax.result_info = "result[1]"}, tensor<53xf64> {jax.result_info = "result[2]"}, tensor<53xf64> {jax.result_info = "result[3]"}, tensor<53xf64> {jax.result_info = "result[4]"}, tensor<53xf64> {jax.result_info = "result[5]"}) {
    %0 = chlo.asin %arg0 : tensor<53xf64> -> tensor<53xf64>
    %1 = chlo.acos %arg0 : tensor<53xf64> -> tensor<53xf64>
    %2 = chlo.atan %arg0 : tensor<53xf64> -> tensor<53xf64>
    %3 = chlo.asinh %arg0 : tensor<53xf64> -> tensor<53xf64>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f64>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<53xf64>
    %5 = stablehlo.add %arg0, %4 : tensor<53xf64>
    %6 = call @arccosh(%5) : (tensor<53xf64>) -> tensor<53xf64>
    %7 = chlo.atanh %arg0 : tensor<53xf64> -> tensor<53xf64>
    return %0, %1, %2, %3, %6, %7 : tensor<53xf64>, tensor<53xf64>, tensor<53xf64>, tensor<53xf64>, tensor<53xf64>, tensor<53xf64>
  }
  func.func private @arccosh(%arg0: tensor<53xf64>) -> tensor<53xf64> {
    %0 = chlo.acosh %arg0 : tensor<53xf64> -> tensor<53xf64>
    return %0 : tensor<53xf64>
  }
}
