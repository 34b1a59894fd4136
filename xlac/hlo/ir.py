"""The HLO IR: HloModule, HloComputation, HloInstruction.

An instruction has an ``opcode`` (HLO text spelling, see ``opcodes.py``), a
result ``shape``, ``operands`` (instructions of the same computation), and
``attrs``: the HLO attributes by their text names, as typed Python values:

================================  ===============================================
attribute                         value
================================  ===============================================
``dimensions``, ``*_dims``,        tuple of ints
``slice_sizes``, ...
``index``, ``iota_dimension``,     int
``parameter_number``
``direction``, ``type``, ...       str (enum word, e.g. ``"GT"``)
``slice``                          tuple of ``(start, limit, stride)``
``padding`` (of ``pad``)           tuple of ``(low, high, interior)``
``to_apply``, ``calls``,           HloComputation
``condition``, ``body``, ...
``branch_computations``            tuple of HloComputation
``literal`` (of ``constant``)      numpy array of the result shape
``replica_groups``                 :class:`xlac.hlo.collectives.ReplicaGroups`
``source_target_pairs``            tuple of ``(source, target)``
anything else                      :class:`Raw` (the text, printed back verbatim)
================================  ===============================================

``metadata`` and other bookkeeping attributes are kept as :class:`Raw` and are
optional.  An instruction read from text has its ``location``, ``(line,
column)`` of its first character there (1-based; None for one made otherwise),
so the verifier's errors can say where it is.  The IR is mutable: passes rewrite it in place.  A module's
``replica_count`` and ``num_partitions`` (header attributes, ints; 1 when
absent) say how many devices it runs on.

Walks over operands and over the call graph here are iterative (any depth).
Computations may nest at most :data:`MAX_CALL_DEPTH` deep and never call
themselves: :func:`find_call_graph_problem` checks it for the parser and the
verifier, because the evaluator and the code generator recurse into callees.
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import itertools
import threading
from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np

from ..shape import PRED, Shape
from .attributes import Raw  # noqa: F401  (the IR's attribute values; defined with the kinds)
from .collectives import check_device_counts, device_counts
from .opcodes import calls_computations
from .printer import module_to_text


_gc_lock = threading.Lock()
_gc_pauses = 0          # how many gc_paused() blocks are open (all threads)
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused():
    """Python's cyclic garbage collector off inside the block (re-entrant and
    thread-safe: back on when the last open block closes, if it was on).

    Parsing and lowering allocate an object graph that all stays alive until
    they end (instructions, shapes, llvmlite values); the collector's
    generational passes kept walking it for nothing, ~half of the CPU time of
    lowering a 50,000-instruction module.  Reference counting still frees
    what dies; cycles made inside the block are collected after it.
    """
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


class HloInstruction:
    """One HLO instruction. See the module docstring for ``attrs``."""

    __slots__ = ("name", "opcode", "shape", "operands", "attrs", "parent", "users", "location", "__weakref__")

    def __init__(self, opcode: str, shape: Shape, operands: Iterable["HloInstruction"] = (),
                 attrs: dict | None = None, name: str | None = None):
        self.opcode = opcode
        self.shape = shape
        self.operands: list[HloInstruction] = list(operands)
        self.attrs: dict = dict(attrs or {})
        self.name = name or ""
        self.parent: HloComputation | None = None
        self.users: list[HloInstruction] = []
        self.location: tuple[int, int] | None = None     # (line, column) in the text it was read from

    # -- convenience ----------------------------------------------------------
    def operand(self, i: int) -> "HloInstruction":
        return self.operands[i]

    @property
    def literal(self) -> np.ndarray:
        """The value of a ``constant``."""
        return self.attrs["literal"]

    @property
    def parameter_number(self) -> int:
        return self.attrs["parameter_number"]

    def called_computations(self) -> list["HloComputation"]:
        """Computations this instruction calls (to_apply, body, branches, ...), in
        attribute order: none for an opcode whose definition has no computation
        attribute (``opcodes.calls_computations``; the verifier refuses a
        computation held by such an instruction)."""
        # Asked of every instruction by several passes, ~170k times a
        # training step, and most opcodes call nothing.
        if not calls_computations(self.opcode):
            return []
        return computations_in(self.attrs)

    def replace_operand(self, old: "HloInstruction", new: "HloInstruction") -> None:
        self.operands = [new if o is old else o for o in self.operands]

    def __repr__(self) -> str:
        return f"<HloInstruction {self.name} = {self.shape} {self.opcode}>"


def computations_in(attrs: dict) -> list["HloComputation"]:
    """The computations among attribute values ``attrs`` (one, or a tuple of
    them), in order, whatever the keys."""
    # Exact types (HloComputation has no subclasses).
    out = []
    for v in attrs.values():
        t = type(v)
        if t is HloComputation:
            out.append(v)
        elif t is tuple and v and type(v[0]) is HloComputation and \
                all(type(c) is HloComputation for c in v):   # v[0] first: most tuples hold ints
            out.extend(v)
    return out


class HloComputation:
    """A named list of instructions in a valid (def-before-use) order, with a root.

    Parameters are the ``parameter`` instructions, ordered by parameter number.
    """

    def __init__(self, name: str, instructions: Iterable[HloInstruction] = (),
                 root: HloInstruction | None = None, is_entry: bool = False):
        self.name = name
        self.instructions: list[HloInstruction] = []
        self.root: HloInstruction | None = None
        self.is_entry = is_entry
        self.parent: HloModule | None = None
        #: Attributes after the closing brace (``execution_thread="..."``), kept as text.
        self.attrs: dict = {}
        for inst in instructions:
            self.add_instruction(inst)
        if root is not None:
            self.root = root
        elif self.instructions:
            self.root = self.instructions[-1]

    def add_instruction(self, inst: HloInstruction) -> HloInstruction:
        inst.parent = self
        self.instructions.append(inst)
        return inst

    @property
    def parameters(self) -> list[HloInstruction]:
        params = [i for i in self.instructions if i.opcode == "parameter"]
        return sorted(params, key=lambda p: p.parameter_number)

    @property
    def num_parameters(self) -> int:
        return sum(1 for i in self.instructions if i.opcode == "parameter")

    def parameter_shapes(self) -> list[Shape]:
        return [p.shape for p in self.parameters]

    def binary_root_opcode(self) -> str | None:
        """The root's opcode when the computation is ``ROOT op(p0, p1)`` of its
        two parameters (in either order: a reducer such as ``add``), else None."""
        root = self.root
        params = self.parameters
        if root is None or len(params) != 2 or len(root.operands) != 2 or \
                {id(o) for o in root.operands} != {id(q) for q in params}:
            return None
        return root.opcode

    # compute_users and post_order run thousands of times while a training step
    # compiles (every pass and every fused computation): written for speed.
    # Instructions hash and compare by identity, so they go into sets and
    # dicts as themselves.

    def compute_users(self) -> None:
        """Refresh every instruction's ``users`` list (each user once, in order)."""
        for inst in self.instructions:
            inst.users = []
        for inst in self.instructions:
            operands = inst.operands
            n = len(operands)
            if n == 1:
                operands[0].users.append(inst)
            elif n == 2:
                a, b = operands
                a.users.append(inst)
                if b is not a:
                    b.users.append(inst)
            elif n:
                for op in dict.fromkeys(operands):   # each operand once, in order
                    op.users.append(inst)

    def post_order(self) -> list[HloInstruction]:
        """Instructions reachable from the root, operands before users (then the
        rest); custom calls with a side effect (jax's host callbacks: a print)
        come first, in program order, each after what it reads."""
        order: list[HloInstruction] = []
        seen: set[HloInstruction] = set()
        effects = [i for i in self.instructions
                   if i.opcode == "custom-call" and i.attrs.get("custom_call_has_side_effect") is True]
        for start in effects + [self.root] + self.instructions:
            if start is None or start in seen:
                continue
            seen.add(start)
            stack = [(start, iter(start.operands))]
            while stack:
                node, it = stack[-1]
                for nxt in it:                       # the next operand not seen yet
                    if nxt not in seen:
                        seen.add(nxt)
                        if nxt.operands:
                            stack.append((nxt, iter(nxt.operands)))
                            break
                        order.append(nxt)            # a leaf: done at once
                else:
                    stack.pop()
                    order.append(node)
        return order

    # -- rewriting helpers (each linear in what it touches) -----------------------
    def replace_all_uses(self, old: HloInstruction, new: HloInstruction) -> None:
        """Make every user of ``old`` (and the root, if it is ``old``) use ``new``.

        Relies on ``old.users`` being current (see :meth:`compute_users`); keeps
        the users lists of ``old`` and ``new`` current.  Shapes are not checked.
        """
        if old is new:
            return
        for user in old.users:
            if user is new or not any(o is old for o in user.operands):
                continue
            already = any(o is new for o in user.operands)  # then it is in new.users
            user.replace_operand(old, new)
            if not already:
                new.users.append(user)
        old.users = [u for u in old.users if u is new]
        if self.root is old:
            self.root = new

    def remove_instructions(self, insts: Iterable[HloInstruction]) -> None:
        """Remove several unused instructions at once (one pass over the list).

        Raises ``ValueError`` if one of them is the root or still has a user
        outside the removed set.
        """
        gone = {id(i) for i in insts}
        if not gone:
            return
        if self.root is not None and id(self.root) in gone:
            raise ValueError(f"cannot remove the root {self.root.name} of computation {self.name}")
        for inst in self.instructions:
            if id(inst) in gone:
                continue
            for op in inst.operands:
                if id(op) in gone:
                    raise ValueError(f"cannot remove {op.name}: {inst.name} uses it")
        self.instructions = [i for i in self.instructions if id(i) not in gone]
        for inst in self.instructions:
            if any(id(u) in gone for u in inst.users):
                inst.users = [u for u in inst.users if id(u) not in gone]

    def remove_instruction(self, inst: HloInstruction) -> None:
        """Remove one unused instruction (linear: prefer :meth:`remove_instructions` in loops)."""
        self.remove_instructions([inst])

    def add_instruction_before(self, inst: HloInstruction, before: HloInstruction) -> HloInstruction:
        """Insert ``inst`` just before ``before`` (linear: in loops, append then
        :meth:`sort_topologically` once).  Registers ``inst`` as a user of its operands."""
        for k, existing in enumerate(self.instructions):
            if existing is before:
                break
        else:
            raise ValueError(f"{before.name} is not an instruction of computation {self.name}")
        inst.parent = self
        self.instructions.insert(k, inst)
        _register_uses(inst)
        return inst

    def sort_topologically(self) -> None:
        """Reorder ``instructions`` so operands come before users.

        Stable: a list already in a valid order is unchanged, and an instruction
        appended at the end moves to just before its first user.
        """
        member = {id(i) for i in self.instructions}
        placed: set[int] = set()
        order: list[HloInstruction] = []
        for start in self.instructions:
            if id(start) in placed:
                continue
            placed.add(id(start))
            stack = [(start, 0)]
            while stack:
                node, k = stack[-1]
                if k < len(node.operands):
                    stack[-1] = (node, k + 1)
                    op = node.operands[k]
                    if id(op) not in placed and id(op) in member:
                        placed.add(id(op))
                        stack.append((op, 0))
                else:
                    stack.pop()
                    order.append(node)
        self.instructions = order

    def instruction(self, name: str) -> HloInstruction:
        for inst in self.instructions:
            if inst.name == name:
                return inst
        raise KeyError(f"no instruction {name!r} in computation {self.name}")

    def __repr__(self) -> str:
        return f"<HloComputation {self.name}: {len(self.instructions)} instructions>"


