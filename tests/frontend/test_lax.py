"""xlac.lax against numpy and jax.lax's documented behaviour, through @xlac.jit."""
import numpy as np
import pytest

import xlac
from xlac import lax, ops

pytestmark = pytest.mark.timeout(600)

rng = np.random.default_rng(0)


def run(fn, *args, **kw):
    return xlac.jit(fn, **kw)(*args)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


X = f32(3, 4)
Y = f32(3, 4)


@pytest.mark.parametrize("name,ref", [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
    ("max", np.maximum), ("min", np.minimum), ("atan2", np.arctan2), ("pow", None)])
def test_binary(name, ref):
    a, b = (np.abs(X) + 0.5, Y) if name == "pow" else (X, Y)
    got = run(getattr(lax, name), a, b)
    np.testing.assert_allclose(got, (ref or np.power)(a, b), rtol=2e-6)


@pytest.mark.parametrize("name,ref", [
    ("exp", np.exp), ("tanh", np.tanh), ("abs", np.abs), ("neg", np.negative), ("floor", np.floor),
    ("sin", np.sin), ("sign", np.sign), ("logistic", lambda v: 1 / (1 + np.exp(-v))),
    ("square", np.square), ("exp2", np.exp2)])
def test_unary(name, ref):
    np.testing.assert_allclose(run(getattr(lax, name), X), ref(X), rtol=2e-6, atol=1e-7)


def test_integer_ops_and_compare():
    a = np.array([7, -7, 3, 0], np.int32)
    b = np.array([2, 2, -2, 5], np.int32)
    np.testing.assert_array_equal(run(lax.rem, a, b), np.fmod(a, b))
    np.testing.assert_array_equal(run(lax.div, a, b), (a / b).astype(np.int32))
    np.testing.assert_array_equal(run(lax.shift_left, a, np.int32(1)), a << 1)
    np.testing.assert_array_equal(run(lax.bitwise_and, a, b), a & b)
    np.testing.assert_array_equal(run(lax.bitwise_not, a), ~a)
    np.testing.assert_array_equal(run(lax.lt, a, b), a < b)
    np.testing.assert_array_equal(run(lax.eq, a, b), a == b)
    np.testing.assert_array_equal(run(lambda v: lax.integer_pow(v, 3), a), a ** 3)
    np.testing.assert_allclose(run(lambda v: lax.integer_pow(v, -2), X), X ** -2.0, rtol=1e-5)


def test_lax_is_strict_about_dtypes_and_shapes():
    with pytest.raises(TypeError, match="lax.add requires arguments to have the same dtypes"):
        run(lax.add, X, X.astype(np.float64))
    with pytest.raises(TypeError, match="incompatible shapes"):
        run(lax.add, X, f32(4))
    # A Python scalar takes the array's type; a rank-0 array broadcasts.
    got = run(lambda v: lax.mul(v, 2), X.astype(np.float16))
    assert got.dtype == np.float16
    np.testing.assert_allclose(run(lambda v: lax.add(v, np.float32(1)), X), X + 1)


def test_select_clamp_convert_bitcast():
    p = X > 0
    np.testing.assert_array_equal(run(lax.select, p, X, Y), np.where(p, X, Y))
    np.testing.assert_array_equal(run(lambda v: lax.clamp(-0.5, v, 0.5), X), np.clip(X, -0.5, 0.5))
    got = run(lambda v: lax.convert_element_type(v, np.int32), X * 10)
    np.testing.assert_array_equal(got, (X * 10).astype(np.int32))
    got = run(lambda v: lax.bitcast_convert_type(v, np.uint32), X)
    np.testing.assert_array_equal(got, X.view(np.uint32))
    np.testing.assert_array_equal(run(lambda v: lax.round(v), np.array([0.5, 1.5, -0.5], np.float32)),
                                  [1, 2, -1])
    np.testing.assert_array_equal(run(lambda v: lax.round(v, 1), np.array([0.5, 1.5, -0.5], np.float32)),
                                  [0, 2, -0])


