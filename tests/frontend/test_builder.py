"""XlaBuilder, XlaOp, XlaComputation and the ops functions."""
import numpy as np
import pytest

import xlac
from xlac import ShapeError, ops
from xlac.hlo.verifier import verify

S = xlac.shape


def evaluate(comp, *args):
    try:
        from xlac.evaluator import evaluate as ev
    except ImportError:
        pytest.skip("xlac.evaluator not available")
    return ev(comp, *args)


def adder(name="add", t="f32"):
    sub = xlac.XlaBuilder(name)
    a = ops.parameter(sub, 0, S(f"{t}[]"), "a")
    b = ops.parameter(sub, 1, S(f"{t}[]"), "b")
    ops.add(a, b)
    return sub.build()


def entry_ops(comp):
    return [i.opcode for i in comp.module.entry.instructions]


# -- the public API of DESIGN.md ------------------------------------------------------

def test_design_example():
    b = xlac.XlaBuilder("axpy")
    x = ops.parameter(b, 0, xlac.shape("f32[1024]"), "x")
    y = ops.parameter(b, 1, xlac.Shape(xlac.F32, (1024,)), "y")
    out = ops.add(ops.mul(ops.constant(b, np.float32(2)), x), y)
    comp = b.build(out)
    assert isinstance(comp, xlac.XlaComputation)
    assert comp.name == "axpy"
    assert comp.module.entry.root.opcode == "add"
    ps = comp.program_shape
    assert [str(s) for s in ps.parameters] == ["f32[1024]{0}", "f32[1024]{0}"]
    assert str(ps.result) == "f32[1024]{0}"
    assert ps.parameter_names == ("x", "y")
    verify(comp.module)
    xs, ys = np.arange(1024, dtype=np.float32), np.ones(1024, np.float32)
    np.testing.assert_array_equal(evaluate(comp, xs, ys), 2 * xs + ys)


def test_operators_build_the_same_graph():
    b = xlac.XlaBuilder("axpy")
    x = ops.parameter(b, 0, S("f32[4]"), "x")
    y = ops.parameter(b, 1, S("f32[4]"), "y")
    comp = b.build(2 * x + y)
    assert entry_ops(comp) == ["parameter", "parameter", "constant", "broadcast", "multiply", "add"]
    const = comp.module.entry.instructions[2]
    assert const.literal.dtype == np.float32 and const.shape == S("f32[]")


def test_as_hlo_text():
    b = xlac.XlaBuilder("f")
    ops.neg(ops.parameter(b, 0, S("f32[2]"), "x"))
    comp = b.build()
    try:
        text = comp.as_hlo_text()
    except ImportError:
        pytest.skip("printer not available")
    assert "ENTRY f" in text and "negate(x)" in text
    assert text == comp.module.to_text()


def test_root_defaults_to_last_op_and_can_be_chosen():
    b = xlac.XlaBuilder("f")
    x = ops.parameter(b, 0, S("f32[2]"), "x")
    n = ops.neg(x)
    ops.abs(x)
    assert b.build().module.entry.root.opcode == "abs"
    assert b.build(n).module.entry.root.opcode == "negate"


def test_build_is_a_snapshot():
    b = xlac.XlaBuilder("f")
    x = ops.parameter(b, 0, S("f32[2]"), "x")
    c1 = b.build(ops.neg(x))
    ops.abs(x)
    assert len(c1.module.entry.instructions) == 2
    assert c1.module.entry.instructions[0] is not x.instruction


def test_unique_instruction_names():
    b = xlac.XlaBuilder("f")
    x = ops.parameter(b, 0, S("f32[2]"), "x")
    y = ops.parameter(b, 1, S("f32[2]"), "x")  # same user name
    z = x + y + x + y
    comp = b.build(z)
    names = [i.name for i in comp.module.entry.instructions]
    assert len(set(names)) == len(names)
    assert names[0] == "x" and names[1] != "x"
    assert z.name.startswith("add.")


def test_parameter_errors():
    b = xlac.XlaBuilder("f")
    ops.parameter(b, 0, S("f32[2]"))
    with pytest.raises(ValueError, match="already has parameter 0"):
        ops.parameter(b, 0, S("f32[2]"))
    with pytest.raises(ValueError, match=">= 0"):
        ops.parameter(b, -1, S("f32[2]"))
    ops.parameter(b, 2, "s32[3]")  # shape text is accepted
    with pytest.raises(ValueError, match="missing \\[1\\]"):
        b.build()
    with pytest.raises(TypeError):
        ops.parameter(b, 3, 42)


def test_empty_builder_cannot_build():
    with pytest.raises(ValueError, match="no ops"):
        xlac.XlaBuilder("empty").build()


def test_mixing_builders_is_a_value_error():
    b1, b2 = xlac.XlaBuilder("one"), xlac.XlaBuilder("two")
    x = ops.parameter(b1, 0, S("f32[2]"), "x")
    y = ops.parameter(b2, 0, S("f32[2]"), "y")
    with pytest.raises(ValueError, match="different builders.*'one'.*'two'"):
        ops.add(x, y)
    with pytest.raises(ValueError, match="different builders"):
        x * y
    with pytest.raises(ValueError, match="builder"):
        ops.tuple(b1, [x, y])
    with pytest.raises(ValueError, match="builder"):
        b1.build(y)
    with pytest.raises(ValueError, match="builder"):
        ops.select(ops.constant(b1, True), y, y)


# -- constants --------------------------------------------------------------------------

