"""``xlac.ops``: one function per operation of the spec (*Operation Semantics*).

Names are the snake_case of the spec's op names (``and_``, ``or_``, ``not_``
because the bare words are Python keywords); keyword arguments follow the spec
(``broadcast_dimensions``, ``dimension_numbers``, ...).  Each function appends
HLO instructions to the builder of its operands and returns an
:class:`~xlac.frontend.builder.XlaOp`.

Errors: an ill-shaped op raises :class:`xlac.ShapeError` (a ``ValueError``)
naming the op, the operand shapes and the rule; a wrong kind of argument raises
``TypeError``; XlaOps of different builders raise ``ValueError``.

Broadcasting (spec: *Broadcasting semantics*) happens here, never in HLO: the
binary ops insert explicit HLO ``broadcast`` (and ``reshape``, to drop
degenerate size-1 dimensions) so the HLO ``add``/``compare``/... always sees
operands of identical shapes.
"""
from __future__ import annotations

import builtins as _bi
import operator as _operator
from dataclasses import dataclass

import numpy as np

from ..errors import ShapeError
from ..hlo import rng as hlo_rng
from ..hlo import feeds
from ..hlo import custom_call as hcc
from ..hlo.collectives import (SEND_RECV_PAIRS_ATTRIBUTE, DeviceGroupError, ReplicaGroups, all_to_all_regroup,
                               format_pairs)
from ..hlo.ir import Raw
from ..hlo.window import (ConvDimensionNumbers, Window, WindowError, format_dim_labels, format_window,
                          parse_dim_labels)
from ..hlo.shape_inference import infer_shape
from ..shape import PRED, PrimitiveType, Shape, parse_shape
from .builder import XlaBuilder, XlaComputation, XlaOp, not_an_xla_op_hint

# This module defines abs, max, min, pow, round, slice and tuple; the builtins
# stay reachable through _bi.


#: opcode -> the names of the functions of this module that build it (filled by
#: :func:`builds`); ``python -m xlac.support`` lists them in docs/ops.md.
BUILDERS: dict[str, list[str]] = {}


def builds(*opcodes: str):
    """Decorator: the function builds instructions of ``opcodes``."""
    def mark(fn):
        for opcode in opcodes:
            BUILDERS.setdefault(opcode, []).append(fn.__name__)
        return fn
    return mark


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _fail(op: str, rule: str, *shapes) -> ShapeError:
    listed = ", ".join(str(s) for s in shapes)
    return ShapeError(f"{op}: {rule}" + (f" (operand shapes: {listed})" if shapes else ""))


def _int_list(op: str, name: str, values) -> list:
    if values is None:
        return []
    if isinstance(values, (int, np.integer)):
        values = [values]
    try:
        out = [_operator.index(v) for v in values]
    except TypeError:
        raise TypeError(f"{op}: {name} must be a sequence of integers, got {values!r}") from None
    return out


def _index(op: str, name: str, value) -> int:
    """``value`` as a Python int, or a TypeError naming the op and the argument."""
    try:
        return _operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an integer, got {value!r}") from None


def _builder(op: str, *args) -> XlaBuilder:
    """The builder shared by the XlaOps among ``args`` (ValueError if they differ)."""
    b = None
    for a in args:
        if isinstance(a, XlaOp):
            if b is None:
                b = a.builder
            elif a.builder is not b:
                raise ValueError(f"{op}: operands come from different builders "
                                 f"({b.label(a.builder)} and {a.builder.label(b)}); they cannot be mixed")
    if b is None:
        raise TypeError(f"{op}: needs at least one XlaOp operand, got "
                        + ", ".join(type(a).__name__ for a in args)
                        + next((h for h in _bi.map(not_an_xla_op_hint, args) if h), ""))
    return b


def _element_type(op: str, t) -> PrimitiveType:
    if isinstance(t, PrimitiveType):
        return t
    try:
        if isinstance(t, str):
            return PrimitiveType.from_name(t.lower())
        return PrimitiveType.from_dtype(t)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: {t!r} is not an element type") from None


def _as_shape(op: str, shape) -> Shape:
    if isinstance(shape, Shape):
        return shape
    if isinstance(shape, str):
        return parse_shape(shape)
    raise TypeError(f"{op}: shape must be an xlac.Shape or shape text like 'f32[2,3]', got {shape!r}")


def _literal(value) -> np.ndarray:
    """A numpy array for a constant: Python float -> f32, int -> s32, bool -> pred."""
    if isinstance(value, XlaOp):
        raise TypeError("constant: value is already an XlaOp")
    if isinstance(value, (np.ndarray, np.generic)):
        a = np.array(value)
    elif isinstance(value, (bool, int, float, _bi.complex, list, _bi.tuple)):
        a = np.array(value)
        # Python numbers default to XLA's usual 32-bit types, not numpy's 64-bit ones.
        narrow = {"f": np.float32, "c": np.complex64, "i": np.int32}.get(a.dtype.kind)
        if narrow is not None:
            if a.dtype.kind == "i" and a.size and (a.min() < -2**31 or a.max() >= 2**31):
                raise ValueError(f"constant: integer {value!r} does not fit s32; pass a numpy "
                                 "array or scalar of the wanted type (e.g. np.int64)")
            a = a.astype(narrow)
    else:
        raise TypeError(f"constant: cannot make a constant of {type(value).__name__}")
    try:
        PrimitiveType.from_dtype(a.dtype)
    except TypeError as e:
        raise TypeError(f"constant: {e}") from None
    a.setflags(write=False)
    return a


def _constant_like(op: str, value, like: XlaOp) -> XlaOp:
    """A constant of ``like``'s element type holding ``value`` (a Python/numpy scalar or array)."""
    if not like.shape.is_array:
        raise TypeError(f"{op}: cannot combine a {type(value).__name__} with a {like.shape} value")
    dt = like.shape.dtype
    src = np.asarray(value)
    if src.dtype == object:
        raise TypeError(f"{op}: cannot use a {type(value).__name__} as an operand")
    try:
        with np.errstate(all="ignore"):
            a = src.astype(dt)
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(f"{op}: cannot convert {value!r} to {like.shape.element_type.value}: {e}") from None
    # Refuse silent changes of value (2.5 -> 2 for an s32 operand, 300 -> 44 for u8).
    if src.dtype.kind in "biufc" and dt.kind in "biu" and src.size:
        back = a.astype(src.dtype)
        if not np.array_equal(back, src):
            raise TypeError(f"{op}: {value!r} is not representable as {like.shape.element_type.value}")
    if src.dtype.kind == "c" and dt.kind != "c" and np.any(np.imag(src) != 0):
        raise TypeError(f"{op}: complex {value!r} cannot combine with {like.shape.element_type.value}")
    a.setflags(write=False)
    return like.builder.add_instruction("constant", [], {"literal": a},
                                        shape=Shape(like.shape.element_type, a.shape))


def _precheck(op: str, opcode: str, shapes, attrs, original) -> None:
    """Run ``opcode``'s shape rule on the shapes the operands will have after
    broadcasting, before any instruction is added; errors name the op and the
    shapes the user passed."""
    try:
        infer_shape(opcode, shapes, attrs)
    except ShapeError as e:
        rule = str(e).split(": ", 1)[-1].rsplit(" (operand shapes: ", 1)[0]
        what = op if op == opcode else f"{op} (HLO {opcode})"
        raise ShapeError(f"{what}: {rule} (operand shapes: "
                         f"{', '.join(str(s) for s in original)})") from None


def _coerce(op: str, *args) -> list:
    """XlaOps of one builder; non-XlaOp values become constants of the first XlaOp's type."""
    _builder(op, *args)
    like = next(a for a in args if isinstance(a, XlaOp))
    return [a if isinstance(a, XlaOp) else _constant_like(op, a, like) for a in args]


# ---------------------------------------------------------------------------
# leaves: parameter, constant, iota
# ---------------------------------------------------------------------------

@builds("parameter")
def parameter(builder: XlaBuilder, number: int, shape, name: str = "") -> XlaOp:
    """Parameter ``number`` of the computation, of ``shape`` (Shape or text ``"f32[2,3]"``).

    ``name`` names the HLO instruction (made unique).  ValueError when ``number``
    is negative or already used.
    """
    if not isinstance(builder, XlaBuilder):
        raise TypeError(f"parameter: builder must be an XlaBuilder, got {type(builder).__name__}")
    number = _index("parameter", "number", number)
    if number < 0:
        raise ValueError(f"parameter: number must be >= 0, got {number}")
    shape = _as_shape("parameter", shape)
    return builder.register_parameter(number, lambda: builder.add_instruction(
        "parameter", [], {"parameter_number": number}, shape=shape,
        name=name or f"parameter.{number}"))


@builds("constant")
def constant(builder: XlaBuilder, value) -> XlaOp:
    """A constant array (spec: *ConstantLiteral*).

    ``value``: numpy array or numpy scalar (its dtype kept), Python ``float`` ->
    f32, ``int`` -> s32, ``bool`` -> pred, ``complex`` -> c64; nested lists as
    Python numbers.  TypeError for other values.
    """
    if not isinstance(builder, XlaBuilder):
        raise TypeError(f"constant: builder must be an XlaBuilder, got {type(builder).__name__}")
    a = _literal(value)
    return builder.add_instruction("constant", [], {"literal": a},
                                   shape=Shape(PrimitiveType.from_dtype(a.dtype), a.shape))


constant_literal = constant


@builds("iota")
def iota(builder: XlaBuilder, shape, iota_dimension: int) -> XlaOp:
    """Values 0, 1, 2, ... along ``iota_dimension`` of ``shape`` (spec: *Iota*).

    ``iota(b, xlac.S32, 5)`` (an element type and a size) is the 1-D form.
    ShapeError when ``iota_dimension`` is out of range.
    """
    if isinstance(shape, PrimitiveType):
        shape, iota_dimension = Shape(shape, (iota_dimension,)), 0
    shape = _as_shape("iota", shape)
    return builder.add_instruction("iota", [], {"iota_dimension": _index("iota", "iota_dimension", iota_dimension)},
                                   shape=shape)


# ---------------------------------------------------------------------------
# elementwise unary (spec: *Element-wise unary functions*)
# ---------------------------------------------------------------------------

def _unary(opcode: str, operand: XlaOp) -> XlaOp:
    if not isinstance(operand, XlaOp):
        raise TypeError(f"{opcode}: operand must be an XlaOp, got {type(operand).__name__}"
                        + not_an_xla_op_hint(operand))
    return operand.builder.add_instruction(opcode, [operand])


def _make_unary(pyname: str, opcode: str, doc: str):
    def fn(operand: XlaOp) -> XlaOp:
        return _unary(opcode, operand)
    fn.__name__ = fn.__qualname__ = pyname
    fn.__doc__ = (f"Element-wise {doc} (HLO ``{opcode}``; spec: *Element-wise unary functions*).\n\n"
                  "Result has the operand's shape (see the shape rule for the element types "
                  "allowed); ShapeError otherwise.")
    return fn


_UNARY = {
    "abs": ("abs", "absolute value (complex -> its real component type)"),
    "cbrt": ("cbrt", "cube root"),
    "ceil": ("ceil", "ceiling"),
    "clz": ("count-leading-zeros", "count of leading zero bits"),
    "cos": ("cosine", "cosine"),
    "erf": ("erf", "error function"),
    "exp": ("exponential", "e**x"),
    "expm1": ("exponential-minus-one", "e**x - 1"),
    "floor": ("floor", "floor"),
    "imag": ("imag", "imaginary part"),
    "is_finite": ("is-finite", "test for finiteness (result pred)"),
    "log": ("log", "natural logarithm"),
    "log1p": ("log-plus-one", "log(1 + x)"),
    "logistic": ("logistic", "logistic function 1 / (1 + e**-x)"),
    "neg": ("negate", "negation"),
    "not_": ("not", "logical (pred) or bitwise (integer) not"),
    "population_count": ("popcnt", "count of set bits"),
    "real": ("real", "real part"),
    "round": ("round-nearest-afz", "rounding, ties away from zero"),
    "round_nearest_afz": ("round-nearest-afz", "rounding, ties away from zero"),
    "round_nearest_even": ("round-nearest-even", "rounding, ties to even"),
    "rsqrt": ("rsqrt", "1 / sqrt(x)"),
    "sign": ("sign", "sign (-1, 0, 1; floats keep -0, +0, NaN)"),
    "sin": ("sine", "sine"),
    "sqrt": ("sqrt", "square root"),
    "tan": ("tan", "tangent"),
    "tanh": ("tanh", "hyperbolic tangent"),
}
for _name, (_opcode, _doc) in _UNARY.items():
    globals()[_name] = builds(_opcode)(_make_unary(_name, _opcode, _doc))
del _name, _opcode, _doc

# Spelled-out aliases of the spec's short names.
cosine, sine, exponential, negate = cos, sin, exp, neg  # noqa: F821 (defined above)


# ---------------------------------------------------------------------------
# broadcasting (spec: *Broadcasting semantics*)
# ---------------------------------------------------------------------------

def _degenerate(op: str, ldims, rdims, lshape, rshape) -> list:
    """Same-rank broadcasting: each pair of sizes equal, or one of them 1."""
    out = []
    for d, (a, b) in enumerate(zip(ldims, rdims)):
        if a != b and a != 1 and b != 1:
            raise _fail(op, f"shapes are not compatible: dimension {d} has sizes {a} and {b} "
                            "(broadcasting needs equal sizes or 1)", lshape, rshape)
        out.append(b if a == 1 else a)
    return out


