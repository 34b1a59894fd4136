"""Scalar (one-element) LLVM IR for every elementwise HLO opcode.

:func:`emit_elementwise` is the single entry point. It looks the opcode up in
``_OPS`` (opcode -> {kind -> emitter}) or ``_CONVERSIONS`` and calls a small
function that emits straight-line IR: no new basic blocks are created, so the
caller's builder stays in its block and the code vectorises.

Values are in *register type* (see :mod:`xlac.codegen.types`). The edge cases follow
``docs/numerics.md`` exactly. The choices made here:

* Integers: wrapping arithmetic. Division and remainder pick a safe divisor first
  (``sdiv``/``udiv`` by zero or ``INT_MIN / -1`` is UB in LLVM and traps on x86),
  then select the defined answer. Shifts clamp the amount (an oversized shift is
  poison in LLVM). Integer ``power`` is square-and-multiply unrolled over the
  exponent's bits, selects instead of branches.
* f16 and bf16 are computed in f32: operands are widened (exactly), the f32 op runs,
  and the result is rounded back to nearest even after every op (cheaper, same
  bits: without the NaN case after bf16 add/subtract/multiply/divide, whose NaNs
  are quiet already; inside the approximation for bf16 tanh). All f16/bf16
  conversions are done with integer operations on the bits, but for f16 <-> f32
  where the target has F16C (one instruction per vector, the same bits): LLVM's
  ``fpext``/``fptrunc`` on ``half`` otherwise become libcalls (``__extendhfsf2``,
  and ``__truncdfhf2`` from f64 even with F16C) that the JIT cannot resolve
  reliably.
* Every conversion to f16/bf16 rounds once, from the exact value: f64 is rounded
  directly (ml_dtypes' f64 -> bf16 rounds twice, through f32; the evaluator and
  xlac do not), integers go through f64 (exact up to 32 bits; 64-bit integers
  beyond 2**53 round twice, as in the evaluator).
* The f8 and f4 types (``xlac.shape.FLOAT_FORMATS``) are stored as their bits
  and computed in f32 like bf16.  Widening to f32 reads a table of the 256 (16)
  exact values; narrowing from f32 is ml_dtypes' algorithm on the bits (round to
  nearest even, overflow to the format's infinity, NaN or largest value, its
  NaN and zero rules), so every result equals ml_dtypes' bit for bit.  f64 (and
  an integer, through f64) is first rounded to f32 *to odd*, which makes the
  second rounding exact: one correct rounding, as ml_dtypes does for wider
  types (its numpy cast from f64 rounds twice; the evaluator does not).
* Math: exp, expm1, log, log1p, tanh, logistic (f32 and f64) and erf (f32) are
  inline polynomial approximations from :mod:`xlac.codegen.math_approx` (a libm call
  would keep the loop from vectorising); ``XLAC_EXACT_MATH=1`` switches them back to
  the libm path, which stays the reference in tests. Otherwise LLVM intrinsics where
  they lower to instructions or to plain libm calls (sqrt, fabs, floor, ceil, round,
  roundeven, copysign, maximum, minimum, sin, cos, pow; exp and log of complex
  numbers); libm directly for the rest (tan, cbrt, atan2, hypot, erf of f64; ``frem``
  lowers to fmod). The JIT resolves libm from the Python process.
* Complex numbers are ``{re, im}`` structs; add, subtract, multiply and negate are the
  straightforward formulas, the other ops XLA's (:mod:`xlac.hlo.complex_math`, shared
  with the evaluator), special values included.

Anything not covered raises :class:`~xlac.errors.UnsupportedError` naming the opcode.
"""
from __future__ import annotations

import math
import weakref
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from llvmlite import ir

from xlac.codegen import math_approx
from xlac.codegen.target import has_f16c
from xlac.codegen.types import register_type
from xlac.errors import UnsupportedError
from xlac.hlo import complex_math, opcodes
from xlac.shape import PrimitiveType as PT

__all__ = ["emit_elementwise", "declare_libm", "convert_value"]

PRED, INT, FLOAT, COMPLEX = "pred", "int", "float", "complex"

_I1 = ir.IntType(1)
_I16 = ir.IntType(16)
_I32 = ir.IntType(32)
_F32 = ir.FloatType()
_I8 = ir.IntType(8)
_I64 = ir.IntType(64)
_F64 = ir.DoubleType()


# ----------------------------------------------------------------------------
# Declarations
# ----------------------------------------------------------------------------

