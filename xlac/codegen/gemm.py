"""Building blocks of the packed GEMM (``gemm_task.py`` puts them together
into a task's loop nest; ``gemm_kernel.py`` has what kernels build on).

A dot is seen as a batch of matrix products ``C[b] = A[b] @ B[b]`` with
``A[b]`` M x K, ``B[b]`` K x N and ``C[b]`` M x N.  Each of the four index
groups (batch, M, N, K) stands for one or more logical dimensions of an
operand; a :class:`GroupMap` turns a flattened group index into an element
offset (one multiply when the group is affine in the buffer, a div/mod
decomposition otherwise), and a :class:`MatrixView` reads element ``(b, r, c)``
of an operand, from its buffer or, for a fused producer, through its elemental
generator.  So any layout (row- or column-major, batch dimensions anywhere,
padded dimensions) and any fused operand computation packs through the same
code.

The GEMM proper (BLIS' loop structure)::

    for each K block (KC):                     A block: MC x KC, in L2
        for each M block (MC): pack A          B block: KC x N, packed once
            for each NR panel of B:            B micro-panel KC x NR: in L1
                for each MR panel of A:
                    micro-kernel: C[MR x NR] (+)= Ap[MR x KC] * Bp[KC x NR]

Packed layouts: an A micro-panel is ``kc`` groups of ``MR`` consecutive
elements (one per row; column k of the panel), a B micro-panel ``kc`` rows of
``NR`` consecutive elements.  Panels at the M and N edges are padded with
zeros, so the micro-kernel always computes a full tile (its edge results are
dropped).

The micro-kernel holds the ``MR x NR`` accumulators in vector registers
(``MR * NR / VW`` of ``<VW x float>``) across the k loop: per k it loads
``NR / VW`` vectors of B, broadcasts ``MR`` scalars of A and issues
``MR * NR / VW`` ``llvm.fma`` calls.
"""
from __future__ import annotations

import math

from llvmlite import ir

from ..shape import PrimitiveType as PT, Shape, strides
from . import types
from .ir_array import I64, Index, i64
from .loops import loop_hints
from .scalar_ops import convert_value
from .target import has_f16c

I1 = ir.IntType(1)
I32 = ir.IntType(32)
#: Panels at least this wide whose inner index is unit-stride are packed by
#: in-register transposes (narrower ones: LLVM vectorises the scalar loop).
TRANSPOSE_MIN_WIDTH = 12
PTR = ir.PointerType()


# ---------------------------------------------------------------------------
# Index groups and operand views
# ---------------------------------------------------------------------------

class GroupMap:
    """A group of logical dimensions of one array flattened into one index.

    ``dims`` lists the array's dimensions major-first (the flattening order);
    ``offset(b, i)`` is the element offset of flattened index ``i`` in the
    buffer, ``components(b, i)`` the index along each dimension.
    """

    def __init__(self, dims, all_sizes, all_strides):
        self.dims = tuple(dims)
        self.sizes = tuple(int(all_sizes[d]) for d in dims)
        self.strides = tuple(int(all_strides[d]) for d in dims)
        self.size = math.prod(self.sizes)
        nontrivial = [(n, s) for n, s in zip(self.sizes, self.strides) if n != 1]
        self.affine = True
        self.stride = nontrivial[-1][1] if nontrivial else 0
        expected = self.stride
        for n, s in reversed(nontrivial):
            if s != expected:
                self.affine = False
                break
            expected *= n

    def components(self, b: ir.IRBuilder, i) -> list:
        """The index along each dimension of flattened index ``i`` (row-major)."""
        out = [i64(0)] * len(self.dims)
        nontrivial = [k for k, n in enumerate(self.sizes) if n != 1]
        rest = i
        for pos, k in enumerate(reversed(nontrivial)):
            if pos == len(nontrivial) - 1:
                out[k] = rest
            else:
                out[k] = b.urem(rest, i64(self.sizes[k]))
                rest = b.udiv(rest, i64(self.sizes[k]))
        return out

    def offset(self, b: ir.IRBuilder, i) -> ir.Value:
        if self.affine:
            return mul_const(b, i, self.stride)
        total = i64(0)
        for c, s, n in zip(self.components(b, i), self.strides, self.sizes):
            if n != 1:
                total = add(b, total, mul_const(b, c, s))
        return total


def mul_const(b: ir.IRBuilder, x, k):
    """``x * k``; ``k`` an int (folded when 0 or 1) or a run-time i64 (the
    generic GEMM library's strides)."""
    if isinstance(k, ir.Value):
        if isinstance(x, ir.Constant) and x.constant in (0, 1):
            return i64(0) if x.constant == 0 else k
        return b.mul(x, k, flags=["nsw", "nuw"])
    if k == 0:
        return i64(0)
    if k == 1:
        return x
    if isinstance(x, ir.Constant):
        return i64(int(x.constant) * k)
    return b.mul(x, i64(k), flags=["nsw", "nuw"])


def add(b: ir.IRBuilder, x, y):
    if isinstance(x, ir.Constant) and x.constant == 0:
        return y
    if isinstance(y, ir.Constant) and y.constant == 0:
        return x
    if isinstance(x, ir.Constant) and isinstance(y, ir.Constant):
        return i64(int(x.constant) + int(y.constant))
    return b.add(x, y, flags=["nsw", "nuw"])


