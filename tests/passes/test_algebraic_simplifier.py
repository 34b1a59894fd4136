"""AlgebraicSimplifier: every rewrite as HLO text in, text out (filecheck), the
values checked with the evaluator, and the cases where a rewrite must not fire."""
import numpy as np
import pytest

import xlac
from passtest import assert_same_values, filecheck, parse, run_pass
from xlac.passes.algebraic_simplifier import AlgebraicSimplifier
from xlac.passes.dce import DCE
from xlac.passes.pipeline import Pipeline

SPECIALS = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e-40], np.float32)


def simplify(text, **kw):
    return run_pass(AlgebraicSimplifier(), text, **kw)


def _args_for(module, rng):
    args = []
    for p in module.entry.parameters:
        s = p.shape
        n = s.element_count()
        if s.element_type.is_float:
            a = np.resize(SPECIALS, n).astype(s.dtype)
            rng.shuffle(a)
        elif s.element_type.is_pred:
            a = rng.integers(0, 2, n).astype(bool)
        elif s.element_type.is_complex:
            a = (np.resize(SPECIALS, n) + 1j * np.resize(SPECIALS[::-1], n)).astype(s.dtype)
        else:
            info = np.iinfo(s.dtype)
            a = rng.integers(info.min, info.max, n, dtype=s.dtype, endpoint=True)
        args.append(a.reshape(s.dimensions))
    return args


def check_values(text):
    """The simplified module computes bitwise the same as the original (-0.0, NaN, inf inputs)."""
    before = parse(text)
    after = parse(text)
    Pipeline("t", [AlgebraicSimplifier(), DCE()]).run(after)
    rng = np.random.default_rng(0)
    for _ in range(3):
        args = _args_for(before, rng)
        assert_same_values(xlac.evaluate(after, *args), xlac.evaluate(before, *args))


# ---------------------------------------------------------------------------
# x OP c -> x identities, and the ones that must not fire
# ---------------------------------------------------------------------------

def _binary_module(t, op, const, const_on_left=False):
    lhs, rhs = ("cb", "x") if const_on_left else ("x", "cb")
    return f"""
    HloModule m
    ENTRY e {{
      x = {t}[8]{{0}} parameter(0)
      c = {t}[] constant({const})
      cb = {t}[8]{{0}} broadcast(c), dimensions={{}}
      y = {t}[8]{{0}} {op}({lhs}, {rhs})
      ROOT r = ({t}[8]{{0}}) tuple(y)
    }}"""


FIRES = [
    ("f32", "multiply", "1", False), ("f32", "multiply", "1", True), ("bf16", "multiply", "1", False),
    ("f64", "divide", "1", False), ("f32", "subtract", "0", False),
    ("f32", "add", "-0", False), ("f32", "add", "-0", True), ("f16", "add", "-0", False),
    ("s32", "add", "0", False), ("s32", "add", "0", True), ("u8", "subtract", "0", False),
    ("s64", "multiply", "1", True), ("s32", "divide", "1", False),
    ("u8", "xor", "0", False), ("u8", "or", "0", True), ("u8", "and", "255", False),
    ("s32", "and", "-1", True), ("pred", "and", "true", False), ("pred", "or", "false", True),
    ("pred", "add", "false", False),
]


@pytest.mark.parametrize("t,op,const,left", FIRES, ids=[f"{t}-{op}-{c}-{'l' if l else 'r'}" for t, op, c, l in FIRES])
def test_identity_fires(t, op, const, left):
    text = _binary_module(t, op, const, left)
    out = simplify(text, expect_changed=True)
    filecheck(out, f"""
        CHECK:     x = {t}[8]{{0}} parameter(0)
        CHECK-NOT: {op}(
        CHECK:     ROOT r = ({t}[8]{{0}}) tuple(x)
    """)
    check_values(text)


NO_FIRE = [
    ("f32", "add", "0", False),        # -0.0 + 0.0 is +0.0: x + 0 is not x for floats
    ("f32", "add", "0", True),
    ("f32", "subtract", "-0", False),  # -0.0 - (-0.0) is +0.0
    ("f32", "subtract", "0", True),    # 0 - x is not x
    ("f32", "divide", "1", True),      # 1 / x
    ("f32", "multiply", "2", False),
    ("c64", "multiply", "1", False),   # (a+bi)*1 is NaN when b is infinite
    ("c64", "add", "-0", False),
    ("s32", "and", "1", False),
    ("s32", "power", "1", False),
]


