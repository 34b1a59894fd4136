"""The GEMM library (``xlac/codegen/gemm_library.py``): shape-generic GEMM
tasks compiled once per process, called by the dot kernel through a descriptor.

Each case is checked against a float64 reference and bit for bit against the
per-module GEMM (``dot.USE_LIBRARY = False``): the two must compute the same
tiles in the same order.  Also: which dots take the library and which keep
the per-module code, threads, the disk cache round trip of modules calling
the library, stale library symbols.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xlac
from xlac.codegen import gemm_library
from xlac.codegen.kernels import dot as dot_kernel, dot_plan, dot_tasks

DTYPES = {"f32": np.float32, "f64": np.float64}
TOL = {"f32": 2e-6, "f64": 1e-14}


def shape_text(dims, layout=None):
    layout = layout if layout is not None else tuple(reversed(range(len(dims))))
    return f"[{','.join(map(str, dims))}]{{{','.join(map(str, layout))}}}"


def module_text(name, dt, a, b, out, dims, epilogue=None):
    lines = [f"  a = {dt}{a} parameter(0)", f"  b = {dt}{b} parameter(1)"]
    if epilogue is None:
        lines.append(f"  ROOT d = {dt}{out} dot(a, b), {dims}")
    else:
        lines.append(f"  d = {dt}{out} dot(a, b), {dims}")
        lines += epilogue
    return f"HloModule {name}\n\nENTRY e {{\n" + "\n".join(lines) + "\n}\n"


def compile_both(text, num_threads=None):
    """The module through the library and through the per-module GEMM (each
    ``llvm_ir`` made while its setting holds: it is lowered again when asked)."""
    lib = xlac.jit(text, num_threads=num_threads)
    lib.llvm_ir
    old = dot_kernel.USE_LIBRARY
    dot_kernel.USE_LIBRARY = False
    try:
        # Another module name: the in-memory cache must not hand back the library build.
        per_module = xlac.jit(text.replace("HloModule ", "HloModule permodule_", 1), num_threads=num_threads)
        per_module.llvm_ir
    finally:
        dot_kernel.USE_LIBRARY = old
    return lib, per_module


# (lhs dims, rhs dims, lhs layout, rhs layout, out layout, dimension numbers, einsum)
CASES = [
    # row-major operands, edges in M and N (not multiples of the tile), one and several K blocks
    ((37, 300), (300, 45), None, None, None, "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "mk,kn->mn"),
    ((130, 520), (520, 77), None, None, None, "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "mk,kn->mn"),
    # K blocks that are not whole multiples of the rows B's streaming pack copies at once (gemm.PACK_ROWS)
    ((37, 263), (263, 50), None, None, None, "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "mk,kn->mn"),
    ((40, 31), (31, 75), None, None, None, "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "mk,kn->mn"),
    # column-major A (M unit-stride) and transposed B (K unit-stride)
    ((50, 70), (70, 66), (0, 1), (0, 1), None, "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "mk,kn->mn"),
    # transposed operands through dimension numbers
    ((70, 50), (66, 70), None, None, None, "lhs_contracting_dims={0}, rhs_contracting_dims={1}", "km,nk->mn"),
    # column-major result: computed transposed (operands swap roles)
    ((40, 33), (33, 57), None, None, (0, 1), "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "mk,kn->mn"),
    # batch dimensions, batch not outermost in one operand
    ((5, 19, 23), (5, 23, 41), None, (1, 0, 2), None,
     "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}", "bmk,bkn->bmn"),
    # a short M (B read in place) and a narrow N (12 x 1-vector tiles)
    ((7, 200), (200, 90), None, None, None, "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "mk,kn->mn"),
    ((90, 64), (64, 11), None, None, None, "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "mk,kn->mn"),
    # both operands strided in both groups (a padded-free but odd layout: the general packing)
    ((3, 20, 30), (30, 3, 25), (0, 2, 1), (1, 2, 0), None,
     "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}", "bmk,kbn->bmn"),
]


@pytest.mark.parametrize("dt", ["f32", "f64"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_library_matches_reference_and_per_module_gemm(case, dt):
    a_dims, b_dims, la, lb, lo, dims, spec = CASES[case]
    rng = np.random.default_rng(case)
    a = rng.uniform(-1, 1, a_dims).astype(DTYPES[dt])
    b = rng.uniform(-1, 1, b_dims).astype(DTYPES[dt])
    ref = np.einsum(spec, a.astype(np.float64), b.astype(np.float64))
    scale = np.einsum(spec, np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    text = module_text(f"lib{case}_{dt}", dt, shape_text(a_dims, la), shape_text(b_dims, lb),
                       shape_text(ref.shape, lo), dims)
    lib, per_module = compile_both(text)
    assert "xlac_gemm_" in lib.llvm_ir and "xlac_gemm_" not in per_module.llvm_ir
    got = lib(a, b)
    assert np.all(np.abs(got - ref) <= TOL[dt] * (scale + 1))
    np.testing.assert_array_equal(got, per_module(a, b))


@pytest.mark.parametrize("use_library", [True, False])
@pytest.mark.parametrize("dt", ["f32", "f64"])
def test_a_read_in_place_gives_the_packed_bits(dt, use_library, monkeypatch):
    """A row-major A is read in place by the strided-A micro-kernel (only a
    partial last row panel packed): the same bits as packing it, with edges
    in M and N, several K blocks, a batch, one and two threads."""
    rng = np.random.default_rng(7)
    monkeypatch.setattr(dot_kernel, "USE_LIBRARY", use_library)
    for k, (a_dims, b_dims, dims, spec) in enumerate([
            ((133, 700), (700, 70), "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "mk,kn->mn"),
            ((3, 37, 90), (3, 90, 130), "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
             "rhs_contracting_dims={1}", "bmk,bkn->bmn")]):
        a = rng.uniform(-1, 1, a_dims).astype(DTYPES[dt])
        b = rng.uniform(-1, 1, b_dims).astype(DTYPES[dt])
        out = np.einsum(spec, a, b).shape
        text = module_text(f"ainplace{k}_{dt}_{use_library}", dt, shape_text(a_dims), shape_text(b_dims),
                           shape_text(out), dims)
        direct = xlac.jit(text)
        plan = dot_kernel.plan_dot(direct.lowered.hlo.entry.root)
        assert plan.a_direct
        monkeypatch.setattr(dot_plan, "READ_A_IN_PLACE", False)
        packed = xlac.jit(text.replace("HloModule ", "HloModule packed_", 1))
        assert not dot_kernel.plan_dot(packed.lowered.hlo.entry.root).a_direct
        monkeypatch.setattr(dot_plan, "READ_A_IN_PLACE", True)
        for threads in (1, 2):
            got = xlac.jit(text, num_threads=threads)(a, b)
            np.testing.assert_array_equal(got, packed(a, b))
        ref = np.einsum(spec, a.astype(np.float64), b.astype(np.float64))
        np.testing.assert_allclose(got, ref, rtol=1e-4 if dt == "f32" else 1e-12, atol=1e-4 if dt == "f32" else 1e-12)


def test_a_rows_sharing_l1_sets_are_packed():
    """A row-major A whose rows are a multiple of 4 KB apart (every row in
    one L1 set) is packed when several B panels reuse it; other row strides,
    and an A that one B panel uses (a narrow N), are read in place."""
    assert dot_plan.rows_share_l1_sets(1024 * 4, 6) and dot_plan.rows_share_l1_sets(512 * 4, 6)
    assert not dot_plan.rows_share_l1_sets(784 * 4, 6) and not dot_plan.rows_share_l1_sets(64 * 4, 6)
    dims = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
    rng = np.random.default_rng(11)
    for m, k, n, in_place in ((300, 1024, 512, False), (300, 1000, 512, True), (300, 1024, 10, True)):
        text = module_text(f"aliasing_{m}_{k}_{n}", "f32", shape_text((m, k)), shape_text((k, n)),
                           shape_text((m, n)), dims)
        exe = xlac.jit(text)
        assert dot_kernel.plan_dot(exe.lowered.hlo.entry.root).a_direct == in_place, (m, k, n)
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        np.testing.assert_allclose(exe(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_later_k_blocks_prefetch_the_c_tile():
    """The micro-kernel prefetches its C tile for writing when it adds to C
    (a later K block), not when it overwrites it (the first)."""
    from llvmlite import ir
    from xlac.codegen import gemm
    from xlac.shape import PrimitiveType as PT
    module = ir.Module("uk")
    fn = gemm.micro_kernel(module, PT.F32, 6, 64, 16)
    text = str(fn)
    assert text.count("call void @\"llvm.prefetch.p0\"") == 6 * 4      # 6 rows of 4 lines
    entry = text.split("\nk:")[0]
    assert "br i1 %\"accumulate\"" in entry


def test_micro_kernel_calls_prefetch_the_next_b_panel():
    """Each micro-kernel call of an M block prefetches into L2 a slice of the
    B micro-panel that comes next (``gemm_task.PREFETCH_NEXT_B``), in the
    library and in a module's own GEMM."""
    from xlac.shape import PrimitiveType as PT
    _, text = gemm_library.variant_ir(gemm_library.Variant(PT.F32, 6, 64, 16, "k", "n"))
    assert '"pfb.head"' in text or "pfb.head:" in text
    assert "@\"llvm.prefetch.p0\"(ptr %" in text and "i32 0, i32 2, i32 1)" in text


