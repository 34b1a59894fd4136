"""The inline approximations of xlac/codegen/math_approx.py against libm in higher
precision (float64 libm for f32, long double for f64).

Each function is compiled in a loop over an array (the way the kernels use it) for
the host CPU, and for a CPU without FMA (``x86-64-v2``: there ``llvm.fmuladd`` is a
multiply and an add), then run over a sweep of the whole float range: every 2048th
f32 bit pattern (about two million values: both signs, denormals, inf, NaN), dense
samples where the function is not constant, and the thresholds (overflow, underflow,
the points where the algorithms switch). Errors are in ulp of the result type at the
reference; denormal results are held to an absolute bound instead.
The libm path (``XLAC_EXACT_MATH=1``) is compiled the same way and must agree on
every special value. Vectorisation is checked on kernels produced by ``xlac.jit``.
"""
from __future__ import annotations

import ctypes
import math
import re

import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir

import xlac
from xlac.codegen import math_approx
from xlac.codegen.jit import parse_and_optimize
from xlac.codegen.loops import LIBCALL_INTRINSICS
from xlac.codegen.target import host_target_machine
from xlac.codegen.scalar_ops import emit_elementwise
from xlac.codegen.types import load_element, memory_type, store_element
from xlac.shape import PrimitiveType as PT

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

_I64 = ir.IntType(64)
_PTR = ir.PointerType()

# opcode -> (math_approx name, float64 reference)
_OPCODES = {
    "exponential": ("exp", np.exp),
    "exponential-minus-one": ("expm1", np.expm1),
    "log": ("log", np.log),
    "log-plus-one": ("log1p", np.log1p),
    "tanh": ("tanh", np.tanh),
    "logistic": ("logistic", lambda x: _logistic64(x)),
    "erf": ("erf", lambda x: _erf64(x)),
    "sine": ("sin", np.sin),
    "cosine": ("cos", np.cos),
}


def _logistic64(x):
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


_erf_vec = np.frompyfunc(math.erf, 1, 1)
_OPCODES_BY_NAME = {}       # filled below


def _erf64(x):
    return _erf_vec(x.astype(np.float64)).astype(np.float64)


_OPCODES_BY_NAME.update({name: fn for name, fn in _OPCODES.values()})


# ----------------------------------------------------------------------------
# Harness: void f(i64 n, ptr in, ptr out) applying one op elementwise
# ----------------------------------------------------------------------------

_MACHINES = {}
_CACHE = {}


def _machine(cpu):
    if cpu not in _MACHINES:
        _MACHINES[cpu] = host_target_machine() if cpu == "host" else \
            host_target_machine(cpu=cpu, features="")
    return _MACHINES[cpu]


def _module(opcode, pt, native=False):
    module = ir.Module(name=f"math_{opcode}")
    module.triple = llvm.get_process_triple()
    if native:
        math_approx.use_native_scaling(module)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_I64, _PTR, _PTR]), "f")
    n, src, dst = fn.args
    entry, body, done = (fn.append_basic_block(s) for s in ("entry", "body", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(_I64, 0)), body, done)
    b.position_at_end(body)
    i = b.phi(_I64)
    i.add_incoming(ir.Constant(_I64, 0), entry)
    x = load_element(b, b.gep(src, [i], source_etype=memory_type(pt)), pt)
    y = emit_elementwise(b, opcode, [x], [pt], pt)
    store_element(b, y, b.gep(dst, [i], source_etype=memory_type(pt)), pt)
    i_next = b.add(i, ir.Constant(_I64, 1))
    i.add_incoming(i_next, b.block)
    b.cbranch(b.icmp_signed("<", i_next, n), body, done)
    b.position_at_end(done)
    b.ret_void()
    return module


def _compile(opcode, pt, exact=False, cpu="host", native=False):
    key = (opcode, pt, exact, cpu, native)
    if key not in _CACHE:
        with pytest.MonkeyPatch.context() as mp:
            if exact:
                mp.setenv(math_approx.EXACT_MATH_ENV, "1")
            else:
                mp.delenv(math_approx.EXACT_MATH_ENV, raising=False)
            module = _module(opcode, pt, native)
        tm = _machine(cpu)
        ref = parse_and_optimize(module, tm)
        engine = llvm.create_mcjit_compiler(ref, tm)
        engine.finalize_object()
        proto = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
        _CACHE[key] = (engine, proto(engine.get_function_address("f")), str(ref))
    return _CACHE[key]


