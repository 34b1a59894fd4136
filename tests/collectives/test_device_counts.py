"""Device counts (replica_count, num_partitions) are checked in one place
(``xlac.hlo.collectives.check_device_counts``) by every entry point: the HLO
header, StableHLO's ``mhlo.num_replicas``/``mhlo.num_partitions``, an sdy mesh,
``HloModule.replica_count``, ``xlac.jit(num_replicas=)``, ``xlac run
--devices``, ``evaluate_replicated`` and the device pool.  Each count and
their product are from 1 to ``MAX_MODULE_DEVICES`` (1024): 0, -1, 2**63 and
300000000 are a clear error at once (no OverflowError, no minutes spent
making per-device lists)."""
import numpy as np
import pytest

import xlac
from xlac import cli, ops
from xlac.devices import DevicePool
from xlac.errors import HloParseError
from xlac.evaluator_replicated import evaluate_replicated
from xlac.hlo.collectives import MAX_MODULE_DEVICES, DeviceGroupError, check_device_counts
from xlac.hlo.stablehlo import parse_module_text

BAD = ["0", "-1", str(2 ** 63), "300000000", "1025", "1" * 5000]
OUT_OF_RANGE = "out of range: a module runs on 1 to 1024 devices"

HLO = """HloModule m{header}
ENTRY e {{
  x = f32[2]{{0}} parameter(0)
  ROOT r = f32[2]{{0}} negate(x)
}}
"""

STABLEHLO = """module @m attributes {{{attrs}}} {{
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {{
    %0 = stablehlo.negate %arg0 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }}
}}
"""


def test_the_limit():
    assert MAX_MODULE_DEVICES == 1024
    assert check_device_counts(1024, 1) == (1024, 1) and check_device_counts(32, 32) == (32, 32)
    for r, p in ((0, 1), (1, -1), (2 ** 63, 1), (True, 1), (1.0, 1), ("2", 1), (64, 32)):
        with pytest.raises(DeviceGroupError, match="1024"):
            check_device_counts(r, p)
    assert check_device_counts(np.int64(4), 2) == (4, 2)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("key", ["replica_count", "num_partitions"])
@pytest.mark.parametrize("value", BAD)
def test_hlo_header(key, value):
    with pytest.raises(HloParseError, match=f"{key}.*(out of range|digits)"):
        xlac.parse_hlo(HLO.format(header=f", {key}={value}"))


def test_hlo_header_product():
    with pytest.raises(HloParseError, match="replica_count=64 x num_partitions=32 = 2048 devices"):
        xlac.parse_hlo(HLO.format(header=", replica_count=64, num_partitions=32"))
    m = xlac.parse_hlo(HLO.format(header=", replica_count=32, num_partitions=32"))
    assert (m.replica_count, m.num_partitions) == (32, 32)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("key", ["mhlo.num_replicas", "mhlo.num_partitions"])
@pytest.mark.parametrize("value", ["0 : i32", "-1 : i32", f"{2 ** 63} : i64", "300000000 : i32", "1025 : i32",
                                   "true", '"two"', "2.5 : f32"])
def test_stablehlo_attributes(key, value):
    with pytest.raises(HloParseError, match=f"StableHLO: module attribute {key}.*1 to 1024") as info:
        parse_module_text(STABLEHLO.format(attrs=f"{key} = {value}"))
    assert info.value.line == 1 and info.value.column > 1          # at the attribute


def test_stablehlo_counts_are_kept_and_product_checked():
    m = parse_module_text(STABLEHLO.format(attrs="mhlo.num_replicas = 4 : i32, mhlo.num_partitions = 2 : i32"))
    assert (m.replica_count, m.num_partitions) == (4, 2)
    with pytest.raises(HloParseError, match="= 2048 devices"):
        parse_module_text(STABLEHLO.format(attrs="mhlo.num_replicas = 64 : i32, mhlo.num_partitions = 32 : i32"))


