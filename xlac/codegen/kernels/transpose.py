"""A materialised transpose (and a layout-changing copy) moved through vector registers.

A ``transpose`` whose result's minor dimension is not the operand's minor
dimension, or a ``copy`` to a layout with another minor dimension, reads one
buffer along rows and writes the other along columns.  The elemental loop
does that an element at a time; here it is done in blocks:

* The mapping is reduced to physical terms: per dimension of the result (in
  its memory order) an extent, the result stride and the operand stride.
  Size-1 dimensions are dropped and neighbours that are contiguous in both
  buffers are merged.  Two dimensions matter: ``A``, the operand's minor one
  (operand stride 1), and ``B``, the result's minor one (result stride 1);
  the others are batch dimensions.
* A *block* is ``n`` operand rows of ``n`` elements (``n`` vectors along
  ``A``), transposed in registers by two-source shuffles
  (:func:`xlac.codegen.gemm.transpose_square`) and stored as ``n`` vectors
  along ``B``.  Elements are moved as integers of their byte size, so one
  kernel serves every 1/2/4/8-byte type (complex64 as 8 bytes).
* A *super-block* is ``L x L`` elements, ``L`` the elements of a 64-byte cache
  line: every line it reads or writes is used whole while it is in L1, so
  power-of-two row pitches (where all rows of a tile share a cache set) cost
  nothing.  When a block is narrower than a line, a super-block is
  ``G x G`` blocks.
* Work units are stripes of ``L`` operand rows (one batch index, a range of
  ``B``); a stripe walks along ``A``.  Units are split over threads with
  ``parallel_for``.  Parts of a stripe beyond the last whole super-block (and
  a last partial stripe) are copied by scalar loops.

Padded layouts, pred (whose bytes the elemental path normalises), 16-byte
elements and shapes too small for one
block fall back to the elemental loop.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...shape import PrimitiveType as PT, strides
from .. import emitter as _emitter
from ..emitter import KernelContext, task_range
from ..gemm import Loop, transpose_square
from ..target import host_vector_bits
from ..ir_array import i64
from ..kernel_choice import KernelCandidate, NotApplicable, plan_function
from ._util import I8

#: Bytes of a cache line: a super-block uses whole lines of both buffers.
LINE = 64
#: Bytes of A one work unit covers.  Consecutive units write the same result
#: rows and read new operand rows, so this bounds the pages in use at once
#: (1 KiB of f32: 16 operand + 256 result pages) while keeping the operand
#: reads long enough for the prefetcher.  Measured best of 256 B .. 16 KiB.
CHUNK_BYTES = 1024
#: Results at least this big are written with non-temporal stores (they would
#: not stay in cache anyway; this saves reading each line before writing it).
NT_MIN_BYTES = 8 << 20
NT = True


@dataclass
class Plan:
    """A transposition in physical terms (element strides, result memory order)."""

    size: int  # bytes per element
    a: int  # extent of A, the operand's minor dimension
    b: int  # extent of B, the result's minor dimension
    in_b: int  # operand stride of B (elements)
    out_a: int  # result stride of A (elements)
    batch: list  # [(extent, result stride, operand stride)], major first
    n: int  # block edge: lanes per vector = vectors per block
    g: int  # blocks per super-block edge
    align: int  # known alignment of an element (complex64: 4)

    @property
    def line(self) -> int:
        return self.n * self.g

    @property
    def batch_count(self) -> int:
        count = 1
        for extent, _, _ in self.batch:
            count *= extent
        return count


def _block_lanes(size: int) -> int:
    """Lanes of the block vectors: a whole register for 4- and 8-byte elements
    (16x16 f32, 8x8 f64 with AVX-512); 16 for narrower ones, where a
    register-wide square (64x64 bytes) would need more registers than there
    are and log2(64) shuffle stages."""
    lanes = max(2, host_vector_bits() // 8 // size)
    return min(lanes, 16, LINE // size)


@plan_function
def plan_for(inst: HloInstruction) -> Plan:
    """The :class:`Plan` of a transpose or copy that changes the minor
    dimension (None, and ``plan_for.why_not(inst)``, when the elemental loop
    should do it)."""
    if inst.opcode not in ("transpose", "copy") or len(inst.operands) != 1:
        raise NotApplicable("not a transpose or copy of one operand")
    out, src = inst.shape, inst.operands[0].shape
    if not out.is_array or not src.is_array or out.rank == 0:
        raise NotApplicable("a scalar or non-array")
    if out.element_count() == 0:
        raise NotApplicable("no elements")
    if out.layout.is_padded or src.layout.is_padded:
        raise NotApplicable("a padded layout")
    pt = out.element_type
    if pt is PT.PRED or pt.byte_size not in (1, 2, 4, 8):
        raise NotApplicable(f"{pt.name.lower()} elements")
    perm = inst.attrs["dimensions"] if inst.opcode == "transpose" else tuple(range(out.rank))
    so, si = strides(out), strides(src)
    # (extent, result stride, operand stride) per non-trivial result dimension,
    # in the result's memory order (major first).
    dims = [(out.dimensions[d], so[d], si[perm[d]])
            for d in reversed(out.layout.minor_to_major) if out.dimensions[d] != 1]
    merged: list = []
    for extent, o, i in dims:
        if merged and merged[-1][1] == o * extent and merged[-1][2] == i * extent:
            prev = merged.pop()
            extent, o, i = prev[0] * extent, o, i
        merged.append((extent, o, i))
    if len(merged) < 2:
        raise NotApplicable("memory order unchanged")
    b_extent, b_out, b_in = merged[-1]
    a_pos = next((k for k, (_, _, i) in enumerate(merged) if i == 1), None)
    if a_pos is None or a_pos == len(merged) - 1 or b_out != 1:
        raise NotApplicable("the minor dimensions coincide (rows are copied whole)")
    a_extent, a_out, _ = merged[a_pos]
    size = pt.byte_size
    n = _block_lanes(size)
    g = max(1, LINE // size // n)
    if min(a_extent, b_extent) < n * g:
        raise NotApplicable(f"smaller than one {n * g}x{n * g} block")
    batch = [m for k, m in enumerate(merged) if k not in (a_pos, len(merged) - 1)]
    return Plan(size, a_extent, b_extent, b_in, a_out, batch, n, g, pt.component_type.byte_size)


def _offsets(b: ir.IRBuilder, plan: Plan, index) -> tuple:
    """(result, operand) element offsets of batch index ``index`` (flattened)."""
    out_off, in_off = i64(0), i64(0)
    rest = index
    for extent, so, si in reversed(plan.batch):
        if extent == plan.batch_count:
            k = rest
        else:
            k = b.urem(rest, i64(extent))
            rest = b.udiv(rest, i64(extent))
        out_off = b.add(out_off, b.mul(k, i64(so)))
        in_off = b.add(in_off, b.mul(k, i64(si)))
    return out_off, in_off


def _byte_gep(b: ir.IRBuilder, base, elements, size: int):
    return b.gep(base, [b.mul(elements, i64(size))], inbounds=True, source_etype=I8)


def _emit_super_block(b: ir.IRBuilder, plan: Plan, src, dst, a0, b0, nt: bool) -> None:
    """Transpose the L x L elements at (a0, b0): src[b][a] -> dst[a][b], as
    G x G blocks of n x n (a loop: a byte block's shuffles are slow to compile,
    so they are emitted once), each transposed in registers and stored as n
    vectors (non-temporal with ``nt``; the caller checked alignment)."""
    n, size = plan.n, plan.size
    vty = ir.VectorType(ir.IntType(8 * size), n)
    if plan.g == 1:
        _emit_block(b, plan, src, dst, a0, b0, vty, nt)
        return
    with Loop(b, 0, plan.g, 1, "ga") as ga:
        a_lo = b.add(a0, b.mul(ga, i64(n)))
        with Loop(b, 0, plan.g, 1, "gb") as gb:
            _emit_block(b, plan, src, dst, a_lo, b.add(b0, b.mul(gb, i64(n))), vty, nt)


def _emit_block(b: ir.IRBuilder, plan: Plan, src, dst, a_lo, b_lo, vty, nt: bool) -> None:
    n, size = plan.n, plan.size
    # One address per buffer, then constant offsets: less IR for LLVM to chew.
    src_base = _byte_gep(b, src, b.add(b.mul(b_lo, i64(plan.in_b)), a_lo), size)
    dst_base = _byte_gep(b, dst, b.add(b.mul(a_lo, i64(plan.out_a)), b_lo), size)
    rows = [b.load(b.gep(src_base, [i64(i * plan.in_b * size)], inbounds=True, source_etype=I8),
                   typ=vty, align=plan.align) for i in range(n)]
    cols = transpose_square(b, rows, vty)
    for k in range(n):
        ptr = b.gep(dst_base, [i64(k * plan.out_a * size)], inbounds=True, source_etype=I8)
        st = b.store(cols[k], ptr, align=LINE if nt else plan.align)
        if nt:
            st.set_metadata("nontemporal", b.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))


def _emit_scalar(b: ir.IRBuilder, plan: Plan, src, dst, a_lo, a_hi, b_lo, b_hi) -> None:
    """dst[a][b] = src[b][a] over a rectangle (run-time bounds, maybe empty).

    Edges are at most a line wide, so the loops are kept scalar: vectorising
    strided accesses (gathers, scatters) cost compile time for nothing."""
    ety = ir.IntType(8 * plan.size)
    with Loop(b, b_lo, b_hi, 1, "tb", vectorize=False) as bi:
        with Loop(b, a_lo, a_hi, 1, "ta", vectorize=False) as ai:
            v = b.load(_byte_gep(b, src, b.add(b.mul(bi, i64(plan.in_b)), ai), plan.size),
                       typ=ety, align=plan.align)
            b.store(v, _byte_gep(b, dst, b.add(b.mul(ai, i64(plan.out_a)), bi), plan.size),
                    align=plan.align)


def _chunk(plan: Plan) -> int:
    """Elements of A one unit covers (a multiple of L)."""
    return max(plan.line, CHUNK_BYTES // plan.size // plan.line * plan.line)


def _use_nt(plan: Plan) -> bool:
    """Non-temporal stores for results too big to stay in cache, when every
    line start is a multiple of 64 bytes from the base."""
    out_bytes = plan.batch_count * plan.a * plan.b * plan.size
    strides_ok = all(so * plan.size % LINE == 0 for _, so, _ in plan.batch)
    return bool(NT) and plan.g == 1 and out_bytes >= NT_MIN_BYTES and plan.out_a * plan.size % LINE == 0 and strides_ok


def _unit_count(plan: Plan) -> int:
    return plan.batch_count * -(-plan.a // _chunk(plan)) * -(-plan.b // plan.line)


def _emit_units(ctx: KernelContext, plan: Plan, lo, hi) -> None:
    """Units [lo, hi), numbered (batch, chunk of A, stripe of B) with the
    stripe fastest: consecutive units write the same result rows (pages), one
    line further along, so the pages a unit touches stay in the TLB."""
    b = ctx.b
    src = ctx.operand_array(0).ptr
    (out,) = ctx.output_arrays()
    dst = out.ptr
    L, TA = plan.line, _chunk(plan)
    stripes = -(-plan.b // L)
    chunks = -(-plan.a // TA)
    full_b = plan.b // L  # stripes holding whole super-blocks
    full_a = plan.a // L * L
    with Loop(b, lo, hi, 1, "unit") as u:
        s = b.urem(u, i64(stripes))
        rest = b.udiv(u, i64(stripes))
        c = b.urem(rest, i64(chunks)) if chunks > 1 else i64(0)
        if plan.batch:
            out_off, in_off = _offsets(b, plan, b.udiv(rest, i64(chunks)))
            bsrc = _byte_gep(b, src, in_off, plan.size)
            bdst = _byte_gep(b, dst, out_off, plan.size)
        else:
            bsrc, bdst = src, dst
        b0 = b.mul(s, i64(L))
        a_lo = b.mul(c, i64(TA))
        a_hi = b.add(a_lo, i64(TA))
        a_hi = b.select(b.icmp_signed("<", a_hi, i64(plan.a)), a_hi, i64(plan.a))
        a_mid = b.select(b.icmp_signed("<", a_hi, i64(full_a)), a_hi, i64(full_a))
        with b.if_else(b.icmp_unsigned("<", s, i64(full_b))) as (whole, partial):
            with whole:
                nt = _use_nt(plan)
                # Non-temporal stores need aligned lines; strides are whole
                # lines, so only the base can be off (then: scalar copies, as
                # the ABI says unaligned buffers are slower; one copy of the
                # block code keeps compile time down).
                a_vec = a_mid
                if nt:
                    addr = b.ptrtoint(dst, ir.IntType(64))
                    aligned = b.icmp_unsigned("==", b.and_(addr, i64(LINE - 1)), i64(0))
                    a_vec = b.select(aligned, a_mid, a_lo)
                with Loop(b, a_lo, a_vec, L, "sb") as a0:
                    _emit_super_block(b, plan, bsrc, bdst, a0, b0, nt)
                _emit_scalar(b, plan, bsrc, bdst, a_vec, a_hi, b0, b.add(b0, i64(L)))
            with partial:
                _emit_scalar(b, plan, bsrc, bdst, a_lo, a_hi, b0, i64(plan.b))
    if _use_nt(plan):
        # Non-temporal stores are weakly ordered: make them visible before
        # the task reports completion.
        b.fence("seq_cst")


def _emit(ctx: KernelContext) -> None:
    inst = ctx.inst
    plan = plan_for(inst)
    # A copy or transpose is never assigned its operand's buffer (it cannot
    # update in place); blocks read and written through one buffer would be wrong.
    assert ctx.assignment.slice_of(inst, 0) != ctx.assignment.slice_of(inst.operands[0], 0), inst.name
    units = _unit_count(plan)
    work = _emitter.memory_work(inst.shape)
    n_tasks = 1
    if work >= _emitter.PARALLEL_MIN_WORK:
        n_tasks = max(1, min(units, _emitter.MAX_TASKS, work // _emitter.TASK_MIN_WORK))
    chunk = -(-units // n_tasks)
    n_tasks = -(-units // chunk)
    if n_tasks == 1:
        _emit_units(ctx, plan, i64(0), i64(units))
        return

    def task(tctx: KernelContext, i: ir.Value) -> None:
        _emit_units(tctx, plan, *task_range(tctx.b, i, chunk, units))

    ctx.parallel_for(n_tasks, task)


#: In-register blocks for a transpose or copy that changes the minor dimension.
BLOCKS = KernelCandidate("transpose.blocks", _emit, plan_for.why_not, shareable=True)

__all__ = ["Plan", "plan_for"]
