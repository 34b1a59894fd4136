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
    # (The root negates s where s is: s is computed into the result buffer.)
    assert [(w.name, o.name) for w, o in a.in_place] == [("n", "s")]


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
    assert [(w.name, o.name) for w, o in a.in_place] == [("n", "s"), ("s", "x")]


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
    assert ("f", "x") not in [(w.name, o.name) for w, o in a.in_place]     # f reads x reversed too


def test_a_root_update_of_a_computed_array_computes_it_in_the_result():
    """jax's embedding gradient: a scatter-add into zeros at the root.  The
    zeros are written into the result buffer and the scatter adds there (no
    temp of the table's size, no copy of it); a dynamic-update-slice the same."""
    text = """HloModule s
""" + ADD + """
ENTRY e {
  i = s32[6,1]{1,0} parameter(0)
  u = f32[6,3]{1,0} parameter(1)
  z = f32[] constant(0)
  zs = f32[50,3]{1,0} broadcast(z), dimensions={}
  ROOT s = f32[50,3]{1,0} scatter(zs, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"""
    a = _run(text, np.array([[1], [4], [1], [49], [0], [7]], np.int32), np.arange(18, dtype=np.float32).reshape(6, 3))
    assert a.temp_size == 0 and not a.copies
    (pair,) = a.in_place
    assert pair[0].name == "s" and a.slice_of(pair[1]).kind == "result"
    dus = """HloModule d
ENTRY e {
  x = f32[40]{0} parameter(0)
  u = f32[3]{0} parameter(1)
  k = s32[] parameter(2)
  t = f32[40]{0} multiply(x, x)
  ROOT d = f32[40]{0} dynamic-update-slice(t, u, k)
}
"""
    x = np.linspace(-2, 2, 40).astype(np.float32)
    a = _run(dus, x, np.ones(3, np.float32), np.int32(5))
    assert a.temp_size == 0 and [(w.name, o.name) for w, o in a.in_place][0][0] == "d"


def test_a_root_update_keeps_an_operand_another_result_returns():
    """The operand is also a result: it keeps a buffer of its own."""
    text = """HloModule d
ENTRY e {
  x = f32[40]{0} parameter(0)
  u = f32[3]{0} parameter(1)
  k = s32[] parameter(2)
  t = f32[40]{0} multiply(x, x)
  d = f32[40]{0} dynamic-update-slice(t, u, k)
  ROOT r = (f32[40]{0}, f32[40]{0}) tuple(d, t)
}
"""
    x = np.linspace(-2, 2, 40).astype(np.float32)
    exe = xlac.jit(text)
    got = exe(x, np.ones(3, np.float32), np.int32(5))
    for g, w in zip(got, xlac.evaluate(text, x, np.ones(3, np.float32), np.int32(5))):
        np.testing.assert_array_equal(g, w)
    a = exe.lowered.assignment
    assert not any(w.name == "d" for w, _ in a.in_place)
