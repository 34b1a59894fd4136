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

This module is the generator table (``_RULES``; kernel modules add theirs with
:func:`register_generator`).  Its neighbours:
``hoisting.py`` emits a value no deeper in the loop nest than its index needs
(and keeps rows of expensive values), ``reduction.py`` holds the ``reduce``
generator and the accumulators every reduction uses.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from ..errors import UnsupportedError
from ..hlo.ir import HloComputation, HloInstruction
from ..hlo.opcodes import OPCODES, Trait
from ..shape import S64, strides
from . import scalar_ops, types
from .emission import context_of
from .hoisting import Hoisting, cached, mapped_index, row_scratch_dims
from .ir_array import Index, IrArray, i64, scalar_index
from .loops import for_range
from .reduction import reduce_generator

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
        #: The module's emission context: where indices sit in the loop nest.
        self.ctx = context_of(builder.module)
        #: Hoisting, reuse and row scratch of this emitter's generators (hoisting.py).
        self.hoisting = Hoisting(self)

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
                    gen, self.hoisting.row_folds[id(inst)] = self.hoisting.row_scratch(inst, gen, row)
            if len(inst.users) > 1:
                gen = cached(self.ctx, inst, gen)
            gens[id(inst)] = gen
        return gens

    def emit_scalar_computation(self, comp: HloComputation, args: list):
        """Apply a scalar computation (a reducer, a comparator) to register values.

        Each instruction is emitted once, in order; returns a value, or a tuple
        of values for a tuple-shaped root.
        """
        values: dict[int, object] = {}
        idx = scalar_index()
        if any(i.shape.is_array and i.shape.rank for i in comp.instructions):
            return self._array_scalar_computation(comp, args, idx)
        for inst in comp.post_order():
            if inst.opcode == "parameter":
                values[id(inst)] = args[inst.parameter_number]
                continue
            ops = [(lambda v: (lambda _i: v))(values[id(o)]) for o in inst.operands]
            values[id(inst)] = self.make_generator(inst, ops)(idx)
        return values[id(comp.root)]

    def _array_scalar_computation(self, comp: HloComputation, args: list, idx):
        """A computation of scalars in and out with arrays inside (XLA allows a reducer
        to broadcast, dot and slice): every instruction a generator, the root's
        elements read at the scalar index."""
        gens: dict[int, Generator] = {}
        for inst in comp.post_order():
            if inst.opcode == "parameter":
                gens[id(inst)] = (lambda v: (lambda _i: v))(args[inst.parameter_number])
            elif inst.opcode != "tuple":
                gens[id(inst)] = self.make_generator(inst, [gens[id(o)] for o in inst.operands])
        root = comp.root
        if root.opcode == "tuple":
            return tuple(gens[id(o)](idx) for o in root.operands)
        return gens[id(root)](idx)

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


# ----------------------------------------------------------------------------
# Rules: (emitter, inst, operand generators) -> generator
# ----------------------------------------------------------------------------

def _elementwise(em: ElementalEmitter, inst, gens):
    operand_types = [o.shape.element_type for o in inst.operands]
    result_type = inst.shape.element_type
    if any(o.shape.dimensions != inst.shape.dimensions for o in inst.operands if o.shape.dimensions):
        # bitcast-convert between widths (u32[2,2] -> u64[2]) is not element by element.
        raise UnsupportedError(inst.opcode, f"{inst.name}: operands of other dimensions than the "
                               f"result {inst.shape}")

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


def _broadcast(em: ElementalEmitter, inst, gens):
    dims = inst.attrs.get("dimensions", ())
    (g,) = gens
    return lambda index: em.hoisting.hoisted(g, mapped_index(em.ctx, index, dims))


def _transpose(em: ElementalEmitter, inst, gens):
    perm = inst.attrs["dimensions"]
    inverse = [0] * len(perm)
    for out_dim, operand_dim in enumerate(perm):
        inverse[operand_dim] = out_dim
    (g,) = gens
    return lambda index: g(mapped_index(em.ctx, index, inverse))


