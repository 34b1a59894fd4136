"""8-bit integer and bf16 convolutions on AMX tiles loaded from a padded copy
of the input (``codegen/kernels/conv_amx.py``) against the evaluator,
integers bit for bit, bf16 within one ulp of the result plus f32
reassociation: every sign combination, tiles off the edges (output rows, output
and input features), strides, padding (negative too), both dilations, window
reversal, NCHW-like labels and entry layouts, 1-D and 3-D windows, a fused
epilogue, an input computed in the fusion, threads; and the choice (short
output rows keep im2col + dot), and the AMX check made before loading code."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from xlac.codegen import gemm_amx, gemm_library, gemm_native, jit, target
from xlac.codegen.compiler import lower

HAS_AMX = not gemm_native.missing_features("amxint8") and not gemm_native.missing_features("amxbf16") \
    and gemm_native.tile_data_refused() is None
needs_amx = pytest.mark.skipif(not HAS_AMX, reason="the host has no AMX tiles for this process")
BF16 = xlac.Shape(xlac.BF16, ()).dtype
DTYPES = {"s8": np.int8, "u8": np.uint8, "bf16": BF16}
#: (input, kernel, result) types the kernel takes.
TYPES = [("s8", "s8", "s32"), ("bf16", "bf16", "bf16"), ("bf16", "bf16", "f32")]


def conv_text(xt, kt, xs, ks, os_, window, labels="b01f_01io->b01f", ot="s32", epilogue=""):
    dims = lambda d: ",".join(map(str, d))    # noqa: E731
    root = "c" if epilogue else "ROOT c"
    lines = [f"  x = {xt}[{dims(xs)}] parameter(0)", f"  k = {kt}[{dims(ks)}] parameter(1)",
             f"  {root} = {ot}[{dims(os_)}] convolution(x, k), window={{{window}}}, dim_labels={labels}"]
    if epilogue:
        lines.append(epilogue)
    return "HloModule m\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


def inputs(text, xt, kt, seed=1):
    shapes = [i.shape for i in xlac.parse_hlo(text).entry.instructions if i.opcode == "parameter"]
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, s.dimensions).astype(BF16) if t == "bf16" else
            rng.integers(-128 if t == "s8" else 0, 128 if t == "s8" else 256, s.dimensions).astype(DTYPES[t])
            for t, s in zip((xt, kt), shapes)]


def kernel_notes(text):
    return [str(d) for d in lower(xlac.parse_hlo(text)).hlo.diagnostics if d.source in ("op-expander",
                                                                                        "kernel-choice")]


def check(text, xt="s8", kt="s8", direct=True, ot="s32"):
    x, k = inputs(text, xt, kt)
    got = np.asarray(xlac.jit(text)(x, k))
    want = np.asarray(xlac.evaluate(text, x, k))
    if xt != "bf16":
        np.testing.assert_array_equal(got, want)
    else:
        # One ulp of a bf16 result (f32: none) plus f32 reassociation over the contraction.
        got, want = got.astype(np.float64), want.astype(np.float64)
        ulp = 2.0 ** -7 if ot == "bf16" else 0.0
        k_len = x.size // x.shape[0]
        err = np.abs(got - want)
        assert np.all(err <= ulp * np.abs(want) + 1e-6 * k_len + 1e-30), f"max error {err.max()}"
    said = " ".join(kernel_notes(text))
    assert ("direct on AMX tiles" in said) == direct, said


# (input, kernel, output shapes, window, labels)
CASES = {
    # 17-pixel rows (a partial tile per row), 5 input features (padded to 64), 11 outputs (an N edge).
    "3x3-same-odd": ((3, 5, 17, 5), (3, 3, 5, 11), (3, 5, 17, 11), "size=3x3 pad=1_1x1_1", "b01f_01io->b01f"),
    # 130 input features: three k tiles per position; 40 outputs: two N panels, the last partial.
    "wide-features": ((1, 3, 20, 130), (2, 2, 130, 40), (1, 2, 19, 40), "size=2x2", "b01f_01io->b01f"),
    "stride-dilations": ((2, 9, 40, 6), (3, 2, 6, 7), (2, 3, 20, 7),
                         "size=3x2 stride=2x2 pad=0_1x1_0 rhs_dilate=2x1 lhs_dilate=1x1", "b01f_01io->b01f"),
    "negative-pad-reversal": ((1, 6, 21, 3), (2, 3, 3, 33), (1, 6, 16, 33),
                              "size=2x3 pad=1_0x-1_-2 rhs_reversal=1x1", "b01f_01io->b01f"),
    "base-dilation": ((1, 4, 9, 4), (3, 3, 4, 5), (1, 7, 17, 5), "size=3x3 pad=1_1x1_1 lhs_dilate=2x2",
                      "b01f_01io->b01f"),
    "nchw": ((2, 6, 3, 18), (9, 6, 3, 3), (2, 9, 3, 18), "size=3x3 pad=1_1x1_1", "bf01_oi01->bf01"),
    "1d": ((2, 40, 7), (5, 7, 20), (2, 36, 20), "size=5", "b0f_0io->b0f"),
    "3d": ((1, 3, 2, 16, 4), (2, 1, 3, 4, 6), (1, 2, 2, 16, 6), "size=2x1x3 pad=0_0x0_0x1_1",
           "b012f_012io->b012f"),
}


@needs_amx
@pytest.mark.parametrize("xt,kt,ot", TYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_matches_the_evaluator(case, xt, kt, ot):
    xs, ks, os_, window, labels = CASES[case]
    check(conv_text(xt, kt, xs, ks, os_, window, labels, ot=ot), xt, kt, ot=ot)


@needs_amx
@pytest.mark.parametrize("xt,kt", [("u8", "u8"), ("u8", "s8"), ("s8", "u8")])
def test_every_sign_combination(xt, kt):
    xs, ks, os_, window, labels = CASES["3x3-same-odd"]
    check(conv_text(xt, kt, xs, ks, os_, window, labels), xt, kt)


@needs_amx
def test_sums_wrap_as_s32():
    """u8 x u8 sums past 2**31 wrap, as XLA's integer convolution does."""
    text = conv_text("u8", "u8", (1, 1, 16, 64 * 600), (1, 1, 64 * 600, 16), (1, 1, 16, 16), "size=1x1")
    x = np.full((1, 1, 16, 64 * 600), 255, np.uint8)
    k = np.full((1, 1, 64 * 600, 16), 255, np.uint8)
    got = np.asarray(xlac.jit(text)(x, k))
    assert np.all(got == np.int32(np.int64(255 * 255 * 64 * 600) - (1 << 32)))


