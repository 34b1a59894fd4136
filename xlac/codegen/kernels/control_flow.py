"""Kernels that run other computations: ``while``, ``conditional`` and ``call``.

Every computation they run is its own function (``ModuleEmitter.function_for``)
with the entry ABI ``f(results, params, temp, opts)``: tuple parameters are
flattened into consecutive ``params`` slots, tuple results into consecutive
``results`` slots.  The callee's own temp arena lives in the caller's scratch
space (``scratch_bytes`` asks ``assignment_for(callee).temp_size``).

``while``: the loop state is a list of array leaves.  When the body's buffer
assignment updates the state in place (``BufferAssignment.state_in_place``: a
body called only by while loops whose root keeps each state leaf in its
position, what JAX emits), the body gets the same buffers as parameters and
results: the while's result buffers, or a scratch copy of a leaf laid out
otherwise there (copied back at the end).  Passed-through leaves then cost
nothing per iteration and a scan's ``dynamic-update-slice`` writes only its
slice.  Otherwise, when the body's parameter, the body's result, the
condition's parameter and the while's result all lay each leaf out alike, the
state ping-pongs between the while's result buffers and one scratch copy: the
body reads one set and writes the other (copying its pass-through leaves); the
final state is copied to the result buffers if it ended in the scratch set.
Otherwise the state lives in scratch in the body's parameter layout and is
converted where layouts differ.  The condition reads the state in its own
layout (converted into scratch where it differs).

``conditional``: the selector picks one branch (``pred``: true runs branch 0;
``s32``: an index outside ``[0, N)`` runs the last branch); only that branch
runs, with its own operand, writing the conditional's result buffers.

``call`` (in computations that are not inlined, e.g. a while body): the callee
runs once with the operands as parameters.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...hlo.ir import HloComputation, HloInstruction
from ...shape import PRED, Shape
from .. import types
from ..emitter import cancel_requested
from ..ir_array import IrArray, scalar_index
from ..kernel_choice import KernelCandidate
from ._util import ScratchPlan, copy_array, leaf_shapes


# ----------------------------------------------------------------------------
# Shapes of buffers and parameters
# ----------------------------------------------------------------------------

def _leaf_count(shape: Shape) -> int:
    return len(shape.leaves()) if shape.is_tuple else 1


def _defining(inst: HloInstruction, leaf: int) -> tuple[HloInstruction, int]:
    """The instruction (and its leaf) whose buffer holds ``leaf`` of ``inst``
    (through tuple / get-tuple-element, as buffer assignment does)."""
    while inst.opcode in ("tuple", "get-tuple-element"):
        if inst.opcode == "tuple":
            for op in inst.operands:
                n = _leaf_count(op.shape)
                if leaf < n:
                    inst = op
                    break
                leaf -= n
        else:
            src = inst.operands[0]
            leaf += sum(_leaf_count(s) for s in src.shape.tuple_shapes[:inst.attrs["index"]])
            inst = src
    return inst, leaf


def _buffer_shape(inst: HloInstruction, leaf: int) -> Shape:
    src, k = _defining(inst, leaf)
    return leaf_shapes(src.shape)[k]


def _param_leaf_shapes(comp: HloComputation) -> list[Shape]:
    return [s for p in comp.parameters for s in leaf_shapes(p.shape)]


def _check_arrays(opcode: str, shapes: list[Shape]) -> None:
    """Arrays, and tokens (leaves of no bytes: ordering only, nothing to move)."""
    for s in shapes:
        if not (s.is_array or s.is_token):   # a token leaf has no data: nothing to move
            raise UnsupportedError(opcode, f"{s} values in the computation's parameters or results")


class _TokenLeaf:
    """A token leaf of a state, parameter or result: no bytes and no buffer
    (it only orders side effects); passed as a null pointer, never copied."""

    def __init__(self, shape: Shape):
        self.shape = shape
        self.ptr = ir.Constant(ir.PointerType(), None)


def _leaf(ptr: ir.Value, shape: Shape):
    """The buffer at ``ptr`` of a leaf of ``shape``: an IrArray, or a token's no-buffer."""
    return IrArray(ptr, shape) if shape.is_array else _TokenLeaf(shape)


