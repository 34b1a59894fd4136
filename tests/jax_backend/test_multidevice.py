"""Programs on several devices through the plugin's executable, without jax
(xlac/pjrt/multidevice.py, xlac/pjrt/sharding.py): shardings read from the
program, tiles put together and cut apart, the OpSharding protos jax reads."""
import numpy as np
import pytest

import xlac
from xlac.pjrt.buffer import Buffer
from xlac.pjrt.client import Client
from xlac.pjrt.compile_options import CompileOptions
from xlac.pjrt.executable import Executable
from xlac.pjrt.program import Program
from xlac.pjrt.sharding import entry_shardings, op_sharding_proto

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2]>'


def sharded(arg: str, result: str, body: str = "%0 = stablehlo.multiply %arg0, %arg0 : tensor<4x8xf32>",
            result_attrs: str | None = None) -> str:
    res = result_attrs if result_attrs is not None else f"{{sdy.sharding = #sdy.sharding<@mesh, {result}>}}"
    return f"""module @m attributes {{mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32}} {{
  {MESH}
  func.func public @main(%arg0: tensor<4x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, {arg}>}}) -> (tensor<4x8xf32> {res}) {{
    {body}
    return %0 : tensor<4x8xf32>
  }}
}}"""


def test_shardings_of_arguments_and_results():
    params, results, annotated = entry_shardings(sharded('[{"x"}, {"y"}]', '[{}, {"y", "x"}]'), 4)
    assert annotated
    # devices [[0, 1], [2, 3]] of mesh x=2, y=2: row tiles by x, column tiles by y
    assert (params[0].tile_dims, params[0].devices, params[0].replicas) == ((2, 2), (0, 1, 2, 3), 1)
    # columns split over y then x: tile k on device (x, y) with k = 2 * y + x
    assert (results[0].tile_dims, results[0].devices) == ((1, 4), (0, 2, 1, 3))
    p, _, _ = entry_shardings(sharded('[{"y", ?}p1, {?}]', "[{}, {}]"), 4)      # open, priority
    assert (p[0].tile_dims, p[0].devices, p[0].replicas) == ((2, 1), (0, 2, 1, 3), 2)


def test_a_result_takes_the_sharding_it_was_made_with():
    """No annotation on the result: the sharding_constraint (or shard_map's
    out_shardings) it comes from; replicated when nothing says one."""
    body = '%0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"x"}]> : tensor<4x8xf32>'
    _, results, _ = entry_shardings(sharded('[{"x"}, {}]', "", body, result_attrs=""), 4)
    assert (results[0].tile_dims, results[0].devices, results[0].replicas) == ((1, 2), (0, 1, 2, 3), 2)
    _, results, _ = entry_shardings(sharded('[{"x"}, {}]', "", result_attrs=""), 4)
    assert results[0].is_replicated
    # ... also through the call jax wraps a jitted function's body in.
    called = sharded('[{"x"}, {}]', "", "%0 = call @f(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>",
                     result_attrs="").replace("\n}", """
  func.func private @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = sdy.sharding_constraint %a <@mesh, [{}, {"y"}]> : tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}""")
    _, results, _ = entry_shardings(called, 4)
    assert (results[0].tile_dims, results[0].replicas) == ((1, 2), 2), results[0]


@pytest.mark.parametrize("arg, says", [
    ('[{"x":(1)2}, {}]', 'sub-axis "x":(1)2'),
    ('[{"x"}, {}], unreduced={"z"}', "unreduced over axes not in the mesh"),
    ('[{"z"}, {}]', 'axis "z" is not in the mesh'),
])
def test_forms_xlac_does_not_run_are_refused_by_name(arg, says):
    with pytest.raises(xlac.UnsupportedError, match="not supported yet: sharding .parameter 0: .*" + says.replace(
            "(", r"\(").replace(")", r"\)")):
        entry_shardings(sharded(arg, "[{}, {}]").replace("tensor<4x8", "tensor<3x8"), 4)


