"""StableHLO import (``xlac.parse_stablehlo``): each op in its pretty and generic
forms gives the same results, checked against numpy; nested functions and
regions; types; errors that name the op and where it is.

The whole-program checks (every ``tests/jax_cases`` program as jax prints it
and as ``jax.export`` serialises it, the public corpus as StableHLO) are in
``tests/test_corpus.py``.
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.hlo.stablehlo import is_stablehlo, parse_module_text

rng = np.random.default_rng(7)
#: jax's host callbacks as jax 0.10.2 prints them (``generate.py`` there).
CALLBACKS = Path(__file__).resolve().parents[1] / "stablehlo_corpus" / "callbacks"


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def run(text, *args):
    """Import ``text`` and run it on the numpy evaluator and the JIT; both must agree."""
    module = xlac.parse_stablehlo(text)
    ref = xlac.evaluate(module, *args)
    got = xlac.jit(xlac.parse_stablehlo(text))(*args)
    for r, g in zip(ref if isinstance(ref, tuple) else (ref,), got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-5, atol=1e-6)
    return got


def main(sig, body, results="tensor<4xf32>"):
    return f"func.func public @main({sig}) -> ({results}) {{\n{body}\n}}"


# (name, pretty body, generic body, signature, result types, inputs, expected(inputs))
X4 = "%arg0: tensor<4xf32>, %arg1: tensor<4xf32>"
CASES = [
    ("add", "%0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>\nreturn %0 : tensor<4xf32>",
     '%0 = "stablehlo.add"(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n'
     '"func.return"(%0) : (tensor<4xf32>) -> ()',
     X4, "tensor<4xf32>", lambda: [f32(4), f32(4)], lambda a, b: a + b),
    ("compare_select", "%0 = stablehlo.compare GT, %arg0, %arg1, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
     "%1 = stablehlo.select %0, %arg0, %arg1 : tensor<4xi1>, tensor<4xf32>\nreturn %1 : tensor<4xf32>",
     '%0 = "stablehlo.compare"(%arg0, %arg1) <{comparison_direction = #stablehlo<comparison_direction GT>, '
     'compare_type = #stablehlo<comparison_type FLOAT>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n'
     '%1 = "stablehlo.select"(%0, %arg0, %arg1) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n'
     'return %1 : tensor<4xf32>',
     X4, "tensor<4xf32>", lambda: [f32(4), f32(4)], np.maximum),
    ("convert_bitcast", "%0 = stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<4xi32>\n"
     "%1 = stablehlo.convert %0 : (tensor<4xi32>) -> tensor<4xui32>\nreturn %1 : tensor<4xui32>",
     '%0 = "stablehlo.bitcast_convert"(%arg0) : (tensor<4xf32>) -> tensor<4xi32>\n'
     '%1 = "stablehlo.convert"(%0) : (tensor<4xi32>) -> tensor<4xui32>\nreturn %1 : tensor<4xui32>',
     "%arg0: tensor<4xf32>", "tensor<4xui32>", lambda: [f32(4)], lambda a: a.view(np.uint32)),
    ("broadcast_reshape_transpose",
     "%0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>\n"
     "%1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
     "%2 = stablehlo.reshape %1 : (tensor<3x2xf32>) -> tensor<6xf32>\nreturn %2 : tensor<6xf32>",
     '%0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1>}> : (tensor<3xf32>) -> tensor<2x3xf32>\n'
     '%1 = "stablehlo.transpose"(%0) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>\n'
     '%2 = "stablehlo.reshape"(%1) : (tensor<3x2xf32>) -> tensor<6xf32>\nreturn %2 : tensor<6xf32>',
     "%arg0: tensor<3xf32>", "tensor<6xf32>", lambda: [f32(3)], lambda a: np.repeat(a, 2)),
    ("broadcast_size_one",         # StableHLO may expand a size-1 dimension; HLO may not
     "%0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>\n"
     "return %0 : tensor<2x3xf32>",
     '%0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x3xf32>) -> tensor<2x3xf32>\n'
     'return %0 : tensor<2x3xf32>',
     "%arg0: tensor<1x3xf32>", "tensor<2x3xf32>", lambda: [f32(1, 3)], lambda a: np.broadcast_to(a, (2, 3))),
    ("slice", "%0 = stablehlo.slice %arg0 [1:7:2] : (tensor<8xf32>) -> tensor<3xf32>\nreturn %0 : tensor<3xf32>",
     '%0 = "stablehlo.slice"(%arg0) <{start_indices = array<i64: 1>, limit_indices = array<i64: 7>, '
     'strides = array<i64: 2>}> : (tensor<8xf32>) -> tensor<3xf32>\nreturn %0 : tensor<3xf32>',
     "%arg0: tensor<8xf32>", "tensor<3xf32>", lambda: [f32(8)], lambda a: a[1:7:2]),
    ("dynamic_slice_update",
     "%0 = stablehlo.dynamic_slice %arg0, %arg1, sizes = [2] : (tensor<8xf32>, tensor<i32>) -> tensor<2xf32>\n"
     "%1 = stablehlo.dynamic_update_slice %arg0, %0, %arg1 : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>\n"
     "return %1 : tensor<8xf32>",
     '%0 = "stablehlo.dynamic_slice"(%arg0, %arg1) <{slice_sizes = array<i64: 2>}> : (tensor<8xf32>, tensor<i32>) -> tensor<2xf32>\n'
     '%1 = "stablehlo.dynamic_update_slice"(%arg0, %0, %arg1) : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>\n'
     'return %1 : tensor<8xf32>',
     "%arg0: tensor<8xf32>, %arg1: tensor<i32>", "tensor<8xf32>", lambda: [f32(8), np.int32(3)], lambda a, i: a),
    ("concatenate_pad",
     "%cst = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "%0 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>\n"
     "%1 = stablehlo.pad %0, %cst, low = [1], high = [0], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>\n"
     "return %1 : tensor<8xf32>",
     '%cst = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>\n'
     '%0 = "stablehlo.concatenate"(%arg0, %arg0) <{dimension = 0 : i64}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>\n'
     '%1 = "stablehlo.pad"(%0, %cst) <{edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 0>, '
     'interior_padding = array<i64: 1>}> : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>\nreturn %1 : tensor<8xf32>',
     "%arg0: tensor<2xf32>", "tensor<8xf32>", lambda: [np.array([1, 2], np.float32)],
     lambda a: np.array([0, 1, 0, 2, 0, 1, 0, 2], np.float32)),
    ("iota_constants",
     "%0 = stablehlo.iota dim = 0 : tensor<4xf32>\n"
     "%1 = stablehlo.constant dense<[1.0, 0x7F800000, -2.5, 0.5]> : tensor<4xf32>\n"
     '%2 = stablehlo.constant dense<"0x0000803F000000400000404000008040"> : tensor<4xf32>\n'
     "%3 = stablehlo.add %0, %1 : tensor<4xf32>\n%4 = stablehlo.add %3, %2 : tensor<4xf32>\nreturn %4 : tensor<4xf32>",
     '%0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4xf32>\n'
     '%1 = "stablehlo.constant"() <{value = dense<[1.0, 0x7F800000, -2.5, 0.5]> : tensor<4xf32>}> : () -> tensor<4xf32>\n'
     '%2 = "stablehlo.constant"() <{value = dense<"0x0000803F000000400000404000008040"> : tensor<4xf32>}> : () -> tensor<4xf32>\n'
     '%3 = "stablehlo.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n'
     '%4 = "stablehlo.add"(%3, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\nreturn %4 : tensor<4xf32>',
     "", "tensor<4xf32>", lambda: [], lambda: np.array([2, np.inf, 2.5, 7.5], np.float32)),
    ("reduce", "%cst = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "%0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : "
     "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\nreturn %0 : tensor<2xf32>",
     '%cst = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>\n'
     '%0 = "stablehlo.reduce"(%arg0, %cst) <{dimensions = array<i64: 1>}> ({\n'
     '^bb0(%a: tensor<f32>, %b: tensor<f32>):\n  %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
     '  "stablehlo.return"(%s) : (tensor<f32>) -> ()\n}) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n'
     'return %0 : tensor<2xf32>',
     "%arg0: tensor<2x3xf32>", "tensor<2xf32>", lambda: [f32(2, 3)], lambda a: a.sum(1)),
    ("reduce_two_inputs_reducer",        # the pretty form with a reducer region (argmax)
     "%cst = stablehlo.constant dense<0xFF800000> : tensor<f32>\n%c = stablehlo.constant dense<0> : tensor<i32>\n"
     "%i = stablehlo.iota dim = 0 : tensor<5xi32>\n"
     "%0:2 = stablehlo.reduce(%arg0 init: %cst), (%i init: %c) across dimensions = [0] : "
     "(tensor<5xf32>, tensor<5xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)\n"
     " reducer(%a: tensor<f32>, %b: tensor<f32>) (%ia: tensor<i32>, %ib: tensor<i32>) {\n"
     "  %g = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "  %m = stablehlo.select %g, %a, %b : tensor<i1>, tensor<f32>\n"
     "  %j = stablehlo.select %g, %ia, %ib : tensor<i1>, tensor<i32>\n"
     "  stablehlo.return %m, %j : tensor<f32>, tensor<i32>\n }\nreturn %0#1 : tensor<i32>",
     None, "%arg0: tensor<5xf32>", "tensor<i32>", lambda: [np.array([1, 5, 2, 5, 0], np.float32)],
     lambda a: np.int32(1)),
    ("dot_general", "%0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1], "
     "precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n"
     "return %0 : tensor<2x3x5xf32>",
     '%0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], '
     'rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : '
     '(tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\nreturn %0 : tensor<2x3x5xf32>',
     "%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x4x5xf32>", "tensor<2x3x5xf32>", lambda: [f32(2, 3, 4), f32(2, 4, 5)],
     lambda a, b: a @ b),
    ("convolution", "%0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], "
     "window = {stride = [1], pad = [[1, 1]], lhs_dilate = [1], rhs_dilate = [1]} "
     "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x1xf32>, tensor<3x1x1xf32>) -> tensor<1x5x1xf32>\n"
     "return %0 : tensor<1x5x1xf32>",
     '%0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = '
     '#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, padding = dense<1> : tensor<1x2xi64>, '
     'window_strides = array<i64: 1>}> : (tensor<1x5x1xf32>, tensor<3x1x1xf32>) -> tensor<1x5x1xf32>\n'
     'return %0 : tensor<1x5x1xf32>',
     "%arg0: tensor<1x5x1xf32>, %arg1: tensor<3x1x1xf32>", "tensor<1x5x1xf32>",
     lambda: [np.arange(5, dtype=np.float32).reshape(1, 5, 1), np.ones((3, 1, 1), np.float32)],
     lambda a, w: np.convolve(a.ravel(), np.ones(3), "same").astype(np.float32).reshape(1, 5, 1)),
    ("tuple_complex_clamp",
     "%0 = stablehlo.complex %arg0, %arg1 : tensor<4xcomplex<f32>>\n%1 = stablehlo.real %0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>\n"
     "%2 = stablehlo.imag %0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>\n"
     "%t = stablehlo.tuple %1, %2 : tuple<tensor<4xf32>, tensor<4xf32>>\n"
     "%3 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<4xf32>, tensor<4xf32>>) -> tensor<4xf32>\n"
     "%4 = stablehlo.clamp %1, %3, %1 : tensor<4xf32>\n%5:2 = stablehlo.optimization_barrier %4, %3 : tensor<4xf32>, tensor<4xf32>\n"
     "return %5#0 : tensor<4xf32>", None, X4, "tensor<4xf32>", lambda: [f32(4), f32(4)], lambda a, b: a),
    ("reduce_precision_map",
     "%0 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<4xf32>\n"
     '%1 = "stablehlo.map"(%0, %arg1) <{dimensions = array<i64: 0>}> ({\n^bb0(%a: tensor<f32>, %b: tensor<f32>):\n'
     "  %m = stablehlo.multiply %a, %b : tensor<f32>\n  stablehlo.return %m : tensor<f32>\n"
     "}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\nreturn %1 : tensor<4xf32>",
     '%0 = "stablehlo.reduce_precision"(%arg0) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<4xf32>) -> tensor<4xf32>\n'
     '%1 = "stablehlo.map"(%0, %arg1) <{dimensions = array<i64: 0>}> ({\n^bb0(%a: tensor<f32>, %b: tensor<f32>):\n'
     '  %m = "stablehlo.multiply"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n  "stablehlo.return"(%m) : (tensor<f32>) -> ()\n'
     "}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\nreturn %1 : tensor<4xf32>",
     X4, "tensor<4xf32>", lambda: [f32(4), f32(4)], lambda a, b: a.astype(np.float16).astype(np.float32) * b),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_op_forms(case):
    name, pretty, generic, sig, results, make_inputs, expected = case
    inputs = make_inputs()
    want = expected(*inputs)
    for body in (pretty, generic):
        if body is None:
            continue
        got = run(main(sig, body, results), *inputs)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5, err_msg=name)


def test_module_header_nested_functions_and_calls():
    text = """module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {mhlo.layout_mode = "default"}) -> (tensor<4xf32> {jax.result_info = "result"}, tensor<4xf32>) {
    %0:2 = call @two(%arg0) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %1 = func.call @sq(%0#1) : (tensor<4xf32>) -> tensor<4xf32>
    return %0#0, %1 : tensor<4xf32>, tensor<4xf32>
  }
  func.func private @two(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
    %1 = call @sq(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0, %1 : tensor<4xf32>, tensor<4xf32>
  }
  func.func private @sq(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = chlo.square %arg0 : tensor<4xf32> -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
    module = xlac.parse_stablehlo(text.replace('{mhlo.layout_mode = "default"}',
                                               '{mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}'))
    assert str(module.entry.parameters[0].attrs["sharding"]) == "{replicated}"   # kept; layout_mode ignored
    x = f32(4)
    a, b = run(text, x)
    np.testing.assert_allclose(a, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(b, x ** 4, rtol=1e-5)


def test_while_if_case_with_captured_values():
    # Regions of while / if / case may use values from outside (HLO passes them in).
    text = main("%arg0: tensor<f32>, %arg1: tensor<i32>", """
    %c10 = stablehlo.constant dense<10> : tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %two = stablehlo.constant dense<2.0> : tensor<f32>
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c0, %iterArg_0 = %arg0) : tensor<i32>, tensor<f32>
     cond {
      %p = stablehlo.compare LT, %iterArg, %c10, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %n = stablehlo.add %iterArg, %one : tensor<i32>
      %v = stablehlo.add %iterArg_0, %two : tensor<f32>
      stablehlo.return %n, %v : tensor<i32>, tensor<f32>
    }
    %p = stablehlo.compare GT, %arg1, %c0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %1 = "stablehlo.if"(%p) ({
      %m = stablehlo.multiply %0#1, %two : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }, {
      stablehlo.return %arg0 : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
    %2 = "stablehlo.case"(%arg1) ({
      stablehlo.return %1 : tensor<f32>
    }, {
      %n = stablehlo.negate %1 : tensor<f32>
      stablehlo.return %n : tensor<f32>
    }) : (tensor<i32>) -> tensor<f32>
    return %2 : tensor<f32>""", "tensor<f32>")
    assert float(run(text, np.float32(1), np.int32(1))) == pytest.approx(-42.0)
    assert float(run(text, np.float32(1), np.int32(0))) == pytest.approx(1.0)


def test_a_comparator_inside_a_case_copies_in_a_constant_of_the_function():
    # jax's rankdata: a sort inside a case branch whose comparator reads a
    # constant of the function, captured by the branch on the way.
    text = main("%arg0: tensor<4xf32>, %arg1: tensor<i32>", """
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = "stablehlo.case"(%arg1) ({
      %1 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %z = stablehlo.compare EQ, %a, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %c = stablehlo.select %z, %cst, %a : tensor<i1>, tensor<f32>
        %l = stablehlo.compare LT, %c, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %l : tensor<i1>
      }) : (tensor<4xf32>) -> tensor<4xf32>
      stablehlo.return %1 : tensor<4xf32>
    }, {
      stablehlo.return %arg0 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>""")
    x = np.array([3, -1, 2, 0.5], np.float32)
    np.testing.assert_array_equal(run(text, x, np.int32(0)), np.sort(x))
    np.testing.assert_array_equal(run(text, x, np.int32(1)), x)


def test_sort_scatter_gather_generic():
    text = main("%arg0: tensor<5xf32>, %arg1: tensor<2x1xi32>, %arg2: tensor<2xf32>", """
    %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %l = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %l : tensor<i1>
    }) : (tensor<5xf32>) -> tensor<5xf32>
    %1 = "stablehlo.scatter"(%0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers =
      #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
      unique_indices = false}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<5xf32>
    %2 = "stablehlo.gather"(%1, %arg1) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0],
      start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false,
      slice_sizes = array<i64: 1>}> : (tensor<5xf32>, tensor<2x1xi32>) -> tensor<2xf32>
    return %2 : tensor<2xf32>""", "tensor<2xf32>")
    x = np.array([3, 1, 2, 5, 4], np.float32)
    got = run(text, x, np.array([[0], [4]], np.int32), np.array([10, 20], np.float32))
    np.testing.assert_array_equal(got, [11, 25])


def test_types():
    text = main("%arg0: tensor<2xbf16>, %arg1: tensor<2xui8>, %arg2: tensor<2xf8E4M3FN>, %arg3: tensor<i1>", """
    %0 = stablehlo.convert %arg1 : (tensor<2xui8>) -> tensor<2xbf16>
    %1 = stablehlo.add %arg0, %0 : tensor<2xbf16>
    %2 = stablehlo.convert %arg2 : (tensor<2xf8E4M3FN>) -> tensor<2xbf16>
    %3 = stablehlo.add %1, %2 : tensor<2xbf16>
    %4 = stablehlo.convert %3 : (tensor<2xbf16>) -> tensor<2xf32>
    %5 = stablehlo.broadcast_in_dim %arg3, dims = [] : (tensor<i1>) -> tensor<2xi1>
    %6 = stablehlo.select %arg3, %4, %4 : tensor<i1>, tensor<2xf32>
    return %6 : tensor<2xf32>""", "tensor<2xf32>")
    module = xlac.parse_stablehlo(text)
    assert [str(p.shape) for p in module.entry.parameters] == ["bf16[2]{0}", "u8[2]{0}", "f8e4m3fn[2]{0}", "pred[]"]
    bf16 = xlac.Shape(xlac.BF16, ()).dtype
    f8 = xlac.Shape(xlac.F8E4M3FN, ()).dtype
    got = run(text, np.array([1, 2], bf16), np.array([3, 4], np.uint8), np.array([0.5, 1], f8), np.bool_(True))
    np.testing.assert_array_equal(got, [4.5, 7])


def test_bounded_dynamic_type():
    module = xlac.parse_stablehlo(main("%arg0: tensor<?x4xf32, #stablehlo.bounds<10, ?>>",
                                       "return %arg0 : tensor<?x4xf32, #stablehlo.bounds<10, ?>>",
                                       "tensor<?x4xf32, #stablehlo.bounds<10, ?>>"))
    assert str(module.entry.parameters[0].shape).startswith("f32[<=10,4]")
    with pytest.raises(xlac.UnsupportedError, match="unbounded dynamic dimension"):
        xlac.parse_stablehlo(main("%arg0: tensor<?xf32>", "return %arg0 : tensor<?xf32>", "tensor<?xf32>"))


def test_chlo_special_functions_f64_against_scipy():
    special = pytest.importorskip("scipy.special")
    text = main("%arg0: tensor<6xf64>", """
    %0 = chlo.erf_inv %arg0 : tensor<6xf64> -> tensor<6xf64>
    %1 = chlo.lgamma %arg0 : tensor<6xf64> -> tensor<6xf64>
    %2 = chlo.digamma %arg0 : tensor<6xf64> -> tensor<6xf64>
    %3 = chlo.next_after %arg0, %0 : tensor<6xf64>, tensor<6xf64> -> tensor<6xf64>
    return %0, %1, %2, %3 : tensor<6xf64>, tensor<6xf64>, tensor<6xf64>, tensor<6xf64>""",
                "tensor<6xf64>, tensor<6xf64>, tensor<6xf64>, tensor<6xf64>")
    x = np.array([-0.999, -0.5, 0.1, 0.3, 0.75, 1 - 1e-12], np.float64)
    e, lg, dg, na = xlac.jit(xlac.parse_stablehlo(text))(x)
    np.testing.assert_allclose(e, special.erfinv(x), rtol=1e-14)
    np.testing.assert_allclose(lg, special.gammaln(x), rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(dg, special.digamma(x), rtol=1e-9, atol=1e-14)
    np.testing.assert_array_equal(na, np.nextafter(x, e))


def test_custom_call_lapack_and_composite():
    text = main("%arg0: tensor<3x3xf32>", """
    %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
    %1 = stablehlo.composite "my.double" %0#0 {composite_attributes = {k = 2 : i64}, decomposition = @double, version = 1 : i32} : (tensor<3x3xf32>) -> tensor<3x3xf32>
    return %1 : tensor<3x3xf32>""", "tensor<3x3xf32>") + """
func.func private @double(%arg0: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}"""
    module = xlac.parse_stablehlo(text)
    cc = [i for c in module.computations for i in c.instructions if i.opcode == "custom-call"][0]
    assert str(cc.attrs["backend_config"]) == "{uplo = 76 : ui8}"
    assert str(cc.attrs["custom_call_target"]) == '"lapack_spotrf_ffi"'
    assert cc.attrs["api_version"] == "API_VERSION_TYPED_FFI"
    a = f32(3, 3)
    spd = (a @ a.T + 3 * np.eye(3)).astype(np.float32)
    got = xlac.jit(module)(spd)
    np.testing.assert_allclose(np.tril(got), 2 * np.linalg.cholesky(spd), rtol=1e-4, atol=1e-5)


def test_all_reduce_module_attributes():
    text = """module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}"""
    module = xlac.parse_stablehlo(text)
    assert module.replica_count == 2
    ar = module.entry.root
    assert ar.opcode == "all-reduce" and ar.attrs["channel_id"] == 1
    assert "replica_groups={{0,1}}" in module.to_text()
    x = [f32(3), f32(3)]
    outs = xlac.evaluate_replicated(module, [[x[0]], [x[1]]])
    np.testing.assert_allclose(outs[0], x[0] + x[1], rtol=1e-6)


def test_sharding_constraint_that_shards_nothing_is_its_operand():
    """jax puts ``sdy.sharding_constraint`` on the empty mesh around random keys in
    one-device programs; one naming mesh axes is XLA's ``Sharding`` custom call
    (the value itself in the global computation), as XLA's HLO export writes it."""
    text = """module @jit_u attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @empty_mesh = <[]> {stablehlo.mesh = {axes = []}}
  sdy.mesh @mesh = <["x"=2]>
  sdy.mesh @one = <["x"=1, "y"=1]>
  func.func public @main(%arg0: tensor<2xui32>) -> tensor<2xui32> {
    %0 = sdy.sharding_constraint %arg0 <@empty_mesh, [{}]> : tensor<2xui32>
    %n = sdy.sharding_constraint %0 <@one, [{"x", "y"}]> : tensor<2xui32>
    %1 = sdy.sharding_constraint %n <@mesh, [{}]> : tensor<2xui32>
    %2 = stablehlo.add %1, %1 : tensor<2xui32>
    return %2 : tensor<2xui32>
  }
}"""
    x = np.array([3, 4], np.uint32)
    np.testing.assert_array_equal(xlac.jit(xlac.parse_stablehlo(text))(x), x + x)
    sharded = xlac.parse_stablehlo(text.replace('<@mesh, [{}]>', '<@mesh, [{"x"}]>'))
    calls = [i for i in sharded.entry.instructions if i.opcode == "custom-call"]
    assert len(calls) == 1 and 'custom_call_target="Sharding"' in sharded.to_text()
    assert r'xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"x\"}]>]>"' in sharded.to_text()
    np.testing.assert_array_equal(xlac.evaluate(sharded, x), x + x)


def test_dot_general_algorithm_rounds_operands_to_its_precision_type():
    """``algorithm = <lhs_precision_type = bf16, ..., accumulation_type = f32>`` (jax's
    DotAlgorithmPreset.BF16_BF16_F32) multiplies bf16-rounded operands in f32."""
    text = """module @m {
  func.func public @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = PT,
      rhs_precision_type = PT, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1,
      num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    return %0 : tensor<2x2xf32>
  }
}"""
    a = np.array([[1 + 2.0 ** -12, 1], [3, 0.1]], np.float32)
    b = np.eye(2, dtype=np.float32)
    np.testing.assert_array_equal(xlac.jit(xlac.parse_stablehlo(text.replace("PT", "f32")))(a, b), a)
    bf16 = np.array([[1, 1], [3, 0.10009765625]], np.float32)      # a rounded to bf16
    np.testing.assert_array_equal(xlac.jit(xlac.parse_stablehlo(text.replace("PT", "bf16")))(a, b), bf16)


# -- errors ----------------------------------------------------------------------------------
def test_unsupported_op_names_op_and_location():
    text = """module @m {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.frobnicate %arg0 : tensor<4xf32> loc(#loc2)
    return %0 : tensor<4xf32>
  }
}
#loc1 = loc("model.py":12:7)
#loc2 = loc("jit(f)/frob"(#loc1))
"""
    with pytest.raises(xlac.UnsupportedError) as e:
        xlac.parse_stablehlo(text, "f.mlir")
    msg = str(e.value)
    assert "not supported yet: stablehlo.frobnicate" in msg and "f.mlir:3:10" in msg and "model.py:12:7" in msg


def test_located_errors_carry_the_place_apart_from_the_message():
    # For a tool's FILE:LINE:COL: prefix (xlac's command line): line, column and
    # the message without the place.
    text = main("%arg0: tensor<4xf32>", "%0 = stablehlo.frobnicate %arg0 : tensor<4xf32>\n"
                "return %0 : tensor<4xf32>")
    with pytest.raises(xlac.UnsupportedError) as e:
        xlac.parse_stablehlo(text, "f.mlir")
    assert (e.value.line, e.value.column) == (2, 6) and "f.mlir" in str(e.value)
    assert e.value.message.startswith("not supported yet: stablehlo.frobnicate") and "f.mlir" not in e.value.message
    text = main("%arg0: tensor<4xf32>", "%0 = stablehlo.add %arg0, %arg0 : (tensor<4xf32>, tensor<4xf32>) -> "
                "tensor<5xf32>\nreturn %0 : tensor<5xf32>", "tensor<5xf32>")
    with pytest.raises(xlac.ShapeError) as e:
        xlac.parse_stablehlo(text, "f.mlir")
    assert (e.value.line, e.value.column) == (2, 6)
    assert e.value.message.startswith("stablehlo.add: result type f32[5]") and "f.mlir" not in e.value.message


def test_type_mismatch_is_a_shape_error_at_the_op():
    text = main("%arg0: tensor<4xf32>", "%0 = stablehlo.add %arg0, %arg0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>\n"
                "return %0 : tensor<5xf32>", "tensor<5xf32>")
    with pytest.raises(xlac.ShapeError, match=r"stablehlo.add at line 2, column 6.*f32\[4\]"):
        xlac.parse_stablehlo(text)


def test_function_result_must_match_its_signature():
    with pytest.raises(xlac.ShapeError, match=r"@main returns \(f32\[4\]\{0\}\), its signature says \(f32\[5\]"):
        xlac.parse_stablehlo(main("%arg0: tensor<4xf32>", "return %arg0 : tensor<4xf32>", "tensor<5xf32>"))


@pytest.mark.parametrize("text,where,what", [
    ("module {\n  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    return %x : tensor<4xf32>\n  }\n}",
     (3, 5), "undefined value %x"),
    ("module {\n  func.func public @main(%arg0: tensor<4xf32> -> tensor<4xf32> {\n  }\n}", (2, 47), "expected"),
    ("module {\n  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
     "    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>\n", (2, 65), "not closed"),
])
def test_syntax_errors_have_line_and_column(text, where, what):
    with pytest.raises(xlac.HloParseError, match=what) as e:
        xlac.parse_stablehlo(text)
    assert (e.value.line, e.value.column) == where


# -- format detection and the command line -----------------------------------------------------
ADD = main("%arg0: tensor<4xf32>", "%0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>\nreturn %0 : tensor<4xf32>")


def test_format_detection():
    assert is_stablehlo("module @jit_f {\n}") and is_stablehlo(ADD) and is_stablehlo('"builtin.module"() ({})')
    assert is_stablehlo('#loc1 = loc("x")\nmodule @m {}')
    assert not is_stablehlo("HloModule m\nENTRY e { ROOT p = f32[] parameter(0) }")
    assert parse_module_text(ADD).entry.root.opcode == "add"
    x = f32(4)
    np.testing.assert_allclose(xlac.jit(ADD)(x), 2 * x)          # xlac.jit takes StableHLO text too
    np.testing.assert_allclose(xlac.evaluate(ADD, x), 2 * x)


@pytest.mark.timeout(300)
def test_cli_run_and_dump(tmp_path):
    path = tmp_path / "model.mlir"
    path.write_text(ADD, encoding="utf-8")
    x = f32(4)
    np.savez(tmp_path / "in.npz", x)
    r = subprocess.run([sys.executable, "-m", "xlac", "run", str(path), "--inputs", str(tmp_path / "in.npz"),
                        "--out", str(tmp_path / "out.npz")], capture_output=True, encoding="utf-8")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_allclose(out["arr_0"], 2 * x)
    r = subprocess.run([sys.executable, "-m", "xlac", "compile", str(path), "-o", str(tmp_path / "m.o")],
                       capture_output=True, encoding="utf-8")
    assert r.returncode == 0 and (tmp_path / "m.o").stat().st_size > 0 and (tmp_path / "m.h").exists(), r.stderr
    r = subprocess.run([sys.executable, "-m", "xlac", "dump", str(path)], capture_output=True, encoding="utf-8")
    assert r.returncode == 0 and "// ---- imported from StableHLO ----" in r.stdout and "add(" in r.stdout
    bad = tmp_path / "bad.mlir"
    bad.write_text(ADD.replace("stablehlo.add", "stablehlo.frobnicate"), encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "xlac", "run", str(bad)], capture_output=True, encoding="utf-8")
    assert r.returncode != 0 and "stablehlo.frobnicate" in r.stderr and "bad.mlir:2:" in r.stderr


@pytest.mark.timeout(300)
def test_damaged_text_raises_xlac_errors_only():
    """Every prefix and some byte flips of a real jax module: an xlac error, never another exception."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "jax_cases" / "while_loop.export.mlir").read_text(encoding="utf-8")
    r = np.random.default_rng(0)
    damaged = [text[:k] for k in range(0, len(text), max(1, len(text) // 150))]
    for _ in range(150):
        k = int(r.integers(len(text)))
        damaged.append(text[:k] + "(){}[]<>%:,=\"#@x0"[int(r.integers(17))] + text[k + 1:])
    for t in damaged:
        try:
            xlac.parse_stablehlo(t)
        except (xlac.HloParseError, xlac.UnsupportedError, xlac.ShapeError):
            pass


# -- jax's host callbacks -------------------------------------------------------------

_CALLBACK = r"not supported yet: host callback \(jax\.debug\.print / pure_callback\): " \
            r"custom_call @xla_ffi_python_cpu_callback"


@pytest.mark.parametrize("name", ["debug_print", "pure_callback", "io_callback_ordered", "debug_print_gspmd"])
def test_host_callbacks_are_imported_and_refused_at_compile(name):
    """The callbacks' Python functions come only with jax's executions (the jax
    backend runs them): a program read from text imports, and its compile names them."""
    module = xlac.parse_stablehlo((CALLBACKS / f"{name}.mlir").read_text(encoding="utf-8"), f"{name}.mlir")
    assert any("python_cpu_callback" in str(i.attrs.get("custom_call_target")) for i in module.instructions())
    with pytest.raises(xlac.UnsupportedError, match=_CALLBACK + r" \(instruction "):
        xlac.jit(module)
    with pytest.raises(xlac.UnsupportedError, match=_CALLBACK):
        xlac.evaluate(module, *[np.zeros(s.dimensions, s.dtype) if s.is_array else None
                                for s in module.entry.parameter_shapes()])


@pytest.mark.parametrize("name", ["debug_print", "pure_callback", "io_callback_ordered"])
def test_host_callbacks_in_hlo_are_refused_before_partitioning(name, tmp_path):
    """jax's HLO of a callback carries a one-device Shardy mesh: the callback is
    what is named, not the mesh."""
    module = xlac.parse_hlo((CALLBACKS / f"{name}.hlo").read_text(encoding="utf-8"))
    with pytest.raises(xlac.UnsupportedError, match=_CALLBACK + r" \(instruction "):
        xlac.jit(module)
    with pytest.raises(xlac.UnsupportedError, match=_CALLBACK):
        xlac.compile_aot(module, str(tmp_path / "f.o"))


def test_host_callback_cli_is_one_line():
    r = subprocess.run([sys.executable, "-m", "xlac", "run", str(CALLBACKS / "pure_callback.mlir"), "--random-inputs"],
                       capture_output=True, encoding="utf-8", timeout=120)
    assert r.returncode != 0
    assert len(r.stderr.strip().splitlines()) == 1
    assert "host callback (jax.debug.print / pure_callback): custom_call @xla_ffi_python_cpu_callback" in r.stderr


def test_custom_call_token_operand_layout():
    """A token operand's layout constraint is ``token[]`` (what jax writes for
    an ordered io_callback's token), not an array shape."""
    text = main("%arg0: !stablehlo.token, %arg1: tensor<4xf32>", """
    %0:2 = stablehlo.custom_call @my_token_target(%arg0, %arg1) {has_side_effect = true, operand_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (!stablehlo.token, tensor<4xf32>) -> (!stablehlo.token, tensor<4xf32>)
    return %0#0, %0#1 : !stablehlo.token, tensor<4xf32>""", "!stablehlo.token, tensor<4xf32>")
    (cc,) = [i for i in xlac.parse_stablehlo(text).entry.instructions if i.opcode == "custom-call"]
    assert str(cc.attrs["operand_layout_constraints"]) == "{token[], f32[4]{0}}"


def test_async_start_and_done_with_control_deps():
    """``stablehlo.async_start`` (jax's ``all_gather_start``) runs its region where
    it starts and ``async_done`` gives its values, one or several from a future;
    ``control_dep`` custom calls (``jax.experimental.control_deps``), the future
    among their operands, order and compute nothing."""
    text = main("%arg0: tensor<4xf32>, %arg1: tensor<4xf32>", """
    %0 = "stablehlo.async_start"(%arg0, %arg1) ({
    ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
      %s = stablehlo.add %a, %b : tensor<4xf32>
      %p = stablehlo.multiply %a, %b : tensor<4xf32>
      stablehlo.return %s, %p : tensor<4xf32>, tensor<4xf32>
    }) : (tensor<4xf32>, tensor<4xf32>) -> !stablehlo.future<tensor<4xf32>, tensor<4xf32>>
    %1 = "stablehlo.async_start"(%arg0) ({
    ^bb0(%a: tensor<4xf32>):
      %n = stablehlo.negate %a : tensor<4xf32>
      stablehlo.return %n : tensor<4xf32>
    }) : (tensor<4xf32>) -> !stablehlo.future<tensor<4xf32>>
    %2:2 = "stablehlo.async_done"(%0) : (!stablehlo.future<tensor<4xf32>, tensor<4xf32>>) -> (tensor<4xf32>, tensor<4xf32>)
    %3 = "stablehlo.async_done"(%1) : (!stablehlo.future<tensor<4xf32>>) -> tensor<4xf32>
    stablehlo.custom_call @control_dep(%0, %3) {has_side_effect = true, mhlo.backend_config = {}, operand_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>], result_layouts = []} : (!stablehlo.future<tensor<4xf32>, tensor<4xf32>>, tensor<4xf32>) -> ()
    %4 = stablehlo.add %2#0, %3 : tensor<4xf32>
    return %4, %2#1 : tensor<4xf32>, tensor<4xf32>""", "tensor<4xf32>, tensor<4xf32>")
    x, y = np.arange(4, dtype=np.float32), np.full(4, 3, np.float32)
    got = xlac.jit(text)(x, y)
    np.testing.assert_array_equal(got[0], x + y - x)
    np.testing.assert_array_equal(got[1], x * y)
    np.testing.assert_array_equal(xlac.evaluate(text, x, y)[1], x * y)


@pytest.mark.parametrize("split, concat, result", [(1, 0, "8x2"), (0, 1, "2x8"), (1, 1, "4x4")])
def test_all_to_all_of_any_split_and_concat_dimensions(split, concat, result):
    """``lax.all_to_all`` with another split than concat dimension: the HLO
    all-to-all along the split dimension, its blocks regrouped along the
    concat one (the spec's AllToAll, as the builder's ``ops.all_to_all``)."""
    text = f"""module @a2a attributes {{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32}} {{
  func.func public @main(%arg0: tensor<4x4xf32>) -> tensor<{result}xf32> {{
    %0 = "stablehlo.all_to_all"(%arg0) {{split_dimension = {split} : i64, concat_dimension = {concat} : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : (tensor<4x4xf32>) -> tensor<{result}xf32>
    return %0 : tensor<{result}xf32>
  }}
}}"""
    xs = [np.arange(16, dtype=np.float32).reshape(4, 4) + 100 * d for d in range(2)]
    got = xlac.evaluate_replicated(xlac.parse_stablehlo(text), [[x] for x in xs])
    for d in range(2):
        blocks = [np.split(x, 2, axis=split)[d] for x in xs]        # device d gets block d of each
        np.testing.assert_array_equal(got[d], np.concatenate(blocks, axis=concat))


def test_splat_constants_are_scalar_broadcasts():
    """jax writes filled tensors as splats (jax.random.normal of 16x4x128x128 had
    sixty): each is a scalar constant broadcast, not millions of elements to
    print, hash and embed in the code (that compile took 77 s)."""
    text = main("%arg0: tensor<512x512xf32>", """
    %c = stablehlo.constant dense<2.5> : tensor<512x512xf32>
    %h = stablehlo.constant dense<"0x0000C03F"> : tensor<512x512xf32>
    %s = stablehlo.add %arg0, %c : tensor<512x512xf32>
    %r = stablehlo.multiply %s, %h : tensor<512x512xf32>
    return %r : tensor<512x512xf32>""", "tensor<512x512xf32>")
    module = xlac.parse_stablehlo(text)
    constants = [i for i in module.entry.instructions if i.opcode == "constant"]
    assert [c.shape.dimensions for c in constants] == [(), ()]
    x = np.ones((512, 512), np.float32)
    np.testing.assert_array_equal(xlac.jit(module)(x), (x + 2.5) * 1.5)


def test_big_constants_key_by_their_bytes():
    """A module's cache key prints a big constant as a digest of its bytes: two
    modules that differ in one element of it have different keys."""
    from xlac import ops
    def build(w):
        b = xlac.XlaBuilder("big")
        x = ops.parameter(b, 0, xlac.Shape(xlac.F32, (300, 300)), "x")
        return b.build(ops.add(x, ops.constant(b, w))).module
    w = np.arange(90000, dtype=np.float32).reshape(300, 300)
    w2 = w.copy()
    w2[7, 7] = -1
    a, b = build(w).key_text(), build(w2).key_text()
    assert a != b and "{sha256:" in a and len(a) < 2000
    assert "sha256" not in build(w).to_text()


def test_create_token_is_an_after_all_of_nothing():
    """``stablehlo.create_token`` (jax's token input of a jit) imports as ``after-all()``."""
    text = """module @m {
  func.func public @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>, !stablehlo.token) {
    %0 = stablehlo.create_token : !stablehlo.token
    %1 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
    return %1, %0 : tensor<2xf32>, !stablehlo.token
  }
}"""
    out, token = xlac.jit(text)(np.ones(2, np.float32))
    assert token is None and out.tolist() == [2.0, 2.0]
