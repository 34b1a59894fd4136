module @jit_polygamma attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<18xi32>, %arg1: tensor<18xf32>) -> (tensor<18xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<18xi32>) -> tensor<18xf32>
    %1 = chlo.polygamma %0, %arg1 : tensor<18xf32>, tensor<18xf32> -> tensor<18xf32>
    return %1 : tensor<18xf32>
  }
}
