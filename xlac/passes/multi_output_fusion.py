"""MultiOutputFusion: sibling fusions that stream the same input share one kernel.

After producer/consumer fusion (``xlac.passes.fusion``), two fusions, or
elementwise instructions the fusion pass left alone (:func:`_mergeable`),
that read a common operand and iterate over the same loop
(:func:`_loop_signature`) become one fusion with a tuple root: the input is
read once for both (the ``real`` and ``imag`` of a 512 x 512 complex
operand: 3.3 instead of 3.4 ms for a c64 product of four real dots).
Refusals ("not merged: ...") are diagnostics.
"""
from __future__ import annotations

from ..hlo.ir import Diagnostic, HloComputation, HloInstruction, HloModule
from ..hlo.opcodes import Trait, has_trait
from ..shape import Shape
from .call_inliner import sequential_computations
from .fusion import Fuser, fused_root, is_strided_slice

__all__ = ["MultiOutputFusion"]


def _loop_signature(inst: HloInstruction):
    """What a kernel iterates over: fusions with equal signatures can share one loop."""
    root = fused_root(inst) if inst.opcode == "fusion" else inst
    roots = root.operands if root.opcode == "tuple" else [root]
    sigs = set()
    for r in roots:
        if r.opcode == "reduce":
            sigs.add(("reduce", r.shape.leaves()[0].dimensions, r.operands[0].shape.dimensions,
                      tuple(sorted(r.attrs["dimensions"]))))
        elif r.shape.is_array:
            sigs.add(("loop", r.shape.dimensions))
        else:
            return None
    return sigs.pop() if len(sigs) == 1 else None


def _mergeable(inst: HloInstruction) -> bool:
    """A loop or input fusion, or an elementwise instruction or a strided
    slice left unfused (the ``real`` and ``imag`` of one complex operand,
    both read by dots; a transposed convolution's kernel sliced at every
    other tap for each phase, jax's ``associative_scan`` reading the even
    and the odd elements): a kernel of its own that a sibling can share.  (A
    contiguous slice keeps its kernel of row copies.)"""
    if inst.opcode == "fusion":         # (not a scatter's: it updates its base, it is no loop over it)
        return inst.attrs.get("kind") in ("kLoop", "kInput") and inst.attrs["calls"].root.opcode != "scatter"
    return (has_trait(inst.opcode, Trait.ELEMENTWISE) or is_strided_slice(inst)) and inst.shape.is_array


class MultiOutputFusion:
    """Pass: merge sibling fusions that read a common input over the same loop.

    Two reductions of the same rows (a sum and a max of ``x``), or two
    same-shaped loops over ``x``, become one fusion with a tuple result, so
    ``x`` is streamed from memory once.  Siblings are merged only when neither
    depends on the other.
    """

    name = "multi-output-fusion"

    def run(self, module: HloModule) -> bool:
        changed = False
        for comp in sequential_computations(module):
            changed |= self._run(module, comp)
        if changed:
            module.drop_uncalled_computations()
            module.sort_computations()
        return changed

    def _run(self, module: HloModule, comp: HloComputation) -> bool:
        fuser = Fuser(module, comp)
        changed = False
        comp.compute_users()
        order = _TopologicalOrder(comp)
        candidates = [i for i in comp.instructions if _mergeable(i)]
        merged = set()
        for a in candidates:
            if id(a) in merged or a.parent is not comp:
                continue
            sig = _loop_signature(a)
            if sig is None:
                continue
            for x in a.operands:
                if x.shape.element_count() < 1024:
                    continue  # small shared inputs are not worth a merge
                for b in list(x.users):
                    if b is a or id(b) in merged or not _mergeable(b) or b.parent is not comp \
                            or _loop_signature(b) != sig:
                        continue
                    first, later = order.sorted(a, b)
                    descendants = order.descendants_before(first, later)
                    if descendants is None:
                        fuser.notes.append(Diagnostic("multi-output-fusion", a.name,
                                                      f"not merged: {a.name} and {b.name}: one depends "
                                                      f"on the other"))
                        continue
                    a, created = self._merge(fuser, comp, a, b)
                    order.merged(first, later, a, created, descendants)
                    merged.add(id(b))
                    changed = True
        if changed:
            comp.instructions = [i for i in comp.instructions if i.parent is comp]
            comp.instructions = comp.post_order()
            comp.compute_users()
        module.diagnostics.extend(fuser.notes)
        return changed

    def _merge(self, fuser: Fuser, comp: HloComputation, a: HloInstruction, b: HloInstruction):
        fused = HloComputation(fuser.fresh("fused_multi", fuser.comp_names))
        operands: list[HloInstruction] = []
        params: dict[int, HloInstruction] = {}
        names: set[str] = set()  # of the instructions in ``fused`` so far
        roots = []

        def parameter(outer: HloInstruction) -> HloInstruction:
            if id(outer) not in params:
                p = HloInstruction("parameter", outer.shape, (), {"parameter_number": len(operands)},
                                   f"param_{len(operands)}")
                fused.add_instruction(p)
                names.add(p.name)
                params[id(outer)] = p
                operands.append(outer)
            return params[id(outer)]

        for f in (a, b):
            if f.opcode != "fusion":        # an elementwise instruction of its own
                clone = HloInstruction(f.opcode, f.shape, [parameter(o) for o in f.operands], dict(f.attrs),
                                       fuser.fresh(f.name, names))
                fused.add_instruction(clone)
                roots.append((f, [clone]))
                continue
            body: HloComputation = f.attrs["calls"]
            mapping = {}
            for inst in body.post_order():
                if inst.opcode == "parameter":
                    mapping[id(inst)] = parameter(f.operands[inst.parameter_number])
                    continue
                if inst is body.root and inst.opcode == "tuple" and f.shape.is_tuple:
                    continue  # a multi-output fusion merged again: its elements become roots
                clone = HloInstruction(inst.opcode, inst.shape, [mapping[id(o)] for o in inst.operands],
                                       dict(inst.attrs), fuser.fresh(inst.name, names))
                fused.add_instruction(clone)
                mapping[id(inst)] = clone
            if body.root.opcode == "tuple" and f.shape.is_tuple:
                roots.append((f, [mapping[id(o)] for o in body.root.operands]))
            else:
                roots.append((f, [mapping[id(body.root)]]))
        elements = [r for _, rs in roots for r in rs]
        tup = HloInstruction("tuple", Shape.tuple([e.shape for e in elements]), elements, {},
                             fuser.fresh("tuple.root", names))
        fused.add_instruction(tup)
        fused.root = tup
        created = []  # the instructions that replace a and b, each before its users
        fusion = HloInstruction("fusion", tup.shape, operands,
                                {"kind": "kInput" if _loop_signature(a)[0] == "reduce" else "kLoop",
                                 "calls": fused}, fuser.fresh("fusion.multi", fuser.names))
        fusion.parent = comp
        comp.instructions.append(fusion)
        created.append(fusion)
        fuser.module.add_computation(fused)
        # Replace each sibling by get-tuple-elements of the merged fusion.
        k = 0
        for f, rs in roots:
            if f.shape.is_tuple:
                replacement_parts = []
                for r in rs:
                    g = HloInstruction("get-tuple-element", r.shape, [fusion], {"index": k},
                                       fuser.fresh(f"{f.name}.gte{k}", fuser.names))
                    g.parent = comp
                    comp.instructions.append(g)
                    created.append(g)
                    replacement_parts.append(g)
                    k += 1
                replacement = HloInstruction("tuple", f.shape, replacement_parts, {},
                                             fuser.fresh(f"{f.name}.tuple", fuser.names))
                # The parts' users too: a later merge asks ``_reaches`` through them
                # whether a sibling depends on this fusion (missing, it merged a
                # fusion with one of its own consumers, and the kernels ran out of order).
                for g in replacement_parts:
                    g.users.append(replacement)
            else:
                replacement = HloInstruction("get-tuple-element", rs[0].shape, [fusion], {"index": k},
                                             fuser.fresh(f"{f.name}.gte", fuser.names))
                k += 1
            replacement.parent = comp
            comp.instructions.append(replacement)
            created.append(replacement)
            for user in list(f.users):
                user.replace_operand(f, replacement)
                replacement.users.append(user)
            if comp.root is f:
                comp.root = replacement
            f.parent = None  # dropped from comp.instructions when the pass ends
        for op in operands:
            op.users = [u for u in op.users if u is not a and u is not b]
            op.users.append(fusion)
        fusion.users = [g for g in comp.instructions[-(k + len(roots)):]
                        if g.opcode == "get-tuple-element" and g.operands[0] is fusion]
        return fusion, created


