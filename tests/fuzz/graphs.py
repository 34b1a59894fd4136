"""Random computations built with ``xlac.ops``, for the differential fuzzer.

A :class:`Graph` draws every choice from hypothesis (``st.data()``), so a
failing graph shrinks to few ops, small shapes and simple values.  Each value
carries how far the JIT may differ from the evaluator on it:

* ``tol == 0`` (exact): computed only by operations both sides compute bit for
  bit — data movement, integer and pred arithmetic (wrapping, and the edge
  cases docs/numerics.md defines: x / 0, INT_MIN / -1, big shifts,
  saturating float -> int conversion), and IEEE float +, -, *, /, sqrt, fmod,
  max, min, rounding, compare, select, convert;
* ``tol > 0`` (inexact, a relative tolerance): touched by the polynomial math
  (exp, log, tanh, ...; docs/numerics.md: within ~2 ulp, not bit-identical to
  numpy), or by a float reduction or dot, which may be reassociated.

An inexact value only flows into operations that keep a small relative error
small (data movement, negate, abs, multiply, divide, max, min, sqrt,
float-to-float convert, and exp/tanh-like functions).  Operations that turn a
1-ulp difference into a different answer — compare, floor, sign, convert to
an integer, add and subtract (cancellation), log near 1 — take exact values
only, so the comparison never flags a difference that is not a bug.
"""
from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

import xlac
from xlac import ops
from fuzzconf import FLOATS, INTS, RTOL, TYPES, dtype

DIM_SIZES = (2, 3, 1, 4, 0, 2, 3, 5)       # zero-size dimensions one time in eight
MAX_RANK = 4
MAX_PARAMS = 8


@dataclass
class Value:
    op: "xlac.XlaOp"
    tol: float = 0.0                      # 0: exact; else the relative tolerance

    @property
    def et(self) -> str:
        return self.op.shape.element_type.value

    @property
    def dims(self) -> tuple:
        return tuple(self.op.shape.dimensions)

    @property
    def exact(self) -> bool:
        return self.tol == 0.0


def _kind(et: str) -> str:
    return "pred" if et == "pred" else "int" if et in INTS else "float"


def _scalar(et: str, value) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array(value).astype(dtype(et))


# ---------------------------------------------------------------------------
# the graph and its choices
# ---------------------------------------------------------------------------