def _register_uses(inst: HloInstruction) -> None:
    seen = set()
    for op in inst.operands:
        if id(op) not in seen:
            seen.add(id(op))
            op.users.append(inst)


def fresh_name(base: str, used: set, sep: str = ".") -> str:
    """``base`` itself if unused, else ``base<sep>2``, ``base<sep>3``, ...; the
    name returned is added to ``used`` (a :class:`FreshNames` finds it without
    trying the numbers taken before)."""
    if isinstance(used, FreshNames):
        return used.fresh(base, sep)
    name, k = base, 1
    while name in used:
        k += 1
        name = f"{base}{sep}{k}"
    used.add(name)
    return name


class FreshNames(set):
    """A set of used names that hands out :func:`fresh_name`'s names in
    amortised constant time: it remembers, per base, the number it stopped at.
    Names are only ever added, so every number below that one is still taken
    and the name found is the one :func:`fresh_name` would find.  (The code
    generator names a function or a global per kernel, hundreds of them from
    one base such as ``xlac_entry.slots``: probing ``.2``, ``.3``, ... from
    the start each time was quadratic.)"""

    def __init__(self, names: Iterable[str] = ()):
        super().__init__(names)
        self._next: dict[tuple[str, str], int] = {}

    def fresh(self, base: str, sep: str = ".") -> str:
        k = self._next.get((base, sep), 1)
        name = base if k == 1 else f"{base}{sep}{k}"
        while name in self:
            k += 1
            name = f"{base}{sep}{k}"
        self._next[(base, sep)] = k + 1
        self.add(name)
        return name

    def discard(self, name: str) -> None:
        raise TypeError("FreshNames only grows (a freed name would not be found again)")

    remove = discard


