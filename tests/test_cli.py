"""The command line: results through .npz files, clear one-line errors, dumps."""
import os
import re
import subprocess
import sys
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


NARROW = """HloModule narrow

ENTRY e {
  x = bf16[4] parameter(0)
  y = f8e4m3fn[4] parameter(1)
  xf = f32[4] convert(x)
  yf = f32[4] convert(y)
  s = f32[4] add(xf, yf)
  a = bf16[4] convert(s)
  b = s4[4] convert(s)
  ROOT t = (bf16[4], s4[4]) tuple(a, b)
}
"""


def test_npz_of_ml_dtypes_types_in_and_out(tmp_path, capsys):
    """numpy saves bf16, f8 and s4 arrays as raw void items (V2, V1): run reads
    them as the parameter's type says, writes results the same way (read back
    with .view(ml_dtypes.TYPE)), and --expected compares them as the results' type."""
    import ml_dtypes
    (tmp_path / "m.hlo").write_text(NARROW, encoding="utf-8")
    np.savez(tmp_path / "in.npz", np.array([1, 2, 3, 4], ml_dtypes.bfloat16),
             np.array([0.5, 1, 1.5, 2], ml_dtypes.float8_e4m3fn))
    assert main(["run", str(tmp_path / "m.hlo"), "--inputs", str(tmp_path / "in.npz"),
                 "--out", str(tmp_path / "out.npz")]) == 0
    with np.load(tmp_path / "out.npz") as f:
        a, b = f["arr_0"], f["arr_1"]
    assert a.dtype == np.dtype("V2") and b.dtype == np.dtype("V1")
    np.testing.assert_array_equal(a.view(ml_dtypes.bfloat16).astype(np.float32), [1.5, 3, 4.5, 6])
    np.testing.assert_array_equal(b.view(ml_dtypes.int4).astype(np.int32), [1, 3, 4, 6])
    assert main(["run", str(tmp_path / "m.hlo"), "--inputs", str(tmp_path / "in.npz"),
                 "--expected", str(tmp_path / "out.npz")]) == 0
    # A void item of another size is still a dtype error naming the parameter.
    np.savez(tmp_path / "bad.npz", np.zeros(4, "V4"), np.zeros(4, "V1"))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "m.hlo"), "--inputs", str(tmp_path / "bad.npz")]) == 1
    assert "parameter 0 (x)" in capsys.readouterr().err


def test_missing_file(capsys, tmp_path):
    assert "nope.hlo" in _error(capsys, ["run", str(tmp_path / "nope.hlo")])


