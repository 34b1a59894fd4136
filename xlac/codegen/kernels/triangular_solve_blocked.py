"""A big f32/f64 ``triangular-solve`` (spec: *TriangularSolve*) as one
kernel: blocked substitution in place in one work array, its bulk in calls
of the GEMM library, as one parallel step.

The work array is the unblocked kernel's (``linalg._SolvePlan``): ``t w =
w'`` with ``w`` row-major m x nr (b, or b^T for a right-side solve; the result
buffer itself when its layout allows) and ``t`` = op(a) or op(a)^T read along
rows (a, or a transposed copy).  The columns of ``w`` are independent
problems: the solve is one ``parallel_for`` of column chunks, one per
thread (:func:`column_chunks`; the split is chosen at run time from the
call's thread count, :data:`TASKS`), each moving its columns of b in (b
and the result row-major) and solving them alone, so a chunk stays in one
core's cache and no task waits for another.  A chunk goes by blocks of
BLOCK rows in substitution order (forward when t is lower); for each:

1. ``w[blk] -= t[blk, done] . w[done]``, ``done`` the rows solved before
   (one GEMM of the library on this thread, read in place: ``gemm_update``;
   the shape of each block is a choice of one call site);
2. ``w[blk] = t[blk, blk]^-1 w[blk]``: the library's substitution with the
   diagonal block read in place, in strips of SOLVE_BYTES of each row.

Matrices of at most MIN_SIZE rows and solves with one right-hand side (a
matrix-vector product, which the library does not run) are the unblocked
kernel's.

Why one kernel rather than blocks of HLO (XLA's TriangularSolveExpander):
as HLO each block slices the rows not solved yet out of b and the solved
blocks are concatenated at the end, each a copy of most of b, and the small
solves are kernels of their own (at 512 x 512 with 512 right-hand sides: a
fifth of the time, and ~110 ms of compile time against ~40 ms here).
"""
from __future__ import annotations

from ...hlo.ir import HloInstruction
from ...shape import F32, F64
from .. import gemm_library
from ..emitter import KernelContext, ModuleEmitter
from ..ir_array import IrArray, i64
from ..kernel_choice import KernelCandidate, plan_function
from ..linalg_functions import LinalgVariant, trsm_routine
from ..loops import fill_padding
from ..task_grid import thread_count
from . import gemm_update
from ._util import I8, I64, PTR, ScratchPlan, align, constant_table, dyn_range, memcpy
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
        # Each block (in substitution order): its first row, rows, and the first
        # of the rows solved before it (K of them: none for the first block).
        self.rows_before = [(s, r, 0 if sp.forward else s + r, s if sp.forward else self.m - s - r)
                            for s, r in self.blocks]
        # The GEMMs, a choice per (split, last chunk or not, block after the first).
        self.choices = [(r, w, k) for _, chunk, chunks in self.splits
                        for w in (chunk, self.nr - (chunks - 1) * chunk)
                        for _, r, _, k in self.rows_before[1:]]
        self.gemms = {mnk: gemm_update.plan(self.pt, gemm_update.Gemm(*mnk, True)) for mnk in set(self.choices)}
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


#: ``inst``'s plan, made once (scratch sizing and emission both ask).
_plan = plan_function(_Plan)


def _scratch(me: ModuleEmitter, inst: HloInstruction) -> int:
    return _plan(inst).scratch.size


