"""emit_elementwise and the element-type helpers, JIT-compiled and run on numpy arrays.

The harness builds ``void f(i64 n, ptr a, ptr b, ptr c, ptr out)`` that loops over
``i in [0, n)``: load element i of each input, emit the op, store element i of out.
Expectations follow docs/numerics.md.
"""
from __future__ import annotations

import ctypes
import math

import ml_dtypes
import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir

import xlac

from xlac.codegen import math_approx, scalar_ops
from xlac.codegen.scalar_ops import declare_libm, emit_elementwise
from xlac.codegen.types import constant, load_element, memory_type, register_type, store_element
from xlac.errors import UnsupportedError
from xlac.shape import PrimitiveType as PT

# Reference computations cast NaN/inf/huge values on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BF16 = np.dtype(ml_dtypes.bfloat16)
SIGNED = [PT.S8, PT.S16, PT.S32, PT.S64]
UNSIGNED = [PT.U8, PT.U16, PT.U32, PT.U64]

# ----------------------------------------------------------------------------
# Harness
# ----------------------------------------------------------------------------

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()

_I64 = ir.IntType(64)
_PTR = ir.PointerType()
_TM = llvm.Target.from_default_triple().create_target_machine(
    cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=2)
_CACHE: dict = {}


def _build(emit, in_types, out_type):
    """Module text of f(n, a, b, c, out) applying ``emit(builder, values)`` elementwise."""
    module = ir.Module(name="scalar_ops_test")
    module.triple = llvm.get_process_triple()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_I64, _PTR, _PTR, _PTR, _PTR]), "f")
    n, *ptrs = fn.args
    entry, body, done = (fn.append_basic_block(s) for s in ("entry", "body", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(_I64, 0)), body, done)
    b.position_at_end(body)
    i = b.phi(_I64)
    i.add_incoming(ir.Constant(_I64, 0), entry)
    values = [load_element(b, b.gep(ptrs[k], [i], source_etype=memory_type(t)), t)
              for k, t in enumerate(in_types)]
    result = emit(b, values)
    store_element(b, result, b.gep(ptrs[3], [i], source_etype=memory_type(out_type)), out_type)
    i_next = b.add(i, ir.Constant(_I64, 1))
    i.add_incoming(i_next, b.block)
    b.cbranch(b.icmp_signed("<", i_next, n), body, done)
    b.position_at_end(done)
    b.ret_void()
    return str(module)


def _jit(key, emit, in_types, out_type, optimize=True):
    key = (key, tuple(in_types), out_type, optimize, math_approx.exact_math(), scalar_ops.has_f16c())
    if key not in _CACHE:
        mod = llvm.parse_assembly(_build(emit, in_types, out_type))
        mod.verify()
        if optimize:
            pb = llvm.create_pass_builder(_TM, llvm.PipelineTuningOptions(speed_level=3))
            pb.getModulePassManager().run(mod, pb)
        engine = llvm.create_mcjit_compiler(mod, _TM)
        engine.finalize_object()
        proto = ctypes.CFUNCTYPE(None, ctypes.c_int64, *[ctypes.c_void_p] * 4)
        _CACHE[key] = (engine, proto(engine.get_function_address("f")))
    return _CACHE[key][1]


def run(opcode, in_types, out_type, *arrays, optimize=True, **attrs):
    """Run ``opcode`` elementwise over numpy arrays (converted to ``in_types``)."""
    arrays = [wrap(a, t) if isinstance(a, list) and t.is_integral    # exact for big u64
              else np.ascontiguousarray(np.asarray(a).astype(t.dtype)) for a, t in zip(arrays, in_types)]
    n = len(arrays[0])
    assert all(len(a) == n for a in arrays)
    out = np.zeros(n, dtype=out_type.dtype)

    def emit(b, values):
        return emit_elementwise(b, opcode, values, list(in_types), out_type, attrs)

    key = (opcode, tuple(sorted(attrs.items())))
    f = _jit(key, emit, in_types, out_type, optimize)
    ptrs = [a.ctypes.data for a in arrays] + [0] * (3 - len(arrays)) + [out.ctypes.data]
    f(n, *ptrs)
    return out


def unary(opcode, t, x, out=None, **kw):
    return run(opcode, [t], out or t, x, **kw)


def binary(opcode, t, x, y, out=None, **kw):
    return run(opcode, [t, t], out or t, x, y, **kw)


def wrap(values, pt):
    """Python ints -> numpy array of ``pt``, wrapped two's complement."""
    bits = pt.bit_width
    u = np.array([v & ((1 << bits) - 1) for v in values], dtype=f"u{bits // 8}")
    return u.view(pt.dtype)


def edge_ints(pt):
    info = np.iinfo(pt.dtype)
    vals = {info.min, info.min + 1, -7, -2, -1, 0, 1, 2, 3, 7, info.max - 1, info.max}
    return sorted(v for v in vals if info.min <= v <= info.max)


def round_once(x, dtype):
    """``x`` rounded once (to nearest even) to f16/bf16.

    numpy and ml_dtypes go through f32 from f64/integers (ml_dtypes rounds twice);
    rounding to f32 *to odd* first makes that second rounding exact.
    """
    f = np.asarray(x).astype(np.float64)
    r = f.astype(np.float32)
    nudge = (r.astype(np.float64) != f) & ~np.isnan(f) & ((r.view(np.uint32) & 1) == 0)
    r = np.where(nudge, np.nextafter(r, np.where(f > r, np.float32(np.inf), np.float32(-np.inf))), r)
    return r.astype(np.float32).astype(dtype)


def same_floats(got, ref, nan_sign=False):
    """Equal as floats: NaN where NaN, and the same sign of zero.

    ``nan_sign``: NaNs must also keep their sign (conversions do; arithmetic that
    makes a new NaN may not match numpy's).
    """
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    gf, rf = got.astype(np.float64), ref.astype(np.float64)
    nan = np.isnan(rf)
    np.testing.assert_array_equal(np.isnan(gf), nan)
    if nan_sign:
        np.testing.assert_array_equal(np.signbit(gf[nan]), np.signbit(rf[nan]))
    np.testing.assert_array_equal(gf[~nan], rf[~nan])
    np.testing.assert_array_equal(np.signbit(gf[~nan]), np.signbit(rf[~nan]))


# ----------------------------------------------------------------------------
# types.py
# ----------------------------------------------------------------------------

def test_memory_and_register_types():
    assert str(memory_type(PT.PRED)) == "i8" and str(register_type(PT.PRED)) == "i1"
    assert str(memory_type(PT.BF16)) == "i16" and str(memory_type(PT.F16)) == "half"
    assert str(register_type(PT.U32)) == "i32" and str(register_type(PT.F64)) == "double"
    assert str(memory_type(PT.C64)) == "{float, float}"
    assert str(memory_type(PT.C128)) == "{double, double}"
    with pytest.raises(UnsupportedError):
        memory_type(PT.TUPLE)


