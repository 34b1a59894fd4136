"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "closed_call.1", sym_visibility = "private"}> ({
  ^bb0(%arg146: tensor<i32>, %arg147: tensor<2xui32>, %arg148: tensor<2xui32>, %arg149: tensor<ui32>, %arg150: tensor<ui32>, %arg151: tensor<ui32>, %arg152: tensor<4xui32>, %arg153: tensor<4xui32>):
    %361 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %362 = "stablehlo.add"(%arg146, %361) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %363 = "stablehlo.add"(%arg147, %arg148) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %364 = "stablehlo.slice"(%arg152) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %365 = "stablehlo.reshape"(%364) : (tensor<1xui32>) -> tensor<ui32>
    %366 = "stablehlo.broadcast_in_dim"(%365) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %367 = "stablehlo.shift_left"(%arg148, %366) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %368 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %369 = "stablehlo.subtract"(%368, %365) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %370 = "stablehlo.broadcast_in_dim"(%369) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %371 = "stablehlo.shift_right_logical"(%arg148, %370) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %372 = "stablehlo.or"(%367, %371) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %373 = "stablehlo.xor"(%363, %372) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %374 = "stablehlo.add"(%363, %373) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %375 = "stablehlo.slice"(%arg152) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %376 = "stablehlo.reshape"(%375) : (tensor<1xui32>) -> tensor<ui32>
    %377 = "stablehlo.broadcast_in_dim"(%376) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %378 = "stablehlo.shift_left"(%373, %377) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %379 = "stablehlo.subtract"(%368, %376) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %380 = "stablehlo.broadcast_in_dim"(%379) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %381 = "stablehlo.shift_right_logical"(%373, %380) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %382 = "stablehlo.or"(%378, %381) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %383 = "stablehlo.xor"(%374, %382) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %384 = "stablehlo.add"(%374, %383) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %385 = "stablehlo.slice"(%arg152) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %386 = "stablehlo.reshape"(%385) : (tensor<1xui32>) -> tensor<ui32>
    %387 = "stablehlo.broadcast_in_dim"(%386) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %388 = "stablehlo.shift_left"(%383, %387) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %389 = "stablehlo.subtract"(%368, %386) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %390 = "stablehlo.broadcast_in_dim"(%389) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %391 = "stablehlo.shift_right_logical"(%383, %390) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %392 = "stablehlo.or"(%388, %391) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %393 = "stablehlo.xor"(%384, %392) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %394 = "stablehlo.add"(%384, %393) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %395 = "stablehlo.broadcast_in_dim"(%arg149) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %396 = "stablehlo.add"(%394, %395) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %397 = "stablehlo.slice"(%arg152) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %398 = "stablehlo.reshape"(%397) : (tensor<1xui32>) -> tensor<ui32>
    %399 = "stablehlo.broadcast_in_dim"(%398) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %400 = "stablehlo.shift_left"(%393, %399) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %401 = "stablehlo.subtract"(%368, %398) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %402 = "stablehlo.broadcast_in_dim"(%401) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %403 = "stablehlo.shift_right_logical"(%393, %402) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %404 = "stablehlo.or"(%400, %403) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %405 = "stablehlo.xor"(%394, %404) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %406 = "stablehlo.broadcast_in_dim"(%arg150) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %407 = "stablehlo.add"(%405, %406) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %408 = "stablehlo.add"(%arg146, %361) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %409 = "stablehlo.convert"(%408) : (tensor<i32>) -> tensor<ui32>
    %410 = "stablehlo.broadcast_in_dim"(%409) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %411 = "stablehlo.add"(%407, %410) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    "func.return"(%362, %396, %411, %arg150, %arg151, %arg149, %arg153, %arg152) : (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "region_0.2", sym_visibility = "private"}> ({
  ^bb0(%arg137: tensor<i32>, %arg138: tensor<i32>, %arg139: tensor<2xui32>, %arg140: tensor<2xui32>, %arg141: tensor<ui32>, %arg142: tensor<ui32>, %arg143: tensor<ui32>, %arg144: tensor<4xui32>, %arg145: tensor<4xui32>):
    %358 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %359 = "stablehlo.add"(%arg137, %358) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %360:8 = "func.call"(%arg138, %arg139, %arg140, %arg141, %arg142, %arg143, %arg144, %arg145) <{callee = @closed_call.1}> : (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%359, %360#0, %360#1, %360#2, %360#3, %360#4, %360#5, %360#6, %360#7) : (tensor<i32>, tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> tensor<i1>, sym_name = "region_1.3", sym_visibility = "private"}> ({
  ^bb0(%arg128: tensor<i32>, %arg129: tensor<i32>, %arg130: tensor<2xui32>, %arg131: tensor<2xui32>, %arg132: tensor<ui32>, %arg133: tensor<ui32>, %arg134: tensor<ui32>, %arg135: tensor<4xui32>, %arg136: tensor<4xui32>):
    %356 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %357 = "stablehlo.compare"(%arg128, %356) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "func.return"(%357) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<2xui32>, tensor<2xui32>) -> (tensor<2xui32>, tensor<2xui32>), sym_name = "threefry2x32.4", sym_visibility = "private"}> ({
  ^bb0(%arg106: tensor<ui32>, %arg107: tensor<ui32>, %arg108: tensor<2xui32>, %arg109: tensor<2xui32>):
    %340 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %341 = "stablehlo.broadcast_in_dim"(%arg106) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %342 = "stablehlo.add"(%arg108, %341) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %343 = "stablehlo.broadcast_in_dim"(%arg107) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %344 = "stablehlo.add"(%arg109, %343) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %345 = "stablehlo.xor"(%arg106, %arg107) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %346 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
    %347 = "stablehlo.xor"(%345, %346) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %348 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %349 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %350:9 = "stablehlo.while"(%340, %340, %342, %344, %arg107, %347, %arg106, %348, %349) ({
    ^bb0(%arg119: tensor<i32>, %arg120: tensor<i32>, %arg121: tensor<2xui32>, %arg122: tensor<2xui32>, %arg123: tensor<ui32>, %arg124: tensor<ui32>, %arg125: tensor<ui32>, %arg126: tensor<4xui32>, %arg127: tensor<4xui32>):
      %354 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %355 = "stablehlo.compare"(%arg119, %354) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%355) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg110: tensor<i32>, %arg111: tensor<i32>, %arg112: tensor<2xui32>, %arg113: tensor<2xui32>, %arg114: tensor<ui32>, %arg115: tensor<ui32>, %arg116: tensor<ui32>, %arg117: tensor<4xui32>, %arg118: tensor<4xui32>):
      %351 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %352 = "stablehlo.add"(%arg110, %351) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %353:8 = "func.call"(%arg111, %arg112, %arg113, %arg114, %arg115, %arg116, %arg117, %arg118) <{callee = @closed_call.1}> : (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      "stablehlo.return"(%352, %353#0, %353#1, %353#2, %353#3, %353#4, %353#5, %353#6, %353#7) : (tensor<i32>, tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : (tensor<i32>, tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%350#2, %350#3) : (tensor<2xui32>, tensor<2xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>) -> tensor<2x2xui32>, sym_name = "_threefry_split.5", sym_visibility = "private"}> ({
  ^bb0(%arg105: tensor<2xui32>):
    %326 = "stablehlo.slice"(%arg105) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %327 = "stablehlo.reshape"(%326) : (tensor<1xui32>) -> tensor<ui32>
    %328 = "stablehlo.slice"(%arg105) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %329 = "stablehlo.reshape"(%328) : (tensor<1xui32>) -> tensor<ui32>
    %330 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<2xui64>
    %331 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %332 = "stablehlo.broadcast_in_dim"(%331) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2xui64>
    %333 = "stablehlo.shift_right_logical"(%330, %332) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
    %334 = "stablehlo.convert"(%333) : (tensor<2xui64>) -> tensor<2xui32>
    %335 = "stablehlo.convert"(%330) : (tensor<2xui64>) -> tensor<2xui32>
    %336:2 = "func.call"(%327, %329, %334, %335) <{callee = @threefry2x32.4}> : (tensor<ui32>, tensor<ui32>, tensor<2xui32>, tensor<2xui32>) -> (tensor<2xui32>, tensor<2xui32>)
    %337 = "stablehlo.reshape"(%336#0) : (tensor<2xui32>) -> tensor<2x1xui32>
    %338 = "stablehlo.reshape"(%336#1) : (tensor<2xui32>) -> tensor<2x1xui32>
    %339 = "stablehlo.concatenate"(%337, %338) <{dimension = 1 : i64}> : (tensor<2x1xui32>, tensor<2x1xui32>) -> tensor<2x2xui32>
    "func.return"(%339) : (tensor<2x2xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "closed_call_1.6", sym_visibility = "private"}> ({
  ^bb0(%arg97: tensor<i32>, %arg98: tensor<64xui32>, %arg99: tensor<64xui32>, %arg100: tensor<ui32>, %arg101: tensor<ui32>, %arg102: tensor<ui32>, %arg103: tensor<4xui32>, %arg104: tensor<4xui32>):
    %275 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %276 = "stablehlo.add"(%arg97, %275) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %277 = "stablehlo.add"(%arg98, %arg99) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %278 = "stablehlo.slice"(%arg103) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %279 = "stablehlo.reshape"(%278) : (tensor<1xui32>) -> tensor<ui32>
    %280 = "stablehlo.broadcast_in_dim"(%279) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %281 = "stablehlo.shift_left"(%arg99, %280) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %282 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %283 = "stablehlo.subtract"(%282, %279) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %284 = "stablehlo.broadcast_in_dim"(%283) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %285 = "stablehlo.shift_right_logical"(%arg99, %284) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %286 = "stablehlo.or"(%281, %285) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %287 = "stablehlo.xor"(%277, %286) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %288 = "stablehlo.add"(%277, %287) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %289 = "stablehlo.slice"(%arg103) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %290 = "stablehlo.reshape"(%289) : (tensor<1xui32>) -> tensor<ui32>
    %291 = "stablehlo.broadcast_in_dim"(%290) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %292 = "stablehlo.shift_left"(%287, %291) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %293 = "stablehlo.subtract"(%282, %290) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %294 = "stablehlo.broadcast_in_dim"(%293) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %295 = "stablehlo.shift_right_logical"(%287, %294) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %296 = "stablehlo.or"(%292, %295) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %297 = "stablehlo.xor"(%288, %296) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %298 = "stablehlo.add"(%288, %297) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %299 = "stablehlo.slice"(%arg103) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %300 = "stablehlo.reshape"(%299) : (tensor<1xui32>) -> tensor<ui32>
    %301 = "stablehlo.broadcast_in_dim"(%300) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %302 = "stablehlo.shift_left"(%297, %301) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %303 = "stablehlo.subtract"(%282, %300) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %304 = "stablehlo.broadcast_in_dim"(%303) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %305 = "stablehlo.shift_right_logical"(%297, %304) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %306 = "stablehlo.or"(%302, %305) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %307 = "stablehlo.xor"(%298, %306) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %308 = "stablehlo.add"(%298, %307) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %309 = "stablehlo.broadcast_in_dim"(%arg100) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %310 = "stablehlo.add"(%308, %309) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %311 = "stablehlo.slice"(%arg103) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %312 = "stablehlo.reshape"(%311) : (tensor<1xui32>) -> tensor<ui32>
    %313 = "stablehlo.broadcast_in_dim"(%312) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %314 = "stablehlo.shift_left"(%307, %313) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %315 = "stablehlo.subtract"(%282, %312) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %316 = "stablehlo.broadcast_in_dim"(%315) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %317 = "stablehlo.shift_right_logical"(%307, %316) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %318 = "stablehlo.or"(%314, %317) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %319 = "stablehlo.xor"(%308, %318) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %320 = "stablehlo.broadcast_in_dim"(%arg101) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %321 = "stablehlo.add"(%319, %320) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %322 = "stablehlo.add"(%arg97, %275) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %323 = "stablehlo.convert"(%322) : (tensor<i32>) -> tensor<ui32>
    %324 = "stablehlo.broadcast_in_dim"(%323) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %325 = "stablehlo.add"(%321, %324) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    "func.return"(%276, %310, %325, %arg101, %arg102, %arg100, %arg104, %arg103) : (tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "region_2.7", sym_visibility = "private"}> ({
  ^bb0(%arg88: tensor<i32>, %arg89: tensor<i32>, %arg90: tensor<64xui32>, %arg91: tensor<64xui32>, %arg92: tensor<ui32>, %arg93: tensor<ui32>, %arg94: tensor<ui32>, %arg95: tensor<4xui32>, %arg96: tensor<4xui32>):
    %272 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %273 = "stablehlo.add"(%arg88, %272) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %274:8 = "func.call"(%arg89, %arg90, %arg91, %arg92, %arg93, %arg94, %arg95, %arg96) <{callee = @closed_call_1.6}> : (tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%273, %274#0, %274#1, %274#2, %274#3, %274#4, %274#5, %274#6, %274#7) : (tensor<i32>, tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> tensor<i1>, sym_name = "region_3.8", sym_visibility = "private"}> ({
  ^bb0(%arg79: tensor<i32>, %arg80: tensor<i32>, %arg81: tensor<64xui32>, %arg82: tensor<64xui32>, %arg83: tensor<ui32>, %arg84: tensor<ui32>, %arg85: tensor<ui32>, %arg86: tensor<4xui32>, %arg87: tensor<4xui32>):
    %270 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %271 = "stablehlo.compare"(%arg79, %270) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "func.return"(%271) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<64xui32>, tensor<64xui32>) -> (tensor<64xui32>, tensor<64xui32>), sym_name = "threefry2x32_0.9", sym_visibility = "private"}> ({
  ^bb0(%arg57: tensor<ui32>, %arg58: tensor<ui32>, %arg59: tensor<64xui32>, %arg60: tensor<64xui32>):
    %254 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %255 = "stablehlo.broadcast_in_dim"(%arg57) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %256 = "stablehlo.add"(%arg59, %255) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %257 = "stablehlo.broadcast_in_dim"(%arg58) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %258 = "stablehlo.add"(%arg60, %257) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %259 = "stablehlo.xor"(%arg57, %arg58) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %260 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
    %261 = "stablehlo.xor"(%259, %260) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %262 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %263 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %264:9 = "stablehlo.while"(%254, %254, %256, %258, %arg58, %261, %arg57, %262, %263) ({
    ^bb0(%arg70: tensor<i32>, %arg71: tensor<i32>, %arg72: tensor<64xui32>, %arg73: tensor<64xui32>, %arg74: tensor<ui32>, %arg75: tensor<ui32>, %arg76: tensor<ui32>, %arg77: tensor<4xui32>, %arg78: tensor<4xui32>):
      %268 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %269 = "stablehlo.compare"(%arg70, %268) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%269) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg61: tensor<i32>, %arg62: tensor<i32>, %arg63: tensor<64xui32>, %arg64: tensor<64xui32>, %arg65: tensor<ui32>, %arg66: tensor<ui32>, %arg67: tensor<ui32>, %arg68: tensor<4xui32>, %arg69: tensor<4xui32>):
      %265 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %266 = "stablehlo.add"(%arg61, %265) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %267:8 = "func.call"(%arg62, %arg63, %arg64, %arg65, %arg66, %arg67, %arg68, %arg69) <{callee = @closed_call_1.6}> : (tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      "stablehlo.return"(%266, %267#0, %267#1, %267#2, %267#3, %267#4, %267#5, %267#6, %267#7) : (tensor<i32>, tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : (tensor<i32>, tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<64xui32>, tensor<64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%264#2, %264#3) : (tensor<64xui32>, tensor<64xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<64xf32>, sym_name = "_uniform.10", sym_visibility = "private"}> ({
  ^bb0(%arg54: tensor<2xui32>, %arg55: tensor<f32>, %arg56: tensor<f32>):
    %217 = "stablehlo.reshape"(%arg55) : (tensor<f32>) -> tensor<1xf32>
    %218 = "stablehlo.broadcast_in_dim"(%217) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf32>) -> tensor<1xf32>
    %219 = "stablehlo.reshape"(%218) : (tensor<1xf32>) -> tensor<f32>
    %220 = "stablehlo.broadcast_in_dim"(%219) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %221 = "stablehlo.slice"(%arg54) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %222 = "stablehlo.reshape"(%221) : (tensor<1xui32>) -> tensor<ui32>
    %223 = "stablehlo.slice"(%arg54) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %224 = "stablehlo.reshape"(%223) : (tensor<1xui32>) -> tensor<ui32>
    %225 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<64xui64>
    %226 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %227 = "stablehlo.broadcast_in_dim"(%226) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<64xui64>
    %228 = "stablehlo.shift_right_logical"(%225, %227) : (tensor<64xui64>, tensor<64xui64>) -> tensor<64xui64>
    %229 = "stablehlo.convert"(%228) : (tensor<64xui64>) -> tensor<64xui32>
    %230 = "stablehlo.convert"(%225) : (tensor<64xui64>) -> tensor<64xui32>
    %231:2 = "func.call"(%222, %224, %229, %230) <{callee = @threefry2x32_0.9}> : (tensor<ui32>, tensor<ui32>, tensor<64xui32>, tensor<64xui32>) -> (tensor<64xui32>, tensor<64xui32>)
    %232 = "stablehlo.xor"(%231#0, %231#1) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %233 = "stablehlo.constant"() <{value = dense<9> : tensor<ui32>}> : () -> tensor<ui32>
    %234 = "stablehlo.broadcast_in_dim"(%233) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %235 = "stablehlo.shift_right_logical"(%232, %234) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %236 = "stablehlo.constant"() <{value = dense<1065353216> : tensor<ui32>}> : () -> tensor<ui32>
    %237 = "stablehlo.broadcast_in_dim"(%236) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<64xui32>
    %238 = "stablehlo.or"(%235, %237) : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xui32>
    %239 = "stablehlo.bitcast_convert"(%238) : (tensor<64xui32>) -> tensor<64xf32>
    %240 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %241 = "stablehlo.broadcast_in_dim"(%240) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %242 = "stablehlo.subtract"(%239, %241) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %243 = "stablehlo.reshape"(%arg56) : (tensor<f32>) -> tensor<1xf32>
    %244 = "stablehlo.subtract"(%243, %217) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %245 = "stablehlo.broadcast_in_dim"(%244) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf32>) -> tensor<1xf32>
    %246 = "stablehlo.reshape"(%245) : (tensor<1xf32>) -> tensor<f32>
    %247 = "stablehlo.broadcast_in_dim"(%246) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %248 = "stablehlo.multiply"(%242, %247) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %249 = "stablehlo.broadcast_in_dim"(%217) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf32>) -> tensor<1xf32>
    %250 = "stablehlo.reshape"(%249) : (tensor<1xf32>) -> tensor<f32>
    %251 = "stablehlo.broadcast_in_dim"(%250) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %252 = "stablehlo.add"(%248, %251) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %253 = "stablehlo.maximum"(%220, %252) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    "func.return"(%253) : (tensor<64xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "closed_call_4.11", sym_visibility = "private"}> ({
  ^bb0(%arg46: tensor<i32>, %arg47: tensor<4x8xui32>, %arg48: tensor<4x8xui32>, %arg49: tensor<ui32>, %arg50: tensor<ui32>, %arg51: tensor<ui32>, %arg52: tensor<4xui32>, %arg53: tensor<4xui32>):
    %166 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %167 = "stablehlo.add"(%arg46, %166) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %168 = "stablehlo.add"(%arg47, %arg48) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %169 = "stablehlo.slice"(%arg52) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %170 = "stablehlo.reshape"(%169) : (tensor<1xui32>) -> tensor<ui32>
    %171 = "stablehlo.broadcast_in_dim"(%170) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %172 = "stablehlo.shift_left"(%arg48, %171) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %173 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %174 = "stablehlo.subtract"(%173, %170) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %175 = "stablehlo.broadcast_in_dim"(%174) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %176 = "stablehlo.shift_right_logical"(%arg48, %175) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %177 = "stablehlo.or"(%172, %176) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %178 = "stablehlo.xor"(%168, %177) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %179 = "stablehlo.add"(%168, %178) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %180 = "stablehlo.slice"(%arg52) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %181 = "stablehlo.reshape"(%180) : (tensor<1xui32>) -> tensor<ui32>
    %182 = "stablehlo.broadcast_in_dim"(%181) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %183 = "stablehlo.shift_left"(%178, %182) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %184 = "stablehlo.subtract"(%173, %181) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %185 = "stablehlo.broadcast_in_dim"(%184) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %186 = "stablehlo.shift_right_logical"(%178, %185) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %187 = "stablehlo.or"(%183, %186) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %188 = "stablehlo.xor"(%179, %187) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %189 = "stablehlo.add"(%179, %188) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %190 = "stablehlo.slice"(%arg52) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %191 = "stablehlo.reshape"(%190) : (tensor<1xui32>) -> tensor<ui32>
    %192 = "stablehlo.broadcast_in_dim"(%191) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %193 = "stablehlo.shift_left"(%188, %192) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %194 = "stablehlo.subtract"(%173, %191) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %195 = "stablehlo.broadcast_in_dim"(%194) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %196 = "stablehlo.shift_right_logical"(%188, %195) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %197 = "stablehlo.or"(%193, %196) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %198 = "stablehlo.xor"(%189, %197) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %199 = "stablehlo.add"(%189, %198) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %200 = "stablehlo.broadcast_in_dim"(%arg49) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %201 = "stablehlo.add"(%199, %200) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %202 = "stablehlo.slice"(%arg52) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %203 = "stablehlo.reshape"(%202) : (tensor<1xui32>) -> tensor<ui32>
    %204 = "stablehlo.broadcast_in_dim"(%203) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %205 = "stablehlo.shift_left"(%198, %204) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %206 = "stablehlo.subtract"(%173, %203) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %207 = "stablehlo.broadcast_in_dim"(%206) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %208 = "stablehlo.shift_right_logical"(%198, %207) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %209 = "stablehlo.or"(%205, %208) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %210 = "stablehlo.xor"(%199, %209) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %211 = "stablehlo.broadcast_in_dim"(%arg50) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %212 = "stablehlo.add"(%210, %211) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %213 = "stablehlo.add"(%arg46, %166) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %214 = "stablehlo.convert"(%213) : (tensor<i32>) -> tensor<ui32>
    %215 = "stablehlo.broadcast_in_dim"(%214) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %216 = "stablehlo.add"(%212, %215) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    "func.return"(%167, %201, %216, %arg50, %arg51, %arg49, %arg53, %arg52) : (tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "region_4.12", sym_visibility = "private"}> ({
  ^bb0(%arg37: tensor<i32>, %arg38: tensor<i32>, %arg39: tensor<4x8xui32>, %arg40: tensor<4x8xui32>, %arg41: tensor<ui32>, %arg42: tensor<ui32>, %arg43: tensor<ui32>, %arg44: tensor<4xui32>, %arg45: tensor<4xui32>):
    %163 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %164 = "stablehlo.add"(%arg37, %163) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %165:8 = "func.call"(%arg38, %arg39, %arg40, %arg41, %arg42, %arg43, %arg44, %arg45) <{callee = @closed_call_4.11}> : (tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%164, %165#0, %165#1, %165#2, %165#3, %165#4, %165#5, %165#6, %165#7) : (tensor<i32>, tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> tensor<i1>, sym_name = "region_5.13", sym_visibility = "private"}> ({
  ^bb0(%arg28: tensor<i32>, %arg29: tensor<i32>, %arg30: tensor<4x8xui32>, %arg31: tensor<4x8xui32>, %arg32: tensor<ui32>, %arg33: tensor<ui32>, %arg34: tensor<ui32>, %arg35: tensor<4xui32>, %arg36: tensor<4xui32>):
    %161 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %162 = "stablehlo.compare"(%arg28, %161) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "func.return"(%162) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<4x8xui32>, tensor<4x8xui32>) -> (tensor<4x8xui32>, tensor<4x8xui32>), sym_name = "threefry2x32_3.14", sym_visibility = "private"}> ({
  ^bb0(%arg6: tensor<ui32>, %arg7: tensor<ui32>, %arg8: tensor<4x8xui32>, %arg9: tensor<4x8xui32>):
    %145 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %146 = "stablehlo.broadcast_in_dim"(%arg6) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %147 = "stablehlo.add"(%arg8, %146) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %148 = "stablehlo.broadcast_in_dim"(%arg7) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %149 = "stablehlo.add"(%arg9, %148) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %150 = "stablehlo.xor"(%arg6, %arg7) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %151 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
    %152 = "stablehlo.xor"(%150, %151) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %153 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %154 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %155:9 = "stablehlo.while"(%145, %145, %147, %149, %arg7, %152, %arg6, %153, %154) ({
    ^bb0(%arg19: tensor<i32>, %arg20: tensor<i32>, %arg21: tensor<4x8xui32>, %arg22: tensor<4x8xui32>, %arg23: tensor<ui32>, %arg24: tensor<ui32>, %arg25: tensor<ui32>, %arg26: tensor<4xui32>, %arg27: tensor<4xui32>):
      %159 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %160 = "stablehlo.compare"(%arg19, %159) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%160) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg10: tensor<i32>, %arg11: tensor<i32>, %arg12: tensor<4x8xui32>, %arg13: tensor<4x8xui32>, %arg14: tensor<ui32>, %arg15: tensor<ui32>, %arg16: tensor<ui32>, %arg17: tensor<4xui32>, %arg18: tensor<4xui32>):
      %156 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %157 = "stablehlo.add"(%arg10, %156) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %158:8 = "func.call"(%arg11, %arg12, %arg13, %arg14, %arg15, %arg16, %arg17, %arg18) <{callee = @closed_call_4.11}> : (tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      "stablehlo.return"(%157, %158#0, %158#1, %158#2, %158#3, %158#4, %158#5, %158#6, %158#7) : (tensor<i32>, tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : (tensor<i32>, tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<4x8xui32>, tensor<4x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%155#2, %155#3) : (tensor<4x8xui32>, tensor<4x8xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>, sym_name = "_uniform_2.15", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<2xui32>, %arg4: tensor<f32>, %arg5: tensor<f32>):
    %101 = "stablehlo.reshape"(%arg4) : (tensor<f32>) -> tensor<1x1xf32>
    %102 = "stablehlo.broadcast_in_dim"(%101) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %103 = "stablehlo.reshape"(%102) : (tensor<1x1xf32>) -> tensor<f32>
    %104 = "stablehlo.broadcast_in_dim"(%103) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %105 = "stablehlo.slice"(%arg3) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %106 = "stablehlo.reshape"(%105) : (tensor<1xui32>) -> tensor<ui32>
    %107 = "stablehlo.slice"(%arg3) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %108 = "stablehlo.reshape"(%107) : (tensor<1xui32>) -> tensor<ui32>
    %109 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4xui64>
    %110 = "stablehlo.broadcast_in_dim"(%109) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xui64>) -> tensor<4x8xui64>
    %111 = "stablehlo.constant"() <{value = dense<8> : tensor<ui64>}> : () -> tensor<ui64>
    %112 = "stablehlo.broadcast_in_dim"(%111) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<4x8xui64>
    %113 = "stablehlo.multiply"(%110, %112) : (tensor<4x8xui64>, tensor<4x8xui64>) -> tensor<4x8xui64>
    %114 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8xui64>
    %115 = "stablehlo.broadcast_in_dim"(%114) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xui64>) -> tensor<4x8xui64>
    %116 = "stablehlo.add"(%113, %115) : (tensor<4x8xui64>, tensor<4x8xui64>) -> tensor<4x8xui64>
    %117 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %118 = "stablehlo.broadcast_in_dim"(%117) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<4x8xui64>
    %119 = "stablehlo.shift_right_logical"(%116, %118) : (tensor<4x8xui64>, tensor<4x8xui64>) -> tensor<4x8xui64>
    %120 = "stablehlo.convert"(%119) : (tensor<4x8xui64>) -> tensor<4x8xui32>
    %121 = "stablehlo.convert"(%116) : (tensor<4x8xui64>) -> tensor<4x8xui32>
    %122:2 = "func.call"(%106, %108, %120, %121) <{callee = @threefry2x32_3.14}> : (tensor<ui32>, tensor<ui32>, tensor<4x8xui32>, tensor<4x8xui32>) -> (tensor<4x8xui32>, tensor<4x8xui32>)
    %123 = "stablehlo.xor"(%122#0, %122#1) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %124 = "stablehlo.constant"() <{value = dense<9> : tensor<ui32>}> : () -> tensor<ui32>
    %125 = "stablehlo.broadcast_in_dim"(%124) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %126 = "stablehlo.shift_right_logical"(%123, %125) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %127 = "stablehlo.constant"() <{value = dense<1065353216> : tensor<ui32>}> : () -> tensor<ui32>
    %128 = "stablehlo.broadcast_in_dim"(%127) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4x8xui32>
    %129 = "stablehlo.or"(%126, %128) : (tensor<4x8xui32>, tensor<4x8xui32>) -> tensor<4x8xui32>
    %130 = "stablehlo.bitcast_convert"(%129) : (tensor<4x8xui32>) -> tensor<4x8xf32>
    %131 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %132 = "stablehlo.broadcast_in_dim"(%131) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %133 = "stablehlo.subtract"(%130, %132) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %134 = "stablehlo.reshape"(%arg5) : (tensor<f32>) -> tensor<1x1xf32>
    %135 = "stablehlo.subtract"(%134, %101) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
    %136 = "stablehlo.broadcast_in_dim"(%135) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %137 = "stablehlo.reshape"(%136) : (tensor<1x1xf32>) -> tensor<f32>
    %138 = "stablehlo.broadcast_in_dim"(%137) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %139 = "stablehlo.multiply"(%133, %138) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %140 = "stablehlo.broadcast_in_dim"(%101) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %141 = "stablehlo.reshape"(%140) : (tensor<1x1xf32>) -> tensor<f32>
    %142 = "stablehlo.broadcast_in_dim"(%141) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %143 = "stablehlo.add"(%139, %142) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %144 = "stablehlo.maximum"(%104, %143) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%144) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>) -> tensor<4x8xf32>, sym_name = "_normal_real.16", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<2xui32>):
    %10 = "stablehlo.constant"() <{value = dense<-0.99999994> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "func.call"(%arg2, %10, %11) <{callee = @_uniform_2.15}> : (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
    %13 = "stablehlo.abs"(%12) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %14 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %16 = "stablehlo.compare"(%13, %15) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
    %17 = "stablehlo.constant"() <{value = dense<0x7F800000> : tensor<f32>}> : () -> tensor<f32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %19 = "stablehlo.multiply"(%12, %18) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %20 = "stablehlo.negate"(%12) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %21 = "stablehlo.multiply"(%12, %20) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %22 = "stablehlo.log_plus_one"(%21) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %23 = "stablehlo.negate"(%22) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %24 = "stablehlo.constant"() <{value = dense<5.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %25 = "stablehlo.broadcast_in_dim"(%24) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %26 = "stablehlo.compare"(%23, %25) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
    %27 = "stablehlo.constant"() <{value = dense<1.50140941> : tensor<f32>}> : () -> tensor<f32>
    %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %29 = "stablehlo.constant"() <{value = dense<2.83297682> : tensor<f32>}> : () -> tensor<f32>
    %30 = "stablehlo.broadcast_in_dim"(%29) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %31 = "stablehlo.select"(%26, %28, %30) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %32 = "stablehlo.constant"() <{value = dense<0.246640727> : tensor<f32>}> : () -> tensor<f32>
    %33 = "stablehlo.broadcast_in_dim"(%32) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %34 = "stablehlo.constant"() <{value = dense<1.00167406> : tensor<f32>}> : () -> tensor<f32>
    %35 = "stablehlo.broadcast_in_dim"(%34) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %36 = "stablehlo.select"(%26, %33, %35) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %37 = "stablehlo.constant"() <{value = dense<-0.00417768164> : tensor<f32>}> : () -> tensor<f32>
    %38 = "stablehlo.broadcast_in_dim"(%37) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %39 = "stablehlo.constant"() <{value = dense<0.00943887047> : tensor<f32>}> : () -> tensor<f32>
    %40 = "stablehlo.broadcast_in_dim"(%39) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %41 = "stablehlo.select"(%26, %38, %40) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %42 = "stablehlo.constant"() <{value = dense<-0.00125372503> : tensor<f32>}> : () -> tensor<f32>
    %43 = "stablehlo.broadcast_in_dim"(%42) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %44 = "stablehlo.constant"() <{value = dense<-0.0076224613> : tensor<f32>}> : () -> tensor<f32>
    %45 = "stablehlo.broadcast_in_dim"(%44) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %46 = "stablehlo.select"(%26, %43, %45) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %47 = "stablehlo.constant"() <{value = dense<2.1858087E-4> : tensor<f32>}> : () -> tensor<f32>
    %48 = "stablehlo.broadcast_in_dim"(%47) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %49 = "stablehlo.constant"() <{value = dense<0.00573950773> : tensor<f32>}> : () -> tensor<f32>
    %50 = "stablehlo.broadcast_in_dim"(%49) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %51 = "stablehlo.select"(%26, %48, %50) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %52 = "stablehlo.constant"() <{value = dense<-4.39150654E-6> : tensor<f32>}> : () -> tensor<f32>
    %53 = "stablehlo.broadcast_in_dim"(%52) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %54 = "stablehlo.constant"() <{value = dense<-0.00367342844> : tensor<f32>}> : () -> tensor<f32>
    %55 = "stablehlo.broadcast_in_dim"(%54) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %56 = "stablehlo.select"(%26, %53, %55) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %57 = "stablehlo.constant"() <{value = dense<-3.5233877E-6> : tensor<f32>}> : () -> tensor<f32>
    %58 = "stablehlo.broadcast_in_dim"(%57) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %59 = "stablehlo.constant"() <{value = dense<0.00134934322> : tensor<f32>}> : () -> tensor<f32>
    %60 = "stablehlo.broadcast_in_dim"(%59) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %61 = "stablehlo.select"(%26, %58, %60) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %62 = "stablehlo.constant"() <{value = dense<3.43273939E-7> : tensor<f32>}> : () -> tensor<f32>
    %63 = "stablehlo.broadcast_in_dim"(%62) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %64 = "stablehlo.constant"() <{value = dense<1.00950558E-4> : tensor<f32>}> : () -> tensor<f32>
    %65 = "stablehlo.broadcast_in_dim"(%64) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %66 = "stablehlo.select"(%26, %63, %65) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %67 = "stablehlo.constant"() <{value = dense<2.81022636E-8> : tensor<f32>}> : () -> tensor<f32>
    %68 = "stablehlo.broadcast_in_dim"(%67) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %69 = "stablehlo.constant"() <{value = dense<-2.00214257E-4> : tensor<f32>}> : () -> tensor<f32>
    %70 = "stablehlo.broadcast_in_dim"(%69) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %71 = "stablehlo.select"(%26, %68, %70) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %72 = "stablehlo.constant"() <{value = dense<2.500000e+00> : tensor<f32>}> : () -> tensor<f32>
    %73 = "stablehlo.broadcast_in_dim"(%72) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %74 = "stablehlo.subtract"(%23, %73) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %75 = "stablehlo.sqrt"(%23) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %76 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %77 = "stablehlo.broadcast_in_dim"(%76) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %78 = "stablehlo.subtract"(%75, %77) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %79 = "stablehlo.select"(%26, %74, %78) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %80 = "stablehlo.multiply"(%71, %79) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %81 = "stablehlo.add"(%66, %80) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %82 = "stablehlo.multiply"(%81, %79) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %83 = "stablehlo.add"(%61, %82) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %84 = "stablehlo.multiply"(%83, %79) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %85 = "stablehlo.add"(%56, %84) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %86 = "stablehlo.multiply"(%85, %79) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %87 = "stablehlo.add"(%51, %86) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %88 = "stablehlo.multiply"(%87, %79) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %89 = "stablehlo.add"(%46, %88) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %90 = "stablehlo.multiply"(%89, %79) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %91 = "stablehlo.add"(%41, %90) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %92 = "stablehlo.multiply"(%91, %79) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %93 = "stablehlo.add"(%36, %92) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %94 = "stablehlo.multiply"(%93, %79) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %95 = "stablehlo.add"(%31, %94) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %96 = "stablehlo.multiply"(%95, %12) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %97 = "stablehlo.select"(%16, %19, %96) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %98 = "stablehlo.constant"() <{value = dense<1.41421354> : tensor<f32>}> : () -> tensor<f32>
    %99 = "stablehlo.broadcast_in_dim"(%98) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %100 = "stablehlo.multiply"(%97, %99) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%100) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>) -> tensor<4x8xf32>, sym_name = "_normal.17", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<2xui32>):
    %9 = "func.call"(%arg1) <{callee = @_normal_real.16}> : (tensor<2xui32>) -> tensor<4x8xf32>
    "func.return"(%9) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>) -> (tensor<64xf32>, tensor<4x8xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2xui32>):
    %0 = "func.call"(%arg0) <{callee = @_threefry_split.5}> : (tensor<2xui32>) -> tensor<2x2xui32>
    %1 = "stablehlo.slice"(%0) <{limit_indices = array<i64: 1, 2>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<2x2xui32>) -> tensor<1x2xui32>
    %2 = "stablehlo.reshape"(%1) : (tensor<1x2xui32>) -> tensor<2xui32>
    %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %5 = "func.call"(%2, %3, %4) <{callee = @_uniform.10}> : (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<64xf32>
    %6 = "stablehlo.slice"(%0) <{limit_indices = array<i64: 2, 2>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 1>}> : (tensor<2x2xui32>) -> tensor<1x2xui32>
    %7 = "stablehlo.reshape"(%6) : (tensor<1x2xui32>) -> tensor<2xui32>
    %8 = "func.call"(%7) <{callee = @_normal.17}> : (tensor<2xui32>) -> tensor<4x8xf32>
    "func.return"(%5, %8) : (tensor<64xf32>, tensor<4x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} : () -> ()
