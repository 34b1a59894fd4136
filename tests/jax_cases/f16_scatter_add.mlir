module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf32>, %arg1: tensor<20xi32>, %arg2: tensor<20xf32>) -> (tensor<6xf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<6xf32>) -> tensor<6xf16>
    %1 = stablehlo.convert %arg2 : (tensor<20xf32>) -> tensor<20xf16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %3 = stablehlo.compare LT, %arg1, %2, SIGNED : (tensor<20xi32>, tensor<20xi32>) -> tensor<20xi1>
    %c_0 = stablehlo.constant dense<6> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %5 = stablehlo.add %arg1, %4 : tensor<20xi32>
    %6 = stablehlo.select %3, %5, %arg1 : tensor<20xi1>, tensor<20xi32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<20xi32>) -> tensor<20x1xi32>
    %8 = "stablehlo.scatter"(%0, %7, %1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f16>, %arg4: tensor<f16>):
      %9 = stablehlo.add %arg3, %arg4 : tensor<f16>
      stablehlo.return %9 : tensor<f16>
    }) : (tensor<6xf16>, tensor<20x1xi32>, tensor<20xf16>) -> tensor<6xf16>
    return %8 : tensor<6xf16>
  }
}
