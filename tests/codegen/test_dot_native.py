"""The native low-precision GEMM kernels (``codegen/gemm_native.py``):
``dot.library-gemm.bf16`` (AVX512_BF16 ``vdpbf16ps``, f32 accumulators) and
``dot.library-gemm.vnni`` (AVX512_VNNI ``vpdpbusd``, s32 accumulators).

Checked against the evaluator: 8-bit integer dots bit for bit (including
s32 wrap-around), bf16 dots within one ulp of the result type plus f32
reassociation (``vdpbf16ps`` adds pairs of products; it also flushes
denormals: a test pins that tolerance).  Odd sizes (M, N off the tile, K
odd for the bf16 pairs and off a multiple of 4 for VNNI), every layout of
A, B and C, batches, K blocks, threads, fusion epilogues, and the choice of
kernel for a target without the features (``target.override``).
"""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from xlac.codegen import gemm_library, gemm_native, target
from xlac.codegen.compiler import lower

BF16 = xlac.Shape(xlac.BF16, ()).dtype
INT = {"s8": np.int8, "u8": np.uint8}
HAS_BF16 = not gemm_native.missing_features("bf16")
HAS_VNNI = not gemm_native.missing_features("vnni")
needs_bf16 = pytest.mark.skipif(not HAS_BF16, reason="the host lacks AVX512_BF16")
needs_vnni = pytest.mark.skipif(not HAS_VNNI, reason="the host lacks AVX512_VNNI")


@pytest.fixture(autouse=True)
def bf16_kernel(monkeypatch):
    """The vdpbf16ps kernel wherever the host has the instruction (by default
    it is not chosen on CPUs where it is slower than the widened kernel), and
    the vector kernels rather than AMX tiles (``test_dot_amx.py``)."""
    monkeypatch.setattr(gemm_native, "BF16_KERNEL", True)
    monkeypatch.setattr(gemm_native, "AMX_KERNEL", False)


def module(lt, rt, ot, a_dims, b_dims, out_dims, dims, la=None, lb=None, lo=None, epilogue=""):
    def shape(t, d, lay):
        lay = lay or ",".join(str(i) for i in reversed(range(len(d))))
        return f"{t}[{','.join(map(str, d))}]{{{lay}}}"
    lines = [f"  a = {shape(lt, a_dims, la)} parameter(0)", f"  b = {shape(rt, b_dims, lb)} parameter(1)"]
    if epilogue:
        lines += [f"  d = {shape(ot, out_dims, lo)} dot(a, b), {dims}", epilogue]
    else:
        lines += [f"  ROOT d = {shape(ot, out_dims, lo)} dot(a, b), {dims}"]
    return "HloModule m\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


MATMUL = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
BATCHED = "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"
# (lhs, rhs, result layouts): row-major, column-major A, a transposed B, a column-major result, all three.
LAYOUTS = [("1,0", "1,0", "1,0"), ("0,1", "1,0", "1,0"), ("1,0", "0,1", "1,0"), ("1,0", "1,0", "0,1"),
           ("0,1", "0,1", "0,1")]


def kernel_of(text) -> list:
    return [str(d) for d in lower(xlac.parse_hlo(text)).hlo.diagnostics if d.source == "kernel-choice"]


def ints(rng, t, shape, extreme=False):
    info = np.iinfo(INT[t])
    if extreme:
        return np.full(shape, info.min if t == "s8" else info.max, INT[t])
    return rng.integers(info.min, int(info.max) + 1, shape).astype(INT[t])


def check_exact(text, args, **jit):
    exe = xlac.jit(text, **jit)
    got, want = exe(*args), xlac.evaluate(text, *args)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    return exe, got


def check_bf16(text, ot, args, k, **jit):
    """Within one ulp of ``ot`` plus f32 reassociation over ``k`` products of size <= 1."""
    exe = xlac.jit(text, **jit)
    got = np.asarray(exe(*args)).astype(np.float64)
    want = np.asarray(xlac.evaluate(text, *args)).astype(np.float64)
    ulp = 2.0 ** -7 if ot == "bf16" else 2.0 ** -23
    bound = ulp * np.abs(want) + 4e-7 * k + 1e-30
    err = np.abs(got - want)
    assert np.all(err <= bound), f"max error {err.max()} (bound at it {bound.flat[err.argmax()]})"
    return exe, got


def bf16_inputs(a_dims, b_dims, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, a_dims).astype(BF16), rng.uniform(-1, 1, b_dims).astype(BF16)


# ---------------------------------------------------------------------------
# 8-bit integers: vpdpbusd
# ---------------------------------------------------------------------------

