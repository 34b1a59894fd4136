"""Shape rules of xlac.hlo.shape_inference, one opcode at a time."""
import numpy as np
import pytest

import xlac
from xlac import ShapeError, UnsupportedError
from xlac.hlo.ir import HloComputation, HloInstruction
from xlac.hlo.shape_inference import RESULT_SHAPE_GIVEN, has_rule, infer_shape

S = xlac.shape


def infer(opcode, shapes, attrs=None, shape=None):
    return infer_shape(opcode, [S(s) if isinstance(s, str) else s for s in shapes], attrs,
                       shape=S(shape) if isinstance(shape, str) else shape)


def same(a, b):
    a = S(a) if isinstance(a, str) else a
    return a.compatible(S(b)) and a.has_default_layout() if a.is_array else a.compatible(S(b))


def raises(match, opcode, shapes, attrs=None, shape=None):
    with pytest.raises(ShapeError, match=match) as e:
        infer(opcode, shapes, attrs, shape)
    assert str(e.value).startswith(opcode + ":")
    return str(e.value)


# -- unary --------------------------------------------------------------------

FLOAT_ONLY = ["floor", "ceil", "round-nearest-afz", "round-nearest-even", "erf"]
FLOAT_OR_COMPLEX = ["cbrt", "cosine", "sine", "tan", "tanh", "exponential", "exponential-minus-one",
                    "log", "log-plus-one", "logistic", "sqrt", "rsqrt"]


@pytest.mark.parametrize("op", FLOAT_ONLY + FLOAT_OR_COMPLEX)
def test_float_unary_keeps_shape(op):
    for t in ("f16", "bf16", "f32", "f64"):
        assert same(infer(op, [f"{t}[2,3]{{0,1}}"]), f"{t}[2,3]")
    assert same(infer(op, ["f32[]"]), "f32[]")


@pytest.mark.parametrize("op", FLOAT_ONLY + FLOAT_OR_COMPLEX)
def test_float_unary_rejects_ints(op):
    msg = raises("element type", op, ["s32[4]"])
    assert "s32[4]" in msg


@pytest.mark.parametrize("op", FLOAT_OR_COMPLEX)
def test_complex_allowed(op):
    assert same(infer(op, ["c64[3]"]), "c64[3]")


@pytest.mark.parametrize("op", FLOAT_ONLY)
def test_complex_rejected(op):
    raises("floating-point", op, ["c64[3]"])


def test_real_imag_abs_of_complex_give_component():
    for op in ("real", "imag", "abs"):
        assert same(infer(op, ["c64[2]"]), "f32[2]")
        assert same(infer(op, ["c128[]"]), "f64[]")
        assert same(infer(op, ["f32[2]"]), "f32[2]")
    raises("element type", "real", ["s32[2]"])


def test_abs_sign_negate_types():
    assert same(infer("abs", ["s8[2]"]), "s8[2]")
    raises("signed integer", "abs", ["u32[2]"])
    raises("element type", "abs", ["pred[2]"])
    assert same(infer("sign", ["u32[2]"]), "u32[2]")
    assert same(infer("sign", ["s32[2]"]), "s32[2]")
    assert same(infer("negate", ["u8[2]"]), "u8[2]")
    raises("element type", "negate", ["pred[2]"])
    raises("element type", "sign", ["pred[]"])


def test_bit_ops():
    for op in ("count-leading-zeros", "popcnt"):
        assert same(infer(op, ["u16[5]"]), "u16[5]")
        raises("integer", op, ["f32[5]"])
        raises("integer", op, ["pred[5]"])
    assert same(infer("not", ["pred[5]"]), "pred[5]")
    assert same(infer("not", ["s64[5]"]), "s64[5]")
    raises("pred or integer", "not", ["f32[5]"])


def test_is_finite_gives_pred():
    assert same(infer("is-finite", ["f32[2,2]"]), "pred[2,2]")
    raises("floating-point", "is-finite", ["s32[2]"])


def test_unary_arity_and_tuple():
    raises("takes 1 operand", "negate", ["f32[2]", "f32[2]"])
    raises("must be an array", "negate", ["(f32[2], f32[])"])


# -- binary ---------------------------------------------------------------------

BINARY = ["add", "subtract", "multiply", "divide", "power", "remainder", "maximum", "minimum"]


