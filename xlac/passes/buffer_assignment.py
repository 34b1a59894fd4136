"""Buffer assignment: which buffer holds each array value of the entry computation.

A *value* is one array leaf of an instruction's result (an instruction of tuple
shape has one value per leaf, numbered depth-first).  Every value lives in one
of four places:

* ``parameter`` — the caller's argument buffer ``params[number]``;
* ``constant``  — a read-only global emitted with the code;
* ``result``    — the caller's result buffer ``results[number]`` (the root's leaves);
* ``temp``      — a slice ``[offset, offset + size)`` of the one temp arena.

``tuple`` and ``get-tuple-element`` own no buffer: their values alias their
operands'.  Neither does a ``bitcast`` (``Trait.VIEW``): it is its operand's
buffer read with its own shape, as XLA's bitcasts are (its slice is the
operand's with the bitcast's shape); what reads it reads the operand's buffer,
so it keeps that buffer alive.  A root leaf computed by the module writes
straight into its result buffer (through a bitcast too: the bytes are the
same), and so is the operand a root updates in place when nothing else reads
it (``_claim_donors``); a root leaf that is a parameter, a constant or a
repeat of another leaf is copied there at the end (``copies``).

Temp slices are reused once their value is dead: values are placed in the
order the schedule defines them, and a slice is freed after its last use.  The
arena size is therefore at most the largest set of values live at once (plus
alignment), and is known at compile time.

A while body's loop state is updated in place, as XLA's buffer assignment
aliases a while body's parameter with its root (``loop_state=True``): state
leaf ``k`` comes in and goes out in one buffer, ``results[k]`` (the while
kernel passes the same pointers as ``params``).  A leaf the body passes
through costs nothing per iteration, and a ``dynamic-update-slice`` into the
state (a scan's stacked outputs) writes only its slice.  A root leaf computed
by the body is written into that buffer only once nothing reads the old value
any more (or by its last reader, reading it only at the index it writes: see
``may_update_in_place``); otherwise it goes to a temp and is copied at the
end.  A body whose root moves a state leaf to another position (a swap) keeps
separate parameter and result buffers (``state_in_place`` is False).
"""
from __future__ import annotations

import bisect
import heapq
import dataclasses
from dataclasses import dataclass

from ..errors import ShapeError, UnsupportedError
from ..hlo import custom_call
from ..hlo.ir import HloComputation, HloInstruction, HloModule
from ..hlo.opcodes import OPCODES, Trait, with_trait
from ..shape import Shape

ALIGNMENT = 64  # bytes: a cache line, and enough for any vector load
#: Temps placed again by size when first fit leaves holes (_repack), up to
#: this many allocations (the search is quadratic; a training step keeps first fit).
REPACK_MAX = 256

#: Opcodes whose values alias other buffers (or need none).
#: Opcodes whose value is their first operand's (same leaves, same buffers).
#: Opcodes whose result is their operand's value, in their operand's buffer.
PASS_THROUGH = with_trait(Trait.PASS_THROUGH)
#: Opcodes that own no buffer: parameters, constants, tuple plumbing, tokens, pass-throughs, views.
NO_BUFFER = with_trait(Trait.NO_BUFFER)
#: Opcodes whose result is their operand's buffer read with their own shape (bitcast).
VIEW = with_trait(Trait.VIEW)
#: Opcodes whose value lives in their first operand's buffer.
ALIASES_OPERAND = PASS_THROUGH | VIEW
#: Opcodes whose value lives in (a leaf of) an operand's buffer: what ``defining`` follows.
_FOLLOWED = ALIASES_OPERAND | {"tuple", "get-tuple-element"}


@dataclass(frozen=True)
class BufferSlice:
    kind: str        # "parameter" | "constant" | "result" | "temp" | "token" (no storage)
    number: int      # parameter / result number (0 for temp and constant)
    offset: int      # byte offset in the temp arena (temp only)
    size: int        # bytes
    shape: Shape     # the array shape (with layout) of the value

    def __str__(self) -> str:
        where = {"parameter": f"param {self.number}", "result": f"result {self.number}",
                 "temp": f"temp [{self.offset}, {self.offset + self.size})", "constant": "constant",
                 "token": "no buffer"}
        return f"{where[self.kind]} {self.shape}"


