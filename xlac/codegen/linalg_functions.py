"""The native routines under ``cholesky`` and ``triangular-solve``
(``kernels/linalg.py``) and jax's ``getrf`` (``kernels/lu_blocked.py``): the
unblocked factorisations, the substitution, the transposing copy and the
row interchanges, with every size a run-time argument.  They do not
depend on the program, so they are built once per machine as units of the
GEMM library (``gemm_library``: compiled on first use, kept in the disk
cache, linked into AOT objects) and a module only declares and calls them:
emitted per module they were ~125 ms of LLVM time in every program with a
cholesky or a triangular solve (the factorisation alone ~50 ms).

A :class:`LinalgVariant` is one routine for one element type:

* ``potrf(w, n)``: the upper Cholesky factor of the n x n row-major ``w`` in
  place (up-looking: row i loses ``conj(u[k, i]) * u[k, i:]`` for every row
  k above it, then is divided by the square root of its pivot); strict lower
  triangle zeroed; all NaN when a pivot's square root is NaN.
* ``trsm_{fwd,bwd}[_conj][_unit](w, t, m, nr, c0, c1, ldt)``: ``t x = w`` in
  place on columns [c0, c1) of the m x nr row-major ``w`` by forward (t
  lower) or back substitution; ``t`` m x m, its rows ``ldt`` elements apart
  (a diagonal block read in place), conjugated with ``conj``, unit diagonal
  with ``unit``.
* ``getrf_panel(w, k, nc, ld, ipiv, base, info)`` (f32/f64): LAPACK's
  unblocked LU with partial pivoting of the column panel whose transpose is
  the k x nc row-major ``w`` (``_build_getrf_panel``);
  ``laswp(w, ld, rows, ipiv, p0, p1)`` (f32/f64): LAPACK's row interchanges
  p0..p1-1 of the column-major matrix whose transpose is ``w``.
* ``transpose(dst, src, batch, rows, cols, ld_src, ld_dst)``:
  ``dst[e][c][r] = src[e][r][c]`` for ``batch`` matrices of rows x cols, src's
  rows ``ld_src`` elements apart and dst's ``ld_dst`` (the batch stride:
  ``rows * ld_src`` and ``cols * ld_dst``), in tiles a cache line square.

The inner loops are contiguous ``w[i, :] -= c * w[k, :]`` axpys, GROUP rows
per pass, and for real types a register-blocked block of BLOCK_ROWS rows
(``_update_block_rows``, the GEMM micro-kernel's shape); real multiply-adds
are explicit FMAs, so every loop rounds alike.
"""
from __future__ import annotations

import math
import re
from contextlib import contextmanager
from dataclasses import dataclass

from llvmlite import ir

from ..shape import PrimitiveType as PT
from . import types
from .emission import context_of
from .ir_array import I64, i64
from .loops import dyn_range, for_range_dynamic, loop_hints, parallel_loops
from .scalar_ops import declare_libm
from .target import host_vector_bits

__all__ = ["LinalgVariant", "ROUTINES", "parse_tag", "trsm_routine"]

I1 = ir.IntType(1)
PTR = ir.PointerType()
#: Fast-math flags of the multiply-adds: LLVM may fuse them into FMAs.
_CONTRACT = ("contract",)
#: Rows of the matrix subtracted from one row in one pass (``_subtract_rows``).
GROUP = 4
#: Rows of a triangular-solve block (real types): rows solved together
#: against the rows solved before them (``_update_block_rows``).
BLOCK_ROWS = 4
#: Vector registers per block row in ``_update_block_rows``: with
#: BLOCK_ROWS, 8 accumulators (AVX-512 has 32 registers, AVX2 16).
VECTORS = 2
#: A cache line: the widest vector the routines use (``_register_lanes``),
#: and the alignment of the rows' vectorised parts.
VECTOR_BYTES = 64
#: Rows of an LU panel factored together before the rows below lose them (``getrf_panel``).
PANEL_GROUP = 8
#: Rows of one batch of a column interchange (``_swap_columns``).
SWAP_ROWS = 8
#: Edge of the tiles of a transposing copy (8 doubles: one cache line).
TILE = 8


# ---------------------------------------------------------------------------
# real or complex arithmetic on a dense buffer
# ---------------------------------------------------------------------------

