module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x300xf32>) -> (tensor<4xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<4x300xf32>) -> tensor<4x300xbf16>
    %1 = stablehlo.convert %0 : (tensor<4x300xbf16>) -> tensor<4x300xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x300xf32>, tensor<f32>) -> tensor<4xf32>
    %3 = stablehlo.convert %2 : (tensor<4xf32>) -> tensor<4xbf16>
    return %3 : tensor<4xbf16>
  }
}