def leaf_count(shape: Shape) -> int:
    return shape.leaf_count()


def _parameter_slots(comp: HloComputation) -> tuple[dict[int, int], int]:
    """({id(parameter): its first slot}, slots in all): parameter leaves are
    numbered depth-first across all parameters."""
    first_slot, slot = {}, 0
    for p in comp.parameters:
        first_slot[id(p)] = slot
        slot += leaf_count(p.shape)
    return first_slot, slot


def _align(n: int) -> int:
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


class BufferAssignment:
    """Buffers of one computation (a module's entry by default) for schedule ``order``.

    ``scratch(inst) -> bytes``: extra temp space an instruction's kernel needs
    while it runs (a while loop's state, a called computation's own arena);
    it is live only during that instruction and found with :meth:`scratch_of`.
    """

    def __init__(self, computation: HloComputation | HloModule, order: list[HloInstruction] | None = None,
                 scratch=None, loop_state: bool = False):
        comp = computation.entry if isinstance(computation, HloModule) else computation
        self.computation = comp
        self.order = order if order is not None else comp.post_order()
        self.result_shapes: list[Shape] = [s for s in comp.root.shape.leaves()]
        self._slices: dict[tuple[int, int], BufferSlice] = {}
        self._scratch: dict[int, BufferSlice] = {}
        self._scratch_fn = scratch or (lambda inst: 0)
        self.copies: list[tuple[int, BufferSlice]] = []  # (result number, source)
        self.in_place: list[tuple[HloInstruction, HloInstruction]] = []  # (writer, operand it overwrote)
        self.temp_size = 0
        self._readers: dict | None = None       # see _reader_counts
        #: Parameter leaf k is result k's buffer (a while body's state, updated
        #: in place: asked for with ``loop_state``, done when the root keeps
        #: every parameter leaf it returns in its own position).
        self.state_in_place = loop_state and self._state_may_alias(comp)
        if order is None and self.state_in_place:
            self.order = self._readers_first(self.order)
        self._assign(comp)
        # Asked only while assigning; kept, it would keep its caller (the code
        # generator, and with it the whole LLVM module) alive as long as this is.
        self._scratch_fn = None
        self._readers = None

    # -- queries ------------------------------------------------------------------
    def slice_of(self, inst: HloInstruction, leaf: int = 0) -> BufferSlice:
        """The buffer of leaf ``leaf`` of ``inst``'s value."""
        return self._resolve(inst, leaf)

    def scratch_of(self, inst: HloInstruction) -> BufferSlice | None:
        """The scratch slice reserved for ``inst`` (None when it asked for none)."""
        return self._scratch.get(id(inst))

    def largest_scratch(self) -> int:
        """The largest scratch one instruction's kernel holds (bytes): a
        matrix product's packing buffers, a loop's state, a called
        computation's arena."""
        return max((sl.size for sl in self._scratch.values()), default=0)

    def peak_live_bytes(self) -> int:
        """The largest total size (as allocated) of temp values live at one step.

        A lower bound for any arena; ``temp_size`` equals it unless holes left
        by freed values fragment the arena.
        """
        last = self._last_uses()
        peak = 0
        live: dict = {}
        for step, inst in enumerate(self.order):
            for leaf in range(len(inst.shape.leaves())):
                sl = self._slices.get((id(inst), leaf))
                if sl is not None and sl.kind == "temp":
                    live[(id(inst), leaf)] = (sl.offset, _align(max(sl.size, 1)))
            scratch = self._scratch.get(id(inst))
            # A value updated in place shares its operand's slice: count slices once.
            in_use = sum(size for _offset, size in set(live.values()))
            peak = max(peak, in_use + (_align(scratch.size) if scratch else 0))
            live = {k: v for k, v in live.items() if last.get(k[0], -1) > step}
        return peak

    def materialized(self) -> list[HloInstruction]:
        """Instructions that compute into a buffer, in schedule order."""
        return [i for i in self.order if i.opcode not in NO_BUFFER]

    def summary(self) -> str:
        lines = [f"temp arena: {self.temp_size} bytes"]
        for inst in self.order:
            for leaf in range(leaf_count(inst.shape)):
                if inst.shape.leaves()[leaf].is_token:
                    continue
                lines.append(f"  {inst.name}{'' if leaf_count(inst.shape) == 1 else f'{{{leaf}}}'}: "
                             f"{self.slice_of(inst, leaf)}")
        for number, src in self.copies:
            lines.append(f"  copy {src} -> result {number}")
        for writer, operand in self.in_place:
            lines.append(f"  in place: {writer.name} overwrites {operand.name}")
        return "\n".join(lines)

    # -- construction ---------------------------------------------------------------
    def _resolve(self, inst: HloInstruction, leaf: int) -> BufferSlice:
        src, src_leaf = self.defining(inst, leaf)
        sl = self._slices[(id(src), src_leaf)]
        if src is not inst and sl.kind != "token":
            shape = self.view_shape(inst, leaf)
            if shape is not None and shape != sl.shape:
                return dataclasses.replace(sl, shape=shape)    # read through a bitcast
        return sl

    def view_shape(self, inst: HloInstruction, leaf: int) -> Shape | None:
        """The shape leaf ``leaf`` of ``inst`` reads its buffer with when a
        bitcast is on the way to the instruction defining it (the nearest
        bitcast's), else None."""
        while inst.opcode in _FOLLOWED:
            if inst.opcode in VIEW:
                return inst.shape
            inst, leaf = _operand_leaf(inst, leaf)
        return None

    def _assign(self, comp: HloComputation) -> None:
        # Parameter leaves are numbered depth-first across all parameters: an
        # array parameter i of the entry is params[i]; a tuple parameter (a
        # while body's state) spreads over consecutive slots.
        first_slot, self.parameter_slots = _parameter_slots(comp)
        for inst in self.order:
            if inst.opcode == "parameter":
                for leaf, shape in enumerate(inst.shape.leaves()):
                    # In-place state: the parameter leaf is its result's buffer.
                    kind = "result" if self.state_in_place and shape.is_array else "parameter"
                    self._slices[(id(inst), leaf)] = BufferSlice(
                        kind, first_slot[id(inst)] + leaf, 0, shape.byte_size(), shape)
            elif inst.opcode == "constant":
                self._slices[(id(inst), 0)] = BufferSlice("constant", 0, 0, inst.shape.byte_size(),
                                                         inst.shape)
            elif inst.opcode in VIEW:
                _check_view(inst)
            elif inst.opcode in NO_BUFFER:
                # A token made here (after-all): no data, no storage, a null pointer.
                for leaf, shape in enumerate(inst.shape.leaves()):
                    if shape.is_token:
                        self._slices[(id(inst), leaf)] = BufferSlice("token", 0, 0, 0, shape)

        # Root leaves computed here go straight into the result buffers.
        claimed: dict[tuple[int, int], int] = {}
        root = comp.root
        for number in range(len(self.result_shapes)):
            src, leaf = self.defining(root, number)
            key = (id(src), leaf)
            if src.opcode in NO_BUFFER or key in claimed:
                continue
            shape = self.view_shape(root, number)
            if (src.shape.leaves()[leaf] if shape is None else shape) != self.result_shapes[number]:
                continue  # another layout: computed in a temp, then copied (relaid out)
            claimed[key] = number
            if leaf == 0 and shape is None:
                self._claim_donors(src, number, claimed)

        last_use = self._last_uses()
        state_reads = self._state_reads() if self.state_in_place else {}
        free: list[tuple[int, int]] = []  # (offset, size) holes in the arena
        live: dict[tuple[int, int], tuple[int, int]] = {}
        # Keys by the step after which they are freed (their last reader's, or
        # their own when nothing reads them later): each step frees its own
        # list instead of scanning everything live (quadratic in a training
        # step, whose forward activations stay live through the backward pass).
        dies: dict[int, list] = {}

        # Each allocation's bytes, first and last step, and the values and
        # scratch that hold it (an in-place update hands it on): for _repack.
        records: list = []
        record_of: dict = {}

        def make_live(key, slot, step):
            live[key] = slot
            end = step if key[1] == "scratch" else max(step, last_use.get(key[0], -1))
            dies.setdefault(end, []).append(key)

        def record(key, size, step, donor=None):
            rec = record_of.pop(donor) if donor is not None else None
            if rec is None:
                rec = [size, step, len(self.order), []]
                records.append(rec)
            rec[3].append(key)
            record_of[key] = rec

        for step, inst in enumerate(self.order):
            if inst.opcode not in NO_BUFFER:
                for leaf, shape in enumerate(inst.shape.leaves()):
                    key = (id(inst), leaf)
                    if key in claimed and not self._state_free(inst, leaf, claimed[key], step, state_reads):
                        del claimed[key]    # into a temp, copied to the result at the end
                    if key in claimed:
                        self._slices[key] = BufferSlice("result", claimed[key], 0, shape.byte_size(), shape)
                        continue
                    donor = self._in_place_donor(inst, leaf, shape, step, last_use, live, claimed)
                    if donor is not None:
                        # Update in place: take over the dying operand's slice.
                        make_live(key, live.pop(donor), step)
                        record(key, 0, step, donor)
                        self._slices[key] = BufferSlice("temp", 0, live[key][0], shape.byte_size(), shape)
                        continue
                    size = _align(max(shape.byte_size(), 1))
                    offset = self._allocate(free, size)
                    make_live(key, (offset, size), step)
                    record(key, size, step)
                    self._slices[key] = BufferSlice("temp", 0, offset, shape.byte_size(), shape)
                extra = self._scratch_fn(inst)
                if extra:
                    size = _align(extra)
                    offset = self._allocate(free, size)
                    make_live((id(inst), "scratch"), (offset, size), step)
                    record((id(inst), "scratch"), size, step)
                    self._scratch[id(inst)] = BufferSlice("temp", 0, offset, extra, None)
            # Free the temps whose last reader is this instruction (after it ran).
            for key in dies.pop(step, ()):
                if key in live:         # not handed over to an in-place update since
                    _release(free, live.pop(key))
                    record_of.pop(key)[2] = step
        self._repack(records)

        for number, shape in enumerate(self.result_shapes):
            if shape.is_token:
                continue    # a token has no bytes: nothing to copy (an after-all has no slice)
            src, leaf = self.defining(root, number)
            if claimed.get((id(src), leaf)) != number:
                source = self._resolve(root, number)
                if not (source.kind == "result" and source.number == number):   # in-place state
                    self.copies.append((number, source))

    def _claim_donors(self, inst: HloInstruction, number: int, claimed: dict) -> None:
        """Result ``number`` is ``inst``'s: where ``inst`` may update an operand
        in place (``may_update_in_place``: a scatter or dynamic-update-slice
        into a computed array, an elementwise op) and only it reads that
        operand, the operand is computed into the result buffer too, and
        ``inst`` updates it there (XLA's buffer assignment shares them so):
        no temp of the result's size, no copy of it.  Down the chain (a
        scatter into an update of a broadcast)."""
        while True:
            donor = None
            for k in may_update_in_place(inst):
                op = inst.operands[k]
                if op.opcode in NO_BUFFER or op.opcode in _FOLLOWED or not op.shape.is_array \
                        or op.shape != inst.shape.leaves()[0] or (id(op), 0) in claimed:
                    continue
                if sum(o is op for o in inst.operands) != 1:
                    continue            # read again at other indices (scatter(x, i, x))
                if self._readers is None:       # once per assignment: a root tuple has thousands of leaves
                    self._readers = self._reader_counts()
                if self._readers.get(id(op), 0) == 1:
                    donor = op
                    break
            if donor is None:
                return
            claimed[(id(donor), 0)] = number
            self.in_place.append((inst, donor))
            inst = donor

    def _reader_counts(self) -> dict[int, int]:
        """Per instruction id: how many instructions of the schedule (and the
        root's copies) read its buffer, through tuples and views too."""
        sources = _buffer_sources()
        counts: dict[int, int] = {}
        for inst in self.order:
            if inst.opcode in _FOLLOWED:
                continue
            for src in dict.fromkeys(src for op in inst.operands for src in sources(op)):
                counts[id(src)] = counts.get(id(src), 0) + 1
        for src in sources(self.computation.root):
            counts[id(src)] = counts.get(id(src), 0) + 1
        return counts

    def _state_may_alias(self, comp: HloComputation) -> bool:
        """Whether parameter leaf k can be result k's buffer: the same shapes
        (layouts), and every root leaf that is a parameter leaf is its own."""
        params = [s for p in comp.parameters for s in p.shape.leaves()]
        if params != self.result_shapes:
            return False
        first_slot, _count = _parameter_slots(comp)
        for number in range(len(self.result_shapes)):
            src, leaf = self.defining(comp.root, number)
            if src.opcode == "parameter" and first_slot[id(src)] + leaf != number:
                return False
        return True

    def _readers_first(self, order: list[HloInstruction]) -> list[HloInstruction]:
        """``order`` rescheduled so that the instruction computing root leaf
        ``k`` from state leaf ``k`` in place (``may_update_in_place``) runs
        after the other readers of state leaf ``k`` that do not depend on it.
        In post order such a reader could come after the update (a fusion
        slicing the row a ``dynamic-update-slice`` of the same state array
        replaces, the counter read after ``i + 1``), and the update then went
        to a temp: a copy of the whole array, and another back into the state,
        every iteration.  Ties keep ``order``; when only delayed updates are
        left (a reader waits on one of them), the first runs (and the
        assignment copies as before)."""
        comp = self.computation
        position = {inst: k for k, inst in enumerate(order)}
        first_slot, _count = _parameter_slots(comp)

        def state_slots(op) -> set:
            out = set()
            for leaf in range(leaf_count(op.shape)):
                src, src_leaf = self.defining(op, leaf)
                if src.opcode == "parameter":
                    out.add(first_slot[id(src)] + src_leaf)
            return out

        readers: dict = {}
        for inst in order:
            if inst.opcode not in _FOLLOWED:
                for op in inst.operands:
                    for number in state_slots(op):
                        readers.setdefault(number, set()).add(inst)
        writers: dict = {}
        for number in range(len(self.result_shapes)):
            inst, _leaf = self.defining(comp.root, number)
            if inst in position and len(readers.get(number, ())) > 1 and any(
                    number in state_slots(inst.operands[k]) for k in may_update_in_place(inst)):
                writers.setdefault(inst, set()).add(number)
        if not writers:
            return order

        def after(inst) -> set:             # what depends on inst
            seen, stack = set(), [inst]
            while stack:
                for user in stack.pop().users:
                    if user in position and user not in seen:
                        seen.add(user)
                        stack.append(user)
            return seen
        waits = {}                          # writer -> the readers it waits for
        for w, numbers in writers.items():
            later = after(w)
            waits[w] = {r for number in numbers for r in readers[number] if r is not w and r not in later}
        pending = {inst: sum(1 for op in dict.fromkeys(inst.operands) if op in position) for inst in order}
        entries = [(position[inst], inst) for inst in order if pending[inst] == 0]
        heapq.heapify(entries)
        done, out, delayed = set(), [], []
        while len(out) < len(order):
            for d in [d for d in delayed if waits[d] <= done]:
                delayed.remove(d)
                heapq.heappush(entries, (position[d], d))
            chosen = None
            while entries and chosen is None:
                _, inst = heapq.heappop(entries)
                if inst in waits and not waits[inst] <= done:
                    delayed.append(inst)
                else:
                    chosen = inst
            if chosen is None:
                if not delayed:
                    break
                delayed.sort(key=position.get)
                chosen = delayed.pop(0)
            out.append(chosen)
            done.add(chosen)
            for user in dict.fromkeys(chosen.users):
                if user in pending:
                    pending[user] -= 1
                    if pending[user] == 0:
                        heapq.heappush(entries, (position[user], user))
        return out if len(out) == len(order) else order

    def _state_reads(self) -> dict[int, int]:
        """Per parameter leaf slot: the last schedule step reading it (leaf by
        leaf: a loop state is one tuple parameter)."""
        last: dict[int, int] = {}
        for step, inst in enumerate(self.order):
            if inst.opcode in _FOLLOWED:
                continue
            for op in inst.operands:
                for leaf in range(leaf_count(op.shape)):
                    number = self._state_leaf(op, leaf)
                    if number is not None:
                        last[number] = step
        return last

    def _state_free(self, inst: HloInstruction, leaf: int, number: int, step: int,
                    state_reads: dict[int, int]) -> bool:
        """Whether ``inst`` may write its ``leaf`` into result ``number`` at
        ``step``: no state leaf is that buffer, or nothing reads the old state
        leaf from then on, or ``inst`` is its last reader and updates it in
        place (reading it only at the index it writes)."""
        if not self.state_in_place:
            return True
        last = state_reads.get(number, -1)
        if last < step:
            return True
        if last > step:
            return False
        may = may_update_in_place(inst) if inst.shape.is_array and leaf == 0 else may_update_output(inst, leaf)
        reads = [k for k, op in enumerate(inst.operands) for lf in range(leaf_count(op.shape))
                 if self._state_leaf(op, lf) == number]
        if reads and all(k in may for k in reads):
            self.in_place.append((inst, self.defining(inst.operands[reads[0]], 0)[0]))
            return True
        return False

    def _state_leaf(self, op: HloInstruction, leaf: int) -> int | None:
        """The state leaf (result number) whose buffer leaf ``leaf`` of ``op``
        reads, if it reads one."""
        src, src_leaf = self.defining(op, leaf)
        if src.opcode != "parameter":
            return None
        sl = self._slices[(id(src), src_leaf)]
        return sl.number if sl.kind == "result" else None

    def _in_place_donor(self, inst, leaf, shape, step, last_use, live, claimed):
        """The key of an operand value whose buffer ``inst`` may write its leaf
        into: a temp of the same shape and layout, last read by ``inst``, which
        ``inst`` reads only at the index it writes (see ``may_update_in_place``)."""
        if leaf != 0:
            return None
        may = may_update_in_place(inst)
        for k in may:
            src, src_leaf = self.defining(inst.operands[k], 0)
            key = (id(src), src_leaf)
            sl = self._slices.get(key) and self._resolve(inst.operands[k], 0)    # as the operand reads it
            # Not when the same buffer is also read through another operand at
            # other indices (scatter(x, i, x), fusion(x, x) reversing one of them).
            aliased = any(self.defining(o, leaf_no) == (src, src_leaf)
                          for j, o in enumerate(inst.operands) if j not in may
                          for leaf_no in range(leaf_count(o.shape)))
            if (key in live and sl is not None and sl.kind == "temp" and key not in claimed
                    and sl.shape == shape and last_use.get(id(src), -1) == step
                    and len(src.shape.leaves()) == 1 and not aliased):
                self.in_place.append((inst, src))
                return key
        return None

    def _repack(self, records: list) -> None:
        """Place the temps again, largest first, each at the lowest offset
        free over its whole life (XLA's global decreasing-size best fit), when
        the first-fit arena has holes no placement needs (a small value
        between two big ones) and the set is small enough to search (the
        search is quadratic); kept only if the arena shrinks."""
        if len(records) > REPACK_MAX or self.temp_size <= _live_peak(records):
            return
        placed: list = []
        offsets = {}
        for rec in sorted(records, key=lambda r: (-r[0], r[1])):
            size, start, end, _ = rec
            offset = 0
            for o, sz in sorted((p_off, p[0]) for p, p_off in placed if p[1] <= end and start <= p[2]):
                if o - offset >= size:
                    break
                offset = max(offset, o + sz)
            placed.append((rec, offset))
            offsets[id(rec)] = offset
        total = max((off + rec[0] for rec, off in placed), default=0)
        if total >= self.temp_size:
            return
        self.temp_size = total
        for rec in records:
            for key in rec[3]:
                table, k = (self._scratch, key[0]) if key[1] == "scratch" else (self._slices, key)
                table[k] = dataclasses.replace(table[k], offset=offsets[id(rec)])

    def _allocate(self, free: list, size: int) -> int:
        for k, (offset, hole) in enumerate(free):
            if hole >= size:  # first fit
                if hole == size:
                    free.pop(k)
                else:
                    free[k] = (offset + size, hole - size)
                return offset
        if free and free[-1][0] + free[-1][1] == self.temp_size:
            offset, _hole = free.pop()
        else:
            offset = self.temp_size
        self.temp_size = offset + size
        return offset

    def defining(self, inst: HloInstruction, leaf: int) -> tuple[HloInstruction, int]:
        """Follow tuple / get-tuple-element to the instruction that defines a leaf."""
        # Leaf numbers through the shapes' cached offsets: constant or
        # logarithmic time per step, not linear in the tuple's width (the root
        # tuple of a training step has thousands of leaves, each asked for).
        while inst.opcode in _FOLLOWED:
            inst, leaf = _operand_leaf(inst, leaf)
        return inst, leaf

    def _last_uses(self) -> dict[int, int]:
        """Per defining instruction id: the last schedule step that reads its buffer.

        Reads through tuple / get-tuple-element count as reads of the source;
        the root's values are read at the very end (the copies).
        """
        position = {id(inst): step for step, inst in enumerate(self.order)}
        last: dict[int, int] = {}
        sources = _buffer_sources()
        for inst in self.order:
            if inst.opcode in _FOLLOWED:
                continue
            for op in inst.operands:
                for src in sources(op):
                    last[id(src)] = max(last.get(id(src), -1), position[id(inst)])
        for src in sources(self.computation.root):
            last[id(src)] = len(self.order)
        return last


