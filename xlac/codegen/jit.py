"""LLVM back end: target machine for the host (or the CPU ``XLAC_TARGET_CPU``
names: ``target.current``), LLVM's O2/O3 pipelines (``PROGRAM_SPEED_LEVEL``,
``LIBRARY_SPEED_LEVEL``) with the new pass manager, MCJIT.

``compile_ir(llvm_module, entry_name)`` returns a :class:`JitFunction` holding
the native entry point and the execution engine that owns its code (the code
lives as long as the object).  The optimised module is emitted as an object
file by the host TargetMachine and that object is loaded into MCJIT;
``load_object(data, entry_name)`` loads such an object again (the on-disk
cache of ``xlac.runtime.disk_cache``) without parsing or optimising IR.

Parallel compilation: a big module is split into parts
(:func:`xlac.codegen.split.plan_split`), ``PARTS_PER_THREAD`` per compile
thread (``XLAC_COMPILE_THREADS``, :func:`compile_threads`), which are parsed,
optimised and emitted on that many threads — each part handed to a thread as
soon as it is printed, while the next is printed —, each part in an
LLVMContext of its own with its thread's TargetMachine (the calls that take
the time run without llvmlite's global lock: ``xlac.codegen.unlocked``).  The
parts' objects are loaded into one MCJIT engine, which links them; the entry
stays one function.  ``JitFunction.object_code`` is then the parts' objects
one after the other and ``JitFunction.object_parts`` their sizes.

Compiling while emitting (:class:`StreamedCompile`): the emitter reports the
kernels it has finished, and every ``BATCH_INSTRUCTIONS`` of them go to a
worker as a part of their own (``split.StreamSplit``) while Python emits the
rest; meanwhile one thread fewer compiles (the emitting thread has a core).
What is left when the emission ends is split and compiled as above.

Memory: an engine keeps only its code, the object and a TargetMachine of its
own that never generated code (~50 KiB besides ~3x the object's size); each
module is parsed into an LLVMContext of its own and its pass pipeline is
freed after use, so a compilation leaves nothing behind once its engine goes.
"""
from __future__ import annotations

import heapq
import os
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Callable, NamedTuple, Sequence

import llvmlite.binding as llvm
from llvmlite import ir

from ..hlo.ir import gc_paused
from ..passes.pipeline import dump_directory, dump_module, dump_text
from . import perf_map, unlocked
from .nontemporal import NAMED, mark_stores, prepare
from .split import SplitPlan, StreamSplit, module_weight, plan_split, split_module
from .target import check_runnable, current, host_target_machine, init_llvm

#: The loop metadata string of a loop to unroll completely (``loops.full_unroll_hints``).
FULL_UNROLL = "llvm.loop.unroll.full"
#: What marks fast-math arithmetic in a part's text (``emitter.fast_math``).
FAST_MATH = " contract "


def slp_vectorizes(text: str) -> bool:
    """Whether the SLP vectoriser runs on a module or part of IR ``text``:
    where a loop is unrolled completely (a direct convolution's window, a
    reduce-window's, a short innermost loop) and there is no fast-math code.
    Elsewhere the loop vectoriser does the work, and SLP's search over every
    block was ~8% of the O3 pipeline on the model set for nothing
    measurable.  Fast-math code (a float reduction, ``emitter.fast_math``)
    never gets it, wherever it goes: SLP may reorder its sums, so it must be
    compiled the same way in every split and in an AOT object (which uses
    this rule too); when it did get SLP (in any part holding some), SLP's
    search over a transformer step's dropout-masked means was a third of
    their O3 time, and the 16 model programs compiled 5% faster (CPU 6%)
    without it at the same run time (geometric means; the equinox
    transformer step 8-20% faster to compile, 2-3% slower to run)."""
    return FULL_UNROLL in text and FAST_MATH not in text


