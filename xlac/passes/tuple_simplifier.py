"""TupleSimplifier: look through tuples.

* ``get-tuple-element(tuple(a0, a1, ...), i)`` -> ``ai``;
* ``tuple(get-tuple-element(x, 0), ..., get-tuple-element(x, n-1))`` of all
  ``n`` elements of ``x``, in order -> ``x``.

Both replace a value by an existing one, so the layout rules of
:func:`xlac.passes.rewriter.may_replace` apply: at a root (the entry's result)
or under a ``tuple`` the replacement must have the very same shape, layouts
included.
"""
from __future__ import annotations

from ..hlo.ir import HloModule
from .rewriter import PatternSet, apply_patterns

__all__ = ["TupleSimplifier", "PATTERNS"]

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
