"""Dynamic dimensions: the size of every dimension of a value, from its operands'.

A dynamic dimension (``f32[<=10,4]``: dimension 0) has a *bound*, the number
in the shape, which is what its buffer holds, and a *size* known at run time,
between 0 and the bound (XLA's bounded dynamic shapes; spec: SetDimensionSize,
GetDimensionSize).  This module is XLA's ``DynamicDimensionInference`` as one
table of rules, :data:`SIZE_RULES`, keyed by opcode: given the sizes of an
instruction's operands, the sizes of its result.  The same rules serve three
stages, each with its own kind of size (:class:`SizeArith`):

* shape inference (:data:`FLAGS`): a size is an int when it is known at
  compile time, :data:`DYNAMIC` when it is not; the result's dynamic
  dimensions are the ones whose size is :data:`DYNAMIC`;
* the evaluator (:data:`INTS`): every size is an int, read off the numpy
  arrays (a dynamic array is its valid elements only);
* the code generator's ``dynamic-padder`` pass (``xlac.passes.dynamic_padder``):
  a size is an int or an ``s32[]`` instruction computing it at run time.

Sizes of a value form a *size tree*: a ``tuple`` of sizes for an array (one
per dimension), a ``list`` of trees for a tuple, ``()`` for a token.

A rule also says at which sizes the op *reads* its operands
(``ctx.want``): an elementwise op of ``f32[<=10]`` (size 5) and ``f32[10]``
reads 5 elements of both, the size of the first operand whose dimension is
dynamic (XLA's choice).  Where both operands of an elementwise binary op are
dynamic in a dimension and their sizes differ at run time, XLA broadcasts
implicitly: an operand of size 1 is repeated up to the other's size, else both
are read at the smaller size (:meth:`SizeArith.broadcast_size`).  The evaluator
slices (or repeats) its operands to those sizes; the padder masks what
reductions and contractions read and repeats what implicit broadcasts read.
A rule may also say which attributes change at the run-time sizes
(``ctx.resized``: a gather's slice of a whole dynamic dimension is the size),
which the evaluator applies.

Beyond elementwise ops and plumbing, the rules cover XLA's: reshape (merging,
and splitting a dynamic dimension into the ``inferred_dimension``, the declared
dynamic one or else the major-most), slice, pad, concatenate, reverse,
dynamic-slice, reduce, dot, sort (sizes kept), reduce-window (XLA's window
count; no padding or base dilation on a dynamic dimension), gather (a dynamic
dimension sliced whole or one element; dynamic index batch dimensions) and
scatter (operand sizes kept; dynamic index or update batch dimensions; a
dynamic update window covering a dynamic operand dimension).  Called
computations: a call is walked through; a conditional's result is dynamic
where any branch's root is (the size of the branch taken), a while's state
where its body's parameter is (the sizes carried from one iteration to the
next), and a parameter of a branch, body or condition must declare dynamic
each dimension its operand has dynamic (else refused: the size would be lost).
The evaluator runs the branches, condition and body on the valid elements;
the padder passes the sizes in and out beside the padded values.

An opcode without a rule does not take dynamic operands: :func:`propagate`
raises :class:`xlac.UnsupportedError` naming the op, the operand and the
dynamic dimension, in every stage alike.
"""
from __future__ import annotations

import itertools
import math
from typing import Callable, Sequence

from ..errors import UnsupportedError
from ..shape import Shape

__all__ = ["DYNAMIC", "SizeArith", "FLAGS", "INTS", "SIZE_RULES", "SizeContext", "propagate", "as_flags",
           "involved", "branch_computations", "dynamic_dims", "sizes_at", "static_sizes", "flag_sizes", "with_flags", "normalize", "carries_size", "first_dynamic",
           "supported_opcodes", "common_factors"]


class _Dynamic:
    """A size known only at run time (shape inference's view)."""

    def __repr__(self) -> str:
        return "DYNAMIC"


DYNAMIC = _Dynamic()


class SizeArith:
    """Arithmetic on sizes.  Ints fold here; anything else goes to :meth:`runtime`,
    which a subclass defines (sizes are never negative; ``div`` divides by a
    positive int)."""

    def add(self, a, b):
        return a + b if _ints(a, b) else self.runtime("add", a, b)

    def sub(self, a, b):
        return a - b if _ints(a, b) else self.runtime("subtract", a, b)

    def mul(self, a, b):
        if _ints(a, b):
            return a * b
        if b == 1 or a == 1:
            return a if b == 1 else b
        return self.runtime("multiply", a, b)

    def div(self, a, b: int):
        if _ints(a, b):
            return a // b
        return a if b == 1 else self.runtime("divide", a, b)

    def min(self, a, b):
        return min(a, b) if _ints(a, b) else self.runtime("minimum", a, b)

    def max(self, a, b):
        return max(a, b) if _ints(a, b) else self.runtime("maximum", a, b)

    def clamp(self, lo: int, a, hi: int):
        return self.min(self.max(a, lo), hi)

    def broadcast_size(self, a, b):
        """The size of an elementwise binary op's dimension whose operands have sizes
        ``a`` and ``b`` (XLA's implicit broadcast): the larger where the smaller is 1,
        else the smaller.  In arithmetic (sizes are never negative): ``m + e*(M - m)``
        with ``m, M = min, max`` and ``e = min(m, 1) - min(max(m - 1, 0), 1)``, which is
        1 exactly when ``m == 1``."""
        if a is b:
            return a
        low, high = self.min(a, b), self.max(a, b)
        is_one = self.sub(self.min(low, 1), self.min(self.max(self.sub(low, 1), 0), 1))
        return self.add(low, self.mul(is_one, self.sub(high, low)))

    def runtime(self, opcode: str, a, b):
        raise TypeError(f"sizes {a!r} and {b!r} must be ints here")


