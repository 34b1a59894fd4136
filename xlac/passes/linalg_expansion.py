"""Blocked ``cholesky`` and ``triangular-solve`` (spec: *Cholesky*,
*TriangularSolve*) for the ``op-expander``, as XLA's CholeskyExpander and
TriangularSolveExpander: an f32/f64 problem whose matrices are bigger than
:data:`CHOLESKY_BLOCK` (cholesky) or :data:`BLOCK` (triangular-solve)
becomes ``dot``s (the GEMM library does the O(n^3) bulk, on every thread)
around ``cholesky`` / ``triangular-solve`` ops of at most that size, which the code generator's kernels
(``codegen/kernels/linalg.py``) run natively.  Smaller problems and complex
types (whose ``dot`` is a plain loop) stay whole for the kernels.

* cholesky, lower (XLA's left-looking blocked algorithm): for each block
  column i (k = CHOLESKY_BLOCK columns),
  ``panel = a[i:, i:i+k] - l[i:, :i] . l[i:i+k, :i]^T`` (one dot), ``l[i:i+k, i:i+k] = cholesky(panel[:k])`` and
  ``l[i+k:, i:i+k] = panel[k:] . l_ii^-T`` (a right-side triangular solve
  with k columns), both written into ``l`` (zeros at first) by
  ``dynamic-update-slice``s, in place; ``l[i:, :i]`` is a slice of it.  A
  matrix whose factorisation failed somewhere (a NaN pivot: not positive
  definite) ends with a NaN corner element, since NaN spreads to every later
  block; it is then made all NaN, as XLA does.
  Upper: the same transposed, by block rows i: ``panel = a[i:i+k, i:] -
  u[:i, i:i+k]^T . u[:i, i:]``, ``u_ii = cholesky_upper(panel[:, :k])``,
  ``u[i:i+k, i+k:] = u_ii^-T panel[:, k:]`` (a left-side solve).
* triangular-solve: a right-side solve ``x op(a) = b`` is the left-side
  ``op(a)^T x^T = b^T``; a left-side one runs over blocks of rows of b in
  substitution order (forward when op(a) is lower), right-looking: the
  block's rows are solved by a small triangular-solve, then the rows not
  solved yet lose their part, ``b[rest] -= op(a)[rest, block] . x[block]``
  (one dot, the subtraction fused into it).  The solved blocks are
  concatenated into the result.
"""
from __future__ import annotations

import numpy as np

from ..hlo.ir import HloInstruction
from ..hlo.opcodes import Trait, has_trait
from ..hlo.shape_inference import infer_shape
from ..shape import F32, F64, PRED, S32, Shape
from .rewriter import PatternRewriter

__all__ = ["BLOCK", "CHOLESKY_BLOCK", "blocked_cholesky", "blocked_triangular_solve"]

#: Triangular matrices up to this size run whole in the kernels; bigger ones
#: are blocked with diagonal blocks of this size (XLA's block size; 64 gives
#: the GEMM more and the kernels less work but costs more in copies: a
#: 512x512 solve with 512 right-hand sides ran 10% slower).
BLOCK = 128
#: The same for cholesky: 64 (a 512x512 factorisation 5-10% faster than with
#: 128 and than with 32 or 96; its diagonal blocks' right-side solves, of 64
#: columns, stay whole).
CHOLESKY_BLOCK = 64


def _applies(inst: HloInstruction, n: int, block: int = BLOCK) -> bool:
    return inst.shape.element_type in (F32, F64) and n > block


