"""Which devices a collective talks to (xlac/hlo/collectives.py), against the
cases of XLA's xla/service/collective_ops_utils_test.cc and
xla/hlo/ir/collective_op_group_mode_test.cc.

XLA's tests use a device assignment with arbitrary device numbers (33, 34, ...
for replica r, partition p); xlac numbers devices by XLA's flattened id
``r * num_partitions + p``, so the expected groups are those tests' flattened
id groups (and their device groups mapped to flattened ids).
"""
import pytest

from xlac.hlo.collectives import (DeviceGroupError, GroupMode, ReplicaGroups, device_group, device_groups,
                                  device_pairs, group_mode, group_mode_of, participating_device_groups,
                                  participating_devices)
from xlac.hlo.ir import HloInstruction
from xlac.shape import Shape, F32

CR, CP, CRP, FID = (GroupMode.CROSS_REPLICA, GroupMode.CROSS_PARTITION, GroupMode.CROSS_REPLICA_AND_PARTITION,
                    GroupMode.FLATTENED_ID)


@pytest.mark.parametrize("has_channel, ugdi, expected", [
    (False, None, CR), (False, False, CR), (False, True, None),
    (True, None, CP), (True, False, CRP), (True, True, FID),
])
def test_group_mode(has_channel, ugdi, expected):
    if expected is None:
        with pytest.raises(DeviceGroupError, match="needs a channel_id"):
            group_mode(has_channel, ugdi)
    else:
        assert group_mode(has_channel, ugdi) is expected
    assert str(CRP) == "kCrossReplicaAndPartition"


def inst(opcode, **attrs):
    return HloInstruction(opcode, Shape(F32, (2,)), [], attrs, name=f"{opcode}.1")


@pytest.mark.parametrize("opcode, channel, ugdi, expected", [
    # GetCollectOpGroupModeForInstruction: all-gather and all-reduce have a
    # use_global_device_ids flag (false when not printed), all-to-all and
    # collective-permute have none.
    ("all-gather", True, True, FID), ("all-gather", True, False, CRP), ("all-gather", False, False, CR),
    ("all-reduce", True, True, FID), ("all-reduce", True, False, CRP), ("all-reduce", False, False, CR),
    ("reduce-scatter", True, None, CRP), ("all-reduce-start", True, None, CRP),
    ("all-to-all", True, None, CP), ("all-to-all", False, None, CR),
    ("collective-permute", True, None, CP), ("collective-permute", False, None, CR),
])
def test_group_mode_of_instruction(opcode, channel, ugdi, expected):
    attrs = {}
    if channel:
        attrs["channel_id"] = 1
    if ugdi is not None:
        attrs["use_global_device_ids"] = ugdi
    assert group_mode_of(inst(opcode, **attrs)) is expected


# (replicas, partitions, replica groups, mode, {device: participants}, device groups in XLA's order)
CASES = [
    # cross replica: empty groups, 1 partition
    (3, 1, [], CR, {0: (0, 1, 2), 1: (0, 1, 2)}, [(0, 1, 2)]),
    # cross replica: empty groups, 2 partitions: all replicas of the partition
    (3, 2, [], CR, {0: (0, 2, 4), 1: (1, 3, 5), 3: (1, 3, 5)}, [(0, 2, 4), (1, 3, 5)]),
    # cross replica: groups, 1 partition
    (3, 1, [[0], [1, 2]], CR, {0: (0,), 1: (1, 2)}, [(0,), (1, 2)]),
    # cross replica: groups, 2 partitions
    (3, 2, [[0], [1, 2]], CR, {0: (0,), 1: (1,), 3: (3, 5)}, [(0,), (1,), (2, 4), (3, 5)]),
    # cross partition: 3 replicas x 4 partitions, groups of partition ids
    (3, 4, [[0, 1], [2, 3]], CP, {0: (0, 1), 2: (2, 3), 5: (4, 5), 7: (6, 7), 11: (10, 11)},
     [(0, 1), (4, 5), (8, 9), (2, 3), (6, 7), (10, 11)]),
    # cross replica and partition: replica groups, every partition of those replicas
    (3, 2, [[0], [1, 2]], CRP, {0: (0, 1), 1: (0, 1), 3: (2, 3, 4, 5)}, [(0, 1), (2, 3, 4, 5)]),
    (3, 2, [], CRP, {0: (0, 1, 2, 3, 4, 5), 1: (0, 1, 2, 3, 4, 5), 5: (0, 1, 2, 3, 4, 5)},
     [(0, 1, 2, 3, 4, 5)]),
    # flattened ids
    (3, 2, [[0], [1, 2], [3, 4, 5]], FID,
     {0: (0,), 1: (1, 2), 2: (1, 2), 3: (3, 4, 5), 4: (3, 4, 5), 5: (3, 4, 5)},
     [(0,), (1, 2), (3, 4, 5)]),
]