@pytest.mark.parametrize("threads", [1, 2])
def test_threads_shared_b_and_epilogue_bitwise(threads):
    """A dot big enough for several tasks (B packed once, shared) with a bias +
    relu epilogue applied per finished tile: the same bits with 1 and 2
    threads and as the per-module GEMM."""
    text = module_text("libthreads", "f32", "[300,500]{1,0}", "[500,260]{1,0}", "[300,260]{1,0}",
                       "lhs_contracting_dims={1}, rhs_contracting_dims={0}", [
                           "  c = f32[260]{0} parameter(2)",
                           "  cb = f32[300,260]{1,0} broadcast(c), dimensions={1}",
                           "  s = f32[300,260]{1,0} add(d, cb)",
                           "  zero = f32[] constant(0)",
                           "  z = f32[300,260]{1,0} broadcast(zero), dimensions={}",
                           "  ROOT r = f32[300,260]{1,0} maximum(s, z)"])
    rng = np.random.default_rng(7)
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((300, 500), (500, 260), (260,))]
    lib, per_module = compile_both(text, num_threads=threads)
    plan = dot_kernel.plan_dot(lib.optimized_hlo.entry.root)
    assert plan.n_tasks > 1 and plan.shared_b
    got = lib(*args)
    want = np.maximum(args[0].astype(np.float64) @ args[1] + args[2], 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got, per_module(*args))
    np.testing.assert_array_equal(got, xlac.jit(text, num_threads=3 - threads)(*args))


