"""Fusion: merge producers into consumers so that a chain of ops is one loop nest.

The pass walks each sequential computation (the entry, while bodies and
conditions, branches) from the root towards the parameters (consumers before
producers) and, for each consumer, fuses operands into it
while the rules below allow.  A fused consumer becomes a ``fusion``
instruction whose ``calls=`` computation holds the fused ops; the code
generator composes their elemental generators, so a fusion reads only its real
inputs and writes only its result.

Rules (see ``why_not``):

* A producer must be elemental (elementwise, broadcast, reshape, transpose,
  slice, pad, concatenate, reverse, iota, convert, scalar constant, ...) or a
  ``reduce`` / ``dot`` under the conditions below.  Parameters, tuples and
  control flow are never fused.
* A consumer must be elemental, a ``reduce`` (its input producers are fused in),
  a one-operand ``reduce-window`` that is not a scan (``kernels/scan.py`` runs
  those; an expensive producer only where no two windows overlap), a
  one-operand ``scatter`` or a fusion.  A ``reduce`` or ``scatter`` consumer
  makes a ``kInput`` fusion, as XLA's GPU fusion does.  ``dot`` operands are
  never fused: a dot reads each operand element many times.  Nor are a
  matrix product's operands fused into its output fusion (a matrix-vector
  product's may be): the GEMM library (``codegen/gemm_library.py``) reads
  them from buffers, and a GEMM of the module's own costs ~80 ms of LLVM's
  time per distinct dot (a GPT training step compiled 17% faster and ran as
  fast or faster without them).
* An expensive producer (exp, log, tanh, divide, dot, ...) used outside the
  fusion is not duplicated into it; a cheap one may be, unless its value is
  kept in a buffer anyway (it is the root, or a user never fuses it: a
  matrix product, a tuple, control flow), it reads at least as many bytes
  as it writes and fusing it recomputes ``RECOMPUTE_MIN_OPS`` ops or more:
  the fusion then reads that buffer (``_materialised_elsewhere``).  Nor is
  a cheap producer other consumers read too, when it reads at least as many
  bytes as it writes and fusing it would compute ``MAX_DUPLICATED_OPS`` ops
  or more again: it gets a buffer of its own, which every consumer reads
  (``_duplicated_chain``); in the entry computation, a single element of
  ``MAX_DUPLICATED_SCALAR_OPS`` ops or more.
* An expensive producer is not fused where the fusion would recompute each of
  its elements many times (it reaches the fusion's loop through an expanding
  broadcast), unless the recomputation is hoisted out of the inner loops — the
  case of a ``reduce`` whose result is broadcast along the fusion's minor
  dimensions (softmax, layernorm): the code generator computes it once per
  iteration of the outer loops.
* Nor are a convolution's operands fused into its output fusion: the
  implicit-GEMM convolution copies its input and packs its kernel with the
  library's code from buffers.
* A scatter takes its indices and updates, each element read once (a
  segment sum of gathered, scaled rows is one loop), but never its operand 0,
  which it updates; nor a transpose (its serial loop would read the operand
  across its layout) or an expensive op (computed in a parallel kernel of its
  own).
* A ``dot`` fuses only into elementwise consumers that read it at the same
  index (a bias add, an activation): the dot's "output fusion"; and only into
  a fusion without a dot or convolution of its own (a second product would be
  computed elementally, an inner product per element).
* A fusion does not read one input through two different transposes.
* A fusion holding more than ``MAX_REDUCTIONS_IN_FUSION`` (5) reductions
  takes no further ``reduce`` (XLA's CPU fusion has the same limit): each is
  a loop nest of its own in the kernel, and LLVM's time grows faster than a
  function's size.
* A producer read by a ``concatenate`` along the minor dimension is not fused
  (the fused loop would pick the operand per element and stay scalar).

Every refusal is recorded in ``module.diagnostics`` ("not fused: ... : <reason>") and
printed by ``xlac dump``.
"""
from __future__ import annotations

from ..hlo.ir import Diagnostic, FreshNames, HloComputation, HloInstruction, HloModule, fresh_name
from ..hlo.opcodes import Trait, has_trait
from ..hlo.window import window_of
from ..hlo.scans import runs_sequentially
from .call_inliner import sequential_computations


#: Ops whose elementwise epilogue fuses into their output (kOutput fusions).
OUTPUT_FUSION_ROOTS = ("dot", "convolution")

MAX_FUSED_INSTRUCTIONS = 256
#: A producer kept in a buffer anyway is still duplicated into a consumer
#: when fusing it computes fewer arithmetic ops than this again: a few ops
#: (Adam's moment updates, kept as outputs and read by the parameter
#: update) cost little code, and recomputed they leave the consumers
#: independent, so multi-output fusion can merge them into one kernel.
RECOMPUTE_MIN_OPS = 8
#: A cheap producer that other consumers read as well is not duplicated
#: into one when that would compute this many ops or more again (it, and the
#: unfused expression behind it, which would come in with it): it is
#: computed once, into a buffer each consumer reads.  A chain of such values
#: (a transformer's residual stream, each block adding its dropout-masked
#: output to the sum of the blocks before) was otherwise recomputed whole in
#: each block's kernels, quadratic in the depth: an equinox transformer step
#: compiled and ran ~30% slower so.  Shorter expressions are still
#: recomputed: they keep their consumers independent (multi-output fusion),
#: and a cipher's rounds, each value read twice, stay one kernel.
MAX_DUPLICATED_OPS = 3 * RECOMPUTE_MIN_OPS
#: ... and in the entry computation (run once per call), a single element's
#: value of this many ops or more: its consumers each load it (once, out of
#: their loops) instead of computing it, and its own kernel, of one element,
#: is compiled without optimisation (the code generator's cold tier).  An
#: optimizer's learning-rate schedule and bias corrections were computed in
#: every parameter's update kernel (gpt_train_adamw: one comparison in 400
#: kernels, ~7% of its fused HLO).  A loop body keeps duplicating them: a
#: kernel of its own there would be compiled optimised and called per
#: iteration.
MAX_DUPLICATED_SCALAR_OPS = 2
MAX_FUSION_OPERANDS = 64
#: A producer is not fused where the elemental emitter would generate it
#: more times than this (XLA's ``kAllowedCodeDuplication``): a value read
#: through slices, pads and concatenates of values read the same way is
#: generated once per path, twice as many at every level of jax's
#: ``associative_scan`` (one kernel of 870 KB of LLVM IR, 5 s to compile).
MAX_CODE_DUPLICATION = 15
#: A fusion takes no further ``reduce`` once it holds more than this many
#: (XLA's CPU instruction fusion, ``kMaxReductionsInFusion``): every
#: reduction is a loop nest of its own in the kernel, and LLVM's optimisation
#: grows faster than a function's size.  An optimizer's global norm (a sum of
#: every gradient's squares) had made one kernel of ~40 reductions in a GPT
#: training step: 2,000 lines of IR and a sixth of the module's O3 time.
MAX_REDUCTIONS_IN_FUSION = 5


