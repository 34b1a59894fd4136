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
from ..task_grid import thread_count
from . import gemm_update
from ._util import I8, ScratchPlan, align, dyn_range, memcpy
from .linalg import _SolvePlan, _copy, _element, _is_row_major

#: Rows of a block (the diagonal blocks the substitution solves; the GEMM's M).
BLOCK = 128
#: Matrices up to this size are solved whole by the unblocked kernel.
MIN_SIZE = BLOCK
#: Column chunks (tasks) of a solve: one per thread, for these thread
#: counts (the most at or below this call's; an unknown count as 2) ...
TASKS = (1, 2, 4, 8)
#: ... of at least this many columns.
TASK_COLUMNS = 32
#: Bytes of a row the substitution routine solves per call (a block's
#: strip stays in L1: 512 x 512 f32 on one thread 1.22 -> 1.19 ms).
SOLVE_BYTES = 256


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


def column_chunks(nr: int, tasks: int) -> tuple[int, int]:
    """(columns of a chunk, chunks): ``tasks`` chunks of whole vectors (16
    columns), of at least TASK_COLUMNS columns, the last one the rest; a
    rest of one column joins the chunk before it (its update would be a
    matrix-vector product, which the GEMM library does not run)."""
    chunk = min(nr, max(TASK_COLUMNS, -(-nr // (16 * tasks)) * 16))
    chunks = -(-nr // chunk)
    if chunks > 1 and nr - (chunks - 1) * chunk == 1:
        chunks -= 1
    return (nr, 1) if chunks == 1 else (chunk, chunks)


class _Plan:
    def __init__(self, inst: HloInstruction):
        self.solve = sp = _SolvePlan(inst)
        self.pt = inst.shape.element_type
        self.m, self.nr, self.batch = sp.m, sp.nr, sp.batch
        self.blocks = row_blocks(self.m)
        if not sp.forward:
            self.blocks.reverse()
        # The splits of the columns: (threads, chunk, chunks), chunks differing.
        self.splits = []
        for p in TASKS:
            chunk, chunks = column_chunks(self.nr, p)
            if not self.splits or chunks != self.splits[-1][2]:
                self.splits.append((p, chunk, chunks))
        widths = {w for _, chunk, chunks in self.splits for w in (chunk, self.nr - (chunks - 1) * chunk)}
        self.gemms = {}
        for s, r in self.blocks:
            k = s if sp.forward else self.m - s - r
            for cw in widths:
                if k:
                    self.gemms[(r, cw, k)] = gemm_update.plan(self.pt, gemm_update.Gemm(r, cw, k, True))
        es = self.pt.byte_size
        kmax = max(r for _, r in self.blocks)
        # b and a reach the work arrays as in the unblocked kernel (``_copy``),
        # b into the result by each task, its columns, when both are row-major.
        self.work_in_place = sp.work_in_place
        self.copy_in_tasks = sp.work_in_place and _is_row_major(inst.operands[1].shape)
        self.product_bytes = align(kmax * max(widths) * es)
        self.slot_bytes = self.product_bytes + align(gemm_update.scratch_bytes(self.gemms.values()))
        self.scratch = ScratchPlan()
        if not self.work_in_place:
            self.scratch.add("w", sp.work.byte_size())
        if not sp.t_is_a:
            self.scratch.add("t", sp.t.byte_size())
        self.scratch.add("slots", max(chunks for _, _, chunks in self.splits) * self.slot_bytes)


def _scratch(me: ModuleEmitter, inst: HloInstruction) -> int:
    return _Plan(inst).scratch.size


def _solve_columns(tctx: KernelContext, plan: _Plan, w, t, b_in, slot, c0, cw: int) -> None:
    """Columns ``[c0, c0+cw)`` of ``w`` solved, block by block in
    substitution order: copied in from ``b_in`` (when not None), each block's
    rows less the rows solved before (``gemm_update``, on this thread), then
    solved with the diagonal block in place (the substitution routine)."""
    b, sp, pt, m, nr = tctx.b, plan.solve, plan.pt, plan.m, plan.nr
    if b_in is not None:
        with dyn_range(b, i64(0), i64(m), name="trsm.in") as r:
            at = b.add(b.mul(r, i64(nr)), c0)
            memcpy(b, _element(b, w, at, pt), _element(b, b_in, at, pt), i64(cw * pt.byte_size))
    trsm = gemm_library.declare(b.module, LinalgVariant(pt, trsm_routine(sp.forward, False, sp.unit)), "call")
    product = slot
    gemm_scratch = b.gep(slot, [i64(plan.product_bytes)], inbounds=True, source_etype=I8)
    for s, r in plan.blocks:
        lo, hi = (0, s) if sp.forward else (s + r, m)        # the rows solved before this block
        if hi > lo:
            g = gemm_update.Gemm(r, cw, hi - lo, True)
            gemm_update.subtract_product(tctx, pt, g, plan.gemms[(r, cw, hi - lo)],
                                         _element(b, t, i64(s * m + lo), pt), m,
                                         _element(b, w, b.add(i64(lo * nr), c0), pt), nr,
                                         _element(b, w, b.add(i64(s * nr), c0), pt), nr, product, gemm_scratch,
                                         serial=True)
        strip = SOLVE_BYTES // pt.byte_size
        end = b.add(c0, i64(cw))
        with dyn_range(b, c0, end, step=strip, name="trsm.strip") as j0:
            j1 = b.add(j0, i64(strip))
            j1 = b.select(b.icmp_signed("<", j1, end), j1, end)
            b.call(trsm, [_element(b, w, i64(s * nr), pt), _element(b, t, i64(s * m + s), pt), i64(r), i64(nr), j0,
                          j1, i64(m)])


def _solve(ctx: KernelContext, plan: _Plan, chunk: int, chunks: int, pointers: tuple) -> None:
    """One parallel step: task c solves columns ``[c chunk, (c+1) chunk)``
    (:func:`_solve_columns`), with region c of the slots."""
    last = plan.nr - (chunks - 1) * chunk

    def task(tctx: KernelContext, c) -> None:
        tb = tctx.b
        w, t, b_in, slots = tctx.shared
        slot = tb.gep(slots, [tb.mul(c, i64(plan.slot_bytes))], inbounds=True, source_etype=I8)
        b_in = b_in if plan.copy_in_tasks else None
        c0 = tb.mul(c, i64(chunk))
        if last == chunk:
            _solve_columns(tctx, plan, w, t, b_in, slot, c0, chunk)
            return
        with tb.if_else(tb.icmp_signed("==", c, i64(chunks - 1))) as (tail, whole):
            with tail:
                _solve_columns(tctx, plan, w, t, b_in, slot, c0, last)
            with whole:
                _solve_columns(tctx, plan, w, t, b_in, slot, c0, chunk)

    ctx.parallel_for(chunks, task, shared=pointers)


def _split(ctx: KernelContext, plan: _Plan, splits: list, threads, pointers: tuple) -> None:
    """The solve with the split of the most threads at or below ``threads``."""
    (p, chunk, chunks), rest = splits[0], splits[1:]
    if not rest:
        _solve(ctx, plan, chunk, chunks, pointers)
        return
    b = ctx.b
    with b.if_else(b.icmp_signed("<", threads, i64(rest[0][0]))) as (this, more):
        with this:
            _solve(ctx, plan, chunk, chunks, pointers)
        with more:
            _split(ctx, plan, rest, threads, pointers)


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
    b_all = ctx.operand_array(1).ptr
    if not plan.copy_in_tasks:
        _copy(b, work, ctx.operand_array(1))
    t_all = ctx.operand_array(0).ptr
    if not sp.t_is_a:
        t_all = plan.scratch.pointer(b, base, "t")
        _copy(b, IrArray(t_all, sp.t), ctx.operand_array(0))
    slots = plan.scratch.pointer(b, base, "slots")
    threads = thread_count(b, ctx.opts_arg)
    threads = b.select(b.icmp_signed("<", threads, i64(1)), i64(2), threads)
    with dyn_range(b, i64(0), i64(plan.batch), name="trsm.e") as e:
        w = _element(b, work.ptr, b.mul(e, i64(m * nr)), pt)
        t = _element(b, t_all, b.mul(e, i64(m * m)), pt)
        b_e = _element(b, b_all, b.mul(e, i64(m * nr)), pt)
        _split(ctx, plan, plan.splits, threads, (w, t, b_e, slots))
    if not plan.work_in_place:
        _copy(b, out, work)


#: The kernel candidate (``kernels.register_all``: tried before the unblocked one).
TRIANGULAR_SOLVE_BLOCKED = KernelCandidate("triangular-solve.blocked", _emit, applies=applies,
                                           scratch_bytes=_scratch, glue=True)