def test_serial_dot_epilogue_runs_once_after_the_call():
    """A dot small enough for one task applies its fusion's epilogue in one
    vectorised pass over C after the library's call (no per-tile epilogue
    function), on an attention-style [4,16,4,8] result with a [4,8] bias:
    the same bits as the per-module GEMM's tile epilogue."""
    text = module_text("libserialepi", "f32", "[4,16,32]{2,1,0}", "[32,4,8]{2,1,0}", "[4,16,4,8]{3,2,1,0}",
                       "lhs_contracting_dims={2}, rhs_contracting_dims={0}", [
                           "  c = f32[4,8]{1,0} parameter(2)",
                           "  cb = f32[4,16,4,8]{3,2,1,0} broadcast(c), dimensions={2,3}",
                           "  s = f32[4,16,4,8]{3,2,1,0} add(d, cb)",
                           "  ROOT r = f32[4,16,4,8]{3,2,1,0} tanh(s)"])
    rng = np.random.default_rng(3)
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((4, 16, 32), (32, 4, 8), (4, 8))]
    lib, per_module = compile_both(text)
    plan = dot_kernel.plan_dot(lib.optimized_hlo.entry.root)
    assert plan.grids.max_workers == 1
    assert "xlac_gemm_" in lib.llvm_ir and ".epilogue" not in lib.llvm_ir
    got = lib(*args)
    want = np.tanh(np.einsum("bsk,khd->bshd", args[0].astype(np.float64), args[1]) + args[2])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got, per_module(*args))


