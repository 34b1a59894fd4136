"""The kernel candidates of ``dot`` and of dot output fusions (``fusion:kOutput``).

A dot of f32 or f64 (both operands and the result of one type) runs as a
packed, tiled GEMM or a matrix-vector loop; the code is split by concern:

* ``dot_plan.py`` -- :func:`plan_dot`: orientation, blocking, task grid,
  scratch (no IR);
* ``dot_library.py`` -- the call into the shared GEMM library
  (``codegen/gemm_library.py``) and :func:`library_variant`, which says
  whether the library can take a dot;
* ``dot_tasks.py`` -- the module's own code: the GEMM (``gemm_task.py``'s loop
  nest with compile-time sizes) for what the library does not take, and the
  matrix-vector loops.

Dots of bf16 x bf16 and of 8-bit integers to s32 run native micro-kernels
(``gemm_native``) in the library where the target has them: AMX tiles
(``.amx-bf16``, ``.amx-int8``: ``gemm_amx``), else AVX512_BF16 and
AVX512_VNNI vectors (``.bf16``, ``.vnni``).  Other dots of bf16
and f16 (also mixed with f32) run the same GEMM in f32, their operands
widened while packed: the ``.widen`` candidates, so that dumps say so.  Other element types (integers, complex), other mixed types and
matrix-vector products of halves keep the elemental loop (the ``loop``
kernel candidate).  Design notes and measurements: ``docs/dot.md``.
"""
from __future__ import annotations

from ...hlo.ir import HloInstruction
from .. import gemm_native
from ..kernel_choice import KernelCandidate
from .dot_library import emit_library, is_glue, library_variant
from .dot_plan import DotPlan, native_kinds, plan_dot, scratch_bytes
from .dot_tasks import emit_gemm, emit_gemv

#: Run plain GEMMs through the shared GEMM library (``codegen/gemm_library.py``)
#: rather than emitting the loop nest into every module (tests switch it off to
#: compare the two; read when a kernel is chosen).
USE_LIBRARY = True


def _widened_applies(widened: bool):
    """The plan's reason not to apply, or why the dot belongs to the other
    family of candidates (``widened``: narrow floats widened to f32)."""
    def applies(inst: HloInstruction) -> str | None:
        plan = plan_dot(inst)
        if plan is None:
            return plan_dot.why_not(inst)
        if plan.native is not None:
            return f"runs the native {gemm_native.INSTRUCTION[plan.native.kind]} kernel"
        if plan.widened != widened:
            return ("bf16/f16/f8/f4: widened to f32 by the .widen kernels" if plan.widened
                    else "no float narrower than f32 to widen")
        return None
    return applies


def _library_applies(inst: HloInstruction, widened: bool = False) -> str | None:
    why = _widened_applies(widened)(inst)
    if why is not None:
        return why
    plan = plan_dot(inst)
    if not USE_LIBRARY:
        return "the GEMM library is switched off (dot.USE_LIBRARY)"
    if library_variant(inst, plan) is None:
        return "a fused operand, a group that is not affine, or an epilogue changing the element type"
    return None


def _kind_applies(kind: str, widened: bool = False):
    def applies(inst: HloInstruction) -> str | None:
        why = _widened_applies(widened)(inst)
        if why is not None:
            return why
        plan = plan_dot(inst)
        return None if plan.kind == kind else f"a {plan.kind}, not a {kind}"
    return applies


def _native_applies(kind: str):
    """Whether the native kernel ``kind`` (``gemm_native``) runs the dot, else why not."""
    def applies(inst: HloInstruction) -> str | None:
        plan = plan_dot(inst)
        if plan is None:
            return plan_dot.why_not(inst)
        if kind not in native_kinds(plan.a_pt, plan.b_pt, plan.dot_pt):
            return f"no {'bf16 x bf16' if kind in ('bf16', 'amxbf16') else '8-bit integer'} operands"
        if plan.native is not None and plan.native.kind == kind:
            return None
        if kind in plan.native_why:
            return plan.native_why[kind]
        return f"runs the native {gemm_native.INSTRUCTION[plan.native.kind]} kernel"
    return applies


#: The dot kernels, in the order tried: a call into the shared GEMM library
#: (``gemm_library.py``), a matrix-vector loop, the module's own packed GEMM;
#: then, for narrow types, the native low-precision kernels (``gemm_native``,
#: in the library) and the widening ones.  (The f32 kernels first: a dump
#: shows a choice when candidates before it were skipped.)
LIBRARY_GEMM_AMX_BF16 = KernelCandidate("dot.library-gemm.amx-bf16", emit_library, _native_applies("amxbf16"),
                                        scratch_bytes, shareable=True)
LIBRARY_GEMM_AMX_INT8 = KernelCandidate("dot.library-gemm.amx-int8", emit_library, _native_applies("amxint8"),
                                        scratch_bytes, shareable=True)
LIBRARY_GEMM_BF16 = KernelCandidate("dot.library-gemm.bf16", emit_library, _native_applies("bf16"), scratch_bytes,
                                    shareable=True)
LIBRARY_GEMM_VNNI = KernelCandidate("dot.library-gemm.vnni", emit_library, _native_applies("vnni"), scratch_bytes,
                                    shareable=True)
LIBRARY_GEMM = KernelCandidate("dot.library-gemm", emit_library, _library_applies, scratch_bytes, shareable=True,
                               glue=is_glue)
GEMV = KernelCandidate("dot.gemv", emit_gemv, _kind_applies("gemv"), scratch_bytes, shareable=True)
GEMM = KernelCandidate("dot.gemm", emit_gemm, _kind_applies("gemm"), scratch_bytes, shareable=True)
#: The same GEMMs for dots of floats narrower than f32 (bf16, f16, f8, f4): f32 arithmetic, operands widened while packed.
LIBRARY_GEMM_WIDEN = KernelCandidate("dot.library-gemm.widen", emit_library,
                                     lambda inst: _library_applies(inst, True), scratch_bytes, shareable=True)
GEMM_WIDEN = KernelCandidate("dot.gemm.widen", emit_gemm, _kind_applies("gemm", True), scratch_bytes,
                             shareable=True)
CANDIDATES = (LIBRARY_GEMM, GEMV, GEMM, LIBRARY_GEMM_AMX_BF16, LIBRARY_GEMM_BF16, LIBRARY_GEMM_AMX_INT8,
              LIBRARY_GEMM_VNNI, LIBRARY_GEMM_WIDEN, GEMM_WIDEN)

__all__ = ["CANDIDATES", "GEMM", "GEMM_WIDEN", "GEMV", "LIBRARY_GEMM", "LIBRARY_GEMM_AMX_BF16",
           "LIBRARY_GEMM_AMX_INT8", "LIBRARY_GEMM_BF16", "LIBRARY_GEMM_VNNI",
           "LIBRARY_GEMM_WIDEN", "USE_LIBRARY",
           "DotPlan", "library_variant", "plan_dot"]