class NameUniquer:
    """Fresh instruction names ``base.N`` that collide with no name seen so far.

    Amortised constant time per name (a counter per base), so passes that
    create many instructions stay linear.
    """

    def __init__(self, used: Iterable[str] = ()):
        self.used: set[str] = set(used)
        self._next: dict[str, int] = {}

    def reserve(self, name: str) -> None:
        self.used.add(name)

    def __call__(self, base: str) -> str:
        base = base or "x"
        k = self._next.get(base, 1)
        while f"{base}.{k}" in self.used:
            k += 1
        name = f"{base}.{k}"
        self._next[base] = k + 1
        self.used.add(name)
        return name


@dataclass(frozen=True)
class Diagnostic:
    """A decision a pass or the code generator made, and why: what ``xlac dump``
    prints after the module ("not fused: exp.1 into add.2: expensive
    exponential has 2 users")."""

    source: str          # the pass or stage that decided: "fusion", "kernel-choice", ...
    instruction: str     # the name of the instruction it is about
    message: str         # the whole sentence, naming the instructions and the reason

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class EntryComputationLayout:
    """The module header's ``entry_computation_layout``, kept as written: the
    calling convention (the layouts the caller's arguments and results have).

    It may differ from the entry's parameter and root layouts; the code
    generator then copies between the two (``passes.entry_layout``).  ``pos``
    is where the parser read it (for errors), not part of the value.
    """

    parameters: tuple
    result: Shape
    pos: int | None = None

    def __eq__(self, other) -> bool:
        return isinstance(other, EntryComputationLayout) and \
            (self.parameters, self.result) == (other.parameters, other.result)

    def __hash__(self) -> int:
        return hash((self.parameters, self.result))

    def fits(self, comp: "HloComputation") -> bool:
        """Whether it describes ``comp``'s signature (same shapes, layouts aside)."""
        params = comp.parameter_shapes()
        return (len(params) == len(self.parameters) and comp.root is not None
                and all(a.compatible(b) for a, b in zip(params, self.parameters))
                and self.result.compatible(comp.root.shape))


