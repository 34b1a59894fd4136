"""LLVM types of XLA element types, and loading/storing/constants of one element.

Two views of an element type:

* ``memory_type``: how one element is laid out in a buffer (what numpy stores).
* ``register_type``: the type of a value while the code computes with it.

They differ only for ``pred`` (a byte in memory, ``i1`` in registers).

Conventions (the rest of ``xlac/codegen`` relies on them):

=========  ==================  =================  ===========================================
type       memory              register           note
=========  ==================  =================  ===========================================
pred       i8 (0/1)            i1                 a load treats any non-zero byte as true
sN / uN    iN                  iN                 signedness lives in the PrimitiveType only
f16        half                half               arithmetic is done in f32 (scalar_ops)
bf16       i16 (raw bits)      i16 (raw bits)     LLVM's ``bfloat`` is avoided: its
                                                  conversions may become libcalls
f32 / f64  float / double      float / double
c64        {float, float}      {float, float}     layout of numpy complex64 (real, imag)
c128       {double, double}    {double, double}   layout of numpy complex128
=========  ==================  =================  ===========================================
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from xlac.errors import UnsupportedError
from xlac.shape import PrimitiveType as PT

_I1 = ir.IntType(1)
_I8 = ir.IntType(8)

_MEMORY_TYPES: dict = {
    PT.PRED: _I8,
    PT.S8: ir.IntType(8), PT.S16: ir.IntType(16), PT.S32: ir.IntType(32), PT.S64: ir.IntType(64),
    PT.U8: ir.IntType(8), PT.U16: ir.IntType(16), PT.U32: ir.IntType(32), PT.U64: ir.IntType(64),
    PT.F16: ir.HalfType(),
    PT.BF16: ir.IntType(16),
    PT.F32: ir.FloatType(),
    PT.F64: ir.DoubleType(),
    PT.C64: ir.LiteralStructType([ir.FloatType(), ir.FloatType()]),
    PT.C128: ir.LiteralStructType([ir.DoubleType(), ir.DoubleType()]),
}


def memory_type(pt: PT) -> ir.Type:
    """The LLVM type one element of ``pt`` has in a buffer."""
    try:
        return _MEMORY_TYPES[pt]
    except KeyError:
        raise UnsupportedError(f"element type {pt.value}", "has no LLVM representation") from None


def register_type(pt: PT) -> ir.Type:
    """The LLVM type of a value of ``pt`` in registers (``i1`` for pred)."""
    return _I1 if pt is PT.PRED else memory_type(pt)


def _alignment(pt: PT) -> int:
    # Complex numbers only need their component's alignment (numpy aligns complex128
    # to 8, not 16), so claiming more could fault on a view of a numpy array.
    return pt.component_type.byte_size


def load_element(builder: ir.IRBuilder, ptr: ir.Value, pt: PT) -> ir.Value:
    """Load one element of ``pt`` from ``ptr``; returns it in register type."""
    value = builder.load(ptr, typ=memory_type(pt), align=_alignment(pt))
    if pt is PT.PRED:
        # Any non-zero byte is true: robust against buffers written by other code.
        value = builder.icmp_unsigned("!=", value, ir.Constant(_I8, 0))
    return value


def store_element(builder: ir.IRBuilder, value: ir.Value, ptr: ir.Value, pt: PT) -> None:
    """Store a register-type ``value`` of ``pt`` to ``ptr`` (pred as a 0/1 byte)."""
    if pt is PT.PRED:
        value = builder.zext(value, _I8)
    builder.store(value, ptr, align=_alignment(pt))


def constant(pt: PT, value) -> ir.Constant:
    """An ``ir.Constant`` of register type holding ``value`` (a Python or numpy scalar).

    Floats are rounded to ``pt`` first (f32 constants hold the f32-rounded value);
    NaN and infinities are fine. bf16 is the i16 of its bits; complex a struct.
    """
    if pt is PT.PRED:
        return ir.Constant(_I1, int(bool(value)))
    if pt.is_integral:
        bits = pt.bit_width
        v = int(value) & ((1 << bits) - 1)          # two's complement of the value
        if v >= 1 << (bits - 1):
            v -= 1 << bits                            # print as a signed literal
        return ir.Constant(register_type(pt), v)
    if pt is PT.BF16:
        raw = np.asarray(value, dtype=pt.dtype).reshape(()).view(np.uint16)
        return constant(PT.S16, int(raw))
    if pt.is_float:
        # Round to the element type, then widen exactly to a Python float (which
        # llvmlite prints as the hex double LLVM expects for any float type).
        return ir.Constant(register_type(pt), float(np.asarray(value, dtype=pt.dtype)))
    if pt.is_complex:
        c = complex(np.asarray(value, dtype=pt.dtype))
        part = pt.component_type
        return ir.Constant(register_type(pt), [constant(part, c.real), constant(part, c.imag)])
    raise UnsupportedError(f"constant of {pt.value}")


def accumulation_type(pt: PT) -> PT:
    """The type a sum of products of ``pt`` (a dot, a convolution) accumulates
    in: f32 for the half-precision floats, rounded to ``pt`` once at the end,
    as XLA's CPU backend computes such dots in f32; ``pt`` otherwise."""
    return PT.F32 if pt in (PT.F16, PT.BF16) else pt