def optimize(module_ref, tm, speed_level: int = 3, mark_nontemporal: bool = False, owned: bool = False,
             vectorize: bool = True, slp: bool | None = None):
    """Run LLVM's O``speed_level`` pipeline (new pass manager; no unrolling
    unless asked) on a parsed module; returns the optimised module: ``module_ref`` itself, or, with ``mark_nontemporal`` (the
    module has a ``!xlac.nontemporal`` group), a re-parsed copy whose stores in
    that group were marked non-temporal afterwards (``nontemporal.mark_stores``).
    ``owned``: the module is in an LLVMContext of its own and ``tm`` is this
    thread's, so the pipeline runs without llvmlite's lock (``unlocked``).
    ``vectorize=False``: no loop or SLP vectoriser (a cold part, see ``COLD``);
    ``slp``: the SLP vectoriser on or off (default: as ``vectorize``)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    pto.loop_vectorization = vectorize
    pto.slp_vectorization = vectorize if slp is None else slp
    # Loops are unrolled only where they ask (``llvm.loop.unroll.full``,
    # ``loops.full_unroll_hints``): LLVM's unrolling of every short loop made
    # a training step's optimised code four times its size, took half of its
    # compile time and ran it slower (docs/compile_time.md, section 3).
    pto.loop_unrolling = False
    pb = llvm.create_pass_builder(tm, pto)
    pm = pb.getModulePassManager()
    try:
        if owned:
            unlocked.run_module_pipeline(pm, module_ref, pb)
        else:
            pm.run(module_ref, pb)
    finally:
        _free_pass_manager(pm)
    if mark_nontemporal:
        marked = mark_stores(unlocked.print_module(module_ref) if owned else str(module_ref))
        if marked is not None:
            module_ref = _parse(marked, tm, owned)
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


class _CodegenOptions:
    """Who may generate code under which LLVM options.  The options are
    process-wide: any number of emissions with ``MODULE_CODEGEN_OPTIONS`` may
    run at once (the parts of a module, several modules), the first one sets
    them and the last one resets them; an emission with LLVM's defaults runs
    alone, and once it waits, new ones with the options wait behind it."""

    def __init__(self):
        self._cond = threading.Condition()
        self._with_options = 0          # emissions running with the module options
        self._defaults = 0              # emissions with LLVM's defaults running or waiting

    @contextmanager
    def module(self):
        with self._cond:
            while self._defaults:
                self._cond.wait()
            if self._with_options == 0:
                for on, _off in MODULE_CODEGEN_OPTIONS:
                    llvm.set_option("xlac", on)
            self._with_options += 1
        try:
            yield
        finally:
            with self._cond:
                self._with_options -= 1
                if self._with_options == 0:
                    for _on, off in MODULE_CODEGEN_OPTIONS:
                        llvm.set_option("xlac", off)
                    self._cond.notify_all()

    @contextmanager
    def defaults(self):
        with self._cond:
            self._defaults += 1
            while self._with_options:
                self._cond.wait()
        try:
            yield
        finally:
            with self._cond:
                self._defaults -= 1
                self._cond.notify_all()


_codegen_options = _CodegenOptions()
#: One emission with LLVM's defaults at a time (they share llvmlite's lock anyway).
_defaults_lock = threading.Lock()


def emit_object(tm, module_ref, module_options: bool = True, owned: bool = False) -> bytes:
    """``tm.emit_object(module_ref)``, with ``MODULE_CODEGEN_OPTIONS`` in force
    when ``module_options`` (see :class:`_CodegenOptions`: emissions with them
    run concurrently, never beside one without).  ``owned``: as :func:`optimize`."""
    if not module_options:
        with _defaults_lock, _codegen_options.defaults():
            return unlocked.emit_object(tm, module_ref) if owned else tm.emit_object(module_ref)
    with _codegen_options.module():
        return unlocked.emit_object(tm, module_ref) if owned else tm.emit_object(module_ref)


def _parse(text: str, tm, owned: bool = True):
    """``text`` parsed into a new LLVMContext, for ``tm``'s target."""
    context = llvm.create_context()
    ref = unlocked.parse_assembly(text, context) if owned else llvm.parse_assembly(text, context)
    _set_target(ref, tm)
    return ref


def _set_target(ref, tm) -> None:
    """``ref.triple`` and ``ref.data_layout`` set to ``tm``'s.  (llvmlite's
    setters pass a ``create_string_buffer``: a new ctypes class per call, left
    to the cyclic collector; a compilation leaves no garbage.)"""
    llvm.ffi.lib.LLVMPY_SetTarget(ref, tm.triple.encode())
    llvm.ffi.lib.LLVMPY_SetDataLayout(ref, str(tm.target_data).encode())


def assembly(module_ref, tm=None) -> str:
    """The assembly ``tm`` (default: one of the pool's host TargetMachines) emits
    for the optimised ``module_ref``, with the options the object code is
    emitted with (``xlac dump --asm``, ``XLAC_DUMP_TO``'s ``.s`` file)."""
    if tm is None:
        with _pooled_target_machine() as tm:
            return assembly(module_ref, tm)
    with _codegen_options.module():
        return tm.emit_assembly(module_ref)


