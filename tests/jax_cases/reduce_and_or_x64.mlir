module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x6xf64>) -> (tensor<6xi1> {jax.result_info = "result[0]"}, tensor<5xi1> {jax.result_info = "result[1]"}, tensor<i64> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<5x6xf64>
    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<5x6xf64>, tensor<5x6xf64>) -> tensor<5x6xi1>
    %c = stablehlo.constant dense<true> : tensor<i1>
    %2 = stablehlo.reduce(%1 init: %c) applies stablehlo.and across dimensions = [0] : (tensor<5x6xi1>, tensor<i1>) -> tensor<6xi1>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f64>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<5x6xf64>
    %4 = stablehlo.compare GT, %arg0, %3, FLOAT : (tensor<5x6xf64>, tensor<5x6xf64>) -> tensor<5x6xi1>
    %c_1 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.reduce(%4 init: %c_1) applies stablehlo.or across dimensions = [1] : (tensor<5x6xi1>, tensor<i1>) -> tensor<5xi1>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %6 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f64>) -> tensor<5x6xf64>
    %7 = stablehlo.compare GT, %arg0, %6, FLOAT : (tensor<5x6xf64>, tensor<5x6xf64>) -> tensor<5x6xi1>
    %8 = stablehlo.convert %7 : (tensor<5x6xi1>) -> tensor<5x6xi32>
    %9 = stablehlo.convert %8 : (tensor<5x6xi32>) -> tensor<5x6xi64>
    %c_3 = stablehlo.constant dense<0> : tensor<i64>
    %10 = stablehlo.reduce(%9 init: %c_3) applies stablehlo.add across dimensions = [0, 1] : (tensor<5x6xi64>, tensor<i64>) -> tensor<i64>
    return %2, %5, %10 : tensor<6xi1>, tensor<5xi1>, tensor<i64>
  }
}
