module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<20xi32>, %arg1: tensor<20xi32>) -> (tensor<20xi32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %1 = stablehlo.compare EQ, %arg1, %0, SIGNED : (tensor<20xi32>, tensor<20xi32>) -> tensor<20xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %arg1) : (tensor<20xi1>, tensor<i32>, tensor<20xi32>) -> tensor<20xi32>
    %3 = call @floor_divide(%arg0, %2) : (tensor<20xi32>, tensor<20xi32>) -> tensor<20xi32>
    return %3 : tensor<20xi32>
  }
  func.func private @_where(%arg0: tensor<20xi1>, %arg1: tensor<i32>, %arg2: tensor<20xi32>) -> tensor<20xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %2 = stablehlo.select %arg0, %1, %arg2 : tensor<20xi1>, tensor<20xi32>
    return %2 : tensor<20xi32>
  }
  func.func private @floor_divide(%arg0: tensor<20xi32>, %arg1: tensor<20xi32>) -> tensor<20xi32> {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<20xi32>
    %1 = stablehlo.sign %arg0 : tensor<20xi32>
    %2 = stablehlo.sign %arg1 : tensor<20xi32>
    %3 = stablehlo.compare NE, %1, %2, SIGNED : (tensor<20xi32>, tensor<20xi32>) -> tensor<20xi1>
    %4 = stablehlo.remainder %arg0, %arg1 : tensor<20xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<20xi32>, tensor<20xi32>) -> tensor<20xi1>
    %7 = stablehlo.and %3, %6 : tensor<20xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %9 = stablehlo.subtract %0, %8 : tensor<20xi32>
    %10 = call @_where_0(%7, %9, %0) : (tensor<20xi1>, tensor<20xi32>, tensor<20xi32>) -> tensor<20xi32>
    return %10 : tensor<20xi32>
  }
  func.func private @_where_0(%arg0: tensor<20xi1>, %arg1: tensor<20xi32>, %arg2: tensor<20xi32>) -> tensor<20xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<20xi1>, tensor<20xi32>
    return %0 : tensor<20xi32>
  }
}
