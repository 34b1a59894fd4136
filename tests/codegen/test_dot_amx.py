"""The AMX GEMM kernels (``codegen/gemm_amx.py``): ``dot.library-gemm.amx-bf16``
(``tdpbf16ps``, f32 accumulators) and ``dot.library-gemm.amx-int8``
(``tdpbssd``/``tdpbsud``/``tdpbusd``/``tdpbuud``, s32 accumulators).

Checked against the evaluator: 8-bit integer dots bit for bit (s32
wrap-around included), bf16 dots within one ulp of the result type plus f32
reassociation, as the vector kernels' tests do (``test_dot_native.py``);
``tdpbf16ps`` flushes denormals (pinned).  Odd M, N (off the 16 x 16 tiles,
and the one-tile shapes for short and narrow products), K off a tile's 32
bf16 / 64 bytes, every layout of A, B and C, batches, several K blocks,
threads, a fusion epilogue; the choice of kernel for a target without AMX,
with the kernels switched off, and for a process Linux refuses tile data.
"""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from xlac.codegen import gemm_library, gemm_native, target
from xlac.codegen.compiler import lower
from xlac.runtime import amx

BF16 = xlac.Shape(xlac.BF16, ()).dtype
INT = {"s8": np.int8, "u8": np.uint8}
HAS_AMX = gemm_native.unavailable("amxbf16") is None and gemm_native.unavailable("amxint8") is None
needs_amx = pytest.mark.skipif(not HAS_AMX, reason="the host (or this process) has no AMX bf16/int8")

MATMUL = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
BATCHED = "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"
# (lhs, rhs, result layouts): row-major, column-major A, a transposed B, a column-major result, all three.
LAYOUTS = [("1,0", "1,0", "1,0"), ("0,1", "1,0", "1,0"), ("1,0", "0,1", "1,0"), ("1,0", "1,0", "0,1"),
           ("0,1", "0,1", "0,1")]


@pytest.fixture(autouse=True)
def fresh_programs():
    """Every test compiles its modules (the in-memory cache keys on the text,
    not on the kernel switches the tests set)."""
    xlac.clear_caches()
    yield
    xlac.clear_caches()


def module(lt, rt, ot, a_dims, b_dims, out_dims, dims, la=None, lb=None, lo=None, epilogue=""):
    def shape(t, d, lay):
        lay = lay or ",".join(str(i) for i in reversed(range(len(d))))
        return f"{t}[{','.join(map(str, d))}]{{{lay}}}"
    lines = [f"  a = {shape(lt, a_dims, la)} parameter(0)", f"  b = {shape(rt, b_dims, lb)} parameter(1)"]
    if epilogue:
        lines += [f"  d = {shape(ot, out_dims, lo)} dot(a, b), {dims}", epilogue]
    else:
        lines += [f"  ROOT d = {shape(ot, out_dims, lo)} dot(a, b), {dims}"]
    return "HloModule amx\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


def kernel_of(text) -> list:
    return [str(d) for d in lower(xlac.parse_hlo(text)).hlo.diagnostics if d.source == "kernel-choice"]


def ints(rng, t, shape, extreme=False):
    info = np.iinfo(INT[t])
    if extreme:
        return np.full(shape, info.min if t == "s8" else info.max, INT[t])
    return rng.integers(info.min, int(info.max) + 1, shape).astype(INT[t])


def check_exact(text, args, **jit):
    got, want = xlac.jit(text, **jit)(*args), xlac.evaluate(text, *args)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    return got


def check_bf16(text, ot, args, k, **jit):
    """Within one ulp of ``ot`` plus f32 reassociation over ``k`` products of size <= 1."""
    got = np.asarray(xlac.jit(text, **jit)(*args)).astype(np.float64)
    want = np.asarray(xlac.evaluate(text, *args)).astype(np.float64)
    ulp = 2.0 ** -7 if ot == "bf16" else 2.0 ** -23
    bound = ulp * np.abs(want) + 4e-7 * k + 1e-30
    err = np.abs(got - want)
    assert np.all(err <= bound), f"max error {err.max()} (bound at it {bound.flat[err.argmax()]})"
    return got


def bf16_inputs(a_dims, b_dims, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, a_dims).astype(BF16), rng.uniform(-1, 1, b_dims).astype(BF16)


# ---------------------------------------------------------------------------
# bf16: tdpbf16ps
# ---------------------------------------------------------------------------

