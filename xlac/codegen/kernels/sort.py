"""``sort`` and ``topk``: a stable merge sort of each 1-D slice.

Each slice along the sorted dimension is gathered into dense scratch copies
(one per operand), then a permutation of ``i32`` positions is sorted (a
one-operand sort moves its values themselves instead; one of integers by
their own order is a radix sort, :func:`emit_radix_sort`): runs of
:data:`RUN` elements by insertion sort, then bottom-up merge passes that
ping-pong between two permutation buffers — O(n log n) comparisons, and
stable: an element moves before an earlier one only when the comparator says
it is strictly less (``comparator(later, earlier)`` is true).  Finally every
operand's slice is written to its result through the permutation.  So the sort
is stable whether or not ``is_stable`` asks for it.

The comparator ``to_apply`` (``2 * N`` scalar parameters: element ``i`` and
``j`` of each operand in turn) is emitted inline with
``emit_scalar_computation``.

``topk`` (``k``, ``largest``): the same sort of each row of the last dimension
with the comparator XLA uses for it, a total-order ``GT`` (``LT`` when
``largest=false``) — so NaN sorts above +inf and +0 above -0 — keeping ties in
index order; the first ``k`` values and their ``s32`` indices are written.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...shape import PRED, S32, PrimitiveType as PT
from .. import scalar_ops, types

from ..emitter import task_range
from ..ir_array import Index, i64
from ..loops import for_range, loop_nest
from ..kernel_choice import KernelCandidate
from ._util import I32, I64, PTR, ScratchPlan, alloca_var, copy_array, dyn_range, fill_padding, load, \
    store

#: Length of the runs sorted by insertion sort before merging.
RUN = 16


def _i32(v: int) -> ir.Constant:
    return ir.Constant(I32, int(v))


def _merge_passes(n: int) -> int:
    passes, width = 0, RUN
    while width < n:
        passes, width = passes + 1, width * 2
    return passes


def emit_sort_permutation(ctx, n: int, perm: ir.Value, tmp: ir.Value, less, pt: PT = S32,
                          first=None) -> ir.Value:
    """Stably sort ``perm[0:n]`` with ``less(a, b) -> i1`` on its items;
    returns the buffer (``perm`` or ``tmp``) holding the result.  The items
    are i32 positions initialised here to 0..n-1, or with ``first(j)`` the
    ``j``-th item, of element type ``pt`` (the values of a one-operand sort,
    moved themselves: no loads through positions).  ``n`` >= 1 is static."""
    b = ctx.b
    with for_range(b, n, "perm") as j:
        store(b, b.trunc(j, I32) if first is None else first(j), perm, j, pt)
    if n == 1:
        return perm

    # 1. Insertion sort of each run of RUN elements.
    runs = (n + RUN - 1) // RUN
    j_slot = ctx.alloca_builder.alloca(I32, name="ins.j")
    with for_range(b, runs, "run") as r:
        start = b.trunc(b.mul(r, i64(RUN)), I32)
        end = b.add(start, _i32(RUN))
        end = b.select(b.icmp_signed("<", end, _i32(n)), end, _i32(n))
        with dyn_range(b, b.add(start, _i32(1)), end, name="ins") as i:
            x = load(b, perm, i, pt)
            b.store(i, j_slot)
            head = b.append_basic_block("ins.head")
            check = b.append_basic_block("ins.check")
            shift = b.append_basic_block("ins.shift")
            place = b.append_basic_block("ins.place")
            b.branch(head)
            b.position_at_end(head)
            jv = b.load(j_slot)
            b.cbranch(b.icmp_signed(">", jv, start), check, place)
            b.position_at_end(check)
            prev = load(b, perm, b.sub(jv, _i32(1)), pt)
            b.cbranch(less(x, prev), shift, place)
            b.position_at_end(shift)
            store(b, prev, perm, jv, pt)
            b.store(b.sub(jv, _i32(1)), j_slot)
            b.branch(head)
            b.position_at_end(place)
            store(b, x, perm, b.load(j_slot), pt)

    passes = _merge_passes(n)
    if passes == 0:
        return perm

    # 2. Bottom-up merge passes, src -> dst, then swap.
    src_slot = alloca_var(ctx, PTR, perm, "merge.src")
    dst_slot = alloca_var(ctx, PTR, tmp, "merge.dst")
    width_slot = alloca_var(ctx, I32, _i32(RUN), "merge.width")
    i_slot = ctx.alloca_builder.alloca(I32, name="merge.i")
    j_slot = ctx.alloca_builder.alloca(I32, name="merge.j")
    with for_range(b, passes, "pass"):
        src, dst, width = b.load(src_slot), b.load(dst_slot), b.load(width_slot)
        two_width = b.shl(width, _i32(1))
        with dyn_range(b, _i32(0), _i32(n), step=two_width, name="merge") as lo:
            mid = b.add(lo, width)
            mid = b.select(b.icmp_signed("<", mid, _i32(n)), mid, _i32(n))
            hi = b.add(lo, two_width)
            hi = b.select(b.icmp_signed("<", hi, _i32(n)), hi, _i32(n))
            b.store(lo, i_slot)
            b.store(mid, j_slot)
            with dyn_range(b, lo, hi, name="out") as k:
                iv, jv = b.load(i_slot), b.load(j_slot)
                left = b.append_basic_block("take.left")
                right = b.append_basic_block("take.right")
                check_right = b.append_basic_block("check.right")
                compare = b.append_basic_block("compare")
                joined = b.append_basic_block("taken")
                b.cbranch(b.icmp_signed(">=", iv, mid), right, check_right)
                b.position_at_end(check_right)
                b.cbranch(b.icmp_signed(">=", jv, hi), left, compare)
                b.position_at_end(compare)
                lv, rv = load(b, src, iv, pt), load(b, src, jv, pt)
                b.cbranch(less(rv, lv), right, left)
                b.position_at_end(right)
                store(b, load(b, src, jv, pt), dst, k, pt)
                b.store(b.add(jv, _i32(1)), j_slot)
                b.branch(joined)
                b.position_at_end(left)
                store(b, load(b, src, iv, pt), dst, k, pt)
                b.store(b.add(iv, _i32(1)), i_slot)
                b.branch(joined)
                b.position_at_end(joined)
        b.store(dst, src_slot)
        b.store(src, dst_slot)
        b.store(two_width, width_slot)
    return tmp if passes % 2 else perm


def radix_direction(inst) -> str | None:
    """``"LT"`` or ``"GT"`` when ``inst`` sorts one integer operand (8 to 64
    bits) by ``ROOT compare(p0, p1)`` in that direction and its type's own
    order: then equal values are the same bits, so any stable order is the
    sorted one, and :func:`emit_radix_sort` needs no comparisons."""
    if len(inst.operands) != 1:
        return None
    pt = inst.operands[0].shape.element_type
    if not (pt.is_signed_int or pt.is_unsigned_int) or pt.bit_width not in (8, 16, 32, 64):
        return None
    comp = inst.attrs["to_apply"]
    root, params = comp.root, comp.parameters
    if root.opcode != "compare" or len(params) != 2 or list(root.operands) != params:
        return None
    direction, ctype = str(root.attrs.get("direction")), root.attrs.get("type")
    own = "SIGNED" if pt.is_signed_int else "UNSIGNED"
    if direction not in ("LT", "GT") or (ctype is not None and str(ctype) != own):
        return None
    return direction


#: Bits of a radix sort's digit: a pass per digit, least significant first.
RADIX_BITS = 8


def emit_radix_sort(ctx, n: int, src: ir.Value, tmp: ir.Value, pt: PT, descending: bool) -> ir.Value:
    """Sort the ``n`` integers of ``pt`` at ``src`` (``radix_direction``):
    one counting pass per RADIX_BITS digit of the key (the bits with the sign
    flipped for a signed type, all flipped for ``descending``), least
    significant first, each stable, ping-ponging with ``tmp``; returns the
    buffer holding the result.  A one-operand s32 sort of rows of 1,024
    took 1.5x XLA:CPU's time as a merge sort (its comparisons mispredicted)."""
    b = ctx.b
    bits, buckets = pt.bit_width, 1 << RADIX_BITS
    ity = ir.IntType(bits)
    flip = (1 << (bits - 1)) if pt.is_signed_int else 0
    if descending:
        flip ^= (1 << bits) - 1
    counts = ctx.alloca_builder.alloca(ir.ArrayType(I32, buckets), name="radix.counts")
    total = ctx.alloca_builder.alloca(I32, name="radix.total")

    def bucket(value, shift: int):
        key = b.xor(value, ir.Constant(ity, flip)) if flip else value
        digit = b.and_(b.lshr(key, ir.Constant(ity, shift)), ir.Constant(ity, buckets - 1))
        return b.gep(counts, [i64(0), b.zext(digit, ir.IntType(64)) if bits < 64 else digit], inbounds=True)

    bufs = (src, tmp)
    for p in range(bits // RADIX_BITS):
        source, dest = bufs[p % 2], bufs[(p + 1) % 2]
        with for_range(b, buckets, "radix.zero") as k:
            b.store(_i32(0), b.gep(counts, [i64(0), k], inbounds=True))
        with for_range(b, n, "radix.count") as j:
            slot = bucket(load(b, source, j, pt), p * RADIX_BITS)
            b.store(b.add(b.load(slot), _i32(1)), slot)
        b.store(_i32(0), total)
        with for_range(b, buckets, "radix.start") as k:      # counts -> first positions
            slot = b.gep(counts, [i64(0), k], inbounds=True)
            count, start = b.load(slot), b.load(total)
            b.store(start, slot)
            b.store(b.add(start, count), total)
        with for_range(b, n, "radix.move") as j:
            value = load(b, source, j, pt)
            slot = bucket(value, p * RADIX_BITS)
            at = b.load(slot)
            b.store(b.add(at, _i32(1)), slot)
            store(b, value, dest, b.zext(at, ir.IntType(64)), pt)
    return bufs[(bits // RADIX_BITS) % 2]


def _sort_plan(n: int, element_types: list, by_value: bool = False) -> ScratchPlan:
    """Scratch of a sort of ``n`` items: two buffers of i32 positions and a
    copy of each operand's slice, or (``by_value``: one operand, its values
    sorted themselves) two buffers of its values."""
    plan = ScratchPlan()
    size = element_types[0].byte_size if by_value else 4
    plan.add("perm", size * n)
    plan.add("tmp", size * n)
    if not by_value:
        for k, pt in enumerate(element_types):
            plan.add(f"key{k}", n * pt.byte_size)
    return plan


def _sort_dimension(inst) -> int:
    dims = inst.attrs.get("dimensions") or ()
    return int(dims[0]) if len(dims) else inst.operands[0].shape.rank - 1


def _sort_scratch(me, inst) -> int:
    shape = inst.operands[0].shape
    if shape.rank == 0:
        return 0
    n = shape.dimensions[_sort_dimension(inst)]
    return _sort_plan(n, [o.shape.element_type for o in inst.operands], len(inst.operands) == 1).size


def _key_loader(b, keys, element_types):
    def values_at(position):
        return [load(b, ptr, position, pt) for ptr, pt in zip(keys, element_types)]
    return values_at


def _emit_sort(ctx) -> None:
    inst, b = ctx.inst, ctx.b
    operands = inst.operands
    shape = operands[0].shape
    outs = ctx.output_arrays()
    if any(not o.shape.is_array for o in operands):
        raise UnsupportedError("sort", "operands must be arrays")
    for out in outs:
        fill_padding(b, out)
    if shape.element_count() == 0:
        return
    if shape.rank == 0:
        for k, out in enumerate(outs):
            copy_array(b, out, ctx.operand_generator(k))
        return
    dim = _sort_dimension(inst)
    n = shape.dimensions[dim]
    element_types = [o.shape.element_type for o in operands]
    # One operand: its values are sorted themselves (a third less time than
    # positions compared through loads of the values).
    by_value = len(operands) == 1
    plan = _sort_plan(n, element_types, by_value)
    scratch = ctx.scratch_pointer()
    perm, tmp = plan.pointer(b, scratch, "perm"), plan.pointer(b, scratch, "tmp")
    keys = [] if by_value else [plan.pointer(b, scratch, f"key{k}") for k in range(len(operands))]
    gens = [ctx.operand_generator(k) for k in range(len(operands))]
    comparator = inst.attrs["to_apply"]
    values_at = (lambda v: [v]) if by_value else _key_loader(b, keys, element_types)

    def less(x, y):
        args = []
        for a, c in zip(values_at(x), values_at(y)):
            args += [a, c]
        result = ctx.em.emit_scalar_computation(comparator, args)
        if isinstance(result, tuple):
            raise UnsupportedError("sort", "comparator returning a tuple")
        return result

    others = [d for d in range(shape.rank) if d != dim]
    with loop_nest(b, outs[0].shape, "s", dims=others) as index:
        base = list(index.multi)

        def at(j):
            multi = list(base)
            multi[dim] = j
            return Index(multi)

        radix = radix_direction(inst) if by_value else None
        if radix:
            with for_range(b, n, "gather") as j:
                store(b, gens[0](at(j)), perm, j, element_types[0])
            final = emit_radix_sort(ctx, n, perm, tmp, element_types[0], radix == "GT")
        elif by_value:
            final = emit_sort_permutation(ctx, n, perm, tmp, less, element_types[0],
                                          first=lambda j: gens[0](at(j)))
        else:
            with for_range(b, n, "gather") as j:
                idx = at(j)
                for g, key, pt in zip(gens, keys, element_types):
                    store(b, g(idx), key, j, pt)
            final = emit_sort_permutation(ctx, n, perm, tmp, less)
        with for_range(b, n, "scatter") as j:
            p = load(b, final, j, element_types[0] if by_value else S32)
            idx = at(j)
            for out, value in zip(outs, values_at(p)):
                out.write(b, idx, value)


# ----------------------------------------------------------------------------
# topk
# ----------------------------------------------------------------------------

def _topk_scratch(me, inst) -> int:
    shape = inst.operands[0].shape
    if shape.rank == 0:
        return 0
    return _sort_plan(shape.dimensions[-1], [shape.element_type]).size


def _topk_largest(inst) -> bool:
    v = inst.attrs.get("largest", True)
    return v if isinstance(v, bool) else str(v).lower() == "true"


def topk_compare(b, x, y, pt: PT, largest: bool) -> ir.Value:
    """``x`` before ``y``: total-order greater (or less) than."""
    attrs = {"direction": "GT" if largest else "LT"}
    if pt.is_float:
        attrs["type"] = "TOTALORDER"
    if pt.is_complex:
        raise UnsupportedError("topk", "complex numbers are unordered")
    return scalar_ops.emit_elementwise(b, "compare", [x, y], [pt, pt], PRED, attrs)


#: A top-k of at most this many elements is selected (:func:`_select_rows`):
#: each element is compared with the k-th best so far and only a better one
#: is inserted into the k kept in order, about n + k log(n/k) comparisons
#: and k^2 log(n/k) / 2 moves on unordered data, n k at worst (a row in
#: ascending order for the largest), against the merge sort's n log n.
#: 8 x 512 x 512 f32 on the 2-core EPYC: sorted, 94 ms for any k (30 ms
#: for ordered rows); selected, k = 8 3.3 ms (XLA:CPU's partial sort
#: 8.7), k = 64 19 ms (66 ordered; XLA:CPU 47), k = 128 42 (117 ordered).
SELECT_MAX_K = 64
#: Elements from which the rows of a selected top-k are shared among threads.
SELECT_PARALLEL_ELEMENTS = 1 << 16


def _emit_topk(ctx) -> None:
    inst, b = ctx.inst, ctx.b
    operand = inst.operands[0]
    shape = operand.shape
    values_out, indices_out = ctx.output_arrays()
    fill_padding(b, values_out)
    fill_padding(b, indices_out)
    if values_out.shape.element_count() == 0:
        return
    pt = shape.element_type
    last = shape.rank - 1
    n, k = shape.dimensions[last], values_out.shape.dimensions[last]
    largest = _topk_largest(inst)
    if k <= SELECT_MAX_K:
        rows = shape.element_count() // max(n, 1)
        outer = next((shape.dimensions[d] for d in reversed(shape.layout.minor_to_major)
                      if d != last and shape.dimensions[d] > 1), 1)
        if shape.element_count() < SELECT_PARALLEL_ELEMENTS or outer < 2 or rows < 2:
            _select_rows(ctx, n, k, largest, None)
        else:
            chunk = -(-outer // min(outer, 8))
            ctx.parallel_for(-(-outer // chunk), lambda tctx, i: _select_rows(
                tctx, n, k, largest, task_range(tctx.b, i, chunk, outer)))
        return
    plan = _sort_plan(n, [pt])
    scratch = ctx.scratch_pointer()
    perm, tmp = plan.pointer(b, scratch, "perm"), plan.pointer(b, scratch, "tmp")
    key = plan.pointer(b, scratch, "key0")
    gen = ctx.operand_generator(0)

    def less(x, y):
        return topk_compare(b, load(b, key, x, pt), load(b, key, y, pt), pt, largest)

    with loop_nest(b, values_out.shape, "t", dims=list(range(last))) as index:
        base = list(index.multi)

        def at(j):
            return Index(base[:last] + [j])

        with for_range(b, n, "gather") as j:
            store(b, gen(at(j)), key, j, pt)
        final = emit_sort_permutation(ctx, n, perm, tmp, less)
        with for_range(b, k, "emit") as j:
            p = load(b, final, j, S32)
            values_out.write(b, at(j), load(b, key, p, pt))
            indices_out.write(b, at(j), p)


def _select_rows(ctx, n: int, k: int, largest: bool, outer_range) -> None:
    """The top ``k`` of each row (of the rows in ``outer_range`` of the
    outermost dimension, or all) by selection: the best k so far are kept in
    order in two stack arrays; an element goes in only if it comes before
    the k-th (or fewer than k are kept), after every kept one it does not
    come before, so equal values keep their index order (the sort's
    stability)."""
    inst, b = ctx.inst, ctx.b
    shape = inst.operands[0].shape
    pt = shape.element_type
    last = shape.rank - 1
    values_out, indices_out = ctx.output_arrays()
    gen = ctx.operand_generator(0)
    vals = ctx.alloca_builder.alloca(types.memory_type(pt), size=k, name="topk.values")
    idxs = ctx.alloca_builder.alloca(I32, size=k, name="topk.indices")
    kept = ctx.alloca_builder.alloca(I64, name="topk.kept")
    pos = ctx.alloca_builder.alloca(I64, name="topk.pos")

    def before(x, y):
        return topk_compare(b, x, y, pt, largest)

    with loop_nest(b, values_out.shape, "t", dims=list(range(last)), outer_range=outer_range) as index:
        base = list(index.multi)
        b.store(i64(0), kept)
        with for_range(b, n, "select") as j:
            x = gen(Index(base[:last] + [j]))
            count = b.load(kept)
            full = b.icmp_signed("==", count, i64(k))
            # Full: only an element before the k-th goes in (the k-th drops out).
            # (selects, not and/or: an unfilled slot is undefined, its compare too)
            goes_in = b.select(full, before(x, load(b, vals, i64(k - 1), pt)), ir.Constant(ir.IntType(1), 1))
            with b.if_then(goes_in):
                b.store(b.select(full, i64(k - 1), count), pos)
                # Shift down the kept ones that x comes before.
                head = b.append_basic_block("topk.shift")
                body = b.append_basic_block("topk.move")
                done = b.append_basic_block("topk.place")
                b.branch(head)
                b.position_at_end(head)
                p = b.load(pos)
                prev = b.sub(p, i64(1))
                more = b.icmp_signed(">", p, i64(0))
                # p > 0 and x before vals[p-1]: vals[p-1] moves to p.
                move = b.select(more, before(x, load(b, vals, b.select(more, prev, i64(0)), pt)),
                                ir.Constant(ir.IntType(1), 0))
                b.cbranch(move, body, done)
                b.position_at_end(body)
                store(b, load(b, vals, prev, pt), vals, p, pt)
                store(b, load(b, idxs, prev, S32), idxs, p, S32)
                b.store(prev, pos)
                b.branch(head)
                b.position_at_end(done)
                p = b.load(pos)
                store(b, x, vals, p, pt)
                store(b, b.trunc(j, I32), idxs, p, S32)
                b.store(b.select(full, count, b.add(count, i64(1))), kept)
        with for_range(b, k, "emit") as j:
            at = Index(base[:last] + [j])
            values_out.write(b, at, load(b, vals, j, pt))
            indices_out.write(b, at, load(b, idxs, j, S32))


#: The kernel candidates of this module (``kernels.register_all``).
SORT = KernelCandidate("sort", _emit_sort, scratch_bytes=_sort_scratch)
TOPK = KernelCandidate("topk", _emit_topk, scratch_bytes=_topk_scratch)
