"""benchmarks/linalg.py at a tiny size: every implementation checked and timed (no timed asserts)."""
import pytest

pytest.importorskip("scipy", reason="jax's LAPACK targets need scipy (xlac[linalg])")

from benchmarks import linalg  # noqa: E402


def test_quick_run_checks_and_reports(tmp_path, capsys):
    assert linalg.main(["--quick", "--no-jax", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    for kernel in linalg.KERNELS:
        for t in linalg.DTYPES:
            assert f"| {kernel} | {t} | 16 |" in text
    assert (tmp_path / "linalg.md").read_text(encoding="utf-8").strip() == text.strip()
    assert (tmp_path / "linalg.json").exists()


def test_hlo_files_are_jax_lapack_calls():
    for kernel in linalg.KERNELS:
        for t in linalg.DTYPES:
            text = linalg._hlo(kernel, t, 8)
            assert "lapack_" in text and "[8,8]" in text
            assert "[512" not in text and "512]" not in text and "constant(512)" not in text


def test_kernels_subset_and_unknown_kernel(tmp_path, capsys):
    assert linalg.main(["--quick", "--no-jax", "--kernels", "inv,det"]) == 0
    text = capsys.readouterr().out
    assert "| inv | f32 | 16 |" in text and "| det | f64 | 16 |" in text and "| solve |" not in text
    assert linalg.main(["--kernels", "inv,bogus"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bogus" in err and "choose from cholesky" in err
