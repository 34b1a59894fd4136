"""LLVM back end: target machine for the host, O3 with the new pass manager, MCJIT.

``compile_ir(llvm_module, entry_name)`` returns a :class:`JitFunction` holding
the native entry point and the execution engine that owns its code (the code
lives as long as the object).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir

_lock = threading.Lock()
_initialized = False


def _init() -> None:
    global _initialized
    with _lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _initialized = True


def host_target_machine(opt: int = 3, cpu: str | None = None, features: str | None = None,
                        triple: str | None = None, reloc: str = "default", codemodel: str = "jitdefault"):
    """A TargetMachine for the host CPU (name and features), or for ``triple``/``cpu``."""
    _init()
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


def optimize(module_ref, tm, speed_level: int = 3) -> None:
    """Run LLVM's O3 pipeline (new pass manager) on a parsed module, in place."""
    pto = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = True
    pb = llvm.create_pass_builder(tm, pto)
    pm = pb.getModulePassManager()
    pm.run(module_ref, pb)


def parse_and_optimize(module: ir.Module | str, tm, speed_level: int = 3):
    """Parse textual/llvmlite IR, verify it and optimise it; returns the ModuleRef."""
    _init()
    ref = llvm.parse_assembly(str(module))
    ref.triple = tm.triple
    ref.data_layout = str(tm.target_data)
    ref.verify()
    optimize(ref, tm, speed_level)
    return ref


@dataclass
class JitFunction:
    address: int
    engine: object          # keeps the native code alive
    optimized_ir: str


def compile_ir(module: ir.Module | str, entry_name: str, speed_level: int = 3) -> JitFunction:
    """JIT-compile LLVM IR for the host; returns the entry's address and its engine."""
    from ..passes.pipeline import dump_directory, dump_text
    dumping = dump_directory() is not None  # XLAC_DUMP_TO: the IR before and after O3
    if dumping:
        dump_text(f"{entry_name}.llvm.ll", str(module))
    tm = host_target_machine()
    ref = parse_and_optimize(module, tm, speed_level)
    optimized = str(ref)
    if dumping:
        dump_text(f"{entry_name}.llvm-opt.ll", optimized)
    engine = llvm.create_mcjit_compiler(ref, tm)
    engine.finalize_object()
    address = engine.get_function_address(entry_name)
    if not address:
        raise RuntimeError(f"JIT: entry function {entry_name!r} not found")
    return JitFunction(address, engine, optimized)
