module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<20xi32>, %arg1: tensor<20xi32>) -> (tensor<20xi32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %1 = stablehlo.compare EQ, %arg1, %0, SIGNED : (tensor<20xi32>, tensor<20xi32>) -> tensor<20xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %arg1) : (tensor<20xi1>, tensor<i32>, tensor<20xi32>) -> tensor<20xi32>
    %3 = stablehlo.remainder %arg0, %2 : tensor<20xi32>
    return %3 : tensor<20xi32>
  }
  func.func private @_where(%arg0: tensor<20xi1>, %arg1: tensor<i32>, %arg2: tensor<20xi32>) -> tensor<20xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %2 = stablehlo.select %arg0, %1, %arg2 : tensor<20xi1>, tensor<20xi32>
    return %2 : tensor<20xi32>
  }
}
