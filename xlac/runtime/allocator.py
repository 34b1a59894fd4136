"""A caching allocator for result buffers and temp arenas.

Blocks come from one process-wide :class:`BlockPool`, keyed by size class
(sizes rounded up to one of eight steps per power of two, at least 64 bytes),
64-byte aligned.  Blocks of 2 MiB and more are anonymous ``mmap`` regions with
``madvise(MADV_HUGEPAGE)`` where the OS allows it (failures are ignored);
smaller ones live in numpy byte arrays.

Results (of at least ``SMALL_RESULT`` bytes) are handed out as numpy arrays over a block (:func:`wrap`): the
array's ``.base`` is a small owner object whose ``__del__`` returns the block
to the pool once the last array referring to the memory (the result or any
view of it) is gone.  So a steady state of "call, drop the result, call again"
reuses the same pages.

The pool is bounded: at most ``max_idle_bytes`` bytes and ``max_blocks_per_class``
blocks per class stay idle; beyond that the oldest idle blocks are freed
(``XLAC_POOL_MAX_IDLE_BYTES`` sets the byte bound; :func:`configure` both).

All operations are thread-safe.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import threading

import numpy as np

ALIGNMENT = 64
HUGE_BLOCK = 2 << 20          # blocks this large come from mmap (with MADV_HUGEPAGE)
#: Results smaller than this are plain ``np.empty`` arrays: malloc's free lists and
#: numpy's small-block cache already recycle them without fresh pages, at a third
#: of the cost of a pool block and its owner object (the per-call overhead of tiny
#: kernels). They are aligned as numpy aligns (16 bytes), enough for the ABI.
SMALL_RESULT = 4096
_PAGE = mmap.PAGESIZE

__all__ = ["Block", "BlockPool", "pool", "size_class", "wrap", "configure", "stats", "trim"]


def size_class(nbytes: int) -> int:
    """The block size serving ``nbytes``: at most 12.5% larger, a multiple of 64
    (of the page size from ``HUGE_BLOCK`` on)."""
    if nbytes <= 512:
        return max(ALIGNMENT, (nbytes + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT)
    step = max(ALIGNMENT, 1 << (nbytes.bit_length() - 4))   # 8 steps per power of two
    size = (nbytes + step - 1) // step * step
    if size >= HUGE_BLOCK:
        size = (size + _PAGE - 1) // _PAGE * _PAGE
    return size


class Block:
    """``size`` bytes at ``address`` (64-byte aligned); ``mem`` keeps them alive."""

    __slots__ = ("address", "size", "mem", "huge")

    def __init__(self, size: int):
        self.size = size
        self.huge = size >= HUGE_BLOCK
        if self.huge:
            mm = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0x20))
            advice = getattr(mmap, "MADV_HUGEPAGE", None)
            if advice is not None:
                try:
                    mm.madvise(advice)
                except (OSError, ValueError, AttributeError):
                    pass
            self.mem = np.frombuffer(mm, np.uint8)       # holds the mapping (unmapped with it)
            self.address = self.mem.ctypes.data
        else:
            raw = np.empty(size + ALIGNMENT, np.uint8)
            start = (-raw.ctypes.data) % ALIGNMENT
            self.mem = raw
            self.address = raw.ctypes.data + start

    def __repr__(self) -> str:
        return f"<Block {self.size} bytes at {self.address:#x}{' (mmap)' if self.huge else ''}>"


class BlockPool:
    """Idle blocks by size class, bounded in bytes and in blocks per class."""

    def __init__(self, max_idle_bytes: int | None = None, max_blocks_per_class: int = 16):
        if max_idle_bytes is None:
            max_idle_bytes = int(os.environ.get("XLAC_POOL_MAX_IDLE_BYTES", 512 << 20))
        self.max_idle_bytes = max_idle_bytes
        self.max_blocks_per_class = max_blocks_per_class
        # A result's __del__ (which releases a block) can run whenever Python
        # allocates a garbage-collected object, or in a signal handler.  So the
        # critical sections below allocate no such object (lists are created
        # before the lock is taken, eviction walks by index), and the lock is
        # re-entrant for the signal case.
        self._lock = threading.RLock()
        self._free: dict[int, list[Block]] = {}
        self._classes: list[int] = []       # size classes in order of first use
        self.idle_bytes = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def acquire(self, size: int) -> Block:
        """A block of exactly ``size`` bytes (a :func:`size_class` value)."""
        free = self._free.get(size)
        if free:
            with self._lock:
                if free:
                    self.idle_bytes -= size
                    self.hits += 1
                    return free.pop()
        with self._lock:
            self.misses += 1
        return Block(size)

    def release(self, block: Block) -> None:
        """Give ``block`` back (it may be kept idle or freed)."""
        size = block.size
        free = self._free.get(size)
        if free is None:
            if size > self.max_idle_bytes:
                self.evictions += 1
                return
            new = []                              # made before taking the lock
            with self._lock:
                free = self._free.setdefault(size, new)
                if free is new:
                    self._classes.append(size)
        with self._lock:
            if len(free) >= self.max_blocks_per_class or size > self.max_idle_bytes:
                self.evictions += 1
                return
            if self.idle_bytes + size > self.max_idle_bytes:
                self._evict(self.idle_bytes + size - self.max_idle_bytes)
            free.append(block)
            self.idle_bytes += size

    def _evict(self, nbytes: int) -> None:
        # Oldest size classes first, oldest blocks of a class first (lock held).
        classes, i = self._classes, 0
        while nbytes > 0 and i < len(classes):
            size = classes[i]
            free = self._free[size]
            while free and nbytes > 0:
                free.pop(0)
                self.idle_bytes -= size
                self.evictions += 1
                nbytes -= size
            i += 1

    def trim(self) -> None:
        """Free every idle block."""
        with self._lock:
            for free in self._free.values():
                free.clear()
            self.idle_bytes = 0

    def stats(self) -> dict:
        with self._lock:
            return {"idle_bytes": self.idle_bytes,
                    "idle_blocks": sum(len(v) for v in self._free.values()),
                    "hits": self.hits, "misses": self.misses, "evictions": self.evictions,
                    "max_idle_bytes": self.max_idle_bytes,
                    "max_blocks_per_class": self.max_blocks_per_class}


_pool = BlockPool()


def pool() -> BlockPool:
    return _pool


def configure(max_idle_bytes: int | None = None, max_blocks_per_class: int | None = None) -> None:
    """Change the pool's bounds (idle blocks beyond them are freed on their next release)."""
    if max_idle_bytes is not None:
        _pool.max_idle_bytes = int(max_idle_bytes)
    if max_blocks_per_class is not None:
        _pool.max_blocks_per_class = int(max_blocks_per_class)