def parse_and_optimize(module: ir.Module | str, tm, speed_level: int = 3, owned: bool = False,
                       vectorize: bool = True):
    """Parse textual/llvmlite IR, verify it and optimise it; returns the ModuleRef.

    The module gets an LLVMContext of its own, freed with it: in the global
    context its constants (a big constant array: its whole data) and metadata
    would stay for the life of the process, and two threads compiling at once
    would share one context, which LLVM does not allow.  ``owned``: ``tm`` is
    this thread's own (the calls run without llvmlite's lock, see ``unlocked``)."""
    init_llvm()
    text = prepare(str(module))
    ref = _parse(text, tm, owned)
    if owned:
        unlocked.verify(ref)
    else:
        ref.verify()
    slp = vectorize and slp_vectorizes(text)
    return optimize(ref, tm, speed_level, mark_nontemporal=f"!{NAMED}" in text, owned=owned, vectorize=vectorize,
                    slp=slp)


class JitFunction:
    """Native code loaded into an MCJIT engine.

    ``address``: the entry function; ``engine``: owns the code (it lives as long
    as this object); ``object_code``: the relocatable object(s) the engine
    loaded, one after the other (what the on-disk cache stores; None once a
    holder that needs only the code dropped it: the engine has its own copy);
    ``object_parts``: the size of each object in ``object_code`` (one entry
    unless the module was compiled in parts); ``timings``: seconds per phase
    (``split``, ``optimize`` and ``codegen`` summed over the parts,
    ``backend``: the wall time of optimising and emitting them all, ``load``).
    """

    __slots__ = ("address", "engine", "object_code", "object_parts", "timings", "_optimized")

    def __init__(self, address: int, engine, object_code: bytes | None = None, optimized=None,
                 timings: dict | None = None, object_parts: tuple = ()):
        self.address = address
        self.engine = engine
        self.object_code = object_code
        self.object_parts = tuple(object_parts) or ((len(object_code),) if object_code else ())
        self._optimized = optimized        # ModuleRefs (printed on demand), a str, or None
        self.timings = timings or {}

    @property
    def optimized_ir(self) -> str | None:
        """The optimised LLVM IR (None when the code was loaded from an object);
        a module compiled in parts gives every part, each headed by a
        ``; ---- part K of N ----`` comment."""
        if self._optimized is not None and not isinstance(self._optimized, str):
            self._optimized = _join_parts([str(ref) for ref in self._optimized])
        return self._optimized


def _join_parts(texts: list[str]) -> str:
    if len(texts) == 1:
        return texts[0]
    return "\n".join(f"; ---- part {k} of {len(texts)} ----\n{t}" for k, t in enumerate(texts))


#: Names of the shared GEMM library's functions start so (``gemm_library``).
LIBRARY_PREFIX = "xlac_gemm_"
_ELF_MAGIC = b"\x7fELF"


def split_objects(data: bytes, parts: Sequence[int] | None) -> list[bytes]:
    """The objects of ``data``: ``parts`` gives their sizes, in order (None: one
    object).  Raises ``ValueError`` unless the sizes cover ``data`` exactly and
    every piece starts as an ELF object does."""
    if parts is None:
        return [data]
    sizes = list(parts)
    if not sizes or any(type(n) is not int or n <= 0 for n in sizes) or sum(sizes) != len(data):
        raise ValueError(f"object part sizes {sizes!r} do not cover {len(data)} bytes")
    out, at = [], 0
    for n in sizes:
        piece = data[at:at + n]
        if not piece.startswith(_ELF_MAGIC):
            raise ValueError(f"object part at byte {at} is not an ELF object")
        out.append(piece)
        at += n
    return out


