module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<30xf32>) -> (tensor<30xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.abs %arg0 : tensor<30xf32>
    %cst = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<30xf32>
    %2 = stablehlo.add %0, %1 : tensor<30xf32>
    %3 = chlo.lgamma %2 : tensor<30xf32> -> tensor<30xf32>
    return %3 : tensor<30xf32>
  }
}
