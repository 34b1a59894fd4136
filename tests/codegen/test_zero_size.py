"""Zero-size dimensions in every op that computes addresses from data or from
its operands' extents (issue 12, item 1): gather, dynamic-slice,
dynamic-update-slice, scatter, sort, topk, reduce-window, select-and-scatter,
pad, concatenate, fft, and a few more.

Each case runs through the evaluator and both JIT modes and must give the same
arrays; ``tests/runtime/test_guard_pages.py`` runs the same kinds of programs
with every buffer flush against a PROT_NONE page, so an out-of-bounds read
faults instead of reading garbage.
"""
import numpy as np
import pytest

import xlac
from xlac import ops

CASES = {}


def case(name, text, *args):
    CASES[name] = (text, args)


# The gather of issue 12: a collapsed dimension of slice size 0 (XLA's shape
# inference allows 0 or 1) has empty slices; the start used to clamp to
# operand[4], one past the end.  The result is zeros (see kernels/gather.py).
case("gather_collapsed_slice_size_0", """HloModule m
ENTRY e { p = f32[4] parameter(0)  i = s32[3,1] parameter(1)
 ROOT g = f32[3] gather(p, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0},
   index_vector_dim=1, slice_sizes={0} }""",
     np.arange(1, 5, dtype=np.float32), np.array([[3], [4], [100]], np.int32))

case("ds_zero_operand", """HloModule m
ENTRY e { p = f32[0,4] parameter(0)  i = s32[] parameter(1)  j = s32[] parameter(2)
 ROOT d = f32[0,2] dynamic-slice(p, i, j), dynamic_slice_sizes={0,2} }""", np.zeros((0,4),np.float32), np.int32(5), np.int32(3))
case("ds_zero_size", """HloModule m
ENTRY e { p = f32[3,4] parameter(0)  i = s32[] parameter(1)  j = s32[] parameter(2)
 ROOT d = f32[0,2] dynamic-slice(p, i, j), dynamic_slice_sizes={0,2} }""", np.ones((3,4),np.float32), np.int32(5), np.int32(3))
case("dus_zero_update", """HloModule m
ENTRY e { p = f32[3,4] parameter(0) u = f32[0,2] parameter(1) i = s32[] parameter(2)  j = s32[] parameter(3)
 ROOT d = f32[3,4] dynamic-update-slice(p, u, i, j) }""", np.ones((3,4),np.float32), np.zeros((0,2),np.float32), np.int32(5), np.int32(3))
case("dus_zero_operand", """HloModule m
ENTRY e { p = f32[0,4] parameter(0) u = f32[0,2] parameter(1) i = s32[] parameter(2)  j = s32[] parameter(3)
 ROOT d = f32[0,4] dynamic-update-slice(p, u, i, j) }""", np.ones((0,4),np.float32), np.zeros((0,2),np.float32), np.int32(5), np.int32(3))
case("gather_zero_operand", """HloModule m
ENTRY e { p = f32[0,3] parameter(0) i = s32[2,1] parameter(1)
 ROOT g = f32[2,3] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={0,3} }""", np.zeros((0,3),np.float32), np.array([[0],[7]],np.int32))
case("gather_zero_offset", """HloModule m
ENTRY e { p = f32[5,3] parameter(0) i = s32[2,1] parameter(1)
 ROOT g = f32[2,0] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,0} }""", np.ones((5,3),np.float32), np.array([[0],[7]],np.int32))
case("gather_zero_indices", """HloModule m
ENTRY e { p = f32[5,3] parameter(0) i = s32[0,1] parameter(1)
 ROOT g = f32[0,3] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3} }""", np.ones((5,3),np.float32), np.zeros((0,1),np.int32))
ADD = """add { a = f32[] parameter(0) b = f32[] parameter(1) ROOT s = f32[] add(a, b) }
"""
case("scatter_zero_operand", "HloModule m\n" + ADD + """ENTRY e { p = f32[0,3] parameter(0) i = s32[2,1] parameter(1) u = f32[2,3] parameter(2)
 ROOT s = f32[0,3] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add }""", np.zeros((0,3),np.float32), np.array([[0],[1]],np.int32), np.ones((2,3),np.float32))
case("scatter_zero_window", "HloModule m\n" + ADD + """ENTRY e { p = f32[4,0] parameter(0) i = s32[2,1] parameter(1) u = f32[2,0] parameter(2)
 ROOT s = f32[4,0] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add }""", np.zeros((4,0),np.float32), np.array([[0],[1]],np.int32), np.ones((2,0),np.float32))
case("scatter_zero_updates", "HloModule m\n" + ADD + """ENTRY e { p = f32[4,3] parameter(0) i = s32[0,1] parameter(1) u = f32[0,3] parameter(2)
 ROOT s = f32[4,3] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add }""", np.ones((4,3),np.float32), np.zeros((0,1),np.int32), np.ones((0,3),np.float32))
CMP = """lt { a = f32[] parameter(0) b = f32[] parameter(1) ROOT c = pred[] compare(a, b), direction=LT }
"""
case("sort_zero", "HloModule m\n" + CMP + """ENTRY e { p = f32[3,0] parameter(0)
 ROOT s = f32[3,0] sort(p), dimensions={1}, to_apply=lt }""", np.zeros((3,0),np.float32))
