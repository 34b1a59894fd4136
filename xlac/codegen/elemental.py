"""The elemental emitter: every elemental HLO op as a generator ``Index -> value``.

A generator for instruction ``inst`` is built from the generators of its
operands (``make_generator(inst, operand_generators)``).  When the operands
are materialised buffers, their generators read an :class:`IrArray`; when they
are fused producers, their generators are themselves composed generators — so a
fusion is one loop nest that reads only its real inputs.

Data-movement ops (broadcast, reshape, transpose, slice, pad, concatenate,
reverse, iota) are index transformations, never copies.  ``reduce`` and ``dot``
are elemental too: an output element loops over the reduced / contracted
dimensions.  Scalar arithmetic comes from ``scalar_ops.emit_elementwise``.

Generators of tuple-shaped instructions (variadic reduce, tuple) return a
Python tuple of values, one per element.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from llvmlite import ir

from ..errors import UnsupportedError
from ..hlo.ir import HloComputation, HloInstruction
from ..hlo.opcodes import OPCODES
from ..passes.fusion import is_expensive
from ..shape import S64, Shape
from . import scalar_ops, types
from .ir_array import I64, Index, IrArray, i64, scalar_index
from .loops import REDUCTION_INTERLEAVE, for_range, loop_hints

Generator = Callable[[Index], object]


class ElementalEmitter:
    """Builds generators at the current insertion point of ``builder``.

    ``entry_builder`` positions allocas at the top of the function (so LLVM's
    SROA turns them into registers); ``constant_array`` gives the IrArray of a
    non-scalar constant (a global emitted by the module emitter).
    """

    def __init__(self, builder: ir.IRBuilder, alloca_builder: ir.IRBuilder,
                 constant_array: Callable[[HloInstruction], IrArray]):
        self.b = builder
        self.alloca_builder = alloca_builder
        self.constant_array = constant_array
        #: instruction id -> the fold function of its row scratch (``row_scratch``),
        #: for the reductions generated after it in the same computation.
        self.row_folds: dict = {}

    # -- public ---------------------------------------------------------------
    def make_generator(self, inst: HloInstruction, operand_gens: list) -> Generator:
        if inst.shape.is_array and inst.shape.element_count() == 0:
            # No element is ever read at run time, but a consumer may emit a
            # read in a branch that never runs (a pad of it reads only its
            # padding value); the op's own index arithmetic may not even be
            # defined (a reshape of no elements divides by a zero extent).
            zero = types.constant(inst.shape.element_type, 0)
            return lambda index: zero
        rule = _RULES.get(inst.opcode)
        if rule is None:
            if OPCODES.get(inst.opcode) and OPCODES[inst.opcode].is_elementwise:
                rule = _elementwise
            else:
                raise UnsupportedError(inst.opcode, "no elemental generator")
        return rule(self, inst, operand_gens)

    def computation_generator(self, comp: HloComputation, param_gens: list) -> Generator:
        """Compose a whole computation; parameters bound to ``param_gens``."""
        return self.instruction_generators(comp, param_gens)[id(comp.root)]

    def instruction_generators(self, comp: HloComputation, param_gens: list,
                               overrides: dict | None = None) -> dict:
        """Generators of every instruction of ``comp`` (by id), parameters bound
        to ``param_gens`` — for kernels that drive a fused root themselves.
        ``overrides`` (instruction id -> generator) replaces instructions the
        kernel computes itself (the dot of an output fusion, whose value the
        epilogue is handed)."""
        gens: dict[int, Generator] = {}
        overrides = overrides or {}
        comp.compute_users()
        for inst in comp.post_order():
            if id(inst) in overrides:
                gen = overrides[id(inst)]
            elif inst.opcode == "parameter":
                gen = param_gens[inst.parameter_number]
            else:
                gen = self.make_generator(inst, [gens[id(o)] for o in inst.operands])
                row = row_scratch_dims(inst)
                if row is not None:
                    gen, self.row_folds[id(inst)] = self.row_scratch(inst, gen, row)
            if len(inst.users) > 1:
                gen = _cached(inst, gen)
            gens[id(inst)] = gen
        return gens

    def emit_scalar_computation(self, comp: HloComputation, args: list):
        """Apply a scalar computation (a reducer, a comparator) to register values.

        Each instruction is emitted once, in order; returns a value, or a tuple
        of values for a tuple-shaped root.
        """
        values: dict[int, object] = {}
        idx = scalar_index()
        for inst in comp.post_order():
            if inst.opcode == "parameter":
                values[id(inst)] = args[inst.parameter_number]
                continue
            ops = [(lambda v: (lambda _i: v))(values[id(o)]) for o in inst.operands]
            values[id(inst)] = self.make_generator(inst, ops)(idx)
        return values[id(comp.root)]

    def hoisted(self, gen: Generator, index: Index):
        """``gen(index)``, emitted as far out of the enclosing loops as ``index`` allows.

        When every component of ``index`` is a loop variable of an outer loop
        (or a constant), the value is the same for all iterations of the inner
        loops: it is emitted once, in the hoist chain in front of the first
        inner loop it does not depend on (a broadcast row maximum in softmax is
        computed once per row, not once per element).  A value already hoisted
        for the same generator and index into a chain that runs before this
        point (``index.avail``) is reused: softmax's row maximum feeds both the
        row sum and the output pass, and is computed once.
        """
        if index.depths is None or index.stack is None or any(d is None for d in index.depths):
            return gen(index)
        target = max(index.depths, default=0)
        if target >= len(index.stack):
            return self.region_cached(gen, index, lambda: gen(index))
        chain = index.stack[target]
        avail = index.avail[:_position(index.avail, chain) + 1]
        key = (id(gen), tuple(_value_key(x) for x in index.multi))
        hit = _lookup(avail, key)
        if hit is not None:
            return hit
        here = self.b.block
        self.b.position_at_end(chain.block)
        value = gen(Index(index.multi, depths=index.depths, stack=index.stack[:target], avail=avail))
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
        region = _region(index)
        if region is None:
            return emit()
        key = (id(what), tuple(_value_key(x) for x in index.multi))
        hit = _lookup(index.avail, key)
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
            accs = [_start_accumulator(self, r, init(scalar_index()), op) for r, init, op in folded]
            multi, depths = list(kept.multi), list(kept.depths)
            stack, avail = list(kept.stack), list(kept.avail)
            base = len(stack)

            def loops(level):
                if level == len(order):
                    value = gen(Index(list(multi), depths=list(depths), stack=list(stack),
                                      avail=avail + stack[base:]))
                    b.store(value, b.gep(scratch, [row_offset(multi)], inbounds=True, source_etype=ety))
                    for (_, _, op), (acc, nan) in zip(folded, accs):
                        _accumulate(b, op, pt, acc, nan, value)
                    return
                d = order[level]
                with for_range(b, shape.dimensions[d], f"row{d}", stack,
                               loop_hints(b.module, interleave=ROW_SCRATCH_INTERLEAVE,
                                          element_bytes=pt.byte_size,
                                          trip_count=shape.dimensions[d])) as iv:
                    multi[d] = iv
                    depths[d] = len(stack)
                    if level == 0:
                        stack[-1].parent = avail[-1]    # the fill is hoisted code (see _reduce_loops)
                    loops(level + 1)
            loops(0)
            sums = {}
            region = _region(kept)
            for (r, _, op), (acc, nan) in zip(folded, accs):
                sums[id(r)] = value = _finish_accumulator(b, pt, acc, nan)
                if region is not None:      # where region_cached looks the reduction up
                    out = [x for d, x in enumerate(kept.multi) if d not in dims]
                    _remember(region, (id(r), tuple(_value_key(x) for x in out)), (r, out, value))
            return scratch, sums

        def row_of(multi, depths, index: Index):
            """The hoisted fill for the row that ``multi`` (row dims zero) is in."""
            return self.hoisted(fill, Index(multi, depths=depths, stack=index.stack, avail=index.avail))

        def read(index: Index):
            if index.depths is None or index.stack is None or any(x is None for x in index.depths):
                return gen(index)
            kept_depth = max((x for d, x in enumerate(index.depths) if d not in order), default=0)
            if any(index.depths[d] <= kept_depth for d in order):
                return gen(index)   # not inside loops over the row
            multi = [i64(0) if d in order else x for d, x in enumerate(index.multi)]
            depths = [0 if d in order else x for d, x in enumerate(index.depths)]
            scratch, _ = row_of(multi, depths, index)
            return self.b.load(self.b.gep(scratch, [row_offset(index.multi)], inbounds=True, source_etype=ety))

        def fold(r: HloInstruction, init_gen: Generator):
            op = simple_reducer(r.attrs["to_apply"])
            if op is None or len(r.operands) != 2 or r.operands[0] is not inst \
                    or sorted(r.attrs["dimensions"]) != list(dims):
                return None
            folded.append((r, init_gen, op))

            def reduced(index: Index):
                if index.depths is None or index.stack is None or any(x is None for x in index.depths):
                    return None
                multi, depths = [i64(0)] * shape.rank, [0] * shape.rank
                kept = [d for d in range(shape.rank) if d not in dims]
                for d, x, depth in zip(kept, index.multi, index.depths):
                    multi[d], depths[d] = x, depth
                return row_of(multi, depths, index)[1][id(r)]
            return reduced
        return read, fold

    # -- small helpers ----------------------------------------------------------
    def alloca(self, pt, name: str = "acc") -> ir.Value:
        return self.alloca_builder.alloca(types.register_type(pt), name=name)

    def conditional_value(self, cond: ir.Value, then_fn, else_fn, ty: ir.Type) -> ir.Value:
        """``cond ? then_fn() : else_fn()`` with real branches, so the untaken side
        never runs (it may read out of bounds)."""
        with self.b.if_else(cond) as (then, otherwise):
            with then:
                v_then = then_fn()
                then_block = self.b.block
            with otherwise:
                v_else = else_fn()
                else_block = self.b.block
        phi = self.b.phi(ty)
        phi.add_incoming(v_then, then_block)
        phi.add_incoming(v_else, else_block)
        return phi


#: Vector iterations the row scratch's fill loop runs side by side: its value
#: is expensive (softmax's exp: a long dependent chain per vector), and
#: independent iterations in flight keep the FMA pipes busy (softmax
#: 4096x1024 on one thread 2.10 -> 1.55 ms, 2 threads 0.91 -> 0.80 ms).
ROW_SCRATCH_INTERLEAVE = 4
#: The largest row (bytes) ``row_scratch`` keeps on the stack: well inside L1/L2.
ROW_SCRATCH_BYTES = 32 * 1024


def row_scratch_dims(inst: HloInstruction) -> list | None:
    """The reduced dimensions when ``inst`` is worth keeping a row of (see
    ``ElementalEmitter.row_scratch``): an expensive elementwise value read by
    a reduction over its minor-most dimensions and by other users as well;
    None otherwise."""
    shape = inst.shape
    if not (shape.is_array and is_expensive(inst) and OPCODES.get(inst.opcode)
            and OPCODES[inst.opcode].is_elementwise) or len(inst.users) < 2 or shape.layout.is_padded:
        return None
    for user in inst.users:
        if user.opcode != "reduce" or len(user.operands) != 2 or user.operands[0] is not inst:
            continue
        dims = sorted(user.attrs["dimensions"])
        minor = [d for d in shape.layout.minor_to_major][:len(dims)]
        row = math.prod(shape.dimensions[d] for d in dims)
        if sorted(minor) == dims and 1 < row and row * max(shape.element_type.byte_size, 4) <= ROW_SCRATCH_BYTES:
            return dims
    return None


def _region(index: Index):
    """The chain at whose top level code at ``index`` is emitted (hoisted code:
    ``index.avail`` ends with a chain that is not one of the enclosing
    loops'), or None inside a loop body; values emitted there and remembered
    in it dominate whatever later code finds them through ``avail``."""
    avail, stack = index.avail, index.stack
    if not avail or stack is None or any(c is avail[-1] for c in stack):
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


def _cached(inst: HloInstruction, gen: Generator) -> Generator:
    """Generate ``inst`` once per Index object, however many users ask for it."""
    key = id(inst)

    def cached(index: Index):
        hit = index.cache.get(key)
        if hit is None:
            hit = index.cache[key] = gen(index)
        return hit
    return cached


# ----------------------------------------------------------------------------
# Rules: (emitter, inst, operand generators) -> generator
# ----------------------------------------------------------------------------

def _elementwise(em: ElementalEmitter, inst, gens):
    operand_types = [o.shape.element_type for o in inst.operands]
    result_type = inst.shape.element_type

    def gen(index):
        values = [g(index) for g in gens]
        return scalar_ops.emit_elementwise(em.b, inst.opcode, values, operand_types, result_type,
                                           inst.attrs)
    return gen


def _select_like(em: ElementalEmitter, inst, gens):
    """select and clamp allow scalar operands where arrays are expected."""
    operand_types = [o.shape.element_type for o in inst.operands]
    result_type = inst.shape.element_type
    scalar = [o.shape.rank == 0 and inst.shape.rank > 0 for o in inst.operands]

    def gen(index):
        values = [g(scalar_index() if s else index) for g, s in zip(gens, scalar)]
        return scalar_ops.emit_elementwise(em.b, inst.opcode, values, operand_types, result_type,
                                           inst.attrs)
    return gen


def _constant(em: ElementalEmitter, inst, gens):
    lit = inst.literal
    if lit.size == 1:
        value = types.constant(inst.shape.element_type, lit.reshape(-1)[0])
        return lambda index: value
    array = em.constant_array(inst)
    return lambda index: array.read(em.b, index)


def _iota(em: ElementalEmitter, inst, gens):
    dim = inst.attrs["iota_dimension"]
    result_type = inst.shape.element_type

    def gen(index):
        return scalar_ops.emit_elementwise(em.b, "convert", [index.multi[dim]], [S64], result_type, {})
    return gen


def _mapped_index(index: Index, source_dims) -> Index:
    """The index whose component k is ``index``'s component ``source_dims[k]``
    (a pure index map: loop depths and hoist chains carry over)."""
    multi = [index.multi[d] for d in source_dims]
    if index.depths is None:
        return Index(multi)
    return Index(multi, depths=[index.depths[d] for d in source_dims], stack=index.stack,
                 avail=index.avail)


def _broadcast(em: ElementalEmitter, inst, gens):
    dims = inst.attrs.get("dimensions", ())
    (g,) = gens
    return lambda index: em.hoisted(g, _mapped_index(index, dims))


def _transpose(em: ElementalEmitter, inst, gens):
    perm = inst.attrs["dimensions"]
    inverse = [0] * len(perm)
    for out_dim, operand_dim in enumerate(perm):
        inverse[operand_dim] = out_dim
    (g,) = gens
    return lambda index: g(_mapped_index(index, inverse))


def _reshape(em: ElementalEmitter, inst, gens):
    (g,) = gens
    in_dims = inst.operands[0].shape.dimensions
    out_dims = inst.shape.dimensions
    in_nontrivial = [d for d, n in enumerate(in_dims) if n != 1]
    out_nontrivial = [d for d, n in enumerate(out_dims) if n != 1]
    if [in_dims[d] for d in in_nontrivial] == [out_dims[d] for d in out_nontrivial]:
        # Only size-1 dimensions come or go: map the others one to one.
        def gen_unit(index):
            multi = [i64(0)] * len(in_dims)
            depths = [0] * len(in_dims) if index.depths is not None else None
            for di, do in zip(in_nontrivial, out_nontrivial):
                multi[di] = index.multi[do]
                if depths is not None:
                    depths[di] = index.depths[do]
            if depths is None:
                return g(Index(multi))
            return g(Index(multi, depths=depths, stack=index.stack, avail=index.avail))
        return gen_unit

    def gen(index):
        # Row-major linear index of the output, delinearised over the input.
        b = em.b
        linear = i64(0)
        stride = 1
        for d in reversed(range(len(out_dims))):
            if out_dims[d] != 1:
                term = index.multi[d] if stride == 1 else b.mul(index.multi[d], i64(stride))
                linear = b.add(linear, term)
            stride *= out_dims[d]
        multi = [i64(0)] * len(in_dims)
        stride = math.prod(in_dims)
        for d in range(len(in_dims)):
            stride //= in_dims[d]
            if in_dims[d] == 1:
                continue
            q = b.udiv(linear, i64(stride)) if stride != 1 else linear
            multi[d] = b.urem(q, i64(in_dims[d])) if d > 0 else q
        return g(Index(multi))
    return gen


def _slice(em: ElementalEmitter, inst, gens):
    (g,) = gens
    spec = inst.attrs["slice"]

    def gen(index):
        multi = []
        for x, (start, _limit, stride) in zip(index.multi, spec):
            if stride != 1:
                x = em.b.mul(x, i64(stride))
            if start:
                x = em.b.add(x, i64(start))
            multi.append(x)
        return g(Index(multi))
    return gen


def _reverse(em: ElementalEmitter, inst, gens):
    (g,) = gens
    rev = set(inst.attrs.get("dimensions", ()))
    dims = inst.shape.dimensions

    def gen(index):
        multi = [em.b.sub(i64(dims[d] - 1), x) if d in rev else x for d, x in enumerate(index.multi)]
        return g(Index(multi))
    return gen


def _pad(em: ElementalEmitter, inst, gens):
    g_operand, g_value = gens
    config = inst.attrs["padding"]
    in_dims = inst.operands[0].shape.dimensions
    ty = types.register_type(inst.shape.element_type)

    def gen(index):
        b = em.b
        in_bounds = ir.Constant(ir.IntType(1), 1)
        multi = []
        for x, (low, _high, interior), n in zip(index.multi, config, in_dims):
            shifted = b.sub(x, i64(low))
            if interior:
                step = i64(interior + 1)
                on_grid = b.icmp_signed("==", b.srem(shifted, step), i64(0))
                shifted_pos = b.sdiv(shifted, step)
                in_bounds = b.and_(in_bounds, on_grid)
            else:
                shifted_pos = shifted
            in_bounds = b.and_(in_bounds, b.icmp_signed(">=", shifted, i64(0)))
            in_bounds = b.and_(in_bounds, b.icmp_signed("<", shifted_pos, i64(n)))
            multi.append(shifted_pos)
        return em.conditional_value(in_bounds, lambda: g_operand(Index(multi)),
                                    lambda: g_value(scalar_index()), ty)
    return gen


def _concatenate(em: ElementalEmitter, inst, gens):
    (dim,) = inst.attrs["dimensions"]
    sizes = [o.shape.dimensions[dim] for o in inst.operands]
    ty = types.register_type(inst.shape.element_type)
    parts = [(g, off, n) for g, off, n in zip(gens, np.cumsum([0] + sizes[:-1]), sizes) if n]

    def read_part(k, index):
        g, off, _n = parts[k]
        multi = list(index.multi)
        if off:
            multi[dim] = em.b.sub(multi[dim], i64(int(off)))
        return g(Index(multi))

    def choose(k, index):
        if k == len(parts) - 1:
            return read_part(k, index)
        _g, off, n = parts[k]
        cond = em.b.icmp_unsigned("<", index.multi[dim], i64(int(off + n)))
        return em.conditional_value(cond, lambda: read_part(k, index), lambda: choose(k + 1, index), ty)

    return lambda index: choose(0, index)


def _tuple(em: ElementalEmitter, inst, gens):
    return lambda index: tuple(g(index) for g in gens)


def _get_tuple_element(em: ElementalEmitter, inst, gens):
    (g,) = gens
    k = inst.attrs["index"]
    return lambda index: g(index)[k]


def _call(em: ElementalEmitter, inst, gens):
    return em.computation_generator(inst.attrs["to_apply"], gens)


def _fusion(em: ElementalEmitter, inst, gens):
    """A fusion is its fused computation with parameters bound to the operands."""
    return em.computation_generator(inst.attrs["calls"], gens)


def _reduce(em: ElementalEmitter, inst, gens):
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
    fold = em.row_folds.get(id(inst.operands[0]))
    folded = fold(inst, init_gens[0]) if fold is not None and n == 1 else None

    def gen(index):
        return em.region_cached(inst, index, lambda: emit_folded(index))

    def emit_folded(index):
        value = folded(index) if folded is not None else None
        return emit(index) if value is None else value

    def emit(index):
        b = em.b
        accs = [em.alloca(pt) for pt in elem_types]
        for acc, g in zip(accs, init_gens):
            b.store(g(scalar_index()), acc)
        nan = None
        if not empty and simple_reducer(reducer) in _NAN_FLAGGED:
            nan = _nan_flag(em, accs[0])
        if not empty:
            multi = [i64(0)] * in_shape.rank
            depths = None
            if index.depths is not None and index.stack is not None:
                depths = [0] * in_shape.rank
                for d, x in zip(kept, index.depths):
                    depths[d] = x
            for d, x in zip(kept, index.multi):
                multi[d] = x
            loops = _LoopState(order, in_shape.dimensions, multi, depths,
                               list(index.stack) if depths is not None else None,
                               index.avail if depths is not None else None,
                               elem_types[0].byte_size if n == 1 else None)
            _reduce_loops(em, loops, input_gens, accs, reducer, nan=nan)
        if n == 1:
            return _finish_accumulator(b, elem_types[0], accs[0], nan)
        return tuple(b.load(a) for a in accs)
    return gen


def _nan_flag(em: ElementalEmitter, acc) -> ir.Value:
    """The i1 alloca of a ``_NAN_FLAGGED`` reduction, set to whether the
    accumulator's initial value is NaN."""
    b = em.b
    nan = em.alloca_builder.alloca(ir.IntType(1), name="acc.nan")
    b.store(b.fcmp_unordered("uno", b.load(acc), b.load(acc)), nan)
    return nan


def _start_accumulator(em: ElementalEmitter, r: HloInstruction, init, op: str) -> tuple:
    """``(acc, nan)`` allocas of a simple reduction ``r`` folded into another
    loop (``ElementalEmitter.row_scratch``), initialised to ``init``."""
    acc = em.alloca(r.shape.element_type)
    em.b.store(init, acc)
    return acc, (_nan_flag(em, acc) if op in _NAN_FLAGGED else None)


def _accumulate(b: ir.IRBuilder, op: str, pt, acc, nan, value) -> None:
    """One step of a simple reduction of element type ``pt``: ``acc = op(acc, value)``."""
    if nan is not None:
        b.store(_nan_flagged_step(b, op, b.load(acc), value, nan), acc)
    else:
        b.store(_simple_step(b, op, pt, b.load(acc), value), acc)


def _finish_accumulator(b: ir.IRBuilder, pt, acc, nan) -> ir.Value:
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
_NAN_FLAGGED = {"maximum": "llvm.maxnum", "minimum": "llvm.minnum"}


def _nan_flagged_step(b: ir.IRBuilder, op: str, acc, x, nan) -> ir.Value:
    """One step of a ``_NAN_FLAGGED`` max/min reduction: records whether ``x``
    is NaN in the i1 alloca ``nan`` and returns ``maxnum(acc, x)`` (or minnum)."""
    b.store(b.or_(b.load(nan), b.fcmp_unordered("uno", x, x)), nan)
    name = f"{_NAN_FLAGGED[op]}.{'f32' if x.type == ir.FloatType() else 'f64'}"
    fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(x.type, [x.type, x.type]), name)
    return b.call(fn, [acc, x], fastmath=("nnan",) + _FAST_FLAGS)


