"""TupleSimplifier: get-tuple-element of tuple, tuple of all get-tuple-elements;
TupleConstantSplitter: tuple constants become tuples of array constants."""
import numpy as np
import pytest
from passtest import filecheck, run_pass

import xlac
from xlac.passes.tuple_simplifier import TupleConstantSplitter, TupleSimplifier


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


# -- TupleConstantSplitter (issue 12, item 3: a tuple constant at the root crashed
#    buffer assignment; a nested one, the copy emitter) ------------------------------

def test_tuple_constant_becomes_a_tuple_of_array_constants():
    out = run_pass(TupleConstantSplitter(), """
    HloModule m
    ENTRY e {
      ROOT c = (f32[2]{0}, (s32[], pred[])) constant(({1, 2}, (3, true)))
    }""", expect_changed=True)
    filecheck(out, """
        CHECK-DAG: [[A:[\\w.]+]] = f32[2]{0} constant({1, 2})
        CHECK-DAG: [[B:[\\w.]+]] = s32[] constant(3)
        CHECK-DAG: [[C:[\\w.]+]] = pred[] constant(true)
        CHECK-DAG: [[T:[\\w.]+]] = (s32[], pred[]) tuple([[B]], [[C]])
        CHECK:     ROOT {{.*}} = (f32[2]{0}, (s32[], pred[])) tuple([[A]], [[T]])
        CHECK-NOT: constant((
    """)


def test_array_constants_are_left_alone():
    run_pass(TupleConstantSplitter(), """
    HloModule m
    ENTRY e {
      ROOT c = f32[2]{0} constant({1, 2})
    }""", expect_changed=False)


TUPLE_CONSTANTS = {
    "root": ("HloModule m\nENTRY e {\n ROOT c = (f32[], s32[]) constant((1, 2))\n}",
             (np.float32(1), np.int32(2))),
    "nested": ("HloModule m\nENTRY e {\n ROOT c = (((f32[]))) constant((((1))))\n}",
               (((np.float32(1),),),)),
    "used_and_returned": ("""HloModule m
ENTRY e {
  c = (f32[2], s32[]) constant(({1, 2}, 7))
  g = f32[2] get-tuple-element(c), index=0
  ROOT t = (f32[2], (f32[2], s32[])) tuple(g, c)
}""", (np.array([1, 2], np.float32), (np.array([1, 2], np.float32), np.int32(7)))),
    "while_init": ("""HloModule m
body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[2] add(v, v)
  ROOT t = (s32[], f32[2]) tuple(j, w)
}
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  c = (s32[], f32[2]) constant((0, {1, 2}))
  ROOT w = (s32[], f32[2]) while(c), condition=cond, body=body
}""", (np.int32(3), np.array([8, 16], np.float32))),
}


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("name", sorted(TUPLE_CONSTANTS))
def test_tuple_constants_compile(name, optimize):
    text, want = TUPLE_CONSTANTS[name]

    def check(got, want):
        if isinstance(want, tuple):
            assert isinstance(got, tuple) and len(got) == len(want)
            for g, w in zip(got, want):
                check(g, w)
        else:
            np.testing.assert_array_equal(got, want)
            assert np.asarray(got).dtype == np.asarray(want).dtype

    check(xlac.evaluate(text), want)
    check(xlac.jit(text, optimize=optimize)(), want)