def apply(opcode, pt, x, exact=False, cpu="host", native=False):
    x = np.ascontiguousarray(x, dtype=pt.dtype)
    out = np.empty_like(x)
    _compile(opcode, pt, exact, cpu, native)[1](len(x), x.ctypes.data, out.ctypes.data)
    return out


# ----------------------------------------------------------------------------
# Inputs and error measure
# ----------------------------------------------------------------------------

def _f32_sweep():
    bits = np.arange(0, 2 ** 32, 2048, dtype=np.uint64).astype(np.uint32)
    bits = bits + np.uint32(np.random.default_rng(0).integers(0, 2048))   # not only round patterns
    return bits.view(np.float32)


def _specials(dtype):
    info = np.finfo(dtype)
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, info.max, -info.max, info.tiny, -info.tiny,
         info.smallest_subnormal, -info.smallest_subnormal, 1.0, -1.0, 0.5, -0.5, 2.0, 0.625,
         -0.625, 1e-30, -1e-30]
    return np.array(v, dtype)


def _around(points, dtype, count=64):
    """``count`` neighbours (in ulp steps) on each side of each point."""
    out = []
    for p in points:
        x = np.array([p], dtype)
        lo, hi = x.copy(), x.copy()
        for _ in range(count):
            lo = np.nextafter(lo, dtype.type(-np.inf))
            hi = np.nextafter(hi, dtype.type(np.inf))
            out += [lo[0], hi[0]]
        out.append(x[0])
    return np.array(out, dtype)


# Where results are not constant, and where the algorithms switch branches or clamp.
_DENSE = {
    "exp": (-105.0, 90.0),
    "expm1": (-18.0, 90.0),
    "log": (0.0, 4.0),
    "log1p": (-1.0, 4.0),
    "tanh": (-10.0, 10.0),
    "logistic": (-105.0, 20.0),
    "erf": (-4.5, 4.5),
    "sin": (-1e3, 1e3),
    "cos": (-1e3, 1e3),
}
_THRESHOLDS = {
    "exp": [88.72283935546875, 88.7228, 89.0, -87.33654, -103.97208, -104.0, -745.1332, 709.7827, 0.0],
    "expm1": [-17.5, -17.33, 0.3466, -0.3466, 17.328, 16.6, 88.72283935546875, 2 ** -25, -2 ** -25],
    "log": [1.0, math.sqrt(0.5), math.sqrt(2), 2.0 ** -126, 2.0 ** -1022, 0.5, 2.0],
    "log1p": [-1.0, 0.0, math.sqrt(0.5) - 1, math.sqrt(2) - 1, 2 ** -25, -2 ** -25, 2.0 ** 24,
              2.0 ** 25, 1.0],
    "tanh": [0.625, -0.625, 9.01, 9.02, -9.02, 19.06, 0.0],
    "logistic": [0.0, -87.33654, -88.72284, -103.27893, 16.6, 36.7],
    "erf": [1.0, -1.0, 2.0, 3.0, 3.92, -3.92, 3.8325, 0.0],
    # the switch to the integer reduction, multiples of pi/2 near and far
    "sin": [2.0 ** 20, -2.0 ** 20, math.pi / 4, math.pi / 2, math.pi, 3 * math.pi / 2, 1e5 * math.pi,
            102940.390625, 1.0e38, 2.0 ** 17, 2.0 ** 127],
    "cos": [2.0 ** 20, -2.0 ** 20, math.pi / 4, math.pi / 2, math.pi, 3 * math.pi / 2, 1e5 * math.pi,
            102940.390625, 1.0e38, 2.0 ** 17, 2.0 ** 127],
}