@pytest.mark.parametrize("t,op,const,left", NO_FIRE, ids=[f"{t}-{op}-{c}-{'l' if l else 'r'}" for t, op, c, l in NO_FIRE])
def test_identity_does_not_fire(t, op, const, left):
    out = simplify(_binary_module(t, op, const, left), expect_changed=False)
    filecheck(out, f"CHECK: y = {t}[8]{{0}} {op}(")


def test_float_add_of_positive_zero_is_kept_because_of_negative_zero():
    text = _binary_module("f32", "add", "0", False)
    module = parse(text)
    x = np.array([-0.0] * 8, np.float32)
    (y,) = xlac.evaluate(module, x)
    assert not np.signbit(y).any()  # so replacing y by x would be wrong
    simplify(text, expect_changed=False)


def test_non_uniform_constant_is_not_an_identity():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[4]{0} parameter(0)
      c = f32[4]{0} constant({1, 1, 2, 1})
      ROOT y = f32[4]{0} multiply(x, c)
    }""", expect_changed=False)
    filecheck(out, "CHECK: ROOT y = f32[4]{0} multiply(x, c)")


def test_uniform_array_constant_is_an_identity():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[2,2]{1,0} parameter(0)
      c = f32[2,2]{1,0} constant({{1, 1}, {1, 1}})
      m = f32[2,2]{1,0} multiply(c, x)
      ROOT y = f32[2,2]{1,0} negate(m)
    }""", expect_changed=True)
    filecheck(out, "CHECK: ROOT y = f32[2,2]{1,0} negate(x)")


def test_absorbing_elements():
    text = """
    HloModule m
    ENTRY e {
      p = pred[4]{0} parameter(0)
      f = pred[] constant(false)
      fb = pred[4]{0} broadcast(f), dimensions={}
      t = pred[4]{0} constant({1, 1, 1, 1})
      a = pred[4]{0} and(p, fb)
      o = pred[4]{0} or(t, p)
      i = s32[4]{0} parameter(1)
      z = s32[4]{0} constant({0, 0, 0, 0})
      ai = s32[4]{0} and(i, z)
      ROOT r = (pred[4]{0}, pred[4]{0}, s32[4]{0}) tuple(a, o, ai)
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: and(
        CHECK-NOT: or(
        CHECK:     ROOT r = (pred[4]{0}, pred[4]{0}, s32[4]{0}) tuple(fb, t, z)
    """)
    check_values(text)


def test_same_operand_idempotent_ops():
    text = """
    HloModule m
    ENTRY e {
      x = f32[4]{0} parameter(0)
      a = f32[4]{0} maximum(x, x)
      b = f32[4]{0} minimum(a, a)
      p = pred[4]{0} parameter(1)
      c = pred[4]{0} and(p, p)
      d = pred[4]{0} or(c, c)
      ROOT r = (f32[4]{0}, pred[4]{0}) tuple(b, d)
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, "CHECK: ROOT r = (f32[4]{0}, pred[4]{0}) tuple(x, p)")
    check_values(text)


@pytest.mark.parametrize("op,t", [("negate", "f32"), ("negate", "s8"), ("not", "pred"), ("not", "u32")])
def test_involutions(op, t):
    text = f"""
    HloModule m
    ENTRY e {{
      x = {t}[5]{{0}} parameter(0)
      a = {t}[5]{{0}} {op}(x)
      b = {t}[5]{{0}} {op}(a)
      ROOT r = ({t}[5]{{0}}) tuple(b)
    }}"""
    out = simplify(text, expect_changed=True)
    filecheck(out, f"""
        CHECK-NOT: {op}(
        CHECK: ROOT r = ({t}[5]{{0}}) tuple(x)
    """)
    check_values(text)


def test_single_negate_stays():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[5]{0} parameter(0)
      ROOT a = f32[5]{0} negate(x)
    }""", expect_changed=False)
    filecheck(out, "CHECK: ROOT a = f32[5]{0} negate(x)")


# ---------------------------------------------------------------------------
# select
# ---------------------------------------------------------------------------

