"""The state of emitting one LLVM module, kept apart from the values emitted.

Generators pass :class:`~xlac.codegen.ir_array.Index` values around: the
index's ``i64`` components (and maybe its linear offset), nothing else.  What
the emitter remembers while it emits lives here instead, in one
:class:`EmissionContext` per LLVM module under construction:

* for an index produced by a loop nest (or derived from one by an index map),
  where it sits in that nest (:class:`LoopPoint`): which loop each component
  is the induction variable of, and the hoist chains open in front of those
  loops — what ``hoisting.py`` needs to emit a value once per outer iteration;
* the values already generated at an index (an instruction with several users
  in a fusion is emitted once per element);
* the access groups of the parallel loops being emitted (the buffer accesses
  emitted meanwhile join the innermost one, ``loops.parallel_loops``), and the
  module's access groups themselves.

Every lowering builds its own ``ir.Module``, and the context belongs to that
module (:func:`context_of`), so two threads lowering at once share nothing.
An index that was never placed (``Index(multi)`` built by a generator that
computes new components, or that emits in a nested block) has no point: what
it reads is never hoisted above it, which is what keeps a read in a branch
(a pad's operand) inside the branch.
"""
from __future__ import annotations

from contextlib import contextmanager

from llvmlite import ir


class LoopPoint:
    """Where an index sits in the loop nest being emitted.

    ``depths[d]``: the depth of the loop whose induction variable component
    ``d`` is (0: a constant), or None when the component was computed.
    ``stack``: the hoist chains (``loops.Chain``) of the enclosing loops, the
    outermost first; code placed in ``stack[t]`` runs once per iteration of
    the loops above depth t.  ``avail``: the chains whose code runs before
    this point, outermost first — the chains of ``stack`` and, for code
    emitted into a chain (hoisted), the chains that chain's region sits in;
    a value hoisted into any of them dominates this point and can be reused.
    Defaults to ``stack``.
    """

    __slots__ = ("depths", "stack", "avail")

    def __init__(self, depths: list, stack: list, avail: list | None = None):
        self.depths = depths
        self.stack = stack
        self.avail = list(stack) if avail is None else avail

    @property
    def hoistable(self) -> bool:
        """Every component's loop is known (none was computed in place)."""
        return None not in self.depths


class EmissionContext:
    """What the emission of one LLVM module remembers (see the module docstring)."""

    def __init__(self):
        #: Access groups of the parallel loops being emitted, innermost last.
        self.access_groups: list = []
        #: The module's one access group of parallel loops, and its group of
        #: non-temporal stores (made on first use).
        self.parallel_group = None
        self.nontemporal_group = None
        # id(index) -> [index, LoopPoint or None, values or None]; an entry
        # keeps its index alive, so the id is not reused while it is here.
        self._indices: dict[int, list] = {}

    # -- indices ----------------------------------------------------------------------
    def place(self, index, depths: list, stack: list, avail: list | None = None):
        """Record where ``index`` sits in the loop nest; returns ``index``."""
        entry = self._indices.get(id(index))
        point = LoopPoint(depths, stack, avail)
        if entry is None:
            self._indices[id(index)] = [index, point, None]
        else:
            entry[1] = point
        return index

    def point(self, index) -> LoopPoint | None:
        """Where ``index`` sits in the loop nest, or None (never placed)."""
        entry = self._indices.get(id(index))
        return entry[1] if entry is not None else None

    def values_at(self, index) -> dict:
        """The values generated at ``index`` so far, by instruction id (filled by the caller)."""
        entry = self._indices.get(id(index))
        if entry is None:
            entry = self._indices[id(index)] = [index, None, {}]
        elif entry[2] is None:
            entry[2] = {}
        return entry[2]

    @contextmanager
    def kernel(self):
        """Scope what is known about indices to one kernel's emission: its
        indices are not used after it, and a kernel emitted meanwhile (a
        called computation's) has indices of its own."""
        outer = self._indices
        self._indices = {}
        try:
            yield self
        finally:
            self._indices = outer


def context_of(module: ir.Module) -> EmissionContext:
    """The emission context of ``module`` (made on first use)."""
    ctx = module.__dict__.get("_xlac_emission")
    if ctx is None:
        ctx = module._xlac_emission = EmissionContext()
    return ctx


__all__ = ["EmissionContext", "LoopPoint", "context_of"]