def _single_element(inst: HloInstruction) -> bool:
    return not inst.shape.is_tuple and inst.shape.element_count() <= 1


def _reads_what_it_writes(inst: HloInstruction) -> bool:
    """Whether ``inst`` reads at least as many bytes as it writes: a buffer
    of its value costs no more memory traffic than reading its operands (a
    broadcast, an iota or a pad reads less: computing it is cheaper)."""
    return sum(o.shape.byte_size() for o in inst.operands) >= inst.shape.byte_size()


def _index_operands(inst: HloInstruction, indexing: dict) -> None:
    """``inst``'s operands are indexed where ``inst`` is when it reads them at
    its own index, else at one it makes (``_FusedIndex.emitted``)."""
    mine = indexing.get(id(inst), ())
    for op in inst.operands:
        users = indexing.setdefault(id(op), set())
        if inst.opcode == "transpose" or op.shape.dimensions == inst.shape.dimensions:
            users |= mine
        else:
            users.add(id(inst))


class _ByOpcode(dict):
    """``opcode -> rule(opcode)``, each opcode's answer worked out once: the
    decisions below ask about the same few opcodes ~10^5 times in a training
    step (an opcode's definition never changes once made)."""

    def __init__(self, rule):
        super().__init__()
        self.rule = rule

    def __missing__(self, opcode: str) -> bool:
        value = self[opcode] = self.rule(opcode)
        return value


_ELEMENTWISE = _ByOpcode(lambda op: has_trait(op, Trait.ELEMENTWISE))
# An index transformation or a cheap leaf (broadcast, slice, gather, iota, ...).
_DATA_MOVEMENT = _ByOpcode(lambda op: has_trait(op, Trait.DATA_MOVEMENT))
_EXPENSIVE = _ByOpcode(lambda op: has_trait(op, Trait.EXPENSIVE))
# Opcodes that fuse as producers whatever their operands (constants: scalar ones only).
_PRODUCER = _ByOpcode(lambda op: has_trait(op, Trait.ELEMENTWISE) or has_trait(op, Trait.DATA_MOVEMENT)
                      or op in ("reduce",) + OUTPUT_FUSION_ROOTS)


def _elementwise(inst: HloInstruction) -> bool:
    return _ELEMENTWISE[inst.opcode]


def _data_movement(inst: HloInstruction) -> bool:
    return _DATA_MOVEMENT[inst.opcode]


def _is_scalar_constant(inst: HloInstruction) -> bool:
    return inst.opcode == "constant" and inst.shape.is_array and inst.shape.element_count() <= 1


def fusible_producer(inst: HloInstruction) -> bool:
    return (_PRODUCER[inst.opcode] or _is_scalar_constant(inst)) and inst.shape.is_array


def _strided_reduction(reduce: HloInstruction) -> bool:
    """Whether the most minor dimension (of more than one element) of a
    ``reduce``'s input, in its layout, is a kept one: reduced elementally,
    each output element would walk the input with a stride."""
    shape = reduce.operands[0].shape
    reduced = set(reduce.attrs["dimensions"])
    order = [d for d in shape.layout.minor_to_major if shape.dimensions[d] != 1]
    return bool(order) and order[0] not in reduced and any(d in reduced for d in order)


def fusible_consumer(inst: HloInstruction) -> bool:
    if inst.opcode == "fusion":
        return inst.attrs.get("kind") != "kCustom"
    if inst.opcode == "reduce-window":
        # A pool reads its operand through its generator (jax's reshape before
        # a max pool, a relu); a scan is a kernel of its own (``kernels/scan.py``).
        return len(inst.operands) == 2 and inst.shape.is_array and not runs_sequentially(inst)
    if inst.opcode == "scatter":
        # Its indices and updates, each read once; not its base (operand 0,
        # updated in place: ``scatter_base``).
        return len(inst.operands) == 3 and inst.shape.is_array
    return (_ELEMENTWISE[inst.opcode] or _DATA_MOVEMENT[inst.opcode] or inst.opcode == "reduce") and \
        (inst.shape.is_array or inst.opcode == "reduce")


def scatter_base(consumer: HloInstruction) -> HloInstruction | None:
    """The operand of ``consumer`` (a ``scatter``, or a fusion rooted at one) that
    is the scatter's operand 0, the array it updates; None for other consumers."""
    root = fused_root(consumer)
    if root.opcode != "scatter":
        return None
    base = root.operands[0]
    return consumer.operands[base.parameter_number] if consumer.opcode == "fusion" else base


def is_strided_slice(inst: HloInstruction) -> bool:
    """Whether ``inst`` is a ``slice`` with a stride above 1 along some dimension."""
    return inst.opcode == "slice" and any(int(t[2]) > 1 for t in inst.attrs["slice"])


def is_expensive(inst: HloInstruction) -> bool:
    """Whether fusion must not duplicate ``inst`` (``Trait.EXPENSIVE``)."""
    return _EXPENSIVE[inst.opcode]


