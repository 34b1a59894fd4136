"""dynamic-reshape (XLA's DynamicReshape) and real-dynamic-slice (StableHLO's
real_dynamic_slice; XLA's HLO has no opcode for it, xlac spells it so):
results with bounded dynamic dimensions whose sizes come from operands at run
time — text round trip, shape errors, the evaluator against hand values, JIT
(optimised and not) and AOT objects against the evaluator, reads that stay
inside the operand whatever the sizes."""
from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac import ops
from test_aot import build_and_run, needs_cc, runtime_obj  # noqa: F401  (runtime_obj is a fixture)

RESHAPE = """HloModule dr

ENTRY e {
  x = f32[<=4,6]{1,0} parameter(0)
  a = s32[] parameter(1)
  b = s32[] parameter(2)
  ROOT r = f32[<=6,<=4]{1,0} dynamic-reshape(x, a, b)
}
"""

SLICE = """HloModule rds

ENTRY e {
  x = f32[5,6]{1,0} parameter(0)
  start = s32[2]{0} parameter(1)
  limit = s32[2]{0} parameter(2)
  stride = s32[2]{0} parameter(3)
  ROOT r = f32[<=5,<=6]{1,0} real-dynamic-slice(x, start, limit, stride)
}
"""

X46 = np.arange(24, dtype=np.float32).reshape(4, 6)
X56 = np.arange(30, dtype=np.float32).reshape(5, 6)


def _runs(text: str, args):
    """The evaluator, then optimised and unoptimised compiled code."""
    yield "evaluate", xlac.evaluate(text, *args)
    yield "jit", xlac.jit(text)(*args)
    yield "jit O0", xlac.jit(text, optimize=False)(*args)


@pytest.mark.parametrize("text", [RESHAPE, SLICE])
def test_text_round_trips(text):
    m = xlac.parse_hlo(text)
    printed = m.to_text()
    assert printed == xlac.parse_hlo(printed).to_text()
    assert text.splitlines()[-2].strip() in printed


@pytest.mark.parametrize("rows, sizes", [(2, (3, 4)), (2, (6, 2)), (1, (2, 3)), (4, (6, 4)), (0, (0, 4)),
                                         (3, (6, 3))])
def test_dynamic_reshape_of_the_valid_elements(rows, sizes):
    x = X46[:rows]
    want = x.reshape(sizes)                      # the valid elements, row-major, in the new sizes
    for who, got in _runs(RESHAPE, (x, np.int32(sizes[0]), np.int32(sizes[1]))):
        assert got.shape == want.shape, who
        np.testing.assert_array_equal(got, want, err_msg=who)


def test_dynamic_reshape_hand_values_from_a_static_operand():
    text = RESHAPE.replace("f32[<=4,6]{1,0} parameter(0)", "f32[2,6]{1,0} parameter(0)").replace(
        "f32[<=6,<=4]", "f32[<=4,<=3]")
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for who, got in _runs(text, (x, np.int32(4), np.int32(3))):
        np.testing.assert_array_equal(got, [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]], err_msg=who)


def test_dynamic_reshape_static_result_dimension_keeps_its_bound():
    # XLA ignores the size operand of a static dimension.
    text = RESHAPE.replace("f32[<=6,<=4]", "f32[<=6,4]")
    x = X46[:2]
    for who, got in _runs(text, (x, np.int32(3), np.int32(99))):
        np.testing.assert_array_equal(got, x.reshape(3, 4), err_msg=who)


def test_dynamic_reshape_sizes_that_do_not_fit_are_an_evaluator_error_and_stay_in_bounds_compiled():
    x = X46[:2]                                   # 12 valid elements
    with pytest.raises(ValueError, match=r"dynamic-reshape r: sizes \[5, 4\] \(20 elements\) do not hold "
                                         r"the operand's 12 elements"):
        xlac.evaluate(RESHAPE, x, np.int32(5), np.int32(4))
    # Over the bound: clamped to it (as set-dimension-size); compiled code reads
    # only inside the operand (gather starts are clamped), whatever it computes.
    got = xlac.jit(RESHAPE)(x, np.int32(1000), np.int32(-5))
    assert got.shape == (6, 0)
    got = xlac.jit(RESHAPE)(x, np.int32(6), np.int32(4))
    assert got.shape == (6, 4) and np.isin(got, X46).all()


