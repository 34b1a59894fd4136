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
emitter); opcodes that are not elemental (while, sort, scatter, ...) register a
:class:`KernelRule` in :data:`KERNELS` instead.

Cancellation (Ctrl-C): ``opts->cancel`` (ABI version 2) points to a flag that
the caller sets to stop a call early.  Generated code reads it at the start of
every parallel task, at every iteration of a ``while`` loop, and after every
kernel that can run long (one split into tasks, a loop, a called computation),
and returns early when it is set; the results of such a call are garbage and
the caller discards them (:func:`cancel_requested`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from llvmlite import ir

from ..errors import UnsupportedError
from ..hlo.ir import HloComputation, HloInstruction, HloModule, fresh_name
from ..passes.buffer_assignment import BufferAssignment, BufferSlice
from ..hlo.opcodes import Trait, with_trait
from ..shape import Shape, padding_scalar, to_buffer
from . import types
from .emission import context_of
from .elemental import ElementalEmitter
from .hoisting import row_scratch_dims
from .reduction import emit_reducer
from .ir_array import Index, IrArray, i64, scalar_index
from . import nontemporal
from .loops import (REDUCTION_INTERLEAVE, for_range, loop_hints, loop_nest, loop_nest_versions, parallel_loops,
                    tiled_loop_nest)

PTR = ir.PointerType()
I8 = ir.IntType(8)
FUNCTION_TYPE = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, PTR])  # results, params, temp, opts


@dataclass
class KernelRule:
    """How to emit an opcode that is not a plain loop over its result.

    ``emit(ctx)`` writes the kernel body (the builder is positioned in the
    kernel; the kernel's ``ret`` is added afterwards).  ``scratch_bytes(me,
    inst)`` is the temp space the kernel needs while it runs.
    """

    emit: Callable[["KernelContext"], None]
    scratch_bytes: Callable[["ModuleEmitter", HloInstruction], int] = lambda me, inst: 0


#: opcode -> KernelRule for non-elemental instructions.
KERNELS: dict[str, KernelRule] = {}


def register_kernel(opcode: str, scratch_bytes=None):
    """Decorator: ``@register_kernel("while")`` on ``def emit(ctx): ...``; fusions
    register by kind, ``@register_kernel("fusion:kOutput")``.  An ``emit`` may
    call ``default_loop_kernel(ctx)`` to decline (the elemental loop is used)."""
    def wrap(fn):
        KERNELS[opcode] = KernelRule(fn, scratch_bytes or (lambda me, inst: 0))
        return fn
    return wrap


def kernel_rule(inst: HloInstruction) -> KernelRule | None:
    """The registered kernel of ``inst``, if any: by opcode, and for fusions by
    ``"fusion:<kind>"`` (e.g. ``"fusion:kOutput"`` for a dot with its epilogue);
    None means the default elemental loop kernel."""
    if inst.opcode == "fusion":
        return KERNELS.get(f"fusion:{inst.attrs.get('kind')}")
    return KERNELS.get(inst.opcode)


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

    def operand_array(self, k: int, leaf: int = 0) -> IrArray:
        """The buffer of leaf ``leaf`` of operand ``k``."""
        return self.me.leaf_array(self.b, self.args, self.assignment, self.inst.operands[k], leaf)

    def operand_generator(self, k: int):
        return self.me.operand_generator(self.em, self.b, self.args, self.assignment, self.inst.operands[k])

    def parallel_for(self, n_tasks: int, emit_body: Callable[["KernelContext", ir.Value], None],
                     shared: tuple = ()) -> None:
        """Run ``emit_body(task_ctx, i)`` for every task ``i`` in [0, n_tasks).

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
                        b.call(_TypedCallee(pf, PARALLEL_FOR_TYPE),
                               [runtime_ctx, i64(n_tasks), body_fn, packed])
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
        return self.b.gep(self.temp_arg, [i64(sl.offset)], inbounds=True, source_etype=I8)

    def call_computation(self, comp: HloComputation, result_ptrs: list, param_ptrs: list,
                         temp_ptr: ir.Value) -> None:
        """Call ``comp``'s function with buffer pointers (arrays built on the stack)."""
        self.long_running = True
        fn = self.me.function_for(comp)
        results = _pointer_array(self.b, self.alloca_builder, result_ptrs)
        params = _pointer_array(self.b, self.alloca_builder, param_ptrs)
        self.b.call(fn, [results, params, temp_ptr, self.opts_arg])


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


