"""``pad`` with interior padding (or a loop fusion rooted at one) as row
loops over the operand's phases.

The elemental loop kernel computes every result element on its own: whether
it falls on the operand's grid, and where, is a remainder and a division by
the interior stride, and the operand is read at a computed index (a gather:
nothing vectorises).  Here the loop nest runs over the result's rows (every
dimension but the minor-most); a row off the operand's grid is filled with
the padding value, and a row on it is written in groups of ``s`` (the minor
dimension's interior stride): element ``k`` of the operand's row, then
``s - 1`` padding values.  The operand is read at consecutive indices and
the group's stores are one interleaved group, so LLVM vectorises both; what
the groups do not cover at the ends of the row (low padding, negative
padding, a last group cut short) is filled and stored element by element.
A stride above :data:`MAX_GROUP` fills the row, then stores the operand's
elements at their stride.

jax's ``associative_scan`` interleaves its levels' partial sums so (two pads
of stride 2 and an add per level); the fusion pass keeps every interior pad
its kernel's root (``passes/fusion.py``), which is this kernel.
"""
from __future__ import annotations

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ..elemental import pad_source
from ..emitter import PARALLEL_MIN_WORK, KernelContext, task_chunks, task_range, work_estimate
from ..ir_array import Index, i64, scalar_index
from ..kernel_choice import KernelCandidate
from ..loops import for_range_dynamic, loop_hints, loop_nest, parallel_loops

#: Largest interior stride written as groups (one store per element of the
#: group in the loop body); a larger one fills the row, then stores.
MAX_GROUP = 8


def _root(inst: HloInstruction) -> HloInstruction:
    return inst.attrs["calls"].root if inst.opcode == "fusion" else inst