def _ints(a, b) -> bool:
    return isinstance(a, int) and isinstance(b, int)


class _FlagArith(SizeArith):
    def runtime(self, opcode, a, b):
        return DYNAMIC


#: Shape inference: known sizes are ints, the others :data:`DYNAMIC`.
FLAGS = _FlagArith()
#: The evaluator: every size is an int.
INTS = SizeArith()


class SizeContext:
    """What a size rule sees: the op, its attributes, its operands' shapes (as
    declared: bounds and dynamic flags) and size trees, the result's shape (its
    bounds; the given shape of broadcast and reshape), the arithmetic, and
    ``value(i, k=None)``: the run-time value of scalar operand ``i`` (element
    ``k`` of vector operand ``i``) as a size.  A rule
    returns the result's size tree and may set ``want[i]``, the sizes at which
    it reads operand ``i`` (default: the operand's own), and ``resized``: the
    attributes that change when the op runs at the sizes (a gather's slice of a
    whole dynamic dimension: the evaluator's operand holds only the size)."""

    __slots__ = ("opcode", "attrs", "shapes", "sizes", "result", "arith", "value", "want", "known", "resized")

    def __init__(self, opcode, attrs, shapes, sizes, result, arith, value, known):
        self.opcode, self.attrs, self.shapes, self.sizes = opcode, attrs, shapes, sizes
        self.result, self.arith, self.value, self.known = result, arith, value, known
        self.want = list(sizes)
        self.resized: dict = {}

    def fail(self, detail: str) -> UnsupportedError:
        return UnsupportedError(f"{self.opcode} of a dynamic shape", detail)

    def dims(self, name: str) -> tuple:
        return tuple(int(str(v)) for v in self.attrs.get(name, ()))

    def dynamic(self, i: int, d: int) -> bool:
        """Whether dimension ``d`` of operand ``i`` has a size not known at compile time."""
        return not isinstance(self.known[i][d], int)

    def pick(self, d: int, operands) -> object:
        """The size of dimension ``d`` of the first of ``operands`` where it is
        dynamic, else of the first operand (all the same rank)."""
        for i in operands:
            if self.shapes[i].is_dynamic_dimension(d):
                return self.sizes[i][d]
        return self.sizes[operands[0]][d]


SIZE_RULES: dict[str, Callable[[SizeContext], object]] = {}

#: Opcodes whose result may be dynamic although no operand is.
_MAKES_DYNAMIC = frozenset({"set-dimension-size", "dynamic-reshape", "real-dynamic-slice", "call"})


def _rule(*opcodes: str):
    def deco(fn):
        for op in opcodes:
            SIZE_RULES[op] = fn
        return fn
    return deco


def supported_opcodes() -> frozenset:
    """The opcodes that take operands with dynamic dimensions."""
    return frozenset(SIZE_RULES)


# ---------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------

def involved(opcode: str, shapes: Sequence[Shape], result: Shape | None = None, attrs=None) -> bool:
    """Whether an instruction has anything dynamic to propagate: a dynamic
    operand or result, an op that makes dynamic results, or a conditional or
    while whose computations take or return dynamic values (sizes must be
    passed to them even from a static operand)."""
    if any(s.is_dynamic for s in shapes) or (result is not None and result.is_dynamic):
        return True
    if opcode in _MAKES_DYNAMIC and opcode != "call":
        return True
    attrs = attrs or {}
    if opcode == "call":
        callee = attrs.get("to_apply")
        return callee is not None and getattr(callee, "root", None) is not None and callee.root.shape.is_dynamic
    if opcode in ("conditional", "while"):
        callees = branch_computations(attrs) if opcode == "conditional" else [attrs.get("condition"),
                                                                              attrs.get("body")]
        return any(getattr(c, "root", None) is not None and
                   (c.root.shape.is_dynamic or any(p.shape.is_dynamic for p in c.parameters)) for c in callees)
    return False


def branch_computations(attrs: dict) -> list:
    """A conditional's branches in branch-index order (a pred's: true, false)."""
    if "branch_computations" in attrs:
        return list(attrs["branch_computations"])
    return [attrs.get("true_computation"), attrs.get("false_computation")]


def dynamic_dims(shape: Shape) -> list:
    """``(leaf, dimension)`` of each dynamic dimension of ``shape``'s array leaves
    (leaves numbered as :meth:`Shape.leaves`), in order."""
    return [(k, d) for k, leaf in enumerate(shape.leaves()) if leaf.is_array
            for d in range(leaf.rank) if leaf.is_dynamic_dimension(d)]


