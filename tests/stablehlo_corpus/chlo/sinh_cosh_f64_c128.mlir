module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<50xf64>, %arg1: tensor<256xcomplex<f64>>) -> (tensor<50xf64> {jax.result_info = "result[0]"}, tensor<50xf64> {jax.result_info = "result[1]"}, tensor<256xcomplex<f64>> {jax.result_info = "result[2]"}, tensor<256xcomplex<f64>> {jax.result_info = "result[3]"}) {
    %0 = chlo.sinh %arg0 : tensor<50xf64> -> tensor<50xf64>
    %1 = chlo.cosh %arg0 : tensor<50xf64> -> tensor<50xf64>
    %2 = chlo.sinh %arg1 : tensor<256xcomplex<f64>> -> tensor<256xcomplex<f64>>
    %3 = chlo.cosh %arg1 : tensor<256xcomplex<f64>> -> tensor<256xcomplex<f64>>
    return %0, %1, %2, %3 : tensor<50xf64>, tensor<50xf64>, tensor<256xcomplex<f64>>, tensor<256xcomplex<f64>>
  }
}
