"""xlac.jit of Python functions: tracing, caching, pytrees, static and donated arguments,
.lower/.compile; and the misleading messages of issue 18."""
import sys

import numpy as np
import pytest

import xlac
from xlac import lax, ops

pytestmark = pytest.mark.timeout(600)

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def counting(fn):
    calls = []

    def wrapped(*a, **k):
        calls.append(1)
        return fn(*a, **k)
    wrapped.__name__ = fn.__name__
    return wrapped, calls


def test_second_call_does_not_retrace_new_shapes_and_dtypes_do():
    f, calls = counting(lambda x: x * 2)
    jf = xlac.jit(f)
    np.testing.assert_array_equal(jf(X), X * 2)
    np.testing.assert_array_equal(jf(X + 1), (X + 1) * 2)
    assert len(calls) == 1 and jf._cache_size() == 1
    jf(X[:1])                             # new shape
    jf(X.astype(np.float64))              # new dtype
    jf(X.astype(np.float64))
    assert len(calls) == 3 and jf._cache_size() == 3
    # Python scalars are weakly typed traced values: a new value does not retrace.
    g, gcalls = counting(lambda x, s: x + s)
    jg = xlac.jit(g)
    np.testing.assert_array_equal(jg(X, 1.0), X + 1)
    np.testing.assert_array_equal(jg(X, 2.5), X + 2.5)
    assert len(gcalls) == 1


def test_decorator_forms_and_wraps():
    @xlac.jit
    def add1(x):
        """doc"""
        return x + 1

    @xlac.jit(static_argnums=1)
    def powk(x, k):
        return x ** k

    assert add1.__name__ == "add1" and add1.__doc__ == "doc"
    np.testing.assert_array_equal(add1(X), X + 1)
    np.testing.assert_array_equal(powk(X, 3), X ** 3)


def test_static_arguments():
    f, calls = counting(lambda x, n, mode="sum": x.sum(axis=n) if mode == "sum" else x.max(axis=n))
    jf = xlac.jit(f, static_argnums=(1,), static_argnames="mode")
    np.testing.assert_array_equal(jf(X, 0), X.sum(0))
    np.testing.assert_array_equal(jf(X, 0), X.sum(0))
    np.testing.assert_array_equal(jf(X, 1), X.sum(1))
    np.testing.assert_array_equal(jf(X, 1, mode="max"), X.max(1))
    assert len(calls) == 3
    with pytest.raises(TypeError, match="static argument 1 must be hashable"):
        jf(X, [0])
    with pytest.raises(TypeError, match="sum: axis must be a Python int.*static_argnums"):
        xlac.jit(f)(X, np.int32(0))       # not static: a traced value cannot pick an axis


def test_argnums_out_of_range_are_errors_at_jit_time():
    """As jax.jit: checked against the signature when it can be inspected."""
    def f(x, y):
        return x + y

    for kw, what in [({"static_argnums": 5}, r"static_argnums=\(5,\), but takes only 2 positional"),
                     ({"static_argnums": -3}, r"static_argnums=\(-3,\)"),
                     ({"static_argnums": (0, 2)}, r"static_argnums=\(0, 2\)"),
                     ({"donate_argnums": 2}, r"donate_argnums=\(2,\)"),
                     ({"static_argnames": "z"}, r"static_argnames \['z'\], which are not among its arguments")]:
        with pytest.raises(ValueError, match=what):
            xlac.jit(f, **kw)
        with pytest.raises(ValueError, match=what):
            xlac.jit(**kw)(f)
    xlac.jit(f, static_argnums=-2)                                  # in range from the end
    xlac.jit(lambda *xs: xs[0], static_argnums=5)                   # *args: any number may come
    xlac.jit(lambda x, **kw: x, static_argnames="anything")         # **kwargs: any name may come
    xlac.jit(max, static_argnums=5)                                 # no inspectable signature


