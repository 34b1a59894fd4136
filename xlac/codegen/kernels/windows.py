"""Windowed reductions: ``reduce-window`` (elemental) and ``select-and-scatter`` (kernel).

Both slide a window (``window={size=... stride=... pad=... lhs_dilate=...
rhs_dilate=...}``, see :mod:`xlac.hlo.window`) over a base array.  Along each
dimension, window position ``k`` of output position ``o`` reads base index
``(o * stride - pad_low + k * window_dilation) / base_dilation`` when that is a
whole number inside the base; padding and the holes of base dilation read
nothing — they are skipped, so the result is the reducer folded from the init
value over the real elements only (as XLA's evaluator and CPU backend do).

``reduce-window`` (spec: *ReduceWindow*), variadic too: an output element
folds the reducer over its window, window dimensions major-to-minor in the
input's layout, accumulators on the stack.

``select-and-scatter`` (spec: *SelectAndScatter*): the output starts as
``init_value``; then for every source element, in row-major order, the window
is scanned in row-major order; the first real element is selected and a later
one replaces it when ``select(selected, candidate)`` is false (so ties keep the
first, for ``GE``); finally ``output[selected] = scatter(output[selected],
source)``.  A window with no real element scatters nothing.
"""
from __future__ import annotations

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...hlo.window import window_of
from ...passes.expanders import narrow_float_reducer
from ...shape import F32, PRED
from .. import scalar_ops, types
from ..elemental import ElementalEmitter
from ..emitter import KernelContext
from ..ir_array import I64, Index, scalar_index
from ..loops import FULL_UNROLL_MAX, fill_padding, for_range, full_unroll_hints, loop_nest
from ..kernel_choice import KernelCandidate
from .convolution import spatial_position

_I1 = ir.IntType(1)


def window_loops(b: ir.IRBuilder, window, out_multi, base_sizes, out_sizes, order, body):
    """Nested loops over the window positions (dimensions in ``order``); calls
    ``body(base_multi)`` for each position inside the base, guarded by branches
    where a position can fall in padding or a dilation hole."""
    multi = [None] * len(window)

    def level(j):
        if j == len(order):
            body(list(multi))
            return
        d = order[j]
        wd = window[d]
        if wd.size == 1 and wd.stride == 1 and wd.base_dilation == 1 and not wd.padding_low \
                and out_sizes[d] <= base_sizes[d]:
            multi[d] = out_multi[d]  # the identity window along this dimension
            level(j + 1)
            return
        # Short window loops unrolled: the loop around them then vectorises.
        hints = full_unroll_hints(b.module) if wd.size <= FULL_UNROLL_MAX else None
        with for_range(b, wd.size, f"win{d}", loop_id=hints) as k:
            pos, ok = spatial_position(b, out_multi[d], k, wd, base_sizes[d], out_sizes[d])
            multi[d] = pos
            if ok is None:
                level(j + 1)
            else:
                with b.if_then(ok):
                    level(j + 1)

    level(0)


def _layout_order(shape):
    return list(reversed(shape.layout.minor_to_major))


def narrow_window_reducer(comp) -> str | None:
    """``add``, ``multiply``, ``maximum`` or ``minimum`` when ``comp`` is that op
    of its two parameters on a narrow float (bf16, f16, f8), else None: a
    ``reduce-window`` by it accumulates in f32 and rounds each result once, as
    the evaluator's windows do (max and min give the same values either way;
    jax's bf16 ``cumsum`` under XLA:CPU is nearer this than a sum rounded at
    every step).  ``reduce`` keeps XLA's rounding at every step for add and
    multiply (``op-expander`` widens only its max and min:
    ``expanders.narrow_max_min_reducer``)."""
    return narrow_float_reducer(comp, ("add", "multiply", "maximum", "minimum"))


