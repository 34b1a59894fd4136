"""Manual (shard_map) partitioning of a global program with Shardy annotations.

``jax.jit`` of a ``jax.pmap`` or ``shard_map`` function lowers (jax 0.10,
``as_text(dialect="hlo")``) to the *global* program: entry parameters of the
global shapes, the module attribute ``xla.sdy.meshes={mesh =
#sdy.mesh<["i"=4]>}``, and around a ``call`` of the
``xla.sdy.manual_computation_body`` (which holds the collectives, with
``use_global_device_ids``) three custom calls:

* ``xla.sdy.GlobalToLocalShape(x...)`` — each device takes its tile of every
  operand as ``xla.sdy.in_shardings`` says (``[{"i"}, {}]``: dimension 0 split
  over mesh axis ``i``);
* ``xla.sdy.LocalToGlobalShape(y...)`` — the tiles put back together as
  ``xla.sdy.out_shardings`` says;
* ``xla.sdy.FuncResultSharding(z)`` — the result's sharding (a no-op here).

:class:`ShardMapPartitioner` rewrites such a module into the program every
device runs (``num_partitions`` = the mesh's devices, device ``d`` at mesh
coordinates ``d`` in row-major order): a tile is a ``dynamic-slice`` at offsets
computed from ``partition-id``; tiles are put back together by an
``all-gather`` along each sharded dimension over the devices that differ in
that dimension's mesh axes.  Every device then gets the whole global
arguments and computes the whole global results, so the caller passes and
receives global arrays, as ``jax.jit`` of the function does.

A partially manual computation (``shard_map(..., axis_names={"i"})`` on a
mesh with more axes, ``xla.sdy.manual_axes`` naming some of them; nested ones
too) is tiled over its manual axes only: along the free axes every device
computes the whole value, which is what the automatic partitioner would split,
and the body's collectives (over the manual axes, their groups naming every
device) run between devices that hold the same values along the free axes.

A value ``unreduced`` over mesh axes (jax's explicit partial sums) is, in
the global program, the sum of its parts: an unreduced result of a manual
computation is all-reduced over those axes, an unreduced argument reaches the
first device along them whole and the others as zeros (right for the linear
uses jax allows; :func:`check_unreduced_flows` refuses a body that reads a
part itself).  With ``parts`` (the jax backend), the program arguments and
results :func:`part_values` names are each device's own part instead.

A sharded program without manual computations (a ``jax.jit`` with
``NamedSharding``s and no ``shard_map``: automatic sharding) is left as it is:
it is :mod:`xlac.passes.spmd_partitioner`'s.  Meshes with explicit device ids
and sub-axes are refused with an error naming the sharding.
"""
from __future__ import annotations

import math
import re

import numpy as np

from ..errors import UnsupportedError
from ..hlo.ir import HloComputation, HloInstruction, HloModule, Raw
from ..hlo.collectives import (MAX_MODULE_DEVICES, DeviceGroupError, ReplicaGroups, check_device_count,
                               check_device_counts, frontend_attributes)
from ..hlo.custom_call import SHARDING_GROUP, check_no_host_callback
from ..hlo.sharding import Sharding
from ..shape import PRED, S32, U32, Shape

__all__ = ["ShardMapPartitioner", "partition_global_program", "is_global_shardy_program", "mesh_of", "meshes_of",
           "SDY_TARGETS", "sdy_to_sharding", "output_shardings", "part_values", "check_unreduced_flows",
           "has_reordered_mesh", "mesh_groups"]

SDY_TARGETS = ("xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape", "xla.sdy.FuncResultSharding")


def _text(v) -> str:
    s = v.text if isinstance(v, Raw) else str(v)
    return s.replace('\\"', '"')


def _target(inst: HloInstruction) -> str:
    return _text(inst.attrs.get("custom_call_target", "")).strip('"')


def _frontend(inst_or_module, key: str) -> str | None:
    """A frontend attribute of an instruction or module (quotes removed)."""
    return frontend_attributes(inst_or_module).get(key)


