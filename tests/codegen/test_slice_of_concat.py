"""A slice of a concatenation, fused, reads only the operands its window
reaches (``Index.bounds``, ``elemental._slice``/``_concatenate``): the values
of the evaluator bit for bit, and no choice between operands left where the
window lies in one."""
import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import lower

PARTS = 8


def _fused_kernel(text: str) -> str:
    """The LLVM IR of the module's one loop fusion kernel."""
    ir = lower(xlac.parse_hlo(text)).llvm_ir
    start = ir.index('define internal void @"xlac_entry.fusion.')
    return ir[start:ir.index("\n}", start)]


def _module(root: str, shape: str) -> str:
    ps = "\n".join(f"  p{k} = f32[4,8] parameter({k})" for k in range(PARTS))
    return f"""HloModule m
ENTRY e {{
{ps}
  c = f32[4,64] concatenate({", ".join(f"p{k}" for k in range(PARTS))}), dimensions={{1}}
  two = f32[] constant(2)
  b = f32[4,64] broadcast(two), dimensions={{}}
  m = f32[4,64] multiply(c, b)
  ROOT s = {shape} {root}
}}"""


CASES = {
    "within one": ("slice(m), slice={[0:4], [17:23]}", "f32[4,6]", 1),
    "a whole operand": ("slice(m), slice={[1:3], [24:32]}", "f32[2,8]", 1),
    "across three": ("slice(m), slice={[0:4], [6:20]}", "f32[4,14]", 3),
    "strided across": ("slice(m), slice={[0:4], [3:60:9]}", "f32[4,7]", 8),
    "strided within": ("slice(m), slice={[0:4], [40:48:3]}", "f32[4,3]", 1),
    "the last": ("slice(m), slice={[0:4], [63:64]}", "f32[4,1]", 1),
}


@pytest.mark.parametrize("name", CASES)
def test_slice_of_concatenate(name):
    root, shape, reached = CASES[name]
    text = _module(root, shape)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((4, 8)).astype(np.float32) for _ in range(PARTS)]
    np.testing.assert_array_equal(xlac.jit(text)(*args), xlac.evaluate(text, *args))
    ir = _fused_kernel(text)
    assert ir.count("load float") == reached, ir
    assert ir.count("icmp ult") == reached - 1, ir


def test_slice_of_slice_of_nested_concatenate():
    """Bounds compose through a slice of a slice and a concatenation of
    concatenations; along another dimension they change nothing."""
    text = """HloModule m
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[3,7] parameter(1)
  c = f32[3,4] parameter(2)
  ab = f32[3,12] concatenate(a, b), dimensions={1}
  abc = f32[3,16] concatenate(ab, c), dimensions={1}
  n = f32[3,16] negate(abc)
  s1 = f32[2,10] slice(n), slice={[1:3], [4:14]}
  ROOT s2 = f32[2,3] slice(s1), slice={[0:2], [2:8:2]}
}"""
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((3, 5), (3, 7), (3, 4))]
    np.testing.assert_array_equal(xlac.jit(text)(*args), xlac.evaluate(text, *args))
    # s2 reads columns 6, 8, 10 of abc: all in b.
    assert _fused_kernel(text).count("load float") == 1