def sizes_at(shape: Shape, dims: Sequence, sizes: Sequence):
    """The size tree of ``shape``: ``sizes[i]`` at ``dims[i]`` (``(leaf,
    dimension)``), the bound elsewhere."""
    at = dict(zip(dims, sizes))
    leaves = iter(enumerate(shape.leaves()))

    def build(s: Shape):
        if s.is_tuple:
            return [build(e) for e in s.tuple_shapes]
        k, leaf = next(leaves)
        return tuple(at.get((k, d), n) for d, n in enumerate(leaf.dimensions)) if leaf.is_array else ()
    return build(shape)


def propagate(opcode: str, attrs: dict, shapes: Sequence[Shape], sizes: Sequence, result: Shape,
              arith: SizeArith, value: Callable[[int], object] | None = None, known: Sequence | None = None,
              resized: dict | None = None) -> tuple:
    """``(result size tree, sizes each operand is read at)`` of an instruction.

    ``shapes``/``sizes``: the operands' declared shapes and size trees;
    ``result``: the result shape (bounds); ``value(i, k=None)``: the run-time
    value of scalar operand ``i`` (set-dimension-size's size), or of element
    ``k`` of vector operand ``i`` (real-dynamic-slice's starts); ``resized``,
    when given, receives the attributes the op has at the sizes (see
    :class:`SizeContext`).  Raises ``UnsupportedError`` for an op without a rule
    that has a dynamic operand or result."""
    rule = SIZE_RULES.get(opcode)
    known = list(known) if known is not None else [as_flags(t) for t in sizes]
    # A dimension is dynamic where its size is, whatever the operand declares (XLA's
    # DynamicDimensionInference follows the sizes: an operand declared static may carry
    # the run-time size its own operand gave it).
    shapes = [with_flags(s, k, keep=True) if _matches(s, k) else s for s, k in zip(shapes, known)]
    if rule is None:
        raise _unsupported(opcode, shapes, result)
    ctx = SizeContext(opcode, attrs, shapes, list(sizes), result, arith,
                      value or (lambda i, k=None: DYNAMIC), known)
    tree = rule(ctx)
    if resized is not None:
        resized.update(ctx.resized)
    return tree, ctx.want


def _matches(shape: Shape, tree) -> bool:
    """Whether ``tree`` is a size tree of ``shape`` (as deep, as many dimensions)."""
    if shape.is_tuple:
        return isinstance(tree, list) and len(tree) == len(shape.tuple_shapes) and \
            all(_matches(s, t) for s, t in zip(shape.tuple_shapes, tree))
    return isinstance(tree, tuple) and len(tree) == (shape.rank if shape.is_array else 0)


def carries_size(tree) -> bool:
    """Whether a size tree holds a size that is not an int (a run-time size)."""
    if isinstance(tree, (list, tuple)):
        return any(carries_size(t) for t in tree)
    return not isinstance(tree, int)


def as_flags(tree):
    """A size tree as shape inference's: ints kept, any other size :data:`DYNAMIC`."""
    if isinstance(tree, list):
        return [as_flags(t) for t in tree]
    if isinstance(tree, tuple):
        return tuple(n if isinstance(n, int) else DYNAMIC for n in tree)
    return tree


def _unsupported(opcode: str, shapes: Sequence[Shape], result: Shape) -> UnsupportedError:
    found = first_dynamic(shapes)
    if found is not None:
        i, d, shape = found
        where = f"dimension {d} of operand {i} ({shape}) is dynamic"
    else:
        found = first_dynamic([result])
        where = f"dimension {found[1]} of the result ({found[2]}) is dynamic" if found else "dynamic shapes"
    return UnsupportedError(f"{opcode} of a dynamic shape",
                            f"{where}; ops that take dynamic dimensions: see docs/ops.md")


def first_dynamic(shapes: Sequence[Shape]):
    """``(operand index, dimension, array shape)`` of the first dynamic dimension, or None."""
    for i, s in enumerate(shapes):
        for leaf in s.leaves():
            for d in range(leaf.rank if leaf.is_array else 0):
                if leaf.is_dynamic_dimension(d):
                    return i, d, leaf
    return None


# ---------------------------------------------------------------------------------------
# Size trees
# ---------------------------------------------------------------------------------------

def static_sizes(shape: Shape):
    """The size tree of ``shape`` with every dimension at its bound."""
    if shape.is_tuple:
        return [static_sizes(s) for s in shape.tuple_shapes]
    return tuple(shape.dimensions) if shape.is_array else ()


def flag_sizes(shape: Shape, dynamic=DYNAMIC):
    """The size tree of ``shape`` with ``dynamic`` at its dynamic dimensions."""
    if shape.is_tuple:
        return [flag_sizes(s, dynamic) for s in shape.tuple_shapes]
    if not shape.is_array:
        return ()
    return tuple(dynamic if shape.is_dynamic_dimension(d) else n for d, n in enumerate(shape.dimensions))


