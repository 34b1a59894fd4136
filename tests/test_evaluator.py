"""The numpy reference evaluator (xlac/evaluator.py).

Hand-checked values from the spec's examples, the edge cases of docs/numerics.md,
and the public HLO corpus. Test modules are built by hand with the IR classes.
"""
import json
import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac.errors import UnsupportedError
from xlac.evaluator import evaluate, evaluate_computation, supported_opcodes
from xlac.hlo.ir import HloComputation, HloInstruction, HloModule
from xlac.shape import shape_of

BF16 = np.dtype(ml_dtypes.bfloat16)
NAN, INF = float("nan"), float("inf")


# ----------------------------------------------------------------------------
# A tiny builder for hand-written computations
# ----------------------------------------------------------------------------

def S(text):
    return xlac.shape(text) if isinstance(text, str) else text


class Comp:
    """Instructions appended in order; ``build()`` makes the HloComputation (root = last)."""

    def __init__(self, name="entry"):
        self.name, self.insts, self.nparams = name, [], 0

    def _add(self, opcode, shape, operands=(), **attrs):
        inst = HloInstruction(opcode, S(shape), operands, attrs, name=f"{opcode}.{len(self.insts)}")
        self.insts.append(inst)
        return inst

    def param(self, shape):
        self.nparams += 1
        return self._add("parameter", shape, parameter_number=self.nparams - 1)

    def const(self, value, shape):
        shape = S(shape)
        return self._add("constant", shape, literal=np.asarray(value, shape.dtype))

    def op(self, opcode, shape, *operands, **attrs):
        return self._add(opcode, shape, operands, **attrs)

    def build(self):
        return HloComputation(self.name, self.insts)


def module(entry: Comp, *called: HloComputation) -> HloModule:
    return HloModule("test", list(called) + [entry.build()])


def scalar_fn(opcode, type_="f32"):
    """The computation (a, b) -> opcode(a, b) on scalars, e.g. a reducer."""
    c = Comp(f"{opcode}_{type_}")
    a, b = c.param(f"{type_}[]"), c.param(f"{type_}[]")
    c.op(opcode, f"{type_}[]", a, b)
    return c.build()


def run(opcode, out_shape, *args, **attrs):
    """Evaluate one instruction on parameters holding ``args``."""
    args = [np.asarray(a) for a in args]
    c = Comp()
    params = [c.param(shape_of(a)) for a in args]
    c.op(opcode, out_shape, *params, **attrs)
    return evaluate(module(c), *args)


def eq(got, want, dtype=None):
    """Exact equality, dtype and shape included; NaN matches NaN, and the sign of
    zero must match."""
    got = np.asarray(got)
    want = np.asarray(want, dtype if dtype is not None else got.dtype)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (got, want)
    if got.dtype.kind in "iub":
        assert np.array_equal(got, want), (got, want)
        return
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    g, w = got.astype(wide), want.astype(wide)
    assert np.array_equal(g, w, equal_nan=True), (got, want)
    if got.dtype.kind != "c":
        real = ~np.isnan(g)
        assert np.array_equal(np.signbit(g[real]), np.signbit(w[real])), (got, want)


# ----------------------------------------------------------------------------
# Integer arithmetic edge cases (docs/numerics.md)
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("t", [np.int8, np.int32, np.int64])
def test_signed_divide_and_remainder_edges(t):
    lo = np.iinfo(t).min
    x = np.array([7, -7, 7, -7, 5, lo, lo, -3, 0], t)
    y = np.array([2, 2, -2, -2, 0, -1, 0, 0, 0], t)
    ty = np.dtype(t).name.replace("int", "s")
    eq(run("divide", f"{ty}[9]", x, y), [3, -3, -3, 3, -1, lo, -1, -1, -1], t)
    eq(run("remainder", f"{ty}[9]", x, y), [1, -1, 1, -1, 5, 0, lo, -3, 0], t)


def test_unsigned_divide_and_remainder_edges():
    x = np.array([7, 5, 0xFFFFFFFF, 0], np.uint32)
    y = np.array([2, 0, 2, 0], np.uint32)
    eq(run("divide", "u32[4]", x, y), [3, 0xFFFFFFFF, 0x7FFFFFFF, 0xFFFFFFFF], np.uint32)
    eq(run("remainder", "u32[4]", x, y), [1, 5, 1, 0], np.uint32)


def test_float_remainder_takes_the_sign_of_the_dividend():
    x = np.array([7.5, -7.5, 7.5, -7.5], np.float32)
    y = np.array([2, 2, -2, -2], np.float32)
    eq(run("remainder", "f32[4]", x, y), [1.5, -1.5, 1.5, -1.5])


def test_integer_arithmetic_wraps():
    x = np.array([127, -128, 100], np.int8)
    y = np.array([1, -1, 3], np.int8)
    eq(run("add", "s8[3]", x, y), [-128, 127, 103], np.int8)
    eq(run("multiply", "s8[3]", x, y), [127, -128, 44], np.int8)
    eq(run("negate", "s8[3]", x), [-127, -128, -100], np.int8)
    eq(run("abs", "s8[3]", x), [127, -128, 100], np.int8)
    eq(run("subtract", "u8[2]", np.array([0, 5], np.uint8), np.array([1, 3], np.uint8)), [255, 2], np.uint8)


def test_shifts_past_the_bit_width():
    x = np.array([1, 1, 1, -8, -8, 8, -8, -1, -8], np.int32)
    y = np.array([31, 32, -1, 1, 40, 40, -1, 28, 33], np.int32)
    eq(run("shift-left", "s32[9]", x, y), [-2**31, 0, 0, -16, 0, 0, 0, -2**28, 0], np.int32)
    eq(run("shift-right-arithmetic", "s32[9]", x, y), [0, 0, 0, -4, -1, 0, -1, -1, -1], np.int32)
    eq(run("shift-right-logical", "s32[9]", x, y), [0, 0, 0, 0x7FFFFFFC, 0, 0, 0, 15, 0], np.int32)


def test_unsigned_shifts():
    x = np.array([0x80, 0x80, 0xFF, 1], np.uint8)
    y = np.array([1, 8, 4, 7], np.uint8)
    eq(run("shift-right-logical", "u8[4]", x, y), [0x40, 0, 0x0F, 0], np.uint8)
    # arithmetic shift works on the signed reinterpretation (as XLA does)
    eq(run("shift-right-arithmetic", "u8[4]", x, y), [0xC0, 0xFF, 0xFF, 0], np.uint8)
    eq(run("shift-left", "u8[4]", x, y), [0, 0, 0xF0, 0x80], np.uint8)


