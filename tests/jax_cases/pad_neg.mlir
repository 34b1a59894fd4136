module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x6xf32>) -> (tensor<9x7xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [1, -2], high = [-1, 3], interior = [1, 0] : (tensor<5x6xf32>, tensor<f32>) -> tensor<9x7xf32>
    return %0 : tensor<9x7xf32>
  }
}