@needs_amx
@pytest.mark.parametrize("ot", ["f32", "bf16"])
@pytest.mark.parametrize("la,lb,lo", LAYOUTS)
def test_bf16_layouts_and_odd_sizes(ot, la, lb, lo):
    m, k, n = 37, 45, 71          # off the tiles; K off 32 (the last k tile partly zeros), odd
    text = module("bf16", "bf16", ot, (m, k), (k, n), (m, n), MATMUL, la, lb, lo)
    check_bf16(text, ot, bf16_inputs((m, k), (k, n)), k)
    (note,) = kernel_of(text)
    assert note.startswith("kernel d: dot.library-gemm.amx-bf16 (")
    assert "runs the native AMX tdpbf16ps kernel" in note


@needs_amx
@pytest.mark.parametrize("m,k,n", [(5, 70, 200), (200, 33, 9), (12, 1, 12), (16, 32, 16), (17, 64, 33)])
def test_bf16_short_and_narrow_products(m, k, n):
    # One tile of rows (M <= 16) or of columns (N <= 16), tiles just full or one over.
    text = module("bf16", "bf16", "f32", (m, k), (k, n), (m, n), MATMUL)
    check_bf16(text, "f32", bf16_inputs((m, k), (k, n), m), k)
    assert kernel_of(text)[0].startswith("kernel d: dot.library-gemm.amx-bf16 (")


@needs_amx
@pytest.mark.parametrize("m", [16, 64, 70])
def test_column_major_a_transposed_while_packed(m):
    # A's rows unit-stride: whole k tiles of full panels (16 or 32 rows) are
    # transposed in registers, the rest packed element by element.
    k, n = 600, 40
    text = module("bf16", "bf16", "f32", (m, k), (k, n), (m, n), MATMUL, "0,1")
    check_bf16(text, "f32", bf16_inputs((m, k), (k, n), m), k)
    text = module("u8", "s8", "s32", (m, k), (k, n), (m, n), MATMUL, "0,1")
    rng = np.random.default_rng(m)
    check_exact(text, (ints(rng, "u8", (m, k)), ints(rng, "s8", (k, n))))


@needs_amx
def test_bf16_batched_long_k_and_threads():
    # K of several K blocks (256 bf16 each) and a partial last one.
    text = module("bf16", "bf16", "bf16", (3, 40, 1101), (3, 1101, 70), (3, 40, 70), BATCHED)
    check_bf16(text, "bf16", bf16_inputs((3, 40, 1101), (3, 1101, 70), 2), 1101)
    text = module("bf16", "bf16", "f32", (260, 701), (701, 300), (260, 300), MATMUL)
    args = bf16_inputs((260, 701), (701, 300), 3)
    one = check_bf16(text, "f32", args, 701, num_threads=1)
    two = check_bf16(text, "f32", args, 701, num_threads=2)
    np.testing.assert_array_equal(one, two)


@needs_amx
def test_bf16_fusion_epilogue():
    epi = ("  c = f32[70]{0} parameter(2)\n  cb = f32[40,70]{1,0} broadcast(c), dimensions={1}\n"
           "  s = f32[40,70]{1,0} add(d, cb)\n  z = f32[] constant(0)\n"
           "  zb = f32[40,70]{1,0} broadcast(z), dimensions={}\n  ROOT r = f32[40,70]{1,0} maximum(s, zb)")
    text = module("bf16", "bf16", "f32", (40, 300), (300, 70), (40, 70), MATMUL, epilogue=epi)
    a, b = bf16_inputs((40, 300), (300, 70), 4)
    c = np.random.default_rng(4).uniform(-1, 1, 70).astype(np.float32)
    check_bf16(text, "f32", (a, b, c), 300)
    assert any("dot.library-gemm.amx-bf16" in n for n in kernel_of(text))


@needs_amx
def test_bf16_flushes_denormals():
    # tdpbf16ps treats denormal inputs as zero: 1e-39 is an f32/bf16 denormal.
    text = module("bf16", "bf16", "f32", (2, 2), (2, 16), (2, 16), MATMUL)
    a = np.array([[1e-39, 0], [1.0, 0]], BF16)
    b = np.full((2, 16), 1.0, BF16)
    got = xlac.jit(text)(a, b)
    assert got[0, 0] == 0.0 and got[1, 0] == 1.0
    assert xlac.evaluate(text, a, b)[0, 0] != 0.0


# ---------------------------------------------------------------------------
# 8-bit integers: tdpb[su][su]d
# ---------------------------------------------------------------------------

@needs_amx
@pytest.mark.parametrize("lt,rt", [("s8", "s8"), ("u8", "s8"), ("s8", "u8"), ("u8", "u8")])
@pytest.mark.parametrize("la,lb,lo", LAYOUTS)
def test_int8_every_sign_and_layout_bit_equal(lt, rt, la, lb, lo):
    m, k, n = 37, 77, 71          # off the tiles; K off 64 and off 4
    text = module(lt, rt, "s32", (m, k), (k, n), (m, n), MATMUL, la, lb, lo)
    rng = np.random.default_rng(k)
    check_exact(text, (ints(rng, lt, (m, k)), ints(rng, rt, (k, n))))
    (note,) = kernel_of(text)
    assert note.startswith("kernel d: dot.library-gemm.amx-int8 (")


