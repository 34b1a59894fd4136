"""A big f32/f64 ``triangular-solve`` (spec: *TriangularSolve*) as one
kernel: blocked substitution in place in one work array, its bulk in calls
of the GEMM library.

The work array is the unblocked kernel's (``linalg._SolvePlan``): ``t w =
w'`` with ``w`` row-major m x nr (b, or b^T for a right-side solve; the result
buffer itself when its layout allows) and ``t`` = op(a) or op(a)^T read along
rows (a, or a transposed copy).  Blocks of BLOCK rows in substitution order
(forward when t is lower); for each:

1. ``w[blk] -= t[blk, done] . w[done]``, ``done`` the rows solved before
   (one GEMM of the library, read in place: ``gemm_update``);
2. ``w[blk] = t[blk, blk]^-1 w[blk]``: the library's substitution with the
   diagonal block (copied dense), column chunks on the thread pool.

Matrices of at most MIN_SIZE rows and solves with one right-hand side (a
matrix-vector product, which the library does not run) are the unblocked
kernel's.

Why one kernel rather than blocks of HLO (XLA's TriangularSolveExpander):
as HLO each block slices the rows not solved yet out of b and the solved
blocks are concatenated at the end, each a copy of most of b, and the small
solves are kernels of their own (at 512 x 512 with 512 right-hand sides: a
fifth of the time, and ~110 ms of compile time against ~50 ms here).
"""
from __future__ import annotations

from ...hlo.ir import HloInstruction
from ...shape import F32, F64
from .. import gemm_library
from ..emitter import KernelContext, ModuleEmitter
from ..ir_array import IrArray, i64
from ..kernel_choice import KernelCandidate
from ..linalg_functions import LinalgVariant, trsm_routine
from ..loops import fill_padding
from . import gemm_update
from ._util import ScratchPlan, dyn_range, memcpy
from .linalg import _SolvePlan, _copy, _element

#: Rows of a block (the diagonal blocks the substitution solves; the GEMM's M).
BLOCK = 128
#: Matrices up to this size are solved whole by the unblocked kernel.
MIN_SIZE = BLOCK
#: Columns of the substitution per task at least.
SOLVE_TASK_COLUMNS = 32
#: Tasks of one block's substitution at most.
SOLVE_TASKS = 8


def applies(inst: HloInstruction) -> str | None:
    if inst.shape.element_type not in (F32, F64):
        return "not f32 or f64"
    plan = _SolvePlan(inst)
    if plan.m <= MIN_SIZE:
        return f"a matrix of at most {MIN_SIZE} rows (the unblocked kernel)"
    if plan.nr < 2:
        return "one right-hand side (a matrix-vector product for the GEMM)"
    return None


def row_blocks(m: int) -> list[tuple[int, int]]:
    """``(start, rows)`` of the blocks of BLOCK rows, the last the rest
    (:func:`gemm_update.blocks_of`)."""
    return gemm_update.blocks_of(m, BLOCK)


