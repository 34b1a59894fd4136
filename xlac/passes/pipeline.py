"""Passes and pipelines.

A pass (:class:`Pass`) is an object with a ``name`` and ``run(module) ->
changed``.  A :class:`Pipeline` runs passes in order; ``fixed_point=True``
repeats the list until no pass changes anything (at most ``max_iterations``
times; hitting the cap is a diagnostic).  With ``verify=True`` (tests, dumps,
``xlac opt``) the verifier runs after every pass so a broken rewrite is caught
where it happens, naming the pass; an exception inside a pass is noted with
the pass's name too.  A pipeline is itself a pass, so pipelines nest; it
records the seconds each pass took (``timings``, in ``compile_stats``).

:data:`PASSES` names every pass and pipeline (``xlac opt MODULE.hlo --passes
cse,fusion`` runs them, as ``mlir-opt``/``hlo-opt`` do; :func:`run_passes`).

Dumps.  After every pass a pipeline reports ``(pipeline name, pass name,
module, changed)`` to its dump hooks:

* ``Pipeline(..., dump=callback)`` — this pipeline and those nested in it;
* ``with dump_hook(callback): ...`` — every pipeline run inside the block
  (``xlac dump --after-each-pass`` uses it);
* the environment setting ``XLAC_DUMP_TO=DIR`` — files named as XLA's
  ``--xla_dump_to`` names them: ``module_MMMM.<module>.SSSS.<pipeline>.after_<pass>.hlo``
  after each pass, where ``MMMM`` counts the modules compiled in this
  process and ``SSSS`` the steps of this module's compilation (step 0,
  ``...0000.<pipeline>.before_optimizations.hlo``, holds the module the
  outermost pipeline starts from).  :func:`dump_text` writes the other stages
  of the same compilation beside them (the code generator:
  ``module_MMMM.<module>.ir-no-opt.ll``, ``.ir-with-opt.ll`` and the host
  assembly ``.s``).  One compilation is one module number:
  :func:`dump_module` opens it (``xlac.jit`` around lowering and code
  generation; an outermost pipeline run alone opens its own).
"""
from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from ..errors import ShapeError
from ..hlo.ir import Diagnostic, HloModule
from ..hlo.verifier import VerifierError, verify
from .all_reduce_combiner import AllReduceCombiner
from .algebraic_simplifier import AlgebraicSimplifier
from .call_inliner import CallInliner
from .computation_deduplicator import ComputationDeduplicator
from .constant_folding import ConstantFolding
from .cse import CSE, FusedCSE
from .dce import DCE
from .dynamic_padder import DynamicPadder
from .expanders import OpExpander
from .shard_map import ShardMapPartitioner
from .sharding_propagation import ShardingPropagation
from .spmd_partitioner import SpmdPartitioner
from .fusion import InstructionFusion
from .multi_output_fusion import MultiOutputFusion
from .layout_assignment import LayoutAssignment
from .reshape_to_bitcast import ReshapeToBitcast
from .layout_normalization import EntryComputationLayoutPass, LayoutNormalization
from .tuple_simplifier import TupleConstantSplitter, TupleSimplifier
from .while_loop_invariant_code_motion import WhileLoopInvariantCodeMotion

__all__ = ["Pass", "Pipeline", "PASSES", "make_pass", "run_passes", "codegen_pipeline",
           "simplify_pipeline", "dump_hook", "dump_text", "dump_directory", "dump_module", "DumpHook"]

#: ``hook(pipeline_name, pass_name, module, changed)``
DumpHook = Callable[[str, str, HloModule, bool], None]

DUMP_ENV = "XLAC_DUMP_TO"

_hooks: contextvars.ContextVar[tuple] = contextvars.ContextVar("xlac_dump_hooks", default=())
_depth: contextvars.ContextVar[int] = contextvars.ContextVar("xlac_pipeline_depth", default=0)
_module_ids = itertools.count()
_counter_lock = threading.Lock()


@dataclass
class _DumpModule:
    """The compilation dumps are written for: its number, its name, its steps."""

    number: int
    name: str
    steps: itertools.count = field(default_factory=itertools.count)

    @property
    def prefix(self) -> str:
        return f"module_{self.number:04d}.{self.name}"


_current: contextvars.ContextVar[_DumpModule | None] = contextvars.ContextVar("xlac_dump_module",
                                                                              default=None)


def _next_module(name: str) -> _DumpModule:
    with _counter_lock:
        return _DumpModule(next(_module_ids), _safe(name))


