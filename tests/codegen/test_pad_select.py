"""A fused pad with interior padding selects between its operand, read at
index 0 where the element is padding, and the padding value when the operand
is cheap (``elemental.SELECTED_PAD_OPERAND``); a costlier operand, or a pad
without interior padding, keeps the branch.  The evaluator's values either way.
(xlac's fusion pass never fuses an interior pad into a consumer, but a module
from XLA may come with such fusions: the pad here is inside a given one.)"""
import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import lower


def _text(operand: str, padding: str, in_shape=(6, 5), out_shape=None) -> str:
    return f"""HloModule m
fused {{
  x = f32[{in_shape[0]},{in_shape[1]}] parameter(0)
  v = f32[{in_shape[0]},{in_shape[1]}] {operand}
  z = f32[] constant(-2.5)
  p = f32[{out_shape[0]},{out_shape[1]}] pad(v, z), padding={padding}
  ROOT n = f32[{out_shape[0]},{out_shape[1]}] negate(p)
}}
ENTRY e {{
  x = f32[{in_shape[0]},{in_shape[1]}] parameter(0)
  ROOT f = f32[{out_shape[0]},{out_shape[1]}] fusion(x), kind=kLoop, calls=fused
}}"""


CASES = {
    # (operand, padding, result shape, selected)
    "interior": ("add(x, x)", "0_0_0x0_0_1", (6, 9), True),
    "interior, negative edges": ("add(x, x)", "1_-1_1x-2_3_2", (11, 14), True),
    "interior, expensive operand": ("exponential(x)", "0_0_0x0_0_1", (6, 9), False),
    "edges only": ("add(x, x)", "2_1_0x1_3_0", (9, 9), False),
}


@pytest.mark.parametrize("name", CASES)
def test_interior_pads_select_or_branch(name):
    operand, padding, out, selected = CASES[name]
    text = _text(operand, padding, out_shape=out)
    x = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    # (exp is xlac's within an ulp of the evaluator's)
    np.testing.assert_allclose(xlac.jit(text)(x), xlac.evaluate(text, x), rtol=3e-7, atol=0)
    ir = lower(xlac.parse_hlo(text)).llvm_ir
    kernel = ir[ir.index('define internal void @"xlac_entry.'):]
    assert (".if" not in kernel) == selected, kernel


def test_an_empty_operand_is_never_read():
    text = """HloModule m
ENTRY e {
  x = f32[4,0] parameter(0)
  v = f32[4,0] negate(x)
  z = f32[] constant(1)
  ROOT p = f32[4,3] pad(v, z), padding=0_0_0x1_2_1
}"""
    x = np.zeros((4, 0), np.float32)
    np.testing.assert_array_equal(xlac.jit(text)(x), xlac.evaluate(text, x))
