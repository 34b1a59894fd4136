"""Dynamic dimensions (spec: GetDimensionSize, SetDimensionSize; XLA's bounded
dynamic shapes): shapes and their text, the two ops in every stage, the
padding-aware ops, compiled code (padded, xlac/passes/dynamic_padder.py)
against the evaluator (valid elements only) and numpy, entry arguments of
their actual sizes, and the errors for what is not supported."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.hlo.verifier import verify

F32S = xlac.Shape(xlac.F32, ())

REDUCERS = """
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b) }
mul { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] multiply(a, b) }
max { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b) }
add_s32 { a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] add(a, b) }
"""


def module(body: str) -> str:
    return "HloModule m\n" + REDUCERS + "ENTRY e {\n" + body + "\n}\n"


def _leaves(v):
    return [np.asarray(a) for a in (v if isinstance(v, tuple) else (v,))]


def check_all(text: str, args, expected) -> None:
    """The evaluator, optimised and unoptimised compiled code all give ``expected``."""
    want = _leaves(expected)
    for who, got in (("evaluate", xlac.evaluate(text, *args)), ("jit", xlac.jit(text)(*args)),
                     ("jit O0", xlac.jit(text, optimize=False)(*args))):
        got = _leaves(got)
        assert len(got) == len(want), who
        for g, w in zip(got, want):
            assert g.shape == w.shape, (who, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=who)


def scalar_computation(name: str, opcode: str) -> xlac.XlaComputation:
    b = xlac.XlaBuilder(name)
    x, y = ops.parameter(b, 0, F32S, "x"), ops.parameter(b, 1, F32S, "y")
    return b.build({"add": ops.add, "mul": ops.mul, "max": ops.max}[opcode](x, y))


# -----------------------------------------------------------------------------------
# shapes and text
# -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["f32[<=10,4]{1,0}", "s32[3,<=7,<=2]{2,1,0}", "(f32[<=3]{0}, s32[])",
                                  "pred[<=1]{0}", "f32[<=10,4]{0,1}"])
def test_shape_text_round_trips(text):
    s = xlac.shape(text)
    assert str(s) == text and xlac.shape(str(s)) == s
    assert s.is_dynamic and not s.is_static


def test_dynamic_dimension_queries_equality_and_compatibility():
    d, s = xlac.shape("f32[<=10,4]"), xlac.shape("f32[10,4]")
    assert d.is_dynamic_dimension(0) and not d.is_dynamic_dimension(1)
    assert d != s and hash(d) != hash(s)            # XLA's Shape::Equal
    assert d.compatible(s) and s.compatible(d)      # XLA's ShapeUtil::Compatible
    assert d.static() == s and d.dimensions == (10, 4) and d.byte_size() == s.byte_size()
    assert s.with_dynamic_dimension(0) == d
    assert xlac.Shape(xlac.F32, (10, 4), dynamic_dimensions=[True, False]) == d
    assert xlac.Shape(xlac.F32, (3,), dynamic_dimensions=[False]) == xlac.shape("f32[3]")
    assert d.with_layout((0, 1)).is_dynamic_dimension(0)
    assert xlac.shape("(f32[<=2], f32[2])").static() == xlac.shape("(f32[2], f32[2])")


@pytest.mark.parametrize("text, message", [("f32[?]", "unbounded dynamic dimension"),
                                           ("f32[<=]", "bad dimension"), ("f32[<= 3]", "bad dimension"),
                                           ("f32[<=-3]", "bad dimension")])
def test_bad_dynamic_dimension_text(text, message):
    with pytest.raises(ValueError, match=message):
        xlac.shape(text)


def test_dynamic_flags_must_fit_the_rank():
    with pytest.raises(ValueError, match="one entry per dimension"):
        xlac.Shape(xlac.F32, (3, 4), dynamic_dimensions=[True])


# -----------------------------------------------------------------------------------
# the spec's example (SetDimensionSize), through the builder
# -----------------------------------------------------------------------------------

def spec_example() -> xlac.XlaComputation:
    b = xlac.XlaBuilder("spec")
    v = ops.constant(b, np.arange(1, 11, dtype=np.float32))
    five, six = ops.constant(b, np.int32(5)), ops.constant(b, np.int32(6))
    padded_v_five = ops.set_dimension_size(v, five, 0)
    padded_v_six = ops.set_dimension_size(v, six, 0)
    total5 = ops.reduce(padded_v_five, ops.constant(b, np.float32(0)), scalar_computation("add", "add"), [0])
    product5 = ops.reduce(padded_v_five, ops.constant(b, np.float32(1)), scalar_computation("mul", "mul"), [0])
    total6 = ops.reduce(padded_v_six, ops.constant(b, np.float32(0)), scalar_computation("add", "add"), [0])
    return b.build(ops.tuple(b, [total5, product5, total6, ops.get_dimension_size(padded_v_five, 0)]))


def test_spec_example_set_dimension_size():
    comp = spec_example()
    text = comp.as_hlo_text()
    assert "f32[<=10]{0} set-dimension-size(" in text
    expected = (np.float32(15), np.float32(120), np.float32(21), np.int32(5))
    check_all(text, [], expected)
    for got, want in zip(xlac.evaluate(comp), expected):
        assert got == want


def test_builders_infer_dynamic_shapes():
    b = xlac.XlaBuilder("b")
    x = ops.parameter(b, 0, xlac.shape("f32[8,3]"), "x")
    d = ops.set_dimension_size(x, 5, 0)
    assert str(d.shape) == "f32[<=8,3]{1,0}"
    assert str(ops.get_dimension_size(d, 0).shape) == "s32[]"
    assert str((d + 1.0).shape) == "f32[<=8,3]{1,0}"
    assert str(ops.add(d, x).shape) == "f32[<=8,3]{1,0}"
    assert str(ops.reshape(d, new_sizes=[24]).shape) == "f32[<=24]{0}"
    assert str(ops.transpose(d, [1, 0]).shape) == "f32[3,<=8]{1,0}"
    assert str(ops.broadcast(d, [2]).shape) == "f32[2,<=8,3]{2,1,0}"
    row = ops.reduce(d, ops.constant(b, np.float32(0)), scalar_computation("add", "add"), [1])
    assert str(row.shape) == "f32[<=8]{0}"
    col = ops.reduce(d, ops.constant(b, np.float32(0)), scalar_computation("add", "add"), [0])
    assert str(col.shape) == "f32[3]{0}"
    assert str(ops.dot(d, ops.transpose(x, [1, 0])).shape) == "f32[<=8,8]{1,0}"
    assert str(ops.set_dimension_size(d, 2, 1).shape) == "f32[<=8,<=3]{1,0}"


# -----------------------------------------------------------------------------------
# shape inference errors, verifier, unsupported ops
# -----------------------------------------------------------------------------------

def test_get_dimension_size_errors():
    b = xlac.XlaBuilder("b")
    x = ops.parameter(b, 0, xlac.shape("f32[8,3]"), "x")
    with pytest.raises(xlac.ShapeError, match="get-dimension-size: dimension 2 is out of range"):
        ops.get_dimension_size(x, 2)
    with pytest.raises(xlac.ShapeError, match="dimension -1 is out of range"):
        ops.get_dimension_size(x, -1)
    with pytest.raises(TypeError, match="dimension must be an integer"):
        ops.get_dimension_size(x, 0.5)


@pytest.mark.parametrize("size", ["s32[1]", "u32[]", "f32[]", "s64[]"])
def test_set_dimension_size_needs_an_s32_scalar(size):
    b = xlac.XlaBuilder("b")
    x = ops.parameter(b, 0, xlac.shape("f32[8,3]"), "x")
    n = ops.parameter(b, 1, xlac.shape(size), "n")
    with pytest.raises(xlac.ShapeError, match=re.escape(f"the size must be an s32 scalar, got {xlac.shape(size)}")):
        ops.set_dimension_size(x, n, 0)


def test_set_dimension_size_dimension_out_of_range():
    b = xlac.XlaBuilder("b")
    x = ops.parameter(b, 0, xlac.shape("f32[8,3]"), "x")
    with pytest.raises(xlac.ShapeError, match="set-dimension-size: dimension 3 is out of range"):
        ops.set_dimension_size(x, 1, 3)


def test_a_dimension_declared_static_is_static_where_inferred_dynamic():
    """XLA's verifier compares shapes ignoring dynamic dimensions: declared static, a
    dimension holds its bound (get-dimension-size gives it); past the run-time size is padding."""
    text = module("""x = f32[10] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=10] set-dimension-size(x, n), dimensions={0}
  e = f32[10] exponential(d)
  s = f32[10] set-dimension-size(x, n), dimensions={0}
  g = s32[] get-dimension-size(s), dimensions={0}
  ROOT t = (f32[10], f32[<=10], s32[]) tuple(e, d, g)""")
    verify(xlac.parse_hlo(text))
    x = np.arange(10, dtype=np.float32) / 10
    for who, (e, d, g) in (("evaluate", xlac.evaluate(text, x, np.int32(4))),
                           ("jit", xlac.jit(text)(x, np.int32(4)))):
        assert e.shape == (10,) and d.shape == (4,) and int(g) == 10, who
        np.testing.assert_allclose(e[:4], np.exp(x[:4]), rtol=1e-6, err_msg=who)
        np.testing.assert_array_equal(d, x[:4], err_msg=who)
    # declared dynamic where it is not (size = the bound) is fine, as XLA's Compatible
    verify(xlac.parse_hlo(module("""x = f32[10] parameter(0)
  ROOT e = f32[<=10] exponential(x)""")))


def test_a_run_time_size_goes_on_through_a_dimension_declared_static():
    """XLA's dynamic dimension inference follows sizes, not declared shapes: a
    set-dimension-size on dimension 2 keeps the size dimension 1 carries although its
    result declares dimension 1 static, and the reshape and reduce after it read the
    valid elements only (XLA's DynamicPadder test DoubleDynamicDimension: 16)."""
    text = module("""p = s32[2,3,3] parameter(0)
  two = s32[] constant(2)
  a = s32[2,<=3,3] set-dimension-size(p, two), dimensions={1}
  b = s32[2,3,<=3] set-dimension-size(a, two), dimensions={2}
  r = s32[<=18] reshape(b)
  zero = s32[] constant(0)
  s = s32[] reduce(r, zero), dimensions={0}, to_apply=add_s32
  e = s32[2,3,<=3] negate(b)
  t = s32[] reduce(e, zero), dimensions={0,1,2}, to_apply=add_s32
  ROOT out = (s32[], s32[]) tuple(s, t)""")
    x = np.tile(np.arange(9, dtype=np.int32).reshape(1, 3, 3), (2, 1, 1))
    for who, got in (("evaluate", xlac.evaluate(text, x)), ("jit", xlac.jit(text)(x))):
        assert [int(v) for v in got] == [16, -16], who


def test_set_dimension_size_to_the_bound_removes_the_dynamic_dimension():
    # XLA's RemoveDynamicDimension: set-dimension-size to a constant equal to the bound.
    text = module("""x = f32[6] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=6] set-dimension-size(x, n), dimensions={0}
  six = s32[] constant(6)
  s = f32[6] set-dimension-size(d, six), dimensions={0}
  ROOT g = s32[] get-dimension-size(s), dimensions={0}""")
    verify(xlac.parse_hlo(text))
    check_all(text, [np.ones(6, np.float32), np.int32(2)], np.int32(6))


def test_unsupported_op_on_a_dynamic_shape_is_named_at_build_time():
    b = xlac.XlaBuilder("b")
    d = ops.set_dimension_size(ops.parameter(b, 0, xlac.shape("f32[8]"), "x"), 3, 0)
    with pytest.raises(xlac.UnsupportedError, match=r"fft of a dynamic shape.*dimension 0 of operand 0 "
                                                    r"\(c64\[<=8\]\{0\}\) is dynamic"):
        ops.fft(ops.convert_element_type(d, xlac.C64), "FFT", [8])


UNSUPPORTED = {
    "reduce-window": ("""x = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(x, n), dimensions={0}
  z = f32[] constant(0)
  ROOT s = f32[<=8] reduce-window(d, z), window={size=3 pad=1_1}, to_apply=add""",
                      "its window has padding or base dilation"),
    "reshape": ("""x = f32[4,8] parameter(0)
  n = s32[] parameter(1)
  d = f32[4,<=8] set-dimension-size(x, n), dimensions={1}
  ROOT r = f32[<=2,4,4] reshape(d), inferred_dimension=1""", "the result declares dimensions [0] dynamic where only 1 can be"),
    "pad": ("""x = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(x, n), dimensions={0}
  z = f32[] constant(0)
  ROOT p = f32[<=7] pad(d, z), padding=0_-1""", "negative high padding -1 of dynamic dimension 0"),
    "dynamic-slice": ("""x = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(x, n), dimensions={0}
  ROOT s = f32[2] dynamic-slice(d, n), dynamic_slice_sizes={2}""", "dynamic-slice of a dynamic shape"),
}


@pytest.mark.parametrize("case", sorted(UNSUPPORTED))
@pytest.mark.parametrize("stage", ["evaluate", "jit", "compile_aot"])
def test_unsupported_op_on_a_dynamic_shape_is_refused_by_name(case, stage, tmp_path):
    body, message = UNSUPPORTED[case]
    text = module(body).replace("ENTRY", "lt { a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                                         "  ROOT r = pred[] compare(a, b), direction=LT }\nENTRY")
    run = {"evaluate": lambda: xlac.evaluate(text, np.ones(8, np.float32) if case != "reshape"
                                             else np.ones((4, 8), np.float32), np.int32(3)),
           "jit": lambda: xlac.jit(text),
           "compile_aot": lambda: xlac.compile_aot(text, tmp_path / "x.o")}[stage]
    with pytest.raises(xlac.UnsupportedError, match=re.escape(message)):
        run()


def test_dynamic_shapes_on_several_devices_are_refused():
    text = module("""x = f32[<=8] parameter(0)
  ROOT n = f32[<=8] negate(x)""").replace("HloModule m", "HloModule m, replica_count=2")
    with pytest.raises(xlac.UnsupportedError, match="dynamic shapes on several devices"):
        xlac.jit(text)


# -----------------------------------------------------------------------------------
# reductions over dynamic dimensions combine the valid elements only
# -----------------------------------------------------------------------------------

REDUCE = module("""x = f32[10] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=10] set-dimension-size(x, n), dimensions={0}
  zero = f32[] constant(0)
  one = f32[] constant(1)
  low = f32[] constant(-inf)
  s = f32[] reduce(d, zero), dimensions={0}, to_apply=add
  p = f32[] reduce(d, one), dimensions={0}, to_apply=mul
  m = f32[] reduce(d, low), dimensions={0}, to_apply=max
  ROOT t = (f32[], f32[], f32[], s32[]) tuple(s, p, m, n)""")


@pytest.mark.parametrize("n", [0, 1, 4, 10, 13, -2])
def test_reduce_sum_product_max_of_the_valid_elements(n):
    # Past n the array holds values that would change every result if combined.
    x = np.array([-3, -1, -2, -5, 1e6, np.nan, 7e5, np.inf, -1, 2], np.float32)
    k = min(max(n, 0), 10)
    valid = x[:k].astype(np.float64)
    expected = (np.float32(valid.sum()), np.float32(valid.prod()),
                np.float32(valid.max() if k else -np.inf), np.int32(n))
    check_all(REDUCE, [x, np.int32(n)], expected)


def test_reduce_over_a_dynamic_dimension_of_a_matrix_and_keeping_one():
    text = module("""x = f32[6,5] parameter(0)
  n = s32[] parameter(1)
  m = s32[] parameter(2)
  a = f32[<=6,5] set-dimension-size(x, n), dimensions={0}
  d = f32[<=6,<=5] set-dimension-size(a, m), dimensions={1}
  low = f32[] constant(-inf)
  zero = f32[] constant(0)
  rows = f32[<=6] reduce(d, zero), dimensions={1}, to_apply=add
  cols = f32[<=5] reduce(d, low), dimensions={0}, to_apply=max
  all = f32[] reduce(d, zero), dimensions={0,1}, to_apply=add
  ROOT t = (f32[<=6], f32[<=5], f32[]) tuple(rows, cols, all)""")
    x = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    x[4:, :] = 1e30
    x[:, 3:] = np.nan
    v = x[:4, :3]
    check_all(text, [x, np.int32(4), np.int32(3)], (v.sum(1), v.max(0), np.float32(v.sum())))


def test_elementwise_then_reduce_chain():
    text = module("""x = f32[12] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=12] set-dimension-size(x, n), dimensions={0}
  two = f32[] constant(2)
  twos = f32[<=12] broadcast(two), dimensions={}
  e = f32[<=12] exponential(d)
  y = f32[<=12] multiply(e, twos)
  t = f32[<=12] tanh(y)
  zero = f32[] constant(0)
  s = f32[] reduce(t, zero), dimensions={0}, to_apply=add
  ROOT r = (f32[<=12], f32[]) tuple(t, s)""")
    x = np.linspace(-2, 90, 12).astype(np.float32)
    for n in (0, 5, 12):
        t = np.tanh(2 * np.exp(x[:n].astype(np.float64))).astype(np.float32)
        check_all(text, [x, np.int32(n)], (t, np.float32(t.sum())))


def test_get_and_set_dimension_size_round_trips():
    text = module("""x = f32[7,3] parameter(0)
  n = s32[] parameter(1)
  a = f32[<=7,3] set-dimension-size(x, n), dimensions={0}
  g0 = s32[] get-dimension-size(a), dimensions={0}
  g1 = s32[] get-dimension-size(a), dimensions={1}
  one = s32[] constant(1)
  m = s32[] subtract(g0, one)
  b = f32[<=7,3] set-dimension-size(a, m), dimensions={0}
  g2 = s32[] get-dimension-size(b), dimensions={0}
  ROOT t = (s32[], s32[], s32[], f32[<=7,3]) tuple(g0, g1, g2, b)""")
    x = np.arange(21, dtype=np.float32).reshape(7, 3)
    check_all(text, [x, np.int32(5)], (np.int32(5), np.int32(3), np.int32(4), x[:4]))
    check_all(text, [x, np.int32(99)], (np.int32(7), np.int32(3), np.int32(6), x[:6]))
    check_all(text, [x, np.int32(0)], (np.int32(0), np.int32(3), np.int32(0), x[:0]))


# -----------------------------------------------------------------------------------
# padding-aware data movement and contractions, against numpy
# -----------------------------------------------------------------------------------

X = np.arange(48, dtype=np.float32).reshape(8, 6) - 20
GARBAGE = np.where(np.arange(8)[:, None] >= 3, np.nan, X).astype(np.float32)   # NaN past row 3

# name: (body over d = x[:3] as f32[<=8,6] (rows past 3 are NaN), expected)
MOVEMENT = {
    "broadcast_transpose": ("""b = f32[2,<=8,6] broadcast(d), dimensions={1,2}
  ROOT t = f32[6,2,<=8] transpose(b), dimensions={2,0,1}""",
                            np.broadcast_to(X[:3], (2, 3, 6)).transpose(2, 0, 1)),
    "reshape_collapse": ("ROOT r = f32[<=48] reshape(d)", X[:3].reshape(-1)),
    "reshape_split": ("""r = f32[<=48] reshape(d)
  ROOT s = f32[<=16,3] reshape(r)""", X[:3].reshape(6, 3)),
    "reshape_unit_dims": ("ROOT r = f32[1,<=8,1,6] reshape(d)", X[:3].reshape(1, 3, 1, 6)),
    "reshape_minor_dynamic": ("""t = f32[6,<=8] transpose(d), dimensions={1,0}
  ROOT r = f32[<=48] reshape(t)""", X[:3].T.reshape(-1)),
    "slice_strided": ("ROOT s = f32[<=4,3] slice(d), slice={[1:8:2], [0:6:2]}", X[1:3:2, 0:6:2]),
    "slice_past_the_size": ("ROOT s = f32[<=2,6] slice(d), slice={[5:7], [0:6]}", X[3:3]),
    "concat_dynamic_dimension": ("""ROOT c = f32[<=16,6] concatenate(d, d), dimensions={0}""",
                                 np.concatenate([X[:3], X[:3]])),
    "concat_static_dimension": ("""c = f32[<=8,12] concatenate(d, d), dimensions={1}
  ROOT neg = f32[<=8,12] negate(c)""", -np.concatenate([X[:3], X[:3]], 1)),
    "pad": ("""z = f32[] constant(7)
  ROOT p = f32[<=18,7] pad(d, z), padding=1_2_1x-1_2""",
            np.pad(np.insert(X[:3], [1, 2], 7, axis=0)[:, 1:], ((1, 2), (0, 2)), constant_values=7)),
    "reverse": ("ROOT r = f32[<=8,6] reverse(d), dimensions={0,1}", X[:3][::-1, ::-1]),
    "select_compare_convert": ("""z = f32[] constant(0)
  zs = f32[<=8,6] broadcast(z), dimensions={}
  c = pred[<=8,6] compare(d, zs), direction=GT
  s = f32[<=8,6] select(c, d, zs)
  ROOT i = s32[<=8,6] convert(s)""", np.maximum(X[:3], 0).astype(np.int32)),
    "with_a_static_operand": ("ROOT a = f32[<=8,6] add(d, x)", 2 * X[:3]),
    "map": ("ROOT m = f32[<=8,6] map(d, d), dimensions={0,1}, to_apply=max", X[:3]),
}


@pytest.mark.parametrize("case", sorted(MOVEMENT))
def test_data_movement_of_a_dynamic_dimension(case):
    body, expected = MOVEMENT[case]
    text = module("""x = f32[8,6] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8,6] set-dimension-size(x, n), dimensions={0}
  """ + body)
    xlac.parse_hlo(text)
    arg = X if case == "with_a_static_operand" else GARBAGE
    check_all(text, [arg, np.int32(3)], np.asarray(expected, np.float32 if case != "select_compare_convert"
                                                   else np.int32))


def test_reshape_merging_dynamic_dimensions_that_are_not_major_most():
    # XLA's RewriteDynamicReshapeCombineInput: the valid elements are gathered together.
    text = module("""x = f32[4,6] parameter(0)
  n = s32[] parameter(1)
  m = s32[] parameter(2)
  a = f32[4,<=6] set-dimension-size(x, n), dimensions={1}
  r = f32[<=24] reshape(a)
  b = f32[<=4,<=6] set-dimension-size(a, m), dimensions={0}
  q = f32[<=24] reshape(b)
  c = f32[2,<=4,<=6] broadcast(b), dimensions={1,2}
  s = f32[2,<=24] reshape(c)
  ROOT t = (f32[<=24], f32[<=24], f32[2,<=24]) tuple(r, q, s)""")
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    for n, m in ((3, 2), (6, 4), (0, 4), (2, 0), (1, 1)):
        v = x[:m, :n]
        check_all(text, [x, np.int32(n), np.int32(m)],
                  (x[:, :n].reshape(-1), v.reshape(-1), np.broadcast_to(v, (2,) + v.shape).reshape(2, -1)))


def test_dynamic_slice_of_a_dynamic_dimension_whole_or_one_element():
    # XLA's cases: sliced whole, the size stays; one element, the start is
    # clamped to the valid elements (not to the bound).
    text = module("""x = f32[8,3] parameter(0)
  n = s32[] parameter(1)
  i = s64[] parameter(2)
  z = s64[] constant(0)
  d = f32[<=8,3] set-dimension-size(x, n), dimensions={0}
  one = f32[1,2] dynamic-slice(d, i, z), dynamic_slice_sizes={1,2}
  whole = f32[<=8,2] dynamic-slice(d, i, i), dynamic_slice_sizes={8,2}
  ROOT t = (f32[1,2], f32[<=8,2]) tuple(one, whole)""")
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    for n, i in ((5, 7), (5, 2), (5, -1), (8, 9), (1, 1)):
        row = min(max(i, 0), n - 1)
        col = min(max(i, 0), 1)
        check_all(text, [x, np.int32(n), np.int64(i)], (x[row:row + 1, :2], x[:n, col:col + 2]))


def test_concatenate_of_dynamic_operands_of_different_sizes():
    text = module("""x = f32[5] parameter(0)
  y = f32[4] parameter(1)
  n = s32[] parameter(2)
  m = s32[] parameter(3)
  a = f32[<=5] set-dimension-size(x, n), dimensions={0}
  b = f32[<=4] set-dimension-size(y, m), dimensions={0}
  c = f32[3] constant({100, 200, 300})
  ROOT r = f32[<=17] concatenate(a, c, b, a), dimensions={0}""")
    x, y = np.arange(5, dtype=np.float32), -np.arange(1, 5, dtype=np.float32)
    for n, m in ((2, 3), (0, 4), (5, 0)):
        check_all(text, [x, y, np.int32(n), np.int32(m)],
                  np.concatenate([x[:n], [100, 200, 300], y[:m], x[:n]]).astype(np.float32))


def test_dot_over_dynamic_dimensions():
    text = module("""p = f32[4,6] parameter(0)
  q = f32[6,3] parameter(1)
  k = s32[] parameter(2)
  w = f32[5,3] parameter(3)
  a = f32[4,<=6] set-dimension-size(p, k), dimensions={1}
  b = f32[<=6,3] set-dimension-size(q, k), dimensions={0}
  contract = f32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  free = f32[<=6,5] dot(b, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (f32[4,3], f32[<=6,5]) tuple(contract, free)""")
    rng = np.random.default_rng(1)
    p, q = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((6, 3)).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    p[:, 4:] = np.nan                     # the padding of the contracting dimension, on both sides
    q[4:, :] = np.inf
    pv, qv = p[:, :4].astype(np.float64), q[:4].astype(np.float64)
    check_all(text, [p, q, np.int32(4), w], (np.float32(pv @ qv), np.float32(qv @ w.astype(np.float64).T)))


def test_batched_dot_with_a_dynamic_batch():
    text = module("""p = f32[<=5,2,3] parameter(0)
  q = f32[<=5,3,4] parameter(1)
  ROOT d = f32[<=5,2,4] dot(p, q), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}""")
    rng = np.random.default_rng(2)
    p, q = rng.standard_normal((3, 2, 3)).astype(np.float32), rng.standard_normal((3, 3, 4)).astype(np.float32)
    check_all(text, [p, q], np.float32(p.astype(np.float64) @ q.astype(np.float64)))


# -----------------------------------------------------------------------------------
# entry parameters and results of their actual sizes
# -----------------------------------------------------------------------------------

PARAMS = module("""x = f32[<=8,4] parameter(0)
  y = f32[4] parameter(1)
  b = f32[<=8,4] broadcast(y), dimensions={1}
  m = f32[<=8,4] multiply(x, b)
  z = f32[] constant(0)
  s = f32[<=8] reduce(m, z), dimensions={1}, to_apply=add
  g = s32[] get-dimension-size(x), dimensions={0}
  ROOT t = (f32[<=8], s32[], f32[<=8,4]) tuple(s, g, m)""")


@pytest.mark.parametrize("rows", [0, 1, 5, 8])
def test_dynamic_entry_parameters_take_and_give_actual_sizes(rows):
    x = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
    y = np.array([1, -2, 3, 0.5], np.float32)
    check_all(PARAMS, [x, y], ((x * y).sum(1), np.int32(rows), x * y))
    exe = xlac.jit(PARAMS)
    assert isinstance(exe, xlac.executable.DynamicExecutable)
    assert [str(s) for s in exe.parameter_shapes] == ["f32[<=8,4]{1,0}", "f32[4]{0}"]
    assert str(exe.result_shape) == "(f32[<=8]{0}, s32[], f32[<=8,4]{1,0})"
    assert [str(s) for s in exe.padded.parameter_shapes] == ["f32[8,4]{1,0}", "f32[4]{0}", "s32[]"]


@pytest.mark.parametrize("arg, error, message", [
    (np.zeros((9, 4), np.float32), ValueError, r"parameter 0 \(x\): expected shape \(8, 4\), at most that"),
    (np.zeros((3, 5), np.float32), ValueError, r"parameter 0 \(x\): expected shape"),
    (np.zeros((3,), np.float32), ValueError, r"parameter 0 \(x\): expected shape"),
    (np.zeros((3, 4), np.float64), TypeError, r"parameter 0 \(x\): expected dtype float32"),
])
def test_dynamic_entry_argument_errors_name_the_parameter(arg, error, message):
    y = np.ones(4, np.float32)
    with pytest.raises(error, match=message):
        xlac.jit(PARAMS)(arg, y)
    with pytest.raises(error, match=r"parameter 0 \(x\)"):
        xlac.evaluate(PARAMS, arg, y)


def test_dynamic_executable_argument_count():
    with pytest.raises(TypeError, match="takes 2 argument"):
        xlac.jit(PARAMS)(np.ones((2, 4), np.float32))


def test_builder_with_a_dynamic_parameter():
    b = xlac.XlaBuilder("dynparam")
    x = ops.parameter(b, 0, xlac.shape("f32[<=6,2]"), "x")
    total = ops.reduce(ops.exp(x), ops.constant(b, np.float32(0)), scalar_computation("add", "add"), [0, 1])
    comp = b.build(ops.tuple(b, [total, ops.get_dimension_size(x, 0), -x]))
    assert str(comp.module.entry.root.shape) == "(f32[], s32[], f32[<=6,2]{1,0})"
    v = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)
    check_all(comp.as_hlo_text(), [v], (np.float32(np.exp(v).sum()), np.int32(4), -v))