def test_shape_functions():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(run(lambda v: lax.reshape(v, (4, 6)), a), a.reshape(4, 6))
    # jax's order: (operand, new_sizes, dimensions): transpose by dimensions first.
    np.testing.assert_array_equal(run(lambda v: lax.reshape(v, (4, 6), (2, 1, 0)), a),
                                  a.transpose(2, 1, 0).reshape(4, 6))
    np.testing.assert_array_equal(run(lambda v: lax.transpose(v, (1, 2, 0)), a), a.transpose(1, 2, 0))
    np.testing.assert_array_equal(run(lambda v: lax.broadcast_in_dim(v[0, 0], (2, 4), (1,)), a),
                                  np.broadcast_to(a[0, 0], (2, 4)))
    np.testing.assert_array_equal(run(lambda v: lax.broadcast(v[0, 0], (2,)), a), np.stack([a[0, 0]] * 2))
    np.testing.assert_array_equal(run(lambda v: lax.slice(v, (0, 1, 0), (2, 3, 4), (1, 1, 2)), a),
                                  a[0:2, 1:3, 0:4:2])
    np.testing.assert_array_equal(run(lambda v: lax.slice_in_dim(v, 1, 3, axis=2), a), a[:, :, 1:3])
    np.testing.assert_array_equal(run(lambda v: lax.index_in_dim(v, -1, 1, keepdims=False), a), a[:, -1])
    np.testing.assert_array_equal(run(lambda v: lax.rev(v, (0, 2)), a), a[::-1, :, ::-1])
    np.testing.assert_array_equal(run(lambda v: lax.squeeze(v[:1], (0,)), a), a[0])
    np.testing.assert_array_equal(run(lambda v: lax.expand_dims(v, (0, 3)), a), a[None, :, :, None])
    np.testing.assert_array_equal(run(lambda v, w: lax.concatenate([v, w, v], 1), a, a[:, :1]),
                                  np.concatenate([a, a[:, :1], a], 1))
    got = run(lambda v: lax.pad(v[0], 0.0, [(1, -1, 1), (0, 2, 0)]), a)
    ref = np.zeros((5, 6), np.float32)      # low 1, interior 1 (a row between rows), high -1
    ref[1::2, :4] = a[0, :2]
    np.testing.assert_array_equal(got, ref)


def test_dynamic_slicing_clamps():
    a = np.arange(10, dtype=np.int32)
    np.testing.assert_array_equal(run(lambda v, i: lax.dynamic_slice(v, (i,), (3,)), a, np.int32(8)), a[7:10])
    got = run(lambda v, i: lax.dynamic_update_slice(v, np.array([-1, -2], np.int32), (i,)), a, np.int32(-13))
    np.testing.assert_array_equal(got, np.r_[[-1, -2], a[2:]])
    np.testing.assert_array_equal(run(lambda v, i: lax.dynamic_index_in_dim(v, i, keepdims=False), a, 4), 4)


# (start, what jax.lax.dynamic_slice(arange(5), (start,), (2,)) returns): a negative start
# counts from the end, then the window is clamped into bounds.
NEGATIVE_STARTS = [(-1, [3, 4]), (-2, [3, 4]), (-3, [2, 3]), (-5, [0, 1]), (-7, [0, 1]), (4, [3, 4]), (9, [3, 4])]


@pytest.mark.parametrize("start,want", NEGATIVE_STARTS)
def test_dynamic_slice_negative_start_counts_from_the_end(start, want):
    a = np.arange(5, dtype=np.int32)
    for dt in (np.int32, np.int8, np.int64):
        got = run(lambda v, i: lax.dynamic_slice(v, (i,), (2,)), a, dt(start))
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(run(lambda v: lax.dynamic_slice(v, (start,), (2,)), a), want)  # static
    np.testing.assert_array_equal(run(lambda v, i: lax.dynamic_slice_in_dim(v, i, 2), a, start), want)
    np.testing.assert_array_equal(run(lambda v, i: lax.dynamic_slice(v, i, (2,)), a, np.array([start])), want)
    # dynamic_update_slice writes where dynamic_slice reads.
    got = run(lambda v, i: lax.dynamic_update_slice(v, np.array([-1, -1], np.int32), (i,)), a, start)
    np.testing.assert_array_equal(np.flatnonzero(got < 0), [w for w in want])
    got = run(lambda v, i: lax.dynamic_update_slice_in_dim(v, np.array([-1, -1], np.int32), i, 0), a, start)
    np.testing.assert_array_equal(np.flatnonzero(got < 0), [w for w in want])


