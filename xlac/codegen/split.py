"""Split an LLVM module into parts that LLVM optimises and emits independently.

XLA's CPU back end compiles a big module on several threads by splitting it
into modules and emitting one object each; :func:`split_module` does the same
for the modules :class:`~xlac.codegen.emitter.ModuleEmitter` builds: one
function per computation (the entry, while bodies, branches), one per kernel,
task bodies, a few helpers and constants.

* **Units.** The entry is one unit; every function the entry references is
  the root of another (a kernel), and owns what only it reaches (its task
  bodies, the computations it calls, its constants).  A value reached from
  several roots becomes a root of its own, unless it is small and may be
  copied: an internal function LLVM may inline of at most
  ``COPY_MAX_INSTRUCTIONS`` instructions (``xlac.cancel_requested``) or an
  internal *constant* of at most ``COPY_MAX_BYTES`` bytes goes, as an
  internal copy, into every part that uses it (a copy keeps LLVM able to inline it or fold its loads).
  Mutable globals (a ``rng-get-and-update-state``'s state) are never copied.
* **Parts.** Units are dealt to parts longest first, each to the lightest part
  so far (by LLVM instructions; a global variable weighs a 64th of its text),
  the entry's unit alone to part 0 (``SplitPlan.cold``: a list of calls,
  compiled with LLVM's cheap pipeline).
* **Linkage.** A value one part defines and another uses is given external
  linkage with hidden visibility where it is defined and declared where it is
  used; the parts' objects are linked into one MCJIT engine, which resolves
  such symbols among its own objects first (two programs' engines never see
  each other's).  Everything else keeps its linkage; the entry stays the one
  function the caller looks up.

What is lost is interprocedural optimisation across parts: LLVM cannot
inline a kernel of another part, nor propagate constants into it.  Kernels
are ``noinline`` anyway past a few instructions (``emitter.keep_out_of_line``),
and the ones that are not are copied or kept with the entry.

**While the module is still being emitted** (:class:`StreamSplit`, for
``jit.StreamedCompile``): the emitter reports every kernel and computation
function it has finished, and once they add up to a batch they go out as a
part of their own, with the functions only they reach (task bodies): LLVM
optimises them while Python emits the rest.  Such a part exports everything
it defines (a later part may call a shared kernel or a computation of it);
global variables stay for the end, declared meanwhile (a later kernel may
read the same constant), unless small enough to copy.  When the emission
ends, the rest is split as above, what the batches defined being declarations
there.  Each part prints only the metadata its functions use.
"""
from __future__ import annotations

import re

from llvmlite import ir

from .ir_text import function_text

__all__ = ["split_module", "plan_split", "SplitPlan", "StreamSplit", "module_weight", "COPY_MAX_INSTRUCTIONS",
           "COPY_MAX_BYTES"]

#: Internal functions this small are copied into every part that calls them.
COPY_MAX_INSTRUCTIONS = 50
#: Internal constants this small (bytes) are copied into every part that reads them.
COPY_MAX_BYTES = 4096

#: A global's name as printed: ``@"any name"`` or ``@simple.name``.
_REFERENCE = re.compile(r'@(?:"(?:[^"\\]|\\.)*"|[-a-zA-Z$._][-a-zA-Z$._0-9]*)')
#: The linkage of a definition's first line, where a part exports it.
_LOCAL_LINKAGE = re.compile(r'^(define |@(?:"(?:[^"\\]|\\.)*"|[-a-zA-Z$._][-a-zA-Z$._0-9]*) = )'
                            r'(?:internal|private) ')


def _is_definition(v) -> bool:
    if isinstance(v, ir.Function):
        return bool(v.blocks)
    return getattr(v, "initializer", None) is not None


def _instructions(fn: ir.Function) -> int:
    return sum(len(block.instructions) for block in fn.blocks)


#: What LLVM spends on a function beyond its instructions (the analyses and
#: passes run per function, its machine function), in instructions' worth:
#: over the parts of two models, 2.7 ms a function and 0.07 ms an instruction
#: (on a 2-core Zen 3), so a small loop kernel (a wrapper and a task function
#: of ~30 instructions each) costs ~12 ms, not the 4 its instructions say.
FUNCTION_WEIGHT = 40


def _cost(fn: ir.Function) -> int:
    """What a function costs LLVM, in instructions (0: a declaration)."""
    return _instructions(fn) + FUNCTION_WEIGHT if fn.blocks else 0


def _weight(v) -> int:
    """What ``v`` costs LLVM, in instructions (a global variable: a 16th of its
    bytes, about its text / 64)."""
    return _cost(v) if isinstance(v, ir.Function) else _byte_size(v.value_type) // 16


