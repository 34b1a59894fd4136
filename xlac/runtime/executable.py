"""Executable: a compiled module called from Python with numpy arrays.

``xlac.jit(x, num_threads=None, donate_argnums=(), optimize=True)`` accepts an
XlaComputation, an HloModule or HLO text and returns an :class:`Executable`.
Calling it:

* checks the number of arguments, then each argument's shape and dtype against
  its parameter (``TypeError`` for a wrong dtype, ``ValueError`` for a wrong
  shape, both naming the parameter, the expected and the actual);
* lays each argument out as its parameter's layout says (any numpy strides are
  accepted; a C-contiguous, aligned array of the right dtype for a parameter
  with the default layout is passed as is, without a copy);
* runs the native entry with the GIL released, passing an ``xlac_run_options``
  whose ``parallel_for`` runs loop tasks on ``num_threads`` threads
  (:mod:`xlac.runtime.threads`; ``num_threads=1``: NULL, loops run inline);
* returns the results in logical order: one numpy array, or a tuple for a
  tuple-shaped result.  Result memory comes from a caching pool
  (:mod:`xlac.runtime.allocator`) and goes back to it when the array is gone;
  the temp arena is reused between calls (one per concurrent call).

``donate_argnums`` (as in ``jax.jit``): a donated argument's memory may be
reused for a result of the same shape, layout and dtype — the result array then
shares memory with the argument, whose contents are overwritten. **A donated
argument must not be used after the call.**  Donation happens only where it is
safe — the result is computed by the only instruction that reads the
parameter, reading it only at the index it writes — and only for an argument
that is a C-contiguous, aligned, writeable numpy array of the parameter's dtype
and default layout, not overlapping another argument; otherwise it is silently
ignored (``Executable.donations`` lists the possible (result, parameter) pairs).
Code is compiled for the pool's 64-byte aligned result buffers
(``lower(aligned_results=True)``); the first call that donates an argument
that is not 64-byte aligned to a result that relies on it compiles the module
again without that promise, and such calls run that code.

Compiled code is cached in memory by the module's text, so jitting the same
module twice compiles once, and on disk when ``XLAC_CACHE_DIR`` is set
(:mod:`xlac.runtime.disk_cache`): a later process loads the object code
without lowering or optimising.  ``exe.compile_time_s`` is the time the
constructor took to get the code, ``exe.from_cache`` where it came from
(``"memory"``, ``"disk"`` or None), ``exe.compile_stats`` the phases.

The in-memory cache (:class:`ProgramCache`) keeps per module only what calling
needs: the MCJIT engine that owns the code, the entry and the calling metadata
(a :class:`Program`).  It is an LRU bounded by bytes: 256 MiB by default,
``XLAC_MEMORY_CACHE_MAX_BYTES`` or :func:`set_memory_cache_limit` (0 or
negative: no limit), a program counted as 3x its object code plus 64 KiB (what
MCJIT's copies of the object and the engine take, measured).
:func:`clear_caches` (``xlac.clear_caches()``) empties it.  An executable holds
its program, so evicting or clearing never breaks a live executable; the
native code is freed when the cache and the last executable using it let go.
Introspection (``exe.lowered``, ``llvm_ir``, ``optimized_hlo``) comes from the
lowering the executable's own compilation made, which it keeps (the cache does
not); an executable whose code came from a cache lowers the module again on
first use.  ``optimized_llvm_ir`` optimises that IR again on first use.  All of
it is freed with the executable.
"""
from __future__ import annotations

import ctypes
import hashlib
import operator
import os
import threading
import time
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from ..hlo.ir import HloModule
from ..shape import Shape, from_buffer, parse_shape, to_buffer
from . import abi, allocator, disk_cache, interrupt, threads

ENTRY_NAME = "xlac_entry"
_ENTRY = abi.ENTRY
_MAX_IDLE_FRAMES = 4          # idle call frames (pointer arrays + temp arena) kept per executable


# ---------------------------------------------------------------------------------------
# The in-memory compile cache
# ---------------------------------------------------------------------------------------

MEMORY_CACHE_ENV = "XLAC_MEMORY_CACHE_MAX_BYTES"
DEFAULT_MEMORY_CACHE_BYTES = 256 << 20
#: What a cached Program is counted for besides its object code: its MCJIT
#: engine with the engine's own TargetMachine and empty module, and its calling
#: metadata (shapes, names).  Measured: 55 KiB of RSS per small module cached
#: (1,200 modules: 57 KiB each with the cache unbounded, 1 KiB with nothing
#: kept); rounded up.
PROGRAM_OVERHEAD_BYTES = 64 << 10
#: Bytes counted per byte of object code: MCJIT keeps a copy of the object and
#: loads its sections into pages of their own (measured 2.6-3.1x on 130-392 KiB
#: objects); the Program keeps no copy of the bytes.
OBJECT_BYTES_FACTOR = 3


