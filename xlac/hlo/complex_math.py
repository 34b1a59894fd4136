"""XLA:CPU's formulas for the complex element-wise ops, written once for two backends.

The evaluator (numpy arrays) and the code generator (LLVM values) must give the same
special values as XLA: which parts are NaN, infinite or a signed zero depends on the
exact sequence of float operations, not on the mathematical function.  So each op is
one function here over an abstract ``m`` (the backend) and complex values as
``(re, im)`` pairs of the component type (f32 for c64, f64 for c128; never widened,
so overflow happens where XLA's does).

The formulas are XLA's: division, abs, sign, power and tanh as
``xla/service/elemental_ir_emitter.cc`` emits them; sqrt, log and exp as the HLO
XLA:CPU expands them into before code generation (sqrt and log are the
functional_algorithms ones, with their special-value branches and an exact
``x*x + y*y - 1`` for log near the unit circle).  ``tests/complex_values`` holds
XLA:CPU's results on special inputs.

A backend provides, elementwise on its component type: ``const(v)``, ``add sub mul
div neg``, ``fabs sqrt exp expm1 log log1p sin cos atan2 pow copysign``, ``max min``
(NaN-propagating, as HLO's maximum/minimum), ordered comparisons ``eq ne lt le gt
ge``, ``isnan``, ``and_ or_ not_`` on their results, ``select(p, a, b)``, and
``mantissa_bits`` (24 or 53).
"""
from __future__ import annotations

import math

__all__ = ["divide", "abs_", "sign", "sqrt", "log", "exp", "tanh", "power", "rsqrt", "sin", "cos", "tan",
           "expm1", "log1p", "UNARY", "BINARY"]

_SQRT2 = math.sqrt(2.0)
_SQRT_HALF = 1.0 / math.sqrt(2.0)
_SQRT_ONE_PLUS_SQRT2_HALF = math.sqrt((1.0 + math.sqrt(2.0)) / 2.0)   # sqrt(x + ix) / sqrt(x)


def _select2(m, p, a, b):
    return m.select(p, a[0], b[0]), m.select(p, a[1], b[1])


