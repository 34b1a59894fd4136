"""C arrays, C strings and views of raw memory that leave no garbage behind.

A ctypes array type (``c_void_p * n``) is a class, and a class is a cycle of
objects (its ``__dict__``, its descriptors, its ``__mro__``).  ctypes keeps
its array types only while something uses them, so an array made for one
call leaves its type to Python's cyclic collector when it dies: garbage after
every compilation and call that made one (jax's ``core_test`` checks that a
jitted call leaves none).  So here:

* array types are made once per (element type, length) and kept
  (``array_type``): the lengths are a program's parameter and result counts,
  ranks, and fixed sizes, a small set;
* C strings are ``bytes`` objects (CPython ends each with a NUL and never
  moves it): ``address_of`` gives the address, valid while the caller keeps
  the bytes;
* raw memory of any size is a ``memoryview`` the interpreter makes
  (``PyMemoryView_FromMemory``), not a ``c_char * n`` view.
"""
from __future__ import annotations

import ctypes
import functools

__all__ = ["array_type", "array", "address_of", "memory"]

_PyBUF_READ, _PyBUF_WRITE = 0x100, 0x200
_from_memory = ctypes.pythonapi.PyMemoryView_FromMemory
_from_memory.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int)
_from_memory.restype = ctypes.py_object


@functools.lru_cache(maxsize=None)
def array_type(ctype: type, length: int) -> type:
    """``ctype * length``, the same class every time."""
    return ctype * length


def array(ctype: type, values=(), length: int | None = None) -> ctypes.Array:
    """A C array of ``ctype`` holding ``values``: ``length`` elements (default:
    ``len(values)``, at least one, so that its address is never NULL)."""
    if length is None:
        length = max(1, len(values))
    return array_type(ctype, length)(*values)


def address_of(data: bytes) -> int:
    """The address of ``data``'s bytes, NUL-terminated, read-only; valid while
    the caller keeps ``data`` alive."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value


def memory(address: int, nbytes: int, writable: bool = True) -> memoryview:
    """A byte view of ``nbytes`` of native memory at ``address`` (numpy takes
    it as a buffer); the caller keeps the memory alive as long as the view."""
    return _from_memory(address, nbytes, _PyBUF_WRITE if writable else _PyBUF_READ)
