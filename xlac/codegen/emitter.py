"""Emit an optimised HloModule as one LLVM module with one C-callable entry.

Entry ABI (see ``runtime/xlac_runtime.h``)::

    void NAME(void **results, const void *const *params, void *temp,
              const xlac_run_options *opts);

``results[i]`` / ``params[i]`` point to the i-th result leaf / parameter buffer,
laid out as its shape's layout says; ``temp`` points to an arena of
``BufferAssignment.temp_size`` bytes, 64-byte aligned.  ``opts`` carries the
services generated code may call; it may be NULL when none is needed.

Every computation that runs as a unit (the entry; a while body; a branch) is
one function of that signature: its instructions that own a buffer each become
an internal *kernel* function, called in schedule order, then the root leaves
not computed in place are copied to the results.  A kernel is, by default, one
loop nest over the result shape writing ``generator(index)`` (the elemental
emitter); which code fills a kernel is chosen from an ordered list of
candidates per opcode (``kernel_choice.py``, filled by
``kernels.register_all``): a packed GEMM for a dot, a column reduction, a
``while`` loop, ... and last the loop over the elemental generator
(``kernels/loop.py``).

Cancellation (Ctrl-C): ``opts->cancel`` (ABI version 2) points to a flag that
the caller sets to stop a call early.  Generated code reads it at the start of
every parallel task, at every iteration of a ``while`` loop, and after every
kernel that can run long (one split into tasks, a loop, a called computation),
and returns early when it is set; the results of such a call are garbage and
the caller discards them (:func:`cancel_requested`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from llvmlite import ir

from ..hlo.ir import FreshNames, HloComputation, HloInstruction, HloModule, fresh_name
from ..passes.buffer_assignment import BufferAssignment, BufferSlice
from ..shape import Shape, to_buffer
from . import gemm_library, types
from .elemental import ElementalEmitter
from .emission import context_of
from .ir_array import I64, IrArray, i64
from .kernel_choice import KernelChoice, KernelRegistry
from .kernel_sharing import SiteSlots, site_key, slot_identity
from .loops import fill_padding, for_range, for_range_dynamic, loop_hints, loop_nest

PTR = ir.PointerType()
I8 = ir.IntType(8)
FUNCTION_TYPE = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, PTR])  # results, params, temp, opts


@dataclass
class KernelContext:
    """What a kernel emitter sees: the instruction, its buffers and builders."""

    me: "ModuleEmitter"
    assignment: BufferAssignment
    inst: HloInstruction
    fn: ir.Function
    b: ir.IRBuilder
    alloca_builder: ir.IRBuilder
    em: ElementalEmitter
    #: (results, params, temp, opts) as values in this function; the function's
    #: own arguments in a kernel, values loaded from the task context in a
    #: parallel_for body.
    args: tuple | None = None
    #: The kernel may run long (it runs tasks, a loop or a called computation):
    #: its caller checks for cancellation after it.
    long_running: bool = False
    #: The task functions :meth:`parallel_for` made for this function.
    tasks: list = field(default_factory=list)

    def __post_init__(self):
        if self.args is None:
            self.args = tuple(self.fn.args)

    @property
    def results_arg(self):
        return self.args[0]

    @property
    def params_arg(self):
        return self.args[1]

    @property
    def temp_arg(self):
        return self.args[2]

    @property
    def opts_arg(self):
        return self.args[3]

    def buffer_pointer(self, sl: BufferSlice, inst: HloInstruction | None = None) -> ir.Value:
        return self.me.buffer_pointer(self.b, self.args, sl, inst)

    @property
    def runs_once(self) -> bool:
        """Whether the kernel is the entry computation's: it runs once per
        call (one of a while body or a branch may run many times)."""
        return self.inst.parent is self.me.hlo.entry

    def site_element_count(self) -> ir.Value | None:
        """In a size-generic kernel (``KernelCandidate.size_generic``, shared
        by sites of several sizes): the element count of its result at the
        calling site, an i64 read from the slot array; else None."""
        slots = self.me._slots
        if slots is None or slots.count is None:
            return None
        b = self.b
        at = b.gep(self.results_arg, [i64(len(slots.slices))], source_etype=PTR)
        count = b.load(at, typ=PTR)
        count.set_metadata("invariant.load", self.me.llvm.add_metadata([]))
        return b.ptrtoint(count, I64)

    def operand_array(self, k: int, leaf: int = 0) -> IrArray:
        """The buffer of leaf ``leaf`` of operand ``k``."""
        return self.me.leaf_array(self.b, self.args, self.assignment, self.inst.operands[k], leaf)

    def operand_generator(self, k: int):
        return self.me.operand_generator(self.em, self.b, self.args, self.assignment, self.inst.operands[k])

    def parallel_for(self, n_tasks: int | ir.Value, emit_body: Callable[["KernelContext", ir.Value], None],
                     shared: tuple = ()) -> None:
        """Run ``emit_body(task_ctx, i)`` for every task ``i`` in [0, n_tasks)
        (an int, or an i64 value >= 1 chosen at run time).

        The body becomes a function ``void body(void *ctx, int64_t i)``; when
        the caller's ``opts->parallel_for`` is set it runs the tasks (maybe on
        several threads), otherwise this kernel loops over them itself.  The
        body gets a fresh context whose buffers are read from ``ctx``;
        ``shared`` pointers (e.g. a stack array of partial results) reach it as
        ``task_ctx.shared``.
        """
        me = self.me
        body_fn = ir.Function(me.llvm, BODY_TYPE, _unique(f"{self.fn.name}.task", me._names))
        body_fn.linkage = "internal"
        # One copy of the task code: inlining it into the serial fallback loop
        # would double what LLVM optimises and emits for every parallel kernel.
        body_fn.attributes.add("noinline")
        task_ctx_ptr, task = body_fn.args
        task_ctx_ptr.name, task.name = "ctx", "i"
        alloca_block = body_fn.append_basic_block("allocas")
        body_block = body_fn.append_basic_block("body")
        ab = ir.IRBuilder(alloca_block)
        ab.branch(body_block)
        ab.position_at_start(alloca_block)
        bb = ir.IRBuilder(body_block)
        loaded = [bb.load(bb.gep(task_ctx_ptr, [i64(k)], source_etype=PTR), typ=PTR)
                  for k in range(4 + len(shared))]
        args = tuple(loaded[:4])
        self.long_running = True
        run_task = body_fn.append_basic_block("task")
        cancelled = body_fn.append_basic_block("cancelled")
        bb.cbranch(cancel_requested(bb, args[3]), cancelled, run_task)
        bb.position_at_end(cancelled)
        bb.ret_void()
        bb.position_at_end(run_task)
        em = ElementalEmitter(bb, ab, lambda c: IrArray(me.constant_global(c), c.shape))
        task_ctx = KernelContext(me, self.assignment, self.inst, body_fn, bb, ab, em, args)
        task_ctx.shared = tuple(loaded[4:])
        emit_body(task_ctx, task)
        task_ctx.b.ret_void()
        self.tasks.append(body_fn)

        # Caller side: pack the buffers, then parallel_for or a plain loop.
        b = self.b
        packed = _pointer_array(b, self.alloca_builder, list(self.args) + list(shared))
        opts = self.opts_arg
        has_opts = b.icmp_unsigned("!=", opts, ir.Constant(PTR, None))
        with b.if_else(has_opts) as (then, otherwise):
            with then:
                pf = b.load(b.gep(opts, [i64(2)], source_etype=PTR), typ=PTR)  # opts->parallel_for
                has_pf = b.icmp_unsigned("!=", pf, ir.Constant(PTR, None))
                with b.if_else(has_pf) as (run_parallel, run_here):
                    with run_parallel:
                        runtime_ctx = b.load(b.gep(opts, [i64(1)], source_etype=PTR), typ=PTR)
                        b.call(TypedCallee(pf, PARALLEL_FOR_TYPE),
                               [runtime_ctx, n_tasks if isinstance(n_tasks, ir.Value) else i64(n_tasks),
                                body_fn, packed])
                    with run_here:
                        _serial_tasks(b, body_fn, packed, n_tasks)
            with otherwise:
                _serial_tasks(b, body_fn, packed, n_tasks)

    def output_arrays(self) -> list[IrArray]:
        """The buffers of the instruction's result leaves."""
        out = []
        for leaf in range(len(self.inst.shape.leaves())):
            sl = self.assignment.slice_of(self.inst, leaf)
            out.append(IrArray(self.buffer_pointer(sl), sl.shape))
        return out

    def scratch_pointer(self) -> ir.Value:
        sl = self.assignment.scratch_of(self.inst)
        if sl is None:
            raise AssertionError(f"{self.inst.opcode} asked for no scratch space")
        return self.buffer_pointer(sl)

    def args_array(self) -> ir.Value:
        """This kernel's four arguments (results, params, temp, opts) in an
        array on its stack: what an :meth:`outlined` function is passed."""
        array = self.alloca_builder.alloca(PTR, size=4, name="kernel.args")
        for k, arg in enumerate(self.args):
            self.b.store(arg, self.b.gep(array, [i64(k)], source_etype=PTR))
        return array

    def outlined(self, fnty: ir.FunctionType, suffix: str) -> tuple["KernelContext", tuple]:
        """A function of its own for part of this kernel (a tile's epilogue),
        internal and out of line, named after the kernel with ``suffix``;
        ``fnty``'s first parameter is an :meth:`args_array`.  Returns the
        context that emits its body (the kernel's buffers reached as the
        kernel reaches them; ``ret`` is the caller's) and its other
        parameters."""
        me = self.me
        fn = ir.Function(me.llvm, fnty, f"{self.fn.name}.{suffix}")
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        argp, *rest = fn.args
        ab = ir.IRBuilder(fn.append_basic_block("allocas"))
        bb = ir.IRBuilder(fn.append_basic_block("body"))
        ab.branch(bb.block)
        ab.position_at_start(ab.block)
        args = tuple(bb.load(bb.gep(argp, [i64(k)], source_etype=PTR), typ=PTR) for k in range(4))
        em = ElementalEmitter(bb, ab, lambda c: IrArray(me.constant_global(c), c.shape))
        return KernelContext(me, self.assignment, self.inst, fn, bb, ab, em, args), tuple(rest)

    def call_computation(self, comp: HloComputation, result_ptrs: list, param_ptrs: list,
                         temp_ptr: ir.Value) -> None:
        """Call ``comp``'s function with buffer pointers (arrays built on the stack)."""
        self.long_running = True
        fn = self.me.function_for(comp)
        results = _pointer_array(self.b, self.alloca_builder, result_ptrs)
        params = _pointer_array(self.b, self.alloca_builder, param_ptrs)
        self.b.call(fn, [results, params, temp_ptr, self.opts_arg])


