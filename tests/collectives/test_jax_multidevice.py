"""Real jax programs with collectives (``tests/jax_multidevice``, written by its
``generate.py`` with jax 0.10 on 4 CPU devices): ``jax.pmap`` and
``shard_map`` functions as ``jax.jit`` lowers them — the global program with
Shardy annotations — and as XLA partitions them for each device, run on 4
device processes over shared memory and (the global form) on 4 MPI ranks,
taking jax's global inputs and matching jax's outputs."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlac

CASES = Path(__file__).resolve().parents[1] / "jax_multidevice"
NAMES = sorted(json.loads((CASES / "manifest.json").read_text(encoding="utf-8"))["cases"])
#: Run with ``mpiexec ... xlac run`` (all of them run under mpiexec from one script).
MPI_CLI_NAMES = ["pmap_mlp_step", "smap_all_to_all"]


def _load(name: str):
    with np.load(CASES / f"{name}.npz") as f:
        args = [f[f"arr_{k}"] for k in range(len(f.files))]
    with np.load(CASES / f"{name}.expected.npz") as f:
        want = [f[f"arr_{k}"] for k in range(len(f.files))]
    return args, want


def _close(got, want, name):
    assert len(got) == len(want), name
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (name, k, g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=f"{name}, result {k}")


@pytest.mark.parametrize("name", NAMES)
def test_global_program_on_device_processes(name):
    args, want = _load(name)
    out = xlac.jit((CASES / f"{name}.hlo").read_text(encoding="utf-8"))(*args)
    _close(list(out) if isinstance(out, tuple) else [out], want, name)


@pytest.mark.parametrize("name", NAMES)
def test_global_program_from_stablehlo(name):
    """The same program as jax prints it by default (``lower().as_text()``:
    StableHLO with Shardy's ``sdy.mesh`` and ``sdy.manual_computation``)."""
    args, want = _load(name)
    out = xlac.jit((CASES / f"{name}.mlir").read_text(encoding="utf-8"))(*args)
    _close(list(out) if isinstance(out, tuple) else [out], want, name)


@pytest.mark.parametrize("name", NAMES)
def test_partitioned_program_on_device_processes(name):
    """XLA's own per-device program (``compile().as_text()``: local shapes,
    parameter shardings, fusions) from jax's global inputs; the module does
    not say how its results' tiles make the global values, so they come back
    per device and are put together here with the global program's output
    shardings."""
    from xlac.passes.shard_map import output_shardings
    args, want = _load(name)
    out = xlac.jit((CASES / f"{name}.spmd.hlo").read_text(encoding="utf-8"))(*args)
    outs = list(out) if isinstance(out, tuple) else [out]
    shardings = output_shardings(xlac.parse_hlo((CASES / f"{name}.hlo").read_text(encoding="utf-8")))
    _close([s.assemble(list(o)) for s, o in zip(shardings, outs)], want, name)


@pytest.mark.parametrize("form", ["hlo", "spmd.hlo"])
def test_xlac_run_on_device_processes(tmp_path, form):
    """``xlac run`` starts the devices itself and writes the global results."""
    name = "pmap_mlp_step"
    out = tmp_path / "out.npz"
    run = subprocess.run([sys.executable, "-m", "xlac", "run", str(CASES / f"{name}.{form}"),
                          "--inputs", str(CASES / f"{name}.npz"), "--out", str(out)],
                         capture_output=True, encoding="utf-8", timeout=120)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    _, want = _load(name)
    with np.load(out) as f:
        got = [f[f"arr_{k}"] for k in range(len(f.files))]
    if form == "spmd.hlo":
        from xlac.passes.shard_map import output_shardings
        shardings = output_shardings(xlac.parse_hlo((CASES / f"{name}.hlo").read_text(encoding="utf-8")))
        got = [s.assemble(list(o)) for s, o in zip(shardings, got)]
    _close(got, want, name)


@pytest.mark.timeout(180)
def test_global_programs_under_mpiexec(tmp_path):
    pytest.importorskip("mpi4py")
    mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("no mpiexec")
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "cache"))
    for name in MPI_CLI_NAMES:
        out = tmp_path / f"{name}.out.npz"
        run = subprocess.run([mpiexec, "-n", "4", sys.executable, "-m", "xlac", "run", str(CASES / f"{name}.hlo"),
                              "--inputs", str(CASES / f"{name}.npz"), "--out", str(out)],
                             capture_output=True, encoding="utf-8", timeout=120, env=env)
        assert run.returncode == 0 and run.stderr == "", (name, run.stderr)
        _, want = _load(name)
        with np.load(out) as f:
            _close([f[f"arr_{k}"] for k in range(len(f.files))], want, name)


def test_automatic_sharding_runs_partitioned():
    """A sharded program with no manual computation (jax.jit with NamedShardings):
    partitioned (tests/test_spmd.py), each device computing its rows, global
    arrays in and out."""
    text = (CASES / "pmap_psum.hlo").read_text(encoding="utf-8")
    # The same parameters and shardings, but no manual computation.
    entry = text[text.index("ENTRY"):]
    param = next(line for line in entry.splitlines() if "parameter(0)" in line).strip()
    assert "sharding={devices=[4,1]<=[4]}" in param
    auto = (text[:text.index("\n")] + "\n\nENTRY main {\n  " + param + "\n  ROOT n = f32[4,3]{1,0} negate("
            + param.split(" = ")[0] + ")\n}\n")
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    exe = xlac.jit(auto)
    assert type(exe).__name__ == "PartitionedExecutable"
    np.testing.assert_array_equal(exe(x), -x)


# Under mpiexec: every case in both forms, rank 0 saving what it got.
_MPI_SCRIPT = """
import sys
from pathlib import Path
import numpy as np
import xlac
from mpi4py import MPI

cases, out = Path(sys.argv[1]), Path(sys.argv[2])
for name in sys.argv[3:]:
    with np.load(cases / f"{name}.npz") as f:
        args = [f[f"arr_{k}"] for k in range(len(f.files))]
    for form in ("hlo", "spmd.hlo"):
        got = xlac.jit((cases / f"{name}.{form}").read_text(encoding="utf-8"))(*args)
        got = list(got) if isinstance(got, tuple) else [got]
        if MPI.COMM_WORLD.Get_rank() == 0:
            np.savez(out / f"{name}.{form}.npz", *got)
"""


@pytest.mark.timeout(600)
def test_every_program_in_both_forms_under_mpiexec(tmp_path):
    """All the programs, global and partitioned, on 4 MPI ranks (one job)."""
    pytest.importorskip("mpi4py")
    from xlac.passes.shard_map import output_shardings
    mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("no mpiexec")
    script = tmp_path / "run_all.py"
    script.write_text(_MPI_SCRIPT, encoding="utf-8")
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([mpiexec, "-n", "4", sys.executable, str(script), str(CASES), str(tmp_path), *NAMES],
                         capture_output=True, encoding="utf-8", timeout=580, env=env)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    for name in NAMES:
        _, want = _load(name)
        with np.load(tmp_path / f"{name}.hlo.npz") as f:
            _close([f[f"arr_{k}"] for k in range(len(f.files))], want, name)
        shardings = output_shardings(xlac.parse_hlo((CASES / f"{name}.hlo").read_text(encoding="utf-8")))
        with np.load(tmp_path / f"{name}.spmd.hlo.npz") as f:
            outs = [f[f"arr_{k}"] for k in range(len(f.files))]
        _close([s.assemble(list(o)) for s, o in zip(shardings, outs)], want, name + " (partitioned)")
