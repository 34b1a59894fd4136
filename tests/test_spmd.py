"""Automatic sharding: sharding propagation and the SPMD partitioner
(``xlac.passes.sharding_propagation``, ``xlac.passes.spmd_partitioner``).

The programs are jax's (``tests/spmd``, written by its ``generate.py`` with
jax 0.10 on 4 CPU devices): ``jax.jit`` with ``NamedSharding``s and
``with_sharding_constraint`` on 1-D and 2-D meshes of 2 and 4 devices.  Each
runs partitioned on device processes (the pools of 2 and 4 are started once
for the whole file) and under ``mpiexec``, from jax's global inputs, and is
checked against jax's outputs and the numpy evaluator's of the global
program; the per-device programs are checked for local parameter shapes and
for the collectives XLA's partitioner inserts (no more bytes than XLA's
program moves, by more than a quarter).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.hlo.sharding import local_dims, parse_sharding, parse_shardings
from xlac.passes.pipeline import run_passes
from xlac.passes.sharding_propagation import reshape_sharding
from xlac.passes.spmd_partitioner import collective_bytes, partition_module

CASES = Path(__file__).resolve().parent / "spmd"
MANIFEST = json.loads((CASES / "manifest.json").read_text(encoding="utf-8"))["cases"]
NAMES = sorted(MANIFEST)
MLIR_NAMES = sorted(n for n, c in MANIFEST.items() if c["mlir"])


def _load(name: str):
    with np.load(CASES / f"{name}.npz") as f:
        args = [f[f"arr_{k}"] for k in range(len(f.files))]
    with np.load(CASES / f"{name}.expected.npz") as f:
        want = [f[f"arr_{k}"] for k in range(len(f.files))]
    return args, want


def _leaves(out) -> list:
    return list(out) if isinstance(out, tuple) else [out]


def _close(got, want, name):
    assert len(got) == len(want), name
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (name, k, g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=f"{name}, result {k}")


def _partitioned(name: str):
    module = xlac.parse_hlo((CASES / f"{name}.hlo").read_text(encoding="utf-8"))
    signature = partition_module(module)
    assert signature is not None, name
    return module, signature


@pytest.mark.parametrize("name", NAMES)
def test_partitioned_program_on_device_processes(name):
    """Global arrays in and out; each device computes its tiles; equal to
    jax's outputs and to the evaluator's of the global program."""
    args, want = _load(name)
    text = (CASES / f"{name}.hlo").read_text(encoding="utf-8")
    exe = xlac.jit(text)
    assert type(exe).__name__ == "PartitionedExecutable" and exe.num_devices == MANIFEST[name]["devices"]
    _close(_leaves(exe(*args)), want, name)
    _close(_leaves(xlac.evaluate(text, *args)), want, name + " (evaluated whole)")


@pytest.mark.parametrize("name", MLIR_NAMES)
def test_partitioned_program_from_stablehlo(name):
    """The same programs as jax prints them by default: StableHLO with
    ``sdy.mesh`` and ``sdy.sharding`` on the arguments and results."""
    args, want = _load(name)
    exe = xlac.jit((CASES / f"{name}.mlir").read_text(encoding="utf-8"))
    assert type(exe).__name__ == "PartitionedExecutable"
    _close(_leaves(exe(*args)), want, name)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "fallbacks"])
def test_per_device_program_holds_tiles_and_moves_no_more_than_xla(name):
    module, signature = _partitioned(name)
    # Every parameter is its local tile (padded where uneven), as its sharding says.
    for p, (s, shape) in zip(module.entry.parameters, signature.params):
        assert tuple(p.shape.dimensions) == local_dims(s, shape.dimensions), (name, p.name)
    # Nothing fell back to computing whole.
    assert not [d.message for d in module.diagnostics if d.source == "spmd-partitioner"], name
    ours = sum(b for _, _, b in collective_bytes(module))
    xla = sum(b for _, b in MANIFEST[name]["xla_collectives"])
    assert ours <= 1.25 * xla, (name, collective_bytes(module), MANIFEST[name]["xla_collectives"])


def _opcodes(module) -> list:
    return sorted(op for _, op, _ in collective_bytes(module))


def test_megatron_mlp_is_one_all_reduce_of_partial_sums():
    """First weight split by columns, second by rows: the hidden activations
    stay split, one all-reduce adds the second dot's partial sums."""
    for name, n, hidden in (("megatron_mlp", 4, 16), ("megatron_mlp_2dev", 2, 8)):
        module, _ = _partitioned(name)
        assert _opcodes(module) == ["all-reduce"], name
        shapes = {p.name.split(".")[0]: tuple(p.shape.dimensions) for p in module.entry.parameters}
        h = hidden // n
        assert shapes["w1"] == (6, h) and shapes["w2"] == (h, 6) and shapes["b1"] == (h,)


def test_data_parallel_step_all_reduces_gradients_and_gathers_no_activation():
    module, _ = _partitioned("dp_mlp_step")
    assert set(_opcodes(module)) == {"all-reduce"}
    x = next(p for p in module.entry.parameters if p.name.startswith("x"))
    assert tuple(x.shape.dimensions) == (2, 6)          # 8 rows over 4 devices


def test_moving_the_split_between_dimensions_is_an_all_to_all():
    module, _ = _partitioned("reshard_dims")
    assert _opcodes(module) == ["all-to-all"]


def test_contracting_dimension_split_result_wanted_split_is_a_reduce_scatter():
    module, _ = _partitioned("contracting_dot")
    assert _opcodes(module) == ["reduce-scatter"]


def test_uneven_tiles_are_padded_and_the_padding_is_never_reduced():
    """6 rows on 4 devices: tiles of 2, 2, 2 and 0 rows (padded to 2); the
    reduce and the dot over the rows read the identity in the padding."""
    module, _ = _partitioned("uneven")
    ops = [i.opcode for i in module.entry.instructions]
    assert "select" in ops and "pad" in ops


# ---------------------------------------------------------------------------------------
# Fallback, passes alone, the command line
# ---------------------------------------------------------------------------------------

