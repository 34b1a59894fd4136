module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<15xi32>) -> (tensor<15xi32> {jax.result_info = "result"}) {
    %0 = stablehlo.negate %arg0 : tensor<15xi32>
    %1 = call @sort(%0) : (tensor<15xi32>) -> tensor<15xi32>
    %2 = stablehlo.negate %1 : tensor<15xi32>
    return %2 : tensor<15xi32>
  }
  func.func private @sort(%arg0: tensor<15xi32>) -> tensor<15xi32> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %1 = stablehlo.compare LT, %arg1, %arg2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }) : (tensor<15xi32>) -> tensor<15xi32>
    return %0 : tensor<15xi32>
  }
}
