"""JIT against the numpy evaluator: each op on several shapes, dtypes and layouts.

Modules are written as HLO text so that parameters and results can carry any
``minor_to_major`` (and padded) layout; the evaluator ignores layouts, so any
difference is an addressing bug in the code generator.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import xlac

LAYOUTS_2D = ["{1,0}", "{0,1}", "{0,1:P(4,5)}", "{1,0:P(3,6)V(one)}"]


def rand(dtype, shape, rng, low=-4, high=4):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(max(info.min, low), min(info.max, high) + 1, size=shape).astype(dt)
    if np.issubdtype(dt, np.complexfloating):
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dt)
    return rng.uniform(low, high, shape).astype(dt)


def check(text, *args, rtol=1e-6, atol=1e-6):
    """JIT and evaluate ``text`` on ``args``; compare every result leaf."""
    module = xlac.parse_hlo(text)
    got = xlac.jit(module)(*args)
    want = xlac.evaluate(module, *args)
    got_l = list(got) if isinstance(got, tuple) else [got]
    want_l = list(want) if isinstance(want, tuple) else [want]
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        assert g.dtype == w.dtype and g.shape == w.shape
        if np.issubdtype(w.dtype, np.inexact):
            np.testing.assert_allclose(g.astype(w.dtype), w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)
    return got


def module(body: str, name="m") -> str:
    return f"HloModule {name}\n\nENTRY e {{\n{body}\n}}\n"


UNARY_FLOAT = ["abs", "ceil", "cosine", "exponential", "exponential-minus-one", "floor", "log",
               "log-plus-one", "logistic", "negate", "round-nearest-afz", "round-nearest-even",
               "rsqrt", "sign", "sine", "sqrt", "tan", "tanh", "cbrt", "erf"]


@pytest.mark.parametrize("opcode", UNARY_FLOAT)
@pytest.mark.parametrize("layout", LAYOUTS_2D[:3])
def test_unary_float(opcode, layout):
    rng = np.random.default_rng(0)
    x = rand(np.float32, (3, 4), rng)
    if opcode in ("log", "sqrt", "rsqrt", "log-plus-one"):
        x = np.abs(x) + 0.1
    text = module(f"  p = f32[3,4]{layout} parameter(0)\n  ROOT r = f32[3,4]{layout} {opcode}(p)")
    check(text, x, rtol=2e-6, atol=1e-6)


BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "remainder", "power"]


@pytest.mark.parametrize("opcode", BINARY)
@pytest.mark.parametrize("ty,dtype", [("f32", np.float32), ("f64", np.float64), ("s32", np.int32),
                                      ("u8", np.uint8), ("s64", np.int64), ("f16", np.float16),
                                      ("bf16", xlac.BF16.dtype)])
def test_binary(opcode, ty, dtype):
    rng = np.random.default_rng(1)
    x, y = rand(dtype, (4, 5), rng), rand(dtype, (4, 5), rng)
    if opcode == "power" and ty in ("f32", "f64", "f16", "bf16"):
        x = np.abs(x)
    text = module(f"  a = {ty}[4,5]{{0,1}} parameter(0)\n  b = {ty}[4,5]{{1,0}} parameter(1)\n"
                  f"  ROOT r = {ty}[4,5]{{1,0}} {opcode}(a, b)")
    tol = 1e-2 if ty in ("f16", "bf16") else 1e-6
    check(text, x, y, rtol=tol, atol=tol)


@pytest.mark.parametrize("opcode", ["and", "or", "xor", "shift-left", "shift-right-logical",
                                    "shift-right-arithmetic"])
@pytest.mark.parametrize("ty,dtype", [("s8", np.int8), ("u32", np.uint32), ("s64", np.int64)])
def test_bitwise(opcode, ty, dtype):
    rng = np.random.default_rng(2)
    x = rand(dtype, (17,), rng, -100, 100)
    y = rand(dtype, (17,), rng, -3, 70) if "shift" in opcode else rand(dtype, (17,), rng, -100, 100)
    text = module(f"  a = {ty}[17] parameter(0)\n  b = {ty}[17] parameter(1)\n"
                  f"  ROOT r = {ty}[17] {opcode}(a, b)")
    check(text, x, y)


@pytest.mark.parametrize("direction", ["EQ", "NE", "LT", "LE", "GT", "GE"])
@pytest.mark.parametrize("ty,dtype,ctype", [("f32", np.float32, ""), ("f32", np.float32, ", type=TOTALORDER"),
                                            ("s16", np.int16, ""), ("u16", np.uint16, "")])
def test_compare(direction, ty, dtype, ctype):
    rng = np.random.default_rng(3)
    x, y = rand(dtype, (6, 3), rng, -2, 2), rand(dtype, (6, 3), rng, -2, 2)
    if ty == "f32":
        x[0, :] = [np.nan, -0.0, np.inf]
        y[0, :] = [np.nan, 0.0, np.inf]
    text = module(f"  a = {ty}[6,3]{{0,1}} parameter(0)\n  b = {ty}[6,3]{{1,0}} parameter(1)\n"
                  f"  ROOT r = pred[6,3]{{1,0}} compare(a, b), direction={direction}{ctype}")
    check(text, x, y)


def test_select_clamp_convert():
    rng = np.random.default_rng(4)
    p = rand(np.bool_, (3, 4), rng)
    x, y = rand(np.float32, (3, 4), rng), rand(np.float32, (3, 4), rng)
    text = module("""  p = pred[3,4]{0,1} parameter(0)
  x = f32[3,4]{1,0} parameter(1)
  y = f32[3,4]{0,1} parameter(2)
  lo = f32[] constant(-1)
  hi = f32[] constant(1.5)
  s = f32[3,4]{1,0} select(p, x, y)
  c = f32[3,4]{1,0} clamp(lo, s, hi)
  i = s32[3,4]{0,1} convert(c)
  u = u8[3,4]{1,0} convert(x)
  h = f16[3,4]{1,0} convert(y)
  b = bf16[3,4]{1,0} convert(x)
  ROOT t = (f32[3,4]{1,0}, s32[3,4]{0,1}, u8[3,4]{1,0}, f16[3,4]{1,0}, bf16[3,4]{1,0}) tuple(c, i, u, h, b)""")
    check(text, p, x, y)


@pytest.mark.parametrize("layout_in,layout_out", [("{1,0}", "{1,0}"), ("{0,1}", "{1,0}"),
                                                  ("{1,0}", "{0,1:P(7,5)}")])
def test_data_movement(layout_in, layout_out):
    rng = np.random.default_rng(5)
    x = rand(np.float32, (4, 6), rng)
    text = module(f"""  x = f32[4,6]{layout_in} parameter(0)
  t = f32[6,4]{layout_out} transpose(x), dimensions={{1,0}}
  r = f32[2,12]{{1,0}} reshape(x)
  r3 = f32[3,2,4]{{0,2,1}} reshape(t)
  b = f32[2,4,6,3]{{3,1,2,0}} broadcast(x), dimensions={{1,2}}
  s = f32[2,2]{{0,1}} slice(x), slice={{[1:4:2], [0:6:4]}}
  v = f32[4,6]{{1,0}} reverse(x), dimensions={{0,1}}
  s2 = f32[4,2]{{0,1}} slice(x), slice={{[0:4], [1:6:3]}}
  c = f32[4,10]{{1,0}} concatenate(x, s2, s2), dimensions={{1}}
  z = f32[] constant(-7)
  p = f32[8,4]{{0,1}} pad(x, z), padding=-1_2_1x1_-3
  i = s32[4,6]{{0,1}} iota(), iota_dimension=1
  ROOT out = (f32[6,4]{layout_out}, f32[2,12]{{1,0}}, f32[3,2,4]{{0,2,1}}, f32[2,4,6,3]{{3,1,2,0}}, f32[2,2]{{0,1}}, f32[4,6]{{1,0}}, f32[4,10]{{1,0}}, f32[8,4]{{0,1}}, s32[4,6]{{0,1}}) tuple(t, r, r3, b, s, v, c, p, i)""")
    check(text, x)


@pytest.mark.parametrize("layout", ["{2,1,0}", "{0,1,2}", "{1,0,2}"])
def test_reduce(layout):
    rng = np.random.default_rng(6)
    x = rand(np.float32, (3, 4, 5), rng)
    text = f"""HloModule r

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

