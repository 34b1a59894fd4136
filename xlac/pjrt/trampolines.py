"""Native entry points of the PJRT function table.

Each slot of the ``PJRT_Api`` table is a small native function (LLVM IR
compiled once per process through xlac's JIT and its disk cache) that:

1. takes the GIL (``PyGILState_Ensure``): jax calls the C API from C++
   threads that may not hold it;
   (while Python shuts down it does nothing and returns success instead:
   jaxlib's last objects are destroyed during the interpreter's final
   garbage collection, when no Python code may run; and from the exit
   handlers on (:meth:`Trampolines.close`) the ``*_Destroy`` functions do
   nothing on other threads than the exiting one: a thread still waiting for
   the GIL when finalization starts would be ended inside jaxlib's C++
   destructors, aborting the process);
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
around every execution and for every buffer (the executable's replica,
partition and output counts; a buffer's device, memory, ready event and
deleted state, its destruction; a memory's kind; the ready event's
``OnReady``/``Destroy``/...; destroying a null error), each otherwise a GIL
round trip into Python.  Such a slot reads the handle the arguments name; when
its block carries the slot's tag (``xlac.pjrt.handles``), it copies the
block's fields into the out fields (or runs the event callback, or puts the
buffer on the destroyed list) and returns success; any other handle (a stale
or an unknown one, a deleted buffer, an event with an error) takes the Python
path, which answers or reports it.  The memories' ``get_user_data`` is native
too (:func:`_user_data_ir`).
"""
from __future__ import annotations

import atexit
import ctypes
import time
from typing import NamedTuple

from ..codegen.compile_cache import load_or_compile
from ..runtime import c_memory, disk_cache
from .handles import DESTROYED_TAG, FIELD_WORD, MEMORY_TAG, NEXT_WORD, TAG_WORD, USER_DATA_SLOTS

_ENTRY = "xlac_pjrt_trampolines_init"
# The CPython functions the trampolines call, passed in at init (no symbol lookup).
_IS_FINALIZING = "Py_IsFinalizing" if hasattr(ctypes.pythonapi, "Py_IsFinalizing") else "_Py_IsFinalizing"
_PYTHON_API = ("PyGILState_Ensure", "PyGILState_Release", "PyErr_Fetch", "PyErr_Restore", _IS_FINALIZING)
#: Seconds :meth:`Trampolines.close` waits at exit for calls under way on other threads.
CLOSE_TIMEOUT = 5.0


class Native(NamedTuple):
    """A slot's answer in native code for a handle of one kind: the argument
    structure's byte offset of the handle, the kind's tag, and what to do:
    ``copies`` ((field index in the block, out field's byte offset, bits)...),
    ``constants`` ((out field's byte offset, bits, value)...), ``callback``
    (byte offsets of a ``void (*)(PJRT_Error*, void*)`` and of its user
    argument: called with no error), and ``destroy``: the handle is put on the
    destroyed list (its tag swapped for ``DESTROYED_TAG`` first, so it goes
    there once), which Python empties later (:meth:`Trampolines.take_destroyed`)."""
    handle: int
    tag: int
    copies: tuple = ()
    constants: tuple = ()
    callback: tuple | None = None
    destroy: bool = False
    #: A null handle is answered too: nothing to do (jax destroys null errors).
    null: bool = False
    #: An execute context's function answered whole (:func:`_context_ir`):
    #: ("create" | "destroy" | "add", byte offsets of the context field and, for
    #: "add", of the type id and the data); ``handle`` and ``tag`` unused.
    context: tuple | None = None


#: A PJRT_ExecuteContext is made, filled and freed in native code (jaxlib makes
#: one for every execution, to carry FFI user data): a block of a count, then
#: CONTEXT_SLOTS (type id, data) pairs, read by Python at the execution.
CONTEXT_SLOTS = 8
CONTEXT_BYTES = 8 + 16 * CONTEXT_SLOTS


