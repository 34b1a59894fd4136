"""Reduction kernels: the whole-kernel strategies for a ``reduce`` (or a
reduce-rooted ``fusion:kInput``) that the loop kernel would run badly.

* ``reduce.column`` — the reduced dimensions are all major to the kept ones
  (a sum over the rows of a row-major matrix): stream the input in memory
  order into the output row, tasks splitting the kept dimensions; a long
  float sum goes through levels of partial rows (``_BlockedColumnSum``).
* ``reduce.split`` — a big input reduced to one value: partial reductions
  over slices of the input, one per task, then combined in order.

Otherwise the loop kernel computes each output element with the reduce
generator's loops (``codegen/reduction.py``).
"""
from __future__ import annotations

import math

from ...hlo.ir import HloInstruction
from ...shape import Layout, Shape
from .. import types
from ..emitter import (MAX_TASKS, PARALLEL_MIN_WORK, TASK_MIN_WORK, WORK_UNIT_BYTES, KernelContext, memory_work,
                       task_range)
from ..ir_array import Index, IrArray, i64, scalar_index
from ..kernel_choice import KernelCandidate
from ..loops import REDUCTION_INTERLEAVE, dyn_range, fill_padding, for_range, loop_hints, loop_nest
from ..reduction import TREE_BLOCK, TREE_IDENTITY, emit_reducer, tree_loops, tree_plan, tree_reducer
from ._util import ScratchPlan


def column_reduce_root(inst: HloInstruction):
    """The root reduce of a kernel whose reduced dimensions are all major to
    its kept ones in the input's layout (e.g. a sum over rows of a row-major
    matrix), or None.  Such a reduce is better computed by streaming the input
    in memory order into the output (see :func:`emit_column_reduce`)."""
    root = inst.attrs["calls"].root if inst.opcode == "fusion" else inst
    if root.opcode != "reduce" or len(root.operands) != 2 or not root.shape.is_array:
        return None
    in_shape = root.operands[0].shape
    reduced = set(root.attrs["dimensions"])
    order = [d for d in in_shape.layout.minor_to_major if in_shape.dimensions[d] != 1]  # minor first
    kept = [d for d in order if d not in reduced]
    red = [d for d in order if d in reduced]
    if not kept or not red or in_shape.layout.is_padded:
        return None
    if max(order.index(d) for d in kept) > min(order.index(d) for d in red):
        return None
    return root


#: Input rows a column reduction adds into the output row per pass over it.
COLUMN_REDUCE_ROWS = 4
#: The shortest piece of an input row one task of a column reduction reads.
COLUMN_TASK_BYTES = 4096
#: Input rows a column sum adds into one partial row before that row is added
#: into the level above (the tree of ``reduction.TREE_BLOCK``): 32,768 rows
#: added one after the other into the output (a BatchNorm's statistics over 32
#: images of 32x32) were off by 40 times XLA:CPU's error.  A multiple of
#: COLUMN_REDUCE_ROWS.
COLUMN_BLOCK_ROWS = TREE_BLOCK


def _reduced_rows(root: HloInstruction) -> tuple[list, int]:
    """(the reduced dimensions longer than 1, major to minor in the input's
    layout; how many input rows they make): a column reduction's input is
    those rows of the kept dimensions' elements, one after the other."""
    in_shape = root.operands[0].shape
    reduced = set(root.attrs["dimensions"])
    order = [d for d in reversed(in_shape.layout.minor_to_major) if d in reduced and in_shape.dimensions[d] > 1]
    return order, math.prod(in_shape.dimensions[d] for d in order)


def column_levels(root: HloInstruction) -> int:
    """How many levels of partial rows the column reduction ``root`` sums its
    rows through: 1 (straight into the output) unless it has more than
    COLUMN_BLOCK_ROWS rows and an add or multiply of floats as its reducer."""
    rows = _reduced_rows(root)[1]
    if tree_reducer(root.attrs["to_apply"]) is None:
        return 1
    levels, span = 1, COLUMN_BLOCK_ROWS
    while span < rows:
        levels, span = levels + 1, span * COLUMN_BLOCK_ROWS
    return levels