class _Arith:
    """Elements of ``pt`` in a dense buffer, as a value (real) or a (re, im)
    pair (complex, read and written as two component scalars, so loops over
    them vectorise as interleaved accesses)."""

    def __init__(self, b: ir.IRBuilder, pt: PT):
        self.b, self.pt = b, pt
        self.complex = pt.is_complex
        self.part = pt.component_type if self.complex else pt
        self.ty = types.memory_type(self.part)

    def _at(self, base, e, k: int = 0):
        b = self.b
        if self.complex:
            e = b.add(b.mul(e, i64(2)), i64(k)) if k else b.mul(e, i64(2))
        return b.gep(base, [e], inbounds=True, source_etype=self.ty)

    def _tag(self, access):
        """Put ``access`` in the open parallel loop's access group (if any)."""
        groups = context_of(self.b.module).access_groups
        if groups:
            access.set_metadata("llvm.access.group", groups[-1])
        return access

    def load(self, base, e):
        b, align = self.b, self.part.byte_size
        if self.complex:
            return (self._tag(b.load(self._at(base, e), typ=self.ty, align=align)),
                    self._tag(b.load(self._at(base, e, 1), typ=self.ty, align=align)))
        return self._tag(b.load(self._at(base, e), typ=self.ty, align=align))

    def store(self, base, e, v) -> None:
        b, align = self.b, self.part.byte_size
        if self.complex:
            self._tag(b.store(v[0], self._at(base, e), align=align))
            self._tag(b.store(v[1], self._at(base, e, 1), align=align))
        else:
            self._tag(b.store(v, self._at(base, e), align=align))

    def const(self, value: float):
        c = ir.Constant(self.ty, value)
        return (c, ir.Constant(self.ty, 0.0)) if self.complex else c

    def real(self, v):
        return v[0] if self.complex else v

    def from_real(self, r):
        return (r, ir.Constant(self.ty, 0.0)) if self.complex else r

    def conj(self, v, yes: bool = True):
        return (v[0], self.b.fneg(v[1])) if self.complex and yes else v

    def sub_mul(self, w, c, x):
        """``w - c * x``: one FMA for real types (the same rounding in every
        loop and compilation: vectorised or not, JIT or AOT); the complex
        multiply-adds may become FMAs."""
        b, f = self.b, _CONTRACT
        if not self.complex:
            return b.fma(b.fneg(c), x, w)
        (wr, wi), (cr, ci), (xr, xi) = w, c, x
        return (b.fsub(wr, b.fsub(b.fmul(cr, xr, flags=f), b.fmul(ci, xi, flags=f), flags=f), flags=f),
                b.fsub(wi, b.fadd(b.fmul(cr, xi, flags=f), b.fmul(ci, xr, flags=f), flags=f), flags=f))

    def div_real(self, v, r):
        b = self.b
        return (b.fdiv(v[0], r), b.fdiv(v[1], r)) if self.complex else b.fdiv(v, r)

    def div(self, v, d):
        """``v / d``; complex by the formula of ``scalar_ops``' divide:
        ``((a p + b q) + (b p - a q) i) / (p^2 + q^2)``."""
        b = self.b
        if not self.complex:
            return b.fdiv(v, d)
        (a, bb), (p, q) = v, d
        den = b.fadd(b.fmul(p, p), b.fmul(q, q))
        return (b.fdiv(b.fadd(b.fmul(a, p), b.fmul(bb, q)), den),
                b.fdiv(b.fsub(b.fmul(bb, p), b.fmul(a, q)), den))

    def sqrt(self, r):
        fn = declare_libm(self.b.module, f"llvm.sqrt.{'f64' if self.part is PT.F64 else 'f32'}",
                          ir.FunctionType(self.ty, [self.ty]))
        return self.b.call(fn, [r])


@contextmanager
def _parallel_range(b: ir.IRBuilder, lo, hi, name: str):
    """``for (j = lo; j < hi; ++j)``, ``lo < hi``, whose iterations the
    loads and stores of ``_Arith`` in it do not depend on each other through
    (one row updated from another): LLVM vectorises it without overlap checks."""
    with parallel_loops(b.module) as loop_id:
        # Vectorised, not unrolled nor interleaved: the same speed, less code to compile.
        with for_range_dynamic(b, lo, hi, name, loop_id=loop_hints(b.module, base=loop_id)) as j:
            yield j


def _subtract_rows(b: ir.IRBuilder, ar: _Arith, w, wi, count, row_at, lo, hi) -> None:
    """``w[wi + j] -= sum(c_r * w[base_r + j] for r < count)`` for j in [lo, hi)
    (lo < hi), ``(c_r, base_r) = row_at(r)``: GROUP rows at a time, so each
    pass over the destination row takes GROUP multiply-adds per element it
    loads and stores (the single-row axpy is bound by its loads and stores)."""
    groups = b.udiv(count, i64(GROUP))
    with dyn_range(b, i64(0), groups, name="rows.g") as g:
        terms = [row_at(b.add(b.mul(g, i64(GROUP)), i64(q))) for q in range(GROUP)]
        with _parallel_range(b, lo, hi, "rows.j") as j:
            x = b.add(wi, j)
            acc = ar.load(w, x)
            for c, base in terms:
                acc = ar.sub_mul(acc, c, ar.load(w, b.add(base, j)))
            ar.store(w, x, acc)
    with dyn_range(b, b.mul(groups, i64(GROUP)), count, name="rows.r") as r:
        c, base = row_at(r)
        with _parallel_range(b, lo, hi, "rows.k") as j:
            x = b.add(wi, j)
            ar.store(w, x, ar.sub_mul(ar.load(w, x), c, ar.load(w, b.add(base, j))))




