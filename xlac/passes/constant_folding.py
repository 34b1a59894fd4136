"""ConstantFolding: replace an instruction whose operands are all constants by
the constant it computes (with :func:`xlac.evaluator.evaluate_computation`).

Left alone, as XLA's HloConstantFolding leaves them:

* instructions without operands (``iota``, ``rng``, ``replica-id``, ...) and
  a ``broadcast`` of a scalar: cheaper to recompute inside a fused loop than
  to read from a big constant;
* anything with a side effect (:func:`xlac.passes.rewriter.has_side_effect`),
  and ``while``/``call``/``conditional`` (a loop could run forever at compile
  time), ``custom-call``, ``fusion``, ``rng-bit-generator``;
* results of more than :data:`MAX_RESULT_ELEMENTS` elements and operands of
  more than :data:`MAX_OPERAND_ELEMENTS` (compile time and binary size;
  :data:`MAX_RESULT_ELEMENTS` for the operands of an op that applies a
  computation, which the evaluator may run element by element);
* tuple results, elided constants (``{...}``: the value is unknown), and
  whatever the evaluator refuses.

The folded constant takes the instruction's exact shape, layout included.
"""
from __future__ import annotations

import numpy as np

from ..evaluator import evaluate_computation, supported_opcodes
from ..hlo.ir import HloComputation, HloInstruction, HloModule
from .rewriter import has_side_effect

__all__ = ["ConstantFolding", "MAX_RESULT_ELEMENTS", "MAX_OPERAND_ELEMENTS"]

MAX_RESULT_ELEMENTS = 1 << 16
MAX_OPERAND_ELEMENTS = 1 << 20

_NEVER_FOLD = frozenset({"parameter", "constant", "while", "call", "conditional", "custom-call",
                         "fusion", "rng-bit-generator", "tuple", "iota", "partition-id",
                         "replica-id"})


def _elements(shape) -> int:
    return sum(s.element_count() for s in shape.leaves() if s.is_array)


def foldable(inst: HloInstruction, operands: list | None = None, memo: dict | None = None) -> bool:
    """Would :class:`ConstantFolding` fold ``inst`` (with ``operands``, by default its own)?"""
    operands = inst.operands if operands is None else operands
    if inst.opcode in _NEVER_FOLD or not operands:
        return False
    if not inst.shape.is_array or inst.shape.element_count() > MAX_RESULT_ELEMENTS:
        return False
    for op in operands:
        if op.opcode != "constant" or op.attrs.get("elided"):
            return False
    limit = MAX_OPERAND_ELEMENTS
    if inst.called_computations():  # the evaluator may apply the computation element by element
        limit = MAX_RESULT_ELEMENTS
    if sum(_elements(op.shape) for op in operands) > limit:
        return False
    if inst.opcode == "broadcast" and operands[0].shape.element_count() == 1:
        return False
    if inst.opcode not in supported_opcodes():
        return False
    return not has_side_effect(inst, memo)


def fold(inst: HloInstruction, operands: list | None = None) -> np.ndarray | None:
    """The value of ``inst`` applied to constant ``operands`` (by default its own),
    or None when it cannot be computed."""
    operands = inst.operands if operands is None else operands
    clones = [HloInstruction("constant", op.shape, [], dict(op.attrs), f"c{k}")
              for k, op in enumerate(operands)]
    clone = HloInstruction(inst.opcode, inst.shape, clones, dict(inst.attrs), "folded")
    scratch = HloComputation("constant_folding", clones + [clone], root=clone)
    try:
        value = evaluate_computation(scratch, [])
    except Exception:  # noqa: BLE001 - an op the evaluator cannot run is simply not folded
        return None
    if not isinstance(value, np.ndarray) or value.dtype != inst.shape.dtype \
            or value.shape != inst.shape.dimensions:
        return None
    return np.array(value, order="C", copy=True)


class ConstantFolding:
    """Pass: fold constant subexpressions of every computation."""

    name = "constant-folding"

    def run(self, module: HloModule) -> bool:
        changed = False
        names = None
        memo: dict = {}
        for comp in module.computations:
            folded = []
            # Folded in this walk: later instructions see the new constants, so
            # a whole constant expression folds in one run.
            replacement: dict[int, HloInstruction] = {}
            for inst in comp.instructions:
                operands = [replacement.get(id(o), o) for o in inst.operands]
                if not foldable(inst, operands, memo):
                    continue
                value = fold(inst, operands)
                if value is None:
                    continue
                if names is None:
                    names = module.name_uniquer()
                const = HloInstruction("constant", inst.shape, [], {"literal": value},
                                       names("constant"))
                replacement[id(inst)] = const
                folded.append((inst, const))
            if not folded:
                continue
            changed = True
            _install(comp, folded)
        return changed


def _install(comp: HloComputation, folded: list) -> None:
    """Put each new constant in place of its instruction (same position in the list)."""
    comp.compute_users()
    position = {id(old): const for old, const in folded}
    out = []
    for inst in comp.instructions:
        const = position.get(id(inst))
        if const is not None:
            const.parent = comp
            out.append(const)
        out.append(inst)
    comp.instructions = out
    for old, const in folded:
        comp.replace_all_uses(old, const)
    # The folded instructions are dead now, and so are the new constants that
    # only fed other folded instructions (their old operands are left to DCE).
    gone = {id(old) for old, _ in folded}
    comp.instructions = [i for i in comp.instructions if id(i) not in gone]
    comp.compute_users()
    unused = {id(c) for _, c in folded if not c.users and c is not comp.root}
    if unused:
        comp.instructions = [i for i in comp.instructions if id(i) not in unused]