def with_flags(shape: Shape, tree, keep: bool = False) -> Shape:
    """``shape`` whose dimensions are dynamic where ``tree`` holds a size that is
    not an int (``keep``: and where ``shape`` already says so)."""
    if shape.is_tuple:
        return Shape.tuple([with_flags(s, t, keep) for s, t in zip(shape.tuple_shapes, tree)])
    if not shape.is_array:
        return shape
    flags = [not isinstance(n, int) or (keep and shape.is_dynamic_dimension(d)) for d, n in enumerate(tree)]
    return shape.with_dynamic_dimensions(flags)


def normalize(tree, shape: Shape):
    """``tree`` with the bound at every dimension ``shape`` declares static."""
    if shape.is_tuple:
        return [normalize(t, s) for t, s in zip(tree, shape.tuple_shapes)]
    if not shape.is_array:
        return ()
    return tuple(n if shape.is_dynamic_dimension(d) else shape.dimensions[d] for d, n in enumerate(tree))


# ---------------------------------------------------------------------------------------
# Rules: elementwise and plumbing
# ---------------------------------------------------------------------------------------

def _same_rank_arrays(ctx: SizeContext, rank: int) -> list:
    return [i for i, s in enumerate(ctx.shapes) if s.is_array and s.rank == rank and rank > 0]


@_rule("abs", "ceil", "count-leading-zeros", "floor", "imag", "is-finite", "negate", "not", "popcnt",
       "real", "round-nearest-afz", "round-nearest-even", "sign", "rsqrt", "sqrt", "cbrt", "cosine", "erf",
       "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "sine", "tan", "tanh",
       "add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor", "shift-left",
       "shift-right-arithmetic", "shift-right-logical", "complex", "divide", "remainder", "atan2",
       "power", "compare", "select", "clamp", "convert", "reduce-precision", "stochastic-convert",
       "copy", "map")
def _elementwise(ctx: SizeContext):
    if ctx.result.is_tuple:                       # select between tuples: a scalar pred
        return _tuple_select(ctx)
    arrays = _same_rank_arrays(ctx, ctx.result.rank)
    out = tuple(_elementwise_size(ctx, d, arrays) for d in range(ctx.result.rank))
    for i in arrays:
        ctx.want[i] = out
    return out


def _elementwise_size(ctx: SizeContext, d: int, arrays: list):
    """Dimension ``d``'s size: XLA's implicit broadcast when both operands of a binary
    op have a size there that is not known at compile time, else the first dynamic
    operand's."""
    dynamic = [i for i in arrays if not isinstance(ctx.known[i][d], int)]
    if len(arrays) == 2 and len(dynamic) == 2 and ctx.opcode != "select":
        return ctx.arith.broadcast_size(ctx.sizes[0][d], ctx.sizes[1][d])
    return ctx.pick(d, arrays)


def _tuple_select(ctx: SizeContext):
    def pick(a, b, sa: Shape, sb: Shape):
        if sa.is_tuple:
            return [pick(x, y, p, q) for x, y, p, q in zip(a, b, sa.tuple_shapes, sb.tuple_shapes)]
        return tuple(b[d] if sb.is_dynamic_dimension(d) and not sa.is_dynamic_dimension(d) else a[d]
                     for d in range(len(a)))
    out = pick(ctx.sizes[1], ctx.sizes[2], ctx.shapes[1], ctx.shapes[2])
    ctx.want[1] = ctx.want[2] = out
    return out


@_rule("bitcast-convert")
def _bitcast_convert(ctx: SizeContext):
    x = ctx.shapes[0]
    if x.rank == ctx.result.rank:
        return _elementwise(ctx)
    if x.rank > ctx.result.rank:                  # the minor dimension becomes one element
        if x.is_dynamic_dimension(x.rank - 1):
            raise ctx.fail(f"its minor dimension {x.rank - 1} ({x}) is dynamic and is bitcast away")
        return tuple(ctx.sizes[0][:-1])
    return tuple(ctx.sizes[0]) + (ctx.result.dimensions[-1],)


@_rule("parameter", "constant", "iota")
def _leaf(ctx: SizeContext):
    """A leaf declared dynamic (``s32[<=10] iota()``): its size is its bound (a
    parameter's comes from its caller)."""
    return static_sizes(ctx.result)


@_rule("opt-barrier", "add-dependency")
def _pass_through(ctx: SizeContext):
    return ctx.sizes[0]


@_rule("tuple")
def _tuple(ctx: SizeContext):
    return list(ctx.sizes)


@_rule("get-tuple-element")
def _get_tuple_element(ctx: SizeContext):
    return ctx.sizes[0][int(str(ctx.attrs["index"]))]


@_rule("get-dimension-size")
def _get_dimension_size(ctx: SizeContext):
    return ()


@_rule("set-dimension-size")
def _set_dimension_size(ctx: SizeContext):
    (d,) = ctx.dims("dimensions")
    out = list(ctx.sizes[0])
    out[d] = ctx.arith.clamp(0, ctx.value(1), ctx.shapes[0].dimensions[d])
    return tuple(out)


@_rule("dynamic-reshape")
def _dynamic_reshape(ctx: SizeContext):
    """XLA's DynamicReshape: a dynamic dimension of the result takes its size
    operand (clamped to ``[0, bound]``, as set-dimension-size's); a static one
    keeps its bound and XLA ignores its operand.  The valid elements, in
    row-major order, are the operand's valid elements, in row-major order."""
    r = ctx.result
    return tuple(ctx.arith.clamp(0, ctx.value(1 + d), n) if r.is_dynamic_dimension(d) else n
                 for d, n in enumerate(r.dimensions))


