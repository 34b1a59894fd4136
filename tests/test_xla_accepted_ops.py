"""Operations XLA accepts, as XLA's own tests write them (HLO text modules), through
every stage: shape inference (parsing verifies), the evaluator and compiled code.

* dot and convolution with operands of two element types: XLA converts both to their
  higher precision type (its ``OperandUpcaster``), then computes as for one type
  (XLA:CPU's optimised HLO of these modules: a ``convert`` of the narrower operand
  feeding the dot, and for a narrower result the dot in the wider type, then a
  ``convert``);
* convolution of ``pred``: an or of ands, like a pred dot;
* ``fft`` with a zero-length transform (zeros) or an empty operand (an empty
  result), XLA's ``hlo_evaluator_test`` cases;
* ``power`` of complex numbers (its special values: test_complex_special_values);
* XLA's own custom-call targets: ``TopK`` (``topk``: the k largest, or the smallest with an
  ``LT`` comparator, with their indices), ``ApproxTopK`` (``jax.lax.approx_max_k``: off TPU,
  XLA's fallback, an exact sort cut to the result's size) and ``Sharding`` (an annotation:
  its operand).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xlac

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"s8": np.int8, "s16": np.int16, "s32": np.int32, "f16": np.float16, "f32": np.float32,
          "bf16": BF16, "f64": np.float64, "pred": np.bool_, "c64": np.complex64}


def run_both(text: str, *args):
    """The evaluator's and the compiled code's results (the module must verify)."""
    return xlac.evaluate(text, *args), xlac.jit(text)(*args)


def _values(t: str, shape, rng) -> np.ndarray:
    if t.startswith("s"):
        return rng.integers(-100, 100, shape).astype(DTYPES[t])
    return (rng.standard_normal(shape) * 3).astype(DTYPES[t])


# XLA: both operands converted to their higher precision type, or to the result type
# where that is higher (bf16 x f16 -> f32 does not round the f16 operand to bf16), the
# dot computed in it (halves accumulated in f32), the result converted to the result type.
DOT_CASES = [("s8", "s16", "s16", "s16"), ("f16", "f32", "f32", "f32"), ("s16", "s8", "s32", "s32"),
             ("bf16", "f32", "bf16", "f32"), ("s8", "s16", "s8", "s16"), ("f32", "f16", "f16", "f32"),
             ("bf16", "f16", "f32", "f32")]


@pytest.mark.parametrize("lhs_t, rhs_t, out_t, compute_t", DOT_CASES)
def test_dot_of_two_element_types(lhs_t, rhs_t, out_t, compute_t):
    text = f"""HloModule dot_{lhs_t}_{rhs_t}_{out_t}

