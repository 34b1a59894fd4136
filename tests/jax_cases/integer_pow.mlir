module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>) -> (tensor<10xf32> {jax.result_info = "result[0]"}, tensor<10xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<10xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<10xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<10xf32>
    %3 = stablehlo.multiply %arg0, %arg0 : tensor<10xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %5 = stablehlo.divide %4, %3 : tensor<10xf32>
    return %2, %5 : tensor<10xf32>, tensor<10xf32>
  }
}
