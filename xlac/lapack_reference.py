"""The evaluator's rules for jax's LAPACK targets (``lapack_*_ffi``), through scipy.

Each rule runs one routine of :data:`xlac.hlo.custom_call.LAPACK_ROUTINES` on
logical numpy arrays, matrix by matrix over the leading batch dimensions,
with the semantics of jax's CPU kernels (``jaxlib/cpu/lapack_kernels.cc``):
the input copied to the first result and factored in place, 1-based pivots,
one ``info`` per matrix, real ``geev`` eigenvectors unpacked into complex
ones (only when ``info == 0``), a non-finite ``geev`` input giving
``info = -4``.  The routines are scipy's wrappers (``scipy.linalg.lapack``,
``scipy.linalg.blas``), an independent path to the same LAPACK the compiled
code calls.  Results a routine leaves undefined (U and V^T when no vectors
are computed, a ``geev`` that failed) are zeros here.

scipy is the optional extra ``xlac[linalg]``; without it a LAPACK target is
an ``UnsupportedError`` naming the extra.
"""
from __future__ import annotations

import numpy as np

from .errors import UnsupportedError
from .hlo import custom_call as hcc

__all__ = ["evaluate", "scipy_modules", "MISSING_SCIPY"]

MISSING_SCIPY = "needs scipy, the optional extra xlac[linalg]: pip install 'xlac[linalg]'"


def scipy_modules(target: str = "jax's LAPACK targets"):
    """(scipy.linalg.lapack, scipy.linalg.blas), or ``UnsupportedError`` naming the extra."""
    try:
        from scipy.linalg import blas, lapack
    except ImportError:
        raise UnsupportedError("custom-call", f"target {target} {MISSING_SCIPY}") from None
    return lapack, blas


def _fn(t: hcc.LapackTarget):
    lapack, blas = scipy_modules(t.name)
    return getattr(blas if t.routine == "trsm" else lapack, t.prefix + t.routine)


def _batches(a: np.ndarray, core: int = 2):
    return list(np.ndindex(*a.shape[:a.ndim - core]))


def _unpack(wi: np.ndarray, packed: np.ndarray, ctype) -> np.ndarray:
    """LAPACK's real eigenvector packing (a conjugate pair shares columns j, j+1) -> complex."""
    n = packed.shape[-1]
    out = packed.astype(ctype)
    j = 0
    while j < n:
        if wi[j] == 0 or np.isnan(wi[j]) or j + 1 >= n:
            j += 1
            continue
        re, im = packed[:, j], packed[:, j + 1]
        out[:, j] = re + 1j * im
        out[:, j + 1] = re - 1j * im
        j += 2
    return out


def _potrf(t, vals, opts, shapes):
    (a,) = vals
    out, info = a.copy(), np.zeros(a.shape[:-2], np.int32)
    for b in _batches(a):
        c, info[b] = _fn(t)(a[b], lower=opts["uplo"] == "L", clean=0)
        out[b] = c
    return out, info


def _trsm(t, vals, opts, shapes):
    a, x = vals[0], vals[1]
    alpha = vals[2][()] if len(vals) > 2 else 1
    out = x.copy()
    trans = {"N": 0, "T": 1, "C": 2}[opts["trans"]]
    for b in _batches(x):
        out[b] = _fn(t)(alpha, a[b], x[b], side=int(opts["side"] == "R"), lower=int(opts["uplo"] == "L"),
                        trans_a=trans, diag=int(opts["diag"] == "U"))
    return out


def _getrf(t, vals, opts, shapes):
    (a,) = vals
    m, n = a.shape[-2:]
    out, piv = a.copy(), np.zeros(a.shape[:-2] + (min(m, n),), np.int32)
    info = np.zeros(a.shape[:-2], np.int32)
    for b in _batches(a):
        lu, p, info[b] = _fn(t)(a[b])
        out[b], piv[b] = lu, p + 1            # scipy's pivots are 0-based, LAPACK's (and jax's) 1-based
    return out, piv, info


def _geqrf(t, vals, opts, shapes):
    (a,) = vals
    m, n = a.shape[-2:]
    out, tau = a.copy(), np.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
    for b in _batches(a):
        qr, tau[b], _work, _info = _fn(t)(a[b])
        out[b] = qr
    return out, tau


def _orgqr(t, vals, opts, shapes):
    a, tau = vals
    out = a.copy()
    for b in _batches(a):
        q, _work, _info = _fn(t)(a[b], tau[b])
        out[b] = q
    return out


def _ormqr(t, vals, opts, shapes):
    a, tau, c = vals
    k = tau.shape[-1]
    out = c.copy()
    lwork = max(1, c.shape[-1] if opts["side"] == "L" else c.shape[-2]) * 64
    for b in _batches(c):
        if k == 0:
            continue                     # Q = I
        cq, _work, _info = _fn(t)(opts["side"], opts["trans"], a[b][:, :k], tau[b], c[b], lwork)
        out[b] = cq
    return out


