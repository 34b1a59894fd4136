"""rng (spec: RngUniform, RngNormal) and rng-get-and-update-state in every
stage: bounds, distributions, determinism, the generator state of a compiled
program, the builder and the shape errors, HLO text, ahead-of-time objects.

What is promised (``xlac/hlo/rng.py``): XLA's RngExpander — Philox bits from a
128-bit generator state of the program, a key per instruction — so a fresh
program's first run gives the evaluator's numbers (integers and uniform floats
bit for bit; normal floats to an ulp or two, the transcendental functions
differ), every run draws new numbers, and two rng instructions differ.
"""
import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.hlo import rng

N = 200_000
RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
CC = next((c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)), None)


def _uniform(dtype: str, a, b, dims=(N,), distribution="rng_uniform"):
    """A computation of one rng of ``dtype[dims]`` with the scalar parameters a, b."""
    bld = xlac.XlaBuilder(f"rng_{dtype}_{distribution}")
    pt = xlac.PrimitiveType(dtype)
    lo = ops.constant(bld, np.asarray(a, pt.dtype))
    hi = ops.constant(bld, np.asarray(b, pt.dtype))
    make = ops.rng_uniform if distribution == "rng_uniform" else ops.rng_normal
    return bld.build(make(lo, hi, xlac.Shape(pt, dims)))


def _fresh_jit(comp, **kw):
    """An executable whose generator state starts afresh (no other executable
    of the same text shares its code)."""
    xlac.clear_caches()
    return xlac.jit(comp, **kw)


def _ks_statistic(samples: np.ndarray, cdf) -> float:
    """Kolmogorov-Smirnov: the largest distance between the samples' empirical
    CDF and ``cdf``."""
    x = np.sort(np.asarray(samples, np.float64))
    f = cdf(x)
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


_KS_CRITICAL = 1.95 / math.sqrt(N)          # alpha = 0.001


# -- uniform ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, a, b", [("f32", -1.5, 2.5), ("f64", 3.0, 3.25), ("f32", 0.0, 1.0),
                                         ("f16", -2.0, 2.0), ("bf16", 1.0, 8.0)])
def test_uniform_floats_are_in_bounds_and_uniform(dtype, a, b):
    x = _fresh_jit(_uniform(dtype, a, b))()
    assert x.dtype == xlac.PrimitiveType(dtype).dtype and x.shape == (N,)
    x64 = np.asarray(x, np.float64)
    assert x64.min() >= a and x64.max() < b
    assert abs(x64.mean() - (a + b) / 2) < 0.01 * (b - a)
    assert abs(x64.var() - (b - a) ** 2 / 12) < 0.01 * (b - a) ** 2
    if dtype in ("f32", "f64"):
        assert _ks_statistic(x64, lambda v: (v - a) / (b - a)) < _KS_CRITICAL


@pytest.mark.parametrize("dtype, a, b", [("s32", -5, 7), ("u32", 10, 10 + 2 ** 31 + 5), ("s64", -2 ** 40, 3),
                                         ("u64", 0, 2 ** 63 + 11), ("s8", -100, 100), ("u16", 3, 40000),
                                         ("s32", -2 ** 31, 2 ** 31 - 1)])
def test_uniform_integers_are_in_bounds_and_uniform(dtype, a, b):
    x = _fresh_jit(_uniform(dtype, a, b))()
    assert x.dtype == xlac.PrimitiveType(dtype).dtype
    assert int(x.min()) >= a and int(x.max()) < b
    width = b - a
    mean = np.mean(x.astype(np.float64))
    assert abs(mean - (a + b - 1) / 2) < 0.01 * width
    if width < 100:   # every value shows up, about equally often
        counts = np.bincount((x.astype(np.int64) - a), minlength=width)
        assert counts.min() > 0.9 * N / width and counts.max() < 1.1 * N / width


def test_uniform_pred():
    x = _fresh_jit(_uniform("pred", False, True, dims=(100,)))()
    assert x.dtype == np.bool_ and not x.any()          # [false, true) holds only false


