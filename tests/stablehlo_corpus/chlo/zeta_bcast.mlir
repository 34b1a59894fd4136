module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<53xf32>) -> (tensor<53xf32> {jax.result_info = "result[0]"}, tensor<53xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.convert %cst : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<53xf32>
    %2 = chlo.zeta %1, %arg0 : tensor<53xf32>, tensor<53xf32> -> tensor<53xf32>
    %cst_0 = stablehlo.constant dense<4.500000e+00> : tensor<f32>
    %3 = stablehlo.convert %cst_0 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<53xf32>
    %5 = chlo.zeta %4, %arg0 : tensor<53xf32>, tensor<53xf32> -> tensor<53xf32>
    return %2, %5 : tensor<53xf32>, tensor<53xf32>
  }
}
