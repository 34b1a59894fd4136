"""The numpy-style layer of traced values: broadcasting, promotion, indexing, comparisons."""
import numpy as np
import pytest

import xlac

pytestmark = pytest.mark.timeout(600)

rng = np.random.default_rng(1)
A = rng.standard_normal((3, 4)).astype(np.float32)
B = rng.standard_normal((4,)).astype(np.float32)
I = np.array([[7, -7, 3], [-3, 5, -8]], np.int32)


def run(fn, *args):
    return xlac.jit(fn)(*args)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "**"])
def test_arithmetic_broadcasts_as_numpy(op):
    fn = eval(f"lambda x, y: x {op} y")  # noqa: S307 - a fixed operator list
    a, b = (np.abs(A) + 1, B) if op == "**" else (A, B)
    np.testing.assert_allclose(run(fn, a, b), fn(a, b), rtol=1e-5)
    np.testing.assert_allclose(run(fn, a, b[:, None][:3] if op != "**" else b[:3, None]),
                               fn(a, b[:, None][:3] if op != "**" else b[:3, None]), rtol=1e-5)


def test_scalars_on_either_side_and_reflected_ops():
    np.testing.assert_allclose(run(lambda x: 2 * x + 1 - x / 4, A), 2 * A + 1 - A / 4, rtol=1e-6)
    np.testing.assert_allclose(run(lambda x: 1 / (1 + x * x), A), 1 / (1 + A * A), rtol=1e-6)
    np.testing.assert_allclose(run(lambda x: np.float32(3) - x, A), 3 - A)
    np.testing.assert_allclose(run(lambda x: -abs(x), A), -np.abs(A))