@needs_amx
@pytest.mark.parametrize("lt,rt", [("s8", "s8"), ("u8", "u8"), ("u8", "s8")])
def test_int8_extremes_long_k_and_wrap_around(lt, rt):
    # K of several K blocks (512 each); u8 x u8 at 255 over 70,001 products wraps in s32.
    for k, n in ((1301, 40), (70001, 17)):
        text = module(lt, rt, "s32", (9, k), (k, n), (9, n), MATMUL)
        rng = np.random.default_rng(1)
        check_exact(text, (ints(rng, lt, (9, k), True), ints(rng, rt, (k, n), True)))


@needs_amx
def test_int8_batched_threads_and_other_result_types():
    text = module("s8", "s8", "s32", (3, 19, 301), (3, 301, 45), (3, 19, 45), BATCHED)
    rng = np.random.default_rng(2)
    args = (ints(rng, "s8", (3, 19, 301)), ints(rng, "s8", (3, 301, 45)))
    assert np.array_equal(check_exact(text, args, num_threads=1), check_exact(text, args, num_threads=2))
    for ot in ("s8", "u32", "s64"):
        text = module("s8", "u8", ot, (20, 33), (33, 24), (20, 24), MATMUL)
        check_exact(text, (ints(rng, "s8", (20, 33), True), ints(rng, "u8", (33, 24), True)))


# ---------------------------------------------------------------------------
# The choice
# ---------------------------------------------------------------------------

def test_without_amx_the_vector_kernels_run(monkeypatch):
    bf = module("bf16", "bf16", "f32", (40, 64), (64, 48), (40, 48), MATMUL)
    i8 = module("s8", "s8", "s32", (24, 30), (30, 20), (24, 20), MATMUL)
    rng = np.random.default_rng(5)
    i8_args = (ints(rng, "s8", (24, 30)), ints(rng, "s8", (30, 20)))
    with target.override(features="-amx-tile,-amx-bf16,-amx-int8"):
        (note,) = kernel_of(bf)
        # (an AVX2 host lacks avx512f too)
        assert re.search(r"not dot.library-gemm.amx-bf16: the target lacks [^;]*amx-tile, amx-bf16", note)
        if gemm_native.unavailable("bf16") is None:
            assert note.startswith("kernel d: dot.library-gemm.bf16 (")
        else:
            assert note.startswith("kernel d: dot.library-gemm.widen (")
        if not gemm_native.missing_features("vnni"):
            (note,) = kernel_of(i8)
            assert note.startswith("kernel d: dot.library-gemm.vnni (")
            assert re.search(r"not dot.library-gemm.amx-int8: the target lacks [^;]*amx-tile, amx-int8", note)
            check_exact(i8, i8_args)
        check_bf16(bf, "f32", bf16_inputs((40, 64), (64, 48)), 64)
    monkeypatch.setattr(gemm_native, "AMX_KERNEL", False)
    assert "not dot.library-gemm.amx-bf16: switched off (gemm_native.AMX_KERNEL)" in kernel_of(bf)[0]


@needs_amx
def test_a_process_refused_tile_data_does_not_use_amx(monkeypatch):
    """When Linux refuses the tile data (arch_prctl fails), dots run the other
    kernels, the dump says why, and loading AMX code is an error, not SIGILL."""
    monkeypatch.setattr(amx, "tile_data_refused", lambda: "arch_prctl(...) failed: Operation not permitted")
    text = module("bf16", "bf16", "f32", (40, 64), (64, 48), (40, 48), MATMUL)
    (note,) = kernel_of(text)
    assert not note.startswith("kernel d: dot.library-gemm.amx-bf16")
    assert "not dot.library-gemm.amx-bf16: this process may not use AMX tiles (arch_prctl(...) failed" in note
    check_bf16(text, "f32", bf16_inputs((40, 64), (64, 48)), 64)
    v = gemm_library.Variant(xlac.F32, 32, 32, 16, "k", "n", xlac.BF16, xlac.BF16, "amxbf16")
    monkeypatch.setattr(gemm_library, "_loaded", {})
    with pytest.raises(RuntimeError, match="runs on AMX tiles, but this process may not use AMX tiles"):
        gemm_library.ensure_loaded(v)


def test_permission_request_is_asked_once():
    if "amx-tile" not in target.features_of(target.host()):
        pytest.skip("no AMX on this CPU")
    assert amx.tile_data_refused() is None
    assert amx._answer == [None]


