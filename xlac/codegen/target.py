"""The machine code is made for: LLVM's native target, the host's CPU, its vector width.

Every question about the host (its triple, CPU name and features, vector
registers, what object code depends on) is answered here, so that the code
generator, the JIT, the GEMM library and the compile cache agree.
"""
from __future__ import annotations

import functools
import threading

import llvmlite
import llvmlite.binding as llvm

__all__ = ["init_llvm", "host_target_machine", "host_description", "host_vector_bits"]

_lock = threading.Lock()
_initialized = False


def init_llvm() -> None:
    """Initialise LLVM's native target and assembly printer (once per process)."""
    global _initialized
    with _lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _initialized = True


def host_target_machine(opt: int = 3, cpu: str | None = None, features: str | None = None,
                        triple: str | None = None, reloc: str = "default", codemodel: str = "jitdefault"):
    """A TargetMachine for the host CPU (name and features), or for ``triple``/``cpu``."""
    init_llvm()
    if triple is None:
        triple = llvm.get_process_triple()
        if cpu is None:
            cpu = llvm.get_host_cpu_name()
        if features is None:
            features = llvm.get_host_cpu_features().flatten()
    else:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu or "", features=features or "", opt=opt,
                                        reloc=reloc, codemodel=codemodel)


@functools.lru_cache(maxsize=1)
def host_description() -> tuple:
    """What object code for this host depends on: (process triple, CPU name,
    CPU features, llvmlite version, LLVM version) — part of the disk-cache key."""
    init_llvm()
    return (llvm.get_process_triple(), llvm.get_host_cpu_name(),
            llvm.get_host_cpu_features().flatten(), llvmlite.__version__,
            ".".join(map(str, llvm.llvm_version_info)))


@functools.lru_cache(maxsize=1)
def host_vector_bits() -> int:
    """Width of the host's vector registers (512 with AVX-512, 256 with AVX)."""
    try:
        init_llvm()
        feats = llvm.get_host_cpu_features()
    except Exception:  # pragma: no cover - no host information
        return 128
    if feats.get("avx512f"):
        return 512
    if feats.get("avx"):
        return 256
    return 128
