"""``convolution`` and convolution output fusions as a GEMM over an implicit im2col.

A convolution with ``feature_group_count == batch_group_count == 1`` is a
matrix product ``C = A @ B``:

* the rows ``m`` of A and C are the output pixels (the batch and output
  spatial dimensions), M = N * prod(output spatial sizes);
* the columns ``n`` of B and C are the output features, N = Co;
* the contraction ``k = s * Ci + ci`` runs over the kernel window positions
  ``s`` (the kernel spatial dimensions flattened, major first) and the input
  features ``ci``, K = prod(window) * Ci;

with ``A[m, s*Ci + ci] = input[n, o*stride - pad_low + w(s)*rhs_dilation, ci]``
(zero where that leaves the input: padding) and ``B[s*Ci + ci, co] =
kernel[w(s), ci, co]`` (the window reversed where ``rhs_reversal`` says so).
Any dim_labels and any layouts map to strides of the three buffers.

The im2col matrix A is never built, nor packed.  For every block of MC
output pixels a small *indirection table* holds, per pixel and window
position, a pointer to the pixel's run of ``Ci`` input features there (``Ci``
consecutive values of k), or to a run of zeros when the position is in the
padding (or the pixel is past M).  The micro-kernel
(:func:`indirect_micro_kernel`) reads A through the table straight from the
input: per k it broadcasts MR scalars from MR row pointers, as the GEMM
micro-kernel does from a packed A panel, and it keeps its accumulators in
registers across the window positions of a K block.  This is the indirect
convolution of Dukhan (2019, XNNPACK).  It beat packing A panels from the
table (with the dot's micro-kernel) for every case measured, Ci = 1 to 512:
a convolution's N (Co) is often small (64), so packing costs a large
fraction of the multiplications it feeds (docs/conv.md).

The input must then have unit-stride features.  When it does not (NCHW),
or when it is computed inside the fusion (a transpose, a convert, ...), it
is first copied (a parallel pass) into a feature-minor buffer in scratch.

B (the kernel) is packed once for all tasks into scratch, in the dot's
packed layout (K blocks of NR-wide panels, zero-padded at the N edge; read
through its generator when reversed or computed in the fusion).  The K
blocks hold whole window positions (KC rounded down to a multiple of Ci,
balanced), or, when Ci > KC, equal chunks of one position's features.

C: when the result's features are unit-stride and its pixels one stride
apart (NHWC), the result buffer accumulates across K blocks and at the last
block each finished tile goes through the kOutput epilogue (bias, relu, ...)
while in cache, by the dot's tile code (``gemm_kernel.ResultTiles``:
``store_direct``, and ``store_through_stack`` for edge tiles).  Otherwise
(NCHW, or an epilogue that changes the element type) a task accumulates its
M block in a C block in scratch and writes it out, through the epilogue,
after the last K block, feature by feature (pixels are usually the
consecutive ones then).

Tasks split M (balanced chunks of whole micro-panels), then N for a short M,
through the dot's self-scheduled ``gemm_kernel.run_grid``; each worker owns
its table and C block in scratch.  The grid is chosen at run time from the
thread count (``conv_grids``, ``codegen/task_grid.py``); the K blocks and the
order of every sum are fixed at compile time, so the result does not depend
on the number of threads.

The micro-kernel, the table builder and B's packing do not depend on the
program: they are the GEMM library's (``gemm_library.ConvVariant``,
``TableVariant``), compiled once per machine, the geometry passed as a
constant array; the module keeps the task loops, the input copy and the
epilogue (``_build_table`` and ``pack_block`` still emit the cases the
library does not take: a base dilation, a kernel read through a generator).

Declined (the elemental loop of ``convolution.py`` runs instead): element
types other than f32/f64, mixed types, feature or batch groups, empty
shapes.  A base (lhs) dilation is supported; its holes are zero rows of the
table, so it costs the multiplications by zero that the dilation implies.  Design notes and measurements: ``docs/conv.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...hlo.window import conv_dimension_numbers_of, window_of
from ...shape import F32, F64, Layout, Shape, strides
from .. import gemm_library, types
from ..emitter import KernelContext
from ..kernel_choice import KernelCandidate, NotApplicable, plan_function
from ..gemm import GroupMap, Loop, MatrixView, add, imin, indirect_micro_kernel, mul_const, pack_block
from ..gemm_kernel import (Blocking, ResultTiles, blocking_for, elementwise_to_root, output_fusion_epilogue,
                           producers, run_grid, run_tasks)
from ..gemm_task import COMPILE_TIME, TileArgs, chunk
from ..ir_array import I64, Index, IrArray, i64
from ..target import host_vector_bits
from ..task_grid import Grid, GridTable, as_value, choose, class_splits
from ..loops import loop_nest
from ..scalar_ops import convert_value
from .dot_plan import NARROW_GEMM_TYPES
from ._util import I8, PTR, ScratchPlan, fill_padding

I1 = ir.IntType(1)
#: Split a convolution into tasks of at least this many flops ...
TASK_FLOPS = 1 << 22
#: ... and into at most this many tasks.
MAX_TASKS = 32
#: Minimum task extent in M (micro-panels) and in N (NR panels).
MIN_M_PANELS = 8
MIN_N_PANELS = 4
#: With threads (``conv_grids``): tasks of at least this many flops, at most
#: this many, and chunks down to these extents when the single-thread
#: minimums leave fewer than ``TASKS_PER_THREAD`` tasks per thread.
THREADED_TASK_FLOPS = 1 << 21
THREADED_MAX_TASKS = 128
THREADED_MIN_M_PANELS = 2
THREADED_MIN_N_PANELS = 1
#: Output pixels per M block (one indirection table; rounded to MR).
MC = 120
#: Rows of the micro-tile with AVX-512's 32 vector registers (one row pointer
#: each; 8 x 2 vectors measured 3-5% faster than the dot's 6 x 2 vectors
#: there, as fast as 4 x 4 vectors, and 12 rows are more pointers than
#: registers) ...
INDIRECT_MR = 8
#: ... and with AVX2's 16: 8 x 2 vectors is 16 accumulators, spilled (3x3
#: convolutions of 32-256 features on the 2-core EPYC ran 1.6-2.4x slower
#: than with 6 or 4 rows); 4 x 2 runs as fast as 6 x 2 there and divides
#: the usual pixel counts (no edge tiles: a ResNet's convolutions compiled
#: in 0.27 s rather than 0.46).
INDIRECT_MR_AVX2 = 4
#: Elements per task when the input is copied into scratch.
COPY_TASK_ELEMENTS = 1 << 16
#: Call the GEMM library's indirect micro-kernel (compiled once per machine,
#: ``gemm_library.ConvVariant``) rather than emitting one into every module
#: (tests switch it off to compare the two; read when a kernel is emitted).
LIBRARY_MICRO_KERNEL = True
#: Build the indirection tables and pack B with the library's code too
#: (``gemm_library.ConvVariant``'s ``table`` and ``pack``) where it takes
#: the convolution (``_library_table``, ``_library_pack``).
LIBRARY_TABLE_AND_PACK = True


# ---------------------------------------------------------------------------
# Geometry and plan
# ---------------------------------------------------------------------------

@dataclass
class ConvPlan:
    conv: HloInstruction
    pt: object
    M: int
    N: int
    K: int
    Ci: int
    nseg: int                  # window positions
    mdims: tuple               # output dimensions of the M group, major first
    blk: Blocking
    spb: int                   # window positions per K block
    q: int                     # K blocks per window position (Ci > KC), else 1
    chunk: int                 # features per K block when q > 1, else Ci
    mc: int
    grid: tuple                # (tasks along M, tasks along N)
    n_tasks: int
    acc_in_output: bool
    direct: bool
    scratch: ScratchPlan
    task_plan: ScratchPlan
    task_bytes: int
    copy_input: bool           # A is read from a feature-minor copy of the input in scratch
    x_shape: Shape             # the shape of the buffer A is read from
    cn: int                    # columns of a task (NR panels); row length of its C block
    #: The grids per thread class (``task_grid``: split (M, N), sizes (mc,
    #: cn)); ``grid``, ``n_tasks``, ``mc`` and ``cn`` are its one-thread grid.
    grids: GridTable | None = None
    #: The convolution's own element type; ``pt`` is what the GEMM computes
    #: in (f32 for bf16/f16, whose input is widened by the copy, the kernel
    #: by the packing, and whose result is rounded once when written out).
    conv_pt: object = None

    @property
    def widened(self) -> bool:
        """Whether input, kernel or result are narrower than ``pt`` (bf16, f16, f8, f4)."""
        shapes = (self.conv.shape, self.conv.operands[0].shape, self.conv.operands[1].shape)
        return any(s.element_type is not self.pt for s in shapes)

    @property
    def nkb(self) -> int:
        return -(-self.nseg // self.spb) * self.q

    @property
    def n_padded(self) -> int:
        return -(-self.N // self.blk.nr) * self.blk.nr


def the_convolution(inst: HloInstruction) -> HloInstruction | None:
    """The convolution a kernel computes: the instruction, or the only
    convolution of a kOutput fusion (without dots) whose epilogue reads it
    elementwise; None otherwise."""
    if inst.opcode == "convolution":
        return inst
    comp = inst.attrs.get("calls")
    if inst.opcode != "fusion" or comp is None:
        return None
    convs = [i for i in comp.instructions if i.opcode == "convolution"]
    if len(convs) != 1 or any(i.opcode == "dot" for i in comp.instructions):
        return None
    conv = convs[0]
    if any(i.opcode in ("dot", "convolution") for i in producers(conv.operands[1])):
        return None
    if not elementwise_to_root(comp, conv):
        return None
    return conv


def holds_convolution(inst: HloInstruction) -> bool:
    comp = inst.attrs.get("calls") if inst.opcode == "fusion" else None
    return comp is not None and any(i.opcode == "convolution" for i in comp.instructions)


def _attr_int(inst, name) -> int:
    return int(str(inst.attrs.get(name, 1)))


@plan_function
def plan_conv(inst: HloInstruction) -> ConvPlan:
    """How to run ``inst`` (a convolution or a kOutput fusion of one); None
    when the implicit GEMM declines it (``plan_conv.why_not(inst)`` says why)."""
    conv = the_convolution(inst)
    if conv is None:
        raise NotApplicable("not one convolution with an elementwise epilogue")
    if not inst.shape.is_array or not conv.shape.is_array:
        raise NotApplicable("a non-array result")
    conv_pt = conv.shape.element_type
    xs, ks = conv.operands[0].shape, conv.operands[1].shape
    kinds = (conv_pt, xs.element_type, ks.element_type)
    if all(t is F64 for t in kinds) or all(t is F32 for t in kinds):
        pt = conv_pt
    elif all(t in NARROW_GEMM_TYPES for t in kinds):
        pt = F32
    else:
        raise NotApplicable("not f32 or f64 operands and result of one type, nor of narrower floats")
    if _attr_int(conv, "feature_group_count") != 1 or _attr_int(conv, "batch_group_count") != 1:
        raise NotApplicable("grouped (feature_group_count or batch_group_count > 1)")
    if tuple(inst.shape.dimensions) != tuple(conv.shape.dimensions):
        raise NotApplicable("the epilogue changes the convolution's dimensions")
    try:
        dn = conv_dimension_numbers_of(conv.attrs)
        window = window_of(conv.attrs)
    except ValueError as e:
        raise NotApplicable(f"dimension numbers or window not understood: {e}") from None
    nsp = dn.num_spatial_dims
    if len(window) != nsp:
        raise NotApplicable("the window's rank is not the number of spatial dimensions")
    out = inst.shape
    Ci = xs.dimensions[dn.input_feature_dimension]
    N = out.dimensions[dn.output_feature_dimension]
    ksizes = [wd.size for wd in window]
    nseg = math.prod(ksizes)
    mdims = tuple(d for d in reversed(out.layout.minor_to_major)
                  if d == dn.output_batch_dimension or d in dn.output_spatial_dimensions)
    M = math.prod(out.dimensions[d] for d in mdims)
    K = nseg * Ci
    if min(M, N, K) == 0 or xs.element_count() == 0:
        # An empty result, or all zeros (nothing to contract, or an empty
        # input seen only through its padding): the elemental loop does it.
        raise NotApplicable("an empty result or contraction")
    acc_in_output = out.element_type is pt and conv_pt is pt
    ost = strides(out)
    g_m = GroupMap(mdims, out.dimensions, ost)
    g_n = GroupMap((dn.output_feature_dimension,), out.dimensions, ost)
    direct = acc_in_output and g_n.affine and g_n.stride == 1 and g_m.affine
    # Where A comes from: the input buffer in place, or a feature-minor copy
    # of the input in scratch (an input computed inside the fusion, or one
    # whose features are strided).
    x_shape = _input_buffer_shape(inst, conv)
    # A narrow input is copied too: widened to f32 on the way.
    copy_input = (x_shape is None or (Ci > 1 and strides(x_shape)[dn.input_feature_dimension] != 1)
                  or xs.element_type is not pt)
    if copy_input:
        x_shape = _feature_minor(Shape(pt, xs.dimensions, layout=xs.layout), dn.input_feature_dimension)
    blk = blocking_for(pt, M, N, wide=False)
    mr = INDIRECT_MR if host_vector_bits() >= 512 else INDIRECT_MR_AVX2
    if M > mr:
        blk = Blocking(blk.vw, mr, blk.nr, blk.kc, blk.mc, blk.nc)
    mr, nr = blk.mr, blk.nr
    # K blocks: whole window positions (balanced), or chunks of one position's features.
    if Ci <= blk.kc:
        spb_max = max(1, blk.kc // Ci)
        nblocks = -(-nseg // spb_max)
        spb, q, chunk = -(-nseg // nblocks), 1, Ci
    else:
        q = -(-Ci // blk.kc)
        spb, chunk = 1, -(-Ci // q)
        q = -(-Ci // chunk)
    m_panels, n_panels = -(-M // mr), -(-N // nr)
    grids = conv_grids(m_panels, n_panels, 2 * M * N * K, blk)
    (nmt, nnt), (mc, cn) = grids.serial.split, grids.serial.sizes
    esize = pt.byte_size
    task = ScratchPlan()
    task.add("table", max(g.sizes[0] for g in grids.grids) * spb * 8)
    if not direct:
        task.add("c", max(g.sizes[0] * g.sizes[1] for g in grids.grids) * esize)
    scratch = ScratchPlan()
    scratch.add("counters", 128)
    scratch.add("bshared", K * n_panels * nr * esize)
    if copy_input:
        scratch.add("xcopy", x_shape.buffer_element_count() * esize)
    # A region per worker that may run at once (a worker keeps it from task to task).
    scratch.add("tasks", grids.max_workers * task.size)
    return ConvPlan(conv, pt, M, N, K, Ci, nseg, mdims, blk, spb, q, chunk, mc, (nmt, nnt),
                    nmt * nnt, acc_in_output, direct, scratch, task, task.size, copy_input, x_shape, cn,
                    grids, conv_pt)


def conv_grids(m_panels: int, n_panels: int, flops: int, blk: Blocking) -> GridTable:
    """The task grid of the implicit GEMM for each thread class: split (M, N)
    and sizes (mc, cn: the M block and the columns of a task).  One thread:
    ``flops / TASK_FLOPS`` tasks, at most ``MAX_TASKS``, chunks of at least
    ``MIN_M_PANELS`` x ``MIN_N_PANELS``; ``p`` threads as the dot's
    (``dot_plan.gemm_grids``): up to ``TASKS_PER_THREAD * p`` tasks, the
    longer chunk halved down to ``THREADED_MIN_M_PANELS`` x
    ``THREADED_MIN_N_PANELS``."""
    mr, nr = blk.mr, blk.nr
    splits = class_splits(flops, (m_panels, n_panels), (mr, nr), (MIN_M_PANELS, MIN_N_PANELS),
                          (THREADED_MIN_M_PANELS, THREADED_MIN_N_PANELS), (TASK_FLOPS, MAX_TASKS),
                          (THREADED_TASK_FLOPS, THREADED_MAX_TASKS))
    grids = []
    for parts in splits:
        cm = -(-m_panels // parts[0]) * mr
        cn = -(-n_panels // parts[1]) * nr
        grids.append(Grid(parts, (min(max(mr, MC // mr * mr), cm), cn)))
    return GridTable(tuple(grids))


def _input_buffer_shape(inst: HloInstruction, conv: HloInstruction):
    """The shape of the buffer holding the convolution's input (an operand of
    ``inst``), or None when the input is computed inside the fusion."""
    if inst.opcode == "convolution":
        return inst.operands[0].shape
    x = conv.operands[0]
    return inst.operands[x.parameter_number].shape if x.opcode == "parameter" else None


def _feature_minor(shape: Shape, feature: int) -> Shape:
    """``shape`` with the feature dimension made minor-most (the others keep their order)."""
    m2m = (feature,) + tuple(d for d in shape.layout.minor_to_major if d != feature)
    return Shape(shape.element_type, shape.dimensions, layout=Layout(minor_to_major=m2m))


def _scratch_bytes(me, inst: HloInstruction) -> int:
    plan = plan_conv(inst)
    return plan.scratch.size if plan is not None else 0


# ---------------------------------------------------------------------------
# The indirect micro-kernel
# ---------------------------------------------------------------------------

def library_variant(plan: ConvPlan, B: MatrixView | None = None) -> gemm_library.ConvVariant:
    """The GEMM library's convolution code for ``plan`` (``B``: the kernel's
    view, which picks the packing code; the micro-kernel and table do not
    depend on it)."""
    b_kind, b_pt = "n", None
    if B is not None:
        b_kind = "n" if B.gc.stride == 1 else "k" if B.gr.stride == 1 else "g"
        b_pt = B.pt if B.pt is not plan.pt else None
    blk = plan.blk
    return gemm_library.ConvVariant(plan.pt, blk.mr, blk.nr, blk.vw, b_kind, b_pt)


def micro_kernel(module: ir.Module, plan: ConvPlan) -> ir.Function:
    """The indirect micro-kernel (``gemm.indirect_micro_kernel``) a task
    calls: the GEMM library's (``LIBRARY_MICRO_KERNEL``) or the module's own."""
    if LIBRARY_MICRO_KERNEL:
        return gemm_library.declare(module, library_variant(plan), "uk")
    blk = plan.blk
    return indirect_micro_kernel(module, plan.pt, blk.mr, blk.nr, blk.vw)


def _zeros(module: ir.Module, pt, n: int) -> ir.GlobalVariable:
    """A constant run of ``n`` zeros of ``pt`` (what padded window positions read)."""
    name = f"xlac.conv.zeros.{pt.value}.{n}"
    g = module.globals.get(name)
    if g is None:
        ty = ir.ArrayType(types.memory_type(pt), n)
        g = ir.GlobalVariable(module, ty, name)
        g.initializer = ir.Constant(ty, None)
        g.global_constant = True
        g.linkage = "internal"
        g.align = 64
    return g


# ---------------------------------------------------------------------------
# Operands, result and epilogue in one task's function
# ---------------------------------------------------------------------------

class _ConvOperands:
    """The input buffer, the kernel (as the K x N matrix B), C and the
    epilogue (``tiles``: how finished tiles reach the result), built in the
    function of ``ctx``."""

    def __init__(self, ctx: KernelContext, plan: ConvPlan):
        inst, conv, b = ctx.inst, plan.conv, ctx.b
        self.b, self.plan = b, plan
        self.epilogue = None
        kernel_gen = None
        x_arr = x_gen = None
        if inst.opcode == "convolution":
            k_arr = ctx.operand_array(1)
            if plan.copy_input:
                x_gen = ctx.operand_generator(0)
            else:
                x_arr = ctx.operand_array(0)
        else:
            gens, self.epilogue = output_fusion_epilogue(ctx, conv)
            xop = conv.operands[0]
            if plan.copy_input:
                x_gen = gens[id(xop)]
            else:
                x_arr = ctx.operand_array(xop.parameter_number)
            kop = conv.operands[1]
            if kop.opcode == "parameter":
                k_arr = ctx.operand_array(kop.parameter_number)
            else:
                k_arr, kernel_gen = None, gens[id(kop)]
        dn = conv_dimension_numbers_of(conv.attrs)
        window = window_of(conv.attrs)
        self.dn, self.window = dn, window
        if plan.copy_input:
            x_arr = IrArray(plan.scratch.pointer(b, ctx.scratch_pointer(), "xcopy"), plan.x_shape)
        elif plan.Ci > 1 and strides(x_arr.shape)[dn.input_feature_dimension] != 1:
            raise AssertionError(f"{inst.name}: input buffer {x_arr.shape}, planned {plan.x_shape}")
        self.x, self.x_gen = x_arr, x_gen
        # B: rows (window positions major first, then input features), columns
        # the output features.  A reversed window reads the kernel backwards.
        kshape = k_arr.shape if k_arr is not None else kop.shape
        rdims = tuple(dn.kernel_spatial_dimensions) + (dn.kernel_input_feature_dimension,)
        cdims = (dn.kernel_output_feature_dimension,)
        if window.has_reversal or kernel_gen is not None:
            read = kernel_gen if kernel_gen is not None else (lambda index: k_arr.read(b, index))
            if window.has_reversal:
                flips = [(d, wd.size) for d, wd in zip(dn.kernel_spatial_dimensions, window)
                         if wd.window_reversal]

                def gen(index: Index, read=read):
                    multi = list(index.multi)
                    for d, size in flips:
                        multi[d] = b.sub(i64(size - 1), multi[d])
                    return read(Index(multi))
            else:
                gen = read
            self.B = MatrixView(kshape, (), rdims, cdims, None, gen)
        else:
            self.B = MatrixView(kshape, (), rdims, cdims, k_arr.ptr, None)
        out = ctx.output_arrays()[0]
        self.out = out
        self.C = MatrixView(out.shape, (), plan.mdims, (dn.output_feature_dimension,), out.ptr, None)
        self.tiles = ResultTiles(self.C, out, self.epilogue, plan.pt, plan.blk.mr, plan.blk.nr,
                                 plan.M, plan.N, plan.nkb)

    def finish(self, index: Index, v) -> None:
        """Write the final value ``v`` of an element of C (through the
        epilogue), rounded first to the convolution's type when that is narrower."""
        if self.plan.conv_pt is not self.plan.pt:
            v = convert_value(self.b, v, self.plan.pt, self.plan.conv_pt)
        self.tiles.finish(self.b, index, v)


