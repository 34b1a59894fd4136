"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<32x64xf32>, tensor<64x16xf32>) -> tensor<32x16xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<32x64xf32>, %arg1: tensor<64x16xf32>):
    %0 = "stablehlo.dot"(%arg0, %arg1) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<32x64xf32>, tensor<64x16xf32>) -> tensor<32x16xf32>
    "func.return"(%0) : (tensor<32x16xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
