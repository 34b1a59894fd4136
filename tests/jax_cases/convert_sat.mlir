module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>) -> (tensor<10xi32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+10> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<10xf32>
    %2 = stablehlo.convert %1 : (tensor<10xf32>) -> tensor<10xi32>
    return %2 : tensor<10xi32>
  }
}