class _ConvTileArgs(TileArgs):
    """Tile arguments for ``ResultTiles.store_direct`` / ``store_through_stack``;
    ``ap`` is the panel's slice of the indirection table, ``nseg``/``seglen``/
    ``feat0`` the K block (``c0`` is the tile's first column)."""

    nseg = seglen = feat0 = None

    def call(self, b, uk, c, ldc, accumulate) -> None:
        b.call(uk, [self.nseg, self.seglen, self.ap, self.feat0, self.bp, c, ldc, accumulate])


# ---------------------------------------------------------------------------
# Emission
# ---------------------------------------------------------------------------

def _k_block(b, plan: ConvPlan, kb):
    """First window position, positions, feature offset, features per
    position, first k and length of K block ``kb``."""
    if plan.q == 1:
        s0 = b.mul(kb, i64(plan.spb))
        ns = imin(b, i64(plan.spb), b.sub(i64(plan.nseg), s0)) if plan.nseg % plan.spb else i64(plan.spb)
        c0 = i64(0)
        seglen = i64(plan.Ci)
        pc = b.mul(s0, i64(plan.Ci))
        kc = b.mul(ns, i64(plan.Ci))
    else:
        s0 = b.udiv(kb, i64(plan.q))
        ns = i64(1)
        c0 = b.mul(b.urem(kb, i64(plan.q)), i64(plan.chunk))
        seglen = imin(b, i64(plan.chunk), b.sub(i64(plan.Ci), c0))
        pc = b.add(b.mul(s0, i64(plan.Ci)), c0)
        kc = seglen
    return s0, ns, c0, seglen, pc, kc


