module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<11xf32>) -> (tensor<11xi1> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<11xf32>
    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<11xf32>, tensor<11xf32>) -> tensor<11xi1>
    %2 = call @sort(%1) : (tensor<11xi1>) -> tensor<11xi1>
    return %2 : tensor<11xi1>
  }
  func.func private @sort(%arg0: tensor<11xi1>) -> tensor<11xi1> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<i1>, %arg2: tensor<i1>):
      %1 = stablehlo.compare LT, %arg1, %arg2, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }) : (tensor<11xi1>) -> tensor<11xi1>
    return %0 : tensor<11xi1>
  }
}