@pytest.mark.parametrize("value,shape", [
    (1.5, "f32[]"), (3, "s32[]"), (True, "pred[]"), (1j, "c64[]"),
    (np.float64(1), "f64[]"), (np.int8(3), "s8[]"), (np.uint16(3), "u16[]"),
    (np.arange(6, dtype=np.int64).reshape(2, 3), "s64[2,3]"),
    ([[1.0, 2.0]], "f32[1,2]"), ([1, 2, 3], "s32[3]"), ([True, False], "pred[2]"),
])
def test_constant_types(value, shape):
    b = xlac.XlaBuilder("c")
    c = ops.constant(b, value)
    assert c.shape == S(shape)
    np.testing.assert_array_equal(c.instruction.literal, np.asarray(value))


def test_constant_bf16():
    import ml_dtypes
    b = xlac.XlaBuilder("c")
    assert ops.constant(b, np.ones(2, ml_dtypes.bfloat16)).shape == S("bf16[2]")


def test_constant_errors():
    b = xlac.XlaBuilder("c")
    with pytest.raises(TypeError):
        ops.constant(b, "hello")
    with pytest.raises(TypeError):
        ops.constant(b, object())
    with pytest.raises(ValueError, match="s32"):
        ops.constant(b, 2 ** 40)


def test_constant_is_a_copy():
    b = xlac.XlaBuilder("c")
    a = np.zeros(3, np.float32)
    c = ops.constant(b, a)
    a[0] = 5
    assert c.instruction.literal[0] == 0


# -- operators and scalar conversion --------------------------------------------------------

def test_scalars_take_the_ops_element_type():
    b = xlac.XlaBuilder("s")
    x = ops.parameter(b, 0, S("s8[3]"), "x")
    for y in (x + 1, 1 + x, x * np.int64(2), x - 1, 1 - x, x % 2, 2 ** x):
        assert y.shape == S("s8[3]")
    with pytest.raises(TypeError, match="not representable"):
        x + 1.5
    with pytest.raises(TypeError, match="not representable"):
        x + 300
    f = ops.parameter(b, 1, S("f16[3]"), "f")
    assert (f * 0.5).shape == S("f16[3]")
    assert (np.float32(2) * f).shape == S("f16[3]")  # numpy scalar on the left hands over


def test_python_operators():
    b = xlac.XlaBuilder("o")
    x = ops.parameter(b, 0, S("s32[4]"), "x")
    u = ops.parameter(b, 1, S("u32[4]"), "u")
    f = ops.parameter(b, 2, S("f32[4]"), "f")
    cases = {
        x + x: "add", x - x: "subtract", x * x: "multiply", x / x: "divide", x % x: "remainder",
        x ** x: "power", -x: "negate", x & x: "and", x | x: "or", x ^ x: "xor", ~x: "not",
        x << x: "shift-left", x >> x: "shift-right-arithmetic", u >> u: "shift-right-logical",
        abs(f): "abs",
    }
    for op, opcode in cases.items():
        assert op.instruction.opcode == opcode
    assert +x is x
    assert (x >> 1).instruction.opcode == "shift-right-arithmetic"
    assert (u >> 1).instruction.opcode == "shift-right-logical"
    with pytest.raises(ShapeError):
        f >> f
    # comparisons are methods, == stays identity
    assert x.lt(x).shape == S("pred[4]")
    assert x.eq(3).shape == S("pred[4]")
    # Comparison operators build compare ops (never a Python bool); XlaOps still hash by identity.
    for got, direction in ((x == x, "EQ"), (x != 3, "NE"), (x < 0, "LT"), (x <= 0, "LE"),
                           (x > 0, "GT"), (x >= 0, "GE")):
        assert got.instruction.opcode == "compare" and got.shape == S("pred[4]")
        assert got.instruction.attrs["direction"] == direction
    assert {x: 1}[x] == 1
    assert (x == None) is False and (x != None) is True  # noqa: E711 - the identity fallback
    with pytest.raises(TypeError, match="truth value"):
        bool(x < 0)
    assert x.ne(x).instruction.attrs["direction"] == "NE"


def test_operator_values():
    b = xlac.XlaBuilder("o")
    x = ops.parameter(b, 0, S("s32[5]"), "x")
    comp = b.build(ops.tuple(b, [x + 1, 10 - x, x * x, -x, x >> 1, x << 2, ~x, x.ge(2)]))
    v = np.array([-3, -1, 0, 2, 7], np.int32)
    got = evaluate(comp, v)
    want = [v + 1, 10 - v, v * v, -v, v >> 1, v << 2, ~v, v >= 2]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


# -- unary ops ---------------------------------------------------------------------------------

UNARY = {"abs": "abs", "cbrt": "cbrt", "ceil": "ceil", "cos": "cosine", "erf": "erf", "exp": "exponential",
         "expm1": "exponential-minus-one", "floor": "floor", "imag": "imag", "is_finite": "is-finite",
         "log": "log", "log1p": "log-plus-one", "logistic": "logistic", "neg": "negate", "real": "real",
         "round": "round-nearest-afz", "round_nearest_even": "round-nearest-even", "rsqrt": "rsqrt",
         "sign": "sign", "sin": "sine", "sqrt": "sqrt", "tan": "tan", "tanh": "tanh"}


@pytest.mark.parametrize("name,opcode", sorted(UNARY.items()))
def test_float_unary(name, opcode):
    b = xlac.XlaBuilder("u")
    x = ops.parameter(b, 0, S("f32[2,3]"), "x")
    y = getattr(ops, name)(x)
    assert y.instruction.opcode == opcode
    assert y.shape == (S("pred[2,3]") if name == "is_finite" else S("f32[2,3]"))


