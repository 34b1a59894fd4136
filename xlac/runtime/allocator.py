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
blocks per class stay idle, or, for a class of small blocks, as many as fit in
``class_idle_bytes`` (at most ``MAX_SMALL_CLASS_BLOCKS``); beyond that the
oldest idle blocks are freed (``XLAC_POOL_MAX_IDLE_BYTES`` sets the byte bound;
:func:`configure` all three).  The small classes' larger bound is for training
steps: one returns every parameter and optimiser state of a model, hundreds of
results of a few sizes (a transformer's step, 304 results: 76 of them missed a
pool of 16 per class, 10% of its call time).

All operations are thread-safe.

Guard-page mode (for tests and fuzzing)
---------------------------------------
With ``XLAC_GUARD_PAGES=1`` in the environment (read when this module is
imported) or after ``configure(guard_pages=True)``, every block is its own
``mmap`` placed flush against a ``PROT_NONE`` page: the block's last byte is
the last byte before an inaccessible page, and another inaccessible page comes
before the page the block starts in.  Reading or writing one byte past the end
of a result, a temp arena or an argument (or before the start of its page)
raises SIGSEGV at the faulty access instead of reading a neighbour's bytes.
Concretely, for executables created while the mode is on:

* result buffers are blocks of exactly the result's byte size (no size class;
  small results too, which otherwise are plain ``np.empty`` arrays, see
  ``SMALL_RESULT``); they are unmapped when the result array is gone, never
  recycled into the normal pool;
* temp arenas are blocks of the arena size rounded up to 64 bytes (the code
  relies on their 64-byte alignment), unmapped with the executable's frames;
* every array argument is copied into such a block before the call
  (:func:`guard_arguments`), even one that could be passed as is, so donation
  never happens;
* a result flush against a page end is only aligned to its element size, so
  code is compiled with ``lower(aligned_results=False)``
  (:func:`results_aligned`; compiled code is cached per that flag).

It costs an ``mmap`` and two ``mprotect`` calls per buffer per call and two
extra pages of address space per buffer: a test mode, not a production one.
Executables created with the mode off are not affected (the choice is made
when an executable is created, so calls without it pay nothing).
"""
from __future__ import annotations

import ctypes
import mmap
import os
import threading

import numpy as np

ALIGNMENT = 64
#: Bytes of idle blocks a class of small blocks may keep (the process's pool),
#: and the most blocks that makes (see the module docstring).
CLASS_IDLE_BYTES = 4 << 20
MAX_SMALL_CLASS_BLOCKS = 1024
HUGE_BLOCK = 2 << 20          # blocks this large come from mmap (with MADV_HUGEPAGE)
#: Results smaller than this are plain ``np.empty`` arrays: malloc's free lists and
#: numpy's small-block cache already recycle them without fresh pages, at a third
#: of the cost of a pool block and its owner object (the per-call overhead of tiny
#: kernels). They are aligned as numpy aligns (16 bytes), enough for the ABI.
SMALL_RESULT = 4096
_PAGE = mmap.PAGESIZE

__all__ = ["OutOfMemory", "memory_limits", "describe_memory", "check_buffers", "human_bytes",
           "most_one_buffer_can_take", "Block", "BlockPool", "GuardBlock", "GuardPool", "pool", "size_class", "wrap", "configure",
           "stats", "trim", "release", "guard_pages_enabled", "results_aligned", "result_block_size",
           "acquire_temp", "guard_arguments"]


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


# ---------------------------------------------------------------------------------------
# Memory the machine has: buffers that cannot fit are refused by name
# ---------------------------------------------------------------------------------------

class OutOfMemory(MemoryError):
    """A buffer of ``nbytes`` bytes could not be had; the message says how much
    memory there is.  :class:`~xlac.executable.Executable` names the
    buffer (which result, or the temp arena) and its shape."""

    def __init__(self, message: str, nbytes: int):
        super().__init__(message)
        self.nbytes = nbytes


def human_bytes(n: int) -> str:
    """``40000000000`` -> ``'37.3 GiB'``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def memory_limits() -> dict:
    """What this process can have, in bytes: ``ram`` and ``swap`` (totals, from
    ``/proc/meminfo``, else the physical pages sysconf reports and no swap),
    ``available`` (``MemAvailable``, what can be had now without swapping; None
    when unknown) and ``address_space`` (``RLIMIT_AS``; None when unlimited)."""
    info = {}
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh.read(1 << 16).decode("ascii", "replace").splitlines():
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    info[key] = int(parts[0]) * 1024       # kB
    except OSError:
        pass
    ram = info.get("MemTotal")
    if ram is None:
        try:
            ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            ram = None
    address_space = None
    try:
        import resource
        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            address_space = soft
    except (ImportError, ValueError, OSError):
        pass
    return {"ram": ram, "swap": info.get("SwapTotal", 0), "available": info.get("MemAvailable"),
            "address_space": address_space}