def test_select_with_constant_predicate():
    text = """
    HloModule m
    ENTRY e {
      a = f32[3]{0} parameter(0)
      b = f32[3]{0} parameter(1)
      t = pred[] constant(true)
      s1 = f32[3]{0} select(t, a, b)
      f = pred[] constant(false)
      fb = pred[3]{0} broadcast(f), dimensions={}
      s2 = f32[3]{0} select(fb, a, b)
      ROOT r = (f32[3]{0}, f32[3]{0}) tuple(s1, s2)
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: select
        CHECK: ROOT r = (f32[3]{0}, f32[3]{0}) tuple(a, b)
    """)
    check_values(text)


def test_select_of_same_value_and_mixed_predicate():
    out = simplify("""
    HloModule m
    ENTRY e {
      a = f32[3]{0} parameter(0)
      p = pred[3]{0} parameter(1)
      s = f32[3]{0} select(p, a, a)
      m = pred[3]{0} constant({1, 0, 1})
      b = f32[3]{0} negate(a)
      s2 = f32[3]{0} select(m, s, b)
      ROOT r = (f32[3]{0}) tuple(s2)
    }""", expect_changed=True)
    filecheck(out, """
        CHECK: s2 = f32[3]{0} select(m, a, b)
    """)


# ---------------------------------------------------------------------------
# reshape, transpose, broadcast, copy, convert
# ---------------------------------------------------------------------------

def test_reshape_of_reshape_and_to_same_shape():
    text = """
    HloModule m
    ENTRY e {
      x = f32[2,3,4]{2,1,0} parameter(0)
      a = f32[6,4]{1,0} reshape(x)
      b = f32[24]{0} reshape(a)
      c = f32[4,6]{1,0} reshape(b)
      n = f32[4,6]{1,0} negate(c)
      d = f32[24]{0} reshape(x)
      e = f32[2,3,4]{2,1,0} reshape(d)
      m = f32[2,3,4]{2,1,0} negate(e)
      ROOT r = (f32[4,6]{1,0}, f32[2,3,4]{2,1,0}) tuple(n, m)
    }"""
    out = simplify(text, expect_changed=True)
    filecheck(out, """
        CHECK:     x = f32[2,3,4]{2,1,0} parameter(0)
        CHECK:     [[R:[^ ]+]] = f32[4,6]{1,0} reshape(x)
        CHECK:     n = f32[4,6]{1,0} negate([[R]])
        CHECK:     m = f32[2,3,4]{2,1,0} negate(x)
        CHECK-NOT: reshape
    """)
    check_values(text)


def test_layout_changing_reshape_at_root_is_kept():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      ROOT r = f32[2,3]{0,1} reshape(x)
    }""", expect_changed=False)
    filecheck(out, "CHECK: ROOT r = f32[2,3]{0,1} reshape(x)")


def test_layout_changing_reshape_in_a_tuple_is_kept():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      r = f32[2,3]{0,1} reshape(x)
      ROOT t = (f32[2,3]{0,1}) tuple(r)
    }""", expect_changed=False)
    filecheck(out, "CHECK: r = f32[2,3]{0,1} reshape(x)")


def test_layout_changing_reshape_feeding_elementwise_goes():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      r = f32[2,3]{0,1} reshape(x)
      ROOT n = f32[2,3]{1,0} negate(r)
    }""", expect_changed=True)
    filecheck(out, """
        CHECK-NOT: reshape
        CHECK: ROOT n = f32[2,3]{1,0} negate(x)
    """)


def test_same_shape_reshape_at_root_goes():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      n = f32[2,3]{1,0} negate(x)
      ROOT r = f32[2,3]{1,0} reshape(n)
    }""", expect_changed=True)
    filecheck(out, "CHECK: ROOT n = f32[2,3]{1,0} negate(x)")