# ----------------------------------------------------------------------------
# Building fusions
# ----------------------------------------------------------------------------

class _FusedIndex:
    """What fusion decisions ask of one fusion's computation, kept current by
    :meth:`Fuser.fuse_into` so that a question or a fusion step costs what it
    touches rather than a scan of the computation (up to 256 instructions,
    asked about tens of thousands of times in a training step):

    * ``params``: the parameters by parameter number (parallel to the fusion's operands);
    * ``by_operand``: id of an operand -> the parameter that reads it;
    * ``names``: the instructions' names (for fresh ones);
    * ``uses``: id of an instruction -> its (user, operand index) pairs inside
      the computation, in instruction order (the order the scans gave);
    * ``partitioned``: whether every parameter comes before every other instruction;
    * ``reduces``: how many ``reduce`` instructions it holds.
    """

    __slots__ = ("params", "by_operand", "names", "uses", "partitioned", "reduces", "_emitted")

    def __init__(self, fusion: HloInstruction):
        fused: HloComputation = fusion.attrs["calls"]
        self.params: list = [None] * len(fusion.operands)
        self.by_operand: dict[int, HloInstruction] = {}
        self.names = {i.name for i in fused.instructions}
        self.uses: dict[int, list] = {}
        self._emitted: dict | None = None
        seen_other = False
        self.partitioned = True
        self.reduces = 0
        for inst in fused.instructions:
            self.uses.setdefault(id(inst), [])
            if inst.opcode == "parameter":
                self.params[inst.parameter_number] = inst
                self.by_operand[id(fusion.operands[inst.parameter_number])] = inst
                self.partitioned &= not seen_other
                continue
            seen_other = True
            self.reduces += inst.opcode == "reduce"
            for j, o in enumerate(inst.operands):
                self.uses.setdefault(id(o), []).append((inst, j))

    def uses_of(self, inst: HloInstruction) -> list:
        return self.uses.get(id(inst), [])

    def emitted(self, fused: HloComputation) -> dict:
        """id of an instruction -> how many times the elemental emitter
        generates it (XLA's ``FusionNodeIndexingEvaluation``): values are
        shared between users that read an operand at the index they got
        (same dimensions, or a transpose: the index permuted), so a value
        is generated once per distinct index computed for it, one for each
        emission of every user that makes a new one (a slice, a pad, a
        broadcast, a concatenate, a reshape...).  Worked out once per
        fusion, then kept current by :meth:`fused` as producers come in."""
        if self._emitted is None:
            indexing: dict[int, set] = {id(fused.root): {0}}   # 0: the fusion's own index
            count = {0: 1}
            for inst in reversed(fused.instructions):
                count[id(inst)] = sum(count[t] for t in indexing.get(id(inst), ()))
                _index_operands(inst, indexing)
            self._emitted = (indexing, count)
        return self._emitted[1]

    def fused(self, param: HloInstruction, clone: HloInstruction) -> None:
        """``clone`` (a producer) took ``param``'s place: it is generated as
        often as the parameter was; its operands (parameters) gain its
        indices.  Nothing above it changes (XLA's ``UpdateEvaluationCache``)."""
        if self._emitted is None:
            return
        indexing, count = self._emitted
        indexing[id(clone)] = indexing.pop(id(param), set())
        count[id(clone)] = count.pop(id(param), 0)
        _index_operands(clone, indexing)
        for op in clone.operands:
            count[id(op)] = sum(count[t] for t in indexing[id(op)])

    def emissions_of(self, fusion: HloInstruction, operand: HloInstruction) -> int:
        """How many times ``operand`` of ``fusion`` would be generated fused."""
        count = self.emitted(fusion.attrs["calls"])
        p = self.by_operand.get(id(operand))
        if p is not None and fusion.operands.count(operand) == 1:
            return count.get(id(p), 0)
        return sum(count.get(id(p), 0) for p, o in zip(self.params, fusion.operands) if o is operand)


class ModuleNames:
    """The module's instruction and computation names, for fresh ones: each
    set made on first use (a module's small while conditions get no fusion),
    which comes before the fuser changes the module (``make_fusion``;
    multi-output fusion's ``_merge`` names its fusion first), then shared by
    the fusers of one pass, which add the names they give at the top level
    (a training step has ~50 fused computations: a scan of the module's ~20k
    instructions for each was 30 ms).  A name that only an instruction fused
    away had stays in the set: a fresh name skips it, as it skips any other.
    :class:`~xlac.hlo.ir.FreshNames`: multi-output fusion names hundreds of
    fusions ``fusion.multi``, ``fusion.multi.2``, ...; probing from the first
    each time was quadratic."""

    def __init__(self, module: HloModule):
        self.module = module
        self._instructions: set | None = None
        self._computations: set | None = None

    @property
    def instructions(self) -> set:
        if self._instructions is None:
            self._instructions = FreshNames(i.name for c in self.module.computations for i in c.instructions)
        return self._instructions

    @property
    def computations(self) -> set:
        if self._computations is None:
            self._computations = FreshNames(c.name for c in self.module.computations)
        return self._computations


