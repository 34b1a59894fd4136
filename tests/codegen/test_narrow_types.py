"""The narrow element types: s1/s2/s4, u1/u2/u4 and the f8/f4 floats.

Storage is ml_dtypes' (one element per byte); ``convert`` to and from every
other type must give the same bits in compiled code as in the evaluator, and
conversions from f32 the same bits as ml_dtypes (XLA uses ml_dtypes' rules).
The f8/f4 types compute in f32 like bf16; the sub-byte integers wrap at their
own width.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac.shape import FLOAT_FORMATS, PrimitiveType as PT

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

NARROW_FLOATS = sorted(FLOAT_FORMATS, key=lambda t: t.value)
SUB_BYTE_INTS = [PT.S1, PT.S2, PT.S4, PT.U1, PT.U2, PT.U4]
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}


def _bits(a) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(_UINT[a.dtype.itemsize]) if a.dtype.itemsize != 16 else a.view(np.uint64)


def every_value(pt: PT) -> np.ndarray:
    """All 2**bits values of a narrow type (its bit patterns, in order)."""
    return np.arange(1 << pt.bit_width, dtype=np.uint8).view(pt.dtype)


def convert_module(src: PT, dst: PT, n: int) -> str:
    return (f"HloModule convert\nENTRY e {{\n  p = {src.value}[{n}] parameter(0)\n"
            f"  ROOT c = {dst.value}[{n}] convert(p)\n}}\n")


def jit_and_eval(text: str, *args):
    return xlac.jit(text)(*args), xlac.evaluate(text, *args)


def assert_same_bits(got, want, what=""):
    assert got.dtype == want.dtype, what
    bad = np.nonzero(_bits(got) != _bits(want))[0]
    assert not len(bad), f"{what}: {len(bad)} differ, first at {bad[:5]}: {got[bad[:5]]} vs {want[bad[:5]]}"


def assert_same_values(got, want, what=""):
    """Equal values, NaN equal to any NaN (arithmetic leaves a NaN's sign and
    payload to the hardware), signed zeros told apart."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    same = (g == w) & (np.signbit(g) == np.signbit(w)) | (np.isnan(g) & np.isnan(w))
    bad = np.nonzero(~same)[0]
    assert not len(bad), f"{what}: {len(bad)} differ, first {g[bad[:5]]} vs {w[bad[:5]]}"


# ----------------------------------------------------------------------------
# f8/f4 <-> f32: every bit pattern one way, every interesting f32 the other
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("pt", NARROW_FLOATS, ids=lambda t: t.value)
def test_every_bit_pattern_widens_exactly(pt):
    values = every_value(pt)
    got, ref = jit_and_eval(convert_module(pt, PT.F32, len(values)), values)
    want = values.astype(np.float32)          # ml_dtypes
    assert_same_bits(got, want, "compiled")
    assert_same_bits(ref, want, "evaluator")
    # and through f64 (the f32 value, widened exactly)
    got, ref = jit_and_eval(convert_module(pt, PT.F64, len(values)), values)
    assert_same_bits(got, want.astype(np.float64), "compiled f64")
    assert_same_bits(ref, want.astype(np.float64), "evaluator f64")


def _interesting_f32(pt: PT) -> np.ndarray:
    """Every bf16 and f16 value as f32 (65536 each: all binades, many ties for an
    f8), the midpoints between neighbouring values of ``pt`` and their f32
    neighbours (the ties and near-ties), f32 subnormals and random bit patterns."""
    rng = np.random.default_rng(7)
    u16 = np.arange(1 << 16, dtype=np.uint16)
    parts = [u16.view(ml_dtypes.bfloat16).astype(np.float32), u16.view(np.float16).astype(np.float32)]
    finite = every_value(pt).astype(np.float64)
    finite = np.unique(finite[np.isfinite(finite)])
    mid = ((finite[1:] + finite[:-1]) / 2).astype(np.float32)       # exact: few mantissa bits
    parts += [mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf))]
    top = np.float32(finite.max())
    parts.append(np.array([top, np.nextafter(top, np.float32(np.inf)), top * 1.0625, top * 1.125, 1e38,
                           np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0], np.float32))
    parts.append(np.arange(1, 1 << 12, dtype=np.uint32).view(np.float32))        # subnormals
    parts.append(rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32))
    x = np.concatenate(parts).astype(np.float32)
    return np.concatenate([x, -x])