def test_integer_power():
    x = np.array([2, 3, 1, -1, -1, 2, 0, -2, 0], np.int32)
    y = np.array([10, 40, -5, -3, -2, -1, 0, 3, 5], np.int32)
    wrapped = np.int64(pow(3, 40, 2**32)).astype(np.uint32).view(np.int32)
    eq(run("power", "s32[9]", x, y), [1024, wrapped, 1, -1, 1, 0, 1, -8, 0], np.int32)
    eq(run("power", "u8[2]", np.array([3, 2], np.uint8), np.array([5, 8], np.uint8)), [243, 0], np.uint8)


def test_count_leading_zeros_and_popcnt():
    eq(run("count-leading-zeros", "s32[4]", np.array([0, 1, -1, 0x10000], np.int32)), [32, 31, 0, 15], np.int32)
    eq(run("count-leading-zeros", "u8[3]", np.array([0, 1, 128], np.uint8)), [8, 7, 0], np.uint8)
    eq(run("count-leading-zeros", "s64[2]", np.array([1, 2**40], np.int64)), [63, 23], np.int64)
    eq(run("popcnt", "s32[3]", np.array([-1, 0, 7], np.int32)), [32, 0, 3], np.int32)
    eq(run("popcnt", "s8[2]", np.array([-1, -128], np.int8)), [8, 1], np.int8)


def test_not_and_or_xor_logical_for_pred_bitwise_for_ints():
    p = np.array([True, False, True, False])
    q = np.array([True, True, False, False])
    eq(run("not", "pred[4]", p), [False, True, False, True], np.bool_)
    eq(run("and", "pred[4]", p, q), [True, False, False, False], np.bool_)
    eq(run("or", "pred[4]", p, q), [True, True, True, False], np.bool_)
    eq(run("xor", "pred[4]", p, q), [False, True, True, False], np.bool_)
    a, b = np.array([12, -1], np.int32), np.array([10, 5], np.int32)
    eq(run("not", "s32[2]", a), [-13, 0], np.int32)
    eq(run("and", "s32[2]", a, b), [8, 5], np.int32)
    eq(run("or", "s32[2]", a, b), [14, -1], np.int32)
    eq(run("xor", "s32[2]", a, b), [6, -6], np.int32)


# ----------------------------------------------------------------------------
# Floating point edge cases
# ----------------------------------------------------------------------------

def test_convert_float_to_int_saturates_and_nan_is_zero():
    x = np.array([NAN, INF, -INF, 1e10, -1e10, 2.7, -2.7, -0.5], np.float32)
    big, small = np.iinfo(np.int32).max, np.iinfo(np.int32).min
    eq(run("convert", "s32[8]", x), [0, big, small, big, small, 2, -2, 0], np.int32)
    eq(run("convert", "u8[8]", x), [0, 255, 0, 255, 0, 2, 0, 0], np.uint8)
    eq(run("convert", "s64[3]", np.array([9.3e18, -9.3e18, 2.0**62], np.float64)),
       [2**63 - 1, -2**63, 2**62], np.int64)
    eq(run("convert", "u64[2]", np.array([2.0**64, 2.0**63], np.float64)), [2**64 - 1, 2**63], np.uint64)
    eq(run("convert", "s8[2]", np.array([300, -3.5], BF16)), [127, -3], np.int8)


def test_convert_pred_and_complex():
    eq(run("convert", "pred[4]", np.array([0, 2, -0.0, NAN], np.float32)), [False, True, False, True], np.bool_)
    eq(run("convert", "pred[3]", np.array([0, 5, -1], np.int32)), [False, True, True], np.bool_)
    eq(run("convert", "f32[2]", np.array([True, False])), [1, 0], np.float32)
    eq(run("convert", "s32[2]", np.array([True, False])), [1, 0], np.int32)
    eq(run("convert", "f32[2]", np.array([1.5 + 2j, -3 - 1j], np.complex64)), [1.5, -3], np.float32)
    eq(run("convert", "c64[2]", np.array([1.5, -3], np.float32)), [1.5, -3], np.complex64)


def test_convert_to_bf16_and_f16_rounds_to_nearest_even():
    one = 1.0
    x = np.array([one + 2**-8, one + 3 * 2**-8, one + 2**-8 + 2**-20, NAN, 3.4e38, -0.0], np.float32)
    eq(run("convert", "bf16[6]", x), [1.0, one + 2**-6, one + 2**-7, NAN, INF, -0.0], BF16)
    # f64 -> bf16 rounds once (through f32 the tie below would round down to 1.0)
    eq(run("convert", "bf16[1]", np.array([one + 2**-8 + 2**-30])), [one + 2**-7], BF16)
    eq(run("convert", "f16[4]", np.array([70000, 2049, 2051, 1e-8], np.float32)), [INF, 2048, 2052, 0], np.float16)
    eq(run("convert", "bf16[2]", np.array([3, -2**24 - 1], np.int32)), [3, -2**24], BF16)


def test_half_arithmetic_rounds_after_every_op():
    eq(run("add", "f16[2]", np.array([2048, 2048], np.float16), np.array([1, 3], np.float16)),
       [2048, 2052], np.float16)
    a, b = np.array([1, 1], BF16), np.array([2**-8, 3 * 2**-8], BF16)
    eq(run("add", "bf16[2]", a, b), [1, 1 + 2**-6], BF16)
    x, y = np.array([1.5, 3.25, -7], BF16), np.array([1.25, 0.1, 3], BF16)
    for op, f in (("multiply", np.multiply), ("divide", np.divide), ("subtract", np.subtract)):
        want = f(x.astype(np.float32), y.astype(np.float32)).astype(BF16)
        eq(run(op, "bf16[3]", x, y), want, BF16)
    # exp in f16: computed wide and rounded once
    eq(run("exponential", "f16[1]", np.array([2], np.float16)), [np.float16(math.exp(2))], np.float16)


def test_compare_totalorder():
    nan_bits = np.array([0xFFC00000, 0x7FC00000], np.uint32).view(np.float32)
    vals = np.array([nan_bits[0], -INF, -1, -0.0, 0.0, 1, INF, nan_bits[1]], np.float32)
    n = len(vals)
    x, y = np.repeat(vals, n), np.tile(vals, n)
    i, j = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    for d, f in (("LT", np.less), ("LE", np.less_equal), ("EQ", np.equal), ("NE", np.not_equal),
                 ("GT", np.greater), ("GE", np.greater_equal)):
        eq(run("compare", f"pred[{n * n}]", x, y, direction=d, type="TOTALORDER"), f(i, j), np.bool_)
    # also in bf16 (widened exactly)
    eq(run("compare", "pred[2]", np.array([-0.0, NAN], BF16), np.array([0.0, INF], BF16),
           direction="LT", type="TOTALORDER"), [True, False], np.bool_)


