"""Whole training and inference steps of real models (``benchmarks/models``: flax,
equinox and optax programs as jax.jit emits them) through ``xlac.jit``, against
jax's outputs within the manifest's tolerances.

These are the compile-time benchmark's programs (issue 17); each compiles in a few
seconds, so all run here.
"""
import os

import numpy as np
import pytest

import xlac
from benchmarks import models

#: Programs whose results differ from jax's beyond the manifest's tolerances: open
#: bugs (strict: a fix makes the test say so).  None today.  (The attention key
#: biases of vit_train and the GPTs differed by up to ~1e-3: their gradient is
#: zero up to rounding and Adam turns the noise into steps of up to lr, so the
#: manifest gives those outputs twice jax's step as ``atol``, with a ``note``;
#: see ``gen/generate.py``'s ``NOISE_OUTPUTS``.)
KNOWN_MISMATCH: set = set()
CASES = models.cases()


def _param(case):
    name = case["name"]
    # Seconds of CPU can be minutes of wall time on a loaded machine: no 300 s default.
    marks = [pytest.mark.timeout(1800)]
    if name in KNOWN_MISMATCH:
        marks.append(pytest.mark.xfail(strict=True, reason="differs from jax beyond tolerance (see KNOWN_MISMATCH)"))
    return pytest.param(case, id=name, marks=marks)


def test_every_known_mismatch_is_a_program():
    assert KNOWN_MISMATCH <= {c["name"] for c in CASES}


def test_only_noted_outputs_have_a_wider_tolerance():
    # An output with a wider tolerance than its program's others says why.
    for case in CASES:
        usual = min(out["atol"] for out in case["outputs"] if out["dtype"] == "float32")
        for out in case["outputs"]:
            if out["dtype"] == "float32" and out["atol"] > usual:
                assert "zero up to rounding" in out.get("note", ""), (case["name"], out["name"])


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_model_matches_jax(case):
    name = case["name"]
    exe = xlac.jit((models.DIR / f"{name}.hlo").read_text(encoding="utf-8"))
    inputs = models.load_arrays(models.DIR / f"{name}.npz")
    expected = models.load_arrays(models.DIR / f"{name}.expected.npz")
    got = models.flatten(exe(*inputs))
    assert models.mismatches(case, got, expected) == []


def test_mismatches_reports_each_kind_of_difference():
    case = {"outputs": [{"rtol": 1e-4, "atol": 1e-5}, {"rtol": 0.0, "atol": 0.0}, {"rtol": 1e-4, "atol": 1e-5}]}
    expected = [np.ones(3, np.float32), np.arange(4, dtype=np.int32), np.zeros(2, np.float32)]
    assert models.mismatches(case, [e.copy() for e in expected], expected) == []
    got = [np.array([1, 1, 1.01], np.float32), np.array([0, 1, 2, 4], np.int32), np.zeros(3, np.float32)]
    found = models.mismatches(case, got, expected)
    assert len(found) == 3
    assert found[0].startswith("arr_0: max |diff|") and "1 of 4 elements differ" in found[1]
    assert found[2] == "arr_2: float32[3], expected float32[2]"
    assert models.mismatches(case, got[:2], expected) == ["2 outputs, expected 3"]