def test_dynamic_index_and_traced_indexing_count_from_the_end():
    a = np.arange(12, dtype=np.int32).reshape(4, 3)
    for i, row in [(-1, 3), (-4, 0), (-6, 0), (7, 3), (2, 2)]:     # jax: a[i] with a traced i
        np.testing.assert_array_equal(run(lambda v, k: v[k], a, np.int32(i)), a[row])
        np.testing.assert_array_equal(run(lambda v, k: lax.dynamic_index_in_dim(v, k, 0, False), a, i), a[row])
    np.testing.assert_array_equal(run(lambda v, k: v[:, k], a, np.int16(-1)), a[:, 2])
    np.testing.assert_array_equal(run(lambda v, k: lax.dynamic_index_in_dim(v, k, 1), a, -2), a[:, 1:2])
    # An 8-bit index into a longer axis: the dimension's size does not fit int8.
    long = np.arange(300, dtype=np.float32)
    assert run(lambda v, k: v[k], long, np.int8(-1)) == 299
    # Unsigned starts are never negative: 250 is past the end and clamps.
    assert run(lambda v, k: v[k], np.arange(5, dtype=np.int32), np.uint8(250)) == 4


def test_hlo_dynamic_slice_only_clamps():
    """xlac.ops keeps HLO's semantics: a negative start is clamped to 0, as the spec says."""
    b = xlac.XlaBuilder("ds")
    x = ops.parameter(b, 0, "s32[5]")
    i = ops.parameter(b, 1, "s32[]")
    comp = b.build(ops.dynamic_slice(x, [i], [2]))
    np.testing.assert_array_equal(xlac.jit(comp)(np.arange(5, dtype=np.int32), np.int32(-2)), [0, 1])


def test_dynamic_slice_start_errors():
    with pytest.raises(TypeError, match="lax.dynamic_slice: start index 0 must be an integer scalar"):
        run(lambda v, i: lax.dynamic_slice(v, (i,), (2,)), np.arange(5.0), 1.5)
    with pytest.raises(TypeError, match="lax.dynamic_slice: 1 start indices for an operand of rank 2"):
        run(lambda v: lax.dynamic_slice(v, (1,), (2, 2)), np.zeros((3, 3)))


def test_iota_full():
    np.testing.assert_array_equal(run(lambda v: v + lax.iota(np.int32, 4), np.zeros(4, np.int32)), np.arange(4))
    got = run(lambda v: lax.broadcasted_iota(np.int32, (2, 3), 1) + v, np.int32(0))
    np.testing.assert_array_equal(got, np.tile(np.arange(3), (2, 1)))
    got = run(lambda v: lax.full((2, 2), 7, np.int8) + lax.full_like(v, 1, np.int8), np.zeros((2, 2)))
    np.testing.assert_array_equal(got, np.full((2, 2), 8, np.int8))
    with pytest.raises(TypeError, match="lax.iota: needs a traced value"):
        lax.iota(np.int32, 3)


