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

The handler is a few instructions of LLVM IR (``xlac.codegen.runtime_code``),
JIT-compiled once per process (from the disk cache when ``XLAC_CACHE_DIR`` is
set) and provided through ``xlac.runtime.native``.
"""
from __future__ import annotations

import ctypes
import sys

from . import native as _native

__all__ = ["arm", "arm_address", "flag_address", "flag_view", "pending", "clear", "supported"]

def supported() -> bool:
    """Whether Ctrl-C can stop a native call on this platform."""
    return sys.platform.startswith("linux") and ctypes.sizeof(ctypes.c_void_p) == 8


_flag_view = None           # memoryview of the flag (an int32)


def _load():
    """The native handler: ``(flag address, ensure())`` (built on first use by
    ``xlac.codegen.runtime_code``)."""
    global _flag_view
    native = _native.get("sigint")
    if _flag_view is None:
        _flag_view = memoryview((ctypes.c_char * 4).from_address(native[0])).cast("B").cast("i")
    return native


def flag_address() -> int | None:
    """The address of the int32 flag SIGINT sets (for ``opts->cancel``), or
    None where cancellation is not supported."""
    return _load()[0] if supported() else None


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
    return bool(_load()[1]())


def arm_address() -> int | None:
    """The address of the native ``int xlac_sigint_ensure(void)`` that :func:`arm`
    calls (for native callers), or None where cancellation is not supported."""
    if not supported():
        return None
    return ctypes.cast(_load()[1], ctypes.c_void_p).value