def load_object(data: bytes, entry_name: str, tm=None,
                before_load: Callable[[bytes], None] | None = None,
                parts: Sequence[int] | None = None) -> JitFunction:
    """Load a relocatable object (from :func:`compile_ir` or ``tm.emit_object``)
    into a fresh MCJIT engine, without parsing or optimising any IR.  With
    ``parts`` (the sizes of consecutive objects in ``data``, as
    ``JitFunction.object_parts``), every object is loaded into the one engine,
    which links them (``ValueError`` when the sizes do not fit ``data``).

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
    objects = split_objects(data, parts)
    if before_load is not None:
        before_load(data)
    elif LIBRARY_PREFIX.encode() in data:
        _check_library_known(data)
    if tm is None:
        check_runnable()        # code for another CPU (XLAC_TARGET_CPU) only where this one can run it
        tm = host_target_machine()
    empty = llvm.parse_assembly("")
    _set_target(empty, tm)
    engine = llvm.create_mcjit_compiler(empty, tm)
    for obj in objects:
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))  # the engine takes the binary
    engine.finalize_object()
    address = engine.get_function_address(entry_name)
    if not address:
        raise RuntimeError(f"JIT: entry function {entry_name!r} not found in the object")
    if perf_map.enabled():
        perf_map.record(engine, objects)
    return JitFunction(address, engine, data, None, {"load": time.perf_counter() - t0},
                       tuple(len(o) for o in objects))


def _check_library_known(data: bytes) -> None:
    """Raise unless every GEMM library function ``data`` leaves undefined is
    known to the JIT linker already."""
    for name in set(re.findall(rb"xlac_gemm_[0-9a-z_]+", data)):
        if not llvm.address_of_symbol(name.decode()):
            raise RuntimeError(f"JIT: the object calls {name.decode()} of the GEMM library: load it "
                               f"with before_load=gemm_library.ensure_symbols")


# ---------------------------------------------------------------------------------------
# Compile threads and parts
# ---------------------------------------------------------------------------------------

COMPILE_THREADS_ENV = "XLAC_COMPILE_THREADS"
#: A part has at least this many LLVM instructions' worth (``split._cost``:
#: a function weighs ``split.FUNCTION_WEIGHT`` more): a part's own costs (its
#: pass pipeline, declarations and metadata parsed again, a thread hand-off,
#: one more object to link) are a few milliseconds, what O3 takes for a few
#: hundred instructions.  At 1,000 a small training step (a ResNet inference
#: step, ~3,400 lines of IR) compiles in two parts at once: 0.23 -> 0.18 s wall
#: on 2 cores for ~3% more CPU time; big modules are unchanged (600: no better).
MIN_PART_INSTRUCTIONS = 1000


def compile_threads() -> int:
    """Threads a compilation may use: ``XLAC_COMPILE_THREADS`` (read at each
    compilation; 1: no parallel compilation), else the CPUs this process may
    run on (``os.sched_getaffinity``).  A value that is not a positive integer
    means the default."""
    try:
        n = int(os.environ.get(COMPILE_THREADS_ENV, ""))
        if n >= 1:
            return n
    except ValueError:
        pass
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


#: Parts per compile thread: more parts than threads even out the threads'
#: work (parts differ in what LLVM makes of them) and start LLVM sooner (the
#: first part goes to a thread while the next is printed).  A part's own costs
#: are a few milliseconds (see ``MIN_PART_INSTRUCTIONS``).
PARTS_PER_THREAD = 2


def part_count(module: ir.Module | str, threads: int | None = None) -> int:
    """Parts to compile ``module`` in: ``PARTS_PER_THREAD`` per thread
    (``threads``, default :func:`compile_threads`), but none smaller than
    ``MIN_PART_INSTRUCTIONS``; one without threads; IR given as text is one part."""
    if not isinstance(module, ir.Module):
        return 1
    threads = compile_threads() if threads is None else threads
    if threads <= 1:
        return 1
    return max(1, min(PARTS_PER_THREAD * threads, module_weight(module) // MIN_PART_INSTRUCTIONS))


class _Workers:
    """The threads compiling parts besides the caller's: one executor, grown to
    the largest number asked for, made again in a forked child (which has
    none of its parent's threads)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pool = None
        self._size = 0
        self._pid = None

    def get(self, size: int) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None or self._pid != os.getpid() or size > self._size:
                if self._pool is not None and self._pid == os.getpid():
                    self._pool.shutdown(wait=False)
                self._pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="xlac-compile")
                self._size, self._pid = size, os.getpid()
            return self._pool


_workers = _Workers()


class _Part(NamedTuple):
    object_code: bytes
    optimized: object            # the optimised ModuleRef, or None
    optimize: float
    codegen: float