def stats() -> dict:
    return _pool.stats()


def trim() -> None:
    _pool.trim()


# ---------------------------------------------------------------------------------------
# Result arrays whose memory goes back to the pool
# ---------------------------------------------------------------------------------------

def _owner_del(self) -> None:
    block = self._block
    if block is not None:
        self._block = None
        try:
            _pool.release(block)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


_owner_classes: dict[int, type] = {}


def owner_class(size: int) -> type:
    """A ctypes ``c_char * size`` subclass whose instances give their block back on ``__del__``.

    numpy takes it as the buffer of an ndarray (then ``arr.base``); views of the
    array keep it alive, so the block returns only when all of them are gone.
    """
    cls = _owner_classes.get(size)
    if cls is None:
        cls = type("ResultMemory", (ctypes.c_char * size,),
                   {"__slots__": ("_block",), "__del__": _owner_del,
                    "__module__": __name__,
                    "__doc__": "Memory of an xlac result: returns to the pool when released."})
        _owner_classes[size] = cls
    return cls


def wrap(block: Block, shape: tuple, dtype: np.dtype, owner_cls: type | None = None) -> np.ndarray:
    """A C-ordered array of ``shape`` and ``dtype`` over ``block``; the block goes
    back to the pool when the array (and every view of it) is gone.
    ``owner_cls``: ``owner_class(block.size)``, when the caller has it at hand."""
    owner = (owner_cls or owner_class(block.size)).from_address(block.address)
    owner._block = block
    return _ndarray(shape, dtype, owner)


_ndarray = np.ndarray


def _after_fork_in_child() -> None:
    # Another thread may have held the lock at fork(): the child gets a fresh one.
    _pool._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
