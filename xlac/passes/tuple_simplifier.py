"""TupleSimplifier: look through tuples.

* ``get-tuple-element(tuple(a0, a1, ...), i)`` -> ``ai``;
* ``tuple(get-tuple-element(x, 0), ..., get-tuple-element(x, n-1))`` of all
  ``n`` elements of ``x``, in order -> ``x``.

Both replace a value by an existing one, so the layout rules of
:func:`xlac.passes.rewriter.may_replace` apply: at a root (the entry's result)
or under a ``tuple`` the replacement must have the very same shape, layouts
included.

:class:`TupleConstantSplitter` (run first by every code-generation pipeline)
rewrites a tuple-shaped ``constant`` into a ``tuple`` of array constants,
nested as the shape is: buffer assignment and the emitters then only ever see
array constants (a tuple constant at the root, ``(f32[], s32[])
constant((1, 2))``, used to crash buffer assignment).
"""
from __future__ import annotations

from ..hlo.ir import HloComputation, HloInstruction, HloModule
from .rewriter import PatternSet, apply_patterns

__all__ = ["TupleSimplifier", "TupleConstantSplitter", "PATTERNS"]

PATTERNS = PatternSet()


@PATTERNS.register("get-tuple-element")
def gte_of_tuple(inst, rw):
    t = inst.operands[0]
    if t.opcode != "tuple":
        return False
    return rw.replace(inst, t.operands[int(inst.attrs["index"])])


@PATTERNS.register("tuple")
def tuple_of_all_gtes(inst, rw):
    ops = inst.operands
    if not ops or ops[0].opcode != "get-tuple-element":
        return False
    source = ops[0].operands[0]
    if not source.shape.is_tuple or len(source.shape.tuple_shapes) != len(ops):
        return False
    for k, op in enumerate(ops):
        if op.opcode != "get-tuple-element" or op.operands[0] is not source \
                or int(op.attrs["index"]) != k:
            return False
    return rw.replace(inst, source)


class TupleSimplifier:
    """Pass: apply :data:`PATTERNS` to every computation."""

    name = "tuple-simplifier"

    def run(self, module: HloModule) -> bool:
        return apply_patterns(module, PATTERNS)


class TupleConstantSplitter:
    """Pass: every tuple-shaped ``constant`` becomes a ``tuple`` of array constants
    (nested tuples as nested ``tuple`` instructions), each leaf keeping its shape
    and layout, so the tuple has the very same shape."""

    name = "split-tuple-constants"

    def run(self, module: HloModule) -> bool:
        changed = False
        names = None
        for comp in module.computations:
            consts = [i for i in comp.instructions if i.opcode == "constant" and i.shape.is_tuple]
            if not consts:
                continue
            if names is None:
                names = module.name_uniquer()
            comp.compute_users()
            for const in consts:
                _split(comp, const, names)
            comp.sort_topologically()
            comp.compute_users()
            changed = True
        return changed


def _split(comp: HloComputation, const: HloInstruction, names) -> None:
    elided = bool(const.attrs.get("elided"))
    # Walk the shape with an explicit stack (leaves before the tuples that hold
    # them): no recursion, whatever the nesting depth.
    new = []
    stack = [(const.shape, const.literal, None, None)]    # (shape, value, parent slots, slot)
    root_slot = [None]
    while stack:
        shape, value, slots, k = stack.pop()
        target = root_slot if slots is None else slots
        index = 0 if slots is None else k
        if shape.is_tuple:
            parts = [None] * len(shape.tuple_shapes)
            tup = HloInstruction("tuple", shape, [], {}, names(const.name))
            target[index] = tup
            new.append((tup, parts))
            for j, (sub, v) in enumerate(zip(shape.tuple_shapes, value)):
                stack.append((sub, v, parts, j))
        else:
            attrs = {"literal": value}
            if elided:
                attrs["elided"] = True
            leaf = HloInstruction("constant", shape, [], attrs, names(const.name))
            comp.add_instruction(leaf)
            target[index] = leaf
    for tup, parts in reversed(new):                     # inner tuples first
        tup.operands = list(parts)
        comp.add_instruction(tup)
    comp.replace_all_uses(const, root_slot[0])
    comp.remove_instruction(const)
