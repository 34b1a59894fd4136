"""Shardy (``sdy``) ops in jax's sharded programs, as XLA exports them to HLO
(the form ``xlac.passes.shard_map`` partitions): ``sdy.manual_computation``
(what ``shard_map`` and ``pmap`` lower to) becomes a
``xla.sdy.GlobalToLocalShape`` custom call, a ``call`` of the body and a
``xla.sdy.LocalToGlobalShape`` custom call, with the shardings as frontend
attributes; the module's ``sdy.mesh`` ops become its ``xla.sdy.meshes``
frontend attribute (``importer.py``).  ``sdy.sharding_constraint`` becomes
XLA's ``Sharding`` custom call with the sharding as the ``xla.sdy.sharding``
frontend attribute (as XLA's HLO export writes it): what the SPMD partitioner
reshards to, the value itself where a program is computed whole; one
that shards nothing is its operand.  ``sdy.sharding_group`` (``shard_alike``:
values to be sharded alike) becomes XLA's ``xla.sdy.ShardingGroup`` custom
call of no result, its ``xla.sdy.sharding_group_id`` a frontend attribute.
``sdy.sharding`` on the arguments and results becomes the
``xla.sdy.sharding`` frontend attribute of the parameters and the root
(``importer.py``).
"""
from __future__ import annotations

import re

from ...shape import Shape
from ..attributes import Raw
from .importer import OpContext, converter
from .types import to_shape


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _frontend(**values) -> Raw:
    return Raw("{" + ",".join(f"xla.sdy.{k}={_quoted(v)}" for k, v in values.items()) + "}")


@converter("sdy.manual_computation")
def _manual_computation(ctx: OpContext) -> list:
    op = ctx.op
    body = op.regions[0]
    local = [to_shape(a[1]) for a in body.args]
    manual = f"#sdy<manual_axes{op.attrs['manual_axes']}>"
    in_sh = f"#sdy.sharding_per_value<{op.attrs['in_shardings']}>"
    out_sh = f"#sdy.sharding_per_value<{op.attrs['out_shardings']}>"
    attrs = {"custom_call_target": Raw('"xla.sdy.GlobalToLocalShape"'), "custom_call_has_side_effect": True,
             "frontend_attributes": _frontend(in_shardings=in_sh, manual_axes=manual)}
    if len(local) == 1:
        tiles = [ctx.add("custom-call", local[0], ctx.operands, attrs)]
    else:
        tiles = ctx.results_of(ctx.add("custom-call", Shape.tuple(local), ctx.operands, attrs))
    comp = ctx.imp.region_computation(ctx, body, "body", local)
    comp.name = ctx.imp.fresh("xla.sdy.manual_computation_body")
    results = ctx.result_shapes()
    call_shape = comp.root.shape
    call = ctx.add("call", call_shape, tiles, {"to_apply": comp, "frontend_attributes": Raw('{inlineable="false"}')})
    attrs = {"custom_call_target": Raw('"xla.sdy.LocalToGlobalShape"'), "custom_call_has_side_effect": True,
             "frontend_attributes": _frontend(manual_axes=manual, out_shardings=out_sh)}
    if len(results) == 1:
        return [ctx.add("custom-call", results[0], [call], attrs)]
    parts = ctx.results_of(call, len(results))
    return ctx.results_of(ctx.add("custom-call", Shape.tuple(results), parts, attrs))


def _shards_nothing(sharding: str, meshes: dict) -> bool:
    """Whether a ``<@mesh, [{...}, ...]>`` sharding splits nothing: its mesh has no
    axis of more than one device (``<[]>``, ``<["x"=1]>``), or none of its dimension
    shardings (nor ``replicated=``) names an axis."""
    mesh, _, dims = sharding.strip("<>").partition(",")
    name = mesh.strip().lstrip("@").strip('"')
    sizes = re.findall(r"=\s*(\d+)", meshes.get(name, "?"))
    return (name in meshes and all(int(n) == 1 for n in sizes)) or '"' not in dims


@converter("sdy.sharding_constraint")
def _sharding_constraint(ctx: OpContext) -> list:
    """A constraint that shards nothing (jax writes ``<@empty_mesh, [{}]>`` around
    random keys in every program) is its operand; one that names mesh axes is
    XLA's ``Sharding`` custom call (its operand's value, wherever it is kept)."""
    meshes = dict(ctx.imp.syntax.attrs.get("sdy.meshes") or ())
    sharding = ctx.op.attrs["sharding"]
    if _shards_nothing(sharding, meshes):
        return list(ctx.operands)
    (x,) = ctx.operands
    attrs = {"custom_call_target": Raw('"Sharding"'),
             "frontend_attributes": _frontend(sharding=f"#sdy.sharding_per_value<[{sharding}]>")}
    return [ctx.add("custom-call", x.shape, [x], attrs)]


@converter("sdy.sharding_group")
def _sharding_group(ctx: OpContext) -> list:
    group = str(ctx.attr("group_id")).split(":")[0].strip()
    ctx.add("custom-call", Shape.tuple([]), list(ctx.operands),
            {"custom_call_target": Raw('"xla.sdy.ShardingGroup"'), "custom_call_has_side_effect": True,
             "frontend_attributes": _frontend(sharding_group_id=group)})
    return []
