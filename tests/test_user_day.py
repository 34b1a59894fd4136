"""Issue 18, the Python user's day: benchmarking any module, cost and memory
analysis, the run options, a discoverable API, paths and npz files given as
modules."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.cli import main
from xlac.hlo.cost_analysis import cost_analysis

REPO = Path(__file__).resolve().parents[1]
MLP = REPO / "examples" / "mlp.hlo"
MLP_IN = REPO / "examples" / "mlp.npz"
MLP_OUT = REPO / "examples" / "mlp.expected.npz"

AXPY = """HloModule axpy

ENTRY e {
  x.1 = f32[4,8]{1,0} parameter(0)
  y.2 = f32[4,8]{1,0} parameter(1)
  ROOT s = f32[4,8]{1,0} subtract(x.1, y.2)
}
"""


def _error(capsys, argv) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code != 0 and err and err.count("\n") == 0 and "Traceback" not in err, err
    return err


def _ok(capsys, argv) -> str:
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


# ---------------------------------------------------------------------------------------
# cost_analysis against hand counts (XLA's HloCostAnalysis rules)
# ---------------------------------------------------------------------------------------

def test_cost_elementwise_and_transcendental():
    text = """HloModule m
ENTRY e {
  x = f32[4,8]{1,0} parameter(0)
  y = f32[4,8]{1,0} parameter(1)
  a = f32[4,8]{1,0} add(x, y)
  ROOT ex = f32[4,8]{1,0} exponential(a)
}
"""
    cost = cost_analysis(xlac.parse_hlo(text))
    assert cost["flops"] == 32 and cost["transcendentals"] == 32
    assert cost["bytes accessed"] == 3 * 128 + 2 * 128       # add: 2 in + 1 out, exp: 1 in + 1 out
    assert cost["bytes accessed0{}"] == 128 and cost["bytes accessedout{}"] == 128
    # The compiled module fuses the two: flops and transcendentals stay, the
    # intermediate never touches memory (two operands and one result).
    exe_cost = xlac.jit(text).cost_analysis()
    assert exe_cost["flops"] == 32 and exe_cost["transcendentals"] == 32
    assert exe_cost["bytes accessed"] == 3 * 128


def test_cost_dot():
    text = """HloModule m
ENTRY e {
  a = f32[8,16]{1,0} parameter(0)
  b = f32[16,4]{1,0} parameter(1)
  ROOT d = f32[8,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
    cost = cost_analysis(xlac.parse_hlo(text))
    assert cost["flops"] == 2 * 8 * 4 * 16               # one FMA = 2 flops per (m, n, k)
    assert cost["bytes accessed"] == 8 * 16 * 4 + 16 * 4 * 4 + 8 * 4 * 4
    assert xlac.jit(text).cost_analysis()["flops"] == 2 * 8 * 4 * 16


def test_cost_batched_dot_counts_batch_in_the_output():
    text = """HloModule m
ENTRY e {
  a = f32[3,5,7]{2,1,0} parameter(0)
  b = f32[3,7,2]{2,1,0} parameter(1)
  ROOT d = f32[3,5,2]{2,1,0} dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}
"""
    assert cost_analysis(xlac.parse_hlo(text))["flops"] == 2 * 3 * 5 * 2 * 7


@pytest.mark.parametrize("pad, positions", [("0_0x0_0", 9 * 9), ("1_1x1_1", 13 * 13)])
def test_cost_convolution(pad, positions):
    out = 3 if pad == "0_0x0_0" else 5
    text = f"""HloModule m
ENTRY e {{
  x = f32[1,2,5,5]{{3,2,1,0}} parameter(0)
  k = f32[3,2,3,3]{{3,2,1,0}} parameter(1)
  ROOT c = f32[1,3,{out},{out}]{{3,2,1,0}} convolution(x, k), window={{size=3x3 pad={pad}}}, dim_labels=bf01_oi01->bf01
}}
"""
    # 2 flops x input features 2 x output features 3 x batch 1 x (output, kernel)
    # position pairs that read a real input element: 9 x 9 without padding; with
    # padding 1 each spatial dimension has 4 + 5 + 4 = 13 such pairs.
    assert cost_analysis(xlac.parse_hlo(text))["flops"] == 2 * 2 * 3 * positions
    assert xlac.jit(text).cost_analysis()["flops"] == 2 * 2 * 3 * positions


def test_cost_grouped_convolution_divides_by_feature_group_count():
    text = """HloModule m
ENTRY e {
  x = f32[1,4,5,5]{3,2,1,0} parameter(0)
  k = f32[4,2,3,3]{3,2,1,0} parameter(1)
  ROOT c = f32[1,4,3,3]{3,2,1,0} convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=2
}
"""
    assert cost_analysis(xlac.parse_hlo(text))["flops"] == 2 * (4 // 2) * 4 * 1 * 81


def test_cost_reduce_counts_reducer_applications():
    text = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,8]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4]{0} reduce(x, z), dimensions={1}, to_apply=add
}
"""
    cost = cost_analysis(xlac.parse_hlo(text))
    assert cost["flops"] == 32 - 4                 # input elements - output elements
    assert cost["transcendentals"] == 0
    assert cost["bytes accessed"] == 128 + 4 + 16  # operand, init value, result (constant: free)
    assert xlac.jit(text).cost_analysis()["flops"] == 28


def test_cost_linear_algebra_and_fft():
    text = """HloModule m