#: A kernel of more LLVM instructions than this is ``noinline``: its caller
#: (the entry, a while body) calls it.  Left to itself LLVM inlines every
#: kernel called once into its caller, and its O3 pipeline is superlinear in
#: a function's size: a GPT sampling step (158 kernels, 29k instructions)
#: became one function of 41k instructions that took 14 s to optimise, 2.5 s
#: with its kernels out of line.  A kernel's loops are optimised the same in
#: or out of line; one call per kernel and run costs nanoseconds.  Tiny
#: kernels (scalar bookkeeping) stay inlinable.  Kernels out of line are also
#: what lets the back end split a module into parts (``codegen/split.py``).
INLINE_MAX_INSTRUCTIONS = 50


def keep_out_of_line(fn: ir.Function) -> None:
    """Mark ``fn`` ``noinline`` when it has more than ``INLINE_MAX_INSTRUCTIONS``,
    a loop (more than one block) or fast-math arithmetic (``fast_math``).
    Small kernels with loops are kept out of line too: the loop vectoriser's
    cost per loop grows with the size of the function the loop is in, so a
    while body that inlined its dozens of small loop kernels cost it loops x
    size (a biGRU tagger's four while loops took 1.7 of its 2.5 s of O3; all
    kernels: 10% less LLVM time over the model set, run times the same)."""
    # (A block that only branches on, the kernel's ``allocas`` block without
    # allocas, is not control flow.)
    blocks = sum(len(block.instructions) > 1 or not isinstance(block.terminator, ir.Branch) for block in fn.blocks)
    if blocks > 1 or sum(len(block.instructions) for block in fn.blocks) > INLINE_MAX_INSTRUCTIONS \
            or fast_math(fn):
        fn.attributes.add("noinline")


