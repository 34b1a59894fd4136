"""One task of a packed GEMM: the loop nest that a module's own GEMM and the
GEMM library share.

A module's own GEMM (``kernels/dot_tasks.py``) knows every size when the
module is compiled; the GEMM library (``gemm_library.py``) reads them from a
descriptor at run time.  Both must compute the same tiles and add the K
blocks in the same order (tests compare them bit for bit), so the loop nest
(BLIS' order, see ``gemm.py`` and ``docs/dot.md``) is written once,
:func:`emit_task`, against a :class:`GemmTask` that says

* how sizes are given: Python ints folded by a :class:`CompileTimeIndex`
  (LLVM then sees constant trip counts and strides, which the per-module
  code's speed depends on), or i64 values for which a
  :class:`RunTimeIndex` emits every operation;
* where a task's packed blocks are in scratch, and whether B is packed once
  for all tasks (known, or an i1 read at run time);
* how blocks are packed (compile-time or run-time edge handling);
* how finished tiles reach C: through the result's layout and the fused
  epilogue (a module), or through strides and an epilogue callback (the
  library).

Units: sizes, offsets and strides count elements; scratch offsets count
bytes.  The task grid splits the batch, then M, then N into balanced chunks
of whole micro-panels (:func:`chunk`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from llvmlite import ir

from . import types
from . import gemm_native
from .gemm import I1, I32, Loop, add, imin, micro_kernel, mul_const, pack_once
from .gemm import intrinsic as gemm_intrinsic
from .ir_array import i64


def _is(x, value: int) -> bool:
    """Whether ``x`` is known (a Python int) to be ``value``."""
    return isinstance(x, int) and not isinstance(x, bool) and x == value


def _known(*xs) -> bool:
    return all(isinstance(x, int) for x in xs)


class CompileTimeIndex:
    """Index arithmetic when the sizes are Python ints (a module's own GEMM):
    operations on known values are done here; divisions are unsigned (every
    index is non-negative); multiplying by a unit (:meth:`scale`) skips
    factors of 1 and carries ``nsw nuw``."""

    @staticmethod
    def const(x):
        """``x`` as an LLVM value (ints become i64 constants)."""
        return i64(x) if isinstance(x, int) else x

    def sub(self, b, x, y):
        return x - y if _known(x, y) else b.sub(self.const(x), self.const(y))

    def mul(self, b, x, y):
        return x * y if _known(x, y) else b.mul(self.const(x), self.const(y))

    def div(self, b, x, y):
        if _known(x, y):
            return x // y
        return x if _is(y, 1) else b.udiv(self.const(x), self.const(y))

    def rem(self, b, x, y):
        if _known(x, y):
            return x % y
        return i64(0) if _is(y, 1) else b.urem(self.const(x), self.const(y))

    def ceil_div(self, b, x, y):
        if _known(x, y):
            return -(-x // y)
        return self.div(b, b.add(self.const(x), self.const(self.sub(b, y, 1))), y)

    def scale(self, b, x, unit: int):
        return x * unit if isinstance(x, int) else mul_const(b, x, unit)


class RunTimeIndex:
    """Index arithmetic when the sizes are i64 values (the GEMM library):
    every operation is one instruction, divisions signed, multiplies
    without flags -- the library's arithmetic as its speed was measured
    (``docs/dot.md``); LLVM folds what is constant."""

    const = staticmethod(CompileTimeIndex.const)

    def sub(self, b, x, y):
        return b.sub(self.const(x), self.const(y))

    def mul(self, b, x, y):
        return b.mul(self.const(x), self.const(y))

    def div(self, b, x, y):
        return b.sdiv(self.const(x), self.const(y))

    def rem(self, b, x, y):
        return b.srem(self.const(x), self.const(y))

    def ceil_div(self, b, x, y):
        return b.sdiv(b.add(self.const(x), b.sub(self.const(y), i64(1))), self.const(y))

    def scale(self, b, x, unit):
        return b.mul(self.const(x), self.const(unit))


COMPILE_TIME = CompileTimeIndex()
RUN_TIME = RunTimeIndex()


def chunk(b, t, n_chunks, units, unit, total, ix=COMPILE_TIME):
    """``[lo, hi)`` (elements) of chunk ``t`` of ``n_chunks`` balanced chunks
    of ``units`` units of ``unit`` elements each, ``total`` elements in all
    (the last unit may be partial): chunks differ by one unit at most."""
    if _is(n_chunks, 1):
        return i64(0), ix.const(total)
    lo = ix.scale(b, ix.div(b, ix.mul(b, t, units), n_chunks), unit)
    hi = ix.scale(b, ix.div(b, ix.mul(b, b.add(t, i64(1)), units), n_chunks), unit)
    if not (_known(units, unit, total) and units * unit == total):
        hi = imin(b, hi, ix.const(total))
    return lo, hi


def task_ranges(b, t, grid, nb, M, N, mu: int, nu: int, ix=COMPILE_TIME) -> tuple:
    """``(b_lo, b_hi, m_lo, m_hi, n_lo, n_hi)``: the batches, rows and columns
    of task ``t`` of ``grid`` = (tasks along batch, M, N), task numbers
    running along N fastest; M and N chunks are whole units of ``mu`` rows
    and ``nu`` columns (the micro-tile)."""
    nbt, nmt, nnt = grid
    tn = ix.rem(b, t, nnt)
    rest = ix.div(b, t, nnt)
    tm = ix.rem(b, rest, nmt)
    tb = ix.div(b, rest, nmt)
    b_lo, b_hi = chunk(b, tb, nbt, nb, 1, nb, ix)
    m_lo, m_hi = chunk(b, tm, nmt, ix.ceil_div(b, M, mu), mu, M, ix)
    n_lo, n_hi = chunk(b, tn, nnt, ix.ceil_div(b, N, nu), nu, N, ix)
    return b_lo, b_hi, m_lo, m_hi, n_lo, n_hi


@dataclass
class TileArgs:
    """One micro-tile of a task: what its micro-kernel call and its store into
    C need.  ``c_batch``: the C side's batch state (``GemmTask.c_batch``);
    ``r0``/``c0``: the tile's first row and column; ``kc``: the K block's
    length; ``ap``/``bp``: the packed A and B micro-panels; ``first``/``last``
    (i1): the K block is the first / the last."""

    bi: object
    c_batch: object
    r0: object
    c0: object
    kc: object
    ap: object
    bp: object
    first: object
    last: object
    ldb: object = None       # B read in place, rows ldb apart (None: packed panel)
    #: A read in place: (strided-A micro-kernel, the tile's first A element, A's
    #: row stride, i1 "a full row panel"), or a function emitting and returning
    #: them at each call; ``ap`` is then the packed partial panel.
    direct_a: tuple | Callable[[], tuple] | None = None

    def call(self, b, uk, c, ldc, accumulate) -> None:
        """The micro-kernel: C tile at ``c`` (rows ``ldc`` apart) (+)= A panel x B panel."""
        if self.direct_a is not None:
            uk_a, a_at, lda, full = self.direct_a() if callable(self.direct_a) else self.direct_a
            with b.if_else(full) as (then, otherwise):
                with then:
                    b.call(uk_a, [self.kc, a_at, lda, self.bp, c, ldc, accumulate])
                with otherwise:
                    b.call(uk, [self.kc, self.ap, self.bp, c, ldc, accumulate])
        elif self.ldb is None:
            b.call(uk, [self.kc, self.ap, self.bp, c, ldc, accumulate])
        else:
            b.call(uk, [self.kc, self.ap, self.bp, self.ldb, c, ldc, accumulate])


@dataclass
class TaskBuffers:
    """A task's scratch: its packed A block (MC x KC) and B block (KC x NC),
    and B packed once for all tasks (``shared``, with a flag per block:
    ``gemm.pack_once``) when ``use_shared`` (a bool, or an i1 read at run time)."""

    a: ir.Value
    b: ir.Value
    shared: ir.Value | None
    flags: ir.Value | None
    use_shared: bool | ir.Value


class GemmTask:
    """What :func:`emit_task` needs to know about one GEMM ``C[b] = A[b] @ B[b]``.

    Attributes (ints or i64 values, as ``ix`` expects):

    * ``ix``: :data:`COMPILE_TIME` or :data:`RUN_TIME`;
    * ``pt``; ``mr``, ``nr``, ``vw`` (ints): the micro-tile and vector width;
    * ``M``, ``N``, ``K``, ``nb``: the problem; ``kc``, ``mc``, ``nc``: the
      K, M and N blocks; ``grid``: tasks along (batch, M, N);
    * ``A``, ``B``: the operands as views with index groups ``gb``/``gr``/``gc``
      (``gemm.MatrixView`` or alike);
    * ``a_direct``/``b_direct`` (bools): A's full row panels / B read in place;
    * ``direct_c``: full tiles may be stored by the micro-kernel into C (C's
      columns unit-stride): a bool, or an i1 read at run time;
    * ``native``: a ``gemm_native.Format`` when the task runs a native
      low-precision micro-kernel (panels of k groups, B panels with a header
      when the format has one), else None (panels of ``pt``);
    * ``a_pointer_at_call``: with ``a_direct``, compute a tile's in-place A
      pointer at each micro-kernel call (in each branch of the tile store)
      instead of once per tile.  The library does, as its code always did:
      computed once per tile, LLVM compiles its direct-A variants (the
      row-major products) to other machine code than the one measured in
      ``docs/dot.md``.
    """

    ix = COMPILE_TIME
    a_pointer_at_call = False
    native = None

    def begin(self, b) -> None:
        """Emit what the tile stores read at run time (e.g. ``direct_c``),
        once per task, ahead of its loops."""

    def buffers(self, b, w) -> TaskBuffers:
        """The scratch of worker ``w`` (emitted once per task)."""
        raise NotImplementedError

    def c_batch(self, b, bi):
        """Whatever the tile stores need per batch ``bi`` (in ``TileArgs.c_batch``)."""
        raise NotImplementedError

    def pack(self, b, view, bi, boff, lo, hi, total, inner0, kc, dst, width: int, outer_is_row: bool) -> None:
        """Pack the micro-panels of outer indices [lo, hi) (``total`` in all;
        ``lo`` a multiple of ``width``), inner indices [inner0, inner0 + kc),
        into ``dst`` (``gemm.pack_block``)."""
        raise NotImplementedError

    def pack_edge(self, b, view, bi, boff, full_end, hi, total, inner0, kc, dst, width: int,
                  outer_is_row: bool) -> None:
        """Pack only the partial last panel (outer indices [full_end, total),
        zero-padded to ``width``) into ``dst``; ``hi > full_end``."""
        raise NotImplementedError

    def store_full_tile(self, b, uk, t: TileArgs) -> None:
        """A full tile: the micro-kernel stores into C (``direct_c`` holds)."""
        raise NotImplementedError

    def store_edge_tile(self, b, uk, t: TileArgs, tile) -> None:
        """An edge tile, or any tile when C cannot take the micro-kernel's
        stores: computed into ``tile`` (MR x NR on the stack), then added to C."""
        raise NotImplementedError


def _elements(b, ptr, offset, pt):
    return b.gep(ptr, [offset], inbounds=True, source_etype=types.memory_type(pt))


def panel_elements(b, g: GemmTask, kc, width: int, header: int = 0):
    """Elements of ``g.pt`` between packed micro-panels of ``width`` rows or
    columns over a K block of ``kc``: ``kc * width``, or with a native format
    ``(words + header) * width`` 32-bit words, ``words`` the groups of ``kc``
    padded to the format's ``k_step`` (``gemm_native.words``)."""
    if g.native is None:
        return b.mul(kc, i64(width))
    ix, fmt = g.ix, g.native
    words = ix.const(ix.mul(b, ix.ceil_div(b, kc, fmt.k_step), fmt.k_step // fmt.group))
    return b.mul(b.add(words, i64(header)), i64(width)) if header else b.mul(words, i64(width))


def shared_b_elements(K: int, kc: int, n_padded: int, native=None) -> int:
    """Elements of ``pt`` one batch of B packed once for all tasks takes (its
    layout: :func:`_shared_panel`)."""
    if native is None:
        return K * n_padded
    words = -(-K // native.k_step) * (native.k_step // native.group)
    return (words + -(-K // kc) * native.header) * n_padded


def _shared_panel(b, g: GemmTask, bi, pc, q, kc):
    """Element offset of panel ``q`` of the K block starting at ``pc`` of batch
    ``bi`` in the B packed once for all tasks (batches of K x N-padded; with
    a native format, K in groups plus a header row per K block)."""
    ix = g.ix
    npad = ix.mul(b, ix.ceil_div(b, g.N, g.nr), g.nr)
    if g.native is None:
        off = b.add(b.mul(bi, ix.const(ix.mul(b, g.K, npad))), b.mul(pc, ix.const(npad)))
        return b.add(off, b.mul(q, b.mul(kc, i64(g.nr))))
    group, header = g.native.group, g.native.header
    # (K blocks but the last are whole multiples of k_step: only the last is padded)
    step = g.native.k_step
    per_batch = ix.mul(b, ix.const(ix.mul(b, ix.ceil_div(b, g.K, step), step // group)), npad)
    if header:
        per_batch = b.add(ix.const(per_batch), ix.const(ix.mul(b, ix.ceil_div(b, g.K, g.kc), npad)))
    kb_rows = ix.div(b, pc, group)
    if header:
        kb_rows = b.add(ix.const(kb_rows), ix.const(ix.div(b, pc, g.kc)))
    off = b.add(b.mul(bi, ix.const(per_batch)), b.mul(ix.const(kb_rows), ix.const(npad)))
    return b.add(off, b.mul(q, panel_elements(b, g, kc, g.nr, header)))


def emit_task(b: ir.IRBuilder, alloca_b: ir.IRBuilder, g: GemmTask, t, w) -> None:
    """Task ``t`` of ``g``, run by worker ``w``: for its batches, N blocks
    (NC), K blocks (KC; B block packed), M blocks (MC; A block packed), NR
    panels and MR panels, one micro-kernel call per tile; C accumulates over
    the K blocks, and each tile is stored by ``g`` (its last K block finishes it)."""
    ix, pt = g.ix, g.pt
    c = ix.const
    mr, nr, vw = g.mr, g.nr, g.vw
    M, N, K = g.M, g.N, g.K
    A, B = g.A, g.B
    if g.native is not None:
        uk = gemm_native.micro_kernel(b.module, g.native, mr, nr)
        header = g.native.header
    else:
        uk = micro_kernel(b.module, pt, mr, nr, vw, strided_b=g.b_direct)
        header = 0
    uk_a = micro_kernel(b.module, pt, mr, nr, vw, strided_a=True) if g.a_direct else None
    b_lo, b_hi, m_lo, m_hi, n_lo, n_hi = task_ranges(b, t, g.grid, g.nb, M, N, mr, nr, ix)
    bufs = g.buffers(b, w)
    tile = alloca_b.alloca(ir.ArrayType(types.memory_type(pt), mr * nr), name="tile")
    tile.align = 64
    nkb = ix.ceil_div(b, K, g.kc)
    n_pan = ix.ceil_div(b, N, nr)
    m_edge = ix.rem(b, M, mr)
    m_full = ix.sub(b, M, m_edge)       # rows below this are in full tiles
    n_edge = ix.rem(b, N, nr)
    n_full = ix.sub(b, N, n_edge)
    g.begin(b)

    with Loop(b, b_lo, b_hi, 1, "batch") as bi:
        boff_a = A.gb.offset(b, bi) if A.is_array else i64(0)
        boff_b = B.gb.offset(b, bi) if B.is_array else i64(0)
        c_batch = g.c_batch(b, bi)
        with Loop(b, n_lo, n_hi, g.nc, "jc") as jc:
            nc_end = imin(b, b.add(jc, c(g.nc)), n_hi)
            with Loop(b, 0, nkb, 1, "kb") as kb:
                pc = b.mul(kb, c(g.kc))
                kc = c(K) if _is(nkb, 1) else imin(b, c(g.kc), b.sub(c(K), pc))
                first = b.icmp_signed("==", kb, i64(0))
                last = b.icmp_signed("==", kb, c(ix.sub(b, nkb, 1)))
                use_shared = None
                if g.b_direct:
                    # B is read in place; only a partial last panel is packed (zero-padded).
                    if not _is(n_edge, 0):
                        with b.if_then(b.icmp_signed(">", nc_end, c(n_full))):
                            g.pack_edge(b, B, bi, boff_b, n_full, nc_end, N, pc, kc, bufs.b, nr, False)
                elif bufs.use_shared is False:
                    g.pack(b, B, bi, boff_b, jc, nc_end, N, pc, kc, bufs.b, nr, False)
                else:
                    q_jc = ix.div(b, jc, nr)
                    flag = b.gep(bufs.flags, [b.add(b.mul(b.add(b.mul(bi, c(nkb)), kb), c(n_pan)), q_jc)],
                                 inbounds=True, source_etype=I32)
                    b_sh = _elements(b, bufs.shared, _shared_panel(b, g, bi, pc, q_jc, kc), pt)
                    enabled = ir.Constant(I1, 1) if bufs.use_shared is True else bufs.use_shared
                    use_shared = pack_once(
                        b, enabled, flag,
                        lambda: g.pack(b, B, bi, boff_b, jc, nc_end, N, pc, kc, b_sh, nr, False),
                        lambda: g.pack(b, B, bi, boff_b, jc, nc_end, N, pc, kc, bufs.b, nr, False))
                with Loop(b, m_lo, m_hi, g.mc, "ic") as ic:
                    mc_end = imin(b, b.add(ic, c(g.mc)), m_hi)
                    if g.a_direct:
                        # Full row panels are read in place; only a partial last one is packed.
                        if not _is(m_edge, 0):
                            with b.if_then(b.icmp_signed(">", mc_end, c(m_full))):
                                g.pack_edge(b, A, bi, boff_a, m_full, mc_end, M, pc, kc, bufs.a, mr, True)
                    else:
                        g.pack(b, A, bi, boff_a, ic, mc_end, M, pc, kc, bufs.a, mr, True)
                    with Loop(b, jc, nc_end, nr, "jr") as n0:
                        ldb = None
                        if g.b_direct:
                            in_place = B.element_pointer(b, add(b, add(b, boff_b, B.gr.offset(b, pc)), n0))
                            ldb = c(B.gr.stride)
                            bp = in_place
                            if not _is(n_edge, 0):
                                full_n = b.icmp_signed("<", n0, c(n_full))
                                bp = b.select(full_n, in_place, bufs.b)
                                ldb = b.select(full_n, ldb, i64(nr))
                        else:
                            q = ix.div(b, b.sub(n0, jc), nr)
                            off = b.mul(q, panel_elements(b, g, kc, nr, header))
                            bp = _elements(b, bufs.b, off, pt)
                            if use_shared is not None:
                                bp = b.select(use_shared, _elements(b, b_sh, off, pt), bp)
                        slices = None
                        if PREFETCH_NEXT_B and use_shared is not None and g.native is None:
                            # (only B read from the copy packed once for all tasks, a task's
                            # own block was just packed, in L2; and not after the block's last
                            # panel, whose next one is another K block's)
                            slices = _next_panel_slices(b, bp, kc, nr * pt.byte_size, mr, ic, mc_end,
                                                        b.and_(use_shared, b.icmp_signed("<", b.add(n0, c(nr)),
                                                                                         nc_end)))
                        with Loop(b, ic, mc_end, mr, "ir") as r0:
                            p = ix.div(b, b.sub(r0, ic), mr)
                            if slices is not None:
                                _prefetch_slice(b, slices, p)
                            ap = _elements(b, bufs.a, b.mul(p, panel_elements(b, g, kc, mr)), pt)
                            args = TileArgs(bi, c_batch, r0, n0, kc, ap, bp, first, last, ldb)
                            if g.a_direct:
                                args.ap = bufs.a      # the partial last panel, the only one packed

                                def a_in_place(r0=r0, boff_a=boff_a, pc=pc):
                                    a_row = add(b, boff_a, A.gr.offset(b, r0))
                                    a_at = A.element_pointer(b, add(b, a_row, pc))
                                    full = (ir.Constant(I1, 1) if _is(m_edge, 0)
                                            else b.icmp_signed("<", r0, c(m_full)))
                                    return uk_a, a_at, c(A.gr.stride), full
                                args.direct_a = a_in_place if g.a_pointer_at_call else a_in_place()
                            _store_tile(b, g, uk, args, tile, m_edge, m_full, n_edge, n_full)


#: While the micro-kernels of an M block run over one B micro-panel of the
#: B packed once for all tasks, they bring the next panel into L2, a slice
#: per call.  Without it the first call on a panel read it from L3 or memory
#: at the micro-kernel's pace (that B is K x N: beyond L2 from 1024^2 up).
PREFETCH_NEXT_B = True


def _next_panel_slices(b, bp, kc, row_bytes: int, mr: int, ic, mc_end, enabled) -> tuple:
    """(next panel, lines in all, lines per micro-kernel call) for
    :func:`_prefetch_slice`: the B micro-panel after ``bp`` (``kc`` rows of
    ``row_bytes``; a block's panels are contiguous) in as many slices as the
    M block has micro-panels, none unless ``enabled`` (i1)."""
    i8 = ir.IntType(8)
    panel = b.mul(kc, i64(row_bytes))
    lines = b.lshr(b.add(panel, i64(63)), i64(6))
    calls = b.sdiv(b.add(b.sub(mc_end, ic), i64(mr - 1)), i64(mr))
    step = b.sdiv(b.add(lines, b.sub(calls, i64(1))), calls)
    step = b.select(enabled, step, i64(0))
    return b.gep(bp, [panel], inbounds=False, source_etype=i8), lines, step


def _prefetch_slice(b, slices: tuple, p) -> None:
    """Prefetch into L2 (``prefetcht1``) slice ``p`` of the next B panel."""
    nxt, lines, step = slices
    prefetch = gemm_intrinsic(b.module, "llvm.prefetch.p0",
                              ir.FunctionType(ir.VoidType(), [ir.PointerType(), I32, I32, I32]))
    lo = b.mul(p, step)
    hi = imin(b, b.add(lo, step), lines)
    with Loop(b, lo, hi, 1, "pfb", vectorize=False) as line:
        at = b.gep(nxt, [b.shl(line, i64(6))], inbounds=False, source_etype=ir.IntType(8))
        b.call(prefetch, [at, ir.Constant(I32, 0), ir.Constant(I32, 2), ir.Constant(I32, 1)])


def _store_tile(b, g: GemmTask, uk, args: TileArgs, tile, m_edge, m_full, n_edge, n_full) -> None:
    """A full tile straight into C when it is one (inside M and N, and C's
    columns unit-stride), else through the stack tile."""
    if g.direct_c is False:
        g.store_edge_tile(b, uk, args, tile)
        return
    conds = []
    if not _is(m_edge, 0):
        conds.append(b.icmp_signed("<", args.r0, g.ix.const(m_full)))
    if not _is(n_edge, 0):
        conds.append(b.icmp_signed("<", args.c0, g.ix.const(n_full)))
    if g.direct_c is not True:
        conds.append(g.direct_c)
    if not conds:
        g.store_full_tile(b, uk, args)
        return
    full = conds[0]
    for cond in conds[1:]:
        full = b.and_(full, cond)
    with b.if_else(full) as (then, otherwise):
        with then:
            g.store_full_tile(b, uk, args)
        with otherwise:
            g.store_edge_tile(b, uk, args, tile)