def test_bad_hlo_names_line_and_column(capsys, tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY e {\n  x = f32[2]{0} frobnicate()\n}\n", encoding="utf-8")
    err = _error(capsys, ["run", str(bad)])
    assert err == f"xlac: error: {bad}:4:17: unknown opcode 'frobnicate'"


def test_unsupported_op_is_named(capsys, tmp_path):
    text = tmp_path / "cc.hlo"
    text.write_text('HloModule m\n\nENTRY e {\n  x = f32[2]{0} parameter(0)\n'
                    '  ROOT c = f32[2]{0} xlac-test-unimplemented(x)\n}\n', encoding="utf-8")
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
    assert err.startswith("xlac: error: internal error: RuntimeError: boom (a bug in xlac")


def test_dump_shows_fusions_refusals_and_buffers(capsys, tmp_path):
    text = tmp_path / "m.hlo"
    text.write_text("HloModule m\n\nENTRY e {\n  x = f32[64]{0} parameter(0)\n  y = f32[64]{0} parameter(1)\n"
                    "  ex = f32[64]{0} exponential(x)\n  n = f32[64]{0} negate(y)\n"
                    "  a = f32[64]{0} add(ex, n)\n"
                    "  b = f32[64]{0} multiply(ex, y)\n"
                    "  ROOT t = (f32[64]{0}, f32[64]{0}) tuple(a, b)\n}\n", encoding="utf-8")
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
    hlo.write_text(LIBM_AND_INLINE_MATH, encoding="utf-8")
    np.savez(tmp_path / "in.npz", np.linspace(-1, 1, 64, dtype=np.float32))
    env = dict(os.environ, XLAC_EXACT_MATH=exact_math)
    env.pop("XLAC_CACHE_DIR", None)        # compile for real, in a fresh process
    proc = subprocess.run([sys.executable, "-m", "xlac", "run", str(hlo), "--inputs",
                           str(tmp_path / "in.npz"), "--out", str(tmp_path / "out.npz")],
                          capture_output=True, encoding="utf-8", env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    with np.load(tmp_path / "out.npz") as got:
        np.testing.assert_allclose(got["arr_0"], np.tan(np.linspace(-1, 1, 64, dtype=np.float32)),
                                   rtol=1e-5)


NARROW_SOFTMAX = """HloModule m
mx {{ a = {t}[] parameter(0)
 b = {t}[] parameter(1)
 ROOT c = {t}[] maximum(a, b) }}
ad {{ a = {t}[] parameter(0)
 b = {t}[] parameter(1)
 ROOT c = {t}[] add(a, b) }}
ENTRY e {{ p = {t}[8,256] parameter(0)
 lo = {t}[] constant(-inf)
 m = {t}[8] reduce(p, lo), dimensions={{1}}, to_apply=mx
 mb = {t}[8,256] broadcast(m), dimensions={{0}}
 d = {t}[8,256] subtract(p, mb)
 x = {t}[8,256] exponential(d)
 z = {t}[] constant(0)
 s = {t}[8] reduce(x, z), dimensions={{1}}, to_apply=ad
 sb = {t}[8,256] broadcast(s), dimensions={{0}}
 ROOT r = {t}[8,256] divide(x, sb) }}
"""


@pytest.mark.parametrize("t", ["bf16", "f16", "f8e4m3fn"])
def test_narrow_float_reductions_print_nothing_on_stderr(tmp_path, t):
    # A reduction accumulating a narrow float asked LLVM for a vector width it
    # could not use (the accumulator is rounded in integer arithmetic), and LLVM
    # printed "remark: loop not vectorized" on every such compile.
    import os
    import subprocess
    import sys
    hlo = tmp_path / "m.hlo"
    hlo.write_text(NARROW_SOFTMAX.format(t=t), encoding="utf-8")
    env = dict(os.environ)
    env.pop("XLAC_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-m", "xlac", "run", str(hlo), "--random-inputs",
                           "--out", str(tmp_path / "out.npz")],
                          capture_output=True, encoding="utf-8", env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


# Issue 12, items 6 and 10: nesting and characters the parser refuses, as one line
# with the file, line and column (never "internal error: RecursionError").

def test_deeply_nested_tuple_is_a_located_parse_error(capsys, tmp_path):
    deep = "(" * 1000 + "f32[]" + ")" * 1000
    hlo = tmp_path / "deep.hlo"
    hlo.write_text(f"HloModule m\nENTRY e {{\n  ROOT p = {deep} parameter(0)\n}}\n", encoding="utf-8")
    err = _error(capsys, ["run", str(hlo)])
    assert err.startswith(f"xlac: error: {hlo}:3:76: bad shape: tuple shape nested deeper "
                          "than 64 levels"), err
    assert "MAX_TUPLE_DEPTH" in err and "internal error" not in err


def test_deeply_nested_calls_are_a_located_parse_error(capsys, tmp_path):
    comps = ["c0 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}"]
    comps += [f"c{i} {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c{i - 1}\n}}"
              for i in range(1, 300)]
    hlo = tmp_path / "calls.hlo"
    hlo.write_text("HloModule m\n" + "\n".join(comps) + "\nENTRY e {\n  p = f32[] parameter(0)\n"
                   "  ROOT r = f32[] call(p), to_apply=c299\n}\n", encoding="utf-8")
    err = _error(capsys, ["run", str(hlo), "--reference"])
    assert "nested more than 64 deep" in err and "MAX_CALL_DEPTH" in err and err.startswith(f"xlac: error: {hlo}:")


def test_bytes_that_are_not_utf8_are_located(capsys, tmp_path):
    hlo = tmp_path / "latin1.hlo"
    hlo.write_bytes(b'HloModule m\nENTRY e {\n  p = f32[] parameter(0), metadata={op_name="\xff"}\n'
                    b'  ROOT r = f32[] negate(p)\n}\n')
    err = _error(capsys, ["run", str(hlo)])
    assert err.startswith(f"xlac: error: {hlo}:3:46: lone surrogate U+DCFF"), err
    assert "the byte 0xFF, which is not UTF-8" in err


def test_recursion_errors_are_explained(capsys, monkeypatch):
    import xlac.hlo.parser as parser

    def too_deep(text):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(parser, "parse_hlo", too_deep)
    err = _error(capsys, ["run", str(MLP)])
    assert err == (f"xlac: error: {MLP}: the module nests too deeply for xlac (Python's recursion "
                   "limit was reached); see the limits in xlac.hlo.parser")


# ---------------------------------------------------------------------------------------
# Bad command lines: one line on stderr, `xlac: error: ...`, the exit status of its kind
# (2 usage, 1 bad input, never 3), naming the option or file.
# ---------------------------------------------------------------------------------------

SMALL = "HloModule small\n\nENTRY e {\n  x = f32[3]{0} parameter(0)\n  ROOT n = f32[3]{0} negate(x)\n}\n"
ADD_MLIR = ("func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {\n"
            "  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")


@pytest.fixture
def bad_files(tmp_path):
    """name -> path of the good and bad files the command lines use."""
    import socket
    f = {"M": MLP, "IN": REPO / "examples" / "mlp.npz", "EXP": REPO / "examples" / "mlp.expected.npz",
         "DIR": tmp_path / "adir", "NOPE": tmp_path / "nope.hlo", "NOPE_NPZ": tmp_path / "nope.npz",
         "NODIR_OUT": tmp_path / "no" / "such" / "out.npz"}
    f["DIR"].mkdir()
    files = {"SMALL": ("small.hlo", SMALL),
             "EMPTY_HLO": ("empty.hlo", ""),
             "SYNTAX": ("syntax.hlo", "HloModule m\nENTRY e {\n  x = f32[2 parameter(0)\n  ROOT y = f32[2] negate(x)\n}\n"),
             "SHAPE": ("shape.hlo", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[3] negate(x)\n}\n"),
             "PARAMS": ("params.hlo", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(2)\n"
                        "  ROOT z = f32[2] add(x, y)\n}\n"),
             "MLIR_SYNTAX": ("syntax.mlir", "module {\n  func.func public @main(%arg0: tensor<4xf32> -> tensor<4xf32> {\n  }\n}\n"),
             "MLIR_UNSUPPORTED": ("unsupported.mlir", ADD_MLIR.replace("stablehlo.add", "stablehlo.frobnicate")),
             "TEXT_NPZ": ("text.npz", "not an archive\n"),
             "REPLICAS": ("replicas.hlo", SMALL.replace("HloModule small", "HloModule m, replica_count=2"))}
    for key, (name, text) in files.items():
        f[key] = tmp_path / name
        f[key].write_text(text, encoding="utf-8")
    f["EMPTY_NPZ"] = tmp_path / "empty.npz"
    f["EMPTY_NPZ"].write_bytes(b"")
    f["CORRUPT"] = tmp_path / "corrupt.npz"
    f["CORRUPT"].write_bytes(b"PK\x03\x04" + b"\x00garbage" * 8)
    f["OBJECTS"] = tmp_path / "objects.npz"
    np.savez(f["OBJECTS"], np.array([{"w": np.zeros(2)}], dtype=object))   # np.savez(f, *args) of a dict
    f["NPY"] = tmp_path / "one.npy"
    np.save(f["NPY"], np.zeros(3, np.float32))
    f["SOCKET"] = tmp_path / "sock.hlo"             # cannot be opened, even by root
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(f["SOCKET"]))
    f["UNREADABLE"] = tmp_path / "unreadable.hlo"
    f["UNREADABLE"].write_text(SMALL, encoding="utf-8")
    f["UNREADABLE"].chmod(0)
    f["OUT"] = tmp_path / "out.npz"
    yield f
    server.close()


# (argv with file keys in braces, exit status, what the line must mention)
BAD_COMMAND_LINES = [
    # argparse's own errors, one line, naming the subcommand and the option
    ([], 2, "no command given"),
    (["runn", "{M}"], 2, "unknown command 'runn'"),
    (["run", "{M}", "--bogus"], 2, "run: unrecognized arguments: --bogus (see 'xlac run --help')"),
    (["dump", "{M}", "--bogus"], 2, "dump: unrecognized arguments: --bogus"),
    (["run"], 2, "run: the following arguments are required: module"),
    (["run", "{M}", "--inputs"], 2, "argument --inputs: expected one argument"),
    (["compile", "{M}"], 2, "compile: the following arguments are required: -o"),
    (["compile", "{M}", "-o", "{OUT}", "--name", "1fn"], 2, "argument --name"),
    (["opt", "{M}"], 2, "--passes"),
    (["bench", "{M}", "--bogus"], 2, "bench: unrecognized arguments: --bogus"),
    (["bench", "--bogus"], 2, "bench: unrecognized arguments: --bogus"),
    (["bench", "--kernels", "nope"], 2, "unknown kernel(s) nope"),
    (["bench", "--repeat", "0"], 2, "--repeat"),
    # numeric options, checked when parsed
    (["run", "{M}", "--random-inputs", "--seed", "-1"], 2, "argument --seed: must be an integer from 0"),
    (["run", "{M}", "--random-inputs", "--seed", str(2**70)], 2, "argument --seed"),
    (["run", "{M}", "--random-inputs", "--seed", "x"], 2, "argument --seed: expected an integer"),
    (["run", "{M}", "--inputs", "{IN}", "--expected", "{EXP}", "--rtol", "nan"], 2, "argument --rtol"),
    (["run", "{M}", "--inputs", "{IN}", "--expected", "{EXP}", "--rtol", "inf"], 2, "argument --rtol"),
    (["run", "{M}", "--inputs", "{IN}", "--expected", "{EXP}", "--atol", "-1"], 2, "argument --atol"),
    (["run", "{M}", "--random-inputs", "--devices", "0"], 2, "argument --devices"),
    (["run", "{M}", "--random-inputs", "--devices", "-1"], 2, "argument --devices"),
    (["run", "{M}", "--random-inputs", "--devices", str(10**9)], 2, "argument --devices"),
    (["bench", "{M}", "--repeat", "0"], 2, "argument --repeat"),
    (["bench", "{M}", "--repeat", "-1"], 2, "argument --repeat"),
    (["bench", "{M}", "--threads", "0"], 2, "argument --threads"),
    (["bench", "{M}", "--seed", "-5"], 2, "argument --seed"),
    # options that do not go together
    (["run", "{M}", "--inputs", "{IN}", "--random-inputs"], 2, "not both"),
    (["run", "{M}", "--inputs", "{IN}", "--rtol", "1"], 2, "--rtol"),
    (["run", "{M}", "--inputs", "{IN}", "--seed", "1"], 2, "--seed"),
    (["bench", "{M}", "--inputs", "{IN}", "--seed", "1"], 2, "--seed"),
    # the module: missing, a directory, unreadable, empty, another kind of file, bad text
    (["run", "{NOPE}"], 1, "{NOPE}: No such file or directory"),
    (["dump", "{NOPE}"], 1, "{NOPE}"),
    (["bench", "{NOPE}"], 1, "{NOPE}"),
    (["run", "{DIR}"], 1, "{DIR}: Is a directory"),
    (["run", "{SOCKET}"], 1, "{SOCKET}"),
    (["run", "{EMPTY_HLO}"], 1, "{EMPTY_HLO}:1:1: expected 'HloModule'"),
    (["run", "{IN}"], 1, "{IN} is a NumPy array file, not HLO text"),
    (["run", "{SYNTAX}"], 1, "{SYNTAX}:3:"),
    (["run", "{SHAPE}", "--random-inputs"], 1, "{SHAPE}:4:3: computation e, instruction 'y' (negate): shape f32[3]"),
    (["dump", "{PARAMS}"], 1, "{PARAMS}:4:3: computation e: parameter numbers [0, 2]"),
    (["compile", "{SHAPE}", "-o", "{OUT}"], 1, "{SHAPE}:4:3:"),
    (["run", "{MLIR_SYNTAX}"], 1, "{MLIR_SYNTAX}:2:"),
    (["bench", "{MLIR_UNSUPPORTED}"], 1, "{MLIR_UNSUPPORTED}:2:8: not supported yet: stablehlo.frobnicate"),
    # --inputs and --expected: missing, a directory, empty, damaged, not an npz, Python objects
    (["run", "{M}", "--inputs", "{NOPE_NPZ}"], 1, "--inputs {NOPE_NPZ}: No such file or directory"),
    (["run", "{M}", "--inputs", "{DIR}"], 1, "--inputs {DIR}: Is a directory"),
    (["run", "{M}", "--inputs", "{EMPTY_NPZ}"], 1, "--inputs {EMPTY_NPZ}: empty file"),
    (["run", "{M}", "--inputs", "{CORRUPT}"], 1, "--inputs {CORRUPT}: damaged .npz file"),
    (["run", "{M}", "--inputs", "{TEXT_NPZ}"], 1, "--inputs {TEXT_NPZ}: not an .npz file"),
    (["run", "{M}", "--inputs", "{M}"], 1, "--inputs {M}: not an .npz file"),
    (["run", "{M}", "--inputs", "{NPY}"], 1, "--inputs {NPY}: a single .npy array"),
    (["run", "{M}", "--inputs", "{OBJECTS}"], 1, "array arr_0 holds Python objects"),
    (["bench", "{M}", "--inputs", "{CORRUPT}"], 1, "--inputs {CORRUPT}: damaged .npz file"),
    (["run", "{M}", "--inputs", "{IN}", "--expected", "{CORRUPT}"], 1, "--expected {CORRUPT}: damaged .npz file"),
    (["run", "{M}", "--inputs", "{IN}", "--expected", "{NOPE_NPZ}"], 1, "--expected {NOPE_NPZ}"),
    (["run", "{M}", "--inputs", "{IN}", "--expected", "{OBJECTS}"], 1, "np.savez(f, *jax.tree.leaves(params))"),
    # outputs: a directory, no such directory, the module itself
    (["run", "{M}", "--inputs", "{IN}", "--out", "{DIR}"], 1, "--out {DIR}: is a directory"),
    (["run", "{M}", "--inputs", "{IN}", "--out", "{NODIR_OUT}"], 1, "--out {NODIR_OUT}: the directory"),
    (["run", "{M}", "--inputs", "{IN}", "--out", "{M}"], 1, "--out {M}: is the module file too"),
    (["run", "{M}", "--inputs", "{IN}", "--out", "{IN}"], 1, "--out {IN}: is the --inputs file too"),
    (["compile", "{M}", "-o", "{NODIR_OUT}"], 1, "-o {NODIR_OUT}"),
    (["compile", "{M}", "-o", "{OUT}", "--header", "{OUT}"], 1, "--header {OUT}: is the -o file too"),
    (["opt", "{M}", "--passes", "dce", "-o", "{DIR}"], 1, "-o {DIR}"),
    (["opt", "{M}", "--passes", "nope"], 1, "unknown pass 'nope'"),
    (["run", "{REPLICAS}", "--random-inputs", "--devices", "2"], 1, "--devices: m says it runs on 2 replica(s)"),
]


def _fill(item, files) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(files[m.group(1)]), item)


