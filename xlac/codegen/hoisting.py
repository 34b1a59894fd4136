"""Hoisting: values emitted once per outer loop iteration, and reused.

A generator is called at an :class:`~xlac.codegen.ir_array.Index`; when the
index came from a loop nest (``loops.loop_nest`` places it in the module's
:class:`~xlac.codegen.emission.EmissionContext`), the context knows which loop
each component is the induction variable of and the hoist chains
(``loops.Chain``: an open block in front of each loop) around it.  This module
uses that to emit a value no deeper than it depends on:

* :meth:`Hoisting.hoisted` — a value whose index uses only outer loop
  variables (a broadcast row maximum) is emitted into the chain of the first
  loop it does not depend on, and reused by later requests at the same index
  from points that chain runs before;
* :meth:`Hoisting.region_cached` — code at the top level of hoisted code (a
  row reduction reached through different broadcasts) is emitted once;
* :meth:`Hoisting.row_scratch` — an expensive value that a row reduction and
  other users read (softmax's ``exp(x - max)``) is computed once per row into
  a stack row and read back; simple reductions of it are folded into that
  fill loop.

:func:`mapped_index` carries the loop structure through pure index maps
(broadcast, transpose, reshapes that only add or drop size-1 dimensions);
an index built any other way has none, and nothing is hoisted above it.
"""
from __future__ import annotations

import math
from typing import Callable

from llvmlite import ir

from ..hlo.ir import HloInstruction
from ..hlo.opcodes import Trait, has_trait
from . import types
from .emission import EmissionContext
from .ir_array import Index, i64, scalar_index
from .loops import for_range, loop_hints
from .reduction import accumulate, accumulator_vector_bytes, finish_accumulator, simple_reducer, start_accumulator

Generator = Callable[[Index], object]


