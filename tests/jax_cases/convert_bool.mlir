module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>) -> (tensor<10xi1> {jax.result_info = "result[0]"}, tensor<10xf32> {jax.result_info = "result[1]"}, tensor<10xi32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %1 = stablehlo.compare NE, %arg0, %0, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %2 = stablehlo.convert %1 : tensor<10xi1>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %4 = stablehlo.compare GT, %arg0, %3, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %5 = stablehlo.convert %4 : (tensor<10xi1>) -> tensor<10xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %7 = stablehlo.compare GT, %arg0, %6, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %8 = stablehlo.convert %7 : (tensor<10xi1>) -> tensor<10xi32>
    return %2, %5, %8 : tensor<10xi1>, tensor<10xf32>, tensor<10xi32>
  }
}
