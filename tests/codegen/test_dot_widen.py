"""bf16 and f16 dots on the packed GEMM (``dot.library-gemm.widen``,
``dot.gemm.widen``): operands widened to f32 while packed, f32 accumulation,
one rounding to the result type.

Checked against the evaluator (which sums the products in f32 and rounds
once, as XLA:CPU does), with a bound of one unit in the last place of the
result type plus f32 reassociation error, for every combination of bf16,
f16 and f32 operands and result, a few layouts, fusion epilogues, threads,
the per-module GEMM against the library, and code for an AVX2 CPU.
"""
import itertools
import re

import numpy as np
import pytest

import xlac
from xlac.codegen import gemm, gemm_native
from xlac.codegen.compiler import lower
from xlac.codegen.kernels import dot as dot_kernel

@pytest.fixture(autouse=True)
def widened_bf16(monkeypatch):
    """The widened kernels also where the vdpbf16ps or AMX ones would run
    (``test_dot_native.py``, ``test_dot_amx.py``)."""
    monkeypatch.setattr(gemm_native, "BF16_KERNEL", False)
    monkeypatch.setattr(gemm_native, "AMX_KERNEL", False)


DTYPES = {"bf16": xlac.Shape(xlac.BF16, ()).dtype, "f16": np.float16, "f32": np.float32}
#: Relative size of one unit in the last place.
ULP = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10, "f32": 2.0 ** -23}
NARROW_COMBOS = [c for c in itertools.product(DTYPES, repeat=3) if c != ("f32", "f32", "f32")]


def module(lt, rt, ot, a_dims, b_dims, out_dims, dims, la="1,0", lb="1,0", lo="1,0", epilogue=""):
    shape = lambda t, d, l: f"{t}[{','.join(map(str, d))}]{{{l}}}"    # noqa: E731
    lines = [f"  a = {shape(lt, a_dims, la)} parameter(0)", f"  b = {shape(rt, b_dims, lb)} parameter(1)"]
    if epilogue:
        lines += [f"  d = {shape(ot, out_dims, lo)} dot(a, b), {dims}", epilogue]
    else:
        lines += [f"  ROOT d = {shape(ot, out_dims, lo)} dot(a, b), {dims}"]
    return "HloModule m\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


MATMUL = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"


def inputs(lt, rt, a_dims, b_dims, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, a_dims).astype(DTYPES[lt]), rng.uniform(-1, 1, b_dims).astype(DTYPES[rt]))


def check(text, ot, args, scale_k, **jit):
    """The JIT's result against the evaluator's: within one ulp of ``ot``
    plus f32 reassociation over ``scale_k`` products of size <= 1."""
    exe = xlac.jit(text, **jit)
    got = np.asarray(exe(*args)).astype(np.float64)
    want = np.asarray(xlac.evaluate(text, *args)).astype(np.float64)
    bound = ULP[ot] * np.abs(want) + 4e-7 * scale_k + 1e-30
    err = np.abs(got - want)
    assert np.all(err <= bound), f"max error {err.max()} (bound at it {bound.flat[err.argmax()]})"
    return exe, got


def kernel_of(text) -> str:
    notes = [str(d) for d in lower(xlac.parse_hlo(text)).hlo.diagnostics if d.source == "kernel-choice"]
    return notes


@pytest.mark.parametrize("lt,rt,ot", NARROW_COMBOS)
def test_every_type_combination_matches_the_evaluator(lt, rt, ot):
    m, k, n = 37, 70, 45
    text = module(lt, rt, ot, (m, k), (k, n), (m, n), MATMUL)
    exe, _ = check(text, ot, inputs(lt, rt, (m, k), (k, n)), k)
    # A packed GEMM, not the elemental loop.  Operands of two types are
    # converted to one first (``expanders.mixed_operand_types``, as XLA's
    # OperandUpcaster): bf16 x f32 runs the f32 GEMM.
    assert "xlac_gemm_" in exe.optimized_llvm_ir or "xlac.gemm.uk" in exe.optimized_llvm_ir
    if lt == rt != "f32":
        (note,) = kernel_of(text)
        assert re.match(r"kernel \S+: dot.library-gemm.widen \(", note) and "not dot.library-gemm: bf16/f16/f8/f4" in note


# (lhs layout, rhs layout, result layout): column-major A, a transposed B,
# a column-major result (computed transposed when the result is f32).
LAYOUTS = [("0,1", "1,0", "1,0"), ("1,0", "0,1", "1,0"), ("1,0", "1,0", "0,1"), ("0,1", "0,1", "0,1")]


@pytest.mark.parametrize("la,lb,lo", LAYOUTS)
@pytest.mark.parametrize("lt,rt,ot", [("bf16", "bf16", "bf16"), ("f16", "f16", "f32"), ("bf16", "f32", "f32")])
def test_layouts(lt, rt, ot, la, lb, lo):
    m, k, n = 70, 300, 53     # K over one K block of the 4 x 64 tile? no: 2 blocks of the 6 x 32 one
    text = module(lt, rt, ot, (m, k), (k, n), (m, n), MATMUL, la, lb, lo)
    check(text, ot, inputs(lt, rt, (m, k), (k, n), 1), k)


def test_batched_and_long_k_across_k_blocks():
    # K of several K blocks: C accumulates in f32 across them and is rounded once.
    dims = "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"
    text = module("bf16", "bf16", "bf16", (3, 40, 1100), (3, 1100, 70), (3, 40, 70), dims, "2,1,0", "2,1,0",
                  "2,1,0")
    check(text, "bf16", inputs("bf16", "bf16", (3, 40, 1100), (3, 1100, 70), 2), 1100)


