"""Scans written as reduce-windows (jax's cumsum, cumprod, cummax, cummin) become
trees (xlac/passes/reduce_window_rewriter.py): the same values as the evaluator's
sequential windows, far fewer operations; other reduce-windows stay as written."""
import numpy as np
import pytest

import xlac
from xlac.passes import reduce_window_rewriter as rwr


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


def _opcodes_after_expansion(text: str) -> list:
    from xlac.passes.expanders import OpExpander
    module = xlac.parse_hlo(text)
    OpExpander().run(module)
    return [i.opcode for i in module.entry.instructions]


def test_long_scans_become_trees_and_others_stay():
    tree = _opcodes_after_expansion(scan_module("f32[1000]", 0))
    assert tree.count("reduce-window") >= 3 and "broadcast" in tree     # rows, totals (rewritten again), ...
    assert _opcodes_after_expansion(scan_module(f"f32[{rwr.BASE}]", 0)).count("reduce-window") == 1
    # An init that is not the reducer's identity changes every window: left as written.
    assert _opcodes_after_expansion(scan_module("f32[1000]", 0, init="1")).count("reduce-window") == 1
    assert _opcodes_after_expansion(scan_module("f32[1000]", 0, op="maximum", init="0")).count("reduce-window") == 1