max {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}}

ENTRY e {{
  x = f32[3,4,5]{layout} parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  s02 = f32[4]{{0}} reduce(x, zero), dimensions={{0,2}}, to_apply=add
  s1 = f32[3,5]{{0,1}} reduce(x, ninf), dimensions={{1}}, to_apply=max
  all = f32[] reduce(x, zero), dimensions={{0,1,2}}, to_apply=add
  none = f32[3,4,5]{{1,2,0}} reduce(x, zero), dimensions={{}}, to_apply=add
  ROOT t = (f32[4]{{0}}, f32[3,5]{{0,1}}, f32[], f32[3,4,5]{{1,2,0}}) tuple(s02, s1, all, none)
}}
"""
    check(text, x, rtol=1e-5, atol=1e-5)


def test_variadic_reduce_argmax():
    rng = np.random.default_rng(7)
    x = rand(np.float32, (5, 7), rng)
    text = """HloModule argmax

argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  take = pred[] or(gt, tie)
  v = f32[] select(take, a, b)
  i = s32[] select(take, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}

ENTRY e {
  x = f32[5,7]{0,1} parameter(0)
  idx = s32[5,7]{1,0} iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[5]{0}, s32[5]{0}) reduce(x, idx, ninf, zero), dimensions={1}, to_apply=argmax
}
"""
    got = check(text, x)
    np.testing.assert_array_equal(got[1], np.argmax(x, axis=1))


@pytest.mark.parametrize("lhs_layout,rhs_layout,out_layout", [
    ("{1,0}", "{1,0}", "{1,0}"), ("{0,1}", "{0,1}", "{0,1}"), ("{1,0}", "{0,1}", "{1,0:P(9,9)}")])
def test_dot_matmul(lhs_layout, rhs_layout, out_layout):
    rng = np.random.default_rng(8)
    a, b = rand(np.float32, (7, 5), rng), rand(np.float32, (5, 3), rng)
    text = module(f"""  a = f32[7,5]{lhs_layout} parameter(0)
  b = f32[5,3]{rhs_layout} parameter(1)
  ROOT d = f32[7,3]{out_layout} dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}""")
    got = check(text, a, b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


def test_dot_general_batch_and_vectors():
    rng = np.random.default_rng(9)
    a, b = rand(np.float32, (2, 4, 3), rng), rand(np.float32, (3, 2, 5), rng)
    v, w = rand(np.float64, (6,), rng), rand(np.float64, (6,), rng)
    i, j = rand(np.int32, (3, 4), rng), rand(np.int32, (4,), rng)
    text = module("""  a = f32[2,4,3]{2,1,0} parameter(0)
  b = f32[3,2,5]{0,1,2} parameter(1)
  v = f64[6]{0} parameter(2)
  w = f64[6]{0} parameter(3)
  i = s32[3,4]{1,0} parameter(4)
  j = s32[4]{0} parameter(5)
  bd = f32[2,4,5]{2,1,0} dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_contracting_dims={0}
  vv = f64[] dot(v, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  mv = s32[3]{0} dot(i, j), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  outer = f64[6,6]{1,0} dot(v, w)
  ROOT t = (f32[2,4,5]{2,1,0}, f64[], s32[3]{0}, f64[6,6]{1,0}) tuple(bd, vv, mv, outer)""")
    got = check(text, a, b, v, w, i, j, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[0], np.einsum("bik,kbj->bij", a, b), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[2], i @ j)


def test_results_that_alias_parameters_and_constants():
    text = module("""  p = f32[3]{0} parameter(0)
  c = s32[2]{0} constant({4, 5})
  one = f32[] constant(1)
  n = f32[3]{0} negate(p)
  ROOT t = (f32[3]{0}, f32[3]{0}, s32[2]{0}, f32[], f32[3]{0}, f32[3]{0}) tuple(p, n, c, one, n, p)""")
    x = np.array([1, 2, 3], np.float32)
    got = check(text, x)
    np.testing.assert_array_equal(got[0], x)
    np.testing.assert_array_equal(got[2], [4, 5])
    assert got[3] == 1
    got[0][0] = 99  # results never share memory with the arguments
    assert x[0] == 1


def test_zero_sized_arrays():
    text = """HloModule z

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[0,3]{1,0} parameter(0)
  z = f32[] constant(2.5)
  n = f32[0,3]{1,0} negate(p)
  s = f32[3]{0} reduce(p, z), dimensions={0}, to_apply=add
  ROOT t = (f32[0,3]{1,0}, f32[3]{0}) tuple(n, s)
}
"""
    got = check(text, np.zeros((0, 3), np.float32))
    np.testing.assert_array_equal(got[1], [2.5, 2.5, 2.5])


def test_call_is_compiled():
    text = """HloModule c

