"""``W -= A B`` on strided views of a kernel's own buffers, through the GEMM
library: the update step of the blocked linear-algebra kernels
(``cholesky_blocked``, ``triangular_solve_blocked``, ``lu_blocked``).

The library computes ``C = A B`` into a dense scratch product and calls an
epilogue on every finished tile; the epilogue (``linalg_functions``'
``subtract_tile``) subtracts the tile from ``W`` while it is in L1.  The
library's plan (blocking, task grid, scratch) is the one of a ``dot`` of the
same shapes (:func:`plan`); the kernel fills the descriptor with its own
pointers and strides.  Only the pointers are stored at run time: the other
fields come from a constant template of the module.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...shape import Shape
from .. import gemm_library, target
from ..emitter import KernelContext, TypedCallee
from ..ir_array import i64
from ..linalg_functions import LinalgVariant
from ._util import constant_table, memcpy
from .dot_library import library_variant
from .dot_plan import plan_dot

_DESC = len(gemm_library.FIELDS)


@dataclass(frozen=True)
class Gemm:
    """``C (M x N) = A (M x K) . B (K x N)``, C unit-stride along N; A
    unit-stride along K (``a_k_unit``) or along M; B along N, or along K
    (``b_k_unit``)."""

    M: int
    N: int
    K: int
    a_k_unit: bool
    b_k_unit: bool = False


def plan(pt, g: Gemm):
    """(DotPlan, library Variant) of ``g``: the plan of a dot of its shapes
    for the current target (made once per process: a blocked factorisation
    asks for a dozen shapes, ~0.3 ms each, at every compile)."""
    return _plan(pt, g, target.current())


@functools.lru_cache(maxsize=512)
def _plan(pt, g: Gemm, _target):
    lhs_dims, lhs_k = ((g.M, g.K), 1) if g.a_k_unit else ((g.K, g.M), 0)
    rhs_dims, rhs_k = ((g.N, g.K), 1) if g.b_k_unit else ((g.K, g.N), 0)
    lhs = HloInstruction("parameter", Shape(pt, lhs_dims), attrs={"parameter_number": 0})
    rhs = HloInstruction("parameter", Shape(pt, rhs_dims), attrs={"parameter_number": 1})
    dot = HloInstruction("dot", Shape(pt, (g.M, g.N)), [lhs, rhs],
                         dict(lhs_contracting_dims=(lhs_k,), rhs_contracting_dims=(rhs_k,), lhs_batch_dims=(),
                              rhs_batch_dims=()))
    p = plan_dot(dot)
    v = library_variant(dot, p)
    assert p.kind == "gemm" and not p.swap and v is not None, g
    return p, v


def scratch_bytes(plans) -> int:
    """Scratch one update at a time needs, the largest of ``plans``' (a list of ``plan`` results)."""
    return max([p.scratch.size for p, _ in plans], default=0)


def blocks_of(n: int, size: int) -> list[tuple[int, int]]:
    """``(start, rows)`` of the blocks of ``size`` rows of ``n`` rows, the last
    one the rest; a rest of one row joins the block before it (the GEMM of a
    single-row block would be a matrix-vector product, which the library does
    not run)."""
    out = [(s, min(size, n - s)) for s in range(0, n, size)]
    if len(out) > 1 and out[-1][1] == 1:
        (s, r), _ = out[-2], out.pop()
        out[-1] = (s, r + 1)
    return out


def _constant(module: ir.Module, values: list) -> ir.GlobalVariable:
    """An internal constant array of i64 ``values`` (one per distinct content)."""
    name = "xlac.gemm_update." + hashlib.sha256(" ".join(str(v) for v in values).encode()).hexdigest()[:16]
    return constant_table(module, name, values)