class Fuser:
    """Producer/consumer fusion of one computation (the machinery of
    :class:`InstructionFusion`; :class:`~xlac.passes.multi_output_fusion.MultiOutputFusion`
    uses its naming and fusion-building helpers)."""

    def __init__(self, module: HloModule, comp: HloComputation, names: "ModuleNames | None" = None):
        self.module = module
        self.comp = comp
        self._module_names = ModuleNames(module) if names is None else names
        self.notes: list[Diagnostic] = []
        self.refusals: dict = {}
        self.replaced: dict[int, HloInstruction] = {}  # consumer id -> the fusion that replaced it
        # Users as insertion-ordered dicts (id -> instruction) while the pass
        # runs, so that a high-fan-out value (a parameter read by thousands of
        # ops) costs O(1) per update; the lists are rebuilt at the end.
        self._users: dict[int, dict] = {}
        self._fused_index: dict[int, _FusedIndex] = {}  # fusion id -> its index
        self._kept: dict | None = None                   # see ``kept``
        self._recomputed: dict = {}                      # see ``_recomputed_size``

    @property
    def names(self) -> set:
        return self._module_names.instructions

    @property
    def comp_names(self) -> set:
        return self._module_names.computations

    def users(self, inst: HloInstruction) -> dict:
        u = self._users.get(id(inst))
        if u is None:
            u = self._users[id(inst)] = {id(x): x for x in inst.users}
        return u

    def fresh(self, base: str, used: set) -> str:
        return fresh_name(base, used)

    def fused_index(self, fusion: HloInstruction) -> _FusedIndex:
        """The :class:`_FusedIndex` of ``fusion`` (built on first use)."""
        index = self._fused_index.get(id(fusion))
        if index is None:
            index = self._fused_index[id(fusion)] = _FusedIndex(fusion)
        return index

    # -- structure -------------------------------------------------------------------
    def make_fusion(self, consumer: HloInstruction) -> HloInstruction:
        """Wrap ``consumer`` in a fusion of its own (params = its distinct operands)."""
        names = self.names          # made before the module changes
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
        kind = "kInput" if consumer.opcode in ("reduce", "scatter") else "kLoop"
        fusion = HloInstruction("fusion", consumer.shape, operands, {"kind": kind, "calls": fused},
                                self.fresh(f"fusion.{consumer.name}", names))
        self.module.add_computation(fused)
        self._replace(consumer, fusion)
        self.replaced[id(consumer)] = fusion
        return fusion

    def fuse_into(self, fusion: HloInstruction, producer: HloInstruction) -> None:
        """Clone ``producer`` into ``fusion``'s computation in place of its parameter."""
        if producer.opcode == "fusion":
            raise AssertionError("producer fusions are not merged")
        # Runs once per producer fused (13.6k times for a training step): the
        # index's tables are held in locals, one-operand cases go straight.
        fused: HloComputation = fusion.attrs["calls"]
        index = self.fused_index(fusion)
        by_operand, all_uses, names = index.by_operand, index.uses, index.names
        k = fusion.operands.index(producer)
        param = index.params[k]
        # Operands of the producer: reuse an existing parameter or add one.
        new_params, new_operands = [], []
        for op in producer.operands:
            p = by_operand.get(id(op))
            if p is None:
                number = len(fusion.operands)
                p = HloInstruction("parameter", op.shape, (), {"parameter_number": number},
                                   self.fresh(f"param_{number}", names))
                p.parent = fused
                fusion.operands.append(op)
                index.params.append(p)
                by_operand[id(op)] = p
                all_uses[id(p)] = []
                new_params.append(p)
            new_operands.append(p)
        name = self.fresh(producer.name, names)
        clone = HloInstruction(producer.opcode, producer.shape, new_operands, producer.attrs, name)  # attrs copied
        clone.parent = fused
        # The clone reads the parameters; it comes before every other non-parameter (below).
        if len(new_operands) == 1:
            q = new_operands[0]
            all_uses[id(q)] = [(clone, 0)] + all_uses[id(q)]
        else:
            for q in dict.fromkeys(new_operands):
                all_uses[id(q)] = [(clone, j) for j, o in enumerate(new_operands) if o is q] + all_uses[id(q)]
        # The parameter's readers read the clone.
        uses = all_uses.pop(id(param))
        all_uses[id(clone)] = uses
        if len(uses) == 1:
            uses[0][0].replace_operand(param, clone)
        else:
            for user in dict.fromkeys(u for u, _ in uses):
                user.replace_operand(param, clone)
        if fused.root is param:
            fused.root = clone
        index.fused(param, clone)
        index.reduces += producer.opcode == "reduce"
        names.discard(param.name)
        # Drop the parameter and renumber the rest (operand k goes away).
        del fusion.operands[k]
        del index.params[k]
        for p in index.params[k:]:
            p.attrs["parameter_number"] -= 1
        if by_operand.get(id(producer)) is param:
            del by_operand[id(producer)]
            if producer in fusion.operands:  # read twice: the last parameter reading it stands in
                by_operand[id(producer)] = [p for p in fused.instructions if p.opcode == "parameter"
                                            and p is not param and fusion.operands[p.parameter_number]
                                            is producer][-1]
        if producer.opcode in OUTPUT_FUSION_ROOTS and fusion.attrs.get("kind") == "kLoop":
            fusion.attrs["kind"] = "kOutput"
        # Order stays valid with every parameter first (new ones in front, last
        # made first): the clone reads only parameters and comes before the
        # other non-parameters, so before every user of it.
        old = fused.instructions
        if index.partitioned:
            n = len(index.params) - len(new_params) + 1  # parameters in ``old``
            i = old.index(param)
            fused.instructions = new_params[::-1] + old[:i] + old[i + 1:n] + [clone] + old[n:]
        else:
            old = new_params[::-1] + [clone if i is param else i for i in old]
            fused.instructions = ([i for i in old if i.opcode == "parameter"]
                                  + [i for i in old if i.opcode != "parameter"])
            self._fused_index[id(fusion)] = _FusedIndex(fusion)  # uses in the new order

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
        if scatter_base(consumer) is producer:
            # The kernel copies the base into its result (or updates it in
            # place) and then reads only the windows it combines.
            return "a scatter's operand 0 is updated, not computed in its loop"
        if fused_root(consumer).opcode == "scatter":
            # The scatter's loop runs on one thread, in the updates' logical
            # order: a transpose read there walks its operand across the
            # layout (an embedding gradient's [8192, 256] updates, read so
            # from [256, 8192]: 7.1 ms against 1.0 copied by tiles first), an
            # expensive op loses its kernel's threads.
            if _EXPENSIVE[producer.opcode]:
                return f"expensive {producer.opcode} is computed by a parallel kernel, not in a scatter's serial loop"
            if producer.opcode == "transpose" or (producer.opcode == "copy" and producer.shape.is_array and
                                                  producer.shape.layout != producer.operands[0].shape.layout):
                return f"a scatter's loop would read {producer.opcode} {producer.name} across its layout"
        # Counted, not listed: a scalar constant CSE merged is read by thousands
        # of consumers, each of which asks.
        expensive = _EXPENSIVE[producer.opcode]
        if expensive:
            others = self._other_users(producer, consumer)
            if others:
                return (f"expensive {producer.opcode} has {others + 1} users; "
                        f"it would be computed once per user")
        fused = consumer.attrs["calls"] if consumer.opcode == "fusion" else None
        size = len(fused.instructions) if fused else 1
        if size + 1 > MAX_FUSED_INSTRUCTIONS:
            return f"fusion would exceed {MAX_FUSED_INSTRUCTIONS} instructions"
        if len(consumer.operands) + len(producer.operands) > MAX_FUSION_OPERANDS:
            return f"fusion would exceed {MAX_FUSION_OPERANDS} operands"
        if producer.opcode == "reduce" and fused is not None \
                and self.fused_index(consumer).reduces > MAX_REDUCTIONS_IN_FUSION:
            return f"the fusion holds more than {MAX_REDUCTIONS_IN_FUSION} reductions already"
        if producer.opcode in OUTPUT_FUSION_ROOTS and fused is not None \
                and any(i.opcode in OUTPUT_FUSION_ROOTS for i in fused.instructions):
            # The fusion's tiles come from its one product; a second would be
            # computed elementally, an inner product per element (an RNN
            # cell's x @ W + h @ U ran 4x slower so).
            return f"the fusion computes a {_output_root(fused).opcode} already"
        if fused is not None and (producer.opcode in OUTPUT_FUSION_ROOTS
                                  or consumer.attrs.get("kind") == "kOutput"):
            # A product's epilogue runs per element of its tiles: what a loop
            # fusion computes once per outer iteration (a row's norm, a
            # reduction broadcast along the columns) it would compute per
            # element (a cosine similarity's norms, a reduction over 128 for
            # each of 512 x 512 elements, ran 2.4x jax.jit's time so).  Fusion
            # makes a fusion kOutput when a product comes in.
            if producer.opcode in OUTPUT_FUSION_ROOTS:
                n = producer.shape.element_count() if producer.shape.is_array else 0
                work = next((i for i in fused.instructions if _broadcast_work(i, n)), None)
            else:
                root = next((i for i in fused.instructions if i.opcode in OUTPUT_FUSION_ROOTS), None)
                work = producer if root is not None and _broadcast_work(producer, root.shape.element_count()) \
                    else None
            if work is not None:
                return (f"a product's epilogue would compute {work.opcode} {work.name} for every element "
                        f"(it is not hoisted out of the tiles)")
        index = self.fused_index(consumer) if fused else None
        if index is not None and producer.opcode != "broadcast" and not _single_element(producer):
            # (A broadcast is fused whatever it costs, as XLA does: kept in a
            # buffer it would be written out whole; its operand is asked in
            # turn.  A single element's copies are the same code at the same
            # index, which LLVM's value numbering merges: the Philox
            # expansion reads its key, a scalar, through 22 broadcasts.)
            times = index.emissions_of(consumer, producer)
            if times > MAX_CODE_DUPLICATION:
                return (f"it would be generated {times} times in the fusion (more than "
                        f"{MAX_CODE_DUPLICATION}: the kernel's code would grow with each)")
        uses = _uses_in_consumer(producer, consumer, index)
        if any(u.opcode == "dot" and _is_gemm(u) for u, _ in uses):
            # Inside a dot's output fusion: the GEMM library packs its operands
            # from buffers; one computed in the fusion needs a GEMM of the
            # module's own (LLVM's O3 on it: ~80 ms per distinct dot).
            return "a matrix product's operands are read from buffers"
        if any(u.opcode == "convolution" for u, _ in uses):
            # Likewise a convolution's: computed in its fusion, the
            # implicit GEMM's input copy and B packing evaluate the
            # expressions themselves, in code of the module's own (a ResNet
            # step's weight gradients were half of its LLVM IR so); from a
            # buffer its operands are copied and packed by the library's code,
            # and the step ran 12% faster.
            return "a convolution's operands are read from buffers"
        if not expensive:
            keeper = self._materialised_elsewhere(producer, consumer)
            if keeper is not None:
                return (f"{keeper} keeps it in a buffer anyway; reading that is cheaper than "
                        f"recomputing it from operands as large")
            others = self._duplicated_chain(producer, consumer)
            if others:
                return (f"{others} other consumers read it and each would compute it again (with the "
                        f"unfused ops behind it); it is computed once, into a buffer they read")
        if any(u.opcode == "concatenate" and _minor_concat(u) for u, _ in uses):
            # Each row switches operand every few elements: the fused loop
            # picks the operand per element and stays scalar (an LSTM's
            # backward step over [8, 4 x 24] gates ran 15% slower so).
            return "a concatenate along the minor dimension reads it"
        if producer.opcode in OUTPUT_FUSION_ROOTS and \
                not all(_index_preserving_to_root(u, consumer, index) for u in uses):
            # The dot/convolution emitter applies an epilogue to its own output tiles.
            return (f"a {producer.opcode} fuses only into elementwise consumers that read it "
                    f"at the same index")
        if expensive:
            for use in uses:
                why = _reuse(use, consumer, index)
                if why:
                    return f"{producer.opcode} {why}"
        if producer.opcode == "reduce" and _strided_reduction(producer):
            # Fused, each output element would be a loop down a column of the
            # input; as its kernel's root it streams the input in memory order
            # (``kernels/reduce.py``'s ``reduce.column``), the consumer a kernel
            # of its own: a bf16 column sum then a convert, 64x64 2.0 against
            # 3.4 us, 1024x1024 0.10 against 2.3 ms.
            return "a reduction over major dimensions is computed as its kernel's root"
        if producer.opcode == "pad" and any(int(t[2]) for t in producer.attrs["padding"]):
            # Every element of the consumer's loop would branch between the
            # operand and the padding value (scalar code), and a chain of
            # them nests the branches: jax's associative_scan made its whole
            # down-sweep one kernel of 10 nested interior pads (1024 x 1024:
            # 5.7 ms; with the pads kept out 4.2, and 3.8 with the next rule).
            return "a pad with interior padding is computed as its kernel's root"
        if is_strided_slice(producer) and len(self.users(producer.operands[0])) > 1:
            # Fused, the strided slice would pull in its operand, computed
            # anew at every consumer: an associative_scan's up-sweep
            # recomputed every earlier level from the input at each level.
            return "a strided slice of a value other users read keeps that value in a buffer"
        why = _transpose_conflict(producer, consumer, index)
        if why:
            return why
        return None

    def _other_users(self, producer: HloInstruction, consumer: HloInstruction) -> int:
        """How many users ``producer`` has besides ``consumer`` (the root counts as one)."""
        users = self.users(producer)
        others = len(users) - (id(consumer) in users)
        if producer is self.comp.root:
            others += 1  # the root's value must exist on its own
        return others

    def _materialised_elsewhere(self, producer: HloInstruction, consumer: HloInstruction) -> str | None:
        """What keeps ``producer``'s value in a buffer whatever ``consumer``
        does (the computation's root, or a user that never takes it fused: a
        matrix product, a tuple, control flow, ...), when its operands are at
        least as large as its value; else None.

        Such a producer is not duplicated into ``consumer`` (XLA's instruction
        fusion does not duplicate a producer that reads more than it writes
        unless every user fuses it): reading its buffer costs no more memory
        traffic than reading its operands, and fusing it would pull in the
        unfused expression behind it as well, computed once more per
        consumer, when that is at least ``RECOMPUTE_MIN_OPS`` ops.  A ViT training step computed the residual stream's
        gradient (~180 instructions) in four kernels so, one of which stored
        it for a dot anyway.  A producer that reads less than it writes (a
        broadcast, an iota, a pad) is still fused: reading it would cost more."""
        keeper = self.kept().get(id(producer))
        if keeper is None or keeper is consumer or not _reads_what_it_writes(producer):
            return None
        if self._recomputed_size(producer, RECOMPUTE_MIN_OPS) < RECOMPUTE_MIN_OPS:
            return None
        return "the computation's result" if producer is self.comp.root else keeper.name

    def _duplicated_chain(self, producer: HloInstruction, consumer: HloInstruction) -> int:
        """How many consumers besides ``consumer`` read ``producer`` (the
        root counting as one) when fusing it would compute
        ``MAX_DUPLICATED_OPS`` ops or more again (``MAX_DUPLICATED_SCALAR_OPS``
        for a single element of the entry computation) and it reads at least
        as many bytes as it writes (so a buffer of it costs no more traffic
        than its operands); else 0: it is duplicated."""
        others = self._other_users(producer, consumer)
        if not others or not _reads_what_it_writes(producer):
            return 0
        limit = MAX_DUPLICATED_SCALAR_OPS if _single_element(producer) and self.comp is self.module.entry \
            else MAX_DUPLICATED_OPS
        return others if self._recomputed_size(producer, limit) >= limit else 0

    def _recomputed_size(self, producer: HloInstruction, limit: int) -> int:
        """The arithmetic ops (elementwise, not index maps) fusing ``producer``
        would compute again: it and the cheap, unfused producers behind it
        (counted up to ``limit``; an expensive op, a parameter or a fusion
        ends a path).  Values behind it that are kept in buffers
        too count: each of them would be duplicated as well when it is
        small (a chain of residual-gradient sums, each read by a product).
        Remembered per (producer, limit): what lies behind a producer stays
        as it is until it is itself a consumer, and every question about it
        comes before that (consumers come first)."""
        key = (producer, limit)
        n = self._recomputed.get(key)
        if n is None:
            n = self._recomputed[key] = self._count_recomputed(producer, limit)
        return n

    @staticmethod
    def _count_recomputed(producer: HloInstruction, limit: int) -> int:
        seen, stack, n = set(), [producer], 0
        while stack and n < limit:
            inst = stack.pop()
            if id(inst) in seen:
                continue
            seen.add(id(inst))
            if inst is not producer and _EXPENSIVE[inst.opcode]:
                continue
            if inst.opcode == "parameter" or not fusible_producer(inst) or inst.opcode in OUTPUT_FUSION_ROOTS:
                continue
            if _ELEMENTWISE[inst.opcode] and not _DATA_MOVEMENT[inst.opcode]:
                n += 1
            stack.extend(inst.operands)
        return n

    def kept(self) -> dict:
        """id of an instruction -> the user that keeps it in a buffer whatever
        fusion does (``_keeps_operand``; the root: the root itself).  Worked
        out once, on the computation as the pass found it: fusion never
        removes such a user (a matrix product it fuses into an output fusion
        reads the operand from a buffer there too), and the users it adds are
        fusions that take operands fused.  (Scanning the users at each
        question was quadratic where a value feeds many fusions.)"""
        if self._kept is None:
            self._kept = {}
            root = self.comp.root
            for inst in self.comp.instructions:
                if inst is root:
                    self._kept[id(inst)] = inst
                    continue
                for user in inst.users:
                    if _keeps_operand(user, inst, self):
                        self._kept[id(inst)] = user
                        break
        return self._kept

    def _stays_refused(self, producer: HloInstruction, consumer: HloInstruction) -> bool:
        """Whether ``producer``, just refused, gets the same refusal from
        :meth:`why_not` until its users or ``consumer`` change (which
        :meth:`run` tracks): a parameter, an opcode that does not fuse, an
        expensive producer with other users, one kept in a buffer anyway,
        a long expression other consumers read too (``_duplicated_chain``).
        (The other refusals depend on the fusion's contents: asked again
        after each step.)"""
        if producer.opcode == "parameter" or not fusible_producer(producer):
            return True
        if _EXPENSIVE[producer.opcode]:
            return self._other_users(producer, consumer) > 0
        return self._materialised_elsewhere(producer, consumer) is not None or \
            self._duplicated_chain(producer, consumer) > 0

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
        self._kept = None
        changed = self.form_dot_epilogues()
        for consumer in reversed(self.comp.post_order()):
            if consumer.parent is not self.comp:
                continue
            if not fusible_consumer(consumer):
                continue
            current = consumer
            # After each step every operand is asked again (in candidates'
            # order), but most refusals cannot change: those in ``settled``
            # (see ``_stays_refused``) are not asked again until what their
            # answer depends on changes (their refusal is recorded already).
            # A training step's fusions asked ~70k questions, 3/4 of them these.
            settled: set[int] = set()
            progress = True
            while progress:
                progress = False
                for producer in self.candidates(current, settled):
                    why = self.why_not(producer, current)
                    if why is not None:
                        if producer.opcode not in ("parameter", "constant", "get-tuple-element"):
                            self.refusals[(id(producer), id(consumer))] = (producer, consumer, why)
                        if self._stays_refused(producer, current):
                            settled.add(id(producer))
                        continue
                    if current.opcode != "fusion":
                        current = self.make_fusion(current)
                        settled.clear()      # every operand's users changed: the consumer became the fusion
                    self._fuse(current, producer)
                    # The step changed the users of the producer and of its operands.
                    settled.discard(id(producer))
                    for op in producer.operands:
                        settled.discard(id(op))
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

    def candidates(self, consumer: HloInstruction, skip: set = frozenset()):
        """The operands of ``consumer`` to try fusing, in order: first those
        only it reads (fusing them duplicates nothing), then the others, each
        group in operand order; those whose id is in ``skip`` left out.  In a
        DAG (a cipher's rounds read each value twice) a value that two
        instructions of the fusion read is then fused once, after both, rather
        than copied into the fusion for each.

        A generator: :meth:`run` fuses the first it may and asks again of the
        changed consumer, so the operands after it (up to 64) are not looked
        at (27k steps in a training step).  Nothing it reads changes while
        it is consumed, up to the fusion that ends it."""
        root, known_users = self.comp.root, self._users
        others = []
        for p in dict.fromkeys(consumer.operands):
            if id(p) in skip:
                continue
            users = known_users.get(id(p))
            if users is None:
                users = self.users(p)
            # Only ``consumer`` reads it (or nothing does any more): ``_only_reader``.
            if p is not root and (not users or (len(users) == 1 and id(consumer) in users)):
                yield p
            else:
                others.append(p)
        yield from others

    def _only_reader(self, consumer: HloInstruction, producer: HloInstruction) -> bool:
        users = self.users(producer)  # a dict by id: each user once
        return not users or (len(users) == 1 and id(consumer) in users)

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

