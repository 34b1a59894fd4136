"""Sharding propagation: a sharding for every value of the entry computation.

jax's automatically sharded programs (``jax.jit`` with ``NamedSharding``s,
``with_sharding_constraint``) say how a few values are split over the
devices: the entry parameters, the results, and the ``Sharding`` custom calls
``with_sharding_constraint`` leaves.  They say it as HLO shardings
(``sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}``,
``{replicated}``, ``{maximal device=N}``, tuple shardings on a root tuple) or
as Shardy's (the ``xla.sdy.sharding`` frontend attribute over the module's
``xla.sdy.meshes``; a StableHLO program's ``sdy.sharding`` argument and
result attributes come in that way).  :class:`ShardingPropagation` reads them
and gives every other instruction of the entry computation a sharding,
written as its ``sharding=`` attribute, as XLA's ShardingPropagation does:

* forward, from operands: elementwise ops take their most split operand's
  sharding; broadcast, transpose and reshape (where dimensions split or merge
  cleanly) move the tiling with the dimensions; a reduce drops the reduced
  dimensions; a dot's result is split as its operands' batch and free
  dimensions are; tuples and get-tuple-element pass shardings through;
* backward, from users, by the same rules read the other way (a dot's
  operands from its result: batch and free dimensions, the contracting ones
  whole).

The given shardings are never changed; a propagated one is replaced only by
one that splits the value into more tiles (so the sweeps end).  A value no
rule reaches (constants, iota, what is computed by ``while``, ``call``,
``gather``...) is replicated.  Which tile each device holds is compared by
device (``from_index_map``), so shardings over any device order and with
replication (``last_tile_dim_replicate``) propagate alike.
"""
from __future__ import annotations

import math
import re

from ..errors import UnsupportedError
from ..hlo.collectives import frontend_attributes
from ..hlo.custom_call import SHARDING_ANNOTATIONS
from ..hlo.ir import HloInstruction, HloModule, Raw
from ..hlo.sharding import (Sharding, from_index_map, parse_shardings, replicated, sharding_text, with_rank)
from .shard_map import mesh_of, sdy_to_sharding

__all__ = ["ShardingPropagation", "module_devices", "given_shardings", "annotated", "write_sharding",
           "remap", "reshape_sharding", "index_map", "tiles", "is_auto_sharded"]

#: Custom calls that only say a value's sharding (their operand's value).
SHARDING_TARGETS = SHARDING_ANNOTATIONS
#: Custom calls of manual computations (``shard_map``): xlac.passes.shard_map's.
MANUAL_TARGETS = ("xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape", "SPMDFullToShardShape",
                  "SPMDShardToFullShape")


def target_of(inst: HloInstruction) -> str:
    v = inst.attrs.get("custom_call_target", "")
    return str(v.text if isinstance(v, Raw) else v).strip('"')


def module_devices(module: HloModule) -> int:
    """The devices a sharded module is split over: its Shardy mesh's, else its ``num_partitions``."""
    mesh = mesh_of(module)
    return math.prod(mesh.values()) if mesh else module.num_partitions


def is_auto_sharded(module: HloModule) -> bool:
    """Whether ``module`` is a global program with automatic shardings for the
    SPMD partitioner: a Shardy mesh of more than one device, a sharding on
    some entry instruction, and no manual computation (``shard_map``: the
    shard-map partitioner's) nor collective (then it is a per-device program)."""
    try:
        mesh = mesh_of(module)
    except UnsupportedError:          # refused where the program is run (shard_map's partitioner)
        return False
    if not mesh or math.prod(mesh.values()) < 2:
        return False
    any_sharding = False
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode == "custom-call" and target_of(inst) in MANUAL_TARGETS:
                return False
            if inst.opcode in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                               "partition-id", "replica-id"):
                return False
            if comp is module.entry and ("sharding" in inst.attrs or "xla.sdy.sharding" in
                                         frontend_attributes(inst)):
                any_sharding = True
    return any_sharding


# ---------------------------------------------------------------------------------------
# Shardings by device: which tile each device holds
# ---------------------------------------------------------------------------------------

def index_map(s: Sharding) -> dict:
    """``{device: tile index}`` of ``s``."""
    return {d: s.tile_index(d) for d in s.devices}


def tiles(s) -> int:
    """How many tiles a sharding (or a list of them) splits into."""
    if isinstance(s, list):
        return sum(tiles(x) for x in s)
    return math.prod(s.tile_dims)