class Hoisting:
    """Hoisting, reuse and row scratch for the generators of one ``ElementalEmitter``."""

    def __init__(self, em):
        self.em = em
        self.b = em.b
        self.alloca_builder = em.alloca_builder
        self.ctx: EmissionContext = em.ctx
        #: instruction id -> the fold function of its row scratch (``row_scratch``),
        #: for the reductions generated after it in the same computation.
        self.row_folds: dict = {}

    def hoisted(self, gen: Generator, index: Index):
        """``gen(index)``, emitted as far out of the enclosing loops as ``index`` allows.

        When every component of ``index`` is a loop variable of an outer loop
        (or a constant), the value is the same for all iterations of the inner
        loops: it is emitted once, in the hoist chain in front of the first
        inner loop it does not depend on (a broadcast row maximum in softmax is
        computed once per row, not once per element).  A value already hoisted
        for the same generator and index into a chain that runs before this
        point (its ``LoopPoint.avail``) is reused: softmax's row maximum feeds both the
        row sum and the output pass, and is computed once.
        """
        point = self.ctx.point(index)
        if point is None or not point.hoistable:
            return gen(index)
        target = max(point.depths, default=0)
        if target >= len(point.stack):
            return self.region_cached(gen, index, lambda: gen(index))
        chain = point.stack[target]
        avail = point.avail[:_position(point.avail, chain) + 1]
        key = (id(gen), tuple(_value_key(x) for x in index.multi))
        hit = _lookup(avail, key)
        if hit is not None:
            return hit
        here = self.b.block
        self.b.position_at_end(chain.block)
        value = gen(self.ctx.place(Index(index.multi), point.depths, point.stack[:target], avail))
        chain.block = self.b.block
        self.b.position_at_end(here)
        _remember(chain, key, (gen, list(index.multi), value))
        return value

    def region_cached(self, what, index: Index, emit):
        """``emit()``, reused when ``what`` (an instruction or a generator) was
        already emitted at the same index into a chain that runs before this
        point.  Only code emitted at the top level of a hoisted region (see
        :func:`_region`) is remembered: a row reduction reached through
        different broadcasts or reshapes (fusion duplicates those) is computed
        once per row."""
        point = self.ctx.point(index)
        region = _region(point)
        if region is None:
            return emit()
        key = (id(what), tuple(_value_key(x) for x in index.multi))
        hit = _lookup(point.avail, key)
        if hit is not None:
            return hit
        value = emit()
        _remember(region, key, (what, list(index.multi), value))
        return value

    def row_scratch(self, inst: HloInstruction, gen: Generator, dims: list) -> tuple:
        """``gen`` for a value a row reduction reads and other users read again
        (softmax's ``exp(x - max)``): where a row of it is read inside loops
        over the row (``dims``, the minor dimensions), the whole row is
        computed once into a small scratch row (L1-resident) in front of the
        loops, and read back from there.  The fill is hoisted like any other
        per-row value, so the reduction and the output pass share it.

        Returns ``(read, fold)``: ``read`` is the generator; ``fold(reduce,
        init_gen)`` folds a simple reduction of this value over ``dims`` into
        the fill loop (softmax's row sum is accumulated while the exp row is
        written: one loop fewer to run and to compile) and returns its
        generator's emitter, ``index -> value`` (None where it does not
        apply); ``fold`` returns None for a reduction it cannot take."""
        shape = inst.shape
        pt = shape.element_type
        ety = types.register_type(pt)
        order = [d for d in reversed(shape.layout.minor_to_major) if d in dims and shape.dimensions[d] > 1]
        n = math.prod(shape.dimensions[d] for d in order)
        row_strides, stride = {}, 1
        for d in reversed(order):
            row_strides[d] = stride
            stride *= shape.dimensions[d]
        folded: list = []       # (reduce instruction, init generator, reducer opcode)

        def row_offset(multi):
            offset = None
            for d in order:
                term = multi[d] if row_strides[d] == 1 else self.b.mul(multi[d], i64(row_strides[d]),
                                                                       flags=["nsw", "nuw"])
                offset = term if offset is None else self.b.add(offset, term, flags=["nsw", "nuw"])
            return offset

        def fill(kept: Index):
            b = self.b
            scratch = self.alloca_builder.alloca(ety, size=n, name="row")
            accs = [start_accumulator(self.em, r, init(scalar_index()), op) for r, init, op in folded]
            point = self.ctx.point(kept)
            multi, depths = list(kept.multi), list(point.depths)
            stack, avail = list(point.stack), list(point.avail)
            base = len(stack)

            def loops(level):
                if level == len(order):
                    value = gen(self.ctx.place(Index(list(multi)), list(depths), list(stack),
                                               avail + stack[base:]))
                    b.store(value, b.gep(scratch, [row_offset(multi)], inbounds=True, source_etype=ety))
                    for (_, _, op), (acc, nan) in zip(folded, accs):
                        accumulate(b, op, pt, acc, nan, value)
                    return
                d = order[level]
                with for_range(b, shape.dimensions[d], f"row{d}", stack,
                               loop_hints(b.module, interleave=ROW_SCRATCH_INTERLEAVE,
                                          element_bytes=accumulator_vector_bytes(pt),
                                          trip_count=shape.dimensions[d])) as iv:
                    multi[d] = iv
                    depths[d] = len(stack)
                    if level == 0:
                        # The fill is hoisted code (see reduction.reduce_loops); at
                        # the top of a kernel (a scalar result) it sits in no chain.
                        stack[-1].parent = avail[-1] if avail else None
                    loops(level + 1)
            loops(0)
            sums = {}
            region = _region(point)
            for (r, _, op), (acc, nan) in zip(folded, accs):
                sums[id(r)] = value = finish_accumulator(b, pt, acc, nan)
                if region is not None:      # where region_cached looks the reduction up
                    out = [x for d, x in enumerate(kept.multi) if d not in dims]
                    _remember(region, (id(r), tuple(_value_key(x) for x in out)), (r, out, value))
            return scratch, sums

        def row_of(multi, depths, index: Index):
            """The hoisted fill for the row that ``multi`` (row dims zero) is in."""
            point = self.ctx.point(index)
            return self.hoisted(fill, self.ctx.place(Index(multi), depths, point.stack, point.avail))

        def read(index: Index):
            point = self.ctx.point(index)
            if point is None or not point.hoistable:
                return gen(index)
            kept_depth = max((x for d, x in enumerate(point.depths) if d not in order), default=0)
            if any(point.depths[d] <= kept_depth for d in order):
                return gen(index)   # not inside loops over the row
            multi = [i64(0) if d in order else x for d, x in enumerate(index.multi)]
            depths = [0 if d in order else x for d, x in enumerate(point.depths)]
            scratch, _ = row_of(multi, depths, index)
            return self.b.load(self.b.gep(scratch, [row_offset(index.multi)], inbounds=True, source_etype=ety))

        def fold(r: HloInstruction, init_gen: Generator):
            op = simple_reducer(r.attrs["to_apply"])
            if op is None or len(r.operands) != 2 or r.operands[0] is not inst \
                    or sorted(r.attrs["dimensions"]) != list(dims):
                return None
            folded.append((r, init_gen, op))

            def reduced(index: Index):
                point = self.ctx.point(index)
                if point is None or not point.hoistable:
                    return None
                multi, depths = [i64(0)] * shape.rank, [0] * shape.rank
                kept = [d for d in range(shape.rank) if d not in dims]
                for d, x, depth in zip(kept, index.multi, point.depths):
                    multi[d], depths[d] = x, depth
                return row_of(multi, depths, index)[1][id(r)]
            return reduced
        return read, fold