@pytest.mark.parametrize("argv,code,mention", BAD_COMMAND_LINES,
                         ids=[" ".join(a[:3]) + f" [{k}]" for k, (a, _, _) in enumerate(BAD_COMMAND_LINES)])
def test_bad_command_lines(argv, code, mention, bad_files, capfd):
    got = main([_fill(a, bad_files) for a in argv])
    out, err = capfd.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("xlac: error: "), err
    assert got == code, (got, err)
    assert _fill(mention, bad_files) in lines[0], lines[0]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
def test_unreadable_module(bad_files, capfd):
    assert main(["run", str(bad_files["UNREADABLE"])]) == 1
    assert capfd.readouterr().err == f"xlac: error: {bad_files['UNREADABLE']}: Permission denied\n"


def _python_m_xlac(*argv, **kw):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "xlac", *map(str, argv)], capture_output=True, encoding="utf-8",
                          timeout=300, **kw)


def test_bad_command_lines_through_python_m_xlac(bad_files):
    # The same through the real entry point (a few: each is a new interpreter).
    for argv, code, mention in (BAD_COMMAND_LINES[1], BAD_COMMAND_LINES[13], BAD_COMMAND_LINES[38],
                                BAD_COMMAND_LINES[48]):
        proc = _python_m_xlac(*[_fill(a, bad_files) for a in argv])
        assert proc.returncode == code and proc.stderr.count("\n") == 1, (argv, proc.stderr)
        assert proc.stderr.startswith("xlac: error: ") and _fill(mention, bad_files) in proc.stderr


