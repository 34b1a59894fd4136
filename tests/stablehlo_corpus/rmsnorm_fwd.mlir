"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "region_0.1", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
    %21 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%21) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8x32xf32>, %arg1: tensor<32xf32>):
    %0 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %20 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%20) : (tensor<f32>) -> ()
    }) : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
    %3 = "stablehlo.reshape"(%2) : (tensor<8xf32>) -> tensor<8x1xf32>
    %4 = "stablehlo.constant"() <{value = dense<3.200000e+01> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x1xf32>
    %6 = "stablehlo.divide"(%3, %5) : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
    %7 = "stablehlo.constant"() <{value = dense<9.99999997E-7> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x1xf32>
    %9 = "stablehlo.add"(%6, %8) : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
    %10 = "stablehlo.rsqrt"(%9) : (tensor<8x1xf32>) -> tensor<8x1xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x1xf32>
    %12 = "stablehlo.reshape"(%11) : (tensor<8x1xf32>) -> tensor<8xf32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x32xf32>
    %14 = "stablehlo.multiply"(%arg0, %13) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %15 = "stablehlo.reshape"(%arg1) : (tensor<32xf32>) -> tensor<1x32xf32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x32xf32>) -> tensor<1x32xf32>
    %17 = "stablehlo.reshape"(%16) : (tensor<1x32xf32>) -> tensor<32xf32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 1>}> : (tensor<32xf32>) -> tensor<8x32xf32>
    %19 = "stablehlo.multiply"(%14, %18) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    "func.return"(%19) : (tensor<8x32xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
