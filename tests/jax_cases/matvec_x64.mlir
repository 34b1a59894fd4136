module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<17x9xf64>, %arg1: tensor<9xf64>) -> (tensor<17xf64> {jax.result_info = "result[0]"}, tensor<17xf64> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<17x9xf64>, tensor<9xf64>) -> tensor<17xf64>
    %1 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<17x9xf64>) -> tensor<9x17xf64>
    %2 = stablehlo.dot_general %arg1, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<9xf64>, tensor<9x17xf64>) -> tensor<17xf64>
    return %0, %2 : tensor<17xf64>, tensor<17xf64>
  }
}