def simple_reducer(reducer: HloComputation) -> str | None:
    """The opcode when ``reducer`` is ``ROOT op(p0, p1)`` on f32/f64, else None."""
    root = reducer.root
    params = reducer.parameters
    if (len(params) == 2 and root.opcode in _REASSOCIABLE and root.shape.is_array
            and root.shape.element_type.value in ("f32", "f64")
            and {id(o) for o in root.operands} == {id(p) for p in params}):
        return root.opcode
    return None


def emit_reducer(em: "ElementalEmitter", reducer: HloComputation, accs: list, inputs: list) -> tuple:
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


class _LoopState:
    """The reduction loops still to emit, and the index/depths/chains so far."""

    def __init__(self, order, dims, multi, depths, stack, avail=None, element_bytes=None):
        self.order, self.dims, self.multi, self.depths, self.stack = order, dims, multi, depths, stack
        self.outer_avail, self.outer_depth = avail, None if stack is None else len(stack)
        self.element_bytes = element_bytes      # of a single reduction's values (loop hints)


def _reduce_loops(em, loops: _LoopState, input_gens, accs, reducer, level: int = 0, nan=None):
    """Nested loops over the reduced dimensions; the innermost body applies the
    reducer to the accumulators and the input elements (with ``nan``, an i1
    alloca: a max/min reducer as ``_NAN_FLAGGED`` says)."""
    if level == len(loops.order):
        b = em.b
        if loops.depths is None:
            idx = Index(list(loops.multi))
        else:
            # The reduction's own loops run inside whatever the reduce's point sees.
            idx = Index(list(loops.multi), depths=list(loops.depths), stack=list(loops.stack),
                        avail=list(loops.outer_avail) + loops.stack[loops.outer_depth:])
        current = [b.load(a) for a in accs]
        inputs = [g(idx) for g in input_gens]
        if nan is not None:
            out = (_nan_flagged_step(b, simple_reducer(reducer), current[0], inputs[0], nan),)
        else:
            out = emit_reducer(em, reducer, current, inputs)
        for a, v in zip(accs, out):
            b.store(v, a)
        return
    d = loops.order[level]
    hints = loop_hints(em.b.module, interleave=REDUCTION_INTERLEAVE, trip_count=loops.dims[d],
                       element_bytes=loops.element_bytes)
    with for_range(em.b, loops.dims[d], f"r{d}", loops.stack, hints) as iv:
        loops.multi[d] = iv
        if loops.depths is not None:
            loops.depths[d] = len(loops.stack)
            region = loops.outer_avail[-1] if loops.outer_avail else None
            if level == 0 and loops.dims[d] > 1 and not any(region is c for c in loops.stack):
                # This reduce is hoisted code, at the top level of the chain
                # it was hoisted into: what gets hoisted in front of its loop
                # runs there too, once, before that chain's loop.
                loops.stack[-1].parent = region
        _reduce_loops(em, loops, input_gens, accs, reducer, level + 1, nan)