def test_compare_ieee():
    x = np.array([NAN, NAN, -0.0, 1], np.float32)
    y = np.array([NAN, 1, 0.0, 2], np.float32)
    eq(run("compare", "pred[4]", x, y, direction="EQ"), [False, False, True, False], np.bool_)
    eq(run("compare", "pred[4]", x, y, direction="NE"), [True, True, False, True], np.bool_)
    eq(run("compare", "pred[4]", x, y, direction="LT"), [False, False, False, True], np.bool_)
    eq(run("compare", "pred[4]", x, y, direction="GE"), [False, False, True, False], np.bool_)
    eq(run("compare", "pred[2]", np.array([-1, 3], np.int32), np.array([2, 3], np.int32),
           direction="GT", type="SIGNED"), [False, False], np.bool_)
    eq(run("compare", "pred[2]", np.array([200, 3], np.uint8), np.array([2, 3], np.uint8),
           direction="GT", type="UNSIGNED"), [True, False], np.bool_)


def test_round_nearest_afz_and_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 2.4999998, -0.3, NAN, INF, -0.0], np.float32)
    eq(run("round-nearest-afz", "f32[12]", x), [1, 2, 3, -1, -2, -3, 0, 2, -0.0, NAN, INF, -0.0])
    eq(run("round-nearest-even", "f32[12]", x), [0, 2, 2, -0.0, -2, -2, 0, 2, -0.0, NAN, INF, -0.0])
    eq(run("round-nearest-afz", "bf16[2]", np.array([2.5, -0.5], BF16)), [3, -1], BF16)


def test_sign():
    eq(run("sign", "f32[6]", np.array([-2, -0.0, 0.0, 3, NAN, -INF], np.float32)), [-1, -0.0, 0.0, 1, NAN, -1])
    eq(run("sign", "s32[3]", np.array([-5, 0, 7], np.int32)), [-1, 0, 1], np.int32)
    eq(run("sign", "c64[2]", np.array([3 + 4j, 0], np.complex64)), [0.6 + 0.8j, 0], np.complex64)


def test_maximum_minimum_propagate_nan():
    x = np.array([NAN, 1, 2, -INF], np.float32)
    y = np.array([1, NAN, 3, 0], np.float32)
    eq(run("maximum", "f32[4]", x, y), [NAN, NAN, 3, 0])
    eq(run("minimum", "f32[4]", x, y), [NAN, NAN, 2, -INF])
    eq(run("maximum", "s32[2]", np.array([-3, 9], np.int32), np.array([2, 1], np.int32)), [2, 9], np.int32)


def test_transcendentals_against_math():
    x = np.array([-2.5, -0.75, -1e-4, 0, 0.3, 1, 4.5], np.float32)
    xd = x.astype(np.float64)
    cases = {
        "logistic": [1 / (1 + math.exp(-v)) for v in xd],
        "erf": [math.erf(v) for v in xd],
        "cbrt": [math.copysign(abs(v) ** (1 / 3), v) for v in xd],
        "exponential-minus-one": [math.expm1(v) for v in xd],
        "tan": [math.tan(v) for v in xd],
        "tanh": [math.tanh(v) for v in xd],
        "sine": [math.sin(v) for v in xd],
        "cosine": [math.cos(v) for v in xd],
    }
    for op, want in cases.items():
        got = run(op, "f32[7]", x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-6, atol=1e-7, err_msg=op)
    pos = np.array([1e-3, 0.5, 2, 100], np.float32)
    np.testing.assert_allclose(run("rsqrt", "f32[4]", pos), 1 / np.sqrt(pos.astype(np.float64)), rtol=1e-7)
    np.testing.assert_allclose(run("log-plus-one", "f32[4]", pos), np.log1p(pos.astype(np.float64)), rtol=1e-7)
    np.testing.assert_allclose(run("log", "f32[4]", pos), np.log(pos.astype(np.float64)), rtol=1e-6, atol=1e-7)
    eq(run("logistic", "f32[2]", np.array([-200, 200], np.float32)), [0, 1])
    eq(run("erf", "f32[3]", np.array([INF, -INF, NAN], np.float32)), [1, -1, NAN])
    y, x2 = np.array([1, -1, 0, -0.0], np.float32), np.array([-1, -1, -1, -1], np.float32)
    np.testing.assert_allclose(run("atan2", "f32[4]", y, x2),
                               [3 * math.pi / 4, -3 * math.pi / 4, math.pi, -math.pi], rtol=1e-7)
    eq(run("power", "f32[3]", np.array([2, NAN, 0], np.float32), np.array([-1, 0, 0], np.float32)), [0.5, 1, 1])


def test_is_finite_floor_ceil_sqrt():
    x = np.array([1.5, -1.5, INF, -INF, NAN, -0.0], np.float32)
    eq(run("is-finite", "pred[6]", x), [True, True, False, False, False, True], np.bool_)
    eq(run("floor", "f32[6]", x), [1, -2, INF, -INF, NAN, -0.0])
    eq(run("ceil", "f32[6]", x), [2, -1, INF, -INF, NAN, -0.0])
    eq(run("sqrt", "f32[3]", np.array([4, -1, -0.0], np.float32)), [2, NAN, -0.0])


def test_complex_ops():
    a = np.array([1 + 2j, -3 + 0.5j], np.complex64)
    b = np.array([2 - 1j, 1 + 1j], np.complex64)
    eq(run("add", "c64[2]", a, b), a + b, np.complex64)
    eq(run("subtract", "c64[2]", a, b), a - b, np.complex64)
    eq(run("multiply", "c64[2]", a, b), a * b, np.complex64)
    np.testing.assert_allclose(run("divide", "c64[2]", a, b), a / b, rtol=1e-6)
    eq(run("negate", "c64[2]", a), -a, np.complex64)
    np.testing.assert_allclose(run("abs", "f32[2]", a), np.abs(a.astype(np.complex128)), rtol=1e-7)
    np.testing.assert_allclose(run("exponential", "c64[2]", a), np.exp(a.astype(np.complex128)), rtol=1e-6)
    np.testing.assert_allclose(run("log", "c64[2]", a), np.log(a.astype(np.complex128)), rtol=1e-6)
    np.testing.assert_allclose(run("sqrt", "c64[2]", a), np.sqrt(a.astype(np.complex128)), rtol=1e-6)
    eq(run("real", "f32[2]", a), [1, -3], np.float32)
    eq(run("imag", "f32[2]", a), [2, 0.5], np.float32)
    eq(run("imag", "f32[1]", np.array([7], np.float32)), [0], np.float32)
    eq(run("complex", "c64[2]", np.array([1, 2], np.float32), np.array([3, -4], np.float32)), [1 + 3j, 2 - 4j],
       np.complex64)
    eq(run("compare", "pred[2]", a, np.array([1 + 2j, -3], np.complex64), direction="EQ"), [True, False], np.bool_)
    eq(run("compare", "pred[2]", a, np.array([1 + 2j, -3], np.complex64), direction="NE"), [False, True], np.bool_)


