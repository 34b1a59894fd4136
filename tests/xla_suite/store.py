"""The results file: per case key, a status and (for ``ok``) XLA:CPU's outputs.

One compressed ``.npz``: ``manifest`` is JSON ``{key: [status, detail]}``; for ``ok`` the
detail lists ``[dtype, shape, n]`` per output and entry ``<n>`` holds its values.  An output
of more than ``SAMPLE`` elements is kept as ``SAMPLE`` of them at evenly spaced row-major
positions (``positions``), which keeps the file small; wrong results seldom spare them all.
Values are stored as unsigned integers of their item size where numpy cannot save the type
by name (bfloat16, float8_*, int4 ... of ml_dtypes) and viewed back on load.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import ml_dtypes  # noqa: F401  - registers bfloat16, float8_*, int4 ... with numpy
import numpy as np

SAMPLE = 1024


def positions(size: int) -> np.ndarray | None:
    """The flat positions kept of an output of ``size`` elements (None: all of them)."""
    if size <= SAMPLE:
        return None
    return np.unique(np.linspace(0, size - 1, SAMPLE).astype(np.int64))


@dataclass
class Expected:
    """One output as recorded: its dtype and shape, and the values at ``positions(size)``."""
    dtype: np.dtype
    shape: tuple
    values: np.ndarray          # flat

    def kept(self, array: np.ndarray) -> np.ndarray:
        """The elements of ``array`` (this output's shape) at the recorded positions, flat."""
        flat = np.asarray(array).reshape(-1)
        where = positions(flat.size)
        return flat if where is None else flat[where]

    def full(self) -> np.ndarray | None:
        """The whole output when every element was kept, else None."""
        return self.values.reshape(self.shape) if positions(self.values.size) is None and \
            self.values.size == int(np.prod(self.shape, dtype=np.int64)) else None


def _raw(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a if a.dtype.isbuiltin else a.view(f"u{a.dtype.itemsize}")


def save(path, results: dict) -> None:
    """Write ``{key: (status, detail)}``; for ``ok`` the detail is the list of output arrays."""
    manifest, arrays = {}, {}
    for key, (status, detail) in results.items():
        if status == "ok":
            outs = []
            for a in detail:
                a = np.asarray(a)
                outs.append([a.dtype.name, list(a.shape), len(arrays)])
                arrays[str(len(arrays))] = _raw(Expected(a.dtype, a.shape, a).kept(a))
            detail = outs
        manifest[key] = [status, detail]
    np.savez_compressed(path, manifest=np.array(json.dumps(manifest, sort_keys=True)), **arrays)


def load(path) -> dict:
    """``{key: (status, detail)}``; for ``ok`` the detail is a list of :class:`Expected`."""
    with np.load(path) as data:
        manifest = json.loads(str(data["manifest"]))
        results = {}
        for key, (status, detail) in manifest.items():
            if status == "ok":
                detail = [Expected(np.dtype(dtype), tuple(shape), data[str(i)].view(np.dtype(dtype)))
                          for dtype, shape, i in detail]
            results[key] = (status, detail)
    return results