_FALLBACK = """HloModule fallback, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=4]>}}

lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}

ENTRY main {
  x = f32[8,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  r = f32[8,3]{1,0} sort(x), dimensions={0}, to_apply=lt
  n = f32[8,3]{1,0} negate(r)
  ROOT s = f32[8,3]{1,0} custom-call(n), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
}
"""


def test_an_op_it_cannot_partition_falls_back_to_gathering_with_a_note():
    module = xlac.parse_hlo(_FALLBACK)
    partition_module(module)
    notes = [d.message for d in module.diagnostics if d.source == "spmd-partitioner"]
    assert len(notes) == 1 and "r (sort, sharding {devices=[4,1]<=[4]})" in notes[0]
    assert "all-gather" in _opcodes(module)
    x = np.arange(24, dtype=np.float32).reshape(8, 3)[::-1].copy()
    np.testing.assert_array_equal(xlac.jit(_FALLBACK)(x), -np.sort(x, axis=0))


def test_what_jax_writes_and_is_not_partitioned_falls_back_with_notes():
    """sort and cumsum (reduce-window) along a split dimension, their results
    wanted whole: computed whole, each named in a note; the scan (while) and
    the embedding gather beside them are partitioned; the results are jax's
    (test_partitioned_program_on_device_processes)."""
    module, _ = _partitioned("fallbacks")
    notes = [d.message for d in module.diagnostics if d.source == "spmd-partitioner"]
    assert len(notes) == 2, notes
    for opcode in ("sort", "reduce-window"):
        assert any(f"({opcode}, sharding " in n and "computed whole on every device" in n for n in notes), opcode


_TILED_WINDOWS = """HloModule tiled, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=4]>}}

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,8,6]{2,1,0} parameter(0), sharding={devices=[1,4,1]<=[4]}
  g = f32[2,4,3]{2,1,0} parameter(1), sharding={devices=[1,4,1]<=[4]}
  zero = f32[] constant(0)
  s = f32[2,8,6]{2,1,0} select-and-scatter(x, g, zero), window={size=1x2x2 stride=1x2x2}, select=ge, scatter=add, sharding={devices=[1,4,1]<=[4]}
  t = (f32[2,8,2]{2,1,0}, s32[2,8,2]{2,1,0}) topk(x), k=2, largest=true
  v = f32[2,8,2]{2,1,0} get-tuple-element(t), index=0
  i = s32[2,8,2]{2,1,0} get-tuple-element(t), index=1
  ROOT r = (f32[2,8,6]{2,1,0}, f32[2,8,2]{2,1,0}, s32[2,8,2]{2,1,0}) tuple(s, v, i)
}
"""


def test_a_sort_along_its_split_dimension_wanted_split_moves_the_split():
    """Rows split 4 ways, sorted along the rows, the result wanted split by
    rows: the split moves to the columns (an all-to-all), each device sorts
    its columns, and moves back."""
    text = _FALLBACK.replace("r = f32[8,3]{1,0} sort(x)", "r = f32[8,4]{1,0} sort(x)").replace(
        "f32[8,3]", "f32[8,4]")
    module = xlac.parse_hlo(text)
    partition_module(module)
    assert not [d.message for d in module.diagnostics if d.source == "spmd-partitioner"]
    assert _opcodes(module) == ["all-to-all", "all-to-all"]
    x = np.random.default_rng(5).standard_normal((8, 4)).astype(np.float32)
    np.testing.assert_array_equal(xlac.jit(text)(x), -np.sort(x, axis=0))


def test_windows_that_tile_a_split_dimension_and_top_k_run_on_tiles():
    """A max pool's gradient of stride 2 over rows split 4 ways (2 rows, one
    whole window, per device) and a top-k along the unsplit last dimension:
    computed on tiles, no communication, no note; equal to the evaluator."""
    module = xlac.parse_hlo(_TILED_WINDOWS)
    partition_module(module)
    assert not [d.message for d in module.diagnostics if d.source == "spmd-partitioner"]
    assert _opcodes(module) == []
    ops = {i.opcode: i for i in module.entry.instructions}
    assert tuple(ops["select-and-scatter"].shape.dimensions) == (2, 2, 6)
    assert tuple(ops["topk"].shape.tuple_shapes[0].dimensions) == (2, 2, 2)
    rng = np.random.default_rng(3)
    x, g = rng.standard_normal((2, 8, 6)).astype(np.float32), rng.standard_normal((2, 4, 3)).astype(np.float32)
    for got, want in zip(xlac.jit(_TILED_WINDOWS)(x, g), xlac.evaluate(_TILED_WINDOWS, x, g)):
        np.testing.assert_array_equal(got, want)


_STRIDED_CONV = """HloModule strided, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=4]>}}

ENTRY main {
  x = f32[2,16,6,3]{3,2,1,0} parameter(0), sharding={devices=[1,4,1,1]<=[4]}
  k = f32[3,3,3,4]{3,2,1,0} parameter(1), sharding={replicated}
  ROOT c = f32[2,8,3,4]{3,2,1,0} convolution(x, k), window={size=3x3 stride=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f, sharding={devices=[1,4,1,1]<=[4]}
}
"""