@contextlib.contextmanager
def dump_module(name: str, own: bool = False):
    """Dumps written inside the block belong to one compilation of module
    ``name``: one module number, steps numbered from 0.  Inside another such
    block, the outer one's number is kept (one compilation, one number),
    unless ``own``: a compilation of its own started inside another (a GEMM
    library variant built while a program loads) gets a number of its own,
    so that its files do not overwrite the program's."""
    if (_current.get() is not None and not own) or dump_directory() is None:
        yield
        return
    token = _current.set(_next_module(name))
    try:
        yield
    finally:
        _current.reset(token)


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


def dump_text(name: str, text: str, step: bool = False) -> str | None:
    """Write ``text`` to ``$XLAC_DUMP_TO/module_MMMM.<module>.<name>`` (with
    ``step``: ``...<module>.SSSS.<name>``, the next step of this compilation).

    Returns the path, or None when ``XLAC_DUMP_TO`` is not set.  For stages
    outside the HLO pipelines, e.g. ``dump_text("ir-no-opt.ll", str(llvm_module))``;
    outside :func:`dump_module` the text gets a module number of its own and
    the name ``xlac``.
    """
    directory = dump_directory()
    if directory is None:
        return None
    os.makedirs(directory, exist_ok=True)
    current = _current.get() or _next_module("xlac")
    stem = f"{current.prefix}.{next(current.steps):04d}" if step else current.prefix
    path = os.path.join(directory, f"{stem}.{_safe(name)}")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _notify(hooks, pipeline: str, pass_name: str, module: HloModule, changed: bool) -> None:
    for hook in hooks:
        hook(pipeline, pass_name, module, changed)
    if dump_directory() is not None:
        dump_text(f"{pipeline}.after_{pass_name}.hlo", module.to_text(), step=True)


class Pass(Protocol):
    """What a pass is: a ``name`` (as ``xlac opt --passes`` spells it) and
    ``run(module) -> changed`` (rewrites the module in place; True when it
    changed anything)."""

    name: str

    def run(self, module: HloModule) -> bool: ...


@dataclass
class Pipeline:
    """Passes run in order (``fixed_point``: again until none changes anything,
    at most ``max_iterations`` times; a pipeline that hits the cap says so in
    ``module.diagnostics``).  With ``verify``, the verifier runs after every
    pass.  An exception raised by a pass, or a verifier failure after it,
    names the pass.  ``timings`` accumulates the seconds each pass took, by
    name, nested pipelines included."""

    name: str
    passes: list = field(default_factory=list)
    fixed_point: bool = False
    verify: bool = False
    max_iterations: int = 25
    dump: DumpHook | None = None
    timings: dict = field(default_factory=dict)

    def run(self, module: HloModule) -> bool:
        hook_token = _hooks.set(_hooks.get() + (self.dump,)) if self.dump is not None else None
        depth = _depth.get()
        depth_token = _depth.set(depth + 1)
        try:
            if depth == 0 and dump_directory() is not None:
                with dump_module(module.name):
                    dump_text(f"{self.name}.before_optimizations.hlo", module.to_text(), step=True)
                    return self._run(module)
            return self._run(module)
        finally:
            _depth.reset(depth_token)
            if hook_token is not None:
                _hooks.reset(hook_token)

    def _run(self, module: HloModule) -> bool:
        changed_any = False
        changed_last: list[str] = []
        for _ in range(self.max_iterations if self.fixed_point else 1):
            changed_last = [p.name for p in self.passes if self._run_pass(p, module)]
            changed_any |= bool(changed_last)
            if not changed_last:
                break
        else:
            if self.fixed_point and changed_last:
                module.diagnostics.append(Diagnostic(
                    "pipeline", "", f"{self.name}: no fixed point after {self.max_iterations} "
                                    f"iterations (still changing: {', '.join(changed_last)})"))
        return changed_any

    def _run_pass(self, p, module: HloModule) -> bool:
        t0 = time.perf_counter()
        try:
            changed = bool(p.run(module))
        except Exception as e:
            if not isinstance(p, Pipeline):      # the innermost pipeline names it
                e.add_note(f"(in pass '{p.name}' of pipeline '{self.name}')")
            raise
        finally:
            self._record(p, time.perf_counter() - t0)
        if self.verify:
            try:
                verify(module)
            except (VerifierError, ShapeError) as e:
                raise type(e)(f"after pass '{p.name}' of pipeline '{self.name}': {e}") from None
        if not isinstance(p, Pipeline):  # a nested pipeline reports its own passes
            hooks = _hooks.get()
            if hooks or dump_directory() is not None:
                _notify(hooks, self.name, p.name, module, changed)
        return changed

    def _record(self, p, seconds: float) -> None:
        if isinstance(p, Pipeline):
            for name, t in p.timings.items():
                self.timings[name] = self.timings.get(name, 0.0) + t
            p.timings.clear()
        else:
            self.timings[p.name] = self.timings.get(p.name, 0.0) + seconds


