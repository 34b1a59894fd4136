"""Infeed and outfeed: code that calls ``opts->infeed`` / ``opts->outfeed``.

A transfer moves its data leaf by leaf (``xlac.hlo.feeds``): one service call
per array leaf, tuple element 0 first, with the leaf's buffer, its byte size
and the leaf's transfer descriptor (a private constant of the module).  An
infeed's leaves are read straight into its result buffers, laid out as its
data shape says.  An outfeed passes each operand leaf's buffer as it is when
its layout is the ``outfeed_shape``'s, and otherwise first copies it into
scratch in that layout.  An empty tuple transfers nothing (spec: *Infeed*).

Both kernels count as long-running: an infeed may wait for its value, so the
caller checks ``opts->cancel`` right after it (Ctrl-C).  A failing service
call is reported through ``opts->report_error`` naming the instruction, and
the kernel returns.
"""
from __future__ import annotations

from llvmlite import ir

from ...hlo import feeds
from ...shape import Shape
from ..emitter import KernelContext, TypedCallee
from ..ir_array import IrArray, i64
from ..kernel_choice import KernelCandidate
from ._util import ScratchPlan, copy_array
from .run_options import PTR, I32, I64, global_bytes, load_field, return_unless_ok, service_or_return

__all__ = ["INFEED", "OUTFEED"]

_FEED_TYPE = ir.FunctionType(I32, [PTR, PTR, I64, PTR])   # (runtime_ctx, buffer, byte_size, shape)


def _transfer(ctx: KernelContext, fn: ir.Value, k: int, buffer: IrArray, data: Shape) -> None:
    """One service call for leaf ``k`` of ``data``, held in ``buffer``."""
    inst = ctx.inst
    what = feeds.label(inst.opcode, inst.name, data)
    desc = global_bytes(ctx.me, f"{inst.opcode}.descriptor",
                        feeds.descriptor(buffer.shape, inst.name, data, k))
    nbytes = buffer.shape.byte_size()
    status = ctx.b.call(TypedCallee(fn, _FEED_TYPE),
                        [load_field(ctx, "runtime_ctx"), buffer.ptr, i64(nbytes), desc])
    return_unless_ok(ctx, status, f"{what}: the {inst.opcode} service failed on leaf {k} "
                                  f"({buffer.shape}, {nbytes} bytes)")


def _service(ctx: KernelContext) -> ir.Value:
    inst = ctx.inst
    ctx.long_running = True
    return service_or_return(ctx, inst.opcode, f"{inst.opcode} {inst.name} needs the {inst.opcode} "
                                                "service, which the caller did not provide")


def _emit_infeed(ctx: KernelContext) -> None:
    data = feeds.data_shape(ctx.inst)
    leaves = feeds.data_leaves(data)
    if not leaves:
        return
    fn = _service(ctx)
    for k in range(len(leaves)):
        sl = ctx.assignment.slice_of(ctx.inst, k)
        _transfer(ctx, fn, k, IrArray(ctx.buffer_pointer(sl), sl.shape), data)


def _relayouts(inst) -> list[int]:
    """The operand leaves an outfeed copies into its ``outfeed_shape``'s layout."""
    ops = feeds.data_leaves(inst.operands[0].shape)
    return [k for k, (have, want) in enumerate(zip(ops, feeds.data_leaves(feeds.data_shape(inst))))
            if have != want]


def _outfeed_plan(inst) -> ScratchPlan:
    plan = ScratchPlan()
    wanted = feeds.data_leaves(feeds.data_shape(inst))
    for k in _relayouts(inst):
        plan.add(f"leaf{k}", wanted[k].byte_size())
    return plan


def _outfeed_scratch(me, inst) -> int:
    plan = _outfeed_plan(inst)
    return plan.size if plan.regions else 0


def _emit_outfeed(ctx: KernelContext) -> None:
    inst = ctx.inst
    data = feeds.data_shape(inst)
    wanted = feeds.data_leaves(data)
    if not wanted:
        return
    fn = _service(ctx)
    plan = _outfeed_plan(inst)
    for k, shape in enumerate(wanted):
        src = ctx.operand_array(0, k)
        if f"leaf{k}" in plan:
            dst = IrArray(plan.pointer(ctx.b, ctx.scratch_pointer(), f"leaf{k}"), shape)
            copy_array(ctx.b, dst, src)
            src = dst
        _transfer(ctx, fn, k, src, data)


#: ``infeed``: read each data leaf from ``opts->infeed`` into the result buffers.
INFEED = KernelCandidate("infeed", _emit_infeed)
#: ``outfeed``: hand each operand leaf (in the ``outfeed_shape``'s layout) to ``opts->outfeed``.
OUTFEED = KernelCandidate("outfeed", _emit_outfeed, scratch_bytes=_outfeed_scratch)