ENTRY e {
  a = f32[4,4]{1,0} parameter(0)
  b = f32[4,3]{1,0} parameter(1)
  c = c64[8,16]{1,0} parameter(2)
  l = f32[4,4]{1,0} cholesky(a), lower=true
  t = f32[4,3]{1,0} triangular-solve(l, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  f = c64[8,16]{1,0} fft(c), fft_type=FFT, fft_length={16}
  ROOT r = (f32[4,3]{1,0}, c64[8,16]{1,0}) tuple(t, f)
}
"""
    module = xlac.parse_hlo(text)
    from xlac.hlo.cost_analysis import instruction_cost
    cost = {i.name: instruction_cost(i) for i in module.entry.instructions}
    assert cost["l"]["flops"] == 4 * 16 // 3 and cost["l"]["bytes accessed"] == 64
    assert cost["t"]["flops"] == 2 * 4 * 12
    assert cost["t"]["bytes accessed"] == 48 + 64 // 2 + 48
    assert cost["f"]["flops"] == 2 * 4 * 4 * 128          # log2(16) = 4, 128 elements
    assert cost["r"]["flops"] == 0 and cost["r"]["bytes accessed"] == 16    # two pointers


def test_cost_select_and_scatter():
    text = """HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,4]{1,0} parameter(0)
  s = f32[2,2]{1,0} parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,4]{1,0} select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
}
"""
    # 4 source elements: 3 selections (1 flop each) and 1 scatter (1 flop) each.
    assert cost_analysis(xlac.parse_hlo(text))["flops"] == 4 * 3 + 4


def test_cost_of_the_mlp_example():
    # x[16,32] @ w1[32,64] + b1, max(., 0), @ w2[64,10] + b2.
    flops = 2 * 16 * 64 * 32 + 16 * 64 + 16 * 64 + 2 * 16 * 10 * 64 + 16 * 10
    assert xlac.jit(MLP.read_text(encoding="utf-8")).cost_analysis()["flops"] == flops


# ---------------------------------------------------------------------------------------
# memory_analysis against buffer assignment
# ---------------------------------------------------------------------------------------

def test_memory_analysis_matches_buffer_assignment():
    exe = xlac.jit(MLP.read_text(encoding="utf-8"))
    m = exe.memory_analysis()
    assert m.argument_size_in_bytes == 4 * (16 * 32 + 32 * 64 + 64 + 64 * 10 + 10)
    assert m.output_size_in_bytes == 4 * 16 * 10
    assert m.temp_size_in_bytes == exe.lowered.assignment.temp_size == exe.temp_size
    assert m.alias_size_in_bytes == 0
    assert m.generated_code_size_in_bytes > 0
    assert m.peak_memory_in_bytes == (m.argument_size_in_bytes + m.output_size_in_bytes
                                      + m.temp_size_in_bytes)


def test_memory_analysis_counts_donated_results_as_aliases():
    exe = xlac.jit(AXPY, donate_argnums=(0,))
    assert exe.donations, "subtract may write into its first operand"
    assert exe.memory_analysis().alias_size_in_bytes == 4 * 32
    assert xlac.jit(AXPY).memory_analysis().alias_size_in_bytes == 0


# ---------------------------------------------------------------------------------------
# xlac bench MODULE
# ---------------------------------------------------------------------------------------

def test_bench_module_with_inputs(capsys):
    out = _ok(capsys, ["bench", str(MLP), "--inputs", str(MLP_IN), "--repeat", "3", "--threads", "1"])
    assert "module jit_f (1 thread(s))" in out
    assert "compile" in out and "median" in out and "min" in out and "max" in out
    assert "3 samples" in out
    assert "88224 flops" in out.replace("8.822e+04", "88224") and "GFLOP/s" in out and "GB/s" in out
    assert "temp" in out


def test_bench_module_with_random_inputs_from_another_directory(tmp_path):
    # From any directory, as an installed command: the part of the harness it
    # needs lives in the xlac package.
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "xlac", "bench", str(MLP), "--repeat", "2", "--seed", "3"],
                          cwd=tmp_path, env=env, capture_output=True, encoding="utf-8", timeout=300)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "median" in proc.stdout and "GFLOP/s" in proc.stdout


def test_bench_module_errors(capsys, tmp_path):
    assert "argument --repeat: must be an integer from 1" in _error(capsys, ["bench", str(MLP), "--repeat", "0"])
    assert "argument --threads: must be an integer from 1" in _error(capsys, ["bench", str(MLP), "--threads", "0"])
    assert "nope.hlo" in _error(capsys, ["bench", str(tmp_path / "nope.hlo")])


def test_benchmark_function_samples():
    from xlac.bench import benchmark, random_inputs
    module = xlac.parse_hlo(AXPY)
    res = benchmark(AXPY, random_inputs(module, 0), repeat=4, threads=1)
    assert len(res.samples_s) == 4 and res.inner >= 1 and res.cost["flops"] == 32
    assert min(res.samples_s) <= res.median_s <= max(res.samples_s)
    with pytest.raises(ValueError, match="repeat"):
        benchmark(AXPY, random_inputs(module, 0), repeat=0)


# ---------------------------------------------------------------------------------------
# xlac run: --time, --expected, names, --random-inputs
# ---------------------------------------------------------------------------------------

def test_run_time_prints_compile_and_run(capsys):
    out = _ok(capsys, ["run", str(MLP), "--inputs", str(MLP_IN), "--time"])
    assert out.startswith("compile ") and ", run " in out and "arr_0: float32[16, 10]" in out


def test_run_reference_time_prints_the_evaluator_time(capsys):
    out = _ok(capsys, ["run", str(MLP), "--inputs", str(MLP_IN), "--reference", "--time",
                       "--expected", str(MLP_OUT)])
    assert out.startswith("evaluate ") and "numpy reference evaluator" in out and "match" in out


def test_run_expected_matches(capsys):
    out = _ok(capsys, ["run", str(MLP), "--inputs", str(MLP_IN), "--expected", str(MLP_OUT)])
    assert "all 1 result(s) match" in out


def test_run_expected_mismatch_fails_naming_the_result(capsys, tmp_path):
    with np.load(MLP_OUT) as d:
        want = d["arr_0"].copy()
    want[3, 4] += 1.0
    bad = tmp_path / "bad.npz"
    np.savez(bad, want)
    err = _error(capsys, ["run", str(MLP), "--inputs", str(MLP_IN), "--expected", str(bad)])
    assert "result arr_0 differs" in err and "1 of 160" in err and "[3, 4]" in err
    # A loose enough tolerance accepts it, absolute or relative.
    assert main(["run", str(MLP), "--inputs", str(MLP_IN), "--expected", str(bad), "--atol", "2"]) == 0
    bump = abs(1.0 / float(want[3, 4]))
    assert main(["run", str(MLP), "--inputs", str(MLP_IN), "--expected", str(bad),
                 "--rtol", str(2 * bump + 1e-3)]) == 0
    capsys.readouterr()
    np.savez(bad, want.astype(np.float64))
    assert "float64" in _error(capsys, ["run", str(MLP), "--inputs", str(MLP_IN), "--expected", str(bad)])
    np.savez(bad, want, want)
    assert "1 result(s)" in _error(capsys, ["run", str(MLP), "--inputs", str(MLP_IN), "--expected", str(bad)])


def test_run_inputs_keyed_by_parameter_name(capsys, tmp_path):
    module = tmp_path / "axpy.hlo"
    module.write_text(AXPY, encoding="utf-8")
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    y = np.ones((4, 8), np.float32)
    out = tmp_path / "out.npz"
    for names in (("x.1", "y.2"), ("x", "y"), ("arr_0", "y")):
        inputs = tmp_path / "in.npz"
        np.savez(inputs, **{names[0]: x, names[1]: y})
        _ok(capsys, ["run", str(module), "--inputs", str(inputs), "--out", str(out)])
        with np.load(out) as got:
            np.testing.assert_array_equal(got["arr_0"], x - y)
    np.savez(inputs, x=x, arr_0=x, y=y)
    assert "given twice" in _error(capsys, ["run", str(module), "--inputs", str(inputs)])
    np.savez(inputs, x=x, y=y, z=y)
    assert "unexpected arrays z" in _error(capsys, ["run", str(module), "--inputs", str(inputs)])
    np.save(tmp_path / "one.npy", x)
    assert "expected an .npz" in _error(capsys, ["run", str(module), "--inputs", str(tmp_path / "one.npy")])


def test_run_random_inputs_are_seeded(capsys, tmp_path):
    outs = []
    for seed in ("1", "1", "2"):
        out = tmp_path / f"out{len(outs)}.npz"
        _ok(capsys, ["run", str(MLP), "--random-inputs", "--seed", seed, "--out", str(out)])
        with np.load(out) as d:
            outs.append(d["arr_0"])
    np.testing.assert_array_equal(outs[0], outs[1])
    assert not np.array_equal(outs[0], outs[2])
    assert "not both" in _error(capsys, ["run", str(MLP), "--random-inputs", "--inputs", str(MLP_IN)])
    assert "--random-inputs" in _error(capsys, ["run", str(MLP)])


def test_random_inputs_have_the_parameter_dtypes():
    from xlac.bench import random_inputs
    module = xlac.parse_hlo("HloModule m\nENTRY e {\n  a = s32[3]{0} parameter(0)\n  b = pred[2]{0} parameter(1)\n"
                            "  c = (f64[2]{0}, c64[]) parameter(2)\n  ROOT t = s32[3]{0} copy(a)\n}\n")
    a, b, (c0, c1) = random_inputs(module, 5)
    assert a.dtype == np.int32 and a.shape == (3,) and (0 <= a).all() and (a < 8).all()
    assert b.dtype == np.bool_ and c0.dtype == np.float64 and c1.dtype == np.complex64


# ---------------------------------------------------------------------------------------
# modules given as paths, npz and binary files
# ---------------------------------------------------------------------------------------

def test_npz_given_as_the_module(capsys):
    err = _error(capsys, ["run", str(MLP_IN)])
    assert "NumPy array file, not HLO text" in err and "--inputs" in err


def test_binary_file_given_as_the_module(capsys, tmp_path):
    binary = tmp_path / "model.bin"
    binary.write_bytes(b"\x08\x01\x00\x12\x00\xff")
    assert "binary file, not HLO text" in _error(capsys, ["run", str(binary)])


def test_jit_of_a_path_reads_the_file(tmp_path):
    exe = xlac.jit(str(MLP))
    assert exe.module.name == "jit_f"
    assert xlac.jit(MLP).module.name == "jit_f"           # a pathlib.Path too
    x = np.ones((4, 8), np.float32)
    (tmp_path / "axpy.hlo").write_text(AXPY, encoding="utf-8")
    np.testing.assert_array_equal(xlac.evaluate(str(tmp_path / "axpy.hlo"), x, x), x - x)


def test_jit_of_a_missing_path_says_it_looks_like_one():
    with pytest.raises(ValueError, match="looks like a path to a file, but there is no such file"):
        xlac.jit("no/such/model.hlo")
    with pytest.raises(ValueError, match="NumPy array file"):
        xlac.jit(str(MLP_IN))
    with pytest.raises(xlac.HloParseError):       # not a path: the parser's own error
        xlac.jit("HloModule broken")


# ---------------------------------------------------------------------------------------
# Discoverable: dir, __all__, help, --version, xlac ops, py.typed
# ---------------------------------------------------------------------------------------

def test_dir_lists_the_lazy_names_and_all_resolves():
    code = ("import sys, xlac; names = dir(xlac); "
            "assert all(n in names for n in ('XlaBuilder', 'ops', 'jit', 'evaluate', 'compile_aot')), names; "
            "assert 'xlac.devices' not in sys.modules and 'llvmlite' not in sys.modules, 'import is not lazy'; "
            "missing = [n for n in xlac.__all__ if not hasattr(xlac, n)]; assert not missing, missing; "
            "print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(REPO)),
                          capture_output=True, encoding="utf-8", timeout=120)
    assert proc.stdout.strip() == "ok", proc.stderr


def test_help_lists_the_public_api():
    doc = xlac.__doc__
    for name in ("XlaBuilder", "ops", "jit", "evaluate", "compile_aot", "cost_analysis", "memory_analysis"):
        assert name in doc


def test_version():
    proc = subprocess.run([sys.executable, "-m", "xlac", "--version"], env=dict(os.environ, PYTHONPATH=str(REPO)),
                          capture_output=True, encoding="utf-8", timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == f"xlac {xlac.__version__}" and proc.stderr == ""


def test_ops_prints_the_support_matrix(capsys):
    out = _ok(capsys, ["ops"])
    assert out == (REPO / "docs" / "ops.md").read_text(encoding="utf-8")


def test_py_typed_is_package_data():
    assert (Path(xlac.__file__).parent / "py.typed").is_file()
    assert 'xlac = ["py.typed"]' in (REPO / "pyproject.toml").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------
# xlac dump --asm / --dot
# ---------------------------------------------------------------------------------------

def test_dump_asm(capsys):
    out = _ok(capsys, ["dump", str(MLP), "--asm"])
    assert "xlac_entry:" in out and "ret" in out


def test_dump_dot(capsys):
    out = _ok(capsys, ["dump", str(MLP), "--dot"])
    graph = out[out.index("digraph"):]
    assert graph.startswith('digraph "jit_f" {') and graph.rstrip().endswith("}")
    assert "subgraph cluster_" in graph                          # a fusion and its fused computation
    assert graph.count("->") >= 5 and "parameter" in graph and "dot" in graph


def test_bench_module_roofline_and_xla_side_by_side(capsys, tmp_path, monkeypatch):
    """xlac bench places the module on the machine's roofline (the STREAM triad
    cached per CPU and thread count) and times XLA:CPU on the same module when
    jax is there; --plot draws the roofline."""
    pytest.importorskip("jax")
    pytest.importorskip("matplotlib")
    import json

    from xlac import roofline
    monkeypatch.setenv("XLAC_LIBRARY_CACHE_DIR", str(tmp_path))
    (tmp_path / "machine.json").write_text(json.dumps({f"{roofline.cpu_model()}|1": 12.5e9}), encoding="utf-8")
    png = tmp_path / "roof.png"
    out = _ok(capsys, ["bench", str(MLP), "--inputs", str(MLP_IN), "--repeat", "2", "--threads", "1", "--xla",
                       "--plot", str(png)])
    assert re.search(r"roofline [\d.e+]+ flop/byte: attainable [\d.e+]+ GFLOP/s \((memory|compute)-bound\), "
                     r"reached [\d.e+]+ = \d+%", out), out
    assert "STREAM triad 12.5 GB/s (cached)" in out, out
    assert re.search(r"XLA:CPU  compile .*, run median .* \(jax [\d.]+\); xlac / XLA:CPU [\d.]+x run", out), out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = _ok(capsys, ["bench", str(MLP), "--repeat", "1", "--no-roofline", "--no-xla"])
    assert "roofline" not in out and "XLA:CPU" not in out


def test_roofline_peaks_follow_the_target():
    """The peak counts vector width x 2 FMA pipes x 2 (f64 half of f32), VNNI for
    8-bit integers, AMX where the target has it; clock and cores scale it."""
    from xlac import roofline
    from xlac.codegen import target
    from xlac.shape import PrimitiveType as PT
    with target.override(cpu="skylake-avx512"):
        f32, how = roofline.peak_ops(PT.F32, 1)
        f64, _ = roofline.peak_ops(PT.F64, 2)
        s8, how8 = roofline.peak_ops(PT.S8, 1)
    hz = roofline.clock_hz()
    bits = 256 if "AMD" in open("/proc/cpuinfo", encoding="utf-8").read() else 512
    assert f32 == bits // 32 * 4 * hz and "FMA x 2 pipes" in how
    assert f64 == f32 and s8 == f32 and "VNNI" not in how8          # skylake-avx512 has no VNNI
    with target.override(cpu="cascadelake"):
        s8, how8 = roofline.peak_ops(PT.S8, 1)
    assert s8 == 4 * f32 and "VNNI" in how8
    with target.override(cpu="haswell"):
        assert roofline.peak_ops(PT.F32, 1)[0] == 256 // 32 * 4 * hz
    p = roofline.Position(rate=2e9, intensity=0.5, peak=100e9, peak_how="", bandwidth=10e9, bandwidth_how="")
    assert p.bound == "memory" and p.attainable == 5e9 and p.fraction == 0.4
