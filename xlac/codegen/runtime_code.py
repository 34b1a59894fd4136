"""Native helpers the runtime's services call, built here and provided to them.

The runtime layer compiles nothing; its services ask ``xlac.runtime.native``
for these by name, and importing this module provides them:

* ``"thread_pool"``: the native thread pool behind ``parallel_for``
  (``xlac.codegen.thread_pool``, imported from here);
* ``"sigint"``: a SIGINT handler that sets a flag and chains to the handler it
  replaced, and ``int xlac_sigint_ensure(void)`` that puts it in front of
  whatever handler is in force (``xlac.runtime.interrupt``); returned as
  ``(flag address, ensure)``;
* ``"shm_collective"`` and ``"shm_bind"``: the shared-memory collective
  protocol (``xlac.codegen.shm_collective``, imported from here).

Each is JIT-compiled once per process, or loaded from the library cache, as
the GEMM library is (:func:`~xlac.codegen.compile_cache.load_runtime_code`):
the helpers were ~0.1 s of a process's first ``xlac.jit``.
"""
from __future__ import annotations

import atexit
import ctypes

from ..runtime import native
from .compile_cache import load_runtime_code

__all__ = ["SIGINT_IR"]

_FLAG = "xlac_sigint_cancel_flag"
_PREV = "xlac_sigint_previous_handler"
_HANDLER = "xlac_sigint_handler"
_ENSURE = "xlac_sigint_ensure"
_UNINSTALL = "xlac_sigint_uninstall"

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
# xlac_sigint_ensure() puts the handler first unless it is already, or unless SIGINT is
# ignored or has its default action; returns whether it is first.
SIGINT_IR = f"""
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

; Put the replaced handler back if ours is first (at exit: the code of ours is
; freed with the engine that holds it).
define void @{_UNINSTALL}() {{
entry:
  %cur = alloca [{_SIGACTION_BYTES} x i8], align 8
  %r = call i32 @sigaction(i32 {_SIGINT}, ptr null, ptr %cur)
  %h = load ptr, ptr %cur, align 8
  %ours = icmp eq ptr %h, @{_HANDLER}
  %ok = icmp eq i32 %r, 0
  %both = and i1 %ours, %ok
  br i1 %both, label %restore, label %done
restore:
  %prev = load atomic volatile ptr, ptr @{_PREV} seq_cst, align 8
  store ptr %prev, ptr %cur, align 8
  %fp = getelementptr i8, ptr %cur, i64 {_FLAGS_OFFSET}
  %flags = load i32, ptr %fp, align 4
  %plain = and i32 %flags, {~SA_SIGINFO & 0xFFFFFFFF}
  store i32 %plain, ptr %fp, align 4
  %r2 = call i32 @sigaction(i32 {_SIGINT}, ptr %cur, ptr null)
  br label %done
done:
  ret void
}}
"""




def _compile(ir_text: str, entry: str):
    return load_runtime_code(entry, lambda: ir_text)


def _sigint():
    jf = _compile(SIGINT_IR, _ENSURE)
    ensure = ctypes.CFUNCTYPE(ctypes.c_int)(jf.address)
    ensure._jit = jf
    uninstall = ctypes.CFUNCTYPE(None)(jf.engine.get_function_address(_UNINSTALL))
    uninstall._jit = jf
    # Before the engine (and the handler's code with it) goes at exit.
    atexit.register(uninstall)
    return jf.engine.get_global_value_address(_FLAG), ensure


native.provide("sigint", _sigint)
# The thread pool and the shared-memory collective protocol provide their own
# ("thread_pool"; "shm_collective", "shm_bind").
from . import shm_collective, thread_pool  # noqa: E402,F401