def _fields(g: Gemm, planned, lda: int, ldb: int, serial: bool) -> list:
    """The descriptor's constant fields (``gemm_library.FIELDS`` order) of ``g``."""
    dp, _ = planned
    grid = dp.grids.serial if serial else dp.grids.grids[-1]
    a_rs, a_cs = (lda, 1) if g.a_k_unit else (1, lda)
    b_rs, b_cs = (1, ldb) if g.b_k_unit else (ldb, 1)
    fields = dict(a_rs=a_rs, a_cs=a_cs, b_rs=b_rs, b_cs=b_cs, c_rs=g.N, c_cs=1, nbi=1, M=g.M, N=g.N, K=g.K, nb=1,
                  kc=dp.kc, mc=grid.sizes[0], nc=grid.sizes[1], nbt=grid.split[0], nmt=grid.split[1],
                  nnt=grid.split[2], n_tasks=grid.n_tasks, task_bytes=dp.task_bytes,
                  b_off=dp.task_plan.regions["b"][0])
    return [fields.get(name, 0) for name in gemm_library.FIELDS]


def _descriptor(ctx: KernelContext, pt, template, dp, a, b_ptr, w, ldw: int, n_: int, product, scratch,
                tasks=None):
    """The descriptor on the stack: ``template`` (a pointer to the constant
    fields) copied, the pointers stored, the epilogue's context beside it;
    ``tasks``: the workers' regions (default: where ``dp`` has them)."""
    b = ctx.b
    desc = ctx.alloca_builder.alloca(ir.ArrayType(ir.IntType(64), _DESC), name="upd.desc")
    desc.align = 8
    epi = ctx.alloca_builder.alloca(ir.ArrayType(ir.IntType(64), 4), name="upd.epi")
    memcpy(b, desc, template, i64(8 * _DESC))

    def put(arr, slot: int, value) -> None:
        if not isinstance(value, ir.Value):
            value = i64(value)
        elif isinstance(value.type, ir.PointerType):
            value = b.ptrtoint(value, ir.IntType(64))
        b.store(value, b.gep(arr, [i64(0), i64(slot)], inbounds=True), align=8)

    # The pointers; bshared and bflags stay null: every task packs its own B block.
    counter = dp.scratch.pointer(b, scratch, "counters")
    if tasks is None:
        tasks = dp.scratch.pointer(b, scratch, "tasks")
    for name, value in (("a", a), ("b", b_ptr), ("c", product), ("scratch", tasks),
                        ("counter", counter),
                        ("epi_fn", gemm_library.declare(b.module, LinalgVariant(pt, "subtract_tile"), "call")),
                        ("epi_ctx", epi)):
        put(desc, gemm_library.SLOT[name], value)
    for slot, value in enumerate((product, n_, w, ldw)):
        put(epi, slot, value)
    b.store(i64(0), counter, align=8)
    return desc


@dataclass(frozen=True)
class Prepared:
    """A filled descriptor (``desc``, an alloca of the kernel) of one update,
    ``run`` the library's worker function (``void run(desc, worker)``) and
    ``workers`` the worker tasks its grid has (1 for a serial update)."""

    desc: ir.Value
    run: ir.Function
    workers: int


def prepare(ctx: KernelContext, pt, g: Gemm, planned, a, lda: int, b_ptr, ldb: int, w, ldw: int, product, scratch,
            serial: bool = False) -> Prepared:
    """The descriptor of ``w[:M, :N] -= A . B`` (``w`` rows ``ldw`` apart), A
    at ``a`` with ``lda`` between its rows (``a_k_unit``) or columns, B at
    ``b_ptr`` (row-major, ``ldb``); ``planned``: ``plan(pt, g)``; ``product``:
    M x N elements of scratch, ``scratch``: ``scratch_bytes``.  The grid is
    the serial one with ``serial``, else the one of the most threads (a grid
    chosen per call, as the dot kernel does, is selects per field); with
    fewer threads the workers take its tasks in turn (from the descriptor's
    counter, set to 0 here).  Workers ``0 .. workers-1`` may run at once,
    each on its own scratch region."""
    dp, v = planned
    grid = dp.grids.serial if serial else dp.grids.grids[-1]
    template = _constant(ctx.b.module, _fields(g, planned, lda, ldb, serial))
    desc = _descriptor(ctx, pt, template, dp, a, b_ptr, w, ldw, g.N, product, scratch)
    workers = 1 if serial else min(grid.n_tasks, dp.grids.max_workers)
    return Prepared(desc, gemm_library.declare(ctx.b.module, v, "run"), workers)


