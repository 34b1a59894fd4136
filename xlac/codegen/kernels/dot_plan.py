"""Planning a dot: how a ``dot`` or dot output fusion (``fusion:kOutput``) of
f32 or f64 runs as a packed GEMM or a matrix-vector loop (:func:`plan_dot`).

A dot (both operands and the result of one type) is a batch of matrix
products ``C[b] = A[b] @ B[b]`` (see ``codegen/gemm.py`` for the index
groups).  The plan fixes, at compile time:

* **Orientation.**  The micro-kernel's vectors run along C's columns, so C's
  column group should be unit-stride in the result buffer.  When the M group
  is the unit-stride one (a column-major result), the product is computed
  transposed (``C^T = B^T A^T``: the operands swap roles); nothing is copied.
* **Accumulation.**  C is accumulated in the result buffer across the K
  blocks (the result of a kOutput fusion is overwritten by its epilogue at the
  last K block, tile by tile, while the tile is in cache).  When the result
  buffer cannot hold the accumulator (a fusion whose root converts or compares
  the dot's value), the whole K range is one block, so every tile is final
  when the micro-kernel returns.
* **Tiles.**  A tile whose C addresses are a plain row-strided block gets the
  micro-kernel's stores directly (``DotPlan.direct``); edge tiles and other
  layouts go through a tile on the stack.
* **Threads.**  Work is split into at most :data:`MAX_TASKS` tasks over the
  batch, then M, then N (each a multiple of the tile size); dots under
  :data:`TASK_FLOPS` per task stay one task.  When several tasks share a
  batch's B, each block of B is packed once, by the first task that needs
  it, into a scratch buffer the others then read (``DotPlan.shared_b``).
  Each task has its own region of the scratch space (indexed by the worker)
  for its packed A and B blocks (``DotPlan.task_plan``).
* **Operands in place.**  With a short M (at most :data:`B_DIRECT_MAX_M`
  rows) each element of B is used by one or two micro-panels of A only, so B
  is read in place (``DotPlan.b_direct``); otherwise A is, when its K index
  is unit-stride (a row-major A; ``DotPlan.a_direct``).
* **Matrix-vector forms** (M or N is 1, ``kind == "gemv"``): the form
  (``rows``: dot products along unit-stride K; ``cols``: axpys along
  unit-stride rows; ``generic``) and the tasks over batch and rows, and over
  K where those are too few (``grid[2]``: each task's partial sums in the
  scratch region ``partials``, added in task order after the tasks).
* **Native low-precision kernels** (``DotPlan.native``): a bf16 x bf16 dot
  and an 8-bit integer dot (s8/u8 x s8/u8 -> s32) run on AMX tiles where
  the target has them (and Linux grants this process the tile data), else
  on AVX512_BF16 / AVX512_VNNI vectors: ``gemm_native``'s and
  ``gemm_amx``'s micro-kernels through the GEMM library (operands from
  buffers, one stride per index group; AMX: 32 x 32 tiles, tasks split
  along M first);
  C accumulates in f32/s32 (in scratch when the dot's value or the fusion's
  root is of another type).  Other bf16 dots are widened (below); other
  8-bit integer dots are not planned (the op-expander made them f32 dots
  unless the target has VNNI or AMX-INT8).
* **Floats narrower than f32** (bf16, f16, the f8 and f4 types: operands of
  them or f32, at least one narrow; a result of one of them): the GEMM computes in f32 (``DotPlan.pt``).  The
  narrow operands are widened while packed (never read in place), and when
  the dot's value is not f32, C accumulates in an f32 buffer in scratch
  (``DotPlan.c_scratch``), rounded once to the dot's type by a pass over the
  result that also applies a fusion's epilogue.  Matrix-vector products of
  them keep the elemental loop.

Design notes and measurements: ``docs/dot.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from ...hlo.ir import HloInstruction
from ...shape import BF16, F32, F64, S8, S32, U8, PrimitiveType, Shape, strides
from .. import gemm_native
from ..gemm import GroupMap, MatrixView
from ..gemm_kernel import Blocking, blocking_for, elementwise_to_root, producers
from ..gemm_task import shared_b_elements
from ..kernel_choice import NotApplicable, plan_function
from ..task_grid import Grid, GridTable, class_splits, pow2_floor
from ._util import ScratchPlan

#: Split a dot into tasks of at least this many flops ...
TASK_FLOPS = 1 << 22
#: ... and into at most this many tasks.
MAX_TASKS = 32
#: Minimum task extent in M (in micro-panels of MR rows) and in N (in NR columns).
#: A task's M chunk spans at least one full M block (MC = 120 rows of 6-row
#: panels): a smaller chunk shrinks MC, and every M block streams the packed B
#: from L3 once more (2048^3 f32 on 2 threads: 32 tasks of 64 rows 52 ms, 16 of
#: 128 rows 42 ms; 1024^3, the batched and MLP products unchanged).
MIN_M_PANELS = 20
#: A task's N chunk spans at least this many NR panels: every task packs its
#: own A block, so tasks narrower in N pack the same rows of A more often
#: (1024^3 f32, 4 x 64 tiles on 2 threads: 8 x 4 tasks 1.5-2% slower than
#: 8 x 2, interleaved against jax.jit in two runs; 2048^3 and the batched
#: product keep their grids).
MIN_N_PANELS = 8
#: With threads: tasks of at least this many flops (about 10 us on one core) ...
THREADED_TASK_FLOPS = 1 << 21
#: ... at most this many ...
THREADED_MAX_TASKS = 128
#: ... and chunks down to this many micro-panels of M and NR panels of N,
#: when the single-thread minimums leave fewer than ``TASKS_PER_THREAD``
#: tasks per thread (the MLP's 256 x 784 x 512 had 2 tasks).
THREADED_MIN_M_PANELS = 8
THREADED_MIN_N_PANELS = 2
#: B is packed once for all tasks when its packed size is at most this.
SHARED_B_LIMIT = 256 << 20
#: Dots with at most this many rows (M) read B in place instead of packing it.
B_DIRECT_MAX_M = 16
#: Read A in place when its K index is unit-stride (``DotPlan.a_direct``;
#: tests switch it off to compare with packed A bit for bit).
READ_A_IN_PLACE = True
#: Bytes of one way of the L1 data cache (sets x 64-byte lines): addresses
#: this far apart share a set (48 KB 12-way and 32 KB 8-way L1s alike).
L1_WAY_BYTES = 4096
#: Rows per task of the axpy (column) form of matrix-vector products.
GEMV_COLS_ROWS = 1024
#: Matrix-vector tasks read at least this many matrix elements each.
GEMV_TASK_ELEMENTS = 1 << 17
#: A matrix-vector task splitting K takes at least this many of its elements.
GEMV_K_CHUNK = 256


@dataclass
class DotPlan:
    """How one dot runs (sizes in elements, after orientation: A is M x K,
    B is K x N, C is M x N, ``nb`` of each; scratch sizes in bytes)."""

    kind: str                 # "gemm" or "gemv"
    pt: object
    nb: int
    M: int
    N: int
    K: int
    swap: bool                # A = rhs^T, B = lhs^T, C = result^T
    blk: Blocking
    kc: int                   # K block actually used (K when C cannot accumulate in the result)
    mc: int
    nc: int
    acc_in_output: bool       # the result buffer holds the accumulator
    direct: bool              # full tiles are stored by the micro-kernel into the result
    shared_b: bool
    grid: tuple               # tasks along (batch, M, N): (nbt, nmt, nnt), balanced splits
    n_tasks: int
    scratch: ScratchPlan
    task_plan: ScratchPlan
    task_bytes: int
    gemv_form: str = ""       # "rows" | "cols" | "generic"
    b_direct: bool = False    # the micro-kernel reads B in place (a short M), no packing
    a_direct: bool = False    # the micro-kernel reads A's full row panels in place (K unit-stride)
    #: The grids per thread class (``task_grid``; split (batch, M, N), sizes
    #: (mc, nc)); ``grid``, ``mc``, ``nc`` and ``n_tasks`` are its one-thread grid.
    grids: GridTable | None = None
    #: Element types of A and B as stored (after orientation) and of the
    #: dot's value; ``pt`` is what the GEMM computes in (f32 for bf16/f16).
    a_pt: object = None
    b_pt: object = None
    dot_pt: object = None
    #: C accumulates in f32 in the scratch region "c" (the dot's value is
    #: bf16/f16), row-major over the dot's dimensions; rounded by a pass after.
    c_scratch: bool = False
    #: The native low-precision kernel's format (``gemm_native.Format``), or
    #: None; ``native_why``: why the native kernels of its types that it does
    #: not run do not run it (by kind: ``gemm_native.FEATURES``' keys).
    native: object = None
    native_why: dict | None = None

    @property
    def widened(self) -> bool:
        """Whether operands or result are narrower than ``pt`` (bf16, f16, f8, f4)."""
        return any(t is not self.pt for t in (self.a_pt, self.b_pt, self.dot_pt))

    @property
    def nkb(self) -> int:
        return -(-self.K // self.kc)

    @property
    def n_padded(self) -> int:
        return -(-self.N // self.blk.nr) * self.blk.nr


@dataclass
class DotInfo:
    """The dot's dimension groups: lhs/rhs batch, contracting and free dimensions,
    and the result's dimensions of each group."""
    lb: tuple
    rb: tuple
    lc: tuple
    rc: tuple
    lf: tuple
    rf: tuple
    ob: tuple
    olf: tuple
    orf: tuple
    nb: int
    M: int
    N: int
    K: int


