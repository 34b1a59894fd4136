"""Shape inference: one rule per HLO opcode (spec: *Operation Semantics*).

::

    infer_shape(opcode, operand_shapes, attrs=None, shape=None) -> Shape

``opcode`` is the HLO text spelling (``"add"``, ``"get-tuple-element"``);
``attrs`` follow the conventions of :mod:`xlac.hlo.ir` (``dimensions`` a tuple
of ints, ``slice`` a tuple of ``(start, limit, stride)``, ``to_apply`` an
HloComputation, ...).

Some results cannot be inferred from the operands: a parameter's, constant's or
iota's shape, the sizes a ``broadcast`` or ``reshape`` produces, the element
type of a ``convert`` / ``bitcast-convert``.  The opcodes in
:data:`RESULT_SHAPE_GIVEN` take that result as the ``shape`` argument (the
builder passes the shape it wants, the verifier the instruction's own shape);
the rule checks it against the operands and returns it.  ``convert`` and
``bitcast-convert`` also accept ``attrs["new_element_type"]`` instead.  ``dot``
takes an optional ``shape`` whose element type is the *preferred element
type* (an f32 result of bf16 operands, as JAX emits).

HLO has no implicit broadcasting: the operands of an elementwise op have
identical dimensions and element types (scalar ``pred`` of ``select`` and
scalar bounds of ``clamp`` are the spec's restricted exceptions).  Making shapes
agree is the builder's job (:mod:`xlac.frontend.ops`).

Every violation raises :class:`xlac.ShapeError` whose message starts with the
opcode, states the rule and lists the operand shapes.  An opcode without a rule
raises :class:`xlac.UnsupportedError`; :func:`has_rule` tells them apart.
Inferred results have default layouts (the given shape of a leaf op is returned
as it is).

Dynamic dimensions (``f32[<=10]``): the rules work on the bounds; which
dimensions of the result are dynamic follows from the operands' by the size
rules of :mod:`xlac.hlo.dynamic` (XLA's: a dimension is dynamic when the
operand dimension it comes from is).  An op that does not take dynamic
operands raises ``UnsupportedError`` naming the op and the dimension.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..errors import ShapeError, UnsupportedError
from . import collectives, custom_call, dynamic, rng
from .opcodes import COMPARISON_DIRECTIONS, COMPARISON_TYPES
from .window import WindowError, conv_dimension_numbers_of, window_of
from ..shape import BF16, PRED, C64, C128, F32, F64, S32, U32, U64, PrimitiveType, Shape, parse_shape

__all__ = ["infer_shape", "has_rule", "RULES", "RESULT_SHAPE_GIVEN", "ShapeError", "ragged_dot_dimensions"]

# opcode -> rule(ctx) -> Shape.  Filled by the @_rule decorators below.
RULES: dict[str, Callable[["_Ctx"], Shape]] = {}

#: Opcodes whose result needs the ``shape`` argument (not inferable from operands).
RESULT_SHAPE_GIVEN = frozenset({"parameter", "constant", "iota", "broadcast", "reshape",
                                "convert", "bitcast-convert", "stochastic-convert", "recv", "rng", "rng-bit-generator", "infeed",
                                "custom-call", "dynamic-reshape", "real-dynamic-slice"})


def has_rule(opcode: str) -> bool:
    """True when :func:`infer_shape` knows ``opcode``."""
    return opcode in RULES


def infer_shape(opcode: str, operand_shapes: Sequence[Shape], attrs: dict | None = None,
                shape: Shape | None = None) -> Shape:
    """The result shape of ``opcode`` applied to ``operand_shapes``.

    ``shape`` is the wanted result for the opcodes of :data:`RESULT_SHAPE_GIVEN`
    (validated, then returned); other opcodes ignore it except ``dot`` (preferred
    element type).  Raises ShapeError for an ill-shaped op, UnsupportedError for
    an opcode without a rule.
    """
    rule = RULES.get(opcode)
    if rule is None:
        raise UnsupportedError(opcode, "no shape inference rule")
    ctx = _Ctx(opcode, list(operand_shapes), dict(attrs or {}), shape)
    result = rule(ctx)
    if dynamic.involved(opcode, ctx.shapes, shape if opcode in RESULT_SHAPE_GIVEN else None, ctx.attrs):
        result = _dynamic_result(ctx, result)
    return result


def _dynamic_result(ctx: _Ctx, result: Shape) -> Shape:
    """``result`` with the dynamic dimensions the size rules give it (a given
    result shape's own dynamic dimensions kept: a dynamic parameter, a
    broadcast to a dynamic shape)."""
    sizes = [dynamic.flag_sizes(s) for s in ctx.shapes]
    tree, _ = dynamic.propagate(ctx.opcode, ctx.attrs, ctx.shapes, sizes, result, dynamic.FLAGS)
    return dynamic.with_flags(result, tree, keep=ctx.opcode in RESULT_SHAPE_GIVEN)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

class _Ctx:
    """What a rule sees: the op, its operand shapes, attrs and the given shape."""

    __slots__ = ("opcode", "shapes", "attrs", "shape")

    def __init__(self, opcode, shapes, attrs, shape):
        self.opcode, self.shapes, self.attrs, self.shape = opcode, shapes, attrs, shape

    def fail(self, rule: str) -> ShapeError:
        operands = ", ".join(str(s) for s in self.shapes) or "none"
        return ShapeError(f"{self.opcode}: {rule} (operand shapes: {operands})")

    def arity(self, n: int) -> None:
        if len(self.shapes) != n:
            raise self.fail(f"takes {n} operand(s), got {len(self.shapes)}")

    def array(self, i: int, what: str | None = None) -> Shape:
        s = self.shapes[i]
        if not isinstance(s, Shape) or not s.is_array:
            raise self.fail(f"{what or f'operand {i}'} must be an array, got {s}")
        return s

    def attr(self, name: str, default=None, required: bool = True):
        if name in self.attrs:
            return self.attrs[name]
        if required:
            raise self.fail(f"missing attribute {name!r}")
        return default

    def int_attr(self, name: str) -> int:
        return _as_int(self, name, self.attr(name))

    def ints_attr(self, name: str, required: bool = True) -> tuple:
        v = self.attr(name, (), required)
        return _as_ints(self, name, v)

    def triples_attr(self, name: str, what: str, rank: int) -> list:
        """Attribute ``name``: one triple of ints (``what``) per dimension of ``rank``."""
        spec = self.attr(name)
        try:
            triples = [tuple(int(v) for v in t) for t in spec]
        except (TypeError, ValueError):
            raise self.fail(f"{name}={spec!r} must be a list of {what}") from None
        if len(triples) != rank or any(len(t) != 3 for t in triples):
            raise self.fail(f"{name} needs one {what} per dimension ({rank}), got {triples}")
        return triples

    def given_shape(self) -> Shape:
        if self.shape is None:
            raise self.fail("the result shape cannot be inferred; pass it as `shape`")
        if not isinstance(self.shape, Shape):
            raise self.fail(f"result shape must be a Shape, got {self.shape!r}")
        return self.shape


def _as_int(ctx, name, v) -> int:
    # Attributes the parser left as Raw text ("5") still read as numbers.
    try:
        if isinstance(v, bool):
            raise TypeError
        return int(str(v)) if not isinstance(v, int) else v
    except (TypeError, ValueError):
        raise ctx.fail(f"attribute {name}={v!r} must be an integer") from None


def _as_ints(ctx, name, v) -> tuple:
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,)
    if hasattr(v, "text"):  # Raw "{1,2}"
        body = str(v).strip().strip("{}")
        v = [x for x in body.split(",") if x.strip()]
    try:
        return tuple(_as_int(ctx, name, x) for x in v)
    except TypeError:
        raise ctx.fail(f"attribute {name}={v!r} must be a list of integers") from None


def _element_type(ctx, v) -> PrimitiveType:
    if isinstance(v, PrimitiveType):
        return v
    try:
        return PrimitiveType.from_name(str(v)) if isinstance(v, str) else PrimitiveType.from_dtype(v)
    except (TypeError, ValueError):
        raise ctx.fail(f"{v!r} is not an element type") from None


def _rule(*opcodes: str):
    def deco(fn):
        for op in opcodes:
            RULES[op] = fn
        return fn
    return deco


def _check_dims_unique_in_range(ctx, name, dims, rank) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise ctx.fail(f"{name} {list(dims)}: dimension {d} is out of range for rank {rank}")
    if len(set(dims)) != len(dims):
        raise ctx.fail(f"{name} {list(dims)} has a repeated dimension")


# ---------------------------------------------------------------------------
# elementwise unary
# ---------------------------------------------------------------------------

def _is_float(t): return t.is_float
def _is_float_or_complex(t): return t.is_float or t.is_complex
def _is_integral(t): return t.is_integral
def _is_pred_or_integral(t): return t.is_pred or t.is_integral
def _is_signed(t): return t.is_signed_int or t.is_float or t.is_complex
def _is_number(t): return t.is_integral or t.is_float or t.is_complex


# opcode -> (element-type predicate, what the predicate means, result type fn)
# The result keeps the operand's type unless a function says otherwise.
_same = None
_UNARY_RULES = {
    "floor": (_is_float, "floating-point", _same),
    "ceil": (_is_float, "floating-point", _same),
    "round-nearest-afz": (_is_float, "floating-point", _same),
    "round-nearest-even": (_is_float, "floating-point", _same),
    "erf": (_is_float, "floating-point", _same),
    "is-finite": (_is_float, "floating-point", lambda t: PRED),
    "cbrt": (_is_float_or_complex, "floating-point or complex", _same),
    "cosine": (_is_float_or_complex, "floating-point or complex", _same),
    "sine": (_is_float_or_complex, "floating-point or complex", _same),
    "tan": (_is_float_or_complex, "floating-point or complex", _same),
    "tanh": (_is_float_or_complex, "floating-point or complex", _same),
    **{op: (_is_float_or_complex, "floating-point or complex", _same)
       for op in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh")},
    "exponential": (_is_float_or_complex, "floating-point or complex", _same),
    "exponential-minus-one": (_is_float_or_complex, "floating-point or complex", _same),
    "log": (_is_float_or_complex, "floating-point or complex", _same),
    "log-plus-one": (_is_float_or_complex, "floating-point or complex", _same),
    "logistic": (_is_float_or_complex, "floating-point or complex", _same),
    "sqrt": (_is_float_or_complex, "floating-point or complex", _same),
    "rsqrt": (_is_float_or_complex, "floating-point or complex", _same),
    # real/imag/abs of a complex number is a real number of the component type.
    "real": (_is_float_or_complex, "floating-point or complex", lambda t: t.component_type),
    "imag": (_is_float_or_complex, "floating-point or complex", lambda t: t.component_type),
    "abs": (_is_signed, "signed integer, floating-point or complex", lambda t: t.component_type),
    "negate": (_is_number, "integer, floating-point or complex", _same),
    # sign of an unsigned value is 0 or 1: well defined, so allowed.
    "sign": (_is_number, "integer, floating-point or complex", _same),
    "count-leading-zeros": (_is_integral, "integer", _same),
    "popcnt": (_is_integral, "integer", _same),
    "not": (_is_pred_or_integral, "pred or integer", _same),
}


@_rule(*_UNARY_RULES)
def _unary(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    s = ctx.array(0)
    ok, what, result = _UNARY_RULES[ctx.opcode]
    if not ok(s.element_type):
        raise ctx.fail(f"needs a {what} element type, got {s.element_type.value}")
    et = s.element_type if result is None else result(s.element_type)
    return Shape(et, s.dimensions)


@_rule("copy")
def _copy(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    return _default_layout(ctx.shapes[0])


# ---------------------------------------------------------------------------
# elementwise binary and compare
# ---------------------------------------------------------------------------

def _not_pred(t): return not t.is_pred


_BINARY_TYPES = {
    "add": (lambda t: True, "any"),
    "multiply": (lambda t: True, "any"),
    "maximum": (lambda t: True, "any"),
    "minimum": (lambda t: True, "any"),
    "subtract": (_is_number, "an integer, floating-point or complex"),
    "divide": (_is_number, "an integer, floating-point or complex"),
    "power": (_is_number, "an integer, floating-point or complex"),
    "remainder": (lambda t: t.is_integral or t.is_float, "an integer or floating-point"),
    "atan2": (_is_float_or_complex, "a floating-point or complex"),
    "and": (_is_pred_or_integral, "a pred or integer"),
    "or": (_is_pred_or_integral, "a pred or integer"),
    "xor": (_is_pred_or_integral, "a pred or integer"),
    "shift-left": (_is_integral, "an integer"),
    "mulhi": (_is_integral, "an integer"),
    "shift-right-arithmetic": (_is_integral, "an integer"),
    "shift-right-logical": (_is_integral, "an integer"),
    "complex": (lambda t: t in (F32, F64), "an f32 or f64"),
}


def _same_elementwise(ctx: _Ctx) -> Shape:
    """Both operands arrays with identical dimensions and element types."""
    ctx.arity(2)
    lhs, rhs = ctx.array(0, "lhs"), ctx.array(1, "rhs")
    if lhs.element_type != rhs.element_type:
        raise ctx.fail(f"operands must have the same element type, got "
                       f"{lhs.element_type.value} and {rhs.element_type.value}")
    if lhs.dimensions != rhs.dimensions:
        raise ctx.fail("operands must have identical dimensions (HLO has no implicit "
                       f"broadcasting), got {list(lhs.dimensions)} and {list(rhs.dimensions)}")
    return lhs


@_rule(*_BINARY_TYPES)
def _binary(ctx: _Ctx) -> Shape:
    lhs = _same_elementwise(ctx)
    ok, what = _BINARY_TYPES[ctx.opcode]
    if not ok(lhs.element_type):
        raise ctx.fail(f"needs {what} element type, got {lhs.element_type.value}")
    et = lhs.element_type
    if ctx.opcode == "complex":
        et = C64 if et is F32 else C128
    return Shape(et, lhs.dimensions)


# Which comparison type suits which element type (XLA's Comparison::Type).
def _compare_type_ok(ctype: str, t: PrimitiveType) -> bool:
    if ctype in ("FLOAT", "TOTALORDER"):
        return t.is_float or t.is_complex
    if ctype == "SIGNED":
        return t.is_signed_int or t.is_pred
    return t.is_unsigned_int or t.is_pred  # UNSIGNED


@_rule("compare")
def _compare(ctx: _Ctx) -> Shape:
    lhs = _same_elementwise(ctx)
    direction = str(ctx.attr("direction"))
    if direction not in COMPARISON_DIRECTIONS:
        raise ctx.fail(f"direction={direction} is not one of {', '.join(COMPARISON_DIRECTIONS)}")
    ctype = ctx.attr("type", None, required=False)
    et = lhs.element_type
    if ctype is not None:
        ctype = str(ctype)
        if ctype not in COMPARISON_TYPES:
            raise ctx.fail(f"type={ctype} is not one of {', '.join(COMPARISON_TYPES)}")
        if not _compare_type_ok(ctype, et):
            raise ctx.fail(f"type={ctype} does not suit element type {et.value}")
    if et.is_complex and direction not in ("EQ", "NE"):
        raise ctx.fail(f"complex numbers are unordered: only EQ and NE compare them, not {direction}")
    return Shape(PRED, lhs.dimensions)


# ---------------------------------------------------------------------------
# select, clamp
# ---------------------------------------------------------------------------

@_rule("select")
def _select(ctx: _Ctx) -> Shape:
    ctx.arity(3)
    pred, on_true, on_false = ctx.shapes
    if not on_true.compatible(on_false):
        raise ctx.fail(f"on_true and on_false must have the same shape, got {on_true} and {on_false}")
    if not pred.is_array or pred.element_type is not PRED:
        raise ctx.fail(f"pred must be an array of pred, got {pred}")
    if on_true.is_tuple:
        if not pred.is_scalar:
            raise ctx.fail("selecting between tuples needs a scalar pred")
    elif not pred.is_scalar and pred.dimensions != on_true.dimensions:
        raise ctx.fail("pred must be a scalar or have the dimensions of on_true/on_false, got "
                       f"{list(pred.dimensions)} and {list(on_true.dimensions)}")
    if not on_true.is_tuple and not on_true.is_array:
        raise ctx.fail(f"on_true must be an array or tuple, got {on_true}")
    return _default_layout(on_true)


@_rule("clamp")
def _clamp(ctx: _Ctx) -> Shape:
    ctx.arity(3)
    lo, x, hi = ctx.array(0, "min"), ctx.array(1), ctx.array(2, "max")
    for name, b in (("min", lo), ("max", hi)):
        if b.element_type != x.element_type:
            raise ctx.fail(f"{name} must have the operand's element type "
                           f"{x.element_type.value}, got {b.element_type.value}")
        if not b.is_scalar and b.dimensions != x.dimensions:
            raise ctx.fail(f"{name} must be a scalar or have the operand's dimensions "
                           f"{list(x.dimensions)}, got {list(b.dimensions)}")
    if x.element_type.is_complex:           # (pred is ordered, false < true: jax clamps bools)
        raise ctx.fail(f"clamp needs an ordered element type, got {x.element_type.value}")
    return Shape(x.element_type, x.dimensions)


# ---------------------------------------------------------------------------
# conversions
# ---------------------------------------------------------------------------

def _target_type(ctx: _Ctx) -> PrimitiveType:
    if "new_element_type" in ctx.attrs:
        t = _element_type(ctx, ctx.attrs["new_element_type"])
        if ctx.shape is not None and ctx.shape.is_array and ctx.shape.element_type != t:
            raise ctx.fail(f"new_element_type {t.value} differs from the result shape {ctx.shape}")
        return t
    given = ctx.given_shape()
    if not given.is_array:
        raise ctx.fail(f"result must be an array, got {given}")
    return given.element_type


@_rule("convert")
def _convert(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    s = ctx.array(0)
    t = _target_type(ctx)
    if not t.is_array:
        raise ctx.fail(f"cannot convert to {t.value}")
    if ctx.shape is not None and ctx.shape.is_array and ctx.shape.dimensions != s.dimensions:
        raise ctx.fail(f"result {ctx.shape} must keep the operand's dimensions {list(s.dimensions)}")
    return Shape(t, s.dimensions)


@_rule("bitcast-convert")
def _bitcast_convert(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    s = ctx.array(0)
    t = _target_type(ctx)
    old = s.element_type
    if not t.is_array:
        raise ctx.fail(f"cannot bitcast to {t.value}")
    if old.is_complex != t.is_complex:
        raise ctx.fail(f"cannot bitcast between complex and real types ({old.value} -> {t.value})")
    if old.is_pred != t.is_pred:
        # pred is one bit in HLO but a byte in memory: no defined bit pattern.
        raise ctx.fail(f"cannot bitcast to or from pred ({old.value} -> {t.value})")
    a, b = old.bit_width, t.bit_width
    if max(a, b) % min(a, b):
        raise ctx.fail(f"bit widths {a} ({old.value}) and {b} ({t.value}) do not divide each other")
    dims = list(s.dimensions)
    if a > b:  # each element splits into a new minor-most dimension
        dims.append(a // b)
    elif a < b:  # the minor-most dimension must hold exactly one new element's worth
        if not dims or dims[-1] != b // a:
            raise ctx.fail(f"bitcast {old.value} -> {t.value} needs a last dimension of size "
                           f"{b // a}, the operand has dimensions {list(s.dimensions)}")
        dims.pop()
    result = Shape(t, dims)
    if ctx.shape is not None and not ctx.shape.compatible(result):
        raise ctx.fail(f"result {ctx.shape} should be {result}")
    return result


@_rule("reduce-precision")
def _reduce_precision(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    s = ctx.array(0)
    if not s.element_type.is_float:
        raise ctx.fail(f"needs a floating-point element type, got {s.element_type.value}")
    e, m = ctx.int_attr("exponent_bits"), ctx.int_attr("mantissa_bits")
    if e < 1:
        raise ctx.fail(f"exponent_bits={e}: at least one exponent bit is needed")
    if m < 0:
        raise ctx.fail(f"mantissa_bits={m} must not be negative")
    return Shape(s.element_type, s.dimensions)


# ---------------------------------------------------------------------------
# leaves
# ---------------------------------------------------------------------------

@_rule("parameter")
def _parameter(ctx: _Ctx) -> Shape:
    ctx.arity(0)
    n = ctx.int_attr("parameter_number")
    if n < 0:
        raise ctx.fail(f"parameter_number={n} must not be negative")
    return ctx.given_shape()


@_rule("constant")
def _constant(ctx: _Ctx) -> Shape:
    ctx.arity(0)
    given = ctx.given_shape()
    lit = ctx.attrs.get("literal")
    if lit is not None and given.is_array and hasattr(lit, "shape"):
        if tuple(lit.shape) != given.dimensions:
            raise ctx.fail(f"literal of dimensions {list(lit.shape)} does not fit {given}")
    return given


@_rule("iota")
def _iota(ctx: _Ctx) -> Shape:
    ctx.arity(0)
    given = ctx.given_shape()
    if not given.is_array or given.element_type.is_pred:
        raise ctx.fail(f"iota needs a numeric array shape, got {given}")
    d = ctx.int_attr("iota_dimension")
    if not 0 <= d < given.rank:
        raise ctx.fail(f"iota_dimension={d} is out of range for {given} (rank {given.rank})")
    return given


# ---------------------------------------------------------------------------
# data movement
# ---------------------------------------------------------------------------

def _operand_and_given_result(ctx: _Ctx) -> tuple[Shape, Shape]:
    """The one operand and the given result of a data-movement op whose result
    shape is not inferable (broadcast, reshape): same element type required."""
    ctx.arity(1)
    s = ctx.array(0)
    out = ctx.given_shape()
    if not out.is_array or out.element_type != s.element_type:
        raise ctx.fail(f"result {out} must be an array of the operand's element type {s.element_type.value}")
    return s, out


@_rule("broadcast")
def _broadcast(ctx: _Ctx) -> Shape:
    s, out = _operand_and_given_result(ctx)
    dims = ctx.ints_attr("dimensions")
    if len(dims) != s.rank:
        raise ctx.fail(f"dimensions={list(dims)} must map each of the operand's {s.rank} dimensions")
    _check_dims_unique_in_range(ctx, "dimensions", dims, out.rank)
    for i, d in enumerate(dims):
        if s.dimensions[i] != out.dimensions[d]:
            raise ctx.fail(f"operand dimension {i} (size {s.dimensions[i]}) maps to result dimension "
                           f"{d} of size {out.dimensions[d]} in {out}; HLO broadcast needs equal sizes")
    return out


@_rule("reshape")
def _reshape(ctx: _Ctx) -> Shape:
    s, out = _operand_and_given_result(ctx)
    if out.element_count() != s.element_count():
        raise ctx.fail(f"cannot reshape {s.element_count()} elements into {out} "
                       f"({out.element_count()} elements)")
    return out


@_rule("bitcast")
def _bitcast(ctx: _Ctx) -> Shape:
    """XLA's bitcast reads its operand's buffer as its own shape: any
    dimensions and layout, an element type of the same width, the same bytes."""
    ctx.arity(1)
    s = ctx.array(0)
    out = ctx.given_shape()
    if not out.is_array or out.element_type.byte_size != s.element_type.byte_size:
        raise ctx.fail(f"result {out} must be an array of elements as wide as the operand's ({s})")
    if out.byte_size() != s.byte_size():
        raise ctx.fail(f"result {out} is {out.byte_size()} bytes, the operand {s} {s.byte_size()}: "
                       f"a bitcast reads the same buffer")
    return out


def _given_dynamic_result(ctx: _Ctx, s: Shape) -> Shape:
    """The given result of dynamic-reshape / real-dynamic-slice: an array of
    ``s``'s element type (its dynamic dimensions are bounded by the numbers)."""
    out = ctx.given_shape()
    if not out.is_array or out.element_type != s.element_type:
        raise ctx.fail(f"result {out} must be an array of the operand's element type {s.element_type.value}")
    return out


