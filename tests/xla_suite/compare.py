"""xlac's side of the suite: run one module's text, judge its outputs against XLA:CPU's."""
from __future__ import annotations

import re

import numpy as np

from tests.xla_suite import inputs, store

# Tolerances by element type: XLA's tests mostly use ErrorSpec(1e-4) for f32 and looser
# ones for the narrow floats; xlac and XLA:CPU may fuse, vectorise and accumulate in
# other orders.  A module that computes in a narrower float than it returns (a bf16 dot
# converted to f32) is judged by the narrowest float it computes in.
TOLERANCE = {"f64": 1e-9, "c128": 1e-9, "f32": 1e-4, "c64": 1e-4, "f16": 1e-2, "bf16": 2e-2}
NARROW = 0.13                     # float8 / float4: a step of a 3-bit mantissa
NUMPY_NAMES = {"float64": "f64", "complex128": "c128", "float32": "f32", "complex64": "c64",
               "float16": "f16", "bfloat16": "bf16"}
FLOAT_TYPES = re.compile(r"\b(f64|c128|f32|c64|f16|bf16|f8e\w+|f4e\w+)\[")

_SPLIT_RESHAPE = ("a reshape splitting a dynamic dimension into a minor dynamic one: XLA:CPU sums the "
                  "whole bound, where XLA's DynamicPadder test expects (and xlac gives) the valid elements")
_SOFTMAX = ("a bf16 softmax: XLA:CPU computes x (add.27) once for max(x) and again, otherwise rounded, "
            "for x - max(x), which comes out positive (up to 0.29, in about 12,000 elements; with "
            "--xla_allow_excess_precision=false too); every rounding of the module's ops gives x - max(x) <= 0")
_EMPTY_FFT = "FFT with an fft_length of 0: XLA:CPU returns uninitialised memory, the evaluator 0"

# Cases where XLA:CPU's own result is not what XLA's semantics give, each checked by hand
# against an exact computation; xlac gives the exact result.  Keyed by case key.
XLA_DEVIATIONS = {
    "xla/service/dynamic_padder_test.cc:1311bcde1497": _SPLIT_RESHAPE,
    "xla/service/dynamic_padder_test.cc:fb9a068f865d": _SPLIT_RESHAPE,
    "xla/service/dynamic_padder_test.cc:6d3262f190b4": _SPLIT_RESHAPE,
    "xla/tests/reduce_test.cc:5e263eaf30af":
        "XLA:CPU's reduce with a multi-output epilogue gives -21.45 where the f64 sum is -25.2008",
    "xla/hlo/evaluator/hlo_evaluator_test.cc:368d0b2c303b": _EMPTY_FFT,
    "xla/hlo/evaluator/hlo_evaluator_test.cc:9d7d5fbfae0d": _EMPTY_FFT,
    "xla/backends/gpu/tests/gpu_fused_mha_test.cc:8ca6c6fc579d": _SOFTMAX,
    "xla/backends/gpu/tests/gpu_fused_mha_test.cc:112e63c61edf": _SOFTMAX,
    "xla/service/elemental_ir_emitter_test.cc:cf1469579dd3":
        "XLA folds A/constant into A*(1/constant), which does not keep C99's complex special "
        "values ((nan+inf*i)/(1+i) is inf+inf*i, XLA:CPU nan+nan*i)",
}


def _flatten(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _flatten(v)]
    return [np.asarray(value)]


