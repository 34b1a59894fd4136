"""Blocked ``triangular-solve`` (spec: *TriangularSolve*) for the
``op-expander``, as XLA's TriangularSolveExpander: an f32/f64 solve whose
matrices are bigger than :data:`BLOCK` becomes ``dot``s (the GEMM library
does the O(n^3) bulk, on every thread) around ``triangular-solve`` ops of at
most that size, which the code generator's kernels
(``codegen/kernels/linalg.py``) run natively.  Smaller problems and complex
types (whose ``dot`` is a plain loop) stay whole for the kernels.  (A big
``cholesky`` is blocked inside its kernel, ``codegen/kernels/cholesky_blocked.py``,
which calls the GEMM library itself.)

A right-side solve ``x op(a) = b`` is the left-side ``op(a)^T x^T = b^T``; a
left-side one runs over blocks of rows of b in substitution order (forward
when op(a) is lower), right-looking: the block's rows are solved by a small
triangular-solve, then the rows not solved yet lose their part,
``b[rest] -= op(a)[rest, block] . x[block]`` (one dot, the subtraction fused
into it).  The solved blocks are concatenated into the result.
"""
from __future__ import annotations

from ..hlo.ir import HloInstruction
from ..hlo.opcodes import Trait, has_trait
from ..hlo.shape_inference import infer_shape
from ..shape import F32, F64, Shape
from .rewriter import PatternRewriter

__all__ = ["BLOCK", "blocked_triangular_solve"]

#: Triangular matrices up to this size run whole in the kernels; bigger ones
#: are blocked with diagonal blocks of this size (XLA's block size; 64 gives
#: the GEMM more and the kernels less work but costs more in copies: a
#: 512x512 solve with 512 right-hand sides ran 10% slower).
BLOCK = 128


def _applies(inst: HloInstruction, n: int) -> bool:
    return inst.shape.element_type in (F32, F64) and n > BLOCK


class _Ops:
    """Creates instructions through the rewriter, shapes from shape inference;
    the two minor dimensions are the matrices', the others batch dimensions."""

    def __init__(self, rw: PatternRewriter, like: HloInstruction):
        self.rw = rw
        self.rank = like.shape.rank
        self.batch = like.shape.dimensions[:-2]
        self.et = like.shape.element_type
        self.barriers: dict = {}

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