def test_a_strided_convolution_split_on_space_reads_its_window_of_the_neighbours():
    """Rows split 4 ways, a 3x3 window of stride 2 (SAME padding, 0 above, 1
    below): each device's 2 output rows read its 4 input rows and the first of
    the next device's, received by one collective-permute; zeros past the
    end stand for the padding."""
    module = xlac.parse_hlo(_STRIDED_CONV)
    partition_module(module)
    assert _opcodes(module) == ["collective-permute"]
    rng = np.random.default_rng(11)
    x, k = rng.standard_normal((2, 16, 6, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(xlac.jit(_STRIDED_CONV)(x, k), xlac.evaluate(_STRIDED_CONV, x, k), rtol=1e-5, atol=1e-5)


_FLATTEN = """HloModule flatten, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2, "y"=2]>}}

ENTRY main {
  x = f32[8,6]{1,0} parameter(0), sharding={devices=[2,2]<=[4]}
  f = f32[48]{0} reshape(x)
  two = f32[] constant(2)
  t = f32[48]{0} broadcast(two), dimensions={}
  ROOT r = f32[48]{0} multiply(f, t)
}
"""


def test_flattening_a_value_split_by_rows_and_columns_keeps_it_split():
    """[8,6] split 2x2, flattened: the result is split 4 ways (row-major
    order of the tiles), each device's rows gathered across the columns only
    (one all-gather in pairs, as XLA's program moves) and cut to its quarter."""
    module = xlac.parse_hlo(_FLATTEN)
    signature = partition_module(module)
    assert signature.results[0][0].tile_dims == (4,)
    assert [(op, b) for _, op, b in collective_bytes(module)] == [("all-gather", 48)]
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    np.testing.assert_array_equal(xlac.jit(_FLATTEN)(x), 2 * x.reshape(-1))


_TWO_MESHES = """HloModule two, frontend_attributes={xla.sdy.meshes={empty_mesh = #sdy.mesh<[]>, mesh = #sdy.mesh<["x"=2, "y"=2]>, mesh_0 = #sdy.mesh<["a"=4, "b"=1]>}}

ENTRY main {
  x = f32[8,2]{1,0} parameter(0), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"x\\"}, {\\"y\\"}]>"}
  s = f32[8,2]{1,0} sine(x)
  ROOT c = f32[8,2]{1,0} custom-call(s), custom_call_target="Sharding", frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh_0, [{\\"a\\", \\"b\\"}, {}]>"}
}
"""


def test_shardings_on_two_meshes_of_the_same_devices_are_read_on_their_own():
    """jax's reshard onto an abstract mesh of other axis names: each
    sharding is read on the mesh it names (rows split 4 ways on mesh_0); the
    empty mesh jax adds for replicated values sets no device count."""
    module = xlac.parse_hlo(_TWO_MESHES)
    signature = partition_module(module)
    assert signature.params[0][0].tile_dims == (2, 2) and signature.results[0][0].tile_dims == (4, 1)
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2)
    np.testing.assert_allclose(xlac.jit(_TWO_MESHES)(x), np.sin(x), rtol=1e-6)


def test_long_tuple_shardings_with_xla_s_leaf_numbers_are_read():
    """XLA numbers every fifth leaf of a tuple sharding (an optimizer state's
    root): ``/*index=5*/`` comments are not part of the shardings."""
    text = ("{{replicated}, {devices=[1,4]<=[4]}, {replicated}, {replicated}, {replicated}, "
            "/*index=5*/{devices=[4,1]<=[4]}, {replicated}}")
    got = parse_shardings(text, 4)
    assert len(got) == 7 and got[1].tile_dims == (1, 4) and got[5].tile_dims == (4, 1)


def test_reshape_moves_a_split_only_where_it_stays_whole_tiles():
    s = parse_sharding("{devices=[4,1]<=[4]}", 4)
    assert reshape_sharding(s, (8, 6), (4, 2, 6)).tile_dims == (4, 1, 1)
    assert reshape_sharding(s, (8, 6), (48,)).tile_dims == (4,)
    assert reshape_sharding(parse_sharding("{devices=[1,4]<=[4]}", 4), (8, 6), (48,)) is None


def test_opt_runs_the_two_passes_alone(tmp_path):
    """``xlac opt --passes sharding-propagation,spmd-partitioner``: the
    per-device program, parameters of local shapes."""
    module = xlac.parse_hlo((CASES / "megatron_mlp.hlo").read_text(encoding="utf-8"))
    run_passes(module, "sharding-propagation")
    assert all("sharding" in i.attrs for i in module.entry.instructions)
    run = subprocess.run([sys.executable, "-m", "xlac", "opt", str(CASES / "megatron_mlp.hlo"), "--passes",
                          "sharding-propagation,spmd-partitioner"], capture_output=True, encoding="utf-8", timeout=120)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert "f32[6,4]{1,0} parameter(1), sharding={devices=[1,4]<=[4]}" in run.stdout
    assert "all-reduce(" in run.stdout and "num_partitions=4" in run.stdout


def test_dump_prints_the_per_device_program_last_with_bytes_and_memory():
    run = subprocess.run([sys.executable, "-m", "xlac", "dump", str(CASES / "megatron_mlp.hlo")],
                         capture_output=True, encoding="utf-8", timeout=120)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    out = run.stdout
    last = out[out.rindex("HloModule"):]
    assert "num_partitions=4" in last.splitlines()[0] and "all-reduce(" in last
    assert "// spmd: all-reduce all-reduce.1: 288 bytes received per device" in out
    assert "// spmd: per-device peak memory" in out


_BIG_MLP = """HloModule mlp, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=@N]>}}

ENTRY main {
  x = f32[256,512]{1,0} parameter(0), sharding={replicated}
  w1 = f32[512,2048]{1,0} parameter(1), sharding={devices=[1,@N]<=[@N]}
  w2 = f32[2048,512]{1,0} parameter(2), sharding={devices=[@N,1]<=[@N]}
  h = f32[256,2048]{1,0} dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[256,2048]{1,0} tanh(h)
  ROOT y = f32[256,512]{1,0} dot(t, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
}
"""


@pytest.mark.timeout(300)
def test_dump_peak_memory_of_a_megatron_mlp_falls_with_the_devices(tmp_path):
    """The per-device program is planned as the device processes' JIT plans
    it (GEMM scratch for the threads a process may use, not a region per
    task): the peak ``xlac dump`` reports falls with the number of devices."""
    peaks = {}
    for n in (2, 4):
        path = tmp_path / f"mlp{n}.hlo"
        path.write_text(_BIG_MLP.replace("@N", str(n)), encoding="utf-8")
        run = subprocess.run([sys.executable, "-m", "xlac", "dump", str(path)], capture_output=True, encoding="utf-8",
                             timeout=240)
        assert run.returncode == 0 and run.stderr == "", run.stderr
        line = next(x for x in run.stdout.splitlines() if "per-device peak memory" in x)
        peaks[n] = int(line.split("per-device peak memory ")[1].split()[0])
    weights = 2 * 512 * 2048 * 4
    # The temporaries stay below the weights (not ~40 MB of packing regions).
    assert peaks[4] < peaks[2] < 2 * weights, peaks


def test_xlac_run_takes_and_writes_global_arrays(tmp_path):
    out = tmp_path / "out.npz"
    name = "wsc_layers_2d"
    run = subprocess.run([sys.executable, "-m", "xlac", "run", str(CASES / f"{name}.hlo"),
                          "--inputs", str(CASES / f"{name}.npz"), "--out", str(out)],
                         capture_output=True, encoding="utf-8", timeout=120)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    with np.load(out) as f:
        _close([f[f"arr_{k}"] for k in range(len(f.files))], _load(name)[1], name)


def _mpiexec():
    pytest.importorskip("mpi4py")
    mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("no mpiexec")
    return mpiexec


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", ["megatron_mlp", "uneven", "megatron_mlp_2dev", "scan_fsdp", "cnn_dp_step", "embedding"])
def test_under_mpiexec(tmp_path, name):
    """One rank per device, each taking its tiles; rank 0 writes the global results."""
    mpiexec = _mpiexec()
    out = tmp_path / "out.npz"
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "cache"))
    n = str(MANIFEST[name]["devices"])
    run = subprocess.run([mpiexec, "-n", n, sys.executable, "-m", "xlac", "run", str(CASES / f"{name}.hlo"),
                          "--inputs", str(CASES / f"{name}.npz"), "--out", str(out)],
                         capture_output=True, encoding="utf-8", timeout=240, env=env)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    with np.load(out) as f:
        _close([f[f"arr_{k}"] for k in range(len(f.files))], _load(name)[1], name)