def _geqp3_one(t, a, jpvt):
    """LAPACK's geqp3 of one matrix, jpvt (1-based; nonzero: a column fixed in front)
    given: the columns marked are moved to the front as geqp3 does and factored
    without pivoting (geqrf, then ormqr on the rest), the trailing block with
    pivoting (scipy's geqp3, which takes no jpvt)."""
    m, n = a.shape
    lapack, _ = scipy_modules(t.name)
    a, jpvt, tau = a.copy(), jpvt.copy(), np.zeros(min(m, n), a.dtype)
    nf = 0
    for j in range(n):                   # dgeqp3's "move initial columns up front", 1-based values
        if jpvt[j] != 0:
            if j != nf:
                a[:, [j, nf]] = a[:, [nf, j]]
                jpvt[j] = jpvt[nf]
                jpvt[nf] = j + 1
            else:
                jpvt[j] = j + 1
            nf += 1
        else:
            jpvt[j] = j + 1
    na = min(m, nf)
    if na > 0:
        qr, tau[:na], _work, _info = getattr(lapack, t.prefix + "geqrf")(a[:, :na])
        a[:, :na] = qr
        if na < n:
            mq = getattr(lapack, t.prefix + ("unmqr" if t.is_complex else "ormqr"))
            a[:, na:], _work, _info = mq("L", "C" if t.is_complex else "T", a[:, :na], tau[:na], a[:, na:],
                                         max(1, n - na) * 64)
    if nf < min(m, n):
        qr, piv, tau[nf:], _work, _info = _fn(t)(a[nf:, nf:])
        perm = nf + piv - 1
        a[:nf, nf:] = a[:nf, perm]
        a[nf:, nf:] = qr
        jpvt[nf:] = jpvt[perm]
    return a, jpvt, tau


def _geqp3(t, vals, opts, shapes):
    a, jpvt = vals
    out, piv, tau = a.copy(), jpvt.astype(np.int32).copy(), np.zeros(shapes[2].dimensions, a.dtype)
    for b in _batches(a):
        out[b], piv[b], tau[b] = _geqp3_one(t, a[b], jpvt[b])
    return out, piv, tau


def _gtsv(t, vals, opts, shapes):
    """jax's gtsv: dl[0] and du[m-1] are not used (LAPACK's dl is jax's dl[1:]); the
    factored diagonals are returned in place (dl[0], du[m-1] unchanged)."""
    dl, d, du, x = (v.copy() for v in vals)
    info = np.zeros(x.shape[:-2], np.int32)
    m, nrhs = x.shape[-2:]
    if m == 0:
        return dl, d, du, x, info
    for b in _batches(x):
        if m == 1:                       # scipy's wrapper refuses empty dl/du; LAPACK: x = b / d
            info[b] = int(d[b][0] == 0)
            if not info[b]:
                x[b] = x[b] / d[b][0]
            continue
        rhs = x[b] if nrhs else np.zeros((m, 1), x.dtype)          # scipy's wrapper wants a column
        du2, dd, uu, xx, info[b] = _fn(t)(dl[b][1:], d[b], du[b][:-1], rhs)
        dl[b][1:], d[b], du[b][:-1] = du2, dd, uu
        if nrhs:
            x[b] = xx
    return dl, d, du, x, info


def _syevd(t, vals, opts, shapes):
    (a,) = vals
    n = a.shape[-1]
    out, w = a.copy(), np.zeros(a.shape[:-2] + (n,), shapes[1].dtype)
    info = np.zeros(a.shape[:-2], np.int32)
    for b in _batches(a):
        w[b], v, info[b] = _fn(t)(a[b], compute_v=int(opts["mode"] == "V"), lower=int(opts["uplo"] == "L"))
        if opts["mode"] == "V":
            out[b] = v
    return out, w, info


def _svd(t, vals, opts, shapes):
    (a,) = vals
    _, s_shape, u_shape, vt_shape, _ = shapes
    out = a.copy()
    s = np.zeros(s_shape.dimensions, s_shape.dtype)
    u, vt = np.zeros(u_shape.dimensions, a.dtype), np.zeros(vt_shape.dimensions, a.dtype)
    info = np.zeros(a.shape[:-2], np.int32)
    mode = opts["mode"]
    for b in _batches(a):
        uu, s[b], vv, info[b] = _fn(t)(a[b], compute_uv=int(mode != "N"), full_matrices=int(mode == "A"))
        if mode != "N":
            u[b], vt[b] = uu, vv
    return out, s, u, vt, info


