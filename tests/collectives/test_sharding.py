"""HLO shardings (``xlac/hlo/sharding.py``), Shardy value shardings
(``passes/shard_map.sdy_to_sharding``) and the stack-frame tables XLA prints
in compiled modules."""
from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.hlo.sharding import parse_sharding
from xlac.passes.shard_map import sdy_to_sharding


@pytest.mark.parametrize("text, tiles, replicas", [
    ("{replicated}", (1,), 4),
    ("{devices=[4,1]<=[4]}", (4, 1), 1),
    ("{devices=[2,2]<=[4]}", (2, 2), 1),
    ("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", (2, 1), 2),
    ("{devices=[2,2]<=[2,2]T(1,0)}", (2, 2), 1),
    ("{devices=[2,2]0,2,1,3}", (2, 2), 1),
])
def test_tiles_put_back_together(text, tiles, replicas):
    s = parse_sharding(text, 4)
    assert s.tile_dims == tiles and s.replicas == replicas
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    np.testing.assert_array_equal(s.assemble([s.tile(x, d) for d in range(4)]), x)


def test_transposed_iota_and_explicit_lists_agree():
    a, b = parse_sharding("{devices=[2,2]<=[2,2]T(1,0)}", 4), parse_sharding("{devices=[2,2]0,2,1,3}", 4)
    assert a.devices == b.devices == (0, 2, 1, 3)
    assert a.tile_index(2) == (0, 1)


def test_unknown_forms_are_refused_by_name():
    with pytest.raises(xlac.UnsupportedError, match="sharding"):
        parse_sharding("{devices=[2,2]<=[4] last_tile_dims={manual}}", 4)


def test_shardy_value_shardings_on_a_2d_mesh():
    mesh = {"a": 2, "b": 2}
    rows = sdy_to_sharding([["a"], []], mesh)          # rows split by a, replicated over b
    assert rows.tile_dims == (2, 1) and rows.replicas == 2 and rows.tile_index(3) == (1, 0)
    both = sdy_to_sharding([["a"], ["b"]], mesh)
    assert [both.tile_index(d) for d in range(4)] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    joint = sdy_to_sharding([["b", "a"]], mesh)        # b major: device (a=1, b=0) holds tile 1
    assert joint.tile_index(2) == (1,)


def test_compiled_modules_with_stack_frame_tables_parse():
    text = """HloModule m, is_scheduled=true, num_partitions=2

FileNames
1 "/tmp/x.py"

FunctionNames
1 "<module>"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=1}


ENTRY %e (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0), sharding={devices=[2]<=[2]}
  ROOT %n = f32[2]{0} negate(%p)
}
"""
    m = xlac.parse_hlo(text)
    assert m.num_partitions == 2 and m.entry.root.opcode == "negate"
    out = xlac.jit(text)(np.float32([1, 2, 3, 4]))      # global argument, per-device results
    np.testing.assert_array_equal(out, [[-1, -2], [-3, -4]])