@needs_amx
@pytest.mark.parametrize("xt,kt,ot", [("s8", "s8", "s8"), ("u8", "s8", "s16"), ("u8", "u8", "u32"),
                                      ("s8", "s8", "s64")])
def test_other_integer_results_are_the_s32_one_converted(xt, kt, ot):
    """An s8 result wraps: the s32 sums converted, as XLA's convolution does."""
    xs, ks, os_, window, labels = CASES["3x3-same-odd"]
    text = conv_text(xt, kt, xs, ks, os_, window, labels, ot=ot)
    check(text, xt, kt)
    assert "convert" in xlac.jit(text).optimized_hlo.to_text()


@needs_amx
@pytest.mark.parametrize("xl,kl,ol", [("0,1,2,3", "3,2,1,0", "3,2,1,0"), ("1,3,2,0", "0,1,2,3", "2,1,3,0")])
def test_entry_layouts(xl, kl, ol):
    text = conv_text("s8", "s8", (2, 3, 17, 5), (3, 3, 5, 6), (2, 3, 17, 6), "size=3x3 pad=1_1x1_1")
    text = text.replace("[2,3,17,5] parameter", f"[2,3,17,5]{{{xl}}} parameter").replace(
        "[3,3,5,6] parameter", f"[3,3,5,6]{{{kl}}} parameter").replace(
        "[2,3,17,6] convolution", f"[2,3,17,6]{{{ol}}} convolution")
    check(text)


@needs_amx
def test_fused_epilogue_and_computed_input():
    """A kOutput fusion: the input negated inside it, the s32 result converted
    to f32 and a bias added (stack tiles through the epilogue)."""
    text = ("HloModule m\n\nENTRY e {\n  x = s8[2,3,17,5] parameter(0)\n  k = s8[3,3,5,6] parameter(1)\n"
            "  nx = s8[2,3,17,5] negate(x)\n"
            "  c = s32[2,3,17,6] convolution(nx, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
            "  f = f32[2,3,17,6] convert(c)\n  h = f32[] constant(0.5)\n"
            "  hb = f32[2,3,17,6] broadcast(h), dimensions={}\n  ROOT r = f32[2,3,17,6] add(f, hb)\n}\n")
    check(text)


@needs_amx
def test_bf16_bias_relu_epilogue():
    xs, ks, os_, window, labels = CASES["3x3-same-odd"]
    epi = ("  z = bf16[] constant(0)\n  zb = bf16[3,5,17,11] broadcast(z), dimensions={}\n"
           "  ROOT r = bf16[3,5,17,11] maximum(c, zb)")
    check(conv_text("bf16", "bf16", xs, ks, os_, window, labels, ot="bf16", epilogue=epi), "bf16", "bf16",
          ot="bf16")


