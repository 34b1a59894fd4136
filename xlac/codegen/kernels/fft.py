"""``fft`` as a kernel (spec: *Fft*): FFT, IFFT, RFFT and IRFFT over the last 1-3 dimensions.

The transform runs in a scratch *work array* of c128 (row-major), whatever the
element type, and the result is rounded once when it is written out:

* FFT / IFFT: input -> work; a complex transform along each of the last
  ``len(fft_length)`` dimensions (IFFT scales by ``1/n`` per dimension); work ->
  output.
* RFFT: the innermost dimension is transformed first, real -> the ``n//2 + 1``
  non-negative frequencies, straight from the input into the work array; then
  complex transforms along the other transformed dimensions.
* IRFFT: input -> work; inverse complex transforms along the outer transformed
  dimensions; then the innermost dimension complex -> real, reading the
  half spectrum as Hermitian (``X[n-k] = conj(X[k])``; the imaginary parts of
  the zero and Nyquist frequencies are ignored, as numpy and XLA do).

Each 1-D transform of a power-of-two length is a radix-2 FFT, O(n log n): the
vector is copied into a scratch line in bit-reversed order, then log2(n) stages of
butterflies run in place.  Other lengths use a direct DFT, O(n^2) per vector:
``X[j] = sum_t x[t] * w[(j*t) mod n]``.  Either way the twiddles
``w[k] = exp(-+2 pi i k / n)`` come from a table computed in double precision
(indices reduced mod n exactly, so no phase error accumulates) and all arithmetic
is in double precision, exact enough for c64 and c128 alike.  (Bluestein or
mixed-radix FFTs for other lengths are a later optimisation.)
Scratch: the work array plus one vector of ``max(fft_length)`` c128 values.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...shape import C128, F64
from .. import scalar_ops
from ..emitter import KernelContext, ModuleEmitter
from ..ir_array import I64, Index, i64
from ..loops import fill_padding, for_range
from ..kernel_choice import KernelCandidate

_F64 = ir.DoubleType()


def _lengths(inst: HloInstruction) -> tuple:
    return tuple(int(str(v)) for v in inst.attrs["fft_length"])


def _work_dims(inst: HloInstruction) -> tuple:
    """Dimensions of the complex work array: the complex side of the transform."""
    kind = str(inst.attrs["fft_type"])
    return inst.shape.dimensions if kind == "RFFT" else inst.operands[0].shape.dimensions


def _scratch_bytes(me: ModuleEmitter, inst: HloInstruction) -> int:
    if inst.shape.element_count() == 0:
        return 0
    return 16 * (math.prod(_work_dims(inst)) + max(_lengths(inst)))


class _Complex:
    """A c128 array at a double pointer: element ``e`` is ``(ptr[2e], ptr[2e+1])``."""

    def __init__(self, b: ir.IRBuilder, ptr: ir.Value):
        self.b, self.ptr = b, ptr

    def _at(self, e, part: int):
        b = self.b
        off = b.add(b.mul(e, i64(2)), i64(part)) if part else b.mul(e, i64(2))
        return b.gep(self.ptr, [off], inbounds=True, source_etype=_F64)

    def load(self, e):
        return self.b.load(self._at(e, 0), typ=_F64), self.b.load(self._at(e, 1), typ=_F64)

    def store(self, e, re, im):
        self.b.store(re, self._at(e, 0))
        self.b.store(im, self._at(e, 1))


def _twiddles(me: ModuleEmitter, n: int) -> ir.GlobalVariable:
    """A constant table of ``(cos(2 pi k/n), sin(2 pi k/n))`` for k < n, as doubles."""
    name = f"xlac.fft.twiddles.{n}"
    try:
        return me.llvm.get_global(name)
    except KeyError:
        pass
    k = np.arange(n, dtype=np.float64)
    table = np.empty(2 * n, np.float64)
    table[0::2] = np.cos(2 * np.pi * k / n)
    table[1::2] = np.sin(2 * np.pi * k / n)
    ty = ir.ArrayType(_F64, 2 * n)
    g = ir.GlobalVariable(me.llvm, ty, name)
    g.initializer = ir.Constant(ty, [float(v) for v in table])
    g.global_constant = True
    g.linkage = "internal"
    return g


def _is_pow2(n: int) -> bool:
    return n >= 2 and n & (n - 1) == 0


def _bit_reversal(me: ModuleEmitter, n: int) -> ir.GlobalVariable:
    """A constant table of the bit-reversed indices of 0..n-1 (n a power of two)."""
    name = f"xlac.fft.bitrev.{n}"
    try:
        return me.llvm.get_global(name)
    except KeyError:
        pass
    bits = n.bit_length() - 1
    values = [int(format(k, f"0{bits}b")[::-1], 2) for k in range(n)]
    ty = ir.ArrayType(I64, n)
    g = ir.GlobalVariable(me.llvm, ty, name)
    g.initializer = ir.Constant(ty, values)
    g.global_constant = True
    g.linkage = "internal"
    return g


def _reversed_index(ctx: KernelContext, n: int, t):
    b = ctx.b
    return b.load(b.gep(_bit_reversal(ctx.me, n), [t], inbounds=True, source_etype=I64), typ=I64)


def _butterflies(ctx: KernelContext, line: "_Complex", n: int, inverse: bool) -> None:
    """Radix-2 decimation in time, in place on ``line`` (filled in bit-reversed order)."""
    b = ctx.b
    table = _Complex(b, _twiddles(ctx.me, n))
    sign = ir.Constant(_F64, 1.0 if inverse else -1.0)
    length = 2
    while length <= n:
        half, step = length // 2, n // length
        with for_range(b, n // length, f"fft.s{length}") as s:
            start = b.mul(s, i64(length))
            with for_range(b, half, f"fft.b{length}") as j:
                wr, wi = table.load(b.mul(j, i64(step)) if step != 1 else j)
                wi = b.fmul(wi, sign)
                top = b.add(start, j)
                bottom = b.add(top, i64(half))
                ur, ui = line.load(top)
                xr, xi = line.load(bottom)
                vr = b.fsub(b.fmul(xr, wr), b.fmul(xi, wi))
                vi = b.fadd(b.fmul(xr, wi), b.fmul(xi, wr))
                line.store(top, b.fadd(ur, vr), b.fadd(ui, vi))
                line.store(bottom, b.fsub(ur, vr), b.fsub(ui, vi))
        length *= 2


def _row_major(b: ir.IRBuilder, dims, body, name="f"):
    """Loops over ``dims`` in row-major order; ``body(multi, linear)``."""
    multi = [i64(0)] * len(dims)

    def level(d, linear):
        if d == len(dims):
            body(list(multi), linear)
            return
        with for_range(b, dims[d], f"{name}{d}") as iv:
            multi[d] = iv
            nxt = iv if d == 0 else b.add(b.mul(linear, i64(dims[d])), iv)
            level(d + 1, nxt)
    level(0, i64(0))


def _accumulate(b, acc, re, im, wr, wi):
    """``acc += (re + i im) * (wr + i wi)``; ``acc`` a pair of double allocas."""
    ar, ai = acc
    b.store(b.fadd(b.load(ar), b.fsub(b.fmul(re, wr), b.fmul(im, wi))), ar)
    b.store(b.fadd(b.load(ai), b.fadd(b.fmul(re, wi), b.fmul(im, wr))), ai)


def _phase_loop(b, ab, n: int, step, body, name: str):
    """``for t in 0..n-1: body(t, k)`` with ``k = (t * step) mod n`` kept incrementally."""
    k_slot = ab.alloca(I64, name=f"{name}.k")
    b.store(i64(0), k_slot)
    with for_range(b, n, name) as t:
        k = b.load(k_slot)
        body(t, k)
        nk = b.add(k, step)
        b.store(b.select(b.icmp_unsigned(">=", nk, i64(n)), b.sub(nk, i64(n)), nk), k_slot)


def _complex_lines(ctx: KernelContext, work: _Complex, line: _Complex, dims, axis: int,
                   inverse: bool) -> None:
    """A complex DFT of every vector of the work array along ``axis`` (in place)."""
    b, ab, me = ctx.b, ctx.alloca_builder, ctx.me
    n = dims[axis]
    if n <= 1:
        return  # the DFT of one element is itself (and 1/n == 1)
    outer, inner = math.prod(dims[:axis]), math.prod(dims[axis + 1:])
    table = _Complex(b, _twiddles(me, n))
    sign = 1.0 if inverse else -1.0
    scale = 1.0 / n if inverse else 1.0
    acc = (ab.alloca(_F64, name="fft.re"), ab.alloca(_F64, name="fft.im"))

    def radix2(base):
        with for_range(b, n, "fft.r") as t:
            re, im = work.load(b.add(base, b.mul(t, i64(inner))))
            line.store(_reversed_index(ctx, n, t), re, im)
        _butterflies(ctx, line, n, inverse)
        with for_range(b, n, "fft.w") as j:
            re, im = line.load(j)
            if scale != 1.0:
                re, im = b.fmul(re, ir.Constant(_F64, scale)), b.fmul(im, ir.Constant(_F64, scale))
            work.store(b.add(base, b.mul(j, i64(inner))), re, im)

    def vector(base):
        with for_range(b, n, "fft.j") as j:
            b.store(ir.Constant(_F64, 0.0), acc[0])
            b.store(ir.Constant(_F64, 0.0), acc[1])

            def term(t, k):
                re, im = work.load(b.add(base, b.mul(t, i64(inner))))
                wr, wi = table.load(k)
                _accumulate(b, acc, re, im, wr, b.fmul(wi, ir.Constant(_F64, sign)))
            _phase_loop(b, ab, n, j, term, "fft.t")
            re, im = b.load(acc[0]), b.load(acc[1])
            if scale != 1.0:
                re, im = b.fmul(re, ir.Constant(_F64, scale)), b.fmul(im, ir.Constant(_F64, scale))
            line.store(j, re, im)
        with for_range(b, n, "fft.w") as j:
            re, im = line.load(j)
            work.store(b.add(base, b.mul(j, i64(inner))), re, im)

    _over_vectors(b, outer, n, inner, radix2 if _is_pow2(n) else vector)


def _over_vectors(b, outer: int, n: int, inner: int, body):
    """``body(base)`` for every vector along a dimension of size ``n`` with
    ``outer`` dimensions' worth of elements before and ``inner`` after it."""
    if outer == 0 or inner == 0:
        return
    with for_range(b, outer, "fft.o") as o:
        with for_range(b, inner, "fft.i") as i:
            body(b.add(b.mul(o, i64(n * inner)), i))


