"""Programs on several devices through PJRT (``num_replicas x num_partitions`` > 1).

PJRT hands an executable one argument list per device and wants one output
list per device back (``argument_lists[d][k]``, ``output_lists[d][k]``, d in
the order of the device assignment: the program's logical device id).  Two
kinds of program come that way:

* **Sharded programs** (``num_partitions`` = N; all that jax 0.10 sends:
  ``jax.pmap`` is ``jit`` of ``shard_map`` there, ``shard_map`` and ``jit``
  with ``NamedSharding``s alike).  The program is the *global* computation,
  its arguments and results annotated with shardings
  (:mod:`xlac.pjrt.sharding`), and each device holds its tiles.  The global
  arguments are put together from the devices' tiles, the program runs on
  xlac's device processes (``xlac.devices``), and each global result is cut
  into the tiles its sharding gives each device (a replicated result goes
  whole to every device).  A program with automatic shardings (Shardy's
  ``NamedSharding``s, no manual computation) is partitioned
  (``xlac.passes.spmd_partitioner``): each device process computes only its
  tiles.  A program with manual computations (``shard_map``, hence ``pmap``)
  runs as jax's global program around them (each device computes its part,
  the collectives go over shared memory); GSPMD's form of automatic
  sharding (``mhlo.sharding``, no mesh) runs in this process, as a
  one-device program.
* **Per-replica programs** (``num_replicas`` = N, one partition, no
  shardings: each device runs the program on its own arguments, collectives
  between them) run on the device processes with each device's arguments as
  they are.
"""
from __future__ import annotations

import numpy as np

from .. import devices
from ..errors import UnsupportedError
from ..executable import jit as single_device_jit
from ..hlo.collectives import GROUPED_OPCODES, PERMUTE_OPCODES, SEND_RECV_OPCODES
from ..hlo.custom_call import target_of
from ..hlo.ir import HloInstruction
from ..passes.shard_map import has_reordered_mesh, is_global_shardy_program, part_values, partition_global_program
from ..passes.sharding_propagation import module_devices
from ..passes.spmd_partitioner import partition_module
from . import capi
from .errors import PjrtError
from ..hlo.sharding import Sharding, assemble_tiles, replicated
from ..shape import S32, U32, Shape
from .sharding import UnreducedSharding, call_inspect_sharding, entry_shardings, local_shape
from ..passes import spmd_partitioner

# jax.debug.inspect_array_sharding's callbacks are the jax process's: called from here.
spmd_partitioner.inspect_sharding = call_inspect_sharding

#: Instructions whose value depends on which device runs them.
_DEVICE_DEPENDENT = GROUPED_OPCODES | PERMUTE_OPCODES | SEND_RECV_OPCODES | {"replica-id", "partition-id"}
#: GSPMD's manual computation boundaries (shard_map lowered without Shardy).
_GSPMD_MANUAL = ("SPMDFullToShardShape", "SPMDShardToFullShape")


def compile_program(module, text: str, num_replicas: int, num_partitions: int):
    """The runner of ``module`` (imported from StableHLO ``text``) on
    ``num_replicas x num_partitions`` devices: a :class:`ShardedProgram` or a
    :class:`ReplicaProgram`.  Raises UnsupportedError for what xlac cannot run
    that way, naming it."""
    n = num_replicas * num_partitions
    params, results, annotated = entry_shardings(text, n)
    if num_partitions == 1 and not annotated:
        return ReplicaProgram(module, n)
    if num_replicas != 1:
        raise UnsupportedError("sharding", f"a sharded program on {num_replicas} replicas x {num_partitions} "
                                           f"partitions (xlac runs sharded programs on one replica)")
    return ShardedProgram(module, params, results, n)


def _even_or_whole(s: Sharding, dims) -> Sharding:
    """``s``, or whole on every device where it does not split ``dims``
    evenly: a jax array's shards are of equal size (XLA reports such a
    result replicated too)."""
    if s.is_replicated or all(n % t == 0 for n, t in zip(dims, s.tile_dims)):
        return s
    return replicated(len(s.devices), len(dims))