def _function(module: ir.Module, name: str, args: list, linkage: str, build) -> ir.Function:
    """``void name(args)`` of ``module``, emitted by ``build(b, ab, fn_args)``
    (``ab``: the allocas)."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), args), name)
    fn.linkage = linkage
    fn.attributes.add("nounwind")
    ab = ir.IRBuilder(fn.append_basic_block("allocas"))
    body = fn.append_basic_block("body")
    ab.branch(body)
    ab.position_at_start(ab.block)
    b = ir.IRBuilder(body)
    build(b, ab, fn.args)
    b.ret_void()
    return fn


def _element(b, base, offset, pt: PT):
    return b.gep(base, [offset], inbounds=True, source_etype=types.memory_type(pt))


def _min(b: ir.IRBuilder, v, limit):
    limit = i64(limit) if isinstance(limit, int) else limit
    return b.select(b.icmp_signed("<", v, limit), v, limit)



# ---------------------------------------------------------------------------
# transposing copy
# ---------------------------------------------------------------------------

def _transpose_vectors(b: ir.IRBuilder, vecs: list) -> list:
    """The n x n matrix whose rows are the n vectors ``vecs`` (n a power of
    two), transposed: log2(n) rounds of interleaving row k with row k + n/2
    (their low halves into row 2k, their high halves into row 2k+1)."""
    n = len(vecs)
    i32 = ir.IntType(32)
    lo = ir.Constant(ir.VectorType(i32, n), [q // 2 + (n if q % 2 else 0) for q in range(n)])
    hi = ir.Constant(ir.VectorType(i32, n), [n // 2 + q // 2 + (n if q % 2 else 0) for q in range(n)])
    for _ in range(n.bit_length() - 1):
        out = []
        for k in range(n // 2):
            out += [b.shuffle_vector(vecs[k], vecs[k + n // 2], lo), b.shuffle_vector(vecs[k], vecs[k + n // 2], hi)]
        vecs = out
    return vecs


def _build_transpose(module: ir.Module, pt: PT, name: str, linkage: str) -> None:
    """``transpose(dst, src, batch, rows, cols, ld_src, ld_dst)``:
    ``dst[e][c][r] = src[e][r][c]``, in TILE x TILE tiles so that the lines
    of both buffers are used whole while they are in L1 (an
    element-at-a-time transposing copy of a 512x512 f64 matrix, a 4 KiB
    stride between reads, misses L1 and L2 at every element: 2.5 ms).  Real
    types: tiles of a cache line's elements square, each in square blocks
    of the host's vector registers (one with AVX-512; with AVX2, 8 x 8 f32
    or 4 x 4 f64): a row of vector loads, shuffles in registers and a row of
    vector stores; the strips at
    the right and bottom edges go element by element.  The row strides let a
    task move its own block of rows (``kernels/linalg.py`` splits the copies
    of a right-side solve over the thread pool)."""
    def build(b, ab, args):
        dst, src, batch, rows, cols, lds, ldd = args
        ty = types.memory_type(pt)
        lanes = TILE if pt.is_complex else max(TILE, VECTOR_BYTES // pt.byte_size)   # a cache line
        tile = i64(lanes)
        whole_rows = b.mul(b.udiv(rows, tile), tile)
        whole_cols = b.mul(b.udiv(cols, tile), tile)

        def move(d, s, i, j):
            v = b.load(_element(b, s, b.add(b.mul(i, lds), j), pt), typ=ty)
            b.store(v, _element(b, d, b.add(b.mul(j, ldd), i), pt))

        with dyn_range(b, i64(0), batch, name="tr.e") as e:
            d = _element(b, dst, b.mul(e, b.mul(cols, ldd)), pt)
            s = _element(b, src, b.mul(e, b.mul(rows, lds)), pt)
            if pt.is_complex:               # no vectors of pairs: every tile element by element
                with dyn_range(b, i64(0), rows, step=tile, name="tr.r") as r0:
                    r1 = _min(b, b.add(r0, tile), rows)
                    with dyn_range(b, i64(0), cols, step=tile, name="tr.c") as c0:
                        c1 = _min(b, b.add(c0, tile), cols)
                        with dyn_range(b, r0, r1, name="tr.i") as i:
                            with dyn_range(b, c0, c1, name="tr.j") as j:
                                move(d, s, i, j)
                return
            sub = min(lanes, _register_lanes(pt))   # (16 rows of 64 bytes: 32 of AVX2's 16 registers)
            sty = ir.VectorType(ty, sub)
            with dyn_range(b, i64(0), whole_rows, step=tile, name="tr.r") as r0:
                with dyn_range(b, i64(0), whole_cols, step=tile, name="tr.c") as c0:
                    for bi in range(0, lanes, sub):
                        for bj in range(0, lanes, sub):
                            ri, cj = b.add(r0, i64(bi)), b.add(c0, i64(bj))
                            vecs = [b.load(_element(b, s, b.add(b.mul(b.add(ri, i64(q)), lds), cj), pt), typ=sty,
                                           align=pt.byte_size) for q in range(sub)]
                            for q, v in enumerate(_transpose_vectors(b, vecs)):
                                b.store(v, _element(b, d, b.add(b.mul(b.add(cj, i64(q)), ldd), ri), pt),
                                        align=pt.byte_size)
            with dyn_range(b, whole_cols, cols, name="tr.rc") as j:       # right strip, all rows
                with dyn_range(b, i64(0), rows, name="tr.ri") as i:
                    move(d, s, i, j)
            with dyn_range(b, whole_rows, rows, name="tr.bi") as i:       # bottom strip
                with dyn_range(b, i64(0), whole_cols, name="tr.bj") as j:
                    move(d, s, i, j)
    _function(module, name, [PTR, PTR, I64, I64, I64, I64, I64], linkage, build)


# ---------------------------------------------------------------------------
# cholesky
# ---------------------------------------------------------------------------

def _build_potrf(module: ir.Module, pt: PT, name: str, linkage: str) -> None:
    """``potrf(w, n, ld)``: the upper Cholesky factor of the n x n (n >= 1)
    matrix at ``w`` (row-major, rows ``ld`` elements apart), in place (upper
    triangle read; strict lower triangle zeroed); all NaN when a pivot's
    square root is NaN."""
    def build(b, ab, args):
        w, n, ld = args
        ar = _Arith(b, pt)
        failed = ab.alloca(I1, name="chol.failed")
        b.store(ir.Constant(I1, 0), failed)

        def u_at(k, i):
            return ar.conj(ar.load(w, b.add(b.mul(k, ld), i)))

        def factor_row(i, first, count):
            """Row i of u: the rows ``first + r`` (r < count) above it not yet
            subtracted, then the square root of its pivot.  Real types work
            from the vector boundary at or left of the diagonal: the
            elements left of it are the strict lower triangle (zeroed below),
            and whole vectors leave the vectorised loops no scalar remainder."""
            row_i = b.mul(i, ld)
            lo = i if pt.is_complex else b.and_(i, i64(-(VECTOR_BYTES // pt.byte_size)))
            with b.if_then(b.icmp_signed(">", count, i64(0))):
                _subtract_rows(b, ar, w, row_i, count,
                               lambda r: (u_at(b.add(first, r), i), b.mul(b.add(first, r), ld)), lo, n)
            ii = b.add(row_i, i)
            root = ar.sqrt(ar.real(ar.load(w, ii)))
            b.store(b.or_(b.load(failed), b.fcmp_unordered("uno", root, root)), failed)
            with dyn_range(b, b.add(i, i64(1)) if pt.is_complex else lo, n, name="chol.j") as j:
                e = b.add(row_i, j)
                ar.store(w, e, ar.div_real(ar.load(w, e), root))
            ar.store(w, ii, ar.from_real(root))

        # u[i, i:] = a[i, i:] - sum_k conj(u[k, i]) u[k, i:], divided by the root of
        # its pivot.  Real types: BLOCK_ROWS rows lose the rows above them at once
        # (over columns i0:, the strict lower triangle is never read and is zeroed
        # below), then their own triangle row by row.
        blocked = i64(0)
        if not pt.is_complex:
            blocked = b.mul(b.udiv(n, i64(BLOCK_ROWS)), i64(BLOCK_ROWS))
            with dyn_range(b, i64(0), blocked, step=BLOCK_ROWS, name="chol.b") as i0:
                # (from the vector block boundary at or left of i0: see ``factor_row``)
                c0 = b.and_(i0, i64(-(VECTOR_BYTES // pt.byte_size * VECTORS)))
                _update_block_rows(b, ab, pt, w, lambda i, k: ar.load(w, b.add(b.mul(k, ld), i)), ld,
                                   i0, i0, lambda r: r, c0, n)
                with dyn_range(b, i64(0), i64(BLOCK_ROWS), name="chol.q") as q:
                    factor_row(b.add(i0, q), i0, q)
        with dyn_range(b, blocked, n, name="chol.i") as i:
            factor_row(i, i64(0), i)
        zero, nan = ar.const(0.0), ar.const(math.nan)
        with dyn_range(b, i64(1), n, name="chol.z") as i:
            with dyn_range(b, i64(0), i, name="chol.zj") as j:
                ar.store(w, b.add(b.mul(i, ld), j), zero)
        with b.if_then(b.load(failed)):
            with dyn_range(b, i64(0), n, name="chol.nan") as i:
                with dyn_range(b, i64(0), n, name="chol.nanj") as j:
                    ar.store(w, b.add(b.mul(i, ld), j), nan)
    _function(module, name, [PTR, I64, I64], linkage, build)


def _build_subtract_tile(module: ir.Module, pt: PT, name: str, linkage: str) -> None:
    """``subtract_tile(ctx, batch, r0, c0, rows, cols)``, a GEMM library
    epilogue (``gemm_library.EPILOGUE_TYPE``): ``w[r, c] -= t[r, c]`` over the
    finished tile, ``ctx`` an i64 array ``{t, ld_t, w, ld_w}`` (``batch``
    unused): the blocked cholesky's panel update, ``a - u^T u``, applied tile
    by tile while the product is in L1."""
    def build(b, ab, args):
        ctx, _, r0, c0, rows, cols = args
        field = [b.load(b.gep(ctx, [i64(k)], source_etype=I64), typ=I64) for k in range(4)]
        t, ldt, w, ldw = b.inttoptr(field[0], PTR), field[1], b.inttoptr(field[2], PTR), field[3]
        ar = _Arith(b, pt)
        with dyn_range(b, i64(0), rows, name="st.r") as r:
            row = b.add(r0, r)
            tr, wr = b.add(b.mul(row, ldt), c0), b.add(b.mul(row, ldw), c0)
            with _parallel_range(b, i64(0), cols, "st.c") as c:
                x = b.add(wr, c)
                ar.store(w, x, b.fsub(ar.load(w, x), ar.load(t, b.add(tr, c))))
    _function(module, name, [PTR, I64, I64, I64, I64, I64], linkage, build)


# ---------------------------------------------------------------------------
# triangular-solve
# ---------------------------------------------------------------------------

def _splat(b: ir.IRBuilder, value, vty: ir.VectorType):
    v = b.insert_element(ir.Constant(vty, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
    return b.shuffle_vector(v, ir.Constant(vty, ir.Undefined),
                            ir.Constant(ir.VectorType(ir.IntType(32), vty.count), [0] * vty.count))


def _register_lanes(pt: PT) -> int:
    """Elements of ``pt`` in one of the host's vector registers (at most
    VECTOR_BYTES): the register blocks' vectors.  A wider vector is split
    into registers by the back end: on AVX2, 4 x 2 of 64 bytes were 16
    accumulators in 16 registers, spilled in the triangular solve's inner
    loop (docs/linalg.md)."""
    return min(VECTOR_BYTES, host_vector_bits() // 8) // pt.byte_size


def _update_block_rows(b: ir.IRBuilder, ab: ir.IRBuilder, pt: PT, w, coef, nr, first, done, row, c0,
                       c1, vectors: int = VECTORS, finish=None):
    """``w[i_q, j] -= sum(coef(i_q, row(r)) * w[row(r), j] for r < done)`` for the
    BLOCK_ROWS rows ``i_q = row(first + q)`` and j in [c0, c1): the substitution's bulk as a
    register-blocked GEMM micro-kernel (BLOCK_ROWS x ``vectors`` accumulators,
    each step one load of row(r) per vector and one multiply-add per
    accumulator, where ``_subtract_rows`` loads and stores the destination
    row every GROUP rows), then the columns short of a whole vector block by
    ``_subtract_rows``.  ``finish(rows, accs)``, if given, works on a vector
    block's accumulators (allocas, ``accs[q][v]``) before they are stored
    (``rows``: the i_q).  Returns where the whole vector blocks end."""
    ty = types.memory_type(pt)
    lanes = _register_lanes(pt)
    vty = ir.VectorType(ty, lanes)
    width = lanes * vectors
    align = pt.byte_size
    fma = declare_libm(b.module, f"llvm.fma.v{lanes}{'f64' if pt is PT.F64 else 'f32'}",
                       ir.FunctionType(vty, [vty] * 3))
    rows = [row(b.add(first, i64(q))) for q in range(BLOCK_ROWS)]
    accs = [[ab.alloca(vty, name=f"trsm.acc{q}{v}") for v in range(vectors)] for q in range(len(rows))]
    bases = [b.mul(i, nr) for i in rows]
    vec_end = b.add(c0, b.mul(b.udiv(b.sub(c1, c0), i64(width)), i64(width)))

    def at(base, e):
        return b.gep(base, [e], inbounds=True, source_etype=ty)

    with dyn_range(b, c0, vec_end, step=width, name="trsm.vj") as j:
        for q, base in enumerate(bases):
            for v in range(vectors):
                b.store(b.load(at(w, b.add(base, b.add(j, i64(v * lanes)))), typ=vty, align=align), accs[q][v])
        with dyn_range(b, i64(0), done, name="trsm.vr") as r:
            k = row(r)
            src = b.add(b.mul(k, nr), j)
            xs = [b.load(at(w, b.add(src, i64(v * lanes))), typ=vty, align=align) for v in range(vectors)]
            for q, i in enumerate(rows):
                c = _splat(b, b.fneg(coef(i, k)), vty)
                for v in range(vectors):
                    b.store(b.call(fma, [c, xs[v], b.load(accs[q][v])]), accs[q][v])
        if finish is not None:
            finish(rows, accs)
        for q, base in enumerate(bases):
            for v in range(vectors):
                b.store(b.load(accs[q][v]), at(w, b.add(base, b.add(j, i64(v * lanes)))), align=align)
    ar = _Arith(b, pt)
    with b.if_then(b.and_(b.icmp_signed("<", vec_end, c1), b.icmp_signed(">", done, i64(0)))):
        with dyn_range(b, i64(0), i64(BLOCK_ROWS), name="trsm.tq") as q:      # a loop: less code to compile
            i = row(b.add(first, q))
            _subtract_rows(b, ar, w, b.mul(i, nr), done, lambda r: (coef(i, row(r)), b.mul(row(r), nr)), vec_end, c1)
    return vec_end


def _trsm_vectors() -> int:
    """Vectors per block row of the substitution's bulk: VECTORS, or twice
    as many with 32 vector registers (AVX-512: BLOCK_ROWS x 4 accumulators,
    four FMAs per coefficient loaded instead of two)."""
    return 2 * VECTORS if host_vector_bits() >= 512 else VECTORS


def _build_trsm(module: ir.Module, pt: PT, forward: bool, conj: bool, unit: bool, name: str, linkage: str) -> None:
    """``trsm(w, t, m, nr, c0, c1, ldt)``: solve ``t x = w`` in place on columns
    [c0, c1) (c0 < c1) of the m x nr row-major ``w``, ``t`` m x m with rows
    ``ldt`` elements apart,
    lower (forward substitution) or upper; t's entries conjugated with
    ``conj``, its diagonal taken as ones with ``unit``.  Real types go
    BLOCK_ROWS rows at a time: the rows solved before the block by
    ``_update_block_rows``, then the block's own triangle row by row."""
    def build(b, ab, args):
        w, t, m, nr, c0, c1, ldt = args
        ar = _Arith(b, pt)

        def t_at(i, k):
            return ar.conj(ar.load(t, b.add(b.mul(i, ldt), k)), conj)

        def row(step):
            return step if forward else b.sub(b.sub(m, i64(1)), step)

        def solve_row(s, first, count, lo=c0):
            """Row ``row(s)`` loses rows ``row(first + r)``, r < count, then
            is divided by its pivot (columns [lo, c1))."""
            i = row(s)
            wi = b.mul(i, nr)
            with b.if_then(b.icmp_signed(">", count, i64(0))):
                _subtract_rows(b, ar, w, wi, count, lambda r: (t_at(i, row(b.add(first, r))),
                                                               b.mul(row(b.add(first, r)), nr)), lo, c1)
            if not unit:
                d = t_at(i, i)
                with _parallel_range(b, lo, c1, "trsm.d") as j:
                    x = b.add(wi, j)
                    ar.store(w, x, ar.div(ar.load(w, x), d))

        def solve_block(rows, accs):
            """The block's own triangle on a vector block, in registers: row
            q loses rows 0..q-1 (in that order, one FMA each, as
            ``solve_row``), then is divided by its pivot."""
            vty = accs[0][0].allocated_type
            fma = declare_libm(b.module, f"llvm.fma.v{vty.count}{'f64' if pt is PT.F64 else 'f32'}",
                               ir.FunctionType(vty, [vty] * 3))
            for q, i in enumerate(rows):
                for p in range(q):
                    c = _splat(b, b.fneg(t_at(i, rows[p])), vty)
                    for v, acc in enumerate(accs[q]):
                        b.store(b.call(fma, [c, b.load(accs[p][v]), b.load(acc)]), acc)
                if not unit:
                    d = _splat(b, t_at(i, i), vty)
                    for acc in accs[q]:
                        b.store(b.fdiv(b.load(acc), d), acc)

        blocked = i64(0)
        if not pt.is_complex:
            blocked = b.mul(b.udiv(m, i64(BLOCK_ROWS)), i64(BLOCK_ROWS))
            with dyn_range(b, i64(0), blocked, step=BLOCK_ROWS, name="trsm.b") as s0:
                vec_end = _update_block_rows(b, ab, pt, w, t_at, nr, s0, s0, row, c0, c1, _trsm_vectors(),
                                             finish=solve_block)
                with b.if_then(b.icmp_signed("<", vec_end, c1)):
                    with dyn_range(b, i64(0), i64(BLOCK_ROWS), name="trsm.q") as q:
                        solve_row(b.add(s0, q), s0, q, vec_end)
        with dyn_range(b, blocked, m, name="trsm.s") as s:
            solve_row(s, i64(0), s)
    _function(module, name, [PTR, PTR, I64, I64, I64, I64, I64], linkage, build)




