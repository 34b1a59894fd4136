module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xi64>) -> (tensor<10xf64> {jax.result_info = "result[0]"}, tensor<10xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<10xi64>) -> tensor<10xf64>
    %1 = stablehlo.convert %arg0 : (tensor<10xi64>) -> tensor<10xf32>
    return %0, %1 : tensor<10xf64>, tensor<10xf32>
  }
}
