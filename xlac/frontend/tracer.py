"""Tracing Python functions into computations, and numpy-style traced values.

``@xlac.jit`` and the :mod:`xlac.lax` functions that take Python callables
(reducers, loop bodies, branches, comparators) run the callable once on
:class:`Tracer` values: each operation on a Tracer appends HLO to a builder
(:mod:`xlac.frontend.ops`), so the callable becomes an :class:`XlaComputation`.

A Tracer is a numpy-style convenience over ``ops`` (``ops`` itself keeps XLA's
strict rules):

* ``+ - * / // % ** @``, unary ``- + ~ abs``, ``& | ^ << >>`` with numpy
  broadcasting and jax.numpy's result types (:func:`promote_dtypes`: jax's
  promotion lattice; a Python int, float or complex is *weakly typed*: it takes
  the other operand's type, so ``x_f16 * 2.0`` stays f16 and ``x_u32 + -1``
  wraps in u32); what jax.numpy refuses (``-`` of bools, ``~`` of floats, ...)
  is a TypeError;
* ``== != < <= > >=`` give ``pred`` Tracers, never Python bools; ``bool(t)``,
  ``if t:`` and ``hash(t)`` are TypeErrors (the value is not known while tracing);
* ``t[...]``: integers, slices with steps, ``None``, ``Ellipsis`` and scalar
  integer Tracers (a dynamic index: negative counts from the end, then clamped into
  bounds, as jax's ``x[i]`` and ``lax.dynamic_slice``);
* ``.shape`` (a tuple), ``.dtype``, ``.ndim``, ``.size``, ``.T``, ``.astype``,
  ``.reshape``, ``.transpose``, ``.sum/.max/.min/.prod/.mean/.any/.all(axis, keepdims)``
  (typed as jax.numpy's: bools and narrow integers sum in int32/uint32, f16 and
  bf16 in f32).

A function traced for a sub-computation may use Tracers of the functions
around it (a loop body reading a matrix of the enclosing ``@xlac.jit``): such a
*captured* value becomes an extra parameter of the sub-computation, and the
caller (``lax.while_loop``, ``lax.cond``, ...) passes it in.  Reducers, sort
comparators and scatter combiners cannot take extra operands in HLO, so a
capture there raises a TypeError naming the op.

Pytrees (nested tuples, lists and dicts) are flattened with ``optree`` (the
``xlac[jit]`` extra), imported only when a container other than a flat
tuple/list of arrays is met.
"""
from __future__ import annotations

import builtins as _bi
import operator as _operator
import threading
from dataclasses import dataclass

import numpy as np

from ..evaluator import convert_array
from ..shape import PrimitiveType, Shape
from . import ops
from .builder import XlaBuilder, XlaComputation, XlaOp

__all__ = ["Tracer", "trace", "tracing", "TracedFunction", "to_op", "current_builder", "flatten",
           "unflatten", "python_scalar_dtype", "promote_dtypes", "dynamic_starts"]


# ---------------------------------------------------------------------------
# pytrees
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _FlatDef:
    """The tree structure of a leaf (``n`` None) or a flat tuple/list of ``n`` leaves,
    used when optree is not installed."""

    kind: type | None
    n: int

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else self.n

    def unflatten(self, leaves):
        leaves = list(leaves)
        return leaves[0] if self.kind is None else self.kind(leaves)


def _is_container(x) -> bool:
    return isinstance(x, (_bi.tuple, list, dict)) or x is None


def _optree():
    try:
        import optree
    except ImportError:
        raise ImportError("nested tuples, lists and dicts (pytrees) of arrays need the optree package: "
                          "pip install 'xlac[jit]'") from None
    return optree


def flatten(tree):
    """``(leaves, treedef)``; ``treedef.unflatten(leaves)`` rebuilds the tree.  A leaf or a flat
    tuple/list of leaves works without optree; other containers need it (ImportError naming
    the ``xlac[jit]`` extra)."""
    if not _is_container(tree):
        return [tree], _FlatDef(None, 1)
    if type(tree) in (_bi.tuple, list) and not _bi.any(_is_container(x) for x in tree):
        try:
            _optree()
        except ImportError:
            return list(tree), _FlatDef(type(tree), len(tree))
    optree = _optree()
    leaves, treedef = optree.tree_flatten(tree, none_is_leaf=False)
    return leaves, _OptreeDef(treedef)


@dataclass(frozen=True)
class _OptreeDef:
    treedef: object

    @property
    def num_leaves(self) -> int:
        return self.treedef.num_leaves

    def unflatten(self, leaves):
        return self.treedef.unflatten(list(leaves))

    def __str__(self) -> str:
        return str(self.treedef)


def unflatten(treedef, leaves):
    return treedef.unflatten(leaves)


# ---------------------------------------------------------------------------
# dtypes: Python scalars and jax's promotion
# ---------------------------------------------------------------------------

def python_scalar_dtype(value) -> np.dtype:
    """The dtype of a Python scalar: XLA's default 32-bit types (bool -> pred, int -> s32,
    float -> f32, complex -> c64), as jax without ``jax_enable_x64``."""
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        if not -2**31 <= value < 2**31:
            raise OverflowError(f"Python int {value} does not fit int32; pass a numpy integer of the "
                                "wanted type (e.g. np.int64)")
        return np.dtype(np.int32)
    if isinstance(value, float):
        return np.dtype(np.float32)
    if isinstance(value, _bi.complex):
        return np.dtype(np.complex64)
    raise TypeError(f"{type(value).__name__} is not a Python scalar")


def _is_python_scalar(x) -> bool:
    return isinstance(x, (bool, int, float, _bi.complex)) and not isinstance(x, np.generic)


def _cls(dt: np.dtype) -> str:
    """``b``ool, ``i``nt, ``u``nsigned, ``f``loat or ``c``omplex (numpy's ``kind`` calls
    ml_dtypes' int4 and bfloat16 alike ``V``)."""
    pt = PrimitiveType.from_dtype(dt)
    if pt.is_pred:
        return "b"
    if pt.is_integral:
        return "i" if pt.is_signed_int else "u"
    return "c" if pt.is_complex else "f"


_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _kind(dt: np.dtype) -> int:
    """bool 0 < integers 1 < floats 2 < complex 3."""
    return _KIND_RANK[_cls(dt)]