class HloModule:
    """A set of computations, one of them the entry.

    ``computations`` are kept callees-before-callers (the order HLO text prints
    them); ``entry`` is the entry computation.  ``diagnostics`` lists the
    decisions passes and the code generator recorded (:class:`Diagnostic`).
    """

    def __init__(self, name: str, computations: Iterable[HloComputation] = (),
                 entry: HloComputation | None = None, attrs: dict | None = None):
        self.name = name
        self.computations: list[HloComputation] = []
        self.attrs: dict = dict(attrs or {})  # the header's attributes, in order
        self.diagnostics: list[Diagnostic] = []
        #: XLA's stack-frame tables (``FileNames`` ...), as read: ``((heading, (entry, ...)), ...)``.
        self.stack_frame_index: tuple = ()
        for c in computations:
            self.add_computation(c)
        self.entry = entry if entry is not None else (self.computations[-1] if self.computations else None)
        if self.entry is not None:
            self.entry.is_entry = True

    def add_computation(self, comp: HloComputation) -> HloComputation:
        comp.parent = self
        self.computations.append(comp)
        return comp

    def sum_computation(self, element_type, name: str) -> HloComputation:
        """A new scalar ``(x, y) -> add(x, y)`` computation (``or`` for pred),
        ahead of every other: the reducer of the sums a pass inserts."""
        s = Shape(element_type, ())
        x = HloInstruction("parameter", s, [], {"parameter_number": 0}, "x")
        y = HloInstruction("parameter", s, [], {"parameter_number": 1}, "y")
        r = HloInstruction("or" if element_type == PRED else "add", s, [x, y], {}, "sum")
        comp = HloComputation(name, [x, y, r], root=r)
        comp.compute_users()
        comp.parent = self
        self.computations.insert(0, comp)
        return comp

    def computation(self, name: str) -> HloComputation:
        for c in self.computations:
            if c.name == name:
                return c
        raise KeyError(f"no computation {name!r} in module {self.name}")

    def instructions(self) -> Iterator[HloInstruction]:
        return itertools.chain.from_iterable(c.instructions for c in self.computations)

    @property
    def entry_computation_layout(self) -> tuple[list[Shape], Shape]:
        """(parameter shapes, result shape) of the entry, layouts included."""
        return self.entry.parameter_shapes(), self.entry.root.shape

    @property
    def declared_entry_layout(self) -> EntryComputationLayout | None:
        """The header's ``entry_computation_layout`` as written, when it still
        describes the entry (a pass that changed the signature voids it)."""
        declared = self.attrs.get("entry_computation_layout")
        if isinstance(declared, EntryComputationLayout) and self.entry is not None and \
                declared.fits(self.entry):
            return declared
        return None

    @property
    def calling_convention(self) -> tuple[list[Shape], Shape]:
        """(parameter shapes, result shape) the caller passes and gets: the
        declared entry layout when there is one, else the entry's own."""
        declared = self.declared_entry_layout
        if declared is not None:
            return list(declared.parameters), declared.result
        return self.entry_computation_layout

    @property
    def result_shape(self) -> Shape:
        return self.entry.root.shape

    # The module header's ``replica_count=`` and ``num_partitions=`` (1 when
    # absent): the module runs on replica_count x num_partitions devices.
    # Both read and set through ``collectives.check_device_counts`` (a
    # ``DeviceGroupError`` naming the value and the limit), so that no entry
    # point sets a count nothing could run on.
    @property
    def replica_count(self) -> int:
        return device_counts(self)[0]

    @replica_count.setter
    def replica_count(self, value: int) -> None:
        self.attrs["replica_count"] = check_device_counts(value, self.num_partitions)[0]

    @property
    def num_partitions(self) -> int:
        return device_counts(self)[1]

    @num_partitions.setter
    def num_partitions(self, value: int) -> None:
        self.attrs["num_partitions"] = check_device_counts(self.replica_count, value)[1]

    def to_text(self) -> str:
        """HLO text of the module (the printer's output)."""
        return module_to_text(self)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return f"<HloModule {self.name}: {len(self.computations)} computations>"

    def key_text(self) -> str:
        """The module's text with big constants as digests of their bytes: what
        identifies it for a cache, printed in a fraction of the time."""
        from .printer import digesting_literals
        with digesting_literals():
            return module_to_text(self)

    def fingerprint(self) -> str:
        """A stable hash of the module's text (the compile cache key)."""
        return hashlib.sha256(self.to_text().encode()).hexdigest()

    def name_uniquer(self) -> "NameUniquer":
        """A :class:`NameUniquer` that avoids every instruction name the module has now."""
        return NameUniquer(i.name for i in self.instructions())

    def clone(self) -> "HloModule":
        """A structural copy (new computations and instructions, same names).

        Iterative, so arbitrarily deep graphs copy fine (``copy.deepcopy``
        recurses along operand chains).  Constant literals are shared: passes
        replace them, never write into them.
        """
        comp_map: dict[int, HloComputation] = {}
        for c in self.computations:
            comp_map[id(c)] = HloComputation(c.name, is_entry=c.is_entry)

        def remap(value):
            if isinstance(value, HloComputation):
                return comp_map[id(value)]
            if isinstance(value, tuple) and value and all(isinstance(v, HloComputation) for v in value):
                return tuple(comp_map[id(v)] for v in value)
            return value

        for c in self.computations:
            new_c = comp_map[id(c)]
            inst_map: dict[int, HloInstruction] = {}
            for inst in c.instructions:
                clone = HloInstruction(inst.opcode, inst.shape, [], {k: remap(v) for k, v in inst.attrs.items()},
                                       inst.name)
                clone.location = inst.location
                inst_map[id(inst)] = clone
                new_c.add_instruction(clone)
            for inst in c.instructions:
                inst_map[id(inst)].operands = [inst_map[id(o)] for o in inst.operands]
            new_c.root = inst_map[id(c.root)] if c.root is not None else None
            new_c.compute_users()
        out = HloModule(self.name, [comp_map[id(c)] for c in self.computations],
                        comp_map[id(self.entry)] if self.entry is not None else None, dict(self.attrs))
        out.diagnostics = list(self.diagnostics)
        out.stack_frame_index = self.stack_frame_index
        for c in self.computations:
            comp_map[id(c)].attrs = dict(c.attrs)
        return out

    @staticmethod
    def reachable_computations(roots) -> set[int]:
        """The ids of the computations ``roots`` are or reach through calls."""
        reachable: set[int] = set()
        stack = list(roots)
        while stack:
            comp = stack.pop()
            if id(comp) in reachable:
                continue
            reachable.add(id(comp))
            for inst in comp.instructions:
                if inst.attrs:      # most instructions have none: no call
                    stack.extend(inst.called_computations())
        return reachable

    def drop_uncalled_computations(self) -> bool:
        """Remove the computations the entry does not reach through calls;
        returns whether any was removed."""
        if self.entry is None:
            return False
        reachable = self.reachable_computations([self.entry])
        if all(id(c) in reachable for c in self.computations):
            return False
        self.computations = [c for c in self.computations if id(c) in reachable]
        return True

    def sort_computations(self) -> None:
        """Order computations callees-before-callers, entry last.

        Iterative (an explicit stack), so any depth of calls sorts fine.
        """
        order, seen = [], set()
        starts = [c for c in self.computations if c is not self.entry]
        if self.entry is not None:
            starts.append(self.entry)
        for start in starts:
            if id(start) in seen:
                continue
            seen.add(id(start))
            stack = [(start, iter(_callees(start)))]
            while stack:
                comp, it = stack[-1]
                callee = next(it, None)
                if callee is None:
                    stack.pop()
                    order.append(comp)
                elif id(callee) not in seen:
                    seen.add(id(callee))
                    stack.append((callee, iter(_callees(callee))))
        self.computations = order