def dot_info(dot: HloInstruction) -> DotInfo:
    """The dimension groups of ``dot`` and the sizes (elements) of its batch, M, N and K."""
    a = dot.attrs
    ls, rs = dot.operands[0].shape, dot.operands[1].shape
    lb, rb = tuple(a.get("lhs_batch_dims", ())), tuple(a.get("rhs_batch_dims", ()))
    lc, rc = tuple(a.get("lhs_contracting_dims", ())), tuple(a.get("rhs_contracting_dims", ()))
    lf = tuple(d for d in range(ls.rank) if d not in lb and d not in lc)
    rf = tuple(d for d in range(rs.rank) if d not in rb and d not in rc)
    nbd = len(lb)
    ob = tuple(range(nbd))
    olf = tuple(range(nbd, nbd + len(lf)))
    orf = tuple(range(nbd + len(lf), nbd + len(lf) + len(rf)))
    prod = lambda shape, dims: math.prod(shape.dimensions[d] for d in dims)  # noqa: E731
    return DotInfo(lb, rb, lc, rc, lf, rf, ob, olf, orf,
                   prod(ls, lb), prod(ls, lf), prod(rs, rf), prod(ls, lc))


# ---------------------------------------------------------------------------
# Which instructions, and the plan
# ---------------------------------------------------------------------------