def test_static_arguments_by_position_or_by_name():
    """As jax.jit: a static argument is static however it is passed."""
    def f(x, mode):
        return x * 2 if mode == "double" else x

    for kw in ({"static_argnames": "mode"}, {"static_argnums": 1}):
        jf = xlac.jit(f, **kw)
        np.testing.assert_array_equal(jf(X, "double"), X * 2)
        np.testing.assert_array_equal(jf(X, mode="double"), X * 2)
        np.testing.assert_array_equal(jf(X, mode="same"), X)


def test_pytrees_in_and_out():
    @xlac.jit
    def f(params, batch, scale=1.0):
        w, b = params["w"], params["b"]
        y = batch[0] @ w + b
        return {"y": y * scale, "aux": [y.sum(), (y.max(), None)]}

    params = {"w": np.ones((3, 2), np.float32), "b": np.array([1, 2], np.float32)}
    batch = (X, None)
    got = f(params, batch, scale=2.0)
    y = X @ params["w"] + params["b"]
    np.testing.assert_allclose(got["y"], y * 2)
    np.testing.assert_allclose(got["aux"][0], y.sum())
    assert got["aux"][1][1] is None
    np.testing.assert_allclose(got["aux"][1][0], y.max())
    # A different structure retraces; the same does not.
    assert f._cache_size() == 1
    f(params, batch, scale=3.0)
    assert f._cache_size() == 1
    f({"w": params["w"], "b": params["b"], "c": params["b"]}, batch)
    assert f._cache_size() == 2


def test_flat_arguments_work_without_optree(monkeypatch):
    monkeypatch.setitem(sys.modules, "optree", None)      # import optree -> ImportError
    f = xlac.jit(lambda x, y: (x + y, x * y))
    got = f(X, X)
    assert isinstance(got, tuple)
    np.testing.assert_array_equal(got[1], X * X)
    np.testing.assert_array_equal(xlac.jit(lambda x: x - 1)(X), X - 1)
    with pytest.raises(ImportError, match=r"xlac\[jit\]"):
        xlac.jit(lambda d: d["a"])({"a": X})


def test_donate_argnums():
    f = xlac.jit(lambda x, y: x + y, donate_argnums=0)
    a = X.copy()
    np.testing.assert_array_equal(f(a, X), X + X)
    with pytest.raises(ValueError, match="both static and donated"):
        xlac.jit(lambda x: x, static_argnums=0, donate_argnums=0)
    entry, _ = f._entry((a, X), {})
    assert entry.executable is not None


def test_lower_and_compile():
    f = xlac.jit(lambda x: lax.exp(x).sum())
    lowered = f.lower(X)
    text = lowered.as_hlo_text()
    assert text.startswith("HloModule jit_<lambda>") or "HloModule" in text
    assert "exponential" in text and "reduce" in text
    compiled = lowered.compile()
    np.testing.assert_allclose(compiled(X), np.exp(X).sum(), rtol=1e-6)
    assert isinstance(compiled.executable, xlac.Executable)
    with pytest.raises(TypeError, match="differ from the ones this was compiled for"):
        compiled(X[:1])
    assert f.eval_shape(X) == ((), np.dtype(np.float32))


def test_options_pass_through_and_computations_unchanged():
    f = xlac.jit(lambda x: x * x, num_threads=1, optimize=False)
    np.testing.assert_array_equal(f(X), X * X)
    b = xlac.XlaBuilder("sq")
    p = ops.parameter(b, 0, "f32[2,3]")
    exe = xlac.jit(b.build(p * p))
    assert isinstance(exe, xlac.Executable)
    np.testing.assert_array_equal(exe(X), X * X)
    assert isinstance(xlac.jit(b.build(p * p).as_hlo_text()), xlac.Executable)
    with pytest.raises(TypeError, match="static_argnums"):
        xlac.jit(b.build(p * p), static_argnums=0)


def test_call_time_errors_name_the_argument():
    f = xlac.jit(lambda x, y: x + y)
    with pytest.raises(TypeError, match=r"argument 1 \('y'\): expected an array or a number, got str"):
        f(X, "a")
    with pytest.raises(TypeError, match="int32"):
        f(X, 2**40)
    with pytest.raises(TypeError, match="takes 2 positional arguments|missing"):
        f(X)


