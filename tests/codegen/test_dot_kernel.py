"""The packed GEMM kernel of ``dot`` and of dot output fusions (kOutput).

Results are checked against a float64 numpy reference, with a tolerance
relative to ``sum |a| |b|`` (float reassociation error, which grows with k),
over edge shapes, batch dimensions anywhere, transposes through dimension
numbers and through layouts, padded layouts, fused operand producers and
epilogues; the task-parallel code is run with a ``parallel_for`` that runs
tasks in shuffled order and must match the serial run bit for bit.
"""
import ctypes
import random
import re

import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import lower
from xlac.codegen import gemm_kernel, gemm_library
from xlac.codegen.jit import compile_ir
from xlac.codegen.kernels import dot as dot_kernel, dot_plan
from xlac.shape import from_buffer, to_buffer

DTYPES = {"f32": np.float32, "f64": np.float64}
TOL = {"f32": 2e-6, "f64": 1e-13}


def dot_text(lhs, rhs, out, dims, dt="f32", epilogue=""):
    """A module ``ROOT dot(a, b)`` (or, with ``epilogue``, ``d = dot`` followed
    by the given lines, the last one ROOT)."""
    lines = [f"  a = {dt}{lhs} parameter(0)", f"  b = {dt}{rhs} parameter(1)"]
    if not epilogue:
        lines.append(f"  ROOT d = {dt}{out} dot(a, b), {dims}")
    else:
        lines.append(f"  d = {dt}{out} dot(a, b), {dims}")
        lines.append(epilogue)
    return "HloModule m\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


def einsum_ref(a, b, lb, rb, lc, rc):
    """float64 dot_general and the same with |a|, |b| (the error scale)."""
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    la = [None] * a.ndim
    ra = [None] * b.ndim
    for x, y in zip(lb, rb):
        la[x] = ra[y] = next(letters)
    for x, y in zip(lc, rc):
        la[x] = ra[y] = next(letters)
    for d in range(a.ndim):
        if la[d] is None:
            la[d] = next(letters)
    for d in range(b.ndim):
        if ra[d] is None:
            ra[d] = next(letters)
    out = [la[d] for d in lb] + [la[d] for d in range(a.ndim) if d not in lb and d not in lc] \
        + [ra[d] for d in range(b.ndim) if d not in rb and d not in rc]
    spec = f"{''.join(la)},{''.join(ra)}->{''.join(out)}"
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return np.einsum(spec, a64, b64), np.einsum(spec, np.abs(a64), np.abs(b64))


def dims_text(lb, rb, lc, rc):
    parts = []
    if lb:
        parts.append(f"lhs_batch_dims={{{','.join(map(str, lb))}}}")
    parts.append(f"lhs_contracting_dims={{{','.join(map(str, lc))}}}")
    if rb:
        parts.append(f"rhs_batch_dims={{{','.join(map(str, rb))}}}")
    parts.append(f"rhs_contracting_dims={{{','.join(map(str, rc))}}}")
    return ", ".join(parts)


def shape_text(dims, layout=None):
    dims = list(dims)
    if layout is None:
        layout = ",".join(str(d) for d in reversed(range(len(dims))))
    return f"[{','.join(map(str, dims))}]{{{layout}}}"


def run_dot(a_dims, b_dims, lb, rb, lc, rc, dt="f32", la=None, lr=None, lo=None, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, a_dims).astype(DTYPES[dt])
    b = rng.uniform(-1, 1, b_dims).astype(DTYPES[dt])
    ref, scale = einsum_ref(a, b, lb, rb, lc, rc)
    text = dot_text(shape_text(a_dims, la), shape_text(b_dims, lr), shape_text(ref.shape, lo),
                    dims_text(lb, rb, lc, rc), dt)
    exe = xlac.jit(text)
    got = exe(a, b)
    assert got.shape == ref.shape and got.dtype == DTYPES[dt]
    err = np.abs(got.astype(np.float64) - ref)
    bound = TOL[dt] * (scale + 1)
    assert np.all(err <= bound), f"max error {err.max()} (bound {bound.max()})"
    return exe


MATMUL_SHAPES = [(1, 1, 1), (17, 13, 29), (1000, 3, 1), (1, 300, 1), (5, 1, 7), (1, 50, 70),
                 (70, 50, 1), (6, 32, 32), (7, 33, 31), (100, 300, 70), (3, 7, 1000),
                 (1000, 7, 3), (2, 500, 2), (64, 64, 64), (129, 257, 65), (300, 513, 257)]


