"""A dot through the GEMM library (``codegen/gemm_library.py``): the kernel
fills a descriptor on its stack and runs the library's workers on it, and a
kOutput fusion's epilogue stays in the module: a function the library calls
on every finished tile, or, for a dot run as one task, one vectorised loop
nest over the result after the call.

The library reads A, B and C from buffers through one stride per index group
and accumulates C in the result buffer: :func:`library_variant` says which
dots it takes (the others run ``dot_tasks``' per-module GEMM) and with which
``gemm_library.Variant``.
"""
from __future__ import annotations

from llvmlite import ir

from ...hlo.ir import HloInstruction
from .. import gemm_library
from ..emitter import KernelContext
from ..gemm import Loop
from ..ir_array import i64
from ..loops import loop_nest, parallel_loops
from ._util import PTR, fill_padding
from .dot_plan import DotPlan, dot_info, library_layout_why, library_levels, library_views, plan_dot, the_dot
from .dot_tasks import DotOperands, round_from_scratch, uses_shared_b, zero_flags
from ..task_grid import choose, workers


def library_variant(inst: HloInstruction, plan: DotPlan) -> gemm_library.Variant | None:
    """The GEMM library variant that computes ``plan``, or None when only the
    per-module GEMM can: the library reads operands from buffers through one
    stride per column group and C's rows, and two for the batch, K and A's
    row group (:func:`~.dot_plan.library_levels`), and accumulates C in the
    result buffer, so a fused operand producer, a group that is not even two
    strides, an epilogue that changes the element type, or a two-level
    group with a native low-precision kernel keep the per-module code."""
    if plan.kind != "gemm" or not (plan.acc_in_output or plan.c_scratch):
        return None
    dot = the_dot(inst)
    info = dot_info(dot)
    if library_layout_why(inst, dot, info, plan.swap, plan.c_scratch) is not None:
        return None
    A, B, C = library_views(inst, plan.swap, plan.c_scratch, info, dot)
    levels = library_levels(A, B, C)
    two = ("m" if levels.m is not None else "") + ("k" if levels.k is not None else "")
    if two and plan.native is not None:
        return None

    def kind(view, col: str, row: str) -> str:
        # (a two-level group is never read as one unit-stride run)
        return col if view.gc.affine and view.gc.stride == 1 else \
            row if view.gr.affine and view.gr.stride == 1 else "g"
    b_kind = "d" if plan.b_direct else kind(B, "n", "k")
    a_kind = "d" if plan.a_direct else kind(A, "k", "m")
    narrow = lambda t: t if t is not plan.pt else None     # noqa: E731
    return gemm_library.Variant(plan.pt, plan.blk.mr, plan.blk.nr, plan.blk.vw, a_kind, b_kind,
                                narrow(plan.a_pt), narrow(plan.b_pt),
                                plan.native.kind if plan.native is not None else None, two)


