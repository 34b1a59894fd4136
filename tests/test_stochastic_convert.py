"""stochastic-convert (XLA's StochasticConvertType; XLA:CPU decomposes it with
StochasticConvertDecomposer): float to signed integer, rounded up when the
random operand is below the fraction scaled to its range — builder, shape
errors, evaluator against hand values and numpy, compiled against the
evaluator, text."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac import ops


def _module(ft: str, rt: str, to: str, n: int) -> str:
    return (f"HloModule sc\n\nENTRY e {{\n  x = {ft}[{n}] parameter(0)\n  r = {rt}[{n}] parameter(1)\n"
            f"  ROOT c = {to}[{n}] stochastic-convert(x, r)\n}}\n")


def test_hand_values_f32_to_s32():
    x = np.float32([2.25, 2.25, -2.25, -2.25, 7.0, np.nan, 3e9, -3e9, 0.5, -0.0])
    quarter = np.uint32(1 << 30)            # 0.25 of the u32 range
    r = np.uint32([quarter - 1, quarter, quarter - 1, quarter, 0, 0, 0, 0, 0, 0])
    want = np.int32([3, 2, -3, -2, 7, 0, 2**31 - 1, -2**31, 1, 0])
    text = _module("f32", "u32", "s32", len(x))
    np.testing.assert_array_equal(xlac.evaluate(text, x, r), want)
    np.testing.assert_array_equal(xlac.jit(text)(x, r), want)


@pytest.mark.parametrize("ft, rt, np_f, np_r", [("f32", "u32", np.float32, np.uint32),
                                                ("f64", "u64", np.float64, np.uint64),
                                                ("f16", "u16", np.float16, np.uint16),
                                                ("bf16", "u16", ml_dtypes.bfloat16, np.uint16)])
@pytest.mark.parametrize("to", ["s8", "s16", "s32", "s64"])
@pytest.mark.parametrize("optimize", [True, False])
def test_compiled_matches_the_evaluator(ft, rt, np_f, np_r, to, optimize):
    rng = np.random.default_rng(7)
    with np.errstate(over="ignore"):
        x = (rng.standard_normal(257) * rng.choice([1, 50, 3e4], 257)).astype(np_f)
    x[:3] = np.array([np.inf, -np.inf, np.nan]).astype(np_f)
    r = rng.integers(0, np.iinfo(np_r).max, 257, dtype=np_r, endpoint=True)
    text = _module(ft, rt, to, 257)
    want = xlac.evaluate(text, x, r)
    np.testing.assert_array_equal(xlac.jit(text, optimize=optimize)(x, r), want)


def test_rounds_up_with_the_probability_of_the_fraction():
    x = np.full(20000, 1.3, np.float32)
    r = np.random.default_rng(3).integers(0, 2**32, 20000, dtype=np.uint32)
    got = xlac.jit(_module("f32", "u32", "s32", 20000))(x, r)
    assert set(np.unique(got)) <= {1, 2}
    assert abs(np.mean(got == 2) - 0.3) < 0.02


def test_builder_and_text_round_trip():
    b = xlac.XlaBuilder("sc")
    x = ops.parameter(b, 0, xlac.Shape(xlac.F32, (4,)), "x")
    r = ops.parameter(b, 1, xlac.Shape(xlac.U32, (4,)), "r")
    ops.stochastic_convert_type(x, r, xlac.S16)
    comp = b.build()
    text = comp.module.to_text()
    assert "stochastic-convert" in text
    again = xlac.parse_hlo(text)
    assert again.to_text() == xlac.parse_hlo(again.to_text()).to_text()
    xs, rs = np.float32([0.5, 1.5, -1.5, 9.9]), np.uint32([0, 2**32 - 1, 0, 2**32 - 1])
    np.testing.assert_array_equal(xlac.jit(comp)(xs, rs), np.int16([1, 1, -2, 9]))


@pytest.mark.parametrize("ft, rt, to, message", [
    ("s32", "u32", "s32", "must be floating point"),
    ("f32", "u16", "s32", "unsigned integer of the operand's 32 bits"),
    ("f32", "s32", "s32", "unsigned integer"),
    ("f32", "u32", "u32", "signed integers only"),
    ("f32", "u32", "f16", "signed integers only"),
])
def test_shape_errors_name_the_op_and_rule(ft, rt, to, message):
    with pytest.raises(xlac.ShapeError, match=f"stochastic-convert.*{message}"):
        xlac.jit(_module(ft, rt, to, 3))
