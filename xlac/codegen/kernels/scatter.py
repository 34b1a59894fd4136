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
def _loops(b, sizes, name):
    """Nested loops (first size outermost); yields the list of induction values."""
    ivs = []

    @contextmanager
    def level(k):
        if k == len(sizes):
            yield
            return
        if sizes[k] == 1:
            ivs.append(i64(0))
            with level(k + 1):
                yield
            return
        with for_range(b, sizes[k], f"{name}{k}") as iv:
            ivs.append(iv)
            with level(k + 1):
                yield

    with level(0):
        yield ivs


def _emit_scatter(ctx) -> None:
    inst, b = ctx.inst, ctx.b
    n = (len(inst.operands) - 1) // 2
    operands, indices, updates = inst.operands[:n], inst.operands[n], inst.operands[n + 1:]
    uwd, iwd, sd2od, ivd, ibd, sibd = scatter_dimension_numbers(inst)
    outs = ctx.output_arrays()
    for k, (out, op) in enumerate(zip(outs, operands)):
        if ctx.assignment.slice_of(inst, k) == ctx.assignment.slice_of(op, 0):
            fill_padding(b, out)
            continue
        src, _ = ctx.assignment.defining(op, 0)
        if src.opcode == "constant" and src.literal.size <= 1:
            copy_array(b, out, ctx.operand_generator(k))
        else:
            copy_array(b, out, ctx.operand_array(k))
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
    index_gen = ctx.operand_generator(n)
    update_gens = [ctx.operand_generator(n + 1 + k) for k in range(n)]
    # The dimensions of scatter_indices that G indexes (all but index_vector_dim).
    idx_batch_dims = [d for d in range(idx_shape.rank) if d != ivd]
    comp = inst.attrs["to_apply"]

    with _loops(b, [upd_shape.dimensions[d] for d in scatter_dims], "g") as g:
        starts = [i64(0)] * rank
        for k, od in enumerate(sd2od):
            multi = [i64(0)] * idx_shape.rank
            for pos, d in enumerate(idx_batch_dims):
                multi[d] = g[pos]
            if ivd < idx_shape.rank:
                multi[ivd] = i64(k)
            starts[od] = index_to_i64(b, index_gen(Index(multi)), idx_pt)
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
            with _loops(b, [upd_shape.dimensions[d] for d in uwd], "w") as w:
                u = [None] * upd_shape.rank
                for pos, d in enumerate(scatter_dims):
                    u[d] = g[pos]
                for pos, d in enumerate(uwd):
                    u[d] = w[pos]
                target = list(starts)
                for pos, d in enumerate(window_operand_dims):
                    target[d] = w[pos] if isinstance(starts[d], ir.Constant) and starts[d].constant == 0 \
                        else b.add(starts[d], w[pos])
                o_index, u_index = Index(target), Index(u)
                current = [out.read(b, o_index) for out in outs]
                news = [gen(u_index) for gen in update_gens]
                with scalar_ops.scalar_loop():
                    result = ctx.em.emit_scalar_computation(comp, current + news)
                results = result if isinstance(result, tuple) else (result,)
                for out, value in zip(outs, results):
                    out.write(b, o_index, value)


#: The kernel candidates of this module (``kernels.register_all``).
SCATTER = KernelCandidate("scatter", _emit_scatter, shareable=True)