def test_ascii_locale(tmp_path):
    # LC_ALL=C with UTF-8 mode off: Python's streams and files default to ASCII.  Module text
    # is UTF-8 whatever the locale: it goes out byte for byte, to stdout and to -o; the support
    # matrix prints; an error naming a non-ASCII path is still one line.
    env = dict(os.environ, LC_ALL="C", PYTHONUTF8="0", PYTHONIOENCODING="")
    module = tmp_path / "m.hlo"
    module.write_bytes('HloModule m\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0), '
                       'metadata={op_name="caf\u00e9 \u2014 \u03bb"}\n}\n'.encode())
    proc = subprocess.run([sys.executable, "-m", "xlac", "opt", str(module), "--passes", "dce"],
                          capture_output=True, env=env, timeout=300)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    out = proc.stdout
    assert 'op_name="caf\u00e9 \u2014 \u03bb"'.encode() in out
    assert _python_m_xlac("opt", module, "--passes", "dce", "-o", tmp_path / "o.hlo", env=env).returncode == 0
    assert (tmp_path / "o.hlo").read_bytes() == out
    proc = _python_m_xlac("ops", env=env)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout.startswith("# Supported operations")
    proc = subprocess.run([sys.executable, "-m", "xlac", "run", os.fsencode(tmp_path) + "/\u00fc.hlo".encode()],
                          capture_output=True, env=env, timeout=300)
    assert proc.returncode == 1 and proc.stderr.count(b"\n") == 1 and b"Traceback" not in proc.stderr


