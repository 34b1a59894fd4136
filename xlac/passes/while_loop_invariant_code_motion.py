"""WhileLoopInvariantCodeMotion: values a ``while`` body computes from loop
invariants alone are computed once, before the loop (XLA's pass of that name).

A tuple element of the loop state is *invariant* when the body's root passes
it through unchanged (``ROOT tuple(..., get-tuple-element(param, i), ...)``).
An instruction of the body whose operands are all invariant (such elements,
constants, other invariant instructions) and that has no side effect is
invariant too.  The invariant instructions worth computing once (not the
cheap ones, :data:`NOT_WORTH_HOISTING_ALONE`, unless a worthy one reads them)
are cloned before the ``while``, reading the initial state; the ones the rest
of the body reads become new elements at the end of the loop state (passed
through unchanged), and the body reads them there.  The loop's users see the
same elements at the same indices (a tuple of the old ones where the whole
state is read).  An RNN cell's ``x @ W`` inside a ``fori_loop`` over ``h``
then runs once rather than per step.

A body or condition called by anything else, a body whose root is not a
``tuple``, or a state read other than through ``get-tuple-element`` is left
alone.  A loop that runs no iteration computes the hoisted values anyway
(they have no side effects).
"""
from __future__ import annotations

from ..hlo.ir import HloComputation, HloInstruction, HloModule
from ..shape import Shape
from .rewriter import has_side_effect

__all__ = ["WhileLoopInvariantCodeMotion"]

#: Invariant instructions that are not hoisted on their own (cheap, or only
#: views of what they read; a broadcast would add its whole size to the loop
#: state), only as operands of hoisted ones.
NOT_WORTH_HOISTING_ALONE = frozenset({
    "constant", "parameter", "get-tuple-element", "tuple", "broadcast", "reshape", "bitcast",
    "iota", "slice", "transpose", "reverse", "copy"})
#: Never hoisted: a new value per execution, or control flow.
NEVER_HOISTED = frozenset({
    "rng", "rng-bit-generator", "rng-get-and-update-state", "while", "conditional", "call",
    "custom-call", "parameter"})


class WhileLoopInvariantCodeMotion:
    """Pass: hoist loop-invariant computations out of ``while`` bodies."""

    name = "while-loop-invariant-code-motion"

    def run(self, module: HloModule) -> bool:
        loops = [(comp, i) for comp in module.computations for i in comp.instructions if i.opcode == "while"]
        if not loops:       # (run at every round of the simplifier's fixed point)
            return False
        callers: dict[int, int] = {}
        for comp in module.computations:
            for inst in comp.instructions:
                for callee in inst.called_computations():
                    callers[id(callee)] = callers.get(id(callee), 0) + 1
        names = module.name_uniquer()
        changed = False
        for comp, loop in loops:
            if _hoist(comp, loop, callers, names):
                changed = True
        return changed


def _reads_state_by_index(comp: HloComputation) -> bool:
    """Whether the computation's one parameter (the loop state) is read only
    through ``get-tuple-element``."""
    (param,) = comp.parameters
    return comp.root is not param and all(
        u.opcode == "get-tuple-element" for u in comp.instructions if any(o is param for o in u.operands))


def _invariant(body: HloComputation, invariant_index: set) -> list:
    """The body's invariant instructions, in order."""
    (param,) = body.parameters
    out, seen, memo = [], set(), {}
    for inst in body.instructions:
        if inst.opcode == "get-tuple-element" and inst.operands[0] is param:
            ok = int(inst.attrs["index"]) in invariant_index
        elif inst.opcode in NEVER_HOISTED or inst is body.root or has_side_effect(inst, memo):
            ok = False
        else:
            ok = all(id(o) in seen for o in inst.operands)
        if ok:
            seen.add(id(inst))
            out.append(inst)
    return out


