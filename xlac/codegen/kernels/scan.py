"""A ``reduce-window`` that is a scan (jax's ``cumsum``, ``cumprod``, ``cummax``,
``cummin``, ``cumlogsumexp``) as a scan: one reducer application per element.

jax writes a cumulative reduction along a dimension of length L as a
``reduce-window`` whose window is the whole dimension, padded by L-1 on one
side.  Its definition (spec: *ReduceWindow*; padding reads nothing, see
``windows.py``) folds the reducer from the init value over the window's real
elements in order, so a forward scan's output ``i`` is ``f(output[i-1], x[i])``
(``f(init, x[0])`` at 0): the same operations in the same order, whatever the
reducer (a float ``add`` rounds exactly as the window would, a variadic
reducer works too), L times fewer of them.  A narrow float (bf16, f16, f8)
``add`` or ``multiply`` accumulates in f32 and rounds each output once, as the
evaluator's windows do (XLA:CPU's ``cumsum`` of bf16 is far nearer that than a
sum rounded to bf16 at every step, which drifts by whole units over 1024
elements).  A reverse scan (padded after) folds ``x[i] .. x[L-1]`` in
ascending order; it is read from the end, ``f(x[i], output[i+1])``, the
operands in the window's order (``hlo.scans.runs_sequentially``: the fold
under the spec's associative reducer and identity init): for integers and
pred exactly the window's bits; a float sum or product rounds in the other
order, as XLA:CPU's tree of short windows reorders it too.

Where the scan dimension is not the most minor in the layout, the loops run
in the layout's order and each step's inner loops are elementwise over a
plane (vectorised), reading the plane before; where it is, ``ROWS`` rows'
chains run interleaved, step by step.
"""
from __future__ import annotations

from ...hlo.ir import HloInstruction
from ...hlo.scans import runs_sequentially, scan_of
from ...shape import F32
from .. import scalar_ops
from ..emitter import PTR, KernelContext
from ..ir_array import I64, Index, IrArray, i64, scalar_index
from ..kernel_choice import KernelCandidate
from ..loops import dyn_range, fill_padding, for_range, loop_nest, parallel_loops
from ..task_grid import thread_count
from .windows import narrow_window_reducer


def _wide_op(inst: HloInstruction) -> str | None:
    """The f32 accumulator's op of a one-operand narrow float scan
    (``windows.narrow_window_reducer``), else None."""
    if len(inst.operands) != 2 or not inst.shape.is_array:
        return None
    return narrow_window_reducer(inst.attrs["to_apply"])


def _by_planes(inst: HloInstruction) -> bool:
    """Whether the scan runs by planes: its dimension is not the result's most
    minor (of more than one element)."""
    shape = inst.shape.tuple_shapes[0] if inst.shape.is_tuple else inst.shape
    minor = [m for m in shape.layout.minor_to_major if shape.dimensions[m] != 1]
    return not minor or minor[0] != scan_of(inst)[0]


def _scratch(me, inst: HloInstruction) -> int:
    """By planes with an f32 accumulator: an f32 copy of the result to hold it."""
    if _wide_op(inst) and _by_planes(inst):
        return inst.shape.element_count() * 4
    return 0


def applies(inst: HloInstruction) -> str | None:
    if not runs_sequentially(inst):
        return "not a scan (a window the whole dimension long, padded on one side)"
    return None


#: Rows scanned side by side when the scan runs along the most minor
#: dimension: independent chains, so a float add's latency (or bf16's
#: rounding after it) overlaps.
ROWS = 8


#: Elements from which a scan along the most minor dimension shares its row
#: blocks among the call's threads (1024 x 1024 s8 on the 2-core VM: 0.47 ms
#: on one thread, 0.25 on two; 64 x 1024 gains nothing).
PARALLEL_ELEMENTS = 1 << 17
#: Tasks when the run options do not say how many threads there are.
UNKNOWN_TASKS = 2


def _emit(ctx: KernelContext) -> None:
    inst, b = ctx.inst, ctx.b
    outs = ctx.output_arrays()
    for out in outs:
        fill_padding(b, out)
    shape = outs[0].shape
    if shape.element_count() == 0:
        return
    d, forward = scan_of(inst)
    if _by_planes(inst):
        _Scan(ctx, d, forward).planes()
        return
    count = shape.element_count() // shape.dimensions[d]           # rows
    blocks = count // ROWS
    if shape.element_count() < PARALLEL_ELEMENTS or blocks < 2:
        _Scan(ctx, d, forward).rows(i64(0), i64(count))
        return
    threads = thread_count(b, ctx.opts_arg)
    threads = b.select(b.icmp_signed("<", threads, i64(1)), i64(UNKNOWN_TASKS), threads)
    tasks = b.select(b.icmp_signed(">", threads, i64(blocks)), i64(blocks), threads)

    def task(tctx: KernelContext, i):
        # Task i: the row blocks [i blocks / tasks, (i + 1) blocks / tasks); the
        # last one also the rows after the last whole block.
        tb = tctx.b
        n_tasks = tb.ptrtoint(tctx.shared[0], I64)
        lo = tb.udiv(tb.mul(i, i64(blocks)), n_tasks)
        hi = tb.udiv(tb.mul(tb.add(i, i64(1)), i64(blocks)), n_tasks)
        last = tb.icmp_unsigned("==", tb.add(i, i64(1)), n_tasks)
        end = tb.select(last, i64(count), tb.mul(hi, i64(ROWS)))
        _Scan(tctx, d, forward).rows(tb.mul(lo, i64(ROWS)), end)

    ctx.parallel_for(tasks, task, shared=(b.inttoptr(tasks, PTR),))


