"""bf16 and 8-bit integer convolutions on the native GEMM kernels: the
op-expander rewrites them as an im2col and a dot (``passes/conv_as_dot.py``)
where the target has a native kernel (AMX, AVX512_BF16, AVX512_VNNI), and the
dot runs it.  Checked against the evaluator: integers bit for bit (s32
wrap-around too), bf16 within one ulp of the result plus f32 reassociation.
Shapes off the tiles, strides, padding (negative too), both dilations,
window reversal, NCHW labels, 1-D and 3-D windows, a fused epilogue; grouped
convolutions and targets without the features keep the implicit GEMM."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from xlac.codegen import gemm_native, target
from xlac.codegen.compiler import lower

BF16 = xlac.Shape(xlac.BF16, ()).dtype
DTYPES = {"bf16": BF16, "f32": np.float32, "s8": np.int8, "u8": np.uint8, "s32": np.int32}
HAS_AMX = not gemm_native.missing_features("amxbf16") and gemm_native.tile_data_refused() is None
HAS_BF16 = not gemm_native.missing_features("bf16")
HAS_VNNI = not gemm_native.missing_features("vnni")


@pytest.fixture(params=["amx", "vector"], autouse=True)
def kernels(request, monkeypatch):
    """Each test on AMX tiles and on the vector kernels (vdpbf16ps, vpdpbusd)."""
    if request.param == "amx" and not HAS_AMX:
        pytest.skip("the host has no AMX tiles for this process")
    if request.param == "vector" and not (HAS_BF16 and HAS_VNNI):
        pytest.skip("the host lacks AVX512_BF16 or AVX512_VNNI")
    monkeypatch.setattr(gemm_native, "AMX_KERNEL", request.param == "amx")
    monkeypatch.setattr(gemm_native, "BF16_KERNEL", True)


def conv_text(xt, kt, ot, xs, ks, os_, window, labels="b01f_01io->b01f", extra="", epilogue=""):
    dims = lambda d: ",".join(map(str, d))    # noqa: E731
    root = "c" if epilogue else "ROOT c"
    lines = [f"  x = {xt}[{dims(xs)}] parameter(0)", f"  k = {kt}[{dims(ks)}] parameter(1)",
             f"  {root} = {ot}[{dims(os_)}] convolution(x, k), window={{{window}}}, dim_labels={labels}{extra}"]
    if epilogue:
        lines.append(epilogue)
    return "HloModule m\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


def inputs(text, xt, kt):
    m = xlac.parse_hlo(text)
    shapes = [i.shape for i in m.entry.instructions if i.opcode == "parameter"]
    rng = np.random.default_rng(1)
    out = []
    for t, s in zip((xt, kt), shapes):
        if t in ("s8", "u8"):
            lo, hi = (-128, 128) if t == "s8" else (0, 256)
            out.append(rng.integers(lo, hi, s.dimensions).astype(DTYPES[t]))
        else:
            out.append(rng.uniform(-1, 1, s.dimensions).astype(DTYPES[t]))
    return out


def notes(text, source):
    return [str(d) for d in lower(xlac.parse_hlo(text)).hlo.diagnostics if d.source == source]


def check(text, xt, kt, ot, k_len):
    x, k = inputs(text, xt, kt)
    got = np.asarray(xlac.jit(text)(x, k))
    want = np.asarray(xlac.evaluate(text, x, k))
    if ot in ("s8", "s32"):
        np.testing.assert_array_equal(got, want)
    else:
        got, want = got.astype(np.float64), want.astype(np.float64)
        ulp = 2.0 ** -7 if ot == "bf16" else 2.0 ** -23
        err = np.abs(got - want)
        assert np.all(err <= ulp * np.abs(want) + 4e-7 * k_len + 1e-30), f"max error {err.max()}"


# (input, kernel, output shapes, window, labels, window elements x input features)
CASES = {
    "3x3-same-odd": ((3, 7, 9, 5), (3, 3, 5, 11), (3, 7, 9, 11), "size=3x3 pad=1_1x1_1", "b01f_01io->b01f", 45),
    "stride-dilation": ((2, 13, 11, 6), (3, 2, 6, 7), (2, 5, 6, 7),
                        "size=3x2 stride=2x2 pad=0_1x1_0 rhs_dilate=2x1", "b01f_01io->b01f", 36),
    "lhs-dilation-reversal": ((2, 5, 6, 4), (3, 3, 4, 9), (2, 9, 11, 9),
                              "size=3x3 pad=1_1x1_1 lhs_dilate=2x2 rhs_reversal=1x0", "b01f_01io->b01f", 36),
    "negative-padding": ((2, 9, 8, 3), (2, 3, 3, 5), (2, 6, 6, 5), "size=2x3 pad=-1_-1x0_0", "b01f_01io->b01f", 18),
    "nchw": ((2, 6, 9, 10), (7, 6, 3, 3), (2, 7, 9, 10), "size=3x3 pad=1_1x1_1", "bf01_oi01->bf01", 54),
    "1x1": ((2, 6, 5, 16), (1, 1, 16, 24), (2, 6, 5, 24), "size=1x1", "b01f_01io->b01f", 16),
    "1d": ((3, 17, 8), (5, 8, 6), (3, 13, 6), "size=5", "b0f_0io->b0f", 40),
    "3d": ((2, 4, 5, 6, 3), (2, 3, 2, 3, 4), (2, 3, 3, 5, 4), "size=2x3x2", "b012f_012io->b012f", 36),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("xt,kt,ot", [("bf16", "bf16", "bf16"), ("bf16", "bf16", "f32"), ("s8", "s8", "s32"),
                                      ("u8", "s8", "s32"), ("s8", "s8", "s8")])
def test_matches_the_evaluator(case, xt, kt, ot):
    xs, ks, os_, window, labels, k_len = CASES[case]
    text = conv_text(xt, kt, ot, xs, ks, os_, window, labels)
    check(text, xt, kt, ot, k_len)
    (note,) = notes(text, "op-expander")
    assert note.endswith(f"im2col + dot on the native {'bf16' if xt == 'bf16' else '8-bit integer'} GEMM kernel")
    assert any("dot.library-gemm." in n for n in notes(text, "kernel-choice"))


def test_bias_relu_epilogue():
    xs, ks, os_, window, labels, k_len = CASES["3x3-same-odd"]
    epi = ("  z = bf16[] constant(0)\n  zb = bf16[3,7,9,11] broadcast(z), dimensions={}\n"
           "  ROOT r = bf16[3,7,9,11] maximum(c, zb)")
    check(conv_text("bf16", "bf16", "bf16", xs, ks, os_, window, labels, epilogue=epi), "bf16", "bf16", "bf16", k_len)


@pytest.mark.parametrize("xt,ot", [("bf16", "bf16"), ("s8", "s32")])
def test_grouped_convolutions_keep_their_paths(xt, ot):
    text = conv_text(xt, xt, ot, (2, 6, 7, 8), (3, 3, 4, 6), (2, 6, 7, 6), "size=3x3 pad=1_1x1_1",
                     extra=", feature_group_count=2")
    check(text, xt, xt, ot, 36)
    (note,) = notes(text, "op-expander")
    assert "not im2col + dot" in note and "grouped" in note
    text = conv_text(xt, xt, ot, (4, 6, 7, 8), (3, 3, 8, 6), (2, 6, 7, 6), "size=3x3 pad=1_1x1_1",
                     extra=", batch_group_count=2")
    check(text, xt, xt, ot, 72)


def test_a_target_without_the_features_keeps_the_implicit_gemm():
    xs, ks, os_, window, labels, k_len = CASES["3x3-same-odd"]
    text = conv_text("bf16", "bf16", "bf16", xs, ks, os_, window, labels)
    with target.override(features="-avx512bf16,-amx-bf16"):
        check(text, "bf16", "bf16", "bf16", k_len)
        assert notes(text, "op-expander") == []
        assert any("convolution.implicit-gemm.widen" in n for n in notes(text, "kernel-choice"))
    text = conv_text("s8", "s8", "s32", xs, ks, os_, window, labels)
    with target.override(features="-avx512vnni,-amx-int8"):
        check(text, "s8", "s8", "s32", k_len)
        assert notes(text, "op-expander") == []


def test_a_big_window_keeps_the_implicit_gemm():
    """A kernel gradient's window spans the image: thousands of im2col slices."""
    text = conv_text("bf16", "bf16", "bf16", (2, 12, 12, 3), (10, 10, 3, 4), (2, 3, 3, 4), "size=10x10")
    check(text, "bf16", "bf16", "bf16", 300)
    (note,) = notes(text, "op-expander")
    assert "a window of 100 positions (more than 49)" in note


