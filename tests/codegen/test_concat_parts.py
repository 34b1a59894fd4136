"""The loop kernel of a concatenation, or of a loop fusion rooted at one,
along a dimension other than the result's minor-most one: one loop nest per
operand over its box of the result (tasks split each box along its
outermost dimension; ``kernels/loop.py``).  Checked against the evaluator
bit for bit."""
import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import lower
from xlac.codegen.kernels.loop import _concat_parts_why


def _module(body: str) -> str:
    return f"HloModule m\n\nENTRY e {{\n{body}\n}}\n"


def _fusions(text: str) -> list:
    return [i for i in lower(xlac.parse_hlo(text)).hlo.entry.instructions if i.opcode == "fusion"]


def _same_as_evaluator(text: str, *args) -> None:
    got, want = xlac.jit(text)(*args), xlac.evaluate(text, *args)
    np.testing.assert_array_equal(got, want)


# An im2col: slices of a padded input stacked along a new dimension ahead of
# the features (big enough to run as tasks), in bf16, f32 and s8.
@pytest.mark.parametrize("t", ["bf16", "f32", "s8"])
def test_fused_im2col(t):
    pieces, names = [], []
    for i in range(3):
        for j in range(2):
            pieces.append(f"  s{i}{j} = {t}[4,20,21,24]{{3,2,1,0}} slice(p), slice={{[0:4], [{i}:{i + 20}], "
                          f"[{j}:{j + 21}], [0:24]}}\n  r{i}{j} = {t}[4,20,21,1,24]{{4,3,2,1,0}} reshape(s{i}{j})")
            names.append(f"r{i}{j}")
    text = _module(f"""  x = {t}[4,20,20,24]{{3,2,1,0}} parameter(0)
  z = {t}[] constant(0)
  p = {t}[4,22,22,24]{{3,2,1,0}} pad(x, z), padding=0_0x1_1x1_1x0_0
{chr(10).join(pieces)}
  ROOT c = {t}[4,20,21,6,24]{{4,3,2,1,0}} concatenate({', '.join(names)}), dimensions={{3}}""")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 20, 20, 24)) * 50
    _same_as_evaluator(text, x.astype(xlac.Shape(getattr(xlac, t.upper()), ()).dtype))
    (fusion,) = _fusions(text)
    assert _concat_parts_why(fusion) is None


def test_operand_layouts_unlike_the_result_and_a_minor_concatenation():
    text = _module("""  a = f32[5,7,3]{2,1,0} parameter(0)
  b = f32[5,4,3]{1,2,0} parameter(1)
  c = f32[5,11,3]{2,1,0} concatenate(a, b), dimensions={1}
  d = f32[5,11,6]{2,1,0} concatenate(c, c), dimensions={2}
  ROOT t = (f32[5,11,3]{2,1,0}, f32[5,11,6]{2,1,0}) tuple(c, d)""")
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 7, 3)).astype(np.float32), rng.standard_normal((5, 4, 3)).astype(np.float32)
    got, want = xlac.jit(text)(a, b), xlac.evaluate(text, a, b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    hlo = lower(xlac.parse_hlo(text)).hlo
    c, d = (next(i for i in hlo.entry.instructions if i.name == n) for n in ("c", "d"))
    assert _concat_parts_why(c) is None
    assert "minor-most" in _concat_parts_why(d)
