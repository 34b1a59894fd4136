module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1000xf32>) -> (tensor<f16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<1000xf32>) -> tensor<1000xf16>
    %1 = stablehlo.convert %0 : (tensor<1000xf16>) -> tensor<1000xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1000xf32>, tensor<f32>) -> tensor<f32>
    %3 = stablehlo.convert %2 : (tensor<f32>) -> tensor<f16>
    return %3 : tensor<f16>
  }
}
