"""``python -m benchmarks.jax_backend``: jax on xlac's plugin beside jax on XLA:CPU
(dispatch, compile time of tiny programs, real models through each PJRT client)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
ROOT = Path(__file__).resolve().parents[1]


def test_quick_run_measures_both_backends_and_checks_the_model(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), JAX_PLATFORMS="cpu,xlac")
    proc = subprocess.run([sys.executable, "-m", "benchmarks.jax_backend", "--quick", "--only", "eqx_cnn_train",
                           "--out", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, encoding="utf-8", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((tmp_path / "jax_backend.json").read_text(encoding="utf-8"))
    assert [r["program"] for r in res["models"]] == ["eqx_cnn_train"]
    assert res["models"][0]["xlac_check"] == "ok" and res["models"][0]["cpu_check"] == "ok"
    for table in ("dispatch", "compile"):
        assert res[table] and all(v > 0 for r in res[table] for k, v in r.items() if k != "program")
    text = (tmp_path / "jax_backend.md").read_text(encoding="utf-8")
    assert "## Dispatch" in text and "## Compile time" in text and "| eqx_cnn_train |" in text