@pytest.mark.parametrize("name,opcode", [("clz", "count-leading-zeros"), ("population_count", "popcnt"),
                                         ("not_", "not")])
def test_int_unary(name, opcode):
    b = xlac.XlaBuilder("u")
    x = ops.parameter(b, 0, S("u8[3]"), "x")
    assert getattr(ops, name)(x).instruction.opcode == opcode
    f = ops.parameter(b, 1, S("f32[3]"), "f")
    with pytest.raises(ShapeError, match=opcode):
        getattr(ops, name)(f)


def test_unary_errors_and_complex():
    b = xlac.XlaBuilder("u")
    i = ops.parameter(b, 0, S("s32[3]"), "i")
    with pytest.raises(ShapeError, match="floor.*s32\\[3\\]"):
        ops.floor(i)
    with pytest.raises(TypeError):
        ops.neg(3.0)
    c = ops.parameter(b, 1, S("c64[3]"), "c")
    assert ops.real(c).shape == S("f32[3]") and ops.abs(c).shape == S("f32[3]")


def test_unary_values():
    b = xlac.XlaBuilder("u")
    x = ops.parameter(b, 0, S("f32[4]"), "x")
    comp = b.build(ops.tuple(b, [ops.round(x), ops.round_nearest_even(x), ops.sign(x), ops.floor(x)]))
    v = np.array([-2.5, -0.5, 0.5, 2.5], np.float32)
    r, re, s, fl = evaluate(comp, v)
    np.testing.assert_array_equal(r, [-3, -1, 1, 3])
    np.testing.assert_array_equal(re, [-2, -0, 0, 2])
    np.testing.assert_array_equal(s, [-1, -1, 1, 1])
    np.testing.assert_array_equal(fl, [-3, -1, 0, 2])


# -- binary ops --------------------------------------------------------------------------------

BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "rem": "remainder",
          "pow": "power", "max": "maximum", "min": "minimum", "atan2": "atan2"}


@pytest.mark.parametrize("name,opcode", sorted(BINARY.items()))
def test_binary(name, opcode):
    b = xlac.XlaBuilder("bin")
    x = ops.parameter(b, 0, S("f32[2,3]"), "x")
    y = ops.parameter(b, 1, S("f32[2,3]"), "y")
    z = getattr(ops, name)(x, y)
    assert z.instruction.opcode == opcode and z.shape == S("f32[2,3]")
    with pytest.raises(ShapeError, match=f"{name}.*f32\\[2,3\\].*f32\\[2,4\\]"):
        getattr(ops, name)(x, ops.parameter(b, 2, S("f32[2,4]"), "w"))


def test_binary_type_mismatch():
    b = xlac.XlaBuilder("bin")
    x = ops.parameter(b, 0, S("f32[3]"), "x")
    y = ops.parameter(b, 1, S("s32[3]"), "y")
    with pytest.raises(ShapeError, match=r"add: .*same element type.*f32\[3\]\{0\}, s32\[3\]"):
        ops.add(x, y)
    n = len(b._instructions)
    with pytest.raises(ShapeError, match="sub \\(HLO subtract\\)"):
        ops.sub(x, ops.constant(b, np.int32(1)))
    # nothing half-built: the failed op added no broadcast
    assert [i.opcode for i in b._instructions[n:]] == ["constant"]


def test_bitwise_and_shift_ops():
    b = xlac.XlaBuilder("bits")
    x = ops.parameter(b, 0, S("u32[3]"), "x")
    for name, opcode in [("and_", "and"), ("or_", "or"), ("xor", "xor"), ("shift_left", "shift-left"),
                         ("shift_right_arithmetic", "shift-right-arithmetic"),
                         ("shift_right_logical", "shift-right-logical")]:
        assert getattr(ops, name)(x, 1).instruction.opcode == opcode
    f = ops.parameter(b, 1, S("f32[3]"), "f")
    with pytest.raises(ShapeError, match="and_ \\(HLO and\\)"):
        ops.and_(f, f)


def test_complex_op():
    b = xlac.XlaBuilder("c")
    re = ops.parameter(b, 0, S("f32[2]"), "re")
    assert ops.complex(re, 1.0).shape == S("c64[2]")
    comp = b.build(ops.complex(re, re))
    got = evaluate(comp, np.array([1, 2], np.float32))
    np.testing.assert_array_equal(got, [1 + 1j, 2 + 2j])


def test_binary_needs_an_xlaop():
    with pytest.raises(TypeError, match="XlaOp"):
        ops.add(1, 2)


# -- comparisons ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["eq", "ne", "ge", "gt", "le", "lt"])
def test_comparisons(name):
    b = xlac.XlaBuilder("cmp")
    x = ops.parameter(b, 0, S("f32[3]"), "x")
    c = getattr(ops, name)(x, 0.0)
    assert c.shape == S("pred[3]") and c.instruction.attrs == {"direction": name.upper()}
    t = getattr(ops, name + "_total_order")(x, 0.0)
    assert t.instruction.attrs == {"direction": name.upper(), "type": "TOTALORDER"}
    i = ops.parameter(b, 1, S("s32[3]"), "i")
    assert "type" not in getattr(ops, name + "_total_order")(i, 0).instruction.attrs