def test_out_writes_exactly_the_path_given(tmp_path, capsys):
    # np.savez("x") writes x.npz; the command line writes what it was asked to.
    out = tmp_path / "results"
    assert main(["run", str(MLP), "--inputs", str(REPO / "examples" / "mlp.npz"), "--out", str(out)]) == 0
    assert out.is_file() and not (tmp_path / "results.npz").exists()
    with np.load(out) as got:
        assert got["arr_0"].shape == (16, 10)
    # A file that cannot seek (zip archives are written with seeks) works too.
    assert main(["run", str(MLP), "--inputs", str(REPO / "examples" / "mlp.npz"), "--out", os.devnull]) == 0
    assert capsys.readouterr().err == ""


def test_closed_stdout_is_quiet(tmp_path):
    # `xlac dump m.hlo | head`: no "Broken pipe", no traceback; the status of SIGPIPE.
    import subprocess
    import sys
    module = tmp_path / "small.hlo"
    module.write_text(SMALL, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "xlac", "dump", str(module), "--llvm", "--asm"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()                   # what head does after its lines
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141 and err == "", err


# ---------------------------------------------------------------------------------------
# A fuzzer: random argument lists from the command line's own options
# ---------------------------------------------------------------------------------------

_VALUES = ["-1", "0", "1", "2", "3", "nan", "inf", "-inf", "1e400", str(2**70), "0x10", "", "abc", "--", "-"]
_FLAGS = {
    "run": ["--inputs", "--out", "--random-inputs", "--seed", "--expected", "--rtol", "--atol", "--time",
            "--reference", "--devices"],
    "dump": ["--llvm", "--optimized-llvm", "--asm", "--dot", "--after-each-pass"],
    "opt": ["--passes", "--list-passes", "--no-verify", "-o"],
    "compile": ["-o", "--header", "--name", "--target-triple", "--cpu", "--features"],
    "bench": ["--inputs", "--seed", "--repeat", "--threads"],
    "ops": [],
}
# Values that would make a valid command slow (many devices, many samples) are left out.
_SAFE_NUMBERS = {"--devices": ["0", "-1", "65", "x"], "--repeat": ["0", "-1", "1", "x"]}


def test_fuzz_command_lines(bad_files, tmp_path):
    import contextlib
    import io

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    paths = [str(bad_files[k]) for k in ("SMALL", "NOPE", "DIR", "EMPTY_HLO", "SYNTAX", "SHAPE", "IN", "CORRUPT",
                                         "OBJECTS", "TEXT_NPZ", "NODIR_OUT", "MLIR_UNSUPPORTED")]
    outputs = [str(tmp_path / "fuzz_out"), str(tmp_path / "fuzz_out.o"), str(bad_files["SMALL"])]
    words = st.sampled_from(_VALUES + paths + outputs + ["--bogus", "-x", "dce", "cse,dce", "fn", "x86_64"])

    @st.composite
    def command_lines(draw):
        command = draw(st.sampled_from(list(_FLAGS) + ["runn", "--version", "--help"]))
        argv = [command]
        if command in ("run", "dump", "opt", "compile", "bench"):
            argv.append(draw(st.sampled_from(paths)))       # bench: a module, never the kernel harness
        for _ in range(draw(st.integers(0, 4))):
            flag = draw(st.sampled_from(_FLAGS.get(command, []) + ["--bogus"]))
            argv.append(flag)
            if flag in _SAFE_NUMBERS:
                argv.append(draw(st.sampled_from(_SAFE_NUMBERS[flag])))
            elif draw(st.booleans()):
                argv.append(draw(words))
        return argv

    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(command_lines())
    def check(argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        text = err.getvalue()
        assert code != 3 and "Traceback" not in text, (argv, text)
        assert text.count("\n") <= 1, (argv, text)
        if code == 0:
            assert text == "", (argv, text)
        else:
            assert text.startswith("xlac: error: ") and text.endswith("\n"), (argv, text)

    check()


@pytest.mark.parametrize("command", ["run", "dump", "opt", "compile", "bench M"])
def test_help_says_module_is_hlo_or_stablehlo(command, capsys):
    assert main(command.split() + ["--help"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"module\s+HLO or StableHLO file", out), out
    assert "HLO text file" not in out