def reduce_window_generator(em: ElementalEmitter, inst: HloInstruction, gens):
    n = len(gens) // 2
    input_gens, init_gens = gens[:n], gens[n:]
    in_shape = inst.operands[0].shape
    window = window_of(inst.attrs)
    elem_types = [o.shape.element_type for o in inst.operands[:n]]
    reducer = inst.attrs["to_apply"]
    out_sizes = (inst.shape.tuple_shapes[0] if n > 1 else inst.shape).dimensions
    empty = any(wd.size == 0 for wd in window) or 0 in in_shape.dimensions
    order = _layout_order(in_shape)

    # A narrow float window accumulates in f32 and rounds once (f16 widened
    # with integer operations: ``scalar_ops.NARROWED_BY_LLVM``).
    wide = narrow_window_reducer(reducer) if n == 1 else None
    acc_types = [F32] if wide else elem_types

    def convert(v, src, dst):
        if src is dst:
            return v
        if dst is F32:
            return scalar_ops.widen_to_f32(em.b, v, src, fpext=False)
        return scalar_ops.emit_elementwise(em.b, "convert", [v], [src], dst)

    def gen(index: Index):
        b = em.b
        accs = [em.alloca(pt, "rw.acc") for pt in acc_types]
        for acc, g, pt, at in zip(accs, init_gens, elem_types, acc_types):
            b.store(convert(g(scalar_index()), pt, at), acc)

        def body(base_multi):
            idx = Index(base_multi)
            current = [b.load(a) for a in accs]
            inputs = [g(idx) for g in input_gens]
            if wide:
                x = convert(inputs[0], elem_types[0], F32)
                out = (scalar_ops.emit_elementwise(b, wide, [current[0], x], [F32, F32], F32),)
            else:
                out = em.emit_scalar_computation(reducer, current + inputs)
                out = out if isinstance(out, tuple) else (out,)
            for a, v in zip(accs, out):
                b.store(v, a)

        if not empty:
            if in_shape.rank == 0:
                body([])
            else:
                window_loops(b, window, index.multi, in_shape.dimensions, out_sizes, order, body)
        values = tuple(convert(b.load(a), at, pt) for a, at, pt in zip(accs, acc_types, elem_types))
        return values if n > 1 else values[0]
    return gen


def _row_major_loops(b: ir.IRBuilder, sizes, body, name="s"):
    multi = [None] * len(sizes)

    def level(d):
        if d == len(sizes):
            body(list(multi))
            return
        with for_range(b, sizes[d], f"{name}{d}") as iv:
            multi[d] = iv
            level(d + 1)
    level(0)


def _select_and_scatter(ctx: KernelContext) -> None:
    inst, b, em = ctx.inst, ctx.b, ctx.em
    operand = inst.operands[0].shape
    source = inst.operands[1].shape
    pt = operand.element_type
    window = window_of(inst.attrs)
    select, scatter = inst.attrs["select"], inst.attrs["scatter"]
    (out,) = ctx.output_arrays()
    g_operand = ctx.operand_generator(0)
    g_source = ctx.operand_generator(1)
    g_init = ctx.operand_generator(2)

    fill_padding(b, out)
    if out.shape.element_count() == 0:
        return
    init = g_init(scalar_index())
    with loop_nest(b, out.shape) as index:
        out.write(b, index, init)
    if source.element_count() == 0 or any(wd.size == 0 for wd in window):
        return
    have = em.alloca(PRED, "sas.have")
    sel_val = em.alloca(pt, "sas.value")
    sel_pos = [em.alloca_builder.alloca(I64, name=f"sas.pos{d}") for d in range(operand.rank)]

    def per_source(src_multi):
        b.store(ir.Constant(_I1, 0), have)
        b.store(types.constant(pt, 0), sel_val)

        def candidate(base_multi):
            value = g_operand(Index(base_multi))
            had = b.load(have)

            def replaces():
                keep = em.emit_scalar_computation(select, [b.load(sel_val), value])
                return b.not_(keep)
            take = em.conditional_value(had, replaces, lambda: ir.Constant(_I1, 1), _I1)
            with b.if_then(take):
                b.store(value, sel_val)
                for p, x in zip(sel_pos, base_multi):
                    b.store(x, p)
                b.store(ir.Constant(_I1, 1), have)

        if operand.rank == 0:
            candidate([])
        else:
            window_loops(b, window, src_multi, operand.dimensions, source.dimensions,
                         list(range(operand.rank)), candidate)
        with b.if_then(b.load(have)):
            target = Index([b.load(p) for p in sel_pos])
            current = out.read(b, target)
            update = em.emit_scalar_computation(scatter, [current, g_source(Index(list(src_multi)))])
            out.write(b, Index(list(target.multi)), update)

    _row_major_loops(b, source.dimensions, per_source)


#: The kernel candidates of this module (``kernels.register_all``).
SELECT_AND_SCATTER = KernelCandidate("select-and-scatter", _select_and_scatter)
