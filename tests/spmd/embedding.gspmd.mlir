module @jit_embedding attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x4xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}, %arg1: tensor<6xi32> {mhlo.sharding = "{replicated}"}, %arg2: tensor<8xi32> {mhlo.sharding = "{devices=[4]<=[4]}"}, %arg3: tensor<16x4xf32> {mhlo.sharding = "{replicated}"}, %arg4: tensor<6x4xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<6x4xf32> {jax.result_info = "result[0]"}, tensor<8x4xf32> {jax.result_info = "result[1]"}, tensor<8x4xf32> {jax.result_info = "result[2]"}, tensor<16x4xf32> {jax.result_info = "result[3]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
    %c_0 = stablehlo.constant dense<16> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<6xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<6xi1>, tensor<6xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x4xf32>
    %7 = stablehlo.multiply %6, %arg4 : tensor<6x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<16x4xf32>
    %9 = "stablehlo.scatter"(%8, %5, %7) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %32 = stablehlo.add %arg5, %arg6 : tensor<f32>
      stablehlo.return %32 : tensor<f32>
    }) : (tensor<16x4xf32>, tensor<6x1xi32>, tensor<6x4xf32>) -> tensor<16x4xf32>
    %10 = stablehlo.custom_call @Sharding(%9) {backend_config = "", mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<16x4xf32>) -> tensor<16x4xf32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %11 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %12 = stablehlo.compare LT, %arg1, %11, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
    %c_3 = stablehlo.constant dense<16> : tensor<i32>
    %13 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %14 = stablehlo.add %arg1, %13 : tensor<6xi32>
    %15 = stablehlo.select %12, %14, %arg1 : tensor<6xi1>, tensor<6xi32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>
    %17 = "stablehlo.gather"(%arg0, %16) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<16x4xf32>, tensor<6x1xi32>) -> tensor<6x4xf32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %18 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %19 = stablehlo.compare LT, %arg2, %18, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %c_5 = stablehlo.constant dense<16> : tensor<i32>
    %20 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %21 = stablehlo.add %arg2, %20 : tensor<8xi32>
    %22 = stablehlo.select %19, %21, %arg2 : tensor<8xi1>, tensor<8xi32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0] : (tensor<8xi32>) -> tensor<8x1xi32>
    %24 = "stablehlo.gather"(%arg0, %23) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<16x4xf32>, tensor<8x1xi32>) -> tensor<8x4xf32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %25 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %26 = stablehlo.compare LT, %arg2, %25, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %c_7 = stablehlo.constant dense<16> : tensor<i32>
    %27 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %28 = stablehlo.add %arg2, %27 : tensor<8xi32>
    %29 = stablehlo.select %26, %28, %arg2 : tensor<8xi1>, tensor<8xi32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0] : (tensor<8xi32>) -> tensor<8x1xi32>
    %31 = "stablehlo.gather"(%arg3, %30) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<16x4xf32>, tensor<8x1xi32>) -> tensor<8x4xf32>
    return %17, %24, %31, %10 : tensor<6x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<16x4xf32>
  }
}
