"""AMX micro-kernels: ``tdpbf16ps`` (bf16 x bf16 -> f32) and ``tdpb[su][su]d``
(8-bit integers -> s32) on tiles, and the packing of A they read (used by the
GEMM library through ``gemm_native``; ``docs/dot.md`` has the design and figures).

An AMX tile is up to 16 rows of 64 bytes.  One ``tdpbf16ps`` multiplies a
16 x 32 bf16 tile of A by a 32 x 16 tile of B (stored as 16 rows of 16 k
pairs: the pair-interleaved B panels of ``gemm_native`` as they are) and
adds into a 16 x 16 f32 tile of C: 8192 multiply-adds per instruction;
``tdpbssd`` & co. do the same with 64 bytes of k (quads) into s32.  Tiles are
named by immediate numbers (LLVM's non-``.internal`` intrinsics
``llvm.x86.tileloadd64``, ``llvm.x86.tdpbf16ps``, ...: the register
allocator has no part in them, so the code is what is written here):

    C tiles 0 .. mt*nt-1 (tile (r, s) = r*nt + s), then mt A tiles, then nt B tiles

with ``mt x nt`` tiles of C (MR = 16 mt rows, NR = 16 nt columns; 2 x 2 for
all but short or narrow products: 4 accumulators, 2 + 2 loads per 4 products,
8 tiles in all).  Every tile is configured 16 rows x 64 bytes (palette 1,
``ldtilecfg``), once per library worker call (``configure``; ``release``
after its last task returns the tile state to its initial, cheaper to save,
state).

**Packing.**  B panels are ``gemm_native``'s (words of ``group`` k, NR per
group, K padded to whole tiles of ``16 * group`` k with zeros).  A panels
are tile-major: per tile of k, MR rows of 64 bytes, so each A tile is 1 KB
contiguous; a row-major A is copied 64 bytes at a time (masked loads at the
end of K), a column-major one transposed in registers (whole tiles of a full
panel), other layouts and the edges element by element.

**Numbers.**  ``tdpbf16ps`` treats bf16 denormal inputs as zero and flushes
denormal results (as ``vdpbf16ps`` does), rounding to nearest-even; the
integer forms are exact modulo 2**32, and all four sign combinations are
native (no correction, unlike ``vpdpbusd``).
"""
from __future__ import annotations

from llvmlite import ir

from ..shape import PrimitiveType as PT
from . import types
from .gemm import I32, PTR, Loop, add, imin, intrinsic, transpose_square
from .ir_array import I64, i64

I8 = ir.IntType(8)
I1 = ir.IntType(1)
VOID = ir.VoidType()
#: Rows of a tile, and bytes per row.
ROWS = 16
ROW_BYTES = 64
#: Tile registers.
N_TILES = 8


def tiles_fit(mt: int, nt: int) -> bool:
    """Whether an ``mt x nt`` block of C tiles, its A and B tiles fit the 8 tile registers."""
    return mt * nt + mt + nt <= N_TILES


def _call(b, name: str, args: list, types_: list) -> None:
    b.call(intrinsic(b.module, f"llvm.x86.{name}", ir.FunctionType(VOID, types_)), args)


#: What an object file with tile instructions of its own holds: the name of
#: the tile configuration (every tile kernel loads it first).
MARKER = b"xlac.amx.config"


def _config(module: ir.Module) -> ir.GlobalVariable:
    """The 64-byte tile configuration: palette 1, every tile 16 rows x 64 bytes."""
    name = "xlac.amx.config"
    g = module.globals.get(name)
    if g is None:
        cfg = [0] * 64
        cfg[0] = 1                                  # palette 1
        for t in range(N_TILES):
            cfg[16 + 2 * t] = ROW_BYTES             # colsb (u16, little-endian)
            cfg[48 + t] = ROWS                      # rows
        ty = ir.ArrayType(I8, 64)
        g = ir.GlobalVariable(module, ty, name)
        g.global_constant = True
        # Internal, not private: the name stays in the object's symbol table,
        # which is how a module's own AMX code is recognised before it is
        # loaded (``gemm_library.ensure_symbols``: :data:`MARKER`).
        g.linkage = "internal"
        g.align = 64
        g.initializer = ir.Constant(ty, cfg)
    return g