@pytest.mark.parametrize("pt, value", [
    (PT.F32, 0.1), (PT.F32, float("nan")), (PT.F32, -float("inf")), (PT.F64, 0.1),
    (PT.F16, 0.1), (PT.BF16, 0.1), (PT.BF16, float("-inf")), (PT.S8, -128), (PT.U8, 255),
    (PT.U64, 2 ** 64 - 1), (PT.S64, -(2 ** 63)), (PT.PRED, True), (PT.C64, 1.5 - 0.1j),
    (PT.C128, -2 + 1e-300j), (PT.F32, np.float32(3.4e38)),
])
def test_constant(pt, value):
    f = _jit(("constant", pt, repr(value)), lambda b, vals: constant(pt, value), [], pt)
    out = np.zeros(2, dtype=pt.dtype)
    f(2, 0, 0, 0, out.ctypes.data)
    expected = np.full(2, value, dtype=pt.dtype)
    if np.isnan(value):
        assert np.isnan(out.astype(np.float64)).all()
    else:   # bit-exact, so -0.0, bf16 rounding and f32 rounding all count
        np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))


def test_pred_load_treats_nonzero_bytes_as_true():
    raw = np.array([0, 1, 2, 255], np.uint8).view(np.bool_)
    out = run("not", [PT.PRED], PT.PRED, raw)
    assert out.view(np.uint8).tolist() == [1, 0, 0, 0]


def test_declare_libm_reuses_declarations():
    def emit(b, vals):
        x = emit_elementwise(b, "exponential", vals, [PT.F32], PT.F32)
        y = emit_elementwise(b, "exponential", [x], [PT.F32], PT.F32)
        z = emit_elementwise(b, "tanh", [y], [PT.F32], PT.F32)
        return emit_elementwise(b, "tanh", [z], [PT.F32], PT.F32)
    f = _jit("exp-exp", emit, [PT.F32], PT.F32)
    x = np.array([0.0, -1.0], np.float32)
    out = np.zeros(2, np.float32)
    f(2, x.ctypes.data, 0, 0, out.ctypes.data)
    np.testing.assert_allclose(out, np.tanh(np.tanh(np.exp(np.exp(x)))), rtol=1e-6)
    m = ir.Module()
    fnty = ir.FunctionType(ir.FloatType(), [ir.FloatType()])
    assert declare_libm(m, "expf", fnty) is declare_libm(m, "expf", fnty)
    with pytest.raises(TypeError):
        declare_libm(m, "expf", ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]))


# ----------------------------------------------------------------------------
# Integers
# ----------------------------------------------------------------------------