# ---------------------------------------------------------------------------
# LU (getrf) on the transposed matrix
# ---------------------------------------------------------------------------

def _fabs(b: ir.IRBuilder, pt: PT, v):
    ty = types.memory_type(pt)
    return b.call(declare_libm(b.module, f"llvm.fabs.{'f64' if pt is PT.F64 else 'f32'}", ir.FunctionType(ty, [ty])),
                  [v])


def _first_of_largest(b: ir.IRBuilder, pt: PT, row, lo, hi):
    """The first c in [lo, hi) (lo < hi) of largest ``|row[c]|``, as BLAS's
    ``i?amax``: ``row[lo]`` when it is NaN, else NaNs never count.  Two
    vector passes over the row: the largest magnitude (a NaN lane never
    compares greater), then the first position holding it (a lane mask and
    its trailing zeros): one element after another, a 512-element row took
    ~3 cycles an element."""
    ty = types.memory_type(pt)
    lanes = VECTOR_BYTES // pt.byte_size
    vty = ir.VectorType(ty, lanes)
    bits = ir.IntType(lanes)
    width = "f64" if pt is PT.F64 else "f32"
    fabs_v = declare_libm(b.module, f"llvm.fabs.v{lanes}{width}", ir.FunctionType(vty, [vty]))
    reduce = declare_libm(b.module, f"llvm.vector.reduce.fmax.v{lanes}{width}", ir.FunctionType(ty, [vty]))
    cttz = declare_libm(b.module, f"llvm.cttz.i{lanes}", ir.FunctionType(bits, [bits, I1]))

    def vec(c):
        return b.call(fabs_v, [b.load(_element(b, row, c, pt), typ=vty, align=pt.byte_size)])

    def one(c):
        return _fabs(b, pt, b.load(_element(b, row, c, pt), typ=ty))

    def larger(x, y):
        return b.select(b.fcmp_ordered(">", x, y), x, y)

    fn = b.function
    ab = ir.IRBuilder(fn.entry_basic_block)
    ab.position_at_start(fn.entry_basic_block)
    acc = ab.alloca(vty, name="amax.acc")
    largest = ab.alloca(ty, name="amax.max")
    found = ab.alloca(I64, name="amax.at")
    head = one(lo)
    vec_end = b.add(lo, b.mul(b.udiv(b.sub(hi, lo), i64(lanes)), i64(lanes)))
    b.store(ir.Constant(vty, [0.0] * lanes), acc)
    with dyn_range(b, lo, vec_end, step=lanes, name="amax.v") as c:
        b.store(larger(vec(c), b.load(acc)), acc)
    b.store(b.call(reduce, [b.load(acc)]), largest)
    with dyn_range(b, vec_end, hi, name="amax.s") as c:
        b.store(larger(one(c), b.load(largest)), largest)
    m = b.load(largest)
    is_nan = b.fcmp_unordered("uno", head, head)
    b.store(b.select(is_nan, lo, i64(-1)), found)
    splat = _splat(b, m, vty)
    with dyn_range(b, lo, vec_end, step=lanes, name="amax.f") as c:
        with b.if_then(b.icmp_signed("<", b.load(found), i64(0))):
            mask = b.bitcast(b.fcmp_ordered("==", vec(c), splat), bits)
            with b.if_then(b.icmp_unsigned("!=", mask, ir.Constant(bits, 0))):
                b.store(b.add(c, b.zext(b.call(cttz, [mask, ir.Constant(I1, 1)]), I64)), found)
    with dyn_range(b, vec_end, hi, name="amax.t") as c:
        with b.if_then(b.icmp_signed("<", b.load(found), i64(0))):
            with b.if_then(b.fcmp_ordered("==", one(c), m)):
                b.store(c, found)
    return b.load(found)


