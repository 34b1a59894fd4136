"""Layout assignment: dot operands get contracting-minor layouts; the entry
signature never changes."""
import numpy as np

import xlac
from xlac.passes.layout_assignment import LayoutAssignment

from passtest import filecheck, run_pass


def dot_module(m, k, n, rhs_producer=""):
    rhs = "w"
    body = ""
    if rhs_producer:
        body = f"  wn = f32[{k},{n}]{{1,0}} {rhs_producer}(w)\n"
        rhs = "wn"
    return (f"HloModule m\n\nENTRY e {{\n  x = f32[{m},{k}]{{1,0}} parameter(0)\n"
            f"  w = f32[{k},{n}]{{1,0}} parameter(1)\n{body}"
            f"  ROOT d = f32[{m},{n}]{{1,0}} dot(x, {rhs}), lhs_contracting_dims={{1}}, "
            f"rhs_contracting_dims={{0}}\n}}\n")


def test_parameter_operand_is_copied_into_a_contracting_minor_layout():
    out = run_pass(LayoutAssignment(), dot_module(64, 128, 96), expect_changed=True)
    filecheck(out, """
    CHECK: w.relayout = f32[128,96]{0,1} copy(w)
    CHECK: ROOT d = f32[64,96]{1,0} dot(x, w.relayout)
    """)


def test_producer_takes_the_layout_without_a_copy():
    out = run_pass(LayoutAssignment(), dot_module(64, 128, 96, "negate"), expect_changed=True)
    filecheck(out, """
    CHECK: wn = f32[128,96]{0,1} negate(w)
    CHECK-NOT: copy(
    """)


def test_small_or_rarely_reused_operands_are_left_alone():
    run_pass(LayoutAssignment(), dot_module(2, 128, 96), expect_changed=False)   # reused twice only
    run_pass(LayoutAssignment(), dot_module(64, 8, 8), expect_changed=False)     # 64 elements


def test_results_unchanged():
    text = dot_module(64, 128, 96, "negate")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    w = rng.standard_normal((128, 96)).astype(np.float32)
    np.testing.assert_allclose(xlac.jit(text)(x, w), x @ -w, rtol=1e-4, atol=1e-4)
    text = dot_module(64, 128, 96)
    np.testing.assert_allclose(xlac.jit(text)(x, w), x @ w, rtol=1e-4, atol=1e-4)
