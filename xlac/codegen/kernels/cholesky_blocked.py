"""A big f32/f64 ``cholesky`` (spec: *Cholesky*) as one kernel: the blocked
factorisation (LAPACK's ``potrf``, upper form) in place in one work array,
its bulk in calls of the GEMM library.  On one thread the up-looking form
(``cholesky_up_looking``: few big GEMMs); on several the right-looking form
here, one parallel step per block row.

The work array ``w`` is row-major and holds the upper factor ``u``: the
result buffer for ``lower=false``; for ``lower=true`` a scratch copy of
``a``'s lower triangle transposed (the upper factor of ``a^T`` is ``l^T``),
copied out transposed.  Blocks of BLOCK rows (:func:`row_blocks`).

Each block column belongs to one *column set* for the whole factorisation
(:func:`owners`; a step has one task per set, one set per thread), so its
rows stay in one core's cache from step to step (on the 2-core VM, copying
64 KB another core wrote took 16 us, 64 KB this core wrote 6 us).  Step
``s`` (row block ``s`` solved in every column, its diagonal block ``u_ss``
factored; step -1 copies in and starts) runs as one ``parallel_for``:

1. task 0 first finishes the next diagonal block ``d = s + 1``: its last
   update ``w_dd -= u_sd^T u_sd``, ``potrf``, ``u_dd^T`` for the
   substitutions, then raises the step's flag;
2. every task, for each block column ``c > d`` of its set (the biggest
   first): ``w[i_d:i_c+k_c, c] -= u[s, i_d:i_c+k_c]^T u[s, c]``, the rows of
   blocks ``d..c`` by row block ``s``, one GEMM
   (``gemm_update.subtract_product_of``: the shape, ``c - s`` blocks,
   chosen at run time); then, once the flag is up (task 0 runs: the pool
   hands out tasks in order), ``w[d, c] = u_dd^-T w[d, c]`` (the library's
   forward substitution); then the other sets' columns no task has
   started, the smallest first (:func:`_claim`: a thread that ran late or
   was descheduled leaves its columns to the others; on the shared VM this
   took the median two-thread time of 512 x 512 f32 from 0.64-0.74 to
   0.56-0.62 ms); and copies out block column ``s`` (final) if it is its.

So the serial ``potrf`` of a diagonal block runs beside the other tasks'
updates, and a step's barrier is the only other wait.  Step -1: task 0
copies in block column 0 and factors it; the sets copy in their columns
(for ``lower=true`` transposed: :func:`_copy_in`) and solve row block 0.
The last block column is copied out in two parts: above its diagonal
block by its set in the last step, the diagonal block by task 0 after its
``potrf``.  The steps are a loop: one task function for all of them.

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
from ..native_function import cpu_relax
from ..task_grid import thread_count
from . import cholesky_up_looking, gemm_update
from ._util import I8, I64, PTR, ScratchPlan, align, dyn_range, fill, memcpy, zero_elements
from .linalg import _copy, _element, _is_row_major, _row_major

#: Rows of a block (the diagonal blocks ``potrf`` factors serially; the
#: updates' tiles).  64 at 512 x 512: see docs/linalg.md.
BLOCK = 64
#: The most row blocks: a bigger matrix takes bigger blocks (whole
#: multiples of BLOCK), so the kernel's code and its scratch stay bounded.
MAX_BLOCKS = 32
#: The most column sets (tasks of a step): one per thread, at most this many.
MAX_SETS = 8
#: Column sets when the thread count is unknown (an object built for an
#: older ``xlac_run_options``).
UNKNOWN_SETS = 2
#: Spins on the diagonal block's flag between two ``sched_yield`` calls.
SPINS = 1024

I32 = ir.IntType(32)


def applies(inst: HloInstruction) -> str | None:
    if inst.shape.element_type not in (F32, F64):
        return "not f32 or f64"
    n = inst.shape.dimensions[-1]
    if n <= BLOCK:
        return f"a matrix of at most {BLOCK} rows (the unblocked kernel)"
    return None


def block_size(n: int) -> int:
    """Rows of a block of an n x n factorisation: BLOCK, or a multiple of it
    when n has more than MAX_BLOCKS blocks of BLOCK."""
    return BLOCK * max(1, -(-n // (BLOCK * MAX_BLOCKS)))


def row_blocks(n: int) -> list[tuple[int, int]]:
    """``(start, rows)`` of the blocks of an n x n factorisation (n > BLOCK):
    :func:`block_size` rows, the last one the rest (:func:`gemm_update.blocks_of`)."""
    return gemm_update.blocks_of(n, block_size(n))


class _Plan:
    def __init__(self, inst: HloInstruction):
        self.pt = inst.shape.element_type
        self.n = n = inst.shape.dimensions[-1]
        self.batch = math.prod(inst.shape.dimensions[:-2])
        self.lower = bool(inst.attrs.get("lower", False))
        self.size = block_size(n)
        self.blocks = bl = row_blocks(n)
        self.nb = len(bl)
        self.last = bl[-1][1]
        kmax = max(self.size, self.last)
        # The updates (M, N, K): block column c's rows of blocks s+1 .. c by row
        # block s (M: (c - s) blocks, the last one maybe of other rows), a
        # choice per c - s - 1 (``gemm_update.subtract_product_of``).
        size, last = self.size, self.last
        self.choices = {size: [(m * size, size, size) for m in range(1, self.nb)],
                        last: [(m * size + last, last, size) for m in range(self.nb - 1)]}
        shapes = {mnk for c in self.choices.values() for mnk in c} | {(size, size, size), (last, last, size)}
        self.gemms = {mnk: gemm_update.plan(self.pt, gemm_update.Gemm(*mnk, False)) for mnk in shapes}
        es = self.pt.byte_size
        # A region per column set and one for the diagonal block's task: a
        # tile's product and the GEMM's scratch.
        self.product_bytes = align(n * kmax * es)
        self.slot_bytes = self.product_bytes + align(gemm_update.scratch_bytes(self.gemms.values()))
        self.scratch = ScratchPlan()
        if self.lower:
            self.scratch.add("w", n * n * es)
        # Other layouts go through row-major copies of the whole batch.
        self.a_copy = not _is_row_major(inst.operands[0].shape)
        self.out_copy = not _is_row_major(inst.shape)
        if self.a_copy:
            self.scratch.add("a", inst.shape.byte_size())
        if self.out_copy:
            self.scratch.add("out", inst.shape.byte_size())
        self.t_bytes = align(kmax * kmax * es)
        self.scratch.add("t", 2 * self.t_bytes)
        # The step's flag (its diagonal block is factored), a line of its own,
        # and the block columns' claims.
        self.scratch.add("sync", 64 + 8 * self.nb)
        self.scratch.add("slots", (MAX_SETS + 1) * self.slot_bytes)
        # The one-thread form's.
        self.up = cholesky_up_looking.Plan(inst, bl)
        self.scratch.add("up", self.up.scratch.size)


def _scratch(me: ModuleEmitter, inst: HloInstruction) -> int:
    return _Plan(inst).scratch.size


def _routine(module, pt, name: str) -> ir.Function:
    return gemm_library.declare(module, LinalgVariant(pt, name), "call")


def _v(v) -> ir.Value:
    return v if isinstance(v, ir.Value) else i64(v)


class _Shared:
    """The pointers a step's tasks share (``KernelContext.parallel_for``'s ``shared``)."""

    NAMES = ("w", "a", "out", "t", "sync", "slots", "sets", "step", "s")

    def __init__(self, values):
        self.values = tuple(values)
        for name, v in zip(self.NAMES, self.values):
            setattr(self, name, v)


def _update(b: ir.IRBuilder, tctx: KernelContext, plan: _Plan, w, slot, r0, m: int, c0, n_: int, k0) -> None:
    """``w[r0:r0+m, c0:c0+n_] -= u[k0:k0+K, r0:r0+m]^T u[k0:k0+K, c0:c0+n_]``
    (K = BLOCK rows) on this thread (``gemm_update``), with the product and
    the GEMM's scratch in ``slot``."""
    n, pt, k = plan.n, plan.pt, plan.size
    r0, c0, k0 = _v(r0), _v(c0), _v(k0)
    g = gemm_update.Gemm(m, n_, k, False)
    row_k = b.mul(k0, i64(n))
    gemm_update.subtract_product(tctx, pt, g, plan.gemms[(m, n_, k)], _element(b, w, b.add(row_k, r0), pt), n,
                                 _element(b, w, b.add(row_k, c0), pt), n,
                                 _element(b, w, b.add(b.mul(r0, i64(n)), c0), pt), n,
                                 slot, b.gep(slot, [i64(plan.product_bytes)], inbounds=True, source_etype=I8),
                                 serial=True)


