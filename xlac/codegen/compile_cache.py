"""Compile once, load ever after: the one sequence every cached compilation follows.

:func:`load_or_compile` looks for the object code of a key in a disk-cache
directory (``xlac.runtime.disk_cache``: files only), loads it into MCJIT when
it is there and acceptable, and otherwise builds the LLVM IR, compiles it and
stores the object for the next process.  The executables' modules
(``xlac.program``), the GEMM library's variants and the runtime's native
helpers (``runtime_code``) all go through it.

A key (:func:`cache_key`) covers what object code depends on: the parts the
caller gives (module text, options, entry name), this host
(:func:`~xlac.codegen.target.host_description`) and xlac's own code
(``disk_cache.make_key``).  A bad entry is a miss, never an error.

A module compiled in parts (``jit.compile_ir`` on several threads) is stored
as one entry: its objects one after the other in the ``.o`` file, their sizes
in the metadata's ``object_parts`` (:func:`load_entry` loads them all into one
engine).  Which number of threads compiled an entry does not matter: any
entry of the key is the same program.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from ..runtime import disk_cache
from .jit import JitFunction, compile_ir, load_object
from .target import host_description

__all__ = ["cache_key", "load_or_compile", "load_runtime_code", "load_entry", "Compiled", "OBJECT_PARTS"]

#: The metadata key listing the sizes of the objects of an entry compiled in parts.
OBJECT_PARTS = "object_parts"


def cache_key(*parts) -> str:
    """The disk-cache key of ``parts`` for object code made on this host."""
    return disk_cache.make_key(*host_description(), *parts)


class Compiled(NamedTuple):
    """What :func:`load_or_compile` got."""

    jit: JitFunction
    meta: dict                 # the metadata stored beside the object (as loaded or as stored)
    origin: str                # "disk" or "compiled"
    built: object              # what ``build`` returned besides the IR (None from disk)
    key: str | None            # the disk-cache key (None without a directory)


def load_or_compile(parts: tuple, entry: str, build: Callable[[], tuple], *,
                    directory: str | None,
                    metadata: Callable[[object, JitFunction], dict] = lambda built, jf: {},
                    accept: Callable[[dict], bool] = lambda meta: True,
                    use_disk: bool = True, before_load: Callable[[bytes], None] | None = None,
                    module_options: bool = True, keep_optimized: bool = True,
                    speed_level: int | None = None) -> Compiled:
    """The native code of ``entry``: loaded from ``directory`` under the key of
    ``parts`` when an entry is there and ``accept(meta)`` says it fits, else
    compiled from ``build()`` (which returns ``(llvm_ir, built)``) and stored
    there with ``metadata(built, jit)``.

    ``directory`` None: no disk cache (always compiled).  ``use_disk=False``:
    compile whatever is there (a dump asked for a real compilation) and store
    the result.  ``before_load`` (``gemm_library.ensure_symbols`` for a
    module's code), ``module_options``, ``keep_optimized``, ``speed_level``:
    as :func:`~xlac.codegen.jit.compile_ir`.
    """
    key = cache_key(*parts) if directory else None
    if key is not None and use_disk:
        hit = disk_cache.load(key, directory)
        if hit is not None:
            meta, data = hit
            try:
                if accept(meta):
                    jf = load_entry(meta, data, entry, before_load=before_load)
                    return Compiled(jf, meta, "disk", None, key)
            except Exception:  # noqa: BLE001 - a bad entry is a miss: compile and overwrite it
                pass
    llvm_ir, built = build()
    jf = compile_ir(llvm_ir, entry, speed_level, before_load=before_load, module_options=module_options,
                    keep_optimized=keep_optimized)
    meta = metadata(built, jf)
    if len(jf.object_parts) > 1:
        meta = {**meta, OBJECT_PARTS: list(jf.object_parts)}
    if key is not None:
        meta = disk_cache.store(key, meta, jf.object_code, directory) or meta
    return Compiled(jf, meta, "compiled", built, key)


def load_runtime_code(entry: str, build_ir: Callable[[], str]) -> JitFunction:
    """The native helper ``entry`` of the runtime (program-independent code:
    the thread pool, the Ctrl-C handler, the shared-memory collectives),
    from the library cache (``disk_cache.library_dir``: cached even without
    ``XLAC_CACHE_DIR``, as the GEMM library is), else compiled from
    ``build_ir()``.  Keyed by name: the key covers xlac's code
    (``disk_cache.code_fingerprint``), and building the IR only to key it
    was most of loading it (the thread pool's: ~25 ms of a process's first
    ``xlac.jit``)."""
    return load_or_compile(("runtime-code", entry), entry, lambda: (build_ir(), None),
                           directory=disk_cache.library_dir(), metadata=lambda built, jf: {"entry": entry}).jit


def load_entry(meta: dict, data: bytes, entry: str,
               before_load: Callable[[bytes], None] | None = None) -> JitFunction:
    """The code of a disk-cache entry (``meta`` and ``data`` as ``disk_cache.load``
    gives them) loaded into one MCJIT engine: every object its ``object_parts``
    lists, else ``data`` as one object.  Raises (``ValueError``, ``RuntimeError``)
    on an entry that does not load: the caller treats it as a miss."""
    parts = meta.get(OBJECT_PARTS)
    if parts is not None and not isinstance(parts, list):
        raise ValueError(f"bad {OBJECT_PARTS} in the cache entry: {parts!r}")
    return load_object(data, entry, before_load=before_load, parts=parts)