def _c_div(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


@pytest.mark.parametrize("pt", [PT.S8, PT.S32, PT.S64, PT.U8, PT.U32, PT.U64])
@pytest.mark.parametrize("optimize", [True, False])
def test_divide_and_remainder_never_trap(pt, optimize):
    vals = edge_ints(pt)
    xs = [x for x in vals for _ in vals]
    ys = [y for _ in vals for y in vals]
    int_min = np.iinfo(pt.dtype).min
    div, rem = [], []
    for x, y in zip(xs, ys):
        if y == 0:
            div.append(-1)
            rem.append(x)
        elif pt.is_signed_int and x == int_min and y == -1:
            div.append(int_min)
            rem.append(0)
        else:
            div.append(_c_div(x, y))
            rem.append(x - y * _c_div(x, y))
    np.testing.assert_array_equal(binary("divide", pt, xs, ys, optimize=optimize), wrap(div, pt))
    np.testing.assert_array_equal(binary("remainder", pt, xs, ys, optimize=optimize), wrap(rem, pt))


@pytest.mark.parametrize("pt", SIGNED + UNSIGNED)
@pytest.mark.parametrize("optimize", [True, False])
def test_shifts(pt, optimize):
    bw = pt.bit_width
    amounts = [0, 1, 2, bw - 1, bw, bw + 5, -1, -bw, 2 ** (bw - 1) - 1]
    xs = [x for x in edge_ints(pt) for _ in amounts]
    ys = [a for _ in edge_ints(pt) for a in amounts]
    mask = (1 << bw) - 1
    shl, lshr, ashr = [], [], []
    for x, y in zip(xs, ys):
        a, xu = y & mask, x & mask
        xs_ = xu - (1 << bw) if xu >> (bw - 1) else xu          # signed reading of the bits
        shl.append(0 if a >= bw else xu << a)
        lshr.append(0 if a >= bw else xu >> a)
        ashr.append(xs_ >> min(a, bw - 1))
    ys_arr = wrap(ys, pt)
    np.testing.assert_array_equal(binary("shift-left", pt, xs, ys_arr, optimize=optimize), wrap(shl, pt))
    np.testing.assert_array_equal(binary("shift-right-logical", pt, xs, ys_arr, optimize=optimize),
                                  wrap(lshr, pt))
    np.testing.assert_array_equal(binary("shift-right-arithmetic", pt, xs, ys_arr, optimize=optimize),
                                  wrap(ashr, pt))


@pytest.mark.parametrize("pt", [PT.S8, PT.S32, PT.S64, PT.U8, PT.U32, PT.U64])
def test_integer_power(pt):
    bases = [b for b in [-3, -2, -1, 0, 1, 2, 3, 7, 100] if pt.is_signed_int or b >= 0]
    exps = [e for e in [-5, -2, -1, 0, 1, 2, 3, 7, 8, 31, 63, 64, 65] if pt.is_signed_int or e >= 0]
    xs = [b for b in bases for _ in exps]
    ys = [e for _ in bases for e in exps]
    ref = []
    for b_, e in zip(xs, ys):
        if e >= 0:
            ref.append(pow(b_, e, 1 << pt.bit_width))
        else:
            ref.append(1 if b_ == 1 else (-1 if e % 2 else 1) if b_ == -1 else 0)
    np.testing.assert_array_equal(binary("power", pt, wrap(xs, pt), wrap(ys, pt)), wrap(ref, pt))


@pytest.mark.parametrize("pt", SIGNED + UNSIGNED)
def test_integer_unary(pt):
    xs = edge_ints(pt)
    bw = pt.bit_width
    x = np.array(xs, pt.dtype)
    np.testing.assert_array_equal(unary("negate", pt, x), wrap([-v for v in xs], pt))
    np.testing.assert_array_equal(unary("abs", pt, x), wrap([abs(v) for v in xs], pt))
    np.testing.assert_array_equal(unary("sign", pt, x), wrap([(v > 0) - (v < 0) for v in xs], pt))
    np.testing.assert_array_equal(unary("not", pt, x), wrap([~v for v in xs], pt))
    np.testing.assert_array_equal(unary("popcnt", pt, x),
                                  wrap([bin(v & ((1 << bw) - 1)).count("1") for v in xs], pt))
    np.testing.assert_array_equal(unary("count-leading-zeros", pt, x),
                                  wrap([bw - (v & ((1 << bw) - 1)).bit_length() for v in xs], pt))


@pytest.mark.parametrize("pt", [PT.S8, PT.S32, PT.U8, PT.U64])
def test_integer_binary_wraps_and_compares(pt):
    vals = edge_ints(pt)
    xs = np.array([x for x in vals for _ in vals], pt.dtype)
    ys = np.array([y for _ in vals for y in vals], pt.dtype)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(binary("add", pt, xs, ys), xs + ys)
        np.testing.assert_array_equal(binary("subtract", pt, xs, ys), xs - ys)
        np.testing.assert_array_equal(binary("multiply", pt, xs, ys), xs * ys)
    np.testing.assert_array_equal(binary("maximum", pt, xs, ys), np.maximum(xs, ys))
    np.testing.assert_array_equal(binary("minimum", pt, xs, ys), np.minimum(xs, ys))
    np.testing.assert_array_equal(binary("and", pt, xs, ys), xs & ys)
    np.testing.assert_array_equal(binary("or", pt, xs, ys), xs | ys)
    np.testing.assert_array_equal(binary("xor", pt, xs, ys), xs ^ ys)
    for d, f in [("EQ", np.equal), ("NE", np.not_equal), ("GE", np.greater_equal),
                 ("GT", np.greater), ("LE", np.less_equal), ("LT", np.less)]:
        np.testing.assert_array_equal(binary("compare", pt, xs, ys, PT.PRED, direction=d), f(xs, ys))
    lo, hi = np.full_like(xs, -2 if pt.is_signed_int else 2), np.full_like(xs, 7)
    np.testing.assert_array_equal(run("clamp", [pt] * 3, pt, lo, xs, hi), np.clip(xs, lo, hi))


def test_compare_signedness_is_the_element_types():
    # As XLA's elemental emitter (is_signed from the operand's element type)
    # and the evaluator: the type= attribute does not change an integer compare.
    x = np.array([-1, 1], np.int32)
    y = np.array([1, -1], np.int32)
    assert binary("compare", PT.S32, x, y, PT.PRED, direction="LT", type="UNSIGNED").tolist() == [True, False]
    assert binary("compare", PT.S32, x, y, PT.PRED, direction="LT", type="SIGNED").tolist() == [True, False]


def test_pred_ops():
    p = np.array([False, False, True, True])
    q = np.array([False, True, False, True])
    assert binary("and", PT.PRED, p, q).tolist() == (p & q).tolist()
    assert binary("or", PT.PRED, p, q).tolist() == (p | q).tolist()
    assert binary("xor", PT.PRED, p, q).tolist() == (p ^ q).tolist()
    assert unary("not", PT.PRED, p).tolist() == (~p).tolist()
    assert binary("maximum", PT.PRED, p, q).tolist() == (p | q).tolist()
    assert binary("compare", PT.PRED, p, q, PT.PRED, direction="LT").tolist() == (p < q).tolist()
    assert binary("compare", PT.PRED, p, q, PT.PRED, direction="EQ").tolist() == (p == q).tolist()
    for pt in (PT.PRED, PT.S32, PT.F32, PT.BF16, PT.C64):
        a = np.array([1, 2, 3, 4]).astype(pt.dtype)
        b_ = np.array([5, 6, 7, 8]).astype(pt.dtype)
        got = run("select", [PT.PRED, pt, pt], pt, q, a, b_)
        np.testing.assert_array_equal(got, np.where(q, a, b_))


# ----------------------------------------------------------------------------
# Conversions
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("src", [PT.F16, PT.BF16, PT.F32, PT.F64])
@pytest.mark.parametrize("dst", [PT.S8, PT.S16, PT.S32, PT.S64, PT.U8, PT.U16, PT.U32, PT.U64])
def test_float_to_int_saturates(src, dst):
    """Up to 32 bits: clamped in the float type, converted, truncated (the
    maximum of s32/u32, which f32 does not hold, put back by a select);
    64 bits: the significand shifted in integers (``_float_to_int64``).
    Every value next to a bound, and random ones of every magnitude."""
    info = np.iinfo(dst.dtype)
    vals = [0.0, -0.0, 0.5, -0.5, 1.9, -1.9, 100.7, -100.7, 127.5, 128.0, -128.5, -129.0, 255.9,
            256.0, 3e4, -3e4, 32767.5, -32768.5, 65504.0, 65535.5, 2.0 ** 31, -(2.0 ** 31), 2147483520.0,
            2147483647.5, -2147483904.0, 4294967040.0, 4294967295.5, 2.0 ** 32, 2.0 ** 63, -(2.0 ** 63),
            2.0 ** 64, 1e30, -1e30, float("inf"), float("-inf"), float("nan"), -float("nan"),
            2.0 ** 52 + 0.5, -(2.0 ** 52) - 0.5, 2.0 ** 53 + 2, 9.2233715e18, -9.2233715e18, 1.8446743e19,
            9223372036854774784.0, 18446744073709549568.0, 1e-40, 0.99999994, -0.99999994, -1.0000001]
    rng = np.random.default_rng(len(vals))
    vals += list(rng.standard_normal(300) * 10.0 ** rng.uniform(-2, 20, 300))
    x = np.array(vals, np.float64).astype(src.dtype)       # what actually goes in
    ref = []
    for v in x.astype(np.float64):
        if math.isnan(v):
            ref.append(0)
        elif v >= info.max:
            ref.append(info.max)
        elif v <= info.min:
            ref.append(info.min)
        else:
            ref.append(int(v))                               # truncates toward zero
    np.testing.assert_array_equal(unary("convert", src, x, dst), np.array(ref, dst.dtype))


@pytest.mark.parametrize("src", [PT.PRED, PT.S8, PT.S16, PT.S32, PT.S64, PT.U8, PT.U16, PT.U32, PT.U64])
@pytest.mark.parametrize("dst", [PT.PRED, PT.S8, PT.S32, PT.S64, PT.U8, PT.U32, PT.U64,
                                 PT.F16, PT.BF16, PT.F32, PT.F64, PT.C64])
def test_convert_from_integers(src, dst):
    if src is PT.PRED:
        x = np.array([False, True, True, False])
    else:
        info = np.iinfo(src.dtype)
        x = np.array(edge_ints(src) + [info.max // 3, info.min // 5, 2049, 65519, 65520, 100000]
                     ).clip(info.min, info.max).astype(src.dtype)
        if src.is_signed_int:
            x = np.concatenate([x, np.array([2 ** 24 + 2 ** 16 + 1]).clip(info.min, info.max).astype(src.dtype)])
    got = unary("convert", src, x, dst)
    if dst is PT.PRED:
        ref = x != 0
    elif dst.is_integral:
        ref = x.astype(dst.dtype)                         # numpy: same C casts
    else:
        ref = round_once(x, dst.dtype) if dst in (PT.F16, PT.BF16) else x.astype(dst.dtype)
    if dst.is_float:
        same_floats(got, ref)
    else:
        np.testing.assert_array_equal(got, ref)


def _special_floats(dtype):
    vals = [0.0, -0.0, 1.0, -1.0, 1.5, 2.5, 3.5, -2.5, 1e-3, 65504.0, 65520.0, 7e4, 1e-5, 6e-8,
            3e-8, 2.98e-8, 1e-40, 3.4e38, 3.5e38, 1e300, -1e300, 1e-310, float("inf"),
            float("-inf"), float("nan")]
    return np.array(vals, np.float64).astype(dtype)


@pytest.mark.parametrize("src", [PT.F16, PT.BF16, PT.F32, PT.F64])
@pytest.mark.parametrize("dst", [PT.F16, PT.BF16, PT.F32, PT.F64, PT.PRED, PT.C64, PT.C128])
def test_convert_between_floats(src, dst):
    rng = np.random.default_rng(0)
    x = np.concatenate([_special_floats(src.dtype),
                        (rng.standard_normal(200) * np.float64(10.0) ** rng.integers(-12, 12, 200))
                        .astype(src.dtype)])
    got = unary("convert", src, x, dst)
    if dst is PT.PRED:
        np.testing.assert_array_equal(got, x.astype(np.float64) != 0)
        return
    if dst in (PT.F16, PT.BF16):
        ref = round_once(x, dst.dtype)
    else:
        ref = x.astype(np.float32).astype(dst.dtype) if src is PT.BF16 else x.astype(dst.dtype)
    if dst.is_complex:
        same_floats(got.real, ref.real, nan_sign=True)
        same_floats(got.imag, ref.imag, nan_sign=True)
    else:
        same_floats(got, ref, nan_sign=True)


def test_conversions_to_bf16_round_once():
    # Via f32 these would round twice and land on the even neighbour below.
    x = np.array([1 + 2.0 ** -8 + 2.0 ** -30, -(1 + 2.0 ** -8 + 2.0 ** -30)])
    assert unary("convert", PT.F64, x, PT.BF16).astype(np.float64).tolist() == [1 + 2 ** -7, -(1 + 2 ** -7)]
    i = np.array([2 ** 24 + 2 ** 16 + 1], np.int32)
    assert unary("convert", PT.S32, i, PT.BF16).astype(np.float64).tolist() == [2 ** 24 + 2 ** 17]


@pytest.mark.parametrize("src, dst", [(PT.F32, PT.BF16), (PT.F32, PT.F16), (PT.F64, PT.F16),
                                      (PT.F64, PT.BF16)])
def test_narrowing_random_bit_patterns(src, dst):
    rng = np.random.default_rng(1)
    ubits = f"u{src.byte_size}"
    x = rng.integers(0, np.iinfo(ubits).max, 200_000, dtype=ubits, endpoint=True).view(src.dtype)
    if src is PT.F64:   # concentrate on the f16/bf16 range, subnormals included
        x = np.concatenate([x, rng.uniform(-7e4, 7e4, 50_000), rng.uniform(-1e-4, 1e-4, 50_000),
                            rng.uniform(-1e-38, 1e-38, 50_000)])
    got = unary("convert", src, x, dst)
    same_floats(got, round_once(x, dst.dtype), nan_sign=True)
    # Exact halfway cases: the bit below the kept mantissa set, nothing below it.
    ties = (rng.integers(0, 1 << 15, 20_000, dtype=np.uint32) << 16 | 0x8000).view(np.float32)
    if src is PT.F32 and dst is PT.BF16:
        same_floats(unary("convert", src, ties, dst), ties.astype(BF16), nan_sign=True)


def test_f32_to_bf16_every_high_half_at_its_rounding_edges():
    # Every bf16 value's f32 neighbourhood where rounding decides: exact, just
    # above, just below and at the tie, the largest low half (carries into the
    # exponent: to inf past the largest finite value); f32 subnormals included.
    high = np.arange(1 << 16, dtype=np.uint32) << 16
    low = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    x = (high[:, None] | low[None, :]).ravel().view(np.float32)
    got = unary("convert", PT.F32, x, PT.BF16).view(np.uint16)
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], x[~nan].astype(BF16).view(np.uint16))
    # NaN: quieted, sign and top payload bits kept.
    np.testing.assert_array_equal(got[nan], (x[nan].view(np.uint32) >> 16 | 0x40).astype(np.uint16))


