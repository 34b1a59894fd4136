module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<15xf32>) -> (tensor<15xf32> {jax.result_info = "result[0]"}, tensor<15xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<15xf32>
    %2 = stablehlo.exponential_minus_one %1 : tensor<15xf32>
    %3 = stablehlo.abs %arg0 : tensor<15xf32>
    %cst_0 = stablehlo.constant dense<9.99999974E-5> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %5 = stablehlo.multiply %3, %4 : tensor<15xf32>
    %6 = stablehlo.log_plus_one %5 : tensor<15xf32>
    return %2, %6 : tensor<15xf32>, tensor<15xf32>
  }
}