def _operand_leaf(ctx, op: HloInstruction, leaf: int):
    if leaf_shapes(op.shape)[leaf].is_token:
        return _TokenLeaf(leaf_shapes(op.shape)[leaf])
    return ctx.me.leaf_array(ctx.b, ctx.args, ctx.assignment, op, leaf)


def _outputs(ctx) -> list:
    """The instruction's result leaves (tokens as no-buffers)."""
    out = []
    for leaf, shape in enumerate(leaf_shapes(ctx.inst.shape)):
        out.append(_TokenLeaf(shape) if shape.is_token
                   else IrArray(ctx.buffer_pointer(ctx.assignment.slice_of(ctx.inst, leaf)), shape))
    return out


def _copy(b, dst, src) -> None:
    if isinstance(dst, IrArray):
        copy_array(b, dst, src)


class _Invocation:
    """One call of ``comp`` with ``operands`` as its parameters (in parameter
    order), writing results of shapes ``out_shapes``.  Where a buffer's layout
    differs from what the callee expects, a converted copy goes through
    scratch regions named with ``tag``."""

    def __init__(self, opcode: str, comp: HloComputation, operands: list[HloInstruction],
                 out_shapes: list[Shape], tag: str):
        self.comp, self.operands, self.tag = comp, operands, tag
        self.param_shapes = _param_leaf_shapes(comp)
        self.in_shapes = [_buffer_shape(op, k) for op in operands for k in range(_leaf_count(op.shape))]
        self.result_shapes = leaf_shapes(comp.root.shape)
        self.out_shapes = out_shapes
        _check_arrays(opcode, self.param_shapes + self.in_shapes + self.result_shapes + out_shapes)
        if len(self.in_shapes) != len(self.param_shapes) or len(self.result_shapes) != len(out_shapes):
            raise UnsupportedError(opcode, f"operands/results of {comp.name} do not match its signature")

    def plan(self, plan: ScratchPlan) -> None:
        for k, (have, want) in enumerate(zip(self.in_shapes, self.param_shapes)):
            if have != want:
                plan.add(f"{self.tag}.in{k}", want.byte_size())
        for k, (have, want) in enumerate(zip(self.result_shapes, self.out_shapes)):
            if have != want:
                plan.add(f"{self.tag}.out{k}", have.byte_size())

    def emit(self, ctx, plan: ScratchPlan, scratch: ir.Value, outs: list[IrArray],
             temp: ir.Value) -> None:
        b = ctx.b
        params = []
        k = 0
        for op_number, op in enumerate(self.operands):
            for leaf in range(_leaf_count(op.shape)):
                src = _operand_leaf(ctx, op, leaf)
                name = f"{self.tag}.in{k}"
                if name in plan:
                    dst = IrArray(plan.pointer(b, scratch, name), self.param_shapes[k])
                    copy_array(b, dst, src)
                    src = dst
                params.append(src.ptr)
                k += 1
        results, converted = [], []
        for k, out in enumerate(outs):
            name = f"{self.tag}.out{k}"
            if name in plan:
                tmp = IrArray(plan.pointer(b, scratch, name), self.result_shapes[k])
                results.append(tmp.ptr)
                converted.append((out, tmp))
            else:
                results.append(out.ptr)
        ctx.call_computation(self.comp, results, params, temp)
        for out, tmp in converted:
            copy_array(b, out, tmp)


def _temp_size(me, comps) -> int:
    return max([me.assignment_for(c).temp_size for c in comps] + [0])


# ----------------------------------------------------------------------------
# call
# ----------------------------------------------------------------------------

def _call_plan(me, inst: HloInstruction):
    comp = inst.attrs["to_apply"]
    inv = _Invocation("call", comp, list(inst.operands), leaf_shapes(inst.shape), "call")
    plan = ScratchPlan()
    inv.plan(plan)
    plan.add("temp", _temp_size(me, [comp]))
    return plan, inv


