"""The blocked f32/f64 ``cholesky`` (spec: *Cholesky*) as one kernel: the
up-looking factorisation (LAPACK's ``potrf``, upper form), in place in the
result, its bulk in calls of the GEMM library.

The factor is kept where the result goes, in the orientation the result has:
``u`` row-major for ``lower=false``; for ``lower=true`` ``l = u^T`` row-major,
i.e. ``u`` column-major, so that the matrix is never transposed as a whole.
Below, ``u[r, c]`` and "row block" are in ``u``'s terms; each operation says
what it is in ``l``'s.  Blocks of ``cholesky_blocked.row_blocks`` rows.

The diagonal block of block row 0 is factored first; then for each block
row ``[i, i + k)`` (step ``s``), with the next block ``[i2, i2 + k2)``:

1. the panel ``u[i:i+k, i2:] -= u[:i, i:i+k]^T u[:i, i2:]``: one GEMM of the
   library in place (``gemm_update``: a dense product, subtracted tile by tile
   by the library's epilogue while the tile is in L1); for ``l``:
   ``l[i2:, i:i+k] -= l[i2:, :i] l[i:i+k, :i]^T``;
2. the panel solved, ``u[i:i+k, i2:] = u_ii^-T u[i:i+k, i2:]``: the library's
   forward substitution in strips (for ``l``, each strip of rows transposed
   into the task's scratch, solved there and moved back: the routine runs
   along rows, and the strip stays in L1);
3. the next diagonal block updated, by the rows above row block ``s`` (final
   when the step starts) and then by row block ``s`` (``u_22 -= u[:i, i2:i2+k2]^T
   u[:i, i2:i2+k2]``, ``u_22 -= u[i:i+k, i2:i2+k2]^T u[i:i+k, i2:i2+k2]``), and
   factored by the library's ``potrf`` (for ``l``, on a transposed copy of
   the block).

The whole factorisation is one ``parallel_for`` of one task per thread of
the call (on one thread, a loop) whose tasks take the items of a work list
in order and run each once the items it needs are done (``factor``,
``_Work``): the copy-in, then per step the update of the next diagonal
block by the rows above, the parts of the panel (one per task: its own
contiguous columns, ``_part_columns``: one GEMM each, M = a block's rows,
K = i, then the solve; part 0 the first columns, which include the next
diagonal block's), and the next diagonal block's update by row block ``s``
and ``potrf``.  No barrier separates the steps: a task done with its part
goes on to the next step's update by the rows above and its GEMM while
another factors the diagonal block.
Every element's sums are the same GEMMs' and solves' whichever task
computes them: the bits do not depend on the thread count.  On the 2-core
VM, 512 x 512 f32 takes 0.30-0.31 ms on two threads (a right-looking form
with static column ownership and a transposed work array: 0.48 ms) and
0.43-0.45 ms on one (docs/linalg.md: where two threads lose); the work list
took 7-10% less time than a ``parallel_for`` per step (f32 and f64, upper
and lower, 384 to 1024 rows, in-process A/B).

The result's other triangle is zeroed when the triangle is copied in (every
row: its part of the factor's triangle copied, the rest zeros), and nothing
is copied out.  For ``u`` each row block is copied in two steps before the
step that first writes it (an item of the work list: the rows are then in
the cache); for ``l``, where a row block of ``u`` is columns of ``l``, all
of it first, in two halves.  If the last diagonal element is NaN (a pivot failed
somewhere: NaN spreads to every later block), the result is all NaN, as
XLA's expander makes it.
"""
from __future__ import annotations

import math

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...shape import S64
from .. import gemm_library, types
from ..emitter import KernelContext
from ..ir_array import i64
from ..linalg_functions import LinalgVariant
from ..native_function import cpu_relax
from . import gemm_update
from ._util import I8, I64, PTR, ScratchPlan, align, constant_table, dyn_range, fill, memcpy, zero_elements
from .linalg import _element

