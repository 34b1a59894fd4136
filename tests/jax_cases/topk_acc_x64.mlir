module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<9x7xf64>, %arg1: tensor<9xi64>) -> (tensor<f32> {jax.result_info = "result"}) {
    %values, %indices = chlo.top_k(%arg0, k = 2) : tensor<9x7xf64> -> (tensor<9x2xf64>, tensor<9x2xi32>)
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<9xi64>) -> tensor<9x1xi64>
    %1 = stablehlo.convert %indices : (tensor<9x2xi32>) -> tensor<9x2xi64>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<9x1xi64>) -> tensor<9x2xi64>
    %3 = stablehlo.compare EQ, %1, %2, SIGNED : (tensor<9x2xi64>, tensor<9x2xi64>) -> tensor<9x2xi1>
    %c = stablehlo.constant dense<false> : tensor<i1>
    %4 = stablehlo.reduce(%3 init: %c) applies stablehlo.or across dimensions = [1] : (tensor<9x2xi1>, tensor<i1>) -> tensor<9xi1>
    %5 = stablehlo.convert %4 : (tensor<9xi1>) -> tensor<9xi32>
    %6 = stablehlo.convert %5 : (tensor<9xi32>) -> tensor<9xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<9xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<9.000000e+00> : tensor<f32>
    %8 = stablehlo.divide %7, %cst_0 : tensor<f32>
    return %8 : tensor<f32>
  }
}