@pytest.mark.parametrize("op", BINARY)
def test_binary_same_shape(op):
    assert same(infer(op, ["f32[2,3]", "f32[2,3]{0,1}"]), "f32[2,3]")
    assert same(infer(op, ["s32[]", "s32[]"]), "s32[]")


@pytest.mark.parametrize("op", BINARY + ["and", "or", "xor", "shift-left", "atan2"])
def test_binary_needs_identical_dims(op):
    et = "f32" if op in BINARY + ["atan2"] else "s32"
    msg = raises("identical dimensions", op, [f"{et}[7,2,5]", f"{et}[7,2,6]"])
    assert f"{et}[7,2,5]" in msg and f"{et}[7,2,6]" in msg
    # no implicit scalar broadcasting either
    raises("identical dimensions", op, [f"{et}[3]", f"{et}[]"])


def test_binary_needs_same_element_type():
    msg = raises("same element type", "add", ["f32[2]", "f64[2]"])
    assert "f32[2]" in msg and "f64[2]" in msg


def test_binary_element_types():
    assert same(infer("add", ["pred[2]", "pred[2]"]), "pred[2]")
    raises("element type", "subtract", ["pred[2]", "pred[2]"])
    raises("element type", "divide", ["pred[]", "pred[]"])
    for op in ("and", "or", "xor"):
        assert same(infer(op, ["pred[2]", "pred[2]"]), "pred[2]")
        assert same(infer(op, ["u8[2]", "u8[2]"]), "u8[2]")
        raises("pred or integer", op, ["f32[2]", "f32[2]"])
    for op in ("shift-left", "shift-right-arithmetic", "shift-right-logical"):
        assert same(infer(op, ["s32[2]", "s32[2]"]), "s32[2]")
        raises("integer", op, ["f32[2]", "f32[2]"])
    raises("floating-point", "atan2", ["s32[2]", "s32[2]"])


def test_complex_op():
    assert same(infer("complex", ["f32[3]", "f32[3]"]), "c64[3]")
    assert same(infer("complex", ["f64[]", "f64[]"]), "c128[]")
    raises("f32 or f64", "complex", ["f16[3]", "f16[3]"])
    raises("same element type", "complex", ["f32[3]", "f64[3]"])


# -- compare ----------------------------------------------------------------------

def test_compare():
    for d in ("EQ", "NE", "GE", "GT", "LE", "LT"):
        assert same(infer("compare", ["f32[2]", "f32[2]"], {"direction": d}), "pred[2]")
    assert same(infer("compare", ["f32[2]", "f32[2]"], {"direction": "LT", "type": "TOTALORDER"}), "pred[2]")
    assert same(infer("compare", ["u32[2]", "u32[2]"], {"direction": "LT", "type": "UNSIGNED"}), "pred[2]")
    raises("missing attribute 'direction'", "compare", ["f32[2]", "f32[2]"])
    raises("direction=XX", "compare", ["f32[2]", "f32[2]"], {"direction": "XX"})
    raises("type=BOGUS", "compare", ["f32[2]", "f32[2]"], {"direction": "EQ", "type": "BOGUS"})
    raises("does not suit", "compare", ["s32[2]", "s32[2]"], {"direction": "EQ", "type": "FLOAT"})
    raises("identical dimensions", "compare", ["f32[2]", "f32[3]"], {"direction": "EQ"})
    raises("same element type", "compare", ["f32[2]", "s32[2]"], {"direction": "EQ"})
    assert same(infer("compare", ["c64[2]", "c64[2]"], {"direction": "EQ"}), "pred[2]")
    raises("unordered", "compare", ["c64[2]", "c64[2]"], {"direction": "LT"})


# -- select, clamp ------------------------------------------------------------------

def test_select():
    assert same(infer("select", ["pred[4]", "s32[4]", "s32[4]"]), "s32[4]")
    assert same(infer("select", ["pred[]", "s32[4]", "s32[4]"]), "s32[4]")
    raises("pred must be", "select", ["s32[4]", "s32[4]", "s32[4]"])
    raises("same shape", "select", ["pred[4]", "s32[4]", "s32[3]"])
    raises("same shape", "select", ["pred[4]", "s32[4]", "f32[4]"])
    raises("dimensions of on_true", "select", ["pred[3]", "s32[4]", "s32[4]"])
    assert same(infer("select", ["pred[]", "(f32[2], s32[])", "(f32[2], s32[])"]), "(f32[2], s32[])")
    raises("scalar pred", "select", ["pred[2]", "(f32[2], s32[])", "(f32[2], s32[])"])


