"""The ``chlo`` dialect (openxla/stablehlo ``stablehlo/dialect/ChloOps.td``), as
XLA's chlo legaliser imports it (``ChloLegalizeToStablehlo.cpp`` and the
decomposition patterns ``ChloDecompositionPatterns*.td``): every op becomes the
HLO op XLA has for it (``erf``, ``topk``, ``mulhi``, ``ragged-dot``, ``scan``,
the inverse and hyperbolic trigonometric opcodes on real values) or the same
polynomial / series expansion into HLO ops XLA:CPU runs, so results agree with
jax's on the CPU within rounding.

The element-wise ops are one table, :data:`ELEMENTWISE`, keyed by op name: for
real and for complex operands an HLO opcode or an expansion, and whether f16 and
bf16 are computed in f32 (XLA's ``materializeWithUpcast``).  The ``broadcast_*``
ops (:data:`BROADCASTING`) broadcast their operands numpy-style (or along
``broadcast_dimensions``) and apply the op they name.  Expansions are written
with :class:`_V`, an HLO value with Python's arithmetic operators.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...errors import ShapeError
from ...shape import PrimitiveType, Shape
from .importer import ImportProblem, OpContext, _enum, _fields, _ints, converter
from .ops import broadcast_to, constant_converter
from .syntax import ArrayAttr, DialectAttr

PT = PrimitiveType


# ---------------------------------------------------------------------------
# values with operators, for writing the expansions
# ---------------------------------------------------------------------------

class _V:
    """An HLO instruction in an expansion.  ``a + 2``, ``a < b``, ``p & q``, ``~p``
    build instructions; a Python number becomes a constant of the other side's type."""

    __slots__ = ("m", "inst")
    __array_ufunc__ = None       # ``np.float64(2) * v`` is v.__rmul__, not a numpy object array

    def __init__(self, m: "_Math", inst):
        self.m, self.inst = m, inst

    @property
    def shape(self) -> Shape:
        return self.inst.shape

    @property
    def et(self) -> PT:
        return self.inst.shape.element_type

    def _v(self, other) -> "_V":
        return other if isinstance(other, _V) else self.m.const(other, self)

    def _bin(self, opcode, other, swap=False):
        other = self._v(other)
        return self.m.op(opcode, other, self) if swap else self.m.op(opcode, self, other)

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, swap=True)
    def __sub__(self, o): return self._bin("subtract", o)
    def __rsub__(self, o): return self._bin("subtract", o, swap=True)
    def __mul__(self, o): return self._bin("multiply", o)
    def __rmul__(self, o): return self._bin("multiply", o, swap=True)
    def __truediv__(self, o): return self._bin("divide", o)
    def __rtruediv__(self, o): return self._bin("divide", o, swap=True)
    def __neg__(self): return self.m.op("negate", self)
    def __and__(self, o): return self._bin("and", o)
    def __or__(self, o): return self._bin("or", o)
    def __invert__(self): return self.m.op("not", self)
    def __lt__(self, o): return self.m.cmp("LT", self, self._v(o))
    def __le__(self, o): return self.m.cmp("LE", self, self._v(o))
    def __gt__(self, o): return self.m.cmp("GT", self, self._v(o))
    def __ge__(self, o): return self.m.cmp("GE", self, self._v(o))
    def eq(self, o): return self.m.cmp("EQ", self, self._v(o))
    def ne(self, o): return self.m.cmp("NE", self, self._v(o))


class _Math:
    """Builds the expansions' instructions in the op's computation."""

    def __init__(self, ctx: OpContext):
        self.ctx = ctx

    def const(self, value, like: _V, et: PT | None = None) -> _V:
        """``value`` in every element of ``like``'s shape (of type ``et`` if given)."""
        shape = like.shape.with_element_type(et or like.et)
        scalar = Shape(shape.element_type, ())
        with np.errstate(over="ignore", invalid="ignore"):       # 1e308 in f32 is inf, as in XLA
            literal = np.array(value).astype(scalar.dtype).reshape(())
        k = self.ctx.add("constant", scalar, [], {"literal": literal})
        return _V(self, k if shape.rank == 0 else self.ctx.add("broadcast", shape, [k], {"dimensions": ()}))

    def op(self, opcode: str, *args: _V, et: PT | None = None, attrs: dict | None = None) -> _V:
        shape = args[0].shape if et is None else args[0].shape.with_element_type(et)
        return _V(self, self.ctx.add(opcode, shape, [a.inst for a in args], attrs))

    def cmp(self, direction: str, a: _V, b: _V) -> _V:
        return self.op("compare", a, b, et=PT.PRED, attrs={"direction": direction})

    def select(self, p: _V, a, b) -> _V:
        a = a if isinstance(a, _V) else self.const(a, b)
        b = b if isinstance(b, _V) else self.const(b, a)
        return self.op("select", p, a, b, et=a.et)

    def convert(self, x: _V, et: PT) -> _V:
        return self.op("convert", x, et=et)

    def bitcast(self, x: _V, et: PT) -> _V:
        return self.op("bitcast-convert", x, et=et)

    def real(self, z: _V) -> _V:
        return self.op("real", z, et=z.et.component_type)

    def imag(self, z: _V) -> _V:
        return self.op("imag", z, et=z.et.component_type)

    def complex(self, re_: _V, im: _V) -> _V:
        return self.op("complex", re_, im, et=PT.C128 if re_.et is PT.F64 else PT.C64)

    def abs(self, x: _V) -> _V:
        return self.op("abs", x, et=x.et.component_type)

    def largest(self, like: _V) -> _V:
        return self.const(np.finfo(like.shape.dtype).max, like)

    def __getattr__(self, name: str):
        """``m.sqrt(x)``, ``m.atan2(y, x)``, ...: the HLO op of that (short) name."""
        opcode = _FUNCTIONS.get(name)
        if opcode is None:
            raise AttributeError(name)
        return lambda *args: self.op(opcode, *args)