@pytest.mark.parametrize("src", [PT.F16, PT.BF16])
def test_widening_every_16_bit_pattern(src):
    x = np.arange(1 << 16, dtype=np.uint16).view(src.dtype)
    for dst in (PT.F32, PT.F64):
        same_floats(unary("convert", src, x, dst), x.astype(dst.dtype), nan_sign=True)


def test_f16_conversions_the_same_bits_with_and_without_f16c(monkeypatch):
    """f16 <-> f32 is F16C's ``vcvtph2ps``/``vcvtps2ph`` where the target has
    F16C, integer operations elsewhere: the same bits either way, NaN payloads
    included (every f16 widened; every f16 value, the midpoints between
    neighbours and their f32 neighbours, f32 subnormals, overflow and NaNs
    narrowed), and an f16 op rounds the same."""
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    f = np.sort(h[np.isfinite(h)].astype(np.float32))
    mid = ((f[1:].astype(np.float64) + f[:-1]) / 2).astype(np.float32)
    nans = (np.array([0x7F800001, 0x7FC00000, 0x7F802000, 0x7FBFFFFF], np.uint32)).view(np.float32)
    x = np.concatenate([f, mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf)),
                        np.arange(1, 1 << 10, dtype=np.uint32).view(np.float32), nans,
                        np.array([65504, 65519.99, 65520, 1e10, np.inf], np.float32)])
    x = np.concatenate([x, -x])
    results = {}
    for f16c in (True, False):
        monkeypatch.setattr(scalar_ops, "has_f16c", lambda target=None, f16c=f16c: f16c)
        results[f16c] = (unary("convert", PT.F16, h, PT.F32), unary("convert", PT.F32, x, PT.F16),
                         binary("multiply", PT.F16, h, h[::-1].copy()))
    for with_f16c, without in zip(results[True], results[False]):
        np.testing.assert_array_equal(with_f16c.view(np.uint32 if with_f16c.itemsize == 4 else np.uint16),
                                      without.view(np.uint32 if without.itemsize == 4 else np.uint16))
    widened, narrowed, product = results[True]
    same_floats(widened, h.astype(np.float32), nan_sign=True)
    same_floats(narrowed, x.astype(np.float16), nan_sign=True)
    same_floats(product, (h.astype(np.float32) * h[::-1].astype(np.float32)).astype(np.float16))


