"""Which devices a collective talks to: replica groups, group modes, device groups.

Shared by every stage that runs or compiles collectives (the shape rules, the
multi-device evaluator, the code generator and its transports), so they all
resolve an instruction's participants the same way, XLA's way
(``xla/service/collective_ops_utils.cc``).

Devices
    A module runs on ``num_replicas x num_partitions`` devices; the global
    device id of (replica ``r``, partition ``p``) is ``r * num_partitions + p``
    (XLA's *flattened id*, which is also what xlac numbers devices by).
    :func:`device_counts` reads ``replica_count=`` / ``num_partitions=`` from
    a module's header (1 when absent).  Each count, and their product, is at
    least 1 and at most :data:`MAX_MODULE_DEVICES` (1024):
    :func:`check_device_counts` is the one check every entry point uses (the
    HLO and StableHLO parsers, ``HloModule.replica_count``, ``xlac.jit``'s
    ``num_replicas=``, the command line's ``--devices``, the evaluator).

Replica groups (:class:`ReplicaGroups`, attribute ``replica_groups=``)
    The list form ``{{0,1},{2,3}}`` (``{}``: one group of everybody), or the
    iota form ``[G,S]<=[d0,d1,...]`` / ``[G,S]<=[d0,d1,...]T(perm)``: ``G``
    groups of ``S`` ids made by laying ``iota(d0*d1*...)`` out with shape
    ``[d0,d1,...]``, transposing it by ``perm`` and reading it row by row
    (``xla/hlo/ir/tile_assignment.cc``).  The form that was read is the form
    printed back.  XLA's mesh-axes form ``mesh['a'=2,'b'=2] {'b'}`` (with
    ``, device_ids=(...)`` after the mesh when its devices are not in order,
    and sub-axes ``'a':(1)2``) is read by :func:`mesh_axes_groups` into the
    list form (``xla/hlo/ir/replica_group.cc``: a group of each set of devices
    that differ only in the named axes).

Group modes (:class:`GroupMode`, :func:`group_mode`)
    What the ids in the groups mean, from whether the instruction has a
    ``channel_id`` and its ``use_global_device_ids`` (which only all-reduce,
    all-gather and reduce-scatter have; a missing one is false there and
    "absent" for all-to-all and collective-permute):

    ====================  ============================  ===============================
    channel_id            use_global_device_ids         mode: the ids are ...
    ====================  ============================  ===============================
    no                    absent or false               CROSS_REPLICA: replica ids; a
                                                        group per partition
    yes                   absent (all-to-all, permute)  CROSS_PARTITION: partition ids;
                                                        a group per replica
    yes                   false                         CROSS_REPLICA_AND_PARTITION:
                                                        replica ids; every partition
                                                        of those replicas
    yes                   true                          FLATTENED_ID: global device ids
    no                    true                          an error
    ====================  ============================  ===============================

    An empty ``replica_groups`` is one group of all replicas (all partitions in
    CROSS_PARTITION mode); FLATTENED_ID mode needs explicit groups.

For an instruction and the device counts
    :func:`device_groups` — every group of global device ids (what a compiled
    collective needs; XLA's GetParticipatingDevicesGroups);
    :func:`device_group` — the group of one device, in group order (XLA's
    GetParticipatingDevices); :func:`device_pairs` — the (source, target)
    device pairs of a collective-permute (its ``source_target_pairs`` name
    replicas, or partitions with a ``channel_id``) or of a send/recv (the
    ``_xla_send_recv_source_target_pairs`` frontend attribute: replica ids when
    the module has several replicas, else partition ids).  The same from the
    raw groups and a mode: :func:`participating_device_groups`,
    :func:`participating_devices`.

Errors are :class:`DeviceGroupError` (a ``ValueError``) naming the instruction
(when one is given), the groups and the rule.
"""
from __future__ import annotations

import enum
import functools
import math
import numbers
import operator
import re
from dataclasses import dataclass

import numpy as np

__all__ = ["ReplicaGroups", "IotaGroups", "GroupMode", "DeviceGroupError", "group_mode", "group_mode_of",
           "participating_devices", "participating_device_groups", "device_group", "device_groups",
           "device_pairs", "permute_scope", "send_recv_pairs", "source_target_pairs_of", "frontend_attributes",
           "parse_pairs", "format_pairs", "device_counts", "replica_groups_of", "check_replica_groups",
           "check_source_target_pairs", "known_group_size", "GROUPED_OPCODES", "PERMUTE_OPCODES",
           "SEND_RECV_OPCODES", "HAS_GLOBAL_DEVICE_IDS", "SEND_RECV_PAIRS_ATTRIBUTE", "MAX_DEVICES",
           "MAX_MODULE_DEVICES", "check_device_count", "check_device_counts", "all_to_all_regroup",
           "mesh_axes_groups"]