def test_clamp():
    assert same(infer("clamp", ["s32[]", "s32[3]", "s32[]"]), "s32[3]")
    assert same(infer("clamp", ["f32[3]", "f32[3]", "f32[3]"]), "f32[3]")
    raises("min must be a scalar", "clamp", ["s32[2]", "s32[3]", "s32[]"])
    raises("max must have the operand's element type", "clamp", ["s32[]", "s32[3]", "f32[]"])
    raises("takes 3", "clamp", ["s32[]", "s32[3]"])
    assert same(infer("clamp", ["pred[]", "pred[3]", "pred[]"]), "pred[3]")   # false < true, as XLA
    raises("ordered element type", "clamp", ["c64[]", "c64[3]", "c64[]"])


# -- conversions ---------------------------------------------------------------------

def test_convert():
    assert same(infer("convert", ["s32[3]"], {"new_element_type": xlac.F32}), "f32[3]")
    assert same(infer("convert", ["s32[3]"], {"new_element_type": "pred"}), "pred[3]")
    assert same(infer("convert", ["s32[3]"], shape="f64[3]"), "f64[3]")
    raises("cannot be inferred", "convert", ["s32[3]"])
    raises("keep the operand's dimensions", "convert", ["s32[3]"], shape="f64[4]")
    raises("must be an array", "convert", ["(s32[3])"], {"new_element_type": "f32"})
    raises("not an element type", "convert", ["s32[3]"], {"new_element_type": "f31"})


def test_bitcast_convert():
    assert same(infer("bitcast-convert", ["f32[10]"], {"new_element_type": "s32"}), "s32[10]")
    assert same(infer("bitcast-convert", ["f32[10]"], {"new_element_type": "f16"}), "f16[10,2]")
    assert same(infer("bitcast-convert", ["f32[]"], {"new_element_type": "f16"}), "f16[2]")
    assert same(infer("bitcast-convert", ["f16[10,2]"], {"new_element_type": "f32"}), "f32[10]")
    assert same(infer("bitcast-convert", ["u8[3,8]"], shape="f64[3]"), "f64[3]")
    raises("last dimension of size 2", "bitcast-convert", ["f16[10,3]"], {"new_element_type": "f32"})
    raises("last dimension of size 2", "bitcast-convert", ["f16[]"], {"new_element_type": "f32"})
    raises("complex and real", "bitcast-convert", ["c64[2]"], {"new_element_type": "s64"})
    raises("pred", "bitcast-convert", ["pred[8]"], {"new_element_type": "u8"})
    raises("should be", "bitcast-convert", ["f32[10]"], shape="s32[11]")


def test_reduce_precision():
    a = {"exponent_bits": 5, "mantissa_bits": 10}
    assert same(infer("reduce-precision", ["f32[4]"], a), "f32[4]")
    raises("floating-point", "reduce-precision", ["s32[4]"], a)
    raises("exponent_bits=0", "reduce-precision", ["f32[4]"], {"exponent_bits": 0, "mantissa_bits": 1})
    raises("mantissa_bits=-1", "reduce-precision", ["f32[4]"], {"exponent_bits": 2, "mantissa_bits": -1})


# -- leaves --------------------------------------------------------------------------

def test_leaves_return_given_shape():
    p = S("f32[2,3]{0,1}")
    assert infer("parameter", [], {"parameter_number": 0}, p) == p  # layout kept
    assert infer("constant", [], {"literal": np.zeros((2, 3), np.float32)}, p) == p
    raises("literal", "constant", [], {"literal": np.zeros((3,), np.float32)}, p)
    raises("cannot be inferred", "parameter", [], {"parameter_number": 0})
    assert infer("iota", [], {"iota_dimension": 1}, "s32[4,8]") == S("s32[4,8]")
    raises("iota_dimension=2", "iota", [], {"iota_dimension": 2}, "s32[4,8]")
    raises("iota_dimension=0", "iota", [], {"iota_dimension": 0}, "s32[]")


def test_result_shape_given_set():
    assert {"parameter", "constant", "iota", "broadcast", "reshape", "convert"} <= RESULT_SHAPE_GIVEN


# -- data movement ---------------------------------------------------------------------