def run_on_xlac(text: str):
    """("ok", [outputs]) or (cause, message) for one module's text in xlac."""
    import xlac
    from xlac.errors import HloParseError, ShapeError, UnsupportedError
    try:
        module = xlac.parse_hlo(text)
    except HloParseError as e:
        return ("xlac-refuses-text", str(e).splitlines()[0][:300])
    except Exception as e:                  # noqa: BLE001
        return ("internal-error", f"parse: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
    try:
        exe = xlac.jit(module)
        args = [inputs.argument(s.dtype, s.dimensions, i) for i, s in enumerate(exe.argument_shapes)]
        return ("ok", _flatten(exe(*args)))
    except UnsupportedError as e:
        return ("unsupported", str(e).splitlines()[0][:300])
    except ShapeError as e:
        return ("xlac-refuses-module", str(e).splitlines()[0][:300])
    except Exception as e:                  # noqa: BLE001
        return ("internal-error", f"{type(e).__name__}: {str(e).splitlines()[0][:300]}")


#: Float types computed in f64 for the exact computation (``run_exact``).
_PROMOTED = re.compile(r"\b(bf16|f16|f32|f8e\w+|f4e\w+)\[")
#: xlac is as accurate as XLA:CPU when its largest error against the exact computation
#: is at most this many times XLA:CPU's (the two sum, fuse and round in other orders).
AS_ACCURATE = 2.0


def run_exact(text: str):
    """("ok", [outputs]) of the evaluator on ``text`` with every real float type computed
    in f64, on the suite's arguments (the same values, as f64), or (why not, message):
    what an output of an ill-conditioned computation (``sin`` of a large dot, a softmax of
    rounded logits) should be, to judge both sides' rounding against."""
    import xlac
    if re.search(r"\b(bitcast|bitcast-convert|reduce-precision|custom-call)\(", text):
        return ("no-exact", "reinterprets bits or calls out: not computable in f64")
    try:
        shapes = xlac.parse_hlo(text).entry.parameter_shapes()     # no compile: only their types are needed
        args = [inputs.argument(s.dtype, s.dimensions, i) for i, s in enumerate(shapes)]
        args = [a.astype(np.float64) if s.element_type.is_float
                else a for a, s in zip(args, shapes)]
        with np.errstate(all="ignore"):
            return ("ok", _flatten(xlac.evaluate(xlac.parse_hlo(_PROMOTED.sub("f64[", text)), *args)))
    except Exception as e:                  # noqa: BLE001
        return ("no-exact", f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")


def as_accurate(expected: list, actual: list, exact: list) -> str | None:
    """Why xlac's float ``actual`` is as close to the ``exact`` computation as XLA:CPU's
    ``expected`` (:class:`store.Expected`), output by output, or None when it is not."""
    worst = []
    for e, a, x in zip(expected, actual, exact):
        if e.dtype.kind not in "fV" or e.shape != a.shape or x.shape != a.shape:
            return None
        want = e.values.astype(np.float64)
        got, ideal = e.kept(a).astype(np.float64), e.kept(x).astype(np.float64)
        finite = np.isfinite(ideal) & np.isfinite(want) & np.isfinite(got)
        if not np.array_equal(np.isfinite(want), np.isfinite(got)) or not finite.any():
            return None
        ours, theirs = np.abs(got - ideal)[finite].max(), np.abs(want - ideal)[finite].max()
        if ours > AS_ACCURATE * theirs:
            return None
        worst.append(f"{ours:.3g} vs {theirs:.3g}")
    return "largest error against the f64 computation, xlac vs XLA:CPU: " + ", ".join(worst)


def tolerance(text: str, dtype: np.dtype) -> float:
    """The relative and absolute tolerance for an output of ``dtype`` of the module ``text``."""
    computed = [TOLERANCE.get(t, NARROW) for t in FLOAT_TYPES.findall(text)]
    return max([TOLERANCE.get(NUMPY_NAMES.get(dtype.name, ""), NARROW), *computed])


def _differ(expected: np.ndarray, actual: np.ndarray, tol: float) -> np.ndarray:
    """Elementwise: where ``actual`` is not ``expected`` (same dtype) within ``tol``,
    relative, or absolute on the output's scale (its largest finite magnitude, at least
    1): an element that cancels to near zero carries the rounding of its terms."""
    if expected.dtype.kind in "biu" or expected.dtype.name.startswith(("int", "uint")):
        return expected != actual
    kind = np.complex128 if expected.dtype.kind == "c" else np.float64
    e, a = expected.astype(kind), actual.astype(kind)
    finite = np.abs(e[np.isfinite(e)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return ~np.isclose(a, e, rtol=tol, atol=tol * scale, equal_nan=True)


def _paired(e: store.Expected, a: np.ndarray, dynamic: bool):
    """(expected values, xlac's values, their flat positions, the shape they index) to
    compare, or None when the shapes cannot be compared.  An output of a dynamic shape
    comes back from XLA:CPU in a buffer of its bound shape holding the valid elements
    first, packed row-major (the rest is not defined); from xlac at its dynamic size."""
    if e.shape == a.shape:
        where = store.positions(a.size)
        flat = np.arange(a.size) if where is None else where
        return e.values, e.kept(a), flat, e.shape
    if not dynamic or len(e.shape) != a.ndim or any(x > y for x, y in zip(a.shape, e.shape)):
        return None
    where = store.positions(int(np.prod(e.shape, dtype=np.int64)))
    flat = np.arange(e.values.size) if where is None else where
    inside = flat < a.size
    return e.values[inside], a.reshape(-1)[flat[inside]], flat[inside], a.shape


def mismatch(expected: list, actual: list, text: str = "") -> str | None:
    """Why ``actual`` (arrays) is not XLA:CPU's ``expected`` (:class:`store.Expected`), or None."""
    if len(expected) != len(actual):
        return f"{len(actual)} outputs, XLA:CPU gives {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual)):
        pairs = _paired(e, a, "<=" in text) if e.dtype == a.dtype else None
        if pairs is None:
            return f"output {i}: {a.dtype}{list(a.shape)}, XLA:CPU gives {e.dtype}{list(e.shape)}"
        want, got, flat, shape = pairs
        bad = _differ(want, got, tolerance(text, e.dtype))
        if np.any(bad):
            first = int(np.argmax(bad))
            at = [int(j) for j in np.unravel_index(int(flat[first]), shape)]
            return (f"output {i}: {int(np.sum(bad))} of {bad.size} compared elements differ, first at {at}: "
                    f"xlac {got[first]!r}, XLA:CPU {want[first]!r}")
    return None


def _entry_layouts_matter(text: str) -> bool:
    """Whether the entry takes or gives an array in a layout other than the default and
    the module reinterprets memory (bitcast): XLA:CPU behind PJRT (as the reference runs it)
    is compiled for default entry layouts, so there the bitcast sees other bytes."""
    import xlac
    module = xlac.parse_hlo(text)
    params, result = module.calling_convention
    leaves = [leaf for s in [*params, result] for leaf in (s.leaves() if s.is_tuple else [s])]
    return any(not s.has_default_layout() for s in leaves if s.is_array) and \
        any(i.opcode == "bitcast" for i in module.instructions())


def implementation_defined(text: str) -> str | None:
    """Why XLA's own result for ``text`` on the suite's inputs is not defined by XLA's
    semantics (or not by the module alone), or None."""
    if re.search(r"\brng\(", text):
        return "rng: the generator and its stream are XLA:CPU's own"
    if "dynamic-reshape(" in text and re.search(r"s32\[\] parameter\(", text):
        return ("dynamic-reshape to sizes from random parameters: their product need not be the "
                "operand's valid element count, which the op requires")
    if re.search(r"\b(bf16|f16)\[\] add\(", text) and re.search(r"\breduce\(", text):
        return "a reduce adding in bf16/f16: the order of the additions (not specified) decides the rounding"
    if re.search(r"\bsort\(", text) and "is_stable=true" not in text:
        return "an unstable sort: the order of equal keys is not specified (the inputs have ties)"
    if _entry_layouts_matter(text):
        return "entry layouts: the reference runs the module with default entry layouts"
    return None


def judge(text: str, expected, got, key: str = "", exact=None) -> tuple[str, str]:
    """(cause, detail) for xlac's ``got`` (as ``run_on_xlac`` returns it) against ``expected``.
    ``exact``: a function returning what ``run_exact`` does for ``text``, asked only when
    the outputs differ beyond the tolerance."""
    status, detail = got
    if status != "ok":
        return status, detail
    why = mismatch(expected, detail, text)
    if why is None:
        return "pass", ""
    if key in XLA_DEVIATIONS:
        return "xla-deviates", f"{XLA_DEVIATIONS[key]}; {why}"
    defined = implementation_defined(text)
    if defined:
        return "implementation-defined", f"{defined}; {why}"
    ideal = exact() if exact is not None else ("no-exact", "")
    accurate = as_accurate(expected, detail, ideal[1]) if ideal[0] == "ok" else None
    if accurate:
        return "implementation-defined", f"rounding: {accurate}; {why}"
    return "wrong-result", why