def test_a_call_with_the_wrong_global_array_names_the_parameter():
    args, _ = _load("megatron_mlp")
    exe = xlac.jit((CASES / "megatron_mlp.hlo").read_text(encoding="utf-8"))
    with pytest.raises(ValueError, match=r"parameter 1: expected the global array of shape \[6, 16\], got \[6, 4\]"):
        exe(args[0], args[1][:, :4], args[2], args[3])
    with pytest.raises(TypeError, match="expected 4 arguments, got 3"):
        exe(*args[:3])


@pytest.mark.parametrize("text, tile_dims, replicas", [
    ("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", (2, 1), 2),
    ("{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}", (1, 2), 2),
    ("{devices=[2,2]0,2,1,3}", (2, 2), 1),
    ("{replicated}", (1, 1), 4),
    ("{maximal device=1}", (1, 1), 4),          # computed by every device
])
def test_shardings_read_and_written_back(text, tile_dims, replicas):
    from xlac.hlo.sharding import parse_shardings, sharding_text, with_rank
    s = with_rank(parse_shardings(text, 4)[0], 2, 4)
    assert (s.tile_dims, s.replicas) == (tile_dims, replicas)
    assert with_rank(parse_shardings(sharding_text(s), 4)[0], 2, 4) == s


# ---------------------------------------------------------------------------------------
# Loops, gathers and scatters, slicing, convolutions
# ---------------------------------------------------------------------------------------

def _in(module, opcode: str) -> list:
    """The computations (by name) holding instructions of ``opcode``."""
    return sorted({c.name for c in module.computations for i in c.instructions if i.opcode == opcode})


def _while_of(module):
    return next(i for i in module.entry.instructions if i.opcode == "while")


def test_scan_over_layers_gathers_each_layer_inside_the_loop():
    """FSDP: the stacked weights stay split (a [3, 2, 8] tile of [3, 8, 8]),
    the carry stays split by batch, and each layer's weights are
    all-gathered inside the body, one layer at a time."""
    module, _ = _partitioned("scan_fsdp")
    loop = _while_of(module)
    state = [tuple(s.dimensions) for s in loop.shape.tuple_shapes]
    assert state[1] == (2, 8) and state[3] == (3, 2, 8) and state[4] == (3, 2), state
    body = loop.attrs["body"].name
    assert _in(module, "all-gather") == [body]
    gathered = [i for i in loop.attrs["body"].instructions if i.opcode == "all-gather"]
    assert any(tuple(i.shape.dimensions) == (8, 8) for i in gathered)       # one layer, not all three
    assert _in(module, "all-reduce") == [body]                               # the per-layer sum


def test_a_broadcast_takes_its_users_split_not_its_operands():
    """In the FSDP scan, a layer's bias (split 4 ways) is broadcast and added
    to activations split by batch: the 8-vector is all-gathered (24 bytes),
    as XLA does, not the broadcast [8, 8] moved by an all-to-all."""
    module, _ = _partitioned("scan_fsdp")
    assert [(op, b) for _, op, b in sorted(collective_bytes(module), key=lambda c: (c[1], c[2]))] == \
        [("all-gather", 24), ("all-gather", 192), ("all-reduce", 6)]



_DOT_OF_CONSTANT = """HloModule dot_of_constant

ENTRY e {
  x = f32[8,3,3] parameter(0), sharding={devices=[2,1,1]<=[2]}
  c = f32[8,3,3] iota(), iota_dimension=0
  d = f32[8,3,3] dot(x, c), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT t = f32[8,3,3] transpose(d), dimensions={0,2,1}
}
"""


def test_a_dot_of_a_split_value_and_a_constant_stays_split():
    """A dot whose one operand is split and the other has no sharding of its
    own (a constant: jax's residuals in a ``vjp``) is split as the split one
    says, as in XLA's propagation: the result, left to propagation, comes
    back split by batch, with no collective."""
    module = xlac.parse_hlo(_DOT_OF_CONSTANT)
    signature = partition_module(module)
    assert tuple(module.entry.root.shape.dimensions) == (4, 3, 3), signature.results
    assert collective_bytes(module) == []
    x = np.arange(72, dtype=np.float32).reshape(8, 3, 3)
    want = np.swapaxes(x @ np.broadcast_to(np.arange(8, dtype=np.float32)[:, None, None], (8, 3, 3)), 1, 2)
    np.testing.assert_allclose(xlac.jit(_DOT_OF_CONSTANT)(x), want, rtol=1e-6)