def _callees(comp: HloComputation):
    """The computations ``comp`` calls, in instruction and attribute order."""
    for inst in comp.instructions:
        if inst.attrs:      # most instructions have none: no call
            yield from inst.called_computations()


def _call_edges(comp: HloComputation) -> list:
    """``(instruction, callee)`` for every computation ``comp``'s instructions call."""
    return [(inst, callee) for inst in comp.instructions for callee in inst.called_computations()]


#: Most computations that may be nested inside one another through ``call``,
#: ``while``, ``conditional``, ``map``, ``reduce``, ``sort``, fusions... (the
#: entry calling a loop body is depth 1).  Real programs nest a handful of levels
#: (a scan in a cond in a jitted function); 64 is far beyond that and keeps the
#: recursion of the evaluator (2 Python frames per level) and of the code
#: generator (about 9 per level) well inside Python's default limit of 1000.
MAX_CALL_DEPTH = 64


def find_call_graph_problem(computations) -> tuple | None:
    """A recursive call or a too deep nesting of calls among ``computations``.

    Returns ``None``, or ``(instruction, callee, message)``: the call site to
    report and a sentence saying what is wrong.  HLO computations cannot call
    themselves, directly or not (XLA's parser only lets a computation call one
    defined before it); and no chain of calls may be longer than
    :data:`MAX_CALL_DEPTH`.  Iterative, linear in the instructions.
    """
    height: dict[int, int] = {}     # id(comp) -> longest chain of calls below it
    on_path: dict[int, int] = {}    # id(comp) -> index in the DFS stack
    for root in computations:
        if id(root) in height:
            continue
        problem = _heights_below(root, height, on_path)
        if problem is not None:
            return problem
    deepest = max(computations, key=lambda c: height[id(c)], default=None)
    if deepest is None or height[id(deepest)] <= MAX_CALL_DEPTH:
        return None
    return _too_deep(deepest, height)


