"""Program: a module's native code and calling convention, and where it comes from.

:func:`compile_program` is the compile driver behind ``xlac.jit``: it returns
the :class:`Program` of a module from the in-memory cache, the disk cache
(``XLAC_CACHE_DIR``, through ``xlac.codegen.compile_cache``) or a fresh
compilation (``xlac.codegen.compiler.lower``, then the JIT).

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
Introspection (``exe.lowered``, ``optimized_hlo``) comes from the
lowering the executable's own compilation made, which it keeps without its
LLVM module (the cache keeps none); an executable whose code came from a
cache lowers the module again on first use.  ``llvm_ir`` and
``optimized_llvm_ir`` lower the module again on first use (the second
optimises that IR too).  All of it is freed with the executable.

"""
from __future__ import annotations

import gc
import hashlib
import operator
import os
import threading
import time
from collections import OrderedDict
from typing import NamedTuple

from .codegen.compile_cache import cache_key, load_entry, load_or_compile
from .codegen.compiler import lower
from .codegen.ir_text import tear_down
from .codegen.jit import StreamedCompile, compile_threads
from .codegen import gemm_library, gemm_native, lapack as lapack_symbols, target
from .codegen.math_approx import exact_math
from . import __version__
from .hlo.feeds import FeedInstruction, feed_instructions
from .hlo.ir import HloModule, gc_paused
from .hlo.stablehlo import parse_module_text
from .passes.buffer_assignment import may_update_in_place
from .passes.pipeline import dump_directory, dump_module
from .hlo.source import module_text
from .runtime import disk_cache
from .shape import Shape, parse_shape

__all__ = ["Program", "ProgramCache", "compile_program", "clear_caches", "set_memory_cache_limit",
           "as_module", "donatable_parameters", "ENTRY_NAME"]

ENTRY_NAME = "xlac_entry"

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
    """An HloModule from an XlaComputation, an HloModule, HLO text, StableHLO
    text (told apart by content: ``xlac.hlo.stablehlo.is_stablehlo``), or the
    path of such a file (a ``pathlib.Path`` or a one-line string naming a file)."""
    if isinstance(x, HloModule):
        return x
    x = module_text(x)          # a path given instead of text: read, or said to be one
    if isinstance(x, str):
        return parse_module_text(x)
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
                 assumes_aligned_results: bool = False, polls_cancel: bool = True,
                 feeds: list | None = None, custom_calls: tuple = ()):
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
        #: the infeeds and outfeeds the code runs (``xlac.hlo.feeds.FeedInstruction``);
        #: None when unknown (a disk-cache entry older than feeds): ask the module
        self.feeds = feeds
        #: (target, api_version, instruction) of the custom calls made through
        #: ``opts->custom_call``: their targets must be registered to run it
        self.custom_calls = tuple(tuple(c) for c in custom_calls)

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
                   polls_cancel=lowered.polls_cancel, feeds=feed_instructions(lowered.hlo),
                   custom_calls=lowered.custom_calls)

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
            "feeds": None if self.feeds is None else [[f.opcode, f.name, str(f.shape)] for f in self.feeds],
            "custom_calls": [list(c) for c in self.custom_calls],
            "timings": self.timings,
            "xlac_version": __version__,
        }

    @classmethod
    def from_metadata(cls, meta: dict, jit=None) -> "Program":
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
                   polls_cancel=bool(meta.get("polls_cancel", True)), feeds=_feeds_of(meta),
                   custom_calls=tuple((str(t), int(v), str(n)) for t, v, n in meta.get("custom_calls", ())))


def _feeds_of(meta: dict) -> list | None:
    listed = meta.get("feeds")
    if listed is None:
        return None
    return [FeedInstruction(str(op), str(name), parse_shape(shape)) for op, name, shape in listed]