def mesh_of(module: HloModule) -> dict | None:
    """The mesh ``{axis: size}`` (in order) of ``xla.sdy.meshes``, or None."""
    text = _frontend(module, "xla.sdy.meshes")
    if text is None:
        return None
    # The first mesh with axes (jax adds an empty one for replicated values).
    found = list(re.finditer(r"#sdy\.mesh<\[(.*?)\](.*?)>", text))
    m = next((f for f in found if f.group(1).strip()), found[0] if found else None)
    if m is None:
        return None
    if m.group(2).strip():
        raise UnsupportedError("sharding", f"a mesh with explicit device ids ({m.group(0)})")
    # The mesh sets the module's device count: its sizes are checked as every
    # device count is (collectives.check_device_counts), before anything is
    # made per device.
    axes = {}
    for name, size in re.findall(r'"([^"]+)"\s*=\s*(\d+)', m.group(1)):
        what = f'mesh axis "{name}"'
        if len(size.lstrip("0")) > 19:              # int() of thousands of digits is slow, then refused
            raise DeviceGroupError(f"{what} has a size of {len(size)} digits: a module runs on 1 to "
                                   f"{MAX_MODULE_DEVICES} devices")
        axes[name] = check_device_count(what, int(size))
    check_device_counts(1, math.prod(axes.values()), ("replica_count", f"the device count of {m.group(0)}"))
    return axes


def meshes_of(module: HloModule) -> dict:
    """Every mesh of ``xla.sdy.meshes`` by name, ``{name: {axis: size}}`` (a
    program whose parts reshard onto meshes of other axis names over the
    same devices has several), each as :func:`mesh_of` reads the first."""
    text = _frontend(module, "xla.sdy.meshes")
    if text is None:
        return {}
    found = {}
    for name, body in re.findall(r"([\w.$-]+)\s*=\s*(#sdy\.mesh<\[.*?\].*?>)", text):
        if re.search(r"#sdy\.mesh<\[.*?\](.*?)>", body).group(1).strip():
            raise UnsupportedError("sharding", f"a mesh with explicit device ids ({body})")
        # (A sharding on a mesh of another device count is refused where it is read.)
        found[name] = {a: int(size) for a, size in re.findall(r'"([^"]+)"\s*=\s*(\d+)', body)}
    return found


def is_global_shardy_program(module: HloModule) -> bool:
    """Whether ``module`` is jax's global program around manual computations."""
    return any(i.opcode == "custom-call" and _target(i) in SDY_TARGETS
               for c in module.computations for i in c.instructions) and mesh_of(module) is not None


def has_reordered_mesh(module: HloModule) -> bool:
    """Whether a mesh of ``xla.sdy.meshes`` lists its devices (``device_ids``:
    not in row-major order), which the partitioners do not take."""
    return "device_ids" in (_frontend(module, "xla.sdy.meshes") or "")


def _shardings(text: str, what: str, manual: list[str] | None = None) -> list[tuple[list[list[str]], list[str]]]:
    """``#sdy.sharding_per_value<[<@mesh, [{"i"}, {}], unreduced={"j"}>, ...]>``
    -> per value, (per dimension the mesh axes it is split over, the axes it
    is ``unreduced`` over: each device's value a partial sum over them); with
    ``manual``, only the manual axes (a partially manual computation's values
    are split over its manual axes, and the free axes after them say how the
    automatic partitioner would split the rest: every device here computes
    that whole).  An open dimension (``{"i", ?}``, which a partitioner may
    split further) is split over the axes it names."""
    values = []
    for m in re.finditer(r"<@[\w.]+\s*,\s*\[(.*?)\](.*?)>", text):
        dims = []
        for d in re.findall(r"\{([^{}]*)\}", m.group(1)):
            if ":" in d:
                raise UnsupportedError("sharding", f"{what}: sub-axes ({m.group(0)})")
            dims.append([a for a in re.findall(r'"([^"]+)"', d) if manual is None or a in manual])
        unreduced = re.search(r"unreduced\s*=\s*\{([^{}]*)\}", m.group(2))
        partial = re.findall(r'"([^"]+)"', unreduced.group(1)) if unreduced else []
        if manual is not None and any(a not in manual for a in partial):
            raise UnsupportedError("sharding", f"{what}: {m.group(0)}: unreduced over free (automatic) axes")
        values.append((dims, partial))
    return values