class ShardedProgram:
    """A global program with shardings, run as its global computation (see the module docstring)."""

    def __init__(self, module, params: list, results: list, num_devices: int):
        self.num_devices = num_devices
        self.global_shapes = [tuple(p.shape.dimensions) for p in module.entry.parameters]
        #: jax's runtime tokens (ordered effects): whatever array jax passes, never read.
        self.tokens = {k for k, p in enumerate(module.entry.parameters) if p.shape.is_token}
        self.params = params
        self.results = [_even_or_whole(r, shape.dimensions) for r, shape in zip(results, module.result_shape.leaves())]
        self.tuple_result = module.result_shape.is_tuple
        # Automatic sharding (NamedShardings, no shard_map): partitioned, each
        # device process computing its tiles.
        # (A mesh of devices out of order runs unpartitioned, on one device: correct, nothing split.)
        signature = partition_module(module) if not has_reordered_mesh(module) and (
            module_devices(module) == num_devices) else None
        if signature is not None:
            self.own_parts = _keep_partial_sums(module, self.results)
            self.signature = signature
            self.compiled = devices.PartitionedExecutable(module, signature)
            # Results without a written sharding stay split as propagation
            # split them (XLA's choice too), each device holding its tiles:
            # a training step's new parameters come back split as they went in.
            self.results = [r if isinstance(r, UnreducedSharding) else _even_or_whole(s, shape.dimensions)
                            for r, (s, shape) in zip(self.results, signature.results)]
            # jax's tiles are the per-device program's arguments as they are
            # when the shardings agree and every split divides evenly (no
            # padded tiles): no global array is put together in between.
            self._direct = [s for s, _ in signature.params] == list(self.params) and not any(
                isinstance(r, UnreducedSharding) for r in self.results) and all(
                all(n % t == 0 for n, t in zip(shape.dimensions, sh.tile_dims))
                for sh, shape in signature.params + signature.results)
            return
        # The annotations say where the pieces are; the computation itself is global.
        for p in module.entry.parameters:
            p.attrs.pop("sharding", None)
        module.entry.root.attrs.pop("sharding", None)
        module.attrs.pop("replica_count", None)
        module.attrs.pop("num_partitions", None)
        self.tuple_result = module.result_shape.is_tuple
        if is_global_shardy_program(module):
            # Each device gets and gives its own parts of the unreduced values
            # that allow it (the parts a jax buffer holds, exactly).
            exact_params, exact_results = part_values(module)
            self.exact_params = {k for k in exact_params if isinstance(self.params[k], UnreducedSharding)}
            self.exact_results = {j for j in exact_results if isinstance(self.results[j], UnreducedSharding)}
            if self.exact_params != set(exact_params) or self.exact_results != set(exact_results):
                self.exact_params = self.exact_results = set()      # the annotations disagree: sums, as xlac.jit
            partition_global_program(module, parts=bool(self.exact_params or self.exact_results))
            self.compiled = devices.GlobalExecutable(module)
        else:
            _refuse_device_dependent(module)
            self.compiled = single_device_jit(module)

    _direct = False
    exact_params = exact_results = own_parts = frozenset()

    def run(self, per_device: list, keys: list | None = None) -> list:
        """``per_device[d]``: device ``d``'s argument tiles (numpy arrays);
        returns its result tiles.  ``keys[d]``: objects standing for the
        tiles' bytes while they live (``Pool.run``: the jax buffers), or None."""
        if self._direct:
            for k in range(len(self.params)):
                self._check_tiles(k, [args[k] for args in per_device])
            return self.compiled.run_per_device([[np.asarray(a, order="C") for a in args] for args in per_device],
                                                keys)
        if isinstance(self.compiled, devices.GlobalExecutable):
            # Each device's own results: a replicated result of a shard_map
            # body may differ per device (pmap's out_axes=None), as on XLA;
            # an unreduced one holds its own part.
            arguments, whole_keys = [], []
            for k, sharding in enumerate(self.params):
                tiles = [args[k] for args in per_device]
                if k in self.exact_params:
                    self._check_tiles(k, tiles)
                    arguments.append([sharding.assemble_part(tiles, self.global_shapes[k], sharding.parts[d])
                                      for d in range(self.num_devices)])
                else:
                    arguments.append([self._assemble(k, tiles)] * self.num_devices)
                # (a replicated argument is device 0's tile as it is)
                whole_keys.append(keys[0][k] if keys and arguments[-1][0] is tiles[0] else None)
            per = self.compiled.run_per_device([[a[d] for a in arguments] for d in range(self.num_devices)],
                                               [whole_keys] * self.num_devices)
            return [[Sharding.tile(s, r, d) if k in self.exact_results else s.tile(r, d)
                     for k, (r, s) in enumerate(zip(per[d], self.results))] for d in range(self.num_devices)]
        arguments = [self._assemble(k, [args[k] for args in per_device]) for k in range(len(self.params))]
        if self.own_parts:
            # Results left as the devices' partial sums (unreduced, as XLA
            # leaves them): each device's own; the others put together.
            per = self.compiled.run_per_device(spmd_partitioner.split_arguments(self.signature, arguments,
                                                                                 contiguous=False))
            whole = spmd_partitioner.assemble_results(self.signature, per)
            whole = list(whole) if self.tuple_result else [whole]
            return [[per[d][k] if k in self.own_parts else s.tile(whole[k], d)
                     for k, s in enumerate(self.results)] for d in range(self.num_devices)]
        out = self.compiled(*arguments)
        leaves = [np.asarray(r) for r in (out if self.tuple_result else (out,))]
        return [[s.tile(r, d) for r, s in zip(leaves, self.results)] for d in range(self.num_devices)]

    def _assemble(self, k: int, tiles: list) -> np.ndarray:
        """Parameter ``k``'s global array from every device's tile, each checked."""
        if k in self.tokens:
            return tiles[0]
        self._check_tiles(k, tiles)
        sharding = self.params[k]
        if isinstance(sharding, UnreducedSharding):
            return sharding.assemble_sum(tiles, self.global_shapes[k])
        return tiles[0] if sharding.is_replicated else assemble_tiles(tiles, sharding, self.global_shapes[k])

    def _check_tiles(self, k: int, tiles: list) -> None:
        if k in self.tokens:
            return
        sharding, shape = self.params[k], self.global_shapes[k]
        for d, t in enumerate(tiles):
            expected = local_shape(sharding, shape, d)
            if tuple(t.shape) != expected:
                raise PjrtError(capi.INVALID_ARGUMENT, f"parameter {k} on device {d}: expected a tile of shape "
                                                       f"{list(expected)} (global {list(shape)}), got "
                                                       f"{list(t.shape)}")