def remap(s: Sharding, source_of: list) -> Sharding:
    """The sharding of an array whose dimension ``k`` is split as ``s``'s
    dimension ``source_of[k]`` (None: not split): a device holds the tile its
    index along those dimensions says; ``s``'s other dimensions become
    replication.  Always a sharding."""
    m = index_map(s)
    tile_dims = tuple(1 if src is None else s.tile_dims[src] for src in source_of)
    return from_index_map(tile_dims, {d: tuple(0 if src is None else i[src] for src in source_of)
                                      for d, i in m.items()})


def _reshape_groups(a: tuple, b: tuple) -> list | None:
    """Dimensions of shapes ``a`` and ``b`` (same element count) in groups of
    equal size: ``[(a dims, b dims), ...]``."""
    groups, i, j = [], 0, 0
    while i < len(a) or j < len(b):
        ga, gb = [], []
        pa = pb = 1
        while True:
            if pa <= pb and i < len(a) and (not ga or pa < pb or a[i] == 1):
                ga.append(i)
                pa *= a[i]
                i += 1
            elif j < len(b) and (not gb or pb < pa or b[j] == 1):
                gb.append(j)
                pb *= b[j]
                j += 1
            elif i < len(a) and pa < pb:
                ga.append(i)
                pa *= a[i]
                i += 1
            else:
                break
            if pa == pb and (i == len(a) or a[i] != 1) and (j == len(b) or b[j] != 1):
                break
        if pa != pb:
            return None
        groups.append((ga, gb))
    return groups


def reshape_sharding(s: Sharding, a: tuple, b: tuple) -> Sharding | None:
    """The sharding of ``reshape(x)`` to dimensions ``b`` that keeps every
    device's elements where they are, ``x`` of dimensions ``a`` split as
    ``s``; None when there is none.  Within a group of dimensions that
    split or merge, only the most major one may be split, evenly, and
    becomes the most major one of the other side (its tile is then one
    contiguous run of the group's elements on both sides)."""
    groups = _reshape_groups(tuple(a), tuple(b))
    if groups is None:
        return None
    source_of: list = [None] * len(b)
    for ga, gb in groups:
        split = [k for k in ga if s.tile_dims[k] > 1]
        if not split:
            continue
        k = split[0]
        big_a = [x for x in ga if a[x] > 1]
        big_b = [x for x in gb if b[x] > 1]
        if len(split) > 1 or not big_a or k != big_a[0] or not big_b:
            return None
        t = s.tile_dims[k]
        if a[k] % t or b[big_b[0]] % t:
            return None
        source_of[big_b[0]] = k
    return remap(s, source_of)


# ---------------------------------------------------------------------------------------
# Reading and writing shardings
# ---------------------------------------------------------------------------------------

def sdy_value_shardings(text: str, what: str) -> list:
    """``#sdy.sharding<@mesh, [{"x"}, {}]>`` or ``#sdy.sharding_per_value<[<@mesh,
    [...]>, ...]>`` -> per value, per dimension, the mesh axes it is split
    over.  Open dimensions (``?``) and priorities split nothing more;
    sub-axes are refused (UnsupportedError)."""
    values = []
    for m in re.finditer(r"<?@[\w.$-]+\s*,\s*\[(.*?)\](.*?)>", text):
        dims = []
        for group in re.findall(r"\{([^{}]*)\}", m.group(1)):
            axes = []
            for token in filter(None, (t.strip() for t in group.split(","))):
                if token == "?":
                    continue
                a = re.fullmatch(r'"([^"]+)"', token)
                if a is None:
                    raise UnsupportedError("sharding", f"{what}: sub-axis {token} in {m.group(0)}")
                axes.append(a.group(1))
            dims.append(axes)
        values.append(dims)
    return values


def _leaves(shape) -> list:
    return list(shape.tuple_shapes) if shape.is_tuple else [shape]


def _rank(shape) -> int:
    return len(shape.dimensions) if shape.is_array else 0