def _manual_axes(inst: HloInstruction, mesh: dict) -> list[str]:
    """The mesh axes a manual computation's boundary is manual over
    (``xla.sdy.manual_axes``; all of them when not written), in mesh order."""
    text = _frontend(inst, "xla.sdy.manual_axes")
    if text is None:
        return list(mesh)
    named = re.findall(r'"([^"]+)"', text)
    unknown = [a for a in named if a not in mesh]
    if unknown:
        raise UnsupportedError("sharding", f"{inst.name}: manual axes {unknown} are not axes of the mesh "
                                           f"{list(mesh)}")
    return [a for a in mesh if a in named]


class ShardMapPartitioner:
    """Pass: the global Shardy program into the program every device runs (see the module docstring)."""

    name = "shard-map-partitioner"

    def __init__(self, parts: bool = False):
        #: Whether the caller passes and takes each device's own parts of the
        #: unreduced parameters and results :func:`part_values` names (the
        #: jax backend, whose buffers hold them); else every device gets the
        #: global value and the first device along the axes holds the sum.
        self.parts = parts

    def run(self, module: HloModule) -> bool:
        mesh = mesh_of(module)
        if mesh is None:
            return False
        exact_params, exact_results = part_values(module) if self.parts else ({}, {})
        targets = [i for c in module.computations for i in c.instructions
                   if i.opcode == "custom-call" and _target(i).startswith("xla.sdy.")
                   and _target(i) != SHARDING_GROUP]        # every device computes the global values
        if not targets:
            # Automatic sharding (shardings, no manual computation): nothing to
            # rewrite; every device computes the whole global program.
            return False
        self.mesh = mesh
        self.axes = list(mesh)
        self.names = module.name_uniquer()
        self.adders = {}
        self.devices = math.prod(mesh.values())
        self.channel = 1 + max([int(i.attrs.get("channel_id") or 0) for c in module.computations
                                for i in c.instructions] + [0])
        for inst in targets:
            if _target(inst) not in SDY_TARGETS:
                raise UnsupportedError("custom-call", f"{inst.name}: custom_call_target={_target(inst)}")
        own_params = {id(p) for p in module.entry.parameters if p.attrs["parameter_number"] in exact_params}
        own_results = set(exact_results.values())           # (id of the LocalToGlobalShape, value index)
        check_unreduced_flows(module, mesh, own_params)
        for inst in targets:
            target = _target(inst)
            comp, manual = inst.parent, _manual_axes(inst, mesh)
            if target == "xla.sdy.GlobalToLocalShape":
                specs = _shardings(_frontend(inst, "xla.sdy.in_shardings") or "", inst.name, manual)
                # A parameter holding this device's own part needs no split into parts.
                specs = [(dims, [] if id(v) in own_params else partial)
                         for (dims, partial), v in zip(specs, inst.operands)]
                new = self._per_value(comp, inst, specs, self._local)
            elif target == "xla.sdy.LocalToGlobalShape":
                specs = _shardings(_frontend(inst, "xla.sdy.out_shardings") or "", inst.name, manual)
                # A result handed out as each device's own part is not summed.
                specs = [(dims, [] if (id(inst), k) in own_results else partial)
                         for k, (dims, partial) in enumerate(specs)]
                new = self._per_value(comp, inst, specs, self._global)
            else:
                new = inst.operands[0] if len(inst.operands) == 1 else self._add(
                    comp, "tuple", inst.shape, list(inst.operands))
            comp.replace_all_uses(inst, new)
            comp.instructions.remove(inst)
        for comp in module.computations:
            comp.sort_topologically()
            comp.compute_users()
        module.attrs["num_partitions"] = self.devices
        module.attrs["replica_count"] = 1
        for p in module.entry.parameters:
            p.attrs.pop("sharding", None)
        module.entry.root.attrs.pop("sharding", None)
        return True

    # -- building -------------------------------------------------------------------
    def _add(self, comp: HloComputation, opcode: str, shape: Shape, operands: list, attrs: dict | None = None):
        inst = HloInstruction(opcode, shape, operands, attrs or {}, self.names(opcode))
        inst.parent = comp
        comp.instructions.append(inst)
        return inst

    def _scalar(self, comp, value: int):
        return self._add(comp, "constant", Shape(S32, ()), [], {"literal": np.array(value, np.int32)})

    def _per_value(self, comp, inst, specs, fn):
        values = list(inst.operands)
        shapes = inst.shape.tuple_shapes if inst.shape.is_tuple else [inst.shape]
        if len(specs) != len(values):
            raise UnsupportedError("sharding", f"{inst.name}: {len(specs)} sharding(s) for {len(values)} value(s)")
        out = [fn(comp, v, dims, partial, s) for v, (dims, partial), s in zip(values, specs, shapes)]
        return out[0] if not inst.shape.is_tuple else self._add(comp, "tuple", inst.shape, out)

    def _coordinate(self, comp, pid, axis: str):
        """This device's coordinate along mesh ``axis`` (s32), from the partition id."""
        k = self.axes.index(axis)
        stride = math.prod(self.mesh[a] for a in self.axes[k + 1:])
        s = Shape(S32, ())
        c = self._add(comp, "divide", s, [pid, self._scalar(comp, stride)]) if stride > 1 else pid
        return self._add(comp, "remainder", s, [c, self._scalar(comp, self.mesh[axis])])

    def _partition_id(self, comp):
        return self._add(comp, "convert", Shape(S32, ()), [self._add(comp, "partition-id", Shape(U32, ()), [])])

    def _local(self, comp, x, spec, partial, local_shape):
        """This device's tile of ``x``; ``partial``: the mesh axes the body's
        value is unreduced over, where each device's tile is its part of a
        sum: the first device along them holds the whole tile, the others
        zeros (jax lets only linear operations touch an unreduced value, so
        any split into parts computes the same)."""
        tile = self._tile(comp, x, spec, local_shape)
        if not partial:
            return tile
        pid, s = self._partition_id(comp), Shape(S32, ())
        coords = [self._coordinate(comp, pid, a) for a in partial]
        total = coords[0]                           # 0 only on the first device along them
        for c in coords[1:]:
            total = self._add(comp, "add", s, [total, c])
        first = self._add(comp, "compare", Shape(PRED, ()), [total, self._scalar(comp, 0)], {"direction": "EQ"})
        mask = self._add(comp, "broadcast", Shape(PRED, local_shape.dimensions), [first], {"dimensions": ()})
        zero = self._add(comp, "constant", Shape(local_shape.element_type, ()), [],
                         {"literal": np.zeros((), local_shape.element_type.dtype)})
        zeros = self._add(comp, "broadcast", local_shape, [zero], {"dimensions": ()})
        return self._add(comp, "select", local_shape, [mask, tile, zeros])

    def _tile(self, comp, x, spec, local_shape):
        """This device's tile of ``x`` (split over the axes of ``spec``)."""
        if not any(spec):
            return x
        s = Shape(S32, ())
        pid = self._partition_id(comp)
        starts = []
        for d, axes in enumerate(spec):
            if not axes:
                starts.append(self._scalar(comp, 0))
                continue
            index = None
            for a in axes:        # the first axis is the most major
                c = self._coordinate(comp, pid, a)
                index = c if index is None else self._add(
                    comp, "add", s, [self._add(comp, "multiply", s, [index, self._scalar(comp, self.mesh[a])]), c])
            starts.append(self._add(comp, "multiply", s, [index, self._scalar(comp, local_shape.dimensions[d])]))
        return self._add(comp, "dynamic-slice", local_shape, [x] + starts,
                         {"dynamic_slice_sizes": tuple(local_shape.dimensions)})

    def _global(self, comp, y, spec, partial, global_shape):
        """The tiles of ``y`` of every device, put together; where the
        body's value is unreduced over ``partial`` axes, the parts summed
        over them first (every device then holds the global value)."""
        value, dims = y, list(y.shape.dimensions)
        if partial:
            etype = y.shape.element_type
            if etype not in self.adders:
                self.adders[etype] = comp.parent.sum_computation(etype, self.names(f"unreduced_add_{etype.value}"))
            value = self._add(comp, "all-reduce", y.shape, [value], {
                "replica_groups": ReplicaGroups.of(mesh_groups(self.mesh, partial)),
                "channel_id": self._next_channel(),
                "use_global_device_ids": True, "to_apply": self.adders[etype]})
        for d, axes in enumerate(spec):
            if not axes:
                continue
            dims[d] = global_shape.dimensions[d]
            groups = mesh_groups(self.mesh, axes)
            shape = Shape(y.shape.element_type, tuple(dims))
            value = self._add(comp, "all-gather", shape, [value], {
                "dimensions": (d,), "replica_groups": ReplicaGroups.of(groups),
                "channel_id": self._next_channel(), "use_global_device_ids": True})
        return value

    def _next_channel(self) -> int:
        self.channel += 1
        return self.channel - 1


