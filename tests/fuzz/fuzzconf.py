"""What the fuzzers share: the CI / long-campaign switch, random inputs, and
result comparison between the evaluator and the JIT.

CI runs a small fixed set of examples (hypothesis ``derandomize=True``, fixed
seeds): the same examples on every run, so a failure is reproducible and CI
never turns red by chance.  ``XLAC_FUZZ_LONG=1`` switches to the long
campaign: many more examples, random seeds (hypothesis then keeps failures in
its example database and replays them first).  ``XLAC_FUZZ_EXAMPLES=N``
overrides the number of examples of every fuzzer in either mode.

CI does not shrink a failing example (hypothesis can spend minutes on it, past
the test timeout, and then prints nothing): it reports the example as found.
The long mode shrinks, and so does ``XLAC_FUZZ_SHRINK=1`` in either mode, to
turn a CI failure into a minimal reproducer.
"""
from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, Phase, note, settings

import xlac

def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip() not in ("", "0")


LONG = _flag("XLAC_FUZZ_LONG")
SHRINK = LONG or _flag("XLAC_FUZZ_SHRINK")


def examples(ci: int, long: int) -> int:
    """How many examples (or mutations) a fuzzer runs in this mode."""
    override = os.environ.get("XLAC_FUZZ_EXAMPLES")
    if override:
        return int(override)
    return long if LONG else ci


def fuzz_settings(ci: int, long: int) -> settings:
    """Hypothesis settings for a fuzzer: deterministic in CI, random and long in the long mode."""
    phases = list(Phase) if SHRINK else [p for p in Phase if p not in (Phase.shrink, Phase.explain)]
    return settings(max_examples=examples(ci, long), deadline=None, derandomize=not LONG,
                    database=settings.default.database if LONG else None, phases=phases,
                    suppress_health_check=list(HealthCheck), print_blob=LONG)


# ---------------------------------------------------------------------------
# element types and random inputs
# ---------------------------------------------------------------------------

FLOATS = ("f32", "f64", "bf16", "f16")
INTS = ("s32", "u8")
TYPES = ("pred",) + INTS + FLOATS


def dtype(et: str) -> np.dtype:
    return xlac.Shape(xlac.PrimitiveType.from_name(et), ()).dtype


SPECIAL_FLOATS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 1e30, -3e-39, 65504.0, 7.0])


def random_array(rng: np.random.Generator, et: str, dims: tuple, special: bool = True) -> np.ndarray:
    """Values of moderate size, with special values (inf, nan, -0, extremes) mixed in
    when ``special``: the edge cases are where implementations differ."""
    n = int(np.prod(dims, dtype=np.int64))
    if et == "pred":
        return rng.integers(0, 2, n).astype(bool).reshape(dims)
    dt = dtype(et)
    if et in INTS:
        info = np.iinfo(dt)
        values = rng.integers(max(info.min, -8), min(info.max, 9), n, endpoint=True)
        if special and n:
            extremes = np.array([info.min, info.max, info.min + 1, 0, 1], np.int64)
            mask = rng.random(n) < 0.15
            values[mask] = rng.choice(extremes, int(mask.sum()))
        return values.astype(dt).reshape(dims)
    values = rng.normal(0.0, 2.0, n)
    if special and n:
        mask = rng.random(n) < 0.1
        values[mask] = rng.choice(SPECIAL_FLOATS, int(mask.sum()))
    with np.errstate(over="ignore"):
        return values.astype(dt).reshape(dims)


# ---------------------------------------------------------------------------
# comparing results
# ---------------------------------------------------------------------------

#: Relative tolerance of a float value that went through inexact operations
#: (polynomial math within ~2 ulp, reassociated reductions and dots): chains of
#: such ops amplify errors, and one ulp of bf16/f16 is already 4e-3 / 1e-3.
RTOL = {"f64": 1e-9, "f32": 1e-3, "bf16": 3e-2, "f16": 1e-2, "c64": 1e-3, "c128": 1e-9}
#: Absolute tolerance: results in (or near) the denormals, where relative error means little.
ATOL = {"f64": 1e-300, "f32": 1e-36, "bf16": 1e-36, "f16": 2e-7}
MAX_FINITE = {"f64": float(np.finfo(np.float64).max), "f32": float(np.finfo(np.float32).max),
              "bf16": 3.3895313892515355e38, "f16": 65504.0}