case("sort_zero_outer", "HloModule m\n" + CMP + """ENTRY e { p = f32[0,5] parameter(0)
 ROOT s = f32[0,5] sort(p), dimensions={1}, to_apply=lt }""", np.zeros((0,5),np.float32))
case("topk_zero", """HloModule m
ENTRY e { p = f32[0,5] parameter(0)
 ROOT t = (f32[0,2], s32[0,2]) topk(p), k=2, largest=true }""", np.zeros((0,5),np.float32))
case("topk_k0", """HloModule m
ENTRY e { p = f32[3,5] parameter(0)
 ROOT t = (f32[3,0], s32[3,0]) topk(p), k=0, largest=true }""", np.ones((3,5),np.float32))
case("reduce_window_zero", "HloModule m\n" + ADD + """ENTRY e { p = f32[0,4] parameter(0) z = f32[] constant(0)
 ROOT r = f32[0,3] reduce-window(p, z), window={size=1x2}, to_apply=add }""", np.zeros((0,4),np.float32))
case("reduce_window_pad_zero", "HloModule m\n" + ADD + """ENTRY e { p = f32[0,4] parameter(0) z = f32[] constant(0)
 ROOT r = f32[2,3] reduce-window(p, z), window={size=1x2 pad=1_1x0_0}, to_apply=add }""", np.zeros((0,4),np.float32))
GE = """ge { a = f32[] parameter(0) b = f32[] parameter(1) ROOT c = pred[] compare(a, b), direction=GE }
"""
case("sas_zero", "HloModule m\n" + ADD + GE + """ENTRY e { p = f32[0,4] parameter(0) s = f32[0,2] parameter(1) z = f32[] constant(0)
 ROOT r = f32[0,4] select-and-scatter(p, s, z), window={size=1x2 stride=1x2}, select=ge, scatter=add }""", np.zeros((0,4),np.float32), np.zeros((0,2),np.float32))
case("sas_pad_zero", "HloModule m\n" + ADD + GE + """ENTRY e { p = f32[0,4] parameter(0) s = f32[2,2] parameter(1) z = f32[] constant(0)
 ROOT r = f32[0,4] select-and-scatter(p, s, z), window={size=1x2 stride=1x2 pad=1_1x0_0}, select=ge, scatter=add }""", np.zeros((0,4),np.float32), np.ones((2,2),np.float32))
case("pad_zero", """HloModule m
ENTRY e { p = f32[0] parameter(0) z = f32[] constant(5)
 ROOT r = f32[2] pad(p, z), padding=1_1 }""", np.zeros((0,),np.float32))
case("pad_zero_interior", """HloModule m
ENTRY e { p = f32[0,3] parameter(0) z = f32[] constant(5)
 ROOT r = f32[2,5] pad(p, z), padding=1_1_2x1_1 }""", np.zeros((0,3),np.float32))
case("pad_negative_to_zero", """HloModule m
ENTRY e { p = f32[3] parameter(0) z = f32[] constant(5)
 ROOT r = f32[0] pad(p, z), padding=-2_-1 }""", np.ones((3,),np.float32))
case("concat_pad_zero", """HloModule m
ENTRY e { p = f32[0] parameter(0) c = f32[0] concatenate(p, p), dimensions={0}
 z = f32[] constant(5)
 ROOT r = f32[2] pad(c, z), padding=1_1 }""", np.zeros((0,),np.float32))
case("concat_zero_mixed", """HloModule m
ENTRY e { p = f32[0,2] parameter(0) q = f32[3,2] parameter(1) 
 ROOT c = f32[3,2] concatenate(p, q, p), dimensions={0} }""", np.zeros((0,2),np.float32), np.ones((3,2),np.float32))
case("concat_zero_mixed_exp", """HloModule m
ENTRY e { p = f32[0,2] parameter(0) q = f32[3,2] parameter(1) 
 c = f32[3,2] concatenate(p, q, p), dimensions={0}
  ROOT x = f32[3,2] exponential(c) }""", np.zeros((0,2),np.float32), np.ones((3,2),np.float32))
case("reshape_zero_pad", """HloModule m
ENTRY e { p = f32[2,0] parameter(0)  r = f32[0,2] reshape(p)  c = f32[] constant(1)
 ROOT pad = f32[1,3] pad(r, c), padding=1_0x1_0 }""", np.zeros((2, 0), np.float32))
case("conv_empty_padded_input", """HloModule m
ENTRY e { p = f32[2,2,0] parameter(0) k = f32[1,2,1] parameter(1)
 ROOT c = f32[2,1,1] convolution(p, k), window={size=1 pad=1_0}, dim_labels=bf0_oi0->bf0 }""",
     np.zeros((2, 2, 0), np.float32), np.ones((1, 2, 1), np.float32))
case("conv_empty_padded_input_batch1", """HloModule m
ENTRY e { p = f32[1,2,0] parameter(0) k = f32[1,2,1] parameter(1)
 ROOT c = f32[1,1,1] convolution(p, k), window={size=1 pad=1_0}, dim_labels=bf0_oi0->bf0 }""",
     np.zeros((1, 2, 0), np.float32), np.ones((1, 2, 1), np.float32))
