"""The one-thread form of the blocked ``cholesky`` (``cholesky_blocked``):
the up-looking factorisation (LAPACK's ``potrf``, upper form) on the work
array ``w`` (see ``cholesky_blocked``), whose updates are few big GEMMs.

The diagonal block of block row 0 is factored first; then for each block
row ``[i, i + k)`` (``cholesky_blocked.row_blocks``), its diagonal block
factored, in a loop (the GEMMs' shapes, one per step, are choices of one
call site: ``gemm_update.subtract_product_of``):

1. ``w[i:i+k, i+k:] -= u[:i, i:i+k]^T u[:i, i+k:]``: one GEMM of the library
   on ``w`` in place (``gemm_update``: a dense product, subtracted tile by
   tile by the library's epilogue while the tile is in L1);
2. ``w[i:i+k, i+k:] = u_ii^-T w[i:i+k, i+k:]``: the library's forward
   substitution with ``u_ii^T`` (a transposed copy of the block);
3. the next diagonal block updated (``w[i':i'+k', i':i'+k'] -= u[:i',
   i':i'+k']^T u[:i', i':i'+k']``) and factored (the library's ``potrf``).

Copies in and out go by bands of BLOCK rows and move only the triangle the
result has.  On one thread this form's GEMMs (M = 64, K up to n) run faster
than the right-looking form's (K = 64): 512 x 512 f32 3-5% and f64 5-11%
less time; on several threads the right-looking form's column sets keep
both cores busy and their rows in one core's cache.
"""
from __future__ import annotations

import math
from contextlib import contextmanager

from llvmlite import ir

from ...hlo.ir import HloInstruction
from .. import gemm_library, types
from ..emitter import KernelContext
from ..ir_array import i64
from ..linalg_functions import LinalgVariant
from . import gemm_update
from ._util import I64, ScratchPlan, constant_table, dyn_range, fill, memcpy, zero_elements
from .linalg import _element

#: Rows of a copy band.
BAND = 64
#: Bytes of a row the substitution routine solves per call (the strip's
#: rows stay in L1).
STRIP_BYTES = 256


class Plan:
    """The form's GEMMs and scratch (``product``, ``t``, ``gemm``) for an n x n
    factorisation in ``blocks`` (``cholesky_blocked.row_blocks``)."""

    def __init__(self, inst: HloInstruction, blocks: list):
        self.pt = inst.shape.element_type
        self.n = n = inst.shape.dimensions[-1]
        self.lower = bool(inst.attrs.get("lower", False))
        self.blocks = blocks
        kmax = max(r for _, r in self.blocks)
        # Per step s (row block s, from 1): its rows right of the next diagonal
        # block, and the next diagonal block (the look-ahead's); from step 0.
        # A choice per step (``gemm_update.subtract_product_of``).
        self.panel = [(k, n - i - k, i) for i, k in blocks[1:-1]]
        self.diagonal = [(k2, k2, i2) for (i2, k2) in blocks[1:]]
        shapes = set(self.panel) | set(self.diagonal)
        self.gemms = {mnk: gemm_update.plan(self.pt, gemm_update.Gemm(*mnk, False)) for mnk in shapes}
        es = self.pt.byte_size
        self.scratch = ScratchPlan()
        self.scratch.add("product", kmax * n * es)
        self.scratch.add("t", kmax * kmax * es)
        self.scratch.add("gemm", gemm_update.scratch_bytes(self.gemms.values()))


def _routine(module, pt, name: str) -> ir.Function:
    return gemm_library.declare(module, LinalgVariant(pt, name), "call")


def _subtract(ctx: KernelContext, plan: Plan, shapes: list, index, w, r0, c0, product, scratch) -> None:
    """``w[r0:r0+M, c0:c0+N] -= u[:K, r0:r0+M]^T u[:K, c0:c0+N]`` with (M, N, K)
    ``shapes[index]`` (``gemm_update.subtract_product_of``)."""
    b, n, pt = ctx.b, plan.n, plan.pt
    choices = [(gemm_update.Gemm(*mnk, False), plan.gemms[mnk]) for mnk in shapes]
    gemm_update.subtract_product_of(ctx, pt, choices, index, _element(b, w, r0, pt), n, _element(b, w, c0, pt), n,
                                    _element(b, w, b.add(b.mul(r0, i64(n)), c0), pt), n, product, scratch)


@contextmanager
def _bands(b: ir.IRBuilder, plan: Plan, name: str):
    """A loop over the bands of BAND rows, yielding ``(i, k)`` (the last band
    the rest); each band is inside one block of the factorisation (blocks
    are multiples of BAND)."""
    n = plan.n
    with dyn_range(b, i64(0), i64(n), step=BAND, name=name) as i:
        left = b.sub(i64(n), i)
        yield i, b.select(b.icmp_signed("<", left, i64(BAND)), left, i64(BAND))


