"""Every example of the spec's *Broadcasting semantics* page (broadcasting.en.txt / .en.md).

Legal examples check the HLO the builder emits (explicit broadcast/reshape, so
the HLO add sees identical shapes), the result shape and — when the numpy
evaluator is importable — the values against numpy.  Illegal ones raise
ShapeError at build time.
"""
import numpy as np
import pytest

import xlac
from xlac import ShapeError, ops
from xlac.hlo.verifier import verify


def build(lhs, rhs, broadcast_dimensions=None, op=ops.add):
    """A computation op(lhs, rhs) of two f32 parameters; returns (comp, root op)."""
    b = xlac.XlaBuilder("bcast")
    x = ops.parameter(b, 0, xlac.Shape(xlac.F32, np.shape(lhs)), "lhs")
    y = ops.parameter(b, 1, xlac.Shape(xlac.F32, np.shape(rhs)), "rhs")
    out = op(x, y, broadcast_dimensions=broadcast_dimensions)
    comp = b.build(out)
    verify(comp.module)
    return comp, out


def evaluate(comp, *args):
    try:
        from xlac.evaluator import evaluate as ev  # written concurrently; values when present
    except ImportError:
        pytest.skip("xlac.evaluator not available")
    return ev(comp, *[np.asarray(a, np.float32) for a in args])


def check(lhs, rhs, broadcast_dimensions, expected_shape, expected=None):
    comp, out = build(lhs, rhs, broadcast_dimensions)
    assert out.shape.dimensions == tuple(expected_shape)
    root = comp.module.entry.root
    assert root.opcode == "add"
    # HLO elementwise ops see identical shapes: the builder broadcast explicitly
    assert root.operands[0].shape.dimensions == root.operands[1].shape.dimensions == tuple(expected_shape)
    if expected is not None:
        got = evaluate(comp, lhs, rhs)
        np.testing.assert_array_equal(got, np.asarray(expected, np.float32))
    return comp


def opcodes(comp):
    return [i.opcode for i in comp.module.entry.instructions]


M23 = [[1, 2, 3], [4, 5, 6]]


# -- "What is broadcasting?" -------------------------------------------------------

def test_matrix_plus_vector_intro():
    # |1 2 3| + |7 8 9| = |8 10 12| / |11 13 15|   (vector matched to dimension 1)
    check(M23, [7, 8, 9], [1], (2, 3), [[8, 10, 12], [11, 13, 15]])


# -- "Broadcasting a lower-rank array onto a higher-rank array" ---------------------

def test_scalar_plus_matrix():
    # |1 2 3| + 7 = |8 9 10| / |11 12 13|; scalars need no broadcast_dimensions
    comp = check(M23, 7, None, (2, 3), [[8, 9, 10], [11, 12, 13]])
    bc = [i for i in comp.module.entry.instructions if i.opcode == "broadcast"]
    assert len(bc) == 1 and bc[0].attrs["dimensions"] == ()


def test_scalar_on_the_left():
    check(7, M23, None, (2, 3), [[8, 9, 10], [11, 12, 13]])


def test_matrix_plus_vector_without_broadcast_dimensions_is_invalid():
    # "Without specifying broadcasting, this operation is invalid."
    with pytest.raises(ShapeError, match="add.*broadcast_dimensions.*f32\\[2,3\\].*f32\\[3\\]"):
        build(M23, [7, 8, 9])


def test_vector_becomes_rows_with_dimension_1():
    # |7 8 9| ==> |7 8 9| / |7 8 9|
    comp = check(M23, [7, 8, 9], [1], (2, 3), [[8, 10, 12], [11, 13, 15]])
    bc = [i for i in comp.module.entry.instructions if i.opcode == "broadcast"]
    assert bc[0].attrs["dimensions"] == (1,)


def test_3x3_with_broadcast_dimension_1():
    # (1) each vector element becomes a column; the vector is duplicated for each row
    m = np.zeros((3, 3))
    check(m, [7, 8, 9], [1], (3, 3), [[7, 8, 9]] * 3)


def test_3x3_with_broadcast_dimension_0():
    # (2) each vector element becomes a row; duplicated for each column
    m = np.zeros((3, 3))
    check(m, [7, 8, 9], [0], (3, 3), [[7, 7, 7], [8, 8, 8], [9, 9, 9]])


def test_2x3_matrix_and_3_vector_on_dimension_0_is_invalid():
    # "When adding a 2x3 matrix to a 3-element vector, a broadcasting dimension of 0 is invalid."
    with pytest.raises(ShapeError, match="add: .*dimension 0 of the lower-rank operand \\(size 3\\) "
                                         "does not match dimension 0 of the higher-rank operand \\(size 2\\)"):
        build(M23, [7, 8, 9], [0])
    with pytest.raises(ShapeError):
        build([7, 8, 9], M23, [0])  # operand order does not matter


def test_cuboid_plus_matrix_on_dimensions_1_2():
    # a 2x3x4 cuboid and a 3x4 matrix with broadcasting tuple (1,2)
    cub = np.arange(24).reshape(2, 3, 4)
    mat = np.arange(12).reshape(3, 4) * 100
    check(cub, mat, [1, 2], (2, 3, 4), cub + mat[None, :, :])


# -- "Formal definition": T onto MxNxPxQ, TxV onto MxNxPxQ ----------------------------

MNPQ = (2, 3, 4, 5)


@pytest.mark.parametrize("dim", [0, 1, 2, 3])
def test_vector_onto_4d(dim):
    big = np.arange(np.prod(MNPQ)).reshape(MNPQ)
    vec = np.arange(MNPQ[dim]) * 1000
    shape = [1] * 4
    shape[dim] = MNPQ[dim]
    check(big, vec, [dim], MNPQ, big + vec.reshape(shape))


