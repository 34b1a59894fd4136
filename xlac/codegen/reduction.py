"""Reductions: the ``reduce`` generator's loops and the accumulators every
reduction uses.

* :func:`emit_reducer` applies a reducer computation to accumulators and
  inputs; a *simple* float reducer (one add/multiply/max/min of f32 or f64,
  :func:`simple_reducer`) is emitted with reassociation allowed, so LLVM keeps
  several vector accumulators.
* Max/min reductions over rows keep "a NaN was seen" in a flag of their own
  and combine with ``llvm.maxnum``/``minnum`` marked ``nnan`` (``NAN_FLAGGED``):
  ``llvm.maximum`` lowers to six instructions per vector on x86.
* :func:`start_accumulator` / :func:`accumulate` / :func:`finish_accumulator`:
  a simple reduction carried by another loop (a row scratch's fill,
  ``hoisting.py``).
* A long float sum or product is computed as a tree of blocks of at most
  ``TREE_BLOCK`` values (:func:`tree_plan`: reduced loops split into blocks,
  each adding into an accumulator of its own), as XLA:CPU's sums are.
* :func:`reduce_generator` / :func:`reduce_loops`: an output element of
  ``reduce`` as loops over the reduced dimensions; the loops join the loop
  structure of the point they are emitted at, so what their body hoists runs
  once per output element (or once per row, when the reduce is itself
  hoisted).

The column and split reduction *kernels* (whole-kernel strategies that call
:func:`emit_reducer`) are kernel candidates: ``kernels/reduce.py``.
"""
from __future__ import annotations

from contextlib import contextmanager

from llvmlite import ir

from ..hlo.ir import HloComputation, HloInstruction
from . import scalar_ops, types
from .ir_array import Index, i64, scalar_index
from .loops import REDUCTION_INTERLEAVE, for_range, for_range_dynamic, loop_hints


def reduce_generator(em, inst, gens):
    """The elemental generator of ``reduce``: each output element loops over the
    reduced dimensions (the input's layout order), unless a row scratch of its
    input folded it into its fill loop (``Hoisting.row_scratch``)."""
    n = len(inst.operands) // 2
    input_gens, init_gens = gens[:n], gens[n:]
    in_shape = inst.operands[0].shape
    reduced = sorted(inst.attrs["dimensions"])
    kept = [d for d in range(in_shape.rank) if d not in reduced]
    # Walk the reduced dimensions major-to-minor in the input's layout.
    order = [d for d in reversed(in_shape.layout.minor_to_major) if d in reduced and in_shape.dimensions[d] > 1]
    elem_types = [o.shape.element_type for o in inst.operands[:n]]
    reducer = inst.attrs["to_apply"]
    empty = any(in_shape.dimensions[d] == 0 for d in reduced)
    fold = em.hoisting.row_folds.get(id(inst.operands[0]))
    folded = fold(inst, init_gens[0]) if fold is not None and n == 1 else None

    def gen(index):
        return em.hoisting.region_cached(inst, index, lambda: emit_folded(index))

    def emit_folded(index):
        value = folded(index) if folded is not None else None
        return emit(index) if value is None else value

    def emit(index):
        b = em.b
        accs = [em.alloca(pt) for pt in elem_types]
        for acc, g in zip(accs, init_gens):
            b.store(g(scalar_index()), acc)
        nan = None
        if not empty and simple_reducer(reducer) in NAN_FLAGGED:
            nan = _nan_flag(em, accs[0])
        if not empty:
            multi = [i64(0)] * in_shape.rank
            depths = None
            point = em.ctx.point(index)
            if point is not None:
                depths = [0] * in_shape.rank
                for d, x in zip(kept, point.depths):
                    depths[d] = x
            for d, x in zip(kept, index.multi):
                multi[d] = x
            loops = LoopState(order, in_shape.dimensions, multi, depths,
                               list(point.stack) if depths is not None else None,
                               point.avail if depths is not None else None,
                               accumulator_vector_bytes(elem_types[0]) if n == 1 else None)
            if n == 1 and nan is None and tree_reducer(reducer) is not None:
                loops.plan = tree_plan(order, in_shape.dimensions, _contiguous_innermost(in_shape, order))
            reduce_loops(em, loops, input_gens, accs, reducer, nan=nan)
        if n == 1:
            return finish_accumulator(b, elem_types[0], accs[0], nan)
        return tuple(b.load(a) for a in accs)
    return gen


#: The most values (or partial results) one accumulator of a long float sum or
#: product takes before its result is added into the level above: a sum's
#: rounding error grows with the values added into one accumulator, and
#: XLA:CPU sums long reductions as trees of blocks of 32 (its
#: TreeReductionRewriter's window) or in its reduction library.  Sequential
#: sums of 32,768 values were off by 10 to 40 times XLA:CPU's error.
TREE_BLOCK = 32
#: The reducers summed as trees, and the identity a partial result starts from
#: (-0.0: x + -0.0 is x for every x, -0.0 included).
TREE_IDENTITY = {"add": -0.0, "multiply": 1.0}