_FUNCTIONS = {"sqrt": "sqrt", "log": "log", "log1p": "log-plus-one", "exp": "exponential",
              "expm1": "exponential-minus-one", "sin": "sine", "cos": "cosine", "floor": "floor",
              "sign": "sign", "atan2": "atan2", "max": "maximum", "min": "minimum", "pow": "power",
              "rem": "remainder"}


def _is_finite(m: _Math, x: _V) -> _V:
    return m.op("is-finite", x, et=PT.PRED)


def _horner(x: _V, coefficients) -> _V:
    """c0 x^n + c1 x^(n-1) + ... (XLA's ``materializePolynomialApproximation``)."""
    p = x.m.const(coefficients[0], x)
    for c in coefficients[1:]:
        p = p * x + c
    return p


# ---------------------------------------------------------------------------
# erf, erfc, erf_inv (Cephes' and Giles' polynomials, as XLA)
# ---------------------------------------------------------------------------

_ERFC_F64_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
               4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
               9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
_ERFC_F64_Q = (1.00000000000000000000E0, 1.32281951154744992508E1, 8.67072140885989742329E1,
               3.54937778887819891062E2, 9.75708501743205489753E2, 1.82390916687909736289E3,
               2.24633760818710981792E3, 1.65666309194161350182E3, 5.57535340817727675546E2)
_ERFC_F64_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
               6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
_ERFC_F64_S = (1.00000000000000000000E0, 2.26052863220117276590E0, 9.39603524938001434673E0,
               1.20489539808096656605E1, 1.70814450747565897222E1, 9.60896809063285878198E0,
               3.36907645100081516050E0)
_ERF_F64_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
              7.00332514112805075473E3, 5.55923013010394962768E4)
_ERF_F64_U = (1.00000000000000000000E0, 3.35617141647503099647E1, 5.21357949780152679795E2,
              4.59432382970980127987E3, 2.26290000613890934246E4, 4.92673942608635921086E4)
_ERFC_F32_P = (+2.326819970068386E-2, -1.387039388740657E-1, +3.687424674597105E-1, -5.824733027278666E-1,
               +6.210004621745983E-1, -4.944515323274145E-1, +3.404879937665872E-1, -2.741127028184656E-1,
               +5.638259427386472E-1)
_ERFC_F32_R = (-1.047766399936249E+1, +1.297719955372516E+1, -7.495518717768503E+0, +2.921019019210786E+0,
               -1.015265279202700E+0, +4.218463358204948E-1, -2.820767439740514E-1, +5.641895067754075E-1)
_ERF_F32_T = (+7.853861353153693E-5, -8.010193625184903E-4, +5.188327685732524E-3, -2.685381193529856E-2,
              +1.128358514861418E-1, -3.761262582423300E-1, +1.128379165726710E+0)


def _erfc_tail(m: _Math, x: _V, approx: _V, z: _V, maxlog: float) -> _V:
    """erfc for |x| >= 1 from ``approx`` of erfc(|x|): 0 where exp(-x^2)
    underflows, 2 - erfc(-x) for negative x."""
    clamped = m.select(z < -maxlog, 0.0, approx)
    return m.select(x < 0.0, 2.0 - clamped, clamped)


def _erfc_ge1_f64(m: _Math, x: _V) -> _V:
    z = -(x * x)
    exp_z, ax = m.exp(z), m.abs(x)
    in_1_8 = exp_z * _horner(ax, _ERFC_F64_P) / _horner(ax, _ERFC_F64_Q)
    beyond_8 = exp_z * _horner(ax, _ERFC_F64_R) / _horner(ax, _ERFC_F64_S)
    return _erfc_tail(m, x, m.select(ax < 8.0, in_1_8, beyond_8), z, 7.09782712893383996843E2)