def test_vector_onto_4d_size_must_match():
    big = np.zeros(MNPQ)
    with pytest.raises(ShapeError, match="size 7"):
        build(big, np.zeros(7), [2])


@pytest.mark.parametrize("dims", [(2, 3), (1, 2), (0, 3), (0, 1), (0, 2), (1, 3)])
def test_matrix_onto_4d(dims):
    big = np.arange(np.prod(MNPQ)).reshape(MNPQ)
    t, v = MNPQ[dims[0]], MNPQ[dims[1]]
    mat = np.arange(t * v).reshape(t, v) * 1000
    shape = [1] * 4
    shape[dims[0]], shape[dims[1]] = t, v
    check(big, mat, list(dims), MNPQ, big + mat.reshape(shape))


def test_broadcast_dimensions_must_be_increasing():
    # "it is illegal to match V to N and T to P"
    big = np.zeros((2, 3, 3, 5))
    with pytest.raises(ShapeError, match="strictly increasing"):
        build(big, np.zeros((3, 3)), [2, 1])
    # "it is also illegal to match V to both P and N" (a repeated dimension)
    with pytest.raises(ShapeError, match="strictly increasing"):
        build(big, np.zeros((3, 3)), [1, 1])


def test_broadcast_dimensions_length_and_range():
    with pytest.raises(ShapeError, match="one entry per dimension"):
        build(M23, [7, 8, 9], [0, 1])
    with pytest.raises(ShapeError, match="out of range"):
        build(M23, [7, 8, 9], [2])
    with pytest.raises(ShapeError, match="identity"):
        build(M23, M23, [1, 0])


# -- "Broadcasting similar-rank arrays with degenerate dimensions" ----------------------

def rand(shape, seed):
    return np.random.default_rng(seed).integers(-5, 5, shape).astype(np.float32)


@pytest.mark.parametrize("a,b,out", [
    ((2, 1), (2, 3), (2, 3)),          # example 1
    ((1, 2, 5), (7, 2, 5), (7, 2, 5)),  # example 2
    ((7, 2, 5), (7, 1, 5), (7, 2, 5)),  # example 3
    ((2, 1), (1, 3), (2, 3)),          # the "outer operation"
    ((1, 1), (4, 3), (4, 3)),
])
def test_degenerate_dimensions(a, b, out):
    x, y = rand(a, 1), rand(b, 2)
    comp = check(x, y, None, out, x + y)
    # size-1 dimensions are reshaped away, then broadcast
    assert "reshape" in opcodes(comp) and "broadcast" in opcodes(comp)


def test_outer_operation_hlo():
    comp, out = build(np.zeros((2, 1)), np.zeros((1, 3)))
    text = [(i.opcode, str(i.shape), i.attrs.get("dimensions")) for i in comp.module.entry.instructions]
    assert ("reshape", "f32[2]{0}", None) in text and ("reshape", "f32[3]{0}", None) in text
    assert ("broadcast", "f32[2,3]{1,0}", (0,)) in text and ("broadcast", "f32[2,3]{1,0}", (1,)) in text


def test_degenerate_incompatible():
    # example 4: (7,2,5) and (7,2,6) are incompatible and cannot be broadcast
    with pytest.raises(ShapeError) as e:
        build(np.zeros((7, 2, 5)), np.zeros((7, 2, 6)))
    msg = str(e.value)
    assert msg.startswith("add:")
    assert "f32[7,2,5]" in msg and "f32[7,2,6]" in msg
    assert "dimension 2 has sizes 5 and 6" in msg


# -- "Broadcast composition" --------------------------------------------------------------

def test_vector_and_1x2_matrix_with_broadcast_dimension_0():
    # |1 2 3 4| + [5 6] with (0) -> |6 7| |7 8| |8 9| |9 10|
    check([1, 2, 3, 4], [[5, 6]], [0], (4, 2), [[6, 7], [7, 8], [8, 9], [9, 10]])


def test_1x2_matrix_onto_4x3x1_with_broadcast_dimensions_1_2():
    # intermediate 4x1x2, then degenerate broadcasting to 4x3x2
    big = rand((4, 3, 1), 3)
    small = np.array([[10, 20]], np.float32)
    check(big, small, [1, 2], (4, 3, 2), big + small.reshape(1, 1, 2))
    check(small, big, [1, 2], (4, 3, 2), big + small.reshape(1, 1, 2))


def test_indim_incompatible_after_composition():
    with pytest.raises(ShapeError):
        build(np.zeros((4, 3, 1)), np.zeros((2, 2)), [1, 2])


# -- the rules hold for every binary op and for comparisons ---------------------------------

@pytest.mark.parametrize("op", [ops.sub, ops.mul, ops.max, ops.min, ops.pow, ops.atan2, ops.div])
def test_other_binary_ops_broadcast(op):
    comp, out = build(np.zeros((2, 3)), np.zeros(3), [1], op=op)
    assert out.shape.dimensions == (2, 3)


def test_compare_broadcasts():
    b = xlac.XlaBuilder("cmp")
    x = ops.parameter(b, 0, xlac.shape("f32[2,3]"), "x")
    v = ops.parameter(b, 1, xlac.shape("f32[2]"), "v")
    out = ops.lt(x, v, broadcast_dimensions=[0])
    assert str(out.shape) == "pred[2,3]{1,0}"
    with pytest.raises(ShapeError, match="compare"):
        ops.lt(x, v, broadcast_dimensions=[1])
