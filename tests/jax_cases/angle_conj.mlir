module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> (tensor<8xf32> {jax.result_info = "result[0]"}, tensor<8xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convert %arg1 : (tensor<8xf32>) -> tensor<8xcomplex<f32>>
    %cst = stablehlo.constant dense<(0.000000e+00,1.000000e+00)> : tensor<complex<f32>>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<8xcomplex<f32>>
    %2 = stablehlo.multiply %1, %0 : tensor<8xcomplex<f32>>
    %3 = stablehlo.convert %arg0 : (tensor<8xf32>) -> tensor<8xcomplex<f32>>
    %4 = stablehlo.add %3, %2 : tensor<8xcomplex<f32>>
    %5 = call @angle(%4) : (tensor<8xcomplex<f32>>) -> tensor<8xf32>
    %6 = stablehlo.convert %arg1 : (tensor<8xf32>) -> tensor<8xcomplex<f32>>
    %cst_0 = stablehlo.constant dense<(0.000000e+00,1.000000e+00)> : tensor<complex<f32>>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f32>>) -> tensor<8xcomplex<f32>>
    %8 = stablehlo.multiply %7, %6 : tensor<8xcomplex<f32>>
    %9 = stablehlo.convert %arg0 : (tensor<8xf32>) -> tensor<8xcomplex<f32>>
    %10 = stablehlo.add %9, %8 : tensor<8xcomplex<f32>>
    %11 = stablehlo.real %10 : (tensor<8xcomplex<f32>>) -> tensor<8xf32>
    %12 = stablehlo.imag %10 : (tensor<8xcomplex<f32>>) -> tensor<8xf32>
    %13 = stablehlo.negate %12 : tensor<8xf32>
    %14 = stablehlo.complex %11, %13 : tensor<8xcomplex<f32>>
    %15 = stablehlo.imag %14 : (tensor<8xcomplex<f32>>) -> tensor<8xf32>
    return %5, %15 : tensor<8xf32>, tensor<8xf32>
  }
  func.func private @angle(%arg0: tensor<8xcomplex<f32>>) -> tensor<8xf32> {
    %0 = stablehlo.real %arg0 : (tensor<8xcomplex<f32>>) -> tensor<8xf32>
    %1 = stablehlo.imag %arg0 : (tensor<8xcomplex<f32>>) -> tensor<8xf32>
    %2 = stablehlo.atan2 %1, %0 : tensor<8xf32>
    return %2 : tensor<8xf32>
  }
}
