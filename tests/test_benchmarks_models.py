"""benchmarks/models (the compile-time table on real models): the data's format and a
quick run of the harness (no timed asserts)."""
import json

import numpy as np
import pytest

from benchmarks import models


def test_manifest_describes_the_files():
    m = models.manifest()
    assert m["num_cases"] == len(m["cases"]) >= 12
    for case in m["cases"]:
        name = case["name"]
        text = (models.DIR / f"{name}.hlo").read_text(encoding="utf-8")
        assert text.startswith("HloModule ") and case["instructions"] > 0 and case["computations"] > 0
        assert case["jax"]["compile_s"] > 0 and case["jax"]["run_s"] > 0
        inputs = models.load_arrays(models.DIR / f"{name}.npz")
        assert [list(a.shape) for a in inputs] == [i["shape"] for i in case["inputs"]]
        outputs = models.load_arrays(models.DIR / f"{name}.expected.npz")
        assert [str(a.dtype) for a in outputs] == [o["dtype"] for o in case["outputs"]]


@pytest.mark.timeout(600)
def test_quick_run_reports_compile_phases(tmp_path, capsys):
    assert models.main(["--quick", "--no-jax", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    smallest = min(models.cases(), key=lambda c: c["instructions"])["name"]
    assert f"| {smallest} | " in text and "jax compile s (recorded)" in text and "| ok |" in text
    assert "geometric mean" in text and "optimize s" in text
    assert (tmp_path / "models.md").read_text(encoding="utf-8").strip() == text.strip()
    res = json.loads((tmp_path / "models.json").read_text(encoding="utf-8"))
    (row,) = res["rows"]
    phases = row["xlac"]["phases"]
    assert set(models.PHASES) <= set(phases)
    spent = sum(phases[p] for p in models.PHASES)
    assert np.isclose(spent, row["xlac"]["compile_s"], rtol=1e-6) or spent < row["xlac"]["compile_s"]


def test_unknown_program_is_an_error(capsys):
    with pytest.raises(SystemExit):
        models.main(["--only", "no_such_model"])
    assert "unknown program(s) ['no_such_model']" in capsys.readouterr().err
