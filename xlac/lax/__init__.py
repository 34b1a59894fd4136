"""``xlac.lax``: jax.lax's functions for the spec's operations, on traced values.

Names, argument order and defaults are jax.lax's (``reshape(operand, new_sizes,
dimensions=None)``, ``reduce_window(operand, init_value, computation,
window_dimensions, window_strides, padding, ...)``, ``sort(operand,
dimension=-1, ...)``), and a Python callable goes wherever XLA expects a
computation (``reduce``, ``reduce_window``, ``while_loop``, ``cond``, ``switch``,
``scan``, ``map``, ``sort``'s ``comparator``, ``scatter_apply``): it is traced into
a sub-computation (:mod:`xlac.frontend.tracer`), and may read traced values of
the function around it (captured as extra operands where HLO allows).

Operands are Tracers (inside ``@xlac.jit``), XlaOps of a hand-built
``XlaBuilder``, or Python/numpy scalars and arrays (constants).  Results are
:class:`~xlac.frontend.tracer.Tracer` values (``.op`` is the XlaOp).  As in jax,
the elementwise functions are strict: operands of one dtype (a Python scalar takes
the other's) and one shape (a scalar broadcasts); the numpy-style operators of a
Tracer (``x + 1``, ``x @ w``) broadcast and promote.  Errors: ``TypeError`` for
mismatched dtypes or a wrong kind of argument, ``xlac.ShapeError`` (a ValueError)
for ill-shaped ops, both naming the function.  Linear algebra: :mod:`xlac.lax.linalg`.
"""
from __future__ import annotations

import builtins as _bi
import operator as _operator
from dataclasses import dataclass

import numpy as np

from ..errors import ShapeError
from ..frontend import ops
from ..frontend import tracer as _t
from ..frontend.builder import XlaComputation, XlaOp
from ..frontend.tracer import Tracer, python_scalar_dtype, to_op
from ..shape import PrimitiveType, Shape

from . import linalg  # noqa: E402,F401  (xlac.lax.linalg)

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _is_traced(x) -> bool:
    return isinstance(x, (Tracer, XlaOp))


def _ptype(dtype) -> PrimitiveType:
    if isinstance(dtype, PrimitiveType):
        return dtype
    return PrimitiveType.from_dtype(np.dtype(dtype))


def _np_dtype(dtype) -> np.dtype:
    return dtype.dtype if isinstance(dtype, PrimitiveType) else np.dtype(dtype)


def _op(x, name: str, like: XlaOp | None = None) -> XlaOp:
    return to_op(x, like=like, op=f"lax.{name}")


def _wrap(op: XlaOp, weak: bool = False) -> Tracer:
    return Tracer(op, weak)


def _same_dtype(name: str, *xs) -> list:
    """XlaOps of one dtype: typed operands must agree (TypeError, as jax.lax); Python
    scalars take the typed operands' dtype."""
    typed = [x for x in xs if _is_traced(x) and not (isinstance(x, Tracer) and x.weak)] or \
            [x for x in xs if _is_traced(x)]
    if typed:
        dts = {_t._dtype_of(x) for x in typed}
        if len(dts) > 1:
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                            + ", ".join(str(_t._dtype_of(x)) for x in typed))
        dt = _t._dtype_of(typed[0])
    else:
        dt = python_scalar_dtype(xs[0]) if _t._is_python_scalar(xs[0]) else np.asarray(xs[0]).dtype
    like = _t._op_of(typed[0]) if typed else None
    return [_t.convert(x, dt, f"lax.{name}", like) if not _is_traced(x) or isinstance(x, Tracer) and x.weak
            else _op(x, name) for x in xs]


def _same_shape(name: str, ops_: list) -> list:
    """Operands of one shape: rank-0 ones broadcast, other differences are TypeErrors."""
    shapes = [_bi.tuple(o.shape.dimensions) for o in ops_]
    full = [s for s in shapes if s]
    if full and _bi.any(s != full[0] for s in full):
        raise TypeError(f"lax.{name} got incompatible shapes for broadcasting: "
                        + ", ".join(str(s) for s in shapes))
    if not full:
        return ops_
    return [o if o.shape.rank else ops.broadcast(o, list(full[0])) for o in ops_]


def _weak_all(*xs) -> bool:
    return _bi.all(_t._weak(x) for x in xs)


def _nary(name: str, fn, *xs) -> Tracer:
    ops_ = _same_shape(name, _same_dtype(name, *xs))
    return _wrap(fn(*ops_), _weak_all(*xs))


def _make_binary(name: str, fn):
    def f(x, y):
        return _nary(name, fn, x, y)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Element-wise ``{name}`` (jax.lax.{name}; spec: the op behind ``xlac.ops.{fn.__name__}``).  "
                 "``x``, ``y``: arrays of one dtype and shape (a scalar broadcasts; a Python scalar "
                 "takes the other's dtype).  TypeError otherwise.")
    return f


def _make_unary(name: str, fn):
    def f(x):
        return _wrap(fn(_op(x, name)), _t._weak(x))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Element-wise ``{name}`` (jax.lax.{name}; spec: *Element-wise unary functions*, "
                 f"``xlac.ops.{fn.__name__}``).  Result: the operand's shape.")
    return f


def _make_compare(name: str, direction: str):
    def f(x, y):
        ops_ = _same_shape(name, _same_dtype(name, x, y))
        return _wrap(ops.compare(ops_[0], ops_[1], direction))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Element-wise ``x {direction} y`` -> bool (jax.lax.{name}; spec: *Element-wise "
                 "comparison operations*).  Operands as for :func:`add`.")
    return f


#: jax.lax name -> xlac.ops function, the elementwise binary ops.
_BINARY = {
    "add": ops.add, "sub": ops.sub, "mul": ops.mul, "div": ops.div, "rem": ops.rem, "pow": ops.pow,
    "max": ops.max, "min": ops.min, "atan2": ops.atan2, "complex": ops.complex,
    "bitwise_and": ops.and_, "bitwise_or": ops.or_, "bitwise_xor": ops.xor,
    "shift_left": ops.shift_left, "shift_right_arithmetic": ops.shift_right_arithmetic,
    "shift_right_logical": ops.shift_right_logical,
}
#: jax.lax name -> xlac.ops function, the elementwise unary ops.
_UNARY = {
    "abs": ops.abs, "cbrt": ops.cbrt, "ceil": ops.ceil, "clz": ops.clz, "cos": ops.cos, "erf": ops.erf,
    "exp": ops.exp, "expm1": ops.expm1, "floor": ops.floor, "imag": ops.imag, "is_finite": ops.is_finite,
    "log": ops.log, "log1p": ops.log1p, "logistic": ops.logistic, "neg": ops.neg,
    "bitwise_not": ops.not_, "population_count": ops.population_count, "real": ops.real,
    "rsqrt": ops.rsqrt, "sign": ops.sign, "sin": ops.sin, "sqrt": ops.sqrt, "tan": ops.tan,
    "tanh": ops.tanh,
}
_COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}

for _name, _fn in _BINARY.items():
    globals()[_name] = _make_binary(_name, _fn)
for _name, _fn in _UNARY.items():
    globals()[_name] = _make_unary(_name, _fn)
