"""CallInliner: replace every ``call`` in the entry computation, in while loops'
bodies and conditions and in conditionals' branches (the sequential
computations, :func:`sequential_computations`) by the callee's body.

JAX wraps named functions (``jit(relu)``, ``argmax``...) in ``call``; inlining
them exposes their instructions to the rest of the pipeline and to buffer
assignment.  Calls inside computations composed elementally (reducers) are
left alone: the elemental emitter composes them.

A composite call (``call`` with ``is_composite=true``, spec: CompositeCall)
is kept, with its ``composite.*`` attributes, through every pass: its
decomposition runs through the ``call`` kernel.  Its decomposition is treated
as the entry is (:func:`sequential_computations`): its own calls are inlined
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
        value = result[id(comp.root)]
        root = _annotated_root(comp.root, value, used_names)
        if root is not None:
            root.parent = comp
            out.append(root)
        comp.root = root or value


#: The annotations of a root call that say how the program's result is laid
#: out over devices (the entry result's sharding, as jax writes it).
_RESULT_ANNOTATIONS = ("sharding", "frontend_attributes")


def _annotated_root(call: HloInstruction, value: HloInstruction, used_names: set) -> HloInstruction | None:
    """A ``copy`` of ``value`` with the root ``call``'s sharding annotations,
    when it has any and its result is an array: the inlined value may be
    another instruction's too (an argument, say), which must not take the
    result's sharding."""
    kept = {k: call.attrs[k] for k in _RESULT_ANNOTATIONS if k in call.attrs}
    if "sharding" not in kept and "xla.sdy.sharding" not in str(kept.get("frontend_attributes", "")):
        return None
    if not call.shape.is_array:
        return None
    return HloInstruction("copy", call.shape, [value], kept, fresh_name(call.name, used_names, sep=".i"))


def is_composite(inst: HloInstruction) -> bool:
    """A composite call (spec: CompositeCall)."""
    return inst.opcode == "call" and inst.attrs.get("is_composite") is True


#: Opcodes whose computations run as sequences of kernels, as the entry does
#: (XLA's sequential call contexts): a while loop's condition and body, a
#: conditional's branches, a call's callee.  The others' (a reduce's
#: ``to_apply``, a sort's comparator: embedded contexts) are composed into
#: their kernels elementally, and are left as written.
SEQUENTIAL_OPCODES = frozenset({"while", "conditional", "call"})


def sequential_computations(module: HloModule) -> list[HloComputation]:
    """The entry and the computations it runs as sequences of kernels, at any
    depth (``SEQUENTIAL_OPCODES``): the ones inlining and fusion work on.  A
    computation also called from an embedded context is left out (fused, it
    could not be composed elementally)."""
    embedded = {id(c) for c in _reachable(
        [c for inst in module.instructions() if inst.opcode not in SEQUENTIAL_OPCODES and inst.opcode != "fusion"
         for c in inst.called_computations()], lambda inst: True)}
    return [c for c in _reachable([module.entry], lambda inst: inst.opcode in SEQUENTIAL_OPCODES)
            if id(c) not in embedded]


def _reachable(start: list, follow) -> list[HloComputation]:
    """``start`` and the computations their instructions call, at any depth,
    through the instructions ``follow`` accepts; each once, in walk order."""
    out, seen, stack = [], set(), list(start)
    while stack:
        comp = stack.pop()
        if comp is None or id(comp) in seen:
            continue
        seen.add(id(comp))
        out.append(comp)
        stack += [c for inst in comp.instructions if follow(inst) for c in inst.called_computations()]
    return out


class CallInliner:
    """Pass: inline the calls of the sequential computations (the entry,
    while bodies and conditions, branches, composite decompositions;
    repeatedly, for nested calls); composite calls stay unless
    ``inline_composites``."""

    name = "call-inliner"

    def __init__(self, inline_composites: bool = False):
        self.inline_composites = inline_composites

    def run(self, module: HloModule) -> bool:
        used = {i.name for c in module.computations for i in c.instructions}
        changed = False
        done: set[int] = set()
        while True:
            pending = [c for c in sequential_computations(module) if id(c) not in done]
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
