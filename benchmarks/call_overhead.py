"""Per-call time of small modules: xlac's native fast call, its Python path, numpy, numba.

    python -m benchmarks.call_overhead [--repeat N] [--out DIR] [--quick]

Three small static-shape programs, each called with fresh C-contiguous arrays
of the right dtype and returning a new array, as a user calls them:

* ``add8``: ``a + b`` on 8 float32 (pure overhead);
* ``fma1k``: ``a * b + c`` on 1024 float32 (three arguments, a 4 KiB result);
* ``matmul64``: a 64x64 float32 matmul (a temp arena, a 16 KiB result).

Columns: *xlac* is ``exe(*args)`` (the native fast call of
``xlac.codegen.fast_call``), *xlac (Python path)* is ``exe._call(*args)``,
the path every call took before the fast call and the one it falls back to
(argument checks in Python, ctypes call, results from the pool); *numpy* is
the same computation in numpy (``np.add``, ``a * b + c``, ``a @ b``),
*numba* an ``@njit`` function of the same (when numba is installed).  Samples
are taken with the harness's :func:`~benchmarks.harness.time_interleaved`
(rounds across every implementation of a program, in a new order each round,
each sample ~1 ms of back-to-back calls), so a change in the machine's load
hits them alike; the table gives the best and the median sample in µs per
call, and the load average before and after.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

PROGRAMS = {
    "add8": ("add of 8 float32", """HloModule add8
ENTRY main {
  x = f32[8]{0} parameter(0)
  y = f32[8]{0} parameter(1)
  ROOT r = f32[8]{0} add(x, y)
}""", lambda: [np.ones(8, np.float32), np.full(8, 2, np.float32)], lambda a, b: np.add(a, b)),
    "fma1k": ("a * b + c, 1024 float32", """HloModule fma1k
ENTRY main {
  x = f32[1024]{0} parameter(0)
  y = f32[1024]{0} parameter(1)
  z = f32[1024]{0} parameter(2)
  m = f32[1024]{0} multiply(x, y)
  ROOT r = f32[1024]{0} add(m, z)
}""", lambda: [np.linspace(0, 1, 1024, dtype=np.float32)] * 3, lambda a, b, c: a * b + c),
    "matmul64": ("matmul 64x64 float32", """HloModule matmul64
ENTRY main {
  x = f32[64,64]{1,0} parameter(0)
  y = f32[64,64]{1,0} parameter(1)
  ROOT r = f32[64,64]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", lambda: [np.linspace(0, 1, 4096, dtype=np.float32).reshape(64, 64)] * 2, lambda a, b: a @ b),
}

COLUMNS = [("xlac", "xlac µs"), ("xlac_python", "xlac (Python path) µs"), ("numpy", "numpy µs"),
           ("numba", "numba µs")]


def _numba_functions():
    try:
        import numba
    except ImportError:
        return None
    return {"add8": numba.njit(lambda a, b: a + b), "fma1k": numba.njit(lambda a, b, c: a * b + c),
            "matmul64": numba.njit(lambda a, b: a @ b)}


def _loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def run(repeat: int = 31, budget: float = 10.0, use_numba: bool = True) -> dict:
    """{"rows": [{name, label, fast, us: {column: (best, median) or None}}], "load": (start, end)}."""
    import xlac

    from .harness import time_interleaved
    numba_fns = _numba_functions() if use_numba else None
    load0 = _loadavg()
    rows = []
    for name, (label, text, make_args, ref) in PROGRAMS.items():
        exe = xlac.jit(text)
        args = make_args()
        want = ref(*args)
        calls = {"xlac": lambda exe=exe, args=args: exe(*args),
                 "xlac_python": lambda exe=exe, args=args: exe._call(*args),
                 "numpy": lambda ref=ref, args=args: ref(*args)}
        if numba_fns is not None:
            calls["numba"] = lambda f=numba_fns[name], args=args: f(*args)
        for col, fn in calls.items():             # warm, and every implementation right
            np.testing.assert_allclose(fn(), want, rtol=1e-5, err_msg=f"{name}: {col}")
        before = exe.fast_calls
        timings = time_interleaved(calls, repeat=repeat, budget=budget)
        us = {col: (None if isinstance(t, Exception) else (t.min_s * 1e6, t.median_s * 1e6))
              for col, t in timings.items()}
        rows.append({"name": name, "label": label, "fast": exe.fast_calls > before, "us": us})
    return {"rows": rows, "load": (load0, _loadavg()), "cpus": len(os.sched_getaffinity(0))}


def markdown(res: dict) -> str:
    cols = [(c, n) for c, n in COLUMNS if any(r["us"].get(c) for r in res["rows"])]
    lines = ["| program | " + " | ".join(n for _, n in cols) + " |", "|---|" + "---|" * len(cols)]
    for row in res["rows"]:
        cells = []
        for c, _ in cols:
            v = row["us"].get(c)
            cells.append("—" if v is None else f"{v[0]:.2f} / {v[1]:.2f}")
        lines.append(f"| {row['label']} | " + " | ".join(cells) + " |")
    l0, l1 = res["load"]
    load = f"load average {l0:.2f} at the start, {l1:.2f} at the end" if l0 is not None else "load unknown"
    return ("Per-call time, µs, best / median sample (each sample ~1 ms of back-to-back calls; "
            f"implementations sampled in interleaved rounds); {res['cpus']} CPUs, {load}.\n\n"
            + "\n".join(lines) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.call_overhead", description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=31, help="samples per implementation (default 31)")
    p.add_argument("--quick", action="store_true", help="3 samples (a smoke test)")
    p.add_argument("--no-numba", action="store_true", help="skip numba even if installed")
    p.add_argument("--out", help="directory to write call_overhead.md to")
    a = p.parse_args(argv)
    res = run(repeat=3 if a.quick else a.repeat, use_numba=not a.no_numba)
    md = markdown(res)
    sys.stdout.write(md)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "call_overhead.md").write_text(md, encoding="utf-8")
    return 0


if __name__ == "__main__":
    from xlac.cli import utf8_stdout
    utf8_stdout()                  # reports are Markdown in UTF-8, whatever the locale
    sys.exit(main())
