module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf64>) -> (tensor<9xf64> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<16xf64>) -> tensor<9xcomplex<f64>>
    %1 = stablehlo.abs %0 : (tensor<9xcomplex<f64>>) -> tensor<9xf64>
    return %1 : tensor<9xf64>
  }
  func.func private @fft(%arg0: tensor<16xf64>) -> tensor<9xcomplex<f64>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [16] : (tensor<16xf64>) -> tensor<9xcomplex<f64>>
    return %0 : tensor<9xcomplex<f64>>
  }
}
