"""The entry's calling convention, and XLA's layout annotations on the CPU.

Two passes, first in the code-generation pipelines:

* ``entry-computation-layout``: the module header's ``entry_computation_layout``
  (kept as written, :attr:`HloModule.declared_entry_layout`) is the calling
  convention: arguments come, results go, in its layouts.  Where it differs
  from the entry's parameter layouts, a parameter takes the declared layout and
  its users get a ``copy`` in the layout the text gave it; a root of another
  layout is copied into the declared one.  This is XLA's layout assignment
  honouring ``ComputationLayout``.

* ``layout-normalization``: XLA's annotations that do not say where an element
  lies on the CPU (memory space ``S``, split configs ``SC``, tail padding
  ``L``, metadata prefix ``M``, index and pointer types, dense dimension level
  types) are dropped.  Tiles (``T``) and element sizes (``E``) do: a value
  whose layout is the compiler's choice loses them (its values do not change);
  where memory is seen (the operand and result of a ``bitcast``, which
  reinterprets it, and in objects for C (``abi=True``) the entry's parameters
  and results) a tiling that amounts to padding becomes that padding
  (``f32[5,100]{1,0:T(8,128)}`` is ``P(8,128)``), and anything else (a real
  tiling, packed sub-byte elements ``E(4)``, a sparse array) is refused with
  :class:`UnsupportedError` naming the value and its layout.  In the JIT the
  caller gives numpy arrays, so the entry's layouts are the compiler's choice.
"""
from __future__ import annotations

from ..errors import UnsupportedError
from ..hlo.ir import HloComputation, HloInstruction, HloModule
from ..shape import Layout, Shape, tiling_as_padding

__all__ = ["EntryComputationLayoutPass", "LayoutNormalization"]

#: Annotations that never change where an element is on the CPU.
_MEANINGLESS = ("tail_padding_alignment", "index_type", "pointer_type", "memory_space", "split_configs",
                "dynamic_shape_metadata_prefix_bytes")


class EntryComputationLayoutPass:
    """Pass: make the entry take and return the declared entry layout."""

    name = "entry-computation-layout"

    def run(self, module: HloModule) -> bool:
        declared = module.declared_entry_layout
        if declared is None:
            return False
        comp = module.entry
        comp.compute_users()
        changed = False
        for param, want in zip(comp.parameters, declared.parameters):
            if param.shape != want:
                users = list(param.users)
                written = param.shape
                param.shape = want
                if users or comp.root is param:
                    _redirect(comp, param, _copy_as(comp, param, written), users)
                changed = True
        if comp.root.shape != declared.result:
            comp.root = _copy_as(comp, comp.root, declared.result)
            changed = True
        if changed:
            comp.sort_topologically()
            comp.compute_users()
        return changed


def _redirect(comp: HloComputation, old: HloInstruction, new: HloInstruction, users: list) -> None:
    for user in users:
        user.replace_operand(old, new)
    if comp.root is old:
        comp.root = new


def _copy_as(comp: HloComputation, value: HloInstruction, shape: Shape) -> HloInstruction:
    """``value`` in ``shape``'s layouts: a ``copy`` per array leaf (tuples rebuilt)."""
    names = comp.parent.name_uniquer() if comp.parent is not None else None

    def add(opcode, s, operands, attrs=None):
        return comp.add_instruction(HloInstruction(opcode, s, operands, attrs or {},
                                                   names(opcode) if names else opcode))

    def convert(v: HloInstruction, s: Shape) -> HloInstruction:
        if v.shape == s or s.is_token:
            return v
        if s.is_tuple:
            return add("tuple", s, [convert(add("get-tuple-element", v.shape.tuple_shapes[k], [v], {"index": k}), e)
                                    for k, e in enumerate(s.tuple_shapes)])
        return add("copy", s, [v])

    return convert(value, shape)


class LayoutNormalization:
    """Pass: drop or lower XLA's layout annotations (see the module docstring).

    ``abi=True`` (objects for C) keeps the entry's parameter and result layouts
    as they are, refusing what cannot be addressed."""

    name = "layout-normalization"

    def __init__(self, abi: bool = False):
        self.abi = abi

    def run(self, module: HloModule) -> bool:
        fixed = self._fixed(module)
        changed = False
        for comp in module.computations:
            for inst in comp.instructions:
                shape = _normalize(inst.shape, id(inst) in fixed, f"{inst.name} ({inst.opcode})", self.abi)
                if shape != inst.shape:
                    inst.shape = shape
                    changed = True
        return changed

    def _fixed(self, module: HloModule) -> set:
        """ids of the instructions whose memory layout is seen."""
        fixed = set()
        for comp in module.computations:
            for inst in comp.instructions:
                if inst.opcode == "bitcast":
                    fixed.add(id(inst))
                    fixed.update(id(o) for o in inst.operands)
        if self.abi and module.entry is not None:
            fixed.update(id(p) for p in module.entry.parameters)
            fixed.add(id(module.entry.root))
        return fixed


def _normalize(shape: Shape, fixed: bool, where: str, abi: bool) -> Shape:
    if shape.is_tuple:
        parts = [_normalize(s, fixed, where, abi) for s in shape.tuple_shapes]
        return shape if all(a is b for a, b in zip(parts, shape.tuple_shapes)) else Shape.tuple(parts)
    if not shape.is_array or not shape.layout.annotations:
        return shape
    layout = shape.layout
    if any(t.rstrip("+~") != "D" for t in layout.dim_level_types):
        raise UnsupportedError(f"sparse layout {shape} of {where}", "xlac's arrays are dense")
    layout = layout.without(*_MEANINGLESS, "dim_level_types")
    layout = _element_size(shape, layout, fixed and abi, where)
    if layout.tiles:
        layout = _tiles(shape, layout, fixed, where)
    return Shape(shape.element_type, shape.dimensions, layout)


def _element_size(shape: Shape, layout: Layout, fixed: bool, where: str) -> Layout:
    bits = layout.element_size_in_bits
    if not bits:
        return layout
    natural = 8 * shape.element_type.byte_size
    if fixed and bits != natural:
        raise UnsupportedError(f"layout {shape} of {where}",
                               f"{bits}-bit elements packed together; xlac's buffers hold one "
                               f"{shape.element_type.value} per {natural // 8} byte(s)")
    return layout.without("element_size_in_bits")


def _tiles(shape: Shape, layout: Layout, fixed: bool, where: str) -> Layout:
    if not fixed:
        return layout.without("tiles")
    padded = tiling_as_padding(Shape(shape.element_type, shape.dimensions, layout))
    if padded is None:
        raise UnsupportedError(f"tiled layout {shape} of {where}",
                               "its tiles reorder elements; xlac addresses untiled (possibly padded) "
                               "buffers only")
    layout = layout.without("tiles")
    if padded == shape.dimensions:
        return layout
    return Layout(layout.minor_to_major, padded_dimensions=padded, padding_value=layout.padding_value)