for _name, _dir in _COMPARE.items():
    globals()[_name] = _make_compare(_name, _dir)
del _name, _fn, _dir


def _one(x, dtype: np.dtype, like: XlaOp) -> XlaOp:
    return ops.constant(like.builder, np.ones((), dtype)) if x is None else x


def exp2(x) -> Tracer:
    """``2 ** x`` element-wise (jax.lax.exp2): ``exp(x * ln 2)``."""
    o = _op(x, "exp2")
    ln2 = ops.constant(o.builder, np.array(np.log(2), o.shape.dtype))
    return _wrap(ops.exp(ops.mul(o, ln2)), _t._weak(x))


def square(x) -> Tracer:
    """``x * x`` element-wise (jax.lax.square)."""
    o = _op(x, "square")
    return _wrap(ops.mul(o, o), _t._weak(x))


def integer_pow(x, y: int) -> Tracer:
    """``x ** y`` for a Python int ``y`` (jax.lax.integer_pow): repeated squaring, a
    negative ``y`` divides one by the power."""
    y = _operator.index(y)
    return _wrap(_t.integer_pow(_op(x, "integer_pow"), y), _t._weak(x))


def round(x, rounding_method=0) -> Tracer:  # noqa: A001 - jax's name
    """Round to integral values (jax.lax.round): ``rounding_method`` 0 /
    ``'AWAY_FROM_ZERO'`` (default) or 1 / ``'TO_NEAREST_EVEN'``."""
    method = getattr(rounding_method, "name", rounding_method)
    if method in (0, "AWAY_FROM_ZERO"):
        return _wrap(ops.round_nearest_afz(_op(x, "round")))
    if method in (1, "TO_NEAREST_EVEN"):
        return _wrap(ops.round_nearest_even(_op(x, "round")))
    raise ValueError(f"lax.round: rounding_method must be 0/'AWAY_FROM_ZERO' or 1/'TO_NEAREST_EVEN', "
                     f"got {rounding_method!r}")


def select(pred, on_true, on_false) -> Tracer:
    """``on_true`` where ``pred`` else ``on_false`` (jax.lax.select; spec: *Select*): ``pred``
    bool of the operands' shape or a scalar; the branches of one dtype and shape."""
    t, f = _same_shape("select", _same_dtype("select", on_true, on_false))
    p = _op(pred, "select")
    if p.shape.dtype != np.bool_:
        raise TypeError(f"lax.select: pred must be bool, got {p.shape.dtype}")
    return _wrap(ops.select(p, t, f), _weak_all(on_true, on_false))


def clamp(min, x, max) -> Tracer:  # noqa: A002 - jax's argument names
    """``min(max(x, min), max)`` (jax.lax.clamp; spec: *Clamp*): bounds scalars or of x's shape."""
    lo, xo, hi = _same_dtype("clamp", min, x, max)
    return _wrap(ops.clamp(lo, xo, hi), _t._weak(x))


def convert_element_type(operand, new_dtype) -> Tracer:
    """``operand`` converted to ``new_dtype`` (jax.lax.convert_element_type; spec:
    *ConvertElementType*): a numpy dtype, type or xlac PrimitiveType."""
    return _wrap(_t.convert(operand, _np_dtype(new_dtype), "lax.convert_element_type"))


def bitcast_convert_type(operand, new_dtype) -> Tracer:
    """The bits of ``operand`` read as ``new_dtype`` (jax.lax.bitcast_convert_type; spec:
    *BitcastConvertType*): a narrower type adds a minor dimension, a wider one removes it."""
    return _wrap(ops.bitcast_convert_type(_op(operand, "bitcast_convert_type"), _ptype(new_dtype)))


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int) -> Tracer:
    """Round to a float format of the given bit counts (jax.lax.reduce_precision; spec: *ReducePrecision*)."""
    return _wrap(ops.reduce_precision(_op(operand, "reduce_precision"), exponent_bits, mantissa_bits))


def stop_gradient(x):
    """``x`` itself (jax.lax.stop_gradient): xlac does not differentiate."""
    return x


# ---------------------------------------------------------------------------
# shapes
# ---------------------------------------------------------------------------

def broadcast(operand, sizes) -> Tracer:
    """Add leading dimensions ``sizes`` (jax.lax.broadcast; spec: *Broadcast*)."""
    return _wrap(ops.broadcast(_op(operand, "broadcast"), sizes), _t._weak(operand))


def broadcast_in_dim(operand, shape, broadcast_dimensions) -> Tracer:
    """Broadcast to ``shape``, operand dimension i going to ``broadcast_dimensions[i]``
    (jax.lax.broadcast_in_dim; spec: *BroadcastInDim*)."""
    return _wrap(ops.broadcast_in_dim(_op(operand, "broadcast_in_dim"), shape, broadcast_dimensions),
                 _t._weak(operand))


def reshape(operand, new_sizes, dimensions=None) -> Tracer:
    """Reshape to ``new_sizes`` in row-major order, after transposing by ``dimensions``
    if given (jax.lax.reshape; spec: *Reshape*).  Note the order: ``xlac.ops.reshape`` is
    XLA's ``(operand, dimensions, new_sizes)``."""
    o = _op(operand, "reshape")
    if dimensions is None:
        return _wrap(ops.reshape(o, new_sizes), _t._weak(operand))
    return _wrap(ops.reshape(o, dimensions, new_sizes), _t._weak(operand))


def squeeze(array, dimensions) -> Tracer:
    """Remove the size-1 ``dimensions`` (jax.lax.squeeze)."""
    o = _op(array, "squeeze")
    dims = [d % o.shape.rank for d in dimensions]
    for d in dims:
        if o.shape.dimensions[d] != 1:
            raise ShapeError(f"lax.squeeze: dimension {d} has size {o.shape.dimensions[d]}, not 1 "
                             f"(operand shape: {o.shape})")
    return _wrap(ops.reshape(o, [n for i, n in enumerate(o.shape.dimensions) if i not in dims]),
                 _t._weak(array))


def expand_dims(array, dimensions) -> Tracer:
    """Insert size-1 dimensions at ``dimensions`` of the result (jax.lax.expand_dims)."""
    o = _op(array, "expand_dims")
    rank = o.shape.rank + len(dimensions)
    dims = sorted(d % rank for d in dimensions)
    shape, it = [], iter(o.shape.dimensions)
    for i in range(rank):
        shape.append(1 if i in dims else next(it))
    return _wrap(ops.reshape(o, shape), _t._weak(array))


def transpose(operand, permutation) -> Tracer:
    """Permute dimensions (jax.lax.transpose; spec: *Transpose*)."""
    return _wrap(ops.transpose(_op(operand, "transpose"), permutation), _t._weak(operand))


def rev(operand, dimensions) -> Tracer:
    """Reverse along ``dimensions`` (jax.lax.rev; spec: *Rev*)."""
    return _wrap(ops.rev(_op(operand, "rev"), dimensions), _t._weak(operand))


