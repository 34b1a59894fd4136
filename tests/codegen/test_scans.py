"""Scans written as reduce-windows (jax's cumsum, cumprod, cummax, cummin) run as
scans (xlac/codegen/kernels/scan.py, xlac/hlo/scans.py): bit for bit the
evaluator's windows, but for reverse float sums and products (added from the
end: the same values to rounding); other reduce-windows stay as written."""
import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import KERNELS, lower
from xlac.hlo.scans import runs_sequentially


def scan_module(shape: str, dim: int, op: str = "add", init: str = "0", forward: bool = True) -> str:
    et, dims = shape.split("[")[0], [int(d) for d in shape.split("[")[1].rstrip("]").split(",")]
    n = dims[dim]
    size = "x".join(str(n if k == dim else 1) for k in range(len(dims)))
    pad = "x".join((f"{n - 1}_0" if forward else f"0_{n - 1}") if k == dim else "0_0" for k in range(len(dims)))
    return f"""HloModule scan
r {{
  a = {et}[] parameter(0)
  b = {et}[] parameter(1)
  ROOT c = {et}[] {op}(a, b)
}}
ENTRY e {{
  x = {shape} parameter(0)
  i = {et}[] constant({init})
  ROOT y = {shape} reduce-window(x, i), window={{size={size} pad={pad}}}, to_apply=r
}}
"""


def _accumulate(x, dim, op, forward):
    ufunc = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum}[op]
    if not forward:
        return np.flip(ufunc.accumulate(np.flip(x, dim), axis=dim), dim)
    return ufunc.accumulate(x, axis=dim)


@pytest.mark.parametrize("shape, dim", [("f32[1000]", 0), ("f32[65536]", 0), ("f32[7,300]", 1), ("f32[300,5]", 0),
                                        ("f32[2,257,3]", 1), ("f32[17]", 0)])
@pytest.mark.parametrize("forward", [True, False])
def test_cumsum_matches_the_sequential_windows(shape, dim, forward):
    module = scan_module(shape, dim, forward=forward)
    dims = tuple(int(d) for d in shape[4:-1].split(","))
    x = np.random.default_rng(dim).standard_normal(dims).astype(np.float32)
    want = _accumulate(x.astype(np.float64), dim, "add", forward)
    got = xlac.jit(module)(x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * np.sqrt(dims[dim]))
    if dims[dim] <= 2000:
        np.testing.assert_allclose(xlac.evaluate(module, x), want, rtol=1e-4, atol=1e-3 * np.sqrt(dims[dim]))


@pytest.mark.parametrize("op, init, et", [("maximum", "-inf", "f32"), ("minimum", "inf", "f32"),
                                          ("multiply", "1", "f64"), ("add", "0", "s32"),
                                          ("maximum", "-2147483648", "s32")])
def test_other_reducers_and_integers_are_exact(op, init, et):
    module = scan_module(f"{et}[3,400]", 1, op, init)
    rng = np.random.default_rng(1)
    if et == "s32":
        x = rng.integers(-1000, 1000, (3, 400)).astype(np.int32)
    else:
        x = (1 + 1e-3 * rng.standard_normal((3, 400))).astype(np.dtype({"f32": np.float32, "f64": np.float64}[et]))
    got = xlac.jit(module)(x)
    want = _accumulate(x, 1, op, True)
    if et == "s32" or op in ("maximum", "minimum"):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12)


def _kernel(text: str) -> str:
    (scan,) = [i for i in lower(xlac.parse_hlo(text)).hlo.entry.instructions if i.opcode == "reduce-window"]
    return KERNELS.choose(scan).candidate.name


def test_which_scans_run_as_scans():
    # Forward scans of any reducer; reverse ones of one operand whose reducer is
    # associative and commutative: integers, pred, floats and complex numbers.
    for module in (scan_module("f32[1000]", 0), scan_module("s32[1000]", 0, forward=False),
                   scan_module("s8[4,1000]", 1, "maximum", "-128", forward=False),
                   scan_module("f32[1000]", 0, forward=False), scan_module("bf16[9,300]", 1, forward=False),
                   scan_module("f64[300,7]", 0, "minimum", "inf", forward=False),
                   scan_module("c64[500]", 0, "multiply", "(1, 0)", forward=False),
                   scan_module("f32[1000]", 0, init="1", forward=False)):
        assert _kernel(module) == "reduce-window.scan"
    # Any reducer (the spec's are associative, their inits identities), not a
    # window shorter than the dimension.
    def window(text):
        return next(i for i in xlac.parse_hlo(text).entry.instructions if i.opcode == "reduce-window")
    assert runs_sequentially(window(scan_module("f32[1000]", 0, "atan2", forward=False)))
    assert not runs_sequentially(window(scan_module("f32[1000]", 0).replace("size=1000", "size=999")))


LOGADDEXP_SCAN = """HloModule m
r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] maximum(a, b)
  d = f32[] subtract(a, b)
  ad = f32[] abs(d)
  nd = f32[] negate(ad)
  e = f32[] exponential(nd)
  l = f32[] log-plus-one(e)
  ROOT s = f32[] add(m, l)
}
ENTRY e {
  x = f32[6,700] parameter(0)
  i = f32[] constant(-inf)
  ROOT y = f32[6,700] reduce-window(x, i), window={size=1x700 pad=0_0x0_699}, to_apply=r
}
"""

