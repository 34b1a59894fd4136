"""Layout assignment: operands of elemental dots (integer, complex,
matrix-vector products of halves) get contracting-minor layouts; f32/f64 dots
and bf16/f16 matrix products (packed GEMMs, any layout) are left alone; the
entry signature never changes."""
import numpy as np

import xlac
from xlac.passes.layout_assignment import LayoutAssignment

from passtest import filecheck, run_pass


def dot_module(m, k, n, rhs_producer="", dt="s32"):
    rhs = "w"
    body = ""
    if rhs_producer:
        body = f"  wn = {dt}[{k},{n}]{{1,0}} {rhs_producer}(w)\n"
        rhs = "wn"
    return (f"HloModule m\n\nENTRY e {{\n  x = {dt}[{m},{k}]{{1,0}} parameter(0)\n"
            f"  w = {dt}[{k},{n}]{{1,0}} parameter(1)\n{body}"
            f"  ROOT d = {dt}[{m},{n}]{{1,0}} dot(x, {rhs}), lhs_contracting_dims={{1}}, "
            f"rhs_contracting_dims={{0}}\n}}\n")


def test_parameter_operand_is_copied_into_a_contracting_minor_layout():
    out = run_pass(LayoutAssignment(), dot_module(64, 128, 96), expect_changed=True)
    filecheck(out, """
    CHECK: w.relayout = s32[128,96]{0,1} copy(w)
    CHECK: ROOT d = s32[64,96]{1,0} dot(x, w.relayout)
    """)


def test_producer_takes_the_layout_without_a_copy():
    out = run_pass(LayoutAssignment(), dot_module(64, 128, 96, "negate"), expect_changed=True)
    filecheck(out, """
    CHECK: wn = s32[128,96]{0,1} negate(w)
    CHECK-NOT: copy(
    """)


def test_small_or_rarely_reused_operands_are_left_alone():
    run_pass(LayoutAssignment(), dot_module(2, 128, 96), expect_changed=False)   # reused twice only
    run_pass(LayoutAssignment(), dot_module(64, 8, 8), expect_changed=False)     # 64 elements


def test_packed_gemm_operands_are_left_alone():
    """f32 and f64 dots pack their operands from any layout: no copies, no relayouts."""
    for dt in ("f32", "f64", "bf16", "f16"):
        run_pass(LayoutAssignment(), dot_module(64, 128, 96, dt=dt), expect_changed=False)
        run_pass(LayoutAssignment(), dot_module(64, 128, 96, "negate", dt=dt), expect_changed=False)


def test_matrix_vector_products_of_halves_still_get_contracting_minor_operands():
    out = run_pass(LayoutAssignment(), dot_module(1, 128, 96, "negate", dt="bf16"), expect_changed=True)
    filecheck(out, "CHECK: wn = bf16[128,96]{0,1} negate(w)")


def test_results_unchanged():
    rng = np.random.default_rng(0)
    x = rng.integers(-5, 5, (64, 128)).astype(np.int32)
    w = rng.integers(-5, 5, (128, 96)).astype(np.int32)
    np.testing.assert_array_equal(xlac.jit(dot_module(64, 128, 96, "negate"))(x, w), x @ -w)
    np.testing.assert_array_equal(xlac.jit(dot_module(64, 128, 96))(x, w), x @ w)
    xf, wf = x.astype(np.float32), w.astype(np.float32)
    text = dot_module(64, 128, 96, "negate", dt="f32")
    np.testing.assert_allclose(xlac.jit(text)(xf, wf), xf @ -wf, rtol=1e-5, atol=1e-4)
