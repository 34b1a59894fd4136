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

* slice, dynamic-slice, dynamic-update-slice, pad, reverse and concatenate
  keep the split of the dimensions they take whole; gather, scatter and
  convolution map their dimensions (:func:`gather_sources`,
  :func:`conv_sources`);
* the values of a sharding group (Shardy's ``xla.sdy.ShardingGroup`` custom
  calls of one ``xla.sdy.sharding_group_id``: ``shard_alike``) take the
  group's most split sharding; the calls, their work done, are removed;
* a while loop's state is its operand's shardings, replaced leaf by leaf by
  the body's result where that splits into more tiles, until the body gives
  back what it is given; bodies, conditions and branches are propagated with
  their parameters fixed so, and their instructions annotated too.

The given shardings are never changed; a propagated one is replaced only by
one that splits the value into more tiles (so the sweeps end).  A value no
rule reaches (constants, what sort or select-and-scatter compute...) is
replicated.  A sharding xlac does not read is an error on an entry parameter
or the root (:class:`UnreadSharding`), a note elsewhere.  Which tile each device holds is compared by
device (``from_index_map``), so shardings over any device order and with
replication (``last_tile_dim_replicate``) propagate alike.
"""
from __future__ import annotations

import math
import re

from ..errors import UnsupportedError
from ..hlo.collectives import frontend_attributes
from ..hlo.custom_call import SHARDING_ANNOTATIONS, SHARDING_GROUP, matrix_operand
from ..hlo.ir import Diagnostic, HloInstruction, HloModule, Raw
from ..hlo.sharding import (Sharding, from_index_map, parse_shardings, replicated, sharding_text, with_rank)
from .shard_map import mesh_of, meshes_of, sdy_to_sharding

__all__ = ["ShardingPropagation", "UnreadSharding", "gspmd_devices", "module_devices", "given_shardings", "annotated", "write_sharding",
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
    """The devices a sharded module is split over: its Shardy mesh's, else its
    ``num_partitions``, else (the GSPMD form of jax's HLO text, no header) the
    devices its entry's tiled shardings name."""
    mesh = mesh_of(module)
    if mesh:
        return math.prod(mesh.values())
    return module.num_partitions if module.num_partitions > 1 else gspmd_devices(module)


def gspmd_devices(module: HloModule) -> int:
    """The devices the tiled ``sharding=`` of the entry's parameters and root
    name (1 when none is tiled)."""
    n = 1
    entry = module.entry
    for inst in entry.parameters + [entry.root]:
        text = inst.attrs.get("sharding")
        if text is None:
            continue
        try:
            found = parse_shardings(str(getattr(text, "text", text)), 1)
        except UnsupportedError:
            continue
        n = max([n] + [len(s.devices) for s in found if not s.is_replicated])
    return n


def is_auto_sharded(module: HloModule) -> bool:
    """Whether ``module`` is a global program with automatic shardings for the
    SPMD partitioner, and no manual computation (``shard_map``: the shard-map
    partitioner's) nor collective (then it is a per-device program): either
    Shardy's (a mesh of more than one device and a sharding on some entry
    instruction) or GSPMD's (no mesh, no ``num_partitions`` nor
    ``replica_count`` in the header, not scheduled, and a tiled ``sharding=``
    on an entry parameter or the root: a module with ``num_partitions`` and
    shardings is XLA's per-device program, its parameters the tiles)."""
    try:
        mesh = mesh_of(module)
    except UnsupportedError:          # refused where the program is run (shard_map's partitioner)
        return False
    if mesh:
        n = math.prod(mesh.values())
    elif module.num_partitions > 1 or module.replica_count > 1 or str(module.attrs.get("is_scheduled")) == "True":
        return False
    else:
        n = gspmd_devices(module)
    if n < 2:
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


def merged_reshape_sharding(s: Sharding, a: tuple, b: tuple) -> Sharding | None:
    """For a reshape that merges dimensions split more than one way (a
    flatten of a value split by rows and columns): the merged dimension split
    into all their tiles, in row-major order of the tile indices, where it
    divides evenly — the value it is reshaped from then needs only the minor
    splits moved onto its major dimension (an all-to-all), as XLA does.
    None when :func:`reshape_sharding` applies or nothing fits."""
    groups = _reshape_groups(tuple(a), tuple(b))
    if groups is None:
        return None
    m = index_map(s)
    tile_dims = [1] * len(b)
    index = {dev: [0] * len(b) for dev in m}
    moved = False
    for ga, gb in groups:
        split = [k for k in ga if s.tile_dims[k] > 1]
        big_b = [x for x in gb if b[x] > 1]
        if not split:
            continue
        if len(big_b) != 1:
            return None
        t = math.prod(s.tile_dims[k] for k in split)
        major = next(x for x in ga if a[x] > 1)
        if a[major] % t or b[big_b[0]] % t:
            return None
        moved |= len(split) > 1
        tile_dims[big_b[0]] = t
        for dev in m:
            flat = 0
            for k in split:
                flat = flat * s.tile_dims[k] + m[dev][k]
            index[dev][big_b[0]] = flat
    if not moved:
        return None
    return from_index_map(tile_dims, {dev: tuple(v) for dev, v in index.items()})


# ---------------------------------------------------------------------------------------
# Reading and writing shardings
# ---------------------------------------------------------------------------------------

class MeshTable(dict):
    """The module's meshes by name (``meshes_of``); a name not found (or a
    single unnamed mesh, key None) falls back to the first."""

    def get(self, name, default=None):
        if name in self:
            return self[name]
        return next(iter(self.values())) if self else default


def sdy_value_shardings(text: str, what: str) -> list:
    """``#sdy.sharding<@mesh, [{"x"}, {}]>`` or ``#sdy.sharding_per_value<[<@mesh,
    [...]>, ...]>`` -> per value, (the mesh's name, per dimension the mesh
    axes it is split over).  Open dimensions (``?``) and priorities split
    nothing more; sub-axes are refused (UnsupportedError)."""
    values = []
    for m in re.finditer(r"<?@([\w.$-]+)\s*,\s*\[(.*?)\](.*?)>", text):
        dims = []
        for group in re.findall(r"\{([^{}]*)\}", m.group(2)):
            axes = []
            for token in filter(None, (t.strip() for t in group.split(","))):
                if token == "?":
                    continue
                a = re.fullmatch(r'"([^"]+)"', token)
                if a is None:
                    raise UnsupportedError("sharding", f"{what}: sub-axis {token} in {m.group(0)}")
                axes.append(a.group(1))
            dims.append(axes)
        values.append((m.group(1), dims))
    return values


def open_dims(text: str) -> list:
    """Per value of a Shardy sharding, its open dimensions (``{?}``,
    ``{"y", ?}``: a partitioner may split them further; jax's constraints
    on values of ``Auto`` mesh axes)."""
    return [[k for k, g in enumerate(re.findall(r"\{([^{}]*)\}", v)) if "?" in g]
            for v in re.findall(r"<?@[\w.$-]+\s*,\s*\[(.*?)\]", text)]


def _leaves(shape) -> list:
    return list(shape.tuple_shapes) if shape.is_tuple else [shape]


def _rank(shape) -> int:
    return len(shape.dimensions) if shape.is_array else 0


def given_shardings(inst: HloInstruction, n: int, mesh: dict | None, open_too: bool = False) -> list | None:
    """The sharding written on ``inst`` (one per leaf of its shape), or None.
    HLO's ``sharding=`` first, else Shardy's ``xla.sdy.sharding``.  A form
    xlac does not read (sub-axes, manual, ``last_tile_dims``, tile
    dimensions not matching the rank, devices not matching the module's)
    raises :class:`UnreadSharding` naming the instruction and the sharding.
    ``mesh``: the module's meshes (a :class:`MeshTable`) or its one mesh.
    A constraint with open dimensions (:func:`open_dims`) is not a given
    sharding (None) unless ``open_too``: then its axes, the open dimensions
    split no further."""
    text = inst.attrs.get("sharding")
    leaves = _leaves(inst.shape)
    shown = str(getattr(text, "text", text)) if text is not None else None
    try:
        if text is not None:
            found = parse_shardings(str(text), n)
        else:
            sdy = frontend_attributes(inst).get("xla.sdy.sharding")
            if sdy is None or not mesh or (inst.opcode == "custom-call" and not open_too and
                                           any(open_dims(sdy))):
                return None
            shown = sdy
            meshes = mesh if isinstance(mesh, MeshTable) else MeshTable({None: mesh})
            found = [sdy_to_sharding(spec, meshes.get(name)) for name, spec in sdy_value_shardings(sdy, inst.name)]
        if len(found) == 1 and len(leaves) > 1 and found[0].is_replicated:
            found = found * len(leaves)
        if len(found) != len(leaves):
            raise UnsupportedError("sharding", f"{len(found)} sharding(s) for {len(leaves)} value(s)")
        for s in found:
            if not s.is_replicated and len(s.devices) == len(set(s.devices)) and len(s.devices) != n:
                raise UnsupportedError("sharding", f"{len(s.devices)} devices in a module on {n}")
        return [with_rank(s, _rank(shape), n) for s, shape in zip(found, leaves)]
    except UnsupportedError as e:
        raise UnreadSharding(inst.name, shown, str(e)) from None


class UnreadSharding(UnsupportedError):
    """A sharding xlac does not read, naming the instruction and the sharding."""

    def __init__(self, name: str, sharding: str, why: str):
        self.name, self.sharding = name, sharding
        why = why.removeprefix("not supported yet: sharding").strip(" ()")
        super().__init__("sharding", f"instruction {name}: sharding {sharding}: {why}")


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


def lapack_batch(inst: HloInstruction) -> int | None:
    """The number of batch dimensions of a call of jax's LAPACK targets
    (``lapack_?potrf_ffi``, ...) that every operand and result shares with
    its matrix (each batch element a problem of its own), or None."""
    k = matrix_operand(inst) if inst.opcode == "custom-call" else None
    if k is None:
        return None
    m = inst.operands[k]
    nb = _rank(m.shape) - 2
    batch = tuple(m.shape.dimensions[:nb])
    shapes = [o.shape for o in inst.operands] + _leaves(inst.shape)
    if nb < 1 or any(not sh.is_array or tuple(sh.dimensions[:nb]) != batch for sh in shapes):
        return None
    return nb


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
        # A leaf no rule reached yet counts as whole (the loop state of a scan
        # is a tuple of split values, counters and constants).
        if all(o is None for o in ops) or any(x.shape.is_tuple for x in inst.operands):
            return None
        return [replicated(n, _rank(x.shape)) if o is None else o[0] for o, x in zip(ops, inst.operands)]
    if op == "get-tuple-element":
        return [ops[0][inst.attrs["index"]]] if ops[0] is not None and not inst.shape.is_tuple else None
    if op == "reduce" and inst.shape.is_tuple and all(x.shape.is_array for x in inst.operands):
        # A variadic reduce (argmax): every result as its most split input, less the reduced dimensions.
        half = len(inst.operands) // 2
        best = _best([o[0] for o in ops[:half] if o is not None])
        if best is None:
            return None
        reduced = set(inst.attrs.get("dimensions", ()))
        kept = remap(best, [k for k in range(_rank(inst.operands[0].shape)) if k not in reduced])
        return [kept] * half
    if op == "topk" and ops[0] is not None:
        r = _rank(inst.operands[0].shape)
        return [remap(ops[0][0], [None if k == r - 1 else k for k in range(r)])] * 2
    if op == "sort" and all(x.shape.is_array for x in inst.operands):
        # Split as its most split operand, but along the sorted dimension.
        best = _best([o[0] for o in ops if o is not None])
        if best is None:
            return None
        d = inst.attrs["dimensions"][0]
        return [remap(best, [None if k == d else k for k in range(_rank(inst.shape.leaves()[0]))])] * \
            len(inst.operands)
    batch = lapack_batch(inst)
    if batch is not None:
        # A LAPACK call on a batch of matrices: split as its matrix on the batch dimensions.
        m = ops[matrix_operand(inst)]
        return None if m is None else [remap(m[0], [d if d < batch else None for d in range(_rank(leaf))])
                                       for leaf in _leaves(inst.shape)]
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
    if op == "scatter" and len(inst.operands) == 3:
        # As its operand, else as its updates where they cover operand dimensions whole.
        from_updates = None if ops[2] is None else remap(ops[2], scatter_update_dims(inst))
        return _best([ops[0], from_updates])
    if op == "dot" and (ops[0] is not None or ops[1] is not None):
        # One operand's split is enough (as in XLA's propagation): the other
        # counts as whole until it has its own (a constant never does).
        known = ops[0] if ops[0] is not None else ops[1]
        lhs, rhs = (o if o is not None else replicated(len(known.devices), _rank(x.shape))
                    for o, x in zip(ops[:2], inst.operands[:2]))
        return dot_result_sharding(inst, lhs, rhs)
    if ops and ops[0] is None:
        return None
    if op == "broadcast":
        dims = list(inst.attrs.get("dimensions", ()))
        return remap(ops[0], [dims.index(k) if k in dims else None for k in range(rank)])
    if op == "transpose":
        return remap(ops[0], list(inst.attrs["dimensions"]))
    if op == "reshape":
        a, b = inst.operands[0].shape.dimensions, inst.shape.dimensions
        return reshape_sharding(ops[0], a, b) or merged_reshape_sharding(ops[0], a, b)
    if op == "reduce" and len(inst.operands) == 2:
        reduced = set(inst.attrs.get("dimensions", ()))
        return remap(ops[0], [k for k in range(_rank(inst.operands[0].shape)) if k not in reduced])
    if op in ("slice", "pad", "reverse"):
        return remap(ops[0], shifted_dims(inst))
    if op == "dynamic-slice":
        return remap(ops[0], kept_dims(inst))
    if op == "dynamic-update-slice":
        return remap(ops[0], kept_dims(inst))
    if op == "concatenate":
        return _best([remap(o, kept_dims(inst)) for o in ops if o is not None])
    if op == "reduce-window" and len(inst.operands) == 2:
        return ops[0]
    if op == "select-and-scatter":
        return remap(ops[0], window_local_dims(inst))
    if op == "gather":
        return gather_result_sharding(inst, ops[0], ops[1])
    if op == "convolution":
        return conv_result_sharding(inst, ops[0], ops[1])
    return None


def scatter_update_dims(inst: HloInstruction) -> list:
    """Per operand dimension of a (one-operand) scatter, the updates'
    dimension that covers it element for element (a split there stays
    local), else None: a window dimension the updates take whole, and a
    batching dimension (the updates' scatter dimension its indices' batching
    dimension pairs with)."""
    a = inst.attrs
    x, idx, upd = inst.operands
    xr, ur = _rank(x.shape), _rank(upd.shape)
    ivd = a.get("index_vector_dim", _rank(idx.shape))
    inserted, obatch = list(a.get("inserted_window_dims", ())), list(a.get("input_batching_dims", ()))
    ibatch, uwd = list(a.get("scatter_indices_batching_dims", ())), list(a.get("update_window_dims", ()))
    window_of = [d for d in range(xr) if d not in inserted and d not in obatch]
    out = [None] * xr
    for k, d in enumerate(window_of):
        if k < len(uwd) and upd.shape.dimensions[uwd[k]] == x.shape.dimensions[d]:
            out[d] = uwd[k]
    scatter_dims = [j for j in range(ur) if j not in uwd]
    idx_dims = [j for j in range(_rank(idx.shape)) if j != ivd]
    for d, i in zip(obatch, ibatch):
        if i in idx_dims and idx_dims.index(i) < len(scatter_dims):
            out[d] = scatter_dims[idx_dims.index(i)]
    return out


def window_local_dims(inst: HloInstruction) -> list:
    """Per dimension of a ``select-and-scatter``, itself when its windows do
    not overlap there (no padding nor dilation, the stride at least the
    window: a split between whole windows stays local), else None."""
    from ..hlo.window import window_of
    return [k if (w.size <= w.stride and w.padding_low == 0 and w.padding_high == 0
                  and w.window_dilation == 1 and w.base_dilation == 1) else None
            for k, w in enumerate(window_of(inst.attrs).dimensions)]


def kept_dims(inst: HloInstruction) -> list:
    """Per dimension of ``inst``'s result, the same operand dimension when it
    is taken whole, element for element (a split there stays local), else
    None: slice, dynamic-slice, dynamic-update-slice, pad, reverse,
    concatenate."""
    op = inst.opcode
    x = inst.operands[0]
    dims = x.shape.dimensions
    rank = len(dims)
    if op == "slice":
        return [k if tuple(inst.attrs["slice"][k]) == (0, dims[k], 1) else None for k in range(rank)]
    if op == "dynamic-slice":
        return [k if inst.attrs["dynamic_slice_sizes"][k] == dims[k] else None for k in range(rank)]
    if op == "dynamic-update-slice":
        return [k if inst.operands[1].shape.dimensions[k] == dims[k] else None for k in range(rank)]
    if op == "pad":
        return [k if tuple(inst.attrs["padding"][k]) == (0, 0, 0) else None for k in range(rank)]
    if op == "reverse":
        return [None if k in inst.attrs.get("dimensions", ()) else k for k in range(rank)]
    if op == "concatenate":
        return [None if k in inst.attrs.get("dimensions", ()) else k for k in range(rank)]
    return [None] * rank


def shifted_dims(inst: HloInstruction) -> list:
    """Per dimension of a slice's, pad's or reverse's result, the same operand
    dimension where a split passes through (None where it does not): every
    dimension but a pad's interior-padded ones.  A split dimension the op
    cuts is partitioned by moving tiles between neighbours
    (collective-permute), as XLA does."""
    if inst.opcode == "pad":
        return [k if p[2] == 0 else None for k, p in enumerate(inst.attrs["padding"])]
    return list(range(_rank(inst.shape)))


def gather_dims(inst: HloInstruction):
    """A gather's (offset dims, collapsed dims, start index map, index vector
    dim, slice sizes, operand batching dims)."""
    a = inst.attrs
    return (list(a.get("offset_dims", ())), list(a.get("collapsed_slice_dims", ())),
            list(a.get("start_index_map", ())), a.get("index_vector_dim", _rank(inst.operands[1].shape)),
            list(a.get("slice_sizes", ())), list(a.get("operand_batching_dims", ())))


def gather_sources(inst: HloInstruction) -> tuple:
    """Per result dimension of a gather: ("i", indices dimension) for a batch
    dimension, ("o", operand dimension) for an offset dimension the slice
    takes whole, or None."""
    offset, collapsed, start_map, ivd, sizes, obatch = gather_dims(inst)
    x, idx = inst.operands
    kept = [d for d in range(_rank(x.shape)) if d not in collapsed and d not in obatch]
    batch_idx = [d for d in range(_rank(idx.shape)) if d != ivd]
    out, b = [], 0
    for k in range(_rank(inst.shape)):
        if k in offset:
            d = kept[offset.index(k)]
            out.append(("o", d) if sizes[d] == x.shape.dimensions[d] and d not in start_map else None)
        else:
            out.append(("i", batch_idx[b]))
            b += 1
    return tuple(out)


def gather_result_sharding(inst, xs, ids):
    src = gather_sources(inst)
    obatch = list(inst.attrs.get("operand_batching_dims", ()))
    ibatch = list(inst.attrs.get("start_indices_batching_dims", ()))
    # The operand's offset dimensions, and its batching dimensions through the indices' they pair with.
    from_x = remap(xs, [s[1] if s and s[0] == "o" else obatch[ibatch.index(s[1])] if s and s[1] in ibatch
                        else None for s in src]) if xs is not None else None
    from_i = remap(ids, [s[1] if s and s[0] == "i" else None for s in src]) if ids is not None else None
    if from_x is not None and from_i is not None:
        both = combine(from_x, from_i)
        if both is not None:
            return both
    return _best([from_x, from_i])


def combine(a: Sharding, b: Sharding):
    """A sharding split as ``a`` on its split dimensions and as ``b`` on the
    others, when the devices agree; None otherwise."""
    ma, mb = index_map(a), index_map(b)
    tile_dims = tuple(ta if ta > 1 else tb for ta, tb in zip(a.tile_dims, b.tile_dims))
    return from_index_map(tile_dims, {d: tuple(ia if ta > 1 else ib for ia, ib, ta in
                                               zip(ma[d], mb[d], a.tile_dims)) for d in ma})


def conv_sources(inst: HloInstruction) -> tuple:
    """Per result dimension of a convolution: ("l", input dimension) for the
    batch and spatial dimensions, ("r", kernel output feature dimension) for
    the feature dimension (None where groups make them not map)."""
    from ..hlo.window import conv_dimension_numbers_of
    dn = conv_dimension_numbers_of(inst.attrs)
    grouped = int(inst.attrs.get("feature_group_count", 1) or 1) > 1 or \
        int(inst.attrs.get("batch_group_count", 1) or 1) > 1
    out = [None] * _rank(inst.shape)
    out[dn.output_batch_dimension] = None if grouped else ("l", dn.input_batch_dimension)
    out[dn.output_feature_dimension] = None if grouped else ("r", dn.kernel_output_feature_dimension)
    for o, i in zip(dn.output_spatial_dimensions, dn.input_spatial_dimensions):
        out[o] = ("l", i)
    return tuple(out)


def conv_result_sharding(inst, ls, rs):
    src = conv_sources(inst)
    from_l = remap(ls, [s[1] if s and s[0] == "l" else None for s in src]) if ls is not None else None
    from_r = remap(rs, [s[1] if s and s[0] == "r" else None for s in src]) if rs is not None else None
    if from_l is not None and from_r is not None:
        both = combine(from_l, from_r)
        if both is not None:
            return both
    return _best([from_l, from_r])


def _back_from_sources(s: Sharding, src: tuple, tag: str, orank: int) -> Sharding:
    """An operand's sharding from its user's (``s``), through ``src`` (per
    user dimension, (tag, operand dimension) or None)."""
    back = {x[1]: k for k, x in enumerate(src) if x is not None and x[0] == tag}
    return remap(s, [back.get(j) for j in range(orank)])


def backward(user: HloInstruction, k: int, sh: dict, n: int):
    """The sharding ``user`` (sharded as ``sh`` says) would have its operand ``k`` take, or None."""
    us = sh.get(user)
    operand = user.operands[k]
    if us is None:
        return None
    op = user.opcode
    if op == "tuple":
        return None if operand.shape.is_tuple else [us[k]]
    if op == "reduce" and user.shape.is_tuple and k < len(user.operands) // 2 and operand.shape.is_array:
        reduced = set(user.attrs.get("dimensions", ()))
        kept = [j for j in range(_rank(operand.shape)) if j not in reduced]
        return [remap(us[0], [kept.index(j) if j in kept else None for j in range(_rank(operand.shape))])]
    if op == "topk":
        return [remap(us[0], [None if j == _rank(operand.shape) - 1 else j for j in range(_rank(operand.shape))])]
    if op == "sort" and operand.shape.is_array:
        d = user.attrs["dimensions"][0]
        return [remap(us[0], [None if j == d else j for j in range(_rank(operand.shape))])]
    batch = lapack_batch(user)
    if batch is not None:
        return [remap(us[0], [d if d < batch else None for d in range(_rank(operand.shape))])]
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
    if op in ("slice", "dynamic-slice", "pad", "reverse", "concatenate", "dynamic-update-slice") and \
            _rank(operand.shape) == _rank(user.shape):
        kept = shifted_dims(user) if op in ("slice", "pad", "reverse") else kept_dims(user)
        return [remap(s, [j if kept[j] is not None else None for j in range(orank)])]
    if op == "scatter" and len(user.operands) == 3 and k == 0:
        return [s]
    if op == "scatter" and len(user.operands) == 3 and k == 2:
        dims = scatter_update_dims(user)
        return [remap(s, [dims.index(j) if j in dims else None for j in range(orank)])]
    if op == "reduce-window" and len(user.operands) == 2 and k == 0:
        return [s]
    if op == "select-and-scatter" and k < 2:
        return [remap(s, window_local_dims(user))]
    if op == "gather" and k < 2:
        return [_back_from_sources(s, gather_sources(user), "oi"[k], orank)]
    if op == "convolution":
        return [_back_from_sources(s, conv_sources(user), "lr"[k], orank)]
    return None


def _adds_dimensions(inst: HloInstruction) -> bool:
    return inst.opcode == "broadcast" and _rank(inst.operands[0].shape) < _rank(inst.shape)


def _sharding_groups(module: HloModule) -> dict:
    """Each computation's sharding groups (lists of values of one shape, in
    the order of their ``xla.sdy.ShardingGroup`` calls), the calls removed."""
    groups = {}
    for comp in module.computations:
        calls = [i for i in comp.instructions if target_of(i) == SHARDING_GROUP and not i.users]
        by_id = {}
        for call in calls:
            key = frontend_attributes(call).get("xla.sdy.sharding_group_id", "")
            by_id.setdefault(key, []).extend(o for o in call.operands if o.shape.is_array)
        for members in by_id.values():
            shapes = {tuple(m.shape.dimensions) for m in members}
            if len(members) > 1 and len(shapes) == 1:
                groups.setdefault(comp, []).append(list(dict.fromkeys(members)))
        comp.remove_instructions(calls)
    return groups


def _elementwise(inst: HloInstruction) -> bool:
    from ..hlo.opcodes import is_elementwise
    return is_elementwise(inst.opcode) and inst.opcode not in ("rng",)


class ShardingPropagation:
    """Pass: a ``sharding=`` on every instruction of the entry computation and
    of the bodies and conditions of its while loops and the branches of its
    conditionals (see the module docstring).  Does nothing to a module
    without shardings or on one device."""

    name = "sharding-propagation"

    def run(self, module: HloModule) -> bool:
        n = module_devices(module)
        if n < 2:
            return False
        mesh = MeshTable(meshes_of(module))
        self.n = n
        self.given = {}
        self.open = {}          # a constraint with open dimensions -> (its axes, its open dimensions)
        entry = module.entry
        for comp in module.computations:
            for inst in comp.instructions:
                try:
                    g = given_shardings(inst, n, mesh)
                except UnreadSharding as e:
                    # The entry's parameters and results are how the caller's
                    # arrays are cut: not read, nothing can run.  Inside, a
                    # constraint not read constrains nothing: said in a note.
                    if comp is entry and (inst.opcode == "parameter" or inst is entry.root):
                        raise
                    module.diagnostics.append(Diagnostic(self.name, inst.name, f"{e.name}: sharding {e.sharding} "
                                                         "not read, propagated as if it had none"))
                    continue
                if g is not None:
                    self.given[inst] = g
                elif inst.opcode == "custom-call" and target_of(inst) in SHARDING_TARGETS:
                    sdy = frontend_attributes(inst).get("xla.sdy.sharding")
                    opened = open_dims(sdy) if sdy else []
                    axes = given_shardings(inst, n, mesh, open_too=True) if any(opened) else None
                    if axes is not None:
                        self.open[inst] = (axes[0], opened[0])
        self.groups = _sharding_groups(module)
        if not any(i in self.given for i in module.entry.instructions):
            return bool(self.groups)
        self.memo = {}
        self._write(module.entry, self._propagate(module.entry, {}))
        module.attrs["num_partitions"] = n
        return True

    def _propagate(self, comp, params: dict) -> dict:
        """Every instruction of ``comp`` -> its shardings (a list per leaf),
        the parameters fixed as ``params`` says (parameter number -> list)."""
        key = (comp, tuple((k, tuple(v)) for k, v in sorted(params.items())))
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = {}                     # a recursive call (not in HLO) sees nothing
        comp.compute_users()
        order = comp.post_order()
        fixed = {}
        for inst in order:
            if inst.opcode == "parameter" and inst.parameter_number in params:
                fixed[inst] = params[inst.parameter_number]
            elif inst in self.given:
                fixed[inst] = self.given[inst]
        sh = dict(fixed)
        for sweep in range(8):
            changed = deferred = False
            for inst in order:
                # A broadcast that adds dimensions takes its users' sharding
                # first (as XLA's propagation does for broadcast-like ops): a
                # small operand gathered is cheaper than a big result moved.
                if inst not in fixed and sweep == 0 and _adds_dimensions(inst):
                    deferred = True
                elif inst not in fixed:
                    changed |= self._offer(sh, inst, self._forward(inst, sh))
            for inst in reversed(order):
                if inst not in fixed and inst not in self.open:
                    for user in inst.users:
                        for k, o in enumerate(user.operands):
                            if o is inst:
                                changed |= self._offer(sh, inst, backward(user, k, sh, self.n))
            for members in self.groups.get(comp, ()):
                best = _best([sh.get(m) for m in members])
                for m in members:
                    if m not in fixed:
                        changed |= self._offer(sh, m, best)
            if not changed and not deferred:        # (a broadcast deferred: its forward sweep next)
                break
        self.memo[key] = sh
        return sh

    def _forward(self, inst, sh: dict):
        if inst in self.open:
            # Its axes, and its operand's split on the open dimensions (when the devices agree).
            axes, opened = self.open[inst]
            op = sh.get(inst.operands[0])
            if op is None:
                return [axes]
            return [combine(axes, remap(op[0], [d if d in opened else None for d in range(_rank(inst.shape))]))
                    or axes]
        if inst.opcode == "while":
            return self._loop_state(inst, sh)
        if inst.opcode == "conditional":
            return self._branches_result(inst, sh)
        return forward(inst, sh, self.n)

    def _whole(self, inst) -> list:
        return [replicated(self.n, _rank(s)) for s in _leaves(inst.shape)]

    def _loop_state(self, inst, sh: dict) -> list:
        """A while loop's state: its operand's shardings, each replaced by the
        body's result for it where that splits into more tiles, until the
        body gives back what it is given (the fixed point both the body's
        parameter and its root are partitioned with)."""
        state = sh.get(inst.operands[0]) or self._whole(inst)
        current = sh.get(inst)
        if current is not None:
            state = [c if tiles(c) > tiles(s) else s for c, s in zip(current, state)]
        body = inst.attrs["body"]
        for _ in range(4):
            out = self._propagate(body, {0: state}).get(body.root) or state
            new = [o if tiles(o) > tiles(s) else s for o, s in zip(out, state)]
            if new == state:
                break
            state = new
        return state

    def _branches_result(self, inst, sh: dict):
        """A conditional's result: the branches' roots, each branch given its operand's sharding."""
        from ..hlo.dynamic import branch_computations
        results = []
        for k, branch in enumerate(branch_computations(inst.attrs)):
            arg = sh.get(inst.operands[k + 1]) or self._whole(inst.operands[k + 1])
            results.append(self._propagate(branch, {0: arg}).get(branch.root))
        results = [r for r in results if r is not None and len(r) == len(_leaves(inst.shape))]
        if not results:
            return None
        return [_best(list(leaf)) for leaf in zip(*results)]

    def _write(self, comp, sh: dict) -> None:
        """Write ``sh`` on ``comp``'s instructions, and the bodies' shardings
        (their parameters as the loop's state, the branches' as their operands)."""
        from ..hlo.dynamic import branch_computations
        for inst in comp.instructions:
            leaves = sh.get(inst) or self._whole(inst)
            if not any(s.is_token or not (s.is_array or s.is_tuple) for s in _leaves(inst.shape)):
                write_sharding(inst, leaves)
            if inst.opcode == "while":
                state = sh.get(inst) or self._whole(inst)
                for callee in (inst.attrs["body"], inst.attrs["condition"]):
                    self._write(callee, self._propagate(callee, {0: state}))
            elif inst.opcode == "conditional":
                for k, branch in enumerate(branch_computations(inst.attrs)):
                    arg = sh.get(inst.operands[k + 1]) or self._whole(inst.operands[k + 1])
                    self._write(branch, self._propagate(branch, {0: arg}))

    def _offer(self, sh: dict, inst: HloInstruction, candidate) -> bool:
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