@pytest.mark.parametrize("dt", ["f32", "f64"])
@pytest.mark.parametrize("m,k,n", MATMUL_SHAPES)
def test_matmul_shapes(m, k, n, dt):
    run_dot((m, k), (k, n), (), (), (1,), (0,), dt)


@pytest.mark.parametrize("dt", ["f32", "f64"])
@pytest.mark.parametrize("la,lr,lo", [("0,1", "1,0", "1,0"), ("1,0", "0,1", "1,0"),
                                      ("0,1", "0,1", "0,1"), ("1,0", "1,0", "0,1"),
                                      ("0,1:P(40,37)", "1,0:P(35,20)", "1,0:P(40,19)"),
                                      ("1,0", "1,0", "0,1:P(37,24)")])
@pytest.mark.parametrize("m,k,n", [(37, 35, 19), (1, 35, 19), (37, 35, 1)])
def test_matmul_layouts(m, k, n, la, lr, lo, dt):
    """Transposes through layouts (and padded layouts) on every operand."""
    if "P(" in la and m == 1:
        la = "0,1:P(2,37)"
    if "P(" in lo and (m == 1 or n == 1):
        lo = lo.split(":")[0]
    if "P(" in la:
        la = la.replace("P(40,37)", f"P({m + 3},{k + 2})")
    if "P(" in lr:
        lr = lr.replace("P(35,20)", f"P({k},{n + 1})")
    if "P(" in lo:
        lo = lo.replace("P(40,19)", f"P({m + 3},{n})").replace("P(37,24)", f"P({m},{n + 5})")
    run_dot((m, k), (k, n), (), (), (1,), (0,), dt, la, lr, lo)


@pytest.mark.parametrize("dt", ["f32", "f64"])
@pytest.mark.parametrize("a_dims,b_dims,lb,rb,lc,rc", [
    ((40, 30), (50, 30), (), (), (1,), (1,)),           # a @ b.T
    ((30, 40), (30, 50), (), (), (0,), (0,)),           # a.T @ b
    ((30, 40), (50, 30), (), (), (0,), (1,)),           # a.T @ b.T
    ((4, 33, 20), (4, 20, 18), (0,), (0,), (2,), (1,)),  # batch first
    ((33, 4, 20), (20, 4, 18), (1,), (1,), (2,), (0,)),  # batch in the middle
    ((33, 20, 4), (18, 20, 4), (2,), (2,), (1,), (1,)),  # batch minor-most
    ((3, 2, 9, 7), (2, 7, 3, 5), (0, 1), (2, 0), (3,), (1,)),  # two batch dims, permuted
    ((6, 5, 4, 3), (4, 3, 7), (), (), (2, 3), (0, 1)),   # two contracting dims
    ((5, 6, 4, 3), (3, 7, 4), (), (), (3, 2), (0, 2)),   # contracting dims permuted
    ((2, 3, 40), (40, 4, 5), (), (), (2,), (0,)),        # several free dims each side
    ((7, 1, 9), (7, 9, 1), (0,), (0,), (2,), (1,)),      # batched dot products (m = n = 1)
    ((7, 1, 9), (7, 9, 33), (0,), (0,), (2,), (1,)),     # batched vector-matrix
    ((7, 33, 9), (7, 9), (0,), (0,), (2,), (1,)),        # batched matrix-vector (no n dim)
    ((9,), (9,), (), (), (0,), (0,)),                    # vector dot vector
    ((9,), (9, 40), (), (), (0,), (0,)),                 # vector @ matrix
    ((40, 9), (9,), (), (), (1,), (0,)),                 # matrix @ vector
    ((12, 5), (7, 3), (), (), (), ()),                   # outer product (k = 1)
    ((64, 8, 8), (64, 8, 8), (0,), (0,), (2,), (1,)),    # many small batches
    ((5, 9, 40), (5, 40, 70), (0,), (0,), (2,), (1,)),   # short M: B read in place, N edge
    ((9, 5, 40), (40, 5, 70), (1,), (1,), (2,), (0,)),   # the same, batch in the middle
])
def test_dimension_numbers(a_dims, b_dims, lb, rb, lc, rc, dt):
    run_dot(a_dims, b_dims, lb, rb, lc, rc, dt)


@pytest.mark.parametrize("la,lr,lo", [("0,1,2", "2,1,0", "0,2,1"), ("1,2,0", "0,2,1", "2,0,1"),
                                      ("2,0,1", "1,0,2", "1,2,0")])
def test_batched_layouts(la, lr, lo):
    run_dot((5, 23, 19), (5, 19, 21), (0,), (0,), (2,), (1,), "f32", la, lr, lo)


