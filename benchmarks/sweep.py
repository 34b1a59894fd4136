"""``--threads-sweep 1,2,4,8,16``: xlac at each ``num_threads``, beside jax and numpy.

For each kernel, xlac runs the JAX-exported HLO (the builder's computation
when there is no HLO file) compiled once per thread count
(``xlac.jit(..., num_threads=n)``; the code is the same, only the run options
differ), and jax.jit and numpy run once each: they do not take xlac's thread
count (:func:`library_threads` says what they use).  Every result is checked
against numpy's, and all of them are timed under the harness's rules
(warm-up, samples interleaved in rounds in a new seeded order, settling,
median, the time budget), so that a change in the load of the machine hits
every thread count alike.  Counts beyond the CPUs are oversubscription: the
pool never starts more workers than CPUs, so they must cost (almost) nothing.
"""
from __future__ import annotations

import gc
import os
import re
from pathlib import Path

import numpy as np

from . import harness as H
from . import kernels as K


#: the largest count --threads-sweep takes (the pool itself stops at the CPUs).
MAX_COUNT = 4096


def parse_counts(text: str) -> list[int]:
    """``"1,2,4,8,16"`` -> ``[1, 2, 4, 8, 16]`` (sorted, without repeats); ValueError
    naming the option and the bad values otherwise."""
    parts = [p.strip() for p in text.split(",")]
    bad = [p for p in parts if not re.fullmatch(r"[0-9]+", p) or not 1 <= int(p) <= MAX_COUNT]
    if bad or not text.strip():
        what = ", ".join(repr(b) for b in bad) + (" is not a whole number" if len(bad) == 1 else
                                                 " are not whole numbers") + f" from 1 to {MAX_COUNT}"
        what = what if text.strip() else "it is empty"
        raise ValueError(f"--threads-sweep takes thread counts separated by commas, such as "
                         f"1,2,4,8,16; got {text!r}: {what}")
    return sorted({int(p) for p in parts})


def column(n: int) -> str:
    """The result column of xlac at ``num_threads=n``."""
    return f"xlac_t{n}"


# ---------------------------------------------------------------------------------
# the thread settings of the other libraries (reported, never changed)
# ---------------------------------------------------------------------------------

_BLAS_GETTERS = ("openblas_get_num_threads", "openblas_get_num_threads64_",
                 "scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                 "MKL_Get_Max_Threads", "bli_thread_get_num_threads")


def _blas_threads() -> tuple[str, int] | None:
    """(library file, threads) of the BLAS numpy loaded, asked through its own API."""
    import ctypes
    np.ones((2, 2)) @ np.ones((2, 2))        # make sure the BLAS is loaded
    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            libs = sorted({ln.split()[-1] for ln in fh if any(w in ln.lower() for w in ("blas", "mkl_rt"))
                           and ".so" in ln})
    except OSError:
        return None
    for lib in libs:
        try:
            dll = ctypes.CDLL(lib)
        except OSError:
            continue
        for name in _BLAS_GETTERS:
            fn = getattr(dll, name, None)
            if fn is not None:
                fn.restype = ctypes.c_int
                return os.path.basename(lib), int(fn())
    return None


def numpy_threads() -> str:
    blas = _blas_threads()
    env = [f"{v}={os.environ[v]}" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
           if v in os.environ]
    text = "elementwise operations and reductions on one thread; matmul in its BLAS"
    text += f" ({blas[0]}, {blas[1]} thread(s))" if blas else " (thread count unknown)"
    return text + (f", {', '.join(env)}" if env else "")


def jax_threads(jax_mod) -> str:
    if jax_mod is None:
        return "not run"
    flags = os.environ.get("XLA_FLAGS")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    devices = len(jax_mod.devices("cpu"))
    return (f"jax {jax_mod.__version__}, {devices} CPU device(s); "
            + (f"XLA_FLAGS={flags!r}" if flags else
               f"XLA_FLAGS unset: XLA's default intra-op thread pool, one thread per CPU ({cpus})"))


def library_threads(jax_mod) -> dict:
    return {"numpy": numpy_threads(), "jax": jax_threads(jax_mod)}


# ---------------------------------------------------------------------------------
# one kernel
# ---------------------------------------------------------------------------------

def _source(k: K.Kernel, hlo_dir, p: dict) -> tuple[object, str]:
    """(what xlac compiles, "hlo" | "builder")."""
    text = H._hlo_text(k, hlo_dir, p)
    return (text, "hlo") if text is not None else (k.build(p), "builder")


def run_kernel(k: K.Kernel, counts: list[int], *, quick: bool, repeat: int, budget: float,
               hlo_dir: Path | None, jax_mod, seed: int = 0) -> H.Row:
    """Check, then time xlac at every count in ``counts``, numpy and jax (interleaved)."""
    import xlac
    p = k.quick if quick else k.full
    row = H.Row(k.name, k.label, k.size(p), k.kind, int(k.nbytes(p)), int(k.flops(p)),
                kernel_note=k.note)
    args = k.inputs(np.random.default_rng(seed), p)
    ref = k.numpy(*args)
    source, row.primary = _source(k, hlo_dir, p)
    calls: dict = {}
    for n in counts:
        def make(n=n):
            exe = xlac.jit(source, num_threads=n)
            return lambda: exe(*args)
        calls[column(n)] = H._prepare(row, column(n), make, ref, k.tol)
    calls["numpy"] = H._prepare(row, "numpy", lambda: (lambda: k.numpy(*args)), ref, max(k.tol, 1e-6))
    if jax_mod is not None and k.jax is not None:
        calls["jax"] = H.jax_call(row, k, args, ref, jax_mod, compile_samples=1)
    timings = H.time_interleaved({c: f for c, f in calls.items() if f is not None}, repeat, budget)
    H.record_timings(row, timings)
    calls.clear()          # the closures hold the inputs
    gc.collect()
    return row


def run_kernels(names: list[str], counts: list[int], *, quick: bool, repeat: int, budget: float,
                hlo_dir, jax_mod) -> list[H.Row]:
    rows = []
    for name in names:
        k = K.BY_NAME[name]
        H.log(f"{name} ({k.size(k.quick if quick else k.full)}), num_threads "
              + ", ".join(map(str, counts)))
        rows.append(run_kernel(k, counts, quick=quick, repeat=repeat, budget=budget,
                               hlo_dir=hlo_dir, jax_mod=jax_mod))
    return rows


def failed(rows: list[dict]) -> list[str]:
    """Kernels whose xlac result failed its check at some thread count."""
    return [r["name"] for r in rows
            if any(c.startswith("xlac_t") and imp.get("ok") is False for c, imp in r["impls"].items())]
