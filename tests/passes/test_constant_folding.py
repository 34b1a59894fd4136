"""ConstantFolding: what folds (also through chains, in called computations,
keeping layouts) and what must not (scalar broadcasts, iota, rng, big results,
elided constants, loops)."""
import numpy as np

import xlac
from passtest import assert_same_values, filecheck, parse, run_pass
from xlac.passes.constant_folding import ConstantFolding


def fold(text, **kw):
    return run_pass(ConstantFolding(), text, **kw)


def test_folds_elementwise_of_constants():
    out = fold("""
    HloModule m
    ENTRY e {
      a = f32[3]{0} constant({1, 2, 3})
      b = f32[3]{0} constant({10, 20, 30})
      s = f32[3]{0} add(a, b)
      p = f32[3]{0} parameter(0)
      ROOT r = f32[3]{0} multiply(p, s)
    }""", dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: add(
        CHECK: [[C:[^ ]+]] = f32[3]{0} constant({11, 22, 33})
        CHECK: ROOT r = f32[3]{0} multiply(p, [[C]])
    """)


def test_folds_a_whole_chain_in_one_run():
    out = fold("""
    HloModule m
    ENTRY e {
      a = s32[4]{0} constant({1, 2, 3, 4})
      b = s32[4]{0} negate(a)
      c = s32[4]{0} multiply(b, a)
      d = s32[2,2]{1,0} reshape(c)
      ROOT t = s32[2,2]{1,0} transpose(d), dimensions={1,0}
    }""", dce=True, expect_changed=True)
    filecheck(out, """
        CHECK:      ENTRY e {
        CHECK-NEXT:   ROOT {{.*}} = s32[2,2]{1,0} constant({ {-1, -9}, {-4, -16} })
        CHECK-NEXT: }
    """)


def test_folded_constant_keeps_the_layout():
    text = """
    HloModule m
    ENTRY e {
      a = f32[2,3]{1,0} constant({{1, 2, 3}, {4, 5, 6}})
      ROOT t = f32[3,2]{0,1} transpose(a), dimensions={1,0}
    }"""
    out = fold(text, dce=True, expect_changed=True)
    filecheck(out, "CHECK: ROOT {{.*}} = f32[3,2]{0,1} constant({ {1, 4}, {2, 5}, {3, 6} })")
    assert_same_values(xlac.evaluate(xlac.parse_hlo(out)), xlac.evaluate(parse(text)))
    # and the compiled code agrees (the literal is written out in the {0,1} layout)
    assert_same_values(xlac.jit(xlac.parse_hlo(out))(), xlac.evaluate(parse(text)))


def test_folds_reduce_and_in_called_computations():
    out = fold("""
    HloModule m
    add {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      two = f32[] constant(2)
      three = f32[] constant(3)
      six = f32[] multiply(two, three)
      s = f32[] add(a, b)
      ROOT r = f32[] add(s, six)
    }
    ENTRY e {
      x = f32[2,2]{1,0} constant({{1, 2}, {3, 4}})
      z = f32[] constant(0)
      folded = f32[2]{0} reduce(x, z), dimensions={1}, to_apply=add
      p = f32[2,2]{1,0} parameter(0)
      kept = f32[2]{0} reduce(p, z), dimensions={1}, to_apply=add
      ROOT r = (f32[2]{0}, f32[2]{0}) tuple(folded, kept)
    }""", dce=True, expect_changed=True)
    filecheck(out, """
        CHECK: add {
        CHECK-NOT: multiply
        CHECK: constant(6)
        CHECK: ENTRY e {
        CHECK: [[C:[^ ]+]] = f32[2]{0} constant({15, 19})
        CHECK: ROOT r = (f32[2]{0}, f32[2]{0}) tuple([[C]], kept)
    """)


def test_scalar_broadcast_iota_and_rng_are_not_folded():
    out = fold("""
    HloModule m
    ENTRY e {
      c = f32[] constant(1)
      b = f32[64,64]{1,0} broadcast(c), dimensions={}
      i = s32[8]{0} iota(), iota_dimension=0
      lo = f32[] constant(0)
      hi = f32[] constant(1)
      r = f32[8]{0} rng(lo, hi), distribution=rng_uniform
      ROOT t = (f32[64,64]{1,0}, s32[8]{0}, f32[8]{0}) tuple(b, i, r)
    }""", expect_changed=False)
    filecheck(out, """
        CHECK: broadcast(c)
        CHECK: iota()
        CHECK: rng(lo, hi)
        CHECK: ROOT t =
    """)


def test_small_broadcast_of_an_array_constant_folds_but_a_huge_one_does_not():
    vals = ", ".join(str(k) for k in range(300))
    out = fold(f"""
    HloModule m
    ENTRY e {{
      c = f32[300]{{0}} constant({{{vals}}})
      small = f32[300,2]{{1,0}} broadcast(c), dimensions={{0}}
      big = f32[300,300]{{1,0}} broadcast(c), dimensions={{0}}
      ROOT t = (f32[300,2]{{1,0}}, f32[300,300]{{1,0}}) tuple(small, big)
    }}""", dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: small = f32[300,2]{1,0} broadcast
        CHECK: big = f32[300,300]{1,0} broadcast(c), dimensions={0}
    """)


def test_elided_constants_are_not_folded():
    out = fold("""
    HloModule m
    ENTRY e {
      c = f32[4]{0} constant({...})
      ROOT n = f32[4]{0} negate(c)
    }""", expect_changed=False)
    filecheck(out, "CHECK: ROOT n = f32[4]{0} negate(c)")


def test_while_with_constant_operands_is_not_folded():
    out = fold("""
    HloModule m
    cond {
      s = s32[] parameter(0)
      ten = s32[] constant(10)
      ROOT lt = pred[] compare(s, ten), direction=LT
    }
    body {
      s = s32[] parameter(0)
      one = s32[] constant(1)
      ROOT n = s32[] add(s, one)
    }
    ENTRY e {
      z = s32[] constant(0)
      ROOT w = s32[] while(z), condition=cond, body=body
    }""", expect_changed=False)
    filecheck(out, "CHECK: ROOT w = s32[] while(z)")


def test_constant_folding_matches_the_evaluator():
    text = """
    HloModule m
    ENTRY e {
      a = f32[4]{0} constant({0.5, -0, 2, 1e30})
      b = f32[4]{0} exponential(a)
      c = f32[4]{0} multiply(b, b)
      p = f32[4]{0} parameter(0)
      ROOT r = f32[4]{0} add(p, c)
    }"""
    out = fold(text, dce=True, expect_changed=True)
    x = np.array([1, -0.0, np.nan, 3], np.float32)
    assert_same_values(xlac.evaluate(xlac.parse_hlo(out), x), xlac.evaluate(parse(text), x))
