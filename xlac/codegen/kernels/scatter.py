"""``scatter`` (also variadic): copy the operands, then combine each update window.

The kernel runs a ``scatter`` or a ``kInput`` fusion rooted at one, whose
indices and updates are computed in its loop (``passes/fusion.py``); what
they compute per scatter index is hoisted out of the window loop.  Large
windows whose indices are in order (sampled at run time) are split between
threads by the rows of the result (``_split_dimension``).

For every scatter index ``G`` of the updates (their dimensions not in
``update_window_dims``, row-major), the start of the window in the operand is
built from the index vector ``scatter_indices[Combine(G, :)]`` through
``scatter_dims_to_operand_dims`` and, for batched scatters, from ``G`` itself
through ``scatter_indices_batching_dims`` -> ``input_batching_dims``.  A window
that does not fit entirely inside the operand (some start ``< 0`` or
``> operand_size - window_size``) is skipped, as XLA does; otherwise each of its
elements ``O = start + W`` becomes ``to_apply(output[O]..., update[U]...)``
(inserted and batching dimensions have window size 1).  Updates are applied in
that order (scatter index, then window index), so duplicates combine
deterministically; the evaluator uses the same order.
"""
from __future__ import annotations

import math
from contextlib import contextmanager

from llvmlite import ir

from ...errors import UnsupportedError

from .. import scalar_ops
from ..emission import context_of
from ..emitter import PTR
from ..ir_array import I64, Index, i64
from ..loops import for_range
from ..task_grid import thread_count
from ..kernel_choice import KernelCandidate
from ._util import copy_array, fill_padding, index_to_i64


def scatter_dimension_numbers(inst):
    """(update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
    index_vector_dim, input_batching_dims, scatter_indices_batching_dims)."""
    a = inst.attrs

    def ints(name):
        return tuple(int(v) for v in (a.get(name) or ()))
    return (ints("update_window_dims"), ints("inserted_window_dims"),
            ints("scatter_dims_to_operand_dims"), int(a.get("index_vector_dim", 0)),
            ints("input_batching_dims"), ints("scatter_indices_batching_dims"))


@contextmanager
def _loops(b, sizes, name, chains: list):
    """Nested loops (first size outermost), each with its hoist chain in
    ``chains`` while it runs; yields (induction values, their loops' depths:
    0 for a loop of one iteration, whose value is the constant 0)."""
    ivs, depths = [], []

    @contextmanager
    def level(k):
        if k == len(sizes):
            yield
            return
        if sizes[k] == 1:
            ivs.append(i64(0))
            depths.append(0)
            with level(k + 1):
                yield
            return
        with for_range(b, sizes[k], f"{name}{k}", chains) as iv:
            ivs.append(iv)
            depths.append(len(chains))
            with level(k + 1):
                yield

    with level(0):
        yield ivs, depths


def _not_elemental(index):
    raise AssertionError("a scatter has no elemental generator: its kernel drives it")


#: A scatter runs its windows on several threads when each has at least this
#: many elements and all the updates at least PARALLEL_ELEMENTS
#: (``_split_dimension``).
PARALLEL_WINDOW = 16
PARALLEL_ELEMENTS = 1 << 16
#: How many scatter indices ``_looks_sorted`` reads to decide whether to split.
SORT_SAMPLES = 64


def _root(kernel):
    """The scatter a kernel runs: the instruction, or a kInput fusion's root."""
    return kernel.attrs["calls"].root if kernel.opcode == "fusion" else kernel


def _generators(ctx) -> tuple:
    """(the indices' generator, the updates' generators) of the kernel's
    scatter in ``ctx``: its operands', or a fusion's fused values."""
    kernel = ctx.inst
    inst = _root(kernel)
    n = (len(inst.operands) - 1) // 2
    if kernel.opcode != "fusion":
        return ctx.operand_generator(n), [ctx.operand_generator(n + 1 + k) for k in range(n)]
    gens = ctx.em.instruction_generators(kernel.attrs["calls"], [
        ctx.operand_generator(k) for k in range(len(kernel.operands))], overrides={id(inst): _not_elemental})
    return gens[id(inst.operands[n])], [gens[id(u)] for u in inst.operands[n + 1:]]


