"""Fusion: HLO text in, fusion passes, HLO text out (checked with filecheck); and
the optimised pipeline against the unoptimised one."""
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import xlac
from xlac.codegen.compiler import check_supported, lower
from xlac.passes import fusion as fusion_pass
from xlac.passes.fusion import InstructionFusion
from xlac.passes.multi_output_fusion import MultiOutputFusion

from passtest import filecheck, run_pass

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks" / "hlo"
CORPUS = REPO / "tests" / "hlo_corpus"


def fused(text: str) -> str:
    return run_pass(InstructionFusion(), text)


def entry_fusions(module) -> list:
    return [i for i in module.entry.instructions if i.opcode == "fusion"]


ADD = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""


def test_elementwise_chain_is_one_loop_fusion():
    out = fused("""
    HloModule m
    ENTRY e {
      x = f32[8,16]{1,0} parameter(0)
      c = f32[] constant(2)
      cb = f32[8,16]{1,0} broadcast(c), dimensions={}
      m = f32[8,16]{1,0} multiply(x, cb)
      t = f32[8,16]{1,0} tanh(m)
      ROOT r = f32[8,16]{1,0} add(t, x)
    }""")
    filecheck(out, """
    CHECK: fused_r {
    CHECK-DAG: tanh(
    CHECK-DAG: multiply(
    CHECK-DAG: broadcast(
    CHECK: ROOT {{.*}} add(
    CHECK-LABEL: ENTRY e
    CHECK-NEXT: x = f32[8,16]{1,0} parameter(0)
    CHECK-NEXT: ROOT {{.*}} = f32[8,16]{1,0} fusion(x), kind=kLoop, calls=fused_r
    CHECK-NEXT: }
    """)


def test_expensive_producer_with_two_users_is_not_duplicated():
    module = xlac.parse_hlo("""
    HloModule m
    ENTRY e {
      x = f32[64]{0} parameter(0)
      y = f32[64]{0} parameter(1)
      ex = f32[64]{0} exponential(x)
      a = f32[64]{0} add(ex, y)
      b = f32[64]{0} multiply(ex, y)
      ROOT t = (f32[64]{0}, f32[64]{0}) tuple(a, b)
    }""")
    InstructionFusion().run(module)
    filecheck(module.to_text(), """
    CHECK-LABEL: ENTRY e
    CHECK: ex = f32[64]{0} exponential(x)
    """)
    assert any("not fused: ex" in str(n) and "2 users" in str(n) for n in module.diagnostics), \
        module.diagnostics
    assert all(d.source == "fusion" for d in module.diagnostics)


def test_cheap_producer_with_two_users_is_duplicated():
    out = fused("""
    HloModule m
    ENTRY e {
      x = f32[64]{0} parameter(0)
      y = f32[64]{0} parameter(1)
      n = f32[64]{0} negate(x)
      a = f32[64]{0} add(n, y)
      b = f32[64]{0} multiply(n, y)
      ROOT t = (f32[64]{0}, f32[64]{0}) tuple(a, b)
    }""")
    filecheck(out, """
    CHECK: negate(
    CHECK: negate(
    CHECK-LABEL: ENTRY e
    CHECK-NOT: negate(
    """)


def _pairwise_sums(levels: int) -> str:
    """A reduction tree over halves: each level adds the first and second
    halves of the last (two slices of it; jax's associative_scan takes the
    even and odd elements, strided slices, which fusion keeps out anyway)."""
    n = 1 << levels
    lines = [f"  v0 = f32[8,{n}]{{1,0}} parameter(0)"]
    for k in range(levels):
        m = n >> (k + 1)
        lines += [f"  e{k} = f32[8,{m}]{{1,0}} slice(v{k}), slice={{[0:8], [0:{m}]}}",
                  f"  o{k} = f32[8,{m}]{{1,0}} slice(v{k}), slice={{[0:8], [{m}:{2 * m}]}}",
                  f"  v{k + 1} = f32[8,{m}]{{1,0}} add(e{k}, o{k})"]
    lines[-1] = "  ROOT" + lines[-1][1:]
    return "HloModule m\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


def test_code_duplication_bounds_fusion():
    """A value read through slices of values read through slices is generated
    once per path (twice as often at every level): fusion stops where a
    producer would be generated more than MAX_CODE_DUPLICATION times (XLA's
    FusionNodeIndexingEvaluation), and the result stays the evaluator's."""
    text = _pairwise_sums(8)
    module = xlac.parse_hlo(text)
    InstructionFusion().run(module)
    fusions = entry_fusions(module)
    assert len(fusions) >= 2, module.to_text()
    for f in fusions:
        counts = fusion_pass._FusedIndex(f).emitted(f.attrs["calls"])
        worst = max(counts[id(i)] for i in f.attrs["calls"].instructions
                    if i.opcode not in ("parameter", "broadcast"))
        assert worst <= fusion_pass.MAX_CODE_DUPLICATION, (f.name, worst)
    assert any("generated" in str(n) and "times in the fusion" in str(n) for n in module.diagnostics)
    x = np.random.default_rng(0).standard_normal((8, 256)).astype(np.float32)
    np.testing.assert_allclose(xlac.jit(text)(x), xlac.evaluate(xlac.parse_hlo(text), x), rtol=1e-5, atol=1e-5)


