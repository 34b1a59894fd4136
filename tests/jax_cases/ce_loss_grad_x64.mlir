module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x6xf64>, %arg1: tensor<5x8xf64>, %arg2: tensor<5xi64>) -> (tensor<8x6xf64> {jax.result_info = "result"}) {
    %0 = call @_one_hot(%arg2) : (tensor<5xi64>) -> tensor<5x6xf64>
    %1 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x8xf64>, tensor<8x6xf64>) -> tensor<5x6xf64>
    %2:3 = call @log_softmax(%1) : (tensor<5x6xf64>) -> (tensor<5x6xf64>, tensor<5x6xf64>, tensor<5x1xf64>)
    %3 = stablehlo.multiply %0, %2#0 : tensor<5x6xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<5x6xf64>, tensor<f64>) -> tensor<5xf64>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<5xf64>, tensor<f64>) -> tensor<f64>
    %cst_1 = stablehlo.constant dense<5.000000e+00> : tensor<f64>
    %6 = stablehlo.divide %5, %cst_1 : tensor<f64>
    %7 = stablehlo.negate %6 : tensor<f64>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f64>
    %8 = stablehlo.negate %cst_2 : tensor<f64>
    %cst_3 = stablehlo.constant dense<5.000000e+00> : tensor<f64>
    %9 = stablehlo.divide %8, %cst_3 : tensor<f64>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<f64>) -> tensor<5xf64>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<5xf64>) -> tensor<5x6xf64>
    %12 = stablehlo.multiply %0, %11 : tensor<5x6xf64>
    %13 = call @log_softmax_0(%2#1, %2#2, %12) : (tensor<5x6xf64>, tensor<5x1xf64>, tensor<5x6xf64>) -> tensor<5x6xf64>
    %14 = stablehlo.dot_general %13, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x6xf64>, tensor<5x8xf64>) -> tensor<6x8xf64>
    %15 = stablehlo.transpose %14, dims = [1, 0] : (tensor<6x8xf64>) -> tensor<8x6xf64>
    return %15 : tensor<8x6xf64>
  }
  func.func private @_one_hot(%arg0: tensor<5xi64>) -> tensor<5x6xf64> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<5xi64>) -> tensor<5x1xi64>
    %1 = stablehlo.iota dim = 1 : tensor<1x6xi64>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<5x1xi64>) -> tensor<5x6xi64>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x6xi64>) -> tensor<5x6xi64>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<5x6xi64>, tensor<5x6xi64>) -> tensor<5x6xi1>
    %5 = stablehlo.convert %4 : (tensor<5x6xi1>) -> tensor<5x6xf64>
    return %5 : tensor<5x6xf64>
  }
  func.func private @log_softmax(%arg0: tensor<5x6xf64>) -> (tensor<5x6xf64>, tensor<5x6xf64>, tensor<5x1xf64>) {
    %cst = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<5x6xf64>, tensor<f64>) -> tensor<5xf64>
    %cst_0 = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<5xf64>
    %2 = stablehlo.maximum %1, %0 : tensor<5xf64>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<5xf64>) -> tensor<5x1xf64>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<5x1xf64>) -> tensor<5x6xf64>
    %5 = stablehlo.subtract %arg0, %4 : tensor<5x6xf64>
    %6 = stablehlo.exponential %5 : tensor<5x6xf64>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<5x6xf64>, tensor<f64>) -> tensor<5xf64>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<5xf64>) -> tensor<5x1xf64>
    %9 = stablehlo.log %8 : tensor<5x1xf64>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<5x1xf64>) -> tensor<5x6xf64>
    %11 = stablehlo.subtract %5, %10 : tensor<5x6xf64>
    return %11, %6, %8 : tensor<5x6xf64>, tensor<5x6xf64>, tensor<5x1xf64>
  }
  func.func private @log_softmax_0(%arg0: tensor<5x6xf64>, %arg1: tensor<5x1xf64>, %arg2: tensor<5x6xf64>) -> tensor<5x6xf64> {
    %0 = stablehlo.negate %arg2 : tensor<5x6xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<5x6xf64>, tensor<f64>) -> tensor<5xf64>
    %2 = stablehlo.reshape %1 : (tensor<5xf64>) -> tensor<5x1xf64>
    %3 = stablehlo.divide %2, %arg1 : tensor<5x1xf64>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<5x1xf64>, tensor<f64>) -> tensor<5xf64>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<5xf64>) -> tensor<5x6xf64>
    %6 = stablehlo.multiply %5, %arg0 : tensor<5x6xf64>
    %7 = stablehlo.add %arg2, %6 : tensor<5x6xf64>
    return %7 : tensor<5x6xf64>
  }
}