def test_an_uneven_split_is_read_with_tiles_as_xla_cuts_them():
    """3 rows over 4 devices: tiles of ceil(3/4) = 1 row, the last empty."""
    from xlac.pjrt.sharding import local_shape
    params, _, _ = entry_shardings(sharded('[{"x", "y"}, {}]', "[{}, {}]").replace("tensor<4x8", "tensor<3x8"), 4)
    assert params[0].tile_dims == (4, 1)
    assert [local_shape(params[0], (3, 8), d) for d in range(4)] == [(1, 8), (1, 8), (1, 8), (0, 8)]


def test_gspmd_shardings_and_refusals():
    text = sharded("[{}, {}]", "[{}, {}]").replace('sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>',
                                                   'mhlo.sharding = "{devices=[1,2,2]<=[4] last_tile_dim_replicate}"')
    params, _, _ = entry_shardings(text, 4)
    assert (params[0].tile_dims, params[0].replicas) == ((1, 2), 2)
    for form in ("{maximal device=1}", "{manual}"):
        with pytest.raises(xlac.UnsupportedError, match="parameter 0"):
            entry_shardings(text.replace("{devices=[1,2,2]<=[4] last_tile_dim_replicate}", form), 4)


def test_op_sharding_protos_are_xlas_encoding():
    """Bytes of xla.OpSharding as jaxlib serialises them (checked once against
    ``xc.OpSharding().SerializeToString()``)."""
    params, results, _ = entry_shardings(sharded('[{"y"}, {}]', "[{}, {}]"), 4)
    # {devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}
    assert op_sharding_proto(params[0]).hex() == "08031a030201022204000201033001"
    assert op_sharding_proto(results[0]) == b"\x08\x00"                                    # REPLICATED


def test_unreduced_values_are_parts_of_a_sum():
    """``unreduced={"y"}``: devices that differ only in y hold parts whose sum
    is the tile; the global value of an argument is that sum, and a result's
    parts are the tile on the first device along y and zeros on the other."""
    params, _, _ = entry_shardings(sharded('[{"x"}, {}], unreduced={"y"}', "[{}, {}]"), 4)
    s = params[0]
    assert (s.tile_dims, s.replicas, s.parts) == ((2, 1), 2, (0, 1, 0, 1))
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    parts = [x[:2] * 0.25, x[:2] * 0.75, x[2:] - 1, np.ones((2, 8), np.float32)]   # devices (x, y) = divmod(d, 2)
    np.testing.assert_array_equal(s.assemble_sum(parts, (4, 8)), x)
    assert [s.tile(x, d).tolist() for d in range(4)] == [x[:2].tolist(), np.zeros((2, 8)).tolist(),
                                                         x[2:].tolist(), np.zeros((2, 8)).tolist()]
    # As jaxlib encodes NamedSharding(mesh, P("x", None, unreduced={"y"})): {devices=[2,1,2]<=[4]
    # last_tile_dims={unreduced}}, here with the device list written out.
    assert op_sharding_proto(s).hex() == "08031a03020102220400010203420106"
    # Unreduced over x, replicated over y: {devices=[1,1,2,2]<=[4] last_tile_dims={unreduced, replicated}}.
    params, _, _ = entry_shardings(sharded('[{}, {}], unreduced={"x"}', "[{}, {}]"), 4)
    assert params[0].parts == (0, 0, 1, 1)
    assert op_sharding_proto(params[0]).hex() == "08031a0401010202220400010203420206" + "00"
    params, _, _ = entry_shardings(sharded('[{}, {}], unreduced={"x", "y"}', "[{}, {}]"), 4)
    assert op_sharding_proto(params[0]) == b"\x08\x06"                                  # {unreduced}


