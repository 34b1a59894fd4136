"""CSE: identical instructions merge; other layouts, other constants (even
-0.0 vs 0.0), side effects and parameters do not."""
from passtest import filecheck, run_pass
from xlac.passes.cse import CSE


def cse(text, **kw):
    return run_pass(CSE(), text, **kw)


def test_identical_expressions_merge_in_one_run():
    out = cse("""
    HloModule m
    ENTRY e {
      x = f32[4]{0} parameter(0)
      y = f32[4]{0} parameter(1)
      a1 = f32[4]{0} add(x, y)
      e1 = f32[4]{0} exponential(a1)
      a2 = f32[4]{0} add(x, y)
      e2 = f32[4]{0} exponential(a2)
      ROOT m = f32[4]{0} multiply(e1, e2)
    }""", expect_changed=True)
    filecheck(out, """
        CHECK: a1 = f32[4]{0} add(x, y)
        CHECK: e1 = f32[4]{0} exponential(a1)
        CHECK-NOT: add
        CHECK: ROOT m = f32[4]{0} multiply(e1, e1)
    """)


def test_operand_order_attributes_and_layout_matter():
    out = cse("""
    HloModule m
    ENTRY e {
      x = f32[2,2]{1,0} parameter(0)
      y = f32[2,2]{1,0} parameter(1)
      a = f32[2,2]{1,0} subtract(x, y)
      b = f32[2,2]{1,0} subtract(y, x)
      c = f32[2,2]{0,1} subtract(x, y)
      t1 = f32[2,2]{1,0} transpose(x), dimensions={1,0}
      t2 = f32[2,2]{1,0} transpose(x), dimensions={0,1}
      ROOT r = (f32[2,2]{1,0}, f32[2,2]{1,0}, f32[2,2]{0,1}, f32[2,2]{1,0}, f32[2,2]{1,0}) tuple(a, b, c, t1, t2)
    }""", expect_changed=False)
    filecheck(out, "CHECK: tuple(a, b, c, t1, t2)")


def test_metadata_is_ignored():
    out = cse("""
    HloModule m
    ENTRY e {
      x = f32[4]{0} parameter(0)
      a = f32[4]{0} negate(x), metadata={op_name="a"}
      b = f32[4]{0} negate(x), metadata={op_name="b"}
      ROOT r = (f32[4]{0}, f32[4]{0}) tuple(a, b)
    }""", expect_changed=True)
    filecheck(out, "CHECK: ROOT r = (f32[4]{0}, f32[4]{0}) tuple(a, a)")


def test_constants_merge_by_value_and_type():
    out = cse("""
    HloModule m
    ENTRY e {
      a = f32[] constant(1)
      b = f32[] constant(1)
      z = f32[] constant(0)
      nz = f32[] constant(-0)
      i = s32[] constant(1)
      v1 = f32[2]{0} constant({1, 2})
      v2 = f32[2]{0} constant({1, 2})
      ROOT r = (f32[], f32[], f32[], f32[], s32[], f32[2]{0}, f32[2]{0}) tuple(a, b, z, nz, i, v1, v2)
    }""", expect_changed=True)
    filecheck(out, "CHECK: tuple(a, a, z, nz, i, v1, v1)")


def test_side_effects_and_parameters_never_merge():
    out = cse("""
    HloModule m
    ENTRY e {
      p = f32[] parameter(0)
      q = f32[] parameter(1)
      lo = f32[] constant(0)
      hi = f32[] constant(1)
      r1 = f32[4]{0} rng(lo, hi), distribution=rng_uniform
      r2 = f32[4]{0} rng(lo, hi), distribution=rng_uniform
      c1 = f32[4]{0} custom-call(p), custom_call_target="foo"
      c2 = f32[4]{0} custom-call(p), custom_call_target="foo"
      e1 = f32[4]{0} constant({...})
      e2 = f32[4]{0} constant({...})
      ROOT r = (f32[], f32[], f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(p, q, r1, r2, c1, c2, e1, e2)
    }""", expect_changed=False)
    filecheck(out, "CHECK: tuple(p, q, r1, r2, c1, c2, e1, e2)")


def test_reduces_with_structurally_equal_reducers_merge():
    out = cse("""
    HloModule m
    region_0 {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      ROOT s = f32[] add(a, b)
    }
    region_1 {
      x = f32[] parameter(0)
      y = f32[] parameter(1)
      ROOT t = f32[] add(x, y)
    }
    region_2 {
      x = f32[] parameter(0)
      y = f32[] parameter(1)
      ROOT t = f32[] maximum(x, y)
    }
    ENTRY e {
      v = f32[4,5]{1,0} parameter(0)
      z = f32[] constant(0)
      r0 = f32[4]{0} reduce(v, z), dimensions={1}, to_apply=region_0
      r1 = f32[4]{0} reduce(v, z), dimensions={1}, to_apply=region_1
      r2 = f32[4]{0} reduce(v, z), dimensions={1}, to_apply=region_2
      ROOT r = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(r0, r1, r2)
    }""", dce=True, expect_changed=True)
    filecheck(out, """
        CHECK-NOT: region_1
        CHECK: ROOT r = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(r0, r0, r2)
    """)


def test_fused_cse_merges_the_copies_two_merged_fusions_hold():
    import xlac
    from xlac.passes.cse import FusedCSE
    module = xlac.parse_hlo("""
    HloModule m
    fused {
      p0 = u32[16]{0} parameter(0)
      p1 = u32[16]{0} parameter(1)
      a = u32[16]{0} add(p0, p1)
      b = u32[16]{0} add(p0, p1)
      x = u32[16]{0} xor(a, p1)
      y = u32[16]{0} xor(b, p1)
      ROOT t = (u32[16]{0}, u32[16]{0}) tuple(x, y)
    }
    ENTRY e {
      p = u32[16]{0} parameter(0)
      q = u32[16]{0} parameter(1)
      ROOT f = (u32[16]{0}, u32[16]{0}) fusion(p, q), kind=kLoop, calls=fused
    }""")
    assert FusedCSE().run(module)
    fused = module.entry.root.attrs["calls"]
    assert [i.opcode for i in fused.instructions].count("add") == 1
    assert [i.opcode for i in fused.instructions].count("xor") == 1
    assert FusedCSE().run(module) is False
