module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xui8>, %arg1: tensor<10xui8>) -> (tensor<10xui8> {jax.result_info = "result[0]"}, tensor<10xui8> {jax.result_info = "result[1]"}, tensor<10xui8> {jax.result_info = "result[2]"}, tensor<10xui8> {jax.result_info = "result[3]"}, tensor<10xui8> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<10xui8>
    %1 = stablehlo.subtract %arg0, %arg1 : tensor<10xui8>
    %2 = stablehlo.multiply %arg0, %arg1 : tensor<10xui8>
    %c = stablehlo.constant dense<3> : tensor<ui8>
    %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui8>) -> tensor<10xui8>
    %4 = stablehlo.shift_left %arg0, %3 : tensor<10xui8>
    %5 = stablehlo.not %arg0 : tensor<10xui8>
    return %0, %1, %2, %4, %5 : tensor<10xui8>, tensor<10xui8>, tensor<10xui8>, tensor<10xui8>, tensor<10xui8>
  }
}
