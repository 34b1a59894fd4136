"""In-place updates must not take a buffer that the instruction also reads
through another operand at other indices (regressions: scatter(x, i, x) and a
loop fusion reading one input twice, once reversed)."""
import numpy as np

import xlac

ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
"""


def _run(text, *args, optimize=True):
    exe = xlac.jit(text, optimize=optimize)
    got = exe(*args)
    np.testing.assert_array_equal(got, xlac.evaluate(text, *args))
    return exe.lowered.assignment


def test_scatter_does_not_overwrite_its_updates():
    text = """HloModule s
""" + ADD + """
ENTRY e {
  p = f32[4]{0} parameter(0)
  i = s32[4,1]{1,0} parameter(1)
  x = f32[4]{0} negate(p)
  s = f32[4]{0} scatter(x, i, x), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT n = f32[4]{0} negate(s)
}
"""
    a = _run(text, np.array([1, 2, 3, 4], np.float32), np.array([[1], [0], [3], [2]], np.int32))
    assert not a.in_place


def test_scatter_in_place_when_the_operand_is_read_once():
    text = """HloModule s
""" + ADD + """
ENTRY e {
  p = f32[4]{0} parameter(0)
  i = s32[4,1]{1,0} parameter(1)
  u = f32[4]{0} parameter(2)
  x = f32[4]{0} negate(p)
  s = f32[4]{0} scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT n = f32[4]{0} negate(s)
}
"""
    a = _run(text, np.array([1, 2, 3, 4], np.float32), np.array([[1], [0], [3], [3]], np.int32),
             np.array([10, 20, 30, 40], np.float32))
    assert [(w.name, o.name) for w, o in a.in_place] == [("s", "x")]


def test_loop_fusion_reading_an_input_twice_at_other_indices():
    text = """HloModule f
fc {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  r = f32[4]{0} reverse(b), dimensions={0}
  ROOT s = f32[4]{0} add(a, r)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  x = f32[4]{0} negate(p)
  f = f32[4]{0} fusion(x, x), kind=kLoop, calls=fc
  ROOT n = f32[4]{0} negate(f)
}
"""
    a = _run(text, np.array([1, 2, 3, 4], np.float32), optimize=False)
    assert not a.in_place