def test_reduce_precision():
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 3.4e38, -3.4e38, NAN, -0.0, 3.0], np.float32)
    # with bf16's 8 exponent / 7 mantissa bits it is the round trip through bf16
    eq(run("reduce-precision", "f32[7]", x, exponent_bits=8, mantissa_bits=7),
       x.astype(BF16).astype(np.float32))
    # f16's bits: overflow to inf, values below the normal range flush to zero
    y = np.array([70000, -70000, 1e-6, -1e-6, 2049, 2051, NAN, 65504], np.float32)
    eq(run("reduce-precision", "f32[8]", y, exponent_bits=5, mantissa_bits=10),
       [INF, -INF, 0, -0.0, 2048, 2052, NAN, 65504])
    # more bits than the type has: no-op
    eq(run("reduce-precision", "f16[2]", np.array([1.001, 3], np.float16), exponent_bits=8, mantissa_bits=23),
       np.array([1.001, 3], np.float16))


def test_bitcast_convert():
    x = np.array([1.0, -2.0], np.float32)
    eq(run("bitcast-convert", "s32[2]", x), x.view(np.int32), np.int32)
    eq(run("bitcast-convert", "u32[]", np.float32(1.0)), np.uint32(0x3F800000), np.uint32)
    # narrower: a new minor-most dimension (little-endian halves)
    halves = run("bitcast-convert", "f16[2,2]", x)
    eq(halves, x.view(np.float16).reshape(2, 2), np.float16)
    eq(run("bitcast-convert", "u16[2]", np.float32(1.0)), [0, 0x3F80], np.uint16)
    # wider: the last dimension is consumed
    eq(run("bitcast-convert", "f32[2]", halves), x)


# ----------------------------------------------------------------------------
# Select, clamp, and data movement (the spec's examples)
# ----------------------------------------------------------------------------

def test_select_spec_examples():
    v1, v2 = np.array([1, 2, 3, 4], np.int32), np.array([100, 200, 300, 400], np.int32)
    eq(run("select", "s32[4]", np.array([True, False, False, True]), v1, v2), [1, 200, 300, 4], np.int32)
    eq(run("select", "s32[4]", np.array(True), v1, v2), [1, 2, 3, 4], np.int32)


def test_clamp_spec_example_and_nan():
    eq(run("clamp", "s32[3]", np.int32(0), np.array([-1, 5, 9], np.int32), np.int32(6)), [0, 5, 6], np.int32)
    eq(run("clamp", "f32[3]", np.float32(0), np.array([NAN, -1, 0.5], np.float32), np.float32(1)), [NAN, 0, 0.5])
    lo, hi = np.array([0, 1], BF16), np.array([2, 2], BF16)
    eq(run("clamp", "bf16[2]", lo, np.array([5, -5], BF16), hi), [2, 1], BF16)


def test_iota_spec_examples():
    c = Comp()
    c.op("iota", "s32[4,8]", iota_dimension=0)
    eq(evaluate(module(c)), np.repeat(np.arange(4), 8).reshape(4, 8), np.int32)
    c = Comp()
    c.op("iota", "s32[4,8]", iota_dimension=1)
    eq(evaluate(module(c)), np.tile(np.arange(8), 4).reshape(4, 8), np.int32)
    c = Comp()
    c.op("iota", "bf16[3]", iota_dimension=0)
    eq(evaluate(module(c)), [0, 1, 2], BF16)


def test_broadcast():
    eq(run("broadcast", "f32[2,3]", np.float32(2.0), dimensions=()), np.full((2, 3), 2.0), np.float32)
    v = np.array([1, 2, 3], np.float32)
    eq(run("broadcast", "f32[2,3]", v, dimensions=(1,)), [[1, 2, 3], [1, 2, 3]], np.float32)
    eq(run("broadcast", "f32[3,2]", v, dimensions=(0,)), [[1, 1], [2, 2], [3, 3]], np.float32)
    m = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = run("broadcast", "s32[3,4,2]", m, dimensions=(2, 0))  # operand dim 0 -> result dim 2
    eq(got, np.broadcast_to(m.T[:, None, :], (3, 4, 2)), np.int32)


def test_reshape_spec_example():
    v = np.array([[[10, 11, 12], [15, 16, 17]], [[20, 21, 22], [25, 26, 27]],
                  [[30, 31, 32], [35, 36, 37]], [[40, 41, 42], [45, 46, 47]]], np.float32)
    eq(run("reshape", "f32[24]", v), v.reshape(24), np.float32)
    eq(run("reshape", "f32[8,3]", v), [[10, 11, 12], [15, 16, 17], [20, 21, 22], [25, 26, 27],
                                       [30, 31, 32], [35, 36, 37], [40, 41, 42], [45, 46, 47]], np.float32)
    eq(run("reshape", "f32[]", np.array([[5]], np.float32)), 5, np.float32)
    eq(run("reshape", "f32[1,1]", np.float32(5)), [[5]], np.float32)


def test_transpose_and_reverse():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    got = run("transpose", "s32[4,2,3]", x, dimensions=(2, 0, 1))
    eq(got, np.transpose(x, (2, 0, 1)), np.int32)
    assert got[3, 1, 2] == x[1, 2, 3]  # output[i] is input dimension permutation[i]
    eq(run("reverse", "s32[2,3,4]", x, dimensions=(0, 2)), x[::-1, :, ::-1], np.int32)


def test_slice_spec_examples():
    a = np.array([0, 1, 2, 3, 4], np.float32)
    eq(run("slice", "f32[2]", a, slice=((2, 4, 1),)), [2, 3], np.float32)
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    eq(run("slice", "f32[2,2]", b, slice=((2, 4, 1), (1, 3, 1))), [[7, 8], [10, 11]], np.float32)
    eq(run("slice", "f32[2,2]", b, slice=((0, 4, 2), (0, 3, 2))), [[0, 2], [6, 8]], np.float32)


