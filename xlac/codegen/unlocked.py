"""The long llvmlite calls of a compilation, made without llvmlite's global lock.

llvmlite serialises every call into LLVM behind one process-wide lock
(``llvmlite.binding.ffi.lib._lock``), whatever objects the call touches, so
threads compiling modules at once would take turns.  LLVM itself supports
compiling concurrently as long as each thread keeps to objects of its own: an
``LLVMContext`` (and the modules in it) and a ``TargetMachine`` (XLA's CPU
back end and LLVM's own parallel code generation work that way).  The back
end's parts (``jit.compile_ir``) are such: each is parsed into a context of
its own, optimised by a pass pipeline of its own and emitted by its thread's
TargetMachine.  So the four calls that take the time — parsing, verifying,
the O3 pipeline and code generation — call llvmlite's C functions directly
(``_cfn``, the ctypes function its wrapper locks around; ctypes releases the
GIL during the call).  Everything else still goes through llvmlite and its
lock.  A llvmlite without that wrapper gets its locked calls (correct,
serial).

LLVM's command-line options are process-wide too: ``jit.emit_object`` keeps
them unchanged while any code generation runs.
"""
from __future__ import annotations

from ctypes import c_char_p, string_at

import llvmlite.binding as llvm
from llvmlite.binding import ffi

__all__ = ["parse_assembly", "verify", "run_module_pipeline", "emit_object", "print_module"]


def _raw(name: str):
    """llvmlite's C function ``name`` without its lock (the locked one if it has none)."""
    fn = getattr(ffi.lib, name)
    return getattr(fn, "_cfn", fn)


def parse_assembly(text: str, context) -> "llvm.ModuleRef":
    """``llvm.parse_assembly(text, context)``; ``context`` must be this thread's own."""
    with ffi.OutputString() as errmsg:
        mod = llvm.ModuleRef(_raw("LLVMPY_ParseAssembly")(context, c_char_p(text.encode("utf8")), errmsg),
                             context)
        if errmsg:
            mod.close()
            raise RuntimeError(f"LLVM IR parsing error\n{errmsg}")
    return mod


def verify(module_ref) -> None:
    """``module_ref.verify()``: raises ``RuntimeError`` saying what is wrong."""
    with ffi.OutputString() as outmsg:
        if _raw("LLVMPY_VerifyModule")(module_ref, outmsg):
            raise RuntimeError(str(outmsg))


def run_module_pipeline(pm, module_ref, pb) -> None:
    """``pm.run(module_ref, pb)`` for a ModulePassManager."""
    _raw("LLVMPY_RunNewModulePassManager")(pm, module_ref, pb)


def emit_object(tm, module_ref) -> bytes:
    """``tm.emit_object(module_ref)``; ``tm`` must be this thread's own."""
    with ffi.OutputString() as outerr:
        mb = _raw("LLVMPY_TargetMachineEmitToMemory")(tm, module_ref, 1, outerr)
        if not mb:
            raise RuntimeError(str(outerr))
    try:
        return string_at(ffi.lib.LLVMPY_GetBufferStart(mb), ffi.lib.LLVMPY_GetBufferSize(mb))
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(mb)


def print_module(module_ref) -> str:
    """``str(module_ref)``."""
    with ffi.OutputString() as out:
        _raw("LLVMPY_PrintModuleToString")(module_ref, out)
        return str(out)