@needs_vnni
@pytest.mark.parametrize("lt,rt", [("s8", "s8"), ("u8", "s8"), ("s8", "u8"), ("u8", "u8")])
@pytest.mark.parametrize("la,lb,lo", LAYOUTS)
def test_int8_every_sign_and_layout_bit_equal(lt, rt, la, lb, lo):
    m, k, n = 37, 29, 71          # off the tiles; K not a multiple of 4
    text = module(lt, rt, "s32", (m, k), (k, n), (m, n), MATMUL, la, lb, lo)
    rng = np.random.default_rng(k)
    check_exact(text, (ints(rng, lt, (m, k)), ints(rng, rt, (k, n))))
    (note,) = kernel_of(text)
    assert note.startswith("kernel d: dot.library-gemm.vnni (")


@needs_vnni
@pytest.mark.parametrize("lt,rt", [("s8", "s8"), ("u8", "u8"), ("u8", "s8")])
def test_int8_extremes_long_k_and_wrap_around(lt, rt):
    # K of several K blocks; u8 x u8 at 255 over 70,000 products wraps in s32.
    for k, n in ((1301, 40), (70001, 17)):
        text = module(lt, rt, "s32", (9, k), (k, n), (9, n), MATMUL)
        rng = np.random.default_rng(1)
        check_exact(text, (ints(rng, lt, (9, k), True), ints(rng, rt, (k, n), True)))


@needs_vnni
def test_int8_wraps_in_s32():
    k = 70001
    text = module("u8", "u8", "s32", (2, k), (k, 17), (2, 17), MATMUL)
    got = xlac.jit(text)(np.full((2, k), 255, np.uint8), np.full((k, 17), 255, np.uint8))
    assert 255 * 255 * k > 2 ** 31 and got[0, 0] == 255 * 255 * k - 2 ** 32


@needs_vnni
def test_int8_batched_threads_and_other_result_types():
    text = module("s8", "s8", "s32", (3, 19, 301), (3, 301, 45), (3, 19, 45), BATCHED)
    rng = np.random.default_rng(2)
    args = (ints(rng, "s8", (3, 19, 301)), ints(rng, "s8", (3, 301, 45)))
    _, one = check_exact(text, args, num_threads=1)
    _, two = check_exact(text, args, num_threads=2)
    assert np.array_equal(one, two)
    big = module("u8", "s8", "s32", (260, 700), (700, 300), (260, 300), MATMUL)
    args = (ints(rng, "u8", (260, 700)), ints(rng, "s8", (700, 300)))
    assert np.array_equal(check_exact(big, args, num_threads=1)[1], check_exact(big, args, num_threads=2)[1])
    for ot in ("s8", "u32", "s64"):
        text = module("s8", "s8", ot, (20, 33), (33, 24), (20, 24), MATMUL)
        check_exact(text, (ints(rng, "s8", (20, 33), True), ints(rng, "s8", (33, 24), True)))


@needs_vnni
def test_int8_fusion_epilogue_of_another_type():
    # A quantised layer: s32 dot, converted and scaled (the fusion's root is f32:
    # C accumulates in s32 in scratch, then the epilogue).
    epi = ("  f = f32[30,40]{1,0} convert(d)\n  s = f32[] constant(0.5)\n"
           "  sb = f32[30,40]{1,0} broadcast(s), dimensions={}\n  ROOT r = f32[30,40]{1,0} multiply(f, sb)")
    text = module("s8", "s8", "s32", (30, 50), (50, 40), (30, 40), MATMUL, epilogue=epi)
    rng = np.random.default_rng(4)
    check_exact(text, (ints(rng, "s8", (30, 50)), ints(rng, "s8", (50, 40))))
    assert any("dot.library-gemm.vnni" in n for n in kernel_of(text))


def test_int8_without_vnni_takes_the_f32_route():
    text = module("s8", "s8", "s32", (24, 30), (30, 20), (24, 20), MATMUL)
    with target.override(features="-avx512vnni"):
        hlo = lower(xlac.parse_hlo(text)).hlo
        assert not any(i.opcode == "dot" and i.shape.element_type == xlac.S32 for i in hlo.instructions())
        assert not any("vnni" in str(d) and "dot.library-gemm.vnni (" in str(d) for d in hlo.diagnostics)
        rng = np.random.default_rng(5)
        check_exact(text, (ints(rng, "s8", (24, 30)), ints(rng, "s8", (30, 20))))


# ---------------------------------------------------------------------------
# bf16: vdpbf16ps
# ---------------------------------------------------------------------------

@needs_bf16
@pytest.mark.parametrize("ot", ["f32", "bf16"])
@pytest.mark.parametrize("la,lb,lo", LAYOUTS)
def test_bf16_layouts_and_odd_sizes(ot, la, lb, lo):
    m, k, n = 37, 29, 71          # K odd: the last pair half zero
    text = module("bf16", "bf16", ot, (m, k), (k, n), (m, n), MATMUL, la, lb, lo)
    check_bf16(text, ot, bf16_inputs((m, k), (k, n)), k)
    (note,) = kernel_of(text)
    assert note.startswith("kernel d: dot.library-gemm.bf16 (")


