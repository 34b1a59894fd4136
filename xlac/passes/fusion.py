"""Fusion: merge producers into consumers so that a chain of ops is one loop nest.

The pass walks the entry computation from the root towards the parameters
(consumers before producers) and, for each consumer, fuses operands into it
while the rules below allow.  A fused consumer becomes a ``fusion``
instruction whose ``calls=`` computation holds the fused ops; the code
generator composes their elemental generators, so a fusion reads only its real
inputs and writes only its result.

Rules (see ``why_not``):

* A producer must be elemental (elementwise, broadcast, reshape, transpose,
  slice, pad, concatenate, reverse, iota, convert, scalar constant, ...) or a
  ``reduce`` / ``dot`` under the conditions below.  Parameters, tuples and
  control flow are never fused.
* A consumer must be elemental, a ``reduce`` (its input producers are fused in)
  or a fusion.  ``dot`` operands are never fused: a dot reads each operand
  element many times.
* An expensive producer (exp, log, tanh, divide, dot, ...) used outside the
  fusion is not duplicated into it; a cheap one may be.
* An expensive producer is not fused where the fusion would recompute each of
  its elements many times (it reaches the fusion's loop through an expanding
  broadcast), unless the recomputation is hoisted out of the inner loops — the
  case of a ``reduce`` whose result is broadcast along the fusion's minor
  dimensions (softmax, layernorm): the code generator computes it once per
  iteration of the outer loops.
* A ``dot`` fuses only into elementwise consumers that read it at the same
  index (a bias add, an activation): the dot's "output fusion".
* A fusion does not read one input through two different transposes.

Every refusal is recorded in ``module.diagnostics`` ("not fused: ... : <reason>") and
printed by ``xlac dump``.
"""
from __future__ import annotations

from ..hlo.ir import Diagnostic, HloComputation, HloInstruction, HloModule, fresh_name
from ..hlo.opcodes import Trait, has_trait
from .call_inliner import entry_like_computations


#: Ops whose elementwise epilogue fuses into their output (kOutput fusions).
OUTPUT_FUSION_ROOTS = ("dot", "convolution")

MAX_FUSED_INSTRUCTIONS = 256
MAX_FUSION_OPERANDS = 64


def _elementwise(inst: HloInstruction) -> bool:
    return has_trait(inst.opcode, Trait.ELEMENTWISE)


def _data_movement(inst: HloInstruction) -> bool:
    # An index transformation or a cheap leaf (broadcast, slice, gather, iota, ...).
    return has_trait(inst.opcode, Trait.DATA_MOVEMENT)


def _is_scalar_constant(inst: HloInstruction) -> bool:
    return inst.opcode == "constant" and inst.shape.is_array and inst.shape.element_count() <= 1


def fusible_producer(inst: HloInstruction) -> bool:
    return (_elementwise(inst) or _data_movement(inst) or _is_scalar_constant(inst)
            or inst.opcode in ("reduce",) + OUTPUT_FUSION_ROOTS) and inst.shape.is_array


def fusible_consumer(inst: HloInstruction) -> bool:
    if inst.opcode == "fusion":
        return inst.attrs.get("kind") != "kCustom"
    return (_elementwise(inst) or _data_movement(inst) or inst.opcode == "reduce") and \
        (inst.shape.is_array or inst.opcode == "reduce")


def is_expensive(inst: HloInstruction) -> bool:
    """Whether fusion must not duplicate ``inst`` (``Trait.EXPENSIVE``)."""
    return has_trait(inst.opcode, Trait.EXPENSIVE)


# ----------------------------------------------------------------------------
# Building fusions
# ----------------------------------------------------------------------------

