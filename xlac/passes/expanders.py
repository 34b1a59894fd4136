"""OpExpander: ops the code generator does not emit, rewritten into ops it does.

:data:`EXPANSIONS` holds one rewrite per opcode (a pattern, as the algebraic
simplifier's: ``fn(inst, rewriter) -> changed``); the ``op-expander`` pass
applies them to every computation, first in the code-generation pipelines,
so that what they produce is simplified and fused like any other code.  This
is XLA's family of ``OpExpanderPass`` subclasses (``BatchNormExpander``, ...)
as one table.

* ``batch-norm-inference`` (spec: BatchNormInference), as XLA's
  BatchNormExpander: ``x * scale' + shift`` with ``scale' = scale *
  rsqrt(variance + epsilon)`` and ``shift = offset - mean * scale'``, the two
  per-feature arrays broadcast along ``feature_index``: one multiply-add per
  element, fused into one loop.
* the asynchronous collective pairs (``all-reduce-start``/``-done``,
  ``all-gather-start``/``-done``, ``collective-permute-start``/``-done``):
  the synchronous collective where the ``-start`` was (XLA's
  ConvertAsyncCollectivesToSync);
* a ``fusion`` (from XLA's optimised text) holding an op xlac's fusion emitter
  does not take (a ``scatter``, a ``sort`` ...): a ``call``, inlined, re-fused;
* XLA's async wrappers ``async-start``/``-update``/``-done`` (and their short
  forms, ``custom-call-start`` ...): a ``call`` of the wrapped computation where
  the async-start was (the call inliner inlines it), as XLA's
  ConvertAsyncCollectivesToSync does for collectives;
* ``send``/``recv`` of one channel with their ``-done`` ops: one
  ``collective-permute`` of the sent data along
  ``_xla_send_recv_source_target_pairs``, returned by the ``recv-done``.
"""
from __future__ import annotations

import numpy as np

from ..hlo import collectives
from ..hlo.opcodes import Trait, has_trait
from ..hlo.ir import HloInstruction, HloModule
from ..shape import Shape
from .rewriter import PatternRewriter, PatternSet, apply_patterns

__all__ = ["OpExpander", "EXPANSIONS"]

EXPANSIONS = PatternSet()


@EXPANSIONS.register("batch-norm-inference")
def batch_norm_inference(inst: HloInstruction, rw: PatternRewriter) -> bool:
    x, scale, offset, mean, variance = inst.operands
    et = inst.shape.element_type
    feature = int(inst.attrs["feature_index"])
    per_feature = Shape(et, (x.shape.dimensions[feature],))
    epsilon = rw.create("constant", Shape(et, ()), [],
                        {"literal": np.array(float(inst.attrs["epsilon"]), dtype=et.dtype)})
    epsilons = rw.create("broadcast", per_feature, [epsilon], {"dimensions": ()})
    inv_stddev = rw.create("rsqrt", per_feature, [rw.create("add", per_feature, [variance, epsilons])])
    true_scale = rw.create("multiply", per_feature, [scale, inv_stddev])
    shift = rw.create("subtract", per_feature,
                      [offset, rw.create("multiply", per_feature, [mean, true_scale])])
    full = Shape(et, inst.shape.dimensions, layout=inst.shape.layout)
    scaled = rw.create("multiply", full,
                       [x, rw.create("broadcast", full, [true_scale], {"dimensions": (feature,)})])
    result = rw.create("add", full, [scaled, rw.create("broadcast", full, [shift], {"dimensions": (feature,)})])
    return rw.replace(inst, result)


# -- asynchronous collectives: the pair becomes the synchronous op ---------------------
# (XLA's ConvertAsyncCollectivesToSync): the exchange happens where the -start
# was; the -start's tuple keeps its shape, so the -done reads its element.

def _sync_value(inst: HloInstruction, rw: PatternRewriter, opcode: str, shape: Shape) -> HloInstruction:
    attrs = {k: v for k, v in inst.attrs.items()}
    return rw.create(opcode, shape, list(inst.operands), attrs)


@EXPANSIONS.register("all-reduce-start")
def all_reduce_start(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, _sync_value(inst, rw, "all-reduce", inst.shape))


@EXPANSIONS.register("all-gather-start", "collective-permute-start")
def async_start(inst: HloInstruction, rw: PatternRewriter) -> bool:
    shapes = inst.shape.tuple_shapes
    opcode = inst.opcode[:-len("-start")]
    value = _sync_value(inst, rw, opcode, shapes[1])
    ops = list(inst.operands)
    first = ops[0] if len(ops) == 1 else rw.create("tuple", shapes[0], ops)
    # collective-permute-start's context elements (u32[] in XLA): zeros.
    context = [rw.create("constant", s, [], {"literal": np.zeros(s.dimensions, s.element_type.dtype)})
               for s in shapes[2:]]
    return rw.supersede(inst, rw.create("tuple", inst.shape, [first, value] + context))


@EXPANSIONS.register("all-reduce-done")
def all_reduce_done(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, inst.operands[0])


@EXPANSIONS.register("all-gather-done", "collective-permute-done")
def async_done(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, rw.create("get-tuple-element", inst.shape, [inst.operands[0]], {"index": 1}))


