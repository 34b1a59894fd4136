module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x6xf32>, %arg1: tensor<5x8xf32>, %arg2: tensor<5xi32>) -> (tensor<8x6xf32> {jax.result_info = "result"}) {
    %0 = call @_one_hot(%arg2) : (tensor<5xi32>) -> tensor<5x6xf32>
    %1 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x8xf32>, tensor<8x6xf32>) -> tensor<5x6xf32>
    %2:3 = call @log_softmax(%1) : (tensor<5x6xf32>) -> (tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x1xf32>)
    %3 = stablehlo.multiply %0, %2#0 : tensor<5x6xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<5x6xf32>, tensor<f32>) -> tensor<5xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<5.000000e+00> : tensor<f32>
    %6 = stablehlo.divide %5, %cst_1 : tensor<f32>
    %7 = stablehlo.negate %6 : tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %8 = stablehlo.negate %cst_2 : tensor<f32>
    %cst_3 = stablehlo.constant dense<5.000000e+00> : tensor<f32>
    %9 = stablehlo.divide %8, %cst_3 : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<5xf32>) -> tensor<5x6xf32>
    %12 = stablehlo.multiply %0, %11 : tensor<5x6xf32>
    %13 = call @log_softmax_0(%2#1, %2#2, %12) : (tensor<5x6xf32>, tensor<5x1xf32>, tensor<5x6xf32>) -> tensor<5x6xf32>
    %14 = stablehlo.dot_general %13, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x6xf32>, tensor<5x8xf32>) -> tensor<6x8xf32>
    %15 = stablehlo.transpose %14, dims = [1, 0] : (tensor<6x8xf32>) -> tensor<8x6xf32>
    return %15 : tensor<8x6xf32>
  }
  func.func private @_one_hot(%arg0: tensor<5xi32>) -> tensor<5x6xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %1 = stablehlo.iota dim = 1 : tensor<1x6xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<5x1xi32>) -> tensor<5x6xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x6xi32>) -> tensor<5x6xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<5x6xi32>, tensor<5x6xi32>) -> tensor<5x6xi1>
    %5 = stablehlo.convert %4 : (tensor<5x6xi1>) -> tensor<5x6xf32>
    return %5 : tensor<5x6xf32>
  }
  func.func private @log_softmax(%arg0: tensor<5x6xf32>) -> (tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<5x6xf32>, tensor<f32>) -> tensor<5xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<5xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<5xf32>) -> tensor<5x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<5x1xf32>) -> tensor<5x6xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<5x6xf32>
    %6 = stablehlo.exponential %5 : tensor<5x6xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<5x6xf32>, tensor<f32>) -> tensor<5xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<5xf32>) -> tensor<5x1xf32>
    %9 = stablehlo.log %8 : tensor<5x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<5x1xf32>) -> tensor<5x6xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<5x6xf32>
    return %11, %6, %8 : tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x1xf32>
  }
  func.func private @log_softmax_0(%arg0: tensor<5x6xf32>, %arg1: tensor<5x1xf32>, %arg2: tensor<5x6xf32>) -> tensor<5x6xf32> {
    %0 = stablehlo.negate %arg2 : tensor<5x6xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<5x6xf32>, tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.reshape %1 : (tensor<5xf32>) -> tensor<5x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<5x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<5x1xf32>, tensor<f32>) -> tensor<5xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<5xf32>) -> tensor<5x6xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<5x6xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<5x6xf32>
    return %7 : tensor<5x6xf32>
  }
}
