"""LAPACK routines as generated code calls them: Fortran signatures, declarations, JIT symbols.

The kernels of jax's LAPACK custom calls (``kernels/lapack.py``) call the
standard Fortran symbols (``spotrf_``, ``dgesdd_``, BLAS ``strsm_``): every
argument by pointer (32-bit integers, column-major matrices), and after them
one hidden ``size_t`` length per character argument (gfortran's convention,
passed as 1; routines written in C ignore them).  :data:`SIGNATURES` says, per
routine, how many pointer and character arguments it takes.

An ahead-of-time object leaves the symbols undefined for the linker
(``-llapack -lblas``).  The JIT registers scipy's routines under those names
before it loads an object that calls them (:func:`ensure_symbols`, the
``before_load`` hook of ``xlac.program``).
"""
from __future__ import annotations

import re
import threading

import llvmlite.binding as llvm
from llvmlite import ir

from ..hlo.custom_call import LAPACK_ROUTINES, LapackTarget
from ..runtime import lapack as runtime_lapack

__all__ = ["SIGNATURES", "declare", "ensure_symbols", "symbols_in"]

PTR = ir.PointerType()
I64 = ir.IntType(64)

#: routine -> (pointer arguments, character arguments) of the real and complex forms.
SIGNATURES = {
    "potrf": ((5, 1), (5, 1)),
    "trsm": ((11, 4), (11, 4)),
    "getrf": ((6, 0), (6, 0)),
    "geqrf": ((8, 0), (8, 0)),
    "orgqr": ((9, 0), None),
    "ungqr": (None, (9, 0)),
    "syevd": ((11, 2), None),
    "heevd": (None, (13, 2)),
    "gesdd": ((14, 1), (15, 1)),
    "gesvd": ((14, 2), (15, 2)),
    "geev": ((14, 2), (14, 2)),
    "gees": ((15, 2), (15, 2)),
    "gehrd": ((9, 0), (9, 0)),
    "sytrd": ((10, 1), None),
    "hetrd": (None, (10, 1)),
    "ormqr": ((13, 2), None),
    "unmqr": (None, (13, 2)),
    "geqp3": ((9, 0), (10, 0)),
    "gtsv": ((8, 0), (8, 0)),
}


def declare(module: ir.Module, t: LapackTarget) -> ir.Function:
    """The declaration of ``t``'s routine in ``module`` (made once)."""
    fn = module.globals.get(t.symbol)
    if fn is None:
        pointers, chars = SIGNATURES[t.routine][int(t.is_complex)]
        fnty = ir.FunctionType(ir.VoidType(), [PTR] * pointers + [I64] * chars)
        fn = ir.Function(module, fnty, t.symbol)
    return fn


# NUL-separated names in the string table (lookarounds: neighbours share a NUL).
_SYMBOL = re.compile(rb"(?<=\x00)([sdcz](?:" + "|".join(sorted(LAPACK_ROUTINES)).encode() + rb")_)(?=\x00)")
_lock = threading.Lock()
_registered: set[str] = set()


def symbols_in(object_code: bytes) -> set[str]:
    """The LAPACK symbols an object file's string table names."""
    return {m.decode() for m in _SYMBOL.findall(object_code)}


def ensure_symbols(object_code: bytes) -> None:
    """Register scipy's routine for every LAPACK symbol ``object_code`` calls
    with the JIT linker (``llvmlite.binding.add_symbol``), before MCJIT links it
    (an unresolved symbol would abort the process); ``UnsupportedError``
    naming the extra ``xlac[linalg]`` when scipy is missing."""
    wanted = symbols_in(object_code) - _registered
    if not wanted:
        return
    addresses = runtime_lapack.routine_addresses()
    with _lock:
        for name in sorted(wanted):
            address = addresses.get(name)
            if not address:
                raise RuntimeError(f"JIT: scipy does not export the LAPACK routine {name[:-1]}")
            llvm.add_symbol(name, address)
            _registered.add(name)
