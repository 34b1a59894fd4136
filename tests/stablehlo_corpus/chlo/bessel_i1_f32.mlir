module @jit_i1 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<51xf32>) -> (tensor<51xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.abs %arg0 : tensor<51xf32>
    %1 = stablehlo.exponential %0 : tensor<51xf32>
    %2 = chlo.bessel_i1e %arg0 : tensor<51xf32> -> tensor<51xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<51xf32>
    return %3 : tensor<51xf32>
  }
}