# -- values unreduced over mesh axes in a manual computation --------------------------------
#: Opcodes that are linear in every operand (a sum of parts in, the sum of the results out).
_LINEAR = frozenset({"add", "subtract", "negate", "copy", "reshape", "bitcast", "transpose", "broadcast", "slice",
                     "concatenate", "reverse", "get-tuple-element", "tuple", "convert", "pad", "dynamic-slice",
                     "dynamic-update-slice", "all-gather", "all-to-all", "collective-permute", "real", "imag",
                     "complex", "optimization-barrier"})
#: Linear in each operand with the others fixed: right while one operand is a sum of parts.
_LINEAR_IN_ONE = frozenset({"multiply", "dot", "convolution"})
#: Linear in these operands only (the divisor, the predicate, the indices are not parts of a sum).
_LINEAR_IN = {"divide": (0,), "select": (1, 2)}
#: Collectives that add the parts of the devices in each group.
_SUMMING = frozenset({"all-reduce", "reduce-scatter"})


def reducer_opcode(comp) -> str:
    """The opcode that combines a reducer computation's two values (``add``
    of a sum), through jax's ``Sharding`` custom calls."""
    root = comp.root
    while root.opcode == "custom-call" and root.operands:       # jax's Sharding custom call around the add
        root = root.operands[0]
    return root.opcode