#: How parts are compiled, by what they hold: ``HOT`` kernels with LLVM's
#: ``PROGRAM_SPEED_LEVEL`` pipeline (the vectorisers on); ``COLD`` kernels
#: (one element's work, run once per call for nanoseconds,
#: ``emitter.COLD_MAX_WORK``; the glue around library calls,
#: ``KernelCandidate.glue``) and the ``ENTRY``
#: (``SplitPlan.cold``: a list of calls run once per call) with no
#: optimisation at all (O0: a GPT training step's entry, 438 KB of IR, 0.30
#: -> 0.19 s of LLVM; the 16 model programs compile 3% faster, the same run
#: times), and their machine code from the fast instruction selector and
#: register allocator (a TargetMachine of opt level 0): a training step's
#: entry is thousands of calls in one function, and the greedy register
#: allocator and the DAG selector took most of its ~0.9 s.  Cold kernels had
#: O1 and the full code generator: jax's 512 x 512 ``inv`` spent 110 ms of
#: its 250 ms compiling the LU's glue so (0.2 s now, the same run time); the
#: models' compile and run times did not move.
HOT, COLD, ENTRY = "hot", "cold", "entry"
CHEAP_SPEED_LEVEL = 0
#: LLVM's pipeline for a program's hot kernels (``compile_ir``,
#: ``StreamedCompile``): O2.  What O3 adds is mostly non-trivial loop
#: unswitching (a loop with a loop-invariant branch copied once per way, each
#: copy vectorised): a convolution's packing loops 52 -> 37 ms of LLVM, an
#: optimizer program's LLVM time -23%, the 16 model programs -2.5% of compile
#: time (wall and CPU, three interleaved A/B runs); the optimised IR of 24 of
#: the 30 benchmark kernels and 22 of the 37 jax operations is the same bits,
#: the others (convolutions' packing, epilogues, small while loops) run as
#: fast (interleaved A/B within an A/A run's noise).
PROGRAM_SPEED_LEVEL = 2
#: ... and for the GEMM library's functions (compiled once per machine): O3,
#: whose unswitching splits the GEMM driver's loops by case.
LIBRARY_SPEED_LEVEL = 3
CHEAP_CODEGEN_OPT = 0


def _compile_part(text: str, speed_level: int, module_options: bool, keep: bool, tier: str = HOT) -> _Part:
    """Parse, optimise and emit one part, on this thread with its own context
    and TargetMachine (``tier``: ``HOT``, ``COLD`` or ``ENTRY``, see there)."""
    t0 = time.perf_counter()
    cheap = tier != HOT
    with _pooled_target_machine(cheap) as tm:
        if cheap:
            ref = parse_and_optimize(text, tm, min(speed_level, CHEAP_SPEED_LEVEL), owned=True, vectorize=False)
        else:
            ref = parse_and_optimize(text, tm, speed_level, owned=True)
        t1 = time.perf_counter()
        data = emit_object(tm, ref, module_options, owned=True)
        t2 = time.perf_counter()
    if not keep:
        ref.close()
        ref = None
    return _Part(data, ref, t1 - t0, t2 - t1)


def _compile_parts(plan: SplitPlan | str, threads: int, speed_level: int, module_options: bool,
                   keep: bool) -> list[_Part]:
    """Every part compiled: one part (or IR given as text) on this thread; more
    on ``threads`` workers, each part handed over as soon as it is printed, so
    that LLVM works on the first parts while Python prints the next."""
    if isinstance(plan, str) or plan.count == 1:
        return [_compile_part(plan if isinstance(plan, str) else plan.text(0), speed_level, module_options,
                              keep)]
    pool = _workers.get(max(1, min(threads, plan.count)))
    # In order: part 0, the entry's, is the slowest to optimise (the entry is
    # one long function), so it starts first.
    futures = [pool.submit(_compile_part, plan.text(k), speed_level, module_options, keep,
                           ENTRY if k in plan.cold else HOT)
               for k in range(plan.count)]
    return [f.result() for f in futures]


#: Instructions of cold kernels (scalar ones, ``emitter.COLD_MAX_WORK``; the
#: glue around library calls, ``KernelCandidate.glue``) and what they call
#: that make a small module two parts, the cold one compiled cold beside the
#: rest, rather than one part compiled hot: jax's 512 x 512 cholesky (~580
#: instructions of glue) compiled in 0.14 s as one part, 0.09 s as two.  (At
#: 200, with cold parts at O1; compiled as the entry is, they cost less:
#: ``lstsq``'s LAPACK glue and dots, under 200, 0.11 -> 0.10 s as two parts.)
COLD_PART_INSTRUCTIONS = 50