def _reshape(em: ElementalEmitter, inst, gens):
    (g,) = gens
    in_dims = inst.operands[0].shape.dimensions
    out_dims = inst.shape.dimensions
    in_nontrivial = [d for d, n in enumerate(in_dims) if n != 1]
    out_nontrivial = [d for d, n in enumerate(out_dims) if n != 1]
    if [in_dims[d] for d in in_nontrivial] == [out_dims[d] for d in out_nontrivial]:
        # Only size-1 dimensions come or go: map the others one to one.
        def gen_unit(index):
            point = em.ctx.point(index)
            multi = [i64(0)] * len(in_dims)
            depths = [0] * len(in_dims) if point is not None else None
            for di, do in zip(in_nontrivial, out_nontrivial):
                multi[di] = index.multi[do]
                if depths is not None:
                    depths[di] = point.depths[do]
            if depths is None:
                return g(Index(multi))
            return g(em.ctx.place(Index(multi), depths, point.stack, point.avail))
        return gen_unit

    groups = common_factors(in_dims, out_dims) if 0 not in in_dims else [(range(len(in_dims)), range(len(out_dims)))]

    def gen(index):
        # Per group of dimensions whose sizes multiply to the same number on
        # both sides (XLA's ``CommonFactors``): the group's row-major linear
        # index over the output's dimensions, delinearised over the input's.
        # A dimension split or merged alone costs no division by another
        # group's sizes, and one group dimension on the input side none at all.
        b = em.b
        multi = [i64(0)] * len(in_dims)
        for in_group, out_group in groups:
            linear = i64(0)
            stride = 1
            for d in reversed(out_group):
                if out_dims[d] != 1:
                    term = index.multi[d] if stride == 1 else b.mul(index.multi[d], i64(stride))
                    linear = term if stride == 1 else b.add(linear, term)
                stride *= out_dims[d]
            first = True
            for d in in_group:
                stride //= in_dims[d]
                if in_dims[d] == 1:
                    continue
                q = b.udiv(linear, i64(stride)) if stride != 1 else linear
                multi[d] = q if first else b.urem(q, i64(in_dims[d]))
                first = False
        return g(Index(multi))
    return gen


def common_factors(a: Sequence[int], b: Sequence[int]) -> list[tuple[range, range]]:
    """The dimensions of two shapes of as many elements (none of size 0)
    grouped so that each group's sizes multiply to the same number on both
    sides, as finely as possible: ``[2, 3, 4] -> [6, 4]`` gives ``([0, 1], [0])``
    and ``([2], [1])`` (as ranges).  A reshape maps each group on its own."""
    groups, i, j, start_i, start_j, pa, pb = [], 0, 0, 0, 0, 1, 1
    while i < len(a) or j < len(b):
        if (pa <= pb and i < len(a)) or j == len(b):
            pa *= a[i]
            i += 1
        else:
            pb *= b[j]
            j += 1
        if pa == pb:
            groups.append((range(start_i, i), range(start_j, j)))
            start_i, start_j, pa, pb = i, j, 1, 1
    if start_i < len(a) or start_j < len(b):
        groups.append((range(start_i, len(a)), range(start_j, len(b))))
    return groups


def _bitcast(em: ElementalEmitter, inst, gens):
    """A bitcast reinterprets memory: element k of the result's buffer is element
    k of the operand's, whatever their layouts (XLA's layout assignment makes
    bitcasts that transpose), its bits read as the result's element type."""
    (g,) = gens
    src, dst = inst.operands[0].shape, inst.shape
    if src.layout.is_padded or dst.layout.is_padded:
        raise UnsupportedError("bitcast", f"of a padded layout ({src} to {dst})")
    reinterpret = src.element_type is not dst.element_type
    if src.has_default_layout() and dst.has_default_layout():
        read = _reshape(em, inst, gens)                   # memory order is row-major on both sides
    else:
        dst_strides = strides(dst)

        def read(index):
            b = em.b
            linear = i64(0)
            for x, st in zip(index.multi, dst_strides):
                if dst.dimensions and st:
                    linear = b.add(linear, x if st == 1 else b.mul(x, i64(st)))
            multi = [i64(0)] * src.rank
            order = [d for d in src.layout.minor_to_major if src.dimensions[d] != 1]
            for k, d in enumerate(order):
                last = k == len(order) - 1
                multi[d] = linear if last else b.urem(linear, i64(src.dimensions[d]))
                if not last:
                    linear = b.udiv(linear, i64(src.dimensions[d]))
            return g(Index(multi))
    if not reinterpret:
        return read
    return lambda index: scalar_ops.emit_elementwise(em.b, "bitcast-convert", [read(index)], [src.element_type],
                                                     dst.element_type, {})


def _slice(em: ElementalEmitter, inst, gens):
    (g,) = gens
    spec = inst.attrs["slice"]
    dims = inst.shape.dimensions

    def gen(index):
        multi, bounds = [], []
        for d, (x, (start, _limit, stride)) in enumerate(zip(index.multi, spec)):
            if stride != 1:
                x = em.b.mul(x, i64(stride))
            if start:
                x = em.b.add(x, i64(start))
            multi.append(x)
            low, high = index.bounds[d] if index.bounds else (0, dims[d])
            bounds.append((start + low * stride, start + (high - 1) * stride + 1) if high > low else (start, start))
        return g(Index(multi, bounds=tuple(bounds)))
    return gen


def _reverse(em: ElementalEmitter, inst, gens):
    (g,) = gens
    rev = set(inst.attrs.get("dimensions", ()))
    dims = inst.shape.dimensions

    def gen(index):
        multi = [em.b.sub(i64(dims[d] - 1), x) if d in rev else x for d, x in enumerate(index.multi)]
        return g(Index(multi))
    return gen