def test_builder_broadcasting_with_dynamic_operands():
    # The spec's broadcasting (broadcast_dimensions, scalars): a dynamic
    # dimension stays dynamic, the static operand is read at its size.
    b = xlac.XlaBuilder("bcast")
    v = ops.parameter(b, 0, xlac.shape("f32[<=8]"), "v")
    m = ops.parameter(b, 1, xlac.shape("f32[8,3]"), "m")
    rows = ops.add(v, m, broadcast_dimensions=[0])
    scaled = ops.mul(2.0, rows)
    assert str(scaled.shape) == "f32[<=8,3]{1,0}"
    comp = b.build(scaled)
    vv, mm = np.arange(5, dtype=np.float32), np.ones((8, 3), np.float32)
    check_all(comp.as_hlo_text(), [vv, mm], 2 * (vv[:, None] + mm[:5]))


def test_text_builder_and_module_inputs_agree():
    comp = spec_example()
    for x in (comp, comp.module, comp.as_hlo_text()):
        got = xlac.jit(x)()
        assert [float(v) for v in got] == [15, 120, 21, 5]


def test_printed_module_round_trips_and_reparses_to_the_same_shapes():
    for text in (REDUCE, PARAMS, spec_example().as_hlo_text()):
        m = xlac.parse_hlo(text)
        again = xlac.parse_hlo(m.to_text())
        assert again.to_text() == m.to_text()
        assert [i.shape for i in again.instructions()] == [i.shape for i in m.instructions()]


