"""The HLO verifier: is a module well formed and are its shapes right?

``verify(module)`` returns ``None`` or raises:

* :class:`VerifierError` (a ``ValueError``) for a structural problem: an
  operand from another computation or used before it is defined, a duplicated
  instruction or computation name, parameter numbers that are not
  ``0..n-1``, a root outside its computation, a called computation missing from
  the module, an unknown opcode, a wrong number of operands, a computation
  that calls itself (directly or not), calls nested deeper than
  :data:`xlac.hlo.ir.MAX_CALL_DEPTH`;
* :class:`xlac.ShapeError` when an instruction's shape differs from the one
  :mod:`xlac.passes.shape_inference` infers (layouts are ignored:
  ``Shape.compatible``), or the rule itself fails.  Opcodes without a rule are
  not shape-checked.  A dimension shape inference makes dynamic must be
  declared dynamic (``f32[<=10]``), except by a ``set-dimension-size`` to a
  constant equal to the bound (XLA's ``RemoveDynamicDimension``); a dimension
  declared dynamic where inference says static is accepted (its size is the
  bound), as XLA's ``ShapeUtil::Compatible`` does.

In a module of several devices (``replica_count`` x ``num_partitions`` > 1),
collectives are checked against the device counts as XLA's verifier does
(``xlac.hlo.collectives``): the replica groups name every replica
(partition, device) exactly once and no id beyond the count (VerifierError),
source-target pairs stay within the count, and an all-gather's or
reduce-scatter's shard count, an all-to-all's split, is the group size
(ShapeError).

Every message names the computation and the instruction; an error about an
instruction read from text carries its place there (``error.line`` and
``error.column``, :func:`xlac.errors.at_location`), which the command line
prints as ``model.hlo:12:3:``.
"""
from __future__ import annotations

from ..errors import ShapeError, UnsupportedError, at_location
from ..shape import Shape
from . import collectives, opcodes, shape_inference
from .ir import HloComputation, HloInstruction, HloModule, computations_in, find_call_graph_problem
from .opcodes import calls_computations

__all__ = ["verify", "VerifierError", "check_call_graph"]


class VerifierError(ValueError):
    """A structurally broken HLO module (not a shape problem)."""


def verify(module: HloModule) -> None:
    """Check ``module``; raise VerifierError or ShapeError on the first problem."""
    comps = module.computations
    if module.entry is None:
        raise VerifierError(f"module {module.name} has no entry computation")
    if not any(c is module.entry for c in comps):
        raise VerifierError(f"module {module.name}: entry computation {module.entry.name} "
                            "is not among the module's computations")
    seen_names: set[str] = set()
    for comp in comps:
        if comp.name in seen_names:
            raise VerifierError(f"module {module.name}: computation name {comp.name!r} is duplicated")
        seen_names.add(comp.name)
    in_module = {id(c) for c in comps}
    checked: set = set()
    for comp in comps:
        _verify_computation(comp, in_module, checked)
    check_call_graph(module)
    _check_collectives(module)


def check_call_graph(module: HloModule) -> None:
    """Raise VerifierError if a computation of ``module`` calls itself or calls
    nest deeper than :data:`~xlac.hlo.ir.MAX_CALL_DEPTH` (what the evaluator and
    the code generator, which recurse into called computations, can take)."""
    problem = find_call_graph_problem(module.computations)
    if problem is not None:
        inst, _, message = problem
        comp = inst.parent.name if inst.parent is not None else "?"
        raise at_location(VerifierError(f"module {module.name}: computation {comp}, instruction "
                                        f"{inst.name!r} ({inst.opcode}): {message}"), inst.location)


def _verify_computation(comp: HloComputation, in_module: set, checked: set) -> None:
    where = f"computation {comp.name}"
    members = {id(i) for i in comp.instructions}
    if comp.root is None or id(comp.root) not in members:
        root = comp.root.name if comp.root is not None else None
        raise VerifierError(f"{where}: root {root!r} is not an instruction of the computation")

    names: set[str] = set()
    defined: set[int] = set()
    params: list[tuple[int, HloInstruction]] = []
    for inst in comp.instructions:
        at = f"{where}, instruction {inst.name!r} ({inst.opcode})"
        try:
            if inst.name in names:
                raise VerifierError(f"{where}: instruction name {inst.name!r} is duplicated")
            names.add(inst.name)
            _check_instruction(inst, at, members, defined, in_module)
            if inst.opcode == "parameter":
                try:
                    params.append((int(inst.attrs["parameter_number"]), inst))
                except (KeyError, TypeError, ValueError):
                    raise VerifierError(f"{at}: parameter without an integer parameter_number") from None
            _check_shape(inst, at, checked)
        except (VerifierError, ShapeError) as e:
            raise at_location(e, inst.location)
        defined.add(id(inst))
    _check_parameter_numbers(params, where)


