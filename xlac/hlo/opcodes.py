"""The one table of HLO opcodes.

Every opcode the text parser accepts is here, with its category and operand
count.  Other tables (shape rules, evaluator rules, elemental generators,
emitters) are keyed by the same opcode strings; an opcode that has no entry in
one of them is "not supported yet" by that stage, which raises a clear error
naming it rather than computing something wrong.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpInfo:
    opcode: str          # HLO text spelling, e.g. "shift-right-logical"
    category: str        # see CATEGORIES
    arity: int | None    # fixed number of operands, None when variadic

    @property
    def is_elementwise(self) -> bool:
        return self.category in ("unary", "binary", "compare", "ternary", "convert")


CATEGORIES = ("unary", "binary", "compare", "ternary", "convert", "leaf", "data", "reduce",
              "dot", "control", "collective", "other")

_UNARY = """abs cbrt ceil count-leading-zeros cosine erf exponential exponential-minus-one floor
imag is-finite log log-plus-one logistic negate not popcnt real round-nearest-afz
round-nearest-even rsqrt sign sine sqrt tan tanh"""
_BINARY = """add subtract multiply divide power remainder maximum minimum and or xor shift-left
shift-right-arithmetic shift-right-logical atan2 complex"""

_TABLE: dict[str, OpInfo] = {}


def _add(category: str, names: str, arity: int | None) -> None:
    for name in names.split():
        _TABLE[name] = OpInfo(name, category, arity)


_add("unary", _UNARY, 1)
_add("binary", _BINARY, 2)
_add("compare", "compare", 2)
_add("ternary", "select clamp", 3)
_add("convert", "convert bitcast-convert reduce-precision stochastic-convert", None)
_add("leaf", "parameter constant iota replica-id partition-id after-all rng-get-and-update-state", 0)
_add("data", "broadcast reshape transpose reverse copy bitcast", 1)
_add("data", "slice pad dynamic-reshape", None)
_add("data", "concatenate tuple get-tuple-element dynamic-slice dynamic-update-slice gather scatter", None)
_add("reduce", "reduce reduce-window select-and-scatter", None)
_add("dot", "dot convolution", 2)
_add("control", "call while conditional map sort fusion custom-call opt-barrier "
     "add-dependency domain", None)
_add("collective", "all-reduce all-gather all-to-all collective-permute reduce-scatter "
     "all-reduce-start all-reduce-done all-gather-start all-gather-done "
     "collective-permute-start collective-permute-done", None)
_add("other", "topk fft rng rng-bit-generator infeed outfeed send send-done recv recv-done "
     "get-dimension-size set-dimension-size cholesky triangular-solve batch-norm-training "
     "batch-norm-inference batch-norm-grad copy-start copy-done real-dynamic-slice", None)

OPCODES: dict[str, OpInfo] = dict(_TABLE)

#: Comparison directions of ``compare`` (attribute ``direction=``).
COMPARISON_DIRECTIONS = ("EQ", "NE", "GE", "GT", "LE", "LT")
#: Comparison types (attribute ``type=``); TOTALORDER orders floats as the spec says.
COMPARISON_TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")


def info(opcode: str) -> OpInfo:
    """The OpInfo of ``opcode``; ``KeyError`` naming it when unknown."""
    try:
        return OPCODES[opcode]
    except KeyError:
        raise KeyError(f"unknown HLO opcode {opcode!r}") from None


def is_elementwise(opcode: str) -> bool:
    op = OPCODES.get(opcode)
    return op is not None and op.is_elementwise
