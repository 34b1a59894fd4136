"""The MPI transport: ``mpiexec -n N python -m xlac run`` runs one device per
rank, its collectives over MPI (``xlac/runtime/mpi_transport.py``), and must
match the multi-device reference evaluator.  2 and 4 ranks on this machine's
2 cores (MPICH oversubscribes without a flag)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from xlac.evaluator_replicated import evaluate_replicated

pytest.importorskip("mpi4py")
MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install 'xlac[mpi]')")

# Every kind of collective in one module: groups, a reducer MPI does not know,
# gathers and scatters along a minor dimension, all-to-all, a permute with a
# missing source, an all-reduce in a loop and the replica id.
MODULE = """HloModule everything, replica_count={n}

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

affine {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  two = f32[] constant(2)
  a2 = f32[] multiply(a, two)
  ROOT s = f32[] add(a2, b)
}}

maxs {{
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}}

cond {{
  p = (s32[], f32[3,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(5)
  ROOT lt = pred[] compare(i, k), direction=LT
}}

body {{
  p = (s32[], f32[3,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[3,4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  s = f32[3,4] all-reduce(x), replica_groups={{}}, to_apply=add
  h = f32[] constant({inv})
  hb = f32[3,4] broadcast(h), dimensions={{}}
  y = f32[3,4] multiply(s, hb)
  ROOT t = (s32[], f32[3,4]) tuple(j, y)
}}

ENTRY e {{
  x = f32[3,4] parameter(0)
  v = s32[6] parameter(1)
  grouped = s32[6] all-reduce(v), replica_groups={groups}, to_apply=maxs
  custom = f32[3,4] all-reduce(x), replica_groups={{}}, to_apply=affine
  gathered = f32[3,{gn}] all-gather(x), replica_groups={{}}, dimensions={{1}}
  scattered = f32[3,{sn}] reduce-scatter(gathered), replica_groups={{}}, dimensions={{1}}, to_apply=add
  swapped = f32[3,4] all-to-all(x), replica_groups={{}}, dimensions={{1}}
  shifted = f32[3,4] collective-permute(x), source_target_pairs={pairs}
  z = s32[] constant(0)
  t = (s32[], f32[3,4]) tuple(z, x)
  w = (s32[], f32[3,4]) while(t), condition=cond, body=body
  looped = f32[3,4] get-tuple-element(w), index=1
  r = u32[] replica-id()
  ROOT out = (s32[6], f32[3,4], f32[3,{gn}], f32[3,{sn}], f32[3,4], f32[3,4], f32[3,4], u32[]) tuple(grouped, custom, gathered, scattered, swapped, shifted, looped, r)
}}
"""


def _text(n: int) -> str:
    groups = "{{0,1}}" if n == 2 else "{{0,2},{1,3}}"
    pairs = "{" + ",".join(f"{{{i},{i + 1}}}" for i in range(n - 1)) + "}"
    return MODULE.format(n=n, inv=1.0 / n, groups=groups, gn=4 * n, sn=4, pairs=pairs)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_under_mpiexec_matches_the_reference(tmp_path, n):
    text = _text(n)
    path = tmp_path / "m.hlo"
    path.write_text(text, encoding="utf-8")
    rng = np.random.default_rng(n)
    xs = rng.standard_normal((n, 3, 4)).astype(np.float32)
    vs = rng.integers(-50, 50, (n, 6)).astype(np.int32)
    np.savez(tmp_path / "in.npz", xs, vs)
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([MPIEXEC, "-n", str(n), sys.executable, "-m", "xlac", "run", str(path),
                          "--inputs", str(tmp_path / "in.npz"), "--out", str(tmp_path / "out.npz")],
                         capture_output=True, encoding="utf-8", timeout=100, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    ref = evaluate_replicated(text, [[xs[d], vs[d]] for d in range(n)])
    with np.load(tmp_path / "out.npz") as got:
        for k in range(8):
            for d in range(n):
                assert got[f"arr_{k}"].shape == (n,) + np.shape(ref[d][k])
                np.testing.assert_allclose(got[f"arr_{k}"][d], ref[d][k], rtol=1e-5, atol=1e-5,
                                           err_msg=f"result {k}, device {d}")


@pytest.mark.timeout(120)
def test_an_error_on_the_ranks_ends_the_job_with_a_clear_message(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(_text(2), encoding="utf-8")
    np.savez(tmp_path / "in.npz", np.zeros((3, 3, 4), np.float32), np.zeros((3, 6), np.int32))
    run = subprocess.run([MPIEXEC, "-n", "2", sys.executable, "-m", "xlac", "run", str(path),
                          "--inputs", str(tmp_path / "in.npz")], capture_output=True, encoding="utf-8", timeout=100)
    assert run.returncode != 0
    assert "xlac: error: rank 0 of 2: ValueError: parameter 0: expected a leading axis of 2" in run.stderr \
        or "xlac: error: rank 1 of 2: ValueError: parameter 0: expected a leading axis of 2" in run.stderr


@pytest.mark.timeout(180)
def test_aot_object_with_the_mpi_collective_service(tmp_path):
    """runtime/examples: an all-reduce compiled ahead of time, linked with
    xlac_runtime.c built with -DXLAC_WITH_MPI, run on 2 ranks."""
    root = Path(__file__).resolve().parents[2]
    bindir = Path(sys.executable).parent
    mpicc = shutil.which("mpicc", path=str(bindir)) or shutil.which("mpicc")
    if mpicc is None or shutil.which("make") is None:
        pytest.skip("no mpicc or make")
    run = subprocess.run(["make", "-s", "-C", str(root / "runtime" / "examples"), "mpi", f"BUILD={tmp_path}",
                          f"PYTHON={sys.executable}", f"MPICC={mpicc}", f"MPIEXEC={MPIEXEC}"],
                         capture_output=True, encoding="utf-8", timeout=170)
    assert run.returncode == 0, run.stderr
    lines = sorted(line for line in run.stdout.splitlines() if line.startswith("rank "))
    assert lines == ["rank 0: 3 5 7 9", "rank 1: 3 5 7 9"], run.stdout


# A user script under mpiexec: an all-reduce module; what each rank does next
# is the test's ``plan`` (argv[1]).
_FAULT_SCRIPT = """
import os, signal, sys, time
import numpy as np
from xlac.mpi import MpiExecutable

ADD = '''
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
'''
SUM = 'HloModule s, replica_count=2\\n' + ADD + '''
ENTRY e {
  x = f32[4] parameter(0)
  ROOT s = f32[4] all-reduce(x), replica_groups={}, to_apply=add
}
'''
GATHER = 'HloModule g, replica_count=2\\n' + ADD + '''
ENTRY e {
  x = f32[4] parameter(0)
  ROOT s = f32[8] all-gather(x), replica_groups={}, dimensions={0}
}
'''
plan = sys.argv[1]
exe, other = MpiExecutable(SUM), MpiExecutable(GATHER)
rank = exe.rank
# One write per line: the two ranks print at once, and print()'s separate
# writes of its pieces came out interleaved ("firstfirst  [...][...]").
sys.stdout.write(f"first {exe(np.ones((2, 4), np.float32))[0].tolist()}\\n")
sys.stdout.flush()
if plan == "kill" and rank == 1:
    time.sleep(0.5)         # the launcher forwards output asynchronously: let "first" get out
    os.kill(os.getpid(), signal.SIGKILL)
if plan == "mismatch" and rank == 1:
    exe = other
if plan == "extra" and rank == 1:
    sys.exit(0)
exe(np.ones((2, 4), np.float32))
print("second", rank, flush=True)
"""


def _run_faulty(tmp_path, plan):
    script = tmp_path / "faulty.py"
    script.write_text(_FAULT_SCRIPT, encoding="utf-8")
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "cache"), XLAC_COLLECTIVE_TIMEOUT="3")
    start = time.monotonic()
    run = subprocess.run([MPIEXEC, "-n", "2", sys.executable, str(script), plan],
                         capture_output=True, encoding="utf-8", timeout=100, env=env)
    return run, time.monotonic() - start


@pytest.mark.timeout(120)
def test_a_rank_killed_mid_run_ends_the_job_with_an_error(tmp_path):
    run, _ = _run_faulty(tmp_path, "kill")
    assert run.returncode != 0, (run.stdout, run.stderr)
    assert "first [2.0, 2.0, 2.0, 2.0]" in run.stdout, (run.stdout, run.stderr)
    assert "second" not in run.stdout, (run.stdout, run.stderr)
    out = run.stdout + run.stderr
    assert "signal 9" in out.lower() or "killed" in out.lower() or "device 1" in out, out


@pytest.mark.timeout(120)
def test_mismatched_collectives_across_ranks_are_reported(tmp_path):
    run, _ = _run_faulty(tmp_path, "mismatch")
    assert run.returncode != 0
    assert "running a different collective" in run.stderr, run.stderr
    assert "second" not in run.stdout


@pytest.mark.timeout(120)
def test_a_collective_the_other_rank_never_reaches_times_out(tmp_path):
    run, _ = _run_faulty(tmp_path, "extra")
    assert run.returncode != 0
    assert "xlac: error: rank 0 of 2: CollectiveError" in run.stderr and "not complete within 3 s" in run.stderr, \
        run.stderr


# The spec's own examples (operation_semantics: AllReduce, AllGather, AllToAll,
# replica groups, CollectivePermute) on MPI ranks: one job per rank count.
_SPEC_CASES = {
    2: {
        "all_reduce": ("f32[2] all-reduce(x), replica_groups={}, to_apply=add", "f32[2]",
                       [[1.0, 2.5], [3.0, 5.25]]),
        "all_gather": ("f32[4] all-gather(x), replica_groups={}, dimensions={0}", "f32[2]",
                       [[1.0, 2.5], [3.0, 5.25]]),
    },
    4: {
        "all_to_all": ("f32[16,4] all-to-all(x), replica_groups={}, dimensions={0}", "f32[16,4]", None),
        "groups": ("f32[2] all-reduce(x), replica_groups={{0,2},{1,3}}, to_apply=add", "f32[2]",
                   [[1, 2], [10, 20], [100, 200], [1000, 2000]]),
        "permute": ("f32[2] collective-permute(x), source_target_pairs={{0,1},{1,2}}", "f32[2]",
                    [[1, 2], [3, 4], [5, 6], [7, 8]]),
    },
}
_SPEC_WANT = {
    "all_reduce": [[4.0, 7.75]] * 2,
    "all_gather": [[1.0, 2.5, 3.0, 5.25]] * 2,
    "groups": [[101, 202], [1010, 2020], [101, 202], [1010, 2020]],
    "permute": [[0, 0], [1, 2], [3, 4], [0, 0]],
}


def _spec_module(n: int, op: str, shape: str) -> str:
    return (f"HloModule spec, replica_count={n}\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            f"  ROOT s = f32[] add(a, b)\n}}\n\nENTRY e {{\n  x = {shape} parameter(0)\n  ROOT r = {op}\n}}\n")


@pytest.mark.timeout(240)
@pytest.mark.parametrize("n", [2, 4])
def test_the_spec_examples_under_mpiexec(tmp_path, n):
    """Each case through ``mpiexec -n N python -m xlac run`` (one job per case)."""
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "cache"))
    rng = np.random.default_rng(3)
    for name, (op, shape, rows) in _SPEC_CASES[n].items():
        text = _spec_module(n, op, shape)
        (tmp_path / f"{name}.hlo").write_text(text, encoding="utf-8")
        xs = (np.asarray(rows, np.float32) if rows is not None
              else rng.standard_normal((n, 16, 4)).astype(np.float32))
        np.savez(tmp_path / f"{name}.npz", xs)
        run = subprocess.run([MPIEXEC, "-n", str(n), sys.executable, "-m", "xlac", "run", str(tmp_path / f"{name}.hlo"),
                              "--inputs", str(tmp_path / f"{name}.npz"), "--out", str(tmp_path / f"{name}.out.npz")],
                             capture_output=True, encoding="utf-8", timeout=100, env=env)
        assert run.returncode == 0 and run.stderr == "", (name, run.stderr)
        with np.load(tmp_path / f"{name}.out.npz") as f:
            got = f["arr_0"]
        ref = evaluate_replicated(text, [[x] for x in xs])
        for d in range(n):
            np.testing.assert_array_equal(got[d], ref[d], err_msg=f"{name}, device {d}")
        if name in _SPEC_WANT:
            np.testing.assert_array_equal(got, np.asarray(_SPEC_WANT[name], np.float32), err_msg=name)
        else:   # all-to-all: device d gets row block d of every device, stacked in device order
            np.testing.assert_array_equal(got[1], np.concatenate([xs[k][4:8] for k in range(n)], axis=0))