def _check_instruction(inst: HloInstruction, at: str, members: set, defined: set, in_module: set) -> None:
    """The instruction's shape, operands, callees and operand count."""
    if not isinstance(inst.shape, Shape):
        raise VerifierError(f"{at}: shape {inst.shape!r} is not a Shape")
    for k, op in enumerate(inst.operands):
        if id(op) not in members:
            raise VerifierError(f"{at}: operand {k} ({getattr(op, 'name', op)!r}) is not an "
                                "instruction of this computation")
        if id(op) not in defined:
            raise VerifierError(f"{at}: operand {k} ({op.name!r}) is used before it is defined")
    if not calls_computations(inst.opcode) and computations_in(inst.attrs):
        key, held = next((k, c) for k, v in inst.attrs.items() for c in computations_in({k: v}))
        raise VerifierError(f"{at}: attribute {key!r} holds computation {held.name!r}, but "
                            f"{inst.opcode} calls no computation (its definition has no "
                            "computation attribute)")
    for callee in inst.called_computations():
        if id(callee) not in in_module:
            raise VerifierError(f"{at}: calls computation {callee.name!r}, which is not in the module")
    _check_arity(inst, at)


def _check_parameter_numbers(params: list, where: str) -> None:
    """Parameter numbers ``0..n-1``, each once; the error is at the first
    parameter (in order) whose number is out of range or taken."""
    numbers = sorted(n for n, _ in params)
    if numbers == list(range(len(params))):
        return
    seen: set[int] = set()
    first = next((inst for n, inst in params if n >= len(params) or n in seen or seen.add(n)), None)
    raise at_location(VerifierError(f"{where}: parameter numbers {numbers} are not "
                                    f"0..{len(params) - 1} without gaps or repeats"),
                      first.location if first is not None else None)


def _check_arity(inst: HloInstruction, at: str) -> None:
    try:
        info = opcodes.info(inst.opcode)
    except KeyError:
        raise VerifierError(f"{at}: unknown opcode {inst.opcode!r}") from None
    n = len(inst.operands)
    arity = info.arity
    if arity is not None and n != arity:
        raise VerifierError(f"{at}: takes {arity} operand(s), has {n}")
    if inst.opcode in ("reduce", "reduce-window") and (n < 2 or n % 2):
        raise VerifierError(f"{at}: takes N inputs and N init values, has {n} operands")
    if inst.opcode == "call":
        callee = inst.attrs.get("to_apply")
        if isinstance(callee, HloComputation) and callee.num_parameters != n:
            raise VerifierError(f"{at}: calls {callee.name} with {callee.num_parameters} "
                                f"parameter(s) but has {n} operand(s)")
    _check_control_arity(inst, n, at)



def _check_control_arity(inst: HloInstruction, n: int, at: str) -> None:
    op = inst.opcode
    if op == "while":
        for name in ("condition", "body"):
            comp = inst.attrs.get(name)
            if not isinstance(comp, HloComputation):
                raise VerifierError(f"{at}: needs a {name} computation")
            if comp.num_parameters != 1:
                raise VerifierError(f"{at}: {name} {comp.name} must take 1 parameter (the loop "
                                    f"state), takes {comp.num_parameters}")
    elif op == "conditional":
        branches = inst.attrs.get("branch_computations") or tuple(
            c for c in (inst.attrs.get("true_computation"), inst.attrs.get("false_computation"))
            if c is not None)
        if not branches or not all(isinstance(c, HloComputation) for c in branches):
            raise VerifierError(f"{at}: needs branch_computations or true_computation and "
                                "false_computation")
        if n != len(branches) + 1:
            raise VerifierError(f"{at}: {len(branches)} branch(es) need {len(branches) + 1} "
                                f"operand(s) (selector first), has {n}")
    elif op == "scatter" and (n < 3 or n % 2 == 0):
        raise VerifierError(f"{at}: takes N operands, the indices and N updates, has {n} operands")
    elif op in ("sort", "map", "dynamic-slice") and n < 1:
        raise VerifierError(f"{at}: needs at least one operand")
    elif op == "dynamic-update-slice" and n < 2:
        raise VerifierError(f"{at}: needs an operand and an update, has {n} operand(s)")


