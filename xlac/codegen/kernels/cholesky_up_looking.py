"""The one-thread form of the blocked ``cholesky`` (``cholesky_blocked``):
the up-looking factorisation (LAPACK's ``potrf``, upper form) on the work
array ``w`` (see ``cholesky_blocked``), whose updates are few big GEMMs.

The diagonal block of block row 0 is factored first; then for each block
row ``[i, i + k)`` (``cholesky_blocked.row_blocks``), its diagonal block
factored:

1. ``w[i:i+k, i+k:] -= u[:i, i:i+k]^T u[:i, i+k:]``: one GEMM of the library
   on ``w`` in place (``gemm_update``: a dense product, subtracted tile by
   tile by the library's epilogue while the tile is in L1);
2. ``w[i:i+k, i+k:] = u_ii^-T w[i:i+k, i+k:]``: the library's forward
   substitution with ``u_ii^T`` (a transposed copy of the block), in column
   chunks; chunk 0 solves the columns of the next diagonal block first,
   then updates that block (``w[i':i'+k', i':i'+k'] -= u[:i', i':i'+k']^T
   u[:i', i':i'+k']``) and factors it (the library's ``potrf``).

Copies in and out go by bands of BLOCK rows and move only the triangle the
result has.  On one thread this form's GEMMs (M = 64, K up to n) run faster
than the right-looking form's (K = 64): 512 x 512 f32 3-5% and f64 5-11%
less time; on several threads the right-looking form's column sets keep
both cores busy and their rows in one core's cache.
"""
from __future__ import annotations

import math

from llvmlite import ir

from ...hlo.ir import HloInstruction
from .. import gemm_library, types
from ..emitter import KernelContext
from ..ir_array import i64
from ..linalg_functions import LinalgVariant
from . import gemm_update
from ._util import I1, I8, I64, PTR, ScratchPlan, dyn_range, memcpy
from .linalg import _element

#: Rows of a copy band.
BAND = 64
#: Columns of the substitution per chunk at least.
SOLVE_TASK_COLUMNS = 64


class Plan:
    """The form's GEMMs and scratch (``product``, ``t``, ``gemm``) for an n x n
    factorisation in ``blocks`` (``cholesky_blocked.row_blocks``)."""

    def __init__(self, inst: HloInstruction, blocks: list):
        self.pt = inst.shape.element_type
        self.n = inst.shape.dimensions[-1]
        self.lower = bool(inst.attrs.get("lower", False))
        self.nbands = -(-self.n // BAND)
        self.blocks = blocks
        kmax = max(r for _, r in self.blocks)
        # The GEMMs (M, N, K): each block's rows right of its diagonal block, and
        # each diagonal block (the look-ahead's).
        shapes = {(k, self.n - i - k, i) for i, k in self.blocks if i and i + k < self.n}
        shapes |= {(k, k, i) for i, k in self.blocks if i}
        self.gemms = {mnk: gemm_update.plan(self.pt, gemm_update.Gemm(*mnk, False)) for mnk in shapes}
        es = self.pt.byte_size
        self.scratch = ScratchPlan()
        self.scratch.add("product", kmax * self.n * es)
        self.scratch.add("t", kmax * kmax * es)
        self.scratch.add("gemm", gemm_update.scratch_bytes(self.gemms.values()))


def _routine(module, pt, name: str) -> ir.Function:
    return gemm_library.declare(module, LinalgVariant(pt, name), "call")


def _gemm_update(ctx: KernelContext, plan: Plan, w, i: int, k: int, c0: int, c1: int, product, gemm_scratch,
                 serial: bool = False) -> None:
    """``w[i:i+k, c0:c1] -= w[:i, i:i+k]^T w[:i, c0:c1]`` (``gemm_update``)."""
    b, n, pt = ctx.b, plan.n, plan.pt
    g = gemm_update.Gemm(k, c1 - c0, i, False)
    gemm_update.subtract_product(ctx, pt, g, plan.gemms[(g.M, g.N, g.K)], _element(b, w, i64(i), pt), n,
                                 _element(b, w, i64(c0), pt), n, _element(b, w, i64(i * n + c0), pt), n,
                                 product, gemm_scratch, serial)


def _solve_and_look_ahead(ctx: KernelContext, plan: Plan, w, s: int, t, product, gemm_scratch) -> None:
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
                tb.call(trsm, [panel, t, i64(k), i64(n), i64(0), i64(k2), i64(k)])
                _gemm_update(tctx, plan, w, i2, k2, i2, i2 + k2, product, gemm_scratch, serial=True)
                tb.call(_routine(tb.module, pt, "potrf"), [_element(tb, w, i64(i2 * n + i2), pt), i64(k2), i64(n)])
            with other:
                c0 = tb.add(i64(k2), tb.mul(tb.sub(c, i64(1)), i64(SOLVE_TASK_COLUMNS)))
                c1 = tb.add(c0, i64(SOLVE_TASK_COLUMNS))
                c1 = tb.select(tb.icmp_signed("<", c1, i64(k2 + rest)), c1, i64(k2 + rest))
                tb.call(trsm, [panel, t, i64(k), i64(n), c0, c1, i64(k)])

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


def _bands(plan: Plan, tb: ir.IRBuilder, band):
    """(first row, rows) of copy band ``band``: BAND rows, the last the rest."""
    i = tb.mul(band, i64(BAND))
    left = tb.sub(i64(plan.n), i)
    return i, tb.select(tb.icmp_signed("<", left, i64(BAND)), left, i64(BAND))


def _copy_in(ctx: KernelContext, plan: Plan, a, w) -> None:
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


def _copy_out(ctx: KernelContext, plan: Plan, w, out, failed) -> None:
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


def factor(ctx: KernelContext, plan: Plan, a_e, w, out_e, scratch) -> None:
    """One matrix: ``a_e`` (row-major) factored in ``w`` (``out_e`` itself
    for ``lower=false``) and the result written to ``out_e``, all NaN when a
    pivot failed; ``scratch``: ``plan.scratch``'s base."""
    b, n = ctx.b, plan.n
    product = plan.scratch.pointer(b, scratch, "product")
    t = plan.scratch.pointer(b, scratch, "t")
    gemm_scratch = plan.scratch.pointer(b, scratch, "gemm")
    failed = ctx.alloca_builder.alloca(I8, name="chol.failed")
    _copy_in(ctx, plan, a_e, w)
    b.call(_routine(b.module, plan.pt, "potrf"), [w, i64(plan.blocks[0][1]), i64(n)])
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
