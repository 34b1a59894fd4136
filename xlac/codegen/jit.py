"""LLVM back end: target machine for the host, O3 with the new pass manager, MCJIT.

``compile_ir(llvm_module, entry_name)`` returns a :class:`JitFunction` holding
the native entry point and the execution engine that owns its code (the code
lives as long as the object).  The optimised module is emitted as an object
file by the host TargetMachine and that object is loaded into MCJIT;
``load_object(data, entry_name)`` loads such an object again (the on-disk
cache of ``xlac.runtime.disk_cache``) without parsing or optimising IR.

Memory: an engine keeps only its code, the object and a TargetMachine of its
own that never generated code (~50 KiB besides ~3x the object's size); each
module is parsed into an LLVMContext of its own and its pass pipeline is
freed after use, so a compilation leaves nothing behind once its engine goes.
"""
from __future__ import annotations

import threading
import time

import re
from typing import Callable

import llvmlite.binding as llvm
from llvmlite import ir

from ..passes.pipeline import dump_directory, dump_module, dump_text
from .nontemporal import NAMED, mark_stores, prepare

from .target import host_target_machine, init_llvm

def optimize(module_ref, tm, speed_level: int = 3, mark_nontemporal: bool = False):
    """Run LLVM's O3 pipeline (new pass manager) on a parsed module; returns the
    optimised module: ``module_ref`` itself, or, with ``mark_nontemporal`` (the
    module has a ``!xlac.nontemporal`` group), a re-parsed copy whose stores in
    that group were marked non-temporal afterwards (``nontemporal.mark_stores``)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = True
    pb = llvm.create_pass_builder(tm, pto)
    pm = pb.getModulePassManager()
    try:
        pm.run(module_ref, pb)
    finally:
        _free_pass_manager(pm)
    if mark_nontemporal:
        marked = mark_stores(str(module_ref))
        if marked is not None:
            module_ref = llvm.parse_assembly(marked, llvm.create_context())   # see parse_and_optimize
            module_ref.triple = tm.triple
            module_ref.data_layout = str(tm.target_data)
    return module_ref


def _free_pass_manager(pm) -> None:
    """Free a ModulePassManager now.  llvmlite (0.50 here) never does: its
    ``ModulePassManager`` lists ``ObjectRef`` before ``NewPassManager``, so
    ``ObjectRef``'s empty ``_dispose`` hides the one that frees it, and every
    O3 pipeline (~30 KiB, ~65 KiB once run) stayed for the life of the
    process.  Left to llvmlite where its class disposes of it itself."""
    try:
        from llvmlite.binding.newpassmanagers import NewPassManager
    except ImportError:
        return
    if type(pm)._dispose is llvm.ffi.ObjectRef._dispose and isinstance(pm, NewPassManager):
        NewPassManager._dispose(pm)
        pm.detach()             # closed: nothing disposes of it again


#: LLVM codegen options (on, off) in force while a module's kernels go
#: through the backend (not the GEMM library's micro-kernels, compiled once
#: with LLVM's defaults).  Loop strength reduction took up to 40% of the
#: backend's time on xlac's kernels (conv2d compiles in 90 -> 75 ms, MLP
#: 66 -> 56, maxpool 30 -> 23) and changed no benchmark kernel's speed: their
#: vectorised loops index through x86 addressing modes either way.
MODULE_CODEGEN_OPTIONS = (("-disable-lsr=true", "-disable-lsr=false"),)
_codegen_lock = threading.Lock()


def emit_object(tm, module_ref, module_options: bool = True) -> bytes:
    """``tm.emit_object(module_ref)``, with ``MODULE_CODEGEN_OPTIONS`` in force
    when ``module_options``.  LLVM's options are process-wide, so every
    emission holds a lock: the options are set and reset inside it, and an
    emission without them (the GEMM library, cached on disk for good) never
    runs while they are set."""
    with _codegen_lock:
        if not module_options:
            return tm.emit_object(module_ref)
        for on, _off in MODULE_CODEGEN_OPTIONS:
            llvm.set_option("xlac", on)
        try:
            return tm.emit_object(module_ref)
        finally:
            for _on, off in MODULE_CODEGEN_OPTIONS:
                llvm.set_option("xlac", off)


def assembly(module_ref, tm=None) -> str:
    """The assembly ``tm`` (default: this thread's host TargetMachine) emits for
    the optimised ``module_ref``, with the options the object code is emitted
    with (``xlac dump --asm``, ``XLAC_DUMP_TO``'s ``.s`` file)."""
    tm = tm or _codegen_target_machine()
    with _codegen_lock:
        for on, _off in MODULE_CODEGEN_OPTIONS:
            llvm.set_option("xlac", on)
        try:
            return tm.emit_assembly(module_ref)
        finally:
            for _on, off in MODULE_CODEGEN_OPTIONS:
                llvm.set_option("xlac", off)


def parse_and_optimize(module: ir.Module | str, tm, speed_level: int = 3):
    """Parse textual/llvmlite IR, verify it and optimise it; returns the ModuleRef.

    The module gets an LLVMContext of its own, freed with it: in the global
    context its constants (a big constant array: its whole data) and metadata
    would stay for the life of the process, and two threads compiling at once
    would share one context, which LLVM does not allow."""
    init_llvm()
    text = prepare(str(module))
    ref = llvm.parse_assembly(text, llvm.create_context())
    ref.triple = tm.triple
    ref.data_layout = str(tm.target_data)
    ref.verify()
    return optimize(ref, tm, speed_level, mark_nontemporal=f"!{NAMED}" in text)


class JitFunction:
    """Native code loaded into an MCJIT engine.

    ``address``: the entry function; ``engine``: owns the code (it lives as long
    as this object); ``object_code``: the relocatable object the engine loaded
    (what the on-disk cache stores; None once a holder that needs only the
    code dropped it: the engine has its own copy); ``timings``: seconds per
    phase (``optimize``, ``codegen``, ``load``).
    """

    __slots__ = ("address", "engine", "object_code", "timings", "_optimized")

    def __init__(self, address: int, engine, object_code: bytes | None = None, optimized=None,
                 timings: dict | None = None):
        self.address = address
        self.engine = engine
        self.object_code = object_code
        self._optimized = optimized        # a ModuleRef (printed on demand), a str, or None
        self.timings = timings or {}

    @property
    def optimized_ir(self) -> str | None:
        """The optimised LLVM IR (None when the code was loaded from an object)."""
        if self._optimized is not None and not isinstance(self._optimized, str):
            self._optimized = str(self._optimized)
        return self._optimized


#: Names of the shared GEMM library's functions start so (``gemm_library``).
LIBRARY_PREFIX = "xlac_gemm_"


def load_object(data: bytes, entry_name: str, tm=None,
                before_load: Callable[[bytes], None] | None = None) -> JitFunction:
    """Load a relocatable object (from :func:`compile_ir` or ``tm.emit_object``)
    into a fresh MCJIT engine, without parsing or optimising any IR.

    ``before_load(data)`` runs first: for a module's object, it is
    ``gemm_library.ensure_symbols``, which loads the GEMM library functions
    the object calls (MCJIT resolves them through ``add_symbol`` when it links
    the object); the library's own objects pass ``gemm_library.defines_itself``.
    Without it, raises ``RuntimeError`` when an object names a library
    function the JIT linker does not know yet (LLVM would abort the process).

    ``data`` must come from a TargetMachine made like :func:`host_target_machine`
    for this host: it is not checked here (the disk cache keys on the host).
    """
    t0 = time.perf_counter()
    if before_load is not None:
        before_load(data)
    elif LIBRARY_PREFIX.encode() in data:
        _check_library_known(data)
    if tm is None:
        tm = host_target_machine()
    empty = llvm.parse_assembly("")
    empty.triple = tm.triple
    empty.data_layout = str(tm.target_data)
    engine = llvm.create_mcjit_compiler(empty, tm)
    engine.add_object_file(llvm.ObjectFileRef.from_data(data))  # the engine takes the binary
    engine.finalize_object()
    address = engine.get_function_address(entry_name)
    if not address:
        raise RuntimeError(f"JIT: entry function {entry_name!r} not found in the object")
    return JitFunction(address, engine, data, None, {"load": time.perf_counter() - t0})


def _check_library_known(data: bytes) -> None:
    """Raise unless every GEMM library function ``data`` leaves undefined is
    known to the JIT linker already."""
    for name in set(re.findall(rb"xlac_gemm_[0-9a-z_]+", data)):
        if not llvm.address_of_symbol(name.decode()):
            raise RuntimeError(f"JIT: the object calls {name.decode()} of the GEMM library: load it "
                               f"with before_load=gemm_library.ensure_symbols")


def compile_ir(module: ir.Module | str, entry_name: str, speed_level: int = 3,
               before_load: Callable[[bytes], None] | None = None, module_options: bool = True,
               keep_optimized: bool = True) -> JitFunction:
    """JIT-compile LLVM IR for the host; returns the entry's address and its engine.

    The optimised module is turned into an object file with the host
    TargetMachine (``tm.emit_object``) and that object is loaded into MCJIT, so
    code compiled now and code loaded later from the disk cache are the very
    same bytes (``JitFunction.object_code``).  ``module_options``: with
    ``MODULE_CODEGEN_OPTIONS`` (see :func:`emit_object`).  ``before_load``: as
    :func:`load_object`.  ``keep_optimized``
    (default True): keep the optimised module for ``optimized_ir``; False frees
    it at once (~90 KiB for a small module, MiBs for a big one).
    """
    dumping = dump_directory() is not None  # XLAC_DUMP_TO: the IR before and after O3, the assembly
    t0 = time.perf_counter()
    tm = _codegen_target_machine()
    with dump_module(entry_name):           # inside xlac.jit: that module's number and name
        if dumping:
            dump_text("ir-no-opt.ll", str(module))
            t0 = time.perf_counter()
        ref = parse_and_optimize(module, tm, speed_level)
        t1 = time.perf_counter()
        if dumping:
            dump_text("ir-with-opt.ll", str(ref))
            dump_text("s", assembly(ref, tm))
    data = emit_object(tm, ref, module_options)
    t2 = time.perf_counter()
    # The engine gets a TargetMachine of its own (it takes ownership), not
    # ``tm``: after optimising and emitting code ``tm`` holds a subtarget
    # (instruction, register and lowering tables, ~750 KiB), which an engine
    # would keep for as long as its code lives.
    fn = load_object(data, entry_name, None, before_load)
    fn._optimized = ref if keep_optimized else None
    fn.timings = {"optimize": t1 - t0, "codegen": t2 - t1, "load": fn.timings["load"]}
    return fn


_thread_state = threading.local()


def _codegen_target_machine():
    """This thread's TargetMachine for optimising and emitting modules, made once.

    Reused because a new one builds its subtarget (~750 KiB of tables) again
    on first use, ~0.7 ms of a small module's compilation; one per thread
    because a TargetMachine's subtarget map is not safe to share between
    threads.  Objects emitted with it are the same bytes as with a new one.
    """
    tm = getattr(_thread_state, "tm", None)
    if tm is None:
        tm = _thread_state.tm = host_target_machine()
    return tm
