"""One declarative definition per HLO opcode (:class:`OpDef`).

Every opcode the text parser accepts is defined here once: its category, its
operand count, the kind of every attribute it takes (the schema the parser
reads attributes with and the printer writes them with:
``xlac.hlo.attributes``), the section of the operation semantics
(``../shared/spec/operation_semantics.en.md``) that specifies it, and its
*traits* — the properties passes and the code generator ask about (is it
elementwise, expensive, side-effecting, ...).  Every per-op list of the
compiler is derived from these traits (:func:`with_trait`), never written out
again.

The per-stage rules stay in their stage, keyed by opcode: the shape rule
(``xlac.hlo.shape_inference``), the evaluator rule (``xlac.evaluator``), the
elemental generator or kernel candidates (``xlac.codegen``), an expander pass
(``xlac.passes``), the builder function (``xlac.frontend.ops``).  A stage
with no rule for an opcode raises ``UnsupportedError`` naming it.
``docs/ops.md`` is generated from these definitions and those tables
(``python -m xlac.support``).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from .attributes import (BOOL, COMPUTATION, COMPUTATIONS, DIM_LABELS, ENUM, FLOAT, INT, INTS, PADDING,
                         RAW, REPLICA_GROUPS, SHAPE, SLICE, SOURCE_TARGET_PAIRS, WINDOW, AttrKind)

__all__ = ["OpDef", "Trait", "OPCODES", "info", "is_elementwise", "has_trait", "with_trait", "register",
           "calls_computations",
           "COMPARISON_DIRECTIONS", "COMPARISON_TYPES", "CATEGORIES", "COMMON_ATTRIBUTES"]


class Trait(enum.Enum):
    """A property of an opcode that passes or the code generator ask about."""

    ELEMENTWISE = "elementwise"        # result element i depends on operand elements i only
    DATA_MOVEMENT = "data-movement"    # an index transformation: cheap to fuse and recompute
    TRANSCENDENTAL = "transcendental"  # long inline math (exp, log, tanh, ...): also EXPENSIVE
    EXPENSIVE = "expensive"            # never duplicated into several consumers by fusion
    SIDE_EFFECT = "side-effect"        # observable beyond its result: never removed or merged
    PASS_THROUGH = "pass-through"      # its result is its operand's value, in its operand's buffer
    NO_BUFFER = "no-buffer"            # owns no buffer of its own (plumbing; PASS_THROUGH, VIEW too)
    VIEW = "view"                      # its result is its operand's buffer, read with its own shape
    UPDATES_OPERAND = "updates-operand"  # writes a copy of operand 0, in place when it may

    # Members are singletons compared by identity: hash them by identity too (in C),
    # not by name as Enum does (in Python) — fusion asks ``has_trait`` ~10^5
    # times for a training step.  Trait sets are only asked for membership.
    __hash__ = object.__hash__


CATEGORIES = ("unary", "binary", "compare", "ternary", "convert", "leaf", "data", "reduce",
              "dot", "control", "collective", "other")

#: Attributes XLA may print on any instruction: kept as text.
COMMON_ATTRIBUTES: Mapping[str, AttrKind] = MappingProxyType({
    n: RAW for n in ("metadata", "sharding", "frontend_attributes", "backend_config", "statistics",
                     "control-predecessors", "origin", "schedule", "operand_precision",
                     "precision_config", "result_accuracy")})


@dataclass(frozen=True)
class OpDef:
    """The definition of one opcode."""

    name: str                       # HLO text spelling, e.g. "shift-right-logical"
    category: str                   # one of CATEGORIES
    arity: int | None               # fixed number of operands; None: variadic
    attributes: Mapping[str, AttrKind] = field(default_factory=dict)
    traits: frozenset = frozenset()
    spec: str = ""                  # the section of the operation semantics

    @property
    def opcode(self) -> str:
        return self.name

    @property
    def is_elementwise(self) -> bool:
        return Trait.ELEMENTWISE in self.traits

    def has(self, trait: Trait) -> bool:
        return trait in self.traits

    def attribute_kind(self, name: str) -> AttrKind:
        """How attribute ``name`` is read and written: its kind in this definition,
        else a common one (metadata, sharding, ...), else the value's text (RAW)."""
        return self.attributes.get(name) or COMMON_ATTRIBUTES.get(name, RAW)