def describe_memory(limits: dict | None = None) -> str:
    """``'23.5 GiB of memory (21.9 GiB available), no swap'``, for messages."""
    limits = limits or memory_limits()
    parts = []
    if limits["ram"]:
        text = f"{human_bytes(limits['ram'])} of memory"
        if limits["available"] is not None:
            text += f" ({human_bytes(limits['available'])} available)"
        parts.append(text)
    parts.append(f"{human_bytes(limits['swap'])} of swap" if limits["swap"] else "no swap")
    if limits["address_space"] is not None:
        parts.append(f"an address-space limit of {human_bytes(limits['address_space'])}")
    return ", ".join(parts)


def most_one_buffer_can_take(limits: dict | None = None) -> int | None:
    """The largest buffer this machine could ever hold: memory plus swap (what
    Linux lets one mapping commit), or the address-space limit if lower; None
    when unknown."""
    limits = limits or memory_limits()
    bounds = []
    if limits["ram"]:
        bounds.append(limits["ram"] + limits["swap"])
    if limits["address_space"] is not None:
        bounds.append(limits["address_space"])
    return min(bounds) if bounds else None


def check_buffers(buffers: list, what: str) -> None:
    """Raise :class:`OutOfMemory` when one of ``buffers`` (``(name, nbytes)``
    pairs), or all of them together, can never fit this machine
    (:func:`most_one_buffer_can_take`); ``what`` names the program."""
    limits = memory_limits()
    bound = most_one_buffer_can_take(limits)
    if bound is None:
        return
    for name, nbytes in buffers:
        if nbytes > bound:
            raise OutOfMemory(f"{what}: {name} needs {nbytes} bytes ({human_bytes(nbytes)}), more "
                              f"than this machine has: {describe_memory(limits)}", nbytes)
    total = sum(n for _, n in buffers)
    if total > bound:
        raise OutOfMemory(f"{what}: its results and temp arena need {total} bytes "
                          f"({human_bytes(total)}) at once, more than this machine has: "
                          f"{describe_memory(limits)}", total)


