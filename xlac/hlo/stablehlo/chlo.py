"""The ``chlo`` ops jax still leaves in StableHLO, as XLA's chlo legaliser
expands them (``chlo_legalize_to_stablehlo``): into HLO ops with the same
numerics.  Those XLA has opcodes for (``chlo.asin``, ``chlo.erf``, ...) are
element-wise converters in ``ops.py``.
"""
from __future__ import annotations

from ...shape import Shape
from .importer import OpContext, converter


@converter("chlo.square")
def _square(ctx: OpContext) -> list:
    (x,) = ctx.operands
    return [ctx.add("multiply", ctx.result_shape(), [x, x])]


@converter("chlo.top_k", "mhlo.topk")
def _top_k(ctx: OpContext) -> list:
    k = int(ctx.attr("k"))
    largest = ctx.attr("largest", default=True)
    shapes = ctx.result_shapes()
    top = ctx.add("topk", Shape.tuple(shapes), ctx.operands, {"k": k, "largest": bool(largest)})
    return ctx.results_of(top)
