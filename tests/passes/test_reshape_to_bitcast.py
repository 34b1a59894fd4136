"""Reshapes and transposes that only relabel memory become bitcasts, which own no buffer."""
import numpy as np
import pytest

import xlac
from xlac.errors import ShapeError
from xlac.passes.reshape_to_bitcast import reshape_is_bitcast, transpose_is_bitcast
from xlac.shape import F32, Shape


def _run(text, *args):
    exe = xlac.jit(text)
    got = exe(*args)
    want = xlac.evaluate(text, *args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    return exe


def _opcodes(exe):
    return {i.name: i.opcode for i in exe.lowered.hlo.entry.instructions}


def test_which_reshapes_and_transposes_are_bitcasts():
    rm = lambda *d: Shape.array(F32, d)                                   # noqa: E731
    assert reshape_is_bitcast(rm(4, 6), rm(24))
    assert reshape_is_bitcast(rm(2, 3, 4), rm(6, 1, 4))
    assert not reshape_is_bitcast(Shape.array(F32, (4, 6), (0, 1)), rm(24))      # column-major operand
    assert reshape_is_bitcast(Shape.array(F32, (1, 6), (0, 1)), rm(6))            # a unit dimension's place is free
    assert transpose_is_bitcast(rm(1, 8), rm(8, 1), [1, 0])
    assert not transpose_is_bitcast(rm(2, 8), rm(8, 2), [1, 0])
    assert transpose_is_bitcast(rm(2, 8), Shape.array(F32, (8, 2), (0, 1)), [1, 0])


FLATTEN_DOT = """
HloModule m
ENTRY e {
  x = f32[16,7,4]{2,1,0} parameter(0)
  w = f32[28,8]{1,0} parameter(1)
  r = f32[16,28]{1,0} reshape(x)
  d = f32[16,8]{1,0} dot(r, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT o = f32[16,8,1]{2,1,0} reshape(d)
}
"""


def test_a_flatten_before_a_dot_reads_the_parameter_and_the_dot_writes_the_result():
    rng = np.random.default_rng(0)
    exe = _run(FLATTEN_DOT, rng.standard_normal((16, 7, 4), np.float32), rng.standard_normal((28, 8), np.float32))
    assert _opcodes(exe)["r"] == "bitcast" and _opcodes(exe)["o"] == "bitcast"
    a = exe.lowered.assignment
    entry = exe.lowered.hlo.entry
    r, d = (next(i for i in entry.instructions if i.name == n) for n in ("r", "d"))
    assert str(a.slice_of(r)) == "param 0 f32[16,28]{1,0}"       # the parameter's buffer, read as [16,28]
    assert a.slice_of(d).kind == "result" and not a.copies       # the dot writes the result through the bitcast
    assert a.temp_size <= a.largest_scratch() + 64               # nothing but the GEMM's packing


def test_a_root_bitcast_of_a_parameter_is_copied_to_the_result():
    text = """
HloModule m
ENTRY e {
  x = f32[6,4]{1,0} parameter(0)
  ROOT r = f32[4,3,2]{2,1,0} reshape(x)
}
"""
    exe = _run(text, np.arange(24, dtype=np.float32).reshape(6, 4))
    assert _opcodes(exe)["r"] == "bitcast" and len(exe.lowered.assignment.copies) == 1


def test_bitcasts_of_other_layouts_and_element_types_read_the_bytes():
    text = """
HloModule m
ENTRY e {
  x = f32[4,6]{1,0} parameter(0)
  t = f32[6,4]{0,1} bitcast(x)
  c = f32[6,4]{1,0} copy(t)
  i = s32[4,6]{1,0} bitcast(x)
  ROOT r = (f32[6,4]{1,0}, s32[4,6]{1,0}) tuple(c, i)
}
"""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    c, i = _run(text, x)(x)
    np.testing.assert_array_equal(c, x.T)
    np.testing.assert_array_equal(i, x.view(np.int32))


def test_an_update_through_a_bitcast_is_in_place():
    text = """
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[8,8]{1,0} parameter(0)
  u = f32[2,4]{1,0} parameter(1)
  i = s32[] parameter(2)
  s = f32[8,8]{1,0} sort(x), dimensions={1}, to_apply=lt
  r = f32[4,16]{1,0} reshape(s)
  z = s32[] constant(0)
  d = f32[4,16]{1,0} dynamic-update-slice(r, u, i, z)
  ROOT o = f32[4,16]{1,0} sort(d), dimensions={1}, to_apply=lt
}
"""
    rng = np.random.default_rng(1)
    exe = _run(text, rng.standard_normal((8, 8), np.float32), rng.standard_normal((2, 4), np.float32),
               np.int32(1))
    assert _opcodes(exe)["r"] == "bitcast"
    assert [(w.name, o.name) for w, o in exe.lowered.assignment.in_place] == [("d", "s")]


WHILE = """
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
body {
  p = (s32[], f32[8,8]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8,8]{1,0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  f = f32[64]{0} reshape(x)
  s = f32[64]{0} sort(f), dimensions={0}, to_apply=lt
  b = f32[8,8]{1,0} reshape(s)
  ROOT t = (s32[], f32[8,8]{1,0}) tuple(j, b)
}
cond {
  p = (s32[], f32[8,8]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[8,8]{1,0} parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[8,8]{1,0}) tuple(z, x)
  w = (s32[], f32[8,8]{1,0}) while(t), condition=cond, body=body
  ROOT r = f32[8,8]{1,0} get-tuple-element(w), index=1
}
"""


def test_a_loop_state_read_and_written_through_bitcasts():
    x = np.random.default_rng(2).standard_normal((8, 8)).astype(np.float32)
    exe = _run(WHILE, x)
    body = next(c for c in exe.lowered.hlo.computations if c.name.startswith("body"))
    assert {i.opcode for i in body.instructions if i.name in ("f", "b")} == {"bitcast"}
    np.testing.assert_array_equal(exe(x), np.sort(x.reshape(-1))[::-1].reshape(8, 8))


def test_a_bitcast_of_another_size_is_a_shape_error():
    text = """
HloModule m
ENTRY e {
  x = f32[4,6]{1,0} parameter(0)
  ROOT b = f32[5,6]{1,0} bitcast(x)
}
"""
    with pytest.raises(ShapeError, match=r"bitcast.*120 bytes.*96"):
        xlac.jit(text)