def _erf_le1_f64(m: _Math, x: _V) -> _V:
    xx = x * x
    return x * _horner(xx, _ERF_F64_T) / _horner(xx, _ERF_F64_U)


def _erfc_ge1_f32(m: _Math, x: _V) -> _V:
    xx = x * x
    z = -xx
    ax = m.abs(x)
    rxx = 1.0 / xx
    scale = m.exp(z) * (1.0 / ax)
    poly = m.select(ax < 2.0, _horner(rxx, _ERFC_F32_P), _horner(rxx, _ERFC_F32_R))
    return _erfc_tail(m, x, scale * poly, z, 88.72283905206835)


def _erf_le1_f32(m: _Math, x: _V) -> _V:
    return x * _horner(x * x, _ERF_F32_T)


def _erfc(m: _Math, x: _V) -> _V:
    """1 - erf(x) below |x| = 1, the erfc polynomials above (Cephes)."""
    f64 = x.et is PT.F64
    near = 1.0 - (_erf_le1_f64 if f64 else _erf_le1_f32)(m, x)
    far = (_erfc_ge1_f64 if f64 else _erfc_ge1_f32)(m, x)
    return m.select(m.abs(x) < 1.0, near, far)


#: Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): the
#: single-precision polynomials in w = -log(1 - x^2), for w < 5 and w >= 5.
_ERFINV_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                 -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)

#: Giles' double-precision polynomials: in w - 3.125 for w < 6.25, in sqrt(w) - 3.25
#: for w < 16, in sqrt(w) - 5 beyond (XLA's ErfInv64).
_ERFINV64 = (
    (6.25, lambda m, w: w - 3.125, (
        -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
        1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
        6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693, 1.6536545626831027356)),
    (16.0, lambda m, w: m.sqrt(w) - 3.25, (
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635)),
    (np.inf, lambda m, w: m.sqrt(w) - 5.0, (
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221)),
)


def _erf_inv(m: _Math, x: _V) -> _V:
    """Giles' polynomials: single precision for f32 (and f16/bf16 through f32),
    double precision for f64; erf_inv(+-1) = +-inf."""
    w = -m.log1p(x * -x)
    if x.et is PT.F64:
        y = None
        for bound, shift, coefficients in reversed(_ERFINV64):     # the last regime first
            p = _horner(shift(m, w), coefficients)
            y = p if y is None else m.select(w < bound, p, y)
    else:
        small = w < 5.0
        ws = m.select(small, w - 2.5, m.sqrt(w) - 3.0)
        y = m.select(small, _ERFINV_SMALL[0], m.const(_ERFINV_LARGE[0], x))
        for a, b in zip(_ERFINV_SMALL[1:], _ERFINV_LARGE[1:]):
            y = m.select(small, a, m.const(b, x)) + y * ws
    return m.select(m.abs(x).eq(1.0), x * np.inf, y * x)


# ---------------------------------------------------------------------------
# lgamma, digamma, zeta, polygamma (Lanczos; Hurwitz zeta by Euler-Maclaurin)
# ---------------------------------------------------------------------------

#: Lanczos approximation, g = 7, n = 9 (Godfrey's coefficients), as XLA's lgamma
#: and digamma use.
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)


def _lanczos_parts(m: _Math, x: _V) -> tuple:
    """(need_reflect, z, t, log_t) of the Lanczos evaluation at x (reflected below 1/2)."""
    need_reflect = x < 0.5
    z = m.select(need_reflect, -x, x - 1.0)
    t = z + (_LANCZOS_G + 0.5)
    log_t = np.log(_LANCZOS_G + 0.5) + m.log1p(z / (_LANCZOS_G + 0.5))
    return need_reflect, z, t, log_t


def _lgamma(m: _Math, x: _V) -> _V:
    need_reflect, z, t, log_t = _lanczos_parts(m, x)
    a = m.const(_LANCZOS[0], x)
    for k, coeff in enumerate(_LANCZOS[1:], start=1):
        a = a + coeff / (z + float(k))
    # log(gamma(z + 1)) = log(sqrt(2 pi)) + (z + 1/2 - t / log_t) * log_t + log(a)
    log_y = (0.5 * np.log(2 * np.pi) + (z + 0.5 - t / log_t) * log_t) + m.log(a)
    # Reflection: lgamma(x) = log(pi) - log|sin(pi x)| - lgamma(1 - x), sin taken on
    # the fraction of |x| folded into [0, 1/2] for accuracy.
    ax = m.abs(x)
    frac = ax - m.floor(ax)
    frac = m.select(frac > 0.5, 1.0 - frac, frac)
    denom = m.log(m.sin(np.pi * frac))
    reflection = m.select(_is_finite(m, denom), np.log(np.pi) - denom - log_y, -denom)
    result = m.select(need_reflect, reflection, log_y)
    return m.select(ax.eq(np.inf), np.inf, result)