def test_concatenate_spec_examples():
    parts = [np.array(p, np.int32) for p in ([2, 3], [4, 5], [6, 7])]
    eq(run("concatenate", "s32[6]", *parts, dimensions=(0,)), [2, 3, 4, 5, 6, 7], np.int32)
    a = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    b = np.array([[7, 8]], np.int32)
    eq(run("concatenate", "s32[4,2]", a, b, dimensions=(0,)), [[1, 2], [3, 4], [5, 6], [7, 8]], np.int32)


def test_pad():
    x = np.array([[1, 2], [3, 4]], np.float32)
    # low 1, high 2, interior 1 in dim 0; low 0, high 1, interior 0 in dim 1
    got = run("pad", "f32[6,3]", x, np.float32(0), padding=((1, 2, 1), (0, 1, 0)))
    eq(got, [[0, 0, 0], [1, 2, 0], [0, 0, 0], [3, 4, 0], [0, 0, 0], [0, 0, 0]], np.float32)
    # negative edges crop the interior-padded operand: [1,_,2,_,3] -> [_,2,_]
    v = np.array([1, 2, 3], np.int32)
    eq(run("pad", "s32[3]", v, np.int32(-9), padding=((-1, -1, 1),)), [-9, 2, -9], np.int32)
    eq(run("pad", "s32[2]", v, np.int32(-9), padding=((-2, 1, 0),)), [3, -9], np.int32)
    eq(run("pad", "s32[3]", v, np.int32(0), padding=((0, 0, 0),)), v, np.int32)


def test_dynamic_slice_spec_examples_and_clamping():
    a = np.array([0, 1, 2, 3, 4], np.float32)
    eq(run("dynamic-slice", "f32[2]", a, np.int32(2), dynamic_slice_sizes=(2,)), [2, 3], np.float32)
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    eq(run("dynamic-slice", "f32[2,2]", b, np.int32(2), np.int32(1), dynamic_slice_sizes=(2, 2)),
       [[7, 8], [10, 11]], np.float32)
    # out-of-bounds starts are clamped so the window fits
    eq(run("dynamic-slice", "f32[2,2]", b, np.int32(9), np.int32(-4), dynamic_slice_sizes=(2, 2)),
       [[6, 7], [9, 10]], np.float32)
    eq(run("dynamic-slice", "f32[2]", a, np.uint32(7), dynamic_slice_sizes=(2,)), [3, 4], np.float32)


def test_dynamic_update_slice_spec_examples_and_clamping():
    a = np.array([0, 1, 2, 3, 4], np.float32)
    u = np.array([5, 6], np.float32)
    eq(run("dynamic-update-slice", "f32[5]", a, u, np.int32(2)), [0, 1, 5, 6, 4], np.float32)
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    u2 = np.array([[12, 13], [14, 15], [16, 17]], np.float32)
    want = [[0, 1, 2], [3, 12, 13], [6, 14, 15], [9, 16, 17]]
    eq(run("dynamic-update-slice", "f32[4,3]", b, u2, np.int32(1), np.int32(1)), want, np.float32)
    eq(run("dynamic-update-slice", "f32[4,3]", b, u2, np.int32(5), np.int32(7)), want, np.float32)
    eq(run("dynamic-update-slice", "f32[5]", a, u, np.int32(-3)), [5, 6, 2, 3, 4], np.float32)
    assert a[0] == 0  # the operand is not modified


# ----------------------------------------------------------------------------
# Reduce and dot
# ----------------------------------------------------------------------------

def reduce_module(x_shape, out_shape, dims, reducer, init, init_type="f32"):
    c = Comp()
    x = c.param(x_shape)
    i = c.const(init, f"{init_type}[]")
    c.op("reduce", out_shape, x, i, dimensions=dims, to_apply=reducer)
    return module(c, reducer)


def test_reduce_spec_examples():
    add = scalar_fn("add")
    m = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    eq(evaluate(reduce_module("f32[2,3]", "f32[3]", (0,), add, 0), m), [5, 7, 9], np.float32)
    eq(evaluate(reduce_module("f32[2,3]", "f32[2]", (1,), add, 0), m), [6, 15], np.float32)
    cube = np.broadcast_to(m, (4, 2, 3)).copy()
    eq(evaluate(reduce_module("f32[4,2,3]", "f32[2,3]", (0,), add, 0), cube), [[4, 8, 12], [16, 20, 24]],
       np.float32)
    eq(evaluate(reduce_module("f32[4,2,3]", "f32[4,2]", (2,), add, 0), cube), [[6, 15]] * 4, np.float32)
    eq(evaluate(reduce_module("f32[4,2,3]", "f32[3]", (0, 1), add, 0), cube), [20, 28, 36], np.float32)
    eq(evaluate(reduce_module("f32[4,2,3]", "f32[]", (0, 1, 2), add, 0), cube), 84, np.float32)


def test_reduce_init_is_used_once_and_empty_dims():
    add = scalar_fn("add")
    m = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    eq(evaluate(reduce_module("f32[2,3]", "f32[2]", (1,), add, 10), m), [16, 25], np.float32)
    eq(evaluate(reduce_module("f32[2,3]", "f32[2,3]", (), add, 10), m), m + 10, np.float32)
    eq(evaluate(reduce_module("f32[0,3]", "f32[3]", (0,), scalar_fn("maximum"), -INF),
                np.zeros((0, 3), np.float32)), [-INF] * 3, np.float32)


def test_reduce_fast_ops_and_wrapping():
    x = np.array([[100, 100], [100, -100]], np.int8)
    eq(evaluate(reduce_module("s8[2,2]", "s8[2]", (1,), scalar_fn("add", "s8"), 0, "s8"), x), [-56, 0], np.int8)
    eq(evaluate(reduce_module("s8[2,2]", "s8[2]", (0,), scalar_fn("multiply", "s8"), 1, "s8"), x),
       [16, -16], np.int8)
    f = np.array([[1, NAN, 3], [4, 5, -6]], np.float32)
    eq(evaluate(reduce_module("f32[2,3]", "f32[2]", (1,), scalar_fn("maximum"), -INF), f), [NAN, 5], np.float32)
    eq(evaluate(reduce_module("f32[2,3]", "f32[2]", (1,), scalar_fn("minimum"), INF), f), [NAN, -6], np.float32)
    p = np.array([[True, False], [True, True]])
    eq(evaluate(reduce_module("pred[2,2]", "pred[2]", (1,), scalar_fn("and", "pred"), True, "pred"), p),
       [False, True], np.bool_)
    eq(evaluate(reduce_module("pred[2,2]", "pred[2]", (0,), scalar_fn("or", "pred"), False, "pred"), p),
       [True, True], np.bool_)
    b = np.array([[1, 2, 3, 4]], BF16)
    eq(evaluate(reduce_module("bf16[1,4]", "bf16[1]", (1,), scalar_fn("add", "bf16"), 0.5, "bf16"), b),
       [10.5], BF16)


