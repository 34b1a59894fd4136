module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x10xf32>) -> (tensor<6x10xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<6x10xf32>) -> tensor<6x10xcomplex<f32>>
    %1 = call @fft_0(%0) : (tensor<6x10xcomplex<f32>>) -> tensor<6x10xcomplex<f32>>
    %2 = stablehlo.real %1 : (tensor<6x10xcomplex<f32>>) -> tensor<6x10xf32>
    return %2 : tensor<6x10xf32>
  }
  func.func private @fft(%arg0: tensor<6x10xf32>) -> tensor<6x10xcomplex<f32>> {
    %0 = stablehlo.convert %arg0 : (tensor<6x10xf32>) -> tensor<6x10xcomplex<f32>>
    %1 = stablehlo.fft %0, type = FFT, length = [6, 10] : (tensor<6x10xcomplex<f32>>) -> tensor<6x10xcomplex<f32>>
    return %1 : tensor<6x10xcomplex<f32>>
  }
  func.func private @fft_0(%arg0: tensor<6x10xcomplex<f32>>) -> tensor<6x10xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = IFFT, length = [6, 10] : (tensor<6x10xcomplex<f32>>) -> tensor<6x10xcomplex<f32>>
    return %0 : tensor<6x10xcomplex<f32>>
  }
}
