"""batch-norm-inference end to end (spec: BatchNormInference), the worked
example of adding an op (docs/architecture.md, "Adding an op"): builder,
shape rule, evaluator, expansion and code generation, text."""
import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.codegen.compiler import lower


def build(shape, feature_index, epsilon=1e-3, dtype="f32"):
    b = xlac.XlaBuilder("bn")
    x = ops.parameter(b, 0, xlac.shape(f"{dtype}{list(shape)}".replace(" ", "")), "x")
    f = shape[feature_index]
    per = [ops.parameter(b, k, xlac.shape(f"{dtype}[{f}]"), n)
           for k, n in enumerate(("scale", "offset", "mean", "variance"), start=1)]
    return b.build(ops.batch_norm_inference(x, *per, epsilon, feature_index))


def reference(x, scale, offset, mean, variance, epsilon, feature_index):
    along = [1] * x.ndim
    along[feature_index] = -1
    x64 = [np.asarray(a, np.float64) for a in (x, scale, offset, mean, variance)]
    x, scale, offset, mean, variance = x64[0], *(a.reshape(along) for a in x64[1:])
    return (x - mean) / np.sqrt(variance + epsilon) * scale + offset


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("shape, feature_index", [((2, 3, 4), 1), ((5, 7), 0), ((2, 3, 4, 6), 3), ((8,), 0)])
@pytest.mark.parametrize("dtype", ["f32", "f64", "bf16"])
def test_matches_the_spec_formula(shape, feature_index, dtype, optimize):
    npdt = {"f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16}[dtype]
    rng = np.random.default_rng(len(shape) + feature_index)
    f = shape[feature_index]
    args = [rng.standard_normal(shape), rng.standard_normal(f), rng.standard_normal(f),
            rng.standard_normal(f), rng.uniform(0.1, 2.0, f)]
    args = [a.astype(npdt) for a in args]
    comp = build(shape, feature_index, 1e-3, dtype)
    want = reference(*args, 1e-3, feature_index)
    tol = {"f32": 1e-5, "f64": 1e-12, "bf16": 3e-2}[dtype]
    scale = 1 + np.abs(want).max()
    for got in (xlac.evaluate(comp, *args), xlac.jit(comp, optimize=optimize)(*args)):
        assert got.dtype == npdt and got.shape == shape
        assert np.abs(np.asarray(got, np.float64) - want).max() <= tol * scale


def test_fuses_into_one_loop():
    lowered = lower(build((4, 16, 8), 1).module)
    entry = lowered.hlo.entry
    assert not any(i.opcode == "batch-norm-inference" for c in lowered.hlo.computations
                   for i in c.instructions)
    assert [i.opcode for i in entry.instructions if i.opcode not in ("parameter",)].count("fusion") >= 1


def test_text_round_trip_keeps_epsilon_and_feature_index():
    text = build((2, 3), 1, 0.25).as_hlo_text()
    assert "batch-norm-inference(" in text and "epsilon=0.25" in text and "feature_index=1" in text
    assert xlac.parse_hlo(text).to_text() == xlac.parse_hlo(xlac.parse_hlo(text).to_text()).to_text()


@pytest.mark.parametrize("make, message", [
    (lambda b, x, v, w: ops.batch_norm_inference(x, v, v, v, v, 1e-3, 2), "feature_index=2"),
    (lambda b, x, v, w: ops.batch_norm_inference(x, w, v, v, v, 1e-3, 1), "scale must be a rank-1 array of the 3"),
    (lambda b, x, v, w: ops.batch_norm_inference(
        x, v, v, v, ops.convert_element_type(v, xlac.F64), 1e-3, 1), "variance must have the operand's element type"),
    (lambda b, x, v, w: ops.batch_norm_inference(ops.convert_element_type(x, xlac.S32), v, v, v, v, 1e-3, 1),
     "floating-point"),
])
def test_shape_errors_name_the_op_and_the_rule(make, message):
    b = xlac.XlaBuilder("bad")
    x = ops.parameter(b, 0, xlac.shape("f32[2,3]"), "x")
    v = ops.parameter(b, 1, xlac.shape("f32[3]"), "v")
    w = ops.parameter(b, 2, xlac.shape("f32[4]"), "w")
    with pytest.raises(xlac.ShapeError, match="batch-norm-inference") as info:
        make(b, x, v, w)
    assert message in str(info.value)


def test_epsilon_must_be_a_number():
    b = xlac.XlaBuilder("bad")
    x = ops.parameter(b, 0, xlac.shape("f32[2,3]"), "x")
    v = ops.parameter(b, 1, xlac.shape("f32[3]"), "v")
    with pytest.raises(TypeError, match="epsilon"):
        ops.batch_norm_inference(x, v, v, v, v, "small", 1)