#: Instructions of finished kernels that make a part compiled while the
#: module is still being emitted (see :class:`StreamedCompile`).
BATCH_INSTRUCTIONS = MIN_PART_INSTRUCTIONS
#: What is left when the emission ends is split into parts of at least this
#: many instructions' worth (``split.FUNCTION_WEIGHT``), smaller than
#: ``MIN_PART_INSTRUCTIONS``: the compile threads are then all free, and the
#: last kernels are the module's critical path.  jax's 512 x 512 cholesky, its
#: two hot loop fusions (~20 ms of LLVM each) in two parts: 73 -> 62 ms; the
#: models' compile times did not move.
TAIL_PART_INSTRUCTIONS = 100


#: The interpreter's switch interval (seconds) while a module is compiled
#: during its emission.  A compiling thread takes the GIL back after each
#: LLVM call (parse, pipeline, code generation, and the small calls around
#: them); with Python's 5 ms default it waited up to 5 ms each time for the
#: emitting thread to let go, and ran about half the time it had a core for
#: (a training step's emission: 0.18 s of LLVM work in 0.4 s of wall time;
#: at 0.5 ms, 0.33 s; the 16 models' compile wall time -6%).
SWITCH_INTERVAL = 0.0005


class _SwitchInterval:
    """``sys.setswitchinterval(SWITCH_INTERVAL)`` while any holder has it (it is
    process-wide): :meth:`acquire` by the first sets it unless it is already
    as short, :meth:`release` by the last puts the one it found back."""

    def __init__(self):
        self._lock = threading.Lock()
        self._holders = 0
        self._saved: float | None = None

    def acquire(self) -> None:
        with self._lock:
            if self._holders == 0:
                current = sys.getswitchinterval()
                self._saved = current if current > SWITCH_INTERVAL else None
                if self._saved is not None:
                    sys.setswitchinterval(SWITCH_INTERVAL)
            self._holders += 1

    def release(self) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and self._saved is not None:
                sys.setswitchinterval(self._saved)
                self._saved = None


_switch_interval = _SwitchInterval()


