module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12x2xf64>) -> (tensor<12x2xf64> {jax.result_info = "result"}) {
    %0 = call @cumlogsumexp(%arg0) : (tensor<12x2xf64>) -> tensor<12x2xf64>
    return %0 : tensor<12x2xf64>
  }
  func.func private @cumlogsumexp(%arg0: tensor<12x2xf64>) -> tensor<12x2xf64> {
    %cst = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %0 = "stablehlo.reduce_window"(%arg0, %cst) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 11], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 12, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f64>, %arg2: tensor<f64>):
      %1 = stablehlo.maximum %arg1, %arg2 : tensor<f64>
      %2 = stablehlo.subtract %arg1, %arg2 : tensor<f64>
      %3 = stablehlo.compare NE, %2, %2, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %4 = stablehlo.add %arg1, %arg2 : tensor<f64>
      %5 = stablehlo.abs %2 : tensor<f64>
      %6 = stablehlo.negate %5 : tensor<f64>
      %7 = stablehlo.exponential %6 : tensor<f64>
      %8 = stablehlo.log_plus_one %7 : tensor<f64>
      %9 = stablehlo.add %1, %8 : tensor<f64>
      %10 = stablehlo.select %3, %4, %9 : tensor<i1>, tensor<f64>
      stablehlo.return %10 : tensor<f64>
    }) : (tensor<12x2xf64>, tensor<f64>) -> tensor<12x2xf64>
    return %0 : tensor<12x2xf64>
  }
}
