"""The passes of the ``fft`` kernel's Stockham FFT (``kernels/fft.py``), with
the lengths a run-time argument.  They do not depend on the program, so they
are built once per machine as units of the GEMM library (``gemm_library``:
compiled on first use, kept in the disk cache, linked into AOT objects) and a
module only declares and calls them: emitted per module, the passes of one
transform were about three quarters of an ``fft`` kernel's LLVM time
(100-200 ms).

An :class:`FftVariant` is one pass, ``pass(in_re, in_im, out_re, out_im,
roots, L, m, k0, k1, j0, j1)``, for a component type (f32 or f64), a direction (``sign``:
``w = exp(sign 2 pi i / N)``), a radix ``p`` and ``lanes`` lines transformed
together (split complex arrays, the line index innermost: element ``t`` of
lane ``l`` at ``t * lanes + l``).  After ``L`` points of a transform of
length ``N = L p m`` are done, for each ``k < L``::

    out[(k + s L) m + r] = sum_q w_p^(q s) w_(L p)^(q k) in[(k p + q) m + r]

(``r < m``; ``roots[j] = w_N^j``, so ``w_(L p)^(q k) = roots[q k m]``).  The
``m * lanes`` values of one ``k`` share its twiddles and are contiguous in
both arrays: they are taken as vectors of the machine's width where they
fill them, else ``lanes`` at a time.  A call computes ``k`` in ``[k0, k1)``
and values ``[j0, j1)`` of each (multiples of ``lanes``): a long line's pass
is shared among threads so (the first pass, ``L = 1``, takes ``k = 0``).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from llvmlite import ir

from ..shape import PrimitiveType as PT
from .ir_array import I64, i64
from .loops import dyn_range
from .target import host_vector_bits

__all__ = ["FftVariant", "RADICES", "CONSTANT_M", "PASS_TYPE", "NAME_RE", "parse_tag", "butterfly",
           "c_add", "c_sub", "c_mul", "c_conj", "c_scale", "c_times_i"]

PTR = ir.PointerType()
#: The radices a pass is built for.
RADICES = (2, 3, 4, 5, 7, 8, 11, 13)
#: Passes whose ``m`` is at most this are built for that ``m`` (:class:`FftVariant`).
CONSTANT_M = 8
#: ``void pass(in_re, in_im, out_re, out_im, roots, L, m, k0, k1, j0, j1)``.
PASS_TYPE = ir.FunctionType(ir.VoidType(), [PTR] * 5 + [I64] * 6)


# ----------------------------------------------------------------------------
# Complex arithmetic on (re, im) pairs of IR values (scalars or vectors)
# ----------------------------------------------------------------------------

def c_add(b, x, y):
    return b.fadd(x[0], y[0]), b.fadd(x[1], y[1])


def c_sub(b, x, y):
    return b.fsub(x[0], y[0]), b.fsub(x[1], y[1])


def c_mul(b, x, y):
    return (b.fsub(b.fmul(x[0], y[0]), b.fmul(x[1], y[1])),
            b.fadd(b.fmul(x[0], y[1]), b.fmul(x[1], y[0])))


def c_conj(b, x):
    return x[0], b.fneg(x[1])


def c_times_i(b, x, sign: int):
    """``sign * i * x``."""
    return (b.fneg(x[1]), x[0]) if sign > 0 else (x[1], b.fneg(x[0]))


def c_scale(b, x, c):
    return b.fmul(x[0], c), b.fmul(x[1], c)


def butterfly(b, p: int, a: list, sign: int, const) -> list:
    """The DFT of length ``p`` of the values ``a`` (``w = exp(sign 2 pi i /
    p)``); ``const(x)``: a real constant of the values' type."""
    if p == 1:
        return a
    if p == 2:
        return [c_add(b, a[0], a[1]), c_sub(b, a[0], a[1])]
    if p == 4:
        t0, t1 = c_add(b, a[0], a[2]), c_sub(b, a[0], a[2])
        t2, t3 = c_add(b, a[1], a[3]), c_times_i(b, c_sub(b, a[1], a[3]), sign)
        return [c_add(b, t0, t2), c_add(b, t1, t3), c_sub(b, t0, t2), c_sub(b, t1, t3)]
    if p == 8:   # two of length 4 (even and odd points), combined with w_8^s
        even = butterfly(b, 4, a[0::2], sign, const)
        odd = butterfly(b, 4, a[1::2], sign, const)
        r = const(math.sqrt(0.5))
        turned = [odd[0],
                  c_scale(b, c_add(b, odd[1], c_times_i(b, odd[1], sign)), r),
                  c_times_i(b, odd[2], sign),
                  c_scale(b, c_sub(b, c_times_i(b, odd[3], sign), odd[3]), r)]
        return ([c_add(b, e, o) for e, o in zip(even, turned)] +
                [c_sub(b, e, o) for e, o in zip(even, turned)])
    # Odd p: y[s] and y[p-s] share the sums S_q = a_q + a_{p-q} and the
    # differences D_q = a_q - a_{p-q}: y[s], y[p-s] = A_s +- B_s with
    # A_s = a_0 + sum cos(2 pi q s/p) S_q, B_s = sign i sum sin(2 pi q s/p) D_q.
    half = (p - 1) // 2
    sums = [c_add(b, a[q], a[p - q]) for q in range(1, half + 1)]
    diffs = [c_sub(b, a[q], a[p - q]) for q in range(1, half + 1)]
    out = [None] * p
    y0 = a[0]
    for s_ in sums:
        y0 = c_add(b, y0, s_)
    out[0] = y0
    for s in range(1, half + 1):
        re_a, im_a = a[0]
        re_b = im_b = None
        for q in range(1, half + 1):
            c = const(math.cos(2 * math.pi * q * s / p))
            sn = const(math.sin(2 * math.pi * q * s / p))
            re_a = b.fadd(re_a, b.fmul(c, sums[q - 1][0]))
            im_a = b.fadd(im_a, b.fmul(c, sums[q - 1][1]))
            dr, di = b.fmul(sn, diffs[q - 1][0]), b.fmul(sn, diffs[q - 1][1])
            re_b = dr if re_b is None else b.fadd(re_b, dr)
            im_b = di if im_b is None else b.fadd(im_b, di)
        bs = c_times_i(b, (re_b, im_b), sign)
        out[s] = (b.fadd(re_a, bs[0]), b.fadd(im_a, bs[1]))
        out[p - s] = (b.fsub(re_a, bs[0]), b.fsub(im_a, bs[1]))
    return out