def _emit_call(ctx) -> None:
    plan, inv = _call_plan(ctx.me, ctx.inst)
    scratch = ctx.scratch_pointer()
    inv.emit(ctx, plan, scratch, _outputs(ctx), plan.pointer(ctx.b, scratch, "temp"))


# ----------------------------------------------------------------------------
# conditional
# ----------------------------------------------------------------------------

def _branches(inst: HloInstruction) -> list[HloComputation]:
    a = inst.attrs
    if "branch_computations" in a:
        return list(a["branch_computations"])
    return [a["true_computation"], a["false_computation"]]


def _conditional_plan(me, inst: HloInstruction):
    branches = _branches(inst)
    if len(inst.operands) != len(branches) + 1:
        raise UnsupportedError("conditional", f"{len(branches)} branches need {len(branches) + 1} "
                                              f"operands, got {len(inst.operands)}")
    outs = leaf_shapes(inst.shape)
    invs = [_Invocation("conditional", comp, [inst.operands[b + 1]], outs, f"b{b}")
            for b, comp in enumerate(branches)]
    plan = ScratchPlan()
    for inv in invs:
        inv.plan(plan)
    plan.add("temp", _temp_size(me, branches))
    return plan, invs


def _emit_conditional(ctx) -> None:
    inst, b = ctx.inst, ctx.b
    plan, invs = _conditional_plan(ctx.me, inst)
    scratch = ctx.scratch_pointer()
    temp = plan.pointer(b, scratch, "temp")
    outs = _outputs(ctx)
    selector = ctx.operand_generator(0)(scalar_index())
    selector_type = inst.operands[0].shape.element_type
    after = b.append_basic_block("cond.after")
    blocks = [b.append_basic_block(f"cond.branch{k}") for k in range(len(invs))]
    if selector_type is PRED:
        b.cbranch(selector, blocks[0], blocks[1])
    else:
        # An index outside [0, N) runs the last branch (the switch's default).
        switch = b.switch(selector, blocks[-1])
        for k in range(len(invs) - 1):
            switch.add_case(ir.Constant(selector.type, k), blocks[k])
    for block, inv in zip(blocks, invs):
        b.position_at_end(block)
        inv.emit(ctx, plan, scratch, outs, temp)
        b.branch(after)
    b.position_at_end(after)


# ----------------------------------------------------------------------------
# while
# ----------------------------------------------------------------------------

def _while_plan(me, inst: HloInstruction):
    cond, body = inst.attrs["condition"], inst.attrs["body"]
    state = _param_leaf_shapes(body)
    cond_in = _param_leaf_shapes(cond)
    body_out = leaf_shapes(body.root.shape)
    outs = leaf_shapes(inst.shape)
    _check_arrays("while", state + cond_in + body_out + outs)
    if not (len(state) == len(cond_in) == len(body_out) == len(outs)):
        raise UnsupportedError("while", "condition, body and state disagree on the state's leaves")
    cond_root = cond.root.shape
    if not (cond_root.is_array and cond_root.element_type is PRED and cond_root.rank == 0):
        raise UnsupportedError("while", f"condition returning {cond_root}")
    in_place = me.assignment_for(body).state_in_place
    fast = not in_place and all(s == c == r == o for s, c, r, o in zip(state, cond_in, body_out, outs))
    plan = ScratchPlan()
    for k in range(len(state)):
        if fast:
            plan.add(f"alt{k}", state[k].byte_size())
            continue
        if not in_place or outs[k] != state[k]:
            plan.add(f"state{k}", state[k].byte_size())
        if not in_place:
            plan.add(f"next{k}", body_out[k].byte_size())
        if cond_in[k] != state[k]:
            plan.add(f"cin{k}", cond_in[k].byte_size())
    plan.add("pred", 1)
    plan.add("temp", _temp_size(me, [cond, body]))
    return plan, in_place, fast, state, cond_in, body_out