relu {
  x = f32[4]{0} parameter(0)
  z = f32[] constant(0)
  zb = f32[4]{0} broadcast(z), dimensions={}
  ROOT r = f32[4]{0} maximum(x, zb)
}

ENTRY e {
  p = f32[4]{0} parameter(0)
  a = f32[4]{0} call(p), to_apply=relu
  ROOT b = f32[4]{0} call(a), to_apply=relu
}
"""
    got = check(text, np.array([-1, 2, -3, 4], np.float32))
    np.testing.assert_array_equal(got, [0, 2, 0, 4])


def test_complex_arithmetic():
    rng = np.random.default_rng(10)
    x, y = rand(np.complex64, (5,), rng), rand(np.complex64, (5,), rng)
    text = module("""  x = c64[5]{0} parameter(0)
  y = c64[5]{0} parameter(1)
  m = c64[5]{0} multiply(x, y)
  d = c64[5]{0} divide(m, y)
  re = f32[5]{0} real(d)
  ab = f32[5]{0} abs(x)
  ROOT t = (c64[5]{0}, c64[5]{0}, f32[5]{0}, f32[5]{0}) tuple(m, d, re, ab)""")
    check(text, x, y, rtol=1e-5, atol=1e-5)


# -- calling conventions -----------------------------------------------------------

ADD = module("  x = f32[2,3]{1,0} parameter(0)\n  y = f32[2,3]{0,1} parameter(1)\n"
             "  ROOT r = f32[2,3]{1,0} add(x, y)")


def test_strided_and_non_contiguous_arguments():
    exe = xlac.jit(ADD)
    big = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = big[::2, ::2]            # strided view
    y = np.asfortranarray(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(exe(x, y), x + 1)
    np.testing.assert_array_equal(exe(big.T[:3, :2].T, y), big.T[:3, :2].T + 1)


def test_argument_errors_name_the_parameter():
    exe = xlac.jit(ADD)
    ok = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match="takes 2 argument"):
        exe(ok)
    with pytest.raises(TypeError, match=r"parameter 1 \(y\).*float32.*float64"):
        exe(ok, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"parameter 0 \(x\).*\(2, 3\).*\(3, 2\)"):
        exe(np.zeros((3, 2), np.float32), ok)


def test_compile_cache_reuses_code():
    a, b = xlac.jit(ADD), xlac.jit(xlac.parse_hlo(ADD))
    assert a._jit is b._jit


def test_unsupported_op_is_refused_by_name():
    text = module("  x = f32[4]{0} parameter(0)\n"
                  '  ROOT d = f32[4]{0} xlac-test-unimplemented(x)')
    with pytest.raises(xlac.UnsupportedError, match="not supported yet: xlac-test-unimplemented"):
        xlac.jit(text)


# -- property tests -------------------------------------------------------------------

@st.composite
def array_shapes(draw, max_rank=4):
    rank = draw(st.integers(0, max_rank))
    dims = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    return dims, draw(st.permutations(range(rank)))


def _shape_text(ty, dims, m2m):
    return f"{ty}[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}}}"


SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(array_shapes(), st.permutations(range(4)), st.sampled_from(["add", "multiply", "maximum", "subtract"]),
       st.randoms())
def test_property_elementwise(shape, perm2, opcode, rnd):
    dims, m2m = shape
    m2m_b = [p for p in perm2 if p < len(dims)]
    rng = np.random.default_rng(rnd.randint(0, 1 << 30))
    x, y = rand(np.float32, dims, rng), rand(np.float32, dims, rng)
    text = module(f"  a = {_shape_text('f32', dims, m2m)} parameter(0)\n"
                  f"  b = {_shape_text('f32', dims, m2m_b)} parameter(1)\n"
                  f"  n = {_shape_text('f32', dims, m2m_b)} negate(a)\n"
                  f"  ROOT r = {_shape_text('f32', dims, m2m)} {opcode}(n, b)")
    check(text, x, y)


@SETTINGS
@given(array_shapes(), st.randoms())
def test_property_transpose(shape, rnd):
    dims, m2m = shape
    perm = list(range(len(dims)))
    rnd.shuffle(perm)
    out_dims = [dims[p] for p in perm]
    rng = np.random.default_rng(rnd.randint(0, 1 << 30))
    x = rand(np.int32, dims, rng, -1000, 1000)
    text = module(f"  a = {_shape_text('s32', dims, m2m)} parameter(0)\n"
                  f"  ROOT t = {_shape_text('s32', out_dims, list(reversed(range(len(dims)))))} "
                  f"transpose(a), dimensions={{{','.join(map(str, perm))}}}")
    got = check(text, x)
    np.testing.assert_array_equal(got, np.transpose(x, perm))


@SETTINGS
@given(array_shapes(), st.randoms())
def test_property_reduce(shape, rnd):
    dims, m2m = shape
    reduced = sorted(d for d in range(len(dims)) if rnd.random() < 0.5)
    kept = [dims[d] for d in range(len(dims)) if d not in reduced]
    rng = np.random.default_rng(rnd.randint(0, 1 << 30))
    x = rand(np.float32, dims, rng)
    text = (f"HloModule r\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            f"  ROOT s = f32[] add(a, b)\n}}\n\nENTRY e {{\n"
            f"  x = {_shape_text('f32', dims, m2m)} parameter(0)\n  z = f32[] constant(0)\n"
            f"  ROOT r = {_shape_text('f32', kept, list(reversed(range(len(kept)))))} reduce(x, z), "
            f"dimensions={{{','.join(map(str, reduced))}}}, to_apply=add\n}}\n")
    got = check(text, x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, x.sum(axis=tuple(reduced)), rtol=1e-5, atol=1e-5)


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 6), st.integers(1, 6), st.integers(1, 6), st.booleans(),
       st.booleans(), st.randoms())
def test_property_dot(batch, m, k, n, lhs_col_major, rhs_col_major, rnd):
    rng = np.random.default_rng(rnd.randint(0, 1 << 30))
    a, b = rand(np.float32, (batch, m, k), rng), rand(np.float32, (batch, k, n), rng)
    la = "{1,2,0}" if lhs_col_major else "{2,1,0}"
    lb = "{1,2,0}" if rhs_col_major else "{2,1,0}"
    text = module(f"  a = f32[{batch},{m},{k}]{la} parameter(0)\n  b = f32[{batch},{k},{n}]{lb} parameter(1)\n"
                  f"  ROOT d = f32[{batch},{m},{n}]{{2,1,0}} dot(a, b), lhs_batch_dims={{0}}, "
                  f"rhs_batch_dims={{0}}, lhs_contracting_dims={{2}}, rhs_contracting_dims={{1}}")
    got = check(text, a, b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


def test_max_min_order_signed_zeros_like_the_evaluator():
    text = module("  a = f32[4]{0} parameter(0)\n  b = f32[4]{0} parameter(1)\n"
                  "  mx = f32[4]{0} maximum(a, b)\n  mn = f32[4]{0} minimum(a, b)\n"
                  "  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(mx, mn)")
    a = np.array([0.0, -0.0, -0.0, np.nan], np.float32)
    b = np.array([-0.0, 0.0, -0.0, 1.0], np.float32)
    mx, mn = xlac.jit(text)(a, b)
    assert list(np.signbit(mx[:3])) == [False, False, True]
    assert list(np.signbit(mn[:3])) == [True, True, True]
    assert np.isnan(mx[3]) and np.isnan(mn[3])
    emx, emn = xlac.evaluate(text, a, b)
    np.testing.assert_array_equal(np.signbit(emx), np.signbit(mx))
    np.testing.assert_array_equal(np.signbit(emn), np.signbit(mn))


def test_loop_kernels_are_marked_parallel_so_in_place_writes_still_vectorise():
    """Elementwise kernels carry llvm.loop.parallel_accesses: LLVM vectorises
    them without run-time overlap checks, which a result written over its
    (donated) input would fail."""
    text = module("  x = f32[4096]{0} parameter(0)\n  y = f32[4096]{0} parameter(1)\n"
                  "  ROOT r = f32[4096]{0} add(x, y)")
    exe = xlac.jit(text)
    assert "llvm.loop.parallel_accesses" in exe.llvm_ir
    ir_text = exe.optimized_llvm_ir
    assert "diff.check" not in ir_text
    assert any(f"<{n} x float>" in ir_text for n in (4, 8, 16))  # vectorised, any vector width
    x = np.arange(4096, dtype=np.float32)
    np.testing.assert_array_equal(xlac.jit(text, donate_argnums=(0,))(x.copy(), x), 2 * x)


@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("layout", ["{1,0}", "{0,1}"])
def test_big_reductions_split_over_tasks(num_threads, layout):
    """Reductions to one value split the input into partial reductions; over the
    major dimension they stream into the output; both threaded."""
    text = f"""HloModule r

