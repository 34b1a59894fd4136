"""benchmarks/types.py at a tiny size: every program and element type run by
jax.jit and by xlac on jax's HLO, checked against each other (no timed asserts)."""
import pytest

pytest.importorskip("jax", reason="the element-type sweep compares with jax.jit (xlac[jax])")

from benchmarks import types  # noqa: E402


def test_quick_run_checks_every_program(tmp_path, capsys):
    chosen = ("f16", "s8")
    assert types.main(["--quick", "--types", ",".join(chosen), "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "MISMATCH" not in text
    for name, (_, accepts) in types._programs().items():
        for t in set(chosen) & accepts:
            assert f"| {name} | {t} | 8x8 |" in text
    assert (tmp_path / "types.md").read_text(encoding="utf-8").strip() == text.strip()
    assert (tmp_path / "types.json").exists()


def test_unknown_program_or_type_is_one_line(capsys):
    assert types.main(["--programs", "chain,bogus"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bogus" in err and "choose from chain" in err
    assert types.main(["--types", "f33"]) == 2
    assert "f33" in capsys.readouterr().err
