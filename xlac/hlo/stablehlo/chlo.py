"""The ``chlo`` ops jax still leaves in StableHLO, as XLA's chlo legaliser
expands them (``chlo_legalize_to_stablehlo``): into HLO ops with the same
numerics.  Those XLA has opcodes for (``chlo.asin``, ``chlo.erf``, ...) are
element-wise converters in ``ops.py``.
"""
from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError
from ...shape import PrimitiveType, Shape
from .importer import OpContext, converter


@converter("chlo.square")
def _square(ctx: OpContext) -> list:
    (x,) = ctx.operands
    return [ctx.add("multiply", ctx.result_shape(), [x, x])]


@converter("chlo.top_k", "mhlo.topk")
def _top_k(ctx: OpContext) -> list:
    k = int(ctx.attr("k"))
    largest = ctx.attr("largest", default=True)
    shapes = ctx.result_shapes()
    top = ctx.add("topk", Shape.tuple(shapes), ctx.operands, {"k": k, "largest": bool(largest)})
    return ctx.results_of(top)


class _Expr:
    """Element-wise HLO on values of one shape, for the expansions below:
    ``e.c(2.0)`` a constant of that shape, ``e.op("add", a, b)`` an instruction."""

    def __init__(self, ctx: OpContext, like):
        self.ctx, self.shape = ctx, like.shape
        self.pred = Shape(PrimitiveType.PRED, like.shape.dimensions)

    def c(self, value, shape: Shape | None = None):
        shape = shape or self.shape
        scalar = Shape(shape.element_type, ())
        k = self.ctx.add("constant", scalar, [], {"literal": np.array(value).astype(scalar.dtype).reshape(())})
        return k if shape.rank == 0 else self.ctx.add("broadcast", shape, [k], {"dimensions": ()})

    def op(self, opcode: str, *args, shape: Shape | None = None):
        return self.ctx.add(opcode, shape or args[0].shape, list(args))

    def cmp(self, direction: str, a, b):
        return self.ctx.add("compare", Shape(PrimitiveType.PRED, a.shape.dimensions), [a, b],
                            {"direction": direction})

    def sel(self, p, a, b):
        return self.ctx.add("select", a.shape, [p, a, b])

    def convert(self, a, et: PrimitiveType):
        return self.ctx.add("convert", Shape(et, a.shape.dimensions), [a])

    def horner(self, coefficients, w):
        p = self.c(coefficients[0], w.shape)
        for k in coefficients[1:]:
            p = self.op("add", self.c(k, w.shape), self.op("multiply", p, w))
        return p


def _in_f32(ctx: OpContext, x, body):
    """``body(e, x)`` computed in f32 for f16/bf16 (as XLA's chlo legaliser does), else in x's type."""
    et = x.shape.element_type
    if et in (PrimitiveType.F32, PrimitiveType.F64):
        return body(_Expr(ctx, x), x)
    if not et.is_float:
        raise UnsupportedError(ctx.name, f"element type {et.value}")
    e = _Expr(ctx, x)
    wide = e.convert(x, PrimitiveType.F32)
    return e.convert(body(_Expr(ctx, wide), wide), et)


#: Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): the
#: single-precision polynomials in w = -log(1 - x^2), for w < 5 and w >= 5.
_ERFINV_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                 -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erf_inv_poly(e: _Expr, x):
    w = e.op("negate", e.op("log-plus-one", e.op("multiply", x, e.op("negate", x))))
    small = e.cmp("LT", w, e.c(5.0))
    ws = e.sel(small, e.op("subtract", w, e.c(2.5)), e.op("subtract", e.op("sqrt", w), e.c(3.0)))
    p = e.c(_ERFINV_SMALL[0])
    p = e.sel(small, p, e.c(_ERFINV_LARGE[0]))
    for a, b in zip(_ERFINV_SMALL[1:], _ERFINV_LARGE[1:]):
        p = e.op("add", e.sel(small, e.c(a), e.c(b)), e.op("multiply", p, ws))
    y = e.op("multiply", p, x)
    # erfinv(+-1) = +-inf
    at_one = e.cmp("EQ", e.op("abs", x), e.c(1.0))
    return e.sel(at_one, e.op("multiply", x, e.c(np.inf)), y)


@converter("chlo.erf_inv")
def _erf_inv(ctx: OpContext) -> list:
    """f32 (f16/bf16 through f32): Giles' polynomial, as XLA.  f64: the same
    polynomial evaluated in f64, then two Newton steps on erf(y) = x (each
    squares the relative error: ~1e-7 -> 1e-14 -> f64 rounding; within about
    1e-11 relative as |x| nears 1, where erf(y) - x cancels)."""
    (x,) = ctx.operands

    def body(e: _Expr, x):
        y = _erf_inv_poly(e, x)
        if x.shape.element_type is PrimitiveType.F64:
            two_over_sqrt_pi = e.c(2.0 / np.sqrt(np.pi))
            for _ in range(2):
                deriv = e.op("multiply", two_over_sqrt_pi, e.op("exponential", e.op("negate", e.op("multiply", y, y))))
                step = e.op("divide", e.op("subtract", e.op("erf", y), x), deriv)
                finite = e.op("is-finite", step, shape=e.pred)
                y = e.sel(finite, e.op("subtract", y, step), y)
        return y
    return [_in_f32(ctx, x, body)]


#: Lanczos approximation, g = 7, n = 9 (Godfrey's coefficients), as XLA's lgamma
#: and digamma use.
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)


