"""8-bit integer and bf16 convolutions on AMX tiles, reading A straight from the input.

A convolution of s8/u8 operands to s32, or of bf16 operands to bf16 or f32
(or a kOutput fusion of one), is a GEMM whose rows are output pixels and
whose contraction runs over window positions and input features
(``docs/conv.md``).  An AMX tile load reads 16 rows of 64 bytes at any one
stride, and in a feature-minor input 16 consecutive output pixels of one
output row see, at each window position, 16 runs of input features a
constant stride apart (``stride * C`` elements).  So the tiles of A are
loaded from the input itself, with no im2col and no packing:

* the input is first copied (one parallel pass, with the kernel's packing)
  into ``xpad`` in scratch: batch-major, feature-minor, its spatial
  dimensions padded (low/high padding, the holes of a base dilation) and
  its features padded with zeros to ``Cp`` bytes, a multiple of 64.  In
  ``xpad`` the convolution has no padding left: output pixel ``o`` at window
  position ``w`` reads ``xpad[b, o*stride + w*dilation, :]``;
* an *M tile* is 16 consecutive pixels of one output row (the output's last
  spatial dimension; the last tile of a row is partial, its extra rows read
  the next pixels and are dropped);  its A tile at k tile ``t`` (a window
  position and 64 bytes of features) is one ``tileloadd`` at ``base +
  offs[t]``, rows ``stride * Cp`` bytes apart (``offs``: a constant table);
* B (the kernel) is packed once per call into ``gemm_native``'s B panels
  (words of 4 bytes of k, NR columns, K = positions x ``Cp``);
* the micro-kernel (``tdpb[su][su]d`` / ``tdpbf16ps``) keeps 2 x 2 C tiles
  (two M tiles, 32 output features) over the whole contraction and stores
  them into the result (NHWC-like s32 or f32: features unit-stride; rows
  are pixels ``ldc`` apart), or through a stack tile, rounded to bf16 where
  the result is, and the epilogue, element by element (edges, other
  layouts, kOutput fusions).

Integer products are exact and s32 sums wrap as XLA's do; bf16 products
accumulate in f32 as the AMX GEMM's (``docs/dot.md``).  Results do not
depend on the thread count.  Output rows shorter than :data:`MIN_ROW`
pixels would waste most of each tile: those convolutions keep im2col + dot
(``passes/conv_as_dot.py``).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...hlo.window import conv_dimension_numbers_of, window_of
from ...shape import PrimitiveType as PT
from ...shape import S32, strides
from .. import gemm_amx, gemm_native, types
from ..emitter import KernelContext
from ..gemm import I32, Loop, imin, intrinsic
from ..gemm_kernel import output_fusion_epilogue, run_tasks
from ..ir_array import I64, Index, i64
from ..kernel_choice import KernelCandidate
from ..scalar_ops import convert_value
from ._util import I8, PTR, ScratchPlan, constant_table, fill_padding
from .conv_gemm import the_convolution

VOID = ir.VoidType()
ROWS = gemm_amx.ROWS
#: The shortest output row (last spatial dimension) taken: shorter rows leave
#: most of a 16-row tile empty (im2col + dot packs whole tiles of any pixels).
MIN_ROW = 16
#: Tile pairs per task at least, and tasks at most.
MIN_PAIRS_PER_TASK = 2
MAX_TASKS = 64
#: Padded input rows per copy task.
COPY_ROWS_PER_TASK = 64
#: The largest padded copy of the input (bytes) taken: features padded to 64
#: bytes inflate a 3-feature input 21x (im2col + dot, or the f32 implicit
#: GEMM, then run within their own limits).
MAX_XPAD_BYTES = 256 << 20


@dataclass
class AmxConvPlan:
    conv: HloInstruction
    fmt: gemm_native.Format
    nsp: int
    Ci: int
    Cp: int                     # bytes per pixel in xpad (a multiple of 64)
    N: int
    nseg: int                   # window positions
    T: int                      # k tiles: nseg * Cp / 64
    hp: tuple                   # xpad's spatial sizes
    xst: tuple                  # xpad's byte strides: (batch, spatial...)
    row_sizes: tuple            # (batch, output spatial sizes but the last)
    OW: int
    G: int                      # M tiles per output row
    U: int                      # M tiles
    nt: int                     # C tiles along N
    n_panels: int
    n_tasks: int
    pairs_per_task: int
    n_copy: int                 # copy tasks (then nseg packing tasks)
    copy_rows: int              # padded rows of xpad (batch x spatial but the last)
    scratch: ScratchPlan

    @property
    def nr(self) -> int:
        return ROWS * self.nt

    @property
    def panel_bytes(self) -> int:
        return self.T * ROWS * self.nr * 4


def why_not(inst: HloInstruction) -> str | None:
    """Why this kernel cannot compute ``inst`` (a convolution, or a kOutput fusion of one), or None."""
    try:
        plan_amx_conv(inst)
    except ValueError as e:
        return str(e)
    return None


def plan_amx_conv(inst: HloInstruction) -> AmxConvPlan:
    """The plan for ``inst``; raises ``ValueError`` (why not) when the kernel does not apply."""
    conv = the_convolution(inst)
    if conv is None:
        raise ValueError("not one convolution with an elementwise epilogue")
    x, k = conv.operands[:2]
    kind = _kind(x.shape.element_type, k.shape.element_type, conv.shape.element_type)
    if kind is None:
        raise ValueError("not s8/u8 operands to s32, nor bf16 operands to bf16 or f32")
    why = gemm_native.unavailable(kind)
    if why is not None:
        raise ValueError(why)
    a = conv.attrs
    if int(str(a.get("feature_group_count", 1))) != 1 or int(str(a.get("batch_group_count", 1))) != 1:
        raise ValueError("grouped (feature_group_count or batch_group_count > 1)")
    if not inst.shape.is_array or tuple(inst.shape.dimensions) != tuple(conv.shape.dimensions):
        raise ValueError("the epilogue changes the convolution's dimensions")
    dn = conv_dimension_numbers_of(a)
    window = list(window_of(a))
    nsp = dn.num_spatial_dims
    if nsp < 1 or len(window) != nsp:
        raise ValueError("no spatial dimension")
    if 0 in conv.shape.dimensions or 0 in x.shape.dimensions or 0 in k.shape.dimensions:
        raise ValueError("empty")
    out = conv.shape.dimensions
    OW = out[dn.output_spatial_dimensions[-1]]
    if OW < MIN_ROW:
        raise ValueError(f"output rows of {OW} pixels (fewer than {MIN_ROW})")
    xd = x.shape.dimensions
    Ci = xd[dn.input_feature_dimension]
    N = out[dn.output_feature_dimension]
    es = x.shape.element_type.byte_size
    Cp = -(-Ci * es // 64) * 64
    hp = tuple((xd[d] - 1) * wd.base_dilation + 1 + wd.padding_low + wd.padding_high
               for d, wd in zip(dn.input_spatial_dimensions, window))
    if min(hp) <= 0:
        raise ValueError("the padding leaves no input")
    xst = [0] * (nsp + 1)
    st = Cp
    for d in reversed(range(nsp)):
        xst[d + 1] = st
        st *= hp[d]
    xst[0] = st
    nb = xd[dn.input_batch_dimension]
    nseg = math.prod(wd.size for wd in window)
    T = nseg * Cp // 64
    row_sizes = (out[dn.output_batch_dimension],) + tuple(out[d] for d in dn.output_spatial_dimensions[:-1])
    G = -(-OW // ROWS)
    U = math.prod(row_sizes) * G
    nt = 1 if N <= ROWS else 2
    nr = ROWS * nt
    n_panels = -(-N // nr)
    pairs = -(-U // 2)
    n_tasks = max(1, min(MAX_TASKS, pairs // MIN_PAIRS_PER_TASK))
    pairs_per_task = -(-pairs // n_tasks)
    n_tasks = -(-pairs // pairs_per_task)
    copy_rows = nb * math.prod(hp[:-1])
    n_copy = max(1, -(-copy_rows // COPY_ROWS_PER_TASK))
    # The last tile of a row reads up to 16 pixels from its first: past the
    # end of xpad for the last row (its extra rows are dropped, not read as data).
    wl = window[-1]
    last_read = (st * nb - xst[nsp] * hp[-1]) + ((G * ROWS - 1) * wl.stride
                                                 + (wl.size - 1) * wl.window_dilation + 1) * Cp
    xpad_bytes = max(st * nb, last_read) + 64
    if xpad_bytes > MAX_XPAD_BYTES:
        raise ValueError(f"its padded input ({xpad_bytes >> 20} MB) exceeds {MAX_XPAD_BYTES >> 20} MB")
    scratch = ScratchPlan()
    scratch.add("counters", 128)
    scratch.add("xpad", xpad_bytes)
    scratch.add("bpack", n_panels * T * ROWS * nr * 4)
    fmt = gemm_native.Format(kind, x.shape.element_type, k.shape.element_type)
    return AmxConvPlan(conv, fmt, nsp, Ci, Cp, N, nseg, T, hp, tuple(xst), row_sizes, OW, G, U, nt, n_panels,
                       n_tasks, pairs_per_task, n_copy, copy_rows, scratch)


def _kind(xt, kt, ot) -> str | None:
    """The AMX kernel kind of a convolution of these types, or None."""
    if xt in (PT.S8, PT.U8) and kt in (PT.S8, PT.U8) and ot is S32:
        return "amxint8"
    if xt is PT.BF16 and kt is PT.BF16 and ot in (PT.BF16, PT.F32):
        return "amxbf16"
    return None


def _scratch_bytes(me, inst: HloInstruction) -> int:
    return plan_amx_conv(inst).scratch.size


# ---------------------------------------------------------------------------
# The micro-kernel
# ---------------------------------------------------------------------------

def micro_kernel(module: ir.Module, fmt, mt: int, nt: int) -> ir.Function:
    """``void uk(ptr a0, ptr a1, i64 lda, ptr offs, i64 T, ptr b, ptr c0, ptr c1, i64 ldc)``:
    the ``mt`` x ``nt`` C tiles = sum over k tiles t < T of A tile r (16 rows
    ``lda`` bytes apart at ``a_r + offs[t]``) times B tile s (of the packed
    panel ``b``), stored to ``c_r`` + 64 s bytes, rows ``ldc`` bytes apart.
    The tile configuration must be loaded."""
    name = f"xlac.conv.amx.uk.{fmt.tag}.{mt}x{nt}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR, PTR, I64, PTR, I64, PTR, PTR, PTR, I64]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    fn.attributes.add("noinline")
    for arg, nm in zip(fn.args, ("a0", "a1", "lda", "offs", "T", "b", "c0", "c1", "ldc")):
        arg.name = nm
    a0, a1, lda, offs, T, bp, c0, c1, ldc = fn.args
    nr = ROWS * nt
    c_tile, _, _ = gemm_amx.tile_ids(mt, nt)
    call = gemm_amx._call
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    for r in range(mt):
        for s in range(nt):
            call(b, "tilezero", [ir.Constant(I8, c_tile(r, s))], [I8])
    entry = b.block
    loop = fn.append_basic_block("k")
    exit_ = fn.append_basic_block("store")
    b.branch(loop)
    b.position_at_end(loop)
    t = b.phi(I64, "t")
    t.add_incoming(i64(0), entry)
    off = b.load(b.gep(offs, [t], inbounds=True, source_etype=I64), typ=I64, align=8)
    b_t = b.gep(bp, [b.mul(t, i64(ROWS * nr * 4))], inbounds=True, source_etype=I8)
    gemm_amx.tile_products(b, fmt, mt, nt, [b.gep(a, [off], inbounds=True, source_etype=I8) for a in (a0, a1)[:mt]],
                           lda, b_t, nr)
    t_next = b.add(t, i64(1), flags=["nsw", "nuw"])
    t.add_incoming(t_next, b.block)
    b.cbranch(b.icmp_signed("<", t_next, T), loop, exit_)
    b.position_at_end(exit_)
    for r, c in enumerate((c0, c1)[:mt]):
        for s in range(nt):
            gemm_amx._store(b, c_tile(r, s), b.gep(c, [i64(s * 64)], inbounds=True, source_etype=I8), ldc)
    b.ret_void()
    return fn


def _offsets(module: ir.Module, plan: AmxConvPlan, window) -> ir.GlobalVariable:
    """The byte offset in xpad of each k tile (window position major, then 64 features)."""
    vals = []
    for pos in itertools.product(*(range(wd.size) for wd in window)):
        base = sum(p * wd.window_dilation * plan.xst[d + 1] for d, (p, wd) in enumerate(zip(pos, window)))
        vals.extend(base + c for c in range(0, plan.Cp, 64))
    return constant_table(module, f"xlac.conv.amx.offs.{len(module.globals)}", vals, align=64)


# ---------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------

class _Operands:
    """The input and kernel (arrays, or generators inside a fusion), the result and the epilogue."""

    def __init__(self, ctx: KernelContext, plan: AmxConvPlan):
        inst, conv = ctx.inst, plan.conv
        self.epilogue = None
        self.x_arr = self.k_arr = self.x_gen = self.k_gen = None
        if inst.opcode == "convolution":
            self.x_arr, self.k_arr = ctx.operand_array(0), ctx.operand_array(1)
        else:
            gens, self.epilogue = output_fusion_epilogue(ctx, conv)
            xop, kop = conv.operands[:2]
            if xop.opcode == "parameter":
                self.x_arr = ctx.operand_array(xop.parameter_number)
            else:
                self.x_gen = gens[id(xop)]
            if kop.opcode == "parameter":
                self.k_arr = ctx.operand_array(kop.parameter_number)
            else:
                self.k_gen = gens[id(kop)]
        self.out = ctx.output_arrays()[0]
        self.acc_pt, self.conv_pt = plan.fmt.acc_pt, conv.shape.element_type
        self.dn = conv_dimension_numbers_of(conv.attrs)
        self.window = list(window_of(conv.attrs))

    def read_x(self, b, multi):
        return self.x_gen(Index(multi)) if self.x_gen is not None else self.x_arr.read(b, Index(multi))

    def read_k(self, b, multi):
        return self.k_gen(Index(multi)) if self.k_gen is not None else self.k_arr.read(b, Index(multi))

    def finish(self, b, multi, v) -> None:
        """Write accumulator value ``v`` (rounded to the convolution's type first: bf16) through the epilogue."""
        index = Index(list(multi))
        if self.conv_pt is not self.acc_pt:
            v = convert_value(b, v, self.acc_pt, self.conv_pt)
        if self.epilogue is not None:
            v = self.epilogue(index, v)
        self.out.write(b, index, v)


def _decompose(b, q, sizes):
    """Row-major components of ``q`` over ``sizes``."""
    comps = [None] * len(sizes)
    for d in reversed(range(len(sizes))):
        if d == 0:
            comps[d] = q
        else:
            comps[d] = b.urem(q, i64(sizes[d]))
            q = b.udiv(q, i64(sizes[d]))
    return comps


def _memset(b, ptr, value: int, n):
    fn = intrinsic(b.module, "llvm.memset.p0.i64", ir.FunctionType(VOID, [PTR, I8, I64, ir.IntType(1)]))
    b.call(fn, [ptr, ir.Constant(I8, value), n, ir.Constant(ir.IntType(1), 0)])


def _memcpy(b, dst, src, n):
    fn = intrinsic(b.module, "llvm.memcpy.p0.p0.i64", ir.FunctionType(VOID, [PTR, PTR, I64, ir.IntType(1)]))
    b.call(fn, [dst, src, n, ir.Constant(ir.IntType(1), 0)])


# ---------------------------------------------------------------------------
# Phase 1: xpad and the packed kernel
# ---------------------------------------------------------------------------

def _emit_copy_task(ctx: KernelContext, plan: AmxConvPlan, t) -> None:
    """Rows [t*COPY_ROWS_PER_TASK, ...) of xpad (a row: batch and spatial indices but the last)."""
    ops = _Operands(ctx, plan)
    b = ctx.b
    dn, window, nsp = ops.dn, ops.window, plan.nsp
    xs = plan.conv.operands[0].shape
    ety = types.memory_type(xs.element_type)
    xdims = xs.dimensions
    xpad = plan.scratch.pointer(b, ctx.scratch_pointer(), "xpad")
    lo = b.mul(t, i64(COPY_ROWS_PER_TASK))
    hi = imin(b, b.add(lo, i64(COPY_ROWS_PER_TASK)), i64(plan.copy_rows))
    xst = strides(ops.x_arr.shape) if ops.x_arr is not None else None
    fast = xst is not None and (plan.Ci == 1 or xst[dn.input_feature_dimension] == 1)
    with Loop(b, lo, hi, 1, "xr") as q:
        comps = _decompose(b, q, (xdims[dn.input_batch_dimension],) + plan.hp[:-1])
        with Loop(b, 0, plan.hp[-1], 1, "xw", vectorize=False) as pw:
            pos = comps[1:] + [pw]
            dst = b.gep(xpad, [b.add(b.mul(q, i64(plan.xst[nsp - 1])), b.mul(pw, i64(plan.Cp)))], inbounds=True,
                        source_etype=I8)
            ok, src_sp = None, []
            for d, wd in enumerate(window):
                i = b.sub(pos[d], i64(wd.padding_low))
                if wd.base_dilation != 1:
                    on = b.icmp_signed("==", b.srem(i, i64(wd.base_dilation)), i64(0))
                    ok = on if ok is None else b.and_(ok, on)
                    i = b.sdiv(i, i64(wd.base_dilation))
                inside = b.icmp_unsigned("<", i, i64(xdims[dn.input_spatial_dimensions[d]]))
                ok = inside if ok is None else b.and_(ok, inside)
                src_sp.append(i)
            _memset(b, dst, 0, i64(plan.Cp))
            with b.if_then(ok):
                multi = [i64(0)] * xs.rank
                multi[dn.input_batch_dimension] = comps[0]
                for d in range(nsp):
                    multi[dn.input_spatial_dimensions[d]] = src_sp[d]
                if fast:
                    off = i64(0)
                    for dim, v in enumerate(multi):
                        off = b.add(off, b.mul(v, i64(xst[dim])))
                    src = b.gep(ops.x_arr.ptr, [off], inbounds=True, source_etype=ety)
                    _memcpy(b, dst, src, i64(plan.Ci * xs.element_type.byte_size))
                else:
                    with Loop(b, 0, plan.Ci, 1, "xc") as c:
                        m = list(multi)
                        m[dn.input_feature_dimension] = c
                        v = ops.read_x(b, m)
                        b.store(v, b.gep(dst, [c], inbounds=True, source_etype=ety), align=1)


class _KernelView:
    """One window position of the kernel as the K x N matrix ``gemm_native.pack`` reads (B)."""

    is_array = True

    class _G:
        affine = True

        def __init__(self, stride):
            self.stride = stride

        def offset(self, b, i):
            return b.mul(i, i64(self.stride)) if not (isinstance(self.stride, int) and self.stride == 1) else i

    def __init__(self, pt, ptr, ci_stride, co_stride):
        self.pt, self.ptr = pt, ptr
        self.gr, self.gc = self._G(ci_stride), self._G(co_stride)

    def element_pointer(self, b, offset):
        return b.gep(self.ptr, [offset], inbounds=True, source_etype=types.memory_type(self.pt))


def _emit_pack_task(ctx: KernelContext, plan: AmxConvPlan, s) -> None:
    """Window position ``s`` of the kernel into every packed B panel."""
    ops = _Operands(ctx, plan)
    b = ctx.b
    dn, window = ops.dn, ops.window
    ks = plan.conv.operands[1].shape
    bpack = plan.scratch.pointer(b, ctx.scratch_pointer(), "bpack")
    nr = plan.nr
    ws = _decompose(b, s, [wd.size for wd in window])
    # The kernel's spatial index of position s (reversed where the window says so).
    kw = [b.sub(i64(wd.size - 1), w) if wd.window_reversal else w for w, wd in zip(ws, window)]
    with Loop(b, 0, plan.n_panels, 1, "bj", vectorize=False) as j:
        dst = b.gep(bpack, [b.add(b.mul(j, i64(plan.panel_bytes)), b.mul(s, i64(plan.Cp * nr)))], inbounds=True,
                    source_etype=I8)
        n0 = b.mul(j, i64(nr))
        if ops.k_arr is not None:
            kst = strides(ops.k_arr.shape)
            off = i64(0)
            for d, w in zip(dn.kernel_spatial_dimensions, kw):
                off = b.add(off, b.mul(w, i64(kst[d])))
            kptr = b.gep(ops.k_arr.ptr, [off], inbounds=True, source_etype=types.memory_type(ks.element_type))
            view = _KernelView(ks.element_type, kptr,
                               kst[dn.kernel_input_feature_dimension], kst[dn.kernel_output_feature_dimension])
            gemm_native.pack(b, plan.fmt, view, i64(0), n0, imin(b, b.add(n0, i64(nr)), i64(plan.N)),
                             i64(plan.N), i64(0), i64(plan.Ci), dst, nr, True)
        else:
            _memset(b, dst, 0, i64(plan.Cp * nr))
            with Loop(b, 0, plan.Ci, 1, "bc") as ci:
                with Loop(b, n0, imin(b, b.add(n0, i64(nr)), i64(plan.N)), 1, "bn") as n:
                    multi = [i64(0)] * ks.rank
                    for d, w in zip(dn.kernel_spatial_dimensions, kw):
                        multi[d] = w
                    multi[dn.kernel_input_feature_dimension] = ci
                    multi[dn.kernel_output_feature_dimension] = n
                    v = ops.read_k(b, multi)
                    # Word ci / group of column n - n0, element ci % group of it.
                    group = plan.fmt.group
                    at = b.add(b.mul(b.add(b.mul(b.udiv(ci, i64(group)), i64(nr)), b.sub(n, n0)), i64(group)),
                               b.urem(ci, i64(group)))
                    b.store(v, b.gep(dst, [at], inbounds=True, source_etype=types.memory_type(ks.element_type)),
                            align=1)


# ---------------------------------------------------------------------------
# Phase 2: the tiles
# ---------------------------------------------------------------------------

def _emit_task(ctx: KernelContext, plan: AmxConvPlan, task) -> None:
    ops = _Operands(ctx, plan)
    b = ctx.b
    dn, window, nsp = ops.dn, ops.window, plan.nsp
    out = ops.out
    ost = strides(out.shape)
    nr, nt = plan.nr, plan.nt
    xpad = plan.scratch.pointer(b, ctx.scratch_pointer(), "xpad")
    bpack = plan.scratch.pointer(b, ctx.scratch_pointer(), "bpack")
    offs = _offsets(b.module, plan, window)
    lda = i64(window[-1].stride * plan.Cp)
    # The tiles go straight to the result when it holds the accumulators (s32, f32).
    direct_ok = ops.epilogue is None and ost[dn.output_feature_dimension] == 1 and ops.conv_pt is ops.acc_pt
    acc_ty = types.memory_type(ops.acc_pt)
    pixels_inner = ost[dn.output_spatial_dimensions[-1]] < ost[dn.output_feature_dimension]
    ldc = i64(ost[dn.output_spatial_dimensions[-1]] * 4)
    tile = ctx.alloca_builder.alloca(ir.ArrayType(I32, 2 * ROWS * nr), name="ctile")
    tile.align = 64
    uks = {mt: micro_kernel(b.module, plan.fmt, mt, nt) for mt in (1, 2)}
    gemm_amx.configure(b)
    p_lo = b.mul(task, i64(plan.pairs_per_task))
    p_hi = imin(b, b.add(p_lo, i64(plan.pairs_per_task)), i64(-(-plan.U // 2)))

    def m_tile(u):
        """(xpad pointer, output element offset, output index components (the
        last: the first pixel), valid rows) of M tile u."""
        row = b.udiv(u, i64(plan.G))
        ow0 = b.mul(b.urem(u, i64(plan.G)), i64(ROWS))
        comps = _decompose(b, row, plan.row_sizes) + [ow0]
        xoff = b.mul(comps[0], i64(plan.xst[0]))
        ooff = b.mul(comps[0], i64(ost[dn.output_batch_dimension]))
        for d in range(nsp):
            xoff = b.add(xoff, b.mul(comps[d + 1], i64(window[d].stride * plan.xst[d + 1])))
            ooff = b.add(ooff, b.mul(comps[d + 1], i64(ost[dn.output_spatial_dimensions[d]])))
        rows = imin(b, i64(ROWS), b.sub(i64(plan.OW), ow0))
        return b.gep(xpad, [xoff], inbounds=True, source_etype=I8), ooff, comps, rows

    def write_out(mt, infos, n0):
        """The stack tile's valid elements through the result's layout and the epilogue."""
        cols = imin(b, i64(nr), b.sub(i64(plan.N), n0))
        for r in range(mt):
            _x, _o, comps, rows = infos[r]

            def element(i, j, r=r, comps=comps):
                v = b.load(b.gep(tile, [i64(0), b.add(b.mul(b.add(i, i64(r * ROWS)), i64(nr)), j)],
                                 inbounds=True), typ=acc_ty, align=4)
                multi = [i64(0)] * out.shape.rank
                multi[dn.output_batch_dimension] = comps[0]
                for d in range(nsp - 1):
                    multi[dn.output_spatial_dimensions[d]] = comps[d + 1]
                multi[dn.output_spatial_dimensions[-1]] = b.add(comps[nsp], i)
                multi[dn.output_feature_dimension] = b.add(n0, j)
                ops.finish(b, multi, v)
            if pixels_inner:
                # An NCHW-like result: a column of the tile is a run of consecutive pixels.
                with Loop(b, 0, cols, 1, "wj") as j:
                    with Loop(b, 0, rows, 1, "wi") as i:
                        element(i, j)
            else:
                with Loop(b, 0, rows, 1, "wi") as i:
                    with Loop(b, 0, cols, 1, "wj") as j:
                        element(i, j)

    def run(mt, us):
        infos = [m_tile(u) for u in us]
        a = [info[0] for info in infos] + [infos[0][0]] * (2 - mt)
        with Loop(b, 0, plan.n_panels, 1, "jn", vectorize=False) as j:
            n0 = b.mul(j, i64(nr))
            bp = b.gep(bpack, [b.mul(j, i64(plan.panel_bytes))], inbounds=True, source_etype=I8)
            full = None
            if direct_ok:
                conds = [b.icmp_signed("==", info[3], i64(ROWS)) for info in infos]
                if plan.N % nr:
                    conds.append(b.icmp_signed("<=", b.add(n0, i64(nr)), i64(plan.N)))
                full = conds[0]
                for c in conds[1:]:
                    full = b.and_(full, c)

            def through_stack():
                t1 = b.gep(tile, [i64(0), i64(ROWS * nr)], inbounds=True)
                b.call(uks[mt], [a[0], a[1], lda, offs, i64(plan.T), bp, tile, t1, i64(nr * 4)])
                write_out(mt, infos, n0)
            if full is None:
                through_stack()
            else:
                with b.if_else(full) as (then, otherwise):
                    with then:
                        cs = [b.gep(out.ptr, [b.add(info[1], n0)], inbounds=True, source_etype=acc_ty)
                              for info in infos]
                        cs += [cs[0]] * (2 - mt)
                        b.call(uks[mt], [a[0], a[1], lda, offs, i64(plan.T), bp, cs[0], cs[1], ldc])
                    with otherwise:
                        through_stack()

    with Loop(b, p_lo, p_hi, 1, "mp", vectorize=False) as p:
        u0 = b.mul(p, i64(2))
        if plan.U % 2:
            with b.if_else(b.icmp_signed("<", b.add(u0, i64(1)), i64(plan.U))) as (two, one):
                with two:
                    run(2, [u0, b.add(u0, i64(1))])
                with one:
                    run(1, [u0])
        else:
            run(2, [u0, b.add(u0, i64(1))])
    gemm_amx.release(b)


def emit_amx_convolution(ctx: KernelContext) -> None:
    plan = plan_amx_conv(ctx.inst)
    fill_padding(ctx.b, ctx.output_arrays()[0])

    def prepare(tctx, t, w):
        b = tctx.b
        with b.if_else(b.icmp_unsigned("<", t, i64(plan.n_copy))) as (copy, pack):
            with copy:
                _emit_copy_task(tctx, plan, t)
            with pack:
                _emit_pack_task(tctx, plan, b.sub(t, i64(plan.n_copy)))
    run_tasks(ctx, plan.scratch, plan.n_copy + plan.nseg, 0, prepare)
    run_tasks(ctx, plan.scratch, plan.n_tasks, 1, lambda tctx, t, w: _emit_task(tctx, plan, t))


AMX = KernelCandidate("convolution.amx", emit_amx_convolution, why_not, _scratch_bytes, shareable=True)
CANDIDATES = (AMX,)