class ProgramCache:
    """Programs by key, least recently used first out past a byte limit.

    A Program may be cached under several keys (the printed module's, and the
    hash of the HLO text it was given as); it is counted once, and a hit under
    any key makes it the most recently used.  Its size is
    :attr:`Program.cache_bytes`.  The limit (bytes) is the one given to
    :meth:`set_limit`, else ``XLAC_MEMORY_CACHE_MAX_BYTES`` (read at each
    insertion), else 256 MiB; 0 or negative: no limit.  A Program bigger than
    the limit is not kept.  Evicting a Program only drops the cache's
    reference: executables that use it keep it (and its native code) alive,
    and the code is freed with the last of them.  Thread-safe.
    """

    def __init__(self, limit: int | None = None):
        self._lock = threading.Lock()
        self._by_key: dict[str, Program] = {}
        self._lru: OrderedDict[int, tuple[Program, list[str]]] = OrderedDict()  # id -> keys
        self._limit = limit
        #: bytes of the Programs held (the sum of their ``cache_bytes``)
        self.nbytes = 0

    def limit(self) -> int:
        """The byte limit in force (0: none); a bad environment value means the default."""
        if self._limit is not None:
            return self._limit
        try:
            return int(os.environ.get(MEMORY_CACHE_ENV, DEFAULT_MEMORY_CACHE_BYTES))
        except ValueError:
            return DEFAULT_MEMORY_CACHE_BYTES

    def set_limit(self, max_bytes: int | None) -> None:
        """Use ``max_bytes`` as the limit from now on (None: the environment's or the
        default), evicting at once what no longer fits."""
        if max_bytes is not None:
            try:
                if isinstance(max_bytes, bool):
                    raise TypeError
                max_bytes = operator.index(max_bytes)
            except TypeError:
                raise TypeError(f"max_bytes must be an int or None, got {max_bytes!r}") from None
        with self._lock:
            self._limit = max_bytes
            evicted = self._evict(self.limit())
        del evicted                         # freed outside the lock

    def get(self, key: str) -> "Program | None":
        """The Program cached under ``key`` (now the most recently used), or None."""
        with self._lock:
            program = self._by_key.get(key)
            if program is not None:
                self._lru.move_to_end(id(program))
            return program

    def put(self, key: str, program: "Program") -> "Program":
        """Cache ``program`` under ``key``, unless a Program is there already:
        returns the cached one (so concurrent compilations share code), or
        ``program`` itself when it is bigger than the limit (not kept)."""
        with self._lock:
            cached = self._by_key.get(key)
            if cached is not None:
                self._lru.move_to_end(id(cached))
                return cached
            limit = self.limit()
            if 0 < limit < program.cache_bytes:
                return program
            entry = self._lru.get(id(program))
            if entry is None:
                entry = self._lru[id(program)] = (program, [])
                self.nbytes += program.cache_bytes
            else:
                self._lru.move_to_end(id(program))
            entry[1].append(key)
            self._by_key[key] = program
            evicted = self._evict(limit)
        del evicted
        return program

    def _evict(self, limit: int) -> list:
        """Drop least recently used Programs until the rest fit ``limit``; returns
        them, for the caller to release after the lock (an engine's teardown
        should not run under it)."""
        evicted = []
        while limit > 0 and self.nbytes > limit and self._lru:
            _, (program, keys) = self._lru.popitem(last=False)
            for key in keys:
                del self._by_key[key]
            self.nbytes -= program.cache_bytes
            evicted.append(program)
        return evicted

    def clear(self) -> None:
        """Forget every Program (executables keep theirs)."""
        with self._lock:
            evicted = list(self._by_key.values())
            self._by_key.clear()
            self._lru.clear()
            self.nbytes = 0
        del evicted

    def __len__(self) -> int:
        """The number of Programs held (not keys)."""
        return len(self._lru)

    def __contains__(self, key: str) -> bool:
        return key in self._by_key


_cache = ProgramCache()


def clear_caches() -> None:
    """Empty the in-memory compile cache (as ``jax.clear_caches()``): the next
    ``jit`` of any module loads it from the disk cache or compiles it again.

    Live executables keep working (each holds its own code, freed when the last
    one using it goes).  Not cleared: the disk cache (``XLAC_CACHE_DIR``), the
    GEMM library's code (loaded once per process, shared by every module), the
    thread pool and its helper, and the result/temp memory pool.
    """
    _cache.clear()


def set_memory_cache_limit(max_bytes: int | None) -> None:
    """Bound the in-memory compile cache to ``max_bytes`` (an int; 0 or negative:
    no limit; None: back to ``XLAC_MEMORY_CACHE_MAX_BYTES`` or the default,
    256 MiB), evicting least recently used programs at once if it holds more.
    A program counts ``PROGRAM_OVERHEAD_BYTES`` (64 KiB) plus
    ``OBJECT_BYTES_FACTOR`` (3) times its object code's size.  Raises
    ``TypeError`` for anything but an int or None."""
    _cache.set_limit(max_bytes)


def as_module(x) -> HloModule:
    """An HloModule from an XlaComputation, an HloModule or HLO text."""
    if isinstance(x, HloModule):
        return x
    if isinstance(x, str):
        from ..hlo.parser import parse_hlo
        return parse_hlo(x)
    module = getattr(x, "module", None)
    if isinstance(module, HloModule):
        return module
    raise TypeError(f"expected an XlaComputation, an HloModule or HLO text, got {type(x).__name__}")


# ---------------------------------------------------------------------------------------
# Program: compiled code plus what calling it needs (from a lowering or the disk cache)
# ---------------------------------------------------------------------------------------

