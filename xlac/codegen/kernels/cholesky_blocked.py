"""A big f32/f64 ``cholesky`` (spec: *Cholesky*) as one kernel: the kernel
candidate around the blocked factorisation of ``cholesky_up_looking`` (the
up-looking ``potrf`` in place in the result, its bulk in calls of the GEMM
library; a loop on one thread, a ``parallel_for`` per block row on several).

This module decides where it applies (f32/f64 matrices bigger than BLOCK),
the blocks (:func:`row_blocks`), the tasks of a call (one per thread of the
call, chosen at run time), and moves operands or results of other layouts
through row-major scratch copies.  Batch elements go one after the other.

Why one kernel rather than blocks of HLO (XLA's CholeskyExpander, dots
around small cholesky and triangular-solve ops): as HLO every operand of a
dot is a slice copied out of the factor (the GEMM library reads buffers),
every result is copied back in (``dynamic-update-slice``), the small solves
transpose their panels in and out, and each of the ~40 ops is a kernel to
dispatch and to compile (at 512 x 512 the copies and dispatch are about half
the time, the kernels ~250 ms of LLVM time).  Here the GEMM reads the factor
where it is and the module's kernel is glue around library code
(``KernelCandidate.glue``: compiled with the cheap pipeline).
"""
from __future__ import annotations

import math

from ...hlo.ir import HloInstruction
from ...shape import F32, F64
from ..emitter import KernelContext, ModuleEmitter
from ..ir_array import IrArray, i64
from ..kernel_choice import KernelCandidate, plan_function
from ..loops import fill_padding
from ..task_grid import thread_count
from . import cholesky_up_looking, gemm_update
from ._util import ScratchPlan, dyn_range
from .linalg import _copy, _element, _is_row_major, _row_major

#: Matrices of at most this many rows take the unblocked kernel.
BLOCK = 64
#: Bytes of a block's rows of elements (the diagonal blocks ``potrf``
#: factors serially; the updates' M): 64 f32 rows, 32 f64 ones
#: (:func:`block_rows`).  On the 2-core VM, 512 x 512 on two threads: f32
#: took 0.294 ms in blocks of 64 and 0.323 in blocks of 32; f64 0.541 ms in
#: blocks of 64 and 0.509 in blocks of 32 (one thread 0.885 and 0.829;
#: 256 to 1024 rows 4-8% faster too); see docs/linalg.md.
BLOCK_BYTES = 256
#: The most row blocks: a bigger matrix takes bigger blocks (whole
#: multiples of :func:`block_rows`), so the kernel's code and its scratch
#: stay bounded.
MAX_BLOCKS = 32
#: Tasks of a step when the thread count is unknown (an object built for an
#: older ``xlac_run_options``).
UNKNOWN_TASKS = 2
#: Matrices with rows of at most this many bytes run on one thread: their
#: steps are too short to share (on the 2-core VM, 256 x 256 f32 took 0.083
#: ms on one thread and 0.099 on two; 384 x 384 0.215 and 0.180).
ONE_THREAD_ROW_BYTES = 1024


def applies(inst: HloInstruction) -> str | None:
    if inst.shape.element_type not in (F32, F64):
        return "not f32 or f64"
    n = inst.shape.dimensions[-1]
    if n <= BLOCK:
        return f"a matrix of at most {BLOCK} rows (the unblocked kernel)"
    return None


def block_rows(pt) -> int:
    """Rows of a block of elements of ``pt``: BLOCK_BYTES of them."""
    return BLOCK_BYTES // pt.byte_size


def block_size(n: int, pt) -> int:
    """Rows of a block of an n x n factorisation: :func:`block_rows`, or a
    multiple of it when n has more than MAX_BLOCKS blocks of that."""
    rows = block_rows(pt)
    return rows * max(1, -(-n // (rows * MAX_BLOCKS)))


def row_blocks(n: int, pt) -> list[tuple[int, int]]:
    """``(start, rows)`` of the blocks of an n x n factorisation (n > BLOCK):
    :func:`block_size` rows, the last one the rest (:func:`gemm_update.blocks_of`)."""
    return gemm_update.blocks_of(n, block_size(n, pt))


class _Plan:
    def __init__(self, inst: HloInstruction):
        self.pt = inst.shape.element_type
        self.n = inst.shape.dimensions[-1]
        self.batch = math.prod(inst.shape.dimensions[:-2])
        self.factor = cholesky_up_looking.Plan(inst, row_blocks(self.n, self.pt))
        self.scratch = ScratchPlan()
        self.scratch.add("factor", self.factor.scratch.size)
        # Other layouts go through row-major copies of the whole batch.
        self.a_copy = not _is_row_major(inst.operands[0].shape)
        self.out_copy = not _is_row_major(inst.shape)
        if self.a_copy:
            self.scratch.add("a", inst.shape.byte_size())
        if self.out_copy:
            self.scratch.add("out", inst.shape.byte_size())


#: ``inst``'s plan, made once (scratch sizing and emission both ask).
_plan = plan_function(_Plan)


def _scratch(me: ModuleEmitter, inst: HloInstruction) -> int:
    return _plan(inst).scratch.size


def _tasks(ctx: KernelContext):
    """Tasks of a step: the threads of this call, at most
    ``cholesky_up_looking.MAX_TASKS`` (UNKNOWN_TASKS when the run options
    do not say); one for a small matrix (ONE_THREAD_ROW_BYTES)."""
    b = ctx.b
    shape = ctx.inst.shape
    if shape.dimensions[-1] * shape.element_type.byte_size <= ONE_THREAD_ROW_BYTES:
        return i64(1)
    threads = thread_count(b, ctx.opts_arg)
    threads = b.select(b.icmp_signed("<", threads, i64(1)), i64(UNKNOWN_TASKS), threads)
    most = i64(cholesky_up_looking.MAX_TASKS)
    return b.select(b.icmp_signed(">", threads, most), most, threads)


def _emit(ctx: KernelContext) -> None:
    inst, b = ctx.inst, ctx.b
    (out,) = ctx.output_arrays()
    fill_padding(b, out)
    if inst.shape.element_count() == 0:
        return
    plan = _plan(inst)
    ctx.long_running = True
    base = ctx.scratch_pointer()
    a = ctx.operand_array(0)
    if plan.a_copy:
        a_rm = IrArray(plan.scratch.pointer(b, base, "a"), _row_major(inst.shape))
        _copy(b, a_rm, a)
        a = a_rm
    result = IrArray(plan.scratch.pointer(b, base, "out"), _row_major(inst.shape)) if plan.out_copy else out
    scratch = plan.scratch.pointer(b, base, "factor")
    tasks = _tasks(ctx)
    n, pt = plan.n, plan.pt
    with dyn_range(b, i64(0), i64(plan.batch), name="chol.e") as e:
        at = b.mul(e, i64(n * n))
        a_e, out_e = _element(b, a.ptr, at, pt), _element(b, result.ptr, at, pt)
        cholesky_up_looking.factor(ctx, plan.factor, a_e, out_e, scratch, tasks)
    if plan.out_copy:
        _copy(b, out, result)


#: The kernel candidate (``kernels.register_all``: tried before the unblocked one).
CHOLESKY_BLOCKED = KernelCandidate("cholesky.blocked", _emit, applies=applies, scratch_bytes=_scratch, glue=True)
