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


def test_scale_hlo_rewrites_dimensions_and_constants():
    k = kernels.BY_NAME["layernorm"]
    text = (harness.DEFAULT_HLO_DIR / k.hlo).read_text() if harness.DEFAULT_HLO_DIR.is_dir() else \
        "x = f32[8192,1024]{1,0} parameter(0)\nc = f32[] constant(1024)\n"
    small = kernels.scale_hlo(text, k.full, k.quick, constants=True)
    assert "8192" not in small and "1024" not in small
    assert "f32[32,64]" in small and "constant(64)" in small
    with pytest.raises(ValueError):
        kernels.scale_hlo(text, {"a": 4, "b": 4}, {"a": 2, "b": 3})


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
    assert (tmp_path / "results.md").read_text().startswith("# xlac benchmarks")
    data = json.loads((tmp_path / "results.json").read_text())
    assert [r["name"] for r in data["rows"]] == ["add8", "bcast"]
    assert "| bcast" in capsys.readouterr().out


def test_cli_bench_bad_kernel_is_one_error_line(capsys):
    from xlac.cli import main
    assert main(["bench", "--kernels", "nope", "--no-limits"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown kernel" in err[0]


def test_update_readme_replaces_only_the_marked_section(tmp_path, quick_results):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n\n{report.BEGIN}\nold table\n{report.END}\n\nafter\n")
    assert report.update_readme(readme, quick_results, "benchmarks/results/results.png")
    text = readme.read_text()
    assert "old table" not in text and text.startswith("intro") and text.endswith("after\n")
    assert "| kernel | size |" in text and "results.png" in text
    other = tmp_path / "OTHER.md"
    other.write_text("no markers\n")
    assert not report.update_readme(other, quick_results)
