module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xi32>, %arg1: tensor<10xi32>) -> (tensor<10xi32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<5> : tensor<i32>
    %0 = call @remainder(%arg1, %c) : (tensor<10xi32>, tensor<i32>) -> tensor<10xi32>
    %1 = stablehlo.abs %0 : tensor<10xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %3 = stablehlo.compare EQ, %arg0, %2, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %5 = stablehlo.compare NE, %1, %4, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %6 = stablehlo.and %3, %5 : tensor<10xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %c_3 = stablehlo.constant dense<1> : tensor<i32>
    %7 = call @_where_0(%6, %c_2, %c_3) : (tensor<10xi1>, tensor<i32>, tensor<i32>) -> tensor<10xi32>
    %c_4 = stablehlo.constant dense<1> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %9 = stablehlo.and %1, %8 : tensor<10xi32>
    %10 = stablehlo.multiply %7, %arg0 : tensor<10xi32>
    %11 = call @_where_1(%9, %10, %7) : (tensor<10xi32>, tensor<10xi32>, tensor<10xi32>) -> tensor<10xi32>
    %12 = stablehlo.multiply %arg0, %arg0 : tensor<10xi32>
    %c_5 = stablehlo.constant dense<1> : tensor<i32>
    %13 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %14 = stablehlo.shift_right_logical %1, %13 : tensor<10xi32>
    %c_6 = stablehlo.constant dense<1> : tensor<i32>
    %15 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %16 = stablehlo.and %14, %15 : tensor<10xi32>
    %17 = stablehlo.multiply %11, %12 : tensor<10xi32>
    %18 = call @_where_1(%16, %17, %11) : (tensor<10xi32>, tensor<10xi32>, tensor<10xi32>) -> tensor<10xi32>
    %19 = stablehlo.multiply %12, %12 : tensor<10xi32>
    %c_7 = stablehlo.constant dense<1> : tensor<i32>
    %20 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %21 = stablehlo.shift_right_logical %14, %20 : tensor<10xi32>
    %c_8 = stablehlo.constant dense<1> : tensor<i32>
    %22 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %23 = stablehlo.and %21, %22 : tensor<10xi32>
    %24 = stablehlo.multiply %18, %19 : tensor<10xi32>
    %25 = call @_where_1(%23, %24, %18) : (tensor<10xi32>, tensor<10xi32>, tensor<10xi32>) -> tensor<10xi32>
    %26 = stablehlo.multiply %19, %19 : tensor<10xi32>
    %c_9 = stablehlo.constant dense<1> : tensor<i32>
    %27 = stablehlo.broadcast_in_dim %c_9, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %28 = stablehlo.shift_right_logical %21, %27 : tensor<10xi32>
    %c_10 = stablehlo.constant dense<1> : tensor<i32>
    %29 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %30 = stablehlo.and %28, %29 : tensor<10xi32>
    %31 = stablehlo.multiply %25, %26 : tensor<10xi32>
    %32 = call @_where_1(%30, %31, %25) : (tensor<10xi32>, tensor<10xi32>, tensor<10xi32>) -> tensor<10xi32>
    %33 = stablehlo.multiply %26, %26 : tensor<10xi32>
    %c_11 = stablehlo.constant dense<1> : tensor<i32>
    %34 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %35 = stablehlo.shift_right_logical %28, %34 : tensor<10xi32>
    %c_12 = stablehlo.constant dense<1> : tensor<i32>
    %36 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %37 = stablehlo.and %35, %36 : tensor<10xi32>
    %38 = stablehlo.multiply %32, %33 : tensor<10xi32>
    %39 = call @_where_1(%37, %38, %32) : (tensor<10xi32>, tensor<10xi32>, tensor<10xi32>) -> tensor<10xi32>
    %40 = stablehlo.multiply %33, %33 : tensor<10xi32>
    %c_13 = stablehlo.constant dense<1> : tensor<i32>
    %41 = stablehlo.broadcast_in_dim %c_13, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %42 = stablehlo.shift_right_logical %35, %41 : tensor<10xi32>
    %c_14 = stablehlo.constant dense<1> : tensor<i32>
    %43 = stablehlo.broadcast_in_dim %c_14, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %44 = stablehlo.and %42, %43 : tensor<10xi32>
    %45 = stablehlo.multiply %39, %40 : tensor<10xi32>
    %46 = call @_where_1(%44, %45, %39) : (tensor<10xi32>, tensor<10xi32>, tensor<10xi32>) -> tensor<10xi32>
    %47 = stablehlo.multiply %40, %40 : tensor<10xi32>
    %c_15 = stablehlo.constant dense<1> : tensor<i32>
    %48 = stablehlo.broadcast_in_dim %c_15, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %49 = stablehlo.shift_right_logical %42, %48 : tensor<10xi32>
    return %46 : tensor<10xi32>
  }
  func.func private @remainder(%arg0: tensor<10xi32>, %arg1: tensor<i32>) -> tensor<10xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %0) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %4 = stablehlo.remainder %arg0, %3 : tensor<10xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<10xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<10xi1>, tensor<10xi1>) -> tensor<10xi1>
    %12 = stablehlo.and %11, %6 : tensor<10xi1>
    %13 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %14 = stablehlo.add %4, %13 : tensor<10xi32>
    %15 = stablehlo.select %12, %14, %4 : tensor<10xi1>, tensor<10xi32>
    return %15 : tensor<10xi32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
  func.func private @_where_0(%arg0: tensor<10xi1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<10xi32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %2 = stablehlo.select %arg0, %0, %1 : tensor<10xi1>, tensor<10xi32>
    return %2 : tensor<10xi32>
  }
  func.func private @_where_1(%arg0: tensor<10xi32>, %arg1: tensor<10xi32>, %arg2: tensor<10xi32>) -> tensor<10xi32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %1 = stablehlo.compare NE, %arg0, %0, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %2 = stablehlo.select %1, %arg1, %arg2 : tensor<10xi1>, tensor<10xi32>
    return %2 : tensor<10xi32>
  }
}