def slice(operand, start_indices, limit_indices, strides=None) -> Tracer:  # noqa: A001
    """``operand[start:limit:stride]`` per dimension (jax.lax.slice; spec: *Slice*)."""
    return _wrap(ops.slice(_op(operand, "slice"), start_indices, limit_indices, strides), _t._weak(operand))


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0) -> Tracer:
    """:func:`slice` along ``axis`` only (jax.lax.slice_in_dim); None bounds mean the ends,
    negative ones count from the end."""
    o = _op(operand, "slice_in_dim")
    n = o.shape.dimensions[axis]
    start = 0 if start_index is None else start_index % n if start_index < 0 else start_index
    limit = n if limit_index is None else limit_index + n if limit_index < 0 else limit_index
    return _wrap(ops.slice_in_dim(o, start, limit, stride, axis), _t._weak(operand))


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True) -> Tracer:
    """Element ``index`` of ``axis`` (jax.lax.index_in_dim); ``keepdims=False`` drops the axis."""
    o = _op(operand, "index_in_dim")
    n = o.shape.dimensions[axis]
    if not -n <= index < n:
        raise IndexError(f"lax.index_in_dim: index {index} is out of bounds for axis {axis} of size {n}")
    out = slice_in_dim(o, index % n, index % n + 1, 1, axis)
    return out if keepdims else squeeze(out, [axis])


def dynamic_slice(operand, start_indices, slice_sizes) -> Tracer:
    """The ``slice_sizes`` window at run-time ``start_indices`` (jax.lax.dynamic_slice; spec:
    *DynamicSlice*): a negative start counts from the end of its dimension, then every
    start is clamped so the window fits (``xlac.ops.dynamic_slice`` only clamps)."""
    o = _op(operand, "dynamic_slice")
    starts = _starts("dynamic_slice", start_indices, o)
    return _wrap(ops.dynamic_slice(o, starts, slice_sizes), _t._weak(operand))


def dynamic_update_slice(operand, update, start_indices) -> Tracer:
    """``operand`` with ``update`` written at ``start_indices`` (jax.lax.dynamic_update_slice;
    spec: *DynamicUpdateSlice*): starts as in :func:`dynamic_slice`."""
    o, u = _same_dtype("dynamic_update_slice", operand, update)
    return _wrap(ops.dynamic_update_slice(o, u, _starts("dynamic_update_slice", start_indices, o)))


def _starts(name: str, start_indices, o: XlaOp) -> list:
    """jax.lax's start indices (negative ones count from the end) as scalar XlaOps."""
    items = list(start_indices) if not _is_traced(start_indices) else \
        [index_in_dim(start_indices, i, keepdims=False) for i in range(_t._shape_of(start_indices)[0])]
    return _t.dynamic_starts(items, o.shape.dimensions, f"lax.{name}", o)


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0) -> Tracer:
    """:func:`dynamic_slice` along ``axis`` (jax.lax.dynamic_slice_in_dim)."""
    o = _op(operand, "dynamic_slice_in_dim")
    starts = [0] * o.shape.rank
    starts[axis] = start_index
    sizes = list(o.shape.dimensions)
    sizes[axis] = slice_size
    return dynamic_slice(o, starts, sizes)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True) -> Tracer:
    """Element ``index`` (run time) of ``axis`` (jax.lax.dynamic_index_in_dim)."""
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else squeeze(out, [axis])


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int) -> Tracer:
    """:func:`dynamic_update_slice` along ``axis`` (jax.lax.dynamic_update_slice_in_dim)."""
    starts = [0] * _op(operand, "dynamic_update_slice_in_dim").shape.rank
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


def concatenate(operands, dimension: int) -> Tracer:
    """Join ``operands`` along ``dimension`` (jax.lax.concatenate; spec: *Concatenate*)."""
    xs = _same_dtype("concatenate", *operands)
    return _wrap(ops.concat_in_dim(xs[0].builder, xs, dimension))


def pad(operand, padding_value, padding_config) -> Tracer:
    """Pad with ``padding_value``; ``padding_config`` is ``(low, high, interior)`` per
    dimension, low/high may be negative (jax.lax.pad; spec: *Pad*)."""
    o, v = _same_dtype("pad", operand, padding_value)
    return _wrap(ops.pad(o, v, padding_config), _t._weak(operand))


def iota(dtype, size: int) -> Tracer:
    """``[0, 1, ..., size-1]`` of ``dtype`` (jax.lax.iota; spec: *Iota*).  Needs a function
    being traced (inside ``@xlac.jit`` or a traced callable)."""
    b = _t.current_builder(op="lax.iota")
    return _wrap(ops.iota(b, Shape(_ptype(dtype), (_operator.index(size),)), 0))


def broadcasted_iota(dtype, shape, dimension: int) -> Tracer:
    """Indices along ``dimension`` of an array of ``shape`` (jax.lax.broadcasted_iota)."""
    b = _t.current_builder(op="lax.broadcasted_iota")
    return _wrap(ops.iota(b, Shape(_ptype(dtype), _bi.tuple(shape)), dimension))


def full(shape, fill_value, dtype=None) -> Tracer:
    """An array of ``shape`` filled with ``fill_value`` (jax.lax.full); ``dtype`` defaults to
    the value's (a Python scalar: its 32-bit type).  Needs a function being traced."""
    if _is_traced(fill_value):
        v = _t.convert(fill_value, _np_dtype(dtype), "lax.full") if dtype is not None else _op(fill_value, "full")
    else:
        b = _t.current_builder(op="lax.full")
        dt = _np_dtype(dtype) if dtype is not None else (
            python_scalar_dtype(fill_value) if _t._is_python_scalar(fill_value) else np.asarray(fill_value).dtype)
        v = ops.constant(b, _t.constant_as(fill_value, dt, "lax.full"))
    return _wrap(ops.broadcast(v, list(shape)), dtype is None and _t._weak(fill_value))


def full_like(x, fill_value, dtype=None, shape=None) -> Tracer:
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``
    (jax.lax.full_like)."""
    o = _op(x, "full_like")
    dt = _np_dtype(dtype) if dtype is not None else o.shape.dtype
    v = _t.convert(fill_value, dt, "lax.full_like") if _is_traced(fill_value) else \
        ops.constant(o.builder, _t.constant_as(fill_value, dt, "lax.full_like"))
    return _wrap(ops.broadcast(v, list(o.shape.dimensions if shape is None else shape)))


def zeros_like_array(x) -> Tracer:
    """Zeros of ``x``'s shape and dtype."""
    return full_like(x, 0)


# ---------------------------------------------------------------------------
# tracing callables into computations
# ---------------------------------------------------------------------------

def _check_computation(name: str, computation) -> None:
    if not callable(computation) and not isinstance(computation, XlaComputation):
        raise TypeError(f"lax.{name}: the computation must be a Python callable (or an XlaComputation), "
                        f"got {type(computation).__name__} {computation!r}"[:200])