def configure(b: ir.IRBuilder) -> None:
    """``ldtilecfg``: every tile 16 x 64 bytes (before the first tile instruction)."""
    _call(b, "ldtilecfg", [_config(b.module)], [PTR])


def release(b: ir.IRBuilder) -> None:
    """``tilerelease``: the tiles back to their initial state."""
    _call(b, "tilerelease", [], [])


def _load(b, tile: int, ptr, stride) -> None:
    _call(b, "tileloadd64", [ir.Constant(I8, tile), ptr, stride], [I8, PTR, I64])


def _store(b, tile: int, ptr, stride) -> None:
    _call(b, "tilestored64", [ir.Constant(I8, tile), ptr, stride], [I8, PTR, I64])


def instruction(fmt) -> str:
    """The tile product of ``fmt`` (a ``gemm_native.Format`` of an AMX kind)."""
    if fmt.kind == "amxbf16":
        return "tdpbf16ps"
    sign = lambda pt: "s" if pt is PT.S8 else "u"      # noqa: E731
    return f"tdpb{sign(fmt.a_pt)}{sign(fmt.b_pt)}d"


def tile_ids(mt: int, nt: int) -> tuple:
    """The tile registers of an MT x NT block: (C tile of (r, s), A tile of
    row r, B tile of column s) — C's first, then A's, then B's."""
    return (lambda r, s: r * nt + s), (lambda r: mt * nt + r), (lambda s: mt * nt + mt + s)


def tile_products(b, fmt, mt: int, nt: int, a_rows: list, lda, b_t, nr: int) -> None:
    """One k tile of an MT x NT block: A tile r loaded from ``a_rows[r]``
    (rows ``lda`` bytes apart), B tile s from ``b_t`` + 64 s bytes (rows of NR
    words), and C tile (r, s) += A(r) B(s) (:func:`tile_ids`' registers)."""
    c_tile, a_tile, b_tile = tile_ids(mt, nt)
    op = instruction(fmt)
    for r in range(mt):
        _load(b, a_tile(r), a_rows[r], lda)
        for s in range(nt):
            if r == 0:
                _load(b, b_tile(s), b.gep(b_t, [i64(s * ROW_BYTES)], inbounds=True, source_etype=I8),
                      i64(nr * 4))
            _call(b, op, [ir.Constant(I8, c_tile(r, s)), ir.Constant(I8, a_tile(r)), ir.Constant(I8, b_tile(s))],
                  [I8, I8, I8])