def _to_c128(b, value, pt):
    return scalar_ops.convert_value(b, value, pt, C128)


def _fft(ctx: KernelContext) -> None:
    inst, b, ab = ctx.inst, ctx.b, ctx.alloca_builder
    kind = str(inst.attrs["fft_type"])
    lengths = _lengths(inst)
    in_shape, out_shape = inst.operands[0].shape, inst.shape
    (out,) = ctx.output_arrays()
    fill_padding(b, out)
    if out_shape.element_count() == 0:
        return
    read = ctx.operand_generator(0)
    dims = _work_dims(inst)
    rank = len(dims)
    axes = list(range(rank - len(lengths), rank))
    scratch = ctx.scratch_pointer()
    work = _Complex(b, scratch)
    line = _Complex(b, b.gep(scratch, [i64(16 * math.prod(dims))], inbounds=True,
                             source_etype=ir.IntType(8)))
    in_t, out_t = in_shape.element_type, out_shape.element_type

    # 1. Into the work array.
    if kind == "RFFT":
        _rfft_last(ctx, read, in_shape, work, line, dims, lengths[-1])
        complex_axes = axes[:-1]
    else:
        def copy_in(multi, e):
            v = _to_c128(b, read(Index(multi)), in_t)
            work.store(e, b.extract_value(v, 0), b.extract_value(v, 1))
        _row_major(b, dims, copy_in, "fft.in")
        complex_axes = axes if kind in ("FFT", "IFFT") else axes[:-1]

    # 2. Complex transforms (outermost first; the order does not change the result).
    for axis in complex_axes:
        _complex_lines(ctx, work, line, dims, axis, inverse=kind in ("IFFT", "IRFFT"))

    # 3. Out of the work array.
    if kind == "IRFFT":
        _irfft_last(ctx, work, line, out, dims, lengths[-1])
        return

    def copy_out(multi, e):
        re, im = work.load(e)
        v = ir.Constant(ir.LiteralStructType([_F64, _F64]), ir.Undefined)
        v = b.insert_value(b.insert_value(v, re, 0), im, 1)
        out.write(b, Index(multi), scalar_ops.convert_value(b, v, C128, out_t))
    _row_major(b, out_shape.dimensions, copy_out, "fft.out")


