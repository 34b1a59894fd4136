module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf64>) -> (tensor<7x8xf64> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0 = call @_pad(%arg0, %c) : (tensor<4x5xf64>, tensor<i64>) -> tensor<7x8xf64>
    return %0 : tensor<7x8xf64>
  }
  func.func private @_pad(%arg0: tensor<4x5xf64>, %arg1: tensor<i64>) -> tensor<7x8xf64> {
    %0 = stablehlo.slice %arg0 [0:1, 0:5] : (tensor<4x5xf64>) -> tensor<1x5xf64>
    %1 = stablehlo.slice %arg0 [1:2, 0:5] : (tensor<4x5xf64>) -> tensor<1x5xf64>
    %2 = call @_flip(%1) : (tensor<1x5xf64>) -> tensor<1x5xf64>
    %3 = stablehlo.concatenate %2, %arg0, dim = 0 : (tensor<1x5xf64>, tensor<4x5xf64>) -> tensor<5x5xf64>
    %4 = stablehlo.slice %3 [4:5, 0:5] : (tensor<5x5xf64>) -> tensor<1x5xf64>
    %5 = stablehlo.slice %3 [2:4, 0:5] : (tensor<5x5xf64>) -> tensor<2x5xf64>
    %6 = call @_flip_0(%5) : (tensor<2x5xf64>) -> tensor<2x5xf64>
    %7 = stablehlo.concatenate %3, %6, dim = 0 : (tensor<5x5xf64>, tensor<2x5xf64>) -> tensor<7x5xf64>
    %8 = stablehlo.slice %7 [0:7, 0:1] : (tensor<7x5xf64>) -> tensor<7x1xf64>
    %9 = stablehlo.slice %7 [0:7, 4:5] : (tensor<7x5xf64>) -> tensor<7x1xf64>
    %10 = stablehlo.slice %7 [0:7, 1:4] : (tensor<7x5xf64>) -> tensor<7x3xf64>
    %11 = call @_flip_1(%10) : (tensor<7x3xf64>) -> tensor<7x3xf64>
    %12 = stablehlo.concatenate %7, %11, dim = 1 : (tensor<7x5xf64>, tensor<7x3xf64>) -> tensor<7x8xf64>
    return %12 : tensor<7x8xf64>
  }
  func.func private @_flip(%arg0: tensor<1x5xf64>) -> tensor<1x5xf64> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<1x5xf64>
    return %0 : tensor<1x5xf64>
  }
  func.func private @_flip_0(%arg0: tensor<2x5xf64>) -> tensor<2x5xf64> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<2x5xf64>
    return %0 : tensor<2x5xf64>
  }
  func.func private @_flip_1(%arg0: tensor<7x3xf64>) -> tensor<7x3xf64> {
    %0 = stablehlo.reverse %arg0, dims = [1] : tensor<7x3xf64>
    return %0 : tensor<7x3xf64>
  }
}