def _minor_concat(concat: HloInstruction) -> bool:
    """Whether ``concat`` joins its operands along its layout's minor dimension."""
    shape = concat.shape
    minor = next((d for d in shape.layout.minor_to_major if shape.dimensions[d] != 1), None)
    return minor == concat.attrs["dimensions"][0]


def _broadcast_work(inst: HloInstruction, elements: int) -> bool:
    """Whether ``inst`` is a reduction or an expensive op of fewer elements
    than ``elements`` (its values are read by several elements of the root)."""
    return (inst.opcode == "reduce" or _EXPENSIVE[inst.opcode]) and inst.shape.is_array \
        and inst.shape.element_count() < elements


def _output_root(fused: HloComputation) -> HloInstruction:
    """The dot or convolution ``fused`` computes."""
    return next(i for i in fused.instructions if i.opcode in OUTPUT_FUSION_ROOTS)


def _is_gemm(dot: HloInstruction) -> bool:
    """Whether ``dot`` multiplies matrices (more than one row and one column)."""
    def free(shape, batch, contracting):
        n = 1
        for d, size in enumerate(shape.dimensions):
            if d not in batch and d not in contracting:
                n *= size
        return n
    a = dot.attrs
    m = free(dot.operands[0].shape, a.get("lhs_batch_dims", ()), a.get("lhs_contracting_dims", ()))
    n = free(dot.operands[1].shape, a.get("rhs_batch_dims", ()), a.get("rhs_contracting_dims", ()))
    return m > 1 and n > 1


