"""The loop kernel: one loop nest over the result, writing the elemental
generator at every index (XLA's ``LoopEmitter`` over an elemental IR
emitter), or for a concatenation along a major dimension one loop nest per
operand (as XLA's concatenate emitter).  It is the last candidate of every opcode (``kernel_choice.py``).

Big kernels are split along the outermost dimension into tasks; a kernel that
reads an input through a transpose walks tiles (:func:`transpose_tiles`); a
big result is written with non-temporal stores (``codegen/nontemporal.py``);
loops evaluating long math run several vector iterations side by side
(:data:`MATH_INTERLEAVE`).
"""
from __future__ import annotations

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...hlo.opcodes import Trait, has_trait, with_trait
from ...shape import Shape, strides
from .. import nontemporal
from ..emitter import (MAX_TASKS, PARALLEL_MIN_WORK, TASK_MIN_WORK, KernelContext, parallel_parts, task_chunks,
                       task_range, work_estimate)
from ..hoisting import row_scratch_dims
from ..ir_array import Index, IrArray, i64
from ..kernel_choice import KernelCandidate
from ..loops import (counted_loop, fill_padding, loop_hints, loop_nest, loop_nest_versions, parallel_loops,
                     scalar_nest, small_once, SHORT_INNER_MAX, tiled_loop_nest)