def _origin(value, target: str):
    """(the ``target`` custom call, the value's index among its values) when
    ``value`` is one of its values (through a get-tuple-element), else None."""
    index = 0
    if value.opcode == "get-tuple-element":
        index, value = value.attrs.get("index", 0), value.operands[0]
    if value.opcode == "custom-call" and _target(value) == target:
        return value, index
    return None


def _entry_results(module: HloModule) -> list:
    """The entry's result values, a tuple root's elements in order (through
    jax's ``tuple`` + ``get-tuple-element`` wrapping)."""
    root = module.entry.root
    if root.opcode == "get-tuple-element" and root.operands[0].opcode == "tuple":
        root = root.operands[0].operands[root.attrs.get("index", 0)]
    return list(root.operands) if root.opcode == "tuple" else [root]


def part_values(module: HloModule) -> tuple[dict, dict]:
    """The values of jax's global program that can be each device's own
    part of an unreduced value: ``({parameter number: axes}, {result index:
    (id of the LocalToGlobalShape, its value index)})`` — parameters read
    only by manual computations that take them unreduced over the same axes,
    and results that are a manual computation's unreduced value and nothing
    else (through ``FuncResultSharding``)."""
    users: dict = {}
    for comp in module.computations:
        for inst in comp.instructions:
            for op in inst.operands:
                users.setdefault(id(op), []).append(inst)
    params = {}
    for p in module.entry.parameters:
        axes = set()
        for u in users.get(id(p), []):
            if not (u.opcode == "custom-call" and _target(u) == "xla.sdy.GlobalToLocalShape"):
                break
            specs = _shardings(_frontend(u, "xla.sdy.in_shardings") or "", u.name)
            found = {tuple(specs[k][1]) for k, op in enumerate(u.operands) if op is p and k < len(specs)}
            if len(found) != 1 or not next(iter(found)) or (axes and found != axes):
                break
            axes = found
        else:
            if axes:
                params[p.attrs["parameter_number"]] = list(next(iter(axes)))
    results = {}
    for j, value in enumerate(_entry_results(module)):
        while value.opcode == "custom-call" and _target(value) == "xla.sdy.FuncResultSharding" \
                and len(users.get(id(value.operands[0]), [])) == 1:
            value = value.operands[0]
        found = _origin(value, "xla.sdy.LocalToGlobalShape")
        if found is None or len(users.get(id(value), [])) > 1:      # (the root has none)
            continue
        inst, k = found
        if inst.shape.is_tuple and value is inst:
            continue
        specs = _shardings(_frontend(inst, "xla.sdy.out_shardings") or "", inst.name)
        if k < len(specs) and specs[k][1]:
            results[j] = (id(inst), k)
    return params, results


