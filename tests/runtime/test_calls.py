"""Calling an Executable: argument checks and messages, layouts, the fast path,
and the per-call overhead (printed, never asserted)."""
import timeit

import numpy as np
import pytest

import xlac

ADD = """HloModule add8
ENTRY main {
  x = f32[8]{0} parameter(0)
  y = f32[8]{0} parameter(1)
  ROOT r = f32[8]{0} add(x, y)
}"""


def test_wrong_argument_count():
    exe = xlac.jit(ADD)
    with pytest.raises(TypeError, match=r"add8 takes 2 argument\(s\) \(x: f32\[8\]\{0\}, y: f32\[8\]\{0\}\), got 1"):
        exe(np.ones(8, np.float32))
    with pytest.raises(TypeError, match="got 3"):
        exe(*[np.ones(8, np.float32)] * 3)


def test_wrong_dtype_names_the_parameter():
    exe = xlac.jit(ADD)
    with pytest.raises(TypeError, match=r"parameter 1 \(y\): expected dtype float32 \(f32\[8\]\{0\}\), got float64"):
        exe(np.ones(8, np.float32), np.ones(8))
    with pytest.raises(TypeError, match=r"parameter 0 \(x\).*got int32"):
        exe(np.ones(8, np.int32), np.ones(8, np.float32))


def test_wrong_shape_names_the_parameter():
    exe = xlac.jit(ADD)
    with pytest.raises(ValueError, match=r"parameter 0 \(x\): expected shape \(8,\) \(f32\[8\]\{0\}\), got \(9,\)"):
        exe(np.ones(9, np.float32), np.ones(8, np.float32))
    with pytest.raises(ValueError, match=r"parameter 1 \(y\).*got \(2, 4\)"):
        exe(np.ones(8, np.float32), np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match="parameter 0"):
        exe(1.0, np.ones(8, np.float32))       # a Python scalar is not an array of 8


def test_any_strides_alignment_and_read_only_arrays():
    exe = xlac.jit(ADD)
    x = np.arange(8, dtype=np.float32)
    y = np.full(8, 0.5, np.float32)
    want = x + y
    np.testing.assert_array_equal(exe(x, y), want)
    np.testing.assert_array_equal(exe(np.repeat(x, 3)[::3], y), want)            # strided
    raw = np.zeros(8 * 4 + 1, np.uint8)
    mis = raw[1:].view(np.float32)                                                # misaligned
    mis[:] = x
    assert not mis.flags.aligned
    np.testing.assert_array_equal(exe(mis, y), want)
    ro = x.copy()
    ro.flags.writeable = False
    np.testing.assert_array_equal(exe(ro, y), want)
    np.testing.assert_array_equal(exe(list(x), y), want)                          # array-likes
    assert exe(x, y).dtype == np.float32 and exe(x, y).flags.c_contiguous


def test_layouts_and_scalars():
    text = """HloModule t
ENTRY main {
  x = f32[2,3]{0,1} parameter(0)
  s = f32[] parameter(1)
  b = f32[3,2]{0,1} broadcast(s), dimensions={}
  t = f32[3,2]{0,1} transpose(x), dimensions={1,0}
  ROOT r = f32[3,2]{0,1} add(t, b)
}"""
    exe = xlac.jit(text)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for arg in (x, np.asfortranarray(x), x.T.copy().T):
        np.testing.assert_array_equal(exe(arg, 1.5), x.T + 1.5)
    np.testing.assert_array_equal(exe(x, np.float32(1.5)), x.T + 1.5)


def test_tuple_parameters():
    text = """HloModule tp
ENTRY main {
  p = (f32[4]{0}, s32[]) parameter(0)
  a = f32[4]{0} get-tuple-element(p), index=0
  i = s32[] get-tuple-element(p), index=1
  c = f32[] convert(i)
  b = f32[4]{0} broadcast(c), dimensions={}
  s = f32[4]{0} add(a, b)
  ROOT r = (f32[4]{0}, s32[]) tuple(s, i)
}"""
    exe = xlac.jit(text)
    s, i = exe((np.arange(4, dtype=np.float32), np.int32(3)))
    np.testing.assert_array_equal(s, np.arange(4) + 3)
    assert i == 3
    with pytest.raises(TypeError, match=r"parameter 0 \(p\): expected a tuple"):
        exe(np.arange(4, dtype=np.float32))
    with pytest.raises(TypeError, match=r"parameter 0 \(p\)\{1\}: expected dtype int32"):
        exe((np.arange(4, dtype=np.float32), np.float32(3)))


def test_per_call_overhead():
    """Prints the time of one call of an 8-element f32 add (no timing asserts)."""
    x = np.ones(8, np.float32)
    y = np.ones(8, np.float32)
    lines = []
    for nt in (1, None):
        exe = xlac.jit(ADD, num_threads=nt)
        exe(x, y)
        best = min(timeit.repeat(lambda: exe(x, y), number=2000, repeat=7)) / 2000
        lines.append(f"num_threads={exe.num_threads}: {best * 1e6:.2f} us per call")
    base = min(timeit.repeat(lambda: np.add(x, y), number=2000, repeat=7)) / 2000
    lines.append(f"(np.add on the same arrays: {base * 1e6:.2f} us)")
    print("\nper-call overhead, f32[8] add:\n  " + "\n  ".join(lines))