def _swap_columns(b: ir.IRBuilder, ar: "_Arith", w, ld, rows, x, y) -> None:
    """``w[r, x] <-> w[r, y]`` for r in [0, rows): SWAP_ROWS rows at a time,
    their loads before their stores (rows a power-of-two stride apart: a
    load right after a store 4 KiB away waits for it, 4K aliasing)."""
    groups = b.udiv(rows, i64(SWAP_ROWS))
    with dyn_range(b, i64(0), groups, name="swap.g") as g:
        at = [(b.add(b.mul(r, ld), x), b.add(b.mul(r, ld), y))
              for r in (b.add(b.mul(g, i64(SWAP_ROWS)), i64(q)) for q in range(SWAP_ROWS))]
        values = [(ar.load(w, ex), ar.load(w, ey)) for ex, ey in at]
        for (ex, ey), (vx, vy) in zip(at, values):
            ar.store(w, ex, vy)
            ar.store(w, ey, vx)
    with dyn_range(b, b.mul(groups, i64(SWAP_ROWS)), rows, name="swap.r") as r:
        ex, ey = b.add(b.mul(r, ld), x), b.add(b.mul(r, ld), y)
        vx, vy = ar.load(w, ex), ar.load(w, ey)
        ar.store(w, ex, vy)
        ar.store(w, ey, vx)


