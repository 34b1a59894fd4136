"""CallInliner: replace every ``call`` in the entry computation by the callee's body.

JAX wraps named functions (``jit(relu)``, ``argmax``...) in ``call``; inlining
them exposes their instructions to the rest of the pipeline and to buffer
assignment.  Calls inside called computations (reducers) are left alone: the
elemental emitter composes them.

A composite call (``call`` with ``is_composite=true``, spec: CompositeCall)
is kept, with its ``composite.*`` attributes, through every pass: its
decomposition runs through the ``call`` kernel.  Its decomposition is treated
as the entry is (:func:`entry_like_computations`): its own calls are inlined
and the fusion passes fuse it, so only the call boundary is left.  XLA's CPU
pipeline inlines composites (its CallInliner keeps only the names in
``composites_to_preserve``); ``CallInliner(inline_composites=True)`` does that
here.
"""
from __future__ import annotations

from ..hlo.ir import HloComputation, HloInstruction, HloModule, fresh_name


def clone_instruction(inst: HloInstruction, operands: list[HloInstruction], name: str) -> HloInstruction:
    return HloInstruction(inst.opcode, inst.shape, operands, dict(inst.attrs), name)


def inline_calls(comp: HloComputation, calls: set, used_names: set) -> None:
    """Inline the ``call`` instructions of ``comp`` whose ids are in ``calls``,
    in place, in one sweep over ``comp`` (calls in the inlined bodies stay:
    the caller sweeps again).  One sweep for all of them, not one per call:
    jax wraps every named function in a ``call``, and a per-call splice and
    user scan made inlining quadratic in the module's size."""
    result: dict[int, HloInstruction] = {}     # id(call) -> the value replacing it
    out: list[HloInstruction] = []
    for inst in comp.instructions:
        if id(inst) not in calls:
            out.append(inst)
            continue
        callee: HloComputation = inst.attrs["to_apply"]
        mapping: dict[int, HloInstruction] = {}
        for body in callee.post_order():
            if body.opcode == "parameter":
                arg = inst.operands[body.parameter_number]
                mapping[id(body)] = result.get(id(arg), arg)
                continue
            clone = clone_instruction(body, [mapping[id(o)] for o in body.operands],
                                      fresh_name(body.name, used_names, sep=".i"))
            clone.parent = comp
            mapping[id(body)] = clone
            out.append(clone)
        result[id(inst)] = mapping[id(callee.root)]
    comp.instructions = out
    for inst in out:
        if any(id(o) in result for o in inst.operands):
            inst.operands = [result.get(id(o), o) for o in inst.operands]
    if comp.root is not None and id(comp.root) in result:
        comp.root = result[id(comp.root)]


def is_composite(inst: HloInstruction) -> bool:
    """A composite call (spec: CompositeCall)."""
    return inst.opcode == "call" and inst.attrs.get("is_composite") is True


def entry_like_computations(module: HloModule) -> list[HloComputation]:
    """The entry and the decompositions of the composite calls it runs (through
    composite calls, at any depth): the computations compiled as sequences of
    kernels, which inlining and fusion work on."""
    out, seen, stack = [], set(), [module.entry]
    while stack:
        comp = stack.pop()
        if comp is None or id(comp) in seen:
            continue
        seen.add(id(comp))
        out.append(comp)
        stack.extend(i.attrs["to_apply"] for i in comp.instructions if is_composite(i))
    return out


class CallInliner:
    """Pass: inline the calls of the entry and of composite decompositions
    (repeatedly, for nested calls); composite calls stay unless
    ``inline_composites``."""

    name = "call-inliner"

    def __init__(self, inline_composites: bool = False):
        self.inline_composites = inline_composites

    def run(self, module: HloModule) -> bool:
        used = {i.name for c in module.computations for i in c.instructions}
        changed = False
        done: set[int] = set()
        while True:
            pending = [c for c in entry_like_computations(module) if id(c) not in done]
            if not pending:
                break
            for comp in pending:
                changed |= self._inline_all(comp, used)
                done.add(id(comp))
        if changed:
            module.drop_uncalled_computations()
        return changed

    def _inline_all(self, comp: HloComputation, used: set) -> bool:
        changed = False
        while True:
            calls = {id(i) for i in comp.instructions
                     if i.opcode == "call" and (self.inline_composites or not is_composite(i))}
            if not calls:
                break
            inline_calls(comp, calls, used)
            changed = True
        if changed:
            comp.compute_users()
        return changed
