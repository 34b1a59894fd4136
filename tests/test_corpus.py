"""The public HLO corpus (../shared/hlo_corpus), in process: JIT against JAX's outputs.

A case whose opcodes the compiler handles must match JAX's results within the
manifest's tolerances; a case using an opcode it does not handle yet must be
refused with ``UnsupportedError`` naming an opcode of the case — never a wrong
answer, never a crash.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import check_supported
from xlac.runtime.executable import _compile  # noqa: F401  (warms the import)

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "hlo_corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())["cases"] if CORPUS.exists() else []


def _flatten(value):
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def _compare(case, got, expected):
    assert len(got) == len(expected)
    for k, (a, e) in enumerate(zip(got, expected)):
        spec = case["outputs"][k]
        a = np.asarray(a)
        assert a.dtype == e.dtype and a.shape == e.shape, f"arr_{k}: {a.dtype}{a.shape} vs {e.dtype}{e.shape}"
        if np.issubdtype(e.dtype, np.inexact) and (spec["rtol"] or spec["atol"]):
            np.testing.assert_allclose(a, e, rtol=spec["rtol"], atol=spec["atol"],
                                       equal_nan=case.get("equal_nan", False), err_msg=f"arr_{k}")
        else:
            np.testing.assert_array_equal(a, e, err_msg=f"arr_{k}")


@pytest.mark.skipif(not MANIFEST, reason=f"no corpus at {CORPUS}")
@pytest.mark.parametrize("case", MANIFEST, ids=[c["name"] for c in MANIFEST])
def test_corpus_case(case):
    name = case["name"]
    module = xlac.parse_hlo((CORPUS / f"{name}.hlo").read_text())
    with np.load(CORPUS / f"{name}.npz") as data:
        inputs = [data[f"arr_{k}"] for k in range(len(data.files))]
    with np.load(CORPUS / f"{name}.expected.npz") as data:
        expected = [data[f"arr_{k}"] for k in range(len(data.files))]
    try:
        check_supported(module)
    except xlac.UnsupportedError as ex:
        assert ex.what in case["opcodes"], f"refused for an opcode the case does not use: {ex}"
        with pytest.raises(xlac.UnsupportedError):
            xlac.jit(module)
        pytest.skip(str(ex))
    got = _flatten(xlac.jit(module)(*inputs))
    _compare(case, got, expected)