def _copy_in(b: ir.IRBuilder, plan: _Plan, a, w, c0, kb: int) -> None:
    """Block column ``[c0, c0+kb)`` of ``w`` above and in the diagonal:
    ``w[:c0+kb, c0:c0+kb] = a[c0:c0+kb, :c0+kb]^T`` (lower: ``w`` holds
    ``a^T``) or ``a[:c0+kb, c0:c0+kb]`` (upper)."""
    n, pt = plan.n, plan.pt
    c0 = _v(c0)
    rows = b.add(c0, i64(kb))
    if plan.lower:
        b.call(_routine(b.module, pt, "transpose"),
               [_element(b, w, c0, pt), _element(b, a, b.mul(c0, i64(n)), pt), i64(1), i64(kb), rows, i64(n),
                i64(n)])
        return
    with dyn_range(b, i64(0), rows, name="chol.in") as r:
        at = b.add(b.mul(r, i64(n)), c0)
        memcpy(b, _element(b, w, at, pt), _element(b, a, at, pt), i64(kb * pt.byte_size))


def _copy_out(b: ir.IRBuilder, plan: _Plan, w, out, c0, kb: int, above: bool = True, diagonal: bool = True) -> None:
    """Rows ``[c0, c0+kb)`` of the result from block column ``[c0, c0+kb)`` of
    ``w``: lower, ``out[c0:c0+kb, :c0+kb] = w[:c0+kb, c0:c0+kb]^T`` (the
    diagonal block's strict lower triangle in w is zeros) and zeros right of
    it; upper (``w`` is ``out``), zeros left of the diagonal block.  In two
    parts: ``above`` (the rows above the diagonal block, final a step before
    it, and the zeros) and the ``diagonal`` block."""
    n, pt = plan.n, plan.pt
    c0 = _v(c0)
    end = b.add(c0, i64(kb))
    row0 = _element(b, out, b.mul(c0, i64(n)), pt)
    transpose = _routine(b.module, pt, "transpose")
    if plan.lower and diagonal:
        b.call(transpose, [_element(b, row0, c0, pt), _element(b, w, b.add(b.mul(c0, i64(n)), c0), pt), i64(1),
                           i64(kb), i64(kb), i64(n), i64(n)])
    if not above:
        return
    if plan.lower:
        b.call(transpose, [row0, _element(b, w, c0, pt), i64(1), c0, i64(kb), i64(n), i64(n)])
    with dyn_range(b, i64(0), i64(kb), name="chol.out") as r:
        row = _element(b, row0, b.mul(r, i64(n)), pt)
        if plan.lower:
            zero_elements(b, pt, _element(b, row, end, pt), b.sub(i64(n), end))
        else:
            zero_elements(b, pt, row, c0)