class Program:
    """Native code of one module and its calling convention: what the in-memory
    cache keeps, and all that calling needs.

    Everything here can be rebuilt from the disk cache's metadata (``metadata()``
    / ``from_metadata``) without lowering.  Nothing for introspection is kept
    here (no lowering, no IR, no copy of the object bytes): see
    :attr:`Executable.lowered`.
    """

    def __init__(self, jit, entry_name: str, module_name: str, param_names: list[str],
                 param_shapes: list[Shape], result_shape: Shape, result_leaves: list[Shape],
                 temp_size: int, donatable: dict[int, int], timings: dict,
                 assumes_aligned_results: bool = False, polls_cancel: bool = True):
        self.jit = self.address = None
        #: size of the object code (bytes), kept after the bytes themselves are dropped
        self.object_bytes = 0
        if jit is not None:
            self.attach(jit)
        self.entry_name = entry_name
        self.module_name = module_name
        self.param_names = param_names
        self.param_shapes = param_shapes
        self.result_shape = result_shape
        self.result_leaves = result_leaves
        self.temp_size = temp_size
        self.donatable = donatable            # parameter number -> result leaf it may become
        self.timings = timings
        #: the code needs 64-byte aligned result buffers (``lower(aligned_results=True)``)
        self.assumes_aligned_results = assumes_aligned_results
        #: the code reads ``opts->cancel`` (long calls: loops, tasks), so Ctrl-C can stop it
        self.polls_cancel = polls_cancel

    def attach(self, jit) -> None:
        """Take the code of ``jit`` (a :class:`~xlac.codegen.jit.JitFunction`): its
        engine and entry stay; its object bytes (MCJIT has its own copy) and
        optimised IR are dropped, so that the cache holds only what calling needs."""
        self.jit = jit
        self.address = jit.address
        if jit.object_code is not None:
            self.object_bytes = len(jit.object_code)
        jit.object_code = None
        jit._optimized = None

    @property
    def cache_bytes(self) -> int:
        """What the in-memory cache counts this Program for: ``OBJECT_BYTES_FACTOR``
        times its object code plus ``PROGRAM_OVERHEAD_BYTES`` (see their comments)."""
        return PROGRAM_OVERHEAD_BYTES + OBJECT_BYTES_FACTOR * self.object_bytes

    @classmethod
    def from_lowered(cls, lowered, jit, timings: dict) -> "Program":
        """The Program of ``lowered`` (not kept) and its code ``jit`` (None: attached later)."""
        entry = lowered.hlo.entry
        params = entry.parameters
        return cls(jit, lowered.entry_name, lowered.hlo.name, [p.name or "" for p in params],
                   [p.shape for p in params], entry.root.shape,
                   list(lowered.assignment.result_shapes), lowered.assignment.temp_size,
                   donatable_parameters(lowered), timings,
                   assumes_aligned_results=lowered.assumes_aligned_results,
                   polls_cancel=lowered.polls_cancel)

    def matches(self, module: HloModule) -> bool:
        """Whether the parameters and result agree with ``module``'s entry in element
        types and dimensions (layouts may be chosen by the compiler)."""
        def same(a: Shape, b: Shape) -> bool:
            if a.is_tuple or b.is_tuple:
                return a.is_tuple and b.is_tuple and len(a.tuple_shapes) == len(b.tuple_shapes) \
                    and all(same(x, y) for x, y in zip(a.tuple_shapes, b.tuple_shapes))
            return a.element_type == b.element_type and a.dimensions == b.dimensions
        entry = module.entry
        params = entry.parameters
        return len(params) == len(self.param_shapes) \
            and all(same(p.shape, s) for p, s in zip(params, self.param_shapes)) \
            and same(entry.root.shape, self.result_shape) \
            and all(same(a, b) for a, b in zip(self.result_leaves, self.result_shape.leaves()
                                               if self.result_shape.is_tuple else [self.result_shape]))

    def metadata(self) -> dict:
        from .. import __version__
        return {
            "entry": self.entry_name,
            "module_name": self.module_name,
            "params": [{"name": n, "shape": str(s)} for n, s in zip(self.param_names, self.param_shapes)],
            "result_shape": str(self.result_shape),
            "result_leaves": [str(s) for s in self.result_leaves],
            "temp_size": self.temp_size,
            "donatable": sorted([p, k] for p, k in self.donatable.items()),
            "assumes_aligned_results": self.assumes_aligned_results,
            "polls_cancel": self.polls_cancel,
            "timings": self.timings,
            "xlac_version": __version__,
        }

    @classmethod
    def from_metadata(cls, meta: dict, jit) -> "Program":
        params = meta["params"]
        leaves = [parse_shape(s) for s in meta["result_leaves"]]
        result_shape = parse_shape(meta["result_shape"])
        if len(leaves) != len(result_shape.leaves() if result_shape.is_tuple else [result_shape]):
            raise ValueError("inconsistent result metadata")
        temp_size = int(meta["temp_size"])
        if temp_size < 0:
            raise ValueError("negative temp size")
        donatable = {int(p): int(k) for p, k in meta["donatable"]}
        return cls(jit, str(meta["entry"]), str(meta["module_name"]), [str(p["name"]) for p in params],
                   [parse_shape(p["shape"]) for p in params], result_shape, leaves, temp_size,
                   donatable, dict(meta.get("timings") or {}),
                   assumes_aligned_results=bool(meta.get("assumes_aligned_results", True)),
                   polls_cancel=bool(meta.get("polls_cancel", True)))