_TILE = """module @tile attributes {{mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32}} {{
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<2xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"y"}}]>}}) -> (tensor<8x2xi32>{results}) {{
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<2xi32>) -> tensor<1x2xi32>
    %1 = stablehlo.reshape %0 : (tensor<1x2xi32>) -> tensor<1x1x1x2xi32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x2xi32>) -> tensor<8x1x1x2xi32>
    %3 = stablehlo.reshape %2 : (tensor<8x1x1x2xi32>) -> tensor<8x2xi32>
    %4 = stablehlo.iota dim = 0 : tensor<8x2xi32>
{body}
  }}
}}"""


def test_a_split_reaches_through_a_chain_that_starts_with_broadcasts():
    """``jnp.tile`` of a split vector: its first sweep only defers broadcasts
    (they take their users' split first), and the next sweep carries the
    operand's split through them and the reshapes to the result, as XLA's
    propagation does."""
    module = xlac.parse_stablehlo(_TILE.format(results="", body="    return %3 : tensor<8x2xi32>"))
    signature = partition_module(module)
    assert tuple(module.entry.root.shape.dimensions) == (8, 1), signature.results


def test_a_sharding_group_splits_its_values_alike():
    """``shard_alike``: the ``iota`` (which no rule splits) and the tiled vector
    are one sharding group, so both are split by columns; the group's calls
    are gone from the per-device program, which computes the right values."""
    body = """    sdy.sharding_group %3 group_id=0 : tensor<8x2xi32>
    sdy.sharding_group %4 group_id=0 : tensor<8x2xi32>
    return %3, %4 : tensor<8x2xi32>, tensor<8x2xi32>"""
    text = _TILE.format(results=", tensor<8x2xi32>", body=body)
    module = xlac.parse_stablehlo(text)
    partition_module(module)
    assert [tuple(s.dimensions) for s in module.entry.root.shape.tuple_shapes] == [(8, 1), (8, 1)]
    assert not any(i.opcode == "custom-call" for i in module.entry.instructions)
    x = np.array([5, 7], np.int32)
    got = xlac.jit(text)(x)
    np.testing.assert_array_equal(got[0], np.tile(x, (8, 1)))
    np.testing.assert_array_equal(got[1], np.repeat(np.arange(8, dtype=np.int32)[:, None], 2, 1))
    one = xlac.parse_stablehlo(text.replace("num_partitions = 4", "num_partitions = 1")
                               .replace('["x"=2, "y"=2]', '["x"=1, "y"=1]'))
    np.testing.assert_array_equal(xlac.jit(one)(x)[0], np.tile(x, (8, 1)))


def test_inspect_sharding_is_told_the_partitioned_sharding(monkeypatch):
    """``InspectSharding`` (``jax.debug.inspect_array_sharding``): the hook is
    called with the sharding its operand is partitioned with, and the call's
    value is its operand, partitioned or run whole."""
    from xlac.passes import spmd_partitioner
    text = _TILE.format(results="", body="""    %5 = stablehlo.custom_call @InspectSharding(%3) {backend_config = "", has_side_effect = true} : (tensor<8x2xi32>) -> tensor<8x2xi32>
    %6 = stablehlo.add %5, %4 : tensor<8x2xi32>
    return %6 : tensor<8x2xi32>""")
    seen = []
    monkeypatch.setattr(spmd_partitioner, "inspect_sharding", lambda inst, s: seen.append((inst.opcode, s)))
    module = xlac.parse_stablehlo(text)
    partition_module(module)
    assert [(op, s.tile_dims) for op, s in seen] == [("custom-call", (1, 2))], seen
    monkeypatch.setattr(spmd_partitioner, "inspect_sharding", None)
    x = np.array([5, 7], np.int32)
    want = np.tile(x, (8, 1)) + np.arange(8, dtype=np.int32)[:, None]
    np.testing.assert_array_equal(xlac.jit(text)(x), want)
    np.testing.assert_array_equal(xlac.evaluate(text, x), want)


_UNREDUCED = """module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main() -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = sdy.sharding_constraint %cst <@mesh, [], unreduced={"y"}> : tensor<f32>
    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [], unreduced={"y"}>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%arg0: tensor<f32>) {
      %2 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
      sdy.return %2 : tensor<4x2xf32>
    } : (tensor<f32>) -> tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}"""


_UNREDUCED_PSUM = """module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<4x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}) -> (tensor<4x3xf32>) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}], unreduced={"y"}>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<2x3xf32>) {
      %1 = stablehlo.multiply %arg1, %arg1 : tensor<2x3xf32>
      %2 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %3 = stablehlo.BODY : tensor<2x3xf32>
      sdy.return %3 : tensor<2x3xf32>
    } : (tensor<4x3xf32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
}"""


def test_unreduced_values_are_parts_of_a_sum():
    """jax's ``unreduced`` (each device holds a part of a sum over the axes,
    as the gradient of a ``reduced`` value is): xlac gives the first device
    along them the whole tile and the others zeros, so what jax allows on it
    (linear operations, a psum over the axes) computes the sum; a body that
    reads a part itself (a part returned as a tile, a multiply of two parts:
    ``check_vma=False``) is refused naming it, never computed otherwise."""
    x = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
    np.testing.assert_array_equal(xlac.jit(_UNREDUCED_PSUM.replace("BODY", "negate %2"))(x), -x)
    with pytest.raises(xlac.UnsupportedError, match=r"multiply of a value unreduced over mesh axes \['y'\]"):
        xlac.jit(_UNREDUCED_PSUM.replace("BODY", "negate %1"))
    with pytest.raises(xlac.UnsupportedError, match=r"result 0 of the manual computation .* unreduced over mesh "
                                                    r"axes \['y'\] returned as not unreduced"):
        xlac.jit(_UNREDUCED_PSUM.replace("BODY", "negate %arg1"))
    with pytest.raises(xlac.UnsupportedError, match=r"unreduced over mesh axes \['y'\] returned as not"):
        xlac.jit(_UNREDUCED)


