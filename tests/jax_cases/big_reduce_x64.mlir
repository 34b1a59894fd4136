module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x257xf64>) -> (tensor<f64> {jax.result_info = "result[0]"}, tensor<257xf64> {jax.result_info = "result[1]"}, tensor<64xf64> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x257xf64>, tensor<f64>) -> tensor<f64>
    %cst_0 = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %1 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.maximum across dimensions = [0] : (tensor<64x257xf64>, tensor<f64>) -> tensor<257xf64>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %2 = stablehlo.reduce(%arg0 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<64x257xf64>, tensor<f64>) -> tensor<64xf64>
    %cst_2 = stablehlo.constant dense<2.570000e+02> : tensor<f64>
    %3 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f64>) -> tensor<64xf64>
    %4 = stablehlo.divide %2, %3 : tensor<64xf64>
    return %0, %1, %4 : tensor<f64>, tensor<257xf64>, tensor<64xf64>
  }
}