def _factor_diagonal(tctx: KernelContext, plan: _Plan, sh: _Shared, s, step_id) -> None:
    """The diagonal block ``d = s + 1`` (step -1: block 0, copied in): its
    last update (by row block ``s``), ``potrf``, ``u_dd^T`` into its
    half of ``t`` for the substitutions; then the flag.  The last diagonal
    block is copied out instead (no substitution follows)."""
    b, n, pt, size = tctx.b, plan.n, plan.pt, plan.size
    d = b.add(s, i64(1))
    i = b.mul(d, i64(size))
    diag = _element(b, sh.w, b.add(b.mul(i, i64(n)), i), pt)
    slot = b.gep(sh.slots, [i64(MAX_SETS * plan.slot_bytes)], inbounds=True, source_etype=I8)

    def factor(k: int, last: bool) -> None:
        with b.if_else(b.icmp_signed("<", s, i64(0))) as (first, later):
            with first:
                _copy_in(b, plan, sh.a, sh.w, i64(0), k)
            with later:
                _update(b, tctx, plan, sh.w, slot, i, k, i, k, b.mul(s, i64(size)))
        b.call(_routine(b.module, pt, "potrf"), [diag, i64(k), i64(n)])
        if last:            # (the rest of the last block column: its set, this step)
            _copy_out(b, plan, sh.w, sh.out, i, k, above=False)
            return
        t = b.gep(sh.t, [b.mul(b.urem(d, i64(2)), i64(plan.t_bytes))], inbounds=True, source_etype=I8)
        b.call(_routine(b.module, pt, "transpose"), [t, diag, i64(1), i64(k), i64(k), i64(n), i64(k)])
        b.atomic_rmw("xchg", sh.sync, step_id, "release")

    with b.if_else(b.icmp_signed("==", d, i64(plan.nb - 1))) as (last, other):
        with last:
            factor(plan.last, True)
        with other:
            factor(size, False)


