module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<15xf32>) -> (tensor<15xf32> {jax.result_info = "result[0]"}, tensor<15xf32> {jax.result_info = "result[1]"}, tensor<15xf32> {jax.result_info = "result[2]"}, tensor<15xf32> {jax.result_info = "result[3]"}) {
    %cst = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %0 = call @clip(%arg0, %cst, %cst_0) : (tensor<15xf32>, tensor<f32>, tensor<f32>) -> tensor<15xf32>
    %cst_1 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<15xf32>
    %3 = call @round(%2) : (tensor<15xf32>) -> tensor<15xf32>
    %4 = stablehlo.floor %arg0 : tensor<15xf32>
    %5 = stablehlo.sign %arg0 : tensor<15xf32>
    return %0, %3, %4, %5 : tensor<15xf32>, tensor<15xf32>, tensor<15xf32>, tensor<15xf32>
  }
  func.func private @clip(%arg0: tensor<15xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<15xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<15xf32>
    %3 = stablehlo.convert %arg2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<15xf32>
    return %5 : tensor<15xf32>
  }
  func.func private @round(%arg0: tensor<15xf32>) -> tensor<15xf32> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<15xf32>
    return %0 : tensor<15xf32>
  }
}