def test_convert_complex():
    z = np.array([1.5 - 2.5j, -0.0 + 0j, 0 + 1j, np.nan + 0j, 3e38 + 1j], np.complex128)
    np.testing.assert_array_equal(unary("convert", PT.C128, z, PT.C64), z.astype(np.complex64))
    np.testing.assert_array_equal(unary("convert", PT.C64, z, PT.C128), z.astype(np.complex64).astype(np.complex128))
    same_floats(unary("convert", PT.C64, z, PT.F32), z.real.astype(np.float32))
    same_floats(unary("convert", PT.C128, z, PT.BF16), round_once(z.real, BF16))
    np.testing.assert_array_equal(unary("convert", PT.C64, z, PT.S32), np.array([1, 0, 0, 0, 2 ** 31 - 1]))
    np.testing.assert_array_equal(unary("convert", PT.C64, z, PT.PRED), [True, False, True, True, True])
    np.testing.assert_array_equal(unary("convert", PT.S32, np.array([-3, 7]), PT.C64),
                                  np.array([-3, 7], np.complex64))


@pytest.mark.parametrize("src, dst", [(PT.F32, PT.S32), (PT.S32, PT.F32), (PT.F32, PT.U32),
                                      (PT.F64, PT.S64), (PT.F16, PT.U16), (PT.BF16, PT.S16),
                                      (PT.S16, PT.BF16), (PT.U16, PT.F16), (PT.F16, PT.BF16), (PT.S8, PT.U8)])
def test_bitcast_convert(src, dst):
    x = np.array([0, 1, -1.5, 3e3, float("inf")]).astype(src.dtype) if src.is_float \
        else np.array([0, 1, -1, 0x3F80, 0x7FC0]).astype(src.dtype)
    np.testing.assert_array_equal(unary("bitcast-convert", src, x, dst).view(np.uint8), x.view(np.uint8))


def test_bitcast_convert_rejects_different_widths():
    with pytest.raises(UnsupportedError, match="different bit widths"):
        unary("bitcast-convert", PT.F32, np.zeros(1), PT.S16)


# ----------------------------------------------------------------------------
# reduce-precision
# ----------------------------------------------------------------------------

def _reduce_precision_ref(x, exponent_bits, mantissa_bits):
    """numpy model of the spec (XLA's algorithm): RNE mantissa, overflow -> inf,
    below the reduced normal range -> signed zero, NaN kept."""
    finfo = np.finfo(x.dtype)
    nbits, src_m = finfo.bits, finfo.nmant
    src_e = nbits - 1 - src_m
    u = np.dtype(f"u{nbits // 8}").type
    bits = x.view(f"u{nbits // 8}").copy()
    if mantissa_bits < src_m:
        drop = src_m - mantissa_bits
        lsb = (bits >> u(drop)) & u(1)
        bits = ((bits + u((1 << (drop - 1)) - 1) + lsb) >> u(drop)) << u(drop)
    if exponent_bits < src_e:
        bias = (1 << (src_e - 1)) - 1
        rbias = (1 << (exponent_bits - 1)) - 1
        exp_mask = u(((1 << src_e) - 1) << src_m)
        e = bits & exp_mask
        sign = bits & u(1 << (nbits - 1))
        bits = np.where(e > u((bias + rbias) << src_m), sign | exp_mask, bits)
        bits = np.where(e <= u((bias - rbias) << src_m), sign, bits)
    out = bits.view(x.dtype)
    return np.where(np.isnan(x), x, out)


@pytest.mark.parametrize("pt", [PT.F32, PT.F64])
@pytest.mark.parametrize("eb, mb", [(8, 7), (5, 10), (11, 52), (8, 23), (4, 3), (5, 2), (1, 0), (3, 30), (9, 0)])
def test_reduce_precision(pt, eb, mb):
    rng = np.random.default_rng(2)
    x = np.concatenate([_special_floats(pt.dtype), rng.standard_normal(2000).astype(pt.dtype) * 100,
                        (rng.standard_normal(2000) * 1e-6).astype(pt.dtype)])
    got = unary("reduce-precision", pt, x, exponent_bits=eb, mantissa_bits=mb)
    same_floats(got, _reduce_precision_ref(x, eb, mb))


def test_reduce_precision_matches_bf16_and_f16_rounding():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(5000) * 1000).astype(np.float32)
    same_floats(unary("reduce-precision", PT.F32, x, exponent_bits=8, mantissa_bits=7),
                x.astype(BF16).astype(np.float32))
    normal = x[np.abs(x) >= 2.0 ** -14]          # f16 subnormals are flushed by reduce-precision
    same_floats(unary("reduce-precision", PT.F32, normal, exponent_bits=5, mantissa_bits=10),
                normal.astype(np.float16).astype(np.float32))


@pytest.mark.parametrize("pt", [PT.F16, PT.BF16])
def test_reduce_precision_small_floats(pt):
    x = np.arange(1 << 16, dtype=np.uint16).view(pt.dtype)
    got = unary("reduce-precision", pt, x, exponent_bits=4, mantissa_bits=3)
    ref = _reduce_precision_ref(x.astype(np.float32), 4, 3).astype(pt.dtype)
    same_floats(got, ref)


# ----------------------------------------------------------------------------
# Floats
# ----------------------------------------------------------------------------

def _total_order_key(x):
    bits = x.view(f"i{x.dtype.itemsize}").astype(np.int64)
    return np.where(bits < 0, -(bits & ((1 << (8 * x.dtype.itemsize - 1)) - 1)) - 1, bits)


@pytest.mark.parametrize("pt", [PT.F32, PT.F64, PT.F16, PT.BF16])
def test_compare_total_order(pt):
    nb = pt.bit_width
    ubits = f"u{nb // 8}"
    neg_nan = np.array([np.nan], pt.dtype).view(ubits) | np.array([1 << (nb - 1)], ubits)
    vals = np.concatenate([neg_nan.view(pt.dtype),
                           np.array([-np.inf, -1.0, -0.0, 0.0, 1.0, np.inf, np.nan], pt.dtype)])
    x = np.repeat(vals, len(vals))
    y = np.tile(vals, len(vals))
    kx, ky = _total_order_key(x), _total_order_key(y)
    assert (np.diff(_total_order_key(vals)) > 0).all()          # the spec's order
    for d, f in [("EQ", np.equal), ("NE", np.not_equal), ("GE", np.greater_equal),
                 ("GT", np.greater), ("LE", np.less_equal), ("LT", np.less)]:
        got = binary("compare", pt, x, y, PT.PRED, direction=d, type="TOTALORDER")
        np.testing.assert_array_equal(got, f(kx, ky), err_msg=d)
        ieee = binary("compare", pt, x, y, PT.PRED, direction=d)
        np.testing.assert_array_equal(ieee, f(x.astype(np.float64), y.astype(np.float64)), err_msg=d)