def _build_getrf_panel(module: ir.Module, pt: PT, name: str, linkage: str) -> None:
    """``getrf_panel(w, k, nc, ld, ipiv, base, info)``: LAPACK's unblocked LU
    with partial pivoting of the nc x k column panel whose transpose is the
    k x nc row-major ``w`` (rows ``ld`` apart, k <= nc): row i of ``w`` is
    column i of the panel, so the pivot search runs along a row and a row
    interchange of the panel is an interchange of two columns of ``w`` (in
    all k rows).  Right-looking in groups of PANEL_GROUP rows: each row of
    the group loses the group's rows above it (``w[i, l+1:] -= w[i, l]
    w[l, l+1:]``), then takes its pivot: the FIRST element of largest
    magnitude in ``w[i, i:]`` (``_first_of_largest``), swapped into column
    i, and ``w[i, i+1:]`` (L's column) is scaled by its reciprocal (divided
    when it is below the smallest normal number, as LAPACK).  A zero pivot
    scales nothing and sets ``*info = base + i + 1`` if ``*info`` is 0.
    ``ipiv[i] = base + (pivot column) + 1`` (s32, 1-based).  Then every row
    below the group loses the group at once: its coefficients (the group's
    columns, a small triangle solved in registers) and one pass over the
    rest of the row with PANEL_GROUP multiply-adds per element loaded and
    stored."""
    G = PANEL_GROUP

    def build(b, ab, args):
        w, k, nc, ld, ipiv, base, info = args
        ar = _Arith(b, pt)
        ty = ar.ty
        i32 = ir.IntType(32)
        sfmin = ir.Constant(ty, 2.0 ** (-1022 if pt is PT.F64 else -126))     # LAPACK's ?lamch('S')

        def at(i, c):
            return b.add(b.mul(i, ld), c)

        def axpys(i, lo, hi, end):
            """Row i loses rows l in [lo, hi) in order over columns (l, end)."""
            with dyn_range(b, lo, hi, name="lu.l") as l:
                c = ar.load(w, at(i, l))
                start = b.add(l, i64(1))
                with b.if_then(b.icmp_signed("<", start, end)):
                    with _parallel_range(b, start, end, "lu.ax") as j:
                        x = at(i, j)
                        ar.store(w, x, ar.sub_mul(ar.load(w, x), c, ar.load(w, at(l, j))))

        def pivot(i):
            p = _first_of_largest(b, pt, _element(b, w, b.mul(i, ld), pt), i, nc)
            b.store(b.trunc(b.add(b.add(base, p), i64(1)), i32), b.gep(ipiv, [i], inbounds=True, source_etype=i32))
            value = ar.load(w, at(i, p))
            with b.if_else(b.fcmp_unordered("!=", value, ir.Constant(ty, 0.0))) as (nonzero, zero):
                with nonzero:
                    with b.if_then(b.icmp_signed("!=", p, i)):
                        _swap_columns(b, ar, w, ld, k, i, p)
                    start = b.add(i, i64(1))
                    with b.if_then(b.icmp_signed("<", start, nc)):
                        normal = b.fcmp_ordered(">=", _fabs(b, pt, value), sfmin)
                        with b.if_else(normal) as (by_reciprocal, by_division):
                            with by_reciprocal:
                                r = b.fdiv(ir.Constant(ty, 1.0), value)
                                with _parallel_range(b, start, nc, "lu.scale") as j:
                                    x = at(i, j)
                                    ar.store(w, x, b.fmul(ar.load(w, x), r))
                            with by_division:
                                with _parallel_range(b, start, nc, "lu.div") as j:
                                    x = at(i, j)
                                    ar.store(w, x, b.fdiv(ar.load(w, x), value))
                with zero:
                    first = b.icmp_signed("==", b.load(info, typ=i32), ir.Constant(i32, 0))
                    with b.if_then(first):
                        b.store(b.trunc(b.add(b.add(base, i), i64(1)), i32), info)

        def whole_group(i0, end):
            """Rows [end, k) lose the G rows from i0 (end = i0 + G)."""
            lij = {(t, u): ar.load(w, at(b.add(i0, i64(t)), b.add(i0, i64(u))))
                   for t in range(G) for u in range(t + 1, G)}
            with dyn_range(b, end, k, name="lu.q") as q:
                c = [ar.load(w, at(q, b.add(i0, i64(t)))) for t in range(G)]
                for t in range(G):
                    for u in range(t + 1, G):
                        c[u] = ar.sub_mul(c[u], c[t], lij[(t, u)])
                for t in range(1, G):
                    ar.store(w, at(q, b.add(i0, i64(t))), c[t])
                with b.if_then(b.icmp_signed("<", end, nc)):
                    with _parallel_range(b, end, nc, "lu.pass") as j:
                        x = at(q, j)
                        acc = ar.load(w, x)
                        for t in range(G):
                            acc = ar.sub_mul(acc, c[t], ar.load(w, at(b.add(i0, i64(t)), j)))
                        ar.store(w, x, acc)

        def part_group(i0, end):
            """Rows [end, k) lose the rows [i0, end) (fewer than G)."""
            with dyn_range(b, end, k, name="lu.pq") as q:
                axpys(q, i0, end, end)
                with b.if_then(b.icmp_signed("<", end, nc)):
                    _subtract_rows(b, ar, w, b.mul(q, ld), b.sub(end, i0),
                                   lambda r: (ar.load(w, at(q, b.add(i0, r))), b.mul(b.add(i0, r), ld)), end, nc)

        with dyn_range(b, i64(0), k, step=G, name="lu.g") as i0:
            end = _min(b, b.add(i0, i64(G)), k)
            with dyn_range(b, i0, end, name="lu.i") as i:
                axpys(i, i0, i, nc)
                pivot(i)
            with b.if_then(b.icmp_signed("<", end, k)):
                with b.if_else(b.icmp_signed("==", b.sub(end, i0), i64(G))) as (whole, part):
                    with whole:
                        whole_group(i0, end)
                    with part:
                        part_group(i0, end)
    _function(module, name, [PTR, I64, I64, I64, PTR, I64, PTR], linkage, build)