def declare_libm(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
    """The function ``name`` of ``module``, declared with ``fnty`` on first use.

    Works for libm functions (``expf``) and LLVM intrinsics (``llvm.floor.f32``).
    """
    fn = module.globals.get(name)
    if fn is None:
        return ir.Function(module, fnty, name)
    if not isinstance(fn, ir.Function) or fn.function_type != fnty:
        raise TypeError(f"{name} is already declared in the module as {fn.type}, not {fnty}")
    return fn


def _suffix(ty: ir.Type) -> str:
    """LLVM's overload suffix of a scalar type: f32, f64, i8, ..."""
    if isinstance(ty, ir.FloatType):
        return "f32"
    if isinstance(ty, ir.DoubleType):
        return "f64"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    raise TypeError(f"no overload suffix for {ty}")


class _Ctx:
    """What an emitter needs: the builder, the op's types and attributes."""

    def __init__(self, builder, opcode, types, result, attrs):
        self.b: ir.IRBuilder = builder
        self.opcode = opcode
        self.types: list = list(types)
        self.result: PT = result
        self.attrs: dict = attrs

    @property
    def t(self) -> PT:
        """The type that decides the op's semantics (on_true's type for select)."""
        return self.types[1] if self.opcode == "select" else self.types[0]

    def intrinsic(self, name: str, *args):
        """Call intrinsic ``name`` (``llvm.floor``) overloaded on, and returning, the
        first argument's type."""
        ty = args[0].type
        fn = declare_libm(self.b.module, f"{name}.{_suffix(ty)}", ir.FunctionType(ty, [a.type for a in args]))
        return self.b.call(fn, list(args))

    def libm(self, name: str, *args):
        """Call libm's ``name`` (double) or ``name + 'f'`` (float) on float args."""
        ty = args[0].type
        full = name + ("f" if isinstance(ty, ir.FloatType) else "")
        fn = declare_libm(self.b.module, full, ir.FunctionType(ty, [a.type for a in args]))
        return self.b.call(fn, list(args))


def _attr(c: _Ctx, name: str):
    """A required attribute of the instruction (a malformed one lacks it)."""
    try:
        return c.attrs[name]
    except KeyError:
        raise ValueError(f"{c.opcode}: missing attribute {name!r}") from None


def _const(ty: ir.Type, value) -> ir.Constant:
    return ir.Constant(ty, value)


def _width(ty: ir.Type) -> int:
    if isinstance(ty, ir.IntType):
        return ty.width
    return {"half": 16, "float": 32, "double": 64}[str(ty)]


# ----------------------------------------------------------------------------
# Integers (and pred, an unsigned 1-bit integer for max/min/compare)
# ----------------------------------------------------------------------------

def _signed(c: _Ctx) -> bool:
    return c.t.is_signed_int


def _int_min_max(pick_greater: bool):
    def emit(c, x, y):
        op = ">" if pick_greater else "<"
        cmp = c.b.icmp_signed(op, x, y) if _signed(c) else c.b.icmp_unsigned(op, x, y)
        return c.b.select(cmp, x, y)
    return emit


def _int_safe_divisor(c, x, y):
    """(is_zero, divisor): y, or 1 where y == 0 or (signed) x == INT_MIN and y == -1.

    With divisor 1 the INT_MIN / -1 case gives INT_MIN and remainder 0, the answers
    numerics.md asks for, so only division by zero needs a select afterwards.
    """
    b, ty = c.b, x.type
    is_zero = b.icmp_unsigned("==", y, _const(ty, 0))
    bad = is_zero
    if _signed(c):
        int_min = _const(ty, -(1 << (ty.width - 1)))
        overflow = b.and_(b.icmp_unsigned("==", x, int_min), b.icmp_unsigned("==", y, _const(ty, -1)))
        bad = b.or_(is_zero, overflow)
    return is_zero, b.select(bad, _const(ty, 1), y)


def _int_divide(c, x, y):
    is_zero, d = _int_safe_divisor(c, x, y)
    q = c.b.sdiv(x, d) if _signed(c) else c.b.udiv(x, d)
    return c.b.select(is_zero, _const(x.type, -1), q)       # x / 0 is all bits set


def _int_remainder(c, x, y):
    is_zero, d = _int_safe_divisor(c, x, y)
    r = c.b.srem(x, d) if _signed(c) else c.b.urem(x, d)
    return c.b.select(is_zero, x, r)                          # x % 0 is x


def _shift_left(c, x, y):
    return _shift_twice(c, x, y, c.b.shl)


def _shift_right_logical(c, x, y):
    return _shift_twice(c, x, y, c.b.lshr)


def _shift_twice(c, x, y, shift):
    """A logical shift in two steps: by the amount clamped to ``width - 1``
    (``llvm.umin``), then by one more bit when the amount is oversized
    (``width - 1 + 1`` shifts every bit out: HLO's 0), so that no ``select``
    is needed.  A ``select`` on whether the amount is oversized is a select
    on a loop-invariant condition when the amount is (Threefry's rotations
    by a broadcast scalar), and LLVM's loop unswitching made a copy of the
    loop per such select (a fused Threefry round in a while body: 157 lines
    of IR became 6,850, 0.7 s of O3).  Both steps shift lanes of the
    element's own width (a shift at twice the width, the earlier form, ran
    AVX2's 8 lanes of i32 as twice 4 of i64 and shuffles between: Threefry
    1.4x XLA:CPU's time); an amount the same for every element is one
    ``vpslld``/``vpsrld`` by a register count each."""
    if x.type.width == 1:           # (a one-bit s1/u1: any amount but 0 is oversized)
        return c.b.and_(x, c.b.icmp_unsigned("==", y, _const(y.type, 0)))
    width = _const(y.type, x.type.width)
    first = shift(x, c.intrinsic("llvm.umin", y, _const(y.type, x.type.width - 1)))
    return shift(first, c.b.zext(c.b.icmp_unsigned(">=", y, width), x.type))


def _shift_right_arithmetic(c, x, y):
    # Shifting by width-1 fills with the sign bit: 0 or -1, the oversized answer
    # (the amount clamped by ``llvm.umin``, not a select: see ``_shift_twice``).
    return c.b.ashr(x, c.intrinsic("llvm.umin", y, _const(y.type, x.type.width - 1)))


def _mulhi(c, x, y):
    """XLA's kMulhi: the high half of the product at twice the width (operands
    sign- or zero-extended by the element type)."""
    b, ty = c.b, x.type
    wide = ir.IntType(2 * ty.width)
    ext = b.sext if _signed(c) else b.zext
    product = b.mul(ext(x, wide), ext(y, wide))
    return b.trunc(b.lshr(product, ir.Constant(wide, ty.width)), ty)


def _int_power(c, x, y):
    """Square-and-multiply over the exponent's bits, unrolled with selects."""
    b, ty = c.b, x.type
    one = _const(ty, 1)
    acc, base = one, x
    nbits = ty.width - 1 if _signed(c) else ty.width     # a negative y is handled below
    for i in range(nbits):
        bit = b.icmp_unsigned("!=", b.and_(y, _const(ty, 1 << i)), _const(ty, 0))
        acc = b.select(bit, b.mul(acc, base), acc)
        if i + 1 < nbits:
            base = b.mul(base, base)
    if not _signed(c):
        return acc
    # Negative exponent: 0, except 1 ** y == 1 and (-1) ** y == +-1 by parity.
    minus_one = _const(ty, -1)
    odd = b.icmp_unsigned("!=", b.and_(y, one), _const(ty, 0))
    negative = b.select(b.icmp_unsigned("==", x, one), one,
                        b.select(b.icmp_unsigned("==", x, minus_one),
                                 b.select(odd, minus_one, one), _const(ty, 0)))
    return b.select(b.icmp_signed("<", y, _const(ty, 0)), negative, acc)


def _int_abs(c, x):
    if not _signed(c):
        return x
    return c.b.select(c.b.icmp_signed("<", x, _const(x.type, 0)), c.b.neg(x), x)  # INT_MIN wraps


def _int_sign(c, x):
    zero = _const(x.type, 0)
    is_zero = c.b.icmp_unsigned("==", x, zero)
    if not _signed(c):
        return c.b.select(is_zero, zero, _const(x.type, 1))
    sign_or_one = c.b.or_(c.b.ashr(x, _const(x.type, x.type.width - 1)), _const(x.type, 1))
    return c.b.select(is_zero, zero, sign_or_one)


def _count_leading_zeros(c, x):
    # is_zero_poison = false: clz(0) is the bit width.
    return c.intrinsic("llvm.ctlz", x, _const(_I1, 0))


_ICMP = {"EQ": "==", "NE": "!=", "GE": ">=", "GT": ">", "LE": "<=", "LT": "<"}


def _direction(c) -> str:
    direction = _attr(c, "direction")
    if direction not in _ICMP:
        raise UnsupportedError("compare", f"direction {direction!r}")
    return _ICMP[direction]


def _int_compare(c, x, y):
    # Signedness comes from the element type, as in XLA's elemental emitter and
    # the evaluator; the `type=` attribute (SIGNED/UNSIGNED) is only what a
    # printer writes beside it.  pred is unsigned: true is 1, never -1.
    op = _direction(c)
    return c.b.icmp_signed(op, x, y) if _signed(c) else c.b.icmp_unsigned(op, x, y)


# ----------------------------------------------------------------------------
# Floats (f32, f64; f16 and bf16 arrive here widened to f32)
# ----------------------------------------------------------------------------

def _float_sign(c, x):
    # +-0 and NaN are their own sign; everything else is +-1 with x's sign bit.
    keep = c.b.fcmp_unordered("==", x, _const(x.type, 0.0))
    return c.b.select(keep, x, c.intrinsic("llvm.copysign", _const(x.type, 1.0), x))


def _logistic(c, x):
    one = _const(x.type, 1.0)
    e = c.intrinsic("llvm.exp", c.b.fneg(x))
    return c.b.fdiv(one, c.b.fadd(one, e))


def _rsqrt(c, x):
    return c.b.fdiv(_const(x.type, 1.0), c.intrinsic("llvm.sqrt", x))


def _is_finite(c, x):
    return c.b.fcmp_ordered("<", c.intrinsic("llvm.fabs", x), _const(x.type, float("inf")))


def _total_order_key(c, x):
    """Float bits as a signed integer that orders -NaN < -inf < ... < +inf < +NaN.

    Negative floats are sign-magnitude; flipping their magnitude bits makes the
    two's complement order match.
    """
    ity = ir.IntType(_width(x.type))
    bits = c.b.bitcast(x, ity)
    sign_fill = c.b.ashr(bits, _const(ity, ity.width - 1))       # 0 or all ones
    return c.b.xor(bits, c.b.lshr(sign_fill, _const(ity, 1)))


def _float_compare(c, x, y):
    op = _direction(c)
    if c.attrs.get("type") == "TOTALORDER":
        return c.b.icmp_signed(op, _total_order_key(c, x), _total_order_key(c, y))
    if op == "!=":
        return c.b.fcmp_unordered(op, x, y)      # NaN != anything is true
    return c.b.fcmp_ordered(op, x, y)            # every other NaN comparison is false


def _intr(name):
    return lambda c, *xs: c.intrinsic(name, *xs)


def _libm(name):
    return lambda c, *xs: c.libm(name, *xs)


def _approx(name, exact):
    """The inline approximation ``name`` of :mod:`~xlac.codegen.math_approx` where it
    exists for the type, unless ``XLAC_EXACT_MATH`` asks for ``exact`` (libm)."""
    def emit(c, x):
        if math_approx.supports(name, x.type) and not math_approx.exact_math():
            return math_approx.emit(c.b, name, x)
        return exact(c, x)
    return emit


# ----------------------------------------------------------------------------
# Complex numbers ({re, im} structs)
# ----------------------------------------------------------------------------

def _parts(c, z):
    return c.b.extract_value(z, 0), c.b.extract_value(z, 1)


def _pack(b, re, im):
    """A complex register value ``{re, im}`` from its two parts."""
    z = ir.Constant(ir.LiteralStructType([re.type, im.type]), ir.Undefined)
    return b.insert_value(b.insert_value(z, re, 0), im, 1)


def _complex(c, re, im):
    return _pack(c.b, re, im)


def _c_add(c, x, y):
    (a, b), (p, q) = _parts(c, x), _parts(c, y)
    return _complex(c, c.b.fadd(a, p), c.b.fadd(b, q))


def _c_subtract(c, x, y):
    (a, b), (p, q) = _parts(c, x), _parts(c, y)
    return _complex(c, c.b.fsub(a, p), c.b.fsub(b, q))


def _c_multiply(c, x, y):
    B = c.b
    (a, b), (p, q) = _parts(c, x), _parts(c, y)
    return _complex(c, B.fsub(B.fmul(a, p), B.fmul(b, q)), B.fadd(B.fmul(a, q), B.fmul(b, p)))


class _LlvmMath:
    """The backend of :mod:`xlac.hlo.complex_math` on LLVM values of one float type:
    the same formulas as the evaluator's, so both give XLA's special values."""

    def __init__(self, c: _Ctx, ty: ir.Type):
        self.c, self.b, self.ty = c, c.b, ty
        self.mantissa_bits = 24 if isinstance(ty, ir.FloatType) else 53

    def const(self, v):
        return _const(self.ty, v)

    def add(self, x, y):
        return self.b.fadd(x, y)

    def sub(self, x, y):
        return self.b.fsub(x, y)

    def mul(self, x, y):
        return self.b.fmul(x, y)

    def div(self, x, y):
        return self.b.fdiv(x, y)

    def neg(self, x):
        return self.b.fneg(x)

    def fabs(self, x):
        return self.c.intrinsic("llvm.fabs", x)

    def sqrt(self, x):
        return self.c.intrinsic("llvm.sqrt", x)

    def exp(self, x):
        return _OPS["exponential"][FLOAT](self.c, x)

    def expm1(self, x):
        return _OPS["exponential-minus-one"][FLOAT](self.c, x)

    def log(self, x):
        return _OPS["log"][FLOAT](self.c, x)

    def log1p(self, x):
        return _OPS["log-plus-one"][FLOAT](self.c, x)

    def sin(self, x):
        return _OPS["sine"][FLOAT](self.c, x)

    def cos(self, x):
        return _OPS["cosine"][FLOAT](self.c, x)

    def atan2(self, y, x):
        return self.c.libm("atan2", y, x)

    def pow(self, x, y):
        return self.c.intrinsic("llvm.pow", x, y)

    def copysign(self, x, y):
        return self.c.intrinsic("llvm.copysign", x, y)

    def max(self, x, y):
        return _float_max_min(True)(self.c, x, y)

    def min(self, x, y):
        return _float_max_min(False)(self.c, x, y)

    def eq(self, x, y):
        return self.b.fcmp_ordered("==", x, y)

    def ne(self, x, y):
        return self.b.fcmp_ordered("!=", x, y)

    def lt(self, x, y):
        return self.b.fcmp_ordered("<", x, y)

    def le(self, x, y):
        return self.b.fcmp_ordered("<=", x, y)

    def gt(self, x, y):
        return self.b.fcmp_ordered(">", x, y)

    def ge(self, x, y):
        return self.b.fcmp_ordered(">=", x, y)

    def isnan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def and_(self, p, q):
        return self.b.and_(p, q)

    def or_(self, p, q):
        return self.b.or_(p, q)

    def not_(self, p):
        return self.b.not_(p)

    def select(self, p, x, y):
        return self.b.select(p, x, y)


def _complex_formula(formula):
    """An emitter for complex operands from XLA's formula in ``complex_math``."""
    def emit(c, *zs):
        parts = [_parts(c, z) for z in zs]
        out = formula(_LlvmMath(c, parts[0][0].type), *parts)
        return _complex(c, *out) if isinstance(out, tuple) else out
    emit.__name__ = f"_c_{formula.__name__}"
    return emit


def _c_negate(c, x):
    a, b = _parts(c, x)
    return _complex(c, c.b.fneg(a), c.b.fneg(b))


def _c_compare(c, x, y):
    (a, b), (p, q) = _parts(c, x), _parts(c, y)
    op = _direction(c)
    if op == "==":
        return c.b.and_(c.b.fcmp_ordered("==", a, p), c.b.fcmp_ordered("==", b, q))
    if op == "!=":
        return c.b.or_(c.b.fcmp_unordered("!=", a, p), c.b.fcmp_unordered("!=", b, q))
    raise UnsupportedError("compare", f"direction {c.attrs['direction']} for {c.t.value}")


# ----------------------------------------------------------------------------
# Ternary
# ----------------------------------------------------------------------------

def _select(c, p, on_true, on_false):
    return c.b.select(p, on_true, on_false)


def _int_clamp(c, lo, x, hi):
    return _int_min_max(False)(c, _int_min_max(True)(c, x, lo), hi)


_FLOAT_BITS = {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}
#: Whether float maximum/minimum are emitted as selects (:func:`float_max_min`)
#: rather than ``llvm.maximum``/``minimum`` calls (:func:`scalar_loop`).
_SELECTS: ContextVar[bool] = ContextVar("min_max_selects", default=False)


@contextmanager
def scalar_loop():
    """Within: float maximum/minimum as :func:`float_max_min`'s selects, for
    code that stays scalar (a scatter's combiner).  x86 lowers a scalar
    ``llvm.maximum`` with a branch on the sign of its first operand,
    mispredicted half the time on random data (a scatter by maximum ran 3x
    a scatter by add); vectorised, the intrinsic is two instructions fewer
    than the selects (a 3x3 max pool ran 1.37x slower with the selects), so
    it stays the default."""
    token = _SELECTS.set(True)
    try:
        yield
    finally:
        _SELECTS.reset(token)


def float_max_min(b: ir.IRBuilder, is_max: bool, x, y):
    """The spec's ``maximum`` (``minimum``) of two floats: NaN if either is,
    -0 below +0, as ``llvm.maximum`` (``llvm.minimum``) computes it, as
    selects on float compares (compares and blends, no branch); a tie (equal,
    or -0 against +0) takes the bits' and (or) to put +0 above -0."""
    bits = ir.IntType(_FLOAT_BITS[type(x.type)])
    r = b.select(b.fcmp_ordered(">" if is_max else "<", x, y), x, y)
    tie = (b.and_ if is_max else b.or_)(b.bitcast(x, bits), b.bitcast(y, bits))
    r = b.select(b.fcmp_ordered("==", x, y), b.bitcast(tie, x.type), r)
    return b.select(b.fcmp_unordered("uno", x, y), b.fadd(x, y), r)


def constant_max_min(b: ir.IRBuilder, is_max: bool, x, k: ir.Constant):
    """``maximum(x, k)`` (``minimum``) for a constant ``k`` that is not NaN, as
    one compare and one select: ``x`` where it is above (below) ``k`` or NaN,
    else ``k``; where ``x == k`` either is ``k`` but for zeros, whose sign
    picks the compare (``max(-0, +0) = +0``: ``x`` wins a tie with -0 only).
    A relu, ``max(x, 0)``, is then a compare and an and, where
    ``llvm.maximum`` is lowered to ~6 instructions per vector on x86 (and its
    <32 x float> expansion was ~40% of the instruction selection of a
    transformer's fused reductions)."""
    zero_tie = float(k.constant) == 0.0 and (math.copysign(1.0, float(k.constant)) < 0) == is_max
    op = ("uge" if zero_tie else "ugt") if is_max else ("ule" if zero_tie else "ult")
    return b.select(b.fcmp_unordered(op, x, k), x, k)


_FLOAT_TYPES = tuple(_FLOAT_BITS)


def _nan_free_constant(v) -> bool:
    return isinstance(v, ir.Constant) and isinstance(v.type, _FLOAT_TYPES) \
        and isinstance(v.constant, (int, float)) and not math.isnan(v.constant)


def _float_max_min(is_max):
    name = "llvm.maximum" if is_max else "llvm.minimum"

    def emit(c, x, y):
        if _nan_free_constant(y):
            return constant_max_min(c.b, is_max, x, y)
        if _nan_free_constant(x):
            return constant_max_min(c.b, is_max, y, x)
        return float_max_min(c.b, is_max, x, y) if _SELECTS.get() else c.intrinsic(name, x, y)
    return emit


def _float_clamp(c, lo, x, hi):
    return _float_max_min(False)(c, _float_max_min(True)(c, x, lo), hi)


# ----------------------------------------------------------------------------
# The table: opcode -> {kind -> emitter(ctx, *operands)}
# ----------------------------------------------------------------------------

_B = lambda method: (lambda c, *xs: getattr(c.b, method)(*xs))   # noqa: E731  builder method

_OPS: dict = {
    # binary arithmetic (pred: add is or, multiply is and, as XLA's evaluator
    # computes them on bool and the evaluator here on numpy's)
    "add": {INT: _B("add"), PRED: _B("or_"), FLOAT: _B("fadd"), COMPLEX: _c_add},
    "subtract": {INT: _B("sub"), FLOAT: _B("fsub"), COMPLEX: _c_subtract},
    "multiply": {INT: _B("mul"), PRED: _B("and_"), FLOAT: _B("fmul"), COMPLEX: _c_multiply},
    "divide": {INT: _int_divide, FLOAT: _B("fdiv"), COMPLEX: _complex_formula(complex_math.divide)},
    "remainder": {INT: _int_remainder, FLOAT: _B("frem")},           # frem is C fmod
    "power": {INT: _int_power, FLOAT: _intr("llvm.pow"), COMPLEX: _complex_formula(complex_math.power)},
    "maximum": {INT: _int_min_max(True), PRED: _int_min_max(True), FLOAT: _float_max_min(True)},
    "minimum": {INT: _int_min_max(False), PRED: _int_min_max(False), FLOAT: _float_max_min(False)},
    "atan2": {FLOAT: _libm("atan2")},
    "complex": {FLOAT: _complex},
    # bitwise
    "and": {INT: _B("and_"), PRED: _B("and_")},
    "or": {INT: _B("or_"), PRED: _B("or_")},
    "xor": {INT: _B("xor"), PRED: _B("xor")},
    "not": {INT: _B("not_"), PRED: _B("not_")},
    "shift-left": {INT: _shift_left},
    "shift-right-logical": {INT: _shift_right_logical},
    "shift-right-arithmetic": {INT: _shift_right_arithmetic},
    "mulhi": {INT: _mulhi},
    "popcnt": {INT: _intr("llvm.ctpop")},
    "count-leading-zeros": {INT: _count_leading_zeros},
    # unary
    "negate": {INT: _B("neg"), FLOAT: _B("fneg"), COMPLEX: _c_negate},
    "abs": {INT: _int_abs, FLOAT: _intr("llvm.fabs"), COMPLEX: _complex_formula(complex_math.abs_)},
    "sign": {INT: _int_sign, FLOAT: _float_sign, COMPLEX: _complex_formula(complex_math.sign)},
    "ceil": {FLOAT: _intr("llvm.ceil")},
    "floor": {FLOAT: _intr("llvm.floor")},
    "round-nearest-afz": {FLOAT: _intr("llvm.round")},
    "round-nearest-even": {FLOAT: _intr("llvm.roundeven")},
    "sqrt": {FLOAT: _intr("llvm.sqrt"), COMPLEX: _complex_formula(complex_math.sqrt)},
    "rsqrt": {FLOAT: _rsqrt, COMPLEX: _complex_formula(complex_math.rsqrt)},
    "cbrt": {FLOAT: _libm("cbrt")},
    "exponential": {FLOAT: _approx("exp", _intr("llvm.exp")), COMPLEX: _complex_formula(complex_math.exp)},
    "exponential-minus-one": {FLOAT: _approx("expm1", _libm("expm1")),
                              COMPLEX: _complex_formula(complex_math.expm1)},
    "log": {FLOAT: _approx("log", _intr("llvm.log")), COMPLEX: _complex_formula(complex_math.log)},
    "log-plus-one": {FLOAT: _approx("log1p", _libm("log1p")), COMPLEX: _complex_formula(complex_math.log1p)},
    "logistic": {FLOAT: _approx("logistic", _logistic)},
    "sine": {FLOAT: _approx("sin", _intr("llvm.sin")), COMPLEX: _complex_formula(complex_math.sin)},
    "cosine": {FLOAT: _approx("cos", _intr("llvm.cos")), COMPLEX: _complex_formula(complex_math.cos)},
    "tan": {FLOAT: _libm("tan"), COMPLEX: _complex_formula(complex_math.tan)},
    **{op: {FLOAT: _libm(fn)} for op, fn in (("acos", "acos"), ("acosh", "acosh"), ("asin", "asin"),
                                              ("asinh", "asinh"), ("atan", "atan"), ("atanh", "atanh"),
                                              ("cosh", "cosh"), ("sinh", "sinh"))},
    "tanh": {FLOAT: _approx("tanh", _libm("tanh")), COMPLEX: _complex_formula(complex_math.tanh)},
    "erf": {FLOAT: _approx("erf", _libm("erf"))},
    "is-finite": {FLOAT: _is_finite},
    "real": {FLOAT: lambda c, x: x, COMPLEX: lambda c, z: c.b.extract_value(z, 0)},
    "imag": {FLOAT: lambda c, x: _const(x.type, 0.0), COMPLEX: lambda c, z: c.b.extract_value(z, 1)},
    # comparison and ternary
    "compare": {INT: _int_compare, PRED: _int_compare, FLOAT: _float_compare, COMPLEX: _c_compare},
    "select": {k: _select for k in (PRED, INT, FLOAT, COMPLEX)},
    "clamp": {INT: _int_clamp, PRED: _int_clamp, FLOAT: _float_clamp},
}

#: Ops on narrow floats that work on the stored bits and need no detour through f32.
_NO_WIDENING = frozenset({"select"})


def _kind(pt: PT) -> str:
    if pt is PT.PRED:
        return PRED
    if pt.is_integral:
        return INT
    if pt.is_float:
        return FLOAT
    if pt.is_complex:
        return COMPLEX
    raise UnsupportedError(f"element type {pt.value}", "in an elementwise op")


# ----------------------------------------------------------------------------
# Float formats and bit-level conversions (bf16, f16; reduce-precision)
# ----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Format:
    bits: int
    exponent: int
    mantissa: int

    @property
    def bias(self) -> int:
        return (1 << (self.exponent - 1)) - 1

    @property
    def inf(self) -> int:
        """Bits of +inf (also: the largest magnitude that is not NaN)."""
        return ((1 << self.exponent) - 1) << self.mantissa


_FORMATS = {PT.F16: _Format(16, 5, 10), PT.BF16: _Format(16, 8, 7),
            PT.F32: _Format(32, 8, 23), PT.F64: _Format(64, 11, 52)}


def _to_bits(b, x, pt: PT):
    """Float value -> integer of its bits (bf16 already is its bits)."""
    return x if pt is PT.BF16 else b.bitcast(x, ir.IntType(_FORMATS[pt].bits))


def _from_bits(b, bits, pt: PT):
    return bits if pt is PT.BF16 else b.bitcast(bits, register_type(pt))


def _round_shift_right(b, v, amount):
    """``v >> amount`` rounded to nearest, ties to even (``amount`` >= 1).

    Adds 0111...1 plus the lowest kept bit, so exact halves round up only when
    that bit is odd. ``v`` must leave headroom for the addition (a float's
    magnitude always does).
    """
    ty = v.type
    one = _const(ty, 1)
    kept_lsb = b.and_(b.lshr(v, amount), one)
    bias = b.add(b.sub(b.shl(one, b.sub(amount, one)), one), kept_lsb)
    return b.lshr(b.add(v, bias), amount)


def _umin(b, x, y):
    return b.select(b.icmp_unsigned("<", x, y), x, y)


def _narrow_bits(b, bits, src: _Format, dst: _Format):
    """Round the bits of a ``src`` float to the narrower ``dst`` format.

    Round to nearest even, overflow to +-inf, results below ``dst``'s normal range
    rounded to its subnormals, NaN to a quiet NaN that keeps the top payload bits.
    Returns an integer of ``dst.bits`` bits.
    """
    ity = bits.type
    k = lambda v: _const(ity, v)                                   # noqa: E731
    shift = src.mantissa - dst.mantissa
    sign = b.and_(bits, k(1 << (src.bits - 1)))
    mag = b.and_(bits, k((1 << (src.bits - 1)) - 1))
    # Normal results: re-bias the exponent in place, round the low mantissa bits off.
    rebiased = b.sub(mag, k((src.bias - dst.bias) << src.mantissa))
    result = _umin(b, _round_shift_right(b, rebiased, k(shift)), k(dst.inf))
    if dst.exponent < src.exponent:
        # Below dst's smallest normal: shift the significand (implicit bit included)
        # further right, by one more per binade. Past mantissa+2 everything rounds
        # to zero, so the amount is clamped there (keeps the shift in range).
        min_normal = src.bias - dst.bias + 1                       # in src's exponent field
        exp = b.lshr(mag, k(src.mantissa))
        significand = b.or_(b.and_(mag, k((1 << src.mantissa) - 1)), k(1 << src.mantissa))
        amount = _umin(b, b.sub(k(shift + min_normal), exp), k(src.mantissa + 2))
        subnormal = _round_shift_right(b, significand, amount)
        result = b.select(b.icmp_unsigned("<", exp, k(min_normal)), subnormal, result)
    payload = b.and_(b.lshr(mag, k(shift)), k((1 << dst.mantissa) - 1))
    quiet_nan = b.or_(payload, k(dst.inf | (1 << (dst.mantissa - 1))))
    result = b.select(b.icmp_unsigned(">", mag, k(src.inf)), quiet_nan, result)
    result = b.or_(result, b.lshr(sign, k(src.bits - dst.bits)))
    return b.trunc(result, ir.IntType(dst.bits))


def _f32_to_bf16(b, x, quiet_nan_of_bf16: bool = False):
    """Round an f32 to bf16 (its bits, i16): round to nearest even, NaN quieted.

    bf16 has f32's exponent range, so this is ``_narrow_bits`` without its
    overflow clamp, sign split and subnormal path (a carry out of the kept
    mantissa bits steps the exponent, up to inf; f32 subnormals round to
    bf16's the same way): five integer operations and a select for NaN,
    ml_dtypes' algorithm.  When the result is widened again (a bf16 op
    feeding another), LLVM folds the pair into one mask of the low half, so
    a rounding inside a fused loop costs a handful of vector operations.

    ``quiet_nan_of_bf16``: the caller knows that a NaN ``x`` is quiet with
    its low 16 bits zero (:func:`_rounds_quiet_nans`), so the rounding
    increment (at most ``0x8000``) cannot carry into its top half and the
    NaN select goes: two vector operations of the six fewer.
    """
    k = lambda v: _const(_I32, v)                                  # noqa: E731
    bits = b.bitcast(x, _I32)
    # + 0x7fff + the lowest kept bit: exact halves round up only when it is odd.
    lsb = b.and_(b.lshr(bits, k(16)), k(1))
    rounded = b.add(bits, b.add(lsb, k(0x7FFF)))
    if quiet_nan_of_bf16:
        return b.trunc(b.lshr(rounded, k(16)), _I16)
    quiet_nan = b.or_(bits, k(0x400000))
    # The shift comes last so that a widening right after it is one mask.
    result = b.select(b.fcmp_unordered("uno", x, x), quiet_nan, rounded)
    return b.trunc(b.lshr(result, k(16)), _I16)


def _bf16_of_exact_f32(b, x):
    """The bf16 (bits, i16) of an f32 that holds a bf16 value (low 16 bits zero,
    or a quiet NaN): its top half.  Widened again, this is one mask."""
    return b.trunc(b.lshr(b.bitcast(x, _I32), _const(_I32, 16)), _I16)


def _bf16_to_f32(b, bits):
    # bf16 is the top half of an f32.
    return b.bitcast(b.shl(b.zext(bits, _I32), _const(_I32, 16)), _F32)


def _f16_to_f32(b, h, fpext: bool = True):
    """Exact f16 -> f32, a NaN quieted: ``fpext`` where the target has F16C
    (one ``vcvtph2ps`` per vector) and ``fpext`` is True, else integer ops
    (``fpext`` would be a libcall; or LLVM would fold the op on it back into
    f16, see :data:`NARROWED_BY_LLVM`)."""
    if fpext and has_f16c():
        return b.fpext(h, _F32)
    x = b.zext(b.bitcast(h, _I16), _I32)
    k = lambda v: _const(_I32, v)                                  # noqa: E731
    sign = b.shl(b.and_(x, k(0x8000)), k(16))
    exp = b.and_(b.lshr(x, k(10)), k(0x1F))
    mant = b.and_(x, k(0x3FF))
    normal = b.or_(b.shl(b.add(exp, k(127 - 15)), k(23)), b.shl(mant, k(13)))
    # A NaN comes out quiet, as from F16C's ``vcvtph2ps`` (XLA:CPU's).
    quiet = b.shl(b.zext(b.icmp_unsigned("!=", mant, k(0)), _I32), k(22))
    inf_nan = b.or_(b.or_(k(0x7F800000), quiet), b.shl(mant, k(13)))
    # Zero and subnormals: mant * 2^-24, exact in f32 (and a normal f32).
    tiny = b.bitcast(b.fmul(b.uitofp(mant, _F32), _const(_F32, 2.0 ** -24)), _I32)
    bits = b.select(b.icmp_unsigned("==", exp, k(0)), tiny,
                    b.select(b.icmp_unsigned("==", exp, k(0x1F)), inf_nan, normal))
    return b.bitcast(b.or_(bits, sign), _F32)


#: f16 ops whose f32 form LLVM's instcombine folds back into f16 intrinsics
#: when the operands are ``fpext``s (``fptrunc(floor(fpext a))`` becomes
#: ``floor.f16(a)``), which x86 without AVX512-FP16 runs element by element
#: (an f16 floor took 3x the bf16 one): their f16 operands are widened with
#: integer operations.  (``maximum``/``minimum`` fold too, into intrinsics
#: that a plain loop still vectorises; a max pool's unrolled windows did not:
#: ``kernels/windows.py`` widens with ``fpext=False``.)
NARROWED_BY_LLVM = frozenset({"floor", "ceil", "round-nearest-afz", "round-nearest-even"})


def widen_to_f32(b, x, pt: PT, fpext: bool = True):
    """A narrow float value (f16, bf16, f8, f4) as an exact f32 (other types
    unchanged); ``fpext=False``: f16 with integer operations even where the
    target has F16C (see :data:`NARROWED_BY_LLVM`)."""
    if pt is PT.BF16:
        return _bf16_to_f32(b, x)
    if pt is PT.F16:
        return _f16_to_f32(b, x, fpext)
    if pt.float_format is not None:
        return _format_to_f32(b, x, pt)
    return x


def _round_to_small(b, x, src: PT, dst: PT):
    """Round an f32 or f64 value to a narrow float (register type of ``dst``), once."""
    if dst.float_format is not None:
        if src is PT.F64:
            x = _f64_to_f32_round_to_odd(b, x)
        return _f32_to_format(b, x, dst.float_format)
    if src is PT.F32 and dst is PT.BF16:
        return _f32_to_bf16(b, x)
    if src is PT.F32 and dst is PT.F16 and has_f16c():
        # ``vcvtps2ph``: round to nearest even, subnormals, overflow to inf and
        # a NaN quieted with its payload's top bits, as the integer path.
        return b.fptrunc(x, register_type(dst))
    bits = _narrow_bits(b, _to_bits(b, x, src), _FORMATS[src], _FORMATS[dst])
    return _from_bits(b, bits, dst)


def _format_to_f32(b, x, pt: PT):
    """An f8/f4 value (its bits, i8) as f32: the exact value from a table of all
    2**bits values, made from ml_dtypes' own conversion."""
    fmt = pt.float_format
    table = _value_table(b.module, pt)
    index = b.zext(b.and_(x, _const(_I8, (1 << fmt.bits) - 1)), _I64)
    ptr = b.gep(table, [_const(_I64, 0), index], inbounds=True)
    return b.bitcast(b.load(ptr, typ=_I32), _F32)


def _value_table(module: ir.Module, pt: PT) -> ir.GlobalVariable:
    """``[2**bits x i32]``: the f32 bits of every value of ``pt`` (one per module)."""
    name = f"xlac.{pt.value}.values"
    table = module.globals.get(name)
    if table is None:
        n = 1 << pt.float_format.bits
        values = np.arange(n, dtype=np.uint8).view(pt.dtype).astype(np.float32).view(np.uint32)
        ty = ir.ArrayType(_I32, n)
        table = ir.GlobalVariable(module, ty, name)
        table.initializer = ir.Constant(ty, [int(v) for v in values])
        table.global_constant = True
        table.linkage = "private"
        table.unnamed_addr = True
    return table


def _f64_to_f32_round_to_odd(b, x):
    """f64 -> f32 rounded to odd: an inexact result gets the neighbour whose last
    bit is 1.  Rounding that again (to any format of at most 22 fraction bits)
    gives the correctly rounded result of the f64."""
    narrow = b.fptrunc(x, _F32)
    wide = b.fpext(narrow, _F64)
    bits = b.bitcast(narrow, _I32)
    exact = b.or_(b.fcmp_ordered("==", wide, x), b.fcmp_unordered("uno", x, x))
    odd = b.icmp_unsigned("!=", b.and_(bits, _const(_I32, 1)), _const(_I32, 0))
    # The RNE result is even: step the magnitude toward x by one.
    toward_zero = b.fcmp_ordered("<", _fabs(b, x), _fabs(b, wide))
    step = b.select(toward_zero, _const(_I32, -1), _const(_I32, 1))
    fixed = b.add(bits, b.select(b.or_(exact, odd), _const(_I32, 0), step))
    return b.bitcast(fixed, _F32)


def _fabs(b, x):
    fn = declare_libm(b.module, f"llvm.fabs.{_suffix(x.type)}", ir.FunctionType(x.type, [x.type]))
    return b.call(fn, [x])


def _smax0(b, v):
    zero = _const(v.type, 0)
    return b.select(b.icmp_signed("<", v, zero), zero, v)


def _f32_to_format(b, x, fmt):
    """An f32 value as the bits (i8) of an f8/f4 format: ml_dtypes' conversion.

    The magnitude is normalised (an f32 subnormal shifted up), rounded to the
    format's mantissa to nearest even at the bit position its exponent puts it
    (further right for its subnormals), then packed: exponent and mantissa add
    up, so a carry out of the mantissa bumps the exponent.  Past the largest
    finite value comes ``fmt.inf``; infinities, NaN, zero and (for the unsigned
    f8e8m0fnu) negative values follow the format's rules.
    """
    k = lambda v: _const(_I32, v)                                  # noqa: E731
    bits = b.bitcast(x, _I32)
    negative = b.icmp_signed("<", bits, k(0))
    mag = b.and_(bits, k(0x7FFFFFFF))
    exp = b.lshr(mag, k(23))
    frac = b.and_(mag, k(0x7FFFFF))
    # Normalise: the leading 1 at bit 23, whatever the input's own exponent.
    subnormal = b.icmp_unsigned("==", exp, k(0))
    lz = b.sub(_ctlz(b, frac), k(8))                              # shift that puts bit 23 on top
    mant = b.select(subnormal, b.shl(frac, lz), b.or_(frac, k(1 << 23)))
    unbiased = b.select(subnormal, b.sub(k(1 - 127), lz), b.sub(exp, k(127)))
    base = b.add(unbiased, k(fmt.bias - 1))                          # target exponent - 1
    if fmt.has_zero:
        # Below the smallest normal (base < 0) the subnormals: the mantissa
        # is rounded that many bits further right.
        align = b.add(k(23 - fmt.mantissa), _smax0(b, b.neg(base)))
        align = b.select(b.icmp_unsigned(">", align, k(25)), k(25), align)
        wide = b.add(_round_shift_right(b, mant, align), b.shl(_smax0(b, base), k(fmt.mantissa)))
    else:
        # No zero, no subnormals (f8e8m0fnu): exponent field 0 is a binade like
        # any other (2**-bias), rounded in the same way; what lies below it
        # becomes its value, the smallest there is.
        wide = b.add(_round_shift_right(b, mant, k(23 - fmt.mantissa)), b.shl(base, k(fmt.mantissa)))
        wide = b.select(b.icmp_signed("<", base, k(-1)), k(0), wide)
    result = b.select(b.icmp_unsigned(">", wide, k(fmt.max_finite)), k(fmt.inf), wide)
    result = _signed_rep(b, result, negative, fmt)
    if not fmt.signed:
        result = b.select(negative, k(fmt.nan_bits), result)
    zero = _signed_rep(b, k(0), negative, fmt) if fmt.has_zero else k(fmt.nan_bits)
    result = b.select(b.icmp_unsigned("==", mag, k(0)), zero, result)
    result = b.select(b.icmp_unsigned(">", mag, k(0x7F800000)), _signed_rep(b, k(fmt.nan_bits), negative, fmt),
                      result)
    result = b.select(b.icmp_unsigned("==", mag, k(0x7F800000)), _signed_rep(b, k(fmt.inf), negative, fmt),
                      result)
    return b.trunc(result, _I8)


def _ctlz(b, v):
    fn = declare_libm(b.module, f"llvm.ctlz.{_suffix(v.type)}", ir.FunctionType(v.type, [v.type, _I1]))
    return b.call(fn, [v, _const(_I1, 0)])


def _signed_rep(b, rep, negative, fmt):
    """``-rep`` where ``negative`` (ml_dtypes' negation: fnuz keeps 0 and NaN;
    an unsigned format has none)."""
    if not fmt.signed:
        return rep
    flipped = b.xor(rep, _const(rep.type, fmt.sign_bit))
    if fmt.fnuz:
        keep = b.icmp_unsigned("==", b.and_(rep, _const(rep.type, fmt.sign_bit - 1)), _const(rep.type, 0))
        flipped = b.select(keep, rep, flipped)
    return b.select(negative, flipped, rep)


# ----------------------------------------------------------------------------
# convert, bitcast-convert, reduce-precision
# ----------------------------------------------------------------------------

def _is_nonzero(b, x, pt: PT):
    if pt is PT.PRED:
        return x
    if pt.is_integral:
        return b.icmp_unsigned("!=", x, _const(x.type, 0))
    if pt.is_complex:
        re, im = b.extract_value(x, 0), b.extract_value(x, 1)
        zero = _const(re.type, 0.0)
        return b.or_(b.fcmp_unordered("!=", re, zero), b.fcmp_unordered("!=", im, zero))
    x = widen_to_f32(b, x, pt)
    return b.fcmp_unordered("!=", x, _const(x.type, 0.0))     # NaN is non-zero


def convert_value(builder: ir.IRBuilder, x: ir.Value, src: PT, dst: PT) -> ir.Value:
    """``convert`` of one register-type value from element type ``src`` to ``dst``."""
    b = builder
    if src is dst:
        return x
    if dst is PT.PRED:
        return _is_nonzero(b, x, src)
    if src.is_complex:
        re = b.extract_value(x, 0)
        if not dst.is_complex:
            return convert_value(b, re, src.component_type, dst)       # the real part
        im = b.extract_value(x, 1)
        part = dst.component_type
        return _pack(b, convert_value(b, re, src.component_type, part),
                     convert_value(b, im, src.component_type, part))
    if dst.is_complex:
        part = dst.component_type
        return _pack(b, convert_value(b, x, src, part), _const(register_type(part), 0.0))
    if src is PT.PRED or src.is_integral:
        if dst.is_integral:
            if dst.bit_width == _width(x.type):
                return x
            if dst.bit_width < _width(x.type):
                return b.trunc(x, register_type(dst))
            return b.sext(x, register_type(dst)) if src.is_signed_int else b.zext(x, register_type(dst))
        if dst.is_float:
            via = PT.F64 if dst.is_narrow_float else dst      # exact for <= 32 bits
            to_float = b.sitofp if src.is_signed_int else b.uitofp
            v = to_float(x, register_type(via))
            return _round_to_small(b, v, via, dst) if via is not dst else v
    if src.is_float:
        if src.is_narrow_float and dst.is_narrow_float:
            return _round_to_small(b, widen_to_f32(b, x, src), PT.F32, dst)
        x, src = widen_to_f32(b, x, src), (PT.F32 if src.is_narrow_float else src)
        if src is dst:
            return x
        if dst.is_integral and dst.bit_width <= 32:
            return _float_to_int_clamped(b, x, src, dst)
        if dst.is_integral:
            return _float_to_int64(b, x, src, dst)
        if dst.is_narrow_float:
            return _round_to_small(b, x, src, dst)
        if dst.is_float:
            return b.fpext(x, register_type(dst)) if dst.bit_width > src.bit_width \
                else b.fptrunc(x, register_type(dst))
    raise UnsupportedError("convert", f"from {src.value} to {dst.value}")


def _float_to_int_clamped(b, x, src: PT, dst: PT):
    """f32/f64 -> an integer of at most 32 bits, saturating,
    NaN -> 0 (what ``llvm.fptosi.sat`` defines, which LLVM scalarises on x86
    for vectors: an f32 -> s8 conversion was 3x XLA:CPU's time): clamped in
    the float type to the integer range, converted to i32 (one
    ``cvttps2dq`` per vector), truncated.  An integer maximum the float type
    does not hold (2**31 - 1 in f32) is clamped to the float below it and
    put back by a select."""
    w = dst.bit_width
    imin, imax = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dst.is_signed_int else (0, (1 << w) - 1)
    ftype = x.type
    fdt = np.float32 if src is PT.F32 else np.float64
    hi = fdt(imax)
    if int(hi) > imax:                            # rounded up: the float below it
        hi = np.nextafter(hi, fdt(0))
    lo, hi_c = _const(ftype, float(imin)), _const(ftype, float(hi))
    clamped = b.select(b.fcmp_ordered(">", x, lo), x, lo)                 # NaN -> lo
    clamped = b.select(b.fcmp_ordered("<", clamped, hi_c), clamped, hi_c)
    # u32 above 2**31: ``fptoui`` (a few vector operations on x86, not a loop of scalars).
    wide = (b.fptoui if imax >= 1 << 31 else b.fptosi)(clamped, _I32)
    if int(hi) < imax:
        top = imax - (1 << 32) if imax >= 1 << 31 else imax                # its i32 bits
        wide = b.select(b.fcmp_ordered(">", x, hi_c), _const(_I32, top), wide)
    wide = b.select(b.fcmp_unordered("uno", x, x), _const(_I32, 0), wide)
    ret = register_type(dst)
    return wide if ret == _I32 else b.trunc(wide, ret)


def _float_to_int64(b, x, src: PT, dst: PT):
    """f32/f64 -> s64/u64, saturating, NaN -> 0 (what ``llvm.fptosi.sat``
    defines), in integer operations on the float's bits: without AVX-512 x86
    has no vector conversion to 64-bit integers, and LLVM made the intrinsic
    a compare-and-branch sequence per element.  The magnitude is the
    significand (with its hidden bit) shifted left by ``e - p`` or right by
    ``p - e`` (``e`` the unbiased exponent, ``p`` the significand's bits;
    shifted out entirely below 1), the sign applied as a two's complement
    negation (``-2**63`` comes out exact), and the results outside the
    range put back by selects on the float."""
    fbits, p, bias = (32, 23, 127) if src is PT.F32 else (64, 52, 1023)
    it = ir.IntType(fbits)
    bits = b.bitcast(x, it)
    wide = b.zext(bits, _I64) if fbits == 32 else bits
    e = b.sub(b.and_(b.lshr(wide, _const(_I64, p)), _const(_I64, (1 << (fbits - 1 - p)) - 1)),
              _const(_I64, bias))
    m = b.or_(b.and_(wide, _const(_I64, (1 << p) - 1)), _const(_I64, 1 << p))

    def clamp(v, lo, hi):                       # signed, so that shifts stay below 64
        v = b.select(b.icmp_signed("<", v, _const(_I64, lo)), _const(_I64, lo), v)
        return b.select(b.icmp_signed(">", v, _const(_I64, hi)), _const(_I64, hi), v)
    left = clamp(b.sub(e, _const(_I64, p)), 0, 63)
    right = clamp(b.sub(_const(_I64, p), e), 0, 63)
    mag = b.lshr(b.shl(m, left), right)
    ftype = x.type
    if dst.is_signed_int:
        sign = b.sext(b.ashr(bits, ir.Constant(it, fbits - 1)), _I64) if fbits == 32 \
            else b.ashr(bits, _const(_I64, 63))
        value = b.sub(b.xor(mag, sign), sign)
        value = b.select(b.fcmp_ordered(">=", x, _const(ftype, 2.0 ** 63)), _const(_I64, (1 << 63) - 1), value)
        value = b.select(b.fcmp_ordered("<", x, _const(ftype, -2.0 ** 63)), _const(_I64, -(1 << 63)), value)
    else:
        value = b.select(b.fcmp_ordered(">=", x, _const(ftype, 2.0 ** 64)), _const(_I64, -1), mag)
        value = b.select(b.fcmp_unordered("<=", x, _const(ftype, -1.0)), _const(_I64, 0), value)
    return b.select(b.fcmp_unordered("uno", x, x), _const(_I64, 0), value)


def _convert(c, x):
    return convert_value(c.b, x, c.types[0], c.result)


def _bitcast_convert(c, x):
    src, dst = c.types[0], c.result
    if src is dst:
        return x
    if src.bit_width != dst.bit_width:
        raise UnsupportedError("bitcast-convert", "different bit widths")
    if PT.PRED in (src, dst) or src.is_complex or dst.is_complex:
        raise UnsupportedError("bitcast-convert", f"from {src.value} to {dst.value}")
    to_type = register_type(dst)
    if x.type == to_type:
        return x                                       # e.g. bf16 <-> s16 are both i16
    if isinstance(x.type, ir.IntType) and isinstance(to_type, ir.IntType):
        # s4 (i4) <-> f4e2m1fn (its bits in an i8): the same 4 bits.
        return c.b.trunc(x, to_type) if x.type.width > to_type.width else c.b.zext(x, to_type)
    return c.b.bitcast(x, to_type)


def _reduce_precision(c, x):
    """Round to ``mantissa_bits``, ties to even; beyond ``exponent_bits`` -> +-inf.

    Like XLA:CPU, results below the reduced format's normal range flush to +-0.
    NaN stays the input NaN.
    """
    pt = c.types[0]
    if not pt.is_float:
        raise UnsupportedError("reduce-precision", f"for {pt.value}")
    if pt.float_format is not None:
        # f8/f4: on the exact f32 value, then back (the result is representable).
        wide = _Ctx(c.b, c.opcode, [PT.F32], PT.F32, c.attrs)
        return _round_to_small(c.b, _reduce_precision(wide, widen_to_f32(c.b, x, pt)), PT.F32, pt)
    exponent_bits, mantissa_bits = int(_attr(c, "exponent_bits")), int(_attr(c, "mantissa_bits"))
    if exponent_bits < 1 or mantissa_bits < 0:
        raise UnsupportedError("reduce-precision",
                               f"exponent_bits={exponent_bits}, mantissa_bits={mantissa_bits}")
    b, fmt = c.b, _FORMATS[pt]
    bits = _to_bits(b, x, pt)
    ity = bits.type
    k = lambda v: _const(ity, v)                                   # noqa: E731
    mag_mask = (1 << (fmt.bits - 1)) - 1
    is_nan = b.icmp_unsigned(">", b.and_(bits, k(mag_mask)), k(fmt.inf))
    if mantissa_bits < fmt.mantissa:
        drop = fmt.mantissa - mantissa_bits
        # Round in place; a carry out of the mantissa correctly bumps the exponent.
        rounded = _round_shift_right(b, bits, k(drop))
        bits = b.shl(rounded, k(drop))
    if exponent_bits < fmt.exponent:
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        max_exp = (fmt.bias + reduced_bias) << fmt.mantissa
        min_exp = (fmt.bias - reduced_bias) << fmt.mantissa
        exp = b.and_(bits, k(fmt.inf))
        signed_zero = b.and_(bits, k(1 << (fmt.bits - 1)))
        signed_inf = b.or_(signed_zero, k(fmt.inf))
        bits = b.select(b.icmp_unsigned(">", exp, k(max_exp)), signed_inf, bits)
        bits = b.select(b.icmp_unsigned("<=", exp, k(min_exp)), signed_zero, bits)
    return b.select(is_nan, x, _from_bits(b, bits, pt))


_CONVERSIONS: dict = {
    "convert": _convert,
    "bitcast-convert": _bitcast_convert,
    "reduce-precision": _reduce_precision,
}


# ----------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------

def emits(opcode: str, pt: PT) -> bool:
    """Whether :func:`emit_elementwise` emits ``opcode`` over element type ``pt``."""
    try:
        return _kind(pt) in element_kinds(opcode)
    except UnsupportedError:
        return False


def element_kinds(opcode: str) -> frozenset:
    """The kinds of element type (``"pred"``, ``"int"``, ``"float"``,
    ``"complex"``) this module emits elementwise ``opcode`` for (the support
    matrix, docs/ops.md)."""
    if opcode in _CONVERSIONS:
        return frozenset((PRED, INT, FLOAT, COMPLEX))
    return frozenset(_OPS.get(opcode, {}))


#: IEEE arithmetic: x86 returns a NaN result quiet, with the payload of a NaN
#: operand or the default NaN's (low 16 bits zero when the operands' are).
_QUIETING_ARITHMETIC = frozenset({"add", "subtract", "multiply", "divide"})


def _rounds_quiet_nans(opcode: str, operands: list, operand_types: list) -> bool:
    """Whether the f32 result of bf16 op ``opcode`` on ``operands`` (register
    values, before widening) can be NaN only as a quiet NaN with its low 16
    bits zero, so that its rounding needs no NaN case.  Widened bf16 operands
    have those bits zero, and the instruction quiets.  LLVM may fold an op
    with a constant (``x * 1``, ``x + -0``, ``x * -1``; or one arm of a select
    with a constant arm) into ``x`` or ``-x``, which keeps a signaling NaN
    signaling, so ops with an operand that may be constant keep the NaN case."""
    return opcode in _QUIETING_ARITHMETIC and all(t is PT.BF16 for t in operand_types) \
        and not any(_maybe_constant(v) for v in operands)


#: :func:`_maybe_constant`'s answers, so that a long fused chain is walked once.
_MAYBE_CONSTANT: "weakref.WeakKeyDictionary[ir.Value, bool]" = weakref.WeakKeyDictionary()


def _maybe_constant(v, depth: int = 0) -> bool:
    """Whether LLVM may find that ``v`` (or, for a select or phi, one of its
    values) is a constant: an LLVM constant, a load from a constant global (a
    constant array whose elements are all equal folds), or an instruction of
    such values.  A load from other memory, an argument, or a call without
    arguments is not.  Past 200 steps the answer is yes (the safe one)."""
    if isinstance(v, ir.Constant):
        return True
    if not isinstance(v, ir.Instruction):
        return False
    known = _MAYBE_CONSTANT.get(v)
    if known is not None:
        return known
    if depth > 200:
        return True
    if isinstance(v, ir.LoadInstr):
        ptr = v.operands[0]
        while isinstance(ptr, (ir.GEPInstr, ir.CastInstr)):
            ptr = ptr.operands[0]
        answer = isinstance(ptr, ir.GlobalVariable) and bool(ptr.global_constant)
    elif isinstance(v, ir.SelectInstr):
        answer = any(_maybe_constant(arm, depth + 1) for arm in v.operands[1:])
    elif isinstance(v, ir.PhiInstr):
        _MAYBE_CONSTANT[v] = False          # a loop's phi reaches itself
        answer = any(_maybe_constant(value, depth + 1) for value, _ in v.incomings)
    else:
        values = [op for op in v.operands if not isinstance(op, (ir.Function, ir.Block))]
        answer = bool(values) and all(_maybe_constant(op, depth + 1) for op in values)
    _MAYBE_CONSTANT[v] = answer
    return answer


def emit_elementwise(builder: ir.IRBuilder, opcode: str, operands: list, operand_types: list,
                     result_type: PT, attrs: dict | None = None) -> ir.Value:
    """Emit one element of elementwise HLO op ``opcode`` at the builder's position.

    ``operands`` are register-type values of element types ``operand_types``
    (select: ``(pred, on_true, on_false)``; clamp: ``(min, operand, max)``). ``attrs``
    carries ``direction`` and ``type`` for compare, ``exponent_bits`` and
    ``mantissa_bits`` for reduce-precision. Returns the result in register type of
    ``result_type``. Raises :class:`UnsupportedError` for an opcode or element type
    it does not handle.
    """
    attrs = attrs or {}
    info = opcodes.OPCODES.get(opcode)
    if info is None or not info.is_elementwise:
        raise UnsupportedError(opcode, "not an elementwise op")
    if len(operands) != len(operand_types) or (info.arity is not None and len(operands) != info.arity):
        raise ValueError(f"{opcode}: expected {info.arity} operands with types, got "
                         f"{len(operands)} operands and {len(operand_types)} types")
    for value, pt in zip(operands, operand_types):
        if value.type != register_type(pt):
            raise TypeError(f"{opcode}: operand of type {pt.value} must be {register_type(pt)}, "
                            f"got {value.type}")
    c = _Ctx(builder, opcode, operand_types, result_type, attrs)
    if opcode in _CONVERSIONS:
        return _CONVERSIONS[opcode](c, *operands)
    emitters = _OPS.get(opcode)
    if emitters is None:
        raise UnsupportedError(opcode, "no scalar emitter")
    emit = emitters.get(_kind(c.t))
    if emit is None:
        raise UnsupportedError(opcode, f"for {c.t.value}")
    if opcode != "select" and len(set(operand_types)) != 1:
        raise ValueError(f"{opcode}: operand types differ: {[t.value for t in operand_types]}")
    if c.t.is_narrow_float and opcode not in _NO_WIDENING:
        # Compute in f32 and round the result back after every op.
        raw_operands = operands
        fpext = opcode not in NARROWED_BY_LLVM
        operands = [widen_to_f32(builder, v, t, fpext) for v, t in zip(operands, operand_types)]
        if c.t is PT.BF16 and result_type is PT.BF16 and opcode in math_approx.ROUNDED_TO_BF16 \
                and not math_approx.exact_math():
            # The approximation rounds its own result (cheaper, same bits).
            return _bf16_of_exact_f32(builder, math_approx.emit_bf16(builder, opcode, operands[0]))
        c.types = [PT.F32 if t.is_narrow_float else t for t in operand_types]
        if result_type.is_narrow_float and opcode in math_approx.NARROW_RESULT and not math_approx.exact_math():
            value = math_approx.emit_for_narrow(builder, opcode, operands[0])
        else:
            value = emit(c, *operands)
        if result_type is PT.BF16 and _rounds_quiet_nans(opcode, raw_operands, operand_types):
            return _f32_to_bf16(builder, value, quiet_nan_of_bf16=True)
        if result_type.is_narrow_float:
            value = _round_to_small(builder, value, PT.F32, result_type)
        return value
    return emit(c, *operands)
