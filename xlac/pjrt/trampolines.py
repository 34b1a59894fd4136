"""Native entry points of the PJRT function table.

Each slot of the ``PJRT_Api`` table is a small native function (LLVM IR
compiled once per process through xlac's JIT and its disk cache) that:

1. takes the GIL (``PyGILState_Ensure``): jax calls the C API from C++
   threads that may not hold it;
   (while Python shuts down it does nothing and returns success instead:
   jaxlib's last objects are destroyed during the interpreter's final
   garbage collection, when no Python code may run);
2. sets aside the Python exception pending in this thread, if any
   (``PyErr_Fetch``), and puts it back after the call (``PyErr_Restore``):
   jaxlib destroys buffers and errors from C++ destructors, and those run
   while an exception is on its way to Python (an array freed as the frame
   that raised unwinds).  Python code must not run with an exception set, and
   a callback that cleared it would turn the user's error into "error return
   without exception set";
3. calls the slot's Python implementation (a ctypes callback).

A ctypes callback alone does 1 and 3 but not 2, which is why these exist.

Some slots answer without Python first (:class:`Native`): the calls jax makes
around every execution (the executable's replica, partition and output
counts, a buffer's device and memory, a memory's kind, the ready event's
``OnReady``/``Destroy``/...), about ten per dispatch, each otherwise a GIL
round trip into Python.  Such a slot reads the handle the arguments name; when
its block carries the slot's tag (``xlac.pjrt.handles``), it copies the
block's fields into the out fields (or runs the event callback) and returns
success; any other handle (a null, a stale or an unknown one, an event with an
error) takes the Python path, which answers or reports it.
"""
from __future__ import annotations

import ctypes
from typing import NamedTuple

from ..codegen.compile_cache import load_or_compile
from ..runtime import disk_cache
from .handles import FIELD_WORD, TAG_WORD

_ENTRY = "xlac_pjrt_trampolines_init"
# The CPython functions the trampolines call, passed in at init (no symbol lookup).
_IS_FINALIZING = "Py_IsFinalizing" if hasattr(ctypes.pythonapi, "Py_IsFinalizing") else "_Py_IsFinalizing"
_PYTHON_API = ("PyGILState_Ensure", "PyGILState_Release", "PyErr_Fetch", "PyErr_Restore", _IS_FINALIZING)


class Native(NamedTuple):
    """A slot's answer in native code for a handle of one kind: the argument
    structure's byte offset of the handle, the kind's tag, and what to do:
    ``copies`` ((field index in the block, out field's byte offset, bits)...),
    ``constants`` ((out field's byte offset, bits, value)...), and ``callback``
    (byte offsets of a ``void (*)(PJRT_Error*, void*)`` and of its user
    argument: called with no error)."""
    handle: int
    tag: int
    copies: tuple = ()
    constants: tuple = ()
    callback: tuple | None = None


def _native_ir(n: Native) -> list:
    """The fast path at the start of a trampoline (``%a``: the arguments):
    answered and returned when the handle carries ``n.tag``, else on to ``%slow``."""
    lines = [f"  %h.p = getelementptr i8, ptr %a, i64 {n.handle}",
             "  %h = load ptr, ptr %h.p",
             "  %h.null = icmp eq ptr %h, null",
             "  br i1 %h.null, label %slow, label %tagged",
             "tagged:",
             f"  %tag.p = getelementptr i64, ptr %h, i64 {TAG_WORD}",
             "  %tag = load i64, ptr %tag.p",
             f"  %tag.ok = icmp eq i64 %tag, {n.tag}",
             "  br i1 %tag.ok, label %fast, label %slow",
             "fast:"]
    for k, (field, offset, bits) in enumerate(n.copies):
        lines += [f"  %f{k}.p = getelementptr i64, ptr %h, i64 {FIELD_WORD + field}",
                  f"  %f{k} = load i{bits}, ptr %f{k}.p",
                  f"  %o{k}.p = getelementptr i8, ptr %a, i64 {offset}",
                  f"  store i{bits} %f{k}, ptr %o{k}.p"]
    for k, (offset, bits, value) in enumerate(n.constants):
        lines += [f"  %c{k}.p = getelementptr i8, ptr %a, i64 {offset}", f"  store i{bits} {value}, ptr %c{k}.p"]
    if n.callback is not None:
        fn, arg = n.callback
        lines += [f"  %cb.p = getelementptr i8, ptr %a, i64 {fn}", "  %cb = load ptr, ptr %cb.p",
                  f"  %ua.p = getelementptr i8, ptr %a, i64 {arg}", "  %ua = load ptr, ptr %ua.p",
                  "  call void %cb(ptr null, ptr %ua)"]
    return lines + ["  ret ptr null", "slow:"]