def _trace_scalar_fn(name: str, fn, shapes: list, n_args: int, like: XlaOp):
    """Trace ``fn`` taking ``n_args`` groups of scalar arguments (one per operand each);
    a reducer or comparator must not capture traced values (HLO gives it no operands)."""
    if not callable(fn):
        raise TypeError(f"lax.{name}: the computation must be a Python callable, got {type(fn).__name__}")
    k = len(shapes)
    scalars = [Shape(s.element_type, ()) for s in shapes] * n_args
    grouped = k > 1

    def call(*leaves):
        groups = [leaves[i * k:(i + 1) * k] for i in range(n_args)]
        return fn(*[_bi.tuple(g) if grouped else g[0] for g in groups])

    tf = _t.trace(call, _t._FlatDef(_bi.tuple, len(scalars)), scalars, name=f"{name}_computation",
                  parent=_t.current_builder(like, op=f"lax.{name}"))
    if tf.captured:
        raise TypeError(f"lax.{name}: the computation uses traced values of the enclosing function "
                        f"({', '.join(o.name for o in tf.captured)}); HLO gives a {name} computation "
                        "no extra operands: pass such values as operands instead")
    return tf


def reduce(operands, init_values, computation, dimensions) -> Tracer:
    """Reduce ``dimensions`` with ``computation`` (jax.lax.reduce; spec: *Reduce*).

    ``operands``/``init_values``: an array and a scalar, or matching tuples/lists (then
    ``computation(acc_tuple, x_tuple) -> tuple`` and the result is a tuple).
    ``computation``: a Python callable (traced on scalars) or an XlaComputation.
    """
    single = not isinstance(operands, (_bi.tuple, list))
    xs = [operands] if single else list(operands)
    inits = [init_values] if single else list(init_values)
    if len(xs) != len(inits):
        raise TypeError(f"lax.reduce: {len(xs)} operands but {len(inits)} init values")
    x_ops = [_op(x, "reduce") for x in xs]
    i_ops = [_t.convert(v, x.shape.dtype, "lax.reduce", x) if not _is_traced(v) else _op(v, "reduce")
             for v, x in zip(inits, x_ops)]
    _check_computation("reduce", computation)
    comp = computation if not callable(computation) else \
        _trace_scalar_fn("reduce", computation, [x.shape for x in x_ops], 2, x_ops[0]).computation
    out = ops.reduce(x_ops if not single else x_ops[0], i_ops if not single else i_ops[0], comp, dimensions)
    if single:
        return _wrap(out)
    return type(operands)(_wrap(ops.get_tuple_element(out, i)) for i in range(len(xs)))


def _make_reduce(name: str, monoid: str, doc: str):
    def f(operand, axes) -> Tracer:
        o = _op(operand, name)
        return _wrap(_t.reduce_monoid(monoid, o, _t._axes(axes, o.shape.rank, f"lax.{name}")))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"The {doc} over ``axes`` (jax.lax.{name}; spec: *Reduce*).  Result: the "
                 "operand's shape without ``axes``.")
    return f


_REDUCE = {"reduce_sum": ("sum", "sum"), "reduce_prod": ("prod", "product"),
           "reduce_max": ("max", "maximum"), "reduce_min": ("min", "minimum"),
           "reduce_and": ("and", "logical/bitwise and"), "reduce_or": ("or", "logical/bitwise or"),
           "reduce_xor": ("xor", "logical/bitwise xor")}
for _name, (_m, _doc) in _REDUCE.items():
    globals()[_name] = _make_reduce(_name, _m, _doc)
del _name, _m, _doc


def _arg_reduce(name: str, operand, axis: int, index_dtype, largest: bool) -> Tracer:
    o = _op(operand, name)
    rank = o.shape.rank
    axis = _operator.index(axis)
    if not 0 <= axis < rank:
        raise ValueError(f"lax.{name}: axis {axis} is out of bounds for rank {rank}")
    idt = _np_dtype(index_dtype)
    if idt.kind not in "iu":
        raise TypeError(f"lax.{name}: index_dtype must be an integer type, got {idt}")
    idx = ops.iota(o.builder, Shape(_ptype(idt), o.shape.dimensions), axis)
    is_float = _t._kind(o.shape.dtype) >= 2

    def pick(acc, x):
        (av, ai), (xv, xi) = acc, x
        # NaN wins (jax: argmax/argmin of data with a NaN is the first NaN).
        # The reducer must not depend on the order XLA combines partial results in: two NaNs
        # tie like equal values, and a tie goes to the lower index.
        take_x = (xv > av) if largest else (xv < av)
        tie = xv == av
        if is_float:
            take_x = take_x | ((xv != xv) & (av == av))
            tie = tie | ((xv != xv) & (av != av))
        take_x = take_x | (tie & (xi < ai))
        return select(take_x, xv, av), select(take_x, xi, ai)

    init_v = _t._lowest(o.shape.dtype) if largest else _t._highest(o.shape.dtype)
    _, out = reduce((o, idx), (np.asarray(init_v, o.shape.dtype), np.asarray(0, idt)), pick, [axis])
    return out


def argmax(operand, axis: int, index_dtype) -> Tracer:
    """Index of the largest element along ``axis`` (jax.lax.argmax): the first on ties, the
    first NaN if any."""
    return _arg_reduce("argmax", operand, axis, index_dtype, True)


def argmin(operand, axis: int, index_dtype) -> Tracer:
    """Index of the smallest element along ``axis`` (jax.lax.argmin): the first on ties, the
    first NaN if any."""
    return _arg_reduce("argmin", operand, axis, index_dtype, False)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding,
                  base_dilation=None, window_dilation=None) -> Tracer:
    """Reduce every window (jax.lax.reduce_window; spec: *ReduceWindow*).

    ``padding``: ``'SAME'``, ``'VALID'`` or ``(low, high)`` per dimension.  ``computation``:
    a Python callable (traced on scalars) or an XlaComputation; tuples of operands and init
    values reduce together, as in :func:`reduce`.
    """
    single = not isinstance(operand, (_bi.tuple, list))
    xs = [operand] if single else list(operand)
    inits = [init_value] if single else list(init_value)
    x_ops = [_op(x, "reduce_window") for x in xs]
    i_ops = [_t.convert(v, x.shape.dtype, "lax.reduce_window", x) if not _is_traced(v)
             else _op(v, "reduce_window") for v, x in zip(inits, x_ops)]
    _check_computation("reduce_window", computation)
    comp = computation if not callable(computation) else \
        _trace_scalar_fn("reduce_window", computation, [x.shape for x in x_ops], 2,
                         x_ops[0]).computation
    out = ops.reduce_window(x_ops[0] if single else x_ops, i_ops[0] if single else i_ops, comp,
                            window_dimensions, window_strides, base_dilation, window_dilation, padding)
    if single:
        return _wrap(out)
    return type(operand)(_wrap(ops.get_tuple_element(out, i)) for i in range(len(xs)))


def _make_cumulative(name: str, monoid: str):
    def f(operand, axis: int = 0, reverse: bool = False) -> Tracer:
        o = _op(operand, name)
        rank = o.shape.rank
        axis = _operator.index(axis)
        if not -rank <= axis < rank:
            raise ValueError(f"lax.{name}: axis {axis} is out of bounds for an operand of rank {rank}")
        if _t._cls(o.shape.dtype) == "b":
            raise TypeError(f"lax.{name} does not accept dtype bool (as jax.lax): convert to an integer type")
        axis %= rank
        n = o.shape.dimensions[axis]
        if n == 0:                  # nothing to accumulate: the (empty) operand is the result
            return _wrap(o)
        window = [1] * rank
        window[axis] = n
        pads = [(0, 0)] * rank
        pads[axis] = (0, n - 1) if reverse else (n - 1, 0)
        comp = _t.monoid_computation(monoid, o.shape.element_type)
        init = ops.constant(o.builder, np.asarray(_t._REDUCERS[monoid][1](o.shape.dtype), o.shape.dtype))
        return _wrap(ops.reduce_window(o, init, comp, window, None, None, None, pads))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Running {monoid} along ``axis`` (jax.lax.{name}), from the end when ``reverse``; "
                 "a reduce-window over a window spanning the axis.")
    return f


