"""``slice``, ``concatenate`` and ``dynamic-update-slice`` with constant start
indices, between buffers, as row copies (``memcpy``).

A slice with unit strides copies a box of its operand into its result; a
concatenation copies each operand into a box of its result; a
dynamic-update-slice whose start indices are constants copies its update
into a box of its result (after copying the operand there, unless it runs in
place).  When the
buffers share one layout (no padding), a box is *rows* of contiguous bytes:
the minor-most memory dimensions, merged while the box spans them whole in
both buffers.  The kernel loops over the rows (a loop nest over the other
dimensions, in memory order) and copies each with one ``memcpy``: a few
instructions to compile, where the elemental loop kernel (the fallback) is a
vectorised loop nest with selects between operands (a 4-way concatenation of
512 x 128 f64 blocks: ~35 ms of LLVM time against ~2 ms), and libc's copy at
run time.  Rows shorter than :data:`MIN_ROW_BYTES` decline: the loop kernel
copies them better.
"""
from __future__ import annotations

from ...hlo.ir import HloInstruction
from ...shape import PRED, Shape, strides
from ..emitter import KernelContext
from ..ir_array import i64
from ..kernel_choice import KernelCandidate
from ..loops import for_range, loop_hints
from ._util import I8, memcpy

#: Shortest row (bytes) worth a memcpy call.
MIN_ROW_BYTES = 64


def _plain(shape: Shape, like: Shape) -> bool:
    return (shape.is_array and not shape.layout.is_padded and shape.element_type is not PRED
            and shape.layout.minor_to_major == like.layout.minor_to_major)


def _rows(box, src: Shape, dst: Shape) -> tuple:
    """``(outer, run)``: the box as rows of ``run`` contiguous elements in both
    buffers; ``outer`` lists ``(dimension, size)`` of the other dimensions
    of the box, major first."""
    order = list(reversed(src.layout.minor_to_major))          # memory order, major first
    run, k = 1, len(order)
    while k:
        d = order[k - 1]
        run *= box[d]
        k -= 1
        if not box[d] == src.dimensions[d] == dst.dimensions[d]:
            break
    return [(d, box[d]) for d in order[:k]], run


def _copy_box(ctx: KernelContext, src, src_shape: Shape, dst, dst_shape: Shape, box, src_start, dst_start) -> None:
    """Copy the box of sizes ``box`` at ``src_start`` of src to ``dst_start`` of dst."""
    b = ctx.b
    size = src_shape.element_type.byte_size
    outer, run = _rows(box, src_shape, dst_shape)
    ss, ds = strides(src_shape), strides(dst_shape)
    src_off = sum(s * t for s, t in zip(src_start, ss))
    dst_off = sum(s * t for s, t in zip(dst_start, ds))

    def level(k, so, do):
        if k == len(outer):
            memcpy(b, b.gep(dst, [do], source_etype=I8), b.gep(src, [so], source_etype=I8), run * size)
            return
        d, n = outer[k]
        # Not unrolled: a row is a libc call, unrolling only makes code to compile.
        with for_range(b, n, f"row{k}", loop_id=loop_hints(b.module, vectorize=False)) as i:
            level(k + 1, b.add(so, b.mul(i, i64(ss[d] * size))), b.add(do, b.mul(i, i64(ds[d] * size))))
    level(0, i64(src_off * size), i64(dst_off * size))


def _slice_box(inst: HloInstruction) -> tuple:
    spec = [tuple(int(v) for v in t) for t in inst.attrs["slice"]]
    return tuple(e - s for s, e, _ in spec), tuple(s for s, _, _ in spec), all(t == 1 for _, _, t in spec)


def _short(outer_run, size: int) -> bool:
    outer, run = outer_run
    return bool(outer) and run * size < MIN_ROW_BYTES


