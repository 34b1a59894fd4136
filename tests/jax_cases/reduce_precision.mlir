module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xf32>) -> (tensor<12xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+03> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<12xf32>
    %2 = stablehlo.reduce_precision %1, format = e5m2 : tensor<12xf32>
    return %2 : tensor<12xf32>
  }
}
