module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xi64>, %arg1: tensor<12xf64>) -> (tensor<12xf64> {jax.result_info = "result[0]"}, tensor<12xf64> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<12xi64>) -> tensor<12xf64>
    %1 = chlo.polygamma %0, %arg1 : tensor<12xf64>, tensor<12xf64> -> tensor<12xf64>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f64>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<12xf64>
    %3 = stablehlo.add %arg1, %2 : tensor<12xf64>
    %4 = stablehlo.multiply %arg1, %arg1 : tensor<12xf64>
    %cst_0 = stablehlo.constant dense<2.500000e-01> : tensor<f64>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<12xf64>
    %6 = stablehlo.add %4, %5 : tensor<12xf64>
    %7 = chlo.zeta %3, %6 : tensor<12xf64>, tensor<12xf64> -> tensor<12xf64>
    return %1, %7 : tensor<12xf64>, tensor<12xf64>
  }
}
