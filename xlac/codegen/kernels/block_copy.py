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
run time.  Big copies are split among tasks (:func:`_copy_boxes`).  Rows shorter than :data:`MIN_ROW_BYTES` decline: the loop kernel
copies them better.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

from ...hlo.ir import HloInstruction
from ...shape import PRED, Shape, strides
from ..emitter import (PARALLEL_MIN_WORK, WORK_UNIT_BYTES, KernelContext, parallel_parts, task_chunks,
                       task_range)
from ..ir_array import i64
from ..kernel_choice import KernelCandidate
from ..loops import for_range_dynamic, loop_hints
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


class _Copy(NamedTuple):
    """A box of ``box`` elements from ``src_start`` of the buffer ``src(ctx)``
    returns to ``dst_start`` of the kernel's result."""
    src: Callable
    src_shape: Shape
    dst_shape: Shape
    box: tuple
    src_start: tuple
    dst_start: tuple

    @property
    def bytes(self) -> int:
        return math.prod(self.box) * self.src_shape.element_type.byte_size


def _copy_box(ctx: KernelContext, c: _Copy, part=None) -> None:
    """Copy the box of ``c``, or with ``part`` = ``(chunk, extent, task)``
    that task's chunk of its outermost row loop (of its one row when it has
    no loop)."""
    b = ctx.b
    size = c.src_shape.element_type.byte_size
    outer, run = _rows(c.box, c.src_shape, c.dst_shape)
    ss, ds = strides(c.src_shape), strides(c.dst_shape)
    src = b.gep(c.src(ctx), [i64(sum(s * t for s, t in zip(c.src_start, ss)) * size)], source_etype=I8)
    dst = b.gep(ctx.output_arrays()[0].ptr, [i64(sum(s * t for s, t in zip(c.dst_start, ds)) * size)],
                source_etype=I8)
    if part is not None and not outer:
        lo, hi = task_range(b, part[2], part[0], part[1])
        at = b.mul(lo, i64(size))
        memcpy(b, b.gep(dst, [at], source_etype=I8), b.gep(src, [at], source_etype=I8), b.mul(b.sub(hi, lo), i64(size)))
        return

    def level(k, so, do):
        if k == len(outer):
            memcpy(b, b.gep(dst, [do], source_etype=I8), b.gep(src, [so], source_etype=I8), run * size)
            return
        d, n = outer[k]
        lo, hi = (i64(0), i64(n)) if k or part is None else task_range(b, part[2], part[0], part[1])
        # Not unrolled: a row is a libc call, unrolling only makes code to compile.
        with for_range_dynamic(b, lo, hi, f"row{k}", loop_id=loop_hints(b.module, vectorize=False)) as i:
            level(k + 1, b.add(so, b.mul(i, i64(ss[d] * size))), b.add(do, b.mul(i, i64(ds[d] * size))))
    level(0, i64(0), i64(0))


def _extent(c: _Copy) -> int:
    """What tasks split of copy ``c``: its outermost row loop, or its one row's elements."""
    outer, run = _rows(c.box, c.src_shape, c.dst_shape)
    return outer[0][1] if outer else run


def _copy_boxes(ctx: KernelContext, copies: list) -> None:
    """The copies, one after the other on one thread, or, moving at least
    ``PARALLEL_MIN_WORK`` units of memory, split among tasks: each copy's
    outermost row loop (or its one row) in chunks (``task_chunks``; an 8 MB concatenation took 1.25 ms on one
    thread, jax.jit's two 0.95)."""
    copies = [c for c in copies if c.bytes]
    units = sum(c.bytes for c in copies) // WORK_UNIT_BYTES
    if units < PARALLEL_MIN_WORK:
        for c in copies:
            _copy_box(ctx, c)
        return
    extents = [_extent(c) for c in copies]
    chunks = [task_chunks(e, c.bytes // WORK_UNIT_BYTES) for c, e in zip(copies, extents)]
    parallel_parts(ctx, [count for _, count in chunks],
                   lambda tctx, p, i: _copy_box(tctx, copies[p], (chunks[p][0], extents[p], i)))


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
    _copy_boxes(ctx, [_Copy(lambda c: c.operand_array(0).ptr, inst.operands[0].shape, inst.shape, box, start,
                            (0,) * len(box))])


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
    copies, at = [], 0
    for k, o in enumerate(inst.operands):
        shape = o.shape
        start = tuple(at if d == dim else 0 for d in range(shape.rank))
        copies.append(_Copy(lambda c, k=k: c.operand_array(k).ptr, shape, inst.shape, shape.dimensions,
                            (0,) * shape.rank, start))
        at += shape.dimensions[dim]
    _copy_boxes(ctx, copies)


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
    operand, update = inst.operands[0], inst.operands[1]
    if ctx.assignment.slice_of(inst, 0) != ctx.assignment.slice_of(operand, 0):   # not in place
        _copy_boxes(ctx, [_Copy(lambda c: c.operand_array(0).ptr, operand.shape, inst.shape,
                                operand.shape.dimensions, (0,) * operand.shape.rank, (0,) * operand.shape.rank)])
    _copy_boxes(ctx, [_Copy(lambda c: c.operand_array(1).ptr, update.shape, inst.shape, update.shape.dimensions,
                            (0,) * update.shape.rank, _constant_starts(inst))])


#: The kernel candidates of this module (``kernels.register_all``).
SLICE = KernelCandidate("slice.rows", _emit_slice, _slice_applies, shareable=True)
CONCATENATE = KernelCandidate("concatenate.rows", _emit_concat, _concat_applies, shareable=True)
DYNAMIC_UPDATE_SLICE = KernelCandidate("dynamic-update-slice.rows", _emit_update, _update_applies, shareable=True)

__all__ = ["SLICE", "CONCATENATE", "DYNAMIC_UPDATE_SLICE", "MIN_ROW_BYTES"]
