module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<51xf64>) -> (tensor<51xf64> {jax.result_info = "result[0]"}, tensor<51xf64> {jax.result_info = "result[1]"}) {
    %0 = chlo.bessel_i1e %arg0 : tensor<51xf64> -> tensor<51xf64>
    %1 = stablehlo.abs %arg0 : tensor<51xf64>
    %2 = stablehlo.exponential %1 : tensor<51xf64>
    %3 = chlo.bessel_i1e %arg0 : tensor<51xf64> -> tensor<51xf64>
    %4 = stablehlo.multiply %2, %3 : tensor<51xf64>
    return %0, %4 : tensor<51xf64>, tensor<51xf64>
  }
}
