"""xlac's side of the suite: run one module's text, judge its outputs against XLA:CPU's."""
from __future__ import annotations

import re

import numpy as np

from tests.xla_suite import inputs

# Tolerances by element type: XLA's tests mostly use ErrorSpec(1e-4) for f32 and looser
# ones for the narrow floats; xlac and XLA:CPU may fuse and vectorise differently.
TOLERANCE = {"float64": 1e-9, "complex128": 1e-9, "float32": 1e-4, "complex64": 1e-4,
             "float16": 1e-2, "bfloat16": 2e-2}
NARROW = 0.13                     # float8 / float4: a step of the 3-bit mantissa


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


def mismatch(expected: list, actual: list) -> str | None:
    """Why ``actual`` is not XLA:CPU's ``expected`` (None when it is)."""
    if len(expected) != len(actual):
        return f"{len(actual)} outputs, XLA:CPU gives {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual)):
        if e.dtype != a.dtype or e.shape != a.shape:
            return f"output {i}: {a.dtype}{list(a.shape)}, XLA:CPU gives {e.dtype}{list(e.shape)}"
        if e.dtype.kind in "biu" or e.dtype.name.startswith(("int", "uint")):
            bad = e != a
        else:
            tol = TOLERANCE.get(e.dtype.name, NARROW)
            kind = np.complex128 if e.dtype.kind == "c" else np.float64
            ee, aa = e.astype(kind), a.astype(kind)
            bad = ~np.isclose(aa, ee, rtol=tol, atol=tol, equal_nan=True)
        if np.any(bad):
            at = tuple(int(j) for j in np.argwhere(bad)[0])
            return (f"output {i}: {int(np.sum(bad))} of {e.size} elements differ, first at {list(at)}: "
                    f"xlac {a[at]!r}, XLA:CPU {e[at]!r}")
    return None


def _entry_layouts_matter(text: str) -> bool:
    """Whether the entry takes or gives an array in a layout other than the default and
    the module reinterprets memory (bitcast): XLA:CPU behind PJRT (as the reference runs it)
    is compiled for default entry layouts, so there the bitcast sees other bytes."""
    import xlac
    module = xlac.parse_hlo(text)
    params, result = module.calling_convention
    shapes = [*params, result]
    leaves = [leaf for s in shapes for leaf in (s.leaves() if s.is_tuple else [s])]
    return any(not s.has_default_layout() for s in leaves if s.is_array) and \
        any(i.opcode == "bitcast" for i in module.instructions())


def implementation_defined(text: str) -> str | None:
    """Why XLA's own result for ``text`` on the suite's inputs is not defined by XLA's
    semantics (or not by the module alone), or None."""
    if re.search(r"\brng\(", text):
        return "rng: the generator and its stream are XLA:CPU's own"
    if "set-dimension-size(" in text:
        return "set-dimension-size of a random size: outside [0, bound] XLA:CPU passes it on unchecked"
    if _entry_layouts_matter(text):
        return "entry layouts: the reference runs the module with default entry layouts"
    return None


def judge(text: str, expected, got) -> tuple[str, str]:
    status, detail = got
    if status != "ok":
        return status, detail
    why = mismatch(expected, detail)
    if why is None:
        return "pass", ""
    defined = implementation_defined(text)
    return ("implementation-defined", f"{defined}; {why}") if defined else ("wrong-result", why)
