"""HloModule -> HLO text, in the short form JAX prints::

    HloModule NAME, entry_computation_layout={(f32[16,32]{1,0})->f32[16]{0}}

    region_0.1 {
      p.1 = f32[] parameter(0)
      ROOT x.2 = f32[] add(p.1, p.1)
    }

    ENTRY main.2 {
      ...
    }

The output parses back (:func:`xlac.parse_hlo`) to the same module, and printing
that again gives the same text.  Attribute values are formatted by the kinds in
:data:`xlac.hlo.parser.ATTR_KINDS`, the table the parser reads them with.
"""
from __future__ import annotations

from ..shape import Shape
from .ir import HloComputation, HloInstruction, HloModule
from .parser import format_attr_value, format_literal

__all__ = ["module_to_text", "computation_to_text", "instruction_to_text", "shape_to_text"]

#: Attributes that are printed inside the parentheses rather than after them.
_OPERAND_ATTRS = {"parameter": ("parameter_number",), "constant": ("literal", "elided")}


def module_to_text(module: HloModule) -> str:
    header = f"HloModule {module.name}"
    if module.entry is not None and module.entry.root is not None:
        # Always recomputed from the entry, so it can never disagree with it.
        params, result = module.entry_computation_layout
        header += (", entry_computation_layout={(" + _elements(params)
                   + f")->{shape_to_text(result)}}}")
    for key, value in module.attrs.items():
        if key != "entry_computation_layout":
            header += f", {key}={format_attr_value('', key, value)}"
    return "\n\n".join([header] + [computation_to_text(c) for c in module.computations]) + "\n"


def computation_to_text(comp: HloComputation) -> str:
    is_entry = comp.parent.entry is comp if comp.parent is not None else comp.is_entry
    lines = [f"{'ENTRY ' if is_entry else ''}{comp.name} {{"]
    lines += ["  " + instruction_to_text(inst, inst is comp.root) for inst in comp.instructions]
    lines.append("}")
    return "\n".join(lines)


def instruction_to_text(inst: HloInstruction, is_root: bool = False) -> str:
    if inst.opcode == "parameter":
        inside = str(inst.attrs["parameter_number"])
    elif inst.opcode == "constant":
        inside = format_literal(inst.attrs["literal"], inst.shape, bool(inst.attrs.get("elided")))
    else:
        inside = ", ".join(op.name for op in inst.operands)
    text = (f"{'ROOT ' if is_root else ''}{inst.name} = {shape_to_text(inst.shape)} "
            f"{inst.opcode}({inside})")
    skip = _OPERAND_ATTRS.get(inst.opcode, ())
    for key, value in inst.attrs.items():
        if key not in skip:
            text += f", {key}={format_attr_value(inst.opcode, key, value)}"
    return text


def shape_to_text(shape: Shape) -> str:
    """``str(shape)``, plus XLA's ``/*index=N*/`` before every fifth tuple element.

    The comments are what XLA and JAX print; keeping them makes JAX's text
    round-trip byte for byte.  (The parser skips comments.)
    """
    if shape.is_tuple:
        return "(" + _elements(shape.tuple_shapes) + ")"
    return str(shape)


def _elements(shapes) -> str:
    return ", ".join(("" if i == 0 or i % 5 else f"/*index={i}*/") + shape_to_text(s)
                     for i, s in enumerate(shapes))
