"""jax's LAPACK custom calls (``lapack_<p><routine>_ffi``), routine by routine.

Every routine of ``xlac.hlo.custom_call.LAPACK_ROUTINES`` in each element
type it exists for, on one matrix and on a batch, as jax emits it (typed FFI,
column-major layouts, tuple results with ``info``): the JIT (LAPACK called
from generated loops) against the evaluator (scipy's wrappers) and against
the identity the decomposition satisfies.  Then the shape rule's errors,
``info`` for a failing factorisation, layouts, and AOT objects linked with
the system LAPACK.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.hlo.verifier import verify
from xlac.custom_calls import capsule_address

pytest.importorskip("scipy", reason="jax's LAPACK targets need scipy (xlac[linalg])")

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "runtime"
CC = next((c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)), None)

DTYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
TYPE_NAMES = {"s": "f32", "d": "f64", "c": "c64", "z": "c128"}
REAL = {"s": "f32", "d": "f64", "c": "f32", "z": "f64"}
CPLX = {"s": "c64", "d": "c128", "c": "c64", "z": "c128"}
TOL = {"s": 2e-4, "d": 1e-11, "c": 2e-4, "z": 1e-11}


def _cm(dims) -> str:
    """Column-major layout text of an array of ``dims`` (batch major)."""
    r = len(dims)
    return "{" + ",".join(str(d) for d in (r - 2, r - 1, *range(r - 3, -1, -1))) + "}"


def _arr(t, dims, matrix=False) -> str:
    text = f"{t}[{','.join(map(str, dims))}]"
    return text + (_cm(dims) if matrix else "")


def _module(target: str, operands: list, result: str, config: str = "") -> str:
    params = "\n".join(f"  p{k} = {s} parameter({k})" for k, s in enumerate(operands))
    names = ", ".join(f"p{k}" for k in range(len(operands)))
    layouts = ", ".join(operands)
    return (f"HloModule m\nENTRY e {{\n{params}\n  ROOT r = {result} custom-call({names}), "
            f'custom_call_target="{target}", operand_layout_constraints={{{layouts}}}, '
            f"api_version=API_VERSION_TYPED_FFI, backend_config={{{config}}}\n}}\n")


def _rand(p, shape, rng):
    x = rng.standard_normal(shape)
    if p in "cz":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(DTYPES[p])


def _herm(a):
    return np.swapaxes(a.conj(), -1, -2)


def _spd(p, b, n, rng):
    a = _rand(p, b + (n, n), rng)
    return (a @ _herm(a) + n * np.eye(n)).astype(DTYPES[p])


def _run(text, *args):
    got = xlac.jit(text)(*args)
    ref = xlac.evaluate(text, *args)
    return got, ref


def _close(a, b, p, scale=1.0):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=TOL[p] * 10, atol=TOL[p] * 10 * scale)


BATCHES = [(), (2, 3)]
PREFIXES = "sdcz"


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("uplo", "LU")
def test_potrf(p, b, uplo):
    rng = np.random.default_rng(1)
    n = 5
    a = _spd(p, b, n, rng)
    t, dims = TYPE_NAMES[p], b + (n, n)
    text = _module(f"lapack_{p}potrf_ffi", [_arr(t, dims, True)],
                   f"({_arr(t, dims, True)}, {_arr('s32', b)})", f"uplo = {ord(uplo)} : ui8")
    (fac, info), (rfac, rinfo) = _run(text, a)
    assert np.all(info == 0) and np.all(rinfo == 0)
    tri = np.tril(fac) if uplo == "L" else np.triu(fac)
    _close(tri, np.tril(rfac) if uplo == "L" else np.triu(rfac), p)
    recon = tri @ _herm(tri) if uplo == "L" else _herm(tri) @ tri
    _close(recon, a, p, scale=n)
    # The other triangle is left as it was (jax's kernel does not clean it).
    other = np.triu(fac, 1) if uplo == "L" else np.tril(fac, -1)
    np.testing.assert_array_equal(other, np.triu(a, 1) if uplo == "L" else np.tril(a, -1))


@pytest.mark.parametrize("p", "sd")
def test_potrf_info_of_a_matrix_that_is_not_positive_definite(p):
    a = np.stack([np.eye(3), -np.eye(3), np.diag([1.0, 1.0, -1.0])]).astype(DTYPES[p])
    t = TYPE_NAMES[p]
    text = _module(f"lapack_{p}potrf_ffi", [_arr(t, (3, 3, 3), True)], f"({_arr(t, (3, 3, 3), True)}, s32[3])",
                   "uplo = 76 : ui8")
    (_, info), (_, rinfo) = _run(text, a)
    assert list(info) == [0, 1, 3] == list(rinfo)


def _potrf_program(p, b, n, uplo, info_use="eq"):
    """jax's ``jnp.linalg.cholesky`` around a potrf: the factor where info is
    0 (``info_use`` "eq" or "ne"), NaN elsewhere; ``"raw"``: the call's
    results as they are (info observed: LAPACK's routine stays)."""
    t, dims = TYPE_NAMES[p], b + (n, n)
    call = (f"  c = ({_arr(t, dims, True)}, {_arr('s32', b)}) custom-call(a), custom_call_target=\"lapack_{p}potrf_ffi\", "
            f"operand_layout_constraints={{{_arr(t, dims, True)}}}, api_version=API_VERSION_TYPED_FFI, "
            f"backend_config={{uplo = {ord(uplo)} : ui8}}")
    if info_use == "raw":
        body = call.replace("  c =", "  ROOT c =")
    else:
        direction, pick = ("EQ", "f, nan") if info_use == "eq" else ("NE", "nan, f")
        bd = ",".join(map(str, range(len(b))))
        body = "\n".join([
            call,
            f"  f = {_arr(t, dims, True)} get-tuple-element(c), index=0",
            f"  i = {_arr('s32', b)} get-tuple-element(c), index=1",
            "  z = s32[] constant(0)",
            f"  zb = {_arr('s32', b)} broadcast(z), dimensions={{}}",
            f"  ok = pred[{','.join(map(str, b))}] compare(i, zb), direction={direction}",
            f"  okb = pred[{','.join(map(str, dims))}] broadcast(ok), dimensions={{{bd}}}",
            f"  n0 = {t}[] constant(nan)",
            f"  nan = {_arr(t, dims, True)} broadcast(n0), dimensions={{}}",
            f"  ROOT r = {_arr(t, dims, True)} select(okb, {pick})"])  # EQ: f where ok; NE: NaN where not
    return f"HloModule m\nENTRY e {{\n  a = {_arr(t, dims, True)} parameter(0)\n{body}\n}}\n"


@pytest.mark.parametrize("p", "sd")
@pytest.mark.parametrize("uplo", "LU")
@pytest.mark.parametrize("info_use", ["eq", "ne"])
def test_big_potrf_whose_info_is_tested_for_zero_is_xlac_s_cholesky(p, uplo, info_use):
    """A real potrf of order POTRF_MIN_ORDER or more whose info is only
    compared with 0 runs as a ``cholesky`` (the op-expander rewrites it), the
    other triangle kept as LAPACK keeps it; NaN exactly where LAPACK's info
    is not 0: a negative pivot in the middle, an exactly zero last pivot, NaN."""
    from xlac.codegen.compiler import lower
    from xlac.passes.expanders import POTRF_MIN_ORDER
    rng = np.random.default_rng(5)
    b, n = (3,), POTRF_MIN_ORDER + 3
    a = np.stack([_spd(p, (), n, rng) for _ in range(b[0])]).astype(DTYPES[p])
    a[0] += np.triu(rng.standard_normal((n, n)), 1) if uplo == "L" else np.tril(rng.standard_normal((n, n)), -1)
    a[1, 70, 70] = -5                                        # fails in the middle
    a[2, :, -1] = a[2, -1, :] = 0                            # the last pivot exactly 0
    text = _potrf_program(p, b, n, uplo, info_use)
    opcodes = {i.opcode for c in lower(xlac.parse_hlo(text)).hlo.computations for i in c.instructions}
    assert "cholesky" in opcodes and "custom-call" not in opcodes
    got, ref = _run(text, a)
    want = np.asarray(ref)
    assert np.isnan(got[1]).all() and np.isnan(got[2]).all() and np.isnan(want[1:]).all()
    _close(got[0], want[0], p, scale=n)
    other = np.triu(got[0], 1) if uplo == "L" else np.tril(got[0], -1)      # the operand's, bit for bit
    np.testing.assert_array_equal(other, np.triu(a[0], 1) if uplo == "L" else np.tril(a[0], -1))
    nan = a[:1].copy()
    nan[0, 5, 5] = np.nan
    assert np.isnan(xlac.jit(_potrf_program(p, (1,), n, uplo, "eq"))(nan)).all()


@pytest.mark.parametrize("p", "sd")
def test_potrf_keeps_lapack_when_info_is_observed_or_small(p):
    """Its info returned (a value LAPACK defines: the failed minor's order),
    or an order under POTRF_MIN_ORDER: LAPACK's routine stays."""
    from xlac.codegen.compiler import lower
    from xlac.passes.expanders import POTRF_MIN_ORDER

    def opcodes(text):
        return {i.opcode for c in lower(xlac.parse_hlo(text)).hlo.computations for i in c.instructions}
    assert "custom-call" in opcodes(_potrf_program(p, (), POTRF_MIN_ORDER, "L", "raw"))
    assert "custom-call" in opcodes(_potrf_program(p, (), POTRF_MIN_ORDER - 1, "L", "eq"))
    assert "cholesky" in opcodes(_potrf_program(p, (), POTRF_MIN_ORDER, "L", "eq"))


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("side,uplo,trans,diag", [("L", "L", "N", "N"), ("L", "U", "T", "U"),
                                                  ("R", "U", "C", "N"), ("R", "L", "N", "U")])
def test_trsm(p, b, side, uplo, trans, diag):
    rng = np.random.default_rng(2)
    m, n = 4, 3
    k = m if side == "L" else n
    a = (_rand(p, b + (k, k), rng) + 4 * np.eye(k)).astype(DTYPES[p])
    x = _rand(p, b + (m, n), rng)
    t = TYPE_NAMES[p]
    config = f"diag = {ord(diag)} : ui8, side = {ord(side)} : ui8, trans_x = {ord(trans)} : ui8, uplo = {ord(uplo)} : ui8"
    text = _module(f"lapack_{p}trsm_ffi", [_arr(t, b + (k, k), True), _arr(t, b + (m, n), True)],
                   _arr(t, b + (m, n), True), config)
    got, ref = _run(text, a, x)
    _close(got, ref, p)
    tri = np.tril(a) if uplo == "L" else np.triu(a)
    if diag == "U":
        tri = tri - tri * np.eye(k) + np.eye(k)
    op = {"N": tri, "T": np.swapaxes(tri, -1, -2), "C": _herm(tri)}[trans]
    _close(op @ got if side == "L" else got @ op, x, p, scale=4)


@pytest.mark.parametrize("p", "sd")
@pytest.mark.parametrize("side,uplo,trans,diag", [("L", "L", "N", "U"), ("L", "U", "T", "N"),
                                                  ("R", "U", "N", "N"), ("R", "L", "T", "U")])
def test_big_trsm_is_xlac_s_triangular_solve(p, side, uplo, trans, diag):
    """A real trsm of order TRSM_MIN_ORDER or more with several right-hand
    sides runs as a ``triangular-solve`` (the op-expander rewrites it); one
    right-hand side, or a smaller order, keeps LAPACK's routine."""
    from xlac.codegen.compiler import lower
    from xlac.passes.expanders import TRSM_MIN_ORDER
    rng = np.random.default_rng(21)
    b = (2,)
    k = TRSM_MIN_ORDER + 6
    m, n = (k, 37) if side == "L" else (37, k)
    a = (_rand(p, b + (k, k), rng) / k + 2 * np.eye(k)).astype(DTYPES[p])     # well conditioned, unit or not
    x = _rand(p, b + (m, n), rng)
    t = TYPE_NAMES[p]
    config = f"diag = {ord(diag)} : ui8, side = {ord(side)} : ui8, trans_x = {ord(trans)} : ui8, uplo = {ord(uplo)} : ui8"

    def text(rows, cols):
        return _module(f"lapack_{p}trsm_ffi", [_arr(t, b + (k, k), True), _arr(t, b + (rows, cols), True)],
                       _arr(t, b + (rows, cols), True), config)

    def opcodes(text):
        return {i.opcode for c in lower(xlac.parse_hlo(text)).hlo.computations for i in c.instructions}
    assert "triangular-solve" in opcodes(text(m, n)) and "custom-call" not in opcodes(text(m, n))
    assert "custom-call" in opcodes(text(k, 1) if side == "L" else text(1, k))
    got, ref = _run(text(m, n), a, x)
    _close(got, ref, p)
    tri = np.tril(a) if uplo == "L" else np.triu(a)
    if diag == "U":
        tri = tri - tri * np.eye(k) + np.eye(k)
    op = tri if trans == "N" else np.swapaxes(tri, -1, -2)
    _close(op @ got if side == "L" else got @ op, x, p, scale=4)


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("m,n", [(4, 4), (5, 3), (3, 5)])
def test_getrf(p, b, m, n):
    rng = np.random.default_rng(3)
    a = _rand(p, b + (m, n), rng)
    t, k = TYPE_NAMES[p], min(m, n)
    text = _module(f"lapack_{p}getrf_ffi", [_arr(t, b + (m, n), True)],
                   f"({_arr(t, b + (m, n), True)}, {_arr('s32', b + (k,))}, {_arr('s32', b)})")
    (lu, piv, info), (rlu, rpiv, rinfo) = _run(text, a)
    np.testing.assert_array_equal(piv, rpiv)
    assert piv.min() >= 1 and np.all(info == 0) and np.all(rinfo == 0)      # 1-based, as LAPACK's
    _close(lu, rlu, p)
    for idx in np.ndindex(*b):
        lower = np.tril(lu[idx], -1)[:, :k] + np.eye(m, k)
        upper = np.triu(lu[idx])[:k, :]
        pa = a[idx].copy()
        for i, j in enumerate(piv[idx] - 1):
            pa[[i, j]] = pa[[j, i]]
        _close(lower @ upper, pa, p, scale=4)


def test_getrf_info_of_a_singular_matrix():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    text = _module("lapack_dgetrf_ffi", ["f64[2,2]{0,1}"], "(f64[2,2]{0,1}, s32[2], s32[])")
    (_, _, info), (_, _, rinfo) = _run(text, a)
    assert info == 2 == rinfo


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("m,n", [(5, 3), (4, 4)])
def test_geqrf_and_orgqr(p, b, m, n):
    rng = np.random.default_rng(4)
    a = _rand(p, b + (m, n), rng)
    t, k = TYPE_NAMES[p], min(m, n)
    qr_text = _module(f"lapack_{p}geqrf_ffi", [_arr(t, b + (m, n), True)],
                      f"({_arr(t, b + (m, n), True)}, {_arr(t, b + (k,))})")
    (r, tau), (rr, rtau) = _run(qr_text, a)
    _close(r, rr, p)
    _close(tau, rtau, p)
    routine = "ungqr" if p in "cz" else "orgqr"
    q_text = _module(f"lapack_{p}{routine}_ffi", [_arr(t, b + (m, n), True), _arr(t, b + (k,))],
                     _arr(t, b + (m, n), True))
    q, rq = _run(q_text, r, tau)
    _close(q, rq, p)
    _close(q @ np.triu(r[..., :n, :]), a, p, scale=4)
    _close(_herm(q) @ q, np.broadcast_to(np.eye(n), b + (n, n)), p, scale=4)


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("left,transpose", [(True, False), (True, True), (False, False), (False, True)])
@pytest.mark.parametrize("m,n,k", [(5, 3, 3), (4, 4, 2)])
def test_ormqr_unmqr(p, b, left, transpose, m, n, k):
    """Q (from geqrf's reflectors a, tau) times c: Q c, Q^H c, c Q, c Q^H."""
    rng = np.random.default_rng(11)
    t = TYPE_NAMES[p]
    a = _rand(p, b + (m, n), rng)
    tau = _rand(p, b + (k,), rng)
    for i in np.ndindex(*b):                     # taus of real reflectors: 2 / |v|^2 makes H orthogonal
        v = np.tril(a[i][:, :k], -1) + np.eye(m, k)
        tau[i] = 2 / np.sum(np.abs(v) ** 2, axis=0)
    cdims = b + ((m, 6) if left else (6, m))
    c = _rand(p, cdims, rng)
    routine = "unmqr" if p in "cz" else "ormqr"
    text = _module(f"lapack_{p}{routine}_ffi", [_arr(t, b + (m, n), True), _arr(t, b + (k,)), _arr(t, cdims, True)],
                   _arr(t, cdims, True), f"left = {str(left).lower()}, transpose = {str(transpose).lower()}")
    got, ref = _run(text, a, tau, c)
    _close(got, ref, p)
    q = np.zeros(b + (m, m), a.dtype)
    for i in np.ndindex(*b):
        qi = np.eye(m, dtype=a.dtype)
        for j in range(k):
            v = (np.tril(a[i][:, :k], -1) + np.eye(m, k))[:, j]
            qi = qi @ (np.eye(m) - tau[i][j] * np.outer(v, v.conj()))
        q[i] = qi
    qq = _herm(q) if transpose else q
    _close(got, qq @ c if left else c @ qq, p, scale=4)


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("m,n,fixed", [(5, 3, ()), (3, 5, ()), (6, 4, (2,)), (4, 5, (1, 3))])
def test_geqp3(p, b, m, n, fixed):
    """QR with column pivoting: a[:, jpvt - 1] = Q R, |diag R| decreasing over the free
    columns; columns with a nonzero jpvt are fixed in front, in their order."""
    rng = np.random.default_rng(12)
    t, k = TYPE_NAMES[p], min(m, n)
    a = _rand(p, b + (m, n), rng)
    jpvt = np.zeros(b + (n,), np.int32)
    jpvt[..., list(fixed)] = 1
    text = _module(f"lapack_{p}geqp3_ffi", [_arr(t, b + (m, n), True), _arr("s32", b + (n,))],
                   f"({_arr(t, b + (m, n), True)}, {_arr('s32', b + (n,))}, {_arr(t, b + (k,))})")
    (r, piv, tau), (rr, rpiv, rtau) = _run(text, a, jpvt)
    np.testing.assert_array_equal(piv, rpiv)
    _close(r, rr, p, scale=4)
    _close(tau, rtau, p, scale=4)
    routine = "ungqr" if p in "cz" else "orgqr"
    q_text = _module(f"lapack_{p}{routine}_ffi", [_arr(t, b + (m, k), True), _arr(t, b + (k,))],
                     _arr(t, b + (m, k), True))
    q = xlac.jit(q_text)(np.ascontiguousarray(r[..., :, :k]), tau)
    for i in np.ndindex(*b):
        assert list(piv[i][:len(fixed)]) == [c + 1 for c in fixed]
        assert sorted(piv[i]) == list(range(1, n + 1))
        _close(q[i] @ np.triu(r[i][:k, :]), a[i][:, piv[i] - 1], p, scale=4)
        d = np.abs(np.diag(r[i]))[len(fixed):]
        assert np.all(d[:-1] >= d[1:] * (1 - 1e-4))
    if not fixed and p == "d":
        from scipy.linalg import qr
        for i in np.ndindex(*b):
            _, rs, ps = qr(a[i], pivoting=True)
            np.testing.assert_array_equal(piv[i] - 1, ps)
            _close(np.abs(np.triu(r[i][:k])), np.abs(rs[:k]), p, scale=4)


def test_geqp3_of_no_rows_numbers_the_columns():
    text = _module("lapack_dgeqp3_ffi", ["f64[0,3]{0,1}", "s32[3]"], "(f64[0,3]{0,1}, s32[3], f64[0])")
    (_, piv, _), (_, rpiv, _) = _run(text, np.zeros((0, 3)), np.array([0, 1, 0], np.int32))
    np.testing.assert_array_equal(piv, [2, 1, 3])
    np.testing.assert_array_equal(rpiv, [2, 1, 3])


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("m,nrhs", [(6, 2), (1, 3), (4, 0)])
def test_gtsv(p, b, m, nrhs):
    """Tridiagonal solve; dl[0] and du[m-1] are not part of the matrix."""
    rng = np.random.default_rng(13)
    t = TYPE_NAMES[p]
    dl, du = _rand(p, b + (m,), rng), _rand(p, b + (m,), rng)
    d = (_rand(p, b + (m,), rng) + 4).astype(DTYPES[p])
    x = _rand(p, b + (m, nrhs), rng)
    v, mat = _arr(t, b + (m,)), _arr(t, b + (m, nrhs), True)
    text = _module(f"lapack_{p}gtsv_ffi", [v, v, v, mat], f"({v}, {v}, {v}, {mat}, {_arr('s32', b)})")
    got, ref = _run(text, dl, d, du, x)
    for g, r in zip(got, ref):
        _close(g, r, p, scale=4)
    assert np.all(got[4] == 0)
    np.testing.assert_array_equal(got[0][..., :1], dl[..., :1])
    np.testing.assert_array_equal(got[2][..., m - 1:], du[..., m - 1:])
    a = np.zeros(b + (m, m), DTYPES[p])
    for i in range(m):
        a[..., i, i] = d[..., i]
        if i:
            a[..., i, i - 1], a[..., i - 1, i] = dl[..., i], du[..., i - 1]
    _close(a @ got[3], x, p, scale=4 * m)


def test_gtsv_info_of_a_singular_matrix():
    z = np.zeros(3)
    text = _module("lapack_dgtsv_ffi", ["f64[3]"] * 3 + ["f64[3,1]{0,1}"],
                   "(f64[3], f64[3], f64[3], f64[3,1]{0,1}, s32[])")
    got, ref = _run(text, z, z, z, np.ones((3, 1)))
    assert got[4] == ref[4] == 1


def test_ormqr_with_no_reflectors_and_empty_c():
    c = np.arange(6.0).reshape(3, 2)
    text = _module("lapack_dormqr_ffi", ["f64[3,0]{0,1}", "f64[0]", "f64[3,2]{0,1}"], "f64[3,2]{0,1}",
                   "left = true, transpose = false")
    got, ref = _run(text, np.zeros((3, 0)), np.zeros(0), c)
    np.testing.assert_array_equal(got, c)
    np.testing.assert_array_equal(ref, c)
    text = _module("lapack_dormqr_ffi", ["f64[3,2]{0,1}", "f64[2]", "f64[3,0]{0,1}"], "f64[3,0]{0,1}",
                   "left = true, transpose = false")
    got, ref = _run(text, np.ones((3, 2)), np.ones(2), np.zeros((3, 0)))
    assert got.shape == ref.shape == (3, 0)


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("uplo,mode", [("L", "V"), ("U", "V"), ("L", "N")])
def test_syevd_heevd(p, b, uplo, mode):
    rng = np.random.default_rng(5)
    n = 6
    a = _rand(p, b + (n, n), rng)
    a = ((a + _herm(a)) / 2).astype(DTYPES[p])
    t, routine = TYPE_NAMES[p], "heevd" if p in "cz" else "syevd"
    text = _module(f"lapack_{p}{routine}_ffi", [_arr(t, b + (n, n), True)],
                   f"({_arr(t, b + (n, n), True)}, {_arr(REAL[p], b + (n,))}, {_arr('s32', b)})",
                   f"mode = {ord(mode)} : ui8, uplo = {ord(uplo)} : ui8")
    (v, w, info), (rv, rw, rinfo) = _run(text, a)
    assert np.all(info == 0) and np.all(rinfo == 0)
    _close(w, rw, p, scale=n)
    _close(w, np.linalg.eigvalsh(a), p, scale=n)
    if mode == "V":
        _close(a @ v, v * w[..., None, :], p, scale=n)


@pytest.mark.parametrize("b", [(), (2,)])
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("routine", ["gesdd", "gesvd"])
@pytest.mark.parametrize("m,n,mode", [(5, 3, "A"), (3, 5, "S"), (4, 4, "N"), (5, 3, "N")])
def test_svd(p, b, routine, m, n, mode):
    rng = np.random.default_rng(6)
    a = _rand(p, b + (m, n), rng)
    t, k = TYPE_NAMES[p], min(m, n)
    full = mode == "A" or (mode == "N" and m != n)
    u_dims, vt_dims = (b + (m, m), b + (n, n)) if full else (b + (m, k), b + (k, n))
    text = _module(f"lapack_{p}{routine}_ffi", [_arr(t, b + (m, n), True)],
                   f"({_arr(t, b + (m, n), True)}, {_arr(REAL[p], b + (k,))}, {_arr(t, u_dims, True)}, "
                   f"{_arr(t, vt_dims, True)}, {_arr('s32', b)})", f"mode = {ord(mode)} : ui8")
    (_, s, u, vt, info), (_, rs, ru, rvt, rinfo) = _run(text, a)
    assert np.all(info == 0) and np.all(rinfo == 0)
    _close(s, rs, p, scale=4)
    _close(s, np.linalg.svd(a, compute_uv=False), p, scale=4)
    if mode == "N":
        assert not np.any(u) and not np.any(vt)         # not computed: zero
        return
    recon = (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :]
    _close(recon, a, p, scale=4)


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("left,right", [("N", "V"), ("V", "N"), ("V", "V")])
def test_geev(p, b, left, right):
    rng = np.random.default_rng(7)
    n = 5
    a = _rand(p, b + (n, n), rng)
    t, c = TYPE_NAMES[p], CPLX[p]
    w = [_arr(t, b + (n,))] * (1 if p in "cz" else 2)
    text = _module(f"lapack_{p}geev_ffi", [_arr(t, b + (n, n), True)],
                   f"({', '.join(w)}, {_arr(c, b + (n, n), True)}, {_arr(c, b + (n, n), True)}, {_arr('s32', b)})",
                   f"compute_left = {ord(left)} : ui8, compute_right = {ord(right)} : ui8")
    got, ref = _run(text, a)
    *ws, vl, vr, info = got
    *rws, rvl, rvr, rinfo = ref
    assert np.all(info == 0) and np.all(rinfo == 0)
    lam = ws[0] if p in "cz" else ws[0] + 1j * ws[1]
    for x, y in zip(ws, rws):
        _close(x, y, p, scale=4)
    if right == "V":
        _close(a @ vr, vr * lam[..., None, :], p, scale=8)
        _close(vr, rvr, p, scale=4)
    else:
        assert not np.any(vr)
    if left == "V":
        _close(_herm(vl) @ a, lam[..., :, None] * _herm(vl), p, scale=8)
    else:
        assert not np.any(vl)


@pytest.mark.parametrize("p", "sd")
def test_geev_of_a_non_finite_matrix_gives_info_minus_4(p):
    a = np.stack([np.eye(3), np.full((3, 3), np.nan)]).astype(DTYPES[p])
    t, c = TYPE_NAMES[p], CPLX[p]
    text = _module(f"lapack_{p}geev_ffi", [_arr(t, (2, 3, 3), True)],
                   f"({t}[2,3], {t}[2,3], {c}[2,3,3]{{1,2,0}}, {c}[2,3,3]{{1,2,0}}, s32[2])",
                   "compute_left = 78 : ui8, compute_right = 86 : ui8")
    got, ref = _run(text, a)
    assert list(got[-1]) == [0, -4] == list(ref[-1])
    np.testing.assert_array_equal(got[0][0], [1, 1, 1])


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("mode", "VN")
def test_gees(p, b, mode):
    rng = np.random.default_rng(8)
    n = 5
    a = _rand(p, b + (n, n), rng)
    t = TYPE_NAMES[p]
    w = [_arr(t, b + (n,))] * (1 if p in "cz" else 2)
    mat = _arr(t, b + (n, n), True)
    text = _module(f"lapack_{p}gees_ffi", [mat], f"({mat}, {mat}, {', '.join(w)}, {_arr('s32', b)}, {_arr('s32', b)})",
                   f"mode = {ord(mode)} : ui8, sort = 78 : ui8")
    got, ref = _run(text, a)
    tt, vs, *ws, sdim, info = got
    assert np.all(info == 0) and np.all(sdim == 0) and np.all(ref[-1] == 0)
    _close(tt, ref[0], p, scale=4)
    if mode == "V":
        _close(vs @ tt @ _herm(vs), a, p, scale=8)
    else:
        assert not np.any(vs)


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
def test_gehrd(p, b):
    rng = np.random.default_rng(9)
    n = 5
    a = _rand(p, b + (n, n), rng)
    t = TYPE_NAMES[p]
    text = _module(f"lapack_{p}gehrd_ffi", [_arr(t, b + (n, n), True)],
                   f"({_arr(t, b + (n, n), True)}, {_arr(t, b + (n - 1,))}, {_arr('s32', b)})",
                   f"high = {n} : i32, low = 1 : i32")
    (h, tau, info), (rh, rtau, rinfo) = _run(text, a)
    assert np.all(info == 0) and np.all(rinfo == 0)
    _close(h, rh, p, scale=4)
    _close(tau, rtau, p, scale=4)
    # The Hessenberg matrix has the eigenvalues of a.
    hess = np.triu(h, -1)
    for idx in np.ndindex(*b):
        _close(np.sort_complex(np.linalg.eigvals(hess[idx])), np.sort_complex(np.linalg.eigvals(a[idx])), p,
               scale=16)


@pytest.mark.parametrize("b", BATCHES)
@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("uplo", "LU")
def test_sytrd_hetrd(p, b, uplo):
    rng = np.random.default_rng(10)
    n = 5
    a = _rand(p, b + (n, n), rng)
    a = ((a + _herm(a)) / 2).astype(DTYPES[p])
    t, r = TYPE_NAMES[p], REAL[p]
    routine = "hetrd" if p in "cz" else "sytrd"
    text = _module(f"lapack_{p}{routine}_ffi", [_arr(t, b + (n, n), True)],
                   f"({_arr(t, b + (n, n), True)}, {_arr(r, b + (n,))}, {_arr(r, b + (n - 1,))}, "
                   f"{_arr(t, b + (n - 1,))}, {_arr('s32', b)})", f"uplo = {ord(uplo)} : ui8")
    (_, d, e, tau, info), (_, rd, re, rtau, rinfo) = _run(text, a)
    assert np.all(info == 0) and np.all(rinfo == 0)
    _close(d, rd, p, scale=4)
    _close(e, re, p, scale=4)
    _close(tau, rtau, p, scale=4)
    tri = np.zeros(b + (n, n))
    idx = np.arange(n)
    tri[..., idx, idx] = d
    tri[..., idx[:-1], idx[1:]] = e
    tri[..., idx[1:], idx[:-1]] = e
    _close(np.linalg.eigvalsh(tri), np.linalg.eigvalsh(a), p, scale=8)


# ---------------------------------------------------------------------------------------
# Conventions: layouts, alpha, empty batches, the shape rule
# ---------------------------------------------------------------------------------------

def test_row_major_operands_are_relaid_and_results_copied_to_the_written_layout():
    a = _spd("d", (), 4, np.random.default_rng(11))
    text = ("HloModule m\nENTRY e {\n  p = f64[4,4]{1,0} parameter(0)\n"
            "  r = (f64[4,4]{1,0}, s32[]) custom-call(p), custom_call_target=\"lapack_dpotrf_ffi\", "
            "api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}\n"
            "  ROOT l = f64[4,4]{1,0} get-tuple-element(r), index=0\n}\n")
    for optimize in (True, False):
        got = xlac.jit(text, optimize=optimize)(a)
        np.testing.assert_allclose(np.tril(got), np.linalg.cholesky(a), rtol=1e-12)


def test_trsm_with_an_alpha_operand():
    rng = np.random.default_rng(12)
    a = (np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3))
    x = rng.standard_normal((3, 2))
    text = ("HloModule m\nENTRY e {\n  a = f64[3,3]{0,1} parameter(0)\n  b = f64[3,2]{0,1} parameter(1)\n"
            "  alpha = f64[] parameter(2)\n"
            "  ROOT r = f64[3,2]{0,1} custom-call(a, b, alpha), custom_call_target=\"lapack_dtrsm_ffi\", "
            "api_version=API_VERSION_TYPED_FFI, "
            "backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}\n}\n")
    got, ref = _run(text, a, x, np.float64(2.0))
    np.testing.assert_allclose(a @ got, 2 * x, rtol=1e-12)
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_empty_batch_and_empty_matrices():
    text = _module("lapack_dgetrf_ffi", ["f64[0,3,3]{1,2,0}"], "(f64[0,3,3]{1,2,0}, s32[0,3], s32[0])")
    got, ref = _run(text, np.zeros((0, 3, 3)))
    assert [g.shape for g in got] == [(0, 3, 3), (0, 3), (0,)]
    text = _module("lapack_dpotrf_ffi", ["f64[2,0,0]{1,2,0}"], "(f64[2,0,0]{1,2,0}, s32[2])", "uplo = 76 : ui8")
    (_, info), _ = _run(text, np.zeros((2, 0, 0)))
    assert list(info) == [0, 0]


