"""Inline, vectorisable approximations of exp, expm1, log, log1p, tanh, logistic, erf, sin and cos.

A call to libm (``expf``, ``tanhf``; LLVM's ``llvm.exp``/``llvm.log`` intrinsics
lower to the same calls) stops LLVM from vectorising the loop around it, or makes
the vectorised loop call the scalar function once per lane. The emitters here
produce straight-line IR instead: arithmetic, ``fcmp``/``select``, integer
operations on the bits, and only the intrinsics ``llvm.fmuladd``, ``llvm.fabs`` and
``llvm.copysign``, which are instructions on every x86-64 CPU (``fmuladd`` is a
fused multiply-add where the CPU has one, a multiply and an add elsewhere; the
algorithms are accurate either way). Rounding to an integer uses the
``x + 1.5 * 2**p - 1.5 * 2**p`` trick rather than ``llvm.rint``, which needs
SSE4.1. No new basic blocks, no branches: every special case is a ``select``.

Functions and types (f16/bf16 reach these in f32, see ``scalar_ops``):

=========  =====  =====  ===========================================================
function   f32    f64    method
=========  =====  =====  ===========================================================
exp        yes    yes    ``x = n ln2 + r``, ``|r| <= ln2/2``; ``e**r = 1 + r + r**2 q(r)``;
                         scaled by ``2**n`` in two steps (denormal results round once)
expm1      yes    yes    same reduction; ``2**n expm1(r) + (2**n - 1)`` (exact
                         ``2**n - 1``) while ``n`` is small, ``exp(x) - 1`` beyond
log        yes    yes    ``x = 2**k m``, ``m`` in ``[sqrt(1/2), sqrt(2))``, ``f = m - 1``,
                         ``log1p(f) = 2 atanh(f / (2 + f))`` as a polynomial in ``s**2``
log1p      yes    yes    the same on ``u = 1 + x``, with ``f`` recomputed exactly from
                         ``x`` (``x 2**-k + (2**-k - 1)``) so the rounding of ``1 + x``
                         is not lost
tanh       yes    yes    f32: ``x P(x**2) / Q(x**2)`` below 9.02, ``+-1`` beyond (XLA:CPU's
                         kind: 5 ulp, half the operations); f64: ``(1 - e) / (1 + e)``,
                         ``e = exp(-2|x|)``, each side one FMA from the reduced
                         ``expm1``; ``|x|`` clamped where tanh rounds to 1 (19.1)
logistic   yes    yes    ``e = exp(-|x|)``; ``1 / (1 + e)`` for ``x >= 0``, ``e / (1 + e)``
                         below (no overflow, denormal tail kept), corrected for the
                         rounding of ``1 + e``
erf        yes    no     ``x P(x**2) / Q(x**2)`` below 3.8325 (XLA:CPU's form), evaluated
                         in f64 (in f32 its roundings add 5 ulp; for a bf16/f16 result,
                         :func:`emit_for_narrow`, in f32); beyond: ``+-1``
sin, cos   yes    no     in f64: ``|x| = n pi/2 + r``, three-part pi/2 below ``2**20``,
                         Payne-Hanek in integers above; ``r + r**3 S(r**2)`` or
                         ``1 + r**2 C(r**2)`` by the quadrant; rounded once (0.501 ulp)
=========  =====  =====  ===========================================================

The polynomial coefficients come from minimax fits of the relative error (Remez's
algorithm in mpmath; for erf, sin and cos iteratively reweighted least squares),
rounded to the target type; the fit error is far below one ulp, so what remains is
the rounding of the arithmetic.
Measured against float64 libm (``tests/codegen/test_math_approx.py``) over a
sweep of the whole float range, the worst errors are about 1-2 ulp, 5 for the
f32 tanh (see ``docs/numerics.md`` for the numbers). Special values are those of C99:
``exp(+-inf) = inf, 0``, overflow to ``inf``, underflow through the denormals to
``0``, ``log(0) = -inf``, ``log(<0) = nan``, ``tanh(+-inf) = +-1``,
``sin(+-inf) = cos(+-inf) = nan``, signed zeros kept (``tanh``, ``expm1``, ``log1p``,
``erf``, ``sin`` of ``-0`` are ``-0``), NaN in gives the same NaN out.

Code that runs only on this machine (the JIT's modules, see
:func:`use_native_scaling`) on a CPU with AVX-512 scales by ``2**n`` with
LLVM's ``llvm.ldexp`` instead of the two multiplies: x86 lowers it to one
``vscalefps`` (and a conversion), which rounds once as the two steps do, so
the bits are the same (tested) and softmax runs 19% faster on one core.
Ahead-of-time objects keep the portable form (elsewhere ``llvm.ldexp`` is a
libm call per lane).

The exact path (libm and the LLVM intrinsics) stays available as the reference:
set ``XLAC_EXACT_MATH=1`` in the environment before compiling. It is read every
time an instruction is emitted, but ``xlac.jit`` caches compiled modules by their
HLO text (in memory, and on disk under ``XLAC_CACHE_DIR``), so set it before a
module is first compiled.
"""
from __future__ import annotations