@pytest.mark.parametrize("use_library", [True, False])
def test_shared_b_contention_packs_own_copy(use_library, monkeypatch):
    """A task that finds a block of the shared B being packed by another task
    packs its own copy (``gemm.pack_once``): with every flag reading "being
    packed" all tasks take that path, and the result is the same bits."""
    text = module_text("libcontend", "f32", "[300,500]{1,0}", "[500,260]{1,0}", "[300,260]{1,0}",
                       "lhs_contracting_dims={1}, rhs_contracting_dims={0}")
    rng = np.random.default_rng(9)
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((300, 500), (500, 260))]
    monkeypatch.setattr(dot_kernel, "USE_LIBRARY", use_library)
    tag = "lib" if use_library else "mod"
    normal = xlac.jit(text.replace("libcontend", f"normal_{tag}"), num_threads=2)
    assert dot_kernel.plan_dot(normal.optimized_hlo.entry.root).shared_b
    monkeypatch.setattr(dot_tasks, "FLAG_FILL", 1)
    contended = xlac.jit(text.replace("libcontend", f"contended_{tag}"), num_threads=2)
    np.testing.assert_array_equal(contended(*args), normal(*args))
    np.testing.assert_allclose(normal(*args), args[0].astype(np.float64) @ args[1], rtol=1e-4, atol=1e-4)


def _variant(text):
    exe = xlac.jit(text)
    root = exe.optimized_hlo.entry.root
    plan = dot_kernel.plan_dot(root)
    return plan, dot_kernel.library_variant(root, plan)


def test_fallback_choice():
    dims = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
    # A plain row-major product: the library, A read in place (its K index is
    # unit-stride), B packed the fast way.
    plan, v = _variant(module_text("fb0", "f32", "[64,80]{1,0}", "[80,96]{1,0}", "[64,96]{1,0}", dims))
    assert v is not None and (v.a_kind, v.b_kind) == ("d", "n") and (v.mr, v.nr) == (plan.blk.mr, plan.blk.nr)
    # A column-major A: packed (its M index unit-stride).
    plan, v = _variant(module_text("fb5", "f32", "[64,80]{0,1}", "[80,96]{1,0}", "[64,96]{1,0}", dims))
    assert v is not None and (v.a_kind, v.b_kind) == ("m", "n") and not plan.a_direct
    # An operand computed inside the fusion (read through its generator): per
    # module (written fused: the fusion pass leaves a matrix product's operands out).
    text = """HloModule fb1

fused {
  a = f32[64,80]{1,0} parameter(0)
  b = f32[96,80]{1,0} parameter(1)
  c = f32[64,96]{1,0} parameter(2)
  bt = f32[80,96]{1,0} transpose(b), dimensions={1,0}
  bn = f32[80,96]{1,0} negate(bt)
  d = f32[64,96]{1,0} dot(a, bn), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64,96]{1,0} add(d, c)
}

ENTRY e {
  a = f32[64,80]{1,0} parameter(0)
  b = f32[96,80]{1,0} parameter(1)
  c = f32[64,96]{1,0} parameter(2)
  ROOT f = f32[64,96]{1,0} fusion(a, b, c), kind=kOutput, calls=fused
}
"""
    plan, v = _variant(text)
    assert plan is not None and v is None
    # An epilogue that changes the element type (C cannot accumulate in the result): per module.
    plan, v = _variant(module_text("fb2", "f32", "[64,80]{1,0}", "[80,96]{1,0}", "[64,96]{1,0}", dims, [
        "  ROOT r = f64[64,96]{1,0} convert(d)"]))
    assert plan is not None and not plan.acc_in_output and v is None
    # Batch dimensions that are not one stride apart but split in two levels
    # that are (attention's (B, H) of [B, S, H, D]): the library.
    plan, v = _variant(module_text(
        "fb3", "f32", "[3,4,20,30]{3,1,2,0}", "[3,4,30,25]{3,2,1,0}", "[3,4,20,25]{3,2,1,0}",
        "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}"))
    assert plan is not None and v is not None
    # Three batch dimensions no split puts one stride apart: per module.
    plan, v = _variant(module_text(
        "fb6", "f32", "[2,3,4,20,30]{4,2,3,0,1}", "[2,3,4,30,25]{4,3,2,1,0}", "[2,3,4,20,25]{4,3,2,1,0}",
        "lhs_batch_dims={0,1,2}, lhs_contracting_dims={4}, rhs_batch_dims={0,1,2}, rhs_contracting_dims={3}"))
    assert plan is not None and v is None
    # Matrix-vector products keep their own streaming loops.
    plan, v = _variant(module_text("fb4", "f32", "[64,80]{1,0}", "[80,1]{1,0}", "[64,1]{1,0}", dims))
    assert plan.kind == "gemv" and v is None