def _ml_dtypes_narrows(x, pt: PT):
    """``x.astype`` (ml_dtypes: round to nearest even, its NaN rules) as
    ml_dtypes 0.7 does it: before 0.7 it rounded f8e8m0fnu's lowest binade
    (f32 subnormals above 2**-127) up to 2**-126."""
    want = x.astype(pt.dtype)
    if pt is PT.F8E8M0FNU:
        low = (x > 2.0 ** -127) & (x < 1.5 * 2.0 ** -127)
        want[low] = np.zeros(1, np.uint8).view(pt.dtype)[0]
    return want


@pytest.mark.parametrize("pt", NARROW_FLOATS, ids=lambda t: t.value)
def test_f32_narrows_as_ml_dtypes(pt):
    x = _interesting_f32(pt)
    got, ref = jit_and_eval(convert_module(PT.F32, pt, len(x)), x)
    want = _ml_dtypes_narrows(x, pt)
    assert_same_bits(got, want, "compiled")
    assert_same_bits(ref, want, "evaluator")


def test_f8e8m0fnu_lowest_binade_rounds_to_nearest():
    """Exponent field 0 of f8e8m0fnu is 2**-127, a value like any other (it has
    no zero and no subnormals): an f32 between 2**-127 and 2**-126 rounds to
    the nearer of the two, a tie up, and anything below 2**-127 to 2**-127.
    (The compiled code once treated field 0 as a subnormal binade and rounded
    on a 2**-126 grid: 1.02 * 2**-127 became 2**-126.)"""
    bits = np.array([0x00400000, 0x00410000, 0x005FFFFF, 0x00600000, 0x00610000, 0x007FFFFF,
                     0x00800000, 0x00200000, 0x003FFFFF, 0x00000001], np.uint32)
    want = np.array([0, 0, 0, 1, 1, 1, 1, 0, 0, 0], np.uint8)
    x = bits.view(np.float32)
    got, ref = jit_and_eval(convert_module(PT.F32, PT.F8E8M0FNU, len(x)), x)
    np.testing.assert_array_equal(got.view(np.uint8), want)
    np.testing.assert_array_equal(ref.view(np.uint8), want)
    x64 = x.astype(np.float64)
    got, ref = jit_and_eval(convert_module(PT.F64, PT.F8E8M0FNU, len(x)), x64)
    np.testing.assert_array_equal(got.view(np.uint8), want)
    np.testing.assert_array_equal(ref.view(np.uint8), want)


@pytest.mark.parametrize("pt", [PT.F8E5M2, PT.F8E4M3FN, PT.F4E2M1FN, PT.F8E8M0FNU])
def test_f64_rounds_once(pt):
    # 1.125 lies half way between two e5m2 values (1 and 1.25), 1.125 + 2**-40 just
    # above: one rounding gives 1.25; rounding to f32 first (1.125) and then to
    # the tie's even neighbour would give 1.
    finite = every_value(pt).astype(np.float64)
    finite = np.unique(finite[np.isfinite(finite)])
    lower, upper = finite[:-1], finite[1:]
    # (f8e8m0fnu's lowest binade, 2**-127 to 2**-126, is f32 subnormals: its
    # midpoint is no f64 tie rounded to odd; compared bitwise above and below.)
    keep = (lower != 0) & (upper != 0) & (np.abs(lower) >= 2.0 ** -126)
    lower, upper = lower[keep], upper[keep]
    mid = (lower + upper) / 2
    nudge = np.abs(mid) * 2.0 ** -40
    x = np.concatenate([mid + nudge, mid - nudge, [1e300, -1e300, 1e-300, 0.0]])
    got, ref = jit_and_eval(convert_module(PT.F64, pt, len(x)), x)
    assert_same_bits(got, ref)
    n = len(mid)
    np.testing.assert_array_equal(got[:n].astype(np.float64), upper)     # just above a tie: up
    np.testing.assert_array_equal(got[n:2 * n].astype(np.float64), lower)  # just below: down


# ----------------------------------------------------------------------------
# convert between a narrow type and every other type
# ----------------------------------------------------------------------------

OTHER_TYPES = [PT.PRED, PT.S8, PT.S32, PT.S64, PT.U8, PT.U64, PT.S4, PT.U2, PT.F16, PT.BF16, PT.F32,
               PT.F64, PT.C64, PT.F8E4M3FN, PT.F8E5M2, PT.F4E2M1FN]


def _sample(pt: PT, n: int = 512) -> np.ndarray:
    rng = np.random.default_rng(3)
    if pt.is_pred:
        return rng.integers(0, 2, n).astype(bool)
    if pt.is_sub_byte or pt.float_format is not None:
        return every_value(pt)
    if pt.is_integral:
        info = np.iinfo(pt.dtype)
        edge = np.array([info.min, info.max, 0, 1, 2, 3, 100, 255, 256, 1000], dtype=np.float64)
        vals = np.concatenate([edge, rng.integers(-1000, 1000, n)])
        return np.clip(vals, info.min, info.max).astype(pt.dtype)
    vals = np.concatenate([rng.standard_normal(n) * 10.0 ** rng.integers(-3, 6, n),
                           [0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 57344, 1e5, 6, 5, 0.25]])
    if pt.is_complex:
        return (vals + 1j * vals[::-1]).astype(pt.dtype)
    return vals.astype(pt.dtype)