def test_reduce_general_path_matches_fast_path():
    # (a, b) -> a + b * 1: not recognised as a plain add, so the reducer is evaluated.
    c = Comp("slow_add")
    a, b = c.param("s32[]"), c.param("s32[]")
    one = c.const(1, "s32[]")
    c.op("add", "s32[]", a, c.op("multiply", "s32[]", b, one))
    slow = c.build()
    x = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    for dims, out in (((1,), "s32[3,5]"), ((0, 2), "s32[4]"), ((0, 1, 2), "s32[]")):
        got = evaluate(reduce_module("s32[3,4,5]", out, dims, slow, 7, "s32"), x)
        eq(got, x.sum(axis=dims) + 7, np.int32)


def argmax_reducer():
    """(max, argmax, value, index) -> the larger value and its (first) index."""
    c = Comp("argmax")
    m, mi, v, vi = c.param("f32[]"), c.param("s32[]"), c.param("f32[]"), c.param("s32[]")
    gt = c.op("compare", "pred[]", v, m, direction="GT")
    eqv = c.op("compare", "pred[]", v, m, direction="EQ")
    lt = c.op("compare", "pred[]", vi, mi, direction="LT")
    take = c.op("or", "pred[]", gt, c.op("and", "pred[]", eqv, lt))
    c.op("tuple", "(f32[], s32[])", c.op("select", "f32[]", take, v, m), c.op("select", "s32[]", take, vi, mi))
    return c.build()


def test_variadic_reduce_argmax():
    reducer = argmax_reducer()
    c = Comp()
    x = c.param("f32[3,4]")
    idx = c.op("iota", "s32[3,4]", iota_dimension=1)
    r = c.op("reduce", "(f32[3], s32[3])", x, idx, c.const(-INF, "f32[]"), c.const(0, "s32[]"),
             dimensions=(1,), to_apply=reducer)
    c.op("get-tuple-element", "s32[3]", r, index=1)
    x_val = np.array([[1, 5, 2, 5], [-1, -2, -3, -4], [0, 0, 9, 1]], np.float32)
    eq(evaluate(module(c, reducer), x_val), [1, 0, 2], np.int32)


def test_reduce_with_non_scalar_reducer_falls_back_to_elementwise_calls():
    # A reducer that calls another computation is not batched: it runs per element.
    add = scalar_fn("add")
    c = Comp("calling_add")
    a, b = c.param("f32[]"), c.param("f32[]")
    c.op("call", "f32[]", a, b, to_apply=add)
    calling = c.build()
    m = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    eq(evaluate(reduce_module("f32[2,3]", "f32[2]", (1,), calling, 1), m), [7, 16], np.float32)


def dot(lhs, rhs, out, **dims):
    return run("dot", out, lhs, rhs, **dims)


def test_dot_spec_examples():
    lhs = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    rhs = np.array([[1, 1, 1], [2, 2, 2]], np.float32)
    eq(dot(lhs, rhs, "f32[2,2]", lhs_contracting_dims=(1,), rhs_contracting_dims=(1,)),
       [[6, 12], [15, 30]], np.float32)
    l3 = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.float32)
    r3 = np.array([np.eye(2), np.eye(2)], np.float32)
    eq(dot(l3, r3, "f32[2,2,2]", lhs_batch_dims=(0,), rhs_batch_dims=(0,),
           lhs_contracting_dims=(2,), rhs_contracting_dims=(1,)), l3, np.float32)
    v = np.array([1, 2, 3], np.float32)
    eq(dot(v, v, "f32[]", lhs_contracting_dims=(0,), rhs_contracting_dims=(0,)), 14, np.float32)
    eq(dot(lhs, v, "f32[2]", lhs_contracting_dims=(1,), rhs_contracting_dims=(0,)), [14, 32], np.float32)


