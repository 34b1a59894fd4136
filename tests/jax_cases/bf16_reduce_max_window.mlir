module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x6xf32>) -> (tensor<3x3xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<6x6xf32>) -> tensor<6x6xbf16>
    %cst = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<bf16>
    %2 = "stablehlo.reduce_window"(%0, %1) <{base_dilations = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
    ^bb0(%arg1: tensor<bf16>, %arg2: tensor<bf16>):
      %3 = stablehlo.maximum %arg1, %arg2 : tensor<bf16>
      stablehlo.return %3 : tensor<bf16>
    }) : (tensor<6x6xbf16>, tensor<bf16>) -> tensor<3x3xbf16>
    return %2 : tensor<3x3xbf16>
  }
}
