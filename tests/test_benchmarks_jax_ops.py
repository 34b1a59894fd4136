"""benchmarks/jax_ops.py at its smallest size: every operation run by jax.jit
and by xlac on jax's HLO, checked against each other (no timed asserts)."""
import pytest

pytest.importorskip("jax", reason="the operation sweep compares with jax.jit (xlac[jax])")

from benchmarks import jax_ops  # noqa: E402


def test_quick_run_checks_every_operation(tmp_path, capsys):
    assert jax_ops.main(["--quick", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "MISMATCH" not in text
    for name in jax_ops._ops(64):
        assert f"| {name} | " in text
    assert (tmp_path / "jax_ops.md").read_text(encoding="utf-8").strip() == text.strip()
    assert (tmp_path / "jax_ops.json").exists()


def test_unknown_operation_or_size_is_one_line(capsys):
    assert jax_ops.main(["--ops", "matmul,bogus"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bogus" in err and "choose from matmul" in err
    assert jax_ops.main(["--size", "100"]) == 2
    assert "multiple of 64" in capsys.readouterr().err
