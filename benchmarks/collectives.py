"""All-reduce across devices on one host: xlac over shared memory, xlac over
MPI and plain mpi4py ``Allreduce``, in one run, with memcpy as the limit.

    python -m benchmarks.collectives [--devices 2] [--sizes 4,1M,16M,128M] [--out DIR]

An f32 all-reduce of each size runs inside a compiled ``while`` loop (``x =
all-reduce(x)``, nothing else: the values grow to inf, which costs the adds
nothing; the trip count is a parameter), so the time of one
all-reduce is the difference of two loop counts divided by the difference:
what the call itself costs (the buffer made from a scalar, one element
returned) cancels out.  xlac over MPI runs the same module under
``mpiexec`` (``xlac.mpi``), and plain mpi4py times ``comm.Allreduce`` in a
Python loop on the same ranks.  Rates are bytes of the buffer per second.
mpi4py and mpiexec come with ``pip install 'xlac[mpi]'``; without them the
MPI columns are skipped.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

MODULE = """HloModule allreduce_loop, replica_count={n}

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

cond {{
  p = (s32[], s32[], f32[{k}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  trips = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, trips), direction=LT
}}

body {{
  p = (s32[], s32[], f32[{k}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  trips = s32[] get-tuple-element(p), index=1
  x = f32[{k}] get-tuple-element(p), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  s = f32[{k}] all-reduce(x), replica_groups={{}}, to_apply=add
  ROOT t = (s32[], s32[], f32[{k}]) tuple(j, trips, s)
}}

ENTRY e {{
  trips = s32[] parameter(0)
  seed = f32[] parameter(1)
  x = f32[{k}] broadcast(seed), dimensions={{}}
  z = s32[] constant(0)
  t = (s32[], s32[], f32[{k}]) tuple(z, trips, x)
  w = (s32[], s32[], f32[{k}]) while(t), condition=cond, body=body
  y = f32[{k}] get-tuple-element(w), index=2
  ROOT r = f32[1] slice(y), slice={{[0:1]}}
}}
"""

SIZES = {"4": 4, "1M": 1 << 20, "16M": 16 << 20, "128M": 128 << 20}


def _trips(nbytes: int) -> tuple[int, int]:
    """Two loop counts whose difference is enough iterations to time."""
    if nbytes <= 4096:
        return 10, 100010
    if nbytes <= (1 << 20):
        return 2, 102
    if nbytes <= (16 << 20):
        return 1, 21
    return 1, 6


def _per_op(run, nbytes: int, repeat: int = 3) -> float:
    """Seconds per all-reduce: best over ``repeat`` of (t(hi) - t(lo)) / (hi - lo)."""
    lo, hi = _trips(nbytes)
    best = float("inf")
    run(lo)                                   # compile, start, warm
    for _ in range(repeat):
        t0 = time.perf_counter()
        run(lo)
        t1 = time.perf_counter()
        run(hi)
        t2 = time.perf_counter()
        best = min(best, ((t2 - t1) - (t1 - t0)) / (hi - lo))
    return max(best, 1e-9)


def memcpy_gbs(nbytes: int = 128 << 20) -> float:
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return nbytes / best / 1e9


def xlac_shm(n: int, nbytes: int) -> float:
    from xlac.devices import ReplicatedExecutable
    k = max(1, nbytes // 4)
    exe = ReplicatedExecutable(MODULE.format(n=n, k=k), n)
    seed = np.ones(n, np.float32)
    return _per_op(lambda trips: exe(np.full(n, trips, np.int32), seed), nbytes)


def _mpi_worker(sizes: list[int]) -> None:
    """Under mpiexec: xlac over MPI and plain mpi4py, rank 0 prints JSON."""
    from mpi4py import MPI

    import xlac
    comm = MPI.COMM_WORLD
    n = comm.Get_size()
    out = {}
    for nbytes in sizes:
        k = max(1, nbytes // 4)
        exe = xlac.jit(MODULE.format(n=n, k=k))
        seed = np.ones(n, np.float32)
        comm.Barrier()
        xl = _per_op(lambda trips: exe(np.full(n, trips, np.int32), seed), nbytes)
        a, b = np.ones(k, np.float32), np.empty(k, np.float32)

        def plain(trips):
            for _ in range(trips):
                comm.Allreduce(a, b, MPI.SUM)
        comm.Barrier()
        pl = _per_op(plain, nbytes)
        out[nbytes] = {"xlac_mpi": comm.allreduce(xl, MPI.MAX), "mpi4py": comm.allreduce(pl, MPI.MAX)}
    if comm.Get_rank() == 0:
        print(json.dumps(out))


def run(n: int, sizes: list[int]) -> dict:
    rows = {s: {"xlac_shm": xlac_shm(n, s)} for s in sizes}
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        mpiexec = None
    if mpiexec:
        proc = subprocess.run([mpiexec, "-n", str(n), sys.executable, "-m", "benchmarks.collectives",
                               "--mpi-worker", ",".join(map(str, sizes))], capture_output=True, encoding="utf-8")
        if proc.returncode == 0:
            for s, cols in json.loads(proc.stdout.strip().splitlines()[-1]).items():
                rows[int(s)].update(cols)
        else:
            print(proc.stderr, file=sys.stderr)
    return {"devices": n, "memcpy_gbs": memcpy_gbs(), "rows": rows}


def markdown(res: dict) -> str:
    def cell(sec, nbytes):
        if sec is None:
            return "—"
        return f"{sec * 1e6:.2f} µs" if nbytes <= 4096 else f"{sec * 1e3:.2f} ms, {nbytes / sec / 1e9:.2f} GB/s"
    names = {v: k for k, v in SIZES.items()}
    lines = [f"f32 all-reduce on {res['devices']} devices of one host (time per all-reduce; GB/s = bytes of "
             f"the buffer per second); memcpy in the same run: {res['memcpy_gbs']:.1f} GB/s.", "",
             "| size | xlac, shared memory | xlac over MPI | mpi4py Allreduce |", "|---|---|---|---|"]
    for s, cols in sorted(res["rows"].items()):
        lines.append(f"| {names.get(s, s)} B | {cell(cols.get('xlac_shm'), s)} | {cell(cols.get('xlac_mpi'), s)} "
                     f"| {cell(cols.get('mpi4py'), s)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.collectives", description=__doc__.split("\n\n")[0])
    p.add_argument("--devices", type=int, default=2)
    p.add_argument("--sizes", default="4,1M,16M,128M", help="comma-separated: " + ",".join(SIZES))
    p.add_argument("--out", help="directory for collectives.md and collectives.json")
    p.add_argument("--mpi-worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.mpi_worker:
        _mpi_worker([int(s) for s in args.mpi_worker.split(",")])
        return 0
    res = run(args.devices, [SIZES[s] for s in args.sizes.split(",")])
    md = markdown(res)
    print(md)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "collectives.md"), "w", encoding="utf-8") as fh:
            fh.write(md + "\n")
        with open(os.path.join(args.out, "collectives.json"), "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=1)
    return 0


if __name__ == "__main__":
    from xlac.cli import utf8_stdout
    utf8_stdout()                  # reports are Markdown in UTF-8, whatever the locale
    sys.exit(main())