def _digamma(m: _Math, x: _V) -> _V:
    need_reflect, z, t, log_t = _lanczos_parts(m, x)
    num, denom = m.const(0.0, x), m.const(_LANCZOS[0], x)
    for k, coeff in enumerate(_LANCZOS[1:], start=1):
        zk = z + float(k)
        num = num - coeff / (zk * zk)
        denom = denom + coeff / zk
    # digamma(z + 1) = log_t + num / denom - g / t
    y = log_t + num / denom - _LANCZOS_G / t
    # Reflection: digamma(x) = digamma(1 - x) - pi cot(pi x), with x moved near 0.
    reduced = x + m.abs(m.floor(x + 0.5))
    arg = np.pi * reduced
    result = m.select(need_reflect, y - np.pi * m.cos(arg) / m.sin(arg), y)
    # poles at the non-positive integers
    return m.select((x <= 0.0) & x.eq(m.floor(x)), np.nan, result)


#: The Euler-Maclaurin coefficients of XLA's Hurwitz zeta (12 terms, 9 iterations).
_ZETA_COEFFS = (-7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
                1.1646782814350067249e14, -2.950130727918164224e12, 7.47242496e10,
                -1.8924375803183791606e9, 47900160.0, -1209600.0, 30240.0, -720.0, 12.0)


def _zeta(m: _Math, x: _V, q: _V) -> _V:
    """Hurwitz zeta(x, q) (Johansson 2015, formula (5)), as XLA: a 10-term sum and
    a 12-term Euler-Maclaurin correction, with its poles and domain."""
    terms = len(_ZETA_COEFFS)
    neg_x = -x
    power_sum = m.pow(q, neg_x)
    acc = q
    for _ in range(9):
        acc = acc + 1.0
        power_sum = power_sum + m.pow(acc, neg_x)
    acc = acc + 1.0
    q_neg_power = m.pow(acc, neg_x)
    correction = q_neg_power * acc / (x - 1.0)
    inv_acc2 = 1.0 / (acc * acc)
    horner = m.const(0.0, q)
    for i in range(terms - 1):
        factor = (x + float(2 * terms - 2 - 2 * i)) * (x + float(2 * terms - 3 - 2 * i))
        horner = factor * (inv_acc2 * (horner + 1.0 / _ZETA_COEFFS[i]))
    tail = q_neg_power * (0.5 + x / acc * (1.0 / _ZETA_COEFFS[terms - 1] + horner))
    accurate = power_sum + correction + tail
    # The plain sum when the correction is below its precision.
    tiny = np.finfo(acc.shape.dtype).smallest_subnormal
    out = m.select(m.abs(q_neg_power) < m.abs(power_sum) * tiny, power_sum, accurate)
    out = m.select(x < 1.0, np.nan, out)                             # not defined below x = 1
    q_le_zero = q <= 0.0
    x_int = x.eq(m.floor(x))
    out = m.select(q_le_zero & x.ne(m.floor(x)), np.nan, out)       # q <= 0 needs an integer x
    even = x_int & m.rem(x, m.const(2.0, x)).eq(0.0)
    out = m.select(q_le_zero & q.eq(m.floor(q)), m.select(even, np.inf, m.const(np.nan, x)), out)   # poles
    return m.select(x.eq(1.0), np.inf, out)                          # the harmonic series


def _polygamma(m: _Math, n: _V, x: _V) -> _V:
    """(-1)^(n+1) n! zeta(n + 1, x); digamma for n = 0; NaN unless n is a natural number."""
    sign = 2.0 * m.rem(n, m.const(2.0, n)) - 1.0
    n1 = n + 1.0
    result = sign * m.exp(_lgamma(m, n1)) * _zeta(m, n1, x)
    result = m.select(n.eq(0.0), _digamma(m, x), result)
    return m.select(n.ne(m.floor(n)) | (n < 0.0), np.nan, result)


# ---------------------------------------------------------------------------
# bessel_i1e (Cephes' Chebyshev series), next_after, conj, is_*inf, square
# ---------------------------------------------------------------------------

_I1E_F32_A = (9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
              -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
              4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
              -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
              2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
              -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_F32_B = (-3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
              -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
              7.78576235018280120474E-1)
_I1E_F64_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
              -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
              3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
              -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9) + _I1E_F32_A
_I1E_F64_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
              -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
              -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
              4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
              -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
              3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10) + _I1E_F32_B


def _chebyshev(m: _Math, x: _V, coefficients) -> _V:
    b0 = b1 = b2 = m.const(0.0, x)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return (b0 - b2) * 0.5