#: A pad with interior padding whose operand costs at most this many cheap
#: instructions (elementwise ops that are not expensive, slices, broadcasts,
#: reshapes, parameters, constants) reads its operand at every element, at
#: index 0 where the element is padding, and selects: the branch would
#: alternate element by element and keep the loop scalar (an interior pad
#: of 1024 x 512 ran in 0.26 ms rather than 0.56; jax's associative_scan
#: 0.82x).  Without interior padding the branch is taken in long runs, and
#: selects made a padded copy 2.8x slower; a costlier operand is computed
#: only where it is read.
SELECTED_PAD_OPERAND = 8
_CHEAP_READS = frozenset({"parameter", "constant", "broadcast", "slice", "reshape", "bitcast", "transpose"})


def _cheap(inst: HloInstruction, budget: list) -> bool:
    """Whether ``inst``'s value, within its fused computation, costs at most
    ``budget[0]`` cheap instructions (spent as counted)."""
    budget[0] -= 1
    if budget[0] < 0:
        return False
    info = OPCODES.get(inst.opcode)
    if inst.opcode not in _CHEAP_READS and not (info and info.is_elementwise and not info.has(Trait.EXPENSIVE)):
        return False
    return inst.opcode == "parameter" or all(_cheap(o, budget) for o in inst.operands)


def pad_source(b: ir.IRBuilder, x, low: int, interior: int, n: int) -> tuple:
    """``(ok, pos)`` for index ``x`` of a pad's result along a dimension
    padded ``low`` before and ``interior`` between its ``n`` operand
    elements: whether ``x`` falls on operand element ``pos`` (else it is
    padding)."""
    shifted = b.sub(x, i64(low))
    ok = b.icmp_signed(">=", shifted, i64(0))
    if interior:
        step = i64(interior + 1)
        ok = b.and_(b.icmp_signed("==", b.srem(shifted, step), i64(0)), ok)
        pos = b.sdiv(shifted, step)
    else:
        pos = shifted
    return b.and_(ok, b.icmp_signed("<", pos, i64(n))), pos


def _pad(em: ElementalEmitter, inst, gens):
    g_operand, g_value = gens
    config = inst.attrs["padding"]
    in_dims = inst.operands[0].shape.dimensions
    ty = types.register_type(inst.shape.element_type)
    selected = any(int(t[2]) for t in config) and 0 not in in_dims \
        and _cheap(inst.operands[0], [SELECTED_PAD_OPERAND])

    def gen(index):
        b = em.b
        in_bounds = ir.Constant(ir.IntType(1), 1)
        multi = []
        for x, (low, _high, interior), n in zip(index.multi, config, in_dims):
            ok, shifted_pos = pad_source(b, x, int(low), int(interior), n)
            in_bounds = b.and_(in_bounds, ok)
            multi.append(shifted_pos)
        if selected:
            inside = [b.select(in_bounds, m, i64(0)) for m in multi]
            return b.select(in_bounds, g_operand(Index(inside)), g_value(scalar_index()))
        return em.conditional_value(in_bounds, lambda: g_operand(Index(multi)),
                                    lambda: g_value(scalar_index()), ty)
    return gen


def _concatenate(em: ElementalEmitter, inst, gens):
    (dim,) = inst.attrs["dimensions"]
    sizes = [o.shape.dimensions[dim] for o in inst.operands]
    ty = types.register_type(inst.shape.element_type)
    parts = [(g, int(off), n) for g, off, n in zip(gens, np.cumsum([0] + sizes[:-1]), sizes) if n]

    def read_part(part, index):
        g, off, _n = part
        multi = list(index.multi)
        if off:
            multi[dim] = em.b.sub(multi[dim], i64(off))
        bounds = None
        if index.bounds:
            low, high = index.bounds[dim]
            bounds = index.bounds[:dim] + ((max(low - off, 0), min(high - off, _n)),) + index.bounds[dim + 1:]
        return g(Index(multi, bounds=bounds))

    def choose(reached, index):
        if len(reached) == 1:
            return read_part(reached[0], index)
        _g, off, n = reached[0]
        cond = em.b.icmp_unsigned("<", index.multi[dim], i64(off + n))
        return em.conditional_value(cond, lambda: read_part(reached[0], index),
                                    lambda: choose(reached[1:], index), ty)

    def gen(index):
        # Only the operands the index can reach (a slice of the concatenation
        # within one operand reads that operand alone).
        low, high = index.bounds[dim] if index.bounds else (0, inst.shape.dimensions[dim])
        reached = [p for p in parts if p[1] < high and p[1] + p[2] > low] or parts[-1:]
        return choose(reached, index)
    return gen


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
    "bitcast": _bitcast,
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
    "reduce": reduce_generator,
    "dot": _dot,
}


def register_generator(opcode: str, rule: Callable) -> None:
    """Add the elemental rule ``rule(emitter, inst, operand_gens) -> generator``
    of ``opcode`` (``kernels.register_all`` adds those defined in ``kernels/``)."""
    _RULES[opcode] = rule


def has_generator(opcode: str) -> bool:
    return opcode in _RULES or (opcode in OPCODES and OPCODES[opcode].is_elementwise)