def _wait(b: ir.IRBuilder, sh: _Shared, step_id) -> None:
    """Until the step's diagonal block is factored (task 0 of the step, which
    runs: tasks are taken in order)."""
    relax = cpu_relax(b.module)
    yield_fn = b.module.globals.get("sched_yield") or ir.Function(b.module, ir.FunctionType(I32, []), "sched_yield")
    pre = b.block
    head = b.append_basic_block("wait.head")
    spin = b.append_basic_block("wait.spin")
    done = b.append_basic_block("wait.done")
    b.branch(head)
    b.position_at_end(head)
    count = b.phi(I64, "wait.k")
    count.add_incoming(i64(0), pre)
    ready = b.icmp_unsigned("==", b.load_atomic(sh.sync, "acquire", 8, typ=I64), step_id)
    b.cbranch(ready, done, spin)
    b.position_at_end(spin)
    if relax is not None:
        b.call(relax, [])
    nxt = b.add(count, i64(1))
    with b.if_then(b.icmp_unsigned("==", b.and_(nxt, i64(SPINS - 1)), i64(0)), likely=False):
        b.call(yield_fn, [])
    count.add_incoming(nxt, b.block)
    b.branch(head)
    b.position_at_end(done)


#: Relative costs for :func:`owners`: a tile's update, a block column's
#: substitution, the diagonal block's task, a block column's copy in or out.
_TILE, _SOLVE, _DIAGONAL, _COPY = 1.0, 1.2, 3.0, 0.5


def owners(nb: int, sets: int) -> list[int]:
    """The set of each block column (steps -1 .. nb-2, ``sets`` tasks each):
    a column stays with one set, so its rows stay in one core's cache from
    step to step; columns go, last first, to the set that keeps the sum over
    the steps of the busiest set's work smallest (set 0 also factors the
    diagonal blocks)."""
    load = [[0.0] * sets for _ in range(nb)]           # [step + 1][set]
    for s in range(nb):
        load[s][0] += _DIAGONAL
    owner = [0] * nb
    for c in range(nb - 1, -1, -1):
        # column c: copied in (step -1), tiles c - s at steps s < c - 1, solved at steps < c - 1, copied out at step c
        work = {0: _COPY * (c + 1) / nb + (_SOLVE if c else 0)}
        for s in range(0, c - 1):
            work[s + 1] = (c - s) * _TILE + _SOLVE
        if c + 1 < nb:
            work[c + 1] = work.get(c + 1, 0.0) + _COPY

        def cost(q: int) -> float:
            return sum(max(max(load[s]), load[s][q] + w) for s, w in work.items())
        q = min(range(sets), key=cost)
        for s, w in work.items():
            load[s][q] += w
        owner[c] = q
    return owner


def _owner_table(module: ir.Module, nb: int) -> ir.GlobalVariable:
    """``owners(nb, p)[c]`` at ``[(p - 1) * nb + c]`` for p = 1..MAX_SETS (a constant of the module)."""
    name = f"xlac.cholesky.owners.{nb}"
    g = module.globals.get(name)
    if g is None:
        values = [q for p in range(1, MAX_SETS + 1) for q in owners(nb, p)]
        ty = ir.ArrayType(I64, len(values))
        g = ir.GlobalVariable(module, ty, name)
        g.initializer = ir.Constant(ty, values)
        g.global_constant = True
        g.linkage = "internal"
    return g