# -- fusions read from text that xlac's fusion emitter does not take: unfused --------
# XLA's optimised dumps wrap ops such as scatter or sort in fusions of their own
# ("wrapped_scatter"); such a fusion becomes a call of its computation, which the
# call inliner inlines, and xlac's fusion pass decides afresh.

#: Opcodes a fusion's computation may hold for xlac's fusion emitter.
_EMITTED_IN_FUSIONS = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "reduce", "dot",
                                 "convolution", "copy", "bitcast"})


def _emitted_in_fusion(comp) -> bool:
    return all(i.opcode in _EMITTED_IN_FUSIONS or has_trait(i.opcode, Trait.ELEMENTWISE)
               or has_trait(i.opcode, Trait.DATA_MOVEMENT) for i in comp.instructions)


@EXPANSIONS.register("fusion")
def unfuse(inst: HloInstruction, rw: PatternRewriter) -> bool:
    comp = inst.attrs.get("calls")
    if comp is None or _emitted_in_fusion(comp):
        return False
    return rw.supersede(inst, rw.create("call", inst.shape, list(inst.operands), {"to_apply": comp}))


# -- XLA's async wrappers: the wrapped computation runs where the async-start is ------
# async-start is ((operands), result, context...): a call of its computation (which
# the call inliner then inlines), the operands, zero context; async-update passes
# it on; async-done takes the result out.

@EXPANSIONS.register("async-start")
def async_wrapper_start(inst: HloInstruction, rw: PatternRewriter) -> bool:
    shapes = inst.shape.tuple_shapes
    value = rw.create("call", shapes[1], list(inst.operands), {"to_apply": inst.attrs["calls"]})
    operands = rw.create("tuple", shapes[0], list(inst.operands))
    context = [_zero_value(rw, s) for s in shapes[2:]]
    return rw.supersede(inst, rw.create("tuple", inst.shape, [operands, value] + context))


def _zero_value(rw: PatternRewriter, shape: Shape) -> HloInstruction:
    if shape.is_tuple:
        return rw.create("tuple", shape, [_zero_value(rw, s) for s in shape.tuple_shapes])
    if shape.is_token:
        return rw.create("after-all", shape, [])
    return _zeros(rw, shape)


@EXPANSIONS.register("async-update")
def async_wrapper_update(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, inst.operands[0])


@EXPANSIONS.register("async-done")
def async_wrapper_done(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, rw.create("get-tuple-element", inst.shape, [inst.operands[0]], {"index": 1}))


# -- send/recv: the pair becomes a collective-permute where the recv completes ---------
# Every device runs the same program, so the send and the recv of one channel
# are in the same computation: the data the send sends is what the recv
# receives, along the pairs of _xla_send_recv_source_target_pairs.

def _same_channel(send: HloInstruction, opcode: str, operand: HloInstruction | None = None):
    channel = send.attrs.get("channel_id")
    for i in send.parent.instructions:
        if i.opcode == opcode and i.attrs.get("channel_id") == channel and (
                operand is None or (i.operands and i.operands[0] is operand)):
            return i
    return None


def _zeros(rw: PatternRewriter, shape: Shape) -> HloInstruction:
    zero = rw.create("constant", Shape(shape.element_type, ()), [],
                     {"literal": np.zeros((), shape.element_type.dtype)})
    return zero if not shape.dimensions else rw.create("broadcast", shape, [zero], {"dimensions": ()})


@EXPANSIONS.register("send")
def send_recv(send: HloInstruction, rw: PatternRewriter) -> bool:
    """A send and the recv of its channel (and their -done ops) become one
    collective-permute of the sent data, which the recv-done returns."""
    recv = _same_channel(send, "recv")
    if recv is None or send.attrs.get("is_host_transfer") or recv.attrs.get("is_host_transfer"):
        return False                      # refused later by name: nothing to pair it with
    recv_done, send_done = _same_channel(send, "recv-done", recv), _same_channel(send, "send-done", send)
    text = collectives.frontend_attributes(recv).get(collectives.SEND_RECV_PAIRS_ATTRIBUTE)
    if recv_done is None or send_done is None or text is None:
        return False
    module = send.parent.parent
    attrs = {"source_target_pairs": collectives.parse_pairs(text)}
    if module is None or module.replica_count == 1:
        attrs["channel_id"] = send.attrs.get("channel_id")    # the pairs are partition ids
    data = send.operands[0]
    shapes = recv_done.shape.tuple_shapes
    permute = rw.create("collective-permute", shapes[0], [data], attrs)
    token = rw.create("after-all", shapes[1], [])
    u32 = send.shape.tuple_shapes[1]
    return (rw.supersede(recv_done, rw.create("tuple", recv_done.shape, [permute, token]))
            and rw.supersede(send_done, token)
            and rw.supersede(recv, rw.create("tuple", recv.shape, [_zeros(rw, recv.shape.tuple_shapes[0]),
                                                                  _zeros(rw, u32), token]))
            and rw.supersede(send, rw.create("tuple", send.shape, [data, _zeros(rw, u32), token])))


class OpExpander:
    """Pass: apply :data:`EXPANSIONS` to every computation."""

    name = "op-expander"

    def run(self, module: HloModule) -> bool:
        return apply_patterns(module, EXPANSIONS)
