"""gather and convolution through the JIT: against the evaluator and against
direct numpy references (the spec's gather examples, clamped starts, NHWC/NCHW
convolutions with strides, padding, dilations, groups)."""
import numpy as np
import pytest

import xlac
from xlac import ops

from test_jit_ops import check, module, rand

BF16 = xlac.BF16.dtype


# ----------------------------------------------------------------------------
# gather
# ----------------------------------------------------------------------------

def gather_text(operand, indices, out, attrs, extra=""):
    return module(f"  x = {operand} parameter(0)\n  i = {indices} parameter(1)\n{extra}"
                  f"  ROOT g = {out} gather(x, i), {attrs}")


def test_gather_spec_batch_dynamic_slice():
    # The spec's first example: 5 slices of [8,6] out of [16,11]; Out[G,O0,O1] = in[X+O0, Y+O1].
    rng = np.random.default_rng(0)
    x = rand(np.float32, (16, 11), rng)
    idx = np.array([[0, 0], [3, 2], [8, 5], [15, 10], [-4, 7]], np.int64)   # the last two clamp
    text = gather_text("f32[16,11]", "s64[5,2]", "f32[5,8,6]",
                       "offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, "
                       "index_vector_dim=1, slice_sizes={8,6}")
    got = check(text, x, idx)
    for g, (X, Y) in enumerate(idx):
        X, Y = min(max(X, 0), 16 - 8), min(max(Y, 0), 11 - 6)
        np.testing.assert_array_equal(got[g], x[X:X + 8, Y:Y + 6])


def test_gather_spec_two_batch_dims():
    # Indices [4,5,2]: Out[G0,G1,O0,O1] = in[X+O0, Y+O1] with (X,Y) = idx[G0,G1].
    rng = np.random.default_rng(1)
    x = rand(np.float32, (16, 11), rng)
    idx = rng.integers(-3, 17, size=(4, 5, 2)).astype(np.int32)
    text = gather_text("f32[16,11]", "s32[4,5,2]", "f32[4,5,8,6]",
                       "offset_dims={2,3}, collapsed_slice_dims={}, start_index_map={0,1}, "
                       "index_vector_dim=2, slice_sizes={8,6}")
    got = check(text, x, idx)
    for g0 in range(4):
        for g1 in range(5):
            X = min(max(idx[g0, g1, 0], 0), 8)
            Y = min(max(idx[g0, g1, 1], 0), 5)
            np.testing.assert_array_equal(got[g0, g1], x[X:X + 8, Y:Y + 6])


def test_gather_spec_gather_nd():
    # tf.gather_nd: Out[G0,G1,O0] = in[idx[G0,G1,0], O0], slice_sizes [1,11].
    rng = np.random.default_rng(2)
    x = rand(np.float32, (16, 11), rng)
    idx = rng.integers(0, 16, size=(3, 4, 1)).astype(np.int32)
    text = gather_text("f32[16,11]", "s32[3,4,1]", "f32[3,4,11]",
                       "offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, "
                       "index_vector_dim=2, slice_sizes={1,11}")
    got = check(text, x, idx)
    np.testing.assert_array_equal(got, x[idx[..., 0]])


@pytest.mark.parametrize("ity,idt,values", [
    ("s8", np.int8, [-128, -1, 0, 3, 9, 127]),
    ("u8", np.uint8, [0, 1, 5, 9, 200, 255]),
    ("s64", np.int64, [-2**63, -5, 2, 8, 10, 2**63 - 1]),
    ("u64", np.uint64, [0, 4, 9, 2**63, 2**64 - 1, 7]),
    ("u32", np.uint32, [0, 4, 9, 2**31, 2**32 - 1, 7]),
])
def test_gather_clamps_out_of_bounds_starts(ity, idt, values):
    # A window of 3 along a dimension of 10: starts clamp to [0, 7], never read outside.
    x = np.arange(10 * 2, dtype=np.float32).reshape(10, 2)
    idx = np.array(values, dtype=idt)
    text = gather_text("f32[10,2]", f"{ity}[6]", "f32[6,3,2]",
                       "offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, "
                       "index_vector_dim=1, slice_sizes={3,2}")
    got = check(text, x, idx)
    for k, v in enumerate(values):
        s = min(max(int(v), 0), 7)
        np.testing.assert_array_equal(got[k], x[s:s + 3])


