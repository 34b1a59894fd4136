module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x3xf32>, %arg1: tensor<5x3xf32>) -> (tensor<5x3xf32> {jax.result_info = "result"}) {
    %0 = call @cross(%arg0, %arg1) : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
    return %0 : tensor<5x3xf32>
  }
  func.func private @cross(%arg0: tensor<5x3xf32>, %arg1: tensor<5x3xf32>) -> tensor<5x3xf32> {
    %0 = stablehlo.slice %arg0 [0:5, 0:1] : (tensor<5x3xf32>) -> tensor<5x1xf32>
    %1 = stablehlo.reshape %0 : (tensor<5x1xf32>) -> tensor<5xf32>
    %2 = stablehlo.slice %arg0 [0:5, 1:2] : (tensor<5x3xf32>) -> tensor<5x1xf32>
    %3 = stablehlo.reshape %2 : (tensor<5x1xf32>) -> tensor<5xf32>
    %4 = stablehlo.slice %arg0 [0:5, 2:3] : (tensor<5x3xf32>) -> tensor<5x1xf32>
    %5 = stablehlo.reshape %4 : (tensor<5x1xf32>) -> tensor<5xf32>
    %6 = stablehlo.slice %arg1 [0:5, 0:1] : (tensor<5x3xf32>) -> tensor<5x1xf32>
    %7 = stablehlo.reshape %6 : (tensor<5x1xf32>) -> tensor<5xf32>
    %8 = stablehlo.slice %arg1 [0:5, 1:2] : (tensor<5x3xf32>) -> tensor<5x1xf32>
    %9 = stablehlo.reshape %8 : (tensor<5x1xf32>) -> tensor<5xf32>
    %10 = stablehlo.slice %arg1 [0:5, 2:3] : (tensor<5x3xf32>) -> tensor<5x1xf32>
    %11 = stablehlo.reshape %10 : (tensor<5x1xf32>) -> tensor<5xf32>
    %12 = stablehlo.multiply %3, %11 : tensor<5xf32>
    %13 = stablehlo.multiply %5, %9 : tensor<5xf32>
    %14 = stablehlo.subtract %12, %13 : tensor<5xf32>
    %15 = stablehlo.multiply %5, %7 : tensor<5xf32>
    %16 = stablehlo.multiply %1, %11 : tensor<5xf32>
    %17 = stablehlo.subtract %15, %16 : tensor<5xf32>
    %18 = stablehlo.multiply %1, %9 : tensor<5xf32>
    %19 = stablehlo.multiply %3, %7 : tensor<5xf32>
    %20 = stablehlo.subtract %18, %19 : tensor<5xf32>
    %21 = stablehlo.broadcast_in_dim %14, dims = [1] : (tensor<5xf32>) -> tensor<1x5xf32>
    %22 = stablehlo.broadcast_in_dim %17, dims = [1] : (tensor<5xf32>) -> tensor<1x5xf32>
    %23 = stablehlo.broadcast_in_dim %20, dims = [1] : (tensor<5xf32>) -> tensor<1x5xf32>
    %24 = stablehlo.concatenate %21, %22, %23, dim = 0 : (tensor<1x5xf32>, tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
    %25 = stablehlo.transpose %24, dims = [1, 0] : (tensor<3x5xf32>) -> tensor<5x3xf32>
    return %25 : tensor<5x3xf32>
  }
}