@pytest.mark.parametrize("start, limit, stride", [((1, 0), (5, 6), (2, 1)), ((0, 1), (2, 6), (1, 3)),
                                                  ((4, 0), (4, 6), (1, 1)), ((0, 0), (5, 6), (1, 1)),
                                                  ((2, 5), (5, 6), (3, 7))])
def test_real_dynamic_slice(start, limit, stride):
    want = X56[start[0]:limit[0]:stride[0], start[1]:limit[1]:stride[1]]
    args = (X56, np.int32(start), np.int32(limit), np.int32(stride))
    for who, got in _runs(SLICE, args):
        assert got.shape == want.shape, who
        np.testing.assert_array_equal(got, want, err_msg=who)


def test_real_dynamic_slice_of_a_dynamic_operand_with_s64_indices():
    text = SLICE.replace("f32[5,6]{1,0} parameter(0)", "f32[<=5,6]{1,0} parameter(0)").replace("s32[2]", "s64[2]")
    x = X56[:3]
    args = (x, np.int64([1, 1]), np.int64([3, 6]), np.int64([1, 2]))
    for who, got in _runs(text, args):
        np.testing.assert_array_equal(got, x[1:3, 1:6:2], err_msg=who)


@pytest.mark.parametrize("start, limit, stride, message", [
    ((-1, 0), (2, 6), (1, 1), "dimension 0 .* start_indices -1 to limit_indices 2"),
    ((0, 4), (2, 3), (1, 1), "dimension 1 .* start_indices 4 to limit_indices 3"),
    ((0, 0), (2, 7), (1, 1), "dimension 1 .* limit_indices 7"),
    ((0, 0), (2, 6), (0, 1), "dimension 0 .* by strides 0"),
])
def test_real_dynamic_slice_bad_indices(start, limit, stride, message):
    args = (X56, np.int32(start), np.int32(limit), np.int32(stride))
    with pytest.raises(ValueError, match=f"real-dynamic-slice r: {message}"):
        xlac.evaluate(SLICE, *args)
    got = xlac.jit(SLICE)(*args)                  # compiled: reads inside the operand only
    assert np.isin(got, X56).all()


def test_real_dynamic_slice_static_dimension_must_match():
    text = SLICE.replace("f32[<=5,<=6]", "f32[<=5,6]")
    with pytest.raises(ValueError, match="dimension 1 of the result .* declared static but the slice has 3"):
        xlac.evaluate(text, X56, np.int32([0, 0]), np.int32([5, 3]), np.int32([1, 1]))
    np.testing.assert_array_equal(xlac.jit(text)(X56, np.int32([1, 0]), np.int32([3, 6]), np.int32([1, 1])),
                                  X56[1:3])


@pytest.mark.parametrize("body, message", [
    ("x = f32[4,6] parameter(0)\n  a = s32[] parameter(1)\n  ROOT r = f32[<=6,<=4] dynamic-reshape(x, a)",
     r"dynamic-reshape: needs one s32\[\] size per dimension of the result"),
    ("x = f32[4,6] parameter(0)\n  a = s32[] parameter(1)\n  b = s64[] parameter(2)\n"
     "  ROOT r = f32[<=6,<=4] dynamic-reshape(x, a, b)", "size operand 2 \\(dimension 1\\) must be an s32 scalar"),
    ("x = f32[4,6] parameter(0)\n  a = s32[] parameter(1)\n  b = s32[] parameter(2)\n"
     "  ROOT r = f32[<=6,<=5] dynamic-reshape(x, a, b)", "must hold the operand's 24 elements"),
    ("x = f32[4,6] parameter(0)\n  a = s32[] parameter(1)\n  b = s32[] parameter(2)\n"
     "  ROOT r = s32[<=6,<=4] dynamic-reshape(x, a, b)", "must be an array of the operand's element type f32"),
    ("x = f32[5,6] parameter(0)\n  s = s32[3] parameter(1)\n  ROOT r = f32[<=5,<=6] real-dynamic-slice(x, s, s, s)",
     "real-dynamic-slice: start_indices must be an integer vector of 2 elements"),
    ("x = f32[5,6] parameter(0)\n  s = s32[2] parameter(1)\n  t = s64[2] parameter(2)\n"
     "  ROOT r = f32[<=5,<=6] real-dynamic-slice(x, s, t, s)", "one element type, got s32 and s64"),
    ("x = f32[5,6] parameter(0)\n  s = s32[2] parameter(1)\n  ROOT r = f32[<=5,<=7] real-dynamic-slice(x, s, s, s)",
     "dimension 1 of the result .* is larger than the operand's \\(6\\)"),
    ("x = f32[5,6] parameter(0)\n  s = s32[2] parameter(1)\n  ROOT r = f32[<=5] real-dynamic-slice(x, s, s, s)",
     "must have the operand's rank 2"),
])
def test_shape_errors_name_the_op_and_rule(body, message):
    text = f"HloModule bad\n\nENTRY e {{\n  {body}\n}}\n"
    with pytest.raises(xlac.ShapeError, match=message):
        xlac.jit(text)


