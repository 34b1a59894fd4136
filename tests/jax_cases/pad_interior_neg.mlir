module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>) -> (tensor<7x8xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<4x5xf32>, tensor<i32>) -> tensor<7x8xf32>
    return %0 : tensor<7x8xf32>
  }
  func.func private @_pad(%arg0: tensor<4x5xf32>, %arg1: tensor<i32>) -> tensor<7x8xf32> {
    %0 = stablehlo.slice %arg0 [0:1, 0:5] : (tensor<4x5xf32>) -> tensor<1x5xf32>
    %1 = stablehlo.slice %arg0 [1:2, 0:5] : (tensor<4x5xf32>) -> tensor<1x5xf32>
    %2 = call @_flip(%1) : (tensor<1x5xf32>) -> tensor<1x5xf32>
    %3 = stablehlo.concatenate %2, %arg0, dim = 0 : (tensor<1x5xf32>, tensor<4x5xf32>) -> tensor<5x5xf32>
    %4 = stablehlo.slice %3 [4:5, 0:5] : (tensor<5x5xf32>) -> tensor<1x5xf32>
    %5 = stablehlo.slice %3 [2:4, 0:5] : (tensor<5x5xf32>) -> tensor<2x5xf32>
    %6 = call @_flip_0(%5) : (tensor<2x5xf32>) -> tensor<2x5xf32>
    %7 = stablehlo.concatenate %3, %6, dim = 0 : (tensor<5x5xf32>, tensor<2x5xf32>) -> tensor<7x5xf32>
    %8 = stablehlo.slice %7 [0:7, 0:1] : (tensor<7x5xf32>) -> tensor<7x1xf32>
    %9 = stablehlo.slice %7 [0:7, 4:5] : (tensor<7x5xf32>) -> tensor<7x1xf32>
    %10 = stablehlo.slice %7 [0:7, 1:4] : (tensor<7x5xf32>) -> tensor<7x3xf32>
    %11 = call @_flip_1(%10) : (tensor<7x3xf32>) -> tensor<7x3xf32>
    %12 = stablehlo.concatenate %7, %11, dim = 1 : (tensor<7x5xf32>, tensor<7x3xf32>) -> tensor<7x8xf32>
    return %12 : tensor<7x8xf32>
  }
  func.func private @_flip(%arg0: tensor<1x5xf32>) -> tensor<1x5xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<1x5xf32>
    return %0 : tensor<1x5xf32>
  }
  func.func private @_flip_0(%arg0: tensor<2x5xf32>) -> tensor<2x5xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<2x5xf32>
    return %0 : tensor<2x5xf32>
  }
  func.func private @_flip_1(%arg0: tensor<7x3xf32>) -> tensor<7x3xf32> {
    %0 = stablehlo.reverse %arg0, dims = [1] : tensor<7x3xf32>
    return %0 : tensor<7x3xf32>
  }
}