#: The fast-math flags xlac emits (``reduction._FAST_FLAGS``, ``linalg._CONTRACT``):
#: every one comes with ``contract``.
FAST_MATH_FLAG = "contract"


def fast_math(fn: ir.Function, callees: bool = False) -> bool:
    """Whether ``fn`` (with ``callees``: or a function it calls, defined in the
    module) has arithmetic LLVM may reassociate or contract (fast-math flags:
    a float reduction's, a factorisation's multiply-subtract).  The SLP
    vectoriser and the instruction selector reorder such code or fuse its
    multiply-adds, which changes the last bits of results, so it must be
    compiled the same way wherever it goes: it is kept out of line (no copy
    inlined into another part) and compiled hot (O2 with the loop vectoriser
    but never the SLP one, ``jit.slp_vectorizes``; the full code generator),
    as the AOT object and a one-part JIT compile it.  Results are then the
    same bits whatever the thread count or split."""
    stack, seen = [fn], {id(fn)}
    while stack:
        f = stack.pop()
        for block in f.blocks:
            for inst in block.instructions:
                if FAST_MATH_FLAG in (getattr(inst, "flags", None) or ()) \
                        or FAST_MATH_FLAG in (getattr(inst, "fastmath", None) or ()):
                    return True
                callee = getattr(inst, "callee", None) if callees else None
                if isinstance(callee, ir.Function) and callee.blocks and id(callee) not in seen:
                    seen.add(id(callee))
                    stack.append(callee)
    return False


BODY_TYPE = ir.FunctionType(ir.VoidType(), [ir.PointerType(), ir.IntType(64)])
PARALLEL_FOR_TYPE = ir.FunctionType(ir.VoidType(), [ir.PointerType(), ir.IntType(64),
                                                    ir.PointerType(), ir.PointerType()])


#: ``opts->cancel`` (``xlac_run_options`` version 2): the field's index, all fields being 8 bytes.
CANCEL_FIELD = 10
CANCEL_ABI_VERSION = 2
_CANCELLED_FN = "xlac.cancel_requested"


def cancel_requested(b: ir.IRBuilder, opts: ir.Value) -> ir.Value:
    """An i1: the caller asked this call to stop (``opts->cancel`` points to a
    non-zero flag).  False when ``opts`` is NULL, older than ABI version 2 (a
    caller built against version 1 has no such field) or ``cancel`` is NULL."""
    module = b.module
    fn = module.globals.get(_CANCELLED_FN)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ir.IntType(1), [PTR]), _CANCELLED_FN)
        fn.linkage = "internal"
        _emit_cancel_requested(fn)
    return b.call(fn, [opts])


def _emit_cancel_requested(fn: ir.Function) -> None:
    (opts,) = fn.args
    entry = fn.append_basic_block("entry")
    check_version = fn.append_basic_block("version")
    check_flag = fn.append_basic_block("flag")
    read_flag = fn.append_basic_block("read")
    no = fn.append_basic_block("no")
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_unsigned("==", opts, ir.Constant(PTR, None)), no, check_version)
    b.position_at_end(check_version)
    version = b.load(opts, typ=ir.IntType(64))
    b.cbranch(b.icmp_signed("<", version, i64(CANCEL_ABI_VERSION)), no, check_flag)
    b.position_at_end(check_flag)
    flag = b.load(b.gep(opts, [i64(CANCEL_FIELD)], source_etype=PTR), typ=PTR)
    b.cbranch(b.icmp_unsigned("==", flag, ir.Constant(PTR, None)), no, read_flag)
    b.position_at_end(read_flag)
    # Set asynchronously (a signal handler, another thread): read it afresh each time.
    value = b.load_atomic(flag, "monotonic", 4, typ=ir.IntType(32))
    b.ret(b.icmp_unsigned("!=", value, ir.Constant(ir.IntType(32), 0)))
    b.position_at_end(no)
    b.ret(ir.Constant(ir.IntType(1), 0))


class TypedCallee:
    """An indirect callee for llvmlite: a pointer value plus its function type."""

    def __init__(self, value, fnty):
        self.value, self.function_type = value, fnty
        self.type = ir.PointerType()

    def get_reference(self):
        return self.value.get_reference()


def _back_edges(fn: ir.Function) -> int:
    """Branches of ``fn`` to a block on the path that reached them (a depth-first
    walk from its entry block): its loops."""
    def successors(block) -> list:
        term = block.terminator
        return [t for t in (term.operands if term is not None else ()) if isinstance(t, ir.Block)]

    if not fn.blocks:
        return 0
    state: dict[int, int] = {}          # 1: on the path, 2: done
    edges = 0
    stack = [(fn.blocks[0], iter(successors(fn.blocks[0])))]
    state[id(fn.blocks[0])] = 1
    while stack:
        block, todo = stack[-1]
        target = next(todo, None)
        if target is None:
            state[id(block)] = 2
            stack.pop()
        elif state.get(id(target)) == 1:
            edges += 1
        elif id(target) not in state:
            state[id(target)] = 1
            stack.append((target, iter(successors(target))))
    return edges