def _keeps_operand(user: HloInstruction, producer: HloInstruction, fuser: Fuser) -> bool:
    """Whether ``user`` reads ``producer`` from a buffer whatever fusion does:
    a matrix product (its operands are never fused), an op that takes no
    fused operands (a tuple, control flow, a custom call, ...), or a fusion
    whose matrix product reads it.  A matrix-vector product and a convolution
    do not count: their output fusion may still take the operand."""
    if user.opcode == "dot":
        return _is_gemm(user)
    if user.opcode == "fusion":
        if user.attrs.get("kind") == "kCustom":
            return True
        if user.attrs.get("kind") != "kOutput":
            return False
        uses = _uses_in_consumer(producer, user, fuser.fused_index(user))
        return any(u.opcode == "dot" and _is_gemm(u) for u, _ in uses)
    return not fusible_consumer(user) and user.opcode not in OUTPUT_FUSION_ROOTS


def _uses_in_consumer(producer: HloInstruction, consumer: HloInstruction, index) -> list:
    """Where the producer's value is read once fused: (instruction, operand index) pairs
    inside the fused computation (``index``, its :class:`_FusedIndex`), or in the
    consumer itself when it is not a fusion (``index`` None)."""
    if index is None:
        return [(consumer, k) for k, o in enumerate(consumer.operands) if o is producer]
    return index.uses_of(index.params[consumer.operands.index(producer)])