def simplify_pipeline(verify: bool = False) -> Pipeline:
    """Simplification to a fixed point: algebraic rewrites, constant folding,
    CSE, DCE and tuple simplification."""
    return Pipeline("simplify", [AlgebraicSimplifier(), ConstantFolding(), CSE(), DCE(),
                                 TupleSimplifier(), WhileLoopInvariantCodeMotion()], fixed_point=True,
                    verify=verify)


def codegen_pipeline(verify: bool = False, optimize: bool = True, abi: bool = False,
                     native_int8_dots: bool = False, native_bf16_dots: bool = False,
                     direct_convolution=None) -> Pipeline:
    """What every module goes through before emission (the order of
    xla/service/cpu/cpu_compiler.cc): honour the declared entry layout and
    lower XLA's layout annotations (``abi=True``: the entry's layouts are a C
    caller's, see ``layout_normalization``), inline calls, expand ops the code
    generator does not emit (``op-expander``), split tuple constants into
    tuples of array constants, inline the calls the expansions made, simplify
    to a fixed point, combine independent all-reduces alike into one, merge
    the identical computations control flow runs,
    assign layouts, fuse, merge sibling fusions, make the reshapes left that
    only relabel memory bitcasts (views of their operands' buffers).  Calls are
    inlined before the expansions, as XLA does before its RngExpander: an
    ``rng`` in a function called twice is then two instructions, each with a
    generator of its own.  ``optimize=False`` only does the first six (every
    instruction then gets its own kernel).  ``native_int8_dots``: the target
    multiplies 8-bit integers natively, so their matrix products stay dots
    (``expanders.int8_products``), and ``native_bf16_dots`` that it has a native bf16
    dot kernel, so bf16 convolutions become dots (``expanders.bf16_convolution``);
    ``direct_convolution``: the ``why_not`` of the code generator's direct
    convolution kernel (AMX: 8-bit, bf16), whose convolutions stay as they are."""
    first = [EntryComputationLayoutPass(), LayoutNormalization(abi), CallInliner(),
             OpExpander(native_int8_dots, native_bf16_dots, direct_convolution),
             TupleConstantSplitter(), CallInliner()]
    if not optimize:
        return Pipeline("codegen-O0", first, verify=verify)
    return Pipeline("codegen", first + [simplify_pipeline(verify), AllReduceCombiner(), ComputationDeduplicator(),
                                        LayoutAssignment(),
                                        InstructionFusion(), MultiOutputFusion(), FusedCSE(),
                                        ReshapeToBitcast()], verify=verify)


#: Every pass and pipeline by the name ``xlac opt --passes`` takes: a factory each.
PASSES: dict[str, Callable[[], Pass]] = {
    "entry-computation-layout": EntryComputationLayoutPass,
    "layout-normalization": LayoutNormalization,
    "op-expander": OpExpander,
    "dynamic-padder": DynamicPadder,
    "shard-map-partitioner": ShardMapPartitioner,
    "sharding-propagation": ShardingPropagation,
    "spmd-partitioner": SpmdPartitioner,
    "split-tuple-constants": TupleConstantSplitter,
    "call-inliner": CallInliner,
    "algebraic-simplifier": AlgebraicSimplifier,
    "constant-folding": ConstantFolding,
    "cse": CSE,
    "dce": DCE,
    "tuple-simplifier": TupleSimplifier,
    "while-loop-invariant-code-motion": WhileLoopInvariantCodeMotion,
    "all-reduce-combiner": AllReduceCombiner,
    "computation-deduplicator": ComputationDeduplicator,
    "layout-assignment": LayoutAssignment,
    "fusion": InstructionFusion,
    "multi-output-fusion": MultiOutputFusion,
    "fused-cse": FusedCSE,
    "reshape-to-bitcast": ReshapeToBitcast,
    "simplify": simplify_pipeline,
    "codegen": codegen_pipeline,
    "codegen-O0": lambda: codegen_pipeline(optimize=False),
}


def make_pass(name: str) -> Pass:
    """A new instance of the pass or pipeline called ``name``; ``ValueError``
    listing the known names when there is none."""
    factory = PASSES.get(name)
    if factory is None:
        raise ValueError(f"unknown pass {name!r}; the passes are: {', '.join(PASSES)}")
    return factory()


def run_passes(module: HloModule, names, verify: bool = True) -> Pipeline:
    """Run the passes ``names`` (a list, or a comma-separated string) on
    ``module`` in order, verifying after each; returns the pipeline (its
    ``timings``).  What ``xlac opt`` does."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    pipeline = Pipeline("opt", [make_pass(n) for n in names], verify=verify)
    pipeline.run(module)
    return pipeline