I32 = ir.IntType(32)

#: Tasks of the parallel form at most (slots of scratch).
MAX_TASKS = 8
#: Columns of the panel by which part 0 gets more than an equal share (it
#: holds the next diagonal block's columns, which that block's update by
#: the step's rows and ``potrf`` wait for).  (On the 2-core VM, 512 x 512
#: f32, in-process A/B of the work list: -64 and 64 were 4-7% slower than 0.)
PART0_EXTRA_COLUMNS = 0
#: Bytes of a row the substitution routine solves per call (the strip's
#: rows stay in L1).
STRIP_BYTES = 256
#: Parts of a step's panel per task (two: 2-14% slower on the 2-core VM).
PARTS_PER_TASK = 1
#: Spins on a flag between two ``sched_yield`` calls.
SPINS = 1024


class Plan:
    """The GEMMs and scratch of an n x n factorisation in ``blocks``
    (``cholesky_blocked.row_blocks``): a slot per task (a panel's product, the
    GEMM's scratch), ``t`` (u_ss^T of two steps, or a diagonal block's
    transposed copy) and the parallel form's flags."""

    def __init__(self, inst: HloInstruction, blocks: list):
        self.pt = inst.shape.element_type
        self.n = n = inst.shape.dimensions[-1]
        self.lower = bool(inst.attrs.get("lower", False))
        self.blocks = blocks
        kmax = max(r for _, r in self.blocks)
        # The updates' (M, N, K) in u's terms, a choice per step
        # (``gemm_update.subtract_product_of``): the panel of row block s
        # (from step 1); the next diagonal block by the rows above row block
        # s (from step 1), and by row block s.
        self.panel = [(k, n - i - k, i) for i, k in blocks[1:-1]]
        self.above = [(k2, k2, i) for (i, _), (_, k2) in zip(blocks[1:-1], blocks[2:])]
        self.below = [(k2, k2, k) for (_, k), (_, k2) in zip(blocks[:-1], blocks[1:])]
        shapes = set(self.panel) | set(self.above) | set(self.below)
        self.gemms = {mnk: (self.gemm(mnk), gemm_update.plan(self.pt, self.gemm(mnk))) for mnk in shapes}
        # Columns of the parts of a panel (``_part_columns``): whole
        # cache lines; for ``u`` with AVX-512's wide micro-tiles (256 bytes of
        # a row) whole micro-tiles of the panel's GEMM: there a share is the
        # GEMM's N, which the library pads to its micro-tile, and a share of
        # 96 f32 columns had run as 128 (512 x 512 f32, upper: 0.49 ms instead
        # of 0.53 on the 2-core Intel VM; 1024 x 1024 10% faster, f64 1-7%;
        # AVX2's 24-column tiles: 2% slower, not taken).  For ``l`` a share is
        # the GEMM's M, in rows of 4 or 6.
        self.share = 64 // self.pt.byte_size
        if not self.lower and self.panel:
            nr = max(self.gemms[mnk][1][0].blk.nr for mnk in self.panel)
            if nr * self.pt.byte_size >= 256:
                self.share = nr
        es = self.pt.byte_size
        self.product_bytes = align(kmax * n * es)
        self.slot_bytes = self.product_bytes + align(gemm_update.scratch_bytes(p for _, p in self.gemms.values()))
        self.t_bytes = align(kmax * kmax * es)
        self.scratch = ScratchPlan()
        self.scratch.add("t", 2 * self.t_bytes)
        self.scratch.add("slots", MAX_TASKS * self.slot_bytes)
        # The work list's counter (a line) and a flag per item (``factor``).
        self.scratch.add("sync", 8 * (8 + _Work.items(self, MAX_TASKS * PARTS_PER_TASK)))

    def gemm(self, mnk: tuple) -> gemm_update.Gemm:
        """The library GEMM of an update of shape (M, N, K) in u's terms: for
        ``l``, its transpose (rows of ``l`` by rows of ``l``, both along K)."""
        m, n_, k = mnk
        return gemm_update.Gemm(n_, m, k, True, True) if self.lower else gemm_update.Gemm(m, n_, k, False)

    def slot(self, b: ir.IRBuilder, scratch, task) -> tuple:
        """(product, GEMM scratch) of ``task``'s slot (an i64 or int)."""
        base = b.gep(self.scratch.pointer(b, scratch, "slots"), [b.mul(_v(task), i64(self.slot_bytes))],
                     inbounds=True, source_etype=I8)
        return base, b.gep(base, [i64(self.product_bytes)], inbounds=True, source_etype=I8)

    def t(self, b: ir.IRBuilder, scratch, s) -> ir.Value:
        """The half of ``t`` for step ``s`` (an i64)."""
        at = b.mul(b.urem(s, i64(2)), i64(self.t_bytes))
        return b.gep(self.scratch.pointer(b, scratch, "t"), [at], inbounds=True, source_etype=I8)


