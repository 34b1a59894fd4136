"""donate_argnums: results reuse a donated argument's memory where that is safe."""
import numpy as np
import pytest

import xlac

AXPY = """HloModule axpy
ENTRY main {
  x = f32[4096]{0} parameter(0)
  y = f32[4096]{0} parameter(1)
  a = f32[] constant(2)
  ab = f32[4096]{0} broadcast(a), dimensions={}
  m = f32[4096]{0} multiply(ab, x)
  ROOT r = f32[4096]{0} add(m, y)
}"""

DUS = """HloModule dus
ENTRY main {
  buf = f32[64,32]{1,0} parameter(0)
  upd = f32[4,32]{1,0} parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT r = f32[64,32]{1,0} dynamic-update-slice(buf, upd, i, z)
}"""

TUPLE = """HloModule two
ENTRY main {
  x = f32[1000]{0} parameter(0)
  y = f32[1000]{0} parameter(1)
  s = f32[1000]{0} sine(x)
  c = f32[1000]{0} cosine(y)
  ROOT r = (f32[1000]{0}, f32[1000]{0}) tuple(s, c)
}"""

# Parameter x is also returned as is: it must not be overwritten.
RETURNED = """HloModule ret
ENTRY main {
  x = f32[1000]{0} parameter(0)
  n = f32[1000]{0} negate(x)
  ROOT r = (f32[1000]{0}, f32[1000]{0}) tuple(n, x)
}"""

# The result reads x at other indices (reverse): no in-place update.
REVERSED = """HloModule rev
ENTRY main {
  x = f32[1000]{0} parameter(0)
  ROOT r = f32[1000]{0} reverse(x), dimensions={0}
}"""

# Different result type: no buffer to share.
CONVERT = """HloModule cvt
ENTRY main {
  x = f32[1000]{0} parameter(0)
  ROOT r = s32[1000]{0} convert(x)
}"""


def test_donated_argument_memory_becomes_the_result():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 4096)).astype(np.float32)
    want = 2 * x + y
    plain = xlac.jit(AXPY)
    r = plain(x, y)
    np.testing.assert_allclose(r, want, rtol=1e-6)
    assert not np.shares_memory(r, x) and not np.shares_memory(r, y)
    assert plain.donations == []

    for argnums in [(0,), (1,), 1, (-2,)]:
        exe = xlac.jit(AXPY, donate_argnums=argnums)
        p = {(0,): 0, (1,): 1, 1: 1, (-2,): 0}[argnums]
        assert exe.donations == [(0, p)]
        xs, ys = x.copy(), y.copy()
        r = exe(xs, ys)
        np.testing.assert_allclose(r, want, rtol=1e-6)
        assert np.shares_memory(r, (xs, ys)[p]) and r is not (xs, ys)[p]
        assert not np.shares_memory(r, (xs, ys)[1 - p])

    both = xlac.jit(AXPY, donate_argnums=(0, 1))
    assert len(both.donations) == 1              # one result: one donation


def test_donation_through_dynamic_update_slice():
    exe = xlac.jit(DUS, donate_argnums=0)
    assert exe.donations == [(0, 0)]
    buf = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    want = buf.copy()
    want[10:14] = -1
    r = exe(buf, np.full((4, 32), -1, np.float32), np.int32(10))
    assert np.shares_memory(r, buf)
    np.testing.assert_array_equal(r, want)


def test_donation_into_a_tuple_result():
    exe = xlac.jit(TUPLE, donate_argnums=(0, 1))
    assert sorted(exe.donations) == [(0, 0), (1, 1)]
    x = np.linspace(0, 3, 1000, dtype=np.float32)
    y = x[::-1].copy()
    want = (np.sin(x), np.cos(y))
    xs, ys = x.copy(), y.copy()
    s, c = exe(xs, ys)
    assert np.shares_memory(s, xs) and np.shares_memory(c, ys)
    np.testing.assert_allclose(s, want[0], atol=1e-6)
    np.testing.assert_allclose(c, want[1], atol=1e-6)


@pytest.mark.parametrize("text", [RETURNED, REVERSED, CONVERT])
def test_unsafe_donation_is_ignored(text):
    exe = xlac.jit(text, donate_argnums=0)
    assert exe.donations == []
    x = np.linspace(-1, 1, 1000, dtype=np.float32)
    xs = x.copy()
    out = exe(xs)
    ref = xlac.evaluate(text, x)
    for a, b in zip(out if isinstance(out, tuple) else (out,), ref if isinstance(ref, tuple) else (ref,)):
        np.testing.assert_array_equal(a, b)
        assert not np.shares_memory(a, xs)
    np.testing.assert_array_equal(xs, x)        # the argument is untouched


def test_arguments_that_cannot_be_donated_are_copied_not_overwritten():
    exe = xlac.jit(AXPY, donate_argnums=0)
    x = np.linspace(0, 1, 4096, dtype=np.float32)
    y = np.ones(4096, np.float32)
    want = 2 * x + y

    ro = x.copy()
    ro.flags.writeable = False                  # read-only
    r = exe(ro, y)
    np.testing.assert_allclose(r, want, rtol=1e-6)
    assert not np.shares_memory(r, ro)

    wide = np.repeat(x, 2)[::2]                 # strided: laid out in a copy
    r = exe(wide, y)
    np.testing.assert_allclose(r, want, rtol=1e-6)
    assert not np.shares_memory(r, wide)

    same = x.copy()                             # the same array for both parameters
    r = exe(same, same)
    np.testing.assert_allclose(r, 3 * x, rtol=1e-6)
    assert not np.shares_memory(r, same)

    big = np.concatenate([x, y])                # overlapping views of one buffer
    r = exe(big[:4096], big[4096:])
    np.testing.assert_allclose(r, want, rtol=1e-6)

    with pytest.raises(TypeError, match="parameter 0"):
        exe(x.astype(np.float64), y)            # still checked


def test_donate_argnums_is_validated():
    with pytest.raises(ValueError, match="not a parameter number"):
        xlac.jit(AXPY, donate_argnums=2)
    with pytest.raises(ValueError, match="not a parameter number"):
        xlac.jit(AXPY, donate_argnums=(-3,))
    with pytest.raises(TypeError, match="parameter numbers"):
        xlac.jit(AXPY, donate_argnums=("x",))