case("conv_empty_features", """HloModule m
ENTRY e { p = f32[2,0,5] parameter(0) k = f32[3,0,2] parameter(1)
 ROOT c = f32[2,3,4] convolution(p, k), window={size=2 pad=0_0}, dim_labels=bf0_oi0->bf0 }""",
     np.zeros((2, 0, 5), np.float32), np.zeros((3, 0, 2), np.float32))
case("fft_zero", """HloModule m
ENTRY e { p = c64[0,8] parameter(0)
 ROOT f = c64[0,8] fft(p), fft_type=FFT, fft_length={8} }""", np.zeros((0,8),np.complex64))
case("fft_len_zero", """HloModule m
ENTRY e { p = c64[3,0] parameter(0)
 ROOT f = c64[3,0] fft(p), fft_type=FFT, fft_length={0} }""", np.zeros((3,0),np.complex64))
case("rfft_zero", """HloModule m
ENTRY e { p = f32[0,8] parameter(0)
 ROOT f = c64[0,5] fft(p), fft_type=RFFT, fft_length={8} }""", np.zeros((0,8),np.float32))
case("irfft_zero", """HloModule m
ENTRY e { p = c64[2,0] parameter(0)
 ROOT f = f32[2,0] fft(p), fft_type=IRFFT, fft_length={0} }""", np.zeros((2,0),np.complex64))
case("reverse_zero", """HloModule m
ENTRY e { p = f32[0,3] parameter(0)
 ROOT f = f32[0,3] reverse(p), dimensions={0,1} }""", np.zeros((0,3),np.float32))
case("reduce_zero", "HloModule m\n" + ADD + """ENTRY e { p = f32[0,3] parameter(0) z = f32[] constant(1)
 ROOT r = f32[3] reduce(p, z), dimensions={0}, to_apply=add }""", np.zeros((0,3),np.float32))
case("dot_zero_k", """HloModule m
ENTRY e { p = f32[4,0] parameter(0) q = f32[0,5] parameter(1)
 ROOT r = f32[4,5] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0} }""", np.zeros((4,0),np.float32), np.zeros((0,5),np.float32))
case("slice_zero", """HloModule m
ENTRY e { p = f32[4] parameter(0)
 ROOT r = f32[0] slice(p), slice={[4:4]} }""", np.ones((4,),np.float32))
case("conv_zero", """HloModule m
ENTRY e { p = f32[1,0,3] parameter(0) k = f32[2,3,4] parameter(1)
 ROOT r = f32[1,0,4] convolution(p, k), window={size=2}, dim_labels=b0f_0io->b0f }""", np.zeros((1,0,3),np.float32), np.ones((2,3,4),np.float32))
case("conv_zero_pad", """HloModule m
ENTRY e { p = f32[1,0,3] parameter(0) k = f32[2,3,4] parameter(1)
 ROOT r = f32[1,1,4] convolution(p, k), window={size=2 pad=1_1}, dim_labels=b0f_0io->b0f }""", np.zeros((1,0,3),np.float32), np.ones((2,3,4),np.float32))
case("iota_zero", """HloModule m
ENTRY e { ROOT r = s32[0,3] iota(), iota_dimension=1 }""")
case("bcast_zero", """HloModule m
ENTRY e { p = f32[0] parameter(0) ROOT r = f32[3,0] broadcast(p), dimensions={1} }""", np.zeros((0,),np.float32))
case("transpose_zero", """HloModule m
ENTRY e { p = f32[0,64] parameter(0) ROOT r = f32[64,0] transpose(p), dimensions={1,0} }""", np.zeros((0,64),np.float32))



def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("name", sorted(CASES))
def test_zero_size(name, optimize):
    text, args = CASES[name]
    want = _as_tuple(xlac.evaluate(xlac.parse_hlo(text), *args))
    got = _as_tuple(xlac.jit(text, optimize=optimize)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).shape == np.asarray(w).shape
        np.testing.assert_array_equal(g, w)


def test_gather_of_empty_slices_is_zeros():
    text, args = CASES["gather_collapsed_slice_size_0"]
    np.testing.assert_array_equal(xlac.evaluate(text, *args), np.zeros(3, np.float32))


def test_pad_of_empty_concatenate_is_the_padding():
    # Issue 12, item 2: an internal IndexError in the concatenate generator.
    text, args = CASES["concat_pad_zero"]
    np.testing.assert_array_equal(xlac.jit(text)(*args), np.full(2, 5, np.float32))


def test_gather_slice_size_above_1_on_collapsed_dimension_is_rejected():
    b = xlac.XlaBuilder("g")
    p = ops.parameter(b, 0, xlac.shape("f32[4]"), "p")
    i = ops.parameter(b, 1, xlac.shape("s32[3,1]"), "i")
    with pytest.raises(xlac.ShapeError, match="gather.*slice_sizes"):
        ops.gather(p, i, dict(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,),
                              index_vector_dim=1), slice_sizes=(2,))
