"""The LAPACK routines JIT-compiled code calls: the ones scipy bundles.

Generated code for jax's LAPACK custom calls (``lapack_*_ffi``) calls the
standard Fortran symbols (``spotrf_``, ``dgetrf_``, ``strsm_``, ...).  Ahead of
time, the linker resolves them (``-llapack -lblas``); in this process they are
the routines scipy exports for Cython (``scipy.linalg.cython_lapack`` and
``cython_blas``: a PyCapsule per routine holding its address, what jax and
numba call too), registered with the JIT linker under the Fortran names
(``xlac.codegen.lapack.ensure_symbols``).  No Python runs per call.

scipy is the optional extra ``xlac[linalg]``; without it
:func:`routine_addresses` raises ``UnsupportedError`` naming the extra.
"""
from __future__ import annotations

import threading

from ..custom_calls import capsule_address
from ..errors import UnsupportedError

__all__ = ["routine_addresses", "MISSING_SCIPY"]

MISSING_SCIPY = "needs scipy, the optional extra xlac[linalg]: pip install 'xlac[linalg]'"

_lock = threading.Lock()
_addresses: dict[str, int] | None = None


def routine_addresses() -> dict[str, int]:
    """Fortran symbol (``spotrf_``) -> address of scipy's routine, for every
    LAPACK and BLAS routine scipy exports (read once)."""
    global _addresses
    with _lock:
        if _addresses is None:
            try:
                from scipy.linalg import cython_blas, cython_lapack
            except ImportError:
                raise UnsupportedError("custom-call", f"jax's LAPACK targets (lapack_*_ffi) {MISSING_SCIPY}") from None
            table = {}
            for module in (cython_blas, cython_lapack):
                for name, capsule in module.__pyx_capi__.items():
                    address = capsule_address(capsule)
                    if address:
                        table[f"{name}_"] = address
            _addresses = table
        return _addresses