def donatable_parameters(lowered) -> dict[int, int]:
    """Entry parameters whose buffer a result may take over: parameter number -> result leaf.

    Safe when the instruction defining result leaf ``k`` (computed straight into
    ``results[k]``) is the only reader of array parameter ``p``, may update
    every operand that is ``p`` in place (:func:`may_update_in_place`: it reads
    them only at the index it writes), and ``p`` has the result's shape and
    layout (the default one, so arguments need no relayout).
    """
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
        may = None                  # asked only of a candidate (it walks a fusion's computation)
        for j, p in enumerate(src.operands):
            if p.opcode != "parameter" or p is root or readers.get(id(p), []) != [src]:
                continue
            if not p.shape.is_array or p.shape != leaf_shape or not p.shape.has_default_layout() \
                    or p.shape.buffer_element_count() != p.shape.element_count():
                continue
            may = set(may_update_in_place(src)) if may is None else may
            if j not in may or any(o is p for i, o in enumerate(src.operands) if i not in may):
                continue
            out.setdefault(p.parameter_number, k)
    return out


def ensure_symbols(object_code: bytes) -> None:
    """``before_load`` of a module's object: register the GEMM library functions
    and the LAPACK routines it calls with the JIT linker."""
    gemm_library.ensure_symbols(object_code)
    lapack_symbols.ensure_symbols(object_code)


def codegen_options(optimize: bool, aligned_results: bool) -> str:
    """Everything besides the module text that changes the generated code
    (the target too, when ``XLAC_TARGET_CPU``/``_FEATURES`` make it another CPU's)."""
    t = target.current()
    other = "" if t == target.host() else f",target={t.cpu}|{t.features}"
    switches = gemm_native.switches()
    other += f",{switches}" if switches else ""
    return f"optimize={int(optimize)},exact_math={int(exact_math())},aligned={int(aligned_results)}{other}"


def _text_key(text: str, optimize: bool, aligned_results: bool) -> str:
    # surrogatepass: text with a lone surrogate must reach the parser, which
    # rejects it with its line and column.
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest}:{codegen_options(optimize, aligned_results)}"


class Compiled(NamedTuple):
    """What :func:`compile_program` got."""

    program: "Program"
    source: str | None               # "memory", "disk", or None: compiled now
    module: HloModule | None         # the module parsed or given, if it was needed
    lowered: object | None           # the Lowered module, when compiled now (not cached)


def compile_program(x, optimize: bool = True, aligned_results: bool = True) -> Compiled:
    """The Program of ``x`` (an HloModule, XlaComputation or HLO text): from the
    in-memory cache, the disk cache, or compiled now; with where it came from,
    the module (None when text was not parsed) and, when compiled now, its
    lowering (for that executable's introspection: no cache keeps it).
    ``aligned_results``: lowered for the pool's 64-byte aligned result buffers
    (see ``lower``); an executable compiles the module again without that
    promise on the first call that donates an unaligned argument's memory to a
    result.

    Both caches key on the module's printed text (so text and the module parsed
    from it share code); HLO text given as is is also remembered under its own
    hash (on disk: an alias of the entry), so jitting the same text again, in
    this process or a later one, does not even parse it.  The in-memory cache
    (:class:`ProgramCache`) is bounded: a Program it evicted is loaded from
    disk or compiled again.
    """
    x = module_text(x)
    options = codegen_options(optimize, aligned_results)
    raw_key = alias = None
    directory = disk_cache.cache_dir()
    dumping = dump_directory() is not None            # XLAC_DUMP_TO: a real compilation
    if isinstance(x, str):
        raw_key = _text_key(x, optimize, aligned_results)
        hit = _cache.get(raw_key)
        if hit is not None:
            return Compiled(hit, "memory", None, None)
        if directory is not None and not dumping:
            alias = cache_key("hlo-text", x, options, ENTRY_NAME)
            program = _program_from_entry(disk_cache.load_alias(alias, directory))
            if program is not None:
                return Compiled(_cache.put(raw_key, program), "disk", None, None)
    # The collector stays off while the module is parsed, lowered and compiled
    # (their objects stay alive until the end, and the LLVM module, one object
    # per LLVM instruction, is torn down rather than left to it); then one young
    # collection takes the emission's own cycles (generators are closures over
    # one another) instead of leaving them in the caller's heap (jax's core_test
    # checks that a jitted call leaves none; ``_compile_module`` collects).  A
    # later automatic collection would walk the same young objects.
    with gc_paused():
        return _compile_module(x, optimize, aligned_results, options, raw_key, alias, directory, dumping)


