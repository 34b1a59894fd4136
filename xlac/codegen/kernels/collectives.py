"""Device identity and collectives: code that asks the caller's run options.

``replica-id`` and ``partition-id`` read ``opts->replica_id`` and
``opts->partition_id`` (ABI version 3; 0 when ``opts`` is NULL or older), as
u32 scalars (spec: ReplicaId).  Collectives call ``opts->collective``
(``xlac.runtime.collective_service`` in the JIT's device processes).
"""
from __future__ import annotations

import ctypes

from llvmlite import ir

from ...errors import UnsupportedError
from ...hlo.collectives import device_groups, device_pairs
from ...hlo.verifier import check_group_size
from ...runtime import abi
from ...shape import Layout, PrimitiveType as PT, Shape
from .. import types
from ..emitter import KernelContext, TypedCallee
from ..ir_array import Index, IrArray, i64, scalar_index
from ..kernel_choice import KernelCandidate
from ..loops import fill_padding, loop_nest
from ..reduction import emit_reducer
from ._util import copy_array
from .run_options import field_index as _field
from .run_options import global_string as _global_string
from .run_options import load_field, return_unless_ok, service_or_return, store_struct_field

PTR = ir.PointerType()
I64 = ir.IntType(64)
I32 = ir.IntType(32)


def _read_option(ctx: KernelContext, name: str, min_version: int) -> ir.Value:
    """``opts->name`` as an i64, or 0 when opts is NULL or older than ``min_version``."""
    b = ctx.b
    opts = ctx.opts_arg
    slot = ctx.alloca_builder.alloca(I64, name=name)
    b.store(i64(0), slot)
    has = b.icmp_unsigned("!=", opts, ir.Constant(PTR, None))
    with b.if_then(has):
        version = b.load(opts, typ=I64)
        with b.if_then(b.icmp_signed(">=", version, i64(min_version))):
            b.store(b.load(b.gep(opts, [i64(_field(name))], source_etype=I64), typ=I64), slot)
    return b.load(slot)


def _device_index(name: str, min_version: int):
    def emit(ctx: KernelContext) -> None:
        (out,) = ctx.output_arrays()
        value = ctx.b.trunc(_read_option(ctx, name, min_version), I32)
        out.write(ctx.b, scalar_index(), value)
    return emit


#: ``replica-id``: this device's replica number (ABI version 1).
REPLICA_ID = KernelCandidate("replica-id", _device_index("replica_id", 1))
#: ``partition-id``: this device's partition number (ABI version 3).
PARTITION_ID = KernelCandidate("partition-id", _device_index("partition_id", 3))


# ---------------------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------------------
#
# The service exchanges plain contiguous bytes: all-gather concatenates whole
# blocks in group order, reduce-scatter and all-to-all split the input into
# whole blocks.  So an operand is first laid out *blocked* in scratch when its
# own layout does not already make the blocks contiguous: shape [n] + block
# dimensions, the block dimension major-most (``_blocked``), filled or read by
# a loop that maps indices; a buffer whose layout already is blocked is passed
# as it is.  A group of one device (or a module on one device) needs no
# service: the exchange is a copy.

I8 = ir.IntType(8)

#: Reducer root opcodes the service applies itself (``xlac_reduction``); for
#: pred, add and multiply are or and and.
_NATIVE_REDUCTIONS = {"add": "sum", "multiply": "product", "minimum": "min", "maximum": "max",
                      "and": "and", "or": "or"}


def native_reduction(reducer, pt) -> str | None:
    """The service's name for ``reducer`` (``ROOT op(p0, p1)`` of a recognised op)
    over ``pt``, or None: then the devices' values are gathered and the reducer
    is applied here, in group order."""
    name = _NATIVE_REDUCTIONS.get(reducer.binary_root_opcode())
    if pt.float_format is not None or pt.is_sub_byte:
        return None                  # f8, f4, s4 ...: the reducer, computed as the module computes it
    if pt is PT.PRED:
        return {"sum": "or", "product": "and", "min": "and", "max": "or"}.get(name, name)
    if name in ("and", "or") and not pt.is_integral:
        return None
    if pt.is_complex and name in ("min", "max"):
        return None
    return name


