"""The native blocked LU (``kernels/lu_blocked.py``) behind jax's
``lapack_sgetrf_ffi`` / ``lapack_dgetrf_ffi`` of matrices of at least
MIN_SIZE rows and columns: against the evaluator (scipy's ``getrf``, the
routine the smaller matrices still call) and against ``P L U = A``.  Sizes
around the panel width and not multiples of it, tall and wide, batched;
``info`` of singular matrices; exact ties for the pivot (the first row of
largest magnitude, as LAPACK); NaN.
"""
from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import KERNELS, lower
from xlac.codegen.kernels import lu_blocked

from test_aot import _assert_same_bits, build_and_run, needs_cc
from test_aot import runtime_obj  # noqa: F401 (a fixture)

pytest.importorskip("scipy", reason="the evaluator's getrf is scipy's")

DTYPES = {"s": np.float32, "d": np.float64}
TOL = {"s": 2e-4, "d": 1e-11}
K = lu_blocked.BLOCK


def _cm(dims) -> str:
    r = len(dims)
    return "{" + ",".join(str(d) for d in (r - 2, r - 1, *range(r - 3, -1, -1))) + "}"


def getrf_module(p: str, dims) -> str:
    """jax's getrf of a ``dims`` (batch..., m, n) operand, as jax emits it."""
    t = {"s": "f32", "d": "f64"}[p]
    *b, m, n = dims
    arr = f"{t}[{','.join(map(str, dims))}]{_cm(dims)}"
    piv = f"s32[{','.join(map(str, (*b, min(m, n))))}]"
    info = f"s32[{','.join(map(str, b))}]"
    return (f"HloModule m\nENTRY e {{\n  p0 = {arr} parameter(0)\n  ROOT r = ({arr}, {piv}, {info}) custom-call(p0), "
            f'custom_call_target="lapack_{p}getrf_ffi", operand_layout_constraints={{{arr}}}, '
            f"output_to_operand_aliasing={{{{0}}: (0, {{}})}}, api_version=API_VERSION_TYPED_FFI, "
            f"backend_config={{}}\n}}\n")


def chosen(text: str) -> list:
    module = lower(xlac.parse_hlo(text)).hlo
    return [KERNELS.choose(i).candidate.name for c in module.computations for i in c.instructions
            if i.opcode == "custom-call"]


def run(p: str, a: np.ndarray):
    text = getrf_module(p, a.shape)
    got = xlac.jit(text)(a)
    ref = xlac.evaluate(text, a)
    return [np.asarray(x) for x in got], [np.asarray(x) for x in ref], text


def reconstructs(a, lu, piv, p: str) -> None:
    """``P^T L U == A`` matrix by matrix (LAPACK's interchanges undone in order)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    for idx in np.ndindex(*a.shape[:-2]):
        lower_ = np.tril(lu[idx], -1)[:, :k] + np.eye(m, k)
        upper = np.triu(lu[idx])[:k, :]
        pa = a[idx].astype(np.float64)
        for i, j in enumerate(piv[idx] - 1):
            pa[[i, j]] = pa[[j, i]]
        scale = max(1.0, np.abs(a[idx]).max()) * k
        np.testing.assert_allclose(lower_.astype(np.float64) @ upper, pa, atol=TOL[p] * scale, rtol=0)


def test_the_native_kernel_takes_big_matrices_only():
    """getrf of at least MIN_SIZE rows and columns is the native kernel's."""
    assert chosen(getrf_module("s", (lu_blocked.MIN_SIZE, 300))) == ["custom-call.getrf-blocked"]
    assert chosen(getrf_module("d", (300, lu_blocked.MIN_SIZE - 1))) == ["custom-call.lapack"]


@pytest.mark.parametrize("p", "sd")
@pytest.mark.parametrize("dims", [(2 * K + 3, 2 * K + 3),          # three panels, the last a partial one
                                  (3 * K, 3 * K),                  # whole panels
                                  (5 * K + 3, 5 * K + 3),          # the update after panel 0 on 2+ workers
                                  (2 * K + 1, 2 * K + 1),          # a one-column rest joins the panel before
                                  (2 * K + 40, 2 * K + 1),         # tall
                                  (2 * K + 1, 3 * K + 17),         # wide
                                  (K * 2 + 2, K * 2 + 3),          # wide by one: a one-row trailing GEMM
                                  (2, 3, 2 * K + 5, 2 * K + 9)])   # batched
def test_random_matrices(p, dims):
    rng = np.random.default_rng(sum(dims))
    a = rng.standard_normal(dims).astype(DTYPES[p])
    (lu, piv, info), (rlu, rpiv, rinfo), text = run(p, a)
    assert chosen(text) == ["custom-call.getrf-blocked"]
    np.testing.assert_array_equal(piv, rpiv)
    np.testing.assert_array_equal(info, 0)
    np.testing.assert_array_equal(rinfo, 0)
    np.testing.assert_allclose(lu, rlu, rtol=TOL[p] * 100, atol=TOL[p] * 100)
    reconstructs(a, lu, piv, p)


