"""Reduction kernels (column reductions streamed into the output, split
reductions to one value): odd sizes, several tasks, 1 and 2 threads, against
the numpy evaluator."""
import numpy as np
import pytest

import xlac

ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""
MAX = """mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
"""

CASES = [
    ((4096, 512), (0,), "1,0", "add"), ((7, 13), (0,), "1,0", "add"), ((3, 5, 7), (0, 1), "2,1,0", "add"),
    ((9, 6), (1,), "0,1", "add"), ((5, 2, 3), (0,), "2,1,0", "mx"), ((1, 33), (0,), "1,0", "add"),
    ((6, 5, 7), (1,), "2,1,0", "mx"), ((300, 1501), (0,), "1,0", "add"), ((65, 4, 1025), (0,), "2,1,0", "mx"),
    ((300, 1501), (1,), "1,0", "add"), ((1 << 18,), (0,), "0", "add"),
]


@pytest.mark.parametrize("dims,red,layout,reducer", CASES)
def test_reduce_of_a_fused_operand(dims, red, layout, reducer):
    kept = [d for d in range(len(dims)) if d not in red]
    sh = f"f32[{','.join(map(str, dims))}]{{{layout}}}"
    osh = f"f32[{','.join(str(dims[d]) for d in kept)}]"
    init = "0" if reducer == "add" else "-inf"
    text = f"""HloModule m
{ADD}{MAX}
ENTRY e {{
  x = {sh} parameter(0)
  z = f32[] constant({init})
  xx = {sh} multiply(x, x)
  ROOT r = {osh} reduce(xx, z), dimensions={{{','.join(map(str, red))}}}, to_apply={reducer}
}}"""
    x = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
    want = xlac.evaluate(text, x)
    for nt in (1, 2):
        np.testing.assert_allclose(xlac.jit(text, num_threads=nt)(x), want, rtol=1e-4, atol=1e-3)