def _rfft_last(ctx: KernelContext, read, in_shape, work: _Complex, line: _Complex, dims,
               n: int) -> None:
    """Real -> half spectrum along the last dimension, from the input into ``work``."""
    b, ab = ctx.b, ctx.alloca_builder
    half = dims[-1]
    table = _Complex(b, _twiddles(ctx.me, n))
    acc = (ab.alloca(_F64, name="rfft.re"), ab.alloca(_F64, name="rfft.im"))
    in_t = in_shape.element_type
    zero = ir.Constant(_F64, 0.0)

    def vector(multi, e):  # multi: the leading dims (last one left out)
        with for_range(b, half, "rfft.j") as j:
            b.store(zero, acc[0])
            b.store(zero, acc[1])

            def term(t, k):
                x = scalar_ops.convert_value(b, read(Index(multi + [t])), in_t, F64)
                wr, wi = table.load(k)
                _accumulate(b, acc, x, zero, wr, b.fneg(wi))
            _phase_loop(b, ab, n, j, term, "rfft.t")
            work.store(b.add(b.mul(e, i64(half)), j), b.load(acc[0]), b.load(acc[1]))

    def radix2(multi, e):  # the full complex FFT of the real vector; keep the first half
        with for_range(b, n, "rfft.r") as t:
            x = scalar_ops.convert_value(b, read(Index(multi + [t])), in_t, F64)
            line.store(_reversed_index(ctx, n, t), x, zero)
        _butterflies(ctx, line, n, inverse=False)
        with for_range(b, half, "rfft.w") as j:
            re, im = line.load(j)
            work.store(b.add(b.mul(e, i64(half)), j), re, im)

    _row_major(b, dims[:-1], radix2 if _is_pow2(n) else vector, "rfft.v")


