module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<30xf32>) -> (tensor<30xf16> {jax.result_info = "result[0]"}, tensor<30xf16> {jax.result_info = "result[1]"}, tensor<30xf16> {jax.result_info = "result[2]"}, tensor<30xf16> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<30xf32>) -> tensor<30xf16>
    %1 = stablehlo.exponential %0 : tensor<30xf16>
    %2 = stablehlo.convert %arg0 : (tensor<30xf32>) -> tensor<30xf16>
    %3 = stablehlo.tanh %2 : tensor<30xf16>
    %4 = stablehlo.abs %arg0 : tensor<30xf32>
    %5 = stablehlo.convert %4 : (tensor<30xf32>) -> tensor<30xf16>
    %cst = stablehlo.constant dense<1.000210e-02> : tensor<f16>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f16>) -> tensor<30xf16>
    %7 = stablehlo.add %5, %6 : tensor<30xf16>
    %8 = stablehlo.log %7 : tensor<30xf16>
    %9 = stablehlo.convert %arg0 : (tensor<30xf32>) -> tensor<30xf16>
    %10 = stablehlo.negate %9 : tensor<30xf16>
    %11 = stablehlo.exponential %10 : tensor<30xf16>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f16>
    %12 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f16>) -> tensor<30xf16>
    %13 = stablehlo.add %12, %11 : tensor<30xf16>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f16>
    %14 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f16>) -> tensor<30xf16>
    %15 = stablehlo.divide %14, %13 : tensor<30xf16>
    return %1, %3, %8, %15 : tensor<30xf16>, tensor<30xf16>, tensor<30xf16>, tensor<30xf16>
  }
}