def _b_panel(b, plan: ConvPlan, shared, pc, kc, q):
    """The packed B micro-panel ``q`` of the K block starting at ``pc`` (length ``kc``)."""
    off = b.add(b.mul(pc, i64(plan.n_padded)), b.mul(q, b.mul(kc, i64(plan.blk.nr))))
    return b.gep(shared, [off], inbounds=True, source_etype=types.memory_type(plan.pt))


def _emit_pack_b_task(ctx: KernelContext, plan: ConvPlan, kb) -> None:
    """Pack K block ``kb`` of B (all N panels) into the shared scratch."""
    ops = _ConvOperands(ctx, plan)
    b = ctx.b
    shared = plan.scratch.pointer(b, ctx.scratch_pointer(), "bshared")
    _s0, _ns, _c0, _seglen, pc, kc = _k_block(b, plan, kb)
    dst = _b_panel(b, plan, shared, pc, kc, i64(0))
    if _library_pack(ops.B):
        fn = gemm_library.declare(b.module, library_variant(plan, ops.B), "pack")
        b.call(fn, [ops.B.ptr, i64(ops.B.gr.stride), i64(ops.B.gc.stride), i64(plan.N), pc, kc, dst])
        return
    pack_block(b, ops.B, i64(0), i64(0), i64(0), i64(plan.N), plan.N, pc, kc, dst, plan.blk.nr, False,
               plan.blk.vw, plan.pt)