#: The most devices a replica group list may expand to (the iota form can name
#: huge ones in a few characters; expanding them would exhaust memory).
MAX_DEVICES = 1 << 16

#: The most devices one module runs on (``replica_count x num_partitions``).
#: One host's device pool runs at most 64 (``xlac.runtime.shm_transport``:
#: groups are 64-bit masks); under mpiexec a device is a rank, and every rank
#: holds each per-replica argument and result whole (one entry per device).
#: 1024 is far above either, and small enough that what is made per device
#: (argument lists, the evaluator's threads, expanded groups) stays cheap;
#: checked before anything is.
MAX_MODULE_DEVICES = 1024

#: Collectives whose participants come from ``replica_groups``.
GROUPED_OPCODES = frozenset({"all-reduce", "all-reduce-start", "all-gather", "all-gather-start",
                             "reduce-scatter", "all-to-all", "collective-broadcast", "ragged-all-to-all"})
#: Collectives whose participants come from ``source_target_pairs``.
PERMUTE_OPCODES = frozenset({"collective-permute", "collective-permute-start"})
#: Point-to-point transfers, paired by ``channel_id`` (and the frontend attribute below).
SEND_RECV_OPCODES = frozenset({"send", "send-done", "recv", "recv-done"})
#: The opcodes that have a ``use_global_device_ids`` flag (false when not printed).
HAS_GLOBAL_DEVICE_IDS = frozenset({"all-reduce", "all-reduce-start", "all-gather", "all-gather-start",
                                   "reduce-scatter"})
#: The frontend attribute XLA puts the (source, target) pairs of a send/recv in.
SEND_RECV_PAIRS_ATTRIBUTE = "_xla_send_recv_source_target_pairs"


class DeviceGroupError(ValueError):
    """Replica groups, source-target pairs or device counts that do not make sense."""


# ----------------------------------------------------------------------------
# Replica groups
# ----------------------------------------------------------------------------

@dataclass(frozen=True)
class IotaGroups:
    """The iota form ``[num_groups,group_size]<=[reshape_dims]T(transpose)``."""

    num_groups: int
    group_size: int
    reshape_dims: tuple
    transpose: tuple | None = None      # None: written without T(...)

    def __post_init__(self):
        dims, perm = self.reshape_dims, self.transpose
        if self.num_groups < 0 or self.group_size < 0 or any(d < 0 for d in dims):
            raise DeviceGroupError(f"iota replica groups {self}: sizes must be >= 0")
        if not dims:
            raise DeviceGroupError(f"iota replica groups {self}: the reshape dimensions are empty")
        if math.prod(dims) != self.num_groups * self.group_size:
            raise DeviceGroupError(
                f"iota replica groups {self}: {self.num_groups} groups of {self.group_size} are "
                f"{self.num_groups * self.group_size} ids, the reshape dimensions hold {math.prod(dims)}")
        if perm is not None and sorted(perm) != list(range(len(dims))):
            raise DeviceGroupError(f"iota replica groups {self}: T{tuple(perm)} is not a permutation "
                                   f"of the {len(dims)} reshape dimensions")

    def expand(self) -> tuple:
        """The groups as tuples of ids."""
        total = self.num_groups * self.group_size
        if total > MAX_DEVICES:
            raise DeviceGroupError(f"replica groups {self} name {total} devices; xlac handles at most "
                                   f"{MAX_DEVICES} (xlac.hlo.collectives.MAX_DEVICES)")
        dims = self.reshape_dims
        perm = self.transpose or tuple(range(len(dims)))
        # ids laid out row-major with shape `dims`, then transposed: the flat
        # position of each element after the transpose, read in order.
        strides = [math.prod(dims[k + 1:]) for k in range(len(dims))]
        out_dims = [dims[p] for p in perm]
        flat = []
        for index in _ndindex(out_dims):
            flat.append(sum(index[k] * strides[perm[k]] for k in range(len(perm))))
        size = self.group_size
        return tuple(tuple(flat[g * size:(g + 1) * size]) for g in range(self.num_groups))

    def __str__(self) -> str:
        text = f"[{self.num_groups},{self.group_size}]<=[{','.join(map(str, self.reshape_dims))}]"
        if self.transpose is not None:
            text += f"T({','.join(map(str, self.transpose))})"
        return text