def test_large_k_reassociation():
    """k = 4096: within reassociation error of the float64 result."""
    run_dot((20, 4096), (4096, 36), (), (), (1,), (0,), "f32")


# ---------------------------------------------------------------------------
# Output fusions
# ---------------------------------------------------------------------------

def check_against_evaluator(text, args, rtol=1e-4, atol=1e-4, kind="kOutput"):
    module = xlac.parse_hlo(text)
    exe = xlac.jit(module)
    if kind:
        assert f"kind={kind}" in exe.optimized_hlo.to_text()
    got = exe(*args)
    want = xlac.evaluate(module, *args)
    assert got.dtype == want.dtype
    if np.issubdtype(want.dtype, np.inexact):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)
    return exe


def mlp_layer_text(m, k, n, dt="f32", w_layout="1,0", out_layout="1,0"):
    return f"""HloModule m

ENTRY e {{
  x = {dt}[{m},{k}]{{1,0}} parameter(0)
  w = {dt}[{k},{n}]{{{w_layout}}} parameter(1)
  bias = {dt}[{n}]{{0}} parameter(2)
  d = {dt}[{m},{n}]{{{out_layout}}} dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  bb = {dt}[{m},{n}]{{{out_layout}}} broadcast(bias), dimensions={{1}}
  s = {dt}[{m},{n}]{{{out_layout}}} add(d, bb)
  zero = {dt}[] constant(0)
  z = {dt}[{m},{n}]{{{out_layout}}} broadcast(zero), dimensions={{}}
  ROOT r = {dt}[{m},{n}]{{{out_layout}}} maximum(s, z)
}}
"""


@pytest.mark.parametrize("dt", ["f32", "f64"])
@pytest.mark.parametrize("m,k,n,w_layout,out_layout", [
    (256, 784, 512, "1,0", "1,0"), (37, 41, 43, "1,0", "1,0"), (37, 41, 43, "0,1", "0,1"),
    (1, 64, 40, "1,0", "1,0"), (40, 64, 1, "1,0", "1,0"), (130, 300, 10, "1,0", "1,0"),
    (12, 300, 45, "1,0", "1,0"), (12, 300, 45, "1,0", "0,1")])
def test_bias_relu_epilogue(m, k, n, w_layout, out_layout, dt):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (m, k)).astype(DTYPES[dt])
    w = rng.uniform(-1, 1, (k, n)).astype(DTYPES[dt])
    bias = rng.uniform(-1, 1, (n,)).astype(DTYPES[dt])
    exe = check_against_evaluator(mlp_layer_text(m, k, n, dt, w_layout, out_layout), [x, w, bias])
    ref = np.maximum(x.astype(np.float64) @ w + bias, 0)
    np.testing.assert_allclose(exe(x, w, bias), ref, rtol=1e-4, atol=1e-4)


def test_multiply_and_select_epilogue():
    text = """HloModule m

ENTRY e {
  a = f32[70,90]{1,0} parameter(0)
  b = f32[90,50]{1,0} parameter(1)
  y = f32[70,50]{1,0} parameter(2)
  d = f32[70,50]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  p = f32[70,50]{1,0} multiply(d, y)
  zero = f32[] constant(0)
  z = f32[70,50]{1,0} broadcast(zero), dimensions={}
  c = pred[70,50]{1,0} compare(p, z), direction=GT
  half = f32[] constant(0.5)
  h = f32[70,50]{1,0} broadcast(half), dimensions={}
  q = f32[70,50]{1,0} multiply(p, h)
  ROOT r = f32[70,50]{1,0} select(c, p, q)
}
"""
    rng = np.random.default_rng(2)
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((70, 90), (90, 50), (70, 50))]
    check_against_evaluator(text, args)


def test_epilogue_with_other_result_type():
    """A root of another type: the accumulator cannot live in the result."""
    text = """HloModule m

ENTRY e {
  a = f32[45,600]{1,0} parameter(0)
  b = f32[600,38]{1,0} parameter(1)
  d = f32[45,38]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  z = f32[45,38]{1,0} broadcast(zero), dimensions={}
  ROOT c = pred[45,38]{1,0} compare(d, z), direction=GT
}
"""
    rng = np.random.default_rng(3)
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((45, 600), (600, 38))]
    exe = check_against_evaluator(text, args)
    plan = dot_kernel.plan_dot(exe.optimized_hlo.entry.root)
    assert plan is not None and not plan.acc_in_output and plan.kc == 600


