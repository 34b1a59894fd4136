module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<7x7xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<7x7xui32>
    %1 = stablehlo.iota dim = 1 : tensor<7x7xui32>
    %2 = stablehlo.compare EQ, %0, %1, UNSIGNED : (tensor<7x7xui32>, tensor<7x7xui32>) -> tensor<7x7xi1>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<7x7xf32>
    %4 = stablehlo.select %2, %arg0, %3 : tensor<7x7xi1>, tensor<7x7xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<7x7xf32>, tensor<f32>) -> tensor<f32>
    return %5 : tensor<f32>
  }
}