def test_cli_run_with_actual_sizes(tmp_path):
    from xlac.cli import main
    path = tmp_path / "m.hlo"
    path.write_text(PARAMS, encoding="utf-8")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.ones(4, np.float32)
    np.savez(tmp_path / "in.npz", x, y)
    assert main(["run", str(path), "--inputs", str(tmp_path / "in.npz"), "--out", str(tmp_path / "out.npz")]) == 0
    out = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(out["arr_0"], x.sum(1))
    assert out["arr_1"] == 3 and out["arr_2"].shape == (3, 4)


# -----------------------------------------------------------------------------------
# ahead of time: padded buffers plus int32 sizes, documented in the header
# -----------------------------------------------------------------------------------

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

C_MAIN = r"""
#include "dyn.h"
#include <stdio.h>
int main(void) {
  float x[8][4], y[4] = {1, -2, 3, 0.5f}, sums[8], prod[8][4];
  int32_t rows = 3, rows_out = -1, g = -1, prod_rows = -1;
  int i, j;
  for (i = 0; i < 8; ++i) for (j = 0; j < 4; ++j) x[i][j] = i < rows ? (float)(i * 4 + j) : 1e30f;
  if (dyn_run(&x[0][0], y, &rows, sums, &g, &prod[0][0], &rows_out, &prod_rows, NULL) != XLAC_OK) return 1;
  printf("%d %d %d:", (int)g, (int)rows_out, (int)prod_rows);
  for (i = 0; i < rows_out; ++i) printf(" %g", sums[i]);
  printf("\n");
  return 0;
}
"""


