"""A dot's own code in its module: the GEMM with compile-time sizes and the
matrix-vector loops, run as tasks (``plan_dot`` decided how).

* **GEMM.**  The loop nest is ``gemm_task.emit_task``, the GEMM library's own,
  with every size, stride and block a compile-time constant; tiles reach the
  result through its layout (``gemm_kernel.ResultTiles``).  It runs what the
  library does not: operands computed inside the fusion, index groups that
  are not one stride, epilogues that change the element type.
* **Fused operands.**  A dot operand computed inside the fusion (a transpose,
  a negate, ... fused ahead of the dot) is read through its elemental
  generator while packing, so it is computed once per packing, not once per
  multiply.
* **Matrix-vector forms** (M or N is 1) do not pack: the vector is copied
  into a contiguous buffer, then each row is a vectorised dot product
  (contracting dimension unit-stride), or the columns are added up with
  vectorised axpys (rows unit-stride), or a scalar loop for other layouts.
"""
from __future__ import annotations

from llvmlite import ir

from ...shape import F32
from .. import types
from ..emitter import KernelContext, task_range
from ..gemm import (I1, Loop, MatrixView, add, axpy_contiguous, dot_contiguous_rows, intrinsic, pack_block,
                    pack_panel, read_element)
from ..gemm_kernel import ResultTiles, output_fusion_epilogue, run_grid, run_tasks
from ..gemm_task import COMPILE_TIME, GemmTask, TaskBuffers, emit_task, task_ranges
from ..ir_array import Index, IrArray, i64
from ..loops import loop_nest, parallel_loops
from ..scalar_ops import convert_value
from ..task_grid import Chosen, choose
from ._util import I8, PTR, fill_padding
from .dot_plan import DotPlan, dot_info, plan_dot, scratch_c_shape, the_dot

#: The byte the shared-B flags are cleared to (0: unpacked).  Tests set 1,
#: which reads as "being packed by another task", to run every task on its
#: own copy as contention would.
FLAG_FILL = 0


class DotOperands:
    """The dot's A, B (``MatrixView``: from buffers, or through the generators
    of operands computed in the fusion) and result (``tiles``), oriented as
    ``plan`` says, built in the function of ``ctx``."""

    def __init__(self, ctx: KernelContext, plan: DotPlan):
        inst = ctx.inst
        dot = the_dot(inst)
        info = dot_info(dot)
        b = ctx.b
        self.b = b
        epilogue = None
        if inst.opcode == "dot":
            arrays = [ctx.operand_array(0), ctx.operand_array(1)]
            dot_gens = [None, None]
        else:
            gens, epilogue = output_fusion_epilogue(ctx, dot)
            arrays, dot_gens = [], []
            for k in range(2):
                o = dot.operands[k]
                if o.opcode == "parameter":
                    arrays.append(ctx.operand_array(o.parameter_number))
                    dot_gens.append(None)
                else:
                    arrays.append(None)
                    dot_gens.append(gens[id(o)])
        ptrs = [a.ptr if a is not None else None for a in arrays]
        self.epilogue = epilogue
        ls, rs = (a.shape if a is not None else o.shape for a, o in zip(arrays, dot.operands))
        if not plan.swap:
            self.A = MatrixView(ls, info.lb, info.lf, info.lc, ptrs[0], dot_gens[0])
            self.B = MatrixView(rs, info.rb, info.rc, info.rf, ptrs[1], dot_gens[1])
        else:
            self.A = MatrixView(rs, info.rb, info.rf, info.rc, ptrs[1], dot_gens[1])
            self.B = MatrixView(ls, info.lb, info.lc, info.lf, ptrs[0], dot_gens[0])
        out = ctx.output_arrays()[0]
        self.out = out
        self.plan = plan
        oc, orow = (info.olf, info.orf) if plan.swap else (info.orf, info.olf)
        acc = out
        if plan.c_scratch:
            # The f32 accumulator in scratch; tiles reach it without the epilogue.
            acc = IrArray(plan.scratch.pointer(b, ctx.scratch_pointer(), "c"), scratch_c_shape(dot))
            epilogue = None
        self.acc = acc
        self.C = MatrixView(acc.shape, info.ob, orow, oc, acc.ptr, None)
        self.tiles = ResultTiles(self.C, acc, epilogue, plan.pt, plan.blk.mr, plan.blk.nr, plan.M, plan.N,
                                 plan.nkb)

    def out_index(self, bcomp, r, c) -> Index:
        b = self.b
        return self.C.index(b, bcomp, self.C.gr.components(b, r), self.C.gc.components(b, c))

    def finish(self, index: Index, v) -> None:
        """Write the final value ``v`` of an element of C (through the epilogue);
        with C in scratch, ``v`` (f32) is rounded to the dot's type first."""
        if not self.plan.c_scratch:
            self.tiles.finish(self.b, index, v)
            return
        v = convert_value(self.b, v, self.plan.pt, self.plan.dot_pt)
        if self.epilogue is not None:
            v = self.epilogue(index, v)
        self.out.write(self.b, index, v)


