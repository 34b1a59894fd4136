"""``cholesky`` and ``triangular-solve`` as kernels (spec: *Cholesky*,
*TriangularSolve*): the unblocked algorithms, for every size, batch and
element type (f32, f64, c64, c128), in native loops (no LAPACK).

Big f32/f64 problems take the blocked kernels first
(``cholesky_blocked.py``, ``triangular_solve_blocked.py``: their bulk in
the GEMM library, their diagonal blocks in the routines these kernels call);
complex and small problems, and solves with one right-hand side, run here
whole.

Both kernels work on a dense, row-major *work array*, one matrix per batch
element, chosen so that the inner loop is a contiguous ``w[i, :] -= c *
w[k, :]`` (an axpy LLVM vectorises, no reduction, marked free of
loop-carried dependences):

* cholesky computes the upper factor in place, row by row (the up-looking
  form): row i loses ``conj(u[k, i]) * u[k, i:]`` for every row k above it
  (GROUP rows k per pass over row i), then is divided by the square root of
  its pivot ``re(w[i, i])``.  ``lower=true`` copies ``a`` in transposed
  (``w = a^T``, whose upper triangle is a's lower one) and writes the result
  out transposed: the upper factor of ``a^T`` is ``l^T`` (conjugation
  cancels out).  The other triangle is zeroed.  A pivot whose square root
  is NaN (negative or NaN: ``a`` is not positive definite) fills that matrix
  with NaN, as XLA's CholeskyExpander does; a pivot's imaginary part is
  ignored, as LAPACK's potrf does.
* triangular-solve copies b in (transposed for ``left_side=false``:
  ``x op(a) = b`` is ``op(a)^T x^T = b^T``), so every case is ``t w = w'``
  for a triangular ``t`` (``op(a)`` or ``op(a)^T``: a or a^T, conjugated for
  ADJOINT, read along rows from a or from a row-major copy of it), solved by
  forward or back substitution over rows: ``w[i, :] -= t[i, k] * w[k, :]``
  for the rows k already solved (GROUP rows k per pass over row i, so that
  the loop is not bound by its loads and stores), then ``w[i, :] /= t[i, i]``
  (not with ``unit_diagonal``).  Only t's triangle (and diagonal) is read.
  Columns of w are independent: tasks take a batch element and a chunk of
  columns sized so the chunk stays in L2, and run on the thread pool when
  the kernel is big enough.

**Compile time.**  The factorisation, the substitution and the transposing
copy are routines of the GEMM library (``codegen/linalg_functions.py``:
sizes as arguments, built once per machine), so a kernel only copies its
operands in and out and calls them (emitted per module they had been
~125 ms of LLVM time).
"""
from __future__ import annotations

import math

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...shape import Layout, Shape
from .. import gemm_library, types
from ..emitter import PARALLEL_MIN_WORK, KernelContext, ModuleEmitter
from ..ir_array import IrArray, i64
from ..kernel_choice import KernelCandidate
from ..linalg_functions import LinalgVariant, trsm_routine
from ..loops import fill_padding, for_range
from ._util import PTR, ScratchPlan, copy_array

#: Bytes of a triangular-solve column chunk (all m rows of it) a task keeps in L2.
CHUNK_BYTES = 256 * 1024


# ---------------------------------------------------------------------------
# work arrays: row-major matrices, or row-major transposed ones
# ---------------------------------------------------------------------------

def _minor_swapped(shape: Shape) -> Shape:
    """``shape``'s dimensions, laid out so that memory holds each matrix
    transposed (row-major otherwise)."""
    r = shape.rank
    return Shape(shape.element_type, shape.dimensions, layout=Layout((r - 2, r - 1) + tuple(range(r - 3, -1, -1))))


def _row_major(shape: Shape) -> Shape:
    return Shape(shape.element_type, shape.dimensions)


def _is_row_major(shape: Shape) -> bool:
    return shape == _row_major(shape)


def _routine(module: ir.Module, pt, routine: str) -> ir.Function:
    """The library's ``routine`` (``linalg_functions.ROUTINES``) for ``pt``, declared in ``module``."""
    return gemm_library.declare(module, LinalgVariant(pt, routine), "call")


def _element(b: ir.IRBuilder, base, offset, pt):
    return b.gep(base, [offset], inbounds=True, source_etype=types.memory_type(pt))


def _min(b: ir.IRBuilder, v, limit):
    limit = i64(limit) if isinstance(limit, int) else limit
    return b.select(b.icmp_signed("<", v, limit), v, limit)


