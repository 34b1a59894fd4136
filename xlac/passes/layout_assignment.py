"""Layout assignment: choose the layouts of values the caller never sees.

The entry computation's parameter and result layouts are fixed (they are the
calling convention); every other array's layout is the compiler's choice, and
the code generator addresses any layout (IrArray).  Here the choice is made
where it pays:

* A ``dot`` computed by the elemental loop (integer and complex dots, and
  matrix-vector products of halves)
  reads each element of an operand once per element of the other operand's
  free dimensions.  Its inner loop walks the contracting dimensions, so those
  should be minor in memory.  A producer used only by the dot gets that layout
  for free; a parameter or constant (whose layout is fixed) is copied once
  into it when the dot re-reads it enough to repay the copy.
* f32 and f64 dots, and matrix products of bf16/f16 (widened to f32 while
  packed), are packed GEMMs (``codegen/kernels/dot.py``): packing reads any
  layout at about the same cost, so their operands keep the layouts they
  have and nothing is copied.

Copies are inserted only there; the pass never changes the entry's signature.
"""
from __future__ import annotations

import math

from ..hlo.ir import HloComputation, HloInstruction, HloModule, fresh_name
from ..shape import BF16, F16, F32, F64, S8, S32, U8, Layout

#: A dot must re-read an operand at least this many times to pay for a copy.
MIN_REUSE_FOR_COPY = 8
#: Operands smaller than this (elements) stay as they are.
MIN_ELEMENTS_FOR_COPY = 4096

#: Producers whose layout is fixed (a custom call's result is laid out as its target writes it).
_FIXED = ("parameter", "constant", "get-tuple-element", "tuple", "custom-call")


def contracting_minor_layout(rank: int, batch: tuple, contracting: tuple) -> Layout:
    """Contracting dimensions most minor (in order), then free, then batch dims."""
    free = [d for d in range(rank) if d not in batch and d not in contracting]
    major_to_minor = list(batch) + free + list(contracting)
    return Layout(tuple(reversed(major_to_minor)))


class LayoutAssignment:
    """Pass: give dot operands contracting-minor layouts (see module docstring)."""

    name = "layout-assignment"

    def run(self, module: HloModule) -> bool:
        comp = module.entry
        comp.compute_users()
        changed = False
        names = {i.name for i in comp.instructions}
        for dot in [i for i in comp.instructions if i.opcode == "dot" and not packed_gemm(i)]:
            for k, side in ((0, "lhs"), (1, "rhs")):
                changed |= self._assign_operand(comp, dot, k, side, names)
        if changed:
            comp.instructions = comp.post_order()
            comp.compute_users()
        return changed

    def _assign_operand(self, comp: HloComputation, dot: HloInstruction, k: int, side: str,
                        names: set) -> bool:
        operand = dot.operands[k]
        shape = operand.shape
        contracting = tuple(dot.attrs.get(f"{side}_contracting_dims", ()))
        batch = tuple(dot.attrs.get(f"{side}_batch_dims", ()))
        if shape.rank < 2 or not contracting or shape.layout.is_padded:
            return False
        want = contracting_minor_layout(shape.rank, batch, contracting)
        if _same_order(shape, want):
            return False
        if operand.opcode not in _FIXED and operand is not comp.root and len(operand.users) == 1:
            operand.shape = shape.with_layout(want)
            return True
        other = dot.operands[1 - k].shape
        other_side = "rhs" if side == "lhs" else "lhs"
        other_free = [d for d in range(other.rank)
                      if d not in dot.attrs.get(f"{other_side}_contracting_dims", ())
                      and d not in dot.attrs.get(f"{other_side}_batch_dims", ())]
        reuse = math.prod(other.dimensions[d] for d in other_free)
        if reuse < MIN_REUSE_FOR_COPY or shape.element_count() < MIN_ELEMENTS_FOR_COPY:
            return False
        name = fresh_name(f"{operand.name}.relayout", names)
        copy = HloInstruction("copy", shape.with_layout(want), [operand], {}, name)
        copy.parent = comp
        comp.instructions.append(copy)
        dot.operands[k] = copy
        return True


def packed_gemm(dot: HloInstruction) -> bool:
    """Whether the code generator runs ``dot`` as a packed GEMM (any operand
    layout is fine then): f32 or f64 operands and result of one type, or a
    matrix product (M and N > 1) of bf16/f16/f32 with at least one narrow, or
    of 8-bit integers to s32 (``kernels/dot_plan.supported``)."""
    if not dot.shape.is_array:
        return False
    types = [dot.shape.element_type] + [o.shape.element_type for o in dot.operands]
    if types[0] in (F32, F64) and all(t is types[0] for t in types):
        return True
    # 8-bit integer matrix products to s32: kept as dots by the op-expander
    # only for a target with a native kernel (``expanders.int8_products``).
    int8 = types[0] is S32 and all(t in (S8, U8) for t in types[1:])
    if not int8 and not all(t in (BF16, F16, F32) for t in types):
        return False
    a = dot.attrs
    m = _free_size(dot.operands[0].shape, a.get("lhs_batch_dims", ()), a.get("lhs_contracting_dims", ()))
    n = _free_size(dot.operands[1].shape, a.get("rhs_batch_dims", ()), a.get("rhs_contracting_dims", ()))
    return m > 1 and n > 1


def _free_size(shape, batch, contracting) -> int:
    return math.prod(n for d, n in enumerate(shape.dimensions) if d not in batch and d not in contracting)


def _same_order(shape, layout: Layout) -> bool:
    """Equal layouts up to size-1 dimensions (whose position in memory is moot)."""
    keep = [d for d in shape.layout.minor_to_major if shape.dimensions[d] != 1]
    want = [d for d in layout.minor_to_major if shape.dimensions[d] != 1]
    return keep == want
