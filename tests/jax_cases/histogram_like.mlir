module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<40xf32>) -> (tensor<10xi32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<40xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<40xf32>
    %cst_0 = stablehlo.constant dense<5.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<40xf32>
    %3 = stablehlo.add %1, %2 : tensor<40xf32>
    %4 = stablehlo.convert %3 : (tensor<40xf32>) -> tensor<40xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<9> : tensor<i32>
    %5 = call @clip(%4, %c, %c_1) : (tensor<40xi32>, tensor<i32>, tensor<i32>) -> tensor<40xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %7 = call @clip_0(%5, %c_3) : (tensor<40xi32>, tensor<i32>) -> tensor<40xi32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<40xi32>
    %9 = stablehlo.compare LT, %7, %8, SIGNED : (tensor<40xi32>, tensor<40xi32>) -> tensor<40xi1>
    %c_5 = stablehlo.constant dense<10> : tensor<i32>
    %10 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<40xi32>
    %11 = stablehlo.add %7, %10 : tensor<40xi32>
    %12 = stablehlo.select %9, %11, %7 : tensor<40xi1>, tensor<40xi32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<40xi32>) -> tensor<40x1xi32>
    %c_6 = stablehlo.constant dense<1> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<40xi32>
    %15 = "stablehlo.scatter"(%6, %13, %14) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %16 = stablehlo.add %arg1, %arg2 : tensor<i32>
      stablehlo.return %16 : tensor<i32>
    }) : (tensor<10xi32>, tensor<40x1xi32>, tensor<40xi32>) -> tensor<10xi32>
    return %15 : tensor<10xi32>
  }
  func.func private @clip(%arg0: tensor<40xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<40xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<40xi32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<40xi32>
    %3 = stablehlo.convert %arg2 : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<i32>) -> tensor<40xi32>
    %5 = stablehlo.minimum %4, %2 : tensor<40xi32>
    return %5 : tensor<40xi32>
  }
  func.func private @clip_0(%arg0: tensor<40xi32>, %arg1: tensor<i32>) -> tensor<40xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<40xi32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<40xi32>
    return %2 : tensor<40xi32>
  }
}