# jax's type promotion lattice (jax._src.dtypes._type_promotion_lattice, "standard"
# promotion): each type and the types directly above it.  "int", "float" and "complex"
# are the weak types of Python scalars; a binary op's operands go to their least upper
# bound.  Narrow integers and floats have nothing above them: they meet only themselves,
# bool and weak scalars.
_NARROW_FLOATS = ("f4e2m1fn", "f8e3m4", "f8e4m3", "f8e8m0fnu", "f8e4m3b11fnuz", "f8e4m3fn", "f8e4m3fnuz",
                  "f8e5m2", "f8e5m2fnuz")
_NARROW_INTS = ("s1", "s2", "s4", "u1", "u2", "u4")
_WEAK_NODES = ("int", "float", "complex")


def _lattice(x64: bool) -> dict:
    return {
        "pred": ["int"], "int": ["u8", "s8", *_NARROW_INTS], **{t: [] for t in _NARROW_INTS},
        # Without x64, u32 with s32 stays s32 (jax forms no 64-bit type from 32-bit ones).
        "u8": ["s16", "u16"], "u16": ["s32", "u32"], "u32": ["s64" if x64 else "s32", "u64"],
        "u64": ["float"], "s8": ["s16"], "s16": ["s32"], "s32": ["s64"], "s64": ["float"],
        "float": [*_NARROW_FLOATS, "bf16", "f16", "complex"], **{t: [] for t in _NARROW_FLOATS},
        "bf16": ["f32"], "f16": ["f32"], "f32": ["f64", "c64"], "f64": ["c128"],
        "complex": ["c64"], "c64": ["c128"], "c128": [],
    }


def _upper_bounds(x64: bool) -> dict:
    """Every node -> the set of nodes at or above it."""
    lattice = _lattice(x64)
    ub = {n: {n} for n in lattice}
    for n in lattice:
        todo = list(lattice[n])
        while todo:
            m = todo.pop()
            if m not in ub[n]:
                ub[n].add(m)
                todo += lattice[m]
    return {n: frozenset(v) for n, v in ub.items()}


_UPPER_BOUNDS = {x64: _upper_bounds(x64) for x64 in (False, True)}
_X64 = frozenset(np.dtype(t) for t in (np.int64, np.uint64, np.float64, np.complex128))


def _join(a: str, b: str, x64: bool) -> str | None:
    """The least upper bound of two lattice nodes (None: there is none)."""
    ub = _UPPER_BOUNDS[x64]
    common = ub[a] & ub[b]
    least = [c for c in common if common <= ub[c]]
    return least[0] if least else None


def _node(dt: np.dtype, weak: bool) -> str:
    if weak and _cls(dt) != "b":
        return {"i": "int", "u": "int", "f": "float", "c": "complex"}[_cls(dt)]
    return PrimitiveType.from_dtype(dt).value


def _default_dtype(node: str, x64: bool) -> np.dtype:
    """A weak type's dtype: jax's default types, 64-bit when an operand is."""
    return np.dtype({"int": (np.int32, np.int64), "float": (np.float32, np.float64),
                     "complex": (np.complex64, np.complex128)}[node][x64])


def promote_dtypes(a: np.dtype, a_weak: bool, b: np.dtype, b_weak: bool, op: str = ""):
    """``(dtype, weak)`` the operands of a binary op go to, as ``jnp.promote_types`` and
    jax's weak types have it: the least upper bound on jax's promotion lattice, where a
    weakly typed value (a Python scalar) stands for its kind (int, float, complex) and so
    takes the other operand's type unless that is of a lower kind (``u8 + 300`` is u8,
    ``s32 * 2.0`` a weak f32).  As xlac keeps 64-bit arrays 64-bit, an operation with a
    64-bit operand promotes as jax with ``jax_enable_x64``, any other as jax without it
    (``u32 + s32`` is s32).  Bool is never weak.  TypeError for types jax does not promote
    to one another (the narrow ints and floats)."""
    a_weak = a_weak and _cls(a) != "b"
    b_weak = b_weak and _cls(b) != "b"
    if a == b and not (a_weak and b_weak):
        return a, False
    x64 = a in _X64 or b in _X64
    if a_weak and b_weak:                    # two Python scalars: their strong types' join
        r = _join(_node(a, False), _node(b, False), x64)
        return np.dtype(PrimitiveType.from_name(r).dtype), True
    r = _join(_node(a, a_weak), _node(b, b_weak), x64)
    if r is None:
        raise TypeError(f"{op or 'type promotion'}: {_label(a, a_weak)} and {_label(b, b_weak)} have no implicit "
                        "promotion path (as in jax, narrow integer and float types promote to no other "
                        "type); convert one explicitly, e.g. x.astype(np.float32)")
    if r in _WEAK_NODES:
        return _default_dtype(r, x64), True
    return np.dtype(PrimitiveType.from_name(r).dtype), False


def _label(dt: np.dtype, weak: bool) -> str:
    return f"weakly typed {dt.name} (a Python scalar)" if weak and _cls(dt) != "b" else dt.name


def _numeric(dt: np.dtype) -> np.dtype:
    """jax's ``to_numeric_dtype``: bool computes as int32."""
    return np.dtype(np.int32) if _cls(dt) == "b" else dt


def _inexact(dt: np.dtype) -> np.dtype:
    """jax's ``to_inexact_dtype``: bool and integers become f32 (64-bit ones f64)."""
    if _cls(dt) in "fc":
        return dt
    return np.dtype(np.float64 if dt.itemsize == 8 else np.float32)


def operator_dtype(op: str, a, b):
    """``(dtype, weak)``: the type the operands of the numpy-style operator ``op`` are
    converted to, and whether its result is weakly typed, as jax.numpy's ufunc behind the
    operator has it; TypeError where jax refuses the operand types."""
    da, wa, db, wb = _dtype_of(a), _weak(a), _dtype_of(b), _weak(b)
    dt, weak = promote_dtypes(da, wa, db, wb, op)
    c = _cls(dt)
    if op == "-" and c == "b":
        raise TypeError("-: bool operands cannot be subtracted (as in jax); use x ^ y or x != y")
    if op in ("&", "|", "^", "<<", ">>") and c in "fc":
        raise TypeError(f"{op}: needs integer or bool operands, got {_label(da, wa)} and {_label(db, wb)}")
    if op in ("//", "%") and c == "c":
        raise TypeError(f"{op}: not defined for complex operands, got {_label(da, wa)} and {_label(db, wb)}")
    if op in ("<<", ">>", "//", "%"):
        return _numeric(dt), weak            # bool operands compute as int32
    if op == "/":
        return _inexact(dt), weak
    if op == "**":
        if c in "biu":                       # jax's integer power: a strong int32 for bools
            return _numeric(dt), False
        if _cls(da) in "fc" and _cls(db) in "iu":
            return dt, wa and wb             # jax: lax.pow(x, integer y), weak only if both are
    return dt, weak


