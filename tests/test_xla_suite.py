"""The machinery of ``python -m tests.xla_suite`` (XLA's test modules against XLA:CPU's
recorded results): finding modules in C++ test files, seeded arguments, the results file,
judging outputs, and the worker that survives crashes and hangs."""
import ml_dtypes
import numpy as np
import pytest

from tests.xla_suite import compare, extract, inputs, store
from tests.xla_suite.worker import Worker

CC = r'''
TEST_F(T, A) {
  const char* hlo = R"(
HloModule a
ENTRY e { p = f32[3] parameter(0)  ROOT n = f32[3] negate(p) })";
  auto other = R"hlo(
  HloModule b, entry_computation_layout={(s32[])->s32[]}
  ENTRY e { ROOT p = s32[] parameter(0) })hlo";
  auto not_a_module = R"(some text)";
  auto same_again = R"(
HloModule a
ENTRY e { p = f32[3] parameter(0)  ROOT n = f32[3] negate(p) })";
}
'''


def test_raw_string_modules_are_found_once_with_their_line(tmp_path):
    (tmp_path / "xla/tests").mkdir(parents=True)
    (tmp_path / "xla/tests/a_test.cc").write_text(CC, encoding="utf-8")
    (tmp_path / "xla/backends/gpu").mkdir(parents=True)
    (tmp_path / "xla/backends/gpu/g_test.cc").write_text(CC, encoding="utf-8")        # only parses: left out
    (tmp_path / "xla/backends/gpu/r_test.cc").write_text(CC + "RunAndCompare(hlo, ErrorSpec{1e-3});", encoding="utf-8")
    found = extract.cases(tmp_path)
    assert [(c.source, c.line) for c in found] == [("xla/backends/gpu/r_test.cc", 3), ("xla/backends/gpu/r_test.cc", 6),
                                                   ("xla/tests/a_test.cc", 3), ("xla/tests/a_test.cc", 6)]
    assert found[1].text.lstrip().startswith("HloModule b,")
    with pytest.raises(FileNotFoundError, match="not a checkout"):
        extract.cases(tmp_path / "xla")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float8_e4m3fn", "int4", "uint8", "bool",
                                   "complex64", "float8_e8m0fnu"])
def test_arguments_are_seeded_and_in_range(dtype):
    a, b = inputs.argument(dtype, (4, 5), 1), inputs.argument(dtype, (4, 5), 1)
    assert a.dtype == np.dtype(dtype) and a.shape == (4, 5)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != inputs.argument(dtype, (4, 5), 2).tobytes()
    assert not np.any(np.isnan(a.astype(np.complex128)))


def test_results_file_round_trips_ml_dtypes(tmp_path):
    outs = [np.arange(6, dtype=ml_dtypes.bfloat16).reshape(2, 3), np.array(True), np.int8([-1, 2])]
    store.save(tmp_path / "r.npz", {"x.cc:1": ("ok", outs), "y.cc:2": ("multi-device", "2 devices")})
    back = store.load(tmp_path / "r.npz")
    assert back["y.cc:2"] == ("multi-device", "2 devices")
    for want, got in zip(outs, back["x.cc:1"][1]):
        assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got.full(), want)


def test_large_outputs_keep_a_sample_and_are_compared_there(tmp_path):
    big = np.arange(100_000, dtype=np.float32).reshape(100, 1000)
    store.save(tmp_path / "r.npz", {"k": ("ok", [big])})
    (expected,) = store.load(tmp_path / "r.npz")["k"][1]
    assert expected.values.size == store.SAMPLE and expected.full() is None
    assert compare.mismatch([expected], [big]) is None
    wrong = big.copy()
    wrong[99, 999] = 0                                      # the last element is always kept
    assert "first at [99, 999]" in compare.mismatch([expected], [wrong])


NEGATE = "HloModule a\nENTRY e {\n  p = f32[3] parameter(0)\n  ROOT n = f32[3] negate(p)\n}\n"


def _expect(a):
    return store.Expected(a.dtype, a.shape, a.reshape(-1))


def test_judging_runs_xlac_and_names_the_first_difference():
    negated = -inputs.argument("float32", (3,), 0)
    assert compare.judge(NEGATE, [_expect(negated)], compare.run_on_xlac(NEGATE)) == ("pass", "")
    cause, why = compare.judge(NEGATE, [_expect(negated + 1)], compare.run_on_xlac(NEGATE))
    assert cause == "wrong-result" and "3 of 3 compared elements differ, first at [0]" in why
    cause, why = compare.judge(NEGATE, [_expect(negated.astype(np.float64))], compare.run_on_xlac(NEGATE))
    assert cause == "wrong-result" and "float32[3], XLA:CPU gives float64[3]" in why
    assert compare.run_on_xlac("HloModule a\nENTRY e {")[0] == "xlac-refuses-text"
    rng = "HloModule r\nENTRY e {\n  a = f32[] constant(0)\n  b = f32[] constant(1)\n" \
          "  ROOT r = f32[4] rng(a, b), distribution=rng_uniform\n}\n"
    assert compare.judge(rng, [_expect(np.full(4, 7, np.float32))], compare.run_on_xlac(rng))[0] == \
        "implementation-defined"


SINE_OF_DOT = """HloModule m
ENTRY e {
  p0 = s8[7,101] parameter(0)
  p1 = f32[101,16] parameter(1)
  c = f32[7,101] convert(p0)
  d = f32[7,16] dot(c, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[7,16] sine(d)
}"""


def test_differences_are_rounding_when_xlac_is_as_close_to_the_f64_computation():
    # sin of a dot of magnitude ~1000: an ulp of the dot moves the sine by ~1e-4, more
    # than f32's tolerance; what decides is the distance to the computation in f64.
    status, exact = compare.run_exact(SINE_OF_DOT)
    assert status == "ok" and exact[0].dtype == np.float64
    got = compare.run_on_xlac(SINE_OF_DOT)
    ulps = np.float32(np.spacing(np.float32(1000)))
    as_close = np.sin(exact[0] + 2 * ulps).astype(np.float32)        # XLA:CPU two ulps of d away
    cause, why = compare.judge(SINE_OF_DOT, [_expect(as_close)], got, exact=lambda: (status, exact))
    assert cause == "implementation-defined" and why.startswith("rounding: largest error"), why
    # XLA:CPU exact, xlac a few ulps off: xlac is the less accurate one.
    cause, _ = compare.judge(SINE_OF_DOT, [_expect(exact[0].astype(np.float32))], got,
                             exact=lambda: (status, exact))
    assert cause == "wrong-result"
    assert compare.run_exact(NEGATE.replace("negate(p)", "bitcast(p)"))[0] == "no-exact"


def _crash_or_hang(case):
    import os
    import time
    if case == "crash":
        os.abort()
    if case == "hang":
        time.sleep(60)
    return ("ok", case)


def test_worker_reports_crashes_and_hangs_and_goes_on():
    worker = Worker(_crash_or_hang)
    try:
        assert worker.call("a", 60) == ("ok", "a")
        assert worker.call("crash", 60)[0] == "crash"
        assert worker.call("hang", 1) == ("timeout", 1)
        assert worker.call("b", 60) == ("ok", "b")
    finally:
        worker.close()