def test_megatron_layers_in_a_scan_and_a_cond_on_split_values():
    module, _ = _partitioned("scan_megatron")
    loop = _while_of(module)
    assert [tuple(s.dimensions) for s in loop.shape.tuple_shapes][2:] == [(2, 6, 2), (2, 2, 6)]
    assert _in(module, "all-reduce") and "all-gather" not in _opcodes(module)
    cond = next(i for i in module.entry.instructions if i.opcode == "conditional")
    assert tuple(cond.shape.dimensions) == (1, 6)                            # the cond on row tiles


def test_embedding_split_by_vocabulary_is_a_masked_local_gather_and_an_all_reduce():
    """A row-split table looked up by replicated ids: each device gathers the
    rows it holds (zeros elsewhere) and an all-reduce adds them; a
    replicated table looked up by split ids is local; the gradient's
    scatter-add into the row-split table is local (updates landing
    elsewhere are skipped)."""
    module, _ = _partitioned("embedding")
    table = module.entry.parameters[0]
    assert tuple(table.shape.dimensions) == (4, 4)
    gathers = [i for i in module.entry.instructions if i.opcode == "gather"]
    assert len(gathers) == 3 and all(tuple(g.operands[0].shape.dimensions) in ((4, 4), (16, 4)) for g in gathers)
    reduced = [i for i in module.entry.instructions if i.opcode == "all-reduce"]
    assert len(reduced) == 2 and all(r.operands[0].opcode == "select" for r in reduced)
    scatter = next(i for i in module.entry.instructions if i.opcode == "scatter")
    assert tuple(scatter.shape.dimensions) == (4, 4)


def test_slicing_ops_run_on_tiles():
    """slice, pad, concatenate, dynamic-(update-)slice along whole
    dimensions and reverse keep the rows split; the iota is made locally
    (no all-gather of it); the slice across the split rows (``x[2:6]``)
    takes a row from each neighbour (two collective-permutes, as XLA)."""
    module, _ = _partitioned("slicing")
    assert _opcodes(module) == ["collective-permute", "collective-permute"]
    for opcode in ("slice", "pad", "concatenate", "dynamic-slice", "dynamic-update-slice", "reverse"):
        insts = [i for i in module.entry.instructions if i.opcode == opcode and i.shape.dimensions[0] == 2]
        assert insts, opcode
    iotas = [i for i in module.entry.instructions if i.opcode == "iota"]
    assert iotas and all(tuple(i.shape.dimensions) != (8,) for i in iotas)


def test_slices_pads_and_reverses_across_split_rows_shift_tiles():
    """A pad, a strided slice, reverses (8 rows and, uneven, 6 rows on 4
    devices) and slices across split rows: each device's rows come from its
    neighbours' (or its mirror's) tiles by collective-permute, nothing is
    gathered, the results stay split by rows."""
    module, signature = _partitioned("shifts")
    assert set(_opcodes(module)) == {"collective-permute"}
    assert all(s.tile_dims[0] == 4 for s, _ in signature.results)
    reverses = [i for i in module.entry.instructions if i.opcode == "reverse"]
    assert len(reverses) == 2 and all(i.shape.dimensions[0] == 2 for i in reverses)


def test_pooling_split_on_a_spatial_dimension_exchanges_halos():
    """A 3x3 max pool (stride 1, SAME) of rows split 4 ways: each tile with
    a row of each neighbour (two collective-permutes, -inf past the ends);
    a 2x2 sum pool of stride 2: within each tile, no communication."""
    module, _ = _partitioned("pooling")
    assert _opcodes(module) == ["collective-permute", "collective-permute"]
    pools = [i for i in module.entry.instructions if i.opcode == "reduce-window"]
    assert sorted(tuple(i.shape.dimensions) for i in pools) == [(2, 1, 3, 3), (2, 2, 6, 3)]


@pytest.mark.parametrize("name, ops", [("conv_batch", []), ("conv_feature", []),
                                       ("conv_spatial", ["collective-permute", "collective-permute"])])
def test_convolutions_split_on_batch_features_and_space(name, ops):
    """Batch or output features split: local; a split spatial dimension:
    each tile extended by its neighbours' edges (two collective-permutes)."""
    module, _ = _partitioned(name)
    assert _opcodes(module) == ops
    conv = next(i for i in module.entry.instructions if i.opcode == "convolution")
    whole = xlac.parse_hlo((CASES / f"{name}.hlo").read_text(encoding="utf-8"))
    full = next(i for c in whole.computations for i in c.instructions if i.opcode == "convolution")
    assert conv.shape.byte_size() * 4 == full.shape.byte_size()


def test_data_parallel_cnn_step_runs_on_tiles_and_all_reduces_only_gradients():
    """Batch split: the max pool's gradient (select-and-scatter) and the
    labels' take_along_axis (a batched gather, its gradient a batched
    scatter) run on each device's tiles; the kernel gradient (a convolution
    contracting over the split batch) and the dense gradient are partial sums
    added by all-reduces, as XLA's program does; nothing is all-gathered."""
    module, _ = _partitioned("cnn_dp_step")
    assert "all-gather" not in _opcodes(module)
    ops = {i.opcode: i for i in module.entry.instructions}
    assert ops["select-and-scatter"].shape.dimensions[0] == 2          # 8 images on 4 devices
    assert tuple(ops["scatter"].shape.dimensions)[0] == 2
    gathers = [i for i in module.entry.instructions if i.opcode == "gather" and
               i.attrs.get("operand_batching_dims")]
    assert gathers and all(i.shape.dimensions[0] == 2 for i in gathers)
    grads = [i for i in module.entry.instructions if i.opcode == "all-reduce" and
             i.operands[0].opcode == "convolution"]
    assert [tuple(i.shape.dimensions) for i in grads] == [(3, 3, 3, 4)]


def test_argmax_across_a_split_dimension_and_sort_along_another():
    """An argmax over the split columns (a variadic reduce): each device's
    (value, index) pair, all-gathered (small) and reduced again; an argmax
    and a sort along the rows, which are not split: local."""
    module, _ = _partitioned("argmax_sort")
    gathered = [i for i in module.entry.instructions if i.opcode == "all-gather"]
    assert sorted(tuple(i.shape.dimensions) for i in gathered) == [(4, 6), (4, 6)]
    sort = next(i for i in module.entry.instructions if i.opcode == "sort")
    assert tuple(sort.shape.dimensions) == (6, 3)


