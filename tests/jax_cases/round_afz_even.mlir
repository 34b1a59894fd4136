module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<20xf32>) -> (tensor<20xf32> {jax.result_info = "result[0]"}, tensor<20xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<2.500000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<20xf32>
    %2 = call @round(%1) : (tensor<20xf32>) -> tensor<20xf32>
    %cst_0 = stablehlo.constant dense<2.500000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %4 = stablehlo.multiply %arg0, %3 : tensor<20xf32>
    %5 = stablehlo.round_nearest_afz %4 : tensor<20xf32>
    return %2, %5 : tensor<20xf32>, tensor<20xf32>
  }
  func.func private @round(%arg0: tensor<20xf32>) -> tensor<20xf32> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<20xf32>
    return %0 : tensor<20xf32>
  }
}
