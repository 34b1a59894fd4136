"""The machine code is made for: LLVM's target triple, CPU name and features, and what follows from them.

Every question about the target (its triple, CPU name and features, vector
registers, what object code depends on) is answered here, so that the code
generator, the JIT, the GEMM library, the compile cache and the AOT writer agree.

**The target** (:func:`current`) is this host — its triple and the CPU name and
features LLVM detects — unless something says otherwise:

* ``XLAC_TARGET_CPU`` / ``XLAC_TARGET_FEATURES`` in the environment (or
  :func:`override`, which sets them, so worker processes inherit them): code for
  that LLVM CPU name (with only its own features, plus ``XLAC_TARGET_FEATURES``),
  or for the host's CPU with ``XLAC_TARGET_FEATURES`` (e.g. ``-avx512f``) on top.
  Tests that look at generated code pin the target so, and so give the same
  answer on every machine; a JIT-compiled call refuses to run code that needs a
  feature this CPU lacks (:func:`check_runnable`) instead of stopping on an
  illegal instruction.
* :func:`using`, for the calling thread only: ``xlac.compile_aot`` lowers a
  module for the CPU its object is for.

**Features** (:func:`features_of`): which of the x86 instruction-set extensions
in :data:`X86_FEATURES` a target's code may use.  For the host they are LLVM's
host detection; for a named CPU or a feature string, LLVM itself is asked
(:func:`_probe_features`): it has no query for a CPU's implied features in its
C API, but its inliner merges a function into a caller only when the callee's
features are a subset of the caller's.
"""
from __future__ import annotations

import functools
import os
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass

import llvmlite
import llvmlite.binding as llvm

__all__ = ["init_llvm", "Target", "host", "current", "using", "override", "CPU_ENV", "FEATURES_ENV",
           "X86_FEATURES", "features_of", "check_runnable", "target_machine", "host_target_machine",
           "host_description", "host_vector_bits", "vector_bits"]

_lock = threading.Lock()
_initialized = False

CPU_ENV = "XLAC_TARGET_CPU"
FEATURES_ENV = "XLAC_TARGET_FEATURES"

#: The x86 instruction-set extensions xlac records and checks, by LLVM's names,
#: in CPUID order.  ``runtime/xlac_runtime.h`` has the same names with their
#: CPUID bits (``xlac_cpu_has_feature``); a test checks the two agree.
#: Tuning flags (``prefer-256-bit``) and features every x86-64 has are left out.
X86_FEATURES = (
    # CPUID leaf 1
    "sse2", "sse3", "pclmul", "ssse3", "fma", "sse4.1", "sse4.2", "movbe", "popcnt", "aes", "avx", "f16c",
    # leaf 7, subleaf 0
    "bmi", "avx2", "bmi2", "avx512f", "avx512dq", "adx", "avx512ifma", "avx512cd", "sha", "avx512bw",
    "avx512vl", "avx512vbmi", "avx512vbmi2", "gfni", "vaes", "vpclmulqdq", "avx512vnni", "avx512bitalg",
    "avx512vpopcntdq", "amx-bf16", "avx512fp16", "amx-tile", "amx-int8",
    # leaf 7, subleaf 1
    "avxvnni", "avx512bf16", "amx-fp16", "avxifma", "avxvnniint8", "avxneconvert",
    # leaf 0x80000001
    "lzcnt",
)


def init_llvm() -> None:
    """Initialise LLVM's native target and assembly printer (once per process)."""
    global _initialized
    with _lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _initialized = True


@dataclass(frozen=True)
class Target:
    """What code is generated for: an LLVM triple, CPU name ("" for the
    triple's generic CPU) and feature string ("+avx2,-avx512f,...": changes to
    the CPU's own features; "" for none)."""

    triple: str
    cpu: str
    features: str

    @property
    def is_x86(self) -> bool:
        return self.triple.split("-")[0] in ("x86_64", "i386", "i486", "i586", "i686")


@functools.lru_cache(maxsize=1)
def host() -> Target:
    """This machine: the process triple, the CPU name and features LLVM detects."""
    init_llvm()
    return Target(llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())


_local = threading.local()


