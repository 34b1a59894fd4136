module @philox_state3_u32 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xui64>) -> (tensor<3xui64>, tensor<ui32>, tensor<3xui64>, tensor<1xui32>, tensor<3xui64>, tensor<2xui32>, tensor<3xui64>, tensor<3xui32>, tensor<3xui64>, tensor<4xui32>, tensor<3xui64>, tensor<5xui32>, tensor<3xui64>, tensor<7xui32>, tensor<3xui64>, tensor<13xui32>, tensor<3xui64>, tensor<3x5xui32>, tensor<3xui64>, tensor<4x6xui32>, tensor<3xui64>, tensor<5x2xui32>, tensor<3xui64>, tensor<1x9xui32>, tensor<3xui64>, tensor<9x1xui32>, tensor<3xui64>, tensor<2x3x5xui32>, tensor<3xui64>, tensor<5x1x3xui32>, tensor<3xui64>, tensor<3x3x3xui32>, tensor<3xui64>, tensor<2x4x3xui32>, tensor<3xui64>, tensor<0xui32>, tensor<3xui64>, tensor<2x0xui32>) {
    %s0, %v0 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<ui32>)
    %s1, %v1 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<1xui32>)
    %s2, %v2 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<2xui32>)
    %s3, %v3 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<3xui32>)
    %s4, %v4 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)
    %s5, %v5 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<5xui32>)
    %s6, %v6 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<7xui32>)
    %s7, %v7 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<13xui32>)
    %s8, %v8 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<3x5xui32>)
    %s9, %v9 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4x6xui32>)
    %s10, %v10 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<5x2xui32>)
    %s11, %v11 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<1x9xui32>)
    %s12, %v12 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<9x1xui32>)
    %s13, %v13 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<2x3x5xui32>)
    %s14, %v14 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<5x1x3xui32>)
    %s15, %v15 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<3x3x3xui32>)
    %s16, %v16 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<2x4x3xui32>)
    %s17, %v17 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<0xui32>)
    %s18, %v18 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<2x0xui32>)
    return %s0, %v0, %s1, %v1, %s2, %v2, %s3, %v3, %s4, %v4, %s5, %v5, %s6, %v6, %s7, %v7, %s8, %v8, %s9, %v9, %s10, %v10, %s11, %v11, %s12, %v12, %s13, %v13, %s14, %v14, %s15, %v15, %s16, %v16, %s17, %v17, %s18, %v18 : tensor<3xui64>, tensor<ui32>, tensor<3xui64>, tensor<1xui32>, tensor<3xui64>, tensor<2xui32>, tensor<3xui64>, tensor<3xui32>, tensor<3xui64>, tensor<4xui32>, tensor<3xui64>, tensor<5xui32>, tensor<3xui64>, tensor<7xui32>, tensor<3xui64>, tensor<13xui32>, tensor<3xui64>, tensor<3x5xui32>, tensor<3xui64>, tensor<4x6xui32>, tensor<3xui64>, tensor<5x2xui32>, tensor<3xui64>, tensor<1x9xui32>, tensor<3xui64>, tensor<9x1xui32>, tensor<3xui64>, tensor<2x3x5xui32>, tensor<3xui64>, tensor<5x1x3xui32>, tensor<3xui64>, tensor<3x3x3xui32>, tensor<3xui64>, tensor<2x4x3xui32>, tensor<3xui64>, tensor<0xui32>, tensor<3xui64>, tensor<2x0xui32>
  }
}
