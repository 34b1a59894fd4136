"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<64xf32>):
    %0 = "stablehlo.tan"(%arg0) : (tensor<64xf32>) -> tensor<64xf32>
    %1 = "stablehlo.exponential_minus_one"(%arg0) : (tensor<64xf32>) -> tensor<64xf32>
    %2 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %4 = "stablehlo.multiply"(%arg0, %3) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %5 = "stablehlo.cbrt"(%4) : (tensor<64xf32>) -> tensor<64xf32>
    %6 = "mhlo.erf"(%arg0) : (tensor<64xf32>) -> tensor<64xf32>
    %7 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %9 = "stablehlo.multiply"(%arg0, %8) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %10 = "stablehlo.round_nearest_afz"(%9) : (tensor<64xf32>) -> tensor<64xf32>
    "func.return"(%0, %1, %5, %6, %10) : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