def test_aot_header_documents_the_sizes(tmp_path):
    res = xlac.compile_aot(PARAMS, tmp_path / "dyn.o", header=tmp_path / "dyn.h", name="dyn")
    header = res.header_text
    assert "param 2 (x_size0): s32[]" in header
    assert "param 2: size of dimension 0 of param 0, 0..8" in header
    assert "result 3: size of dimension 0 of result 0" in header
    assert "result 4: size of dimension 0 of result 2" in header
    assert "HLO signature (f32[<=8,4]{1,0}, f32[4]{0}) -> (f32[<=8]{0}, s32[], f32[<=8,4]{1,0})" in header


@pytest.mark.skipif(CC is None, reason="no C compiler on PATH")
def test_aot_object_runs_from_c(tmp_path):
    xlac.compile_aot(PARAMS, tmp_path / "dyn.o", header=tmp_path / "dyn.h", name="dyn")
    (tmp_path / "main.c").write_text(C_MAIN, encoding="utf-8")
    runtime = xlac.__file__.rsplit("/", 2)[0] + "/runtime"
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", f"-I{runtime}", f"-I{tmp_path}", str(tmp_path / "main.c"),
                    str(tmp_path / "dyn.o"), "-lm", "-o", str(tmp_path / "main")], check=True)
    out = subprocess.run([str(tmp_path / "main")], check=True, capture_output=True, encoding="utf-8").stdout
    x = np.arange(12, dtype=np.float32).reshape(3, 4) * np.array([1, -2, 3, 0.5], np.float32)
    assert out.split() == ["3", "3", "3:"] + [f"{v:g}" for v in x.sum(1)]