_TABLE: dict[str, OpDef] = {}


def _define(names: str, category: str, arity: int | None, spec: str = "", traits=(), **attributes) -> None:
    traits = frozenset(traits)
    if Trait.TRANSCENDENTAL in traits:
        traits |= {Trait.EXPENSIVE}
    if Trait.PASS_THROUGH in traits or Trait.VIEW in traits:
        traits |= {Trait.NO_BUFFER}
    if category in ("unary", "binary", "compare", "ternary", "convert"):
        traits |= {Trait.ELEMENTWISE}
    for name in names.split():
        _TABLE[name] = OpDef(name, category, arity, MappingProxyType(dict(attributes)), traits, spec)


E, X, T = Trait.ELEMENTWISE, Trait.EXPENSIVE, Trait.TRANSCENDENTAL
SE, DM = Trait.SIDE_EFFECT, Trait.DATA_MOVEMENT

# -- elementwise ------------------------------------------------------------------------
_UNARY = "Element-wise unary functions"
_define("abs ceil count-leading-zeros floor imag is-finite negate not popcnt real "
        "round-nearest-afz round-nearest-even sign", "unary", 1, _UNARY)
_define("rsqrt sqrt", "unary", 1, _UNARY, traits=[X])
_define("cbrt cosine erf exponential exponential-minus-one log log-plus-one logistic sine tan tanh",
        "unary", 1, _UNARY, traits=[T])
# XLA's newer opcodes for inverse and hyperbolic trigonometry (not in the spec's list).
_define("acos acosh asin asinh atan atanh cosh sinh", "unary", 1, "", traits=[T])
_BINARY = "Element-wise binary arithmetic operations"
_define("add subtract multiply maximum minimum and or xor shift-left shift-right-arithmetic "
        "shift-right-logical complex", "binary", 2, _BINARY)
_define("divide remainder", "binary", 2, _BINARY, traits=[X])
# XLA's newer opcode (not in the spec's list): the high half of an integer product.
_define("mulhi", "binary", 2, "")
_define("atan2 power", "binary", 2, _BINARY, traits=[T])
_define("compare", "compare", 2, "Element-wise comparison operations", direction=ENUM, type=ENUM)
_define("select", "ternary", 3, "Select")
_define("clamp", "ternary", 3, "Clamp")
_define("convert", "convert", 1, "ConvertElementType")
_define("bitcast-convert", "convert", 1, "BitcastConvertType")
_define("reduce-precision", "convert", 1, "ReducePrecision", exponent_bits=INT, mantissa_bits=INT)
_define("stochastic-convert", "convert", 2, "")

# -- leaves and plumbing ---------------------------------------------------------------
_define("parameter", "leaf", 0, "", traits=[Trait.NO_BUFFER], parameter_number=INT)
_define("constant", "leaf", 0, "", traits=[Trait.NO_BUFFER])
_define("iota", "leaf", 0, "Iota", traits=[DM], iota_dimension=INT)
_define("replica-id", "leaf", 0, "ReplicaId")
_define("partition-id", "leaf", 0, "")          # not in the spec: XLA's u32[] partition number
_define("after-all", "leaf", None, "AfterAll", traits=[SE, Trait.NO_BUFFER])
_define("rng-get-and-update-state", "leaf", 0, "", traits=[SE], delta=INT)
_define("tuple", "data", None, "Tuple", traits=[Trait.NO_BUFFER])
_define("get-tuple-element", "data", 1, "GetTupleElement", traits=[Trait.NO_BUFFER], index=INT)
_define("opt-barrier", "control", 1, "OptimizationBarrier", traits=[SE, Trait.PASS_THROUGH])
_define("add-dependency", "control", 2, "", traits=[SE, Trait.PASS_THROUGH])
_define("domain", "control", 1, "", traits=[SE], domain=RAW)

