"""SPMD partitioning: a global program with shardings into the program each device runs.

:class:`SpmdPartitioner` reads the ``sharding=`` of every instruction of the
entry computation (:mod:`xlac.passes.sharding_propagation` writes them) and
rewrites the computation into the per-device program of ``num_partitions``
devices: every value becomes the tile its sharding gives the device
(``local`` shapes: each dimension split ``t`` ways is ``ceil(n / t)`` long,
the last tiles padded), and collectives are inserted where an instruction
needs its operands split otherwise than they are:

* **resharding** between two shardings of a value: ``all-gather`` along each
  split dimension (split -> whole; the padding sliced off), ``dynamic-slice``
  at offsets looked up by ``partition-id`` (whole -> split: no
  communication), ``all-to-all`` when the split moves from one dimension to
  another over the same devices;
* **elementwise** ops, ``convert``, ``copy``, ``broadcast``, ``transpose`` and
  ``reshape`` (where split dimensions stay whole tiles) run on the tiles;
* **dot**: three plans are weighed by the bytes they move: the operands split
  as the result is (batch and free dimensions; no reduction), or either
  operand kept as it is and the other made to agree with it: a split
  contracting dimension gives partial sums, added by an ``all-reduce`` (a
  ``reduce-scatter`` when the result is wanted split that way);
* **reduce** over a split dimension: the local reduce, then an
  ``all-reduce`` with the reduce's computation over the devices holding the
  other parts.

* **while** and **conditional**: bodies, conditions and branches are
  partitioned with the state's (operands') shardings;
* **slicing** ops on tiles along the dimensions they take whole; a slice,
  pad or reverse across a split dimension shifts the pieces of the tiles
  each device's window needs between devices by collective-permute; **iota**
  made locally; **gather** from a row-split table (a masked local gather and
  an all-reduce) or by split indices, and batched gathers/scatters
  (``take_along_axis``) split on their batching dimensions; **scatter** into
  a row-split operand (updates landing elsewhere skipped), or of split rows
  into a whole operand (each device's rows, then an all-reduce with the
  combiner); jax's **LAPACK calls** on a batch of matrices split on the
  batch; **convolution**
  split on batch, output features, or space (a halo exchange by
  collective-permute), or on input features (partial sums all-reduced);
  variadic **reduce** (partials all-gathered and reduced again); **sort**
  along an unsplit dimension; **select-and-scatter** split where its window
  does not cross tiles.

Where a reduction (reduce, a dot's contraction) reads a padded tile, the
padding is replaced by the reduction's identity (the reduce's init value,
zero for a dot) first: padding is never read where it could change a
result.  Anything else (a sort along a split dimension, custom calls...) **falls back**: its operands are all-gathered to the
whole values, it is computed whole on every device and its result is
replicated; a note in ``module.diagnostics`` names the instruction, its
sharding and why.  Notes also say where a value had to be all-gathered
because no cheaper resharding applied.

The pass leaves the per-device module with ``num_partitions`` set, its entry
parameters of the local shapes with their ``sharding=``, and the root's
sharding; :attr:`SpmdPartitioner.signature` (also returned by
:func:`partition_module`) says how the global arguments are cut into tiles
and the results put back together (:func:`xlac.hlo.sharding.padded_tile`,
:func:`~xlac.hlo.sharding.assemble_tiles`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..hlo.collectives import ReplicaGroups, parse_frontend_attributes
from ..hlo.custom_call import (INSPECT_SHARDING, check_no_host_callback, lapack_target, matrix_operand,
                               operand_layouts)
from ..hlo.ir import Diagnostic, HloComputation, HloInstruction, HloModule, Raw
from ..hlo.sharding import (Sharding, assemble_tiles, from_index_map, local_dims, padded_tile, replicated,
                            sharding_text)
from ..shape import PRED, S32, U32, Shape, extreme_scalar
from .call_inliner import CallInliner
from .shard_map import reducer_opcode
from .sharding_propagation import (SHARDING_TARGETS, ShardingPropagation, _dot_dims, _elementwise, annotated,
                                   combine, gather_dims, gather_sources, index_map, is_auto_sharded, kept_dims,
                                   lapack_batch, module_devices, remap, reshape_sharding, target_of,
                                   window_local_dims, write_sharding)

__all__ = ["SpmdPartitioner", "SpmdSignature", "partition_module", "collective_bytes", "spmd_report",
           "is_auto_sharded", "split_arguments", "assemble_results", "partition_entry"]

COLLECTIVES = ("all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute")


def partition_entry(add, pid: HloInstruction, table: list) -> HloInstruction:
    """``table[pid]`` (s32 scalar): this device's entry of a table with one
    per partition (a tile's offset), made by ``add(opcode, shape, operands,
    attrs)``; ``pid``: the s32 partition id."""
    const = add("constant", Shape(S32, (len(table),)), [], {"literal": np.array(table, np.int32)})
    one = add("dynamic-slice", Shape(S32, (1,)), [const, pid], {"dynamic_slice_sizes": (1,)})
    return add("reshape", Shape(S32, ()), [one])


@dataclass
class SpmdSignature:
    """How the per-device program's arguments and results relate to the
    global ones: per parameter and per result leaf, (sharding, global shape)."""

    num_devices: int
    params: list
    results: list
    tuple_result: bool


def _bytes(shape: Shape) -> int:
    return shape.byte_size() if shape.is_array else 0


def _identity(kind: str, etype):
    """The identity of the combiner ``kind`` (an opcode) for element type
    ``etype`` (a numpy scalar), or None."""
    dt = np.dtype(etype.dtype)
    if kind in ("add", "or"):
        return dt.type(0)
    if kind == "multiply":
        return dt.type(1)
    if kind == "and" and (etype.is_pred or etype.is_integral):
        return extreme_scalar(etype, True) if etype.is_pred else np.invert(np.zeros((), dt))[()]
    if kind in ("maximum", "minimum") and not etype.is_complex:
        return extreme_scalar(etype, kind == "minimum")
    return None


def _attrs(inst: HloInstruction) -> dict:
    """``inst``'s attributes for its per-device form: no global sharding (HLO's
    or Shardy's frontend attribute)."""
    attrs = {k: v for k, v in inst.attrs.items() if k != "sharding"}
    front = parse_frontend_attributes(attrs.get("frontend_attributes"))
    if any(k.startswith("xla.sdy.") for k in front):
        kept = {k: v for k, v in front.items() if not k.startswith("xla.sdy.")}
        attrs.pop("frontend_attributes")
        if kept:
            attrs["frontend_attributes"] = Raw("{" + ",".join(f'{k}="{v}"' for k, v in kept.items()) + "}")
    return attrs


class _Fallback(Exception):
    """This instruction is computed whole (the message says why)."""