def _blocked(block: Shape, n: int) -> Shape:
    """[n] + ``block``'s dimensions, the new dimension major-most, each block in
    ``block``'s layout (no padding)."""
    m2m = tuple(d + 1 for d in block.layout.minor_to_major) + (0,)
    return Shape(block.element_type, (n,) + tuple(block.dimensions), layout=Layout(minor_to_major=m2m))


def _major_dimension(shape: Shape) -> int | None:
    order = [d for d in reversed(shape.layout.minor_to_major) if shape.dimensions[d] != 1]
    return order[0] if order else None


def _is_blocked_along(shape: Shape, block: Shape, dim: int) -> bool:
    """Whether ``shape``'s bytes are already the blocks along ``dim`` of
    ``block``'s shape, in order, each in ``block``'s layout."""
    if shape.layout.is_padded or block.layout.is_padded:
        return False
    if tuple(shape.layout.minor_to_major) != tuple(block.layout.minor_to_major):
        return False
    major = _major_dimension(shape)
    return major is None or major == dim


class _Plan:
    """Scratch regions of one collective instruction (by name, bytes)."""

    def __init__(self):
        self.regions: dict[str, tuple[int, int]] = {}
        self.size = 0

    def add(self, name: str, nbytes: int) -> None:
        self.regions[name] = (self.size, nbytes)
        self.size += -(-max(nbytes, 1) // 64) * 64

    def pointer(self, ctx: KernelContext, name: str) -> ir.Value:
        offset, _ = self.regions[name]
        return ctx.b.gep(ctx.scratch_pointer(), [i64(offset)], inbounds=True, source_etype=I8)


def _leaves(shape: Shape) -> list:
    return shape.leaves() if shape.is_tuple else [shape]


def _module_devices(me) -> tuple[int, int]:
    return me.hlo.replica_count, me.hlo.num_partitions


def _groups(me, inst) -> list[list[int]]:
    replicas, partitions = _module_devices(me)
    return device_groups(inst, replicas, partitions)


def _group_size(me, inst) -> int:
    return len(_groups(me, inst)[0])


def _op_struct(ctx: KernelContext) -> ir.Value:
    """A stack ``xlac_collective_op`` (in the kernel's alloca block)."""
    size = ctypes.sizeof(abi.CollectiveOp)
    slot = ctx.alloca_builder.alloca(ir.ArrayType(I8, size), name="collective.op")
    slot.align = 8
    return slot


def _global_array(me, name: str, values: list[int]) -> ir.Value:
    """A private constant i64 array (the groups, the pairs), or a null pointer."""
    if not values:
        return ir.Constant(PTR, None)
    ty = ir.ArrayType(I64, len(values))
    g = ir.GlobalVariable(me.llvm, ty, me.unique_name(name))
    g.initializer = ir.Constant(ty, [int(v) for v in values])
    g.global_constant = True
    g.linkage = "private"
    return g


def _call_service(ctx: KernelContext, kind: str, pt, reduction: str, src: ir.Value, src_bytes: int,
                  dst: ir.Value, dst_bytes: int, groups: list, pairs: list = ()) -> None:
    """``opts->collective(opts->runtime_ctx, &op)``; a failure was recorded by
    the service (and it asked the call to stop): the kernel returns, and the
    caller's cancellation check after it ends the call."""
    b, me, inst = ctx.b, ctx.me, ctx.inst
    ctx.long_running = True
    fn = service_or_return(ctx, "collective", f"{inst.opcode} {inst.name} needs the collective service "
                                              "(a multi-device run), which the caller did not provide")
    op = _op_struct(ctx)
    flat_groups = [d for g in groups for d in g]
    fields = [
        ("kind", ir.Constant(I32, abi.COLLECTIVE_KINDS[kind])),
        ("element_type", ir.Constant(I32, abi.ELEMENT_TYPE_NUMBERS[pt])),
        ("reduction", ir.Constant(I32, abi.REDUCTIONS[reduction])),
        ("dimension", ir.Constant(I32, -1)),
        ("channel_id", i64(int(inst.attrs.get("channel_id", 0) or 0))),
        ("input", src), ("input_bytes", i64(src_bytes)),
        ("output", dst), ("output_bytes", i64(dst_bytes)),
        ("replica_groups", _global_string(me, "collective.groups_text", str(inst.attrs.get("replica_groups", "")))),
        ("source_target_pairs", _global_string(me, "collective.pairs_text", "")),
        ("instruction", _global_string(me, "collective.name", inst.name)),
        ("num_groups", ir.Constant(I32, len(groups))),
        ("group_size", ir.Constant(I32, len(groups[0]) if groups else 0)),
        ("groups", _global_array(me, "collective.groups", flat_groups)),
        ("num_pairs", i64(len(pairs))),
        ("pairs", _global_array(me, "collective.pairs", [x for p in pairs for x in p])),
    ]
    for name, value in fields:
        store_struct_field(b, op, abi.CollectiveOp, name, value)
    status = b.call(TypedCallee(fn, ir.FunctionType(I32, [PTR, PTR])), [load_field(ctx, "runtime_ctx"), op])
    return_unless_ok(ctx, status)


# -- index maps between a buffer and its blocked form --------------------------------------

def _block_of(index_multi: list, b: ir.IRBuilder, dim: int, size: int) -> tuple:
    """(block number, index within the block) of a blocked dimension ``dim`` of
    block size ``size``."""
    x = index_multi[dim]
    k = b.udiv(x, i64(size))
    inner = list(index_multi)
    inner[dim] = b.urem(x, i64(size))
    return k, inner


def _unblock(b: ir.IRBuilder, dst: IrArray, blocked: IrArray, dim: int, size: int) -> None:
    """dst[r] = blocked[r[dim] // size, r with r[dim] % size]."""
    fill_padding(b, dst)
    if dst.shape.element_count() == 0:
        return
    with loop_nest(b, dst.shape) as index:
        k, inner = _block_of(index.multi, b, dim, size)
        dst.write(b, index, blocked.read(b, Index([k] + inner)))


def _to_blocks(b: ir.IRBuilder, blocked: IrArray, src: IrArray, dim: int, size: int) -> None:
    """blocked[k, r] = src[r with r[dim] + k * size]."""
    if blocked.shape.element_count() == 0:
        return
    with loop_nest(b, blocked.shape) as index:
        k, rest = index.multi[0], list(index.multi[1:])
        rest[dim] = b.add(rest[dim], b.mul(k, i64(size)))
        blocked.write(b, index, src.read(b, Index(rest)))


def _dense(shape: Shape) -> Shape:
    """``shape`` without padding (the layout's order kept)."""
    return Shape(shape.element_type, shape.dimensions, layout=Layout(minor_to_major=shape.layout.minor_to_major))


def _require_contiguous(inst, *arrays) -> None:
    for a in arrays:
        if a.shape.layout.is_padded:
            raise UnsupportedError(inst.opcode, f"{inst.name}: a padded layout ({a.shape})")


# -- the plans (scratch) and kernels ---------------------------------------------------------

def _operand_leaves(inst) -> list[Shape]:
    return [s for o in inst.operands for s in _leaves(o.shape)]


def _dimension(inst) -> int:
    dims = inst.attrs.get("dimensions")
    if not dims or len(dims) != 1:
        raise UnsupportedError(inst.opcode, f"{inst.name}: needs one dimension, got dimensions={dims}")
    return int(dims[0])


def _plan(me, inst) -> _Plan:
    plan = _Plan()
    n = _group_size(me, inst)
    # A module that does not say its device count is verified without one;
    # compiled, it runs on its stated count, so its shapes must fit that.
    check_group_size(inst, n, f"instruction {inst.name!r} ({inst.opcode}) on "
                              f"{me.hlo.replica_count * me.hlo.num_partitions} device(s)")
    if n == 1 and inst.opcode != "collective-permute":
        return plan
    outs, ins = _leaves(inst.shape), _operand_leaves(inst)
    if inst.opcode == "all-reduce":
        for k, (src, out) in enumerate(zip(ins, outs)):
            if native_reduction(inst.attrs["to_apply"], out.element_type) is None:
                plan.add(f"gather{k}", n * _dense(src).byte_size())
    elif inst.opcode == "all-gather":
        dim = _dimension(inst)
        for k, (src, out) in enumerate(zip(ins, outs)):
            if not _is_blocked_along(out, src, dim):
                plan.add(f"gather{k}", n * _dense(src).byte_size())
    elif inst.opcode == "reduce-scatter":
        dim = _dimension(inst)
        for k, (src, out) in enumerate(zip(ins, outs)):
            if native_reduction(inst.attrs["to_apply"], out.element_type) is None:
                plan.add(f"gather{k}", n * _dense(src).byte_size())
            elif not _is_blocked_along(src, out, dim):
                plan.add(f"send{k}", _dense(src).byte_size())
    elif inst.opcode == "all-to-all":
        total = sum(_dense(s).byte_size() for s in ins)
        plan.add("send", total)
        plan.add("recv", total)
    return plan


def _scratch_bytes(me, inst) -> int:
    return _plan(me, inst).size


def _emit_collective(ctx: KernelContext) -> None:
    inst = ctx.inst
    _EMITTERS[inst.opcode](ctx, _groups(ctx.me, inst), _plan(ctx.me, inst))


def _exchanged_leaves(ctx: KernelContext, n: int):
    """(k, operand k's buffer, result leaf k) for each leaf that goes through
    the service; in a group of one device each leaf is just copied."""
    for k, out in enumerate(ctx.output_arrays()):
        src = ctx.operand_array(k)
        if n == 1:
            copy_array(ctx.b, out, src)
            continue
        _require_contiguous(ctx.inst, src, out)
        yield k, src, out


def _emit_all_reduce(ctx: KernelContext, groups: list, plan: _Plan) -> None:
    inst = ctx.inst
    n = len(groups[0])
    reducer = inst.attrs["to_apply"]
    for k, src, out in _exchanged_leaves(ctx, n):
        pt = out.shape.element_type
        red = native_reduction(reducer, pt)
        if red is not None:
            if src.shape != out.shape:
                raise UnsupportedError(inst.opcode, f"{inst.name}: operand layout {src.shape} differs from "
                                                    f"the result's {out.shape}")
            _call_service(ctx, "all-reduce", pt, red, src.ptr, src.shape.byte_size(), out.ptr,
                          out.shape.byte_size(), groups)
            continue
        # Any other reducer: gather every device's value, reduce here in group order.
        blocked = IrArray(plan.pointer(ctx, f"gather{k}"), _blocked(src.shape, n))
        _call_service(ctx, "all-gather", pt, "none", src.ptr, src.shape.byte_size(), blocked.ptr,
                      blocked.shape.byte_size(), groups)
        _reduce_blocks(ctx, out, blocked, n, reducer)


def _reduce_blocks(ctx: KernelContext, out: IrArray, blocked: IrArray, n: int, reducer, pick=None) -> None:
    """out[r] = reducer(...reducer(blocked[0, r'], blocked[1, r'])..., blocked[n-1, r']),
    r' = ``pick(r)`` (default r)."""
    b = ctx.b
    fill_padding(b, out)
    if out.shape.element_count() == 0:
        return
    with loop_nest(b, out.shape) as index:
        inner = pick(index.multi) if pick is not None else list(index.multi)
        acc = blocked.read(b, Index([i64(0)] + inner))
        for j in range(1, n):
            (acc,) = emit_reducer(ctx.em, reducer, [acc], [blocked.read(b, Index([i64(j)] + inner))])
        out.write(b, index, acc)


def _emit_all_gather(ctx: KernelContext, groups: list, plan: _Plan) -> None:
    b, inst = ctx.b, ctx.inst
    n = len(groups[0])
    dim = _dimension(inst)
    for k, src, out in _exchanged_leaves(ctx, n):
        pt = out.shape.element_type
        if f"gather{k}" not in plan.regions:
            _call_service(ctx, "all-gather", pt, "none", src.ptr, src.shape.byte_size(), out.ptr,
                          out.shape.byte_size(), groups)
            continue
        blocked = IrArray(plan.pointer(ctx, f"gather{k}"), _blocked(src.shape, n))
        _call_service(ctx, "all-gather", pt, "none", src.ptr, src.shape.byte_size(), blocked.ptr,
                      blocked.shape.byte_size(), groups)
        _unblock(b, out, blocked, dim, src.shape.dimensions[dim])


def _emit_reduce_scatter(ctx: KernelContext, groups: list, plan: _Plan) -> None:
    b, inst = ctx.b, ctx.inst
    n = len(groups[0])
    dim = _dimension(inst)
    reducer = inst.attrs["to_apply"]
    for k, src, out in _exchanged_leaves(ctx, n):
        pt = out.shape.element_type
        size = out.shape.dimensions[dim]
        if f"gather{k}" in plan.regions:
            # Any other reducer: gather everything, reduce this device's block here.
            blocked = IrArray(plan.pointer(ctx, f"gather{k}"), _blocked(src.shape, n))
            _call_service(ctx, "all-gather", pt, "none", src.ptr, src.shape.byte_size(), blocked.ptr,
                          blocked.shape.byte_size(), groups)
            offset = b.mul(_position_in_group(ctx, groups), i64(size))

            def pick(multi, offset=offset):
                inner = list(multi)
                inner[dim] = b.add(inner[dim], offset)
                return inner
            _reduce_blocks(ctx, out, blocked, n, reducer, pick)
            continue
        red = native_reduction(reducer, pt)
        send = src
        if f"send{k}" in plan.regions:
            send = IrArray(plan.pointer(ctx, f"send{k}"), _blocked(out.shape, n))
            _to_blocks(b, send, src, dim, size)
        _call_service(ctx, "reduce-scatter", pt, red, send.ptr, send.shape.byte_size(), out.ptr,
                      out.shape.byte_size(), groups)


def _emit_all_to_all(ctx: KernelContext, groups: list, plan: _Plan) -> None:
    b, inst = ctx.b, ctx.inst
    n = len(groups[0])
    outs = ctx.output_arrays()
    if len(inst.operands) > 1:
        # Tuple form: operand k goes to member k; result k comes from member k.
        srcs = [ctx.operand_array(k) for k in range(len(inst.operands))]
        if n == 1:
            for out, src in zip(outs, srcs):
                copy_array(b, out, src)
            return
        block = _dense(srcs[0].shape)
        send = IrArray(plan.pointer(ctx, "send"), _blocked(block, n))
        recv = IrArray(plan.pointer(ctx, "recv"), _blocked(block, n))
        for k, src in enumerate(srcs):
            _pack(b, send, k, src)
        _call_service(ctx, "all-to-all", block.element_type, "none", send.ptr, send.shape.byte_size(),
                      recv.ptr, recv.shape.byte_size(), groups)
        for k, out in enumerate(outs):
            _unpack(b, out, recv, k)
        return
    (out,) = outs
    src = ctx.operand_array(0)
    split_dim, concat_dim = _all_to_all_dimensions(inst)
    if n == 1:
        copy_array(b, out, src)
        return
    sizes = list(src.shape.dimensions)
    sizes[split_dim] //= n
    block = Shape(src.shape.element_type, tuple(sizes), layout=Layout(minor_to_major=src.shape.layout.minor_to_major))
    send = IrArray(plan.pointer(ctx, "send"), _blocked(block, n))
    recv = IrArray(plan.pointer(ctx, "recv"), _blocked(block, n))
    _to_blocks(b, send, src, split_dim, sizes[split_dim])
    _call_service(ctx, "all-to-all", block.element_type, "none", send.ptr, send.shape.byte_size(),
                  recv.ptr, recv.shape.byte_size(), groups)
    _unblock(b, out, recv, concat_dim, sizes[concat_dim])


def _all_to_all_dimensions(inst) -> tuple[int, int]:
    if "split_dimension" in inst.attrs:
        return int(inst.attrs["split_dimension"]), int(inst.attrs["concat_dimension"])
    d = _dimension(inst)
    return d, d


def _pack(b: ir.IRBuilder, blocked: IrArray, k: int, src: IrArray) -> None:
    """Block ``k`` of ``blocked`` = ``src``."""
    if src.shape.element_count() == 0:
        return
    with loop_nest(b, src.shape) as index:
        blocked.write(b, Index([i64(k)] + list(index.multi)), src.read(b, index))


def _unpack(b: ir.IRBuilder, dst: IrArray, blocked: IrArray, k: int) -> None:
    """``dst`` = block ``k`` of ``blocked``."""
    fill_padding(b, dst)
    if dst.shape.element_count() == 0:
        return
    with loop_nest(b, dst.shape) as index:
        dst.write(b, index, blocked.read(b, Index([i64(k)] + list(index.multi))))


def _emit_collective_permute(ctx: KernelContext, groups: list, plan: _Plan) -> None:
    b, inst = ctx.b, ctx.inst
    (out,) = ctx.output_arrays()
    src = ctx.operand_array(0)
    replicas, partitions = _module_devices(ctx.me)
    pairs = device_pairs(inst, replicas, partitions)
    if replicas * partitions == 1:
        if (0, 0) in pairs:
            copy_array(b, out, src)
        else:
            _zero(b, out)
        return
    _require_contiguous(inst, src, out)
    if src.shape != out.shape:
        raise UnsupportedError(inst.opcode, f"{inst.name}: operand layout {src.shape} differs from the result's")
    _call_service(ctx, "collective-permute", out.shape.element_type, "none", src.ptr, src.shape.byte_size(),
                  out.ptr, out.shape.byte_size(), [list(range(replicas * partitions))], pairs)


def _zero(b: ir.IRBuilder, out: IrArray) -> None:
    fill_padding(b, out)
    if out.shape.element_count():
        with loop_nest(b, out.shape) as index:
            out.write(b, index, types.constant(out.shape.element_type, 0))


def _position_in_group(ctx: KernelContext, groups: list) -> ir.Value:
    """This device's position in its group (an i64), from the run options."""
    b = ctx.b
    replicas, partitions = _module_devices(ctx.me)
    device = b.add(b.mul(_read_option(ctx, "replica_id", 1), i64(partitions)),
                   _read_option(ctx, "partition_id", 3))
    table = [0] * (replicas * partitions)
    for g in groups:
        for pos, d in enumerate(g):
            table[d] = pos
    g = _global_array(ctx.me, "collective.positions", table)
    return b.load(b.gep(g, [i64(0), device], inbounds=True, source_etype=g.value_type), typ=I64)


_EMITTERS = {
    "all-reduce": _emit_all_reduce,
    "all-gather": _emit_all_gather,
    "reduce-scatter": _emit_reduce_scatter,
    "all-to-all": _emit_all_to_all,
    "collective-permute": _emit_collective_permute,
}

#: One kernel per collective opcode (the exchange goes through ``opts->collective``).
COLLECTIVES = KernelCandidate("collective", _emit_collective, scratch_bytes=_scratch_bytes)
