"""The lax-semantics fuzzer: small random programs over ``xlac.lax`` and the numpy-style
operators of traced values (lax_programs.py: mixed dtypes and weak Python scalars,
reductions, dynamic slices at negative starts, sorts of -0.0 and NaNs, cumulative ops
over empty axes) must compute what jax computes.

* Programs with jax's own answers (``jax_lax_programs.json``, written by
  generate_lax_programs.py where jax is installed): ``xlac.jit`` gives the same types,
  values and refusals.
* Random programs: ``xlac.jit`` agrees with the numpy evaluator (``xlac.evaluate``) on
  the same trace, and, when jax is importable here, with ``jax.jit`` directly.

Values compare exactly (NaN positions equal, -0.0 == 0.0; the sorts' permutations show
how zeros and NaNs were ordered), except the results of float sums, products and
means, within fuzzconf.RTOL.
"""
import json
import os
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, note, strategies as st

import xlac
import lax_programs as lp
from fuzzconf import RTOL, fuzz_settings, mismatch

CASES = json.loads((Path(__file__).parent / "jax_lax_programs.json").read_text(encoding="utf-8"))["cases"]
SETTINGS = fuzz_settings(ci=6, long=1000)


def run_xlac(prog: dict, args: list):
    """``(results, refused, jitted function)`` of ``prog`` under ``xlac.jit``."""
    refused = []

    def f(*xs):
        outs, r = lp.run(prog, xlac.lax, xs, lambda shape: xlac.lax.full(shape, 0.0, np.float32), (TypeError,))
        refused[:] = r
        return tuple(outs)
    jf = xlac.jit(f)
    return [np.asarray(o) for o in jf(*args)], refused, jf


def differences(prog: dict, got: list, refused: list, want: list, want_refused: list) -> list:
    out = [] if refused == want_refused else [f"refused steps {refused}, expected {want_refused}"]
    for k, (g, w, step) in enumerate(zip(got, want, prog["steps"])):
        w = np.asarray(w)
        float_like = w.dtype.kind in "fc" or w.dtype == lp.dtype("bf16")
        tol = RTOL[lp.dtype_name(w.dtype)] if step.get("inexact") and float_like else 0.0
        why = mismatch(g, w, tol)
        if why:
            out.append(f"step {k} {step}: {why}")
    return out


def _args(encoded: list) -> list:
    return [a if a.shape else a[()] for a in map(lp.decode, encoded)]


@pytest.mark.parametrize("chunk", range(4))
def test_xlac_computes_what_jax_computes(chunk):
    bad = []
    for case in CASES[chunk::4]:
        got, refused, _ = run_xlac(case["program"], _args(case["inputs"]))
        why = differences(case["program"], got, refused, [lp.decode(r) for r in case["results"]], case["refused"])
        if why:
            bad.append(f"seed {case['seed']}:\n  " + "\n  ".join(why))
    assert not bad, "\n".join(bad)


def _random_case(seed: int):
    rng = np.random.default_rng(seed)
    prog = lp.random_program(rng)
    args = lp.random_inputs(rng, prog)
    note(f"program: {json.dumps(prog)}")
    note(f"inputs: {[a.tolist() for a in args]}")
    return prog, args


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_random_programs_jit_matches_the_evaluator(seed):
    prog, args = _random_case(seed)
    got, refused, jf = run_xlac(prog, args)
    with np.errstate(all="ignore"):
        want = xlac.evaluate(jf.lower(*args).computation, *args)
    why = differences(prog, got, refused, list(want), refused)
    assert not why, "\n".join(why)


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_random_programs_match_jax(seed):
    pytest.importorskip("jax")
    prog, args = _random_case(seed)
    # Changed for jax's calls only: other tests' subprocesses inherit os.environ.
    with mock.patch.dict(os.environ, lp.JAX_ENV):
        import generate_lax_programs
        want, want_refused = generate_lax_programs.run_jax(prog, args)
    got, refused, _ = run_xlac(prog, args)
    why = differences(prog, got, refused, want, want_refused)
    assert not why, "\n".join(why)
