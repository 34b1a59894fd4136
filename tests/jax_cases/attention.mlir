module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x8xf32>, %arg1: tensor<6x8xf32>, %arg2: tensor<6x8xf32>) -> (tensor<6x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<6x8xf32>) -> tensor<8x6xf32>
    %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x8xf32>, tensor<8x6xf32>) -> tensor<6x6xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x6xf32>
    %3 = stablehlo.divide %1, %2 : tensor<6x6xf32>
    %cst_0 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6x6xf32>
    %5 = call @triu(%4) : (tensor<6x6xf32>) -> tensor<6x6xf32>
    %6 = stablehlo.convert %5 : tensor<6x6xf32>
    %7 = stablehlo.add %3, %6 : tensor<6x6xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst_1) applies stablehlo.maximum across dimensions = [1] : (tensor<6x6xf32>, tensor<f32>) -> tensor<6xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %10 = stablehlo.maximum %9, %8 : tensor<6xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<6xf32>) -> tensor<6x1xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<6x1xf32>) -> tensor<6x6xf32>
    %13 = stablehlo.subtract %7, %12 : tensor<6x6xf32>
    %14 = stablehlo.exponential %13 : tensor<6x6xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.reduce(%14 init: %cst_3) applies stablehlo.add across dimensions = [1] : (tensor<6x6xf32>, tensor<f32>) -> tensor<6xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0] : (tensor<6xf32>) -> tensor<6x1xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<6x1xf32>) -> tensor<6x6xf32>
    %18 = stablehlo.divide %14, %17 : tensor<6x6xf32>
    %19 = stablehlo.dot_general %18, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x6xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
    return %19 : tensor<6x8xf32>
  }
  func.func private @triu(%arg0: tensor<6x6xf32>) -> tensor<6x6xf32> {
    %0 = stablehlo.iota dim = 0 : tensor<6x6xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<6x6xi32>
    %2 = stablehlo.add %0, %1 : tensor<6x6xi32>
    %3 = stablehlo.iota dim = 1 : tensor<6x6xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<6x6xi32>, tensor<6x6xi32>) -> tensor<6x6xi1>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x6xf32>
    %6 = stablehlo.select %4, %5, %arg0 : tensor<6x6xi1>, tensor<6x6xf32>
    return %6 : tensor<6x6xf32>
  }
}
