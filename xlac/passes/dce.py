"""DCE: dead-code elimination.

In every computation, an instruction is live when it is the root, a
parameter (the signature never changes), has a side effect
(:func:`xlac.passes.rewriter.has_side_effect`), or is an operand of a live
instruction; the others are removed.  Then computations that nothing live
calls (transitively from the entry) are removed from the module.

One backwards sweep per computation: linear in the size of the module.
"""
from __future__ import annotations

from ..hlo.ir import HloComputation, HloModule
from .rewriter import has_side_effect

__all__ = ["DCE"]


class DCE:
    """Pass: remove unused side-effect-free instructions and uncalled computations."""

    name = "dce"

    def run(self, module: HloModule) -> bool:
        changed = False
        memo: dict = {}
        for comp in module.computations:
            if _sweep(comp, memo):
                changed = True
        if module.drop_uncalled_computations():
            changed = True
        return changed


def _sweep(comp: HloComputation, memo: dict) -> bool:
    live: set[int] = set()
    if comp.root is not None:
        live.add(id(comp.root))
    for inst in reversed(comp.instructions):  # users come after their operands
        if (id(inst) in live or inst.opcode == "parameter" or has_side_effect(inst, memo)):
            live.add(id(inst))
            for op in inst.operands:
                live.add(id(op))
    if len(live) >= len(comp.instructions) and all(id(i) in live for i in comp.instructions):
        return False
    comp.instructions = [i for i in comp.instructions if id(i) in live]
    comp.compute_users()
    return True
