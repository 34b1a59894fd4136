"""Opaque C handles for the plugin's Python objects.

The PJRT C API hands the caller pointers (``PJRT_Client*``, ``PJRT_Buffer*``
...) and takes them back.  Each Python object the caller may name gets a small
block of C memory whose address is its handle; the block's first word is the
object's function table where the header gives the type one (``PJRT_Error``,
``PJRT_Memory``), else zero.  The registry keeps the block and the object
alive until the handle is released, and finds the object from the address
(``lookup`` checks the kind, so a stale or wrong pointer is an error, never a
crash).
"""
from __future__ import annotations

import ctypes
import threading

_objects: dict[int, tuple[object, ctypes.Array]] = {}
_lock = threading.Lock()


class HandleError(ValueError):
    """A handle that names no live object of the expected kind."""


def new(obj, head: int = 0) -> int:
    """A new handle for ``obj``; ``head`` is the first word of its C block
    (a function table's address, or 0)."""
    block = (ctypes.c_void_p * 2)(head or None, None)
    address = ctypes.addressof(block)
    with _lock:
        _objects[address] = (obj, block)
    return address


def lookup(address, kind: type, what: str):
    """The object of handle ``address``, which must be a ``kind``; HandleError
    naming ``what`` (e.g. ``PJRT_Buffer``) otherwise."""
    entry = _objects.get(address or 0)
    if entry is None or not isinstance(entry[0], kind):
        raise HandleError(f"{what} {address and hex(address)} is not a live {what} of this plugin")
    return entry[0]


def release(address) -> None:
    """Forget handle ``address`` (its block is freed with the last reference)."""
    with _lock:
        _objects.pop(address or 0, None)


def live_count(kind: type) -> int:
    """How many live handles name a ``kind`` (tests: nothing leaks)."""
    return sum(isinstance(obj, kind) for obj, _ in list(_objects.values()))