add {{
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}}

max {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}}

ENTRY e {{
  x = s32[512,600]{layout} parameter(0)
  y = f32[512,600]{layout} parameter(1)
  z = s32[] constant(0)
  ninf = f32[] constant(-inf)
  sq = s32[512,600]{layout} multiply(x, x)
  all = s32[] reduce(sq, z), dimensions={{0,1}}, to_apply=add
  cols = s32[600]{{0}} reduce(x, z), dimensions={{0}}, to_apply=add
  rows = s32[512]{{0}} reduce(x, z), dimensions={{1}}, to_apply=add
  m = f32[] reduce(y, ninf), dimensions={{0,1}}, to_apply=max
  ROOT t = (s32[], s32[600]{{0}}, s32[512]{{0}}, f32[]) tuple(all, cols, rows, m)
}}
"""
    rng = np.random.default_rng(11)
    x = rng.integers(-50, 50, (512, 600)).astype(np.int32)
    y = rng.standard_normal((512, 600)).astype(np.float32)
    got = xlac.jit(text, num_threads=num_threads)(x, y)
    assert got[0] == (x.astype(np.int64) ** 2).sum()
    np.testing.assert_array_equal(got[1], x.sum(0))
    np.testing.assert_array_equal(got[2], x.sum(1))
    assert got[3] == y.max()


@pytest.mark.parametrize("num_threads", [1, 2])
def test_big_transposes_are_tiled_and_right(num_threads):
    from xlac.codegen.kernels.loop import transpose_tiles
    text = module("  x = f32[300,200,3]{2,1,0} parameter(0)\n"
                  "  t = f32[200,300,3]{2,1,0} transpose(x), dimensions={1,0,2}\n"
                  "  u = f32[3,200,300]{2,1,0} transpose(x), dimensions={2,1,0}\n"
                  "  one = f32[] constant(1)\n  ob = f32[3,200,300]{2,1,0} broadcast(one), dimensions={}\n"
                  "  v = f32[3,200,300]{2,1,0} add(u, ob)\n"
                  "  ROOT r = (f32[200,300,3]{2,1,0}, f32[3,200,300]{2,1,0}) tuple(t, v)")
    x = np.random.default_rng(12).standard_normal((300, 200, 3)).astype(np.float32)
    t, v = xlac.jit(text, num_threads=num_threads)(x)
    np.testing.assert_array_equal(t, np.transpose(x, (1, 0, 2)))
    np.testing.assert_array_equal(v, np.transpose(x, (2, 1, 0)) + 1)
    # A 2-D transpose of big dimensions is walked in tiles.
    square = module("  x = f32[300,200]{1,0} parameter(0)\n"
                    "  ROOT t = f32[200,300]{1,0} transpose(x), dimensions={1,0}")
    inst = xlac.parse_hlo(square).entry.root
    assert transpose_tiles(inst, inst.shape) == {0: 64, 1: 64}
    y = x[:, :, 0].copy()
    np.testing.assert_array_equal(xlac.jit(square, num_threads=num_threads)(y), y.T)


@pytest.mark.parametrize("ty", ["bf16", "f16"])
def test_narrow_float_ops_in_one_fused_loop_round_after_every_op(ty):
    """A chain of bf16 (f16) ops fused into one loop rounds each result, as XLA:CPU
    does (its f32 -> bf16 -> f32 pairs stay): bit for bit the evaluator and an
    op-by-op numpy rounding, and not what one rounding at the end would give."""
    n = 4096
    text = f"""HloModule narrow_chain
