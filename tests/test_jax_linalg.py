"""jax's linear algebra on the CPU (``tests/jax_linalg``): xlac against XLA:CPU's outputs.

Each case is a program jax emitted for ``jnp.linalg`` / ``jax.scipy.linalg``
(``tests/jax_linalg/generate.py``), whose HLO calls jax's LAPACK custom calls.
The JIT runs it (LAPACK from generated code) and every output is compared
with jax's as the manifest says: ``allclose`` within the case's tolerances, or
vectors up to the sign/phase LAPACK may choose (``phase_columns`` /
``phase_rows``), or matrices up to signs (``abs``).  The f64 cases run through
the evaluator too.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.hlo import custom_call

pytest.importorskip("scipy", reason="jax's LAPACK targets need scipy (xlac[linalg])")

CASES_DIR = Path(__file__).resolve().parent / "jax_linalg"
MANIFEST = json.loads((CASES_DIR / "manifest.json").read_text(encoding="utf-8"))["cases"]


def _flatten(value):
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def _phase_normalized(x: np.ndarray, axis: int) -> np.ndarray:
    """Each vector along ``axis`` divided by the phase (sign) of its largest element."""
    v = np.moveaxis(x, axis, -1)
    k = np.argmax(np.abs(v), axis=-1)[..., None]
    pivot = np.take_along_axis(v, k, axis=-1)
    phase = np.where(pivot == 0, 1, pivot / np.where(pivot == 0, 1, np.abs(pivot)))
    return np.moveaxis(v / phase, -1, axis)


def _comparable(x: np.ndarray, how: str) -> np.ndarray:
    if how == "phase_columns":
        return _phase_normalized(x, -2)      # a column runs along the second-to-last axis
    if how == "phase_rows":
        return _phase_normalized(x, -1)
    if how == "abs":
        return np.abs(x)
    return x


def _compare(case, got, expected):
    assert len(got) == len(expected)
    for k, (a, e) in enumerate(zip(got, expected)):
        spec = case["outputs"][k]
        a = np.asarray(a)
        assert a.dtype == e.dtype and a.shape == e.shape, f"arr_{k}: {a.dtype}{a.shape} vs {e.dtype}{e.shape}"
        how = spec.get("compare", "allclose")
        if how == "equal":
            np.testing.assert_array_equal(a, e, err_msg=f"{case['name']} arr_{k}")
            continue
        np.testing.assert_allclose(_comparable(a, how), _comparable(e, how), rtol=spec["rtol"],
                                   atol=spec["atol"], err_msg=f"{case['name']} arr_{k} ({how})")


def _load(case):
    name = case["name"]
    module = xlac.parse_hlo((CASES_DIR / f"{name}.hlo").read_text(encoding="utf-8"))
    with np.load(CASES_DIR / f"{name}.npz") as data:
        inputs = [data[f"arr_{k}"] for k in range(len(data.files))]
    with np.load(CASES_DIR / f"{name}.expected.npz") as data:
        expected = [data[f"arr_{k}"] for k in range(len(case["outputs"]))]
    return module, inputs, expected


@pytest.mark.parametrize("case", MANIFEST, ids=[c["name"] for c in MANIFEST])
def test_jit_matches_xla(case):
    module, inputs, expected = _load(case)
    assert case["targets"] and all(custom_call.is_builtin(t) or t == custom_call.TRIDIAGONAL_SOLVE_PERTURBED
                                   for t in case["targets"])
    _compare(case, _flatten(xlac.jit(module)(*inputs)), expected)


F64 = [c for c in MANIFEST if c["name"].endswith(("_f64", "_c128"))]


@pytest.mark.parametrize("case", F64, ids=[c["name"] for c in F64])
def test_evaluator_matches_xla(case):
    module, inputs, expected = _load(case)
    _compare(case, _flatten(xlac.evaluate(module, *inputs)), expected)


def test_every_function_and_type_is_covered():
    names = {c["name"] for c in MANIFEST}
    for fn in ("cholesky", "solve", "inv", "det", "slogdet", "qr", "eigh", "svd", "lstsq", "pinv",
               "solve_triangular", "lu", "eig", "schur", "hessenberg", "tridiagonal", "tridiagonal_solve",
               "tridiagonal_solve_perturbed", "tridiagonal_solve_perturbed_singular"):
        for t in ("f32", "f64", "c64", "c128"):
            assert f"{fn}_{t}" in names, f"{fn}_{t}"
    targets = {t for c in MANIFEST for t in c["targets"]}
    routines = {custom_call.lapack_target(t).routine for t in targets if custom_call.is_builtin(t)}
    assert targets - {custom_call.TRIDIAGONAL_SOLVE_PERTURBED} == {t for t in targets if custom_call.is_builtin(t)}
    assert routines == set(custom_call.LAPACK_ROUTINES)