@needs_amx
@pytest.mark.parametrize("xt,ot", [("s8", "s32"), ("bf16", "bf16")])
def test_threads_give_the_same_bits(xt, ot):
    xs, ks, os_, window, labels = CASES["3x3-same-odd"]
    text = conv_text(xt, xt, xs, ks, os_, window, labels, ot=ot)
    x, k = inputs(text, xt, xt)
    one = np.asarray(xlac.jit(text, num_threads=1)(x, k))
    np.testing.assert_array_equal(one, np.asarray(xlac.jit(text, num_threads=3)(x, k)))


@needs_amx
def test_short_rows_keep_im2col_and_dot():
    text = conv_text("s8", "s8", (2, 7, 9, 5), (3, 3, 5, 11), (2, 7, 9, 11), "size=3x3 pad=1_1x1_1")
    check(text, direct=False)
    assert any("im2col + dot" in n for n in kernel_notes(text))


@needs_amx
def test_a_padded_input_past_the_limit_keeps_im2col_and_dot(monkeypatch):
    from xlac.codegen.kernels import conv_amx
    monkeypatch.setattr(conv_amx, "MAX_XPAD_BYTES", 4096)
    xs, ks, os_, window, labels = CASES["3x3-same-odd"]
    text = conv_text("s8", "s8", xs, ks, os_, window, labels)
    check(text.replace("HloModule m", "HloModule m_limit"), direct=False)


def test_a_target_without_amx_int8_keeps_im2col_and_dot():
    xs, ks, os_, window, labels = CASES["3x3-same-odd"]
    text = conv_text("s8", "s8", xs, ks, os_, window, labels)
    with target.override(features="-amx-int8,-amx-tile"):
        said = " ".join(kernel_notes(text))
        assert "direct on AMX" not in said


def test_objects_with_tile_code_ask_for_the_tiles_before_loading(monkeypatch):
    """A module object with tile instructions of its own (as the direct
    convolution's) is refused before MCJIT loads it where Linux refuses the
    tile data, as an AMX library variant is: a disk-cache entry then counts as
    a miss instead of stopping the process on SIGILL."""
    from llvmlite import ir
    m = ir.Module("t")
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), []), "f")
    b = ir.IRBuilder(fn.append_basic_block())
    gemm_amx.configure(b)
    gemm_amx.release(b)
    b.ret_void()
    # Emitted for a target with the tiles (this host may lack them), not loaded.
    with target.override(cpu="sapphirerapids") as amx_target:
        tm = target.target_machine(amx_target)
    obj = jit.emit_object(tm, jit.parse_and_optimize(str(m), tm))
    assert gemm_amx.MARKER in obj
    monkeypatch.setattr(gemm_native, "tile_data_refused", lambda: "refused for the test")
    with pytest.raises(RuntimeError, match="AMX tile code.*refused for the test"):
        gemm_library.ensure_symbols(obj)


@needs_amx
@settings(max_examples=8, deadline=None)
@given(st.data())
def test_random_windows_match_the_evaluator(data):
    """Random 2-D windows (sizes, strides, padding, both dilations, reversal),
    feature counts and signs, with output rows of 16 to 40 pixels."""
    xt, kt = data.draw(st.sampled_from(["s8", "u8", "bf16"])), data.draw(st.sampled_from(["s8", "u8"]))
    kt = "bf16" if xt == "bf16" else kt
    ot = "s32" if xt != "bf16" else data.draw(st.sampled_from(["bf16", "f32"]))
    n, c, o = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 70)), data.draw(st.integers(1, 40))
    ins, outs, parts = [], [], []
    for d in range(2):
        size, stride = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
        lo, hi = data.draw(st.integers(-1, 2)), data.draw(st.integers(-1, 2))
        rd, bd = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
        out = data.draw(st.integers(16, 40)) if d == 1 else data.draw(st.integers(1, 4))
        # The input extent giving at least ``out`` outputs.
        need = (out - 1) * stride + (size - 1) * rd + 1 - lo - hi
        extent = max(1, -(-(need - 1) // bd) + 1)
        span = (extent - 1) * bd + 1 + lo + hi - ((size - 1) * rd + 1)
        ins.append(extent)
        outs.append(span // stride + 1)
        parts.append((size, stride, f"{lo}_{hi}", rd, bd, int(data.draw(st.booleans()))))
    window = (f"size={parts[0][0]}x{parts[1][0]} stride={parts[0][1]}x{parts[1][1]} "
              f"pad={parts[0][2]}x{parts[1][2]} rhs_dilate={parts[0][3]}x{parts[1][3]} "
              f"lhs_dilate={parts[0][4]}x{parts[1][4]} rhs_reversal={parts[0][5]}x{parts[1][5]}")
    text = conv_text(xt, kt, (n, ins[0], ins[1], c), (parts[0][0], parts[1][0], c, o), (n, outs[0], outs[1], o),
                     window, ot=ot)
    check(text, xt, kt, direct=outs[1] >= 16, ot=ot)
