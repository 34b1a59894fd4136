"""Structural fingerprints of HLO: what an instruction or a computation
computes, up to names.

Two instructions with the same :func:`fingerprint` have the same opcode,
shape (with layout), attributes and called computations up to the names of
those computations and their instructions; operands are counted, not named.
Two computations with the same :func:`computation_fingerprint` are the same
program: their instructions in post order, each referring to its operands by
position.  Provenance attributes (``metadata``, ``frontend_attributes``) are
left out; constants' values are in (a digest of their bytes).  Used to share
kernels (``codegen/kernel_sharing.py``) and to merge identical computations
(``passes/computation_deduplicator.py``).  With ``sizes=False`` an array
shape is only its element type and whether it is a scalar (``f32[*]``,
``f32[]``): the key of kernels emitted once for every size.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ..shape import Shape
from .ir import HloComputation, HloInstruction
from .printer import format_attr_value

__all__ = ["fingerprint", "computation_fingerprint", "digest", "literal_text", "shape_text"]

#: Attributes that say where an instruction came from, not what it computes.
_PROVENANCE = frozenset({"metadata", "frontend_attributes", "statistics_viz"})


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def literal_text(literal) -> str:
    a = np.ascontiguousarray(literal)
    return f"{a.dtype.str}{a.shape}:{hashlib.blake2b(a.tobytes(), digest_size=16).hexdigest()}"


def shape_text(shape: Shape, sizes: bool = True) -> str:
    """``shape`` as HLO text, or with ``sizes=False`` without its dimensions
    and layout: ``f32[*]`` for an array, ``f32[]`` for a scalar."""
    if sizes:
        return str(shape)
    if shape.is_tuple:
        return "(" + ", ".join(shape_text(s, False) for s in shape.tuple_shapes) + ")"
    return f"{shape.element_type.value}[{'*' if shape.rank else ''}]"


def _attr_text(inst: HloInstruction, key: str, value, memo: dict, sizes: bool) -> str:
    if isinstance(value, HloComputation):
        return computation_fingerprint(value, memo, sizes)
    if isinstance(value, tuple) and value and isinstance(value[0], HloComputation) and \
            all(isinstance(v, HloComputation) for v in value):
        return "{" + ",".join(computation_fingerprint(v, memo, sizes) for v in value) + "}"
    # The same few attribute values (parameter numbers, dimensions, the
    # scalar constants cloned into every fusion that reads them) recur
    # across a training step's ~20k fused instructions: their text is kept
    # in ``memo`` (one emission's), a literal by the identity of its array
    # (alive, in the module, while it is emitted).
    if key == "literal":
        k = ("literal", id(value))
        text = memo.get(k)
        if text is None:
            text = memo[k] = literal_text(value)
        return text
    if type(value) is int or (type(value) is tuple and all(type(v) is int for v in value)):
        k = (inst.opcode, key, value)
        text = memo.get(k)
        if text is None:
            text = memo[k] = format_attr_value(inst.opcode, key, value)
        return text
    return format_attr_value(inst.opcode, key, value)


def _instruction_text(inst: HloInstruction, operand_refs: str, memo: dict, sizes: bool = True) -> str:
    attrs = ",".join([f"{k}={_attr_text(inst, k, v, memo, sizes)}" for k, v in inst.attrs.items()
                      if k not in _PROVENANCE]) if inst.attrs else ""
    return f"{shape_text(inst.shape, sizes)} {inst.opcode}({operand_refs}){attrs}"


def computation_fingerprint(comp: HloComputation, memo: dict | None = None, sizes: bool = True) -> str:
    """A digest of ``comp`` up to the names of it and its instructions:
    operands are referred to by position in post order."""
    memo = {} if memo is None else memo
    key = id(comp) if sizes else ("sizeless", id(comp))
    got = memo.get(key)
    if got is None:
        # Every instruction of every kernel's fused computation comes through
        # here (~20k for a training step): positions are kept as text.
        position: dict[HloInstruction, str] = {}
        lines = []
        for inst in comp.post_order():
            refs = ",".join([position[o] for o in inst.operands])
            position[inst] = str(len(lines))
            lines.append(_instruction_text(inst, refs, memo, sizes))
        lines.append(f"root {position[comp.root]}")
        got = memo[key] = digest("\n".join(lines))
    return got


def fingerprint(inst: HloInstruction, memo: dict | None = None, sizes: bool = True) -> str:
    """What ``inst`` computes, up to names: its opcode, shape (without its
    sizes when ``sizes`` is False), attributes and called computations (a
    fusion's fused computation), not its operands."""
    return digest(_instruction_text(inst, str(len(inst.operands)), {} if memo is None else memo, sizes))