def _applies(inst: HloInstruction) -> str | None:
    root = _root(inst)
    if root.opcode != "pad" or not any(int(t[2]) for t in root.attrs["padding"]):
        return "not a pad with interior padding (or a loop fusion rooted at one)"
    shape = inst.shape
    if not shape.is_array or shape.layout.is_padded:
        return "the result is not an unpadded array"
    if shape.element_count() == 0:
        return "the result has no elements"
    if root.operands[0].shape.element_count() == 0:
        return "the operand has no elements (the result is all padding)"
    if not any(shape.dimensions[d] != 1 for d in shape.layout.minor_to_major):
        return "the result is one element"
    return None


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class _Row:
    """The static plan of a result row (the minor dimension ``m``): operand
    elements [q_first, q_end) are written as whole groups of ``s`` starting at
    ``lo + q * s``; the result positions before and after the groups are
    padding, except the operand elements [q_end, q_stray) among them."""

    def __init__(self, lo: int, interior: int, n: int, extent: int):
        self.lo, self.s, self.extent = lo, interior + 1, extent
        s = self.s
        self.q_first = _ceil_div(-lo, s) if lo < 0 else 0
        # Whole groups: q < n and lo + q * s + s <= extent.
        self.q_end = max(self.q_first, min(n, (extent - lo - s) // s + 1))
        # Operand elements after the groups that still land in the row.
        self.q_stray = max(self.q_end, min(n, _ceil_div(extent - lo, s)))
        if self.q_end > self.q_first:
            self.j_lo, self.j_hi = lo + self.q_first * s, lo + self.q_end * s
        else:
            self.j_lo = self.j_hi = extent


def emit_pad(ctx: KernelContext) -> None:
    """The kernel of ``ctx.inst``, a pad with interior padding (or a fusion
    rooted at one): see the module docstring."""
    inst, root = ctx.inst, _root(ctx.inst)
    shape = inst.shape
    order = [d for d in reversed(shape.layout.minor_to_major) if shape.dimensions[d] != 1]
    m, majors = order[-1], order[:-1]
    config = [(int(lo), int(hi), int(it)) for lo, hi, it in root.attrs["padding"]]
    in_dims = root.operands[0].shape.dimensions
    lo_m, _hi_m, it_m = config[m]
    row = _Row(lo_m, it_m, in_dims[m], shape.dimensions[m])

    def generators(tctx: KernelContext):
        gens = [tctx.operand_generator(k) for k in range(len(inst.operands))]
        if inst.opcode != "fusion":
            return gens[0], gens[1]
        every = tctx.em.instruction_generators(inst.attrs["calls"], gens)
        return every[id(root.operands[0])], every[id(root.operands[1])]

    def emit_rows(tctx: KernelContext, outer_range) -> None:
        b = tctx.b
        (out,) = tctx.output_arrays()
        operand, value_gen = generators(tctx)
        value = value_gen(scalar_index())
        with loop_nest(b, shape, "r", dims=majors, outer_range=outer_range) as index:
            start = index.linear             # the row's first element (index m is 0)
            on_grid, at = _operand_row(b, index.multi, config, in_dims, m)
            with b.if_else(on_grid) as (then, otherwise):
                with then:
                    _emit_row(b, out, start, row, value,
                              lambda q: operand(Index([q if d == m else v for d, v in enumerate(at)])))
                with otherwise:
                    _fill(b, out, start, 0, shape.dimensions[m], value)

    work = work_estimate(inst)
    outer = shape.dimensions[majors[0]] if majors else 1
    chunk, count = task_chunks(outer, work) if majors and work >= PARALLEL_MIN_WORK else (outer, 1)
    if count == 1:
        emit_rows(ctx, None)
        return
    ctx.parallel_for(count, lambda tctx, i: emit_rows(tctx, task_range(tctx.b, i, chunk, outer)))


def _operand_row(b: ir.IRBuilder, multi: list, config: list, in_dims, m: int):
    """``(on_grid, at)`` for the result row at ``multi``: whether every
    dimension but ``m`` falls on an operand element, and that element's index
    (``at[m]`` None)."""
    ok = ir.Constant(ir.IntType(1), 1)
    at = []
    for d, ((lo, _hi, interior), n) in enumerate(zip(config, in_dims)):
        if d == m:
            at.append(None)
            continue
        on, pos = pad_source(b, multi[d], lo, interior, n)
        ok = b.and_(ok, on)
        at.append(pos)
    return ok, at


def _store(b, out, start, j, v) -> None:
    out.write(b, Index([None] * out.shape.rank, b.add(start, j, flags=["nsw", "nuw"]), out.shape), v)


def _fill(b, out, start, j_lo: int, j_hi: int, value) -> None:
    """Positions [j_lo, j_hi) of the row at ``start`` := ``value``."""
    if j_hi <= j_lo:
        return
    with parallel_loops(b.module) as loop_id, \
            for_range_dynamic(b, i64(j_lo), i64(j_hi), "fill", loop_id=loop_hints(b.module, base=loop_id)) as j:
        _store(b, out, start, j, value)


def _emit_row(b, out, start, row: _Row, value, operand) -> None:
    """A row on the operand's grid: ``operand(q)`` generates its element q
    (an i64 value of the index)."""
    s = row.s
    _fill(b, out, start, 0, row.j_lo, value)
    if row.q_end > row.q_first:
        if s <= MAX_GROUP:
            with parallel_loops(b.module) as loop_id, \
                    for_range_dynamic(b, i64(row.q_first), i64(row.q_end), "group",
                                      loop_id=loop_hints(b.module, base=loop_id)) as q:
                j = _position(b, row, q)
                _store(b, out, start, j, operand(q))
                for r in range(1, s):
                    _store(b, out, start, b.add(j, i64(r), flags=["nsw", "nuw"]), value)
        else:
            _fill(b, out, start, row.j_lo, row.j_hi, value)
            _scatter(b, out, start, row, row.q_first, row.q_end, operand)
    _fill(b, out, start, row.j_hi, row.extent, value)
    _scatter(b, out, start, row, row.q_end, row.q_stray, operand)


def _scatter(b, out, start, row: _Row, q_lo: int, q_hi: int, operand) -> None:
    """Operand elements [q_lo, q_hi) to their positions ``lo + q * s``."""
    if q_hi <= q_lo:
        return
    with parallel_loops(b.module) as loop_id, \
            for_range_dynamic(b, i64(q_lo), i64(q_hi), "stray", loop_id=loop_hints(b.module, base=loop_id)) as q:
        _store(b, out, start, _position(b, row, q), operand(q))


def _position(b, row: _Row, q):
    """Where operand element ``q`` lands in the row: ``lo + q * s``."""
    return b.add(b.mul(q, i64(row.s), flags=["nsw", "nuw"]), i64(row.lo), flags=["nsw"])


#: The kernel of a pad with interior padding.
PHASED = KernelCandidate("pad.phased", emit_pad, _applies, shareable=True)