def _dot(em: ElementalEmitter, inst, gens):
    g_lhs, g_rhs = gens
    a = inst.attrs
    lb, rb = a.get("lhs_batch_dims", ()), a.get("rhs_batch_dims", ())
    lc, rc = a.get("lhs_contracting_dims", ()), a.get("rhs_contracting_dims", ())
    ls, rs = inst.operands[0].shape, inst.operands[1].shape
    lfree = [d for d in range(ls.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rs.rank) if d not in rb and d not in rc]
    pt = inst.shape.element_type
    acc_t = types.accumulation_type(pt)    # halves accumulate in f32, as XLA's CPU dot
    lt, rt = ls.element_type, rs.element_type
    csizes = [ls.dimensions[d] for d in lc]
    mul, add = "multiply", "add"     # on pred: and, or (an or of ands, as XLA's dot)

    def gen(index):
        b = em.b
        lmulti, rmulti = [i64(0)] * ls.rank, [i64(0)] * rs.rank
        pos = 0
        for dl, dr in zip(lb, rb):
            lmulti[dl] = rmulti[dr] = index.multi[pos]
            pos += 1
        for d in lfree:
            lmulti[d] = index.multi[pos]
            pos += 1
        for d in rfree:
            rmulti[d] = index.multi[pos]
            pos += 1
        acc = em.alloca(acc_t, "dot.acc")
        b.store(types.constant(acc_t, 0), acc)
        if all(csizes):
            def body(k):
                if k == len(lc):
                    x = g_lhs(Index(list(lmulti)))
                    y = g_rhs(Index(list(rmulti)))
                    if lt != acc_t:
                        x = scalar_ops.emit_elementwise(b, "convert", [x], [lt], acc_t, {})
                    if rt != acc_t:
                        y = scalar_ops.emit_elementwise(b, "convert", [y], [rt], acc_t, {})
                    prod = scalar_ops.emit_elementwise(b, mul, [x, y], [acc_t, acc_t], acc_t, {})
                    s = scalar_ops.emit_elementwise(b, add, [b.load(acc), prod], [acc_t, acc_t], acc_t, {})
                    b.store(s, acc)
                    return
                if csizes[k] == 1:
                    lmulti[lc[k]] = rmulti[rc[k]] = i64(0)
                    body(k + 1)
                    return
                with for_range(b, csizes[k], f"c{k}") as iv:
                    lmulti[lc[k]] = rmulti[rc[k]] = iv
                    body(k + 1)
            body(0)
        value = b.load(acc)
        return value if acc_t is pt else scalar_ops.emit_elementwise(b, "convert", [value], [acc_t], pt, {})
    return gen


_RULES = {
    "constant": _constant,
    "iota": _iota,
    "broadcast": _broadcast,
    "transpose": _transpose,
    "reshape": _reshape,
    "bitcast": _reshape,   # a layout-preserving reshape; addressing goes through layouts anyway
    "copy": lambda em, inst, gens: gens[0],
    "slice": _slice,
    "reverse": _reverse,
    "pad": _pad,
    "concatenate": _concatenate,
    "select": _select_like,
    "clamp": _select_like,
    "tuple": _tuple,
    "get-tuple-element": _get_tuple_element,
    "call": _call,
    "fusion": _fusion,
    "reduce": _reduce,
    "dot": _dot,
}


def register_generator(opcode: str):
    """Decorator adding an elemental rule ``(emitter, inst, operand_gens) -> generator``."""
    def wrap(fn):
        _RULES[opcode] = fn
        return fn
    return wrap


def has_generator(opcode: str) -> bool:
    return opcode in _RULES or (opcode in OPCODES and OPCODES[opcode].is_elementwise)
