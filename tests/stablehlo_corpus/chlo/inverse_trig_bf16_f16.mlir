module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<53xf32>) -> (tensor<53xbf16> {jax.result_info = "result[0]"}, tensor<53xbf16> {jax.result_info = "result[1]"}, tensor<53xbf16> {jax.result_info = "result[2]"}, tensor<53xbf16> {jax.result_info = "result[3]"}, tensor<53xbf16> {jax.result_info = "result[4]"}, tensor<53xbf16> {jax.result_info = "result[5]"}, tensor<53xf16> {jax.result_info = "result[6]"}, tensor<53xf16> {jax.result_info = "result[7]"}, tensor<53xf16> {jax.result_info = "result[8]"}, tensor<53xf16> {jax.result_info = "result[9]"}, tensor<53xf16> {jax.result_info = "result[10]"}, tensor<53xf16> {jax.result_info = "result[11]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xbf16>
    %1 = chlo.asin %0 : tensor<53xbf16> -> tensor<53xbf16>
    %2 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xbf16>
    %3 = chlo.acos %2 : tensor<53xbf16> -> tensor<53xbf16>
    %4 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xbf16>
    %5 = chlo.atan %4 : tensor<53xbf16> -> tensor<53xbf16>
    %6 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xbf16>
    %7 = chlo.asinh %6 : tensor<53xbf16> -> tensor<53xbf16>
    %8 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xbf16>
    %9 = call @arccosh(%8) : (tensor<53xbf16>) -> tensor<53xbf16>
    %10 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xbf16>
    %11 = chlo.atanh %10 : tensor<53xbf16> -> tensor<53xbf16>
    %12 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xf16>
    %13 = chlo.asin %12 : tensor<53xf16> -> tensor<53xf16>
    %14 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xf16>
    %15 = chlo.acos %14 : tensor<53xf16> -> tensor<53xf16>
    %16 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xf16>
    %17 = chlo.atan %16 : tensor<53xf16> -> tensor<53xf16>
    %18 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xf16>
    %19 = chlo.asinh %18 : tensor<53xf16> -> tensor<53xf16>
    %20 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xf16>
    %21 = call @arccosh_0(%20) : (tensor<53xf16>) -> tensor<53xf16>
    %22 = stablehlo.convert %arg0 : (tensor<53xf32>) -> tensor<53xf16>
    %23 = chlo.atanh %22 : tensor<53xf16> -> tensor<53xf16>
    return %1, %3, %5, %7, %9, %11, %13, %15, %17, %19, %21, %23 : tensor<53xbf16>, tensor<53xbf16>, tensor<53xbf16>, tensor<53xbf16>, tensor<53xbf16>, tensor<53xbf16>, tensor<53xf16>, tensor<53xf16>, tensor<53xf16>, tensor<53xf16>, tensor<53xf16>, tensor<53xf16>
  }
  func.func private @arccosh(%arg0: tensor<53xbf16>) -> tensor<53xbf16> {
    %0 = chlo.acosh %arg0 : tensor<53xbf16> -> tensor<53xbf16>
    return %0 : tensor<53xbf16>
  }
  func.func private @arccosh_0(%arg0: tensor<53xf16>) -> tensor<53xf16> {
    %0 = chlo.acosh %arg0 : tensor<53xf16> -> tensor<53xf16>
    return %0 : tensor<53xf16>
  }
}