def _build_laswp(module: ir.Module, pt: PT, name: str, linkage: str) -> None:
    """``laswp(w, ld, rows, ipiv, p0, p1)``: LAPACK's row interchanges
    ``p0 .. p1-1`` (``ipiv``: s32, 1-based) of a column-major matrix whose
    transpose is the row-major ``w``: in each of the ``rows`` rows of ``w``
    (``ld`` apart), elements p and ``ipiv[p] - 1`` swapped, p in order.
    Interchange by interchange, row by row within it: the rows' swaps are
    independent (no chain through a row's elements), and a caller passing
    a few dozen rows keeps their lines in L1 across interchanges."""
    def build(b, ab, args):
        w, ld, rows, ipiv, p0, p1 = args
        ar = _Arith(b, pt)
        i32 = ir.IntType(32)
        with dyn_range(b, p0, p1, name="swp.p") as p:
            q = b.sub(b.sext(b.load(b.gep(ipiv, [p], inbounds=True, source_etype=i32), typ=i32), I64), i64(1))
            with b.if_then(b.icmp_signed("!=", q, p)):
                _swap_columns(b, ar, w, ld, rows, p, q)
    _function(module, name, [PTR, I64, I64, PTR, I64, I64], linkage, build)


# ---------------------------------------------------------------------------
# the library units
# ---------------------------------------------------------------------------

