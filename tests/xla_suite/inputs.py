"""Seeded arguments for a module's entry parameters, the same on both sides of the comparison.

XLA's tests make their arguments with ``MakeFakeArguments``; the suite makes its own from
a seed, so that XLA:CPU (in a scratch environment with jax) and xlac see identical values
without storing them: floats from a standard normal (magnitudes for the unsigned-exponent
float8_e8m0fnu), integer arrays uniform in [-100, 100] clipped to the type, integer scalars
in [0, 2] (a scalar integer parameter is mostly a size, an index, a trip count or a branch
index: small and in range, as MakeFakeArguments makes them), pred as a fair coin.
Only numpy and ml_dtypes are needed.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

SEED = 20261201


def _iinfo(dtype: np.dtype):
    try:
        return np.iinfo(dtype)
    except ValueError:
        return ml_dtypes.iinfo(dtype)


def argument(dtype, dims, index: int, seed: int = SEED) -> np.ndarray:
    """Parameter ``index``'s value: an array of numpy ``dtype`` (ml_dtypes types included) and
    shape ``dims``, from ``seed``."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng([seed, index])
    dims = tuple(int(d) for d in dims)
    if dtype == np.bool_:
        return rng.random(dims) < 0.5
    if dtype.kind in "iu" or dtype.name.startswith(("int", "uint")):
        info = _iinfo(dtype)
        low, high = (0, 2) if dims == () else (max(int(info.min), -100), min(int(info.max), 100))
        return rng.integers(low, high + 1, dims).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(dtype)
    values = rng.standard_normal(dims)
    if dtype.name == "float8_e8m0fnu":
        values = np.abs(values)
    return values.astype(dtype)
