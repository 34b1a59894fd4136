"""Reduction kernels: the whole-kernel strategies for a ``reduce`` (or a
reduce-rooted ``fusion:kInput``) that the loop kernel would run badly.

* ``reduce.column`` — the reduced dimensions are all major to the kept ones
  (a sum over the rows of a row-major matrix): stream the input in memory
  order into the output row, tasks splitting the kept dimensions.
* ``reduce.split`` — a big input reduced to one value: partial reductions
  over slices of the input, one per task, then combined in order.

Otherwise the loop kernel computes each output element with the reduce
generator's loops (``codegen/reduction.py``).
"""
from __future__ import annotations

import math

from ...hlo.ir import HloInstruction
from ...shape import Shape
from .. import types
from ..emitter import (MAX_TASKS, PARALLEL_MIN_WORK, TASK_MIN_WORK, WORK_UNIT_BYTES, KernelContext, memory_work,
                       task_range)
from ..ir_array import Index, i64, scalar_index
from ..kernel_choice import KernelCandidate
from ..loops import REDUCTION_INTERLEAVE, fill_padding, for_range, loop_hints, loop_nest
from ..reduction import emit_reducer


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

    def task(tctx: KernelContext, i) -> None:
        b = tctx.b
        input_gen, init_gen = generators(tctx)
        acc = tctx.alloca_builder.alloca(types.register_type(pt), name="acc")
        b.store(init_gen(scalar_index()), acc)
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
                         shareable=True)
#: A big reduce to one value.
SPLIT = KernelCandidate("reduce.split", _with_padding_filled(emit_split_reduce),
                        _applies(split_reduce_root,
                                 f"not a reduction of at least {PARALLEL_MIN_WORK * WORK_UNIT_BYTES // 1024} KiB to one value"),
                        shareable=True)
