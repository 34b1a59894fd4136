"""``dot`` and dot output fusions (``fusion:kOutput``) as a packed, tiled GEMM.

A dot of f32 or f64 (both operands and the result of one type) is a batch of
matrix products ``C[b] = A[b] @ B[b]`` (see ``codegen/gemm.py`` for the index
groups, packing and the micro-kernel).  This module decides how to run one:

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
  micro-kernel's stores directly; edge tiles and other layouts go through a
  tile on the stack and a loop over the valid elements (which also applies
  the epilogue and addresses C through its layout, whatever it is).
* **Threads.**  Work is split into at most :data:`MAX_TASKS` tasks over the
  batch, then M, then N (each a multiple of the tile size), run through
  ``KernelContext.parallel_for``; dots under :data:`TASK_FLOPS` per task
  stay one task.  When several tasks share a batch's B, each block of B is
  packed once, by the first task that needs it, into a scratch buffer the
  others then read (``gemm.pack_once``), else each task packs its B blocks
  itself.  Each task has its own region of the scratch space (indexed by
  the worker) for its packed A and B blocks.
* **Short M** (at most :data:`B_DIRECT_MAX_M` rows): each element of B is used
  by one or two micro-panels of A only, so B is not packed; a micro-kernel
  variant reads it in place (row-major B), only a partial last panel packed.
* **Fused operands.**  A dot operand computed inside the fusion (a transpose,
  a negate, ... fused ahead of the dot) is read through its elemental
  generator while packing, so it is computed once per packing, not once per
  multiply.
* **Matrix-vector forms** (M or N is 1) do not pack: the vector is copied
  into a contiguous buffer, then each row is a vectorised dot product
  (contracting dimension unit-stride), or the columns are added up with
  vectorised axpys (rows unit-stride), or a scalar loop for other layouts.

Other element types (integers, halves, complex) and dots with mixed types
keep the elemental loop (the ``loop`` kernel candidate).  Design notes and
measurements: ``docs/dot.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...hlo.opcodes import OPCODES
from ...shape import F32, F64, strides
from .. import gemm_library, types
from ..elemental import ElementalEmitter
from ..emitter import KernelContext
from ..gemm import (GroupMap, Loop, MatrixView, add, axpy_contiguous, dot_contiguous,
                    I1, I32, grab_tasks, imin, intrinsic, micro_kernel, mul_const, pack_block, pack_once,
                    pack_panel, read_element)
from ..ir_array import Index, IrArray, i64
from ..kernel_choice import KernelCandidate, NotApplicable, plan_function
from ..target import host_vector_bits
from ._util import I8, ScratchPlan, fill_padding

PTR = ir.PointerType()

#: Run plain GEMMs through the shared GEMM library (``codegen/gemm_library.py``)
#: rather than emitting the loop nest into every module (tests switch it off to
#: compare the two).
USE_LIBRARY = True
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
#: B is packed once for all tasks when its packed size is at most this.
SHARED_B_LIMIT = 256 << 20
#: Dots with at most this many rows (M) read B in place instead of packing it.
B_DIRECT_MAX_M = 16
#: Read A in place when its K index is unit-stride (``DotPlan.a_direct``;
#: tests switch it off to compare with packed A bit for bit).
READ_A_IN_PLACE = True
#: Rows per task of the axpy (column) form of matrix-vector products.
GEMV_COLS_ROWS = 1024
#: Matrix-vector tasks read at least this many matrix elements each.
GEMV_TASK_ELEMENTS = 1 << 17


@dataclass(frozen=True)
class Blocking:
    vw: int   # elements per vector register
    mr: int   # micro-tile rows
    nr: int   # micro-tile columns (a multiple of vw)
    kc: int   # K block
    mc: int   # M block (a multiple of mr)
    nc: int   # N block of a task that packs its own B (a multiple of nr)


def blocking_for(pt, M: int | None = None, N: int | None = None, wide: bool = True) -> Blocking:
    """Tile sizes for ``pt`` on the host, for a product of M x N tiles.

    The default tile is 6 x (2 vectors): 12 accumulators cover the FMA latency
    (4 cycles x 2 pipes on Zen 5) and each k step loads 2 vectors of B and
    broadcasts 6 scalars of A.  With AVX-512, a product at least 4 vectors
    wide and more than 8 rows uses 4 x (4 vectors) instead (``wide``; the
    convolution's indirect micro-kernel keeps the default): 16 accumulators,
    4 broadcasts per 16 FMAs.  In isolation every tile from 4 x 64 to 12 x 32
    measured within a few % of each other (~260 GFLOP/s on one core, near
    the 2 x 16-lane FMA peak); in the whole GEMM on 2 threads 4 x 64 was 3-6%
    faster (matmul 1024^3 and 2048^3, the batched matmul, the MLP).  A narrow
    N uses one vector (12 x 1 vector, or half-width vectors for N <= vw/2)
    and a short M (<= 8) uses M rows, so that little of the padded tile is
    wasted.  KC = 256 (f32) keeps a B micro-panel (KC x NR) in L1/L2 and an
    A block (MC x KC) in L2; the 4 x 64 tile takes KC = 512 (its B
    micro-panel is in L2 either way).
    """
    bits = host_vector_bits()
    vw = bits // (8 * pt.byte_size)
    mr, nr = (6, 2 * vw) if bits >= 256 else (4, 2 * vw)
    if wide and bits >= 512 and (M is None or M > 8) and (N is None or N >= 4 * vw):
        mr, nr = 4, 4 * vw
    if N is not None and N <= vw:
        if N <= vw // 2 and vw >= 8:
            vw //= 2
        nr = vw
        mr = 12 if bits >= 512 else 6
    if M is not None and M <= 8:
        mr = max(2, M)
    kc = 256 if pt is F32 else 192
    if (mr, nr) == (4, 4 * vw) and pt is F32:
        # Half as many passes over C (each reloads and stores the tiles), the
        # A block (MC x KC, 256 KB) and a B micro-panel (128 KB) still in L2:
        # 1.3-2.3% faster than KC = 256 at 1024^3 and 2048^3 on 2 threads.
        kc = 512
    mc = max(mr, (120 // mr) * mr)
    nc = (2048 // nr) * nr
    return Blocking(vw, mr, nr, kc, mc, nc)


@dataclass
class DotPlan:
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

def _the_dot(inst: HloInstruction) -> HloInstruction | None:
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
    if any(i.opcode in ("dot", "convolution") for o in dot.operands for i in _producers(o)):
        return None
    if not _elementwise_to_root(comp, dot):
        return None
    return dot


def _elementwise_to_root(comp, dot: HloInstruction) -> bool:
    """Every path from the dot to the fusion root goes through elementwise ops of
    the dot's dimensions (the epilogue reads the dot at the index it writes,
    which the fusion pass guarantees for kOutput fusions; checked anyway)."""
    comp.compute_users()
    root = comp.root
    seen, stack = set(), [dot]
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if cur is not dot:
            info = OPCODES.get(cur.opcode)
            if info is None or not info.is_elementwise or cur.shape.dimensions != dot.shape.dimensions:
                return False
        if cur is root:
            continue
        if not cur.users:
            return False
        stack.extend(cur.users)
    return True


def _producers(inst: HloInstruction) -> list:
    seen, stack, out = set(), [inst], []
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        out.append(cur)
        stack.extend(cur.operands)
    return out


def supported(dot: HloInstruction) -> bool:
    pt = dot.shape.element_type
    return (pt in (F32, F64) and all(o.shape.element_type is pt for o in dot.operands)
            and dot.shape.is_array)


@plan_function
def plan_dot(inst: HloInstruction) -> DotPlan:
    """How to run ``inst`` (a dot or a kOutput fusion); None when the GEMM
    kernels decline it (``plan_dot.why_not(inst)`` says why)."""
    dot = _the_dot(inst)
    if dot is None:
        raise NotApplicable("not one dot with an elementwise epilogue")
    if not supported(dot) or not inst.shape.is_array:
        raise NotApplicable("not a dot of f32 or f64 operands and result of one type")
    if tuple(inst.shape.dimensions) != tuple(dot.shape.dimensions):
        raise NotApplicable("the epilogue changes the dot's dimensions")
    info = dot_info(dot)
    nb, M, N, K = info.nb, info.M, info.N, info.K
    if min(nb, M, N, K) == 0:
        # An empty result, or all zeros: the elemental loop does it.
        raise NotApplicable("an empty result or contraction")
    pt = dot.shape.element_type
    out_shape = inst.shape
    acc_in_output = out_shape.element_type is pt
    ost = strides(out_shape)
    g_m = GroupMap(info.olf, out_shape.dimensions, ost)
    g_n = GroupMap(info.orf, out_shape.dimensions, ost)
    blk = blocking_for(pt, wide=False)
    flops = 2 * nb * M * N * K
    esize = pt.byte_size

    if M == 1 or N == 1:
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
        a_is_param = _operand_is_buffer(inst, dot, side)
        if a_is_param and g_k.affine and g_k.stride == 1:
            form = "rows"
        elif a_is_param and g_rows.affine and g_rows.stride == 1 and Mv > 1:
            form = "cols"
        else:
            form = "generic"
        T = _pow2_floor(max(1, min(MAX_TASKS, nb * Mv * K // GEMV_TASK_ELEMENTS)))
        nbt, nmt = 1, 1
        if T > 1:
            if nb >= T:
                nbt = T
            else:
                nbt = nb
                # Row chunks of the axpy form stream long contiguous pieces of
                # each matrix row into an L1-resident accumulator.
                min_rows = GEMV_COLS_ROWS if form == "cols" else 64
                nmt = _pow2_floor(min(max(1, T // nb), max(1, Mv // min_rows)))
        cm = -(-Mv // nmt)
        task = ScratchPlan()
        task.add("x", K * esize)
        if form == "cols":
            task.add("y", cm * esize)
        n_tasks = nbt * nmt
        scratch = ScratchPlan()
        scratch.add("counters", 64)
        scratch.add("tasks", n_tasks * task.size)
        return DotPlan("gemv", pt, nb, Mv, 1, K, swap, blk, K, 0, 0, acc_in_output, False, False,
                       (nbt, nmt, 1), n_tasks, scratch, task, task.size, form)

    # Orientation: C's columns unit-stride if either group is (direct stores).
    # (Choosing the orientation that wastes less on padded edge tiles did not
    # pay: packing the transposed operand and the element-wise stores cost
    # more; narrow tiles for a small N or M do better, see blocking_for.)
    swap = False
    if acc_in_output:
        n_unit = g_n.affine and g_n.stride == 1
        m_unit = g_m.affine and g_m.stride == 1
        swap = m_unit and not n_unit
    if swap:
        M, N = N, M
        g_m, g_n = g_n, g_m
    blk = blocking_for(pt, M, N)
    mr, nr = blk.mr, blk.nr
    direct = acc_in_output and g_n.affine and g_n.stride == 1 and g_m.affine
    kc = min(blk.kc, K) if acc_in_output else K
    m_panels, n_panels = -(-M // mr), -(-N // nr)

    # Task grid: batch first, then M, then N; powers of two (the thread pool
    # splits the tasks into equal contiguous ranges, one per thread) of
    # balanced chunks (whole micro-panels, sizes differing by one at most).
    T = _pow2_floor(max(1, min(MAX_TASKS, flops // TASK_FLOPS)))
    nbt, nmt, nnt = 1, 1, 1
    if T > 1:
        if nb >= T:
            nbt = T
        else:
            nbt = nb
            per = max(1, T // nb)
            nmt = _pow2_floor(min(per, max(1, m_panels // MIN_M_PANELS)))
            nnt = _pow2_floor(min(per // nmt, max(1, n_panels // MIN_N_PANELS)))
    cm = -(-m_panels // nmt) * mr
    cn = -(-n_panels // nnt) * nr
    n_tasks = nbt * nmt * nnt
    nkb = -(-K // kc)
    n_padded = n_panels * nr
    # A short M reuses each element of B only a few times: packing B would
    # cost more than the micro-kernel reading it in place (when its rows are
    # unit-stride and its K group has one stride).
    b_side = 0 if swap else 1
    g_bk, g_bn = _operand_groups(dot, b_side, *((info.lc, info.lf) if swap else (info.rc, info.rf)))
    b_direct = (M <= B_DIRECT_MAX_M and _operand_is_buffer(inst, dot, b_side)
                and g_bn.affine and g_bn.stride == 1 and g_bk.affine)
    shared_b = not b_direct and nmt > 1 and nb * K * n_padded * esize <= SHARED_B_LIMIT
    # A with unit-stride K (a row-major A) is read in place, MR row pointers
    # broadcasting one element each per k, as XNNPACK's kernels do; only a
    # partial last row panel is packed (zero-padded).  Packing A cost each
    # task a copy of its rows per N chunk (1024^3 f32 on 2 threads: 3% of
    # the time; the batched matmul 6%, the MLP 4%; 2048^3 the same within
    # noise), for the same bits.
    a_side = 1 if swap else 0
    g_ak, g_am = _operand_groups(dot, a_side, *((info.rc, info.rf) if swap else (info.lc, info.lf)))
    a_direct = (READ_A_IN_PLACE and not b_direct and _operand_is_buffer(inst, dot, a_side)
                and g_ak.affine and g_ak.stride == 1 and g_am.affine)
    # M blocks of about MC rows that split the task's chunk evenly: a chunk of
    # 132 rows (matmul 1024^3 and 2048^3) ran as 120 + 12, and the 12-row
    # block streamed the task's whole B block through L1 for two micro-panels.
    cm_panels = -(-cm // mr)
    m_blocks = max(1, round(cm_panels * mr / blk.mc))
    mc = -(-cm_panels // m_blocks) * mr
    nc = min(blk.nc, -(-cn // nr) * nr)
    task = ScratchPlan()
    task.add("a", mc * kc * esize)
    # A task's own packed B block: always, unless B is read in place (then
    # only its partial last panel); with a shared B a task packs its own copy
    # of a block another task is packing at that moment (gemm.pack_once).
    task.add("b", (nr if b_direct else nc) * kc * esize)
    scratch = ScratchPlan()
    scratch.add("counters", 64)
    if shared_b:
        scratch.add("bshared", nb * K * n_padded * esize)
        scratch.add("bflags", nb * nkb * n_panels * 4)
    scratch.add("tasks", n_tasks * task.size)
    return DotPlan("gemm", pt, nb, M, N, K, swap, blk, kc, mc, nc, acc_in_output, direct, shared_b,
                   (nbt, nmt, nnt), n_tasks, scratch, task, task.size, b_direct=b_direct, a_direct=a_direct)


def _operand_groups(dot: HloInstruction, side: int, k_dims, free_dims) -> tuple:
    """(contracting group, free group) of operand ``side`` of ``dot`` in its buffer."""
    shape = dot.operands[side].shape
    st = strides(shape)
    return GroupMap(k_dims, shape.dimensions, st), GroupMap(free_dims, shape.dimensions, st)


def _operand_is_buffer(inst: HloInstruction, dot: HloInstruction, k: int) -> bool:
    """Whether operand ``k`` of the dot is read from a buffer (not a fused producer)."""
    return inst.opcode == "dot" or dot.operands[k].opcode == "parameter"


def _scratch_bytes(me, inst: HloInstruction) -> int:
    plan = plan_dot(inst)
    return plan.scratch.size if plan is not None else 0


# ---------------------------------------------------------------------------
# Operands, result and epilogue in one task's function
# ---------------------------------------------------------------------------

class _Operands:
    """Views of A, B and C, and the epilogue, built in the function of ``ctx``."""

    def __init__(self, ctx: KernelContext, plan: DotPlan):
        inst = ctx.inst
        dot = _the_dot(inst)
        info = dot_info(dot)
        b = ctx.b
        self.ctx, self.plan, self.b = ctx, plan, b
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
        oc, orow = (info.olf, info.orf) if plan.swap else (info.orf, info.olf)
        self.C = MatrixView(out.shape, info.ob, orow, oc, out.ptr, None)
        self.acc_shape = out.shape

    def out_index(self, bcomp, r, c) -> Index:
        b = self.b
        return self.C.index(b, bcomp, self.C.gr.components(b, r), self.C.gc.components(b, c))

    def finish(self, index: Index, v) -> None:
        """Write the final value ``v`` of an element of C (through the epilogue)."""
        if self.epilogue is not None:
            v = self.epilogue(index, v)
        self.out.write(self.b, index, v)


def output_fusion_epilogue(ctx: KernelContext, core: HloInstruction) -> tuple:
    """For a kOutput fusion around ``core`` (its dot or convolution): the
    generators of the fused instructions, ``core`` read as "the finished C
    element", and ``epilogue(index, v)``: the fusion's root at ``index`` when
    that element is ``v``."""
    comp = ctx.inst.attrs["calls"]
    holder = {}
    gens = ctx.em.instruction_generators(
        comp, [ctx.operand_generator(n) for n in range(len(ctx.inst.operands))],
        overrides={id(core): lambda index: holder["v"]})
    root_gen = gens[id(comp.root)]

    def epilogue(index: Index, v):
        holder["v"] = v
        return root_gen(index)
    return gens, epilogue


def _task_base(ctx: KernelContext, plan: DotPlan, t) -> ir.Value:
    b = ctx.b
    base = plan.scratch.pointer(b, ctx.scratch_pointer(), "tasks")
    return b.gep(base, [b.mul(t, i64(plan.task_bytes))], inbounds=True, source_etype=I8)


def _pow2_floor(x: int) -> int:
    return 1 << (int(x).bit_length() - 1)


def _chunk(b, t, n_chunks: int, units: int, unit: int, total: int):
    """[lo, hi) of chunk ``t`` of ``n_chunks`` balanced chunks of ``units`` units of
    ``unit`` elements (``total`` elements in all, the last unit maybe partial)."""
    if n_chunks == 1:
        return i64(0), i64(total)
    lo = mul_const(b, b.udiv(b.mul(t, i64(units)), i64(n_chunks)), unit)
    hi = mul_const(b, b.udiv(b.mul(b.add(t, i64(1)), i64(units)), i64(n_chunks)), unit)
    if units * unit != total:
        hi = imin(b, hi, i64(total))
    return lo, hi


def _decode_task(b, plan: DotPlan, t):
    nbt, nmt, nnt = plan.grid
    tn = b.urem(t, i64(nnt)) if nnt > 1 else i64(0)
    rest = b.udiv(t, i64(nnt)) if nnt > 1 else t
    tm = b.urem(rest, i64(nmt)) if nmt > 1 else i64(0)
    tb = b.udiv(rest, i64(nmt)) if nmt > 1 else rest
    mu, nu = (plan.blk.mr, plan.blk.nr) if plan.kind == "gemm" else (1, 1)
    b_lo, b_hi = _chunk(b, tb, nbt, plan.nb, 1, plan.nb)
    m_lo, m_hi = _chunk(b, tm, nmt, -(-plan.M // mu), mu, plan.M)
    n_lo, n_hi = _chunk(b, tn, nnt, -(-plan.N // nu), nu, plan.N)
    return b_lo, b_hi, m_lo, m_hi, n_lo, n_hi


def _ptr_offset(b, ptr, elements, pt):
    return b.gep(ptr, [elements], inbounds=True, source_etype=types.memory_type(pt))


# ---------------------------------------------------------------------------
# GEMM
# ---------------------------------------------------------------------------

def _pack_b(b, plan: DotPlan, ops: _Operands, bi, boff, n_lo, n_hi, pc, kc, dst) -> None:
    """Pack B's panels of columns [n_lo, n_hi) (n_lo a multiple of NR), rows [pc, pc + kc)."""
    pack_block(b, ops.B, bi, boff, n_lo, n_hi, plan.N, pc, kc, dst, plan.blk.nr, False, plan.blk.vw)


