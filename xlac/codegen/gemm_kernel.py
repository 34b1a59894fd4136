"""Building GEMM kernels: what the dot kernels (``kernels/dot*.py``) and the
implicit-GEMM convolution (``kernels/conv_gemm.py``) share above the IR
pieces of ``gemm.py`` and the task loop nest of ``gemm_task.py``.

* :func:`blocking_for` -- micro-tile and cache blocks for the host;
* :func:`producers`, :func:`elementwise_to_root` -- which kOutput fusions a
  GEMM kernel can take (a dot or convolution with an elementwise epilogue);
* :func:`output_fusion_epilogue` -- a kOutput fusion's epilogue as a
  function of the finished C element;
* :class:`ResultTiles` -- finished tiles into the result buffer, through its
  layout and the epilogue (sizes known at compile time);
* :func:`run_tasks`, :func:`run_grid`, :func:`task_counter` -- self-scheduled
  tasks over ``parallel_for``, on a grid chosen at run time from the threads.

Units: sizes and indices count elements; scratch offsets count bytes.
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Callable

from llvmlite import ir

from ..hlo.ir import HloInstruction
from ..hlo.opcodes import OPCODES
from ..shape import F32
from . import types
from .emitter import KernelContext
from .gemm import I1, Loop, MatrixView, add, grab_tasks, imin
from .gemm_task import TileArgs
from .ir_array import Index, IrArray, i64
from .loops import parallel_loops
from .task_grid import GridTable, as_value, choose, workers
from .target import host_vector_bits

#: Mark a finished tile's epilogue loops parallel (``ResultTiles.store_direct``).
PARALLEL_EPILOGUE = True
#: A finished tile's epilogue reads C and the arrays of C's shape and layout
#: at the element's offset, not through its index components
#: (``ResultTiles.store_direct``, ``store_through_stack``; a ResNet eval step
#: compiles 5% faster).
LINEAR_EPILOGUE = True

I8 = ir.IntType(8)


# ---------------------------------------------------------------------------
# Tile sizes
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Blocking:
    """Tile and block sizes, in elements."""

    vw: int   # elements per vector register
    mr: int   # micro-tile rows
    nr: int   # micro-tile columns (a multiple of vw)
    kc: int   # K block
    mc: int   # M block (a multiple of mr)
    nc: int   # N block of a task that packs its own B (a multiple of nr)


def blocking_for(pt, M: int | None = None, N: int | None = None, wide: bool = True) -> Blocking:
    """Tile sizes for element type ``pt`` on the host, for a product of M x N
    (None: not known yet).

    The default tile is 6 x (2 vectors): 12 accumulators cover the FMA latency
    (4 cycles x 2 pipes) and each k step loads 2 vectors of B and
    broadcasts 6 scalars of A.  With AVX-512, a product at least 4 vectors
    wide and more than 8 rows uses 4 vectors of columns instead (``wide``; the
    convolution's indirect micro-kernel keeps the default): f32 6 x 64
    (:func:`_wide_f32_rows`: 24 accumulators, 6 broadcasts per 24 FMAs) with
    KC = 128, so that the B micro-panel (32 KB) stays in L1 while the M
    block's micro-kernels run over it; f64 4 x 32.  With AVX2 (16
    registers), f32 products at least 3 vectors wide use 4 x 24: 12
    accumulators, 3 FMAs per broadcast.  A narrow
    N uses one vector (12 x 1 vector, or half-width vectors for N <= vw/2)
    and a short M (<= 8) uses M rows, so that little of the padded tile is
    wasted.  KC = 256 (f32) keeps the default tile's B micro-panel (KC x NR)
    in L1 and an A block (MC x KC) in L2.
    """
    bits = host_vector_bits()
    vw = bits // (8 * pt.byte_size)
    mr, nr = (6, 2 * vw) if bits >= 256 else (4, 2 * vw)
    kc, mc, nc = (256 if pt is F32 else 192), 120, 2048
    if wide and bits >= 512 and (M is None or M > 8) and (N is None or N >= 4 * vw):
        mr, nr = 4, 4 * vw
        if pt is F32:
            mr, kc, mc, nc = _wide_f32_rows(M), WIDE_F32_KC, WIDE_F32_MC, WIDE_F32_NC
    elif (wide and bits == 256 and pt is F32 and (M is None or M > 8)
          and (N is None or (N >= 3 * vw and -N % (3 * vw) <= N // 10))):
        # 16 registers: 12 accumulators, 3 vectors of B and a broadcast.  Every
        # broadcast feeds 3 FMAs rather than 2: one thread on AVX2 code, against
        # OpenBLAS's Haswell kernels, 4 x 24 ran 32 x 4096 x 4096 13 %, the
        # MLP's 256 x 784 x 512 7 %, 1024^3 and 2048^3 2-3 % faster than 6 x 16.
        # (Not when 24-column panels pad N by more than 10 %: N = 128, 144.)
        mr, nr = 4, 3 * vw
    if N is not None and N <= vw:
        if N <= vw // 2 and vw >= 8:
            vw //= 2
        nr = vw
        mr = 12 if bits >= 512 else 6
    if M is not None and M <= 8:
        mr = max(2, M)
    mc = max(mr, (mc // mr) * mr)
    nc = (nc // nr) * nr
    return Blocking(vw, mr, nr, kc, mc, nc)


#: The wide f32 tile's K block: a B micro-panel (KC x 64 floats, 32 KB) stays
#: in a 48 KB L1 across the M block's micro-kernel calls.  (KC = 512 kept a
#: 128 KB panel in L2: the k loop then waited on L2, 4 vectors of B per 16
#: FMAs; on the Sapphire Rapids, one thread, 1024^3 and 2048^3 ran 5-10 %
#: slower than with KC = 128, tile 6 x 64 and MC = 240.)
WIDE_F32_KC = 128
#: The wide f32 tile's M block: an A block of 240 x KC (120 KB) in L2.
WIDE_F32_MC = 240
#: The wide f32 tile's N block: a task's C block (its rows x NC, about
#: 132 x 1024 floats) stays in L2 across the K blocks, which each add to it
#: (KC = 128: K / 128 passes; one thread, 4096^3: NC = 2048, a 1 MB-2 MB C
#: block, 0.94x OpenBLAS's speed, NC = 1024 1.00x).
WIDE_F32_NC = 1024


def _wide_f32_rows(M: int | None) -> int:
    """Rows of the wide f32 tile: 6 (6 x 64: 24 accumulators, 4 vectors of B
    and 6 broadcasts of A per 24 FMAs), or 4 when padding M to 6-row panels
    would waste more than 2 % of it and 4-row ones less (128 rows: 132 of 6,
    the batched 128 x 64 x 128 product 6 % slower than with 4 rows)."""
    if M is None:
        return 6
    pad6, pad4 = -M % 6, -M % 4
    return 4 if pad6 > 0.02 * M and pad4 < pad6 else 6


# ---------------------------------------------------------------------------
# Which fusions a GEMM kernel takes, and their epilogue
# ---------------------------------------------------------------------------

def producers(inst: HloInstruction) -> list:
    """``inst`` and every instruction it depends on (inside its computation)."""
    seen, stack, out = set(), [inst], []
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        out.append(cur)
        stack.extend(cur.operands)
    return out


def elementwise_to_root(comp, core: HloInstruction) -> bool:
    """Every path from ``core`` (a fusion's dot or convolution) to the root of
    ``comp`` goes through elementwise ops of ``core``'s dimensions: the
    epilogue reads ``core`` at the index it writes (the fusion pass
    guarantees this for kOutput fusions; checked anyway)."""
    comp.compute_users()
    root = comp.root
    seen, stack = set(), [core]
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if cur is not core:
            info = OPCODES.get(cur.opcode)
            if info is None or not info.is_elementwise or cur.shape.dimensions != core.shape.dimensions:
                return False
        if cur is root:
            continue
        if not cur.users:
            return False
        stack.extend(cur.users)
    return True


def output_fusion_epilogue(ctx: KernelContext, core: HloInstruction) -> tuple:
    """For a kOutput fusion around ``core`` (its dot or convolution): the
    generators of the fused instructions (by ``id``), ``core`` read as "the
    finished C element", and ``epilogue(index, v)``: the fusion's root at
    ``index`` (a result index) when that element is ``v``."""
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


# ---------------------------------------------------------------------------
# Finished tiles into the result
# ---------------------------------------------------------------------------

@dataclass
class ResultTiles:
    """The result buffer as the tiles of a GEMM with compile-time sizes reach it.

    ``C``: the result seen as a batch of M x N matrices (a ``MatrixView`` of
    ``out``); ``epilogue``: ``output_fusion_epilogue``'s, or None;
    ``mr`` x ``nr``: the micro-tile; ``M``, ``N``: the problem;
    ``k_blocks``: K blocks accumulated in the result (1: a tile is final
    when its micro-kernel returns)."""

    C: MatrixView
    out: IrArray
    epilogue: Callable | None
    pt: object
    mr: int
    nr: int
    M: int
    N: int
    k_blocks: int

    def batch(self, b, bi) -> tuple:
        """``TileArgs.c_batch`` of batch ``bi``: (element offset, index components)."""
        return self.C.gb.offset(b, bi), self.C.gb.components(b, bi)

    def finish(self, b, index: Index, v) -> None:
        """Write the final value ``v`` of an element of C (through the epilogue)."""
        if self.epilogue is not None:
            v = self.epilogue(index, v)
        self.out.write(b, index, v)

    def _row_offset(self, b, boff, r):
        """Row ``r``'s offset in C when the epilogue's index carries the
        element's offset (``LINEAR_EPILOGUE``: C's view is of the output's own
        shape and layout), else None.  The epilogue then reads C and the
        arrays of its shape and layout (a residual) at that offset, and the
        row's components (a convolution's batch and spatial position,
        divisions by the image's sizes) are left to what reads them alone
        (per-channel operands do not)."""
        C, out = self.C, self.out
        if not (LINEAR_EPILOGUE and C.is_array and out.shape.dimensions == C.shape.dimensions
                and out.shape.layout == C.shape.layout):
            return None
        return add(b, boff, C.gr.offset(b, r))

    def _element_index(self, b, bcomp, rcomp, row_offset, c) -> Index:
        """The index of C's element (row, ``c``), with its offset when ``row_offset`` is known."""
        C = self.C
        index = C.index(b, bcomp, rcomp, C.gc.components(b, c))
        if row_offset is None:
            return index
        return Index(index.multi, b.add(row_offset, C.gc.offset(b, c)), self.out.shape)

    def store_direct(self, b, uk, t: TileArgs, ldc: int, outlined=None) -> None:
        """A full tile stored by the micro-kernel into C (rows ``ldc`` apart);
        at the last K block, the epilogue over it while it is in L1: inline,
        or ``outlined(b, r0, c0)`` emitting a call of a function that runs
        :meth:`tile_epilogue` (a kernel whose own code is compiled cold)."""
        C = self.C
        boff, bcomp = t.c_batch
        off = add(b, add(b, boff, C.gr.offset(b, t.r0)), t.c0)
        cp = C.element_pointer(b, off)
        t.call(b, uk, cp, i64(ldc), b.not_(t.first))
        if self.epilogue is None:
            return

        def body():
            if outlined is not None:
                outlined(b, t.r0, t.c0)
            else:
                self.tile_epilogue(b, t.r0, t.c0, t.c_batch)
        if self.k_blocks == 1:
            body()
        else:
            with b.if_then(t.last):
                body()

    def tile_epilogue(self, b, r0, c0, c_batch) -> None:
        """The epilogue over the full tile at (``r0``, ``c0``) of batch
        ``c_batch`` (:meth:`batch`), read from C and written back."""
        C = self.C
        boff, bcomp = c_batch
        # Each element is read and rewritten at its own index (the
        # epilogue's other operands are read-only or, updated in place,
        # read at that index): no dependence between iterations, so the
        # vectoriser needs no run-time overlap checks and no scalar
        # fallback loop for them.
        with (parallel_loops(b.module) if PARALLEL_EPILOGUE else nullcontext()) as base:
            with Loop(b, 0, self.mr, 1, "ei", base=base) as i:
                r = b.add(r0, i)
                rcomp = C.gr.components(b, r)
                row_offset = self._row_offset(b, boff, r)
                with Loop(b, 0, self.nr, 1, "ej", base=base) as j:
                    index = self._element_index(b, bcomp, rcomp, row_offset, b.add(c0, j))
                    v = self.out.read(b, index)
                    self.finish(b, index, v)

    def store_through_stack(self, b, uk, t: TileArgs, tile) -> None:
        """A tile computed into ``tile`` (MR x NR on the stack), then its valid
        elements added/written one by one through C's layout (edge tiles,
        layouts the micro-kernel cannot store into)."""
        mr, nr = self.mr, self.nr
        pt = self.pt
        ety = types.memory_type(pt)
        C = self.C
        boff, bcomp = t.c_batch
        t.call(b, uk, tile, i64(nr), ir.Constant(I1, 0))
        rows = imin(b, i64(mr), b.sub(i64(self.M), t.r0))
        cols = imin(b, i64(nr), b.sub(i64(self.N), t.c0))
        with Loop(b, 0, rows, 1, "gi") as i:
            r = b.add(t.r0, i)
            rcomp = C.gr.components(b, r)
            row_offset = self._row_offset(b, boff, r)
            with Loop(b, 0, cols, 1, "gj") as j:
                index = self._element_index(b, bcomp, rcomp, row_offset, b.add(t.c0, j))
                p = b.gep(tile, [b.add(b.mul(i, i64(nr)), j)], inbounds=True, source_etype=ety)
                v = b.load(p, typ=ety, align=pt.byte_size)
                if self.k_blocks == 1:
                    self.finish(b, index, v)
                else:
                    prev = self.out.read(b, index)
                    v = b.select(t.first, v, b.fadd(prev, v))
                    with b.if_else(t.last) as (then, otherwise):
                        with then:
                            self.finish(b, Index(list(index.multi)), v)
                        with otherwise:
                            self.out.write(b, Index(list(index.multi)), v)