@pytest.mark.parametrize("result,config,words", [
    ("(f32[4,4]{0,1}, s32[2])", "uplo = 76 : ui8", "the result must be (f32[4,4], s32[])"),
    ("(f32[4,4]{0,1}, s32[])", "uplo = 88 : ui8", "uplo=88 ('X') must be one of L, U"),
    ("f32[4,4]{0,1}", "uplo = 76 : ui8", "the result must be (f32[4,4], s32[])"),
])
def test_shape_rule_errors_name_the_target(result, config, words):
    with pytest.raises(xlac.ShapeError) as info:
        verify(xlac.parse_hlo(_module("lapack_spotrf_ffi", ["f32[4,4]{0,1}"], result, config)))
    assert "lapack_spotrf_ffi" in str(info.value) and words in str(info.value)


def test_shape_rule_wants_square_matrices_and_the_right_type():
    with pytest.raises(xlac.ShapeError, match="square matrices"):
        verify(xlac.parse_hlo(_module("lapack_ssyevd_ffi", ["f32[4,3]{0,1}"], "(f32[4,3]{0,1}, f32[3], s32[])",
                                      "mode = 86 : ui8, uplo = 76 : ui8")))
    with pytest.raises(xlac.ShapeError, match="operand 0 must be f64"):
        verify(xlac.parse_hlo(_module("lapack_dpotrf_ffi", ["f32[4,4]{0,1}"], "(f32[4,4]{0,1}, s32[])",
                                      "uplo = 76 : ui8")))


