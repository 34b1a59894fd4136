"""ragged-all-to-all (XLA's RaggedAllToAll, jax's ``lax.ragged_all_to_all``):
slices of the leading dimension sent to the devices of a group and written at
offsets the senders choose — text, shape errors, the replicated evaluator
against hand values, compiled device processes against it, the builder."""
from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.devices import jit as device_jit
from xlac.evaluator_replicated import evaluate_replicated
from xlac.hlo.shape_inference import infer_shape

TEXT = """HloModule r, replica_count=2

ENTRY e {
  x = f32[4,2]{1,0} parameter(0)
  o = f32[5,2]{1,0} parameter(1)
  io = s32[4]{0} parameter(2)
  ss = s32[4]{0} parameter(3)
  oo = s32[4]{0} parameter(4)
  rs = s32[4]{0} parameter(5)
  ROOT r = f32[5,2]{1,0} ragged-all-to-all(x, o, io, ss, oo, rs), replica_groups={{0,1}}
}
"""


def _per_device() -> list:
    """Two devices, two slices for each (N = 4): device 0 sends rows [0,1) and
    [1,2) to itself, [2,4) and nothing to device 1; device 1 sends [3,4) and
    [0,1) to device 0, [1,2) and [2,3) to itself."""
    x = [np.arange(8, dtype=np.float32).reshape(4, 2) + 100 * d for d in range(2)]
    out = [np.full((5, 2), -1, np.float32) for _ in range(2)]
    io = [np.int32([0, 1, 2, 0]), np.int32([3, 0, 1, 2])]
    ss = [np.int32([1, 1, 2, 0]), np.int32([1, 1, 1, 1])]
    oo = [np.int32([0, 1, 3, 4]), np.int32([2, 4, 0, 1])]
    rs = [np.int32([1, 1, 1, 1]), np.int32([2, 0, 1, 1])]
    return [[x[d], out[d], io[d], ss[d], oo[d], rs[d]] for d in range(2)]


WANT = [np.float32([[0, 1], [2, 3], [106, 107], [-1, -1], [100, 101]]),
        np.float32([[102, 103], [104, 105], [-1, -1], [4, 5], [6, 7]])]


def test_text_round_trips():
    printed = xlac.parse_hlo(TEXT).to_text()
    assert "ragged-all-to-all(x, o, io, ss, oo, rs), replica_groups={{0,1}}" in printed
    assert printed == xlac.parse_hlo(printed).to_text()


def test_reference_hand_values():
    got = evaluate_replicated(TEXT, _per_device())
    for d in range(2):
        np.testing.assert_array_equal(got[d], WANT[d])


@pytest.mark.timeout(300)
def test_device_processes_match_the_reference():
    per = _per_device()
    got = device_jit(TEXT)(*[np.stack([p[k] for p in per]) for k in range(6)])
    for d in range(2):
        np.testing.assert_array_equal(got[d], WANT[d])


def test_reference_errors_for_sizes_that_disagree_or_leave_the_arrays():
    per = _per_device()
    per[0][5] = np.int32([1, 2, 1, 1])                   # device 0 expects 2 rows in slot 1, gets 1
    with pytest.raises(Exception, match=r"recv_sizes\[1\] is 2 .* sends 1 rows"):
        evaluate_replicated(TEXT, per)
    per = _per_device()
    per[1][4] = np.int32([2, 4, 0, 4])                   # device 1 sends [2,3) to row 4..5 of device 1: fine
    per[1][3] = np.int32([1, 1, 1, 2])                   # ... now two rows at row 4: past the output
    per[1][5] = np.int32([2, 0, 1, 2])
    with pytest.raises(Exception, match=r"output rows \[4, 6\) of 5"):
        evaluate_replicated(TEXT, per)
    # Compiled code writes only inside the output whatever the offsets.
    got = device_jit(TEXT)(*[np.stack([p[k] for p in per]) for k in range(6)])
    assert got.shape == (2, 5, 2)


@pytest.mark.parametrize("shapes, message", [
    (["f32[4,2]", "f32[5,3]", "s32[4]", "s32[4]", "s32[4]", "s32[4]"], "agree past their leading dimension"),
    (["f32[4,2]", "f32[5,2]", "s32[4]", "s64[4]", "s32[4]", "s32[4]"], "send_sizes s64\\[4\\]\\{0\\} must have the type"),
    (["f32[4,2]", "f32[5,2]", "s32[4]", "s32[4]", "s32[3]", "s32[4]"], "output_offsets s32\\[3\\]\\{0\\} must have"),
    (["f32[4,2]", "f32[5,2]", "f32[4]", "s32[4]", "s32[4]", "s32[4]"], "input_offsets must be an integer vector"),
    (["f32[4,2]", "f32[5,2]", "s32[3]", "s32[3]", "s32[3]", "s32[3]"], "3 offsets must be a multiple of the group"),
])
def test_shape_errors(shapes, message):
    from xlac.hlo.collectives import ReplicaGroups
    with pytest.raises(xlac.ShapeError, match=f"^ragged-all-to-all: .*{message}"):
        infer_shape("ragged-all-to-all", [xlac.shape(s) for s in shapes], {"replica_groups": ReplicaGroups.of([[0, 1]])})


@pytest.mark.timeout(300)
def test_builder():
    b = xlac.XlaBuilder("ra2a")
    params = [ops.parameter(b, k, xlac.shape(s), f"p{k}") for k, s in
              enumerate(["f32[4,2]", "f32[5,2]", "s32[4]", "s32[4]", "s32[4]", "s32[4]"])]
    comp = b.build(ops.ragged_all_to_all(*params, replica_groups=[[0, 1]]))
    assert "ragged-all-to-all(p0, p1, p2, p3, p4, p5), replica_groups={{0,1}}" in comp.as_hlo_text()
    per = _per_device()
    got = device_jit(comp, num_replicas=2)(*[np.stack([p[k] for p in per]) for k in range(6)])
    for d in range(2):
        np.testing.assert_array_equal(got[d], WANT[d])
