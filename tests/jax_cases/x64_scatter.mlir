module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<7xf64>, %arg1: tensor<10xi64>, %arg2: tensor<10xf64>) -> (tensor<7xf64> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<10xi64>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<10xi64>, tensor<10xi64>) -> tensor<10xi1>
    %c_0 = stablehlo.constant dense<7> : tensor<i64>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i64>) -> tensor<10xi64>
    %3 = stablehlo.add %arg1, %2 : tensor<10xi64>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<10xi1>, tensor<10xi64>
    %5 = stablehlo.convert %4 : (tensor<10xi64>) -> tensor<10xi32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<10xi32>) -> tensor<10x1xi32>
    %7 = "stablehlo.scatter"(%arg0, %6, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f64>, %arg4: tensor<f64>):
      %8 = stablehlo.add %arg3, %arg4 : tensor<f64>
      stablehlo.return %8 : tensor<f64>
    }) : (tensor<7xf64>, tensor<10x1xi32>, tensor<10xf64>) -> tensor<7xf64>
    return %7 : tensor<7xf64>
  }
}