def test_uniform_float_rounding_to_b_becomes_a():
    # In f16, numbers just below 1 round to 1 = b; the interval stays [a, b).
    x = _fresh_jit(_uniform("f16", 0.0, 1.0))()
    assert float(x.max()) < 1.0


# -- normal -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, mu, sigma", [("f32", 0.0, 1.0), ("f64", -3.0, 0.5), ("f32", 10.0, 4.0),
                                              ("f16", 1.0, 2.0), ("bf16", 0.0, 1.0)])
def test_normal_mean_variance_and_shape_of_the_distribution(dtype, mu, sigma):
    x = np.asarray(_fresh_jit(_uniform(dtype, mu, sigma, distribution="rng_normal"))(), np.float64)
    assert np.isfinite(x).all()
    assert abs(x.mean() - mu) < 0.02 * sigma
    assert abs(x.std() - sigma) < 0.02 * sigma
    z = (x - mu) / sigma
    assert 0.68 < np.mean(np.abs(z) < 1) < 0.69 and 0.95 < np.mean(np.abs(z) < 2) < 0.96
    if dtype in ("f32", "f64"):
        cdf = np.vectorize(lambda v: 0.5 * (1 + math.erf((v - mu) / (sigma * math.sqrt(2)))))
        assert _ks_statistic(x, cdf) < _KS_CRITICAL


@pytest.mark.parametrize("dims", [(), (1,), (7,), (3, 5), (2, 3, 4), (5, 1, 3)])
def test_normal_odd_shapes_match_the_evaluator(dims):
    comp = _uniform("f32", 0.0, 1.0, dims=dims, distribution="rng_normal")
    got, want = _fresh_jit(comp)(), xlac.evaluate(comp)
    assert got.shape == dims
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


# -- determinism and state ----------------------------------------------------------------

@pytest.mark.parametrize("dtype, a, b", [("s32", -1000, 1000), ("f32", -1.0, 1.0), ("u64", 0, 2 ** 64 - 1),
                                         ("f64", 0.0, 1.0), ("s8", -100, 100), ("f16", -1.0, 1.0),
                                         ("bf16", 0.0, 4.0), ("pred", False, True)])
def test_first_run_of_a_fresh_program_is_the_evaluators(dtype, a, b):
    comp = _uniform(dtype, a, b, dims=(3, 33))
    want = xlac.evaluate(comp)
    assert np.array_equal(xlac.evaluate(comp), want)                     # the evaluator: every run alike
    assert np.array_equal(_fresh_jit(comp)(), want)


def test_unoptimised_code_is_the_evaluators_too():
    # optimize=False: every instruction of the expansion is a kernel of its own.
    comp = _uniform("s32", -7, 1 << 20, dims=(5, 3))
    assert np.array_equal(_fresh_jit(comp, optimize=False)(), xlac.evaluate(comp))


def test_every_run_draws_new_numbers_and_fresh_programs_repeat():
    comp = _uniform("s32", 0, 1 << 30, dims=(64,))
    exe = _fresh_jit(comp)
    runs = [exe() for _ in range(3)]
    assert not np.array_equal(runs[0], runs[1]) and not np.array_equal(runs[1], runs[2])
    again = _fresh_jit(comp)
    assert all(np.array_equal(again(), r) for r in runs)


def test_two_rng_in_one_module_differ():
    b = xlac.XlaBuilder("two")
    lo, hi = ops.constant(b, np.float32(0)), ops.constant(b, np.float32(1))
    shape = xlac.Shape(xlac.F32, (100,))
    comp = b.build(ops.tuple(b, [ops.rng_uniform(lo, hi, shape), ops.rng_uniform(lo, hi, shape),
                                 ops.rng_normal(lo, hi, shape), ops.rng_normal(lo, hi, shape)]))
    for u1, u2, n1, n2 in (xlac.evaluate(comp), _fresh_jit(comp)()):
        assert not np.array_equal(u1, u2) and not np.array_equal(n1, n2)
        assert not np.isclose(u1, u2).mean() > 0.05