_OPERAND_PRODUCERS = """
  wt = f32[128,96]{1,0} transpose(w), dimensions={1,0}
  wn = f32[128,96]{1,0} negate(wt)
  d = f32[64,96]{1,0} dot(x, wn), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,96]{1,0} broadcast(b), dimensions={1}
  ROOT r = f32[64,96]{1,0} add(d, bb)
}
"""


def test_fused_operand_producers():
    """Producers inside a kOutput fusion ahead of the dot are packed through
    their generators (here a transposed, negated weight) by the module's own GEMM."""
    text = """HloModule m

fused {
  x = f32[64,128]{1,0} parameter(0)
  w = f32[96,128]{1,0} parameter(1)
  b = f32[96]{0} parameter(2)""" + _OPERAND_PRODUCERS + """
ENTRY e {
  x = f32[64,128]{1,0} parameter(0)
  w = f32[96,128]{1,0} parameter(1)
  b = f32[96]{0} parameter(2)
  ROOT f = f32[64,96]{1,0} fusion(x, w, b), kind=kOutput, calls=fused
}
"""
    rng = np.random.default_rng(4)
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((64, 128), (96, 128), (96,))]
    exe = check_against_evaluator(text, args)
    assert "xlac.gemm.uk" in exe.optimized_llvm_ir


def test_fusion_leaves_a_matrix_products_operands_to_the_library():
    """The fusion pass fuses the bias add into the dot's output fusion but not
    the transposed, negated weight: the GEMM library reads the dot's operands
    from buffers (no GEMM of the module's own is emitted)."""
    text = """HloModule m

ENTRY e {
  x = f32[64,128]{1,0} parameter(0)
  w = f32[96,128]{1,0} parameter(1)
  b = f32[96]{0} parameter(2)""" + _OPERAND_PRODUCERS
    rng = np.random.default_rng(4)
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((64, 128), (96, 128), (96,))]
    exe = check_against_evaluator(text, args)
    root = exe.optimized_hlo.entry.root
    assert root.opcode == "fusion" and {i.opcode for i in root.attrs["calls"].instructions} == \
        {"parameter", "dot", "broadcast", "add"}
    assert "xlac.gemm.uk" not in exe.optimized_llvm_ir and "xlac_gemm_" in exe.optimized_llvm_ir
    assert any("a matrix product's operands are read from buffers" in d.message
               for d in exe.optimized_hlo.diagnostics)


def test_batched_epilogue_and_column_major_result():
    text = """HloModule m

ENTRY e {
  a = f64[6,33,20]{2,1,0} parameter(0)
  b = f64[6,20,31]{2,1,0} parameter(1)
  y = f64[6,33,31]{1,2,0} parameter(2)
  d = f64[6,33,31]{1,2,0} dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = f64[6,33,31]{1,2,0} subtract(d, y)
}
"""
    rng = np.random.default_rng(5)
    args = [rng.uniform(-1, 1, s) for s in ((6, 33, 20), (6, 20, 31), (6, 33, 31))]
    exe = check_against_evaluator(text, args, rtol=1e-12, atol=1e-12)
    plan = dot_kernel.plan_dot(exe.optimized_hlo.entry.root)
    assert plan.swap  # the result's M dimension is the unit-stride one