def _routine(module, pt, name: str) -> ir.Function:
    return gemm_library.declare(module, LinalgVariant(pt, name), "call")


def _v(v) -> ir.Value:
    return v if isinstance(v, ir.Value) else i64(v)


def _at(b: ir.IRBuilder, plan: Plan, w, r, c) -> ir.Value:
    """The address of ``u[r, c]`` (``w[r, c]``, or ``w[c, r]`` for ``l``)."""
    r, c = (c, r) if plan.lower else (r, c)
    return _element(b, w, b.add(b.mul(_v(r), i64(plan.n)), _v(c)), plan.pt)


def _subtract(ctx: KernelContext, plan: Plan, shapes: list, index, w, r0, c0, slot, columns=None, k0=None) -> None:
    """``u[r0:r0+M, c0:c0+N] -= u[k0:k0+K, r0:r0+M]^T u[k0:k0+K, c0:c0+N]``
    with (M, N, K) ``shapes[index]`` (``gemm_update.subtract_product_of``;
    ``columns``: a narrower N, at run time; ``k0`` default 0) in ``slot``
    (``Plan.slot``).  For ``l``: ``l[c0:, r0:] -= l[c0:, k0:] l[r0:, k0:]^T``."""
    b, n, pt = ctx.b, plan.n, plan.pt
    k0 = i64(0) if k0 is None else k0
    choices = [plan.gemms[mnk] for mnk in shapes]
    product, scratch = slot
    a, bb = _at(b, plan, w, k0, r0), _at(b, plan, w, k0, c0)
    if plan.lower:
        a, bb, override = bb, a, dict(rows=columns)
    else:
        override = dict(columns=columns)
    gemm_update.subtract_product_of(ctx, pt, choices, index, a, n, bb, n, _at(b, plan, w, r0, c0), n, product,
                                    scratch, **override)


def _solve(b: ir.IRBuilder, plan: Plan, w, t, i, k, c0, c1, work) -> None:
    """``u[i:i+k, c0:c1] = u_ii^-T u[i:i+k, c0:c1]`` by the library's forward
    substitution in strips of STRIP_BYTES of each row: with ``t`` = ``u_ii^T``
    row-major (k elements a row); for ``l`` with ``l_ii`` in place, each strip
    of ``l``'s rows transposed into ``work`` and back."""
    n, pt = plan.n, plan.pt
    trsm = _routine(b.module, pt, "trsm_fwd")
    transpose = _routine(b.module, pt, "transpose")
    strip = STRIP_BYTES // pt.byte_size
    with dyn_range(b, c0, c1, step=strip, name="chol.strip") as j0:
        j1 = b.add(j0, i64(strip))
        j1 = b.select(b.icmp_signed("<", j1, c1), j1, c1)
        if plan.lower:
            rows, panel = b.sub(j1, j0), _at(b, plan, w, i, j0)          # l[j0:j1, i:i+k]
            b.call(transpose, [work, panel, i64(1), rows, k, i64(n), i64(strip)])
            b.call(trsm, [work, _at(b, plan, w, i, i), k, i64(strip), i64(0), rows, i64(n)])
            b.call(transpose, [panel, work, i64(1), k, rows, i64(strip), i64(n)])
        else:
            b.call(trsm, [_at(b, plan, w, i, 0), t, k, i64(n), j0, j1, k])