class _Ops:
    """Creates instructions through the rewriter, shapes from shape inference;
    the two minor dimensions are the matrices', the others batch dimensions."""

    def __init__(self, rw: PatternRewriter, like: HloInstruction):
        self.rw = rw
        self.rank = like.shape.rank
        self.batch = like.shape.dimensions[:-2]
        self.et = like.shape.element_type
        self.barriers: dict = {}
        self.indices: dict = {}

    def op(self, opcode: str, operands: list, shape: Shape | None = None, **attrs) -> HloInstruction:
        """``opcode`` of ``operands``; ``shape``: the result when it cannot be
        inferred, or the layout wanted (checked by shape inference either way)."""
        inferred = infer_shape(opcode, [o.shape for o in operands], attrs, shape=shape)
        return self.rw.create(opcode, inferred if shape is None else shape, operands, attrs)

    def slice(self, x, start: tuple, limit: tuple) -> HloInstruction:
        """``x[..., r0:r1, c0:c1]``."""
        dims = x.shape.dimensions
        if tuple(start) == (0, 0) and tuple(limit) == dims[-2:]:
            return x
        spec = tuple((0, d, 1) for d in dims[:-2]) + tuple((s, e, 1) for s, e in zip(start, limit))
        return self.op("slice", [x], slice=spec)

    def concat(self, xs: list, minor: int) -> HloInstruction:
        """Along rows (``minor=-2``) or columns (``-1``)."""
        return xs[0] if len(xs) == 1 else self.op("concatenate", xs, dimensions=(self.rank + minor,))

    def transpose(self, x) -> HloInstruction:
        r = self.rank
        return self.op("transpose", [x], dimensions=tuple(range(r - 2)) + (r - 1, r - 2))

    def dot(self, lhs, rhs, lhs_contracting: int, rhs_contracting: int) -> HloInstruction:
        """Batched product contracting the given minor dimension (-2 or -1) of
        each.  An operand computed here (a slice, a concatenation) goes
        through an ``opt-barrier``, so that fusion leaves it a buffer of its
        own: the GEMM library reads only buffers, and a slice fused into the
        dot would make the module compile its own GEMM (~100 ms each)."""
        batch = tuple(range(self.rank - 2))
        return self.op("dot", [self.buffer(lhs), self.buffer(rhs)], lhs_batch_dims=batch, rhs_batch_dims=batch,
                       lhs_contracting_dims=(self.rank + lhs_contracting,),
                       rhs_contracting_dims=(self.rank + rhs_contracting,))

    def buffer(self, x) -> HloInstruction:
        """``x``, behind an ``opt-barrier`` when fusion could fuse it into its user."""
        if not (has_trait(x.opcode, Trait.ELEMENTWISE) or has_trait(x.opcode, Trait.DATA_MOVEMENT)):
            return x
        if id(x) not in self.barriers:
            self.barriers[id(x)] = self.rw.create("opt-barrier", x.shape, [x])
        return self.barriers[id(x)]

    def sub(self, x, y) -> HloInstruction:
        return self.op("subtract", [x, y])

    def scalar(self, value: float) -> HloInstruction:
        return self.op("constant", [], Shape(self.et, ()), literal=np.array(value, self.et.dtype))

    def zeros(self, dims) -> HloInstruction:
        return self.op("broadcast", [self.scalar(0.0)], Shape(self.et, dims), dimensions=())

    def update(self, x, update, start: tuple) -> HloInstruction:
        """``x`` with ``x[..., r:r+rows, c:c+cols] = update`` (in place)."""
        starts = [self.index(v) for v in (0,) * (self.rank - 2) + tuple(start)]
        return self.op("dynamic-update-slice", [x, update] + starts)

    def index(self, value: int) -> HloInstruction:
        if value not in self.indices:
            self.indices[value] = self.op("constant", [], Shape(S32, ()), literal=np.array(value, np.int32))
        return self.indices[value]

    def nan_where_corner_is_nan(self, x, shape: Shape) -> HloInstruction:
        """``x`` with every matrix whose last diagonal element is NaN all NaN."""
        n = x.shape.dimensions[-1]
        corner = self.slice(x, (n - 1, n - 1), (n, n))
        nan = self.op("compare", [corner, corner], direction="NE")
        nan = self.op("reshape", [nan], Shape(PRED, self.batch))
        nan = self.op("broadcast", [nan], Shape(PRED, x.shape.dimensions), dimensions=tuple(range(self.rank - 2)))
        nans = self.op("broadcast", [self.scalar(np.nan)], Shape(self.et, x.shape.dimensions), dimensions=())
        return self.rw.create("select", shape, [nan, nans, x])


# ---------------------------------------------------------------------------
# cholesky
# ---------------------------------------------------------------------------

def _cholesky_lower(h: _Ops, a: HloInstruction, n: int) -> HloInstruction:
    l_ = h.zeros(a.shape.dimensions)
    for i in range(0, n, CHOLESKY_BLOCK):
        k = min(CHOLESKY_BLOCK, n - i)
        panel = h.slice(a, (i, i), (n, i + k))
        if i:
            left = h.slice(l_, (i, 0), (n, i))                           # l[i:, :i]
            top = left if i + k == n else h.slice(l_, (i, 0), (i + k, i))  # l[i:i+k, :i]
            panel = h.sub(panel, h.dot(left, top, -1, -1))
        diag = h.op("cholesky", [h.slice(panel, (0, 0), (k, k))], lower=True)
        l_ = h.update(l_, diag, (i, i))
        if i + k < n:
            below = h.op("triangular-solve", [diag, h.slice(panel, (k, 0), (n - i, k))], left_side=False,
                         lower=True, unit_diagonal=False, transpose_a="TRANSPOSE")
            l_ = h.update(l_, below, (i + k, i))
    return l_