def divide(m, x, y):
    """Smith's algorithm, then C99 Annex G's three cases where it gave NaN + NaN i:
    a zero divisor (infinities), an infinite numerator over a finite divisor
    (infinities) and a finite numerator over an infinite divisor (signed zeros)."""
    a_r, a_i = x
    b_r, b_i = y
    zero, one, inf = m.const(0.0), m.const(1.0), m.const(float("inf"))
    r_over_i = m.div(b_r, b_i)
    r_denom = m.add(b_i, m.mul(r_over_i, b_r))
    i_over_r = m.div(b_i, b_r)
    i_denom = m.add(b_r, m.mul(i_over_r, b_i))
    b_r_abs, b_i_abs = m.fabs(b_r), m.fabs(b_i)
    imag_larger = m.lt(b_r_abs, b_i_abs)
    c_r = m.select(imag_larger, m.div(m.add(m.mul(a_r, r_over_i), a_i), r_denom),
                   m.div(m.add(a_r, m.mul(a_i, i_over_r)), i_denom))
    c_i = m.select(imag_larger, m.div(m.sub(m.mul(a_i, r_over_i), a_r), r_denom),
                   m.div(m.sub(a_i, m.mul(a_r, i_over_r)), i_denom))

    zero_denom = m.and_(m.and_(m.eq(b_r_abs, zero), m.eq(b_i_abs, zero)),
                        m.or_(m.not_(m.isnan(a_r)), m.not_(m.isnan(a_i))))
    signed_inf = m.copysign(inf, b_r)
    zero_denom_result = (m.mul(signed_inf, a_r), m.mul(signed_inf, a_i))

    a_r_abs, a_i_abs = m.fabs(a_r), m.fabs(a_i)
    a_r_inf, a_i_inf = m.eq(a_r_abs, inf), m.eq(a_i_abs, inf)
    b_finite = m.and_(m.ne(b_r_abs, inf), m.ne(b_i_abs, inf))
    inf_num = m.and_(m.or_(a_r_inf, a_i_inf), b_finite)
    a_r_unit = m.copysign(m.select(a_r_inf, one, zero), a_r)
    a_i_unit = m.copysign(m.select(a_i_inf, one, zero), a_i)
    inf_num_result = (m.mul(m.add(m.mul(a_r_unit, b_r), m.mul(a_i_unit, b_i)), inf),
                      m.mul(m.sub(m.mul(a_i_unit, b_r), m.mul(a_r_unit, b_i)), inf))

    b_r_inf, b_i_inf = m.eq(b_r_abs, inf), m.eq(b_i_abs, inf)
    a_finite = m.and_(m.ne(a_r_abs, inf), m.ne(a_i_abs, inf))
    inf_denom = m.and_(a_finite, m.or_(b_r_inf, b_i_inf))
    b_r_unit = m.copysign(m.select(b_r_inf, one, zero), b_r)
    b_i_unit = m.copysign(m.select(b_i_inf, one, zero), b_i)
    inf_denom_result = (m.mul(m.add(m.mul(a_r, b_r_unit), m.mul(a_i, b_i_unit)), zero),
                        m.mul(m.sub(m.mul(a_i, b_r_unit), m.mul(a_r, b_i_unit)), zero))

    special = _select2(m, zero_denom, zero_denom_result,
                       _select2(m, inf_num, inf_num_result,
                                _select2(m, inf_denom, inf_denom_result, (c_r, c_i))))
    both_nan = m.and_(m.isnan(c_r), m.isnan(c_i))
    return _select2(m, both_nan, special, (c_r, c_i))


def _abs_parts(m, re, im):
    """``(min, max, |z|)`` of XLA's ``max * sqrt(1 + (min/max)^2)``; where that is NaN
    ((0, 0), (inf, inf), a NaN part) ``|z|`` is ``min``: so |inf + NaN i| is NaN."""
    a, b = m.fabs(re), m.fabs(im)
    hi, lo = m.max(a, b), m.min(a, b)
    q = m.div(lo, hi)
    r = m.mul(hi, m.sqrt(m.add(m.mul(q, q), m.const(1.0))))
    return lo, hi, m.select(m.isnan(r), lo, r)


def abs_(m, z):
    return _abs_parts(m, *z)[2]


def sign(m, z):
    """z / |z|; zero (either sign) is its own sign."""
    re, im = z
    zero = m.const(0.0)
    r = abs_(m, z)
    is_zero = m.and_(m.eq(re, zero), m.eq(im, zero))
    return _select2(m, is_zero, z, (m.div(re, r), m.div(im, r)))


def exp(m, z):
    """e^a (cos b + i sin b); where e^a overflows, e^(a/2) cos(b) e^(a/2); a zero
    imaginary part stays +0 (so exp(inf + 0i) = inf + 0i)."""
    a, b = z
    zero = m.const(0.0)
    e = m.exp(a)
    root = m.exp(m.mul(a, m.const(0.5)))
    overflow = m.eq(e, m.const(float("inf")))
    cos_b, sin_b = m.cos(b), m.sin(b)
    re = m.select(overflow, m.mul(m.mul(root, cos_b), root), m.mul(e, cos_b))
    im = m.select(overflow, m.mul(m.mul(root, sin_b), root), m.mul(e, sin_b))
    return re, m.select(m.eq(b, zero), zero, im)


