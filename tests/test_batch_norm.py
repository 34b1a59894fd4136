"""batch-norm-training and batch-norm-grad end to end (spec: BatchNormTraining,
BatchNormGrad): builder, shape rule and its errors, evaluator against the
spec's formulas, expansion and code generation (JIT, and an object from C),
HLO text.  batch-norm-inference is tests/test_batch_norm_inference.py."""
import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.codegen.compiler import lower
from test_aot import build_and_run, needs_cc, runtime_obj  # noqa: F401  (runtime_obj is a fixture)

DTYPES = {"f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16, "f16": np.float16}
TOLERANCE = {"f32": 2e-5, "f64": 1e-12, "bf16": 4e-2, "f16": 4e-3}
CASES = [((2, 3, 4), 1), ((5, 7), 0), ((5, 7), 1), ((2, 3, 4, 6), 3), ((4, 2, 3, 5), 0), ((8,), 0)]


def parameters(b, dtype, shapes):
    return [ops.parameter(b, k, xlac.shape(f"{dtype}{list(s)}".replace(" ", "")), f"p{k}")
            for k, s in enumerate(shapes)]


def build_training(shape, feature_index, epsilon=1e-3, dtype="f32"):
    b = xlac.XlaBuilder("bn_training")
    f = (shape[feature_index],)
    x, scale, offset = parameters(b, dtype, [shape, f, f])
    return b.build(ops.batch_norm_training(x, scale, offset, epsilon, feature_index))


def build_grad(shape, feature_index, epsilon=1e-3, dtype="f32"):
    b = xlac.XlaBuilder("bn_grad")
    f = (shape[feature_index],)
    x, scale, mean, var, dy = parameters(b, dtype, [shape, f, f, f, shape])
    return b.build(ops.batch_norm_grad(x, scale, mean, var, dy, epsilon, feature_index))


# -- the spec's formulas, in float64 ---------------------------------------------------

def _along(x, feature_index):
    along = [1] * x.ndim
    along[feature_index] = -1
    axes = tuple(d for d in range(x.ndim) if d != feature_index)
    return (lambda v: np.asarray(v, np.float64).reshape(along)), axes


def spec_training(x, scale, offset, epsilon, feature_index):
    x = np.asarray(x, np.float64)
    f, axes = _along(x, feature_index)
    m = x.size // x.shape[feature_index]
    mu = x.sum(axis=axes) / m
    var = ((x - f(mu)) ** 2).sum(axis=axes) / m
    y = f(scale) * (x - f(mu)) / np.sqrt(f(var) + epsilon) + f(offset)
    return y, mu, var


def spec_grad(x, scale, mean, var, dy, epsilon, feature_index):
    x, dy = np.asarray(x, np.float64), np.asarray(dy, np.float64)
    f, axes = _along(x, feature_index)
    m = x.size // x.shape[feature_index]
    c = (dy * (x - f(mean)) / (f(var) + epsilon)).sum(axis=axes) / m
    d = dy.sum(axis=axes) / m
    dx = f(scale) / np.sqrt(f(var) + epsilon) * (dy - f(d) - f(c) * (x - f(mean)))
    dscale = (dy * (x - f(mean)) / np.sqrt(f(var) + epsilon)).sum(axis=axes)
    doffset = dy.sum(axis=axes)
    return dx, dscale, doffset


def training_args(shape, feature_index, npdt, seed=0):
    rng = np.random.default_rng(seed + len(shape) + 10 * feature_index)
    f = shape[feature_index]
    return [(rng.standard_normal(shape) * 2 + 0.5).astype(npdt), rng.standard_normal(f).astype(npdt),
            rng.standard_normal(f).astype(npdt)]


def grad_args(shape, feature_index, npdt, seed=0):
    rng = np.random.default_rng(seed + len(shape) + 10 * feature_index)
    f = shape[feature_index]
    return [rng.standard_normal(shape).astype(npdt), rng.standard_normal(f).astype(npdt),
            (rng.standard_normal(f) * 0.1).astype(npdt), rng.uniform(0.5, 2.0, f).astype(npdt),
            rng.standard_normal(shape).astype(npdt)]


def assert_close(got, want, npdt, tol):
    assert len(got) == len(want) == 3
    for g, w in zip(got, want):
        assert g.dtype == npdt and g.shape == w.shape
        scale = 1 + np.abs(w).max(initial=0)
        assert np.abs(np.asarray(g, np.float64) - w).max(initial=0) <= tol * scale, (g, w)


# -- evaluator and compiled code against the spec ------------------------------------

@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("shape, feature_index", CASES)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_training_matches_the_spec_formulas(shape, feature_index, dtype, optimize):
    npdt = DTYPES[dtype]
    args = training_args(shape, feature_index, npdt)
    comp = build_training(shape, feature_index, 1e-3, dtype)
    want = spec_training(*args, 1e-3, feature_index)
    for got in (xlac.evaluate(comp, *args), xlac.jit(comp, optimize=optimize)(*args)):
        assert_close(got, want, npdt, TOLERANCE[dtype])


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("shape, feature_index", CASES)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_grad_matches_the_spec_formulas(shape, feature_index, dtype, optimize):
    npdt = DTYPES[dtype]
    args = grad_args(shape, feature_index, npdt)
    comp = build_grad(shape, feature_index, 1e-3, dtype)
    want = spec_grad(*args, 1e-3, feature_index)
    for got in (xlac.evaluate(comp, *args), xlac.jit(comp, optimize=optimize)(*args)):
        assert_close(got, want, npdt, TOLERANCE[dtype])


def test_grad_is_the_derivative_of_training():
    # d/dx, d/dscale, d/doffset of sum(dy * output) by central differences in f64.
    shape, fi, eps = (3, 2, 4), 1, 1e-2
    x, scale, offset = training_args(shape, fi, np.float64)
    dy = np.random.default_rng(5).standard_normal(shape)
    training = xlac.jit(build_training(shape, fi, eps, "f64"))
    _, mean, var = training(x, scale, offset)
    got = xlac.jit(build_grad(shape, fi, eps, "f64"))(x, scale, mean, var, dy)

    def loss(x, scale, offset):
        return float((training(x, scale, offset)[0] * dy).sum())

    h = 1e-6
    for k, want_shape in enumerate((shape, scale.shape, offset.shape)):
        numeric = np.zeros(want_shape)
        for idx in np.ndindex(*want_shape):
            plus, minus = [a.copy() for a in (x, scale, offset)], [a.copy() for a in (x, scale, offset)]
            plus[k][idx] += h
            minus[k][idx] -= h
            numeric[idx] = (loss(*plus) - loss(*minus)) / (2 * h)
        np.testing.assert_allclose(got[k], numeric, rtol=1e-6, atol=1e-6)


def test_training_variance_is_exact_for_a_large_mean():
    # The variance is the mean of (x - mean)^2 (the spec's formula): with a mean
    # of 1e4 and deviations of 1, E[x^2] - E[x]^2 in f32 would lose every digit.
    shape = (256, 2)
    x = (np.random.default_rng(1).standard_normal(shape) + 1e4).astype(np.float32)
    one, zero = np.ones(2, np.float32), np.zeros(2, np.float32)
    _, _, want_var = spec_training(x, one, zero, 0.0, 1)
    for got in (xlac.evaluate(build_training(shape, 1, 0.0), x, one, zero),
                xlac.jit(build_training(shape, 1, 0.0))(x, one, zero)):
        np.testing.assert_allclose(got[2], want_var, rtol=1e-3)


def test_an_empty_batch_gives_nan_moments():
    args = training_args((0, 3), 1, np.float32)
    comp = build_training((0, 3), 1)
    for y, mean, var in (xlac.evaluate(comp, *args), xlac.jit(comp)(*args)):
        assert y.shape == (0, 3) and np.isnan(mean).all() and np.isnan(var).all()


@needs_cc
def test_training_and_grad_from_c(tmp_path, runtime_obj):  # noqa: F811
    for name, comp, args in (
            ("bnt", build_training((4, 3, 5), 1), training_args((4, 3, 5), 1, np.float32)),
            ("bng", build_grad((4, 3, 5), 2, dtype="f64"), grad_args((4, 3, 5), 2, np.float64))):
        _, outputs, _ = build_and_run(comp.module, args, tmp_path / name, runtime_obj, name=name)
        for got, want in zip(outputs, xlac.jit(comp)(*args)):
            np.testing.assert_array_equal(got, want)


# -- expansion ------------------------------------------------------------------------------

@pytest.mark.parametrize("comp", [build_training((4, 16, 8), 1), build_grad((4, 16, 8), 2)],
                         ids=["training", "grad"])
def test_expanded_into_fused_loops(comp):
    lowered = lower(comp.module)
    opcodes = [i.opcode for c in lowered.hlo.computations for i in c.instructions]
    assert not any(op.startswith("batch-norm") for op in opcodes)
    entry = [i.opcode for i in lowered.hlo.entry.instructions]
    # Moments are reductions, the normalisation one loop over the operand.
    assert "reduce" in opcodes and entry.count("fusion") >= 2
    assert sum(1 for i in lowered.hlo.entry.instructions
               if i.opcode == "fusion" and i.shape.is_array and i.shape.dimensions == (4, 16, 8)) == 1


# -- text -------------------------------------------------------------------------------------

@pytest.mark.parametrize("comp, opcode", [(build_training((2, 3), 1, 0.25), "batch-norm-training"),
                                          (build_grad((2, 3), 0, 0.25), "batch-norm-grad")])
def test_text_round_trip_keeps_epsilon_and_feature_index(comp, opcode):
    text = comp.as_hlo_text()
    assert f"{opcode}(" in text and "epsilon=0.25" in text
    assert "feature_index=1" in text if opcode == "batch-norm-training" else "feature_index=0" in text
    again = xlac.parse_hlo(text)
    assert again.to_text() == xlac.parse_hlo(again.to_text()).to_text()
    root = again.entry.root
    assert root.opcode == opcode and root.shape == comp.module.entry.root.shape


def test_parsed_text_runs():
    text = """
HloModule m
ENTRY e {
  x = f32[2,2]{1,0} parameter(0)
  s = f32[2]{0} constant({1, 2})
  o = f32[2]{0} constant({0, 10})
  ROOT bn = (f32[2,2]{1,0}, f32[2]{0}, f32[2]{0}) batch-norm-training(x, s, o), epsilon=0, feature_index=1
}
"""
    x = np.array([[1, 4], [3, 8]], np.float32)
    for y, mean, var in (xlac.evaluate(text, x), xlac.jit(text)(x)):
        np.testing.assert_allclose(mean, [2, 6])
        np.testing.assert_allclose(var, [1, 4])
        np.testing.assert_allclose(y, [[-1, 8], [1, 12]])


# -- errors -----------------------------------------------------------------------------------

def _bad(build):
    b = xlac.XlaBuilder("bad")
    x = ops.parameter(b, 0, xlac.shape("f32[2,3]"), "x")
    v = ops.parameter(b, 1, xlac.shape("f32[3]"), "v")
    w = ops.parameter(b, 2, xlac.shape("f32[4]"), "w")
    return build(b, x, v, w)


@pytest.mark.parametrize("make, message", [
    (lambda b, x, v, w: ops.batch_norm_training(x, v, v, 1e-3, 2), "feature_index=2 must be a dimension"),
    (lambda b, x, v, w: ops.batch_norm_training(x, v, v, 1e-3, -1), "feature_index=-1"),
    (lambda b, x, v, w: ops.batch_norm_training(x, w, v, 1e-3, 1), "scale must be a rank-1 array of the 3"),
    (lambda b, x, v, w: ops.batch_norm_training(x, v, x, 1e-3, 1), "offset must be a rank-1 array"),
    (lambda b, x, v, w: ops.batch_norm_training(x, v, ops.convert_element_type(v, xlac.F64), 1e-3, 1),
     "offset must have the operand's element type f32, got f64"),
    (lambda b, x, v, w: ops.batch_norm_training(ops.convert_element_type(x, xlac.S32),
                                                *[ops.convert_element_type(v, xlac.S32)] * 2, 1e-3, 1),
     "floating-point element type, got s32"),
])
def test_training_shape_errors_name_the_op_and_the_rule(make, message):
    with pytest.raises(xlac.ShapeError, match="batch-norm-training") as info:
        _bad(make)
    assert message in str(info.value) and "[2,3]{1,0}" in str(info.value)


@pytest.mark.parametrize("make, message", [
    (lambda b, x, v, w: ops.batch_norm_grad(x, v, v, v, x, 1e-3, 5), "feature_index=5"),
    (lambda b, x, v, w: ops.batch_norm_grad(x, v, w, v, x, 1e-3, 1), "mean must be a rank-1 array of the 3"),
    (lambda b, x, v, w: ops.batch_norm_grad(x, v, v, w, x, 1e-3, 1), "variance must be a rank-1 array"),
    (lambda b, x, v, w: ops.batch_norm_grad(x, v, v, v, v, 1e-3, 1),
     "grad_output must have the operand's dimensions [2, 3], got f32[3]"),
    (lambda b, x, v, w: ops.batch_norm_grad(x, v, v, v, ops.convert_element_type(x, xlac.F16), 1e-3, 1),
     "grad_output must have the operand's element type f32, got f16"),
])
def test_grad_shape_errors_name_the_op_and_the_rule(make, message):
    with pytest.raises(xlac.ShapeError, match="batch-norm-grad") as info:
        _bad(make)
    assert message in str(info.value)


def test_text_is_verified_with_the_same_rule():
    text = """
HloModule m
ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  s = f32[2]{0} parameter(1)
  ROOT bn = (f32[2,3]{1,0}, f32[3]{0}, f32[3]{0}) batch-norm-training(x, s, s), epsilon=0.001, feature_index=1
}
"""
    with pytest.raises(xlac.ShapeError, match="batch-norm-training: scale must be a rank-1 array of the 3"):
        xlac.jit(text)


@pytest.mark.parametrize("make", [
    lambda x, v: ops.batch_norm_training(x, v, v, "small", 1),
    lambda x, v: ops.batch_norm_grad(x, v, v, v, x, None, 1),
    lambda x, v: ops.batch_norm_training(x, v, v, 1e-3, 1.5),
])
def test_bad_arguments_are_type_errors(make):
    b = xlac.XlaBuilder("bad")
    x = ops.parameter(b, 0, xlac.shape("f32[2,3]"), "x")
    v = ops.parameter(b, 1, xlac.shape("f32[3]"), "v")
    with pytest.raises(TypeError, match="epsilon|feature_index"):
        make(x, v)