# -- data movement ------------------------------------------------------------------------
_define("broadcast", "data", 1, "Broadcast, BroadcastInDim", traits=[DM], dimensions=INTS)
_define("reshape", "data", 1, "Reshape, Collapse", traits=[DM], inferred_dimension=INT)
_define("transpose", "data", 1, "Transpose", traits=[DM], dimensions=INTS)
_define("reverse", "data", 1, "Rev (reverse)", traits=[DM], dimensions=INTS)
_define("copy", "data", 1, "", traits=[DM])
_define("bitcast", "data", 1, "", traits=[DM, Trait.VIEW])
_define("slice", "data", 1, "Slice", traits=[DM], slice=SLICE)
_define("pad", "data", 2, "Pad", traits=[DM], padding=PADDING)
_define("concatenate", "data", None, "Concatenate", traits=[DM], dimensions=INTS)
_define("dynamic-slice", "data", None, "DynamicSlice", traits=[DM], dynamic_slice_sizes=INTS)
_define("dynamic-update-slice", "data", None, "DynamicUpdateSlice", traits=[Trait.UPDATES_OPERAND])
# XLA's DynamicReshape (operand, then one s32[] size per result dimension; the result's
# dynamic dimensions take those sizes) and StableHLO's real_dynamic_slice (operand,
# start, limit and stride vectors), which XLA's HLO has no opcode for: xlac's own
# spelling, results bounded (``f32[<=8]``).  Sizes: xlac.hlo.dynamic.
_define("dynamic-reshape", "data", None, "")
_define("real-dynamic-slice", "data", 4, "")
_define("gather", "data", 2, "Gather", traits=[DM], offset_dims=INTS, collapsed_slice_dims=INTS,
        start_index_map=INTS, operand_batching_dims=INTS, start_indices_batching_dims=INTS,
        index_vector_dim=INT, slice_sizes=INTS, indices_are_sorted=BOOL)
_define("scatter", "data", None, "Scatter", traits=[Trait.UPDATES_OPERAND], update_window_dims=INTS,
        inserted_window_dims=INTS, scatter_dims_to_operand_dims=INTS, input_batching_dims=INTS,
        scatter_indices_batching_dims=INTS, index_vector_dim=INT, indices_are_sorted=BOOL,
        unique_indices=BOOL, to_apply=COMPUTATION)

# -- reductions, contractions, windows ---------------------------------------------------
_define("reduce", "reduce", None, "Reduce", traits=[X], dimensions=INTS, to_apply=COMPUTATION)
_define("reduce-window", "reduce", None, "ReduceWindow", traits=[X], window=WINDOW,
        to_apply=COMPUTATION)
_define("select-and-scatter", "reduce", 3, "SelectAndScatter", window=WINDOW, select=COMPUTATION,
        scatter=COMPUTATION)
_define("dot", "dot", 2, "Dot, DotGeneral", traits=[X], lhs_batch_dims=INTS, lhs_contracting_dims=INTS,
        rhs_batch_dims=INTS, rhs_contracting_dims=INTS, algorithm=ENUM)
# XLA's ScaledDot (lhs, lhs_scale, rhs, rhs_scale): a dot of block-scaled operands
# (MX formats), each scale element multiplying its block of the operand.
_define("scaled-dot", "dot", None, "", traits=[X], lhs_batch_dims=INTS, lhs_contracting_dims=INTS,
        rhs_batch_dims=INTS, rhs_contracting_dims=INTS)
# XLA's RaggedDot (lhs, rhs, group_sizes): lhs_ragged_dims splits one lhs dimension into
# consecutive groups of group_sizes; rhs_group_dims picks each group's rhs slice.
_define("ragged-dot", "dot", 3, "", traits=[X], lhs_batch_dims=INTS, lhs_contracting_dims=INTS,
        rhs_batch_dims=INTS, rhs_contracting_dims=INTS, lhs_ragged_dims=INTS, rhs_group_dims=INTS)
_define("convolution", "dot", 2, "Conv (convolution), ConvWithGeneralPadding (convolution)", traits=[X], window=WINDOW,
        dim_labels=DIM_LABELS, feature_group_count=INT, batch_group_count=INT)

# -- control flow and called computations --------------------------------------------------
_define("call", "control", None, "Call, CompositeCall", to_apply=COMPUTATION, is_composite=BOOL)
_define("while", "control", 1, "While", condition=COMPUTATION, body=COMPUTATION)
_define("conditional", "control", None, "Conditional", branch_computations=COMPUTATIONS,
        true_computation=COMPUTATION, false_computation=COMPUTATION)
