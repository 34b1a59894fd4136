"""Passes and pipelines.

A pass is an object with a ``name`` and ``run(module) -> changed``.  A
:class:`Pipeline` runs passes in order; ``fixed_point=True`` repeats the list
until no pass changes anything.  With ``verify=True`` (tests, dumps) the
verifier runs after every pass so a broken rewrite is caught where it happens.
A pipeline is itself a pass, so pipelines nest.

Dumps.  After every pass a pipeline reports ``(pipeline name, pass name,
module, changed)`` to its dump hooks:

* ``Pipeline(..., dump=callback)`` — this pipeline and those nested in it;
* ``with dump_hook(callback): ...`` — every pipeline run inside the block
  (``xlac dump --after-each-pass`` uses it);
* the environment setting ``XLAC_DUMP_TO=DIR`` — the HLO text is written to
  ``DIR/NNN.<pipeline>.<pass>.hlo``, numbered in order across the process
  (``NNN.<pipeline>.input.hlo`` holds the module an outermost pipeline
  starts from).  :func:`dump_text` writes other stages there the same way
  (the code generator: ``NNN.llvm.ll``, ``NNN.llvm-opt.ll``).
"""
from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Callable

from ..hlo.ir import HloModule

__all__ = ["Pipeline", "codegen_pipeline", "simplify_pipeline", "dump_hook", "dump_text",
           "dump_directory", "DumpHook"]

#: ``hook(pipeline_name, pass_name, module, changed)``
DumpHook = Callable[[str, str, HloModule, bool], None]

DUMP_ENV = "XLAC_DUMP_TO"

_hooks: contextvars.ContextVar[tuple] = contextvars.ContextVar("xlac_dump_hooks", default=())
_depth: contextvars.ContextVar[int] = contextvars.ContextVar("xlac_pipeline_depth", default=0)
_counter = itertools.count()
_counter_lock = threading.Lock()


@contextlib.contextmanager
def dump_hook(hook: DumpHook):
    """Call ``hook(pipeline, pass, module, changed)`` after every pass run inside the block."""
    token = _hooks.set(_hooks.get() + (hook,))
    try:
        yield hook
    finally:
        _hooks.reset(token)


def dump_directory() -> str | None:
    """The directory ``XLAC_DUMP_TO`` names, or None when dumping is off."""
    return os.environ.get(DUMP_ENV) or None


def _safe(part: str) -> str:
    return re.sub(r"[^\w.\-]+", "_", part) or "x"


def dump_text(name: str, text: str) -> str | None:
    """Write ``text`` to ``$XLAC_DUMP_TO/NNN.<name>`` (next number in order).

    Returns the path, or None when ``XLAC_DUMP_TO`` is not set.  For stages
    outside the HLO pipelines, e.g. ``dump_text("llvm.ll", str(llvm_module))``.
    """
    directory = dump_directory()
    if directory is None:
        return None
    os.makedirs(directory, exist_ok=True)
    with _counter_lock:
        number = next(_counter)
    path = os.path.join(directory, f"{number:03d}.{_safe(name)}")
    with open(path, "w") as fh:
        fh.write(text)
    return path


def _notify(hooks, pipeline: str, pass_name: str, module: HloModule, changed: bool) -> None:
    for hook in hooks:
        hook(pipeline, pass_name, module, changed)
    if dump_directory() is not None:
        dump_text(f"{pipeline}.{pass_name}.hlo", module.to_text())


@dataclass
class Pipeline:
    name: str
    passes: list = field(default_factory=list)
    fixed_point: bool = False
    verify: bool = False
    max_iterations: int = 25
    dump: DumpHook | None = None

    def run(self, module: HloModule) -> bool:
        hook_token = _hooks.set(_hooks.get() + (self.dump,)) if self.dump is not None else None
        depth = _depth.get()
        depth_token = _depth.set(depth + 1)
        try:
            if depth == 0 and dump_directory() is not None:
                dump_text(f"{self.name}.input.hlo", module.to_text())
            return self._run(module)
        finally:
            _depth.reset(depth_token)
            if hook_token is not None:
                _hooks.reset(hook_token)

    def _run(self, module: HloModule) -> bool:
        changed_any = False
        for _ in range(self.max_iterations if self.fixed_point else 1):
            changed = False
            for p in self.passes:
                pass_changed = bool(p.run(module))
                changed |= pass_changed
                if self.verify:
                    from ..hlo.verifier import verify
                    verify(module)
                if not isinstance(p, Pipeline):  # a nested pipeline reports its own passes
                    hooks = _hooks.get()
                    if hooks or dump_directory() is not None:
                        _notify(hooks, self.name, p.name, module, pass_changed)
            changed_any |= changed
            if not changed:
                break
        return changed_any


def simplify_pipeline(verify: bool = False) -> Pipeline:
    """Simplification to a fixed point: algebraic rewrites, constant folding,
    CSE, DCE and tuple simplification."""
    from .algebraic_simplifier import AlgebraicSimplifier
    from .constant_folding import ConstantFolding
    from .cse import CSE
    from .dce import DCE
    from .tuple_simplifier import TupleSimplifier
    return Pipeline("simplify", [AlgebraicSimplifier(), ConstantFolding(), CSE(), DCE(),
                                 TupleSimplifier()], fixed_point=True, verify=verify)


def codegen_pipeline(verify: bool = False, optimize: bool = True) -> Pipeline:
    """What every module goes through before emission (the order of
    xla/service/cpu/cpu_compiler.cc): split tuple constants into tuples of array
    constants, inline calls, simplify to a fixed point, assign layouts, fuse,
    merge sibling fusions.  ``optimize=False`` only splits tuple constants and
    inlines calls (every instruction then gets its own kernel)."""
    from .call_inliner import CallInliner
    from .fusion import InstructionFusion, MultiOutputFusion
    from .layout_assignment import LayoutAssignment
    from .tuple_simplifier import TupleConstantSplitter
    if not optimize:
        return Pipeline("codegen-O0", [TupleConstantSplitter(), CallInliner()], verify=verify)
    return Pipeline("codegen", [TupleConstantSplitter(), CallInliner(), simplify_pipeline(verify),
                                LayoutAssignment(), InstructionFusion(), MultiOutputFusion()],
                    verify=verify)