def test_compare_values_and_errors():
    b = xlac.XlaBuilder("cmp")
    x = ops.parameter(b, 0, S("f32[4]"), "x")
    comp = b.build(ops.tuple(b, [ops.compare(x, 0.0, "GT"), ops.lt_total_order(x, 0.0),
                                 ops.eq(x, x), ops.eq_total_order(x, x)]))
    v = np.array([-0.0, 1.0, np.nan, -np.nan], np.float32)
    gt, lt_to, eq, eq_to = evaluate(comp, v)
    np.testing.assert_array_equal(gt, [False, True, False, False])
    np.testing.assert_array_equal(lt_to, [True, False, False, True])   # -0 < +0, -NaN < +0
    np.testing.assert_array_equal(eq, [True, True, False, False])
    np.testing.assert_array_equal(eq_to, [True, True, True, True])
    with pytest.raises(ShapeError, match="direction=SIDEWAYS"):
        ops.compare(x, x, "SIDEWAYS")
    with pytest.raises(ShapeError, match="compare"):
        ops.eq(x, ops.parameter(b, 1, S("s32[4]"), "i"))


# -- select, clamp -----------------------------------------------------------------------------------

def test_select_spec_examples():
    b = xlac.XlaBuilder("sel")
    pred = ops.constant(b, np.array([True, False, False, True]))
    v1 = ops.constant(b, np.array([1, 2, 3, 4], np.int32))
    v2 = ops.constant(b, np.array([100, 200, 300, 400], np.int32))
    s1 = ops.select(pred, v1, v2)
    s2 = ops.select(ops.constant(b, True), v1, v2)
    assert s1.shape == s2.shape == S("s32[4]")
    # a scalar pred is broadcast explicitly, so HLO select sees equal dimensions
    assert s2.instruction.operands[0].opcode == "broadcast"
    comp = b.build(ops.tuple(b, [s1, s2]))
    r1, r2 = evaluate(comp)
    np.testing.assert_array_equal(r1, [1, 200, 300, 4])
    np.testing.assert_array_equal(r2, [1, 2, 3, 4])


def test_select_errors_and_tuples():
    b = xlac.XlaBuilder("sel")
    p = ops.parameter(b, 0, S("pred[3]"), "p")
    x = ops.parameter(b, 1, S("f32[3]"), "x")
    y = ops.parameter(b, 2, S("f32[4]"), "y")
    with pytest.raises(ShapeError, match="select.*same shape"):
        ops.select(p, x, y)
    with pytest.raises(ShapeError, match="pred must be"):
        ops.select(x, x, x)
    assert ops.select(p, x, 0.0).shape == S("f32[3]")
    t = ops.tuple(b, [x, y])
    assert ops.select(ops.constant(b, False), t, t).shape.is_tuple
    with pytest.raises(ShapeError, match="scalar pred"):
        ops.select(p, t, t)


def test_clamp():
    b = xlac.XlaBuilder("clamp")
    operand = ops.constant(b, np.array([-1, 5, 9], np.int32))
    c = ops.clamp(ops.constant(b, np.int32(0)), operand, ops.constant(b, np.int32(6)))
    assert c.shape == S("s32[3]")
    c2 = ops.clamp(0, operand, 6)
    np.testing.assert_array_equal(evaluate(b.build(ops.tuple(b, [c, c2])))[0], [0, 5, 6])
    with pytest.raises(ShapeError, match="clamp"):
        ops.clamp(ops.constant(b, np.zeros(2, np.int32)), operand, 6)
    with pytest.raises(ShapeError, match="clamp"):
        ops.clamp(ops.constant(b, 0.0), operand, 6)


# -- conversions ------------------------------------------------------------------------------------

def test_convert_element_type():
    b = xlac.XlaBuilder("cvt")
    a = ops.constant(b, np.array([0, 1, 2], np.int32))
    for t in (xlac.F32, "f32", np.float32):
        c = ops.convert_element_type(a, t)
        assert c.shape == S("f32[3]") and c.instruction.opcode == "convert"
        assert c.instruction.attrs == {}
    np.testing.assert_array_equal(evaluate(b.build(c)), [0.0, 1.0, 2.0])
    with pytest.raises(TypeError):
        ops.convert_element_type(a, "float99")


def test_bitcast_convert_type():
    b = xlac.XlaBuilder("bc")
    x = ops.parameter(b, 0, S("f32[10]"), "x")
    assert ops.bitcast_convert_type(x, xlac.S32).shape == S("s32[10]")
    assert ops.bitcast_convert_type(x, xlac.F16).shape == S("f16[10,2]")
    h = ops.parameter(b, 1, S("f16[10,2]"), "h")
    assert ops.bitcast_convert_type(h, xlac.F32).shape == S("f32[10]")
    with pytest.raises(ShapeError, match="bitcast-convert"):
        ops.bitcast_convert_type(x, xlac.C64)
    comp = b.build(ops.bitcast_convert_type(x, xlac.U32))
    v = np.linspace(-1, 1, 10).astype(np.float32)
    got = evaluate(comp, v, np.zeros((10, 2), np.float16))
    np.testing.assert_array_equal(got, v.view(np.uint32))


def test_reduce_precision():
    b = xlac.XlaBuilder("rp")
    x = ops.parameter(b, 0, S("f32[3]"), "x")
    r = ops.reduce_precision(x, exponent_bits=5, mantissa_bits=10)
    assert r.instruction.attrs == {"exponent_bits": 5, "mantissa_bits": 10}
    with pytest.raises(ShapeError, match="exponent_bits"):
        ops.reduce_precision(x, 0, 10)
    with pytest.raises(ShapeError, match="floating-point"):
        ops.reduce_precision(ops.parameter(b, 1, S("s32[3]"), "i"), 5, 10)


# -- broadcast, reshape, transpose --------------------------------------------------------------------