def _slice_applies(inst: HloInstruction) -> str | None:
    src, dst = inst.operands[0].shape, inst.shape
    if not (_plain(src, dst) and _plain(dst, dst)):
        return "a padded or pred buffer, or operand and result laid out differently"
    box, _, unit = _slice_box(inst)
    if not unit:
        return "a strided slice"
    if dst.element_count() == 0:
        return "an empty result"
    if _short(_rows(box, src, dst), dst.element_type.byte_size):
        return f"rows shorter than {MIN_ROW_BYTES} bytes"
    return None


def _emit_slice(ctx: KernelContext) -> None:
    inst = ctx.inst
    box, start, _ = _slice_box(inst)
    src, (out,) = ctx.operand_array(0), ctx.output_arrays()
    _copy_box(ctx, src.ptr, src.shape, out.ptr, out.shape, box, start, (0,) * len(box))


def _concat_applies(inst: HloInstruction) -> str | None:
    dst = inst.shape
    if not all(_plain(o.shape, dst) for o in inst.operands) or not _plain(dst, dst):
        return "a padded or pred buffer, or operands laid out unlike the result"
    size = dst.element_type.byte_size
    if any(o.shape.element_count() and _short(_rows(o.shape.dimensions, o.shape, dst), size)
           for o in inst.operands):
        return f"rows shorter than {MIN_ROW_BYTES} bytes"
    return None


def _emit_concat(ctx: KernelContext) -> None:
    inst = ctx.inst
    (dim,) = inst.attrs["dimensions"]
    (out,) = ctx.output_arrays()
    at = 0
    for k, o in enumerate(inst.operands):
        shape = o.shape
        if shape.element_count():
            start = tuple(at if d == dim else 0 for d in range(shape.rank))
            _copy_box(ctx, ctx.operand_array(k).ptr, shape, out.ptr, out.shape, shape.dimensions,
                      (0,) * shape.rank, start)
        at += shape.dimensions[dim]


def _constant_starts(inst: HloInstruction) -> tuple | None:
    """The start indices of a dynamic-update-slice, clamped as the spec says,
    when every one is a scalar constant (else None)."""
    operand, update = inst.operands[0].shape, inst.operands[1].shape
    index_ops = inst.operands[2:]
    if len(index_ops) != operand.rank or any(o.opcode != "constant" or o.shape.rank for o in index_ops):
        return None
    return tuple(min(max(int(o.literal), 0), d - u)
                 for o, d, u in zip(index_ops, operand.dimensions, update.dimensions))


def _update_applies(inst: HloInstruction) -> str | None:
    dst, update = inst.shape, inst.operands[1].shape
    if not (_plain(inst.operands[0].shape, dst) and _plain(update, dst) and _plain(dst, dst)):
        return "a padded or pred buffer, or operands laid out unlike the result"
    if _constant_starts(inst) is None:
        return "start indices that are not constants"
    if update.element_count() and _short(_rows(update.dimensions, update, dst), dst.element_type.byte_size):
        return f"rows shorter than {MIN_ROW_BYTES} bytes"
    return None


def _emit_update(ctx: KernelContext) -> None:
    inst = ctx.inst
    (out,) = ctx.output_arrays()
    operand, update = inst.operands[0], inst.operands[1]
    if ctx.assignment.slice_of(inst, 0) != ctx.assignment.slice_of(operand, 0):   # not in place
        src = ctx.operand_array(0)
        memcpy(ctx.b, out.ptr, src.ptr, out.shape.byte_size())
    if update.shape.element_count():
        _copy_box(ctx, ctx.operand_array(1).ptr, update.shape, out.ptr, out.shape, update.shape.dimensions,
                  (0,) * update.shape.rank, _constant_starts(inst))


#: The kernel candidates of this module (``kernels.register_all``).
SLICE = KernelCandidate("slice.rows", _emit_slice, _slice_applies, shareable=True)
CONCATENATE = KernelCandidate("concatenate.rows", _emit_concat, _concat_applies, shareable=True)
DYNAMIC_UPDATE_SLICE = KernelCandidate("dynamic-update-slice.rows", _emit_update, _update_applies, shareable=True)

__all__ = ["SLICE", "CONCATENATE", "DYNAMIC_UPDATE_SLICE", "MIN_ROW_BYTES"]
