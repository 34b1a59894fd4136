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


#: Giles' double-precision polynomials: in w - 3.125 for w < 6.25, in sqrt(w) - 3.25
#: for w < 16, in sqrt(w) - 5 beyond (XLA's ErfInv64).
_ERFINV64 = (
    (6.25, lambda e, w: e.op("subtract", w, e.c(3.125)), (
        -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
        1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
        6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693, 1.6536545626831027356)),
    (16.0, lambda e, w: e.op("subtract", e.op("sqrt", w), e.c(3.25)), (
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635)),
    (np.inf, lambda e, w: e.op("subtract", e.op("sqrt", w), e.c(5.0)), (
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221)),
)


def _erf_inv_f64(e: _Expr, x):
    w = e.op("negate", e.op("log-plus-one", e.op("multiply", x, e.op("negate", x))))
    y = None
    for bound, shift, coefficients in reversed(_ERFINV64):     # the last regime first
        p = e.horner(coefficients, shift(e, w))
        y = p if y is None else e.sel(e.cmp("LT", w, e.c(bound)), p, y)
    y = e.op("multiply", y, x)
    at_one = e.cmp("EQ", e.op("abs", x), e.c(1.0))
    return e.sel(at_one, e.op("multiply", x, e.c(np.inf)), y)


@converter("chlo.erf_inv")
def _erf_inv(ctx: OpContext) -> list:
    """Giles' polynomials, as XLA: single precision for f32 (and f16/bf16 through
    f32), double precision for f64."""
    (x,) = ctx.operands

    def body(e: _Expr, x):
        if x.shape.element_type is PrimitiveType.F64:
            return _erf_inv_f64(e, x)
        return _erf_inv_poly(e, x)
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