def subtract_product(ctx: KernelContext, pt, g: Gemm, planned, a, lda: int, b_ptr, ldb: int, w, ldw: int,
                     product, scratch, serial: bool = False) -> None:
    """``w[:M, :N] -= A . B`` (:func:`prepare`'s arguments), on the thread
    pool unless ``serial`` (then on this thread: as one task of a parallel
    region)."""
    p = prepare(ctx, pt, g, planned, a, lda, b_ptr, ldb, w, ldw, product, scratch, serial)
    if p.workers == 1:
        ctx.b.call(p.run, [p.desc, i64(0)])
    else:
        ctx.parallel_for(p.workers, lambda tctx, wk: tctx.b.call(p.run, [tctx.shared[0], wk]), shared=(p.desc,))


def subtract_product_of(ctx: KernelContext, pt, choices: list, index, a, lda: int, b_ptr, ldb: int, w, ldw: int,
                        product, scratch, columns=None, rows=None) -> None:
    """:func:`subtract_product` on this thread with the shape chosen at run
    time: ``choices[index]`` (``index`` an i64), a list of ``(Gemm,
    plan)``.  One call site: the descriptors' constant fields and the
    library functions are tables of the module.  ``columns`` / ``rows``
    (i64s, at most the choice's N / M): only the first ``columns`` columns
    of B and ``w`` / ``rows`` rows of A and ``w`` (the library's loops take
    M and N from the descriptor; the plan's blocks and scratch are those of
    the bigger shape, enough for a smaller one)."""
    b = ctx.b
    dp0 = choices[0][1][0]
    # The counter first in every choice's scratch; the workers' regions maybe
    # not at one place (a plan that shares B has its packed B before them).
    assert all(dp.scratch.regions["counters"][0] == 0 for _, (dp, _) in choices)
    offsets = [dp.scratch.regions["tasks"][0] for _, (dp, _) in choices]
    if len(set(offsets)) == 1:
        tasks = dp0.scratch.pointer(b, scratch, "tasks")
    else:
        at = b.load(b.gep(_constant(b.module, offsets), [i64(0), index], inbounds=True), typ=ir.IntType(64))
        tasks = b.gep(scratch, [at], inbounds=True, source_etype=ir.IntType(8))
    fields_rows = [_fields(g, planned, lda, ldb, True) for g, planned in choices]
    table = _constant(b.module, [x for row in fields_rows for x in row])
    template = b.gep(table, [i64(0), b.mul(index, i64(_DESC))], inbounds=True)
    n_ = choices[0][0].N
    if columns is not None:
        n_ = columns
    elif len({g.N for g, _ in choices}) > 1:       # the product's rows are N apart: N from the table
        n_ = b.load(b.gep(template, [i64(gemm_library.FIELDS.index("N"))], inbounds=True, source_etype=ir.IntType(64)),
                    typ=ir.IntType(64))
    desc = _descriptor(ctx, pt, template, dp0, a, b_ptr, w, ldw, n_, product, scratch, tasks)
    overrides = {}
    if columns is not None:            # the product's rows are ``columns`` apart too
        overrides.update(N=columns, c_rs=columns)
    if rows is not None:
        overrides["M"] = rows
    for field, value in overrides.items():
        b.store(value, b.gep(desc, [i64(0), i64(gemm_library.SLOT[field])], inbounds=True), align=8)
    fns = [gemm_library.declare(b.module, v, "run") for _, (_, v) in choices]
    name = "xlac.gemm_update.fns." + hashlib.sha256(" ".join(f.name for f in fns).encode()).hexdigest()[:16]
    ftable = b.module.globals.get(name)
    if ftable is None:
        ty = ir.ArrayType(ir.PointerType(), len(fns))
        ftable = ir.GlobalVariable(b.module, ty, name)
        ftable.initializer = ir.Constant(ty, fns)
        ftable.global_constant = True
        ftable.linkage = "internal"
    fn = b.load(b.gep(ftable, [i64(0), index], inbounds=True), typ=ir.PointerType())
    b.call(TypedCallee(fn, fns[0].function_type), [desc, i64(0)])