_define("map", "control", None, "Map", dimensions=INTS, to_apply=COMPUTATION)
# XLA's Scan: to_apply runs along dimension ``dimensions`` of the inputs, carrying
# ``num_carries`` values (the last operands are their initial values).
_define("scan", "control", None, "", dimensions=INTS, num_carries=INT, is_reverse=BOOL, is_associative=BOOL,
        to_apply=COMPUTATION)
_define("sort", "control", None, "Sort", dimensions=INTS, is_stable=BOOL, to_apply=COMPUTATION)
_define("fusion", "control", None, "", traits=[X], kind=ENUM, calls=COMPUTATION)
_define("custom-call", "control", None, "CustomCall", traits=[SE], custom_call_target=RAW,
        api_version=ENUM, called_computations=COMPUTATIONS, custom_call_has_side_effect=BOOL)
# XLA's async wrappers: async-start runs ``calls`` (one computation) on its operands
# and is ((operands), result, context...); async-update passes that on; async-done
# is the result.  xlac runs the computation where the async-start is (op-expander).
# The short forms (custom-call-start, ...) read and print as these (hlo.parser).
_define("async-start", "control", None, "", traits=[SE], calls=COMPUTATION, async_execution_thread=RAW,
        output_to_operand_aliasing=RAW)
_define("async-update async-done", "control", 1, "", traits=[SE], calls=COMPUTATION,
        async_execution_thread=RAW)

# -- collectives -----------------------------------------------------------------------------
# Which devices take part: xlac.hlo.collectives (replica groups, group modes, pairs).
# The -start/-done pairs are XLA's asynchronous forms: all-reduce-start has the
# all-reduce's shape; all-gather-start is (operand(s), result(s));
# collective-permute-start is (operand, result, u32[], u32[]); each -done takes
# the result out.  send/recv/-done carry a u32[] context and tokens.
_COLLECTIVE = dict(channel_id=INT, replica_groups=REPLICA_GROUPS, constrain_layout=BOOL,
                   use_global_device_ids=BOOL)
_define("all-reduce all-reduce-start", "collective", None, "AllReduce, CrossReplicaSum", traits=[SE],
        to_apply=COMPUTATION, **_COLLECTIVE)
_define("all-gather all-gather-start", "collective", None, "AllGather", traits=[SE], dimensions=INTS,
        **_COLLECTIVE)
_define("all-to-all", "collective", None, "AllToAll", traits=[SE], dimensions=INTS, **_COLLECTIVE)
_define("reduce-scatter", "collective", None, "ReduceScatter", traits=[SE], dimensions=INTS,
        to_apply=COMPUTATION, **_COLLECTIVE)
_define("collective-permute collective-permute-start", "collective", None, "CollectivePermute",
        traits=[SE], channel_id=INT, source_target_pairs=SOURCE_TARGET_PAIRS, slice_sizes=RAW)
_define("all-reduce-done all-gather-done collective-permute-done", "collective", 1, "", traits=[SE])
# XLA's CollectiveBroadcast (StableHLO collective_broadcast): every device of a group
# gets the operand(s) of the group's first device.
_define("collective-broadcast", "collective", None, "", traits=[SE], channel_id=INT,
        replica_groups=REPLICA_GROUPS, constrain_layout=BOOL, has_dynamic_root=BOOL)
# XLA's newest collective (a reduction to one device of each group): parsed and
# printed; every stage refuses it by name (its semantics are not settled in XLA yet).
_define("collective-reduce", "collective", None, "", traits=[SE], to_apply=COMPUTATION, has_dynamic_root=BOOL,
        **_COLLECTIVE)
# XLA's RaggedAllToAll (input, output, input_offsets, send_sizes, output_offsets,
# recv_sizes): slices of the leading dimension sent to each device of the group.
_define("ragged-all-to-all", "collective", 6, "", traits=[SE], channel_id=INT, replica_groups=REPLICA_GROUPS,
        constrain_layout=BOOL)
_define("send", "collective", 2, "Send", traits=[SE], channel_id=INT, is_host_transfer=BOOL)
_define("recv", "collective", 1, "Recv", traits=[SE], channel_id=INT, is_host_transfer=BOOL)
_define("send-done", "collective", 1, "Send", traits=[SE], channel_id=INT, is_host_transfer=BOOL)
_define("recv-done", "collective", 1, "Recv", traits=[SE], channel_id=INT, is_host_transfer=BOOL)

