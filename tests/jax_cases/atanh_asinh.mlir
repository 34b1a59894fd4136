module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<20xf32>) -> (tensor<20xf32> {jax.result_info = "result[0]"}, tensor<20xf32> {jax.result_info = "result[1]"}, tensor<20xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.tanh %arg0 : tensor<20xf32>
    %cst = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<20xf32>
    %3 = chlo.atanh %2 : tensor<20xf32> -> tensor<20xf32>
    %4 = chlo.asinh %arg0 : tensor<20xf32> -> tensor<20xf32>
    %5 = stablehlo.abs %arg0 : tensor<20xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %7 = stablehlo.add %5, %6 : tensor<20xf32>
    %8 = call @arccosh(%7) : (tensor<20xf32>) -> tensor<20xf32>
    return %3, %4, %8 : tensor<20xf32>, tensor<20xf32>, tensor<20xf32>
  }
  func.func private @arccosh(%arg0: tensor<20xf32>) -> tensor<20xf32> {
    %0 = chlo.acosh %arg0 : tensor<20xf32> -> tensor<20xf32>
    return %0 : tensor<20xf32>
  }
}