class MatrixView:
    """Element ``(batch, row, col)`` of an operand seen as a batch of matrices.

    ``shape``: the operand's shape; ``bdims``/``rdims``/``cdims``: its
    dimensions in the batch, row and column groups.  Reads go to ``ptr`` (a
    buffer laid out as ``shape``) when given, else through ``gen`` (an
    elemental generator of the operand).
    """

    def __init__(self, shape: Shape, bdims, rdims, cdims, ptr=None, gen=None):
        self.shape = shape
        self.pt = shape.element_type
        # Strides matter only for reads from a buffer.
        st = strides(shape) if ptr is not None else (0,) * shape.rank
        dims = shape.dimensions
        self.gb = GroupMap(bdims, dims, st)
        self.gr = GroupMap(rdims, dims, st)
        self.gc = GroupMap(cdims, dims, st)
        self.ptr = ptr
        self.gen = gen

    @property
    def is_array(self) -> bool:
        return self.ptr is not None

    def element_pointer(self, b: ir.IRBuilder, offset) -> ir.Value:
        return b.gep(self.ptr, [offset], inbounds=True, source_etype=types.memory_type(self.pt))

    def index(self, b: ir.IRBuilder, bcomp: list, rcomp: list, ccomp: list) -> Index:
        multi = [i64(0)] * self.shape.rank
        for g, comps in ((self.gb, bcomp), (self.gr, rcomp), (self.gc, ccomp)):
            for d, c in zip(g.dims, comps):
                multi[d] = c
        return Index(multi)

    def read_components(self, b, bcomp, rcomp, ccomp):
        """Read through the generator (``*comp``: per-group component lists)."""
        return self.gen(self.index(b, bcomp, rcomp, ccomp))


# ---------------------------------------------------------------------------
# Small emission helpers
# ---------------------------------------------------------------------------

def intrinsic(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, fnty, name)
    return fn


def splat(b: ir.IRBuilder, value, vty: ir.VectorType):
    undef = ir.Constant(vty, ir.Undefined)
    v = b.insert_element(undef, value, ir.Constant(I32, 0))
    return b.shuffle_vector(v, undef, ir.Constant(ir.VectorType(I32, vty.count), [0] * vty.count))


def widen(b: ir.IRBuilder, x, src: PT, dst: PT):
    """``x`` (one element or a vector, as ``src`` is stored) exactly as ``dst``
    (f32): bf16 is the top half of an f32; f16 goes through ``fpext``, one
    ``vcvtph2ps`` with F16C (without it, element by element with integer ops:
    ``fpext`` would become libcalls).  The identity when ``src is dst``."""
    if src is dst:
        return x
    vec = isinstance(x.type, ir.VectorType)
    n = x.type.count if vec else 0
    if src is PT.BF16:
        i32 = ir.VectorType(I32, n) if vec else I32
        shift = ir.Constant(i32, [16] * n) if vec else ir.Constant(I32, 16)
        f32 = ir.VectorType(ir.FloatType(), n) if vec else ir.FloatType()
        return b.bitcast(b.shl(b.zext(x, i32), shift), f32)
    if src is PT.F16 and has_f16c():
        return b.fpext(x, ir.VectorType(ir.FloatType(), n) if vec else ir.FloatType())
    if not vec:
        return convert_value(b, x, src, dst)
    out = ir.Constant(ir.VectorType(types.memory_type(dst), n), ir.Undefined)
    for j in range(n):
        e = convert_value(b, b.extract_element(x, ir.Constant(I32, j)), src, dst)
        out = b.insert_element(out, e, ir.Constant(I32, j))
    return out


