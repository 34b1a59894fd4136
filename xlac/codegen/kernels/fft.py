"""``fft`` as a kernel (spec: *Fft*): FFT, IFFT, RFFT and IRFFT over the last 1-3 dimensions.

The transformed dimensions are taken one at a time (*steps*); a step runs a
1-D transform over every *line* of the array along its dimension.  Lines are
taken in *blocks* of up to ``lanes`` lines, copied into a worker's scratch as
split complex arrays with the line index innermost (``re[t * lanes + l]``,
``im[...]``), so every butterfly is a vertical SIMD operation across lines and
a block's lines share every twiddle factor.  Blocks are shared among threads
(each worker owns one scratch region).  One step reads the operand and the
last writes the result; between steps the data waits in a *work array*
(complex, row-major).

A 1-D transform of length ``N`` is a mixed-radix Stockham FFT
(:meth:`_Kernel.passes`): one pass per radix (8s, then 4, 2, 3, 5, 7, 11, 13),
ping-ponging between two buffers, the output in natural order (no
bit-reversal).  A length with a prime factor above :data:`MAX_RADIX` is
computed by Bluestein's algorithm: the DFT of length ``n`` as a circular
convolution with a chirp, by FFTs of a length ``m >= 2n - 1`` made of 2s, 3s and 5s.

Real transforms pack two real lines into one complex line: RFFT transforms
``x + i y`` and separates ``X[k] = (Z[k] + conj Z[n-k]) / 2`` and
``Y[k] = (Z[k] - conj Z[n-k]) / 2i``; IRFFT transforms ``X + i Y`` (the
half spectra extended as Hermitian, the imaginary parts of the zero and
Nyquist frequencies ignored, as numpy and XLA do) and takes the real and
imaginary parts.

Arithmetic is in the element type's precision (f32 for c64, f64 for c128),
as XLA:CPU's DUCC FFT does; the twiddle factors ``exp(+-2 pi i j / N)`` are
computed at the start of each call in double precision, as the product of
two entries of constant tables of about ``sqrt(N)`` entries each, and
rounded once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...shape import C64, F32, F64, strides
from .. import gemm_library
from ..emitter import KernelContext, task_range
from ..fft_functions import CONSTANT_M, FftVariant, c_conj, c_mul, c_scale
from ..ir_array import Index, i64
from ..kernel_choice import KernelCandidate
from ..loops import dyn_range, fill_padding, for_range
from ..task_grid import REGION_CAP

_F64 = ir.DoubleType()
_PTR = ir.PointerType()

#: Prime factors up to this are FFT passes of their own (an odd radix ``p``
#: costs about ``p`` complex multiply-adds per element); a length with a
#: larger prime factor is computed by Bluestein's algorithm.
MAX_RADIX = 13
#: At most this many lines are transformed together (the SIMD lanes of a
#: butterfly, and the lines that share a twiddle factor's load).  On the
#: 2-core EPYC (Zen 3), 512 c64 lines of 512: 4 lanes 0.33 ms a core, 8
#: lanes 0.51, 16 lanes 0.67 (the passes' working set leaves L1).
MAX_LANES = 4
#: A worker's scratch (two split complex buffers of ``lanes`` lines) is kept
#: within about this many bytes while it has more than one lane (twice a
#: Zen 3 core's L1 data cache; 128 KiB made 1024-point f64 and 4096-point
#: f32 transforms 1.3-3x slower there).
BLOCK_BYTES = 64 << 10
#: Transforms of at least this many butterfly operations (``lines * N *
#: log2 N``) are shared among threads.
PARALLEL_WORK = 1 << 16
#: A step of fewer blocks than threads shares each pass among them (one
#: long line) from this many points times lanes.
SPLIT_POINTS = 1 << 14
#: Values of a pass a thread takes are a multiple of this (whole vectors).
PASS_ALIGN = 64
#: Workers of an object compiled for another machine (the JIT uses the CPUs
#: the process may use, ``task_grid.REGION_CAP``).
DEFAULT_WORKERS = 4


# ----------------------------------------------------------------------------
# The plan (Python ints only)
# ----------------------------------------------------------------------------

def _radices(n: int) -> list | None:
    """The passes of a Stockham FFT of length ``n`` (8s first), or None when
    ``n`` has a prime factor above :data:`MAX_RADIX` (none for 0 or 1: nothing
    to transform)."""
    if n <= 1:
        return []
    out = []
    for p in (8, 4, 2, 3, 5, 7, 11, 13):
        while n % p == 0:
            out.append(p)
            n //= p
    return out if n == 1 else None


@dataclass(frozen=True)
class _Length:
    """How lines of length ``n`` are transformed: a Stockham FFT of length
    ``size`` (``n`` itself, or Bluestein's ``m``)."""

    n: int
    size: int
    radices: tuple

    @property
    def bluestein(self) -> bool:
        return self.size != self.n

    @staticmethod
    def of(n: int) -> "_Length":
        radices = _radices(n)
        if radices is not None:
            return _Length(n, n, tuple(radices))
        # The convolution's length: the least m >= 2n - 1 made of 2s, 3s and
        # 5s (8640 for n = 4097, where a power of two is 16384).
        m = 2 * n - 1
        while (r := _radices(m)) is None or max(r, default=1) > 8 or 7 in r:
            m += 1
        return _Length(n, m, tuple(r))


@dataclass(frozen=True)
class _Step:
    """One transformed dimension: ``kind`` is 'c2c', 'r2c' (the last dimension
    of an RFFT) or 'c2r' (of an IRFFT); lines run along ``axis`` of the work
    dimensions ``dims``; ``lanes`` complex lanes per block (a real step packs
    two lines into each)."""

    kind: str
    axis: int
    dims: tuple
    length: _Length
    lanes: int

    @property
    def outer(self) -> int:
        return math.prod(self.dims[:self.axis])

    @property
    def inner(self) -> int:
        return math.prod(self.dims[self.axis + 1:])

    @property
    def lines_per_block(self) -> int:
        return self.lanes * (1 if self.kind == "c2c" else 2)

    @property
    def blocks(self) -> int:
        g = self.lines_per_block
        if self.inner == 1:
            return -(-self.outer // g)
        return self.outer * -(-self.inner // g)

    @property
    def work(self) -> int:
        n = self.length.n
        return self.outer * self.inner * n * max(1, n.bit_length())


def _component(inst: HloInstruction):
    t = inst.operands[0].shape.element_type
    return F32 if t in (F32, C64) else F64


def _lengths(inst: HloInstruction) -> tuple:
    return tuple(int(str(v)) for v in inst.attrs["fft_length"])


def _work_dims(inst: HloInstruction) -> tuple:
    """Dimensions of the complex side of the transform."""
    kind = str(inst.attrs["fft_type"])
    return tuple(inst.shape.dimensions if kind == "RFFT" else inst.operands[0].shape.dimensions)


def _lanes(size: int, lines: int, esize: int, real: bool) -> int:
    """Lanes of a block: a power of two, at most :data:`MAX_LANES`, the
    buffers within :data:`BLOCK_BYTES`, no more than the lines need (a real
    step carries two lines in a lane)."""
    fit = max(1, BLOCK_BYTES // (4 * size * esize))
    lanes = 1 << (min(MAX_LANES, fit).bit_length() - 1)
    need = -(-lines // 2) if real else lines
    return max(1, min(lanes, 1 << max(0, (need - 1).bit_length())))


@dataclass(frozen=True)
class _Plan:
    steps: tuple
    esize: int
    workers: int
    inverse: bool
    threads: int

    @property
    def sizes(self) -> tuple:
        """The distinct Stockham lengths (each has a twiddle table)."""
        return tuple(sorted({s.length.size for s in self.steps}))

    @property
    def bluestein_lengths(self) -> tuple:
        return tuple(sorted({s.length.n for s in self.steps if s.length.bluestein}))

    def layout(self, work_elements: int) -> dict:
        """Byte offsets of the scratch regions: twiddles per size, chirp and
        filter per Bluestein length, the work array, the workers' buffers."""
        regions, at = {}, 0

        def put(name, count):  # ``count`` complex values
            nonlocal at
            regions[name] = at
            at += -(-2 * count * self.esize // 64) * 64
        for n in self.sizes:
            put(("roots", n), n)
        for n in self.bluestein_lengths:
            put(("chirp", n), n)
            put(("filter", n), _Length.of(n).size)
        if len(self.steps) > 1:
            put("work", work_elements)
        per_worker = max(2 * s.length.size * s.lanes for s in self.steps)
        regions["buffers"] = at
        regions["worker_bytes"] = -(-2 * per_worker * self.esize // 64) * 64
        regions["total"] = at + self.workers * regions["worker_bytes"]
        return regions


def _plan(inst: HloInstruction) -> _Plan:
    kind = str(inst.attrs["fft_type"])
    lengths = _lengths(inst)
    dims = _work_dims(inst)
    rank = len(dims)
    axes = list(range(rank - len(lengths), rank))
    esize = 4 if _component(inst) is F32 else 8
    if kind == "RFFT":
        order = [("r2c", axes[-1])] + [("c2c", a) for a in reversed(axes[:-1])]
    elif kind == "IRFFT":
        order = [("c2c", a) for a in reversed(axes[:-1])] + [("c2r", axes[-1])]
    else:
        order = [("c2c", a) for a in reversed(axes)]
    steps = []
    for step_kind, axis in order:
        n = lengths[axis - axes[0]]
        length = _Length.of(n)
        lines = math.prod(dims) // max(dims[axis], 1)
        lanes = _lanes(length.size, lines, esize, step_kind != "c2c")
        steps.append(_Step(step_kind, axis, dims, length, lanes))
    cap = REGION_CAP.get() or DEFAULT_WORKERS
    blocks = max(s.blocks for s in steps)
    parallel = sum(s.work for s in steps) >= PARALLEL_WORK
    workers = max(1, min(cap, blocks)) if parallel else 1
    return _Plan(tuple(steps), esize, workers, kind in ("IFFT", "IRFFT"), cap if parallel else 1)


def _scratch_bytes(me, inst: HloInstruction) -> int:
    if inst.shape.element_count() == 0 or inst.operands[0].shape.element_count() == 0:
        return 0
    return _plan(inst).layout(math.prod(_work_dims(inst)))["total"]


# ----------------------------------------------------------------------------
# Split and interleaved complex arrays
# ----------------------------------------------------------------------------

class _Split:
    """A split complex array: ``re`` and ``im`` pointers to ``ct`` values."""

    def __init__(self, b, ct, re, im):
        self.b, self.ct, self.re, self.im = b, ct, re, im

    def _at(self, base, e):
        return self.b.gep(base, [e], inbounds=True, source_etype=self.ct)

    def load(self, e):
        return self.b.load(self._at(self.re, e), typ=self.ct), self.b.load(self._at(self.im, e), typ=self.ct)

    def store(self, e, value):
        self.b.store(value[0], self._at(self.re, e))
        self.b.store(value[1], self._at(self.im, e))


class _Interleaved:
    """An interleaved complex array of ``ct``: element ``e`` at ``ptr[2e], ptr[2e+1]``."""

    def __init__(self, b, ct, ptr):
        self.b, self.ct, self.ptr = b, ct, ptr

    def _at(self, e, part):
        b = self.b
        return b.gep(self.ptr, [b.add(b.mul(e, i64(2)), i64(part))], inbounds=True, source_etype=self.ct)

    def load(self, e):
        return self.b.load(self._at(e, 0), typ=self.ct), self.b.load(self._at(e, 1), typ=self.ct)

    def store(self, e, value):
        self.b.store(value[0], self._at(e, 0))
        self.b.store(value[1], self._at(e, 1))


# ----------------------------------------------------------------------------
# Twiddle factors
# ----------------------------------------------------------------------------

def _table(me, name: str, values: np.ndarray) -> ir.GlobalVariable:
    try:
        return me.llvm.get_global(name)
    except KeyError:
        pass
    ty = ir.ArrayType(_F64, len(values))
    g = ir.GlobalVariable(me.llvm, ty, name)
    g.initializer = ir.Constant(ty, [float(v) for v in values])
    g.global_constant = True
    g.linkage = "internal"
    return g


def _root(ctx: KernelContext, big: int, sign: int, j) -> tuple:
    """``exp(sign 2 pi i j / big)`` as f64 values, for an i64 ``0 <= j < big``:
    ``j = h S + l`` and the product of ``exp(.. h S ..)`` and ``exp(.. l ..)``
    from two constant tables of about ``sqrt(big)`` entries."""
    b, me = ctx.b, ctx.me
    s = max(1, math.isqrt(big - 1) + 1)
    hi = np.arange(-(-big // s)) * s
    lo = np.arange(s)
    tables = []
    for part, k in (("hi", hi), ("lo", lo)):
        angle = 2 * np.pi * k / big
        pairs = np.empty(2 * len(k))
        pairs[0::2], pairs[1::2] = np.cos(angle), sign * np.sin(angle)
        tables.append(_Interleaved(b, _F64, _table(me, f"xlac.fft.roots.{big}.{'+' if sign > 0 else '-'}.{part}",
                                                   pairs)))
    h, l = b.udiv(j, i64(s)), b.urem(j, i64(s))
    return c_mul(b, tables[0].load(h), tables[1].load(l))


def _round(b, x, ct):
    return x if ct == _F64 else (b.fptrunc(x[0], ct), b.fptrunc(x[1], ct))


def _fill_roots(ctx: KernelContext, n: int, sign: int, table: _Interleaved) -> None:
    """``table[j] = exp(sign 2 pi i j / n)``, j < n."""
    with for_range(ctx.b, n, "fft.root") as j:
        table.store(j, _round(ctx.b, _root(ctx, n, sign, j), table.ct))


def _fill_chirp(ctx: KernelContext, n: int, sign: int, chirp: _Interleaved) -> None:
    """``chirp[t] = exp(sign pi i t^2 / n)``, from ``t^2 mod 2n`` (exact)."""
    b = ctx.b
    with for_range(b, n, "fft.chirp") as t:
        j = b.urem(b.mul(t, t), i64(2 * n))
        chirp.store(t, _round(b, _root(ctx, 2 * n, sign, j), chirp.ct))


# ----------------------------------------------------------------------------
# Steps: gather a block of lines, transform, scatter
# ----------------------------------------------------------------------------

class _Kernel:
    """The pieces of one ``fft`` kernel shared by its steps."""

    def __init__(self, ctx: KernelContext, plan: _Plan):
        inst = ctx.inst
        self.inst, self.plan = inst, plan
        self.kind = str(inst.attrs["fft_type"])
        self.sign = 1 if plan.inverse else -1
        self.ct = ir.FloatType() if plan.esize == 4 else _F64
        self.pt = F32 if plan.esize == 4 else F64
        self.layout = plan.layout(math.prod(_work_dims(inst)))

    def region(self, ctx, name) -> ir.Value:
        return ctx.b.gep(ctx.scratch_pointer(), [i64(self.layout[name])], inbounds=True,
                         source_etype=ir.IntType(8))

    def buffers(self, ctx, worker, step: _Step) -> tuple:
        """The worker's two split buffers for ``step`` (size x lanes each)."""
        b = ctx.b
        base = b.gep(ctx.scratch_pointer(), [b.add(i64(self.layout["buffers"]),
                                                   b.mul(worker, i64(self.layout["worker_bytes"])))],
                     inbounds=True, source_etype=ir.IntType(8))
        count = step.length.size * step.lanes
        ptrs = [b.gep(base, [i64(k * count)], inbounds=True, source_etype=self.ct) for k in range(4)]
        return ptrs

    def prepare(self, ctx) -> None:
        """Twiddles, chirps and Bluestein filters, before any step."""
        for n in self.plan.sizes:
            _fill_roots(ctx, n, self.sign, _Interleaved(ctx.b, self.ct, self.region(ctx, ("roots", n))))
        for n in self.plan.bluestein_lengths:
            self._prepare_bluestein(ctx, n)

    def _prepare_bluestein(self, ctx, n: int) -> None:
        """``filter = FFT_m(g) / m`` with ``g[j] = g[m - j] = conj chirp[j]``
        (j < n, zeros between): the convolution's kernel in frequency space."""
        b, ct = ctx.b, self.ct
        length = _Length.of(n)
        m = length.size
        chirp = _Interleaved(b, ct, self.region(ctx, ("chirp", n)))
        _fill_chirp(ctx, n, self.sign, chirp)
        step = next(s for s in self.plan.steps if s.length.n == n)
        ptrs = self.buffers(ctx, i64(0), step)
        a = _Split(b, ct, ptrs[0], ptrs[1])
        zero = ir.Constant(ct, 0.0)
        lanes = i64(step.lanes)     # g in lane 0 (passes of the step's lanes)
        with for_range(b, m * step.lanes, "fft.g0") as j:
            a.store(j, (zero, zero))
        with for_range(b, n, "fft.g") as j:
            g = c_conj(b, chirp.load(j))
            a.store(b.mul(j, lanes), g)
            with b.if_then(b.icmp_unsigned(">", j, i64(0))):
                a.store(b.mul(b.sub(i64(m), j), lanes), g)
        passes = self.passes(ctx, step, ptrs)
        res = _Split(b, ct, *(ptrs[:2] if passes % 2 == 0 else ptrs[2:]))
        filt = _Interleaved(b, ct, self.region(ctx, ("filter", n)))
        inv_m = ir.Constant(ct, 1.0 / m)
        with for_range(b, m, "fft.gs") as j:
            filt.store(j, c_scale(b, res.load(b.mul(j, lanes)), inv_m))

    def passes(self, ctx, step: _Step, ptrs) -> int:
        """The Stockham passes of ``step``'s lines (the library's ``FftVariant``
        functions) on the lanes in ``ptrs[0:2]``; the result is in
        ``ptrs[0:2]`` after an even number of passes, else in ``ptrs[2:4]``:
        returns that number.  A step of fewer blocks than threads (one long
        line) shares each pass among them: its twiddles ``k`` when there
        are enough, else its values (the worker's buffers are worker 0's)."""
        length, size = step.length, step.length.size
        lanes, tasks = step.lanes, self.pass_tasks(step)
        done = 1
        for stage, p in enumerate(length.radices):
            m = size // (done * p)
            order = (0, 1, 2, 3) if stage % 2 == 0 else (2, 3, 0, 1)
            variant = FftVariant(self.pt, p, self.sign, lanes, m if m <= CONSTANT_M else 0)

            def call(c, bufs, k0, k1, j0, j1, done=done, m=m, order=order, variant=variant):
                fn = gemm_library.declare(c.b.module, variant, "pass")
                c.b.call(fn, [bufs[i] for i in order] + [self.region(c, ("roots", size)), i64(done), i64(m),
                                                          k0, k1, j0, j1])
            run = m * lanes
            if tasks == 1:
                call(ctx, ptrs, i64(0), i64(done), i64(0), i64(run))
            elif done >= tasks:
                chunk = -(-done // tasks)
                ctx.parallel_for(-(-done // chunk), lambda tctx, w, call=call, chunk=chunk, done=done, run=run: call(
                    tctx, self.buffers(tctx, i64(0), step), *task_range(tctx.b, w, chunk, done), i64(0), i64(run)))
            else:
                chunk = -(-run // (tasks * PASS_ALIGN)) * PASS_ALIGN
                ctx.parallel_for(-(-run // chunk), lambda tctx, w, call=call, chunk=chunk, done=done, run=run: call(
                    tctx, self.buffers(tctx, i64(0), step), i64(0), i64(done), *task_range(tctx.b, w, chunk, run)))
            done *= p
        return len(length.radices)

    def pass_tasks(self, step: _Step) -> int:
        """Threads each pass of ``step`` is shared among (1: blocks are)."""
        if step.blocks >= self.plan.threads or step.length.size * step.lanes < SPLIT_POINTS:
            return 1
        return self.plan.threads

    # -- one block ---------------------------------------------------------------

    def dft(self, ctx, step: _Step, ptrs) -> _Split:
        """The DFT of length ``n`` (direction ``self.sign``) of the lanes in
        ``ptrs[0:2]`` (split, ``t * step.lanes + l``); returns where ``X[k]``,
        k < n, is (``ptrs[0:2]`` or ``ptrs[2:4]``).  Bluestein: ``X[k] =
        chirp[k] (a' * g)[k]`` with ``a'[t] = a[t] chirp[t]``, the circular
        convolution of length m the inverse FFT of the product of FFTs, as
        ``conj FFT(conj(FFT(a') filter))`` (the filter holds 1/m).  The
        m-point FFTs take the kernel's direction: the convolution theorem
        holds for either sign, the filter being made with the same one."""
        b, ct = ctx.b, self.ct
        length = step.length
        stride = step.lanes
        a = _Split(b, ct, ptrs[0], ptrs[1])
        other = _Split(b, ct, ptrs[2], ptrs[3])
        if not length.bluestein:
            passes = self.passes(ctx, step, ptrs)
            return a if passes % 2 == 0 else other
        n, m = length.n, length.size
        chirp = _Interleaved(b, ct, self.region(ctx, ("chirp", n)))
        filt = _Interleaved(b, ct, self.region(ctx, ("filter", n)))
        zero = ir.Constant(ct, 0.0)
        with for_range(b, n, "fft.bc") as t:
            c = chirp.load(t)
            with for_range(b, stride, "fft.bcl") as l:
                e = b.add(b.mul(t, i64(stride)), l)
                a.store(e, c_mul(b, a.load(e), c))
        with dyn_range(b, i64(n * stride), i64(m * stride), 1, "fft.bz") as e:
            a.store(e, (zero, zero))
        passes = self.passes(ctx, step, ptrs)
        res = a if passes % 2 == 0 else other
        with for_range(b, m, "fft.bf") as k:
            f = filt.load(k)
            with for_range(b, stride, "fft.bfl") as l:
                e = b.add(b.mul(k, i64(stride)), l)
                a.store(e, c_conj(b, c_mul(b, res.load(e), f)))
        self.passes(ctx, step, ptrs)
        res = a if passes % 2 == 0 else other
        with for_range(b, n, "fft.bo") as k:
            c = chirp.load(k)
            with for_range(b, stride, "fft.bol") as l:
                e = b.add(b.mul(k, i64(stride)), l)
                res.store(e, c_mul(b, c_conj(b, res.load(e)), c))
        return res

    # -- lines ---------------------------------------------------------------------

    def block_lines(self, b, step: _Step, blk) -> tuple:
        """Block ``blk``'s first line ``(o, i)``, which of the two varies along
        the block, and its line count."""
        g = step.lines_per_block
        if step.inner == 1:
            o0 = b.mul(blk, i64(g))
            count = b.sub(i64(step.outer), o0)
            return (o0, i64(0)), 0, b.select(b.icmp_signed("<", count, i64(g)), count, i64(g))
        per = -(-step.inner // g)
        o = b.udiv(blk, i64(per))
        i0 = b.mul(b.urem(blk, i64(per)), i64(g))
        count = b.sub(i64(step.inner), i0)
        return (o, i0), 1, b.select(b.icmp_signed("<", count, i64(g)), count, i64(g))

    def flat(self, ctx, where: str):
        """A pointer to the components (``self.ct``) of ``where`` ('operand',
        'work' or 'output') when its elements lie in row-major order, else None."""
        if where == "work":
            return self.region(ctx, "work")
        array = ctx.operand_array(0) if where == "operand" else ctx.output_arrays()[0]
        dims = array.shape.dimensions
        if any(d > 1 and s != math.prod(dims[k + 1:]) for k, (d, s) in enumerate(zip(dims, strides(array.shape)))):
            return None
        return array.ptr

    def _shape_of(self, where: str):
        return (self.inst.operands[0].shape if where == "operand" else
                self.inst.shape if where == "output" else None)

    def line_access(self, ctx, step: _Step, where: str, o, i):
        """``(load(t), store(t, value))`` of the line ``(o, i)`` of ``where``
        ('operand', 'work' or 'output'), complex values as (re, im) pairs of
        ``self.ct`` (a real operand's or output's as one value)."""
        b, ct = ctx.b, self.ct
        dims, axis = step.dims, step.axis
        shape = self._shape_of(where)
        complex_ = shape is None or shape.element_type.is_complex
        length = dims[axis] if shape is None else shape.dimensions[axis]
        ptr = self.flat(ctx, where)
        if ptr is not None:
            first = b.add(b.mul(o, i64(length * step.inner)), i)
            at = lambda t: b.add(first, b.mul(t, i64(step.inner)))  # noqa: E731
            if complex_:
                arr = _Interleaved(b, ct, ptr)
                return (lambda t: arr.load(at(t))), (lambda t, v: arr.store(at(t), v))
            el = lambda t: b.gep(ptr, [at(t)], inbounds=True, source_etype=ct)  # noqa: E731
            return (lambda t: b.load(el(t), typ=ct)), (lambda t, v: b.store(v, el(t)))
        prefix = _unravel(b, o, dims[:axis])
        suffix = _unravel(b, i, dims[axis + 1:])
        index = lambda t: Index(prefix + [t] + suffix)  # noqa: E731
        if where == "operand":
            read = ctx.operand_generator(0)
            if complex_:
                def load(t):
                    v = read(index(t))
                    return b.extract_value(v, 0), b.extract_value(v, 1)
                return load, None
            return (lambda t: read(index(t))), None
        (out,) = ctx.output_arrays()
        if complex_:
            ty = ir.LiteralStructType([ct, ct])

            def store(t, v):
                packed = b.insert_value(b.insert_value(ir.Constant(ty, ir.Undefined), v[0], 0), v[1], 1)
                out.write(b, index(t), packed)
            return None, store
        return None, (lambda t, v: out.write(b, index(t), v))

    def run_block(self, ctx, step: _Step, source: str, dest: str, worker, blk) -> None:
        b, ct = ctx.b, self.ct
        n, stride = step.length.n, step.lanes
        ptrs = self.buffers(ctx, worker, step)
        a = _Split(b, ct, ptrs[0], ptrs[1])
        (o, i), along, count = self.block_lines(b, step, blk)
        zero = ir.Constant(ct, 0.0)
        with b.if_then(b.icmp_signed("<", count, i64(step.lines_per_block))):
            with for_range(b, n * stride, "fft.z") as e:     # lanes without a line
                a.store(e, (zero, zero))
        blk_ = _Block(self, ctx, step, ptrs, (o, i), along, count)
        blk_.gather(source)
        blk_.scatter(dest, self.dft(ctx, step, ptrs))

    def run_step(self, ctx, step: _Step, source: str, dest: str) -> None:
        tasks = min(self.plan.workers, step.blocks)
        if tasks == 1 or self.pass_tasks(step) > 1:     # (blocks on worker 0, passes shared)
            with dyn_range(ctx.b, i64(0), i64(step.blocks), 1, "fft.blk") as blk:
                self.run_block(ctx, step, source, dest, i64(0), blk)
            return

        # Each worker a run of consecutive blocks: blocks next to each other
        # share cache lines (a block of lines along the inner index is part
        # of every row it crosses), so interleaved they would bounce between cores.
        chunk = -(-step.blocks // tasks)

        def task(tctx, w):
            lo, hi = task_range(tctx.b, w, chunk, step.blocks)
            with dyn_range(tctx.b, lo, hi, 1, "fft.blk") as blk:
                self.run_block(tctx, step, source, dest, w, blk)
        ctx.parallel_for(-(-step.blocks // chunk), task)


class _Block:
    """One block of lines of a step: copied into the worker's split buffers
    (gather) and the transform's result copied out (scatter).  Where a line
    is contiguous in a row-major array, tiles of ``VW`` lines are moved as
    vectors through a ``VW x VW`` transpose (:func:`_transpose`); the rest
    (lines left over, other layouts, the Hermitian gather) element by element."""

    def __init__(self, kernel: _Kernel, ctx, step: _Step, ptrs, first, along: int, count):
        self.k, self.ctx, self.step, self.ptrs = kernel, ctx, step, ptrs
        self.b, self.ct = ctx.b, kernel.ct
        self.first, self.along, self.count = first, along, count
        self.stride = step.lanes
        self.vw = min(32 // kernel.plan.esize, step.lanes)
        self.a = _Split(self.b, self.ct, ptrs[0], ptrs[1])

    def line(self, l):
        b, (o, i) = self.b, self.first
        return (b.add(o, l), i) if self.along == 0 else (o, b.add(i, l))

    def lane_of(self, l):
        """A real step's lane of line ``l`` and whether it is the imaginary part."""
        b = self.b
        high = b.icmp_signed(">=", l, i64(self.stride))
        return b.select(high, b.sub(l, i64(self.stride)), l), high

    def at(self, t, l):
        return self.b.add(self.b.mul(t, i64(self.stride)), l)

    def tiled(self, where: str):
        """The flat pointer of ``where`` when its lines can be moved in tiles
        (lines along the outer index, contiguous), and the lines that can."""
        if self.along != 0 or self.vw < 2 or self.stride % self.vw:
            return None, i64(0)
        ptr = self.k.flat(self.ctx, where)
        if ptr is None:
            return None, i64(0)
        b = self.b
        return ptr, b.mul(b.udiv(self.count, i64(self.vw)), i64(self.vw))

    def _vec(self, ptr, e):
        vt = ir.VectorType(self.ct, self.vw)
        return self.b.load(self.b.gep(ptr, [e], inbounds=True, source_etype=self.ct), typ=vt,
                           align=self.k.plan.esize)

    def _put(self, v, ptr, e):
        self.b.store(v, self.b.gep(ptr, [e], inbounds=True, source_etype=self.ct), align=self.k.plan.esize)

    def _row(self, l0, r, length: int, parts: int):
        """Component offset of the first element of line ``l0 + r`` (``parts``
        components per element)."""
        b = self.b
        return b.mul(b.add(b.add(self.first[0], l0), i64(r)), i64(length * parts))

    def _whole_or_not(self, copy) -> None:
        """``copy(lanes)`` (``lanes()`` a loop over the block's lines) twice:
        for a whole block with a known trip count (unrolled and vectorised
        across the lines), and for a block with fewer lines."""
        b = self.b
        whole = b.icmp_signed("==", self.count, i64(self.step.lines_per_block))
        with b.if_else(whole) as (then, otherwise):
            with then:
                copy(lambda: for_range(b, self.step.lines_per_block, "fft.l"))
            with otherwise:
                copy(lambda: dyn_range(b, i64(0), self.count, 1, "fft.l"))

    # -- gather ------------------------------------------------------------------

    def gather(self, source: str) -> None:
        b, step, n = self.b, self.step, self.step.length.n
        kind = step.kind
        if self.along == 1:      # lines along the inner index: contiguous across lines
            def copy(lanes):
                with for_range(b, n, "fft.gt") as t:
                    with lanes() as l:
                        load, _ = self.k.line_access(self.ctx, step, source, *self.line(l))
                        self.a.store(self.at(t, l), load(t))
            self._whole_or_not(copy)
            return
        ptr, tiled_lines = self.tiled(source)
        # Points of a line in the source: a c2r step reads half spectra.
        length = step.dims[step.axis] if kind == "c2r" else n

        def tile(l0, lane0, high, t0, per, parts):
            rows = [self._vec(ptr, b.add(self._row(l0, r, length, parts), b.mul(t0, i64(parts))))
                    for r in range(self.vw)]
            cols = _transpose(b, rows)
            for tp in range(per):
                t = b.add(t0, i64(tp))
                e = self.at(t, lane0)
                if kind == "c2c":
                    self._put(cols[2 * tp], self.ptrs[0], e)
                    self._put(cols[2 * tp + 1], self.ptrs[1], e)
                elif kind == "r2c":
                    self._put(cols[tp], b.select(high, self.ptrs[1], self.ptrs[0]), e)
                else:
                    self._hermitian(t, lane0, high, (cols[2 * tp], cols[2 * tp + 1]), self._vector_split)
        if ptr is not None:
            self._tiles(tiled_lines, length, kind == "r2c", "fft.gv", tile,
                        lambda l, first: self._gather_line(source, l, first))
        with dyn_range(b, tiled_lines, self.count, 1, "fft.gl") as l:
            self._gather_line(source, l, 0)

    def _tiles(self, tiled_lines, length: int, real: bool, name: str, tile, leftover) -> None:
        """``tile(l0, lane0, high, t0, per, parts)`` for each tile of ``vw``
        lines from ``l0`` (lane ``lane0``, ``high``: a real step's imaginary
        part) and ``per`` points from ``t0`` (``parts`` components each: a
        tile is a ``vw x vw`` square of components); ``leftover(l, first)``
        for each line's points from ``first`` that fill no tile."""
        b, vw = self.b, self.vw
        per, parts = (vw, 1) if real else (vw // 2, 2)
        with dyn_range(b, i64(0), tiled_lines, vw, name) as l0:
            lane0, high = self.lane_of(l0) if self.step.kind != "c2c" else (l0, None)
            if length >= per:
                with for_range(b, length // per, f"{name}t") as c:
                    tile(l0, lane0, high, b.mul(c, i64(per)), per, parts)
            if length % per:
                with for_range(b, vw, f"{name}r") as r:
                    leftover(b.add(l0, r), length - length % per)

    def _gather_line(self, source: str, l, t_first: int) -> None:
        """Elements ``t_first..`` of line ``l``, one at a time."""
        b, step, n, a, ct = self.b, self.step, self.step.length.n, self.a, self.ct
        load, _ = self.k.line_access(self.ctx, step, source, *self.line(l))
        if step.kind == "c2c":
            with for_range(b, n - t_first, "fft.gt") as t:
                t = b.add(t, i64(t_first))
                a.store(self.at(t, l), load(t))
        elif step.kind == "r2c":
            lane, high = self.lane_of(l)
            with for_range(b, n - t_first, "fft.gt") as t:
                t = b.add(t, i64(t_first))
                b.store(load(t), b.gep(b.select(high, self.ptrs[1], self.ptrs[0]), [self.at(t, lane)],
                                       inbounds=True, source_etype=ct))
        else:   # the two loops have no branches: LLVM vectorises them along a line
            lane, high = self.lane_of(l)
            half = step.dims[step.axis]
            with for_range(b, half - t_first, "fft.gt") as k:
                k = b.add(k, i64(t_first))
                self._hermitian(k, lane, high, load(k), (a.load, a.store), mirror=False)
            first = max(1, t_first)
            if n - half >= first:
                with for_range(b, n - half - first + 1, "fft.gm") as k:
                    k = b.add(k, i64(first))
                    self._hermitian(k, lane, high, load(k), (a.load, a.store), direct=False)

    @property
    def _vector_split(self):
        """``(load(e), store(e, value))`` of ``vw`` lanes of the block's split buffers."""
        p = self.ptrs
        return ((lambda e: (self._vec(p[0], e), self._vec(p[1], e))),
                (lambda e, v: (self._put(v[0], p[0], e), self._put(v[1], p[1], e))))

    def _hermitian(self, k, lane, high, x, access, direct: bool = True, mirror: bool | None = None) -> None:
        """An IRFFT's point ``k`` of a half spectrum into ``Z = X + i Y``:
        ``X[k]`` (``high`` false) or ``Y[k]`` (true), and their conjugates
        at ``n - k`` (the spectrum of a real line is Hermitian) where that is
        not in the half; the imaginary parts of the zero and Nyquist
        frequencies are ignored (numpy's and XLA's IRFFT).  The X lines of a
        block come before its Y lines, which add to what they stored.
        ``direct``: store at ``k``; ``mirror``: at ``n - k`` (None: where ``k``
        is one, tested at run time)."""
        b, n = self.b, self.step.length.n
        load, store = access
        re, im = x
        real_bin = b.icmp_signed("==", k, i64(0))
        if n % 2 == 0:
            real_bin = b.or_(real_bin, b.icmp_signed("==", k, i64(n // 2)))
        im = b.select(real_bin, ir.Constant(re.type, None), im)

        def put(at, value, added):
            old = load(at)
            store(at, (b.select(high, b.fadd(old[0], added[0]), value[0]),
                       b.select(high, b.fadd(old[1], added[1]), value[1])))
        if direct:
            put(self.at(k, lane), (re, im), (b.fneg(im), re))                 # X[k]; i Y[k]
        if mirror is False:
            return
        if mirror is None:
            inside = b.and_(b.icmp_signed(">=", k, i64(1)),
                            b.icmp_signed("<=", k, i64(n - self.step.dims[self.step.axis])))
            with b.if_then(inside):
                put(self.at(b.sub(i64(n), k), lane), (re, b.fneg(im)), (im, re))   # conj X[k]; i conj Y[k]
        else:
            put(self.at(b.sub(i64(n), k), lane), (re, b.fneg(im)), (im, re))
    # -- scatter -----------------------------------------------------------------

    def scatter(self, dest: str, x: _Split) -> None:
        b, step, n, vw = self.b, self.step, self.step.length.n, self.vw
        kind = step.kind
        if self.along == 1:
            def copy(lanes):
                with for_range(b, n, "fft.st") as t:
                    with lanes() as l:
                        _, store = self.k.line_access(self.ctx, step, dest, *self.line(l))
                        store(t, self._scaled(x.load(self.at(t, l))))
            self._whole_or_not(copy)
            return
        ptr, tiled_lines = self.tiled(dest)
        length = step.dims[step.axis] if kind == "r2c" else n

        def tile(l0, lane0, high, t0, per, parts):
            cols = []
            for tp in range(per):
                t = b.add(t0, i64(tp))
                if kind == "c2c":
                    cols += self._scaled((self._vec(x.re, self.at(t, lane0)), self._vec(x.im, self.at(t, lane0))))
                elif kind == "r2c":
                    cols += self._separate(x, t, lane0, high, self._vec)
                else:
                    v = self._vec(b.select(high, x.im, x.re), self.at(t, lane0))
                    cols.append(b.fmul(v, self._splat(1.0 / n)))
            rows = _transpose(b, cols)
            for r in range(vw):
                self._put(rows[r], ptr, b.add(self._row(l0, r, length, parts), b.mul(t0, i64(parts))))
        if ptr is not None:
            self._tiles(tiled_lines, length, kind == "c2r", "fft.sv", tile,
                        lambda l, first: self._scatter_line(dest, x, l, first))
        with dyn_range(b, tiled_lines, self.count, 1, "fft.sl") as l:
            self._scatter_line(dest, x, l, 0)

    def _splat(self, value: float):
        return ir.Constant(ir.VectorType(self.ct, self.vw), [value] * self.vw)

    def _scaled(self, v):
        """An inverse transform's ``v / n`` (scalars or vectors)."""
        if not self.k.plan.inverse:
            return list(v)
        c = 1.0 / self.step.length.n
        scale = self._splat(c) if isinstance(v[0].type, ir.VectorType) else ir.Constant(self.ct, c)
        return [self.b.fmul(v[0], scale), self.b.fmul(v[1], scale)]

    def _separate(self, x: _Split, k, lane, high, load) -> list:
        """An RFFT's ``X[k]`` (``high`` false) or ``Y[k]`` (true) from the
        transform ``Z`` of ``x + i y``: ``(Z[k] + conj Z[n-k]) / 2`` or
        ``(Z[k] - conj Z[n-k]) / 2i``."""
        b, n = self.b, self.step.length.n
        mirror = b.select(b.icmp_signed("==", k, i64(0)), k, b.sub(i64(n), k))
        zk = load(x.re, self.at(k, lane)), load(x.im, self.at(k, lane))
        zc = load(x.re, self.at(mirror, lane)), load(x.im, self.at(mirror, lane))
        low = (b.fadd(zk[0], zc[0]), b.fsub(zk[1], zc[1]))
        upper = (b.fadd(zk[1], zc[1]), b.fsub(zc[0], zk[0]))
        half = self._splat(0.5) if isinstance(zk[0].type, ir.VectorType) else ir.Constant(self.ct, 0.5)
        return [b.fmul(b.select(high, upper[p], low[p]), half) for p in range(2)]

    def _scatter_line(self, dest: str, x: _Split, l, t_first: int) -> None:
        """Elements ``t_first..`` of line ``l``'s result, one at a time."""
        b, step, n, ct = self.b, self.step, self.step.length.n, self.ct
        _, store = self.k.line_access(self.ctx, step, dest, *self.line(l))
        if step.kind == "c2c":
            with for_range(b, n - t_first, "fft.st") as t:
                t = b.add(t, i64(t_first))
                store(t, self._scaled(x.load(self.at(t, l))))
            return
        lane, high = self.lane_of(l)
        if step.kind == "r2c":
            half = step.dims[step.axis]
            scalar = lambda ptr, e: b.load(b.gep(ptr, [e], inbounds=True, source_etype=ct), typ=ct)  # noqa: E731
            with for_range(b, half - t_first, "fft.st") as k:
                k = b.add(k, i64(t_first))
                store(k, self._separate(x, k, lane, high, scalar))
            return
        with for_range(b, n - t_first, "fft.st") as t:
            t = b.add(t, i64(t_first))
            v = x.load(self.at(t, lane))
            store(t, b.fmul(b.select(high, v[1], v[0]), ir.Constant(ct, 1.0 / n)))


def _transpose(b, rows: list) -> list:
    """The columns of the square matrix whose rows are the vectors ``rows``
    (a power of two of them): log2 rounds of interleaving row ``i`` with row
    ``i + w/2`` (the perfect shuffle)."""
    w = len(rows)
    i32 = ir.IntType(32)
    lo = ir.Constant(ir.VectorType(i32, w), [k // 2 + (k % 2) * w for k in range(w)])
    hi = ir.Constant(ir.VectorType(i32, w), [w // 2 + k // 2 + (k % 2) * w for k in range(w)])
    for _ in range(w.bit_length() - 1):
        nxt = [None] * w
        for k in range(w // 2):
            nxt[2 * k] = b.shuffle_vector(rows[k], rows[k + w // 2], lo)
            nxt[2 * k + 1] = b.shuffle_vector(rows[k], rows[k + w // 2], hi)
        rows = nxt
    return rows


def _unravel(b, linear, dims) -> list:
    """The row-major multi-index of ``linear`` in ``dims``."""
    out = []
    for d in reversed(dims):
        if d == 1:
            out.append(i64(0))
            continue
        out.append(b.urem(linear, i64(d)))
        linear = b.udiv(linear, i64(d))
    return out[::-1]


def _fft(ctx: KernelContext) -> None:
    inst, b = ctx.inst, ctx.b
    (out,) = ctx.output_arrays()
    fill_padding(b, out)
    if inst.shape.element_count() == 0 or inst.operands[0].shape.element_count() == 0:
        return
    plan = _plan(inst)
    kernel = _Kernel(ctx, plan)
    kernel.prepare(ctx)
    last = len(plan.steps) - 1
    for k, step in enumerate(plan.steps):
        kernel.run_step(ctx, step, "operand" if k == 0 else "work", "output" if k == last else "work")


def _stockham_only(inst: HloInstruction) -> str | None:
    """None when every transformed length is a product of radices."""
    for n in _lengths(inst):
        if _radices(n) is None:
            rest, p, largest = n, 2, 1
            while p * p <= rest:
                while rest % p == 0:
                    largest, rest = p, rest // p
                p += 1
            return f"length {n} has the prime factor {max(largest, rest)}, above {MAX_RADIX}"
    return None


#: The kernel candidates of this module (``kernels.register_all``): one
#: kernel, named by whether a length needs Bluestein's algorithm.
FFT = KernelCandidate("fft.stockham", _fft, applies=_stockham_only, scratch_bytes=_scratch_bytes)
FFT_BLUESTEIN = KernelCandidate("fft.bluestein", _fft, scratch_bytes=_scratch_bytes)