class ReplicaProgram:
    """A per-replica program: each device runs it on its own arguments."""

    def __init__(self, module, num_devices: int):
        self.num_devices = num_devices
        self.compiled = devices.jit(module)              # a ReplicatedExecutable on the device processes

    def run(self, per_device: list, keys: list | None = None) -> list:
        return self.compiled.run_per_device([[np.asarray(a, order="C") for a in args] for args in per_device], keys)


def _keep_partial_sums(module, results: list) -> set:
    """The results declared unreduced whose value the partitioned ``module``
    makes by a collective over exactly their parts, each device then left
    with its own part as XLA's partitioner leaves an unreduced value: an
    all-reduce (an add) is removed, each device keeping its partial sum; an
    all-gather of one dimension becomes the device's tile in zeros (where
    the gather puts it).  In place; returns the indices of those results."""
    root = module.entry.root
    values = list(root.operands) if root.opcode == "tuple" else [root]
    users: dict = {}
    for inst in module.entry.instructions:
        for op in inst.operands:
            users[id(op)] = users.get(id(op), 0) + 1
    kept = set()
    names = None
    for k, (value, s) in enumerate(zip(values, results)):
        holder = None                  # a copy of the collective's value (a returned argument's)
        while value.opcode == "copy" and users.get(id(value), 0) <= 1:
            holder, value = value, value.operands[0]
        if not isinstance(s, UnreducedSharding) or value.opcode not in ("all-reduce", "all-gather") or \
                users.get(id(value), 0) > 1:
            continue
        groups = [tuple(g) for g in value.attrs["replica_groups"].groups]
        parts = len(set(s.parts))
        if not groups or any(len(g) != parts or {s.parts[d] for d in g} != set(range(parts))
                             or len({s.tile_index(d) for d in g}) != 1 for g in groups):
            continue
        if value.opcode == "all-reduce":
            reducer = value.attrs.get("to_apply")
            if reducer is None or reducer.root.opcode != "add":
                continue
            mine = value.operands[0]
        else:
            names = names or module.name_uniquer()
            mine = _tile_in_zeros(module.entry, value, groups, names)
        if holder is not None:
            holder.operands = [mine]
        elif root.opcode == "tuple":
            root.operands = [mine if op is value else op for op in root.operands]
        else:
            module.entry.root = mine
        module.entry.instructions.remove(value)
        kept.add(k)
    if kept:
        module.entry.sort_topologically()
        module.entry.compute_users()
    return kept