@pytest.mark.parametrize("ot", ["bf16", "f16"])
def test_threads_and_the_module_gemm_give_the_library_bits(ot, monkeypatch):
    m, k, n = 260, 700, 300
    text = module(ot, ot, ot, (m, k), (k, n), (m, n), MATMUL)
    args = inputs(ot, ot, (m, k), (k, n), 3)
    _, one = check(text, ot, args, k, num_threads=1)
    _, two = check(text, ot, args, k, num_threads=2)
    monkeypatch.setattr(dot_kernel, "USE_LIBRARY", False)
    exe, own = check(text, ot, args, k, num_threads=2)
    assert "xlac_gemm_" not in exe.optimized_llvm_ir
    (note,) = kernel_of(text)
    assert note.startswith("kernel d: dot.gemm.widen (")
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, own)


def test_fusion_epilogues_see_the_rounded_dot():
    # bias + relu in bf16 (a kOutput fusion), and a bf16 dot converted to f32:
    # the epilogue must see the dot rounded to bf16 first.
    bias = ("  c = bf16[50] parameter(2)\n  bc = bf16[40,50]{1,0} broadcast(c), dimensions={1}\n"
            "  s = bf16[40,50]{1,0} add(d, bc)\n  z = bf16[] constant(0)\n"
            "  zb = bf16[40,50]{1,0} broadcast(z), dimensions={}\n  ROOT r = bf16[40,50]{1,0} maximum(s, zb)")
    text = module("bf16", "bf16", "bf16", (40, 90), (90, 50), (40, 50), MATMUL, epilogue=bias)
    a, b = inputs("bf16", "bf16", (40, 90), (90, 50), 4)
    c = np.linspace(-1, 1, 50).astype(DTYPES["bf16"])
    check(text, "bf16", (a, b, c), 90)
    conv = "  ROOT r = f32[40,50]{1,0} convert(d)"
    text = module("bf16", "bf16", "bf16", (40, 90), (90, 50), (40, 50), MATMUL, epilogue=conv)
    exe, got = check(text, "bf16", (a, b), 90)
    np.testing.assert_array_equal(got, got.astype(DTYPES["bf16"]).astype(np.float64))


def test_matrix_vector_products_of_halves_keep_the_elemental_loop():
    text = module("bf16", "bf16", "bf16", (1, 64), (64, 30), (1, 30), MATMUL)
    check(text, "bf16", inputs("bf16", "bf16", (1, 64), (64, 30)), 64)
    (note,) = kernel_of(text)
    assert note.startswith("kernel d: loop (") and "a matrix-vector product of bf16/f16" in note


@pytest.mark.parametrize("f16c", [True, False])
def test_avx2_code_and_f16_without_f16c(avx2_target, f16c, monkeypatch):
    avx2_target.require_runnable()
    monkeypatch.setattr(gemm, "has_f16c", lambda: f16c)
    # Without F16C the packing converts f16 with integer ops; the module's
    # own GEMM (no library variant, whose cache key does not see the patch).
    monkeypatch.setattr(dot_kernel, "USE_LIBRARY", f16c)
    for lt, rt, ot in [("f16", "f16", "f16"), ("bf16", "f16", "f32")]:
        text = module(lt, rt, ot, (30, 90), (90, 70), (30, 70), MATMUL, "0,1", "1,0", "1,0")
        a, b = inputs(lt, rt, (30, 90), (90, 70), 5)
        a.flat[:3] = [6e-5, -3e-6, 0]          # f16 subnormals and zero
        check(text, ot, (a, b), 90)


def test_layout_assignment_copies_no_operand_of_a_packed_half_product():
    # The packing reads any layout: a row-major B (K major) is not copied
    # into a contracting-minor layout, as it is for the elemental loop.
    text = module("bf16", "bf16", "bf16", (64, 100), (100, 80), (64, 80), MATMUL)
    exe, _ = check(text, "bf16", inputs("bf16", "bf16", (64, 100), (100, 80)), 100)
    assert "relayout" not in exe.optimized_hlo.to_text()


#: The 8- and 4-bit floats: widened on the same GEMM (one element at a time while packed).
SMALL_FLOATS = ["f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e3m4", "f8e4m3",
                "f8e8m0fnu", "f4e2m1fn"]


@pytest.mark.parametrize("t", SMALL_FLOATS)
@pytest.mark.parametrize("ot", ["bf16", "f32"])
def test_f8_and_f4_dots_run_on_the_gemm(t, ot):
    # The library variant's symbol names its operand types; a name its parser did not
    # know left the variant unloaded and the call jumped to address 0.
    m, k, n = 40, 33, 50
    layouts = dict(la="0,1", lb="0,1")          # column-major operands, as XLA's f8 tests have them
    text = module(t, t, ot, (m, k), (k, n), (m, n), MATMUL, **layouts)
    dtype = xlac.Shape(xlac.PrimitiveType(t), ()).dtype
    rng = np.random.default_rng(1)
    args = [np.asfortranarray(rng.uniform(0.1, 2, d)).astype(dtype) for d in ((m, k), (k, n))]
    exe, _ = check(text, ot, args, 4 * k)
    assert "xlac_gemm_" in exe.optimized_llvm_ir
    (note,) = kernel_of(text)
    assert re.match(r"kernel \S+: dot.library-gemm.widen \(", note), note