def test_dot_dimension_order_batch_then_lhs_then_rhs():
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal((3, 5, 2, 4)).astype(np.float32)  # k, b, m, k2
    rhs = rng.standard_normal((4, 2, 6, 5, 3)).astype(np.float32)  # k2, m?, n, b, k
    got = dot(lhs, rhs, "f32[5,2,2,6]", lhs_batch_dims=(1,), rhs_batch_dims=(3,),
              lhs_contracting_dims=(0, 3), rhs_contracting_dims=(4, 0))
    want = np.einsum("kbmj,jpnbk->bmpn", lhs.astype(np.float64), rhs.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert got.dtype == np.float32
    outer = dot(np.array([1, 2], np.int32), np.array([3, 4, 5], np.int32), "s32[2,3]")
    eq(outer, [[3, 4, 5], [6, 8, 10]], np.int32)


def test_integer_dot_wraps_and_widens():
    a = np.full((1, 4), 100, np.int8)
    eq(dot(a, a.T.copy(), "s32[1,1]", lhs_contracting_dims=(1,), rhs_contracting_dims=(0,)), [[40000]], np.int32)
    big = np.full((1, 2), 2**30, np.int32)
    eq(dot(big, big.T.copy(), "s32[1,1]", lhs_contracting_dims=(1,), rhs_contracting_dims=(0,)), [[0]], np.int32)
    h = np.array([[1, 2]], BF16)
    eq(dot(h, h.T.copy(), "f32[1,1]", lhs_contracting_dims=(1,), rhs_contracting_dims=(0,)), [[5]], np.float32)
    eq(dot(h, h.T.copy(), "bf16[1,1]", lhs_contracting_dims=(1,), rhs_contracting_dims=(0,)), [[5]], BF16)


# ----------------------------------------------------------------------------
# Tuples and control flow
# ----------------------------------------------------------------------------

def test_tuple_get_tuple_element_and_nested_results():
    c = Comp()
    a, b = c.param("f32[2]"), c.param("s32[]")
    inner = c.op("tuple", "(f32[2], s32[])", a, b)
    c.op("tuple", "((f32[2], s32[]), s32[])", inner, c.op("get-tuple-element", "s32[]", inner, index=1))
    x = np.array([1, 2], np.float32)
    (ga, gb), gc = evaluate(module(c), x, np.int32(7))
    eq(ga, x, np.float32)
    eq(gb, 7, np.int32)
    eq(gc, 7, np.int32)
    ga[0] = 99
    assert x[0] == 1  # results are copies


def test_call_and_evaluate_computation():
    mul = scalar_fn("multiply")
    c = Comp()
    a, b = c.param("f32[]"), c.param("f32[]")
    c.op("call", "f32[]", a, b, to_apply=mul)
    eq(evaluate(module(c, mul), np.float32(3), np.float32(4)), 12, np.float32)
    eq(evaluate_computation(mul, [np.float32(2), np.float32(5)]), 10, np.float32)


def test_while_spec_pseudocode():
    # init = {0, zeros[10]}; while (result(0) < 1000) { result = {result(0) + 1, result(1) + ones} }
    state = "(s32[], f32[10])"
    cond = Comp("cond")
    p = cond.param(state)
    cond.op("compare", "pred[]", cond.op("get-tuple-element", "s32[]", p, index=0), cond.const(1000, "s32[]"),
            direction="LT")
    cond = cond.build()
    body = Comp("body")
    p = body.param(state)
    i = body.op("add", "s32[]", body.op("get-tuple-element", "s32[]", p, index=0), body.const(1, "s32[]"))
    v = body.op("add", "f32[10]", body.op("get-tuple-element", "f32[10]", p, index=1),
                body.const(np.ones(10), "f32[10]"))
    body.op("tuple", state, i, v)
    body = body.build()
    c = Comp()
    init = c.op("tuple", state, c.const(0, "s32[]"), c.const(np.zeros(10), "f32[10]"))
    c.op("while", state, init, condition=cond, body=body)
    count, vec = evaluate(module(c, cond, body))
    eq(count, 1000, np.int32)
    eq(vec, np.full(10, 1000), np.float32)


def branch(opcode, value):
    c = Comp(f"{opcode}_{value}")
    x = c.param("f32[]")
    c.op(opcode, "f32[]", x, c.const(value, "f32[]"))
    return c.build()


def test_conditional_pred_form():
    t, f = branch("add", 1), branch("multiply", 10)
    c = Comp()
    p, x, y = c.param("pred[]"), c.param("f32[]"), c.param("f32[]")
    c.op("conditional", "f32[]", p, x, y, true_computation=t, false_computation=f)
    m = module(c, t, f)
    eq(evaluate(m, np.bool_(True), np.float32(2), np.float32(3)), 3, np.float32)
    eq(evaluate(m, np.bool_(False), np.float32(2), np.float32(3)), 30, np.float32)


def test_conditional_index_form_out_of_range_runs_the_last_branch():
    branches = tuple(branch("add", 10 * (k + 1)) for k in range(3))
    c = Comp()
    i = c.param("s32[]")
    xs = [c.param("f32[]") for _ in range(3)]
    c.op("conditional", "f32[]", i, *xs, branch_computations=branches)
    m = module(c, *branches)
    args = [np.float32(1), np.float32(2), np.float32(3)]
    for k, want in ((0, 11), (1, 22), (2, 33), (3, 33), (-1, 33), (2**31 - 1, 33)):
        eq(evaluate(m, np.int32(k), *args), want, np.float32)


def test_map():
    add = scalar_fn("add")
    x, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.full((2, 3), 10, np.float32)
    eq(run("map", "f32[2,3]", x, y, dimensions=(0, 1), to_apply=add), x + y, np.float32)
    # a computation that cannot run batched goes element by element
    c = Comp("calling_add")
    a, b = c.param("f32[]"), c.param("f32[]")
    c.op("call", "f32[]", a, b, to_apply=add)
    eq(run("map", "f32[2,3]", x, y, dimensions=(0, 1), to_apply=c.build()), x + y, np.float32)


def lt_comparator(types, key=0, direction="LT", totalorder=False):
    c = Comp("cmp")
    params = []
    for t in types:
        params += [c.param(f"{t}[]"), c.param(f"{t}[]")]
    attrs = {"type": "TOTALORDER"} if totalorder else {}
    c.op("compare", "pred[]", params[2 * key], params[2 * key + 1], direction=direction, **attrs)
    return c.build()


def test_sort_spec_example_multiple_operands():
    cmp = lt_comparator(["s32", "s32", "f32"])
    ops = [np.array([3, 1], np.int32), np.array([42, 50], np.int32), np.array([-3.0, 1.1], np.float32)]
    got = run("sort", "(s32[2], s32[2], f32[2])", *ops, dimensions=(0,), is_stable=False, to_apply=cmp)
    eq(got[0], [1, 3], np.int32)
    eq(got[1], [50, 42], np.int32)
    eq(got[2], [1.1, -3.0], np.float32)


def test_sort_along_a_dimension_stable_and_totalorder():
    x = np.array([[3, 1, 2], [0, -5, 7]], np.float32)
    eq(run("sort", "f32[2,3]", x, dimensions=(1,), to_apply=lt_comparator(["f32"])), np.sort(x, axis=1),
       np.float32)
    eq(run("sort", "f32[2,3]", x, dimensions=(0,), to_apply=lt_comparator(["f32"], direction="GT")),
       -np.sort(-x, axis=0), np.float32)
    # stable: equal keys keep their order; the payload shows it
    keys = np.array([2, 1, 2, 1, 0], np.int32)
    payload = np.arange(5, dtype=np.int32)
    got = run("sort", "(s32[5], s32[5])", keys, payload, dimensions=(0,), is_stable=True,
              to_apply=lt_comparator(["s32", "s32"]))
    eq(got[0], [0, 1, 1, 2, 2], np.int32)
    eq(got[1], [4, 1, 3, 0, 2], np.int32)
    z = np.array([NAN, 1, -0.0, -INF, 0.0, -NAN], np.float32)
    got = run("sort", "f32[6]", z, dimensions=(0,), to_apply=lt_comparator(["f32"], totalorder=True))
    assert np.array_equal(np.signbit(got), [True, True, True, False, False, False])
    eq(got[1:5], [-INF, -0.0, 0.0, 1], np.float32)
    assert np.isnan(got[0]) and np.isnan(got[5])


def test_sort_with_unbatchable_comparator():
    inner = lt_comparator(["f32"])
    c = Comp("calling_cmp")
    a, b = c.param("f32[]"), c.param("f32[]")
    c.op("call", "pred[]", a, b, to_apply=inner)
    x = np.array([5, -1, 3, 0], np.float32)
    eq(run("sort", "f32[4]", x, dimensions=(0,), to_apply=c.build()), [-1, 0, 3, 5], np.float32)


def test_copy_and_bitcast_follow_layouts():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    eq(run("copy", "f32[2,3]", x), x, np.float32)
    # f32[2,3]{1,0} bitcast to f32[3,2]{0,1} is a transpose: the same buffer
    c = Comp()
    p = c.param("f32[2,3]{1,0}")
    c.op("bitcast", "f32[3,2]{0,1}", p)
    eq(evaluate(module(c), x), x.T, np.float32)


# ----------------------------------------------------------------------------
# The public API: inputs, argument checks, errors
# ----------------------------------------------------------------------------

def test_accepts_an_xla_computation_and_hlo_text():
    c = Comp()
    a, b = c.param("f32[2]"), c.param("f32[2]")
    c.op("add", "f32[2]", a, b)
    m = module(c)

    class FakeComputation:
        module = m

    x = np.array([1, 2], np.float32)
    eq(evaluate(FakeComputation(), x, x), [2, 4], np.float32)
    text = """HloModule t
ENTRY main {
  x = f32[2]{0} parameter(0)
  c = f32[] constant(3)
  b = f32[2]{0} broadcast(c), dimensions={}
  ROOT m = f32[2]{0} multiply(x, b)
}
"""
    eq(evaluate(text, x), [3, 6], np.float32)


def test_argument_checks_name_the_parameter():
    c = Comp()
    c.param("f32[2]")
    c.param("s32[]")
    m = module(c)
    x = np.zeros(2, np.float32)
    with pytest.raises(TypeError, match="2 argument"):
        evaluate(m, x)
    with pytest.raises(TypeError, match=r"parameter 0 \(parameter.0\).*f32\[2\].*float64"):
        evaluate(m, np.zeros(2), np.int32(1))
    with pytest.raises(ValueError, match=r"parameter 0 .*\(3,\)"):
        evaluate(m, np.zeros(3, np.float32), np.int32(1))
    with pytest.raises(TypeError, match=r"parameter 1 "):
        evaluate(m, x, np.int64(1))
    eq(evaluate(m, x, 5), 5, np.int32)  # a Python int that fits s32 is taken as s32
    with pytest.raises(TypeError, match=r"parameter 1 "):
        evaluate(m, x, 2.5)


def test_unsupported_opcode_names_it():
    c = Comp()
    p = c.param("f32[4]")
    c.op("xlac-test-unimplemented", "f32[4]", p)
    with pytest.raises(UnsupportedError, match="not supported yet: xlac-test-unimplemented"):
        evaluate(module(c), np.zeros(4, np.float32))


def test_a_rule_producing_the_wrong_type_is_an_assertion():
    c = Comp()
    p = c.param("f32[4]")
    c.op("reshape", "s32[2,2]", p)  # reshape cannot change the element type
    with pytest.raises(AssertionError, match="reshape"):
        evaluate(module(c), np.zeros(4, np.float32))


# ----------------------------------------------------------------------------
# The public corpus
# ----------------------------------------------------------------------------

CORPUS = Path(__file__).resolve().parent / "hlo_corpus"
CASES = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))["cases"]


