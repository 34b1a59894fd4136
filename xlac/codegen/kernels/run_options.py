"""Generated code asking the caller's ``xlac_run_options``: reading a field,
calling a service, reporting a failure (``runtime/xlac_runtime.h``).

A kernel that calls a service (collectives, infeed, outfeed) gets it with
:func:`service_or_return`: when ``opts`` is NULL there is nobody to tell and
the kernel returns; when the service is NULL it reports
``XLAC_ERROR_MISSING_SERVICE`` through ``opts->report_error``, naming the
instruction, and returns.  After a failed call it :func:`report`\\ s and
returns too; the caller's cancellation check after a long-running kernel then
ends the call (the results are unspecified, as the header says).
"""
from __future__ import annotations

from llvmlite import ir

from ...runtime import abi
from ..emitter import KernelContext, TypedCallee
from ..ir_array import i64

PTR = ir.PointerType()
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)

__all__ = ["field_index", "load_field", "global_bytes", "global_string", "report", "service_or_return",
           "return_unless_ok"]


def field_index(name: str) -> int:
    """Index of an ``xlac_run_options`` field, all fields being 8 bytes."""
    return getattr(abi.RunOptions, name).offset // 8


def load_field(ctx: KernelContext, name: str, typ=PTR) -> ir.Value:
    """``opts->name`` (``opts`` must be known non-NULL here)."""
    b = ctx.b
    return b.load(b.gep(ctx.opts_arg, [i64(field_index(name))], source_etype=I64), typ=typ)


def store_struct_field(b: ir.IRBuilder, struct: ir.Value, layout, name: str, value: ir.Value) -> None:
    """``struct->name = value`` for a stack copy of the ctypes structure
    ``layout`` (``abi.CollectiveOp``, ``abi.CustomCallOp``); pointers are
    stored as their addresses."""
    field = b.gep(struct, [i64(0), i64(getattr(layout, name).offset)], inbounds=True)
    if isinstance(value.type, ir.PointerType):
        value = b.ptrtoint(value, ir.IntType(64))
    b.store(value, b.bitcast(field, value.type.as_pointer()))


def global_bytes(me, base: str, data: bytes) -> ir.Value:
    """A private constant byte array of the module (``me``: its ModuleEmitter)."""
    ty = ir.ArrayType(I8, max(len(data), 1))
    g = ir.GlobalVariable(me.llvm, ty, me.unique_name(base))
    g.initializer = ir.Constant(ty, bytearray(data or b"\0"))
    g.global_constant = True
    g.linkage = "private"
    return g


def global_string(me, base: str, text: str) -> ir.Value:
    """A private constant NUL-terminated UTF-8 string."""
    return global_bytes(me, base, text.encode("utf-8") + b"\0")


def report(ctx: KernelContext, status, message) -> None:
    """``opts->report_error(opts->runtime_ctx, status, message)`` when ``opts``
    and the callback are there (``message``: text, or a pointer to a C string
    made at run time)."""
    b = ctx.b
    with b.if_then(b.icmp_unsigned("!=", ctx.opts_arg, ir.Constant(PTR, None))):
        fn = load_field(ctx, "report_error")
        with b.if_then(b.icmp_unsigned("!=", fn, ir.Constant(PTR, None))):
            text = global_string(ctx.me, "service.error", message) if isinstance(message, str) else message
            status = status if isinstance(status, ir.Value) else ir.Constant(I32, status)
            b.call(TypedCallee(fn, ir.FunctionType(ir.VoidType(), [PTR, I32, PTR])),
                   [load_field(ctx, "runtime_ctx"), status, text])


def service_or_return(ctx: KernelContext, name: str, missing: str) -> ir.Value:
    """``opts->name``; the kernel returns first when ``opts`` is NULL, or
    reports ``missing`` (XLAC_ERROR_MISSING_SERVICE) when the service is NULL."""
    b = ctx.b
    with b.if_then(b.icmp_unsigned("==", ctx.opts_arg, ir.Constant(PTR, None)), likely=False):
        b.ret_void()            # no run options at all: nothing to call, nobody to tell
    fn = load_field(ctx, name)
    with b.if_then(b.icmp_unsigned("==", fn, ir.Constant(PTR, None)), likely=False):
        report(ctx, abi.XLAC_ERROR_MISSING_SERVICE, missing)
        b.ret_void()
    return fn


def return_unless_ok(ctx: KernelContext, status: ir.Value, message: str | None = None) -> None:
    """Return from the kernel when a service's ``status`` is not XLAC_OK,
    reporting ``message`` first when given."""
    b = ctx.b
    with b.if_then(b.icmp_signed("!=", status, ir.Constant(I32, abi.XLAC_OK)), likely=False):
        if message is not None:
            report(ctx, status, message)
        b.ret_void()