#: Vector iterations the row scratch's fill loop runs side by side: its value
#: is expensive (softmax's exp: a long dependent chain per vector), and
#: independent iterations in flight keep the FMA pipes busy (softmax
#: 4096x1024 on one thread 2.10 -> 1.55 ms, 2 threads 0.91 -> 0.80 ms).
ROW_SCRATCH_INTERLEAVE = 4
#: The largest row (bytes) ``row_scratch`` keeps on the stack: well inside L1/L2.
ROW_SCRATCH_BYTES = 32 * 1024


def row_scratch_dims(inst: HloInstruction) -> list | None:
    """The reduced dimensions when ``inst`` is worth keeping a row of (see
    ``Hoisting.row_scratch``): an expensive elementwise value read by
    a reduction over its minor-most dimensions (or by a convert that
    reduction reads) and by other users as well; None otherwise."""
    shape = inst.shape
    if not (shape.is_array and has_trait(inst.opcode, Trait.EXPENSIVE)
            and has_trait(inst.opcode, Trait.ELEMENTWISE)) or len(inst.users) < 2 or shape.layout.is_padded:
        return None
    for user in inst.users:
        if user.opcode == "convert" and len(user.users) == 1:
            # A bf16/f16 value summed in f32 (jax's softmax of bf16: exp, then
            # a convert for the f32 row sum): the reduction reads the row too.
            user, inst_read = user.users[0], user
        else:
            inst_read = inst
        if user.opcode != "reduce" or len(user.operands) != 2 or user.operands[0] is not inst_read:
            continue
        dims = sorted(user.attrs["dimensions"])
        minor = [d for d in shape.layout.minor_to_major][:len(dims)]
        row = math.prod(shape.dimensions[d] for d in dims)
        if sorted(minor) == dims and 1 < row and row * max(shape.element_type.byte_size, 4) <= ROW_SCRATCH_BYTES:
            return dims
    return None


def _region(point):
    """The chain at whose top level code at ``point`` (a LoopPoint or None)
    is emitted (hoisted code: ``point.avail`` ends with a chain that is not
    one of the enclosing loops'), or None inside a loop body; values emitted
    there and remembered in it dominate whatever later code finds them
    through ``avail``."""
    if point is None:
        return None
    avail, stack = point.avail, point.stack
    if not avail or any(c is avail[-1] for c in stack):
        return None
    return avail[-1]


def _position(chains: list, chain) -> int:
    """Position of ``chain`` in ``chains``, by identity."""
    return next(k for k, c in enumerate(chains) if c is chain)


def _lookup(chains: list, key):
    for c in chains:
        hit = c.values.get(key)
        if hit is not None:
            return hit[2]
    return None


def _remember(chain, key, entry) -> None:
    """Record a value hoisted into ``chain``, and in the chains whose hoisted
    code ``chain`` is part of (see ``Chain.parent``)."""
    while chain is not None:
        chain.values[key] = entry
        chain = chain.parent


def _value_key(x):
    """Hashable identity of an index component: constants by value."""
    return ("c", x.constant) if isinstance(x, ir.Constant) else id(x)


def mapped_index(ctx: EmissionContext, index: Index, source_dims) -> Index:
    """The index whose component k is ``index``'s component ``source_dims[k]``
    (a pure index map: loop depths and hoist chains carry over)."""
    multi = [index.multi[d] for d in source_dims]
    point = ctx.point(index)
    if point is None:
        return Index(multi)
    return ctx.place(Index(multi), [point.depths[d] for d in source_dims], point.stack, point.avail)


def cached(ctx: EmissionContext, inst: HloInstruction, gen: Generator) -> Generator:
    """Generate ``inst`` once per Index object, however many users ask for it
    (``ctx``: the emission context that remembers the values per index)."""
    key = id(inst)

    def cached(index: Index):
        values = ctx.values_at(index)
        hit = values.get(key)
        if hit is None:
            hit = values[key] = gen(index)
        return hit
    return cached