def _ir(count: int, void: frozenset, native: dict) -> str:
    """The IR of ``count`` trampolines (those in ``void`` return nothing; those
    in ``native``, by index, try their :class:`Native` answer first) and
    ``void init(ptr targets, ptr python_api, ptr out)`` which records the
    tables and writes each trampoline's address to ``out``."""
    lines = [
        "@targets = internal global ptr null",
        "@api = internal global ptr null",
        "",
        f"define void @{_ENTRY}(ptr %targets, ptr %api, ptr %out) {{",
        "  store ptr %targets, ptr @targets",
        "  store ptr %api, ptr @api",
    ]
    for k in range(count):
        lines += [f"  %o{k} = getelementptr ptr, ptr %out, i64 {k}", f"  store ptr @t{k}, ptr %o{k}"]
    lines += ["  ret void", "}", ""]
    assert not set(native) & set(void), "a native answer returns a PJRT_Error*"
    for k in range(count):
        is_void = k in void
        ret_type = "void" if is_void else "ptr"
        call = f"call void %f(ptr %a)" if is_void else "%r = call ptr %f(ptr %a)"
        ret = "ret void" if is_void else "ret ptr %r"
        lines += [
            f"define internal {ret_type} @t{k}(ptr %a) {{",
            *(_native_ir(native[k]) if k in native else []),
            "  %api = load ptr, ptr @api",
            "  %p4 = getelementptr ptr, ptr %api, i64 4",
            "  %finalizing = load ptr, ptr %p4",
            "  %fin = call i32 %finalizing()",
            "  %is_fin = icmp ne i32 %fin, 0",
            "  br i1 %is_fin, label %skip, label %go",
            "skip:",
            "  " + ("ret void" if is_void else "ret ptr null"),
            "go:",
            "  %ensure = load ptr, ptr %api",
            "  %p1 = getelementptr ptr, ptr %api, i64 1",
            "  %release = load ptr, ptr %p1",
            "  %p2 = getelementptr ptr, ptr %api, i64 2",
            "  %fetch = load ptr, ptr %p2",
            "  %p3 = getelementptr ptr, ptr %api, i64 3",
            "  %restore = load ptr, ptr %p3",
            "  %saved = alloca [3 x ptr]",
            "  %s1 = getelementptr ptr, ptr %saved, i64 1",
            "  %s2 = getelementptr ptr, ptr %saved, i64 2",
            "  %gil = call i32 %ensure()",
            "  call void %fetch(ptr %saved, ptr %s1, ptr %s2)",
            "  %targets = load ptr, ptr @targets",
            f"  %tp = getelementptr ptr, ptr %targets, i64 {k}",
            "  %f = load ptr, ptr %tp",
            f"  {call}",
            "  %e0 = load ptr, ptr %saved",
            "  %e1 = load ptr, ptr %s1",
            "  %e2 = load ptr, ptr %s2",
            "  call void %restore(ptr %e0, ptr %e1, ptr %e2)",
            "  call void %release(i32 %gil)",
            f"  {ret}",
            "}",
            "",
        ]
    return "\n".join(lines)


class Trampolines:
    """``addresses[k]``: the native entry calling ``callbacks[k]`` (ctypes
    function pointers); keeps the callbacks and the code alive."""

    def __init__(self, callbacks: list, void: set, native: dict | None = None):
        count = len(callbacks)
        text = _ir(count, frozenset(void), native or {})
        self._code = load_or_compile(("pjrt-trampolines", text), _ENTRY, lambda: (text, None),
                                     directory=disk_cache.cache_dir()).jit
        self._callbacks = list(callbacks)
        self._targets = (ctypes.c_void_p * count)(*[ctypes.cast(c, ctypes.c_void_p).value for c in callbacks])
        self._api = (ctypes.c_void_p * len(_PYTHON_API))(
            *[ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value for name in _PYTHON_API])
        out = (ctypes.c_void_p * count)()
        init = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(self._code.address)
        init(ctypes.addressof(self._targets), ctypes.addressof(self._api), ctypes.addressof(out))
        self.addresses = list(out)
        # Immortal: jaxlib may call these until the very end of the process,
        # after the final garbage collection has freed what it could.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(self))