def test_gather_index_vector_dim_first_and_layouts():
    # index_vector_dim=0: the index vectors are the columns of a [2,5] array.
    rng = np.random.default_rng(3)
    x = rand(np.float32, (6, 7, 3), rng)
    idx = rng.integers(-1, 8, size=(2, 5)).astype(np.int32)
    text = gather_text("f32[6,7,3]{0,2,1}", "s32[2,5]{0,1}", "f32[2,3,5]{0,1,2}",
                       "offset_dims={0,1}, collapsed_slice_dims={1}, start_index_map={1,0}, "
                       "index_vector_dim=0, slice_sizes={2,1,3}")
    got = check(text, x, idx)
    for g in range(5):
        d1 = min(max(idx[0, g], 0), 6)
        d0 = min(max(idx[1, g], 0), 4)
        np.testing.assert_array_equal(got[:, :, g], x[d0:d0 + 2, d1, :])


def test_gather_scalar_indices_and_full_slices():
    # index_vector_dim == rank of start_indices: an implicit trailing 1.
    rng = np.random.default_rng(4)
    x = rand(np.int8, (5, 4), rng)
    idx = np.array([4, 0, 9, -2], np.int32)
    text = gather_text("s8[5,4]", "s32[4]", "s8[4,4]",
                       "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                       "index_vector_dim=1, slice_sizes={1,4}")
    got = check(text, x, idx)
    np.testing.assert_array_equal(got, x[np.clip(idx, 0, 4)])


def test_gather_batching_dims_take_along_axis():
    rng = np.random.default_rng(5)
    x = rand(np.float32, (10, 6), rng)
    idx = rng.integers(0, 6, size=(10, 3, 1)).astype(np.int32)
    text = gather_text("f32[10,6]", "s32[10,3,1]", "f32[10,3]",
                       "offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, "
                       "operand_batching_dims={0}, start_indices_batching_dims={0}, "
                       "index_vector_dim=2, slice_sizes={1,1}")
    got = check(text, x, idx)
    np.testing.assert_array_equal(got, np.take_along_axis(x, idx[..., 0], axis=1))


@pytest.mark.parametrize("ty,dtype", [("bf16", BF16), ("c64", np.complex64), ("pred", np.bool_),
                                      ("f64", np.float64)])
def test_gather_element_types_fused_with_consumer(ty, dtype):
    rng = np.random.default_rng(6)
    x = rand(dtype, (8, 3), rng)
    idx = rng.integers(-2, 10, size=(5, 1)).astype(np.int32)
    op = "xor" if ty == "pred" else "add"
    text = module(f"  x = {ty}[8,3] parameter(0)\n  i = s32[5,1] parameter(1)\n"
                  f"  g = {ty}[5,3] gather(x, i), offset_dims={{1}}, collapsed_slice_dims={{0}}, "
                  "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n"
                  f"  ROOT r = {ty}[5,3] {op}(g, g)")
    check(text, x, idx)


def test_gather_builder():
    b = xlac.XlaBuilder("g")
    x = ops.parameter(b, 0, "f32[10,6]")
    i = ops.parameter(b, 1, "s32[7,1]")
    g = ops.gather(x, i, dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
                   slice_sizes=(1, 6))
    assert str(g.shape) == "f32[7,6]{1,0}"
    comp = b.build(g)
    assert "index_vector_dim=1" in comp.as_hlo_text()
    rng = np.random.default_rng(7)
    xv, iv = rand(np.float32, (10, 6), rng), rng.integers(0, 10, (7, 1)).astype(np.int32)
    np.testing.assert_array_equal(xlac.jit(comp)(xv, iv), xv[iv[:, 0]])
    with pytest.raises(xlac.ShapeError, match="gather: .*slice_sizes"):
        ops.gather(x, i, dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
                   slice_sizes=(2, 6))


# ----------------------------------------------------------------------------
# convolution: a direct numpy reference on canonical N,C,spatial / O,I,spatial
# ----------------------------------------------------------------------------

def ref_conv(x, w, strides, pads, lhs_dil, rhs_dil, fgc=1, bgc=1, reverse=()):
    """x: [N, C, *S], w: [O, I, *K] -> [N/bgc, O, *out], in float64 (or int64)."""
    acc = np.complex128 if np.iscomplexobj(x) else (np.int64 if x.dtype.kind in "iu" else np.float64)
    x, w = x.astype(acc), w.astype(acc)
    for d in reverse:
        w = np.flip(w, axis=2 + d)
    n = x.ndim - 2
    # Dilate the input, then pad (negative padding crops).
    for d in range(n):
        if lhs_dil[d] > 1:
            size = (x.shape[2 + d] - 1) * lhs_dil[d] + 1
            shape = list(x.shape)
            shape[2 + d] = size
            y = np.zeros(shape, acc)
            sl = [slice(None)] * x.ndim
            sl[2 + d] = slice(None, None, lhs_dil[d])
            y[tuple(sl)] = x
            x = y
        lo, hi = pads[d]
        sl = [slice(None)] * x.ndim
        sl[2 + d] = slice(max(-lo, 0), x.shape[2 + d] - max(-hi, 0))
        x = x[tuple(sl)]
        widths = [(0, 0)] * x.ndim
        widths[2 + d] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    K = w.shape[2:]
    eff = [(k - 1) * r + 1 for k, r in zip(K, rhs_dil)]
    out_sp = [max((s - e) // st + 1, 0) for s, e, st in zip(x.shape[2:], eff, strides)]
    out = np.zeros([N // bgc, O] + out_sp, acc)
    for pos in np.ndindex(*out_sp):
        for o in range(O):
            if bgc > 1:
                g = o // (O // bgc)
                xs = x[g * (N // bgc):(g + 1) * (N // bgc)]
                feats = slice(None)
            else:
                g = o // (O // fgc)
                xs = x
                feats = slice(g * I, (g + 1) * I)
            win = tuple(slice(p * st, p * st + e, r) for p, st, e, r in zip(pos, strides, eff, rhs_dil))
            patch = xs[(slice(None), feats) + win]            # [n, I, *K]
            out[(slice(None), o) + pos] = np.tensordot(patch, w[o], axes=(list(range(1, 2 + n)),
                                                                           list(range(0, 1 + n))))
    return out


def conv_text(lhs, rhs, out, window, labels, extra=""):
    return module(f"  x = {lhs} parameter(0)\n  w = {rhs} parameter(1)\n"
                  f"  ROOT c = {out} convolution(x, w), window={{{window}}}, dim_labels={labels}{extra}")


def run_conv(text, x, w, rtol=1e-5, atol=1e-5):
    return check(text, x, w, rtol=rtol, atol=atol)


def test_conv_nhwc_stride_same_against_numpy():
    rng = np.random.default_rng(10)
    x = rand(np.float32, (2, 9, 9, 3), rng)
    w = rand(np.float32, (3, 3, 3, 8), rng)
    text = conv_text("f32[2,9,9,3]", "f32[3,3,3,8]", "f32[2,5,5,8]",
                     "size=3x3 stride=2x2 pad=1_1x1_1", "b01f_01io->b01f")
    got = run_conv(text, x, w)
    want = ref_conv(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (2, 2), [(1, 1), (1, 1)], (1, 1), (1, 1))
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("window,strides,pads,lhs_dil,rhs_dil,reverse", [
    ("size=3x2 pad=2_0x1_3", (1, 1), [(2, 0), (1, 3)], (1, 1), (1, 1), ()),
    ("size=2x3 stride=2x1 lhs_dilate=2x3", (2, 1), [(0, 0), (0, 0)], (2, 3), (1, 1), ()),
    ("size=3x2 rhs_dilate=2x3 pad=1_1x0_2", (1, 1), [(1, 1), (0, 2)], (1, 1), (2, 3), ()),
    ("size=3x3 stride=3x2 pad=-1_2x2_-1", (3, 2), [(-1, 2), (2, -1)], (1, 1), (1, 1), ()),
    ("size=2x3 pad=1_0x1_1 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=1x0", (1, 1),
     [(1, 0), (1, 1)], (2, 1), (1, 2), (0,)),
])
def test_conv_nchw_padding_dilation(window, strides, pads, lhs_dil, rhs_dil, reverse):
    rng = np.random.default_rng(11)
    kh, kw = (int(v) for v in window.split()[0][5:].split("x"))
    x = rand(np.float32, (2, 3, 7, 6), rng)
    w = rand(np.float32, (4, 3, kh, kw), rng)
    want = ref_conv(x, w, strides, pads, lhs_dil, rhs_dil, reverse=reverse)
    out = "f32[" + ",".join(str(d) for d in want.shape) + "]"
    text = conv_text("f32[2,3,7,6]", f"f32[4,3,{kh},{kw}]", out, window, "bf01_oi01->bf01")
    got = run_conv(text, x, w)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv_feature_groups_and_depthwise():
    rng = np.random.default_rng(12)
    # Two feature groups: 4 input features -> 6 outputs, rhs input features 2.
    x = rand(np.float32, (2, 5, 5, 4), rng)
    w = rand(np.float32, (3, 3, 2, 6), rng)
    text = conv_text("f32[2,5,5,4]", "f32[3,3,2,6]", "f32[2,5,5,6]", "size=3x3 pad=1_1x1_1",
                     "b01f_01io->b01f", ", feature_group_count=2")
    got = run_conv(text, x, w)
    want = ref_conv(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1), [(1, 1)] * 2, (1, 1), (1, 1), fgc=2)
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
    # Depthwise: feature_group_count = input features, channel multiplier 2.
    w = rand(np.float32, (3, 3, 1, 8), rng)
    text = conv_text("f32[2,5,5,4]", "f32[3,3,1,8]", "f32[2,3,3,8]", "size=3x3 stride=2x2 pad=1_1x1_1",
                     "b01f_01io->b01f", ", feature_group_count=4")
    got = run_conv(text, x, w)
    want = ref_conv(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (2, 2), [(1, 1)] * 2, (1, 1), (1, 1), fgc=4)
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


def test_conv_batch_groups():
    # batch_group_count=2 (a depthwise filter gradient): output feature group g reads batch group g.
    rng = np.random.default_rng(13)
    x = rand(np.float32, (4, 3, 6), rng)           # N=4, C=3, W=6
    w = rand(np.float32, (4, 3, 3), rng)           # O=4, I=3, K=3
    text = conv_text("f32[4,3,6]", "f32[4,3,3]", "f32[2,4,4]", "size=3", "bf0_oi0->bf0",
                     ", batch_group_count=2")
    got = run_conv(text, x, w)
    want = ref_conv(x, w, (1,), [(0, 0)], (1,), (1,), bgc=2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv_1d_and_3d_with_layouts():
    rng = np.random.default_rng(14)
    # The corpus' 1-D rhs dilation, lhs in a column-major layout.
    x = rand(np.float32, (2, 4, 20), rng)
    w = rand(np.float32, (6, 4, 3), rng)
    text = conv_text("f32[2,4,20]{0,1,2}", "f32[6,4,3]{1,2,0}", "f32[2,6,16]{0,2,1}",
                     "size=3 rhs_dilate=2", "bf0_oi0->bf0")
    np.testing.assert_allclose(run_conv(text, x, w), ref_conv(x, w, (1,), [(0, 0)], (1,), (2,)),
                               rtol=1e-5, atol=1e-5)
    # 3-D, channels last, strided with asymmetric padding.
    x = rand(np.float32, (1, 5, 4, 6, 2), rng)
    w = rand(np.float32, (2, 2, 3, 2, 3), rng)
    text = conv_text("f32[1,5,4,6,2]", "f32[2,2,3,2,3]", "f32[1,3,2,3,3]",
                     "size=2x2x3 stride=2x2x2 pad=0_1x0_0x1_0", "b012f_012io->b012f")
    want = ref_conv(x.transpose(0, 4, 1, 2, 3), w.transpose(4, 3, 0, 1, 2), (2, 2, 2),
                    [(0, 1), (0, 0), (1, 0)], (1, 1, 1), (1, 1, 1))
    np.testing.assert_allclose(run_conv(text, x, w), want.transpose(0, 2, 3, 4, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ty,dtype,out_ty,tol", [
    ("f64", np.float64, "f64", 1e-12), ("f16", np.float16, "f16", 1e-2), ("bf16", BF16, "bf16", 2e-2),
    ("s32", np.int32, "s32", 0), ("s8", np.int8, "s8", 0), ("bf16", BF16, "f32", 1e-5),
    ("c64", np.complex64, "c64", 1e-5)])
def test_conv_element_types(ty, dtype, out_ty, tol):
    rng = np.random.default_rng(15)
    x = rand(dtype, (1, 6, 5, 3), rng)
    w = rand(dtype, (2, 3, 3, 4), rng)
    text = conv_text(f"{ty}[1,6,5,3]", f"{ty}[2,3,3,4]", f"{out_ty}[1,6,5,4]", "size=2x3 pad=0_1x1_1",
                     "b01f_01io->b01f")
    check(text, x, w, rtol=tol, atol=tol)


def test_conv_window_larger_than_input_gives_empty_output():
    x = np.ones((1, 1, 2), np.float32)
    w = np.ones((1, 1, 4), np.float32)
    text = conv_text("f32[1,1,2]", "f32[1,1,4]", "f32[1,1,0]", "size=4", "bf0_oi0->bf0")
    assert run_conv(text, x, w).shape == (1, 1, 0)


def test_conv_builder_forms():
    rng = np.random.default_rng(16)
    xv = rand(np.float32, (2, 3, 8, 8), rng)
    wv = rand(np.float32, (4, 3, 3, 3), rng)
    b = xlac.XlaBuilder("conv")
    x = ops.parameter(b, 0, "f32[2,3,8,8]")
    w = ops.parameter(b, 1, "f32[4,3,3,3]")
    same = ops.conv(x, w, (2, 2), "SAME")
    general = ops.conv_general_dilated(x, w, (1, 1), [(1, 0), (0, 2)], None, (2, 1),
                                       dimension_numbers=("NCHW", "OIHW", "NCHW"))
    comp = b.build(ops.tuple(b, [same, general]))
    got_same, got_general = xlac.jit(comp)(xv, wv)
    # SAME: 8 -> 4 outputs with stride 2 needs one padding element, put high (XLA's MakePadding).
    np.testing.assert_allclose(got_same, ref_conv(xv, wv, (2, 2), [(0, 1), (0, 1)], (1, 1), (1, 1)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_general, ref_conv(xv, wv, (1, 1), [(1, 0), (0, 2)], (1, 1), (2, 1)),
                               rtol=1e-5, atol=1e-5)
    b2 = xlac.XlaBuilder("bad")
    x = ops.parameter(b2, 0, "f32[2,3,8,8]")
    w = ops.parameter(b2, 1, "f32[4,2,3,3]")
    with pytest.raises(xlac.ShapeError, match="convolution: the lhs feature dimension"):
        ops.conv(x, w, (1, 1))
    h = ops.conv_general_dilated(ops.convert_element_type(x, xlac.BF16),
                                 ops.convert_element_type(ops.parameter(b2, 2, "f32[4,3,3,3]"), xlac.BF16),
                                 (1, 1), "VALID", preferred_element_type=xlac.F32)
    assert str(h.shape) == "f32[2,4,6,6]{3,2,1,0}"
