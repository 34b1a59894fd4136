"""Loop emission helpers (in the spirit of numba's cgutils.for_range / loop_nest).

Shapes are static, so trip counts are Python ints and loops are bottom-tested:
body, increment, compare, branch back.  A zero-trip loop emits nothing, so the
callers skip empty arrays before calling.
"""
from __future__ import annotations

from contextlib import contextmanager

from llvmlite import ir

from ..shape import Shape, strides
from .ir_array import I64, Index, i64


@contextmanager
def for_range(builder: ir.IRBuilder, count: int, name: str = "i"):
    """Emit ``for (i = 0; i < count; ++i) { <body> }``; yields ``i`` (an i64 value).

    The builder is left positioned after the loop when the block exits.
    """
    count = int(count)
    if count <= 0:
        raise ValueError("for_range needs a positive trip count; skip empty loops before calling")
    if count == 1:
        yield i64(0)
        return
    pre = builder.block
    body = builder.append_basic_block(f"{name}.body")
    after = builder.append_basic_block(f"{name}.after")
    builder.branch(body)
    builder.position_at_end(body)
    iv = builder.phi(I64, name=name)
    iv.add_incoming(i64(0), pre)
    yield iv
    nxt = builder.add(iv, i64(1), name=f"{name}.next", flags=["nsw", "nuw"])
    iv.add_incoming(nxt, builder.block)
    builder.cbranch(builder.icmp_unsigned("<", nxt, i64(count)), body, after)
    builder.position_at_end(after)


@contextmanager
def loop_nest(builder: ir.IRBuilder, shape: Shape, name: str = "d", dims: list | None = None):
    """Loop over every index of ``shape``'s logical dimensions (padding excluded).

    Loops run major-to-minor as the layout says, so the innermost loop walks
    consecutive memory.  ``dims`` restricts the nest to those dimensions (others
    are indexed 0).  Yields an :class:`Index` whose ``linear`` is the element
    offset in a buffer of ``shape``.
    """
    order = [d for d in reversed(shape.layout.minor_to_major) if dims is None or d in dims]
    multi = [i64(0)] * shape.rank
    with _nest(builder, shape, order, multi, name):
        st = strides(shape)
        linear = None
        for d in order:
            if shape.dimensions[d] == 1:
                continue
            term = multi[d] if st[d] == 1 else builder.mul(multi[d], i64(st[d]), flags=["nsw", "nuw"])
            linear = term if linear is None else builder.add(linear, term, flags=["nsw", "nuw"])
        yield Index(list(multi), linear if linear is not None else i64(0), shape)


@contextmanager
def _nest(builder, shape, order, multi, name):
    if not order:
        yield
        return
    d = order[0]
    if shape.dimensions[d] == 1:
        with _nest(builder, shape, order[1:], multi, name):
            yield
        return
    with for_range(builder, shape.dimensions[d], f"{name}{d}") as iv:
        multi[d] = iv
        with _nest(builder, shape, order[1:], multi, name):
            yield
