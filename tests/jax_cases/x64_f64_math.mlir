module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<20xf64>) -> (tensor<20xf64> {jax.result_info = "result[0]"}, tensor<20xf64> {jax.result_info = "result[1]"}, tensor<20xf64> {jax.result_info = "result[2]"}, tensor<20xf64> {jax.result_info = "result[3]"}, tensor<20xf64> {jax.result_info = "result[4]"}, tensor<20xf64> {jax.result_info = "result[5]"}) {
    %0 = stablehlo.exponential %arg0 : tensor<20xf64>
    %1 = stablehlo.abs %arg0 : tensor<20xf64>
    %2 = stablehlo.log_plus_one %1 : tensor<20xf64>
    %3 = stablehlo.tanh %arg0 : tensor<20xf64>
    %cst = stablehlo.constant dense<1.000000e+02> : tensor<f64>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<20xf64>
    %5 = stablehlo.multiply %arg0, %4 : tensor<20xf64>
    %6 = stablehlo.sine %5 : tensor<20xf64>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f64>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<20xf64>
    %8 = stablehlo.subtract %7, %arg0 : tensor<20xf64>
    %9 = stablehlo.atan2 %arg0, %8 : tensor<20xf64>
    %10 = chlo.erf %arg0 : tensor<20xf64> -> tensor<20xf64>
    return %0, %2, %3, %6, %9, %10 : tensor<20xf64>, tensor<20xf64>, tensor<20xf64>, tensor<20xf64>, tensor<20xf64>, tensor<20xf64>
  }
}