class Graph:
    """A computation under construction: its values, parameters and the draws."""

    def __init__(self, data):
        self.data = data
        self.b = xlac.XlaBuilder("fuzz")
        self.values: list[Value] = []
        self.params: list[tuple[str, tuple]] = []      # (element type, dims) for the inputs

    # -- drawing -------------------------------------------------------------------------
    def draw(self, strategy):
        return self.data.draw(strategy)

    def choice(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def flag(self, p_true_in_8: int = 4) -> bool:
        return self.draw(st.integers(0, 7)) < p_true_in_8

    def dims(self, rank: int | None = None) -> tuple:
        if rank is None:
            rank = self.choice((1, 2, 0, 3, 2, 4))
        return tuple(self.choice(DIM_SIZES) for _ in range(rank))

    def subset(self, items, min_size: int = 0) -> list:
        """A sub-list of ``items`` in their order."""
        chosen = [x for x in items if self.flag()]
        return chosen if len(chosen) >= min_size else list(items)[:min_size]

    def permutation(self, n: int) -> list:
        return list(self.draw(st.permutations(range(n))))

    # -- values --------------------------------------------------------------------------
    def add(self, op, tol: float = 0.0) -> Value:
        v = Value(op, tol)
        self.values.append(v)
        return v

    def pick(self, ok=lambda v: True) -> Value | None:
        """An existing value for which ``ok`` holds, recent ones more often (deep chains)."""
        cands = [v for v in self.values if ok(v)]
        if not cands:
            return None
        if self.flag(3):
            return cands[-1]
        return cands[self.draw(st.integers(0, len(cands) - 1))]

    def parameter(self, et: str, dims: tuple) -> Value | None:
        """A new parameter, sometimes with a permuted or padded layout."""
        if len(self.params) >= MAX_PARAMS:
            return None
        layout = None
        if len(dims) >= 2 and self.flag(3):
            layout = xlac.Layout(minor_to_major=tuple(self.permutation(len(dims))))
        elif dims and et != "pred" and self.flag(1):
            m2m = tuple(range(len(dims) - 1, -1, -1))
            padded = tuple(n + self.choice((0, 1, 3)) for n in dims)
            layout = xlac.Layout(minor_to_major=m2m, padded_dimensions=padded)
        shape = xlac.Shape(xlac.PrimitiveType.from_name(et), dims, layout=layout)
        op = ops.parameter(self.b, len(self.params), shape, f"p{len(self.params)}")
        self.params.append((et, dims))
        return self.add(op)

    def constant(self, et: str, value) -> "xlac.XlaOp":
        return ops.constant(self.b, _scalar(et, value))

    def partner(self, x: Value, exact: bool = False) -> Value | None:
        """A second operand of ``x``'s type and dimensions: an existing value, a
        broadcast constant or a new parameter."""
        how = self.choice(("value", "value", "constant", "parameter"))
        if how == "value":
            y = self.pick(lambda v: v.et == x.et and v.dims == x.dims and (v.exact or not exact))
            if y is not None:
                return y
        if how == "constant" or len(self.params) >= MAX_PARAMS:
            c = self.constant(x.et, self.choice(_CONSTANTS[_kind(x.et)]))
            return Value(ops.broadcast_in_dim(c, x.dims, []))
        return self.parameter(x.et, x.dims)

    def index_scalar(self, et: str, high: int) -> "xlac.XlaOp":
        """A run-time start index: a constant (often out of range) or a scalar parameter."""
        if self.flag(2):
            p = self.parameter(et, ())
            if p is not None:
                self.values.pop()             # an index, not a value to build on
                return p.op
        values = (0, 1, high, high + 1, -1, 2**31 - 1, -2**31) if et == "s32" else (0, 1, high, 255)
        return self.constant(et, self.choice(values))


_CONSTANTS = {
    "pred": (True, False),
    "int": (0, 1, -1, 3, 7, 2**31 - 1, -2**31),
    "float": (0.0, 1.0, -1.5, 2.0, -0.0, np.inf, np.nan, 1e-3),
}


def _join(*values: Value) -> float:
    return builtins.max(v.tol for v in values)


def _inexact(et: str, *inputs: Value) -> float:
    return builtins.max([RTOL[et]] + [v.tol for v in inputs])


# ---------------------------------------------------------------------------
# elementwise operations
# ---------------------------------------------------------------------------

#: float unary ops: name -> (exact, may take an inexact operand)
FLOAT_UNARY = {
    "neg": (True, True), "abs": (True, True), "sqrt": (True, True),
    "floor": (True, False), "ceil": (True, False), "round_nearest_afz": (True, False),
    "round_nearest_even": (True, False), "sign": (True, False), "is_finite": (True, False),
    "exp": (False, True), "expm1": (False, True), "tanh": (False, True), "logistic": (False, True),
    "erf": (False, True), "cbrt": (False, True), "rsqrt": (False, True),
    "log": (False, False), "log1p": (False, False), "sin": (False, False), "cos": (False, False),
    "tan": (False, False),
}
INT_UNARY = ("neg", "abs", "not_", "clz", "population_count", "sign")
#: float binary ops: name -> (exact, may take inexact operands)
FLOAT_BINARY = {
    "add": (True, False), "sub": (True, False), "mul": (True, True), "div": (True, True),
    "max": (True, True), "min": (True, True), "rem": (True, False),
    "pow": (False, False), "atan2": (False, False),
}
INT_BINARY = ("add", "sub", "mul", "div", "rem", "max", "min", "and_", "or_", "xor", "shift_left",
              "shift_right_arithmetic", "shift_right_logical", "pow")
PRED_BINARY = ("and_", "or_", "xor", "max", "min")


def op_unary(g: Graph) -> Value | None:
    x = g.pick()
    kind = _kind(x.et)
    if kind == "float":
        name = g.choice([n for n, (_, any_in) in FLOAT_UNARY.items() if x.exact or any_in])
        exact = FLOAT_UNARY[name][0]
        out = getattr(ops, name)(x.op)
        return g.add(out, x.tol if exact else _inexact(x.et, x))
    names = [n for n in INT_UNARY if n != "abs" or x.et != "u8"] if kind == "int" else ["not_"]
    name = g.choice(names)
    return g.add(getattr(ops, name)(x.op))


def op_binary(g: Graph) -> Value | None:
    x = g.pick()
    kind = _kind(x.et)
    if kind == "float":
        names = [n for n, (_, any_in) in FLOAT_BINARY.items() if x.exact or any_in]
        name = g.choice(names)
        exact, any_in = FLOAT_BINARY[name]
        y = g.partner(x, exact=not any_in)
        if y is None:
            return None
        out = getattr(ops, name)(x.op, y.op)
        return g.add(out, _join(x, y) if exact else _inexact(x.et, x, y))
    y = g.partner(x)
    if y is None:
        return None
    name = g.choice(INT_BINARY if kind == "int" else PRED_BINARY)
    return g.add(getattr(ops, name)(x.op, y.op))


def op_rank_broadcast(g: Graph) -> Value | None:
    """A binary op whose lower-rank operand broadcasts (``broadcast_dimensions``)."""
    x = g.pick(lambda v: len(v.dims) >= 1 and (v.exact or v.et == "pred" or v.et in INTS))
    if x is None:
        return None
    bd = g.subset(range(len(x.dims)))
    if len(bd) == len(x.dims):
        bd = bd[1:]
    y = g.parameter(x.et, tuple(x.dims[d] if g.flag(6) else 1 for d in bd))
    if y is None:
        return None
    name = {"float": "add", "int": "mul", "pred": "or_"}[_kind(x.et)]
    lhs, rhs = (x, y) if g.flag() else (y, x)
    return g.add(getattr(ops, name)(lhs.op, rhs.op, broadcast_dimensions=bd))


def op_compare(g: Graph) -> Value | None:
    x = g.pick(lambda v: v.exact)
    y = g.partner(x, exact=True) if x is not None else None
    if y is None:
        return None
    direction = g.choice(("eq", "ne", "lt", "le", "gt", "ge"))
    if _kind(x.et) == "float" and g.flag(3):
        direction += "_total_order"
    return g.add(getattr(ops, direction)(x.op, y.op))


def _pred_like(g: Graph, x: Value) -> "xlac.XlaOp":
    p = g.pick(lambda v: v.et == "pred" and v.dims == x.dims) if g.flag(5) else None
    if p is not None:
        return p.op
    if g.flag(2):
        return g.constant("pred", g.flag())                   # a scalar pred
    q = g.parameter("pred", x.dims)
    return q.op if q is not None else g.constant("pred", True)


def op_select(g: Graph) -> Value | None:
    x = g.pick()
    y = g.partner(x)
    if y is None:
        return None
    return g.add(ops.select(_pred_like(g, x), x.op, y.op), _join(x, y))


def op_clamp(g: Graph) -> Value | None:
    x = g.pick(lambda v: v.et != "pred")
    if x is None:
        return None
    values = _CONSTANTS[_kind(x.et)]
    lo, hi = (g.constant(x.et, g.choice(values)) for _ in range(2))
    return g.add(ops.clamp(lo, x.op, hi), x.tol)


def op_convert(g: Graph) -> Value | None:
    x = g.pick()
    targets = TYPES if x.exact else FLOATS
    et = g.choice(targets)
    out = ops.convert_element_type(x.op, xlac.PrimitiveType.from_name(et))
    return g.add(out, 0.0 if x.exact else _inexact(et, x))


# ---------------------------------------------------------------------------
# data movement
# ---------------------------------------------------------------------------

def op_broadcast_in_dim(g: Graph) -> Value | None:
    x = g.pick(lambda v: len(v.dims) < MAX_RANK)
    if x is None:
        return None
    rank = len(x.dims) + g.draw(st.integers(0, MAX_RANK - len(x.dims)))
    positions = sorted(g.permutation(rank)[:len(x.dims)])
    out = list(g.dims(rank))
    for i, d in enumerate(positions):
        out[d] = x.dims[i] if x.dims[i] != 1 or g.flag(5) else out[d]
    return g.add(ops.broadcast_in_dim(x.op, out, positions), x.tol)


def op_broadcast(g: Graph) -> Value | None:
    x = g.pick(lambda v: len(v.dims) < MAX_RANK)
    if x is None:
        return None
    sizes = g.dims(g.draw(st.integers(1, MAX_RANK - len(x.dims))))
    return g.add(ops.broadcast(x.op, sizes), x.tol)


def _factorizations(g: Graph, n: int) -> tuple:
    """Dimensions with ``n`` elements in all."""
    rank = g.choice((1, 2, 0, 3, 4))
    if n == 0:
        dims = list(g.dims(builtins.max(rank, 1)))
        dims[g.draw(st.integers(0, len(dims) - 1))] = 0
        return tuple(dims)
    dims = [1] * builtins.max(rank, 1)
    p, m = 2, n
    while m > 1:                              # prime factors, each into a drawn dimension
        while m % p:
            p += 1
        m //= p
        dims[g.draw(st.integers(0, len(dims) - 1))] *= p
    return tuple(dims) if rank or n != 1 else ()


def op_reshape(g: Graph) -> Value | None:
    x = g.pick()
    n = int(np.prod(x.dims, dtype=np.int64))
    return g.add(ops.reshape(x.op, list(_factorizations(g, n))), x.tol)


def op_transpose(g: Graph) -> Value | None:
    x = g.pick()
    return g.add(ops.transpose(x.op, g.permutation(len(x.dims))), x.tol)


def op_rev(g: Graph) -> Value | None:
    x = g.pick()
    return g.add(ops.rev(x.op, g.subset(range(len(x.dims)))), x.tol)


def op_slice(g: Graph) -> Value | None:
    x = g.pick()
    start, limit, strides = [], [], []
    for n in x.dims:
        lo = g.draw(st.integers(0, n))
        start.append(lo)
        limit.append(g.draw(st.integers(lo, n)))
        strides.append(g.choice((1, 1, 2, 3)))
    return g.add(ops.slice(x.op, start, limit, strides), x.tol)


def op_pad(g: Graph) -> Value | None:
    x = g.pick()
    config = []
    for n in x.dims:
        lo, hi, interior = g.draw(st.integers(-2, 2)), g.draw(st.integers(-2, 2)), g.choice((0, 0, 1, 2))
        if n + lo + hi + builtins.max(n - 1, 0) * interior < 0:
            lo = hi = 0
        config.append((lo, hi, interior))
    value = g.constant(x.et, g.choice(_CONSTANTS[_kind(x.et)]))
    return g.add(ops.pad(x.op, value, config), x.tol)


def op_concatenate(g: Graph) -> Value | None:
    x = g.pick(lambda v: len(v.dims) >= 1)
    if x is None:
        return None
    d = g.draw(st.integers(0, len(x.dims) - 1))
    parts = [x]
    for _ in range(g.draw(st.integers(1, 2))):
        how = g.choice(("self", "slice", "parameter"))
        if how == "self":
            parts.append(x)
        elif how == "slice":
            lo = g.draw(st.integers(0, x.dims[d]))
            start = [0] * len(x.dims)
            start[d] = lo
            parts.append(Value(ops.slice(x.op, start, list(x.dims)), x.tol))
        else:
            dims = list(x.dims)
            dims[d] = g.choice(DIM_SIZES)
            p = g.parameter(x.et, tuple(dims))
            if p is None:
                return None
            parts.append(p)
    return g.add(ops.concat_in_dim(g.b, [p.op for p in parts], d), _join(*parts))


def op_iota(g: Graph) -> Value | None:
    dims = g.dims(g.choice((1, 2, 3)))
    et = g.choice(("s32", "u8", "f32", "f64", "bf16", "f16"))
    shape = xlac.Shape(xlac.PrimitiveType.from_name(et), dims)
    return g.add(ops.iota(g.b, shape, g.draw(st.integers(0, len(dims) - 1))))


# ---------------------------------------------------------------------------
# reductions, dot, dynamic slicing, gather
# ---------------------------------------------------------------------------

_REDUCERS = {"float": ("add", "mul", "max", "min"), "int": ("add", "mul", "max", "min", "and_", "or_", "xor"),
             "pred": ("and_", "or_")}


def _identity(et: str, name: str):
    """The reducer's identity (the spec asks for one; any other init makes the
    result depend on how the reduction is split)."""
    if name in ("add", "or_", "xor"):
        return 0
    if name == "mul":
        return 1
    if name == "and_":
        return True if et == "pred" else -1
    if et in INTS:
        info = np.iinfo(dtype(et))
        return info.min if name == "max" else info.max
    return -np.inf if name == "max" else np.inf


def reducer(et: str, name: str):
    cb = xlac.XlaBuilder(f"{name.rstrip('_')}_{et}")
    scalar = xlac.Shape(xlac.PrimitiveType.from_name(et), ())
    a, b = ops.parameter(cb, 0, scalar, "a"), ops.parameter(cb, 1, scalar, "b")
    return cb.build(getattr(ops, name)(a, b))


def op_reduce(g: Graph) -> Value | None:
    x = g.pick()
    kind = _kind(x.et)
    names = [n for n in _REDUCERS[kind] if x.exact or n in ("max", "min")]
    name = g.choice(names)
    init = g.constant(x.et, _identity(x.et, name))
    out = ops.reduce(x.op, init, reducer(x.et, name), g.subset(range(len(x.dims))))
    reassociated = kind == "float" and name in ("add", "mul")
    return g.add(out, _inexact(x.et, x) if reassociated else x.tol)


def op_dot(g: Graph) -> Value | None:
    pred_too = g.flag(1)                      # a pred dot is or-of-ands (XLA); rarely drawn
    x = g.pick(lambda v: 1 <= len(v.dims) <= 3 and v.exact and (v.et != "pred" or pred_too))
    if x is None:
        return None
    r = len(x.dims)
    contracting = g.subset(range(r))[:2]
    rest = [d for d in range(r) if d not in contracting]
    batch = rest[:1] if rest and g.flag(3) else []
    free = g.dims(g.choice((0, 1, 1, 2)))
    logical = [("b", d) for d in batch] + [("c", d) for d in contracting] + [("f", i) for i in range(len(free))]
    order = g.permutation(len(logical))
    rhs_dims = tuple(x.dims[logical[k][1]] if logical[k][0] != "f" else free[logical[k][1]] for k in order)
    y = g.pick(lambda v: v.et == x.et and v.dims == rhs_dims and v.exact) if g.flag(3) else None
    y = y or g.parameter(x.et, rhs_dims)
    if y is None:
        return None
    where = {logical[k]: pos for pos, k in enumerate(order)}
    numbers = {"lhs_contracting_dimensions": contracting,
               "rhs_contracting_dimensions": [where[("c", d)] for d in contracting],
               "lhs_batch_dimensions": batch, "rhs_batch_dimensions": [where[("b", d)] for d in batch]}
    out = ops.dot_general(x.op, y.op, numbers)
    return g.add(out, _inexact(x.et, x, y) if _kind(x.et) == "float" else 0.0)


def op_dynamic_slice(g: Graph) -> Value | None:
    x = g.pick(lambda v: len(v.dims) >= 1)
    if x is None:
        return None
    et = g.choice(("s32", "s32", "u8"))
    sizes = [g.draw(st.integers(0, n)) for n in x.dims]
    starts = [g.index_scalar(et, n - s) for n, s in zip(x.dims, sizes)]
    return g.add(ops.dynamic_slice(x.op, starts, sizes), x.tol)


def op_dynamic_update_slice(g: Graph) -> Value | None:
    x = g.pick(lambda v: len(v.dims) >= 1)
    if x is None:
        return None
    sizes = tuple(g.draw(st.integers(0, n)) for n in x.dims)
    update = g.pick(lambda v: v.et == x.et and v.dims == sizes) if g.flag() else None
    update = update or g.parameter(x.et, sizes)
    if update is None:
        return None
    starts = [g.index_scalar("s32", n - s) for n, s in zip(x.dims, sizes)]
    return g.add(ops.dynamic_update_slice(x.op, update.op, starts), _join(x, update))


def op_gather(g: Graph) -> Value | None:
    """A gather with valid dimension numbers; its starts are often out of range
    (clamped).  A collapsed dimension of slice size 0 (issue 12, defect 1) is
    drawn rarely: XLA's shape inference allows it."""
    x = g.pick(lambda v: len(v.dims) >= 1)
    if x is None:
        return None
    r = len(x.dims)
    start_index_map = g.permutation(r)[:g.draw(st.integers(1, r))]
    collapsed = g.subset(range(r))
    sizes = [(0 if x.dims[d] == 0 or g.draw(st.integers(0, 15)) == 0 else 1) if d in collapsed
             else g.draw(st.integers(0, x.dims[d])) for d in range(r)]
    batch = g.dims(g.choice((1, 0, 2)))
    k = len(start_index_map)
    implicit = k == 1 and g.flag(2)          # index_vector_dim == rank: a trailing 1 implied
    index_dims = batch if implicit else batch + (k,)
    index_vector_dim = len(batch)
    out_rank = len(batch) + r - len(collapsed)
    offset_dims = sorted(g.permutation(out_rank)[:r - len(collapsed)])
    idx = g.parameter("s32", index_dims) if g.flag(5) else None
    if idx is None:
        n = int(np.prod(index_dims, dtype=np.int64))
        values = g.draw(st.lists(st.integers(-2, 6), min_size=n, max_size=n))
        idx = Value(ops.constant(g.b, np.array(values, np.int32).reshape(index_dims)))
    else:
        g.values.pop()
    numbers = {"offset_dims": offset_dims, "collapsed_slice_dims": collapsed,
               "start_index_map": start_index_map, "index_vector_dim": index_vector_dim}
    if any(sizes[d] == 0 < x.dims[d] for d in collapsed):
        try:                                  # the spec is silent: rejecting it is a valid answer
            return g.add(ops.gather(x.op, idx.op, numbers, sizes), x.tol)
        except xlac.ShapeError:
            return None
    return g.add(ops.gather(x.op, idx.op, numbers, sizes), x.tol)


OPS = {
    "unary": op_unary, "binary": op_binary, "rank_broadcast": op_rank_broadcast, "compare": op_compare,
    "select": op_select, "clamp": op_clamp, "convert": op_convert,
    "broadcast_in_dim": op_broadcast_in_dim, "broadcast": op_broadcast, "reshape": op_reshape,
    "transpose": op_transpose, "rev": op_rev, "slice": op_slice, "pad": op_pad,
    "concatenate": op_concatenate, "iota": op_iota, "reduce": op_reduce, "dot": op_dot,
    "dynamic_slice": op_dynamic_slice, "dynamic_update_slice": op_dynamic_update_slice,
    "gather": op_gather,
}
#: Elementwise ops drawn twice as often as the rest: they make the chains fusion works on.
WEIGHTED = [name for name in OPS for _ in range(2 if name in ("unary", "binary", "select", "convert") else 1)]


def build(data, min_ops: int = 5, max_ops: int = 40, types=TYPES):
    """A random computation: ``(computation, parameter (et, dims) list, [tol per result leaf])``."""
    g = Graph(data)
    for _ in range(g.draw(st.integers(1, 3))):
        g.parameter(g.choice(types), g.dims())
    target = g.draw(st.integers(min_ops, max_ops))
    made = attempts = 0
    while made < target and attempts < 4 * max_ops:
        attempts += 1
        if OPS[g.choice(WEIGHTED)](g) is not None:
            made += 1
    outputs = [g.values[-1]] + [g.pick() for _ in range(g.draw(st.integers(0, 3)))]
    unique = list({id(v.op.instruction): v for v in outputs}.values())
    root = unique[0].op if len(unique) == 1 else ops.tuple(g.b, [v.op for v in unique])
    return g.b.build(root), g.params, [v.tol for v in unique]