def broadcast_shapes(op: str, lhs: Shape, rhs: Shape, broadcast_dimensions=None):
    """The result dimensions of a binary op and, per operand, where its dimensions go.

    Returns ``(out_dims, lhs_map, rhs_map)``.  Implements the spec's rules:
    scalars go anywhere; operands of different ranks need ``broadcast_dimensions``
    (one per lower-rank dimension, strictly increasing, each size equal to the
    higher-rank size it maps to or 1); then same-rank degenerate-dimension
    broadcasting stretches size-1 dimensions.  ShapeError otherwise.
    """
    for s, side in ((lhs, "lhs"), (rhs, "rhs")):
        if not s.is_array:
            raise _fail(op, f"{side} must be an array, got {s}", lhs, rhs)
    if lhs.rank == rhs.rank:
        if broadcast_dimensions is not None:
            bd = _int_list(op, "broadcast_dimensions", broadcast_dimensions)
            if bd and bd != list(range(lhs.rank)):
                raise _fail(op, f"broadcast_dimensions {bd} must be empty or the identity for "
                                "operands of equal rank", lhs, rhs)
        ident = list(range(lhs.rank))
        return _degenerate(op, lhs.dimensions, rhs.dimensions, lhs, rhs), ident, ident

    small, large = (lhs, rhs) if lhs.rank < rhs.rank else (rhs, lhs)
    bd = _int_list(op, "broadcast_dimensions", broadcast_dimensions)
    if broadcast_dimensions is None and not small.is_scalar:
        raise _fail(op, f"operands of different ranks ({small.rank} and {large.rank}) need "
                        "broadcast_dimensions saying which higher-rank dimensions the lower-rank "
                        "operand's dimensions match", lhs, rhs)
    if len(bd) != small.rank:
        raise _fail(op, f"broadcast_dimensions {bd} must have one entry per dimension of the "
                        f"lower-rank operand (rank {small.rank})", lhs, rhs)
    indim = list(large.dimensions)  # the lower-rank operand after InDim broadcasting
    for i, d in enumerate(bd):
        if not 0 <= d < large.rank:
            raise _fail(op, f"broadcast_dimensions {bd}: {d} is out of range for the "
                            f"higher-rank operand (rank {large.rank})", lhs, rhs)
        if i and bd[i - 1] >= d:
            raise _fail(op, f"broadcast_dimensions {bd} must be strictly increasing", lhs, rhs)
        a, b = small.dimensions[i], large.dimensions[d]
        if a != b and a != 1 and b != 1:
            raise _fail(op, f"broadcast_dimensions {bd}: dimension {i} of the lower-rank operand "
                            f"(size {a}) does not match dimension {d} of the higher-rank operand "
                            f"(size {b}); sizes must be equal or 1", lhs, rhs)
        indim[d] = a
    out = _degenerate(op, indim, large.dimensions, lhs, rhs)
    ident = list(range(large.rank))
    return (out, bd, ident) if small is lhs else (out, ident, bd)


def _expand(op: XlaOp, out_dims, mapping) -> XlaOp:
    """``op`` broadcast to ``out_dims``, its dimension i going to ``mapping[i]``.

    Size-1 dimensions that stretch are first removed by a reshape, since an HLO
    broadcast maps each operand dimension to a result dimension of equal size.
    """
    dims = op.shape.dimensions
    out_dims = _bi.tuple(out_dims)
    if dims == out_dims and list(mapping) == list(range(len(dims))):
        return op
    keep = [i for i in range(len(dims)) if dims[i] == out_dims[mapping[i]]]
    if len(keep) != len(dims):
        op = op.builder.add_instruction("reshape", [op],
                                        shape=Shape(op.shape.element_type, [dims[i] for i in keep]))
    return op.builder.add_instruction("broadcast", [op], {"dimensions": _bi.tuple(mapping[i] for i in keep)},
                                      shape=Shape(op.shape.element_type, out_dims))


def _elementwise(op: str, opcode: str, lhs, rhs, broadcast_dimensions, attrs=None) -> XlaOp:
    lhs, rhs = _coerce(op, lhs, rhs)
    ls, rs = lhs.shape, rhs.shape
    out, lmap, rmap = broadcast_shapes(op, ls, rs, broadcast_dimensions)
    # Check the op itself (element types, ...) before adding any broadcast.
    _precheck(op, opcode, [Shape(ls.element_type, out), Shape(rs.element_type, out)], attrs, [ls, rs])
    lhs, rhs = _expand(lhs, out, lmap), _expand(rhs, out, rmap)
    return lhs.builder.add_instruction(opcode, [lhs, rhs], attrs)


def _make_binary(pyname: str, opcode: str, doc: str):
    def fn(lhs, rhs, broadcast_dimensions=None) -> XlaOp:
        return _elementwise(pyname, opcode, lhs, rhs, broadcast_dimensions)
    fn.__name__ = fn.__qualname__ = pyname
    fn.__doc__ = (
        f"Element-wise {doc} (HLO ``{opcode}``; spec: *Element-wise binary arithmetic "
        "operations* and *Broadcasting semantics*).\n\n"
        "``lhs``/``rhs``: XlaOps of one builder of the same element type (a Python or "
        "numpy value on one side becomes a constant of the other's type).  Shapes broadcast "
        "as the spec says: a scalar with anything; different ranks with "
        "``broadcast_dimensions``; size-1 dimensions stretch.  Raises ShapeError for "
        "incompatible shapes or element types.")
    return fn


_BINARY = {
    "add": ("add", "addition"),
    "sub": ("subtract", "subtraction"),
    "mul": ("multiply", "multiplication"),
    "div": ("divide", "division (integers truncate toward zero)"),
    "rem": ("remainder", "remainder (sign of the dividend)"),
    "pow": ("power", "power"),
    "max": ("maximum", "maximum"),
    "min": ("minimum", "minimum"),
    "and_": ("and", "logical/bitwise and"),
    "or_": ("or", "logical/bitwise or"),
    "xor": ("xor", "logical/bitwise xor"),
    "shift_left": ("shift-left", "left shift"),
    "mulhi": ("mulhi", "high half of the integer product at twice the width (XLA's MulHi)"),
    "shift_right_arithmetic": ("shift-right-arithmetic", "arithmetic right shift"),
    "shift_right_logical": ("shift-right-logical", "logical right shift"),
    "atan2": ("atan2", "two-argument arctangent atan2(lhs, rhs)"),
    "complex": ("complex", "complex number from real and imaginary parts (f32 -> c64, f64 -> c128)"),
}
for _name, (_opcode, _doc) in _BINARY.items():
    globals()[_name] = builds(_opcode)(_make_binary(_name, _opcode, _doc))
del _name, _opcode, _doc

subtract, multiply, divide, remainder, maximum, minimum = sub, mul, div, rem, max, min  # noqa: F821
power = pow  # noqa: F821


# ---------------------------------------------------------------------------
# comparisons (spec: *Element-wise comparison operations*)
# ---------------------------------------------------------------------------

@builds("compare")
def compare(lhs, rhs, direction: str, broadcast_dimensions=None, compare_type: str | None = None) -> XlaOp:
    """Element-wise comparison ``lhs <direction> rhs`` -> pred (HLO ``compare``).

    ``direction``: EQ, NE, GE, GT, LE, LT.  ``compare_type``: FLOAT, TOTALORDER,
    SIGNED or UNSIGNED (default: from the element type).  Broadcasting as for
    the binary ops.  ShapeError for bad shapes, types or direction.
    """
    direction = str(direction).upper()
    attrs = {"direction": direction}
    if compare_type is not None:
        attrs["type"] = str(compare_type).upper()
    return _elementwise("compare", "compare", lhs, rhs, broadcast_dimensions, attrs)


def _make_compare(pyname: str, direction: str, total_order: bool):
    def fn(lhs, rhs, broadcast_dimensions=None) -> XlaOp:
        ctype = None
        if total_order:
            _builder(pyname, lhs, rhs)
            typed = lhs if isinstance(lhs, XlaOp) else rhs
            et = typed.shape.element_type if typed.shape.is_array else None
            # Total order only changes floating-point comparisons; integers already have one.
            if et is not None and (et.is_float or et.is_complex):
                ctype = "TOTALORDER"
        return compare(lhs, rhs, direction, broadcast_dimensions, ctype)
    fn.__name__ = fn.__qualname__ = pyname
    order = (" with the total order -NaN < -Inf < -finite < -0 < +0 < +finite < +Inf < +NaN"
             if total_order else " (IEEE for floats)")
    fn.__doc__ = (f"Element-wise ``lhs {direction} rhs`` -> pred{order} (HLO ``compare``, "
                  f"direction={direction}; spec: *Element-wise comparison operations*).\n\n"
                  "Broadcasting as for the binary ops; ShapeError for bad shapes or types.")
    return fn


for _d in ("EQ", "NE", "GE", "GT", "LE", "LT"):
    globals()[_d.lower()] = builds("compare")(_make_compare(_d.lower(), _d, False))
    globals()[_d.lower() + "_total_order"] = builds("compare")(
        _make_compare(_d.lower() + "_total_order", _d, True))
del _d


# ---------------------------------------------------------------------------
# select, clamp
# ---------------------------------------------------------------------------

def _broadcast_scalars(op: str, args: list) -> list:
    """Broadcast scalar arrays among ``args`` to the dimensions of the non-scalar ones."""
    shapes = [a.shape for a in args]
    if any(not s.is_array for s in shapes):
        return args
    dims = [s.dimensions for s in shapes if not s.is_scalar]
    if not dims or any(d != dims[0] for d in dims):
        return args  # nothing to do, or a mismatch the shape rule reports
    return [_expand(a, dims[0], []) if a.shape.is_scalar else a for a in args]


@builds("select")
def select(pred, on_true, on_false) -> XlaOp:
    """``on_true`` where ``pred`` else ``on_false`` (spec: *Select*).

    ``pred``: pred array of the operands' dimensions, or a pred scalar (broadcast).
    ``on_true``/``on_false``: same shape (scalars broadcast; tuples need a scalar
    pred).  ShapeError otherwise.
    """
    if not isinstance(pred, XlaOp):
        raise TypeError(f"select: pred must be an XlaOp, got {type(pred).__name__}"
                        + not_an_xla_op_hint(pred))
    b = _builder("select", pred, on_true, on_false)
    if isinstance(on_true, XlaOp) or isinstance(on_false, XlaOp):
        on_true, on_false = _coerce("select", on_true, on_false)
    else:
        raise TypeError("select: on_true or on_false must be an XlaOp")
    args = [pred, on_true, on_false]
    _precheck("select", "select", [_scalar_to(a.shape, args) for a in args], None,
              [a.shape for a in args])
    return b.add_instruction("select", _broadcast_scalars("select", args))


def _scalar_to(s: Shape, args) -> Shape:
    """``s`` as it will be after :func:`_broadcast_scalars` (for checking first)."""
    dims = [a.shape.dimensions for a in args if a.shape.is_array and not a.shape.is_scalar]
    if s.is_array and s.is_scalar and dims:
        return Shape(s.element_type, dims[0])
    return s


@builds("clamp")
def clamp(min, operand, max) -> XlaOp:  # noqa: A002 - the spec's argument names
    """``min(max(operand, min), max)`` element-wise (spec: *Clamp*).

    ``min``/``max``: the operand's shape or scalars (broadcast), same element type
    (Python numbers become constants of it).  ShapeError otherwise.
    """
    lo, x, hi = _coerce("clamp", min, operand, max)
    args = [lo, x, hi]
    _precheck("clamp", "clamp", [_scalar_to(a.shape, args) for a in args], None,
              [a.shape for a in args])
    return x.builder.add_instruction("clamp", _broadcast_scalars("clamp", args))


# ---------------------------------------------------------------------------
# conversions
# ---------------------------------------------------------------------------

@builds("convert")
def convert_element_type(operand: XlaOp, new_element_type) -> XlaOp:
    """Element-wise conversion to ``new_element_type`` (spec: *ConvertElementType*).

    ``new_element_type``: PrimitiveType, name (``"f32"``) or numpy dtype.  Same
    dimensions.  ShapeError for tuples.
    """
    t = _element_type("convert_element_type", new_element_type)
    _unary_check("convert_element_type", operand)
    s = infer_shape("convert", [operand.shape], {"new_element_type": t})
    return operand.builder.add_instruction("convert", [operand], shape=s)


@builds("stochastic-convert")
def stochastic_convert_type(operand: XlaOp, random: XlaOp, new_element_type) -> XlaOp:
    """Float ``operand`` to the signed integer type ``new_element_type``,
    rounding each element up or down at random (XLA's StochasticConvertType):
    up when ``random`` (unsigned, the operand's dimensions and bit width) is
    below the fraction scaled to its range, so an element rounds up with
    probability equal to its fraction; values at or past the integer range
    saturate, NaN gives 0.  ShapeError for a non-float operand, a random
    operand of another width or dimensions, or a target that is not a signed
    integer."""
    op = "stochastic_convert_type"
    t = _element_type(op, new_element_type)
    _builder(op, operand, random)
    s = infer_shape("stochastic-convert", [operand.shape, random.shape], {"new_element_type": t})
    return operand.builder.add_instruction("stochastic-convert", [operand, random], shape=s)


@builds("bitcast-convert")
def bitcast_convert_type(operand: XlaOp, new_element_type) -> XlaOp:
    """Reinterpret the bits as ``new_element_type`` (spec: *BitcastConvertType*).

    Equal widths keep the dimensions; a narrower type adds a minor-most dimension
    of the width ratio; a wider one consumes a last dimension equal to the ratio.
    ShapeError otherwise (and between complex and real).
    """
    t = _element_type("bitcast_convert_type", new_element_type)
    _unary_check("bitcast_convert_type", operand)
    s = infer_shape("bitcast-convert", [operand.shape], {"new_element_type": t})
    return operand.builder.add_instruction("bitcast-convert", [operand], shape=s)


@builds("reduce-precision")
def reduce_precision(operand: XlaOp, exponent_bits: int, mantissa_bits: int) -> XlaOp:
    """Round floats to ``exponent_bits``/``mantissa_bits`` and back (spec: *ReducePrecision*).

    ShapeError for non-float operands, ``exponent_bits < 1`` or ``mantissa_bits < 0``.
    """
    _unary_check("reduce_precision", operand)
    return operand.builder.add_instruction(
        "reduce-precision", [operand],
        {"exponent_bits": _index("reduce_precision", "exponent_bits", exponent_bits),
         "mantissa_bits": _index("reduce_precision", "mantissa_bits", mantissa_bits)})


def _unary_check(op: str, operand) -> None:
    if not isinstance(operand, XlaOp):
        raise TypeError(f"{op}: operand must be an XlaOp, got {type(operand).__name__}"
                        + not_an_xla_op_hint(operand))


# ---------------------------------------------------------------------------
# shape manipulation
# ---------------------------------------------------------------------------

@builds("broadcast")
def broadcast(operand: XlaOp, broadcast_sizes) -> XlaOp:
    """Add major dimensions ``broadcast_sizes`` in front (spec: *Broadcast*).

    ``f32[b0..bM]`` -> ``f32[a0..aN, b0..bM]``; ``output[i.., j..] = operand[j..]``.
    ShapeError for negative sizes.
    """
    _unary_check("broadcast", operand)
    sizes = _int_list("broadcast", "broadcast_sizes", broadcast_sizes)
    if any(n < 0 for n in sizes):
        raise _fail("broadcast", f"broadcast_sizes {sizes} must not be negative", operand.shape)
    if not operand.shape.is_array:
        raise _fail("broadcast", "operand must be an array", operand.shape)
    out = sizes + list(operand.shape.dimensions)
    return operand.builder.add_instruction(
        "broadcast", [operand], {"dimensions": _bi.tuple(range(len(sizes), len(out)))},
        shape=Shape(operand.shape.element_type, out))