def _et_of(a: np.ndarray) -> str:
    return xlac.PrimitiveType.from_dtype(a.dtype).value


def mismatch(got, want, rtol: float = 0.0) -> str | None:
    """Why ``got`` differs from ``want`` (None: they agree).

    Integers and preds compare exactly; so do floats computed only by exact
    IEEE operations (``rtol == 0``; NaN positions equal, -0 == +0).  Other
    floats compare within ``rtol`` (and ATOL of their type), NaN positions equal, and an
    overflow on one side only (inf against a value near the type's maximum)
    is accepted: which side of the threshold a 1-ulp difference lands on is
    not a bug.
    """
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
    if want.dtype.kind == "c":              # (FFTs: errors relative to the largest magnitude)
        scale = float(np.max(np.abs(want), initial=0.0)) if np.all(np.isfinite(want)) else 0.0
        for part in (np.real, np.imag):
            g, w = part(got), part(want)
            why = mismatch(g, w, rtol) if not rtol else \
                (None if np.allclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True)
                 else mismatch(g, w, rtol))
            if why:
                return why
        return None
    if want.dtype.kind not in "fV" and want.dtype != dtype("bf16"):
        bad = got != want
    else:
        et = _et_of(want)
        g, w = got.astype(np.float64), want.astype(np.float64)
        nan_g, nan_w = np.isnan(g), np.isnan(w)
        if not rtol:
            bad = (g != w) & ~(nan_g & nan_w) | (nan_g != nan_w)
        else:
            big = MAX_FINITE[et] / (1 + 4 * rtol)
            with np.errstate(invalid="ignore", over="ignore"):
                close = np.isclose(g, w, rtol=rtol, atol=ATOL[et]) | (g == w)
                overflow = (np.isinf(g) & (np.abs(w) >= big) | np.isinf(w) & (np.abs(g) >= big)) \
                    & (np.sign(g) == np.sign(w))
            bad = ~(close | overflow | (nan_g & nan_w)) | (nan_g != nan_w)
    if not np.any(bad):
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"{int(np.count_nonzero(bad))} of {bad.size} elements differ, first at {list(where)}: "
            f"{got[where]!r} vs {want[where]!r}")


def jit_or_unsupported(comp, optimize: bool = True):
    """``xlac.jit(comp)``, or None when the compiler refuses an op it does not
    handle yet: the README's contract allows ``UnsupportedError`` — but only
    naming an op the module has (a refusal naming another op, e.g. ``multiply``
    for a pred ``dot``, is a bug), as tests/test_corpus.py holds the corpus to."""
    try:
        return xlac.jit(comp, optimize=optimize)
    except xlac.UnsupportedError as e:
        opcodes = {i.opcode for c in comp.module.computations for i in c.instructions}
        assert e.what in opcodes, f"refused for an op the module does not have: {e}"
        note(f"refused: {e}")
        return None


def leaves(value) -> list:
    """A result's arrays in order (tuples flattened)."""
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in leaves(v)]
    return [value]


def describe_inputs(args) -> str:
    """The inputs as Python code that recreates them bit for bit (for a reproducer)."""
    lines = []
    for k, a in enumerate(args):
        a = np.array(a, order="C")             # (ascontiguousarray makes 0-d arrays 1-d)
        readable = a.astype(np.float64) if a.dtype.kind in "fV" else a     # (bf16 prints as void)
        values = np.array2string(readable, threshold=64, separator=",").replace("\n", " ")
        lines.append(f"arg{k} = np.frombuffer(bytes.fromhex({a.tobytes().hex()!r}), "
                     f"fuzzconf.dtype({_et_of(a)!r})).reshape({a.shape!r})  # {values}")
    return "\n".join(lines)
