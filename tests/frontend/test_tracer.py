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


def test_max_and_min_of_nothing_are_errors_as_in_jax():
    empty = np.zeros((0, 3), np.float32)
    with pytest.raises(ValueError, match="zero-size array to reduction operation max which has no identity"):
        run(lambda x: x.max(), empty)
    with pytest.raises(ValueError, match="reduction operation min"):
        run(lambda x: x.min(axis=0), empty)
    assert run(lambda x: x.max(axis=1), empty).shape == (0,)      # nothing to reduce: fine
    np.testing.assert_array_equal(run(lambda x: x.sum(axis=0), empty), np.zeros(3))


def test_shape_errors_are_clear():
    with pytest.raises(ValueError, match=r"\+: shapes \(3, 4\) and \(3,\) do not broadcast"):
        run(lambda x, y: x + y, A, B[:3])
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        run(lambda x: x.sum(axis=2), A)
    with pytest.raises(ValueError, match="cannot reshape"):
        run(lambda x: x.reshape(5, -1), A)


# Values below are jax 0.10.2's (without x64) for the same programs.

def test_sums_of_narrow_integers_and_bools_accumulate_as_jax():
    i8 = np.array([100, 100, 100, -7], np.int8)
    u8 = np.array([200, 200, 3], np.uint8)
    b = np.array([True, False, True, True])
    got = run(lambda x: (x.sum(), x.prod()), i8)
    assert [(g.dtype, int(g)) for g in got] == [(np.int32, 293), (np.int32, -7000000)]
    got = run(lambda x: x.sum(), u8)
    assert (got.dtype, int(got)) == (np.uint32, 403)
    got = run(lambda x: (x.sum(), x.prod(), x.mean()), b)
    assert [g.dtype for g in got] == [np.int32, np.int32, np.float32] and [float(g) for g in got] == [3, 0, 0.75]
    # f16 sums in f32 and rounds once: 3000 x 0.1 is 300, not the f16 accumulator's 256.
    got = run(lambda x: (x.sum(), x.mean()), np.full(3000, 0.1, np.float16))
    assert [g.dtype for g in got] == [np.float16] * 2 and [float(g) for g in got] == [300.0, np.float16(0.1)]


def test_bool_operands_promote_as_jax():
    p, q = np.array([True, False]), np.array([True, True])
    got = run(lambda p, q: (p ** 2, p // q, p % q, p >> q, p << q, p ** q, q ** p, 2 ** p, p // 2), p, q)
    want = [[1, 0], [1, 0], [0, 0], [0, 0], [2, 0], [1, 0], [1, 1], [2, 1], [0, 0]]
    for g, w in zip(got, want):
        assert g.dtype == np.int32
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(run(lambda p, q: xlac.lax.clamp(q, p, q), p, q), [True, True])


def test_negative_python_ints_wrap_into_unsigned_types():
    u = np.array([5, 0], np.uint32)
    got = run(lambda x: (x + -1, x * -1, x - 1), u)
    for g, w in zip(got, [[4, 4294967295], [4294967291, 0], [4, 4294967295]]):
        assert g.dtype == np.uint32
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(run(lambda x: x + 300, np.array([3, 250], np.uint8)), [47, 38])
    np.testing.assert_array_equal(run(lambda x: x + 300, np.array([3, 100], np.int8)), [47, -112])
    cet = xlac.lax.convert_element_type
    got = run(lambda: (cet(-1, np.uint32), cet(-1.5, np.uint8), cet(300.0, np.uint8), cet(np.nan, np.int32),
                       cet(1e10, np.int32), cet(2**40, np.uint8)))
    assert [int(g) for g in got] == [4294967295, 0, 255, 0, 2147483647, 0]
    assert int(run(lambda x: xlac.lax.add(x, -1), np.uint32(5))) == 4
    np.testing.assert_array_equal(run(lambda: xlac.lax.full((2,), -1, np.uint8)), [255, 255])
    with pytest.raises(OverflowError, match="does not fit int32"):
        run(lambda x: x + 2**40, u)            # jax: OverflowError too


def test_integer_power_as_jax():
    x, y = np.array([2, 3, -2, 0], np.int32), np.array([3, 0, 5, 0], np.int32)
    np.testing.assert_array_equal(run(lambda a, b: a ** b, x, y), [8, 1, -32, 1])
    # jax's binary exponentiation reads six bits of the exponent.
    got = run(lambda a, b: a ** b, np.array([2, 2, 2, 3], np.int32), np.array([64, 65, -1, 40], np.int32))
    np.testing.assert_array_equal(got, [1, 2, 0, 689956897])


def test_complex_values_order_by_real_then_imaginary_part():
    c = np.array([1 + 2j, 1 + 0j, 0 + 5j, 2 - 1j], np.complex64)
    d = np.array([1 + 3j, 1 + 0j, 1 + 0j, 2 - 2j], np.complex64)
    got = run(lambda a, b: (a < b, a <= b, a > b, a >= b), c, d)
    want = [[1, 0, 1, 0], [1, 1, 1, 0], [0, 0, 0, 1], [0, 1, 0, 1]]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, np.array(w, bool))


@pytest.mark.parametrize("fn,arg,match", [
    (lambda x: -x, np.array([True]), "bool value cannot be negated"),
    (lambda x: x - x, np.array([True]), "bool operands cannot be subtracted"),
    (lambda x: ~x, A, "~: needs an integer or bool value, got float32"),
    (lambda x: x << 1, A, "<<: needs integer or bool operands"),
    (lambda x: x & True, A, "&: needs integer or bool operands"),
    (lambda x: x // x, A.astype(np.complex64), "//: not defined for complex operands"),
    (lambda x: x ** -2, I, "integers cannot be raised to negative powers"),
    (lambda x, y: x + y, (np.zeros(2, xlac.S4.dtype), np.zeros(2, np.int8)),
     r"\+: int4 and int8 have no implicit promotion path"),
    (lambda x: x * 1.5, np.zeros(2, xlac.S4.dtype), r"\*: int4 and weakly typed float32 \(a Python scalar\)"),
])
def test_operators_jax_refuses_are_clear_type_errors(fn, arg, match):
    args = arg if isinstance(arg, tuple) else (arg,)
    with pytest.raises(TypeError, match=match):
        run(fn, *args)


def test_floor_divide_and_remainder_step_for_step_as_jax():
    """jax.numpy's algorithms, so zero divisors and inexact quotients agree with jax."""
    x = np.array([5, -5, 0, -2**31, 7, -7], np.int32)
    y = np.array([0, 0, 0, -1, 2, 2], np.int32)
    q, r = run(lambda a, b: (a // b, a % b), x, y)
    np.testing.assert_array_equal(q, [-2, -2, -1, -2**31, 3, -4])
    np.testing.assert_array_equal(r, [0, 0, 0, 0, 1, 1])                  # x % 0 is 0 in jax
    q, r = run(lambda a, b: (a // b, a % b), np.array([5, 0, 7], np.uint8), np.array([0, 0, 2], np.uint8))
    np.testing.assert_array_equal(q, [255, 255, 3])
    np.testing.assert_array_equal(r, [0, 0, 1])
    f = np.float32([1, 0.7, -1, 2.5])
    q, r = run(lambda a: (a // np.float32(0.1), a % np.float32(0.1)), f)
    np.testing.assert_array_equal(q, [9, 6, -10, 24])                    # floor(1 / 0.1) would be 10
    np.testing.assert_array_equal(r, np.float32([9.9999987e-02, 9.9999979e-02, 1.4901161e-08, 9.9999964e-02]))