def test_floor_div_and_mod_follow_numpy():
    d = np.array([[2, 2, -2], [2, -3, 3]], np.int32)
    np.testing.assert_array_equal(run(lambda x, y: x // y, I, d), I // d)
    np.testing.assert_array_equal(run(lambda x, y: x % y, I, d), I % d)
    f = I.astype(np.float32)
    np.testing.assert_array_equal(run(lambda x: x // 2.0, f), f // 2)
    np.testing.assert_allclose(run(lambda x: x % -3.0, f), f % -3)
    # int / int is a float, as numpy and jax.
    got = run(lambda x: x / 2, I)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, I / 2)


def test_weak_types_and_promotion():
    h = A.astype(np.float16)
    assert run(lambda x: x * 2.0 + 1, h).dtype == np.float16        # Python scalars are weak
    assert run(lambda x: x + 1.5, I).dtype == np.float32             # int with a float scalar: f32
    assert run(lambda x: x + 1, I.astype(np.uint8)).dtype == np.uint8
    assert run(lambda x, y: x + y, I, A[:2, :3]).dtype == np.float32  # int with a float array
    assert run(lambda x, y: x * y, A, A.astype(np.float64)).dtype == np.float64
    assert run(lambda x, y: x + y, I.astype(np.int8), I).dtype == np.int32
    # A Python scalar argument is weakly typed too.
    assert run(lambda x, s: x * s, h, 3.0).dtype == np.float16
    assert run(lambda s: s * 2, 3.0) == 6.0


def test_comparisons_give_pred_never_bool():
    seen = []

    def f(x, y):
        c = x == y
        seen.append(type(c).__name__)
        return c, x != y, x < 0, x <= y, x > y, 0.5 >= x

    got = run(f, A, A[0])
    assert seen == ["Tracer"]
    np.testing.assert_array_equal(run(lambda x: x + (x == None), A), A)  # noqa: E711 - identity: False
    refs = (A == A[0], A != A[0], A < 0, A <= A[0], A > A[0], 0.5 >= A)
    for g, r in zip(got, refs):
        assert g.dtype == np.bool_
        np.testing.assert_array_equal(g, r)


def test_bool_and_hash_of_a_tracer_are_errors():
    with pytest.raises(TypeError, match="truth value of a traced value"):
        run(lambda x: x if x > 0 else -x, np.float32(1))
    with pytest.raises(TypeError, match="unhashable"):
        run(lambda x: {x: 1} and x, A)
    with pytest.raises(TypeError, match="no concrete numpy value"):
        run(lambda x: np.asarray(x), A)


def test_logical_and_bitwise():
    p, q = A > 0, A < 0.5
    np.testing.assert_array_equal(run(lambda a, b: (a & b) | ~a ^ b, p, q), (p & q) | ~p ^ q)
    np.testing.assert_array_equal(run(lambda x: (x << 2) >> 1, I), (I << 2) >> 1)
    u = I.astype(np.uint32)
    np.testing.assert_array_equal(run(lambda x: x >> 1, u), u >> 1)   # logical for unsigned


def test_matmul():
    np.testing.assert_allclose(run(lambda x, y: x @ y, A, B), A @ B, rtol=1e-5)
    np.testing.assert_allclose(run(lambda x, y: x @ y, A, A.T), A @ A.T, rtol=1e-5)
    c = rng.standard_normal((2, 3, 4)).astype(np.float32)
    d = rng.standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_allclose(run(lambda x, y: x @ y, c, d), c @ d, rtol=1e-5)
    np.testing.assert_allclose(run(lambda x, y: x @ y, c, B), c @ B, rtol=1e-5)
    np.testing.assert_allclose(run(lambda x, y: x @ y, B, d), B @ d, rtol=1e-5)


@pytest.mark.parametrize("key", [
    "1", "-1", "1:3", "::2", "::-1", "-2:0:-1", ":, 1", "..., 2", "None, :, None", "1, ::-2",
    "..., None", "0, 0", "2:1", "-1, -3:"])
def test_indexing(key):
    fn = eval(f"lambda x: x[{key}]")  # noqa: S307 - a fixed list of index expressions
    np.testing.assert_array_equal(run(fn, A), fn(A))


def test_dynamic_index_and_index_errors():
    for i in (0, 2, -1):
        np.testing.assert_array_equal(run(lambda x, k: x[k], A, np.int32(i)), A[i])
    np.testing.assert_array_equal(run(lambda x, k: x[1, k], A, np.int32(5)), A[1, 3])   # clamped
    with pytest.raises(IndexError, match="out of bounds"):
        run(lambda x: x[3], A)
    with pytest.raises(IndexError, match="too many indices"):
        run(lambda x: x[0, 0, 0], A)
    with pytest.raises(TypeError, match="not supported as an index"):
        run(lambda x, k: x[k], A, np.array([0, 1], np.int32))


def test_attributes_and_methods():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, len=len(x))
        return (x.T, x.astype(np.int32), x.reshape(2, -1), x.reshape((4, 3)), x.transpose(1, 0),
                x.sum(), x.sum(axis=0), x.max(axis=1, keepdims=True), x.min(), x.mean(axis=(0, 1)),
                (x > 0).sum(), (x > 0).any(axis=0), (x > 0).all(), x.prod(axis=-1))

    got = run(f, A)
    assert seen == dict(shape=(3, 4), dtype=np.float32, ndim=2, size=12, len=3)
    refs = (A.T, A.astype(np.int32), A.reshape(2, -1), A.reshape(4, 3), A.T, A.sum(), A.sum(0),
            A.max(1, keepdims=True), A.min(), A.mean(axis=(0, 1)), (A > 0).sum(), (A > 0).any(0),
            (A > 0).all(), A.prod(-1))
    for g, r in zip(got, refs):
        assert g.shape == np.shape(r)
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
    assert got[10].dtype == np.int32      # summing bools counts them
    assert run(lambda x: x.mean(), I).dtype == np.float32


def test_shape_errors_are_clear():
    with pytest.raises(ValueError, match=r"\+: shapes \(3, 4\) and \(3,\) do not broadcast"):
        run(lambda x, y: x + y, A, B[:3])
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        run(lambda x: x.sum(axis=2), A)
    with pytest.raises(ValueError, match="cannot reshape"):
        run(lambda x: x.reshape(5, -1), A)
