"""jaxlib's ``tridiagonal_solve_perturbed_ffi`` (``tridiagonal_solve(..., perturb_singular=True)``).

The compiler expands the call into HLO (``xlac/passes/tridiagonal_expander.py``);
the evaluator runs a plain port of jaxlib's kernel (``xlac/tridiagonal_reference.py``).
Here the two against each other on regular, pivoting, singular and badly scaled
systems, every element type, batches and layouts; the reference against the
system it solves (the shape rule: ``tests/test_custom_call.py``; jax's own
outputs: ``tests/jax_linalg``).
"""
from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.tridiagonal_reference import tridiagonal_solve_perturbed

TARGET = "tridiagonal_solve_perturbed_ffi"
TYPES = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
RTOL = {"f32": 2e-5, "f64": 1e-13, "c64": 2e-5, "c128": 1e-13}


def _module(t: str, batch: tuple, n: int, k: int, b_layout: str) -> str:
    vec = f"{t}[{','.join(map(str, batch + (n,)))}]"
    mat = f"{t}[{','.join(map(str, batch + (n, k)))}]"
    operands = [vec, vec, vec, mat + b_layout]
    params = "\n".join(f"  p{j} = {s} parameter({j})" for j, s in enumerate(operands))
    return (f"HloModule m\nENTRY e {{\n{params}\n  ROOT r = {mat + b_layout} custom-call(p0, p1, p2, p3), "
            f'custom_call_target="{TARGET}", operand_layout_constraints={{{", ".join(operands)}}}, '
            "api_version=API_VERSION_TYPED_FFI, backend_config={}\n}\n")


def _column_major(rank: int) -> str:
    return "{" + ",".join(map(str, (rank - 2, rank - 1, *range(rank - 3, -1, -1)))) + "}"


def _inputs(t: str, batch: tuple, n: int, k: int, kind: str, rng):
    dt = TYPES[t]

    def r(*shape):
        x = rng.standard_normal(shape)
        if t.startswith("c"):
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dt)
    dl, d, du, b = r(*batch, n), r(*batch, n), r(*batch, n), r(*batch, n, k)
    if kind == "pivoting":          # small diagonal: rows swap
        d *= 1e-3
    elif kind == "singular":        # zero pivots, and a zero matrix at the end of the batch
        d[...] = 0
        dl[..., 1::2] = 0
        if batch:
            dl[-1], d[-1], du[-1] = 0, 0, 0
    elif kind == "scaled":          # tiny pivots beside a huge right-hand side
        d[...] = 1e-30 if t in ("f32", "c64") else 1e-300
        dl[...], du[...] = d, d
        b[..., 0, :] = 1e20
    return [dl, d, du, b]


CASES = [(t, batch, n, k, kind) for t in TYPES for (batch, n, k) in (((), 1, 3), ((), 2, 2), ((2, 3), 7, 3),
                                                                     ((4,), 9, 1))
         for kind in ("regular", "pivoting", "singular", "scaled")]


@pytest.mark.parametrize("t,batch,n,k,kind", CASES)
def test_jit_matches_the_evaluator(t, batch, n, k, kind):
    rng = np.random.default_rng(len(batch) * 100 + n * 10 + k)
    args = _inputs(t, batch, n, k, kind, rng)
    text = _module(t, batch, n, k, _column_major(len(batch) + 2))
    want = xlac.evaluate(text, *args)
    got = xlac.jit(text)(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.all(np.isfinite(want)) or kind == "regular"
    # (complex products and quotients round differently in numpy and in the generated
    # code: norm-wise, as elements of mixed magnitudes cancel)
    atol = 0 if t in ("f32", "f64") or not want.size else RTOL[t] * np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=RTOL[t], atol=atol)
    if t in ("f32", "f64"):         # the expansion does jaxlib's arithmetic, step by step
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("layout", ["{2,1,0}", "{1,2,0}", "{0,1,2}"])
def test_any_layout_of_b_and_the_result(layout):
    rng = np.random.default_rng(5)
    args = _inputs("f64", (3,), 6, 4, "pivoting", rng)
    got = xlac.jit(_module("f64", (3,), 6, 4, layout))(*args)
    np.testing.assert_array_equal(got, tridiagonal_solve_perturbed(*args))


@pytest.mark.parametrize("t", list(TYPES))
def test_the_solution_solves_a_regular_system(t):
    rng = np.random.default_rng(7)
    dl, d, du, b = _inputs(t, (2,), 8, 3, "pivoting", rng)
    x = xlac.jit(_module(t, (2,), 8, 3, _column_major(3)))(dl, d, du, b)
    for i in range(2):
        T = np.diag(d[i]) + np.diag(dl[i][1:], -1) + np.diag(du[i][:-1], 1)
        np.testing.assert_allclose(T @ x[i], b[i], rtol=0, atol=50 * np.finfo(d.dtype).eps * np.abs(b[i]).max()
                                   * np.abs(T).max() * np.abs(np.linalg.inv(T)).max())


def test_a_singular_system_gets_a_finite_solution():
    # T - lambda I for an eigenvalue lambda of T: inverse iteration's system; the
    # solution points along lambda's eigenvector.
    n = 6
    off = np.ones(n, np.float64)
    lam = 2 * np.cos(np.pi / (n + 1))
    x = xlac.jit(_module("f64", (), n, 1, "{0,1}"))(off, np.full(n, -lam), off, np.ones((n, 1)))
    assert np.all(np.isfinite(x)) and np.abs(x).max() > 1e10
    v = np.sin(np.arange(1, n + 1) * np.pi / (n + 1))
    np.testing.assert_allclose(np.abs(x[:, 0] / np.linalg.norm(x)), v / np.linalg.norm(v), atol=1e-10)


@pytest.mark.parametrize("n,k", [(0, 2), (3, 0)])
def test_empty_systems(n, k):
    args = [np.zeros(n, np.float32)] * 3 + [np.zeros((n, k), np.float32)]
    got = xlac.jit(_module("f32", (), n, k, "{0,1}"))(*args)
    assert got.shape == (n, k)