ENTRY e {{
  x = {ty}[{n}] parameter(0)
  a = {ty}[] parameter(1)
  b = {ty}[] parameter(2)
  ab = {ty}[{n}] broadcast(a), dimensions={{}}
  bb = {ty}[{n}] broadcast(b), dimensions={{}}
  m = {ty}[{n}] multiply(ab, x)
  s = {ty}[{n}] add(m, bb)
  d = {ty}[{n}] divide(s, x)
  ROOT r = {ty}[{n}] subtract(d, m)
}}"""
    dt = (xlac.BF16 if ty == "bf16" else xlac.F16).dtype
    rng = np.random.default_rng(7)
    x = (rng.uniform(0.5, 4, n) * rng.choice([-1, 1], n)).astype(dt)
    a, b = np.asarray(1.37, dt), np.asarray(0.61, dt)
    exe = xlac.jit(text)
    assert sum(i.opcode == "fusion" for i in exe.optimized_hlo.entry.instructions) == 1
    got = exe(x, a, b)
    f = lambda v: np.asarray(v).astype(np.float32)                       # noqa: E731
    r = lambda v: v.astype(dt).astype(np.float32)                         # noqa: E731
    m = r(f(a) * f(x))
    op_by_op = r(r(r(m + f(b)) / f(x)) - m).astype(dt)
    np.testing.assert_array_equal(got.view(np.uint16), op_by_op.view(np.uint16))
    np.testing.assert_array_equal(got.view(np.uint16), np.asarray(xlac.evaluate(text, x, a, b)).view(np.uint16))
    m1 = f(a) * f(x)
    once = (((m1 + f(b)) / f(x)) - m1).astype(dt)
    assert np.any(got.view(np.uint16) != once.view(np.uint16))


def test_common_factors_group_a_reshapes_dimensions():
    from xlac.codegen.elemental import common_factors
    groups = lambda a, b: [(list(x), list(y)) for x, y in common_factors(a, b)]  # noqa: E731
    assert groups([2, 3, 4], [6, 4]) == [([0, 1], [0]), ([2], [1])]
    assert groups([8, 8, 32], [8, 8, 4, 8]) == [([0], [0]), ([1], [1]), ([2], [2, 3])]
    assert groups([2, 3], [3, 2]) == [([0, 1], [0, 1])]
    assert groups([1, 4], [4, 1]) == [([0], []), ([1], [0]), ([], [1])]


@pytest.mark.parametrize("out_dims", [(3, 4, 2, 8), (3, 2, 2, 2, 8), (12, 16), (2, 3, 2, 16), (6, 2, 2, 2, 4)])
def test_reshapes_inside_a_fusion_index_per_group_of_dimensions(out_dims):
    """A reshape read inside a fusion maps each group of dimensions whose
    sizes multiply to the same number (``common_factors``) on its own; a
    dimension split alone needs no division by the other groups' sizes (a
    group norm's split channels); merged ones are divided out; the values are
    numpy's whatever the grouping."""
    out = ",".join(map(str, out_dims))
    layout = ",".join(str(d) for d in reversed(range(len(out_dims))))
    text = module(f"  x = f32[3,4,16]{{2,1,0}} parameter(0)\n"
                  f"  e = f32[3,4,16]{{2,1,0}} exponential(x)\n"
                  f"  r = f32[{out}]{{{layout}}} reshape(e)\n"
                  f"  ROOT n = f32[{out}]{{{layout}}} negate(r)")
    exe = xlac.jit(text)
    x = np.random.default_rng(0).standard_normal((3, 4, 16)).astype(np.float32)
    np.testing.assert_allclose(exe(x), -np.exp(x).reshape(out_dims), rtol=1e-6)
    if out_dims == (3, 4, 2, 8):          # only the minor dimension split: no division left
        body = exe.llvm_ir
        assert "udiv" not in body and "urem" not in body, body