def test_other_types_keep_the_elemental_loop():
    text = dot_text("[8,9]{1,0}", "[9,10]{1,0}", "[8,10]{1,0}",
                    "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "s32")
    a = np.arange(72, dtype=np.int32).reshape(8, 9) - 30
    b = np.arange(90, dtype=np.int32).reshape(9, 10) % 7 - 3
    exe = xlac.jit(text)
    np.testing.assert_array_equal(exe(a, b), a @ b)
    assert "xlac.gemm.uk" not in exe.optimized_llvm_ir


def test_bench_kernels_fuse_and_use_the_gemm():
    import pathlib
    bench = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "hlo" / "mlp.hlo"
    exe = xlac.jit(bench.read_text(encoding="utf-8"))
    hlo = exe.optimized_hlo.to_text()
    assert hlo.count("kind=kOutput") == 2 and "relayout" not in hlo
    # Both dots call the GEMM library (their epilogues stay in the module).
    assert re.findall(r"call void @xlac_gemm_\w+_run", exe.optimized_llvm_ir).__len__() == 2
    assert "xlac.gemm.uk" not in exe.optimized_llvm_ir


# ---------------------------------------------------------------------------
# Generated code
# ---------------------------------------------------------------------------

def test_optimised_ir_has_vector_fmas(monkeypatch, pinned_target):
    """The micro-kernel's vectors are the target's registers (16 f32 lanes with
    AVX-512, 8 with AVX2), whatever width LLVM prefers for loops."""
    pinned_target.require_runnable()
    monkeypatch.setattr(dot_kernel, "USE_LIBRARY", False)   # the per-module GEMM
    exe = run_dot((48, 80), (80, 56), (), (), (1,), (0,), "f32")
    ir_text = exe.optimized_llvm_ir
    assert "xlac_gemm_" not in ir_text
    vw = pinned_target.vector_bits // 32
    assert f"<{vw} x float>" in ir_text
    assert f"@llvm.fma.v{vw}f32" in ir_text


def test_plans(pinned_target):
    def plan(text):
        module = xlac.parse_hlo(text)
        return dot_kernel.plan_dot(module.entry.root)
    mm = lambda m, k, n, lo="1,0", dt="f32": dot_text(  # noqa: E731
        f"[{m},{k}]{{1,0}}", f"[{k},{n}]{{1,0}}", f"[{m},{n}]{{{lo}}}",
        "lhs_contracting_dims={1}, rhs_contracting_dims={0}", dt)
    p = plan(mm(1024, 1024, 1024))
    assert p.kind == "gemm" and p.direct and not p.swap and p.n_tasks > 1 and p.shared_b
    assert p.n_tasks <= dot_plan.MAX_TASKS
    p = plan(mm(1024, 1024, 1024, "0,1"))
    assert p.swap and p.direct
    p = plan(mm(8, 8, 8))
    assert p.n_tasks == 1
    assert plan(mm(1, 100, 100)).kind == "gemv" and plan(mm(100, 100, 1)).kind == "gemv"
    assert plan(mm(100, 100, 1)).gemv_form == "rows"
    assert plan(mm(1, 100, 100)).gemv_form == "cols"
    p = plan(mm(8, 300, 300))
    assert p.b_direct and p.blk.mr == 8 and not p.shared_b
    p = plan(mm(300, 300, 10))
    # N = 10 fits one vector with AVX-512 (16 lanes): one vector per tile row;
    # with AVX2 (8 lanes) it takes the default two.
    vw = pinned_target.vector_bits // 32
    assert p.blk.nr == (vw if 10 <= vw else 2 * vw) and p.blk.mr == (12 if pinned_target.vector_bits >= 512 else 6)


# ---------------------------------------------------------------------------
# Tasks run through parallel_for, in any order
# ---------------------------------------------------------------------------

_BODY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
_PARALLEL_FOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)


class _RunOptions(ctypes.Structure):
    # xlac_run_options, runtime/xlac_runtime.h (version 1)
    _fields_ = [("abi_version", ctypes.c_int64), ("runtime_ctx", ctypes.c_void_p),
                ("parallel_for", _PARALLEL_FOR), ("replica_id", ctypes.c_int64),
                ("num_replicas", ctypes.c_int64)] + [(f, ctypes.c_void_p) for f in (
                    "collective", "infeed", "outfeed", "custom_call", "report_error")]


def _run_native(text, args, parallel_for=None):
    lowered = lower(xlac.parse_hlo(text))
    jf = compile_ir(lowered.llvm_module, lowered.entry_name, before_load=gemm_library.ensure_symbols)
    entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p)(jf.address)
    params = lowered.hlo.entry.parameters
    bufs = [np.ascontiguousarray(to_buffer(a, p.shape)) for a, p in zip(args, params)]
    (rshape,) = lowered.assignment.result_shapes
    result = np.zeros(max(1, rshape.buffer_element_count()), rshape.dtype)
    temp = np.zeros(lowered.assignment.temp_size + 64, np.uint8)
    temp_addr = temp.ctypes.data + (-temp.ctypes.data) % 64
    p_arr = (ctypes.c_void_p * len(bufs))(*[x.ctypes.data for x in bufs])
    r_arr = (ctypes.c_void_p * 1)(result.ctypes.data)
    opts = None
    if parallel_for is not None:
        opts = _RunOptions(abi_version=1, runtime_ctx=None, parallel_for=parallel_for,
                           replica_id=0, num_replicas=1)
    entry(ctypes.addressof(r_arr), ctypes.addressof(p_arr), temp_addr,
          ctypes.addressof(opts) if opts is not None else None)
    return from_buffer(result[:rshape.buffer_element_count()], rshape), jf


@pytest.mark.parametrize("case", ["gemm", "gemm_batched", "gemv", "epilogue", "local_b", "b_direct",
                                  "gemv_k_rows", "gemv_k_cols", "gemv_k_dot"])
