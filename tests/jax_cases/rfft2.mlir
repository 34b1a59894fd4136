module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x12xf32>) -> (tensor<8x7xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<8x12xf32>) -> tensor<8x7xcomplex<f32>>
    %1 = stablehlo.abs %0 : (tensor<8x7xcomplex<f32>>) -> tensor<8x7xf32>
    return %1 : tensor<8x7xf32>
  }
  func.func private @fft(%arg0: tensor<8x12xf32>) -> tensor<8x7xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [8, 12] : (tensor<8x12xf32>) -> tensor<8x7xcomplex<f32>>
    return %0 : tensor<8x7xcomplex<f32>>
  }
}
