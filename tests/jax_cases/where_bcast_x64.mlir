module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf64>, %arg1: tensor<4x5xf64>, %arg2: tensor<4xf64>) -> (tensor<4x5xf64> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<4x5xf64>
    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<4x5xf64>, tensor<4x5xf64>) -> tensor<4x5xi1>
    %2 = stablehlo.broadcast_in_dim %arg2, dims = [0] : (tensor<4xf64>) -> tensor<4x1xf64>
    %3 = call @_where(%1, %arg1, %2) : (tensor<4x5xi1>, tensor<4x5xf64>, tensor<4x1xf64>) -> tensor<4x5xf64>
    return %3 : tensor<4x5xf64>
  }
  func.func private @_where(%arg0: tensor<4x5xi1>, %arg1: tensor<4x5xf64>, %arg2: tensor<4x1xf64>) -> tensor<4x5xf64> {
    %0 = stablehlo.broadcast_in_dim %arg2, dims = [0, 1] : (tensor<4x1xf64>) -> tensor<4x5xf64>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<4x5xi1>, tensor<4x5xf64>
    return %1 : tensor<4x5xf64>
  }
}
