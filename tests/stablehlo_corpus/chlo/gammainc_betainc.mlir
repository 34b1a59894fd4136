module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> (tensor<8xf32> {jax.result_info = "result[0]"}, tensor<8xf32> {jax.result_info = "result[1]"}, tensor<8xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.compare NE, %arg0, %arg0, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %1 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %2 = stablehlo.or %0, %1 : tensor<8xi1>
    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.compare EQ, %arg1, %3, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.compare EQ, %arg0, %5, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %8 = stablehlo.compare EQ, %arg1, %7, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %10 = stablehlo.compare LT, %arg1, %9, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %12 = stablehlo.compare LT, %arg0, %11, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %13 = stablehlo.and %6, %8 : tensor<8xi1>
    %14 = stablehlo.or %10, %12 : tensor<8xi1>
    %15 = stablehlo.or %14, %13 : tensor<8xi1>
    %16 = stablehlo.or %15, %2 : tensor<8xi1>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %18 = stablehlo.compare GE, %arg1, %17, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %19 = stablehlo.compare GT, %arg1, %arg0, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %20 = stablehlo.and %18, %19 : tensor<8xi1>
    %21 = stablehlo.log %arg1 : tensor<8xf32>
    %22 = stablehlo.multiply %arg0, %21 : tensor<8xf32>
    %23 = stablehlo.subtract %22, %arg1 : tensor<8xf32>
    %24 = chlo.lgamma %arg0 : tensor<8xf32> -> tensor<8xf32>
    %25 = stablehlo.subtract %23, %24 : tensor<8xf32>
    %cst_5 = stablehlo.constant dense<3.40282347E+38> : tensor<f32>
    %26 = stablehlo.log %cst_5 : tensor<f32>
    %27 = stablehlo.negate %26 : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %29 = stablehlo.compare LT, %25, %28, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %30 = stablehlo.exponential %25 : tensor<8xf32>
    %31 = stablehlo.or %8, %16 : tensor<8xi1>
    %32 = stablehlo.or %31, %29 : tensor<8xi1>
    %33 = stablehlo.or %32, %4 : tensor<8xi1>
    %34 = stablehlo.not %33 : tensor<8xi1>
    %35 = stablehlo.and %34, %20 : tensor<8xi1>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %36 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %37 = stablehlo.subtract %36, %arg0 : tensor<8xf32>
    %38 = stablehlo.add %arg1, %37 : tensor<8xf32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %39 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %40 = stablehlo.add %38, %39 : tensor<8xf32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %42 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %43 = stablehlo.add %arg1, %42 : tensor<8xf32>
    %44 = stablehlo.multiply %40, %arg1 : tensor<8xf32>
    %45 = stablehlo.divide %43, %44 : tensor<8xf32>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %50 = stablehlo.negate %arg1 : tensor<8xf32>
    %51 = stablehlo.multiply %45, %50 : tensor<8xf32>
    %52 = stablehlo.subtract %49, %51 : tensor<8xf32>
    %53 = stablehlo.divide %52, %44 : tensor<8xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54:15 = stablehlo.while(%iterArg = %35, %iterArg_74 = %45, %iterArg_75 = %46, %iterArg_76 = %37, %iterArg_77 = %40, %iterArg_78 = %cst_14, %iterArg_79 = %43, %iterArg_80 = %44, %iterArg_81 = %41, %iterArg_82 = %arg1, %iterArg_83 = %47, %iterArg_84 = %48, %iterArg_85 = %49, %iterArg_86 = %50, %iterArg_87 = %53) : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    cond {
      %cst_88 = stablehlo.constant dense<2.000000e+03> : tensor<f32>
      %250 = stablehlo.compare LT, %iterArg_78, %cst_88, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %c_89 = stablehlo.constant dense<false> : tensor<i1>
      %251 = stablehlo.reduce(%iterArg init: %c_89) applies stablehlo.or across dimensions = [0] : (tensor<8xi1>, tensor<i1>) -> tensor<i1>
      %252 = stablehlo.and %250, %251 : tensor<i1>
      stablehlo.return %252 : tensor<i1>
    } do {
      %cst_88 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %250 = stablehlo.add %iterArg_78, %cst_88 : tensor<f32>
      %cst_89 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %251 = stablehlo.broadcast_in_dim %cst_89, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %252 = stablehlo.add %iterArg_76, %251 : tensor<8xf32>
      %cst_90 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %253 = stablehlo.broadcast_in_dim %cst_90, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %254 = stablehlo.add %iterArg_77, %253 : tensor<8xf32>
      %255 = stablehlo.broadcast_in_dim %250, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %256 = stablehlo.multiply %252, %255 : tensor<8xf32>
      %257 = stablehlo.multiply %iterArg_79, %254 : tensor<8xf32>
      %258 = stablehlo.multiply %iterArg_81, %256 : tensor<8xf32>
      %259 = stablehlo.subtract %257, %258 : tensor<8xf32>
      %260 = stablehlo.multiply %iterArg_80, %254 : tensor<8xf32>
      %261 = stablehlo.multiply %iterArg_82, %256 : tensor<8xf32>
      %262 = stablehlo.subtract %260, %261 : tensor<8xf32>
      %cst_91 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %263 = stablehlo.broadcast_in_dim %cst_91, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %264 = stablehlo.compare NE, %262, %263, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %265 = stablehlo.divide %259, %262 : tensor<8xf32>
      %266 = stablehlo.subtract %iterArg_74, %265 : tensor<8xf32>
      %267 = stablehlo.divide %266, %265 : tensor<8xf32>
      %268 = stablehlo.abs %267 : tensor<8xf32>
      %cst_92 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %269 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %270 = stablehlo.select %264, %268, %269 : tensor<8xi1>, tensor<8xf32>
      %271 = stablehlo.select %264, %265, %iterArg_74 : tensor<8xi1>, tensor<8xf32>
      %272 = stablehlo.multiply %iterArg_85, %254 : tensor<8xf32>
      %273 = stablehlo.subtract %272, %iterArg_79 : tensor<8xf32>
      %274 = stablehlo.multiply %iterArg_83, %256 : tensor<8xf32>
      %275 = stablehlo.subtract %273, %274 : tensor<8xf32>
      %276 = stablehlo.broadcast_in_dim %250, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %277 = stablehlo.multiply %iterArg_81, %276 : tensor<8xf32>
      %278 = stablehlo.add %275, %277 : tensor<8xf32>
      %279 = stablehlo.multiply %iterArg_86, %254 : tensor<8xf32>
      %280 = stablehlo.subtract %279, %iterArg_80 : tensor<8xf32>
      %281 = stablehlo.multiply %iterArg_84, %256 : tensor<8xf32>
      %282 = stablehlo.subtract %280, %281 : tensor<8xf32>
      %283 = stablehlo.broadcast_in_dim %250, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %284 = stablehlo.multiply %iterArg_82, %283 : tensor<8xf32>
      %285 = stablehlo.add %282, %284 : tensor<8xf32>
      %286 = stablehlo.multiply %271, %285 : tensor<8xf32>
      %287 = stablehlo.subtract %278, %286 : tensor<8xf32>
      %288 = stablehlo.divide %287, %262 : tensor<8xf32>
      %289 = stablehlo.select %264, %288, %iterArg_87 : tensor<8xi1>, tensor<8xf32>
      %290 = stablehlo.subtract %289, %iterArg_87 : tensor<8xf32>
      %291 = stablehlo.abs %290 : tensor<8xf32>
      %cst_93 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %292 = stablehlo.broadcast_in_dim %cst_93, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %293 = stablehlo.select %264, %291, %292 : tensor<8xi1>, tensor<8xf32>
      %294 = stablehlo.abs %259 : tensor<8xf32>
      %cst_94 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %cst_95 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %295 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<f32>) -> tensor<f32>
      %296 = stablehlo.divide %295, %cst_94 : tensor<f32>
      %297 = stablehlo.broadcast_in_dim %296, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %298 = stablehlo.compare GT, %294, %297, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %cst_96 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %299 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %300 = stablehlo.multiply %iterArg_79, %299 : tensor<8xf32>
      %301 = stablehlo.select %298, %300, %iterArg_79 : tensor<8xi1>, tensor<8xf32>
      %cst_97 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %302 = stablehlo.broadcast_in_dim %cst_97, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %303 = stablehlo.multiply %259, %302 : tensor<8xf32>
      %304 = stablehlo.select %298, %303, %259 : tensor<8xi1>, tensor<8xf32>
      %cst_98 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %305 = stablehlo.broadcast_in_dim %cst_98, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %306 = stablehlo.multiply %iterArg_80, %305 : tensor<8xf32>
      %307 = stablehlo.select %298, %306, %iterArg_80 : tensor<8xi1>, tensor<8xf32>
      %cst_99 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %308 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %309 = stablehlo.multiply %262, %308 : tensor<8xf32>
      %310 = stablehlo.select %298, %309, %262 : tensor<8xi1>, tensor<8xf32>
      %cst_100 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %311 = stablehlo.broadcast_in_dim %cst_100, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %312 = stablehlo.multiply %iterArg_85, %311 : tensor<8xf32>
      %313 = stablehlo.select %298, %312, %iterArg_85 : tensor<8xi1>, tensor<8xf32>
      %cst_101 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %314 = stablehlo.broadcast_in_dim %cst_101, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %315 = stablehlo.multiply %iterArg_86, %314 : tensor<8xf32>
      %316 = stablehlo.select %298, %315, %iterArg_86 : tensor<8xi1>, tensor<8xf32>
      %cst_102 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %317 = stablehlo.broadcast_in_dim %cst_102, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %318 = stablehlo.multiply %278, %317 : tensor<8xf32>
      %319 = stablehlo.select %298, %318, %278 : tensor<8xi1>, tensor<8xf32>
      %cst_103 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %320 = stablehlo.broadcast_in_dim %cst_103, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %321 = stablehlo.multiply %285, %320 : tensor<8xf32>
      %322 = stablehlo.select %298, %321, %285 : tensor<8xi1>, tensor<8xf32>
      %cst_104 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %323 = stablehlo.broadcast_in_dim %cst_104, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %324 = stablehlo.compare GT, %270, %323, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %325 = stablehlo.and %iterArg, %324 : tensor<8xi1>
      %326 = stablehlo.select %iterArg, %271, %iterArg_74 : tensor<8xi1>, tensor<8xf32>
      %327 = stablehlo.select %iterArg, %270, %iterArg_75 : tensor<8xi1>, tensor<8xf32>
      %328 = stablehlo.select %iterArg, %252, %iterArg_76 : tensor<8xi1>, tensor<8xf32>
      %329 = stablehlo.select %iterArg, %254, %iterArg_77 : tensor<8xi1>, tensor<8xf32>
      %330 = stablehlo.select %iterArg, %304, %iterArg_79 : tensor<8xi1>, tensor<8xf32>
      %331 = stablehlo.select %iterArg, %310, %iterArg_80 : tensor<8xi1>, tensor<8xf32>
      %332 = stablehlo.select %iterArg, %301, %iterArg_81 : tensor<8xi1>, tensor<8xf32>
      %333 = stablehlo.select %iterArg, %307, %iterArg_82 : tensor<8xi1>, tensor<8xf32>
      %334 = stablehlo.select %iterArg, %313, %iterArg_83 : tensor<8xi1>, tensor<8xf32>
      %335 = stablehlo.select %iterArg, %316, %iterArg_84 : tensor<8xi1>, tensor<8xf32>
      %336 = stablehlo.select %iterArg, %319, %iterArg_85 : tensor<8xi1>, tensor<8xf32>
      %337 = stablehlo.select %iterArg, %322, %iterArg_86 : tensor<8xi1>, tensor<8xf32>
      %338 = stablehlo.select %iterArg, %289, %iterArg_87 : tensor<8xi1>, tensor<8xf32>
      stablehlo.return %325, %326, %327, %328, %329, %250, %330, %331, %332, %333, %334, %335, %336, %337, %338 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    }
    %55 = stablehlo.multiply %54#1, %30 : tensor<8xf32>
    %cst_15 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %56 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %57 = stablehlo.subtract %56, %55 : tensor<8xf32>
    %58 = stablehlo.not %20 : tensor<8xi1>
    %59 = stablehlo.and %34, %58 : tensor<8xi1>
    %cst_16 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %60 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_17 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %61 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %62 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %63 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %64:7 = stablehlo.while(%iterArg = %59, %iterArg_74 = %arg0, %iterArg_75 = %60, %iterArg_76 = %61, %iterArg_77 = %arg1, %iterArg_78 = %62, %iterArg_79 = %63) : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    cond {
      %c_80 = stablehlo.constant dense<false> : tensor<i1>
      %250 = stablehlo.reduce(%iterArg init: %c_80) applies stablehlo.or across dimensions = [0] : (tensor<8xi1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %250 : tensor<i1>
    } do {
      %cst_80 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %250 = stablehlo.broadcast_in_dim %cst_80, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %251 = stablehlo.add %iterArg_74, %250 : tensor<8xf32>
      %252 = stablehlo.divide %iterArg_77, %251 : tensor<8xf32>
      %253 = stablehlo.multiply %iterArg_78, %252 : tensor<8xf32>
      %254 = stablehlo.multiply %iterArg_75, %iterArg_77 : tensor<8xf32>
      %255 = stablehlo.multiply %251, %251 : tensor<8xf32>
      %256 = stablehlo.divide %254, %255 : tensor<8xf32>
      %257 = stablehlo.subtract %253, %256 : tensor<8xf32>
      %258 = stablehlo.add %iterArg_79, %257 : tensor<8xf32>
      %259 = stablehlo.divide %iterArg_77, %251 : tensor<8xf32>
      %260 = stablehlo.multiply %iterArg_75, %259 : tensor<8xf32>
      %261 = stablehlo.add %iterArg_76, %260 : tensor<8xf32>
      %262 = stablehlo.divide %260, %261 : tensor<8xf32>
      %cst_81 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %263 = stablehlo.broadcast_in_dim %cst_81, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %264 = stablehlo.compare GT, %262, %263, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %265 = stablehlo.and %iterArg, %264 : tensor<8xi1>
      %266 = stablehlo.select %iterArg, %251, %iterArg_74 : tensor<8xi1>, tensor<8xf32>
      %267 = stablehlo.select %iterArg, %260, %iterArg_75 : tensor<8xi1>, tensor<8xf32>
      %268 = stablehlo.select %iterArg, %261, %iterArg_76 : tensor<8xi1>, tensor<8xf32>
      %269 = stablehlo.select %iterArg, %iterArg_77, %iterArg_77 : tensor<8xi1>, tensor<8xf32>
      %270 = stablehlo.select %iterArg, %257, %iterArg_78 : tensor<8xi1>, tensor<8xf32>
      %271 = stablehlo.select %iterArg, %258, %iterArg_79 : tensor<8xi1>, tensor<8xf32>
      stablehlo.return %265, %266, %267, %268, %269, %270, %271 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    }
    %65 = stablehlo.multiply %64#3, %30 : tensor<8xf32>
    %66 = stablehlo.divide %65, %arg0 : tensor<8xf32>
    %67 = stablehlo.select %20, %57, %66 : tensor<8xi1>, tensor<8xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %68 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %69 = stablehlo.select %8, %68, %67 : tensor<8xi1>, tensor<8xf32>
    %cst_21 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %71 = stablehlo.select %4, %70, %69 : tensor<8xi1>, tensor<8xf32>
    %cst_22 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %73 = stablehlo.select %16, %72, %71 : tensor<8xi1>, tensor<8xf32>
    %74 = stablehlo.compare NE, %arg0, %arg0, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %75 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %76 = stablehlo.or %74, %75 : tensor<8xi1>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %77 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %78 = stablehlo.compare EQ, %arg0, %77, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %79 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %80 = stablehlo.compare EQ, %arg1, %79, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_25 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %81 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %82 = stablehlo.compare EQ, %arg1, %81, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_26 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %83 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %84 = stablehlo.compare LT, %arg1, %83, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %85 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %86 = stablehlo.compare LT, %arg0, %85, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %87 = stablehlo.and %78, %80 : tensor<8xi1>
    %88 = stablehlo.or %84, %86 : tensor<8xi1>
    %89 = stablehlo.or %88, %87 : tensor<8xi1>
    %90 = stablehlo.or %89, %76 : tensor<8xi1>
    %cst_28 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %91 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %92 = stablehlo.compare LT, %arg1, %91, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %93 = stablehlo.compare LT, %arg1, %arg0, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %94 = stablehlo.or %92, %93 : tensor<8xi1>
    %95 = stablehlo.log %arg1 : tensor<8xf32>
    %96 = stablehlo.multiply %arg0, %95 : tensor<8xf32>
    %97 = stablehlo.subtract %96, %arg1 : tensor<8xf32>
    %98 = chlo.lgamma %arg0 : tensor<8xf32> -> tensor<8xf32>
    %99 = stablehlo.subtract %97, %98 : tensor<8xf32>
    %cst_29 = stablehlo.constant dense<3.40282347E+38> : tensor<f32>
    %100 = stablehlo.log %cst_29 : tensor<f32>
    %101 = stablehlo.negate %100 : tensor<f32>
    %102 = stablehlo.broadcast_in_dim %101, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %103 = stablehlo.compare LT, %99, %102, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %104 = stablehlo.or %90, %103 : tensor<8xi1>
    %105 = stablehlo.or %104, %82 : tensor<8xi1>
    %106 = stablehlo.or %105, %78 : tensor<8xi1>
    %107 = stablehlo.not %106 : tensor<8xi1>
    %108 = stablehlo.exponential %99 : tensor<8xf32>
    %109 = stablehlo.and %107, %94 : tensor<8xi1>
    %cst_30 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %110 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_31 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %111 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %112 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_33 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %113 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %114:7 = stablehlo.while(%iterArg = %109, %iterArg_74 = %arg0, %iterArg_75 = %110, %iterArg_76 = %111, %iterArg_77 = %arg1, %iterArg_78 = %112, %iterArg_79 = %113) : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    cond {
      %c_80 = stablehlo.constant dense<false> : tensor<i1>
      %250 = stablehlo.reduce(%iterArg init: %c_80) applies stablehlo.or across dimensions = [0] : (tensor<8xi1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %250 : tensor<i1>
    } do {
      %cst_80 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %250 = stablehlo.broadcast_in_dim %cst_80, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %251 = stablehlo.add %iterArg_74, %250 : tensor<8xf32>
      %252 = stablehlo.divide %iterArg_77, %251 : tensor<8xf32>
      %253 = stablehlo.multiply %iterArg_78, %252 : tensor<8xf32>
      %254 = stablehlo.multiply %iterArg_75, %iterArg_77 : tensor<8xf32>
      %255 = stablehlo.multiply %251, %251 : tensor<8xf32>
      %256 = stablehlo.divide %254, %255 : tensor<8xf32>
      %257 = stablehlo.subtract %253, %256 : tensor<8xf32>
      %258 = stablehlo.add %iterArg_79, %257 : tensor<8xf32>
      %259 = stablehlo.divide %iterArg_77, %251 : tensor<8xf32>
      %260 = stablehlo.multiply %iterArg_75, %259 : tensor<8xf32>
      %261 = stablehlo.add %iterArg_76, %260 : tensor<8xf32>
      %262 = stablehlo.divide %260, %261 : tensor<8xf32>
      %cst_81 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %263 = stablehlo.broadcast_in_dim %cst_81, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %264 = stablehlo.compare GT, %262, %263, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %265 = stablehlo.and %iterArg, %264 : tensor<8xi1>
      %266 = stablehlo.select %iterArg, %251, %iterArg_74 : tensor<8xi1>, tensor<8xf32>
      %267 = stablehlo.select %iterArg, %260, %iterArg_75 : tensor<8xi1>, tensor<8xf32>
      %268 = stablehlo.select %iterArg, %261, %iterArg_76 : tensor<8xi1>, tensor<8xf32>
      %269 = stablehlo.select %iterArg, %iterArg_77, %iterArg_77 : tensor<8xi1>, tensor<8xf32>
      %270 = stablehlo.select %iterArg, %257, %iterArg_78 : tensor<8xi1>, tensor<8xf32>
      %271 = stablehlo.select %iterArg, %258, %iterArg_79 : tensor<8xi1>, tensor<8xf32>
      stablehlo.return %265, %266, %267, %268, %269, %270, %271 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    }
    %115 = stablehlo.multiply %114#3, %108 : tensor<8xf32>
    %116 = stablehlo.divide %115, %arg0 : tensor<8xf32>
    %117 = stablehlo.not %94 : tensor<8xi1>
    %118 = stablehlo.and %107, %117 : tensor<8xi1>
    %cst_34 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %119 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %120 = stablehlo.subtract %119, %arg0 : tensor<8xf32>
    %121 = stablehlo.add %arg1, %120 : tensor<8xf32>
    %cst_35 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %122 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %123 = stablehlo.add %121, %122 : tensor<8xf32>
    %cst_36 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %124 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_37 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %125 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %126 = stablehlo.add %arg1, %125 : tensor<8xf32>
    %127 = stablehlo.multiply %123, %arg1 : tensor<8xf32>
    %128 = stablehlo.divide %126, %127 : tensor<8xf32>
    %cst_38 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %129 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_39 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %130 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_40 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %131 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_41 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %132 = stablehlo.broadcast_in_dim %cst_41, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %133 = stablehlo.negate %arg1 : tensor<8xf32>
    %134 = stablehlo.multiply %128, %133 : tensor<8xf32>
    %135 = stablehlo.subtract %132, %134 : tensor<8xf32>
    %136 = stablehlo.divide %135, %127 : tensor<8xf32>
    %cst_42 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %137:15 = stablehlo.while(%iterArg = %118, %iterArg_74 = %128, %iterArg_75 = %129, %iterArg_76 = %120, %iterArg_77 = %123, %iterArg_78 = %cst_42, %iterArg_79 = %126, %iterArg_80 = %127, %iterArg_81 = %124, %iterArg_82 = %arg1, %iterArg_83 = %130, %iterArg_84 = %131, %iterArg_85 = %132, %iterArg_86 = %133, %iterArg_87 = %136) : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    cond {
      %cst_88 = stablehlo.constant dense<2.000000e+03> : tensor<f32>
      %250 = stablehlo.compare LT, %iterArg_78, %cst_88, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %c_89 = stablehlo.constant dense<false> : tensor<i1>
      %251 = stablehlo.reduce(%iterArg init: %c_89) applies stablehlo.or across dimensions = [0] : (tensor<8xi1>, tensor<i1>) -> tensor<i1>
      %252 = stablehlo.and %250, %251 : tensor<i1>
      stablehlo.return %252 : tensor<i1>
    } do {
      %cst_88 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %250 = stablehlo.add %iterArg_78, %cst_88 : tensor<f32>
      %cst_89 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %251 = stablehlo.broadcast_in_dim %cst_89, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %252 = stablehlo.add %iterArg_76, %251 : tensor<8xf32>
      %cst_90 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %253 = stablehlo.broadcast_in_dim %cst_90, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %254 = stablehlo.add %iterArg_77, %253 : tensor<8xf32>
      %255 = stablehlo.broadcast_in_dim %250, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %256 = stablehlo.multiply %252, %255 : tensor<8xf32>
      %257 = stablehlo.multiply %iterArg_79, %254 : tensor<8xf32>
      %258 = stablehlo.multiply %iterArg_81, %256 : tensor<8xf32>
      %259 = stablehlo.subtract %257, %258 : tensor<8xf32>
      %260 = stablehlo.multiply %iterArg_80, %254 : tensor<8xf32>
      %261 = stablehlo.multiply %iterArg_82, %256 : tensor<8xf32>
      %262 = stablehlo.subtract %260, %261 : tensor<8xf32>
      %cst_91 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %263 = stablehlo.broadcast_in_dim %cst_91, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %264 = stablehlo.compare NE, %262, %263, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %265 = stablehlo.divide %259, %262 : tensor<8xf32>
      %266 = stablehlo.subtract %iterArg_74, %265 : tensor<8xf32>
      %267 = stablehlo.divide %266, %265 : tensor<8xf32>
      %268 = stablehlo.abs %267 : tensor<8xf32>
      %cst_92 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %269 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %270 = stablehlo.select %264, %268, %269 : tensor<8xi1>, tensor<8xf32>
      %271 = stablehlo.select %264, %265, %iterArg_74 : tensor<8xi1>, tensor<8xf32>
      %272 = stablehlo.multiply %iterArg_85, %254 : tensor<8xf32>
      %273 = stablehlo.subtract %272, %iterArg_79 : tensor<8xf32>
      %274 = stablehlo.multiply %iterArg_83, %256 : tensor<8xf32>
      %275 = stablehlo.subtract %273, %274 : tensor<8xf32>
      %276 = stablehlo.broadcast_in_dim %250, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %277 = stablehlo.multiply %iterArg_81, %276 : tensor<8xf32>
      %278 = stablehlo.add %275, %277 : tensor<8xf32>
      %279 = stablehlo.multiply %iterArg_86, %254 : tensor<8xf32>
      %280 = stablehlo.subtract %279, %iterArg_80 : tensor<8xf32>
      %281 = stablehlo.multiply %iterArg_84, %256 : tensor<8xf32>
      %282 = stablehlo.subtract %280, %281 : tensor<8xf32>
      %283 = stablehlo.broadcast_in_dim %250, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %284 = stablehlo.multiply %iterArg_82, %283 : tensor<8xf32>
      %285 = stablehlo.add %282, %284 : tensor<8xf32>
      %286 = stablehlo.multiply %271, %285 : tensor<8xf32>
      %287 = stablehlo.subtract %278, %286 : tensor<8xf32>
      %288 = stablehlo.divide %287, %262 : tensor<8xf32>
      %289 = stablehlo.select %264, %288, %iterArg_87 : tensor<8xi1>, tensor<8xf32>
      %290 = stablehlo.subtract %289, %iterArg_87 : tensor<8xf32>
      %291 = stablehlo.abs %290 : tensor<8xf32>
      %cst_93 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %292 = stablehlo.broadcast_in_dim %cst_93, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %293 = stablehlo.select %264, %291, %292 : tensor<8xi1>, tensor<8xf32>
      %294 = stablehlo.abs %259 : tensor<8xf32>
      %cst_94 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %cst_95 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %295 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<f32>) -> tensor<f32>
      %296 = stablehlo.divide %295, %cst_94 : tensor<f32>
      %297 = stablehlo.broadcast_in_dim %296, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %298 = stablehlo.compare GT, %294, %297, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %cst_96 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %299 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %300 = stablehlo.multiply %iterArg_79, %299 : tensor<8xf32>
      %301 = stablehlo.select %298, %300, %iterArg_79 : tensor<8xi1>, tensor<8xf32>
      %cst_97 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %302 = stablehlo.broadcast_in_dim %cst_97, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %303 = stablehlo.multiply %259, %302 : tensor<8xf32>
      %304 = stablehlo.select %298, %303, %259 : tensor<8xi1>, tensor<8xf32>
      %cst_98 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %305 = stablehlo.broadcast_in_dim %cst_98, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %306 = stablehlo.multiply %iterArg_80, %305 : tensor<8xf32>
      %307 = stablehlo.select %298, %306, %iterArg_80 : tensor<8xi1>, tensor<8xf32>
      %cst_99 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %308 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %309 = stablehlo.multiply %262, %308 : tensor<8xf32>
      %310 = stablehlo.select %298, %309, %262 : tensor<8xi1>, tensor<8xf32>
      %cst_100 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %311 = stablehlo.broadcast_in_dim %cst_100, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %312 = stablehlo.multiply %iterArg_85, %311 : tensor<8xf32>
      %313 = stablehlo.select %298, %312, %iterArg_85 : tensor<8xi1>, tensor<8xf32>
      %cst_101 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %314 = stablehlo.broadcast_in_dim %cst_101, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %315 = stablehlo.multiply %iterArg_86, %314 : tensor<8xf32>
      %316 = stablehlo.select %298, %315, %iterArg_86 : tensor<8xi1>, tensor<8xf32>
      %cst_102 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %317 = stablehlo.broadcast_in_dim %cst_102, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %318 = stablehlo.multiply %278, %317 : tensor<8xf32>
      %319 = stablehlo.select %298, %318, %278 : tensor<8xi1>, tensor<8xf32>
      %cst_103 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %320 = stablehlo.broadcast_in_dim %cst_103, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %321 = stablehlo.multiply %285, %320 : tensor<8xf32>
      %322 = stablehlo.select %298, %321, %285 : tensor<8xi1>, tensor<8xf32>
      %cst_104 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
      %323 = stablehlo.broadcast_in_dim %cst_104, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %324 = stablehlo.compare GT, %270, %323, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %325 = stablehlo.and %iterArg, %324 : tensor<8xi1>
      %326 = stablehlo.select %iterArg, %271, %iterArg_74 : tensor<8xi1>, tensor<8xf32>
      %327 = stablehlo.select %iterArg, %270, %iterArg_75 : tensor<8xi1>, tensor<8xf32>
      %328 = stablehlo.select %iterArg, %252, %iterArg_76 : tensor<8xi1>, tensor<8xf32>
      %329 = stablehlo.select %iterArg, %254, %iterArg_77 : tensor<8xi1>, tensor<8xf32>
      %330 = stablehlo.select %iterArg, %304, %iterArg_79 : tensor<8xi1>, tensor<8xf32>
      %331 = stablehlo.select %iterArg, %310, %iterArg_80 : tensor<8xi1>, tensor<8xf32>
      %332 = stablehlo.select %iterArg, %301, %iterArg_81 : tensor<8xi1>, tensor<8xf32>
      %333 = stablehlo.select %iterArg, %307, %iterArg_82 : tensor<8xi1>, tensor<8xf32>
      %334 = stablehlo.select %iterArg, %313, %iterArg_83 : tensor<8xi1>, tensor<8xf32>
      %335 = stablehlo.select %iterArg, %316, %iterArg_84 : tensor<8xi1>, tensor<8xf32>
      %336 = stablehlo.select %iterArg, %319, %iterArg_85 : tensor<8xi1>, tensor<8xf32>
      %337 = stablehlo.select %iterArg, %322, %iterArg_86 : tensor<8xi1>, tensor<8xf32>
      %338 = stablehlo.select %iterArg, %289, %iterArg_87 : tensor<8xi1>, tensor<8xf32>
      stablehlo.return %325, %326, %327, %328, %329, %250, %330, %331, %332, %333, %334, %335, %336, %337, %338 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    }
    %138 = stablehlo.multiply %137#1, %108 : tensor<8xf32>
    %cst_43 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %139 = stablehlo.broadcast_in_dim %cst_43, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %140 = stablehlo.subtract %139, %116 : tensor<8xf32>
    %141 = stablehlo.select %94, %140, %138 : tensor<8xi1>, tensor<8xf32>
    %142 = stablehlo.or %82, %78 : tensor<8xi1>
    %cst_44 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %143 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %144 = stablehlo.select %142, %143, %141 : tensor<8xi1>, tensor<8xf32>
    %cst_45 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %145 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %146 = stablehlo.select %90, %145, %144 : tensor<8xi1>, tensor<8xf32>
    %cst_46 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %147 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %148 = stablehlo.add %arg0, %147 : tensor<8xf32>
    %cst_47 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %149 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %150 = stablehlo.divide %arg1, %149 : tensor<8xf32>
    %cst_48 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %151 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %152 = stablehlo.compare EQ, %arg0, %151, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_49 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %153 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %154 = stablehlo.compare EQ, %148, %153, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %155 = stablehlo.or %152, %154 : tensor<8xi1>
    %cst_50 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %156 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %157 = stablehlo.compare EQ, %148, %156, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_51 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %158 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %159 = stablehlo.compare EQ, %arg0, %158, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %160 = stablehlo.or %157, %159 : tensor<8xi1>
    %cst_52 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %161 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %162 = stablehlo.compare EQ, %150, %161, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_53 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %163 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %164 = stablehlo.compare EQ, %150, %163, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %165 = stablehlo.not %162 : tensor<8xi1>
    %166 = stablehlo.not %164 : tensor<8xi1>
    %167 = stablehlo.compare NE, %arg0, %arg0, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %168 = stablehlo.compare NE, %148, %148, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %169 = stablehlo.or %167, %168 : tensor<8xi1>
    %170 = stablehlo.compare NE, %150, %150, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %171 = stablehlo.or %169, %170 : tensor<8xi1>
    %172 = stablehlo.and %160, %166 : tensor<8xi1>
    %173 = stablehlo.and %155, %162 : tensor<8xi1>
    %174 = stablehlo.or %172, %173 : tensor<8xi1>
    %175 = stablehlo.and %155, %165 : tensor<8xi1>
    %176 = stablehlo.and %160, %164 : tensor<8xi1>
    %177 = stablehlo.or %175, %176 : tensor<8xi1>
    %cst_54 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %178 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %179 = stablehlo.compare LT, %arg0, %178, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_55 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %180 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %181 = stablehlo.compare LT, %148, %180, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %182 = stablehlo.or %179, %181 : tensor<8xi1>
    %cst_56 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %183 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %184 = stablehlo.compare LT, %150, %183, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %185 = stablehlo.or %182, %184 : tensor<8xi1>
    %cst_57 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %186 = stablehlo.broadcast_in_dim %cst_57, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %187 = stablehlo.compare GT, %150, %186, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %188 = stablehlo.or %185, %187 : tensor<8xi1>
    %189 = stablehlo.and %155, %160 : tensor<8xi1>
    %190 = stablehlo.or %189, %171 : tensor<8xi1>
    %191 = stablehlo.or %188, %190 : tensor<8xi1>
    %cst_58 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %192 = stablehlo.broadcast_in_dim %cst_58, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %193 = stablehlo.add %arg0, %192 : tensor<8xf32>
    %194 = stablehlo.add %arg0, %148 : tensor<8xf32>
    %cst_59 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %195 = stablehlo.broadcast_in_dim %cst_59, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %196 = stablehlo.add %194, %195 : tensor<8xf32>
    %197 = stablehlo.divide %193, %196 : tensor<8xf32>
    %198 = stablehlo.compare LT, %150, %197, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %199 = stablehlo.select %198, %arg0, %148 : tensor<8xi1>, tensor<8xf32>
    %200 = stablehlo.select %198, %148, %arg0 : tensor<8xi1>, tensor<8xf32>
    %cst_60 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %201 = stablehlo.broadcast_in_dim %cst_60, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %202 = stablehlo.subtract %201, %150 : tensor<8xf32>
    %203 = stablehlo.select %198, %150, %202 : tensor<8xi1>, tensor<8xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %204 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %c_61 = stablehlo.constant dense<0> : tensor<i32>
    %205 = stablehlo.broadcast_in_dim %c_61, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %206 = stablehlo.compare EQ, %204, %205, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %cst_62 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %207 = stablehlo.broadcast_in_dim %cst_62, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_63 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %208 = stablehlo.broadcast_in_dim %cst_63, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %209 = stablehlo.select %206, %207, %208 : tensor<8xi1>, tensor<8xf32>
    %210 = stablehlo.abs %209 : tensor<8xf32>
    %cst_64 = stablehlo.constant dense<5.96046448E-8> : tensor<f32>
    %211 = stablehlo.broadcast_in_dim %cst_64, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %212 = stablehlo.compare LT, %210, %211, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_65 = stablehlo.constant dense<5.96046448E-8> : tensor<f32>
    %213 = stablehlo.broadcast_in_dim %cst_65, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %214 = stablehlo.select %212, %213, %209 : tensor<8xi1>, tensor<8xf32>
    %cst_66 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %215 = stablehlo.broadcast_in_dim %cst_66, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %c_67 = stablehlo.constant dense<1> : tensor<i32>
    %c_68 = stablehlo.constant dense<true> : tensor<i1>
    %216:8 = stablehlo.while(%iterArg = %199, %iterArg_74 = %200, %iterArg_75 = %203, %iterArg_76 = %c_67, %iterArg_77 = %c_68, %iterArg_78 = %214, %iterArg_79 = %215, %iterArg_80 = %214) : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    cond {
      %c_81 = stablehlo.constant dense<200> : tensor<i32>
      %250 = stablehlo.compare LT, %iterArg_76, %c_81, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %251 = stablehlo.and %250, %iterArg_77 : tensor<i1>
      stablehlo.return %251 : tensor<i1>
    } do {
      %250 = stablehlo.broadcast_in_dim %iterArg_76, dims = [] : (tensor<i32>) -> tensor<8xi32>
      %c_81 = stablehlo.constant dense<2> : tensor<i32>
      %251 = stablehlo.broadcast_in_dim %c_81, dims = [] : (tensor<i32>) -> tensor<8xi32>
      %252 = func.call @remainder(%250, %251) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
      %c_82 = stablehlo.constant dense<0> : tensor<i32>
      %253 = stablehlo.broadcast_in_dim %c_82, dims = [] : (tensor<i32>) -> tensor<8xi32>
      %254 = stablehlo.compare EQ, %252, %253, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
      %c_83 = stablehlo.constant dense<1> : tensor<i32>
      %255 = stablehlo.broadcast_in_dim %c_83, dims = [] : (tensor<i32>) -> tensor<8xi32>
      %256 = stablehlo.compare EQ, %250, %255, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
      %c_84 = stablehlo.constant dense<1> : tensor<i32>
      %257 = stablehlo.broadcast_in_dim %c_84, dims = [] : (tensor<i32>) -> tensor<8xi32>
      %258 = stablehlo.subtract %250, %257 : tensor<8xi32>
      %c_85 = stablehlo.constant dense<2> : tensor<i32>
      %259 = stablehlo.broadcast_in_dim %c_85, dims = [] : (tensor<i32>) -> tensor<8xi32>
      %260 = func.call @floor_divide(%258, %259) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
      %c_86 = stablehlo.constant dense<0> : tensor<i32>
      %261 = stablehlo.broadcast_in_dim %c_86, dims = [] : (tensor<i32>) -> tensor<8xi32>
      %262 = stablehlo.compare EQ, %260, %261, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
      %263 = stablehlo.convert %260 : (tensor<8xi32>) -> tensor<8xf32>
      %cst_87 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %264 = stablehlo.broadcast_in_dim %cst_87, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %cst_88 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %265 = stablehlo.broadcast_in_dim %cst_88, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %266 = stablehlo.add %iterArg, %iterArg_74 : tensor<8xf32>
      %267 = stablehlo.negate %266 : tensor<8xf32>
      %268 = stablehlo.multiply %267, %iterArg_75 : tensor<8xf32>
      %269 = stablehlo.add %iterArg, %264 : tensor<8xf32>
      %270 = stablehlo.divide %268, %269 : tensor<8xf32>
      %271 = stablehlo.add %iterArg, %263 : tensor<8xf32>
      %272 = stablehlo.negate %271 : tensor<8xf32>
      %273 = stablehlo.add %iterArg, %iterArg_74 : tensor<8xf32>
      %274 = stablehlo.add %273, %263 : tensor<8xf32>
      %275 = stablehlo.multiply %272, %274 : tensor<8xf32>
      %276 = stablehlo.multiply %275, %iterArg_75 : tensor<8xf32>
      %277 = stablehlo.multiply %265, %263 : tensor<8xf32>
      %278 = stablehlo.add %iterArg, %277 : tensor<8xf32>
      %279 = stablehlo.multiply %265, %263 : tensor<8xf32>
      %280 = stablehlo.add %iterArg, %279 : tensor<8xf32>
      %281 = stablehlo.add %280, %264 : tensor<8xf32>
      %282 = stablehlo.multiply %278, %281 : tensor<8xf32>
      %283 = stablehlo.divide %276, %282 : tensor<8xf32>
      %284 = stablehlo.select %262, %270, %283 : tensor<8xi1>, tensor<8xf32>
      %285 = stablehlo.subtract %iterArg_74, %263 : tensor<8xf32>
      %286 = stablehlo.multiply %263, %285 : tensor<8xf32>
      %287 = stablehlo.multiply %286, %iterArg_75 : tensor<8xf32>
      %288 = stablehlo.multiply %265, %263 : tensor<8xf32>
      %289 = stablehlo.add %iterArg, %288 : tensor<8xf32>
      %290 = stablehlo.subtract %289, %264 : tensor<8xf32>
      %291 = stablehlo.multiply %265, %263 : tensor<8xf32>
      %292 = stablehlo.add %iterArg, %291 : tensor<8xf32>
      %293 = stablehlo.multiply %290, %292 : tensor<8xf32>
      %294 = stablehlo.divide %287, %293 : tensor<8xf32>
      %cst_89 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %295 = stablehlo.broadcast_in_dim %cst_89, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %296 = stablehlo.select %254, %284, %294 : tensor<8xi1>, tensor<8xf32>
      %297 = stablehlo.select %256, %295, %296 : tensor<8xi1>, tensor<8xf32>
      %298 = stablehlo.broadcast_in_dim %iterArg_76, dims = [] : (tensor<i32>) -> tensor<8xi32>
      %c_90 = stablehlo.constant dense<0> : tensor<i32>
      %299 = stablehlo.broadcast_in_dim %c_90, dims = [] : (tensor<i32>) -> tensor<8xi32>
      %300 = stablehlo.compare EQ, %298, %299, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
      %cst_91 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %301 = stablehlo.broadcast_in_dim %cst_91, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %cst_92 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %302 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %303 = stablehlo.select %300, %301, %302 : tensor<8xi1>, tensor<8xf32>
      %304 = stablehlo.divide %297, %iterArg_78 : tensor<8xf32>
      %305 = stablehlo.add %303, %304 : tensor<8xf32>
      %cst_93 = stablehlo.constant dense<5.96046448E-8> : tensor<f32>
      %306 = stablehlo.broadcast_in_dim %cst_93, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %307 = stablehlo.abs %305 : tensor<8xf32>
      %308 = stablehlo.compare LT, %307, %306, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %309 = stablehlo.select %308, %306, %305 : tensor<8xi1>, tensor<8xf32>
      %310 = stablehlo.multiply %297, %iterArg_79 : tensor<8xf32>
      %311 = stablehlo.add %303, %310 : tensor<8xf32>
      %312 = stablehlo.abs %311 : tensor<8xf32>
      %313 = stablehlo.compare LT, %312, %306, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %314 = stablehlo.select %313, %306, %311 : tensor<8xi1>, tensor<8xf32>
      %cst_94 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %315 = stablehlo.broadcast_in_dim %cst_94, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %316 = stablehlo.divide %315, %314 : tensor<8xf32>
      %317 = stablehlo.multiply %309, %316 : tensor<8xf32>
      %318 = stablehlo.multiply %iterArg_80, %317 : tensor<8xf32>
      %c_95 = stablehlo.constant dense<1> : tensor<i32>
      %319 = stablehlo.add %iterArg_76, %c_95 : tensor<i32>
      %cst_96 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %320 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %321 = stablehlo.subtract %317, %320 : tensor<8xf32>
      %322 = stablehlo.abs %321 : tensor<8xf32>
      %cst_97 = stablehlo.constant dense<5.96046448E-8> : tensor<f32>
      %323 = stablehlo.broadcast_in_dim %cst_97, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %324 = stablehlo.compare GE, %322, %323, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
      %c_98 = stablehlo.constant dense<false> : tensor<i1>
      %325 = stablehlo.reduce(%324 init: %c_98) applies stablehlo.or across dimensions = [0] : (tensor<8xi1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %iterArg, %iterArg_74, %iterArg_75, %319, %325, %309, %316, %318 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    }
    %217 = chlo.lgamma %200 : tensor<8xf32> -> tensor<8xf32>
    %218 = stablehlo.add %199, %200 : tensor<8xf32>
    %219 = chlo.lgamma %218 : tensor<8xf32> -> tensor<8xf32>
    %220 = stablehlo.subtract %217, %219 : tensor<8xf32>
    %221 = chlo.lgamma %199 : tensor<8xf32> -> tensor<8xf32>
    %222 = stablehlo.add %221, %220 : tensor<8xf32>
    %cst_69 = stablehlo.constant dense<2.3509887E-38> : tensor<f32>
    %223 = stablehlo.broadcast_in_dim %cst_69, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %224 = stablehlo.compare LT, %199, %223, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %225 = stablehlo.negate %203 : tensor<8xf32>
    %226 = stablehlo.log_plus_one %225 : tensor<8xf32>
    %227 = stablehlo.multiply %226, %200 : tensor<8xf32>
    %228 = stablehlo.subtract %227, %220 : tensor<8xf32>
    %229 = stablehlo.exponential %228 : tensor<8xf32>
    %230 = stablehlo.log %203 : tensor<8xf32>
    %231 = stablehlo.multiply %230, %199 : tensor<8xf32>
    %232 = stablehlo.negate %203 : tensor<8xf32>
    %233 = stablehlo.log_plus_one %232 : tensor<8xf32>
    %234 = stablehlo.multiply %233, %200 : tensor<8xf32>
    %235 = stablehlo.add %231, %234 : tensor<8xf32>
    %236 = stablehlo.subtract %235, %222 : tensor<8xf32>
    %237 = stablehlo.exponential %236 : tensor<8xf32>
    %238 = stablehlo.divide %237, %199 : tensor<8xf32>
    %239 = stablehlo.select %224, %229, %238 : tensor<8xi1>, tensor<8xf32>
    %240 = stablehlo.multiply %216#7, %239 : tensor<8xf32>
    %cst_70 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %241 = stablehlo.broadcast_in_dim %cst_70, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %242 = stablehlo.subtract %241, %240 : tensor<8xf32>
    %243 = stablehlo.select %198, %240, %242 : tensor<8xi1>, tensor<8xf32>
    %cst_71 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %244 = stablehlo.broadcast_in_dim %cst_71, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %245 = stablehlo.select %174, %244, %243 : tensor<8xi1>, tensor<8xf32>
    %cst_72 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %246 = stablehlo.broadcast_in_dim %cst_72, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %247 = stablehlo.select %177, %246, %245 : tensor<8xi1>, tensor<8xf32>
    %cst_73 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %248 = stablehlo.broadcast_in_dim %cst_73, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %249 = stablehlo.select %191, %248, %247 : tensor<8xi1>, tensor<8xf32>
    return %73, %146, %249 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
  func.func private @remainder(%arg0: tensor<8xi32>, %arg1: tensor<8xi32>) -> tensor<8xi32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %1 = stablehlo.compare EQ, %arg1, %0, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %3 = call @_where(%1, %2, %arg1) : (tensor<8xi1>, tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
    %4 = stablehlo.remainder %arg0, %3 : tensor<8xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %10 = stablehlo.compare LT, %3, %9, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
    %12 = stablehlo.and %11, %6 : tensor<8xi1>
    %13 = stablehlo.add %4, %3 : tensor<8xi32>
    %14 = stablehlo.select %12, %13, %4 : tensor<8xi1>, tensor<8xi32>
    return %14 : tensor<8xi32>
  }
  func.func private @_where(%arg0: tensor<8xi1>, %arg1: tensor<8xi32>, %arg2: tensor<8xi32>) -> tensor<8xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<8xi1>, tensor<8xi32>
    return %0 : tensor<8xi32>
  }
  func.func private @floor_divide(%arg0: tensor<8xi32>, %arg1: tensor<8xi32>) -> tensor<8xi32> {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<8xi32>
    %1 = stablehlo.sign %arg0 : tensor<8xi32>
    %2 = stablehlo.sign %arg1 : tensor<8xi32>
    %3 = stablehlo.compare NE, %1, %2, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %4 = stablehlo.remainder %arg0, %arg1 : tensor<8xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %7 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<8xi1>
    %8 = stablehlo.compare NE, %3, %7, UNSIGNED : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
    %9 = stablehlo.convert %8 : tensor<8xi1>
    %c_1 = stablehlo.constant dense<false> : tensor<i1>
    %10 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i1>) -> tensor<8xi1>
    %11 = stablehlo.compare NE, %6, %10, UNSIGNED : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
    %12 = stablehlo.convert %11 : tensor<8xi1>
    %13 = stablehlo.and %9, %12 : tensor<8xi1>
    %c_2 = stablehlo.constant dense<1> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %15 = stablehlo.subtract %0, %14 : tensor<8xi32>
    %16 = call @_where_0(%13, %15, %0) : (tensor<8xi1>, tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
    return %16 : tensor<8xi32>
  }
  func.func private @_where_0(%arg0: tensor<8xi1>, %arg1: tensor<8xi32>, %arg2: tensor<8xi32>) -> tensor<8xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<8xi1>, tensor<8xi32>
    return %0 : tensor<8xi32>
  }
}
