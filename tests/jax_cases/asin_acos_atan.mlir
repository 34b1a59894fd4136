module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<20xf32>) -> (tensor<20xf32> {jax.result_info = "result[0]"}, tensor<20xf32> {jax.result_info = "result[1]"}, tensor<20xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.tanh %arg0 : tensor<20xf32>
    %1 = chlo.asin %0 : tensor<20xf32> -> tensor<20xf32>
    %2 = stablehlo.tanh %arg0 : tensor<20xf32>
    %3 = chlo.acos %2 : tensor<20xf32> -> tensor<20xf32>
    %4 = chlo.atan %arg0 : tensor<20xf32> -> tensor<20xf32>
    return %1, %3, %4 : tensor<20xf32>, tensor<20xf32>, tensor<20xf32>
  }
}