def imin(b: ir.IRBuilder, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


class Loop:
    """``for (i = start; i < stop; i += step)``: top-tested, run-time bounds.

    Use as ``with Loop(b, start, stop, step, name) as i:``; ``start``/``stop``
    may be ints or i64 values.  Unless ``unroll``, LLVM is asked not to unroll
    the loop: block loops with static trip counts would otherwise be unrolled
    whole (code size and compile time for nothing); vectorisation is not
    affected unless ``vectorize=False`` (loops whose vectorised versions would
    only cost compile time: scalar edges, loops around explicit vectors)."""

    def __init__(self, b: ir.IRBuilder, start, stop, step=1, name: str = "i", unroll: bool = False,
                 vectorize: bool = True, base=None):
        self.b, self.name, self.unroll, self.vectorize = b, name, unroll, vectorize
        self.base = base        # a loop ID whose hints the loop keeps (``loops.parallel_loops``'s)
        self.start = start if isinstance(start, ir.Value) else i64(start)
        self.stop = stop if isinstance(stop, ir.Value) else i64(stop)
        self.step = step if isinstance(step, ir.Value) else i64(step)

    def __enter__(self):
        b = self.b
        pre = b.block
        self.head = b.append_basic_block(f"{self.name}.head")
        self.body = b.append_basic_block(f"{self.name}.body")
        self.after = b.append_basic_block(f"{self.name}.after")
        b.branch(self.head)
        b.position_at_end(self.head)
        self.iv = b.phi(I64, name=self.name)
        self.iv.add_incoming(self.start, pre)
        b.cbranch(b.icmp_signed("<", self.iv, self.stop), self.body, self.after)
        b.position_at_end(self.body)
        return self.iv

    def __exit__(self, *exc):
        if exc[0] is not None:
            return False
        b = self.b
        nxt = b.add(self.iv, self.step, name=f"{self.name}.next", flags=["nsw"])
        self.iv.add_incoming(nxt, b.block)
        latch = b.branch(self.head)
        if not self.unroll:
            latch.set_metadata("llvm.loop", loop_hints(b.module, self.vectorize, base=self.base))
        b.position_at_end(self.after)
        return False


# ---------------------------------------------------------------------------
# The micro-kernel
# ---------------------------------------------------------------------------

def vector_type(pt: PT, vw: int) -> ir.VectorType:
    return ir.VectorType(types.memory_type(pt), vw)


def micro_kernel(module: ir.Module, pt: PT, mr: int, nr: int, vw: int, strided_b: bool = False,
                 strided_a: bool = False) -> ir.Function:
    """``void uk(i64 kc, ptr a, ptr b, ptr c, i64 ldc, i1 accumulate)``:
    ``C[i*ldc + j] (+)= sum_k a[k*mr + i] * b[k*nr + j]`` for i < mr, j < nr.

    ``a``/``b`` are packed micro-panels (``b`` 64-byte aligned), ``kc >= 1``;
    ``C`` needs only element alignment.  One function per module and tile shape.
    With ``strided_b`` B is read in place, rows ``ldb`` elements apart:
    ``void uk(i64 kc, ptr a, ptr b, i64 ldb, ptr c, i64 ldc, i1 accumulate)``.
    With ``strided_a`` A is read in place, ``a[i*lda + k]`` (MR row pointers):
    ``void uk(i64 kc, ptr a, i64 lda, ptr b, ptr c, i64 ldc, i1 accumulate)``.
    """
    name = f"xlac.gemm.uk.{pt.value}.{mr}x{nr}" + (".sb" if strided_b else "") + (".sa" if strided_a else "")
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    ety = types.memory_type(pt)
    vty = ir.VectorType(ety, vw)
    nv = nr // vw
    esize = pt.byte_size
    if strided_b:
        fnty = ir.FunctionType(ir.VoidType(), [I64, PTR, PTR, I64, PTR, I64, I1])
    elif strided_a:
        fnty = ir.FunctionType(ir.VoidType(), [I64, PTR, I64, PTR, PTR, I64, I1])
    else:
        fnty = ir.FunctionType(ir.VoidType(), [I64, PTR, PTR, PTR, I64, I1])
    fn = ir.Function(module, fnty, name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    names = ("kc", "a", "b", "ldb", "c", "ldc", "accumulate") if strided_b else \
        ("kc", "a", "lda", "b", "c", "ldc", "accumulate") if strided_a else \
        ("kc", "a", "b", "c", "ldc", "accumulate")
    for arg, nm in zip(fn.args, names):
        arg.name = nm
    lda = None
    if strided_b:
        kc, a, bp, ldb, c, ldc, accumulate = fn.args
    elif strided_a:
        kc, a, lda, bp, c, ldc, accumulate = fn.args
        ldb = i64(nr)
    else:
        kc, a, bp, c, ldc, accumulate = fn.args
        ldb = i64(nr)
    for p in (a, bp, c):
        p.add_attribute("noalias")
    fma = intrinsic(module, f"llvm.fma.v{vw}{'f32' if pt is PT.F32 else 'f64'}",
                    ir.FunctionType(vty, [vty, vty, vty]))
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    entry = b.block
    loop = fn.append_basic_block("k")
    exit_ = fn.append_basic_block("store")
    a_rows = [b.gep(a, [b.mul(lda, i64(i))], inbounds=True, source_etype=ety) if i else a
              for i in range(mr)] if strided_a else None
    if PREFETCH_C:
        # A later K block ends by adding the tile to C: fetch C's rows now, so
        # that the adds do not wait for them (C is out of L1 by then).
        with b.if_then(accumulate):
            prefetch_tile(b, c, ldc, mr, nr * esize, ety)
        entry = b.block
    b.branch(loop)
    b.position_at_end(loop)
    k = b.phi(I64, "k")
    k.add_incoming(i64(0), entry)
    zero = ir.Constant(vty, [ir.Constant(ety, 0.0)] * vw)
    accs = []
    for i in range(mr):
        row = []
        for j in range(nv):
            phi = b.phi(vty, f"acc{i}_{j}")
            phi.add_incoming(zero, entry)
            row.append(phi)
        accs.append(row)
    phis = [x for row in accs for x in row]
    cur = [list(row) for row in accs]
    b_align = min(64, vw * esize) if (nr * esize) % 64 == 0 and not strided_b else esize
    a_ptr = b.gep(a, [b.mul(k, i64(mr))], inbounds=True, source_etype=ety)
    b_ptr = b.gep(bp, [b.mul(k, ldb)], inbounds=True, source_etype=ety)
    bvec = [b.load(b.gep(b_ptr, [i64(j * vw)], inbounds=True, source_etype=ety), typ=vty,
                   align=b_align) for j in range(nv)]
    for i in range(mr):
        a_at = b.gep(a_rows[i], [k], inbounds=True, source_etype=ety) if strided_a else \
            b.gep(a_ptr, [i64(i)], inbounds=True, source_etype=ety)
        av = b.load(a_at, typ=ety, align=esize)
        sv = splat(b, av, vty)
        for j in range(nv):
            cur[i][j] = b.call(fma, [sv, bvec[j], cur[i][j]])
    k_next = b.add(k, i64(1), flags=["nsw", "nuw"])
    k.add_incoming(k_next, b.block)
    for phi, val in zip(phis, [x for row in cur for x in row]):
        phi.add_incoming(val, b.block)
    b.cbranch(b.icmp_signed("<", k_next, kc), loop, exit_)

    b.position_at_end(exit_)
    store_tile(b, fn, c, ldc, accumulate, [x for row in cur for x in row], mr, nv, vw, ety, vty, esize)
    return fn


def indirect_micro_kernel(module: ir.Module, pt: PT, mr: int, nr: int, vw: int, name: str | None = None,
                          linkage: str = "internal") -> ir.Function:
    """``void uk(i64 nseg, i64 seglen, ptr tab, i64 c0, ptr b, ptr c, i64 ldc, i1 accumulate)``:
    ``C[i*ldc + j] (+)= sum_{s < nseg, k < seglen} tab[s*mr + i][c0 + k] * b[(s*seglen + k)*nr + j]``.

    ``tab`` holds ``nseg`` groups of ``mr`` row pointers (A read in place:
    one run of unit-stride elements per row and window position); ``b`` is a
    packed B micro-panel.  ``nseg, seglen >= 1``.  The accumulators stay in
    registers across both loops."""
    name = name or f"xlac.conv.uk.{pt.value}.{mr}x{nr}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    ety = types.memory_type(pt)
    vty = ir.VectorType(ety, vw)
    nv = nr // vw
    esize = pt.byte_size
    fnty = ir.FunctionType(ir.VoidType(), [I64, I64, PTR, I64, PTR, PTR, I64, I1])
    fn = ir.Function(module, fnty, name)
    fn.linkage = linkage
    fn.attributes.add("nounwind")
    # Called, not inlined into the task: one call per tile costs nothing
    # measurable (conv2d 1 thread within 0.5 %).  The GEMM library's copy
    # (``gemm_library.ConvVariant``, what the tasks call) does not see the
    # constant segment length and ldc of the call sites either, and runs as
    # fast (docs/conv.md).
    fn.attributes.add("noinline")
    for arg, nm in zip(fn.args, ("nseg", "seglen", "tab", "c0", "b", "c", "ldc", "accumulate")):
        arg.name = nm
    nseg, seglen, tab, c0, bp, c, ldc, accumulate = fn.args
    for p in (tab, bp, c):
        p.add_attribute("noalias")
    fma = intrinsic(module, f"llvm.fma.v{vw}{'f32' if pt is PT.F32 else 'f64'}",
                    ir.FunctionType(vty, [vty, vty, vty]))
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    entry = b.block
    seg = fn.append_basic_block("seg")
    inner = fn.append_basic_block("k")
    latch = fn.append_basic_block("seg.latch")
    exit_ = fn.append_basic_block("store")
    b.branch(seg)
    zero = ir.Constant(vty, [ir.Constant(ety, 0.0)] * vw)

    b.position_at_end(seg)
    s = b.phi(I64, "s")
    s.add_incoming(i64(0), entry)
    seg_accs = [b.phi(vty, f"sacc{i}") for i in range(mr * nv)]
    for phi in seg_accs:
        phi.add_incoming(zero, entry)
    rows = []
    for i in range(mr):
        slot = b.gep(tab, [b.add(b.mul(s, i64(mr)), i64(i))], inbounds=True, source_etype=PTR)
        rp = b.load(slot, typ=PTR, align=8)
        rows.append(b.gep(rp, [c0], inbounds=True, source_etype=ety))
    bseg = b.gep(bp, [b.mul(b.mul(s, seglen), i64(nr))], inbounds=True, source_etype=ety)
    b.branch(inner)

    b.position_at_end(inner)
    k = b.phi(I64, "k")
    k.add_incoming(i64(0), seg)
    accs = [b.phi(vty, f"acc{i}") for i in range(mr * nv)]
    for phi, init in zip(accs, seg_accs):
        phi.add_incoming(init, seg)
    b_align = min(64, vw * esize) if (nr * esize) % 64 == 0 else esize
    b_row = b.gep(bseg, [b.mul(k, i64(nr))], inbounds=True, source_etype=ety)
    bvec = [b.load(b.gep(b_row, [i64(j * vw)], inbounds=True, source_etype=ety), typ=vty, align=b_align)
            for j in range(nv)]
    new = []
    for i in range(mr):
        av = b.load(b.gep(rows[i], [k], inbounds=True, source_etype=ety), typ=ety, align=esize)
        sv = splat(b, av, vty)
        for j in range(nv):
            new.append(b.call(fma, [sv, bvec[j], accs[i * nv + j]]))
    k_next = b.add(k, i64(1), flags=["nsw", "nuw"])
    k.add_incoming(k_next, b.block)
    for phi, v in zip(accs, new):
        phi.add_incoming(v, b.block)
    b.cbranch(b.icmp_signed("<", k_next, seglen), inner, latch)

    b.position_at_end(latch)
    s_next = b.add(s, i64(1), flags=["nsw", "nuw"])
    s.add_incoming(s_next, latch)
    for phi, v in zip(seg_accs, new):
        phi.add_incoming(v, latch)
    b.cbranch(b.icmp_signed("<", s_next, nseg), seg, exit_)

    b.position_at_end(exit_)
    store_tile(b, fn, c, ldc, accumulate, new, mr, nv, vw, ety, vty, esize)
    return fn


#: Micro-kernels of a later K block prefetch their C tile when they start
#: (``prefetch_tile``; matmul 1024^3 f32 on one thread 3-5% faster).
PREFETCH_C = True


def prefetch_tile(b: ir.IRBuilder, c, ldc, rows: int, row_bytes: int, ety) -> None:
    """Prefetch for writing (``prefetchw``) the cache lines of a ``rows`` x
    ``row_bytes`` tile at ``c``, rows ``ldc`` elements apart: one per 64
    bytes from each row's start (a row that straddles one more line gets
    that line from the hardware prefetcher)."""
    fn = intrinsic(b.module, "llvm.prefetch.p0", ir.FunctionType(ir.VoidType(), [PTR, I32, I32, I32]))
    i8 = ir.IntType(8)
    for i in range(rows):
        row = b.gep(c, [b.mul(ldc, i64(i))], inbounds=True, source_etype=ety) if i else c
        for off in range(0, row_bytes, 64):
            p = b.gep(row, [i64(off)], inbounds=True, source_etype=i8) if off else row
            b.call(fn, [p, ir.Constant(I32, 1), ir.Constant(I32, 3), ir.Constant(I32, 1)])


def store_tile(b: ir.IRBuilder, fn: ir.Function, c, ldc, accumulate, values: list, mr: int, nv: int,
               vw: int, ety, vty, esize: int, integer: bool = False) -> None:
    """End of a micro-kernel: write the mr x (nv vectors of vw) accumulators
    (row-major in ``values``) to C, adding to what C holds when ``accumulate``
    is true (a later K block) or overwriting it (the first); then return.
    ``integer``: the accumulators are integers (wrapping adds)."""
    add_block = fn.append_basic_block("accumulate")
    set_block = fn.append_basic_block("overwrite")
    done = fn.append_basic_block("done")
    b.cbranch(accumulate, add_block, set_block)
    for blk, acc_mode in ((add_block, True), (set_block, False)):
        b.position_at_end(blk)
        for i in range(mr):
            row_ptr = b.gep(c, [b.mul(ldc, i64(i))], inbounds=True, source_etype=ety) if i else c
            for j in range(nv):
                p = b.gep(row_ptr, [i64(j * vw)], inbounds=True, source_etype=ety) if j else row_ptr
                v = values[i * nv + j]
                if acc_mode:
                    prev = b.load(p, typ=vty, align=esize)
                    v = b.add(prev, v) if integer else b.fadd(prev, v)
                b.store(v, p, align=esize)
        b.branch(done)
    b.position_at_end(done)
    b.ret_void()


# ---------------------------------------------------------------------------
# Packing
# ---------------------------------------------------------------------------

def pack_panel(b: ir.IRBuilder, view: MatrixView, bidx, boff, outer0, n_outer: int, inner0, kc,
               dst, width: int, valid: int, outer_is_row: bool, vw: int, dst_pt: PT | None = None) -> None:
    """Pack one micro-panel: ``dst[k*width + j] = M(outer0 + j, inner0 + k)``
    for k < kc, j < width, where M is ``view`` (rows = outer when
    ``outer_is_row``, else columns).  Only ``valid`` (<= width) of the outer
    indices exist; the others are written as zeros.

    For an A panel the outer index is the row (M) and the inner the column
    (K); for a B panel the outer index is the column (N) and the inner the row
    (K).  ``boff``: the batch offset (array views) and ``bidx`` the batch index.
    ``dst_pt``: the packed element type when it is wider than the view's
    (bf16 / f16 widened to f32 as they are copied: :func:`widen`).
    """
    pt = view.pt
    dpt = dst_pt or pt
    ety = types.memory_type(pt)
    dty = types.memory_type(dpt)
    g_outer = view.gr if outer_is_row else view.gc
    g_inner = view.gc if outer_is_row else view.gr
    zero = types.constant(dpt, 0)
    esize = pt.byte_size
    desize = dpt.byte_size

    if view.is_array:
        base = view.element_pointer(b, add(b, boff, g_outer.offset(b, outer0)))
        contiguous = g_outer.affine and g_outer.stride == 1 and valid == width and width % vw == 0
        if contiguous:
            vty = ir.VectorType(ety, vw)
            with Loop(b, 0, kc, 1, "pk") as k:
                src = b.gep(base, [g_inner.offset(b, add(b, inner0, k))], inbounds=True, source_etype=ety)
                out = b.gep(dst, [b.mul(k, i64(width))], inbounds=True, source_etype=dty)
                for j in range(0, width, vw):
                    v = b.load(b.gep(src, [i64(j)], inbounds=True, source_etype=ety), typ=vty, align=esize)
                    b.store(widen(b, v, pt, dpt), b.gep(out, [i64(j)], inbounds=True, source_etype=dty),
                            align=min(64, vw * desize))
            return
        # Offsets of the outer indices (relative to outer0), hoisted out of the k loop.
        if g_outer.affine:
            rel = [mul_const(b, i64(j), g_outer.stride) for j in range(valid)]
        else:
            o0 = g_outer.offset(b, outer0)
            rel = [b.sub(g_outer.offset(b, add(b, outer0, i64(j))), o0) for j in range(valid)]
        k_start = i64(0)
        if (g_inner.affine and g_inner.stride == 1 and valid == width and width >= TRANSPOSE_MIN_WIDTH
                and vw >= 4):
            # Inner index unit-stride: vw x vw blocks transposed in registers
            # (LLVM vectorises the scalar loop below itself only up to ~8 rows).
            vty = ir.VectorType(ety, vw)
            k_main = b.mul(b.udiv(kc, i64(vw)), i64(vw))
            with Loop(b, 0, k_main, vw, "pt") as k:
                src = b.gep(base, [add(b, inner0, k)], inbounds=True, source_etype=ety)
                out = b.gep(dst, [b.mul(k, i64(width))], inbounds=True, source_etype=dty)
                for g in range(0, width, vw):
                    gw = min(vw, width - g)
                    rows = [b.load(b.gep(src, [rel[g + i]], inbounds=True, source_etype=ety), typ=vty,
                                   align=esize) if i < gw else None for i in range(vw)]
                    for kk, col in enumerate(transpose_square(b, rows, vty)):
                        if gw < vw:
                            col = b.shuffle_vector(col, ir.Constant(vty, ir.Undefined),
                                                   ir.Constant(ir.VectorType(I32, gw), list(range(gw))))
                        b.store(widen(b, col, pt, dpt),
                                b.gep(out, [i64(kk * width + g)], inbounds=True, source_etype=dty), align=desize)
            k_start = k_main
        # The library's two-level K is walked without a division per k.
        stepped = getattr(g_inner, "stepped", False)
        with (TwoLevelLoop(b, kc, inner0, g_inner, "pk") if stepped else Loop(b, k_start, kc, 1, "pk")) as it:
            k = it.k if stepped else it
            inner_offset = it.offset if stepped else g_inner.offset(b, add(b, inner0, k))
            src = b.gep(base, [inner_offset], inbounds=True, source_etype=ety)
            out = b.gep(dst, [b.mul(k, i64(width))], inbounds=True, source_etype=dty)
            for j in range(width):
                p = b.gep(out, [i64(j)], inbounds=True, source_etype=dty)
                if j < valid:
                    v = widen(b, b.load(b.gep(src, [rel[j]], inbounds=True, source_etype=ety), typ=ety,
                                        align=esize), pt, dpt)
                else:
                    v = zero
                b.store(v, p, align=desize)
        return

    # Through the generator: index components per group.
    bcomp = view.gb.components(b, bidx)
    outer_comps = [g_outer.components(b, add(b, outer0, i64(j))) for j in range(valid)]
    with Loop(b, 0, kc, 1, "pk") as k:
        inner_comp = g_inner.components(b, add(b, inner0, k))
        out = b.gep(dst, [b.mul(k, i64(width))], inbounds=True, source_etype=dty)
        for j in range(width):
            p = b.gep(out, [i64(j)], inbounds=True, source_etype=dty)
            if j < valid:
                if outer_is_row:
                    v = view.read_components(b, bcomp, outer_comps[j], inner_comp)
                else:
                    v = view.read_components(b, bcomp, inner_comp, outer_comps[j])
                v = convert_value(b, v, pt, dpt)
            else:
                v = zero
            types.store_element(b, v, p, dpt)


class TwoLevelLoop(Loop):
    """``for (k = 0; k < kc; k++)`` over a two-level index group (``group``:
    index ``i`` at ``(i % inner) * stride + (i / inner) * outer``, run-time
    values) from ``inner0``, carrying the offset of ``inner0 + k`` from one k
    to the next instead of dividing for each (one division before the loop).
    ``with TwoLevelLoop(...) as it:`` gives ``it.k`` and ``it.offset``."""

    def __init__(self, b: ir.IRBuilder, kc, inner0, group, name: str = "k"):
        super().__init__(b, 0, kc, 1, name, vectorize=False)
        self.inner0, self.g = inner0 if isinstance(inner0, ir.Value) else i64(inner0), group

    def __enter__(self):
        b, g = self.b, self.g
        kin0 = b.urem(self.inner0, g.inner)
        off0 = g.offset(b, self.inner0)
        # Past the inner level's last index: to the next outer index's first.
        self.wrap_step = b.sub(g.outer, b.mul(b.sub(g.inner, i64(1)), g.stride))
        pre = b.block
        self.k = super().__enter__()
        b.position_at_start(self.head)
        self.offset = b.phi(I64, name=f"{self.name}.off")
        self.kin = b.phi(I64, name=f"{self.name}.in")
        self.offset.add_incoming(off0, pre)
        self.kin.add_incoming(kin0, pre)
        b.position_at_end(self.body)
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            b, g = self.b, self.g
            kin = b.add(self.kin, i64(1))
            wrap = b.icmp_signed("==", kin, g.inner)
            self.offset.add_incoming(b.select(wrap, b.add(self.offset, self.wrap_step),
                                              b.add(self.offset, g.stride)), b.block)
            self.kin.add_incoming(b.select(wrap, i64(0), kin), b.block)
        return super().__exit__(*exc)


def transpose_square(b: ir.IRBuilder, rows: list, vty: ir.VectorType) -> list:
    """Transpose ``n`` vectors of ``n`` lanes (``n = vty.count``, a power of
    two; a None row is undefined): ``out[k][i] = rows[i][k]``.  Eklundh's
    scheme: log2(n) stages, each swapping off-diagonal blocks of half the
    previous size between pairs of vectors (two-source shuffles)."""
    n = vty.count
    undef = ir.Constant(vty, ir.Undefined)
    x = [r if r is not None else undef for r in rows]
    h = n // 2
    while h >= 1:
        mask_lo = ir.Constant(ir.VectorType(I32, n), [k if not k & h else n + k - h for k in range(n)])
        mask_hi = ir.Constant(ir.VectorType(I32, n), [k + h if not k & h else n + k for k in range(n)])
        for i in range(n):
            if i & h:
                continue
            a, c = x[i], x[i + h]
            x[i] = b.shuffle_vector(a, c, mask_lo)
            x[i + h] = b.shuffle_vector(a, c, mask_hi)
        h //= 2
    return x


def grab_tasks(b: ir.IRBuilder, counter, n_tasks, body) -> None:
    """Take task numbers from the i64 atomic ``counter`` until ``n_tasks`` are
    taken, emitting ``body(t)`` for each; the builder is left after the loop.
    Workers that finish early take the remaining tasks (dynamic balance)."""
    fn = b.function
    head = fn.append_basic_block("grab")
    work = fn.append_basic_block("work")
    done = fn.append_basic_block("done")
    b.branch(head)
    b.position_at_end(head)
    t = b.atomic_rmw("add", counter, ir.Constant(I64, 1), "monotonic")
    b.cbranch(b.icmp_signed("<", t, n_tasks), work, done)
    b.position_at_end(work)
    body(t)
    b.branch(head)
    b.position_at_end(done)


def pack_once(b: ir.IRBuilder, enabled, flag, pack_shared, pack_local):
    """Pack a block of B that several tasks read into the shared buffer, once.

    ``flag`` (an i32 in scratch, zeroed before the tasks start) is 0 while
    the block is unpacked, 1 while a task packs it, 2 once packed.  The first
    task to need the block claims it (compare-and-swap 0 -> 1), packs it with
    ``pack_shared()`` and publishes it (release store of 2); a task that
    finds it packed (acquire load) reads the shared copy; one that finds it
    being packed by another packs its own copy with ``pack_local()`` rather
    than wait (so no task ever waits on another, which may be descheduled).
    When ``enabled`` (i1) is false only ``pack_local()`` runs.  Both copies
    hold the same values, so the result does not depend on who packed what.
    Returns an i1: whether the task reads the shared copy.
    """
    fn = b.function
    check = fn.append_basic_block("once.check")
    claim = fn.append_basic_block("once.claim")
    shared = fn.append_basic_block("once.shared")
    local = fn.append_basic_block("once.local")
    ready = fn.append_basic_block("once.ready")
    merge = fn.append_basic_block("once.merge")
    b.cbranch(enabled, check, local)
    b.position_at_start(check)
    state = b.load_atomic(flag, "acquire", 4, typ=I32)
    b.cbranch(b.icmp_unsigned("==", state, ir.Constant(I32, 2)), ready, claim)
    b.position_at_start(claim)
    won = b.extract_value(b.cmpxchg(flag, ir.Constant(I32, 0), ir.Constant(I32, 1), "acquire", "monotonic"), 1)
    b.cbranch(won, shared, local)
    b.position_at_start(shared)
    pack_shared()
    # (an exchange: llvmlite's store_atomic does not take opaque pointers)
    b.atomic_rmw("xchg", flag, ir.Constant(I32, 2), "release")
    b.branch(ready)
    b.position_at_start(local)
    pack_local()
    local_end = b.block
    b.branch(merge)
    b.position_at_start(ready)
    b.branch(merge)
    b.position_at_start(merge)
    use_shared = b.phi(I1, "once.use_shared")
    use_shared.add_incoming(ir.Constant(I1, 1), ready)
    use_shared.add_incoming(ir.Constant(I1, 0), local_end)
    return use_shared


#: Inner indices a streaming block copy (:func:`pack_block`) takes at once:
#: each panel then gets PACK_ROWS rows of a micro-panel, whole lines, per
#: visit.  One at a time, a row of a 24-wide f32 panel is a line and a half,
#: and the panels (kc x NR apart: the same L1 sets) evicted each other's
#: half-written lines between two visits (AVX2, 32 x 4096 x 4096 on one
#: thread: 4 took 0.90x OpenBLAS' time to 0.95x).
PACK_ROWS = 4


def by_pack_rows(b: ir.IRBuilder, kc, rows) -> None:
    """``rows(k0, k1, step)`` over inner indices [0, ``kc``) (an i64): PACK_ROWS
    at a time, then the rest one by one."""
    k_main = b.sub(kc, b.urem(kc, i64(PACK_ROWS)))
    rows(i64(0), k_main, PACK_ROWS)
    rows(k_main, kc, 1)


def pack_block(b: ir.IRBuilder, view: MatrixView, bidx, boff, lo, hi, total: int, inner0, kc,
               dst, width: int, outer_is_row: bool, vw: int, dst_pt: PT | None = None) -> None:
    """Pack the micro-panels of outer indices [lo, hi) (``lo`` a multiple of
    ``width``; ``hi <= total``), inner indices [inner0, inner0 + kc): panel p
    (outer ``lo + p*width``) goes to ``dst + p*kc*width``.  Only the panel at
    the end of the whole outer range can be partial (zero-padded).

    When the outer index is unit-stride in the buffer (a row-major B, a
    column-major A), the block is copied PACK_ROWS inner indices at a time,
    each one contiguous stretch of memory split over the panels: the hardware
    prefetcher sees a few streams instead of one per panel.  ``dst_pt``:
    the packed type when wider than the view's (:func:`pack_panel`).
    """
    pt = view.pt
    dpt = dst_pt or pt
    ety = types.memory_type(pt)
    dty = types.memory_type(dpt)
    esize = pt.byte_size
    edge = total % width
    full_end = total - edge
    g_outer = view.gr if outer_is_row else view.gc
    g_inner = view.gc if outer_is_row else view.gr
    streaming = view.is_array and g_outer.affine and g_outer.stride == 1
    if edge:
        full_hi = imin(b, hi, i64(full_end))
    else:
        full_hi = hi
    n_full = b.udiv(b.sub(full_hi, lo), i64(width)) if full_end else i64(0)
    panel_elems = b.mul(kc, i64(width))
    if full_end and streaming:
        has_full = b.icmp_signed(">", n_full, i64(0))
        with b.if_then(has_full):
            base = view.element_pointer(b, add(b, boff, lo))
            vec = width % vw == 0
            step, lty = (vw, ir.VectorType(ety, vw)) if vec else (1, ety)

            def rows(k0, k1, unroll: int) -> None:
                with Loop(b, k0, k1, unroll, "sk") as k:
                    src_rows = [b.gep(base, [g_inner.offset(b, add(b, inner0, add(b, k, i64(u))))],
                                      inbounds=True, source_etype=ety) for u in range(unroll)]
                    dst_row = b.gep(dst, [b.mul(k, i64(width))], inbounds=True, source_etype=dty)
                    with Loop(b, 0, n_full, 1, "sq") as q:
                        out = b.gep(dst_row, [b.mul(q, panel_elems)], inbounds=True, source_etype=dty)
                        for u, src_row in enumerate(src_rows):
                            src = b.gep(src_row, [b.mul(q, i64(width))], inbounds=True, source_etype=ety)
                            for j in range(0, width, step):
                                v = b.load(b.gep(src, [i64(j)], inbounds=True, source_etype=ety), typ=lty,
                                           align=esize)
                                b.store(widen(b, v, pt, dpt),
                                        b.gep(out, [i64(u * width + j)], inbounds=True, source_etype=dty),
                                        align=min(64, vw * dpt.byte_size) if vec else dpt.byte_size)

            by_pack_rows(b, kc, rows)
    elif full_end:
        with Loop(b, 0, n_full, 1, "pq") as q:
            outer0 = b.add(lo, b.mul(q, i64(width)))
            pdst = b.gep(dst, [b.mul(q, panel_elems)], inbounds=True, source_etype=dty)
            pack_panel(b, view, bidx, boff, outer0, width, inner0, kc, pdst, width, width,
                       outer_is_row, vw, dpt)
    if edge:
        with b.if_then(b.icmp_signed(">", hi, i64(full_end))):
            pdst = b.gep(dst, [b.mul(b.udiv(b.sub(i64(full_end), lo), i64(width)), panel_elems)],
                         inbounds=True, source_etype=dty)
            pack_panel(b, view, bidx, boff, i64(full_end), width, inner0, kc, pdst, width, edge,
                       outer_is_row, vw, dpt)


def read_element(b: ir.IRBuilder, view: MatrixView, bidx, boff, r, c):
    """One element ``(bidx, r, c)`` of ``view`` (``boff``: batch offset for arrays)."""
    if view.is_array:
        off = add(b, add(b, boff, view.gr.offset(b, r)), view.gc.offset(b, c))
        return types.load_element(b, view.element_pointer(b, off), view.pt)
    return view.read_components(b, view.gb.components(b, bidx), view.gr.components(b, r),
                                view.gc.components(b, c))


# ---------------------------------------------------------------------------
# Vector loops for the matrix-vector forms
# ---------------------------------------------------------------------------

def _carried_loop(b: ir.IRBuilder, name: str, start, stop, carried: list, body_fn) -> list:
    """A loop over k in [start, stop) (i64 values; skipped when empty)
    carrying the values ``carried`` through ``body_fn(k, values) -> (k_next,
    values)``; returns the values after it."""
    pre = b.block
    body = b.append_basic_block(name)
    after = b.append_basic_block(f"{name}.after")
    b.cbranch(b.icmp_signed("<", start, stop), body, after)
    b.position_at_end(body)
    k = b.phi(I64, f"{name}.k")
    k.add_incoming(start, pre)
    phis = []
    for v in carried:
        phi = b.phi(v.type)
        phi.add_incoming(v, pre)
        phis.append(phi)
    k_next, new = body_fn(k, phis)
    k.add_incoming(k_next, b.block)
    for phi, v in zip(phis, new):
        phi.add_incoming(v, b.block)
    last = b.block
    b.cbranch(b.icmp_signed("<", k_next, stop), body, after)
    b.position_at_end(after)
    outs = []
    for v0, v in zip(carried, new):
        out = b.phi(v0.type)
        out.add_incoming(v0, pre)
        out.add_incoming(v, last)
        outs.append(out)
    return outs


def dot_contiguous(b: ir.IRBuilder, pt: PT, x_ptr, y_ptr, n, vw: int, unroll: int = 4):
    """``sum(x[k] * y[k] for k < n)`` over two contiguous vectors (partial sums
    in ``unroll`` vector accumulators, then a scalar tail); ``n`` an int or
    an i64 value >= 0 (a constant one folds the loops' bounds)."""
    return dot_contiguous_rows(b, pt, [x_ptr], y_ptr, n, vw, unroll)[0]


def dot_contiguous_rows(b: ir.IRBuilder, pt: PT, x_ptrs, y_ptr, n, vw: int, unroll: int = 4) -> list:
    """:func:`dot_contiguous` of each of the contiguous vectors ``x_ptrs``
    with one vector ``y``, in one loop: each load of ``y`` serves every row
    (a matrix-vector product reads the vector once per group of rows, not
    once per row).  Each row's sum has the same operations in the same
    order as one :func:`dot_contiguous` of it (the same bits)."""
    ety = types.memory_type(pt)
    vty = ir.VectorType(ety, vw)
    esize = pt.byte_size
    fma_v = intrinsic(b.module, f"llvm.fma.v{vw}{'f32' if pt is PT.F32 else 'f64'}",
                      ir.FunctionType(vty, [vty, vty, vty]))
    fma_s = intrinsic(b.module, f"llvm.fma.{'f32' if pt is PT.F32 else 'f64'}",
                      ir.FunctionType(ety, [ety, ety, ety]))
    zero_v = ir.Constant(vty, [ir.Constant(ety, 0.0)] * vw)
    step = vw * unroll
    rows = len(x_ptrs)
    n = i64(n) if isinstance(n, int) else n
    n_main = b.mul(b.udiv(n, i64(step)), i64(step))

    def vector_body(k, accs):
        new = []
        offs = [b.add(k, i64(u * vw)) for u in range(unroll)]
        yvs = [b.load(b.gep(y_ptr, [off], inbounds=True, source_etype=ety), typ=vty, align=esize)
               for off in offs]
        for r, x_ptr in enumerate(x_ptrs):
            for u, off in enumerate(offs):
                xv = b.load(b.gep(x_ptr, [off], inbounds=True, source_etype=ety), typ=vty, align=esize)
                new.append(b.call(fma_v, [xv, yvs[u], accs[r * unroll + u]]))
        return b.add(k, i64(step)), new

    def scalar_body(k, accs):
        yv = b.load(b.gep(y_ptr, [k], inbounds=True, source_etype=ety), typ=ety, align=esize)
        new = []
        for x_ptr, acc in zip(x_ptrs, accs):
            xv = b.load(b.gep(x_ptr, [k], inbounds=True, source_etype=ety), typ=ety, align=esize)
            new.append(b.call(fma_s, [xv, yv, acc]))
        return b.add(k, i64(1)), new

    accs = _carried_loop(b, "dot.v", i64(0), n_main, [zero_v] * (unroll * rows), vector_body)
    heads = []
    for r in range(rows):
        acc = accs[r * unroll]
        for v in accs[r * unroll + 1:(r + 1) * unroll]:
            acc = b.fadd(acc, v)
        lanes = [b.extract_element(acc, ir.Constant(I32, j)) for j in range(vw)]
        while len(lanes) > 1:
            lanes = [b.fadd(lanes[j], lanes[j + 1]) if j + 1 < len(lanes) else lanes[j]
                     for j in range(0, len(lanes), 2)]
        heads.append(lanes[0])
    return _carried_loop(b, "dot.s", n_main, n, heads, scalar_body)


def axpy_contiguous(b: ir.IRBuilder, pt: PT, y_ptr, x_ptrs, alphas, n, vw: int) -> None:
    """``y[i] += alpha * x[i]`` for i < n (``n`` an i64 value >= 0), for each
    ``(x, alpha)`` of ``zip(x_ptrs, alphas)`` in turn: vectors, then a scalar
    tail.  Several rows at once load and
    store ``y`` once for all of them, with the same fused multiply-adds in
    the same order (the same bits as one call per row)."""
    ety = types.memory_type(pt)
    vty = ir.VectorType(ety, vw)
    esize = pt.byte_size
    fma_v = intrinsic(b.module, f"llvm.fma.v{vw}{'f32' if pt is PT.F32 else 'f64'}",
                      ir.FunctionType(vty, [vty, vty, vty]))
    fma_s = intrinsic(b.module, f"llvm.fma.{'f32' if pt is PT.F32 else 'f64'}",
                      ir.FunctionType(ety, [ety, ety, ety]))
    avs = [splat(b, alpha, vty) for alpha in alphas]
    n_main = b.mul(b.udiv(n, i64(vw)), i64(vw))
    with Loop(b, 0, n_main, vw, "ax") as i:
        yp = b.gep(y_ptr, [i], inbounds=True, source_etype=ety)
        y = b.load(yp, typ=vty, align=esize)
        for x_ptr, av in zip(x_ptrs, avs):
            xv = b.load(b.gep(x_ptr, [i], inbounds=True, source_etype=ety), typ=vty, align=esize)
            y = b.call(fma_v, [av, xv, y])
        b.store(y, yp, align=esize)
    with Loop(b, n_main, n, 1, "axs") as i:
        yp = b.gep(y_ptr, [i], inbounds=True, source_etype=ety)
        y = b.load(yp, typ=ety, align=esize)
        for x_ptr, alpha in zip(x_ptrs, alphas):
            xv = b.load(b.gep(x_ptr, [i], inbounds=True, source_etype=ety), typ=ety, align=esize)
            y = b.call(fma_s, [alpha, xv, y])
        b.store(y, yp, align=esize)