def fused_root(consumer: HloInstruction) -> HloInstruction:
    return consumer.attrs["calls"].root if consumer.opcode == "fusion" else consumer


def _users_in(inst: HloInstruction, index) -> list:
    """(user, operand index) pairs of ``inst`` inside a fusion (none outside one)."""
    return index.uses_of(inst) if index is not None else []


def _index_preserving_to_root(use, consumer, index) -> bool:
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
        users = _users_in(cur, index)
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


def _windows_overlap(inst: HloInstruction) -> bool:
    """Whether a ``reduce-window`` reads some operand element in more than one
    window (a stride shorter than the window's extent, or base dilation)."""
    for w in window_of(inst.attrs):
        extent = (w.size - 1) * w.window_dilation + 1
        if w.stride < extent or w.base_dilation != 1:
            return True
    return False


def _reuse(use, consumer, index) -> str | None:
    """None if the value read at ``use`` is computed once per element it has
    (or hoistably once per iteration of the outer loops); otherwise why not.

    The walk follows the value from ``use`` to the fusion root tracking ``dep``:
    the dimensions (of the instruction reached) along which the value varies.
    While every index on the way is a plain loop variable (``pure``), a value
    that varies only along the outer loops of the kernel is computed once per
    outer iteration (the code generator hoists it); after an index computation
    (slice, pad, ...) the value must be read once per element.

    Paths through the fusion fork and join again (a value read by several
    users whose results meet later): the answer from a state (instruction,
    operand, dep, pure) is the same on every path that reaches it, so each
    state is walked once (``memo``).  Walking every path was exponential in
    the depth of such diamonds (a chain of 8 logaddexp steps did not compile).
    """
    inst, k = use
    operand_shape = inst.operands[k].shape
    return _walk(inst, k, set(_nontrivial(operand_shape)), True, consumer, index, 0, {})