@pytest.mark.parametrize("pt", [PT.F32, PT.F64, PT.F16, PT.BF16])
def test_rounding_sign_and_nan_rules(pt):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 3.7, -3.7, 0.0, -0.0, np.inf, -np.inf,
                  np.nan], np.float64).astype(pt.dtype)
    xf = x.astype(np.float64)
    trunc = np.trunc(xf)
    afz = np.where(np.abs(xf - trunc) >= 0.5, trunc + np.sign(xf), trunc)
    same_floats(unary("round-nearest-afz", pt, x), afz.astype(pt.dtype))
    same_floats(unary("round-nearest-even", pt, x), np.round(xf).astype(pt.dtype))
    same_floats(unary("ceil", pt, x), np.ceil(xf).astype(pt.dtype))
    same_floats(unary("floor", pt, x), np.floor(xf).astype(pt.dtype))
    same_floats(unary("sign", pt, x), np.where((xf == 0) | np.isnan(xf), xf, np.sign(xf)).astype(pt.dtype))
    same_floats(unary("abs", pt, x), np.abs(x))
    same_floats(unary("negate", pt, x), -x)
    np.testing.assert_array_equal(unary("is-finite", pt, x, PT.PRED), np.isfinite(xf))
    same_floats(unary("real", pt, x), x)
    same_floats(unary("imag", pt, x), np.zeros_like(x))
    y = np.roll(x, 3)
    same_floats(binary("maximum", pt, x, y), np.maximum(xf, y.astype(np.float64)).astype(pt.dtype))
    same_floats(binary("minimum", pt, x, y), np.minimum(xf, y.astype(np.float64)).astype(pt.dtype))
    lo, hi = np.full_like(x, -1), np.full_like(x, 2)
    same_floats(run("clamp", [pt] * 3, pt, lo, x, hi),
                np.minimum(np.maximum(xf, -1.0), 2.0).astype(pt.dtype))


@pytest.mark.parametrize("pt", [PT.F16, PT.BF16])
@pytest.mark.parametrize("opcode, f", [("add", np.add), ("subtract", np.subtract),
                                       ("multiply", np.multiply), ("divide", np.divide),
                                       ("remainder", np.fmod), ("maximum", np.maximum)])
def test_small_float_arithmetic_rounds_after_each_op(pt, opcode, f):
    rng = np.random.default_rng(4)
    x = np.concatenate([_special_floats(pt.dtype), (rng.standard_normal(3000) * 300).astype(pt.dtype)])
    y = np.concatenate([np.roll(_special_floats(pt.dtype), 5), (rng.standard_normal(3000) * 3).astype(pt.dtype)])
    with np.errstate(all="ignore"):
        ref = f(x.astype(np.float32), y.astype(np.float32)).astype(pt.dtype)
    same_floats(binary(opcode, pt, x, y), ref)


@pytest.mark.parametrize("pt", [PT.F32, PT.F64])
def test_float_binary_exact_ops(pt):
    rng = np.random.default_rng(5)
    x = np.concatenate([_special_floats(pt.dtype), rng.standard_normal(500).astype(pt.dtype) * 50])
    y = np.concatenate([np.roll(_special_floats(pt.dtype), 7), rng.standard_normal(500).astype(pt.dtype)])
    with np.errstate(all="ignore"):
        for opcode, f in [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                          ("divide", np.divide), ("remainder", np.fmod), ("maximum", np.maximum),
                          ("minimum", np.minimum)]:
            same_floats(binary(opcode, pt, x, y), f(x, y))
        same_floats(unary("sqrt", pt, x), np.sqrt(x))


_F32_EPS, _F64_EPS = float(np.finfo(np.float32).eps), float(np.finfo(np.float64).eps)


def _logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


_UNARY_MATH = [
    # opcode, reference on f64, input range
    ("exponential", np.exp, (-20, 20)),
    ("exponential-minus-one", np.expm1, (-5, 5)),
    ("log", np.log, (1e-3, 1e3)),
    ("log-plus-one", np.log1p, (-0.9, 10)),
    ("sine", np.sin, (-10, 10)),
    ("cosine", np.cos, (-10, 10)),
    ("tan", np.tan, (-1.5, 1.5)),
    ("tanh", np.tanh, (-10, 10)),
    ("erf", np.vectorize(math.erf), (-4, 4)),
    ("cbrt", np.cbrt, (-1000, 1000)),
    ("sqrt", np.sqrt, (0, 1e4)),
    ("rsqrt", lambda x: 1.0 / np.sqrt(x), (1e-3, 1e4)),
    ("logistic", _logistic, (-30, 30)),
]


@pytest.fixture(params=[False, True], ids=["approx", "libm"])
def math_mode(request, monkeypatch):
    """Both code paths of exp, log, tanh, ...: the inline approximations
    (math_approx) and libm (XLAC_EXACT_MATH=1, the reference)."""
    if request.param:
        monkeypatch.setenv(math_approx.EXACT_MATH_ENV, "1")
    else:
        monkeypatch.delenv(math_approx.EXACT_MATH_ENV, raising=False)
    return request.param


@pytest.mark.parametrize("pt", [PT.F32, PT.F64])
@pytest.mark.parametrize("opcode, ref, span", _UNARY_MATH, ids=[u[0] for u in _UNARY_MATH])
def test_transcendentals(pt, opcode, ref, span, math_mode):
    rng = np.random.default_rng(6)
    x = rng.uniform(*span, 2000).astype(pt.dtype)
    if opcode in ("exponential-minus-one", "log-plus-one", "sine", "tan", "tanh", "erf", "cbrt"):
        x = np.concatenate([x, np.array([1e-20, -1e-10, 1e-6, 0.0, -0.0], pt.dtype)])
    got = unary(opcode, pt, x)
    expected = ref(x.astype(np.float64))
    eps = _F32_EPS if pt is PT.F32 else _F64_EPS
    # ~2 ulp of the result, and of the argument's scale where the result crosses zero.
    np.testing.assert_allclose(got, expected, rtol=2.5 * eps, atol=eps * 2 ** -30)
    if opcode in ("sine", "cosine"):
        np.testing.assert_allclose(got, expected, atol=2 * eps)