def test_broadcast():
    assert infer("broadcast", ["f32[3]"], {"dimensions": (1,)}, "f32[2,3]") == S("f32[2,3]")
    assert infer("broadcast", ["f32[]"], {"dimensions": ()}, "f32[2,3]") == S("f32[2,3]")
    assert infer("broadcast", ["f32[2,3]"], {"dimensions": (1, 0)}, "f32[3,2]") == S("f32[3,2]")
    raises("equal sizes", "broadcast", ["f32[3]"], {"dimensions": (0,)}, "f32[2,3]")
    # HLO broadcast does not stretch size-1 dimensions (the builder reshapes them away)
    raises("equal sizes", "broadcast", ["f32[1]"], {"dimensions": (0,)}, "f32[2,3]")
    raises("out of range", "broadcast", ["f32[3]"], {"dimensions": (2,)}, "f32[2,3]")
    raises("map each", "broadcast", ["f32[3]"], {"dimensions": ()}, "f32[2,3]")
    raises("repeated", "broadcast", ["f32[3,3]"], {"dimensions": (1, 1)}, "f32[3,3]")
    raises("element type", "broadcast", ["f32[3]"], {"dimensions": (1,)}, "s32[2,3]")
    raises("cannot be inferred", "broadcast", ["f32[3]"], {"dimensions": (1,)})


def test_reshape():
    assert infer("reshape", ["f32[4,2,3]"], {}, "f32[8,3]") == S("f32[8,3]")
    assert infer("reshape", ["f32[1,1]"], {}, "f32[]") == S("f32[]")
    raises("cannot reshape 24 elements", "reshape", ["f32[4,2,3]"], {}, "f32[5,5]")
    raises("element type", "reshape", ["f32[4]"], {}, "s32[4]")


def test_transpose():
    assert same(infer("transpose", ["f32[2,3,4]"], {"dimensions": (2, 0, 1)}), "f32[4,2,3]")
    raises("not a permutation", "transpose", ["f32[2,3,4]"], {"dimensions": (0, 0, 1)})
    raises("not a permutation", "transpose", ["f32[2,3,4]"], {"dimensions": (0, 1)})
    raises("not a permutation", "transpose", ["f32[2,3]"], {"dimensions": (0, 2)})


def test_slice():
    assert same(infer("slice", ["f32[5]"], {"slice": ((2, 4, 1),)}), "f32[2]")
    assert same(infer("slice", ["f32[4,3]"], {"slice": ((2, 4, 1), (1, 3, 1))}), "f32[2,2]")
    assert same(infer("slice", ["f32[10]"], {"slice": ((1, 10, 3),)}), "f32[3]")
    assert same(infer("slice", ["f32[10]"], {"slice": ((4, 4, 1),)}), "f32[0]")
    raises("limit", "slice", ["f32[5]"], {"slice": ((2, 6, 1),)})
    raises("start", "slice", ["f32[5]"], {"slice": ((3, 2, 1),)})
    raises("start", "slice", ["f32[5]"], {"slice": ((-1, 2, 1),)})
    raises("stride 0", "slice", ["f32[5]"], {"slice": ((0, 2, 0),)})
    raises("one \\(start, limit, stride\\) per dimension", "slice", ["f32[5,2]"], {"slice": ((0, 2, 1),)})


def test_concatenate():
    assert same(infer("concatenate", ["f32[3,2]", "f32[1,2]"], {"dimensions": (0,)}), "f32[4,2]")
    assert same(infer("concatenate", ["f32[2]", "f32[2]", "f32[2]"], {"dimensions": (0,)}), "f32[6]")
    raises("dimension 1", "concatenate", ["f32[3,2]", "f32[1,3]"], {"dimensions": (0,)})
    raises("rank", "concatenate", ["f32[3,2]", "f32[2]"], {"dimensions": (0,)})
    raises("element type", "concatenate", ["f32[3]", "s32[3]"], {"dimensions": (0,)})
    raises("scalars", "concatenate", ["f32[]", "f32[]"], {"dimensions": (0,)})
    raises("exactly one", "concatenate", ["f32[3]"], {"dimensions": (0, 1)})
    raises("at least one", "concatenate", [], {"dimensions": (0,)})