# ----------------------------------------------------------------------------
# One pass
# ----------------------------------------------------------------------------

def _build_pass(module: ir.Module, v: "FftVariant", name: str, linkage: str) -> None:
    ct = ir.FloatType() if v.pt is PT.F32 else ir.DoubleType()
    esize = 4 if v.pt is PT.F32 else 8
    p, lanes, sign = v.radix, v.lanes, v.sign
    wide = max(lanes, host_vector_bits() // (8 * esize))
    fn = ir.Function(module, PASS_TYPE, name)
    fn.linkage = linkage
    fn.attributes.add("nounwind")
    for arg in fn.args[:4]:
        arg.add_attribute("noalias")
    in_re, in_im, out_re, out_im, roots, big_l, m, k0, k1, j0, j1 = fn.args
    for arg, nm in zip(fn.args, ("in_re", "in_im", "out_re", "out_im", "roots", "L", "m", "k0", "k1", "j0", "j1")):
        arg.name = nm
    if v.m:
        m = i64(v.m)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    run = b.mul(m, i64(lanes))               # values per k
    in_step = run                            # between the p inputs of a butterfly
    out_step = b.mul(run, big_l)             # between its p outputs

    def at(ptr, e):
        return b.gep(ptr, [e], inbounds=True, source_etype=ct)

    def values(width: int, k, twiddles, first_in, first_out, lo, hi):
        """The butterflies of values ``lo..hi`` of ``k``, ``width`` at a time."""
        vt = ct if width == 1 else ir.VectorType(ct, width)

        def const(x):
            return ir.Constant(ct, x) if width == 1 else ir.Constant(vt, [x] * width)

        def splat(x):
            if width == 1:
                return x
            one = b.insert_element(ir.Constant(ir.VectorType(ct, 1), ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
            return b.shuffle_vector(one, one, ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width))

        tw = [(splat(re), splat(im)) for re, im in twiddles]
        with dyn_range(b, lo, hi, width, f"fft.v{width}") as j:
            a = []
            for q in range(p):
                e = b.add(b.add(first_in, b.mul(i64(q), in_step)), j)
                x = (b.load(at(in_re, e), typ=vt, align=esize), b.load(at(in_im, e), typ=vt, align=esize))
                a.append(c_mul(b, x, tw[q - 1]) if q and tw else x)
            for s, y in enumerate(butterfly(b, p, a, sign, const)):
                e = b.add(b.add(first_out, b.mul(i64(s), out_step)), j)
                b.store(y[0], at(out_re, e), align=esize)
                b.store(y[1], at(out_im, e), align=esize)

    def one_k(k, twiddled: bool):
        twiddles = []
        if twiddled:
            for q in range(1, p):
                j = b.mul(b.mul(k, i64(q)), m)
                twiddles.append((b.load(at(roots, b.mul(j, i64(2))), typ=ct),
                                 b.load(at(roots, b.add(b.mul(j, i64(2)), i64(1))), typ=ct)))
        first_in = b.mul(k, b.mul(run, i64(p)))
        first_out = b.mul(k, run)
        # Vectors of the machine's width while they fit, then ``lanes`` at a
        # time (a whole number of them: ``j0`` and ``j1`` are multiples of
        # ``lanes``).
        split = b.sub(j1, b.urem(b.sub(j1, j0), i64(wide)))
        values(wide, k, twiddles, first_in, first_out, j0, split)
        if lanes < wide:
            values(lanes, k, twiddles, first_in, first_out, split, j1)

    # The first pass (L = 1) has no twiddles.
    first = b.icmp_signed("==", big_l, i64(1))
    with b.if_else(first) as (then, otherwise):
        with then:
            one_k(i64(0), False)
        with otherwise:
            with dyn_range(b, k0, k1, 1, "fft.k") as k:
                one_k(k, True)
    b.ret_void()


@dataclass(frozen=True)
class FftVariant:
    """One pass (radix ``radix``, direction ``sign``, ``lanes`` lines) for
    component type ``pt`` (f32 or f64), as a unit of the GEMM library (its
    one function is ``"pass"``).  ``m``: 0, or the pass's ``m`` when it is
    small (at most :data:`CONSTANT_M`; the argument is then ignored): the
    last passes, a few values per ``k``, are then straight-line code in a
    loop over ``k`` that LLVM vectorises across ``k`` (with run-time ``m``,
    one line at a time, a 4096-point transform ran 3x slower)."""

    pt: PT
    radix: int
    sign: int
    lanes: int
    m: int = 0

    native = None
    functions = {"pass": PASS_TYPE}

    @property
    def tag(self) -> str:
        tag = f"{self.pt.value}_fft{self.radix}_{'p' if self.sign > 0 else 'm'}_l{self.lanes}"
        return tag + (f"_m{self.m}" if self.m else "")

    def build(self, module: ir.Module, name_of, linkage: str) -> None:
        _build_pass(module, self, name_of("pass"), linkage)


#: A library symbol of an FftVariant: hash, component type, radix, sign, lanes, function.
NAME_RE = re.compile(rb"xlac_gemm_([0-9a-f]{16})_(f32|f64)_fft(\d+)_([pm])_l(\d+)(?:_m(\d+))?_(pass)")


def parse_tag(pt: str, radix: str, sign: str, lanes: str, m: str | None) -> FftVariant | None:
    """The variant of a parsed symbol, or None when it names none."""
    if int(radix) not in RADICES or int(lanes) < 1 or int(lanes) & (int(lanes) - 1):
        return None
    if m is not None and not 1 <= int(m) <= CONSTANT_M:
        return None
    return FftVariant(PT(pt), int(radix), 1 if sign == "p" else -1, int(lanes), int(m or 0))
