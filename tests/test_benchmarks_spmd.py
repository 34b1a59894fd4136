"""``python -m benchmarks.spmd``: the data- and tensor-parallel programs
partitioned by xlac beside XLA's, in a quick run (small programs, 1 and 2
devices)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(600)
def test_quick_run_measures_both_and_moves_no_more_than_xla(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "benchmarks.spmd", "--quick", "--devices", "1,2",
                           "--out", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, encoding="utf-8", timeout=540)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads((tmp_path / "spmd.json").read_text(encoding="utf-8"))["rows"]
    assert [(r["program"], r["devices"]) for r in rows] == [
        ("data-parallel", 1), ("data-parallel", 2), ("tensor-parallel", 1), ("tensor-parallel", 2)]
    for r in rows:
        assert r["xlac_ms"] > 0 and r["xla_ms"] > 0 and r["xlac_peak"] > 0
        assert r["xlac_bytes"] <= 1.25 * r["xla_bytes"], r
        assert (r["xlac_bytes"] == 0) == (r["devices"] == 1), r
    one, two = rows[2], rows[3]
    assert two["xlac_peak"] < one["xlac_peak"]          # the weights split: less per device
    text = (tmp_path / "spmd.md").read_text(encoding="utf-8")
    assert "| tensor-parallel | 2 |" in text


def test_bad_device_list_is_one_error_line():
    proc = subprocess.run([sys.executable, "-m", "benchmarks.spmd", "--devices", "3"], cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, encoding="utf-8", timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--devices" in proc.stderr
