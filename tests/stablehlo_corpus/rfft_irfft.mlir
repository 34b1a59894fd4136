"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<4x16xf32>) -> tensor<4x9xcomplex<f32>>, sym_name = "fft.1", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<4x16xf32>):
    %34 = "stablehlo.fft"(%arg4) <{fft_length = array<i64: 16>, fft_type = #stablehlo<fft_type RFFT>}> : (tensor<4x16xf32>) -> tensor<4x9xcomplex<f32>>
    "func.return"(%34) : (tensor<4x9xcomplex<f32>>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x9xcomplex<f32>>, tensor<i32>) -> tensor<4x9xcomplex<f32>>, sym_name = "_pad.2", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<4x9xcomplex<f32>>, %arg3: tensor<i32>):
    "func.return"(%arg2) : (tensor<4x9xcomplex<f32>>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x9xcomplex<f32>>) -> tensor<4x16xf32>, sym_name = "fft_0.3", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<4x9xcomplex<f32>>):
    %33 = "stablehlo.fft"(%arg1) <{fft_length = array<i64: 16>, fft_type = #stablehlo<fft_type IRFFT>}> : (tensor<4x9xcomplex<f32>>) -> tensor<4x16xf32>
    "func.return"(%33) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x16xf32>) -> (tensor<4x9xcomplex<f32>>, tensor<4x9xf32>, tensor<4x16xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4x16xf32>):
    %0 = "func.call"(%arg0) <{callee = @fft.1}> : (tensor<4x16xf32>) -> tensor<4x9xcomplex<f32>>
    %1 = "stablehlo.real"(%0) : (tensor<4x9xcomplex<f32>>) -> tensor<4x9xf32>
    %2 = "stablehlo.multiply"(%1, %1) : (tensor<4x9xf32>, tensor<4x9xf32>) -> tensor<4x9xf32>
    %3 = "stablehlo.imag"(%0) : (tensor<4x9xcomplex<f32>>) -> tensor<4x9xf32>
    %4 = "stablehlo.multiply"(%3, %3) : (tensor<4x9xf32>, tensor<4x9xf32>) -> tensor<4x9xf32>
    %5 = "stablehlo.add"(%2, %4) : (tensor<4x9xf32>, tensor<4x9xf32>) -> tensor<4x9xf32>
    %6 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<9xf32>
    %7 = "stablehlo.constant"() <{value = dense<3.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<9xf32>
    %9 = "stablehlo.multiply"(%6, %8) : (tensor<9xf32>, tensor<9xf32>) -> tensor<9xf32>
    %10 = "stablehlo.cosine"(%9) : (tensor<9xf32>) -> tensor<9xf32>
    %11 = "stablehlo.multiply"(%6, %8) : (tensor<9xf32>, tensor<9xf32>) -> tensor<9xf32>
    %12 = "stablehlo.sine"(%11) : (tensor<9xf32>) -> tensor<9xf32>
    %13 = "stablehlo.negate"(%12) : (tensor<9xf32>) -> tensor<9xf32>
    %14 = "stablehlo.complex"(%10, %13) : (tensor<9xf32>, tensor<9xf32>) -> tensor<9xcomplex<f32>>
    %15 = "stablehlo.reshape"(%14) : (tensor<9xcomplex<f32>>) -> tensor<1x9xcomplex<f32>>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x9xcomplex<f32>>) -> tensor<1x9xcomplex<f32>>
    %17 = "stablehlo.reshape"(%16) : (tensor<1x9xcomplex<f32>>) -> tensor<9xcomplex<f32>>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 1>}> : (tensor<9xcomplex<f32>>) -> tensor<4x9xcomplex<f32>>
    %19 = "stablehlo.multiply"(%0, %18) : (tensor<4x9xcomplex<f32>>, tensor<4x9xcomplex<f32>>) -> tensor<4x9xcomplex<f32>>
    %20 = "stablehlo.constant"() <{value = dense<-1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<9xf32>
    %22 = "stablehlo.multiply"(%6, %21) : (tensor<9xf32>, tensor<9xf32>) -> tensor<9xf32>
    %23 = "stablehlo.exponential"(%22) : (tensor<9xf32>) -> tensor<9xf32>
    %24 = "stablehlo.convert"(%23) : (tensor<9xf32>) -> tensor<9xcomplex<f32>>
    %25 = "stablehlo.reshape"(%24) : (tensor<9xcomplex<f32>>) -> tensor<1x9xcomplex<f32>>
    %26 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x9xcomplex<f32>>) -> tensor<1x9xcomplex<f32>>
    %27 = "stablehlo.reshape"(%26) : (tensor<1x9xcomplex<f32>>) -> tensor<9xcomplex<f32>>
    %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64: 1>}> : (tensor<9xcomplex<f32>>) -> tensor<4x9xcomplex<f32>>
    %29 = "stablehlo.multiply"(%19, %28) : (tensor<4x9xcomplex<f32>>, tensor<4x9xcomplex<f32>>) -> tensor<4x9xcomplex<f32>>
    %30 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %31 = "func.call"(%29, %30) <{callee = @_pad.2}> : (tensor<4x9xcomplex<f32>>, tensor<i32>) -> tensor<4x9xcomplex<f32>>
    %32 = "func.call"(%31) <{callee = @fft_0.3}> : (tensor<4x9xcomplex<f32>>) -> tensor<4x16xf32>
    "func.return"(%0, %5, %32) : (tensor<4x9xcomplex<f32>>, tensor<4x9xf32>, tensor<4x16xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