def current() -> Target:
    """The target code is generated for now: this thread's (:func:`using`),
    else the environment's (``XLAC_TARGET_CPU``, ``XLAC_TARGET_FEATURES``),
    else the host."""
    target = getattr(_local, "target", None)
    if target is not None:
        return target
    cpu = os.environ.get(CPU_ENV) or None
    features = os.environ.get(FEATURES_ENV) or None
    if cpu is None and features is None:
        return host()
    h = host()
    if cpu is None:         # the host's CPU, its features changed
        return Target(h.triple, h.cpu, f"{h.features},{features}")
    return Target(h.triple, cpu, features or "")


@contextmanager
def using(target: Target):
    """Generate code for ``target`` on this thread (``compile_aot``)."""
    saved = getattr(_local, "target", None)
    _local.target = target
    try:
        yield target
    finally:
        _local.target = saved


@contextmanager
def override(cpu: str | None = None, features: str | None = None):
    """Generate code for LLVM CPU ``cpu`` and/or ``features`` in this process
    (and the worker processes it starts): sets ``XLAC_TARGET_CPU`` and
    ``XLAC_TARGET_FEATURES`` (an argument left None unsets its variable) and
    restores them afterwards.  Yields the :class:`Target`; a CPU or feature LLVM
    does not know is a ``ValueError`` at once."""
    saved = {name: os.environ.get(name) for name in (CPU_ENV, FEATURES_ENV)}
    for name, value in ((CPU_ENV, cpu), (FEATURES_ENV, features)):
        if value:
            os.environ[name] = value
        else:
            os.environ.pop(name, None)
    try:
        target = current()
        _checked(target)
        yield target
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# ---------------------------------------------------------------------------------------
# Target machines
# ---------------------------------------------------------------------------------------

def target_machine(target: Target, opt: int = 3, reloc: str = "default", codemodel: str = "jitdefault"):
    """A TargetMachine for ``target``; a triple, CPU or feature LLVM does not
    know is a ``ValueError`` (see :func:`_checked`)."""
    _checked(target)
    return _make(target, opt, reloc, codemodel)


def _make(target: Target, opt: int, reloc: str, codemodel: str):
    init_llvm()
    if target.triple != host().triple:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
    return llvm.Target.from_triple(target.triple).create_target_machine(
        cpu=target.cpu, features=target.features, opt=opt, reloc=reloc, codemodel=codemodel)


@functools.lru_cache(maxsize=64)
def _checked(target: Target) -> None:
    """Raise ``ValueError`` unless LLVM knows ``target``'s triple, CPU and features.

    LLVM only warns on stderr about an unknown CPU or feature (and then ignores
    it, or later aborts the process), so the warnings printed while a machine
    is made are captured and turned into the error (once per target)."""
    if target == host():
        return
    what = f"target {target.triple!r}" + (f", cpu {target.cpu!r}" if target.cpu else "") + \
        (f", features {target.features!r}" if target.features else "")
    if target == current() and target != getattr(_local, "target", None):
        what += f" (from {CPU_ENV}/{FEATURES_ENV})"
    try:
        with tempfile.TemporaryFile() as log:
            saved = os.dup(2)
            try:
                os.dup2(log.fileno(), 2)
                _make(target, 0, "default", "jitdefault")
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            log.seek(0)
            warnings = log.read().decode(errors="replace").strip()
    except RuntimeError as ex:
        raise ValueError(f"{what}: {ex}") from None
    if warnings:
        raise ValueError(f"{what}: {warnings.splitlines()[0]}")


def host_target_machine(opt: int = 3, cpu: str | None = None, features: str | None = None,
                        triple: str | None = None, reloc: str = "default", codemodel: str = "jitdefault"):
    """A TargetMachine for the current target (:func:`current`), or for
    ``triple``/``cpu``/``features`` where given (on the current triple, a CPU
    given without features gets only its own)."""
    base = current()
    if triple is not None:
        target = Target(triple, cpu or "", features or "")
    elif cpu is not None or features is not None:
        target = Target(base.triple, base.cpu if cpu is None else cpu,
                        features if features is not None else ("" if cpu is not None else base.features))
    else:
        target = base
    return target_machine(target, opt, reloc, codemodel)