class Block:
    """``size`` bytes at ``address`` (64-byte aligned); ``mem`` keeps them alive.
    Raises :class:`OutOfMemory` when the memory cannot be had."""

    __slots__ = ("address", "size", "mem", "huge")

    def __init__(self, size: int):
        try:
            self._allocate(size)
        except (MemoryError, OSError) as e:
            raise OutOfMemory(f"cannot allocate {size} bytes ({human_bytes(size)}): "
                              f"{describe_memory()} ({type(e).__name__}: {e})", size) from None

    def _allocate(self, size: int) -> None:
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

    def __init__(self, max_idle_bytes: int | None = None, max_blocks_per_class: int = 16,
                 class_idle_bytes: int = 0):
        if max_idle_bytes is None:
            max_idle_bytes = int(os.environ.get("XLAC_POOL_MAX_IDLE_BYTES", 512 << 20))
        self.max_idle_bytes = max_idle_bytes
        self.max_blocks_per_class = max_blocks_per_class
        self.class_idle_bytes = class_idle_bytes
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
            if len(free) >= self.class_limit(size) or size > self.max_idle_bytes:
                self.evictions += 1
                return
            if self.idle_bytes + size > self.max_idle_bytes:
                self._evict(self.idle_bytes + size - self.max_idle_bytes)
            free.append(block)
            self.idle_bytes += size

    def class_limit(self, size: int) -> int:
        """How many idle blocks of ``size`` bytes the pool keeps."""
        return max(self.max_blocks_per_class, min(MAX_SMALL_CLASS_BLOCKS, self.class_idle_bytes // size))

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
                    "max_blocks_per_class": self.max_blocks_per_class,
                    "class_idle_bytes": self.class_idle_bytes}


# ---------------------------------------------------------------------------------------
# Guard-page mode (see the module docstring)
# ---------------------------------------------------------------------------------------

_PROT_NONE = 0
_libc = None


def _mprotect_none(address: int, length: int) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    if _libc.mprotect(address, length, _PROT_NONE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mprotect(PROT_NONE) of a guard page failed: {os.strerror(err)}")


class GuardBlock(Block):
    """``size`` bytes ending exactly where a ``PROT_NONE`` page begins, in a mapping
    of its own that also has a ``PROT_NONE`` page in front.  Unmapped when the
    block is garbage (``mem`` is the mmap); never goes into a :class:`BlockPool`.

    The start is aligned as ``size`` is (a page end minus ``size``): 64-byte
    aligned for multiples of 64, else only to the element size of an array of
    ``size`` bytes."""

    __slots__ = ()

    def _allocate(self, size: int) -> None:
        data = -(-size // _PAGE) * _PAGE
        mm = mmap.mmap(-1, data + 2 * _PAGE, flags=mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0x20))
        view = ctypes.c_char.from_buffer(mm)
        base = ctypes.addressof(view)
        del view                                  # the mmap cannot be released while exported
        _mprotect_none(base, _PAGE)
        _mprotect_none(base + _PAGE + data, _PAGE)
        self.size = size
        self.huge = False
        self.mem = mm
        self.address = base + _PAGE + data - size

    def __repr__(self) -> str:
        return f"<GuardBlock {self.size} bytes at {self.address:#x}>"


class GuardPool:
    """The pool of guard-page mode: a fresh :class:`GuardBlock` per request, none kept."""

    def __init__(self):
        self._lock = threading.Lock()
        self.blocks = 0              # handed out so far

    def acquire(self, size: int) -> GuardBlock:
        with self._lock:
            self.blocks += 1
        return GuardBlock(size)

    def release(self, block: Block) -> None:
        """Nothing to keep: the block is unmapped once the caller drops it."""

    def trim(self) -> None:
        pass

    def stats(self) -> dict:
        return {"guard_pages": True, "blocks": self.blocks, "idle_bytes": 0, "idle_blocks": 0}


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


_pool = BlockPool(class_idle_bytes=CLASS_IDLE_BYTES)
_guard_pool = GuardPool()
_guard = _env_flag("XLAC_GUARD_PAGES")


def pool() -> BlockPool | GuardPool:
    """The pool executables created now take blocks from (the guard pool in guard-page mode)."""
    return _guard_pool if _guard else _pool


def configure(max_idle_bytes: int | None = None, max_blocks_per_class: int | None = None,
              guard_pages: bool | None = None, class_idle_bytes: int | None = None) -> None:
    """Change the pool's bounds (idle blocks beyond them are freed on their next release);
    ``guard_pages`` switches guard-page mode on or off for executables created from now on."""
    global _guard
    if max_idle_bytes is not None:
        _pool.max_idle_bytes = int(max_idle_bytes)
    if max_blocks_per_class is not None:
        _pool.max_blocks_per_class = int(max_blocks_per_class)
    if class_idle_bytes is not None:
        _pool.class_idle_bytes = int(class_idle_bytes)
    if guard_pages is not None:
        _guard = bool(guard_pages)


def guard_pages_enabled() -> bool:
    return _guard


def results_aligned() -> bool:
    """Whether the result blocks handed out now are 64-byte aligned, i.e. whether
    code may be lowered with ``aligned_results=True`` (not in guard-page mode,
    where a result ends flush against a page boundary)."""
    return not _guard


def result_block_size(nbytes: int) -> int:
    """What an executable acquires for a result of ``nbytes``: 0 (no memory), -1 (a
    plain ``np.empty`` array, for small results: see ``SMALL_RESULT``; the caller
    falls back to ``size_class`` where it cannot use one) or the block size to
    ask :func:`pool` for (exactly ``nbytes`` in guard-page mode)."""
    if nbytes <= 0:
        return 0
    if _guard:
        return nbytes
    if nbytes < SMALL_RESULT:
        return -1
    return size_class(nbytes)


def acquire_temp(temp_size: int) -> Block:
    """A temp arena of at least ``temp_size`` bytes, 64-byte aligned (in guard-page
    mode: ``temp_size`` rounded up to 64, flush against a guard page)."""
    if _guard:
        return _guard_pool.acquire((temp_size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT)
    return _pool.acquire(size_class(temp_size))


def release(block: Block) -> None:
    """Give ``block`` back to the pool it came from (guard blocks are just dropped)."""
    if not isinstance(block, GuardBlock):
        _pool.release(block)


def guarded_copy(buf):
    """``buf`` (a numpy array, or None for a token) copied into a :class:`GuardBlock`
    of exactly its byte size: reading past its end faults."""
    if buf is None:
        return None
    block = _guard_pool.acquire(buf.nbytes)
    out = wrap(block, buf.shape, buf.dtype)
    if buf.size:
        out[...] = buf
    return out


def guard_arguments(leaf_buffer):
    """``leaf_buffer(label, shape, arg)`` (an Executable's argument check and
    relayout) followed by a :func:`guarded_copy`: what an executable created in
    guard-page mode lays its arguments out with."""
    def guarded(label, shape, arg):
        return guarded_copy(leaf_buffer(label, shape, arg))
    return guarded


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
_guard_owner_classes: dict[int, type] = {}


def owner_class(size: int, guarded: bool | None = None) -> type:
    """A ctypes ``c_char * size`` subclass whose instances give their block back on ``__del__``.

    numpy takes it as the buffer of an ndarray (then ``arr.base``); views of the
    array keep it alive, so the block returns only when all of them are gone.
    ``guarded`` (default: guard-page mode is on): the class for :class:`GuardBlock`
    memory, which has no ``__del__`` (the block unmaps itself when its owner drops it).
    """
    if guarded is None:
        guarded = _guard
    classes = _guard_owner_classes if guarded else _owner_classes
    cls = classes.get(size)
    if cls is None:
        body = {"__slots__": ("_block",), "__module__": __name__,
                "__doc__": "Memory of an xlac result: returns to the pool when released."}
        if not guarded:
            body["__del__"] = _owner_del
        cls = type("ResultMemory", (ctypes.c_char * size,), body)
        classes[size] = cls
    return cls


def wrap(block: Block, shape: tuple, dtype: np.dtype, owner_cls: type | None = None) -> np.ndarray:
    """A C-ordered array of ``shape`` and ``dtype`` over ``block``; the block goes
    back to the pool when the array (and every view of it) is gone.
    ``owner_cls``: ``owner_class(block.size)``, when the caller has it at hand."""
    if owner_cls is None:
        owner_cls = owner_class(block.size, isinstance(block, GuardBlock))
    owner = owner_cls.from_address(block.address)
    owner._block = block
    return _ndarray(shape, dtype, owner)


_ndarray = np.ndarray


def copy_of(a: np.ndarray) -> np.ndarray:
    """A C-ordered copy of ``a`` in a pool block, as a result of compiled code
    is (a plain ``np.array`` when small): results taken from another
    process's memory reuse the pages of results gone before, instead of
    fresh pages the OS must fault in and zero."""
    size = result_block_size(a.nbytes)
    if size <= 0:
        return np.array(a, order="C")
    out = wrap(pool().acquire(size), a.shape, a.dtype)
    out[...] = a
    return out


def _after_fork_in_child() -> None:
    # Another thread may have held the lock at fork(): the child gets a fresh one.
    _pool._lock = threading.RLock()
    _guard_pool._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
