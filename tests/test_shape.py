"""Shapes, layouts and index utilities (spec: Shapes and Layout)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from xlac.shape import (Layout, Shape, from_buffer, linear_to_multi_index, multi_index_to_linear,
                        parse_shape, to_buffer)

# The spec's [2 x 3] array "a b c / d e f", as numbers a=0 .. f=5.
ABC = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.int32)
a, b, c, d, e, f = range(6)


def test_spec_column_major_layout():
    s = Shape(xlac.S32, (2, 3), layout=Layout(minor_to_major=(0, 1)))
    assert list(to_buffer(ABC, s)) == [a, d, b, e, c, f]


def test_spec_row_major_layout():
    s = Shape(xlac.S32, (2, 3), layout=Layout(minor_to_major=(1, 0)))
    assert list(to_buffer(ABC, s)) == [a, b, c, d, e, f]


def test_spec_default_layout_is_major_to_minor():
    assert Shape(xlac.F32, (2, 3, 4)).layout.minor_to_major == (2, 1, 0)


def test_spec_padded_column_major_layout():
    s = Shape(xlac.S32, (2, 3), layout=Layout(minor_to_major=(0, 1), padded_dimensions=(3, 5)))
    # "a d 0 b e 0 c f 0 0 0 0 0 0 0"; padding value 0 stands for the spec's 0.
    pad = 0
    assert list(to_buffer(ABC, s)) == [a, d, pad, b, e, pad, c, f, pad] + [pad] * 6
    assert s.byte_size() == 15 * 4
    np.testing.assert_array_equal(from_buffer(to_buffer(ABC, s), s), ABC)


def test_padding_value():
    s = Shape(xlac.F32, (1, 1), layout=Layout((1, 0), (1, 2), "highest"))
    assert list(to_buffer(np.ones((1, 1), np.float32), s)) == [1.0, np.inf]


def test_index_utilities_match_spec():
    s = Shape(xlac.S32, (2, 3), layout=Layout((0, 1), (3, 5)))
    buf = to_buffer(ABC, s)
    for i in range(2):
        for j in range(3):
            k = multi_index_to_linear(s, (i, j))
            assert buf[k] == ABC[i, j]
            assert linear_to_multi_index(s, k) == (i, j)
    with pytest.raises(IndexError):
        multi_index_to_linear(s, (2, 0))


@pytest.mark.parametrize("text", [
    "f32[2,3]{0,1}", "f32[2,3]{1,0}", "f32[]", "pred[7]{0}", "bf16[1,2,3]{2,0,1}",
    "(f32[], s32[4]{0})", "((u8[1]{0}), token[])", "c64[2]{0}", "s32[2,3]{0,1:P(3,5)}",
    "f32[2]{0:P(4)V(one)}", "()",
])
def test_shape_text_round_trip(text):
    assert str(xlac.shape(text)) == text


def test_shape_text_defaults_and_comments():
    assert str(xlac.shape("f32[2,3]")) == "f32[2,3]{1,0}"
    assert str(xlac.shape("(f32[], /*index=1*/s32[])")) == "(f32[], s32[])"
    s = xlac.shape("f32[2,3]{0,1}")
    assert s.element_type is xlac.F32 and s.dimensions == (2, 3) and s.layout.minor_to_major == (0, 1)


@pytest.mark.parametrize("bad", ["f32[2,3", "q32[2]", "f32[2]{0,1}", "f32[-1]", "f32[2] x"])
def test_bad_shape_text(bad):
    with pytest.raises(ValueError):
        parse_shape(bad)


def test_bad_layouts():
    with pytest.raises(ValueError, match="permutation"):
        Shape(xlac.F32, (2, 3), Layout((0, 0)))
    with pytest.raises(ValueError, match="padded_dimensions"):
        Shape(xlac.F32, (2, 3), Layout((1, 0), (1, 3)))


def test_element_types():
    assert xlac.BF16.dtype.name == "bfloat16"
    assert xlac.PrimitiveType.from_dtype(np.complex64) is xlac.C64
    assert xlac.PRED.byte_size == 1 and xlac.C128.byte_size == 16


@st.composite
def shapes_with_layouts(draw):
    rank = draw(st.integers(0, 4))
    dims = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    perm = draw(st.permutations(range(rank)))
    padded = None
    if rank and draw(st.booleans()):
        padded = tuple(n + draw(st.integers(0, 2)) for n in dims)
    return Shape(xlac.S32, dims, Layout(tuple(perm), padded))


@settings(max_examples=60, deadline=None)
@given(shapes_with_layouts())
def test_buffer_round_trip_any_layout(s):
    logical = np.arange(s.element_count(), dtype=np.int32).reshape(s.dimensions)
    buf = to_buffer(logical, s)
    assert buf.size == s.buffer_element_count()
    np.testing.assert_array_equal(from_buffer(buf, s), logical)
    for idx in np.ndindex(*s.dimensions):
        assert buf[multi_index_to_linear(s, idx)] == logical[idx]
