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

__all__ = ["Sharding", "parse_sharding", "parameter_shardings", "result_sharding", "stacked_shape"]


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
