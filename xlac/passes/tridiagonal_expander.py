"""jaxlib's ``tridiagonal_solve_perturbed_ffi`` custom call, expanded into HLO.

``jax.lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)``
lowers on the CPU to a kernel of jaxlib's own (not LAPACK), so xlac computes
it as XLA's expanders compute what a back end lacks: in HLO, here two
``while`` loops over the rows, every matrix of the batch at once (a row's
pivoting choice is a ``select`` per matrix).  The semantics are jaxlib's
(``xlac/tridiagonal_reference.py``, the evaluator's rule, has them step by
step):

* forward: Gaussian elimination with row pivoting (a row swap when the
  subdiagonal element is the larger relative to its row's scale), ``U``'s
  three diagonals kept in ``u0, u1, u2`` and ``L^-1 P b`` built in ``x`` on
  the way, and ``max|U|``;
* backward: ``x[k] = (x[k] - u1[k] x[k+1] - u2[k] x[k+2]) * (1 / p)`` with the
  pivot ``p = u0[k]`` first moved away from zero while it is below 1 and the
  row could overflow (jaxlib's ``MaybePerturbPivot``: add ``eps * max|U|``
  with the pivot's sign, doubled each time, or scale a tiny pivot and its row
  up by ``1 / safemin``): an inner ``while`` that runs while any matrix of the
  batch still needs a step.
"""
from __future__ import annotations

import numpy as np

from ..hlo import custom_call as hcc
from ..hlo.ir import HloInstruction
from ..shape import C64, C128, F32, F64, PRED, S32, S64, Shape
from ..tridiagonal_reference import limits
from .rewriter import PatternRewriter, PatternSet

__all__ = ["register"]

_REAL = {F32: F32, F64: F64, C64: F32, C128: F64}
_SIGNED = {F32: S32, F64: S64}


class _Ops:
    """Instructions of one computation (the one being rewritten, or a new one:
    ``new``), their shapes inferred from the operands."""

    def __init__(self, rw: PatternRewriter, new: bool):
        self.rw, self.new, self.instructions = rw, new, []

    def add(self, opcode: str, shape: Shape, operands=(), attrs=None) -> HloInstruction:
        if not self.new:
            return self.rw.create(opcode, shape, list(operands), attrs)
        inst = self.rw.instruction(opcode, shape, operands, attrs)
        self.instructions.append(inst)
        return inst

    def build(self, name: str, root: HloInstruction):
        return self.rw.computation(name, self.instructions, root)

    def params(self, shape: Shape) -> list:
        """The elements of tuple parameter 0 of ``shape``."""
        p = self.add("parameter", shape, [], {"parameter_number": 0})
        return [self.add("get-tuple-element", s, [p], {"index": k}) for k, s in enumerate(shape.tuple_shapes)]

    def tuple(self, parts: list) -> HloInstruction:
        return self.add("tuple", Shape.tuple([p.shape for p in parts]), parts)

    def scalar(self, et, value) -> HloInstruction:
        return self.add("constant", Shape(et, ()), [], {"literal": np.array(value, et.dtype)})

    def full(self, et, value, dims) -> HloInstruction:
        return self.add("broadcast", Shape(et, tuple(dims)), [self.scalar(et, value)], {"dimensions": ()})

    def spread(self, x: HloInstruction, dims, kept=()) -> HloInstruction:
        """``x`` broadcast to ``dims``, its dimensions becoming ``kept``."""
        if x.shape.dimensions == tuple(dims):
            return x
        return self.add("broadcast", Shape(x.shape.element_type, tuple(dims)), [x], {"dimensions": tuple(kept)})

    def op(self, opcode: str, x, *ys, et=None, attrs=None) -> HloInstruction:
        return self.add(opcode, Shape(et or x.shape.element_type, x.shape.dimensions), [x, *ys], attrs)

    def cmp(self, direction: str, x, y) -> HloInstruction:
        return self.op("compare", x, y, et=PRED, attrs={"direction": direction})

    def select(self, p, x, y) -> HloInstruction:
        if p.shape.dimensions != x.shape.dimensions:
            p = self.spread(p, x.shape.dimensions, range(p.shape.rank))
        return self.op("select", p, x, y, et=x.shape.element_type)

    def abs(self, x) -> HloInstruction:
        return self.op("abs", x, et=_REAL.get(x.shape.element_type, x.shape.element_type))

    def to(self, x, et) -> HloInstruction:
        return x if x.shape.element_type == et else self.op("convert", x, et=et)

    def slice_at(self, a, j) -> HloInstruction:
        """Column ``j`` (an s32 scalar) of ``a`` [B, n] as [B], or row ``j`` of
        ``a`` [B, n, k] as [B, k]."""
        dims = a.shape.dimensions
        zero = self.scalar(S32, 0)
        sizes = (dims[0], 1) + dims[2:]
        piece = self.add("dynamic-slice", Shape(a.shape.element_type, sizes), [a, zero, j] + [zero] * (len(dims) - 2),
                         {"dynamic_slice_sizes": sizes})
        return self.add("reshape", Shape(a.shape.element_type, (dims[0],) + dims[2:]), [piece])

    def update_at(self, a, j, *vs) -> HloInstruction:
        """``a`` with columns (rows) ``j, j+1, ...`` set to ``vs``: the inverse of
        :meth:`slice_at`.  One update for both rows a step changes, not two in a
        chain: the loop state is updated in place only by the update that is
        the body's result."""
        dims = a.shape.dimensions
        et = a.shape.element_type
        zero = self.scalar(S32, 0)
        pieces = [self.add("reshape", Shape(et, (dims[0], 1) + dims[2:]), [v]) for v in vs]
        piece = pieces[0] if len(pieces) == 1 else self.add(
            "concatenate", Shape(et, (dims[0], len(pieces)) + dims[2:]), pieces, {"dimensions": (1,)})
        return self.add("dynamic-update-slice", a.shape, [a, piece, zero, j] + [zero] * (len(dims) - 2))

    def reduce(self, x, kind: str, dim: int) -> HloInstruction:
        et = x.shape.element_type
        init = self.scalar(et, False if et == PRED else -np.inf)
        dims = tuple(d for k, d in enumerate(x.shape.dimensions) if k != dim)
        return self.add("reduce", Shape(et, dims), [x, init],
                        {"dimensions": (dim,), "to_apply": self.rw.scalar_computation(kind, et)})