def _walk(inst, k, dep: set, pure: bool, consumer, index, depth: int, memo: dict) -> str | None:
    if depth > 64:
        return "index analysis gave up (too deep)"
    key = (id(inst), k, frozenset(dep), pure)
    if key not in memo:
        memo[key] = _walk_once(inst, k, dep, pure, consumer, index, depth, memo)
    return memo[key]


def _walk_once(inst, k, dep: set, pure: bool, consumer, index, depth: int, memo: dict) -> str | None:
    operand_shape = inst.operands[k].shape
    full = set(_nontrivial(operand_shape))
    op = inst.opcode
    if op == "broadcast":
        dims = inst.attrs.get("dimensions", ())
        new_dep = {dims[d] for d in dep}
        if new_dep != set(_nontrivial(inst.shape)) and not pure:
            return f"would be recomputed for every element of broadcast {inst.name}"
        return _continue(inst, new_dep, pure, consumer, index, depth, memo)
    if op in ("reshape", "bitcast") and _unit_reshape(inst):
        src, dst = _nontrivial(operand_shape), _nontrivial(inst.shape)
        new_dep = {dst[src.index(d)] for d in dep}
        return _continue(inst, new_dep, pure, consumer, index, depth, memo)
    if op == "transpose":
        perm = inst.attrs["dimensions"]
        new_dep = {j for j, p in enumerate(perm) if p in dep}
        return _continue(inst, new_dep, pure, consumer, index, depth, memo)
    if op == "reduce" and k < len(inst.operands) // 2:
        reduced = set(inst.attrs["dimensions"])
        kept = [d for d in range(operand_shape.rank) if d not in reduced]
        kept_nontrivial = {d for d in kept if operand_shape.dimensions[d] != 1}
        if dep != full and not (pure and dep == kept_nontrivial):
            return f"would be recomputed inside reduce {inst.name}"
        new_dep = {kept.index(d) for d in dep if d in kept}
        return _continue(inst, new_dep, pure, consumer, index, depth, memo)
    if op == "reduce":  # the init value: read once per output element
        return _continue(inst, set(), pure, consumer, index, depth, memo)
    if op == "reduce-window" and k == 0 and _windows_overlap(inst):
        return f"would be recomputed for every window of reduce-window {inst.name} that reads it"
    if _elementwise(inst) and operand_shape.dimensions == inst.shape.dimensions:
        return _continue(inst, dep, pure, consumer, index, depth, memo)
    if _elementwise(inst):  # a scalar operand of select/clamp
        return _continue(inst, set(), pure, consumer, index, depth, memo)
    # Any other index computation: no hoisting past it, and no reuse allowed.
    if dep != full:
        return f"would be recomputed for every element of {inst.opcode} {inst.name}"
    return _continue(inst, set(_nontrivial(inst.shape)), False, consumer, index, depth, memo)


def _continue(inst, dep: set, pure: bool, consumer, index, depth: int, memo: dict) -> str | None:
    root = fused_root(consumer)
    if inst is root:
        return _at_root(inst, dep, pure)
    users = _users_in(inst, index)
    if not users:
        return f"is read by {inst.name}, whose value leaves the fusion"
    for user, j in users:
        why = _walk(user, j, dep, pure, consumer, index, depth + 1, memo)
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


def _transpose_conflict(producer: HloInstruction, consumer: HloInstruction, index) -> str | None:
    """Refuse to make a fusion read an input through two different transposes
    (``index``: the consumer fusion's :class:`_FusedIndex`, None when it is not one)."""
    if index is None:
        return None
    for op in producer.operands:
        if op not in consumer.operands or op.shape.rank < 2:
            continue
        param = index.params[consumer.operands.index(op)]
        existing = {_access(u) for u, _ in index.uses_of(param)}
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
    """Pass: producer-consumer fusion of every sequential computation (the
    entry, while bodies and conditions, conditionals' branches, composite
    decompositions: ``call_inliner.sequential_computations``; see the module
    docstring)."""

    name = "fusion"

    def run(self, module: HloModule) -> bool:
        changed = False
        names = ModuleNames(module)
        for comp in sequential_computations(module):
            fuser = Fuser(module, comp, names)
            changed |= fuser.run()
            module.diagnostics.extend(fuser.notes)
        if changed:
            module.drop_uncalled_computations()
            module.sort_computations()
        return changed