def test_wide_panels(monkeypatch):
    """More than MAX_BLOCKS panels of BLOCK: panels of a multiple of BLOCK."""
    monkeypatch.setattr(lu_blocked, "MAX_BLOCKS", 2)
    xlac.clear_caches()
    try:
        assert lu_blocked.panels(5 * K + 3) == [(0, 3 * K), (3 * K, 2 * K + 3)]
        a = np.random.default_rng(5).standard_normal((5 * K + 3, 4 * K)).astype(np.float32)
        (lu, piv, info), (rlu, rpiv, _), _ = run("s", a)
        np.testing.assert_array_equal(piv, rpiv)
        np.testing.assert_allclose(lu, rlu, rtol=1e-2, atol=1e-2)
        reconstructs(a, lu, piv, "s")
    finally:
        xlac.clear_caches()


def exact_ties(m: int, n: int) -> np.ndarray:
    """An m x n matrix ``P L U`` of small integers (L unit lower, U unit
    upper, their other entries a few +-1s, rows shuffled) whose elimination
    with partial pivoting is exact: its column maxima tie (many +-1s), and
    every value met on the way, whatever order its sums go in, is a small
    dyadic number.  The witness: LAPACK's f32 and f64 factors agree bit for
    bit, and are dyadic.  Seeds are tried until one is exact."""
    import scipy.linalg as sl
    k = min(m, n)
    for seed in range(200):
        rng = np.random.default_rng(seed)
        lo = np.tril(rng.choice([-1.0, 1.0], (m, k)) * (rng.random((m, k)) < 0.02), -1) + np.eye(m, k)
        up = np.triu(rng.choice([-1.0, 1.0], (k, n)) * (rng.random((k, n)) < 0.02), 1) + np.eye(k, n)
        a = (lo @ up)[rng.permutation(m)]
        lu32, piv32 = sl.lu_factor(a.astype(np.float32), check_finite=False)
        lu64, piv64 = sl.lu_factor(a, check_finite=False)
        column_ties = np.sum(np.abs(a[:, 0]) == np.abs(a[:, 0]).max())
        if (np.array_equal(piv32, piv64) and np.array_equal(lu32.astype(np.float64), lu64)
                and np.array_equal(lu64 * 1024, np.round(lu64 * 1024)) and column_ties > 1
                and np.any(piv64 != np.arange(k))):
            return a
    raise AssertionError(f"no exact {m} x {n} matrix among the seeds")


@pytest.mark.parametrize("p", "sd")
@pytest.mark.parametrize("m,n", [(2 * K + 7, 2 * K + 7), (2 * K + 7, 4 * K + 4)])
def test_exact_ties_give_lapack_s_pivots_and_factors(p, m, n):
    """Where the arithmetic is exact the order of the sums does not matter:
    the first of the tied rows is the pivot, and pivots and factors are
    LAPACK's bit for bit."""
    a = exact_ties(m, n).astype(DTYPES[p])
    (lu, piv, info), (rlu, rpiv, rinfo), _ = run(p, a)
    np.testing.assert_array_equal(piv, rpiv)
    np.testing.assert_array_equal(lu, rlu)
    assert info == rinfo == 0


@pytest.mark.parametrize("p", "sd")
def test_zero_columns_give_info_and_the_factorisation_completes(p):
    n = 2 * K + 9
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, n, n)).astype(DTYPES[p])
    a[0, :, K + 3] = 0                 # first zero pivot at column K + 3 (1-based K + 4)
    a[0, :, n - 1] = 0
    a[1, :, n - 1] = 0                 # only the last
    (lu, piv, info), (rlu, rpiv, rinfo), _ = run(p, a)
    np.testing.assert_array_equal(info, [K + 4, n])
    np.testing.assert_array_equal(info, rinfo)
    np.testing.assert_array_equal(piv, rpiv)
    assert np.all(np.diag(lu[0])[[K + 3, n - 1]] == 0)
    np.testing.assert_allclose(lu, rlu, rtol=TOL[p] * 100, atol=TOL[p] * 100)
    reconstructs(a, lu, piv, p)


@pytest.mark.parametrize("p", "sd")
def test_nan(p):
    """A NaN is never larger than a number (reference BLAS's ``i?amax``):
    not the pivot of column 0, where it is not first; once elimination
    brings its row to the top of a column it is first and is taken, and
    NaN fills the rest of the factors.  (OpenBLAS's ``i?amax`` treats NaN
    its own way, differently for f32 and f64: only the pivots before the
    NaN row comes first are compared.)  The determinant is NaN either way."""
    n = 2 * K + 5
    rng = np.random.default_rng(8)
    a = rng.standard_normal((n, n)).astype(DTYPES[p])
    a[3, 0] = np.nan
    (lu, piv, info), (rlu, rpiv, rinfo), _ = run(p, a)
    np.testing.assert_array_equal(piv[:3], rpiv[:3])
    assert piv[0] != 4 and piv[3] == 4                  # row 3, all NaN after step 0, is first at step 3
    assert np.isnan(np.diag(lu)[3:]).all() and not np.isnan(np.diag(lu)[:3]).any()
    assert np.isnan(np.diag(rlu)).any()
    assert info == rinfo == 0


@needs_cc
def test_aot_object_factors_without_lapack(tmp_path, runtime_obj):
    """The AOT object links the library's routines in (no -llapack): the
    same bits as the JIT, on a thread pool."""
    a = np.random.default_rng(9).standard_normal((3, 2 * K + 11, 2 * K + 11))
    module = xlac.parse_hlo(getrf_module("d", a.shape))
    _, outputs, _ = build_and_run(module, [a], tmp_path, runtime_obj, name="lu", threads=True)
    for k, (got, jit) in enumerate(zip(outputs, xlac.jit(module)(a))):
        _assert_same_bits(got, np.asarray(jit), f"leaf {k}")