@pytest.mark.timeout(120)
def test_an_unreduced_argument_and_result_through_the_executable():
    """Parts in, the sum computed with, parts out (automatic sharding)."""
    text = sharded('[{"x"}, {}], unreduced={"y"}', '[{}, {}], unreduced={"x"}')
    _, exe = _executable(text, 1, 4)
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    parts = [x[:2] - 1, np.ones((2, 8), np.float32), x[2:] * 0.5, x[2:] * 0.5]
    out = [o[0].array for o in exe.execute_devices([[Buffer(p, d)] for p, d in zip(parts, exe.devices)], set())]
    np.testing.assert_array_equal(out[0] + out[2], x * x)                      # the parts along x sum to it
    np.testing.assert_array_equal(out[1], out[0])                              # replicated over y
    np.testing.assert_array_equal(out[2], np.zeros_like(x))


_PARTS = """module @m attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}, %arg2: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}) -> (tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}, tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}], unreduced={"y"}>] manual_axes={"x", "y"} (%a: tensor<1x2xf32>, %b: tensor<2x2xf32>) {
      %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
      sdy.return %1 : tensor<1x2xf32>
    } : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
    %2 = sdy.manual_computation(%arg2) in_shardings=[<@mesh, [{"x"}, {}], unreduced={"y"}>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%c: tensor<1x2xf32>) {
      sdy.return %c : tensor<1x2xf32>
    } : (tensor<2x2xf32>) -> tensor<2x4xf32>
    return %0, %2 : tensor<2x2xf32>, tensor<2x4xf32>
  }
}"""


@pytest.mark.timeout(120)
def test_a_shard_map_takes_and_gives_each_devices_own_part():
    """Unreduced values in and out of manual computations are each device's
    own part, exactly (as jax's buffers hold them): partial products out,
    parts passed on as tiles (``check_vma=False``) in."""
    _, exe = _executable(_PARTS, 1, 4)
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    b = np.arange(8, dtype=np.float32).reshape(4, 2) - 3
    parts = [np.full((1, 2), 10 * d + 1, np.float32) for d in range(4)]        # device d = (x, y) = divmod(d, 2)
    args = []
    for d, device in enumerate(exe.devices):
        x, y = divmod(d, 2)
        args.append([Buffer(a[x:x + 1, 2 * y:2 * y + 2].copy(), device), Buffer(b[2 * y:2 * y + 2].copy(), device),
                     Buffer(parts[d], device)])
    out = exe.execute_devices(args, set())
    for d in range(4):
        x, y = divmod(d, 2)
        np.testing.assert_array_equal(out[d][0].array, a[x:x + 1, 2 * y:2 * y + 2] @ b[2 * y:2 * y + 2])
        np.testing.assert_array_equal(out[d][1].array, parts[d])


def _executable(text: str, replicas: int, partitions: int) -> tuple:
    client = Client({"num_devices": replicas * partitions})
    options = CompileOptions(replicas, partitions, tuple(range(replicas * partitions)))
    return client, Executable(client, Program(text, ()), options)


@pytest.mark.timeout(120)
def test_a_sharded_program_takes_and_gives_tiles():
    """Automatic sharding (no shard_map): partitioned, each device process
    computing its tiles; each device gets its tile of the result."""
    text = sharded('[{"x"}, {"y"}]', '[{}, {"y", "x"}]')
    client, exe = _executable(text, 1, 4)
    assert type(exe.compiled).__name__ == "PartitionedExecutable"
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    tiles = [x[:2, :4], x[:2, 4:], x[2:, :4], x[2:, 4:]]            # device d = (x, y) = divmod(d, 2)
    out = exe.execute_devices([[Buffer(np.ascontiguousarray(t), d)] for t, d in zip(tiles, exe.devices)], set())
    assert [o[0].device for o in out] == client.devices
    for d, k in enumerate((0, 2, 1, 3)):                 # columns over y then x: device d holds tile k
        np.testing.assert_array_equal(out[d][0].array, (x * x)[:, 2 * k:2 * k + 2])
    with pytest.raises(Exception, match=r"parameter 0 on device 0: expected a tile of shape \[2, 4\] "
                                        r"\(global \[4, 8\]\), got \[4, 8\]"):
        exe.execute_devices([[Buffer(x, d)] for d in exe.devices], set())