def test_reductions():
    a = f32(3, 4, 5)
    np.testing.assert_allclose(run(lambda v: lax.reduce_sum(v, (0, 2)), a), a.sum((0, 2)), rtol=1e-5)
    np.testing.assert_array_equal(run(lambda v: lax.reduce_max(v, (1,)), a), a.max(1))
    np.testing.assert_array_equal(run(lambda v: lax.reduce_min(v, (2,)), a), a.min(2))
    np.testing.assert_allclose(run(lambda v: lax.reduce_prod(v, (0,)), a), a.prod(0), rtol=1e-5)
    b = a > 0
    np.testing.assert_array_equal(run(lambda v: lax.reduce_and(v, (1,)), b), b.all(1))
    np.testing.assert_array_equal(run(lambda v: lax.reduce_or(v, (1,)), b), b.any(1))
    # A Python reducer, and the variadic form with tuples.
    np.testing.assert_allclose(run(lambda v: lax.reduce(v, 0.0, lambda x, y: x + y * y, (1,)), a),
                               (a * a).sum(1), rtol=1e-5)
    got = run(lambda v: lax.reduce((v, v), (0.0, -np.inf), lambda x, y: (x[0] + y[0], lax.max(x[1], y[1])),
                                   (0,)), a)
    assert isinstance(got, tuple)
    np.testing.assert_allclose(got[0], a.sum(0), rtol=1e-5)
    np.testing.assert_array_equal(got[1], a.max(0))


def test_argmax_argmin_ties_and_nan():
    a = np.array([[1, 3, 3, 0], [np.nan, 5, np.nan, 9], [2, 2, 2, 2]], np.float32)
    np.testing.assert_array_equal(run(lambda v: lax.argmax(v, 1, np.int32), a), [1, 0, 0])
    np.testing.assert_array_equal(run(lambda v: lax.argmin(v, 1, np.int32), a), [3, 0, 0])
    i = np.array([[4, 1], [1, 4]], np.int32)
    np.testing.assert_array_equal(run(lambda v: lax.argmax(v, 0, np.int32), i), [0, 1])


def test_reduce_window_and_cumulative():
    a = f32(1, 6, 6, 2)
    got = run(lambda v: lax.reduce_window(v, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), a)
    np.testing.assert_array_equal(got, a.reshape(1, 3, 2, 3, 2, 2).max((2, 4)))
    got = run(lambda v: lax.reduce_window(v, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"), a)
    p = np.pad(a, ((0, 0), (1, 1), (1, 1), (0, 0)))
    ref = sum(p[:, i:i + 6, j:j + 6] for i in range(3) for j in range(3))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    v = np.array([1, 2, 3, 4], np.int32)
    np.testing.assert_array_equal(run(lax.cumsum, v), np.cumsum(v))
    np.testing.assert_array_equal(run(lambda x: lax.cumsum(x, reverse=True), v), np.cumsum(v[::-1])[::-1])
    np.testing.assert_array_equal(run(lambda x: lax.cummax(x, 1), X), np.maximum.accumulate(X, 1))
    np.testing.assert_array_equal(run(lax.cumprod, v), np.cumprod(v))


def test_dot_and_conv():
    a, b = f32(3, 4), f32(4, 5)
    np.testing.assert_allclose(run(lax.dot, a, b), a @ b, rtol=1e-5)
    c, d = f32(2, 3, 4), f32(2, 4, 5)
    got = run(lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))), c, d)
    np.testing.assert_allclose(got, c @ d, rtol=1e-5)
    x, k = f32(1, 5, 5, 2), f32(3, 3, 2, 4)
    got = run(lambda u, w: lax.conv_general_dilated(u, w, (1, 1), "VALID",
                                                    dimension_numbers=("NHWC", "HWIO", "NHWC")), x, k)
    ref = np.zeros((1, 3, 3, 4), np.float32)
    for i in range(3):
        for j in range(3):
            ref[0, i, j] = np.einsum("hwc,hwco->o", x[0, i:i + 3, j:j + 3], k)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_gather_modes():
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    idx = np.array([[1], [3], [7], [-1]], np.int32)
    got = run(lambda v, i: lax.gather(v, i, dn, (1, 3)), a, idx)      # jax.lax.gather's default: clip
    np.testing.assert_array_equal(got, a[[1, 3, 3, 0]])
    got = run(lambda v, i: lax.gather(v, i, dn, (1, 3), mode="fill"), a, idx)
    np.testing.assert_array_equal(got[:2], a[[1, 3]])
    assert np.isnan(got[2:]).all()
    got = run(lambda v, i: lax.gather(v, i, dn, (1, 3), mode="fill", fill_value=-1.0), a, idx)
    np.testing.assert_array_equal(got[2:], -np.ones((2, 3)))