def donatable_parameters(lowered) -> dict[int, int]:
    """Entry parameters whose buffer a result may take over: parameter number -> result leaf.

    Safe when the instruction defining result leaf ``k`` (computed straight into
    ``results[k]``) is the only reader of array parameter ``p``, may update
    every operand that is ``p`` in place (:func:`may_update_in_place`: it reads
    them only at the index it writes), and ``p`` has the result's shape and
    layout (the default one, so arguments need no relayout).
    """
    from ..passes.buffer_assignment import may_update_in_place
    a = lowered.assignment
    comp = lowered.hlo.entry
    readers: dict[int, list] = {}
    for inst in a.order:
        for op in inst.operands:
            if op.opcode == "parameter":
                lst = readers.setdefault(id(op), [])
                if not any(r is inst for r in lst):
                    lst.append(inst)
    root = comp.root
    out: dict[int, int] = {}
    for k, leaf_shape in enumerate(a.result_shapes):
        src, leaf = a.defining(root, k)
        sl = a.slice_of(root, k)
        if sl.kind != "result" or sl.number != k or leaf != 0 or not src.shape.is_array:
            continue
        may = set(may_update_in_place(src))
        for j, op in enumerate(src.operands):
            if j not in may or op.opcode != "parameter" or op is root:
                continue
            p = op
            if not p.shape.is_array or p.shape != leaf_shape or not p.shape.has_default_layout() \
                    or p.shape.buffer_element_count() != p.shape.element_count():
                continue
            if readers.get(id(p), []) != [src]:
                continue
            if any(o is p for i, o in enumerate(src.operands) if i not in may):
                continue
            out.setdefault(p.parameter_number, k)
    return out


def _codegen_options(optimize: bool, aligned_results: bool) -> str:
    """Everything besides the module text that changes the generated code."""
    from ..codegen.math_approx import exact_math
    return f"optimize={int(optimize)},exact_math={int(exact_math())},aligned={int(aligned_results)}"


def _text_key(text: str, optimize: bool, aligned_results: bool) -> str:
    # surrogatepass: text with a lone surrogate must reach the parser, which
    # rejects it with its line and column.
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest}:{_codegen_options(optimize, aligned_results)}"


class _Compiled(NamedTuple):
    program: "Program"
    source: str | None               # "memory", "disk", or None: compiled now
    module: HloModule | None         # the module parsed or given, if it was needed
    lowered: object | None           # the Lowered module, when compiled now (not cached)


def _compile(x, optimize: bool = True, aligned_results: bool = True
             ) -> tuple["Program", str | None, HloModule | None]:
    """``(program, source, module)`` of :func:`_compile_program`."""
    return _compile_program(x, optimize, aligned_results)[:3]


def _compile_program(x, optimize: bool = True, aligned_results: bool = True) -> _Compiled:
    """The Program of ``x`` (an HloModule, XlaComputation or HLO text): from the
    in-memory cache, the disk cache, or compiled now; with where it came from,
    the module (None when text was not parsed) and, when compiled now, its
    lowering (for that executable's introspection: no cache keeps it).
    ``aligned_results``: lowered for the pool's 64-byte aligned result buffers
    (see ``lower``); the executable compiles the module again without that
    promise on the first call that donates an unaligned argument's memory to a
    result.

    Both caches key on the module's printed text (so text and the module parsed
    from it share code); HLO text given as is is also remembered under its own
    hash (on disk: an alias of the entry), so jitting the same text again, in
    this process or a later one, does not even parse it.  The in-memory cache
    (:class:`ProgramCache`) is bounded: a Program it evicted is loaded from
    disk or compiled again.
    """
    raw_key = alias = None
    directory = disk_cache.cache_dir()
    dumping = bool(os.environ.get("XLAC_DUMP_TO"))  # xlac.passes.pipeline.DUMP_ENV: a real compilation
    if isinstance(x, str):
        raw_key = _text_key(x, optimize, aligned_results)
        hit = _cache.get(raw_key)
        if hit is not None:
            return _Compiled(hit, "memory", None, None)
        if directory is not None and not dumping:
            alias = disk_cache.make_key("hlo-text", x, _codegen_options(optimize, aligned_results), ENTRY_NAME)
            program = _program_from_entry(disk_cache.load_alias(alias, directory), None)
            if program is not None:
                return _Compiled(_cache.put(raw_key, program), "disk", None, None)
    module = as_module(x)
    text = module.to_text()
    mem_key = _text_key(text, optimize, aligned_results)

    def remember(program):
        program = _cache.put(mem_key, program)
        if raw_key is not None:
            _cache.put(raw_key, program)
        return program

    hit = _cache.get(mem_key)
    if hit is not None:
        return _Compiled(remember(hit), "memory", module, None)

    key = None
    if directory is not None:
        key = disk_cache.make_key(text, _codegen_options(optimize, aligned_results), ENTRY_NAME)
        if not dumping:
            entry = disk_cache.load(key, directory)
            program = _program_from_entry(entry, module)
            if program is not None:
                if alias is not None:
                    disk_cache.store_alias(alias, entry[0], directory)
                return _Compiled(remember(program), "disk", module, None)

    from ..codegen.compiler import lower
    from ..codegen.jit import compile_ir
    t0 = time.perf_counter()
    lowered = lower(module, entry_name=ENTRY_NAME, optimize=optimize, aligned_results=aligned_results,
                    native=True)
    t1 = time.perf_counter()
    jf = compile_ir(lowered.llvm_module, lowered.entry_name, keep_optimized=False)
    timings = {"lower": t1 - t0, **jf.timings, "total": time.perf_counter() - t0}
    program = Program.from_lowered(lowered, None, timings)
    if key is not None:
        meta = disk_cache.store(key, program.metadata(), jf.object_code, directory)
        if meta is not None and alias is not None:
            disk_cache.store_alias(alias, meta, directory)
    program.attach(jf)
    return _Compiled(remember(program), None, module, lowered)