def test_unknown_lapack_like_targets_are_user_targets():
    # Not one of jax's names (no such routine/prefix): an ordinary, unregistered target.
    text = _module("lapack_sungqr_ffi", ["f32[4,4]{0,1}"], "f32[4,4]{0,1}")
    with pytest.raises(xlac.UnsupportedError, match="'lapack_sungqr_ffi' is not registered"):
        xlac.jit(text)


def test_gees_sort_is_refused_clearly():
    with pytest.raises(xlac.UnsupportedError, match="sort='S'"):
        xlac.jit(xlac.parse_hlo(_module("lapack_sgees_ffi", ["f32[3,3]{0,1}"],
                                      "(f32[3,3]{0,1}, f32[3,3]{0,1}, f32[3], f32[3], s32[], s32[])",
                                      "mode = 86 : ui8, sort = 83 : ui8")))


def test_missing_scipy_names_the_extra(monkeypatch):
    import sys
    from xlac import lapack_reference
    monkeypatch.setitem(sys.modules, "scipy.linalg", None)
    text = _module("lapack_dpotrf_ffi", ["f64[2,2]{0,1}"], "(f64[2,2]{0,1}, s32[])", "uplo = 76 : ui8")
    with pytest.raises(xlac.UnsupportedError, match=r"xlac\[linalg\]"):
        lapack_reference.scipy_modules("lapack_dpotrf_ffi")
    with pytest.raises(xlac.UnsupportedError, match=r"pip install 'xlac\[linalg\]'"):
        xlac.evaluate(text, np.eye(2))
    # The JIT's routines (read once per process; here as if for the first time).
    from xlac.runtime import lapack as runtime_lapack
    monkeypatch.setattr(runtime_lapack, "_addresses", None)
    with pytest.raises(xlac.UnsupportedError, match=r"lapack_\*_ffi.*pip install 'xlac\[linalg\]'"):
        runtime_lapack.routine_addresses()