def _copysign_pivot(o: _Ops, magnitude, pivot):
    """``copysign(magnitude, real(pivot))`` per matrix (the sign bit, as C's copysign)."""
    rt = magnitude.shape.element_type
    re = o.op("real", pivot, et=rt) if pivot.shape.element_type != rt else pivot
    bits = o.op("bitcast-convert", re, et=_SIGNED[rt])
    negative = o.cmp("LT", bits, o.full(_SIGNED[rt], 0, bits.shape.dimensions))
    return o.select(negative, o.op("negate", magnitude), magnitude)


def _perturb_loop(rw: PatternRewriter, o: _Ops, name: str, pivot, perturb, row, consts):
    """(pivot, row) after jaxlib's ``MaybePerturbPivot`` for every matrix: ``pivot``,
    ``perturb`` [B], ``row`` [B, k]."""
    et, rt = pivot.shape.element_type, perturb.shape.element_type
    eps, safemin, bignum = consts
    dims = perturb.shape.dimensions
    magnitude = o.op("maximum", o.abs(perturb), o.full(rt, safemin, dims))
    start = _copysign_pivot(o, magnitude, pivot)
    max_factor = o.reduce(o.abs(row), "maximum", 1)
    stop = o.full(PRED, False, dims)
    state = Shape.tuple([pivot.shape, perturb.shape, row.shape, stop.shape, max_factor.shape])

    def active(c: _Ops, p, s):
        below = c.cmp("LT", c.abs(p), c.full(rt, 1, dims))
        return c.op("and", below, c.op("not", s))

    cond = _Ops(rw, True)
    p, _, _, s, _ = cond.params(state)
    condition = cond.build(f"{name}.perturb.cond", cond.reduce(active(cond, p, s), "or", 0))

    body = _Ops(rw, True)
    p, q, r, s, mf = body.params(state)
    ap = body.abs(p)
    act = active(body, p, s)
    small = body.cmp("LT", ap, body.full(rt, safemin, dims))
    grow_tiny = body.op("or", body.cmp("EQ", ap, body.full(rt, 0, dims)),
                        body.cmp("GT", body.op("multiply", mf, body.full(rt, safemin, dims)), ap))
    overflow = body.cmp("GT", mf, body.op("multiply", ap, body.full(rt, bignum, dims)))
    add = body.op("and", act, body.select(small, grow_tiny, overflow))
    scale = body.op("and", act, body.op("and", small, body.op("not", grow_tiny)))
    done = body.op("and", act, body.op("and", body.op("not", small), body.op("not", overflow)))
    big_t = body.full(et, bignum, dims)
    p2 = body.select(add, body.op("add", p, body.to(q, et)), body.select(scale, body.op("multiply", p, big_t), p))
    q2 = body.select(add, body.op("multiply", q, body.full(rt, 2, dims)), q)
    r2 = body.select(scale, body.op("multiply", r, body.full(et, bignum, r.shape.dimensions)), r)
    s2 = body.op("or", s, body.op("or", scale, done))
    body_comp = body.build(f"{name}.perturb.body", body.tuple([p2, q2, r2, s2, mf]))

    loop = o.add("while", state, [o.tuple([pivot, start, row, stop, max_factor])],
                 {"condition": condition, "body": body_comp})
    return (o.add("get-tuple-element", pivot.shape, [loop], {"index": 0}),
            o.add("get-tuple-element", row.shape, [loop], {"index": 2}))


