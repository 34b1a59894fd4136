"""XLA's internal plumbing in dumps: ``domain`` (a sharding-domain boundary,
its value its operand's) and the asynchronous copy pair ``copy-start`` /
``copy-done`` (XLA's memory-space assignment) — parsed, printed back,
evaluated, compiled (``op-expander``), with their shape errors."""
from __future__ import annotations

import numpy as np
import pytest

import xlac

TEXT = """HloModule plumbing

ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  d = f32[2,3]{1,0} domain(p), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}
  cs = (f32[2,3]{1,0:S(1)}, f32[2,3]{1,0}, u32[]) copy-start(d)
  c = f32[2,3]{1,0:S(1)} copy-done(cs)
  two = f32[] constant(2)
  t = f32[2,3]{1,0} broadcast(two), dimensions={}
  ROOT r = f32[2,3]{1,0} multiply(c, t)
}
"""


def test_text_round_trip_keeps_them():
    m = xlac.parse_hlo(TEXT)
    again = xlac.parse_hlo(m.to_text())
    assert again.to_text() == m.to_text()
    ops = [i.opcode for i in m.entry.instructions]
    assert {"domain", "copy-start", "copy-done"} <= set(ops)


@pytest.mark.parametrize("optimize", [True, False])
def test_evaluated_and_compiled(optimize):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(xlac.evaluate(TEXT, x), 2 * x)
    np.testing.assert_array_equal(xlac.jit(TEXT, optimize=optimize)(x), 2 * x)


def test_copy_start_shape_errors():
    bad = TEXT.replace("(f32[2,3]{1,0:S(1)}, f32[2,3]{1,0}, u32[]) copy-start(d)",
                       "(f32[3,2]{1,0}, f32[2,3]{1,0}, u32[]) copy-start(d)")
    with pytest.raises(xlac.ShapeError, match="copy-start.*destination, source, u32"):
        xlac.jit(bad)
    worse = TEXT.replace("c = f32[2,3]{1,0:S(1)} copy-done(cs)", "c = f32[2,3]{1,0} copy-done(d)")
    with pytest.raises(xlac.ShapeError, match="copy-done"):
        xlac.jit(worse)
