module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x6xf32>) -> (tensor<5x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<5xi32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %2 = stablehlo.iota dim = 0 : tensor<6xi32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<6xi32>) -> tensor<1x6xi32>
    %4 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<5x1xi32>) -> tensor<5x6xi32>
    %5 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x6xi32>) -> tensor<5x6xi32>
    %6 = stablehlo.compare GT, %4, %5, SIGNED : (tensor<5x6xi32>, tensor<5x6xi32>) -> tensor<5x6xi1>
    %7 = stablehlo.negate %arg0 : tensor<5x6xf32>
    %8 = call @_where(%6, %arg0, %7) : (tensor<5x6xi1>, tensor<5x6xf32>, tensor<5x6xf32>) -> tensor<5x6xf32>
    return %8 : tensor<5x6xf32>
  }
  func.func private @_where(%arg0: tensor<5x6xi1>, %arg1: tensor<5x6xf32>, %arg2: tensor<5x6xf32>) -> tensor<5x6xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<5x6xi1>, tensor<5x6xf32>
    return %0 : tensor<5x6xf32>
  }
}