def _factor_block(b: ir.IRBuilder, plan: Plan, w, i, k, t) -> None:
    """``potrf`` of the diagonal block ``[i, i+k)`` in place; ``t``: for
    ``u``, its transpose (what ``_solve`` takes), for ``l`` the copy
    factored."""
    n, pt = plan.n, plan.pt
    diag = _at(b, plan, w, i, i)
    potrf, transpose = _routine(b.module, pt, "potrf"), _routine(b.module, pt, "transpose")
    if plan.lower:
        b.call(transpose, [t, diag, i64(1), k, k, i64(n), k])
        b.call(potrf, [t, k, k])
        b.call(transpose, [diag, t, i64(1), k, k, k, i64(n)])
    else:
        b.call(potrf, [diag, k, i64(n)])
        b.call(transpose, [t, diag, i64(1), k, k, i64(n), k])


def _step_table(b: ir.IRBuilder, plan: Plan):
    """The module's table of the blocks' ``(i, k)``; ``field(s, f)`` loads
    field ``f`` (0: i, 1: k, 2: next i, 3: next k) of step ``s``."""
    bl = plan.blocks
    table = constant_table(b.module, f"xlac.cholesky.up.{plan.n}.{bl[0][1]}", [x for blk in bl for x in blk])

    def field(s, f: int):
        return b.load(b.gep(table, [i64(0), b.add(b.mul(s, i64(2)), i64(f))], inbounds=True), typ=I64)
    return field


def _copy_in(b: ir.IRBuilder, plan: Plan, a, w, r0, r1) -> None:
    """Rows ``[r0, r1)`` of the result, the triangle the factorisation
    reads: row r of ``u`` from its diagonal on, of ``l`` up to its diagonal;
    zeros in the rest of the row (the diagonal block's other triangle is
    ``potrf``'s)."""
    n, pt, es = plan.n, plan.pt, plan.pt.byte_size
    with dyn_range(b, r0, r1, name="chol.in.r") as row:
        at = b.mul(row, i64(n))
        lo, hi = (i64(0), b.add(row, i64(1))) if plan.lower else (row, i64(n))
        memcpy(b, _element(b, w, b.add(at, lo), pt), _element(b, a, b.add(at, lo), pt),
               b.mul(b.sub(hi, lo), i64(es)))
        if plan.lower:
            zero_elements(b, pt, _element(b, w, b.add(at, hi), pt), b.sub(i64(n), hi))
        else:
            zero_elements(b, pt, _element(b, w, at, pt), row)


def _finish(b: ir.IRBuilder, plan: Plan, w) -> None:
    """All NaN if the last diagonal element is (NaN spreads from a failed
    block to every later one)."""
    ety = types.memory_type(plan.pt)
    n = plan.n
    corner = b.load(_element(b, w, i64(n * n - 1), plan.pt), typ=ety)
    with b.if_then(b.fcmp_unordered("uno", corner, corner)):
        fill(b, plan.pt, w, i64(n * n), ir.Constant(ety, math.nan))