@builds("broadcast")
def broadcast_in_dim(operand: XlaOp, out_dim_size, broadcast_dimensions) -> XlaOp:
    """Broadcast to ``out_dim_size``, operand dimension i going to ``broadcast_dimensions[i]``.

    Spec: *BroadcastInDim*.  Each operand size equals the size it maps to or is 1
    (then stretched); ``broadcast_dimensions`` strictly increasing.  ShapeError
    otherwise.
    """
    op = "broadcast_in_dim"
    _unary_check(op, operand)
    s = operand.shape
    out = _int_list(op, "out_dim_size", out_dim_size)
    bd = _int_list(op, "broadcast_dimensions", broadcast_dimensions)
    if not s.is_array:
        raise _fail(op, "operand must be an array", s)
    if any(n < 0 for n in out):
        raise _fail(op, f"out_dim_size {out} must not be negative", s)
    if len(bd) != s.rank:
        raise _fail(op, f"broadcast_dimensions {bd} must have one entry per operand dimension ({s.rank})", s)
    for i, d in enumerate(bd):
        if not 0 <= d < len(out):
            raise _fail(op, f"broadcast_dimensions {bd}: {d} is out of range for rank {len(out)}", s)
        if i and bd[i - 1] >= d:
            raise _fail(op, f"broadcast_dimensions {bd} must be strictly increasing", s)
        if s.dimensions[i] not in (1, out[d]):
            raise _fail(op, f"operand dimension {i} (size {s.dimensions[i]}) cannot broadcast to "
                            f"dimension {d} of size {out[d]} (sizes must be equal or 1)", s)
    if list(s.dimensions) == out and bd == list(range(len(out))):
        # Still an instruction of its own, so the result is a distinct op.
        return operand.builder.add_instruction("broadcast", [operand], {"dimensions": _bi.tuple(bd)},
                                               shape=Shape(s.element_type, out))
    return _expand(operand, out, bd)


@builds("reshape")
def reshape(operand: XlaOp, dimensions=None, new_sizes=None) -> XlaOp:
    """Reshape to ``new_sizes`` (spec: *Reshape*), row-major order.

    ``reshape(x, new_sizes)`` or ``reshape(x, dimensions, new_sizes)``: the latter
    first transposes by the permutation ``dimensions`` (spec: *Collapse*).
    ShapeError when the element counts differ or ``dimensions`` is no permutation.
    """
    _unary_check("reshape", operand)
    if new_sizes is None:
        dimensions, new_sizes = None, dimensions
    sizes = _int_list("reshape", "new_sizes", new_sizes)
    if any(n < 0 for n in sizes):
        raise _fail("reshape", f"new_sizes {sizes} must not be negative", operand.shape)
    if dimensions is not None:
        perm = _int_list("reshape", "dimensions", dimensions)
        if sorted(perm) != list(range(operand.shape.rank if operand.shape.is_array else 0)):
            # Name the argument order: jax.lax.reshape is (operand, new_sizes, dimensions).
            raise _fail("reshape", f"dimensions {perm} is not a permutation of the operand's "
                                   f"dimensions; ops.reshape takes (operand, dimensions, new_sizes) "
                                   f"as XLA's Reshape does, or (operand, new_sizes) "
                                   f"(xlac.lax.reshape takes jax's (operand, new_sizes, dimensions))",
                        operand.shape)
        if perm != list(range(len(perm))):
            operand = transpose(operand, perm)
    if not operand.shape.is_array:
        raise _fail("reshape", "operand must be an array", operand.shape)
    return operand.builder.add_instruction("reshape", [operand],
                                           shape=Shape(operand.shape.element_type, sizes))


def collapse(operand: XlaOp, dimensions) -> XlaOp:
    """Merge the consecutive, in-order ``dimensions`` into one (spec: *Collapse*)."""
    _unary_check("collapse", operand)
    dims = _int_list("collapse", "dimensions", dimensions)
    s = operand.shape
    if not dims or dims != list(range(dims[0], dims[0] + len(dims))) or dims[0] < 0 or dims[-1] >= s.rank:
        raise _fail("collapse", f"dimensions {dims} must be a consecutive, increasing run of "
                                f"the operand's dimensions", s)
    merged = 1
    for d in dims:
        merged *= s.dimensions[d]
    return reshape(operand, list(s.dimensions[:dims[0]]) + [merged] + list(s.dimensions[dims[-1] + 1:]))


@builds("transpose")
def transpose(operand: XlaOp, permutation) -> XlaOp:
    """Permute dimensions: ``output.dims[i] = operand.dims[permutation[i]]`` (spec: *Transpose*).

    ShapeError when ``permutation`` is not a permutation of the operand's dimensions.
    """
    _unary_check("transpose", operand)
    perm = _int_list("transpose", "permutation", permutation)
    return operand.builder.add_instruction("transpose", [operand], {"dimensions": _bi.tuple(perm)})


@builds("reverse")
def rev(operand: XlaOp, dimensions) -> XlaOp:
    """Reverse the order of elements along ``dimensions`` (spec: *Rev*)."""
    _unary_check("rev", operand)
    dims = _int_list("rev", "dimensions", dimensions)
    return operand.builder.add_instruction("reverse", [operand], {"dimensions": _bi.tuple(dims)})


@builds("slice")
def slice(operand: XlaOp, start_indices, limit_indices, strides=None) -> XlaOp:  # noqa: A001
    """The sub-array ``[start, limit)`` with ``strides`` (default 1) per dimension (spec: *Slice*).

    ShapeError unless ``0 <= start <= limit <= size`` and ``stride >= 1`` in every
    dimension, with one entry per dimension.
    """
    _unary_check("slice", operand)
    start = _int_list("slice", "start_indices", start_indices)
    limit = _int_list("slice", "limit_indices", limit_indices)
    stride = [1] * len(start) if strides is None else _int_list("slice", "strides", strides)
    rank = operand.shape.rank
    if not (len(start) == len(limit) == len(stride) == rank):
        raise _fail("slice", f"start_indices {start}, limit_indices {limit} and strides {stride} "
                             f"must each have one entry per dimension ({rank})", operand.shape)
    return operand.builder.add_instruction(
        "slice", [operand], {"slice": _bi.tuple(zip(start, limit, stride))})


def slice_in_dim(operand: XlaOp, start_index: int, limit_index: int, stride: int = 1,
                 dimno: int = 0) -> XlaOp:
    """:func:`slice` along dimension ``dimno`` only (spec: *Slice*, XlaBuilder::SliceInDim)."""
    _unary_check("slice_in_dim", operand)
    rank = operand.shape.rank
    dimno = _index("slice_in_dim", "dimno", dimno)
    if not 0 <= dimno < rank:
        raise _fail("slice_in_dim", f"dimno {dimno} is out of range for rank {rank}", operand.shape)
    start, limit, strides = [0] * rank, list(operand.shape.dimensions), [1] * rank
    start[dimno], limit[dimno], strides[dimno] = start_index, limit_index, stride
    return slice(operand, start, limit, strides)


@builds("concatenate")
def concat_in_dim(builder: XlaBuilder, operands, dimension: int) -> XlaOp:
    """Concatenate ``operands`` along ``dimension`` (spec: *Concatenate*).

    All operands have one element type and equal sizes except along
    ``dimension``.  ShapeError otherwise (and for scalars).
    """
    operands = list(operands)
    builder.check_operands("concat_in_dim", operands)
    return builder.add_instruction("concatenate", operands,
                                   {"dimensions": (_index("concat_in_dim", "dimension", dimension),)})


@builds("pad")
def pad(operand: XlaOp, padding_value, padding_config) -> XlaOp:
    """Pad with ``padding_value`` (spec: *Pad*).

    ``padding_config``: per dimension ``(low, high, interior)``; low/high may be
    negative (removing elements), interior >= 0.  ``padding_value``: scalar XlaOp
    or Python number (becomes a constant of the operand's type).  ShapeError when
    a resulting size is negative or the types differ.
    """
    _unary_check("pad", operand)
    (pv,) = [padding_value] if isinstance(padding_value, XlaOp) else \
        [_constant_like("pad", padding_value, operand)]
    _builder("pad", operand, pv)
    cfg = []
    for t in padding_config:
        if hasattr(t, "edge_padding_low"):
            t = (t.edge_padding_low, t.edge_padding_high, t.interior_padding)
        t = _int_list("pad", "padding_config entry", t)
        if len(t) != 3:
            raise _fail("pad", f"padding_config entries are (low, high, interior), got {t}", operand.shape)
        cfg.append(_bi.tuple(t))
    return operand.builder.add_instruction("pad", [operand, pv], {"padding": _bi.tuple(cfg)})


# ---------------------------------------------------------------------------
# reduce
# ---------------------------------------------------------------------------

@builds("reduce")
def reduce(operands, init_values, computation: XlaComputation, dimensions_to_reduce) -> XlaOp:
    """Reduce ``dimensions_to_reduce`` with ``computation`` (spec: *Reduce*).

    One operand: ``reduce(x, init, add_comp, [1])``, ``computation`` of type
    ``(T, T) -> T``.  Variadic: lists of N operands and N init values,
    ``computation`` of type ``(T1..TN, T1..TN) -> (T1..TN)``; the result is then a
    tuple (use :func:`get_tuple_element`).  Init values may be Python numbers.
    ShapeError for a reducer of the wrong signature, bad dimensions or mismatched
    operands.
    """
    single = isinstance(operands, XlaOp)
    xs = [operands] if single else list(operands)
    inits = [init_values] if single or not isinstance(init_values, (list, _bi.tuple)) \
        else list(init_values)
    if not xs:
        raise TypeError("reduce: needs at least one operand")
    if len(xs) != len(inits):
        raise TypeError(f"reduce: {len(xs)} operands but {len(inits)} init values")
    b = _builder("reduce", *xs, *inits)
    for x in xs:
        if not isinstance(x, XlaOp):
            raise TypeError(f"reduce: operands must be XlaOps, got {type(x).__name__}")
    inits = [v if isinstance(v, XlaOp) else _constant_like("reduce", v, x) for v, x in zip(inits, xs)]
    dims = _int_list("reduce", "dimensions_to_reduce", dimensions_to_reduce)
    callee = b.import_computation(computation, "reduce", "computation")
    return b.add_instruction("reduce", xs + inits, {"dimensions": _bi.tuple(dims), "to_apply": callee})


# ---------------------------------------------------------------------------
# dot
# ---------------------------------------------------------------------------

@dataclass
class DotDimensionNumbers:
    """Contracting and batch dimensions of :func:`dot_general` (spec: *DotGeneral*)."""

    lhs_contracting_dimensions: tuple = ()
    rhs_contracting_dimensions: tuple = ()
    lhs_batch_dimensions: tuple = ()
    rhs_batch_dimensions: tuple = ()


def _dot_numbers(dimension_numbers) -> DotDimensionNumbers:
    dn = dimension_numbers
    if isinstance(dn, DotDimensionNumbers):
        return dn
    if isinstance(dn, dict):
        unknown = set(dn) - set(DotDimensionNumbers.__dataclass_fields__)
        if unknown:
            raise TypeError(f"dot_general: unknown dimension_numbers keys {sorted(unknown)}")
        return DotDimensionNumbers(**dn)
    if isinstance(dn, (list, _bi.tuple)) and len(dn) == 2:  # jax.lax: ((lc, rc), (lb, rb))
        (lc, rc), (lb, rb) = dn
        return DotDimensionNumbers(lc, rc, lb, rb)
    if hasattr(dn, "lhs_contracting_dimensions"):
        return DotDimensionNumbers(*(getattr(dn, f, ()) for f in DotDimensionNumbers.__dataclass_fields__))
    raise TypeError(f"dot_general: dimension_numbers must be a dict, DotDimensionNumbers or "
                    f"((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), got {dn!r}")


@builds("dot")
def dot_general(lhs: XlaOp, rhs: XlaOp, dimension_numbers, preferred_element_type=None) -> XlaOp:
    """Sum of products over contracting dimensions, batched (spec: *DotGeneral*).

    Result dimensions: batch, then lhs free, then rhs free dimensions.
    ``dimension_numbers``: dict or :class:`DotDimensionNumbers` with
    ``lhs_contracting_dimensions``, ``rhs_contracting_dimensions``,
    ``lhs_batch_dimensions``, ``rhs_batch_dimensions`` (absent = empty), or
    jax.lax's ``((lc, rc), (lb, rb))``.  ``preferred_element_type``: result
    element type if not the operands'.  ShapeError when sizes or types mismatch.
    """
    op = "dot_general"
    b = _builder(op, lhs, rhs)
    b.check_operands(op, [lhs, rhs])
    dn = _dot_numbers(dimension_numbers)
    attrs = {}
    for key, val in (("lhs_batch_dims", dn.lhs_batch_dimensions),
                     ("lhs_contracting_dims", dn.lhs_contracting_dimensions),
                     ("rhs_batch_dims", dn.rhs_batch_dimensions),
                     ("rhs_contracting_dims", dn.rhs_contracting_dimensions)):
        val = _int_list(op, key, val)
        if val:  # HLO text leaves empty lists out
            attrs[key] = _bi.tuple(val)
    shape = None
    if preferred_element_type is not None:
        s = infer_shape("dot", [lhs.shape, rhs.shape], attrs)
        shape = s.with_element_type(_element_type(op, preferred_element_type))
    return b.add_instruction("dot", [lhs, rhs], attrs, shape=shape)


@builds("scaled-dot")
def scaled_dot(lhs: XlaOp, lhs_scale: XlaOp, rhs: XlaOp, rhs_scale: XlaOp, dimension_numbers,
               preferred_element_type=None) -> XlaOp:
    """XLA's ScaledDot: a dot_general of block-scaled operands (MX formats such
    as f8e4m3fn with f8e8m0fnu scales).  Each scale is a scalar (XLA then
    leaves its operand unscaled) or has its operand's rank with dimensions
    dividing the operand's: scale element ``i`` multiplies block ``i``.
    Operand and scale are computed in a common type (bf16 for two narrow
    types), the result in ``preferred_element_type`` (default: that type, f32
    when lhs and rhs differ).  ``dimension_numbers`` as for
    :func:`dot_general`.  ShapeError for scales that do not divide their
    operands, non-float types, dot dimension mismatches."""
    op = "scaled_dot"
    b = _builder(op, lhs, lhs_scale, rhs, rhs_scale)
    operands = [lhs, lhs_scale, rhs, rhs_scale]
    b.check_operands(op, operands)
    dn = _dot_numbers(dimension_numbers)
    attrs = {}
    for key, val in (("lhs_batch_dims", dn.lhs_batch_dimensions),
                     ("lhs_contracting_dims", dn.lhs_contracting_dimensions),
                     ("rhs_batch_dims", dn.rhs_batch_dimensions),
                     ("rhs_contracting_dims", dn.rhs_contracting_dimensions)):
        val = _int_list(op, key, val)
        if val:
            attrs[key] = _bi.tuple(val)
    shape = None
    if preferred_element_type is not None:
        s = infer_shape("scaled-dot", [o.shape for o in operands], attrs)
        shape = s.with_element_type(_element_type(op, preferred_element_type))
    return b.add_instruction("scaled-dot", operands, attrs, shape=shape)