@_rule("real-dynamic-slice")
def _real_dynamic_slice(ctx: SizeContext):
    """StableHLO's real_dynamic_slice: ``ceil((limit - start) / stride)``
    elements in each dynamic dimension of the result (clamped to ``[0,
    bound]``, a stride below 1 taken as 1); a static one keeps its bound (the
    evaluator checks the count matches).  The operand is read whole (its own
    sizes)."""
    a, r = ctx.arith, ctx.result
    out = []
    for d, n in enumerate(r.dimensions):
        if not r.is_dynamic_dimension(d):
            out.append(n)
            continue
        start, limit, stride = ctx.value(1, d), ctx.value(2, d), a.max(ctx.value(3, d), 1)
        span = a.max(a.sub(limit, start), 0)
        count = span if isinstance(stride, int) and stride == 1 else _ceil_div(a, span, stride)
        out.append(a.clamp(0, count, n))
    return tuple(out)


def _ceil_div(a: SizeArith, n, k):
    """``ceil(n / k)`` of sizes ``n >= 0`` and ``k >= 1``."""
    if _ints(n, k):
        return -(-n // k)
    return a.runtime("divide", a.add(n, a.sub(k, 1)), k)


@_rule("call")
def _call(ctx: SizeContext):
    """Through the called computation, instruction by instruction (shape
    inference and the evaluator; the padder inlines calls first)."""
    comp = ctx.attrs["to_apply"]
    sizes = {}
    for inst in comp.instructions:
        if inst.opcode == "parameter":
            sizes[id(inst)] = ctx.sizes[inst.parameter_number]
            continue
        shapes = [o.shape for o in inst.operands]
        if not involved(inst.opcode, shapes, inst.shape, inst.attrs):
            sizes[id(inst)] = static_sizes(inst.shape)
            continue
        tree, _ = propagate(inst.opcode, inst.attrs, shapes, [sizes[id(o)] for o in inst.operands],
                            inst.shape, ctx.arith)
        sizes[id(inst)] = normalize(tree, inst.shape)
    return sizes[id(comp.root)]


@_rule("conditional")
def _conditional(ctx: SizeContext):
    """XLA's rule: operand ``k``'s sizes go into branch ``k``'s parameter, which
    must declare dynamic each dimension the operand has dynamic (else the size
    would be lost); the result is dynamic where any branch's root is, its size
    the one the branch taken returns.  Shape inference sees that much; the
    evaluator runs the branch taken on the valid elements, and the padder
    passes the sizes in and out beside the padded values."""
    for k, comp in enumerate(branch_computations(ctx.attrs)):
        _carried(ctx, ctx.shapes[k + 1], f"operand {k + 1}", comp.parameters[0].shape,
                 f"the parameter of branch {k} ({comp.name})")
    roots = [set(dynamic_dims(c.root.shape)) for c in branch_computations(ctx.attrs)]
    return sizes_at(ctx.result, sorted(set().union(*roots)), itertools.repeat(DYNAMIC))


@_rule("while")
def _while(ctx: SizeContext):
    """XLA's rule: the loop state's sizes are carried from one iteration to the
    next, so the state is dynamic where the body's parameter declares it; the
    initial value and the body's result may be dynamic only there, and the
    condition's parameter must be dynamic there too (else a size would be
    lost)."""
    cond, body = ctx.attrs["condition"], ctx.attrs["body"]
    state = body.parameters[0].shape
    where = f"the body's parameter ({body.name})"
    _carried(ctx, ctx.shapes[0], "the initial loop state", state, where)
    _carried(ctx, body.root.shape, f"the body's result ({body.name})", state, where)
    _carried(ctx, state, where, cond.parameters[0].shape, f"the condition's parameter ({cond.name})")
    return sizes_at(ctx.result, dynamic_dims(state), itertools.repeat(DYNAMIC))


def _carried(ctx: SizeContext, given: Shape, what: str, taker: Shape, taker_what: str) -> None:
    """Refuse a value dynamic where the computation taking it declares it static."""
    lost = sorted(set(dynamic_dims(given)) - set(dynamic_dims(taker)))
    if lost:
        k, d = lost[0]
        raise ctx.fail(f"dimension {d} of leaf {k} of {what} ({given}) is dynamic where {taker_what} "
                       f"({taker}) declares it static: its size would be lost")


# ---------------------------------------------------------------------------------------
# Rules: data movement
# ---------------------------------------------------------------------------------------

@_rule("broadcast")
def _broadcast(ctx: SizeContext):
    out = list(ctx.result.dimensions)
    for i, r in enumerate(ctx.dims("dimensions")):
        out[r] = ctx.sizes[0][i]
    return tuple(out)


@_rule("transpose")
def _transpose(ctx: SizeContext):
    return tuple(ctx.sizes[0][p] for p in ctx.dims("dimensions"))


@_rule("reverse")
def _reverse(ctx: SizeContext):
    return ctx.sizes[0]


@_rule("slice")
def _slice(ctx: SizeContext):
    a = ctx.arith
    out = []
    for s, (start, limit, stride) in zip(ctx.sizes[0], ctx.attrs["slice"]):
        start, limit, stride = int(start), int(limit), int(stride)
        n = a.max(a.sub(a.min(s, limit), start), 0)        # the elements of [start, limit) that are valid
        out.append(a.div(a.add(n, stride - 1), stride))
    return tuple(out)


@_rule("concatenate")
def _concatenate(ctx: SizeContext):
    (cat,) = ctx.dims("dimensions")
    everyone = list(range(len(ctx.shapes)))
    out = [ctx.pick(d, everyone) for d in range(ctx.result.rank)]
    total = ctx.sizes[0][cat]
    for sizes in ctx.sizes[1:]:
        total = ctx.arith.add(total, sizes[cat])
    for i, sizes in enumerate(ctx.sizes):
        ctx.want[i] = tuple(sizes[cat] if d == cat else n for d, n in enumerate(out))
    out[cat] = total
    return tuple(out)


@_rule("pad")
def _pad(ctx: SizeContext):
    a, x = ctx.arith, ctx.shapes[0]
    out = []
    for d, (s, (lo, hi, interior)) in enumerate(zip(ctx.sizes[0], ctx.attrs["padding"])):
        lo, hi, interior = int(lo), int(hi), int(interior)
        if x.is_dynamic_dimension(d) and hi < 0:
            raise ctx.fail(f"negative high padding {hi} of dynamic dimension {d} of {x}: it would cut "
                           "the bound's padding, not the valid elements")
        n = a.add(a.add(s, a.mul(a.max(a.sub(s, 1), 0), interior)), lo + hi)
        out.append(a.max(n, 0))
    return tuple(out)


@_rule("dynamic-slice")
def _dynamic_slice(ctx: SizeContext):
    """XLA's cases: a dynamic dimension sliced whole keeps its size (the start
    is then 0); sliced to one element, the start is clamped to the valid ones
    and the result is static."""
    x = ctx.shapes[0]
    out = list(ctx.result.dimensions)
    for d in range(x.rank):
        if not x.is_dynamic_dimension(d):
            continue
        k = ctx.result.dimensions[d]
        if k == x.dimensions[d]:
            out[d] = ctx.sizes[0][d]
        elif k != 1:
            raise ctx.fail(f"dimension {d} of {x} is dynamic and the slice takes {k} of its bound "
                           f"{x.dimensions[d]}: only the whole bound or one element")
        elif len(ctx.shapes) == 2 and ctx.shapes[1].rank == 1:
            raise ctx.fail("start indices given as one vector: give one scalar per dimension")
    return tuple(out)


@_rule("reshape")
def _reshape(ctx: SizeContext):
    """XLA's rule, group by group of dimensions that reshape into each other:
    merged into one dimension, its size is the product of theirs (compiled
    code moves the valid elements together when a dynamic dimension is not the
    major-most); split from one dynamic dimension, the major-most output
    dimension (ignoring 1s) takes the dynamic size, the others stay static.  A
    dynamic dimension of bound 1 reshaped away still counts: its size (0 or 1)
    multiplies that of the result's first dynamic dimension (or, when none is
    declared, its first dimension that is not 1), so a size 0 empties the result."""
    src, dst = ctx.shapes[0], ctx.result
    out = list(dst.dimensions)
    if 0 in src.dimensions or 0 in dst.dimensions:
        return tuple(out)
    bounds = common_factors(src.dimensions, dst.dimensions)
    vanished = []
    for (i0, j0), (i1, j1) in zip(bounds, bounds[1:]):
        if any(src.is_dynamic_dimension(d) for d in range(i0, i1)):
            if j0 == j1:
                vanished += [ctx.sizes[0][d] for d in range(i0, i1) if src.is_dynamic_dimension(d)]
            else:
                _reshape_group(ctx, out, (i0, i1), (j0, j1))
    if vanished and dst.rank:
        dims = range(dst.rank)
        o = next((k for k in dims if dst.is_dynamic_dimension(k)), None)
        o = next((k for k in dims if dst.dimensions[k] != 1), 0) if o is None else o
        for size in vanished:
            out[o] = ctx.arith.mul(out[o], size)
    return tuple(out)


def _reshape_group(ctx: SizeContext, out: list, src_range, dst_range) -> None:
    src, dst = ctx.shapes[0], ctx.result
    (i0, i1), (j0, j1) = src_range, dst_range
    group = f"dimensions {list(range(i0, i1))} of {src} into dimensions {list(range(j0, j1))} of {dst}"
    o = _split_target(ctx, j0, j1, group)
    a = ctx.arith
    valid = 1                                     # the group's valid elements, row-major
    for d in range(i0, i1):
        valid = a.mul(valid, ctx.sizes[0][d])
    rest = math.prod(n for k, n in enumerate(dst.dimensions[j0:j1], j0) if k != o)
    if isinstance(valid, int) and valid % rest:
        raise ValueError(f"reshape: {valid} valid elements of {group} do not fill whole rows of {rest}")
    out[o] = a.div(valid, rest)


def _split_target(ctx: SizeContext, j0: int, j1: int, group: str) -> int:
    """The result dimension of ``[j0, j1)`` that takes the group's dynamic size
    (XLA's choice): the reshape's ``inferred_dimension``, else the one the result
    declares dynamic, else the major-most that is not 1.  The others keep their
    bounds; compiled code moves the valid elements where that puts them."""
    dst = ctx.result
    declared = [k for k in range(j0, j1) if dst.is_dynamic_dimension(k)]
    inferred = ctx.attrs.get("inferred_dimension")
    inferred = int(str(inferred)) if inferred is not None else -1
    if j0 <= inferred < j1:
        o = inferred
    elif declared:
        o = declared[0]
    else:
        o = next((k for k in range(j0, j1) if dst.dimensions[k] != 1), j0)
    if declared and declared != [o]:
        raise ctx.fail(f"the result declares dimensions {declared} dynamic where only {o} can be ({group})")
    return o


def common_factors(a: Sequence[int], b: Sequence[int]) -> list:
    """Boundaries ``(i, j)`` with ``prod(a[:i]) == prod(b[:j])`` (no zeros in
    ``a``, ``b``, equal products): between two boundaries, dimensions of ``a``
    reshape into dimensions of ``b`` (XLA's ``CommonFactors``); a dimension of
    size 1 at a boundary is a group of its own."""
    out = [(0, 0)]
    i = j = 0
    while i < len(a) or j < len(b):
        if i < len(a) and a[i] == 1:
            i += 1
        elif j < len(b) and b[j] == 1:
            j += 1
        else:
            pa = pb = 1
            while True:
                if (pa <= pb and i < len(a)) or j >= len(b):
                    pa, i = pa * a[i], i + 1
                else:
                    pb, j = pb * b[j], j + 1
                if pa == pb:
                    break
        out.append((i, j))
    return out


# ---------------------------------------------------------------------------------------
# Rules: sort, windows
# ---------------------------------------------------------------------------------------

@_rule("sort")
def _sort(ctx: SizeContext):
    """XLA's rule: every result keeps the operands' sizes (in each dimension the
    first dynamic operand's; all are read at them).  Compiled code sorts the
    padding after the valid elements."""
    everyone = list(range(len(ctx.shapes)))
    out = tuple(ctx.pick(d, everyone) for d in range(ctx.shapes[0].rank))
    for i in everyone:
        ctx.want[i] = out
    return [out] * len(everyone) if ctx.result.is_tuple else out


@_rule("reduce-window")
def _reduce_window(ctx: SizeContext):
    """XLA's rule: a dynamic dimension of size ``s`` under a window of (dilated)
    extent ``e`` and stride ``t`` has ``max(s - e + t, 0) // t`` windows, all of
    which lie inside the valid elements (so compiled code needs no mask); a
    trivial window dimension keeps the size.  XLA's rule ignores padding and
    base dilation, which would make windows reach past the valid elements: refused
    on a dynamic dimension."""
    from .window import window_of
    n = len(ctx.shapes) // 2
    inputs = list(range(n))
    full = tuple(ctx.pick(d, inputs) for d in range(ctx.shapes[0].rank))
    for i in inputs:
        ctx.want[i] = full
    a, out = ctx.arith, []
    for d, (size, wd) in enumerate(zip(full, window_of(ctx.attrs))):
        dynamic = any(not isinstance(ctx.known[i][d], int) for i in inputs) or size != ctx.shapes[0].dimensions[d]
        if dynamic and (wd.padding_low or wd.padding_high or wd.base_dilation != 1):
            raise ctx.fail(f"dimension {d} of {ctx.shapes[0]} is dynamic and its window has padding or base "
                           f"dilation ({wd}): the windows would reach past the valid elements")
        extent, stride = wd.dilated_size, wd.stride
        out.append(a.div(a.max(a.add(size, stride - extent), 0), stride) if dynamic else
                   ctx.result.leaves()[0].dimensions[d])
    out = tuple(out)
    return [out] * n if n > 1 else out


# ---------------------------------------------------------------------------------------
# Rules: gather, scatter
# ---------------------------------------------------------------------------------------

@_rule("gather")
def _gather(ctx: SizeContext):
    """XLA's rule.  A dynamic operand dimension sliced whole passes its size to
    its offset dimension of the result (the start is then 0); sliced to one
    element, the start is clamped into the valid elements (compiled code clamps
    the index) and the result is static there; other slices are refused.  A
    dynamic batch dimension of the indices passes its size to its batch
    dimension of the result."""
    x, idx = ctx.shapes
    offset_dims, collapsed = ctx.dims("offset_dims"), ctx.dims("collapsed_slice_dims")
    batching, slices = ctx.dims("operand_batching_dims"), list(ctx.dims("slice_sizes"))
    ivd = int(str(ctx.attrs["index_vector_dim"]))
    out = list(ctx.result.dimensions)
    kept = [d for d in range(x.rank) if d not in collapsed and d not in batching]
    for d in range(x.rank):
        if not ctx.dynamic(0, d):
            continue
        if d in batching or slices[d] not in (1, x.dimensions[d]):
            raise ctx.fail(f"dimension {d} of {x} is dynamic and the gather takes {slices[d]} of its bound "
                           f"{x.dimensions[d]}{' as a batching dimension' if d in batching else ''}: only "
                           "the whole bound or one element")
        if slices[d] != 1:
            out[offset_dims[kept.index(d)]] = ctx.sizes[0][d]
            slices[d] = ctx.sizes[0][d]
    if ivd < idx.rank and ctx.dynamic(1, ivd):
        raise ctx.fail(f"the index vector dimension {ivd} of {idx} is dynamic")
    batch_out = [k for k in range(ctx.result.rank) if k not in offset_dims]
    for k, d in zip(batch_out, [d for d in range(idx.rank) if d != ivd]):
        out[k] = ctx.sizes[1][d]
    ctx.resized["slice_sizes"] = tuple(slices)
    return tuple(out)


@_rule("scatter")
def _scatter(ctx: SizeContext):
    """XLA's rule: the results keep the operands' sizes.  A dynamic batch
    dimension of the indices or of the updates (the first dynamic one's size;
    both are read at it) scatters only its valid updates: compiled code makes
    the index of every padded one out of bounds, which skips it.  A window must
    fit the operand's valid elements (compiled code makes the index of one that
    does not out of bounds too).  A dynamic update window dimension must cover a
    dynamic operand dimension of the same bound, at the operand's size (the
    evaluator checks the updates hold that many)."""
    n = (len(ctx.shapes) - 1) // 2
    x, idx, u = ctx.shapes[0], ctx.shapes[n], ctx.shapes[n + 1]
    uwd, iwd = ctx.dims("update_window_dims"), ctx.dims("inserted_window_dims")
    batching = ctx.dims("input_batching_dims")
    ivd = int(str(ctx.attrs["index_vector_dim"]))
    operands, updates = list(range(n)), list(range(n + 1, 2 * n + 1))
    out = tuple(ctx.pick(d, operands) for d in range(x.rank))
    for i in operands:
        ctx.want[i] = out
        for d in batching:
            if ctx.dynamic(i, d):
                raise ctx.fail(f"batching dimension {d} of operand {i} ({ctx.shapes[i]}) is dynamic")
    if ivd < idx.rank and ctx.dynamic(n, ivd):
        raise ctx.fail(f"the index vector dimension {ivd} of {idx} is dynamic")
    window = [d for d in range(x.rank) if d not in iwd and d not in batching]
    read = [list(ctx.sizes[i]) for i in updates]
    for k, ud in enumerate(uwd):
        if any(ctx.dynamic(i, ud) for i in updates):
            od = window[k]
            if not any(ctx.dynamic(i, od) for i in operands) or x.dimensions[od] != u.dimensions[ud]:
                raise ctx.fail(f"update window dimension {ud} of {u} is dynamic and does not cover a "
                               f"dynamic dimension of the same bound of {x} (dimension {od})")
            for r in read:
                r[ud] = out[od]
    indices = list(ctx.sizes[n])
    scatter_dims = [d for d in range(u.rank) if d not in uwd]
    for ud, d in zip(scatter_dims, [d for d in range(idx.rank) if d != ivd]):
        dims = [(n, d)] + [(i, ud) for i in updates]
        size = next((ctx.sizes[i][e] for i, e in dims if ctx.dynamic(i, e)), indices[d])
        indices[d] = size
        for r in read:
            r[ud] = size
    ctx.want[n] = tuple(indices)
    for i, r in zip(updates, read):
        ctx.want[i] = tuple(r)
    return [out] * n if ctx.result.is_tuple else out


# ---------------------------------------------------------------------------------------
# Rules: reduce and dot
# ---------------------------------------------------------------------------------------

@_rule("reduce")
def _reduce(ctx: SizeContext):
    n = len(ctx.shapes) // 2
    axes = set(ctx.dims("dimensions"))
    inputs = list(range(n))
    full = tuple(ctx.pick(d, inputs) for d in range(ctx.shapes[0].rank))
    for i in inputs:
        ctx.want[i] = full
    kept = tuple(s for d, s in enumerate(full) if d not in axes)
    return kept if n == 1 else [kept] * n


@_rule("dot")
def _dot(ctx: SizeContext):
    lb, rb = ctx.dims("lhs_batch_dims"), ctx.dims("rhs_batch_dims")
    lc, rc = ctx.dims("lhs_contracting_dims"), ctx.dims("rhs_contracting_dims")
    lhs, rhs = list(ctx.sizes[0]), list(ctx.sizes[1])
    for l, r in zip(lb + lc, rb + rc):
        both = _pick_pair(ctx, l, r)
        lhs[l] = rhs[r] = both
    ctx.want[0], ctx.want[1] = tuple(lhs), tuple(rhs)
    out = [lhs[d] for d in lb]
    out += [n for d, n in enumerate(lhs) if d not in lb and d not in lc]
    out += [n for d, n in enumerate(rhs) if d not in rb and d not in rc]
    return tuple(out)


def _pick_pair(ctx: SizeContext, l: int, r: int):
    if ctx.shapes[0].is_dynamic_dimension(l) or not ctx.shapes[1].is_dynamic_dimension(r):
        return ctx.sizes[0][l]
    return ctx.sizes[1][r]
