"""C arrays, strings and raw memory views that leave no garbage (xlac/runtime/c_memory.py)."""
import ctypes
import gc

import numpy as np
import pytest

from xlac.runtime import c_memory


def test_views_strings_and_arrays():
    a = np.arange(6, dtype=np.float32)
    view = np.ndarray((2, 3), np.float32, buffer=c_memory.memory(a.ctypes.data, a.nbytes))
    view[1, 2] = 50
    assert a[5] == 50 and view.tolist() == [[0, 1, 2], [3, 4, 50]]
    read_only = np.frombuffer(c_memory.memory(a.ctypes.data, a.nbytes, writable=False), np.float32)
    with pytest.raises(ValueError):
        read_only[0] = 1
    data = b"kind"
    assert ctypes.string_at(c_memory.address_of(data)) == b"kind"       # NUL-terminated
    assert list(c_memory.array(ctypes.c_int64, [4, 5])) == [4, 5]
    assert len(c_memory.array(ctypes.c_void_p, [])) == 1                # never a NULL address
    assert type(c_memory.array(ctypes.c_int64, [1])) is type(c_memory.array(ctypes.c_int64, [2]))


def test_made_and_dropped_they_leave_no_garbage():
    a = np.zeros(64, np.uint8)
    c_memory.array(ctypes.c_int64, [1, 2, 3])           # the type, made once
    gc.collect()
    debug = gc.get_debug()
    try:
        for n in range(1, 40):
            view = c_memory.memory(a.ctypes.data, n)
            arr = c_memory.array(ctypes.c_int64, [n] * 3)
            del view, arr
        gc.set_debug(gc.DEBUG_SAVEALL)
        found = gc.collect()
    finally:
        gc.set_debug(debug)
        gc.garbage.clear()
    assert found == 0


def test_a_fresh_process_first_compilation_leaves_no_garbage():
    """The first compilation and call in a process (the native fast call
    installed, the thread pool started, the code streamed over two compile
    threads) leave nothing for the cyclic collector either: jax's
    ``test_reference_cycles`` may be the first jitted call of its process."""
    import subprocess
    import sys
    from pathlib import Path
    case = Path(__file__).resolve().parents[1] / "jax_cases" / "gamma_rng.hlo"
    script = f"""
import gc, collections
import numpy as np
import xlac
text = open({str(case)!r}).read()
with np.load({str(case.with_suffix('.npz'))!r}) as d:     # (numpy's header parser leaves cycles)
    args = [d[f"arr_{{k}}"] for k in range(len(d.files))]
gc.collect()
exe = xlac.jit(text)
exe(*args)
gc.set_debug(gc.DEBUG_SAVEALL)
found = gc.collect()
print(found, collections.Counter(type(o).__name__ for o in gc.garbage).most_common(6))
"""
    env = {**__import__("os").environ, "XLAC_COMPILE_THREADS": "2", "XLAC_CACHE_DIR": ""}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, encoding="utf-8", env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "0", out.stdout