class Fuser:
    """Producer/consumer fusion of one computation (the machinery of
    :class:`InstructionFusion`; :class:`~xlac.passes.multi_output_fusion.MultiOutputFusion`
    uses its naming and fusion-building helpers)."""

    def __init__(self, module: HloModule, comp: HloComputation):
        self.module = module
        self.comp = comp
        self.names = {i.name for c in module.computations for i in c.instructions}
        self.comp_names = {c.name for c in module.computations}
        self.notes: list[Diagnostic] = []
        self.refusals: dict = {}
        self.replaced: dict[int, HloInstruction] = {}  # consumer id -> the fusion that replaced it
        # Users as insertion-ordered dicts (id -> instruction) while the pass
        # runs, so that a high-fan-out value (a parameter read by thousands of
        # ops) costs O(1) per update; the lists are rebuilt at the end.
        self._users: dict[int, dict] = {}

    def users(self, inst: HloInstruction) -> dict:
        u = self._users.get(id(inst))
        if u is None:
            u = self._users[id(inst)] = {id(x): x for x in inst.users}
        return u

    def fresh(self, base: str, used: set) -> str:
        return fresh_name(base, used)

    # -- structure -------------------------------------------------------------------
    def make_fusion(self, consumer: HloInstruction) -> HloInstruction:
        """Wrap ``consumer`` in a fusion of its own (params = its distinct operands)."""
        fused = HloComputation(self.fresh(f"fused_{consumer.name}", self.comp_names))
        params: dict[int, HloInstruction] = {}
        operands: list[HloInstruction] = []
        for op in consumer.operands:
            if id(op) not in params:
                p = HloInstruction("parameter", op.shape, (), {"parameter_number": len(operands)},
                                   f"param_{len(operands)}")
                fused.add_instruction(p)
                params[id(op)] = p
                operands.append(op)
        root = HloInstruction(consumer.opcode, consumer.shape, [params[id(o)] for o in consumer.operands],
                              dict(consumer.attrs), consumer.name)
        fused.add_instruction(root)
        fused.root = root
        kind = "kInput" if consumer.opcode == "reduce" else "kLoop"
        fusion = HloInstruction("fusion", consumer.shape, operands, {"kind": kind, "calls": fused},
                                self.fresh(f"fusion.{consumer.name}", self.names))
        self.module.add_computation(fused)
        self._replace(consumer, fusion)
        self.replaced[id(consumer)] = fusion
        return fusion

    def fuse_into(self, fusion: HloInstruction, producer: HloInstruction) -> None:
        """Clone ``producer`` into ``fusion``'s computation in place of its parameter."""
        fused: HloComputation = fusion.attrs["calls"]
        k = fusion.operands.index(producer)
        param = next(p for p in fused.instructions
                     if p.opcode == "parameter" and p.parameter_number == k)
        # Operands of the producer: reuse an existing parameter or add one.
        by_operand = {id(op): p for p in fused.instructions if p.opcode == "parameter"
                      for op in [fusion.operands[p.parameter_number]]}
        new_operands = []
        used = {i.name for i in fused.instructions}
        for op in producer.operands:
            p = by_operand.get(id(op))
            if p is None:
                number = len(fusion.operands)
                p = HloInstruction("parameter", op.shape, (), {"parameter_number": number},
                                   self.fresh(f"param_{number}", used))
                fused.instructions.insert(0, p)
                p.parent = fused
                fusion.operands.append(op)
                by_operand[id(op)] = p
            new_operands.append(p)
        name = self.fresh(producer.name, used)
        clone = HloInstruction(producer.opcode, producer.shape, new_operands, dict(producer.attrs), name)
        clone.parent = fused
        if producer.opcode == "fusion":
            raise AssertionError("producer fusions are not merged")
        # Put the clone where the parameter was (before its users).
        fused.instructions[fused.instructions.index(param)] = clone
        for inst in fused.instructions:
            if param in inst.operands:
                inst.replace_operand(param, clone)
        if fused.root is param:
            fused.root = clone
        # Drop the parameter and renumber the rest (operand k goes away).
        del fusion.operands[k]
        for p in fused.instructions:
            if p.opcode == "parameter" and p.parameter_number > k:
                p.attrs["parameter_number"] -= 1
        if producer.opcode in OUTPUT_FUSION_ROOTS and fusion.attrs.get("kind") == "kLoop":
            fusion.attrs["kind"] = "kOutput"
        # Order stays valid with every parameter first: the clone took its
        # parameter's place, before every user of it, and reads only parameters.
        fused.instructions = ([i for i in fused.instructions if i.opcode == "parameter"]
                              + [i for i in fused.instructions if i.opcode != "parameter"])

    def _replace(self, old: HloInstruction, new: HloInstruction) -> None:
        # comp.instructions is rebuilt once at the end of the pass (linear time);
        # until then ``parent`` tells which instructions are alive.
        comp = self.comp
        comp.instructions.append(new)
        old.parent = None
        new.parent = comp
        old_users = self.users(old)
        for user in old_users.values():
            user.replace_operand(old, new)
        self._users[id(new)] = dict(old_users)
        for op in new.operands:
            op_users = self.users(op)
            op_users.pop(id(old), None)
            op_users[id(new)] = new
        if comp.root is old:
            comp.root = new

    # -- decisions ------------------------------------------------------------------------
    def why_not(self, producer: HloInstruction, consumer: HloInstruction) -> str | None:
        """None if ``producer`` may fuse into ``consumer``, else the reason."""
        if producer.opcode == "parameter":
            return "parameters are inputs"
        if not fusible_producer(producer):
            return f"{producer.opcode} is not fusible as a producer"
        if consumer.opcode == "dot" or not fusible_consumer(consumer):
            return f"{consumer.opcode} does not take fused operands"
        # Counted, not listed: a scalar constant CSE merged is read by thousands
        # of consumers, each of which asks.
        users = self.users(producer)
        others = len(users) - (id(consumer) in users)
        if producer is self.comp.root:
            others += 1  # the root's value must exist on its own
        if others and is_expensive(producer):
            return (f"expensive {producer.opcode} has {others + 1} users; "
                    f"it would be computed once per user")
        fused = consumer.attrs["calls"] if consumer.opcode == "fusion" else None
        size = len(fused.instructions) if fused else 1
        if size + 1 > MAX_FUSED_INSTRUCTIONS:
            return f"fusion would exceed {MAX_FUSED_INSTRUCTIONS} instructions"
        if len(consumer.operands) + len(producer.operands) > MAX_FUSION_OPERANDS:
            return f"fusion would exceed {MAX_FUSION_OPERANDS} operands"
        uses = _uses_in_consumer(producer, consumer)
        if producer.opcode in OUTPUT_FUSION_ROOTS and \
                not all(_index_preserving_to_root(u, consumer) for u in uses):
            # The dot/convolution emitter applies an epilogue to its own output tiles.
            return (f"a {producer.opcode} fuses only into elementwise consumers that read it "
                    f"at the same index")
        if is_expensive(producer):
            for use in uses:
                why = _reuse(use, consumer)
                if why:
                    return f"{producer.opcode} {why}"
        why = _transpose_conflict(producer, consumer)
        if why:
            return why
        return None

    def form_dot_epilogues(self) -> bool:
        """Start a fusion at the top of each dot's elementwise epilogue.

        A dot whose value flows through single-user, same-shape elementwise ops
        (bias add, activation) gets those ops as its "output fusion": the
        fusion is rooted at the last of them, so later consumers read the
        finished activation and never absorb the bias add on their own.
        """
        changed = False
        for dot in [i for i in self.comp.post_order() if i.opcode in OUTPUT_FUSION_ROOTS]:
            top = dot
            while True:
                users = list(self.users(top).values())
                if not (len(users) == 1 and top is not self.comp.root and _elementwise(users[0])
                        and users[0].shape.dimensions == dot.shape.dimensions):
                    break
                top = users[0]
            if top is not dot:
                self.make_fusion(top)
                changed = True
        return changed

    def run(self) -> bool:
        self.comp.compute_users()
        changed = self.form_dot_epilogues()
        for consumer in reversed(self.comp.post_order()):
            if consumer.parent is not self.comp:
                continue
            if not fusible_consumer(consumer):
                continue
            current = consumer
            progress = True
            while progress:
                progress = False
                for producer in self.candidates(current):
                    why = self.why_not(producer, current)
                    if why is not None:
                        if producer.opcode not in ("parameter", "constant", "get-tuple-element"):
                            self.refusals[(id(producer), id(consumer))] = (producer, consumer, why)
                        continue
                    if current.opcode != "fusion":
                        current = self.make_fusion(current)
                    self._fuse(current, producer)
                    changed = True
                    progress = True
                    break
        if changed:
            alive = [i for i in self.comp.instructions if i.parent is self.comp]
            self.comp.instructions = alive
            self.comp.instructions = self.comp.post_order()
            self.comp.compute_users()
        # Keep the refusals that stand: the producer is still an input of the consumer.
        for producer, consumer, why in self.refusals.values():
            final = self.replaced.get(id(consumer), consumer)
            if self.replaced.get(id(producer), producer) in final.operands:
                self.notes.append(Diagnostic("fusion", producer.name,
                                             f"not fused: {producer.name} into {final.name}: {why}"))
        return changed

    def candidates(self, consumer: HloInstruction) -> list:
        """The operands of ``consumer`` to try fusing, in order: first those
        only it reads (fusing them duplicates nothing), then the others, each
        group in operand order.  In a DAG (a cipher's rounds read each value
        twice) a value that two instructions of the fusion read is then fused
        once, after both, rather than copied into the fusion for each."""
        operands = list(dict.fromkeys(consumer.operands))
        only = {id(p) for p in operands
                if p is not self.comp.root and all(u is consumer for u in self.users(p).values())}
        return [p for p in operands if id(p) in only] + [p for p in operands if id(p) not in only]

    def _fuse(self, fusion: HloInstruction, producer: HloInstruction) -> None:
        self.fuse_into(fusion, producer)
        producer_users = self.users(producer)
        producer_users.pop(id(fusion), None)
        for op in producer.operands:
            self.users(op)[id(fusion)] = fusion
        if not producer_users and producer is not self.comp.root:
            for op in producer.operands:
                self.users(op).pop(id(producer), None)
            producer.parent = None  # dropped from comp.instructions at the end of the pass


