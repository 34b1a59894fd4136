"""A big f32/f64 ``cholesky`` (spec: *Cholesky*) as one kernel: the blocked
up-looking factorisation (LAPACK's ``potrf``, upper form) in place in one
work array, its bulk in calls of the GEMM library.

The work array ``w`` is row-major and holds the upper factor ``u``: the
result buffer for ``lower=false``; for ``lower=true`` a scratch copy of
``a``'s lower triangle transposed (the upper factor of ``a^T`` is ``l^T``),
copied out transposed at the end.  Copies in and out go by bands of BLOCK
rows on the thread pool and move only the triangle the result has.  The
diagonal block of block row 0 is factored first; then for each block row
``[i, i + k)`` (:func:`row_blocks`), its diagonal block factored:

1. ``w[i:i+k, i+k:] -= u[:i, i:i+k]^T u[:i, i+k:]``: one GEMM of the library
   on ``w`` in place (``gemm_update``: a dense product, subtracted tile by
   tile by the library's epilogue while the tile is in L1);
2. ``w[i:i+k, i+k:] = u_ii^-T w[i:i+k, i+k:]``: the library's forward
   substitution with ``u_ii^T`` (a transposed copy of the block), column
   chunks on the thread pool; task 0 solves the columns of the next
   diagonal block first, then updates that block (``w[i':i'+k', i':i'+k']
   -= u[:i', i':i'+k']^T u[:i', i':i'+k']``, a GEMM on its thread) and
   factors it (the library's ``potrf``): one step of look-ahead, so that the
   serial factorisation of a diagonal block runs beside the other tasks'
   substitution instead of between two parallel steps.

If the last diagonal element is NaN (a pivot failed somewhere: NaN spreads
to every later block), the result is all NaN, as XLA's expander makes it.
Batch elements go one after the other.

Why one kernel rather than blocks of HLO (XLA's CholeskyExpander, dots
around small cholesky and triangular-solve ops): as HLO every operand of a
dot is a slice copied out of the factor (the GEMM library reads buffers),
every result is copied back in (``dynamic-update-slice``), the small solves
transpose their panels in and out, and each of the ~40 ops is a kernel to
dispatch and to compile (at 512 x 512 the copies and dispatch are about half
the time, the kernels ~250 ms of LLVM time).  Here the GEMM reads ``u``
where it is and the module's kernel is glue around library code
(``KernelCandidate.glue``: compiled with the cheap pipeline).
"""
from __future__ import annotations

import math

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...shape import F32, F64
from .. import gemm_library, types
from ..emitter import KernelContext, ModuleEmitter
from ..ir_array import IrArray, i64
from ..kernel_choice import KernelCandidate
from ..linalg_functions import LinalgVariant
from ..loops import fill_padding
from . import gemm_update
from ._util import I1, I8, I64, PTR, ScratchPlan, dyn_range, memcpy
from .linalg import _copy, _element, _is_row_major, _row_major

#: Rows of a block (the diagonal blocks ``potrf`` factors serially; the
#: panel update's M).  64 at 512 x 512: see docs/linalg.md.
BLOCK = 64
#: The most row blocks: a bigger matrix takes bigger blocks (whole
#: multiples of BLOCK), so the kernel's code stays bounded.
MAX_BLOCKS = 32
#: Columns of the substitution per task at least (below this the solve runs
#: on one thread).
SOLVE_TASK_COLUMNS = 64


def applies(inst: HloInstruction) -> str | None:
    if inst.shape.element_type not in (F32, F64):
        return "not f32 or f64"
    n = inst.shape.dimensions[-1]
    if n <= BLOCK:
        return f"a matrix of at most {BLOCK} rows (the unblocked kernel)"
    return None