def test_buffers_passed_again_are_read_as_they_are():
    """The device processes keep the buffers they were given last (a buffer
    never changes while it lives): the same buffers again give the same
    tiles, new buffers of the same shapes at the same places their own."""
    text = sharded('[{"x"}, {"y"}]', '[{}, {"y", "x"}]')
    client, exe = _executable(text, 1, 4)

    def buffers(x):
        return [[Buffer(np.ascontiguousarray(t), d)] for t, d in
                zip((x[:2, :4], x[:2, 4:], x[2:, :4], x[2:, 4:]), exe.devices)]

    def run(args):
        out = exe.execute_devices(args, set())
        return np.concatenate([out[d][0].array for d in (0, 2, 1, 3)], axis=1)
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    first = buffers(x)
    for _ in range(2):
        np.testing.assert_array_equal(run(first), x * x)
    np.testing.assert_array_equal(run(buffers(x + 1)), (x + 1) * (x + 1))
    np.testing.assert_array_equal(run(first), x * x)


PER_REPLICA = """module @r attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}"""


@pytest.mark.timeout(120)
def test_a_per_replica_program_runs_on_the_device_processes():
    """num_replicas = 2, no shardings: each device its own arguments, an all-reduce between them."""
    client, exe = _executable(PER_REPLICA, 2, 1)
    args = [np.array([1, 2, 3], np.float32), np.array([10, 20, 30], np.float32)]
    out = exe.execute_devices([[Buffer(a, d)] for a, d in zip(args, exe.devices)], set())
    for d, device in enumerate(exe.devices):
        assert out[d][0].device is device
        np.testing.assert_array_equal(out[d][0].array, [11, 22, 33])


def test_donors_are_consumed_where_a_result_can_take_their_tiles():
    """XLA's buffer donors (its OptimizeInputOutputBufferAlias): each goes to
    the first result not taken yet whose tile on a device has the donor's
    size (a result of unwritten sharding: the donor's whole size); one with
    none stays the caller's."""
    from xlac.pjrt.program import _donated, _tile_bytes
    axes = {"x": 2}
    shard = {"sdy.sharding": '#sdy.sharding<@mesh, [{"x"}, {}]>'}
    assert _tile_bytes("tensor<16x1xi32>", shard, axes) == (64, 32)
    assert _tile_bytes("tensor<4xf32>", {}, axes) == (16, None)
    donor = {"jax.buffer_donor": True, **shard}
    args = [donor, donor, {"tf.aliasing_output": "0 : i32"}]
    arg_bytes = [_tile_bytes("tensor<8x2xf32>", shard, axes), _tile_bytes("tensor<16x1xi32>", shard, axes), None]
    # Result 0 is aliased; 1 (8x8) fits neither donor; 2's tiles are 32 bytes as both donors' are:
    # the first donor takes it (XLA:CPU matches sizes, whatever the element type), the second stays.
    result_bytes = [(64, 32), _tile_bytes("tensor<8x8xf32>", shard, axes),
                    _tile_bytes("tensor<2x8xi32>", {"sdy.sharding": '#sdy.sharding<@mesh, [{}, {"x"}]>'}, axes)]
    assert _donated(args, arg_bytes, result_bytes) == (0, 2)


def test_a_mesh_of_devices_in_another_order():
    """``device_ids=[3, 2, 1, 0]``: the device at each mesh position holds
    that position's tile (and part)."""
    text = sharded('[{"x"}, {}], unreduced={"y"}', "[{}, {}]").replace(
        MESH, 'sdy.mesh @mesh = <["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>')
    params, _, _ = entry_shardings(text, 4)
    s = params[0]
    assert [s.tile_index(d) for d in range(4)] == [(1, 0), (1, 0), (0, 0), (0, 0)]
    assert s.parts == (1, 0, 1, 0)          # device 3 is at (0, 0), device 2 at (0, 1), ...