def _context_ir(n: Native) -> list:
    """ExecuteContext_Create (a zeroed block from ``calloc``), _Destroy (``free``)
    and the FFI extension's UserData_Add (the next pair), each returning success;
    on to ``%slow`` (Python, which reports it) when ``calloc`` fails, the context
    is null or its slots are full."""
    op, at = n.context[0], n.context[1]
    lines = [f"  %c.p = getelementptr i8, ptr %a, i64 {at}"]
    if op == "create":
        return lines + [f"  %c = call ptr @calloc(i64 1, i64 {CONTEXT_BYTES})",
                        "  %c.ok = icmp ne ptr %c, null", "  br i1 %c.ok, label %fast, label %slow",
                        "fast:", "  store ptr %c, ptr %c.p", "  ret ptr null", "slow:"]
    if op == "destroy":
        return lines + ["  %c = load ptr, ptr %c.p", "  call void @free(ptr %c)", "  ret ptr null", "slow:"]
    type_at, data_at = n.context[2], n.context[3]
    return lines + ["  %c = load ptr, ptr %c.p", "  %c.null = icmp eq ptr %c, null",
                    "  br i1 %c.null, label %slow, label %count",
                    "count:", "  %n = load i64, ptr %c", f"  %full = icmp uge i64 %n, {CONTEXT_SLOTS}",
                    "  br i1 %full, label %slow, label %fast",
                    "fast:", "  %i = shl i64 %n, 1",
                    "  %ti = add i64 %i, 1", "  %t.q = getelementptr i64, ptr %c, i64 %ti",
                    f"  %t.p = getelementptr i8, ptr %a, i64 {type_at}", "  %t = load i64, ptr %t.p",
                    "  store i64 %t, ptr %t.q",
                    "  %di = add i64 %i, 2", "  %d.q = getelementptr i64, ptr %c, i64 %di",
                    f"  %d.p = getelementptr i8, ptr %a, i64 {data_at}", "  %d = load ptr, ptr %d.p",
                    "  store ptr %d, ptr %d.q",
                    "  %n1 = add i64 %n, 1", "  store i64 %n1, ptr %c", "  ret ptr null", "slow:"]


def context_user_data(address: int) -> dict:
    """The FFI user data of a native execute context at ``address``: {type id: data address}."""
    count = ctypes.c_int64.from_address(address).value
    pairs = c_memory.memory(address + 8, 16 * count, writable=False).cast("q")
    return {pairs[2 * k]: pairs[2 * k + 1] for k in range(count)}


def _native_ir(n: Native, is_void: bool) -> list:
    """The fast path at the start of a trampoline (``%a``: the arguments):
    answered and returned when the handle carries ``n.tag``, else on to ``%slow``."""
    if n.context is not None:
        return _context_ir(n)
    ret = "  ret void" if is_void else "  ret ptr null"
    lines = [f"  %h.p = getelementptr i8, ptr %a, i64 {n.handle}",
             "  %h = load ptr, ptr %h.p",
             "  %h.null = icmp eq ptr %h, null",
             f"  br i1 %h.null, label {'%answered' if n.null else '%slow'}, label %tagged"]
    if n.null:
        lines += ["answered:", ret]
    if not n.tag:
        return lines + ["tagged:", "  br label %slow", "slow:"]
    lines += ["tagged:",
             f"  %tag.p = getelementptr i64, ptr %h, i64 {TAG_WORD}",
             "  %tag = load i64, ptr %tag.p",
             f"  %tag.ok = icmp eq i64 %tag, {n.tag}",
             "  br i1 %tag.ok, label %fast, label %slow",
             "fast:"]
    if n.destroy:
        # A lock-free stack through the blocks' NEXT_WORD: pushed from any thread,
        # taken whole by Python (one exchange: no node is ever popped alone).
        lines += ["  %won.r = cmpxchg ptr %tag.p, i64 %tag, i64 " + str(DESTROYED_TAG) + " acq_rel monotonic",
                  "  %won = extractvalue { i64, i1 } %won.r, 1",
                  "  br i1 %won, label %push, label %slow",
                  "push:",
                  f"  %next.p = getelementptr i64, ptr %h, i64 {NEXT_WORD}",
                  "  %top0 = load atomic ptr, ptr @destroyed monotonic, align 8",
                  "  br label %retry",
                  "retry:",
                  "  %top = phi ptr [ %top0, %push ], [ %seen, %retry ]",
                  "  store ptr %top, ptr %next.p",
                  "  %swap = cmpxchg ptr @destroyed, ptr %top, ptr %h release monotonic",
                  "  %seen = extractvalue { ptr, i1 } %swap, 0",
                  "  %done = extractvalue { ptr, i1 } %swap, 1",
                  "  br i1 %done, label %pushed, label %retry",
                  "pushed:"]
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
    return lines + [ret, "slow:"]


