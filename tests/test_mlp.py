"""A Python-built MLP end to end: builder -> HLO -> JIT, checked against numpy."""
import numpy as np
import pytest

import xlac
from xlac import ops


def scalar_computation(name, op, dtype=xlac.F32):
    b = xlac.XlaBuilder(name)
    x = ops.parameter(b, 0, xlac.Shape(dtype, ()), "x")
    y = ops.parameter(b, 1, xlac.Shape(dtype, ()), "y")
    return b.build(op(x, y))


def build_mlp(batch, n_in, n_hidden, n_out):
    b = xlac.XlaBuilder("mlp")
    x = ops.parameter(b, 0, xlac.Shape(xlac.F32, (batch, n_in)), "x")
    w1 = ops.parameter(b, 1, xlac.Shape(xlac.F32, (n_in, n_hidden)), "w1")
    b1 = ops.parameter(b, 2, xlac.Shape(xlac.F32, (n_hidden,)), "b1")
    w2 = ops.parameter(b, 3, xlac.Shape(xlac.F32, (n_hidden, n_out)), "w2")
    b2 = ops.parameter(b, 4, xlac.Shape(xlac.F32, (n_out,)), "b2")
    zero = ops.constant(b, np.float32(0))
    h = ops.add(ops.dot(x, w1), b1, broadcast_dimensions=[1])       # bias on the feature dimension
    h = ops.max(h, zero)                                            # relu
    logits = ops.add(ops.dot(h, w2), b2, broadcast_dimensions=[1])
    row_max = ops.reduce(logits, ops.constant(b, np.float32(-np.inf)),
                         scalar_computation("max", ops.max), dimensions_to_reduce=[1])
    e = ops.exp(ops.sub(logits, row_max, broadcast_dimensions=[0]))
    total = ops.reduce(e, zero, scalar_computation("add", ops.add), dimensions_to_reduce=[1])
    probs = ops.div(e, total, broadcast_dimensions=[0])
    return b.build(probs)


def numpy_mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0)
    logits = h @ w2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("batch,n_in,n_hidden,n_out", [(1, 3, 4, 2), (16, 32, 64, 10), (7, 13, 5, 3)])
def test_python_built_mlp_matches_numpy(batch, n_in, n_hidden, n_out):
    rng = np.random.default_rng(batch)
    args = [rng.standard_normal(s).astype(np.float32)
            for s in [(batch, n_in), (n_in, n_hidden), (n_hidden,), (n_hidden, n_out), (n_out,)]]
    comp = build_mlp(batch, n_in, n_hidden, n_out)
    got = xlac.jit(comp)(*args)
    want = numpy_mlp(*[a.astype(np.float64) for a in args])
    assert got.shape == (batch, n_out) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)  # f32 against f64
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(xlac.evaluate(comp, *args), got, rtol=1e-4, atol=1e-6)


def test_mlp_hlo_text_round_trips_and_recompiles():
    comp = build_mlp(4, 6, 8, 3)
    text = comp.as_hlo_text()
    module = xlac.parse_hlo(text)
    assert module.to_text() == text
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(4, 6), (6, 8), (8,), (8, 3), (3,)]]
    np.testing.assert_allclose(xlac.jit(text)(*args), xlac.jit(comp)(*args), rtol=0, atol=0)


def test_axpy_readme_example():
    b = xlac.XlaBuilder("axpy")
    x = ops.parameter(b, 0, xlac.shape("f32[1024]"), "x")
    y = ops.parameter(b, 1, xlac.Shape(xlac.F32, (1024,)), "y")
    out = ops.add(ops.mul(ops.constant(b, np.float32(2)), x), y)
    comp = b.build(out)
    ones = np.ones(1024, np.float32)
    np.testing.assert_array_equal(xlac.jit(comp)(ones, ones), np.full(1024, 3, np.float32))
    np.testing.assert_array_equal(xlac.evaluate(comp, ones, ones), np.full(1024, 3, np.float32))
    operators = b.build(2 * x + y)
    np.testing.assert_array_equal(xlac.jit(operators)(ones, ones), np.full(1024, 3, np.float32))