def _heights_below(root: HloComputation, height: dict, on_path: dict):
    """Post-order DFS from ``root`` filling ``height``; a cycle is returned as a problem.

    ``stack`` holds ``(computation, its remaining call edges, longest chain below
    it so far)`` for the path from ``root``; ``on_path`` maps each of those
    computations to its index in ``stack``.
    """
    stack = [(root, iter(_call_edges(root)), 0)]
    on_path[id(root)] = 0
    while stack:
        comp, edges, best = stack[-1]
        edge = next(edges, None)
        if edge is None:
            stack.pop()
            del on_path[id(comp)]
            height[id(comp)] = best
            if stack:
                parent, parent_edges, parent_best = stack[-1]
                stack[-1] = (parent, parent_edges, max(parent_best, best + 1))
            continue
        inst, callee = edge
        if id(callee) in on_path:
            cycle = [c.name for c, _, _ in stack[on_path[id(callee)]:]] + [callee.name]
            return inst, callee, (f"recursive call: {' -> '.join(cycle)} (a computation may not "
                                  "call itself, directly or through others)")
        if id(callee) in height:
            stack[-1] = (comp, edges, max(best, height[id(callee)] + 1))
            continue
        on_path[id(callee)] = len(stack)
        stack.append((callee, iter(_call_edges(callee)), 0))
    return None


def _too_deep(top: HloComputation, height: dict) -> tuple:
    """The call at depth MAX_CALL_DEPTH + 1 on a longest chain from ``top``."""
    chain = [top]
    comp = top
    for _ in range(MAX_CALL_DEPTH + 1):
        inst, callee = max(_call_edges(comp), key=lambda e: height[id(e[1])])
        chain.append(callee)
        comp = callee
    names = [c.name for c in chain]
    shown = " -> ".join(names[:3] + ["..."] + names[-2:])
    return inst, callee, (f"computations nested more than {MAX_CALL_DEPTH} deep ({shown}): "
                          f"{inst.name} in {chain[-2].name} calls {callee.name} at depth "
                          f"{MAX_CALL_DEPTH + 1}; xlac allows at most {MAX_CALL_DEPTH} "
                          "(xlac.hlo.ir.MAX_CALL_DEPTH)")
