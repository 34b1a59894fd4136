"""The benchmark harness in --quick mode on tiny sizes: tables produced, results verified.

No timing is asserted (performance lives in benchmarks/, never in tests)."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness, kernels, report  # noqa: E402

QUICK = ["chain", "softmax", "sum_axis0", "matmul_1024", "add8"]


@pytest.fixture(scope="module")
def quick_results():
    return harness.run(QUICK, quick=True, repeat=3, budget=2.0, use_jax=False, use_numba=False,
                       disk_cache=False, limits=True)


def test_quick_run_verifies_every_kernel(quick_results):
    rows = {r["name"]: r for r in quick_results["rows"]}
    assert list(rows) == QUICK
    for name, row in rows.items():
        for col in ("xlac_builder", "numpy"):
            imp = row["impls"][col]
            assert imp["ok"], (name, col, imp)
            assert imp["ms"] is not None and imp["ms"] > 0
        if harness.DEFAULT_HLO_DIR.is_dir():
            assert row["impls"]["xlac_hlo"]["ok"], (name, row["impls"]["xlac_hlo"])
            assert "hlo" in row["compile_ms"]


def test_quick_markdown_has_the_table(quick_results):
    md = report.markdown(quick_results)
    head = next(line for line in md.splitlines() if line.startswith("| kernel | size |"))
    for col in ("xlac (HLO) ms", "xlac (builder) ms", "numpy ms", "jax.jit ms", "numba ms",
                "xlac/jax", "xlac/numpy", "rate", "of limit", "compile ms"):
        assert col in head
    for label in ("chain", "softmax over rows", "sum over axis 0", "matmul"):
        line = next(ln for ln in md.splitlines() if ln.startswith(f"| {label}"))
        assert "| ok (" in line, line
        assert "GB/s" in line or "GFLOP/s" in line
    assert "Per-call overhead" in md and "STREAM triad" in md and "sgemm" in md
    assert "## Compile times" in md
    json.dumps(quick_results, default=str)        # the results file is plain JSON


def test_limits_measured(quick_results):
    lim = quick_results["limits"]
    assert lim["stream_gbs"] > 0 and lim["sgemm_gflops"] > 0
    assert any(k.startswith("stream_native_") for k in lim)
    assert lim["sgemm_xlac_gflops"] > 0 and lim["sgemm_numpy_gflops"] > 0


def test_sgemm_rates_are_interleaved_and_report_a_failing_call():
    from benchmarks import limits
    order = []

    def failing():
        raise RuntimeError("no BLAS")
    rates = limits.sgemm_rates(8, {"a": lambda: order.append("a"), "b": lambda: order.append("b"),
                                   "bad": failing}, runs=3)
    assert rates["a"] > 0 and rates["b"] > 0 and isinstance(rates["bad"], RuntimeError)
    # every sample of one follows samples of the other: not all of a's, then all of b's
    runs = [k for i, k in enumerate(order) if i == 0 or order[i - 1] != k]
    assert len(runs) > 2


def test_scale_hlo_rewrites_dimensions_and_constants():
    k = kernels.BY_NAME["layernorm"]
    text = (harness.DEFAULT_HLO_DIR / k.hlo).read_text(encoding="utf-8") if harness.DEFAULT_HLO_DIR.is_dir() else \
        "x = f32[8192,1024]{1,0} parameter(0)\nc = f32[] constant(1024)\n"
    small = kernels.scale_hlo(text, k.full, k.quick, constants=True)
    assert "8192" not in small and "1024" not in small
    assert "f32[32,64]" in small and "constant(64)" in small
    with pytest.raises(ValueError):
        kernels.scale_hlo(text, {"a": 4, "b": 4}, {"a": 2, "b": 3})


def test_check_compares_complex_values_whole():
    ref = np.array([1 + 2j, 3 - 1j], np.complex64)
    assert harness.check(ref.copy(), ref, 1e-6)[0]
    assert not harness.check(ref.real.astype(np.complex64), ref, 1e-3)[0]     # imaginary parts lost


def test_every_builder_matches_numpy_at_quick_size():
    import xlac
    for k in kernels.KERNELS:
        if k.name in QUICK or k.name in ("conv2d", "matmul_2048"):
            continue   # run above, or slow to compile for a unit test
        args = k.inputs(np.random.default_rng(1), k.quick)
        got = xlac.jit(k.build(k.quick))(*args)
        ok, err, _ = harness.check(got, k.numpy(*args), k.tol)
        assert ok, (k.name, err)


def test_cli_bench_writes_files(tmp_path, capsys):
    from xlac.cli import main
    rc = main(["bench", "--quick", "--kernels", "add8,bcast", "--repeat", "2", "--no-limits",
               "--no-jax", "--no-numba", "--no-disk-cache", "--out", str(tmp_path)])
    assert rc == 0
    assert (tmp_path / "results.md").read_text(encoding="utf-8").startswith("# xlac benchmarks")
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert [r["name"] for r in data["rows"]] == ["add8", "bcast"]
    assert "| bcast" in capsys.readouterr().out


def test_cli_bench_bad_kernel_is_one_error_line(capsys):
    from xlac.cli import main
    assert main(["bench", "--kernels", "nope", "--no-limits"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown kernel" in err[0]


def test_update_readme_replaces_only_the_marked_section(tmp_path, quick_results):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n\n{report.BEGIN}\nold table\n{report.END}\n\nafter\n", encoding="utf-8")
    assert report.update_readme(readme, quick_results, "benchmarks/results/results.png")
    text = readme.read_text(encoding="utf-8")
    assert "old table" not in text and text.startswith("intro") and text.endswith("after\n")
    assert "| kernel | size |" in text and "results.png" in text
    other = tmp_path / "OTHER.md"
    other.write_text("no markers\n", encoding="utf-8")
    assert not report.update_readme(other, quick_results)


# --- issue 16: dispatch cost, --busy-core, --threads-sweep ------------------------------

def test_dispatch_cost_in_every_run(quick_results):
    d = quick_results["dispatch"]
    assert d["threads"] == [1, 2] and d["tasks"] == [2, 8, 64]
    for t in ("1", "2"):
        assert set(d["us"][t]) == {"2", "8", "64"}
        assert all(v > 0 for v in d["us"][t].values())
    summary = report.summary(quick_results)          # what --readme writes
    assert "One `parallel_for` dispatch" in summary
    assert "| num_threads | 2 tasks µs | 8 tasks µs | 64 tasks µs |" in summary


def test_dispatch_runs_every_task_once():
    from benchmarks import dispatch
    driver = dispatch.Driver()
    for threads in (1, 2, 8):
        pf, rc, keep = dispatch.pool_function(threads)
        for n in (1, 2, 64, 1000):
            dispatch.check_config(driver, pf, rc, n)      # raises if a task ran twice or never
        del keep
    res = dispatch.measure([1, 2, 16], tasks=(2, 8), repeat=2, budget=1.0)
    assert res["threads"] == [1, 2, 16] and list(res["us"]["16"]) == ["2", "8"]


def test_threads_sweep_counts_parse_or_say_why():
    from benchmarks.sweep import parse_counts
    assert parse_counts("16, 1,2,2,8") == [1, 2, 8, 16]
    for bad in ("0,x", "", "1,,2", "-1", "2.5", "99999"):
        with pytest.raises(ValueError, match="--threads-sweep"):
            parse_counts(bad)


@pytest.mark.parametrize("argv, what", [
    (["--threads-sweep", "0,x"], "'0', 'x' are not whole numbers"),
    (["--threads-sweep", "1,2", "--threads", "2"], "exclude each other"),
    (["--threads-sweep", "1,2", "--readme", "README.md"], "--readme"),
])
def test_bad_sweep_options_are_one_error_line(capsys, argv, what):
    from benchmarks.__main__ import main
    assert main(argv + ["--no-limits"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and what in err[0], err


def test_busy_core_spinner_is_pinned_and_always_stopped():
    import os

    from benchmarks.busy import BusyCore
    with BusyCore() as hog:
        pid, cpu = hog.proc.pid, hog.cpu
        assert cpu == max(os.sched_getaffinity(0))
        assert os.sched_getaffinity(pid) == {cpu}
        assert hog.proc.poll() is None
    assert hog.proc.poll() is not None and hog.report()["alive_at_end"]
    with pytest.raises(KeyboardInterrupt):
        with BusyCore() as hog:
            raise KeyboardInterrupt
    assert hog.proc.poll() is not None                 # killed on Ctrl-C too
    with pytest.raises(RuntimeError, match="did not start on CPU"):
        with BusyCore(cpu=max(os.sched_getaffinity(0)) + 4096):
            pass


def test_cli_threads_sweep_with_busy_core(tmp_path, capsys):
    from benchmarks.__main__ import main
    rc = main(["--quick", "--kernels", "softmax,sum_all", "--repeat", "2", "--budget", "1",
               "--no-jax", "--threads-sweep", "1,2,8", "--busy-core", "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    data = json.loads((tmp_path / "threads.json").read_text(encoding="utf-8"))
    assert data["settings"]["threads_sweep"] == [1, 2, 8] and "rows" not in data
    assert [r["name"] for r in data["sweep"]] == ["softmax", "sum_all"]
    for row in data["sweep"]:
        for col in ("xlac_t1", "xlac_t2", "xlac_t8", "numpy"):
            assert row["impls"][col]["ok"] and row["impls"][col]["ms"] > 0, (row["name"], col)
    assert data["dispatch"]["threads"] == [1, 2, 8]
    busy = data["busy_core"]
    assert busy["alive_at_end"] and busy["wall_s"] > 0
    md = (tmp_path / "threads.md").read_text(encoding="utf-8")
    assert md == out and md.startswith("# xlac thread sweep")
    assert "| kernel | size | check | xlac 1 ms | xlac 2 ms | xlac 8 ms | jax.jit ms | numpy ms |" in md
    assert "Ratio to the best xlac time" in md and "busy core (`--busy-core`)" in md
    assert "numpy: elementwise operations" in md and "jax: not run" in md
    if data["machine"]["usable_cpus"] < 8:
        assert "num_threads=8: at most" in md
    try:
        import matplotlib  # noqa: F401
        assert (tmp_path / "threads.png").stat().st_size > 0
    except ImportError:
        assert not (tmp_path / "threads.png").exists()


def test_call_overhead_benchmark_runs_and_takes_the_fast_call():
    from benchmarks import call_overhead
    res = call_overhead.run(repeat=2, budget=1.0, use_numba=False)
    assert [r["name"] for r in res["rows"]] == list(call_overhead.PROGRAMS)
    for row in res["rows"]:
        assert row["fast"], row["name"]
        for col in ("xlac", "xlac_python", "numpy"):
            best, median = row["us"][col]
            assert 0 < best <= median
    md = call_overhead.markdown(res)
    assert "| add of 8 float32 |" in md and "xlac (Python path) µs" in md and "load average" in md