def the_dot(inst: HloInstruction) -> HloInstruction | None:
    """The dot a kernel computes (the instruction, or the only dot of a kOutput fusion)."""
    if inst.opcode == "dot":
        return inst
    comp = inst.attrs.get("calls")
    if comp is None:
        return None
    dots = [i for i in comp.instructions if i.opcode == "dot"]
    if len(dots) != 1:
        return None
    dot = dots[0]
    if any(i.opcode in ("dot", "convolution") for o in dot.operands for i in producers(o)):
        return None
    if not elementwise_to_root(comp, dot):
        return None
    return dot


#: Floats narrower than f32: a GEMM computing in f32 takes them widened while packed.
NARROW_FLOATS = tuple(t for t in PrimitiveType if t.is_narrow_float)
#: Element types a GEMM computing in f32 takes.
NARROW_GEMM_TYPES = (F32, *NARROW_FLOATS)


#: 8-bit integers, the operands of the VNNI kernel.
INT8 = (S8, U8)


def supported(dot: HloInstruction) -> bool:
    """Whether ``dot`` is of f32 or f64 operands and result of one type, or
    of f32 and narrower floats (bf16, f16, f8, f4) with at least one narrower, or of
    8-bit integers with an s32 result (array result)."""
    if not dot.shape.is_array:
        return False
    types_ = [dot.shape.element_type] + [o.shape.element_type for o in dot.operands]
    return (types_[0] in (F32, F64) and all(t is types_[0] for t in types_)) or \
        (all(t in NARROW_GEMM_TYPES for t in types_) and any(t is not F32 for t in types_)) or \
        (types_[0] is S32 and all(t in INT8 for t in types_[1:]))


def native_kinds(a_pt, b_pt, dot_pt) -> tuple:
    """The native kernels (``gemm_native``) for a dot of these types, whatever
    the target, in the order preferred: AMX tiles, then vectors (bf16:
    ``"amxbf16"``, ``"bf16"``; 8-bit integers: ``"amxint8"``, ``"vnni"``), or ()."""
    if a_pt is BF16 and b_pt is BF16 and dot_pt in NARROW_GEMM_TYPES:
        return gemm_native.PREFERENCE["bf16"]
    if a_pt in INT8 and b_pt in INT8 and dot_pt is S32:
        return gemm_native.PREFERENCE["int8"]
    return ()


#: The AMX kernels' K block, in bytes of a packed row of A (and column of B):
#: 512 bytes (256 bf16, 512 int8) keeps a 32-row A panel and a 32-column B
#: panel at 16 KB each, both in L1 while the micro-kernel runs (1024 and
#: 2048 bytes measured the same or up to 10 % slower at 1024^3).
AMX_KC_BYTES = 512
#: Rows of A per M block: a 256 x KC A block (128 KB) stays in L2.
AMX_MC = 256