def test_transposes():
    text = """
    HloModule m
    ENTRY e {
      x = f32[2,3,4]{2,1,0} parameter(0)
      a = f32[3,4,2]{2,1,0} transpose(x), dimensions={1,2,0}
      b = f32[4,3,2]{2,1,0} transpose(a), dimensions={1,0,2}
      nb = f32[4,3,2]{2,1,0} negate(b)
      c = f32[2,3,4]{2,1,0} transpose(a), dimensions={2,0,1}
      nc = f32[2,3,4]{2,1,0} negate(c)
      i = f32[2,3,4]{2,1,0} transpose(x), dimensions={0,1,2}
      ni = f32[2,3,4]{2,1,0} negate(i)
      ROOT r = (f32[4,3,2]{2,1,0}, f32[2,3,4]{2,1,0}, f32[2,3,4]{2,1,0}) tuple(nb, nc, ni)
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK:     [[T:[^ ]+]] = f32[4,3,2]{2,1,0} transpose(x), dimensions={2,1,0}
        CHECK:     nb = f32[4,3,2]{2,1,0} negate([[T]])
        CHECK:     nc = f32[2,3,4]{2,1,0} negate(x)
        CHECK:     ni = f32[2,3,4]{2,1,0} negate(x)
    """)
    assert out.count("transpose(") == 1
    check_values(text)


def test_layout_changing_identity_transpose_at_root_is_kept():
    # XLA's way of writing a physical transpose: same logical array, new layout.
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[4,5]{1,0} parameter(0)
      ROOT t = f32[4,5]{0,1} transpose(x), dimensions={0,1}
    }""", expect_changed=False)
    filecheck(out, "CHECK: ROOT t = f32[4,5]{0,1} transpose(x), dimensions={0,1}")


def test_broadcasts():
    text = """
    HloModule m
    ENTRY e {
      x = f32[3]{0} parameter(0)
      a = f32[3,4]{1,0} broadcast(x), dimensions={0}
      b = f32[2,3,4]{2,1,0} broadcast(a), dimensions={1,2}
      nb = f32[2,3,4]{2,1,0} negate(b)
      s = f32[] parameter(1)
      i = f32[] broadcast(s), dimensions={}
      same = f32[3]{0} broadcast(x), dimensions={0}
      ROOT r = (f32[2,3,4]{2,1,0}, f32[], f32[3]{0}) tuple(nb, i, same)
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK:     [[B:[^ ]+]] = f32[2,3,4]{2,1,0} broadcast(x), dimensions={1}
        CHECK:     nb = f32[2,3,4]{2,1,0} negate([[B]])
        CHECK:     ROOT r = {{.*}} tuple(nb, s, x)
    """)
    assert out.count("broadcast(") == 1
    check_values(text)


def test_broadcast_with_unsorted_dimensions_is_canonicalised():
    text = """
    HloModule m
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      b = f32[3,4,2]{2,1,0} broadcast(x), dimensions={2,0}
      ROOT n = f32[3,4,2]{2,1,0} negate(b)
    }"""
    out = simplify(text, expect_changed=True)
    filecheck(out, """
        CHECK: [[T:[^ ]+]] = f32[3,2]{1,0} transpose(x), dimensions={1,0}
        CHECK: [[B:[^ ]+]] = f32[3,4,2]{2,1,0} broadcast([[T]]), dimensions={0,2}
        CHECK: ROOT n = f32[3,4,2]{2,1,0} negate([[B]])
    """)
    check_values(text)


def test_sorted_broadcast_and_scalar_constant_broadcast_stay():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      b = f32[2,4,3]{2,1,0} broadcast(x), dimensions={0,2}
      c = f32[] constant(2)
      cb = f32[2,4,3]{2,1,0} broadcast(c), dimensions={}
      ROOT m = f32[2,4,3]{2,1,0} multiply(b, cb)
    }""", expect_changed=False)
    filecheck(out, """
        CHECK: b = f32[2,4,3]{2,1,0} broadcast(x), dimensions={0,2}
        CHECK: cb = f32[2,4,3]{2,1,0} broadcast(c), dimensions={}
    """)


def test_reshape_and_transpose_of_scalar_broadcast():
    text = """
    HloModule m
    ENTRY e {
      s = f32[] parameter(0)
      b = f32[2,6]{1,0} broadcast(s), dimensions={}
      r = f32[3,4]{1,0} reshape(b)
      t = f32[6,2]{1,0} transpose(b), dimensions={1,0}
      ROOT o = (f32[3,4]{1,0}, f32[6,2]{1,0}) tuple(r, t)
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: reshape
        CHECK-NOT: transpose
        CHECK: [[R:[^ ]+]] = f32[3,4]{1,0} broadcast(s), dimensions={}
        CHECK: [[T:[^ ]+]] = f32[6,2]{1,0} broadcast(s), dimensions={}
        CHECK: ROOT o = {{.*}} tuple([[R]], [[T]])
    """)
    check_values(text)