def given_shardings(inst: HloInstruction, n: int, mesh: dict | None) -> list | None:
    """The sharding written on ``inst`` (one per leaf of its shape), or None.
    HLO's ``sharding=`` first, else Shardy's ``xla.sdy.sharding``; a form
    xlac does not read (open dimensions, sub-axes, manual) is no sharding."""
    text = inst.attrs.get("sharding")
    leaves = _leaves(inst.shape)
    try:
        if text is not None:
            found = parse_shardings(str(text), n)
        else:
            sdy = frontend_attributes(inst).get("xla.sdy.sharding")
            if sdy is None or not mesh:
                return None
            found = [sdy_to_sharding(spec, mesh) for spec in sdy_value_shardings(sdy, inst.name)]
        if len(found) == 1 and len(leaves) > 1 and found[0].is_replicated:
            found = found * len(leaves)
        if len(found) != len(leaves):
            return None
        return [with_rank(s, _rank(shape), n) for s, shape in zip(found, leaves)]
    except UnsupportedError:
        return None


def annotated(inst: HloInstruction, n: int) -> list:
    """The shardings :class:`ShardingPropagation` wrote on ``inst`` (replicated when none)."""
    found = given_shardings(inst, n, None)
    return found if found is not None else [replicated(n, _rank(s)) for s in _leaves(inst.shape)]


def write_sharding(inst: HloInstruction, shardings: list) -> None:
    texts = [sharding_text(s) for s in shardings]
    inst.attrs["sharding"] = Raw(texts[0] if not inst.shape.is_tuple else "{" + ", ".join(texts) + "}")


# ---------------------------------------------------------------------------------------
# The rules: an instruction's sharding from its operands', and theirs from its
# ---------------------------------------------------------------------------------------

def _dot_dims(inst):
    lhs, rhs = inst.operands
    lb, rb = list(inst.attrs.get("lhs_batch_dims", ())), list(inst.attrs.get("rhs_batch_dims", ()))
    lc, rc = list(inst.attrs.get("lhs_contracting_dims", ())), list(inst.attrs.get("rhs_contracting_dims", ()))
    lf = [k for k in range(_rank(lhs.shape)) if k not in lb and k not in lc]
    rf = [k for k in range(_rank(rhs.shape)) if k not in rb and k not in rc]
    return lb, lc, lf, rb, rc, rf


def dot_result_sharding(inst, lhs: Sharding, rhs: Sharding) -> Sharding:
    """A dot's result split as its operands' batch and free dimensions are
    (the lhs's batch split when the two disagree)."""
    lb, _, lf, _, _, rf = _dot_dims(inst)
    ml, mr = index_map(lhs), index_map(rhs)
    tile_dims = tuple([lhs.tile_dims[k] for k in lb + lf] + [rhs.tile_dims[k] for k in rf])
    both = from_index_map(tile_dims, {d: tuple([ml[d][k] for k in lb + lf] + [mr[d][k] for k in rf])
                                      for d in ml})
    if both is not None:
        return both
    from_lhs = remap(lhs, lb + lf + [None] * len(rf))
    _, _, _, rb, _, _ = _dot_dims(inst)
    from_rhs = remap(rhs, rb + [None] * len(lf) + rf)
    return from_lhs if tiles(from_lhs) >= tiles(from_rhs) else from_rhs


def _best(candidates: list):
    best = None
    for c in candidates:
        if c is not None and (best is None or tiles(c) > tiles(best)):
            best = c
    return best


def forward(inst: HloInstruction, sh: dict, n: int) -> list | None:
    """``inst``'s sharding from its operands' (a list per leaf), or None."""
    ops = [sh.get(o) for o in inst.operands]
    op = inst.opcode
    if op == "tuple":
        if any(o is None for o in ops) or any(x.shape.is_tuple for x in inst.operands):
            return None
        return [o[0] for o in ops]
    if op == "get-tuple-element":
        return [ops[0][inst.attrs["index"]]] if ops[0] is not None and not inst.shape.is_tuple else None
    if inst.shape.is_tuple or not inst.shape.is_array or any(o.shape.is_tuple for o in inst.operands):
        return None
    s = _forward_array(inst, [None if o is None else o[0] for o in ops])
    return None if s is None else [s]


def _forward_array(inst: HloInstruction, ops: list):
    op = inst.opcode
    rank = _rank(inst.shape)
    if _elementwise(inst):
        return _best([o for o, x in zip(ops, inst.operands) if o is not None and _rank(x.shape) == rank])
    if op in ("copy", "custom-call") and len(ops) == 1 and ops[0] is not None and \
            inst.operands[0].shape.dimensions == inst.shape.dimensions and \
            (op == "copy" or target_of(inst) in SHARDING_TARGETS):
        return ops[0]
    if ops and ops[0] is None:
        return None
    if op == "broadcast":
        dims = list(inst.attrs.get("dimensions", ()))
        return remap(ops[0], [dims.index(k) if k in dims else None for k in range(rank)])
    if op == "transpose":
        return remap(ops[0], list(inst.attrs["dimensions"]))
    if op == "reshape":
        return reshape_sharding(ops[0], inst.operands[0].shape.dimensions, inst.shape.dimensions)
    if op == "reduce" and len(inst.operands) == 2:
        reduced = set(inst.attrs.get("dimensions", ()))
        return remap(ops[0], [k for k in range(_rank(inst.operands[0].shape)) if k not in reduced])
    if op == "dot" and ops[1] is not None:
        return dot_result_sharding(inst, ops[0], ops[1])
    return None


