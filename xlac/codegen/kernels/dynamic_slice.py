"""``dynamic-slice`` (an elemental generator) and ``dynamic-update-slice`` (a kernel).

Start indices are scalar operands of any integer type (or, in the old form, one
rank-1 array), clamped per dimension to ``[0, operand_size - slice_size]`` so
the window is always in bounds (spec: *DynamicSlice*): generated code never
reads or writes outside a buffer, whatever the indices.
"""
from __future__ import annotations

from llvmlite import ir

from ...hlo.ir import HloInstruction

from ..ir_array import Index, i64, scalar_index
from ..loops import loop_nest
from ..kernel_choice import KernelCandidate
from ._util import clamp_start, copy_array, fill_padding


def _clamped_starts(b, inst: HloInstruction, first: int, index_gens: list, sizes) -> list:
    """One clamped i64 start per dimension of operand 0, from operands ``first``...."""
    dims = inst.operands[0].shape.dimensions
    index_ops = inst.operands[first:]
    vector_form = len(index_ops) == 1 and index_ops[0].shape.rank == 1
    starts = []
    for d, (dim, size) in enumerate(zip(dims, sizes)):
        limit = dim - size
        if limit <= 0:
            starts.append(i64(0))  # the only in-bounds start; no need to read the index
            continue
        if vector_form:
            pt = index_ops[0].shape.element_type
            value = index_gens[0](Index([i64(d)]))
        else:
            pt = index_ops[d].shape.element_type
            value = index_gens[d](scalar_index())
        starts.append(clamp_start(b, value, pt, limit))
    return starts


def _add(b, x, start):
    if isinstance(start, ir.Constant) and start.constant == 0:
        return x
    return b.add(x, start)


def dynamic_slice_generator(em, inst: HloInstruction, gens):
    operand_gen, index_gens = gens[0], gens[1:]
    sizes = inst.shape.dimensions

    def starts_at(_index):
        return tuple(_clamped_starts(em.b, inst, 1, index_gens, sizes))

    def gen(index):
        point = em.ctx.point(index)
        if point is not None and point.stack:
            stack = point.stack
            # The starts do not depend on the index: compute them once, in
            # front of the outermost loop; the index keeps its loop structure.
            starts = em.hoisting.hoisted(starts_at, em.ctx.place(Index([]), [], stack))
            multi = [_add(em.b, x, s) for x, s in zip(index.multi, starts)]
            # A component that kept its value keeps its loop depth; a sum was
            # emitted here, in the innermost loop, so nothing derived from it
            # may be hoisted out (depth None): a broadcast of the operand would
            # otherwise read it in front of a loop it is computed in.
            depths = [dp if m is x else None for dp, m, x in zip(point.depths, multi, index.multi)]
            return operand_gen(em.ctx.place(Index(multi), depths, stack))
        starts = starts_at(index)
        return operand_gen(Index([_add(em.b, x, s) for x, s in zip(index.multi, starts)]))
    return gen


def _dynamic_update_slice(ctx) -> None:
    inst, b = ctx.inst, ctx.b
    (out,) = ctx.output_arrays()
    operand, update = inst.operands[0], inst.operands[1]
    # Copy the operand unless the result already lives in its buffer (in place).
    if ctx.assignment.slice_of(inst, 0) != ctx.assignment.slice_of(operand, 0):
        src_inst, _ = ctx.assignment.defining(operand, 0)
        if src_inst.opcode == "constant" and src_inst.literal.size <= 1:
            copy_array(b, out, ctx.operand_generator(0))
        else:
            copy_array(b, out, ctx.operand_array(0))
    else:
        fill_padding(b, out)
    if update.shape.element_count() == 0:
        return
    index_gens = [ctx.operand_generator(k) for k in range(2, len(inst.operands))]
    starts = _clamped_starts(b, inst, 2, index_gens, update.shape.dimensions)
    update_gen = ctx.operand_generator(1)
    with loop_nest(b, update.shape) as index:
        target = [_add(b, x, s) for x, s in zip(index.multi, starts)]
        out.write(b, Index(target), update_gen(index))


#: The kernel candidates of this module (``kernels.register_all``).
DYNAMIC_UPDATE_SLICE = KernelCandidate("dynamic-update-slice", _dynamic_update_slice, shareable=True)