# ---------------------------------------------------------------------------------------
# The GSPMD form; shardings xlac does not read
# ---------------------------------------------------------------------------------------

GSPMD_NAMES = sorted(n for n, c in MANIFEST.items() if c.get("gspmd"))


@pytest.mark.parametrize("suffix", ["hlo", "mlir"])
@pytest.mark.parametrize("name", GSPMD_NAMES)
def test_the_gspmd_form_runs_partitioned(name, suffix):
    """``jax_use_shardy_partitioner=False``: ``sharding=`` (``mhlo.sharding``)
    and no mesh; the devices are the shardings' (jax's HLO text has no
    ``num_partitions``; StableHLO's is dropped for a global program)."""
    args, want = _load(name)
    text = (CASES / f"{name}.gspmd.{suffix}").read_text(encoding="utf-8")
    exe = xlac.jit(text)
    assert type(exe).__name__ == "PartitionedExecutable" and exe.num_devices == MANIFEST[name]["devices"]
    _close(_leaves(exe(*args)), want, name)
    if suffix == "hlo":
        module, signature = _partitioned_text(text)
        for p, (s, shape) in zip(module.entry.parameters, signature.params):
            assert tuple(p.shape.dimensions) == local_dims(s, shape.dimensions), (name, p.name)


def _partitioned_text(text):
    module = xlac.parse_hlo(text)
    signature = partition_module(module)
    assert signature is not None
    return module, signature


def test_xlas_per_device_program_is_not_partitioned_again():
    """``num_partitions`` in the header with shardings: XLA's partitioned
    program, its parameters the tiles (run by SpmdExecutable)."""
    text = """HloModule s, num_partitions=2

ENTRY e {
  x = f32[2,3] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT n = f32[2,3] negate(x), sharding={devices=[2,1]<=[2]}
}
"""
    assert partition_module(xlac.parse_hlo(text)) is None
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(xlac.jit(text)(x), -x)


_SUBAXIS = """HloModule sub, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=4]>}}

ENTRY main {
  x = f32[8,3]{1,0} parameter(0), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"d\\":(1)2}, {}]>"}
  ROOT n = f32[8,3]{1,0} negate(x), sharding={devices=[4,1]<=[4]}
}
"""


def test_a_parameter_sharding_it_cannot_read_is_an_error_naming_it():
    from xlac.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match=r'instruction x: sharding .*"d":\(1\)2.*sub-axis'):
        partition_module(xlac.parse_hlo(_SUBAXIS))
    rank = _SUBAXIS.replace('frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"d\\":(1)2}, {}]>"}',
                            "sharding={devices=[4,1,1]<=[4]}")
    with pytest.raises(UnsupportedError, match=r"instruction x: sharding \{devices=\[4,1,1\]<=\[4\]\}: .*rank 2"):
        partition_module(xlac.parse_hlo(rank))


def test_a_constraint_it_cannot_read_is_a_note_and_constrains_nothing():
    text = """HloModule c, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=4]>}}

ENTRY main {
  x = f32[8,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  c = f32[8,3]{1,0} custom-call(x), custom_call_target="Sharding", sharding={devices=[2,1,2]<=[4] last_tile_dims={manual}}
  ROOT n = f32[8,3]{1,0} negate(c), sharding={devices=[4,1]<=[4]}
}
"""
    module = xlac.parse_hlo(text)
    partition_module(module)
    notes = [d.message for d in module.diagnostics if d.source == "sharding-propagation"]
    assert notes == ["c: sharding {devices=[2,1,2]<=[4] last_tile_dims={manual}} not read, propagated as if it "
                     "had none"]
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    np.testing.assert_array_equal(xlac.jit(text)(x), -x)


_RESULT_THROUGH_CALL = """module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0 = call @f(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @f(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}"""


def test_a_result_sharding_on_a_call_survives_its_inlining():
    """jax returns a jitted function's value through a ``call``: the result's
    sharding written on it stays the result's once the call is inlined (on a
    copy: the value here is the argument, whose own sharding stays)."""
    from xlac.passes.spmd_partitioner import partition_module
    signature = partition_module(xlac.parse_stablehlo(_RESULT_THROUGH_CALL))
    (param, _), = signature.params
    (result, _), = signature.results
    assert param.tile_dims == (2,) and result.is_replicated
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(xlac.jit(_RESULT_THROUGH_CALL)(x), x)


_SCATTER = """module @counts attributes {{mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32}} {{
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<8x1xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}},
                         %arg2: tensor<8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}]>}}) -> (tensor<4xf32>) {{
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %1 = stablehlo.{op} %a, %b : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }}) : (tensor<4xf32>, tensor<8x1xi32>, tensor<8xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }}
}}"""


@pytest.mark.parametrize("op, combine", [("add", np.add), ("maximum", np.maximum)])
def test_a_scatter_with_split_rows_scatters_them_where_they_are_and_all_reduces(op, combine):
    """A scatter whose indices and updates are split by rows (``bincount`` of
    a split vector, a histogram's max) and whose result is replicated: each
    device scatters its own rows (the operand on the first device of each
    group, the combiner's identity on the others) and one all-reduce with
    the combiner makes the result (XLA's index-passthrough partitioning);
    nothing is gathered."""
    text = _SCATTER.format(op=op)
    module = xlac.parse_stablehlo(text)
    partition_module(module)
    opcodes = [i.opcode for i in module.entry.instructions]
    assert "all-gather" not in opcodes and opcodes.count("all-reduce") == 1, opcodes
    scatter = next(i for i in module.entry.instructions if i.opcode == "scatter")
    assert tuple(scatter.operands[1].shape.dimensions) == (4, 1)       # this device's rows
    x = np.array([1, -2, 3, 0.5], np.float32)
    idx = np.array([[0], [3], [3], [1], [3], [0], [2], [3]], np.int32)
    upd = np.arange(8, dtype=np.float32) - 2
    want = x.copy()
    combine.at(want, idx[:, 0], upd)
    np.testing.assert_array_equal(xlac.jit(text)(x, idx, upd), want)


