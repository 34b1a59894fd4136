"""``custom-call`` of a target the caller provides: a call through ``opts->custom_call``.

The kernel fills an ``xlac_custom_call_op`` on its stack (ABI version 4,
``runtime/xlac_runtime.h``): the target's name, the instruction's name and
API version, whether the result is a tuple, the operand and result buffers
with their shapes as HLO text (laid out as the op-expander's custom-call rule
made them: the operand layout constraints, else row-major; the result as the
instruction says), the opaque bytes (``backend_config``) and a message buffer
— and calls ``opts->custom_call(opts->runtime_ctx, &op)``.  A failure status
is passed on to ``opts->report_error`` with the service's message (or one
naming the target when it wrote none).  No run options, a run-options
struct older than version 4 or no service: the call is reported (as
``XLAC_ERROR_MISSING_SERVICE`` / ``XLAC_ERROR_ABI_MISMATCH``) and not made.

Under ``xlac.jit`` the service is ``xlac.runtime.custom_call_service`` (the
targets of ``xlac.register_custom_call``); an AOT program provides its own,
or ``xlac_custom_call_dispatch`` of ``runtime/xlac_runtime.c``.  jax's LAPACK
targets never come here: ``kernels/lapack.py`` calls LAPACK itself.
"""
from __future__ import annotations

import ctypes

from llvmlite import ir

from ... import custom_calls
from ...hlo import custom_call as hcc
from ...runtime import abi
from ..emitter import KernelContext, TypedCallee
from ..ir_array import i64
from ..kernel_choice import KernelCandidate
from .run_options import field_index, global_bytes, global_string, report, store_struct_field

PTR = ir.PointerType()
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)

#: The ABI version whose ``custom_call`` takes an ``xlac_custom_call_op``.
CUSTOM_CALL_ABI_VERSION = 4


def _global_pointers(me, name: str, values: list) -> ir.Value:
    if not values:
        return ir.Constant(PTR, None)
    ty = ir.ArrayType(PTR, len(values))
    g = ir.GlobalVariable(me.llvm, ty, me.unique_name(name))
    g.initializer = ir.Constant(ty, values)
    g.global_constant = True
    g.linkage = "private"
    return g


def _pointer_array(ctx: KernelContext, pointers: list) -> ir.Value:
    if not pointers:
        return ir.Constant(PTR, None)
    arr = ctx.alloca_builder.alloca(PTR, size=len(pointers))
    for k, p in enumerate(pointers):
        ctx.b.store(p, ctx.b.gep(arr, [i64(k)], source_etype=PTR))
    return arr


def _emit_service_call(ctx: KernelContext) -> None:
    b, me, inst = ctx.b, ctx.me, ctx.inst
    info = custom_calls.call_info(inst)
    ctx.long_running = True
    label = f"custom call target {info.target!r} (instruction {inst.name})"
    opts = ctx.opts_arg
    no_opts = b.icmp_unsigned("==", opts, ir.Constant(PTR, None))
    with b.if_then(no_opts, likely=False):
        b.ret_void()                     # nothing to call and nobody to tell (xlac_check_options says so)
    version = b.load(opts, typ=I64)
    with b.if_then(b.icmp_signed("<", version, i64(CUSTOM_CALL_ABI_VERSION)), likely=False):
        report(ctx, abi.XLAC_ERROR_ABI_MISMATCH,
               f"{label} needs xlac_run_options of ABI version >= {CUSTOM_CALL_ABI_VERSION}")
        b.ret_void()
    fn = b.load(b.gep(opts, [i64(field_index("custom_call"))], source_etype=I64), typ=PTR)
    with b.if_then(b.icmp_unsigned("==", fn, ir.Constant(PTR, None)), likely=False):
        report(ctx, abi.XLAC_ERROR_MISSING_SERVICE,
               f"{label} needs the custom-call service, which the caller did not provide "
               "(xlac_run_options.custom_call)")
        b.ret_void()

    op = ctx.alloca_builder.alloca(ir.ArrayType(I8, ctypes.sizeof(abi.CustomCallOp)), name="custom_call.op")
    op.align = 8
    message = ctx.alloca_builder.alloca(ir.ArrayType(I8, abi.CUSTOM_CALL_MESSAGE_MAX), name="custom_call.error")
    b.store(ir.Constant(I8, 0), b.gep(message, [i64(0), i64(0)], inbounds=True))
    arrays = [ctx.operand_array(k) for k in range(len(inst.operands))]
    for k, (a, want) in enumerate(zip(arrays, info.operand_shapes)):
        if a.shape != want:     # the op-expander lays operands out as the target reads them
            raise AssertionError(f"{inst.name}: operand {k} is {a.shape} in memory, the target reads {want}")
    operands = [a.ptr for a in arrays]
    results = [a.ptr for a in ctx.output_arrays()]
    opaque = global_bytes(me, "custom_call.opaque", bytes(info.opaque) + b"\0")
    fields = [
        ("target", global_string(me, "custom_call.target", info.target)),
        ("instruction", global_string(me, "custom_call.name", inst.name)),
        ("api_version", ir.Constant(I32, info.api_version)),
        ("result_is_tuple", ir.Constant(I32, int(info.result_is_tuple))),
        ("num_operands", i64(len(operands))),
        ("operands", _pointer_array(ctx, operands)),
        ("operand_shapes", _global_pointers(me, "custom_call.operand_shapes",
                                            [global_string(me, "custom_call.shape", str(s))
                                             for s in info.operand_shapes])),
        ("num_results", i64(len(results))),
        ("results", _pointer_array(ctx, results)),
        ("result_shapes", _global_pointers(me, "custom_call.result_shapes",
                                           [global_string(me, "custom_call.shape", str(s))
                                            for s in info.result_shapes])),
        ("opaque", opaque),
        ("opaque_len", i64(len(info.opaque))),
        ("error", b.gep(message, [i64(0), i64(0)], inbounds=True)),
        ("error_capacity", i64(abi.CUSTOM_CALL_MESSAGE_MAX)),
    ]
    for name, value in fields:
        store_struct_field(b, op, abi.CustomCallOp, name, value)
    runtime_ctx = b.load(b.gep(opts, [i64(field_index("runtime_ctx"))], source_etype=I64), typ=PTR)
    status = b.call(TypedCallee(fn, ir.FunctionType(I32, [PTR, PTR])), [runtime_ctx, op])
    with b.if_then(b.icmp_signed("!=", status, ir.Constant(I32, 0)), likely=False):
        written = b.gep(message, [i64(0), i64(0)], inbounds=True)
        with b.if_else(b.icmp_unsigned("!=", b.load(written, typ=I8), ir.Constant(I8, 0))) as (said, silent):
            with said:
                report(ctx, abi.XLAC_ERROR_SERVICE_FAILED, written)
            with silent:
                report(ctx, abi.XLAC_ERROR_SERVICE_FAILED, f"{label} failed")
        b.ret_void()


def _applies(inst) -> str | None:
    if hcc.is_builtin(hcc.target_of(inst)):
        return "a target xlac provides (kernels/lapack.py)"
    return None


#: A target of the caller's, through ``opts->custom_call``.
SERVICE_CALL = KernelCandidate("custom-call.service", _emit_service_call, _applies)
