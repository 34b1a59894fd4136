module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xui8>, %arg1: tensor<10xui8>) -> (tensor<10xui8> {jax.result_info = "result[0]"}, tensor<10xui8> {jax.result_info = "result[1]"}, tensor<10xui8> {jax.result_info = "result[2]"}, tensor<10xi1> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<10xui8>
    %1 = stablehlo.multiply %arg0, %arg1 : tensor<10xui8>
    %c = stablehlo.constant dense<1> : tensor<ui8>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui8>) -> tensor<10xui8>
    %3 = stablehlo.maximum %arg1, %2 : tensor<10xui8>
    %4 = call @floor_divide(%arg0, %3) : (tensor<10xui8>, tensor<10xui8>) -> tensor<10xui8>
    %5 = stablehlo.compare GT, %arg0, %arg1, UNSIGNED : (tensor<10xui8>, tensor<10xui8>) -> tensor<10xi1>
    return %0, %1, %4, %5 : tensor<10xui8>, tensor<10xui8>, tensor<10xui8>, tensor<10xi1>
  }
  func.func private @floor_divide(%arg0: tensor<10xui8>, %arg1: tensor<10xui8>) -> tensor<10xui8> {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<10xui8>
    return %0 : tensor<10xui8>
  }
}