def _irfft_last(ctx: KernelContext, work: _Complex, line: _Complex, out, dims, n: int) -> None:
    """Half spectrum -> real along the last dimension, from ``work`` into the output."""
    b, ab = ctx.b, ctx.alloca_builder
    half = dims[-1]
    out_t = out.shape.element_type
    table = _Complex(b, _twiddles(ctx.me, n))
    acc = ab.alloca(_F64, name="irfft.acc")
    pairs = (n - 1) // 2   # frequencies 1..pairs stand for themselves and n - k
    two, inv_n = ir.Constant(_F64, 2.0), ir.Constant(_F64, 1.0 / n)

    def vector(multi, e):
        first = b.mul(e, i64(half))
        with for_range(b, n, "irfft.t") as t:
            b.store(work.load(first)[0], acc)                 # Re X[0]
            if pairs:
                # k runs 1..pairs; the phase index (k * t) mod n starts at t.
                k_slot = ab.alloca(I64, name="irfft.k")
                b.store(t, k_slot)
                with for_range(b, pairs, "irfft.m") as m:
                    ph = b.load(k_slot)
                    re, im = work.load(b.add(first, b.add(m, i64(1))))
                    wr, wi = table.load(ph)
                    term = b.fsub(b.fmul(re, wr), b.fmul(im, wi))    # Re(X[k] e^{+i..})
                    b.store(b.fadd(b.load(acc), b.fmul(two, term)), acc)
                    nk = b.add(ph, t)
                    b.store(b.select(b.icmp_unsigned(">=", nk, i64(n)), b.sub(nk, i64(n)), nk), k_slot)
            if n % 2 == 0 and n > 1:                                   # Nyquist: Re X[n/2] * (-1)^t
                re = work.load(b.add(first, i64(n // 2)))[0]
                odd = b.icmp_unsigned("!=", b.and_(t, i64(1)), i64(0))
                b.store(b.fadd(b.load(acc), b.select(odd, b.fneg(re), re)), acc)
            value = b.fmul(b.load(acc), inv_n)
            out.write(b, Index(multi + [t]), scalar_ops.convert_value(b, value, F64, out_t))

    def radix2(multi, e):  # the Hermitian spectrum in full, an inverse FFT, the real parts
        first = b.mul(e, i64(half))
        zero = ir.Constant(_F64, 0.0)
        with for_range(b, n, "irfft.r") as k:
            low = b.icmp_unsigned("<", k, i64(half))
            source = b.select(low, k, b.sub(i64(n), k))
            re, im = work.load(b.add(first, source))
            im = b.select(low, im, b.fneg(im))
            real_bin = b.or_(b.icmp_unsigned("==", k, i64(0)), b.icmp_unsigned("==", k, i64(n // 2)))
            line.store(_reversed_index(ctx, n, k), re, b.select(real_bin, zero, im))
        _butterflies(ctx, line, n, inverse=True)
        with for_range(b, n, "irfft.w") as t:
            value = b.fmul(line.load(t)[0], inv_n)
            out.write(b, Index(multi + [t]), scalar_ops.convert_value(b, value, F64, out_t))

    _row_major(b, dims[:-1], radix2 if _is_pow2(n) else vector, "irfft.v")


#: The kernel candidates of this module (``kernels.register_all``).
FFT = KernelCandidate("fft", _fft, scratch_bytes=_scratch_bytes)