# ----------------------------------------------------------------------------
# Index analyses inside a (future) fusion
# ----------------------------------------------------------------------------

def _uses_in_consumer(producer: HloInstruction, consumer: HloInstruction) -> list:
    """Where the producer's value is read once fused: (instruction, operand index) pairs
    inside the fused computation (or the consumer itself when it is not a fusion)."""
    if consumer.opcode != "fusion":
        return [(consumer, k) for k, o in enumerate(consumer.operands) if o is producer]
    fused: HloComputation = consumer.attrs["calls"]
    k = consumer.operands.index(producer)
    param = next(p for p in fused.instructions if p.opcode == "parameter" and p.parameter_number == k)
    return [(inst, j) for inst in fused.instructions for j, o in enumerate(inst.operands) if o is param]


def fused_root(consumer: HloInstruction) -> HloInstruction:
    return consumer.attrs["calls"].root if consumer.opcode == "fusion" else consumer


def _users_in(inst: HloInstruction, consumer: HloInstruction) -> list:
    if consumer.opcode != "fusion":
        return []
    fused = consumer.attrs["calls"]
    return [(u, j) for u in fused.instructions for j, o in enumerate(u.operands) if o is inst]


def _index_preserving_to_root(use, consumer) -> bool:
    """Every path from this use to the fusion root goes through same-shape elementwise ops."""
    inst, _ = use
    root = fused_root(consumer)
    seen = set()
    stack = [inst]
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if not _elementwise(cur) or cur.shape.dimensions != root.shape.dimensions:
            return False
        if cur is root:
            continue
        users = _users_in(cur, consumer)
        if not users:
            return False
        stack.extend(u for u, _ in users)
    return True