def _tile_in_zeros(comp, gather, groups: list, names):
    """In ``comp``: the all-gather ``gather``'s operand (this device's tile)
    at its place in the gathered value, zeros elsewhere."""
    (dim,) = gather.attrs["dimensions"]
    tile = gather.operands[0]
    size = tile.shape.dimensions[dim]
    n = sum(len(g) for g in groups)
    table = [0] * n
    for g in groups:
        for position, dev in enumerate(g):
            table[dev] = position * size

    def add(opcode, shape, operands, attrs=None):
        return comp.add_instruction(HloInstruction(opcode, shape, operands, attrs or {}, names(opcode)))
    pid = add("convert", Shape(S32, ()), [add("partition-id", Shape(U32, ()), [])])
    start = spmd_partitioner.partition_entry(add, pid, table)
    zero = add("constant", Shape(S32, ()), [], {"literal": np.array(0, np.int32)})
    etype = gather.shape.element_type
    zeros = add("broadcast", Shape(etype, gather.shape.dimensions), [
        add("constant", Shape(etype, ()), [], {"literal": np.zeros((), etype.dtype)})], {"dimensions": ()})
    starts = [start if d == dim else zero for d in range(len(gather.shape.dimensions))]
    return add("dynamic-update-slice", gather.shape, [zeros, tile] + starts)


def _refuse_device_dependent(module) -> None:
    """A collective (or replica/partition id) outside ``shard_map`` needs the SPMD
    partitioner's meaning of the program, which xlac does not have yet; so does
    GSPMD's form of ``shard_map`` (``jax_use_shardy_partitioner=False``)."""
    instructions = [inst for comp in module.computations for inst in comp.instructions]
    for inst in instructions:
        if inst.opcode == "custom-call" and target_of(inst) in _GSPMD_MANUAL:
            raise UnsupportedError("custom-call", f"{inst.name}: custom_call_target={target_of(inst)}: "
                                                  "GSPMD's shard_map (jax_use_shardy_partitioner=False); "
                                                  "xlac runs shard_map and pmap in Shardy's form, jax's default")
    for inst in instructions:
        if inst.opcode in _DEVICE_DEPENDENT:
            raise UnsupportedError(inst.opcode, f"instruction {inst.name} in a sharded program outside "
                                                "shard_map (xlac runs such programs as their global "
                                                "computation: there is no SPMD partitioner yet)")
