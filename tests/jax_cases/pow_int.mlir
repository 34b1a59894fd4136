module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<15xf32>) -> (tensor<15xf32> {jax.result_info = "result[0]"}, tensor<15xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<15xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<15xf32>
    %2 = stablehlo.abs %arg0 : tensor<15xf32>
    %cst = stablehlo.constant dense<3.700000e-01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %4 = stablehlo.power %2, %3 : tensor<15xf32>
    return %1, %4 : tensor<15xf32>, tensor<15xf32>
  }
}
