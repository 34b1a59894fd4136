module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>, %arg1: tensor<10xf32>) -> (tensor<10xf32> {jax.result_info = "result[0]"}, tensor<10xf32> {jax.result_info = "result[1]"}, tensor<10xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.maximum %arg0, %arg1 : tensor<10xf32>
    %1 = stablehlo.subtract %arg0, %arg1 : tensor<10xf32>
    %2 = stablehlo.compare NE, %1, %1, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %3 = stablehlo.add %arg0, %arg1 : tensor<10xf32>
    %4 = stablehlo.abs %1 : tensor<10xf32>
    %5 = stablehlo.negate %4 : tensor<10xf32>
    %6 = stablehlo.exponential %5 : tensor<10xf32>
    %7 = stablehlo.log_plus_one %6 : tensor<10xf32>
    %8 = stablehlo.add %0, %7 : tensor<10xf32>
    %9 = stablehlo.select %2, %3, %8 : tensor<10xi1>, tensor<10xf32>
    %10 = call @hypot(%arg0, %arg1) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    %11 = call @copysign(%arg0, %arg1) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    return %9, %10, %11 : tensor<10xf32>, tensor<10xf32>, tensor<10xf32>
  }
  func.func private @hypot(%arg0: tensor<10xf32>, %arg1: tensor<10xf32>) -> tensor<10xf32> {
    %0 = stablehlo.abs %arg0 : tensor<10xf32>
    %1 = stablehlo.abs %arg1 : tensor<10xf32>
    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %3 = stablehlo.compare EQ, %0, %2, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %cst_0 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %5 = stablehlo.compare EQ, %1, %4, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %6 = stablehlo.or %3, %5 : tensor<10xi1>
    %7 = stablehlo.maximum %0, %1 : tensor<10xf32>
    %8 = stablehlo.minimum %0, %1 : tensor<10xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %10 = stablehlo.compare EQ, %7, %9, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %12 = stablehlo.compare EQ, %7, %11, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %14 = call @_where(%12, %13, %7) : (tensor<10xi1>, tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    %15 = stablehlo.divide %8, %14 : tensor<10xf32>
    %16 = chlo.square %15 : tensor<10xf32> -> tensor<10xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %18 = stablehlo.add %17, %16 : tensor<10xf32>
    %19 = stablehlo.sqrt %18 : tensor<10xf32>
    %20 = stablehlo.multiply %7, %19 : tensor<10xf32>
    %21 = call @_where(%10, %7, %20) : (tensor<10xi1>, tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    %cst_5 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %22 = call @_where_0(%6, %cst_5, %21) : (tensor<10xi1>, tensor<f32>, tensor<10xf32>) -> tensor<10xf32>
    return %22 : tensor<10xf32>
  }
  func.func private @_where(%arg0: tensor<10xi1>, %arg1: tensor<10xf32>, %arg2: tensor<10xf32>) -> tensor<10xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<10xi1>, tensor<10xf32>
    return %0 : tensor<10xf32>
  }
  func.func private @_where_0(%arg0: tensor<10xi1>, %arg1: tensor<f32>, %arg2: tensor<10xf32>) -> tensor<10xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %1 = stablehlo.select %arg0, %0, %arg2 : tensor<10xi1>, tensor<10xf32>
    return %1 : tensor<10xf32>
  }
  func.func private @copysign(%arg0: tensor<10xf32>, %arg1: tensor<10xf32>) -> tensor<10xf32> {
    %0 = call @signbit(%arg1) : (tensor<10xf32>) -> tensor<10xi1>
    %1 = stablehlo.abs %arg0 : tensor<10xf32>
    %2 = stablehlo.negate %1 : tensor<10xf32>
    %3 = stablehlo.abs %arg0 : tensor<10xf32>
    %4 = call @_where(%0, %2, %3) : (tensor<10xi1>, tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    return %4 : tensor<10xf32>
  }
  func.func private @signbit(%arg0: tensor<10xf32>) -> tensor<10xi1> {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<10xf32>) -> tensor<10xi32>
    %c = stablehlo.constant dense<31> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %2 = stablehlo.shift_right_arithmetic %0, %1 : tensor<10xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %4 = stablehlo.compare NE, %2, %3, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %5 = stablehlo.convert %4 : tensor<10xi1>
    return %5 : tensor<10xi1>
  }
}