# -----------------------------------------------------------------------------------
# XLA's implicit broadcast: an elementwise binary op of two run-time sizes
# -----------------------------------------------------------------------------------

IMPLICIT = module("""a = f32[<=6,2] parameter(0)
  b = f32[<=6,2] parameter(1)
  s = f32[<=6,2] subtract(a, b)
  z = f32[] constant(0)
  sum = f32[2] reduce(s, z), dimensions={0}, to_apply=add
  ROOT r = (f32[<=6,2], f32[2]) tuple(s, sum)""")


@pytest.mark.parametrize("rows", [(1, 4), (4, 1), (3, 5), (5, 3), (0, 1), (1, 0), (1, 1), (6, 6)])
def test_binary_op_of_two_dynamic_sizes_broadcasts_a_size_of_one(rows):
    """Sizes 1 and n > 1: the size-1 operand is repeated n times (XLA's implicit
    broadcast); other sizes: both are read at the smaller (its implicit slice)."""
    a = np.arange(rows[0] * 2, dtype=np.float32).reshape(rows[0], 2) + 1
    b = np.arange(rows[1] * 2, dtype=np.float32).reshape(rows[1], 2) * 10
    low, high = min(rows), max(rows)
    n = high if low == 1 else low
    x = np.broadcast_to(a[:1], (n, 2)) if rows[0] == 1 else a[:n]
    y = np.broadcast_to(b[:1], (n, 2)) if rows[1] == 1 else b[:n]
    check_all(IMPLICIT, [a, b], (x - y, (x - y).sum(0)))