@pytest.mark.parametrize("native,a,b,pt", [("amxint8", xlac.S8, xlac.U8, xlac.S32),
                                           ("amxbf16", xlac.BF16, xlac.BF16, xlac.F32)])
def test_library_symbols_name_their_amx_variant(native, a, b, pt):
    v = gemm_library.Variant(pt, 32, 32, 16, "k", "n", a, b, native)
    h, parsed = gemm_library._parse_name(gemm_library.symbol(v, "run").encode())
    assert parsed == v and h == gemm_library.name_hash(v)


# ---------------------------------------------------------------------------
# Random shapes
# ---------------------------------------------------------------------------

@needs_amx
@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["s8", "u8"]), st.sampled_from(["s8", "u8"]), st.integers(2, 70), st.integers(1, 150),
       st.integers(2, 70), st.sampled_from(LAYOUTS), st.integers(0, 2 ** 31))
def test_int8_random_shapes_bit_equal(lt, rt, m, k, n, layouts, seed):
    text = module(lt, rt, "s32", (m, k), (k, n), (m, n), MATMUL, *layouts)
    rng = np.random.default_rng(seed)
    check_exact(text, (ints(rng, lt, (m, k)), ints(rng, rt, (k, n))))


@needs_amx
@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["f32", "bf16"]), st.integers(2, 70), st.integers(1, 100), st.integers(2, 70),
       st.sampled_from(LAYOUTS), st.integers(0, 2 ** 31))
def test_bf16_random_shapes(ot, m, k, n, layouts, seed):
    text = module("bf16", "bf16", ot, (m, k), (k, n), (m, n), MATMUL, *layouts)
    check_bf16(text, ot, bf16_inputs((m, k), (k, n), seed), k)


@needs_amx
def test_kernel_switch_is_part_of_the_compile_cache_key(monkeypatch):
    # The same text compiled with the AMX kernels switched off is compiled
    # again, not taken from the in-memory cache with the AMX code in it.
    text = module("bf16", "bf16", "f32", (40, 64), (64, 48), (40, 48), MATMUL)
    on = xlac.jit(text)
    assert "_namxbf16_" in on.llvm_ir
    monkeypatch.setattr(gemm_native, "AMX_KERNEL", False)
    off = xlac.jit(text)
    assert off.from_cache is None and "_namxbf16_" not in off.llvm_ir
    check_bf16(text, "f32", bf16_inputs((40, 64), (64, 48)), 64)


@needs_amx
def test_device_workers_run_amx_dots():
    """The device pool's worker processes compile and run the AMX kernels
    (each process asks Linux for the tile data before its first call)."""
    from xlac.devices import ReplicatedExecutable
    text = module("bf16", "bf16", "f32", (40, 64), (64, 48), (40, 48), MATMUL)
    a, b = bf16_inputs((2, 40, 64), (2, 64, 48), 7)
    got = ReplicatedExecutable(text, 2)(a, b)
    for d in range(2):
        np.testing.assert_array_equal(got[d], xlac.jit(text)(a[d], b[d]))


@needs_amx
def test_cached_amx_code_is_a_miss_in_a_process_refused_tile_data(tmp_path):
    """A disk-cache entry whose code calls the AMX library does not load in a
    process Linux refused tile data (no AMX library there): it is compiled
    again, without AMX.  The refused process is a process of its own: a
    library variant, once loaded, stays for the life of the process (code
    compiled since links to it)."""
    import os
    import subprocess
    import sys
    text = module("bf16", "bf16", "f32", (40, 96), (96, 48), (40, 48), MATMUL)
    (tmp_path / "m.hlo").write_text(text, encoding="utf-8")
    script = (
        "import sys, numpy as np, xlac\n"
        "from xlac.runtime import amx\n"
        "refused = sys.argv[2] == 'refused'\n"
        "if refused:\n"
        "    amx.tile_data_refused = lambda: 'arch_prctl(...) failed: Invalid argument'\n"
        "exe = xlac.jit(open(sys.argv[1]).read())\n"
        "a = (np.arange(40 * 96) % 7 - 3).astype(np.float32).reshape(40, 96)\n"
        "b = (np.arange(96 * 48) % 5 - 2).astype(np.float32).reshape(96, 48)\n"
        "bf = xlac.Shape(xlac.BF16, ()).dtype\n"
        "assert np.array_equal(exe(a.astype(bf), b.astype(bf)), a @ b)\n"
        "print(exe.from_cache, '_namxbf16_' in exe.llvm_ir)\n")
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", script, str(tmp_path / "m.hlo"), how], env=env,
                           capture_output=True, encoding="utf-8", timeout=300) for how in ("granted", "refused")]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout.split() == ["None", "True"]                  # compiled, with AMX
    assert runs[1].stdout.split() == ["None", "False"]                 # not loaded from the cache: no AMX