def test_rng_in_a_while_loop_draws_new_numbers_each_iteration():
    text = """HloModule loop
cond {
  s = (s32[], f32[4,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[4,8] get-tuple-element(s), index=1
  zero = f32[] constant(0)
  one = f32[] constant(1)
  u = f32[8] rng(zero, one), distribution=rng_uniform
  row = f32[1,8] reshape(u)
  i32 = s32[] constant(0)
  new = f32[4,8] dynamic-update-slice(acc, row, i, i32)
  inc = s32[] constant(1)
  j = s32[] add(i, inc)
  ROOT t = (s32[], f32[4,8]) tuple(j, new)
}
ENTRY e {
  z = s32[] constant(0)
  init = f32[] constant(-1)
  acc = f32[4,8] broadcast(init), dimensions={}
  t = (s32[], f32[4,8]) tuple(z, acc)
  w = (s32[], f32[4,8]) while(t), condition=cond, body=body
  ROOT r = f32[4,8] get-tuple-element(w), index=1
}
"""
    want = xlac.evaluate(text)
    assert len({tuple(r) for r in want.tolist()}) == 4 and want.min() >= 0
    np.testing.assert_array_equal(_fresh_jit(text)(), want)


def test_a_function_called_twice_draws_twice():
    text = """HloModule calls
draw {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT u = f32[16] rng(a, b), distribution=rng_uniform
}
ENTRY e {
  a = f32[] constant(0)
  b = f32[] constant(1)
  x = f32[16] call(a, b), to_apply=draw
  y = f32[16] call(a, b), to_apply=draw
  ROOT t = (f32[16], f32[16]) tuple(x, y)
}
"""
    x, y = _fresh_jit(text)()
    assert not np.array_equal(x, y)
    assert x.min() >= 0 and y.max() < 1


def test_rng_get_and_update_state_advances_by_delta():
    text = """HloModule state
ENTRY e {
  s = u64[2] rng-get-and-update-state(), delta=5
  t = u64[2] rng-get-and-update-state(), delta=1000
  ROOT r = (u64[2], u64[2]) tuple(s, t)
}
"""
    first = (rng.RNG_STATE_INITIAL, 0)
    for got in (xlac.evaluate(text), xlac.evaluate(text)):
        assert [tuple(int(v) for v in g) for g in got] == [first, first]    # one state each, fresh per run
    exe = _fresh_jit(text)
    for k in range(3):
        s, t = exe()
        assert tuple(int(v) for v in s) == (rng.RNG_STATE_INITIAL + 5 * k, 0)
        assert tuple(int(v) for v in t) == (rng.RNG_STATE_INITIAL + 1000 * k, 0)


def test_the_128_bit_state_carries():
    big = 2 ** 63 - 1       # delta is an int64
    text = f"""HloModule carry
ENTRY e {{
  ROOT s = u64[2] rng-get-and-update-state(), delta={big}
}}
"""
    exe = _fresh_jit(text)
    got = [tuple(int(v) for v in exe()) for _ in range(4)]
    start = rng.RNG_STATE_INITIAL
    want = [((start + k * big) % 2 ** 64, (start + k * big) >> 64) for k in range(4)]
    assert got == want and got[2][1] == 1


def test_concurrent_runs_each_get_their_own_state():
    from concurrent.futures import ThreadPoolExecutor
    text = """HloModule threads
ENTRY e {
  ROOT s = u64[2] rng-get-and-update-state(), delta=3
}
"""
    exe = _fresh_jit(text)
    with ThreadPoolExecutor(4) as pool:
        states = list(pool.map(lambda _: int(exe()[0]), range(200)))
    assert sorted(states) == [rng.RNG_STATE_INITIAL + 3 * k for k in range(200)]