@settings(max_examples=6, deadline=None)
@given(st.data())
def test_random_windows_match_the_evaluator(data):
    """Random 2-D windows (sizes, strides, padding, both dilations, reversal) and
    odd feature counts, bf16 and s8, against the evaluator."""
    t = data.draw(st.sampled_from(["bf16", "s8"]))
    n, c, o = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 9)), data.draw(st.integers(2, 19))
    dims, out, parts = [], [], []
    for _ in range(2):
        size, stride = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
        lo, hi = data.draw(st.integers(-1, 2)), data.draw(st.integers(-1, 2))
        rd, bd = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
        rev = data.draw(st.booleans())
        extent = data.draw(st.integers(4, 11))
        span = (extent - 1) * bd + 1 + lo + hi - ((size - 1) * rd + 1)
        if span < 0:
            span, hi = 0, hi - span
        dims.append((size, extent))
        out.append(span // stride + 1)
        parts.append((size, stride, f"{lo}_{hi}", rd, bd, int(rev)))
    window = (f"size={parts[0][0]}x{parts[1][0]} stride={parts[0][1]}x{parts[1][1]} "
              f"pad={parts[0][2]}x{parts[1][2]} rhs_dilate={parts[0][3]}x{parts[1][3]} "
              f"lhs_dilate={parts[0][4]}x{parts[1][4]} rhs_reversal={parts[0][5]}x{parts[1][5]}")
    ot = "bf16" if t == "bf16" else "s32"
    text = conv_text(t, t, ot, (n, dims[0][1], dims[1][1], c), (dims[0][0], dims[1][0], c, o),
                     (n, out[0], out[1], o), window)
    check(text, t, t, ot, dims[0][0] * dims[1][0] * c)


@pytest.mark.parametrize("xl,kl,ol", [("0,1,2,3", "3,2,1,0", "3,2,1,0"), ("1,3,2,0", "0,1,2,3", "2,1,3,0"),
                                      ("3,2,1,0", "2,3,1,0", "0,3,2,1")])
def test_entry_layouts(xl, kl, ol):
    text = conv_text("bf16", "bf16", "bf16", (2, 7, 9, 5), (3, 3, 5, 6), (2, 7, 9, 6), "size=3x3 pad=1_1x1_1")
    text = text.replace("[2,7,9,5] parameter", f"[2,7,9,5]{{{xl}}} parameter").replace(
        "[3,3,5,6] parameter", f"[3,3,5,6]{{{kl}}} parameter").replace(
        "[2,7,9,6] convolution", f"[2,7,9,6]{{{ol}}} convolution")
    check(text, "bf16", "bf16", "bf16", 45)