@_rule("dynamic-reshape")
def _dynamic_reshape(ctx: _Ctx) -> Shape:
    """XLA's ``InferDynamicReshapeShape``: the operand, then one ``s32[]`` size
    per result dimension; the result's bounds hold as many elements as the
    operand's (the run-time sizes: xlac.hlo.dynamic)."""
    if not ctx.shapes:
        raise ctx.fail("takes the operand and one s32[] size per result dimension, got no operands")
    s = ctx.array(0)
    out = _given_dynamic_result(ctx, s)
    sizes = ctx.shapes[1:]
    if len(sizes) != out.rank:
        raise ctx.fail(f"needs one s32[] size per dimension of the result {out} ({out.rank}), got {len(sizes)}")
    for i, z in enumerate(sizes):
        if not (isinstance(z, Shape) and z.is_array and z.element_type is S32 and z.rank == 0):
            raise ctx.fail(f"size operand {i + 1} (dimension {i}) must be an s32 scalar, got {z}")
    if out.element_count() != s.element_count():
        raise ctx.fail(f"the bounds of the result {out} ({out.element_count()} elements) must hold the "
                       f"operand's {s.element_count()} elements")
    return out


@_rule("real-dynamic-slice")
def _real_dynamic_slice(ctx: _Ctx) -> Shape:
    """StableHLO's ``real_dynamic_slice`` (C1-C5): start, limit and stride
    vectors of one integer type, one element per operand dimension; the
    result's dimensions are bounds, at most the operand's."""
    ctx.arity(4)
    s = ctx.array(0)
    out = _given_dynamic_result(ctx, s)
    if out.rank != s.rank:
        raise ctx.fail(f"result {out} must have the operand's rank {s.rank}")
    index = ctx.shapes[1]
    for i, name in ((1, "start_indices"), (2, "limit_indices"), (3, "strides")):
        v = ctx.array(i, name)
        if v.rank != 1 or not v.element_type.is_integral or v.dimensions[0] != s.rank:
            raise ctx.fail(f"{name} must be an integer vector of {s.rank} elements (one per operand "
                           f"dimension), got {v}")
        if v.element_type != index.element_type:
            raise ctx.fail(f"start_indices, limit_indices and strides must have one element type, got "
                           f"{index.element_type.value} and {v.element_type.value}")
        if v.is_dynamic:
            raise ctx.fail(f"{name} must be static, got {v}")
    for d, (n, bound) in enumerate(zip(out.dimensions, s.dimensions)):
        if n > bound:
            raise ctx.fail(f"dimension {d} of the result {out} is larger than the operand's ({bound})")
    return out