cumsum = _make_cumulative("cumsum", "sum")
cumprod = _make_cumulative("cumprod", "prod")
cummax = _make_cumulative("cummax", "max")
cummin = _make_cumulative("cummin", "min")


# ---------------------------------------------------------------------------
# dot and convolution
# ---------------------------------------------------------------------------

def dot(lhs, rhs, precision=None, preferred_element_type=None) -> Tracer:
    """Vector/matrix product (jax.lax.dot; spec: *Dot*); ``precision`` is accepted and
    ignored (xlac computes at full precision)."""
    a, b = _same_dtype("dot", lhs, rhs)
    return _wrap(ops.dot(a, b, _pet(preferred_element_type)))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None) -> Tracer:
    """Batched contraction (jax.lax.dot_general; spec: *DotGeneral*): ``dimension_numbers``
    is ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``."""
    a, b = _same_dtype("dot_general", lhs, rhs)
    return _wrap(ops.dot_general(a, b, dimension_numbers, _pet(preferred_element_type)))


def _pet(t):
    return None if t is None else _ptype(t)


@dataclass(frozen=True)
class ConvDimensionNumbers:
    """jax.lax.ConvDimensionNumbers: ``lhs_spec``, ``rhs_spec``, ``out_spec`` as permutations
    (batch/feature dimension first, then spatial), or use ``('NHWC', 'HWIO', 'NHWC')`` strings."""

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count: int = 1, batch_group_count: int = 1,
                         precision=None, preferred_element_type=None) -> Tracer:
    """General convolution (jax.lax.conv_general_dilated; spec: *ConvWithGeneralPadding*).

    ``padding``: ``'SAME'``, ``'VALID'`` or ``(low, high)`` per spatial dimension;
    ``dimension_numbers``: None (NCHW / OIHW / NCHW), strings like ``('NHWC', 'HWIO', 'NHWC')``
    or :class:`ConvDimensionNumbers`.
    """
    a, b = _same_dtype("conv_general_dilated", lhs, rhs)
    return _wrap(ops.conv_general_dilated(a, b, window_strides, padding, lhs_dilation, rhs_dilation,
                                          dimension_numbers, feature_group_count, batch_group_count,
                                          None, _pet(preferred_element_type)))


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None) -> Tracer:
    """Convolution with NCHW / OIHW layouts (jax.lax.conv)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


# ---------------------------------------------------------------------------
# gather and scatter
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class GatherDimensionNumbers:
    """jax.lax.GatherDimensionNumbers (spec: *Gather*); the index vector is the last
    dimension of the indices, as in jax."""

    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


@dataclass(frozen=True)
class ScatterDimensionNumbers:
    """jax.lax.ScatterDimensionNumbers (spec: *Scatter*); the index vector is the last
    dimension of the indices, as in jax."""

    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode:
    """jax.lax.GatherScatterMode: how out-of-bounds indices behave."""

    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def parse(mode, default: str) -> str:
        m = getattr(mode, "name", mode)
        m = default if m is None else str(m).lower()
        m = {"fill_or_drop": "fill", "drop": "fill"}.get(m, m)
        if m not in ("clip", "fill", "promise_in_bounds"):
            raise ValueError(f"unknown gather/scatter mode {mode!r} (clip, fill, drop, promise_in_bounds)")
        return m


def _fill_value(dt: np.dtype, fill_value):
    if fill_value is not None:
        return _t.constant_as(fill_value, dt, "lax.gather")
    if dt.kind == "b":
        return np.array(True)
    if dt.kind == "i":
        return np.array(np.iinfo(dt).min, dt)
    if dt.kind == "u":
        return np.array(np.iinfo(dt).max, dt)
    return np.array(np.nan, dt)


def _in_bounds(idx: XlaOp, operand_dims, window_sizes, index_map) -> XlaOp:
    """pred[batch...]: every start of the index vector (the last dimension of ``idx``) lets
    the window fit: ``0 <= start <= size - window``."""
    n = idx.shape.dimensions[-1]
    batch = list(idx.shape.dimensions[:-1])
    dt = idx.shape.dtype
    zero = ops.constant(idx.builder, np.zeros((), dt))
    limits = ops.constant(idx.builder, np.array([operand_dims[d] - window_sizes[d] for d in index_map], dt))
    lim = ops.broadcast_in_dim(limits, batch + [n], [len(batch)])
    ok = ops.and_(ops.ge(idx, zero), ops.le(idx, lim))
    return _t.reduce_monoid("and", ok, [len(batch)])


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode=None, fill_value=None) -> Tracer:
    """Slices of ``operand`` at ``start_indices`` (jax.lax.gather; spec: *Gather*).

    ``mode``: ``'clip'`` (default, as jax.lax.gather: starts are clamped so each slice fits,
    XLA's own behaviour), ``'promise_in_bounds'`` (the same here) or ``'fill'``: an
    out-of-bounds slice gives ``fill_value`` (default NaN for floats, the lowest signed /
    highest unsigned integer, True for bool), as jnp indexing with ``mode='fill'``.
    """
    o, idx = _op(operand, "gather"), _op(start_indices, "gather")
    dn = dimension_numbers
    sizes = list(slice_sizes)
    out = ops.gather(o, idx, ops.GatherDimensionNumbers(
        _bi.tuple(dn.offset_dims), _bi.tuple(dn.collapsed_slice_dims), _bi.tuple(dn.start_index_map),
        _bi.tuple(getattr(dn, "operand_batching_dims", ())),
        _bi.tuple(getattr(dn, "start_indices_batching_dims", ())), idx.shape.rank - 1),
        sizes, indices_are_sorted)
    if GatherScatterMode.parse(mode, "clip") != "fill":
        return _wrap(out)
    ok = _in_bounds(idx, o.shape.dimensions, sizes, dn.start_index_map)
    batch_pos = [i for i in range(out.shape.rank) if i not in dn.offset_dims]
    mask = ops.broadcast_in_dim(ok, list(out.shape.dimensions), batch_pos)
    fill = ops.broadcast(ops.constant(o.builder, _fill_value(o.shape.dtype, fill_value)),
                         list(out.shape.dimensions))
    return _wrap(ops.select(mask, out, fill))


def _scatter(name: str, operand, scatter_indices, updates, combine, dimension_numbers, indices_are_sorted,
             unique_indices, mode) -> Tracer:
    o, u = _same_dtype(name, operand, updates)
    idx = _op(scatter_indices, name)
    dn = dimension_numbers
    m = GatherScatterMode.parse(mode, "fill")
    if m == "clip":
        # Clamp each start so its window fits, as jax's CLIP mode does.
        window = [1] * o.shape.rank
        uwd = list(dn.update_window_dims)
        full = [d for d in range(o.shape.rank) if d not in dn.inserted_window_dims
                and d not in getattr(dn, "operand_batching_dims", ())]
        for d, w in zip(full, uwd):
            window[d] = u.shape.dimensions[w]
        dt = idx.shape.dtype
        hi = ops.constant(idx.builder, np.array([o.shape.dimensions[d] - window[d]
                                                 for d in dn.scatter_dims_to_operand_dims], dt))
        hi = ops.broadcast_in_dim(hi, list(idx.shape.dimensions), [idx.shape.rank - 1])
        idx = ops.clamp(ops.constant(idx.builder, np.zeros((), dt)), idx, hi)
    comp = combine if not callable(combine) else \
        _trace_scalar_fn(name, combine, [o.shape], 2, o).computation
    out = ops.scatter(o, idx, u, comp, index_vector_dim=idx.shape.rank - 1,
                      update_window_dims=dn.update_window_dims, inserted_window_dims=dn.inserted_window_dims,
                      scatter_dims_to_operand_dims=dn.scatter_dims_to_operand_dims,
                      indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                      input_batching_dims=getattr(dn, "operand_batching_dims", ()),
                      scatter_indices_batching_dims=getattr(dn, "scatter_indices_batching_dims", ()))
    return _wrap(out)


def _make_scatter(name: str, combine, doc: str):
    def f(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted: bool = False,
          unique_indices: bool = False, mode=None) -> Tracer:
        return _scatter(name, operand, scatter_indices, updates, combine, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"``operand`` with ``updates`` {doc} at ``scatter_indices`` (jax.lax.{name}; spec: "
                 "*Scatter*).  ``dimension_numbers``: :class:`ScatterDimensionNumbers`.  Out-of-bounds "
                 "updates are dropped (mode ``'fill'``/None, as jax) or clamped in (``'clip'``).")
    return f


scatter = _make_scatter("scatter", lambda x, y: y, "written")
scatter_add = _make_scatter("scatter_add", lambda x, y: x + y, "added")
scatter_mul = _make_scatter("scatter_mul", lambda x, y: x * y, "multiplied")
scatter_min = _make_scatter("scatter_min", lambda x, y: min(x, y), "combined by minimum")  # noqa: F821
scatter_max = _make_scatter("scatter_max", lambda x, y: max(x, y), "combined by maximum")  # noqa: F821


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=None,
                  indices_are_sorted: bool = False, unique_indices: bool = False, mode=None) -> Tracer:
    """``operand`` with ``func`` applied at ``scatter_indices`` (jax.lax.scatter_apply)."""
    o = _op(operand, "scatter_apply")
    shape = list(update_shape or ())
    u = full(shape, 0, o.shape.dtype) if shape else full_like(o, 0, shape=())
    return _scatter("scatter_apply", o, scatter_indices, u, lambda x, _: func(x), dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


# ---------------------------------------------------------------------------
# sorting
# ---------------------------------------------------------------------------

def _sort_keys(x: XlaOp) -> list:
    """What jax's default comparator compares for an operand: a float with -0.0 as 0.0
    and every NaN as +NaN (so in a total order the zeros tie, the NaNs go last and tie,
    and a stable sort keeps tied values in input order); a complex number as its real
    and imaginary parts, each treated so."""
    c = _t._cls(x.shape.dtype)
    if c == "c":
        return _sort_keys(ops.real(x)) + _sort_keys(ops.imag(x))
    if c != "f":
        return [x]
    zero = ops.constant(x.builder, np.zeros((), x.shape.dtype))
    nan = ops.constant(x.builder, np.full((), np.nan, x.shape.dtype))
    return [ops.select(ops.ne(x, x), nan, ops.select(ops.eq(x, zero), zero, x))]


def _lexicographic(num_keys: int):
    """``lhs < rhs`` on the first ``num_keys`` operands in turn, as jax.lax.sort's default
    comparator (``_sort_lt_comparator``): see :func:`_sort_keys`."""
    def less(*args):
        k = len(args) // 2
        lhs, rhs = args[:k], args[k:]
        keys = [(a, b) for i in range(num_keys)
                for a, b in zip(_sort_keys(to_op(lhs[i])), _sort_keys(to_op(rhs[i])))]
        result = None
        for a, b in reversed(keys):
            ctype = "TOTALORDER" if _t._cls(a.shape.dtype) == "f" else None
            lt_ = ops.compare(a, b, "LT", compare_type=ctype)
            if result is None:
                result = lt_
            else:
                eq_ = ops.compare(a, b, "EQ", compare_type=ctype)
                result = ops.or_(lt_, ops.and_(eq_, result))
        return Tracer(result)
    return less


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1, *,
         comparator=None):
    """Sort along ``dimension`` (jax.lax.sort; spec: *Sort*).

    ``operand``: an array, or a tuple/list of arrays sorted together by the first
    ``num_keys`` (lexicographically, as jax: -0.0 and 0.0 tie, NaNs go last and tie,
    complex numbers order by real then imaginary part).  ``comparator``
    (xlac's addition): a Python callable taking ``2 * N`` scalars (``lhs_0, rhs_0, lhs_1,
    rhs_1, ...`` as XLA orders them) and returning a bool scalar, "lhs goes first".
    Returns an array, or a tuple/list like ``operand``.
    """
    single = not isinstance(operand, (_bi.tuple, list))
    xs = [_op(x, "sort") for x in ([operand] if single else operand)]
    if not 1 <= num_keys <= len(xs):
        raise ValueError(f"lax.sort: num_keys {num_keys} must be between 1 and the number of operands ({len(xs)})")
    if comparator is None:
        less = _lexicographic(num_keys)

        def pairs(*args):  # XLA's order lhs_0, rhs_0, lhs_1, ... -> (lhs..., rhs...)
            return less(*args[0::2], *args[1::2])
        fn = pairs
    else:
        fn = comparator
    shapes = [Shape(x.shape.element_type, ()) for x in xs for _ in range(2)]
    tf = _t.trace(fn, _t._FlatDef(_bi.tuple, len(shapes)), shapes, name="sort_comparator",
                  parent=_t.current_builder(*xs))
    if tf.captured:
        raise TypeError("lax.sort: the comparator uses traced values of the enclosing function; HLO "
                        "gives a comparator no extra operands")
    out = ops.sort(xs[0] if single else xs, tf.computation, dimension, is_stable)
    if single:
        return _wrap(out)
    return type(operand)(_wrap(ops.get_tuple_element(out, i)) for i in range(len(xs)))


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """``(sorted keys, values in the keys' order)`` (jax.lax.sort_key_val)."""
    k, v = sort((keys, values), dimension, is_stable, 1)
    return k, v


def top_k(operand, k: int):
    """``(values, int32 indices)`` of the ``k`` largest elements of the last dimension,
    in descending order, ties by index (jax.lax.top_k; spec: *TopK*)."""
    out = ops.top_k(_op(operand, "top_k"), k)
    return _wrap(ops.get_tuple_element(out, 0)), _wrap(ops.get_tuple_element(out, 1))


# ---------------------------------------------------------------------------
# control flow
# ---------------------------------------------------------------------------

def _trace_fn(name: str, fn, args: tuple):
    """Trace ``fn(*args)`` (args pytrees of traced values) into a flat computation."""
    if not callable(fn):
        raise TypeError(f"lax.{name}: expected a Python callable, got {type(fn).__name__}")
    leaves, tree = _t.flatten(args)
    leaf_ops = [_op(x, name) for x in leaves]
    tf = _t.trace(fn, tree, [o.shape for o in leaf_ops], name=f"{name}_{getattr(fn, '__name__', 'fn')}",
                  parent=_t.current_builder(*leaf_ops, op=f"lax.{name}"),
                  in_weak=[_t._weak(x) for x in leaves], tuple_result=True)
    return tf, leaf_ops


def _call_flat(b, tf, operands: list) -> list:
    """Call the traced ``tf`` on ``operands`` plus its captured values; its result leaves."""
    extra = [to_op(c) for c in tf.captured]
    res = ops.call(b, tf.computation, operands + extra)
    return [ops.get_tuple_element(res, i) for i in range(tf.num_outputs)]


def _signature(shapes) -> str:
    return "(" + ", ".join(str(Shape(s.element_type, s.dimensions)) for s in shapes) + ")"


def _same_types(a: list, b: list) -> bool:
    return len(a) == len(b) and _bi.all(x.element_type == y.element_type and x.dimensions == y.dimensions
                                        for x, y in zip(a, b))


def while_loop(cond_fun, body_fun, init_val):
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)`` (jax.lax.while_loop; spec: *While*).

    ``init_val``: a pytree of arrays (the loop state); ``body_fun`` returns the same
    structure, shapes and dtypes (TypeError otherwise); ``cond_fun`` returns a bool scalar.
    Both may read traced values of the enclosing function.
    """
    body, leaf_ops = _trace_fn("while_loop", body_fun, (init_val,))
    cond, _ = _trace_fn("while_loop", cond_fun, (init_val,))
    in_shapes = [o.shape for o in leaf_ops]
    init_tree = _t.flatten(init_val)[1]
    if not _same_types(body.out_shapes, in_shapes) or body.out_tree != init_tree:
        raise TypeError(f"lax.while_loop: body_fun must return what it takes: the state is "
                        f"{_signature(in_shapes)} but body_fun returned {_signature(body.out_shapes)}")
    if len(cond.out_shapes) != 1 or cond.out_shapes[0].dtype != np.bool_ or cond.out_shapes[0].rank:
        raise TypeError(f"lax.while_loop: cond_fun must return a bool scalar, got {_signature(cond.out_shapes)}")
    b = _t.current_builder(*leaf_ops)
    n, nb = len(leaf_ops), len(body.captured)
    state = leaf_ops + [to_op(c) for c in body.captured] + [to_op(c) for c in cond.captured]
    init = ops.tuple(b, state)
    state_shape = init.shape

    from ..frontend.builder import XlaBuilder
    bb = XlaBuilder("while_body")
    p = ops.parameter(bb, 0, state_shape, "state")
    elems = [ops.get_tuple_element(p, i) for i in range(len(state))]
    res = ops.call(bb, body.computation, elems[:n + nb])
    new = [ops.get_tuple_element(res, i) for i in range(n)]
    body_comp = bb.build(ops.tuple(bb, new + elems[n:]))

    cb = XlaBuilder("while_cond")
    p = ops.parameter(cb, 0, state_shape, "state")
    elems = [ops.get_tuple_element(p, i) for i in range(len(state))]
    r = ops.call(cb, cond.computation, elems[:n] + elems[n + nb:])
    cond_comp = cb.build(ops.get_tuple_element(r, 0))

    out = ops.while_loop(cond_comp, body_comp, init)
    leaves = [_wrap(ops.get_tuple_element(out, i)) for i in range(n)]
    return init_tree.unflatten(leaves)


def fori_loop(lower, upper, body_fun, init_val):
    """``val = body_fun(i, val)`` for ``i`` in ``[lower, upper)`` (jax.lax.fori_loop), as a
    while loop; ``lower``/``upper`` Python ints or integer scalars (the index takes their type)."""
    lo_is, hi_is = _is_traced(lower), _is_traced(upper)
    dt = _t._dtype_of(lower) if lo_is else _t._dtype_of(upper) if hi_is else np.dtype(np.int32)
    b = _t.current_builder(*_t.flatten(init_val)[0], lower, upper, op="lax.fori_loop")
    lo = _t.convert(lower, dt, "lax.fori_loop") if lo_is else ops.constant(b, _t.constant_as(lower, dt))
    hi = _wrap(_t.convert(upper, dt, "lax.fori_loop") if hi_is else ops.constant(b, _t.constant_as(upper, dt)))

    def cond(state):
        return state[0] < hi

    def body(state):
        i, val = state
        return i + np.asarray(1, dt), body_fun(i, val)

    return while_loop(cond, body, (_wrap(lo), init_val))[1]


def _index_leaf(x: XlaOp, i: Tracer) -> Tracer:
    """``x[i]`` along the leading axis for a loop counter ``i`` (never negative: HLO's own
    clamping dynamic-slice, without jax's negative-start arithmetic)."""
    x = to_op(x)
    zero = ops.constant(x.builder, np.int32(0))
    row = ops.dynamic_slice(x, [i.value] + [zero] * (x.shape.rank - 1), [1] + list(x.shape.dimensions[1:]))
    return _wrap(ops.reshape(row, list(x.shape.dimensions[1:])))


def _update_leaf(buf: Tracer, v: XlaOp, i: Tracer) -> Tracer:
    """``buf`` with row ``i`` (a loop counter, never negative) set to ``v``."""
    b = buf.value
    zero = ops.constant(b.builder, np.int32(0))
    row = ops.reshape(v, [1] + list(v.shape.dimensions))
    return _wrap(ops.dynamic_update_slice(b, row, [i.value] + [zero] * (b.shape.rank - 1)))


def scan(f, init, xs=None, length: int | None = None, reverse: bool = False, unroll: int = 1):
    """``carry, y = f(carry, x)`` over the leading axis of ``xs`` (jax.lax.scan); returns
    ``(carry, ys)`` with the ``y`` stacked.  ``xs`` None needs ``length``.  A while loop
    writing each ``y`` with dynamic_update_slice; ``unroll`` is accepted and ignored."""
    x_leaves, x_tree = _t.flatten(xs)
    lengths = {_t._shape_of(x)[0] for x in x_leaves if _t._shape_of(x)}
    if length is not None:
        lengths.add(_operator.index(length))
    if len(lengths) != 1 or _bi.any(not _t._shape_of(x) for x in x_leaves):
        raise ValueError(f"lax.scan: the xs must all have one leading axis length (and length, if given "
                         f"agree), got {sorted(lengths)}")
    n = lengths.pop()
    x_ops = [_op(x, "scan") for x in x_leaves]
    carry_leaves, carry_tree = _t.flatten(init)
    b = _t.current_builder(*x_ops, *carry_leaves, op="lax.scan")

    def x_at(i):
        return x_tree.unflatten([_index_leaf(x, i) for x in x_ops])

    # The structure, shapes and dtypes of y: trace f once on the carry and an element of
    # the xs' shapes (zeros: the trace is only looked at, even when the xs are empty).
    probe, _ = _trace_fn("scan", f, (init, x_tree.unflatten([_element_like(x) for x in x_ops])))
    pair = probe.out_tree.unflatten(list(range(probe.num_outputs)))
    if not isinstance(pair, (_bi.tuple, list)) or len(pair) != 2:
        raise TypeError("lax.scan: f must return a pair (carry, y)")
    y_tree = _t.flatten(pair[1])[1]
    y_shapes = probe.out_shapes[len(carry_leaves):]
    ys0 = [ops.broadcast(ops.constant(b, np.zeros((), s.dtype)), [n] + list(s.dimensions)) for s in y_shapes]
    in_shapes = [_op(c, "scan").shape for c in carry_leaves]
    out_leaves, out_tree = _t.flatten(pair[0])
    if out_tree != carry_tree or not _same_types(probe.out_shapes[:len(out_leaves)], in_shapes):
        raise TypeError(f"lax.scan: f must return a carry like init: init is {_signature(in_shapes)} but "
                        f"f returned {_signature(probe.out_shapes[:len(out_leaves)])}")
    if n == 0:                  # no iteration: the carry as given and empty ys, as jax returns
        return init, y_tree.unflatten([_wrap(y) for y in ys0])

    def body(state):
        i, carry, ys = state
        j = (n - 1 - i) if reverse else i
        out = f(carry, x_at(j))
        if not isinstance(out, (_bi.tuple, list)) or len(out) != 2:
            raise TypeError("lax.scan: f must return a pair (carry, y)")
        new_carry, y = out
        y_leaves = [_t.convert(v, s.dtype, "lax.scan") for v, s in zip(_t.flatten(y)[0], y_shapes)]
        ys = [_update_leaf(buf, v, j) for buf, v in zip(ys, y_leaves)]
        return i + np.int32(1), new_carry, ys

    state = (_wrap(ops.constant(b, np.int32(0))), init, [_wrap(y) for y in ys0])
    _, carry, ys = while_loop(lambda s: s[0] < np.int32(n), body, state)
    return carry, y_tree.unflatten(ys)


def _element_like(x: XlaOp) -> Tracer:
    """Zeros of the shape and dtype of ``x``'s elements along its leading axis."""
    return _wrap(ops.broadcast(ops.constant(x.builder, np.zeros((), x.shape.dtype)), list(x.shape.dimensions[1:])))


def map(f, xs):  # noqa: A001 - jax's name
    """``f`` applied to each slice of ``xs`` along its leading axis, the results stacked
    (jax.lax.map: a scan, not HLO's elementwise Map)."""
    return scan(lambda _, x: ((), f(x)), (), xs)[1]


def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)`` (jax.lax.cond; spec:
    *Conditional*).  ``pred``: a bool (or integer, nonzero is true) scalar.  Both branches
    return the same structure, shapes and dtypes (TypeError otherwise)."""
    p = _op(pred, "cond") if _is_traced(pred) else to_op(bool(pred), op="lax.cond")
    if p.shape.rank:
        raise TypeError(f"lax.cond: pred must be a scalar, got shape {list(p.shape.dimensions)}")
    if p.shape.dtype != np.bool_:
        p = ops.ne(p, ops.constant(p.builder, np.zeros((), p.shape.dtype)))
    index = ops.convert_element_type(p, PrimitiveType.from_dtype(np.int32))
    return _branches("cond", _wrap(index), [false_fun, true_fun], operands)


def switch(index, branches, *operands):
    """``branches[index](*operands)`` (jax.lax.switch; spec: *Conditional*); ``index`` is
    clamped into ``[0, len(branches) - 1]``, as jax does."""
    branches = list(branches)
    if not branches:
        raise ValueError("lax.switch: needs at least one branch")
    i = _t.convert(index, np.int32, "lax.switch") if _is_traced(index) else \
        to_op(np.int32(_operator.index(index)), op="lax.switch")
    lo = ops.constant(i.builder, np.int32(0))
    hi = ops.constant(i.builder, np.int32(len(branches) - 1))
    return _branches("switch", _wrap(ops.clamp(lo, i, hi)), branches, operands)


def _branches(name: str, index: Tracer, fns: list, operands: tuple):
    traced = [_trace_fn(name, fn, operands) for fn in fns]
    first = traced[0][0]
    for tf, _ in traced[1:]:
        if not _same_types(tf.out_shapes, first.out_shapes) or tf.out_tree != first.out_tree:
            raise TypeError(f"lax.{name}: the branches must return the same types; got "
                            f"{_signature(first.out_shapes)} and {_signature(tf.out_shapes)}")
    leaf_ops = traced[0][1]
    b = index.value.builder
    comps, args = [], []
    from ..frontend.builder import XlaBuilder
    for k, (tf, _) in enumerate(traced):
        vals = leaf_ops + [to_op(c) for c in tf.captured]
        arg = ops.tuple(b, vals)
        wb = XlaBuilder(f"branch_{k}")
        p = ops.parameter(wb, 0, arg.shape, "operands")
        res = ops.call(wb, tf.computation, [ops.get_tuple_element(p, i) for i in range(len(vals))])
        comps.append(wb.build(res))
        args.append(arg)
    out = ops.conditional(index.value, comps, args)
    leaves = [_wrap(ops.get_tuple_element(out, i)) for i in range(first.num_outputs)]
    return first.out_tree.unflatten(leaves)


# ---------------------------------------------------------------------------
# random bits
# ---------------------------------------------------------------------------

def rng_bit_generator(key, shape, dtype=np.uint32, algorithm="rng_default"):
    """``(new_key, bits)``: random bits of ``shape`` and unsigned ``dtype`` from ``key``
    (jax.lax.rng_bit_generator; spec: *RngBitGenerator*), bit for bit XLA's."""
    k = _op(key, "rng_bit_generator")
    out = ops.rng_bit_generator(k, Shape(_ptype(dtype), _bi.tuple(shape)), algorithm)
    return _wrap(ops.get_tuple_element(out, 0)), _wrap(ops.get_tuple_element(out, 1))


__all__ = sorted(
    [*_BINARY, *_UNARY, *_COMPARE, *_REDUCE,
     "exp2", "square", "integer_pow", "round", "select", "clamp", "convert_element_type",
     "bitcast_convert_type", "reduce_precision", "stop_gradient", "broadcast", "broadcast_in_dim", "reshape",
     "squeeze", "expand_dims", "transpose", "rev", "slice", "slice_in_dim", "index_in_dim", "dynamic_slice",
     "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
     "concatenate", "pad", "iota", "broadcasted_iota", "full", "full_like", "reduce", "argmax", "argmin",
     "reduce_window", "cumsum", "cumprod", "cummax", "cummin", "dot", "dot_general", "ConvDimensionNumbers",
     "conv_general_dilated", "conv", "GatherDimensionNumbers", "ScatterDimensionNumbers",
     "GatherScatterMode", "gather", "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max",
     "scatter_apply", "sort", "sort_key_val", "top_k", "while_loop", "fori_loop", "scan", "map", "cond",
     "switch", "rng_bit_generator", "linalg", "Tracer"])