def check_unreduced_flows(module: HloModule, mesh: dict, exact: set = frozenset()) -> None:
    """xlac holds a value ``unreduced`` over mesh axes (jax's partial sums) as
    the whole sum on the first device along them and zeros on the others:
    right for every use jax allows (linear ones, ended by a ``psum``), not for
    a manual body that reads a part itself (``check_vma=False``: a part
    returned as a tile, or under ``sin``).  UnsupportedError naming the
    instruction when a body's unreduced argument reaches anything but linear
    operations, a summing collective over those axes, or a result unreduced
    over them.  ``exact``: the parameters (ids) that hold each device's own
    part (:func:`part_values`): nothing to check for those."""
    for comp in module.computations:
        outs: dict = {}                  # (call, result index) -> the result's unreduced axes
        for inst in comp.instructions:
            if inst.opcode == "custom-call" and _target(inst) == "xla.sdy.LocalToGlobalShape":
                specs = _shardings(_frontend(inst, "xla.sdy.out_shardings") or "", inst.name)
                for op, (_, partial) in zip(inst.operands, specs):
                    index = op.attrs.get("index", 0) if op.opcode == "get-tuple-element" else 0
                    call = op.operands[0] if op.opcode == "get-tuple-element" else op
                    outs[(id(call), index)] = set(partial)
        for call in comp.instructions:
            body = call.attrs.get("to_apply") if call.opcode == "call" else None
            if not isinstance(body, HloComputation) or not body.name.startswith("xla.sdy.manual_computation"):
                continue
            ins = []
            for op in call.operands:
                found = _origin(op, "xla.sdy.GlobalToLocalShape")
                specs = _shardings(_frontend(found[0], "xla.sdy.in_shardings") or "", found[0].name) if found else []
                read = found[0].operands[found[1]] if found and found[1] < len(found[0].operands) else None
                exact_part = read is not None and id(read) in exact
                ins.append(set(specs[found[1]][1]) if found and found[1] < len(specs) and not exact_part else set())
            if any(ins):
                n = len(call.shape.tuple_shapes) if call.shape.is_tuple else 1
                _check_linear(body, ins, [outs.get((id(call), j), set()) for j in range(n)], mesh)


def _check_linear(body: HloComputation, ins: list, outs: list, mesh: dict) -> None:
    """See :func:`check_unreduced_flows`: ``ins``/``outs`` the unreduced axes
    of the body's parameters and results."""
    state: dict = {}
    wrong: dict = {}                # value -> the instruction that read a part, where it depends on one
    for inst in body.instructions:
        if inst.opcode == "parameter":
            state[id(inst)] = ins[inst.attrs["parameter_number"]]
            continue
        culprit = next((wrong[id(op)] for op in inst.operands if id(op) in wrong), None)
        if culprit is not None:
            wrong[id(inst)] = culprit
            continue
        partial = [(k, state.get(id(op), set())) for k, op in enumerate(inst.operands)]
        axes = set().union(*(a for _, a in partial)) if partial else set()
        if not axes:
            continue
        parts = [k for k, a in partial if a]
        linear = (inst.opcode in _LINEAR or (inst.opcode == "custom-call" and _target(inst) == "Sharding")
                  or (inst.opcode in _LINEAR_IN_ONE and len(parts) == 1)
                  or (inst.opcode in _LINEAR_IN and set(parts) <= set(_LINEAR_IN[inst.opcode]))
                  or (inst.opcode == "reduce" and parts == [0] and reducer_opcode(inst.attrs["to_apply"]) == "add"))
        if inst.opcode in _SUMMING and reducer_opcode(inst.attrs["to_apply"]) == "add":
            groups = [set(g) for g in inst.attrs["replica_groups"].groups]
            axes = {a for a in axes if not all(any(set(u) <= g for g in groups)
                                                for u in mesh_groups(mesh, [a]))}
        elif not linear:
            wrong[id(inst)] = (inst, axes)
            continue
        state[id(inst)] = axes
    root = body.root
    results = root.operands if root.opcode == "tuple" and len(outs) > 1 else [root]
    for j, value in enumerate(results):
        if id(value) in wrong:
            inst, axes = wrong[id(value)]
            raise UnsupportedError("sharding", f"instruction {inst.name}: {inst.opcode} of a value unreduced over "
                                               f"mesh axes {sorted(axes)} in a manual computation: xlac holds its "
                                               "parts as the whole sum on one device and zeros on the others, "
                                               "right only for linear operations (jax's check_vma)")
        left = state.get(id(value), set()) - outs[j]
        if left:
            raise UnsupportedError("sharding", f"result {j} of the manual computation {body.name} is a value "
                                               f"unreduced over mesh axes {sorted(left)} returned as not "
                                               "unreduced: each device's part, which xlac does not keep (it "
                                               "holds the whole sum on one device and zeros on the others)")