@builds("ragged-dot")
def ragged_dot_general(lhs: XlaOp, rhs: XlaOp, group_sizes: XlaOp, dimension_numbers, lhs_ragged_dimensions,
                       rhs_group_dimensions=(), preferred_element_type=None) -> XlaOp:
    """A dot whose lhs dimension ``lhs_ragged_dimensions`` (one) is split into
    consecutive groups of ``group_sizes`` rows (XLA's RaggedDot; jax's
    ``lax.ragged_dot_general``).  ``dimension_numbers`` as for
    :func:`dot_general`; ``group_sizes``: integers ``[g]`` or ``[prefix..., g]``
    (the lhs batch dimensions, then those of the ragged dimension's kind before
    it).  Three modes, by the kind of the ragged dimension:

    * non-contracting (``[m,k] x [g,k,n] -> [m,n]``): row ``i`` of group ``j``
      is multiplied by rhs slice ``j`` of ``rhs_group_dimensions`` (one, size
      g); rows past the groups' total give zeros;
    * contracting (``[m,k] x [k,n] -> [g,m,n]``): result ``j`` contracts only
      group ``j``'s part of the dimension;
    * batch: a plain dot_general.

    ShapeError naming the rule for bad dimension numbers, a group_sizes shape
    or group count that does not fit, non-integer group sizes."""
    op = "ragged_dot_general"
    b = _builder(op, lhs, rhs, group_sizes)
    b.check_operands(op, [lhs, rhs, group_sizes])
    dn = _dot_numbers(dimension_numbers)
    attrs = {}
    for key, val in (("lhs_batch_dims", dn.lhs_batch_dimensions),
                     ("lhs_contracting_dims", dn.lhs_contracting_dimensions),
                     ("rhs_batch_dims", dn.rhs_batch_dimensions),
                     ("rhs_contracting_dims", dn.rhs_contracting_dimensions),
                     ("lhs_ragged_dims", lhs_ragged_dimensions),
                     ("rhs_group_dims", rhs_group_dimensions)):
        val = _int_list(op, key, val)
        if val or key == "lhs_ragged_dims":
            attrs[key] = _bi.tuple(val)
    shapes = [lhs.shape, rhs.shape, group_sizes.shape]
    shape = None
    if preferred_element_type is not None:
        s = infer_shape("ragged-dot", shapes, attrs)
        shape = s.with_element_type(_element_type(op, preferred_element_type))
    return b.add_instruction("ragged-dot", [lhs, rhs, group_sizes], attrs, shape=shape)


def ragged_dot(lhs: XlaOp, rhs: XlaOp, group_sizes: XlaOp, preferred_element_type=None) -> XlaOp:
    """jax's ``lax.ragged_dot``: ``[m,k] x [g,k,n] -> [m,n]``, the rows of lhs
    in consecutive groups of ``group_sizes`` (``[g]`` integers), row ``i`` of
    group ``j`` times ``rhs[j]`` (see :func:`ragged_dot_general`)."""
    return ragged_dot_general(lhs, rhs, group_sizes, (((1,), (1,)), ((), ())), (0,), (0,),
                              preferred_element_type)


def dot(lhs: XlaOp, rhs: XlaOp, preferred_element_type=None) -> XlaOp:
    """Vector/matrix products (spec: *Dot*).

    ``[n] . [n] -> []``, ``[m,k] . [k] -> [m]``, ``[k] . [k,n] -> [n]``,
    ``[m,k] . [k,n] -> [m,n]``: contracts the last dimension of ``lhs`` with the
    first of ``rhs``.  ShapeError for other ranks or mismatched sizes.
    """
    b = _builder("dot", lhs, rhs)
    b.check_operands("dot", [lhs, rhs])
    for s in (lhs.shape, rhs.shape):
        if not s.is_array or s.rank not in (1, 2):
            raise _fail("dot", "operands must be vectors or matrices (use dot_general for other "
                               "ranks)", lhs.shape, rhs.shape)
    return dot_general(lhs, rhs, DotDimensionNumbers((lhs.shape.rank - 1,), (0,)),
                       preferred_element_type)


# ---------------------------------------------------------------------------
# tuples and calls
# ---------------------------------------------------------------------------

@builds("tuple")
def tuple(builder: XlaBuilder, elements) -> XlaOp:  # noqa: A001
    """A tuple of ``elements`` (spec: *Tuple*)."""
    elements = list(elements)
    builder.check_operands("tuple", elements)
    return builder.add_instruction("tuple", elements)


@builds("get-tuple-element")
def get_tuple_element(tuple_data: XlaOp, index: int) -> XlaOp:
    """Element ``index`` of a tuple (spec: *GetTupleElement*); ShapeError when out of range."""
    _unary_check("get_tuple_element", tuple_data)
    return tuple_data.builder.add_instruction("get-tuple-element", [tuple_data],
                                              {"index": _index("get_tuple_element", "index", index)})


@builds("call")
def call(builder: XlaBuilder, computation: XlaComputation, operands=()) -> XlaOp:
    """Call ``computation`` with ``operands`` (spec: *Call*).

    The operands must match the computation's parameters in number and shape
    (ShapeError otherwise); the result has its root's shape.
    """
    operands = list(operands)
    builder.check_operands("call", operands)
    callee = builder.import_computation(computation, "call", "computation")
    return builder.add_instruction("call", operands, {"to_apply": callee})


@builds("call")
def composite_call(builder: XlaBuilder, computation: XlaComputation, operands=(), name: str = "",
                   attributes: str | None = None, version: int | None = None) -> XlaOp:
    """A composite operation (spec: *CompositeCall*): ``computation`` is its
    decomposition, called with ``operands``; ``name`` (e.g. "foo.bar"),
    ``attributes`` (MLIR attribute-dictionary text, e.g. ``"{n = 1 : i32}"``;
    default ``"{}"``) and ``version`` (default 0) are kept as the call's
    ``composite.*`` frontend attributes through every pass, as XLA's
    CompositeCall does.  ShapeError for an empty name or attributes, a negative
    version, or operands the computation does not take."""
    op = "composite_call"
    if not isinstance(name, str):
        raise TypeError(f"{op}: name must be a string, got {name!r}")
    if attributes is not None and not isinstance(attributes, str):
        raise TypeError(f"{op}: attributes must be the text of an attribute dictionary, got {attributes!r}")
    version = 0 if version is None else _index(op, "version", version)
    operands = list(operands)
    builder.check_operands(op, operands)
    callee = builder.import_computation(computation, "composite_call", "computation")
    fields = {"composite.attributes": "{}" if attributes is None else attributes,
              "composite.name": name, "composite.version": str(version)}
    attrs = {"to_apply": callee, "is_composite": True,
             "frontend_attributes": Raw(_format_frontend_attributes(fields))}
    return builder.add_instruction("call", operands, attrs)


def _format_frontend_attributes(fields: dict) -> str:
    """``{k="v",...}`` as XLA prints frontend attributes: keys sorted, a value
    that is itself a braced dictionary unquoted."""
    def value(v: str) -> str:
        if v.startswith("{") and v.endswith("}"):
            return v
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "{" + ",".join(f"{k}={value(v)}" for k, v in sorted(fields.items())) + "}"


# ---------------------------------------------------------------------------
# dynamic slicing
# ---------------------------------------------------------------------------

def _start_index_ops(op: str, like: XlaOp, start_indices) -> list:
    """Start indices as XlaOps: one rank-1 XlaOp (old form) or a sequence of scalar
    XlaOps / Python ints (ints become constants of the XlaOps' index type, s32 if none)."""
    if isinstance(start_indices, XlaOp):
        return [start_indices]
    items = list(start_indices)
    typed = next((s for s in items if isinstance(s, XlaOp)), None)
    out = []
    for s in items:
        if isinstance(s, XlaOp):
            out.append(s)
        elif typed is not None:
            out.append(_constant_like(op, s, typed))
        else:
            out.append(constant(like.builder, np.int32(_index(op, "start index", s))))
    _builder(op, like, *out)
    return out


@builds("dynamic-slice")
def dynamic_slice(operand: XlaOp, start_indices, slice_sizes) -> XlaOp:
    """The ``slice_sizes`` window of ``operand`` at run-time ``start_indices`` (spec: *DynamicSlice*).

    ``start_indices``: one scalar integer XlaOp (or Python int) per dimension, or
    one rank-1 integer XlaOp.  Starts are clamped at run time so the window stays
    in bounds.  ShapeError for a size outside ``[0, dimension size]`` or
    mismatched index counts/types.
    """
    _unary_check("dynamic_slice", operand)
    starts = _start_index_ops("dynamic_slice", operand, start_indices)
    sizes = _int_list("dynamic_slice", "slice_sizes", slice_sizes)
    return operand.builder.add_instruction("dynamic-slice", [operand] + starts,
                                           {"dynamic_slice_sizes": _bi.tuple(sizes)})


@builds("dynamic-update-slice")
def dynamic_update_slice(operand: XlaOp, update: XlaOp, start_indices) -> XlaOp:
    """``operand`` with ``update`` written at run-time ``start_indices`` (spec:
    *DynamicUpdateSlice*); starts are clamped so the update stays in bounds."""
    _unary_check("dynamic_update_slice", operand)
    _builder("dynamic_update_slice", operand, update)
    starts = _start_index_ops("dynamic_update_slice", operand, start_indices)
    return operand.builder.add_instruction("dynamic-update-slice", [operand, update] + starts)


# ---------------------------------------------------------------------------
# control flow
# ---------------------------------------------------------------------------

@builds("while")
def while_loop(condition: XlaComputation, body: XlaComputation, init: XlaOp) -> XlaOp:
    """Run ``body`` while ``condition`` holds, starting from ``init`` (spec: *While*).

    ``condition``: ``T -> pred[]``; ``body``: ``T -> T``; ``init``: a ``T`` (usually a
    tuple).  Returns the final ``T``.  ShapeError when the signatures disagree.
    """
    if not isinstance(init, XlaOp):
        raise TypeError(f"while_loop: init must be an XlaOp, got {type(init).__name__}"
                        + not_an_xla_op_hint(init))
    b = init.builder
    attrs = {"condition": b.import_computation(condition, "while_loop", "condition"),
             "body": b.import_computation(body, "while_loop", "body")}
    return b.add_instruction("while", [init], attrs)



@builds("conditional")
def conditional(selector: XlaOp, *args) -> XlaOp:
    """Run one computation and return its result (spec: *Conditional*).

    * ``conditional(pred, true_operand, true_computation, false_operand,
      false_computation)``: ``pred`` a ``pred[]``;
    * ``conditional(branch_index, branch_computations, branch_operands)``:
      ``branch_index`` an ``s32[]``; an index outside ``[0, N)`` runs the last branch.

    Each computation takes its operand and all return one shape (ShapeError otherwise).
    """
    if not isinstance(selector, XlaOp):
        raise TypeError(f"conditional: the selector must be an XlaOp, got {type(selector).__name__}"
                        + not_an_xla_op_hint(selector))
    b = selector.builder
    if len(args) == 4:
        true_operand, true_computation, false_operand, false_computation = args
        b.check_operands("conditional", [selector, true_operand, false_operand])
        attrs = {"true_computation": b.import_computation(true_computation, "conditional",
                                                          "true_computation"),
                 "false_computation": b.import_computation(false_computation, "conditional",
                                                           "false_computation")}
        return b.add_instruction("conditional", [selector, true_operand, false_operand], attrs)
    if len(args) == 2:
        computations, operands = list(args[0]), list(args[1])
        if len(computations) != len(operands):
            raise TypeError(f"conditional: {len(computations)} branch_computations but "
                            f"{len(operands)} branch_operands")
        if not computations:
            raise TypeError("conditional: needs at least one branch")
        b.check_operands("conditional", [selector] + operands)
        attrs = {"branch_computations": _bi.tuple(b.import_computation(c, "conditional", "branch_computations")
                                                  for c in computations)}
        return b.add_instruction("conditional", [selector] + operands, attrs)
    raise TypeError("conditional: call as conditional(pred, true_operand, true_computation, "
                    "false_operand, false_computation) or conditional(branch_index, "
                    "branch_computations, branch_operands)")


@builds("map")
def map(builder: XlaBuilder, operands, computation: XlaComputation, dimensions=None) -> XlaOp:  # noqa: A001
    """Apply the scalar ``computation`` at every index of ``operands`` (spec: *Map*).

    ``computation`` takes one scalar per operand (of its element type) and returns
    a scalar; ``dimensions`` (default: all) must be every dimension in order.
    """
    operands = [operands] if isinstance(operands, XlaOp) else list(operands)
    builder.check_operands("map", operands)
    if not operands:
        raise TypeError("map: needs at least one operand")
    rank = operands[0].shape.rank if operands[0].shape.is_array else 0
    dims = list(range(rank)) if dimensions is None else _int_list("map", "dimensions", dimensions)
    return builder.add_instruction("map", operands, {"dimensions": _bi.tuple(dims),
                                                     "to_apply": builder.import_computation(computation, "map",
                                                                                            "computation")})


@builds("scan")
def scan(inputs, inits, computation: XlaComputation, dimension: int = 0, is_reverse: bool = False,
         is_associative: bool | None = None) -> XlaOp:
    """XLA's Scan: step ``i`` (from the end with ``is_reverse``) runs
    ``computation`` on slice ``i`` of dimension ``dimension`` of every input,
    then the carries (``inits`` at the first step); it returns ``(outputs...,
    carries...)``, or one value when there is one.  The result stacks each
    output along ``dimension``, then gives the final carries: a tuple, or the
    one value when there is one.  ``is_associative`` is XLA's hint (kept in
    the text).  ShapeError when the inputs disagree in the scan dimension or
    the computation's signature does not fit."""
    op = "scan"
    inputs = [inputs] if isinstance(inputs, XlaOp) else list(inputs)
    inits = [inits] if isinstance(inits, XlaOp) else list(inits)
    b = _builder(op, *inputs, *inits)
    attrs = {"dimensions": (_index(op, "dimension", dimension),), "num_carries": len(inits),
             "is_reverse": bool(is_reverse), "to_apply": b.import_computation(computation)}
    if is_associative is not None:
        attrs["is_associative"] = bool(is_associative)
    return b.add_instruction("scan", inputs + inits, attrs)