def _solve(ctx: KernelContext, plan: _Plan, pointers: tuple, split, chunk, chunks) -> None:
    """One parallel step of ``chunks`` tasks (split ``split`` of
    ``plan.splits``; i64 values): task c solves columns ``[c chunk, (c+1)
    chunk)`` (the last one the rest) block by block in substitution order:
    copies them in from b (when b and the result are row-major), then for
    each block subtracts the rows solved before (``gemm_update``, on this
    thread, a shape per block chosen at run time) and solves with the
    diagonal block in place (the substitution routine, in strips of
    SOLVE_BYTES), with region c of the slots."""
    sp, pt, m, nr = plan.solve, plan.pt, plan.m, plan.nr
    nblocks = len(plan.blocks)
    name = f"xlac.trsm.blocks.{m}.{int(sp.forward)}"
    choices = [(gemm_update.Gemm(*mnk, True), plan.gemms[mnk]) for mnk in plan.choices]

    def task(tctx: KernelContext, c) -> None:
        b = tctx.b
        w, t, b_in, slots, split, chunk, chunks = tctx.shared[:4] + tuple(b.ptrtoint(v, I64) for v in tctx.shared[4:])
        slot = b.gep(slots, [b.mul(c, i64(plan.slot_bytes))], inbounds=True, source_etype=I8)
        gemm_scratch = b.gep(slot, [i64(plan.product_bytes)], inbounds=True, source_etype=I8)
        tail = b.icmp_signed("==", c, b.sub(chunks, i64(1)))
        c0 = b.mul(c, chunk)
        c1 = b.select(tail, i64(nr), b.add(c0, chunk))
        es = pt.byte_size
        if plan.copy_in_tasks:
            with dyn_range(b, i64(0), i64(m), name="trsm.in") as r:
                at = b.add(b.mul(r, i64(nr)), c0)
                memcpy(b, _element(b, w, at, pt), _element(b, b_in, at, pt), b.mul(b.sub(c1, c0), i64(es)))
        table = constant_table(b.module, name, [x for row in plan.rows_before for x in row])
        trsm = gemm_library.declare(b.module, LinalgVariant(pt, trsm_routine(sp.forward, False, sp.unit)), "call")
        with dyn_range(b, i64(0), i64(nblocks), name="trsm.blk") as q:
            s0, r, lo = (b.load(b.gep(table, [i64(0), b.add(b.mul(q, i64(4)), i64(f))], inbounds=True), typ=I64)
                         for f in range(3))
            if choices:     # (none for a matrix of one block, m = BLOCK + 1)
                with b.if_then(b.icmp_signed(">", q, i64(0))):
                    index = b.add(b.mul(b.add(b.mul(split, i64(2)), b.zext(tail, I64)), i64(nblocks - 1)),
                                  b.sub(q, i64(1)))
                    gemm_update.subtract_product_of(
                        tctx, pt, choices, index, _element(b, t, b.add(b.mul(s0, i64(m)), lo), pt), m,
                        _element(b, w, b.add(b.mul(lo, i64(nr)), c0), pt), nr,
                        _element(b, w, b.add(b.mul(s0, i64(nr)), c0), pt), nr, slot, gemm_scratch)
            strip = SOLVE_BYTES // es
            with dyn_range(b, c0, c1, step=strip, name="trsm.strip") as j0:
                j1 = b.add(j0, i64(strip))
                j1 = b.select(b.icmp_signed("<", j1, c1), j1, c1)
                b.call(trsm, [_element(b, w, b.mul(s0, i64(nr)), pt), _element(b, t, b.add(b.mul(s0, i64(m)), s0), pt),
                              r, i64(nr), j0, j1, i64(m)])

    cb = ctx.b
    ctx.parallel_for(chunks, task, shared=pointers + tuple(cb.inttoptr(v, PTR) for v in (split, chunk, chunks)))


def _emit(ctx: KernelContext) -> None:
    inst, b = ctx.inst, ctx.b
    (out,) = ctx.output_arrays()
    fill_padding(b, out)
    if inst.shape.element_count() == 0:
        return
    plan = _plan(inst)
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
        # the split of the most threads at or below this call's
        split, chunk, chunks = i64(0), i64(plan.splits[0][1]), i64(plan.splits[0][2])
        for x, (p, ch, n_ch) in enumerate(plan.splits[1:], 1):
            more = b.icmp_signed(">=", threads, i64(p))
            split, chunk, chunks = (b.select(more, i64(v), old) for v, old in ((x, split), (ch, chunk), (n_ch, chunks)))
        _solve(ctx, plan, (w, t, b_e, slots), split, chunk, chunks)
    if not plan.work_in_place:
        _copy(b, out, work)


#: The kernel candidate (``kernels.register_all``: tried before the unblocked one).
TRIANGULAR_SOLVE_BLOCKED = KernelCandidate("triangular-solve.blocked", _emit, applies=applies,
                                           scratch_bytes=_scratch, glue=True)