def _emit_library_gemm(ctx: KernelContext, plan: DotPlan, v: gemm_library.Variant) -> None:
    """Fill a descriptor on the stack and run the library's workers on it."""
    b = ctx.b
    ops = DotOperands(ctx, plan)
    desc = ctx.alloca_builder.alloca(ir.ArrayType(ir.IntType(64), len(gemm_library.FIELDS)), name="gemm.desc")
    desc.align = 8

    def put(name: str, value) -> None:
        slot = b.gep(desc, [i64(0), i64(gemm_library.SLOT[name])], inbounds=True)
        if not isinstance(value, ir.Value):
            value = i64(value)
        elif isinstance(value.type, ir.PointerType):
            value = b.ptrtoint(value, ir.IntType(64))
        b.store(value, slot, align=8)
    null = ir.Constant(PTR, None)
    scratch = ctx.scratch_pointer()
    levels = library_levels(ops.A, ops.B, ops.C)
    inner, batch_strides = levels.batch
    put("nbi", inner)
    for (name, view), (bs, bo) in zip((("a", ops.A), ("b", ops.B), ("c", ops.C)), batch_strides):
        put(name, view.ptr)
        put(f"{name}_bs", bs)
        put(f"{name}_bo", bo)
        put(f"{name}_rs", view.gr.stride)
        put(f"{name}_cs", view.gc.stride)
    # Two-level row (M) and K groups (the variant's ``levels``): the inner
    # level's stride replaces the group's, the outer one's comes beside it.
    if levels.m is not None:
        mi, [(a_ri, a_ro)] = levels.m
        put("mi", mi)
        put("a_rs", a_ri)
        put("a_ro", a_ro)
    if levels.k is not None:
        ki, [(a_ci, a_co), (b_ri, b_ro)] = levels.k
        put("ki", ki)
        put("a_cs", a_ci)
        put("a_co", a_co)
        put("b_rs", b_ri)
        put("b_ro", b_ro)
    # The grid this call's thread count picks (constants when all agree).
    chosen = choose(b, ctx.opts_arg, plan.grids)
    put("scratch", plan.scratch.pointer(b, scratch, "tasks"))
    bshared = null
    if plan.shared_b:
        bshared = plan.scratch.pointer(b, scratch, "bshared")
        use = uses_shared_b(b, chosen)
        if use is not True:
            bshared = b.select(use, bshared, null) if use is not False else null
    put("bshared", bshared)
    put("bflags", plan.scratch.pointer(b, scratch, "bflags") if plan.shared_b else null)
    counters = plan.scratch.pointer(b, scratch, "counters")
    put("counter", counters)
    # A serial dot's epilogue runs once over C after the library's call: a
    # loop nest of C's static shape, vectorised, while C is still in cache.
    # A tile's epilogue sees run-time tile bounds and C's index split into
    # the fusion's dimensions per element, and stays scalar (gpt_sample's
    # small dots spent 9% of its time in them).
    # (C accumulated in scratch gets its epilogue from the rounding pass.)
    after = ops.epilogue is not None and plan.grids.max_workers == 1 and not plan.c_scratch
    if ops.epilogue is not None and not after and not plan.c_scratch:
        put("epi_fn", _epilogue_function(ctx, plan))
        put("epi_ctx", ctx.args_array())
    else:
        put("epi_fn", null)
        put("epi_ctx", null)
    (nbt, nmt, nnt), (mc, nc) = chosen.split, chosen.sizes
    for name, value in (("M", plan.M), ("N", plan.N), ("K", plan.K), ("nb", plan.nb),
                        ("kc", plan.kc), ("mc", mc), ("nc", nc),
                        ("nbt", nbt), ("nmt", nmt), ("nnt", nnt),
                        ("n_tasks", chosen.n_tasks), ("task_bytes", plan.task_bytes),
                        ("b_off", plan.task_plan.regions["b"][0])):
        put(name, value)
    b.store(i64(0), counters, align=8)
    zero_flags(ctx, plan)
    fn = gemm_library.declare(b.module, v, "run")
    if chosen.n_tasks == 1:
        b.call(fn, [desc, i64(0)])
    else:
        ctx.parallel_for(workers(b, chosen, plan.grids.max_workers),
                         lambda tctx, w: tctx.b.call(fn, [tctx.shared[0], w]), shared=(desc,))
    if plan.c_scratch:
        round_from_scratch(ctx, plan)
    if after:
        # Each element is read and rewritten at its own index: no dependence
        # between iterations (parallel accesses), so no run-time overlap checks.
        with parallel_loops(b.module) as loop_id, loop_nest(b, ctx.inst.shape, loop_id=loop_id) as index:
            ops.finish(index, ops.out.read(b, index))


def _epilogue_function(ctx: KernelContext, plan: DotPlan) -> ir.Function:
    """``void epi(ptr args, i64 batch, i64 r0, i64 c0, i64 rows, i64 cols)``:
    the fusion's epilogue over a finished tile of C (rows x cols from (r0, c0)
    of batch ``batch``), read from the result buffer and written back.
    ``args``: the kernel's (results, params, temp, opts)."""
    ectx, (bi, r0, c0, rows, cols) = ctx.outlined(gemm_library.EPILOGUE_TYPE, "epilogue")
    bb = ectx.b
    ops = DotOperands(ectx, plan)
    C = ops.C
    bcomp = C.gb.components(bb, bi)
    with Loop(bb, 0, rows, 1, "ei") as i:
        rcomp = C.gr.components(bb, bb.add(r0, i))
        with Loop(bb, 0, cols, 1, "ej") as j:
            index = C.index(bb, bcomp, rcomp, C.gc.components(bb, bb.add(c0, j)))
            ops.finish(index, ops.out.read(bb, index))
    ectx.b.ret_void()
    if is_glue(ctx.inst):
        ctx.me.report_hot(ectx.fn)  # the kernel is compiled cold, its epilogue hot
    return ectx.fn


def is_glue(inst: HloInstruction) -> bool:
    """Whether the library kernel of ``inst`` is only a call (``KernelCandidate.glue``):
    accumulating in its result (no rounding pass from scratch) of an
    unpadded layout (no padding filled), a dot of its own or a fusion whose
    epilogue the library calls per tile (:func:`_epilogue_function`, compiled
    hot on its own; not the loop after a serial dot's call)."""
    if not inst.shape.is_array or inst.shape.layout.is_padded:
        return False
    plan = plan_dot(inst)
    if plan is None or plan.c_scratch:
        return False
    return inst.opcode == "dot" or plan.grids.max_workers > 1


def emit_library(ctx: KernelContext) -> None:
    """The dot of ``ctx`` as a call of the GEMM library (``library_variant`` is not None)."""
    plan = plan_dot(ctx.inst)
    fill_padding(ctx.b, ctx.output_arrays()[0])
    _emit_library_gemm(ctx, plan, library_variant(ctx.inst, plan))