def row_blocks(n: int) -> list[tuple[int, int]]:
    """``(start, rows)`` of the blocks of an n x n factorisation (n > BLOCK):
    BLOCK rows (or a multiple, at most MAX_BLOCKS blocks), the last one the
    rest (:func:`gemm_update.blocks_of`)."""
    return gemm_update.blocks_of(n, BLOCK * max(1, -(-n // (BLOCK * MAX_BLOCKS))))


class _Plan:
    def __init__(self, inst: HloInstruction):
        self.pt = inst.shape.element_type
        self.n = inst.shape.dimensions[-1]
        self.batch = math.prod(inst.shape.dimensions[:-2])
        self.lower = bool(inst.attrs.get("lower", False))
        self.nbands = -(-self.n // BLOCK)
        self.blocks = row_blocks(self.n)
        kmax = max(r for _, r in self.blocks)
        # The GEMMs (M, N, K): each block's rows right of its diagonal block, and
        # each diagonal block (the look-ahead's).
        shapes = {(k, self.n - i - k, i) for i, k in self.blocks if i and i + k < self.n}
        shapes |= {(k, k, i) for i, k in self.blocks if i}
        self.gemms = {mnk: gemm_update.plan(self.pt, gemm_update.Gemm(*mnk, False)) for mnk in shapes}
        es = self.pt.byte_size
        self.scratch = ScratchPlan()
        if self.lower:
            self.scratch.add("w", self.n * self.n * es)
        # Other layouts go through row-major copies of the whole batch.
        self.a_copy = not _is_row_major(inst.operands[0].shape)
        self.out_copy = not _is_row_major(inst.shape)
        if self.a_copy:
            self.scratch.add("a", inst.shape.byte_size())
        if self.out_copy:
            self.scratch.add("out", inst.shape.byte_size())
        self.scratch.add("product", kmax * self.n * es)
        self.scratch.add("t", kmax * kmax * es)
        self.scratch.add("gemm", gemm_update.scratch_bytes(self.gemms.values()))


def _scratch(me: ModuleEmitter, inst: HloInstruction) -> int:
    return _Plan(inst).scratch.size


def _routine(module, pt, name: str) -> ir.Function:
    return gemm_library.declare(module, LinalgVariant(pt, name), "call")


def _gemm_update(ctx: KernelContext, plan: _Plan, w, i: int, k: int, c0: int, c1: int, product, gemm_scratch,
                 serial: bool = False) -> None:
    """``w[i:i+k, c0:c1] -= w[:i, i:i+k]^T w[:i, c0:c1]`` (``gemm_update``)."""
    b, n, pt = ctx.b, plan.n, plan.pt
    g = gemm_update.Gemm(k, c1 - c0, i, False)
    gemm_update.subtract_product(ctx, pt, g, plan.gemms[(g.M, g.N, g.K)], _element(b, w, i64(i), pt), n,
                                 _element(b, w, i64(c0), pt), n, _element(b, w, i64(i * n + c0), pt), n,
                                 product, gemm_scratch, serial)


def _solve_and_look_ahead(ctx: KernelContext, plan: _Plan, w, s: int, t, product, gemm_scratch) -> None:
    """Row block ``s`` (its diagonal block factored, the rest updated):
    ``w[i:i+k, i+k:] = u_ii^-T w[i:i+k, i+k:]`` by forward substitution with
    ``t = u_ii^T``, in column chunks on the thread pool, where task 0 solves
    the columns of the next diagonal block, updates that block and factors
    it (one step of look-ahead: the serial factorisation runs beside the
    other tasks' substitution, off the critical path)."""
    b, n, pt = ctx.b, plan.n, plan.pt
    (i, k), (i2, k2) = plan.blocks[s], plan.blocks[s + 1]
    rest = n - i2 - k2                                    # columns after the next diagonal block
    chunks = -(-rest // SOLVE_TASK_COLUMNS)
    b.call(_routine(b.module, pt, "transpose"), [t, _element(b, w, i64(i * n + i), pt), i64(1), i64(k), i64(k),
                                                 i64(n), i64(k)])

    def task(tctx: KernelContext, c) -> None:
        tb = tctx.b
        w, t, product, gemm_scratch = tctx.shared
        panel = _element(tb, w, i64(i * n + i2), pt)
        trsm = _routine(tb.module, pt, "trsm_fwd")
        with tb.if_else(tb.icmp_signed("==", c, i64(0))) as (head, other):
            with head:
                tb.call(trsm, [panel, t, i64(k), i64(n), i64(0), i64(k2)])
                _gemm_update(tctx, plan, w, i2, k2, i2, i2 + k2, product, gemm_scratch, serial=True)
                tb.call(_routine(tb.module, pt, "potrf"), [_element(tb, w, i64(i2 * n + i2), pt), i64(k2), i64(n)])
            with other:
                c0 = tb.add(i64(k2), tb.mul(tb.sub(c, i64(1)), i64(SOLVE_TASK_COLUMNS)))
                c1 = tb.add(c0, i64(SOLVE_TASK_COLUMNS))
                c1 = tb.select(tb.icmp_signed("<", c1, i64(k2 + rest)), c1, i64(k2 + rest))
                tb.call(trsm, [panel, t, i64(k), i64(n), c0, c1])

    ctx.parallel_for(1 + chunks, task, shared=(w, t, product, gemm_scratch))


def _fill(b: ir.IRBuilder, pt, ptr, count, value) -> None:
    """``count`` elements at ``ptr`` set to ``value`` (a loop: the NaNs of a failed matrix)."""
    with dyn_range(b, i64(0), count, name="chol.fill") as j:
        b.store(value, _element(b, ptr, j, pt))


def _zero(b: ir.IRBuilder, pt, ptr, count) -> None:
    """``count`` zeros at ``ptr`` (libc's memset: the kernel's own code is
    compiled without the loop vectoriser, ``KernelCandidate.glue``)."""
    fn = b.module.globals.get("llvm.memset.p0.i64")
    if fn is None:
        fn = ir.Function(b.module, ir.FunctionType(ir.VoidType(), [PTR, I8, I64, I1]), "llvm.memset.p0.i64")
    b.call(fn, [ptr, ir.Constant(I8, 0), b.mul(count, i64(pt.byte_size)), ir.Constant(I1, 0)])


def _bands(plan: "_Plan", tb: ir.IRBuilder, band):
    """(first row, rows) of copy band ``band``: BLOCK rows, the last the rest
    (each inside one factorisation block)."""
    i = tb.mul(band, i64(BLOCK))
    left = tb.sub(i64(plan.n), i)
    return i, tb.select(tb.icmp_signed("<", left, i64(BLOCK)), left, i64(BLOCK))


def _copy_in(ctx: KernelContext, plan: "_Plan", a, w) -> None:
    """The triangle the factorisation reads, band by band on the thread pool:
    ``w[i:i+k, i:] = a[i:, i:i+k]^T`` (lower: w holds ``a^T``) or
    ``a[i:i+k, i:]`` (upper)."""
    n, pt = plan.n, plan.pt

    def task(tctx: KernelContext, band) -> None:
        tb = tctx.b
        a, w = tctx.shared
        i, k = _bands(plan, tb, band)
        at = tb.add(tb.mul(i, i64(n)), i)
        if plan.lower:
            tb.call(_routine(tb.module, pt, "transpose"),
                    [_element(tb, w, at, pt), _element(tb, a, at, pt), i64(1), tb.sub(i64(n), i), k, i64(n), i64(n)])
            return
        with dyn_range(tb, i64(0), k, name="chol.in") as r:
            row = tb.add(at, tb.mul(r, i64(n)))
            memcpy(tb, _element(tb, w, row, pt), _element(tb, a, row, pt),
                   tb.mul(tb.sub(i64(n), i), i64(pt.byte_size)))

    ctx.parallel_for(plan.nbands, task, shared=(a, w))


def _copy_out(ctx: KernelContext, plan: "_Plan", w, out, failed) -> None:
    """The result from ``w``, band by band on the thread pool: lower,
    ``out[i:i+k, :i+k] = w[:i+k, i:i+k]^T`` (the diagonal block's strict lower
    triangle in w is zeros) and zeros right of it; upper (``w`` is ``out``),
    zeros left of the diagonal block.  All NaN when ``failed`` (an i8: the
    last pivot is NaN)."""
    n, pt = plan.n, plan.pt
    ety = types.memory_type(pt)

    def task(tctx: KernelContext, band) -> None:
        tb = tctx.b
        w, out, flag = tctx.shared
        i, k = _bands(plan, tb, band)
        row0 = _element(tb, out, tb.mul(i, i64(n)), pt)
        bad = tb.icmp_unsigned("!=", tb.load(flag, typ=I8), ir.Constant(I8, 0))
        with tb.if_else(bad) as (then, otherwise):
            with then:
                _fill(tb, pt, row0, tb.mul(k, i64(n)), ir.Constant(ety, math.nan))
            with otherwise:
                end = tb.add(i, k)
                if plan.lower:
                    tb.call(_routine(tb.module, pt, "transpose"),
                            [row0, _element(tb, w, i, pt), i64(1), end, k, i64(n), i64(n)])
                with dyn_range(tb, i64(0), k, name="chol.out") as r:
                    row = _element(tb, row0, tb.mul(r, i64(n)), pt)
                    if plan.lower:
                        _zero(tb, pt, _element(tb, row, end, pt), tb.sub(i64(n), end))
                    else:
                        _zero(tb, pt, row, i)

    ctx.parallel_for(plan.nbands, task, shared=(w, out, failed))


def _emit(ctx: KernelContext) -> None:
    inst, b = ctx.inst, ctx.b
    (out,) = ctx.output_arrays()
    fill_padding(b, out)
    if inst.shape.element_count() == 0:
        return
    plan = _Plan(inst)
    ctx.long_running = True
    base = ctx.scratch_pointer()
    a = ctx.operand_array(0)
    if plan.a_copy:
        a_rm = IrArray(plan.scratch.pointer(b, base, "a"), _row_major(inst.shape))
        _copy(b, a_rm, a)
        a = a_rm
    result = IrArray(plan.scratch.pointer(b, base, "out"), _row_major(inst.shape)) if plan.out_copy else out
    work = result.ptr if not plan.lower else plan.scratch.pointer(b, base, "w")
    failed = ctx.alloca_builder.alloca(I8, name="chol.failed")
    product = plan.scratch.pointer(b, base, "product")
    t = plan.scratch.pointer(b, base, "t")
    gemm_scratch = plan.scratch.pointer(b, base, "gemm")
    potrf = _routine(b.module, plan.pt, "potrf")
    n = plan.n
    with dyn_range(b, i64(0), i64(plan.batch), name="chol.e") as e:
        at = b.mul(e, i64(n * n))
        a_e, out_e = _element(b, a.ptr, at, plan.pt), _element(b, result.ptr, at, plan.pt)
        w = work if plan.lower else out_e
        _copy_in(ctx, plan, a_e, w)
        b.call(potrf, [w, i64(plan.blocks[0][1]), i64(n)])
        for s, (i, k) in enumerate(plan.blocks[:-1]):
            # Block s's diagonal block is updated and factored (by the step before):
            # the rest of its rows lose the rows above, then are solved.
            if i and i + k < n:
                _gemm_update(ctx, plan, w, i, k, i + k, n, product, gemm_scratch)
            _solve_and_look_ahead(ctx, plan, w, s, t, product, gemm_scratch)
        # NaN spreads from a failed block to every later one: the corner tells.
        corner = b.load(_element(b, w, i64(n * n - 1), plan.pt), typ=types.memory_type(plan.pt))
        b.store(b.zext(b.fcmp_unordered("uno", corner, corner), I8), failed)
        _copy_out(ctx, plan, w, out_e, failed)
    if plan.out_copy:
        _copy(b, out, result)


#: The kernel candidate (``kernels.register_all``: tried before the unblocked one).
CHOLESKY_BLOCKED = KernelCandidate("cholesky.blocked", _emit, applies=applies, scratch_bytes=_scratch, glue=True)