def _compile_module(x, optimize: bool, aligned_results: bool, options, raw_key, alias, directory,
                    dumping: bool) -> Compiled:
    """``compile_program`` once the text's own keys missed: parse, then the
    caches under the module's key, else compile."""
    module = as_module(x)
    text = module.key_text()
    mem_key = _text_key(text, optimize, aligned_results)

    def remember(program):
        program = _cache.put(mem_key, program)
        if raw_key is not None:
            _cache.put(raw_key, program)
        return program

    hit = _cache.get(mem_key)
    if hit is not None:
        return Compiled(remember(hit), "memory", module, None)

    t0 = time.perf_counter()
    made = {}
    freer = _EmissionFreer()

    def build():
        # Kernels are compiled while the rest is emitted, on several threads
        # (not for a dump, which shows the whole module as emitted).
        threads = compile_threads()
        stream = StreamedCompile(ENTRY_NAME, threads, on_printed=freer) if threads > 1 and not dumping else None
        try:
            lowered = lower(module, entry_name=ENTRY_NAME, optimize=optimize, aligned_results=aligned_results,
                            native=True, on_finished=stream.finished if stream is not None else None)
        except BaseException:
            if stream is not None:
                stream.abandon()
            raise
        made["lower"] = time.perf_counter() - t0
        if stream is None:
            return lowered.llvm_module, lowered
        stream.module = lowered.llvm_module
        return stream, lowered

    def metadata(lowered, jf):
        timings = {"lower": made["lower"], **jf.timings, "total": time.perf_counter() - t0,
                   "passes": lowered.pass_times}
        made["program"] = Program.from_lowered(lowered, None, timings)
        return made["program"].metadata()

    with dump_module(module.name):        # XLAC_DUMP_TO: one module number for HLO, IR and assembly
        got = load_or_compile((text, options, ENTRY_NAME), ENTRY_NAME, build, directory=directory,
                              metadata=metadata,
                              accept=lambda meta: Program.from_metadata(meta).matches(module),
                              use_disk=not dumping, before_load=ensure_symbols, keep_optimized=False)
    program = made["program"] if got.origin == "compiled" else Program.from_metadata(got.meta)
    program.attach(got.jit)
    if alias is not None and got.key is not None:
        disk_cache.store_alias(alias, got.meta, directory)
    # The LLVM module is compiled and no cache keeps it: freed now.
    lowered = got.built.release_llvm_module() if got.built is not None else None
    if lowered is not None:     # compiled now: its cycles collected (see compile_program)
        # After ``freer``'s collection only what was made since is young; one
        # collection of the old generation's count per compilation either way.
        gc.collect(0 if freer.ran else 1)
    return Compiled(remember(program), "disk" if got.origin == "disk" else None, module, lowered)


class _EmissionFreer:
    """``on_printed`` of a streamed compilation: frees what the emission made
    once the compile threads have every part — the LLVM module torn down,
    then the young collection for the cycles the passes and the emission
    left (see ``compile_program``) — while those threads compile instead of
    after them (2% of the model programs' compile time).  What survives moves
    to the old generation, so the collection that ends the compilation walks
    only what was made after this.  (Not a closure over the stream, which
    keeps it: that would be a cycle of its own.)"""

    ran = False

    def __call__(self, llvm_module) -> None:
        tear_down(llvm_module)
        gc.collect(1)
        self.ran = True


def _program_from_entry(entry: tuple | None) -> Program | None:
    """The Program of a disk-cache entry (None: no entry, or a bad one)."""
    if entry is None:
        return None
    meta, data = entry
    try:
        program = Program.from_metadata(meta)
        program.attach(load_entry(meta, data, program.entry_name, before_load=ensure_symbols))
        return program
    except Exception:  # noqa: BLE001 - a bad entry is a miss: compile and overwrite it
        return None