def test_pad():
    assert same(infer("pad", ["f32[2,3]", "f32[]"], {"padding": ((1, 2, 0), (0, 0, 1))}), "f32[5,5]")
    assert same(infer("pad", ["f32[5]", "f32[]"], {"padding": ((-2, -1, 0),)}), "f32[2]")
    assert same(infer("pad", ["f32[0]", "f32[]"], {"padding": ((1, 1, 3),)}), "f32[2]")
    raises("negative size", "pad", ["f32[2]", "f32[]"], {"padding": ((-2, -1, 0),)})
    raises("interior padding -1", "pad", ["f32[2]", "f32[]"], {"padding": ((0, 0, -1),)})
    raises("scalar", "pad", ["f32[2]", "f32[1]"], {"padding": ((0, 0, 0),)})
    raises("padding_value type", "pad", ["f32[2]", "s32[]"], {"padding": ((0, 0, 0),)})
    raises("per dimension", "pad", ["f32[2,2]", "f32[]"], {"padding": ((0, 0, 0),)})


# -- tuples, calls --------------------------------------------------------------------

def test_tuple_and_gte():
    t = infer("tuple", ["f32[2]{0}", "s32[]"])
    assert t.compatible(S("(f32[2], s32[])"))
    assert same(infer("get-tuple-element", ["(f32[2], s32[])"], {"index": 1}), "s32[]")
    raises("index 2 is out of range", "get-tuple-element", ["(f32[2], s32[])"], {"index": 2})
    raises("must be a tuple", "get-tuple-element", ["f32[2]"], {"index": 0})


def scalar_computation(name, param_shapes, root_op="add", root_shape=None):
    params = [HloInstruction("parameter", S(s), attrs={"parameter_number": i}, name=f"p{i}")
              for i, s in enumerate(param_shapes)]
    if root_op == "tuple":
        n = len(params) // 2
        root = HloInstruction("tuple", S(root_shape), params[:n], name="t")
    else:
        root = HloInstruction(root_op, S(root_shape or param_shapes[0]), params[:2], name="r")
    return HloComputation(name, params + [root])


def test_call():
    comp = scalar_computation("f", ["f32[2]", "f32[2]"])
    assert same(infer("call", ["f32[2]", "f32[2]"], {"to_apply": comp}), "f32[2]")
    raises("takes 2 parameter", "call", ["f32[2]"], {"to_apply": comp})
    raises("operand 1 is s32", "call", ["f32[2]", "s32[2]"], {"to_apply": comp})
    raises("missing attribute 'to_apply'", "call", ["f32[2]"])


