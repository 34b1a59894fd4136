"""AllReduceCombiner: one ``all-reduce`` of several operands for independent
all-reduces alike (XLA's ``AllReduceCombiner``).

A data-parallel training step partitioned by the SPMD partitioner sums each
parameter's gradient with an all-reduce of its own; each is a round of the
collective protocol (every device waits for every other: on device processes
a barrier each).  Here the all-reduces of a computation that reduce with the
same computation over the same replica groups (the same ``channel_id``-ness
and ``use_global_device_ids``), of array shape, become one variadic
``all-reduce`` (a tuple of their results, each read back by a
``get-tuple-element``) — as long as none depends on another, directly or
through other combined groups (the combined ones must stay acyclic), and a
group holds at most ``THRESHOLD_BYTES`` (XLA's default combine threshold, 30
MiB) and ``THRESHOLD_COUNT`` operands.

The greedy grouping walks the all-reduces in post order: each joins the
first group of its key that it does not depend on, whose members none of the
groups it depends on depend on (a group graph kept acyclic), and that has
room.  A sum is the same whether its operands travel together or apart: the
results do not change.
"""
from __future__ import annotations

from ..hlo.fingerprint import computation_fingerprint
from ..hlo.ir import HloComputation, HloInstruction, HloModule
from ..shape import Shape

__all__ = ["AllReduceCombiner", "THRESHOLD_BYTES", "THRESHOLD_COUNT"]

#: Bytes of operands a combined all-reduce holds at most (XLA's default).
THRESHOLD_BYTES = 30 * 1024 * 1024
#: Operands a combined all-reduce holds at most (XLA's default).
THRESHOLD_COUNT = 256
#: Attributes that do not keep two all-reduces apart (the combined one takes the first's).
_FREE_ATTRIBUTES = frozenset({"channel_id", "metadata", "to_apply", "frontend_attributes", "sharding"})


class AllReduceCombiner:
    """Pass: combine the independent all-reduces alike of every computation
    (see the module docstring)."""

    name = "all-reduce-combiner"

    def run(self, module: HloModule) -> bool:
        memo: dict = {}
        changed = False
        names = None
        for comp in module.computations:
            if sum(1 for i in comp.instructions if i.opcode == "all-reduce") < 2:
                continue
            groups = _groups(comp, memo)
            if not groups:
                continue
            if names is None:
                names = module.name_uniquer()
            comp.compute_users()
            for members in groups:
                _combine(comp, members, names)
            comp.sort_topologically()
            comp.compute_users()
            changed = True
        return changed


def _key(inst: HloInstruction, memo: dict):
    """What two all-reduces must share to travel together, or None (not combinable)."""
    if inst.opcode != "all-reduce" or len(inst.operands) != 1 or not inst.shape.is_array \
            or inst.attrs.get("control-predecessors"):
        return None
    attrs = tuple(sorted((k, str(v)) for k, v in inst.attrs.items() if k not in _FREE_ATTRIBUTES))
    return computation_fingerprint(inst.attrs["to_apply"], memo), attrs, "channel_id" in inst.attrs


class _Group:
    def __init__(self, key):
        self.key, self.members, self.bytes = key, [], 0
        self.after: set = set()          # the groups with a member that depends on one of these


def _groups(comp: HloComputation, memo: dict) -> list:
    """The groups of two or more all-reduces of ``comp`` to combine."""
    order = comp.post_order()
    keys = {i: _key(i, memo) for i in order if i.opcode == "all-reduce"}
    candidates = [i for i in order if keys.get(i) is not None]
    if len(candidates) < 2:
        return []
    bit = {inst: 1 << k for k, inst in enumerate(candidates)}
    reach: dict = {}                     # inst -> the candidates it is or depends on (a bit mask)
    for inst in order:
        mask = 0
        for o in inst.operands:
            mask |= reach.get(o, 0)
        reach[inst] = mask | bit.get(inst, 0)
    group_of: dict = {}
    groups: list[_Group] = []
    for inst in candidates:
        key = keys[inst]
        below = reach[inst.operands[0]]
        before = {group_of[c] for c in candidates if below & bit[c]}      # the groups it depends on
        size = inst.shape.byte_size()
        chosen = None
        for g in groups:
            if g.key != key or g in before or len(g.members) >= THRESHOLD_COUNT \
                    or g.bytes + size > THRESHOLD_BYTES:
                continue
            # Joining g puts g after every group in ``before``: none may be after g.
            if any(_after(g, h) for h in before):
                continue
            chosen = g
            break
        if chosen is None:
            chosen = _Group(key)
            groups.append(chosen)
        chosen.members.append(inst)
        chosen.bytes += size
        group_of[inst] = chosen
        for h in before:
            h.after.add(chosen)
    return [g.members for g in groups if len(g.members) > 1]


def _after(g: _Group, h: _Group) -> bool:
    """Whether ``h`` comes after ``g`` in the group graph (a path g -> ... -> h)."""
    stack, seen = [g], {g}
    while stack:
        for nxt in stack.pop().after:
            if nxt is h:
                return True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def _combine(comp: HloComputation, members: list, names) -> None:
    """One all-reduce of ``members``' operands; each member replaced by its part."""
    first = members[0]
    combined = HloInstruction("all-reduce", Shape.tuple([m.shape for m in members]),
                              [m.operands[0] for m in members], dict(first.attrs),
                              names(first.name + ".combined"))
    comp.add_instruction(combined)
    for k, m in enumerate(members):
        part = comp.add_instruction(HloInstruction("get-tuple-element", m.shape, [combined], {"index": k},
                                                   names(m.name)))
        comp.replace_all_uses(m, part)       # (``m.users`` current: computed before the first group)
    comp.remove_instructions(members)