@needs_bf16
def test_bf16_batched_long_k_and_threads():
    text = module("bf16", "bf16", "bf16", (3, 40, 1101), (3, 1101, 70), (3, 40, 70), BATCHED)
    args = bf16_inputs((3, 40, 1101), (3, 1101, 70), 2)
    check_bf16(text, "bf16", args, 1101)
    text = module("bf16", "bf16", "f32", (260, 701), (701, 300), (260, 300), MATMUL)
    args = bf16_inputs((260, 701), (701, 300), 3)
    _, one = check_bf16(text, "f32", args, 701, num_threads=1)
    _, two = check_bf16(text, "f32", args, 701, num_threads=2)
    np.testing.assert_array_equal(one, two)


@needs_bf16
def test_bf16_flushes_denormals():
    # vdpbf16ps treats denormal inputs and results as zero (the tolerance it
    # adds to the widened kernel's): 1e-39 is an f32/bf16 denormal.
    text = module("bf16", "bf16", "f32", (2, 2), (2, 16), (2, 16), MATMUL)
    a = np.array([[1e-39, 0], [1.0, 0]], BF16)
    b = np.full((2, 16), 1.0, BF16)
    got = xlac.jit(text)(a, b)
    assert got[0, 0] == 0.0 and got[1, 0] == 1.0
    assert xlac.evaluate(text, a, b)[0, 0] != 0.0


def test_bf16_kernel_choice_follows_the_target(monkeypatch):
    text = module("bf16", "bf16", "f32", (40, 64), (64, 48), (40, 48), MATMUL)
    with target.override(features="-avx512bf16"):
        (note,) = kernel_of(text)
        assert note.startswith("kernel d: dot.library-gemm.widen (")
        assert re.search(r"not dot.library-gemm.bf16: the target lacks [^;]*avx512bf16", note)  # (and avx512f on AVX2)
        check_bf16(text, "f32", bf16_inputs((40, 64), (64, 48)), 64)
    monkeypatch.setattr(gemm_native, "BF16_KERNEL", "auto")
    with target.override(features="+avx512bf16,+amx-bf16,+amx-tile"):
        (note,) = kernel_of(text)
        assert note.startswith("kernel d: dot.library-gemm.widen (") and "half the f32 FMA rate" in note


@pytest.mark.parametrize("native,a,b,pt", [("vnni", xlac.S8, xlac.U8, xlac.S32), ("bf16", xlac.BF16, xlac.BF16, xlac.F32)])
def test_library_symbols_name_their_variant(native, a, b, pt):
    # A cached module object names the native variants it calls; loading it
    # must find them again from the names alone.
    v = gemm_library.Variant(pt, 4, 64, 16, "k", "n", a, b, native)
    h, parsed = gemm_library._parse_name(gemm_library.symbol(v, "run").encode())
    assert parsed == v and h == gemm_library.name_hash(v)


@needs_vnni
def test_ahead_of_time_object_links_the_native_variant(tmp_path):
    text = module("s8", "s8", "s32", (20, 33), (33, 24), (20, 24), MATMUL)
    out = tmp_path / "m.o"
    xlac.compile_aot(xlac.parse_hlo(text), str(out))
    assert b"xlac_gemm_" not in out.read_bytes()        # linked in, none left to resolve


@needs_vnni
@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["s8", "u8"]), st.sampled_from(["s8", "u8"]), st.integers(2, 70), st.integers(1, 70),
       st.integers(2, 90), st.sampled_from(LAYOUTS), st.integers(0, 2 ** 31))
def test_int8_random_shapes_bit_equal(lt, rt, m, k, n, layouts, seed):
    text = module(lt, rt, "s32", (m, k), (k, n), (m, n), MATMUL, *layouts)
    rng = np.random.default_rng(seed)
    check_exact(text, (ints(rng, lt, (m, k)), ints(rng, rt, (k, n))))


def test_jit_plans_scratch_for_the_threads_the_host_has():
    """A JIT-compiled GEMM holds one packing region per thread the process may
    use, not one per task (1024^3 f32: 46 MB -> a few MB); an object for other
    machines keeps one per task a grid may start."""
    import xlac
    from xlac.codegen import task_grid
    from xlac.codegen.compiler import lower
    from xlac.runtime.threads import default_num_threads
    text = ("HloModule m\nENTRY e {\n a = f32[1024,1024] parameter(0)\n b = f32[1024,1024] parameter(1)\n"
            " ROOT d = f32[1024,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n")
    module = xlac.parse_hlo(text)
    jit_temp = lower(module, native=True).assignment.temp_size
    aot_temp = lower(module, native=False).assignment.temp_size
    assert task_grid.REGION_CAP.get() is None                     # set only while lowering
    if default_num_threads() < 8:
        assert jit_temp * 3 < aot_temp, (jit_temp, aot_temp)
    a = np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32)
    np.testing.assert_allclose(xlac.jit(module)(a, a), a @ a, rtol=1e-3, atol=1e-2)