def test_broadcast_adds_major_dimensions():
    b = xlac.XlaBuilder("bc")
    two = ops.constant(b, 2.0)
    r = ops.broadcast(two, [2, 3])
    assert r.shape == S("f32[2,3]") and r.instruction.attrs["dimensions"] == ()
    v = ops.constant(b, np.array([1, 2, 3], np.float32))
    r2 = ops.broadcast(v, [2])
    assert r2.shape == S("f32[2,3]") and r2.instruction.attrs["dimensions"] == (1,)
    got = evaluate(b.build(ops.tuple(b, [r, r2])))
    np.testing.assert_array_equal(got[0], np.full((2, 3), 2.0))
    np.testing.assert_array_equal(got[1], [[1, 2, 3], [1, 2, 3]])
    with pytest.raises(ShapeError, match="negative"):
        ops.broadcast(v, [-1])


def test_broadcast_in_dim():
    b = xlac.XlaBuilder("bid")
    v = ops.constant(b, np.array([1, 2, 3], np.float32))
    r = ops.broadcast_in_dim(v, [3, 2], [0])
    assert r.shape == S("f32[3,2]")
    m = ops.constant(b, np.array([[1, 2]], np.float32))  # 1x2: the size-1 dimension stretches
    r2 = ops.broadcast_in_dim(m, [4, 3, 2], [0, 2])
    assert r2.shape == S("f32[4,3,2]")
    got = evaluate(b.build(ops.tuple(b, [r, r2])))
    np.testing.assert_array_equal(got[0], [[1, 1], [2, 2], [3, 3]])
    np.testing.assert_array_equal(got[1], np.broadcast_to([[[1, 2]]], (4, 3, 2)))
    with pytest.raises(ShapeError, match="broadcast_in_dim.*size 3.*size 2"):
        ops.broadcast_in_dim(v, [3, 2], [1])
    with pytest.raises(ShapeError, match="one entry per operand dimension"):
        ops.broadcast_in_dim(v, [3, 2], [0, 1])
    with pytest.raises(ShapeError, match="strictly increasing"):
        ops.broadcast_in_dim(m, [2, 1], [1, 0])
    with pytest.raises(ShapeError, match="out of range"):
        ops.broadcast_in_dim(v, [3], [1])


def test_reshape_spec_examples():
    b = xlac.XlaBuilder("rs")
    v = np.array([[[10, 11, 12], [15, 16, 17]], [[20, 21, 22], [25, 26, 27]],
                  [[30, 31, 32], [35, 36, 37]], [[40, 41, 42], [45, 46, 47]]], np.float32)
    c = ops.constant(b, v)
    r24 = ops.reshape(c, [24])
    r83 = ops.reshape(c, [8, 3])
    one = ops.constant(b, np.array([[5]], np.float32))
    scalar = ops.reshape(one, [])
    back = ops.reshape(scalar, new_sizes=[1, 1])
    # the spec's Reshape(operand, dimensions, new_sizes): transpose first
    rt = ops.reshape(c, [2, 1, 0], [3, 8])
    assert [x.shape for x in (r24, r83, scalar, back, rt)] == \
        [S("f32[24]"), S("f32[8,3]"), S("f32[]"), S("f32[1,1]"), S("f32[3,8]")]
    assert rt.instruction.operands[0].opcode == "transpose"
    got = evaluate(b.build(ops.tuple(b, [r24, r83, scalar, back, rt])))
    np.testing.assert_array_equal(got[0], v.reshape(24))
    np.testing.assert_array_equal(got[1], v.reshape(8, 3))
    assert got[2] == 5 and got[3].shape == (1, 1)
    np.testing.assert_array_equal(got[4], v.transpose(2, 1, 0).reshape(3, 8))
    with pytest.raises(ShapeError, match="reshape.*24 elements"):
        ops.reshape(c, [5, 5])
    with pytest.raises(ShapeError, match="not a permutation"):
        ops.reshape(c, [0, 0, 1], [24])


def test_collapse():
    b = xlac.XlaBuilder("col")
    c = ops.parameter(b, 0, S("f32[4,2,3]"), "v")
    assert ops.collapse(c, [0, 1]).shape == S("f32[8,3]")
    assert ops.collapse(c, [1, 2]).shape == S("f32[4,6]")
    assert ops.collapse(c, [0, 1, 2]).shape == S("f32[24]")
    with pytest.raises(ShapeError):
        ops.collapse(c, [0, 2])


def test_transpose():
    b = xlac.XlaBuilder("t")
    x = ops.parameter(b, 0, S("f32[2,3,4]"), "x")
    t = ops.transpose(x, [2, 0, 1])
    assert t.shape == S("f32[4,2,3]") and t.instruction.attrs == {"dimensions": (2, 0, 1)}
    v = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(evaluate(b.build(t), v), v.transpose(2, 0, 1))
    with pytest.raises(ShapeError, match="transpose.*not a permutation"):
        ops.transpose(x, [0, 1, 1])
    with pytest.raises(ShapeError, match="transpose.*not a permutation"):
        ops.transpose(x, [0, 1])


# -- slice, concat, pad --------------------------------------------------------------------------

