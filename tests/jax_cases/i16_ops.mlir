module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xi16>, %arg1: tensor<10xi16>) -> (tensor<10xi16> {jax.result_info = "result[0]"}, tensor<10xi16> {jax.result_info = "result[1]"}, tensor<10xi16> {jax.result_info = "result[2]"}, tensor<10xi16> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<10xi16>
    %c = stablehlo.constant dense<0> : tensor<i16>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i16>) -> tensor<10xi16>
    %2 = stablehlo.compare EQ, %arg1, %1, SIGNED : (tensor<10xi16>, tensor<10xi16>) -> tensor<10xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %3 = call @_where(%2, %c_0, %arg1) : (tensor<10xi1>, tensor<i32>, tensor<10xi16>) -> tensor<10xi16>
    %4 = call @floor_divide(%arg0, %3) : (tensor<10xi16>, tensor<10xi16>) -> tensor<10xi16>
    %5 = stablehlo.abs %arg0 : tensor<10xi16>
    %6 = stablehlo.maximum %arg0, %arg1 : tensor<10xi16>
    return %0, %4, %5, %6 : tensor<10xi16>, tensor<10xi16>, tensor<10xi16>, tensor<10xi16>
  }
  func.func private @_where(%arg0: tensor<10xi1>, %arg1: tensor<i32>, %arg2: tensor<10xi16>) -> tensor<10xi16> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<i16>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i16>) -> tensor<10xi16>
    %2 = stablehlo.select %arg0, %1, %arg2 : tensor<10xi1>, tensor<10xi16>
    return %2 : tensor<10xi16>
  }
  func.func private @floor_divide(%arg0: tensor<10xi16>, %arg1: tensor<10xi16>) -> tensor<10xi16> {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<10xi16>
    %1 = stablehlo.sign %arg0 : tensor<10xi16>
    %2 = stablehlo.sign %arg1 : tensor<10xi16>
    %3 = stablehlo.compare NE, %1, %2, SIGNED : (tensor<10xi16>, tensor<10xi16>) -> tensor<10xi1>
    %4 = stablehlo.remainder %arg0, %arg1 : tensor<10xi16>
    %c = stablehlo.constant dense<0> : tensor<i16>
    %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i16>) -> tensor<10xi16>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<10xi16>, tensor<10xi16>) -> tensor<10xi1>
    %7 = stablehlo.and %3, %6 : tensor<10xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i16>
    %8 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i16>) -> tensor<10xi16>
    %9 = stablehlo.subtract %0, %8 : tensor<10xi16>
    %10 = call @_where_0(%7, %9, %0) : (tensor<10xi1>, tensor<10xi16>, tensor<10xi16>) -> tensor<10xi16>
    return %10 : tensor<10xi16>
  }
  func.func private @_where_0(%arg0: tensor<10xi1>, %arg1: tensor<10xi16>, %arg2: tensor<10xi16>) -> tensor<10xi16> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<10xi1>, tensor<10xi16>
    return %0 : tensor<10xi16>
  }
}