class StreamedCompile:
    """One module compiled in parts while it is being emitted (see the module
    docstring).  ``finished(functions)`` is the emitter's report
    (``ModuleEmitter(on_finished=...)``); once the emission ended, ``module``
    is set to the whole module and :func:`compile_ir` takes this object in its
    place: :meth:`finish` compiles what is left and returns every part.
    :meth:`abandon` drops the parts not started (the emission failed).
    ``on_printed(module)`` is called on the calling thread once every part is
    printed and sent, while the workers still compile: the module is read no
    more (the caller frees it there, and its garbage, instead of after the
    wait).

    Parts wait in a queue, biggest first (the entry's part before all: it is
    the slowest to compile for its size), for ``threads`` workers of its own,
    of which one fewer work while the module is being emitted (the emitting
    thread keeps a core); meanwhile the interpreter switches threads every
    ``SWITCH_INTERVAL`` (see there).  The workers start with the first part
    sent: a module that is one part's worth when its emission ends
    (``MIN_PART_INSTRUCTIONS``, and none sent before) is compiled as one part
    on the calling thread, its entry with it (a jitted function of a few ops:
    10.1 -> 8.1 ms; a second part's fixed costs, the threads and the GIL
    handed between them were a fifth of it), unless its cold kernels weigh
    ``COLD_PART_INSTRUCTIONS``."""

    def __init__(self, entry_name: str, threads: int, speed_level: int | None = None, module_options: bool = True,
                 keep: bool = False, on_printed: Callable[[ir.Module], None] | None = None):
        self.entry_name, self.threads = entry_name, threads
        self.module: ir.Module | None = None
        self.on_printed = on_printed
        self._args = (PROGRAM_SPEED_LEVEL if speed_level is None else speed_level, module_options, keep)
        self._split: StreamSplit | None = None
        self._cond = threading.Condition()
        self._queue: list = []               # heap of (-priority, number, text)
        self._results: dict[int, object] = {}   # part number -> _Part or the exception it raised
        self._sent = 0
        self._limit, self._running, self._closed = max(1, threads - 1), 0, False
        self._workers: list = []             # started by the first ``_submit``
        self._holds_interval = False

    def _start_workers(self) -> None:
        self._workers = [threading.Thread(target=self._work, name=f"xlac-compile-{k}", daemon=True)
                         for k in range(self.threads)]
        _switch_interval.acquire()          # released by ``_close``
        self._holds_interval = True
        for w in self._workers:
            w.start()

    def finished(self, functions: list, cold: bool = False, private=()) -> None:
        if not functions:
            return
        if self._split is None:
            self._split = StreamSplit(functions[0].module, BATCH_INSTRUCTIONS)
        text = self._split.finished(functions, cold, private)
        if text is not None:
            self._submit(text, len(text), COLD if cold else HOT)

    def _submit(self, text: str, priority: int, tier: str = HOT) -> None:
        if not self._workers:
            self._start_workers()
        with self._cond:
            heapq.heappush(self._queue, (-priority, self._sent, text, tier))
            self._sent += 1
            self._cond.notify()

    def _work(self) -> None:
        while True:
            with self._cond:
                while not (self._queue and self._running < self._limit) and not (self._closed and not self._queue):
                    self._cond.wait()
                if not self._queue:
                    return
                _, number, text, tier = heapq.heappop(self._queue)
                self._running += 1
            try:
                result = _compile_part(text, *self._args, tier)
            except BaseException as e:  # noqa: BLE001 - raised again by finish()
                result = e
            with self._cond:
                self._results[number] = result
                self._running -= 1
                self._cond.notify_all()

    @property
    def sent_while_emitting(self) -> int:
        """Parts sent to compile before the emission ended."""
        return self._split.batches if self._split is not None else 0

    def finish(self) -> list[_Part]:
        """Every part compiled, in the order sent: the ones sent so far, then
        the rest of ``module``."""
        if self._split is None:
            self._split = StreamSplit(self.module, BATCH_INSTRUCTIONS)
        if not self._sent and self._split.remaining_weight() < MIN_PART_INSTRUCTIONS \
                and self._split.pending_weight(cold=True) < COLD_PART_INSTRUCTIONS:
            return [_compile_part(plan_split(self.module, self.entry_name, 1).text(0), *self._args)]
        with self._cond:
            self._limit = self.threads
            self._cond.notify_all()
        try:
            last_cold = self._split.take(cold=True)
            if last_cold is not None:
                self._submit(last_cold, len(last_cold), COLD)
            parts = max(1, min(PARTS_PER_THREAD * self.threads,
                               self._split.remaining_weight() // TAIL_PART_INSTRUCTIONS))
            plan = self._split.rest(self.entry_name, parts)
            for k in range(plan.count):
                text = plan.text(k)
                self._submit(text, len(text) * (4 if k == 0 else 1), ENTRY if k in plan.cold else HOT)
            if self.on_printed is not None:
                self.on_printed(self.module)    # while the workers compile: the module is read no more
        except BaseException:
            self.abandon()          # (the workers stop, the switch interval comes back)
            raise
        self._close()
        out = [self._results[k] for k in range(self._sent)]
        for r in out:
            if isinstance(r, BaseException):
                raise r
        return out

    def _close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for w in self._workers:
            w.join()
        if self._holds_interval:
            self._holds_interval = False
            _switch_interval.release()

    def abandon(self) -> None:
        """Drop the parts not started; wait for the ones running."""
        with self._cond:
            self._queue.clear()
        self._close()


def compile_ir(module: ir.Module | str, entry_name: str, speed_level: int | None = None,
               before_load: Callable[[bytes], None] | None = None, module_options: bool = True,
               keep_optimized: bool = True, threads: int | None = None) -> JitFunction:
    """JIT-compile LLVM IR for the host; returns the entry's address and its engine.

    The optimised module is turned into an object file with the host
    TargetMachine (``tm.emit_object``) and that object is loaded into MCJIT, so
    code compiled now and code loaded later from the disk cache are the very
    same bytes (``JitFunction.object_code``).  A big ``ir.Module`` is compiled
    in parts on ``threads`` threads (default :func:`compile_threads`; see
    :func:`part_count` and the module docstring).  ``module_options``: with
    ``MODULE_CODEGEN_OPTIONS`` (see :func:`emit_object`).  ``before_load``: as
    :func:`load_object`.  ``keep_optimized`` (default True): keep the optimised
    module for ``optimized_ir``; False frees it at once (~90 KiB for a small
    module, MiBs for a big one).  ``speed_level``: LLVM's pipeline for the
    hot parts (default ``PROGRAM_SPEED_LEVEL``).

    ``XLAC_DUMP_TO``: writes ``module_NNNN.<name>.ir-no-opt.ll`` (the module as
    emitted), ``.ir-with-opt.ll`` (optimised) and ``.s`` (assembly), or, compiled
    in parts, ``.ir-with-opt.partK.ll`` and ``.partK.s`` for every part K.
    """
    dumping = dump_directory() is not None  # XLAC_DUMP_TO: the IR before and after LLVM, the assembly
    speed_level = PROGRAM_SPEED_LEVEL if speed_level is None else speed_level
    t0 = time.perf_counter()
    with dump_module(entry_name):           # inside xlac.jit: that module's number and name
        if dumping:
            dump_text("ir-no-opt.ll", str(module.module if isinstance(module, StreamedCompile) else module))
            t0 = time.perf_counter()
        threads = compile_threads() if threads is None else threads
        # The collector off while the parts are printed: its full passes walk
        # the whole llvmlite module for nothing (~0.2 s of a training step's).
        with gc_paused():
            if isinstance(module, StreamedCompile):
                t1 = time.perf_counter()
                parts = module.finish()
            else:
                plan = plan_split(module, entry_name, part_count(module, threads)) \
                    if isinstance(module, ir.Module) else module
                t1 = time.perf_counter()
                parts = _compile_parts(plan, threads, speed_level, module_options, keep_optimized or dumping)
        t2 = time.perf_counter()
        if dumping:
            for k, part in enumerate(parts):
                suffix = "" if len(parts) == 1 else f".part{k}"
                dump_text(f"ir-with-opt{suffix}.ll", str(part.optimized))
                dump_text(f"part{k}.s" if suffix else "s", assembly(part.optimized))
    # The engine gets a TargetMachine of its own (it takes ownership), not a
    # compiling thread's: after optimising and emitting code that one holds a
    # subtarget (instruction, register and lowering tables, ~750 KiB), which
    # an engine would keep for as long as its code lives.
    fn = load_object(b"".join(p.object_code for p in parts), entry_name, None, before_load,
                     [len(p.object_code) for p in parts])
    fn._optimized = [p.optimized for p in parts] if keep_optimized else None
    fn.timings = {"split": t1 - t0, "optimize": sum(p.optimize for p in parts),
                  "codegen": sum(p.codegen for p in parts), "backend": t2 - t1,
                  "load": fn.timings["load"]}
    return fn


def optimized_ir(module: ir.Module | str, entry_name: str, threads: int | None = None) -> str:
    """The optimised IR :func:`compile_ir` would emit ``module`` from (every
    part's, as ``JitFunction.optimized_ir`` gives it), without emitting code."""
    texts = split_module(module, entry_name, part_count(module, threads)) \
        if isinstance(module, ir.Module) else [module]

    def optimize_part(text: str) -> str:
        with _pooled_target_machine() as tm:
            return unlocked.print_module(parse_and_optimize(text, tm, PROGRAM_SPEED_LEVEL, owned=True))

    if len(texts) == 1:
        return optimize_part(texts[0])
    pool = _workers.get(len(texts) - 1)
    futures = [pool.submit(optimize_part, t) for t in texts[1:]]
    return _join_parts([optimize_part(texts[0])] + [f.result() for f in futures])


#: TargetMachines not in use, by (target, cheap): a part takes one for its
#: compilation and gives it back (``_pooled_target_machine``).
_free_target_machines: dict = {}
_free_target_machines_lock = threading.Lock()


@contextmanager
def _pooled_target_machine(cheap: bool = False):
    """A host TargetMachine (``current()``'s target; of opt level
    ``CHEAP_CODEGEN_OPT`` when ``cheap``) for one part's
    optimisation and code generation, used by this thread alone and kept for
    the next part, of this compilation or a later one, once this one is done.
    Reused because a new one builds its subtarget (~750 KiB of tables) again on
    first use; not shared between threads at once because its subtarget map is
    not safe to share.  Kept across compilations, not per thread: a
    compilation's worker threads are new each time (a TargetMachine per
    thread was ~2 ms of a small module's 17).  Objects emitted with it are the
    same bytes as with a new one."""
    key = (current(), cheap)
    with _free_target_machines_lock:
        free = _free_target_machines.get(key)
        tm = free.pop() if free else None
    if tm is None:
        tm = host_target_machine(CHEAP_CODEGEN_OPT if cheap else 3)
    try:
        yield tm
    finally:
        with _free_target_machines_lock:
            _free_target_machines.setdefault(key, []).append(tm)