def _flatten(v):
    return [leaf for e in v for leaf in _flatten(e)] if isinstance(v, tuple) else [v]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_corpus(case):
    missing = sorted(set(case["opcodes"]) - supported_opcodes())
    if missing:
        pytest.skip(f"evaluator does not support {', '.join(missing)}")
    name = case["name"]
    with np.load(CORPUS / f"{name}.npz") as data:
        inputs = [data[f"arr_{k}"] for k in range(len(data.files))]
    with np.load(CORPUS / f"{name}.expected.npz") as data:
        expected = [data[f"arr_{k}"] for k in range(len(data.files))]
    got = _flatten(evaluate((CORPUS / f"{name}.hlo").read_text(encoding="utf-8"), *inputs))
    assert len(got) == len(expected)
    for k, (a, e) in enumerate(zip(got, expected)):
        spec = case["outputs"][k]
        assert a.dtype == e.dtype and a.shape == e.shape, f"arr_{k}: {a.dtype}{a.shape} vs {e.dtype}{e.shape}"
        if np.issubdtype(e.dtype, np.inexact) and (spec["rtol"] or spec["atol"]):
            np.testing.assert_allclose(a, e, rtol=spec["rtol"], atol=spec["atol"],
                                       equal_nan=case.get("equal_nan", False), err_msg=f"arr_{k}")
        else:
            np.testing.assert_array_equal(a, e, err_msg=f"arr_{k}")


def test_sort_with_a_comparator_that_broadcasts_runs_element_by_element():
    # Issue 12, item 7: a comparator the evaluator cannot batch (it broadcasts)
    # runs on 0-d values, and a TOTALORDER compare of 0-d values came out 1-d
    # (AssertionError); `xlac run --reference` reported an internal error.
    text = """HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ba = f32[] broadcast(a), dimensions={}
  ROOT c = pred[] compare(ba, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  p = f32[5] parameter(0)
  ROOT s = f32[5] sort(p), dimensions={0}, to_apply=cmp
}"""
    x = np.array([3, np.nan, 0.0, -0.0, -1], np.float32)
    want = np.array([-1, -0.0, 0.0, 3, np.nan], np.float32)
    got = xlac.evaluate(text, x)
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got[1]) and not np.signbit(got[2])
    np.testing.assert_array_equal(xlac.jit(text)(x), want)


@pytest.mark.parametrize("line", [
    "ROOT c = pred[] compare(p, p), direction=EQ, type=TOTALORDER",
    "ROOT c = f32[] reduce-precision(p), exponent_bits=6, mantissa_bits=0",
])
def test_scalar_bit_level_rules_keep_the_scalar_shape(line):
    text = f"HloModule m\nENTRY e {{\n  p = f32[] parameter(0)\n  {line}\n}}"
    got = xlac.evaluate(text, np.float32(3.3))
    assert np.shape(got) == ()
    np.testing.assert_array_equal(got, xlac.jit(text)(np.float32(3.3)))


def test_half_precision_reduce_rounds_every_step():
    # Found by the long builder fuzz: numpy's reduction summed bf16 in f32 and
    # rounded once (-0.0078125); XLA:CPU and the JIT round after each add (0).
    text = """HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  p = bf16[4] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(p, z), dimensions={0}, to_apply=add
}"""
    x = np.array([4.09375, 0.8359375, -0.90625, -4.03125], BF16)
    assert float(xlac.evaluate(text, x)) == 0.0
    assert float(xlac.jit(text)(x)) == 0.0
