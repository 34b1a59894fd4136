"""collective-broadcast (XLA's CollectiveBroadcast, StableHLO's
collective_broadcast): every device of a replica group gets the operands of
the group's first device — text, shape errors, the replicated evaluator
against hand values, compiled device processes (shared memory) and MPI ranks
against it, the builder."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.devices import ReplicatedExecutable, jit as device_jit
from xlac.evaluator_replicated import evaluate_replicated
from xlac.hlo.collectives import ReplicaGroups
from xlac.hlo.shape_inference import infer_shape

TWO_GROUPS = """HloModule cb, replica_count=4

ENTRY e {
  x = f32[3]{0} parameter(0)
  y = s32[2]{0} parameter(1)
  ROOT b = (f32[3]{0}, s32[2]{0}) collective-broadcast(x, y), replica_groups={{1,0},{3,2}}
}
"""

PARTITIONS = """HloModule cbp, num_partitions=2

ENTRY e {
  x = f32[2,2]{1,0} parameter(0)
  ROOT b = f32[2,2]{1,0} collective-broadcast(x), channel_id=1, replica_groups={{0,1}}
}
"""


def _per_device(n: int) -> list:
    return [[np.full(3, d + 0.5, np.float32), np.int32([d, -d])] for d in range(n)]


def test_text_round_trips():
    printed = xlac.parse_hlo(TWO_GROUPS).to_text()
    assert "collective-broadcast(x, y), replica_groups={{1,0},{3,2}}" in printed
    assert printed == xlac.parse_hlo(printed).to_text()


def test_reference_hand_values():
    got = evaluate_replicated(TWO_GROUPS, _per_device(4))
    for d, first in enumerate([1, 1, 3, 3]):          # each group's first device: 1, then 3
        np.testing.assert_array_equal(got[d][0], np.full(3, first + 0.5, np.float32))
        np.testing.assert_array_equal(got[d][1], np.int32([first, -first]))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("text, n", [(TWO_GROUPS, 4), (PARTITIONS, 2)])
def test_device_processes_match_the_reference(text, n):
    per = _per_device(n) if text is TWO_GROUPS else [[np.full((2, 2), d + 1, np.float32)] for d in range(n)]
    ref = evaluate_replicated(text, per)
    exe = device_jit(text)
    assert isinstance(exe, ReplicatedExecutable)
    got = exe(*[np.stack([p[k] for p in per]) for k in range(len(per[0]))])
    got = got if isinstance(got, tuple) else (got,)
    for d in range(n):
        want = ref[d] if isinstance(ref[d], tuple) else (ref[d],)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g[d], w, err_msg=f"device {d}")


@pytest.mark.timeout(300)
def test_builder():
    b = xlac.XlaBuilder("cb")
    x = ops.parameter(b, 0, xlac.shape("f32[2]"), "x")
    comp = b.build(ops.collective_broadcast(x, replica_groups=[[2, 0, 1]]))
    assert "collective-broadcast(x), replica_groups={{2,0,1}}" in comp.as_hlo_text()
    exe = device_jit(comp, num_replicas=3)
    got = exe(np.float32([[0, 0], [1, 1], [2, 2]]))
    np.testing.assert_array_equal(got, np.float32([[2, 2]] * 3))


@pytest.mark.parametrize("groups, message", [([[0, 1], [1, 2]], "id 1 is repeated"),
                                            ([[0, 2]], "do not name id 1"), ([[0], []], "empty group")])
def test_bad_replica_groups_name_the_op(groups, message):
    with pytest.raises(xlac.ShapeError, match=f"^collective-broadcast: .*{message}"):
        infer_shape("collective-broadcast", [xlac.shape("f32[2]")], {"replica_groups": ReplicaGroups.of(groups)})


MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")


@pytest.mark.timeout(120)
@pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install 'xlac[mpi]')")
def test_under_mpiexec_matches_the_reference(tmp_path):
    pytest.importorskip("mpi4py")
    path = tmp_path / "cb.hlo"
    path.write_text(TWO_GROUPS, encoding="utf-8")
    per = _per_device(4)
    np.savez(tmp_path / "in.npz", np.stack([p[0] for p in per]), np.stack([p[1] for p in per]))
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([MPIEXEC, "-n", "4", sys.executable, "-m", "xlac", "run", str(path),
                          "--inputs", str(tmp_path / "in.npz"), "--out", str(tmp_path / "out.npz")],
                         capture_output=True, encoding="utf-8", timeout=100, env=env)
    assert run.returncode == 0, run.stderr
    ref = evaluate_replicated(TWO_GROUPS, per)
    with np.load(tmp_path / "out.npz") as got:
        for k in range(2):
            for d in range(4):
                np.testing.assert_array_equal(got[f"arr_{k}"][d], ref[d][k], err_msg=f"result {k}, device {d}")
