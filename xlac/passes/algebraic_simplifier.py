"""AlgebraicSimplifier: local rewrites that never change a result.

Each rewrite is a pattern (see :mod:`xlac.passes.rewriter`) keyed by the
opcode it matches.  A rewrite fires only when it is exact for every input,
IEEE special values included:

* arithmetic identities: ``x*1``, ``1*x``, ``x/1``, ``x-(+0.0)`` and
  ``x+(-0.0)`` for floats (``x+(+0.0)`` is *not* ``x`` when ``x`` is -0.0, so
  unlike XLA it is left alone), ``x+0``/``x-0`` for integers; none for
  complex numbers (``(a+bi)*1`` is NaN when ``b`` is infinite);
  ``and(x, true)``, ``or(x, false)``, ``xor(x, 0)`` and their absorbing
  forms, ``max(x, x)``, ``min(x, x)``, ``and(x, x)``, ``or(x, x)``,
  ``not(not(x))``, ``negate(negate(x))``;
* ``select`` with a constant predicate, ``select(p, x, x)``;
* data movement: reshape of reshape, reshape/transpose/broadcast/copy/convert
  that changes nothing, transpose of transpose, broadcast of broadcast,
  reshape or transpose of a scalar broadcast, slice of the whole array, slice
  of slice, pad with an all-zero config, concatenate of one operand;
* ``dot`` of a transpose: the transpose is folded into the dimension numbers
  when the result's dimension order stays the same;
* ``reduce`` over no dimensions: the reducer applied elementwise to the
  broadcast init value and the input (exact, unlike dropping the reduce);
* canonical broadcasts: a broadcast whose ``dimensions`` are not increasing
  becomes transpose + broadcast with sorted ``dimensions``, so later passes and
  fusion may assume sorted broadcast dimensions.

A replacement by an existing value of another layout happens only where the
layout cannot be observed (:func:`xlac.passes.rewriter.may_replace`), so the
entry's parameter and result layouts never change.
"""
from __future__ import annotations

import numpy as np

from ..hlo.ir import HloInstruction, HloModule
from ..hlo.opcodes import OPCODES
from ..shape import Shape
from .rewriter import PatternRewriter, PatternSet, apply_patterns

__all__ = ["AlgebraicSimplifier", "PATTERNS"]

PATTERNS = PatternSet()
_pattern = PATTERNS.register

_NOT_COPIED = ("metadata",)


def _attrs_of(inst: HloInstruction) -> dict:
    return {k: v for k, v in inst.attrs.items() if k not in _NOT_COPIED}


def _is_float(inst: HloInstruction) -> bool:
    return inst.shape.is_array and inst.shape.element_type.is_float


def _is_int_or_pred(inst: HloInstruction) -> bool:
    t = inst.shape.element_type
    return inst.shape.is_array and (t.is_integral or t.is_pred)


def _is_zero(rw: PatternRewriter, inst: HloInstruction, negative: bool | None = None) -> bool:
    """All elements zero; for floats ``negative`` picks -0.0 (True) or +0.0 (False)."""
    v = rw.uniform(inst)
    if v is None or v != 0:
        return False
    if negative is not None and inst.shape.element_type.is_float:
        return bool(np.signbit(np.float64(v))) == negative
    return True


def _is_one(rw: PatternRewriter, inst: HloInstruction) -> bool:
    v = rw.uniform(inst)
    return v is not None and v == 1


def _is_all_ones_bits(rw: PatternRewriter, inst: HloInstruction) -> bool:
    """True for pred ``true`` and for integers with every bit set."""
    v = rw.uniform(inst)
    if v is None:
        return False
    v = np.asarray(v)
    if v.dtype == np.bool_:
        return bool(v)
    return v.dtype.kind in "iu" and v == np.invert(np.zeros((), v.dtype))


# ---------------------------------------------------------------------------
# Arithmetic and logic identities
# ---------------------------------------------------------------------------

@_pattern("add")
def add_zero(inst, rw):
    """x + 0 -> x for integers/pred, x + (-0.0) -> x for floats (either side)."""
    x, y = inst.operands
    if _is_int_or_pred(inst):
        return (_is_zero(rw, y) and rw.replace(inst, x)) or (_is_zero(rw, x) and rw.replace(inst, y))
    if _is_float(inst):
        return ((_is_zero(rw, y, negative=True) and rw.replace(inst, x))
                or (_is_zero(rw, x, negative=True) and rw.replace(inst, y)))
    return False


@_pattern("subtract")
def subtract_zero(inst, rw):
    """x - 0 -> x (for floats only x - (+0.0), which is exact for x = -0.0 too)."""
    x, y = inst.operands
    if _is_int_or_pred(inst):
        return _is_zero(rw, y) and rw.replace(inst, x)
    if _is_float(inst):
        return _is_zero(rw, y, negative=False) and rw.replace(inst, x)
    return False


@_pattern("multiply")
def multiply_one(inst, rw):
    """x * 1 -> x and 1 * x -> x (not for complex numbers)."""
    if not (_is_float(inst) or _is_int_or_pred(inst)):
        return False
    x, y = inst.operands
    return (_is_one(rw, y) and rw.replace(inst, x)) or (_is_one(rw, x) and rw.replace(inst, y))


