"""Window and dim_labels text (xlac/hlo/window.py), and the shape rules that read them."""
import pytest

import xlac
from xlac.hlo.window import (ConvDimensionNumbers, Window, WindowDimension, WindowError,
                             format_dim_labels, format_window, parse_dim_labels, parse_window)
from xlac.hlo.shape_inference import infer_shape
from xlac.shape import parse_shape as S


def test_parse_window_every_field():
    w = parse_window("{size=3x2 stride=2x1 pad=1_-1x-2_3 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1}")
    assert w.dimensions == (WindowDimension(3, 2, 1, -1, 3, 1, False),
                            WindowDimension(2, 1, -2, 3, 1, 2, True))
    assert format_window(w) == "{size=3x2 stride=2x1 pad=1_-1x-2_3 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1}"


@pytest.mark.parametrize("text", ["{size=3x3 stride=2x2 pad=1_1x1_1}", "{size=1x10 pad=0_0x9_0}",
                                  "{size=3 rhs_dilate=2}", "{}"])
def test_window_round_trip(text):
    assert format_window(parse_window(text)) == text


@pytest.mark.parametrize("text,match", [("{stride=2}", "no size"), ("{size=2x2 stride=2}", "stride has 1"),
                                        ("{size=2 pad=1}", "bad value"), ("{size=2 foo=1}", "unknown field"),
                                        ("{size=2", "braces")])
def test_window_errors(text, match):
    with pytest.raises(WindowError, match=match):
        parse_window(text)


def test_window_output_size():
    # 5 elements, window 3 stride 2: 2 positions; padded one each side: 3.
    assert WindowDimension(3, 2).output_size(5) == 2
    assert WindowDimension(3, 2, 1, 1).output_size(5) == 3
    # Base dilation 2 makes 4 elements 7 wide; window 2 dilated by 3 is 4 wide.
    assert WindowDimension(2, 1, 0, 0, 3, 2).output_size(4) == 4
    assert WindowDimension(4).output_size(2) == 0
    assert Window.make([2, 3], padding=[(1, 0), (0, 0)]).has_padding


def test_dim_labels():
    dn = parse_dim_labels("b01f_01io->b01f")
    assert dn == ConvDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))
    assert format_dim_labels(dn) == "b01f_01io->b01f"
    assert parse_dim_labels("bf0_oi0->bf0") == ConvDimensionNumbers.default(1)
    assert format_dim_labels(parse_dim_labels("f10b_o10i->1bf0")) == "f10b_o10i->1bf0"
    for bad in ("b01f_01io", "b0f_01io->b01f", "b00f_01io->b01f", "bx1f_01io->b01f"):
        with pytest.raises(WindowError):
            parse_dim_labels(bad)


CONV = {"window": xlac.hlo.ir.Raw("{size=3x3 stride=2x2 pad=1_1x1_1}"),
        "dim_labels": xlac.hlo.ir.Raw("b01f_01io->b01f")}


def test_convolution_shape_rule():
    assert str(infer_shape("convolution", [S("f32[2,9,9,3]"), S("f32[3,3,3,8]")], CONV)) == "f32[2,5,5,8]{3,2,1,0}"
    with pytest.raises(xlac.ShapeError, match=r"convolution: the lhs feature dimension \(4\)"):
        infer_shape("convolution", [S("f32[2,9,9,4]"), S("f32[3,3,3,8]")], CONV)
    with pytest.raises(xlac.ShapeError, match="window dimension 1 has size 3, but kernel"):
        infer_shape("convolution", [S("f32[2,9,9,3]"), S("f32[3,2,3,8]")], CONV)
    # operands of two types compute in the higher precision one, as XLA; pred is allowed
    assert str(infer_shape("convolution", [S("f32[2,9,9,3]"), S("f16[3,3,3,8]")], CONV)) == "f32[2,5,5,8]{3,2,1,0}"
    assert str(infer_shape("convolution", [S("pred[2,9,9,3]"), S("pred[3,3,3,8]")], CONV)) == "pred[2,5,5,8]{3,2,1,0}"
    groups = dict(CONV, feature_group_count=3)
    with pytest.raises(xlac.ShapeError, match="feature_group_count"):
        infer_shape("convolution", [S("f32[2,9,9,3]"), S("f32[3,3,1,8]")], groups)
    assert str(infer_shape("convolution", [S("f32[2,9,9,3]"), S("f32[3,3,1,9]")], groups)) == "f32[2,5,5,9]{3,2,1,0}"


def test_gather_shape_rule():
    attrs = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,),
             "index_vector_dim": 1, "slice_sizes": (1, 6)}
    assert str(infer_shape("gather", [S("f32[10,6]"), S("s32[7,1]")], attrs)) == "f32[7,6]{1,0}"
    with pytest.raises(xlac.ShapeError, match="start_indices must have an integer element type"):
        infer_shape("gather", [S("f32[10,6]"), S("f32[7,1]")], attrs)
    with pytest.raises(xlac.ShapeError, match="operand rank 2 must equal"):
        infer_shape("gather", [S("f32[10,6]"), S("s32[7,1]")], dict(attrs, collapsed_slice_dims=()))
    with pytest.raises(xlac.ShapeError, match=r"slice_sizes\[1\]=7 must be in \[0, 6\]"):
        infer_shape("gather", [S("f32[10,6]"), S("s32[7,1]")], dict(attrs, slice_sizes=(1, 7)))


def test_reduce_window_and_fft_shape_rules():
    m = xlac.parse_hlo("HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                       "  ROOT r = f32[] add(a, b)\n}\n\nENTRY e {\n  ROOT x = f32[] parameter(0)\n}\n")
    add = m.computation("add")
    attrs = {"window": xlac.hlo.ir.Raw("{size=1x2x2x1 stride=1x2x2x1}"), "to_apply": add}
    assert str(infer_shape("reduce-window", [S("f32[2,8,8,3]"), S("f32[]")], attrs)) == "f32[2,4,4,3]{3,2,1,0}"
    with pytest.raises(xlac.ShapeError, match="init value 0"):
        infer_shape("reduce-window", [S("f32[2,8,8,3]"), S("s32[]")], attrs)
    fft = {"fft_type": "RFFT", "fft_length": (16,)}
    assert str(infer_shape("fft", [S("f32[4,16]")], fft)) == "c64[4,9]{1,0}"
    assert str(infer_shape("fft", [S("c128[4,9]")], dict(fft, fft_type="IRFFT"))) == "f64[4,16]{1,0}"
    with pytest.raises(xlac.ShapeError, match="fft_type=DCT"):
        infer_shape("fft", [S("f32[4,16]")], dict(fft, fft_type="DCT"))