def _buffer_sources():
    """``sources(inst)``: the instructions whose buffers ``inst``'s value is
    in (itself, or through tuples, get-tuple-elements, pass-throughs and
    views), memoised: walking them anew at every read is exponential in the
    depth of tuples built from tuples that share elements (an equinox train
    step's optimizer state: minutes of lowering)."""
    memo: dict[int, tuple] = {}

    def sources(inst) -> tuple:
        found = memo.get(id(inst))
        if found is not None:
            return found
        if inst.opcode in ("tuple", "get-tuple-element"):
            found = tuple(dict.fromkeys(src for op in inst.operands for src in sources(op)))
        elif inst.opcode in ALIASES_OPERAND:
            found = sources(inst.operands[0])
        else:
            found = (inst,)
        memo[id(inst)] = found
        return found
    return sources


def _operand_leaf(inst: HloInstruction, leaf: int) -> tuple[HloInstruction, int]:
    """The operand leaf whose buffer leaf ``leaf`` of ``inst`` (a tuple,
    get-tuple-element, pass-through or bitcast: ``_FOLLOWED``) is."""
    if inst.opcode in ALIASES_OPERAND:
        return inst.operands[0], leaf
    if inst.opcode == "tuple":
        offsets = inst.shape.leaf_offsets()
        k = bisect.bisect_right(offsets, leaf) - 1
        return inst.operands[k], leaf - offsets[k]
    src = inst.operands[0]
    return src, leaf + src.shape.leaf_offsets()[inst.attrs["index"]]