def _serial_tasks(b, body_fn, packed, n_tasks) -> None:
    # Not unrolled: 64 calls in a row are only more code to compile.
    if isinstance(n_tasks, ir.Value):
        with for_range_dynamic(b, i64(0), n_tasks, "task", loop_id=loop_hints(b.module)) as i:
            b.call(body_fn, [packed, i])
        return
    with for_range(b, n_tasks, "task", loop_id=loop_hints(b.module)) as i:
        b.call(body_fn, [packed, i])


def _slot_count(slots: SiteSlots) -> int:
    """The slots of a site's array: its buffers' and, for a size-generic
    kernel, the element count's."""
    return len(slots.slices) + (slots.count is not None)


def _pointer_array(b, alloca_builder, ptrs: list) -> ir.Value:
    arr = alloca_builder.alloca(PTR, size=max(1, len(ptrs)))
    for k, p in enumerate(ptrs):
        b.store(p, b.gep(arr, [i64(k)], source_etype=PTR))
    return arr


#: A size-generic kernel (``kernel_sharing``) is emitted once for the sites
#: of one computation that differ only in their shapes when they have at
#: least this many shapes; otherwise each shape is a kernel of its own.
SIZES_TO_GENERIC = 3
#: A shared-kernel site with at most this many slots stores their addresses
#: itself; one with more fills its slot array from a constant table.
SLOT_STORES_MAX = 2
#: How the library's ``fill_slots`` reads a slot table's kinds.
SLOT_KINDS = gemm_library.SLOT_KINDS


def fill_slots_function(module: ir.Module) -> ir.Function:
    """``fill_slots(slots, table, n, results, params, temp)`` of the library
    (``gemm_library.HelperVariant``): for each of the ``n`` (kind, value) pairs
    of ``table`` the address of that slot — ``temp + value``, ``params[value]``,
    ``results[value]`` or ``value`` itself — into ``slots``.  Compiled once per
    machine, not in every module (its O3 and code generation were ~5 ms)."""
    return gemm_library.declare(module, gemm_library.HELPERS, "fill_slots")


