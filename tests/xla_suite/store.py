"""The results file: per case key, a status and (for ``ok``) the output arrays.

One compressed ``.npz``: ``manifest`` is JSON ``{key: [status, detail-or-[[dtype, shape]...]]}``;
the arrays are ``<n>`` entries in manifest order, stored as unsigned integers of their item
size (numpy cannot save ml_dtypes types such as bfloat16 by name) and viewed back on load.
"""
from __future__ import annotations

import json

import ml_dtypes  # noqa: F401  - registers bfloat16, float8_*, int4 ... with numpy
import numpy as np


def _raw(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_ or a.dtype.kind in "biufc" and a.dtype.isbuiltin:
        return a
    return a.view(f"u{a.dtype.itemsize}")


def save(path: str, results: dict) -> None:
    manifest, arrays = {}, {}
    for key, (status, detail) in results.items():
        if status == "ok":
            outs = []
            for a in detail:
                a = np.asarray(a)
                outs.append([a.dtype.name, list(a.shape), len(arrays)])
                arrays[str(len(arrays))] = _raw(a)
            detail = outs
        manifest[key] = [status, detail]
    np.savez_compressed(path, manifest=np.array(json.dumps(manifest, sort_keys=True)), **arrays)


def load(path: str) -> dict:
    """{key: (status, detail)}; for ``ok`` the detail is the list of output arrays."""
    with np.load(path) as data:
        manifest = json.loads(str(data["manifest"]))
        results = {}
        for key, (status, detail) in manifest.items():
            if status == "ok":
                detail = [data[str(i)].view(np.dtype(dtype)).reshape(shape) for dtype, shape, i in detail]
            results[key] = (status, detail)
    return results