def _library_pack(B: MatrixView) -> bool:
    """Whether the library packs B: read from a buffer (not reversed, not
    computed in the fusion) with one stride per group."""
    return LIBRARY_TABLE_AND_PACK and B.is_array and B.gr.affine and B.gc.affine


def _build_table(b, alloca_builder, plan: ConvPlan, ops: _ConvOperands, m0, m_end, s0, ns, table) -> None:
    """Row pointers of pixels [m0, m_end) (whole micro-panels, the last maybe
    partial) at window positions [s0, s0 + ns): ``table[(p*spb + s - s0)*mr + j]``
    points to the input features of pixel ``m0 + p*mr + j`` at window position
    ``s``, or to zeros (padding, holes of a base dilation, pixels past M)."""
    library = _library_table(b.module, plan, ops)
    if library is not None:
        variant, geom = library
        fn = gemm_library.declare(b.module, variant, "table")
        zeros = b.bitcast(_zeros(b.module, plan.pt, plan.Ci), PTR)
        b.call(fn, [geom, ops.x.ptr, zeros, m0, m_end, s0, ns, table])
        return
    dn, window = ops.dn, ops.window
    mr = plan.blk.mr
    pt = plan.pt
    ety = types.memory_type(pt)
    xs = ops.x.shape
    xst = strides(xs)
    out_dims = ops.out.shape.dimensions
    nsp = dn.num_spatial_dims
    in_sizes = [xs.dimensions[d] for d in dn.input_spatial_dimensions]
    out_sizes = [out_dims[d] for d in dn.output_spatial_dimensions]
    ksizes = [wd.size for wd in window]
    zeros = b.bitcast(_zeros(b.module, pt, plan.Ci), PTR)
    # Which spatial dimensions can leave the input (padding, negative padding,
    # strides), and which are base-dilated: a position there is in the input
    # when on the dilation grid, at position / dilation (holes read zeros).
    checked = []
    dilated = [wd.base_dilation != 1 for wd in window]
    for d, wd in enumerate(window):
        lowest = -wd.padding_low
        highest = (out_sizes[d] - 1) * wd.stride - wd.padding_low + (wd.size - 1) * wd.window_dilation
        checked.append(dilated[d] or not (lowest >= 0 and highest < (in_sizes[d] - 1) * wd.base_dilation + 1))
    edge = plan.M % mr != 0
    # Loops over the panel's pixels, not mr copies of their index arithmetic:
    # the unrolled code was most of a convolution's compile time.  A pixel's
    # offset, window origin and validity are worked out once per panel into
    # small arrays, a window position's shifts once per position.
    base_of = alloca_builder.alloca(I64, size=mr, name="tbase")
    origin_of = [alloca_builder.alloca(I64, size=mr, name=f"torg{d}") for d in range(nsp)]
    valid_of = alloca_builder.alloca(I64, size=mr, name="tvalid") if edge else None
    with Loop(b, m0, m_end, mr, "tp") as r0:
        row_base = b.mul(b.udiv(b.sub(r0, m0), i64(mr)), i64(plan.spb * mr))
        with Loop(b, 0, mr, 1, "tj", vectorize=False) as j:
            m = b.add(r0, j)
            if edge:
                inside_m = b.icmp_signed("<", m, i64(plan.M))
                b.store(b.zext(inside_m, I64), b.gep(valid_of, [j], inbounds=True, source_etype=I64))
                m = b.select(inside_m, m, i64(plan.M - 1))
            comps = dict(zip(plan.mdims, ops.C.gr.components(b, m)))
            nb = comps.get(dn.output_batch_dimension, i64(0))
            off = mul_const(b, nb, xst[dn.input_batch_dimension])
            for d in range(nsp):
                o = comps.get(dn.output_spatial_dimensions[d], i64(0))
                wd = window[d]
                pos = b.sub(mul_const(b, o, wd.stride), i64(wd.padding_low))
                b.store(pos, b.gep(origin_of[d], [j], inbounds=True, source_etype=I64))
                if not dilated[d]:
                    off = b.add(off, b.mul(pos, i64(xst[dn.input_spatial_dimensions[d]])))
            b.store(off, b.gep(base_of, [j], inbounds=True, source_etype=I64))
        with Loop(b, 0, ns, 1, "ts", vectorize=False) as si:
            s = b.add(s0, si)
            # Window position s -> (w_0, ..., w_{n-1}), major first.
            ws, rest = [None] * nsp, s
            for d in reversed(range(nsp)):
                if d == 0:
                    ws[d] = rest
                else:
                    ws[d] = b.urem(rest, i64(ksizes[d]))
                    rest = b.udiv(rest, i64(ksizes[d]))
            shifts = [mul_const(b, ws[d], window[d].window_dilation) for d in range(nsp)]
            soff = i64(0)
            for d in range(nsp):
                if not dilated[d]:
                    soff = add(b, soff, mul_const(b, shifts[d], xst[dn.input_spatial_dimensions[d]]))
            slot0 = b.add(row_base, b.mul(si, i64(mr)))
            with Loop(b, 0, mr, 1, "tk", vectorize=False) as j:
                ok = None
                if edge:
                    valid = b.load(b.gep(valid_of, [j], inbounds=True, source_etype=I64))
                    ok = b.icmp_unsigned("!=", valid, i64(0))
                off = b.add(b.load(b.gep(base_of, [j], inbounds=True, source_etype=I64)), soff)
                for d in range(nsp):
                    pos = b.add(b.load(b.gep(origin_of[d], [j], inbounds=True, source_etype=I64)), shifts[d])
                    if dilated[d]:
                        bd = i64(window[d].base_dilation)
                        on_grid = b.icmp_signed("==", b.srem(pos, bd), i64(0))
                        ok = on_grid if ok is None else b.and_(ok, on_grid)
                        pos = b.sdiv(pos, bd)
                        off = b.add(off, b.mul(pos, i64(xst[dn.input_spatial_dimensions[d]])))
                    if checked[d]:
                        inside = b.icmp_unsigned("<", pos, i64(in_sizes[d]))
                        ok = inside if ok is None else b.and_(ok, inside)
                ptr = b.gep(ops.x.ptr, [off], source_etype=ety)
                if ok is not None:
                    # A constant operand's pointer keeps its global's type: the
                    # zeros take whichever type the input pointer has.
                    ptr = b.select(ok, ptr, zeros if zeros.type == ptr.type else b.bitcast(zeros, ptr.type))
                b.store(ptr, b.gep(table, [b.add(slot0, j)], inbounds=True, source_etype=PTR), align=8)