def _default_comparator(operands: list) -> XlaComputation:
    """``lhs < rhs`` on the first operand (total order for floats), others ignored."""
    cb = XlaBuilder("comparator")
    params = []
    for k, o in enumerate(operands):
        scalar = Shape(o.shape.element_type, ())
        params += [parameter(cb, 2 * k, scalar, f"lhs.{k}"), parameter(cb, 2 * k + 1, scalar, f"rhs.{k}")]
    et = operands[0].shape.element_type
    ctype = "TOTALORDER" if et.is_float else None
    return cb.build(compare(params[0], params[1], "LT", compare_type=ctype))


@builds("sort")
def sort(operands, comparator: XlaComputation | None = None, dimension: int = -1,
         is_stable: bool = False) -> XlaOp:
    """Sort ``operands`` together along ``dimension`` (spec: *Sort*).

    ``comparator`` takes ``2 * N`` scalars (element i and j of each operand in
    turn) and returns ``pred[]``: true when i goes before j.  Default: ascending
    by the first operand (total order for floats).  ``dimension=-1`` is the last.
    One operand gives an array, several a tuple.  xlac's sort is always stable.
    """
    single = isinstance(operands, XlaOp)
    xs = [operands] if single else list(operands)
    if not xs:
        raise TypeError("sort: needs at least one operand")
    b = _builder("sort", *xs)
    b.check_operands("sort", xs)
    rank = xs[0].shape.rank if xs[0].shape.is_array else 0
    dim = _index("sort", "dimension", dimension)
    if dim < 0:
        dim += rank
    if comparator is None:
        comparator = _default_comparator(xs)
    attrs = {"dimensions": (dim,), "is_stable": bool(is_stable),
             "to_apply": b.import_computation(comparator, "sort", "comparator")}
    return b.add_instruction("sort", xs, attrs)


@builds("topk")
def top_k(operand: XlaOp, k: int, largest: bool = True) -> XlaOp:
    """The ``k`` largest (or smallest) elements of the last dimension and their
    indices (spec: *TopK*): a tuple ``(values, s32 indices)``, sorted, ties in
    index order (floats in total order: NaN above +inf)."""
    _unary_check("top_k", operand)
    return operand.builder.add_instruction("topk", [operand], {"k": _index("top_k", "k", k),
                                                               "largest": bool(largest)})


@dataclass
class ScatterDimensionNumbers:
    """Dimension numbers of :func:`scatter` (spec: *Scatter*)."""

    update_window_dims: tuple = ()
    inserted_window_dims: tuple = ()
    scatter_dims_to_operand_dims: tuple = ()
    index_vector_dim: int = 0
    input_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


@builds("scatter")
def scatter(operands, scatter_indices: XlaOp, updates, update_computation: XlaComputation,
            index_vector_dim: int | None = None, update_window_dims=(), inserted_window_dims=(),
            scatter_dims_to_operand_dims=(), indices_are_sorted: bool = False,
            unique_indices: bool = False, input_batching_dims=(), scatter_indices_batching_dims=(),
            dimension_numbers=None) -> XlaOp:
    """Combine ``updates`` into ``operands`` at ``scatter_indices`` (spec: *Scatter*).

    One operand and update, or sequences of N each (the result is then a tuple);
    ``update_computation`` is ``(T_0..T_N-1, T_0..T_N-1) -> T`` (a tuple for N > 1),
    called with the current value first.  Dimension numbers as keyword arguments
    or ``dimension_numbers`` (a :class:`ScatterDimensionNumbers` or dict).  Update
    windows that do not fit in the operand are skipped.
    """
    single = isinstance(operands, XlaOp)
    xs = [operands] if single else list(operands)
    us = [updates] if isinstance(updates, XlaOp) else list(updates)
    if not xs or len(xs) != len(us):
        raise TypeError(f"scatter: needs N >= 1 operands and as many updates, got {len(xs)} and {len(us)}")
    b = _builder("scatter", *xs, scatter_indices, *us)
    b.check_operands("scatter", xs + [scatter_indices] + us)
    if dimension_numbers is not None:
        dn = dimension_numbers
        if isinstance(dn, dict):
            dn = ScatterDimensionNumbers(**dn)
        update_window_dims = dn.update_window_dims
        inserted_window_dims = dn.inserted_window_dims
        scatter_dims_to_operand_dims = dn.scatter_dims_to_operand_dims
        index_vector_dim = dn.index_vector_dim
        input_batching_dims = getattr(dn, "input_batching_dims", ())
        scatter_indices_batching_dims = getattr(dn, "scatter_indices_batching_dims", ())
    if index_vector_dim is None:
        raise TypeError("scatter: index_vector_dim is required")
    op = "scatter"
    attrs = {"update_window_dims": _bi.tuple(_int_list(op, "update_window_dims", update_window_dims)),
             "inserted_window_dims": _bi.tuple(_int_list(op, "inserted_window_dims", inserted_window_dims)),
             "scatter_dims_to_operand_dims": _bi.tuple(_int_list(op, "scatter_dims_to_operand_dims",
                                                                 scatter_dims_to_operand_dims)),
             "index_vector_dim": _index(op, "index_vector_dim", index_vector_dim)}
    ibd = _int_list(op, "input_batching_dims", input_batching_dims)
    sibd = _int_list(op, "scatter_indices_batching_dims", scatter_indices_batching_dims)
    if ibd or sibd:
        attrs["input_batching_dims"] = _bi.tuple(ibd)
        attrs["scatter_indices_batching_dims"] = _bi.tuple(sibd)
    if indices_are_sorted:
        attrs["indices_are_sorted"] = True
    if unique_indices:
        attrs["unique_indices"] = True
    attrs["to_apply"] = b.import_computation(update_computation, "scatter", "update_computation")
    return b.add_instruction("scatter", xs + [scatter_indices] + us, attrs)


# ---------------------------------------------------------------------------
# gather, convolution, windows, fft
# ---------------------------------------------------------------------------

def _raw(text: str):
    return Raw(text)


def _dims_from(op: str, dn, cls):
    """A dimension-numbers dataclass from an instance, a dict or any object with its fields."""
    if isinstance(dn, cls):
        return dn
    fields = cls.__dataclass_fields__
    if isinstance(dn, dict):
        unknown = set(dn) - set(fields)
        if unknown:
            raise TypeError(f"{op}: unknown dimension_numbers keys {sorted(unknown)}")
        return cls(**dn)
    if _bi.any(hasattr(dn, f) for f in fields):
        return cls(**{f: getattr(dn, f) for f in fields if hasattr(dn, f)})
    raise TypeError(f"{op}: dimension_numbers must be a {cls.__name__}, a dict or an object with "
                    f"its fields, got {dn!r}")


@dataclass
class GatherDimensionNumbers:
    """Dimension numbers of :func:`gather` (spec: *Gather*).  ``index_vector_dim``
    None means the last dimension of ``start_indices`` (jax.lax's convention)."""

    offset_dims: tuple = ()
    collapsed_slice_dims: tuple = ()
    start_index_map: tuple = ()
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()
    index_vector_dim: int | None = None


@builds("gather")
def gather(operand: XlaOp, start_indices: XlaOp, dimension_numbers, slice_sizes,
           indices_are_sorted: bool = False) -> XlaOp:
    """Slices of ``operand`` at the starts ``start_indices`` holds (spec: *Gather*).

    ``dimension_numbers``: :class:`GatherDimensionNumbers`, a dict of its fields or
    an object with them (jax.lax.GatherDimensionNumbers).  Starts are clamped so
    each slice is in bounds.  ShapeError for inconsistent dimension numbers.
    """
    op = "gather"
    b = _builder(op, operand, start_indices)
    b.check_operands(op, [operand, start_indices])
    dn = _dims_from(op, dimension_numbers, GatherDimensionNumbers)
    ivd = dn.index_vector_dim
    if ivd is None:
        ivd = start_indices.shape.rank - 1 if start_indices.shape.is_array else 0
    attrs = {"offset_dims": _bi.tuple(_int_list(op, "offset_dims", dn.offset_dims)),
             "collapsed_slice_dims": _bi.tuple(_int_list(op, "collapsed_slice_dims",
                                                         dn.collapsed_slice_dims)),
             "start_index_map": _bi.tuple(_int_list(op, "start_index_map", dn.start_index_map))}
    obd = _int_list(op, "operand_batching_dims", dn.operand_batching_dims)
    sibd = _int_list(op, "start_indices_batching_dims", dn.start_indices_batching_dims)
    if obd or sibd:
        attrs["operand_batching_dims"] = _bi.tuple(obd)
        attrs["start_indices_batching_dims"] = _bi.tuple(sibd)
    attrs["index_vector_dim"] = _index(op, "index_vector_dim", ivd)
    attrs["slice_sizes"] = _bi.tuple(_int_list(op, "slice_sizes", slice_sizes))
    if indices_are_sorted:
        attrs["indices_are_sorted"] = True
    return b.add_instruction("gather", [operand, start_indices], attrs)


def _pairs(op: str, padding, n: int) -> list:
    try:
        pairs = [_bi.tuple(_operator.index(v) for v in p) for p in padding]
    except TypeError:
        raise TypeError(f"{op}: padding must be 'SAME', 'VALID' or (low, high) pairs, "
                        f"got {padding!r}") from None
    if len(pairs) != n or _bi.any(len(p) != 2 for p in pairs):
        raise _fail(op, f"padding needs {n} (low, high) pairs, got {padding!r}")
    return pairs


