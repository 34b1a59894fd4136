"""jax's ``lapack_sgetrf_ffi`` / ``lapack_dgetrf_ffi`` of a big matrix as one
kernel: LAPACK's blocked right-looking LU with partial pivoting, in place in
the first result, its bulk in calls of the GEMM library.

Semantics are ``getrf``'s as jax consumes them (``kernels/lapack.py`` calls
the routine itself for the other matrices): result 0 the L\\U factors in the
operand's layout, result 1 the 1-based s32 pivots ``ipiv``, result 2 the s32
``info`` (0, or the first i with ``U(i, i)`` exactly zero: the factorisation
still completes).  A pivot is the FIRST element of largest magnitude in its
column (``isamax``).  The results agree with LAPACK's to rounding (the sums
go in another order); where the arithmetic is exact (small integers) the
pivots and factors are LAPACK's exactly.

Layout: jax's m x n matrices are column-major (batch dimensions major), so
each is the row-major n x m matrix ``w = a^T``: row j of ``w`` is column j
of ``a``, a column panel of ``a`` is a block of contiguous rows of ``w``
(the pivot search runs along a row), and LAPACK's row interchanges are
interchanges of two columns of ``w``.  The factorisation works on ``w`` in
the result buffer.  Panels of BLOCK columns of ``a`` (rows ``[j, j + k)`` of
``w``, :func:`panels`); panel 0 is factored first, then for each panel:

1. the rows after it (the trailing rows ``r >= j + k``), in chunks of
   SOLVE_TASK_ROWS on the thread pool: the panel's interchanges applied to
   the row (the library's ``laswp``), then ``u12 = l11^-1 a12``: the
   chunk's ``w[r, j:j+k]`` copied transposed into the k x R scratch ``x``,
   solved there by the library's forward substitution with ``l11`` (unit
   lower, a transposed copy of the panel's diagonal block: the substitution
   runs along contiguous rows of ``x``), and copied back (U's entries);
2. ``w[j+k:, j+k:] -= x^T w[j:j+k, j+k:]``, the rank-k update of the
   trailing matrix: one GEMM of the library (``gemm_update``: the product
   subtracted tile by tile by its epilogue), reading ``x`` as its A and the
   panel's L as its B in place.  One step of look-ahead: task 0 of the
   parallel region updates the next panel's rows first (a serial GEMM),
   factors that panel (the library's ``getrf_panel``) and then joins the
   other tasks as a worker of the GEMM of the remaining rows, so the serial
   factorisation runs beside the update instead of between two parallel
   steps.

The interchanges of later panels are applied to the rows of L (the rows
before each panel) once at the end, panel by panel on the thread pool
(LAPACK applies them as it goes; nothing reads those entries in between).
Batch elements go one after the other.  Rectangular matrices too: for m > n
the panels' rows run to m; for n > m the rows after the last panel are only
solved (step 1) and updated.

Matrices of fewer than MIN_SIZE rows or columns keep LAPACK's routine
(``kernels/lapack.py``), so the small cases of jax's tests keep LAPACK's
results bit for bit: the kernel is faster there too (0.6-0.7x LAPACK's time
down to 48 x 48, one panel and no GEMM), but by at most ~30 us a call.

Why: LAPACK's ``sgetrf`` (the OpenBLAS scipy bundles, which jax calls too)
factors a 512 x 512 f32 matrix at ~42 GFLOP/s on this machine's two cores,
where the library's GEMM runs at ~300; here ~90% of the 2n^3/3 flops are
that GEMM, and the kernel's own code is glue around library code
(``KernelCandidate.glue``).
"""
from __future__ import annotations

import math

from llvmlite import ir

from ...hlo import custom_call as hcc
from ...hlo.ir import HloInstruction
from ...shape import F32, F64
from .. import gemm_library
from ..emitter import KernelContext, ModuleEmitter
from ..ir_array import i64
from ..kernel_choice import KernelCandidate, plan_function
from ..linalg_functions import LinalgVariant, trsm_routine
from . import gemm_update
from ._util import I32, ScratchPlan, dyn_range, memcpy
from .linalg import _element, _minor_swapped

