"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>, sym_name = "fmod.1", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<8x16xf32>, %arg3: tensor<16xf32>):
    %45 = "stablehlo.reshape"(%arg3) : (tensor<16xf32>) -> tensor<1x16xf32>
    %46 = "stablehlo.broadcast_in_dim"(%45) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %47 = "stablehlo.reshape"(%46) : (tensor<1x16xf32>) -> tensor<16xf32>
    %48 = "stablehlo.broadcast_in_dim"(%47) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<8x16xf32>
    %49 = "stablehlo.remainder"(%arg2, %48) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    "func.return"(%49) : (tensor<8x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8x16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8x16xf32>, %arg1: tensor<16xf32>):
    %0 = "stablehlo.reshape"(%arg1) : (tensor<16xf32>) -> tensor<1x16xf32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %2 = "stablehlo.reshape"(%1) : (tensor<1x16xf32>) -> tensor<16xf32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<8x16xf32>
    %4 = "stablehlo.add"(%arg0, %3) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %5 = "stablehlo.reshape"(%arg1) : (tensor<16xf32>) -> tensor<1x16xf32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %7 = "stablehlo.reshape"(%6) : (tensor<1x16xf32>) -> tensor<16xf32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<8x16xf32>
    %9 = "stablehlo.subtract"(%arg0, %8) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %10 = "stablehlo.reshape"(%arg1) : (tensor<16xf32>) -> tensor<1x16xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %12 = "stablehlo.reshape"(%11) : (tensor<1x16xf32>) -> tensor<16xf32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<8x16xf32>
    %14 = "stablehlo.multiply"(%arg0, %13) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %15 = "stablehlo.reshape"(%arg1) : (tensor<16xf32>) -> tensor<1x16xf32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %17 = "stablehlo.reshape"(%16) : (tensor<1x16xf32>) -> tensor<16xf32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<8x16xf32>
    %19 = "stablehlo.divide"(%arg0, %18) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %20 = "stablehlo.reshape"(%arg1) : (tensor<16xf32>) -> tensor<1x16xf32>
    %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %22 = "stablehlo.reshape"(%21) : (tensor<1x16xf32>) -> tensor<16xf32>
    %23 = "stablehlo.broadcast_in_dim"(%22) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<8x16xf32>
    %24 = "stablehlo.maximum"(%arg0, %23) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %25 = "stablehlo.reshape"(%arg1) : (tensor<16xf32>) -> tensor<1x16xf32>
    %26 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %27 = "stablehlo.reshape"(%26) : (tensor<1x16xf32>) -> tensor<16xf32>
    %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<8x16xf32>
    %29 = "stablehlo.minimum"(%arg0, %28) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %30 = "stablehlo.abs"(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %31 = "stablehlo.constant"() <{value = dense<2.500000e-01> : tensor<f32>}> : () -> tensor<f32>
    %32 = "stablehlo.broadcast_in_dim"(%31) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x16xf32>
    %33 = "stablehlo.add"(%30, %32) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %34 = "stablehlo.reshape"(%arg1) : (tensor<16xf32>) -> tensor<1x16xf32>
    %35 = "stablehlo.broadcast_in_dim"(%34) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %36 = "stablehlo.reshape"(%35) : (tensor<1x16xf32>) -> tensor<16xf32>
    %37 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<8x16xf32>
    %38 = "stablehlo.power"(%33, %37) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %39 = "stablehlo.reshape"(%arg1) : (tensor<16xf32>) -> tensor<1x16xf32>
    %40 = "stablehlo.broadcast_in_dim"(%39) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %41 = "stablehlo.reshape"(%40) : (tensor<1x16xf32>) -> tensor<16xf32>
    %42 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<8x16xf32>
    %43 = "stablehlo.atan2"(%arg0, %42) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %44 = "func.call"(%arg0, %arg1) <{callee = @fmod.1}> : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    "func.return"(%4, %9, %14, %19, %24, %29, %38, %43, %44) : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