def test_copy_and_convert():
    text = """
    HloModule m
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      c = f32[2,3]{1,0} copy(x)
      k = f32[2,3]{1,0} convert(c)
      n = f32[2,3]{1,0} negate(k)
      l = f32[2,3]{0,1} copy(x)
      i = s32[2,3]{1,0} convert(x)
      ROOT r = (f32[2,3]{1,0}, f32[2,3]{0,1}, s32[2,3]{1,0}) tuple(n, l, i)
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK: n = f32[2,3]{1,0} negate(x)
        CHECK: l = f32[2,3]{0,1} copy(x)
        CHECK: i = s32[2,3]{1,0} convert(x)
    """)
    assert out.count("copy(") == 1 and out.count("convert(") == 1
    check_values(text)


# ---------------------------------------------------------------------------
# slice, pad, concatenate
# ---------------------------------------------------------------------------

def test_whole_slice_pad_nothing_and_single_concatenate():
    text = """
    HloModule m
    ENTRY e {
      x = f32[4,6]{1,0} parameter(0)
      s = f32[4,6]{1,0} slice(x), slice={[0:4], [0:6]}
      z = f32[] constant(0)
      p = f32[4,6]{1,0} pad(s, z), padding=0_0x0_0
      c = f32[4,6]{1,0} concatenate(p), dimensions={0}
      ROOT n = f32[4,6]{1,0} negate(c)
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: slice
        CHECK-NOT: pad
        CHECK-NOT: concatenate
        CHECK: ROOT n = f32[4,6]{1,0} negate(x)
    """)
    check_values(text)


