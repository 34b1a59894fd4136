"""jaxlib's ``cpu_csr_sparse_dense_ffi`` (``bcsr @ x`` of ``jax.experimental.sparse``).

The compiler expands the call into HLO (``xlac/passes/sparse_expander.py``); the
evaluator sums with numpy.  Here both against the dense product, for every
element and index type, vectors and matrices, empty rows, padding entries
(column out of range, entries past ``indptr[rows]``), non-finite values and
layouts of ``rhs`` (the shape rule: ``tests/test_custom_call.py``).
"""
from __future__ import annotations

import numpy as np
import pytest

import xlac

TARGET = "cpu_csr_sparse_dense_ffi"
TYPES = {"s32": np.int32, "s64": np.int64, "f32": np.float32, "f64": np.float64,
         "c64": np.complex64, "c128": np.complex128}


def _module(t: str, it: str, nse: int, rows: int, rhs: tuple, rhs_layout: str = "") -> str:
    out = (rows,) + rhs[1:]
    shapes = [f"{t}[{nse}]", f"{it}[{rows + 1}]", f"{it}[{nse}]", f"{t}[{','.join(map(str, rhs))}]{rhs_layout}"]
    params = "\n".join(f"  p{j} = {s} parameter({j})" for j, s in enumerate(shapes))
    return (f"HloModule m\nENTRY e {{\n{params}\n  ROOT r = {t}[{','.join(map(str, out))}] "
            f'custom-call(p0, p1, p2, p3), custom_call_target="{TARGET}", '
            "api_version=API_VERSION_TYPED_FFI, backend_config={}\n}\n")


def _csr(dense: np.ndarray, it, pad: int):
    """``dense`` as (data, indptr, indices) with ``pad`` entries of jax's padding
    (column ``cols``, past the last row) at the end."""
    rows, cols = dense.shape
    r, c = np.nonzero(dense)
    data = np.concatenate([dense[r, c], np.zeros(pad, dense.dtype)])
    indices = np.concatenate([c, np.full(pad, cols)]).astype(it)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=rows))]).astype(it)
    return data, indptr, indices


def _dense(t: str, shape, rng, density=0.4):
    x = rng.integers(-5, 6, shape) if t.startswith("s") else rng.standard_normal(shape)
    if t.startswith("c"):
        x = x + 1j * rng.standard_normal(shape)
    x = x * (rng.random(shape) < density)
    return x.astype(TYPES[t])


CASES = [(t, it, rows, rhs) for t in TYPES for it in ("s32", "s64")
         for rows, rhs in ((5, (7,)), (5, (7, 3)), (1, (4, 1)), (9, (2, 6)))]


@pytest.mark.parametrize("t,it,rows,rhs", CASES)
def test_jit_and_evaluator_match_the_dense_product(t, it, rows, rhs):
    rng = np.random.default_rng(rows * 10 + len(rhs))
    dense = _dense(t, (rows, rhs[0]), rng)
    dense[rows // 2] = 0                              # an empty row
    data, indptr, indices = _csr(dense, TYPES[it], pad=3)
    x = _dense(t, rhs, rng, density=1.0)
    text = _module(t, it, data.shape[0], rows, rhs)
    want = dense @ x
    got = xlac.jit(text)(data, indptr, indices, x)
    evaluated = xlac.evaluate(text, data, indptr, indices, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    if t.startswith("s"):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(evaluated, want)
    else:
        tol = 1e-5 if t in ("f32", "c64") else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        np.testing.assert_allclose(evaluated, want, rtol=tol, atol=tol)


def test_out_of_range_entries_add_nothing():
    # jax's sparse_bcoo_bcsr_test: entry 3 is past indptr[rows] (column 3 is in range)
    text = _module("f32", "s32", 4, 3, (4,))
    args = [np.array([1, 2, 3, 4], np.float32), np.array([0, 1, 3, 3], np.int32),
            np.array([0, 1, 2, 3], np.int32), np.array([1, 2, 3, 4], np.float32)]
    want = np.array([1, 2 * 2 + 3 * 3, 0], np.float32)
    np.testing.assert_array_equal(xlac.jit(text)(*args), want)
    np.testing.assert_array_equal(xlac.evaluate(text, *args), want)
    # negative and too-large columns, entries before indptr[0]
    text = _module("f64", "s64", 5, 2, (3, 2))
    args = [np.arange(1, 6, dtype=np.float64), np.array([1, 3, 4], np.int64), np.array([0, -1, 2, 3, 1], np.int64),
            np.arange(6, dtype=np.float64).reshape(3, 2)]
    # entry 0 is before indptr[0], 1 has column -1, 3 column 3 = cols, 4 is past indptr[rows]
    want = np.array([[3 * 4, 3 * 5], [0, 0]], np.float64)
    np.testing.assert_array_equal(xlac.jit(text)(*args), want)
    np.testing.assert_array_equal(xlac.evaluate(text, *args), want)


def test_a_dropped_entry_does_not_turn_an_infinite_row_into_nan():
    text = _module("f32", "s32", 3, 2, (2, 2))
    x = np.array([[np.inf, 1], [2, 3]], np.float32)
    args = [np.array([1, 0, 5], np.float32), np.array([0, 1, 2], np.int32), np.array([1, 0, 0], np.int32), x]
    want = np.array([[2, 3], [0 * np.inf, 0]], np.float32)   # a stored zero times inf is NaN, as in Eigen
    got = xlac.jit(text)(*args)
    np.testing.assert_array_equal(got, want)
    args[1] = np.array([0, 1, 1], np.int32)                  # now entries 1 and 2 are past the last row
    np.testing.assert_array_equal(xlac.jit(text)(*args), np.array([[2, 3], [0, 0]], np.float32))


def test_accumulation_order_is_the_entries():
    # f32 sums that depend on the order: entry order, as Eigen adds them
    text = _module("f32", "s32", 3, 1, (3,))
    data = np.array([1e8, 1, -1e8], np.float32)
    args = [data, np.array([0, 3], np.int32), np.array([0, 1, 2], np.int32), np.ones(3, np.float32)]
    want = np.array([np.float32(np.float32(1e8) + np.float32(1)) - np.float32(1e8)], np.float32)
    np.testing.assert_array_equal(xlac.jit(text)(*args), want)
    np.testing.assert_array_equal(xlac.evaluate(text, *args), want)


@pytest.mark.parametrize("layout", ["{1,0}", "{0,1}"])
def test_any_layout_of_rhs(layout):
    rng = np.random.default_rng(3)
    dense = _dense("f64", (6, 5), rng)
    data, indptr, indices = _csr(dense, np.int32, pad=1)
    x = rng.standard_normal((5, 4))
    got = xlac.jit(_module("f64", "s32", data.shape[0], 6, (5, 4), layout))(data, indptr, indices, x)
    np.testing.assert_allclose(got, dense @ x, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("nse,rows,rhs", [(0, 3, (4, 2)), (2, 0, (4,)), (2, 3, (0, 2)), (2, 3, (4, 0))])
def test_empty_operands_give_zeros(nse, rows, rhs):
    args = [np.ones(nse, np.float32), np.zeros(rows + 1, np.int32), np.zeros(nse, np.int32),
            np.ones(rhs, np.float32)]
    text = _module("f32", "s32", nse, rows, rhs)
    got = xlac.jit(text)(*args)
    assert got.shape == (rows,) + rhs[1:] and not got.any()
    np.testing.assert_array_equal(xlac.evaluate(text, *args), got)