def _partial_shape(inst: HloInstruction) -> Shape:
    """The shape of a column reduction's partial rows: its output's, unpadded."""
    return Shape(inst.shape.element_type, inst.shape.dimensions,
                 layout=Layout(minor_to_major=inst.shape.layout.minor_to_major))


def _column_plan(inst: HloInstruction) -> ScratchPlan:
    """The scratch of a column reduction: one partial row per level below the output's."""
    plan = ScratchPlan()
    for level in range(column_levels(column_reduce_root(inst)) - 1):
        plan.add(f"partial{level}", _partial_shape(inst).byte_size())
    return plan


def _column_scratch_bytes(me, inst: HloInstruction) -> int:
    return _column_plan(inst).size


def emit_column_reduce(ctx: KernelContext) -> None:
    """out[kept] = init; then for every input element in memory order,
    out[kept] = reducer(out[kept], input[...]).  The inner loop runs along the
    kept (minor) dimensions, reading the input and the output contiguously, so
    it vectorises without reassociating anything.  Tasks split the outermost
    kept dimension (each task owns a slice of the output)."""
    inst = ctx.inst
    root = column_reduce_root(inst)
    in_shape = root.operands[0].shape
    reduced = list(root.attrs["dimensions"])
    kept = [d for d in range(in_shape.rank) if d not in reduced]
    kept_order = [d for d in reversed(in_shape.layout.minor_to_major)
                  if d in kept and in_shape.dimensions[d] != 1]
    split = kept_order[0]
    extent = in_shape.dimensions[split]
    work = memory_work(in_shape)
    # Each task reads its slice of every input row: keep the slices at least
    # COLUMN_TASK_BYTES long, or the tasks read short strided pieces (a sum
    # over the rows of a 4096x4096 matrix in 64 tasks of 256 bytes per row ran
    # at half the bandwidth of 4 tasks of 4 KiB).
    row_bytes = in_shape.element_type.byte_size * math.prod(
        in_shape.dimensions[d] for d in kept_order)
    n_tasks = max(1, min(extent, MAX_TASKS, work // TASK_MIN_WORK, row_bytes // COLUMN_TASK_BYTES)) \
        if work >= PARALLEL_MIN_WORK else 1
    chunk = -(-extent // n_tasks)
    n_tasks = -(-extent // chunk)
    levels = column_levels(root)

    def body(tctx: KernelContext, lo, hi) -> None:
        b = tctx.b
        gens = [tctx.operand_generator(k) for k in range(len(inst.operands))]
        if inst.opcode == "fusion":
            all_gens = tctx.em.instruction_generators(inst.attrs["calls"], gens)
            input_gen, init_gen = (all_gens[id(o)] for o in root.operands)
        else:
            input_gen, init_gen = gens
        (out,) = tctx.output_arrays()
        out_split = kept.index(split)
        ranges = {} if lo is None else {split: (lo, hi)}
        out_ranges = {} if lo is None else {out_split: (lo, hi)}
        init = init_gen(scalar_index())
        if out.shape.element_count() == 0:
            return
        with loop_nest(b, out.shape, dim_ranges=out_ranges) as index:
            out.write(b, index, init)
        if in_shape.element_count() == 0:
            return
        if levels > 1:
            _BlockedColumnSum(tctx, root, input_gen, out, ranges, levels).emit()
            return
        # The innermost reduced dimension is walked COLUMN_REDUCE_ROWS rows at
        # a time: the output row is loaded and stored once per group instead
        # of once per input row.  The reducer is still applied row after row,
        # so the result is the same.  The loops are not unrolled: the rows of
        # a group are independent work already, and LLVM's unrolled and
        # epilogue copies cost a quarter of the compile time (sum over axis 0
        # of 4096x4096: 30 -> 23 ms; one thread 2.03 -> 1.77 ms, two the same).
        inner = next(d for d in in_shape.layout.minor_to_major
                     if d in reduced and in_shape.dimensions[d] > 1)
        rows = COLUMN_REDUCE_ROWS
        n = in_shape.dimensions[inner]
        groups = n // rows

        def accumulate(index, row_of):
            out_index = Index([index.multi[d] for d in kept])
            acc = out.read(b, out_index)
            for u in range(rows if row_of is not None else 1):
                multi = list(index.multi)
                if row_of is not None:
                    multi[inner] = row_of(multi[inner], u)
                (acc,) = emit_reducer(tctx.em, root.attrs["to_apply"], [acc],
                                      [input_gen(Index(multi) if row_of is not None else index)])
            out.write(b, out_index, acc)

        if rows > 1 and groups > 0:
            grouped = Shape(in_shape.element_type,
                            tuple(groups if d == inner else x for d, x in enumerate(in_shape.dimensions)),
                            layout=in_shape.layout)
            with loop_nest(b, grouped, dim_ranges=ranges, loop_id=loop_hints(b.module)) as index:
                accumulate(index, lambda g, u: b.add(b.mul(g, i64(rows)), i64(u)) if groups > 1
                           else i64(u))
            ranges = {**ranges, inner: (i64(groups * rows), i64(n))}
            if groups * rows == n:
                return
        with loop_nest(b, in_shape, dim_ranges=ranges, loop_id=loop_hints(b.module)) as index:
            accumulate(index, None)

    if n_tasks == 1:
        body(ctx, None, None)
        return

    def task(tctx: KernelContext, i) -> None:
        body(tctx, *task_range(tctx.b, i, chunk, extent))

    ctx.parallel_for(n_tasks, task)




class _BlockedColumnSum:
    """A column reduction summed through ``levels`` levels of partial rows
    (:func:`column_levels`): the input rows, in memory order, are added
    COLUMN_BLOCK_ROWS at a time into a level-0 partial row that starts from
    the reducer's identity, which is then added into the level above, and so
    on; the top level is the output (holding the init value).  A task owns
    the slice ``ranges`` of the kept dimensions, of the output and of every
    partial row (all indexed as the output)."""

    def __init__(self, ctx: KernelContext, root: HloInstruction, input_gen, out: IrArray, ranges: dict,
                 levels: int):
        self.ctx, self.b, self.input_gen, self.ranges = ctx, ctx.b, input_gen, ranges
        self.in_shape = root.operands[0].shape
        self.kept = [d for d in range(self.in_shape.rank) if d not in root.attrs["dimensions"]]
        self.row_dims, self.rows = _reduced_rows(root)
        self.reducer = root.attrs["to_apply"]
        self.identity = types.constant(root.shape.element_type, TREE_IDENTITY[tree_reducer(self.reducer)])
        plan, scratch, shape = _column_plan(ctx.inst), ctx.scratch_pointer(), _partial_shape(ctx.inst)
        self.arrays = [IrArray(plan.pointer(self.b, scratch, f"partial{k}"), shape)
                       for k in range(levels - 1)] + [out]

    def emit(self) -> None:
        self._level(len(self.arrays) - 1, i64(0), i64(self.rows))

    def _level(self, level: int, first, count) -> None:
        """Add the input rows [first, first + count) into ``level``'s partial row."""
        if level == 0:
            self._rows(self.arrays[0], first, count)
            return
        b, below, into = self.b, self.arrays[level - 1], self.arrays[level]
        span = i64(COLUMN_BLOCK_ROWS ** level)
        end = b.add(first, count)
        with dyn_range(b, first, end, step=span, name=f"block{level}") as start:
            rest = b.sub(end, start)
            self._kept_loop(lambda index, at: below.write(b, at, self.identity))
            self._level(level - 1, start, b.select(b.icmp_signed("<", rest, span), rest, span))
            self._kept_loop(lambda index, at: self._combine(into, at, [below.read(b, at)]))

    def _rows(self, acc: IrArray, first, count) -> None:
        """Add the input rows [first, first + count) into ``acc``, COLUMN_REDUCE_ROWS
        at a time (``acc`` is loaded and stored once per group), in order."""
        b, group = self.b, COLUMN_REDUCE_ROWS
        groups = b.udiv(count, i64(group))
        with dyn_range(b, i64(0), groups, name="group") as g:
            self._add_rows(acc, b.add(first, b.mul(g, i64(group))), group)
        if self.rows % group:       # else every block is whole groups (COLUMN_BLOCK_ROWS is)
            with dyn_range(b, b.add(first, b.mul(groups, i64(group))), b.add(first, count), name="row") as row:
                self._add_rows(acc, row, 1)

    def _add_rows(self, acc: IrArray, row, n: int) -> None:
        """acc = reducer(acc, input row) for the ``n`` rows from ``row`` on."""
        b = self.b
        where = [self._row_index(b.add(row, i64(u)) if u else row) for u in range(n)]

        def add(index, at):
            inputs = []
            for w in where:
                multi = list(index.multi)
                for d, x in w.items():
                    multi[d] = x
                inputs.append(self.input_gen(Index(multi)))
            self._combine(acc, at, inputs)
        self._kept_loop(add)

    def _row_index(self, row) -> dict:
        """{reduced dimension: index} of input row ``row``."""
        b, where = self.b, {}
        for d in reversed(self.row_dims[1:]):
            size = i64(self.in_shape.dimensions[d])
            where[d] = b.urem(row, size)
            row = b.udiv(row, size)
        where[self.row_dims[0]] = row
        return where

    def _combine(self, acc: IrArray, at: Index, values: list) -> None:
        value = acc.read(self.b, at)
        for x in values:
            (value,) = emit_reducer(self.ctx.em, self.reducer, [value], [x])
        acc.write(self.b, at, value)

    def _kept_loop(self, fn) -> None:
        """``fn(input index, output index)`` over the task's slice of the kept
        dimensions, in the input's memory order (the reduced dimensions 0)."""
        with loop_nest(self.b, self.in_shape, dims=self.kept, dim_ranges=self.ranges,
                       loop_id=loop_hints(self.b.module)) as index:
            fn(index, Index([index.multi[d] for d in self.kept]))


#: A reduction to one value splits into at most this many partial reductions.
MAX_PARTIALS = 16


def split_reduce_root(inst: HloInstruction):
    """The root reduce of a kernel that reduces a big input to a single value
    (a sum of everything), or None.  Its output has no dimension to split over
    threads, so the input is split instead (:func:`emit_split_reduce`)."""
    root = inst.attrs["calls"].root if inst.opcode == "fusion" else inst
    if root.opcode != "reduce" or len(root.operands) != 2 or not root.shape.is_array:
        return None
    in_shape = root.operands[0].shape
    if root.shape.element_count() != 1 or memory_work(in_shape) < PARALLEL_MIN_WORK:
        return None
    if in_shape.layout.is_padded:
        return None
    return root


def emit_split_reduce(ctx: KernelContext) -> None:
    """Partial reductions over slices of the input's major dimension, one per
    task, into a small stack array; then the partials are combined in order.
    The reduce spec lets backends reassociate, and init values are identities."""
    inst = ctx.inst
    root = split_reduce_root(inst)
    in_shape = root.operands[0].shape
    pt = root.shape.element_type
    major = next(d for d in reversed(in_shape.layout.minor_to_major) if in_shape.dimensions[d] > 1)
    extent = in_shape.dimensions[major]
    n_tasks = max(1, min(extent, MAX_PARTIALS, memory_work(in_shape) // TASK_MIN_WORK))
    chunk = -(-extent // n_tasks)
    n_tasks = -(-extent // chunk)
    reducer = root.attrs["to_apply"]
    partials = ctx.alloca_builder.alloca(types.register_type(pt), size=n_tasks, name="partials")

    def generators(tctx: KernelContext):
        gens = [tctx.operand_generator(k) for k in range(len(inst.operands))]
        if inst.opcode == "fusion":
            all_gens = tctx.em.instruction_generators(inst.attrs["calls"], gens)
            return [all_gens[id(o)] for o in root.operands]
        return gens

    plan = _split_tree_plan(root, major, chunk)

    def task(tctx: KernelContext, i) -> None:
        b = tctx.b
        input_gen, init_gen = generators(tctx)
        acc = tctx.alloca_builder.alloca(types.register_type(pt), name="acc")
        b.store(init_gen(scalar_index()), acc)
        if plan is not None:
            tree_loops(tctx.em, in_shape, plan, task_range(b, i, chunk, extent), input_gen, acc, reducer)
        else:
            # Four vector accumulators and no unrolled copies (the same bits as
            # LLVM's own choice, 1.5 ms less to compile).
            with loop_nest(b, in_shape, dim_ranges={major: task_range(b, i, chunk, extent)},
                           loop_id=loop_hints(b.module, interleave=REDUCTION_INTERLEAVE)) as index:
                (new,) = emit_reducer(tctx.em, reducer, [b.load(acc)], [input_gen(index)])
                b.store(new, acc)
        b.store(b.load(acc), b.gep(tctx.shared[0], [i], source_etype=types.register_type(pt)))

    ctx.parallel_for(n_tasks, task, shared=(partials,))
    b = ctx.b
    _input_gen, init_gen = generators(ctx)
    total = ctx.alloca_builder.alloca(types.register_type(pt), name="total")
    b.store(init_gen(scalar_index()), total)
    with for_range(b, n_tasks, "partial") as k:
        part = b.load(b.gep(partials, [k], source_etype=types.register_type(pt)))
        (new,) = emit_reducer(ctx.em, reducer, [b.load(total)], [part])
        b.store(new, total)
    (out,) = ctx.output_arrays()
    out.write(b, Index([i64(0)] * out.shape.rank), b.load(total))


def _split_tree_plan(root: HloInstruction, major: int, chunk: int) -> list | None:
    """The tree (``reduction.tree_plan``) one task of a split reduction sums
    its ``chunk`` slices of the major dimension in, or None: a sum of a few
    long rows (vector accumulators side by side) or not a float sum or product."""
    if tree_reducer(root.attrs["to_apply"]) is None:
        return None
    in_shape = root.operands[0].shape
    order = [d for d in reversed(in_shape.layout.minor_to_major) if in_shape.dimensions[d] > 1]
    dims = [chunk if d == major else x for d, x in enumerate(in_shape.dimensions)]
    return tree_plan(order, dims, True)


def _with_padding_filled(emit):
    """``emit`` after the padding of every output buffer is written (as the loop kernel does first)."""
    def run(ctx: KernelContext) -> None:
        for out in ctx.output_arrays():
            fill_padding(ctx.b, out)
        emit(ctx)
    return run


def _applies(root_of, what: str):
    def applies(inst: HloInstruction) -> str | None:
        if any(not s.is_array or s.element_count() == 0 for s in inst.shape.leaves()):
            return "empty or non-array result"
        return None if root_of(inst) is not None else what
    return applies


#: A reduce whose reduced dimensions are all major to its kept ones.
COLUMN = KernelCandidate("reduce.column", _with_padding_filled(emit_column_reduce),
                         _applies(column_reduce_root, "the reduced dimensions are not all major to the kept ones"),
                         _column_scratch_bytes, shareable=True)
#: A big reduce to one value.
SPLIT = KernelCandidate("reduce.split", _with_padding_filled(emit_split_reduce),
                        _applies(split_reduce_root,
                                 f"not a reduction of at least {PARALLEL_MIN_WORK * WORK_UNIT_BYTES // 1024} KiB to one value"),
                        shareable=True)