@_rule("transpose")
def _transpose(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    s = ctx.array(0)
    perm = ctx.ints_attr("dimensions")
    if sorted(perm) != list(range(s.rank)):
        raise ctx.fail(f"dimensions={list(perm)} is not a permutation of 0..{s.rank - 1}")
    return Shape(s.element_type, [s.dimensions[p] for p in perm])


@_rule("reverse")
def _reverse(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    s = ctx.array(0)
    _check_dims_unique_in_range(ctx, "dimensions", ctx.ints_attr("dimensions"), s.rank)
    return Shape(s.element_type, s.dimensions)


@_rule("slice")
def _slice(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    s = ctx.array(0)
    triples = ctx.triples_attr("slice", "(start, limit, stride)", s.rank)
    dims = []
    for d, ((start, limit, stride), size) in enumerate(zip(triples, s.dimensions)):
        if stride < 1:
            raise ctx.fail(f"dimension {d}: stride {stride} must be positive")
        if not 0 <= start <= limit <= size:
            raise ctx.fail(f"dimension {d}: need 0 <= start ({start}) <= limit ({limit}) <= size ({size})")
        dims.append(-(-(limit - start) // stride))
    return Shape(s.element_type, dims)


@_rule("concatenate")
def _concatenate(ctx: _Ctx) -> Shape:
    if not ctx.shapes:
        raise ctx.fail("needs at least one operand")
    dims = ctx.ints_attr("dimensions")
    if len(dims) != 1:
        raise ctx.fail(f"dimensions={list(dims)} must name exactly one dimension")
    (dim,) = dims
    first = ctx.array(0)
    if not 0 <= dim < first.rank:
        raise ctx.fail(f"dimension {dim} is out of range for rank {first.rank}"
                       + (" (scalars cannot be concatenated)" if first.rank == 0 else ""))
    size = 0
    for i, s in enumerate(ctx.shapes):
        s = ctx.array(i)
        if s.element_type != first.element_type:
            raise ctx.fail(f"operand {i} has element type {s.element_type.value}, "
                           f"operand 0 has {first.element_type.value}")
        if s.rank != first.rank:
            raise ctx.fail(f"operand {i} has rank {s.rank}, operand 0 has rank {first.rank}")
        for d in range(first.rank):
            if d != dim and s.dimensions[d] != first.dimensions[d]:
                raise ctx.fail(f"operand {i} differs from operand 0 in dimension {d} "
                               f"({s.dimensions[d]} vs {first.dimensions[d]}), not only in "
                               f"the concatenated dimension {dim}")
        size += s.dimensions[dim]
    out = list(first.dimensions)
    out[dim] = size
    return Shape(first.element_type, out)


@_rule("pad")
def _pad(ctx: _Ctx) -> Shape:
    ctx.arity(2)
    s, pv = ctx.array(0), ctx.array(1, "padding_value")
    if not pv.is_scalar:
        raise ctx.fail(f"padding_value must be a scalar, got {pv}")
    if pv.element_type != s.element_type:
        raise ctx.fail(f"padding_value type {pv.element_type.value} differs from the operand's "
                       f"{s.element_type.value}")
    cfg = ctx.triples_attr("padding", "(low, high, interior)", s.rank)
    dims = []
    for d, ((lo, hi, interior), size) in enumerate(zip(cfg, s.dimensions)):
        if interior < 0:
            raise ctx.fail(f"dimension {d}: interior padding {interior} must not be negative")
        n = lo + hi + size + max(size - 1, 0) * interior
        if n < 0:
            raise ctx.fail(f"dimension {d}: padding ({lo}, {hi}, {interior}) of size {size} "
                           f"gives a negative size {n}")
        dims.append(n)
    return Shape(s.element_type, dims)


# ---------------------------------------------------------------------------
# tuples and calls
# ---------------------------------------------------------------------------

def _default_layout(s: Shape) -> Shape:
    if s.is_tuple:
        return Shape.tuple([_default_layout(t) for t in s.tuple_shapes])
    if s.is_array:
        return Shape(s.element_type, s.dimensions)
    return s


@_rule("tuple")
def _tuple(ctx: _Ctx) -> Shape:
    return Shape.tuple([_default_layout(s) for s in ctx.shapes])


@_rule("get-tuple-element")
def _get_tuple_element(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    t = ctx.shapes[0]
    if not t.is_tuple:
        raise ctx.fail(f"operand must be a tuple, got {t}")
    i = ctx.int_attr("index")
    if not 0 <= i < len(t.tuple_shapes):
        raise ctx.fail(f"index {i} is out of range for a tuple of {len(t.tuple_shapes)} elements")
    return _default_layout(t.tuple_shapes[i])


def _callee(ctx: _Ctx, name: str = "to_apply"):
    comp = ctx.attr(name)
    if not hasattr(comp, "parameter_shapes") or getattr(comp, "root", None) is None:
        raise ctx.fail(f"{name} must be a computation with a root, got {comp!r}")
    return comp


@_rule("call")
def _call(ctx: _Ctx) -> Shape:
    """Spec: Call, and CompositeCall (``is_composite=true``): the result of the
    called computation (the composite's decomposition) on the operands."""
    if ctx.attr("is_composite", False, required=False) is True:
        _check_composite(ctx)
    return _applied(ctx, "to_apply")


def _check_composite(ctx: _Ctx) -> None:
    """A composite call's frontend attributes, as XLA's verifier checks them:
    ``composite.name`` non-empty; ``composite.attributes``, when given, ``{}``
    or more; ``composite.version``, when given, a non-negative integer."""
    attrs = collectives.parse_frontend_attributes(ctx.attr("frontend_attributes", None, required=False))
    rule = "a composite call must have frontend attributes with"
    if not attrs.get("composite.name"):
        raise ctx.fail(f"{rule} key composite.name whose value is non-empty, got "
                       f"frontend_attributes={ctx.attr('frontend_attributes', '{}', required=False)}")
    if attrs.get("composite.attributes", "{}") == "":
        raise ctx.fail(f"{rule} key composite.attributes whose value is default: {{}} or non-empty")
    version = attrs.get("composite.version", "0")
    if not (version.isdigit() and version.isascii()):
        raise ctx.fail(f"{rule} a composite.version whose value is a non-negative integer but got: {version}")


@_rule("fusion")
def _fusion(ctx: _Ctx) -> Shape:
    # A fusion computes exactly its fused computation.
    return _applied(ctx, "calls")


def _applied(ctx: _Ctx, name: str) -> Shape:
    """The result of applying computation attribute ``name`` to the operands."""
    comp = _callee(ctx, name)
    params = comp.parameter_shapes()
    if len(params) != len(ctx.shapes):
        raise ctx.fail(f"computation {comp.name} takes {len(params)} parameter(s), "
                       f"got {len(ctx.shapes)} operand(s)")
    for i, (p, s) in enumerate(zip(params, ctx.shapes)):
        if not p.compatible(s):
            raise ctx.fail(f"operand {i} is {s}, computation {comp.name} expects {p}")
    return _default_layout(comp.root.shape)


# ---------------------------------------------------------------------------
# reduce, dot
# ---------------------------------------------------------------------------

def _inputs_and_inits(ctx: _Ctx) -> tuple[list, list]:
    """The N inputs and N scalar init values of a (windowed) reduction, checked."""
    if len(ctx.shapes) < 2 or len(ctx.shapes) % 2:
        raise ctx.fail(f"takes N inputs and N init values (an even number >= 2), "
                       f"got {len(ctx.shapes)} operands")
    n = len(ctx.shapes) // 2
    inputs = [ctx.array(i, f"input {i}") for i in range(n)]
    inits = [ctx.array(n + i, f"init value {i}") for i in range(n)]
    for i, (x, init) in enumerate(zip(inputs, inits)):
        if x.dimensions != inputs[0].dimensions:
            raise ctx.fail(f"all inputs must have the same dimensions: input {i} is {x}, input 0 is {inputs[0]}")
        if not init.is_scalar:
            raise ctx.fail(f"init value {i} must be a scalar, got {init}")
        if init.element_type != x.element_type:
            raise ctx.fail(f"init value {i} ({init}) must have input {i}'s element type {x.element_type.value}")
    return inputs, inits


@_rule("reduce")
def _reduce(ctx: _Ctx) -> Shape:
    inputs, _inits = _inputs_and_inits(ctx)
    n = len(inputs)
    dims = ctx.ints_attr("dimensions")
    rank = inputs[0].rank
    _check_dims_unique_in_range(ctx, "dimensions", dims, rank)

    # The reducer: (T1..TN accumulators, T1..TN inputs) -> T (N=1) or (T1..TN).
    comp = _callee(ctx)
    params = comp.parameter_shapes()
    scalars = [Shape(x.element_type, ()) for x in inputs]
    sig = "(" + ", ".join(str(s) for s in scalars + scalars) + ") -> " + (
        str(scalars[0]) if n == 1 else "(" + ", ".join(str(s) for s in scalars) + ")")
    bad = f"reducer {comp.name} must have the signature {sig}"
    if len(params) != 2 * n or not all(p.compatible(s) for p, s in zip(params, scalars + scalars)):
        raise ctx.fail(f"{bad}, but its parameters are ({', '.join(str(p) for p in params)})")
    result = comp.root.shape
    want = scalars[0] if n == 1 else Shape.tuple(scalars)
    if not result.compatible(want):
        raise ctx.fail(f"{bad}, but it returns {result}")

    kept = [d for i, d in enumerate(inputs[0].dimensions) if i not in dims]
    outs = [Shape(x.element_type, kept) for x in inputs]
    return outs[0] if n == 1 else Shape.tuple(outs)


def higher_precision_type(a: PrimitiveType, b: PrimitiveType) -> PrimitiveType:
    """XLA's ``primitive_util::HigherPrecisionType``: the type a dot or convolution
    of an ``a`` and a ``b`` operand computes in (both are converted to it).  Complex
    wins, then the float with the larger exponent range, then the more precise
    float, then the wider type, then signed over unsigned."""
    def rank(t: PrimitiveType):
        c = t.component_type if t.is_complex else t
        info = _finfo(c) if c.is_float else None
        return (t.is_complex, info.maxexp if info else -1, info.nmant + 1 if info else -1,
                c.bit_width, c.is_signed_int)
    return a if rank(a) >= rank(b) else b


def _finfo(t: PrimitiveType):
    try:                        # numpy's finfo does not know bf16 and the f8 types
        import ml_dtypes
        return ml_dtypes.finfo(t.dtype)
    except ImportError:
        return np.finfo(t.dtype)


@_rule("dot")
def _dot(ctx: _Ctx) -> Shape:
    """Operands of different element types are converted to their
    :func:`higher_precision_type` (XLA's shape inference allows them)."""
    ctx.arity(2)
    lhs, rhs = ctx.array(0, "lhs"), ctx.array(1, "rhs")
    lb = ctx.ints_attr("lhs_batch_dims", required=False)
    rb = ctx.ints_attr("rhs_batch_dims", required=False)
    lc = ctx.ints_attr("lhs_contracting_dims", required=False)
    rc = ctx.ints_attr("rhs_contracting_dims", required=False)
    _check_dims_unique_in_range(ctx, "lhs batch+contracting dims", lb + lc, lhs.rank)
    _check_dims_unique_in_range(ctx, "rhs batch+contracting dims", rb + rc, rhs.rank)
    if len(lb) != len(rb):
        raise ctx.fail(f"lhs_batch_dims {list(lb)} and rhs_batch_dims {list(rb)} differ in number")
    if len(lc) != len(rc):
        raise ctx.fail(f"lhs_contracting_dims {list(lc)} and rhs_contracting_dims {list(rc)} differ in number")
    for kind, ls, rs in (("batch", lb, rb), ("contracting", lc, rc)):
        for a, b in zip(ls, rs):
            if lhs.dimensions[a] != rhs.dimensions[b]:
                raise ctx.fail(f"{kind} dimension sizes differ: lhs dimension {a} has size "
                               f"{lhs.dimensions[a]}, rhs dimension {b} has size {rhs.dimensions[b]}")
    dims = [lhs.dimensions[d] for d in lb]
    dims += [n for i, n in enumerate(lhs.dimensions) if i not in lb and i not in lc]
    dims += [n for i, n in enumerate(rhs.dimensions) if i not in rb and i not in rc]
    et = higher_precision_type(lhs.element_type, rhs.element_type)
    # A given result type is the preferred element type (e.g. bf16 x bf16 -> f32).
    if ctx.shape is not None and ctx.shape.is_array and ctx.shape.element_type != et:
        pt = ctx.shape.element_type
        if pt.is_pred or et.is_complex != pt.is_complex:
            raise ctx.fail(f"result element type {pt.value} cannot hold a dot of {et.value}")
        et = pt
    return Shape(et, dims)


def scaled_dot_type(a: PrimitiveType, b: PrimitiveType) -> PrimitiveType:
    """The type XLA's ScaledDotRewriter computes an operand and its scale in:
    bf16 when both are narrower than 16 bits, their type when they agree, f32
    when they differ at one width, else the wider."""
    if a.bit_width < 16 and b.bit_width < 16:
        return BF16
    if a == b:
        return a
    if a.bit_width == b.bit_width:
        return F32
    return a if a.bit_width > b.bit_width else b


@_rule("scaled-dot")
def _scaled_dot(ctx: _Ctx) -> Shape:
    """XLA's ScaledDot (its ScaledDotRewriter's semantics): ``lhs, lhs_scale,
    rhs, rhs_scale``; each scale is a scalar (no scaling) or has its operand's
    rank with dimensions dividing the operand's, each element multiplying its
    block; the result is the dot (attributes as dot's) of the scaled operands,
    in the given type (else their type, f32 when they differ).  XLA's NVFP4
    global scales (operands 5 and 6) are not supported."""
    if len(ctx.shapes) != 4:
        raise ctx.fail(f"takes lhs, lhs_scale, rhs, rhs_scale (4 operands), got {len(ctx.shapes)}"
                       + (" (NVFP4 global scales are not supported yet)" if len(ctx.shapes) == 6 else ""))
    lhs, lhs_scale, rhs, rhs_scale = (ctx.array(i, n) for i, n in
                                      enumerate(("lhs", "lhs_scale", "rhs", "rhs_scale")))
    types = []
    for side, x, scale in (("lhs", lhs, lhs_scale), ("rhs", rhs, rhs_scale)):
        if not (x.element_type.is_float and scale.element_type.is_float):
            raise ctx.fail(f"{side} {x} and {side}_scale {scale} must be floating point")
        if scale.rank == 0:
            types.append(x.element_type)
            continue
        if scale.rank != x.rank or any(n % k if k else True for n, k in zip(x.dimensions, scale.dimensions)):
            raise ctx.fail(f"{side}_scale {scale} must be a scalar or have {side} {x}'s rank with dimensions "
                           "dividing its dimensions")
        types.append(scaled_dot_type(x.element_type, scale.element_type))
    common = types[0] if types[0] == types[1] else F32
    out = infer_shape("dot", [Shape(common, lhs.dimensions), Shape(common, rhs.dimensions)],
                      {k: v for k, v in ctx.attrs.items() if k.endswith("_dims")})
    if ctx.shape is not None and ctx.shape.is_array and ctx.shape.element_type != common:
        if not ctx.shape.element_type.is_float:
            raise ctx.fail(f"result element type {ctx.shape.element_type.value} must be floating point")
        return out.with_element_type(ctx.shape.element_type)
    return out


@_rule("ragged-dot")
def _ragged_dot(ctx: _Ctx) -> Shape:
    """XLA's ``InferRaggedDotOpShape`` (jax's ``ragged_dot_general`` rules):
    lhs dimension ``lhs_ragged_dims`` is split into consecutive groups of
    ``group_sizes`` (integers, ``[g]`` or ``[prefix..., g]``: the lhs batch
    dimensions then those of the ragged dimension's kind before it).  Ragged
    in a non-contracting dimension: rhs dimension ``rhs_group_dims`` (size g)
    picks each group's rhs, the result is the dot's without it; ragged in a
    contracting dimension: the result is ``[g] + dot``; ragged in a batch
    dimension: the dot's."""
    ctx.arity(3)
    lhs, rhs, gs = ctx.array(0, "lhs"), ctx.array(1, "rhs"), ctx.array(2, "group_sizes")
    mode, ragged, group = ragged_dot_mode(ctx, lhs, rhs)
    if not gs.element_type.is_integral or gs.element_type.is_pred or gs.rank == 0:
        raise ctx.fail(f"group_sizes must be an integer array of rank >= 1, got {gs}")
    g = gs.dimensions[-1]
    prefix = ragged_dot_prefix(ctx, mode, lhs.rank, ragged)
    want = tuple(lhs.dimensions[d] for d in prefix) + (g,)
    if gs.rank != 1 and gs.dimensions != want:
        raise ctx.fail(f"group_sizes must have shape [g] or {list(want)} (the lhs dimensions {list(prefix)} "
                       f"then the groups), got {gs}")
    if mode == "non-contracting" and rhs.dimensions[group] != g:
        raise ctx.fail(f"rhs group dimension {group} has size {rhs.dimensions[group]}, group_sizes has {g} groups")
    attrs = {k: v for k, v in ctx.attrs.items() if k not in ("lhs_ragged_dims", "rhs_group_dims")}
    rhs_dot = rhs if mode != "non-contracting" else Shape(
        rhs.element_type, [n for d, n in enumerate(rhs.dimensions) if d != group])
    if mode == "non-contracting":              # the dot's rhs dimension numbers without the group dimension
        for k in ("rhs_batch_dims", "rhs_contracting_dims"):
            attrs[k] = tuple(d - (d > group) for d in ctx.ints_attr(k, required=False))
    try:
        out = infer_shape("dot", [lhs, rhs_dot], attrs, ctx.shape)
    except ShapeError as e:                    # the dot's rule, said of the ragged-dot
        rule = str(e).removeprefix("dot: ").split(" (operand shapes:")[0]
        where = f" (the rhs without its group dimension {group}: {rhs_dot})" if group is not None else ""
        raise ctx.fail(f"{rule}{where}") from None
    return Shape(out.element_type, (g,) + out.dimensions) if mode == "contracting" else out


def ragged_dot_dimensions(lhs: Shape, rhs: Shape, attrs: dict) -> tuple:
    """``(mode, lhs ragged dimension, rhs group dimension or None, prefix)`` of
    a well-formed ragged-dot (the evaluator and the expander share them):
    mode is "non-contracting", "contracting" or "batch"; prefix the lhs
    dimensions a group_sizes of rank > 1 runs over before the groups."""
    ctx = _Ctx("ragged-dot", [lhs, rhs], dict(attrs), None)
    mode, ragged, group = ragged_dot_mode(ctx, lhs, rhs)
    return mode, ragged, group, ragged_dot_prefix(ctx, mode, lhs.rank, ragged)


def ragged_dot_mode(ctx: _Ctx, lhs: Shape, rhs: Shape) -> tuple:
    """``(mode, lhs ragged dimension, rhs group dimension or None)`` of a
    ragged-dot: mode is "non-contracting", "contracting" or "batch"."""
    ragged = ctx.ints_attr("lhs_ragged_dims")
    if len(ragged) != 1 or not 0 <= ragged[0] < lhs.rank:
        raise ctx.fail(f"lhs_ragged_dims={list(ragged)} must name one dimension of lhs {lhs}")
    (r,) = ragged
    groups = ctx.ints_attr("rhs_group_dims", required=False)
    lb, lc = ctx.ints_attr("lhs_batch_dims", required=False), ctx.ints_attr("lhs_contracting_dims", required=False)
    mode = "contracting" if r in lc else "batch" if r in lb else "non-contracting"
    if mode != "non-contracting":
        if groups:
            raise ctx.fail(f"rhs_group_dims={list(groups)} must be empty when the lhs ragged dimension {r} is "
                           f"a {mode} dimension")
        return mode, r, None
    rb, rc = ctx.ints_attr("rhs_batch_dims", required=False), ctx.ints_attr("rhs_contracting_dims", required=False)
    if len(groups) != 1 or not 0 <= groups[0] < rhs.rank or groups[0] in rb + rc:
        raise ctx.fail(f"rhs_group_dims={list(groups)} must name one rhs dimension that is neither batch nor "
                       f"contracting when the lhs ragged dimension {r} is a non-contracting dimension")
    return mode, r, groups[0]


def ragged_dot_prefix(ctx: _Ctx, mode: str, rank: int, ragged: int) -> list:
    """The lhs dimensions a group_sizes of rank > 1 runs over before the groups:
    the batch dimensions, then those of the ragged dimension's kind before it."""
    lb = list(ctx.ints_attr("lhs_batch_dims", required=False))
    lc = list(ctx.ints_attr("lhs_contracting_dims", required=False))
    if mode == "batch":
        return lb[:lb.index(ragged)]
    if mode == "contracting":
        return lb + lc[:lc.index(ragged)]
    free = [d for d in range(rank) if d not in lb and d not in lc]
    return lb + free[:free.index(ragged)]


# ---------------------------------------------------------------------------
# gather, convolution, reduce-window, select-and-scatter, fft
# (window and dim_labels text: xlac/hlo/window.py)
# ---------------------------------------------------------------------------

def _window(ctx: _Ctx, rank: int, what: str = "window"):
    try:
        window = window_of(ctx.attrs)
    except WindowError as e:
        raise ctx.fail(str(e)) from None
    if window.rank != rank:
        raise ctx.fail(f"{what} has {window.rank} dimension(s), needs {rank}")
    for k, d in enumerate(window):
        if d.size < 1 or d.stride < 1 or d.base_dilation < 1 or d.window_dilation < 1:
            raise ctx.fail(f"window dimension {k} ({d.size=}, {d.stride=}, {d.base_dilation=}, "
                           f"{d.window_dilation=}): sizes, strides and dilations must be positive")
    return window


def _check_scalar_computation(ctx: _Ctx, name: str, params, result) -> None:
    """``name`` (an attribute) must take ``params`` and return ``result`` (scalars)."""
    comp = _callee(ctx, name)
    got = comp.parameter_shapes()
    sig = f"({', '.join(str(p) for p in params)}) -> {result}"
    if len(got) != len(params) or not all(g.compatible(p) for g, p in zip(got, params)):
        raise ctx.fail(f"{name} computation {comp.name} must have the signature {sig}, but its "
                       f"parameters are ({', '.join(str(p) for p in got)})")
    if not comp.root.shape.compatible(result):
        raise ctx.fail(f"{name} computation {comp.name} must have the signature {sig}, but it "
                       f"returns {comp.root.shape}")


def _sorted_unique(ctx: _Ctx, name: str, dims, rank: int) -> None:
    _check_dims_unique_in_range(ctx, name, dims, rank)
    if list(dims) != sorted(dims):
        raise ctx.fail(f"{name} {list(dims)} must be sorted")


@_rule("gather")
def _gather(ctx: _Ctx) -> Shape:
    ctx.arity(2)
    operand, idx = ctx.array(0, "operand"), ctx.array(1, "start_indices")
    if not idx.element_type.is_integral:
        raise ctx.fail(f"start_indices must have an integer element type, got {idx.element_type.value}")
    offset_dims = ctx.ints_attr("offset_dims", required=False)
    collapsed = ctx.ints_attr("collapsed_slice_dims", required=False)
    start_index_map = ctx.ints_attr("start_index_map", required=False)
    operand_batching = ctx.ints_attr("operand_batching_dims", required=False)
    indices_batching = ctx.ints_attr("start_indices_batching_dims", required=False)
    slice_sizes = ctx.ints_attr("slice_sizes")
    ivd = ctx.int_attr("index_vector_dim")
    if not 0 <= ivd <= idx.rank:
        raise ctx.fail(f"index_vector_dim={ivd} must be in [0, {idx.rank}] for start_indices {idx}")
    vector_size = idx.dimensions[ivd] if ivd < idx.rank else 1
    if len(start_index_map) != vector_size:
        raise ctx.fail(f"start_index_map {list(start_index_map)} must have one entry per index "
                       f"vector element ({vector_size}, dimension {ivd} of start_indices)")
    _check_dims_unique_in_range(ctx, "start_index_map", start_index_map, operand.rank)
    _sorted_unique(ctx, "collapsed_slice_dims", collapsed, operand.rank)
    _sorted_unique(ctx, "operand_batching_dims", operand_batching, operand.rank)
    _check_dims_unique_in_range(ctx, "start_indices_batching_dims", indices_batching, idx.rank)
    if ivd in indices_batching:
        raise ctx.fail(f"start_indices_batching_dims {list(indices_batching)} must not contain "
                       f"index_vector_dim={ivd}")
    if len(operand_batching) != len(indices_batching):
        raise ctx.fail(f"operand_batching_dims {list(operand_batching)} and "
                       f"start_indices_batching_dims {list(indices_batching)} differ in number")
    both = set(collapsed) & set(operand_batching)
    if both:
        raise ctx.fail(f"dimensions {sorted(both)} are both collapsed_slice_dims and operand_batching_dims")
    both = set(start_index_map) & set(operand_batching)
    if both:
        raise ctx.fail(f"dimensions {sorted(both)} are both in start_index_map and operand_batching_dims")
    if len(slice_sizes) != operand.rank:
        raise ctx.fail(f"slice_sizes {list(slice_sizes)} must have one entry per operand dimension ({operand.rank})")
    for d, (s, n) in enumerate(zip(slice_sizes, operand.dimensions)):
        if not 0 <= s <= n:
            raise ctx.fail(f"slice_sizes[{d}]={s} must be in [0, {n}] (operand dimension {d})")
    for name, dims in (("collapsed_slice_dims", collapsed), ("operand_batching_dims", operand_batching)):
        for d in dims:
            if slice_sizes[d] > 1:
                raise ctx.fail(f"{name} contains {d}, so slice_sizes[{d}] must be 0 or 1, "
                               f"got {slice_sizes[d]}")
    for od, sd in zip(operand_batching, indices_batching):
        if operand.dimensions[od] != idx.dimensions[sd]:
            raise ctx.fail(f"operand batching dimension {od} (size {operand.dimensions[od]}) and "
                           f"start_indices batching dimension {sd} (size {idx.dimensions[sd]}) differ")
    if operand.rank != len(offset_dims) + len(collapsed) + len(operand_batching):
        raise ctx.fail(f"operand rank {operand.rank} must equal the number of offset_dims "
                       f"({len(offset_dims)}) + collapsed_slice_dims ({len(collapsed)}) + "
                       f"operand_batching_dims ({len(operand_batching)})")
    batch = [n for d, n in enumerate(idx.dimensions) if d != ivd]
    out_rank = len(offset_dims) + len(batch)
    _sorted_unique(ctx, "offset_dims", offset_dims, out_rank)
    window = [s for d, s in enumerate(slice_sizes) if d not in collapsed and d not in operand_batching]
    dims, b, w = [], iter(batch), iter(window)
    for d in range(out_rank):
        dims.append(next(w) if d in offset_dims else next(b))
    return Shape(operand.element_type, dims)


@_rule("convolution")
def _convolution(ctx: _Ctx) -> Shape:
    ctx.arity(2)
    lhs, rhs = ctx.array(0, "lhs"), ctx.array(1, "rhs")
    try:
        dn = conv_dimension_numbers_of(ctx.attrs)
    except WindowError as e:
        raise ctx.fail(str(e)) from None
    n = dn.num_spatial_dims
    if lhs.rank != n + 2 or rhs.rank != n + 2:
        raise ctx.fail(f"dim_labels {ctx.attrs.get('dim_labels')} has {n} spatial dimension(s): "
                       f"lhs and rhs must have rank {n + 2}")
    window = _window(ctx, n, f"window (for {n} spatial dimension(s))")
    fgc = _as_int(ctx, "feature_group_count", ctx.attr("feature_group_count", 1, required=False))
    bgc = _as_int(ctx, "batch_group_count", ctx.attr("batch_group_count", 1, required=False))
    if fgc < 1 or bgc < 1:
        raise ctx.fail(f"feature_group_count={fgc} and batch_group_count={bgc} must be positive")
    if fgc > 1 and bgc > 1:
        raise ctx.fail("feature_group_count and batch_group_count cannot both be greater than 1")
    batch = lhs.dimensions[dn.input_batch_dimension]
    in_features = lhs.dimensions[dn.input_feature_dimension]
    k_in = rhs.dimensions[dn.kernel_input_feature_dimension]
    k_out = rhs.dimensions[dn.kernel_output_feature_dimension]
    if in_features % fgc or in_features // fgc != k_in:
        raise ctx.fail(f"the lhs feature dimension ({in_features}) must equal the rhs input "
                       f"feature dimension ({k_in}) times feature_group_count ({fgc})")
    if k_out % fgc:
        raise ctx.fail(f"the rhs output feature dimension ({k_out}) must be a multiple of "
                       f"feature_group_count ({fgc})")
    if batch % bgc or k_out % bgc:
        raise ctx.fail(f"batch_group_count ({bgc}) must divide the lhs batch dimension ({batch}) "
                       f"and the rhs output feature dimension ({k_out})")
    dims = [0] * (n + 2)
    dims[dn.output_batch_dimension] = batch // bgc
    dims[dn.output_feature_dimension] = k_out
    for k, wd in enumerate(window):
        ksize = rhs.dimensions[dn.kernel_spatial_dimensions[k]]
        if wd.size != ksize:
            raise ctx.fail(f"window dimension {k} has size {wd.size}, but kernel spatial "
                           f"dimension {dn.kernel_spatial_dimensions[k]} has size {ksize}")
        dims[dn.output_spatial_dimensions[k]] = wd.output_size(lhs.dimensions[dn.input_spatial_dimensions[k]])
    # Mixed operand types as dot's; pred is an or of ands, as a pred dot.
    et = higher_precision_type(lhs.element_type, rhs.element_type)
    # A given result type is the preferred element type (e.g. bf16 x bf16 -> f32).
    if ctx.shape is not None and ctx.shape.is_array and ctx.shape.element_type != et:
        pt = ctx.shape.element_type
        if pt.is_pred or et.is_complex != pt.is_complex:
            raise ctx.fail(f"result element type {pt.value} cannot hold a convolution of {et.value}")
        et = pt
    return Shape(et, dims)


@_rule("reduce-window")
def _reduce_window(ctx: _Ctx) -> Shape:
    inputs, _inits = _inputs_and_inits(ctx)
    n = len(inputs)
    scalars = [Shape(x.element_type, ()) for x in inputs]
    _check_scalar_computation(ctx, "to_apply", scalars + scalars,
                              scalars[0] if n == 1 else Shape.tuple(scalars))
    window = _window(ctx, inputs[0].rank)
    if window.has_reversal:
        raise ctx.fail("reduce-window does not take rhs_reversal")
    dims = [wd.output_size(size) for wd, size in zip(window, inputs[0].dimensions)]
    outs = [Shape(x.element_type, dims) for x in inputs]
    return outs[0] if n == 1 else Shape.tuple(outs)


@_rule("select-and-scatter")
def _select_and_scatter(ctx: _Ctx) -> Shape:
    ctx.arity(3)
    operand, source, init = ctx.array(0, "operand"), ctx.array(1, "source"), ctx.array(2, "init_value")
    et = operand.element_type
    if not init.is_scalar or init.element_type != et:
        raise ctx.fail(f"init_value must be a scalar of the operand's element type {et.value}, got {init}")
    if source.element_type != et:
        raise ctx.fail(f"source must have the operand's element type {et.value}, got {source}")
    scalar = Shape(et, ())
    _check_scalar_computation(ctx, "select", [scalar, scalar], Shape(PRED, ()))
    _check_scalar_computation(ctx, "scatter", [scalar, scalar], scalar)
    window = _window(ctx, operand.rank)
    if window.has_reversal:
        raise ctx.fail("select-and-scatter does not take rhs_reversal")
    want = tuple(wd.output_size(size) for wd, size in zip(window, operand.dimensions))
    if source.dimensions != want:
        raise ctx.fail(f"source must have the dimensions of reduce-window's result "
                       f"{list(want)}, got {list(source.dimensions)}")
    return Shape(et, operand.dimensions)


# ---------------------------------------------------------------------------
# get-dimension-size, set-dimension-size (dynamic dimensions: xlac/hlo/dynamic.py)
# ---------------------------------------------------------------------------

_INT32_MAX = 2**31 - 1


def _size_dimension(ctx: _Ctx, s: Shape) -> int:
    """The one dimension of ``dimensions=``, checked against ``s``."""
    dims = ctx.ints_attr("dimensions")
    if len(dims) != 1:
        raise ctx.fail(f"dimensions={list(dims)} must name exactly one dimension")
    (d,) = dims
    if not 0 <= d < s.rank:
        raise ctx.fail(f"dimension {d} is out of range for {s} (rank {s.rank})")
    if s.dimensions[d] > _INT32_MAX:
        raise ctx.fail(f"dimension {d} of {s} is larger than an s32 size can hold")
    return d


@_rule("get-dimension-size")
def _get_dimension_size(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    _size_dimension(ctx, ctx.array(0))
    return Shape(S32, ())


@_rule("set-dimension-size")
def _set_dimension_size(ctx: _Ctx) -> Shape:
    ctx.arity(2)
    s, size = ctx.array(0), ctx.shapes[1]
    d = _size_dimension(ctx, s)
    if not size.is_array or size.element_type is not S32 or size.rank:
        raise ctx.fail(f"the size must be an s32 scalar, got {size}")
    return Shape(s.element_type, s.dimensions, dynamic_dimensions=s.dynamic_dimensions or None) \
        .with_dynamic_dimension(d)


_FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


@_rule("fft")
def _fft(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    s = ctx.array(0)
    kind = str(ctx.attr("fft_type"))
    if kind not in _FFT_TYPES:
        raise ctx.fail(f"fft_type={kind} is not one of {', '.join(_FFT_TYPES)}")
    lengths = ctx.ints_attr("fft_length")
    r = len(lengths)
    if not 1 <= r <= 3:
        raise ctx.fail(f"fft_length {list(lengths)}: 1 to 3 dimensions are transformed, not {r}")
    if s.rank < r:
        raise ctx.fail(f"fft_length {list(lengths)} names {r} dimensions, the operand {s} has rank {s.rank}")
    if any(n < 0 for n in lengths):
        raise ctx.fail(f"fft_length {list(lengths)} must not be negative")
    et, dims = s.element_type, list(s.dimensions)
    last = list(dims[-r:])
    if kind in ("FFT", "IFFT"):
        if not et.is_complex:
            raise ctx.fail(f"{kind} needs a complex operand, got {et.value}")
        # As XLA: a zero-length transform (its result is zeros) or an empty operand
        # (an empty result) need not match fft_length; other mismatches are refused
        # (XLA's shape inference lets them through, XLA:CPU then aborts).
        if last != list(lengths) and 0 not in lengths and 0 not in dims:
            raise ctx.fail(f"{kind}: the last {r} dimensions {last} must equal fft_length {list(lengths)} "
                           f"(unless fft_length or the operand has a zero dimension)")
        return Shape(et, dims)
    half = lengths[-1] // 2 + 1 if lengths[-1] else 0
    if kind == "RFFT":
        if et not in (F32, F64):
            raise ctx.fail(f"RFFT needs an f32 or f64 operand, got {et.value}")
        if last != list(lengths):
            raise ctx.fail(f"RFFT: the last {r} dimensions {last} must equal fft_length {list(lengths)}")
        dims[-1] = half
        return Shape(C64 if et is F32 else C128, dims)
    if not et.is_complex:
        raise ctx.fail(f"IRFFT needs a complex operand, got {et.value}")
    if last[:-1] != list(lengths[:-1]) or last[-1] != half:
        raise ctx.fail(f"IRFFT: the last {r} dimensions {last} must be fft_length {list(lengths)} "
                       f"with the last one {lengths[-1]} // 2 + 1 = {half}")
    dims[-1] = lengths[-1]
    return Shape(et.component_type, dims)


# ---------------------------------------------------------------------------
# dynamic-slice, dynamic-update-slice, while, conditional, map, sort, topk,
# scatter
# ---------------------------------------------------------------------------

def _start_indices(ctx: _Ctx, first: int, rank: int, what: str) -> None:
    """Operands ``first``... are the start indices: ``rank`` integer scalars of
    one type, or (the old form) one integer vector of ``rank`` elements."""
    shapes = ctx.shapes[first:]
    for k in range(first, len(ctx.shapes)):
        ctx.array(k, f"start index {k - first}")
    if len(shapes) == 1 and shapes[0].rank == 1 and rank != 0:
        if shapes[0].dimensions[0] != rank:
            raise ctx.fail(f"the start index vector {shapes[0]} needs one element per dimension of "
                           f"the {what} ({rank})")
    elif len(shapes) != rank:
        raise ctx.fail(f"needs one scalar start index per dimension of the {what} ({rank}), "
                       f"got {len(shapes)}")
    elif any(not s.is_scalar for s in shapes):
        raise ctx.fail("start indices must be scalars")
    types = {s.element_type for s in shapes}
    if any(not t.is_integral for t in types):
        raise ctx.fail(f"start indices must be integers, got {', '.join(sorted(t.value for t in types))}")
    if len(types) > 1:
        raise ctx.fail(f"start indices must all have one type, got {', '.join(sorted(t.value for t in types))}")


@_rule("dynamic-slice")
def _dynamic_slice(ctx: _Ctx) -> Shape:
    if not ctx.shapes:
        raise ctx.fail("needs an operand and start indices")
    s = ctx.array(0, "operand")
    _start_indices(ctx, 1, s.rank, "operand")
    if "dynamic_slice_sizes" in ctx.attrs or ctx.shape is None:
        sizes = ctx.ints_attr("dynamic_slice_sizes")
    else:
        sizes = ctx.shape.dimensions
    if len(sizes) != s.rank:
        raise ctx.fail(f"dynamic_slice_sizes {list(sizes)} needs one size per dimension ({s.rank})")
    for d, (n, dim) in enumerate(zip(sizes, s.dimensions)):
        if not 0 <= n <= dim:
            raise ctx.fail(f"dimension {d}: slice size {n} must be in [0, {dim}] "
                           f"(the operand's size)")
    return Shape(s.element_type, sizes)


@_rule("dynamic-update-slice")
def _dynamic_update_slice(ctx: _Ctx) -> Shape:
    if len(ctx.shapes) < 2:
        raise ctx.fail("needs an operand, an update and start indices")
    s, u = ctx.array(0, "operand"), ctx.array(1, "update")
    if u.element_type != s.element_type:
        raise ctx.fail(f"update element type {u.element_type.value} differs from the operand's "
                       f"{s.element_type.value}")
    if u.rank != s.rank:
        raise ctx.fail(f"update rank {u.rank} differs from the operand's rank {s.rank}")
    for d, (n, dim) in enumerate(zip(u.dimensions, s.dimensions)):
        if n > dim:
            raise ctx.fail(f"dimension {d}: update size {n} exceeds the operand's size {dim}")
    _start_indices(ctx, 2, s.rank, "operand")
    return Shape(s.element_type, s.dimensions)


def _signature(comp) -> str:
    return (f"({', '.join(str(p) for p in comp.parameter_shapes())}) -> {comp.root.shape}")


@_rule("while")
def _while(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    init = ctx.shapes[0]
    cond, body = _callee(ctx, "condition"), _callee(ctx, "body")
    for name, comp in (("condition", cond), ("body", body)):
        params = comp.parameter_shapes()
        if len(params) != 1 or not params[0].compatible(init):
            raise ctx.fail(f"{name} {comp.name} must take one parameter of the loop state's shape "
                           f"{init}, but its signature is {_signature(comp)}")
    if not cond.root.shape.compatible(Shape(PRED, ())):
        raise ctx.fail(f"condition {cond.name} must return pred[], but its signature is {_signature(cond)}")
    if not body.root.shape.compatible(init):
        raise ctx.fail(f"body {body.name} must return the loop state's shape {init}, but its "
                       f"signature is {_signature(body)}")
    return _default_layout(init)


@_rule("scan")
def _scan(ctx: _Ctx) -> Shape:
    """XLA's Scan (as its ScanExpander runs it): operands are the inputs, then
    ``num_carries`` initial carries; step ``i`` (from the end with
    ``is_reverse``) calls ``to_apply`` on each input's slice ``i`` of dimension
    ``dimensions`` and the carries, which returns ``(outputs..., carries...)``
    (one value alone when there is one in all).  The result is the outputs
    stacked along that dimension, then the final carries: a tuple, or the one
    value when there is one."""
    dims = ctx.ints_attr("dimensions")
    carries = ctx.int_attr("num_carries") if "num_carries" in ctx.attrs else 0
    body = _callee(ctx)
    if len(dims) != 1:
        raise ctx.fail(f"dimensions={list(dims)} must name one scan dimension")
    (d,) = dims
    if not 0 <= carries <= len(ctx.shapes):
        raise ctx.fail(f"num_carries={carries} must be between 0 and the number of operands ({len(ctx.shapes)})")
    inputs, inits = ctx.shapes[:len(ctx.shapes) - carries], ctx.shapes[len(ctx.shapes) - carries:]
    length = None
    for i, s in enumerate(inputs):
        s = ctx.array(i, f"input {i}")
        if not 0 <= d < s.rank:
            raise ctx.fail(f"scan dimension {d} is out of range for input {i} {s}")
        if length is not None and s.dimensions[d] != length:
            raise ctx.fail(f"inputs must agree in the scan dimension {d}: {length} and {s.dimensions[d]}")
        length = s.dimensions[d]
    if length is None:
        raise ctx.fail("needs at least one input to scan over")
    slices = [Shape(s.element_type, s.dimensions[:d] + s.dimensions[d + 1:]) for s in inputs]
    params = body.parameter_shapes()
    want = slices + list(inits)
    if len(params) != len(want) or not all(p.compatible(w) for p, w in zip(params, want)):
        raise ctx.fail(f"to_apply {body.name} must take the inputs' slices then the carries "
                       f"({', '.join(str(w) for w in want)}), but its signature is {_signature(body)}")
    root = body.root.shape
    results = list(root.tuple_shapes) if root.is_tuple else [root]
    if len(results) < carries or not all(r.compatible(c) for r, c in zip(results[len(results) - carries:], inits)):
        raise ctx.fail(f"to_apply {body.name} must return (outputs..., carries...) with carries of the initial "
                       f"values' shapes ({', '.join(str(c) for c in inits)}), but its signature is {_signature(body)}")
    outputs = []
    for r in results[:len(results) - carries]:
        if not r.is_array or d > r.rank:
            raise ctx.fail(f"output {r} of to_apply {body.name} cannot be stacked along dimension {d}")
        outputs.append(Shape(r.element_type, r.dimensions[:d] + (length,) + r.dimensions[d:]))
    out = outputs + [_default_layout(c) for c in inits]
    return out[0] if len(out) == 1 and not root.is_tuple else Shape.tuple(out)


@_rule("conditional")
def _conditional(ctx: _Ctx) -> Shape:
    if not ctx.shapes:
        raise ctx.fail("needs a selector and branch operands")
    sel = ctx.shapes[0]
    if "branch_computations" in ctx.attrs:
        branches = list(ctx.attrs["branch_computations"])
        if not branches:
            raise ctx.fail("branch_computations must not be empty")
        for c in branches:
            if not hasattr(c, "parameter_shapes") or getattr(c, "root", None) is None:
                raise ctx.fail(f"branch_computations must be computations, got {c!r}")
    else:
        branches = [_callee(ctx, "true_computation"), _callee(ctx, "false_computation")]
    if not sel.is_array or not sel.is_scalar or sel.element_type not in (PRED, PrimitiveType.S32):
        raise ctx.fail(f"the selector must be a pred[] or s32[] scalar, got {sel}")
    if sel.element_type is PRED and len(branches) != 2:
        raise ctx.fail(f"a pred selector needs 2 branches, got {len(branches)}")
    if len(ctx.shapes) != len(branches) + 1:
        raise ctx.fail(f"{len(branches)} branch computation(s) need {len(branches)} operand(s) after "
                       f"the selector, got {len(ctx.shapes) - 1}")
    result = branches[0].root.shape
    for k, (comp, operand) in enumerate(zip(branches, ctx.shapes[1:])):
        params = comp.parameter_shapes()
        if len(params) != 1 or not params[0].compatible(operand):
            raise ctx.fail(f"branch {k} ({comp.name}) must take one parameter of its operand's shape "
                           f"{operand}, but its signature is {_signature(comp)}")
        if not comp.root.shape.compatible(result):
            raise ctx.fail(f"every branch must return the same shape: branch 0 ({branches[0].name}) "
                           f"returns {result}, branch {k} ({comp.name}) returns {comp.root.shape}")
    return _default_layout(result)


@_rule("map")
def _map(ctx: _Ctx) -> Shape:
    if not ctx.shapes:
        raise ctx.fail("needs at least one operand")
    xs = [ctx.array(i) for i in range(len(ctx.shapes))]
    for i, x in enumerate(xs):
        if x.dimensions != xs[0].dimensions:
            raise ctx.fail(f"all operands must have the same dimensions: operand {i} is {x}, "
                           f"operand 0 is {xs[0]}")
    dims = ctx.ints_attr("dimensions", required=False)
    if dims and list(dims) != list(range(xs[0].rank)):
        raise ctx.fail(f"dimensions={list(dims)} must be all the operands' dimensions in order "
                       f"{list(range(xs[0].rank))}")
    comp = _callee(ctx)
    params = comp.parameter_shapes()
    want = [Shape(x.element_type, ()) for x in xs]
    if len(params) != len(want) or not all(p.compatible(w) for p, w in zip(params, want)):
        raise ctx.fail(f"to_apply {comp.name} must take the operands' scalars "
                       f"({', '.join(str(w) for w in want)}), but its signature is {_signature(comp)}")
    root = comp.root.shape
    if not root.is_array or not root.is_scalar:
        raise ctx.fail(f"to_apply {comp.name} must return a scalar, but its signature is {_signature(comp)}")
    return Shape(root.element_type, xs[0].dimensions)


def _comparator(ctx: _Ctx, name: str, element_types: list) -> None:
    comp = _callee(ctx, name)
    want = [Shape(t, ()) for t in element_types for _ in range(2)]
    params = comp.parameter_shapes()
    sig = f"({', '.join(str(w) for w in want)}) -> pred[]"
    if len(params) != len(want) or not all(p.compatible(w) for p, w in zip(params, want)):
        raise ctx.fail(f"comparator {comp.name} must have the signature {sig}, but its signature "
                       f"is {_signature(comp)}")
    if not comp.root.shape.compatible(Shape(PRED, ())):
        raise ctx.fail(f"comparator {comp.name} must have the signature {sig}, but its signature "
                       f"is {_signature(comp)}")


@_rule("sort")
def _sort(ctx: _Ctx) -> Shape:
    if not ctx.shapes:
        raise ctx.fail("needs at least one operand")
    xs = [ctx.array(i) for i in range(len(ctx.shapes))]
    for i, x in enumerate(xs):
        if x.dimensions != xs[0].dimensions:
            raise ctx.fail(f"all operands must have the same dimensions: operand {i} is {x}, "
                           f"operand 0 is {xs[0]}")
    dims = ctx.ints_attr("dimensions")
    if len(dims) != 1:
        raise ctx.fail(f"dimensions={list(dims)} must name the one dimension to sort")
    if not 0 <= dims[0] < xs[0].rank:
        raise ctx.fail(f"sort dimension {dims[0]} is out of range for rank {xs[0].rank}")
    _comparator(ctx, "to_apply", [x.element_type for x in xs])
    outs = [Shape(x.element_type, x.dimensions) for x in xs]
    return outs[0] if len(outs) == 1 else Shape.tuple(outs)


@_rule("topk")
def _topk(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    s = ctx.array(0)
    if s.rank < 1:
        raise ctx.fail("the operand needs at least one dimension")
    if s.element_type.is_complex:
        raise ctx.fail(f"complex numbers ({s.element_type.value}) are unordered")
    k = ctx.int_attr("k")
    if not 0 <= k <= s.dimensions[-1]:
        raise ctx.fail(f"k={k} must be in [0, {s.dimensions[-1]}] (the size of the last dimension)")
    dims = list(s.dimensions[:-1]) + [k]
    return Shape.tuple([Shape(s.element_type, dims), Shape(PrimitiveType.S32, dims)])


@_rule("scatter")
def _scatter(ctx: _Ctx) -> Shape:
    m = len(ctx.shapes)
    if m < 3 or m % 2 == 0:
        raise ctx.fail(f"takes N operands, the scatter indices and N updates (an odd number >= 3), "
                       f"got {m} operands")
    n = (m - 1) // 2
    operands = [ctx.array(i, f"operand {i}") for i in range(n)]
    idx = ctx.array(n, "scatter_indices")
    updates = [ctx.array(n + 1 + i, f"update {i}") for i in range(n)]
    for i, (o, u) in enumerate(zip(operands, updates)):
        if o.dimensions != operands[0].dimensions:
            raise ctx.fail(f"all operands must have the same dimensions: operand {i} is {o}, "
                           f"operand 0 is {operands[0]}")
        if u.dimensions != updates[0].dimensions:
            raise ctx.fail(f"all updates must have the same dimensions: update {i} is {u}, "
                           f"update 0 is {updates[0]}")
        if u.element_type != o.element_type:
            raise ctx.fail(f"update {i} ({u}) must have operand {i}'s element type {o.element_type.value}")
    if not idx.element_type.is_integral:
        raise ctx.fail(f"scatter_indices must have an integer element type, got {idx.element_type.value}")
    op, up = operands[0], updates[0]
    uwd = ctx.ints_attr("update_window_dims", required=False)
    iwd = ctx.ints_attr("inserted_window_dims", required=False)
    sd2od = ctx.ints_attr("scatter_dims_to_operand_dims", required=False)
    ibd = ctx.ints_attr("input_batching_dims", required=False)
    sibd = ctx.ints_attr("scatter_indices_batching_dims", required=False)
    ivd = ctx.int_attr("index_vector_dim")
    if not 0 <= ivd <= idx.rank:
        raise ctx.fail(f"index_vector_dim={ivd} must be in [0, {idx.rank}] for scatter_indices {idx}")
    for name, dims, rank in (("update_window_dims", uwd, up.rank), ("inserted_window_dims", iwd, op.rank),
                             ("input_batching_dims", ibd, op.rank)):
        _check_dims_unique_in_range(ctx, name, dims, rank)
        if list(dims) != sorted(dims):
            raise ctx.fail(f"{name} {list(dims)} must be sorted")
    if set(iwd) & set(ibd):
        raise ctx.fail(f"inserted_window_dims {list(iwd)} and input_batching_dims {list(ibd)} overlap")
    if op.rank != len(uwd) + len(iwd) + len(ibd):
        raise ctx.fail(f"the operand's rank {op.rank} must equal the number of update_window_dims "
                       f"({len(uwd)}) plus inserted_window_dims ({len(iwd)}) plus input_batching_dims "
                       f"({len(ibd)})")
    vector_size = idx.dimensions[ivd] if ivd < idx.rank else 1
    if len(sd2od) != vector_size:
        raise ctx.fail(f"scatter_dims_to_operand_dims {list(sd2od)} must have one entry per index "
                       f"vector element ({vector_size})")
    _check_dims_unique_in_range(ctx, "scatter_dims_to_operand_dims", sd2od, op.rank)
    if set(sd2od) & set(ibd):
        raise ctx.fail(f"scatter_dims_to_operand_dims {list(sd2od)} must not name input_batching_dims "
                       f"{list(ibd)}")
    _check_dims_unique_in_range(ctx, "scatter_indices_batching_dims", sibd, idx.rank)
    if ivd in sibd:
        raise ctx.fail(f"scatter_indices_batching_dims {list(sibd)} must not contain index_vector_dim={ivd}")
    if len(ibd) != len(sibd):
        raise ctx.fail(f"input_batching_dims {list(ibd)} and scatter_indices_batching_dims "
                       f"{list(sibd)} differ in number")
    scatter_dims_of_indices = [d for d in range(idx.rank) if d != ivd]
    update_scatter_dims = [d for d in range(up.rank) if d not in uwd]
    if up.rank != len(uwd) + len(scatter_dims_of_indices):
        raise ctx.fail(f"updates must have rank {len(uwd) + len(scatter_dims_of_indices)} "
                       f"(update_window_dims plus the scatter_indices dimensions other than "
                       f"index_vector_dim), got {up}")
    for ud, idd in zip(update_scatter_dims, scatter_dims_of_indices):
        if up.dimensions[ud] != idx.dimensions[idd]:
            raise ctx.fail(f"updates dimension {ud} (size {up.dimensions[ud]}) must match "
                           f"scatter_indices dimension {idd} (size {idx.dimensions[idd]})")
    for od, sd in zip(ibd, sibd):
        if op.dimensions[od] != idx.dimensions[sd]:
            raise ctx.fail(f"input batching dimension {od} (size {op.dimensions[od]}) must match "
                           f"scatter_indices batching dimension {sd} (size {idx.dimensions[sd]})")
    window_operand_dims = [d for d in range(op.rank) if d not in iwd and d not in ibd]
    for ud, od in zip(uwd, window_operand_dims):
        if up.dimensions[ud] > op.dimensions[od]:
            raise ctx.fail(f"update window dimension {ud} (size {up.dimensions[ud]}) exceeds operand "
                           f"dimension {od} (size {op.dimensions[od]})")
    comp = _callee(ctx)
    scalars = [Shape(o.element_type, ()) for o in operands]
    params = comp.parameter_shapes()
    want_root = scalars[0] if n == 1 else Shape.tuple(scalars)
    sig = f"({', '.join(str(s) for s in scalars + scalars)}) -> {want_root}"
    if len(params) != 2 * n or not all(p.compatible(s) for p, s in zip(params, scalars + scalars)) \
            or not comp.root.shape.compatible(want_root):
        raise ctx.fail(f"update computation {comp.name} must have the signature {sig}, but its "
                       f"signature is {_signature(comp)}")
    outs = [Shape(o.element_type, o.dimensions) for o in operands]
    return outs[0] if n == 1 else Shape.tuple(outs)


# ---------------------------------------------------------------------------
# linear algebra (spec: Cholesky, TriangularSolve; the errors of XLA's
# InferCholeskyShape / InferTriangularSolveShape)
# ---------------------------------------------------------------------------

#: Element types of cholesky and triangular-solve.
LINALG_TYPES = (F32, F64, C64, C128)
#: Values of triangular-solve's ``transpose_a``: op(a) = a, a^T, conj(a)^T.
TRANSPOSE_A = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")


def _batched_matrices(ctx: _Ctx, k: int, what: str) -> Shape:
    """Operand ``k``: an array of rank >= 2 of a LINALG_TYPES element type."""
    s = ctx.array(k, what)
    if s.element_type not in LINALG_TYPES:
        raise ctx.fail(f"{what} must have element type f32, f64, c64 or c128, got {s.element_type.value}")
    if s.rank < 2:
        raise ctx.fail(f"{what} must have rank >= 2 (a batch of matrices in its two minor "
                       f"dimensions), got rank {s.rank}: {s}")
    return s


def _square(ctx: _Ctx, s: Shape, what: str) -> int:
    rows, cols = s.dimensions[-2:]
    if rows != cols:
        raise ctx.fail(f"{what} must be a batch of square matrices (its two minor dimensions equal), "
                       f"got {rows}x{cols}: {s}")
    return rows


def _bool_attr(ctx: _Ctx, name: str) -> bool:
    v = ctx.attr(name, False, required=False)
    if not isinstance(v, bool):
        raise ctx.fail(f"attribute {name}={v!r} must be true or false")
    return v


@_rule("cholesky")
def _cholesky(ctx: _Ctx) -> Shape:
    """Spec: Cholesky(a, lower): a batch of square f32/f64/c64/c128 matrices
    in the two minor dimensions; the result has a's shape."""
    ctx.arity(1)
    a = _batched_matrices(ctx, 0, "a")
    _square(ctx, a, "a")
    _bool_attr(ctx, "lower")
    return Shape(a.element_type, a.dimensions)


@_rule("triangular-solve")
def _triangular_solve(ctx: _Ctx) -> Shape:
    """Spec: TriangularSolve(a, b, left_side, lower, unit_diagonal,
    transpose_a): a is [..., M, M], b is [..., M, K] (left_side) or
    [..., K, M], same batch dimensions and element type; the result has b's
    shape."""
    ctx.arity(2)
    a = _batched_matrices(ctx, 0, "a")
    b = _batched_matrices(ctx, 1, "b")
    if a.element_type != b.element_type:
        raise ctx.fail(f"a and b must have the same element type, got {a.element_type.value} "
                       f"and {b.element_type.value}")
    if a.rank != b.rank:
        raise ctx.fail(f"a and b must have the same rank, got {a.rank} and {b.rank}")
    m = _square(ctx, a, "a")
    if a.dimensions[:-2] != b.dimensions[:-2]:
        raise ctx.fail(f"a and b must have equal batch dimensions, got {list(a.dimensions[:-2])} "
                       f"and {list(b.dimensions[:-2])}")
    left = _bool_attr(ctx, "left_side")
    _bool_attr(ctx, "lower")
    _bool_attr(ctx, "unit_diagonal")
    transpose = str(ctx.attr("transpose_a", "NO_TRANSPOSE", required=False))
    if transpose not in TRANSPOSE_A:
        raise ctx.fail(f"transpose_a={transpose} is not one of {', '.join(TRANSPOSE_A)}")
    dim, which = (-2, "rows") if left else (-1, "columns")
    if b.dimensions[dim] != m:
        side = "left_side=true: op(a) * x = b" if left else "left_side=false: x * op(a) = b"
        raise ctx.fail(f"b must have {m} {which} to match a's {m}x{m} matrices ({side}), "
                       f"got {b.dimensions[dim]}")
    return Shape(b.element_type, b.dimensions)


# ---------------------------------------------------------------------------
# batch norm
# ---------------------------------------------------------------------------

#: The operands of each batch-norm op after ``operand``, by what they are:
#: rank-1 arrays with one value per feature, or arrays of the operand's shape.
_BATCH_NORM_OPERANDS = {
    "batch-norm-training": (("scale", "offset"), ()),
    "batch-norm-inference": (("scale", "offset", "mean", "variance"), ()),
    "batch-norm-grad": (("scale", "mean", "variance"), ("grad_output",)),
}


@_rule("batch-norm-training", "batch-norm-inference", "batch-norm-grad")
def _batch_norm(ctx: _Ctx) -> Shape:
    """Spec: BatchNormTraining(operand, scale, offset), BatchNormInference(operand,
    scale, offset, mean, variance), BatchNormGrad(operand, scale, mean, variance,
    grad_output), each with ``epsilon`` and ``feature_index``: the per-feature
    operands are rank-1 arrays of the operand's feature dimension, grad_output
    has the operand's shape, all of the operand's floating-point element type.
    Inference gives the operand's shape; training the tuple (output, batch_mean,
    batch_var); grad the tuple (grad_operand, grad_scale, grad_offset)."""
    per_feature, full_size = _BATCH_NORM_OPERANDS[ctx.opcode]
    ctx.arity(1 + len(per_feature) + len(full_size))
    operand = ctx.array(0, "operand")
    if not operand.element_type.is_float:
        raise ctx.fail(f"the operand must have a floating-point element type, got "
                       f"{operand.element_type.value}")
    feature = ctx.int_attr("feature_index")
    if not 0 <= feature < operand.rank:
        raise ctx.fail(f"feature_index={feature} must be a dimension of the operand {operand} "
                       f"(in [0, {operand.rank}))")
    _as_float(ctx, "epsilon", ctx.attr("epsilon"))
    features = Shape(operand.element_type, (operand.dimensions[feature],))
    for k, what in enumerate(per_feature, start=1):
        s = ctx.array(k, what)
        if s.rank != 1 or s.dimensions[0] != features.dimensions[0]:
            raise ctx.fail(f"{what} must be a rank-1 array of the {features.dimensions[0]} features "
                           f"(dimension {feature} of the operand), got {s}")
        _same_element_type(ctx, what, s, operand)
    for k, what in enumerate(full_size, start=1 + len(per_feature)):
        s = ctx.array(k, what)
        if s.dimensions != operand.dimensions:
            raise ctx.fail(f"{what} must have the operand's dimensions {list(operand.dimensions)}, got {s}")
        _same_element_type(ctx, what, s, operand)
    out = Shape(operand.element_type, operand.dimensions)
    return out if ctx.opcode == "batch-norm-inference" else Shape.tuple([out, features, features])


def _same_element_type(ctx: _Ctx, what: str, s: Shape, operand: Shape) -> None:
    if s.element_type != operand.element_type:
        raise ctx.fail(f"{what} must have the operand's element type "
                       f"{operand.element_type.value}, got {s.element_type.value}")


def _as_float(ctx, name, v) -> float:
    try:
        if isinstance(v, bool):
            raise TypeError
        return float(v)
    except (TypeError, ValueError):
        raise ctx.fail(f"attribute {name}={v!r} must be a number") from None


# ---------------------------------------------------------------------------
# collectives (spec: AllReduce, AllGather, ReduceScatter, AllToAll,
# CollectivePermute, ReplicaId, Send, Recv; the -start/-done forms and their
# shapes as XLA's shape_inference.cc and hlo_verifier.cc define them)
#
# The number of devices in a group is not known here when replica_groups is
# empty (it is the module's replica count) or in cross-replica-and-partition
# mode (it depends on the partition count): all-gather and reduce-scatter
# then read the shard count from the given result shape (the builder passes
# the one it computes, the verifier the instruction's), as XLA's verifier does.
# ---------------------------------------------------------------------------

def _device_rule(ctx: _Ctx, check, *args):
    """Run a check of xlac.hlo.collectives; its DeviceGroupError becomes a ShapeError."""
    try:
        return check(ctx, *args)
    except collectives.DeviceGroupError as e:
        message = str(e)
        if message.startswith(f"{ctx.opcode}: "):
            message = message[len(ctx.opcode) + 2:]
        raise ctx.fail(message) from None


def _collective_operands(ctx: _Ctx, what: str = "operand") -> list:
    if not ctx.shapes:
        raise ctx.fail("needs at least one operand")
    return [ctx.array(i, f"{what} {i}" if len(ctx.shapes) > 1 else what) for i in range(len(ctx.shapes))]


def _one_or_tuple(shapes: list) -> Shape:
    return shapes[0] if len(shapes) == 1 else Shape.tuple(shapes)


def _check_reducer(ctx: _Ctx, operands: list) -> None:
    """to_apply: (T[], T[]) -> T[] for the element type T of every operand."""
    comp = _callee(ctx)
    params = comp.parameter_shapes()
    for i, x in enumerate(operands):
        scalar = Shape(x.element_type, ())
        sig = f"({scalar}, {scalar}) -> {scalar}"
        if len(params) != 2 or not all(p.compatible(scalar) for p in params):
            raise ctx.fail(f"reducer {comp.name} must have the signature {sig} for operand {i} "
                           f"({x}), but its parameters are ({', '.join(str(p) for p in params)})")
        if not comp.root.shape.compatible(scalar):
            raise ctx.fail(f"reducer {comp.name} must have the signature {sig} for operand {i} "
                           f"({x}), but it returns {comp.root.shape}")


def _one_dimension(ctx: _Ctx, operands: list, what: str) -> int:
    dims = ctx.ints_attr("dimensions")
    if len(dims) != 1:
        raise ctx.fail(f"dimensions={{{','.join(map(str, dims))}}} must name exactly one {what}")
    d = dims[0]
    for i, x in enumerate(operands):
        if not 0 <= d < x.rank:
            raise ctx.fail(f"{what} {d} is out of range for operand {i} {x} of rank {x.rank}")
    return d


@_rule("all-reduce", "all-reduce-start")
def _all_reduce(ctx: _Ctx) -> Shape:
    """Spec: AllReduce.  One array or several (the result is then a tuple), each
    reduced element-wise with the scalar reducer; all-reduce-start has the same
    shape (XLA's InferAllReduceStartShape)."""
    operands = _collective_operands(ctx)
    _device_rule(ctx, collectives.check_replica_groups, False)
    _check_reducer(ctx, operands)
    return _one_or_tuple([_default_layout(x) for x in operands])


@_rule("collective-broadcast")
def _collective_broadcast(ctx: _Ctx) -> Shape:
    """XLA's CollectiveBroadcast (StableHLO ``collective_broadcast``): each
    device gets the operands of the first device of its replica group; the
    result has the operands' shapes.  XLA's newer form with a root chosen at
    run time (``has_dynamic_root=true``) is refused by name."""
    if str(ctx.attrs.get("has_dynamic_root", False)).lower() == "true":
        raise UnsupportedError("collective-broadcast with has_dynamic_root=true",
                               "only the group's first device as the root")
    operands = _collective_operands(ctx)
    _device_rule(ctx, collectives.check_replica_groups, False)
    return _one_or_tuple([_default_layout(x) for x in operands])


@_rule("ragged-all-to-all")
def _ragged_all_to_all(ctx: _Ctx) -> Shape:
    """XLA's RaggedAllToAll (jax's ``ragged_all_to_all``): ``input, output,
    input_offsets, send_sizes, output_offsets, recv_sizes``; input and output
    arrays of one element type that agree past their leading dimension; the
    four others integer vectors of one type and length N (a multiple of the
    group size: N / size slices for each device).  The result is the output
    with the received slices written in."""
    ctx.arity(6)
    x, out = ctx.array(0, "input"), ctx.array(1, "output")
    if x.element_type != out.element_type or x.rank == 0 or x.dimensions[1:] != out.dimensions[1:] \
            or out.rank != x.rank:
        raise ctx.fail(f"input {x} and output {out} must have one element type and agree past their leading "
                       "dimension")
    names = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")
    first = ctx.array(2, names[0])
    for i, name in enumerate(names, start=2):
        v = ctx.array(i, name)
        if v.rank != 1 or not v.element_type.is_integral or v.element_type.is_pred:
            raise ctx.fail(f"{name} must be an integer vector, got {v}")
        if v.element_type != first.element_type or v.dimensions != first.dimensions:
            raise ctx.fail(f"{name} {v} must have the type and length of input_offsets {first}")
    _device_rule(ctx, collectives.check_replica_groups, False)
    group = _device_rule(ctx, collectives.known_group_size)
    if group and first.dimensions[0] % group:
        raise ctx.fail(f"the {first.dimensions[0]} offsets must be a multiple of the group size {group}")
    return _default_layout(out)


def _shard_count(ctx: _Ctx, operands: list, results: list | None, d: int, gather: bool) -> int:
    """How many devices share the op: from the result shapes when given, else
    from the replica groups; checked against both."""
    group = _device_rule(ctx, collectives.known_group_size)
    if results is None:
        if group is None:
            raise ctx.fail("the shard count is not known from the replica groups (empty, or "
                           "cross-replica-and-partition mode): pass the result shape")
        return group
    if len(results) != len(operands):
        raise ctx.fail(f"the result has {len(results)} element(s) for {len(operands)} operand(s)")
    counts = set()
    for i, (x, r) in enumerate(zip(operands, results)):
        if not r.is_array or r.element_type != x.element_type or r.rank != x.rank or any(
                a != b for k, (a, b) in enumerate(zip(x.dimensions, r.dimensions)) if k != d):
            change = "multiplied" if gather else "divided"
            raise ctx.fail(f"result {r} must be operand {i} {x} with dimension {d} {change} by the "
                           "number of devices in the group")
        big, small = (r, x) if gather else (x, r)
        if small.dimensions[d] == 0:
            if big.dimensions[d] != 0:
                raise ctx.fail(f"result {r} cannot come from operand {i} {x} along dimension {d}")
            continue
        if big.dimensions[d] % small.dimensions[d]:
            raise ctx.fail(f"dimension {d} of the result {r} is not a multiple of operand {i} {x}'s"
                           if gather else
                           f"dimension {d} of operand {i} {x} is not a multiple of the result {r}'s")
        counts.add(big.dimensions[d] // small.dimensions[d])
    if len(counts) > 1:
        raise ctx.fail(f"the operands are split into different numbers of shards {sorted(counts)}")
    count = counts.pop() if counts else (group or 1)
    if count < 1:
        raise ctx.fail("the shard count must be at least 1")
    if group is not None and count != group:
        raise ctx.fail(f"the result has {count} shard(s) along dimension {d} but each replica group "
                       f"has {group} device(s)")
    return count


def _given_leaves(ctx: _Ctx, index: int | None, n: int) -> list | None:
    """The given result shape (or its element ``index``) as a list of n arrays; None if not given."""
    if ctx.shape is None:
        return None
    s = ctx.given_shape()
    if index is not None:
        if not s.is_tuple or len(s.tuple_shapes) < 2:
            raise ctx.fail(f"the result {s} must be a tuple (operand(s), result(s))")
        s = s.tuple_shapes[index]
    if n == 1:
        return [s]
    if not s.is_tuple:
        raise ctx.fail(f"the result {s} must be a tuple of {n} arrays (one per operand)")
    return list(s.tuple_shapes)


def _all_gather_results(ctx: _Ctx, start: bool) -> tuple[list, list]:
    operands = _collective_operands(ctx)
    _device_rule(ctx, collectives.check_replica_groups, True)
    d = _one_dimension(ctx, operands, "all-gather dimension")
    count = _shard_count(ctx, operands, _given_leaves(ctx, 1 if start else None, len(operands)), d, True)
    outs = []
    for x in operands:
        dims = list(x.dimensions)
        dims[d] *= count
        outs.append(Shape(x.element_type, dims))
    return operands, outs


@_rule("all-gather")
def _all_gather(ctx: _Ctx) -> Shape:
    """Spec: AllGather.  Dimension ``dimensions={d}`` of every operand made
    shard-count times larger (the group size; read from the result shape when the
    groups do not tell it)."""
    return _one_or_tuple(_all_gather_results(ctx, False)[1])


@_rule("all-gather-start")
def _all_gather_start(ctx: _Ctx) -> Shape:
    """XLA's InferAllGatherStartShape: (operand or tuple of operands, result or tuple of results)."""
    operands, outs = _all_gather_results(ctx, True)
    return Shape.tuple([_one_or_tuple([_default_layout(x) for x in operands]), _one_or_tuple(outs)])


@_rule("reduce-scatter")
def _reduce_scatter(ctx: _Ctx) -> Shape:
    """Spec: ReduceScatter.  Dimension ``dimensions={d}`` of every operand divided
    by the shard count, which must divide it."""
    operands = _collective_operands(ctx)
    _device_rule(ctx, collectives.check_replica_groups, True)
    d = _one_dimension(ctx, operands, "scatter dimension")
    _check_reducer(ctx, operands)
    count = _shard_count(ctx, operands, _given_leaves(ctx, None, len(operands)), d, False)
    outs = []
    for i, x in enumerate(operands):
        if x.dimensions[d] % count:
            raise ctx.fail(f"scatter dimension {d} of operand {i} {x} has size {x.dimensions[d]}, "
                           f"which is not divisible by the shard count {count}")
        dims = list(x.dimensions)
        dims[d] //= count
        outs.append(Shape(x.element_type, dims))
    return _one_or_tuple(outs)


@_rule("all-to-all")
def _all_to_all(ctx: _Ctx) -> Shape:
    """Spec: AllToAll.  Array form (``dimensions={d}``, one operand): blocks of
    dimension d are exchanged and concatenated back along d, so the result has
    the operand's shape (the builder adds the reshape and transpose that move
    them to another concat dimension).  Tuple form (no dimensions): N operands
    of one shape, N = the group size; the result is the tuple of N received."""
    operands = _collective_operands(ctx)
    _device_rule(ctx, collectives.check_replica_groups, True)
    group = _device_rule(ctx, collectives.known_group_size)
    if "dimensions" in ctx.attrs:
        if len(operands) != 1:
            raise ctx.fail(f"the array form (dimensions=...) takes one operand, got {len(operands)}")
        x = operands[0]
        d = _one_dimension(ctx, operands, "split dimension")
        if group is not None and x.dimensions[d] % group:
            raise ctx.fail(f"split dimension {d} of {x} has size {x.dimensions[d]}, which is not "
                           f"divisible by the split count {group} (the group size)")
        return _default_layout(x)
    for i, x in enumerate(operands):
        if x.element_type != operands[0].element_type or x.dimensions != operands[0].dimensions:
            raise ctx.fail(f"the operands of the tuple form must have one shape: operand {i} is {x}, "
                           f"operand 0 is {operands[0]}")
    if group is not None and len(operands) != group:
        raise ctx.fail(f"the tuple form takes one operand per device of the group: {group} device(s), "
                       f"{len(operands)} operand(s)")
    return Shape.tuple([_default_layout(x) for x in operands])


def _permute_operands(ctx: _Ctx) -> list:
    if "slice_sizes" in ctx.attrs:
        raise UnsupportedError(ctx.opcode, "the in-place form with slice_sizes")
    operands = _collective_operands(ctx)
    _device_rule(ctx, lambda c: (collectives.group_mode_of(c),
                                 collectives.check_source_target_pairs(collectives.source_target_pairs_of(c))))
    return [_default_layout(x) for x in operands]


@_rule("collective-permute")
def _collective_permute(ctx: _Ctx) -> Shape:
    """Spec: CollectivePermute.  The operand's shape (several operands: a tuple)."""
    return _one_or_tuple(_permute_operands(ctx))


@_rule("collective-permute-start")
def _collective_permute_start(ctx: _Ctx) -> Shape:
    """XLA's InferCollectivePermuteStartShape: (operand, result, context...): the
    context shapes are the given result's elements after the first two, by
    default (u32[], u32[]) as XLA's CreateCollectivePermuteStart makes them."""
    value = _one_or_tuple(_permute_operands(ctx))
    context = [Shape(U32, ()), Shape(U32, ())]
    if ctx.shape is not None:
        s = ctx.given_shape()
        if not s.is_tuple or len(s.tuple_shapes) < 2:
            raise ctx.fail(f"the result {s} must be a tuple (operand, result, context...)")
        context = [_default_layout(t) for t in s.tuple_shapes[2:]]
    return Shape.tuple([value, value] + context)


def _async_element(ctx: _Ctx, index: int, start: str) -> Shape:
    ctx.arity(1)
    s = ctx.shapes[0]
    if not s.is_tuple or len(s.tuple_shapes) <= index:
        raise ctx.fail(f"the operand must be the tuple a {start} returns, got {s}")
    return _default_layout(s.tuple_shapes[index])


@_rule("all-reduce-done")
def _all_reduce_done(ctx: _Ctx) -> Shape:
    """XLA's InferAllReduceDoneShape: the all-reduce-start's value, forwarded."""
    ctx.arity(1)
    return _default_layout(ctx.shapes[0])


@_rule("all-gather-done")
def _all_gather_done(ctx: _Ctx) -> Shape:
    """XLA's InferAllGatherDoneShape: element 1 (the results) of the all-gather-start."""
    return _async_element(ctx, 1, "all-gather-start")


@_rule("collective-permute-done")
def _collective_permute_done(ctx: _Ctx) -> Shape:
    """XLA's InferCollectivePermuteDoneShape: element 1 of the collective-permute-start."""
    return _async_element(ctx, 1, "collective-permute-start")


@_rule("async-start")
def _async_start(ctx: _Ctx) -> Shape:
    """XLA's async wrapper: ((operands), what ``calls`` returns, context...), the
    context (XLA's s32[] by default) as written."""
    value = _applied(ctx, "calls")
    operands = Shape.tuple([_default_layout(s) for s in ctx.shapes])
    if ctx.shape is None:
        return Shape.tuple([operands, value, Shape(PrimitiveType.S32, ())])
    s = ctx.given_shape()
    if not (s.is_tuple and len(s.tuple_shapes) >= 2 and s.tuple_shapes[0].is_tuple):
        raise ctx.fail(f"the result {s} must be ((async operands), async results, context...)")
    if not s.tuple_shapes[0].compatible(operands):
        raise ctx.fail(f"element 0 of the result, {s.tuple_shapes[0]}, must be the operands {operands}")
    if not s.tuple_shapes[1].compatible(value):
        raise ctx.fail(f"element 1 of the result, {s.tuple_shapes[1]}, must be what "
                       f"{ctx.attrs['calls'].name} returns, {value}")
    return s


def _async_state(ctx: _Ctx) -> Shape:
    ctx.arity(1)
    s = ctx.shapes[0]
    if not (s.is_tuple and len(s.tuple_shapes) >= 2 and s.tuple_shapes[0].is_tuple):
        raise ctx.fail(f"the operand must be an async-start or async-update, ((operands), results, "
                       f"context...), got {s}")
    return s


@_rule("async-update")
def _async_update(ctx: _Ctx) -> Shape:
    """The async-start's (or previous update's) state, passed on."""
    return _async_state(ctx)


@_rule("async-done")
def _async_done(ctx: _Ctx) -> Shape:
    """The results: element 1 of the async state."""
    return _async_state(ctx).tuple_shapes[1]


@_rule("replica-id", "partition-id")
def _device_id(ctx: _Ctx) -> Shape:
    """Spec: ReplicaId (partition-id likewise): a u32 scalar."""
    ctx.arity(0)
    return Shape(U32, ())


def _token(ctx: _Ctx, i: int, what: str) -> None:
    s = ctx.shapes[i]
    if not s.is_token:
        raise ctx.fail(f"{what} must be a token, got {s}")


@_rule("after-all")
def _after_all(ctx: _Ctx) -> Shape:
    """Spec: AfterAll: any number of tokens in, one token out."""
    for i in range(len(ctx.shapes)):
        _token(ctx, i, f"operand {i}")
    return Shape.token()


def _context(data: Shape) -> Shape:
    return Shape.tuple([_default_layout(data), Shape(U32, ()), Shape.token()])


@_rule("send")
def _send(ctx: _Ctx) -> Shape:
    """Spec: Send: send(data, token) -> (data, u32[] context, token[])."""
    ctx.arity(2)
    if ctx.shapes[0].is_token:
        raise ctx.fail(f"operand 0 is the data to send, got {ctx.shapes[0]}")
    _token(ctx, 1, "operand 1")
    return _context(ctx.shapes[0])


def _is_context(s: Shape) -> bool:
    return (s.is_tuple and len(s.tuple_shapes) == 3 and s.tuple_shapes[1].compatible(Shape(U32, ()))
            and s.tuple_shapes[2].is_token)


@_rule("send-done")
def _send_done(ctx: _Ctx) -> Shape:
    """send-done(send) -> token[]."""
    ctx.arity(1)
    if not _is_context(ctx.shapes[0]):
        raise ctx.fail(f"the operand must be a send's (data, u32[], token[]), got {ctx.shapes[0]}")
    return Shape.token()


@_rule("recv")
def _recv(ctx: _Ctx) -> Shape:
    """Spec: Recv: recv(token) -> (data, u32[] context, token[]); the data shape
    is the given result's element 0."""
    ctx.arity(1)
    _token(ctx, 0, "operand 0")
    s = ctx.given_shape()
    if not _is_context(s) or s.tuple_shapes[0].is_token:
        raise ctx.fail(f"the result must be (data, u32[], token[]), got {s}")
    return _context(s.tuple_shapes[0])


@_rule("recv-done")
def _recv_done(ctx: _Ctx) -> Shape:
    """recv-done(recv) -> (data, token[])."""
    ctx.arity(1)
    if not _is_context(ctx.shapes[0]):
        raise ctx.fail(f"the operand must be a recv's (data, u32[], token[]), got {ctx.shapes[0]}")
    return Shape.tuple([_default_layout(ctx.shapes[0].tuple_shapes[0]), Shape.token()])


# ---------------------------------------------------------------------------
# random numbers (spec: RngUniform, RngNormal, RngBitGenerator; the algorithms
# and their state shapes: xlac.hlo.rng)
# ---------------------------------------------------------------------------

@_rule("rng-bit-generator")
def _rng_bit_generator(ctx: _Ctx) -> Shape:
    """Spec: RngBitGenerator: ``(state, bits) rng-bit-generator(state),
    algorithm=A``: the state is ``u64[n]`` with an ``n`` the algorithm takes
    (Threefry 2, Philox and the default 2 or 3); the result is the state's
    shape and an array of u8, u16, u32 or u64 (the given shape)."""
    ctx.arity(1)
    name = ctx.attr("algorithm")
    alg = rng.ALGORITHMS.get(str(name))
    if alg is None:
        raise ctx.fail(f"algorithm={name} is not one of {', '.join(rng.ALGORITHMS)}")
    state = ctx.array(0, "the state")
    sizes = " or ".join(f"u64[{n}]" for n in alg.state_sizes)
    if state.element_type != U64 or state.rank != 1 or state.dimensions[0] not in alg.state_sizes:
        raise ctx.fail(f"the state of {alg.name} must be {sizes}, got {state}")
    given = ctx.given_shape()
    if not given.is_tuple or len(given.tuple_shapes) != 2:
        raise ctx.fail(f"the result must be a tuple (new state, bits), got {given}")
    new_state, bits = given.tuple_shapes
    if not new_state.compatible(state):
        raise ctx.fail(f"the new state {new_state} must have the state's shape {state}")
    if not bits.is_array or bits.element_type not in rng.BIT_TYPES.values():
        raise ctx.fail(f"the bits must be an array of u8, u16, u32 or u64, got {bits}")
    return given


def _rng_type_ok(distribution: str, pt: PrimitiveType) -> bool:
    """Whether ``rng`` makes ``pt`` numbers (the spec: uniform of pred,
    integers and floats; normal of floats)."""
    if distribution == "rng_normal":
        return pt.is_float
    return pt.is_float or pt.is_integral or pt.is_pred


@_rule("rng")
def _rng(ctx: _Ctx) -> Shape:
    """Spec: RngUniform(a, b, shape), RngNormal(mu, sigma, shape): ``rng(a,
    b), distribution=rng_uniform|rng_normal``; ``a`` and ``b`` are scalars of
    the result's element type (pred, integer or floating point for uniform,
    floating point for normal); the result is the given shape."""
    ctx.arity(2)
    distribution = str(ctx.attr("distribution"))
    if distribution not in rng.DISTRIBUTIONS:
        raise ctx.fail(f"distribution={distribution} is not one of {', '.join(rng.DISTRIBUTIONS)}")
    names = ("a", "b") if distribution == "rng_uniform" else ("mu", "sigma")
    params = [ctx.array(k, n) for k, n in enumerate(names)]
    given = ctx.given_shape()
    if not given.is_array:
        raise ctx.fail(f"the result must be an array, got {given}")
    pt = given.element_type
    if not _rng_type_ok(distribution, pt):
        kinds = "floating-point" if distribution == "rng_normal" else "pred, integer or floating-point"
        raise ctx.fail(f"{distribution} makes {kinds} numbers, not {pt.value}")
    for n, p in zip(names, params):
        if p.rank != 0 or p.element_type != pt:
            raise ctx.fail(f"{n} must be a scalar of the result's element type {pt.value}, got {p}")
    return given


@_rule("rng-get-and-update-state")
def _rng_get_and_update_state(ctx: _Ctx) -> Shape:
    """``u64[2] rng-get-and-update-state(), delta=N``: the program's generator
    state before adding ``N`` (a non-negative integer) to it."""
    ctx.arity(0)
    delta = ctx.int_attr("delta")
    if delta < 0:
        raise ctx.fail(f"delta={delta} must not be negative")
    return Shape(U64, (2,))


# Infeed and outfeed (xlac.hlo.feeds)
# ---------------------------------------------------------------------------

def _feed_data(ctx: _Ctx, data: Shape, what: str) -> None:
    """Transferred data: an array, or a tuple of arrays (spec: Infeed)."""
    if not isinstance(data, Shape):
        raise ctx.fail(f"{what} must be a Shape, got {data!r}")
    if data.is_token:
        raise ctx.fail(f"{what} is a token; only arrays and tuples of arrays are transferred")
    for i, s in enumerate(data.tuple_shapes if data.is_tuple else ()):
        if s.is_tuple:
            raise ctx.fail(f"{what} {data}: nested tuple shapes are not supported (element {i} is {s})")
        if s.is_token:
            raise ctx.fail(f"{what} {data}: element {i} is a token; only arrays are transferred")


@_rule("infeed")
def _infeed(ctx: _Ctx) -> Shape:
    """Spec: Infeed: infeed(token) -> (data, token[]); the data shape, with the
    layout the data arrives in, is the given result's element 0."""
    ctx.arity(1)
    _token(ctx, 0, "operand 0")
    s = ctx.given_shape()
    if not (s.is_tuple and len(s.tuple_shapes) == 2 and s.tuple_shapes[1].is_token):
        raise ctx.fail(f"the result must be (data, token[]), got {s}")
    _feed_data(ctx, s.tuple_shapes[0], "the infeed data")
    return s


def _shape_attr(ctx: _Ctx, name: str) -> Shape | None:
    v = ctx.attrs.get(name)
    if v is None or isinstance(v, Shape):
        return v
    try:
        return parse_shape(str(v))
    except ValueError as e:
        raise ctx.fail(f"{name}={v} is not a shape: {e}") from None


@_rule("outfeed")
def _outfeed(ctx: _Ctx) -> Shape:
    """XLA's Outfeed: outfeed(data, token) -> token[]; ``outfeed_shape`` (the
    data's shape with the layout it is transferred in) must be compatible with
    the operand's; without it, the operand's shape is used."""
    ctx.arity(2)
    _feed_data(ctx, ctx.shapes[0], "operand 0 (the data)")
    _token(ctx, 1, "operand 1")
    given = _shape_attr(ctx, "outfeed_shape")
    if given is not None and not given.compatible(ctx.shapes[0]):
        raise ctx.fail(f"outfeed_shape {given} must be compatible with the operand shape {ctx.shapes[0]}")
    return Shape.token()


@_rule("custom-call")
def _custom_call(ctx: _Ctx) -> Shape:
    """Spec: CustomCall: the result shape is the one given (the target decides
    it); the attributes as ``xlac.hlo.custom_call.check_custom_call`` checks them
    (layout constraints, jax's LAPACK targets)."""
    s = ctx.given_shape()
    try:
        return custom_call.check_custom_call(ctx.shapes, ctx.attrs, s)
    except ValueError as e:
        raise ctx.fail(str(e)) from None


# -- XLA-internal plumbing: sharding domains and asynchronous copies ------------------

@_rule("domain")
def _domain(ctx: _Ctx) -> Shape:
    """XLA's ``domain``: a boundary between sharding domains; its value is its operand's."""
    ctx.arity(1)
    return ctx.shapes[0]


@_rule("copy-start")
def _copy_start(ctx: _Ctx) -> Shape:
    """XLA's ``copy-start``: ``(destination, source, u32[] context)``; the
    destination may have another layout (a memory space ``S(n)``) when the
    text gives the shape."""
    ctx.arity(1)
    s = ctx.shapes[0]
    if not s.is_array:
        raise ctx.fail(f"the operand must be an array, got {s}")
    inferred = Shape.tuple([s, s, Shape(U32, ())])
    given = ctx.shape
    if given is None:
        return inferred
    ok = (isinstance(given, Shape) and given.is_tuple and len(given.tuple_shapes) == 3
          and all(t.compatible(s) for t in given.tuple_shapes[:2])
          and given.tuple_shapes[2].compatible(Shape(U32, ())))
    if not ok:
        raise ctx.fail(f"the result must be (destination, source, u32[]) of the operand's shape {s}, got {given}")
    return given


@_rule("copy-done")
def _copy_done(ctx: _Ctx) -> Shape:
    """XLA's ``copy-done``: element 0 (the destination) of the ``copy-start``."""
    return _async_element(ctx, 0, "copy-start")


@_rule("stochastic-convert")
def _stochastic_convert(ctx: _Ctx) -> Shape:
    """XLA's StochasticConvert (``InferStochasticConvertShape``): a float operand
    rounded to a signed integer type, up or down at random — up when the random
    unsigned value (operand 1: the operand's dimensions and bit width) is below
    the fraction scaled to its range.  XLA converts to signed integers only."""
    ctx.arity(2)
    s, r = ctx.array(0), ctx.array(1)
    t = _target_type(ctx)
    if not s.element_type.is_float:
        raise ctx.fail(f"the operand must be floating point, got {s}")
    if not (r.element_type.is_unsigned_int and r.element_type.bit_width == s.element_type.bit_width):
        raise ctx.fail(f"the random operand must be an unsigned integer of the operand's {s.element_type.bit_width} "
                       f"bits, got {r}")
    if r.dimensions != s.dimensions:
        raise ctx.fail(f"the random operand {r} must have the operand's dimensions {list(s.dimensions)}")
    if not t.is_signed_int:
        raise ctx.fail(f"converts floats to signed integers only (as XLA does), not to {t.value}")
    if ctx.shape is not None and ctx.shape.is_array and ctx.shape.dimensions != s.dimensions:
        raise ctx.fail(f"result {ctx.shape} must keep the operand's dimensions {list(s.dimensions)}")
    return Shape(t, s.dimensions)