class ModuleEmitter:
    """Builds the LLVM module for ``module``; see the module docstring."""

    def __init__(self, module: HloModule, kernels: KernelRegistry, entry_name: str, triple: str = "",
                 data_layout: str = "", aligned_results: bool = False,
                 on_finished: Callable[[list, bool, list], None] | None = None):
        self.hlo = module
        #: Told of the functions emitted and never changed again (see
        #: ``_report``), whether they are cold (``COLD_MAX_WORK``) and which of
        #: them no function emitted later calls: ``jit.StreamedCompile``
        #: compiles them meanwhile.
        self.on_finished = on_finished
        #: Finished inside a computation other than the entry: (function,
        #: private), held until the entry's kernel that calls it is finished.
        self._held: list[tuple] = []
        self._depth = 0                 # computations being emitted, the entry's aside
        #: How many instructions call each computation (by id): a function
        #: called from one kernel is private to it.
        self._callers = Counter(id(c) for inst in module.instructions() for c in inst.called_computations())
        #: Computations called only as while bodies: their loop state is
        #: updated in place (``BufferAssignment(loop_state=True)``).
        bodies = Counter(id(inst.attrs["body"]) for inst in module.instructions() if inst.opcode == "while")
        self._loop_bodies = {c for c, n in bodies.items() if n == self._callers[c]}
        #: The kernel candidates by opcode (``kernels.register_all``).
        self.kernels = kernels
        self._choices: dict[int, KernelChoice] = {}
        self.entry_name = entry_name
        self.llvm = ir.Module(name=module.name)
        if triple:
            self.llvm.triple = triple
        if data_layout:
            self.llvm.data_layout = data_layout
        #: What the emission remembers apart from the values it emits (emission.py).
        self.context = context_of(self.llvm)
        self._globals: dict[int, ir.GlobalVariable] = {}
        self._names = FreshNames()      # function and global names (fresh_name's, found faster)
        self._assignments: dict[int, BufferAssignment] = {}
        self._functions: dict[int, ir.Function] = {}
        #: Big loop-kernel results get a version with non-temporal stores.
        self.nontemporal = True
        #: The caller promises 64-byte aligned result (and temp) buffers, as the
        #: JIT runtime's pool does: big results get only the non-temporal version.
        self.aligned_results = aligned_results
        #: Whether some kernel relied on that promise (``Lowered.assumes_aligned_results``).
        self.assumed_alignment = False
        #: Whether the code reads ``opts->cancel`` somewhere (it has a loop, a
        #: called computation or tasks): only then can a call be cancelled.
        self.polls_cancel = False
        #: Emit structurally identical kernels once (``kernel_sharing.py``).
        self.share_kernels = True
        #: Shared kernels by ``site_key``: [function, long_running, sites].
        self._shared: dict[str, list] = {}
        self._fingerprints: dict = {}
        #: Kernels that only dispatch their tasks (``COLD_DISPATCH``): id -> the tasks.
        self._dispatching: dict[int, list] = {}
        #: While a shared kernel is emitted: its slots (buffers are read from
        #: the slot array, the kernel's first argument), else None.
        self._slots: SiteSlots | None = None

    # -- computations -------------------------------------------------------------
    def assignment_for(self, comp: HloComputation) -> BufferAssignment:
        a = self._assignments.get(id(comp))
        if a is None:
            def scratch(inst):
                return self.kernel_choice(inst).candidate.scratch_bytes(self, inst)
            a = self._assignments[id(comp)] = BufferAssignment(
                comp, scratch=scratch, loop_state=id(comp) in self._loop_bodies)
        return a

    def kernel_choice(self, inst: HloInstruction) -> KernelChoice:
        """The kernel candidate chosen for ``inst`` (chosen once; the reasons
        earlier candidates were skipped become a diagnostic on the module)."""
        choice = self._choices.get(id(inst))
        if choice is None:
            choice = self._choices[id(inst)] = self.kernels.choose(inst)
            note = choice.diagnostic(inst)
            if note is not None:
                self.hlo.diagnostics.append(note)
        return choice

    def function_for(self, comp: HloComputation, name: str | None = None,
                     linkage: str = "internal") -> ir.Function:
        """The function running ``comp`` (emitted once)."""
        fn = self._functions.get(id(comp))
        if fn is not None:
            return fn
        outer, self._slots = self._slots, None    # its kernels read their own buffers
        nested = comp is not self.hlo.entry
        self._depth += nested
        try:
            return self._emit_function(comp, name, linkage)
        finally:
            self._slots = outer
            self._depth -= nested

    def _emit_function(self, comp: HloComputation, name: str | None, linkage: str) -> ir.Function:
        assignment = self.assignment_for(comp)
        fn = ir.Function(self.llvm, FUNCTION_TYPE,
                         name or _unique(f"{self.entry_name}.{_sanitize(comp.name)}", self._names))
        self._names.add(fn.name)
        fn.linkage = linkage
        for arg, nm in zip(fn.args, ("results", "params", "temp", "opts")):
            arg.name = nm
        self._functions[id(comp)] = fn
        insts = assignment.materialized()
        keys = self._sharing_keys(assignment, insts)
        sites = Counter(k[0] for k in keys if k is not None)
        entry = comp is self.hlo.entry
        kernels = [self._finished(self._emit_kernel(assignment, inst, key, sites),
                                  entry and (work_estimate(inst) <= COLD_MAX_WORK
                                             or self.kernel_choice(inst).candidate.is_glue(inst)), entry)
                   for inst, key in zip(insts, keys)]
        kernels += [self._finished((self._emit_copy(assignment, number, src), False, None),
                                   entry and _copy_work(assignment.result_shapes[number]) <= COLD_MAX_WORK)
                    for number, src in assignment.copies]
        # Slot arrays are allocated in the entry block (static allocas: stack
        # slots of the frame); one in the middle of the function would be a
        # dynamic alloca, a stack adjustment and a live register at each site.
        allocas = ir.IRBuilder(fn.append_basic_block("entry"))
        b = ir.IRBuilder(fn.append_basic_block("body"))
        cancelled = None
        for kernel, long_running, slots in kernels:
            if slots is None:
                b.call(kernel, list(fn.args))
            else:
                # An array per site: the kernel reads it with !invariant.load,
                # which must stay true where LLVM inlines a small kernel here.
                array = allocas.alloca(PTR, size=max(1, _slot_count(slots)))
                self._fill_slots(b, fn, array, slots)
                b.call(kernel, [array, array, array, fn.args[3]])
            if long_running:
                self.polls_cancel = True
                if cancelled is None:
                    cancelled = fn.append_basic_block("cancelled")
                go_on = fn.append_basic_block("next")
                b.cbranch(cancel_requested(b, fn.args[3]), cancelled, go_on)
                b.position_at_end(go_on)
        b.ret_void()
        allocas.branch(fn.blocks[1])
        if cancelled is not None:
            b.position_at_end(cancelled)
            b.ret_void()
        if comp is not self.hlo.entry:
            self._report(fn, False, self._callers[id(comp)] == 1)
        return fn

    def _fill_slots(self, b: ir.IRBuilder, fn: ir.Function, array: ir.Value, slots) -> None:
        """Fill ``array`` with the addresses of a shared kernel's slots.  A site
        with more than ``SLOT_STORES_MAX`` slots calls the library's ``fill_slots`` on a
        constant table of them (see ``slot_table``): a training step's entry
        was 700 sites of a store and an address per slot, a quarter of the
        module's instructions, for LLVM to optimise in one function."""
        if _slot_count(slots) <= SLOT_STORES_MAX:
            for k, (sl, src) in enumerate(slots.slices):
                b.store(self.buffer_pointer(b, fn, sl, src), b.gep(array, [i64(k)], source_etype=PTR))
            if slots.count is not None:
                b.store(b.inttoptr(i64(slots.count), PTR), b.gep(array, [i64(len(slots.slices))], source_etype=PTR))
            return
        table = self._slot_table(slots)
        results, params, temp, _opts = fn.args
        b.call(fill_slots_function(self.llvm), [array, table, i64(_slot_count(slots)), results, params, temp])

    def _slot_table(self, slots) -> ir.GlobalVariable:
        """A constant table of ``slots``: per slot its kind (``SLOT_KINDS``) and
        value (a temp offset, a parameter or result number, an address)."""
        values = []
        for sl, src in slots.slices:
            if sl.kind == "constant":
                address = ir.FormattedConstant(I64, f"ptrtoint (ptr {self.constant_global(src).get_reference()} "
                                                    f"to i64)")
                values += [i64(SLOT_KINDS["constant"]), address]
            else:
                values += [i64(SLOT_KINDS[sl.kind]), i64(sl.offset if sl.kind == "temp" else sl.number)]
        if slots.count is not None:          # the element count, as a value ("constant": itself)
            values += [i64(SLOT_KINDS["constant"]), i64(slots.count)]
        ty = ir.ArrayType(I64, len(values))
        g = ir.GlobalVariable(self.llvm, ty, _unique(f"{self.entry_name}.slots", self._names))
        g.initializer = ir.Constant(ty, values)
        g.global_constant = True
        g.linkage = "internal"
        return g

    def emit(self) -> ir.Module:
        self.function_for(self.hlo.entry, self.entry_name, linkage="external")
        return self.llvm

    # -- buffers ----------------------------------------------------------------------
    def buffer_pointer(self, b: ir.IRBuilder, fn, sl: BufferSlice,
                       inst: HloInstruction | None = None) -> ir.Value:
        """Pointer to a slice; ``fn`` is the function (its arguments are the
        buffers) or a tuple (results, params, temp, opts) of values."""
        results, params, temp, _opts = fn.args if isinstance(fn, ir.Function) else fn
        if self._slots is not None:
            return self._slot_pointer(b, results, sl, inst)
        if sl.kind == "parameter":
            return b.load(b.gep(params, [i64(sl.number)], source_etype=PTR), typ=PTR)
        if sl.kind == "result":
            return b.load(b.gep(results, [i64(sl.number)], source_etype=PTR), typ=PTR)
        if sl.kind == "temp":
            return b.gep(temp, [i64(sl.offset)], inbounds=True, source_etype=I8)
        if sl.kind == "constant":
            return self.constant_global(inst)
        if sl.kind == "token":
            return ir.Constant(PTR, None)
        raise AssertionError(sl.kind)

    def _slot_pointer(self, b: ir.IRBuilder, slot_array: ir.Value, sl: BufferSlice,
                      inst: HloInstruction | None) -> ir.Value:
        """In a shared kernel: the pointer to ``sl`` read from the slot array."""
        ident = slot_identity(sl, inst)
        if ident is None:
            return ir.Constant(PTR, None)
        k = self._slots.index.get(ident)
        if k is None:
            raise AssertionError(f"a shared kernel reads {sl}, not among its site's slots")
        ptr = b.load(b.gep(slot_array, [i64(k)], source_etype=PTR), typ=PTR)
        # The call site filled the array before the call; nothing writes it meanwhile.
        ptr.set_metadata("invariant.load", self.llvm.add_metadata([]))
        return ptr

    def leaf_array(self, b, fn, assignment: BufferAssignment, op: HloInstruction, leaf: int) -> IrArray:
        sl = assignment.slice_of(op, leaf)
        src, _ = assignment.defining(op, leaf)
        return IrArray(self.buffer_pointer(b, fn, sl, src), sl.shape)

    def operand_generator(self, em: ElementalEmitter, b, fn, assignment: BufferAssignment,
                          op: HloInstruction):
        """A generator reading ``op``'s value from its buffer(s)."""
        src, _ = assignment.defining(op, 0)
        if (not op.shape.is_tuple and src.opcode == "constant" and src.literal.size <= 1
                and src.shape.element_type is op.shape.element_type):   # not bitcast to another type
            return em.make_generator(src, [])
        if op.shape.is_tuple:
            leaves = [self.leaf_array(b, fn, assignment, op, k) for k in range(len(op.shape.leaves()))]
            return _tuple_reader(b, op.shape, leaves)
        array = self.leaf_array(b, fn, assignment, op, 0)
        return lambda index: array.read(b, index)

    # -- kernels -------------------------------------------------------------------
    def _new_kernel(self, base: str) -> tuple[ir.Function, ir.IRBuilder, ir.IRBuilder]:
        name = _unique(f"{self.entry_name}.{_sanitize(base)}", self._names)
        fn = ir.Function(self.llvm, FUNCTION_TYPE, name)
        fn.linkage = "internal"
        # Out of line unless tiny: ``keep_out_of_line``, once the body is emitted.
        for arg, nm in zip(fn.args, ("results", "params", "temp", "opts")):
            arg.name = nm
        alloca_block = fn.append_basic_block("allocas")
        body = fn.append_basic_block("body")
        alloca_builder = ir.IRBuilder(alloca_block)
        alloca_builder.branch(body)
        alloca_builder.position_at_start(alloca_block)
        return fn, ir.IRBuilder(body), alloca_builder

    def _finished(self, kernel: tuple, cold: bool, entry: bool = False) -> tuple:
        """``kernel`` (as ``_emit_kernel`` gives it) once it is complete: out of
        line unless tiny, and reported to ``on_finished`` (``cold``: see
        ``COLD_MAX_WORK``; ``entry``: a kernel of the entry, whose
        :data:`dispatching <COLD_DISPATCH>` is compiled cold)."""
        fn, long_running, slots = kernel
        keep_out_of_line(fn)
        if long_running:
            # It calls a computation (or runs a library's loop): out of line,
            # it is the root the split keeps its computations with.
            fn.attributes.add("noinline")
        tasks = self._dispatching.get(id(fn))
        dispatch = bool(not cold and entry and tasks and self.on_finished is not None and not fast_math(fn))
        if dispatch:
            for task in tasks:
                self.report_hot(task)
            cold = True
        # Fast-math code is compiled hot only: see ``fast_math`` (a dispatch's
        # tasks went hot on their own).
        cold = cold and self.on_finished is not None and not fast_math(fn, callees=not dispatch)
        # A kernel without slots is not shared: its computation's function is
        # the one caller (the entry's kernels are called from another part).
        self._report(fn, cold, slots is None and self._depth > 0)
        return kernel

    def report_hot(self, fn: ir.Function) -> None:
        """Tell ``on_finished`` of ``fn``, a function a kernel calls that is
        compiled hot whatever the kernel is (a glue kernel's epilogue, see
        ``conv_gemm.is_glue``); reported before the kernel, it goes to a part
        of its own kind, and the kernel's part declares it."""
        self._report(fn, False, False)

    def _report(self, fn: ir.Function, cold: bool, private: bool) -> None:
        """Tell ``on_finished`` of ``fn``, finished (``private``: only
        functions reported with it call it).  Inside a computation other than
        the entry, it is held until the entry's kernel calling that
        computation is finished, and reported with it: a while loop's kernel,
        its body's function and the body's kernels go to the same part, where
        LLVM may inline the body and optimise the calls to its kernels."""
        if self.on_finished is None:
            return
        self._held.append((fn, private))
        if self._depth == 0:
            held, self._held = self._held, []
            self.on_finished([f for f, _ in held], cold and len(held) == 1, [f for f, p in held if p])

    def _sharing_keys(self, assignment: BufferAssignment, insts: list) -> list:
        """``_sharing_key`` of each of a computation's kernels ``insts``: a
        size-generic one's key without sizes when its sites have at least
        SIZES_TO_GENERIC shapes (a loop of a known short count compiles to
        less code than one whose count is read at run time), else with them."""
        keys = [self._sharing_key(assignment, inst) for inst in insts]
        generic = [self._sharing_key(assignment, inst, size_generic=True) if k is not None else None
                   for inst, k in zip(insts, keys)]
        sizes: dict = {}
        for k, g in zip(keys, generic):
            if g is not None:
                sizes.setdefault(g[0], set()).add(k[0])
        return [g if g is not None and len(sizes[g[0]]) >= SIZES_TO_GENERIC else k for k, g in zip(keys, generic)]

    def _sharing_key(self, assignment: BufferAssignment, inst: HloInstruction,
                     size_generic: bool = False) -> tuple | None:
        """(``site_key``, slots) of a kernel that may be shared, else None;
        with ``size_generic``, the key without sizes of a kernel whose
        candidate makes it so (``KernelCandidate.size_generic``), else None."""
        candidate = self.kernel_choice(inst).candidate
        if not (self.share_kernels and candidate.shareable):
            return None
        flags = (self.aligned_results, self.nontemporal)
        if size_generic:
            if candidate.size_generic is None or not candidate.size_generic(inst):
                return None
            # (whether an entry's kernel is cold follows from its size)
            flags += (work_estimate(inst) <= COLD_MAX_WORK,)
        elif candidate.once is not None and candidate.once(inst):
            # The entry's kernel is emitted for running once, a loop body's is not.
            flags += (inst.parent is self.hlo.entry,)
        return site_key(assignment, inst, candidate.name, flags, self._fingerprints, size_generic)

    def _emit_kernel(self, assignment: BufferAssignment, inst: HloInstruction, keyed: tuple | None,
                     sites: Counter) -> tuple:
        """(the kernel of ``inst``, whether it may run long (see
        ``KernelContext.long_running``), its slots or None).  A kernel with
        slots is shared: its site passes the slot array as the first three
        arguments (``kernel_sharing.py``).  ``keyed``: its ``_sharing_key``;
        ``sites``: how many kernels of its computation have each key.  A kernel
        with one site reads its buffers as before (no slot array to fill,
        the temp offsets visible to LLVM)."""
        candidate = self.kernel_choice(inst).candidate
        shared = self._shared.get(keyed[0]) if keyed is not None else None
        if shared is None and (keyed is None or sites[keyed[0]] < 2):
            fn, long_running = self._emit_kernel_function(assignment, inst, candidate)
            return fn, long_running, None
        key, slots = keyed
        if shared is None:
            outer, self._slots = self._slots, slots
            try:
                fn, long_running = self._emit_kernel_function(assignment, inst, candidate)
            finally:
                self._slots = outer
            # Never inlined: inlined into a site, the kernel's !invariant.load
            # of its slot array could be moved above the call filling it
            # (``_fill_slots``); and a copy per site is what sharing avoids.
            fn.attributes.add("noinline")
            shared = self._shared[key] = [fn, long_running, 0]
        shared[2] += 1
        return shared[0], shared[1], slots

    def _emit_kernel_function(self, assignment: BufferAssignment, inst: HloInstruction, candidate) -> tuple:
        fn, b, ab = self._new_kernel(inst.name or inst.opcode)
        em = ElementalEmitter(b, ab, lambda c: IrArray(self.constant_global(c), c.shape))
        ctx = KernelContext(self, assignment, inst, fn, b, ab, em)
        with self.context.kernel():
            candidate.emit(ctx)
        ctx.b.ret_void()
        if COLD_DISPATCH and ctx.tasks and _back_edges(fn) == 2 * len(ctx.tasks):
            self._dispatching[id(fn)] = ctx.tasks
        return fn, ctx.long_running

    @property
    def kernel_sites(self) -> dict:
        """{shared kernel function name: number of sites calling it}."""
        return {fn.name: sites for fn, _lr, sites in self._shared.values()}

    def _emit_copy(self, assignment: BufferAssignment, number: int, src: BufferSlice) -> ir.Function:
        fn, b, _ab = self._new_kernel(f"copy_result{number}")
        shape = assignment.result_shapes[number]
        if shape.is_array:
            src_inst, _ = assignment.defining(assignment.computation.root, number)
            out = IrArray(self.buffer_pointer(b, fn, BufferSlice("result", number, 0, 0, shape)), shape)
            fill_padding(b, out)
            if shape.element_count() > 0:
                if src.kind == "constant" and src_inst.literal.size == 1:
                    value = types.constant(shape.element_type, src_inst.literal.reshape(-1)[0])
                    with loop_nest(b, shape) as index:
                        out.write(b, index, value)
                else:
                    source = IrArray(self.buffer_pointer(b, fn, src, src_inst), src.shape)
                    with loop_nest(b, shape) as index:
                        out.write(b, index, source.read(b, index))
        b.ret_void()
        return fn

    def unique_name(self, base: str) -> str:
        """A global name of this module not used yet, from ``base``."""
        return _unique(_sanitize(base), self._names)

    # -- constants -------------------------------------------------------------------
    def constant_global(self, inst: HloInstruction) -> ir.GlobalVariable:
        g = self._globals.get(id(inst))
        if g is None:
            data = to_buffer(inst.literal, inst.shape).tobytes()
            ty = ir.ArrayType(I8, max(len(data), 1))
            g = ir.GlobalVariable(self.llvm, ty, _unique(f"const.{_sanitize(inst.name)}", self._names))
            g.initializer = ir.Constant(ty, bytearray(data or b"\0"))
            g.global_constant = True
            g.linkage = "internal"
            g.align = 64
            self._globals[id(inst)] = g
        return g


