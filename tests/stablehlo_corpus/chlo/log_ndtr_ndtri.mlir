module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<52xf32>, %arg1: tensor<12xf32>) -> (tensor<52xf32> {jax.result_info = "result[0]"}, tensor<12xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<[-59.9633484, 98.0010757, -56.6762848, 13.9312611, -1.23916578]> : tensor<5xf32>
    %cst_0 = stablehlo.constant dense<[1.000000e+00, 1.95448864, 4.67627907, 86.3602447, -225.462692, 200.260208, -82.0372238, 15.9056225, -1.18331623]> : tensor<9xf32>
    %cst_1 = stablehlo.constant dense<[3.23774886, 6.91522884, 3.93881035, 1.33303463, 0.201485395, 0.0123716639, 3.01581546E-4, 2.65806966E-6, 6.23974561E-9]> : tensor<9xf32>
    %cst_2 = stablehlo.constant dense<[1.000000e+00, 6.02427053, 3.67983556, 1.37702096, 2.162370e-01, 1.342040e-02, 3.28014459E-4, 2.89247873E-6, 6.79019418E-9]> : tensor<9xf32>
    %cst_3 = stablehlo.constant dense<[4.05544901, 31.5251102, 57.1628189, 44.0805092, 14.6849566, 2.18663311, -0.140256077, -0.035042461, -8.57456762E-4]> : tensor<9xf32>
    %cst_4 = stablehlo.constant dense<[1.000000e+00, 15.7799883, 45.3907623, 41.3172035, 15.0425386, 2.5046494, -0.142182916, -0.0380806401, -9.33259492E-4]> : tensor<9xf32>
    %cst_5 = stablehlo.constant dense<5.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<52xf32>, tensor<52xf32>) -> tensor<52xi1>
    %2 = stablehlo.negate %arg0 : tensor<52xf32>
    %cst_6 = stablehlo.constant dense<-1.000000e+01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %4 = stablehlo.maximum %arg0, %3 : tensor<52xf32>
    %5 = call @_where(%1, %2, %4) : (tensor<52xi1>, tensor<52xf32>, tensor<52xf32>) -> tensor<52xf32>
    %cst_7 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %7 = stablehlo.multiply %5, %6 : tensor<52xf32>
    %8 = stablehlo.abs %7 : tensor<52xf32>
    %cst_8 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %10 = stablehlo.compare LT, %8, %9, FLOAT : (tensor<52xf32>, tensor<52xf32>) -> tensor<52xi1>
    %11 = chlo.erf %7 : tensor<52xf32> -> tensor<52xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %13 = stablehlo.add %12, %11 : tensor<52xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %15 = stablehlo.compare GT, %7, %14, FLOAT : (tensor<52xf32>, tensor<52xf32>) -> tensor<52xi1>
    %16 = chlo.erfc %8 : tensor<52xf32> -> tensor<52xf32>
    %cst_11 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %18 = stablehlo.subtract %17, %16 : tensor<52xf32>
    %19 = chlo.erfc %8 : tensor<52xf32> -> tensor<52xf32>
    %20 = stablehlo.select %15, %18, %19 : tensor<52xi1>, tensor<52xf32>
    %21 = stablehlo.select %10, %13, %20 : tensor<52xi1>, tensor<52xf32>
    %cst_12 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %23 = stablehlo.multiply %22, %21 : tensor<52xf32>
    %24 = stablehlo.negate %23 : tensor<52xf32>
    %cst_13 = stablehlo.constant dense<-1.000000e+01> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %26 = stablehlo.compare GT, %arg0, %25, FLOAT : (tensor<52xf32>, tensor<52xf32>) -> tensor<52xi1>
    %27 = stablehlo.log %23 : tensor<52xf32>
    %cst_14 = stablehlo.constant dense<-1.000000e+01> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %29 = stablehlo.minimum %arg0, %28 : tensor<52xf32>
    %30 = chlo.square %29 : tensor<52xf32> -> tensor<52xf32>
    %cst_15 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %32 = stablehlo.multiply %31, %30 : tensor<52xf32>
    %33 = stablehlo.negate %29 : tensor<52xf32>
    %34 = stablehlo.log %33 : tensor<52xf32>
    %35 = stablehlo.subtract %32, %34 : tensor<52xf32>
    %cst_16 = stablehlo.constant dense<0.918938517> : tensor<f32>
    %36 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %37 = stablehlo.subtract %35, %36 : tensor<52xf32>
    %38 = chlo.square %29 : tensor<52xf32> -> tensor<52xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %39 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %cst_19 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %42 = stablehlo.divide %41, %38 : tensor<52xf32>
    %43 = stablehlo.add %40, %42 : tensor<52xf32>
    %44 = stablehlo.multiply %38, %38 : tensor<52xf32>
    %cst_20 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %45 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %46 = stablehlo.divide %45, %44 : tensor<52xf32>
    %47 = stablehlo.add %39, %46 : tensor<52xf32>
    %48 = stablehlo.multiply %44, %38 : tensor<52xf32>
    %cst_21 = stablehlo.constant dense<1.500000e+01> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %50 = stablehlo.divide %49, %48 : tensor<52xf32>
    %51 = stablehlo.add %43, %50 : tensor<52xf32>
    %52 = stablehlo.multiply %48, %38 : tensor<52xf32>
    %cst_22 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %53 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<52xf32>
    %54 = stablehlo.add %53, %47 : tensor<52xf32>
    %55 = stablehlo.subtract %54, %51 : tensor<52xf32>
    %56 = stablehlo.log %55 : tensor<52xf32>
    %57 = stablehlo.add %37, %56 : tensor<52xf32>
    %58 = call @_where(%26, %27, %57) : (tensor<52xi1>, tensor<52xf32>, tensor<52xf32>) -> tensor<52xf32>
    %59 = call @_where(%1, %24, %58) : (tensor<52xi1>, tensor<52xf32>, tensor<52xf32>) -> tensor<52xf32>
    %cst_23 = stablehlo.constant dense<0.864664733> : tensor<f32>
    %60 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %61 = stablehlo.compare GT, %arg1, %60, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %cst_24 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %62 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %63 = stablehlo.subtract %62, %arg1 : tensor<12xf32>
    %64 = call @_where_0(%61, %63, %arg1) : (tensor<12xi1>, tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %65 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %66 = stablehlo.compare EQ, %64, %65, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %cst_26 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %67 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %68 = call @_where_0(%66, %67, %64) : (tensor<12xi1>, tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
    %cst_27 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %69 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %70 = stablehlo.subtract %68, %69 : tensor<12xf32>
    %71 = chlo.square %70 : tensor<12xf32> -> tensor<12xf32>
    %72 = stablehlo.multiply %70, %71 : tensor<12xf32>
    %73 = call @polyval(%cst, %71) : (tensor<5xf32>, tensor<12xf32>) -> tensor<12xf32>
    %74 = call @polyval_1(%cst_0, %71) : (tensor<9xf32>, tensor<12xf32>) -> tensor<12xf32>
    %75 = stablehlo.divide %73, %74 : tensor<12xf32>
    %76 = stablehlo.multiply %72, %75 : tensor<12xf32>
    %77 = stablehlo.add %70, %76 : tensor<12xf32>
    %cst_28 = stablehlo.constant dense<-2.50662827> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %79 = stablehlo.multiply %77, %78 : tensor<12xf32>
    %80 = stablehlo.log %68 : tensor<12xf32>
    %cst_29 = stablehlo.constant dense<-2.000000e+00> : tensor<f32>
    %81 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %82 = stablehlo.multiply %81, %80 : tensor<12xf32>
    %83 = stablehlo.sqrt %82 : tensor<12xf32>
    %84 = stablehlo.log %83 : tensor<12xf32>
    %85 = stablehlo.divide %84, %83 : tensor<12xf32>
    %86 = stablehlo.subtract %83, %85 : tensor<12xf32>
    %cst_30 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %87 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %88 = stablehlo.divide %87, %83 : tensor<12xf32>
    %89 = call @polyval_1(%cst_1, %88) : (tensor<9xf32>, tensor<12xf32>) -> tensor<12xf32>
    %cst_31 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %90 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %91 = stablehlo.divide %90, %83 : tensor<12xf32>
    %92 = call @polyval_1(%cst_2, %91) : (tensor<9xf32>, tensor<12xf32>) -> tensor<12xf32>
    %93 = stablehlo.divide %89, %92 : tensor<12xf32>
    %94 = stablehlo.divide %93, %83 : tensor<12xf32>
    %cst_32 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %95 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %96 = stablehlo.divide %95, %83 : tensor<12xf32>
    %97 = call @polyval_1(%cst_3, %96) : (tensor<9xf32>, tensor<12xf32>) -> tensor<12xf32>
    %cst_33 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %98 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %99 = stablehlo.divide %98, %83 : tensor<12xf32>
    %100 = call @polyval_1(%cst_4, %99) : (tensor<9xf32>, tensor<12xf32>) -> tensor<12xf32>
    %101 = stablehlo.divide %97, %100 : tensor<12xf32>
    %102 = stablehlo.divide %101, %83 : tensor<12xf32>
    %103 = stablehlo.subtract %86, %94 : tensor<12xf32>
    %104 = stablehlo.subtract %86, %102 : tensor<12xf32>
    %cst_34 = stablehlo.constant dense<0.135335281> : tensor<f32>
    %105 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %106 = stablehlo.compare GT, %68, %105, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %cst_35 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %107 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %108 = stablehlo.compare GE, %83, %107, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %109 = call @_where_0(%108, %103, %104) : (tensor<12xi1>, tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
    %110 = call @_where_0(%106, %79, %109) : (tensor<12xi1>, tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
    %cst_36 = stablehlo.constant dense<0.864664733> : tensor<f32>
    %111 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %112 = stablehlo.compare GT, %arg1, %111, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %113 = stablehlo.negate %110 : tensor<12xf32>
    %114 = call @_where_0(%112, %110, %113) : (tensor<12xi1>, tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
    %cst_37 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %115 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %116 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %117 = stablehlo.compare EQ, %arg1, %116, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %118 = stablehlo.negate %115 : tensor<12xf32>
    %cst_39 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %119 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %120 = stablehlo.compare EQ, %arg1, %119, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %121 = call @_where_0(%120, %115, %114) : (tensor<12xi1>, tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
    %122 = call @_where_0(%117, %118, %121) : (tensor<12xi1>, tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
    return %59, %122 : tensor<52xf32>, tensor<12xf32>
  }
  func.func private @_where(%arg0: tensor<52xi1>, %arg1: tensor<52xf32>, %arg2: tensor<52xf32>) -> tensor<52xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<52xi1>, tensor<52xf32>
    return %0 : tensor<52xf32>
  }
  func.func private @_where_0(%arg0: tensor<12xi1>, %arg1: tensor<12xf32>, %arg2: tensor<12xf32>) -> tensor<12xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<12xi1>, tensor<12xf32>
    return %0 : tensor<12xf32>
  }
  func.func private @polyval(%arg0: tensor<5xf32>, %arg1: tensor<12xf32>) -> tensor<12xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %1 = stablehlo.slice %arg0 [0:0] : (tensor<5xf32>) -> tensor<0xf32>
    %2 = stablehlo.slice %arg0 [0:5] : (tensor<5xf32>) -> tensor<5xf32>
    %3 = stablehlo.slice %2 [0:1] : (tensor<5xf32>) -> tensor<1xf32>
    %4 = stablehlo.reshape %3 : (tensor<1xf32>) -> tensor<f32>
    %5 = call @closed_call(%arg1, %0, %4) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %6 = stablehlo.slice %2 [1:2] : (tensor<5xf32>) -> tensor<1xf32>
    %7 = stablehlo.reshape %6 : (tensor<1xf32>) -> tensor<f32>
    %8 = call @closed_call(%arg1, %5, %7) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %9 = stablehlo.slice %2 [2:3] : (tensor<5xf32>) -> tensor<1xf32>
    %10 = stablehlo.reshape %9 : (tensor<1xf32>) -> tensor<f32>
    %11 = call @closed_call(%arg1, %8, %10) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %12 = stablehlo.slice %2 [3:4] : (tensor<5xf32>) -> tensor<1xf32>
    %13 = stablehlo.reshape %12 : (tensor<1xf32>) -> tensor<f32>
    %14 = call @closed_call(%arg1, %11, %13) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %15 = stablehlo.slice %2 [4:5] : (tensor<5xf32>) -> tensor<1xf32>
    %16 = stablehlo.reshape %15 : (tensor<1xf32>) -> tensor<f32>
    %17 = call @closed_call(%arg1, %14, %16) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    return %17 : tensor<12xf32>
  }
  func.func private @closed_call(%arg0: tensor<12xf32>, %arg1: tensor<12xf32>, %arg2: tensor<f32>) -> tensor<12xf32> {
    %0 = stablehlo.multiply %arg1, %arg0 : tensor<12xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %2 = stablehlo.add %0, %1 : tensor<12xf32>
    return %2 : tensor<12xf32>
  }
  func.func private @polyval_1(%arg0: tensor<9xf32>, %arg1: tensor<12xf32>) -> tensor<12xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %1 = stablehlo.slice %arg0 [0:0] : (tensor<9xf32>) -> tensor<0xf32>
    %2 = stablehlo.slice %arg0 [0:9] : (tensor<9xf32>) -> tensor<9xf32>
    %3 = stablehlo.slice %2 [0:1] : (tensor<9xf32>) -> tensor<1xf32>
    %4 = stablehlo.reshape %3 : (tensor<1xf32>) -> tensor<f32>
    %5 = call @closed_call_2(%arg1, %0, %4) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %6 = stablehlo.slice %2 [1:2] : (tensor<9xf32>) -> tensor<1xf32>
    %7 = stablehlo.reshape %6 : (tensor<1xf32>) -> tensor<f32>
    %8 = call @closed_call_2(%arg1, %5, %7) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %9 = stablehlo.slice %2 [2:3] : (tensor<9xf32>) -> tensor<1xf32>
    %10 = stablehlo.reshape %9 : (tensor<1xf32>) -> tensor<f32>
    %11 = call @closed_call_2(%arg1, %8, %10) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %12 = stablehlo.slice %2 [3:4] : (tensor<9xf32>) -> tensor<1xf32>
    %13 = stablehlo.reshape %12 : (tensor<1xf32>) -> tensor<f32>
    %14 = call @closed_call_2(%arg1, %11, %13) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %15 = stablehlo.slice %2 [4:5] : (tensor<9xf32>) -> tensor<1xf32>
    %16 = stablehlo.reshape %15 : (tensor<1xf32>) -> tensor<f32>
    %17 = call @closed_call_2(%arg1, %14, %16) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %18 = stablehlo.slice %2 [5:6] : (tensor<9xf32>) -> tensor<1xf32>
    %19 = stablehlo.reshape %18 : (tensor<1xf32>) -> tensor<f32>
    %20 = call @closed_call_2(%arg1, %17, %19) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %21 = stablehlo.slice %2 [6:7] : (tensor<9xf32>) -> tensor<1xf32>
    %22 = stablehlo.reshape %21 : (tensor<1xf32>) -> tensor<f32>
    %23 = call @closed_call_2(%arg1, %20, %22) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %24 = stablehlo.slice %2 [7:8] : (tensor<9xf32>) -> tensor<1xf32>
    %25 = stablehlo.reshape %24 : (tensor<1xf32>) -> tensor<f32>
    %26 = call @closed_call_2(%arg1, %23, %25) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    %27 = stablehlo.slice %2 [8:9] : (tensor<9xf32>) -> tensor<1xf32>
    %28 = stablehlo.reshape %27 : (tensor<1xf32>) -> tensor<f32>
    %29 = call @closed_call_2(%arg1, %26, %28) : (tensor<12xf32>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
    return %29 : tensor<12xf32>
  }
  func.func private @closed_call_2(%arg0: tensor<12xf32>, %arg1: tensor<12xf32>, %arg2: tensor<f32>) -> tensor<12xf32> {
    %0 = stablehlo.multiply %arg1, %arg0 : tensor<12xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %2 = stablehlo.add %0, %1 : tensor<12xf32>
    return %2 : tensor<12xf32>
  }
}