def _inputs(name, dtype, n_dense=300_000):
    rng = np.random.default_rng(1)
    lo, hi = _DENSE[name]
    parts = [_specials(dtype), _around(_THRESHOLDS[name], dtype),
             rng.uniform(lo, hi, n_dense).astype(dtype),
             # near zero, on a log scale, both signs
             (np.exp2(rng.uniform(-40, 0, n_dense // 4)) * rng.choice([-1, 1], n_dense // 4)).astype(dtype)]
    if dtype == np.float32:
        parts.append(_f32_sweep())
    else:
        bits = rng.integers(0, 2 ** 63, 600_000, dtype=np.uint64) * np.uint64(2) \
            + rng.integers(0, 2, 600_000, dtype=np.uint64)                      # both signs
        parts.append(bits.view(np.float64))
    return np.concatenate(parts)


def reference(name, x):
    """The function in higher precision: float64 for f32 inputs, x87 long double
    (64-bit significand) for f64 inputs."""
    wide = np.float64 if x.dtype == np.float32 else np.longdouble
    with np.errstate(all="ignore"):
        return _OPCODES_BY_NAME[name](x.astype(wide))


def ulp_errors(got, ref, dtype):
    """(max ulp error over normal results, max error of denormal results in units
    of the smallest denormal); NaN/inf and signs must match exactly (asserted).

    ``ref`` is the higher-precision reference; an ulp is that of the result type at
    ``|ref|`` (so a correctly rounded result is within 0.5).
    """
    wide = ref.dtype
    got = got.astype(wide)
    info = np.finfo(dtype)
    rounded = ref.astype(dtype).astype(wide)
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan)
    inf = np.isinf(rounded)
    np.testing.assert_array_equal(got[inf], rounded[inf])
    finite = ~nan & ~inf
    assert np.all(np.isfinite(got[finite])), got[finite][~np.isfinite(got[finite])][:5]
    zero = finite & (ref == 0)
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(ref[zero]))
    normal = finite & (np.abs(ref) >= wide.type(info.tiny))
    exponent = np.floor(np.log2(np.abs(ref[normal])))
    ulp = np.exp2(exponent - info.nmant)
    err = np.abs(got[normal] - ref[normal]) / ulp
    denormal = finite & ~normal
    derr = np.abs(got[denormal] - ref[denormal]) / wide.type(info.smallest_subnormal)
    return (float(err.max()) if err.size else 0.0), (float(derr.max()) if derr.size else 0.0)


# Bounds: what the approximations achieve, with a little room. Measured maxima
# (f32 exhaustively over all 2**32 inputs, erf every 16th; f64 on these samples):
# f32 exp 0.98, expm1 1.44, log 0.84, log1p 1.39, tanh 5.52 (6.2 without FMA; a rational
# function, as XLA:CPU's, which measures 4.7 and 6.4), logistic 1.97, erf 1.03 (the same
# without FMA: a rational function evaluated in f64); f64 exp 0.95, expm1 1.83, log 0.78, log1p 1.28, tanh 2.04,
# logistic 1.80; f32 sin and cos 0.501 (exhaustively; without FMA every 256th input:
# evaluated in f64 and rounded once). The corpus tolerances (rtol >= 2e-5) are hundreds of ulp.
_MAX_ULP = {
    np.float32: {"exp": 1.5, "expm1": 2.0, "log": 1.5, "log1p": 2.0, "tanh": 6.5, "logistic": 2.5,
                 "erf": 1.5, "sin": 0.6, "cos": 0.6},
    np.float64: {"exp": 1.5, "expm1": 2.5, "log": 1.5, "log1p": 2.0, "tanh": 2.5, "logistic": 2.5},
}

_CASES = [(op, pt) for op in _OPCODES for pt in (PT.F32, PT.F64)
          if math_approx.supports(_OPCODES[op][0], ir.FloatType() if pt is PT.F32 else ir.DoubleType())]


_SCALED = [(op, pt) for op, pt in _CASES if _OPCODES[op][0] in ("exp", "expm1", "logistic")]


@pytest.mark.parametrize("opcode, pt", _SCALED, ids=[f"{o}-{p.value}" for o, p in _SCALED])
def test_native_scaling_gives_the_same_bits(opcode, pt):
    """On an AVX-512 host the JIT's modules scale by 2**n with llvm.ldexp
    (vscalefps): the same bits as the two portable multiplies, over the
    sweep, the thresholds, the denormal range and the special values."""
    if not math_approx.use_native_scaling(ir.Module()):
        pytest.skip("the host has no AVX-512: native scaling is off")
    assert "llvm.ldexp" in str(_module(opcode, pt, native=True))
    assert "vscalef" in _machine("host").emit_assembly(parse_and_optimize(_module(opcode, pt, True),
                                                                          _machine("host")))
    name = _OPCODES[opcode][0]
    x = _inputs(name, pt.dtype, n_dense=100_000)
    bits = np.uint32 if pt is PT.F32 else np.uint64
    np.testing.assert_array_equal(apply(opcode, pt, x, native=True).view(bits), apply(opcode, pt, x).view(bits))


@pytest.mark.parametrize("cpu", ["host", "x86-64-v2"])
@pytest.mark.parametrize("opcode, pt", _CASES, ids=[f"{o}-{p.value}" for o, p in _CASES])
def test_ulp_error_over_the_whole_range(opcode, pt, cpu):
    name = _OPCODES[opcode][0]
    dtype = pt.dtype
    x = _inputs(name, dtype, n_dense=300_000 if cpu == "host" else 60_000)
    if cpu != "host":
        x = x[::4]
    ref = reference(name, x)
    got = apply(opcode, pt, x, cpu=cpu)
    worst, denormal = ulp_errors(got, ref, dtype)
    assert worst <= _MAX_ULP[dtype.type][name], (opcode, pt, cpu, worst)
    assert denormal <= 1.0, (opcode, pt, cpu, denormal)


@pytest.mark.parametrize("opcode, pt", _CASES, ids=[f"{o}-{p.value}" for o, p in _CASES])
def test_special_values_match_libm(opcode, pt):
    """The approximation and the libm path agree exactly on special values."""
    dtype = pt.dtype
    info = np.finfo(dtype)
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.max, -info.max, info.tiny, -info.tiny,
                  info.smallest_subnormal, -info.smallest_subnormal, 1e6, -1e6, 1e30, -1e30, -1.0, -2.0],
                 dtype)
    got = apply(opcode, pt, x)
    ref = apply(opcode, pt, x, exact=True)
    g, r = got.astype(np.float64), ref.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(r))
    ok = ~np.isnan(r)
    exact = ok & (np.isinf(r) | (r == 0) | (np.abs(r) == 1))
    np.testing.assert_array_equal(g[exact], r[exact])
    np.testing.assert_array_equal(np.signbit(g[exact]), np.signbit(r[exact]))