class _Scan:
    def __init__(self, ctx: KernelContext, d: int, forward: bool):
        inst = ctx.inst
        k = len(inst.operands) // 2
        self.ctx, self.b, self.em, self.outs = ctx, ctx.b, ctx.em, ctx.output_arrays()
        self.xs = [ctx.operand_generator(j) for j in range(k)]
        self.types = [o.element_type for o in self.outs]
        self.wide = _wide_op(inst)
        inits = [ctx.operand_generator(k + j)(scalar_index()) for j in range(k)]
        self.inits = [self.widen(v) for v in inits] if self.wide else inits
        self.acc_types = [F32] if self.wide else self.types
        self.reducer = inst.attrs["to_apply"]
        self.shape = self.outs[0].shape
        self.d, self.forward = d, forward
        self.n = self.shape.dimensions[d]

    def widen(self, v):
        return scalar_ops.widen_to_f32(self.b, v, self.types[0])

    def step(self, acc: list, index: Index) -> list:
        """The reducer of the accumulators and the operands at ``index``
        (forward ``f(acc, x)`` as the window folds, reverse ``f(x, acc)``),
        written there; returns the new accumulators (f32 for
        :func:`_wide_op` scans, which round only what they write)."""
        b = self.b
        values = [g(index) for g in self.xs]
        if self.wide:
            new = [scalar_ops.emit_elementwise(b, self.wide, [acc[0], self.widen(values[0])], [F32, F32], F32)]
            out = [scalar_ops.emit_elementwise(b, "convert", new, [F32], self.types[0])]
        else:
            r = self.em.emit_scalar_computation(self.reducer, acc + values if self.forward else values + acc)
            new = out = list(r) if isinstance(r, tuple) else [r]
        for o, v in zip(self.outs, out):
            o.write(b, index, v)
        return new

    def position(self, i):
        """The scan dimension's index of step ``i`` (reverse: from the end)."""
        return i if self.forward else self.b.sub(i64(self.n - 1), i, flags=["nuw", "nsw"])

    def planes(self) -> None:
        """Loops in the layout's order: step ``i``'s inner loops are elementwise
        over a plane, each element reading its predecessor's accumulator (the
        result, or its f32 copy in scratch)."""
        b, d = self.b, self.d
        accs = [IrArray(self.ctx.scratch_pointer(), self.shape.with_element_type(F32))] if self.wide \
            else self.outs

        def step(acc, multi):
            new = self.step(acc, Index(multi))
            if self.wide:
                accs[0].write(b, Index(multi), new[0])

        with loop_nest(b, self.shape, "scan0", dim_ranges={d: (i64(0), i64(1))}) as index:
            multi = list(index.multi)
            multi[d] = self.position(multi[d])
            step(list(self.inits), multi)
        if self.n == 1:
            return
        # A plane's elements are independent (each reads its own predecessor,
        # in the plane before): its loops are parallel, so LLVM vectorises
        # them without overlap checks (it did not from the end without).
        others = [m for m in range(self.shape.rank) if m != d]
        steps = (i64(1), i64(self.n), 1) if self.forward else (i64(self.n - 2), i64(-1), -1)
        with dyn_range(b, *steps, name="scan") as at:
            prev = b.sub(at, i64(1), flags=["nuw", "nsw"]) if self.forward \
                else b.add(at, i64(1), flags=["nuw", "nsw"])
            with parallel_loops(b.module) as loop_id, \
                    loop_nest(b, self.shape, "plane", dims=others, loop_id=loop_id) as index:
                multi, before = list(index.multi), list(index.multi)
                multi[d], before[d] = at, prev
                step([a.read(b, Index(before)) for a in accs], multi)

    def rows(self, start, stop) -> None:
        """The scan along the most minor dimension of rows ``[start, stop)``
        (i64 values; rows numbered in the layout's order): ROWS rows at a
        time, their chains interleaved step by step (accumulators in
        registers), then the rows left over one at a time."""
        b = self.b
        others = [m for m in reversed(self.shape.layout.minor_to_major) if m != self.d]
        sizes = [self.shape.dimensions[m] for m in others]
        whole = b.add(start, b.mul(b.udiv(b.sub(stop, start), i64(ROWS)), i64(ROWS)))
        with dyn_range(b, start, whole, ROWS, "scan.rows") as first:
            self._chains(others, sizes, first, ROWS)
        with dyn_range(b, whole, stop, 1, "scan.rest") as row:
            self._chains(others, sizes, row, 1)

    def _chains(self, others, sizes, first_row, rows: int) -> None:
        b = self.b
        accs = [[self.em.alloca(t, "scan.acc") for t in self.acc_types] for _ in range(rows)]
        bases = []
        for r in range(rows):
            multi = [None] * self.shape.rank
            rest = b.add(first_row, i64(r)) if r else first_row
            for m, n in zip(reversed(others), reversed(sizes)):      # row number -> index
                multi[m] = b.urem(rest, i64(n)) if n != 1 else i64(0)
                rest = b.udiv(rest, i64(n)) if n != 1 else rest
            bases.append(multi)
            for acc, v in zip(accs[r], self.inits):
                b.store(v, acc)
        with for_range(b, self.n, "scan.i") as i:
            at = self.position(i)
            for r in range(rows):
                multi = list(bases[r])
                multi[self.d] = at
                out = self.step([b.load(a) for a in accs[r]], Index(multi))
                for acc, v in zip(accs[r], out):
                    b.store(v, acc)


#: The kernel candidate (``kernels.register_all``: tried before the loop).
SCAN = KernelCandidate("reduce-window.scan", _emit, applies=applies, scratch_bytes=_scratch)