@_pattern("divide")
def divide_one(inst, rw):
    """x / 1 -> x (not for complex numbers)."""
    if not (_is_float(inst) or _is_int_or_pred(inst)):
        return False
    x, y = inst.operands
    return _is_one(rw, y) and rw.replace(inst, x)


@_pattern("and")
def and_identity(inst, rw):
    """and(x, all-ones) -> x; and(x, 0) -> 0; and(x, x) -> x."""
    x, y = inst.operands
    if x is y:
        return rw.replace(inst, x)
    for a, b in ((x, y), (y, x)):
        if _is_all_ones_bits(rw, b) and rw.replace(inst, a):
            return True
        if _is_zero(rw, b) and rw.replace(inst, b):
            return True
    return False


@_pattern("or")
def or_identity(inst, rw):
    """or(x, 0) -> x; or(x, all-ones) -> all-ones; or(x, x) -> x."""
    x, y = inst.operands
    if x is y:
        return rw.replace(inst, x)
    for a, b in ((x, y), (y, x)):
        if _is_zero(rw, b) and rw.replace(inst, a):
            return True
        if _is_all_ones_bits(rw, b) and rw.replace(inst, b):
            return True
    return False


@_pattern("xor")
def xor_zero(inst, rw):
    """xor(x, 0) -> x."""
    x, y = inst.operands
    return (_is_zero(rw, y) and rw.replace(inst, x)) or (_is_zero(rw, x) and rw.replace(inst, y))


@_pattern("maximum", "minimum")
def max_min_same(inst, rw):
    """max(x, x) -> x, min(x, x) -> x."""
    x, y = inst.operands
    return x is y and rw.replace(inst, x)


@_pattern("not", "negate")
def involution(inst, rw):
    """not(not(x)) -> x, negate(negate(x)) -> x."""
    x = inst.operands[0]
    return x.opcode == inst.opcode and rw.replace(inst, x.operands[0])


@_pattern("select")
def select_constant_or_same(inst, rw):
    """select(p, x, x) -> x; select(true, x, y) -> x; select(false, x, y) -> y."""
    p, x, y = inst.operands
    if x is y:
        return rw.replace(inst, x)
    v = rw.uniform(p)
    if v is None:
        return False
    return rw.replace(inst, x if bool(v) else y)


# ---------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------

@_pattern("reshape")
def reshape_simplify(inst, rw):
    """reshape to the same dimensions -> x; reshape(reshape(x)) -> reshape(x);
    reshape(broadcast(scalar)) -> broadcast(scalar)."""
    x = inst.operands[0]
    if x.shape.dimensions == inst.shape.dimensions and rw.replace(inst, x):
        return True
    if x.opcode == "reshape":
        return rw.replace_with_new(inst, "reshape", [x.operands[0]])
    if x.opcode == "broadcast" and x.operands[0].shape.rank == 0:
        return rw.replace_with_new(inst, "broadcast", [x.operands[0]], {"dimensions": ()})
    return False


@_pattern("transpose")
def transpose_simplify(inst, rw):
    """transpose with the identity permutation -> x; transpose(transpose(x)) ->
    one transpose (or x); transpose(broadcast(scalar)) -> broadcast(scalar)."""
    x = inst.operands[0]
    perm = tuple(inst.attrs.get("dimensions", ()))
    if perm == tuple(range(len(perm))) and rw.replace(inst, x):
        return True
    if x.opcode == "transpose":
        inner = tuple(x.attrs.get("dimensions", ()))
        composed = tuple(inner[p] for p in perm)
        y = x.operands[0]
        if composed == tuple(range(len(composed))) and rw.replace(inst, y):
            return True
        return rw.replace_with_new(inst, "transpose", [y], {**_attrs_of(inst), "dimensions": composed})
    if x.opcode == "broadcast" and x.operands[0].shape.rank == 0:
        return rw.replace_with_new(inst, "broadcast", [x.operands[0]], {"dimensions": ()})
    return False


@_pattern("broadcast")
def broadcast_simplify(inst, rw):
    """broadcast that adds nothing -> x; broadcast(broadcast(x)) -> broadcast(x);
    unsorted dimensions -> transpose + broadcast with sorted dimensions."""
    x = inst.operands[0]
    dims = tuple(inst.attrs.get("dimensions", ()))
    if x.shape.dimensions == inst.shape.dimensions and dims == tuple(range(len(dims))):
        if rw.replace(inst, x):
            return True
    if x.opcode == "broadcast":
        inner = tuple(x.attrs.get("dimensions", ()))
        return rw.replace_with_new(inst, "broadcast", [x.operands[0]],
                                   {**_attrs_of(inst), "dimensions": tuple(dims[d] for d in inner)})
    if list(dims) != sorted(dims):
        order = sorted(range(len(dims)), key=lambda i: dims[i])
        t_shape = Shape(x.shape.element_type, [x.shape.dimensions[i] for i in order])
        t = rw.create("transpose", t_shape, [x], {"dimensions": tuple(order)})
        return rw.replace_with_new(inst, "broadcast", [t],
                                   {**_attrs_of(inst), "dimensions": tuple(sorted(dims))})
    return False


