"""opt-barrier, add-dependency and after-all: values pass through, tokens carry nothing."""
import numpy as np
import pytest

import xlac

TEXT = """
HloModule m

ENTRY e {
  x = f32[4]{0} parameter(0)
  y = f32[4]{0} parameter(1)
  t = (f32[4]{0}, f32[4]{0}) tuple(x, y)
  b = (f32[4]{0}, f32[4]{0}) opt-barrier(t)
  g0 = f32[4]{0} get-tuple-element(b), index=0
  g1 = f32[4]{0} get-tuple-element(b), index=1
  tok = token[] after-all()
  d = f32[4]{0} add-dependency(g0, tok)
  ROOT r = f32[4]{0} add(d, g1)
}
"""


@pytest.mark.parametrize("optimize", [True, False])
def test_pass_through_ops(optimize):
    x = np.arange(4, dtype=np.float32)
    y = np.full(4, 10, np.float32)
    np.testing.assert_array_equal(xlac.jit(TEXT, optimize=optimize)(x, y), x + y)
    np.testing.assert_array_equal(xlac.evaluate(TEXT, x, y), x + y)


def test_opt_barrier_round_trips_in_text():
    module = xlac.parse_hlo(TEXT)
    assert "opt-barrier(t)" in module.to_text()
    assert xlac.parse_hlo(module.to_text()).to_text() == module.to_text()