def _copy(b: ir.IRBuilder, dst: IrArray, src: IrArray) -> None:
    """Copy ``src`` into ``dst`` (same dimensions, any layouts): a memcpy for
    one layout, the tiled transpose between a row-major and a transposed
    dense buffer, else element by element."""
    if dst.shape == src.shape:
        copy_array(b, dst, src)
        return
    kinds = {(_is_row_major(x.shape), x.shape == _minor_swapped(x.shape)) for x in (dst, src)}
    if kinds == {(True, False), (False, True)}:
        dims = dst.shape.dimensions
        rows, cols = dims[-2:] if _is_row_major(src.shape) else dims[-2:][::-1]   # of src in memory
        fn = _routine(b.module, dst.shape.element_type, "transpose")
        b.call(fn, [dst.ptr, src.ptr, i64(math.prod(dims[:-2])), i64(rows), i64(cols), i64(cols), i64(rows)])
        return
    copy_array(b, dst, src)


def _run_tasks(ctx: KernelContext, n_tasks: int, parallel: bool, body) -> None:
    """``body(task_ctx, task)`` for every task: on the thread pool when
    ``parallel``, else in a loop here."""
    ctx.long_running = True
    if parallel and n_tasks > 1:
        ctx.parallel_for(n_tasks, body)
        return
    with for_range(ctx.b, n_tasks, "task") as t:
        body(ctx, t)


# ---------------------------------------------------------------------------
# cholesky
# ---------------------------------------------------------------------------

def _cholesky_plan(inst: HloInstruction) -> tuple:
    """(work shape, whether the work array is the result buffer)."""
    lower = bool(inst.attrs.get("lower", False))
    work = _minor_swapped(inst.shape) if lower else _row_major(inst.shape)
    return work, not lower and _is_row_major(inst.shape)


def _cholesky_scratch(me: ModuleEmitter, inst: HloInstruction) -> int:
    work, in_place = _cholesky_plan(inst)
    return 0 if in_place or inst.shape.element_count() == 0 else work.byte_size()