@_pattern("copy")
def copy_same_layout(inst, rw):
    """copy(x) with x's very shape (layout included) -> x."""
    x = inst.operands[0]
    return x.shape == inst.shape and rw.replace(inst, x)


@_pattern("convert")
def convert_same_type(inst, rw):
    """convert to the element type the operand already has -> x."""
    x = inst.operands[0]
    return (x.shape.is_array and x.shape.element_type == inst.shape.element_type
            and rw.replace(inst, x))


@_pattern("slice")
def slice_simplify(inst, rw):
    """slice of the whole array -> x; slice(slice(x)) -> one slice."""
    x = inst.operands[0]
    spec = [tuple(int(v) for v in t) for t in inst.attrs["slice"]]
    if inst.shape.dimensions == x.shape.dimensions and all(s == 0 for s, _, _ in spec):
        if rw.replace(inst, x):
            return True
    if x.opcode == "slice":
        inner = [tuple(int(v) for v in t) for t in x.attrs["slice"]]
        composed = []
        for (s2, _l2, st2), (s1, _l1, st1), n in zip(spec, inner, inst.shape.dimensions):
            start, stride = s1 + s2 * st1, st1 * st2
            limit = start + (n - 1) * stride + 1 if n > 0 else start
            composed.append((start, limit, stride))
        return rw.replace_with_new(inst, "slice", [x.operands[0]],
                                   {**_attrs_of(inst), "slice": tuple(composed)})
    return False


@_pattern("pad")
def pad_nothing(inst, rw):
    """pad with low = high = interior = 0 everywhere -> x."""
    x = inst.operands[0]
    config = [tuple(int(v) for v in t) for t in inst.attrs["padding"]]
    return all(c == (0, 0, 0) for c in config) and rw.replace(inst, x)


@_pattern("concatenate")
def concatenate_one(inst, rw):
    """concatenate of one operand -> the operand."""
    return len(inst.operands) == 1 and rw.replace(inst, inst.operands[0])


# ---------------------------------------------------------------------------
# dot and reduce
# ---------------------------------------------------------------------------

@_pattern("dot")
def dot_of_transpose(inst, rw):
    """dot(transpose(a), b) -> dot(a, b) with remapped batch/contracting dims,
    when a's free dimensions stay in the same order (same for the rhs)."""
    for side, prefix in ((0, "lhs"), (1, "rhs")):
        t = inst.operands[side]
        if t.opcode != "transpose":
            continue
        perm = tuple(t.attrs.get("dimensions", ()))
        batch = tuple(inst.attrs.get(f"{prefix}_batch_dims", ()))
        contracting = tuple(inst.attrs.get(f"{prefix}_contracting_dims", ()))
        free = [perm[i] for i in range(len(perm)) if i not in batch and i not in contracting]
        if free != sorted(free):
            continue
        attrs = _attrs_of(inst)
        for key, dims in ((f"{prefix}_batch_dims", batch), (f"{prefix}_contracting_dims", contracting)):
            if dims or key in attrs:
                attrs[key] = tuple(perm[d] for d in dims)
        operands = list(inst.operands)
        operands[side] = t.operands[0]
        return rw.replace_with_new(inst, "dot", operands, attrs)
    return False


@_pattern("reduce")
def reduce_no_dimensions(inst, rw):
    """reduce(x, init) over no dimensions -> reducer(broadcast(init), x) elementwise,
    when the reducer is one binary op of its two parameters."""
    if len(inst.operands) != 2 or tuple(inst.attrs.get("dimensions", ())):
        return False
    x, init = inst.operands
    comp = inst.attrs.get("to_apply")
    root = getattr(comp, "root", None)
    if root is None or OPCODES.get(root.opcode) is None or OPCODES[root.opcode].category != "binary":
        return False
    if comp.num_parameters != 2 or not all(o.opcode == "parameter" for o in root.operands):
        return False
    if root.shape.element_type != inst.shape.element_type:
        return False
    acc = init
    if inst.shape.rank:
        acc = rw.create("broadcast", Shape(init.shape.element_type, inst.shape.dimensions), [init],
                        {"dimensions": ()})
    by_number = {0: acc, 1: x}
    operands = [by_number[o.parameter_number] for o in root.operands]
    return rw.replace_with_new(inst, root.opcode, operands, _attrs_of(root))


class AlgebraicSimplifier:
    """Pass: apply :data:`PATTERNS` to every computation until none fires."""

    name = "algebraic-simplifier"

    def run(self, module: HloModule) -> bool:
        # Its rewrites read bounds as sizes: computations with dynamic shapes are
        # left to the dynamic-padder (which runs first when compiling).
        static = [c for c in module.computations if not any(i.shape.is_dynamic for i in c.instructions)]
        return apply_patterns(module, PATTERNS, static)