def _bessel_i1e(m: _Math, x: _V) -> _V:
    """exp(-|x|) I1(x): Chebyshev series in |x|/2 - 2 up to 8, in 32/|x| - 2 beyond."""
    a, b = (_I1E_F64_A, _I1E_F64_B) if x.et is PT.F64 else (_I1E_F32_A, _I1E_F32_B)
    z = m.abs(x)
    near = z * _chebyshev(m, 0.5 * z - 2.0, a)
    far = _chebyshev(m, 32.0 / z - 2.0, b) / m.sqrt(z)
    return m.sign(x) * m.select(z <= 8.0, near, far)


def _next_after(m: _Math, x: _V, y: _V) -> _V:
    """The next representable value after x towards y, on the bits (XLA's NextAfter)."""
    nbits = x.et.bit_width
    it = {16: PT.S16, 32: PT.S32, 64: PT.S64}[nbits]
    xb, yb = m.bitcast(x, it), m.bitcast(y, it)
    sign_mask, magnitude_mask = -(1 << (nbits - 1)), (1 << (nbits - 1)) - 1
    x_mag, y_mag = xb & magnitude_mask, yb & magnitude_mask
    x_sign, y_sign = xb & sign_mask, yb & sign_mask
    # from +-0: the smallest subnormal with y's sign (or y itself when y is 0 too)
    from_zero = m.select(y_mag.eq(0), yb, y_sign | 1)
    # away from zero when |x| > |y| or the signs differ: one ulp down in magnitude
    stepped = xb + m.select((x_mag > y_mag) | x_sign.ne(y_sign), -1, m.const(1, xb))
    result = m.select(x_mag.eq(0), from_zero, stepped)
    result = m.select(x.eq(y), yb, result)
    result = m.select(x.ne(x) | y.ne(y), m.bitcast(m.const(np.nan, x), it), result)
    return m.bitcast(result, x.et)


def _conj(m: _Math, z: _V) -> _V:
    return m.complex(m.real(z), -m.imag(z))


def _square(m: _Math, x: _V) -> _V:
    return x * x


def _square_complex(m: _Math, z: _V) -> _V:
    """(x - y)(x + y) + 2xy i, with a real part of exactly 0 when |x| = |y|."""
    x, y = m.real(z), m.imag(z)
    re_ = m.select(_is_finite(m, x) & m.abs(x).eq(m.abs(y)), 0.0, (x - y) * (x + y))
    return m.complex(re_, 2.0 * (x * y))


# ---------------------------------------------------------------------------
# complex inverse and hyperbolic trigonometry (XLA's functional_algorithms
# expansions: a modified Hull et al. asin/acos kernel, atanh in safe regions)
# ---------------------------------------------------------------------------

def _hypot_like(m: _Math, u: _V, y: _V) -> _V:
    """hypot(u, y) for u, y >= 0 without overflow (the kernel's r and s)."""
    mx, mn = m.max(u, y), m.min(u, y)
    ratio = mn / mx
    r2 = ratio * ratio
    sqa = m.sqrt(1.0 + r2)
    close = m.select(sqa.eq(1.0) & (r2 > 0.0), mx + mx * r2 / 2.0, mx * sqa)
    return m.select(mx.eq(mn), 1.4142135623730951 * mx, close)


def _asin_acos_kernel(m: _Math, z: _V) -> _V:
    """complex(sqrt(a^2 - x^2), log(a + sqrt(a^2 - 1))), a = (hypot(x + 1, y) +
    hypot(x - 1, y)) / 2, for |x|, |y| of z, by approximation regions."""
    signed_x, signed_y = m.real(z), m.imag(z)
    x, y = m.abs(signed_x), m.abs(signed_y)
    safe_max = m.sqrt(m.largest(x)) / 8.0
    xp1, xm1 = x + 1.0, x - 1.0
    r, s = _hypot_like(m, m.abs(xp1), y), _hypot_like(m, m.abs(xm1), y)
    a = 0.5 * (r + s)
    half_apx = 0.5 * (a + x)
    yy = y * y
    rpxp1, smxm1, spxm1 = r + xp1, s - xm1, s + xm1
    real = m.select(m.max(x, y) >= safe_max, y,
                    m.select(x <= 1.0, m.sqrt(half_apx * (yy / rpxp1 + smxm1)),
                             y * m.sqrt(half_apx / rpxp1 + half_apx / spxm1)))
    safe_max_opt = m.select(x < safe_max * 1e12, safe_max * 1e-6, safe_max * 1e2)
    y_big = y >= safe_max_opt
    mx = m.select(y_big, y, x)
    xoy = m.select(y_big & ~y.eq(np.inf), x / y, m.const(0.0, x))
    log_big = m.log(m.const(2.0, x)) + m.log(mx) + 0.5 * m.log1p(xoy * xoy)
    tiny_y = (y < m.sqrt(m.const(np.finfo(x.shape.dtype).tiny, x)) * 4.0) & (x < 1.0)
    ap1 = a + 1.0
    half_yy = 0.5 * yy
    h = half_yy / rpxp1
    am1 = m.select(tiny_y, -(xp1 * xm1 / ap1),
                   m.select(x >= 1.0, h + 0.5 * spxm1, m.select(a <= 1.5, h + half_yy / smxm1, a - 1.0)))
    sq = m.sqrt(am1 * ap1)
    imag = m.select(mx >= m.select(y_big, safe_max_opt, safe_max), log_big,
                    m.select(tiny_y, y / sq, m.log1p(am1 + sq)))
    return m.complex(real, imag)