def mesh_groups(mesh: dict, axes: list) -> list[list[int]]:
    """The devices (row-major mesh order) that differ only in mesh ``axes``,
    a group each, ordered by their index along them (the first axis the
    most major)."""
    names = list(mesh)
    ids = np.arange(math.prod(mesh.values())).reshape([mesh[a] for a in names])
    moved = np.moveaxis(ids, [names.index(a) for a in axes], range(-len(axes), 0))
    return moved.reshape(-1, math.prod(mesh[a] for a in axes)).tolist()


def partition_global_program(module: HloModule, parts: bool = False) -> bool:
    """Whether ``module`` is jax's global program (it has a Shardy mesh): then it
    is rewritten, in place, into the program each device runs
    (:class:`ShardMapPartitioner`), which takes and returns the global arrays
    (``parts``: each device its own parts of the :func:`part_values`)."""
    # A host callback comes with a one-device mesh that would be refused as a
    # sharding first; say what the program really needs.
    check_no_host_callback(module)
    if mesh_of(module) is None:
        return False
    ShardMapPartitioner(parts).run(module)
    return True


def sdy_to_sharding(spec: list, mesh: dict) -> Sharding:
    """The HLO :class:`~xlac.hlo.sharding.Sharding` of a Shardy value sharding
    (per dimension, the mesh axes it is split over) on ``mesh``: which tile
    of the global array each device (row-major mesh coordinates) holds."""
    axes = list(mesh)
    tile_dims = tuple(math.prod(mesh[a] for a in dim) for dim in spec)
    order = []
    for dev in range(math.prod(mesh.values())):
        coords, rest = {}, dev
        for a in reversed(axes):
            coords[a] = rest % mesh[a]
            rest //= mesh[a]
        tile = 0
        for dim, t in zip(spec, tile_dims):
            index = 0
            for a in dim:
                index = index * mesh[a] + coords[a]
            tile = tile * t + index
        replica = 0
        for a in axes:
            if not any(a in dim for dim in spec):
                replica = replica * mesh[a] + coords[a]
        order.append((tile, replica, dev))
    devices = tuple(dev for _, _, dev in sorted(order))
    return Sharding(tile_dims, devices, len(devices) // max(1, math.prod(tile_dims)))


def output_shardings(module: HloModule) -> list[Sharding] | None:
    """The shardings of the results of jax's global program (its
    ``xla.sdy.LocalToGlobalShape`` calls' ``out_shardings``, in result order),
    or None when ``module`` is not one."""
    mesh = mesh_of(module)
    if mesh is None:
        return None
    out = []
    for i in module.entry.instructions:          # (a nested manual computation's are inside)
        if i.opcode == "custom-call" and _target(i) == "xla.sdy.LocalToGlobalShape":
            out += [sdy_to_sharding(dims, mesh)
                    for dims, _ in _shardings(_frontend(i, "xla.sdy.out_shardings") or "", i.name)]
    return out