def _part_columns(b: ir.IRBuilder, plan: Plan, j, parts, i2, k2) -> tuple:
    """``[c0, c1)``: part ``j``'s columns of the panel ``[i2, n)`` of a step
    cut into ``parts`` parts: part 0 the first, PART0_EXTRA_COLUMNS more
    than an equal share but at least the next diagonal block's (they are
    solved before that block is updated), the others equal shares of the
    rest.  Whole ``plan.share`` columns each; for ``u`` (shares of whole
    micro-tiles) part 0's rounded to the nearest."""
    n = plan.n
    line = plan.share
    width = b.sub(i64(n), i2)

    def down(x):                                     # a multiple of ``line``, >= 0
        x = b.sub(x, b.srem(x, i64(line)))
        return b.select(b.icmp_signed("<", x, i64(0)), i64(0), x)

    def clamp(x, lo, hi):
        x = b.select(b.icmp_signed("<", x, lo), lo, x)
        return b.select(b.icmp_signed(">", x, hi), hi, x)
    n0 = b.sdiv(b.add(width, i64(PART0_EXTRA_COLUMNS)), parts)
    if not plan.lower:
        n0 = b.add(n0, i64(line // 2))
    n0 = clamp(down(n0), k2, width)
    others = b.select(b.icmp_signed(">", parts, i64(1)), b.sub(parts, i64(1)), i64(1))
    per = down(b.add(b.sdiv(b.add(b.sub(width, n0), b.sub(others, i64(1))), others), i64(line - 1)))
    first = b.add(b.add(i2, n0), b.mul(b.sub(j, i64(1)), per))
    is0 = b.icmp_signed("==", j, i64(0))
    c0 = b.select(is0, i2, first)
    c1 = b.select(is0, b.add(i2, n0), b.add(first, per))
    c1 = b.select(b.icmp_signed("==", j, b.sub(parts, i64(1))), i64(n), c1)     # the last part: all the rest
    return clamp(c0, i2, i64(n)), clamp(c1, i2, i64(n))


class _Work:
    """The work list of one factorisation, in the order the tasks take it
    (``factor``): ``C0 C1 F``, then per step ``s``: ``C(s+2) A P(0) ..
    P(parts-1) B``.

    * ``C(b)`` copies row block ``b`` in (``_copy_in``), two steps before
      the step that first writes it (the copy is read from the cache), a
      no-op past the last block;
    * ``F`` factors the first diagonal block;
    * ``A`` updates the next diagonal block by the rows above row block s;
    * ``P(p)`` updates part p of row block s's panel and solves it;
    * ``B`` updates the next diagonal block by row block s and factors it.

    Each item has a flag, raised when it is done; ``step``, ``copy`` and
    ``below`` give an item's place (i64 values).  ``B`` of step ``s`` writes
    the half of ``t`` the solves of step ``s - 1`` read: it waits for them
    through ``P(0)`` of step ``s``, which waits for every part of ``s - 1``."""

    def __init__(self, b: ir.IRBuilder, parts):
        self.b, self.parts = b, parts
        self.per_step = b.add(parts, i64(3))

    def total(self, steps: int):
        return self.b.add(i64(3), self.b.mul(i64(steps), self.per_step))

    def step(self, s, r):
        """Item ``r`` of step ``s`` (0: C, 1: A, 2 .. parts + 1: P, parts + 2: B)."""
        b = self.b
        return b.add(b.add(i64(3), b.mul(s, self.per_step)), _v(r))

    def copy(self, blk):
        """``C(blk)``."""
        b = self.b
        return b.select(b.icmp_signed("<", blk, i64(2)), blk, self.step(b.sub(blk, i64(2)), 0))

    def below(self, s):
        return self.step(s, self.b.add(self.parts, i64(2)))

    @staticmethod
    def items(plan: Plan, parts: int) -> int:
        return 3 + (len(plan.blocks) - 1) * (parts + 3)


def factor(ctx: KernelContext, plan: Plan, a_e, w, scratch, tasks) -> None:
    """One matrix: ``a_e`` (row-major) factored in ``w`` (the result,
    row-major), all NaN when a pivot failed; ``scratch``: ``plan.scratch``'s
    base; ``tasks`` (an i64 >= 1): the tasks of the one ``parallel_for``,
    and the parts each step's panel is cut into (PARTS_PER_TASK each).

    The tasks take the items of the work list (``_Work``) in order (an
    atomic counter) and run each once the items it needs are done (their
    flags).  An item waits only for items before it, which running tasks
    have taken, so nothing waits on a task not started (with fewer threads
    than tasks they run one after another).  There is no barrier between
    steps: a task with nothing left in step ``s`` goes on to the next
    diagonal block's update and its part of step ``s + 1``'s panel while
    another factors the diagonal block (the solves wait for that).  The same
    bits for any number of tasks: each element's sums are the same GEMMs'
    and solves' whoever computes them."""
    b = ctx.b
    steps = len(plan.blocks) - 1
    parts = b.mul(tasks, i64(PARTS_PER_TASK))
    total = _Work(b, parts).total(steps)

    def work(tctx: KernelContext, j) -> None:
        tb = tctx.b
        w_, a_, scratch_ = tctx.shared[:3]
        items = _Work(tb, tb.ptrtoint(tctx.shared[3], I64))
        sync = plan.scratch.pointer(tb, scratch_, "sync")
        head = tb.append_basic_block("chol.item")
        run = tb.append_basic_block("chol.run")
        after = tb.append_basic_block("chol.after")
        tb.branch(head)
        tb.position_at_end(head)
        x = tb.atomic_rmw("add", sync, i64(1), "monotonic")
        tb.cbranch(tb.icmp_signed("<", x, items.total(steps)), run, after)
        tb.position_at_end(run)
        _run_item(tctx, plan, items, w_, a_, scratch_, plan.slot(tb, scratch_, j), x)
        tb.atomic_rmw("xchg", _flag(tb, sync, x), i64(1), "release")
        tb.branch(head)
        tb.position_at_end(after)

    zero_elements(b, S64, plan.scratch.pointer(b, scratch, "sync"), b.add(total, i64(8)))
    ctx.parallel_for(tasks, work, shared=(w, a_e, scratch, b.inttoptr(parts, PTR)))
    _finish(b, plan, w)


def _flag(b: ir.IRBuilder, sync, x) -> ir.Value:
    """Item ``x``'s flag (after the counter's line)."""
    return b.gep(sync, [b.add(i64(8), x)], inbounds=True, source_etype=I64)


def _run_item(tctx: KernelContext, plan: Plan, items: _Work, w, a, scratch, slot, x) -> None:
    """Item ``x`` of the work list (``_Work``), for the task with ``slot``."""
    tb = tctx.b
    field = _step_table(tb, plan)
    sync = plan.scratch.pointer(tb, scratch, "sync")
    nb = i64(len(plan.blocks))

    def wait(item):
        _spin_until(tb, _flag(tb, sync, item))

    def copy(blk):
        if plan.lower:                 # row block b of u is columns of l: all of it, in two halves
            with tb.if_then(tb.icmp_signed("<", blk, i64(2))):
                r0 = tb.mul(blk, i64(plan.n // 2))
                _copy_in(tb, plan, a, w, r0, tb.select(tb.icmp_signed("==", blk, i64(0)), i64(plan.n // 2),
                                                       i64(plan.n)))
        else:
            with tb.if_then(tb.icmp_signed("<", blk, nb)):
                r0 = field(blk, 0)
                _copy_in(tb, plan, a, w, r0, tb.add(r0, field(blk, 1)))

    with tb.if_else(tb.icmp_signed("<", x, i64(3))) as (start, steps):
        with start:
            with tb.if_else(tb.icmp_signed("<", x, i64(2))) as (c01, f):
                with c01:
                    copy(x)
                with f:
                    wait(i64(0))
                    if plan.lower:
                        wait(i64(1))
                    _factor_block(tb, plan, w, i64(0), i64(plan.blocks[0][1]), plan.t(tb, scratch, i64(0)))
        with steps:
            if len(plan.blocks) == 1:  # (no steps)
                return
            y = tb.sub(x, i64(3))
            s, r = tb.sdiv(y, items.per_step), tb.srem(y, items.per_step)
            _step_item(tctx, plan, items, w, scratch, slot, field, s, r, wait, copy)


def _step_item(tctx: KernelContext, plan: Plan, items: _Work, w, scratch, slot, field, s, r, wait, copy) -> None:
    """Item ``r`` of step ``s`` (``_Work.step``)."""
    tb = tctx.b
    i, k, i2, k2 = (field(s, f) for f in range(4))
    later = tb.icmp_signed(">", s, i64(0))
    prev = tb.sub(s, i64(1))
    parts = items.parts

    def wait_parts(step):
        with dyn_range(tb, i64(2), tb.add(parts, i64(2)), name="chol.wait") as p:
            wait(items.step(step, p))

    with tb.if_else(tb.icmp_signed("<", r, i64(2))) as (ca, pb):
        with ca:
            with tb.if_else(tb.icmp_signed("==", r, i64(0))) as (c, above):
                with c:
                    copy(tb.add(s, i64(2)))
                with above:            # A: the next diagonal block by the rows above row block s
                    if plan.above:
                        with tb.if_then(later):
                            wait_parts(prev)
                            wait(items.copy(tb.add(s, i64(1))))
                            _subtract(tctx, plan, plan.above, prev, w, i2, i2, slot)
        with pb:
            with tb.if_else(tb.icmp_signed("<", r, tb.add(parts, i64(2)))) as (part, below):
                with part:             # P: a part of the panel, updated and solved
                    c0, c1 = _part_columns(tb, plan, tb.sub(r, i64(2)), parts, i2, k2)
                    with tb.if_then(tb.icmp_signed("<", c0, c1)):
                        wait(items.copy(s))
                        if plan.panel:
                            with tb.if_then(later):
                                wait_parts(prev)
                                _subtract(tctx, plan, plan.panel, prev, w, i, c0, slot, columns=tb.sub(c1, c0))
                        wait(tb.select(later, items.below(prev), i64(2)))
                        _solve(tb, plan, w, plan.t(tb, scratch, s), i, k, c0, c1, slot[0])
                with below:            # B: the next diagonal block by row block s, and its potrf
                    wait(items.step(s, 2))
                    wait(items.step(s, 1))
                    wait(items.copy(tb.add(s, i64(1))))
                    _subtract(tctx, plan, plan.below, s, w, i2, i2, slot, k0=i)
                    _factor_block(tb, plan, w, i2, k2, plan.t(tb, scratch, tb.add(s, i64(1))))


def _spin_until(b: ir.IRBuilder, flag) -> None:
    """Until the i64 at ``flag`` is 1 (another task is finishing what it
    claimed): spinning, with ``sched_yield`` every SPINS."""
    relax = cpu_relax(b.module)
    yield_fn = b.module.globals.get("sched_yield") or ir.Function(b.module, ir.FunctionType(I32, []), "sched_yield")
    pre = b.block
    head = b.append_basic_block("wait.head")
    spin = b.append_basic_block("wait.spin")
    ready = b.append_basic_block("wait.done")
    b.branch(head)
    b.position_at_end(head)
    count = b.phi(I64, "wait.k")
    count.add_incoming(i64(0), pre)
    b.cbranch(b.icmp_unsigned("==", b.load_atomic(flag, "acquire", 8, typ=I64), i64(1)), ready, spin)
    b.position_at_end(spin)
    if relax is not None:
        b.call(relax, [])
    nxt = b.add(count, i64(1))
    with b.if_then(b.icmp_unsigned("==", b.and_(nxt, i64(SPINS - 1)), i64(0)), likely=False):
        b.call(yield_fn, [])
    count.add_incoming(nxt, b.block)
    b.branch(head)
    b.position_at_end(ready)
