module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<53xf32>) -> (tensor<53xf32> {jax.result_info = "result[0]"}, tensor<53xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<53xf32>
    %1 = chlo.polygamma %0, %arg0 : tensor<53xf32>, tensor<53xf32> -> tensor<53xf32>
    %cst_0 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<53xf32>
    %3 = chlo.polygamma %2, %arg0 : tensor<53xf32>, tensor<53xf32> -> tensor<53xf32>
    return %1, %3 : tensor<53xf32>, tensor<53xf32>
  }
}