# ---------------------------------------------------------------------------
# Tasks
# ---------------------------------------------------------------------------

def run_tasks(ctx: KernelContext, scratch, n_tasks, counter: int, body, workers=None) -> None:
    """Run ``body(tctx, task, worker)`` for every task in [0, n_tasks).

    ``parallel_for`` starts ``workers`` workers (default: ``n_tasks``); each
    takes the next task from an atomic counter (:func:`task_counter`
    ``counter`` of ``scratch``, a ``ScratchPlan`` with a ``counters``
    region) until none is left (self-scheduling), so a thread that shares
    its core with another process, or that drew expensive edge tasks, just
    does fewer of them.  Without ``parallel_for`` the first worker does
    every task.  A worker's scratch region (its packed blocks) is indexed by
    the worker, and each task is computed the same way whoever runs it, so
    the results do not depend on the schedule.

    ``n_tasks`` is an int, or a function emitting it (an i64 >= 1) in a
    kernel context: a task grid chosen at run time (``task_grid.select``),
    emitted in the kernel and again in the worker's function, where the
    counter's bound is needed.  ``workers`` is then an i64 of ``ctx``.
    """
    if isinstance(n_tasks, int) and n_tasks == 1:
        body(ctx, i64(0), i64(0))
        return
    b = ctx.b
    b.store(i64(0), task_counter(ctx, scratch, counter), align=8)

    def count(c: KernelContext):
        return i64(n_tasks) if isinstance(n_tasks, int) else n_tasks(c)

    def worker(tctx: KernelContext, w) -> None:
        # One copy of the body: the serial fallback calls it rather than
        # inlining it (and unrolling the task loop over it).
        tctx.fn.attributes.add("noinline")
        grab_tasks(tctx.b, task_counter(tctx, scratch, counter), count(tctx), lambda t: body(tctx, t, w))
    ctx.parallel_for(n_tasks if workers is None else workers, worker)


def run_grid(ctx: KernelContext, scratch, table: GridTable, counter: int, body) -> None:
    """:func:`run_tasks` over the grid of ``table`` (``task_grid``) that this
    call's thread count picks; ``body(tctx, task, worker)`` picks it again in
    the worker's function (``task_grid.choose``, from the same ``opts``)."""
    chosen = choose(ctx.b, ctx.opts_arg, table)
    if chosen.threads is None:
        run_tasks(ctx, scratch, chosen.n_tasks, counter, body, workers(ctx.b, chosen, table.max_workers))
        return
    run_tasks(ctx, scratch, lambda c: as_value(choose(c.b, c.opts_arg, table).n_tasks), counter, body,
              workers(ctx.b, chosen, table.max_workers))


def task_counter(ctx: KernelContext, scratch, k: int) -> ir.Value:
    """The k-th task counter (an i64, each on its own cache line) in the
    ``counters`` region of ``scratch`` (the convolution kernel's plans have two)."""
    base = scratch.pointer(ctx.b, ctx.scratch_pointer(), "counters")
    return ctx.b.gep(base, [i64(64 * k)], inbounds=True, source_etype=I8)
