module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6x8xf32>) -> (tensor<4x6x8xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<4x6x8xf32>) -> tensor<4x6x8xcomplex<f32>>
    %1 = stablehlo.abs %0 : (tensor<4x6x8xcomplex<f32>>) -> tensor<4x6x8xf32>
    return %1 : tensor<4x6x8xf32>
  }
  func.func private @fft(%arg0: tensor<4x6x8xf32>) -> tensor<4x6x8xcomplex<f32>> {
    %0 = stablehlo.convert %arg0 : (tensor<4x6x8xf32>) -> tensor<4x6x8xcomplex<f32>>
    %1 = stablehlo.fft %0, type = FFT, length = [4, 6, 8] : (tensor<4x6x8xcomplex<f32>>) -> tensor<4x6x8xcomplex<f32>>
    return %1 : tensor<4x6x8xcomplex<f32>>
  }
}