ENTRY main {{
  a = {lhs_t}[3,5] parameter(0)
  b = {rhs_t}[5,4] parameter(1)
  ROOT d = {out_t}[3,4] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
"""
    rng = np.random.default_rng(7)
    a, b = _values(lhs_t, (3, 5), rng), _values(rhs_t, (5, 4), rng)
    if compute_t.startswith("s"):     # wrapping integer arithmetic: exact in int64, then wrapped
        want = (a.astype(np.int64) @ b.astype(np.int64)).astype(DTYPES[out_t])
    else:
        want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).astype(DTYPES[out_t])
    for got in run_both(text, a, b):
        assert got.dtype == DTYPES[out_t]
        if compute_t.startswith("s"):
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                       rtol=1e-2 if out_t in ("bf16", "f16") else 1e-5)


def test_dot_of_two_types_is_converted_before_the_dot():
    """What the code generator sees: a convert of the narrower operand (XLA's
    OperandUpcaster), then a dot of one type."""
    from xlac.passes.expanders import OpExpander
    module = xlac.parse_hlo("""HloModule m
ENTRY main {
  a = s8[2,3] parameter(0)
  b = s16[3,2] parameter(1)
  ROOT d = s16[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
""")
    assert OpExpander().run(module)
    dot = module.entry.root
    assert dot.opcode == "dot"
    assert [str(o.shape.element_type.value) for o in dot.operands] == ["s16", "s16"]
    assert dot.operands[0].opcode == "convert"


def test_narrower_result_is_converted_after_the_dot():
    """bf16 x f32 -> bf16: an f32 dot, then a convert (the f32 operand is not rounded)."""
    from xlac.passes.expanders import OpExpander
    module = xlac.parse_hlo("""HloModule m
ENTRY main {
  a = bf16[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = bf16[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
""")
    OpExpander().run(module)
    root = module.entry.root
    assert root.opcode == "convert" and root.operands[0].opcode == "dot"
    assert str(root.operands[0].shape.element_type.value) == "f32"


def _conv1d(x, w):
    """out[n, o, i] = sum over c, k of x[n, c, i + k] * w[o, c, k] (no padding)."""
    n, c, size = x.shape
    o, _, k = w.shape
    out = np.zeros((n, o, size - k + 1), np.result_type(x, w))
    for i in range(size - k + 1):
        out[:, :, i] = np.einsum("nck,ock->no", x[:, :, i:i + k], w)
    return out


@pytest.mark.parametrize("lhs_t, rhs_t, out_t", [("s8", "s16", "s16"), ("f16", "f32", "f32"),
                                                 ("f32", "bf16", "f32")])
def test_convolution_of_two_element_types(lhs_t, rhs_t, out_t):
    text = f"""HloModule conv_{lhs_t}_{rhs_t}

ENTRY main {{
  a = {lhs_t}[2,3,6] parameter(0)
  b = {rhs_t}[4,3,2] parameter(1)
  ROOT c = {out_t}[2,4,5] convolution(a, b), window={{size=2}}, dim_labels=bf0_oi0->bf0
}}
"""
    rng = np.random.default_rng(3)
    a, b = _values(lhs_t, (2, 3, 6), rng), _values(rhs_t, (4, 3, 2), rng)
    if out_t.startswith("s"):
        want = _conv1d(a.astype(np.int64), b.astype(np.int64)).astype(DTYPES[out_t])
    else:
        want = _conv1d(a.astype(np.float64), b.astype(np.float64))
    for got in run_both(text, a, b):
        assert got.dtype == DTYPES[out_t]
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5)


def test_convolution_of_pred_is_an_or_of_ands():
    text = """HloModule conv_pred

ENTRY main {
  a = pred[2,2,7] parameter(0)
  b = pred[3,2,3] parameter(1)
  ROOT c = pred[2,3,5] convolution(a, b), window={size=3}, dim_labels=bf0_oi0->bf0
}
"""
    rng = np.random.default_rng(5)
    a, b = rng.random((2, 2, 7)) < 0.3, rng.random((3, 2, 3)) < 0.3
    want = _conv1d(a.astype(np.int64), b.astype(np.int64)) > 0
    assert want.any() and not want.all()
    for got in run_both(text, a, b):
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, want)


# XLA's hlo_evaluator_test FFT cases "with unusual parameters".
FFT_CASES = [("c64[1,1,1,1]", "{0}", "zeros"), ("c64[1,1,1,0]", "{1}", "empty"),
             ("c64[1,1,1,1]", "{1,0,1}", "zeros"), ("c64[0,1,0,1]", "{1,1,1}", "empty"),
             ("c64[3,0]", "{0}", "empty"), ("c64[2,4]", "{0}", "zeros")]


@pytest.mark.parametrize("shape, lengths, kind", FFT_CASES)
def test_fft_zero_length_or_empty(shape, lengths, kind):
    text = f"""HloModule fft

ENTRY main {{
  operand = {shape} parameter(0)
  ROOT fft = {shape} fft(operand), fft_type=FFT, fft_length={lengths}
}}
"""
    dims = tuple(int(d) for d in shape[4:-1].split(","))
    x = (np.full(dims, 42.24 + 24.42j)).astype(np.complex64)
    for got in run_both(text, x):
        assert got.shape == dims and got.dtype == np.complex64
        assert kind == "empty" and got.size == 0 or kind == "zeros" and not got.any()


@pytest.mark.parametrize("kind, operand, result, lengths", [
    ("RFFT", "f32[3,0]", "c64[3,0]", "{0}"), ("IRFFT", "c64[3,0]", "f32[3,0]", "{0}"),
    ("RFFT", "f32[0,8]", "c64[0,5]", "{8}"), ("IRFFT", "c64[2,0,5]", "f32[2,0,8]", "{8}")])
def test_real_fft_zero_length(kind, operand, result, lengths):
    """XLA keeps a zero-sized last dimension (not fft_length / 2 + 1 = 1)."""
    text = f"""HloModule rfft

ENTRY main {{
  operand = {operand} parameter(0)
  ROOT fft = {result} fft(operand), fft_type={kind}, fft_length={lengths}
}}
"""
    dims = tuple(int(d) for d in operand[4:-1].split(","))
    x = np.zeros(dims, DTYPES[operand[:3]])
    for got in run_both(text, x):
        assert got.size == 0 and got.shape == tuple(int(d) for d in result[4:-1].split(","))


def test_fft_length_mismatch_is_refused():
    text = """HloModule fft

ENTRY main {
  operand = c64[3,4] parameter(0)
  ROOT fft = c64[3,4] fft(operand), fft_type=FFT, fft_length={2}
}
"""
    with pytest.raises(xlac.ShapeError, match=r"fft.*last 1 dimensions \[4\] must equal fft_length \[2\]"):
        xlac.jit(text)


def test_complex_power_compiles():
    text = """HloModule power_c64

ENTRY main {
  a = c64[4] parameter(0)
  b = c64[4] parameter(1)
  ROOT p = c64[4] power(a, b)
}
"""
    a = np.array([1 + 1j, 2, -1, 0.5 - 2j], np.complex64)
    b = np.array([2, 0.5 + 1j, 0.5, -1 + 0.25j], np.complex64)
    for got in run_both(text, a, b):
        np.testing.assert_allclose(got, a.astype(np.complex128) ** b.astype(np.complex128), rtol=1e-5)


TOPK = """HloModule topk
less {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT cmp = pred[] compare(p0, p1), direction=LT, type=TOTALORDER
}
ENTRY TopK {
  x = f32[4,10] parameter(0)
  largest = (f32[4,3], s32[4,3]) custom-call(x), custom_call_target="TopK"
  smallest = (f32[4,3], s32[4,3]) custom-call(x), custom_call_target="TopK", called_computations={less}
  annotated = f32[4,10] custom-call(x), custom_call_target="Sharding", sharding={replicated}
  ROOT t = ((f32[4,3], s32[4,3]), (f32[4,3], s32[4,3]), f32[4,10]) tuple(largest, smallest, annotated)
}
"""


def test_xla_topk_and_sharding_custom_calls():
    x = np.random.default_rng(0).standard_normal((4, 10)).astype(np.float32)
    order = np.argsort(-x, axis=1, kind="stable")
    for (largest, smallest, same) in run_both(TOPK, x):
        np.testing.assert_array_equal(largest[1], order[:, :3])
        np.testing.assert_array_equal(largest[0], np.take_along_axis(x, order[:, :3], 1))
        np.testing.assert_array_equal(smallest[0], np.sort(x, axis=1)[:, :3])
        np.testing.assert_array_equal(same, x)


def test_xla_topk_with_another_comparator_is_refused_by_name():
    text = TOPK.replace("direction=LT", "direction=EQ")
    with pytest.raises(xlac.UnsupportedError, match="custom-call TopK with a comparator"):
        xlac.jit(text)


APPROX_TOPK = """HloModule approx
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=DIRECTION
}
ENTRY e {
  x = f32[4,10] parameter(0)
  iota = s32[4,10] iota(), iota_dimension=1
  init = f32[] constant(-inf)
  none = s32[] constant(-1)
  ROOT r = (f32[4,K], s32[4,K]) custom-call(x, iota, init, none), custom_call_target="ApproxTopK", api_version=API_VERSION_TYPED_FFI, backend_config={aggregate_to_topk = AGGREGATE, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 3 : i64}, called_computations={cmp}
}
"""


@pytest.mark.parametrize("direction,k,aggregate", [("GT", 3, "true"), ("LT", 3, "true"), ("GT", 10, "false")])
def test_xla_approx_topk_is_xla_s_fallback_an_exact_sort(direction, k, aggregate):
    # jax.lax.approx_max_k / approx_min_k as jax lowers them off TPU (is_fallback)
    text = APPROX_TOPK.replace("DIRECTION", direction).replace("K]", f"{k}]").replace("AGGREGATE", aggregate)
    x = np.random.default_rng(0).standard_normal((4, 10)).astype(np.float32)
    order = np.argsort(-x if direction == "GT" else x, axis=1, kind="stable")[:, :k]
    for values, indices in run_both(text, x):
        np.testing.assert_array_equal(indices, order)
        np.testing.assert_array_equal(values, np.take_along_axis(x, order, 1))


def test_xla_approx_topk_of_the_wrong_shapes_is_an_error_naming_it():
    text = APPROX_TOPK.replace("DIRECTION", "GT").replace("K]", "11]").replace("AGGREGATE", "true")
    with pytest.raises(ValueError, match="ApproxTopK"):
        xlac.jit(text)


def test_conv_of_a_constant_input_with_base_dilation_and_padding():
    """A 3-D convolution whose input is a constant, base-dilated and padded: the
    implicit GEMM's row table mixes pointers into the constant and into zeros."""
    x = np.arange(2 * 2 * 2 * 2 * 3, dtype=np.float32).reshape(2, 2, 2, 2, 3) / 10
    literal = np.array2string(x.reshape(2, 2, 2, 2, 3), separator=",", threshold=10**6).replace("[", "{") \
        .replace("]", "}")
    text = f"""HloModule conv3d
ENTRY e {{
  x = f32[2,2,2,2,3] constant({literal})
  w = f32[3,3,3,2,3] parameter(0)
  ROOT c = f32[2,4,3,3,2] convolution(x, w), window={{size=3x3x3 pad=2_1x1_1x1_1 lhs_dilate=2x2x2}}, dim_labels=b012f_012oi->b012f
}}
"""
    w = np.random.default_rng(1).standard_normal((3, 3, 3, 2, 3)).astype(np.float32)
    want, got = run_both(text, w)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert np.abs(want).sum() > 0


def test_reducer_with_arrays_inside():
    """A reducer may compute through arrays (broadcast, dot, slice) as long as it takes
    and gives scalars: here ``r(a, b) = 2ab``."""
    text = """HloModule m
reducer {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  lhs = f32[2,2] broadcast(p0), dimensions={}
  rhs = f32[2,2] broadcast(p1), dimensions={}
  dot = f32[2,2] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  slice = f32[1,1] slice(dot), slice={[0:1:1], [0:1:1]}
  ROOT reshape = f32[] reshape(slice)
}
ENTRY main {
  p0 = f32[6] parameter(0)
  one = f32[] constant(1)
  ROOT reduce = f32[] reduce(p0, one), dimensions={0}, to_apply=reducer
}
"""
    x = np.array([0.5, 1.5, -1, 2, 0.25, 3], np.float32)
    for got in run_both(text, x):
        np.testing.assert_allclose(got, np.prod(2 * x), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["f32", "f64", "c64"])
def test_xla_qr_custom_calls(dtype):
    """XLA's own ``Qr`` (LAPACK geqrf's form: R above the diagonal, Householder vectors
    below, and the taus) and ``ProductOfElementaryHouseholderReflectors`` (orgqr: Q)."""
    text = f"""HloModule qr
ENTRY e {{
  a = {dtype}[3,5,4] parameter(0)
  qr = ({dtype}[3,5,4], {dtype}[3,4]) custom-call(a), custom_call_target="Qr"
  h = {dtype}[3,5,4] get-tuple-element(qr), index=0
  taus = {dtype}[3,4] get-tuple-element(qr), index=1
  q = {dtype}[3,5,4] custom-call(h, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
  ROOT t = ({dtype}[3,5,4], {dtype}[3,5,4]) tuple(h, q)
}}
"""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 5, 4)).astype(DTYPES[dtype])
    if dtype == "c64":
        a = (a + 1j * rng.standard_normal((3, 5, 4))).astype(np.complex64)
    tol = 1e-10 if dtype == "f64" else 1e-4
    for h, q in run_both(text, a):
        r = np.triu(h[:, :4, :])
        np.testing.assert_allclose(q @ r, a, rtol=tol, atol=tol)
        np.testing.assert_allclose(np.swapaxes(q.conj(), 1, 2) @ q, np.broadcast_to(np.eye(4), (3, 4, 4)),
                                   atol=tol)