def trsm_routine(forward: bool, conj: bool, unit: bool) -> str:
    """The routine name of a substitution variant."""
    return f"trsm_{'fwd' if forward else 'bwd'}{'_conj' if conj else ''}{'_unit' if unit else ''}"


#: Every routine: ``potrf``, ``transpose`` and the substitutions.
ROUTINES = ("potrf", "transpose", "subtract_tile", "getrf_panel", "laswp") + tuple(trsm_routine(f, c, u) for f in (True, False) for c in (False, True)
                                          for u in (False, True))
_TYPES = (PT.F32, PT.F64, PT.C64, PT.C128)
#: The routines built for f32 and f64 only.
REAL_ONLY = ("subtract_tile", "getrf_panel", "laswp")
_FN_TYPES = {"potrf": ir.FunctionType(ir.VoidType(), [PTR, I64, I64]),
             "subtract": ir.FunctionType(ir.VoidType(), [PTR] + [I64] * 5),
             "transpose": ir.FunctionType(ir.VoidType(), [PTR, PTR] + [I64] * 5),
             "getrf": ir.FunctionType(ir.VoidType(), [PTR, I64, I64, I64, PTR, I64, PTR]),
             "laswp": ir.FunctionType(ir.VoidType(), [PTR, I64, I64, PTR, I64, I64]),
             "trsm": ir.FunctionType(ir.VoidType(), [PTR, PTR] + [I64] * 5)}


@dataclass(frozen=True)
class LinalgVariant:
    """One routine of ``ROUTINES`` for element type ``pt``, as a unit of the
    GEMM library (its one function is ``"call"``)."""

    pt: PT
    routine: str

    native = None

    @property
    def functions(self) -> dict:
        return {"call": _FN_TYPES[self.routine.split("_")[0]]}

    @property
    def tag(self) -> str:
        return f"{self.pt.value}_linalg_{self.routine}"

    def build(self, module: ir.Module, name_of, linkage: str) -> None:
        name = name_of("call")
        if self.routine == "potrf":
            _build_potrf(module, self.pt, name, linkage)
        elif self.routine == "transpose":
            _build_transpose(module, self.pt, name, linkage)
        elif self.routine == "subtract_tile":
            _build_subtract_tile(module, self.pt, name, linkage)
        elif self.routine == "getrf_panel":
            _build_getrf_panel(module, self.pt, name, linkage)
        elif self.routine == "laswp":
            _build_laswp(module, self.pt, name, linkage)
        else:
            _, direction, *flags = self.routine.split("_")
            _build_trsm(module, self.pt, direction == "fwd", "conj" in flags, "unit" in flags, name, linkage)


#: A library symbol of a LinalgVariant: hash, element type, routine, function.
NAME_RE = re.compile(rb"xlac_gemm_([0-9a-f]{16})_(f32|f64|c64|c128)_linalg_(\w+)_(call)")


def parse_tag(pt: str, routine: str) -> LinalgVariant | None:
    """The variant of a parsed symbol, or None when it names none."""
    if routine not in ROUTINES or pt not in {t.value for t in _TYPES}:
        return None
    if routine in REAL_ONLY and pt not in (PT.F32.value, PT.F64.value):
        return None
    return LinalgVariant(PT(pt), routine)