def _emit_while(ctx) -> None:
    inst, b = ctx.inst, ctx.b
    cond, body = inst.attrs["condition"], inst.attrs["body"]
    plan, in_place, fast, state_shapes, cond_shapes, body_shapes = _while_plan(ctx.me, inst)
    scratch = ctx.scratch_pointer()
    temp = plan.pointer(b, scratch, "temp")
    pred_ptr = plan.pointer(b, scratch, "pred")
    outs = _outputs(ctx)
    inits = [_operand_leaf(ctx, inst.operands[0], k) for k in range(len(outs))]
    n = len(outs)

    head = b.append_basic_block("while.head")
    check = b.append_basic_block("while.cond")
    run_body = b.append_basic_block("while.body")
    done = b.append_basic_block("while.done")
    ctx.long_running = True

    def stop_if_cancelled():
        # Every iteration: a loop that never ends still stops on Ctrl-C.
        b.cbranch(cancel_requested(b, ctx.opts_arg), done, check)
        b.position_at_end(check)

    if fast:
        alts = [_leaf(plan.pointer(b, scratch, f"alt{k}"), state_shapes[k]) for k in range(n)]
        for out, init in zip(outs, inits):
            _copy(b, out, init)
        # parity false: the state is in the result buffers; true: in the scratch set.
        parity = ctx.alloca_builder.alloca(ir.IntType(1), name="while.parity")
        b.store(ir.Constant(ir.IntType(1), 0), parity)
        b.branch(head)

        b.position_at_end(head)
        stop_if_cancelled()
        p = b.load(parity)
        current = [b.select(p, a.ptr, o.ptr) for a, o in zip(alts, outs)]
        following = [b.select(p, o.ptr, a.ptr) for a, o in zip(alts, outs)]
        ctx.call_computation(cond, [pred_ptr], current, temp)
        b.cbranch(types.load_element(b, pred_ptr, PRED), run_body, done)

        b.position_at_end(run_body)
        ctx.call_computation(body, following, current, temp)
        b.store(b.not_(p), parity)
        b.branch(head)

        b.position_at_end(done)
        with b.if_then(b.load(parity)):
            for out, alt in zip(outs, alts):
                _copy(b, out, alt)
        return

    # The state in the body's layout: in the result buffers where they have it.
    states = [_leaf(plan.pointer(b, scratch, f"state{k}"), state_shapes[k]) if f"state{k}" in plan
              else outs[k] for k in range(n)]
    nexts = states if in_place else [_leaf(plan.pointer(b, scratch, f"next{k}"), body_shapes[k])
                                     for k in range(n)]
    for state, init in zip(states, inits):
        _copy(b, state, init)
    b.branch(head)

    b.position_at_end(head)
    stop_if_cancelled()
    cond_params = []
    for k, state in enumerate(states):
        if f"cin{k}" in plan:
            cin = IrArray(plan.pointer(b, scratch, f"cin{k}"), cond_shapes[k])
            _copy(b, cin, state)
            cond_params.append(cin.ptr)
        else:
            cond_params.append(state.ptr)
    ctx.call_computation(cond, [pred_ptr], cond_params, temp)
    b.cbranch(types.load_element(b, pred_ptr, PRED), run_body, done)

    b.position_at_end(run_body)
    ctx.call_computation(body, [a.ptr for a in nexts], [s.ptr for s in states], temp)
    if not in_place:
        for state, nxt in zip(states, nexts):
            _copy(b, state, nxt)
    b.branch(head)

    b.position_at_end(done)
    for out, state in zip(outs, states):
        if state is not out:
            _copy(b, out, state)


#: The kernel candidates of this module (``kernels.register_all``).  Shareable:
#: they reach their buffers through the context and pass the computations
#: they run pointers only (``kernel_sharing``: the same computations, by name,
#: are part of the key); a computation inlined at several call sites of a
#: training step repeats its loops (jax's random bits: a Threefry ``while``
#: per key split).
CALL = KernelCandidate("call", _emit_call,
                       scratch_bytes=lambda me, inst: _call_plan(me, inst)[0].size, shareable=True)
CONDITIONAL = KernelCandidate("conditional", _emit_conditional,
                              scratch_bytes=lambda me, inst: _conditional_plan(me, inst)[0].size, shareable=True)
WHILE = KernelCandidate("while", _emit_while,
                        scratch_bytes=lambda me, inst: _while_plan(me, inst)[0].size, shareable=True)
