"""Opaque C handles for the plugin's Python objects.

The PJRT C API hands the caller pointers (``PJRT_Client*``, ``PJRT_Buffer*``
...) and takes them back.  Each Python object the caller may name gets a small
block of C memory whose address is its handle.  The block's words:

* 0: the object's function table where the header gives the type one
  (``PJRT_Error``, ``PJRT_Memory``), else zero;
* 1: a tag saying which kind of object it is, for the native entries that
  answer a call without Python (:data:`NATIVE_TAGS`; zero otherwise);
* 2..: that kind's fields the native entries read (``xlac.pjrt.trampolines``);
  the last word links a destroyed buffer to the next on the destroyed list.

The registry keeps the block and the object alive until the handle is
released, and finds the object from the address (``lookup`` checks the kind,
so a stale or wrong pointer is an error, never a crash).  A released block
loses its tag and is kept for the next handle, never freed: a native entry
reading a stale handle finds no tag (the Python path, which reports it), never
freed memory.
"""
from __future__ import annotations

import ctypes

from ..runtime import c_memory

#: Words in a handle's block: function table, tag, and up to four fields.
BLOCK_WORDS = 6
#: Word indices of the tag and of the first field.
TAG_WORD, FIELD_WORD = 1, 2

# Tags of the kinds the native entries answer for ("xlac" and a number: never a
# small integer or pointer-looking value by accident).
EXECUTABLE_TAG = 0x78_6C_61_63_00_00_00_01
BUFFER_TAG = 0x78_6C_61_63_00_00_00_02
MEMORY_TAG = 0x78_6C_61_63_00_00_00_03
READY_EVENT_TAG = 0x78_6C_61_63_00_00_00_04
#: A buffer destroyed in native code, waiting for Python to release it.
DESTROYED_TAG = 0x78_6C_61_63_00_00_00_05
#: A buffer deleted (or donated) but not destroyed: the native entries leave it to Python.
DELETED_BUFFER_TAG = 0x78_6C_61_63_00_00_00_06
#: (key, data) pairs a memory keeps for PJRT_Memory's get_user_data in native code.
USER_DATA_SLOTS = 8
#: The word linking a destroyed buffer's block to the next on the destroyed list.
NEXT_WORD = BLOCK_WORDS - 1

#: address: (object, block, the block as a byte memoryview).
_objects: dict[int, tuple[object, ctypes.Array, memoryview]] = {}
#: Released blocks: (block, byte view, address).
_free: list[tuple[ctypes.Array, memoryview, int]] = []


class HandleError(ValueError):
    """A handle that names no live object of the expected kind."""


def template(head: int = 0, tag: int = 0, fields=()) -> bytes:
    """A handle block's contents as bytes, for :func:`new_from` (made once for
    handles that all look alike: a device's output buffers)."""
    words = [head or 0, tag or 0, *fields] + [0] * (BLOCK_WORDS - FIELD_WORD - len(fields))
    return bytes(c_memory.array(ctypes.c_uint64, words))


def new(obj, head: int = 0, tag: int = 0, fields=()) -> int:
    """A new handle for ``obj``; ``head`` is the first word of its C block
    (a function table's address, or 0), ``tag`` and ``fields`` what the native
    entries read for it (ints: counts or addresses)."""
    return new_from(obj, template(head, tag, fields))


def new_from(obj, contents: bytes) -> int:
    """A new handle for ``obj`` whose block holds ``contents`` (:func:`template`)."""
    return new_many(contents)(obj)


def new_many(contents: bytes):
    """A function making a new handle for an object, its block holding
    ``contents`` (:func:`new_from` with the lookups done once: an execution's
    output buffers)."""
    objects, free, make = _objects, _free, c_memory.array

    # No lock: list.pop, dict assignment and dict.pop are atomic under the GIL,
    # and each block is in the free list or in _objects, never both.
    def bind(obj) -> int:
        try:
            block, view, address = free.pop()
        except IndexError:
            block = make(ctypes.c_void_p, length=BLOCK_WORDS)
            view, address = memoryview(block).cast("B"), ctypes.addressof(block)
        view[:] = contents            # one copy (a slice of ctypes words costs twice as much)
        objects[address] = (obj, block, view)
        return address
    return bind


def set_tag(address, tag: int) -> None:
    """Give live handle ``address`` another tag (what the native entries answer for it)."""
    entry = _objects.get(address or 0)
    if entry is not None:
        entry[1][TAG_WORD] = tag or None


def lookup(address, kind: type, what: str):
    """The object of handle ``address``, which must be a ``kind``; HandleError
    naming ``what`` (e.g. ``PJRT_Buffer``) otherwise."""
    entry = _objects.get(address or 0)
    if entry is None or not isinstance(entry[0], kind):
        raise HandleError(f"{what} {address and hex(address)} is not a live {what} of this plugin")
    return entry[0]


def release(address) -> None:
    """Forget handle ``address``; its block is zeroed and kept for reuse."""
    entry = _objects.pop(address or 0, None)
    if entry is not None:
        block = entry[1]
        block[TAG_WORD] = None         # the native entries read no fields without the tag
        _free.append((block, entry[2], address))


def release_buffers(head: int, kind: type) -> None:
    """Delete and release the buffers of the destroyed list that starts at handle
    ``head`` (each block's ``NEXT_WORD`` links the next; every one names a
    ``kind``, its ``destroyed()`` called): one pass, for the hundreds of
    outputs a training step's call destroys."""
    pop, free = _objects.pop, _free.append
    while head:
        entry = pop(head, None)
        if entry is None or type(entry[0]) is not kind:
            raise HandleError(f"PJRT_Buffer {head:#x} is not a live PJRT_Buffer of this plugin")
        obj, block, view = entry
        nxt = block[NEXT_WORD]
        obj.destroyed()
        block[TAG_WORD] = None         # the native entries read no fields without the tag
        free((block, view, head))
        head = nxt


#: The (object, block, view) of a live handle's address, or None (no kind check:
#: the caller checks the object's type; the executions' fast path).
find = _objects.get


def live_count(kind: type) -> int:
    """How many live handles name a ``kind`` (tests: nothing leaks)."""
    return sum(isinstance(obj, kind) for obj, *_ in list(_objects.values()))
