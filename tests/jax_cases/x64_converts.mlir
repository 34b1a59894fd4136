module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf64>) -> (tensor<10xi64> {jax.result_info = "result[0]"}, tensor<10xf32> {jax.result_info = "result[1]"}, tensor<10xi64> {jax.result_info = "result[2]"}, tensor<10xui32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<10xf64>) -> tensor<10xi64>
    %1 = stablehlo.convert %arg0 : (tensor<10xf64>) -> tensor<10xf32>
    %cst = stablehlo.constant dense<1.000000e+10> : tensor<f64>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<10xf64>
    %3 = stablehlo.multiply %arg0, %2 : tensor<10xf64>
    %4 = stablehlo.convert %3 : (tensor<10xf64>) -> tensor<10xi64>
    %5 = stablehlo.convert %arg0 : (tensor<10xf64>) -> tensor<10xui32>
    return %0, %1, %4, %5 : tensor<10xi64>, tensor<10xf32>, tensor<10xi64>, tensor<10xui32>
  }
}
