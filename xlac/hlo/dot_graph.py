"""An HLO module as a Graphviz graph (``xlac dump --dot``; render with ``dot -Tsvg``).

One node per instruction of the entry computation (label: name, opcode and
shape), one edge per operand (labelled with the operand number when an
instruction has several); a fusion is a cluster holding its fused
computation, its parameters joined to the fusion's operands, as XLA's
``hlo_graph_dumper`` draws them.  Parameters are blue, constants grey, the
root is drawn with a double border.
"""
from __future__ import annotations

from .ir import HloComputation, HloInstruction, HloModule

__all__ = ["to_dot"]

_FILL = {"parameter": "#cfe2ff", "constant": "#e9ecef", "fusion": "#fff3cd",
         "dot": "#f8d7da", "convolution": "#f8d7da"}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Writer:
    def __init__(self):
        self.lines: list[str] = []
        self.ids: dict[int, str] = {}

    def node_id(self, inst: HloInstruction) -> str:
        return self.ids.setdefault(id(inst), f"n{len(self.ids)}")

    def computation(self, comp: HloComputation, indent: str, operands_of=None) -> None:
        for inst in comp.instructions:
            label = f"{inst.name}\n{inst.opcode}\n{inst.shape}"
            attrs = [f"label={_quote(label)}", "shape=box", "style=filled",
                     f"fillcolor={_quote(_FILL.get(inst.opcode, '#ffffff'))}"]
            if inst is comp.root:
                attrs.append("peripheries=2")
            self.lines.append(f"{indent}{self.node_id(inst)} [{', '.join(attrs)}];")
            if inst.opcode == "fusion":
                self.fusion(inst, indent)
            several = len(inst.operands) > 1
            for k, op in enumerate(inst.operands):
                label = f" [label={k}]" if several else ""
                self.lines.append(f"{indent}{self.node_id(op)} -> {self.node_id(inst)}{label};")
            if inst.opcode == "parameter" and operands_of is not None:
                outer = operands_of[inst.parameter_number]
                self.lines.append(f"{indent}{self.node_id(outer)} -> {self.node_id(inst)} [style=dashed];")

    def fusion(self, inst: HloInstruction, indent: str) -> None:
        fused = inst.attrs.get("calls")
        if not isinstance(fused, HloComputation):
            return
        self.lines.append(f"{indent}subgraph cluster_{self.node_id(inst)} {{")
        kind = inst.attrs.get("kind")
        title = fused.name + (f" ({kind})" if kind else "")
        self.lines.append(f"{indent}  label={_quote(title)}; style=dashed;")
        self.computation(fused, indent + "  ", inst.operands)
        self.lines.append(f"{indent}  {self.node_id(fused.root)} -> {self.node_id(inst)} [style=dashed];")
        self.lines.append(f"{indent}}}")


def to_dot(module: HloModule) -> str:
    """The entry computation of ``module`` (fusions expanded) as Graphviz ``dot`` text."""
    w = _Writer()
    w.lines.append(f"digraph {_quote(module.name)} {{")
    w.lines.append("  rankdir=TB; node [fontname=monospace, fontsize=10];")
    w.computation(module.entry, "  ")
    w.lines.append("}")
    return "\n".join(w.lines) + "\n"
