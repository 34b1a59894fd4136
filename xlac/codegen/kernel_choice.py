"""Kernel choice: an explicit, ordered list of candidate kernels per opcode.

An instruction that owns a buffer becomes one kernel function.  Which code
fills that function is chosen here, the way XLA's CPU back end picks between
its emitters (a library GEMM call, a tiled dot, a loop): every key — the
opcode, or ``"fusion:<kind>"`` for a fusion (tried after
``"fusion:<kind>:<root opcode>"``'s, kernels for fusions rooted at one
opcode) — has a list of
:class:`KernelCandidate`, tried in order; the first whose ``applies`` returns
None is used, and the reasons the others gave are kept (:class:`KernelChoice`)
and recorded as ``kernel-choice`` diagnostics on the module, which
``xlac dump`` prints after the fusion refusals.  After a key's own candidates
come the registry's *fallback* candidates, shared by every opcode: the
reduction strategies and, last, the elemental loop kernel.

Nothing registers itself on import: ``kernels.register_all(registry)`` fills a
registry in one place, in an order that is read, not implied by imports.

A planning function that decides whether a strategy applies (``plan_dot``,
``plan_conv``, ...) raises :class:`NotApplicable` with the reason it declines;
:func:`plan_function` turns it into the two forms callers need — the plan or
None, and the reason or None.
"""
from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field
from typing import Callable

from ..errors import UnsupportedError
from ..hlo.ir import Diagnostic, HloInstruction

__all__ = ["KernelCandidate", "KernelChoice", "KernelRegistry", "NotApplicable", "plan_function",
           "kernel_key", "kernel_keys"]


class NotApplicable(Exception):
    """Raised by a planning function: its kernel does not apply to the
    instruction; the message says why (it becomes a diagnostic)."""


def _always(inst: HloInstruction) -> None:
    return None


def _no_scratch(me, inst: HloInstruction) -> int:
    return 0


@dataclass(frozen=True)
class KernelCandidate:
    """One way to emit a kernel.

    ``name``: what dumps call it (``"dot.gemm"``, ``"reduce.column"``, ...).
    ``emit(ctx)``: writes the kernel body (``emitter.KernelContext``; the
    kernel's ``ret`` is added afterwards).  ``applies(inst)``: None when the
    candidate can emit ``inst``, else the reason it cannot.
    ``scratch_bytes(me, inst)``: the temp space the kernel needs while it runs
    (asked only of the chosen candidate).  ``shareable``: the kernel reaches
    its buffers only through ``KernelContext``'s buffer methods
    (``output_arrays``, ``operand_array``, ``operand_generator``,
    ``buffer_pointer``, ``scratch_pointer``) and decides nothing from the
    instruction's context beyond what ``kernel_sharing.site_key`` covers, so
    structurally identical sites may share one function
    (``codegen/kernel_sharing.py``).  ``glue`` (a bool, or a predicate of
    the instruction): the kernel's own code only calls library code (no loop
    of its own worth optimising), so an entry's kernel of it is compiled with
    the cheap pipeline of cold kernels (``emitter.COLD_MAX_WORK``;
    :meth:`is_glue`).  ``size_generic(inst)``: whether the
    kernel of ``inst`` reads the sizes of its shapes only through
    ``KernelContext.site_element_count``, so that sites of any size may
    share it (``kernel_sharing``: a shareable candidate's elementwise maps).
    ``once(inst)``: whether the kernel of ``inst`` is emitted otherwise when
    it runs once per call (``KernelContext.runs_once``: the entry's) than in
    a loop body or a branch, so that the sharing key tells the two apart.
    """

    name: str
    emit: Callable = field(compare=False)
    applies: Callable[[HloInstruction], str | None] = field(default=_always, compare=False)
    scratch_bytes: Callable = field(default=_no_scratch, compare=False)
    shareable: bool = False
    glue: bool | Callable[[HloInstruction], bool] = field(default=False, compare=False)
    size_generic: Callable[[HloInstruction], bool] | None = field(default=None, compare=False)
    once: Callable[[HloInstruction], bool] | None = field(default=None, compare=False)

    def is_glue(self, inst: HloInstruction) -> bool:
        """Whether this candidate's kernel of ``inst`` is glue (see ``glue``)."""
        return self.glue(inst) if callable(self.glue) else self.glue