def test_module_setters():
    m = xlac.parse_hlo(HLO.format(header=""))
    for value in (0, -1, 2 ** 63, 300000000, True, "3"):
        with pytest.raises(DeviceGroupError, match="replica_count"):
            m.replica_count = value
        with pytest.raises(DeviceGroupError, match="num_partitions"):
            m.num_partitions = value
    m.num_partitions = 32
    with pytest.raises(DeviceGroupError, match="= 2048 devices"):
        m.replica_count = 64
    assert (m.replica_count, m.num_partitions) == (1, 32)
    m.attrs["replica_count"] = 0                      # set behind the setter's back: still refused
    with pytest.raises(DeviceGroupError, match="module m: replica_count=0"):
        m.replica_count


@pytest.mark.timeout(20)
@pytest.mark.parametrize("value", [0, -1, 2 ** 63, 300000000, 1025, True, 2.0])
def test_jit_num_replicas(value):
    b = xlac.XlaBuilder("neg")
    comp = b.build(ops.neg(ops.parameter(b, 0, xlac.shape("f32[2]"), "x")))
    with pytest.raises(ValueError, match="num_replicas.*1 to 1024"):
        xlac.jit(comp, num_replicas=value)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("value", ["0", "-1", str(2 ** 63), "300000000", "1025"])
def test_cli_devices(tmp_path, capsys, value):
    path = tmp_path / "m.hlo"
    path.write_text(HLO.format(header=""), encoding="utf-8")
    assert cli.main(["run", str(path), "--random-inputs", f"--devices={value}"]) == 2     # a usage error
    err = capsys.readouterr().err
    shown = value if len(value) <= 12 else f"{value[:8]}... ({len(value)} digits)"
    assert err == (f"xlac: error: run: argument --devices: must be an integer from 1 to 64 (devices on one "
                   f"host), got {shown} (see 'xlac run --help')\n")


@pytest.mark.timeout(20)
def test_evaluate_replicated_counts():
    text = HLO.format(header="")
    with pytest.raises(ValueError, match="evaluate_replicated: num_replicas=300000000 is out of range"):
        evaluate_replicated(text, [[np.ones(2, np.float32)]], num_replicas=300000000)
    with pytest.raises(ValueError, match="evaluate_replicated: num_replicas=1025 is out of range"):
        evaluate_replicated(text, [[np.ones(2, np.float32)]] * 1025)       # one device per argument list


def test_device_pool_refuses_more_than_its_transport_before_starting():
    with pytest.raises(ValueError, match="at most 64 devices.*got 65; run more under mpiexec"):
        DevicePool(65)


def test_sdy_mesh_sizes():
    from xlac.passes.shard_map import mesh_of
    m = xlac.parse_hlo(HLO.format(header=""))
    for mesh, message in (('"x"=0', 'mesh axis "x"=0 is out of range'),
                          ('"x"=300000000', 'mesh axis "x"=300000000 is out of range'),
                          ('"x"=' + "9" * 30, 'mesh axis "x" has a size of 30 digits'),
                          ('"x"=64, "y"=32', r'device count of #sdy.mesh<\["x"=64, "y"=32\]>=2048 is out of range')):
        m.attrs["frontend_attributes"] = xlac.hlo.ir.Raw("{xla.sdy.meshes={mesh = #sdy.mesh<[" + mesh + "]>}}")
        with pytest.raises(DeviceGroupError, match=message):
            mesh_of(m)


@pytest.mark.timeout(60)
def test_stablehlo_text_with_num_replicas_runs_on_that_many_devices():
    """``xlac.jit`` of StableHLO text reads mhlo.num_replicas as it does an HLO
    header's replica_count (it ran the module on one device)."""
    text = STABLEHLO.format(attrs="mhlo.num_replicas = 2 : i32")
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(xlac.jit(text)(x), -x)
    np.testing.assert_array_equal(xlac.jit(parse_module_text(text))(x), -x)
