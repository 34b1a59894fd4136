"""The target code is generated for (xlac/codegen/target.py): the host by
default, another CPU through XLAC_TARGET_CPU/XLAC_TARGET_FEATURES
(``target.override``) or, on one thread, ``target.using``; the features
LLVM says each one has."""
import os
import subprocess
import sys

import numpy as np
import pytest

import xlac
from xlac import program
from xlac.codegen import target

pytestmark = pytest.mark.skipif(not target.host().is_x86, reason="x86 CPU names and features")

@pytest.fixture(autouse=True)
def _from_the_host(monkeypatch):
    """Every test starts from the host's target, even when the suite runs
    with XLAC_TARGET_CPU set."""
    monkeypatch.delenv(target.CPU_ENV, raising=False)
    monkeypatch.delenv(target.FEATURES_ENV, raising=False)


EXP = "HloModule e\nENTRY main {\n  x = f32[4096] parameter(0)\n  ROOT e = f32[4096] exponential(x)\n}\n"


def test_named_cpus_have_llvms_features():
    v2 = ("sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt")
    v3 = ("sse2", "sse3", "ssse3", "fma", "sse4.1", "sse4.2", "movbe", "popcnt", "avx", "f16c", "bmi", "avx2",
          "bmi2", "lzcnt")
    assert target.features_of(target.Target(target.host().triple, "x86-64-v2", "")) == v2
    assert target.features_of(target.Target(target.host().triple, "x86-64-v3", "")) == v3
    v4 = target.features_of(target.Target(target.host().triple, "x86-64-v4", ""))
    assert set(v3) < set(v4) and {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"} <= set(v4)
    minus = target.features_of(target.Target(target.host().triple, "x86-64-v4", "-avx512f"))
    assert not any(f.startswith("avx512") for f in minus) and "avx2" in minus
    assert target.features_of(target.Target("aarch64-unknown-linux-gnu", "generic", "")) == ()


def test_asking_llvm_agrees_with_its_host_detection():
    """The inliner probe, run on the host's own CPU and feature string, finds
    what LLVM's host detection reports."""
    host = target.host()
    same = target.Target(host.triple, host.cpu, host.features + ",")      # not host(): probed
    assert target._probe_features(same) == target.features_of(host)


def test_override_sets_and_restores_the_environment():
    assert target.current() == target.host()
    with target.override(cpu="haswell") as t:
        assert os.environ[target.CPU_ENV] == "haswell" and t == target.current()
        assert t.cpu == "haswell" and t.features == ""
        assert target.host_vector_bits() == 256
        assert target.host_target_machine().triple == target.host().triple
        assert target.host_description()[1:3] == ("haswell", "")
        with target.override(cpu="x86-64-v4", features="-prefer-256-bit"):
            assert target.host_vector_bits() == 512
        assert target.current().cpu == "haswell"
    assert target.CPU_ENV not in os.environ and target.current() == target.host()
    with target.override(features="-avx512f,-avx2") as t:                  # the host's CPU, less
        assert t.cpu == target.host().cpu and t.features.endswith(",-avx512f,-avx2")
        assert "avx2" not in target.features_of(t)
        assert target.host_vector_bits() <= 256


def test_unknown_cpu_or_feature_is_an_error():
    with pytest.raises(ValueError, match="not a recognized processor"):
        with target.override(cpu="no-such-cpu"):
            pass
    with pytest.raises(ValueError, match="not a recognized feature"):
        with target.override(features="+no-such-feature"):
            pass
    assert target.current() == target.host()


def test_using_is_for_this_thread_only():
    other = target.Target(target.host().triple, "x86-64-v2", "")
    with target.using(other):
        assert target.current() == other and target.host_vector_bits() == 128
    assert target.current() == target.host()


def test_jit_compiles_for_the_override_and_caches_apart(avx2_target):
    """Code for an AVX2 CPU (exp scales by 2**n without AVX-512's vscalefps),
    in a cache entry of its own: the host's code for the module is not reused
    for it, nor its code for the host."""
    avx2_target.require_runnable()
    text = EXP.replace("HloModule e", "HloModule target_test_exp")
    x = np.linspace(-3, 3, 4096).astype(np.float32)
    exe = xlac.jit(text)
    np.testing.assert_allclose(exe(x), np.exp(x), rtol=1e-6)
    assert "llvm.ldexp" not in exe.optimized_llvm_ir
    assert "target=haswell" in program.codegen_options(True, True)
    with target.override():                         # the host again
        assert "target=" not in program.codegen_options(True, True)
        on_host = xlac.jit(text)
        assert on_host.from_cache != "memory"
        np.testing.assert_allclose(on_host(x), np.exp(x), rtol=1e-6)
        assert ("llvm.ldexp" in on_host.optimized_llvm_ir) == ("avx512f" in target.features_of(target.host()))


def test_code_for_a_cpu_this_one_cannot_run_is_refused():
    """A feature this CPU lacks, asked for through XLAC_TARGET_FEATURES: the
    JIT compiles but refuses to run the code, naming the feature."""
    host = set(target.features_of(target.host()))
    lacking = [f for f in target.X86_FEATURES if f not in host]
    if not lacking:
        pytest.skip("this CPU has every feature xlac knows")
    with target.override(features=f"+{lacking[-1]}"):
        with pytest.raises(RuntimeError, match=f"may use {lacking[-1]}, which this CPU .* lacks"):
            xlac.jit(EXP)(np.zeros(4096, np.float32))


def test_the_environment_reaches_a_new_process():
    """XLAC_TARGET_CPU set before the process starts (what override does for
    worker processes, and how the suite runs as on an AVX2 machine)."""
    code = "from xlac.codegen import target; print(target.current().cpu, target.host_vector_bits())"
    env = dict(os.environ, XLAC_TARGET_CPU="x86-64-v2")
    env.pop(target.FEATURES_ENV, None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, encoding="utf-8", timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["x86-64-v2", "128"]