def tree_reducer(reducer: HloComputation) -> str | None:
    """The opcode of a reducer whose long reductions are summed as trees, or None."""
    op = simple_reducer(reducer)
    return op if op in TREE_IDENTITY else None


#: Values of a contiguous (vectorised) reduced loop summed before the result
#: is added into the level above: the vector loop adds them into
#: ``REDUCTION_INTERLEAVE`` vectors of accumulators (32 lanes of f32 with
#: AVX2), each then taking at most about TREE_BLOCK values.  A row sum of
#: 32,768 values of 0.1 had been off by 1e-5 (relative; XLA:CPU's exact).
CONTIGUOUS_TREE_BLOCK = TREE_BLOCK * TREE_BLOCK


def tree_spans(n: int, first: int = TREE_BLOCK) -> tuple:
    """The block sizes of the loops that split a loop of ``n`` values into a
    tree of blocks of at most ``first`` values, then TREE_BLOCK blocks each,
    outermost first (() for n <= first): n = 3000 gives (1024, 32): blocks of
    1024 made of blocks of 32."""
    spans, span = [], first
    while span < n:
        spans.append(span)
        span *= TREE_BLOCK
    return tuple(reversed(spans))


def _contiguous_innermost(in_shape, order: list) -> bool:
    """Whether the innermost reduced loop walks the input's minor dimension:
    LLVM vectorises it, its values going into vector accumulators side by
    side, so it is left whole (a row reduction's loop as before)."""
    minor = next((d for d in in_shape.layout.minor_to_major if in_shape.dimensions[d] > 1), None)
    return bool(order) and order[-1] == minor