_BATCHED_CHOLESKY = """HloModule batched_cholesky, entry_computation_layout={(f32[4,6,6]{2,1,0})->(f32[4,6,6]{2,1,0}, s32[4]{0})}

ENTRY main {
  a = f32[4,6,6]{2,1,0} parameter(0), sharding={devices=[2,1,1]<=[2]}
  c = (f32[4,6,6]{1,2,0}, s32[4]{0}) custom-call(a), custom_call_target="lapack_spotrf_ffi", operand_layout_constraints={f32[4,6,6]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
  l = f32[4,6,6]{1,2,0} get-tuple-element(c), index=0
  info = s32[4]{0} get-tuple-element(c), index=1
  r = f32[4,6,6]{2,1,0} copy(l)
  ROOT t = (f32[4,6,6]{2,1,0}, s32[4]{0}) tuple(r, info), sharding={{devices=[2,1,1]<=[2]}, {devices=[2]<=[2]}}
}
"""


def test_a_batch_of_lapack_problems_split_on_its_batch_is_solved_where_it_is():
    """jax's LAPACK calls on a batch of matrices split on the batch: each
    device factors its own matrices (every operand and result shares the
    matrix's batch dimensions), nothing is gathered, as XLA partitions
    them."""
    module = xlac.parse_hlo(_BATCHED_CHOLESKY)
    partition_module(module)
    call = next(i for i in module.entry.instructions if i.opcode == "custom-call")
    assert [tuple(s.dimensions) for s in call.shape.tuple_shapes] == [(2, 6, 6), (2,)]
    assert not any(i.opcode in ("all-gather", "all-reduce", "all-to-all") for i in module.entry.instructions)
    rng = np.random.default_rng(5)
    m = rng.standard_normal((4, 6, 6)).astype(np.float32)
    a = m @ m.transpose(0, 2, 1) + 6 * np.eye(6, dtype=np.float32)
    lower, info = xlac.jit(_BATCHED_CHOLESKY)(a)
    np.testing.assert_allclose(np.tril(lower), np.linalg.cholesky(a), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(info, 0)


_PERMUTATION = """HloModule permutation, entry_computation_layout={(s32[8,6]{1,0}, s32[8,6]{1,0})->(s32[8,10]{1,0}, s32[6,8]{1,0})}

keep {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}

ENTRY main {
  p = s32[8,6]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  q = s32[8,6]{1,0} parameter(1), sharding={devices=[2,1]<=[2]}
  iota = s32[10]{0} iota(), iota_dimension=0
  init = s32[8,10]{1,0} broadcast(iota), dimensions={1}
  column = s32[8,1]{1,0} slice(p), slice={[0:8], [2:3]}
  rows = s32[8]{0} reshape(column)
  at = s32[1]{0} constant({3})
  perm = s32[8,10]{1,0} scatter(init, at, rows), update_window_dims={0}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=0, to_apply=keep
  where = s32[6,8,1]{2,1,0} iota(), iota_dimension=0
  picked = s32[6,8]{1,0} gather(q, where), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={1}, index_vector_dim=2, slice_sizes={1,1}
  ROOT t = (s32[8,10]{1,0}, s32[6,8]{1,0}) tuple(perm, picked)
}
"""


def test_a_batch_split_reaches_a_scatter_through_its_updates_and_a_gather_through_its_operand():
    """LU's permutation from its pivots, batched: a scatter into a whole
    operand (a broadcast ``iota``) of updates split on the batch, which its
    window takes whole, is split as its updates (XLA's propagation does the
    same), and a batched gather of a split operand by whole indices (a
    broadcast ``iota``) cuts the indices alike: nothing is gathered."""
    module = xlac.parse_hlo(_PERMUTATION)
    signature = partition_module(module)
    scatter = next(i for i in module.entry.instructions if i.opcode == "scatter")
    gather = next(i for i in module.entry.instructions if i.opcode == "gather")
    assert tuple(scatter.shape.dimensions) == (4, 10) and tuple(gather.shape.dimensions) == (6, 4), \
        (scatter.shape, gather.shape)
    assert not any(i.opcode.startswith("all-") for i in module.entry.instructions), signature.results
    p = np.arange(48, dtype=np.int32).reshape(8, 6)
    q = (np.arange(48, dtype=np.int32) * 7 % 11).reshape(8, 6)
    perm, picked = xlac.jit(_PERMUTATION)(p, q)
    want = np.tile(np.arange(10, dtype=np.int32), (8, 1))
    want[:, 3] = p[:, 2]
    np.testing.assert_array_equal(perm, want)
    np.testing.assert_array_equal(picked, q.T)


_OPEN = """module @open attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                         %arg1: tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<8x8xf32>) {
    %0 = stablehlo.sine %arg0 : tensor<8x2xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {"y"}]> : tensor<8x2xf32>
    %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0] : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {?}], replicated={"y"}> : tensor<8x8xf32>
    return %3 : tensor<8x8xf32>
  }
}"""


def test_open_dimensions_of_a_constraint_take_the_split_propagation_gives():
    """jax's constraints on the values of an ``Auto`` mesh axis are open
    (``{?}``: a partitioner may split them further): a value
    takes the axes its constraint names and its operand's split on the open
    dimensions, so the rows' split by x reaches the dot's result through
    them, as XLA's propagation carries it, and the result comes out split
    by rows."""
    module = xlac.parse_stablehlo(_OPEN)
    signature = partition_module(module)
    assert signature.results[0][0].tile_dims == (2, 1), signature.results
    # Through the constraint that names y and leaves the rows open, the rows stay split.
    dot = next(i for i in module.entry.instructions if i.opcode == "dot")
    assert dot.operands[0].shape.dimensions[0] == 4, dot.operands[0].shape
    a = np.arange(16, dtype=np.float32).reshape(8, 2)
    b = np.arange(16, dtype=np.float32).reshape(2, 8) / 8
    np.testing.assert_allclose(xlac.jit(_OPEN)(a, b), np.sin(a) @ b, rtol=1e-5)