def _cholesky(ctx: KernelContext) -> None:
    inst, b = ctx.inst, ctx.b
    (out,) = ctx.output_arrays()
    fill_padding(b, out)
    shape = inst.shape
    if shape.element_count() == 0:
        return
    work_shape, in_place = _cholesky_plan(inst)
    n, batch = shape.dimensions[-1], math.prod(shape.dimensions[:-2])
    work = IrArray(out.ptr if in_place else ctx.scratch_pointer(), work_shape)
    _copy(b, work, ctx.operand_array(0))
    pt = shape.element_type
    potrf = _routine(b.module, pt, "potrf")

    def task(tctx: KernelContext, e) -> None:
        base = tctx.output_arrays()[0].ptr if in_place else tctx.scratch_pointer()
        tctx.b.call(potrf, [_element(tctx.b, base, tctx.b.mul(e, i64(n * n)), pt), i64(n), i64(n)])

    _run_tasks(ctx, batch, batch * n ** 3 // 3 >= PARALLEL_MIN_WORK, task)
    if not in_place:
        _copy(b, out, work)


# ---------------------------------------------------------------------------
# triangular-solve
# ---------------------------------------------------------------------------

class _SolvePlan:
    """How one triangular-solve runs: ``t w = w'`` on the work array ``w``,
    ``t`` read along its rows from a row-major view of a (a itself, or a
    copy in scratch)."""

    def __init__(self, inst: HloInstruction):
        a, bs = inst.operands[0].shape, inst.operands[1].shape
        self.left = bool(inst.attrs.get("left_side", False))
        transpose = str(inst.attrs.get("transpose_a", "NO_TRANSPOSE"))
        self.m = a.dimensions[-1]
        self.nr = bs.dimensions[-1] if self.left else bs.dimensions[-2]   # columns of w
        self.batch = math.prod(bs.dimensions[:-2])
        self.work = _row_major(inst.shape) if self.left else _minor_swapped(inst.shape)
        self.work_in_place = self.left and _is_row_major(inst.shape)
        # A right-side solve of row-major b and x: each task moves its own rows
        # of b in (transposed) and out, in parallel and while they are in L2.
        self.copy_in_tasks = not self.left and _is_row_major(bs) and _is_row_major(inst.shape)
        # t = op(a) (left) or op(a)^T (right): a or a^T, conjugated for ADJOINT.
        swap = (transpose != "NO_TRANSPOSE") != (not self.left)
        self.t = _minor_swapped(a) if swap else _row_major(a)
        self.t_is_a = a == self.t
        self.conj = transpose == "ADJOINT"
        self.forward = bool(inst.attrs.get("lower", False)) != swap   # t lower
        self.unit = bool(inst.attrs.get("unit_diagonal", False))
        self.scratch = ScratchPlan()
        if inst.shape.element_count():
            if not self.work_in_place:
                self.scratch.add("w", self.work.byte_size())
            if not self.t_is_a:
                self.scratch.add("t", self.t.byte_size())
        et = inst.shape.element_type.byte_size
        chunk = min(self.nr, max(16, CHUNK_BYTES // max(1, self.m * et) // 16 * 16)) or 1
        parallel = self.batch * self.m * self.m * self.nr // 2 >= PARALLEL_MIN_WORK
        if parallel and self.batch * -(-self.nr // chunk) < 2 and self.nr >= 32:
            chunk = -(-self.nr // 2)       # one matrix: two column halves, one per thread
        self.chunk = chunk
        self.chunks = -(-self.nr // chunk)
        self.tasks = self.batch * self.chunks
        self.parallel = parallel and self.tasks > 1

    def work_pointer(self, ctx: KernelContext):
        if self.work_in_place:
            return ctx.output_arrays()[0].ptr
        return self.scratch.pointer(ctx.b, ctx.scratch_pointer(), "w")

    def t_pointer(self, ctx: KernelContext):
        if self.t_is_a:
            return ctx.operand_array(0).ptr
        return self.scratch.pointer(ctx.b, ctx.scratch_pointer(), "t")


def _solve_scratch(me: ModuleEmitter, inst: HloInstruction) -> int:
    return _SolvePlan(inst).scratch.size


def _solve_task(tctx: KernelContext, plan: _SolvePlan, fn: ir.Function, task) -> None:
    """Substitution on columns [c0, c1) of batch element ``task // chunks``."""
    b = tctx.b
    pt = tctx.inst.shape.element_type
    m, nr = plan.m, plan.nr
    e, c = (b.udiv(task, i64(plan.chunks)), b.urem(task, i64(plan.chunks))) if plan.chunks > 1 \
        else (task, i64(0))
    c0 = b.mul(c, i64(plan.chunk))
    c1 = _min(b, b.add(c0, i64(plan.chunk)), nr) if nr % plan.chunk else b.add(c0, i64(plan.chunk))
    w = _element(b, plan.work_pointer(tctx), b.mul(e, i64(m * nr)), pt)
    t = _element(b, plan.t_pointer(tctx), b.mul(e, i64(m * m)), pt)
    if plan.copy_in_tasks:      # rows [c0, c1) of b are columns [c0, c1) of w
        tr = _routine(b.module, pt, "transpose")
        rows = b.sub(c1, c0)
        src = _element(b, tctx.operand_array(1).ptr, b.add(b.mul(e, i64(m * nr)), b.mul(c0, i64(m))), pt)
        b.call(tr, [_element(b, w, c0, pt), src, i64(1), rows, i64(m), i64(m), i64(nr)])
    b.call(fn, [w, t, i64(m), i64(nr), c0, c1, i64(m)])
    if plan.copy_in_tasks:
        dst = _element(b, tctx.output_arrays()[0].ptr, b.add(b.mul(e, i64(m * nr)), b.mul(c0, i64(m))), pt)
        b.call(tr, [dst, _element(b, w, c0, pt), i64(1), i64(m), rows, i64(nr), i64(m)])


def _triangular_solve(ctx: KernelContext) -> None:
    inst, b = ctx.inst, ctx.b
    (out,) = ctx.output_arrays()
    fill_padding(b, out)
    if inst.shape.element_count() == 0:
        return
    plan = _SolvePlan(inst)
    work = IrArray(plan.work_pointer(ctx), plan.work)
    if not plan.copy_in_tasks:
        _copy(b, work, ctx.operand_array(1))
    if not plan.t_is_a:
        _copy(b, IrArray(plan.t_pointer(ctx), plan.t), ctx.operand_array(0))
    fn = _routine(b.module, inst.shape.element_type, trsm_routine(plan.forward, plan.conj, plan.unit))
    _run_tasks(ctx, plan.tasks, plan.parallel, lambda tctx, t: _solve_task(tctx, plan, fn, t))
    if not (plan.work_in_place or plan.copy_in_tasks):
        _copy(b, out, work)


#: The kernel candidates of this module (``kernels.register_all``).
CHOLESKY = KernelCandidate("cholesky", _cholesky, scratch_bytes=_cholesky_scratch)
TRIANGULAR_SOLVE = KernelCandidate("triangular-solve", _triangular_solve, scratch_bytes=_solve_scratch)
