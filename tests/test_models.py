"""Whole training and inference steps of real models (``benchmarks/models``: flax,
equinox and optax programs as jax.jit emits them) through ``xlac.jit``, against
jax's outputs within the manifest's tolerances.

These are the compile-time benchmark's programs (issue 17); compiling the
largest takes minutes today, so those are marked ``slow`` and run only with
``XLAC_RUN_SLOW=1`` (``XLAC_RUN_SLOW=1 python -m pytest tests/test_models.py``).
"""
import os

import numpy as np
import pytest

import xlac
from benchmarks import models

#: Programs whose compilation took more than ~15 CPU seconds when they were added
#: (benchmarks/results/models.md: gpt_sample 19, lstm_train 20, bigru_tagger_train 34;
#: the larger ones not measured to the end); the seven others take 1-14 CPU seconds each.
SLOW = {"gpt_train_adamw", "gpt_scan_remat_train", "gpt_sample", "rng_samplers", "vit_train",
        "eqx_transformer_train", "ddpm_unet_train", "lstm_train", "bigru_tagger_train"}
RUN_SLOW = os.environ.get("XLAC_RUN_SLOW") == "1"
CASES = models.cases()


def _param(case):
    name = case["name"]
    # Seconds of CPU can be minutes of wall time on a loaded machine: no 300 s default.
    if name not in SLOW:
        return pytest.param(case, id=name, marks=[pytest.mark.timeout(1800)])
    return pytest.param(case, id=name, marks=[
        pytest.mark.slow, pytest.mark.timeout(3600),
        pytest.mark.skipif(not RUN_SLOW, reason="slow to compile: set XLAC_RUN_SLOW=1")])


def test_every_slow_name_is_a_program():
    assert SLOW <= {c["name"] for c in CASES}


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_model_matches_jax(case):
    name = case["name"]
    exe = xlac.jit((models.DIR / f"{name}.hlo").read_text())
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
