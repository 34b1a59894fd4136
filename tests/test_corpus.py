"""HLO corpora in process: JIT against JAX's outputs.

Three sets in the same format: the public corpus (``tests/hlo_corpus``),
the project's own ``tests/jax_cases`` (written by its ``generate.py`` from
jax in a scratch environment) and ``tests/stablehlo_corpus/chlo`` (jax's
StableHLO with ``chlo`` ops, no HLO beside it).  A case whose opcodes the
compiler handles must match JAX's results within the manifest's tolerances; a
case using an opcode it does not handle yet must be refused with
``UnsupportedError`` naming an opcode of the case — never a wrong answer, never
a crash.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import check_supported
import xlac.executable  # noqa: F401  (warms the import)

CORPUS = Path(__file__).resolve().parent / "hlo_corpus"
JAX_CASES = Path(__file__).resolve().parent / "jax_cases"
#: The public corpus's programs as StableHLO (``tests/stablehlo_corpus/generate.py``).
STABLEHLO_CORPUS = Path(__file__).resolve().parent / "stablehlo_corpus"
#: Programs whose StableHLO keeps ``chlo`` ops (``tests/stablehlo_corpus/chlo/generate.py``).
CHLO_CASES = STABLEHLO_CORPUS / "chlo"


def _cases(directory: Path) -> list:
    """(directory, case) for every case of the manifest in ``directory``."""
    if not (directory / "manifest.json").exists():
        return []
    return [(directory, c) for c in json.loads((directory / "manifest.json").read_text(encoding="utf-8"))["cases"]]


MANIFEST = _cases(CORPUS) + _cases(JAX_CASES) + _cases(CHLO_CASES)


def _flatten(value):
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def _typed(array, spec):
    """``array`` as the manifest's dtype: npz keeps bfloat16 as 2-byte voids."""
    if array.dtype.kind == "V" and spec.get("dtype") == "bfloat16":
        return array.view(xlac.Shape(xlac.BF16, ()).dtype)
    return array


def _compare(case, got, expected):
    assert len(got) == len(expected)
    for k, (a, e) in enumerate(zip(got, expected)):
        spec = case["outputs"][k]
        a = np.asarray(a)
        assert a.dtype == e.dtype and a.shape == e.shape, f"arr_{k}: {a.dtype}{a.shape} vs {e.dtype}{e.shape}"
        if spec["dtype"] in _INEXACT and (spec["rtol"] or spec["atol"]):
            np.testing.assert_allclose(_real_parts(a), _real_parts(e), rtol=spec["rtol"], atol=spec["atol"],
                                       equal_nan=case.get("equal_nan", False), err_msg=f"arr_{k}")
        else:
            np.testing.assert_array_equal(a, e, err_msg=f"arr_{k}")


#: The dtypes compared within tolerances (bfloat16 is no numpy inexact type).
_INEXACT = {"float16", "bfloat16", "float32", "float64", "complex64", "complex128"}


def _real_parts(x: np.ndarray) -> np.ndarray:
    """``x`` as real numbers numpy compares within tolerances: bf16 as f32, a
    complex number as its two parts (numpy's complex ``isclose`` wants the other
    part exactly equal when one is infinite)."""
    if np.iscomplexobj(x):
        return np.stack([x.real, x.imag], axis=-1)
    return x.astype(np.float32) if x.dtype.itemsize == 2 and x.dtype != np.float16 else x


def _stablehlo_texts(directory: Path, name: str) -> list:
    """The case's StableHLO texts: ``NAME.mlir`` (``lower().as_text()``) and
    ``NAME.export.mlir`` (``jax.export``) beside its HLO, or the corpus's translation."""
    places = [directory / f"{name}.mlir", directory / f"{name}.export.mlir"]
    if directory == CORPUS:
        places.append(STABLEHLO_CORPUS / f"{name}.mlir")
    return [p for p in places if p.exists()]


@pytest.mark.parametrize("directory,case", MANIFEST, ids=[f"{d.name}/{c['name']}" for d, c in MANIFEST])
def test_corpus_case(directory, case):
    """The case's HLO and, in the same run, each of its StableHLO texts, against JAX's outputs."""
    name = case["name"]
    if (directory / f"{name}.hlo").exists():
        _run_case(directory, case, xlac.parse_hlo((directory / f"{name}.hlo").read_text(encoding="utf-8")))
    for path in _stablehlo_texts(directory, name):
        _run_case(directory, case, xlac.parse_stablehlo(path.read_text(encoding="utf-8"), path.name), path.name)


def _run_case(directory, case, module, text_name=None):
    name = case["name"]
    with np.load(directory / f"{name}.npz") as data:
        inputs = [data[f"arr_{k}"] for k in range(len(data.files))]
    with np.load(directory / f"{name}.expected.npz") as data:
        expected = [_typed(data[f"arr_{k}"], spec) for k, spec in enumerate(case["outputs"])]
    try:
        check_supported(module)
    except xlac.UnsupportedError as ex:
        assert ex.what in case["opcodes"], f"refused for an opcode the case does not use: {ex}"
        with pytest.raises(xlac.UnsupportedError):
            xlac.jit(module)
        if text_name is None:
            pytest.skip(str(ex))
        return
    got = _flatten(xlac.jit(module)(*inputs))
    if text_name is None:
        _compare(case, got, expected)
    else:
        try:
            _compare(case, got, expected)
        except AssertionError as e:
            raise AssertionError(f"{text_name}: {e}") from None
