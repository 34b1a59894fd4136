"""CallInliner: replace every ``call`` in the entry computation by the callee's body.

JAX wraps named functions (``jit(relu)``, ``argmax``...) in ``call``; inlining
them exposes their instructions to the rest of the pipeline and to buffer
assignment.  Calls inside called computations (reducers) are left alone: the
elemental emitter composes them.
"""
from __future__ import annotations

from ..hlo.ir import HloComputation, HloInstruction, HloModule, fresh_name


def clone_instruction(inst: HloInstruction, operands: list[HloInstruction], name: str) -> HloInstruction:
    return HloInstruction(inst.opcode, inst.shape, operands, dict(inst.attrs), name)


def inline_call(comp: HloComputation, call: HloInstruction, used_names: set) -> None:
    """Inline one ``call`` instruction of ``comp`` in place."""
    callee: HloComputation = call.attrs["to_apply"]
    mapping: dict[int, HloInstruction] = {}
    new_insts = []
    for inst in callee.post_order():
        if inst.opcode == "parameter":
            mapping[id(inst)] = call.operands[inst.parameter_number]
            continue
        name = fresh_name(inst.name, used_names, sep=".i")
        clone = clone_instruction(inst, [mapping[id(o)] for o in inst.operands], name)
        clone.parent = comp
        mapping[id(inst)] = clone
        new_insts.append(clone)
    result = mapping[id(callee.root)]
    position = comp.instructions.index(call)
    comp.instructions[position:position + 1] = new_insts
    for user in comp.instructions:
        if call in user.operands:
            user.replace_operand(call, result)
    if comp.root is call:
        comp.root = result


class CallInliner:
    """Pass: inline the entry computation's calls (repeatedly, for nested calls)."""

    name = "call-inliner"

    def run(self, module: HloModule) -> bool:
        comp = module.entry
        used = {i.name for c in module.computations for i in c.instructions}
        changed = False
        while True:
            calls = [i for i in comp.instructions if i.opcode == "call"]
            if not calls:
                break
            for call in calls:
                inline_call(comp, call, used)
            changed = True
        if changed:
            comp.compute_users()
            module.drop_uncalled_computations()
        return changed
