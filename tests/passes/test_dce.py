"""DCE: unused side-effect-free instructions and uncalled computations go;
roots, parameters and side effects stay."""
from passtest import filecheck, run_pass
from xlac.passes.dce import DCE


def test_removes_dead_instructions_keeps_parameters():
    out = run_pass(DCE(), """
    HloModule m
    ENTRY e {
      x = f32[4]{0} parameter(0)
      unused = f32[4]{0} parameter(1)
      d1 = f32[4]{0} exponential(x)
      d2 = f32[4]{0} add(d1, x)
      ROOT n = f32[4]{0} negate(x)
    }""", expect_changed=True)
    filecheck(out, """
        CHECK: x = f32[4]{0} parameter(0)
        CHECK: unused = f32[4]{0} parameter(1)
        CHECK-NOT: exponential
        CHECK-NOT: add
        CHECK: ROOT n = f32[4]{0} negate(x)
    """)


def test_keeps_side_effects_and_removes_uncalled_computations():
    out = run_pass(DCE(), """
    HloModule m
    orphan {
      a = f32[] parameter(0)
      ROOT n = f32[] negate(a)
    }
    add {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      ROOT s = f32[] add(a, b)
    }
    ENTRY e {
      x = f32[4]{0} parameter(0)
      z = f32[] constant(0)
      dead_reduce = f32[] reduce(x, z), dimensions={0}, to_apply=add
      cc = f32[4]{0} custom-call(x), custom_call_target="log_it"
      lo = f32[] constant(0)
      hi = f32[] constant(1)
      r = f32[4]{0} rng(lo, hi), distribution=rng_uniform
      ROOT n = f32[4]{0} negate(x)
    }""", expect_changed=True)
    filecheck(out, """
        CHECK-NOT: orphan
        CHECK-NOT: add
        CHECK: custom-call(x)
        CHECK: rng(lo, hi)
        CHECK-NOT: reduce
    """)


def test_nothing_to_do():
    run_pass(DCE(), """
    HloModule m
    ENTRY e {
      x = f32[4]{0} parameter(0)
      ROOT n = f32[4]{0} negate(x)
    }""", expect_changed=False)


def test_dead_instructions_in_called_computations():
    out = run_pass(DCE(), """
    HloModule m
    add {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      junk = f32[] multiply(a, b)
      ROOT s = f32[] add(a, b)
    }
    ENTRY e {
      x = f32[4]{0} parameter(0)
      z = f32[] constant(0)
      ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add
    }""", expect_changed=True)
    filecheck(out, """
        CHECK: add {
        CHECK-NOT: multiply
        CHECK: ROOT r = f32[] reduce(x, z)
    """)