def test_scatter_family():
    a = np.zeros(5, np.float32)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    idx = np.array([[1], [3], [1], [9]], np.int32)
    upd = np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(run(lambda v, i, u: lax.scatter_add(v, i, u, dn), a, idx, upd),
                                  [0, 4, 0, 2, 0])
    np.testing.assert_array_equal(run(lambda v, i, u: lax.scatter_add(v, i, u, dn, mode="clip"), a, idx, upd),
                                  [0, 4, 0, 2, 4])
    np.testing.assert_array_equal(run(lambda v, i, u: lax.scatter_max(v - 1, i, u, dn), a, idx, upd),
                                  [-1, 3, -1, 2, -1])
    np.testing.assert_array_equal(run(lambda v, i, u: lax.scatter(v, i, u[:2], dn), a, idx[:2], upd),
                                  [0, 1, 0, 2, 0])


def test_sort_top_k():
    a = np.array([[3, 1, 2], [0, -1, 5]], np.float32)
    np.testing.assert_array_equal(run(lax.sort, a), np.sort(a, -1))
    np.testing.assert_array_equal(run(lambda v: lax.sort(v, 0), a), np.sort(a, 0))  # dimension, as jax
    k, v = run(lambda x: lax.sort_key_val(x, -x), a)
    np.testing.assert_array_equal(v, -np.sort(a, -1))
    got = run(lambda x: lax.sort(x, comparator=lambda p, q: p > q), a)
    np.testing.assert_array_equal(got, -np.sort(-a, -1))
    keys = np.array([1, 0, 1, 0], np.int32)
    vals = np.array([4, 3, 2, 1], np.int32)
    got = run(lambda k_, v_: lax.sort((k_, v_), num_keys=2), keys, vals)
    np.testing.assert_array_equal(got[1], [1, 3, 2, 4])
    nan = np.array([np.nan, 1, -np.inf], np.float32)
    np.testing.assert_array_equal(run(lax.sort, nan), [-np.inf, 1, np.nan])
    vals, idx = run(lambda x: lax.top_k(x, 2), a)
    np.testing.assert_array_equal(vals, [[3, 2], [5, 0]])
    np.testing.assert_array_equal(idx, [[0, 2], [2, 0]])


# jax 0.10.2's answers: its comparator ties -0.0 with 0.0 and every NaN (with either sign)
# with every other, after all numbers; a stable sort keeps tied values in input order.
SIGNED = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -np.inf, -0.0, 0.0], np.float32)


def test_sort_ties_signed_zeros_and_puts_nans_last_as_jax():
    keys, idx = run(lambda x: lax.sort_key_val(x, lax.iota(np.int32, 8)), SIGNED)
    np.testing.assert_array_equal(idx, [5, 0, 1, 6, 7, 4, 2, 3])
    np.testing.assert_array_equal(np.signbit(keys), np.signbit(SIGNED[idx]))   # values kept bit for bit
    got = run(lambda x: lax.sort((x, lax.iota(np.int32, 8)), num_keys=1), SIGNED)
    np.testing.assert_array_equal(got[1], [5, 0, 1, 6, 7, 4, 2, 3])
    for dt in (np.float16, xlac.BF16.dtype, np.float64):
        _, idx = run(lambda x: lax.sort_key_val(x, lax.iota(np.int32, 8)), SIGNED.astype(dt))
        np.testing.assert_array_equal(idx, [5, 0, 1, 6, 7, 4, 2, 3])
    # Two keys: (0, -0) and (0, 0) tie, as do (1, 0) and (1, -0).
    a, b = np.array([1, 1, 0, 0], np.float32), np.array([0.0, -0.0, -0.0, 0.0], np.float32)
    got = run(lambda p, q: lax.sort((p, q, lax.iota(np.int32, 4)), num_keys=2), a, b)
    np.testing.assert_array_equal(got[2], [2, 3, 0, 1])
    # Complex keys order by real part, then imaginary part, each as a float key.
    c = np.array([0j, complex(-0.0, 0.0), complex(0, -0.0), 1j, complex(np.nan, 0), -1 + 5j], np.complex64)
    _, idx = run(lambda x: lax.sort_key_val(x, lax.iota(np.int32, 6)), c)
    np.testing.assert_array_equal(idx, [5, 0, 1, 2, 3, 4])


