module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<7x5xf64>, %arg1: tensor<6x5xf64>) -> (tensor<7x6xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 2] : (tensor<7x5xf64>) -> tensor<7x1x5xf64>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<6x5xf64>) -> tensor<1x6x5xf64>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1, 2] : (tensor<7x1x5xf64>) -> tensor<7x6x5xf64>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2] : (tensor<1x6x5xf64>) -> tensor<7x6x5xf64>
    %4 = stablehlo.multiply %2, %3 : tensor<7x6x5xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<7x6x5xf64>, tensor<f64>) -> tensor<7x6xf64>
    return %5 : tensor<7x6xf64>
  }
}
