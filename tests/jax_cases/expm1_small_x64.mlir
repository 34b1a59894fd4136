module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf64>) -> (tensor<10xf64> {jax.result_info = "result[0]"}, tensor<10xf64> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<1.000000e-08> : tensor<f64>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<10xf64>
    %1 = stablehlo.multiply %arg0, %0 : tensor<10xf64>
    %2 = stablehlo.exponential_minus_one %1 : tensor<10xf64>
    %cst_0 = stablehlo.constant dense<1.000000e-08> : tensor<f64>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<10xf64>
    %4 = stablehlo.multiply %arg0, %3 : tensor<10xf64>
    %5 = stablehlo.log_plus_one %4 : tensor<10xf64>
    return %2, %5 : tensor<10xf64>, tensor<10xf64>
  }
}
