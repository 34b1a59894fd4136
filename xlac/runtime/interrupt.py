"""Ctrl-C during a native call: SIGINT sets a flag that generated code polls.

While an executable runs, its native code holds the main thread and Python's
own SIGINT handling waits for it: Python's C-level handler only notes the
signal, and ``KeyboardInterrupt`` is raised when the call returns — after a
9-second call, or never for a ``while`` loop that does not end.  So xlac puts
a small native handler in front of whatever SIGINT handler is installed
(``sigaction``, chained): it sets the process-wide flag and then calls the
handler it replaced (Python's notes the signal as before).  Generated code
that can run long (a loop, tasks, a called computation) reads
``opts->cancel`` — this flag, in calls made on the main thread — at every
parallel task, every ``while`` iteration and after every long kernel, and
returns early (``xlac.codegen.emitter.cancel_requested``); the executable then
discards the results and raises ``KeyboardInterrupt``.

* Only the main thread's calls are cancelled, as only the main thread gets
  ``KeyboardInterrupt``: calls from other threads pass no flag.
* :func:`arm` runs before each such call (native code: two ``sigaction``
  system calls at most, ~0.3 µs): ``signal.signal`` replaces the C-level
  handler even when it installs the very same Python handler again, so only
  the kernel's table says whether the flag-setting handler is still first.
  With ``SIG_IGN`` or ``SIG_DFL`` in force nothing is installed.  Calls of
  code that never polls the flag (no loop, no task) skip all of it.
* Linux only (the ``struct sigaction`` of glibc and musl on x86-64 and
  AArch64); elsewhere Ctrl-C waits for the call as before.

The handler is a few instructions of LLVM IR, JIT-compiled once per process
(from the disk cache when ``XLAC_CACHE_DIR`` is set).
"""
from __future__ import annotations

import ctypes
import sys
import threading

__all__ = ["arm", "flag_address", "flag_view", "pending", "clear", "supported"]

_FLAG = "xlac_sigint_cancel_flag"
_PREV = "xlac_sigint_previous_handler"
_HANDLER = "xlac_sigint_handler"
_ENSURE = "xlac_sigint_ensure"

SA_SIGINFO = 0x4
SA_ONSTACK = 0x08000000
SA_RESTART = 0x10000000
SA_NODEFER = 0x40000000
_SIGINT = 2
#: struct sigaction: handler at 0, sa_mask (128 bytes) at 8, sa_flags at 136,
#: sa_restorer at 144; 152 bytes (glibc and musl, x86-64 and AArch64).
_SIGACTION_BYTES, _FLAGS_OFFSET = 152, 136