def _padding(op: str, padding, in_sizes, window_sizes, strides) -> list:
    """(low, high) pairs from pairs or 'SAME' / 'VALID' (padding so that the output
    has ceil(in / stride) elements, split low-first as XLA's MakePadding does)."""
    n = len(in_sizes)
    if isinstance(padding, str):
        kind = padding.upper()
        if kind == "VALID":
            return [(0, 0)] * n
        if kind != "SAME":
            raise ValueError(f"{op}: padding must be 'SAME', 'VALID' or (low, high) pairs, got {padding!r}")
        if _bi.any(s < 1 for s in strides):
            raise _fail(op, f"window_strides {list(strides)} must be positive for 'SAME' padding")
        pads = []
        for size, w, s in zip(in_sizes, window_sizes, strides):
            out = -(-size // s)
            total = _bi.max((out - 1) * s + w - size, 0)
            pads.append((total // 2, total - total // 2))
        return pads
    if padding is None:
        return [(0, 0)] * n
    return _pairs(op, padding, n)


def _spatial_list(op: str, name: str, values, n: int, default: int = 1) -> list:
    out = _int_list(op, name, values) if values is not None else []
    if not out:
        return [default] * n
    if len(out) != n:
        raise _fail(op, f"{name} needs {n} entries (one per spatial dimension), got {out}")
    return out


def _conv_numbers(op: str, dimension_numbers, rank: int):
    """ConvDimensionNumbers from None (bf01_oi01->bf01), dim_labels text, jax-style
    ``(lhs_spec, rhs_spec, out_spec)`` strings like ('NHWC', 'HWIO', 'NHWC'), or an
    object with ``lhs_spec``/``rhs_spec``/``out_spec`` permutations."""
    dn = dimension_numbers
    try:
        if dn is None:
            return ConvDimensionNumbers.default(rank - 2)
        if isinstance(dn, ConvDimensionNumbers):
            return dn
        if isinstance(dn, str):
            return parse_dim_labels(dn)
        if isinstance(dn, dict):
            return ConvDimensionNumbers(**dn)
        if hasattr(dn, "lhs_spec"):
            dn = (dn.lhs_spec, dn.rhs_spec, dn.out_spec)
        lhs, rhs, out = dn
        if _bi.all(isinstance(s, str) for s in (lhs, rhs, out)):
            spatial = [c for c in rhs if c not in "OI"]
            def perm(spec, a, b):
                return [spec.index(a), spec.index(b)] + [spec.index(c) for c in spatial]
            lp, rp, op_ = perm(lhs, "N", "C"), perm(rhs, "O", "I"), perm(out, "N", "C")
        else:
            lp, rp, op_ = ([_operator.index(v) for v in s] for s in (lhs, rhs, out))
        return ConvDimensionNumbers(lp[0], lp[1], _bi.tuple(lp[2:]), rp[1], rp[0], _bi.tuple(rp[2:]),
                                    op_[0], op_[1], _bi.tuple(op_[2:]))
    except (WindowError, ValueError, TypeError) as e:
        raise TypeError(f"{op}: bad dimension_numbers {dimension_numbers!r}: {e}") from None


@builds("convolution")
def conv_general_dilated(lhs: XlaOp, rhs: XlaOp, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision_config=None,
                         preferred_element_type=None) -> XlaOp:
    """Convolution with strides, padding, dilations and groups (spec: *ConvWithGeneralPadding*).

    ``padding``: (low, high) per spatial dimension, or 'SAME' / 'VALID'.
    ``dimension_numbers``: None (``bf01_oi01->bf01``), dim_labels text like
    ``'b01f_01io->b01f'``, jax-style ``('NHWC', 'HWIO', 'NHWC')``, or a
    :class:`xlac.hlo.window.ConvDimensionNumbers`.  ``precision_config`` is
    accepted and ignored (xlac computes at full precision).  ShapeError for
    mismatched features, groups or window sizes.
    """
    op = "conv_general_dilated"
    b = _builder(op, lhs, rhs)
    b.check_operands(op, [lhs, rhs])
    if not lhs.shape.is_array or not rhs.shape.is_array:
        raise _fail(op, "lhs and rhs must be arrays", lhs.shape, rhs.shape)
    dn = _conv_numbers(op, dimension_numbers, lhs.shape.rank)
    n = dn.num_spatial_dims
    if lhs.shape.rank != n + 2 or rhs.shape.rank != n + 2:
        raise _fail(op, f"dimension numbers with {n} spatial dimension(s) need lhs and rhs of "
                        f"rank {n + 2}", lhs.shape, rhs.shape)
    strides = _spatial_list(op, "window_strides", window_strides, n)
    lhs_dil = _spatial_list(op, "lhs_dilation", lhs_dilation, n)
    rhs_dil = _spatial_list(op, "rhs_dilation", rhs_dilation, n)
    ksizes = [rhs.shape.dimensions[d] for d in dn.kernel_spatial_dimensions]
    if isinstance(padding, str) and _bi.any(d != 1 for d in lhs_dil):
        raise _fail(op, "'SAME'/'VALID' padding with lhs_dilation is ambiguous; give (low, high) pairs")
    in_sizes = [lhs.shape.dimensions[d] for d in dn.input_spatial_dimensions]
    pads = _padding(op, padding, in_sizes, [(k - 1) * r + 1 for k, r in zip(ksizes, rhs_dil)], strides)
    window = Window.make(ksizes, strides, pads, lhs_dil, rhs_dil)
    attrs = {"window": _raw(format_window(window)), "dim_labels": _raw(format_dim_labels(dn))}
    if _index(op, "feature_group_count", feature_group_count) != 1:
        attrs["feature_group_count"] = _operator.index(feature_group_count)
    if _index(op, "batch_group_count", batch_group_count) != 1:
        attrs["batch_group_count"] = _operator.index(batch_group_count)
    shape = None
    if preferred_element_type is not None:
        s = infer_shape("convolution", [lhs.shape, rhs.shape], attrs)
        shape = s.with_element_type(_element_type(op, preferred_element_type))
    return b.add_instruction("convolution", [lhs, rhs], attrs, shape=shape)


def conv_with_general_padding(lhs: XlaOp, rhs: XlaOp, window_strides, padding, lhs_dilation=None,
                              rhs_dilation=None, feature_group_count: int = 1,
                              batch_group_count: int = 1, precision_config=None,
                              preferred_element_type=None) -> XlaOp:
    """Convolution with the default dimension numbers ``bf01_oi01->bf01`` (spec:
    *ConvWithGeneralPadding*): lhs ``[batch, z, spatial...]``, rhs
    ``[output-z, input-z, spatial...]``."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                None, feature_group_count, batch_group_count, precision_config,
                                preferred_element_type)


def conv(lhs: XlaOp, rhs: XlaOp, window_strides, padding="VALID", feature_group_count: int = 1,
         batch_group_count: int = 1, precision_config=None, preferred_element_type=None) -> XlaOp:
    """Convolution with 'SAME' or 'VALID' padding and default dimension numbers
    (spec: *Conv*)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, None, None, None,
                                feature_group_count, batch_group_count, precision_config,
                                preferred_element_type)


def _window_attr(op: str, rank: int, window_dimensions, window_strides, base_dilations,
                 window_dilations, padding, in_sizes):
    sizes = _int_list(op, "window_dimensions", window_dimensions)
    if len(sizes) != rank:
        raise _fail(op, f"window_dimensions needs {rank} entries (the operand's rank), got {sizes}")
    strides = _spatial_list(op, "window_strides", window_strides, rank)
    base = _spatial_list(op, "base_dilations", base_dilations, rank)
    wdil = _spatial_list(op, "window_dilations", window_dilations, rank)
    dilated_in = [(n - 1) * d + 1 if n else 0 for n, d in zip(in_sizes, base)]
    pads = _padding(op, padding, dilated_in, [(k - 1) * d + 1 for k, d in zip(sizes, wdil)], strides)
    return _raw(format_window(Window.make(sizes, strides, pads, base, wdil)))


@builds("reduce-window")
def reduce_window(operand, init_value, computation: XlaComputation, window_dimensions,
                  window_strides=None, base_dilations=None, window_dilations=None,
                  padding="VALID") -> XlaOp:
    """Reduce every window of ``operand`` with ``computation`` (spec: *ReduceWindow*).

    Variadic: lists of N operands and N init values, ``computation`` of type
    ``(T1..TN, T1..TN) -> (T1..TN)``, a tuple result.  ``padding``: (low, high)
    per dimension, or 'SAME' / 'VALID'; padded elements are skipped.  Strides
    and dilations default to 1.  ShapeError for a bad reducer or window.
    """
    op = "reduce_window"
    single = isinstance(operand, XlaOp)
    xs = [operand] if single else list(operand)
    inits = [init_value] if single or not isinstance(init_value, (list, _bi.tuple)) else list(init_value)
    if not xs:
        raise TypeError(f"{op}: needs at least one operand")
    if len(xs) != len(inits):
        raise TypeError(f"{op}: {len(xs)} operands but {len(inits)} init values")
    b = _builder(op, *xs)
    for x in xs:
        if not isinstance(x, XlaOp):
            raise TypeError(f"{op}: operands must be XlaOps, got {type(x).__name__}")
    inits = [v if isinstance(v, XlaOp) else _constant_like(op, v, x) for v, x in zip(inits, xs)]
    b.check_operands(op, xs + inits)
    if not xs[0].shape.is_array:
        raise _fail(op, "operands must be arrays", *[x.shape for x in xs])
    window = _window_attr(op, xs[0].shape.rank, window_dimensions, window_strides, base_dilations,
                          window_dilations, padding, xs[0].shape.dimensions)
    callee = b.import_computation(computation, "reduce_window", "computation")
    return b.add_instruction("reduce-window", xs + inits, {"window": window, "to_apply": callee})


@builds("select-and-scatter")
def select_and_scatter(operand: XlaOp, select: XlaComputation, window_dimensions, window_strides,
                       padding, source: XlaOp, init_value, scatter: XlaComputation) -> XlaOp:
    """Scatter ``source`` onto the element ``select`` picks in each window of
    ``operand`` (spec: *SelectAndScatter*); the output starts as ``init_value``
    and combines with ``scatter``.  ``padding``: (low, high) pairs or 'SAME' /
    'VALID'.  ShapeError when ``source`` is not the shape of the windows."""
    op = "select_and_scatter"
    b = _builder(op, operand, source)
    init = init_value if isinstance(init_value, XlaOp) else _constant_like(op, init_value, operand)
    b.check_operands(op, [operand, source, init])
    if not operand.shape.is_array:
        raise _fail(op, "operand must be an array", operand.shape)
    window = _window_attr(op, operand.shape.rank, window_dimensions, window_strides, None, None,
                          padding, operand.shape.dimensions)
    attrs = {"window": window, "select": b.import_computation(select, "select_and_scatter", "select"),
             "scatter": b.import_computation(scatter, "select_and_scatter", "scatter")}
    return b.add_instruction("select-and-scatter", [operand, source, init], attrs)


@builds("fft")
def fft(operand: XlaOp, fft_type: str, fft_length) -> XlaOp:
    """Fourier transform over the last ``len(fft_length)`` (1 to 3) dimensions
    (spec: *Fft*): ``fft_type`` is 'FFT', 'IFFT', 'RFFT' or 'IRFFT' (any case,
    or an enum whose name is one of them)."""
    op = "fft"
    _unary_check(op, operand)
    kind = getattr(fft_type, "name", fft_type)
    if not isinstance(kind, str):
        raise TypeError(f"{op}: fft_type must be 'FFT', 'IFFT', 'RFFT' or 'IRFFT', got {fft_type!r}")
    attrs = {"fft_type": kind.upper(), "fft_length": _bi.tuple(_int_list(op, "fft_length", fft_length))}
    return operand.builder.add_instruction("fft", [operand], attrs)


def _batch_norm(op: str, opcode: str, operands: list, epsilon, feature_index) -> XlaOp:
    b = _builder(op, *operands)
    b.check_operands(op, operands)
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)):
        raise TypeError(f"{op}: epsilon must be a number, got {epsilon!r}")
    attrs = {"epsilon": float(epsilon), "feature_index": _index(op, "feature_index", feature_index)}
    return b.add_instruction(opcode, operands, attrs)