class _Plan:
    def __init__(self, inst: HloInstruction):
        self.solve = sp = _SolvePlan(inst)
        self.pt = inst.shape.element_type
        self.m, self.nr, self.batch = sp.m, sp.nr, sp.batch
        self.blocks = row_blocks(self.m)
        if not sp.forward:
            self.blocks.reverse()
        self.gemms = {}
        for s, r in self.blocks:
            k = s if sp.forward else self.m - s - r
            if k:
                self.gemms[(r, k)] = gemm_update.plan(self.pt, gemm_update.Gemm(r, self.nr, k, True))
        # b and a reach the work arrays as in the unblocked kernel (``_copy``).
        es = self.pt.byte_size
        kmax = max(r for _, r in self.blocks)
        self.scratch = ScratchPlan()
        self.work_in_place = sp.work_in_place
        if not self.work_in_place:
            self.scratch.add("w", sp.work.byte_size())
        if not sp.t_is_a:
            self.scratch.add("t", sp.t.byte_size())
        self.scratch.add("tb", kmax * kmax * es)
        self.scratch.add("product", kmax * self.nr * es)
        self.scratch.add("gemm", gemm_update.scratch_bytes(self.gemms.values()))
        self.chunk = max(SOLVE_TASK_COLUMNS, -(-self.nr // SOLVE_TASKS))
        self.tasks = -(-self.nr // self.chunk)


def _scratch(me: ModuleEmitter, inst: HloInstruction) -> int:
    return _Plan(inst).scratch.size


def _solve_block(ctx: KernelContext, plan: _Plan, w, tb, rows: int) -> None:
    """``w[:rows] = tb^-1 w[:rows]`` (``w`` row-major, nr columns; ``tb``
    rows x rows dense) in column chunks on the thread pool."""
    sp, nr, chunk = plan.solve, plan.nr, plan.chunk
    name = trsm_routine(sp.forward, False, sp.unit)

    def task(tctx: KernelContext, c) -> None:
        tb_ = tctx.b
        w, t = tctx.shared
        c0 = tb_.mul(c, i64(chunk))
        c1 = tb_.add(c0, i64(chunk))
        c1 = tb_.select(tb_.icmp_signed("<", c1, i64(nr)), c1, i64(nr))
        fn = gemm_library.declare(tb_.module, LinalgVariant(plan.pt, name), "call")
        tb_.call(fn, [w, t, i64(rows), i64(nr), c0, c1])

    if plan.tasks == 1:
        fn = gemm_library.declare(ctx.b.module, LinalgVariant(plan.pt, name), "call")
        ctx.b.call(fn, [w, tb, i64(rows), i64(nr), i64(0), i64(nr)])
    else:
        ctx.parallel_for(plan.tasks, task, shared=(w, tb))


def _emit(ctx: KernelContext) -> None:
    inst, b = ctx.inst, ctx.b
    (out,) = ctx.output_arrays()
    fill_padding(b, out)
    if inst.shape.element_count() == 0:
        return
    plan = _Plan(inst)
    sp, pt, m, nr = plan.solve, plan.pt, plan.m, plan.nr
    ctx.long_running = True
    base = ctx.scratch_pointer()
    work = IrArray(out.ptr if plan.work_in_place else plan.scratch.pointer(b, base, "w"), sp.work)
    _copy(b, work, ctx.operand_array(1))
    t_all = ctx.operand_array(0).ptr
    if not sp.t_is_a:
        t_all = plan.scratch.pointer(b, base, "t")
        _copy(b, IrArray(t_all, sp.t), ctx.operand_array(0))
    tb = plan.scratch.pointer(b, base, "tb")
    product = plan.scratch.pointer(b, base, "product")
    gemm_scratch = plan.scratch.pointer(b, base, "gemm")
    with dyn_range(b, i64(0), i64(plan.batch), name="trsm.e") as e:
        w = _element(b, work.ptr, b.mul(e, i64(m * nr)), pt)
        t = _element(b, t_all, b.mul(e, i64(m * m)), pt)
        for s, r in plan.blocks:
            # The rows solved before this block: above it (forward) or below.
            lo, hi = (0, s) if sp.forward else (s + r, m)
            if hi > lo:
                g = gemm_update.Gemm(r, nr, hi - lo, True)
                gemm_update.subtract_product(ctx, pt, g, plan.gemms[(r, hi - lo)], _element(b, t, i64(s * m + lo), pt),
                                             m, _element(b, w, i64(lo * nr), pt), nr,
                                             _element(b, w, i64(s * nr), pt), nr, product, gemm_scratch)
            with dyn_range(b, i64(0), i64(r), name="trsm.tb") as q:       # the diagonal block, dense
                row = b.add(i64(s), q)
                memcpy(b, _element(b, tb, b.mul(q, i64(r)), pt),
                       _element(b, t, b.add(b.mul(row, i64(m)), i64(s)), pt), i64(r * pt.byte_size))
            _solve_block(ctx, plan, _element(b, w, i64(s * nr), pt), tb, r)
    if not plan.work_in_place:
        _copy(b, out, work)


#: The kernel candidate (``kernels.register_all``: tried before the unblocked one).
TRIANGULAR_SOLVE_BLOCKED = KernelCandidate("triangular-solve.blocked", _emit, applies=applies,
                                           scratch_bytes=_scratch, glue=True)
