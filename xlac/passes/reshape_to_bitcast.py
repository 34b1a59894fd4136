"""Reshape to bitcast: a reshape or transpose that only relabels memory owns no buffer.

Fusion composes most reshapes and transposes into the loops that read them;
one left on its own (its users are kernels that read buffers: a dot, a sort,
a dynamic-update-slice, several fusions, the root) would be a kernel copying
its operand into a buffer of its own.  When the two layouts put the elements
in the same order in memory, the copy is the identity on bytes: the
instruction becomes a ``bitcast``, which buffer assignment makes a view of its
operand's buffer (``Trait.VIEW``), and no code runs for it.  XLA does the same
in its layout-sensitive algebraic simplifier (``ReshapeIsBitcast``,
``TransposeIsBitcast``).

Only the computations that run as sequences of kernels are rewritten (the
entry, while bodies and conditions, conditional branches): inside a fusion a
reshape costs nothing already.
"""
from __future__ import annotations

from ..hlo.ir import HloInstruction, HloModule
from ..hlo.opcodes import COMMON_ATTRIBUTES
from ..shape import Shape
from .call_inliner import sequential_computations


def _major_to_minor(shape: Shape) -> list[int]:
    """The dimensions of more than one element, most major in memory first."""
    return [d for d in reversed(shape.layout.minor_to_major) if shape.dimensions[d] != 1]


def _plain(shape: Shape) -> bool:
    return shape.is_array and not shape.is_dynamic and not shape.layout.is_padded


def reshape_is_bitcast(src: Shape, dst: Shape) -> bool:
    """Whether reshaping ``src`` to ``dst`` keeps every element at its place in
    memory: both laid out row-major once their dimensions of size one are
    dropped (a reshape numbers elements in row-major order on both sides)."""
    return (_plain(src) and _plain(dst) and src.element_type is dst.element_type
            and all(_major_to_minor(s) == sorted(_major_to_minor(s)) for s in (src, dst)))


def transpose_is_bitcast(src: Shape, dst: Shape, permutation) -> bool:
    """Whether ``transpose(src, permutation)`` laid out as ``dst`` keeps every
    element at its place in memory: result dimension ``d`` is operand
    dimension ``permutation[d]``, so the two orders of the dimensions of more
    than one element must name the same operand dimensions."""
    return (_plain(src) and _plain(dst) and src.element_type is dst.element_type
            and [permutation[d] for d in _major_to_minor(dst)] == _major_to_minor(src))


def _is_bitcast(inst: HloInstruction) -> bool:
    src = inst.operands[0].shape
    if inst.opcode == "reshape":
        return reshape_is_bitcast(src, inst.shape)
    if inst.opcode == "transpose":
        return transpose_is_bitcast(src, inst.shape, [int(d) for d in inst.attrs["dimensions"]])
    return False


class ReshapeToBitcast:
    """Pass: reshapes and transposes that keep memory as it is become bitcasts
    (see the module docstring)."""

    name = "reshape-to-bitcast"

    def run(self, module: HloModule) -> bool:
        changed = False
        for comp in sequential_computations(module):
            for inst in comp.instructions:
                if inst.opcode in ("reshape", "transpose") and _is_bitcast(inst):
                    inst.opcode = "bitcast"
                    inst.attrs = {k: v for k, v in inst.attrs.items() if k in COMMON_ATTRIBUTES}
                    changed = True
        return changed