def _forward(rw, o: _Ops, name: str, dl, d, du, b):
    """The forward loop: (u0, u1, u2, x, max|U| without the last row) after it."""
    B, n = d.shape.dimensions
    et = d.shape.element_type
    rt = _REAL[et]
    x0 = o.update_at(o.full(et, 0, b.shape.dimensions), o.scalar(S32, 0), o.slice_at(b, o.scalar(S32, 0)))
    zero = o.full(et, 0, (B, n))
    d0, du0 = o.slice_at(d, o.scalar(S32, 0)), o.slice_at(du, o.scalar(S32, 0))
    init = [o.scalar(S32, 0), o.update_at(zero, o.scalar(S32, 0), d0), o.update_at(zero, o.scalar(S32, 0), du0),
            zero, x0, o.op("add", o.abs(d0), o.abs(du0)), o.op("maximum", o.abs(d0), o.abs(du0)), dl, d, du, b]
    state = Shape.tuple([v.shape for v in init])

    cond = _Ops(rw, True)
    i = cond.params(state)[0]
    condition = cond.build(f"{name}.forward.cond", cond.cmp("LT", i, cond.scalar(S32, n - 1)))

    c = _Ops(rw, True)
    i, u0, u1, u2, x, scale1, max_u, dl_, d_, du_, b_ = c.params(state)
    i1 = c.op("add", i, c.scalar(S32, 1))
    dlk1, dk1, duk1 = c.slice_at(dl_, i1), c.slice_at(d_, i1), c.slice_at(du_, i1)
    u0k, u1k, u1k1, u2k = c.slice_at(u0, i), c.slice_at(u1, i), c.slice_at(u1, i1), c.slice_at(u2, i)
    xk, rk1 = c.slice_at(x, i), c.slice_at(b_, i1)
    not_last = c.spread(c.cmp("LT", i, c.scalar(S32, n - 2)), (B,))
    r0, t0 = c.full(rt, 0, (B,)), c.full(et, 0, (B,))
    scale2 = c.op("add", c.op("add", c.abs(dlk1), c.abs(dk1)), c.select(not_last, c.abs(duk1), r0))
    keep = c.cmp("EQ", dlk1, t0)                     # already eliminated: the row as it is
    piv1 = c.select(c.cmp("EQ", u0k, t0), r0, c.op("divide", c.abs(u0k), scale1))
    piv2 = c.op("divide", c.abs(dlk1), scale2)
    swap = c.op("and", c.op("not", keep), c.op("not", c.cmp("LE", piv2, piv1)))
    f_elim, f_swap = c.op("divide", dlk1, u0k), c.op("divide", u0k, dlk1)

    def rows(f):
        return c.spread(f, (B, b.shape.dimensions[2]), (0,))

    u0_k = c.select(swap, dlk1, u0k)
    u0_k1 = c.select(swap, c.op("subtract", u1k, c.op("multiply", f_swap, dk1)),
                     c.select(keep, dk1, c.op("subtract", dk1, c.op("multiply", f_elim, u1k))))
    u1_k = c.select(swap, dk1, u1k)
    u1_k1 = c.select(swap, c.select(not_last, c.op("negate", c.op("multiply", f_swap, duk1)), u1k1), duk1)
    u2_k = c.select(swap, c.select(not_last, duk1, u2k), t0)
    x_k1 = c.select(swap, c.op("subtract", xk, c.op("multiply", rows(f_swap), rk1)),
                    c.select(keep, rk1, c.op("subtract", rk1, c.op("multiply", rows(f_elim), xk))))
    x_k = c.select(swap, rk1, xk)
    scale1_ = c.select(swap, c.op("add", c.abs(u0_k1), c.abs(u1_k1)), scale2)
    seen = c.op("maximum", c.op("maximum", max_u, c.abs(u0_k)), c.op("maximum", c.abs(u1_k), c.abs(u2_k)))
    max_u_ = c.select(not_last, seen, max_u)
    u0 = c.update_at(u0, i, u0_k, u0_k1)
    u1 = c.update_at(u1, i, u1_k, u1_k1)
    u2 = c.update_at(u2, i, u2_k)
    x = c.update_at(x, i, x_k, x_k1)
    body = c.build(f"{name}.forward.body", c.tuple([i1, u0, u1, u2, x, scale1_, max_u_, dl_, d_, du_, b_]))

    loop = o.add("while", state, [o.tuple(init)], {"condition": condition, "body": body})
    return [o.add("get-tuple-element", state.tuple_shapes[k], [loop], {"index": k}) for k in (1, 2, 3, 4, 6)]