class _TopologicalOrder:
    """A key per instruction of ``comp`` that grows along every operand-to-user
    edge, kept valid across merges, so that "does ``b`` depend on ``a``?" is
    one search from the earlier of the two that stops at keys past the later.

    Keys are tuples, compared lexicographically: the positions of a post order
    at first.  Merging siblings ``first`` < ``later`` (neither reaching the
    other) puts the merged fusion just after ``later``'s key (``later + (0,)``),
    then the get-tuple-elements and tuples made for it, then the descendants of
    ``first`` that were keyed before ``later`` (they read the fusion now),
    in their old order.  Every edge still increases: the fusion's operands are
    keyed before ``first`` or ``later``, its users are those descendants or
    were keyed after ``later``; a key with the prefix ``later + (0,)`` is new
    (``later`` is gone), and one after ``later`` without it, e.g. the
    get-tuple-elements of an earlier merge into ``later`` (``later + (1,)``),
    stays after every key given here.
    """

    #: Say "depends" when a search visits more nodes than this (no merge, no harm).
    BUDGET = 4096

    def __init__(self, comp: HloComputation):
        # Keyed by the instructions themselves (they hash by identity): the
        # searches below look up ~10^5 keys for a training step.
        self.key = {inst: (n,) for n, inst in enumerate(comp.post_order())}

    def sorted(self, a: HloInstruction, b: HloInstruction) -> tuple:
        """``a`` and ``b``, the one with the smaller key first."""
        return (a, b) if self.key[a] < self.key[b] else (b, a)

    def descendants_before(self, first: HloInstruction, later: HloInstruction) -> list | None:
        """The users of ``first``, transitively, keyed before ``later``; None when
        ``later`` is among them (or the search exceeds :attr:`BUDGET` nodes).
        ``later`` cannot reach ``first``: its key is larger."""
        key, budget = self.key, self.BUDGET
        bound = key[later]
        seen = {first}
        found, stack = [], [first]
        while stack:
            for u in stack.pop().users:
                if u in seen:
                    continue
                if u is later or len(seen) > budget:
                    return None
                seen.add(u)
                if key[u] < bound:  # a larger key cannot lead to ``later``
                    found.append(u)
                    stack.append(u)
        return found

    def merged(self, first: HloInstruction, later: HloInstruction, fusion: HloInstruction,
               created: list, descendants: list) -> None:
        """Key the merge of ``first`` and ``later``: ``created`` (the fusion, then
        its get-tuple-elements and tuples) and the moved ``descendants``."""
        key = self.key
        base = key[later] + (0,)
        for n, inst in enumerate(created):
            key[inst] = base + (n,) if n else base
        descendants.sort(key=key.__getitem__)
        for n, inst in enumerate(descendants, start=len(created)):
            key[inst] = base + (n,)