def _hoist(comp: HloComputation, loop: HloInstruction, callers: dict, names) -> bool:
    body, cond = loop.attrs["body"], loop.attrs["condition"]
    if callers.get(id(body)) != 1 or callers.get(id(cond)) != 1 or body is cond:
        return False
    root = body.root
    if root is None or root.opcode != "tuple" or len(body.parameters) != 1 or len(cond.parameters) != 1:
        return False
    if not (_reads_state_by_index(body) and _reads_state_by_index(cond)):
        return False
    (param,) = body.parameters
    invariant_index = {k for k, o in enumerate(root.operands)
                       if o.opcode == "get-tuple-element" and o.operands[0] is param and int(o.attrs["index"]) == k}
    if not invariant_index:
        return False
    invariant = _invariant(body, invariant_index)
    worthy = [i for i in invariant if i.opcode not in NOT_WORTH_HOISTING_ALONE]
    if not worthy:
        return False
    # What is hoisted: the worthy instructions and every invariant one they read.
    body.compute_users()
    hoisted: set = set()
    for inst in reversed(invariant):
        if inst.opcode not in NOT_WORTH_HOISTING_ALONE or any(id(u) in hoisted for u in inst.users):
            hoisted.add(id(inst))
    # The hoisted values the rest of the body reads: new elements of the state.
    exported = [i for i in invariant if id(i) in hoisted and i.opcode != "get-tuple-element"
                and any(id(u) not in hoisted for u in i.users)]
    if not exported:
        return False
    init = loop.operands[0]
    n = len(root.operands)
    # New instructions are appended and put in order once at the end.
    elements: dict[int, HloInstruction] = {}

    def state_element(k: int) -> HloInstruction:
        if init.opcode == "tuple":
            return init.operands[k]
        if k not in elements:
            elements[k] = comp.add_instruction(HloInstruction(
                "get-tuple-element", init.shape.tuple_shapes[k], [init], {"index": k}, names(f"{init.name}.{k}")))
        return elements[k]

    # The hoisted instructions, cloned before the loop, reading the initial state.
    clones: dict[int, HloInstruction] = {}
    for inst in invariant:
        if id(inst) not in hoisted:
            continue
        if inst.opcode == "get-tuple-element" and inst.operands[0] is param:
            clones[id(inst)] = state_element(int(inst.attrs["index"]))
            continue
        clone = HloInstruction(inst.opcode, inst.shape, [clones[id(o)] for o in inst.operands], inst.attrs,
                               names(f"{inst.name}.hoisted"))
        clone.location = inst.location
        clones[id(inst)] = comp.add_instruction(clone)
    # The state grows by the exported values.
    old_shapes = list(param.shape.tuple_shapes)
    state_shape = Shape.tuple(old_shapes + [e.shape for e in exported])
    new_init = HloInstruction("tuple", state_shape,
                              [state_element(k) for k in range(n)] + [clones[id(e)] for e in exported],
                              {}, names(f"{loop.name}.init"))
    comp.add_instruction(new_init)
    for c in (body, cond):
        c.parameters[0].shape = state_shape
    for j, e in enumerate(exported):
        gte = body.add_instruction(HloInstruction("get-tuple-element", e.shape, [param], {"index": n + j},
                                                  names(f"{e.name}.state")))
        body.replace_all_uses(e, gte)       # users are current: computed above
        root.operands.append(gte)
    root.shape = state_shape
    old_shape = loop.shape
    loop.operands = [new_init]
    loop.shape = state_shape
    # Users of the whole state get the old elements back.
    comp.compute_users()
    whole = [u for u in loop.users if u.opcode != "get-tuple-element"]
    if whole or comp.root is loop:
        parts = [comp.add_instruction(HloInstruction("get-tuple-element", s, [loop], {"index": k},
                                                     names(f"{loop.name}.{k}")))
                 for k, s in enumerate(old_shapes)]
        old_state = comp.add_instruction(HloInstruction("tuple", old_shape, parts, {}, names(f"{loop.name}.state")))
        for u in whole:
            u.replace_operand(loop, old_state)
        if comp.root is loop:
            comp.root = old_state
    body.sort_topologically()
    comp.sort_topologically()
    body.compute_users()
    comp.compute_users()
    return True