def test_library_symbols_carry_the_code_hash():
    v = gemm_library.Variant(xlac.F32, 6, 32, 16, "k", "n")
    h, text = gemm_library.variant_ir(v)
    name = gemm_library.symbol(v, "run")
    assert name == f"xlac_gemm_{h}_{v.tag}_run" and f"@{name}" in text or f'@"{name}"' in text
    assert gemm_library._parse_name(name.encode()) == (h, v)
    stale = name.replace(h, "0" * 16).encode()
    with pytest.raises(RuntimeError, match="another library version"):
        gemm_library.ensure_symbols(b"\0" + stale + b"\0")


@pytest.mark.parametrize("radix,sign,lanes,m", [(8, -1, 4, 0), (5, 1, 1, 5), (13, -1, 2, 1)])
def test_fft_pass_symbols_name_their_variant(radix, sign, lanes, m):
    from xlac.codegen.fft_functions import FftVariant
    v = FftVariant(xlac.F64, radix, sign, lanes, m)
    h, text = gemm_library.variant_ir(v)
    name = gemm_library.symbol(v, "pass")
    assert f"@{name}" in text or f'@"{name}"' in text
    assert gemm_library._parse_name(name.encode()) == (h, v)
    assert gemm_library._parse_name(name.replace("_fft13_", "_fft17_").replace("_fft8_", "_fft9_")
                                    .replace("_fft5_", "_fft6_").encode()) is None


def test_disk_cache_round_trip_with_library_symbols(tmp_path):
    """A fresh process compiles a dot (storing the module and the library
    variant); a second fresh process loads both from the cache: no LLVM at all."""
    script = textwrap.dedent("""
        import sys, numpy as np, xlac
        from xlac.codegen import gemm_library
        text = '''HloModule diskgemm
        ENTRY e {
          a = f32[70,90]{1,0} parameter(0)
          b = f32[90,50]{1,0} parameter(1)
          ROOT d = f32[70,50]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
        }
        '''
        exe = xlac.jit(text, num_threads=2)     # 2 threads on any machine: the pool's code too
        a = np.arange(70 * 90, dtype=np.float32).reshape(70, 90) % 7 - 3
        b = np.arange(90 * 50, dtype=np.float32).reshape(90, 50) % 5 - 2
        np.testing.assert_array_equal(exe(a, b), a @ b)
        print(exe.from_cache, *sorted(origin for origin, _ in gemm_library.loaded_from.values()))
    """)
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path))
    env.pop("XLAC_LIBRARY_CACHE_DIR", None)        # the library follows XLAC_CACHE_DIR
    env.pop("XLAC_GUARD_PAGES", None)              # guard-page mode calls from Python: no fast-call object
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, encoding="utf-8")
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["None", "compiled"]
    # The module, the library variant, the thread pool's code and the executables' fast call.
    assert len(list(tmp_path.glob("*.o"))) == 4
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, encoding="utf-8")
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["disk", "disk"]


