"""Rewrite patterns and the worklist walker that applies them (after xDSL's
``pattern_rewriter``), plus what several passes need to agree on: which
instructions have side effects and when one instruction may stand in for
another.

A pattern is a function ``pattern(inst, rewriter) -> bool`` registered for the
opcodes it matches (:class:`PatternSet`).  It either returns ``False`` and
leaves the IR alone, or rewrites through the :class:`PatternRewriter` and
returns ``True``::

    patterns = PatternSet()

    @patterns.register("negate")
    def negate_negate(inst, rw):
        x = inst.operands[0]
        return x.opcode == "negate" and rw.replace(inst, x.operands[0])

:func:`apply_patterns` walks every computation of a module with a worklist
seeded with the instructions in order (operands before users).  When an
instruction is replaced, its users and the replacement are queued again, so a
chain of rewrites settles in one walk; nothing recomputes users per rewrite
and every bookkeeping step is constant time, so a walk is linear in the size
of the computation plus the number of rewrites.  Replaced instructions and
the operands only they used are deleted at the end of the walk.

Layouts: an instruction's shape carries a layout.  :meth:`PatternRewriter.replace`
refuses (returns ``False``) to put a value of another layout where the layout
is observable: the root of a computation (the entry's result layout, a
while body's state), an operand of ``tuple`` (its shape records each element's
layout), ``bitcast`` or a call.  Users that read elements by logical index
(elementwise ops, data movement, reduce, dot, ...) do not care.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Iterable

import numpy as np

from ..hlo.ir import HloComputation, HloInstruction, HloModule, NameUniquer, fresh_name
from ..hlo.opcodes import OPCODES, Trait, has_trait
from ..shape import Shape

__all__ = ["PatternSet", "PatternRewriter", "apply_patterns", "has_side_effect",
           "may_replace", "uniform_value"]

def has_side_effect(inst: HloInstruction, memo: dict | None = None) -> bool:
    """True when ``inst`` or a computation it calls (transitively) has a side effect
    (its opcode's ``Trait.SIDE_EFFECT``: XLA's ``HasSideEffectNoRecurse`` plus,
    conservatively, every collective and custom call): never removed when
    unused, never merged, never folded."""
    if has_trait(inst.opcode, Trait.SIDE_EFFECT):
        return True
    callees = inst.called_computations()
    if not callees:
        return False
    memo = {} if memo is None else memo
    return any(_computation_has_side_effect(c, memo) for c in callees)


def _computation_has_side_effect(comp: HloComputation, memo: dict) -> bool:
    key = id(comp)
    if key not in memo:
        memo[key] = False  # breaks (invalid) recursion
        memo[key] = any(has_side_effect(i, memo) for i in comp.instructions)
    return memo[key]


#: Users that read their operands element by element through logical indices,
#: so the operand's layout is invisible to them.
_LAYOUT_BLIND_USERS = frozenset(
    {op for op, info in OPCODES.items() if info.is_elementwise and op != "bitcast-convert"}
    | {"broadcast", "reshape", "transpose", "slice", "pad", "concatenate", "reverse", "copy",
       "reduce", "dot", "dynamic-slice", "dynamic-update-slice", "gather", "scatter",
       "reduce-window", "convolution", "map", "sort", "iota"})


def may_replace(old: HloInstruction, new: HloInstruction, comp: HloComputation | None = None) -> bool:
    """May ``new`` take the place of ``old`` everywhere?

    The shapes must be compatible (same element type and dimensions).  When
    their layouts differ too, ``old`` must not be a root and all its users
    must be layout blind (see the module docstring).
    """
    if old is new:
        return False
    if old.shape == new.shape:
        return True
    if not old.shape.compatible(new.shape) or old.shape.is_tuple:
        return False
    comp = comp if comp is not None else old.parent
    if comp is not None and comp.root is old:
        return False
    return all(u.opcode in _LAYOUT_BLIND_USERS for u in old.users
               if any(o is old for o in u.operands))


# Ops through which a constant that holds one value everywhere still does.
_UNIFORM_PRESERVING = ("broadcast", "reshape", "transpose", "copy", "reverse", "slice")


def slice_along(rw: "PatternRewriter", x: HloInstruction, dim: int, start: int, stop: int,
                layout=None) -> HloInstruction:
    """A new ``slice`` of ``x``: elements ``[start, stop)`` of dimension ``dim``,
    all of the others (the result in ``layout``, None: the default)."""
    dims = list(x.shape.dimensions)
    spec = tuple((start, stop, 1) if d == dim else (0, n, 1) for d, n in enumerate(dims))
    dims[dim] = stop - start
    return rw.create("slice", Shape(x.shape.element_type, tuple(dims), layout), [x], {"slice": spec})


def uniform_value(inst: HloInstruction, cache: dict | None = None):
    """The one value every element of ``inst`` has, when ``inst`` is a constant
    (possibly broadcast, reshaped, transposed, ...) holding a single value; else ``None``.

    "Single" is bitwise: +0.0 and -0.0 differ, NaNs never count.  Returns a
    numpy scalar of the element type.
    """
    start = inst
    if cache is not None and id(start) in cache:
        return cache[id(start)]
    while inst.opcode in _UNIFORM_PRESERVING and inst.operands:
        inst = inst.operands[0]
    value = None
    if inst.opcode == "constant" and inst.shape.is_array and not inst.attrs.get("elided"):
        lit = np.asarray(inst.literal)
        if lit.size:
            flat = lit.reshape(-1)
            v = flat[0]
            if lit.size == 1 or _all_same_bits(flat):
                if flat.dtype.kind in "biu" or not np.isnan(v):
                    value = v
    if cache is not None:
        cache[id(start)] = value
    return value


def _all_same_bits(flat: np.ndarray) -> bool:
    if flat.dtype.kind not in "biu":  # floats (bf16 too): compare bits, so -0.0 != 0.0
        raw = np.frombuffer(np.ascontiguousarray(flat).tobytes(), dtype=np.uint8)
        raw = raw.reshape(flat.size, -1)
        return bool((raw == raw[0]).all())
    return bool((flat == flat[0]).all())


# ---------------------------------------------------------------------------
# Patterns and the walker
# ---------------------------------------------------------------------------

Pattern = Callable[[HloInstruction, "PatternRewriter"], bool]


class PatternSet:
    """Patterns keyed by the opcode they match (``"*"``: every opcode)."""

    def __init__(self):
        self.by_opcode: dict[str, list[Pattern]] = {}

    def register(self, *opcodes: str):
        def deco(fn: Pattern) -> Pattern:
            for op in opcodes:
                self.by_opcode.setdefault(op, []).append(fn)
            return fn
        return deco

    def for_opcode(self, opcode: str) -> list[Pattern]:
        return self.by_opcode.get(opcode, []) + self.by_opcode.get("*", [])

    def names(self) -> list[str]:
        seen, out = set(), []
        for fns in self.by_opcode.values():
            for fn in fns:
                if fn.__name__ not in seen:
                    seen.add(fn.__name__)
                    out.append(fn.__name__)
        return out


class PatternRewriter:
    """What a pattern may do to the computation being walked.

    ``users`` lists are kept as supersets of the true users during the walk
    (an entry may be stale after a replacement: checks look at the user's
    operands) and are recomputed exactly at the end.
    """

    def __init__(self, comp: HloComputation, names: Callable[[], NameUniquer]):
        self.comp = comp
        self._names = names
        self.worklist: deque = deque()
        # Sets of instructions (they hash by identity): asked once or twice per
        # instruction of every computation in each simplification round.
        self._queued: set[HloInstruction] = set()
        self._replaced: set[HloInstruction] = set()
        self._orphans: list[HloInstruction] = []
        # Replaced by an instruction that does what they did, side effect included.
        self._superseded: set[HloInstruction] = set()
        self._created: list[HloInstruction] = []
        self.changed = False
        self.rewrites = 0
        self.uniform_cache: dict[int, object] = {}
        self.fired: dict[str, int] = {}
        self._scalar_computations: dict = {}

    # -- for patterns -----------------------------------------------------------
    def uniform(self, inst: HloInstruction):
        """:func:`uniform_value` of ``inst``, cached for the walk."""
        return uniform_value(inst, self.uniform_cache)

    def create(self, opcode: str, shape: Shape, operands: Iterable[HloInstruction],
               attrs: dict | None = None) -> HloInstruction:
        """A new instruction in the computation (ordered before its users at the end)."""
        inst = HloInstruction(opcode, shape, operands, attrs, self._names()(opcode))
        inst.parent = self.comp
        self.comp.instructions.append(inst)
        seen = set()
        for op in inst.operands:
            if id(op) not in seen:
                seen.add(id(op))
                op.users.append(inst)
        self._created.append(inst)
        self.changed = True
        self.enqueue(inst)
        return inst

    def scalar_computation(self, opcode: str, element_type) -> HloComputation:
        """A computation ``(a, b) -> opcode(a, b)`` on scalars of ``element_type``
        (a reducer), added to the module ahead of its callers; one per opcode
        and type for the walk."""
        key = (opcode, element_type)
        comp = self._scalar_computations.get(key)
        if comp is not None:
            return comp
        module = self.comp.parent
        scalar = Shape(element_type, ())
        params = [HloInstruction("parameter", scalar, [], {"parameter_number": k}, self._names()(name))
                  for k, name in enumerate(("lhs", "rhs"))]
        root = HloInstruction(opcode, scalar, params, None, self._names()(opcode))
        comp = self.computation(f"{opcode}_{element_type.value}", params + [root], root)
        self._scalar_computations[key] = comp
        return comp

    def computation(self, name: str, instructions: list, root: HloInstruction) -> HloComputation:
        """A new computation of ``instructions`` (operands first) named after
        ``name``, added to the module ahead of its callers (a while body, a
        reducer)."""
        module = self.comp.parent
        taken = {c.name for c in module.computations} if module is not None else set()
        comp = HloComputation(fresh_name(name, taken), instructions, root=root)
        comp.compute_users()
        if module is not None:
            comp.parent = module
            module.computations.insert(0, comp)   # callees before callers
        return comp

    def instruction(self, opcode: str, shape: Shape, operands: Iterable[HloInstruction] = (),
                    attrs: dict | None = None) -> HloInstruction:
        """A new instruction for a computation :meth:`computation` makes (not in
        the one being walked), uniquely named in the module."""
        return HloInstruction(opcode, shape, list(operands), attrs, self._names()(opcode))

    def may_replace(self, old: HloInstruction, new: HloInstruction) -> bool:
        return may_replace(old, new, self.comp)

    def replace(self, old: HloInstruction, new: HloInstruction) -> bool:
        """Replace every use of ``old`` by ``new``; ``False`` (nothing done) when
        :func:`may_replace` says no."""
        if not self.may_replace(old, new):
            return False
        self.comp.replace_all_uses(old, new)
        self._replaced.add(old)
        self._orphans.append(old)
        self.changed = True
        self.enqueue(new)
        for user in new.users:
            self.enqueue(user)
        return True

    def supersede(self, old: HloInstruction, new: HloInstruction) -> bool:
        """Replace ``old`` by ``new``, which does what ``old`` did, its side
        effect included (an expansion): ``old`` is then deleted although it
        has a side effect."""
        if not self.replace(old, new):
            return False
        self._superseded.add(old)
        return True

    def replace_with_new(self, old: HloInstruction, opcode: str, operands: Iterable[HloInstruction],
                         attrs: dict | None = None, shape: Shape | None = None) -> bool:
        """Replace ``old`` by a new instruction (of ``old``'s shape unless ``shape`` is given)."""
        shape = old.shape if shape is None else shape
        if shape != old.shape and not self._may_take_shape(old, shape):
            return False
        new = self.create(opcode, shape, operands, attrs)
        return self.replace(old, new)

    def _may_take_shape(self, old: HloInstruction, shape: Shape) -> bool:
        probe = HloInstruction(old.opcode, shape)
        return may_replace(old, probe, self.comp)

    def enqueue(self, inst: HloInstruction) -> None:
        if inst not in self._queued and inst.parent is self.comp:
            self._queued.add(inst)
            self.worklist.append(inst)

    # -- the walk -----------------------------------------------------------------
    def run(self, patterns: PatternSet, max_rewrites: int | None = None) -> bool:
        comp = self.comp
        comp.compute_users()
        for inst in comp.instructions:
            self.enqueue(inst)
        budget = max_rewrites if max_rewrites is not None else 16 * len(comp.instructions) + 256
        cache: dict[str, list[Pattern]] = {}
        worklist, queued, replaced = self.worklist, self._queued, self._replaced
        while worklist and self.rewrites < budget:
            inst = worklist.popleft()
            queued.discard(inst)
            if inst in replaced:
                continue
            fns = cache.get(inst.opcode)
            if fns is None:
                fns = cache[inst.opcode] = patterns.for_opcode(inst.opcode)
            for fn in fns:
                if fn(inst, self):
                    self.rewrites += 1
                    self.fired[fn.__name__] = self.fired.get(fn.__name__, 0) + 1
                    break
        self.finish()
        return self.changed

    def finish(self) -> None:
        """Delete what the rewrites left unused; restore order and users."""
        if not self.changed:
            return
        comp = self.comp
        comp.compute_users()
        count = {id(i): len(i.users) for i in comp.instructions}
        removed: set[int] = set()
        memo: dict = {}
        stack = self._orphans + self._created
        while stack:
            x = stack.pop()
            if (id(x) in removed or x is comp.root or count.get(id(x), 1) > 0
                    or x.opcode == "parameter"
                    or (has_side_effect(x, memo) and x not in self._superseded)):
                continue
            removed.add(id(x))
            seen = set()
            for op in x.operands:
                if id(op) not in seen:
                    seen.add(id(op))
                    count[id(op)] -= 1
                    if count[id(op)] == 0:
                        stack.append(op)
        if removed:
            comp.instructions = [i for i in comp.instructions if id(i) not in removed]
        if self._created:
            comp.sort_topologically()
        comp.compute_users()


def apply_patterns(module: HloModule, patterns: PatternSet,
                   computations: Iterable[HloComputation] | None = None) -> bool:
    """Apply ``patterns`` to every computation of ``module`` until none fires.

    Returns whether anything changed.
    """
    uniquer: list[NameUniquer] = []

    def names() -> NameUniquer:  # built on first use: most walks create nothing
        if not uniquer:
            uniquer.append(module.name_uniquer())
        return uniquer[0]

    changed = False
    for comp in list(computations if computations is not None else module.computations):
        if PatternRewriter(comp, names).run(patterns):
            changed = True
    return changed