def _program_from_entry(entry: tuple | None, module: HloModule | None) -> Program | None:
    """The Program of a disk-cache entry (None: no entry, or a bad one), checked
    against ``module``'s signature when there is one (an alias of HLO text
    names the entry compiled from that very text)."""
    if entry is None:
        return None
    meta, data = entry
    try:
        from ..codegen.jit import load_object
        program = Program.from_metadata(meta, None)
        if module is not None and not program.matches(module):
            return None
        program.attach(load_object(data, program.entry_name))
        return program
    except Exception:  # noqa: BLE001 - a bad entry is a miss: compile and overwrite it
        return None


# ---------------------------------------------------------------------------------------
# Calling
# ---------------------------------------------------------------------------------------

class _Frame:
    """What one call needs besides the arrays: the results/params pointer arrays
    and a temp arena. Frames are reused; concurrent calls never share one."""

    __slots__ = ("ptrs", "results_addr", "params_addr", "temp", "temp_addr")

    def __init__(self, n_results: int, n_params: int, temp_size: int):
        self.temp = None                 # __del__ runs even when acquiring the arena failed
        self.ptrs = (ctypes.c_void_p * max(1, n_results + n_params))()
        self.results_addr = ctypes.addressof(self.ptrs)
        self.params_addr = self.results_addr + ctypes.sizeof(ctypes.c_void_p) * n_results
        if temp_size > 0:
            self.temp = allocator.acquire_temp(temp_size)
            self.temp_addr = self.temp.address
        else:
            self.temp = None
            self.temp_addr = None

    def __del__(self):
        temp, self.temp = self.temp, None
        if temp is not None:
            try:
                allocator.release(temp)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass


def _c_strides(dims: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for d in reversed(dims):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _fast_spec(shape: Shape):
    """(dtype, dims, C strides, alignment mask, nbytes) for an array shape with the
    default layout (arguments matching it are passed as they are), else None."""
    if not shape.is_array or not shape.has_default_layout() \
            or shape.buffer_element_count() != shape.element_count():
        return None
    dtype = shape.dtype
    return (dtype, shape.dimensions, _c_strides(shape.dimensions, dtype.itemsize),
            shape.element_type.component_type.byte_size - 1, shape.byte_size())


def _exports_buffer(dtype: np.dtype) -> bool:
    """Whether arrays of ``dtype`` export a Python buffer (ml_dtypes' bf16 does not)."""
    try:
        ctypes.c_char.from_buffer(np.empty(1, dtype))
        return True
    except (TypeError, ValueError):
        return False


def _interrupted(blocks) -> None:
    """A call that Ctrl-C stopped: its results are garbage; give their blocks
    back and raise ``KeyboardInterrupt`` (Python's own handler, which SIGINT
    also reached, may raise it first: the flag is cleared by the next call)."""
    interrupt.clear()
    for block in blocks:
        if isinstance(block, allocator.Block):
            allocator.release(block)
    raise KeyboardInterrupt


_MAIN_THREAD = threading.main_thread().ident
_arm = interrupt.arm
_get_ident = threading.get_ident
_ndarray = np.ndarray
_empty = np.empty
_addressof = ctypes.addressof
_c_char = ctypes.c_char
_errors = threads._errors
_wrap = allocator.wrap


class Executable:
    """A JIT-compiled module. See the module docstring for calling conventions."""

    def __init__(self, module, optimize: bool = True, *, num_threads: int | None = None,
                 donate_argnums=()):
        if num_threads is None:
            num_threads = threads.default_num_threads()
        if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)) \
                or num_threads < 1:
            raise ValueError(f"num_threads must be a positive integer, got {num_threads!r}")
        self.num_threads = int(num_threads)
        t0 = time.perf_counter()
        # Guard-page mode's results are not 64-byte aligned (see xlac.runtime.allocator).
        program, source, mod, lowered = _compile_program(module, optimize,
                                                         aligned_results=allocator.results_aligned())
        self.compile_time_s = time.perf_counter() - t0
        self.from_cache = source
        self.optimize = optimize
        self._program = program
        self._source = module
        self._module = mod
        self._parameters = None
        self._fn = _ENTRY(program.address)
        self._general_fn = None          # compiled for unaligned results, on first need
        self._lowered = lowered          # introspection: this compilation's, or made on first use
        self._optimized_ir = None

        # -- threads, and Ctrl-C for calls from the main thread ----------------------------
        self._opts = threads.make_run_options(self.num_threads)
        self._opts_addr = ctypes.addressof(self._opts)
        # Code that polls opts->cancel gets the flag Ctrl-C sets, in calls from
        # the main thread (None: such calls run to their end, as short ones do).
        self._cancel = interrupt.flag_view() if program.polls_cancel else None
        self._main_opts_addr = self._opts_addr
        if self._cancel is not None:
            self._main_opts = threads.make_run_options(self.num_threads)
            self._main_opts.cancel = ctypes.cast(interrupt.flag_address(),
                                                 ctypes.POINTER(ctypes.c_int32))
            self._main_opts_addr = ctypes.addressof(self._main_opts)

        # -- parameters ------------------------------------------------------------------
        self.parameter_shapes: list[Shape] = list(program.param_shapes)
        self._nparams = len(self.parameter_shapes)
        self._labels = [f"parameter {k}" + (f" ({nm})" if nm else "")
                        for k, nm in enumerate(program.param_names)]
        self._slots = []                 # first params[] slot of each parameter
        slot = 0
        for s in self.parameter_shapes:
            self._slots.append(slot)
            slot += len(s.leaves()) if s.is_tuple else 1
        self._nslots = slot
        self._fast = [_fast_spec(s) if not s.is_tuple else None for s in self.parameter_shapes]
        self._simple_params = all(s is not None for s in self._fast) and slot == self._nparams
        if allocator.guard_pages_enabled():       # every argument copied against a guard page
            self._simple_params, self._leaf_buffer = False, allocator.guard_arguments(self._leaf_buffer)

        # -- results ---------------------------------------------------------------------
        self.result_shape: Shape = program.result_shape
        self._result_leaves = program.result_leaves
        self._nresults = len(self._result_leaves)
        self._rspecs = []                # (size class or 0, dims, dtype, default layout, shape)
        for s in self._result_leaves:
            if s.is_token:
                self._rspecs.append((0, None, None, False, s, None))
                continue
            nbytes = s.byte_size()
            default = s.has_default_layout() and s.buffer_element_count() == s.element_count()
            size = allocator.result_block_size(nbytes)   # -1: a plain np.empty (allocator.SMALL_RESULT)
            if size < 0 and not (default and _exports_buffer(s.dtype)):
                size = allocator.size_class(nbytes)
            self._rspecs.append((size, s.dimensions, s.dtype, default, s,
                                 allocator.owner_class(size) if size > 0 else None))
        self._single = not self.result_shape.is_tuple
        self.temp_size = program.temp_size
        self._frames: list[_Frame] = []
        # Buffers that can never fit this machine are refused now, by name.
        allocator.check_buffers(self._buffers(), f"module {self._module_name()}")

        # -- donation --------------------------------------------------------------------
        if isinstance(donate_argnums, (int, np.integer)) and not isinstance(donate_argnums, bool):
            donate_argnums = (donate_argnums,)
        donate = []
        for p in donate_argnums:
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
                raise TypeError(f"donate_argnums must be parameter numbers, got {p!r}")
            p = int(p)
            if not -self._nparams <= p < self._nparams:
                raise ValueError(f"donate_argnums: {p} is not a parameter number "
                                 f"({self._module_name()} has {self._nparams} parameters)")
            donate.append(p % self._nparams)
        self.donate_argnums = tuple(sorted(set(donate)))
        #: (result leaf, parameter) pairs whose memory is shared when the argument allows
        self.donations = []
        for p in self.donate_argnums:
            k = program.donatable.get(p)
            if k is not None and self._fast[p] is not None and all(k != kk for kk, _ in self.donations):
                self.donations.append((k, p))      # one donated argument per result
        self._donate_by_result = {k: p for k, p in self.donations}
        self._state = (self._nparams, self._frames, self._simple_params,
                       [f[:4] for f in self._fast] if self._simple_params else None,
                       self._nresults, self._rspecs, self._donate_by_result, self._fn,
                       self._opts_addr, self._single, allocator.pool().acquire,
                       self._main_opts_addr, self._cancel)

    # -- introspection ---------------------------------------------------------------
    @property
    def _jit(self):
        """The :class:`~xlac.codegen.jit.JitFunction` (shared by executables of one module)."""
        return self._program.jit

    @property
    def module(self) -> HloModule:
        """The module as given (parsed on first use when given as text)."""
        if self._module is None:
            self._module = as_module(self._source)
        return self._module

    @property
    def parameters(self):
        if self._parameters is None:
            self._parameters = self.module.entry.parameters
        return self._parameters

    @property
    def lowered(self):
        """The :class:`~xlac.codegen.compiler.Lowered` module: the one this executable's
        compilation made, or, when its code came from a cache (which keeps only
        code and calling metadata), the module lowered again on first use, under
        the settings of then (``XLAC_EXACT_MATH``, ...), and kept."""
        if self._lowered is None:
            from ..codegen.compiler import lower
            p = self._program
            self._lowered = lower(self.module, entry_name=p.entry_name, optimize=self.optimize,
                                  aligned_results=p.assumes_aligned_results, native=True)
        return self._lowered

    @property
    def llvm_ir(self) -> str:
        """LLVM IR as emitted, before optimisation."""
        return self.lowered.llvm_ir

    @property
    def optimized_llvm_ir(self) -> str:
        """LLVM IR after O3: :attr:`lowered`'s IR optimised again on first use (the
        same pipeline as the compilation's, so the same IR), then kept by this
        executable."""
        if self._optimized_ir is None:
            from ..codegen.jit import host_target_machine, parse_and_optimize
            self._optimized_ir = str(parse_and_optimize(self.lowered.llvm_module, host_target_machine()))
        return self._optimized_ir

    @property
    def optimized_hlo(self) -> HloModule:
        return self.lowered.hlo

    @property
    def compile_stats(self) -> dict:
        """Where the code came from and the seconds of each phase of its compilation
        (``lower``, ``optimize``, ``codegen``, ``load``, ``total``; a disk-cache hit
        records its own ``load`` beside the original compilation's phases)."""
        p = self._program
        stats = {"from_cache": self.from_cache, "compile_time_s": self.compile_time_s,
                 "object_bytes": p.object_bytes, "temp_size": self.temp_size}
        stats.update({f"{k}_s": v for k, v in p.timings.items()})
        if self.from_cache == "disk":
            stats["load_s"] = p.jit.timings.get("load")
        return stats

    # -- calling ------------------------------------------------------------------------
    def __call__(self, *args):
        try:
            (nparams, frames, simple, fast, nres, rspecs, donating, fn, opts_addr, single,
             acquire, main_opts_addr, cancel) = self._state
            # Calls on the main thread pass the flag Ctrl-C sets (opts->cancel);
            # others cannot be interrupted, as only the main thread gets KeyboardInterrupt.
            main = cancel is not None and _get_ident() == _MAIN_THREAD
            if main:
                _arm()                       # ~0.3 us: code that polls the flag runs long anyway
                cancel[0] = 0                # a Ctrl-C already raised KeyboardInterrupt
                opts_addr = main_opts_addr
            if len(args) != nparams:
                raise TypeError(f"{self._module_name()} takes {nparams} argument(s) "
                                f"({self._signature()}), got {len(args)}")
            try:
                frame = frames.pop()
            except IndexError:
                frame = _Frame(nres, self._nslots, self.temp_size)
            ptrs = frame.ptrs
            keep = None                     # copies made for the call (alive until it returns)
            if simple:
                slot = nres
                for a, (dt, dims, strides, mask) in zip(args, fast):
                    if type(a) is _ndarray and a.dtype is dt and a.shape == dims and a.strides == strides:
                        try:
                            addr = _addressof(_c_char.from_buffer(a))
                        except (TypeError, ValueError):      # read-only or empty
                            addr = a.ctypes.data
                        if not addr & mask:
                            ptrs[slot] = addr
                            slot += 1
                            continue
                    k = slot - nres
                    buf = self._leaf_buffer(self._labels[k], self.parameter_shapes[k], a)
                    if keep is None:
                        keep = []
                    keep.append(buf)
                    ptrs[slot] = buf.ctypes.data
                    slot += 1
            else:
                keep = []
                for k in range(nparams):
                    base = nres + self._slots[k]
                    for j, buf in enumerate(self._argument_leaves(k, args[k])):
                        keep.append(buf)
                        ptrs[base + j] = buf.ctypes.data if buf is not None else None

            if _errors:                     # left by a native call made outside an Executable
                threads.take_error()
            if single and not donating:
                size, dims, dtype, default, shape, owner_cls = rspecs[0]
                if size < 0:
                    out = _empty(dims, dtype)
                    ptrs[0] = _addressof(_c_char.from_buffer(out))
                    fn(frame.results_addr, frame.params_addr, frame.temp_addr, opts_addr)
                    if len(frames) < _MAX_IDLE_FRAMES:
                        frames.append(frame)
                    if _errors:
                        self._raise_pending(())
                    if main and cancel[0]:
                        _interrupted(())
                    return out
                if size:
                    block = acquire(size)
                    ptrs[0] = block.address
                else:
                    block = ptrs[0] = None
                fn(frame.results_addr, frame.params_addr, frame.temp_addr, opts_addr)
                if len(frames) < _MAX_IDLE_FRAMES:
                    frames.append(frame)
                if _errors:
                    self._raise_pending([block])
                if main and cancel[0]:
                    _interrupted([block])
                if default and block is not None:
                    owner = owner_cls.from_address(block.address)
                    owner._block = block
                    return _ndarray(dims, dtype, owner)
                return self._result_array(0, block, args, None)

            # Results: donated arguments' memory, or blocks from the pool.
            donated = self._donated_arguments(args, ptrs) if donating else None
            blocks = []
            for k in range(nres):
                if donated is not None and k in donated:
                    blocks.append(None)
                    ptrs[k] = ptrs[nres + self._slots[donating[k]]]
                    continue
                size = rspecs[k][0]
                if size > 0:
                    block = acquire(size)
                    blocks.append(block)
                    ptrs[k] = block.address
                elif size < 0:
                    block = _empty(rspecs[k][1], rspecs[k][2])
                    blocks.append(block)
                    ptrs[k] = _addressof(_c_char.from_buffer(block))
                else:
                    blocks.append(None)
                    ptrs[k] = None
            if donated is not None and self._program.assumes_aligned_results \
                    and any(ptrs[k] & 63 for k in donated):
                fn = self._general_entry()
            fn(frame.results_addr, frame.params_addr, frame.temp_addr, opts_addr)
            if len(frames) < _MAX_IDLE_FRAMES:
                frames.append(frame)
            if _errors:
                self._raise_pending(blocks)
            if main and cancel[0]:
                _interrupted(blocks)
            if single:
                return self._result_array(0, blocks[0], args, donated)
            arrays = iter([self._result_array(k, blocks[k], args, donated) for k in range(nres)])
            return _restructure(self.result_shape, arrays)
        except allocator.OutOfMemory as e:      # free when nothing is raised (Python 3.11)
            raise self._out_of_memory(e) from None

    def _buffers(self) -> list:
        """(name, bytes) of every buffer a call allocates: result leaves and the temp arena."""
        out = [(f"result {k} ({shape})", shape.byte_size())
               for k, shape in enumerate(self._result_leaves) if shape.is_array]
        if self.temp_size:
            out.append(("the temp arena", self.temp_size))
        return out

    def _out_of_memory(self, e: allocator.OutOfMemory) -> MemoryError:
        """``e`` with the buffers it could have been for named."""
        names = [name for name, nbytes in self._buffers()
                 if e.nbytes in (nbytes, allocator.size_class(nbytes), allocator.result_block_size(nbytes))]
        which = " or ".join(names) or "a buffer"
        return allocator.OutOfMemory(f"module {self._module_name()}: {which}: {e}", e.nbytes)

    def _general_entry(self):
        """The entry of this module compiled for result buffers of any alignment
        (a donated argument's memory is not the pool's), compiled on first need."""
        if self._general_fn is None:
            program, _, _ = _compile(self._module if self._module is not None else self._source,
                                     self.optimize, aligned_results=False)
            if program.temp_size != self.temp_size:
                raise AssertionError("the general program's temp size differs")
            self._general_program = program          # keeps its code alive
            self._general_fn = _ENTRY(program.address)
        return self._general_fn

    @staticmethod
    def _raise_pending(blocks) -> None:
        """Re-raise an exception a callback recorded during this thread's native call."""
        err = threads.take_error()
        if err is not None:
            for block in blocks:
                if isinstance(block, allocator.Block):
                    allocator.release(block)
            raise err

    def _result_array(self, k: int, block, args, donated):
        size, dims, dtype, default, shape, owner_cls = self._rspecs[k]
        if shape.is_token:
            return None
        if donated is not None and k in donated:
            return args[self._donate_by_result[k]].view()
        if size < 0:                                # a small result: the array itself
            return block
        if block is None:                           # zero bytes
            return np.empty(dims, dtype)
        if default:
            return _wrap(block, dims, dtype, owner_cls)
        return from_buffer(_wrap(block, (shape.buffer_element_count(),), dtype, owner_cls), shape)

    def _donated_arguments(self, args, ptrs) -> set | None:
        """The result leaves that take their donated argument's memory this call:
        the argument was passed as is (no copy), is writeable, and overlaps no
        other argument."""
        nres = self._nresults
        out = None
        for k, p in self.donations:
            a = args[p]
            addr = ptrs[nres + self._slots[p]]
            if type(a) is not _ndarray or addr is None or not a.flags.writeable \
                    or not a.flags.c_contiguous or a.ctypes.data != addr:
                continue
            end = addr + a.nbytes
            overlap = False
            for q in range(self._nparams):
                if q == p:
                    continue
                other = args[q]
                qa = ptrs[nres + self._slots[q]]
                if qa is None:
                    continue
                qn = other.nbytes if isinstance(other, _ndarray) else self.parameter_shapes[q].byte_size()
                if qa < end and addr < qa + max(qn, 1):
                    overlap = True
                    break
            if not overlap:
                if out is None:
                    out = set()
                out.add(k)
        return out

    def _argument_leaves(self, k: int, arg) -> list:
        shape = self.parameter_shapes[k]
        label = self._labels[k]
        if not shape.is_tuple:
            return [self._leaf_buffer(label, shape, arg)]
        out = []

        def flatten(s: Shape, a, where: str):
            if s.is_tuple:
                if not isinstance(a, (tuple, list)) or len(a) != len(s.tuple_shapes):
                    raise TypeError(f"{label}: expected a tuple {s}{where}, got {_describe(a)}")
                for i, (ss, aa) in enumerate(zip(s.tuple_shapes, a)):
                    flatten(ss, aa, f"{where}{{{i}}}")
            else:
                out.append(self._leaf_buffer(f"{label}{where}", s, a))

        flatten(shape, arg, "")
        return out

    @staticmethod
    def _leaf_buffer(label: str, shape: Shape, arg) -> np.ndarray | None:
        """The argument laid out as ``shape`` says (as is when it already is), or a
        TypeError/ValueError naming the parameter."""
        if shape.is_token:
            return None
        if isinstance(arg, (bool, int, float, complex)) and not isinstance(arg, np.generic):
            arg = np.asarray(arg, dtype=shape.dtype)  # Python scalars take the parameter's type
        a = np.asarray(arg)
        if a.dtype != shape.dtype:
            raise TypeError(f"{label}: expected dtype {shape.dtype} ({shape}), got {a.dtype}")
        if a.shape != shape.dimensions:
            raise ValueError(f"{label}: expected shape {shape.dimensions} ({shape}), got {a.shape}")
        if shape.has_default_layout() and shape.buffer_element_count() == shape.element_count() \
                and a.flags.c_contiguous and a.flags.aligned:
            return a
        return to_buffer(a, shape)

    def _module_name(self) -> str:
        return self._program.module_name

    def _signature(self) -> str:
        return ", ".join(f"{nm or k}: {s}" for k, (nm, s) in
                         enumerate(zip(self._program.param_names, self.parameter_shapes)))

    def __repr__(self) -> str:
        return f"<xlac.Executable {self._module_name()}({self._signature()}) -> {self.result_shape}>"


