module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x10xf32>) -> (tensor<3x10xf32> {jax.result_info = "result[0]"}, tensor<3x10xf32> {jax.result_info = "result[1]"}) {
    %0 = call @fft(%arg0) : (tensor<3x10xf32>) -> tensor<3x6xcomplex<f32>>
    %1 = call @fft_0(%0) : (tensor<3x6xcomplex<f32>>) -> tensor<3x10xf32>
    %2 = call @fft_1(%arg0) : (tensor<3x10xf32>) -> tensor<3x10xcomplex<f32>>
    %3 = stablehlo.real %2 : (tensor<3x10xcomplex<f32>>) -> tensor<3x10xf32>
    return %1, %3 : tensor<3x10xf32>, tensor<3x10xf32>
  }
  func.func private @fft(%arg0: tensor<3x10xf32>) -> tensor<3x6xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [10] : (tensor<3x10xf32>) -> tensor<3x6xcomplex<f32>>
    return %0 : tensor<3x6xcomplex<f32>>
  }
  func.func private @fft_0(%arg0: tensor<3x6xcomplex<f32>>) -> tensor<3x10xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [10] : (tensor<3x6xcomplex<f32>>) -> tensor<3x10xf32>
    return %0 : tensor<3x10xf32>
  }
  func.func private @fft_1(%arg0: tensor<3x10xf32>) -> tensor<3x10xcomplex<f32>> {
    %0 = stablehlo.convert %arg0 : (tensor<3x10xf32>) -> tensor<3x10xcomplex<f32>>
    %1 = stablehlo.fft %0, type = IFFT, length = [10] : (tensor<3x10xcomplex<f32>>) -> tensor<3x10xcomplex<f32>>
    return %1 : tensor<3x10xcomplex<f32>>
  }
}