def backward(user: HloInstruction, k: int, sh: dict, n: int):
    """The sharding ``user`` (sharded as ``sh`` says) would have its operand ``k`` take, or None."""
    us = sh.get(user)
    operand = user.operands[k]
    if us is None:
        return None
    op = user.opcode
    if op == "tuple":
        return None if operand.shape.is_tuple else [us[k]]
    if user.shape.is_tuple or operand.shape.is_tuple or not operand.shape.is_array:
        return None
    s = us[0]
    orank = _rank(operand.shape)
    if _elementwise(user) or (op in ("copy", "custom-call") and
                              (op == "copy" or target_of(user) in SHARDING_TARGETS)):
        return [s] if orank == _rank(user.shape) else None
    if op == "broadcast" and k == 0:
        return [remap(s, list(user.attrs.get("dimensions", ())))]
    if op == "transpose":
        perm = list(user.attrs["dimensions"])
        return [remap(s, [perm.index(j) for j in range(orank)])]
    if op == "reshape":
        r = reshape_sharding(s, user.shape.dimensions, operand.shape.dimensions)
        return None if r is None else [r]
    if op == "reduce" and len(user.operands) == 2 and k == 0:
        reduced = set(user.attrs.get("dimensions", ()))
        kept = [j for j in range(orank) if j not in reduced]
        return [remap(s, [kept.index(j) if j in kept else None for j in range(orank)])]
    if op == "dot":
        lb, lc, lf, rb, rc, rf = _dot_dims(user)
        nb = len(lb)
        if k == 0:
            src = {d: i for i, d in enumerate(lb)} | {d: nb + i for i, d in enumerate(lf)}
        else:
            src = {d: i for i, d in enumerate(rb)} | {d: nb + len(lf) + i for i, d in enumerate(rf)}
        return [remap(s, [src.get(j) for j in range(orank)])]
    return None


def _elementwise(inst: HloInstruction) -> bool:
    from ..hlo.opcodes import is_elementwise
    return is_elementwise(inst.opcode) and inst.opcode not in ("rng",)


class ShardingPropagation:
    """Pass: a ``sharding=`` on every instruction of the entry computation
    (see the module docstring).  Does nothing to a module without shardings
    or on one device."""

    name = "sharding-propagation"

    def run(self, module: HloModule) -> bool:
        n = module_devices(module)
        if n < 2:
            return False
        mesh = mesh_of(module)
        comp = module.entry
        comp.compute_users()
        order = comp.post_order()
        fixed = {}
        for inst in order:
            g = given_shardings(inst, n, mesh)
            if g is not None:
                fixed[inst] = g
        if not fixed:
            return False
        sh = dict(fixed)
        for _ in range(8):
            changed = False
            for inst in order:
                if inst not in fixed:
                    changed |= self._offer(sh, inst, forward(inst, sh, n))
            for inst in reversed(order):
                if inst not in fixed:
                    for user in inst.users:
                        for k, o in enumerate(user.operands):
                            if o is inst:
                                changed |= self._offer(sh, inst, backward(user, k, sh, n))
            if not changed:
                break
        for inst in order:
            leaves = sh.get(inst) or [replicated(n, _rank(s)) for s in _leaves(inst.shape)]
            if not any(s.is_token or not (s.is_array or s.is_tuple) for s in _leaves(inst.shape)):
                write_sharding(inst, leaves)
        module.attrs["num_partitions"] = n
        return True

    @staticmethod
    def _offer(sh: dict, inst: HloInstruction, candidate) -> bool:
        """Take ``candidate`` for ``inst`` when it splits into more tiles than what it has."""
        if candidate is None or any(c is None for c in candidate):
            return False
        if len(candidate) != len(_leaves(inst.shape)):
            return False
        current = sh.get(inst)
        if current is not None and tiles(candidate) <= tiles(current):
            return False
        sh[inst] = candidate
        return True
