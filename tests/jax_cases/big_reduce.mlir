module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x257xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<257xf32> {jax.result_info = "result[1]"}, tensor<64xf32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x257xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.maximum across dimensions = [0] : (tensor<64x257xf32>, tensor<f32>) -> tensor<257xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%arg0 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<64x257xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_2 = stablehlo.constant dense<2.570000e+02> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %4 = stablehlo.divide %2, %3 : tensor<64xf32>
    return %0, %1, %4 : tensor<f32>, tensor<257xf32>, tensor<64xf32>
  }
}