# The handler sets the flag, then calls the handler it replaced.  Calling a
# one-argument handler with the three SA_SIGINFO arguments is harmless in the
# C calling conventions of x86-64 and AArch64.  Only async-signal-safe work.
# ensure() puts the handler first unless it is already, or unless SIGINT is
# ignored or has its default action; returns whether it is first.
_HANDLER_IR = f"""
@{_FLAG} = global i32 0, align 4
@{_PREV} = global ptr null, align 8

declare i32 @sigaction(i32, ptr, ptr)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

define void @{_HANDLER}(i32 %sig, ptr %info, ptr %uctx) {{
entry:
  store atomic volatile i32 1, ptr @{_FLAG} seq_cst, align 4
  %prev = load atomic volatile ptr, ptr @{_PREV} seq_cst, align 8
  %addr = ptrtoint ptr %prev to i64
  %real = icmp ugt i64 %addr, 1          ; not SIG_DFL (0) nor SIG_IGN (1)
  br i1 %real, label %chain, label %done
chain:
  call void %prev(i32 %sig, ptr %info, ptr %uctx)
  br label %done
done:
  ret void
}}

define i32 @{_ENSURE}() {{
entry:
  %old = alloca [{_SIGACTION_BYTES} x i8], align 8
  %new = alloca [{_SIGACTION_BYTES} x i8], align 8
  %r = call i32 @sigaction(i32 {_SIGINT}, ptr null, ptr %old)
  %failed = icmp ne i32 %r, 0
  br i1 %failed, label %no, label %read
read:
  %h = load ptr, ptr %old, align 8
  %ours = icmp eq ptr %h, @{_HANDLER}
  br i1 %ours, label %yes, label %other
other:
  %haddr = ptrtoint ptr %h to i64
  %real = icmp ugt i64 %haddr, 1
  br i1 %real, label %install, label %no
install:
  store atomic volatile ptr %h, ptr @{_PREV} seq_cst, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %old, i64 {_SIGACTION_BYTES}, i1 false)
  store ptr @{_HANDLER}, ptr %new, align 8
  %fp = getelementptr i8, ptr %old, i64 {_FLAGS_OFFSET}
  %flags = load i32, ptr %fp, align 4
  %keep = and i32 %flags, {SA_ONSTACK | SA_RESTART | SA_NODEFER}
  %nflags = or i32 %keep, {SA_SIGINFO}
  %nfp = getelementptr i8, ptr %new, i64 {_FLAGS_OFFSET}
  store i32 %nflags, ptr %nfp, align 4
  %r2 = call i32 @sigaction(i32 {_SIGINT}, ptr %new, ptr null)
  %ok = icmp eq i32 %r2, 0
  br i1 %ok, label %yes, label %no
yes:
  ret i32 1
no:
  ret i32 0
}}
"""


def supported() -> bool:
    """Whether Ctrl-C can stop a native call on this platform."""
    return sys.platform.startswith("linux") and ctypes.sizeof(ctypes.c_void_p) == 8


_lock = threading.Lock()
_native = None              # (JitFunction, flag address, ensure())
_flag_view = None           # memoryview of the flag (an int32)
_ENSURE_TYPE = ctypes.CFUNCTYPE(ctypes.c_int)


def _load():
    """The compiled handler, its flag's address and ``ensure`` (compiled on first use)."""
    global _native, _flag_view
    if _native is None:
        with _lock:
            if _native is None:
                from ..codegen.jit import compile_ir, load_object
                from . import disk_cache
                key = disk_cache.make_key("xlac_sigint_handler", _HANDLER_IR)
                hit = disk_cache.load(key)
                jf = None
                if hit is not None:
                    try:
                        jf = load_object(hit[1], _ENSURE, resolve_library=False)
                    except Exception:  # noqa: BLE001 - a bad entry: compile again
                        jf = None
                if jf is None:
                    jf = compile_ir(_HANDLER_IR, _ENSURE, resolve_library=False)
                    disk_cache.store(key, {"entry": _ENSURE}, jf.object_code)
                flag = jf.engine.get_global_value_address(_FLAG)
                _flag_view = memoryview((ctypes.c_char * 4).from_address(flag)).cast("B").cast("i")
                _native = (jf, flag, _ENSURE_TYPE(jf.address))
    return _native


def flag_address() -> int | None:
    """The address of the int32 flag SIGINT sets (for ``opts->cancel``), or
    None where cancellation is not supported."""
    return _load()[1] if supported() else None


def flag_view() -> memoryview | None:
    """The flag as a one-element int32 memoryview (``view[0]``), or None where
    cancellation is not supported."""
    if not supported():
        return None
    _load()
    return _flag_view


def pending() -> bool:
    """Whether SIGINT arrived since the flag was last cleared."""
    return bool(_flag_view is not None and _flag_view[0])


def clear() -> None:
    if _flag_view is not None:
        _flag_view[0] = 0


def arm() -> bool:
    """Put the flag-setting handler in front of the SIGINT handler in force,
    unless it is there already or SIGINT is ignored or has its default action.
    Returns whether Ctrl-C now sets the flag.  Any thread may call it."""
    if not supported():
        return False
    return bool(_load()[2]())