def _columns(b: ir.IRBuilder, plan: _Plan, first, last, select, body, descending: bool = False,
             claim=None) -> None:
    """``body(c0, rows)`` for the block columns ``c`` in ``[first, last)``
    (i64 values; ``descending``: the last first) where ``select(c)`` (an i1)
    and then, if given, ``claim(c)``; ``c0`` the column's first column."""
    with dyn_range(b, i64(0), b.sub(last, first), name="chol.c") as k:
        c = b.sub(b.sub(last, i64(1)), k) if descending else b.add(first, k)
        with b.if_then(select(c)):
            if claim is None:
                _column(b, plan, c, body)
            else:
                with b.if_then(claim(c)):
                    _column(b, plan, c, body)


def _column(b: ir.IRBuilder, plan: _Plan, c, body) -> None:
    """``body(c0, rows)`` of block column ``c`` (the last one's rows may differ)."""
    nb, size = plan.nb, plan.size
    c0 = b.mul(c, i64(size))
    if plan.last == size:
        body(c0, size)
        return
    with b.if_else(b.icmp_signed("==", c, i64(nb - 1))) as (end, other):
        with end:
            body(i64(plan.blocks[-1][0]), plan.last)
        with other:
            body(c0, size)


def _owner(b: ir.IRBuilder, plan: _Plan, sets, c) -> ir.Value:
    """The set of block column ``c`` with ``sets`` sets (:func:`owners`)."""
    at = b.add(b.mul(b.sub(sets, i64(1)), i64(plan.nb)), c)
    return b.load(b.gep(_owner_table(b.module, plan.nb), [i64(0), at], inbounds=True), typ=I64)


def _claim(b: ir.IRBuilder, sh: "_Shared", c, step_id) -> ir.Value:
    """True for the first task of the step to ask for block column ``c``."""
    at = b.gep(sh.sync, [b.add(i64(8), c)], inbounds=True, source_etype=I64)
    return b.icmp_unsigned("!=", b.atomic_rmw("xchg", at, step_id, "acq_rel"), step_id)


def _steps(ctx: KernelContext, plan: _Plan, pointers: tuple, sets, e) -> None:
    """Steps -1 .. nb-2 of batch element ``e``, each one parallel step of
    ``sets`` tasks (step -1: the copy in and row block 0; see the module
    docstring).  One task function for every step: the step and its id
    reach it through ``shared``."""
    n, pt, size, nb = plan.n, plan.pt, plan.size, plan.nb

    def task(tctx: KernelContext, j) -> None:
        b = tctx.b
        sh = _Shared(tctx.shared)
        sets_v, sid, s = b.ptrtoint(sh.sets, I64), b.ptrtoint(sh.step, I64), b.ptrtoint(sh.s, I64)
        d = b.add(s, i64(1))
        i_d = b.mul(d, i64(size))
        with b.if_then(b.icmp_signed("==", j, i64(0))):
            _factor_diagonal(tctx, plan, sh, s, sid)
        q = j          # (the pool hands out tasks in order: task 0 mostly to the caller)
        slot = b.gep(sh.slots, [b.mul(q, i64(plan.slot_bytes))], inbounds=True, source_etype=I8)
        first = b.add(d, i64(1))

        def update(c0, kc: int) -> None:
            with b.if_else(b.icmp_signed("<", s, i64(0))) as (start, later):
                with start:
                    _copy_in(b, plan, sh.a, sh.w, c0, kc)
                with later:
                    # rows i_d .. c0 + kc by row block s: (c - s) blocks, choice c - s - 1
                    index = b.sub(b.udiv(c0, i64(size)), d)
                    choices = [(gemm_update.Gemm(*mnk, False), plan.gemms[mnk]) for mnk in plan.choices[kc]]
                    row_s = b.mul(b.mul(s, i64(size)), i64(n))
                    gemm_update.subtract_product_of(
                        tctx, pt, choices, index, _element(b, sh.w, b.add(row_s, i_d), pt), n,
                        _element(b, sh.w, b.add(row_s, c0), pt), n,
                        _element(b, sh.w, b.add(b.mul(i_d, i64(n)), c0), pt), n, slot,
                        b.gep(slot, [i64(plan.product_bytes)], inbounds=True, source_etype=I8))

        t = b.gep(sh.t, [b.mul(b.urem(d, i64(2)), i64(plan.t_bytes))], inbounds=True, source_etype=I8)
        trsm = _routine(b.module, pt, "trsm_fwd")
        panel = _element(b, sh.w, b.mul(i_d, i64(n)), pt)

        def column(c0, kc: int) -> None:
            update(c0, kc)
            _wait(b, sh, sid)
            b.call(trsm, [panel, t, i64(size), i64(n), c0, b.add(c0, i64(kc)), i64(size)])

        def mine(c):
            return b.icmp_unsigned("==", _owner(b, plan, sets_v, c), q)

        def claim(c):
            return _claim(b, sh, c, sid)

        # Its set's columns, the biggest first; then the others' that no task
        # has started, the smallest first (a thread that ran late, or was
        # descheduled, leaves its columns to the others).
        _columns(b, plan, first, i64(nb), mine, column, descending=True, claim=claim)
        _columns(b, plan, first, i64(nb), lambda c: b.not_(mine(c)), column, claim=claim)
        with b.if_then(b.icmp_signed(">=", s, i64(0))):          # block column s is final
            _columns(b, plan, s, d, mine, lambda c0, kc: _copy_out(b, plan, sh.w, sh.out, c0, kc))
        with b.if_then(b.icmp_signed("==", d, i64(nb - 1))):     # above the last diagonal block
            _columns(b, plan, d, i64(nb), mine, lambda c0, kc: _copy_out(b, plan, sh.w, sh.out, c0, kc,
                                                                          diagonal=False))

    b = ctx.b
    with dyn_range(b, i64(-1), i64(nb - 1), name="chol.s") as s:
        step_id = b.add(b.mul(e, i64(nb + 1)), b.add(s, i64(2)))       # >= 1, one per step of the call
        ctx.parallel_for(sets, task, shared=pointers + tuple(b.inttoptr(v, PTR) for v in (sets, step_id, s)))