def emit_loop_kernel(ctx: KernelContext) -> None:
    """The default kernel: one loop nest over the result writing the elemental generator.

    Big kernels are split along the outermost dimension of the result into
    tasks run through ``parallel_for`` (see :meth:`KernelContext.parallel_for`).
    """
    inst = ctx.inst
    if _concat_parts_why(inst) is None:
        _emit_parts(ctx)
        return
    outputs = ctx.output_arrays()
    for out in outputs:
        fill_padding(ctx.b, out)
    loop_shape = outputs[0].shape
    if loop_shape.element_count() == 0:
        return
    order = [d for d in reversed(loop_shape.layout.minor_to_major) if loop_shape.dimensions[d] != 1]
    work = work_estimate(inst)
    if work < PARALLEL_MIN_WORK or not order:
        _emit_loop_body(ctx, loop_shape, None)
        return
    tiles = transpose_tiles(inst, loop_shape)
    outer = loop_shape.dimensions[order[0]]
    if tiles and order[0] in tiles:
        outer = -(-outer // tiles[order[0]])  # tasks take whole rows of tiles
    n_tasks = max(1, min(outer, MAX_TASKS, work // TASK_MIN_WORK))
    chunk = -(-outer // n_tasks)
    n_tasks = -(-outer // chunk)
    if n_tasks == 1:
        _emit_loop_body(ctx, loop_shape, None)
        return

    def task(tctx: KernelContext, i: ir.Value) -> None:
        _emit_loop_body(tctx, loop_shape, task_range(tctx.b, i, chunk, outer),
                        min_outer=outer - (n_tasks - 1) * chunk)

    ctx.parallel_for(n_tasks, task)




#: Tile edge (elements) for kernels that read an input transposed.
TRANSPOSE_TILE = 64


def transpose_tiles(inst: HloInstruction, loop_shape: Shape) -> dict | None:
    """Tiles for a kernel that reads an input through a transpose whose minor
    dimension is not the output's: {output minor dim: T, the dim the input's
    minor dim becomes: T}; None otherwise."""
    insts = inst.attrs["calls"].instructions if inst.opcode == "fusion" else [inst]
    out_minor = next((d for d in loop_shape.layout.minor_to_major if loop_shape.dimensions[d] != 1), None)
    for t in insts:
        if t.opcode != "transpose" or t.shape.dimensions != loop_shape.dimensions:
            continue
        src = t.operands[0].shape
        src_minor = next((d for d in src.layout.minor_to_major if src.dimensions[d] != 1), None)
        if src_minor is None or out_minor is None:
            continue
        perm = t.attrs["dimensions"]
        b = perm.index(src_minor)  # the output dimension the input's minor one becomes
        if b != out_minor and min(loop_shape.dimensions[b], loop_shape.dimensions[out_minor]) > TRANSPOSE_TILE:
            return {out_minor: TRANSPOSE_TILE, b: TRANSPOSE_TILE}
    return None


def _emit_loop_body(ctx: KernelContext, loop_shape: Shape, outer_range, min_outer: int | None = None) -> None:
    """The loop nest over ``loop_shape`` (its outermost dimension restricted
    to ``outer_range``, which spans at least ``min_outer`` indices)."""
    outputs = ctx.output_arrays()
    tiles = transpose_tiles(ctx.inst, loop_shape)
    if not tiles and ctx.me.nontemporal and nontemporal.eligible(ctx.inst, outputs, loop_shape):
        _emit_nontemporal_versions(ctx, loop_shape, outer_range, outputs[0], min_outer)
        return
    _emit_loop_nest(ctx, loop_shape, outer_range, tiles, outputs, min_outer)


def _emit_nontemporal_versions(ctx: KernelContext, loop_shape: Shape, outer_range, out: IrArray,
                               min_outer: int | None = None) -> None:
    """A big result's loop nest whose inner loop, when the result is 64-byte
    aligned, writes with non-temporal stores (see codegen/nontemporal.py), and
    otherwise with plain ones.  Only the inner loop is duplicated: the row
    reductions hoisted in front of it are emitted once.  When the module's
    results are promised aligned (``ModuleEmitter.aligned_results``) there is
    only the non-temporal version (softmax compiles in ~10% less time)."""
    b = ctx.b
    gens = [ctx.operand_generator(k) for k in range(len(ctx.inst.operands))]
    gen = ctx.em.make_generator(ctx.inst, gens)
    writes = [nontemporal.write, _write]
    prologues = [lambda bb: nontemporal.assume_aligned(bb, out), None]
    cond = lambda bb, row: nontemporal.row_aligned(bb, out, row)   # noqa: E731
    if ctx.me.aligned_results:
        prologues, cond = prologues[:1], None
        ctx.me.assumed_alignment = True
    with parallel_loops(b.module) as loop_id:
        # Not unrolled: a memory-bound loop gains nothing from it, and the two
        # versions compile in less time (softmax 57 -> 45 ms, same speed).
        inner = _math_hints(b.module, ctx.inst, loop_shape, min_outer, loop_id, unrolled=False)
        for k, index in loop_nest_versions(b, loop_shape, cond, prologues, outer_range=outer_range,
                                           loop_id=loop_id, inner_loop_id=inner):
            writes[k](b, out, index, gen(index))


def _write(b, out: IrArray, index, value) -> None:
    out.write(b, index, value)


#: Opcodes whose vectorised code is a long dependent chain per vector
#: (``Trait.TRANSCENDENTAL``)
#: (polynomials, range reduction): a loop evaluating them runs
#: ``MATH_INTERLEAVE`` vector iterations side by side, so the FMA pipes see
#: independent work (the tanh chain 16M on 2 threads 3.1 -> 2.75 ms).
LONG_MATH = with_trait(Trait.TRANSCENDENTAL)
MATH_INTERLEAVE = 4
#: (Not in a kernel of the entry of fewer than ``loops.SMALL_ONCE_ELEMENTS``:
#: run once per call, the side-by-side iterations save it nanoseconds, and
#: the wide vector they are asked as costs LLVM more than its own choice: an
#: f32[50] ``log`` of rng_samplers took 33 ms of LLVM forced to 32 lanes,
#: 24 ms left to the vectoriser's cost model.)


def _math_interleave(inst: HloInstruction) -> int | None:
    """``MATH_INTERLEAVE`` when loop kernel ``inst`` evaluates ``LONG_MATH`` in
    its output loop, else None.  Math that only reductions read, or that a
    row scratch holds (softmax's exp), runs in loops of its own, which
    interleave already."""
    if inst.opcode != "fusion":
        return MATH_INTERLEAVE if inst.opcode in LONG_MATH else None
    comp = inst.attrs["calls"]
    for i in comp.instructions:
        if i.opcode in LONG_MATH and row_scratch_dims(i) is None and \
                (i is comp.root or any(u.opcode != "reduce" for u in i.users)):
            return MATH_INTERLEAVE
    return None


def _math_hints(module: ir.Module, inst: HloInstruction, loop_shape: Shape, min_outer, loop_id,
                trip_known: bool = True, unrolled: bool = True, runs_once: bool = False):
    """``loop_id`` with the hints of ``_math_interleave`` when ``inst`` asks for
    them (as one wide vector when the inner loop's trip count is known: not
    when the loop is tiled or its count a run-time value), and not unrolled
    when ``unrolled`` is False."""
    interleave = None if runs_once and small_once(loop_shape) else _math_interleave(inst)
    if not interleave and unrolled:
        return loop_id
    order = [d for d in reversed(loop_shape.layout.minor_to_major) if loop_shape.dimensions[d] != 1]
    trip = None
    if order and trip_known:
        trip = min_outer if len(order) == 1 and min_outer is not None else loop_shape.dimensions[order[-1]]
        if len(order) >= 2 and trip <= SHORT_INNER_MAX:
            # Unrolled completely (``loops.loop_nest``): the loop around it is vectorised.
            trip = loop_shape.dimensions[order[-2]]
    element_bytes = inst.shape.element_type.byte_size if inst.shape.is_array else None
    return loop_hints(module, interleave=interleave, base=loop_id, element_bytes=element_bytes,
                      trip_count=trip)


def _emit_loop_nest(ctx: KernelContext, loop_shape: Shape, outer_range, tiles, outputs,
                    min_outer: int | None = None) -> None:
    b = ctx.b
    gens = [ctx.operand_generator(k) for k in range(len(ctx.inst.operands))]
    gen = ctx.em.make_generator(ctx.inst, gens)
    count = ctx.site_element_count()
    if count is not None:
        # Shared by sites of several sizes: the one loop of the flat map, as
        # long as this site's count (``size_generic``).
        if tiles or outer_range is not None or not _flat_map(ctx.inst, loop_shape):
            raise AssertionError(f"{ctx.inst.name}: a size-generic kernel is a flat map on one thread")
        flat = Shape(loop_shape.element_type, [loop_shape.element_count()]).with_layout((0,))
    else:
        flat = None if tiles else flat_loop_shape(ctx.inst, loop_shape, outer_range is not None)
    nest_shape = flat or loop_shape
    with parallel_loops(b.module) as loop_id:
        loop_id = _math_hints(b.module, ctx.inst, nest_shape, min_outer, loop_id,
                              runs_once=ctx.runs_once and count is None,
                              trip_known=not tiles and count is None)
        if count is not None:
            nest = counted_loop(b, count, flat, loop_id=loop_id)
        elif tiles:
            nest = tiled_loop_nest(b, loop_shape, tiles, outer_range=outer_range, loop_id=loop_id)
        else:
            nest = loop_nest(b, nest_shape, outer_range=outer_range, loop_id=loop_id,
                             scalar=outer_range is None and scalar_nest(nest_shape, ctx.runs_once))
        with nest as index:
            if flat is not None:
                index = _unflattened(ctx, index, loop_shape)
            value = gen(index)
            values = value if isinstance(value, tuple) else (value,)
            for out, v in zip(outputs, values):
                out.write(b, index, v)


# -- an elementwise kernel as one flat loop ------------------------------------------

def flat_loop_shape(inst: HloInstruction, loop_shape: Shape, split: bool) -> Shape | None:
    """The loop shape that walks ``loop_shape``'s elements in memory order as
    one loop (``[n]``), or two when the kernel is split into tasks along its
    outermost dimension (``[outer, rest]``), when kernel ``inst`` is a pure
    elementwise map: every element it reads and writes is at the same linear
    offset in an unpadded buffer of ``loop_shape``'s dimensions and layout (or
    a scalar); None otherwise, or when the nest is one loop already.

    A nest of loops over a dense elementwise kernel is work for LLVM per loop
    (its vectoriser, induction-variable and invariant-motion passes) and short
    inner loops for the CPU (XLA's GPU loop emitter walks such a fusion by one
    linear index too)."""
    order = [d for d in reversed(loop_shape.layout.minor_to_major) if loop_shape.dimensions[d] != 1]
    if len(order) < 2 + split or loop_shape.layout.is_padded or not _flat_map(inst, loop_shape, uniform=True):
        return None
    dims = [loop_shape.dimensions[d] for d in order]
    if split:
        dims = [dims[0], loop_shape.element_count() // dims[0]]
    else:
        dims = [loop_shape.element_count()]
    return Shape(loop_shape.element_type, dims).with_layout(tuple(range(len(dims) - 1, -1, -1)))


def size_generic(inst: HloInstruction) -> bool:
    """Whether loop kernel ``inst`` is emitted once for sites of every size
    (``KernelCandidate.size_generic``, ``kernel_sharing``): a flat map (see
    :func:`flat_loop_shape`) of an unpadded result of at least one element,
    run on one thread (below PARALLEL_MIN_WORK: no tasks, and too small for
    the non-temporal version), walked as one loop of the site's count."""
    shape = inst.shape.leaves()[0] if inst.shape.is_tuple else inst.shape
    if not shape.is_array or shape.rank == 0 or shape.element_count() == 0 or shape.layout.is_padded:
        return False
    if work_estimate(inst) >= PARALLEL_MIN_WORK or _concat_parts_why(inst) is None:
        return False
    return _flat_map(inst, shape)


def _same_buffer_shape(shape: Shape, loop_shape: Shape) -> bool:
    """A scalar, or an array of ``loop_shape``'s dimensions and layout (the
    test ``Index.linear_for`` makes; ``loop_shape`` is unpadded)."""
    return shape.is_array and (shape.rank == 0 or (shape.dimensions == loop_shape.dimensions
                                                   and shape.layout == loop_shape.layout))


def _flat_map(inst: HloInstruction, loop_shape: Shape, uniform: bool = False) -> bool:
    """Whether kernel ``inst`` reads and writes every array at its own linear
    offset (see :func:`flat_loop_shape`).  With ``uniform``, a fusion may also
    compute single-element values from its other operands (a slice of a
    ``u32[4]`` of rotation counts, reshaped to a scalar: jax's Threefry) and
    broadcast them: the same for every element, read at constant offsets."""
    if not all(_same_buffer_shape(s, loop_shape) and s.rank for s in inst.shape.leaves()):
        return False
    if inst.opcode != "fusion":
        return all(_same_buffer_shape(o.shape, loop_shape) for o in inst.operands) and \
            has_trait(inst.opcode, Trait.ELEMENTWISE)
    if not uniform and not all(_same_buffer_shape(o.shape, loop_shape) for o in inst.operands):
        return False
    # Each fused value is mapped (of the loop's shape, read at the element's
    # offset) or single (a scalar; with ``uniform``, any value of one element,
    # the same for every element of the loop); with ``uniform``, a parameter
    # of another shape is small: only single values may read it.
    mapped, single, small = set(), set(), set()

    def one(shape: Shape) -> bool:
        return shape.element_count() <= 1 if uniform else shape.rank == 0

    for i in inst.attrs["calls"].instructions:     # operands before users
        shape, key = i.shape, id(i)
        if i.opcode == "tuple":
            continue
        if not shape.is_array:
            return False
        of_loop = shape.rank and _same_buffer_shape(shape, loop_shape)
        if i.opcode == "parameter":
            if of_loop:
                mapped.add(key)
            elif one(shape):
                single.add(key)
            elif uniform:
                small.add(key)
            else:
                return False
            continue
        ops = [id(o) for o in i.operands]
        if of_loop and (i.opcode == "broadcast" and ops[0] in single or has_trait(i.opcode, Trait.ELEMENTWISE)
                        and all(o in mapped or o in single for o in ops)):
            mapped.add(key)
        elif one(shape) and (i.opcode == "constant" or all(o in single or o in small for o in ops) and (
                has_trait(i.opcode, Trait.ELEMENTWISE) or uniform and has_trait(i.opcode, Trait.DATA_MOVEMENT))):
            single.add(key)
        else:
            return False
    root = inst.attrs["calls"].root
    return all(id(r) in mapped for r in (root.operands if root.opcode == "tuple" else [root]))


def _unflattened(ctx: KernelContext, index: Index, loop_shape: Shape) -> Index:
    """``index`` of the flat loop shape as an index of ``loop_shape``: its
    linear offset is the same, its components (which a flat map does not read:
    LLVM drops them) derived from that offset."""
    b = ctx.b
    point = ctx.me.context.point(index)
    st = strides(loop_shape)
    multi, rest = [i64(0)] * loop_shape.rank, index.linear
    for d in reversed(loop_shape.layout.minor_to_major):
        if loop_shape.dimensions[d] != 1:
            multi[d] = b.udiv(rest, i64(st[d])) if st[d] != 1 else rest
            rest = b.urem(rest, i64(st[d])) if st[d] != 1 else i64(0)
    depth = len(point.stack)
    return ctx.me.context.place(Index(multi, index.linear, loop_shape), [depth] * loop_shape.rank,
                                 point.stack, point.avail)


def _applies(inst: HloInstruction) -> str | None:
    if any(not s.is_array for s in inst.shape.leaves()):
        return f"{inst.shape} results are not arrays"
    return None


# -- a concatenation as one loop nest per operand ------------------------------------

def _concat_root(inst: HloInstruction) -> HloInstruction:
    return inst.attrs["calls"].root if inst.opcode == "fusion" else inst


def _concat_parts_why(inst: HloInstruction) -> str | None:
    """Why ``inst`` is not a concatenation (or a loop fusion rooted at one)
    along a dimension other than the result's minor-most one, or None: then
    one loop nest per operand writes its box of the result (``_emit_parts``).
    The one loop nest over the result would choose the operand per element
    in its inner loop (a chain of branches: nothing vectorises; an im2col
    [8,32,32,9,64] of bf16 ran ~3 ns per element)."""
    root = _concat_root(inst)
    if root.opcode != "concatenate" or not inst.shape.is_array or inst.shape.layout.is_padded:
        return "not a concatenation (or a loop fusion rooted at one) with an unpadded array result"
    (dim,) = root.attrs["dimensions"]
    minor = [d for d in inst.shape.layout.minor_to_major if inst.shape.dimensions[d] != 1]
    if not minor or minor[0] == dim:
        return "concatenated along the minor-most dimension (the loop kernel reads runs of one operand)"
    return None


def _emit_parts(ctx: KernelContext) -> None:
    """Per operand of the concatenation, a loop nest over its box of the result
    (in the result's memory order), split along its outermost dimension into tasks."""
    inst, root = ctx.inst, _concat_root(ctx.inst)
    (dim,) = root.attrs["dimensions"]
    out_shape = ctx.output_arrays()[0].shape
    order = [d for d in reversed(out_shape.layout.minor_to_major) if out_shape.dimensions[d] != 1]
    tasks, offset = [], 0           # (operand, offset along dim, box shape, outer extent, chunk, count)
    for k, o in enumerate(root.operands):
        n = o.shape.dimensions[dim]
        box = Shape(inst.shape.element_type, o.shape.dimensions).with_layout(out_shape.layout.minor_to_major)
        if box.element_count():
            outer = box.dimensions[next(d for d in order if box.dimensions[d] != 1)] \
                if any(box.dimensions[d] != 1 for d in order) else 1
            tasks.append((k, offset, box, outer) + task_chunks(outer, box.element_count()))
        offset += n

    def part_generators(tctx: KernelContext) -> list:
        gens = [tctx.operand_generator(k) for k in range(len(inst.operands))]
        if inst.opcode != "fusion":
            return gens
        every = tctx.em.instruction_generators(inst.attrs["calls"], gens)
        return [every[id(o)] for o in root.operands]

    def emit(tctx: KernelContext, part, lo_hi) -> None:
        b = tctx.b
        k, off, box, outer, _chunk, _count = part
        gen = part_generators(tctx)[k]
        (out,) = tctx.output_arrays()
        # Not unrolled: a copy gains nothing from it (as the non-temporal
        # loops above), and LLVM emits less code per part.
        with parallel_loops(b.module) as loop_id, \
                loop_nest(b, box, outer_range=lo_hi, loop_id=loop_hints(b.module, base=loop_id)) as index:
            multi = list(index.multi)
            multi[dim] = b.add(multi[dim], i64(off)) if off else multi[dim]
            out.write(b, Index(multi), gen(index))

    fill_padding(ctx.b, ctx.output_arrays()[0])
    total = sum(t[5] for t in tasks)
    if work_estimate(inst) < PARALLEL_MIN_WORK or total == 1:
        for part in tasks:
            emit(ctx, part, None)
        return

    def task(tctx: KernelContext, p: int, i: ir.Value) -> None:
        part = tasks[p]
        emit(tctx, part, task_range(tctx.b, i, part[4], part[3]) if part[5] > 1 else None)

    parallel_parts(ctx, [t[5] for t in tasks], task)


def _once(inst: HloInstruction) -> bool:
    """Whether the kernel of ``inst`` is emitted for running once in the entry
    (``small_once``, ``scalar_nest``: an array of its result is small)."""
    return any(leaf.is_array and small_once(leaf) for leaf in inst.shape.leaves())


#: The default kernel, the last candidate of every opcode.
LOOP = KernelCandidate("loop", emit_loop_kernel, _applies, shareable=True, size_generic=size_generic, once=_once)