def test_builders():
    b = xlac.XlaBuilder("dyn")
    x = ops.parameter(b, 0, xlac.shape("f32[4,6]"), "x")
    n = ops.parameter(b, 1, xlac.shape("s32[]"), "n")
    r = ops.dynamic_reshape(x, [n, 4], [6, 4], [True, False])
    assert str(r.shape) == "f32[<=6,4]{1,0}"
    s = ops.real_dynamic_slice(x, [1, 0], ops.parameter(b, 2, xlac.shape("s32[2]"), "limit"), [1, 2], [4, 3])
    assert str(s.shape) == "f32[<=4,<=3]{1,0}"
    comp = b.build(ops.tuple(b, [r, s]))
    x_val = np.arange(24, dtype=np.float32).reshape(4, 6)
    got = xlac.jit(comp)(x_val, np.int32(6), np.int32([4, 5]))
    want = (x_val.reshape(6, 4), x_val[1:4, 0:5:2])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(xlac.ShapeError, match="dims_are_dynamic"):
        ops.dynamic_reshape(x, [n, 4], [6, 4], [True])
    with pytest.raises(xlac.ShapeError, match="needs one s32\\[\\] size per dimension"):
        ops.dynamic_reshape(x, [n], [6, 4], [True, False])


def test_dynamic_reshape_after_a_reduction_keeps_the_valid_elements():
    # The padder's sizes flow on: a sum over the reshaped rows reads only valid ones.
    text = """HloModule chain
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b) }
ENTRY e {
  x = f32[12] parameter(0)
  n = s32[] parameter(1)
  m = s32[] parameter(2)
  d = f32[<=4,<=3] dynamic-reshape(x, n, m)
  z = f32[] constant(0)
  ROOT s = f32[<=4] reduce(d, z), dimensions={1}, to_apply=add
}
"""
    x = np.arange(12, dtype=np.float32)
    for who, got in _runs(text, (x, np.int32(4), np.int32(3))):
        np.testing.assert_array_equal(got, x.reshape(4, 3).sum(1), err_msg=who)
    # Sizes 2x3 take the first 6 elements: the evaluator insists on all 12.
    with pytest.raises(ValueError, match="do not hold the operand's 12 elements"):
        xlac.evaluate(text, x, np.int32(2), np.int32(3))


@needs_cc
def test_aot_objects_match_the_evaluator(tmp_path, runtime_obj):  # noqa: F811
    # Entry parameters: the padded x, the two sizes, then x's size (appended by
    # the padder); results: the padded result, then its two sizes.
    x = X46[:3]
    want = xlac.evaluate(RESHAPE, x, np.int32(6), np.int32(3))
    _, outputs, _ = build_and_run(RESHAPE, [np.pad(x, ((0, 1), (0, 0))), np.int32(6), np.int32(3), np.int32(3)],
                                  tmp_path / "reshape", runtime_obj)
    padded, rows, cols = outputs
    assert (int(rows), int(cols)) == (6, 3)
    np.testing.assert_array_equal(padded[:6, :3], want)
    args = [X56, np.int32([1, 0]), np.int32([5, 6]), np.int32([2, 3])]
    _, outputs, _ = build_and_run(SLICE, args, tmp_path / "slice", runtime_obj)
    padded, rows, cols = outputs
    want = xlac.evaluate(SLICE, *args)
    assert (int(rows), int(cols)) == want.shape
    np.testing.assert_array_equal(padded[:2, :2], want)