def _emit_scatter(ctx) -> None:
    kernel, b = ctx.inst, ctx.b
    # A scatter, or a kInput fusion rooted at one: its indices and updates
    # computed in the loop (``passes/fusion.py``), its operands read from buffers.
    inst = _root(kernel)
    n = (len(inst.operands) - 1) // 2
    bases = [op.parameter_number for op in inst.operands[:n]] if kernel.opcode == "fusion" else list(range(n))
    outs = ctx.output_arrays()
    for k, (out, base) in enumerate(zip(outs, bases)):
        op = kernel.operands[base]
        if ctx.assignment.slice_of(kernel, k) == ctx.assignment.slice_of(op, 0):
            fill_padding(b, out)
            continue
        src, _ = ctx.assignment.defining(op, 0)
        if src.opcode == "constant" and src.literal.size <= 1:
            copy_array(b, out, ctx.operand_generator(base))
        else:
            copy_array(b, out, ctx.operand_array(base))
    upd_shape = inst.operands[n + 1].shape
    if upd_shape.element_count() == 0 or outs[0].shape.element_count() == 0:
        return
    split = _split_dimension(inst)
    if split is None:
        _apply_updates(ctx, None)
        return
    extent = inst.shape.leaves()[0].dimensions[split]
    threads = thread_count(b, ctx.opts_arg)
    tasks = b.select(b.icmp_signed("<", threads, i64(1)), i64(1), threads)
    tasks = b.select(b.icmp_signed(">", tasks, i64(extent)), i64(extent), tasks)
    tasks = b.select(_looks_sorted(ctx, split), tasks, i64(1))

    def task(tctx, i):
        # Task i owns the operand's rows [i extent / tasks, (i + 1) extent / tasks)
        # along ``split`` and applies, in order, every window that starts there.
        tb = tctx.b
        n_tasks = tb.ptrtoint(tctx.shared[0], I64)
        lo = tb.udiv(tb.mul(i, i64(extent)), n_tasks)
        hi = tb.udiv(tb.mul(tb.add(i, i64(1)), i64(extent)), n_tasks)
        _apply_updates(tctx, (split, lo, hi))

    ctx.parallel_for(tasks, task, shared=(b.inttoptr(tasks, PTR),))


def _looks_sorted(ctx, split: int) -> ir.Value:
    """An i1: whether ``SORT_SAMPLES`` scatter indices spread evenly over the
    updates start their windows in non-decreasing order along ``split`` (read
    at run time).  Sorted (a CSR matrix's rows, sorted segment ids), each task
    reads one run of the updates; in random order, every task would read every
    other window of all of them, which streams worse than one thread reading
    them all in order (65,536 windows of 64 f32 in random rows: 1.29 ms on two
    threads, 0.61 ms on one).  Either way the result is the same."""
    kernel, b = ctx.inst, ctx.b
    inst = _root(kernel)
    n = (len(inst.operands) - 1) // 2
    indices, upd_shape = inst.operands[n], inst.operands[n + 1].shape
    uwd, _, sd2od, ivd, _, _ = scatter_dimension_numbers(inst)
    index_gen, _ = _generators(ctx)
    sizes = [upd_shape.dimensions[d] for d in range(upd_shape.rank) if d not in uwd]
    total = math.prod(sizes)
    samples = min(SORT_SAMPLES, total)
    idx_shape = indices.shape
    batch = [d for d in range(idx_shape.rank) if d != ivd]
    last = ctx.alloca_builder.alloca(I64, name="scatter.last_start")
    ordered = ctx.alloca_builder.alloca(ir.IntType(1), name="scatter.sorted")
    b.store(i64(-(1 << 63)), last)
    b.store(ir.Constant(ir.IntType(1), 1), ordered)
    with for_range(b, samples, "sample") as s_:
        flat = b.udiv(b.mul(s_, i64(total - 1)), i64(max(samples - 1, 1)))
        multi = [i64(0)] * idx_shape.rank
        for pos in reversed(range(len(sizes))):          # G's components, row-major
            multi[batch[pos]] = b.urem(flat, i64(sizes[pos]))
            flat = b.udiv(flat, i64(sizes[pos]))
        if ivd < idx_shape.rank:
            multi[ivd] = i64(sd2od.index(split))
        start = index_to_i64(b, index_gen(Index(multi)), idx_shape.element_type)
        b.store(b.and_(b.load(ordered), b.icmp_signed(">=", start, b.load(last))), ordered)
        b.store(start, last)
    return b.load(ordered)


def _split_dimension(inst) -> int | None:
    """The operand dimension the update windows are split along between tasks,
    or None to run them on one thread.  Each task scans every scatter index
    and applies the windows that start in its part of a dimension along which
    windows are one element wide, so each element of the result is updated by
    one task, in the updates' order (the result is the serial one, bit for
    bit).  The scan is repeated per task: worth it only for windows of at
    least ``PARALLEL_WINDOW`` elements and ``PARALLEL_ELEMENTS`` updates in all."""
    n = (len(inst.operands) - 1) // 2
    upd_shape = inst.operands[n + 1].shape
    uwd, iwd, sd2od, *_ = scatter_dimension_numbers(inst)
    window = math.prod(upd_shape.dimensions[d] for d in uwd)
    if window < PARALLEL_WINDOW or upd_shape.element_count() < PARALLEL_ELEMENTS:
        return None
    dims = inst.shape.leaves()[0].dimensions
    # one element wide (inserted), its start read from the indices
    candidates = [d for d in sd2od if d in iwd and dims[d] > 1]
    return max(candidates, key=lambda d: dims[d], default=None)


