"""``xlac.lax.linalg``: jax.lax.linalg's Cholesky and triangular solve (spec: *Cholesky*,
*TriangularSolve*) on traced values."""
from __future__ import annotations

import numpy as np

from ..frontend import ops
from ..frontend import tracer as _t

__all__ = ["cholesky", "triangular_solve"]


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor ``l`` of each ``[..., n, n]`` matrix, ``x = l . l^H``
    (jax.lax.linalg.cholesky).  ``symmetrize_input``: factor ``(x + x^H) / 2``, as jax does;
    otherwise only the lower triangle is read.  Not positive definite: NaNs, as XLA."""
    o = _t.to_op(x, op="lax.linalg.cholesky")
    if symmetrize_input:
        rank = o.shape.rank
        perm = list(range(rank - 2)) + [rank - 1, rank - 2]
        t = ops.transpose(o, perm)
        if o.shape.dtype.kind == "c":
            t = ops.complex(ops.real(t), ops.neg(ops.imag(t)))
        half = ops.constant(o.builder, np.array(0.5, o.shape.dtype))
        o = ops.mul(ops.add(o, t), ops.broadcast(half, list(o.shape.dimensions)))
    return _t.Tracer(ops.cholesky(o, lower=True))


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False, transpose_a: bool = False,
                     conjugate_a: bool = False, unit_diagonal: bool = False):
    """Solve ``op(a) . x = b`` (``left_side``) or ``x . op(a) = b`` (jax.lax.linalg.triangular_solve):
    ``op(a)`` is ``a``, ``a^T`` (``transpose_a``) or ``a^H`` (both flags); a conjugate without
    a transpose conjugates ``a`` first.  Only ``a``'s ``lower`` or upper triangle is read."""
    ao = _t.to_op(a, op="lax.linalg.triangular_solve")
    bo = _t.to_op(b, op="lax.linalg.triangular_solve")
    if conjugate_a and not transpose_a and ao.shape.dtype.kind == "c":
        ao = ops.complex(ops.real(ao), ops.neg(ops.imag(ao)))
    mode = "ADJOINT" if transpose_a and conjugate_a else "TRANSPOSE" if transpose_a else "NO_TRANSPOSE"
    return _t.Tracer(ops.triangular_solve(ao, bo, left_side, lower, unit_diagonal, mode))
