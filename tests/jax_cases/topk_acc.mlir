module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<9x7xf32>, %arg1: tensor<9xi32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %values, %indices = chlo.top_k(%arg0, k = 2) : tensor<9x7xf32> -> (tensor<9x2xf32>, tensor<9x2xi32>)
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<9xi32>) -> tensor<9x1xi32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<9x1xi32>) -> tensor<9x2xi32>
    %2 = stablehlo.compare EQ, %indices, %1, SIGNED : (tensor<9x2xi32>, tensor<9x2xi32>) -> tensor<9x2xi1>
    %c = stablehlo.constant dense<false> : tensor<i1>
    %3 = stablehlo.reduce(%2 init: %c) applies stablehlo.or across dimensions = [1] : (tensor<9x2xi1>, tensor<i1>) -> tensor<9xi1>
    %4 = stablehlo.convert %3 : (tensor<9xi1>) -> tensor<9xi32>
    %5 = stablehlo.convert %4 : (tensor<9xi32>) -> tensor<9xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<9xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<9.000000e+00> : tensor<f32>
    %7 = stablehlo.divide %6, %cst_0 : tensor<f32>
    return %7 : tensor<f32>
  }
}