def _unit_reshape(inst: HloInstruction) -> bool:
    """A reshape that only adds or removes size-1 dimensions."""
    a = [n for n in inst.operands[0].shape.dimensions if n != 1]
    b = [n for n in inst.shape.dimensions if n != 1]
    return a == b


def _nontrivial(shape) -> tuple:
    return tuple(d for d, n in enumerate(shape.dimensions) if n != 1)


def _reuse(use, consumer) -> str | None:
    """None if the value read at ``use`` is computed once per element it has
    (or hoistably once per iteration of the outer loops); otherwise why not.

    The walk follows the value from ``use`` to the fusion root tracking ``dep``:
    the dimensions (of the instruction reached) along which the value varies.
    While every index on the way is a plain loop variable (``pure``), a value
    that varies only along the outer loops of the kernel is computed once per
    outer iteration (the code generator hoists it); after an index computation
    (slice, pad, ...) the value must be read once per element.
    """
    inst, k = use
    operand_shape = inst.operands[k].shape
    return _walk(inst, k, set(_nontrivial(operand_shape)), True, consumer, 0)


def _walk(inst, k, dep: set, pure: bool, consumer, depth: int) -> str | None:
    if depth > 64:
        return "index analysis gave up (too deep)"
    operand_shape = inst.operands[k].shape
    full = set(_nontrivial(operand_shape))
    op = inst.opcode
    if op == "broadcast":
        dims = inst.attrs.get("dimensions", ())
        new_dep = {dims[d] for d in dep}
        if new_dep != set(_nontrivial(inst.shape)) and not pure:
            return f"would be recomputed for every element of broadcast {inst.name}"
        return _continue(inst, new_dep, pure, consumer, depth)
    if op in ("reshape", "bitcast") and _unit_reshape(inst):
        src, dst = _nontrivial(operand_shape), _nontrivial(inst.shape)
        new_dep = {dst[src.index(d)] for d in dep}
        return _continue(inst, new_dep, pure, consumer, depth)
    if op == "transpose":
        perm = inst.attrs["dimensions"]
        new_dep = {j for j, p in enumerate(perm) if p in dep}
        return _continue(inst, new_dep, pure, consumer, depth)
    if op == "reduce" and k < len(inst.operands) // 2:
        reduced = set(inst.attrs["dimensions"])
        kept = [d for d in range(operand_shape.rank) if d not in reduced]
        kept_nontrivial = {d for d in kept if operand_shape.dimensions[d] != 1}
        if dep != full and not (pure and dep == kept_nontrivial):
            return f"would be recomputed inside reduce {inst.name}"
        new_dep = {kept.index(d) for d in dep if d in kept}
        return _continue(inst, new_dep, pure, consumer, depth)
    if op == "reduce":  # the init value: read once per output element
        return _continue(inst, set(), pure, consumer, depth)
    if _elementwise(inst) and operand_shape.dimensions == inst.shape.dimensions:
        return _continue(inst, dep, pure, consumer, depth)
    if _elementwise(inst):  # a scalar operand of select/clamp
        return _continue(inst, set(), pure, consumer, depth)
    # Any other index computation: no hoisting past it, and no reuse allowed.
    if dep != full:
        return f"would be recomputed for every element of {inst.opcode} {inst.name}"
    return _continue(inst, set(_nontrivial(inst.shape)), False, consumer, depth)


