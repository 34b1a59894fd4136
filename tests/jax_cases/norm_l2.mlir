module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x6xf32>) -> (tensor<5xf32> {jax.result_info = "result"}) {
    %0 = call @norm(%arg0) : (tensor<5x6xf32>) -> tensor<5xf32>
    return %0 : tensor<5xf32>
  }
  func.func private @norm(%arg0: tensor<5x6xf32>) -> tensor<5xf32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<5x6xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<5x6xf32>, tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.sqrt %1 : tensor<5xf32>
    return %2 : tensor<5xf32>
  }
}
