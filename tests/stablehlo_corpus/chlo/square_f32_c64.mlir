module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<47xf32>, %arg1: tensor<256xcomplex<f32>>) -> (tensor<47xf32> {jax.result_info = "result[0]"}, tensor<256xcomplex<f32>> {jax.result_info = "result[1]"}) {
    %0 = chlo.square %arg0 : tensor<47xf32> -> tensor<47xf32>
    %1 = chlo.square %arg1 : tensor<256xcomplex<f32>> -> tensor<256xcomplex<f32>>
    return %0, %1 : tensor<47xf32>, tensor<256xcomplex<f32>>
  }
}