def test_slice_spec_examples():
    b = xlac.XlaBuilder("sl")
    a = ops.constant(b, np.array([0.0, 1.0, 2.0, 3.0, 4.0], np.float32))
    m = ops.constant(b, np.arange(12, dtype=np.float32).reshape(4, 3))
    s1 = ops.slice(a, [2], [4])
    s2 = ops.slice(m, [2, 1], [4, 3])
    s3 = ops.slice(a, [0], [5], [2])
    s4 = ops.slice_in_dim(m, 1, 3, 1, 0)
    assert s1.instruction.attrs == {"slice": ((2, 4, 1),)}
    got = evaluate(b.build(ops.tuple(b, [s1, s2, s3, s4])))
    np.testing.assert_array_equal(got[0], [2.0, 3.0])
    np.testing.assert_array_equal(got[1], [[7.0, 8.0], [10.0, 11.0]])
    np.testing.assert_array_equal(got[2], [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(got[3], np.arange(12).reshape(4, 3)[1:3])


def test_slice_errors():
    b = xlac.XlaBuilder("sl")
    a = ops.parameter(b, 0, S("f32[5]"), "a")
    with pytest.raises(ShapeError, match="slice.*limit \\(6\\)"):
        ops.slice(a, [2], [6])
    with pytest.raises(ShapeError, match="slice"):
        ops.slice(a, [3], [2])
    with pytest.raises(ShapeError, match="stride 0"):
        ops.slice(a, [0], [2], [0])
    with pytest.raises(ShapeError, match="one entry per dimension"):
        ops.slice(a, [0, 0], [1, 1])
    with pytest.raises(ShapeError, match="dimno"):
        ops.slice_in_dim(a, 0, 1, 1, 1)


def test_concat_in_dim_spec_examples():
    b = xlac.XlaBuilder("cc")
    parts = [ops.constant(b, np.array(p, np.int32)) for p in ([2, 3], [4, 5], [6, 7])]
    c1 = ops.concat_in_dim(b, parts, 0)
    a = ops.constant(b, np.array([[1, 2], [3, 4], [5, 6]], np.int32))
    bb = ops.constant(b, np.array([[7, 8]], np.int32))
    c2 = ops.concat_in_dim(b, [a, bb], 0)
    assert c1.instruction.attrs == {"dimensions": (0,)}
    got = evaluate(b.build(ops.tuple(b, [c1, c2])))
    np.testing.assert_array_equal(got[0], [2, 3, 4, 5, 6, 7])
    np.testing.assert_array_equal(got[1], [[1, 2], [3, 4], [5, 6], [7, 8]])
    with pytest.raises(ShapeError, match="concatenate.*dimension 1"):
        ops.concat_in_dim(b, [a, ops.constant(b, np.zeros((1, 3), np.int32))], 0)
    with pytest.raises(ShapeError, match="scalars"):
        ops.concat_in_dim(b, [ops.constant(b, 1), ops.constant(b, 2)], 0)


def test_pad():
    b = xlac.XlaBuilder("pad")
    x = ops.constant(b, np.array([[1, 2], [3, 4]], np.float32))
    p = ops.pad(x, 0.0, [(1, 0, 1), (0, 2, 0)])
    assert p.shape == S("f32[4,4]") and p.instruction.attrs == {"padding": ((1, 0, 1), (0, 2, 0))}
    neg = ops.pad(x, ops.constant(b, np.float32(9)), [(-1, 0, 0), (0, -1, 0)])
    assert neg.shape == S("f32[1,1]")
    got = evaluate(b.build(ops.tuple(b, [p, neg])))
    np.testing.assert_array_equal(got[0], [[0, 0, 0, 0], [1, 2, 0, 0], [0, 0, 0, 0], [3, 4, 0, 0]])
    np.testing.assert_array_equal(got[1], [[3]])
    with pytest.raises(ShapeError, match="pad.*negative size"):
        ops.pad(x, 0.0, [(-2, -1, 0), (0, 0, 0)])
    with pytest.raises(ShapeError, match="interior"):
        ops.pad(x, 0.0, [(0, 0, -1), (0, 0, 0)])
    with pytest.raises(ShapeError, match="per dimension"):
        ops.pad(x, 0.0, [(0, 0, 0)])
    with pytest.raises(ShapeError, match="padding_value type"):
        ops.pad(x, ops.constant(b, 1), [(0, 0, 0), (0, 0, 0)])


# -- reduce ------------------------------------------------------------------------------------------

def test_reduce_spec_examples():
    add = adder()
    b = xlac.XlaBuilder("red")
    base = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    cube = np.broadcast_to(base, (4, 2, 3)).copy()   # "the values 1 to 6 replicated across dimension 0"
    x = ops.parameter(b, 0, S("f32[4,2,3]"), "x")
    zero = ops.constant(b, np.float32(0))
    r0 = ops.reduce(x, zero, add, [0])
    r2 = ops.reduce(x, zero, add, dimensions_to_reduce=[2])
    r01 = ops.reduce(x, zero, add, [0, 1])
    rall = ops.reduce(x, 0.0, add, [0, 1, 2])
    assert [r.shape for r in (r0, r2, r01, rall)] == [S("f32[2,3]"), S("f32[4,2]"), S("f32[3]"), S("f32[]")]
    comp = b.build(ops.tuple(b, [r0, r2, r01, rall]))
    # the reducer is copied into the module once, callees first
    assert [c.name for c in comp.module.computations] == ["add", "red"]
    verify(comp.module)
    got = evaluate(comp, cube)
    np.testing.assert_array_equal(got[0], [[4, 8, 12], [16, 20, 24]])
    np.testing.assert_array_equal(got[1], [[6, 15]] * 4)
    np.testing.assert_array_equal(got[2], [20, 28, 36])
    assert got[3] == 84


def test_reduce_errors():
    b = xlac.XlaBuilder("red")
    x = ops.parameter(b, 0, S("f32[2,3]"), "x")
    with pytest.raises(ShapeError, match="reduce.*reducer add must have the signature"):
        ops.reduce(x, 0.0, adder(t="s32"), [0])
    with pytest.raises(ShapeError, match="out of range"):
        ops.reduce(x, 0.0, adder(), [2])
    with pytest.raises(ShapeError, match="init value 0 must be a scalar"):
        ops.reduce(x, ops.constant(b, np.zeros(3, np.float32)), adder(), [0])
    with pytest.raises(TypeError, match="XlaComputation"):
        ops.reduce(x, 0.0, "add", [0])
    with pytest.raises(TypeError, match="2 operands but 1 init"):
        ops.reduce([x, x], [0.0], adder(), [0])


def test_variadic_reduce_argmax():
    # the spec's max/argmax reducer: (Float, Int, Float, Int) -> (Float, Int)
    sub = xlac.XlaBuilder("argmax")
    mx = ops.parameter(sub, 0, S("f32[]"), "max")
    amx = ops.parameter(sub, 1, S("s32[]"), "argmax")
    val = ops.parameter(sub, 2, S("f32[]"), "value")
    idx = ops.parameter(sub, 3, S("s32[]"), "index")
    take = ops.ge(val, mx)
    ops.tuple(sub, [ops.select(take, val, mx), ops.select(take, idx, amx)])
    argmax = sub.build()

    b = xlac.XlaBuilder("f")
    v = ops.parameter(b, 0, S("f32[6]"), "v")
    k = ops.iota(b, S("s32[6]"), 0)
    r = ops.reduce([v, k], [ops.constant(b, np.float32(-np.inf)), ops.constant(b, 0)], argmax, [0])
    assert r.shape.compatible(S("(f32[], s32[])"))
    best, where = ops.get_tuple_element(r, 0), ops.get_tuple_element(r, 1)
    assert best.shape == S("f32[]") and where.shape == S("s32[]")
    comp = b.build(ops.tuple(b, [best, where]))
    verify(comp.module)
    got = evaluate(comp, np.array([3, 9, 1, 9, 2, 0], np.float32))
    assert got[0] == 9
    with pytest.raises(ShapeError, match="signature"):
        ops.reduce([v, k], [0.0, 0], adder(), [0])


def test_same_computation_copied_once_and_names_unique():
    add = adder("add")
    other_add = adder("add")  # a different computation with the same name
    b = xlac.XlaBuilder("add")  # ...and the same name as the entry too
    x = ops.parameter(b, 0, S("f32[2,3]"), "x")
    r1 = ops.reduce(x, 0.0, add, [0])
    r2 = ops.reduce(x, 0.0, add, [1])
    r3 = ops.reduce(x, 0.0, other_add, [0])
    comp = b.build(ops.tuple(b, [r1, r2, r3]))
    names = [c.name for c in comp.module.computations]
    assert len(names) == 3 and len(set(names)) == 3
    assert comp.module.entry is comp.module.computations[-1] and comp.module.entry.name == "add"
    assert r1.instruction.attrs["to_apply"] is r2.instruction.attrs["to_apply"]
    mod = comp.module
    e = mod.entry.instructions
    callees = {id(c) for c in mod.computations}
    for inst in e:
        for c in inst.called_computations():
            assert id(c) in callees  # remapped to the module's own copies
    all_names = [i.name for i in mod.instructions()]
    assert len(all_names) == len(set(all_names))
    verify(mod)


def test_nested_sub_computations():
    inner = adder("inner")
    mid = xlac.XlaBuilder("mid")
    a = ops.parameter(mid, 0, S("f32[]"), "a")
    c = ops.parameter(mid, 1, S("f32[]"), "c")
    ops.call(mid, inner, [a, c])
    mid_comp = mid.build()
    b = xlac.XlaBuilder("outer")
    x = ops.parameter(b, 0, S("f32[3]"), "x")
    comp = b.build(ops.reduce(x, 0.0, mid_comp, [0]))
    assert [c.name for c in comp.module.computations] == ["inner", "mid", "outer"]
    verify(comp.module)
    assert evaluate(comp, np.array([1, 2, 3], np.float32)) == 6


# -- dot ------------------------------------------------------------------------------------------

def test_dot_ranks():
    b = xlac.XlaBuilder("dot")
    v = ops.parameter(b, 0, S("f32[3]"), "v")
    m = ops.parameter(b, 1, S("f32[2,3]"), "m")
    n = ops.parameter(b, 2, S("f32[3,4]"), "n")
    vv, mv, mn, vn = ops.dot(v, v), ops.dot(m, v), ops.dot(m, n), ops.dot(v, n)
    assert [d.shape for d in (vv, mv, mn, vn)] == [S("f32[]"), S("f32[2]"), S("f32[2,4]"), S("f32[4]")]
    assert mn.instruction.attrs == {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)}
    assert (m @ n).shape == S("f32[2,4]")
    vals = [np.arange(3, dtype=np.float32), np.arange(6, dtype=np.float32).reshape(2, 3),
            np.arange(12, dtype=np.float32).reshape(3, 4)]
    got = evaluate(b.build(ops.tuple(b, [vv, mv, mn, vn])), *vals)
    for g, w in zip(got, [vals[0] @ vals[0], vals[1] @ vals[0], vals[1] @ vals[2], vals[0] @ vals[2]]):
        np.testing.assert_allclose(g, w)
    with pytest.raises(ShapeError, match="contracting dimension sizes differ"):
        ops.dot(n, m)
    with pytest.raises(ShapeError, match="dot_general"):
        ops.dot(ops.parameter(b, 3, S("f32[2,2,2]"), "t"), v)
    assert str(ops.dot(m, ops.parameter(b, 4, S("f64[3]"), "d")).shape) == "f64[2]{0}"   # XLA's higher type


def test_dot_general_spec_examples():
    b = xlac.XlaBuilder("dg")
    lhs = ops.constant(b, np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32))
    rhs = ops.constant(b, np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], np.float32))
    d1 = ops.dot_general(lhs, rhs, {"lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [1]})
    bl = ops.constant(b, np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.float32))
    br = ops.constant(b, np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], np.float32))
    dn = ops.DotDimensionNumbers(lhs_contracting_dimensions=[2], rhs_contracting_dimensions=[1],
                                 lhs_batch_dimensions=[0], rhs_batch_dimensions=[0])
    d2 = ops.dot_general(bl, br, dn)
    d3 = ops.dot_general(bl, br, (([2], [1]), ([0], [0])))  # jax.lax form
    assert d2.instruction.attrs == {"lhs_batch_dims": (0,), "lhs_contracting_dims": (2,),
                                    "rhs_batch_dims": (0,), "rhs_contracting_dims": (1,)}
    assert d1.shape == S("f32[2,2]") and d2.shape == d3.shape == S("f32[2,2,2]")
    got = evaluate(b.build(ops.tuple(b, [d1, d2])))
    np.testing.assert_array_equal(got[0], [[6, 12], [15, 30]])
    np.testing.assert_array_equal(got[1], [[[1, 2], [3, 4]], [[5, 6], [7, 8]]])


