"""Reduction kernels: the whole-kernel strategies for a ``reduce`` (or a
reduce-rooted ``fusion:kInput``) that the loop kernel would run badly.

* ``reduce.column`` — the reduced dimensions lie together, major to some
  kept ones (a sum over the rows of a row-major matrix; per image, a group
  norm's sums over the image; or each reduce of a multi-output fusion, over
  inputs of one shape): stream the input in memory order into the output
  rows, tasks splitting the kept dimensions; a long float sum goes through
  levels of partial rows (``_BlockedColumnSum``).
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
from ..loops import REDUCTION_INTERLEAVE, dyn_range, fill_padding, for_range, loop_hints, loop_nest, parallel_loops
from ..reduction import TREE_BLOCK, TREE_IDENTITY, emit_reducer, tree_loops, tree_plan, tree_reducer
from ._util import ScratchPlan


def _column_form(root: HloInstruction) -> bool:
    """Whether the reduce ``root`` (one input, an array result) reduces
    dimensions that lie together in the input's layout, major to some kept
    ones: rows of those kept elements, one after the other (a sum over the
    rows of a row-major matrix), or several such runs of rows, one per index
    of the kept dimensions major to them (a group norm's statistics over the
    image, per image and channel)."""
    if root.opcode != "reduce" or len(root.operands) != 2 or not root.shape.is_array:
        return False
    in_shape = root.operands[0].shape
    reduced = set(root.attrs["dimensions"])
    order = [d for d in in_shape.layout.minor_to_major if in_shape.dimensions[d] != 1]  # minor first
    kept = [order.index(d) for d in order if d not in reduced]
    red = [order.index(d) for d in order if d in reduced]
    if not kept or not red or in_shape.layout.is_padded:
        return False
    return min(kept) < min(red) and not any(min(red) < k < max(red) for k in kept)


def column_reduce_roots(inst: HloInstruction) -> list | None:
    """The reduces of a kernel that reduces runs of rows of its kept minor
    elements (:func:`_column_form`: a sum over rows of a row-major matrix, a
    group norm's statistics): its root, or every element of a multi-output fusion's tuple
    root when all of them are such reduces of inputs of one shape over the
    same dimensions, summed through as many levels (:func:`column_levels`);
    else None.  Such reduces are better computed by streaming the input in
    memory order into the output (see :func:`emit_column_reduce`): a
    multi-output fusion's reduces side by side, each input element generated
    once for all of them."""
    root = inst.attrs["calls"].root if inst.opcode == "fusion" else inst
    roots = list(root.operands) if root.opcode == "tuple" and root.operands else [root]
    if not all(_column_form(r) for r in roots):
        return None
    first = roots[0]
    in_shape, dims = first.operands[0].shape, sorted(first.attrs["dimensions"])
    if any(r.operands[0].shape != in_shape or sorted(r.attrs["dimensions"]) != dims
           or column_levels(r) != column_levels(first) for r in roots[1:]):
        return None
    return roots


#: Input rows a column reduction adds into the output row per pass over it:
#: the output row is loaded and stored once per group instead of once per
#: input row (the reducer is still applied row after row: the same result).
#: The loops are not unrolled: the rows of a group are independent work
#: already, and LLVM's unrolled and epilogue copies cost a quarter of the
#: compile time (sum over axis 0 of 4096x4096: 30 -> 23 ms; one thread 2.03
#: -> 1.77 ms, two the same).
COLUMN_REDUCE_ROWS = 4
#: A column reduction of the entry (run once per call) over at most this many
#: input elements adds its rows one at a time: the group of COLUMN_REDUCE_ROWS
#: is the fused computation emitted four times over, which LLVM's value
#: numbering and instruction combining take superlinear time to go through
#: (a transformer step's twelve layer-norm gradients over f32[8,12,32], one
#: multi-output fusion: 210 -> 90 ms of LLVM), for a microsecond or two of a
#: kernel run once (a 512 x 32 column sum: 1.5 -> 3.1 us).
UNGROUPED_ONCE_ELEMENTS = 16384
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


def _partial_shape(root: HloInstruction) -> Shape:
    """The shape of a column reduction's partial rows: its output's, unpadded."""
    return Shape(root.shape.element_type, root.shape.dimensions,
                 layout=Layout(minor_to_major=root.shape.layout.minor_to_major))


def _column_plan(inst: HloInstruction) -> ScratchPlan:
    """The scratch of a column reduction: per reduce, one partial row per
    level below the output's."""
    plan = ScratchPlan()
    roots = column_reduce_roots(inst)
    for level in range(column_levels(roots[0]) - 1):
        for k, root in enumerate(roots):
            plan.add(f"partial{level}.{k}", _partial_shape(root).byte_size())
    return plan


def _column_scratch_bytes(me, inst: HloInstruction) -> int:
    return _column_plan(inst).size


def _ungrouped_once(inst: HloInstruction) -> bool:
    """Whether a column reduction ``inst`` of the entry adds its rows one at a
    time (``UNGROUPED_ONCE_ELEMENTS``)."""
    return column_reduce_roots(inst)[0].operands[0].shape.element_count() <= UNGROUPED_ONCE_ELEMENTS


def _group_rows(ctx: KernelContext) -> int:
    """Input rows a column reduction adds per pass over its output row."""
    return 1 if ctx.runs_once and _ungrouped_once(ctx.inst) else COLUMN_REDUCE_ROWS


def emit_column_reduce(ctx: KernelContext) -> None:
    """out[kept] = init; then for every input element in memory order,
    out[kept] = reducer(out[kept], input[...]).  The inner loop runs along the
    kept (minor) dimensions, reading the input and the output contiguously, so
    it vectorises without reassociating anything.  Tasks split the outermost
    kept dimension (each task owns a slice of the output).  A multi-output
    fusion's reduces (:func:`column_reduce_roots`) go side by side: each
    input element is generated once (what they share too) and added into
    every output row."""
    inst = ctx.inst
    roots = column_reduce_roots(inst)
    root = roots[0]
    in_shape = root.operands[0].shape
    reduced = list(root.attrs["dimensions"])
    kept = [d for d in range(in_shape.rank) if d not in reduced]
    kept_order = [d for d in reversed(in_shape.layout.minor_to_major)
                  if d in kept and in_shape.dimensions[d] != 1]
    split = kept_order[0]
    extent = in_shape.dimensions[split]
    work = memory_work(in_shape) * len(roots)
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
    group = _group_rows(ctx)
    order = [d for d in in_shape.layout.minor_to_major if in_shape.dimensions[d] != 1]
    last_reduced = max(order.index(d) for d in reduced if d in order)
    outer = [d for d in kept_order if order.index(d) > last_reduced]     # major first

    def body(tctx: KernelContext, lo, hi) -> None:
        b = tctx.b
        gens = [tctx.operand_generator(k) for k in range(len(inst.operands))]
        if inst.opcode == "fusion":
            all_gens = tctx.em.instruction_generators(inst.attrs["calls"], gens)
            input_gens = [all_gens[id(r.operands[0])] for r in roots]
            init_gens = [all_gens[id(r.operands[1])] for r in roots]
        else:
            input_gens, init_gens = gens[:1], gens[1:]
        outs = tctx.output_arrays()
        out_split = kept.index(split)
        ranges = {} if lo is None else {split: (lo, hi)}
        out_ranges = {} if lo is None else {out_split: (lo, hi)}
        if outs[0].shape.element_count() == 0:
            return
        inits = [g(scalar_index()) for g in init_gens]
        with loop_nest(b, outs[0].shape, dim_ranges=out_ranges) as index:
            for out, init in zip(outs, inits):
                out.write(b, index, init)
        if in_shape.element_count() == 0:
            return
        # Per index of the kept dimensions major to the reduced ones (each a
        # run of rows of its own in memory), the rows summed through a tree of
        # partial rows (one level, the output itself, for a few rows).
        def blocked(ranges_):
            _BlockedColumnSum(_ColumnSums(tctx, roots, input_gens, ranges_), outs, levels, group).emit()
        _outer_loops(b, outer, ranges, in_shape, blocked)

    if n_tasks == 1:
        body(ctx, None, None)
        return

    def task(tctx: KernelContext, i) -> None:
        body(tctx, *task_range(tctx.b, i, chunk, extent))

    ctx.parallel_for(n_tasks, task)


def _outer_loops(b, dims: list, ranges: dict, shape: Shape, fn) -> None:
    """``fn(ranges)`` for each index of ``dims`` (major first) within
    ``ranges``, each such dimension's range narrowed to that index."""
    if not dims:
        fn(ranges)
        return
    d = dims[0]
    lo, hi = ranges.get(d, (i64(0), i64(shape.dimensions[d])))
    with dyn_range(b, lo, hi, name=f"outer{d}") as i:
        _outer_loops(b, dims[1:], {**ranges, d: (i, b.add(i, i64(1)))}, shape, fn)


class _ColumnSums:
    """The reduces of a column reduction (``roots``, one or a multi-output
    fusion's) and their inputs' generators, over a task's slice ``ranges``
    of the kept dimensions."""

    def __init__(self, ctx: KernelContext, roots: list, input_gens: list, ranges: dict):
        self.ctx, self.b, self.roots, self.input_gens, self.ranges = ctx, ctx.b, roots, input_gens, ranges
        self.in_shape = roots[0].operands[0].shape
        self.kept = [d for d in range(self.in_shape.rank) if d not in roots[0].attrs["dimensions"]]

    def combine(self, accs: list, at: Index, inputs: list, values=None) -> None:
        """``accs[k][at] = reducer_k(accs[k][at], x)`` for each input index in
        ``inputs`` in turn (each generated once for every reduce), or, with
        ``values``, for each of ``values[k]`` (lists of registers)."""
        b = self.b
        for k, (root, acc) in enumerate(zip(self.roots, accs)):
            xs = values[k] if values is not None else [self.input_gens[k](index) for index in inputs]
            value = acc.read(b, at)
            for x in xs:
                (value,) = emit_reducer(self.ctx.em, root.attrs["to_apply"], [value], [x])
            acc.write(b, at, value)

    def kept_loop(self, fn) -> None:
        """``fn(input index, output index)`` over the task's slice of the kept
        dimensions, in the input's memory order (the reduced dimensions 0)."""
        # Parallel: an iteration reads inputs and updates the output (or partial)
        # element at its own index only, so LLVM vectorises it without run-time
        # overlap checks (with a dozen reduces fused, more than it makes).
        with parallel_loops(self.b.module) as parallel, \
                loop_nest(self.b, self.in_shape, dims=self.kept, dim_ranges=self.ranges,
                          loop_id=loop_hints(self.b.module, base=parallel)) as index:
            fn(index, Index([index.multi[d] for d in self.kept]))


class _BlockedColumnSum:
    """A column reduction summed through ``levels`` levels of partial rows
    (:func:`column_levels`): the input rows, in memory order, are added
    COLUMN_BLOCK_ROWS at a time into a level-0 partial row that starts from
    the reducer's identity, which is then added into the level above, and so
    on; the top level is the output (holding the init value).  A task owns
    the slice ``ranges`` of the kept dimensions, of the output and of every
    partial row (all indexed as the output); each reduce has its own rows.
    ``group``: input rows added per pass over a partial row (a divisor of
    COLUMN_BLOCK_ROWS)."""

    def __init__(self, sums: _ColumnSums, outs: list, levels: int, group: int):
        self.sums, self.b, self.group = sums, sums.b, group
        roots = sums.roots
        self.row_dims, self.rows = _reduced_rows(roots[0])
        self.identities, self.arrays = [], [outs]
        if levels > 1:      # partial rows in scratch, started from the identity (a tree reducer's)
            self.identities = [types.constant(r.shape.element_type, TREE_IDENTITY[tree_reducer(r.attrs["to_apply"])])
                               for r in roots]
            plan, scratch = _column_plan(sums.ctx.inst), sums.ctx.scratch_pointer()
            self.arrays = [[IrArray(plan.pointer(self.b, scratch, f"partial{level}.{k}"), _partial_shape(r))
                            for k, r in enumerate(roots)] for level in range(levels - 1)] + [outs]

    def emit(self) -> None:
        self._level(len(self.arrays) - 1, i64(0), i64(self.rows))

    def _level(self, level: int, first, count) -> None:
        """Add the input rows [first, first + count) into ``level``'s partial rows."""
        if level == 0:
            self._rows(self.arrays[0], first, count)
            return
        b, below, into = self.b, self.arrays[level - 1], self.arrays[level]
        span = i64(COLUMN_BLOCK_ROWS ** level)
        end = b.add(first, count)

        def reset(index, at):
            for array, identity in zip(below, self.identities):
                array.write(b, at, identity)
        with dyn_range(b, first, end, step=span, name=f"block{level}") as start:
            rest = b.sub(end, start)
            self.sums.kept_loop(reset)
            self._level(level - 1, start, b.select(b.icmp_signed("<", rest, span), rest, span))
            self.sums.kept_loop(lambda index, at: self.sums.combine(
                into, at, None, [[array.read(b, at)] for array in below]))

    def _rows(self, accs: list, first, count) -> None:
        """Add the input rows [first, first + count) into ``accs``, ``group`` of them
        at a time (``accs`` are loaded and stored once per group), in order."""
        b, group = self.b, self.group
        groups = b.udiv(count, i64(group))
        with dyn_range(b, i64(0), groups, name="group") as g:
            self._add_rows(accs, b.add(first, b.mul(g, i64(group))), group)
        if self.rows % group:       # else every block is whole groups (COLUMN_BLOCK_ROWS is a multiple)
            with dyn_range(b, b.add(first, b.mul(groups, i64(group))), b.add(first, count), name="row") as row:
                self._add_rows(accs, row, 1)

    def _add_rows(self, accs: list, row, n: int) -> None:
        """acc = reducer(acc, input row) for the ``n`` rows from ``row`` on."""
        b = self.b
        where = [self._row_index(b.add(row, i64(u)) if u else row) for u in range(n)]

        def add(index, at):
            inputs = []
            for w in where:
                multi = list(index.multi)
                for d, x in w.items():
                    multi[d] = x
                inputs.append(Index(multi))
            self.sums.combine(accs, at, inputs)
        self.sums.kept_loop(add)

    def _row_index(self, row) -> dict:
        """{reduced dimension: index} of input row ``row``."""
        b, where = self.b, {}
        for d in reversed(self.row_dims[1:]):
            size = i64(self.sums.in_shape.dimensions[d])
            where[d] = b.urem(row, size)
            row = b.udiv(row, size)
        where[self.row_dims[0]] = row
        return where


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
                         _applies(column_reduce_roots, "the reduced dimensions are not all major to the kept ones"),
                         _column_scratch_bytes, shareable=True, once=_ungrouped_once)
#: A big reduce to one value.
SPLIT = KernelCandidate("reduce.split", _with_padding_filled(emit_split_reduce),
                        _applies(split_reduce_root,
                                 f"not a reduction of at least {PARALLEL_MIN_WORK * WORK_UNIT_BYTES // 1024} KiB to one value"),
                        shareable=True)
