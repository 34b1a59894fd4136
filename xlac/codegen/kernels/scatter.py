"""``scatter`` (also variadic): copy the operands, then combine each update window.

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

from contextlib import contextmanager

from llvmlite import ir

from ...errors import UnsupportedError

from .. import scalar_ops
from ..emission import context_of
from ..ir_array import Index, i64
from ..loops import for_range
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


def _emit_scatter(ctx) -> None:
    kernel, b = ctx.inst, ctx.b
    # A scatter, or a kInput fusion rooted at one: its indices and updates
    # computed in the loop (``passes/fusion.py``), its operands read from buffers.
    inst = kernel.attrs["calls"].root if kernel.opcode == "fusion" else kernel
    n = (len(inst.operands) - 1) // 2
    operands, indices, updates = inst.operands[:n], inst.operands[n], inst.operands[n + 1:]
    uwd, iwd, sd2od, ivd, ibd, sibd = scatter_dimension_numbers(inst)
    outs = ctx.output_arrays()
    if kernel.opcode == "fusion":
        bases = [op.parameter_number for op in operands]
        gens = ctx.em.instruction_generators(kernel.attrs["calls"], [
            ctx.operand_generator(k) for k in range(len(kernel.operands))], overrides={id(inst): _not_elemental})
        index_gen = gens[id(indices)]
        update_gens = [gens[id(u)] for u in updates]
    else:
        bases = list(range(n))
        index_gen = ctx.operand_generator(n)
        update_gens = [ctx.operand_generator(n + 1 + k) for k in range(n)]
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
    upd_shape = updates[0].shape
    if upd_shape.element_count() == 0 or outs[0].shape.element_count() == 0:
        return

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