def test_jit_routines_are_scipy_s():
    from scipy.linalg import cython_lapack
    from xlac.runtime import lapack as runtime_lapack
    table = runtime_lapack.routine_addresses()
    assert {"spotrf_", "zheevd_", "dtrsm_", "cgees_"} <= set(table)
    assert table["dgetrf_"] == capsule_address(cython_lapack.__pyx_capi__["dgetrf"])


# ---------------------------------------------------------------------------------------
# Ahead of time, linked with the system LAPACK
# ---------------------------------------------------------------------------------------

def _system_lapack() -> str | None:
    """Why the AOT LAPACK test cannot run here, or None."""
    if CC is None:
        return "no C compiler (cc, gcc or clang) on PATH"
    probe = subprocess.run([CC, "-x", "c", "-", "-o", os.devnull, "-llapack", "-lblas"],
                           input="void dpotrf_(void);\nint main(void){dpotrf_();return 0;}\n",
                           capture_output=True, encoding="utf-8")
    if probe.returncode != 0:
        return ("no system LAPACK to link with (-llapack -lblas); on Debian/Ubuntu: "
                "apt-get install liblapack-dev")
    return None


AOT_MAIN = r"""
#include "solve.h"
#include <stdio.h>

int main(void) {
  /* a x = b for the SPD a below (row-major, as the parameters' layouts say) */
  double a[9] = {4, 1, 0, 1, 3, 1, 0, 1, 2}, b[3] = {1, 2, 3}, x[3];
  int status = solve_run(a, b, x, NULL);
  printf("%d %.15g %.15g %.15g\n", status, x[0], x[1], x[2]);
  return 0;
}
"""