def _user_data_ir() -> list:
    """``ptr memory_get_user_data(ptr memory, ptr key)``: PJRT_Memory's function
    table's getter (jax asks it twice for every buffer it makes), from the
    memory's slots of (key, data) pairs (its block's field 2; see
    ``client.Memory``); null for a key not there or a handle that is no memory."""
    lines = ["define internal ptr @memory_get_user_data(ptr %m, ptr %key) {",
             "  %m.null = icmp eq ptr %m, null",
             "  br i1 %m.null, label %none, label %tagged",
             "tagged:",
             f"  %tag.p = getelementptr i64, ptr %m, i64 {TAG_WORD}",
             "  %tag = load i64, ptr %tag.p",
             f"  %tag.ok = icmp eq i64 %tag, {MEMORY_TAG}",
             "  br i1 %tag.ok, label %s0, label %none"]
    for k in range(USER_DATA_SLOTS):
        nxt = f"%s{k + 1}" if k + 1 < USER_DATA_SLOTS else "%none"
        lines += [f"s{k}:"]
        if k == 0:
            lines += [f"  %slots.p = getelementptr i64, ptr %m, i64 {FIELD_WORD + 2}", "  %slots = load ptr, ptr %slots.p"]
        lines += [f"  %k{k}.p = getelementptr ptr, ptr %slots, i64 {2 * k}", f"  %k{k} = load ptr, ptr %k{k}.p",
                  f"  %hit{k} = icmp eq ptr %k{k}, %key", f"  br i1 %hit{k}, label %f{k}, label {nxt}",
                  f"f{k}:", f"  %d{k}.p = getelementptr ptr, ptr %slots, i64 {2 * k + 1}",
                  f"  %d{k} = load ptr, ptr %d{k}.p", f"  ret ptr %d{k}"]
    return lines + ["none:", "  ret ptr null", "}", ""]


def _ir(count: int, void: frozenset, native: dict, skippable: frozenset = frozenset()) -> str:
    """The IR of ``count`` trampolines (those in ``void`` return nothing; those
    in ``native``, by index, try their :class:`Native` answer first; those in
    ``skippable`` do nothing on other threads once closed, see
    :meth:`Trampolines.close`) and
    ``void init(ptr targets, ptr python_api, ptr out)`` which records the
    tables and writes each trampoline's address to ``out``, then the addresses of
    ``ptr take_destroyed()`` (the destroyed list, emptied) and of the memories'
    ``get_user_data``."""
    lines = [
        "@targets = internal global ptr null",
        "@api = internal global ptr null",
        "@destroyed = internal global ptr null",
        # Shutdown (see Trampolines.close): the closing thread (0: none yet) and
        # the entries between their closing check and their GIL release.
        "@closer = internal global i64 0",
        "@inflight = internal global i64 0",
        "declare ptr @calloc(i64, i64)",
        "declare void @free(ptr)",
        "declare i64 @pthread_self()",
        "",
        "define internal i64 @close() {",
        "  %me = call i64 @pthread_self()",
        "  store atomic i64 %me, ptr @closer seq_cst, align 8",
        "  %n = load atomic i64, ptr @inflight seq_cst, align 8",
        "  ret i64 %n",
        "}",
        "",
        "define internal ptr @take_destroyed() {",
        "  %h = atomicrmw xchg ptr @destroyed, ptr null acquire",
        "  ret ptr %h",
        "}",
        "",
        *_user_data_ir(),
        f"define void @{_ENTRY}(ptr %targets, ptr %api, ptr %out) {{",
        "  store ptr %targets, ptr @targets",
        "  store ptr %api, ptr @api",
    ]
    for k in range(count):
        lines += [f"  %o{k} = getelementptr ptr, ptr %out, i64 {k}", f"  store ptr @t{k}, ptr %o{k}"]
    for k, fn in enumerate(("take_destroyed", "memory_get_user_data", "close")):
        lines += [f"  %x{k} = getelementptr ptr, ptr %out, i64 {count + k}", f"  store ptr @{fn}, ptr %x{k}"]
    lines += ["  ret void", "}", ""]
    for k in range(count):
        is_void = k in void
        ret_type = "void" if is_void else "ptr"
        call = "call void %f(ptr %a)" if is_void else "%r = call ptr %f(ptr %a)"
        ret = "ret void" if is_void else "ret ptr %r"
        lines += [
            f"define internal {ret_type} @t{k}(ptr %a) {{",
            *(_native_ir(native[k], is_void) if k in native else []),
            # Counted before the closing check, so that close() sees every entry
            # that did not see it (both sequentially consistent); an entry that
            # saw it and goes on is not counted (close() does not wait for it).
            "  %counted = alloca i64",
            "  store i64 1, ptr %counted",
            "  %in = atomicrmw add ptr @inflight, i64 1 seq_cst",
            "  %closer = load atomic i64, ptr @closer seq_cst, align 8",
            "  %open = icmp eq i64 %closer, 0",
            "  br i1 %open, label %check, label %closing",
            "closing:",
            "  %me = call i64 @pthread_self()",
            "  %mine = icmp eq i64 %me, %closer",
            "  br i1 %mine, label %check, label %other",
            "other:",
            *(["  br label %skip"] if k in skippable else
              ["  %out2 = atomicrmw sub ptr @inflight, i64 1 seq_cst", "  store i64 0, ptr %counted",
               "  br label %check"]),
            "check:",
            "  %api = load ptr, ptr @api",
            "  %p4 = getelementptr ptr, ptr %api, i64 4",
            "  %finalizing = load ptr, ptr %p4",
            "  %fin = call i32 %finalizing()",
            "  %is_fin = icmp ne i32 %fin, 0",
            "  br i1 %is_fin, label %skip, label %go",
            "skip:",
            "  %c0 = load i64, ptr %counted",
            "  %out0 = atomicrmw sub ptr @inflight, i64 %c0 seq_cst",
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
            "  %c1 = load i64, ptr %counted",
            "  %out1 = atomicrmw sub ptr @inflight, i64 %c1 seq_cst",
            f"  {ret}",
            "}",
            "",
        ]
    return "\n".join(lines)