# -- the rest of the operation semantics -------------------------------------------------------
_define("topk", "other", 1, "TopK", k=INT, largest=BOOL)
# XLA's newest data movement (rotate/permute modes, attributes kept as text): parsed and
# printed; every stage refuses it by name.
_define("shuffle", "data", 1, "")
_define("fft", "other", 1, "Fft", fft_type=ENUM, fft_length=INTS)
_define("rng", "other", 2, "RngUniform, RngNormal", traits=[SE], distribution=ENUM)
_define("rng-bit-generator", "other", 1, "RngBitGenerator", algorithm=ENUM)
_define("infeed", "other", 1, "Infeed", traits=[SE], infeed_config=RAW)
_define("outfeed", "other", 2, "", traits=[SE], outfeed_config=RAW, outfeed_shape=SHAPE)
_define("get-dimension-size", "other", 1, "GetDimensionSize", dimensions=INTS)
_define("set-dimension-size", "other", 2, "SetDimensionSize", dimensions=INTS)
_define("cholesky", "other", 1, "Cholesky", lower=BOOL)
_define("triangular-solve", "other", 2, "TriangularSolve", left_side=BOOL, lower=BOOL, unit_diagonal=BOOL,
        transpose_a=ENUM)
_define("batch-norm-training", "other", 3, "BatchNormTraining", epsilon=FLOAT, feature_index=INT)
_define("batch-norm-inference", "other", 5, "BatchNormInference", epsilon=FLOAT, feature_index=INT)
_define("batch-norm-grad", "other", 5, "BatchNormGrad", epsilon=FLOAT, feature_index=INT)
_define("copy-start", "other", 1, "", traits=[SE], cross_program_prefetch_index=INT)
_define("copy-done", "other", 1, "", traits=[SE])

del E, X, T, SE, DM

#: Every opcode, by name.  Tests may :func:`register` test-only opcodes.
OPCODES: dict[str, OpDef] = _TABLE

#: Comparison directions of ``compare`` (attribute ``direction=``).
COMPARISON_DIRECTIONS = ("EQ", "NE", "GE", "GT", "LE", "LT")
#: Comparison types (attribute ``type=``); TOTALORDER orders floats as the spec says.
COMPARISON_TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")


def info(opcode: str) -> OpDef:
    """The definition of ``opcode``; ``KeyError`` naming it when unknown."""
    try:
        return OPCODES[opcode]
    except KeyError:
        raise KeyError(f"unknown HLO opcode {opcode!r}") from None


def is_elementwise(opcode: str) -> bool:
    op = OPCODES.get(opcode)
    return op is not None and op.is_elementwise


def has_trait(opcode: str, trait: Trait) -> bool:
    """Whether ``opcode`` is defined and has ``trait``."""
    op = OPCODES.get(opcode)
    return op is not None and trait in op.traits


def with_trait(trait: Trait) -> frozenset:
    """The names of the opcodes that have ``trait``."""
    return frozenset(name for name, op in OPCODES.items() if trait in op.traits)


class _CallsComputations(dict):
    """opcode -> :func:`calls_computations`, worked out on first use."""

    def __missing__(self, opcode: str) -> bool:
        op = OPCODES.get(opcode)
        value = op is None or any(k is COMPUTATION or k is COMPUTATIONS for k in op.attributes.values())
        if op is not None:          # an unknown opcode may be registered later: not kept
            self[opcode] = value
        return value


_calls_computations = _CallsComputations()


def calls_computations(opcode: str) -> bool:
    """Whether instructions of ``opcode`` may call computations: its definition
    has a computation attribute (``to_apply``, ``body``, ``calls``, ...); an
    unknown opcode may.  Kept per opcode: asked of every instruction of a
    module by several passes (a training step's ~30k, fused ones included),
    and most opcodes call nothing."""
    return _calls_computations[opcode]


def register(op: OpDef) -> OpDef:
    """Add a definition (tests use a test-only opcode for "not supported yet");
    ``ValueError`` when the opcode is defined already."""
    if op.name in OPCODES:
        raise ValueError(f"opcode {op.name!r} is defined already")
    OPCODES[op.name] = op
    return op