def test_top_k_orders_in_total_order_as_jax():
    """jax's top_k is XLA's TopK: -0.0 below 0.0, +NaN above everything, -NaN below."""
    vals, idx = run(lambda x: lax.top_k(x, 8), SIGNED)
    np.testing.assert_array_equal(idx, [2, 4, 0, 7, 1, 6, 5, 3])


def test_control_flow():
    def f(n, x):
        return lax.fori_loop(0, n, lambda i, acc: acc + i * x, np.float32(0))
    assert run(f, np.int32(5), np.float32(2)) == 20
    got = run(lambda x: lax.while_loop(lambda s: s[0] < 10, lambda s: (s[0] * 2, s[1] + 1), (x, 0)), np.int32(1))
    assert got == (16, 4)
    # cond: branches on operands, a captured value, nested.
    def g(p, x, y):
        return lax.cond(p, lambda a: a * y, lambda a: lax.cond(a.sum() > 0, lambda b: b + 1.0,
                                                                lambda b: b - 1.0, a), x)
    np.testing.assert_array_equal(run(g, True, X, np.float32(3)), X * 3)
    np.testing.assert_array_equal(run(g, False, np.ones(2, np.float32), np.float32(3)), [2, 2])
    sw = [lambda a: a + 1, lambda a: a * 10, lambda a: -a]
    for i, want in ((0, 3), (1, 20), (2, -2), (7, -2), (-3, 3)):   # jax clamps the index
        assert run(lambda k, a: lax.switch(k, sw, a), np.int32(i), np.int32(2)) == want


def test_scan_and_map():
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    carry, ys = run(lambda x: lax.scan(lambda c, v: (c + v, {"s": c.sum(), "v": v * 2}), np.zeros(2, np.float32), x),
                    xs)
    np.testing.assert_array_equal(carry, xs.sum(0))
    np.testing.assert_array_equal(ys["s"], [0, 1, 6])
    np.testing.assert_array_equal(ys["v"], xs * 2)
    carry, ys = run(lambda x: lax.scan(lambda c, v: (c + v, c), np.zeros(2, np.float32), x, reverse=True), xs)
    np.testing.assert_array_equal(ys, [[6, 8], [4, 5], [0, 0]])
    np.testing.assert_array_equal(run(lambda x: lax.map(lambda r: r.sum(), x), xs), xs.sum(1))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
def test_cumulative_ops_over_an_empty_axis(name):
    """jax returns the empty operand; nothing to accumulate is no window to reduce."""
    fn = getattr(lax, name)
    for shape, axis in [((0, 3), 0), ((0, 3), 1), ((3, 0), 0), ((3, 0), 1), ((0,), 0)]:
        for reverse in (False, True):
            got = run(lambda x: fn(x, axis=axis, reverse=reverse), np.ones(shape, np.float32))
            assert got.shape == shape and got.dtype == np.float32
    with pytest.raises(TypeError, match=f"lax.{name} does not accept dtype bool"):
        run(lambda x: fn(x > 0), X)           # jax: TypeError too
    with pytest.raises(ValueError, match=f"lax.{name}: axis 2 is out of bounds for an operand of rank 2"):
        run(lambda x: fn(x, axis=2), X)


