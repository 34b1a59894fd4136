"""Structurally identical kernels are emitted once per module (compile less).

A training step repeats the same fusions once per layer and once per
optimizer slot: the same fused computation up to instruction names, on
buffers of the same shapes, only at other addresses.  Emitting each of them
as a kernel of its own makes LLVM optimise and generate the same loop nests
again and again, and LLVM's O3 is most of a big module's compile time.  So a
kernel whose candidate is ``KernelCandidate.shareable`` is keyed by
:func:`site_key` (what it computes and everything its emission decides from
the instruction's context) and emitted once; every site calls that one
function with its own buffers.

A shared kernel reads its buffers from a *slot array* the call site fills:
one pointer per distinct buffer the kernel touches (its results' leaves, its
operands' leaves, its scratch space), numbered by first occurrence in that
order (:class:`SiteSlots`).  What the emission of a kernel decides from the
context and what therefore is part of the key:

* the fused computation up to names (opcodes, shapes with layouts, dtypes,
  attributes, called computations, constants' values: :func:`fingerprint`);
* which of its operands and results share a buffer (in place, the same
  operand twice): the slot numbers, not the addresses;
* the shapes (layouts) of the buffer slices, and of the operands;
* which operands are constants (a scalar constant is folded into the code:
  its value is in the key; a bigger one is just another slot, so kernels that
  differ only by such a constant share their code);
* the scratch space's size; thread-task splitting and loop versioning follow
  from the shapes, and alignment from the module-wide promise
  (``ModuleEmitter.aligned_results``), which is in the key too.

Addresses never are: the code a shared kernel runs is the same at every site
because nothing of it depends on where its buffers lie (temp offsets,
parameter or result numbers reach it only as slot pointers).

Sizes are not either for a *size-generic* kernel (``KernelCandidate.size_generic``:
an elementwise map run on one thread, which walks its elements in memory order
as one loop and reads every buffer at that loop's index): its key has the
shapes without their sizes (``fingerprint(sizes=False)``), and its site passes
the element count in one more slot, after the buffers' (``SiteSlots.count``).
An optimizer's update or an activation's gradient, the same map over
parameters of a dozen shapes, is then one function instead of a dozen.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..hlo.fingerprint import digest, fingerprint, literal_text, shape_text
from ..hlo.ir import HloInstruction
from ..passes.buffer_assignment import BufferAssignment, BufferSlice
from ..passes.call_inliner import SEQUENTIAL_OPCODES

__all__ = ["SiteSlots", "site_key", "slot_identity"]


def slot_identity(sl: BufferSlice, src: HloInstruction | None):
    """Which buffer ``sl`` is: two slices with the same identity start at the
    same address.  None for a token (no storage)."""
    if sl.kind == "temp":
        return ("temp", sl.offset)
    if sl.kind in ("parameter", "result"):
        return (sl.kind, sl.number)
    if sl.kind == "constant":
        return ("constant", id(src))
    return None


@dataclass
class SiteSlots:
    """The buffers one kernel site passes in its slot array: ``index`` maps a
    :func:`slot_identity` to its slot; ``slices[k]`` is slot ``k``'s slice and
    the instruction defining it (for a constant's global)."""

    index: dict
    slices: list
    #: A size-generic kernel's element count at this site (its slot follows
    #: the buffers'), else None.
    count: int | None = None

    def add(self, sl: BufferSlice, src: HloInstruction | None) -> int | None:
        ident = slot_identity(sl, src)
        if ident is None:
            return None
        k = self.index.get(ident)
        if k is None:
            k = self.index[ident] = len(self.slices)
            self.slices.append((sl, src))
        return k


def _constant_class(assignment: BufferAssignment, op: HloInstruction, leaf: int) -> str:
    """How emission may treat operand ``op``'s leaf as a constant: a scalar
    constant's value is folded into the code (``operand_generator``, constant
    start indices), so it is part of the key; an array constant is a slot."""
    src, _ = assignment.defining(op, leaf)
    const = op if op.opcode == "constant" else src if src.opcode == "constant" else None
    if const is None:
        return "-"
    if const.literal.size <= 1:
        return f"{op.opcode == 'constant'}:{src.opcode == 'constant'}:{literal_text(const.literal)}"
    return f"{op.opcode == 'constant'}:{src.opcode == 'constant'}:array"


def site_key(assignment: BufferAssignment, inst: HloInstruction, candidate: str, flags: tuple,
             memo: dict, size_generic: bool = False) -> tuple[str, SiteSlots]:
    """The sharing key of kernel ``inst`` emitted by ``candidate`` in a
    module emitted with ``flags``, and the slots its site passes; without
    the sizes of its shapes when ``size_generic`` (then the slots carry the
    element count of its result)."""
    slots = SiteSlots({}, [])
    sizes = not size_generic

    def text(shape) -> str:
        return shape_text(shape, sizes)
    parts = [candidate, repr(flags), fingerprint(inst, memo, sizes)]
    if size_generic:
        result = inst.shape.leaves()[0] if inst.shape.is_tuple else inst.shape
        slots.count = result.element_count()
        parts.append("size-generic")
    # Control flow calls its computations' functions (``kernels/control_flow.py``),
    # not inline copies as a fusion's: the same ones, not look-alikes.
    if inst.opcode in SEQUENTIAL_OPCODES:
        parts.append("calls:" + ",".join(c.name for c in inst.called_computations()))
    leaves = inst.shape.leaves() if inst.shape.is_tuple else [inst.shape]
    for leaf in range(len(leaves)):
        sl = assignment.slice_of(inst, leaf)
        parts.append(f"out{leaf}:{slots.add(sl, None)}:{sl.kind == 'token'}:{text(sl.shape)}")
    for k, op in enumerate(inst.operands):
        parts.append(f"op{k}:{text(op.shape)}")
        n = len(op.shape.leaves()) if op.shape.is_tuple else 1
        for leaf in range(n):
            sl = assignment.slice_of(op, leaf)
            src, _ = assignment.defining(op, leaf)
            parts.append(f"{leaf}:{slots.add(sl, src)}:{sl.kind == 'token'}:{text(sl.shape)}:"
                         f"{_constant_class(assignment, op, leaf)}")
    scratch = assignment.scratch_of(inst)
    if scratch is not None:
        parts.append(f"scratch:{slots.add(scratch, None)}:{scratch.size}")
    return digest("\n".join(parts)), slots