def _flag(op: str, name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be a bool, got {value!r}")
    return bool(value)


@builds("cholesky")
def cholesky(a: XlaOp, lower: bool = True) -> XlaOp:
    """The Cholesky factor of each matrix of ``a`` (spec: *Cholesky*): the two
    minor dimensions are square f32/f64/c64/c128 matrices, the others batch
    dimensions.  ``lower``: ``l`` with ``a = l . l^H`` read from a's lower
    triangle, else ``u`` with ``a = u^H . u`` from its upper triangle; the
    other triangle of the result is zeros.  A matrix that is not positive
    definite gives NaNs (all of that matrix), as XLA does."""
    _unary_check("cholesky", a)
    return a.builder.add_instruction("cholesky", [a], {"lower": _flag("cholesky", "lower", lower)})


def _transpose_a(value) -> str:
    name = getattr(value, "name", value)
    if not isinstance(name, str) or name.upper() not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        raise TypeError(f"triangular_solve: transpose_a must be 'NO_TRANSPOSE', 'TRANSPOSE' or "
                        f"'ADJOINT' (or an enum of those names), got {value!r}")
    return name.upper()


@builds("triangular-solve")
def triangular_solve(a: XlaOp, b: XlaOp, left_side: bool, lower: bool, unit_diagonal: bool,
                     transpose_a) -> XlaOp:
    """Solve ``op(a) . x = b`` (``left_side``) or ``x . op(a) = b`` for ``x``
    (spec: *TriangularSolve*), with ``op(a)`` = ``a``, ``a^T`` or ``a^H`` as
    ``transpose_a`` = 'NO_TRANSPOSE', 'TRANSPOSE' or 'ADJOINT'.  ``a`` is
    ``[..., M, M]``; ``b`` is ``[..., M, K]`` (left side) or ``[..., K, M]``,
    with a's batch dimensions and element type (f32/f64/c64/c128).  Only a's
    lower (``lower``) or upper triangle is read, and with ``unit_diagonal``
    not its diagonal (taken as ones).  The result has b's shape."""
    op = "triangular_solve"
    builder = _builder(op, a, b)
    builder.check_operands(op, [a, b])
    attrs = {"left_side": _flag(op, "left_side", left_side), "lower": _flag(op, "lower", lower),
             "unit_diagonal": _flag(op, "unit_diagonal", unit_diagonal),
             "transpose_a": _transpose_a(transpose_a)}
    return builder.add_instruction("triangular-solve", [a, b], attrs)


@builds("batch-norm-inference")
def batch_norm_inference(operand: XlaOp, scale: XlaOp, offset: XlaOp, mean: XlaOp, variance: XlaOp,
                         epsilon: float, feature_index: int) -> XlaOp:
    """Normalise ``operand`` with the given per-feature ``mean`` and ``variance``
    (spec: *BatchNormInference*): ``(operand - mean) / sqrt(variance + epsilon)
    * scale + offset``, each of the four rank-1 arrays (one value per feature,
    the size of dimension ``feature_index``) broadcast along that dimension.
    Floating-point types only; the result has the operand's shape.  ShapeError
    for a bad ``feature_index`` or per-feature arrays of the wrong size or type;
    TypeError when ``epsilon`` is not a number."""
    return _batch_norm("batch_norm_inference", "batch-norm-inference",
                       [operand, scale, offset, mean, variance], epsilon, feature_index)


@builds("batch-norm-training")
def batch_norm_training(operand: XlaOp, scale: XlaOp, offset: XlaOp, epsilon: float,
                        feature_index: int) -> XlaOp:
    """Normalise ``operand`` with the mean and variance of each feature over the
    other dimensions (spec: *BatchNormTraining*): a tuple ``(output, batch_mean,
    batch_var)``, ``output = (operand - batch_mean) / sqrt(batch_var + epsilon)
    * scale + offset`` of the operand's shape, the moments rank-1 arrays of the
    size of dimension ``feature_index`` (``batch_var`` the biased variance).
    Floating-point types only.  ShapeError for a bad ``feature_index`` or
    ``scale``/``offset`` of the wrong size or type; TypeError when ``epsilon``
    is not a number."""
    return _batch_norm("batch_norm_training", "batch-norm-training", [operand, scale, offset],
                       epsilon, feature_index)


@builds("batch-norm-grad")
def batch_norm_grad(operand: XlaOp, scale: XlaOp, batch_mean: XlaOp, batch_var: XlaOp, grad_output: XlaOp,
                    epsilon: float, feature_index: int) -> XlaOp:
    """Gradients of batch normalisation (spec: *BatchNormGrad*): a tuple
    ``(grad_operand, grad_scale, grad_offset)`` for ``grad_output`` (the
    operand's shape) flowing back through ``BatchNormTraining`` with moments
    ``batch_mean`` and ``batch_var`` (rank-1, one value per feature of dimension
    ``feature_index``).  Floating-point types only.  ShapeError for a bad
    ``feature_index``, per-feature arrays of the wrong size or type, or a
    ``grad_output`` that is not the operand's shape; TypeError when ``epsilon``
    is not a number."""
    return _batch_norm("batch_norm_grad", "batch-norm-grad", [operand, scale, batch_mean, batch_var, grad_output],
                       epsilon, feature_index)


# ---------------------------------------------------------------------------
# dynamic dimensions (spec: GetDimensionSize, SetDimensionSize; xlac/hlo/dynamic.py)
# ---------------------------------------------------------------------------

@builds("get-dimension-size")
def get_dimension_size(operand: XlaOp, dimension: int) -> XlaOp:
    """The size of dimension ``dimension`` of ``operand`` as an s32 scalar
    (spec: *GetDimensionSize*): its size at run time when the dimension is
    dynamic, else its static size.  ShapeError for a dimension out of range."""
    op = "get_dimension_size"
    _unary_check(op, operand)
    return operand.builder.add_instruction("get-dimension-size", [operand],
                                           {"dimensions": (_index(op, "dimension", dimension),)})


@builds("set-dimension-size")
def set_dimension_size(operand: XlaOp, size, dimension: int) -> XlaOp:
    """``operand`` with dimension ``dimension`` dynamic, of size ``size`` (an
    s32 scalar XlaOp or a Python int) at run time (spec: *SetDimensionSize*):
    the bound stays the dimension's size; reductions and contractions then
    ignore the elements past ``size`` (sizes outside ``[0, bound]`` are
    clamped to it).  ShapeError for a dimension out of range or a size that
    is not an s32 scalar."""
    op = "set_dimension_size"
    _unary_check(op, operand)
    if not isinstance(size, XlaOp):
        size = constant(operand.builder, np.int32(_index(op, "size", size)))
    _builder(op, operand, size)
    return operand.builder.add_instruction("set-dimension-size", [operand, size],
                                           {"dimensions": (_index(op, "dimension", dimension),)})



def _size_op(op: str, builder: XlaBuilder, name: str, value) -> XlaOp:
    return value if isinstance(value, XlaOp) else constant(builder, np.int32(_index(op, name, value)))


@builds("dynamic-reshape")
def dynamic_reshape(operand: XlaOp, dim_sizes, new_size_bounds, dims_are_dynamic) -> XlaOp:
    """XLA's DynamicReshape: ``operand``'s valid elements, row-major, reshaped
    to ``dim_sizes`` (one s32 scalar XlaOp or Python int per result
    dimension) at run time.  The result's shape has the bounds
    ``new_size_bounds`` (as many elements as the operand's) and is dynamic
    where ``dims_are_dynamic`` says; a static dimension keeps its bound and
    ignores its size, a dynamic one takes its size clamped to ``[0, bound]``.
    Sizes whose product is not the operand's valid element count are an error
    in the evaluator; compiled code then reads only within the operand.
    ShapeError for a count of sizes other than the result's rank, a size that
    is not an s32 scalar, or bounds holding another number of elements."""
    op = "dynamic_reshape"
    _unary_check(op, operand)
    bounds = _int_list(op, "new_size_bounds", new_size_bounds)
    flags = [bool(f) for f in dims_are_dynamic]
    if len(flags) != len(bounds):
        raise _fail(op, f"dims_are_dynamic {flags} needs one entry per bound in {bounds}", operand.shape)
    sizes = [_size_op(op, operand.builder, f"dim_sizes[{i}]", v) for i, v in enumerate(dim_sizes)]
    _builder(op, operand, *sizes)
    shape = Shape(operand.shape.element_type, bounds, dynamic_dimensions=flags)
    return operand.builder.add_instruction("dynamic-reshape", [operand] + sizes, shape=shape)


@builds("real-dynamic-slice")
def real_dynamic_slice(operand: XlaOp, start_indices, limit_indices, strides, result_bounds,
                       dims_are_dynamic=None) -> XlaOp:
    """StableHLO's real_dynamic_slice: ``operand[start:limit:stride]`` in every
    dimension, with start, limit and stride known at run time (integer vector
    XlaOps of one element per dimension, or Python int lists).  The result
    has the bounds ``result_bounds`` and its dimensions are dynamic where
    ``dims_are_dynamic`` says (default: all), of size ``ceil((limit - start)
    / stride)`` clamped to the bound.  Values outside ``0 <= start <= limit
    <= size``, ``stride >= 1`` are an error in the evaluator; compiled code
    then reads only within the operand.  ShapeError for vectors of the wrong
    length or type, bounds past the operand's dimensions."""
    op = "real_dynamic_slice"
    _unary_check(op, operand)
    bounds = _int_list(op, "result_bounds", result_bounds)
    flags = [True] * len(bounds) if dims_are_dynamic is None else [bool(f) for f in dims_are_dynamic]
    if len(flags) != len(bounds):
        raise _fail(op, f"dims_are_dynamic {flags} needs one entry per bound in {bounds}", operand.shape)
    vectors = [v if isinstance(v, XlaOp) else constant(operand.builder, np.array(_int_list(op, name, v), np.int32))
               for name, v in (("start_indices", start_indices), ("limit_indices", limit_indices),
                               ("strides", strides))]
    _builder(op, operand, *vectors)
    shape = Shape(operand.shape.element_type, bounds, dynamic_dimensions=flags)
    return operand.builder.add_instruction("real-dynamic-slice", [operand] + vectors, shape=shape)


# ---------------------------------------------------------------------------
# collectives and device ids (spec: AllReduce, AllGather, ReduceScatter,
# AllToAll, CollectivePermute, CrossReplicaSum, ReplicaId, Send, Recv)
#
# Common arguments: ``replica_groups`` — None or [] (one group of every
# replica), a list of lists of ids ([[0, 2], [1, 3]]), ReplicaGroups (e.g.
# ReplicaGroups.iota(2, 2)) or its text; ``channel_id`` — an int, or None;
# with ``use_global_device_ids=True`` (needs a channel_id) the ids are global
# device ids (replica * num_partitions + partition).  Which devices meet is
# xlac.hlo.collectives.  Run them with xlac.evaluate_replicated.
# ---------------------------------------------------------------------------

def _replica_groups(op: str, replica_groups) -> ReplicaGroups:
    try:
        return ReplicaGroups.of(replica_groups)
    except DeviceGroupError as e:
        raise ValueError(f"{op}: replica_groups: {e}") from None
    except TypeError as e:
        raise TypeError(f"{op}: {e}") from None


def _collective_attrs(op: str, replica_groups, channel_id, use_global_device_ids=None,
                      constrain_layout: bool = False) -> dict:
    """The attributes in the order XLA prints them."""
    attrs = {}
    if channel_id is not None:
        attrs["channel_id"] = _index(op, "channel_id", channel_id)
        if attrs["channel_id"] < 0:
            raise ValueError(f"{op}: channel_id must be >= 0, got {channel_id}")
    attrs["replica_groups"] = _replica_groups(op, replica_groups)
    if constrain_layout:
        attrs["constrain_layout"] = True
    if use_global_device_ids:
        attrs["use_global_device_ids"] = True
    return attrs


def _operand_list(op: str, operand) -> tuple:
    """(operands, single): an XlaOp array, an XlaOp tuple (split into its
    elements, as XlaBuilder does) or a sequence of XlaOps."""
    if isinstance(operand, XlaOp):
        if operand.shape.is_tuple:
            n = len(operand.shape.tuple_shapes)
            if n == 0:
                raise _fail(op, "a tuple operand must not be empty", operand.shape)
            return [get_tuple_element(operand, i) for i in range(n)], False
        return [operand], True
    xs = list(operand)
    if not xs:
        raise TypeError(f"{op}: needs at least one operand")
    _builder(op, *xs)
    return xs, False


def _dimension_arg(op: str, name: str, value, x: XlaOp) -> int:
    d = _index(op, name, value)
    if not x.shape.is_array or not 0 <= d < x.shape.rank:
        raise _fail(op, f"{name} {d} is out of range for rank {x.shape.rank if x.shape.is_array else 0}",
                    x.shape)
    return d


def _count_arg(op: str, name: str, value) -> int:
    n = _index(op, name, value)
    if n < 1:
        raise ValueError(f"{op}: {name} must be >= 1, got {n}")
    return n


@builds("all-reduce")
def all_reduce(operand, computation: XlaComputation, replica_groups=None, channel_id=None,
               shape_with_layout=None, use_global_device_ids=None) -> XlaOp:
    """Reduce ``operand`` across devices with ``computation`` (spec: *AllReduce*).

    ``operand``: an array, a tuple XlaOp or a list of arrays (each reduced on its
    own: the result is then a tuple).  ``computation``: ``(T[], T[]) -> T[]`` for
    the element type T of every operand (any reducer, applied in group order:
    ``((v[g0] op v[g1]) op v[g2]) ...`` over the members as the replica group
    lists them).  Every device of a group gets the same result, of the
    operand's shape and type.  ShapeError for a reducer of the wrong signature,
    malformed replica groups (an id twice, ids not 0..n-1) or
    ``use_global_device_ids`` without a ``channel_id``.  ``shape_with_layout``
    is accepted for XLA's signature and ignored.
    """
    op = "all_reduce"
    xs, single = _operand_list(op, operand)
    b = _builder(op, *xs)
    attrs = _collective_attrs(op, replica_groups, channel_id, use_global_device_ids)
    attrs["to_apply"] = b.import_computation(computation, "all_reduce", "computation")
    return b.add_instruction("all-reduce", xs, attrs)


@builds("collective-broadcast")
def collective_broadcast(operand, replica_groups=None, channel_id=None) -> XlaOp:
    """XLA's CollectiveBroadcast (StableHLO ``collective_broadcast``): every
    device of a replica group gets the operand of the group's first device
    (``replica_groups`` and ``channel_id`` as for :func:`all_reduce`; with a
    channel id the groups are of partitions).  ``operand``: an array, a tuple
    XlaOp or a list of arrays (the result is then a tuple).  ShapeError for
    malformed replica groups."""
    op = "collective_broadcast"
    xs, _ = _operand_list(op, operand)
    b = _builder(op, *xs)
    return b.add_instruction("collective-broadcast", xs, _collective_attrs(op, replica_groups, channel_id))


@builds("ragged-all-to-all")
def ragged_all_to_all(operand: XlaOp, output: XlaOp, input_offsets: XlaOp, send_sizes: XlaOp,
                      output_offsets: XlaOp, recv_sizes: XlaOp, replica_groups=None, channel_id=None) -> XlaOp:
    """XLA's RaggedAllToAll (jax's ``lax.ragged_all_to_all``): with N offsets
    and a group of n devices, rows ``[input_offsets[i], +send_sizes[i])`` of
    ``operand`` go to the group's device ``i // (N / n)``, which writes them
    into its ``output`` at the offset the sender's ``output_offsets[i]``
    gives; ``recv_sizes`` are the sizes each device receives, slot by slot
    (sender-major).  Returns ``output`` with the received rows written in.
    ShapeError for operand/output that disagree past the leading dimension or
    offset vectors of different types or lengths; the evaluator raises for
    slices outside the arrays and sizes that disagree (compiled code then
    reads and writes only inside the arrays)."""
    op = "ragged_all_to_all"
    operands = [operand, output, input_offsets, send_sizes, output_offsets, recv_sizes]
    b = _builder(op, *operands)
    b.check_operands(op, operands)
    return b.add_instruction("ragged-all-to-all", operands, _collective_attrs(op, replica_groups, channel_id))


def _scalar_add(element_type: PrimitiveType) -> XlaComputation:
    sub = XlaBuilder(f"add_{element_type.value}")
    scalar = Shape(element_type, ())
    a, c = parameter(sub, 0, scalar, "x"), parameter(sub, 1, scalar, "y")
    return sub.build(or_(a, c) if element_type.is_pred else add(a, c))


@builds("all-reduce")
def cross_replica_sum(operand, replica_groups=None) -> XlaOp:
    """An all-reduce with a sum (``or`` for pred) over the replicas (spec:
    *CrossReplicaSum*); the result has the operand's shape."""
    xs, _ = _operand_list("cross_replica_sum", operand)
    types = {x.shape.element_type for x in xs if x.shape.is_array}
    if len(types) != 1:
        raise _fail("cross_replica_sum", "the operands must be arrays of one element type",
                    *[x.shape for x in xs])
    return all_reduce(operand, _scalar_add(types.pop()), replica_groups=replica_groups)


@builds("all-gather")
def all_gather(operand, all_gather_dimension: int, shard_count: int, replica_groups=None, channel_id=None,
               layout=None, use_global_device_ids=None) -> XlaOp:
    """Concatenate ``operand`` of every device of the group along
    ``all_gather_dimension``, in group order (spec: *AllGather*).

    ``shard_count`` is the group size (needed when ``replica_groups`` is empty);
    the result is the operand with that dimension ``shard_count`` times larger
    (a tuple for several operands).  ShapeError for a dimension out of range, a
    ``shard_count`` other than the size of the given groups, or malformed groups.
    ``layout`` is accepted for XLA's signature and ignored.
    """
    op = "all_gather"
    xs, single = _operand_list(op, operand)
    b = _builder(op, *xs)
    d = _dimension_arg(op, "all_gather_dimension", all_gather_dimension, xs[0])
    count = _count_arg(op, "shard_count", shard_count)
    outs = []
    for x in xs:
        if not x.shape.is_array or d >= x.shape.rank:
            raise _fail(op, f"all_gather_dimension {d} is out of range", x.shape)
        dims = list(x.shape.dimensions)
        dims[d] *= count
        outs.append(Shape(x.shape.element_type, dims))
    attrs = _collective_attrs(op, replica_groups, channel_id)
    attrs["dimensions"] = (d,)
    if use_global_device_ids:
        attrs["use_global_device_ids"] = True
    shape = outs[0] if len(outs) == 1 else Shape.tuple(outs)
    return b.add_instruction("all-gather", xs, attrs, shape=shape)


@builds("reduce-scatter")
def reduce_scatter(operand, computation: XlaComputation, scatter_dimension: int, shard_count: int,
                   replica_groups=None, channel_id=None, layout=None, use_global_device_ids=None) -> XlaOp:
    """An all-reduce whose result is split into ``shard_count`` blocks along
    ``scatter_dimension``; device i of a group gets block i (spec: *ReduceScatter*).

    The result is the operand with that dimension ``shard_count`` times smaller.
    ShapeError when the dimension is out of range or its size is not divisible
    by ``shard_count``, for a reducer of the wrong signature, or a
    ``shard_count`` other than the size of the given groups.
    """
    op = "reduce_scatter"
    xs, single = _operand_list(op, operand)
    b = _builder(op, *xs)
    d = _dimension_arg(op, "scatter_dimension", scatter_dimension, xs[0])
    count = _count_arg(op, "shard_count", shard_count)
    outs = []
    for x in xs:
        if not x.shape.is_array or d >= x.shape.rank:
            raise _fail(op, f"scatter_dimension {d} is out of range", x.shape)
        if x.shape.dimensions[d] % count:
            raise _fail(op, f"scatter dimension {d} has size {x.shape.dimensions[d]}, which is not "
                            f"divisible by shard_count {count}", x.shape)
        dims = list(x.shape.dimensions)
        dims[d] //= count
        outs.append(Shape(x.shape.element_type, dims))
    attrs = _collective_attrs(op, replica_groups, channel_id)
    attrs["dimensions"] = (d,)
    if use_global_device_ids:
        attrs["use_global_device_ids"] = True
    attrs["to_apply"] = b.import_computation(computation, "reduce_scatter", "computation")
    shape = outs[0] if len(outs) == 1 else Shape.tuple(outs)
    return b.add_instruction("reduce-scatter", xs, attrs, shape=shape)


@builds("all-to-all")
def all_to_all(operand: XlaOp, split_dimension: int, concat_dimension: int, split_count: int,
               replica_groups=None, layout=None, channel_id=None) -> XlaOp:
    """Split ``operand`` into ``split_count`` blocks along ``split_dimension``,
    send block i to device i of the group, and concatenate the blocks received
    along ``concat_dimension`` in group order (spec: *AllToAll*).

    The result has ``split_dimension`` divided and ``concat_dimension``
    multiplied by ``split_count`` (``f32[4,16]`` split along 1, concatenated
    along 0 by 4 devices: ``f32[16,4]``).  As XlaBuilder does, this is an HLO
    all-to-all along ``split_dimension`` followed, when the dimensions differ,
    by a reshape, a transpose and a reshape.  ShapeError for a dimension out of
    range or a split dimension not divisible by ``split_count``.
    """
    op = "all_to_all"
    _unary_check(op, operand)
    if not operand.shape.is_array:
        raise _fail(op, "the operand must be an array", operand.shape)
    s = operand.shape
    split = _dimension_arg(op, "split_dimension", split_dimension, operand)
    concat = _dimension_arg(op, "concat_dimension", concat_dimension, operand)
    n = _count_arg(op, "split_count", split_count)
    if s.dimensions[split] % n:
        raise _fail(op, f"split_dimension {split} has size {s.dimensions[split]}, which is not divisible "
                        f"by split_count {n}", s)
    attrs = _collective_attrs(op, replica_groups, channel_id)
    attrs["dimensions"] = (split,)
    out = operand.builder.add_instruction("all-to-all", [operand], attrs)
    if split == concat:
        return out
    # The blocks are now along `split` in group order: make them a dimension of
    # their own, move it just before `concat`, and merge it into `concat`.
    blocked, perm, final = all_to_all_regroup(s.dimensions, split, concat, n)
    return reshape(transpose(reshape(out, blocked), perm), final)


@builds("all-to-all")
def all_to_all_tuple(operands, replica_groups=None, layout=None, channel_id=None) -> XlaOp:
    """The tuple form of AllToAll: operand i (N arrays of one shape, N the group
    size) goes to device i of the group; the result is the tuple of the N arrays
    received, in group order.  ShapeError for operands of different shapes or a
    count other than the size of the given groups."""
    op = "all_to_all_tuple"
    xs = [operands] if isinstance(operands, XlaOp) else list(operands)
    if not xs:
        raise TypeError(f"{op}: needs at least one operand")
    b = _builder(op, *xs)
    return b.add_instruction("all-to-all", xs, _collective_attrs(op, replica_groups, channel_id))


def _pairs_arg(op: str, source_target_pairs) -> tuple:
    try:
        pairs = _bi.tuple((_operator.index(a), _operator.index(c)) for a, c in source_target_pairs)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: source_target_pairs must be a sequence of (source, target) int pairs, "
                        f"got {source_target_pairs!r}") from None
    return pairs


