module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x5xf32>, %arg1: tensor<7x2xi32>, %arg2: tensor<7xf32>) -> (tensor<5x5xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg1 [0:7, 0:1] : (tensor<7x2xi32>) -> tensor<7x1xi32>
    %1 = stablehlo.reshape %0 : (tensor<7x1xi32>) -> tensor<7xi32>
    %2 = stablehlo.slice %arg1 [0:7, 1:2] : (tensor<7x2xi32>) -> tensor<7x1xi32>
    %3 = stablehlo.reshape %2 : (tensor<7x1xi32>) -> tensor<7xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %5 = stablehlo.compare LT, %1, %4, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %c_0 = stablehlo.constant dense<5> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %7 = stablehlo.add %1, %6 : tensor<7xi32>
    %8 = stablehlo.select %5, %7, %1 : tensor<7xi1>, tensor<7xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %10 = stablehlo.compare LT, %3, %9, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %c_2 = stablehlo.constant dense<5> : tensor<i32>
    %11 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %12 = stablehlo.add %3, %11 : tensor<7xi32>
    %13 = stablehlo.select %10, %12, %3 : tensor<7xi1>, tensor<7xi32>
    %14 = stablehlo.broadcast_in_dim %8, dims = [0] : (tensor<7xi32>) -> tensor<7x1xi32>
    %15 = stablehlo.broadcast_in_dim %13, dims = [0] : (tensor<7xi32>) -> tensor<7x1xi32>
    %16 = stablehlo.concatenate %14, %15, dim = 1 : (tensor<7x1xi32>, tensor<7x1xi32>) -> tensor<7x2xi32>
    %17 = "stablehlo.scatter"(%arg0, %16, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %18 = stablehlo.minimum %arg3, %arg4 : tensor<f32>
      stablehlo.return %18 : tensor<f32>
    }) : (tensor<5x5xf32>, tensor<7x2xi32>, tensor<7xf32>) -> tensor<5x5xf32>
    return %17 : tensor<5x5xf32>
  }
}
