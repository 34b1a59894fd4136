"""``XLAC_PERF_MAP=1``: the JIT names its functions for ``perf`` in
``/tmp/perf-<pid>.map`` (``codegen/perf_map.py``)."""
import os
import subprocess
import sys

from xlac.codegen import perf_map

PROGRAM = r'''
import os, numpy as np, xlac
from xlac.codegen import perf_map
text = """HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  ROOT y = f32[1000] tanh(x)
}"""
exe = xlac.jit(text)
np.testing.assert_allclose(exe(np.ones(1000, np.float32)), np.tanh(np.ones(1000, np.float32)), rtol=1e-6)
print(perf_map.path(), exe._jit.address)
'''


def test_the_map_names_every_function_at_its_address(tmp_path):
    env = dict(os.environ, XLAC_PERF_MAP="1", XLAC_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, encoding="utf-8", check=True)
    where, entry = out.stdout.split()
    try:
        rows = [line.split() for line in open(where, encoding="utf-8").read().splitlines()]
    finally:
        os.unlink(where)
    by_name = {name: (int(start, 16), int(size, 16)) for start, size, name in rows}
    # The program's entry at the address the executable calls, its kernel, a size each.
    assert by_name["xlac_entry"][0] == int(entry)
    assert any(name.startswith("xlac_entry.") for name in by_name)
    assert all(size > 0 for _, size in by_name.values())


def test_off_unless_set_and_unknown_bytes_have_no_functions(monkeypatch):
    monkeypatch.delenv(perf_map.ENV, raising=False)
    assert not perf_map.enabled()
    monkeypatch.setenv(perf_map.ENV, "0")
    assert not perf_map.enabled()
    monkeypatch.setenv(perf_map.ENV, "1")
    assert perf_map.enabled()
    assert perf_map.functions(b"not an object") == []