@pytest.mark.parametrize("pt", [PT.F32, PT.F64])
def test_binary_math(pt):
    rng = np.random.default_rng(7)
    eps = _F32_EPS if pt is PT.F32 else _F64_EPS
    y = rng.uniform(-5, 5, 2000).astype(pt.dtype)
    x = rng.uniform(-5, 5, 2000).astype(pt.dtype)
    np.testing.assert_allclose(binary("atan2", pt, y, x), np.arctan2(y.astype(np.float64), x), rtol=2.5 * eps)
    base = np.abs(x) + pt.dtype.type(0.1)
    np.testing.assert_allclose(binary("power", pt, base, y), np.power(base.astype(np.float64), y), rtol=2.5 * eps)


def test_math_special_values(math_mode):
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, -1.0], np.float32)
    with np.errstate(all="ignore"):
        for opcode, f in [("exponential", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("tanh", np.tanh),
                          ("exponential-minus-one", np.expm1), ("log-plus-one", np.log1p),
                          ("logistic", _logistic), ("erf", np.vectorize(math.erf))]:
            same_floats(unary(opcode, PT.F32, x), f(x.astype(np.float64)).astype(np.float32))


@pytest.mark.parametrize("pt", [PT.F16, PT.BF16])
@pytest.mark.parametrize("opcode, ref", [("exponential", np.exp), ("tanh", np.tanh), ("log", np.log),
                                         ("logistic", _logistic)])
def test_small_float_transcendentals(pt, opcode, ref, math_mode):
    x = np.linspace(0.01, 8, 500).astype(pt.dtype)
    got = unary(opcode, pt, x).astype(np.float64)
    expected = ref(x.astype(np.float64))
    ulp = 2.0 ** -10 if pt is PT.F16 else 2.0 ** -7
    np.testing.assert_allclose(got, expected, rtol=ulp)


# ----------------------------------------------------------------------------
# Complex
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("pt", [PT.C64, PT.C128])
def test_complex_ops(pt):
    rng = np.random.default_rng(8)
    z = (rng.standard_normal(500) + 1j * rng.standard_normal(500)).astype(pt.dtype) * 3
    w = (rng.standard_normal(500) + 1j * rng.standard_normal(500)).astype(pt.dtype)
    rtol = 1e-5 if pt is PT.C64 else 1e-13
    real = pt.component_type
    for opcode, f in [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                      ("divide", np.divide)]:
        np.testing.assert_allclose(binary(opcode, pt, z, w), f(z, w), rtol=rtol)
    np.testing.assert_array_equal(unary("negate", pt, z), -z)
    np.testing.assert_allclose(unary("abs", pt, z, real), np.abs(z), rtol=rtol)
    np.testing.assert_allclose(unary("exponential", pt, z), np.exp(z), rtol=rtol)
    np.testing.assert_allclose(unary("log", pt, z), np.log(z), rtol=rtol)
    np.testing.assert_allclose(unary("sqrt", pt, z), np.sqrt(z), rtol=rtol)
    np.testing.assert_array_equal(unary("real", pt, z, real), z.real)
    np.testing.assert_array_equal(unary("imag", pt, z, real), z.imag)
    np.testing.assert_array_equal(run("complex", [real, real], pt, z.real, w.imag), z.real + 1j * w.imag)
    u = np.concatenate([z[:10], z[:10], np.array([complex(z[0].real, 9)], pt.dtype)])
    v = np.concatenate([z[:10], w[:10], z[:1]])
    np.testing.assert_array_equal(binary("compare", pt, u, v, PT.PRED, direction="EQ"), u == v)
    np.testing.assert_array_equal(binary("compare", pt, u, v, PT.PRED, direction="NE"), u != v)


def test_complex_sqrt_edges():
    z = np.array([0j, -4 + 0j, 4 + 0j, -4 - 0j, 1j, -1j, -3 + 4j, -3 - 4j], np.complex128)
    np.testing.assert_allclose(unary("sqrt", PT.C128, z), np.sqrt(z), rtol=1e-15, atol=1e-300)
    got = unary("sqrt", PT.C128, z)
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(np.sqrt(z).imag))


@pytest.mark.parametrize("pt", [PT.C64, PT.C128])
def test_complex_exp_edges(pt):
    """XLA's complex exp (what jax computes): a real argument keeps a 0 imaginary
    part (not inf * 0 = NaN), and e^a overflowing alone does not make the result inf."""
    inf, nan = np.inf, np.nan
    big = 89.0 if pt is PT.C64 else 710.0                      # e^big overflows, e^big cos(b) need not
    z = np.array([complex(inf, 0), complex(-inf, 0), complex(inf, -0.0), complex(1e20, 0), complex(nan, 0),
                  complex(inf, 1), complex(-inf, 1), complex(0, 0), complex(big, 1.5707963)], pt.dtype)
    got = unary("exponential", pt, z)
    t = pt.component_type.dtype.type
    root, b = np.exp(t(big / 2)), t(1.5707963)
    want = np.array([complex(inf, 0), 0, complex(inf, 0), complex(inf, 0), complex(nan, 0),
                     complex(inf, inf), 0, 1, complex(root * np.cos(b) * root, root * np.sin(b) * root)], pt.dtype)
    np.testing.assert_allclose(got.real, want.real, rtol=1e-5)
    np.testing.assert_allclose(got.imag, want.imag, rtol=1e-5)
    assert np.isfinite(got[-1].real) and not np.isnan(got[:5].imag).any()


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------

def _emit_only(opcode, types, result, **attrs):
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [register_type(t) for t in types]), "g")
    b = ir.IRBuilder(fn.append_basic_block())
    return emit_elementwise(b, opcode, list(fn.args), types, result, attrs)


@pytest.mark.parametrize("opcode, types, result, attrs", [
    ("remainder", [PT.C64, PT.C64], PT.C64, {}),
    ("maximum", [PT.C64, PT.C64], PT.C64, {}),
    ("cbrt", [PT.C128], PT.C128, {}),
    ("compare", [PT.C64, PT.C64], PT.PRED, {"direction": "LT"}),
    ("sqrt", [PT.S32], PT.S32, {}),
    ("and", [PT.F32, PT.F32], PT.F32, {}),
    ("subtract", [PT.PRED, PT.PRED], PT.PRED, {}),
    ("shift-left", [PT.F32, PT.F32], PT.F32, {}),
    ("bitcast-convert", [PT.F64], PT.S32, {}),
    ("stochastic-convert", [PT.F32, PT.U32], PT.S8, {}),
    ("broadcast", [PT.F32], PT.F32, {}),
    ("no-such-op", [PT.F32], PT.F32, {}),
])
def test_unsupported(opcode, types, result, attrs):
    with pytest.raises(UnsupportedError, match=f"not supported yet: {opcode}"):
        _emit_only(opcode, types, result, **attrs)