import math
import os
import struct
import weakref
from fractions import Fraction

from llvmlite import ir

from .target import host_vector_bits

__all__ = ["EXACT_MATH_ENV", "exact_math", "supports", "emit", "emit_bf16", "ROUNDED_TO_BF16", "FUNCTIONS",
           "NARROW_RESULT", "emit_for_narrow",
           "use_native_scaling", "round_to_bf16_split"]

#: Environment variable: when set to anything but ``""``/``0``, the math ops call
#: libm (or the LLVM intrinsics that lower to it) instead of these approximations.
EXACT_MATH_ENV = "XLAC_EXACT_MATH"


def exact_math() -> bool:
    """Whether ``XLAC_EXACT_MATH`` asks for the libm path."""
    return os.environ.get(EXACT_MATH_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


#: Modules whose approximations scale with ``llvm.ldexp`` (see the module docstring).
_NATIVE_SCALING: "weakref.WeakSet[ir.Module]" = weakref.WeakSet()


def use_native_scaling(module: ir.Module) -> bool:
    """Mark ``module`` as code for this host only: when the host has AVX-512
    (``vscalefps``), its approximations scale by ``2**n`` with ``llvm.ldexp``.
    Returns whether they will."""
    if host_vector_bits() < 512:
        return False
    _NATIVE_SCALING.add(module)
    return True


# ----------------------------------------------------------------------------
# Constants
# ----------------------------------------------------------------------------

# ln 2 to 60 digits (more than any split below needs).
_LN2 = Fraction("0.693147180559945309417232121458176568075500134360255254120680")


def _f32(v: float) -> float:
    """``v`` rounded to the nearest float32 (as a Python float)."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _split_ln2(bits: int, narrow: bool) -> tuple[float, float]:
    """ln 2 = hi + lo with ``hi`` of ``bits`` significant bits (so ``n * hi`` is exact
    for small integers ``n``), ``lo`` the rest rounded to the target type."""
    hi = Fraction(round(_LN2 * 2 ** bits), 2 ** bits)       # ln2 < 1: bits after the point
    lo = float(_LN2 - hi)
    return float(hi), (_f32(lo) if narrow else lo)


class _Type:
    """Everything that differs between f32 and f64."""

    def __init__(self, narrow: bool):
        self.narrow = narrow
        self.ty = ir.FloatType() if narrow else ir.DoubleType()
        self.ity = ir.IntType(32 if narrow else 64)
        self.mant = 23 if narrow else 52
        self.bias = 127 if narrow else 1023
        # 1.5 * 2**mant: adding and subtracting it rounds |v| < 2**(mant-1) to an integer.
        self.magic = 1.5 * 2.0 ** self.mant
        # n * ln2_hi is exact for |n| < 2**(mant+1 - hi_bits), far more than exp needs.
        self.ln2_hi, self.ln2_lo = _split_ln2(16 if narrow else 32, narrow)
        self.log2e = 1 / math.log(2)
        # exp: below lo the result rounds to 0, above hi it overflows.
        self.exp_lo, self.exp_hi = (-104.0, 89.0) if narrow else (-746.0, 710.0)
        # expm1: below this the result rounds to -1.
        self.expm1_lo = -17.5 if narrow else -38.0
        # tanh (f64): from here on tanh(x) rounds to 1 (2 e**(-2x) < half an ulp of 1).
        self.tanh_one = 19.1
        # |x| below this: expm1(x) and log1p(x) round to x.
        self.tiny = 2.0 ** (-25 if narrow else -54)
        self.min_normal = 2.0 ** (1 - self.bias)
        self.denormal_scale = 24 if narrow else 54          # log: denormals times 2**this
        sqrt_half = _f32(math.sqrt(0.5)) if narrow else math.sqrt(0.5)
        self.sqrt_half_bits = _float_bits(sqrt_half, narrow)
        self.magic_bits = _float_bits(self.magic, narrow)
        c = _COEFFS32 if narrow else _COEFFS64
        self.expm1_q, self.log_r = c["expm1_q"], c["log_r"]


def _float_bits(v: float, narrow: bool) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0] if narrow else \
        struct.unpack("<Q", struct.pack("<d", v))[0]


# Remez fits (coefficients listed from the constant term up).
_COEFFS32 = {
    # expm1(r) = r + r**2 q(r) on |r| <= 0.3473 (relative error 0.004 ulp)
    "expm1_q": [0.5, 0.1666666567325592, 0.04166635870933533, 0.008333389647305012,
                0.0013940832577645779, 0.00019845894712489098],
    # 2 atanh(s) = 2 s + s R(s**2), R(z) = z (r1 + r2 z + r3 z**2), |s| <= 0.1717 (0.014 ulp)
    "log_r": [0.6666677594184875, 0.3997744917869568, 0.29874420166015625],
}

_COEFFS64 = {
    # (0.002 ulp)
    "expm1_q": [0.5, 0.16666666666666677, 0.041666666666666505, 0.008333333333321504,
                0.0013888888888963543, 0.00019841269886503664, 2.4801587171000666e-05,
                2.755724377488699e-06, 2.755740329903685e-07, 2.5109206196363803e-08,
                2.0875327512635107e-09],
    # (0.011 ulp)
    "log_r": [0.6666666666666735, 0.3999999999940748, 0.28571428744142574, 0.22222198378365438,
              0.18183575170983357, 0.1531375562432704, 0.14799067423508372],
}

# erf, f32 only: x P(x**2) / Q(x**2) on |x| < 3.8325 (erf rounds to +-1 beyond), P of
# degree 5, Q of degree 6 with Q(0) = 1: a minimax fit of the relative error (0.03 ulp),
# by iteratively reweighted least squares (Lawson's weights) on 10,000 points.
_ERF_P = [1.1283791691100387, 0.1917215213086473, 0.05532256864517739, 0.004143130619014243,
          0.0003975672004833883, 6.287931475744413e-06]
_ERF_Q = [1.0, 0.5032421800986672, 0.11677526362239778, 0.016083396467285505, 0.00138655324316662,
          6.897693613258996e-05, 2.3172776270063977e-07]
_ERF_ONE = 3.832506856900711

# tanh, f32: tanh(x) = x P(x**2) / Q(x**2) on |x| <= 9.02 (tanh rounds to 1 beyond), with
# P(0) = Q(0) = 1: a minimax fit of the relative error (2**-26.3), by the differential-
# correction algorithm (one linear program per step) on 6,000 points of [0, 9.02**2].
_TANH_ONE32 = 9.02
_TANH_P32 = [1.0, 0.1374199092388153, 0.003953919745981693, 3.044795994355809e-05,
             4.7027942429167524e-08]
_TANH_Q32 = [1.0, 0.47075319290161133, 0.027538394555449486, 0.0004110248410142958,
             1.531793373032997e-06, 6.656049045261625e-10]

_TYPES = {True: _Type(True), False: _Type(False)}


# ----------------------------------------------------------------------------
# A small IR vocabulary over one float type
# ----------------------------------------------------------------------------

class _E:
    def __init__(self, builder: ir.IRBuilder, ty: ir.Type):
        self.b = builder
        self.t = _TYPES[isinstance(ty, ir.FloatType)]

    # constants and intrinsics
    def k(self, v) -> ir.Constant:
        return ir.Constant(self.t.ty, float(v))

    def ki(self, v) -> ir.Constant:
        return ir.Constant(self.t.ity, int(v))

    def call(self, name: str, *args):
        ty = args[0].type
        full = f"{name}.{'f32' if isinstance(ty, ir.FloatType) else 'f64'}"
        fnty = ir.FunctionType(ty, [a.type for a in args])
        fn = self.b.module.globals.get(full)
        if fn is None:
            fn = ir.Function(self.b.module, fnty, full)
        return self.b.call(fn, list(args))

    def val(self, v):
        return v if isinstance(v, ir.Value) else self.k(v)

    def fma(self, a, b, c):
        """``a * b + c``, fused where the CPU has FMA."""
        return self.call("llvm.fmuladd", self.val(a), self.val(b), self.val(c))

    def horner(self, x, coeffs):
        """``sum coeffs[i] * x**i`` (coefficients: numbers or values)."""
        acc = self.val(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    # arithmetic
    def add(self, a, b):
        return self.b.fadd(self.val(a), self.val(b))

    def sub(self, a, b):
        return self.b.fsub(self.val(a), self.val(b))

    def mul(self, a, b):
        return self.b.fmul(self.val(a), self.val(b))

    def div(self, a, b):
        return self.b.fdiv(self.val(a), self.val(b))

    def abs(self, x):
        return self.call("llvm.fabs", x)

    def copysign(self, mag, sign):
        return self.call("llvm.copysign", mag, sign)

    # comparisons (ordered: false for NaN) and selects
    def lt(self, a, b):
        return self.b.fcmp_ordered("<", self.val(a), self.val(b))

    def gt(self, a, b):
        return self.b.fcmp_ordered(">", self.val(a), self.val(b))

    def ge(self, a, b):
        return self.b.fcmp_ordered(">=", self.val(a), self.val(b))

    def eq(self, a, b):
        return self.b.fcmp_ordered("==", self.val(a), self.val(b))

    def isnan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def sel(self, cond, a, b):
        return self.b.select(cond, self.val(a), self.val(b))

    def clamp(self, x, lo, hi):
        """``x`` limited to ``[lo, hi]``; NaN becomes ``lo`` (callers select NaN back)."""
        x = self.sel(self.gt(x, lo), x, lo)
        return self.sel(self.lt(x, hi), x, hi)

    def clamp_keeping_nan(self, x, lo, hi):
        """``x`` limited to ``[lo, hi]``, NaN kept (each bound one ``maxps``/``minps``
        with the bound first, which returns the second operand on NaN)."""
        x = self.sel(self.lt(x, lo), lo, x)
        return self.sel(self.gt(x, hi), hi, x)

    # bits
    def bits(self, x):
        return self.b.bitcast(x, self.t.ity)

    def from_bits(self, i):
        return self.b.bitcast(i, self.t.ty)

    def pow2(self, n):
        """``2**n`` for an integer ``n`` in the normal exponent range."""
        return self.from_bits(self.b.shl(self.b.add(n, self.ki(self.t.bias)), self.ki(self.t.mant)))

    def ldexp(self, p, n):
        """``p * 2**n`` for ``n`` up to twice the exponent range, rounded once: two
        exact power-of-two factors, the second of which may round into denormals
        (or ``llvm.ldexp``, rounded once too, in a :func:`use_native_scaling` module)."""
        if self.b.module in _NATIVE_SCALING:
            i32 = ir.IntType(32)
            n32 = n if n.type == i32 else self.b.trunc(n, i32)
            name = f"llvm.ldexp.{'f32' if self.t.narrow else 'f64'}.i32"
            fn = self.b.module.globals.get(name) or ir.Function(
                self.b.module, ir.FunctionType(p.type, [p.type, i32]), name)
            return self.b.call(fn, [p, n32])
        half = self.b.ashr(n, self.ki(1))
        return self.mul(self.mul(p, self.pow2(half)), self.pow2(self.b.sub(n, half)))

    def round_int(self, x, c):
        """(``rint(x * c)`` as a float, as an integer) for ``|x * c| < 2**(mant-1)``:
        adding ``1.5 * 2**mant`` leaves the integer in the low bits (no SSE4.1 needed);
        the multiply is fused into the add where the CPU has FMA."""
        magic = self.k(self.t.magic)
        t = self.fma(x, c, magic)
        return self.sub(t, magic), self.b.sub(self.bits(t), self.ki(self.t.magic_bits))


# ----------------------------------------------------------------------------
# The functions
# ----------------------------------------------------------------------------

def _reduce_exp(e: _E, x):
    """``x = n ln2 + r`` with ``|r| <= ln2/2`` (``x`` finite and clamped):
    returns ``(n as integer, expm1(r))``."""
    t = e.t
    n, ni = e.round_int(x, t.log2e)
    r = e.fma(n, -t.ln2_hi, x)          # exact: n * ln2_hi is exact and close to x
    r = e.fma(n, -t.ln2_lo, r)
    em = e.fma(e.mul(r, r), e.horner(r, t.expm1_q), r)
    return ni, em


def _exp(e: _E, x):
    # A NaN passes through the clamp and every step after it (its payload
    # too: each operation returns its NaN operand), so no select at the end.
    t = e.t
    ni, em = _reduce_exp(e, e.clamp_keeping_nan(x, t.exp_lo, t.exp_hi))
    return e.ldexp(e.add(em, 1.0), ni)


def _expm1(e: _E, x):
    t = e.t
    ni, em = _reduce_exp(e, e.clamp(x, t.expm1_lo, t.exp_hi))
    # Small n: 2**n expm1(r) + (2**n - 1); 2**n - 1 is exact and 2**n expm1(r) is
    # exact, so this rounds once. (For large n, pow2 makes inf: not selected.)
    s = e.pow2(ni)
    small = e.fma(s, em, e.sub(s, 1.0))
    # Large n: the -1 hardly matters; scale like exp (n may reach the top exponent).
    large = e.sub(e.ldexp(e.add(em, 1.0), ni), 1.0)
    y = e.sel(e.b.icmp_signed(">", ni, e.ki(t.mant + 1)), large, small)
    y = e.sel(e.lt(e.abs(x), t.tiny), x, y)             # keeps -0 and denormals
    return e.sel(e.isnan(x), x, y)


def _decompose(e: _E, x):
    """For positive normal ``x``: (``k`` integer, ``m`` float) with ``x = 2**k m``,
    ``m`` in ``[sqrt(1/2), sqrt(2))``: shift the bits by those of ``sqrt(1/2)``, so
    the exponent field of the difference is ``k``."""
    t = e.t
    ix = e.bits(x)
    ki = e.b.ashr(e.b.sub(ix, e.ki(t.sqrt_half_bits)), e.ki(t.mant))
    m = e.from_bits(e.b.sub(ix, e.b.shl(ki, e.ki(t.mant))))
    return ki, m


def _log1p_reduced(e: _E, f, k):
    """``k ln2 + log1p(f)`` for ``f`` in ``[sqrt(1/2) - 1, sqrt(2) - 1]``.

    ``log1p(f) = 2 atanh(s)``, ``s = f / (2 + f)``, written as
    ``f - (f**2/2 - s (f**2/2 + R(s**2)))`` so the leading terms are exact-ish.
    """
    t = e.t
    s = e.div(f, e.add(f, 2.0))
    z = e.mul(s, s)
    r = e.mul(z, e.horner(z, t.log_r))
    hfsq = e.mul(e.mul(f, f), 0.5)
    low = e.fma(k, t.ln2_lo, e.mul(s, e.add(hfsq, r)))
    return e.fma(k, t.ln2_hi, e.sub(f, e.sub(hfsq, low)))


def _log(e: _E, x):
    t = e.t
    denormal = e.lt(x, t.min_normal)
    xs = e.sel(denormal, e.mul(x, 2.0 ** t.denormal_scale), x)
    ki, m = _decompose(e, xs)
    k = e.sub(e.b.sitofp(ki, t.ty), e.sel(denormal, float(t.denormal_scale), 0.0))
    y = _log1p_reduced(e, e.sub(m, 1.0), k)
    y = e.sel(e.eq(x, math.inf), x, y)
    y = e.sel(e.eq(x, 0.0), -math.inf, y)
    y = e.sel(e.lt(x, 0.0), math.nan, y)
    return e.sel(e.isnan(x), x, y)


def _log1p(e: _E, x):
    t = e.t
    u = e.add(x, 1.0)
    ki, m = _decompose(e, u)        # u is 0 (handled below) or at least 2**-(mant+1)
    # f = u 2**-k - 1, recomputed from x: x 2**-k + (2**-k - 1) is one rounding
    # (exact when k == 0), so the error of 1 + x does not reach the result. For
    # large k (where that error is negligible) 2**-k would underflow: use m - 1.
    big = e.b.icmp_signed(">", ki, e.ki(t.mant + 1))
    inv = e.pow2(e.b.neg(e.b.select(big, e.ki(0), ki)))
    f = e.sel(big, e.sub(m, 1.0), e.fma(x, inv, e.sub(inv, 1.0)))
    y = _log1p_reduced(e, f, e.b.sitofp(ki, t.ty))
    y = e.sel(e.eq(u, math.inf), u, y)
    y = e.sel(e.eq(u, 0.0), -math.inf, y)
    y = e.sel(e.lt(x, -1.0), math.nan, y)
    y = e.sel(e.lt(e.abs(x), t.tiny), x, y)
    return e.sel(e.isnan(x), x, y)


def _tanh(e: _E, x, to_bf16: bool = False):
    if e.t.narrow:
        return _tanh_rational(e, x, to_bf16)
    return _tanh_exp(e, x)


def round_to_bf16_split(e: _E, r):
    """``r`` (f32, ``0 <= r <= 1`` or NaN) rounded to bf16 (8 significant bits,
    to nearest even), as an f32: Veltkamp's split ``g = r (2**16 + 1)``,
    ``r_hi = g + (r - g)``, three operations instead of the integer rounding's
    six.  It gives the integer rounding's bits for every normal f32 from
    ``2**-126`` up to where ``2**16 r`` overflows (checked on all of them); a
    denormal ``r`` must be a bf16 value already (at most 7 significant bits:
    ``g`` is exact and the result is ``r``).  ``+0`` stays ``+0`` (callers put
    the sign back), and a NaN stays that NaN, quieted."""
    g = e.mul(r, 65537.0)
    return e.add(g, e.sub(r, g))


def _tanh_rational(e: _E, x, to_bf16: bool = False):
    """f32: ``tanh x = x P(x**2) / Q(x**2)`` for ``|x| < 9.02``, ``+-1`` beyond.

    One rational function for the whole range (no second branch, no exp): 17
    vector operations where the exp-based form takes 30, which makes a loop
    like ``tanh(a*x + b)*c + x`` memory-bound.  ``P(0) = Q(0) = 1``, so tiny
    and denormal ``x`` give ``x`` exactly.  The fit is ~2**-26; the error left
    is the rounding of the two polynomials (all their terms positive, summed
    in f32), about 5 ulp near ``|x| = 8``: XLA:CPU's own tanh, a rational
    function too, measures 4.7 ulp with FMA and 6.4 without on the same sweep.
    """
    a = e.abs(x)
    ac = e.sel(e.gt(a, _TANH_ONE32), _TANH_ONE32, a)                    # NaN kept
    t = e.mul(ac, ac)
    r = e.div(e.mul(ac, e.horner(t, _TANH_P32)), e.horner(t, _TANH_Q32))
    if to_bf16:
        # tanh of a bf16 value (tiny ones give themselves: bf16 values), rounded
        # as the integer rounding would, before the sign goes back on.  Near and
        # past the clamp r is within a few ulp of 1, which rounds to 1: the
        # selects below are not needed (every bf16 input is tested).
        return e.copysign(round_to_bf16_split(e, r), x)
    # The roundings may land just above 1 near the clamp; past it tanh rounds to 1.
    r = e.sel(e.ge(r, 1.0), 1.0, r)
    r = e.sel(e.ge(a, _TANH_ONE32), 1.0, r)                               # NaN: r, a NaN
    return e.copysign(r, x)                                             # -0 stays -0


def _tanh_exp(e: _E, x):
    """f64: ``tanh |x| = (1 - e**(-2|x|)) / (1 + e**(-2|x|))``, ``|x|`` clamped
    at 19.1, past which tanh rounds to 1 (2.04 ulp).

    One formula for the whole range: with ``-2|x| = n ln2 + r`` (``n`` in
    ``[-56, 0]``), ``e**(-2|x|) -+ 1 = 2**n expm1(r) + (2**n -+ 1)``, each one
    rounding (``2**n -+ 1`` is exact), and ``expm1(r)`` keeps its relative
    accuracy down to the denormals, where the result is ``|x|``.  22 vector
    operations where an odd polynomial below 0.625 and ``1 - 2/(e**(2|x|) + 1)``
    above (1.29 ulp) took 40: the f64 loop ``tanh(a*x + b)*c + x`` ran 1.6x
    slower.  Correcting the three roundings (Fast2Sum of both sums and the
    quotient's residual, 1.42 ulp) cost nearly all of that back."""
    t = e.t
    a = e.abs(x)
    a = e.sel(e.gt(a, t.tanh_one), t.tanh_one, a)          # inf clamped, NaN kept
    ni, em = _reduce_exp(e, e.mul(a, -2.0))
    s = e.pow2(ni)
    num = e.fma(s, em, e.sub(s, 1.0))
    den = e.fma(s, em, e.add(s, 1.0))
    # NaN: em is NaN (whatever n's bits), and so is the quotient.
    return e.copysign(e.div(e.b.fneg(num), den), x)       # -0 stays -0


def _logistic(e: _E, x):
    ex = _exp(e, e.b.fneg(e.abs(x)))            # in (0, 1]: no overflow
    positive = e.ge(x, 0.0)
    d = e.add(ex, 1.0)
    err = e.add(e.sub(1.0, d), ex)                # d + err == 1 + ex exactly (ex <= 1)
    q = e.div(e.sel(positive, 1.0, ex), d)        # NaN: ex is NaN, so is the result
    # q / (1 + err/d) to first order; 1/d is q for x >= 0 and 1 - q below.
    factor = e.mul(q, e.sel(positive, q, e.sub(1.0, q)))
    return e.fma(e.b.fneg(factor), err, q)


def _erf(e: _E, x, narrow_result: bool = False):
    if narrow_result:
        # For a bf16/f16/f8 result, f32 arithmetic: its 5 ulp are 2**-11 of an
        # f16 ulp, and the loop runs in 8-lane vectors instead of 4.
        z = e.mul(x, x)
        y = e.div(e.mul(x, e.horner(z, [_f32(c) for c in _ERF_P])), e.horner(z, [_f32(c) for c in _ERF_Q]))
        return e.sel(e.ge(e.abs(x), _ERF_ONE), e.copysign(e.val(1.0), x), y)     # NaN: y, NaN
    # In f64: its roundings are far below an f32 ulp, so the result is the fit's
    # (0.03 ulp) plus the final rounding; in f32 the 13 operations' roundings
    # added 5 ulp (XLA:CPU's rational function of the same shape measures so).
    d = _E(e.b, ir.DoubleType())
    xd = e.b.fpext(x, d.t.ty)
    z = d.mul(xd, xd)
    y = e.b.fptrunc(d.div(d.mul(xd, d.horner(z, _ERF_P)), d.horner(z, _ERF_Q)), e.t.ty)
    return e.sel(e.ge(e.abs(x), _ERF_ONE), e.copysign(e.val(1.0), x), y)     # NaN: y, NaN


# ----------------------------------------------------------------------------
# sin and cos (f32, evaluated in f64)
# ----------------------------------------------------------------------------

def _pi_bits(bits: int) -> int:
    """``floor(pi * 2**bits)`` (to within one unit), by Machin's formula in integers."""
    one = 1 << (bits + 16)

    def arctan_inv(k):                  # atan(1/k) * one
        total = term = one // k
        n, sign = 1, -1
        while term:
            term //= k * k
            total += sign * (term // (2 * n + 1))
            n, sign = n + 1, -sign
        return total

    return 4 * (4 * arctan_inv(5) - arctan_inv(239)) >> 16


_PI = Fraction(_pi_bits(300), 2 ** 300)

# 2/pi after 8 zero bits, in four 64-bit words (most significant first): the 96-bit
# window of it that the large-argument reduction needs starts at bit 8 (e - 18) for
# an f32 of biased exponent 8 e + s, 0 <= s < 8.
_TWO_OVER_PI_WORDS = [int(2 / _PI * 2 ** (64 * i + 56)) & (2 ** 64 - 1) for i in range(4)]

# pi/2 = hi + mid + lo, hi and mid of at most 33 significant bits: n * hi and n * mid
# are exact for n < 2**20, so |x| - n pi/2 loses nothing to cancellation.
_PIO2_HI = Fraction(round(_PI / 2 * 2 ** 32), 2 ** 32)
_PIO2_MID = Fraction(round((_PI / 2 - _PIO2_HI) * 2 ** 65), 2 ** 65)
_PIO2_LO = float(_PI / 2 - _PIO2_HI - _PIO2_MID)
_PIO2_HI, _PIO2_MID = float(_PIO2_HI), float(_PIO2_MID)
_SINCOS_LARGE = 2.0 ** 20            # |x| from here on: the integer reduction
# sin r = r + r**3 S(r**2), cos r = 1 + r**2 C(r**2) on |r| <= pi/4: minimax fits of
# the relative error (2**-37.5 and 2**-33.9), by iteratively reweighted least squares.
_SIN_S = [-0.16666666640775887, 0.008333329302379709, -0.0001983931147383042, 2.71811400959698e-06]
_COS_C = [-0.499999996942211, 0.04166662032835059, -0.001388668073825674, 2.4383481633071316e-05]


def _reduce_large(e: _E, d: _E, ia):
    """``|x| = n pi/2 + r`` for an f32 ``|x| >= 2**17`` given as its bits ``ia``:
    (``n mod 4`` as i64, ``r`` as f64, ``|r| <= pi/4``), by Payne and Hanek's
    method in integers: the 24-bit significand times a 96-bit window of 2/pi
    chosen by the exponent, so that the product's top 64 bits are
    ``x 2/pi mod 4`` with 62 bits after the point (the bits of 2/pi before the
    window only add multiples of 4, those after it less than one unit).  The
    remainder has at most 29 leading zero bits after the point for any f32, so
    ``r`` keeps 33 significant bits.  The window is cut out of constants by
    per-lane shifts (``vpsllvq``), not loaded from a table: x86 has no fast
    gather.  Smaller ``|x|`` give some value, to be selected away."""
    b = e.b
    i32, i64 = ir.IntType(32), ir.IntType(64)
    k = lambda v, t=i64: ir.Constant(t, v)                      # noqa: E731
    ia = b.zext(ia, i64)
    exponent = b.lshr(ia, k(23))
    # Window start 8 (exponent // 8 - 18) in 0 .. 104 (clamped for small |x|).
    block = b.lshr(exponent, k(3))
    block = b.select(b.icmp_unsigned("<", block, k(18)), k(18), block)
    start = b.shl(b.sub(block, k(18)), k(3))
    shift = b.and_(start, k(63))
    second = b.icmp_unsigned(">=", start, k(64))
    w = [k(v) for v in _TWO_OVER_PI_WORDS]
    a0, a1, a2 = (b.select(second, w[i + 1], w[i]) for i in range(3))

    def funnel(hi, lo):                 # the 64 bits from ``shift`` on of hi:lo
        return b.or_(b.shl(hi, shift), b.lshr(b.lshr(lo, k(1)), b.sub(k(63), shift)))

    top64, next64 = funnel(a0, a1), funnel(a1, a2)
    m = b.shl(b.or_(b.and_(ia, k(0x7FFFFF)), k(0x800000)), b.and_(exponent, k(7)))     # < 2**31
    top = b.shl(b.mul(m, b.lshr(top64, k(32))), k(32))                 # mod 2**64
    mid = b.mul(m, b.and_(top64, k(0xFFFFFFFF)))
    low = b.lshr(b.mul(m, b.lshr(next64, k(32))), k(32))
    frac = b.add(b.add(top, mid), low)                                 # x 2/pi mod 4, 2.62 fixed point
    n = b.lshr(b.add(frac, k(1 << 61)), k(62))                         # nearest integer, mod 4
    rem = b.sub(frac, b.shl(n, k(62)))                                 # signed, |rem| <= 2**61
    # rem as f64 through two exact 32-bit conversions (AVX2 has none from i64).
    hi = b.sitofp(b.trunc(b.ashr(rem, k(32)), i32), d.t.ty)
    lo = b.sitofp(b.xor(b.trunc(rem, i32), ir.Constant(i32, -2 ** 31)), d.t.ty)    # low word - 2**31
    value = d.add(d.fma(hi, 2.0 ** 32, 2.0 ** 31), lo)                 # one rounding
    return n, d.mul(value, math.ldexp(math.pi / 2, -62))


def _sin_cos(e: _E, x, cosine: bool):
    """f32 ``sin x`` or ``cos x``: ``|x| = n pi/2 + r`` in f64 (Cody and Waite's
    three-part pi/2 below ``2**20``, :func:`_reduce_large` above, both computed and
    one selected), the polynomial of ``r`` that quadrant ``n mod 4`` needs, and the
    result rounded once to f32 (about 0.5 ulp: the reduction and the fits are
    accurate to 2**-33 or better)."""
    if not e.t.narrow:
        raise TypeError("sin and cos have an approximation for f32 only")
    b = e.b
    d = _E(b, ir.DoubleType())
    i64 = ir.IntType(64)
    a = e.abs(x)
    ad = b.fpext(a, d.t.ty)
    nf, ni = d.round_int(ad, float(2 / _PI))
    r_small = d.fma(nf, -_PIO2_LO, d.fma(nf, -_PIO2_MID, d.fma(nf, -_PIO2_HI, ad)))
    n_large, r_large = _reduce_large(e, d, e.bits(a))
    large = e.ge(a, _SINCOS_LARGE)                   # false for NaN
    n = b.select(large, n_large, ni)
    r = d.sel(large, r_large, r_small)
    z = d.mul(r, r)
    s = d.fma(d.mul(r, z), d.horner(z, _SIN_S), r)
    c = d.fma(z, d.horner(z, _COS_C), 1.0)
    # sin: s, c, -s, -c for n = 0, 1, 2, 3; cos is sin of the next quadrant.
    if cosine:
        n = b.add(n, ir.Constant(i64, 1))
    odd = b.trunc(n, ir.IntType(1))
    negative = b.trunc(b.lshr(n, ir.Constant(i64, 1)), ir.IntType(1))
    y = d.sel(odd, c, s)
    y = d.sel(negative, b.fneg(y), y)
    y = b.fptrunc(y, e.t.ty)
    if not cosine:
        y = e.b.fmul(y, e.copysign(e.val(1.0), x))   # sin(-x) = -sin x, -0 kept
    nan = e.sub(x, x)                                # NaN for inf and NaN, else 0
    return e.sel(e.isnan(nan), nan, y)


def _sin(e: _E, x):
    return _sin_cos(e, x, cosine=False)


def _cos(e: _E, x):
    return _sin_cos(e, x, cosine=True)


#: name -> (emitter, supports f64)
FUNCTIONS = {
    "exp": (_exp, True),
    "expm1": (_expm1, True),
    "log": (_log, True),
    "log1p": (_log1p, True),
    "tanh": (_tanh, True),
    "logistic": (_logistic, True),
    "erf": (_erf, False),
    "sin": (_sin, False),
    "cos": (_cos, False),
}


def supports(name: str, ty: ir.Type) -> bool:
    """Whether ``name`` has an approximation for values of LLVM type ``ty``."""
    entry = FUNCTIONS.get(name)
    if entry is None:
        return False
    return isinstance(ty, ir.FloatType) or (entry[1] and isinstance(ty, ir.DoubleType))


def emit(builder: ir.IRBuilder, name: str, x: ir.Value) -> ir.Value:
    """Emit the approximation of ``name`` (a key of :data:`FUNCTIONS`) of the scalar
    ``x`` (float or double) at the builder's position; returns the value."""
    if not supports(name, x.type):
        raise TypeError(f"no approximation of {name} for {x.type}")
    return FUNCTIONS[name][0](_E(builder, x.type), x)


#: The functions whose f32 code for a result rounded to a narrower float
#: (bf16, f16, f8) is a cheaper one (:func:`emit_for_narrow`).
NARROW_RESULT = frozenset({"erf"})


def emit_for_narrow(builder: ir.IRBuilder, name: str, x: ir.Value) -> ir.Value:
    """``name`` (in :data:`NARROW_RESULT`) of the f32 ``x`` for a result the
    caller rounds to bf16, f16 or an f8 type: f32 arithmetic where the full
    f32 code works in f64 (``erf``: 5 f32 ulp, far below the narrow type's)."""
    if name not in NARROW_RESULT or not isinstance(x.type, ir.FloatType):
        raise TypeError(f"no narrow-result approximation of {name} for {x.type}")
    return FUNCTIONS[name][0](_E(builder, x.type), x, narrow_result=True)


#: The functions :func:`emit_bf16` has: their bf16 result costs less rounded
#: inside the approximation than by ``scalar_ops``' integer rounding after it.
ROUNDED_TO_BF16 = frozenset({"tanh"})


def emit_bf16(builder: ir.IRBuilder, name: str, x: ir.Value) -> ir.Value:
    """``name`` (in :data:`ROUNDED_TO_BF16`) of the f32 ``x``, which holds a bf16
    value, rounded to bf16 to nearest even: an f32 holding a bf16 value (a NaN
    quieted, its low 16 bits those of ``x``), the same bits as rounding
    :func:`emit`'s result (every bf16 input is tested)."""
    if name not in ROUNDED_TO_BF16 or not isinstance(x.type, ir.FloatType):
        raise TypeError(f"no bf16 approximation of {name} for {x.type}")
    return FUNCTIONS[name][0](_E(builder, x.type), x, to_bf16=True)