# ---------------------------------------------------------------------------
# traces: the builder ops go to, and captured values
# ---------------------------------------------------------------------------

class _Trace:
    """One function being traced into ``builder``.  ``captures``: values of enclosing
    traces this one uses, id(outer op) -> (outer op, this trace's parameter)."""

    def __init__(self, builder: XlaBuilder, parent: "_Trace | None", num_params: int = 0,
                 what: str = ""):
        self.builder = builder
        self.parent = parent
        self.next_param = num_params
        self.captures: dict = {}
        self.what = what

    def capture(self, op: XlaOp) -> XlaOp:
        """``op`` as a value of this trace: itself, or a parameter standing for it."""
        if op.builder is self.builder:
            return op
        hit = self.captures.get(id(op))
        if hit is not None:
            return hit[1]
        if self.parent is None:
            raise ValueError(f"a traced value ({op.name} of {op.builder.label(self.builder)}) is used "
                             f"outside the function that made it (in {self.builder.label(op.builder)}); "
                             "return it from that function instead of keeping it (a leaked tracer)")
        outer = self.parent.capture(op)
        inner = ops.parameter(self.builder, self.next_param, op.shape, f"captured.{op.name}")
        self.next_param += 1
        self.captures[id(op)] = (outer, inner)
        return inner


_local = threading.local()


def _stack() -> list:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def tracing() -> bool:
    """Whether a function is being traced on this thread."""
    return bool(_stack())


def current_builder(*values, op: str = "") -> XlaBuilder:
    """The builder new ops go to: the innermost function being traced, else the builder of
    the XlaOps/Tracers among ``values`` (TypeError when there is none)."""
    stack = _stack()
    if stack:
        return stack[-1].builder
    for v in values:
        if isinstance(v, (Tracer, XlaOp)):
            return _op_of(v).builder
    raise TypeError(f"{op or 'this operation'}: needs a traced value (call it inside a function "
                    "under @xlac.jit, or pass an XlaOp or Tracer operand)")


def _current_trace(builder: XlaBuilder) -> _Trace:
    stack = _stack()
    if stack and stack[-1].builder is builder:
        return stack[-1]
    return _Trace(builder, None)  # a hand-built XlaBuilder: the root, no captures


def _op_of(x) -> XlaOp:
    return x.op if isinstance(x, Tracer) else x


def to_op(x, like: XlaOp | None = None, dtype=None, op: str = "") -> XlaOp:
    """``x`` (Tracer, XlaOp, Python or numpy scalar or array) as an XlaOp of the current
    builder: values of enclosing traces are captured, others become constants (of
    ``dtype``, else of a Python scalar's default type, else numpy's)."""
    if isinstance(x, (Tracer, XlaOp)):
        o = _op_of(x)
        b = current_builder(o)
        if o.builder is b:
            return o
        return _current_trace(b).capture(o)
    b = like.builder if like is not None else current_builder(op=op)
    if dtype is not None:
        return ops.constant(b, constant_as(x, dtype, op))
    if _is_python_scalar(x):
        return ops.constant(b, np.asarray(x, python_scalar_dtype(x)))
    a = _as_array(x, op)
    if a.dtype == np.float64 and not isinstance(x, (np.ndarray, np.generic)):
        a = a.astype(np.float32)   # Python float lists follow the scalar rule
    return ops.constant(b, a)