def _library_table(module: ir.Module, plan: ConvPlan, ops: _ConvOperands):
    """``(variant, geometry)`` of the library's table builder for the
    convolution (the geometry a constant ``gemm_library.GEOM`` array of the
    module), or None when it does not take it (a base dilation, more spatial
    dimensions than it has)."""
    dn, window = ops.dn, ops.window
    nsp = dn.num_spatial_dims
    if not LIBRARY_TABLE_AND_PACK or nsp > gemm_library.GEOM_SPATIAL or any(
            wd.base_dilation != 1 for wd in window):
        return None
    xs = ops.x.shape
    xst = strides(xs)
    out_dims = ops.out.shape.dimensions
    in_sizes = [xs.dimensions[d] for d in dn.input_spatial_dimensions]
    out_sizes = [out_dims[d] for d in dn.output_spatial_dimensions]
    g = dict.fromkeys(gemm_library.GEOM, 0)
    g["M"], g["spb"] = plan.M, plan.spb
    checked = ""
    for d, wd in enumerate(window):
        x_stride = xst[dn.input_spatial_dimensions[d]]
        lowest = -wd.padding_low
        highest = (out_sizes[d] - 1) * wd.stride - wd.padding_low + (wd.size - 1) * wd.window_dilation
        checked += "0" if lowest >= 0 and highest < in_sizes[d] else "1"
        g[f"start{d}"], g[f"in{d}"], g[f"ks{d}"] = -wd.padding_low, in_sizes[d], wd.size
        g[f"dil{d}"], g[f"xst{d}"] = wd.window_dilation, x_stride
        g["base0"] -= wd.padding_low * x_stride
    for k, dim in enumerate(plan.mdims):
        g[f"size{k}"] = out_dims[dim]
        if dim == dn.output_batch_dimension:
            g[f"xmul{k}"] = xst[dn.input_batch_dimension]
        else:
            d = list(dn.output_spatial_dimensions).index(dim)
            wd = window[d]
            g[f"xmul{k}"] = wd.stride * xst[dn.input_spatial_dimensions[d]]
            g[f"org{d}_{k}"] = wd.stride
    values = [g[name] for name in gemm_library.GEOM]
    name = "xlac.conv.geom." + "_".join(str(v) for v in values).replace("-", "m")
    const = module.globals.get(name)
    if const is None:
        ty = ir.ArrayType(I64, len(values))
        const = ir.GlobalVariable(module, ty, name)
        const.initializer = ir.Constant(ty, [i64(v) for v in values])
        const.global_constant = True
        const.linkage = "internal"
        const.align = 8
    return gemm_library.TableVariant(plan.pt, plan.blk.mr, checked, plan.M % plan.blk.mr != 0), const