def _sets(ctx: KernelContext) -> ir.Value:
    """Column sets (tasks of a step): the threads of this call, at most
    MAX_SETS (UNKNOWN_SETS when the run options do not say)."""
    b = ctx.b
    threads = thread_count(b, ctx.opts_arg)
    threads = b.select(b.icmp_signed("<", threads, i64(1)), i64(UNKNOWN_SETS), threads)
    return b.select(b.icmp_signed(">", threads, i64(MAX_SETS)), i64(MAX_SETS), threads)


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
    t = plan.scratch.pointer(b, base, "t")
    sync = plan.scratch.pointer(b, base, "sync")
    slots = plan.scratch.pointer(b, base, "slots")
    up = plan.scratch.pointer(b, base, "up")
    zero_elements(b, F64, sync, i64(8 + plan.nb))      # no step has an id yet
    sets = _sets(ctx)
    n, pt = plan.n, plan.pt
    ety = types.memory_type(pt)
    with dyn_range(b, i64(0), i64(plan.batch), name="chol.e") as e:
        at = b.mul(e, i64(n * n))
        a_e, out_e = _element(b, a.ptr, at, pt), _element(b, result.ptr, at, pt)
        w = work if plan.lower else out_e
        with b.if_else(b.icmp_signed("==", sets, i64(1))) as (one, several):
            with one:
                cholesky_up_looking.factor(ctx, plan.up, a_e, w, out_e, up)
            with several:
                _steps(ctx, plan, (w, a_e, out_e, t, sync, slots), sets, e)
                # NaN spreads from a failed block to every later one: the corner tells.
                corner = b.load(_element(b, w, i64(n * n - 1), pt), typ=ety)
                with b.if_then(b.fcmp_unordered("uno", corner, corner)):
                    fill(b, pt, out_e, i64(n * n), ir.Constant(ety, math.nan))
    if plan.out_copy:
        _copy(b, out, result)


#: The kernel candidate (``kernels.register_all``: tried before the unblocked one).
CHOLESKY_BLOCKED = KernelCandidate("cholesky.blocked", _emit, applies=applies, scratch_bytes=_scratch, glue=True)