def mesh_axes_groups(mesh: list, device_ids: list | None, axes: list) -> tuple:
    """The groups of XLA's mesh-axes replica group list (its
    ``MeshAxesReplicaGroupList``): ``mesh`` the ``(name, size)`` axes,
    ``device_ids`` the device at each mesh position in row-major order (None:
    in order), ``axes`` the grouped ``(name, pre_size, size)`` axes (pre_size
    and size None for a whole axis, else the sub-axis ``name:(pre_size)size``).
    Each mesh axis is reshaped so that its grouped (sub-)axes are dimensions
    of their own; the device array, its ungrouped dimensions first and the
    grouped ones after (in mesh order), read row by row in groups of the
    grouped sizes' product.  DeviceGroupError when the axes do not fit the mesh."""
    sizes = dict(mesh)
    total = math.prod(sizes.values())
    if device_ids is None:
        device_ids = list(range(total))
    if len(sizes) != len(mesh) or sorted(device_ids) != list(range(total)):
        raise DeviceGroupError(f"mesh {mesh}: axis names must differ and device_ids {device_ids} must be a "
                               f"permutation of 0..{total - 1}")
    by_axis: dict = {}
    for name, pre, size in axes:
        if name not in sizes:
            raise DeviceGroupError(f"mesh axes replica groups: axis {name!r} is not an axis of the mesh {mesh}")
        if pre is not None and (pre < 1 or size < 2 or sizes[name] % (pre * size)):
            raise DeviceGroupError(f"mesh axes replica groups: sub-axis {name}:({pre}){size} does not divide "
                                   f"the axis' size {sizes[name]}")
        by_axis.setdefault(name, []).append((pre, size))
    dims, grouped = [], []
    for name, full in mesh:
        refs = by_axis.get(name)
        if not refs:
            dims.append(full)
            continue
        if any(pre is None for pre, _ in refs):
            if len(refs) > 1:
                raise DeviceGroupError(f"mesh axes replica groups: axis {name!r} named twice")
            grouped.append(len(dims))
            dims.append(full)
            continue
        # Sub-axes: the axis split at their boundaries, in order of pre_size;
        # the groups are read in the order they were written.
        order = sorted(range(len(refs)), key=lambda k: refs[k][0])
        at, product = {}, 1
        for k in order:
            pre, size = refs[k]
            if pre % product:
                raise DeviceGroupError(f"mesh axes replica groups: sub-axes of {name!r} overlap")
            if pre != product:
                dims.append(pre // product)
                product = pre
            at[k] = len(dims)
            dims.append(size)
            product *= size
        if full % product:
            raise DeviceGroupError(f"mesh axes replica groups: sub-axes of {name!r} overlap")
        if product != full:
            dims.append(full // product)
        grouped += [at[k] for k in range(len(refs))]
    group_size = math.prod(dims[g] for g in grouped)
    if group_size < 2:
        raise DeviceGroupError(f"mesh axes replica groups over {axes} of mesh {mesh}: one device per group")
    perm = [d for d in range(len(dims)) if d not in grouped] + grouped
    flat = np.asarray(device_ids, dtype=np.int64).reshape(dims).transpose(perm).reshape(-1, group_size)
    return tuple(tuple(int(v) for v in g) for g in flat)


def _ndindex(dims):
    if not dims:
        yield ()
        return
    if any(d == 0 for d in dims):
        return
    index = [0] * len(dims)
    while True:
        yield tuple(index)
        k = len(dims) - 1
        while k >= 0:
            index[k] += 1
            if index[k] < dims[k]:
                break
            index[k] = 0
            k -= 1
        if k < 0:
            return


@dataclass(frozen=True)
class ReplicaGroups:
    """The value of a ``replica_groups=`` attribute.

    ``ReplicaGroups.of([[0, 1], [2, 3]])`` (list form), ``ReplicaGroups.of([])``
    (empty: everybody), ``ReplicaGroups.iota(2, 2)`` or
    ``ReplicaGroups.iota(2, 2, (2, 2), (1, 0))`` (iota form), or
    ``ReplicaGroups.parse(text)``.  ``groups`` is the groups as tuples of ids
    whatever the form; ``str()`` is the HLO text of the form it was made with.
    """

    lists: tuple | None = ()            # list form (None for the iota form)
    iota_form: IotaGroups | None = None

    @staticmethod
    def of(groups) -> "ReplicaGroups":
        """From a list of lists of ids, a ReplicaGroups, or None (empty)."""
        if isinstance(groups, ReplicaGroups):
            return groups
        if groups is None:
            return ReplicaGroups(())
        if isinstance(groups, str):
            return ReplicaGroups.parse(groups)
        try:
            lists = tuple(tuple(_as_id(i) for i in g) for g in groups)
        except TypeError:
            raise TypeError(f"replica_groups must be a list of lists of ints, got {groups!r}") from None
        return ReplicaGroups(lists)

    @staticmethod
    def iota(num_groups: int, group_size: int, reshape_dims=None, transpose=None) -> "ReplicaGroups":
        dims = tuple(reshape_dims) if reshape_dims is not None else (num_groups * group_size,)
        return ReplicaGroups(None, IotaGroups(int(num_groups), int(group_size), tuple(int(d) for d in dims),
                                              None if transpose is None else tuple(int(t) for t in transpose)))

    @staticmethod
    def parse(text: str) -> "ReplicaGroups":
        """``{{0,1},{2,3}}``, ``{}`` or ``[2,2]<=[4]`` / ``[2,2]<=[2,2]T(1,0)``."""
        s = re.sub(r"\s+", "", text)
        m = re.fullmatch(r"\[(\d+),(\d+)\]<=\[(\d+(?:,\d+)*)\](?:T\((\d+(?:,\d+)*)\))?", s)
        if m:
            perm = tuple(int(v) for v in m.group(4).split(",")) if m.group(4) else None
            return ReplicaGroups.iota(int(m.group(1)), int(m.group(2)),
                                      tuple(int(v) for v in m.group(3).split(",")), perm)
        try:
            return ReplicaGroups(_parse_nested(s, "replica groups"))
        except DeviceGroupError:
            raise DeviceGroupError(f"cannot read replica groups {text!r}: expected {{{{0,1}},{{2,3}}}}, "
                                   "{} or an iota form like [2,2]<=[4]") from None

    @functools.cached_property
    def groups(self) -> tuple:
        """The groups, as a tuple of tuples of ids (empty: one group of everybody)."""
        if self.iota_form is not None:
            return self.iota_form.expand()
        return self.lists

    @property
    def is_empty(self) -> bool:
        if self.iota_form is not None:
            return self.iota_form.num_groups == 0
        return not self.lists

    @property
    def group_size(self) -> int | None:
        """The size of every group, when they all have the same (None for empty or uneven groups)."""
        if self.iota_form is not None:
            return self.iota_form.group_size if self.iota_form.num_groups else None
        sizes = {len(g) for g in self.lists}
        return sizes.pop() if len(sizes) == 1 else None

    @property
    def num_groups(self) -> int:
        return self.iota_form.num_groups if self.iota_form is not None else len(self.lists)

    def __str__(self) -> str:
        if self.iota_form is not None:
            return str(self.iota_form)
        return "{" + ",".join("{" + ",".join(map(str, g)) + "}" for g in self.lists) + "}"

    def __repr__(self) -> str:
        return f"ReplicaGroups({self})"


def _as_id(v) -> int:
    if isinstance(v, bool):
        raise TypeError
    return operator.index(v)


_NESTED_RE = re.compile(r"\{(?:\{(?:-?\d+(?:,-?\d+)*)?\}(?:,\{(?:-?\d+(?:,-?\d+)*)?\})*)?\}", re.ASCII)


def _parse_nested(s: str, what: str) -> tuple:
    """``{{1,2},{3}}`` (blanks removed) -> ((1, 2), (3,))."""
    if not _NESTED_RE.fullmatch(s):
        raise DeviceGroupError(f"{what}: cannot read {s!r} (expected a list of lists of integers "
                               "such as {{0,1},{2,3}})")
    return tuple(tuple(int(v) for v in inner.split(",")) if inner else ()
                 for inner in re.findall(r"\{([^{}]*)\}", s[1:-1]))


def parse_pairs(text: str) -> tuple:
    """``{{0,1},{1,2}}`` -> ((0, 1), (1, 2)); DeviceGroupError unless every inner list is a pair."""
    s = re.sub(r"\s+", "", str(text))
    if len(s) >= 2 and s[0] == s[-1] == '"':
        s = s[1:-1]
    pairs = _parse_nested(s, "source-target pairs")
    for p in pairs:
        if len(p) != 2:
            raise DeviceGroupError(f"source-target pairs {text}: {{{','.join(map(str, p))}}} is not a "
                                   "(source, target) pair")
    return pairs


def format_pairs(pairs) -> str:
    """((0, 1), (1, 2)) -> ``{{0,1},{1,2}}`` (XLA's spelling)."""
    return "{" + ",".join(f"{{{int(s)},{int(t)}}}" for s, t in pairs) + "}"


# ----------------------------------------------------------------------------
# Group modes
# ----------------------------------------------------------------------------

class GroupMode(enum.Enum):
    """How the ids of ``replica_groups`` map to devices (XLA's CollectiveOpGroupMode)."""

    CROSS_REPLICA = "kCrossReplica"
    CROSS_PARTITION = "kCrossPartition"
    CROSS_REPLICA_AND_PARTITION = "kCrossReplicaAndPartition"
    FLATTENED_ID = "kFlattenedID"

    def __str__(self) -> str:
        return self.value


def group_mode(has_channel_id: bool, use_global_device_ids: bool | None) -> GroupMode:
    """The group mode for an instruction with or without a channel id and with
    ``use_global_device_ids`` true, false or absent (None)."""
    if not has_channel_id:
        if use_global_device_ids:
            raise DeviceGroupError("use_global_device_ids=true needs a channel_id (XLA: invalid "
                                   "combination of has_channel_id and use_global_device_ids)")
        return GroupMode.CROSS_REPLICA
    if use_global_device_ids is None:
        return GroupMode.CROSS_PARTITION
    return GroupMode.FLATTENED_ID if use_global_device_ids else GroupMode.CROSS_REPLICA_AND_PARTITION


def _flag(v) -> bool:
    return str(v).lower() == "true" if not isinstance(v, bool) else v


def _has_channel(attrs) -> bool:
    return attrs.get("channel_id") is not None


def group_mode_of(inst) -> GroupMode:
    """The group mode of a collective instruction (anything with ``opcode`` and ``attrs``)."""
    attrs = inst.attrs
    if inst.opcode in HAS_GLOBAL_DEVICE_IDS:
        ugdi = _flag(attrs.get("use_global_device_ids", False))
    else:
        ugdi = None
    try:
        return group_mode(_has_channel(attrs), ugdi)
    except DeviceGroupError as e:
        raise DeviceGroupError(f"{_who(inst)}: {e}") from None


def _who(inst) -> str:
    name = getattr(inst, "name", "")
    return f"{inst.opcode} {name}".strip() if name else inst.opcode


def replica_groups_of(inst) -> ReplicaGroups:
    """The instruction's ``replica_groups`` (empty when absent), whatever type it was given as."""
    value = inst.attrs.get("replica_groups")
    if value is None:
        return ReplicaGroups(())
    if isinstance(value, ReplicaGroups):
        return value
    if hasattr(value, "text"):                          # Raw text
        return ReplicaGroups.parse(value.text)
    return ReplicaGroups.of(value)


def check_device_count(name: str, value) -> int:
    """``value`` as one device count (``replica_count``, ``num_partitions``,
    ``num_replicas=``, ``--devices``, as ``name`` says): an int (not a bool)
    from 1 to :data:`MAX_MODULE_DEVICES`; else :class:`DeviceGroupError`
    naming ``name``, the value and the limit."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise DeviceGroupError(f"{name} must be an integer from 1 to {MAX_MODULE_DEVICES}, got {_shown(value)}")
    value = int(value)
    if not 1 <= value <= MAX_MODULE_DEVICES:
        raise DeviceGroupError(f"{name}={_shown(value)} is out of range: a module runs on 1 to "
                               f"{MAX_MODULE_DEVICES} devices (replica_count x num_partitions)")
    return value


def check_device_counts(replica_count, num_partitions,
                        names: tuple = ("replica_count", "num_partitions")) -> tuple:
    """``(replica_count, num_partitions)`` checked: each as :func:`check_device_count`
    (under ``names``), and their product at most :data:`MAX_MODULE_DEVICES`."""
    r = check_device_count(names[0], replica_count)
    p = check_device_count(names[1], num_partitions)
    if r * p > MAX_MODULE_DEVICES:
        raise DeviceGroupError(f"{names[0]}={r} x {names[1]}={p} = {r * p} devices: a module runs on at most "
                               f"{MAX_MODULE_DEVICES}")
    return r, p


def _shown(value) -> str:
    """A value for an error message: a huge int by its size, not its 4,000 digits
    (which ``str`` refuses past 4,300)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(int(value)) >= 10 ** 30:
        return f"{'-' if value < 0 else ''}<an integer of {int(value).bit_length()} bits>"
    text = repr(value)
    return text if len(text) <= 40 else text[:36] + "..."


def device_counts(module) -> tuple:
    """``(replica_count, num_partitions)`` of a module's header (1 when absent),
    checked (:func:`check_device_counts`); the error names the module."""
    attrs = getattr(module, "attrs", {}) or {}
    values = []
    for key in ("replica_count", "num_partitions"):
        v = attrs.get(key, 1)
        if not isinstance(v, numbers.Integral):          # a Raw or str from a hand-made module
            try:
                v = int(str(v))
            except ValueError:
                pass                                    # reported below
        values.append(v)
    try:
        return check_device_counts(*values)
    except DeviceGroupError as e:
        raise DeviceGroupError(f"module {getattr(module, 'name', '?')}: {e}") from None


# ----------------------------------------------------------------------------
# Participants
# ----------------------------------------------------------------------------

def _check_counts(num_replicas: int, num_partitions: int) -> None:
    if num_replicas < 1 or num_partitions < 1:
        raise DeviceGroupError(f"{num_replicas} replicas x {num_partitions} partitions: both must be >= 1")


def _id_space(mode: GroupMode, num_replicas: int, num_partitions: int) -> tuple:
    """(what the ids count, how many there are)."""
    if mode is GroupMode.CROSS_PARTITION:
        return "partition", num_partitions
    if mode is GroupMode.FLATTENED_ID:
        return "device", num_replicas * num_partitions
    return "replica", num_replicas


def participating_devices(device: int, replica_groups, mode: GroupMode, num_replicas: int,
                          num_partitions: int = 1, who: str = "") -> tuple:
    """The global device ids ``device`` runs a collective with, in group order
    (XLA's GetParticipatingDevices with the default device assignment)."""
    _check_counts(num_replicas, num_partitions)
    groups = ReplicaGroups.of(replica_groups)
    prefix = f"{who}: " if who else ""
    n_devices = num_replicas * num_partitions
    if not 0 <= device < n_devices:
        raise DeviceGroupError(f"{prefix}device {device} is not one of {num_replicas} replica(s) x "
                               f"{num_partitions} partition(s)")
    replica, partition = divmod(device, num_partitions)
    kind, count = _id_space(mode, num_replicas, num_partitions)
    current = {"replica": replica, "partition": partition, "device": device}[kind]
    if groups.is_empty:
        if mode is GroupMode.FLATTENED_ID:
            raise DeviceGroupError(f"{prefix}replica groups cannot be empty with use_global_device_ids=true "
                                   "(kFlattenedID mode)")
        ids = tuple(range(count))
    else:
        found = [g for g in groups.groups if current in g]
        if not found:
            raise DeviceGroupError(f"{prefix}{kind} {current} (device {device}) is in none of the replica "
                                   f"groups {groups} ({mode})")
        if len(found) > 1 or found[0].count(current) > 1:
            raise DeviceGroupError(f"{prefix}{kind} {current} appears twice in the replica groups {groups}")
        ids = found[0]
        for i in ids:
            if not 0 <= i < count:
                raise DeviceGroupError(
                    f"{prefix}replica group {{{','.join(map(str, ids))}}} names {kind} {i}, but the module "
                    f"runs {num_replicas} replica(s) x {num_partitions} partition(s) ({mode}: the ids are "
                    f"{kind} ids 0..{count - 1})")
    if mode is GroupMode.CROSS_REPLICA:
        return tuple(r * num_partitions + partition for r in ids)
    if mode is GroupMode.CROSS_PARTITION:
        return tuple(replica * num_partitions + p for p in ids)
    if mode is GroupMode.CROSS_REPLICA_AND_PARTITION:
        return tuple(r * num_partitions + p for r in ids for p in range(num_partitions))
    return tuple(ids)


def participating_device_groups(replica_groups, mode: GroupMode, num_replicas: int, num_partitions: int = 1,
                                who: str = "") -> list:
    """Every group of global device ids, in XLA's order (GetParticipatingDevicesGroups
    with the default device assignment, which is also GetParticipatingFlattenedIdGroups)."""
    _check_counts(num_replicas, num_partitions)
    groups = ReplicaGroups.of(replica_groups)
    prefix = f"{who}: " if who else ""
    kind, count = _id_space(mode, num_replicas, num_partitions)
    if groups.is_empty:
        if mode is GroupMode.FLATTENED_ID:
            raise DeviceGroupError(f"{prefix}replica groups cannot be empty with use_global_device_ids=true "
                                   "(kFlattenedID mode)")
        lists = (tuple(range(count)),)
    else:
        lists = groups.groups
        seen = set()
        for g in lists:
            for i in g:
                if not 0 <= i < count:
                    raise DeviceGroupError(
                        f"{prefix}replica groups {groups} name {kind} {i}, but the module runs {num_replicas} "
                        f"replica(s) x {num_partitions} partition(s) ({mode}: {kind} ids 0..{count - 1})")
                if i in seen:
                    raise DeviceGroupError(f"{prefix}{kind} {i} appears twice in the replica groups {groups}")
                seen.add(i)
    P = num_partitions
    out = []
    for ids in lists:
        if mode is GroupMode.CROSS_REPLICA:
            out += [tuple(r * P + p for r in ids) for p in range(P)]
        elif mode is GroupMode.CROSS_PARTITION:
            out += [tuple(r * P + p for p in ids) for r in range(num_replicas)]
        elif mode is GroupMode.CROSS_REPLICA_AND_PARTITION:
            out.append(tuple(r * P + p for r in ids for p in range(P)))
        else:
            out.append(tuple(ids))
    return out


def device_group(inst, device: int, num_replicas: int, num_partitions: int = 1) -> tuple:
    """The devices ``device`` meets at the grouped collective ``inst`` (all-reduce,
    all-gather, reduce-scatter, all-to-all and their -start forms), in group order."""
    return participating_devices(device, replica_groups_of(inst), group_mode_of(inst), num_replicas,
                                 num_partitions, who=_who(inst))


def device_groups(inst, num_replicas: int, num_partitions: int = 1) -> list:
    """Every device group (tuples of global device ids, in group order) of the
    grouped collective ``inst``, for a module of ``num_replicas x num_partitions``."""
    return participating_device_groups(replica_groups_of(inst), group_mode_of(inst), num_replicas,
                                       num_partitions, who=_who(inst))


def source_target_pairs_of(inst) -> tuple:
    """``source_target_pairs`` of a collective-permute as ((source, target), ...)."""
    value = inst.attrs.get("source_target_pairs", ())
    if hasattr(value, "text"):
        return parse_pairs(value.text)
    if isinstance(value, str):
        return parse_pairs(value)
    return tuple((int(s), int(t)) for s, t in value)


def check_source_target_pairs(pairs, who: str = "") -> None:
    """No negative id, no source twice, no target twice (XLA's verifier)."""
    prefix = f"{who}: " if who else ""
    sources, targets = set(), set()
    for s, t in pairs:
        if s < 0 or t < 0:
            raise DeviceGroupError(f"{prefix}source-target pair {{{s},{t}}} has a negative id")
        if s in sources:
            raise DeviceGroupError(f"{prefix}source {s} appears more than once in the source-target pairs "
                                   f"{format_pairs(pairs)}")
        if t in targets:
            raise DeviceGroupError(f"{prefix}target {t} appears more than once in the source-target pairs "
                                   f"{format_pairs(pairs)}")
        sources.add(s)
        targets.add(t)


def _pairs_to_devices(pairs, cross_replica: bool, num_replicas: int, num_partitions: int, who: str) -> list:
    check_source_target_pairs(pairs, who)
    count = num_replicas if cross_replica else num_partitions
    kind = "replica" if cross_replica else "partition"
    for s, t in pairs:
        for i in (s, t):
            if i >= count:
                raise DeviceGroupError(f"{who}: source-target pair {{{s},{t}}} names {kind} {i}, but the "
                                       f"module runs {num_replicas} replica(s) x {num_partitions} partition(s)")
    P = num_partitions
    if cross_replica:
        return [(s * P + p, t * P + p) for p in range(P) for s, t in pairs]
    return [(r * P + s, r * P + t) for r in range(num_replicas) for s, t in pairs]


def device_pairs(inst, num_replicas: int, num_partitions: int = 1) -> list:
    """(source device, target device) pairs of a collective-permute for every
    device: its pairs name replicas of the same partition without a channel_id
    (CROSS_REPLICA), partitions of the same replica with one (CROSS_PARTITION).
    For send/recv (and their -done), the pairs of :func:`send_recv_pairs` ([]
    without the frontend attribute)."""
    _check_counts(num_replicas, num_partitions)
    if inst.opcode in SEND_RECV_OPCODES:
        return send_recv_pairs(inst, num_replicas, num_partitions) or []
    who = _who(inst)
    cross_replica = group_mode_of(inst) is GroupMode.CROSS_REPLICA
    return _pairs_to_devices(source_target_pairs_of(inst), cross_replica, num_replicas, num_partitions, who)


def permute_scope(inst, device: int, num_replicas: int, num_partitions: int = 1) -> tuple:
    """The devices that run a collective-permute together with ``device``: the
    replicas of its partition (CROSS_REPLICA) or the partitions of its replica."""
    replica, partition = divmod(device, num_partitions)
    if group_mode_of(inst) is GroupMode.CROSS_REPLICA:
        return tuple(r * num_partitions + partition for r in range(num_replicas))
    return tuple(replica * num_partitions + p for p in range(num_partitions))


def all_to_all_regroup(dims, split: int, concat: int, count: int) -> tuple:
    """How the result of an HLO all-to-all along ``split`` (``count`` blocks
    from the group's devices there, in group order) becomes the spec's
    all-to-all concatenating along another ``concat`` (XlaBuilder's
    ``AllToAll``): reshape to the first dimensions, transpose by the
    permutation, reshape to the last; returns the three."""
    sizes = list(dims)
    blocked = sizes[:split] + [count, sizes[split] // count] + sizes[split + 1:]
    perm = []
    for i in range(len(sizes)):
        if i == concat:
            perm.append(split)
        perm.append(i + 1 if i >= split else i)
    final = list(sizes)
    final[split] //= count
    final[concat] *= count
    return blocked, perm, final


def frontend_attributes(inst) -> dict:
    """``frontend_attributes={k=v, k2="v2"}`` as a dict of strings (quotes removed)."""
    return parse_frontend_attributes(inst.attrs.get("frontend_attributes"))


def parse_frontend_attributes(raw) -> dict:
    """The value of a ``frontend_attributes`` attribute (its text, or a dict) as a
    dict of strings: quotes removed, braced values (``{n = 1 : i32}``) as written."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return {str(k): str(v) for k, v in raw.items()}
    text = str(raw).strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    out = {}
    for item in _split_top(text):
        key, sep, value = item.partition("=")
        if not sep:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1].replace('\\"', '"')
        out[key.strip()] = value
    return out


def _split_top(text: str) -> list:
    """Split on commas outside braces and quotes."""
    parts, depth, quoted, start, i = [], 0, False, 0, 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p for p in (q.strip() for q in parts) if p]


def send_recv_pairs(inst, num_replicas: int, num_partitions: int = 1) -> list | None:
    """(source device, target device) of a send/recv from its
    ``_xla_send_recv_source_target_pairs`` frontend attribute; None without one.
    The ids are replica ids when the module has several replicas (of the same
    partition), else partition ids (as XLA's GPU send/recv thunks read them)."""
    _check_counts(num_replicas, num_partitions)
    text = frontend_attributes(inst).get(SEND_RECV_PAIRS_ATTRIBUTE)
    if text is None:
        return None
    who = _who(inst)
    try:
        pairs = parse_pairs(text)
    except DeviceGroupError as e:
        raise DeviceGroupError(f"{who}: {e}") from None
    return _pairs_to_devices(pairs, num_replicas > 1, num_replicas, num_partitions, who)


# ----------------------------------------------------------------------------
# Static checks (no device counts needed): used by the shape rules
# ----------------------------------------------------------------------------

def check_replica_groups(inst, uniform: bool = True) -> None:
    """XLA's verifier rules that need no device counts: no empty group, no id
    twice, the ids are 0..n-1, groups of one size (``uniform``; all-reduce may
    have uneven groups), FLATTENED_ID mode has groups, the mode is valid."""
    mode = group_mode_of(inst)
    groups = replica_groups_of(inst)
    who = _who(inst)
    if groups.is_empty:
        if mode is GroupMode.FLATTENED_ID:
            raise DeviceGroupError(f"{who}: replica groups must be given with use_global_device_ids=true "
                                   "(kFlattenedID mode)")
        return
    if groups.iota_form is not None:
        return                                      # a permutation of 0..n-1 in groups of one size
    seen = set()
    for g in groups.groups:
        if not g:
            raise DeviceGroupError(f"{who}: replica groups {groups} contain an empty group")
        for i in g:
            if i in seen:
                raise DeviceGroupError(f"{who}: id {i} is repeated in the replica groups {groups}")
            seen.add(i)
    missing = sorted(set(range(len(seen))) - seen)
    if missing:
        raise DeviceGroupError(f"{who}: replica groups {groups} do not name id {missing[0]} (the ids of "
                               f"{len(seen)} devices must be 0..{len(seen) - 1})")
    if uniform and groups.group_size is None:
        raise DeviceGroupError(f"{who}: replica groups {groups} must all have the same size")


def known_group_size(inst) -> int | None:
    """The number of devices in each group of ``inst``, when the groups alone
    determine it (None for empty groups or CROSS_REPLICA_AND_PARTITION mode,
    which depend on the device counts)."""
    groups = replica_groups_of(inst)
    if groups.is_empty or group_mode_of(inst) is GroupMode.CROSS_REPLICA_AND_PARTITION:
        return None
    return groups.group_size