def test_rng_on_several_replicas_differs_by_replica():
    from xlac.evaluator_replicated import evaluate_replicated
    text = """HloModule reps, replica_count=2
ENTRY e {
  x = f32[] parameter(0)
  one = f32[] constant(1)
  u = f32[32] rng(x, one), distribution=rng_uniform
  ROOT r = f32[32] add(u, u)
}
"""
    ref = evaluate_replicated(text, [[np.float32(0)], [np.float32(0)]])
    assert not np.array_equal(ref[0], ref[1])
    got = xlac.jit(text)(np.zeros(2, np.float32))
    np.testing.assert_array_equal(got, np.stack(ref))
    with pytest.raises(xlac.CollectiveError, match="rng"):
        xlac.evaluate(text, np.float32(0))
    parts = evaluate_replicated(text.replace("replica_count=2", "replica_count=2, num_partitions=2"),
                                [[np.float32(0)]] * 4)
    assert len({p.tobytes() for p in parts}) == 4


def test_the_hlo_jax_emits_for_lax_rng_uniform():
    text = (Path(__file__).resolve().parent / "data" / "jax_rng_uniform.hlo").read_text(encoding="utf-8")
    args = (np.float32(-2), np.float32(3))
    want = xlac.evaluate(text, *args)
    got = _fresh_jit(text)(*args)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w)
    (u, i) = got
    assert u.min() >= -2 and u.max() < 3 and i.min() >= -2 and i.max() < 3


@pytest.mark.parametrize("distribution", ["rng_uniform", "rng_normal"])
def test_empty_outputs(distribution):
    comp = _uniform("f32", 0.0, 1.0, dims=(0, 3), distribution=distribution)
    assert _fresh_jit(comp)().shape == (0, 3) and xlac.evaluate(comp).shape == (0, 3)


# -- builder, shape rule, text ------------------------------------------------------------

@pytest.mark.parametrize("make, message", [
    (lambda b, f, i: ops.rng_normal(i, i, xlac.shape("s32[4]")), "rng_normal makes floating-point numbers, not s32"),
    (lambda b, f, i: ops.rng_uniform(f, i, xlac.shape("f32[4]")),
     "b must be a scalar of the result's element type f32, got s32[]"),
    (lambda b, f, i: ops.rng_uniform(f, f, xlac.shape("f64[4]")),
     "a must be a scalar of the result's element type f64"),
    (lambda b, f, i: ops.rng_uniform(ops.broadcast(f, [2]), f, xlac.shape("f32[4]")), "a must be a scalar"),
    (lambda b, f, i: ops.rng_uniform(ops.constant(b, np.complex64(1)), ops.constant(b, np.complex64(2)),
                                     xlac.shape("c64[4]")), "rng_uniform makes pred, integer or floating-point"),
    (lambda b, f, i: ops.rng_normal(f, f, xlac.Shape.tuple([xlac.shape("f32[2]")])), "must be an array"),
])
def test_shape_errors_name_the_op_and_the_rule(make, message):
    b = xlac.XlaBuilder("bad")
    f, i = ops.constant(b, np.float32(0)), ops.constant(b, np.int32(0))
    with pytest.raises(xlac.ShapeError, match="^rng: ") as info:
        make(b, f, i)
    assert message in str(info.value)


def test_builder_takes_python_numbers_and_shape_text():
    b = xlac.XlaBuilder("py")
    mu = ops.constant(b, np.float64(2))
    comp = b.build(ops.rng_normal(mu, 0.5, "f64[3,2]"))
    assert "f64[3,2]{1,0} rng(" in comp.as_hlo_text() and "distribution=rng_normal" in comp.as_hlo_text()
    with pytest.raises(TypeError, match="rng_uniform: needs at least one XlaOp"):
        ops.rng_uniform(0.0, 1.0, "f32[2]")


def test_text_round_trip_and_expansion():
    text = """HloModule t
ENTRY e {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  u = s32[5] rng(a, b), distribution=rng_uniform
  s = u64[2] rng-get-and-update-state(), delta=7
  ROOT r = (s32[5], u64[2]) tuple(u, s)
}
"""
    once = xlac.parse_hlo(text).to_text()
    assert "rng(a, b), distribution=rng_uniform" in once and "rng-get-and-update-state(), delta=7" in once
    assert xlac.parse_hlo(once).to_text() == once
    from xlac.passes.pipeline import run_passes
    module = xlac.parse_hlo(text)
    run_passes(module, "op-expander")
    expanded = module.to_text()
    assert " rng(" not in expanded and "rng-get-and-update-state(), delta=5" in expanded