def test_shuffled_parallel_for_matches_serial(case, monkeypatch):
    monkeypatch.setattr(dot_plan, "GEMV_K_CHUNK", 16 if case.startswith("gemv_k") else 1 << 20)
    monkeypatch.setattr(dot_plan, "TASK_FLOPS", 1 << 12)
    monkeypatch.setattr(dot_plan, "GEMV_TASK_ELEMENTS", 1 << 8)
    monkeypatch.setattr(dot_plan, "GEMV_COLS_ROWS", 64)
    monkeypatch.setattr(dot_plan, "MIN_M_PANELS", 1)
    monkeypatch.setattr(dot_plan, "MIN_N_PANELS", 1)
    if case == "local_b":
        monkeypatch.setattr(dot_plan, "SHARED_B_LIMIT", 0)
    rng = np.random.default_rng(6)
    if case in ("gemm", "local_b"):
        text = dot_text("[67,45]{1,0}", "[45,71]{0,1}", "[67,71]{1,0}",
                        "lhs_contracting_dims={1}, rhs_contracting_dims={0}")
        args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((67, 45), (45, 71))]
    elif case == "gemm_batched":
        text = dot_text("[3,40,20]{2,1,0}", "[3,20,50]{2,1,0}", "[3,40,50]{2,1,0}",
                        "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                        "rhs_contracting_dims={1}", "f64")
        args = [rng.uniform(-1, 1, s) for s in ((3, 40, 20), (3, 20, 50))]
    elif case == "gemv":
        text = dot_text("[300,70]{0,1}", "[70,1]{1,0}", "[300,1]{1,0}",
                        "lhs_contracting_dims={1}, rhs_contracting_dims={0}")
        args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((300, 70), (70, 1))]
    elif case == "gemv_k_rows":     # dot products along K split among tasks, then a relu
        text = mlp_layer_text(3, 700, 1)
        args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((3, 700), (700, 1), (1,))]
    elif case == "gemv_k_cols":     # a vector times a tall matrix: axpys, K split
        text = dot_text("[1,701]{1,0}", "[701,200]{1,0}", "[1,200]{1,0}",
                        "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "f64")
        args = [rng.uniform(-1, 1, s) for s in ((1, 701), (701, 200))]
    elif case == "gemv_k_dot":
        text = dot_text("[1,5003]{1,0}", "[5003,1]{1,0}", "[1,1]{1,0}",
                        "lhs_contracting_dims={1}, rhs_contracting_dims={0}")
        args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((1, 5003), (5003, 1))]
    elif case == "b_direct":
        text = mlp_layer_text(10, 300, 203)
        args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((10, 300), (300, 203), (203,))]
    else:
        text = mlp_layer_text(67, 300, 59)
        args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((67, 300), (300, 59), (59,))]
    plan = dot_kernel.plan_dot(lower(xlac.parse_hlo(text)).hlo.entry.root)
    assert plan.n_tasks > 1
    assert plan.b_direct == (case == "b_direct")
    assert (plan.kind == "gemv" and plan.grid[2] > 1) == case.startswith("gemv_k")
    if case in ("gemm", "epilogue", "local_b"):
        assert plan.shared_b == (case != "local_b")

    calls = []

    def shuffled(runtime_ctx, n, body, ctx):
        order = list(range(n))
        random.Random(n).shuffle(order)
        calls.append(n)
        fn = _BODY(body)
        for i in order:
            fn(ctx, i)
    pf = _PARALLEL_FOR(shuffled)
    serial, _ = _run_native(text, args)
    parallel, _ = _run_native(text, args, pf)
    assert calls and all(n > 1 for n in calls)
    np.testing.assert_array_equal(parallel, serial)
    want = xlac.evaluate(xlac.parse_hlo(text), *args)
    np.testing.assert_allclose(serial, want, rtol=1e-4, atol=1e-4)


def test_jit_with_threads_matches_single_thread():
    text = dot_text("[300,200]{1,0}", "[200,150]{1,0}", "[300,150]{1,0}",
                    "lhs_contracting_dims={1}, rhs_contracting_dims={0}")
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (300, 200)).astype(np.float32)
    b = rng.uniform(-1, 1, (200, 150)).astype(np.float32)
    try:
        one = xlac.jit(text, num_threads=1)(a, b)
        two = xlac.jit(text, num_threads=2)(a, b)
    except TypeError:
        pytest.skip("xlac.jit has no num_threads")
    np.testing.assert_array_equal(one, two)