def test_documented_special_values():
    f = lambda op, v: apply(op, PT.F32, np.array(v, np.float32))   # noqa: E731
    inf, nan = np.inf, np.nan
    np.testing.assert_array_equal(f("exponential", [inf, -inf, 100.0, -200.0]), [inf, 0.0, inf, 0.0])
    assert np.isnan(f("exponential", [nan]))[0]
    assert f("exponential", [-100.0])[0] == np.float32(np.exp(-100.0))        # a denormal, exact
    np.testing.assert_array_equal(f("log", [0.0, -0.0, inf, 1.0]), [-inf, -inf, inf, 0.0])
    assert np.isnan(f("log", [-1.0, -inf, nan])).all()
    np.testing.assert_array_equal(f("tanh", [inf, -inf, 20.0, -20.0]), [1.0, -1.0, 1.0, -1.0])
    assert np.signbit(f("tanh", [-0.0])[0]) and f("tanh", [-0.0])[0] == 0
    np.testing.assert_array_equal(f("logistic", [inf, -inf, 200.0, -200.0, 0.0]), [1.0, 0.0, 1.0, 0.0, 0.5])
    np.testing.assert_array_equal(f("erf", [inf, -inf, 10.0, -10.0]), [1.0, -1.0, 1.0, -1.0])
    for op in ("exponential-minus-one", "log-plus-one", "erf", "tanh"):
        out = f(op, [-0.0, 0.0])
        assert out[0] == 0 and np.signbit(out[0]) and not np.signbit(out[1]), op
    np.testing.assert_array_equal(f("exponential-minus-one", [inf, -inf, 1e-30]),
                                  [inf, -1.0, np.float32(1e-30)])
    np.testing.assert_array_equal(f("log-plus-one", [-1.0, inf, 1e-30]), [-inf, inf, np.float32(1e-30)])
    assert np.isnan(f("log-plus-one", [-2.0, -inf, nan])).all()