def _check_view(inst: HloInstruction) -> None:
    """A bitcast is its operand's buffer: the same bytes, none of them padding."""
    src, dst = inst.operands[0].shape, inst.shape
    if src.layout.is_padded or dst.layout.is_padded:
        raise UnsupportedError("bitcast", f"of a padded layout ({src} to {dst}) in {inst.name}")
    if src.byte_size() != dst.byte_size():
        raise ShapeError(f"bitcast {inst.name}: {src} ({src.byte_size()} bytes) and {dst} "
                         f"({dst.byte_size()} bytes) differ in size; a bitcast reads the same buffer")


#: Kernels that copy operand 0 into their result (when the buffers differ) and
#: then update parts of it, so they may run in operand 0's buffer.
#: Opcodes that write a copy of operand 0 (in place when they may).
UPDATES_OPERAND_0 = with_trait(Trait.UPDATES_OPERAND)


def may_update_in_place(inst: HloInstruction) -> list[int]:
    """Operand numbers whose buffer ``inst`` may overwrite with its result.

    True for an elementwise op, or a loop fusion, that reads the operand only at
    the index it writes (through same-shape elementwise ops), and for kernels
    that update a copy of their first operand (and jax's LAPACK custom calls,
    whose first result is the factored copy of the matrix operand).
    """
    if inst.opcode in UPDATES_OPERAND_0:
        return [0]
    if inst.opcode == "custom-call":           # jax's LAPACK targets factor a copy of the matrix
        k = custom_call.in_place_operand(inst)
        return [] if k is None else [k]
    if not inst.shape.is_array:
        return []
    info = OPCODES.get(inst.opcode)
    if info is not None and info.is_elementwise:
        return [k for k, o in enumerate(inst.operands) if o.shape == inst.shape]
    if inst.opcode == "fusion" and inst.attrs.get("kind") == "kLoop":
        return _read_elementwise_only(inst, inst.shape)
    if inst.opcode == "fusion" and inst.attrs["calls"].root.opcode == "scatter":
        return _scatter_base_only(inst)
    return []