#: A kernel of the entry doing at most this much work (units of
#: :data:`WORK_UNIT_BYTES`: one f32 element) is *cold*: it runs once per call
#: for nanoseconds, so the back end compiles it as it compiles the entry
#: (``jit.COLD``: no optimisation, the fast code generator).  One element: a
#: kernel of more has a loop, which without the loop vectoriser ran scalar
#: (64 units: rng_samplers executed 5% more instructions per call; with the
#: loop vectoriser at O1 the cold tier saved no compile time).  Kernels of
#: while bodies and branches stay hot (a loop may run them many times).
COLD_MAX_WORK = 1
#: A hot kernel of the entry that only hands its tasks to ``parallel_for``
#: (no loop of its own but the two serial fallbacks) is compiled cold, its
#: task functions hot: the dispatch runs once per call, and O3 spent ~3-4 ms
#: on it (its loops, its inlining) of a small loop kernel's ~15.
COLD_DISPATCH = True
#: Work is counted in units of 4 bytes moved (one f32 element) for memory-bound
#: loops, and of one multiply-add for products (a dot's M * N * K), as XLA's
#: ``parallel_task_assignment.cc`` sizes I/O-bound ops by bytes and
#: compute-bound ones by flops.  A kernel doing less work than this runs on
#: one thread: a wake-up and a few cache misses cost microseconds, which a
#: loop of a few microseconds must not pay (2^17 units: 512 KiB, ~30 us).
PARALLEL_MIN_WORK = 1 << 17
#: Each parallel task gets at least this much work...
TASK_MIN_WORK = 1 << 14
#: ... and a kernel is split into at most this many tasks.
MAX_TASKS = 64
#: Bytes per unit of memory-bound work.
WORK_UNIT_BYTES = 4