def _backward(rw, o: _Ops, name: str, u0, u1, u2, x, perturb, consts):
    """The back substitution, row ``n - 1`` up to row 0: the solution."""
    B, n, k = x.shape.dimensions
    et = x.shape.element_type
    state = Shape.tuple([Shape(S32, ()), u0.shape, u1.shape, u2.shape, x.shape, perturb.shape])

    cond = _Ops(rw, True)
    j = cond.params(state)[0]
    condition = cond.build(f"{name}.backward.cond", cond.cmp("LT", j, cond.scalar(S32, n)))

    c = _Ops(rw, True)
    j, u0_, u1_, u2_, x_, q = c.params(state)
    row_k = c.op("subtract", c.scalar(S32, n - 1), j)

    def term(u, ahead: int):
        at = c.op("add", row_k, c.scalar(S32, ahead))
        inside = c.spread(c.cmp("LT", at, c.scalar(S32, n)), (B, k))
        # (a row past the end is clamped by dynamic-slice: masked to zero)
        product = c.op("multiply", c.spread(c.slice_at(u, row_k), (B, k), (0,)), c.slice_at(x_, at))
        return c.select(inside, product, c.full(et, 0, (B, k)))
    row = c.op("subtract", c.op("subtract", c.slice_at(x_, row_k), term(u1_, 1)), term(u2_, 2))
    pivot, row = _perturb_loop(rw, c, name, c.slice_at(u0_, row_k), q, row, consts)
    inverse = c.op("divide", c.full(et, 1, (B,)), pivot)
    solved = c.op("multiply", row, c.spread(inverse, (B, k), (0,)))
    x_ = c.update_at(x_, row_k, solved)
    body = c.build(f"{name}.backward.body", c.tuple([c.op("add", j, c.scalar(S32, 1)), u0_, u1_, u2_, x_, q]))

    loop = o.add("while", state, [o.tuple([o.scalar(S32, 0), u0, u1, u2, x, perturb])],
                 {"condition": condition, "body": body})
    return o.add("get-tuple-element", x.shape, [loop], {"index": 4})


def tridiagonal_solve_perturbed(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """``tridiagonal_solve_perturbed_ffi`` as HLO (see the module docstring)."""
    if hcc.target_of(inst) != hcc.TRIDIAGONAL_SOLVE_PERTURBED:
        return False
    hcc.check_tridiagonal_solve([o.shape for o in inst.operands], inst.shape)
    dims = inst.shape.dimensions
    n, k = dims[-2], dims[-1]
    B = int(np.prod(dims[:-2], dtype=np.int64))
    et = inst.shape.element_type
    rt = _REAL[et]
    o = _Ops(rw, False)
    if B == 0 or n == 0 or k == 0:
        return rw.supersede(inst, o.add("copy", inst.shape, [inst.operands[3]]))
    eps, safemin, bignum = (float(v) for v in limits(np.dtype(rt.dtype)))
    consts = (eps, safemin, bignum)
    dl, d, du = (o.add("reshape", Shape(et, (B, n)), [v]) for v in inst.operands[:3])
    b = o.add("reshape", Shape(et, (B, n, k)), [inst.operands[3]])
    name = inst.name
    if n == 1:
        p = o.slice_at(d, o.scalar(S32, 0))
        pivot, row = _perturb_loop(rw, o, name, p, o.op("multiply", o.abs(p), o.full(rt, eps, (B,))),
                                   o.slice_at(b, o.scalar(S32, 0)), consts)
        x = o.op("divide", row, o.spread(pivot, (B, k), (0,)))
        x = o.add("reshape", Shape(et, (B, 1, k)), [x])
    else:
        u0, u1, u2, x, max_u = _forward(rw, o, name, dl, d, du, b)
        last = o.slice_at(u0, o.scalar(S32, n - 1))
        max_u = o.op("maximum", max_u, o.abs(last))
        perturb = o.op("multiply", o.full(rt, eps, (B,)), max_u)
        x = _backward(rw, o, name, u0, u1, u2, x, perturb, consts)
    out = o.add("reshape", Shape(et, dims), [x])
    return rw.supersede(inst, out if out.shape == inst.shape else o.add("copy", inst.shape, [out]))


def register(patterns: PatternSet) -> None:
    """Add the expansion of jaxlib's ``tridiagonal_solve_perturbed_ffi`` to ``patterns``."""
    patterns.register("custom-call")(tridiagonal_solve_perturbed)