def test_dot_general_errors_and_preferred_type():
    b = xlac.XlaBuilder("dg")
    x = ops.parameter(b, 0, S("bf16[2,3,4]"), "x")
    y = ops.parameter(b, 1, S("bf16[2,4,5]"), "y")
    dn = (([2], [1]), ([0], [0]))
    assert ops.dot_general(x, y, dn, preferred_element_type=xlac.F32).shape == S("f32[2,3,5]")
    with pytest.raises(ShapeError, match="batch dimension sizes differ"):
        ops.dot_general(x, ops.parameter(b, 2, S("bf16[3,4,5]"), "z"), dn)
    with pytest.raises(ShapeError, match="contracting dimension sizes differ"):
        ops.dot_general(x, y, (([1], [1]), ([0], [0])))
    with pytest.raises(ShapeError, match="differ in number"):
        ops.dot_general(x, y, {"lhs_contracting_dimensions": [2]})
    with pytest.raises(TypeError, match="unknown"):
        ops.dot_general(x, y, {"lhs_contract": [2]})


# -- tuples, calls, iota -------------------------------------------------------------------------

def test_tuple_and_get_tuple_element():
    b = xlac.XlaBuilder("t")
    v = ops.constant(b, np.arange(10, dtype=np.float32))
    s = ops.constant(b, 5)
    t = ops.tuple(b, [v, s])
    assert t.shape.compatible(S("(f32[10], s32[])"))
    e1 = ops.get_tuple_element(t, 1)
    assert e1.shape == S("s32[]") and e1.instruction.attrs == {"index": 1}
    with pytest.raises(ShapeError, match="get-tuple-element.*index 2 is out of range"):
        ops.get_tuple_element(t, 2)
    with pytest.raises(ShapeError, match="must be a tuple"):
        ops.get_tuple_element(v, 0)
    assert evaluate(b.build(e1)) == 5