@pytest.mark.parametrize("cpu", ["host", "x86-64-v2"])
def test_f32_tanh_stays_in_range_and_is_exact_where_it_must_be(cpu):
    """The rational tanh never leaves [-1, 1] (its roundings near the clamp could
    give 1 + 2**-23), is +-1 from 9.02 on and returns tiny and denormal x exactly
    (P(0) = Q(0) = 1)."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-12, 12, 200_000), _around([9.02, -9.02, 8.0, -8.0], np.dtype(np.float32), 2000)])
    y = apply("tanh", PT.F32, x.astype(np.float32), cpu=cpu)
    assert np.all(np.abs(y) <= 1)
    big = np.abs(x.astype(np.float32)) >= np.float32(9.02)
    np.testing.assert_array_equal(y[big], np.sign(x[big]))
    tiny = np.concatenate([np.float32(2.0) ** -np.arange(13, 150, dtype=np.float32), [1e-45, 1e-40]]).astype(np.float32)
    tiny = np.concatenate([tiny, -tiny])
    np.testing.assert_array_equal(apply("tanh", PT.F32, tiny, cpu=cpu).view(np.uint32), tiny.view(np.uint32))


def test_switch_to_libm(monkeypatch):
    """XLAC_EXACT_MATH=1 emits the libm calls; by default no call is left."""
    for exact in (False, True):
        if exact:
            monkeypatch.setenv(math_approx.EXACT_MATH_ENV, "1")
        else:
            monkeypatch.delenv(math_approx.EXACT_MATH_ENV, raising=False)
        assert math_approx.exact_math() is exact
        text = str(_module("tanh", PT.F32))
        assert ("tanhf" in text) is exact
    monkeypatch.setenv(math_approx.EXACT_MATH_ENV, "0")
    assert not math_approx.exact_math()


def _instruction_intrinsic(call_line):
    """Whether the call is to an LLVM intrinsic that x86 runs as instructions
    (``llvm.fmuladd``, ``llvm.usub.sat``, ...), not one that becomes a libm call."""
    m = re.search(r"@llvm\.(\w+)", call_line)
    return bool(m) and m.group(1) not in LIBCALL_INTRINSICS


def test_no_libcalls_even_without_fma_or_sse41():
    """On a baseline x86-64 (no FMA, no SSE4.1 rounding) the code calls nothing."""
    for opcode, pt in _CASES:
        text = _compile(opcode, pt, cpu="x86-64")[2]
        calls = [line for line in text.splitlines() if " call " in line and not _instruction_intrinsic(line)]
        assert not calls, (opcode, pt, calls[:3])
        asm = _machine("x86-64").emit_assembly(llvm.parse_assembly(text))
        assert "call" not in asm, (opcode, pt)


# ----------------------------------------------------------------------------
# Vectorisation in the kernels xlac.jit produces
# ----------------------------------------------------------------------------

_LIBM_NAMES = ("expf", "expm1f", "logf", "log1pf", "tanhf", "erff", "sinf", "cosf", "exp", "log", "tanh",
               "erf", "expm1", "log1p", "sin", "cos")


@pytest.mark.parametrize("opcode", list(_OPCODES))
def test_jit_kernels_are_vectorised(opcode, monkeypatch):
    monkeypatch.delenv(math_approx.EXACT_MATH_ENV, raising=False)
    hlo = f"""HloModule vec_{opcode.replace('-', '_')}

ENTRY main {{
  p = f32[4096] parameter(0)
  ROOT r = f32[4096] {opcode}(p)
}}
"""
    exe = xlac.jit(hlo)
    text = exe.optimized_llvm_ir
    assert re.search(r"<(4|8|16|32|64) x float>", text), opcode
    for name in _LIBM_NAMES:
        assert f"@{name}(" not in text, (opcode, name)
    assert "@llvm.exp." not in text and "@llvm.log." not in text
    x = np.linspace(-3, 3, 4096, dtype=np.float32)
    if opcode == "log":
        x = np.abs(x) + np.float32(0.01)
    if opcode == "log-plus-one":
        x = np.abs(x)
    with np.errstate(all="ignore"):
        ref = _OPCODES[opcode][1](x.astype(np.float64))
    np.testing.assert_allclose(exe(x), ref, rtol=4e-7, atol=1e-30)


@pytest.mark.parametrize("ty", ["bf16", "f16"])
def test_narrow_erf_in_f32_rounds_every_value_as_the_exact_erf(ty):
    """bf16/f16 ``erf`` evaluates its rational function in f32
    (``math_approx.emit_for_narrow``, 5 f32 ulp): on every input the result
    is the exact erf rounded to the type, but for four f16 values (+-0.00148
    and +-0.2144: one f16 ulp, the exact value next to a rounding tie)."""
    import ml_dtypes
    dtype = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}[ty]
    values = np.arange(65536, dtype=np.uint16).view(dtype)
    text = f"HloModule e\nENTRY e {{\n  x = {ty}[65536] parameter(0)\n  ROOT y = {ty}[65536] erf(x)\n}}"
    got = np.asarray(xlac.jit(text)(values)).astype(np.float64)
    wide = values.astype(np.float64)
    with np.errstate(all="ignore"):
        exact = np.array([math.erf(v) if np.isfinite(v) else np.nan for v in wide])
        exact[np.isinf(wide)] = np.sign(wide[np.isinf(wide)])
    want = exact.astype(dtype).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(wide))
    ok = ~np.isnan(wide)
    off = ok & (got != want)
    assert off.sum() <= (4 if ty == "f16" else 0), wide[off]
    spacing = np.abs(np.spacing(want[off].astype(dtype)).astype(np.float64))
    assert np.all(np.abs(got[off] - want[off]) <= spacing)