def _asin_complex(m: _Math, z: _V) -> _V:
    w = _asin_acos_kernel(m, z)
    im = m.imag(w)
    return m.complex(m.atan2(m.real(z), m.real(w)), m.select(m.imag(z) < 0.0, -im, im))


def _acos_complex(m: _Math, z: _V) -> _V:
    w = _asin_acos_kernel(m, z)
    im = m.imag(w)
    return m.complex(m.atan2(m.real(w), m.real(z)), m.select(m.imag(z) < 0.0, im, -im))


def _acosh_complex(m: _Math, z: _V) -> _V:
    w = _asin_acos_kernel(m, z)
    angle = m.atan2(m.real(w), m.real(z))
    return m.complex(m.imag(w), m.select(m.imag(z) < 0.0, -angle, angle))


def _asinh_complex(m: _Math, z: _V) -> _V:
    """-i asin(i z)."""
    x, y = m.real(z), m.imag(z)
    w = _asin_acos_kernel(m, m.complex(-y, x))
    im = m.imag(w)
    return m.complex(m.select(x < 0.0, -im, im), m.atan2(y, m.real(w)))


def _atanh_complex(m: _Math, z: _V) -> _V:
    """(log1p(z) - log1p(-z)) / 2 by regions: safe, |x| >> |y|, large, infinite."""
    x, y = m.real(z), m.imag(z)
    ax, ay = m.abs(x), m.abs(y)
    largest = m.largest(x)
    inv_negeps = m.select(largest > 1e308, 9007199254740994.0,
                          m.select(largest > 1e38, 16777218.0, m.const(2050.0, x)))
    safe_max = inv_negeps * inv_negeps
    safe = (ax < safe_max) & (ay < safe_max)
    naxm1 = 1.0 - ax
    y2 = y * y
    infinite = (x.eq(np.inf) | x.eq(-np.inf)) | (y.eq(np.inf) | y.eq(-np.inf))
    arg = m.select(safe, ax / (naxm1 * naxm1 + y2),
                   m.select(ay * inv_negeps < ax, 1.0 / ax,
                            m.select(infinite, 0.0, 1.0 / (ax / y + y / ax) / y)))
    real = m.select(x >= 0.0, 1.0, m.const(-1.0, x)) * m.log1p(4.0 * arg) * 0.25
    imag = m.select(safe, m.atan2(y + y, naxm1 * (1.0 + ax) - y2),
                    m.select(y >= 0.0, 1.0, m.const(-1.0, x)) * np.pi) * 0.5
    return m.complex(real, imag)


def _atan_complex(m: _Math, z: _V) -> _V:
    """-i atanh(i z)."""
    w = _atanh_complex(m, m.complex(-m.imag(z), m.real(z)))
    return m.complex(m.imag(w), -m.real(w))


def _exp_halves(m: _Math, z: _V) -> tuple:
    """(e^z / 2, e^-z / 2) as e^(z + log 1/2), e^(log 1/2 - z): no overflow where e^z / 2 fits."""
    log_half = m.log(m.const(0.5, z))
    return m.exp(z + log_half), m.exp(log_half - z)


def _sinh_complex(m: _Math, z: _V) -> _V:
    up, down = _exp_halves(m, z)
    return up - down


def _cosh_complex(m: _Math, z: _V) -> _V:
    up, down = _exp_halves(m, z)
    return up + down


