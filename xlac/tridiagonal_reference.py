"""The evaluator's rule for jaxlib's ``tridiagonal_solve_perturbed_ffi``.

``jax.lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)``
lowers on the CPU to this custom call of jaxlib's own (not LAPACK; jaxlib's
``tridiagonal_solve_perturbed.h``, after LAPACK's xLAGTF/xLAGTS): operands
``dl, d, du`` of shape ``[..., n]`` and ``b`` of ``[..., n, k]``, one result
of ``b``'s shape, ``x`` with ``T x = b`` for the tridiagonal ``T`` (``dl[0]``
is not read, nor ``du[n-1]`` but where it cannot matter).  Gaussian
elimination with row pivoting, the forward solve done on the fly; in the
back substitution a pivot of ``U`` so small that a row would overflow is
perturbed by ``eps * max|U|`` (doubled until it is large enough) or the row
scaled up, so a singular ``T`` gives a finite solution (inverse iteration
solves such systems).  This is a plain port, matrix by matrix, in the
element type; the compiler's version is an HLO expansion
(``passes/tridiagonal_expander.py``).
"""
from __future__ import annotations

import numpy as np

__all__ = ["tridiagonal_solve_perturbed", "limits"]


def limits(real_dtype) -> tuple:
    """(eps, safemin, bignum) of a real type, as LAPACK's xLAMCH gives them."""
    fi = np.finfo(real_dtype)
    one = real_dtype.type(1)
    tiny, small = fi.tiny, one / fi.max
    safemin = tiny if small < tiny else small * (one + fi.eps)
    return fi.eps, safemin, one / safemin


def _perturb_pivot(perturb, pivot, row, safemin, bignum):
    """jaxlib's ``MaybePerturbPivot``: (pivot, row), the pivot moved away from
    zero (or the row scaled up) until ``row / pivot`` cannot overflow."""
    rt = type(safemin)
    abs_pivot = rt(abs(pivot))
    if abs_pivot >= 1:
        return pivot, row
    perturb = np.copysign(max(rt(abs(perturb)), safemin), np.real(pivot)).astype(rt)
    max_factor = rt(np.max(np.abs(row))) if row.size else rt(0)
    while abs_pivot < 1:
        if abs_pivot < safemin:
            if abs_pivot == 0 or max_factor * safemin > abs_pivot:
                pivot, perturb = pivot + perturb, perturb * 2
            else:
                return pivot * bignum, row * bignum
        elif max_factor > abs_pivot * bignum:
            pivot, perturb = pivot + perturb, perturb * 2
        else:
            break
        abs_pivot = rt(abs(pivot))
    return pivot, row


def _solve_one(dl, d, du, rhs):
    n = d.shape[0]
    dtype = d.dtype
    eps, safemin, bignum = limits(np.dtype(np.real(d[:0]).dtype))
    rt = type(safemin)
    x = rhs.copy()
    if n == 1:
        p, row = _perturb_pivot(eps * rt(abs(d[0])), d[0], rhs[0].copy(), safemin, bignum)
        x[0] = row / p
        return x
    u = np.zeros((n, 3), dtype)
    u[0, 0], u[0, 1] = d[0], du[0]
    max_abs_u = max(rt(abs(u[0, 0])), rt(abs(u[0, 1])))
    scale1 = rt(abs(u[0, 0])) + rt(abs(u[0, 1]))
    for k in range(n - 1):
        u[k + 1, 0] = d[k + 1]
        scale2 = rt(abs(dl[k + 1])) + rt(abs(u[k + 1, 0]))
        if k < n - 2:
            scale2 += rt(abs(du[k + 1]))
        if dl[k + 1] == 0:
            scale1 = scale2
            u[k + 1, 1] = du[k + 1]
            u[k, 2] = 0
            x[k + 1] = rhs[k + 1]
        else:
            piv1 = rt(0) if u[k, 0] == 0 else rt(abs(u[k, 0])) / scale1
            piv2 = rt(abs(dl[k + 1])) / scale2
            if piv2 <= piv1:
                scale1 = scale2
                factor = dl[k + 1] / u[k, 0]
                u[k + 1, 0] -= factor * u[k, 1]
                u[k + 1, 1] = du[k + 1]
                u[k, 2] = 0
                x[k + 1] = rhs[k + 1] - factor * x[k]
            else:
                factor = u[k, 0] / dl[k + 1]
                utmp = u[k, 1]
                u[k, 0] = dl[k + 1]
                u[k + 1, 0] = utmp - factor * d[k + 1]
                u[k, 1] = d[k + 1]
                if k < n - 2:
                    u[k, 2] = du[k + 1]
                    u[k + 1, 1] = -factor * du[k + 1]
                x[k + 1] = x[k] - factor * rhs[k + 1]
                x[k] = rhs[k + 1]
                scale1 = rt(abs(u[k + 1, 0])) + rt(abs(u[k + 1, 1]))
        if k < n - 2:
            max_abs_u = max(max_abs_u, *(rt(abs(v)) for v in u[k]))
    max_abs_u = max(max_abs_u, rt(abs(u[n - 1, 0])))
    perturb = eps * max_abs_u
    one = dtype.type(1)
    for k in range(n - 1, -1, -1):
        row = x[k].copy()
        if k + 1 < n:
            row = row - u[k, 1] * x[k + 1]
        if k + 2 < n:
            row = row - u[k, 2] * x[k + 2]
        p, row = _perturb_pivot(perturb, u[k, 0], row, safemin, bignum)
        x[k] = row * (one / p)
    return x


def tridiagonal_solve_perturbed(dl, d, du, b) -> np.ndarray:
    """``x`` of ``b``'s shape and type (f32, f64, c64 or c128): ``T x = b``
    matrix by matrix over the leading dimensions (see the module docstring)."""
    dl, d, du, b = (np.asarray(v) for v in (dl, d, du, b))
    x = np.array(b, copy=True)
    n = d.shape[-1]
    if n == 0 or b.shape[-1] == 0:
        return x
    with np.errstate(all="ignore"):
        for i in np.ndindex(*b.shape[:-2]):
            x[i] = _solve_one(dl[i], d[i], du[i], b[i])
    return x