def _apply_updates(ctx, part) -> None:
    """Combine every update window into the result (already a copy of the
    operands), in the updates' order; with ``part`` = (dimension, lo, hi) only
    the windows whose start along that dimension is in [lo, hi)."""
    kernel, b = ctx.inst, ctx.b
    inst = _root(kernel)
    n = (len(inst.operands) - 1) // 2
    operands, indices, updates = inst.operands[:n], inst.operands[n], inst.operands[n + 1:]
    uwd, iwd, sd2od, ivd, ibd, sibd = scatter_dimension_numbers(inst)
    outs = ctx.output_arrays()
    index_gen, update_gens = _generators(ctx)
    upd_shape = updates[0].shape

    op_dims = operands[0].shape.dimensions
    rank = len(op_dims)
    scatter_dims = [d for d in range(upd_shape.rank) if d not in uwd]
    window_operand_dims = [d for d in range(rank) if d not in iwd and d not in ibd]
    if len(window_operand_dims) != len(uwd):
        raise UnsupportedError("scatter", "window dimensions do not match the operand's rank")
    window_size = [1] * rank
    for k, d in enumerate(window_operand_dims):
        window_size[d] = upd_shape.dimensions[uwd[k]]
    idx_shape = indices.shape
    idx_pt = idx_shape.element_type
    # The dimensions of scatter_indices that G indexes (all but index_vector_dim).
    idx_batch_dims = [d for d in range(idx_shape.rank) if d != ivd]
    comp = inst.attrs["to_apply"]

    # The indices are placed in the loop nest (emission.LoopPoint): what the
    # fused indices and updates compute per scatter index (a gathered row's
    # number, a scale) is emitted once in front of the window loop, not per
    # element.  Hoisted code reads only inside the window's bounds check or
    # reads nothing that depends on an index.
    chains: list = []
    with _loops(b, [upd_shape.dimensions[d] for d in scatter_dims], "g", chains) as (g, g_depths):
        starts = [i64(0)] * rank
        for k, od in enumerate(sd2od):
            multi, depths = [i64(0)] * idx_shape.rank, [0] * idx_shape.rank
            for pos, d in enumerate(idx_batch_dims):
                multi[d], depths[d] = g[pos], g_depths[pos]
            if ivd < idx_shape.rank:
                multi[ivd] = i64(k)
            at = context_of(b.module).place(Index(multi), depths, list(chains))
            starts[od] = index_to_i64(b, index_gen(at), idx_pt)
        for od, sd in zip(ibd, sibd):
            starts[od] = g[sd if sd < ivd else sd - 1]
        valid = ir.Constant(ir.IntType(1), 1)
        for d in range(rank):
            if isinstance(starts[d], ir.Constant) and starts[d].constant == 0:
                continue
            limit = op_dims[d] - window_size[d]
            valid = b.and_(valid, b.icmp_signed(">=", starts[d], i64(0)))
            valid = b.and_(valid, b.icmp_signed("<=", starts[d], i64(limit)))
        if part is not None:
            d, lo, hi = part
            valid = b.and_(valid, b.icmp_signed(">=", starts[d], lo))
            valid = b.and_(valid, b.icmp_signed("<", starts[d], hi))
        with b.if_then(valid):
            with _loops(b, [upd_shape.dimensions[d] for d in uwd], "w", chains) as (w, w_depths):
                u, u_depths = [None] * upd_shape.rank, [0] * upd_shape.rank
                for pos, d in enumerate(scatter_dims):
                    u[d], u_depths[d] = g[pos], g_depths[pos]
                for pos, d in enumerate(uwd):
                    u[d], u_depths[d] = w[pos], w_depths[pos]
                target = list(starts)
                for pos, d in enumerate(window_operand_dims):
                    target[d] = w[pos] if isinstance(starts[d], ir.Constant) and starts[d].constant == 0 \
                        else b.add(starts[d], w[pos])
                o_index = Index(target)
                u_index = context_of(b.module).place(Index(u), u_depths, list(chains))
                current = [out.read(b, o_index) for out in outs]
                news = [gen(u_index) for gen in update_gens]
                with scalar_ops.scalar_loop():
                    result = ctx.em.emit_scalar_computation(comp, current + news)
                results = result if isinstance(result, tuple) else (result,)
                for out, value in zip(outs, results):
                    out.write(b, o_index, value)


#: The kernel candidates of this module (``kernels.register_all``).
SCATTER = KernelCandidate("scatter", _emit_scatter, shareable=True)
