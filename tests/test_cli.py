"""The command line: results through .npz files, clear one-line errors, dumps."""
from pathlib import Path

import numpy as np
import pytest

from xlac.cli import main

REPO = Path(__file__).resolve().parents[1]
MLP = REPO / "examples" / "mlp.hlo"


def test_run_writes_results(tmp_path):
    out = tmp_path / "out.npz"
    assert main(["run", str(MLP), "--inputs", str(REPO / "examples" / "mlp.npz"), "--out", str(out)]) == 0
    with np.load(out) as got, np.load(REPO / "examples" / "mlp.expected.npz") as want:
        np.testing.assert_allclose(got["arr_0"], want["arr_0"], rtol=1e-5, atol=1e-5)


def test_run_prints_a_summary_without_out(capsys):
    assert main(["run", str(MLP), "--inputs", str(REPO / "examples" / "mlp.npz")]) == 0
    assert capsys.readouterr().out.startswith("arr_0: float32[16, 10] min=")


def _error(capsys, argv) -> str:
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code != 0 and err.count("\n") == 0 and "Traceback" not in err, err
    return err


def test_missing_file(capsys, tmp_path):
    assert "nope.hlo" in _error(capsys, ["run", str(tmp_path / "nope.hlo")])


def test_bad_hlo_names_line_and_column(capsys, tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY e {\n  x = f32[2]{0} frobnicate()\n}\n")
    err = _error(capsys, ["run", str(bad)])
    assert "line 4" in err and "frobnicate" in err


def test_unsupported_op_is_named(capsys, tmp_path):
    text = tmp_path / "cc.hlo"
    text.write_text('HloModule m\n\nENTRY e {\n  x = f32[2]{0} parameter(0)\n'
                    '  ROOT c = f32[2]{0} xlac-test-unimplemented(x)\n}\n')
    inputs = tmp_path / "in.npz"
    np.savez(inputs, np.zeros(2, np.float32))
    assert "not supported yet: xlac-test-unimplemented" in _error(capsys, ["run", str(text), "--inputs",
                                                                           str(inputs)])


def test_wrong_inputs_name_the_parameter(capsys, tmp_path):
    inputs = tmp_path / "in.npz"
    np.savez(inputs, np.zeros((16, 32)), *[np.zeros(1, np.float32)] * 4)   # float64 for x.1
    err = _error(capsys, ["run", str(MLP), "--inputs", str(inputs)])
    assert "parameter 0" in err and "float32" in err and "float64" in err
    np.savez(inputs, np.zeros((16, 32), np.float32))
    assert "missing arr_1" in _error(capsys, ["run", str(MLP), "--inputs", str(inputs)])


def test_internal_errors_are_one_line_too(capsys, monkeypatch):
    import xlac.devices as devices          # xlac run's jit (one device or several)

    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(devices, "jit", broken)
    err = _error(capsys, ["run", str(MLP), "--inputs", str(REPO / "examples" / "mlp.npz")])
    assert err.startswith("xlac: internal error: RuntimeError: boom")


def test_dump_shows_fusions_refusals_and_buffers(capsys, tmp_path):
    text = tmp_path / "m.hlo"
    text.write_text("HloModule m\n\nENTRY e {\n  x = f32[64]{0} parameter(0)\n  y = f32[64]{0} parameter(1)\n"
                    "  ex = f32[64]{0} exponential(x)\n  n = f32[64]{0} negate(y)\n"
                    "  a = f32[64]{0} add(ex, n)\n"
                    "  b = f32[64]{0} multiply(ex, y)\n"
                    "  ROOT t = (f32[64]{0}, f32[64]{0}) tuple(a, b)\n}\n")
    assert main(["dump", str(text)]) == 0
    out = capsys.readouterr().out
    assert "kind=kLoop, calls=" in out
    assert "// not fused: ex into" in out and "2 users" in out
    assert "temp arena:" in out


# A loop fusion whose output loop evaluates expm1 and erf inline (vectorisable
# polynomials: the loop asks LLVM for a wide vector) and tan through libm's tanf,
# which LLVM cannot widen (the shape of the corpus' unary_more_f32.hlo).
LIBM_AND_INLINE_MATH = """HloModule libm_and_inline_math
ENTRY e {
  x = f32[64] parameter(0)
  t = f32[64] tan(x)
  m = f32[64] exponential-minus-one(x)
  f = f32[64] erf(x)
  ROOT r = (f32[64], f32[64], f32[64]) tuple(t, m, f)
}
"""


@pytest.mark.parametrize("exact_math", ["0", "1"])
def test_successful_run_prints_nothing_on_stderr(tmp_path, exact_math):
    # Issue 12, item 11: LLVM printed "remark: ... loop not vectorized: library
    # call cannot be vectorized" to the process's stderr on a successful run.
    import os
    import subprocess
    import sys
    hlo = tmp_path / "m.hlo"
    hlo.write_text(LIBM_AND_INLINE_MATH)
    np.savez(tmp_path / "in.npz", np.linspace(-1, 1, 64, dtype=np.float32))
    env = dict(os.environ, XLAC_EXACT_MATH=exact_math)
    env.pop("XLAC_CACHE_DIR", None)        # compile for real, in a fresh process
    proc = subprocess.run([sys.executable, "-m", "xlac", "run", str(hlo), "--inputs",
                           str(tmp_path / "in.npz"), "--out", str(tmp_path / "out.npz")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    with np.load(tmp_path / "out.npz") as got:
        np.testing.assert_allclose(got["arr_0"], np.tan(np.linspace(-1, 1, 64, dtype=np.float32)),
                                   rtol=1e-5)


# Issue 12, items 6 and 10: nesting and characters the parser refuses, as one line
# with the file, line and column (never "internal error: RecursionError").

def test_deeply_nested_tuple_is_a_located_parse_error(capsys, tmp_path):
    deep = "(" * 1000 + "f32[]" + ")" * 1000
    hlo = tmp_path / "deep.hlo"
    hlo.write_text(f"HloModule m\nENTRY e {{\n  ROOT p = {deep} parameter(0)\n}}\n")
    err = _error(capsys, ["run", str(hlo)])
    assert err.startswith(f"xlac: {hlo}: line 3, column 76: bad shape: tuple shape nested deeper "
                          "than 64 levels"), err
    assert "MAX_TUPLE_DEPTH" in err and "internal error" not in err


def test_deeply_nested_calls_are_a_located_parse_error(capsys, tmp_path):
    comps = ["c0 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}"]
    comps += [f"c{i} {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c{i - 1}\n}}"
              for i in range(1, 300)]
    hlo = tmp_path / "calls.hlo"
    hlo.write_text("HloModule m\n" + "\n".join(comps) + "\nENTRY e {\n  p = f32[] parameter(0)\n"
                   "  ROOT r = f32[] call(p), to_apply=c299\n}\n")
    err = _error(capsys, ["run", str(hlo), "--reference"])
    assert "nested more than 64 deep" in err and "MAX_CALL_DEPTH" in err and "line " in err


def test_bytes_that_are_not_utf8_are_located(capsys, tmp_path):
    hlo = tmp_path / "latin1.hlo"
    hlo.write_bytes(b'HloModule m\nENTRY e {\n  p = f32[] parameter(0), metadata={op_name="\xff"}\n'
                    b'  ROOT r = f32[] negate(p)\n}\n')
    err = _error(capsys, ["run", str(hlo)])
    assert err.startswith(f"xlac: {hlo}: line 3, column 46: lone surrogate U+DCFF"), err
    assert "the byte 0xFF, which is not UTF-8" in err


def test_recursion_errors_are_explained(capsys, monkeypatch):
    import xlac.hlo.parser as parser

    def too_deep(text):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(parser, "parse_hlo", too_deep)
    err = _error(capsys, ["run", str(MLP)])
    assert err == (f"xlac: error: {MLP}: the module nests too deeply for xlac (Python's recursion "
                   "limit was reached); see the limits in xlac.hlo.parser")