def test_scan_over_an_empty_leading_axis():
    """jax: the carry comes back as given, the ys are empty arrays of y's shape."""
    def f(c, x):
        return c + x.sum(), {"y": c * x, "s": x.sum()}
    carry, ys = run(lambda xs: lax.scan(f, np.float32(1), xs), np.ones((0, 2), np.float32))
    assert carry == 1 and ys["y"].shape == (0, 2) and ys["s"].shape == (0,)
    carry, ys = run(lambda xs: lax.scan(f, np.float32(1), xs, reverse=True), np.ones((0, 2), np.float32))
    assert carry == 1 and ys["y"].shape == (0, 2)
    carry, ys = run(lambda: lax.scan(lambda c, _: (c + 1, c), np.int32(5), None, length=0))
    assert carry == 5 and ys.shape == (0,) and ys.dtype == np.int32
    assert run(lambda xs: lax.map(lambda r: r * 2, xs), np.ones((0, 3), np.float32)).shape == (0, 3)
    with pytest.raises(TypeError, match=r"lax.scan: f must return a carry like init: init is \(f32\[\]\)"):
        run(lambda xs: lax.scan(lambda c, x: (x, c), np.float32(1), xs), np.ones((0, 2), np.float32))
    with pytest.raises(TypeError, match="lax.scan: f must return a carry like init"):
        run(lambda xs: lax.scan(lambda c, x: (x, c), np.float32(1), xs), np.ones((3, 2), np.float32))


def test_rng_bit_generator():
    key = np.array([1, 2], np.uint64)
    new_key, bits = run(lambda k: lax.rng_bit_generator(k, (4,)), key)
    b = xlac.XlaBuilder("ref")
    out = ops.rng_bit_generator(ops.parameter(b, 0, "u64[2]"), "u32[4]")
    ref = xlac.evaluate(b.build(out), key)
    np.testing.assert_array_equal(bits, ref[1])
    np.testing.assert_array_equal(new_key, ref[0])
    assert bits.dtype == np.uint32


def test_linalg():
    m = f32(4, 4)
    spd = (m @ m.T + 4 * np.eye(4)).astype(np.float32)
    low = run(lax.linalg.cholesky, spd)
    np.testing.assert_allclose(low, np.linalg.cholesky(spd), rtol=1e-4, atol=1e-5)
    rhs = f32(4, 2)
    x = run(lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True), low, rhs)
    np.testing.assert_allclose(low @ x, rhs, rtol=1e-4, atol=1e-4)
    x = run(lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True),
            low, rhs)
    np.testing.assert_allclose(low.T @ x, rhs, rtol=1e-4, atol=1e-4)


def test_lax_on_a_hand_built_builder():
    """lax takes XlaOps of an XlaBuilder too, tracing callables into sub-computations."""
    b = xlac.XlaBuilder("hand")
    x = ops.parameter(b, 0, "f32[3,4]")
    total = lax.reduce(x, 0.0, lambda p, q: p + q, (1,))
    comp = b.build(lax.while_loop(lambda v: (v < 100.0).all(), lambda v: v * 2.0, total).op)
    a = np.abs(X) + 1
    got = xlac.jit(comp)(a)
    want = a.sum(1)
    while (want < 100).all():
        want = want * 2
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_callable_errors_name_the_op():
    with pytest.raises(TypeError, match="lax.while_loop: body_fun must return what it takes"):
        run(lambda x: lax.while_loop(lambda v: v.sum() < 3, lambda v: v.astype(np.int32), x), X)
    with pytest.raises(TypeError, match="lax.while_loop: cond_fun must return a bool scalar"):
        run(lambda x: lax.while_loop(lambda v: v < 3, lambda v: v, x), X)
    with pytest.raises(TypeError, match="lax.cond: the branches must return the same types"):
        run(lambda x: lax.cond(True, lambda a: a, lambda a: a.sum(), x), X)
    with pytest.raises(TypeError, match="lax.reduce: the computation uses traced values"):
        run(lambda x, y: lax.reduce(x, 0.0, lambda p, q: p + q * y, (0,)), X, np.float32(2))
    with pytest.raises(TypeError, match="lax.reduce: the computation must be a Python callable.*got int"):
        run(lambda x: lax.reduce(x, 0.0, 5, (0,)), X)