def test_reduce():
    add = scalar_computation("add", ["f32[]", "f32[]"])
    assert same(infer("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (1,), "to_apply": add}), "f32[2]")
    assert same(infer("reduce", ["f32[4,2,3]", "f32[]"], {"dimensions": (0, 2), "to_apply": add}), "f32[2]")
    assert same(infer("reduce", ["f32[4,2,3]", "f32[]"], {"dimensions": (0, 1, 2), "to_apply": add}), "f32[]")
    raises("out of range", "reduce", ["f32[2,3]", "f32[]"], {"dimensions": (2,), "to_apply": add})
    raises("repeated", "reduce", ["f32[2,3]", "f32[]"], {"dimensions": (1, 1), "to_apply": add})
    raises("init value 0 must be a scalar", "reduce", ["f32[2,3]", "f32[3]"], {"dimensions": (0,), "to_apply": add})
    raises("init value 0", "reduce", ["f32[2,3]", "s32[]"], {"dimensions": (0,), "to_apply": add})
    raises("even number", "reduce", ["f32[2,3]"], {"dimensions": (0,), "to_apply": add})


def test_reduce_wrong_reducer():
    add_s32 = scalar_computation("add_s32", ["s32[]", "s32[]"])
    msg = raises("signature \\(f32\\[\\], f32\\[\\]\\) -> f32\\[\\]", "reduce", ["f32[2,3]", "f32[]"],
                 {"dimensions": (1,), "to_apply": add_s32})
    assert "add_s32" in msg
    three = scalar_computation("three", ["f32[]", "f32[]", "f32[]"])
    raises("signature", "reduce", ["f32[2,3]", "f32[]"], {"dimensions": (1,), "to_apply": three})
    vec = scalar_computation("vec", ["f32[2]", "f32[2]"])
    raises("signature", "reduce", ["f32[2,3]", "f32[]"], {"dimensions": (1,), "to_apply": vec})
    cmp = scalar_computation("cmp", ["f32[]", "f32[]"], "compare", "pred[]")
    raises("returns pred", "reduce", ["f32[2,3]", "f32[]"], {"dimensions": (1,), "to_apply": cmp})


def test_variadic_reduce():
    sig = ["f32[]", "s32[]", "f32[]", "s32[]"]
    argmax = scalar_computation("argmax", sig, "tuple", "(f32[], s32[])")
    attrs = {"dimensions": (0,), "to_apply": argmax}
    r = infer("reduce", ["f32[5,2]", "s32[5,2]", "f32[]", "s32[]"], attrs)
    assert r.compatible(S("(f32[2], s32[2])"))
    raises("same dimensions", "reduce", ["f32[5,2]", "s32[5,3]", "f32[]", "s32[]"], attrs)
    raises("signature", "reduce", ["f32[5,2]", "f32[5,2]", "f32[]", "f32[]"], attrs)
    single = scalar_computation("add", ["f32[]", "f32[]"])
    raises("signature", "reduce", ["f32[5,2]", "s32[5,2]", "f32[]", "s32[]"],
           {"dimensions": (0,), "to_apply": single})


def test_dot():
    mm = {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)}
    assert same(infer("dot", ["f32[2,3]", "f32[3,4]"], mm), "f32[2,4]")
    assert same(infer("dot", ["f32[3]", "f32[3]"], {"lhs_contracting_dims": (0,), "rhs_contracting_dims": (0,)}), "f32[]")
    batch = {"lhs_batch_dims": (0,), "rhs_batch_dims": (0,), "lhs_contracting_dims": (2,), "rhs_contracting_dims": (1,)}
    assert same(infer("dot", ["f32[7,2,3]", "f32[7,3,4]"], batch), "f32[7,2,4]")
    # batch dims first, then lhs free, then rhs free
    odd = {"lhs_batch_dims": (2,), "rhs_batch_dims": (0,), "lhs_contracting_dims": (0,), "rhs_contracting_dims": (2,)}
    assert same(infer("dot", ["f32[3,5,7]", "f32[7,6,3]"], odd), "f32[7,5,6]")
    assert same(infer("dot", ["f32[2]", "f32[3]"]), "f32[2,3]")  # no contraction: outer product
    raises("contracting dimension sizes differ", "dot", ["f32[2,3]", "f32[4,4]"], mm)
    raises("batch dimension sizes differ", "dot", ["f32[7,2,3]", "f32[6,3,4]"], batch)
    # operands of two types: XLA's higher precision type (both are converted to it)
    assert same(infer("dot", ["f32[2,3]", "f64[3,4]"], mm), "f64[2,4]")
    assert same(infer("dot", ["s8[2,3]", "s16[3,4]"], mm), "s16[2,4]")
    assert same(infer("dot", ["bf16[2,3]", "f16[3,4]"], mm), "bf16[2,4]")   # more range wins
    assert same(infer("dot", ["f32[2,3]", "s32[3,4]"], mm), "f32[2,4]")
    assert same(infer("dot", ["s8[2,3]", "u8[3,4]"], mm), "s8[2,4]")
    assert same(infer("dot", ["c64[2,3]", "f64[3,4]"], mm), "c64[2,4]")
    assert same(infer("dot", ["s8[2,3]", "s16[3,4]"], mm, shape="s32[2,4]"), "s32[2,4]")
    raises("out of range", "dot", ["f32[2,3]", "f32[3,4]"], {"lhs_contracting_dims": (2,), "rhs_contracting_dims": (0,)})
    raises("differ in number", "dot", ["f32[2,3]", "f32[3,4]"], {"lhs_contracting_dims": (1,)})
    raises("repeated", "dot", ["f32[3,3]", "f32[3,3]"], {"lhs_batch_dims": (0,), "rhs_batch_dims": (0,),
                                                        "lhs_contracting_dims": (0,), "rhs_contracting_dims": (1,)})
    # a given result type is the preferred element type
    assert same(infer("dot", ["bf16[2,3]", "bf16[3,4]"], mm, shape="f32[2,4]"), "f32[2,4]")


# -- registry --------------------------------------------------------------------------

def test_has_rule_and_unsupported():
    assert has_rule("add") and has_rule("reduce") and has_rule("get-tuple-element")
    assert not has_rule("xlac-test-unimplemented")
    with pytest.raises(UnsupportedError, match="xlac-test-unimplemented"):
        infer_shape("xlac-test-unimplemented", [S("f32[1,1,1]")], {})


def test_every_unary_and_binary_opcode_has_a_rule():
    from xlac.hlo.opcodes import OPCODES
    for op, info in OPCODES.items():
        if info.category in ("unary", "binary", "compare", "ternary"):
            assert has_rule(op), op