def tree_plan(order: list, dims, contiguous: bool) -> list | None:
    """Per reduced loop (``order``, outermost first): (spans, subtotal), the
    blocks its loop is split into (``tree_spans``) and whether its body (the
    inner dimensions' loops) adds into an accumulator of its own, so that no
    accumulator takes more than TREE_BLOCK values; None when the plain loops
    already keep to that.  A ``contiguous`` innermost loop counts as one value."""
    plan, chain = [None] * len(order), 1          # values one run of the loop below adds
    for level in reversed(range(len(order))):
        n = dims[order[level]]
        if level == len(order) - 1 and contiguous:
            spans = tree_spans(n, CONTIGUOUS_TREE_BLOCK)
            plan[level] = (spans, False)
            chain = -(-n // spans[0]) if spans else 1
            continue
        spans = tree_spans(n)
        subtotal = chain > 1 and min(n, TREE_BLOCK) * chain > TREE_BLOCK
        plan[level] = (spans, subtotal)
        chain = -(-n // spans[0]) if spans else n * (1 if subtotal else chain)
    return plan if any(spans or subtotal for spans, subtotal in plan) else None


def accumulator_vector_bytes(pt) -> int | None:
    """The element size a reduction loop accumulating ``pt`` asks LLVM to vectorise
    at (``loops.loop_hints``' ``element_bytes``), or None for no width.  A narrow
    float's accumulator is rounded to its type in integer arithmetic at every step,
    which LLVM's vectoriser does not recognise as a reduction; a loop with an
    explicit width that it does not vectorise makes LLVM print "remark: loop not
    vectorized" on the process's stderr."""
    return None if pt.is_narrow_float else pt.byte_size


def _nan_flag(em, acc) -> ir.Value:
    """The i1 alloca of a ``NAN_FLAGGED`` reduction, set to whether the
    accumulator's initial value is NaN."""
    b = em.b
    nan = em.alloca_builder.alloca(ir.IntType(1), name="acc.nan")
    b.store(b.fcmp_unordered("uno", b.load(acc), b.load(acc)), nan)
    return nan


def start_accumulator(em, r: HloInstruction, init, op: str) -> tuple:
    """``(acc, nan)`` allocas of a simple reduction ``r`` folded into another
    loop (``Hoisting.row_scratch``), initialised to ``init``."""
    acc = em.alloca(r.shape.element_type)
    em.b.store(init, acc)
    return acc, (_nan_flag(em, acc) if op in NAN_FLAGGED else None)


def accumulate(b: ir.IRBuilder, op: str, pt, acc, nan, value) -> None:
    """One step of a simple reduction of element type ``pt``: ``acc = op(acc, value)``."""
    if nan is not None:
        b.store(_nan_flagged_step(b, op, b.load(acc), value, nan), acc)
    else:
        b.store(_simple_step(b, op, pt, b.load(acc), value), acc)


def finish_accumulator(b: ir.IRBuilder, pt, acc, nan) -> ir.Value:
    """The reduction's value: the accumulator, or NaN when the flag says one was seen."""
    value = b.load(acc)
    if nan is not None:
        value = b.select(b.load(nan), types.constant(pt, float("nan")), value)
    return value


#: Reducers that may be reassociated freely: the reduce spec lets backends
#: reassociate, and these flags let LLVM keep several vector accumulators.
_REASSOCIABLE = {"add", "multiply", "maximum", "minimum"}
_FAST_FLAGS = ("reassoc", "nsz", "contract")
#: Row max/min reductions keep "a NaN was seen" in a flag of their own and
#: combine with ``llvm.maxnum``/``minnum`` marked ``nnan`` (one vmaxps per
#: vector; ``llvm.maximum`` on x86 is six instructions, a sixth of softmax's
#: time); the flag makes the result NaN as the spec's maximum/minimum do.
NAN_FLAGGED = {"maximum": "llvm.maxnum", "minimum": "llvm.minnum"}


def _nan_flagged_step(b: ir.IRBuilder, op: str, acc, x, nan) -> ir.Value:
    """One step of a ``NAN_FLAGGED`` max/min reduction: records whether ``x``
    is NaN in the i1 alloca ``nan`` and returns ``maxnum(acc, x)`` (or minnum)."""
    b.store(b.or_(b.load(nan), b.fcmp_unordered("uno", x, x)), nan)
    name = f"{NAN_FLAGGED[op]}.{'f32' if x.type == ir.FloatType() else 'f64'}"
    fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(x.type, [x.type, x.type]), name)
    return b.call(fn, [acc, x], fastmath=("nnan",) + _FAST_FLAGS)


def simple_reducer(reducer: HloComputation) -> str | None:
    """The opcode when ``reducer`` is ``ROOT op(p0, p1)`` on f32/f64, else None."""
    op = reducer.binary_root_opcode()
    if op in _REASSOCIABLE and reducer.root.shape.is_array and reducer.root.shape.element_type.value in ("f32", "f64"):
        return op
    return None


def emit_reducer(em, reducer: HloComputation, accs: list, inputs: list) -> tuple:
    """Combine accumulators with inputs through ``reducer``; returns a tuple.

    A simple float reducer is emitted with reassociation allowed, so that the
    loop vectoriser can split the reduction over vector lanes.
    """
    op = simple_reducer(reducer)
    if op is not None:
        return (_simple_step(em.b, op, reducer.root.shape.element_type, accs[0], inputs[0]),)
    out = em.emit_scalar_computation(reducer, list(accs) + list(inputs))
    return out if isinstance(out, tuple) else (out,)


def _simple_step(b: ir.IRBuilder, op: str, pt, acc, x) -> ir.Value:
    """``op(acc, x)`` for a ``simple_reducer`` opcode, with reassociation allowed."""
    value = scalar_ops.emit_elementwise(b, op, [acc, x], [pt, pt], pt, {})
    if isinstance(getattr(value, "flags", None), list):        # fadd, fmul
        value.flags.extend(f for f in _FAST_FLAGS if f not in value.flags)
    elif isinstance(getattr(value, "fastmath", None), set):    # llvm.maximum/minimum calls
        for flag in _FAST_FLAGS:
            value.fastmath.add(flag)
    return value


class LoopState:
    """The reduction loops still to emit, and the index/depths/chains so far."""

    def __init__(self, order, dims, multi, depths, stack, avail=None, element_bytes=None):
        self.order, self.dims, self.multi, self.depths, self.stack = order, dims, multi, depths, stack
        self.outer_avail, self.outer_depth = avail, None if stack is None else len(stack)
        self.element_bytes = element_bytes      # of a single reduction's values (loop hints)
        self.plan = None                        # tree_plan's, for a long float sum or product
        self.major_range = (None, None)         # run-time [lo, hi) of order[0] (None: all of it)


def reduce_loops(em, loops: LoopState, input_gens, accs, reducer, level: int = 0, nan=None):
    """Nested loops over the reduced dimensions; the innermost body applies the
    reducer to the accumulators and the input elements (with ``nan``, an i1
    alloca: a max/min reducer as ``NAN_FLAGGED`` says)."""
    if level == len(loops.order):
        b = em.b
        if loops.depths is None:
            idx = Index(list(loops.multi))
        else:
            # The reduction's own loops run inside whatever the reduce's point sees.
            idx = em.ctx.place(Index(list(loops.multi)), list(loops.depths), list(loops.stack),
                               list(loops.outer_avail) + loops.stack[loops.outer_depth:])
        current = [b.load(a) for a in accs]
        inputs = [g(idx) for g in input_gens]
        if nan is not None:
            out = (_nan_flagged_step(b, simple_reducer(reducer), current[0], inputs[0], nan),)
        else:
            out = emit_reducer(em, reducer, current, inputs)
        for a, v in zip(accs, out):
            b.store(v, a)
        return
    spans, subtotal = loops.plan[level] if loops.plan is not None else ((), False)

    def body():
        if subtotal:
            _subtotal(em, reducer, accs, lambda: reduce_loops(em, loops, input_gens, accs, reducer, level + 1, nan))
        else:
            reduce_loops(em, loops, input_gens, accs, reducer, level + 1, nan)
    lo, hi = loops.major_range if level == 0 else (None, None)
    _dimension_loops(em, loops, level, spans, lo, hi, body, reducer, accs)


def tree_loops(em, in_shape, plan: list, major_range: tuple, input_gen, acc, reducer) -> None:
    """A float sum or product of all of ``in_shape``, its major dimension
    limited to ``major_range`` (run-time [lo, hi)), into the accumulator
    ``acc`` (an alloca), in the tree ``plan`` (``tree_plan`` of its dimensions
    in layout order, the major one as long as the range)."""
    order = [d for d in reversed(in_shape.layout.minor_to_major) if in_shape.dimensions[d] > 1]
    loops = LoopState(order, in_shape.dimensions, [i64(0)] * in_shape.rank, [0] * in_shape.rank, [], [],
                      accumulator_vector_bytes(in_shape.element_type))
    loops.plan, loops.major_range = plan, major_range
    reduce_loops(em, loops, [input_gen], [acc], reducer)


def _dimension_loops(em, loops: LoopState, level: int, spans: tuple, lo, hi, body, reducer, accs,
                     block: int = TREE_BLOCK) -> None:
    """The loops of reduced dimension ``loops.order[level]`` over [lo, hi)
    (run-time values, at most ``block`` apart; None: the whole dimension),
    ``body()`` inside: with ``spans``, a loop over blocks of ``spans[0]``
    values, each block's loops adding into an accumulator of their own (a
    level of the tree)."""
    d, b = loops.order[level], em.b
    if not spans:
        count = loops.dims[d] if lo is None else block
        with _reduced_loop(em, loops, level, count, lo, hi) as iv:
            loops.multi[d] = iv
            if loops.depths is not None:
                loops.depths[d] = len(loops.stack)
            body()
        return
    span, n = spans[0], loops.dims[d]
    if lo is None:
        blocks = _reduced_loop(em, loops, level, -(-n // span))
    else:
        count = b.udiv(b.add(b.sub(hi, lo), i64(span - 1)), i64(span))
        blocks = _reduced_loop(em, loops, level, TREE_BLOCK, i64(0), count)
    with blocks as k:
        first = b.mul(k, i64(span)) if lo is None else b.add(lo, b.mul(k, i64(span)))
        end, limit = b.add(first, i64(span)), i64(n) if hi is None else hi
        last = b.select(b.icmp_signed("<", end, limit), end, limit)
        _subtotal(em, reducer, accs,
                  lambda: _dimension_loops(em, loops, level, spans[1:], first, last, body, reducer, accs, span))


@contextmanager
def _reduced_loop(em, loops: LoopState, level: int, count: int, lo=None, hi=None):
    """A loop of reduced dimension ``loops.order[level]``: ``count``
    iterations from 0, or over [lo, hi) (run-time values, lo < hi, at most
    ``count`` iterations); yields the induction variable."""
    d = loops.order[level]
    hints = loop_hints(em.b.module, interleave=REDUCTION_INTERLEAVE, trip_count=count,
                       element_bytes=loops.element_bytes)
    outermost = loops.stack is not None and len(loops.stack) == loops.outer_depth
    if lo is None:
        loop = for_range(em.b, count, f"r{d}", loops.stack, hints)
    else:
        loop = for_range_dynamic(em.b, lo, hi, f"r{d}", loops.stack, hints)
    with loop as iv:
        region = loops.outer_avail[-1] if loops.outer_avail else None
        if outermost and not any(region is c for c in loops.stack):
            # This reduce is hoisted code, at the top level of the chain
            # it was hoisted into: what gets hoisted in front of its loop
            # runs there too, once, before that chain's loop.
            loops.stack[-1].parent = region
        yield iv


def _subtotal(em, reducer, accs, emit) -> None:
    """``emit()`` adding into a fresh accumulator (the reducer's identity),
    then that partial result added into the one it replaced: a level of the
    tree a long sum or product is computed in."""
    b, acc = em.b, accs[0]
    pt = reducer.root.shape.element_type
    outer = b.load(acc)
    b.store(types.constant(pt, TREE_IDENTITY[simple_reducer(reducer)]), acc)
    emit()
    b.store(_simple_step(b, simple_reducer(reducer), pt, outer, b.load(acc)), acc)