def _scatter_base_only(fusion: HloInstruction) -> list[int]:
    """The operand a scatter-rooted fusion updates (its scatter's operand 0),
    unless the fused indices or updates read it too (they would see it half
    updated)."""
    root = fusion.attrs["calls"].root
    base = root.operands[0]
    if base.opcode != "parameter" or any(o is base for o in root.operands[1:]):
        return []
    fusion.attrs["calls"].compute_users()
    k = base.parameter_number
    alone = sum(o is fusion.operands[k] for o in fusion.operands) == 1
    return [k] if alone and base.users == [root] else []


def may_update_output(inst: HloInstruction, leaf: int) -> list[int]:
    """Operand numbers whose buffer output ``leaf`` of a multi-output loop
    fusion may overwrite: operands of that leaf's shape (layout included) the
    fusion reads only through elementwise ops of its outputs' dimensions, so
    only at the index each output is written at (the loop computes every
    output's value at an index before it stores any)."""
    if inst.opcode != "fusion" or inst.attrs.get("kind") != "kLoop" or inst.shape.is_array:
        return []
    if inst.attrs["calls"].root.opcode != "tuple":
        return []
    return _read_elementwise_only(inst, inst.shape.leaves()[leaf])


def _read_elementwise_only(fusion: HloInstruction, shape: Shape) -> list[int]:
    """Parameters of ``fusion``'s computation of ``shape`` (layout included)
    that reach its root only through elementwise ops (read at the index written)."""
    fused = fusion.attrs["calls"]
    fused.compute_users()
    return [p.parameter_number for p in fused.parameters
            if p.shape == shape and _elementwise_to_root(p, fused.root)]