#: Columns of a panel (rows of ``w``): the serial factorisations' width and
#: the trailing update's K.
BLOCK = 64
#: The most panels: a bigger matrix takes wider panels (whole multiples of
#: BLOCK), so the kernel's code stays bounded.
MAX_BLOCKS = 32
#: Smaller matrices (rows or columns) keep LAPACK's routine.
MIN_SIZE = 128
#: Trailing rows per task of step 1 (interchanges and substitution).
SOLVE_TASK_ROWS = 64


def _target(inst: HloInstruction):
    target = hcc.target_of(inst)
    return hcc.lapack_target(target) if hcc.is_builtin(target) else None


def applies(inst: HloInstruction) -> str | None:
    t = _target(inst)
    if t is None or t.routine != "getrf":
        return "not jax's getrf"
    if t.dtype not in (F32, F64):
        return "not f32 or f64"
    a = inst.operands[0].shape
    if a.rank < 2 or min(a.dimensions[-2:]) < MIN_SIZE:
        return f"a matrix of fewer than {MIN_SIZE} rows or columns (LAPACK's routine)"
    if a != _minor_swapped(a) or inst.shape.tuple_shapes[0] != a:
        return "not column-major matrices"
    return None


def panels(mn: int) -> list[tuple[int, int]]:
    """``(first row of w, rows)`` of the panels of a factorisation of min(m, n)
    = ``mn`` columns: BLOCK (or a multiple, at most MAX_BLOCKS panels), the
    last the rest (:func:`gemm_update.blocks_of`)."""
    return gemm_update.blocks_of(mn, BLOCK * max(1, -(-mn // (BLOCK * MAX_BLOCKS))))


class _Step:
    """The update after panel s: its GEMMs, the look-ahead rows' (serial) and
    the others' (parallel), as (M, N, K) or None."""

    def __init__(self, blocks, s: int, m: int, n: int):
        j, k = blocks[s]
        self.j, self.k = j, k
        self.r0 = j + k                          # the first trailing row
        self.rows = n - self.r0                  # R: the trailing rows (x is k x R)
        self.cols = m - self.r0                  # N: the trailing columns
        self.next = blocks[s + 1] if s + 1 < len(blocks) else None
        self.ahead = self.rest = None
        if self.rows == 0 or self.cols == 0:
            return
        if self.next is None:                    # n > m: the rows after the last panel
            self.rest = (self.rows, self.cols, k)
            return
        k2 = self.next[1]
        # A single row left over joins the look-ahead rows (no GEMM of one row).
        ahead = k2 if self.rows - k2 >= 2 else self.rows
        self.ahead = (ahead, self.cols, k)
        if ahead < self.rows:
            self.rest = (self.rows - ahead, self.cols, k)


class _Plan:
    def __init__(self, inst: HloInstruction):
        a = inst.operands[0].shape
        self.pt = a.element_type
        self.m, self.n = a.dimensions[-2:]
        self.mn = min(self.m, self.n)
        self.batch = math.prod(a.dimensions[:-2])
        self.blocks = panels(self.mn)
        self.steps = [_Step(self.blocks, s, self.m, self.n) for s in range(len(self.blocks))]
        kmax = max(k for _, k in self.blocks)

        def gemm(mnk):
            return gemm_update.plan(self.pt, gemm_update.Gemm(*mnk, False))
        self.gemms = {mnk: gemm(mnk) for st in self.steps for mnk in (st.ahead, st.rest) if mnk}
        es = self.pt.byte_size
        self.scratch = ScratchPlan()
        self.scratch.add("x", kmax * self.n * es)
        self.scratch.add("t", kmax * kmax * es)
        self.scratch.add("product_ahead", max([st.ahead[0] * st.ahead[1] for st in self.steps if st.ahead],
                                              default=0) * es)
        self.scratch.add("product", max([st.rest[0] * st.rest[1] for st in self.steps if st.rest], default=0) * es)
        self.scratch.add("gemm_ahead", gemm_update.scratch_bytes(self.gemms[st.ahead] for st in self.steps
                                                                 if st.ahead))
        self.scratch.add("gemm", gemm_update.scratch_bytes(self.gemms[st.rest] for st in self.steps if st.rest))


#: ``inst``'s plan, made once (scratch sizing and emission both ask).
_plan = plan_function(_Plan)


def _scratch(me: ModuleEmitter, inst: HloInstruction) -> int:
    return _plan(inst).scratch.size


def _routine(module, pt, name: str) -> ir.Function:
    return gemm_library.declare(module, LinalgVariant(pt, name), "call")


def _at(b: ir.IRBuilder, plan: _Plan, w, row, col=0):
    """``&w[row, col]`` (rows m apart)."""
    row = i64(row) if isinstance(row, int) else row
    return _element(b, w, b.add(b.mul(row, i64(plan.m)), i64(col)), plan.pt)


def _factor_panel(b: ir.IRBuilder, plan: _Plan, w, ipiv, info, j: int, k: int) -> None:
    """The library's ``getrf_panel`` on rows [j, j + k) of ``w`` from column j."""
    piv = b.gep(ipiv, [i64(j)], inbounds=True, source_etype=I32)
    b.call(_routine(b.module, plan.pt, "getrf_panel"),
           [_at(b, plan, w, j, j), i64(k), i64(plan.m - j), i64(plan.m), piv, i64(j), info])


def _solve_rows(ctx: KernelContext, plan: _Plan, st: _Step, w, ipiv, x, t) -> None:
    """Step 1 for the trailing rows of panel ``st``: interchanges, then
    ``x = (l11^-1 w[r0:, j:j+k]^T)`` and its transpose back into ``w``."""
    b, pt, m = ctx.b, plan.pt, plan.m
    j, k, r0, rows = st.j, st.k, st.r0, st.rows
    transpose = _routine(b.module, pt, "transpose")
    b.call(transpose, [t, _at(b, plan, w, j, j), i64(1), i64(k), i64(k), i64(m), i64(k)])

    def task(tctx: KernelContext, c) -> None:
        tb = tctx.b
        w, ipiv, x, t = tctx.shared
        ra = tb.mul(c, i64(SOLVE_TASK_ROWS))
        rb = tb.add(ra, i64(SOLVE_TASK_ROWS))
        rb = tb.select(tb.icmp_signed("<", rb, i64(rows)), rb, i64(rows))
        count = tb.sub(rb, ra)
        first = _at(tb, plan, w, tb.add(ra, i64(r0)))
        tb.call(_routine(tb.module, pt, "laswp"), [first, i64(m), count, ipiv, i64(j), i64(j + k)])
        xa = _element(tb, x, ra, pt)
        wa = _element(tb, first, i64(j), pt)
        tr = _routine(tb.module, pt, "transpose")
        tb.call(tr, [xa, wa, i64(1), count, i64(k), i64(m), i64(rows)])
        tb.call(_routine(tb.module, pt, trsm_routine(True, False, True)), [x, t, i64(k), i64(rows), ra, rb, i64(k)])
        tb.call(tr, [wa, xa, i64(1), i64(k), count, i64(rows), i64(m)])

    ctx.parallel_for(-(-rows // SOLVE_TASK_ROWS), task, shared=(w, ipiv, x, t))


def _update(ctx: KernelContext, plan: _Plan, st: _Step, w, ipiv, info, x, scratch: dict) -> None:
    """Step 2 for panel ``st``: ``w[r0:, r0:] -= x^T w[j:j+k, r0:]``, with the
    next panel factored by task 0 (look-ahead)."""
    b, pt, m = ctx.b, plan.pt, plan.m
    j, r0, rows = st.j, st.r0, st.rows
    panel_l = _at(b, plan, w, j, r0)

    def prepare(mnk, first: int, which: str, serial: bool):
        return gemm_update.prepare(ctx, pt, gemm_update.Gemm(*mnk, False), plan.gemms[mnk],
                                   _element(b, x, i64(first), pt), rows, panel_l, m, _at(b, plan, w, r0 + first, r0),
                                   m, scratch["product" + which], scratch["gemm" + which], serial)

    ahead = prepare(st.ahead, 0, "_ahead", True) if st.ahead else None
    rest = prepare(st.rest, st.ahead[0] if st.ahead else 0, "", False) if st.rest else None
    if rest is None or ahead is None:
        for p in (ahead, rest):
            if p is not None and p.workers == 1:
                b.call(p.run, [p.desc, i64(0)])
            elif p is not None:
                ctx.parallel_for(p.workers, lambda tctx, wk, run=p.run: tctx.b.call(run, [tctx.shared[0], wk]),
                                 shared=(p.desc,))
        if st.next is not None:
            _factor_panel(b, plan, w, ipiv, info, *st.next)
        return
    workers = rest.workers

    def task(tctx: KernelContext, c) -> None:
        tb = tctx.b
        ahead_desc, rest_desc, w, ipiv, info = tctx.shared
        with tb.if_else(tb.icmp_signed("==", c, i64(0))) as (head, other):
            with head:
                tb.call(ahead.run, [ahead_desc, i64(0)])
                _factor_panel(tb, plan, w, ipiv, info, *st.next)
                if workers > 1:                  # then a worker of the rest, the last to start
                    tb.call(rest.run, [rest_desc, i64(0)])
            with other:
                tb.call(rest.run, [rest_desc, c if workers > 1 else i64(0)])

    ctx.parallel_for(max(workers, 2), task, shared=(ahead.desc, rest.desc, w, ipiv, info))


def _swap_left(ctx: KernelContext, plan: _Plan, w, ipiv) -> None:
    """The interchanges of the panels after each panel, applied to its rows
    (L's columns), one task per panel."""
    blocks = plan.blocks
    if len(blocks) < 2:
        return
    size, mn, m = blocks[0][1], plan.mn, plan.m

    def task(tctx: KernelContext, s) -> None:
        tb = tctx.b
        w, ipiv = tctx.shared
        j = tb.mul(s, i64(size))
        tb.call(_routine(tb.module, plan.pt, "laswp"),
                [_at(tb, plan, w, j), i64(m), i64(size), ipiv, tb.add(j, i64(size)), i64(mn)])

    ctx.parallel_for(len(blocks) - 1, task, shared=(w, ipiv))


def _emit(ctx: KernelContext) -> None:
    inst, b = ctx.inst, ctx.b
    plan = _plan(inst)
    ctx.long_running = True
    lu, piv, info = ctx.output_arrays()
    a = ctx.operand_array(0)
    if plan.batch == 0:
        return
    nbytes = inst.shape.tuple_shapes[0].byte_size()
    with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(lu.ptr, ir.IntType(64)), b.ptrtoint(a.ptr, ir.IntType(64)))):
        memcpy(b, lu.ptr, a.ptr, i64(nbytes))
    base = ctx.scratch_pointer()
    x, t = plan.scratch.pointer(b, base, "x"), plan.scratch.pointer(b, base, "t")
    scratch = {name: plan.scratch.pointer(b, base, name)
               for name in ("product", "product_ahead", "gemm", "gemm_ahead")}
    m, n, mn = plan.m, plan.n, plan.mn
    with dyn_range(b, i64(0), i64(plan.batch), name="lu.e") as e:
        w = _element(b, lu.ptr, b.mul(e, i64(m * n)), plan.pt)
        ipiv = b.gep(piv.ptr, [b.mul(e, i64(mn))], inbounds=True, source_etype=I32)
        info_e = b.gep(info.ptr, [e], inbounds=True, source_etype=I32)
        b.store(ir.Constant(I32, 0), info_e)
        _factor_panel(b, plan, w, ipiv, info_e, *plan.blocks[0])
        for st in plan.steps:
            if st.rows == 0:
                continue
            _solve_rows(ctx, plan, st, w, ipiv, x, t)
            if st.cols:
                _update(ctx, plan, st, w, ipiv, info_e, x, scratch)
        _swap_left(ctx, plan, w, ipiv)


#: The kernel candidate (``kernels.register_all``: tried before the LAPACK call).
GETRF_BLOCKED = KernelCandidate("custom-call.getrf-blocked", _emit, applies=applies, scratch_bytes=_scratch, glue=True)