def _pack_a(b, plan: DotPlan, ops: _Operands, bi, boff, m_lo, m_hi, pc, kc, dst) -> None:
    """Pack A's panels of rows [m_lo, m_hi) (m_lo a multiple of MR), columns [pc, pc + kc)."""
    pack_block(b, ops.A, bi, boff, m_lo, m_hi, plan.M, pc, kc, dst, plan.blk.mr, True, plan.blk.vw)


def _batch_offset(b, view: MatrixView, bi):
    return view.gb.offset(b, bi) if view.is_array else i64(0)


def _shared_panel_offset(b, plan: DotPlan, bi, pc, q, kc):
    npad = plan.n_padded
    off = b.add(b.mul(bi, i64(plan.K * npad)), b.mul(pc, i64(npad)))
    return b.add(off, b.mul(q, b.mul(kc, i64(plan.blk.nr))))


def _emit_gemm_task(ctx: KernelContext, plan: DotPlan, t, w) -> None:
    ops = _Operands(ctx, plan)
    b = ctx.b
    pt = plan.pt
    ety = types.memory_type(pt)
    mr, nr = plan.blk.mr, plan.blk.nr
    M, N, K = plan.M, plan.N, plan.K
    kcb = plan.kc
    nkb = plan.nkb
    a_direct = plan.a_direct
    uk = micro_kernel(b.module, pt, mr, nr, plan.blk.vw, strided_b=plan.b_direct)
    uk_a = micro_kernel(b.module, pt, mr, nr, plan.blk.vw, strided_a=True) if a_direct else None
    m_full_end = M - M % mr
    b_lo, b_hi, m_lo, m_hi, n_lo, n_hi = _decode_task(b, plan, t)
    base = _task_base(ctx, plan, w)
    a_buf = plan.task_plan.pointer(b, base, "a")
    b_buf = plan.task_plan.pointer(b, base, "b")
    shared = plan.scratch.pointer(b, ctx.scratch_pointer(), "bshared") if plan.shared_b else None
    flags = plan.scratch.pointer(b, ctx.scratch_pointer(), "bflags") if plan.shared_b else None
    tile = ctx.alloca_builder.alloca(ir.ArrayType(ety, mr * nr), name="tile")
    tile.align = 64
    m_edge, n_edge = M % mr, N % nr
    C = ops.C
    ldc = C.gr.stride if plan.direct else 0
    nc_step = plan.nc
    n_pan = -(-N // nr)

    with Loop(b, b_lo, b_hi, 1, "batch") as bi:
        boff_a = _batch_offset(b, ops.A, bi)
        boff_b = _batch_offset(b, ops.B, bi)
        boff_c = C.gb.offset(b, bi)
        bcomp_c = C.gb.components(b, bi)
        with Loop(b, n_lo, n_hi, nc_step, "jc") as jc:
            nc_end = imin(b, b.add(jc, i64(nc_step)), n_hi)
            with Loop(b, 0, nkb, 1, "kb") as kb:
                pc = b.mul(kb, i64(kcb))
                kc = imin(b, i64(kcb), b.sub(i64(K), pc)) if nkb > 1 else i64(K)
                first = b.icmp_signed("==", kb, i64(0))
                last = b.icmp_signed("==", kb, i64(nkb - 1))
                if plan.b_direct:
                    # B is read in place; only a partial last panel is packed (zero-padded).
                    if n_edge:
                        with b.if_then(b.icmp_signed(">", nc_end, i64(N - n_edge))):
                            pack_panel(b, ops.B, bi, boff_b, i64(N - n_edge), nr, pc, kc, b_buf, nr,
                                       n_edge, False, plan.blk.vw)
                elif plan.shared_b:
                    q_jc = b.udiv(jc, i64(nr))
                    flag = b.gep(flags, [b.add(b.mul(b.add(b.mul(bi, i64(nkb)), kb), i64(n_pan)), q_jc)],
                                 inbounds=True, source_etype=I32)
                    b_sh = _ptr_offset(b, shared, _shared_panel_offset(b, plan, bi, pc, q_jc, kc), pt)
                    use_shared = pack_once(
                        b, ir.Constant(I1, 1), flag,
                        lambda: _pack_b(b, plan, ops, bi, boff_b, jc, nc_end, pc, kc, b_sh),
                        lambda: _pack_b(b, plan, ops, bi, boff_b, jc, nc_end, pc, kc, b_buf))
                else:
                    _pack_b(b, plan, ops, bi, boff_b, jc, nc_end, pc, kc, b_buf)
                with Loop(b, m_lo, m_hi, plan.mc, "ic") as ic:
                    mc_end = imin(b, b.add(ic, i64(plan.mc)), m_hi)
                    if a_direct:
                        # Only a partial last panel is packed (zero-padded); full panels are read in place.
                        if M % mr:
                            with b.if_then(b.icmp_signed(">", mc_end, i64(m_full_end))):
                                pack_panel(b, ops.A, bi, boff_a, i64(m_full_end), mr, pc, kc, a_buf, mr,
                                           M % mr, True, plan.blk.vw)
                    else:
                        _pack_a(b, plan, ops, bi, boff_a, ic, mc_end, pc, kc, a_buf)
                    with Loop(b, jc, nc_end, nr, "jr") as n0:
                        ldb = None
                        if plan.b_direct:
                            in_place = ops.B.element_pointer(
                                b, add(b, add(b, boff_b, ops.B.gr.offset(b, pc)), n0))
                            ldb = i64(ops.B.gr.stride)
                            bp = in_place
                            if n_edge:
                                full_n = b.icmp_signed("<", n0, i64(N - n_edge))
                                bp = b.select(full_n, in_place, b_buf)
                                ldb = b.select(full_n, ldb, i64(nr))
                        else:
                            q = b.udiv(b.sub(n0, jc), i64(nr))
                            off = b.mul(q, b.mul(kc, i64(nr)))
                            bp = _ptr_offset(b, b_buf, off, pt)
                            if plan.shared_b:
                                bp = b.select(use_shared, _ptr_offset(b, b_sh, off, pt), bp)
                        with Loop(b, ic, mc_end, mr, "ir") as r0:
                            p = b.udiv(b.sub(r0, ic), i64(mr))
                            ap = _ptr_offset(b, a_buf, b.mul(p, b.mul(kc, i64(mr))), pt)
                            args = _TileArgs(bi, bcomp_c, boff_c, r0, n0, kc, ap, bp, first, last, ldb)
                            if a_direct:
                                args.ap = a_buf       # the partial last panel, the only one packed
                                args.direct_a = (
                                    uk_a, ops.A.element_pointer(b, add(b, add(b, boff_a, ops.A.gr.offset(b, r0)),
                                                                       pc)),
                                    i64(ops.A.gr.stride),
                                    b.icmp_signed("<", r0, i64(m_full_end)) if M % mr else ir.Constant(I1, 1))
                            if plan.direct:
                                conds = []
                                if m_edge:
                                    conds.append(b.icmp_signed("<", r0, i64(M - m_edge)))
                                if n_edge:
                                    conds.append(b.icmp_signed("<", n0, i64(N - n_edge)))
                                if conds:
                                    full = conds[0] if len(conds) == 1 else b.and_(conds[0], conds[1])
                                    with b.if_else(full) as (then, otherwise):
                                        with then:
                                            _direct_tile(b, plan, ops, uk, args, ldc)
                                        with otherwise:
                                            _general_tile(b, plan, ops, uk, args, tile)
                                else:
                                    _direct_tile(b, plan, ops, uk, args, ldc)
                            else:
                                _general_tile(b, plan, ops, uk, args, tile)


@dataclass
class _TileArgs:
    bi: object
    bcomp: list
    boff: object
    r0: object
    c0: object
    kc: object
    ap: object
    bp: object
    first: object
    last: object
    ldb: object = None       # B read in place, rows ldb apart (None: packed panel)
    #: A read in place: (strided-A micro-kernel, the tile's first A element, A's
    #: row stride, i1 "a full row panel"); ``ap`` is then the packed partial panel.
    direct_a: tuple | None = None

    def call(self, b, uk, c, ldc, accumulate) -> None:
        if self.direct_a is not None:
            uk_a, a_at, lda, full = self.direct_a
            with b.if_else(full) as (then, otherwise):
                with then:
                    b.call(uk_a, [self.kc, a_at, lda, self.bp, c, ldc, accumulate])
                with otherwise:
                    b.call(uk, [self.kc, self.ap, self.bp, c, ldc, accumulate])
        elif self.ldb is None:
            b.call(uk, [self.kc, self.ap, self.bp, c, ldc, accumulate])
        else:
            b.call(uk, [self.kc, self.ap, self.bp, self.ldb, c, ldc, accumulate])


def _direct_tile(b, plan: DotPlan, ops: _Operands, uk, t: _TileArgs, ldc: int) -> None:
    """A full tile stored by the micro-kernel into C (the result buffer)."""
    C = ops.C
    off = add(b, add(b, t.boff, C.gr.offset(b, t.r0)), t.c0)
    cp = C.element_pointer(b, off)
    t.call(b, uk, cp, i64(ldc), b.not_(t.first))
    if ops.epilogue is None:
        return
    mr, nr = plan.blk.mr, plan.blk.nr

    def body():
        with Loop(b, 0, mr, 1, "ei") as i:
            r = b.add(t.r0, i)
            rcomp = C.gr.components(b, r)
            with Loop(b, 0, nr, 1, "ej") as j:
                c = b.add(t.c0, j)
                index = C.index(b, t.bcomp, rcomp, C.gc.components(b, c))
                v = ops.out.read(b, index)
                ops.finish(index, v)
    if plan.nkb == 1:
        body()
    else:
        with b.if_then(t.last):
            body()


def _general_tile(b, plan: DotPlan, ops: _Operands, uk, t: _TileArgs, tile) -> None:
    """A tile computed into a stack buffer, then added/written element by element
    through C's layout (edge tiles, layouts the micro-kernel cannot store)."""
    mr, nr = plan.blk.mr, plan.blk.nr
    pt = plan.pt
    ety = types.memory_type(pt)
    C = ops.C
    t.call(b, uk, tile, i64(nr), ir.Constant(ir.IntType(1), 0))
    rows = imin(b, i64(mr), b.sub(i64(plan.M), t.r0))
    cols = imin(b, i64(nr), b.sub(i64(plan.N), t.c0))
    with Loop(b, 0, rows, 1, "gi") as i:
        r = b.add(t.r0, i)
        rcomp = C.gr.components(b, r)
        with Loop(b, 0, cols, 1, "gj") as j:
            c = b.add(t.c0, j)
            index = C.index(b, t.bcomp, rcomp, C.gc.components(b, c))
            p = b.gep(tile, [b.add(b.mul(i, i64(nr)), j)], inbounds=True, source_etype=ety)
            v = b.load(p, typ=ety, align=pt.byte_size)
            if plan.nkb == 1:
                ops.finish(index, v)
            else:
                prev = ops.out.read(b, index)
                v = b.select(t.first, v, b.fadd(prev, v))
                with b.if_else(t.last) as (then, otherwise):
                    with then:
                        ops.finish(Index(list(index.multi)), v)
                    with otherwise:
                        ops.out.write(b, Index(list(index.multi)), v)


# ---------------------------------------------------------------------------
# Matrix-vector
# ---------------------------------------------------------------------------

def _emit_gemv_task(ctx: KernelContext, plan: DotPlan, t, w) -> None:
    ops = _Operands(ctx, plan)
    b = ctx.b
    pt = plan.pt
    ety = types.memory_type(pt)
    esize = pt.byte_size
    K, vw = plan.K, plan.blk.vw
    b_lo, b_hi, m_lo, m_hi, _n_lo, _n_hi = _decode_task(b, plan, t)
    base = _task_base(ctx, plan, w)
    xbuf = plan.task_plan.pointer(b, base, "x")
    A, B, C = ops.A, ops.B, ops.C
    zero_n = i64(0)
    with Loop(b, b_lo, b_hi, 1, "batch") as bi:
        boff_a = _batch_offset(b, A, bi)
        boff_b = _batch_offset(b, B, bi)
        bcomp_c = C.gb.components(b, bi)
        with Loop(b, 0, K, 1, "xk") as k:
            v = read_element(b, B, bi, boff_b, k, zero_n)
            b.store(v, b.gep(xbuf, [k], inbounds=True, source_etype=ety), align=esize)
        if plan.gemv_form == "rows":
            with Loop(b, m_lo, m_hi, 1, "row") as m:
                row = A.element_pointer(b, add(b, boff_a, A.gr.offset(b, m)))
                v = dot_contiguous(b, pt, row, xbuf, K, vw)
                ops.finish(ops.out_index(bcomp_c, m, zero_n), v)
        elif plan.gemv_form == "cols":
            ybuf = plan.task_plan.pointer(b, base, "y")
            mc = b.sub(m_hi, m_lo)
            with Loop(b, 0, mc, 1, "yz") as i:
                b.store(types.constant(pt, 0), b.gep(ybuf, [i], inbounds=True, source_etype=ety),
                        align=esize)
            with Loop(b, 0, K, 1, "col") as k:
                col = A.element_pointer(b, add(b, add(b, boff_a, A.gc.offset(b, k)), A.gr.offset(b, m_lo)))
                xk = b.load(b.gep(xbuf, [k], inbounds=True, source_etype=ety), typ=ety, align=esize)
                axpy_contiguous(b, pt, ybuf, col, xk, mc, vw)
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


def _scalar_fma(module, pt):
    ety = types.memory_type(pt)
    return intrinsic(module, f"llvm.fma.{'f32' if pt is F32 else 'f64'}",
                     ir.FunctionType(ety, [ety, ety, ety]))


# ---------------------------------------------------------------------------
# Kernel rules
# ---------------------------------------------------------------------------

def _run_tasks(ctx: KernelContext, plan, n_tasks: int, counter: int, body) -> None:
    """Run ``body(tctx, task, worker)`` for every task in [0, n_tasks).

    ``parallel_for`` starts ``n_tasks`` workers; each takes the next task from
    an atomic counter until none is left (self-scheduling), so a thread that
    shares its core with another process, or that drew expensive edge tasks,
    just does fewer of them — the runtime's pool hands each thread a fixed
    range of workers.  Without ``parallel_for`` the first worker does every
    task.  A worker's scratch region (its packed blocks) is indexed by the
    worker, and each task is computed the same way whoever runs it, so the
    results do not depend on the schedule.
    """
    if n_tasks == 1:
        body(ctx, i64(0), i64(0))
        return
    b = ctx.b
    b.store(i64(0), _counter(ctx, plan, counter), align=8)

    def worker(tctx: KernelContext, w) -> None:
        # One copy of the body: the serial fallback calls it rather than
        # inlining it (and unrolling the task loop over it).
        tctx.fn.attributes.add("noinline")
        grab_tasks(tctx.b, _counter(tctx, plan, counter), i64(n_tasks), lambda t: body(tctx, t, w))
    ctx.parallel_for(n_tasks, worker)


def _counter(ctx: KernelContext, plan, k: int) -> ir.Value:
    """The k-th task counter (each on its own cache line) in the ``counters``
    region of ``plan.scratch`` (the convolution kernel's plans have two)."""
    base = plan.scratch.pointer(ctx.b, ctx.scratch_pointer(), "counters")
    return ctx.b.gep(base, [i64(64 * k)], inbounds=True, source_etype=I8)


# ---------------------------------------------------------------------------
# The GEMM library path
# ---------------------------------------------------------------------------

def library_variant(inst: HloInstruction, plan: DotPlan) -> gemm_library.Variant | None:
    """The GEMM library variant that computes ``plan``, or None when only the
    per-module GEMM can: the library reads operands from buffers through one
    stride per index group and accumulates C in the result buffer, so a fused
    operand producer, a group that is not affine (e.g. batch dimensions
    that are not adjacent in memory) or an epilogue that changes the element
    type keep the per-module code."""
    if plan.kind != "gemm" or not plan.acc_in_output:
        return None
    dot = _the_dot(inst)
    info = dot_info(dot)
    if not (_operand_is_buffer(inst, dot, 0) and _operand_is_buffer(inst, dot, 1)):
        return None
    A, B, C = _library_views(inst, plan, info, dot)
    if not all(g.affine for view in (A, B, C) for g in (view.gb, view.gr, view.gc)):
        return None

    def kind(view, col: str, row: str) -> str:
        return col if view.gc.stride == 1 else row if view.gr.stride == 1 else "g"
    b_kind = "d" if plan.b_direct else kind(B, "n", "k")
    a_kind = "d" if plan.a_direct else kind(A, "k", "m")
    return gemm_library.Variant(plan.pt, plan.blk.mr, plan.blk.nr, plan.blk.vw, a_kind, b_kind)


def _library_views(inst, plan: DotPlan, info: DotInfo, dot) -> tuple:
    """A, B and C as strided views (shapes only: ``ptr`` is a placeholder)."""
    ls, rs = dot.operands[0].shape, dot.operands[1].shape
    if inst.opcode != "dot":
        ls, rs = (inst.operands[o.parameter_number].shape for o in dot.operands)
    mark = object()
    if not plan.swap:
        A = MatrixView(ls, info.lb, info.lf, info.lc, mark)
        B = MatrixView(rs, info.rb, info.rc, info.rf, mark)
    else:
        A = MatrixView(rs, info.rb, info.rf, info.rc, mark)
        B = MatrixView(ls, info.lb, info.lc, info.lf, mark)
    oc, orow = (info.olf, info.orf) if plan.swap else (info.orf, info.olf)
    C = MatrixView(inst.shape, info.ob, orow, oc, mark)
    return A, B, C


def _emit_library_gemm(ctx: KernelContext, plan: DotPlan, v: gemm_library.Variant) -> None:
    """Fill a descriptor on the stack and run the library's workers on it."""
    b = ctx.b
    ops = _Operands(ctx, plan)
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
    for name, view in (("a", ops.A), ("b", ops.B), ("c", ops.C)):
        put(name, view.ptr)
        put(f"{name}_bs", view.gb.stride)
        put(f"{name}_rs", view.gr.stride)
        put(f"{name}_cs", view.gc.stride)
    put("scratch", plan.scratch.pointer(b, scratch, "tasks"))
    put("bshared", plan.scratch.pointer(b, scratch, "bshared") if plan.shared_b else null)
    put("bflags", plan.scratch.pointer(b, scratch, "bflags") if plan.shared_b else null)
    counters = plan.scratch.pointer(b, scratch, "counters")
    put("counter", counters)
    if ops.epilogue is not None:
        put("epi_fn", _epilogue_function(ctx, plan))
        args = ctx.alloca_builder.alloca(PTR, size=4, name="epi.ctx")
        for k, arg in enumerate(ctx.args):
            b.store(arg, b.gep(args, [i64(k)], source_etype=PTR))
        put("epi_ctx", args)
    else:
        put("epi_fn", null)
        put("epi_ctx", null)
    for name, value in (("M", plan.M), ("N", plan.N), ("K", plan.K), ("nb", plan.nb),
                        ("kc", plan.kc), ("mc", plan.mc), ("nc", plan.nc),
                        ("nbt", plan.grid[0]), ("nmt", plan.grid[1]), ("nnt", plan.grid[2]),
                        ("n_tasks", plan.n_tasks), ("task_bytes", plan.task_bytes),
                        ("b_off", plan.task_plan.regions["b"][0])):
        put(name, value)
    b.store(i64(0), counters, align=8)
    _zero_flags(ctx, plan)
    fn = gemm_library.declare(b.module, v, "run")
    if plan.n_tasks == 1:
        b.call(fn, [desc, i64(0)])
    else:
        ctx.parallel_for(plan.n_tasks, lambda tctx, w: tctx.b.call(fn, [tctx.shared[0], w]),
                         shared=(desc,))


#: The byte the shared-B flags are cleared to (0: unpacked).  Tests set 1,
#: which reads as "being packed by another task", to run every task on its
#: own copy as contention would.
FLAG_FILL = 0


def _zero_flags(ctx: KernelContext, plan: DotPlan) -> None:
    """Mark every block of the shared B unpacked (``gemm.pack_once``) before the tasks run."""
    if not plan.shared_b:
        return
    b = ctx.b
    memset = b.module.declare_intrinsic("llvm.memset", [PTR, ir.IntType(64)])
    flags = plan.scratch.pointer(b, ctx.scratch_pointer(), "bflags")
    b.call(memset, [flags, ir.Constant(I8, FLAG_FILL), i64(plan.scratch.regions["bflags"][1]),
                    ir.Constant(I1, 0)])


def _epilogue_function(ctx: KernelContext, plan: DotPlan) -> ir.Function:
    """``void epi(ptr args, i64 batch, i64 r0, i64 c0, i64 rows, i64 cols)``:
    the fusion's epilogue over a finished tile of C (rows x cols from (r0, c0)
    of batch ``batch``), read from the result buffer and written back.
    ``args``: the kernel's (results, params, temp, opts)."""
    me = ctx.me
    fn = ir.Function(me.llvm, gemm_library.EPILOGUE_TYPE, f"{ctx.fn.name}.epilogue")
    fn.linkage = "internal"
    argp, bi, r0, c0, rows, cols = fn.args
    ab = ir.IRBuilder(fn.append_basic_block("allocas"))
    bb = ir.IRBuilder(fn.append_basic_block("body"))
    ab.branch(bb.block)
    ab.position_at_start(ab.block)
    args = tuple(bb.load(bb.gep(argp, [i64(k)], source_etype=PTR), typ=PTR) for k in range(4))
    em = ElementalEmitter(bb, ab, lambda c: IrArray(me.constant_global(c), c.shape))
    ectx = KernelContext(me, ctx.assignment, ctx.inst, fn, bb, ab, em, args)
    ops = _Operands(ectx, plan)
    C = ops.C
    bcomp = C.gb.components(bb, bi)
    with Loop(bb, 0, rows, 1, "ei") as i:
        rcomp = C.gr.components(bb, bb.add(r0, i))
        with Loop(bb, 0, cols, 1, "ej") as j:
            index = C.index(bb, bcomp, rcomp, C.gc.components(bb, bb.add(c0, j)))
            ops.finish(index, ops.out.read(bb, index))
    ectx.b.ret_void()
    return fn


def _library_applies(inst: HloInstruction) -> str | None:
    plan = plan_dot(inst)
    if plan is None:
        return plan_dot.why_not(inst)
    if not USE_LIBRARY:
        return "the GEMM library is switched off (dot.USE_LIBRARY)"
    if library_variant(inst, plan) is None:
        return "a fused operand, a group that is not affine, or an epilogue changing the element type"
    return None


def _emit_library(ctx: KernelContext) -> None:
    plan = plan_dot(ctx.inst)
    fill_padding(ctx.b, ctx.output_arrays()[0])
    _emit_library_gemm(ctx, plan, library_variant(ctx.inst, plan))


def _kind_applies(kind: str):
    def applies(inst: HloInstruction) -> str | None:
        plan = plan_dot(inst)
        if plan is None:
            return plan_dot.why_not(inst)
        return None if plan.kind == kind else f"a {plan.kind}, not a {kind}"
    return applies


def _emit_gemv(ctx: KernelContext) -> None:
    plan = plan_dot(ctx.inst)
    fill_padding(ctx.b, ctx.output_arrays()[0])
    _run_tasks(ctx, plan, plan.n_tasks, 0, lambda tctx, t, w: _emit_gemv_task(tctx, plan, t, w))


def _emit_gemm(ctx: KernelContext) -> None:
    plan = plan_dot(ctx.inst)
    fill_padding(ctx.b, ctx.output_arrays()[0])
    _zero_flags(ctx, plan)
    _run_tasks(ctx, plan, plan.n_tasks, 0, lambda tctx, t, w: _emit_gemm_task(tctx, plan, t, w))


#: The dot kernels, in the order tried: a call into the shared GEMM library
#: (``gemm_library.py``), a matrix-vector loop, this module's own packed GEMM.
LIBRARY_GEMM = KernelCandidate("dot.library-gemm", _emit_library, _library_applies, _scratch_bytes)
GEMV = KernelCandidate("dot.gemv", _emit_gemv, _kind_applies("gemv"), _scratch_bytes)
GEMM = KernelCandidate("dot.gemm", _emit_gemm, _kind_applies("gemm"), _scratch_bytes)
CANDIDATES = (LIBRARY_GEMM, GEMV, GEMM)