def _elementwise_to_root(start: HloInstruction, root: HloInstruction) -> bool:
    """Whether ``start`` reaches ``root`` only through elementwise ops of the
    root's dimensions (a tuple root: of its operands', the same for all)."""
    outputs = root.operands if root.opcode == "tuple" else [root]
    dims = {o.shape.dimensions for o in outputs}
    if len(dims) != 1:
        return False
    (want,) = dims
    seen, stack = set(), list(start.users)
    if start is root:
        return True
    if not stack:
        return False
    while stack:
        cur = stack.pop()
        if cur is root and root.opcode == "tuple":
            continue        # an output
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        info = OPCODES.get(cur.opcode)
        if info is None or not info.is_elementwise or cur.shape.dimensions != want:
            return False
        if cur is not root:
            if not cur.users:
                return False
            stack.extend(cur.users)
    return True


def _live_peak(records: list) -> int:
    """The most bytes of ``records`` ([size, first step, last step, ...])
    live at one step: no arena is smaller."""
    events = sorted([(r[1], r[0]) for r in records] + [(r[2] + 1, -r[0]) for r in records],
                    key=lambda e: (e[0], e[1]))
    peak = now = 0
    for _, delta in events:
        now += delta
        peak = max(peak, now)
    return peak


def _release(free: list, hole: tuple) -> None:
    """Return ``hole`` (offset, size) to the sorted, coalesced list ``free``,
    merging it with the holes it touches (logarithmic search, no re-sort)."""
    k = bisect.bisect_left(free, hole)
    free.insert(k, hole)
    if k + 1 < len(free) and free[k][0] + free[k][1] == free[k + 1][0]:
        free[k] = (free[k][0], free[k][1] + free.pop(k + 1)[1])
    if k > 0 and free[k - 1][0] + free[k - 1][1] == free[k][0]:
        free[k - 1] = (free[k - 1][0], free[k - 1][1] + free.pop(k)[1])