def _cholesky_upper(h: _Ops, a: HloInstruction, n: int) -> HloInstruction:
    """``u`` with ``a = u^T u`` (upper): ``_cholesky_lower`` transposed, by
    block rows; the row panel's rest is a left-side solve with ``u_ii^T``,
    whose kernel works on it in place (the lower form's right-side solve
    transposes its panel in and out)."""
    u = h.zeros(a.shape.dimensions)
    for i in range(0, n, CHOLESKY_BLOCK):
        k = min(CHOLESKY_BLOCK, n - i)
        panel = h.slice(a, (i, i), (i + k, n))
        if i:
            right = h.slice(u, (0, i), (i, n))
            top = right if i + k == n else h.slice(u, (0, i), (i, i + k))
            panel = h.sub(panel, h.dot(top, right, -2, -2))
        diag = h.op("cholesky", [h.slice(panel, (0, 0), (k, k))], lower=False)
        u = h.update(u, diag, (i, i))
        if i + k < n:
            rest = h.op("triangular-solve", [diag, h.slice(panel, (0, k), (k, n - i))], left_side=True,
                        lower=False, unit_diagonal=False, transpose_a="TRANSPOSE")
            u = h.update(u, rest, (i, i + k))
    return u


def blocked_cholesky(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """Expand an f32/f64 ``cholesky`` of matrices bigger than CHOLESKY_BLOCK."""
    n = inst.shape.dimensions[-1]
    if not _applies(inst, n, CHOLESKY_BLOCK):
        return False
    h = _Ops(rw, inst)
    (a,) = inst.operands
    lower = bool(inst.attrs.get("lower", False))
    # Each triangle by its own form: no transposes of the matrix around it
    # (upper through the lower form and transposes measured 10-15% slower).
    factor = _cholesky_lower(h, a, n) if lower else _cholesky_upper(h, a, n)
    return rw.replace(inst, h.nan_where_corner_is_nan(factor, inst.shape))


# ---------------------------------------------------------------------------
# triangular-solve
# ---------------------------------------------------------------------------

def _solve_left(h: _Ops, a, b, lower: bool, unit: bool, transpose: str) -> HloInstruction:
    """``x`` with ``op(a) x = b``, by blocks of rows."""
    m = a.shape.dimensions[-1]
    nr = b.shape.dimensions[-1]
    transposed = transpose != "NO_TRANSPOSE"
    blocks = [(s, min(s + BLOCK, m)) for s in range(0, m, BLOCK)]
    forward = lower != transposed                          # op(a) lower
    if not forward:
        blocks.reverse()
    solved, rest = [], b
    for n_done, (s, e) in enumerate(blocks):
        here = (0, e - s) if forward else (rest.shape.dimensions[-2] - (e - s), rest.shape.dimensions[-2])
        x = h.op("triangular-solve", [h.slice(a, (s, s), (e, e)), h.slice(rest, (here[0], 0), (here[1], nr))],
                 left_side=True, lower=lower, unit_diagonal=unit, transpose_a=transpose)
        solved.append((s, x))
        if n_done + 1 == len(blocks):
            break
        lo, hi = (e, m) if forward else (0, s)             # rows of op(a) not solved yet
        coupling = h.slice(a, (s, lo), (e, hi)) if transposed else h.slice(a, (lo, s), (hi, e))
        keep = (here[1], rest.shape.dimensions[-2]) if forward else (0, here[0])
        rest = h.sub(h.slice(rest, (keep[0], 0), (keep[1], nr)),
                     h.dot(coupling, x, -2 if transposed else -1, -2))
    return h.concat([x for _, x in sorted(solved, key=lambda p: p[0])], -2)


def blocked_triangular_solve(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """Expand an f32/f64 ``triangular-solve`` of matrices bigger than BLOCK."""
    a, b = inst.operands
    if not _applies(inst, a.shape.dimensions[-1]) or inst.shape.element_count() == 0:
        return False
    h = _Ops(rw, inst)
    lower = bool(inst.attrs.get("lower", False))
    unit = bool(inst.attrs.get("unit_diagonal", False))
    transpose = str(inst.attrs.get("transpose_a", "NO_TRANSPOSE"))
    if bool(inst.attrs.get("left_side", False)):
        x = _solve_left(h, a, b, lower, unit, transpose)
    else:   # x op(a) = b  <=>  op(a)^T x^T = b^T; for real a, op(a)^T is a^T or a
        flipped = "TRANSPOSE" if transpose == "NO_TRANSPOSE" else "NO_TRANSPOSE"
        x = h.transpose(_solve_left(h, a, h.transpose(b), lower, unit, flipped))
    if x.shape != inst.shape:
        x = h.op("copy", [x], inst.shape)
    return rw.replace(inst, x)