def module_weight(module: ir.Module) -> int:
    """What ``module``'s functions cost LLVM, in instructions (:func:`_cost`)."""
    return sum(_cost(f) for f in module.functions)


def _copyable(v) -> bool:
    """Whether every part using ``v`` may have a copy of its own."""
    if v.linkage not in ("internal", "private"):
        return False
    if isinstance(v, ir.Function):
        # A copy is for LLVM to inline: a noinline kernel, however small, is
        # placed once (and the parts' loads stay even).
        return "noinline" not in v.attributes and _instructions(v) <= COPY_MAX_INSTRUCTIONS
    if not isinstance(v, ir.GlobalVariable) or not v.global_constant:
        return False
    ty = v.value_type
    return isinstance(ty, ir.ArrayType) and ty.count * _byte_size(ty.element) <= COPY_MAX_BYTES


def _byte_size(ty) -> int:
    if isinstance(ty, ir.IntType):
        return max(1, ty.width // 8)
    if isinstance(ty, (ir.FloatType,)):
        return 4
    if isinstance(ty, ir.ArrayType):
        return ty.count * _byte_size(ty.element)
    return 8                      # double, pointers; an upper bound is enough here


def _declaration(v) -> str:
    """A hidden declaration of ``v`` (defined in another part)."""
    if isinstance(v, ir.Function):
        ft = v.ftype
        args = ", ".join(str(t) for t in ft.args)
        if ft.var_arg:
            args = f"{args}, ..." if args else "..."
        return f"declare hidden {ft.return_type} {v.get_reference()}({args})"
    kind = "constant" if v.global_constant else "global"
    align = f", align {v.align}" if v.align else ""
    return f"{v.get_reference()} = external hidden {kind} {v.value_type}{align}"


def _exported(text: str) -> str:
    """A definition's text with external linkage and hidden visibility."""
    return _LOCAL_LINKAGE.sub(r"\1hidden ", text, count=1)


class _Scan:
    """What each definition of a module refers to (other globals, metadata),
    found once per definition; the module may still grow between questions."""

    def __init__(self, module: ir.Module):
        self.module = module
        self._by_reference: dict[str, object] = {}
        self._known = 0
        self._refs: dict[int, list] = {}
        self._metadata: dict[int, list] = {}
        self._texts: dict[int, str] = {}

    def text(self, v, keep: bool = False) -> str:
        """``str(v)`` (a function's by :func:`ir_text.function_text`); kept
        with ``keep`` (a copy, printed into every part that calls it)."""
        got = self._texts.get(id(v))
        if got is None:
            got = function_text(v) if isinstance(v, ir.Function) else str(v)
            if keep:
                self._texts[id(v)] = got
        return got

    def values(self) -> list:
        """The module's globals, in order (learning the ones added since)."""
        values = list(self.module.globals.values())
        for v in values[self._known:]:
            self._by_reference[v.get_reference()] = v
        self._known = len(values)
        return values

    def references(self, v) -> list:
        """The module's values ``v`` refers to (see :func:`_references`)."""
        refs = self._refs.get(id(v))
        if refs is None:
            refs, mds = _references(v, self._by_reference)
            self._refs[id(v)], self._metadata[id(v)] = refs, mds
        return refs

    def metadata(self, values) -> list:
        """The metadata nodes the functions among ``values`` use, directly or
        through other nodes and the module's named metadata, in module order."""
        seen: set[int] = set()
        stack = [op for node in self.module.namedmetadata.values() for op in node.operands]
        for v in values:
            self.references(v)
            stack += self._metadata.get(id(v), ())
        while stack:
            md = stack.pop()
            if id(md) in seen:
                continue
            seen.add(id(md))
            stack += [op for op in md.operands if isinstance(op, _METADATA)]
        return [md for md in self.module.metadata if id(md) in seen]


#: Metadata nodes printed as definitions of their own (``!N = ...``).
_METADATA = (ir.MDValue, ir.DIValue)


class SplitPlan:
    """Which values each part of a module defines, copies and declares; the
    parts' texts are printed on demand (:meth:`text`), so that a caller can
    hand part ``k`` to LLVM while it prints part ``k + 1`` (llvmlite's printer
    is Python, LLVM's work runs without the GIL).  ``count``: the parts."""

    def __init__(self, scan: _Scan, values: list, plans: list, exported: set, cold: frozenset = frozenset()):
        self.module, self._scan, self._values, self._plans, self._exported = \
            scan.module, scan, values, plans, exported
        self.count = max(1, len(plans))
        #: Parts that hold only the entry (and small copies): run once per
        #: call, a list of calls, they get LLVM's cheap pipeline (``jit``).
        self.cold = cold

    def text(self, k: int) -> str:
        """Part ``k``'s module text (the whole module when it is not split)."""
        if not self._plans:
            return str(self.module)
        return _part_text(self._scan, self._values, *self._plans[k], self._exported)


def split_module(module: ir.Module, entry_name: str, parts: int) -> list[str]:
    """``module`` as the texts of at most ``parts`` LLVM modules (one when it
    cannot be split usefully), each complete on its own, whose objects linked
    together define what ``module`` defines.  The first holds ``entry_name``.
    ``module`` itself is not changed."""
    plan = plan_split(module, entry_name, parts)
    return [plan.text(k) for k in range(plan.count)]


def plan_split(module: ir.Module, entry_name: str, parts: int, done: "StreamSplit | None" = None) -> SplitPlan:
    """The plan of :func:`split_module`, without printing anything yet.  With
    ``done``, the values its parts defined are only declared here, and those
    its parts declared are exported where they are defined."""
    scan = done.scan if done is not None else _Scan(module)
    values = scan.values()
    entry = module.globals.get(entry_name)
    elsewhere = done.defined if done is not None else set()
    if done is None and (parts <= 1 or entry is None or not isinstance(entry, ir.Function)):
        return SplitPlan(scan, values, [], set())
    defined = [v for v in values if _is_definition(v) and id(v) not in elsewhere]
    refs = {id(v): scan.references(v) for v in defined}
    copied = {id(v) for v in defined if v is not entry and _copyable(v)}

    def placed(u) -> bool:
        return id(u) in refs and id(u) not in copied

    if entry is None or not isinstance(entry, ir.Function) or id(entry) in elsewhere:
        units = [[v for v in defined if placed(v)]]
    else:
        units = _units(entry, [u for u in refs[id(entry)] if placed(u)], refs, placed)
        in_units = {id(v) for unit in units for v in unit}
        # Defined but reached from nowhere (an external definition besides the
        # entry, a constant only earlier parts read): a unit each.
        units += [[v] for v in defined if placed(v) and id(v) not in in_units]
    if len(units) < 2 and done is None:
        return SplitPlan(scan, values, [], set())
    # The entry gets a part of its own when it is split at all (or, with
    # ``done``, when anything else is left).
    alone = bool(units[0]) and units[0][0] is entry and ((len(units) > 1 and parts > 1) or done is not None)
    part_of = _deal(units, max(2 if alone and len(units) > 1 else 1, min(parts, len(units))), alone)
    count = max(part_of.values(), default=0) + 1
    members: list[list] = [[] for _ in range(count)]
    for v in values:
        if id(v) in part_of:
            members[part_of[id(v)]].append(v)
    exported = set(done.exported) if done is not None else set()
    plans = [_part_plan(own, scan.references, lambda u: id(u) in copied, exported) for own in members]
    if done is not None:
        for plan in plans:
            done.check_declared(plan[2])
    return SplitPlan(scan, values, plans, exported, frozenset({0}) if alone else frozenset())


def _part_plan(own_values: list, references, copied, exported: set) -> tuple:
    """(own, copies, declared, external) ids of the part defining
    ``own_values``: the small values it copies (``copied(u)``), the
    definitions of other parts it declares (added to ``exported``) and the
    module's own declarations it uses.  ``references(v)``: what ``v`` uses."""
    own = {id(v) for v in own_values}
    wanted = list(own_values)
    copies: set[int] = set()
    declared: set[int] = set()
    external: set[int] = set()
    while wanted:
        v = wanted.pop()
        for u in references(v):
            if id(u) in own or id(u) in copies or id(u) in declared or id(u) in external:
                continue
            if not _is_definition(u):
                external.add(id(u))
            elif copied(u):
                copies.add(id(u))
                wanted.append(u)
            else:
                declared.add(id(u))
                exported.add(id(u))
    return own, copies, declared, external


class StreamSplit:
    """Parts of a module that is still being emitted (see the module
    docstring): :meth:`finished` takes the functions the emitter finished and
    gives a part's text once they weigh ``batch`` LLVM instructions;
    :meth:`rest` plans the parts of what is left once the emission ended.
    Functions reported *cold* (run once per call, for nanoseconds) make parts
    of their own, compiled cold (``take(cold=True)`` sends the last of them).

    ``defined``: ids of the values the batches so far defined (exported);
    ``exported``: ids of the values some part declares."""

    def __init__(self, module: ir.Module, batch: int):
        self.scan = _Scan(module)
        self.batch = batch
        self.defined: set[int] = set()
        self.exported: set[int] = set()
        self._pending: dict[bool, list] = {False: [], True: []}
        self._weight = {False: 0, True: 0}
        self._noted: set[int] = set()
        #: ids of the functions reported private (see ``finished``).
        self._private: set[int] = set()
        self.batches = 0

    def finished(self, functions: list, cold: bool = False, private=()) -> str | None:
        """Note that ``functions`` (kernels, computations' functions) are
        complete; the text of a part to compile (cold with ``cold``) when the
        ones noted of that kind weigh a batch, else None.  Functions LLVM may
        inline (small kernels, computations) never start a part: they go with
        the parts whose functions call them.  ``private``: those of
        ``functions`` that no function reported later calls (a while body's
        own kernels, a computation called from one kernel): they stay
        internal to their part, where LLVM may inline them or change their
        calling convention; everything else a part defines is exported (a
        later part may call it)."""
        # One that a small function calls is not: that one is copied into
        # every part calling it (``_copyable``), and its callee declared there.
        if private:
            self.scan.values()          # (references are looked up among the globals known)
            copied_callees = {id(u) for fn in functions if _copyable(fn) for u in self.scan.references(fn)}
            self._private.update(id(fn) for fn in private if id(fn) not in copied_callees)
        for fn in functions:
            if id(fn) in self._noted or not _is_definition(fn) or "noinline" not in fn.attributes:
                continue
            self._noted.add(id(fn))
            self._pending[cold].append(fn)
            self._weight[cold] += _cost(fn)
        return self.take(cold) if self._weight[cold] >= self.batch else None

    def take(self, cold: bool = False) -> str | None:
        """The text of a part of every function of that kind noted and not sent
        yet (None: none)."""
        if not self._pending[cold]:
            return None
        values = self.scan.values()
        own = {id(v) for v in self._reached(self._pending[cold])}
        plan = _part_plan([v for v in values if id(v) in own], self.scan.references,
                          lambda u: id(u) not in own and _copyable(u), self.exported)
        self.check_declared(plan[2])
        self.defined |= own
        self.exported |= own - self._private
        self._pending[cold], self._weight[cold] = [], 0
        self.batches += 1
        return _part_text(self.scan, values, *plan, self.exported)

    def check_declared(self, declared: set) -> None:
        """Raise unless none of ``declared`` (ids a part declares) was reported
        private: a private function is internal to its part."""
        wrong = declared & self._private
        if wrong:
            names = [v.name for v in self.scan.values() if id(v) in wrong]
            raise AssertionError(f"functions reported private are called from another part: {names[:5]}")

    def _reached(self, roots: list) -> list:
        """``roots`` and the functions only now reached from them: the ones
        they call that no part defines (a kernel's task functions), not
        copyable ones (copied into every part that calls them), nor ones
        reported themselves (a glue kernel's epilogue, reported hot: its own
        part defines it)."""
        self.scan.values()          # (references are looked up among the globals known)
        reached, seen, stack = [], set(), list(roots)
        while stack:
            v = stack.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            reached.append(v)
            stack.extend(u for u in self.scan.references(v) if isinstance(u, ir.Function) and _is_definition(u)
                         and not _copyable(u) and id(u) not in self.defined and id(u) not in seen
                         and id(u) not in self._noted)
        return reached

    def pending_weight(self, cold: bool = False) -> int:
        """The LLVM instructions of the part :meth:`take` would make (of the
        functions of that kind noted and not sent yet)."""
        return sum(_instructions(v) for v in self._reached(self._pending[cold]))

    def remaining_weight(self) -> int:
        """What the functions no batch defined cost LLVM, in instructions (:func:`_cost`)."""
        return sum(_cost(f) for f in self.scan.module.functions if id(f) not in self.defined)

    def rest(self, entry_name: str, parts: int) -> SplitPlan:
        """The parts of everything the batches did not define (at least one)."""
        return plan_split(self.scan.module, entry_name, parts, done=self)


def _references(v, by_reference: dict) -> tuple[list, list]:
    """(the module's values ``v`` refers to, each once, in order of
    appearance; the metadata nodes its instructions carry or pass).

    A function's are found from its instructions' operands, without printing
    it (printing is most of what splitting costs): a global operand itself, or
    any other operand whose reference names one (``@...``: a constant
    expression such as a ``getelementptr`` of a global).  A global variable's
    are found in its printed initializer."""
    seen, out, metadata = {id(v)}, [], []

    def add(u) -> None:
        if u is not None and id(u) not in seen:
            seen.add(id(u))
            out.append(u)

    if not isinstance(v, ir.Function):
        for token in _REFERENCE.findall(str(v)):
            add(by_reference.get(token))
        return out, metadata
    for block in v.blocks:
        for instr in block.instructions:
            if instr.metadata:
                metadata += instr.metadata.values()
            for op in instr.operands:
                if isinstance(op, _LOCAL_OPERANDS):
                    continue
                if isinstance(op, ir.GlobalValue):
                    add(by_reference.get(op.get_reference()))
                    continue
                if isinstance(op, _METADATA):
                    metadata.append(op)
                    continue
                text = op.get_reference()
                if "@" in text:
                    for token in _REFERENCE.findall(text):
                        add(by_reference.get(token))
    return out, metadata


#: Operands that never name a global: values local to the function.
_LOCAL_OPERANDS = (ir.Instruction, ir.Argument, ir.Block)


def _units(entry, roots: list, refs: dict, placed) -> list[list]:
    """The entry's unit, then one unit per root: the root and the placed values
    only it reaches (a value reached from several roots becomes a root, and
    owns in turn what only it reaches: a computation called from one shared
    kernel stays with that kernel, where LLVM may inline it).
    ``refs``: the values each definition references, by id."""
    roots = [entry] + roots
    while True:
        is_root = {id(r) for r in roots}
        reached: dict[int, list] = {}
        for r in roots:
            for u in _below(r, refs, is_root):
                if placed(u):
                    reached.setdefault(id(u), []).append((r, u))
        shared = [pairs[0][1] for pairs in reached.values() if len(pairs) > 1]
        if not shared:
            break
        # Only the topmost shared values become roots this round: one reached
        # through another shared value may belong to that one alone.
        is_shared = {id(v) for v in shared}
        under = {id(u) for v in shared for u in _below(v, refs, is_root) if id(u) in is_shared}
        roots += [v for v in shared if id(v) not in under] or shared
    members = {id(r): [r] for r in roots}
    for pairs in reached.values():
        members[id(pairs[0][0])].append(pairs[0][1])
    return [members[id(r)] for r in roots]


def _below(root, refs: dict, stop: set) -> list:
    """The definitions ``root`` reaches (``refs``), not walking through ``stop``."""
    out, stack, seen = [], [root], {id(root)}
    while stack:
        v = stack.pop()
        for u in refs.get(id(v), ()):
            if id(u) in seen or id(u) in stop or id(u) not in refs:
                continue
            seen.add(id(u))
            stack.append(u)
            out.append(u)
    return out


def _deal(units: list[list], parts: int, entry_alone: bool = False) -> dict[int, int]:
    """Part number by value id: units longest first, each to the lightest part
    (the entry's unit, ``units[0]``, to part 0, alone there with
    ``entry_alone``)."""
    load = [0] * parts
    part_of: dict[int, int] = {}
    weights = [sum(_weight(v) for v in unit) for unit in units]

    def put(k: int, p: int) -> None:
        load[p] += weights[k]
        for v in units[k]:
            part_of[id(v)] = p

    put(0, 0)
    first = 1 if entry_alone else 0
    for k in sorted(range(1, len(units)), key=lambda k: (-weights[k], k)):
        put(k, min(range(first, parts), key=lambda p: (load[p], p)))
    used = sorted(set(part_of.values()))          # parts left empty are dropped
    renumber = {p: n for n, p in enumerate(used)}
    return {k: renumber[p] for k, p in part_of.items()}


def _part_text(scan: _Scan, values: list, own: set, copies: set, declared: set, external: set,
               exported: set) -> str:
    module = scan.module
    text = scan.text
    lines = [f'; ModuleID = "{module.name}"', f'target triple = "{module.triple}"',
             f'target datalayout = "{module.data_layout}"', ""]
    lines += [t.get_declaration() for t in module.get_identified_types().values()]
    for v in values:
        if id(v) in own:
            lines.append(_exported(text(v)) if id(v) in exported else text(v))
        elif id(v) in copies:
            lines.append(text(v, keep=True))
        elif id(v) in declared:
            lines.append(_declaration(v))
        elif id(v) in external:
            lines.append(str(v))        # the module's own declarations (libm, GEMM library, ...)
    for name, node in module.namedmetadata.items():
        lines.append(f"!{name} = !{{ {', '.join(op.get_reference() for op in node.operands)} }}")
    lines += [str(md) for md in scan.metadata([v for v in values if id(v) in own or id(v) in copies])]
    return "\n".join(lines)
