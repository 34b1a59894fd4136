module @jit__fun attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["i"=4]> {stablehlo.mesh = {axes = [{name = "i", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}) -> (tensor<4x2xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"i"}, {}]>] out_shardings=[<@mesh, [{"i"}, {}]>] manual_axes={"i"} (%arg1: tensor<1x2xf32>) {
      %1 = stablehlo.reshape %arg1 : (tensor<1x2xf32>) -> tensor<2xf32>
      %c = stablehlo.constant dense<1> : tensor<ui32>
      %c_0 = stablehlo.constant dense<4> : tensor<ui32>
      %2 = stablehlo.partition_id : tensor<ui32>
      %3 = stablehlo.divide %2, %c : tensor<ui32>
      %4 = stablehlo.remainder %3, %c_0 : tensor<ui32>
      %5 = stablehlo.convert %4 : (tensor<ui32>) -> tensor<i32>
      %6 = stablehlo.convert %5 : (tensor<i32>) -> tensor<f32>
      %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<2xf32>
      %8 = stablehlo.add %1, %7 : tensor<2xf32>
      %9 = stablehlo.broadcast_in_dim %8, dims = [1] : (tensor<2xf32>) -> tensor<1x2xf32>
      sdy.return %9 : tensor<1x2xf32>
    } : (tensor<4x2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}
