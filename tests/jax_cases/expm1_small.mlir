module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>) -> (tensor<10xf32> {jax.result_info = "result[0]"}, tensor<10xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<10xf32>
    %2 = stablehlo.exponential_minus_one %1 : tensor<10xf32>
    %cst_0 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %4 = stablehlo.multiply %arg0, %3 : tensor<10xf32>
    %5 = stablehlo.log_plus_one %4 : tensor<10xf32>
    return %2, %5 : tensor<10xf32>, tensor<10xf32>
  }
}