def _as_array(x, op: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind in "USM":
        raise TypeError(f"{op or 'operand'}: cannot use a {type(x).__name__} as an array")
    return a


def constant_as(x, dtype, op: str = "") -> np.ndarray:
    """A Python or numpy value as an array of ``dtype``, converted as jax converts it: a
    Python int wraps into an integer type (``-1`` as u32 is 4294967295, as
    ``lax.convert_element_type(-1, jnp.uint32)``); everything else converts as HLO's convert
    (a float to an integer truncates and saturates)."""
    dtype = np.dtype(dtype)
    if isinstance(x, int) and not isinstance(x, bool) and not -2**63 <= x < 2**64:
        if _cls(dtype) not in "fc":
            raise OverflowError(f"{op or 'operand'}: Python int {x} does not fit a 64-bit integer")
        x = float(x)                        # (a float type holds it, or overflows to inf)
    a = _as_array(x, op)
    return a if a.dtype == dtype else convert_array(a, dtype)


def _weak(x) -> bool:
    """Whether ``x`` is weakly typed: a Python int, float or complex (not a bool: jax types
    Python bools strongly), or a Tracer made from one."""
    return (_is_python_scalar(x) and not isinstance(x, bool)) or (isinstance(x, Tracer) and x.weak)


def _dtype_of(x) -> np.dtype:
    if isinstance(x, (Tracer, XlaOp)):
        return _op_of(x).shape.dtype
    if _is_python_scalar(x):
        return python_scalar_dtype(x)
    return np.asarray(x).dtype


def _shape_of(x) -> tuple:
    if isinstance(x, (Tracer, XlaOp)):
        return _bi.tuple(_op_of(x).shape.dimensions)
    return np.shape(x)


def convert(x, dtype, op: str = "", like: XlaOp | None = None) -> XlaOp:
    """``x`` as an XlaOp of element type ``dtype`` (constants made in it, in ``like``'s
    builder when no function is being traced; others converted)."""
    dtype = np.dtype(dtype)
    if not isinstance(x, (Tracer, XlaOp)):
        return to_op(x, like=like, dtype=dtype, op=op)
    o = to_op(x, op=op)
    if o.shape.dtype == dtype:
        return o
    return ops.convert_element_type(o, PrimitiveType.from_dtype(dtype))


def broadcast_to(o: XlaOp, shape: tuple) -> XlaOp:
    """numpy broadcasting of ``o`` to ``shape`` (trailing dimensions aligned)."""
    dims = _bi.tuple(o.shape.dimensions)
    if dims == _bi.tuple(shape):
        return o
    lead = len(shape) - len(dims)
    keep = [i for i, d in enumerate(dims) if d == shape[lead + i]]
    if len(keep) != len(dims):      # drop the size-1 dimensions that stretch
        o = ops.reshape(o, [dims[i] for i in keep])
    return ops.broadcast_in_dim(o, list(shape), [lead + i for i in keep])


def binary_operands(op: str, a, b, dtype=None):
    """``(a, b, weak)``: both as XlaOps of one dtype (``dtype``, else the type jax's
    operator ``op`` computes in) and the numpy-broadcast shape."""
    if dtype is None:
        dtype, weak = operator_dtype(op, a, b)
    else:
        weak = False
    try:
        shape = np.broadcast_shapes(_shape_of(a), _shape_of(b))
    except ValueError:
        raise ValueError(f"{op}: shapes {_shape_of(a)} and {_shape_of(b)} do not broadcast "
                         "(numpy rules: trailing dimensions equal or 1)") from None
    like = next((_op_of(v) for v in (a, b) if isinstance(v, (Tracer, XlaOp))), None)
    xa, xb = convert(a, dtype, op, like), convert(b, dtype, op, like)
    return broadcast_to(xa, shape), broadcast_to(xb, shape), weak


def _binary(fn, opname: str, a, b) -> "Tracer":
    xa, xb, weak = binary_operands(opname, a, b)
    return Tracer(fn(xa, xb), weak)


_SYMBOL = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def _compare(direction: str, a, b) -> "Tracer":
    xa, xb, _ = binary_operands(_SYMBOL[direction], a, b)
    if _cls(xa.shape.dtype) == "c" and direction not in ("EQ", "NE"):
        # As jax: complex numbers order by real part, then imaginary part.
        ra, rb, ia, ib = ops.real(xa), ops.real(xb), ops.imag(xa), ops.imag(xb)
        return Tracer(ops.select(ops.eq(ra, rb), ops.compare(ia, ib, direction), ops.compare(ra, rb, direction)))
    return Tracer(ops.compare(xa, xb, direction))


def _true_divide(a, b) -> "Tracer":
    xa, xb, weak = binary_operands("/", a, b)      # integers divide as floats (jax, numpy)
    return Tracer(ops.div(xa, xb), weak)


def _floor_divide(a, b) -> "Tracer":
    """jax.numpy's ``floor_divide``, step for step (so ``x // 0`` gives what jax gives)."""
    xa, xb, weak = binary_operands("//", a, b)
    c = _cls(xa.shape.dtype)
    if c == "u":
        return Tracer(ops.div(xa, xb), weak)
    if c == "i":
        q = ops.div(xa, xb)             # truncates toward zero; floor is one less when the
        fix = ops.and_(ops.ne(ops.sign(xa), ops.sign(xb)), ops.ne(ops.rem(xa, xb), _zeros_like(xa)))
        return Tracer(ops.select(fix, ops.sub(q, _ones_like(q)), q), weak)   # signs differ, inexactly
    return Tracer(_float_floor_divide(xa, xb), weak)


def _zeros_like(x: XlaOp) -> XlaOp:
    return ops.broadcast(ops.constant(x.builder, np.zeros((), x.shape.dtype)), list(x.shape.dimensions))


def _ones_like(x: XlaOp) -> XlaOp:
    return ops.broadcast(ops.constant(x.builder, np.ones((), x.shape.dtype)), list(x.shape.dimensions))


def _float_floor_divide(x: XlaOp, y: XlaOp) -> XlaOp:
    """CPython's float_divmod, as jax: divide ``x - fmod(x, y)`` (exact) by ``y``, one less
    when the remainder's sign differs from the divisor's, rounded to an integer; this,
    not ``floor(x / y)``, is ``1 // 0.1 == 9``."""
    zero, one = _zeros_like(x), _ones_like(x)
    mod = ops.rem(x, y)
    corrected = ops.select(ops.eq(y, zero), x, ops.sub(x, mod))
    div = ops.div(corrected, y)
    fix = ops.and_(ops.ne(mod, zero), ops.ne(ops.sign(y), ops.sign(mod)))
    return ops.round_nearest_afz(ops.select(fix, ops.sub(div, one), div))


def _mod(a, b) -> "Tracer":
    """jax.numpy's ``remainder``: it takes the divisor's sign; an integer ``x % 0`` is 0."""
    xa, xb, weak = binary_operands("%", a, b)
    zero = _zeros_like(xa)
    if _cls(xb.shape.dtype) in "iu":
        xb = ops.select(ops.eq(xb, zero), _ones_like(xb), xb)
    r = ops.rem(xa, xb)
    fix = ops.and_(ops.ne(ops.lt(r, zero), ops.lt(xb, zero)), ops.ne(r, zero))
    return Tracer(ops.select(fix, ops.add(r, xb), r), weak)


def integer_pow(x: XlaOp, y: int) -> XlaOp:
    """``x ** y`` for a Python int ``y`` by repeated squaring (jax's ``lax.integer_pow``)."""
    if y == 0:
        return ops.broadcast(ops.constant(x.builder, np.ones((), x.shape.dtype)), list(x.shape.dimensions))
    acc, base, n = None, x, _bi.abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else ops.mul(acc, base)
        n >>= 1
        if n:
            base = ops.mul(base, base)
    if y < 0:
        acc = ops.div(ops.constant(x.builder, np.ones((), x.shape.dtype)), acc)
    return acc


def _is_static_int(x) -> bool:
    return isinstance(x, (int, np.integer, np.bool_)) and not isinstance(x, (Tracer, XlaOp))


def _power(a, b) -> "Tracer":
    if isinstance(a, Tracer) and _is_static_int(b):
        # jax.numpy.power with a concrete integer exponent: lax.integer_pow on the base
        # (bools as int32), keeping the base's type; integers take no negative powers.
        y = _operator.index(b)
        x = a.value
        if _cls(x.shape.dtype) in "biu" and y < 0:
            raise TypeError(f"**: integers cannot be raised to negative powers, got {x.shape.dtype.name} ** {y}")
        x = convert(x, _numeric(x.shape.dtype), "**")
        return Tracer(integer_pow(x, y), a.weak and _cls(a.dtype) != "b")
    xa, xb, weak = binary_operands("**", a, b)
    if _kind(xa.shape.dtype) == 1:
        return Tracer(_integer_power(xa, xb), weak)
    return Tracer(ops.pow(xa, xb), weak)


def _integer_power(x: XlaOp, y: XlaOp) -> XlaOp:
    """Integer ``x ** y`` as jax computes it: binary exponentiation over the exponent's six
    low bits (larger exponents overflow any base but 0 and +-1 anyway)."""
    b = x.builder
    dt = x.shape.dtype
    zero, one = ops.constant(b, np.zeros((), dt)), ops.constant(b, np.ones((), dt))
    shape = list(x.shape.dimensions)
    zeros, ones = ops.broadcast(zero, shape), ops.broadcast(one, shape)
    acc = ops.select(ops.and_(ops.eq(x, zeros), ops.ne(y, zeros)), zeros, ones)
    for _ in range(6):
        odd = ops.ne(ops.and_(y, ones), zeros)
        acc = ops.select(odd, ops.mul(acc, x), acc)
        x = ops.mul(x, x)
        y = ops.shift_right_logical(y, ones)
    return acc


def _shift(op: str, a, b) -> "Tracer":
    xa, xb, weak = binary_operands(op, a, b)
    if op == "<<":
        fn = ops.shift_left
    else:
        fn = ops.shift_right_logical if _cls(xa.shape.dtype) == "u" else ops.shift_right_arithmetic
    return Tracer(fn(xa, xb), weak)


def matmul(a, b) -> "Tracer":
    """numpy's ``@``: vectors contract, leading dimensions are broadcast batch dimensions."""
    dt, weak = operator_dtype("@", a, b)
    like = next((_op_of(v) for v in (a, b) if isinstance(v, (Tracer, XlaOp))), None)
    xa, xb = convert(a, dt, "@", like), convert(b, dt, "@", like)
    ra, rb = xa.shape.rank, xb.shape.rank
    if ra == 0 or rb == 0:
        raise ValueError(f"@: operands must not be scalars, got shapes {_shape_of(a)} and {_shape_of(b)}")
    if ra <= 2 and rb <= 2:
        return Tracer(ops.dot(xa, xb), weak)
    va, vb = ra == 1, rb == 1
    if va:
        xa = ops.reshape(xa, [1] + list(xa.shape.dimensions))
    if vb:
        xb = ops.reshape(xb, list(xb.shape.dimensions) + [1])
    da, db = list(xa.shape.dimensions), list(xb.shape.dimensions)
    batch = list(np.broadcast_shapes(_bi.tuple(da[:-2]), _bi.tuple(db[:-2])))
    xa = broadcast_to(xa, _bi.tuple(batch + da[-2:]))
    xb = broadcast_to(xb, _bi.tuple(batch + db[-2:]))
    nb = len(batch)
    out = ops.dot_general(xa, xb, (((nb + 1,), (nb,)), (_bi.tuple(range(nb)), _bi.tuple(range(nb)))))
    dims = list(out.shape.dimensions)
    if va or vb:
        dims = dims[:nb] + ([] if va else [dims[nb]]) + ([] if vb else [dims[-1]])
        out = ops.reshape(out, dims)
    return Tracer(out, weak)


# ---------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------

def _getitem(t: "Tracer", key) -> "Tracer":
    key = key if isinstance(key, _bi.tuple) else (key,)
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, (_bi.slice, int, np.integer)) or
                (isinstance(k, (Tracer, XlaOp)) and _op_of(k).shape.rank == 0
                 and _op_of(k).shape.dtype.kind in "iu")):
            raise TypeError(f"indexing: {k!r} is not supported as an index (use ints, slices, None, "
                            "Ellipsis or scalar integer traced values; lax.gather or "
                            "lax.dynamic_slice for array indices)")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("indexing: an index can only have a single ellipsis ('...')")
    rank = t.ndim
    if n_real > rank:
        raise IndexError(f"indexing: too many indices for an array of rank {rank}: {n_real}")
    if Ellipsis in [k for k in key if not isinstance(k, (Tracer, XlaOp))]:
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (_bi.slice(None),) * (rank - n_real) + key[i + 1:]
    else:
        key = key + (_bi.slice(None),) * (rank - n_real)
    x = t.value
    dims = list(x.shape.dimensions)
    starts, limits, strides, rev_dims, out_dims = [], [], [], [], []
    dynamic = {}                   # dimension -> scalar index XlaOp
    d = 0
    for k in key:
        if k is None:
            out_dims.append(("new", None))
            continue
        n = dims[d]
        if isinstance(k, _bi.slice):
            start, stop, step = k.indices(n)
            if step > 0:
                size = _bi.max(0, -(-(stop - start) // step))
                starts.append(start), limits.append(start + (size - 1) * step + 1 if size else start)
            else:
                size = _bi.max(0, -(-(start - stop) // -step))
                rev_dims.append(d)      # a negative step reads the reversed dimension forward
                first = n - 1 - start
                starts.append(first), limits.append(first + (size - 1) * -step + 1 if size else first)
            strides.append(_bi.abs(step))
            out_dims.append(("keep", size))
        elif isinstance(k, (Tracer, XlaOp)):
            dynamic[d] = to_op(k)
            starts.append(0), limits.append(n), strides.append(1)
            out_dims.append(("drop", None))
        else:
            i = _operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"indexing: index {i} is out of bounds for dimension {d} of size {n}")
            i %= n
            starts.append(i), limits.append(i + 1), strides.append(1)
            out_dims.append(("drop", None))
        d += 1
    if rev_dims:
        x = ops.rev(x, rev_dims)
    if any(s != 0 for s in starts) or limits != dims or any(s != 1 for s in strides):
        x = ops.slice(x, starts, limits, strides)
    if dynamic:
        # A traced index reads as jax's x[i]: negative counts from the end, then clamped.
        idx = [dynamic.get(i, 0) for i in range(len(dims))]
        sizes = [1 if i in dynamic else x.shape.dimensions[i] for i in range(len(dims))]
        x = ops.dynamic_slice(x, dynamic_starts(idx, x.shape.dimensions, "indexing", x), sizes)
    shape = []
    src = list(x.shape.dimensions)
    j = 0
    for kind, _ in out_dims:
        if kind == "new":
            shape.append(1)
        elif kind == "keep":
            shape.append(src[j])
            j += 1
        else:
            j += 1
    if shape != src:
        x = ops.reshape(x, shape)
    return Tracer(x, t.weak)


def dynamic_starts(starts, dims, what: str, like: XlaOp | None = None) -> list:
    """Start indices for HLO's dynamic-slice / dynamic-update-slice as ``jax.lax`` computes
    them: a negative start counts from the end of its dimension (``-2`` on size 5 is 3), and
    only then does the op clamp it into bounds (HLO's own ops only clamp).

    ``starts``: one Python int or integer scalar (Tracer/XlaOp) per dimension of size
    ``dims``; returns scalar XlaOps of one integer type (the traced starts' type, widened
    when it cannot hold a dimension size)."""
    starts = list(starts)
    if len(starts) != len(dims):
        raise TypeError(f"{what}: {len(starts)} start indices for an operand of rank {len(dims)}")
    traced = []
    for k, i in enumerate(starts):
        if isinstance(i, (Tracer, XlaOp)):
            o = to_op(i, op=what)
            if o.shape.rank or o.shape.dtype.kind not in "iu":
                raise TypeError(f"{what}: start index {k} must be an integer scalar, got "
                                f"{o.shape.element_type.value}{list(o.shape.dimensions)}")
            traced.append(o)
        else:
            starts[k] = _static_start(i, dims[k], what, k)
    dt = traced[0].shape.dtype if traced else np.dtype(np.int32)
    if _bi.max(dims, default=0) > np.iinfo(dt).max:
        dt = np.dtype(np.int32) if dt.itemsize < 4 else dt    # (8/16-bit starts, a longer dimension)
    b = traced[0].builder if traced else like.builder if like is not None else current_builder(op=what)
    out = []
    for i, n in zip(starts, dims):
        if isinstance(i, int):                # already counted from the end, in [0, n]
            out.append(ops.constant(b, np.asarray(i, dt)))
            continue
        i = convert(i, dt, what)
        if dt.kind == "i":
            size = ops.constant(b, np.asarray(n, dt))
            i = ops.select(ops.lt(i, ops.constant(b, np.zeros((), dt))), ops.add(i, size), i)
        out.append(i)
    return out


def _static_start(i, n: int, what: str, k: int) -> int:
    """A Python start index counted from the end when negative; kept in ``[0, n]``, which
    changes nothing (the op clamps it to ``[0, n - size]``) but lets it fit any index type."""
    try:
        i = _operator.index(i)
    except TypeError:
        raise TypeError(f"{what}: start index {k} must be an integer, got {type(i).__name__} {i!r}") from None
    if i < 0:
        i += n
    return _bi.min(_bi.max(i, 0), n)


# ---------------------------------------------------------------------------
# reductions used by the methods
# ---------------------------------------------------------------------------

def _axes(axis, rank: int, what: str) -> list:
    if axis is None:
        return list(range(rank))
    if isinstance(axis, (Tracer, XlaOp)):
        raise TypeError(f"{what}: axis must be a Python int or tuple of ints, not a traced value "
                        "(make it a static argument: static_argnums)")
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    out = []
    for a in axes:
        a = _operator.index(a)
        if not -rank <= a < rank:
            raise ValueError(f"{what}: axis {a} is out of bounds for an array of rank {rank}")
        out.append(a % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: repeated axis in {axis!r}")
    return sorted(out)


_REDUCERS = {  # name -> (binary op, identity element for a dtype)
    "sum": (ops.add, lambda dt: np.zeros((), dt)),
    "prod": (ops.mul, lambda dt: np.ones((), dt)),
    "max": (ops.max, lambda dt: _lowest(dt)),
    "min": (ops.min, lambda dt: _highest(dt)),
    "and": (ops.and_, lambda dt: np.ones((), dt)),
    "or": (ops.or_, lambda dt: np.zeros((), dt)),
    "xor": (ops.xor, lambda dt: np.zeros((), dt)),
}


def _lowest(dt):
    if dt.kind == "b":
        return np.array(False)
    if dt.kind in "iu":
        return np.array(np.iinfo(dt).min, dt)
    return np.array(-np.inf, dt)


def _highest(dt):
    if dt.kind == "b":
        return np.array(True)
    if dt.kind in "iu":
        return np.array(np.iinfo(dt).max, dt)
    return np.array(np.inf, dt)


_monoid_cache: dict = {}


def monoid_computation(name: str, element_type: PrimitiveType) -> XlaComputation:
    """The scalar ``(T, T) -> T`` computation of reducer ``name`` (cached)."""
    key = (name, element_type)
    comp = _monoid_cache.get(key)
    if comp is None:
        b = XlaBuilder(f"{name}_{element_type.value}")
        s = Shape(element_type, ())
        fn = _REDUCERS[name][0]
        comp = _monoid_cache[key] = b.build(fn(ops.parameter(b, 0, s, "x"), ops.parameter(b, 1, s, "y")))
    return comp


def reduce_monoid(name: str, x: XlaOp, axes: list) -> XlaOp:
    """``x`` reduced over ``axes`` by the named monoid (sum, prod, max, min, and, or, xor)."""
    dt = x.shape.dtype
    init = ops.constant(x.builder, np.asarray(_REDUCERS[name][1](dt), dt))
    return ops.reduce(x, init, monoid_computation(name, x.shape.element_type), axes)


def _sum_dtype(dt: np.dtype) -> np.dtype:
    """The type jax.numpy's sum and prod return: bools and integers narrower than 32 bits
    accumulate in jax's default int32 / uint32 instead of wrapping."""
    c = _cls(dt)
    if c == "b" or c == "i" and PrimitiveType.from_dtype(dt).bit_width < 32:
        return np.dtype(np.int32)
    if c == "u" and PrimitiveType.from_dtype(dt).bit_width < 32:
        return np.dtype(np.uint32)
    return dt


def _computation_dtype(dt: np.dtype) -> np.dtype:
    """jax.numpy sums f16 and bf16 in f32 and rounds the result back once."""
    return np.dtype(np.float32) if dt in (np.dtype(np.float16), _BF16) else dt


_BF16 = Shape(PrimitiveType.BF16, ()).dtype


def _keepdims(out: XlaOp, x: XlaOp, axes: list, keepdims: bool) -> XlaOp:
    if not keepdims:
        return out
    return ops.reshape(out, [1 if i in axes else n for i, n in enumerate(x.shape.dimensions)])


def _reduce_method(t: "Tracer", name: str, axis, keepdims: bool, what: str) -> "Tracer":
    """A reduction method as jax.numpy's: its result is never weakly typed."""
    x = t.value
    axes = _axes(axis, x.shape.rank, what)
    if name in ("max", "min") and _bi.any(x.shape.dimensions[a] == 0 for a in axes):
        raise ValueError(f"{what}: zero-size array to reduction operation {what} which has no identity "
                         f"(shape {list(x.shape.dimensions)}, axis {axis}), as in jax")
    out_dt = x.shape.dtype
    if name in ("sum", "prod"):
        out_dt = _sum_dtype(out_dt)
        x = convert(x, _computation_dtype(out_dt), what)
    if name in ("and", "or") and _cls(x.shape.dtype) != "b":
        x = ops.ne(x, ops.constant(x.builder, np.zeros((), x.shape.dtype)))
    out = convert(reduce_monoid(name, x, axes), out_dt if name not in ("and", "or") else np.bool_, what)
    return Tracer(_keepdims(out, x, axes, keepdims))


def _mean(t: "Tracer", axis, keepdims: bool) -> "Tracer":
    """jax.numpy's mean: bools and integers average as f32 (64-bit ones as f64), f16 and
    bf16 are summed in f32; the sum is divided by the count (0/0: NaN)."""
    out_dt = _inexact(t.dtype)
    x = convert(t.value, _computation_dtype(out_dt), "mean")
    axes = _axes(axis, x.shape.rank, "mean")
    count = int(np.prod([x.shape.dimensions[a] for a in axes], dtype=np.int64))
    total = reduce_monoid("sum", x, axes)
    mean = ops.div(total, ops.constant(x.builder, np.asarray(count, x.shape.dtype)))
    return Tracer(_keepdims(convert(mean, out_dt, "mean"), x, axes, keepdims))


def _negate(t: "Tracer") -> "Tracer":
    if _cls(t.dtype) == "b":
        raise TypeError("-: a bool value cannot be negated (as in jax); use ~x or the logical not")
    return Tracer(ops.neg(t.value), t.weak)


def _absolute(t: "Tracer") -> "Tracer":
    if _cls(t.dtype) in "bu":               # jax.numpy.abs: bools and unsigned are their own
        return t
    return Tracer(ops.abs(t.value), t.weak)


def _invert(t: "Tracer") -> "Tracer":
    if _cls(t.dtype) in "fc":
        raise TypeError(f"~: needs an integer or bool value, got {t.dtype.name}")
    return Tracer(ops.not_(t.value), t.weak)


# ---------------------------------------------------------------------------
# Tracer
# ---------------------------------------------------------------------------

class Tracer:
    """A traced array value: an XlaOp with numpy-style operators (see the module docstring).

    ``Tracer(op)`` wraps an XlaOp of any builder; ``.op`` is the XlaOp.  ``weak``: the
    value came from a Python scalar and takes the type of what it meets (jax's weak types).
    """

    __slots__ = ("op", "weak")
    is_xlac_tracer = True      # for ops' messages (the builder module cannot import this one)
    __array_ufunc__ = None     # numpy hands `np.float32(2) * t` back to Tracer.__rmul__
    __hash__ = None            # == builds an op, so a Tracer is no dict key (as jax's)

    def __init__(self, op: XlaOp, weak: bool = False):
        if not isinstance(op, XlaOp):
            raise TypeError(f"Tracer: expected an XlaOp, got {type(op).__name__}")
        self.op = op
        self.weak = bool(weak)

    @property
    def value(self) -> XlaOp:
        """The XlaOp in the builder being traced now (a captured parameter for a value
        of an enclosing function)."""
        return to_op(self)

    # -- array attributes ---------------------------------------------------
    @property
    def shape(self) -> tuple:
        """The dimensions, a tuple of ints (numpy's ``.shape``); ``xla_shape`` is the Shape."""
        return _bi.tuple(self.op.shape.dimensions)

    @property
    def xla_shape(self) -> Shape:
        return self.op.shape

    @property
    def dtype(self) -> np.dtype:
        return self.op.shape.dtype

    @property
    def ndim(self) -> int:
        return self.op.shape.rank

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of a scalar (rank-0) traced value")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        weak = ", weak" if self.weak else ""
        return f"Tracer<{self.op.shape.element_type.value}{list(self.shape)}{weak}> ({self.op.name})"

    def __bool__(self):
        raise TypeError(f"the truth value of a traced value ({self!r}) is not known while tracing: "
                        "use lax.cond / lax.select / lax.while_loop instead of Python if/while/and/or, "
                        "or make the argument static (static_argnums)")

    def __array__(self, *args, **kwargs):
        raise TypeError(f"a traced value ({self!r}) has no concrete numpy value while tracing; "
                        "return it from the jitted function instead")

    def __index__(self):
        raise TypeError(f"a traced value ({self!r}) cannot be used as a Python integer while "
                        "tracing (e.g. as a shape or a static index)")

    __int__ = __float__ = __complex__ = __index__

    # -- arithmetic ---------------------------------------------------------
    def __add__(self, o): return _binary(ops.add, "+", self, o)
    def __radd__(self, o): return _binary(ops.add, "+", o, self)
    def __sub__(self, o): return _binary(ops.sub, "-", self, o)
    def __rsub__(self, o): return _binary(ops.sub, "-", o, self)
    def __mul__(self, o): return _binary(ops.mul, "*", self, o)
    def __rmul__(self, o): return _binary(ops.mul, "*", o, self)
    def __truediv__(self, o): return _true_divide(self, o)
    def __rtruediv__(self, o): return _true_divide(o, self)
    def __floordiv__(self, o): return _floor_divide(self, o)
    def __rfloordiv__(self, o): return _floor_divide(o, self)
    def __mod__(self, o): return _mod(self, o)
    def __rmod__(self, o): return _mod(o, self)
    def __pow__(self, o): return _power(self, o)
    def __rpow__(self, o): return _power(o, self)
    def __matmul__(self, o): return matmul(self, o)
    def __rmatmul__(self, o): return matmul(o, self)
    def __neg__(self): return _negate(self)
    def __pos__(self): return self
    def __abs__(self): return _absolute(self)
    def __invert__(self): return _invert(self)
    def __and__(self, o): return _binary(ops.and_, "&", self, o)
    def __rand__(self, o): return _binary(ops.and_, "&", o, self)
    def __or__(self, o): return _binary(ops.or_, "|", self, o)
    def __ror__(self, o): return _binary(ops.or_, "|", o, self)
    def __xor__(self, o): return _binary(ops.xor, "^", self, o)
    def __rxor__(self, o): return _binary(ops.xor, "^", o, self)
    def __lshift__(self, o): return _shift("<<", self, o)
    def __rlshift__(self, o): return _shift("<<", o, self)
    def __rshift__(self, o): return _shift(">>", self, o)
    def __rrshift__(self, o): return _shift(">>", o, self)

    # -- comparisons: pred Tracers ------------------------------------------
    # `t == None` stays Python's identity test (False); every array-like value builds a compare.
    def __eq__(self, o): return NotImplemented if o is None else _compare("EQ", self, o)  # type: ignore[override]
    def __ne__(self, o): return NotImplemented if o is None else _compare("NE", self, o)  # type: ignore[override]
    def __lt__(self, o): return _compare("LT", self, o)
    def __le__(self, o): return _compare("LE", self, o)
    def __gt__(self, o): return _compare("GT", self, o)
    def __ge__(self, o): return _compare("GE", self, o)

    # -- indexing and shape methods -----------------------------------------
    def __getitem__(self, key): return _getitem(self, key)

    @property
    def T(self) -> "Tracer":  # noqa: N802 - numpy's name
        return self.transpose()

    def transpose(self, *axes) -> "Tracer":
        """numpy's ``transpose``: reversed dimensions by default."""
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = _bi.tuple(axes[0])
        perm = list(reversed(range(self.ndim))) if not axes else [a % self.ndim for a in axes]
        return Tracer(ops.transpose(self.value, perm), self.weak)

    def reshape(self, *shape) -> "Tracer":
        """numpy's ``reshape`` (row-major), one ``-1`` allowed."""
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = _bi.tuple(shape[0])
        shape = [_operator.index(n) for n in shape]
        if shape.count(-1) > 1:
            raise ValueError("reshape: can only specify one unknown dimension (-1)")
        if -1 in shape:
            known = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
            if known == 0 or self.size % known:
                raise ValueError(f"reshape: cannot reshape an array of shape {self.shape} into {shape}")
            shape[shape.index(-1)] = self.size // known
        return Tracer(ops.reshape(self.value, shape), self.weak)

    def astype(self, dtype) -> "Tracer":
        return Tracer(convert(self, np.dtype(dtype), "astype"))

    def sum(self, axis=None, keepdims: bool = False) -> "Tracer":
        return _reduce_method(self, "sum", axis, keepdims, "sum")

    def prod(self, axis=None, keepdims: bool = False) -> "Tracer":
        return _reduce_method(self, "prod", axis, keepdims, "prod")

    def max(self, axis=None, keepdims: bool = False) -> "Tracer":
        return _reduce_method(self, "max", axis, keepdims, "max")

    def min(self, axis=None, keepdims: bool = False) -> "Tracer":
        return _reduce_method(self, "min", axis, keepdims, "min")

    def any(self, axis=None, keepdims: bool = False) -> "Tracer":
        return _reduce_method(self, "or", axis, keepdims, "any")

    def all(self, axis=None, keepdims: bool = False) -> "Tracer":
        return _reduce_method(self, "and", axis, keepdims, "all")

    def mean(self, axis=None, keepdims: bool = False) -> "Tracer":
        """numpy's ``mean``: integers and bools average in f32."""
        return _mean(self, axis, keepdims)


# ---------------------------------------------------------------------------
# tracing a function
# ---------------------------------------------------------------------------

@dataclass
class TracedFunction:
    """A traced function: ``computation`` takes the flat argument leaves and then the
    ``captured`` values (XlaOps of the caller's builder) as parameters; it returns
    the flat result leaves, as a tuple when ``tuple_result``."""

    computation: XlaComputation
    out_tree: object
    out_shapes: list
    out_weak: list
    captured: list
    tuple_result: bool

    @property
    def num_outputs(self) -> int:
        return len(self.out_shapes)


def trace(fn, in_tree, in_shapes: list, *, name: str, parent: XlaBuilder | None = None,
          in_weak=None, tuple_result: bool | None = None, param_names=None) -> TracedFunction:
    """Run ``fn`` on Tracers standing for parameters of ``in_shapes`` (flat leaves of the
    tree ``in_tree``; ``fn`` is called with the unflattened tree's elements as positional
    arguments when the tree is a tuple of arguments).  ``parent``: the builder of the
    caller, whose values (and its callers') ``fn`` may capture; None for a top-level trace.
    ``tuple_result``: None makes a tuple only for several leaves (or a container).
    ``param_names``: names of the HLO parameters (default ``arg0``, ``arg1``, ...)."""
    b = XlaBuilder(name)
    stack = _stack()
    parent_trace = None
    if parent is not None:
        parent_trace = stack[-1] if stack and stack[-1].builder is parent else _Trace(parent, None)
    tr = _Trace(b, parent_trace, len(in_shapes), name)
    in_weak = in_weak or [False] * len(in_shapes)
    names = param_names or [f"arg{i}" for i in range(len(in_shapes))]
    params = [Tracer(ops.parameter(b, i, s, name), w)
              for i, (s, w, name) in enumerate(zip(in_shapes, in_weak, names))]
    args = in_tree.unflatten(params)
    stack.append(tr)
    try:
        out = fn(*args)
        leaves, out_tree = flatten(out)
        for leaf in leaves:
            if not isinstance(leaf, (Tracer, XlaOp)) and not _is_python_scalar(leaf) \
                    and not isinstance(leaf, (np.ndarray, np.generic)):
                raise TypeError(f"{name}: the function returned a {type(leaf).__name__}; it must return "
                                "arrays (traced values, numpy arrays or Python scalars) or "
                                "tuples/lists/dicts of them")
        out_ops = [to_op(leaf, op=name) for leaf in leaves]
        out_weak = [_weak(leaf) for leaf in leaves]
    finally:
        stack.pop()
    as_tuple = (len(out_ops) != 1 or isinstance(out_tree, _OptreeDef) and out_tree.treedef.num_nodes > 1
                or isinstance(out_tree, _FlatDef) and out_tree.kind is not None) \
        if tuple_result is None else tuple_result
    root = ops.tuple(b, out_ops) if as_tuple else out_ops[0]
    comp = b.build(root)
    captured = [outer for outer, _ in tr.captures.values()]
    return TracedFunction(comp, out_tree, [o.shape for o in out_ops], out_weak, captured, as_tuple)