COSINE = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  y = f32[48,32]{1,0} parameter(1)
  zero = f32[] constant(0)
  xx = f32[64,32]{1,0} multiply(x, x)
  nx = f32[64]{0} reduce(xx, zero), dimensions={1}, to_apply=add
  sx = f32[64]{0} sqrt(nx)
  yy = f32[48,32]{1,0} multiply(y, y)
  ny = f32[48]{0} reduce(yy, zero), dimensions={1}, to_apply=add
  sy = f32[48]{0} sqrt(ny)
  bx = f32[64,48]{1,0} broadcast(sx), dimensions={0}
  by = f32[64,48]{1,0} broadcast(sy), dimensions={1}
  n = f32[64,48]{1,0} multiply(bx, by)
  d = f32[64,48]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT c = f32[64,48]{1,0} divide(d, n)
}
"""


def test_a_products_epilogue_takes_no_reduction_read_along_a_row():
    """Cosine similarity: the rows' norms would be hoisted out of a loop
    fusion's inner loop, but a product's epilogue runs per element of its
    tiles: whichever comes first, the dot or the norms, the other stays out."""
    module = xlac.parse_hlo(COSINE)
    InstructionFusion().run(module)
    for f in entry_fusions(module):
        ops = {i.opcode for i in f.attrs["calls"].instructions}
        assert not ("dot" in ops and ({"reduce", "sqrt"} & ops)), module.to_text()
    assert any("would compute" in str(d) and "for every element" in str(d) for d in module.diagnostics)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((48, 32)).astype(np.float32)
    np.testing.assert_allclose(xlac.jit(COSINE)(x, y), xlac.evaluate(xlac.parse_hlo(COSINE), x, y),
                               rtol=1e-5, atol=1e-6)


SCAN_STEP = """HloModule m
ENTRY e {
  x = f32[16,64]{1,0} parameter(0)
  ev = f32[16,32]{1,0} slice(x), slice={[0:16], [0:64:2]}
  od = f32[16,32]{1,0} slice(x), slice={[0:16], [1:64:2]}
  s = f32[16,32]{1,0} add(ev, od)
  s2 = f32[16,16]{1,0} slice(s), slice={[0:16], [1:32:2]}
  s1 = f32[16,16]{1,0} slice(s), slice={[0:16], [0:32:2]}
  t = f32[16,16]{1,0} add(s1, s2)
  zero = f32[] constant(0)
  p1 = f32[16,32]{1,0} pad(t, zero), padding=0_0_0x0_1_1
  p2 = f32[16,32]{1,0} pad(t, zero), padding=0_0_0x1_0_1
  u = f32[16,32]{1,0} add(p1, p2)
  ROOT r = f32[16,32]{1,0} add(u, s)
}
"""


def test_interior_pads_and_strided_slices_of_shared_values_stay_out():
    """A scan step's shape (jax's associative_scan): the interior pads are
    their kernels' roots, and a strided slice of a value other users read
    leaves that value in a buffer rather than recomputing it."""
    module = xlac.parse_hlo(SCAN_STEP)
    InstructionFusion().run(module)
    notes = [str(d) for d in module.diagnostics]
    assert any("interior padding" in n for n in notes), notes
    assert any("strided slice of a value other users read" in n for n in notes), notes
    for f in entry_fusions(module):
        ops = [i.opcode for i in f.attrs["calls"].instructions]
        assert not ("pad" in ops and ops.count("add") > 1), module.to_text()
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    np.testing.assert_allclose(xlac.jit(SCAN_STEP)(x), xlac.evaluate(xlac.parse_hlo(SCAN_STEP), x),
                               rtol=1e-6, atol=1e-6)


def test_two_transposes_of_one_input_are_explained_not_fused():
    module = xlac.parse_hlo("""
    HloModule m
    ENTRY e {
      x = f32[32,32]{1,0} parameter(0)
      t = f32[32,32]{1,0} transpose(x), dimensions={1,0}
      n = f32[32,32]{1,0} negate(x)
      ROOT r = f32[32,32]{1,0} add(n, t)
    }""")
    InstructionFusion().run(module)
    assert any("not fused: t" in n and "two different index maps" in n for n in [str(d) for d in module.diagnostics]), [str(d) for d in module.diagnostics]
    filecheck(module.to_text(), """
    CHECK-LABEL: ENTRY e
    CHECK: transpose(x)
    """)


def _subtract_sum(axis: int) -> str:
    """``x - sum(x, axis)`` (broadcast back) for an f32[16,8] ``x``."""
    kept = 1 - axis
    return f"""
    HloModule m
    {ADD}
    ENTRY e {{
      x = f32[16,8]{{1,0}} parameter(0)
      z = f32[] constant(0)
      s = f32[{(16, 8)[kept]}]{{0}} reduce(x, z), dimensions={{{axis}}}, to_apply=add
      b = f32[16,8]{{1,0}} broadcast(s), dimensions={{{kept}}}
      ROOT r = f32[16,8]{{1,0}} subtract(x, b)
    }}"""


def test_column_reduction_broadcast_along_rows_is_not_recomputed():
    """x - mean over axis 0: the mean varies along the inner loop, so fusing it
    would recompute a column sum per element: refused, with the reason."""
    text = _subtract_sum(axis=0)
    module = xlac.parse_hlo(text)
    InstructionFusion().run(module)
    assert any("not fused: s" in n and "recomputed" in n for n in [str(d) for d in module.diagnostics]), [str(d) for d in module.diagnostics]
    assert len(entry_fusions(module)) == 2
    x = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
    np.testing.assert_allclose(xlac.jit(text)(x), x - x.sum(0), rtol=1e-5, atol=1e-5)


def test_column_reduction_is_its_kernels_root_not_fused_into_a_convert():
    """A sum over the rows of a bf16 matrix (in f32, as jax writes it) then
    rounded: fused into the convert, each output element would walk a column;
    the reduce stays the root of its kernel, the column reduction."""
    text = f"""
    HloModule m
    {ADD}
    ENTRY e {{
      x = bf16[64,32]{{1,0}} parameter(0)
      c = f32[64,32]{{1,0}} convert(x)
      z = f32[] constant(0)
      s = f32[32]{{0}} reduce(c, z), dimensions={{0}}, to_apply=add
      ROOT r = bf16[32]{{0}} convert(s)
    }}"""
    module = xlac.parse_hlo(text)
    InstructionFusion().run(module)
    assert any("not fused: s" in n and "kernel's root" in n for n in map(str, module.diagnostics))
    (reduction,) = [f for f in entry_fusions(module) if f.attrs["calls"].root.opcode == "reduce"]
    assert reduction.attrs["kind"] == "kInput"
    x = np.random.default_rng(0).standard_normal((64, 32)).astype(xlac.Shape(xlac.BF16, ()).dtype)
    np.testing.assert_array_equal(xlac.jit(text)(x), xlac.evaluate(text, x))


MAX = ADD.replace("add {", "mx {").replace("add(a, b)", "maximum(a, b)")


def test_producers_fuse_into_a_pool_and_expensive_ones_only_without_overlap():
    """jax's max pool reshapes its input first: the reshape and a relu fuse into
    the reduce-window (no copy of the input); an exponential fuses into a 2x2
    stride-2 pool (each element read once), not into a 3x3 stride-1 one (it
    would be computed nine times); a cumsum (a scan) stays a kernel of its own."""
    def pool(window, producer):
        return f"""
    HloModule m
    {MAX}
    {ADD}
    ENTRY e {{
      x = f32[64,32]{{1,0}} parameter(0)
      r = f32[4,16,32]{{2,1,0}} reshape(x)
      c = f32[] constant(0)
      z = f32[4,16,32]{{2,1,0}} broadcast(c), dimensions={{}}
      p = f32[4,16,32]{{2,1,0}} {producer}
      i = f32[] constant(-inf)
      ROOT w = f32[4,{16 // 2 if 'stride' in window else 14},{16 if 'stride' in window else 30}]{{2,1,0}} reduce-window(p, i), window={{{window}}}, to_apply=mx
    }}"""
    relu = "maximum(r, z)"
    x = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    for window, producer, fuses in (("size=1x2x2 stride=1x2x2", "exponential(r)", True),
                                    ("size=1x3x3", "exponential(r)", False),
                                    ("size=1x3x3", relu, True)):
        text = pool(window, producer)
        module = xlac.parse_hlo(text)
        InstructionFusion().run(module)
        (root,) = [i for i in module.entry.instructions if i is module.entry.root]
        fused_ops = {i.opcode for i in root.attrs["calls"].instructions} if root.opcode == "fusion" else set()
        assert "reshape" not in {i.opcode for i in module.entry.instructions}, module.to_text()    # no copy
        assert (("exponential" in fused_ops or "maximum" in fused_ops) is fuses), (window, producer, module.to_text())
        np.testing.assert_allclose(xlac.jit(text)(x), xlac.evaluate(text, x), rtol=1e-6)
    scan = f"""
    HloModule m
    {ADD}
    ENTRY e {{
      x = f32[64,32]{{1,0}} parameter(0)
      r = f32[32,64]{{1,0}} reshape(x)
      z = f32[] constant(0)
      ROOT w = f32[32,64]{{1,0}} reduce-window(r, z), window={{size=1x64 pad=0_0x63_0}}, to_apply=add
    }}"""
    module = xlac.parse_hlo(scan)
    InstructionFusion().run(module)
    assert module.entry.root.opcode == "reduce-window"
    np.testing.assert_array_equal(xlac.jit(scan)(x), xlac.evaluate(scan, x))


def test_row_reduction_broadcast_along_columns_is_fused_and_hoisted():
    text = _subtract_sum(axis=1)
    module = xlac.parse_hlo(text)
    InstructionFusion().run(module)
    assert len(entry_fusions(module)) == 1
    exe = xlac.jit(text)
    x = np.random.default_rng(1).standard_normal((16, 8)).astype(np.float32)
    np.testing.assert_allclose(exe(x), x - x.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)
    # Hoisted: the row sum's loop sits outside the column loop, so the kernel
    # has exactly one reduction loop (not one per element) — count them.
    assert exe.llvm_ir.count("r1.body:") == 1


def test_dot_epilogue_is_an_output_fusion():
    out = fused("""
    HloModule m
    ENTRY e {
      x = f32[4,8]{1,0} parameter(0)
      w = f32[8,16]{1,0} parameter(1)
      b = f32[16]{0} parameter(2)
      d = f32[4,16]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
      bb = f32[4,16]{1,0} broadcast(b), dimensions={1}
      a = f32[4,16]{1,0} add(d, bb)
      z = f32[] constant(0)
      zb = f32[4,16]{1,0} broadcast(z), dimensions={}
      ROOT r = f32[4,16]{1,0} maximum(a, zb)
    }""")
    filecheck(out, """
    CHECK: dot(
    CHECK-LABEL: ENTRY e
    CHECK: ROOT {{.*}} fusion(x, w, b), kind=kOutput
    """)


def test_dot_is_not_fused_into_a_broadcast():
    module = xlac.parse_hlo("""
    HloModule m
    ENTRY e {
      x = f32[4,8]{1,0} parameter(0)
      w = f32[8]{0} parameter(1)
      d = f32[4]{0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
      bb = f32[4,16]{1,0} broadcast(d), dimensions={0}
      y = f32[4,16]{1,0} parameter(2)
      ROOT r = f32[4,16]{1,0} add(y, bb)
    }""")
    InstructionFusion().run(module)
    assert any(n.startswith("not fused: d") for n in [str(d) for d in module.diagnostics]), [str(d) for d in module.diagnostics]


def test_sibling_reductions_share_one_multi_output_fusion():
    module = xlac.parse_hlo(f"""
    HloModule m
    {ADD}
    max {{
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      ROOT s = f32[] maximum(a, b)
    }}
    ENTRY e {{
      x = f32[64,128]{{1,0}} parameter(0)
      z = f32[] constant(0)
      ninf = f32[] constant(-inf)
      sq = f32[64,128]{{1,0}} multiply(x, x)
      s = f32[64]{{0}} reduce(sq, z), dimensions={{1}}, to_apply=add
      m = f32[64]{{0}} reduce(x, ninf), dimensions={{1}}, to_apply=max
      ROOT t = (f32[64]{{0}}, f32[64]{{0}}) tuple(s, m)
    }}""")
    InstructionFusion().run(module)
    assert len(entry_fusions(module)) == 2
    assert MultiOutputFusion().run(module)
    filecheck(module.to_text(), """
    CHECK-LABEL: ENTRY e
    CHECK: = (f32[64]{0}, f32[64]{0}) fusion(x), kind=kInput
    CHECK: get-tuple-element
    CHECK: get-tuple-element
    """)
    x = np.random.default_rng(2).standard_normal((64, 128)).astype(np.float32)
    s, m = xlac.jit(module)(x)
    np.testing.assert_allclose(s, (x * x).sum(1), rtol=1e-5)
    np.testing.assert_array_equal(m, x.max(1))


def test_unfused_elementwise_siblings_share_one_kernel():
    """The real and imaginary parts of a complex operand, each read by dots
    (a complex product as four real ones): neither fuses into a dot, so each
    was a kernel reading the whole operand; now one kernel reads it once."""
    module = xlac.parse_hlo("""
    HloModule m
    ENTRY e {
      a = c64[32,48]{1,0} parameter(0)
      b = f32[48,16]{1,0} parameter(1)
      re = f32[32,48]{1,0} real(a)
      im = f32[32,48]{1,0} imag(a)
      d1 = f32[32,16]{1,0} dot(re, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
      d2 = f32[32,16]{1,0} dot(im, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
      ROOT t = (f32[32,16]{1,0}, f32[32,16]{1,0}) tuple(d1, d2)
    }""")
    InstructionFusion().run(module)
    assert not entry_fusions(module)
    assert MultiOutputFusion().run(module)
    filecheck(module.to_text(), """
    CHECK-DAG: real(
    CHECK-DAG: imag(
    CHECK: ROOT {{.*}} = (f32[32,48]{1,0}, f32[32,48]{1,0}) tuple(
    CHECK-LABEL: ENTRY e
    CHECK: = (f32[32,48]{1,0}, f32[32,48]{1,0}) fusion(a), kind=kLoop
    CHECK-NOT: fusion(
    """)
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((32, 48)) + 1j * rng.standard_normal((32, 48))).astype(np.complex64)
    b = rng.standard_normal((48, 16)).astype(np.float32)
    d1, d2 = xlac.jit(module)(a, b)
    np.testing.assert_allclose(d1, a.real @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d2, a.imag @ b, rtol=1e-5, atol=1e-5)


def test_dependent_siblings_are_not_merged():
    module = xlac.parse_hlo(f"""
    HloModule m
    {ADD}
    ENTRY e {{
      x = f32[64,128]{{1,0}} parameter(0)
      z = f32[] constant(0)
      s = f32[64]{{0}} reduce(x, z), dimensions={{1}}, to_apply=add
      b = f32[64,128]{{1,0}} broadcast(s), dimensions={{0}}
      y = f32[64,128]{{1,0}} multiply(x, b)
      t = f32[64]{{0}} reduce(y, z), dimensions={{1}}, to_apply=add
      ROOT r = (f32[64]{{0}}, f32[64]{{0}}) tuple(s, t)
    }}""")
    InstructionFusion().run(module)
    MultiOutputFusion().run(module)
    x = np.random.default_rng(3).standard_normal((64, 128)).astype(np.float32)
    s, t = xlac.jit(module)(x)
    np.testing.assert_allclose(t, (x * x.sum(1, keepdims=True)).sum(1), rtol=1e-4)


# -- the benchmark kernels (the targets) -------------------------------------------

def _lowered(name):
    return lower(xlac.parse_hlo((BENCH / f"{name}.hlo").read_text(encoding="utf-8")))


@pytest.mark.parametrize("name,most", [("chain", 1), ("bcast", 1), ("softmax", 2), ("layernorm", 3)])
def test_bench_kernels_fuse(name, most):
    lowered = _lowered(name)
    fusions = entry_fusions(lowered.hlo)
    others = [i for i in lowered.hlo.entry.instructions if i.opcode not in ("parameter", "fusion", "constant")]
    assert 1 <= len(fusions) <= most and not others, lowered.hlo.to_text()


def test_mlp_bias_and_relu_fuse_into_the_dots():
    lowered = _lowered("mlp")
    out = [f for f in entry_fusions(lowered.hlo) if f.attrs["kind"] == "kOutput"]
    assert len(out) == 2
    first = {i.opcode for i in out[0].attrs["calls"].instructions}
    assert {"dot", "add", "maximum", "broadcast"} <= first
    assert not [i for i in lowered.hlo.entry.instructions if i.opcode == "dot"]


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCH.glob("*.hlo")))
def test_temp_arena_no_larger_than_largest_live_set(name):
    module = xlac.parse_hlo((BENCH / f"{name}.hlo").read_text(encoding="utf-8"))
    try:
        check_supported(module)
    except xlac.UnsupportedError:
        pytest.skip("uses an op the compiler does not handle yet")
    a = lower(module).assignment
    assert a.temp_size <= a.peak_live_bytes(), a.summary()


# -- optimised == unoptimised -----------------------------------------------------------------

CASES = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))["cases"]


def _leaves(v):
    return [x for e in v for x in _leaves(e)] if isinstance(v, tuple) else [v]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_optimised_equals_unoptimised_on_corpus(case):
    module = xlac.parse_hlo((CORPUS / f"{case['name']}.hlo").read_text(encoding="utf-8"))
    try:
        check_supported(module)
    except xlac.UnsupportedError as ex:
        pytest.skip(str(ex))
    with np.load(CORPUS / f"{case['name']}.npz") as data:
        args = [data[f"arr_{k}"] for k in range(len(data.files))]
    fast = _leaves(xlac.jit(module)(*args))
    slow = _leaves(xlac.jit(module, optimize=False)(*args))
    for spec, a, b in zip(case["outputs"], fast, slow):
        if np.issubdtype(a.dtype, np.inexact):
            np.testing.assert_allclose(a, b, rtol=max(spec["rtol"], 1e-6), atol=max(spec["atol"], 1e-6),
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)


UNARY = ["negate", "exponential", "tanh", "abs", "sine"]
BINARY = ["add", "multiply", "subtract", "maximum"]


@st.composite
def random_graphs(draw):
    """A random DAG of elementwise, broadcast, transpose, reshape and reduce ops on [4,6]."""
    lines = ["  p0 = f32[4,6]{1,0} parameter(0)", "  p1 = f32[4,6]{1,0} parameter(1)",
             "  z = f32[] constant(0)"]
    values = ["p0", "p1"]
    for k in range(draw(st.integers(2, 12))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "transpose", "rowsum", "colsum"]))
        a = draw(st.sampled_from(values))
        name = f"v{k}"
        if kind == "unary":
            lines.append(f"  {name} = f32[4,6]{{1,0}} {draw(st.sampled_from(UNARY))}({a})")
        elif kind == "binary":
            b = draw(st.sampled_from(values))
            lines.append(f"  {name} = f32[4,6]{{1,0}} {draw(st.sampled_from(BINARY))}({a}, {b})")
        elif kind == "transpose":
            lines.append(f"  {name}.t = f32[6,4]{{1,0}} transpose({a}), dimensions={{1,0}}")
            lines.append(f"  {name}.r = f32[4,6]{{1,0}} reshape({name}.t)")
            lines.append(f"  {name} = f32[4,6]{{1,0}} negate({name}.r)")
        else:
            dim, keep, size = (1, 0, 4) if kind == "rowsum" else (0, 1, 6)
            lines.append(f"  {name}.s = f32[{size}]{{0}} reduce({a}, z), dimensions={{{dim}}}, to_apply=add")
            lines.append(f"  {name} = f32[4,6]{{1,0}} broadcast({name}.s), dimensions={{{keep}}}")
        values.append(name)
    outs = draw(st.lists(st.sampled_from(values[2:]), min_size=1, max_size=3, unique=True))
    shapes = ", ".join("f32[4,6]{1,0}" for _ in outs)
    lines.append(f"  ROOT out = ({shapes}) tuple({', '.join(outs)})")
    return "HloModule g\n" + ADD + "\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs(), st.integers(0, 2**31 - 1))
def test_property_optimised_equals_unoptimised(text, seed):
    rng = np.random.default_rng(seed)
    args = [rng.uniform(-1, 1, (4, 6)).astype(np.float32) for _ in range(2)]
    fast = _leaves(xlac.jit(text)(*args))
    slow = _leaves(xlac.jit(text, optimize=False)(*args))
    ref = _leaves(xlac.evaluate(text, *args))
    for a, b, r in zip(fast, slow, ref):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-4)


def test_convolution_epilogue_is_an_output_fusion():
    text = """
    HloModule m
    ENTRY e {
      x = f32[1,6,6,3]{3,2,1,0} parameter(0)
      w = f32[3,3,3,4]{3,2,1,0} parameter(1)
      b = f32[4]{0} parameter(2)
      c = f32[1,4,4,4]{3,2,1,0} convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f
      bb = f32[1,4,4,4]{3,2,1,0} broadcast(b), dimensions={3}
      a = f32[1,4,4,4]{3,2,1,0} add(c, bb)
      z = f32[] constant(0)
      zb = f32[1,4,4,4]{3,2,1,0} broadcast(z), dimensions={}
      ROOT r = f32[1,4,4,4]{3,2,1,0} maximum(a, zb)
    }"""
    filecheck(fused(text), """
    CHECK: convolution(
    CHECK-LABEL: ENTRY e
    CHECK: ROOT {{.*}} fusion(x, w, b), kind=kOutput
    """)
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(1, 6, 6, 3), (3, 3, 3, 4), (4,)]]
    np.testing.assert_allclose(xlac.jit(text)(*args), xlac.evaluate(text, *args), rtol=1e-5, atol=1e-5)


def test_a_second_product_is_not_fused_into_a_fusion_with_one():
    # An RNN cell's x @ W + h @ U + b: one output fusion holds one dot; the
    # other is its own kernel (fused, it was computed elementally, an inner
    # product per element).
    module = xlac.parse_hlo("""
    HloModule m
    ENTRY e {
      x = f32[4,16]{1,0} parameter(0)
      w = f32[16,32]{1,0} parameter(1)
      h = f32[4,32]{1,0} parameter(2)
      u = f32[32,32]{1,0} parameter(3)
      d1 = f32[4,32]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
      d2 = f32[4,32]{1,0} dot(h, u), lhs_contracting_dims={1}, rhs_contracting_dims={0}
      s = f32[4,32]{1,0} add(d1, d2)
      ROOT t = f32[4,32]{1,0} tanh(s)
    }""")
    InstructionFusion().run(module)
    for f in entry_fusions(module):
        assert sum(i.opcode == "dot" for i in f.attrs["calls"].instructions) <= 1, str(module)
    assert sum(i.opcode == "dot" for i in module.entry.instructions) == 1, str(module)
    assert any("computes a dot already" in str(d) for d in module.diagnostics), [str(d) for d in module.diagnostics]


def test_a_fusion_takes_at_most_six_reductions():
    # An optimizer's global norm: the sum of every gradient's squared sum.
    # As XLA's CPU fusion, a fusion holding more than five reductions takes
    # no further one; the rest make fusions of their own, same values.
    n = 9
    params = "\n".join(f"  x{k} = f32[16,{8 + k}]{{1,0}} parameter({k})" for k in range(n))
    sums = "\n".join(f"  q{k} = f32[16,{8 + k}]{{1,0}} multiply(x{k}, x{k})\n"
                      f"  r{k} = f32[] reduce(q{k}, z), dimensions={{0,1}}, to_apply=add" for k in range(n))
    adds = "\n".join(f"  a{k} = f32[] add({'a' + str(k - 1) if k > 1 else 'r0'}, r{k})" for k in range(1, n))
    text = f"HloModule m\n{ADD}\nENTRY e {{\n{params}\n  z = f32[] constant(0)\n{sums}\n{adds}\n" \
           f"  ROOT s = f32[] sqrt(a{n - 1})\n}}"
    module = xlac.parse_hlo(text)
    InstructionFusion().run(module)
    counts = [sum(i.opcode == "reduce" for i in f.attrs["calls"].instructions) for f in entry_fusions(module)]
    assert sum(counts) == n and max(counts) == fusion_pass.MAX_REDUCTIONS_IN_FUSION + 1, (counts, str(module))
    assert any("more than 5 reductions" in str(d) for d in module.diagnostics), [str(d) for d in module.diagnostics]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((16, 8 + k)).astype(np.float32) for k in range(n)]
    want = np.sqrt(sum(float(np.sum(a.astype(np.float64) ** 2)) for a in args))
    np.testing.assert_allclose(np.asarray(xlac.jit(text)(*args)), want, rtol=1e-5)


WHILE_LOOP = f"""
HloModule m
{ADD}
cond {{
  p = (s32[], f32[64]{{0}}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}}
step {{
  x = f32[64]{{0}} parameter(0)
  e = f32[64]{{0}} exponential(x)
  ROOT m = f32[64]{{0}} multiply(e, x)
}}
body {{
  p = (s32[], f32[64]{{0}}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[64]{{0}} get-tuple-element(p), index=1
  c = f32[64]{{0}} call(x), to_apply=step
  h = f32[] constant(0.5)
  hb = f32[64]{{0}} broadcast(h), dimensions={{}}
  y = f32[64]{{0}} multiply(c, hb)
  z = f32[] constant(0)
  r = f32[] reduce(y, z), dimensions={{0}}, to_apply=add
  rb = f32[64]{{0}} broadcast(r), dimensions={{}}
  w = f32[64]{{0}} subtract(y, rb)
  ROOT t = (s32[], f32[64]{{0}}) tuple(j, w)
}}
ENTRY e {{
  a = f32[64]{{0}} parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[64]{{0}}) tuple(zero, a)
  l = (s32[], f32[64]{{0}}) while(t), condition=cond, body=body
  ROOT o = f32[64]{{0}} get-tuple-element(l), index=1
}}
"""


def test_while_bodies_are_inlined_and_fused_as_the_entry_is():
    from xlac.passes.pipeline import codegen_pipeline
    module = xlac.parse_hlo(WHILE_LOOP)
    codegen_pipeline().run(module)
    body = next(i for i in module.entry.instructions if i.opcode == "while").attrs["body"]
    opcodes = [i.opcode for i in body.instructions]
    assert "call" not in opcodes, str(body)                   # the call is inlined ...
    assert "exponential" not in opcodes and "fusion" in opcodes, str(body)  # ... and fused
    add = next(c for c in module.computations if c.name == "add")
    assert [i.opcode for i in add.instructions] == ["parameter", "parameter", "add"]  # a reducer stays as written
    a = np.linspace(-1, 1, 64, dtype=np.float32)
    want = xlac.jit(xlac.parse_hlo(WHILE_LOOP), optimize=False)(a)
    np.testing.assert_allclose(xlac.jit(xlac.parse_hlo(WHILE_LOOP))(a), want, rtol=1e-5)


def test_a_computation_also_called_elementally_is_not_fused():
    from xlac.passes.call_inliner import sequential_computations
    module = xlac.parse_hlo(f"""
    HloModule m
    {ADD}
    ENTRY e {{
      a = f32[8]{{0}} parameter(0)
      b = f32[8]{{0}} parameter(1)
      c = f32[8]{{0}} map(a, b), dimensions={{0}}, to_apply=add
      s = f32[] parameter(2)
      ROOT d = f32[] call(s, s), to_apply=add
    }}""")
    names = [c.name for c in sequential_computations(module)]
    assert names == ["e"], names


def _concatenated(result: str, dimension: int):
    """Two elementwise ops of [8, 24] joined by a concatenate along ``dimension``, fused."""
    module = xlac.parse_hlo(f"""
    HloModule m
    ENTRY e {{
      a = f32[8,24]{{1,0}} parameter(0)
      b = f32[8,24]{{1,0}} parameter(1)
      x = f32[8,24]{{1,0}} multiply(a, b)
      y = f32[8,24]{{1,0}} add(a, b)
      c = f32{result}{{1,0}} concatenate(x, y), dimensions={{{dimension}}}
      ROOT t = f32{result}{{1,0}} tanh(c)
    }}""")
    InstructionFusion().run(module)
    return module


def test_producers_of_a_minor_dimension_concatenate_are_not_fused():
    module = _concatenated("[8,48]", 1)
    ops = [i.opcode for i in module.entry.instructions]
    assert "multiply" in ops and "add" in ops, str(module)
    assert any("concatenate along the minor dimension" in str(d) for d in module.diagnostics)
    # Along a major dimension each operand is a run of whole rows: fused.
    rows = _concatenated("[16,24]", 0)
    assert [i.opcode for i in rows.entry.instructions if i.opcode != "parameter"] == ["fusion"], str(rows)


KEPT = """
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  w = f32[32,8]{1,0} parameter(2)
  s = f32[] parameter(3)
  m = f32[16,32]{1,0} multiply(x, y)
  m2 = f32[16,32]{1,0} add(m, y)
  m3 = f32[16,32]{1,0} multiply(m2, x)
  m4 = f32[16,32]{1,0} subtract(m3, y)
  m5 = f32[16,32]{1,0} multiply(m4, m2)
  m6 = f32[16,32]{1,0} add(m5, x)
  m7 = f32[16,32]{1,0} multiply(m6, m)
  g = f32[16,32]{1,0} add(m7, x)
  sb = f32[16,32]{1,0} broadcast(s), dimensions={}
  h = f32[16,32]{1,0} add(g, sb)
  d = f32[16,8]{1,0} dot(%s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  r = f32[32]{0} reduce(g, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[16,8]{1,0}, f32[32]{0}, f32[16,32]{1,0}) tuple(d, r, %b)
}
"""


def _kept(dot_operand: str, other: str) -> xlac.HloModule:
    module = xlac.parse_hlo(KEPT.replace("%s", dot_operand).replace("%b", other))
    InstructionFusion().run(module)
    return module


def test_a_producer_a_matrix_product_reads_is_not_duplicated_into_other_consumers():
    # g feeds a matrix product (which reads it from a buffer) and a reduction:
    # the reduction reads g's buffer instead of computing g (and the 7 ops
    # behind it) again.
    module = _kept("g", "x")
    reduction = next(i for i in module.entry.instructions if i.opcode == "fusion"
                     and i.attrs["calls"].root.opcode == "reduce")
    inside = [i.opcode for i in reduction.attrs["calls"].instructions]
    assert "add" not in inside and "multiply" not in inside, str(module)
    kept = [i for i in module.entry.instructions if i in reduction.operands and i.opcode == "fusion"]
    assert [i.attrs["calls"].root.opcode for i in kept] == ["add"], str(module)
    assert any("not fused: g into" in str(n) and "d keeps it in a buffer anyway" in str(n)
               for n in module.diagnostics), module.diagnostics


def test_a_producer_read_by_only_fusible_consumers_is_still_duplicated():
    # The same g read by a broadcast-add that feeds the product instead: every
    # user of g may fuse it, so it is computed in each (no buffer for it).
    module = _kept("h", "x")
    assert not any("keeps it in a buffer" in str(n) for n in module.diagnostics), module.diagnostics
    reduction = next(i for i in module.entry.instructions if i.opcode == "fusion"
                     and i.attrs["calls"].root.opcode == "reduce")
    assert "multiply" in [i.opcode for i in reduction.attrs["calls"].instructions], str(module)


def test_a_small_kept_producer_is_still_duplicated(monkeypatch):
    # Below RECOMPUTE_MIN_OPS ops the expression is computed again instead
    # (its consumers stay independent for multi-output fusion).
    monkeypatch.setattr(fusion_pass, "RECOMPUTE_MIN_OPS", 9)
    module = _kept("g", "x")
    assert not any("keeps it in a buffer" in str(n) for n in module.diagnostics), module.diagnostics


def test_a_producer_reading_less_than_it_writes_is_fused_though_kept():
    # sb (a broadcast of a scalar) is read by the product and by h: h still
    # computes it (reading the scalar) rather than reading a 16x32 buffer.
    module = _kept("sb", "h")
    h = next(i for i in module.entry.instructions if i.opcode == "fusion" and i.attrs["calls"].root.opcode == "add"
             and i.shape.dimensions == (16, 32))
    assert "broadcast" in [i.opcode for i in h.attrs["calls"].instructions], str(module)


@pytest.mark.parametrize("dot_operand,other", [("g", "x"), ("h", "x"), ("sb", "h")])
def test_kept_producers_compute_what_the_evaluator_does(dot_operand, other):
    text = KEPT.replace("%s", dot_operand).replace("%b", other)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((16, 32)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32),
            rng.standard_normal((32, 8)).astype(np.float32), np.float32(0.5)]
    got, want = xlac.jit(text)(*args), xlac.evaluate(text, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


def _residual_stream(layers: int, ops: int) -> str:
    """A transformer's residual stream in miniature: block ``k`` adds a cheap
    expression of ``ops`` elementwise ops on its own input ``x<k>`` to the sum
    of the blocks before, and a row reduction (a layer norm's) reads each sum."""
    lines = ["  zero = f32[] constant(0)", "  c = f32[] constant(0.5)",
             "  cb = f32[8,32]{1,0} broadcast(c), dimensions={}",
             "  r0 = f32[8,32]{1,0} parameter(0)"]
    outs = []
    for k in range(1, layers + 1):
        lines.append(f"  x{k} = f32[8,32]{{1,0}} parameter({k})")
        value = f"x{k}"
        for j in range(ops):
            op = ("multiply", "add")[j % 2]
            lines.append(f"  e{k}_{j} = f32[8,32]{{1,0}} {op}({value}, cb)")
            value = f"e{k}_{j}"
        lines.append(f"  r{k} = f32[8,32]{{1,0}} add(r{k - 1}, {value})")
        lines.append(f"  s{k} = f32[8]{{0}} reduce(r{k}, zero), dimensions={{1}}, to_apply=add")
        outs.append(f"s{k}")
    shapes = ", ".join(["f32[8]{0}"] * layers)
    lines.append(f"  ROOT t = ({shapes}) tuple({', '.join(outs)})")
    return "HloModule residual\n" + ADD + "\nENTRY main {\n" + "\n".join(lines) + "\n}\n"


def test_a_long_expression_other_consumers_read_is_computed_once():
    # Fused into every later sum's consumers, each block's expression would be
    # recomputed in all the kernels after it (quadratic in the depth): the
    # sums whose expression reaches MAX_DUPLICATED_OPS get buffers instead.
    for layers in (6, 12):
        module = xlac.parse_hlo(_residual_stream(layers=layers, ops=10))
        InstructionFusion().run(module)
        assert any("other consumers read it" in str(n) for n in module.diagnostics), module.diagnostics
        # However deep the stream, no kernel computes more than the threshold
        # and one block more (11 ops a block; without the rule the last one
        # computed all of them).
        most = max(sum(i.opcode in ("multiply", "add") for i in f.attrs["calls"].instructions)
                   for f in entry_fusions(module))
        assert most <= fusion_pass.MAX_DUPLICATED_OPS + 11, str(module)


def test_a_short_expression_other_consumers_read_is_still_duplicated():
    # Three blocks of two ops: the last sum recomputes 9 ops, fewer than
    # MAX_DUPLICATED_OPS: every reduction computes its sum itself.
    module = xlac.parse_hlo(_residual_stream(layers=3, ops=2))
    InstructionFusion().run(module)
    assert not any("other consumers read it" in str(n) for n in module.diagnostics), module.diagnostics
    reductions = [f for f in entry_fusions(module) if f.attrs["calls"].root.opcode == "reduce"]
    assert len(reductions) == 3 and all(not any(o.opcode == "fusion" for o in f.operands) for f in reductions), \
        str(module)


#: An optimizer's schedule in miniature: s, two ops on the learning rate lr,
#: read by the updates of three parameters x1, x2, x3.
SCHEDULE_UPDATES = """  decay = f32[] constant(0.9)
  one = f32[] constant(1)
  t = f32[] multiply(lr, decay)
  s = f32[] add(t, one)
  b = f32[16]{0} broadcast(s), dimensions={}
  y1 = f32[16]{0} multiply(x1, b)
  y2 = f32[16]{0} subtract(x2, b)
  y3 = f32[16]{0} add(x3, b)"""

SCALAR_READ_THRICE = """
HloModule schedule

%(add)s

ENTRY main {
  lr = f32[] parameter(0)
  x1 = f32[16]{0} parameter(1)
  x2 = f32[16]{0} parameter(2)
  x3 = f32[16]{0} parameter(3)
%(updates)s
  ROOT r = (f32[16]{0}, f32[16]{0}, f32[16]{0}) tuple(y1, y2, y3)
}
""" % {"add": ADD, "updates": SCHEDULE_UPDATES}


def test_a_scalar_of_two_ops_the_entry_reads_thrice_is_computed_once():
    # Each update reads s from a one-element buffer instead of computing it.
    module = xlac.parse_hlo(SCALAR_READ_THRICE)
    InstructionFusion().run(module)
    assert any("not fused: s into" in str(n) and "other consumers read it" in str(n)
               for n in module.diagnostics), module.diagnostics
    fusions = entry_fusions(module)
    assert sum(f.attrs["calls"].root.name == "s" for f in fusions) == 1, str(module)
    assert not any(i.opcode == "add" and i.shape.rank == 0 for f in fusions if f.attrs["calls"].root.name != "s"
                   for i in f.attrs["calls"].instructions), str(module)
    args = [np.float32(0.5)] + [np.arange(16, dtype=np.float32) * k for k in (1, 2, 3)]
    for g, w in zip(xlac.jit(SCALAR_READ_THRICE)(*args), xlac.evaluate(SCALAR_READ_THRICE, *args)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


SCALAR_READ_THRICE_IN_A_LOOP = """
HloModule schedule_loop

body {
  p = (s32[], f32[], f32[16]{0}, f32[16]{0}, f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  lr = f32[] get-tuple-element(p), index=1
  x1 = f32[16]{0} get-tuple-element(p), index=2
  x2 = f32[16]{0} get-tuple-element(p), index=3
  x3 = f32[16]{0} get-tuple-element(p), index=4
%(updates)s
  step = s32[] constant(1)
  next = s32[] add(i, step)
  ROOT r = (s32[], f32[], f32[16]{0}, f32[16]{0}, f32[16]{0}) tuple(next, lr, y1, y2, y3)
}

cond {
  p = (s32[], f32[], f32[16]{0}, f32[16]{0}, f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY main {
  lr = f32[] parameter(0)
  x1 = f32[16]{0} parameter(1)
  x2 = f32[16]{0} parameter(2)
  x3 = f32[16]{0} parameter(3)
  zero = s32[] constant(0)
  init = (s32[], f32[], f32[16]{0}, f32[16]{0}, f32[16]{0}) tuple(zero, lr, x1, x2, x3)
  ROOT w = (s32[], f32[], f32[16]{0}, f32[16]{0}, f32[16]{0}) while(init), condition=cond, body=body
}
""" % {"updates": SCHEDULE_UPDATES}


def test_a_scalar_a_loop_body_reads_thrice_is_still_duplicated():
    # The same updates in a while body: a kernel of one element there would
    # be compiled optimised and called every iteration; each update computes
    # the two ops itself.
    module = xlac.parse_hlo(SCALAR_READ_THRICE_IN_A_LOOP)
    InstructionFusion().run(module)
    assert not any("other consumers read it" in str(n) for n in module.diagnostics), module.diagnostics
    body = next(i for i in module.entry.instructions if i.opcode == "while").attrs["body"]
    updates = [f for f in body.instructions if f.opcode == "fusion" and f.shape.rank == 1]
    assert len(updates) == 3 and all(any(i.opcode == "multiply" and i.shape.rank == 0
                                         for i in f.attrs["calls"].instructions) for f in updates), str(module)
    args = [np.float32(0.5)] + [np.arange(16, dtype=np.float32) * k for k in (1, 2, 3)]
    got = xlac.jit(SCALAR_READ_THRICE_IN_A_LOOP)(*args)
    want = xlac.evaluate(SCALAR_READ_THRICE_IN_A_LOOP, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


@pytest.mark.parametrize("layers,ops", [(6, 10), (3, 2)])
def test_residual_streams_compute_what_the_evaluator_does(layers, ops):
    text = _residual_stream(layers, ops)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((8, 32)).astype(np.float32) for _ in range(layers + 1)]
    got, want = xlac.jit(text)(*args), xlac.evaluate(text, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


def test_a_convolutions_operands_are_not_fused_into_its_output_fusion():
    # A batch norm and relu ahead of a convolution stay a loop fusion of their
    # own: the convolution (with its bias epilogue) reads them from a buffer.
    text = """
    HloModule m
    ENTRY e {
      x = f32[2,6,6,3]{3,2,1,0} parameter(0)
      s = f32[3]{0} parameter(1)
      w = f32[3,3,3,4]{3,2,1,0} parameter(2)
      b = f32[4]{0} parameter(3)
      sb = f32[2,6,6,3]{3,2,1,0} broadcast(s), dimensions={3}
      n = f32[2,6,6,3]{3,2,1,0} multiply(x, sb)
      z = f32[] constant(0)
      zb = f32[2,6,6,3]{3,2,1,0} broadcast(z), dimensions={}
      y = f32[2,6,6,3]{3,2,1,0} maximum(n, zb)
      c = f32[2,4,4,4]{3,2,1,0} convolution(y, w), window={size=3x3}, dim_labels=b01f_01io->b01f
      bb = f32[2,4,4,4]{3,2,1,0} broadcast(b), dimensions={3}
      ROOT a = f32[2,4,4,4]{3,2,1,0} add(c, bb)
    }"""
    module = xlac.parse_hlo(text)
    InstructionFusion().run(module)
    conv = next(i for i in module.entry.instructions if i.attrs.get("kind") == "kOutput")
    assert [i.opcode for i in conv.attrs["calls"].instructions if i.opcode not in ("parameter", "broadcast")] == \
        ["convolution", "add"], str(module)
    assert any("a convolution's operands are read from buffers" in str(n) for n in module.diagnostics)
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(2, 6, 6, 3), (3,), (3, 3, 3, 4), (4,)]]
    np.testing.assert_allclose(xlac.jit(text)(*args), xlac.evaluate(text, *args), rtol=1e-5, atol=1e-5)


def test_a_scatter_takes_cheap_updates_but_not_its_base_a_transpose_or_an_expensive_op():
    module = xlac.parse_hlo("""
    HloModule m
    """ + ADD + """
    ENTRY e {
      p = f32[4,6]{1,0} parameter(0)
      w = f32[6]{0} parameter(1)
      i = s32[6,1]{1,0} parameter(2)
      q = f32[6,4]{1,0} parameter(3)
      base = f32[6,4]{1,0} negate(q)
      t = f32[6,4]{1,0} transpose(p), dimensions={1,0}
      e = f32[6,4]{1,0} exponential(q)
      b = f32[6,4]{1,0} broadcast(w), dimensions={0}
      m = f32[6,4]{1,0} multiply(t, b)
      u = f32[6,4]{1,0} add(m, e)
      s0 = f32[5,4]{1,0} slice(base), slice={[0:5], [0:4]}
      ROOT s = f32[5,4]{1,0} scatter(s0, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
    }""")
    InstructionFusion().run(module)
    (fusion,) = [i for i in entry_fusions(module) if i.attrs["calls"].root.opcode == "scatter"]
    assert fusion.attrs["kind"] == "kInput"
    inside = {i.opcode for i in fusion.attrs["calls"].instructions}
    assert {"multiply", "add", "broadcast"} <= inside and not inside & {"transpose", "exponential", "slice"}
    notes = [str(d) for d in module.diagnostics]
    for name, why in (("t", "across its layout"), ("e", "serial loop"), ("s0", "operand 0 is updated")):
        assert any(f"not fused: {name} " in n and why in n for n in notes), (name, notes)