@builds("collective-permute")
def collective_permute(operand: XlaOp, source_target_pairs, channel_id=None) -> XlaOp:
    """Send ``operand`` from the source to the target of each
    ``(source, target)`` pair (spec: *CollectivePermute*); a device that is no
    pair's target gets zeros.  The ids are replica ids (partition ids with a
    ``channel_id``).  The result has the operand's shape.  ShapeError when a
    source or a target appears twice or an id is negative."""
    op = "collective_permute"
    _unary_check(op, operand)
    attrs = {}
    if channel_id is not None:
        attrs["channel_id"] = _index(op, "channel_id", channel_id)
    attrs["source_target_pairs"] = _pairs_arg(op, source_target_pairs)
    return operand.builder.add_instruction("collective-permute", [operand], attrs)


@builds("replica-id")
def replica_id(builder: XlaBuilder) -> XlaOp:
    """This device's replica number, a ``u32[]`` in ``[0, replica_count)`` (spec: *ReplicaId*)."""
    if not isinstance(builder, XlaBuilder):
        raise TypeError(f"replica_id: builder must be an XlaBuilder, got {type(builder).__name__}")
    return builder.add_instruction("replica-id")


@builds("partition-id")
def partition_id(builder: XlaBuilder) -> XlaOp:
    """This device's partition number, a ``u32[]`` in ``[0, num_partitions)`` (XLA's PartitionId)."""
    if not isinstance(builder, XlaBuilder):
        raise TypeError(f"partition_id: builder must be an XlaBuilder, got {type(builder).__name__}")
    return builder.add_instruction("partition-id")


@builds("after-all")
def after_all(builder: XlaBuilder, tokens=()) -> XlaOp:
    """A token ordered after ``tokens``, any number of them (spec: *AfterAll*);
    with none, a fresh token (XLA's CreateToken).  ShapeError when an operand is
    not a token."""
    if not isinstance(builder, XlaBuilder):
        raise TypeError(f"after_all: builder must be an XlaBuilder, got {type(builder).__name__}")
    tokens = [tokens] if isinstance(tokens, XlaOp) else list(tokens)
    builder.check_operands("after_all", tokens)
    return builder.add_instruction("after-all", tokens)


create_token = after_all


def _transfer_attrs(op: str, channel_id, source_target_pairs, is_host_transfer: bool) -> dict:
    attrs = {"channel_id": _index(op, "channel_id", channel_id)}
    if is_host_transfer:
        attrs["is_host_transfer"] = True
    if source_target_pairs is not None:
        pairs = format_pairs(_pairs_arg(op, source_target_pairs))
        attrs["frontend_attributes"] = Raw(f'{{{SEND_RECV_PAIRS_ATTRIBUTE}="{pairs}"}}')
    return attrs


@builds("send", "send-done")
def send(operand: XlaOp, channel_id: int, token: XlaOp | None = None, source_target_pairs=None,
         is_host_transfer: bool = False) -> XlaOp:
    """Send ``operand`` to the Recv of the same ``channel_id`` (spec: *Send*): a
    ``send`` (``(data, u32[], token[])``) and its ``send-done``, whose token is
    returned (XLA's SendWithToken; ``token`` defaults to a fresh one).
    ``source_target_pairs`` ((source, target) replica ids; partition ids in a
    module of one replica) go in the frontend attribute
    ``_xla_send_recv_source_target_pairs`` that says which devices connect."""
    op = "send"
    _unary_check(op, operand)
    b = operand.builder
    token = after_all(b) if token is None else token
    b.check_operands(op, [operand, token])
    attrs = _transfer_attrs(op, channel_id, source_target_pairs, is_host_transfer)
    started = b.add_instruction("send", [operand, token], attrs)
    return b.add_instruction("send-done", [started], dict(attrs))


@builds("recv", "recv-done")
def recv_with_token(builder: XlaBuilder, shape, channel_id: int, token: XlaOp | None = None,
                    source_target_pairs=None, is_host_transfer: bool = False) -> XlaOp:
    """Receive an array of ``shape`` from the Send of the same ``channel_id``
    (spec: *Recv*): a ``recv`` (``(data, u32[], token[])``) and its ``recv-done``,
    whose ``(data, token[])`` is returned (XLA's RecvWithToken).  A device that is
    no pair's target receives zeros."""
    op = "recv"
    shape = _as_shape(op, shape)
    token = after_all(builder) if token is None else token
    builder.check_operands(op, [token])
    attrs = _transfer_attrs(op, channel_id, source_target_pairs, is_host_transfer)
    context = Shape.tuple([shape, Shape(PrimitiveType.U32, ()), Shape.token()])
    started = builder.add_instruction("recv", [token], attrs, shape=context)
    return builder.add_instruction("recv-done", [started], dict(attrs))


@builds("recv", "recv-done")
def recv(builder: XlaBuilder, shape, channel_id: int, token: XlaOp | None = None, source_target_pairs=None,
         is_host_transfer: bool = False) -> XlaOp:
    """The data of :func:`recv_with_token` (XLA's Recv)."""
    done = recv_with_token(builder, shape, channel_id, token, source_target_pairs, is_host_transfer)
    return get_tuple_element(done, 0)


# ---------------------------------------------------------------------------
# random numbers (spec: RngBitGenerator, RngUniform, RngNormal; the
# algorithms and the generator: xlac.hlo.rng)
# ---------------------------------------------------------------------------

@builds("rng-bit-generator")
def rng_bit_generator(initial_state: XlaOp, shape, algorithm="rng_default") -> XlaOp:
    """Random bits of ``shape`` and the next state (spec: *RngBitGenerator*): a
    tuple XlaOp, element 0 the new state (``initial_state``'s shape), element 1
    the bits.  ``algorithm``: 'rng_three_fry' (a u64[2] state), 'rng_philox'
    (u64[2] or u64[3]) or 'rng_default' (XLA:CPU's, Philox); 'THREE_FRY',
    'PHILOX' and enums with those names (jax's ``RandomAlgorithm``) work too.
    The bits are bit for bit XLA's for the same state.  Their element type is
    the unsigned type of the width of ``shape``'s (u8, u16, u32 or u64: f32
    gives u32, as ``XlaBuilder::RngBitGenerator``); pred and complex are a
    TypeError.  XLA's argument order ``(algorithm, initial_state, shape)``
    is accepted too."""
    op = "rng_bit_generator"
    if not isinstance(initial_state, XlaOp) and isinstance(shape, XlaOp):
        initial_state, shape, algorithm = shape, algorithm, initial_state
    _unary_check(op, initial_state)
    try:
        alg = hlo_rng.algorithm(algorithm)
    except ValueError as e:
        raise ValueError(f"{op}: {e}") from None
    shape = _as_shape(op, shape)
    bits = hlo_rng.bits_type(shape.element_type) if shape.is_array else None
    if bits is None:
        raise TypeError(f"{op}: shape {shape} must be an array of an 8, 16, 32 or 64-bit element type "
                        "(not pred or complex)")
    state = initial_state.shape
    result = Shape.tuple([Shape(state.element_type, state.dimensions) if state.is_array else state,
                          Shape(bits, shape.dimensions)])
    return initial_state.builder.add_instruction("rng-bit-generator", [initial_state], {"algorithm": alg.name},
                                                 shape=result)


def _rng(op: str, distribution: str, a, b, shape) -> XlaOp:
    a, b = _coerce(op, a, b)
    shape = _as_shape(op, shape)
    return a.builder.add_instruction("rng", [a, b], {"distribution": distribution}, shape=shape)


@builds("rng")
def rng_uniform(a, b, shape) -> XlaOp:
    """Numbers of ``shape`` uniformly distributed over ``[a, b)`` (spec:
    *RngUniform*): ``a`` and ``b`` are scalars of ``shape``'s element type
    (pred, integer or floating point; a Python number takes the other's type).
    Stateful: each run of the program draws new numbers (XLA's RngExpander:
    Philox from a generator state of the program, see ``xlac.hlo.rng``).
    ``b <= a`` gives ``a`` for floats and wraps for integers (the spec leaves it
    to the implementation)."""
    return _rng("rng_uniform", "rng_uniform", a, b, shape)


@builds("rng")
def rng_normal(mu, sigma, shape) -> XlaOp:
    """Numbers of ``shape`` from the normal distribution N(``mu``, ``sigma``)
    (spec: *RngNormal*): ``mu`` and ``sigma`` are floating-point scalars of
    ``shape``'s element type.  Stateful as :func:`rng_uniform`; Box-Muller
    over Philox bits, as XLA's RngExpander."""
    return _rng("rng_normal", "rng_normal", mu, sigma, shape)


# infeed and outfeed (xlac.hlo.feeds; executables: exe.infeed / exe.outfeed)
# ---------------------------------------------------------------------------

def _config_attr(op: str, name: str, config) -> dict:
    if not isinstance(config, str):
        raise TypeError(f"{op}: config must be a str, got {type(config).__name__}")
    return {name: Raw(feeds.quote(config))} if config else {}


@builds("infeed")
def infeed(builder: XlaBuilder, shape, config: str = "", token: XlaOp | None = None) -> XlaOp:
    """Read one value of ``shape`` — an array or a tuple of arrays, with the
    layout the data arrives in — from the infeed (spec: *Infeed*).  Returns the
    ``(data, token[])`` tuple, as XLA's InfeedWithToken does
    (``get_tuple_element(x, 0)`` is the data, element 1 the token that orders
    later side effects after it); ``token`` orders this read after others (a
    fresh one by default).  ``config`` becomes ``infeed_config``.  ShapeError
    for a token or a nested tuple in ``shape``."""
    op = "infeed"
    if not isinstance(builder, XlaBuilder):
        raise TypeError(f"{op}: builder must be an XlaBuilder, got {type(builder).__name__}")
    shape = _as_shape(op, shape)
    attrs = _config_attr(op, "infeed_config", config)
    token = after_all(builder) if token is None else token
    builder.check_operands(op, [token])
    return builder.add_instruction("infeed", [token], attrs, shape=Shape.tuple([shape, Shape.token()]))


@builds("infeed")
def infeed_with_token(token: XlaOp, shape, config: str = "") -> XlaOp:
    """:func:`infeed` in XLA's argument order (InfeedWithToken(token, shape, config))."""
    if not isinstance(token, XlaOp):
        raise TypeError(f"infeed_with_token: token must be an XlaOp, got {type(token).__name__}"
                        + not_an_xla_op_hint(token))
    return infeed(token.builder, shape, config, token=token)


@builds("outfeed")
def outfeed(operand: XlaOp, token: XlaOp | None = None, shape=None, config: str = "") -> XlaOp:
    """Write ``operand`` (an array or a tuple of arrays) to the outfeed after
    ``token`` (a fresh one when None), as XLA's OutfeedWithToken; returns the
    outfeed's token.  ``shape`` (default: the operand's) is the shape with the
    layout the data is transferred in, and must be compatible with the
    operand's (``outfeed_shape``); ``config`` becomes ``outfeed_config``."""
    op = "outfeed"
    if not isinstance(operand, XlaOp):
        raise TypeError(f"{op}: operand must be an XlaOp, got {type(operand).__name__}"
                        + not_an_xla_op_hint(operand))
    b = operand.builder
    shape = operand.shape if shape is None else _as_shape(op, shape)
    attrs = {"outfeed_shape": shape, **_config_attr(op, "outfeed_config", config)}
    token = after_all(b) if token is None else token
    b.check_operands(op, [operand, token])
    return b.add_instruction("outfeed", [operand, token], attrs)


@builds("custom-call")
def custom_call(builder: XlaBuilder, call_target_name: str, operands, shape, opaque: str | bytes = "",
                has_side_effect: bool = False, operand_shapes_with_layout=None,
                api_version: str = "API_VERSION_ORIGINAL", attributes: dict | None = None) -> XlaOp:
    """A call of the target ``call_target_name`` (spec: *CustomCall*) on
    ``operands``, whose result has ``shape`` (an array, or a tuple of arrays;
    its layout is the one the target writes).  ``opaque``: bytes the target
    gets (``backend_config``; the older API versions); ``attributes``: the
    typed FFI's named attributes (``api_version="API_VERSION_TYPED_FFI"``; ints,
    floats, strings, bools, tuples of ints); ``operand_shapes_with_layout``:
    the layout the target reads each operand in (XLA's CustomCallWithLayout).
    The target must be registered (``xlac.register_custom_call``) by the time
    the computation is compiled or evaluated, unless it is one of jax's LAPACK
    targets (``lapack_*_ffi``).  ShapeError for a layout list that does not
    match the operands, or a LAPACK target given other shapes than jax's."""
    op = "custom_call"
    if not isinstance(call_target_name, str) or not call_target_name:
        raise TypeError(f"{op}: call_target_name must be a non-empty string, got {call_target_name!r}")
    if api_version not in hcc.API_VERSIONS:
        raise ValueError(f"{op}: api_version={api_version!r} is not one of {', '.join(hcc.API_VERSIONS)}")
    shape = _as_shape(op, shape)
    operands = list(operands)
    builder.check_operands(op, operands)
    attrs = {"custom_call_target": Raw(hcc.quote(call_target_name)), "api_version": api_version}
    if attributes is not None:
        if opaque:
            raise ValueError(f"{op}: give opaque or attributes, not both")
        attrs["backend_config"] = Raw(hcc.format_mlir_attributes(dict(attributes)))
    elif opaque:
        text = opaque.decode("utf-8", "surrogateescape") if isinstance(opaque, (bytes, bytearray)) else str(opaque)
        attrs["backend_config"] = Raw(hcc.quote(text))
    if operand_shapes_with_layout is not None:
        shapes = [_as_shape(op, s) for s in operand_shapes_with_layout]
        attrs["operand_layout_constraints"] = Raw("{" + ", ".join(str(s) for s in shapes) + "}")
    if has_side_effect:
        attrs["custom_call_has_side_effect"] = True
    return builder.add_instruction("custom-call", operands, attrs, shape=shape)


custom_call_with_layout = custom_call
