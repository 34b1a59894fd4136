"""From an HloModule to LLVM IR: the pass pipeline, buffer assignment, emission.

``lower(module)`` is shared by the JIT (``xlac.jit``) and ahead-of-time paths,
so both run the very same code.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from llvmlite import ir

from ..errors import UnsupportedError
from ..hlo import custom_call
from ..hlo.ir import HloModule, gc_paused
from ..hlo.opcodes import Trait, is_elementwise, with_trait
from ..hlo.shape_inference import has_rule
from ..hlo.verifier import verify
from ..passes.buffer_assignment import BufferAssignment
from ..passes.expanders import EXPANSIONS
from ..passes.dynamic_padder import DynamicSignature, pad_dynamic
from ..passes.pipeline import codegen_pipeline
from ..runtime.threads import default_num_threads
from . import gemm_native, kernels, task_grid
from .kernels import conv_amx
from .elemental import has_generator
from .emitter import ModuleEmitter
from .ir_text import tear_down
from .math_approx import use_native_scaling
from .scalar_ops import element_kinds

#: Opcodes that need no code of their own (``Trait.NO_BUFFER``: parameters,
#: constants, tuples, pass-throughs).
_PLUMBING = with_trait(Trait.NO_BUFFER)
#: Opcodes whose result is a view of their operand's buffer (``Trait.VIEW``: bitcast).
_VIEWS = with_trait(Trait.VIEW)

#: The kernel candidates of every opcode, in the order tried (``kernels.register_all``).
KERNELS = kernels.register_all()


@dataclass
class Lowered:
    """A module ready for the back end."""

    hlo: HloModule                 # the optimised module actually compiled
    assignment: BufferAssignment
    llvm_module: ir.Module | None  # None once dropped (``without_llvm_module``)
    entry_name: str
    #: The code writes some results with aligned non-temporal stores and no
    #: check (``lower(aligned_results=True)``): every result and temp buffer
    #: must be 64-byte aligned.
    assumes_aligned_results: bool = False
    #: The code reads ``opts->cancel`` (a call can be stopped by Ctrl-C).
    polls_cancel: bool = False
    #: Seconds each HLO pass took, by pass name.
    pass_times: dict = field(default_factory=dict)
    #: How the entry's signature changed when its dynamic dimensions were
    #: padded (extra size parameters and results), or None: it has none.
    dynamic: DynamicSignature | None = None
    #: (target, api_version, instruction) of every custom call the code makes
    #: through ``opts->custom_call`` (targets xlac does not provide itself).
    custom_calls: tuple = ()

    @property
    def llvm_ir(self) -> str:
        if self.llvm_module is None:
            raise ValueError("this lowering's LLVM module was dropped; Executable.llvm_ir lowers the module again")
        return str(self.llvm_module)

    def without_llvm_module(self) -> "Lowered":
        """This lowering without its LLVM module (what an executable keeps for
        introspection: the module is one Python object per LLVM instruction)."""
        return replace(self, llvm_module=None)

    def release_llvm_module(self) -> "Lowered":
        """``without_llvm_module``, and the module torn down (``tear_down``): for
        the owner of a lowering that nothing else holds, once compiled."""
        if self.llvm_module is not None:
            tear_down(self.llvm_module)
        return self.without_llvm_module()


def codegen_rule(opcode: str) -> str | None:
    """How the code generator handles ``opcode``: ``"plumbing"`` (no code of its
    own: parameters, tuples, pass-throughs), ``"kernel"`` (kernel candidates
    of its own, ``kernels.register_all``), ``"elemental"`` (a generator fused into loops),
    ``"view"`` (its operand's buffer, read with its shape; elemental in a fusion), or None
    (not supported)."""
    if opcode in _VIEWS:
        return "view"
    if opcode in _PLUMBING:
        return "plumbing"
    if KERNELS.has_kernel(opcode):
        return "kernel"
    if has_generator(opcode) and (not is_elementwise(opcode) or element_kinds(opcode)):
        return "elemental"
    return None


def check_supported(module: HloModule, expanded: bool = False) -> None:
    """Raise ``UnsupportedError`` naming the first opcode codegen cannot handle.
    Before the pipeline (``expanded=False``) an op that ``op-expander``
    rewrites into others counts as handled; after it, only code counts."""
    for comp in module.computations:
        for inst in comp.instructions:
            if codegen_rule(inst.opcode) is None and (expanded or not is_expanded(inst.opcode)):
                raise UnsupportedError(inst.opcode, f"instruction {inst.name}")


def is_expanded(opcode: str) -> bool:
    """Whether ``op-expander`` rewrites ``opcode`` into other ops."""
    return has_rule(opcode) and bool(EXPANSIONS.for_opcode(opcode))


@gc_paused()     # a big module's IR stays alive throughout: nothing for the collector to find
def lower(module: HloModule, entry_name: str = "xlac_entry", triple: str = "",
          data_layout: str = "", optimize: bool = True, aligned_results: bool = False,
          native: bool = False, abi: bool = False,
          on_finished: Callable[[list], None] | None = None) -> Lowered:
    """Optimise a copy of ``module`` and emit it as LLVM IR (the input is not changed).

    ``optimize=False`` skips simplification and fusion (only calls are
    inlined): every instruction gets its own kernel — the reference the
    optimised pipeline is tested against.  ``aligned_results=True`` is the
    JIT runtime's promise that every result and temp buffer is 64-byte
    aligned (its pool's are): big results are then written without a run-time
    alignment test and a second version of their loop (see
    ``codegen/nontemporal.py``); ahead-of-time callers' buffers carry no such
    promise.  ``native=True``: the code runs on this host only (the JIT), so it
    may use the host's instructions where portable code would differ (see
    ``math_approx.use_native_scaling``).  A module with dynamic dimensions is
    padded first (``xlac.passes.dynamic_padder``): the code takes and returns
    padded arrays and the sizes, as ``Lowered.dynamic`` says.  ``abi=True``:
    the entry's parameter and result layouts are what a C caller passes and
    gets (an object file), so they are kept as they are or refused
    (``passes.layout_normalization``).  ``on_finished``: told of every
    function as soon as the emission is done with it
    (``ModuleEmitter.on_finished``; ``jit.StreamedCompile.finished``).
    """
    verify(module)
    cap = task_grid.REGION_CAP.set(default_num_threads() if native else None)
    try:
        return _lower(module, entry_name, triple, data_layout, optimize, aligned_results, native, abi, on_finished)
    finally:
        task_grid.REGION_CAP.reset(cap)


def _lower(module, entry_name, triple, data_layout, optimize, aligned_results, native, abi, on_finished):
    # Before the pipeline: jax's callbacks come with a one-device mesh the
    # partitioners would otherwise be the first to refuse.
    custom_call.check_no_host_callback(module)
    module = module.clone()
    signature = pad_dynamic(module)
    # 8-bit integer matrix products stay dots where a native kernel (AMX, VNNI) takes them.
    # The same for bf16 convolutions (as im2col + dot).
    native_int8 = any(gemm_native.unavailable(k) is None for k in gemm_native.PREFERENCE["int8"])
    native_bf16 = any(gemm_native.unavailable(k) is None for k in gemm_native.PREFERENCE["bf16"])
    # 8-bit and bf16 convolutions the AMX kernel reads from the input stay convolutions.
    direct = conv_amx.why_not if any(gemm_native.unavailable(k) is None for k in ("amxint8", "amxbf16")) \
        else None
    pipeline = codegen_pipeline(optimize=optimize, abi=abi, native_int8_dots=native_int8,
                                native_bf16_dots=native_bf16, direct_convolution=direct)
    pipeline.run(module)
    check_supported(module, expanded=True)
    emitter = ModuleEmitter(module, KERNELS, entry_name, triple, data_layout, aligned_results=aligned_results,
                            on_finished=on_finished)
    if native:
        use_native_scaling(emitter.llvm)
    llvm_module = emitter.emit()
    return Lowered(module, emitter.assignment_for(module.entry), llvm_module, entry_name,
                   emitter.assumed_alignment, emitter.polls_cancel, dict(pipeline.timings), signature,
                   service_custom_calls(module))


def service_custom_calls(module: HloModule) -> tuple:
    """(target, api_version, instruction) of the custom calls of ``module`` that
    go through ``opts->custom_call`` (all but jax's LAPACK targets)."""
    out = []
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode == "custom-call" and not custom_call.is_builtin(custom_call.target_of(inst)):
                out.append((custom_call.target_of(inst), custom_call.api_version_of(inst), inst.name))
    return tuple(out)
