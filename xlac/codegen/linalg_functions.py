"""The native routines under ``cholesky`` and ``triangular-solve``
(``kernels/linalg.py``): the unblocked factorisation, the substitution and
the transposing copy, with every size a run-time argument.  They do not
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
#: Vectors of VECTOR_BYTES per block row in ``_update_block_rows``: with
#: BLOCK_ROWS, 8 accumulators (AVX-512 has 32 registers, AVX2 16).
VECTORS = 2
VECTOR_BYTES = 64
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
    types: tiles of a cache line's elements square, each a row of vector
    loads, shuffles in registers and a row of vector stores; the strips at
    the right and bottom edges go element by element.  The row strides let a
    task move its own block of rows (``kernels/linalg.py`` splits the copies
    of a right-side solve over the thread pool)."""
    def build(b, ab, args):
        dst, src, batch, rows, cols, lds, ldd = args
        ty = types.memory_type(pt)
        lanes = TILE if pt.is_complex else max(TILE, VECTOR_BYTES // pt.byte_size)   # a cache line
        vty = ir.VectorType(ty, lanes)
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
            with dyn_range(b, i64(0), whole_rows, step=tile, name="tr.r") as r0:
                with dyn_range(b, i64(0), whole_cols, step=tile, name="tr.c") as c0:
                    vecs = [b.load(_element(b, s, b.add(b.mul(b.add(r0, i64(q)), lds), c0), pt), typ=vty,
                                   align=pt.byte_size) for q in range(lanes)]
                    for q, v in enumerate(_transpose_vectors(b, vecs)):
                        b.store(v, _element(b, d, b.add(b.mul(b.add(c0, i64(q)), ldd), r0), pt),
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
            subtracted, then the square root of its pivot."""
            row_i = b.mul(i, ld)
            with b.if_then(b.icmp_signed(">", count, i64(0))):
                _subtract_rows(b, ar, w, row_i, count,
                               lambda r: (u_at(b.add(first, r), i), b.mul(b.add(first, r), ld)), i, n)
            ii = b.add(row_i, i)
            root = ar.sqrt(ar.real(ar.load(w, ii)))
            b.store(b.or_(b.load(failed), b.fcmp_unordered("uno", root, root)), failed)
            ar.store(w, ii, ar.from_real(root))
            with dyn_range(b, b.add(i, i64(1)), n, name="chol.j") as j:
                e = b.add(row_i, j)
                ar.store(w, e, ar.div_real(ar.load(w, e), root))

        # u[i, i:] = a[i, i:] - sum_k conj(u[k, i]) u[k, i:], divided by the root of
        # its pivot.  Real types: BLOCK_ROWS rows lose the rows above them at once
        # (over columns i0:, the strict lower triangle is never read and is zeroed
        # below), then their own triangle row by row.
        blocked = i64(0)
        if not pt.is_complex:
            blocked = b.mul(b.udiv(n, i64(BLOCK_ROWS)), i64(BLOCK_ROWS))
            with dyn_range(b, i64(0), blocked, step=BLOCK_ROWS, name="chol.b") as i0:
                _update_block_rows(b, ab, pt, w, lambda i, k: ar.load(w, b.add(b.mul(k, ld), i)), ld,
                                   i0, i0, lambda r: r, i0, n)
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


def _update_block_rows(b: ir.IRBuilder, ab: ir.IRBuilder, pt: PT, w, coef, nr, first, done, row, c0,
                       c1) -> None:
    """``w[i_q, j] -= sum(coef(i_q, row(r)) * w[row(r), j] for r < done)`` for the
    BLOCK_ROWS rows ``i_q = row(first + q)`` and j in [c0, c1): the substitution's bulk as a
    register-blocked GEMM micro-kernel (BLOCK_ROWS x VECTORS accumulators,
    each step one load of row(r) per vector and one multiply-add per
    accumulator, where ``_subtract_rows`` loads and stores the destination
    row every GROUP rows), then the columns short of a whole vector block by
    ``_subtract_rows``."""
    ty = types.memory_type(pt)
    lanes = VECTOR_BYTES // pt.byte_size
    vty = ir.VectorType(ty, lanes)
    width = lanes * VECTORS
    align = pt.byte_size
    fma = declare_libm(b.module, f"llvm.fma.v{lanes}{'f64' if pt is PT.F64 else 'f32'}",
                       ir.FunctionType(vty, [vty] * 3))
    rows = [row(b.add(first, i64(q))) for q in range(BLOCK_ROWS)]
    accs = [[ab.alloca(vty, name=f"trsm.acc{q}{v}") for v in range(VECTORS)] for q in range(len(rows))]
    bases = [b.mul(i, nr) for i in rows]
    vec_end = b.add(c0, b.mul(b.udiv(b.sub(c1, c0), i64(width)), i64(width)))

    def at(base, e):
        return b.gep(base, [e], inbounds=True, source_etype=ty)

    with dyn_range(b, c0, vec_end, step=width, name="trsm.vj") as j:
        for q, base in enumerate(bases):
            for v in range(VECTORS):
                b.store(b.load(at(w, b.add(base, b.add(j, i64(v * lanes)))), typ=vty, align=align), accs[q][v])
        with dyn_range(b, i64(0), done, name="trsm.vr") as r:
            k = row(r)
            src = b.add(b.mul(k, nr), j)
            xs = [b.load(at(w, b.add(src, i64(v * lanes))), typ=vty, align=align) for v in range(VECTORS)]
            for q, i in enumerate(rows):
                c = _splat(b, b.fneg(coef(i, k)), vty)
                for v in range(VECTORS):
                    b.store(b.call(fma, [c, xs[v], b.load(accs[q][v])]), accs[q][v])
        for q, base in enumerate(bases):
            for v in range(VECTORS):
                b.store(b.load(accs[q][v]), at(w, b.add(base, b.add(j, i64(v * lanes)))), align=align)
    ar = _Arith(b, pt)
    with b.if_then(b.and_(b.icmp_signed("<", vec_end, c1), b.icmp_signed(">", done, i64(0)))):
        with dyn_range(b, i64(0), i64(BLOCK_ROWS), name="trsm.tq") as q:      # a loop: less code to compile
            i = row(b.add(first, q))
            _subtract_rows(b, ar, w, b.mul(i, nr), done, lambda r: (coef(i, row(r)), b.mul(row(r), nr)), vec_end, c1)


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

        def solve_row(s, first, count):
            """Row ``row(s)`` loses rows ``row(first + r)``, r < count, then is divided by its pivot."""
            i = row(s)
            wi = b.mul(i, nr)
            with b.if_then(b.icmp_signed(">", count, i64(0))):
                _subtract_rows(b, ar, w, wi, count, lambda r: (t_at(i, row(b.add(first, r))),
                                                               b.mul(row(b.add(first, r)), nr)), c0, c1)
            if not unit:
                d = t_at(i, i)
                with _parallel_range(b, c0, c1, "trsm.d") as j:
                    x = b.add(wi, j)
                    ar.store(w, x, ar.div(ar.load(w, x), d))

        blocked = i64(0)
        if not pt.is_complex:
            blocked = b.mul(b.udiv(m, i64(BLOCK_ROWS)), i64(BLOCK_ROWS))
            with dyn_range(b, i64(0), blocked, step=BLOCK_ROWS, name="trsm.b") as s0:
                _update_block_rows(b, ab, pt, w, t_at, nr, s0, s0, row, c0, c1)
                with dyn_range(b, i64(0), i64(BLOCK_ROWS), name="trsm.q") as q:
                    solve_row(b.add(s0, q), s0, q)
        with dyn_range(b, blocked, m, name="trsm.s") as s:
            solve_row(s, i64(0), s)
    _function(module, name, [PTR, PTR, I64, I64, I64, I64, I64], linkage, build)




# ---------------------------------------------------------------------------
# the library units
# ---------------------------------------------------------------------------

def trsm_routine(forward: bool, conj: bool, unit: bool) -> str:
    """The routine name of a substitution variant."""
    return f"trsm_{'fwd' if forward else 'bwd'}{'_conj' if conj else ''}{'_unit' if unit else ''}"


#: Every routine: ``potrf``, ``transpose`` and the substitutions.
ROUTINES = ("potrf", "transpose", "subtract_tile") + tuple(trsm_routine(f, c, u) for f in (True, False) for c in (False, True)
                                          for u in (False, True))
_TYPES = (PT.F32, PT.F64, PT.C64, PT.C128)
_FN_TYPES = {"potrf": ir.FunctionType(ir.VoidType(), [PTR, I64, I64]),
             "subtract": ir.FunctionType(ir.VoidType(), [PTR] + [I64] * 5),
             "transpose": ir.FunctionType(ir.VoidType(), [PTR, PTR] + [I64] * 5),
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
        else:
            _, direction, *flags = self.routine.split("_")
            _build_trsm(module, self.pt, direction == "fwd", "conj" in flags, "unit" in flags, name, linkage)


#: A library symbol of a LinalgVariant: hash, element type, routine, function.
NAME_RE = re.compile(rb"xlac_gemm_([0-9a-f]{16})_(f32|f64|c64|c128)_linalg_(\w+)_(call)")


def parse_tag(pt: str, routine: str) -> LinalgVariant | None:
    """The variant of a parsed symbol, or None when it names none."""
    if routine not in ROUTINES or pt not in {t.value for t in _TYPES}:
        return None
    if routine == "subtract_tile" and pt not in (PT.F32.value, PT.F64.value):
        return None
    return LinalgVariant(PT(pt), routine)
