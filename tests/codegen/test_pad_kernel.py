"""A pad with interior padding, or a loop fusion rooted at one, as row loops
over the operand's phases (``kernels/pad.py``): the evaluator's bits for
every edge (negative, cutting a group short, longer than a row), stride
(within and above ``MAX_GROUP``), layout and element type, serial and in
tasks."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import lower
from xlac.codegen.kernels import pad as pad_kernel
from xlac.shape import parse_shape


def _text(in_shape: str, out_shape: str, padding: str, operand: str = "add(x, x)",
          value: str = "constant(-2.5)") -> str:
    t = in_shape.split("[")[0]
    return f"""HloModule m
ENTRY e {{
  x = {in_shape} parameter(0)
  v = {in_shape} {operand}
  z = {t}[] {value}
  ROOT p = {out_shape} pad(v, z), padding={padding}
}}"""


def _input(shape: str):
    s = parse_shape(shape)
    rng = np.random.default_rng(s.element_count())
    dims = tuple(s.dimensions)
    name = s.element_type.name.lower()
    if name == "pred":
        return rng.integers(0, 2, dims).astype(bool)
    if name in ("s8", "s32", "u8"):
        return rng.integers(-50 if name != "u8" else 0, 50, dims).astype(name.replace("s", "int").replace("u8", "uint8"))
    if name == "c64":
        return (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(np.complex64)
    x = rng.standard_normal(dims)
    if name == "bf16":
        import ml_dtypes
        return x.astype(ml_dtypes.bfloat16)
    return x.astype({"f32": np.float32, "f64": np.float64, "f16": np.float16}[name])


def _kernel_is_phased(text: str) -> None:
    hlo = lower(xlac.parse_hlo(text)).hlo
    root = hlo.entry.root
    assert pad_kernel._applies(root) is None, pad_kernel._applies(root)
    notes = [str(d) for d in hlo.diagnostics if d.source == "kernel-choice"]
    assert not any("not pad.phased" in n for n in notes), notes


CASES = {
    # name: (operand shape, result shape, padding)
    "minor stride 2": ("f32[6,5]", "f32[6,9]", "0_0_0x0_0_1"),
    "both strides, negative edges": ("f32[6,5]", "f32[11,14]", "1_-1_1x-2_3_2"),
    "major interior only": ("f32[4,7]", "f32[10,9]", "0_0_2x1_1_0"),
    "stride above MAX_GROUP": ("f32[3,5]", "f32[3,41]", "0_0_0x2_2_8"),
    "negative low cuts groups": ("f32[3,9]", "f32[3,12]", "0_0_0x-3_-2_1"),
    "negative high cuts the last group": ("f32[3,6]", "f32[3,15]", "0_0_0x0_-1_2"),
    "low padding past the first elements": ("f32[2,8]", "f32[2,8]", "0_0_0x-7_0_1"),
    "no whole group": ("f32[2,4]", "f32[2,3]", "0_0_0x-1_-3_1"),
    "size-1 result dimension": ("f32[3,5]", "f32[1,9]", "-2_0_0x0_0_1"),
    "long padding": ("f32[2,3]", "f32[2,75]", "0_0_0x30_40_1"),
    "rank 3": ("f32[3,4,5]", "f32[5,7,16]", "0_0_1x1_-1_1x1_2_2"),
    "rank 1": ("f32[37]", "f32[73]", "0_0_1"),
    "big, in tasks": ("f32[256,300]", "f32[256,599]", "0_0_0x0_0_1"),
}


@pytest.mark.parametrize("name", CASES)
def test_interior_pad_matches_the_evaluator(name):
    in_shape, out_shape, padding = CASES[name]
    text = _text(in_shape, out_shape, padding)
    _kernel_is_phased(text)
    x = _input(in_shape)
    np.testing.assert_array_equal(xlac.jit(text)(x), xlac.evaluate(text, x))


@pytest.mark.parametrize("t", ["f64", "bf16", "f16", "s8", "pred", "c64"])
def test_element_types(t):
    op = "not(x)" if t == "pred" else "add(x, x)"
    value = "constant(true)" if t == "pred" else ("constant((1, -2))" if t == "c64" else "constant(3)")
    text = _text(f"{t}[5,33]", f"{t}[9,66]", "0_0_1x0_1_1", op, value)
    _kernel_is_phased(text)
    x = _input(f"{t}[5,33]")
    got, want = xlac.jit(text)(x), xlac.evaluate(text, x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_column_major_result():
    # The rows run along dimension 0, the result's minor-most one.
    text = """HloModule m
ENTRY e {
  x = f32[7,6]{0,1} parameter(0)
  v = f32[7,6]{0,1} negate(x)
  z = f32[] constant(0)
  ROOT p = f32[13,8]{0,1} pad(v, z), padding=0_0_1x1_1_0
}"""
    _kernel_is_phased(text)
    x = _input("f32[7,6]")
    np.testing.assert_array_equal(xlac.jit(text)(x), xlac.evaluate(text, x))


@pytest.mark.parametrize("case", ["associative_scan_add", "associative_scan_max_rev"])
def test_jax_associative_scan(case):
    # Two interleaving pads and an add (a max) per level: jax's values, and
    # the evaluator's bits.
    cases = Path(__file__).resolve().parents[1] / "jax_cases"
    text = (cases / f"{case}.hlo").read_text(encoding="utf-8")
    x = np.load(cases / f"{case}.npz")["arr_0"]
    want = np.load(cases / f"{case}.expected.npz")["arr_0"]
    hlo = lower(xlac.parse_hlo(text)).hlo
    assert any(pad_kernel._applies(i) is None for i in hlo.entry.instructions)
    got = xlac.jit(text)(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got, xlac.evaluate(text, x))


def test_a_result_of_no_elements_takes_the_loop_kernel():
    # Negative edge padding can leave a dimension of the result empty.
    text = _text("f32[3,4]", "f32[0,7]", "-2_-3_1x0_0_1")
    root = lower(xlac.parse_hlo(text)).hlo.entry.root
    assert pad_kernel._applies(root) == "the result has no elements"
    x = _input("f32[3,4]")
    np.testing.assert_array_equal(xlac.jit(text)(x), xlac.evaluate(text, x))


def test_not_for_pads_without_interior_padding():
    text = _text("f32[6,5]", "f32[9,9]", "2_1_0x1_3_0")
    root = lower(xlac.parse_hlo(text)).hlo.entry.root
    assert "not a pad with interior padding" in pad_kernel._applies(root)