@dataclass(frozen=True)
class KernelChoice:
    """The candidate chosen for an instruction and, by name, why the ones
    before it were skipped."""

    candidate: KernelCandidate
    skipped: tuple = ()   # ((candidate name, reason), ...)

    def diagnostic(self, inst: HloInstruction) -> Diagnostic | None:
        if not self.skipped:
            return None
        why = "; ".join(f"not {name}: {reason}" for name, reason in self.skipped)
        return Diagnostic("kernel-choice", inst.name, f"kernel {inst.name}: {self.candidate.name} ({why})")


def kernel_key(inst: HloInstruction) -> str:
    """The registry key of ``inst``: its opcode, or ``"fusion:<kind>"``."""
    if inst.opcode == "fusion":
        return f"fusion:{inst.attrs.get('kind')}"
    return inst.opcode


def kernel_keys(inst: HloInstruction) -> list[str]:
    """The keys whose candidates ``inst`` tries, in order: a fusion's
    ``"fusion:<kind>:<root opcode>"`` (a kernel for fusions rooted at one
    opcode, which other fusions of the kind never hear of), then
    :func:`kernel_key`."""
    if inst.opcode == "fusion":
        return [f"{kernel_key(inst)}:{inst.attrs['calls'].root.opcode}", kernel_key(inst)]
    return [inst.opcode]


class KernelRegistry:
    """Candidates by key (opcode or ``"fusion:<kind>"``), in the order tried,
    plus the fallback candidates every key ends with."""

    def __init__(self):
        self._by_key: dict[str, list[KernelCandidate]] = {}
        self._fallback: list[KernelCandidate] = []

    def add(self, keys, *candidates: KernelCandidate) -> None:
        """Append ``candidates`` (in order) to the list of each key in ``keys``."""
        for key in ([keys] if isinstance(keys, str) else keys):
            self._by_key.setdefault(key, []).extend(candidates)

    def add_fallback(self, *candidates: KernelCandidate) -> None:
        """Append candidates tried after every key's own (the loop kernel last)."""
        self._fallback.extend(candidates)

    def has_kernel(self, opcode: str) -> bool:
        """Whether ``opcode`` has candidates of its own (not only the fallback)."""
        return opcode in self._by_key

    def keys(self) -> list[str]:
        return sorted(self._by_key)

    def candidates(self, key: str) -> list[KernelCandidate]:
        """The candidates tried for ``key``, in order."""
        return self._by_key.get(key, []) + self._fallback

    def choose(self, inst: HloInstruction) -> KernelChoice:
        """The first candidate that applies to ``inst``; raises
        ``UnsupportedError`` with every candidate's reason when none does."""
        skipped = []
        keys = kernel_keys(inst)
        for cand in [c for key in keys[:-1] for c in self._by_key.get(key, [])] + self.candidates(keys[-1]):
            reason = cand.applies(inst)
            if reason is None:
                return KernelChoice(cand, tuple(skipped))
            skipped.append((cand.name, reason))
        why = "; ".join(f"{name}: {reason}" for name, reason in skipped)
        raise UnsupportedError(inst.opcode, f"instruction {inst.name}: no kernel applies ({why})")


def plan_function(fn: Callable) -> Callable:
    """Decorate ``fn(inst) -> plan`` that raises :class:`NotApplicable`:
    the result returns the plan or None, and ``.why_not(inst)`` the reason or
    None.  Plans are remembered per instruction (kernel choice, scratch sizing
    and emission all ask), for as long as the instruction lives."""
    memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def outcome(inst):
        got = memo.get(inst)
        if got is None:
            try:
                got = (fn(inst), None)
            except NotApplicable as e:
                got = (None, str(e))
            memo[inst] = got
        return got

    @functools.wraps(fn)
    def plan(inst):
        return outcome(inst)[0]

    plan.why_not = lambda inst: outcome(inst)[1]
    return plan
