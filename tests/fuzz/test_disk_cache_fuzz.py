"""Disk-cache fault injection: random damage to a populated ``XLAC_CACHE_DIR``
(files swapped, copied over one another, renamed, truncated, bytes flipped,
deleted) and then every module jitted again from it.

Contract (``xlac.runtime.disk_cache``): whatever the directory holds, ``jit``
of a module runs that module's code (a damaged or foreign file is a miss,
then compiled again), never another module's, and raises nothing.  The
modules share one signature, so a foreign entry would load and run.
"""
from __future__ import annotations

import os
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import given, note, strategies as st

import xlac
from xlac import program as ex
from fuzzconf import fuzz_settings

SETTINGS = fuzz_settings(ci=12, long=500)

MODULES = {
    op: f"HloModule {op}_fuzz\nENTRY main {{\n  x = f32[8]{{0}} parameter(0)\n"
        f"  ROOT r = f32[8]{{0}} {op}(x)\n}}\n"
    for op in ("negate", "exponential", "abs")
}
X = np.linspace(-2, 2, 8, dtype=np.float32)
WANT = {"negate": -X, "exponential": np.exp(X), "abs": np.abs(X)}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A cache directory holding every module's entry and alias."""
    d = str(tmp_path_factory.mktemp("pristine"))
    with _cache_dir(d):
        for text in MODULES.values():
            xlac.jit(text)(X)
    return d


class _cache_dir:
    """XLAC_CACHE_DIR set to ``d`` and an empty in-memory cache, for a ``with``."""

    def __init__(self, d: str):
        self.d = d

    def __enter__(self):
        self.saved = os.environ.get("XLAC_CACHE_DIR"), ex._cache
        os.environ["XLAC_CACHE_DIR"] = self.d
        ex._cache = ex.ProgramCache()

    def __exit__(self, *exc):
        env, ex._cache = self.saved
        if env is None:
            os.environ.pop("XLAC_CACHE_DIR", None)
        else:
            os.environ["XLAC_CACHE_DIR"] = env


def _swap(a: str, b: str, at: int) -> None:
    da, db = _read(a), _read(b)
    _write(a, db)
    _write(b, da)


def _copy_over(a: str, b: str, at: int) -> None:
    _write(b, _read(a))


def _rename_over(a: str, b: str, at: int) -> None:
    if a != b:
        os.replace(a, b)


def _flip(a: str, b: str, at: int) -> None:
    data = bytearray(_read(a))
    if data:
        data[at % len(data)] ^= 1 << (at % 8)
        _write(a, bytes(data))


def _truncate(a: str, b: str, at: int) -> None:
    data = _read(a)
    _write(a, data[:at % (len(data) + 1)])


def _delete(a: str, b: str, at: int) -> None:
    os.unlink(a)


DAMAGE = (_swap, _copy_over, _rename_over, _flip, _truncate, _delete)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


#: Which files a damage picks from: files of one kind (so that two entries'
#: aliases, metadata or objects meet: the likely confusions), or any.
KINDS = (".alias", ".json", ".o", "")


@SETTINGS
@given(damage=st.lists(st.tuples(st.sampled_from(DAMAGE), st.sampled_from(KINDS), st.integers(0, 99),
                                  st.integers(0, 99), st.integers(0, 1 << 20)), min_size=1, max_size=4),
       order=st.permutations(sorted(MODULES)))
def test_damaged_cache_never_runs_foreign_code(pristine, damage, order):
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "cache")
        shutil.copytree(pristine, d)
        for fn, kind, i, j, at in damage:
            names = sorted(n for n in os.listdir(d) if n.endswith(kind))
            if not names:
                continue
            a, b = (os.path.join(d, names[k % len(names)]) for k in (i, j))
            note(f"{fn.__name__}({os.path.basename(a)}, {os.path.basename(b)}, {at})")
            fn(a, b, at)
        with _cache_dir(d):
            for op in order:
                ex._cache = ex.ProgramCache()           # only the disk is left to remember
                got = xlac.jit(MODULES[op])(X)
                np.testing.assert_allclose(got, WANT[op], rtol=1e-6, err_msg=op)