def test_call():
    add = adder()
    b = xlac.XlaBuilder("c")
    x = ops.parameter(b, 0, S("f32[]"), "x")
    r = ops.call(b, add, [x, ops.constant(b, 2.0)])
    assert r.shape == S("f32[]") and r.instruction.attrs["to_apply"].name == "add"
    comp = b.build(r)
    verify(comp.module)
    assert evaluate(comp, np.float32(3)) == 5
    with pytest.raises(ShapeError, match="takes 2 parameter"):
        ops.call(b, add, [x])
    with pytest.raises(ShapeError, match="operand 1 is s32"):
        ops.call(b, add, [x, ops.constant(b, 2)])


def test_iota_spec_examples():
    b = xlac.XlaBuilder("iota")
    i0 = ops.iota(b, S("s32[4,8]"), 0)
    i1 = ops.iota(b, S("s32[4,8]"), 1)
    i5 = ops.iota(b, xlac.F32, 5)
    assert i5.shape == S("f32[5]")
    got = evaluate(b.build(ops.tuple(b, [i0, i1, i5])))
    np.testing.assert_array_equal(got[0], np.repeat(np.arange(4)[:, None], 8, 1))
    np.testing.assert_array_equal(got[1], np.repeat(np.arange(8)[None, :], 4, 0))
    np.testing.assert_array_equal(got[2], np.arange(5))
    with pytest.raises(ShapeError, match="iota_dimension=2"):
        ops.iota(b, S("s32[4,8]"), 2)


def test_rev():
    b = xlac.XlaBuilder("rev")
    x = ops.parameter(b, 0, S("f32[2,3]"), "x")
    r = ops.rev(x, [1])
    assert r.instruction.opcode == "reverse" and r.shape == S("f32[2,3]")
    with pytest.raises(ShapeError):
        ops.rev(x, [2])


def test_docstrings_name_the_spec():
    for name in ("add", "eq", "lt_total_order", "broadcast", "broadcast_in_dim", "reshape", "slice",
                 "pad", "reduce", "dot", "dot_general", "select", "clamp", "iota", "neg"):
        doc = getattr(ops, name).__doc__
        assert doc and "spec" in doc.lower(), name