def native_blocking(M: int, N: int, kind: str | None = None, a_pt=None) -> Blocking:
    """The f32 tiles (``blocking_for``) in full 16-lane vectors: the native
    instructions are 512-bit only.  AMX: 2 x 2 tiles of 16 x 16 (one tile of
    rows or columns for a product at most 16 rows or columns)."""
    if kind is not None and kind.startswith("amx"):
        mr = 16 if M <= 16 else 32
        nr = 16 if N <= 16 else 32
        return Blocking(gemm_native.VW, mr, nr, AMX_KC_BYTES // a_pt.byte_size, AMX_MC, (2048 // nr) * nr)
    blk = blocking_for(F32, M, N)
    if blk.nr == 4 * gemm_native.VW:
        # (the wide tile as the native kernels were measured: 4 x 64, KC = 512)
        return Blocking(gemm_native.VW, 4, blk.nr, 512, 120, blk.nc)
    if blk.vw == gemm_native.VW:
        return blk
    return Blocking(gemm_native.VW, blk.mr, gemm_native.VW, blk.kc, blk.mc, (2048 // gemm_native.VW) * gemm_native.VW)


def compute_type(dot: HloInstruction):
    """What the GEMM of ``dot`` computes in: f32 for the narrower floats (as XLA:CPU
    accumulates halves), else the dot's type."""
    return F32 if dot.shape.element_type in NARROW_GEMM_TYPES else dot.shape.element_type


def scratch_c_shape(dot: HloInstruction) -> Shape:
    """The accumulator in scratch (f32, or s32 for 8-bit integers) of a dot whose
    value or fusion root has another type: its dimensions, row-major."""
    return Shape(compute_type(dot), tuple(dot.shape.dimensions))


@plan_function
def plan_dot(inst: HloInstruction) -> DotPlan:
    """How to run ``inst`` (a dot or a kOutput fusion); None when the GEMM
    kernels decline it (``plan_dot.why_not(inst)`` says why)."""
    dot = the_dot(inst)
    if dot is None:
        raise NotApplicable("not one dot with an elementwise epilogue")
    if not supported(dot) or not inst.shape.is_array:
        raise NotApplicable("not a dot of f32 or f64 operands and result of one type, nor of narrower floats"
                            ", nor of 8-bit integers to s32")
    if tuple(inst.shape.dimensions) != tuple(dot.shape.dimensions):
        raise NotApplicable("the epilogue changes the dot's dimensions")
    info = dot_info(dot)
    nb, M, N, K = info.nb, info.M, info.N, info.K
    if min(nb, M, N, K) == 0:
        # An empty result, or all zeros: the elemental loop does it.
        raise NotApplicable("an empty result or contraction")
    pt = compute_type(dot)
    dot_pt = dot.shape.element_type
    out_shape = inst.shape
    # (a dot rounded to bf16 and then converted back to f32 by the epilogue
    # still needs the rounding: C accumulates in the result only when the
    # dot's own value is ``pt``)
    acc_in_output = out_shape.element_type is pt and dot_pt is pt
    lpt, rpt = (o.shape.element_type for o in dot.operands)
    # The first native kernel the target runs; why each one before it does not.
    kind, native_why = None, {}
    for k in native_kinds(lpt, rpt, dot_pt):
        why = gemm_native.unavailable(k)
        if why is None:
            kind = k
            break
        native_why[k] = why
    if pt is S32 and kind is None:
        raise NotApplicable(f"8-bit integers without {gemm_native.INSTRUCTION['vnni']}: {native_why['vnni']}")
    # The native kernels run in the library, which accumulates C in a buffer
    # of its type: in scratch when the fusion's root has another.
    c_scratch = dot_pt is not pt or (kind is not None and not acc_in_output)
    if c_scratch:
        out_shape = scratch_c_shape(dot)
    ost = strides(out_shape)
    g_m = GroupMap(info.olf, out_shape.dimensions, ost)
    g_n = GroupMap(info.orf, out_shape.dimensions, ost)
    blk = blocking_for(pt, wide=False)
    flops = 2 * nb * M * N * K
    esize = pt.byte_size

    if M == 1 or N == 1:
        if pt is F32 and (lpt, rpt, dot_pt) != (F32, F32, F32):
            raise NotApplicable("a matrix-vector product of bf16/f16")
        if pt is S32:
            raise NotApplicable("a matrix-vector product of 8-bit integers")
        swap = N != 1
        Mv = N if swap else M
        # The matrix operand (A after orientation) and its groups.
        side = 1 if swap else 0
        a_shape = dot.operands[side].shape
        a_rows = info.rf if swap else info.lf
        a_k = info.rc if swap else info.lc
        a_st = strides(a_shape)
        g_rows = GroupMap(a_rows, a_shape.dimensions, a_st)
        g_k = GroupMap(a_k, a_shape.dimensions, a_st)
        a_is_param = operand_is_buffer(inst, dot, side)
        if a_is_param and g_k.affine and g_k.stride == 1:
            form = "rows"
        elif a_is_param and g_rows.affine and g_rows.stride == 1 and Mv > 1:
            form = "cols"
        else:
            form = "generic"
        T = pow2_floor(max(1, min(MAX_TASKS, nb * Mv * K // GEMV_TASK_ELEMENTS)))
        nbt, nmt, nkt = 1, 1, 1
        if T > 1:
            if nb >= T:
                nbt = T
            else:
                nbt = nb
                # The axpy form splits K first: each task then streams whole
                # matrix rows, one contiguous run of memory (row chunks of
                # 16 KB apart took 1.6x the time at 4096 x 4096).  The
                # partial sums per task are added in task order after the
                # tasks (the same bits whatever runs them).
                if nb == 1 and form == "cols":
                    nkt = pow2_floor(max(1, min(T, K // GEMV_K_CHUNK)))
                min_rows = GEMV_COLS_ROWS if form == "cols" else 64
                nmt = pow2_floor(min(max(1, T // (nb * nkt)), max(1, Mv // min_rows)))
                if nb == 1 and form == "rows":
                    # The tasks the rows leave split K (a long dot product).
                    nkt = pow2_floor(max(1, min(T // nmt, K // GEMV_K_CHUNK)))
        cm = -(-Mv // nmt)
        task = ScratchPlan()
        task.add("x", K * esize)
        if form == "cols" and nkt == 1:
            task.add("y", cm * esize)
        n_tasks = nbt * nmt * nkt
        scratch = ScratchPlan()
        scratch.add("counters", 64)
        scratch.add("tasks", n_tasks * task.size)
        if nkt > 1:
            scratch.add("partials", nkt * Mv * esize)
        return DotPlan("gemv", pt, nb, Mv, 1, K, swap, blk, K, 0, 0, acc_in_output, False, False,
                       (nbt, nmt, nkt), n_tasks, scratch, task, task.size, form, a_pt=pt, b_pt=pt, dot_pt=pt)

    # Orientation: C's columns unit-stride if either group is (direct stores).
    # (Choosing the orientation that wastes less on padded edge tiles did not
    # pay: packing the transposed operand and the element-wise stores cost
    # more; narrow tiles for a small N or M do better, see blocking_for.)
    swap = False
    if acc_in_output:
        n_unit = g_n.affine and g_n.stride == 1
        m_unit = g_m.affine and g_m.stride == 1
        swap = m_unit and not n_unit
    # The orientation the GEMM library reads, when it reads only the other
    # (B's columns in two strided levels, read as A's rows swapped).
    if (acc_in_output or c_scratch) and SWAP_FOR_LIBRARY \
            and library_layout_why(inst, dot, info, swap, c_scratch) is not None \
            and library_layout_why(inst, dot, info, not swap, c_scratch) is None:
        swap = not swap
    if swap:
        M, N = N, M
        g_m, g_n = g_n, g_m
    a_pt, b_pt = (rpt, lpt) if swap else (lpt, rpt)
    native = None
    if kind is not None:
        why = native_layout_why(inst, dot, info, swap, c_scratch)
        if why is None:
            native = gemm_native.Format(kind, a_pt, b_pt)
        elif pt is S32:
            raise NotApplicable(f"8-bit integers: {why}, which the {gemm_native.INSTRUCTION[kind]} kernel "
                                "(in the GEMM library) does not read")
        else:
            native_why.update((k, why) for k in native_kinds(lpt, rpt, dot_pt) if k not in native_why)
    blk = native_blocking(M, N, kind, a_pt) if native is not None else blocking_for(pt, M, N)
    mr, nr = blk.mr, blk.nr
    direct = (acc_in_output or c_scratch) and g_n.affine and g_n.stride == 1 and g_m.affine
    kc = min(blk.kc, K) if acc_in_output or c_scratch else K
    m_panels, n_panels = -(-M // mr), -(-N // nr)

    # Task grids, one per thread class (``task_grid``): batch first, then M,
    # then N; powers of two of balanced chunks (whole micro-panels, sizes
    # differing by one at most).  The one-thread grid is the one the
    # compile-time planner always chose.
    grids = gemm_grids(nb, m_panels, n_panels, flops, blk, native is not None and native.amx)
    nbt, nmt, nnt = grids.serial.split
    mc, nc = grids.serial.sizes
    n_tasks = nbt * nmt * nnt
    nkb = -(-K // kc)
    n_padded = n_panels * nr
    # A short M reuses each element of B only a few times: packing B would
    # cost more than the micro-kernel reading it in place (when its rows are
    # unit-stride and its K group has one stride).
    b_side = 0 if swap else 1
    g_bk, g_bn = _operand_groups(dot, b_side, *((info.lc, info.lf) if swap else (info.rc, info.rf)))
    b_direct = (M <= B_DIRECT_MAX_M and operand_is_buffer(inst, dot, b_side) and b_pt is pt
                and g_bn.affine and g_bn.stride == 1 and g_bk.affine)
    # B is packed once for all tasks by grids with several M chunks (their
    # tasks along M read the same B); the kernel asks the chosen grid.
    can_share_b = not b_direct and nb * K * n_padded * esize <= SHARED_B_LIMIT
    shared_b = can_share_b and any(g.split[1] > 1 for g in grids.grids)
    # A with unit-stride K (a row-major A) is read in place, MR row pointers
    # broadcasting one element each per k, as XNNPACK's kernels do; only a
    # partial last row panel is packed (zero-padded).  Packing A cost each
    # task a copy of its rows per N chunk (1024^3 f32 on 2 threads: 3% of
    # the time; the batched matmul 6%, the MLP 4%; 2048^3 the same within
    # noise), for the same bits.
    a_side = 1 if swap else 0
    g_ak, g_am = _operand_groups(dot, a_side, *((info.rc, info.rf) if swap else (info.lc, info.lf)))
    a_direct = (READ_A_IN_PLACE and not b_direct and operand_is_buffer(inst, dot, a_side) and a_pt is pt
                and g_ak.affine and g_ak.stride == 1 and g_am.affine
                and not (N > 2 * nr and rows_share_l1_sets(g_am.stride * esize, mr)))
    task = ScratchPlan()
    # (native panels: kc padded to the format's k_step, in words of ``group``
    # k per row or column of A, plus a header row for B)
    words, header = kc, 0
    if native is not None:
        words, header = -(-kc // native.k_step) * (native.k_step // native.group), native.header
    # A task's packed A block: with A read in place, only a partial last row
    # panel (fewer than MR rows) is ever packed.
    task.add("a", (mr if a_direct else max(g.sizes[0] for g in grids.grids)) * words * esize)
    # A task's own packed B block: always, unless B is read in place (then
    # only its partial last panel); with a shared B a task packs its own copy
    # of a block another task is packing at that moment (gemm.pack_once).
    task.add("b", (nr if b_direct else max(g.sizes[1] for g in grids.grids)) * (words + header) * esize)
    scratch = ScratchPlan()
    scratch.add("counters", 64)
    if shared_b:
        scratch.add("bshared", nb * shared_b_elements(K, kc, n_padded, native) * esize)
        scratch.add("bflags", nb * nkb * n_panels * 4)
    if c_scratch:
        scratch.add("c", nb * M * N * esize)
    # A region per worker that may run at once (a worker keeps it from task to task).
    scratch.add("tasks", grids.max_workers * task.size)
    return DotPlan("gemm", pt, nb, M, N, K, swap, blk, kc, mc, nc, acc_in_output, direct, shared_b,
                   (nbt, nmt, nnt), n_tasks, scratch, task, task.size, b_direct=b_direct, a_direct=a_direct,
                   grids=grids, a_pt=a_pt, b_pt=b_pt, dot_pt=dot_pt, c_scratch=c_scratch, native=native,
                   native_why=native_why)


#: The AMX kernels' task grid: chunks of at least (M, N) panels of 32 rows /
#: columns, split along M (every task packs its own A block, so each N
#: chunk packs A again; B is packed once for all), and tasks of 16x the f32
#: GEMM's flops (the tiles do 5-10x its work per cycle).  1024^3 bf16 -> f32
#: on one thread, interleaved: the f32 grid's minimums (4 N chunks of 256
#: columns) 2.69 ms, these (8 M chunks, N whole) 2.24 ms; 2 threads 2.50 /
#: 1.90 ms; s8 -> s32 1.71 / 1.17 ms.
AMX_MIN_PANELS = (4, 32)
AMX_THREADED_MIN_PANELS = (2, 32)
AMX_FLOPS_FACTOR = 16


def gemm_grids(nb: int, m_panels: int, n_panels: int, flops: int, blk: Blocking, amx: bool = False) -> GridTable:
    """The task grid of a GEMM for each thread class: split (batch, M, N) and
    sizes (mc, nc).  One thread: ``flops / TASK_FLOPS`` tasks, at most
    ``MAX_TASKS``, chunks of at least ``MIN_M_PANELS`` x ``MIN_N_PANELS``.
    ``p`` threads: the same split with up to ``TASKS_PER_THREAD * p`` tasks
    (no task under ``THREADED_TASK_FLOPS``, at most ``THREADED_MAX_TASKS``)
    when that is more; then, while there are fewer, the longer chunk halved
    down to ``THREADED_MIN_M_PANELS`` x ``THREADED_MIN_N_PANELS``."""
    mins, tmins, scale = ((MIN_M_PANELS, MIN_N_PANELS), (THREADED_MIN_M_PANELS, THREADED_MIN_N_PANELS), 1)
    if amx:
        mins, tmins, scale = AMX_MIN_PANELS, AMX_THREADED_MIN_PANELS, AMX_FLOPS_FACTOR
    splits = class_splits(flops, (nb, m_panels, n_panels), (1, blk.mr, blk.nr), (0, *mins), tmins,
                          (TASK_FLOPS * scale, MAX_TASKS), (THREADED_TASK_FLOPS * scale, THREADED_MAX_TASKS))
    grids = [Grid(parts, _gemm_blocks(parts, m_panels, n_panels, blk)) for parts in splits]
    return GridTable(tuple(grids))


def _gemm_blocks(parts: tuple, m_panels: int, n_panels: int, blk: Blocking) -> tuple:
    """(mc, nc) of a task of grid ``parts``: M blocks of about MC rows that
    split the task's chunk evenly (a chunk of 132 rows, matmul 1024^3 and
    2048^3, ran as 120 + 12, and the 12-row block streamed the task's whole
    B block through L1 for two micro-panels); N blocks of NC, or the chunk."""
    mr, nr = blk.mr, blk.nr
    cm_panels = -(-m_panels // parts[1])
    cn = -(-n_panels // parts[2]) * nr
    m_blocks = max(1, round(cm_panels * mr / blk.mc))
    mc = -(-cm_panels // m_blocks) * mr
    nc = min(blk.nc, cn)
    return mc, nc


def rows_share_l1_sets(stride_bytes: int, rows: int) -> bool:
    """Whether ``rows`` rows ``stride_bytes`` apart fall into fewer L1 sets
    than rows (the row addresses repeat modulo :data:`L1_WAY_BYTES` sooner):
    a micro-kernel reading them in place then evicts its own lines and the
    B micro-panel's (1024 x 1024 f32: every row in one set).  Such an A is
    packed when several B panels reuse it (one thread, 1024^3: 5 % faster)."""
    return L1_WAY_BYTES // math.gcd(stride_bytes, L1_WAY_BYTES) < rows


def _operand_groups(dot: HloInstruction, side: int, k_dims, free_dims) -> tuple:
    """(contracting group, free group) of operand ``side`` of ``dot`` in its buffer."""
    shape = dot.operands[side].shape
    st = strides(shape)
    return GroupMap(k_dims, shape.dimensions, st), GroupMap(free_dims, shape.dimensions, st)


def library_layout_why(inst: HloInstruction, dot: HloInstruction, info: DotInfo, swap: bool,
                       c_scratch: bool) -> str | None:
    """Why the GEMM library cannot read this dot's operands and result, or None:
    it reads buffers (no fused operand) through one stride per column group
    and C's row group, and at most two per batch, K and A's row group
    (:func:`library_levels`)."""
    if not (operand_is_buffer(inst, dot, 0) and operand_is_buffer(inst, dot, 1)):
        return "a fused operand"
    A, B, C = library_views(inst, swap, c_scratch, info, dot)
    if library_levels(A, B, C) is None:
        return "an index group that is not one stride"
    return None


def native_layout_why(inst: HloInstruction, dot: HloInstruction, info: DotInfo, swap: bool,
                      c_scratch: bool) -> str | None:
    """:func:`library_layout_why` for the native low-precision kernels, whose
    packing reads rows and K through one stride (two levels only for the
    batch)."""
    why = library_layout_why(inst, dot, info, swap, c_scratch)
    if why is None:
        levels = library_levels(*library_views(inst, swap, c_scratch, info, dot))
        if levels.m is not None or levels.k is not None:
            return "rows or K in two strided levels, which the native kernels' packing does not read"
    return why


def library_views(inst, swap: bool, c_scratch: bool, info: DotInfo, dot) -> tuple:
    """A, B and C as strided views (shapes only: ``ptr`` is a placeholder)."""
    ls, rs = dot.operands[0].shape, dot.operands[1].shape
    if inst.opcode != "dot":
        ls, rs = (inst.operands[o.parameter_number].shape for o in dot.operands)
    mark = object()
    if not swap:
        A = MatrixView(ls, info.lb, info.lf, info.lc, mark)
        B = MatrixView(rs, info.rb, info.rc, info.rf, mark)
    else:
        A = MatrixView(rs, info.rb, info.rf, info.rc, mark)
        B = MatrixView(ls, info.lb, info.lc, info.lf, mark)
    oc, orow = (info.olf, info.orf) if swap else (info.orf, info.olf)
    C = MatrixView(scratch_c_shape(dot) if c_scratch else inst.shape, info.ob, orow, oc, mark)
    return A, B, C


#: Whether the GEMM library takes A's rows and the K group in two levels
#: (``library_levels``).  Off: those dots keep a GEMM of the module's own.
#: The library's two-level variants compile once per machine instead of
#: ~30-40 ms of LLVM per distinct dot (the GPT steps compile 8-22% faster,
#: the ViT step 10%); on the model set's small attention GEMMs
#: (64 x 32 x 32) the module's code with constant strides runs a little
#: faster (those steps 0-3% per call; docs/compile_time.md, section 16).
TWO_LEVEL_ROWS_AND_K = True
#: A dot the GEMM library reads only in the other orientation (B's columns in
#: two strided levels: ``jax.image.resize``'s contraction over an image's
#: middle dimension, read as A's rows once swapped) takes that orientation and
#: the library: jax's bilinear resize of 8x128x128x16 compiles in 0.05 s
#: instead of 0.29 (XLA: 0.11) and runs in 27 ms instead of 21 (C written
#: with a column stride; XLA: 67 ms).
SWAP_FOR_LIBRARY = True


class Levels(NamedTuple):
    """How the GEMM library indexes a dot's groups (:func:`library_levels`):
    per two-level group, (inner count, [(inner stride, outer stride) per
    view]); ``m`` and ``k`` are None when the group is one stride."""

    batch: tuple
    m: tuple | None
    k: tuple | None


def library_levels(A, B, C) -> Levels | None:
    """The two-level index groups the library reads ``A``, ``B`` and ``C``
    through, or None when it cannot: the batch group (:func:`batch_levels`),
    A's row (M) group and the K group (A's columns and B's rows together)
    may each be two strides (attention's heads and head dimension, not one
    stride apart: ``[B, H, D, S]`` contracting (H, D), rows (B, S)) when
    ``TWO_LEVEL_ROWS_AND_K``; B's and C's columns and C's rows must be one."""
    if not all(g.affine for g in (B.gc, C.gc, C.gr)):
        return None
    batch = batch_levels(A, B, C)
    if not TWO_LEVEL_ROWS_AND_K and not (A.gr.affine and A.gc.affine and B.gr.affine):
        return None
    m = None if A.gr.affine else group_levels(A.gr)
    k = None if A.gc.affine and B.gr.affine else group_levels(A.gc, B.gr)
    if batch is None or (m is None and not A.gr.affine) or (k is None and not (A.gc.affine and B.gr.affine)):
        return None
    return Levels(batch, m, k)


def group_levels(*groups) -> tuple | None:
    """(inner count, [(inner stride, outer stride) per group]) of ``groups``
    (GroupMaps of the same dimensions in the same order), split in two where
    both levels are one stride apart in every group; None when no split
    does.  Unsplit when one stride does (inner count: all of them)."""
    sizes = groups[0].sizes
    n = math.prod(sizes)
    for cut in range(max(1, len(sizes))):       # 0: one level
        levels = [(GroupMap(range(cut, len(sizes)), g.sizes, g.strides),
                   GroupMap(range(cut), g.sizes, g.strides)) for g in groups]
        if all(inner.affine and outer.affine for inner, outer in levels):
            inner_count = math.prod(sizes[cut:]) if cut else max(1, n)
            return inner_count, [(inner.stride, outer.stride) for inner, outer in levels]
    return None


def batch_levels(*views) -> tuple | None:
    """:func:`group_levels` of the batch group of ``views`` (A, B, C: the same
    batch dimensions in the same order)."""
    return group_levels(*(v.gb for v in views))


def operand_is_buffer(inst: HloInstruction, dot: HloInstruction, k: int) -> bool:
    """Whether operand ``k`` of the dot is read from a buffer (not a fused producer)."""
    return inst.opcode == "dot" or dot.operands[k].opcode == "parameter"


def scratch_bytes(me, inst: HloInstruction) -> int:
    """The scratch (bytes) the dot kernels need for ``inst`` (0 when they decline it)."""
    plan = plan_dot(inst)
    return plan.scratch.size if plan is not None else 0