@pytest.mark.parametrize("pt", NARROW_FLOATS + SUB_BYTE_INTS, ids=lambda t: t.value)
def test_converts_from_and_to_every_type(pt):
    for other in OTHER_TYPES:
        if other is pt:
            continue
        src = every_value(pt)
        got, ref = jit_and_eval(convert_module(pt, other, len(src)), src)
        assert_same_bits(got, ref, f"{pt.value} -> {other.value}")
        src = _sample(other)
        got, ref = jit_and_eval(convert_module(other, pt, len(src)), src)
        assert_same_bits(got, ref, f"{other.value} -> {pt.value}")


def test_conversion_rules_by_example():
    e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
    x = np.array([448, 464, 465, 1e9, -1e9, 2.0 ** -9, np.nan], np.float32)
    got = xlac.jit(convert_module(PT.F32, PT.F8E4M3FN, len(x)))(x)
    # 464 is a tie between 448 and (NaN's pattern) 480: even 448; past it, NaN (no inf)
    assert got.view(np.uint8).tolist() == [0x7E, 0x7E, 0x7F, 0x7F, 0xFF, 0x01, 0x7F]
    f4 = xlac.jit(convert_module(PT.F32, PT.F4E2M1FN, 4))(np.array([100, -100, 0.25, 0.75], np.float32))
    assert f4.astype(np.float32).tolist() == [6, -6, 0, 1]              # saturates; ties to even
    e8m0 = xlac.jit(convert_module(PT.F32, PT.F8E8M0FNU, 5))(np.array([1.5, 3, 0, -1, 2.0 ** -130], np.float32))
    assert e8m0.view(np.uint8).tolist() == [128, 129, 255, 255, 0]      # ties up; no zero, no sign
    to_int = xlac.jit(convert_module(PT.F8E5M2, PT.S8, 4))(np.array([np.inf, -np.inf, np.nan, -2.5], ml_dtypes.float8_e5m2))
    assert to_int.tolist() == [127, -128, 0, -2]                         # saturating, NaN -> 0
    assert e4m3fn == PT.F8E4M3FN.dtype


# ----------------------------------------------------------------------------
# Arithmetic
# ----------------------------------------------------------------------------

def _binary_module(pt: PT, ops, n: int, result_types=None) -> str:
    lines = [f"  a = {pt.value}[{n}] parameter(0)", f"  b = {pt.value}[{n}] parameter(1)"]
    shapes = []
    for k, op in enumerate(ops):
        rt = (result_types or {}).get(op, pt)
        arity = 1 if op in UNARY else 2
        args = "a" if arity == 1 else "a, b"
        extra = ", direction=LT" if op == "compare" else ""
        lines.append(f"  r{k} = {rt.value}[{n}] {op}({args}){extra}")
        shapes.append(f"{rt.value}[{n}]")
    lines.append(f"  ROOT t = ({', '.join(shapes)}) tuple({', '.join(f'r{k}' for k in range(len(ops)))})")
    return "HloModule ops\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


UNARY = {"negate", "abs", "not", "popcnt", "count-leading-zeros", "sign", "sqrt", "exponential", "floor",
         "round-nearest-even", "is-finite"}
INT_OPS = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or",
           "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic", "power", "negate",
           "not", "popcnt", "count-leading-zeros", "sign", "compare"]


@pytest.mark.parametrize("pt", SUB_BYTE_INTS, ids=lambda t: t.value)
def test_sub_byte_integer_arithmetic_wraps_at_its_width(pt):
    values = every_value(pt)
    a, b = np.repeat(values, len(values)), np.tile(values, len(values))
    text = _binary_module(pt, INT_OPS, len(a), {"compare": PT.PRED})
    got, ref = jit_and_eval(text, a, b)
    for op, g, r in zip(INT_OPS, got, ref):
        assert_same_bits(g, r, op)
    # by hand, on the 4-bit patterns
    if pt is PT.S4:
        res = dict(zip(INT_OPS, got))
        i = lambda x, y: (x & 15) * 16 + (y & 15)                      # noqa: E731
        assert int(res["add"][i(7, 1)]) == -8                            # wraps
        assert int(res["multiply"][i(-8, -1)]) == -8
        assert int(res["divide"][i(-8, -1)]) == -8                       # INT_MIN / -1
        assert int(res["divide"][i(5, 0)]) == -1                         # x / 0: all bits set
        assert int(res["shift-right-logical"][i(-1, 1)]) == 7
        assert int(res["shift-right-arithmetic"][i(-8, 9)]) == -1        # oversized amount
        assert int(res["shift-left"][i(1, 4)]) == 0
        assert int(res["popcnt"][i(-1, 0)]) == 4
        assert int(res["count-leading-zeros"][i(1, 0)]) == 3
    # ml_dtypes stores the low bits, the upper ones zero
    assert all(int(v) < (1 << pt.bit_width) for r in got[:-1] for v in r.view(np.uint8))