def _continue(inst, dep: set, pure: bool, consumer, depth: int) -> str | None:
    root = fused_root(consumer)
    if inst is root:
        return _at_root(inst, dep, pure)
    users = _users_in(inst, consumer)
    if not users:
        return f"is read by {inst.name}, whose value leaves the fusion"
    for user, j in users:
        why = _walk(user, j, dep, pure, consumer, depth + 1)
        if why:
            return why
    return None


def _at_root(root, dep: set, pure: bool) -> str | None:
    full = set(_nontrivial(root.shape.leaves()[0])) if root.shape.is_tuple else set(_nontrivial(root.shape))
    if dep == full:
        return None
    if root.opcode == "reduce":
        return None  # dep is over the reduce's output dims: each computed once per output element
    shape = root.shape.leaves()[0] if root.shape.is_tuple else root.shape
    order = [d for d in reversed(shape.layout.minor_to_major) if shape.dimensions[d] != 1]
    if pure and dep == set(order[:len(dep)]):
        return None  # varies along outer loops only: hoisted
    return "would be recomputed for every element of the fusion's inner loops"


def _transpose_conflict(producer: HloInstruction, consumer: HloInstruction) -> str | None:
    """Refuse to make a fusion read an input through two different transposes."""
    if consumer.opcode != "fusion":
        return None
    fused = consumer.attrs["calls"]
    for op in producer.operands:
        if op not in consumer.operands or op.shape.rank < 2:
            continue
        k = consumer.operands.index(op)
        param = next(p for p in fused.instructions if p.opcode == "parameter" and p.parameter_number == k)
        existing = {_access(u) for u in fused.instructions for o in u.operands if o is param}
        new = _access(producer)
        if existing and (existing - {new}):
            return (f"would read {op.name} through two different index maps "
                    f"({', '.join(sorted(existing | {new}))}), so one of the reads is strided")
    return None


def _access(inst: HloInstruction) -> str:
    if inst.opcode == "transpose":
        return "transpose" + str(tuple(inst.attrs["dimensions"]))
    return "direct"


class InstructionFusion:
    """Pass: producer-consumer fusion of the entry computation, and of the
    decompositions of its composite calls (see module docstring)."""

    name = "fusion"

    def run(self, module: HloModule) -> bool:
        changed = False
        for comp in entry_like_computations(module):
            fuser = Fuser(module, comp)
            changed |= fuser.run()
            module.diagnostics.extend(fuser.notes)
        if changed:
            module.drop_uncalled_computations()
            module.sort_computations()
        return changed