def test_complex_unsupported_names_the_type():
    with pytest.raises(UnsupportedError, match=r"remainder \(for c64\)"):
        _emit_only("remainder", [PT.C64, PT.C64], PT.C64)


def test_wrong_operand_types_are_rejected():
    with pytest.raises(ValueError):
        _emit_only("add", [PT.S32, PT.U32], PT.S32)
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.FloatType()]), "g")
    b = ir.IRBuilder(fn.append_basic_block())
    with pytest.raises(TypeError):
        emit_elementwise(b, "negate", list(fn.args), [PT.F64], PT.F64, {})
    with pytest.raises(ValueError, match="missing attribute 'direction'"):
        _emit_only("compare", [PT.F32, PT.F32], PT.PRED)
    with pytest.raises(ValueError, match="mantissa_bits"):
        _emit_only("reduce-precision", [PT.F32], PT.F32, exponent_bits=8)


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("ty, kind, a, b", [
    ("pred", "SIGNED", [True, False, True], [False, True, True]),
    ("pred", "UNSIGNED", [True, False, True], [False, True, True]),
    ("s32", "SIGNED", [-1, 2, 0], [1, -2, 0]),
    ("u8", "UNSIGNED", [255, 1, 7], [1, 255, 7]),
])
def test_integer_compare_follows_the_element_type(ty, kind, a, b, optimize):
    # Found by the differential fuzzer: with type=SIGNED a pred compare ran as
    # a signed i1 compare (true = -1 < false).  Signedness is the element
    # type's, as in the evaluator and XLA's elemental emitter (shape inference
    # refuses SIGNED on unsigned integers and UNSIGNED on signed ones).
    dt = {"pred": np.bool_, "s32": np.int32, "u8": np.uint8}[ty]
    text = f"""HloModule m
ENTRY e {{
  p = {ty}[3] parameter(0)
  q = {ty}[3] parameter(1)
  ROOT c = pred[3] compare(p, q), direction=LT, type={kind}
}}"""
    x, y = np.array(a, dt), np.array(b, dt)
    np.testing.assert_array_equal(xlac.jit(text, optimize=optimize)(x, y), x < y)
    np.testing.assert_array_equal(xlac.evaluate(text, x, y), x < y)


@pytest.mark.parametrize("op, fn", [("add", np.logical_or), ("multiply", np.logical_and)])
def test_pred_add_and_multiply(op, fn):
    # Found by the builder fuzzer: shape inference accepts them, the JIT refused
    # them ("not supported yet: add (for pred)").
    p = np.array([False, False, True, True])
    q = np.array([False, True, False, True])
    assert binary(op, PT.PRED, p, q).tolist() == fn(p, q).tolist()
    text = f"HloModule m\nENTRY e {{\n  a = pred[4] parameter(0)\n  b = pred[4] parameter(1)\n" \
           f"  ROOT r = pred[4] {op}(a, b)\n}}"
    np.testing.assert_array_equal(xlac.jit(text)(p, q), fn(p, q))
    np.testing.assert_array_equal(xlac.evaluate(text, p, q), fn(p, q))


@pytest.mark.parametrize("ty,dt", [("u32", np.uint32), ("s16", np.int16), ("u8", np.uint8), ("s64", np.int64)])
def test_shifts_by_a_broadcast_amount(ty, dt):
    """A rotation by a run-time scalar broadcast over a vectorised loop (as
    jax's Threefry rounds): oversized amounts give 0 for the logical
    shifts, and the loop's lanes agree with the scalar tail."""
    bw = np.dtype(dt).itemsize * 8
    text = f"""HloModule r
ENTRY e {{
  x = {ty}[1001] parameter(0)
  s = {ty}[] parameter(1)
  w = {ty}[] constant({bw})
  sb = {ty}[1001] broadcast(s), dimensions={{}}
  r = {ty}[] subtract(w, s)
  rb = {ty}[1001] broadcast(r), dimensions={{}}
  l = {ty}[1001] shift-left(x, sb)
  h = {ty}[1001] shift-right-logical(x, rb)
  ROOT o = {ty}[1001] or(l, h)
}}"""
    info = np.iinfo(dt)
    x = np.random.default_rng(0).integers(info.min, info.max, 1001, dtype=dt, endpoint=True)
    f = xlac.jit(text)
    mask = (1 << bw) - 1
    for s in (0, 1, 5, bw - 1, bw, bw + 3):
        xu = x.astype(np.uint64) & np.uint64(mask) if bw < 64 else x.view(np.uint64)
        r = (bw - s) & mask

        def sh(v, a, left):
            if a >= bw:
                return np.zeros_like(v)
            return (v << np.uint64(a)) & np.uint64(mask) if left else v >> np.uint64(a)
        want = (sh(xu, s, True) | sh(xu, r, False)).astype(np.uint64)
        got = np.asarray(f(x, dt(s) if s <= info.max else dt(s - (1 << bw)))).view(np.dtype(f"u{bw // 8}"))
        np.testing.assert_array_equal(got.astype(np.uint64), want, err_msg=f"{ty} by {s}")


@pytest.mark.parametrize("dt", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_max_min_with_a_constant_are_the_spec_s_bit_for_bit(dt, op):
    """``maximum``/``minimum`` of an array and a broadcast constant (a relu)
    are a compare and a select (``scalar_ops.constant_max_min``): NaN where
    the array is NaN, and -0 below +0 whichever side the constant is on,
    vectorised (4099 elements) and scalar (5), bit for bit as the evaluator."""
    npdt = {"f16": np.float16, "bf16": BF16, "f32": np.float32, "f64": np.float64}[dt]
    values = np.array([np.nan, -np.inf, -1.5, -0.0, 0.0, 2.5, np.inf, 1.0, -1.0], np.float64)
    rng = np.random.default_rng(7)
    for n in (5, 4099):
        x = values[rng.integers(0, len(values), n)].astype(npdt)
        for k in ("0", "-0", "1", "-1", "inf", "-inf"):
            for lhs, rhs in (("p", "c"), ("c", "p")):
                text = f"""HloModule m
ENTRY e {{
  p = {dt}[{n}] parameter(0)
  k = {dt}[] constant({k})
  c = {dt}[{n}] broadcast(k), dimensions={{}}
  ROOT r = {dt}[{n}] {op}({lhs}, {rhs})
}}"""
                got = np.asarray(xlac.jit(text)(x))
                want = np.asarray(xlac.evaluate(text, x))
                assert got.tobytes() == want.tobytes(), (k, lhs, n, got, want)