def test_broadcast_declared_dynamic_is_not_implicitly_broadcast():
    """A dimension whose size is known when compiling (a broadcast's) takes no part in
    the implicit broadcast: the run-time size of the other operand is the result's."""
    text = module("""x = f32[<=8,4] parameter(0)
  y = f32[4] parameter(1)
  b = f32[<=8,4] broadcast(y), dimensions={1}
  ROOT m = f32[<=8,4] multiply(x, b)""")
    x, y = np.ones((1, 4), np.float32), np.arange(4, dtype=np.float32)
    check_all(text, [x, y], x * y)


@pytest.mark.parametrize("size", [0, 1])
def test_reshape_away_a_dynamic_dimension_of_bound_one_keeps_its_size(size):
    """f32[<=1,2,5,1] of size 0 reshaped to f32[<=10] has no element (not 10)."""
    text = module("""p = f32[1,2,5,1] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=1,2,5,1] set-dimension-size(p, n), dimensions={0}
  r = f32[<=10] reshape(d)
  z = f32[] constant(0)
  sum = f32[] reduce(r, z), dimensions={0}, to_apply=add
  ROOT t = (f32[<=10], f32[]) tuple(r, sum)""")
    p = np.arange(10, dtype=np.float32).reshape(1, 2, 5, 1) + 1
    flat = p.reshape(-1)[:10 * size]
    check_all(text, [p, np.int32(size)], (flat, flat.sum()))
