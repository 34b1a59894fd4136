"""In-place updates must not take a buffer that the instruction also reads
through another operand at other indices (regressions: scatter(x, i, x), a
loop fusion reading one input twice, once reversed, and a scatter whose fused
updates gather rows of the array it updates)."""
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


SEGMENT_SUM = """HloModule s
""" + ADD + """
ENTRY e {
  p = f32[6,4]{1,0} parameter(0)
  i = s32[5]{0} parameter(1)
  w = f32[5]{0} parameter(2)
  j = s32[5]{0} parameter(3)
  x = f32[6,4]{1,0} negate(p)
  ri = s32[5,1]{1,0} reshape(i)
  g = f32[5,4]{1,0} gather(%s, ri), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  wb = f32[5,4]{1,0} broadcast(w), dimensions={0}
  u = f32[5,4]{1,0} multiply(g, wb)
  rj = s32[5,1]{1,0} reshape(j)
  s = f32[6,4]{1,0} scatter(x, rj, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT n = f32[6,4]{1,0} negate(s)
}
"""


def _segment_sum_args():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((6, 4)).astype(np.float32), np.array([5, 0, 2, 1, 9], np.int32),
            rng.standard_normal(5).astype(np.float32), np.array([0, 1, 4, -1, 0], np.int32))


def _scatter_fusion(exe):
    fusions = [i for c in exe.lowered.hlo.computations for i in c.instructions
               if i.opcode == "fusion" and i.attrs["calls"].root.opcode == "scatter"]
    assert len(fusions) == 1 and fusions[0].attrs["kind"] == "kInput"
    return fusions[0]


def test_a_scatter_computes_its_gathered_updates_in_place():
    # The gather, broadcast and multiply fuse into the scatter's loop (it reads
    # p, w and the indices); the base x (computed here, read once) is updated
    # in the result buffer.
    text = SEGMENT_SUM % "p"
    a = _run(text, *_segment_sum_args())
    exe = xlac.jit(text)
    fusion = _scatter_fusion(exe)
    assert [o.name for o in fusion.operands] == ["x", "j", "p", "w", "i"]
    assert [(w.name, o.name) for w, o in a.in_place] == [("n", fusion.name), (fusion.name, "x")]


def test_a_scatter_whose_updates_read_its_base_is_not_in_place():
    # The updates gather rows of x, which the scatter updates: in place, a
    # later row would read an earlier update.
    text = SEGMENT_SUM % "x"
    a = _run(text, *_segment_sum_args())
    fusion = _scatter_fusion(xlac.jit(text))
    assert [o.name for o in fusion.operands] == ["x", "j", "w", "i"]
    assert [(w.name, o.name) for w, o in a.in_place] == [("n", fusion.name)]
