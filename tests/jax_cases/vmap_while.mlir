module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.while(%iterArg = %arg0) : tensor<5xf32>
    cond {
      %cst = stablehlo.constant dense<1.000000e+01> : tensor<f32>
      %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %2 = stablehlo.compare LT, %iterArg, %1, FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
      %c = stablehlo.constant dense<false> : tensor<i1>
      %3 = stablehlo.reduce(%2 init: %c) applies stablehlo.or across dimensions = [0] : (tensor<5xi1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %cst = stablehlo.constant dense<1.700000e+00> : tensor<f32>
      %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %2 = stablehlo.multiply %iterArg, %1 : tensor<5xf32>
      %cst_0 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
      %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %4 = stablehlo.add %2, %3 : tensor<5xf32>
      %cst_1 = stablehlo.constant dense<1.000000e+01> : tensor<f32>
      %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %6 = stablehlo.compare LT, %iterArg, %5, FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
      %7 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<5xi1>) -> tensor<5xi1>
      %8 = stablehlo.select %7, %4, %iterArg : tensor<5xi1>, tensor<5xf32>
      stablehlo.return %8 : tensor<5xf32>
    }
    return %0 : tensor<5xf32>
  }
}