class SpmdPartitioner:
    """Pass: see the module docstring.  Does nothing to a module on one device
    or without shardings."""

    name = "spmd-partitioner"

    def __init__(self):
        self.signature: SpmdSignature | None = None

    # -- driver -----------------------------------------------------------------------
    def run(self, module: HloModule) -> bool:
        n = module_devices(module)
        comp = module.entry
        if n < 2 or not any("sharding" in i.attrs for i in comp.instructions):
            return False
        self.module, self.n = module, n
        self.names = module.name_uniquer()
        self.channel = 1 + max([int(i.attrs.get("channel_id") or 0) for c in module.computations
                                for i in c.instructions] + [0])
        self.taken: set = set()
        self.adders: dict = {}
        self.notes: list = []
        self.params: list = []           # (parameter number, sharding, global shape)
        self.param_shardings = None      # in a body: parameter number -> shardings per leaf
        out, root, shardings = self._partition_computation(comp, None)
        comp.instructions = []
        for inst in out:
            comp.add_instruction(inst)
        comp.root = root
        comp.sort_topologically()
        comp.compute_users()
        from .dce import DCE
        DCE().run(module)
        module.drop_uncalled_computations()
        module.attrs["num_partitions"] = n
        module.attrs.pop("replica_count", None)
        self._drop_mesh(module)
        params = sorted(self.params, key=lambda p: p[0])
        self.signature = SpmdSignature(n, [(s, g) for _, s, g in params], shardings, comp.root.shape.is_tuple)
        module.diagnostics.extend(Diagnostic(self.name, name, text) for name, text in self.notes)
        return True

    def _partition_computation(self, comp, root_want: list | None, param_shardings: dict | None = None):
        """``comp``'s per-device instructions, its new root (resharded to
        ``root_want``, else to the root's sharding) and the root's (sharding,
        global shape) per leaf.  ``param_shardings`` (parameter number ->
        shardings per leaf) says how a body's parameters are split; the entry's
        are read from their ``sharding=``."""
        saved = (self.out, self.value, self.cache, self.param_shardings) if hasattr(self, "out") else None
        self.out, self.value, self.cache, self.param_shardings = [], {}, {}, param_shardings
        try:
            comp.sort_topologically()
            for inst in list(comp.instructions):
                self._partition(inst)
            root, shardings = self._root(comp.root, root_want)
            return self.out, root, shardings
        finally:
            if saved is not None:
                self.out, self.value, self.cache, self.param_shardings = saved

    def _sub_computation(self, comp, param_shardings: dict, root_want: list) -> HloComputation:
        """A per-device copy of ``comp`` (a loop body or condition, a branch):
        its parameters split as ``param_shardings`` says, its root resharded
        to ``root_want``."""
        out, root, _ = self._partition_computation(comp, root_want, param_shardings)
        new = HloComputation(self.names(comp.name + "_spmd"), [], root=None)
        for inst in out:
            new.add_instruction(inst)
        new.root = root
        new.sort_topologically()
        new.compute_users()
        new.parent = self.module
        self.module.computations.insert(self.module.computations.index(self.module.entry), new)
        return new

    @staticmethod
    def _drop_mesh(module: HloModule) -> None:
        """The per-device program is no global Shardy program any more."""
        attrs = parse_frontend_attributes(module.attrs.get("frontend_attributes"))
        attrs.pop("xla.sdy.meshes", None)
        if attrs:
            module.attrs["frontend_attributes"] = Raw(
                "{" + ",".join(f'{k}="{v}"' if not v.startswith("{") else f"{k}={v}" for k, v in attrs.items())
                + "}")
        else:
            module.attrs.pop("frontend_attributes", None)

    def _root(self, root, want=None):
        """The root, each leaf resharded as ``want`` (else the root's sharding)
        says; the results' (sharding, global shape)."""
        value, have = self.value[root]
        want = want or annotated(root, self.n)
        leaves = list(root.shape.tuple_shapes) if root.shape.is_tuple else [root.shape]
        if not root.shape.is_tuple:
            new = self.reshard(value, have[0], want[0], root.shape, root.name)
            if new is value and new.opcode == "parameter":
                new = self._add("copy", new.shape, [new])
            new.attrs["sharding"] = Raw(sharding_text(want[0]))
            return new, [(want[0], root.shape)]
        parts = []
        for k, (shape, h, w) in enumerate(zip(leaves, have, want)):
            leaf = self._add("get-tuple-element", value.shape.tuple_shapes[k], [value], {"index": k})
            parts.append(self.reshard(leaf, h, w, shape, root.name))
        new = self._add("tuple", Shape.tuple([p.shape for p in parts]), parts)
        write_sharding(new, want)
        return new, list(zip(want, leaves))

    # -- building -----------------------------------------------------------------------
    def _add(self, opcode: str, shape: Shape, operands: list, attrs: dict | None = None, name: str | None = None):
        if name is not None and name not in self.taken:
            self.taken.add(name)        # the original's name, for the instruction that replaces it
        else:
            name = self.names(name or opcode)
        inst = HloInstruction(opcode, shape, operands, attrs or {}, name)
        self.out.append(inst)
        return inst

    def _scalar(self, value, etype=S32):
        key = ("scalar", value, etype)
        if key not in self.cache:
            self.cache[key] = self._add("constant", Shape(etype, ()), [],
                                        {"literal": np.array(value, etype.dtype)})
        return self.cache[key]

    def _pid(self):
        if "pid" not in self.cache:
            raw = self._add("partition-id", Shape(U32, ()), [])
            self.cache["pid"] = self._add("convert", Shape(S32, ()), [raw])
        return self.cache["pid"]

    def _lookup(self, table: list):
        """``table[partition-id]`` (s32)."""
        key = ("table", tuple(table))
        if key not in self.cache:
            self.cache[key] = partition_entry(self._add, self._pid(), table)
        return self.cache[key]

    def _offset(self, s: Sharding, d: int, dims) -> HloInstruction:
        """Where this device's tile of ``s`` starts along dimension ``d`` (s32)."""
        size = local_dims(s, dims)[d]
        table = [s.tile_index(dev)[d] * size for dev in range(self.n)]
        if not any(table):
            return self._scalar(0)
        return self._lookup(table)

    def _next_channel(self) -> int:
        self.channel += 1
        return self.channel - 1

    def _adder(self, etype) -> HloComputation:
        """A scalar ``add`` (``or`` for pred) computation, for the sums of partial dots."""
        if etype not in self.adders:
            self.adders[etype] = self.module.sum_computation(etype, self.names(f"spmd_add_{etype.value}"))
        return self.adders[etype]

    @staticmethod
    def _local_shape(shape: Shape, s: Sharding) -> Shape:
        if not shape.is_array:
            return shape
        return Shape(shape.element_type, local_dims(s, shape.dimensions), shape.layout)

    def _note(self, inst_name: str, text: str) -> None:
        self.notes.append((inst_name, text))

    # -- resharding ---------------------------------------------------------------------
    def reshard(self, v: HloInstruction, frm: Sharding, to: Sharding, shape: Shape, why: str) -> HloInstruction:
        """The local value of sharding ``to`` from ``v``, the local value of
        sharding ``frm`` of a global value of ``shape`` (:meth:`_steps`)."""
        if frm == to or not shape.is_array:
            return v
        # A value resharded alike for several users (a weight gathered for
        # the forward and the backward dot) is resharded once.
        key = ("reshard", v, to)
        if key not in self.cache:
            self.cache[key] = self._reshard(v, frm, to, shape)
        return self.cache[key]

    def _reshard(self, v, frm: Sharding, to: Sharding, shape: Shape) -> HloInstruction:
        moved = self._all_to_all(v, frm, to, shape)
        if moved is not None:
            return moved
        cur = frm
        for step, arg in self._steps(frm, to, shape):
            if step == "slice":
                v, cur = self._slice_local(v, cur, arg, shape), arg
            else:
                v, cur = self._gather_dim(v, cur, arg, shape)
        return v

    def _steps(self, frm: Sharding, to: Sharding, shape: Shape) -> list:
        """How to reshard ``frm`` into ``to`` (not by all-to-all): first each
        device cuts, from what it holds, the dimensions ``to`` splits and
        ``frm`` does not (no communication); then dimensions split otherwise
        are all-gathered; if that is not ``to`` yet (devices in another
        order), everything is gathered and cut again.  ``[("slice",
        sharding after), ("gather", dimension), ...]``."""
        rank = len(shape.dimensions)
        steps, cur = [], frm
        cut = [d for d in range(rank) if cur.tile_dims[d] == 1 and to.tile_dims[d] > 1]
        if cut:
            mt, mc = index_map(to), index_map(cur)
            mid = from_index_map([to.tile_dims[d] if d in cut else cur.tile_dims[d] for d in range(rank)],
                                 {dev: tuple(mt[dev][d] if d in cut else mc[dev][d] for d in range(rank))
                                  for dev in range(self.n)})
            if mid is not None:
                steps.append(("slice", mid))
                cur = mid
        for d in range(rank):
            if cur.tile_dims[d] > 1 and cur.tile_dims[d] != to.tile_dims[d] and \
                    not self._nested(cur, to, d, shape):
                steps.append(("gather", d))
                cur = remap(cur, [None if k == d else k for k in range(rank)])
        if cur == to:
            return steps
        if self._refines(cur, to, shape):
            return steps + [("slice", to)]
        for d in range(rank):
            if cur.tile_dims[d] > 1:
                steps.append(("gather", d))
                cur = remap(cur, [None if k == d else k for k in range(rank)])
        return steps + [("slice", to)]

    def _nested(self, cur: Sharding, to: Sharding, d: int, shape: Shape) -> bool:
        """Whether ``to`` splits dimension ``d`` into tiles that each lie in
        the tile of ``cur`` its device holds (evenly: a device cuts its
        piece from its own tile)."""
        tc, tt = cur.tile_dims[d], to.tile_dims[d]
        if tc <= 1 or tt <= tc or tt % tc or shape.dimensions[d] % tt:
            return False
        mc, mt = index_map(cur), index_map(to)
        return all(mt[dev][d] // (tt // tc) == mc[dev][d] for dev in range(self.n))

    def _refines(self, cur: Sharding, to: Sharding, shape: Shape) -> bool:
        """Whether every device's tile of ``to`` lies in its tile of ``cur``:
        each dimension whole in ``cur``, split alike, or nested."""
        mc, mt = index_map(cur), index_map(to)
        for d in range(len(shape.dimensions)):
            if cur.tile_dims[d] == 1 or self._nested(cur, to, d, shape):
                continue
            if cur.tile_dims[d] != to.tile_dims[d] or any(mc[dev][d] != mt[dev][d] for dev in range(self.n)):
                return False
        return True

    def reshard_cost(self, frm: Sharding, to: Sharding, shape: Shape) -> int:
        """Bytes a device receives to reshard (what :meth:`reshard` does)."""
        if frm == to or not shape.is_array:
            return 0
        if self._all_to_all_plan(frm, to, shape) is not None:
            return _bytes(self._local_shape(shape, frm))
        cost, cur = 0, frm
        for step, arg in self._steps(frm, to, shape):
            if step == "slice":
                cur = arg
            else:
                before = _bytes(self._local_shape(shape, cur))
                cur = remap(cur, [None if k == arg else k for k in range(len(shape.dimensions))])
                cost += _bytes(self._local_shape(shape, cur)) - before
        return cost

    def _replica_rank(self, s: Sharding, dev: int) -> int:
        return s.devices.index(dev) % s.replicas

    def _gather_dim(self, v, cur: Sharding, d: int, shape: Shape):
        """All-gather dimension ``d``: (the local value, its sharding)."""
        m = index_map(cur)
        groups: dict = {}
        for dev, index in m.items():
            key = (index[:d] + index[d + 1:], self._replica_rank(cur, dev))
            groups.setdefault(key, []).append((index[d], dev))
        lists = [[dev for _, dev in sorted(g)] for _, g in sorted(groups.items())]
        dims = list(v.shape.dimensions)
        dims[d] *= cur.tile_dims[d]
        out = self._add("all-gather", Shape(v.shape.element_type, dims), [v], {
            "dimensions": (d,), "replica_groups": ReplicaGroups.of(lists), "channel_id": self._next_channel(),
            "use_global_device_ids": True})
        n = shape.dimensions[d]
        if dims[d] != n:
            dims[d] = n
            limits = [(0, x, 1) for x in dims]
            out = self._add("slice", Shape(v.shape.element_type, dims), [out], {"slice": tuple(limits)})
        return out, remap(cur, [None if k == d else k for k in range(len(dims))])

    def _slice_local(self, v, cur: Sharding, to: Sharding, shape: Shape):
        """This device's tile of ``to`` cut from ``v``, its tile of ``cur``
        (``to`` splits further only dimensions ``cur`` has whole): no
        communication."""
        if to == cur:
            return v
        dims = shape.dimensions
        cut = [d for d in range(len(dims)) if cur.tile_dims[d] == 1 and to.tile_dims[d] > 1]
        # Split further within each device's tile (evenly: :meth:`_nested`).
        finer = [d for d in range(len(dims)) if 1 < cur.tile_dims[d] < to.tile_dims[d]]
        local = local_dims(to, dims)
        have = list(v.shape.dimensions)
        padded = [local[d] * to.tile_dims[d] if d in cut else have[d] for d in range(len(dims))]
        etype = shape.element_type
        if padded != have:
            v = self._add("pad", Shape(etype, padded), [v, self._scalar(0, etype)],
                          {"padding": tuple((0, p - h, 0) for p, h in zip(padded, have))})
        mt = index_map(to)

        def start(d):
            if d in cut:
                return self._offset(to, d, dims)
            if d in finer:
                per = to.tile_dims[d] // cur.tile_dims[d]
                return self._lookup([(mt[dev][d] % per) * local[d] for dev in range(self.n)])
            return self._scalar(0)
        starts = [start(d) for d in range(len(dims))]
        return self._add("dynamic-slice", Shape(etype, local, shape.layout), [v] + starts,
                         {"dynamic_slice_sizes": tuple(local)})

    def _all_to_all_plan(self, frm: Sharding, to: Sharding, shape: Shape):
        """(a, b, groups) when resharding moves the split from dimension ``a``
        to ``b`` over the same devices (one all-to-all), else None."""
        split_f = [d for d, t in enumerate(frm.tile_dims) if t > 1]
        split_t = [d for d, t in enumerate(to.tile_dims) if t > 1]
        if len(split_f) != 1 or len(split_t) != 1 or split_f == split_t:
            return None
        a, b = split_f[0], split_t[0]
        t = frm.tile_dims[a]
        if to.tile_dims[b] != t or shape.dimensions[a] % t or shape.dimensions[b] % t:
            return None
        mf, mt = index_map(frm), index_map(to)
        groups: dict = {}
        for dev in range(self.n):
            if mt[dev][b] != mf[dev][a]:
                return None
            groups.setdefault(self._replica_rank(frm, dev), []).append((mf[dev][a], dev))
        lists = [[dev for _, dev in sorted(g)] for _, g in sorted(groups.items())]
        if any(len(g) != t for g in lists):
            return None
        return a, b, lists

    def _all_to_all(self, v, frm: Sharding, to: Sharding, shape: Shape):
        plan = self._all_to_all_plan(frm, to, shape)
        if plan is None:
            return None
        a, b, groups = plan
        t = frm.tile_dims[a]
        etype = shape.element_type
        dims = list(v.shape.dimensions)                         # dims[a] = n_a / t, dims[b] = n_b
        # Split b into (t, n_b / t), exchange the t blocks, put the received
        # blocks (by source: a's tile index) in front of a's part, merge.
        axes = []
        for k in range(len(dims)):
            axes += [("t",), (k,)] if k == b else [(k,)]
        split = []
        for ax in axes:
            split.append(t if ax == ("t",) else (dims[b] // t if ax == (b,) else dims[ax[0]]))
        x = self._add("reshape", Shape(etype, split), [v])
        x = self._add("all-to-all", Shape(etype, split), [x], {
            "dimensions": (axes.index(("t",)),), "replica_groups": ReplicaGroups.of(groups),
            "channel_id": self._next_channel()})
        order = []
        for k in range(len(dims)):
            order += [("t",), (k,)] if k == a else [(k,)]
        perm = tuple(axes.index(ax) for ax in order)
        x = self._add("transpose", Shape(etype, [split[p] for p in perm]), [x], {"dimensions": perm})
        final = list(dims)
        final[a] *= t
        final[b] //= t
        return self._add("reshape", Shape(etype, final, shape.layout), [x])

    def _mask(self, v, s: Sharding, shape: Shape, d: int, fill: HloInstruction):
        """``v`` (split as ``s``) with the padding of dimension ``d`` replaced by ``fill`` (a scalar)."""
        n, t = shape.dimensions[d], s.tile_dims[d]
        if t == 1 or n % t == 0:
            return v
        local = v.shape.dimensions
        iota = self._add("iota", Shape(S32, local), [], {"iota_dimension": d})
        start = self._add("broadcast", Shape(S32, local), [self._offset(s, d, shape.dimensions)], {"dimensions": ()})
        at = self._add("add", Shape(S32, local), [iota, start])
        limit = self._add("broadcast", Shape(S32, local), [self._scalar(n)], {"dimensions": ()})
        inside = self._add("compare", Shape(PRED, local), [at, limit], {"direction": "LT"})
        filled = self._add("broadcast", Shape(v.shape.element_type, local), [fill], {"dimensions": ()})
        return self._add("select", Shape(v.shape.element_type, local, v.shape.layout), [inside, v, filled])

    def _groups_for_sum(self, keep: dict, part: dict, parts: int):
        """All-reduce groups: devices with the same ``keep`` key, one device
        of each ``part`` key (``parts`` of them) per group; None if they do not fit."""
        buckets: dict = {}
        for dev in range(self.n):
            buckets.setdefault(keep[dev], {}).setdefault(part[dev], []).append(dev)
        groups = []
        for by_part in buckets.values():
            if len(by_part) != parts or len({len(v) for v in by_part.values()}) != 1:
                return None
            lists = [sorted(v) for _, v in sorted(by_part.items())]
            groups += [list(g) for g in zip(*lists)]
        return groups

    # -- per instruction ----------------------------------------------------------------
    def _operand(self, inst, k: int, to: Sharding) -> HloInstruction:
        """Operand ``k`` of ``inst``, resharded to ``to``."""
        op = inst.operands[k]
        v, have = self.value[op]
        return self.reshard(v, have[0], to, op.shape, inst.name)

    def _partition(self, inst: HloInstruction) -> None:
        want = annotated(inst, self.n)
        handler = getattr(self, "_op_" + inst.opcode.replace("-", "_"), None)
        if handler is None and _elementwise(inst):
            handler = self._op_elementwise
        try:
            if handler is None:
                raise _Fallback(f"{inst.opcode} is not partitioned")
            self.value[inst] = handler(inst, want)
        except _Fallback as e:
            self.value[inst] = self._fallback(inst, want, str(e))

    def _fallback(self, inst, want, why: str):
        operands = []
        split = False
        for op in inst.operands:
            v, have = self.value[op]
            if not op.shape.is_tuple:
                split |= not have[0].is_replicated
                operands.append(self.reshard(v, have[0], replicated(self.n, len(op.shape.dimensions)),
                                             op.shape, inst.name) if op.shape.is_array else v)
                continue
            leaves = []
            for k, (shape, h) in enumerate(zip(op.shape.tuple_shapes, have)):
                split |= not h.is_replicated
                leaf = self._add("get-tuple-element", v.shape.tuple_shapes[k], [v], {"index": k})
                leaves.append(self.reshard(leaf, h, replicated(self.n, len(shape.dimensions)), shape, inst.name)
                              if shape.is_array else leaf)
            operands.append(self._add("tuple", op.shape, leaves))
        attrs = _attrs(inst)
        new = self._add(inst.opcode, inst.shape, operands, attrs, inst.name)
        rep = [replicated(self.n, len(s.dimensions) if s.is_array else 0) for s in
               (inst.shape.tuple_shapes if inst.shape.is_tuple else [inst.shape])]
        if split or any(not w.is_replicated for w in want):
            self._note(inst.name, f"{inst.name} ({inst.opcode}, sharding "
                                  f"{', '.join(sharding_text(w) for w in want)}): computed whole on every "
                                  f"device, its operands all-gathered ({why})")
        return new, rep

    def _same(self, inst, want, operands: list):
        attrs = _attrs(inst)
        return self._add(inst.opcode, self._local_shape(inst.shape, want[0]), operands, attrs, inst.name), want

    def _op_parameter(self, inst, want):
        if self.param_shardings is not None:
            have = self.param_shardings[inst.parameter_number]
            leaves = list(inst.shape.tuple_shapes) if inst.shape.is_tuple else [inst.shape]
            local = [self._local_shape(sh, h) for sh, h in zip(leaves, have)]
            shape = Shape.tuple(local) if inst.shape.is_tuple else local[0]
            return self._add("parameter", shape, [], _attrs(inst), inst.name), list(have)
        if inst.shape.is_tuple:
            raise _Fallback("a tuple parameter")
        attrs = _attrs(inst)
        attrs["sharding"] = Raw(sharding_text(want[0]))
        new = self._add("parameter", self._local_shape(inst.shape, want[0]), [], attrs, inst.name)
        self.params.append((inst.parameter_number, want[0], inst.shape))
        return new, want

    def _replicated_whole(self, inst):
        """A value every device computes whole (constants, iota)."""
        attrs = _attrs(inst)
        new = self._add(inst.opcode, inst.shape, [], attrs, inst.name)
        return new, [replicated(self.n, len(inst.shape.dimensions))]

    def _op_constant(self, inst, want):
        if inst.shape.is_tuple:
            raise _Fallback("a tuple constant")
        return self._replicated_whole(inst)

    def _op_elementwise(self, inst, want):
        s = want[0]
        rank = len(inst.shape.dimensions)
        operands = []
        for k, op in enumerate(inst.operands):
            r = len(op.shape.dimensions)
            if r == rank:
                operands.append(self._operand(inst, k, s))
            elif r == 0:
                operands.append(self._operand(inst, k, replicated(self.n, 0)))
            else:
                raise _Fallback(f"operand {k} of rank {r} in an elementwise op of rank {rank}")
        return self._same(inst, want, operands)

    _op_copy = _op_elementwise

    def _op_custom_call(self, inst, want):
        if lapack_target(target_of(inst)) is not None:
            return self._lapack_call(inst, want)
        if target_of(inst) not in SHARDING_TARGETS or len(inst.operands) != 1 or inst.shape.is_tuple:
            raise _Fallback(f"custom call {target_of(inst)}")
        if target_of(inst) == INSPECT_SHARDING:
            value, have = self.value[inst.operands[0]]
            if inspect_sharding is not None:
                inspect_sharding(inst, have[0])
            return value, have
        return self._operand(inst, 0, want[0]), want

    def _lapack_call(self, inst, want):
        """jax's LAPACK calls (``lapack_?potrf_ffi``, ...) on a batch of
        matrices, split on batch dimensions: every operand and result shares
        the batch dimensions of the call's matrix, each batch element is a
        problem of its own, so each device solves its own (as XLA
        partitions them); split as the matrix comes, else as the first
        result is wanted."""
        nb = lapack_batch(inst)
        if nb is None:
            raise _Fallback(f"custom call {target_of(inst)} without batch dimensions")
        m = inst.operands[matrix_operand(inst)]
        leaves = list(inst.shape.tuple_shapes) if inst.shape.is_tuple else [inst.shape]

        def batch_only(sh: Sharding, rank: int) -> Sharding:
            return remap(sh, [d if d < nb else None for d in range(rank)])
        split = batch_only(self.value[m][1][0], nb)
        if split.is_replicated and want[0] is not None:
            split = batch_only(want[0], nb)
        if split.is_replicated:
            raise _Fallback(f"custom call {target_of(inst)} with its batch whole")
        ops = [self._operand(inst, k, batch_only(split, len(o.shape.dimensions)))
               for k, o in enumerate(inst.operands)]
        have = [batch_only(split, len(sh.dimensions)) for sh in leaves]
        local = [self._local_shape(sh, h) for sh, h in zip(leaves, have)]
        attrs = _attrs(inst)
        if "operand_layout_constraints" in attrs:
            attrs["operand_layout_constraints"] = Raw("{" + ", ".join(
                str(Shape(sh.element_type, tuple(o.shape.dimensions), sh.layout))
                for sh, o in zip(operand_layouts(inst), ops)) + "}")
        new = self._add("custom-call", Shape.tuple(local) if inst.shape.is_tuple else local[0], ops, attrs,
                        inst.name)
        if inst.shape.is_tuple:
            return new, have
        return self.reshard(new, have[0], want[0], inst.shape, inst.name), want

    def _op_broadcast(self, inst, want):
        s = want[0]
        dims = list(inst.attrs.get("dimensions", ()))
        return self._same(inst, want, [self._operand(inst, 0, remap(s, dims))])

    def _op_transpose(self, inst, want):
        s = want[0]
        perm = list(inst.attrs["dimensions"])
        return self._same(inst, want, [self._operand(inst, 0, remap(s, [perm.index(j) for j in range(len(perm))]))])

    def _op_reshape(self, inst, want):
        s = want[0]
        a, b = inst.operands[0].shape.dimensions, inst.shape.dimensions
        if s.is_replicated:
            return self._same(inst, want, [self._operand(inst, 0, replicated(self.n, len(a)))])
        t = reshape_sharding(s, b, a)
        if t is None or reshape_sharding(t, a, b) != s:
            raise _Fallback("the split dimensions do not stay whole tiles through the reshape")
        return self._same(inst, want, [self._operand(inst, 0, t)])

    def _op_tuple(self, inst, want):
        values = [self.value[o] for o in inst.operands]
        if any(o.shape.is_tuple for o in inst.operands):
            raise _Fallback("a nested tuple")
        new = self._add("tuple", Shape.tuple([v.shape for v, _ in values]), [v for v, _ in values], {}, inst.name)
        return new, [h[0] for _, h in values]

    def _op_get_tuple_element(self, inst, want):
        v, have = self.value[inst.operands[0]]
        k = inst.attrs["index"]
        if inst.shape.is_tuple:
            raise _Fallback("a nested tuple")
        new = self._add("get-tuple-element", v.shape.tuple_shapes[k], [v], {"index": k}, inst.name)
        return new, [have[k]]

    def _op_reduce(self, inst, want):
        if inst.shape.is_tuple:
            return self._variadic_reduce(inst, want)
        x = inst.operands[0]
        xv, have = self.value[x]
        s = have[0]
        reduced = sorted(inst.attrs.get("dimensions", ()))
        kept = [d for d in range(len(x.shape.dimensions)) if d not in reduced]
        init = self._operand(inst, 1, replicated(self.n, 0))
        for d in reduced:
            xv = self._mask(xv, s, x.shape, d, init)
        partial = remap(s, kept)
        attrs = _attrs(inst)
        local = self._add("reduce", self._local_shape(inst.shape, partial), [xv, init], attrs, inst.name)
        parts, groups = self._reduced_groups(s, kept, reduced)
        if parts > 1:
            local = self._add("all-reduce", local.shape, [local], {
                "replica_groups": ReplicaGroups.of(groups), "channel_id": self._next_channel(),
                "use_global_device_ids": True, "to_apply": inst.attrs["to_apply"]})
        out = self.reshard(local, partial, want[0], inst.shape, inst.name)
        return out, want

    def _reduced_groups(self, s: Sharding, kept: list, reduced: list) -> tuple:
        """(parts, groups): how many devices hold parts of the ``reduced``
        dimensions of a value split as ``s``, and the groups of devices whose
        parts make one whole (same tile of the ``kept`` dimensions)."""
        parts = math.prod(s.tile_dims[d] for d in reduced)
        if parts == 1:
            return 1, None
        m = index_map(s)
        groups = self._groups_for_sum({dev: tuple(m[dev][d] for d in kept) for dev in m},
                                      {dev: tuple(m[dev][d] for d in reduced) for dev in m}, parts)
        if groups is None:
            raise _Fallback("the devices holding the parts of a reduced dimension do not form groups")
        return parts, groups

    def _variadic_reduce(self, inst, want):
        """A reduce of several operands (an argmax's values and indices): the
        local reduce, then, over split reduced dimensions, the devices' partial
        results all-gathered along a new leading dimension and reduced again
        with the same computation (no all-reduce takes a tuple)."""
        half = len(inst.operands) // 2
        x = inst.operands[0]
        s = self.value[x][1][0]
        reduced = sorted(inst.attrs.get("dimensions", ()))
        kept = [d for d in range(len(x.shape.dimensions)) if d not in reduced]
        inits = [self._operand(inst, half + k, replicated(self.n, 0)) for k in range(half)]
        xs = []
        for k in range(half):
            xv = self._operand(inst, k, s)
            for d in reduced:
                xv = self._mask(xv, s, x.shape, d, inits[k])
            xs.append(xv)
        partial = remap(s, kept)
        leaves = inst.shape.tuple_shapes
        local_shapes = [self._local_shape(sh, partial) for sh in leaves]
        local = self._add("reduce", Shape.tuple(local_shapes), xs + inits, _attrs(inst), inst.name)
        parts, groups = self._reduced_groups(s, kept, reduced)
        if parts > 1:
            gathered = []
            for k, sh in enumerate(local_shapes):
                leaf = self._add("get-tuple-element", sh, [local], {"index": k})
                one = self._add("reshape", Shape(sh.element_type, [1] + list(sh.dimensions)), [leaf])
                gathered.append(self._add("all-gather", Shape(sh.element_type, [parts] + list(sh.dimensions)),
                                          [one], {"dimensions": (0,), "replica_groups": ReplicaGroups.of(groups),
                                                  "channel_id": self._next_channel(),
                                                  "use_global_device_ids": True}))
            attrs = _attrs(inst)
            attrs["dimensions"] = (0,)
            local = self._add("reduce", local.shape, gathered + inits, attrs)
        outs = []
        for k, sh in enumerate(leaves):
            leaf = self._add("get-tuple-element", local_shapes[k], [local], {"index": k})
            outs.append(self.reshard(leaf, partial, want[k], sh, inst.name))
        return self._add("tuple", Shape.tuple([o.shape for o in outs]), outs, {}, inst.name), list(want)

    def _along(self, inst, want, d: int):
        """The sharding ``inst`` runs on tiles with: ``want`` (else its first
        operand's sharding) less any split of dimension ``d``, which it works
        along (a sort, a top-k); a fallback when nothing stays split."""
        given = want[0] if not want[0].is_replicated else self.value[inst.operands[0]][1][0]
        s = remap(given, [None if k == d else k for k in range(len(given.tile_dims))])
        if s.is_replicated and given.tile_dims[d] > 1 and not want[0].is_replicated:
            # Split only along it, and wanted split: the split moves to the
            # longest other dimension it fits (an all-to-all).  (Wanted whole,
            # gathering the operand once moves less.)
            dims = inst.operands[0].shape.dimensions
            others = [k for k in range(len(dims)) if k != d and dims[k] >= given.tile_dims[d]]
            if others:
                k = max(others, key=lambda j: dims[j])
                s = remap(given, [d if j == k else k if j == d else j for j in range(len(dims))])
        if s.is_replicated:
            raise _Fallback(f"split along the dimension {inst.opcode} works along")
        return s

    def _op_sort(self, inst, want):
        """Split on the dimensions it does not sort along: each device sorts
        its tiles (a split of the sorted dimension gathered first)."""
        s = self._along(inst, want, inst.attrs["dimensions"][0])
        operands = [self._operand(inst, k, s) for k in range(len(inst.operands))]
        if not inst.shape.is_tuple:
            return self.reshard(self._same(inst, [s], operands)[0], s, want[0], inst.shape, inst.name), want
        return self._tuple_on_tiles(inst, want, s, operands)

    def _op_topk(self, inst, want):
        """Split on the dimensions but the last: each device takes the top k of its rows."""
        s = self._along(inst, want, len(inst.operands[0].shape.dimensions) - 1)
        return self._tuple_on_tiles(inst, want, s, [self._operand(inst, 0, s)])

    def _tuple_on_tiles(self, inst, want, s: Sharding, operands: list):
        """``inst`` (a tuple of results split alike) computed on tiles split as
        ``s``, each result resharded to what is wanted of it."""
        leaves = inst.shape.tuple_shapes
        local = self._add(inst.opcode, Shape.tuple([self._local_shape(sh, s) for sh in leaves]), operands,
                          _attrs(inst), inst.name)
        outs = [self.reshard(self._add("get-tuple-element", local.shape.tuple_shapes[k], [local], {"index": k}),
                             s, want[k], sh, inst.name) for k, sh in enumerate(leaves)]
        return self._add("tuple", Shape.tuple([o.shape for o in outs]), outs, {}, inst.name), list(want)

    def _op_select_and_scatter(self, inst, want):
        """Split on dimensions the window does not cross (size 1, stride 1, no
        padding: a max pool's batch and features), computed on tiles; split
        elsewhere, computed with those dimensions whole."""
        from ..hlo.window import window_of
        s = want[0]
        local = window_local_dims(inst)
        win = window_of(inst.attrs).dimensions
        # A window of stride >= its size tiles the dimension; split so that
        # every tile holds whole windows, it stays in one tile.
        s = remap(s, [k if local[k] is not None and (win[k].size == 1 and win[k].stride == 1 or
                                                     inst.shape.dimensions[k] % (s.tile_dims[k] * win[k].stride) == 0)
                      else None for k in range(len(local))])
        if s.is_replicated:
            raise _Fallback("split only where the window reaches across tiles")
        operand = self._operand(inst, 0, s)
        source = self._operand(inst, 1, s)
        init = self._operand(inst, 2, replicated(self.n, 0))
        new = self._add("select-and-scatter", self._local_shape(inst.shape, s), [operand, source, init],
                        _attrs(inst), inst.name)
        return self.reshard(new, s, want[0], inst.shape, inst.name), want

    # -- slicing -----------------------------------------------------------------------
    def _kept_sharding(self, inst, want: Sharding) -> Sharding:
        """``want`` with the split kept only where the operand's dimension is
        taken whole (:func:`kept_dims`): how the operands are split to compute
        ``inst`` locally."""
        kept = kept_dims(inst)
        return remap(want, [k if kept[k] is not None else None for k in range(len(kept))])

    def _op_dynamic_slice(self, inst, want):
        """Dimensions sliced whole stay split; the sliced ones are whole (their start clamps alike)."""
        s = self._kept_sharding(inst, want[0])
        x = self._operand(inst, 0, s)
        starts = [self._operand(inst, k, replicated(self.n, 0)) for k in range(1, len(inst.operands))]
        local = self._local_shape(inst.shape, s)
        attrs = _attrs(inst)
        attrs["dynamic_slice_sizes"] = tuple(local.dimensions)
        new = self._add("dynamic-slice", local, [x] + starts, attrs, inst.name)
        return self.reshard(new, s, want[0], inst.shape, inst.name), want

    def _op_dynamic_update_slice(self, inst, want):
        s = self._kept_sharding(inst, want[0])
        x = self._operand(inst, 0, s)
        u = self._operand(inst, 1, s)
        starts = [self._operand(inst, k, replicated(self.n, 0)) for k in range(2, len(inst.operands))]
        new = self._add("dynamic-update-slice", self._local_shape(inst.shape, s), [x, u] + starts, _attrs(inst),
                        inst.name)
        return self.reshard(new, s, want[0], inst.shape, inst.name), want

    def _op_slice(self, inst, want):
        """Split dimensions the slice cuts: each device's window of the
        operand, its tile and its neighbours' edges (:meth:`_window`), then
        sliced locally with the stride."""
        limits = [tuple(lim) for lim in inst.attrs["slice"]]
        x = inst.operands[0]
        windows = {}
        for d, (start, _, stride) in enumerate(limits):
            lo = self._local_shape(inst.shape, want[0]).dimensions[d]
            windows[d] = (lambda k, a=start, st=stride, L=lo: a + k * L * st, (lo - 1) * stride + 1)
        got = self._windowed(inst, want[0], windows)
        if got is None:
            return self._slice_kept(inst, want)
        xv, cut = got
        local = self._local_shape(inst.shape, want[0])
        attrs = _attrs(inst)
        attrs["slice"] = tuple((0, windows[k][1], lim[2]) if k in cut else
                               (0, local.dimensions[k], 1) if want[0].tile_dims[k] > 1 else lim
                               for k, lim in enumerate(limits))
        return self._add("slice", local, [xv], attrs, inst.name), want

    def _slice_kept(self, inst, want):
        s = self._kept_sharding(inst, want[0])
        x = self._operand(inst, 0, s)
        local = self._local_shape(inst.shape, s)
        attrs = _attrs(inst)
        attrs["slice"] = tuple((0, local.dimensions[k], 1) if s.tile_dims[k] > 1 else tuple(lim)
                               for k, lim in enumerate(inst.attrs["slice"]))
        new = self._add("slice", local, [x], attrs, inst.name)
        return self.reshard(new, s, want[0], inst.shape, inst.name), want

    def _op_pad(self, inst, want):
        """Split dimensions padded at the ends only: each device's window of
        the operand (:meth:`_window`), the positions outside it the padding
        value; the others padded locally."""
        padding = [tuple(p) for p in inst.attrs["padding"]]
        value = self._operand(inst, 1, replicated(self.n, 0))
        windows = {}
        for d, (low, _, interior) in enumerate(padding):
            if interior == 0:
                lo = self._local_shape(inst.shape, want[0]).dimensions[d]
                windows[d] = (lambda k, a=low, L=lo: k * L - a, lo)
        got = self._windowed(inst, want[0], windows, fill=value)
        if got is None:
            s = self._kept_sharding(inst, want[0])
            new = self._add("pad", self._local_shape(inst.shape, s), [self._operand(inst, 0, s), value],
                            _attrs(inst), inst.name)
            return self.reshard(new, s, want[0], inst.shape, inst.name), want
        xv, cut = got
        attrs = _attrs(inst)
        attrs["padding"] = tuple((0, 0, 0) if k in cut else p for k, p in enumerate(padding))
        return self._add("pad", self._local_shape(inst.shape, want[0]), [xv, value], attrs, inst.name), want

    def _op_reverse(self, inst, want):
        """A reversed split dimension: each device's tile is the mirror
        tile's reversed (one collective-permute of the tiles; a window where
        the tiles are uneven)."""
        dims = set(inst.attrs.get("dimensions", ()))
        n = inst.shape.dimensions
        windows = {}
        for d in range(len(n)):
            lo = self._local_shape(inst.shape, want[0]).dimensions[d]
            windows[d] = (lambda k, m=n[d], L=lo: m - (k + 1) * L, lo) if d in dims else (lambda k, L=lo: k * L, lo)
        got = self._windowed(inst, want[0], windows)
        if got is None:
            s = self._kept_sharding(inst, want[0])
            new = self._add("reverse", self._local_shape(inst.shape, s), [self._operand(inst, 0, s)],
                            _attrs(inst), inst.name)
            return self.reshard(new, s, want[0], inst.shape, inst.name), want
        xv, _ = got
        return self._add("reverse", self._local_shape(inst.shape, want[0]), [xv], _attrs(inst), inst.name), want

    def _windowed(self, inst, s: Sharding, windows: dict, fill=None):
        """Operand 0 of ``inst`` split as ``s`` (the result's sharding), and
        along each split dimension ``d`` of ``windows`` (``d -> (start of
        tile k's window, its length)``, in the operand's positions) replaced by
        this device's window (:meth:`_window`; positions outside the operand
        ``fill`` when given).  (the local value, the dimensions windowed), or
        None when a window would move more than gathering the dimension."""
        x = inst.operands[0]
        cut = [d for d in windows if s.tile_dims[d] > 1]
        if not cut or any(t > 1 and d not in windows for d, t in enumerate(s.tile_dims)):
            return None
        plans = {d: self._window_plan(s, d, x.shape.dimensions[d], *windows[d]) for d in cut}
        if any(p is None for p in plans.values()):
            return None
        v = self._operand(inst, 0, s)
        for d in cut:
            v = self._window(v, s, d, x.shape.dimensions[d], plans[d], windows[d], fill)
        return v, cut

    def _window_plan(self, s: Sharding, d: int, n: int, start, size: int):
        """How each device gets the ``size`` positions from ``start(k)`` along
        dimension ``d`` (of ``n``, split as ``s``) from the tiles around it,
        the cheaper of ``("shift", {shift: (lo, hi)})`` — from the tile
        ``shift`` places away, positions ``lo:hi`` of it (a collective-permute
        per shift) — and, when each window lies in one tile, ``("single",
        ({k: source tile}, lo, hi))`` (one collective-permute); None when
        that moves more than an all-gather."""
        t = s.tile_dims[d]
        L = -(-n // t)
        need, sources = {}, {}
        for k in range(t):
            a, b = max(start(k), 0), min(start(k) + size, n)
            for j in range(max(a // L, 0), min(-(-b // L), t)) if a < b else ():
                lo, hi = max(a, j * L) - j * L, min(b, (j + 1) * L) - j * L
                old = need.get(j - k, (lo, hi))
                need[j - k] = (min(old[0], lo), max(old[1], hi))
                sources.setdefault(k, []).append((j, lo, hi))
        if not need:
            return ("shift", {0: (0, L)})
        lo_s, hi_s = min(need), max(need)
        pieces = {}
        for shift in range(lo_s, hi_s + 1):
            lo = need[lo_s][0] if shift == lo_s else 0
            hi = need[hi_s][1] if shift == hi_s else L
            pieces[shift] = (lo, hi)
        moved = sum(hi - lo for shift, (lo, hi) in pieces.items() if shift != 0)
        plans = [(moved, 0, ("shift", pieces))]
        if all(len(v) == 1 for v in sources.values()):
            # Each device's window lies in one tile (a reverse): one permute.
            source = {k: v[0][0] for k, v in sources.items()}
            lo, hi = min(v[0][1] for v in sources.values()), max(v[0][2] for v in sources.values())
            moved = (hi - lo) if any(j != k for k, j in source.items()) else 0
            plans.append((moved, 1, ("single", (source, lo, hi))))
        moved, _, plan = min(plans, key=lambda p: p[:2])
        # As many bytes as gathering the dimension: one permute (a reverse's
        # mirror tile) still beats a gather, several do not.
        return plan if moved < (t - 1) * L or (moved == (t - 1) * L and plan[0] == "single") else None

    def _permute(self, v, s: Sharding, d: int, source_of):
        """A collective-permute: the device of tile index ``k`` along ``d``
        receives ``v`` from the device of tile index ``source_of(k)`` (same
        other indices and replica); zeros where that is outside the tiles."""
        m = index_map(s)
        by_index = {(tuple(m[dev]), self._replica_rank(s, dev)): dev for dev in range(self.n)}
        pairs = []
        for dev in range(self.n):
            index = list(m[dev])
            src = source_of(index[d])
            if 0 <= src < s.tile_dims[d]:
                index[d] = src
                pairs.append((by_index[(tuple(index), self._replica_rank(s, dev))], dev))
        return self._add("collective-permute", v.shape, [v], {
            "source_target_pairs": tuple(sorted(pairs)), "channel_id": self._next_channel()})

    def _cut(self, v, d: int, lo: int, hi: int) -> HloInstruction:
        """``v`` sliced to positions ``lo:hi`` of dimension ``d`` (``v`` itself when that is all of it)."""
        if (lo, hi) == (0, v.shape.dimensions[d]):
            return v
        dims = list(v.shape.dimensions)
        dims[d] = hi - lo
        lim = tuple((lo, hi, 1) if k == d else (0, x, 1) for k, x in enumerate(v.shape.dimensions))
        return self._add("slice", Shape(v.shape.element_type, dims), [v], {"slice": lim})

    def _window(self, v, s: Sharding, d: int, n: int, plan, window, fill):
        """``v`` (split as ``s``) cut along ``d`` to this device's window of
        :meth:`_window_plan`: the pieces of the tiles around it received by
        collective-permutes, put side by side, and the window sliced out at
        this device's offset; positions outside ``0:n`` ``fill`` when given."""
        start, size = window
        t = s.tile_dims[d]
        L = v.shape.dimensions[d]
        etype = v.shape.element_type
        kind, pieces = plan
        if kind == "single":
            source, lo, hi = pieces
            piece = self._cut(v, d, lo, hi)
            dims = list(piece.shape.dimensions)
            moved = {k: j for k, j in source.items() if j != k}
            buf = self._permute(piece, s, d, lambda k: moved.get(k, -1))
            if any(j == k for k, j in source.items()):         # a window in its own tile: kept
                own = self._lookup([int(source.get(s.tile_index(dev)[d]) == s.tile_index(dev)[d])
                                    for dev in range(self.n)])
                keep = self._add("compare", Shape(PRED, ()), [own, self._scalar(1)], {"direction": "EQ"})
                keep = self._add("broadcast", Shape(PRED, dims), [keep], {"dimensions": ()})
                buf = self._add("select", piece.shape, [keep, piece, buf])
            offsets = {k: start(k) - source.get(k, k) * L - lo for k in range(t)}
        else:
            parts = []
            for shift, (lo, hi) in sorted(pieces.items()):
                piece = self._cut(v, d, lo, hi)
                if shift != 0:
                    piece = self._permute(piece, s, d, lambda k, sh=shift: k + sh)
                parts.append(piece)
            buf = parts[0] if len(parts) == 1 else self._add(
                "concatenate", Shape(etype, [sum(p.shape.dimensions[d] for p in parts) if k == d else x
                                             for k, x in enumerate(v.shape.dimensions)]), parts, {"dimensions": (d,)})
            first = min(pieces)          # the buffer starts at this position of the operand
            offsets = {k: start(k) - (k + first) * L - pieces[first][0] for k in range(t)}
        length = buf.shape.dimensions[d]
        valid = [k for k in range(t) if max(start(k), 0) < min(start(k) + size, n)]
        low = max([0] + [-offsets[k] for k in valid])
        high = max([0] + [offsets[k] + size - length for k in valid])
        if low or high:
            dims = list(buf.shape.dimensions)
            dims[d] += low + high
            buf = self._add("pad", Shape(etype, dims), [buf, self._scalar(0, etype)],
                            {"padding": tuple((low, high, 0) if k == d else (0, 0, 0) for k in range(len(dims)))})
        length = buf.shape.dimensions[d]
        at = {k: min(max(offsets[k] + low, 0), length - size) for k in range(t)}
        dims = list(buf.shape.dimensions)
        dims[d] = size
        if length != size or any(at.values()):
            table = [at[s.tile_index(dev)[d]] for dev in range(self.n)]
            starts = [self._lookup(table) if k == d and any(table) else self._scalar(0) for k in range(len(dims))]
            buf = self._add("dynamic-slice", Shape(etype, dims), [buf] + starts, {"dynamic_slice_sizes": tuple(dims)})
        if fill is not None and any(start(k) < 0 or start(k) + size > n for k in range(t)):
            # Positions outside the operand take the fill (a pad's value).
            iota = self._add("iota", Shape(S32, dims), [], {"iota_dimension": d})
            first = self._lookup([start(s.tile_index(dev)[d]) for dev in range(self.n)])
            pos = self._add("add", Shape(S32, dims), [iota, self._add("broadcast", Shape(S32, dims), [first],
                                                                       {"dimensions": ()})])
            zero = self._add("broadcast", Shape(S32, dims), [self._scalar(0)], {"dimensions": ()})
            end = self._add("broadcast", Shape(S32, dims), [self._scalar(n)], {"dimensions": ()})
            inside = self._add("and", Shape(PRED, dims), [
                self._add("compare", Shape(PRED, dims), [pos, zero], {"direction": "GE"}),
                self._add("compare", Shape(PRED, dims), [pos, end], {"direction": "LT"})])
            filled = self._add("broadcast", Shape(etype, dims), [fill], {"dimensions": ()})
            buf = self._add("select", Shape(etype, dims), [inside, buf, filled])
        return buf

    def _op_concatenate(self, inst, want):
        s = self._kept_sharding(inst, want[0])
        ops = [self._operand(inst, k, s) for k in range(len(inst.operands))]
        new = self._add("concatenate", self._local_shape(inst.shape, s), ops, _attrs(inst), inst.name)
        return self.reshard(new, s, want[0], inst.shape, inst.name), want

    def _op_iota(self, inst, want):
        """This device's part of the iota: a local iota plus where its tile starts."""
        s = want[0]
        if inst.shape.is_tuple or s.is_replicated:
            return self._replicated_whole(inst)
        d = int(inst.attrs.get("iota_dimension", 0))
        local = self._local_shape(inst.shape, s)
        new = self._add("iota", local, [], _attrs(inst), None if s.tile_dims[d] > 1 else inst.name)
        if s.tile_dims[d] == 1:
            return new, want
        etype = inst.shape.element_type
        start = self._offset(s, d, inst.shape.dimensions)
        if etype != S32:
            start = self._add("convert", Shape(etype, ()), [start])
        at = self._add("broadcast", local, [start], {"dimensions": ()})
        return self._add("add", local, [new, at], {}, inst.name), want

    # -- gather and scatter -------------------------------------------------------------
    def _index_columns(self, iv, ivd: int, count: int) -> list:
        """The ``count`` index columns of the local indices ``iv`` (index vector dimension ``ivd``)."""
        dims = list(iv.shape.dimensions)
        if ivd == len(dims):
            return [iv]
        out = []
        batch = [n for k, n in enumerate(dims) if k != ivd]
        for j in range(count):
            lim = tuple((j, j + 1, 1) if k == ivd else (0, n, 1) for k, n in enumerate(dims))
            one = [1 if k == ivd else n for k, n in enumerate(dims)]
            col = self._add("slice", Shape(iv.shape.element_type, one), [iv], {"slice": lim})
            out.append(self._add("reshape", Shape(iv.shape.element_type, batch), [col]))
        return out

    def _join_columns(self, cols: list, ivd: int, dims: list, etype):
        if ivd == len(dims):
            return cols[0]
        one = [1 if k == ivd else n for k, n in enumerate(dims)]
        parts = [self._add("reshape", Shape(etype, one), [c]) for c in cols]
        return parts[0] if len(parts) == 1 else self._add("concatenate", Shape(etype, dims), parts,
                                                          {"dimensions": (ivd,)})

    def _localize(self, cols: list, start_map: list, s: Sharding, xshape: Shape, window: list, skip: bool):
        """The index columns made local to this device's tile of the operand
        (split as ``s``) along the split indexed dimensions, and where each
        index row lands in this device's tile (a pred per row, None when
        nothing is split).  ``skip`` (scatter): a row outside is pointed past
        the tile, so the update is skipped; else (gather) the global index is
        clamped first, as gather clamps it, and the row is masked after."""
        inside = None
        out = list(cols)
        for j, d in enumerate(start_map):
            if s.tile_dims[d] == 1:
                continue
            c = cols[j]
            etype = c.shape.element_type
            bdims = c.shape.dimensions
            n, size = xshape.dimensions[d], local_dims(s, xshape.dimensions)[d]

            def full(value, et=etype):
                return self._add("broadcast", Shape(et, bdims), [value], {"dimensions": ()})

            def const(v):
                return full(self._scalar(v, etype))

            off = self._offset(s, d, xshape.dimensions)
            if etype != S32:
                off = self._add("convert", Shape(etype, ()), [off])
            hi = n - window[d]
            if skip:
                ok = self._add("and", Shape(PRED, bdims), [
                    self._add("compare", Shape(PRED, bdims), [c, const(0)], {"direction": "GE"}),
                    self._add("compare", Shape(PRED, bdims), [c, const(hi)], {"direction": "LE"})])
            else:
                c = self._add("clamp", c.shape, [const(0), c, const(hi)])
            loc = self._add("subtract", c.shape, [c, full(off)])
            here = self._add("and", Shape(PRED, bdims), [
                self._add("compare", Shape(PRED, bdims), [loc, const(0)], {"direction": "GE"}),
                self._add("compare", Shape(PRED, bdims), [loc, const(size - window[d] + 1)],
                          {"direction": "LT"})])
            if skip:
                here = self._add("and", Shape(PRED, bdims), [here, ok])
                loc = self._add("select", c.shape, [here, loc, const(size)])
            out[j] = loc
            inside = here if inside is None else self._add("and", Shape(PRED, bdims), [inside, here])
        return out, inside

    def _op_gather(self, inst, want):
        """Operand split on dimensions a slice takes whole (its tile sliced
        locally) and on indexed dimensions of slice size 1 (each device
        gathers the rows it holds, zeros elsewhere, an all-reduce adds them);
        indices split on their batch dimensions (the result split alike)."""
        offset, collapsed, start_map, ivd, sizes, obatch = gather_dims(inst)
        if inst.shape.is_tuple:
            raise _Fallback("a tuple gather")
        if obatch:
            return self._batched_gather(inst, want, obatch, ivd)
        x, idx = inst.operands
        (_, hx), (_, hi) = self.value[x], self.value[idx]
        src = gather_sources(inst)
        xr = len(x.shape.dimensions)
        passthrough = [s[1] for s in src if s and s[0] == "o"]
        indexed = [d for d in start_map if sizes[d] == 1]
        xp = remap(hx[0], [d if d in passthrough or d in indexed else None for d in range(xr)])
        ip = remap(hi[0], [None if k == ivd else k for k in range(len(idx.shape.dimensions))])
        from_x = remap(xp, [s[1] if s and s[0] == "o" else None for s in src])
        split = [d for d in indexed if xp.tile_dims[d] > 1]
        parts = math.prod(xp.tile_dims[d] for d in split)
        mx = index_map(xp)
        # The indices as they are split, else whole (when the devices holding
        # a tile of the result must also hold every part of the operand).
        for ip_try in (ip, replicated(self.n, len(idx.shape.dimensions))):
            from_i = remap(ip_try, [s[1] if s and s[0] == "i" else None for s in src])
            result = combine(from_x, from_i) if not from_i.is_replicated else from_x
            if result is None:
                continue
            groups = None
            if parts > 1:
                groups = self._groups_for_sum(index_map(result), {dev: tuple(mx[dev][d] for d in split)
                                                                  for dev in range(self.n)}, parts)
                if groups is None:
                    continue
            ip = ip_try
            break
        else:
            raise _Fallback("the operand's and the indices' splits do not agree")
        xv = self._operand(inst, 0, xp)
        iv = self._operand(inst, 1, ip)
        cols, inside = self._index_columns(iv, ivd, len(start_map)), None
        if split:
            cols, inside = self._localize(cols, start_map, xp, x.shape, sizes, skip=False)
            iv = self._join_columns(cols, ivd, list(iv.shape.dimensions), iv.shape.element_type)
        local = self._local_shape(inst.shape, result)
        attrs = _attrs(inst)
        attrs["slice_sizes"] = tuple(local_dims(xp, x.shape.dimensions)[d] if d in passthrough else sizes[d]
                                     for d in range(xr))
        out = self._add("gather", local, [xv, iv], attrs, inst.name)
        if groups is None:
            return self.reshard(out, result, want[0], inst.shape, inst.name), want
        batch_pos = [k for k in range(len(inst.shape.dimensions)) if k not in offset]
        mask = self._add("broadcast", Shape(PRED, local.dimensions), [inside], {"dimensions": tuple(batch_pos)})
        zero = self._add("broadcast", local, [self._scalar(0, inst.shape.element_type)], {"dimensions": ()})
        out = self._add("select", local, [mask, out, zero])
        out = self._add("all-reduce", local, [out], {
            "replica_groups": ReplicaGroups.of(groups), "channel_id": self._next_channel(),
            "use_global_device_ids": True, "to_apply": self._adder(inst.shape.element_type)})
        return self.reshard(out, result, want[0], inst.shape, inst.name), want

    def _batched_gather(self, inst, want, obatch: list, ivd: int):
        """A gather with batching dimensions (``take_along_axis``): split on
        the indices' dimensions as they are, the operand's batching
        dimensions split as the indices' they pair with and the rest whole
        (indices split on no batching dimension: cut as the operand's
        batching dimensions are); each device gathers from its own tiles."""
        x, idx = inst.operands
        ibatch = list(inst.attrs.get("start_indices_batching_dims", ()))
        ip = remap(self.value[idx][1][0], [None if k == ivd else k for k in range(len(idx.shape.dimensions))])
        xp = remap(ip, [ibatch[obatch.index(d)] if d in obatch else None for d in range(len(x.shape.dimensions))])
        if xp.is_replicated:
            # Indices whole (a broadcast), the operand split on a batching
            # dimension: the indices cut alike, locally.
            xr, ir = len(x.shape.dimensions), len(idx.shape.dimensions)
            xp = remap(self.value[x][1][0], [d if d in obatch else None for d in range(xr)])
            if xp.is_replicated:
                raise _Fallback("a batched gather split on no batching dimension")
            ip = remap(xp, [obatch[ibatch.index(k)] if k in ibatch else None for k in range(ir)])
        result = remap(ip, [src[1] if src and src[0] == "i" else None for src in gather_sources(inst)])
        out = self._add("gather", self._local_shape(inst.shape, result),
                        [self._operand(inst, 0, xp), self._operand(inst, 1, ip)], _attrs(inst), inst.name)
        return self.reshard(out, result, want[0], inst.shape, inst.name), want

    def _batched_scatter(self, inst, want, ivd: int):
        """A scatter with batching dimensions (the gradient of
        ``take_along_axis``): split on the operand's batching dimensions, the
        indices and the updates split alike on the dimensions they pair with;
        each device scatters into its own tile."""
        a = inst.attrs
        x, idx, upd = inst.operands
        obatch, ibatch = list(a.get("input_batching_dims", ())), list(a.get("scatter_indices_batching_dims", ()))
        s = remap(want[0], [d if d in obatch else None for d in range(len(x.shape.dimensions))])
        if s.is_replicated:
            raise _Fallback("a batched scatter whose operand is not split on a batching dimension")
        ir = len(idx.shape.dimensions)
        ip = remap(s, [obatch[ibatch.index(k)] if k in ibatch else None for k in range(ir)])
        # The updates' scatter dimensions are the indices' dimensions but the index vector's, in order.
        uwd = list(a.get("update_window_dims", ()))
        scatter_dims = [k for k in range(len(upd.shape.dimensions)) if k not in uwd]
        idx_dims = [k for k in range(ir) if k != ivd]
        up = remap(ip, [idx_dims[scatter_dims.index(k)] if k in scatter_dims else None
                        for k in range(len(upd.shape.dimensions))])
        new = self._add("scatter", self._local_shape(inst.shape, s),
                        [self._operand(inst, 0, s), self._operand(inst, 1, ip), self._operand(inst, 2, up)],
                        _attrs(inst), inst.name)
        return self.reshard(new, s, want[0], inst.shape, inst.name), want

    def _op_scatter(self, inst, want):
        """Operand split on window dimensions the updates cover whole (the
        updates split alike) and on indexed dimensions of window size 1: each
        device applies the updates that land in its tile (the others are
        pointed past it, so skipped); indices and the scattered dimensions of
        the updates whole."""
        if len(inst.operands) != 3 or inst.shape.is_tuple:
            raise _Fallback("a variadic scatter")
        a = inst.attrs
        uwd, inserted = list(a.get("update_window_dims", ())), list(a.get("inserted_window_dims", ()))
        sdod, ivd = list(a.get("scatter_dims_to_operand_dims", ())), a.get("index_vector_dim")
        x, idx, upd = inst.operands
        xr = len(x.shape.dimensions)
        if ivd is None:
            ivd = len(idx.shape.dimensions)
        if a.get("input_batching_dims"):
            return self._batched_scatter(inst, want, ivd)
        passed = self._index_passthrough_scatter(inst, want, ivd)
        if passed is not None:
            return passed
        window_of = [d for d in range(xr) if d not in inserted]      # operand dim of each update window dim
        window = [1] * xr
        for k, d in enumerate(window_of):
            window[d] = upd.shape.dimensions[uwd[k]]
        keep = [d for d in range(xr) if (d not in sdod and window[d] == x.shape.dimensions[d]) or
                (d in sdod and window[d] == 1)]
        s = remap(want[0], [d if d in keep else None for d in range(xr)])
        up = remap(s, [None if k not in uwd or window_of[uwd.index(k)] in sdod else window_of[uwd.index(k)]
                       for k in range(len(upd.shape.dimensions))])
        xv = self._operand(inst, 0, s)
        iv = self._operand(inst, 1, replicated(self.n, len(idx.shape.dimensions)))
        uv = self._operand(inst, 2, up)
        if any(s.tile_dims[d] > 1 for d in sdod):
            cols = self._index_columns(iv, ivd, len(sdod))
            cols, _ = self._localize(cols, sdod, s, x.shape, window, skip=True)
            iv = self._join_columns(cols, ivd, list(iv.shape.dimensions), iv.shape.element_type)
        new = self._add("scatter", self._local_shape(inst.shape, s), [xv, iv, uv], _attrs(inst), inst.name)
        return self.reshard(new, s, want[0], inst.shape, inst.name), want

    def _index_passthrough_scatter(self, inst, want, ivd: int):
        """A scatter whose indices come split along their rows (the updates'
        scatter dimensions split alike) and whose combiner has an identity
        (add, multiply, max, min, and, or), when its rows outweigh the
        operand: each device scatters its own rows into the whole operand —
        the operand on the first device of each group of row tiles, the
        identity on the others — and the groups' results are all-reduced
        with the combiner (XLA's index-passthrough partitioning: an
        unreduced result keeps each device's part).  None when it does not
        apply, or when the result is wanted split (each device then
        scatters into its tile, the rows gathered)."""
        x, idx, upd = inst.operands
        have = self.value[idx][1][0]
        ir = len(idx.shape.dimensions)
        rows = [k for k in range(ir) if k != ivd and have.tile_dims[k] > 1]
        kind = reducer_opcode(inst.attrs["to_apply"])
        identity = _identity(kind, x.shape.element_type)
        if not rows or identity is None or not want[0].is_replicated or \
                _bytes(idx.shape) + _bytes(upd.shape) < _bytes(x.shape):
            return None
        ip = remap(have, [k if k in rows else None for k in range(ir)])
        uwd = list(inst.attrs.get("update_window_dims", ()))
        scatter_dims = [k for k in range(len(upd.shape.dimensions)) if k not in uwd]
        idx_dims = [k for k in range(ir) if k != ivd]
        up = remap(ip, [idx_dims[scatter_dims.index(k)] if k in scatter_dims else None
                        for k in range(len(upd.shape.dimensions))])
        parts, groups = self._reduced_groups(ip, [], rows)
        whole = replicated(self.n, len(x.shape.dimensions))
        xv = self._operand(inst, 0, whole)
        m = index_map(ip)
        first = self._lookup([int(all(m[dev][k] == 0 for k in rows)) for dev in range(self.n)])
        pred = self._add("compare", Shape(PRED, ()), [first, self._scalar(0)], {"direction": "NE"})
        pred = self._add("broadcast", Shape(PRED, x.shape.dimensions), [pred], {"dimensions": ()})
        fill = self._add("broadcast", x.shape, [self._scalar(identity, x.shape.element_type)], {"dimensions": ()})
        xv = self._add("select", x.shape, [pred, xv, fill])
        local = self._add("scatter", inst.shape, [xv, self._operand(inst, 1, ip), self._operand(inst, 2, up)],
                          _attrs(inst), inst.name)
        summed = self._add("all-reduce", local.shape, [local], {
            "replica_groups": ReplicaGroups.of(groups), "channel_id": self._next_channel(),
            "use_global_device_ids": True, "to_apply": inst.attrs["to_apply"]})
        return self.reshard(summed, whole, want[0], inst.shape, inst.name), want

    # -- convolution ------------------------------------------------------------------
    def _op_convolution(self, inst, want):
        """Batch split (the input's batch, the kernel whole), output features
        split (the kernel's, the input whole), a spatial dimension split (the
        input's, each tile extended by the neighbours' edges: a halo exchange
        by collective-permute); input features whole, or split as the input's
        are with the partial sums all-reduced."""
        from ..hlo.window import conv_dimension_numbers_of, window_of
        dn = conv_dimension_numbers_of(inst.attrs)
        if int(inst.attrs.get("feature_group_count", 1) or 1) > 1 or \
                int(inst.attrs.get("batch_group_count", 1) or 1) > 1:
            raise _Fallback("a grouped convolution")
        lhs, rhs = inst.operands
        S = want[0]
        contracting = self._conv_over_split_features(inst, dn, S)
        if contracting is not None:
            return contracting, want
        win = window_of(inst.attrs)
        spatial = [k for k, o in enumerate(dn.output_spatial_dimensions) if S.tile_dims[o] > 1]
        halo = [k for k in spatial if self._halo_fits(win.dimensions[k], lhs.shape.dimensions[
            dn.input_spatial_dimensions[k]], S.tile_dims[dn.output_spatial_dimensions[k]])]
        if len(halo) < len(spatial):
            windowed = self._conv_windowed(inst, dn, win, S, spatial)
            if windowed is not None:
                return windowed, want
        result, lp, rp = self._conv_tiles(inst, dn, S, halo)
        lv = self._operand(inst, 0, lp)
        rv = self._operand(inst, 1, rp)
        attrs = _attrs(inst)
        if halo:
            dims = list(win.dimensions)
            for k in halo:
                w = dims[k]
                lv = self._exchange_halo(lv, lp, dn.input_spatial_dimensions[k], w.padding_low, w.padding_high)
                dims[k] = type(w)(w.size, w.stride, 0, 0, w.window_dilation, w.base_dilation, w.window_reversal)
            from ..hlo.window import Window, format_window
            attrs["window"] = Raw(format_window(Window(tuple(dims))))
        new = self._add("convolution", self._local_shape(inst.shape, result), [lv, rv], attrs, inst.name)
        return self.reshard(new, result, S, inst.shape, inst.name), want

    @staticmethod
    def _conv_tiles(inst, dn, S: Sharding, spatial: list) -> tuple:
        """(result, input, kernel) shardings of a convolution computed on
        tiles: the result split as ``S`` on batch, output features and the
        ``spatial`` dimensions (window indices), the input as its batch and
        those dimensions, the kernel as the output features."""
        lhs, rhs = inst.operands
        keep = {dn.output_batch_dimension, dn.output_feature_dimension} | \
            {dn.output_spatial_dimensions[k] for k in spatial}
        result = remap(S, [k if k in keep else None for k in range(len(S.tile_dims))])
        src_l = {dn.input_batch_dimension: dn.output_batch_dimension} | \
            {dn.input_spatial_dimensions[k]: dn.output_spatial_dimensions[k] for k in spatial}
        lp = remap(result, [src_l.get(j) for j in range(len(lhs.shape.dimensions))])
        rp = remap(result, [dn.output_feature_dimension if j == dn.kernel_output_feature_dimension else None
                            for j in range(len(rhs.shape.dimensions))])
        return result, lp, rp

    def _conv_windowed(self, inst, dn, win, S: Sharding, spatial: list):
        """A convolution split on spatial dimensions its windows cross between
        tiles otherwise than a stride-1 halo (a stride, uneven padding): each
        device gets the window of the input its output tile reads
        (:meth:`_windowed`: the neighbours' pieces by collective-permute,
        zeros past the ends for the padding) and convolves it unpadded; None
        when a window has dilations or reaches further than gathering."""
        lhs = inst.operands[0]
        if any(win.dimensions[k].window_dilation != 1 or win.dimensions[k].base_dilation != 1
               for k in spatial):
            return None
        result, lp, rp = self._conv_tiles(inst, dn, S, spatial)
        local_out = self._local_shape(inst.shape, result).dimensions
        local_in = self._local_shape(lhs.shape, lp).dimensions
        windows = {dn.input_batch_dimension: (lambda k, L=local_in[dn.input_batch_dimension]: k * L,
                                              local_in[dn.input_batch_dimension])}
        for k in spatial:
            w, lo = win.dimensions[k], local_out[dn.output_spatial_dimensions[k]]
            windows[dn.input_spatial_dimensions[k]] = (lambda j, lo=lo, w=w: j * lo * w.stride - w.padding_low,
                                                       (lo - 1) * w.stride + w.size)
        got = self._windowed(inst, lp, windows, fill=self._scalar(0, lhs.shape.element_type))
        if got is None:
            return None
        lv, cut = got
        dims = [type(w)(w.size, w.stride, 0, 0, 1, 1, w.window_reversal)
                if dn.input_spatial_dimensions[k] in cut else w for k, w in enumerate(win.dimensions)]
        from ..hlo.window import Window, format_window
        attrs = _attrs(inst)
        attrs["window"] = Raw(format_window(Window(tuple(dims))))
        new = self._add("convolution", self._local_shape(inst.shape, result), [lv, self._operand(inst, 1, rp)],
                        attrs, inst.name)
        return self.reshard(new, result, S, inst.shape, inst.name)

    def _conv_over_split_features(self, inst, dn, want: Sharding):
        """A convolution whose input features are split (a data-parallel
        step's kernel gradient contracts over the split batch; a layer after a
        feature-split one): each device convolves its part (its batch split
        kept) and an all-reduce adds the partial sums, when that moves fewer
        bytes than gathering the features; else None."""
        lhs, rhs = inst.operands
        hl, hr = self.value[lhs][1][0], self.value[rhs][1][0]
        f, kf, b = dn.input_feature_dimension, dn.kernel_input_feature_dimension, dn.input_batch_dimension
        t = hl.tile_dims[f]
        if t <= 1:
            return None
        lrank, rrank, orank = (len(x.shape.dimensions) for x in (lhs, rhs, inst))
        ko = dn.kernel_output_feature_dimension
        lp = remap(hl, [j if j in (f, b) else None for j in range(lrank)])
        rp = remap(lp, [f if j == kf else None for j in range(rrank)])
        # The kernel's output features stay split as they are where the devices agree.
        rp = combine(rp, remap(hr, [j if j == ko else None for j in range(rrank)])) or rp
        from_l = remap(lp, [b if k == dn.output_batch_dimension else None for k in range(orank)])
        from_r = remap(rp, [ko if k == dn.output_feature_dimension else None for k in range(orank)])
        result = combine(from_l, from_r) if not from_r.is_replicated else from_l
        if result is None:
            return None
        ml, mr = index_map(lp), index_map(rp)
        groups = self._groups_for_sum({dev: (ml[dev][b], mr[dev][ko]) for dev in ml},
                                      {dev: (ml[dev][f],) for dev in ml}, t)
        if groups is None:
            return None
        local = self._local_shape(inst.shape, result)
        gather = self.reshard_cost(hl, remap(hl, [j if j == b else None for j in range(lrank)]), lhs.shape) + \
            self.reshard_cost(hr, remap(hr, [j if j == ko else None for j in range(rrank)]), rhs.shape)
        reduce = self.reshard_cost(hl, lp, lhs.shape) + self.reshard_cost(hr, rp, rhs.shape) + \
            2 * _bytes(local) * (t - 1) // t
        if reduce >= gather:
            return None
        lv = self._mask(self._operand(inst, 0, lp), lp, lhs.shape, f, self._scalar(0, lhs.shape.element_type))
        rv = self._mask(self._operand(inst, 1, rp), rp, rhs.shape, kf, self._scalar(0, rhs.shape.element_type))
        part = self._add("convolution", local, [lv, rv], _attrs(inst), inst.name)
        summed = self._add("all-reduce", local, [part], {
            "replica_groups": ReplicaGroups.of(groups), "channel_id": self._next_channel(),
            "use_global_device_ids": True, "to_apply": self._adder(inst.shape.element_type)})
        return self.reshard(summed, result, want, inst.shape, inst.name)

    def _op_reduce_window(self, inst, want):
        """Split as its operand: along a split dimension each device reduces
        its window of the operand (:meth:`_window`: its tile with the
        neighbours' edges, positions past the ends the init value, as the
        padding), the window's padding there dropped; dimensions not split
        keep theirs."""
        from ..hlo.window import Window, format_window, window_of
        if len(inst.operands) != 2 or inst.shape.is_tuple:
            raise _Fallback("a variadic reduce-window")
        s = want[0]
        win = window_of(inst.attrs)
        if any(w.window_dilation != 1 or w.base_dilation != 1 for k, w in enumerate(win.dimensions)
               if s.tile_dims[k] > 1):
            raise _Fallback("a dilated window on a split dimension")
        init = self._operand(inst, 1, replicated(self.n, 0))
        local = self._local_shape(inst.shape, s)
        windows = {}
        for k, w in enumerate(win.dimensions):
            lo = local.dimensions[k]
            windows[k] = (lambda j, L=lo, w=w: j * L * w.stride - w.padding_low, (lo - 1) * w.stride + w.size)
        if s.is_replicated:
            xv, cut = self._operand(inst, 0, s), []
        else:
            got = self._windowed(inst, s, windows, fill=init)
            if got is None:
                raise _Fallback("a window wider than the neighbouring tiles")
            xv, cut = got
        dims = [type(w)(w.size, w.stride, 0, 0, 1, 1, w.window_reversal) if k in cut else w
                for k, w in enumerate(win.dimensions)]
        attrs = _attrs(inst)
        attrs["window"] = Raw(format_window(Window(tuple(dims))))
        return self._add("reduce-window", local, [xv, init], attrs, inst.name), want

    @staticmethod
    def _halo_fits(w, n: int, t: int) -> bool:
        """A spatial dimension of ``n`` split ``t`` ways evenly, computed from
        each tile and its neighbours' edges: stride 1, no dilation, the
        padding as wide as the window less one (the output as long as the
        input), the edges no longer than a tile."""
        size = n // t if n % t == 0 else 0
        return (size > 0 and w.stride == 1 and w.window_dilation == 1 and w.base_dilation == 1
                and w.padding_low >= 0 and w.padding_high >= 0 and w.padding_low + w.padding_high == w.size - 1
                and max(w.padding_low, w.padding_high) <= size)

    def _exchange_halo(self, v, s: Sharding, d: int, low: int, high: int):
        """``v`` (split as ``s`` along ``d``) with its left neighbour's last
        ``low`` and its right neighbour's first ``high`` elements along ``d``
        around it (zeros past the ends: the convolution's padding)."""
        m = index_map(s)
        etype = v.shape.element_type
        dims = list(v.shape.dimensions)
        size = dims[d]
        parts = []
        for width, step, start in ((low, 1, size - low), (high, -1, 0)):
            if width == 0:
                continue
            pairs = []
            for dev in range(self.n):
                index = list(m[dev])
                index[d] += step
                rank = self._replica_rank(s, dev)
                target = [t for t in range(self.n) if tuple(m[t]) == tuple(index) and self._replica_rank(s, t) == rank]
                if 0 <= index[d] < s.tile_dims[d] and target:
                    pairs.append((dev, target[0]))
            edge_dims = list(dims)
            edge_dims[d] = width
            lim = tuple((start, start + width, 1) if k == d else (0, n, 1) for k, n in enumerate(dims))
            edge = self._add("slice", Shape(etype, edge_dims), [v], {"slice": lim})
            got = self._add("collective-permute", edge.shape, [edge], {
                "source_target_pairs": tuple(pairs), "channel_id": self._next_channel()})
            parts.append((step, got))
        left = [g for st, g in parts if st == 1]
        right = [g for st, g in parts if st == -1]
        pieces = left + [v] + right
        if len(pieces) == 1:
            return v
        dims[d] = size + low + high
        return self._add("concatenate", Shape(etype, dims), pieces, {"dimensions": (d,)})

    # -- control flow -------------------------------------------------------------------
    def _reshard_value(self, v, have: list, want: list, shape: Shape, why: str):
        """``v`` (a value or a flat tuple, split as ``have`` per leaf) split as ``want``."""
        if not shape.is_tuple:
            return self.reshard(v, have[0], want[0], shape, why)
        if list(have) == list(want):
            return v
        if any(s.is_tuple for s in shape.tuple_shapes):
            raise _Fallback("a nested tuple")
        parts = []
        for k, (leaf, h, w) in enumerate(zip(shape.tuple_shapes, have, want)):
            x = self._add("get-tuple-element", v.shape.tuple_shapes[k], [v], {"index": k})
            parts.append(self.reshard(x, h, w, leaf, why))
        return self._add("tuple", Shape.tuple([p.shape for p in parts]), parts)

    def _op_while(self, inst, want):
        """The loop on tiles: its state split as its sharding says (the fixed
        point propagation found), the body's parameter and root and the
        condition's parameter split alike."""
        x = inst.operands[0]
        if x.shape.is_tuple and any(s.is_tuple for s in x.shape.tuple_shapes):
            raise _Fallback("a nested tuple state")
        v, have = self.value[x]
        init = self._reshard_value(v, have, want, x.shape, inst.name)
        body = self._sub_computation(inst.attrs["body"], {0: want}, want)
        cond = self._sub_computation(inst.attrs["condition"], {0: want}, [replicated(self.n, 0)])
        attrs = _attrs(inst)
        attrs["body"], attrs["condition"] = body, cond
        return self._add("while", init.shape, [init], attrs, inst.name), want

    def _op_conditional(self, inst, want):
        """Each branch on tiles: its parameter split as its operand is, its
        root resharded to the conditional's sharding; the branch index whole."""
        from ..hlo.dynamic import branch_computations
        if any(s.is_tuple for s in (inst.shape.tuple_shapes if inst.shape.is_tuple else ())):
            raise _Fallback("a nested tuple result")
        ops = [self._operand(inst, 0, replicated(self.n, len(inst.operands[0].shape.dimensions)))]
        branches = []
        for k, branch in enumerate(branch_computations(inst.attrs)):
            v, have = self.value[inst.operands[k + 1]]
            ops.append(v)
            branches.append(self._sub_computation(branch, {0: have}, want))
        attrs = _attrs(inst)
        if "branch_computations" in attrs:
            attrs["branch_computations"] = tuple(branches)
        else:
            attrs["true_computation"], attrs["false_computation"] = branches
        shape = branches[0].root.shape
        return self._add("conditional", shape, ops, attrs, inst.name), want

    # -- dot ----------------------------------------------------------------------------
    def _dot_plan(self, inst, lp: Sharding, rp: Sharding, want: Sharding):
        """A dot computed from operands split as ``lp`` and ``rp``: (result
        sharding, all-reduce groups or None, parts, cost) or None when the
        two do not agree on batch and contracting dimensions."""
        lb, lc, lf, rb, rc, rf = _dot_dims(inst)
        ml, mr = index_map(lp), index_map(rp)
        for dev in range(self.n):
            if [ml[dev][k] for k in lb] != [mr[dev][k] for k in rb] or \
                    [ml[dev][k] for k in lc] != [mr[dev][k] for k in rc]:
                return None
        if [lp.tile_dims[k] for k in lb + lc] != [rp.tile_dims[k] for k in rb + rc]:
            return None
        tile_dims = [lp.tile_dims[k] for k in lb + lf] + [rp.tile_dims[k] for k in rf]
        out_index = {dev: tuple([ml[dev][k] for k in lb + lf] + [mr[dev][k] for k in rf]) for dev in range(self.n)}
        result = from_index_map(tile_dims, out_index)
        if result is None:
            return None
        parts = math.prod(lp.tile_dims[k] for k in lc)
        groups = None
        if parts > 1:
            groups = self._groups_for_sum(out_index, {dev: tuple(ml[dev][k] for k in lc) for dev in range(self.n)},
                                          parts)
            if groups is None:
                return None
        lhs, rhs = inst.operands
        (_, hl), (_, hr) = self.value[lhs], self.value[rhs]
        # Bytes moved, plus the bytes the local dot reads and writes: gathering
        # a split contracting dimension (data parallelism's batch) would hold
        # the whole activations on every device, partial sums hold tiles.
        local = _bytes(self._local_shape(inst.shape, result))
        cost = self.reshard_cost(hl[0], lp, lhs.shape) + self.reshard_cost(hr[0], rp, rhs.shape) + \
            _bytes(self._local_shape(lhs.shape, lp)) + _bytes(self._local_shape(rhs.shape, rp)) + local
        scatter = self._scatter_plan(result, want, groups, parts, inst.shape) if groups else None
        if scatter is not None:
            cost += local * (parts - 1) // parts
        else:
            if groups:
                cost += 2 * local * (parts - 1) // parts
            cost += self.reshard_cost(result, want, inst.shape)
        return result, groups, parts, scatter, cost

    def _scatter_plan(self, result: Sharding, want: Sharding, groups, parts: int, shape: Shape):
        """(dimension, groups ordered by tile) when the partial sums can be
        reduce-scattered straight into ``want``, else None."""
        split = [d for d in range(len(shape.dimensions)) if want.tile_dims[d] != result.tile_dims[d]]
        if len(split) != 1:
            return None
        e = split[0]
        if result.tile_dims[e] != 1 or want.tile_dims[e] != parts or shape.dimensions[e] % parts:
            return None
        mr, mw = index_map(result), index_map(want)
        ordered = []
        for g in groups:
            if sorted(mw[d][e] for d in g) != list(range(parts)):
                return None
            for d in g:
                if tuple(x for k, x in enumerate(mw[d]) if k != e) != tuple(x for k, x in enumerate(mr[d]) if k != e):
                    return None
            ordered.append(sorted(g, key=lambda d: mw[d][e]))
        return e, ordered

    def _op_dot(self, inst, want):
        lhs, rhs = inst.operands
        (lv, hl), (rv, hr) = self.value[lhs], self.value[rhs]
        L, R, S = hl[0], hr[0], want[0]
        lb, lc, lf, rb, rc, rf = _dot_dims(inst)
        nb, nl = len(lb), len(lf)
        lrank, rrank = len(lhs.shape.dimensions), len(rhs.shape.dimensions)
        # The operands split as the result is (no partial sums).
        src_l = {d: i for i, d in enumerate(lb)} | {d: nb + i for i, d in enumerate(lf)}
        src_r = {d: i for i, d in enumerate(rb)} | {d: nb + nl + i for i, d in enumerate(rf)}
        candidates = [(remap(S, [src_l.get(j) for j in range(lrank)]), remap(S, [src_r.get(j) for j in range(rrank)]))]
        # One operand as it is, the other made to agree (batch, contracting) and keep its free split.
        for keep, other, kdims, odims, ofree, orank, oh in (
                (L, "r", lb + lc, rb + rc, rf, rrank, R), (R, "l", rb + rc, lb + lc, lf, lrank, L)):
            mk, mo = index_map(keep), index_map(oh)
            agree = {dev: [0] * orank for dev in range(self.n)}
            tdims = [1] * orank
            for kd, od in zip(kdims, odims):
                tdims[od] = keep.tile_dims[kd]
                for dev in range(self.n):
                    agree[dev][od] = mk[dev][kd]
            with_free = dict((dev, list(v)) for dev, v in agree.items())
            tfree = list(tdims)
            for d in ofree:
                tfree[d] = oh.tile_dims[d]
                for dev in range(self.n):
                    with_free[dev][d] = mo[dev][d]
            # With its free dimensions split as they are, and whole (when the
            # result could not be split both ways, the free split is gathered).
            for dims, index in ((tfree, with_free), (tdims, agree)):
                made = from_index_map(dims, {dev: tuple(v) for dev, v in index.items()})
                if made is not None:
                    candidates.append((L, made) if other == "r" else (made, R))
        best = None
        for lp, rp in candidates:
            plan = self._dot_plan(inst, lp, rp, S)
            if plan is not None and (best is None or plan[-1] < best[-1][-1]):
                best = ((lp, rp), plan)
        if best is None:
            raise _Fallback("no split of the operands agrees on the batch and contracting dimensions")
        (lp, rp), (result, groups, parts, scatter, _) = best
        lv = self.reshard(lv, L, lp, lhs.shape, inst.name)
        rv = self.reshard(rv, R, rp, rhs.shape, inst.name)
        zero = self._scalar(0, lhs.shape.element_type)
        for k in lc:
            lv = self._mask(lv, lp, lhs.shape, k, zero)
        zero = self._scalar(0, rhs.shape.element_type)
        for k in rc:
            rv = self._mask(rv, rp, rhs.shape, k, zero)
        attrs = _attrs(inst)
        local = self._add("dot", self._local_shape(inst.shape, result), [lv, rv], attrs, inst.name)
        if groups is None:
            return self.reshard(local, result, S, inst.shape, inst.name), want
        add = self._adder(inst.shape.element_type)
        if scatter is not None:
            e, ordered = scatter
            dims = list(local.shape.dimensions)
            dims[e] //= parts
            out = self._add("reduce-scatter", Shape(inst.shape.element_type, dims), [local], {
                "dimensions": (e,), "replica_groups": ReplicaGroups.of(ordered), "channel_id": self._next_channel(),
                "use_global_device_ids": True, "to_apply": add})
            return out, want
        summed = self._add("all-reduce", local.shape, [local], {
            "replica_groups": ReplicaGroups.of(groups), "channel_id": self._next_channel(),
            "use_global_device_ids": True, "to_apply": add})
        return self.reshard(summed, result, S, inst.shape, inst.name), want


#: ``f(instruction, sharding)``, called for each ``InspectSharding`` custom call
#: (``jax.debug.inspect_array_sharding``) with the sharding its operand is
#: partitioned with: the jax backend's, which calls jax's callback (None: none).
inspect_sharding = None


def partition_module(module: HloModule) -> SpmdSignature | None:
    """Propagate shardings over ``module`` and partition it, in place, into
    the per-device program; its signature, or None when ``module`` is not a
    global program with automatic shardings (:func:`is_auto_sharded`)."""
    # A host callback comes with a one-device mesh: say what the program really needs.
    check_no_host_callback(module)
    if not is_auto_sharded(module):
        return None
    CallInliner().run(module)
    ShardingPropagation().run(module)
    p = SpmdPartitioner()
    p.run(module)
    return p.signature


def split_arguments(signature: SpmdSignature, args, devices=None, contiguous: bool = True) -> list:
    """Each device's arguments of a partitioned program (``signature``:
    :class:`SpmdSignature`) from the global ``args``: its tile of each,
    padded to the tile shape (``devices``: only theirs); C-contiguous, or
    with ``contiguous=False`` a view of the argument where it needs no
    padding (for the device processes' argument blocks, which take any
    array by one copy).  Raises ``TypeError``/``ValueError`` naming the
    parameter, expected and actual."""
    if len(args) != len(signature.params):
        raise TypeError(f"expected {len(signature.params)} arguments, got {len(args)}")
    arrays = []
    for k, (a, (_, shape)) in enumerate(zip(args, signature.params)):
        a = np.asarray(a)
        want = tuple(shape.dimensions)
        if a.shape != want:
            raise ValueError(f"parameter {k}: expected the global array of shape {list(want)}, got {list(a.shape)}")
        arrays.append(a)
    return [[padded_tile(a, s, d, contiguous) for a, (s, _) in zip(arrays, signature.params)]
            for d in (range(signature.num_devices) if devices is None else devices)]


def assemble_results(signature, per_device: list):
    """The global results of a partitioned program from each device's
    (``per_device[d]``: device ``d``'s result tiles, a tuple flattened)."""
    leaves = [assemble_tiles([per_device[d][k] for d in range(signature.num_devices)], s, shape.dimensions)
              for k, (s, shape) in enumerate(signature.results)]
    return tuple(leaves) if signature.tuple_result else leaves[0]


# ---------------------------------------------------------------------------------------
# What the per-device program moves and holds
# ---------------------------------------------------------------------------------------

def _group_size(inst) -> int:
    groups = inst.attrs.get("replica_groups")
    sizes = [len(g) for g in groups.groups] if groups is not None and groups.groups else []
    return max(sizes) if sizes else 1


def collective_bytes(module: HloModule) -> list:
    """``(name, opcode, bytes)`` for each collective of the module (one in a
    loop body counted once: per iteration):
    the bytes one device receives (ring algorithms: an all-reduce of B bytes
    over g devices receives 2B(g-1)/g, an all-gather its result less its
    operand, a reduce-scatter or all-to-all B(g-1)/g of its operand)."""
    out = []
    for inst in (i for c in module.computations for i in c.instructions):
        if inst.opcode not in COLLECTIVES:
            continue
        g = _group_size(inst)
        operand = sum(_bytes(o.shape) for o in inst.operands)
        if inst.opcode == "all-gather":
            moved = _bytes(inst.shape) - operand
        elif inst.opcode == "all-reduce":
            moved = 2 * operand * (g - 1) // g
        elif inst.opcode == "collective-permute":
            moved = operand
        else:
            moved = operand * (g - 1) // g
        out.append((inst.name, inst.opcode, moved))
    return out


def spmd_report(module: HloModule, temp_bytes: int = 0, scratch_bytes: int = 0) -> list:
    """The lines ``xlac dump`` prints after a partitioned program (its notes
    are its diagnostics, printed before): the bytes each collective moves
    per device, their total, and the per-device peak memory: parameters,
    results and the temporary arena (``temp_bytes``) of one device, of which
    up to ``scratch_bytes`` is one kernel's scratch (a matrix product's
    packing buffers: XLA's memory analysis leaves Eigen's out)."""
    lines = []
    total = 0
    for name, opcode, moved in collective_bytes(module):
        lines.append(f"spmd: {opcode} {name}: {moved} bytes received per device")
        total += moved
    lines.append(f"spmd: collectives move {total} bytes per device per call")
    params = sum(_bytes(s) for p in module.entry.parameters for s in p.shape.leaves())
    results = sum(_bytes(s) for s in module.entry.root.shape.leaves())
    lines.append(f"spmd: per-device peak memory {params + results + temp_bytes} bytes (parameters {params}, "
                 f"results {results}, temporaries {temp_bytes}"
                 + (f", of which kernel scratch up to {scratch_bytes}" if scratch_bytes else "") + ")")
    return lines