@pytest.mark.parametrize("replicas, partitions, groups, mode, subtests, all_groups", CASES)
def test_participating_devices(replicas, partitions, groups, mode, subtests, all_groups):
    for device, expected in subtests.items():
        assert participating_devices(device, groups, mode, replicas, partitions) == expected
    assert participating_device_groups(groups, mode, replicas, partitions) == all_groups


def test_cross_replica_cases_hold_without_use_global_device_ids_too():
    # XLA runs its cross-replica cases a second time with the flag absent.
    for replicas, partitions, groups, mode, subtests, all_groups in CASES:
        if mode is CR:
            m = group_mode(False, None)
            assert participating_device_groups(groups, m, replicas, partitions) == all_groups


def test_flattened_id_mode_needs_groups():
    with pytest.raises(DeviceGroupError, match="cannot be empty"):
        participating_devices(0, [], FID, 1, 1)
    with pytest.raises(DeviceGroupError, match="cannot be empty"):
        participating_device_groups([], FID, 1, 1)


def test_participant_errors():
    with pytest.raises(DeviceGroupError, match="replica 3 .* is in none of the replica groups"):
        participating_devices(3, [[0, 1], [2]], CR, 4)
    with pytest.raises(DeviceGroupError, match="appears twice"):
        participating_devices(1, [[0, 1], [1, 2]], CR, 3)
    with pytest.raises(DeviceGroupError, match="names replica 1, but the module runs 1 replica"):
        participating_devices(0, [[0, 1]], CR, 1)
    with pytest.raises(DeviceGroupError, match="name partition 2"):
        participating_device_groups([[0, 2]], CP, 2, 2)
    with pytest.raises(DeviceGroupError, match="device 4 is not one of 2 replica"):
        participating_devices(4, [], CR, 2, 2)


def test_instruction_groups_and_iota_groups():
    ar = inst("all-reduce", channel_id=1, use_global_device_ids=True,
              replica_groups=ReplicaGroups.parse("[2,2]<=[2,2]T(1,0)"))
    assert device_groups(ar, 1, 4) == [(0, 2), (1, 3)]
    assert device_group(ar, 3, 1, 4) == (1, 3)
    ag = inst("all-gather", replica_groups=ReplicaGroups.of([[0, 2], [1, 3]]))
    assert device_groups(ag, 4, 1) == [(0, 2), (1, 3)]
    assert device_groups(ag, 4, 2) == [(0, 4), (1, 5), (2, 6), (3, 7)]


def test_permute_pairs():
    cp = inst("collective-permute", source_target_pairs=((0, 1), (1, 2)))
    assert device_pairs(cp, 3, 1) == [(0, 1), (1, 2)]
    # cross replica: the same pairs in every partition
    assert device_pairs(cp, 3, 2) == [(0, 2), (2, 4), (1, 3), (3, 5)]
    # with a channel_id: partitions of every replica
    cp_p = inst("collective-permute", channel_id=1, source_target_pairs=((0, 1), (1, 0)))
    assert device_pairs(cp_p, 2, 2) == [(0, 1), (1, 0), (2, 3), (3, 2)]
    with pytest.raises(DeviceGroupError, match="target 1 appears more than once"):
        device_pairs(inst("collective-permute", source_target_pairs=((0, 1), (2, 1))), 3, 1)
    with pytest.raises(DeviceGroupError, match="names replica 3"):
        device_pairs(inst("collective-permute", source_target_pairs=((0, 3),)), 2, 1)