def test_partial_slice_real_pad_and_two_way_concatenate_stay():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[4,6]{1,0} parameter(0)
      s = f32[4,5]{1,0} slice(x), slice={[0:4], [1:6]}
      z = f32[] constant(0)
      p = f32[5,5]{1,0} pad(s, z), padding=1_0x0_0
      c = f32[9,5]{1,0} concatenate(p, s), dimensions={0}
      ROOT n = f32[9,5]{1,0} negate(c)
    }""", expect_changed=False)
    filecheck(out, """
        CHECK: slice(x)
        CHECK: pad(s, z)
        CHECK: concatenate(p, s)
    """)


def test_slice_of_slice():
    text = """
    HloModule m
    ENTRY e {
      x = f32[20,9]{1,0} parameter(0)
      a = f32[8,9]{1,0} slice(x), slice={[3:19:2], [0:9]}
      b = f32[3,4]{1,0} slice(a), slice={[1:8:3], [2:9:2]}
      ROOT n = f32[3,4]{1,0} negate(b)
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK: [[S:[^ ]+]] = f32[3,4]{1,0} slice(x), slice={[5:18:6], [2:9:2]}
        CHECK: ROOT n = f32[3,4]{1,0} negate([[S]])
    """)
    assert out.count("slice(") == 1
    before, after = parse(text), xlac.parse_hlo(out)
    x = np.arange(180, dtype=np.float32).reshape(20, 9)
    assert_same_values(xlac.evaluate(after, x), xlac.evaluate(before, x))


# ---------------------------------------------------------------------------
# dot of transposes, reduce over no dimensions
# ---------------------------------------------------------------------------

def test_dot_of_transposed_lhs_and_rhs():
    text = """
    HloModule m
    ENTRY e {
      a = f32[5,3]{1,0} parameter(0)
      b = f32[4,5]{1,0} parameter(1)
      at = f32[3,5]{1,0} transpose(a), dimensions={1,0}
      bt = f32[5,4]{1,0} transpose(b), dimensions={1,0}
      ROOT d = f32[3,4]{1,0} dot(at, bt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: transpose
        CHECK: ROOT {{.*}} = f32[3,4]{1,0} dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
    """)
    before, after = parse(text), xlac.parse_hlo(out)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)]
    np.testing.assert_allclose(xlac.evaluate(after, *args), xlac.evaluate(before, *args), rtol=1e-6)


def test_dot_of_transpose_with_batch_dims():
    text = """
    HloModule m
    ENTRY e {
      a = f32[3,2,4]{2,1,0} parameter(0)
      b = f32[2,4,5]{2,1,0} parameter(1)
      at = f32[2,3,4]{2,1,0} transpose(a), dimensions={1,0,2}
      ROOT d = f32[2,3,5]{2,1,0} dot(at, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: transpose
        CHECK: dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
    """)
    before, after = parse(text), xlac.parse_hlo(out)
    rng = np.random.default_rng(2)
    args = [rng.standard_normal((3, 2, 4)).astype(np.float32), rng.standard_normal((2, 4, 5)).astype(np.float32)]
    np.testing.assert_allclose(xlac.evaluate(after, *args), xlac.evaluate(before, *args), rtol=1e-6)


def test_dot_of_transpose_that_reorders_free_dims_is_kept():
    out = simplify("""
    HloModule m
    ENTRY e {
      a = f32[2,3,4]{2,1,0} parameter(0)
      b = f32[4,5]{1,0} parameter(1)
      at = f32[3,2,4]{2,1,0} transpose(a), dimensions={1,0,2}
      ROOT d = f32[3,2,5]{2,1,0} dot(at, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
    }""", expect_changed=False)
    filecheck(out, "CHECK: ROOT d = f32[3,2,5]{2,1,0} dot(at, b)")


def test_reduce_over_no_dimensions_becomes_elementwise():
    text = """
    HloModule m
    sub {
      acc = f32[] parameter(0)
      x = f32[] parameter(1)
      ROOT d = f32[] subtract(x, acc)
    }
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      init = f32[] constant(0.5)
      ROOT r = f32[2,3]{1,0} reduce(x, init), dimensions={}, to_apply=sub
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: reduce(
        CHECK: [[B:[^ ]+]] = f32[2,3]{1,0} broadcast(init), dimensions={}
        CHECK: ROOT {{.*}} = f32[2,3]{1,0} subtract(x, [[B]])
    """)
    check_values(text)


def test_reduce_with_dimensions_stays():
    out = simplify("""
    HloModule m
    add {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      ROOT s = f32[] add(a, b)
    }
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      init = f32[] constant(0)
      ROOT r = f32[2]{0} reduce(x, init), dimensions={1}, to_apply=add
    }""", expect_changed=False)
    filecheck(out, "CHECK: ROOT r = f32[2]{0} reduce(x, init), dimensions={1}, to_apply=add")


# ---------------------------------------------------------------------------
# every computation, not only the entry
# ---------------------------------------------------------------------------

def test_called_computations_are_simplified_too():
    text = """
    HloModule m
    red {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      one = f32[] constant(1)
      bb = f32[] multiply(b, one)
      nb = f32[] negate(bb)
      nnb = f32[] negate(nb)
      ROOT s = f32[] add(a, nnb)
    }
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      init = f32[] constant(0)
      ROOT r = f32[2]{0} reduce(x, init), dimensions={1}, to_apply=red
    }"""
    out = simplify(text, dce=True, expect_changed=True)
    filecheck(out, """
        CHECK:      red {
        CHECK-NEXT:   a = f32[] parameter(0)
        CHECK-NEXT:   b = f32[] parameter(1)
        CHECK-NEXT:   ROOT s = f32[] add(a, b)
        CHECK-NEXT: }
    """)
    check_values(text)


def test_entry_root_replaced_by_parameter_keeps_signature():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[2,3]{0,1} parameter(0)
      n = f32[2,3]{0,1} negate(x)
      ROOT m = f32[2,3]{0,1} negate(n)
    }""", dce=True, expect_changed=True)
    filecheck(out, """
        CHECK: entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}
        CHECK: ROOT x = f32[2,3]{0,1} parameter(0)
    """)


def test_root_replacement_with_other_layout_is_refused():
    out = simplify("""
    HloModule m
    ENTRY e {
      x = f32[2,3]{1,0} parameter(0)
      n = f32[2,3]{1,0} negate(x)
      ROOT m = f32[2,3]{0,1} negate(n)
    }""", expect_changed=False)
    filecheck(out, "CHECK: ROOT m = f32[2,3]{0,1} negate(n)")