def _lanczos_parts(e: _Expr, x):
    """(need_reflect, z, t, log_t) of the Lanczos evaluation at x (reflected below 1/2)."""
    need_reflect = e.cmp("LT", x, e.c(0.5))
    z = e.sel(need_reflect, e.op("negate", x), e.op("subtract", x, e.c(1.0)))
    t = e.op("add", e.c(_LANCZOS_G + 0.5), z)
    log_t = e.op("add", e.c(np.log(_LANCZOS_G + 0.5)),
                 e.op("log-plus-one", e.op("divide", z, e.c(_LANCZOS_G + 0.5))))
    return need_reflect, z, t, log_t


@converter("chlo.lgamma")
def _lgamma(ctx: OpContext) -> list:
    (x,) = ctx.operands

    def body(e: _Expr, x):
        need_reflect, z, t, log_t = _lanczos_parts(e, x)
        a = e.c(_LANCZOS[0])
        for k, coeff in enumerate(_LANCZOS[1:], start=1):
            a = e.op("add", a, e.op("divide", e.c(coeff), e.op("add", z, e.c(float(k)))))
        # log(gamma(z + 1)) = log(sqrt(2 pi)) + (z + 1/2 - t / log_t) * log_t + log(a)
        log_y = e.op("add", e.op("add", e.c(0.5 * np.log(2 * np.pi)),
                                 e.op("multiply", e.op("subtract", e.op("add", z, e.c(0.5)),
                                                       e.op("divide", t, log_t)), log_t)),
                     e.op("log", a))
        # Reflection: lgamma(x) = log(pi) - log|sin(pi x)| - lgamma(1 - x), sin taken on
        # the fraction of |x| folded into [0, 1/2] for accuracy.
        ax = e.op("abs", x)
        frac = e.op("subtract", ax, e.op("floor", ax))
        frac = e.sel(e.cmp("LT", e.c(0.5), frac), e.op("subtract", e.c(1.0), frac), frac)
        denom = e.op("log", e.op("sine", e.op("multiply", e.c(np.pi), frac)))
        reflection = e.sel(e.op("is-finite", denom, shape=e.pred),
                           e.op("subtract", e.op("subtract", e.c(np.log(np.pi)), denom), log_y),
                           e.op("negate", denom))
        result = e.sel(need_reflect, reflection, log_y)
        return e.sel(e.cmp("EQ", ax, e.c(np.inf)), e.c(np.inf), result)
    return [_in_f32(ctx, x, body)]


@converter("chlo.digamma")
def _digamma(ctx: OpContext) -> list:
    (x,) = ctx.operands

    def body(e: _Expr, x):
        need_reflect, z, t, log_t = _lanczos_parts(e, x)
        num, denom = e.c(0.0), e.c(_LANCZOS[0])
        for k, coeff in enumerate(_LANCZOS[1:], start=1):
            zk = e.op("add", z, e.c(float(k)))
            num = e.op("subtract", num, e.op("divide", e.c(coeff), e.op("multiply", zk, zk)))
            denom = e.op("add", denom, e.op("divide", e.c(coeff), zk))
        # digamma(z + 1) = log_t + num / denom - g / t
        y = e.op("subtract", e.op("add", log_t, e.op("divide", num, denom)),
                 e.op("divide", e.c(_LANCZOS_G), t))
        # Reflection: digamma(x) = digamma(1 - x) - pi cot(pi x), with x moved near 0.
        reduced = e.op("add", x, e.op("abs", e.op("floor", e.op("add", x, e.c(0.5)))))
        arg = e.op("multiply", e.c(np.pi), reduced)
        cot = e.op("divide", e.op("multiply", e.c(np.pi), e.op("cosine", arg)), e.op("sine", arg))
        result = e.sel(need_reflect, e.op("subtract", y, cot), y)
        # poles at the non-positive integers
        pole = e.op("and", e.cmp("LE", x, e.c(0.0)), e.cmp("EQ", x, e.op("floor", x)))
        return e.sel(pole, e.c(np.nan), result)
    return [_in_f32(ctx, x, body)]


@converter("chlo.next_after")
def _next_after(ctx: OpContext) -> list:
    """The next representable value after x towards y, on the bits (XLA's NextAfter)."""
    x, y = ctx.operands
    et = x.shape.element_type
    if not et.is_float:
        raise UnsupportedError(ctx.name, f"element type {et.value}")
    bits = {16: PrimitiveType.S16, 32: PrimitiveType.S32, 64: PrimitiveType.S64}[et.bit_width]
    e = _Expr(ctx, x)
    ishape = Shape(bits, x.shape.dimensions)

    def ic(v):
        return e.c(v, ishape)

    def bc(a, shape):
        return ctx.add("bitcast-convert", shape, [a])
    nbits = et.bit_width
    sign_mask, magnitude_mask = ic(-(1 << (nbits - 1))), ic((1 << (nbits - 1)) - 1)
    xb, yb = bc(x, ishape), bc(y, ishape)
    nan = e.op("or", e.cmp("NE", x, x), e.cmp("NE", y, y))
    x_mag, y_mag = e.op("and", xb, magnitude_mask), e.op("and", yb, magnitude_mask)
    x_sign, y_sign = e.op("and", xb, sign_mask), e.op("and", yb, sign_mask)
    # from +-0: the smallest subnormal with y's sign (or y itself when y is 0 too)
    from_zero = e.sel(e.cmp("EQ", y_mag, ic(0)), yb, e.op("or", y_sign, ic(1)))
    # away from zero when |x| > |y| or the signs differ: one ulp down in magnitude
    down = e.op("or", e.cmp("GT", x_mag, y_mag), e.cmp("NE", x_sign, y_sign))
    stepped = e.op("add", xb, e.sel(down, ic(-1), ic(1)))
    result = e.sel(e.cmp("EQ", x_mag, ic(0)), from_zero, stepped)
    result = e.sel(e.cmp("EQ", x, y), yb, result)
    result = e.sel(nan, bc(e.c(np.nan), ishape), result)
    return [bc(result, x.shape)]