def is_glue(inst: HloInstruction) -> bool:
    """Whether the implicit GEMM of ``inst`` is glue (``KernelCandidate.glue``):
    its own code only loops over tiles calling the library (the indirection
    tables, B's packing, the micro-kernel), and a fusion's epilogue runs in a
    function of its own (:func:`_epilogue_function`, compiled hot).  That
    takes C written in place (``direct``) in whole tiles, the input read
    where it is, and the kernel (B) from a buffer the library packs.  (A
    convolution's loops compiled with O3 were ~30-35 ms of LLVM each, ~5 ms
    without optimisation, running as fast.)  The conditions are
    :func:`_library_table`'s and :func:`_library_pack`'s, read off the
    instruction (those take the views the kernel builds); a mismatch only
    changes how hard the kernel is optimised."""
    plan = plan_conv(inst)
    if plan is None or not plan.direct or plan.copy_input or plan.M % plan.blk.mr or plan.N % plan.blk.nr:
        return False
    conv = plan.conv
    window = window_of(conv.attrs)
    if any(wd.base_dilation != 1 or wd.window_reversal for wd in window) or \
            len(window.dimensions) > gemm_library.GEOM_SPATIAL:
        return False
    kop = conv.operands[1]
    if inst.opcode == "fusion":
        if kop.opcode != "parameter":
            return False
        kshape = inst.operands[kop.parameter_number].shape
    else:
        kshape = kop.shape
    dn = conv_dimension_numbers_of(conv.attrs)
    st = strides(kshape)
    rows = GroupMap(tuple(dn.kernel_spatial_dimensions) + (dn.kernel_input_feature_dimension,), kshape.dimensions, st)
    cols = GroupMap((dn.kernel_output_feature_dimension,), kshape.dimensions, st)
    return LIBRARY_TABLE_AND_PACK and rows.affine and cols.affine