class Trampolines:
    """``addresses[k]``: the native entry calling ``callbacks[k]`` (ctypes
    function pointers); keeps the callbacks and the code alive."""

    def __init__(self, callbacks: list, void: set, native: dict | None = None, skippable: set = frozenset()):
        count = len(callbacks)
        text = _ir(count, frozenset(void), native or {}, frozenset(skippable))
        self._code = load_or_compile(("pjrt-trampolines", text), _ENTRY, lambda: (text, None),
                                     directory=disk_cache.library_dir()).jit
        self._callbacks = list(callbacks)
        self._targets = (ctypes.c_void_p * count)(*[ctypes.cast(c, ctypes.c_void_p).value for c in callbacks])
        self._api = (ctypes.c_void_p * len(_PYTHON_API))(
            *[ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value for name in _PYTHON_API])
        out = (ctypes.c_void_p * (count + 3))()
        init = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(self._code.address)
        init(ctypes.addressof(self._targets), ctypes.addressof(self._api), ctypes.addressof(out))
        self.addresses = list(out)[:count]
        # PYFUNCTYPE: called holding the GIL, and keeping it (a few loads; dropping
        # and taking the GIL back inside a callback cost microseconds).
        self._take = ctypes.PYFUNCTYPE(ctypes.c_void_p)(out[count])
        #: The address of the native PJRT_Memory get_user_data (see :func:`_user_data_ir`).
        self.memory_get_user_data = out[count + 1]
        self._close = ctypes.CFUNCTYPE(ctypes.c_int64)(out[count + 2])
        atexit.register(self.close)
        # Immortal: jaxlib may call these until the very end of the process,
        # after the final garbage collection has freed what it could.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(self))

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """From now on the ``skippable`` entries (the ``*_Destroy`` functions)
        return at once on other threads than this one (success: the object is
        left to the process's end), and waits (up to ``timeout`` seconds, GIL
        released) for the calls already under way.  Runs at exit (atexit),
        while the interpreter still works: a thread that waits for the GIL when
        the interpreter starts finalizing is ended by it (``pthread_exit``),
        and ended inside a C++ destructor (jaxlib frees executables on its own
        threads) it aborts the process ("terminate called without an active
        exception").  Other calls go on as before: the exiting thread's (jax's
        own exit handlers free its client) and a daemon thread's (left waiting,
        jaxlib could wait for it at exit)."""
        deadline = time.monotonic() + timeout
        while self._close() and time.monotonic() < deadline:
            time.sleep(0.001)

    def take_destroyed(self) -> int | None:
        """The first handle of the destroyed list (None: empty), the list emptied
        at once; each handle's block links the next (``handles.NEXT_WORD``)."""
        return self._take()