def _copy_in(b: ir.IRBuilder, plan: Plan, a, w) -> None:
    """The triangle the factorisation reads, band by band: ``w[i:i+k, i:] =
    a[i:, i:i+k]^T`` (lower: w holds ``a^T``) or ``a[i:i+k, i:]`` (upper)."""
    n, pt = plan.n, plan.pt
    with _bands(b, plan, "chol.in") as (i, k):
        at = b.add(b.mul(i, i64(n)), i)
        if plan.lower:
            b.call(_routine(b.module, pt, "transpose"),
                   [_element(b, w, at, pt), _element(b, a, at, pt), i64(1), b.sub(i64(n), i), k, i64(n), i64(n)])
        else:
            with dyn_range(b, i64(0), k, name="chol.in.r") as r:
                row = b.add(at, b.mul(r, i64(n)))
                memcpy(b, _element(b, w, row, pt), _element(b, a, row, pt), b.mul(b.sub(i64(n), i), i64(pt.byte_size)))


def _copy_out(b: ir.IRBuilder, plan: Plan, w, out) -> None:
    """The result from ``w``, band by band: lower, ``out[i:i+k, :i+k] =
    w[:i+k, i:i+k]^T`` (the diagonal block's strict lower triangle in w is
    zeros: ``potrf``'s) and zeros right of it; upper (``w`` is ``out``),
    zeros left of the diagonal block."""
    n, pt = plan.n, plan.pt
    with _bands(b, plan, "chol.out") as (i, k):
        row0 = _element(b, out, b.mul(i, i64(n)), pt)
        end = b.add(i, k)
        if plan.lower:
            b.call(_routine(b.module, pt, "transpose"), [row0, _element(b, w, i, pt), i64(1), end, k, i64(n), i64(n)])
        with dyn_range(b, i64(0), k, name="chol.out.r") as r:
            row = _element(b, row0, b.mul(r, i64(n)), pt)
            if plan.lower:
                zero_elements(b, pt, _element(b, row, end, pt), b.sub(i64(n), end))
            else:
                zero_elements(b, pt, row, i)


def factor(ctx: KernelContext, plan: Plan, a_e, w, out_e, scratch) -> None:
    """One matrix: ``a_e`` (row-major) factored in ``w`` (``out_e`` itself
    for ``lower=false``) and the result written to ``out_e``, all NaN when a
    pivot failed; ``scratch``: ``plan.scratch``'s base.  A loop over the
    steps: the GEMMs' shapes are choices of one call site each."""
    b, n, pt = ctx.b, plan.n, plan.pt
    product = plan.scratch.pointer(b, scratch, "product")
    t = plan.scratch.pointer(b, scratch, "t")
    gemm_scratch = plan.scratch.pointer(b, scratch, "gemm")
    bl = plan.blocks
    nb = len(bl)
    table = constant_table(b.module, f"xlac.cholesky.up.{n}.{bl[0][1]}", [x for blk in bl for x in blk])
    transpose, potrf = _routine(b.module, pt, "transpose"), _routine(b.module, pt, "potrf")
    trsm = _routine(b.module, pt, "trsm_fwd")
    _copy_in(b, plan, a_e, w)
    b.call(potrf, [w, i64(bl[0][1]), i64(n)])
    with dyn_range(b, i64(0), i64(nb - 1), name="chol.s") as s:
        i, k, i2, k2 = (b.load(b.gep(table, [i64(0), b.add(b.mul(s, i64(2)), i64(f))], inbounds=True), typ=I64)
                        for f in range(4))
        # Row block s right of the next diagonal block loses the rows above
        # (its diagonal block and the next one are updated and factored).
        if plan.panel:
            with b.if_then(b.icmp_signed(">", s, i64(0))):
                _subtract(ctx, plan, plan.panel, b.sub(s, i64(1)), w, i, i2, product, gemm_scratch)
        # Row block s solved with u_ss^T, then the next diagonal block updated and factored.
        b.call(transpose, [t, _element(b, w, b.add(b.mul(i, i64(n)), i), pt), i64(1), k, k, i64(n), k])
        strip = STRIP_BYTES // pt.byte_size
        with dyn_range(b, i2, i64(n), step=strip, name="chol.strip") as j0:
            j1 = b.add(j0, i64(strip))
            b.call(trsm, [_element(b, w, b.mul(i, i64(n)), pt), t, k, i64(n), j0,
                          b.select(b.icmp_signed("<", j1, i64(n)), j1, i64(n)), k])
        _subtract(ctx, plan, plan.diagonal, s, w, i2, i2, product, gemm_scratch)
        b.call(potrf, [_element(b, w, b.add(b.mul(i2, i64(n)), i2), pt), k2, i64(n)])
    # NaN spreads from a failed block to every later one: the corner tells.
    ety = types.memory_type(pt)
    corner = b.load(_element(b, w, i64(n * n - 1), pt), typ=ety)
    with b.if_else(b.fcmp_unordered("uno", corner, corner)) as (failed, ok):
        with failed:
            fill(b, pt, out_e, i64(n * n), ir.Constant(ety, math.nan))
        with ok:
            _copy_out(b, plan, w, out_e)