class _TypedCallee:
    """An indirect callee for llvmlite: a pointer value plus its function type."""

    def __init__(self, value, fnty):
        self.value, self.function_type = value, fnty
        self.type = ir.PointerType()

    def get_reference(self):
        return self.value.get_reference()


def _serial_tasks(b, body_fn, packed, n_tasks: int) -> None:
    # Not unrolled: 64 calls in a row are only more code to compile.
    with for_range(b, n_tasks, "task", loop_id=loop_hints(b.module)) as i:
        b.call(body_fn, [packed, i])


def _pointer_array(b, alloca_builder, ptrs: list) -> ir.Value:
    arr = alloca_builder.alloca(PTR, size=max(1, len(ptrs)))
    for k, p in enumerate(ptrs):
        b.store(p, b.gep(arr, [i64(k)], source_etype=PTR))
    return arr


class ModuleEmitter:
    """Builds the LLVM module for ``module``; see the module docstring."""

    def __init__(self, module: HloModule, entry_name: str, triple: str = "", data_layout: str = "",
                 aligned_results: bool = False):
        self.hlo = module
        self.entry_name = entry_name
        self.llvm = ir.Module(name=module.name)
        if triple:
            self.llvm.triple = triple
        if data_layout:
            self.llvm.data_layout = data_layout
        #: What the emission remembers apart from the values it emits (emission.py).
        self.context = context_of(self.llvm)
        self._globals: dict[int, ir.GlobalVariable] = {}
        self._names: set[str] = set()
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

    # -- computations -------------------------------------------------------------
    def assignment_for(self, comp: HloComputation) -> BufferAssignment:
        a = self._assignments.get(id(comp))
        if a is None:
            def scratch(inst):
                rule = kernel_rule(inst)
                return rule.scratch_bytes(self, inst) if rule else 0
            a = self._assignments[id(comp)] = BufferAssignment(comp, scratch=scratch)
        return a

    def function_for(self, comp: HloComputation, name: str | None = None,
                     linkage: str = "internal") -> ir.Function:
        """The function running ``comp`` (emitted once)."""
        fn = self._functions.get(id(comp))
        if fn is not None:
            return fn
        assignment = self.assignment_for(comp)
        fn = ir.Function(self.llvm, FUNCTION_TYPE,
                         name or _unique(f"{self.entry_name}.{_sanitize(comp.name)}", self._names))
        self._names.add(fn.name)
        fn.linkage = linkage
        for arg, nm in zip(fn.args, ("results", "params", "temp", "opts")):
            arg.name = nm
        self._functions[id(comp)] = fn
        kernels = [self._emit_kernel(assignment, inst) for inst in assignment.materialized()]
        kernels += [(self._emit_copy(assignment, number, src), False)
                    for number, src in assignment.copies]
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        cancelled = None
        for kernel, long_running in kernels:
            b.call(kernel, list(fn.args))
            if long_running:
                self.polls_cancel = True
                if cancelled is None:
                    cancelled = fn.append_basic_block("cancelled")
                go_on = fn.append_basic_block("next")
                b.cbranch(cancel_requested(b, fn.args[3]), cancelled, go_on)
                b.position_at_end(go_on)
        b.ret_void()
        if cancelled is not None:
            b.position_at_end(cancelled)
            b.ret_void()
        return fn

    def emit(self) -> ir.Module:
        self.function_for(self.hlo.entry, self.entry_name, linkage="external")
        return self.llvm

    # -- buffers ----------------------------------------------------------------------
    def buffer_pointer(self, b: ir.IRBuilder, fn, sl: BufferSlice,
                       inst: HloInstruction | None = None) -> ir.Value:
        """Pointer to a slice; ``fn`` is the function (its arguments are the
        buffers) or a tuple (results, params, temp, opts) of values."""
        results, params, temp, _opts = fn.args if isinstance(fn, ir.Function) else fn
        if sl.kind == "parameter":
            return b.load(b.gep(params, [i64(sl.number)], source_etype=PTR), typ=PTR)
        if sl.kind == "result":
            return b.load(b.gep(results, [i64(sl.number)], source_etype=PTR), typ=PTR)
        if sl.kind == "temp":
            return b.gep(temp, [i64(sl.offset)], inbounds=True, source_etype=I8)
        if sl.kind == "constant":
            return self.constant_global(inst)
        raise AssertionError(sl.kind)

    def leaf_array(self, b, fn, assignment: BufferAssignment, op: HloInstruction, leaf: int) -> IrArray:
        sl = assignment.slice_of(op, leaf)
        src, _ = assignment.defining(op, leaf)
        return IrArray(self.buffer_pointer(b, fn, sl, src), sl.shape)

    def operand_generator(self, em: ElementalEmitter, b, fn, assignment: BufferAssignment,
                          op: HloInstruction):
        """A generator reading ``op``'s value from its buffer(s)."""
        src, _ = assignment.defining(op, 0)
        if not op.shape.is_tuple and src.opcode == "constant" and src.literal.size <= 1:
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
        for arg, nm in zip(fn.args, ("results", "params", "temp", "opts")):
            arg.name = nm
        alloca_block = fn.append_basic_block("allocas")
        body = fn.append_basic_block("body")
        alloca_builder = ir.IRBuilder(alloca_block)
        alloca_builder.branch(body)
        alloca_builder.position_at_start(alloca_block)
        return fn, ir.IRBuilder(body), alloca_builder

    def _emit_kernel(self, assignment: BufferAssignment, inst: HloInstruction) -> tuple[ir.Function, bool]:
        """The kernel of ``inst`` and whether it may run long (see ``KernelContext.long_running``)."""
        fn, b, ab = self._new_kernel(inst.name or inst.opcode)
        em = ElementalEmitter(b, ab, lambda c: IrArray(self.constant_global(c), c.shape))
        ctx = KernelContext(self, assignment, inst, fn, b, ab, em)
        rule = kernel_rule(inst)
        with self.context.kernel():
            if rule is not None:
                rule.emit(ctx)
            else:
                _emit_loop_kernel(ctx)
        ctx.b.ret_void()
        return fn, ctx.long_running

    def _emit_copy(self, assignment: BufferAssignment, number: int, src: BufferSlice) -> ir.Function:
        fn, b, _ab = self._new_kernel(f"copy_result{number}")
        shape = assignment.result_shapes[number]
        if shape.is_array:
            src_inst, _ = assignment.defining(assignment.computation.root, number)
            out = IrArray(self.buffer_pointer(b, fn, BufferSlice("result", number, 0, 0, shape)), shape)
            _fill_padding(b, out)
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


