module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x16xf32>, %arg1: tensor<4x16xf32>) -> (tensor<4x16xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg1 : (tensor<4x16xf32>) -> tensor<4x16xcomplex<f32>>
    %cst = stablehlo.constant dense<(0.000000e+00,1.000000e+00)> : tensor<complex<f32>>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<4x16xcomplex<f32>>
    %2 = stablehlo.multiply %1, %0 : tensor<4x16xcomplex<f32>>
    %3 = stablehlo.convert %arg0 : (tensor<4x16xf32>) -> tensor<4x16xcomplex<f32>>
    %4 = stablehlo.add %3, %2 : tensor<4x16xcomplex<f32>>
    %5 = call @fft(%4) : (tensor<4x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>>
    %6 = stablehlo.abs %5 : (tensor<4x16xcomplex<f32>>) -> tensor<4x16xf32>
    return %6 : tensor<4x16xf32>
  }
  func.func private @fft(%arg0: tensor<4x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = FFT, length = [16] : (tensor<4x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>>
    return %0 : tensor<4x16xcomplex<f32>>
  }
}