# ---------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """How one element-wise chlo op is imported: for real (``real``) and complex
    (``complex``) operands an HLO opcode or an expansion ``fn(math, *operands)``
    (None: the op does not take such operands); ``takes``: the real element
    types it takes (``float``, ``int`` or ``any``); ``widen``: f16/bf16 computed
    in f32 and rounded back (XLA's ``materializeWithUpcast``)."""

    real: str | Callable | None
    complex: str | Callable | None = None
    takes: str = "float"
    widen: bool = False


def _same(m: _Math, x: _V) -> _V:
    return x


#: The element-wise chlo ops, by name.
ELEMENTWISE: dict[str, Rule] = {
    # XLA's opcodes for the real ones; the complex ones expanded as XLA does
    "acos": Rule("acos", _acos_complex),
    "acosh": Rule("acosh", _acosh_complex),
    "asin": Rule("asin", _asin_complex),
    "asinh": Rule("asinh", _asinh_complex),
    "atan": Rule("atan", _atan_complex),
    "atanh": Rule("atanh", _atanh_complex),
    "cosh": Rule("cosh", _cosh_complex),
    "sinh": Rule("sinh", _sinh_complex),
    "tan": Rule("tan", "tan"),
    "_asin_acos_kernel": Rule(None, _asin_acos_kernel),
    "erf": Rule("erf"),
    "erfc": Rule(_erfc, widen=True),
    "erf_inv": Rule(_erf_inv, widen=True),
    "lgamma": Rule(_lgamma, widen=True),
    "digamma": Rule(_digamma, widen=True),
    "polygamma": Rule(_polygamma, widen=True),
    "zeta": Rule(_zeta, widen=True),
    "bessel_i1e": Rule(_bessel_i1e, widen=True),
    "next_after": Rule(_next_after),
    "is_inf": Rule(lambda m, x: m.abs(x).eq(np.inf)),
    "is_pos_inf": Rule(lambda m, x: x.eq(np.inf)),
    "is_neg_inf": Rule(lambda m, x: x.eq(-np.inf)),
    "conj": Rule(_same, _conj, takes="any"),
    "square": Rule(_square, _square_complex, takes="any"),
    "mulhi": Rule("mulhi", takes="int"),
}

_TAKES = {"float": lambda t: t.is_float, "int": lambda t: t.is_integral,
          "any": lambda t: t.is_float or t.is_integral or t is PT.PRED}


def apply_elementwise(ctx: OpContext, name: str, operands: list, out: Shape):
    """The HLO of ``chlo.<name>`` on ``operands`` (of one shape), of type ``out``."""
    rule = ELEMENTWISE[name]
    et = operands[-1].shape.element_type
    how = rule.complex if et.is_complex else (rule.real if _TAKES[rule.takes](et) else None)
    if how is None or any(o.shape.element_type != et for o in operands):
        types = ", ".join(str(o.shape) for o in operands)
        raise ShapeError(f"chlo.{name}: operand types {types}: the op takes "
                         f"{_describe(rule)} operands of one element type")
    if isinstance(how, str):
        return ctx.add(how, out, operands)
    m = _Math(ctx)
    values = [_V(m, o) for o in operands]
    if rule.widen and et.is_float and et.bit_width < 32:
        result = how(m, *(m.convert(v, PT.F32) for v in values))
        return m.convert(result, et).inst
    return how(m, *values).inst


def _describe(rule: Rule) -> str:
    kinds = []
    if rule.real is not None:
        kinds.append({"float": "floating-point", "int": "integer", "any": "real"}[rule.takes])
    if rule.complex is not None:
        kinds.append("complex")
    return " or ".join(kinds)


def _elementwise(ctx: OpContext) -> list:
    return [apply_elementwise(ctx, ctx.name.split(".", 1)[1], ctx.operands, ctx.result_shape())]


for _name in ELEMENTWISE:
    converter(f"chlo.{_name}")(_elementwise)


# ---------------------------------------------------------------------------
# broadcasting ops
# ---------------------------------------------------------------------------

#: ``chlo.broadcast_<op>`` -> the HLO opcode, or the element-wise chlo op, it applies.
BROADCASTING = {
    "broadcast_add": "add", "broadcast_and": "and", "broadcast_atan2": "atan2", "broadcast_complex": "complex",
    "broadcast_divide": "divide", "broadcast_maximum": "maximum", "broadcast_minimum": "minimum",
    "broadcast_multiply": "multiply", "broadcast_or": "or", "broadcast_power": "power",
    "broadcast_remainder": "remainder", "broadcast_shift_left": "shift-left",
    "broadcast_shift_right_arithmetic": "shift-right-arithmetic",
    "broadcast_shift_right_logical": "shift-right-logical", "broadcast_subtract": "subtract",
    "broadcast_xor": "xor", "broadcast_compare": "compare", "broadcast_select": "select",
    "broadcast_next_after": "chlo.next_after", "broadcast_polygamma": "chlo.polygamma",
    "broadcast_zeta": "chlo.zeta",
}


def _broadcast_operands(ctx: OpContext, out: Shape) -> list:
    """The operands broadcast to ``out``'s dimensions: numpy's rules (trailing
    dimensions line up, size 1 stretches), or a lower-rank operand placed along
    ``broadcast_dimensions`` (XLA's binary-op broadcasting)."""
    given = ctx.attr("broadcast_dimensions", default=None)
    rank = out.rank
    result = []
    for x in ctx.operands:
        r = x.shape.rank
        if given is not None and 0 < r < rank:
            dims = _ints(given)
        else:
            dims = tuple(range(rank - r, rank))
        if len(dims) != r or any(not 0 <= d < rank for d in dims) or any(
                x.shape.dimensions[k] not in (1, out.dimensions[d]) for k, d in enumerate(dims)):
            raise ShapeError(f"{ctx.name}: operand shapes {', '.join(str(o.shape) for o in ctx.operands)} "
                             f"do not broadcast to {out} (each dimension must equal the result's or be 1"
                             + (f"; broadcast_dimensions={list(dims)})" if given is not None else ")"))
        result.append(broadcast_to(ctx, x, dims, out.with_element_type(x.shape.element_type)))
    return result


def _broadcasting(ctx: OpContext) -> list:
    out = ctx.result_shape()
    what = BROADCASTING[ctx.name.split(".", 1)[1]]
    operands = _broadcast_operands(ctx, out)
    if what.startswith("chlo."):
        return [apply_elementwise(ctx, what[5:], operands, out)]
    attrs = {}
    if what == "compare":
        attrs["direction"] = _enum(ctx.attr("comparison_direction"))
        ctype = ctx.attr("compare_type", default=None)
        if ctype is not None and _enum(ctype) != "NOTYPE":
            attrs["type"] = _enum(ctype)
    return [ctx.add(what, out, operands, attrs)]


for _name in BROADCASTING:
    converter(f"chlo.{_name}")(_broadcasting)


# ---------------------------------------------------------------------------
# the others: constants, top_k, ragged_dot, scan
# ---------------------------------------------------------------------------

converter("chlo.constant")(constant_converter)


@converter("chlo.constant_like")
def _constant_like(ctx: OpContext) -> list:
    """The value, of the operand's element type, in every element of its shape."""
    out = ctx.result_shape()
    value = ctx.attr("value")
    if isinstance(value, DialectAttr):            # #complex.number<:f32 1.0, 2.0>
        parts = re.findall(r"[-+]?(?:[0-9.]+(?:[eE][-+]?[0-9]+)?|inf|nan)", (value.body or "").split(" ", 1)[-1])
        if value.name != "#complex.number" or len(parts) != 2:
            raise ImportProblem(f"constant_like value {value.name}<{value.body}> is not a number")
        value = complex(float(parts[0]), float(parts[1]))
    elif isinstance(value, ArrayAttr) or not isinstance(value, (bool, int, float)):
        raise ImportProblem(f"constant_like value {value!r} is not a number")
    scalar = Shape(out.element_type, ())
    literal = np.array(value).astype(scalar.dtype).reshape(())
    k = ctx.add("constant", scalar, [], {"literal": literal})
    return [k if out.rank == 0 else ctx.add("broadcast", out, [k], {"dimensions": ()})]


@converter("chlo.top_k", "mhlo.topk")
def _top_k(ctx: OpContext) -> list:
    """XLA's ``topk`` (the largest k along the last dimension, ties by index)."""
    k = int(ctx.attr("k"))
    largest = ctx.attr("largest", default=True)
    shapes = ctx.result_shapes()
    top = ctx.add("topk", Shape.tuple(shapes), ctx.operands, {"k": k, "largest": bool(largest)})
    return ctx.results_of(top)


_RAGGED_DIMS = {"lhs_batching_dimensions": "lhs_batch_dims", "rhs_batching_dimensions": "rhs_batch_dims",
                "lhs_contracting_dimensions": "lhs_contracting_dims",
                "rhs_contracting_dimensions": "rhs_contracting_dims",
                "lhs_ragged_dimensions": "lhs_ragged_dims", "rhs_group_dimensions": "rhs_group_dims"}


@converter("chlo.ragged_dot")
def _ragged_dot(ctx: OpContext) -> list:
    """XLA's ``ragged-dot`` (the dimension numbers renamed; precision ignored)."""
    numbers = ctx.attr("ragged_dot_dimension_numbers")
    if not isinstance(numbers, DialectAttr):
        raise ImportProblem("ragged_dot_dimension_numbers is not a #chlo.ragged_dot<...> attribute")
    fields = _fields(numbers)
    attrs = {hlo: tuple(fields.get(name, ())) for name, hlo in _RAGGED_DIMS.items()}
    return [ctx.add("ragged-dot", ctx.result_shape(), ctx.operands, attrs)]


@converter("chlo.scan")
def _scan(ctx: OpContext) -> list:
    """XLA's ``scan``: the body maps (input slices..., carries...) to (output
    slices..., carries...) along ``dimension``; the last operands are the inits."""
    sizes = _ints(ctx.attr("operandSegmentSizes"))
    if len(sizes) != 2 or sum(sizes) != len(ctx.operands):
        raise ImportProblem(f"operandSegmentSizes {list(sizes)} do not split the {len(ctx.operands)} operands")
    attrs = {"dimensions": (int(ctx.attr("dimension")),), "num_carries": sizes[1],
             "is_reverse": bool(ctx.attr("is_reverse", default=False)),
             "is_associative": bool(ctx.attr("is_associative", default=False)),
             "to_apply": ctx.region_computation(0, "body")}
    return ctx.multi("scan", ctx.operands, attrs)
