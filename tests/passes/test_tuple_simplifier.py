"""TupleSimplifier: get-tuple-element of tuple, tuple of all get-tuple-elements."""
from passtest import filecheck, run_pass
from xlac.passes.tuple_simplifier import TupleSimplifier


def simplify(text, **kw):
    return run_pass(TupleSimplifier(), text, **kw)


def test_gte_of_tuple():
    out = simplify("""
    HloModule m
    ENTRY e {
      a = f32[2]{0} parameter(0)
      b = s32[3]{0} parameter(1)
      t = (f32[2]{0}, s32[3]{0}) tuple(a, b)
      g = s32[3]{0} get-tuple-element(t), index=1
      ROOT n = s32[3]{0} negate(g)
    }""", dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: tuple
        CHECK: ROOT n = s32[3]{0} negate(b)
    """)


def test_tuple_of_all_gtes_in_order_in_a_loop_body():
    out = simplify("""
    HloModule m
    body {
      s = (s32[], f32[4]{0}) parameter(0)
      i = s32[] get-tuple-element(s), index=0
      v = f32[4]{0} get-tuple-element(s), index=1
      ROOT t = (s32[], f32[4]{0}) tuple(i, v)
    }
    cond {
      s = (s32[], f32[4]{0}) parameter(0)
      ROOT f = pred[] constant(false)
    }
    ENTRY e {
      i = s32[] parameter(0)
      v = f32[4]{0} parameter(1)
      t = (s32[], f32[4]{0}) tuple(i, v)
      ROOT w = (s32[], f32[4]{0}) while(t), condition=cond, body=body
    }""", dce=True, expect_changed=True)
    filecheck(out, """
        CHECK:      body {
        CHECK-NEXT:   ROOT s = (s32[], f32[4]{0}) parameter(0)
        CHECK-NEXT: }
    """)


def test_partial_or_reordered_tuples_stay():
    out = simplify("""
    HloModule m
    body {
      s = (s32[], s32[]) parameter(0)
      a = s32[] get-tuple-element(s), index=0
      b = s32[] get-tuple-element(s), index=1
      ROOT t = (s32[], s32[]) tuple(b, a)
    }
    cond {
      s = (s32[], s32[]) parameter(0)
      ROOT f = pred[] constant(false)
    }
    ENTRY e {
      i = s32[] parameter(0)
      t = (s32[], s32[]) tuple(i, i)
      w = (s32[], s32[]) while(t), condition=cond, body=body
      g = s32[] get-tuple-element(w), index=0
      ROOT r = (s32[]) tuple(g)
    }""", expect_changed=False)
    filecheck(out, """
        CHECK: ROOT t = (s32[], s32[]) tuple(b, a)
        CHECK: ROOT r = (s32[]) tuple(g)
    """)


def test_gte_with_other_layout_at_root_is_kept():
    out = simplify("""
    HloModule m
    ENTRY e {
      a = f32[2,3]{0,1} parameter(0)
      t = (f32[2,3]{0,1}) tuple(a)
      ROOT g = f32[2,3]{1,0} get-tuple-element(t), index=0
    }""", expect_changed=False)
    filecheck(out, "CHECK: ROOT g = f32[2,3]{1,0} get-tuple-element(t), index=0")
