module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xf32>) -> (tensor<12xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<12xf32>) -> tensor<12xf16>
    %1 = stablehlo.exponential %0 : tensor<12xf16>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f16>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f16>) -> tensor<12xf16>
    %3 = stablehlo.add %1, %2 : tensor<12xf16>
    %4 = stablehlo.convert %3 : (tensor<12xf16>) -> tensor<12xf32>
    return %4 : tensor<12xf32>
  }
}
