"""HLO shardings (``sharding={devices=[4,1]<=[4]}``): which tile of a global
array each device holds.

The forms XLA prints: ``{replicated}``, ``{maximal device=N}``, a tile
assignment ``{devices=[t0,t1,...]<ids>}`` whose device ids are an iota
(``<=[4]``, ``<=[2,2]T(1,0)``) or listed (``0,2,1,3``), with
``last_tile_dim_replicate`` when the last tile dimension replicates instead of
splitting.  :func:`parse_sharding` reads one; :meth:`Sharding.tile` gives a
device's tile of a global array and :meth:`Sharding.assemble` puts tiles back
together; :meth:`Sharding.global_shape` is the global shape of a tile's.
:func:`stacked_shape` is the shape of per-device arrays stacked on a leading
device axis (the arguments of a per-replica module).  Other forms (tuple shardings, ``last_tile_dims={...}`` subgroups,
manual) raise ``UnsupportedError`` naming them.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..shape import Shape
from .collectives import IotaGroups

__all__ = ["Sharding", "parse_sharding", "parameter_shardings", "result_sharding", "stacked_shape",
           "parse_shardings", "replicated", "from_index_map", "with_rank", "sharding_text", "local_dims",
           "padded_tile", "assemble_tiles"]


@dataclass(frozen=True)
class Sharding:
    """``tile_dims``: tiles per array dimension (the replicated last one dropped);
    ``devices``: the device ids in tile order (row-major over ``tile_dims`` plus
    the replication dimension); ``replicas``: devices holding each tile."""

    tile_dims: tuple
    devices: tuple
    replicas: int = 1

    @property
    def is_replicated(self) -> bool:
        return math.prod(self.tile_dims) == 1

    def tile_index(self, device: int) -> tuple:
        """The tile ``device`` holds, as an index per array dimension."""
        pos = self.devices.index(device) // self.replicas
        index = []
        for t in reversed(self.tile_dims):
            index.append(pos % t)
            pos //= t
        return tuple(reversed(index))

    def tile(self, array: np.ndarray, device: int) -> np.ndarray:
        """``device``'s tile of the global ``array``."""
        if self.is_replicated:
            return array
        index = self.tile_index(device)
        slices = []
        for d, (t, k) in enumerate(zip(self.tile_dims, index)):
            size = -(-array.shape[d] // t)
            slices.append(slice(k * size, min(array.shape[d], (k + 1) * size)))
        return array[tuple(slices)]

    def global_shape(self, local: Shape) -> Shape:
        """The shape of the global array whose tiles have the shape ``local``
        (tiles of equal size: each dimension times its tile count)."""
        if self.is_replicated or not local.is_array:
            return local
        dims = tuple(d * t for d, t in zip(local.dimensions, self.tile_dims)) + \
            tuple(local.dimensions[len(self.tile_dims):])
        return Shape.array(local.element_type, dims)

    def assemble(self, tiles: list) -> np.ndarray:
        """The global array from every device's tile (``tiles[d]`` of device ``d``)."""
        if self.is_replicated:
            return tiles[self.devices[0]]
        blocks = np.empty(self.tile_dims, dtype=object)
        for d in self.devices:
            blocks[self.tile_index(d)] = tiles[d]
        return np.block(blocks.tolist())


def parse_sharding(text: str, num_devices: int) -> Sharding:
    """The :class:`Sharding` of HLO sharding text (with or without the braces)."""
    s = str(text).strip()
    if s.startswith("{") and s.endswith("}"):
        s = s[1:-1].strip()
    if s in ("replicated", ""):
        return Sharding((1,), tuple(range(num_devices)), num_devices)
    m = re.fullmatch(r"maximal\s+device=(\d+)", s)
    if m:
        return Sharding((1,), (int(m.group(1)),), 1)
    m = re.fullmatch(r"devices=\[([\d,]+)\]\s*(.*?)(\s+last_tile_dim_replicate)?", s)
    if m is None:
        raise UnsupportedError("sharding", f"{{{s}}}")
    dims = tuple(int(v) for v in m.group(1).split(","))
    ids = m.group(2).strip()
    iota = re.fullmatch(r"<=\[([\d,]+)\](?:T\(([\d,]+)\))?", ids)
    if iota:
        reshape = tuple(int(v) for v in iota.group(1).split(","))
        perm = tuple(int(v) for v in iota.group(2).split(",")) if iota.group(2) else None
        devices = tuple(d for g in IotaGroups(1, math.prod(dims), reshape, perm).expand() for d in g)
    elif re.fullmatch(r"[\d,\s]+", ids):
        devices = tuple(int(v) for v in ids.replace(" ", "").split(","))
    else:
        raise UnsupportedError("sharding", f"{{{s}}}")
    if len(devices) != math.prod(dims):
        raise UnsupportedError("sharding", f"{{{s}}}: {len(devices)} device ids for {math.prod(dims)} tiles")
    if m.group(3):
        return Sharding(dims[:-1], devices, dims[-1])
    return Sharding(dims, devices, 1)


def _text(value) -> str:
    return getattr(value, "text", value)


# ---------------------------------------------------------------------------------------
# Shardings as the SPMD partitioner uses them: one tile count per array
# dimension, compared by which tile each device holds
# ---------------------------------------------------------------------------------------

def replicated(num_devices: int, rank: int) -> Sharding:
    """Every device holds the whole array (of rank ``rank``)."""
    return Sharding((1,) * rank, tuple(range(num_devices)), num_devices)


def from_index_map(tile_dims, index_of: dict) -> Sharding | None:
    """The sharding in which device ``d`` holds tile ``index_of[d]`` (a tuple,
    one index per dimension of ``tile_dims``), or None when that is no
    sharding (some tile held by more devices than another, or by none).
    Canonical: replicas of a tile in device order, so equal maps give equal
    shardings."""
    tile_dims = tuple(int(t) for t in tile_dims)
    holders: dict = {}
    for d, index in index_of.items():
        holders.setdefault(tuple(index), []).append(d)
    tiles = math.prod(tile_dims)
    if len(holders) != tiles or len({len(v) for v in holders.values()}) != 1:
        return None
    devices = []
    for index in np.ndindex(*tile_dims) if tile_dims else [()]:
        if index not in holders:
            return None
        devices += sorted(holders[index])
    return Sharding(tile_dims, tuple(devices), len(devices) // tiles)


def with_rank(s: Sharding, rank: int, num_devices: int) -> Sharding:
    """``s`` as a sharding of an array of rank ``rank`` on ``num_devices``
    devices: a replicated or maximal (one-device) sharding becomes replicated
    on every device (each device then computes the value), a tiled one is
    made canonical (:func:`from_index_map`)."""
    if s.is_replicated or len(s.devices) != num_devices:
        return replicated(num_devices, rank)
    if len(s.tile_dims) != rank:
        raise UnsupportedError("sharding", f"{sharding_text(s)} has {len(s.tile_dims)} tile dimension(s) "
                                           f"for an array of rank {rank}")
    return from_index_map(s.tile_dims, {d: s.tile_index(d) for d in s.devices})


def sharding_text(s: Sharding) -> str:
    """The HLO text of ``s`` (``{replicated}``, ``{devices=[2,1,2]<=[4] last_tile_dim_replicate}``)."""
    if s.is_replicated:
        return "{replicated}"
    dims = list(s.tile_dims) + ([s.replicas] if s.replicas > 1 else [])
    ids = f"<=[{len(s.devices)}]" if s.devices == tuple(range(len(s.devices))) else ",".join(map(str, s.devices))
    tail = " last_tile_dim_replicate" if s.replicas > 1 else ""
    return "{devices=[" + ",".join(map(str, dims)) + "]" + ids + tail + "}"


def parse_shardings(text: str, num_devices: int) -> list:
    """The shardings of HLO sharding text: one for an array, one per leaf for
    a tuple sharding (``{{replicated}, {devices=[2,1]<=[2]}}``)."""
    # XLA numbers the leaves of long tuple shardings: {..., /*index=5*/{replicated}, ...}
    s = re.sub(r"/\*.*?\*/", "", str(text)).strip()
    inner = s[1:-1].strip() if s.startswith("{") and s.endswith("}") else s
    if inner.startswith("{"):
        parts, depth, start = [], 0, 0
        for k, ch in enumerate(inner):
            depth += ch == "{"
            depth -= ch == "}"
            if ch == "," and depth == 0:
                parts.append(inner[start:k])
                start = k + 1
        parts.append(inner[start:])
        return [parse_sharding(p, num_devices) for p in parts if p.strip()]
    return [parse_sharding(s, num_devices)]


def local_dims(s: Sharding, dims) -> tuple:
    """The dimensions of each device's tile of an array of ``dims``: tiles of
    equal size, the last ones padded where a tile count does not divide."""
    return tuple(-(-int(n) // t) for n, t in zip(dims, s.tile_dims)) + tuple(dims[len(s.tile_dims):])


def padded_tile(array: np.ndarray, s: Sharding, device: int, contiguous: bool = True) -> np.ndarray:
    """``device``'s tile of the global ``array``, padded with zeros to the
    tile shape (:func:`local_dims`) where the tiles do not divide evenly;
    C-contiguous, or with ``contiguous=False`` a view of ``array`` where no
    padding is needed (for a caller that copies it anyway)."""
    tile = s.tile(array, device)
    want = local_dims(s, array.shape)
    if tile.shape == want:
        # Not np.ascontiguousarray: it makes a scalar a 1-element vector.
        return tile if tile.flags.c_contiguous or not contiguous else tile.copy()
    out = np.zeros(want, array.dtype)
    out[tuple(slice(0, n) for n in tile.shape)] = tile
    return out


def assemble_tiles(tiles: list, s: Sharding, dims) -> np.ndarray:
    """The global array of ``dims`` from every device's (padded) tile,
    ``tiles[d]`` of device ``d``: the inverse of :func:`padded_tile`."""
    first = np.asarray(tiles[s.devices[0]])
    if s.is_replicated:
        return first
    out = np.empty(tuple(dims), first.dtype)
    sizes = local_dims(s, dims)
    for d in s.devices[::s.replicas]:
        index = s.tile_index(d)
        region = tuple(slice(min(n, k * c), min(n, (k + 1) * c)) for n, k, c in zip(dims, index, sizes))
        out[region] = np.asarray(tiles[d])[tuple(slice(0, r.stop - r.start) for r in region)]
    return out


def parameter_shardings(module) -> list | None:
    """The entry parameters' shardings of XLA's partitioned per-device program
    (``replica_count x num_partitions`` > 1 and some parameter annotated
    ``sharding=``; unannotated ones are replicated), or None for any other module."""
    n = module.replica_count * module.num_partitions
    params = module.entry.parameters
    if n == 1 or not any("sharding" in p.attrs for p in params):
        return None
    return [parse_sharding(_text(p.attrs.get("sharding", "replicated")), n) for p in params]


def result_sharding(module) -> Sharding | None:
    """The sharding of a partitioned program's (array) result, when its root says."""
    root = module.entry.root
    value = root.attrs.get("sharding")
    if value is None or root.shape.is_tuple:
        return None
    return parse_sharding(_text(value), module.replica_count * module.num_partitions)


def stacked_shape(shape: Shape, num_devices: int) -> Shape:
    """``shape`` with a leading axis of ``num_devices``: one entry per device,
    what a per-replica module takes and returns (as ``jax.pmap`` does)."""
    if not shape.is_array:
        return shape
    return Shape.array(shape.element_type, (num_devices,) + tuple(shape.dimensions))