SOLVE_HLO = """HloModule solve
ENTRY e {
  a = f64[3,3]{1,0} parameter(0)
  b = f64[3]{0} parameter(1)
  ch = (f64[3,3]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_dpotrf_ffi", operand_layout_constraints={f64[3,3]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
  l = f64[3,3]{0,1} get-tuple-element(ch), index=0
  bm = f64[3,1]{0,1} reshape(b)
  y = f64[3,1]{0,1} custom-call(l, bm), custom_call_target="lapack_dtrsm_ffi", operand_layout_constraints={f64[3,3]{0,1}, f64[3,1]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}
  z = f64[3,1]{0,1} custom-call(l, y), custom_call_target="lapack_dtrsm_ffi", operand_layout_constraints={f64[3,3]{0,1}, f64[3,1]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}
  ROOT x = f64[3]{0} reshape(z)
}
"""


def test_aot_object_links_with_the_system_lapack(tmp_path):
    why = _system_lapack()
    if why is not None:
        pytest.skip(why)
    res = xlac.compile_aot(SOLVE_HLO, tmp_path / "solve.o", header=tmp_path / "solve.h", name="solve")
    assert res.required_services == 0 and res.lapack_symbols == ("dpotrf_", "dtrsm_")
    assert "-llapack -lblas" in res.header_text
    (tmp_path / "main.c").write_text(AOT_MAIN, encoding="utf-8")
    exe = tmp_path / "main"
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", f"-I{RUNTIME}", f"-I{tmp_path}", str(tmp_path / "main.c"),
                    str(tmp_path / "solve.o"), "-o", str(exe), "-llapack", "-lblas", "-lm"],
                   check=True, capture_output=True, timeout=120)
    out = subprocess.run([str(exe)], check=True, capture_output=True, encoding="utf-8", timeout=60).stdout.split()
    a = np.array([[4, 1, 0], [1, 3, 1], [0, 1, 2]], np.float64)
    b = np.array([1, 2, 3], np.float64)
    assert out[0] == "0"
    np.testing.assert_allclose([float(v) for v in out[1:]], np.linalg.solve(a, b), rtol=1e-13)
    np.testing.assert_allclose([float(v) for v in out[1:]], xlac.jit(SOLVE_HLO)(a, b), rtol=1e-13)