ARGMAX_SCAN = """HloModule m
r {
  a = s32[] parameter(0)
  ai = s32[] parameter(1)
  b = s32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  take = pred[] or(gt, tie)
  v = s32[] select(take, a, b)
  k = s32[] select(take, ai, bi)
  ROOT t = (s32[], s32[]) tuple(v, k)
}
ENTRY e {
  x = s32[300,5] parameter(0)
  ix = s32[300,5] iota(), iota_dimension=0
  lo = s32[] constant(-2147483648)
  big = s32[] constant(2147483647)
  ROOT y = (s32[300,5], s32[300,5]) reduce-window(x, ix, lo, big), window={size=300x1 pad=0_299x0_0}, to_apply=r
}
"""


def test_reverse_scans_of_any_reducer_run_from_the_end():
    """jax's reverse ``cumlogsumexp`` (a reducer of six ops) and a variadic
    reverse arg-max scan: one step per element from the end, the operands in
    the window's order; the log-sum-exp to rounding, the arg-max exactly."""
    x = np.random.default_rng(4).standard_normal((6, 700)).astype(np.float32)
    assert _kernel(LOGADDEXP_SCAN) == "reduce-window.scan"
    want = np.logaddexp.accumulate(x[:, ::-1].astype(np.float64), axis=1)[:, ::-1]
    np.testing.assert_allclose(xlac.jit(LOGADDEXP_SCAN)(x), want, rtol=2e-5)
    xi = np.random.default_rng(5).integers(-20, 20, (300, 5)).astype(np.int32)
    got = xlac.jit(ARGMAX_SCAN)(xi)
    want = xlac.evaluate(ARGMAX_SCAN, xi)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("shape, dim, op, init", [("f32[3,4000]", 1, "add", "0"), ("f64[700,6]", 0, "add", "0.5"),
                                                  ("bf16[5,1024]", 1, "add", "0"),
                                                  ("f32[1000,9]", 0, "multiply", "1"),
                                                  ("f32[7,500]", 1, "maximum", "-inf"),
                                                  ("c64[2,600]", 1, "add", "(0, 0)")])
def test_reverse_float_scans_are_the_windows_to_rounding(shape, dim, op, init):
    """Added from the end rather than from each window's start: the evaluator's
    values to the rounding of a sum of that length (max and min exactly)."""
    import ml_dtypes
    module = scan_module(shape, dim, op, init, forward=False)
    et, dims = shape.split("[")[0], tuple(int(d) for d in shape.split("[")[1][:-1].split(","))
    rng = np.random.default_rng(3)
    x = rng.standard_normal(dims)
    if et == "c64":
        x = x + 1j * rng.standard_normal(dims)
    if op == "multiply":
        x = 1 + x / 200
    dtype = {"bf16": ml_dtypes.bfloat16, "c64": np.complex64, "f32": np.float32, "f64": np.float64}[et]
    x = x.astype(dtype)
    got = np.asarray(xlac.jit(module)(x)).astype(np.complex128 if et == "c64" else np.float64)
    want = np.asarray(xlac.evaluate(module, x)).astype(got.dtype)
    if op == "maximum":
        np.testing.assert_array_equal(got, want)
    else:
        eps = {"bf16": 2 ** -8, "f32": 2 ** -24, "f64": 2 ** -53, "c64": 2 ** -24}[et]
        n = dims[dim]
        scale = np.abs(_accumulate(np.abs(x.astype(got.dtype)), dim, "add" if op == "add" else "multiply", False))
        assert np.all(np.abs(got - want) <= 4 * n * eps * scale + 1e-300)


_SCANS = [("f32[1024,64]", 1, True, "add", "0"), ("f32[64,1024]", 0, True, "add", "0"),
          ("bf16[37,300]", 1, True, "add", "0"), ("f16[3,200,5]", 1, True, "multiply", "1"),
          ("bf16[300,37]", 0, True, "add", "0"), ("f8e5m2[40,9]", 1, True, "maximum", "-inf"),
          ("s8[19,500]", 1, False, "add", "0"), ("u8[500,9]", 0, False, "maximum", "0"),
          ("s32[13,300]", 1, False, "minimum", "7"), ("f32[11,2,70]", 2, True, "add", "0.5"),
          ("f64[5]", 0, True, "maximum", "-1"), ("pred[9,33]", 1, False, "or", "false"),
          # big enough to share rows among threads, rows left over
          ("f32[300,600]", 1, True, "add", "0"), ("s32[301,500]", 1, False, "add", "0")]


@pytest.mark.parametrize("shape, dim, forward, op, init", _SCANS, ids=[f"{s[0]}-{s[1]}-{s[2]}-{s[3]}" for s in _SCANS])
def test_scans_are_the_windows_bit_for_bit(shape, dim, forward, op, init):
    """Every element type, both directions, along minor and major dimensions,
    inits that are not the identity: the scan kernel's bits are the evaluator's
    (its windows folded as written)."""
    import ml_dtypes
    module = scan_module(shape, dim, op, init, forward=forward)
    et, dims = shape.split("[")[0], tuple(int(d) for d in shape.split("[")[1][:-1].split(","))
    rng = np.random.default_rng(2)
    dtype = {"bf16": ml_dtypes.bfloat16, "pred": np.bool_}.get(et) or np.dtype(xlac.PrimitiveType(et).dtype)
    x = rng.integers(0, 2, dims).astype(np.bool_) if et == "pred" else \
        (rng.standard_normal(dims) * 3).astype(dtype)
    if op == "multiply":
        x = (1 + rng.standard_normal(dims) / 50).astype(dtype)
    got = xlac.jit(module)(x)
    want = np.asarray(xlac.evaluate(module, x))
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
