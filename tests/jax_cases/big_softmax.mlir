module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<129x65xf32>) -> (tensor<129x65xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [0] : (tensor<129x65xf32>, tensor<f32>) -> tensor<65xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<65xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<65xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<65xf32>) -> tensor<1x65xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x65xf32>) -> tensor<129x65xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<129x65xf32>
    %6 = stablehlo.exponential %5 : tensor<129x65xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [0] : (tensor<129x65xf32>, tensor<f32>) -> tensor<65xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [1] : (tensor<65xf32>) -> tensor<1x65xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x65xf32>) -> tensor<129x65xf32>
    %10 = stablehlo.divide %6, %9 : tensor<129x65xf32>
    return %10 : tensor<129x65xf32>
  }
}