@pytest.mark.parametrize("a, b, out, dims", [
    # attention's scores: Q [B, S, H, D] . K [B, T, H, D] over D, batch (B, H)
    ("[4,16,4,8]{3,2,1,0}", "[4,16,4,8]{3,2,1,0}", "[4,4,16,16]{3,2,1,0}",
     "lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}"),
    # and its values: P [B, H, S, T] . V [B, T, H, D] over T
    ("[4,4,16,16]{3,2,1,0}", "[4,16,4,8]{3,2,1,0}", "[4,4,16,8]{3,2,1,0}",
     "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={1}"),
    # a result whose batch dimensions are the ones apart
    ("[3,5,20,30]{3,2,1,0}", "[3,5,30,25]{3,2,1,0}", "[3,5,20,25]{3,1,2,0}",
     "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}"),
])
def test_batch_in_two_levels_matches_the_module_gemm(a, b, out, dims):
    """Batch dimensions not one stride apart go through the library in two
    levels, with the bits of the per-module GEMM and near the evaluator."""
    text = module_text("two_levels", "f32", a, b, out, dims)
    plan, v = _variant(text)
    assert v is not None
    lib, own = compile_both(text)
    rng = np.random.default_rng(7)
    args = [rng.uniform(-1, 1, xlac.shape("f32" + s.split("{")[0]).dimensions).astype(np.float32) for s in (a, b)]
    got, ref = lib(*args), own(*args)
    np.testing.assert_allclose(got, xlac.evaluate(text, *args), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("a, b, out, dims, levels", [
    # attention's output projection: O [B, H, D, S] over (H, D), rows (B, S) not one stride apart
    ("[4,4,8,16]{3,2,1,0}", "[4,8,32]{2,1,0}", "[4,16,32]{2,1,0}",
     "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}", "m"),
    # its weight gradient: K = (B, S) of [B, H, D, S], edges in M, N and K
    ("[3,5,7,17]{3,2,1,0}", "[3,17,20]{2,1,0}", "[5,7,20]{2,1,0}",
     "lhs_contracting_dims={0,3}, rhs_contracting_dims={0,1}", "k"),
    # heads and head dimension apart in K and the rows in M: [B, S, H, D] stored (B, H, S, D)
    ("[4,16,4,8]{3,1,2,0}", "[32,4,8]{2,1,0}", "[4,16,32]{2,1,0}",
     "lhs_contracting_dims={2,3}, rhs_contracting_dims={1,2}", "mk"),
    # a K of several blocks in two levels (24 x 33 of [24, 6, 40, 33])
    ("[24,6,40,33]{3,2,1,0}", "[24,33,24]{2,1,0}", "[6,40,24]{2,1,0}",
     "lhs_contracting_dims={0,3}, rhs_contracting_dims={0,1}", "k"),
])
@pytest.mark.parametrize("threads", [1, 2])
def test_rows_and_k_in_two_levels_match_the_module_gemm(a, b, out, dims, levels, threads, monkeypatch):
    """A's row group and the K group not one stride apart go through the
    library in two levels (a variant of its own, when switched on), near the
    per-module GEMM's result and the evaluator's, with a bias epilogue too."""
    from xlac.codegen.kernels import dot_plan
    monkeypatch.setattr(dot_plan, "TWO_LEVEL_ROWS_AND_K", True)
    dims_out = xlac.shape("f32" + out.split("{")[0]).dimensions
    bias = dims_out[-1]
    for epilogue in (None, [f"  c = f32[{bias}]{{0}} constant({{{', '.join(['0.5'] * bias)}}})",
                            f"  cb = f32{out} broadcast(c), dimensions={{{len(dims_out) - 1}}}",
                            f"  ROOT r = f32{out} add(d, cb)"]):
        text = module_text("rows_k_levels", "f32", a, b, out, dims, epilogue)
        plan, v = _variant(text)
        assert v is not None and v.levels == levels, v
        lib, own = compile_both(text, num_threads=threads)
        rng = np.random.default_rng(11)
        args = [rng.uniform(-1, 1, xlac.shape("f32" + s.split("{")[0]).dimensions).astype(np.float32)
                for s in (a, b)]
        got, ref = lib(*args), own(*args)
        # (sums of up to 792 products of [-1, 1]: float32 rounding of ~1e-5 either way)
        np.testing.assert_allclose(got, xlac.evaluate(text, *args), rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)


def test_rows_in_two_levels_stay_per_module_when_switched_off(monkeypatch):
    from xlac.codegen.kernels import dot_plan
    text = module_text("m2", "f32", "[4,4,8,16]{3,2,1,0}", "[4,8,32]{2,1,0}", "[4,16,32]{2,1,0}",
                       "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}")
    plan, v = _variant(text)
    assert v is not None and v.levels, v                # the library's by default
    monkeypatch.setattr(dot_plan, "TWO_LEVEL_ROWS_AND_K", False)
    plan, v = _variant(text)
    assert plan is not None and plan.kind == "gemm" and v is None


def test_k_in_three_levels_stays_per_module(monkeypatch):
    from xlac.codegen.kernels import dot_plan
    monkeypatch.setattr(dot_plan, "TWO_LEVEL_ROWS_AND_K", True)
    # K = (H, S, D) of [H, D, S, M] contracted in (H, S, D) order: no cut
    # puts both levels one stride apart.
    plan, v = _variant(module_text(
        "k3", "f32", "[4,8,16,10]{3,2,1,0}", "[4,16,8,32]{3,2,1,0}", "[10,32]{1,0}",
        "lhs_contracting_dims={0,2,1}, rhs_contracting_dims={0,1,2}"))
    assert plan is not None and plan.kind == "gemm" and v is None