#: ``void epilogue(ptr args, i64 r0, i64 c0)``: a fusion's epilogue over the
#: full tile at (r0, c0); ``args``: the kernel's (results, params, temp, opts).
EPILOGUE_TYPE = ir.FunctionType(ir.VoidType(), [PTR, I64, I64])


def _epilogue_function(ctx: KernelContext, plan: ConvPlan) -> ir.Function:
    """The epilogue of a glue kernel (:func:`is_glue`) as a function of its
    own, reported to the back end apart from the kernel, so that it is
    compiled hot (vectorised) while the kernel's loops are compiled cold."""
    ectx, (r0, c0) = ctx.outlined(EPILOGUE_TYPE, "epilogue")
    bb = ectx.b
    tiles = _ConvOperands(ectx, plan).tiles
    tiles.tile_epilogue(bb, r0, c0, tiles.batch(bb, i64(0)))
    bb.ret_void()
    ctx.me.report_hot(ectx.fn)
    return ectx.fn


def _emit_task(ctx: KernelContext, plan: ConvPlan, t, w, epilogue_fn=None) -> None:
    ops = _ConvOperands(ctx, plan)
    b = ctx.b
    outlined = None
    if epilogue_fn is not None:
        epi_args = ctx.args_array()
        outlined = lambda bb, r0, c0: bb.call(epilogue_fn, [epi_args, r0, c0])  # noqa: E731
    pt = plan.pt
    ety = types.memory_type(pt)
    mr, nr, vw = plan.blk.mr, plan.blk.nr, plan.blk.vw
    M, N = plan.M, plan.N
    # The grid this call runs (ints when every thread count has the same).
    chosen = choose(b, ctx.opts_arg, plan.grids)
    (nmt, nnt), (mc, cn) = chosen.split, chosen.sizes
    tn = i64(0) if nnt == 1 else COMPILE_TIME.rem(b, t, nnt)
    tm = t if nnt == 1 else COMPILE_TIME.div(b, t, nnt)
    m_lo, m_hi = chunk(b, tm, nmt, -(-M // mr), mr, M)
    n_lo, n_hi = chunk(b, tn, nnt, -(-N // nr), nr, N)
    mc, cn = as_value(mc), as_value(cn)
    base = plan.scratch.pointer(b, ctx.scratch_pointer(), "tasks")
    base = b.gep(base, [b.mul(w, i64(plan.task_bytes))], inbounds=True, source_etype=I8)
    table = plan.task_plan.pointer(b, base, "table")
    cbuf = plan.task_plan.pointer(b, base, "c") if not plan.direct else None
    shared = plan.scratch.pointer(b, ctx.scratch_pointer(), "bshared")
    tile = ctx.alloca_builder.alloca(ir.ArrayType(ety, mr * nr), name="tile")
    tile.align = 64
    uk = micro_kernel(b.module, plan)
    m_edge, n_edge = M % mr, N % nr
    C = ops.C
    ldc = C.gr.stride if plan.direct else 0
    nkb = plan.nkb
    c_batch = ops.tiles.batch(b, i64(0))       # no batch: (offset 0, no components)
    with Loop(b, m_lo, m_hi, mc, "ic") as ic:
        mc_end = imin(b, b.add(ic, mc), m_hi)
        with Loop(b, 0, nkb, 1, "kb") as kb:
            s0, ns, c0, seglen, pc, kc = _k_block(b, plan, kb)
            # The table of this K block (built per K block, not per M block:
            # measured as fast, and small for windows of thousands of positions).
            _build_table(b, ctx.alloca_builder, plan, ops, ic, mc_end, s0, ns, table)
            first = b.icmp_signed("==", kb, i64(0))
            last = b.icmp_signed("==", kb, i64(nkb - 1))
            with Loop(b, n_lo, n_hi, nr, "jr") as n0:
                bp = _b_panel(b, plan, shared, pc, kc, b.udiv(n0, i64(nr)))
                with Loop(b, ic, mc_end, mr, "ir") as r0:
                    p = b.udiv(b.sub(r0, ic), i64(mr))
                    ap = b.gep(table, [b.mul(p, i64(plan.spb * mr))], inbounds=True, source_etype=PTR)
                    args = _ConvTileArgs(i64(0), c_batch, r0, n0, kc, ap, bp, first, last)
                    args.nseg, args.seglen, args.feat0 = ns, seglen, c0
                    if not plan.direct:
                        # Full tiles into the task's C block; written out below.
                        cp = b.gep(cbuf, [b.add(b.mul(b.sub(r0, ic), cn), b.sub(n0, n_lo))],
                                   inbounds=True, source_etype=ety)
                        args.call(b, uk, cp, cn, b.not_(first))
                    else:
                        conds = []
                        if m_edge:
                            conds.append(b.icmp_signed("<", r0, i64(M - m_edge)))
                        if n_edge:
                            conds.append(b.icmp_signed("<", n0, i64(N - n_edge)))
                        if conds:
                            full = conds[0] if len(conds) == 1 else b.and_(conds[0], conds[1])
                            with b.if_else(full) as (then, otherwise):
                                with then:
                                    ops.tiles.store_direct(b, uk, args, ldc, outlined)
                                with otherwise:
                                    ops.tiles.store_through_stack(b, uk, args, tile)
                        else:
                            ops.tiles.store_direct(b, uk, args, ldc, outlined)
        if not plan.direct:
            _write_block(b, plan, ops, cbuf, cn, ic, mc_end, n_lo, n_hi)


def _write_block(b, plan: ConvPlan, ops: _ConvOperands, cbuf, cn, m0, m_end, n_lo, n_hi) -> None:
    """Write the finished C block (rows [m0, m_end), columns [n_lo, n_hi), in
    the task's buffer) to the result through its layout and the epilogue."""
    C = ops.C
    ety = types.memory_type(plan.pt)
    if C.gc.affine and C.gc.stride == 1:
        # Unit-stride features (an NHWC-like result of another type than the
        # accumulator, e.g. f16): rows outer, so that the inner loop reads a row
        # of the block and writes a run of features, both consecutive, and is
        # vectorised (the f16 rounding with it).  Columns outer, it cost 5x
        # the f32 convolution itself (8x32x32x64 f16: 16.7 against 3.3 ms).
        with Loop(b, m0, m_end, 1, "wr") as r:
            rcomp = C.gr.components(b, r)
            row = b.gep(cbuf, [b.sub(b.mul(b.sub(r, m0), cn), n_lo)], source_etype=ety)
            with Loop(b, n_lo, n_hi, 1, "wc") as c:
                v = b.load(b.gep(row, [c], source_etype=ety), typ=ety, align=plan.pt.byte_size)
                ops.finish(C.index(b, [], rcomp, C.gc.components(b, c)), v)
        return
    # Columns outer: the result's features are strided (else the tiles were
    # stored directly), its pixels usually consecutive; a power-of-two
    # feature stride put the lines of one pixel into a few L1 sets.
    with Loop(b, n_lo, n_hi, 1, "wc") as c:
        ccomp = C.gc.components(b, c)
        col = b.gep(cbuf, [b.sub(c, b.add(n_lo, b.mul(m0, cn)))], source_etype=ety)
        with Loop(b, m0, m_end, 1, "wr") as r:
            v = b.load(b.gep(col, [b.mul(r, cn)], source_etype=ety), typ=ety,
                       align=plan.pt.byte_size)
            ops.finish(C.index(b, [], C.gr.components(b, r), ccomp), v)


def _emit_copy_task(ctx: KernelContext, plan: ConvPlan, t, chunk: int, extent: int) -> None:
    """Write the input (its generator) into the feature-minor copy in scratch:
    rows [t*chunk, (t+1)*chunk) of the copy's outermost dimension."""
    ops = _ConvOperands(ctx, plan)
    b = ctx.b
    outer = None
    if extent > 1:
        lo = b.mul(t, i64(chunk))
        outer = (lo, imin(b, b.add(lo, i64(chunk)), i64(extent)))
    xpt = plan.conv.operands[0].shape.element_type
    with loop_nest(b, plan.x_shape, outer_range=outer) as index:
        ops.x.write(b, index, convert_value(b, ops.x_gen(index), xpt, plan.pt))


def emit_convolution(ctx: KernelContext) -> None:
    plan = plan_conv(ctx.inst)
    fill_padding(ctx.b, ctx.output_arrays()[0])
    if plan.copy_input:
        xs = plan.x_shape
        order = [d for d in reversed(xs.layout.minor_to_major) if xs.dimensions[d] != 1]
        extent = xs.dimensions[order[0]] if order else 1
        n_copy = max(1, min(extent, MAX_TASKS, xs.element_count() // COPY_TASK_ELEMENTS))
        chunk = -(-extent // n_copy)
        n_copy = -(-extent // chunk)
        run_tasks(ctx, plan.scratch, n_copy, 1,
                        lambda tctx, t, w: _emit_copy_task(tctx, plan, t, chunk, extent))
    run_tasks(ctx, plan.scratch, plan.nkb, 1, lambda tctx, kb, w: _emit_pack_b_task(tctx, plan, kb))
    # A glue kernel's epilogue runs in a function of its own (compiled hot).
    epilogue_fn = _epilogue_function(ctx, plan) if ctx.inst.opcode == "fusion" and is_glue(ctx.inst) else None
    run_grid(ctx, plan.scratch, plan.grids, 0, lambda tctx, t, w: _emit_task(tctx, plan, t, w, epilogue_fn))


#: The implicit GEMM, tried first for a convolution and for a kOutput fusion
#: (which holds a convolution or a dot: the dot's kernels come next).
def _applies(widened: bool):
    """None when the implicit GEMM takes ``inst`` in this family (``widened``:
    bf16/f16, computed in f32), else why not."""
    def applies(inst: HloInstruction) -> str | None:
        plan = plan_conv(inst)
        if plan is None:
            return plan_conv.why_not(inst)
        if plan.widened != widened:
            return ("bf16/f16/f8/f4: widened to f32 by convolution.implicit-gemm.widen" if plan.widened
                    else "no float narrower than f32 to widen")
        return None
    return applies


IMPLICIT_GEMM = KernelCandidate("convolution.implicit-gemm", emit_convolution, _applies(False), _scratch_bytes,
                              shareable=True, glue=is_glue)
#: The same kernel for convolutions of floats narrower than f32 (f32 arithmetic), named apart so that dumps say so.
IMPLICIT_GEMM_WIDEN = KernelCandidate("convolution.implicit-gemm.widen", emit_convolution, _applies(True),
                                      _scratch_bytes, shareable=True)
CANDIDATES = (IMPLICIT_GEMM, IMPLICIT_GEMM_WIDEN)
