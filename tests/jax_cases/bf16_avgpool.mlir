module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x6xf32>) -> (tensor<6x6xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<6x6xf32>) -> tensor<6x6xbf16>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %1 = "stablehlo.reduce_window"(%0, %cst) <{base_dilations = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 3, 3>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<bf16>, %arg2: tensor<bf16>):
      %4 = stablehlo.add %arg1, %arg2 : tensor<bf16>
      stablehlo.return %4 : tensor<bf16>
    }) : (tensor<6x6xbf16>, tensor<bf16>) -> tensor<6x6xbf16>
    %cst_0 = stablehlo.constant dense<9.000000e+00> : tensor<bf16>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<bf16>) -> tensor<6x6xbf16>
    %3 = stablehlo.divide %1, %2 : tensor<6x6xbf16>
    return %3 : tensor<6x6xbf16>
  }
}