@pytest.mark.parametrize("line, message", [
    ("  ROOT u = f32[4] rng(a, a), distribution=rng_poisson", "distribution=rng_poisson is not one of"),
    ("  ROOT s = u64[2] rng-get-and-update-state(), delta=-1", "delta=-1 must not be negative"),
    ("  ROOT s = u64[3] rng-get-and-update-state(), delta=1", "differs from the inferred shape u64[2]"),
])
def test_parsed_text_is_verified(line, message):
    text = f"HloModule m\nENTRY e {{\n  a = f32[] parameter(0)\n{line}\n}}\n"
    with pytest.raises(xlac.ShapeError) as info:
        xlac.jit(text)
    assert message in str(info.value)


# -- ahead of time --------------------------------------------------------------------------

DRIVER = r"""
#include "gen.h"
#include <stdio.h>
#include <string.h>

int main(void) {
  static uint64_t state[2] = {42, 7}, new_state[2], counter[2][2];
  static uint32_t bits[5][3];
  static float u[2][16];
  int run, k;
  for (run = 0; run < 2; ++run) {
    if (gen_run(state, new_state, (void *)bits, u[run], counter[run], NULL) != XLAC_OK) return 1;
  }
  printf("%llu %llu\n", (unsigned long long)new_state[0], (unsigned long long)new_state[1]);
  for (k = 0; k < 15; ++k) printf("%u ", ((uint32_t *)bits)[k]);
  printf("\n");
  for (run = 0; run < 2; ++run) {
    for (k = 0; k < 16; ++k) printf("%.9g ", u[run][k]);
    printf("\n");
  }
  for (run = 0; run < 2; ++run) printf("%llu\n", (unsigned long long)counter[run][0]);
  return 0;
}
"""


@pytest.mark.skipif(CC is None, reason="no C compiler (cc, gcc or clang) on PATH")
def test_ahead_of_time_object_generates_the_same_numbers(tmp_path):
    text = """HloModule gen
ENTRY e {
  state = u64[2] parameter(0)
  rbg = (u64[2], u32[5,3]) rng-bit-generator(state), algorithm=rng_three_fry
  s = u64[2] get-tuple-element(rbg), index=0
  bits = u32[5,3] get-tuple-element(rbg), index=1
  zero = f32[] constant(0)
  one = f32[] constant(1)
  u = f32[16] rng(zero, one), distribution=rng_uniform
  c = u64[2] rng-get-and-update-state(), delta=100
  ROOT r = (u64[2], u32[5,3], f32[16], u64[2]) tuple(s, bits, u, c)
}
"""
    xlac.compile_aot(text, tmp_path / "gen.o", header=tmp_path / "gen.h", name="gen")
    (tmp_path / "main.c").write_text(DRIVER, encoding="utf-8")
    exe = tmp_path / "main"
    subprocess.run([CC, "-std=c99", "-O1", f"-I{RUNTIME}", f"-I{tmp_path}", str(tmp_path / "main.c"),
                    str(tmp_path / "gen.o"), "-o", str(exe), "-lm"], check=True, capture_output=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True, encoding="utf-8").stdout.splitlines()
    state = np.array([42, 7], np.uint64)
    jit = _fresh_jit(text)
    first, second = jit(state), jit(state)
    assert [int(v) for v in lines[0].split()] == [int(v) for v in first[0]]
    assert [int(v) for v in lines[1].split()] == [int(v) for v in first[1].ravel()]
    np.testing.assert_array_equal(np.float32(lines[2].split()), first[2])
    np.testing.assert_array_equal(np.float32(lines[3].split()), second[2])
    assert not np.array_equal(first[2], second[2])
    assert [int(lines[4]), int(lines[5])] == [rng.RNG_STATE_INITIAL, rng.RNG_STATE_INITIAL + 100]