# ---------------------------------------------------------------------------------------
# Features
# ---------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def features_of(target: Target) -> tuple:
    """The :data:`X86_FEATURES` ``target``'s code may use, in that order (none
    for a triple that is not x86)."""
    if not target.is_x86:
        return ()
    if target == host():
        flags = llvm.get_host_cpu_features()
        return tuple(f for f in X86_FEATURES if flags.get(f))
    _checked(target)
    return _probe_features(target)


def has_f16c(target: Target | None = None) -> bool:
    """Whether ``target`` (default: the current one, :func:`current`) converts
    between f16 and f32 in one instruction (F16C's ``vcvtph2ps`` and
    ``vcvtps2ph``, exact and rounding to nearest even): LLVM's ``fpext`` and
    ``fptrunc`` of ``half`` are those instructions there, libcalls elsewhere."""
    return "f16c" in features_of(target or current())


def _probe_features(target: Target) -> tuple:
    """Ask LLVM which :data:`X86_FEATURES` ``target`` has.

    A caller compiled for ``target`` calls one small function per feature F
    whose ``target-features`` are the target's plus ``+F``; LLVM's inliner
    merges such a function into its caller only when the callee's features are
    a subset of the caller's (``X86TTIImpl::areInlineCompatible``), i.e. when
    the target has F already.  The calls left after O2 name what it lacks."""
    base = f"{target.features}," if target.features else ""
    lines = ["@xlac.sink = global i32 0"]
    for k, feature in enumerate(X86_FEATURES):
        lines += [f"define internal void @f{k}() #{k} {{",
                  f"  store volatile i32 {k}, ptr @xlac.sink",
                  "  ret void", "}",
                  f'attributes #{k} = {{ "target-features"="{base}+{feature}" }}']
    lines += ["define void @probe() {"] + [f"  call void @f{k}()" for k in range(len(X86_FEATURES))] + \
        ["  ret void", "}"]
    tm = _make(target, 2, "default", "jitdefault")
    module = llvm.parse_assembly("\n".join(lines), llvm.create_context())
    module.triple = tm.triple
    module.data_layout = str(tm.target_data)
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=2))
    pb.getModulePassManager().run(module, pb)
    body = str(module.get_function("probe"))
    return tuple(f for k, f in enumerate(X86_FEATURES) if f"@f{k}()" not in body)


def check_runnable(target: Target | None = None) -> None:
    """Raise ``RuntimeError`` when code for ``target`` (default: the current
    one) may use an instruction-set extension this CPU lacks: run, it could
    stop the process on an illegal instruction."""
    target = target or current()
    if target == host():
        return
    missing = [f for f in features_of(target) if f not in features_of(host())]
    if missing:
        setting = ", ".join(f"{name}={os.environ[name]!r}" for name in (CPU_ENV, FEATURES_ENV)
                            if os.environ.get(name)) or f"CPU {target.cpu!r}"
        raise RuntimeError(f"code generated for the target {setting} may use {', '.join(missing)}, "
                           f"which this CPU ({host().cpu}) lacks: it cannot run here")


# ---------------------------------------------------------------------------------------
# What follows from the target
# ---------------------------------------------------------------------------------------

def host_description() -> tuple:
    """What object code for the current target depends on: (triple, CPU name,
    CPU features, llvmlite version, LLVM version) — part of the disk-cache key."""
    return _description(current())


@functools.lru_cache(maxsize=64)
def _description(target: Target) -> tuple:
    return (target.triple, target.cpu, target.features, llvmlite.__version__,
            ".".join(map(str, llvm.llvm_version_info)))


def vector_bits(target: Target) -> int:
    """Width of ``target``'s vector registers (512 with AVX-512, 256 with AVX)."""
    try:
        feats = features_of(target)
    except Exception:  # pragma: no cover - no target information
        return 128
    if "avx512f" in feats:
        return 512
    if "avx" in feats:
        return 256
    return 128


def host_vector_bits() -> int:
    """Width of the current target's vector registers (:func:`vector_bits`)."""
    return vector_bits(current())
