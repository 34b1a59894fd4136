module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<i32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<4xf32>
    cond {
      %c_1 = stablehlo.constant dense<10> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.reduce(%iterArg_0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      %cst_2 = stablehlo.constant dense<5.000000e+01> : tensor<f32>
      %3 = stablehlo.compare LT, %2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %c_3 = stablehlo.constant dense<false> : tensor<i1>
      %4 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i1>) -> tensor<i1>
      %5 = stablehlo.compare NE, %1, %4, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %6 = stablehlo.convert %5 : tensor<i1>
      %7 = stablehlo.and %6, %3 : tensor<i1>
      stablehlo.return %7 : tensor<i1>
    } do {
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      %cst = stablehlo.constant dense<1.500000e+00> : tensor<f32>
      %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %3 = stablehlo.multiply %iterArg_0, %2 : tensor<4xf32>
      %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %4 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %5 = stablehlo.add %3, %4 : tensor<4xf32>
      stablehlo.return %1, %5 : tensor<i32>, tensor<4xf32>
    }
    return %0#0, %0#1 : tensor<i32>, tensor<4xf32>
  }
}