def memory_work(shape: Shape) -> int:
    """The work of streaming ``shape``'s elements once: its bytes over
    :data:`WORK_UNIT_BYTES` (an f32 element is one unit, an f64 two, a bf16 half)."""
    return shape.element_count() * shape.element_type.byte_size // WORK_UNIT_BYTES


def _copy_work(shape: Shape) -> int:
    return memory_work(shape) if shape.is_array else 0


def work_estimate(inst: HloInstruction) -> int:
    """The work of a kernel (units of :data:`PARALLEL_MIN_WORK`): the bytes of
    its result, or of the input of a reduce when that is more; a dot's
    multiply-adds (M * N * K) when it contracts."""
    insts = inst.attrs["calls"].instructions if inst.opcode == "fusion" else [inst]
    work = max(memory_work(s) for s in inst.shape.leaves()) if inst.shape.leaves() else 0
    for i in insts:
        if i.opcode == "reduce":
            work = max(work, memory_work(i.operands[0].shape))
        elif i.opcode == "dot":
            lhs = i.operands[0].shape
            k = 1
            for d in i.attrs.get("lhs_contracting_dims", ()):
                k *= lhs.dimensions[d]
            work = max(work, i.shape.element_count() * k)
    return work


def task_range(b: ir.IRBuilder, i, chunk: int, extent: int) -> tuple:
    """``[lo, hi)``: chunk ``i`` of ``extent`` in chunks of ``chunk``.  When
    ``chunk`` divides ``extent`` the last chunk is whole too and ``hi`` is
    ``lo + chunk``, so a loop over the chunk has a known trip count (LLVM
    then emits no remainder or epilogue loops for it)."""
    lo = b.mul(i, i64(chunk), flags=["nsw", "nuw"])
    hi = b.add(lo, i64(chunk), flags=["nsw", "nuw"])
    if extent % chunk:
        hi = b.select(b.icmp_signed("<", hi, i64(extent)), hi, i64(extent))
    return lo, hi