FLOAT_OPS = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "negate", "abs",
             "sign", "sqrt", "exponential", "floor", "round-nearest-even", "compare", "is-finite"]


@pytest.mark.parametrize("pt", NARROW_FLOATS, ids=lambda t: t.value)
def test_narrow_float_arithmetic_is_computed_in_f32(pt):
    values = every_value(pt)
    if pt.bit_width == 8:        # every pair is 65536; a sample of the pairs is plenty
        rng = np.random.default_rng(5)
        a, b = values[rng.integers(0, 256, 8192)], values[rng.integers(0, 256, 8192)]
    else:
        a, b = np.repeat(values, len(values)), np.tile(values, len(values))
    text = _binary_module(pt, FLOAT_OPS, len(a), {"compare": PT.PRED, "is-finite": PT.PRED})
    got, ref = jit_and_eval(text, a, b)
    wide = a.astype(np.float32), b.astype(np.float32)
    for op, g, r in zip(FLOAT_OPS, got, ref):
        if g.dtype == np.bool_:
            assert_same_bits(g, r, op)
        elif op in ("exponential", "power"):   # libm or polynomial vs numpy: one rounding apart
            gw, rw = g.astype(np.float64), r.astype(np.float64)
            close = np.isclose(gw, rw, rtol=0.3, equal_nan=True) | (np.isinf(gw) & np.isinf(rw))
            if pt is PT.F8E8M0FNU:   # no zero: an f32 result that underflows is its NaN,
                close |= np.isnan(gw) | np.isnan(rw)   # the evaluator's f64 one is not
            assert close.all(), op
        else:
            assert_same_values(g, r, op)
    added = (wide[0] + wide[1]).astype(pt.dtype)       # f32 add, rounded once to the type
    assert_same_values(got[0], added, "add")


def test_data_movement_and_reductions_on_narrow_types():
    text = """HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f8e4m3fn[4,6] parameter(0)
  q = s4[4,6] parameter(1)
  t = f8e4m3fn[6,4] transpose(p), dimensions={1,0}
  s = f8e4m3fn[2,4] slice(t), slice={[1:3], [0:4]}
  r = s4[24] reshape(q)
  c = s4[48] concatenate(r, r), dimensions={0}
  w = f32[4,6] convert(p)
  z = f32[] constant(0)
  sum = f32[4] reduce(w, z), dimensions={1}, to_apply=add
  ROOT out = (f8e4m3fn[2,4], s4[48], f32[4]) tuple(s, c, sum)
}
"""
    rng = np.random.default_rng(0)
    p = rng.standard_normal((4, 6)).astype(ml_dtypes.float8_e4m3fn)
    q = rng.integers(-8, 8, (4, 6)).astype(ml_dtypes.int4)
    got, ref = jit_and_eval(text, p, q)
    for g, r in zip(got, ref):
        assert_same_bits(g, r)
    assert_same_bits(got[0], p.T[1:3, 0:4].copy())
    np.testing.assert_array_equal(got[1].astype(int), np.concatenate([q.ravel(), q.ravel()]).astype(int))


def test_bitcast_convert_between_same_width_narrow_types():
    text = """HloModule m
ENTRY e {
  p = f8e5m2[256] parameter(0)
  q = f4e2m1fn[16] parameter(1)
  a = u8[256] bitcast-convert(p)
  b = s4[16] bitcast-convert(q)
  c = f8e4m3fn[256] bitcast-convert(a)
  ROOT t = (u8[256], s4[16], f8e4m3fn[256]) tuple(a, b, c)
}
"""
    p, q = every_value(PT.F8E5M2), every_value(PT.F4E2M1FN)
    got, ref = jit_and_eval(text, p, q)
    for g, r in zip(got, ref):
        assert_same_bits(g, r)
    assert got[0].tolist() == list(range(256))
    assert got[1].view(np.uint8).tolist() == list(range(16))