def _geev(t, vals, opts, shapes):
    (a,) = vals
    ctype = shapes[-2].dtype
    info = np.zeros(a.shape[:-2], np.int32)
    w = [np.zeros(s.dimensions, s.dtype) for s in shapes[:-3]]
    vl, vr = np.zeros(a.shape, ctype), np.zeros(a.shape, ctype)
    left, right = opts["jobvl"] == "V", opts["jobvr"] == "V"
    for b in _batches(a):
        if not np.isfinite(a[b]).all():
            info[b] = -4
            continue
        got = _fn(t)(a[b], compute_vl=int(left), compute_vr=int(right))
        *ws, l_, r_, info[b] = got
        for k, x in enumerate(ws):
            w[k][b] = x
        if info[b] != 0:
            continue
        if t.is_complex:
            vl[b] = l_ if left else 0
            vr[b] = r_ if right else 0
        else:
            wi = ws[1]
            vl[b] = _unpack(wi, l_, ctype) if left else 0
            vr[b] = _unpack(wi, r_, ctype) if right else 0
    return (*w, vl, vr, info)


def _gees(t, vals, opts, shapes):
    (a,) = vals
    out, vs = a.copy(), np.zeros_like(a)
    w = [np.zeros(s.dimensions, s.dtype) for s in shapes[2:-2]]
    sdim, info = np.zeros(a.shape[:-2], np.int32), np.zeros(a.shape[:-2], np.int32)
    select = (lambda *_: 0)
    for b in _batches(a):
        got = _fn(t)(select, a[b], compute_v=int(opts["mode"] == "V"), sort_t=0)
        if t.is_complex:
            tt, sdim[b], w0, v, _work, info[b] = got
            w[0][b] = w0
        else:
            tt, sdim[b], wr, wi, v, _work, info[b] = got
            w[0][b], w[1][b] = wr, wi
        out[b] = tt
        if opts["mode"] == "V":
            vs[b] = v
    return (out, vs, *w, sdim, info)


def _gehrd(t, vals, opts, shapes):
    (a,) = vals
    n = a.shape[-1]
    high = opts["high"] if opts["high"] is not None else n
    out, tau = a.copy(), np.zeros(a.shape[:-2] + (max(n - 1, 0),), a.dtype)
    info = np.zeros(a.shape[:-2], np.int32)
    for b in _batches(a):
        if n == 0:
            continue
        ht, tt, info[b] = _fn(t)(a[b], lo=opts["low"] - 1, hi=high - 1)
        out[b], tau[b] = ht, tt[:max(n - 1, 0)]
    return out, tau, info


def _sytrd(t, vals, opts, shapes):
    (a,) = vals
    n = a.shape[-1]
    real = shapes[1].dtype
    out = a.copy()
    d = np.zeros(a.shape[:-2] + (n,), real)
    e = np.zeros(a.shape[:-2] + (max(n - 1, 0),), real)
    tau = np.zeros(a.shape[:-2] + (max(n - 1, 0),), a.dtype)
    info = np.zeros(a.shape[:-2], np.int32)
    for b in _batches(a):
        if n == 0:
            continue
        c, d[b], e[b], tau[b], info[b] = _fn(t)(a[b], lower=int(opts["uplo"] == "L"))
        out[b] = c
    return out, d, e, tau, info


_RULES = {"potrf": _potrf, "trsm": _trsm, "getrf": _getrf, "geqrf": _geqrf, "orgqr": _orgqr, "ungqr": _orgqr,
          "ormqr": _ormqr, "unmqr": _ormqr, "geqp3": _geqp3, "gtsv": _gtsv,
          "syevd": _syevd, "heevd": _syevd, "gesdd": _svd, "gesvd": _svd, "geev": _geev, "gees": _gees,
          "gehrd": _gehrd, "sytrd": _sytrd, "hetrd": _sytrd}


def evaluate(inst, values: list):
    """Run the LAPACK custom call ``inst`` on numpy ``values`` (jax's semantics)."""
    t = hcc.lapack_target(hcc.target_of(inst))
    opts = hcc.lapack_attributes(inst)
    shape = inst.shape
    shapes = list(shape.tuple_shapes) if shape.is_tuple else [shape]
    values = [np.asarray(v) for v in values]
    if t.routine in ("ormqr", "unmqr") and values[2].size == 0:
        return np.array(values[2])
    if any(v.size == 0 for v in values[:1]) and t.routine not in ("ormqr", "unmqr", "geqp3", "gtsv"):
        out = [np.zeros(s.dimensions, s.dtype) for s in shapes]
        if t.routine in ("trsm", "orgqr", "ungqr"):
            out = [np.array(values[1] if t.routine == "trsm" else values[0])]
        return tuple(out) if shape.is_tuple else out[0]
    got = _RULES[t.routine](t, values, opts, shapes)
    got = list(got) if isinstance(got, tuple) else [got]
    out = [np.asarray(g, dtype=s.dtype).reshape(s.dimensions) for g, s in zip(got, shapes)]
    return tuple(out) if shape.is_tuple else out[0]