def task_chunks(extent: int, work: int) -> tuple[int, int]:
    """``(chunk, count)``: ``extent`` (a loop's trip count) in ``count`` chunks
    of ``chunk``, at most ``MAX_TASKS`` and each with at least
    ``TASK_MIN_WORK`` of the loop's ``work`` units (one chunk at least)."""
    count = max(1, min(extent, MAX_TASKS, work // TASK_MIN_WORK))
    chunk = -(-extent // count)
    return chunk, -(-extent // chunk)


def parallel_parts(ctx: "KernelContext", counts: list, body: Callable) -> None:
    """One ``parallel_for`` over the tasks of several parts (a concatenation's
    operands, say), ``counts[p]`` of them for part ``p``:
    ``body(task_ctx, p, i)`` emits part ``p``'s task ``i`` (an i64)."""
    def task(tctx: "KernelContext", t) -> None:
        b = tctx.b
        first = 0
        for p, count in enumerate(counts):         # task t is task t - first of part p
            inside = b.and_(b.icmp_unsigned(">=", t, i64(first)), b.icmp_unsigned("<", t, i64(first + count)))
            with b.if_then(inside):
                body(tctx, p, b.sub(t, i64(first)))
            first += count
    ctx.parallel_for(sum(counts), task)


def _tuple_reader(b, shape: Shape, leaves: list[IrArray]):
    """Generator for a tuple-shaped buffer: a (nested) tuple of element reads."""
    def build(s: Shape, it):
        if s.is_tuple:
            return tuple(build(e, it) for e in s.tuple_shapes)
        return next(it)

    structure = build(shape, iter(leaves))

    def read(node, index):
        if isinstance(node, tuple):
            return tuple(read(n, index) for n in node)
        return node.read(b, index)

    return lambda index: read(structure, index)


def _sanitize(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in name) or "x"


def _unique(name: str, used: set) -> str:
    return fresh_name(name, used)