def test_leaked_tracer():
    keep = []

    @xlac.jit
    def f(x):
        keep.append(x)
        return x

    f(X)
    with pytest.raises(TypeError, match="leaked tracer"):
        f(keep[0])
    g = xlac.jit(lambda y: y + keep[0])
    with pytest.raises(ValueError, match="leaked tracer"):
        g(X)


def test_method_decoration():
    class M:
        @xlac.jit
        def traced_self(self, x):
            return x * 2

    class N:
        scale = 3.0

        def __hash__(self):
            return 0

        @xlac.jit
        def apply(self, x):
            return x * 2

    # As with jax.jit: self is an argument like any other (static when hashable and marked).
    with pytest.raises(TypeError, match=r"argument 0 \('self'\): expected an array"):
        M().traced_self(X)
    np.testing.assert_array_equal(xlac.jit(N.apply.fun, static_argnums=0)(N(), X), X * 2)


# --- the misleading messages of issue 18 ----------------------------------------------

def test_reshape_argument_order_message():
    b = xlac.XlaBuilder("m")
    m = ops.parameter(b, 0, "f32[3,4]")
    with pytest.raises(xlac.ShapeError, match=r"reshape: dimensions \[4, 3\] is not a permutation.*"
                                              r"\(operand, dimensions, new_sizes\)") as e:
        ops.reshape(m, (4, 3), (1, 0))
    assert "transpose" not in str(e.value).split(";")[0]


def test_builders_of_one_name_are_told_apart():
    b1, b2 = xlac.XlaBuilder("c"), xlac.XlaBuilder("c")
    x = ops.parameter(b1, 0, "f32[]")
    y = ops.parameter(b2, 0, "f32[]")
    with pytest.raises(ValueError, match=r"different builders \('c' \(builder #\d+\) and 'c' \(builder #\d+\)\)"):
        ops.add(x, y)
    with pytest.raises(ValueError, match=r"belongs to builder 'c' \(builder #\d+\), not 'c' \(builder #\d+\)"):
        b1.build(y)


@pytest.mark.parametrize("bad,kind", [(lambda a, b: a + b, "function"), (3, "int")])
def test_a_non_computation_names_op_and_argument(bad, kind):
    b = xlac.XlaBuilder("r")
    x = ops.parameter(b, 0, "f32[4]")
    with pytest.raises(TypeError, match=f"reduce: computation must be an XlaComputation.*got {kind}"):
        ops.reduce(x, 0.0, bad, [0])
    with pytest.raises(TypeError, match=f"while_loop: body must be an XlaComputation.*got {kind}"):
        ops.while_loop(b.build(x), bad, x)
    with pytest.raises(TypeError, match=f"sort: comparator must be an XlaComputation.*got {kind}"):
        ops.sort(x, bad)


def test_nested_jit_inlines_and_no_argument_functions():
    inner, calls = counting(lambda x: x * 2)
    jinner = xlac.jit(inner)
    outer = xlac.jit(lambda x: jinner(x) + 1)
    np.testing.assert_array_equal(outer(X), X * 2 + 1)
    assert jinner._cache_size() == 0 and len(calls) == 1     # traced inline, not compiled apart
    np.testing.assert_array_equal(xlac.jit(lambda: lax.iota(np.int32, 3) * 2)(), [0, 2, 4])
    assert xlac.jit(lambda p, x: lax.cond(p, lambda: x, lambda: -x))(False, np.float32(3)) == -3


def test_ops_given_a_tracer_say_how():
    with pytest.raises(TypeError, match=r"exponential: operand must be an XlaOp, got Tracer; .*xlac.lax.*\.value"):
        xlac.jit(lambda x: ops.exp(x))(X)
    with pytest.raises(TypeError, match=r"add: needs at least one XlaOp operand, got Tracer.*xlac.lax"):
        xlac.jit(lambda x: ops.add(x, x))(X)
    np.testing.assert_allclose(xlac.jit(lambda x: lax.Tracer(ops.exp(x.value)))(X), np.exp(X), rtol=1e-6)
