module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<7xf32>) -> (tensor<7xf32> {jax.result_info = "result[0]"}, tensor<7xf32> {jax.result_info = "result[1]"}, tensor<7xf32> {jax.result_info = "result[2]"}, tensor<7xf32> {jax.result_info = "result[3]"}, tensor<7xf32> {jax.result_info = "result[4]"}, tensor<7xf32> {jax.result_info = "result[5]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<7xf32>
    %2 = stablehlo.subtract %arg0, %arg0 : tensor<7xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %4 = stablehlo.divide %3, %arg0 : tensor<7xf32>
    %5 = stablehlo.log %arg0 : tensor<7xf32>
    %6 = stablehlo.sqrt %arg0 : tensor<7xf32>
    %7 = stablehlo.exponential %arg0 : tensor<7xf32>
    return %1, %2, %4, %5, %6, %7 : tensor<7xf32>, tensor<7xf32>, tensor<7xf32>, tensor<7xf32>, tensor<7xf32>, tensor<7xf32>
  }
}
