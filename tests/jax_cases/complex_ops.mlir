module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>, %arg1: tensor<10xf32>) -> (tensor<10xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg1 : (tensor<10xf32>) -> tensor<10xcomplex<f32>>
    %cst = stablehlo.constant dense<(0.000000e+00,1.000000e+00)> : tensor<complex<f32>>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<10xcomplex<f32>>
    %2 = stablehlo.multiply %1, %0 : tensor<10xcomplex<f32>>
    %3 = stablehlo.convert %arg0 : (tensor<10xf32>) -> tensor<10xcomplex<f32>>
    %4 = stablehlo.add %3, %2 : tensor<10xcomplex<f32>>
    %5 = stablehlo.exponential %4 : tensor<10xcomplex<f32>>
    %6 = stablehlo.convert %arg1 : (tensor<10xf32>) -> tensor<10xcomplex<f32>>
    %cst_0 = stablehlo.constant dense<(0.000000e+00,1.000000e+00)> : tensor<complex<f32>>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f32>>) -> tensor<10xcomplex<f32>>
    %8 = stablehlo.multiply %7, %6 : tensor<10xcomplex<f32>>
    %9 = stablehlo.convert %arg0 : (tensor<10xf32>) -> tensor<10xcomplex<f32>>
    %10 = stablehlo.subtract %9, %8 : tensor<10xcomplex<f32>>
    %11 = stablehlo.multiply %5, %10 : tensor<10xcomplex<f32>>
    %12 = stablehlo.abs %11 : (tensor<10xcomplex<f32>>) -> tensor<10xf32>
    return %12 : tensor<10xf32>
  }
}
