"""Regression tests for the builder's error reporting, from the builder fuzzer
(tests/fuzz/test_builder_fuzz.py): an ill-shaped configuration with integer
arguments raises ShapeError naming the op (it raised a plain ValueError,
a TypeError or a ZeroDivisionError); a non-integer where an integer belongs
raises TypeError naming the op and the argument (it raised numpy's or
operator.index's message, naming neither)."""
import numpy as np
import pytest

import xlac
from xlac import ops


def _add(et="f32"):
    cb = xlac.XlaBuilder("add")
    s = xlac.shape(f"{et}[]")
    return cb.build(ops.add(ops.parameter(cb, 0, s), ops.parameter(cb, 1, s)))


def _ge():
    cb = xlac.XlaBuilder("ge")
    s = xlac.shape("f32[]")
    return cb.build(ops.ge(ops.parameter(cb, 0, s), ops.parameter(cb, 1, s)))


def _param(b, text, k=0):
    return ops.parameter(b, k, xlac.shape(text))


SHAPE_ERRORS = {
    "conv window_strides count": lambda b: ops.conv_general_dilated(
        _param(b, "f32[1,1,4,4]"), _param(b, "f32[1,1,2,2]", 1), [1], "VALID"),
    "conv rhs_dilation count": lambda b: ops.conv_general_dilated(
        _param(b, "f32[1,1,4,4]"), _param(b, "f32[1,1,2,2]", 1), [1, 1], "VALID", None, [1, 1, 1]),
    "conv padding pairs": lambda b: ops.conv_general_dilated(
        _param(b, "f32[1,1,4,4]"), _param(b, "f32[1,1,2,2]", 1), [1, 1], [(0, 0)]),
    "conv SAME with lhs_dilation": lambda b: ops.conv_general_dilated(
        _param(b, "f32[1,1,4,4]"), _param(b, "f32[1,1,2,2]", 1), [1, 1], "SAME", [2, 2]),
    "conv SAME with zero stride": lambda b: ops.conv_general_dilated(
        _param(b, "f32[1,1,4,4]"), _param(b, "f32[1,1,2,2]", 1), [0, 1], "SAME"),
    "reduce_window window_dimensions count": lambda b: ops.reduce_window(
        _param(b, "f32[4,4]"), np.float32(0), _add(), [2]),
    "reduce_window window_dilations count": lambda b: ops.reduce_window(
        _param(b, "f32[4,4]"), np.float32(0), _add(), [2, 2], None, None, [1]),
    "select_and_scatter SAME with zero stride": lambda b: ops.select_and_scatter(
        _param(b, "f32[4]"), _ge(), [2], [0], "SAME", _param(b, "f32[2]", 1), np.float32(0), _add()),
    "pad entry of two numbers": lambda b: ops.pad(_param(b, "f32[4]"), np.float32(0), [(1, 1)]),
}


@pytest.mark.parametrize("case", sorted(SHAPE_ERRORS))
def test_ill_shaped_integer_configurations_raise_shape_error_naming_the_op(case):
    with pytest.raises(xlac.ShapeError) as info:
        SHAPE_ERRORS[case](xlac.XlaBuilder("b"))
    assert str(info.value).startswith(case.split()[0])


TYPE_ERRORS = {
    "slice_in_dim": lambda b: ops.slice_in_dim(_param(b, "f32[4]"), 0, 2, 1, None),
    "get_tuple_element": lambda b: ops.get_tuple_element(ops.tuple(b, [_param(b, "f32[4]")]), 1.5),
    "sort": lambda b: ops.sort(_param(b, "f32[4]"), dimension=None),
    "top_k": lambda b: ops.top_k(_param(b, "f32[4]"), None),
    "iota": lambda b: ops.iota(b, xlac.shape("s32[4]"), "0"),
    "reduce_precision": lambda b: ops.reduce_precision(_param(b, "f32[4]"), None, 2),
    "concat_in_dim": lambda b: ops.concat_in_dim(b, [_param(b, "f32[4]")], None),
    "dynamic_slice": lambda b: ops.dynamic_slice(_param(b, "f32[4]"), ["1"], [2]),
    "parameter": lambda b: ops.parameter(b, 1.5, xlac.shape("f32[]")),
    "gather": lambda b: ops.gather(_param(b, "f32[4]"), _param(b, "s32[2,1]", 1),
                                   {"offset_dims": (), "collapsed_slice_dims": (0,), "start_index_map": (0,),
                                    "index_vector_dim": 1.5}, [1]),
    "scatter": lambda b: ops.scatter(_param(b, "f32[4]"), _param(b, "s32[2,1]", 1), _param(b, "f32[2]", 2),
                                     _add(), index_vector_dim=1.5, inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,)),
    "conv_general_dilated": lambda b: ops.conv_general_dilated(
        _param(b, "f32[1,1,4,4]"), _param(b, "f32[1,1,2,2]", 1), [1, 1], "VALID", feature_group_count=None),
}


@pytest.mark.parametrize("op", sorted(TYPE_ERRORS))
def test_non_integer_arguments_raise_type_error_naming_the_op(op):
    with pytest.raises(TypeError, match=f"^{op}: .* must be an integer"):
        TYPE_ERRORS[op](xlac.XlaBuilder("b"))