def _describe(x) -> str:
    if isinstance(x, np.ndarray):
        return f"an array {x.dtype}{list(x.shape)}"
    return type(x).__name__


def _restructure(shape: Shape, arrays):
    if shape.is_tuple:
        return tuple(_restructure(s, arrays) for s in shape.tuple_shapes)
    return next(arrays)


def jit(x, *, num_threads: int | None = None, donate_argnums=(), optimize: bool = True) -> Executable:
    """Compile an XlaComputation, HloModule or HLO text for this CPU.

    ``num_threads``: threads for loops the generated code splits into tasks
    (default: the CPUs this process may use, ``len(os.sched_getaffinity(0))``;
    1 runs everything on the calling thread). ``donate_argnums``: parameter
    numbers whose argument memory a result may reuse (see the module docstring:
    a donated argument must not be used afterwards; where donation is not
    possible it is silently ignored). ``optimize=False`` compiles every
    instruction as its own kernel, without simplification or fusion (for
    debugging and as a reference).

    Raises ``xlac.HloParseError`` for bad text, ``xlac.ShapeError`` for an
    ill-shaped module and ``xlac.UnsupportedError`` ("not supported yet: <op>")
    for an operation the code generator does not handle.
    """
    return Executable(x, optimize, num_threads=num_threads, donate_argnums=donate_argnums)