def default_loop_kernel(ctx: KernelContext) -> None:
    """Emit the default elemental loop kernel (for kernel rules that decline)."""
    _emit_loop_kernel(ctx)


#: A kernel doing less work than this (elements touched) runs on one thread.
PARALLEL_MIN_WORK = 1 << 17
#: Each parallel task gets at least this much work...
TASK_MIN_WORK = 1 << 14
#: ... and a kernel is split into at most this many tasks.
MAX_TASKS = 64


def work_estimate(inst: HloInstruction) -> int:
    """Elements a kernel touches: its result, or more when it reduces or contracts."""
    insts = inst.attrs["calls"].instructions if inst.opcode == "fusion" else [inst]
    work = max(s.element_count() for s in inst.shape.leaves()) if inst.shape.leaves() else 0
    for i in insts:
        if i.opcode == "reduce":
            work = max(work, i.operands[0].shape.element_count())
        elif i.opcode == "dot":
            lhs = i.operands[0].shape
            k = 1
            for d in i.attrs.get("lhs_contracting_dims", ()):
                k *= lhs.dimensions[d]
            work = max(work, i.shape.element_count() * k)
    return work


def _emit_loop_kernel(ctx: KernelContext) -> None:
    """The default kernel: one loop nest over the result writing the elemental generator.

    Big kernels are split along the outermost dimension of the result into
    tasks run through ``parallel_for`` (see :meth:`KernelContext.parallel_for`).
    """
    inst, b = ctx.inst, ctx.b
    if any(not s.is_array for s in inst.shape.leaves()):
        raise UnsupportedError(inst.opcode, f"{inst.shape} results")
    outputs = ctx.output_arrays()
    for out in outputs:
        _fill_padding(b, out)
    loop_shape = outputs[0].shape
    if loop_shape.element_count() == 0:
        return
    if _column_reduce(inst) is not None:
        _emit_column_reduce(ctx)
        return
    if _split_reduce(inst) is not None:
        _emit_split_reduce(ctx)
        return
    order = [d for d in reversed(loop_shape.layout.minor_to_major) if loop_shape.dimensions[d] != 1]
    work = work_estimate(inst)
    if work < PARALLEL_MIN_WORK or not order:
        _emit_loop_body(ctx, loop_shape, None)
        return
    tiles = transpose_tiles(inst, loop_shape)
    outer = loop_shape.dimensions[order[0]]
    if tiles and order[0] in tiles:
        outer = -(-outer // tiles[order[0]])  # tasks take whole rows of tiles
    n_tasks = max(1, min(outer, MAX_TASKS, work // TASK_MIN_WORK))
    chunk = -(-outer // n_tasks)
    n_tasks = -(-outer // chunk)
    if n_tasks == 1:
        _emit_loop_body(ctx, loop_shape, None)
        return

    def task(tctx: KernelContext, i: ir.Value) -> None:
        _emit_loop_body(tctx, loop_shape, task_range(tctx.b, i, chunk, outer),
                        min_outer=outer - (n_tasks - 1) * chunk)

    ctx.parallel_for(n_tasks, task)


def _column_reduce(inst: HloInstruction):
    """The root reduce of a kernel whose reduced dimensions are all major to
    its kept ones in the input's layout (e.g. a sum over rows of a row-major
    matrix), or None.  Such a reduce is better computed by streaming the input
    in memory order into the output (see ``_emit_column_reduce``)."""
    root = inst.attrs["calls"].root if inst.opcode == "fusion" else inst
    if root.opcode != "reduce" or len(root.operands) != 2 or not root.shape.is_array:
        return None
    in_shape = root.operands[0].shape
    reduced = set(root.attrs["dimensions"])
    order = [d for d in in_shape.layout.minor_to_major if in_shape.dimensions[d] != 1]  # minor first
    kept = [d for d in order if d not in reduced]
    red = [d for d in order if d in reduced]
    if not kept or not red or in_shape.layout.is_padded:
        return None
    if max(order.index(d) for d in kept) > min(order.index(d) for d in red):
        return None
    return root


#: Input rows a column reduction adds into the output row per pass over it.
COLUMN_REDUCE_ROWS = 4
#: The shortest piece of an input row one task of a column reduction reads.
COLUMN_TASK_BYTES = 4096


def _emit_column_reduce(ctx: KernelContext) -> None:
    """out[kept] = init; then for every input element in memory order,
    out[kept] = reducer(out[kept], input[...]).  The inner loop runs along the
    kept (minor) dimensions, reading the input and the output contiguously, so
    it vectorises without reassociating anything.  Tasks split the outermost
    kept dimension (each task owns a slice of the output)."""
    inst = ctx.inst
    root = _column_reduce(inst)
    in_shape = root.operands[0].shape
    reduced = list(root.attrs["dimensions"])
    kept = [d for d in range(in_shape.rank) if d not in reduced]
    kept_order = [d for d in reversed(in_shape.layout.minor_to_major)
                  if d in kept and in_shape.dimensions[d] != 1]
    split = kept_order[0]
    extent = in_shape.dimensions[split]
    work = in_shape.element_count()
    # Each task reads its slice of every input row: keep the slices at least
    # COLUMN_TASK_BYTES long, or the tasks read short strided pieces (a sum
    # over the rows of a 4096x4096 matrix in 64 tasks of 256 bytes per row ran
    # at half the bandwidth of 4 tasks of 4 KiB).
    row_bytes = in_shape.element_type.byte_size * math.prod(
        in_shape.dimensions[d] for d in kept_order)
    n_tasks = max(1, min(extent, MAX_TASKS, work // TASK_MIN_WORK, row_bytes // COLUMN_TASK_BYTES)) \
        if work >= PARALLEL_MIN_WORK else 1
    chunk = -(-extent // n_tasks)
    n_tasks = -(-extent // chunk)

    def body(tctx: KernelContext, lo, hi) -> None:
        b = tctx.b
        gens = [tctx.operand_generator(k) for k in range(len(inst.operands))]
        if inst.opcode == "fusion":
            all_gens = tctx.em.instruction_generators(inst.attrs["calls"], gens)
            input_gen, init_gen = (all_gens[id(o)] for o in root.operands)
        else:
            input_gen, init_gen = gens
        (out,) = tctx.output_arrays()
        out_split = kept.index(split)
        ranges = {} if lo is None else {split: (lo, hi)}
        out_ranges = {} if lo is None else {out_split: (lo, hi)}
        init = init_gen(scalar_index())
        if out.shape.element_count() == 0:
            return
        with loop_nest(b, out.shape, dim_ranges=out_ranges) as index:
            out.write(b, index, init)
        if in_shape.element_count() == 0:
            return
        # The innermost reduced dimension is walked COLUMN_REDUCE_ROWS rows at
        # a time: the output row is loaded and stored once per group instead
        # of once per input row.  The reducer is still applied row after row,
        # so the result is the same.  The loops are not unrolled: the rows of
        # a group are independent work already, and LLVM's unrolled and
        # epilogue copies cost a quarter of the compile time (sum over axis 0
        # of 4096x4096: 30 -> 23 ms; one thread 2.03 -> 1.77 ms, two the same).
        inner = next(d for d in in_shape.layout.minor_to_major
                     if d in reduced and in_shape.dimensions[d] > 1)
        rows = COLUMN_REDUCE_ROWS
        n = in_shape.dimensions[inner]
        groups = n // rows

        def accumulate(index, row_of):
            out_index = Index([index.multi[d] for d in kept])
            acc = out.read(b, out_index)
            for u in range(rows if row_of is not None else 1):
                multi = list(index.multi)
                if row_of is not None:
                    multi[inner] = row_of(multi[inner], u)
                (acc,) = emit_reducer(tctx.em, root.attrs["to_apply"], [acc],
                                      [input_gen(Index(multi) if row_of is not None else index)])
            out.write(b, out_index, acc)

        if rows > 1 and groups > 0:
            grouped = Shape(in_shape.element_type,
                            tuple(groups if d == inner else x for d, x in enumerate(in_shape.dimensions)),
                            layout=in_shape.layout)
            with loop_nest(b, grouped, dim_ranges=ranges, loop_id=loop_hints(b.module)) as index:
                accumulate(index, lambda g, u: b.add(b.mul(g, i64(rows)), i64(u)) if groups > 1
                           else i64(u))
            ranges = {**ranges, inner: (i64(groups * rows), i64(n))}
            if groups * rows == n:
                return
        with loop_nest(b, in_shape, dim_ranges=ranges, loop_id=loop_hints(b.module)) as index:
            accumulate(index, None)

    if n_tasks == 1:
        body(ctx, None, None)
        return

    def task(tctx: KernelContext, i) -> None:
        body(tctx, *task_range(tctx.b, i, chunk, extent))

    ctx.parallel_for(n_tasks, task)


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


#: A reduction to one value splits into at most this many partial reductions.
MAX_PARTIALS = 16


def _split_reduce(inst: HloInstruction):
    """The root reduce of a kernel that reduces a big input to a single value
    (a sum of everything), or None.  Its output has no dimension to split over
    threads, so the input is split instead (``_emit_split_reduce``)."""
    root = inst.attrs["calls"].root if inst.opcode == "fusion" else inst
    if root.opcode != "reduce" or len(root.operands) != 2 or not root.shape.is_array:
        return None
    in_shape = root.operands[0].shape
    if root.shape.element_count() != 1 or in_shape.element_count() < PARALLEL_MIN_WORK:
        return None
    if in_shape.layout.is_padded:
        return None
    return root


def _emit_split_reduce(ctx: KernelContext) -> None:
    """Partial reductions over slices of the input's major dimension, one per
    task, into a small stack array; then the partials are combined in order.
    The reduce spec lets backends reassociate, and init values are identities."""
    inst = ctx.inst
    root = _split_reduce(inst)
    in_shape = root.operands[0].shape
    pt = root.shape.element_type
    major = next(d for d in reversed(in_shape.layout.minor_to_major) if in_shape.dimensions[d] > 1)
    extent = in_shape.dimensions[major]
    n_tasks = max(1, min(extent, MAX_PARTIALS, in_shape.element_count() // TASK_MIN_WORK))
    chunk = -(-extent // n_tasks)
    n_tasks = -(-extent // chunk)
    reducer = root.attrs["to_apply"]
    partials = ctx.alloca_builder.alloca(types.register_type(pt), size=n_tasks, name="partials")

    def generators(tctx: KernelContext):
        gens = [tctx.operand_generator(k) for k in range(len(inst.operands))]
        if inst.opcode == "fusion":
            all_gens = tctx.em.instruction_generators(inst.attrs["calls"], gens)
            return [all_gens[id(o)] for o in root.operands]
        return gens

    def task(tctx: KernelContext, i) -> None:
        b = tctx.b
        input_gen, init_gen = generators(tctx)
        acc = tctx.alloca_builder.alloca(types.register_type(pt), name="acc")
        b.store(init_gen(scalar_index()), acc)
        # Four vector accumulators and no unrolled copies (the same bits as
        # LLVM's own choice, 1.5 ms less to compile).
        with loop_nest(b, in_shape, dim_ranges={major: task_range(b, i, chunk, extent)},
                       loop_id=loop_hints(b.module, interleave=REDUCTION_INTERLEAVE)) as index:
            (new,) = emit_reducer(tctx.em, reducer, [b.load(acc)], [input_gen(index)])
            b.store(new, acc)
        b.store(b.load(acc), b.gep(tctx.shared[0], [i], source_etype=types.register_type(pt)))

    ctx.parallel_for(n_tasks, task, shared=(partials,))
    b = ctx.b
    _input_gen, init_gen = generators(ctx)
    total = ctx.alloca_builder.alloca(types.register_type(pt), name="total")
    b.store(init_gen(scalar_index()), total)
    with for_range(b, n_tasks, "partial") as k:
        part = b.load(b.gep(partials, [k], source_etype=types.register_type(pt)))
        (new,) = emit_reducer(ctx.em, reducer, [b.load(total)], [part])
        b.store(new, total)
    (out,) = ctx.output_arrays()
    out.write(b, Index([i64(0)] * out.shape.rank), b.load(total))


#: Tile edge (elements) for kernels that read an input transposed.
TRANSPOSE_TILE = 64


def transpose_tiles(inst: HloInstruction, loop_shape: Shape) -> dict | None:
    """Tiles for a kernel that reads an input through a transpose whose minor
    dimension is not the output's: {output minor dim: T, the dim the input's
    minor dim becomes: T}; None otherwise."""
    insts = inst.attrs["calls"].instructions if inst.opcode == "fusion" else [inst]
    out_minor = next((d for d in loop_shape.layout.minor_to_major if loop_shape.dimensions[d] != 1), None)
    for t in insts:
        if t.opcode != "transpose" or t.shape.dimensions != loop_shape.dimensions:
            continue
        src = t.operands[0].shape
        src_minor = next((d for d in src.layout.minor_to_major if src.dimensions[d] != 1), None)
        if src_minor is None or out_minor is None:
            continue
        perm = t.attrs["dimensions"]
        b = perm.index(src_minor)  # the output dimension the input's minor one becomes
        if b != out_minor and min(loop_shape.dimensions[b], loop_shape.dimensions[out_minor]) > TRANSPOSE_TILE:
            return {out_minor: TRANSPOSE_TILE, b: TRANSPOSE_TILE}
    return None


def _emit_loop_body(ctx: KernelContext, loop_shape: Shape, outer_range, min_outer: int | None = None) -> None:
    """The loop nest over ``loop_shape`` (its outermost dimension restricted
    to ``outer_range``, which spans at least ``min_outer`` indices)."""
    b = ctx.b
    outputs = ctx.output_arrays()
    tiles = transpose_tiles(ctx.inst, loop_shape)
    if not tiles and ctx.me.nontemporal and nontemporal.eligible(ctx.inst, outputs, loop_shape):
        _emit_nontemporal_versions(ctx, loop_shape, outer_range, outputs[0], min_outer)
        return
    _emit_loop_nest(ctx, loop_shape, outer_range, tiles, outputs, min_outer)


def _emit_nontemporal_versions(ctx: KernelContext, loop_shape: Shape, outer_range, out: IrArray,
                               min_outer: int | None = None) -> None:
    """A big result's loop nest whose inner loop, when the result is 64-byte
    aligned, writes with non-temporal stores (see codegen/nontemporal.py), and
    otherwise with plain ones.  Only the inner loop is duplicated: the row
    reductions hoisted in front of it are emitted once.  When the module's
    results are promised aligned (``ModuleEmitter.aligned_results``) there is
    only the non-temporal version (softmax compiles in ~10% less time)."""
    b = ctx.b
    gens = [ctx.operand_generator(k) for k in range(len(ctx.inst.operands))]
    gen = ctx.em.make_generator(ctx.inst, gens)
    writes = [nontemporal.write, _write]
    prologues = [lambda bb: nontemporal.assume_aligned(bb, out), None]
    cond = lambda bb, row: nontemporal.row_aligned(bb, out, row)   # noqa: E731
    if ctx.me.aligned_results:
        prologues, cond = prologues[:1], None
        ctx.me.assumed_alignment = True
    with parallel_loops(b.module) as loop_id:
        # Not unrolled: a memory-bound loop gains nothing from it, and the two
        # versions compile in less time (softmax 57 -> 45 ms, same speed).
        inner = _math_hints(b.module, ctx.inst, loop_shape, min_outer, loop_id, unrolled=False)
        for k, index in loop_nest_versions(b, loop_shape, cond, prologues, outer_range=outer_range,
                                           loop_id=loop_id, inner_loop_id=inner):
            writes[k](b, out, index, gen(index))


def _write(b, out: IrArray, index, value) -> None:
    out.write(b, index, value)


#: Opcodes whose vectorised code is a long dependent chain per vector
#: (``Trait.TRANSCENDENTAL``)
#: (polynomials, range reduction): a loop evaluating them runs
#: ``MATH_INTERLEAVE`` vector iterations side by side, so the FMA pipes see
#: independent work (the tanh chain 16M on 2 threads 3.1 -> 2.75 ms).
LONG_MATH = with_trait(Trait.TRANSCENDENTAL)
MATH_INTERLEAVE = 4


def _math_interleave(inst: HloInstruction) -> int | None:
    """``MATH_INTERLEAVE`` when loop kernel ``inst`` evaluates ``LONG_MATH`` in
    its output loop, else None.  Math that only reductions read, or that a
    row scratch holds (softmax's exp), runs in loops of its own, which
    interleave already."""
    if inst.opcode != "fusion":
        return MATH_INTERLEAVE if inst.opcode in LONG_MATH else None
    comp = inst.attrs["calls"]
    for i in comp.instructions:
        if i.opcode in LONG_MATH and row_scratch_dims(i) is None and \
                (i is comp.root or any(u.opcode != "reduce" for u in i.users)):
            return MATH_INTERLEAVE
    return None


def _math_hints(module: ir.Module, inst: HloInstruction, loop_shape: Shape, min_outer, loop_id,
                tiled: bool = False, unrolled: bool = True):
    """``loop_id`` with the hints of ``_math_interleave`` when ``inst`` asks for
    them (as one wide vector when the inner loop's trip count is known), and
    not unrolled when ``unrolled`` is False."""
    interleave = _math_interleave(inst)
    if not interleave and unrolled:
        return loop_id
    order = [d for d in reversed(loop_shape.layout.minor_to_major) if loop_shape.dimensions[d] != 1]
    trip = None
    if order and not tiled:
        trip = min_outer if len(order) == 1 and min_outer is not None else loop_shape.dimensions[order[-1]]
    element_bytes = inst.shape.element_type.byte_size if inst.shape.is_array else None
    return loop_hints(module, interleave=interleave, base=loop_id, element_bytes=element_bytes,
                      trip_count=trip)


def _emit_loop_nest(ctx: KernelContext, loop_shape: Shape, outer_range, tiles, outputs,
                    min_outer: int | None = None) -> None:
    b = ctx.b
    gens = [ctx.operand_generator(k) for k in range(len(ctx.inst.operands))]
    gen = ctx.em.make_generator(ctx.inst, gens)
    with parallel_loops(b.module) as loop_id:
        loop_id = _math_hints(b.module, ctx.inst, loop_shape, min_outer, loop_id, tiled=bool(tiles))
        nest = (tiled_loop_nest(b, loop_shape, tiles, outer_range=outer_range, loop_id=loop_id) if tiles
                else loop_nest(b, loop_shape, outer_range=outer_range, loop_id=loop_id))
        with nest as index:
            value = gen(index)
            values = value if isinstance(value, tuple) else (value,)
            for out, v in zip(outputs, values):
                out.write(b, index, v)


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


def _fill_padding(b: ir.IRBuilder, array: IrArray) -> None:
    """Write the padding value over a padded buffer (the logical elements follow)."""
    shape = array.shape
    if not shape.layout.is_padded or shape.buffer_element_count() == shape.element_count():
        return
    value = types.constant(shape.element_type, padding_scalar(shape))
    ety = types.memory_type(shape.element_type)
    with for_range(b, shape.buffer_element_count(), "pad") as i:
        ptr = b.gep(array.ptr, [i], inbounds=True, source_etype=ety)
        types.store_element(b, value, ptr, shape.element_type)


def _sanitize(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in name) or "x"


def _unique(name: str, used: set) -> str:
    return fresh_name(name, used)
