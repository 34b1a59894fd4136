"""``gather`` as an elemental generator: output index -> operand index (spec: *Gather*).

For an output index ``Out``:

* the batch dimensions of ``Out`` (those not in ``offset_dims``) pick an index
  vector ``S`` out of ``start_indices`` (``index_vector_dim`` holds the vector);
* ``S[k]`` is the start along operand dimension ``start_index_map[k]``, clamped
  to ``[0, operand_dim - slice_size]`` so the whole slice is in bounds (the spec's
  clamping, as dynamic-slice does) — a read is never out of bounds;
* a slice size of 0 (XLA's shape inference allows it for collapsed and batching
  dimensions, whose output dimension is then absent) makes every slice empty:
  there is no operand element to read, and the result is zeros, what XLA's
  ``GatherExpander`` leaves in its zero-initialised accumulator (and what its
  simplifier makes of a gather from an empty operand).  The clamp would
  otherwise place the start at ``operand_dim``, one past the end;
* the offset dimensions of ``Out`` index into the slice, along the operand
  dimensions that are neither collapsed nor batching dimensions, in order;
* explicit batching dimensions (``operand_batching_dims`` paired with
  ``start_indices_batching_dims``) take the output's batch index directly.

Nothing is copied: the generator reads ``start_indices`` and then the operand
through their own generators, so a gather fuses like any elemental op.
"""
from __future__ import annotations

from llvmlite import ir

from ...hlo.ir import HloInstruction
from .. import types
from ..elemental import ElementalEmitter
from ..hoisting import mapped_index
from ..ir_array import I64, Index, i64


def _int_attr(attrs: dict, name: str, default: tuple = ()) -> tuple:
    return tuple(int(str(v)) for v in (attrs.get(name) or default))


def _to_i64(b: ir.IRBuilder, v: ir.Value, signed: bool) -> ir.Value:
    width = v.type.width
    if width == 64:
        return v
    return b.sext(v, I64) if signed else b.zext(v, I64)


def clamp_start(b: ir.IRBuilder, v: ir.Value, signed: bool, hi: int) -> ir.Value:
    """An index value (any integer type) as i64 clamped to ``[0, hi]``.

    Unsigned values are compared as unsigned, so a huge u64 clamps to ``hi``."""
    v = _to_i64(b, v, signed)
    top = i64(hi)
    if signed:
        v = b.select(b.icmp_signed("<", v, i64(0)), i64(0), v)
        return b.select(b.icmp_signed(">", v, top), top, v)
    return b.select(b.icmp_unsigned(">", v, top), top, v)


def gather_generator(em: ElementalEmitter, inst: HloInstruction, gens):
    g_operand, g_indices = gens
    a = inst.attrs
    operand = inst.operands[0].shape
    indices = inst.operands[1].shape
    offset_dims = _int_attr(a, "offset_dims")
    collapsed = set(_int_attr(a, "collapsed_slice_dims"))
    start_index_map = _int_attr(a, "start_index_map")
    operand_batching = _int_attr(a, "operand_batching_dims")
    indices_batching = _int_attr(a, "start_indices_batching_dims")
    slice_sizes = _int_attr(a, "slice_sizes")
    ivd = int(str(a["index_vector_dim"]))
    if 0 in slice_sizes:
        zero = types.constant(inst.shape.element_type, 0)
        return lambda index: zero
    signed = indices.element_type.is_signed_int
    batch_in = [d for d in range(indices.rank) if d != ivd]       # start_indices batch dims
    batch_out = [d for d in range(inst.shape.rank) if d not in offset_dims]
    remapped = [d for d in range(operand.rank) if d not in collapsed and d not in operand_batching]
    # Where each explicit batching dim of the operand finds its index among the batch dims.
    batching = [(od, batch_in.index(sd)) for od, sd in zip(operand_batching, indices_batching)]

    def start_gen(k: int, hi: int):
        # start k of the slice at an index of start_indices' batch dimensions
        # (ivd's component left out): one generator per k, which hoisting keys on
        def start(at: Index):
            multi = list(at.multi)
            if ivd < indices.rank:
                multi.insert(ivd, i64(k))
            return clamp_start(em.b, g_indices(Index(multi)), signed, hi)
        return start
    # (d, generator of its start) for the dimensions whose start is not always 0
    starts = [(d, start_gen(k, operand.dimensions[d] - slice_sizes[d]))
              for k, d in enumerate(start_index_map) if operand.dimensions[d] - slice_sizes[d] > 0]

    def gen(index: Index):
        b = em.b
        G = [index.multi[d] for d in batch_out]
        multi = [i64(0)] * operand.rank
        for od, k in batching:
            multi[od] = G[k]
        for k, d in enumerate(remapped):
            multi[d] = index.multi[offset_dims[k]]
        # The starts depend on the batch dimensions only: read once per row of
        # the slice where those are outer loops (an embedding lookup's row).
        at = mapped_index(em.ctx, index, batch_out)
        for d, start_of in starts:
            start = em.hoisting.hoisted(start_of, at)
            multi[d] = start if multi[d] is None or _is_zero(multi[d]) else b.add(multi[d], start)
        return g_operand(Index(multi))
    return gen


def _is_zero(v) -> bool:
    return isinstance(v, ir.Constant) and v.constant == 0
