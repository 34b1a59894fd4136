"""Permission to use AMX tiles in this process (Linux).

A CPU with AMX (``amx-tile``) has 8 KB of tile registers that Linux saves
on a context switch only for processes that asked for it: the first AMX
instruction of a process that did not ask stops it with SIGILL.  The request
is ``arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)``; it holds for the
whole process (every thread, those started later too) and asking again is
harmless.  It fails on kernels before 5.16, in a process whose signal
stacks (``sigaltstack``) are too small for the larger signal frame, or
under a seccomp filter that refuses ``arch_prctl``.

The GEMM library's AMX kernels (``codegen/gemm_amx.py``) ask through
:func:`tile_data_refused` when a dot is planned for them and when their code
is loaded, in every process that runs them (the JIT's, the device workers),
and fall back to the other kernels when it is refused.  AOT objects: the C
header's ``xlac_check_cpu`` (``runtime/xlac_runtime.h``, called by
``NAME_run``) makes the same request and counts the ``amx-*`` features as
missing when it is refused.
"""
from __future__ import annotations

import ctypes
import sys
import threading

__all__ = ["tile_data_refused"]

SYS_ARCH_PRCTL = 158             # x86-64
ARCH_REQ_XCOMP_PERM = 0x1023
XFEATURE_XTILEDATA = 18

_lock = threading.Lock()
_answer: list = []               # [None | reason], once asked


def _request() -> str | None:
    if not sys.platform.startswith("linux"):
        return f"AMX tile data is only requested on Linux (this is {sys.platform})"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syscall = libc.syscall
    except (OSError, AttributeError) as e:      # pragma: no cover - no libc
        return f"no syscall() to ask Linux with ({e})"
    syscall.restype = ctypes.c_long
    syscall.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_long]
    if syscall(SYS_ARCH_PRCTL, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0:
        import os
        err = ctypes.get_errno()
        return f"arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) failed: {os.strerror(err)}"
    return None


def tile_data_refused() -> str | None:
    """None once this process may use AMX tiles (asked once, on the first
    call), else why not.  Only call it on a CPU with ``amx-tile``."""
    if not _answer:
        with _lock:
            if not _answer:
                _answer.append(_request())
    return _answer[0]