def _check_shape(inst: HloInstruction, at: str, checked: set | None = None) -> None:
    """``inst``'s shape against the one its operands and attributes give.  The
    signatures already found right are in ``checked``: a training step repeats
    the same elementwise ops on the same shapes thousands of times, and
    inference was most of the verifier's time."""
    if not shape_inference.has_rule(inst.opcode):
        return
    key = None
    if checked is not None:
        try:
            key = (inst.opcode, inst.shape, *[o.shape for o in inst.operands], *inst.attrs.items())
            if key in checked:
                return
        except TypeError:           # an unhashable attribute (a literal, a list): not kept
            key = None
    try:
        inferred = shape_inference.infer_shape(inst.opcode, [o.shape for o in inst.operands],
                                               inst.attrs, shape=inst.shape)
    except ShapeError as e:
        raise ShapeError(f"{at}: {e}") from None
    except UnsupportedError:
        return
    if not inferred.compatible(inst.shape):
        raise ShapeError(f"{at}: shape {inst.shape} differs from the inferred shape {inferred} "
                         f"(operand shapes: {', '.join(str(o.shape) for o in inst.operands) or 'none'})")
    if key is not None:
        checked.add(key)


def _check_collectives(module: HloModule) -> None:
    """The collectives of a module of several devices against its device counts."""
    replicas, partitions = module.replica_count, module.num_partitions
    if replicas * partitions == 1:
        return      # as XLA: counts that were not set say nothing about the groups
    everyone = list(range(replicas * partitions))
    for comp in module.computations:
        for inst in comp.instructions:
            at = f"computation {comp.name}, instruction {inst.name!r} ({inst.opcode})"
            try:
                if inst.opcode in collectives.PERMUTE_OPCODES:
                    collectives.device_pairs(inst, replicas, partitions)
                if inst.opcode not in collectives.GROUPED_OPCODES:
                    continue
                groups = collectives.device_groups(inst, replicas, partitions)
                if sorted(d for g in groups for d in g) != everyone:
                    raise VerifierError(
                        f"{at}: replica groups {collectives.replica_groups_of(inst)} do not name every one of "
                        f"the module's {replicas} replica(s) x {partitions} partition(s) exactly once "
                        f"({collectives.group_mode_of(inst)})")
                check_group_size(inst, len(groups[0]), at)
            except collectives.DeviceGroupError as e:
                raise at_location(VerifierError(f"{at}: {e}"), inst.location) from None
            except (VerifierError, ShapeError) as e:
                raise at_location(e, inst.location)


def check_group_size(inst: HloInstruction, size: int, at: str) -> None:
    """``ShapeError`` unless the shapes of collective ``inst`` fit groups of
    ``size`` devices (gathered or split dimensions, the tuple form's count)."""
    op = inst.opcode
    shapes = [o.shape for o in inst.operands]
    if op in ("all-gather", "all-gather-start", "reduce-scatter"):
        result = inst.shape.tuple_shapes[1] if op == "all-gather-start" else inst.shape
        results = list(result.tuple_shapes) if len(shapes) > 1 else [result]
        d = _one_dimension(inst)
        if d is None:
            return                                  # the shape rule reports it
        for x, r in zip(shapes, results):
            big, small = (r, x) if op != "reduce-scatter" else (x, r)
            if not (x.is_array and r.is_array and d < x.rank and d < r.rank):
                return
            if big.dimensions[d] != small.dimensions[d] * size:
                raise ShapeError(f"{at}: {r} along dimension {d} is not {x} split over or gathered from "
                                 f"the {size} devices of each replica group")
    elif op == "all-to-all":
        if "dimensions" in inst.attrs:
            d = _one_dimension(inst)
            if d is not None and shapes[0].is_array and d < shapes[0].rank and shapes[0].dimensions[d] % size:
                raise ShapeError(f"{at}: split dimension {d} of {shapes[0]} is not divisible by the "
                                 f"{size} devices of each replica group")
        elif len(shapes) != size:
            raise ShapeError(f"{at}: the tuple form has {len(shapes)} operand(s) for groups of {size} devices")


def _one_dimension(inst: HloInstruction) -> int | None:
    try:
        dims = [int(str(v)) for v in inst.attrs.get("dimensions", ())]
    except (TypeError, ValueError):
        return None
    return dims[0] if len(dims) == 1 and dims[0] >= 0 else None