#: The rounding pass over a C accumulated in scratch: tasks of at least this
#: many elements, at most this many tasks.
ROUND_TASK_ELEMENTS = 1 << 16
ROUND_MAX_TASKS = 16


def round_from_scratch(ctx: KernelContext, plan: DotPlan) -> None:
    """With C accumulated in f32 in scratch (``plan.c_scratch``): every element
    rounded once to the dot's type, through the fusion's epilogue, into the
    result; tasks split the result's outermost dimension."""
    shape = ctx.output_arrays()[0].shape
    order = [d for d in reversed(shape.layout.minor_to_major) if shape.dimensions[d] != 1]
    outer = shape.dimensions[order[0]] if order else 1
    n_tasks = max(1, min(outer, ROUND_MAX_TASKS, shape.element_count() // ROUND_TASK_ELEMENTS))
    chunk = -(-outer // n_tasks)
    n_tasks = -(-outer // chunk)

    def body(tctx: KernelContext, outer_range) -> None:
        ops = DotOperands(tctx, plan)
        # Each element is read and written at its own index: no dependence
        # between iterations (parallel accesses), so no run-time overlap checks.
        with parallel_loops(tctx.b.module) as loop_id, \
                loop_nest(tctx.b, shape, outer_range=outer_range, loop_id=loop_id) as index:
            ops.finish(index, ops.acc.read(tctx.b, index))
    if n_tasks == 1:
        body(ctx, None)
    else:
        ctx.parallel_for(n_tasks, lambda tctx, i: body(tctx, task_range(tctx.b, i, chunk, outer)))


def task_base(ctx: KernelContext, plan: DotPlan, w) -> ir.Value:
    """Worker ``w``'s region (``plan.task_plan``) of the ``tasks`` scratch."""
    b = ctx.b
    base = plan.scratch.pointer(b, ctx.scratch_pointer(), "tasks")
    return b.gep(base, [b.mul(w, i64(plan.task_bytes))], inbounds=True, source_etype=I8)


def zero_flags(ctx: KernelContext, plan: DotPlan) -> None:
    """Mark every block of the shared B unpacked (``gemm.pack_once``) before the tasks run."""
    if not plan.shared_b:
        return
    b = ctx.b
    memset = b.module.declare_intrinsic("llvm.memset", [PTR, ir.IntType(64)])
    flags = plan.scratch.pointer(b, ctx.scratch_pointer(), "bflags")
    b.call(memset, [flags, ir.Constant(I8, FLAG_FILL), i64(plan.scratch.regions["bflags"][1]),
                    ir.Constant(I1, 0)])


# ---------------------------------------------------------------------------
# GEMM
# ---------------------------------------------------------------------------

class _ModuleGemm(GemmTask):
    """``plan`` as a ``gemm_task.GemmTask``: sizes known at compile time."""

    ix = COMPILE_TIME

    def __init__(self, ctx: KernelContext, plan: DotPlan, ops: DotOperands):
        blk = plan.blk
        self.ctx, self.plan, self.ops = ctx, plan, ops
        self.pt, self.mr, self.nr, self.vw = plan.pt, blk.mr, blk.nr, blk.vw
        self.M, self.N, self.K, self.nb = plan.M, plan.N, plan.K, plan.nb
        # The grid this call runs (ints when every thread count has the same).
        chosen = choose(ctx.b, ctx.opts_arg, plan.grids)
        self.grid = chosen.split
        self.mc, self.nc = chosen.sizes
        self.kc = plan.kc
        self.use_shared = plan.shared_b and uses_shared_b(ctx.b, chosen)
        self.A, self.B = ops.A, ops.B
        self.a_direct, self.b_direct = plan.a_direct, plan.b_direct
        self.direct_c = plan.direct

    def buffers(self, b, w) -> TaskBuffers:
        ctx, plan = self.ctx, self.plan
        base = task_base(ctx, plan, w)
        a_buf = plan.task_plan.pointer(b, base, "a")
        b_buf = plan.task_plan.pointer(b, base, "b")
        shared = plan.scratch.pointer(b, ctx.scratch_pointer(), "bshared") if plan.shared_b else None
        flags = plan.scratch.pointer(b, ctx.scratch_pointer(), "bflags") if plan.shared_b else None
        return TaskBuffers(a_buf, b_buf, shared, flags, self.use_shared)

    def c_batch(self, b, bi):
        return self.ops.tiles.batch(b, bi)

    def pack(self, b, view, bi, boff, lo, hi, total, inner0, kc, dst, width, outer_is_row) -> None:
        pack_block(b, view, bi, boff, lo, hi, total, inner0, kc, dst, width, outer_is_row, self.vw, self.pt)

    def pack_edge(self, b, view, bi, boff, full_end, hi, total, inner0, kc, dst, width, outer_is_row) -> None:
        pack_panel(b, view, bi, boff, i64(full_end), width, inner0, kc, dst, width, total - full_end,
                   outer_is_row, self.vw, self.pt)

    def store_full_tile(self, b, uk, t) -> None:
        self.ops.tiles.store_direct(b, uk, t, self.ops.C.gr.stride)

    def store_edge_tile(self, b, uk, t, tile) -> None:
        self.ops.tiles.store_through_stack(b, uk, t, tile)


def _emit_gemm_task(ctx: KernelContext, plan: DotPlan, t, w) -> None:
    ops = DotOperands(ctx, plan)
    emit_task(ctx.b, ctx.alloca_builder, _ModuleGemm(ctx, plan, ops), t, w)


def uses_shared_b(b, chosen: Chosen):
    """Whether the tasks of ``chosen`` share one packed B: when the grid has
    several chunks along M, which read the same B (a bool, or an i1)."""
    nmt = chosen.split[1]
    return nmt > 1 if isinstance(nmt, int) else b.icmp_signed(">", nmt, i64(1))


def emit_gemm(ctx: KernelContext) -> None:
    """The dot of ``ctx`` as this module's own packed GEMM."""
    plan = plan_dot(ctx.inst)
    fill_padding(ctx.b, ctx.output_arrays()[0])
    zero_flags(ctx, plan)
    run_grid(ctx, plan.scratch, plan.grids, 0, lambda tctx, t, w: _emit_gemm_task(tctx, plan, t, w))
    if plan.c_scratch:
        round_from_scratch(ctx, plan)


# ---------------------------------------------------------------------------
# Matrix-vector
# ---------------------------------------------------------------------------

def _batch_offset(b, view: MatrixView, bi):
    return view.gb.offset(b, bi) if view.is_array else i64(0)


#: Elements of a K chunk of a matrix-vector task are whole multiples of this
#: (whole cache lines of f32).
GEMV_K_UNIT = 16
#: Matrix rows the axpy form adds to the sums per pass over them.
GEMV_ROWS = 4
#: Matrix rows the dot-product form sums in one pass over the vector, and
#: the vector accumulators per row: each load of the vector serves four rows
#: (f32 4096 x 4096: 1.5x the rate of one row with four accumulators; eight
#: rows with one, or four with one, within noise of it).
GEMV_DOT_ROWS = 4
GEMV_DOT_UNROLL = 2


def _partials(ctx: KernelContext, plan: DotPlan, kt):
    """Row 0 of task K chunk ``kt``'s partial sums (``plan.M`` of them)."""
    b = ctx.b
    base = plan.scratch.pointer(b, ctx.scratch_pointer(), "partials")
    return b.gep(base, [b.mul(kt, i64(plan.M))], inbounds=True, source_etype=types.memory_type(plan.pt))


def _emit_gemv_task(ctx: KernelContext, plan: DotPlan, t, w) -> None:
    ops = DotOperands(ctx, plan)
    b = ctx.b
    pt = plan.pt
    ety = types.memory_type(pt)
    esize = pt.byte_size
    K, vw = plan.K, plan.blk.vw
    split_k = plan.grid[2] > 1
    # The third dimension of the grid is K's (N is 1).
    b_lo, b_hi, m_lo, m_hi, k_lo, k_hi = task_ranges(b, t, plan.grid, plan.nb, plan.M, K, 1, GEMV_K_UNIT)
    if not split_k:
        k_lo, k_hi = i64(0), i64(K)
    partial = _partials(ctx, plan, b.urem(t, i64(plan.grid[2]))) if split_k else None
    base = task_base(ctx, plan, w)
    xbuf = plan.task_plan.pointer(b, base, "x")
    A, B, C = ops.A, ops.B, ops.C
    zero_n = i64(0)

    def result(bcomp_c, m, v):
        if split_k:
            b.store(v, b.gep(partial, [m], inbounds=True, source_etype=ety), align=esize)
        else:
            ops.finish(ops.out_index(bcomp_c, m, zero_n), v)

    with Loop(b, b_lo, b_hi, 1, "batch") as bi:
        boff_a = _batch_offset(b, A, bi)
        boff_b = _batch_offset(b, B, bi)
        bcomp_c = C.gb.components(b, bi)
        with Loop(b, k_lo, k_hi, 1, "xk") as k:
            v = read_element(b, B, bi, boff_b, k, zero_n)
            b.store(v, b.gep(xbuf, [k], inbounds=True, source_etype=ety), align=esize)
        if plan.gemv_form == "rows":
            def dots(m, rows):
                ptrs = [A.element_pointer(b, add(b, boff_a, A.gr.offset(b, b.add(m, i64(r)))))
                        for r in range(rows)]
                if split_k:
                    ptrs = [b.gep(p, [k_lo], inbounds=True, source_etype=ety) for p in ptrs]
                    vs = dot_contiguous_rows(b, pt, ptrs, b.gep(xbuf, [k_lo], inbounds=True, source_etype=ety),
                                             b.sub(k_hi, k_lo), vw, GEMV_DOT_UNROLL)
                else:
                    vs = dot_contiguous_rows(b, pt, ptrs, xbuf, K, vw, GEMV_DOT_UNROLL)
                for r, v in enumerate(vs):
                    result(bcomp_c, b.add(m, i64(r)), v)

            m_main = b.add(m_lo, b.mul(b.udiv(b.sub(m_hi, m_lo), i64(GEMV_DOT_ROWS)), i64(GEMV_DOT_ROWS)))
            with Loop(b, m_lo, m_main, GEMV_DOT_ROWS, "rows") as m:
                dots(m, GEMV_DOT_ROWS)
            with Loop(b, m_main, m_hi, 1, "row") as m:
                dots(m, 1)
        elif plan.gemv_form == "cols":
            # The task's sums: its rows of the partials (K split), else its own buffer.
            ybuf = b.gep(partial, [m_lo], inbounds=True, source_etype=ety) if split_k else \
                plan.task_plan.pointer(b, base, "y")
            mc = b.sub(m_hi, m_lo)
            with Loop(b, 0, mc, 1, "yz") as i:
                b.store(types.constant(pt, 0), b.gep(ybuf, [i], inbounds=True, source_etype=ety),
                        align=esize)
            def axpys(k, rows):
                cols = [A.element_pointer(b, add(b, add(b, boff_a, A.gc.offset(b, b.add(k, i64(r)))),
                                                 A.gr.offset(b, m_lo))) for r in range(rows)]
                xs = [b.load(b.gep(xbuf, [b.add(k, i64(r))], inbounds=True, source_etype=ety), typ=ety,
                             align=esize) for r in range(rows)]
                axpy_contiguous(b, pt, ybuf, cols, xs, mc, vw)

            # GEMV_ROWS rows of the matrix per pass over the sums, then the rest.
            k_main = b.add(k_lo, b.mul(b.udiv(b.sub(k_hi, k_lo), i64(GEMV_ROWS)), i64(GEMV_ROWS)))
            with Loop(b, k_lo, k_main, GEMV_ROWS, "cols") as k:
                axpys(k, GEMV_ROWS)
            with Loop(b, k_main, k_hi, 1, "col") as k:
                axpys(k, 1)
            if not split_k:
                with Loop(b, m_lo, m_hi, 1, "row") as m:
                    v = b.load(b.gep(ybuf, [b.sub(m, m_lo)], inbounds=True, source_etype=ety), typ=ety,
                               align=esize)
                    ops.finish(ops.out_index(bcomp_c, m, zero_n), v)
        else:
            fma = _scalar_fma(b.module, pt)
            with Loop(b, m_lo, m_hi, 1, "row") as m:
                pre = b.block
                body = b.append_basic_block("gk")
                after = b.append_basic_block("gk.after")
                b.branch(body)
                b.position_at_end(body)
                k = b.phi(ir.IntType(64), "k")
                k.add_incoming(i64(0), pre)
                acc = b.phi(ety, "acc")
                acc.add_incoming(types.constant(pt, 0), pre)
                a = read_element(b, A, bi, boff_a, m, k)
                xk = b.load(b.gep(xbuf, [k], inbounds=True, source_etype=ety), typ=ety, align=esize)
                s = b.call(fma, [a, xk, acc])
                k_next = b.add(k, i64(1))
                k.add_incoming(k_next, b.block)
                acc.add_incoming(s, b.block)
                b.cbranch(b.icmp_signed("<", k_next, i64(K)), body, after)
                b.position_at_end(after)
                ops.finish(ops.out_index(bcomp_c, m, zero_n), s)


def _add_partials(ctx: KernelContext, plan: DotPlan) -> None:
    """After the tasks of a K-split matrix-vector product: each row's partial
    sums added in K order, and the sum finished into the result."""
    ops = DotOperands(ctx, plan)
    b = ctx.b
    ety = types.memory_type(plan.pt)
    esize = plan.pt.byte_size
    bcomp_c = ops.C.gb.components(b, i64(0))
    first = _partials(ctx, plan, i64(0))
    with Loop(b, 0, plan.M, 1, "sum") as m:
        v = b.load(b.gep(first, [m], inbounds=True, source_etype=ety), typ=ety, align=esize)
        for kt in range(1, plan.grid[2]):
            p = b.gep(first, [b.add(m, i64(kt * plan.M))], inbounds=True, source_etype=ety)
            v = b.fadd(v, b.load(p, typ=ety, align=esize))
        ops.finish(ops.out_index(bcomp_c, m, i64(0)), v)


def _scalar_fma(module, pt):
    ety = types.memory_type(pt)
    return intrinsic(module, f"llvm.fma.{'f32' if pt is F32 else 'f64'}",
                     ir.FunctionType(ety, [ety, ety, ety]))


def emit_gemv(ctx: KernelContext) -> None:
    """The dot of ``ctx`` (M or N is 1) as matrix-vector loops."""
    plan = plan_dot(ctx.inst)
    fill_padding(ctx.b, ctx.output_arrays()[0])
    run_tasks(ctx, plan.scratch, plan.n_tasks, 0, lambda tctx, t, w: _emit_gemv_task(tctx, plan, t, w))
    if plan.grid[2] > 1:
        _add_partials(ctx, plan)