def micro_kernel(module: ir.Module, fmt, mr: int, nr: int) -> ir.Function:
    """``void uk(i64 kc, ptr a, ptr b, ptr c, i64 ldc, i1 accumulate)``, as
    ``gemm_native.micro_kernel``: the MR x NR tile of C (f32 or s32, rows
    ``ldc`` apart) (+)= the packed A panel times the packed B panel over
    ``kc`` k (``ceil(kc / k_step)`` tiles of k).  C's tiles are loaded from C
    when ``accumulate``, else zeroed, and stored back at the end.  The tile
    configuration must be loaded (:func:`configure`)."""
    name = f"xlac.gemm.uk.{fmt.tag}.{mr}x{nr}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    mt, nt = mr // ROWS, nr // ROWS
    assert mt * ROWS == mr and nt * ROWS == nr and tiles_fit(mt, nt), (mr, nr)
    fn = ir.Function(module, ir.FunctionType(VOID, [I64, PTR, PTR, PTR, I64, I1]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    for arg, nm in zip(fn.args, ("kc", "a", "b", "c", "ldc", "accumulate")):
        arg.name = nm
    kc, a, bp, c, ldc, accumulate = fn.args
    c_tile, _, _ = tile_ids(mt, nt)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ldc_bytes = b.mul(ldc, i64(4))
    c_at = [[b.gep(c, [b.add(b.mul(ldc, i64(r * ROWS)), i64(s * ROWS))], inbounds=True, source_etype=I32)
             for s in range(nt)] for r in range(mt)]
    n_k = b.udiv(b.add(kc, i64(fmt.k_step - 1)), i64(fmt.k_step))
    load_c = fn.append_basic_block("load_c")
    zero_c = fn.append_basic_block("zero_c")
    loop = fn.append_basic_block("k")
    exit_ = fn.append_basic_block("store")
    b.cbranch(accumulate, load_c, zero_c)
    b.position_at_end(load_c)
    for r in range(mt):
        for s in range(nt):
            _load(b, c_tile(r, s), c_at[r][s], ldc_bytes)
    b.branch(loop)
    b.position_at_end(zero_c)
    for r in range(mt):
        for s in range(nt):
            _call(b, "tilezero", [ir.Constant(I8, c_tile(r, s))], [I8])
    b.branch(loop)
    b.position_at_end(loop)
    t = b.phi(I64, "t")
    t.add_incoming(i64(0), load_c)
    t.add_incoming(i64(0), zero_c)
    # A: tile t of the panel is MR rows of 64 bytes; B: 16 rows of NR words.
    a_t = b.gep(a, [b.mul(t, i64(mr * ROW_BYTES))], inbounds=True, source_etype=I8)
    b_t = b.gep(bp, [b.mul(t, i64(ROWS * nr * 4))], inbounds=True, source_etype=I8)
    tile_products(b, fmt, mt, nt, [b.gep(a_t, [i64(r * ROWS * ROW_BYTES)], inbounds=True, source_etype=I8)
                                   for r in range(mt)], i64(ROW_BYTES), b_t, nr)
    t_next = b.add(t, i64(1), flags=["nsw", "nuw"])
    t.add_incoming(t_next, b.block)
    b.cbranch(b.icmp_signed("<", t_next, n_k), loop, exit_)
    b.position_at_end(exit_)
    for r in range(mt):
        for s in range(nt):
            _store(b, c_tile(r, s), c_at[r][s], ldc_bytes)
    b.ret_void()
    return fn


# ---------------------------------------------------------------------------
# Packing A
# ---------------------------------------------------------------------------

def _masked_load(b, ptr, vty, n_valid, esize: int):
    """The first ``n_valid`` (i64, may exceed the width) lanes of ``vty`` at ``ptr``, zeros after."""
    width = vty.count
    lanes = ir.Constant(ir.VectorType(I64, width), list(range(width)))
    limit = b.insert_element(ir.Constant(ir.VectorType(I64, width), ir.Undefined), n_valid, ir.Constant(I32, 0))
    limit = b.shuffle_vector(limit, ir.Constant(limit.type, ir.Undefined),
                             ir.Constant(ir.VectorType(I32, width), [0] * width))
    mask = b.icmp_signed("<", lanes, limit)
    suffix = f"v{width}i{vty.element.width}"
    fn = intrinsic(b.module, f"llvm.masked.load.{suffix}.p0",
                   ir.FunctionType(vty, [PTR, I32, ir.VectorType(I1, width), vty]))
    return b.call(fn, [ptr, ir.Constant(I32, esize), mask, ir.Constant(vty, None)])


def pack_a(b: ir.IRBuilder, fmt, view, boff, lo, hi, total, inner0, kc, dst, width: int) -> None:
    """Pack the A micro-panels of rows [lo, hi) (``lo`` a multiple of
    ``width``, ``hi <= total``), k in [inner0, inner0 + kc), of ``view`` into
    ``dst``, tile-major: panel q at ``q * n_k * width * 64`` bytes, and in a
    panel, row i of k tile t at ``(t * width + i) * 64`` bytes, holding that
    row's ``k_step`` elements (zeros past ``kc`` and past the last row)."""
    spt = view.pt
    ety = types.memory_type(spt)
    esize = spt.byte_size
    step = fmt.k_step
    g_row, g_k = view.gr, view.gc
    n_k = b.udiv(b.add(kc, i64(step - 1)), i64(step))
    panel_bytes = b.mul(n_k, i64(width * ROW_BYTES))
    n_pan = b.sdiv(b.add(b.sub(hi, lo), i64(width - 1)), i64(width))
    vty = ir.VectorType(ety, step)
    zero = ir.Constant(vty, None)
    with Loop(b, 0, n_pan, 1, "ap", vectorize=False) as q:
        row0 = b.add(lo, b.mul(q, i64(width)))
        valid = imin(b, i64(width), b.sub(total, row0))
        pdst = b.gep(dst, [b.mul(q, panel_bytes)], inbounds=True, source_etype=I8)
        base = view.element_pointer(b, add(b, boff, g_row.offset(b, row0)))

        def out(t, i):
            return b.gep(pdst, [b.mul(b.add(b.mul(t, i64(width)), i), i64(ROW_BYTES))], inbounds=True,
                         source_etype=I8)
        if isinstance(g_k.stride, int) and g_k.stride == 1:
            # A row-major A: each tile row is one (masked at the end of K) vector copy.
            with Loop(b, 0, valid, 1, "ai", vectorize=False) as i:
                row = b.gep(base, [add(b, g_row.offset(b, i), inner0)], inbounds=True, source_etype=ety)
                with Loop(b, 0, n_k, 1, "at", vectorize=False) as t:
                    k0 = b.mul(t, i64(step))
                    src = b.gep(row, [k0], inbounds=True, source_etype=ety)
                    x = _masked_load(b, src, vty, b.sub(kc, k0), esize)
                    b.store(x, out(t, i), align=ROW_BYTES)
        elif isinstance(g_row.stride, int) and g_row.stride == 1:
            # A column-major A: whole k tiles of a full panel transposed in registers.
            with b.if_else(b.icmp_signed("==", valid, i64(width))) as (full, edge):
                with full:
                    t_full = b.udiv(kc, i64(step))
                    _pack_transposed(b, view, base, inner0, t_full, out, width, step)
                    _pack_elements(b, view, base, inner0, kc, t_full, n_k, valid, out, step)
                with edge:
                    _pack_elements(b, view, base, inner0, kc, i64(0), n_k, valid, out, step)
        else:
            _pack_elements(b, view, base, inner0, kc, i64(0), n_k, valid, out, step)
        # Rows past the last: zeros in every tile.
        with Loop(b, valid, i64(width), 1, "az", vectorize=False) as i:
            with Loop(b, 0, n_k, 1, "azt", vectorize=False) as t:
                b.store(zero, out(t, i), align=ROW_BYTES)


def _pack_transposed(b, view, base, inner0, t_full, out, width: int, step: int) -> None:
    """Whole k tiles [0, t_full) of a full panel of an A whose rows are
    unit-stride: per ``width`` k, ``width`` vector loads (one per k, the
    panel's rows) transposed in registers (``gemm.transpose_square``) into
    ``width`` k of every tile row.  (Element by element, ``A^T @ B`` of
    row-major 1024 x 1024 bf16 took 3.5 ms on one thread, ``A @ B`` 2.5 ms;
    transposed, 2.6 ms.)"""
    ety = types.memory_type(view.pt)
    vty = ir.VectorType(ety, width)
    with Loop(b, 0, t_full, 1, "atr", vectorize=False) as t:
        k0 = add(b, inner0, b.mul(t, i64(step)))
        for kb in range(0, step, width):
            rows = [b.load(b.gep(base, [view.gc.offset(b, add(b, k0, i64(kb + kk)))], inbounds=True,
                                 source_etype=ety), typ=vty, align=view.pt.byte_size) for kk in range(width)]
            for i, x in enumerate(transpose_square(b, rows, vty)):
                p = b.gep(out(t, i64(i)), [i64(kb)], inbounds=True, source_etype=ety)
                b.store(x, p, align=ROW_BYTES if kb == 0 else view.pt.byte_size * width)


def _pack_elements(b, view, base, inner0, kc, t_start, n_k, valid, out, step: int) -> None:
    """k tiles [t_start, n_k) of the panel's first ``valid`` rows, element by
    element through A's strides (zeros past ``kc``)."""
    ety = types.memory_type(view.pt)
    esize = view.pt.byte_size
    with Loop(b, 0, valid, 1, "ai", vectorize=False) as i:
        row = b.gep(base, [view.gr.offset(b, i)], inbounds=True, source_etype=ety)
        with Loop(b, t_start, n_k, 1, "at", vectorize=False) as t:
            dst_t = out(t, i)
            k0 = b.mul(t, i64(step))
            n = imin(b, i64(step), b.sub(kc, k0))
            with Loop(b, 0, i64(step), 1, "ak", vectorize=False) as kk:
                p = b.gep(dst_t, [kk], inbounds=True, source_etype=ety)
                b.store(ir.Constant(ety, 0), p, align=esize)
                with b.if_then(b.icmp_signed("<", kk, n)):
                    k = add(b, inner0, b.add(k0, kk))
                    x = b.load(b.gep(row, [view.gc.offset(b, k)], inbounds=True, source_etype=ety), typ=ety,
                               align=esize)
                    b.store(x, p, align=esize)
