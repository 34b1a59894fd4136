"""Modules on several devices from the command line: random inputs of the
shapes the executable takes (a leading device axis for a per-replica module,
the global arrays for a sharded one), ``xlac bench`` of them (StableHLO too),
and ``--time`` with the device processes' start-up apart.

Every module here runs on 2 devices, so one pool of 2 worker processes serves
the whole file."""
from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from xlac.bench import random_arrays
from xlac.cli import main

pytestmark = pytest.mark.timeout(600)

# Per-replica: replica_count=2, arguments and results with a leading axis of 2.
ALL_REDUCE = """HloModule ar, replica_count=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add
}
"""

# XLA's partitioned per-device program: the parameter is a tile (f32[2,3]) of a
# global f32[4,3] argument.
SPMD = """HloModule s, num_partitions=2

ENTRY e {
  x = f32[2,3] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT n = f32[2,3] negate(x), sharding={devices=[2,1]<=[2]}
}
"""

# jax 0.10.2's StableHLO of a global program on 2 devices:
#   mesh = Mesh(jax.devices()[:2], ("i",))
#   jax.jit(shard_map(lambda x: jax.lax.psum(x * 2.0, "i"), mesh=mesh, in_specs=P("i"),
#                     out_specs=P())).lower(np.zeros((4, 3), np.float32)).as_text()
SHARD_MAP_MLIR = """module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["i"=2]> {stablehlo.mesh = {axes = [{name = "i", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<4x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"i"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"i"} (%arg1: tensor<2x3xf32>) {
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
      %2 = stablehlo.multiply %arg1, %1 : tensor<2x3xf32>
      %3 = "stablehlo.all_reduce"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %4 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %4 : tensor<f32>
      }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      sdy.return %3 : tensor<2x3xf32>
    } : (tensor<4x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}
"""

ONE_DEVICE = """HloModule one

ENTRY e {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}
"""


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text, suffix in (("ar", ALL_REDUCE, "hlo"), ("spmd", SPMD, "hlo"), ("shard_map", SHARD_MAP_MLIR, "mlir"),
                               ("one", ONE_DEVICE, "hlo")):
        out[name] = tmp_path / f"{name}.{suffix}"
        out[name].write_text(text, encoding="utf-8")
    return out


def _ok(capsys, argv) -> str:
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def _shapes(exe) -> list:
    return [str(s) for s in exe.argument_shapes]


def test_every_executable_says_what_it_takes():
    assert _shapes(xlac.jit(ONE_DEVICE)) == ["f32[3]{0}"]
    assert _shapes(xlac.jit(ALL_REDUCE)) == ["f32[2,4]{1,0}"]           # a leading axis of 2 devices
    assert _shapes(xlac.jit(SPMD)) == ["f32[4,3]{1,0}"]                 # the global array
    assert _shapes(xlac.jit(SHARD_MAP_MLIR)) == ["f32[4,3]{1,0}"]       # the global array
    dynamic = xlac.jit("HloModule d\nENTRY e {\n  x = f32[<=5] parameter(0)\n  ROOT n = f32[<=5] negate(x)\n}\n")
    assert _shapes(dynamic) == ["f32[5]{0}"]                            # at the bound


def test_run_random_inputs_on_devices(capsys, files, tmp_path):
    out = tmp_path / "out.npz"
    _ok(capsys, ["run", files["ar"], "--random-inputs", "--seed", "3", "--out", out])
    x, = random_arrays(xlac.jit(ALL_REDUCE).argument_shapes, 3)
    with np.load(out) as got:
        np.testing.assert_allclose(got["arr_0"], np.broadcast_to(x.sum(0), (2, 4)), rtol=1e-6)
    _ok(capsys, ["run", files["spmd"], "--random-inputs", "--out", out])
    x, = random_arrays(xlac.jit(SPMD).argument_shapes, 0)
    with np.load(out) as got:
        np.testing.assert_array_equal(got["arr_0"], -x)
    _ok(capsys, ["run", files["shard_map"], "--random-inputs", "--out", out])
    x, = random_arrays(xlac.jit(SHARD_MAP_MLIR).argument_shapes, 0)
    with np.load(out) as got:
        np.testing.assert_allclose(got["arr_0"], 2 * (x[:2] + x[2:]), rtol=1e-6)
    # --devices makes a one-device module per-replica: a leading axis of 2.
    _ok(capsys, ["run", files["one"], "--devices", "2", "--random-inputs", "--out", out])
    with np.load(out) as got:
        assert got["arr_0"].shape == (2, 3)
    # The reference evaluator takes the per-replica arrays too.
    assert _ok(capsys, ["run", files["ar"], "--random-inputs", "--reference"]).startswith("arr_0: float32[2, 4]")


def test_run_time_reports_device_start_up_apart(capsys, files):
    out = _ok(capsys, ["run", files["ar"], "--random-inputs", "--time"])
    assert re.match(r"compile \d+\.\d+ \w+ \(on 2 devices\), device start-up \d+\.\d+ \w+, "
                    r"run \d+\.\d+ \w+ \(one call", out), out


def test_bench_reads_stablehlo_and_times_devices(capsys, files):
    out = _ok(capsys, ["bench", files["shard_map"], "--repeat", "1"])
    assert out.startswith("module jit_f on 2 devices\n") and "\n  start-up " in out and "median" in out
    mlir = files["one"].with_suffix(".mlir")
    mlir.write_text("func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32>) {\n"
                    "  %0 = stablehlo.negate %arg0 : tensor<3xf32>\n  return %0 : tensor<3xf32>\n}\n", encoding="utf-8")
    out = _ok(capsys, ["bench", mlir, "--repeat", "1"])
    assert "median" in out and "start-up" not in out
