"""CSE: common-subexpression elimination.

Two instructions of a computation are merged when they have the same opcode,
the same operands (the very same instructions, in order), the same shape
*including the layout*, and the same attributes (``metadata`` aside); two
constants when their literals are bitwise equal (so ``0.0`` and ``-0.0`` stay
apart).  Called computations compare by structure, so two ``reduce`` with
identical but separately named reducers (JAX emits one per reduce) merge too.

Never merged: parameters, elided constants (their value is unknown) and
anything with a side effect (``rng``, collectives, custom calls, ... see
:func:`xlac.passes.rewriter.has_side_effect`).

One walk in definition order per computation: an instruction's operands are
already canonical when it is hashed, so whole duplicated expression trees
merge in a single run.  Linear in the size of the module.
"""
from __future__ import annotations

import numpy as np

from ..hlo.ir import HloComputation, HloInstruction, HloModule, Raw
from .rewriter import has_side_effect

__all__ = ["CSE", "FusedCSE"]

_IGNORED_ATTRS = frozenset({"metadata"})


class _Keys:
    """Hashable keys of instructions and (structurally) of computations."""

    def __init__(self):
        self.comp_keys: dict[int, object] = {}
        self.side_effects: dict = {}
        # id of a literal -> (the literal, its key): fusion clones a constant
        # into every fusion that reads it, its array shared (a training step's
        # ~3k scalar constants are a few hundred arrays).  The array is held so
        # that its id is not reused while the pass runs.
        self.arrays: dict[int, tuple] = {}

    def computation(self, comp: HloComputation):
        key = self.comp_keys.get(id(comp))
        if key is None:
            self.comp_keys[id(comp)] = ("computation", id(comp))  # guards recursion
            index = {}
            body = []
            for k, inst in enumerate(comp.post_order()):
                index[id(inst)] = k
                body.append((inst.opcode, inst.shape, tuple(index[id(o)] for o in inst.operands),
                             self.attrs(inst)))
            key = ("computation", tuple(body), index[id(comp.root)])
            self.comp_keys[id(comp)] = key
        return key

    def value(self, v):
        if type(v) is tuple and all(type(e) is int for e in v):
            return v                # dimensions and the like (the most common value): a key already
        if isinstance(v, HloComputation):
            return self.computation(v)
        if isinstance(v, np.ndarray):
            got = self.arrays.get(id(v))
            if got is None:
                a = np.ascontiguousarray(v)
                got = self.arrays[id(v)] = (v, ("array", str(a.dtype), a.shape, a.tobytes()))
            return got[1]
        if isinstance(v, Raw):
            return ("raw", v.text)
        if isinstance(v, (tuple, list)):
            return tuple(self.value(e) for e in v)
        if isinstance(v, np.generic):
            return ("scalar", str(v.dtype), v.tobytes())
        try:
            hash(v)
            return v
        except TypeError:
            return ("repr", repr(v))

    def attrs(self, inst: HloInstruction) -> tuple:
        if not inst.attrs:
            return ()
        return tuple([(k, self.value(v)) for k, v in sorted(inst.attrs.items())
                      if k not in _IGNORED_ATTRS])

    def instruction(self, inst: HloInstruction):
        # Operands as themselves: instructions hash and compare by identity.
        return (inst.opcode, inst.shape, tuple(inst.operands), self.attrs(inst))


def _mergeable(inst: HloInstruction, keys: _Keys) -> bool:
    if inst.opcode == "parameter":
        return False
    if inst.opcode == "constant" and inst.attrs.get("elided"):
        return False
    return not has_side_effect(inst, keys.side_effects)


class CSE:
    """Pass: merge identical instructions in every computation."""

    name = "cse"

    def run(self, module: HloModule) -> bool:
        keys = _Keys()
        changed = False
        for comp in module.computations:
            if _run_computation(comp, keys):
                changed = True
        return changed


def _run_computation(comp: HloComputation, keys: _Keys) -> bool:
    comp.compute_users()
    seen: dict = {}
    gone: set[int] = set()
    for inst in comp.instructions:
        if not _mergeable(inst, keys):
            continue
        key = keys.instruction(inst)
        first = seen.get(key)
        if first is None:
            seen[key] = inst
            continue
        comp.replace_all_uses(inst, first)  # same shape, layout included
        gone.add(id(inst))
    if not gone:
        return False
    comp.instructions = [i for i in comp.instructions if id(i) not in gone]
    comp.compute_users()
    return True


class FusedCSE:
    """Pass: CSE inside every fusion's computation, after the fusion passes.
    Fusion clones a producer into each fusion that reads it, and merging two
    fusions (multi-output fusion) puts both clones into one: a chain of
    rounds (Threefry's, in a while body) came out of the merges with each
    value computed many times over, the copies doubling with each merge."""

    name = "fused-cse"

    def run(self, module: HloModule) -> bool:
        keys = _Keys()
        changed = False
        for inst in module.instructions():
            if inst.opcode == "fusion" and _run_computation(inst.attrs["calls"], keys):
                changed = True
        return changed