def test_output_fusion_reading_the_dot_elsewhere_keeps_the_elemental_loop():
    """A kOutput fusion whose root reads the dot at another index (not what the
    fusion pass builds) is declined by the GEMM kernel and still correct."""
    text = """HloModule m

fused {
  p0 = f32[9,7]{1,0} parameter(0)
  p1 = f32[7,9]{1,0} parameter(1)
  d = f32[9,9]{1,0} dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[9,9]{1,0} transpose(d), dimensions={1,0}
}

ENTRY e {
  a = f32[9,7]{1,0} parameter(0)
  b = f32[7,9]{1,0} parameter(1)
  ROOT f = f32[9,9]{1,0} fusion(a, b), kind=kOutput, calls=fused
}
"""
    rng = np.random.default_rng(8)
    a = rng.uniform(-1, 1, (9, 7)).astype(np.float32)
    b = rng.uniform(-1, 1, (7, 9)).astype(np.float32)
    module = xlac.parse_hlo(text)
    assert dot_kernel.plan_dot(module.entry.root) is None
    np.testing.assert_allclose(xlac.jit(text)(a, b), (a @ b).T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bits", [256, 512])
def test_tile_choice(bits, monkeypatch):
    """AVX-512 f32 products at least 4 vectors wide and more than 8 rows take
    the 6 x (4 vectors) tile with a 32 KB B micro-panel (4 rows when 6-row
    panels would pad M by more than 2 %), AVX2 ones at least 3 vectors wide
    4 x (3 vectors); narrow N, short M, f64 and the convolution's request
    (wide=False) keep the others."""
    from xlac.shape import PrimitiveType as PT
    monkeypatch.setattr(gemm_kernel, "host_vector_bits", lambda: bits)
    vw = bits // 32
    big = gemm_kernel.blocking_for(PT.F32, 1024, 1024)
    assert (big.mr, big.nr) == ((6, 4 * vw) if bits == 512 else (4, 3 * vw))
    assert big.mc % big.mr == 0 and big.nc % big.nr == 0
    if bits == 512:
        assert big.kc * big.nr * 4 <= 32 << 10
        assert gemm_kernel.blocking_for(PT.F32, 128, 1024).mr == 4      # 132 rows of 6: 3 % padding
        assert gemm_kernel.blocking_for(PT.F32, 256, 1024).mr == 6      # 258 rows of 6: 0.8 %
    assert (gemm_kernel.blocking_for(PT.F32, 1024, 1024, wide=False).mr,
            gemm_kernel.blocking_for(PT.F32, 1024, 1024, wide=False).nr) == (6, 2 * vw)
    assert gemm_kernel.blocking_for(PT.F32, 1024, 4 * vw - 1).nr == 2 * vw
    assert gemm_kernel.blocking_for(PT.F32, 1024, 6 * vw).nr == (4 if bits == 512 else 3) * vw
    assert gemm_kernel.blocking_for(PT.F32, 1024, 3 * vw - 1).nr == 2 * vw
    if bits == 256:
        assert gemm_kernel.blocking_for(PT.F32, 1024, 128).nr == 2 * vw     # 144 of 24: 12.5 % padding
    assert gemm_kernel.blocking_for(PT.F32, 8, 1024).mr == 8
    assert gemm_kernel.blocking_for(PT.F32, 1024, vw).nr <= vw
    f64 = gemm_kernel.blocking_for(PT.F64, 500, 500)
    assert (f64.mr, f64.nr) == ((4, 4 * (vw // 2)) if bits == 512 else (6, vw))


@pytest.mark.parametrize("ty", ["bf16", "f16"])
def test_half_precision_dot_accumulates_in_f32(ty):
    """A bf16/f16 dot is a sum of products in f32 rounded once to the result
    type, as XLA's CPU backend computes it (and as the evaluator does): with
    these inputs every partial sum is exact in f32, while rounding each one to
    the half type would lose bits."""
    dtype = xlac.Shape(getattr(xlac, ty.upper()), ()).dtype
    text = f"""HloModule half_dot
ENTRY e {{
  a = {ty}[7,64]{{1,0}} parameter(0)
  b = {ty}[64,5]{{1,0}} parameter(1)
  ROOT d = {ty}[7,5]{{1,0}} dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}"""
    rng = np.random.default_rng(3)
    a = (rng.integers(-16, 17, (7, 64)) / 8).astype(dtype)
    b = (rng.integers(-16, 17, (64, 5)) / 8).astype(dtype)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    want = exact.astype(np.float32).astype(dtype)
    np.testing.assert_array_equal(np.asarray(xlac.evaluate(text, a, b)), want)
    for nt in (1, 2):
        np.testing.assert_array_equal(xlac.jit(text, num_threads=nt)(a, b), want)


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("k", [1, 5, 600])
def test_pred_dot_is_an_or_of_ands(k, optimize):
    # Issue 12, item 12: a pred dot was refused as "not supported yet: multiply
    # (for pred)", naming an op the user never wrote.  XLA computes it as an or
    # of ands (no count that could wrap).
    text = dot_text("[3,%d]" % k, "[%d,4]" % k, "[3,4]",
                    "lhs_contracting_dims={1}, rhs_contracting_dims={0}", dt="pred")
    rng = np.random.default_rng(k)
    a = rng.random((3, k)) < 0.2
    b = rng.random((k, 4)) < 0.2
    a[0] = True                                   # a row of all-true: 600 products
    b[:, 0] = True
    want = (a.astype(np.int64) @ b.astype(np.int64)) > 0
    got = xlac.jit(text, optimize=optimize)(a, b)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(xlac.evaluate(text, a, b), want)


@pytest.mark.parametrize("dt", ["f32", "f64"])
@pytest.mark.parametrize("m, k, batch", [(4099, 37, 0), (7, 1029, 0), (3, 5, 0), (11, 64, 3)])
def test_gemv_rows_groups_match_the_evaluator(dt, m, k, batch):
    # The dot-product form sums GEMV_DOT_ROWS rows per pass over the vector,
    # then the rows left one at a time, each with a vector loop and a scalar
    # tail; every row must be its own product.
    from xlac.codegen.kernels import dot_tasks
    np_dt = np.float32 if dt == "f32" else np.float64
    rng = np.random.default_rng(m + k)
    if batch:
        text = dot_text(f"[{batch},{m},{k}]{{2,1,0}}", f"[{batch},{k}]{{1,0}}", f"[{batch},{m}]{{1,0}}",
                        "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                        "rhs_contracting_dims={1}", dt)
        shapes = ((batch, m, k), (batch, k))
    else:
        text = dot_text(f"[{m},{k}]{{1,0}}", f"[{k}]{{0}}", f"[{m}]{{0}}",
                        "lhs_contracting_dims={1}, rhs_contracting_dims={0}", dt)
        shapes = ((m, k), (k,))
    plan = dot_kernel.plan_dot(xlac.parse_hlo(text).entry.root)
    assert plan.kind == "gemv" and plan.gemv_form == "rows" and dot_tasks.GEMV_DOT_ROWS > 1
    args = [rng.uniform(-1, 1, s).astype(np_dt) for s in shapes]
    got = xlac.jit(text)(*args)
    want = xlac.evaluate(xlac.parse_hlo(text), *args)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dt == "f32" else 1e-12, atol=1e-5 if dt == "f32" else 1e-12)


def test_a_dot_whose_columns_the_library_reads_only_swapped_takes_the_library(monkeypatch):
    """``jax.image.resize``'s dot: the rhs's contracting dimension between its
    free ones (B's columns in two strided levels, which the GEMM library does
    not read) is read as A's rows of the swapped product instead (two levels
    are allowed there): the library's GEMM, not a GEMM of the module's own,
    computing what the evaluator does."""
    from xlac.codegen.compiler import lower
    text = """HloModule resize_like
ENTRY e {
  w = f32[96,80]{1,0} parameter(0)
  x = f32[4,96,24,16]{3,2,1,0} parameter(1)
  ROOT d = f32[80,4,24,16]{3,2,1,0} dot(w, x), lhs_contracting_dims={0}, rhs_contracting_dims={1}
}"""
    from xlac.codegen.kernels import dot_plan

    def fallbacks() -> list:     # (a kernel's notes say why the candidates before it declined)
        return [str(d) for d in lower(xlac.parse_hlo(text)).hlo.diagnostics
                if d.source == "kernel-choice" and "not dot.library-gemm" in str(d)]
    assert not fallbacks()
    monkeypatch.setattr(dot_plan, "SWAP_FOR_LIBRARY", False)
    assert fallbacks()
    monkeypatch.undo()
    rng = np.random.default_rng(11)
    w = rng.standard_normal((96, 80)).astype(np.float32)
    x = rng.standard_normal((4, 96, 24, 16)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(xlac.jit(text)(w, x)), np.asarray(xlac.evaluate(text, w, x)),
                               rtol=1e-4, atol=1e-4)