def _square_error(m, v, vv):
    """The rounding error of ``vv = v * v`` (Dekker's split of ``v``)."""
    splitter = m.const(float(2 ** ((m.mantissa_bits + 1) // 2) + 1))
    scaled = m.mul(v, splitter)
    hi = m.add(scaled, m.sub(v, scaled))
    lo = m.sub(v, hi)
    hi_lo = m.mul(hi, lo)
    return m.add(m.add(m.add(m.add(m.neg(vv), m.mul(hi, hi)), hi_lo), hi_lo), m.mul(lo, lo))


def _norm_minus_one(m, x, y):
    """``x*x + y*y - 1`` with the rounding errors of every step added back."""
    xx, yy = m.mul(x, x), m.mul(y, y)
    y_larger = m.gt(yy, xx)
    big, small = m.select(y_larger, yy, xx), m.select(y_larger, xx, yy)
    s1 = m.add(big, m.const(-1.0))
    s2 = m.add(s1, small)
    e_y = _square_error(m, y, yy)
    s3 = m.add(s2, e_y)
    e_x = _square_error(m, x, xx)
    s4 = m.add(s3, e_x)
    err = m.add(m.sub(big, big), m.sub(small, m.sub(s2, s1)))
    err = m.add(err, m.sub(e_y, m.sub(s3, s2)))
    err = m.add(err, m.sub(e_x, m.sub(s4, s3)))
    return m.add(s4, err)


def log(m, z):
    """log|z| + i atan2(y, x); log|z| is log1p(x*x + y*y - 1) / 2 near the unit circle,
    else log(max) + log1p((min/max)^2) / 2."""
    x, y = z
    half = m.const(0.5)
    near_one = _norm_minus_one(m, x, y)
    ax, ay = m.fabs(x), m.fabs(y)
    hi, lo = m.max(ax, ay), m.min(ax, ay)
    q = m.select(m.eq(lo, hi), m.const(1.0), m.div(lo, hi))
    far = m.add(m.log(hi), m.mul(m.log1p(m.mul(q, q)), half))
    re = m.select(m.lt(m.fabs(near_one), half), m.mul(m.log1p(near_one), half), far)
    return re, m.atan2(y, x)


def _hypot(m, hi, lo):
    """sqrt(hi^2 + lo^2) for hi = max, lo = min of two magnitudes, without overflow."""
    q = m.div(lo, hi)
    qq = m.mul(q, q)
    root = m.sqrt(m.add(qq, m.const(1.0)))
    # where 1 + q^2 rounds to 1, hi + hi q^2 / 2 keeps the small part
    tiny = m.and_(m.eq(root, m.const(1.0)), m.gt(qq, m.const(0.0)))
    general = m.select(tiny, m.add(hi, m.mul(m.mul(hi, qq), m.const(0.5))), m.mul(hi, root))
    return m.select(m.eq(hi, lo), m.mul(hi, m.const(_SQRT2)), general)


def sqrt(m, z):
    """Principal square root: u = sqrt((|z| + |x|) / 2) and v = |y| / 2u, computed from
    sqrt(|x|), sqrt(|y|) and their ratio where u would under- or overflow; the real part
    is u for x >= 0 (else v), the imaginary part takes y's sign (y < 0, so -0 gives +0)."""
    x, y = z
    zero, one, half = m.const(0.0), m.const(1.0), m.const(0.5)
    ax, ay = m.fabs(x), m.fabs(y)
    same = m.eq(ax, ay)
    x_smaller = m.lt(ax, ay)
    hi, lo = m.max(ax, ay), m.min(ax, ay)
    ratio = m.select(same, one, m.select(x_smaller, m.div(ax, ay), m.div(ay, ax)))
    u_plain = m.sqrt(m.add(m.mul(_hypot(m, hi, lo), half), m.mul(ax, half)))
    out_of_range = m.or_(m.eq(u_plain, zero), m.eq(u_plain, m.const(float("inf"))))
    x_larger = m.gt(ax, ay)
    abs_ratio = m.fabs(ratio)
    h = _hypot(m, m.max(abs_ratio, one), m.min(abs_ratio, one))     # sqrt(1 + ratio^2)
    sqrt_ax, sqrt_ay = m.sqrt(ax), m.sqrt(ay)
    s_x = m.sqrt(m.add(h, one))
    s_y = m.sqrt(m.add(ratio, h))
    u_scaled = m.select(x_larger, m.mul(sqrt_ax, m.mul(s_x, m.const(_SQRT_HALF))),
                        m.mul(sqrt_ay, m.mul(s_y, m.const(_SQRT_HALF))))
    u = m.select(same, m.mul(sqrt_ax, m.const(_SQRT_ONE_PLUS_SQRT2_HALF)),
                 m.select(out_of_range, u_scaled, u_plain))
    root_ratio = m.select(same, one, m.select(x_smaller, m.div(sqrt_ax, sqrt_ay), m.div(sqrt_ay, sqrt_ax)))
    v_scaled = m.select(x_larger, m.div(m.mul(sqrt_ay, root_ratio), m.mul(s_x, m.const(_SQRT2))),
                        m.div(sqrt_ay, m.mul(s_y, m.const(_SQRT2))))
    v = m.select(same, m.mul(sqrt_ay, m.const(0.5 / _SQRT_ONE_PLUS_SQRT2_HALF)),
                 m.select(out_of_range, v_scaled, m.div(ay, m.mul(u_plain, m.const(2.0)))))
    y_negative = m.lt(y, zero)
    re = m.select(m.ge(x, zero), u, v)
    im = m.select(m.lt(x, zero), m.select(y_negative, m.neg(u), u), m.select(y_negative, m.neg(v), v))
    return re, im


def tanh(m, z):
    """(sinh 2a + i sin 2b) / (cosh 2a + cos 2b) through expm1; +-1 where cosh 2a
    overflows; NaN where sin 2b is NaN and a is finite; a +0 imaginary part for b = 0
    and for infinite a with NaN sin 2b."""
    a, b = z
    zero, four = m.const(0.0), m.const(4.0)
    two_a = m.add(a, a)
    e_pos = m.expm1(two_a)
    e_neg = m.expm1(m.mul(m.const(-1.0), two_a))
    cos_b, sin_b = m.cos(b), m.sin(b)
    imag_num = m.mul(m.mul(cos_b, sin_b), four)
    sum_m2 = m.add(e_pos, e_neg)
    denom = m.add(sum_m2, m.mul(m.mul(cos_b, cos_b), four))
    re = m.select(m.eq(sum_m2, m.const(float("inf"))), m.copysign(m.const(-1.0), a),
                  m.div(m.sub(e_pos, e_neg), denom))
    im = m.div(imag_num, denom)
    a_inf = m.eq(m.fabs(a), m.const(float("inf")))
    sin_nan = m.isnan(imag_num)
    re = m.select(m.and_(sin_nan, m.not_(a_inf)), m.const(float("nan")), re)
    im = m.select(m.or_(m.eq(b, zero), m.and_(a_inf, sin_nan)), zero, im)
    return re, im


def power(m, z, w):
    """|z|^c e^(-d arg z) (cos q + i sin q), q = c arg z + d log|z|, with XLA's exact
    cases: 0^w is 1 for w = 0, 0 for real w > 0; z^0 = 1; 1^w = 1; inf^c is inf
    (c > 0) or 0 (c < 0) for real c."""
    a, b = z
    c, d = w
    zero, one, inf = m.const(0.0), m.const(1.0), m.const(float("inf"))
    r = abs_(m, z)
    t = m.atan2(b, a)
    coeff = m.mul(m.pow(r, c), m.exp(m.mul(m.neg(d), t)))
    q = m.add(m.mul(c, t), m.mul(d, m.log(r)))
    result = (m.mul(coeff, m.cos(q)), m.mul(coeff, m.sin(q)))
    d_zero, c_zero, b_zero = m.eq(d, zero), m.eq(c, zero), m.eq(b, zero)
    unit, origin = (one, zero), (zero, zero)
    zero_base = m.and_(m.and_(m.eq(r, zero), d_zero), m.le(zero, c))
    result = _select2(m, zero_base, _select2(m, c_zero, unit, origin), result)
    result = _select2(m, m.and_(c_zero, d_zero), unit, result)
    result = _select2(m, m.and_(m.eq(a, one), b_zero), unit, result)
    inf_base = m.and_(m.eq(a, inf), b_zero)
    result = _select2(m, m.and_(inf_base, m.and_(d_zero, m.gt(c, zero))), (inf, zero), result)
    return _select2(m, m.and_(inf_base, m.and_(d_zero, m.lt(c, zero))), origin, result)


def rsqrt(m, z):
    """1 / sqrt(z), through this module's sqrt and division (so 1/0 is XLA's inf)."""
    return divide(m, (m.const(1.0), m.const(0.0)), sqrt(m, z))


def _cosh_sinh(m, b):
    """(cosh b, sinh b) from one e^b (as XLA: e^b / 2 and 0.5 / e^b); sinh of |b| < 1
    from expm1, where e^b / 2 - e^-b / 2 would cancel."""
    exp_b = m.exp(b)
    pos, neg = m.mul(m.const(0.5), exp_b), m.div(m.const(0.5), exp_b)
    small = m.mul(m.sub(m.expm1(b), m.expm1(m.neg(b))), m.const(0.5))
    return m.add(pos, neg), m.select(m.lt(m.fabs(b), m.const(1.0)), small, m.sub(pos, neg))


def sin(m, z):
    """sin a cosh b + i cos a sinh b."""
    a, b = z
    cosh_b, sinh_b = _cosh_sinh(m, b)
    return m.mul(m.sin(a), cosh_b), m.mul(m.cos(a), sinh_b)


def cos(m, z):
    """cos a cosh b - i sin a sinh b."""
    a, b = z
    cosh_b, sinh_b = _cosh_sinh(m, b)
    return m.mul(m.cos(a), cosh_b), m.neg(m.mul(m.sin(a), sinh_b))


def tan(m, z):
    """-i tanh(i z): this module's tanh, so overflow and special values follow it."""
    a, b = z
    re, im = tanh(m, (m.neg(b), a))
    return im, m.neg(re)


def expm1(m, z):
    """(expm1(a) cos b + cosm1(b)) + i e^a sin b, cosm1(b) = -2 sin^2(b/2): no
    cancellation near 0."""
    a, b = z
    half_sin = m.sin(m.mul(b, m.const(0.5)))
    cos_m1 = m.mul(m.const(-2.0), m.mul(half_sin, half_sin))
    return m.add(m.mul(m.expm1(a), m.cos(b)), cos_m1), m.mul(m.exp(a), m.sin(b))


def log1p(m, z):
    """log(1 + z): the real part is log1p(a (a + 2) + b^2) / 2 where that sum is
    small (exact near z = 0), else log|1 + z| (exact near z = -1, no overflow); the
    imaginary part atan2(b, 1 + a)."""
    a, b = z
    a1 = m.add(a, m.const(1.0))
    s = m.add(m.mul(a, m.add(a, m.const(2.0))), m.mul(b, b))
    near = m.lt(m.fabs(s), m.const(0.5))
    re = m.select(near, m.mul(m.log1p(s), m.const(0.5)), m.log(abs_(m, (a1, b))))
    return re, m.atan2(b, a1)


#: HLO opcode -> formula, for complex operands.  ``abs`` returns a real value.
UNARY = {"abs": abs_, "sign": sign, "sqrt": sqrt, "log": log, "exponential": exp, "tanh": tanh,
         "rsqrt": rsqrt, "sine": sin, "cosine": cos, "tan": tan, "exponential-minus-one": expm1,
         "log-plus-one": log1p}
BINARY = {"divide": divide, "power": power}
