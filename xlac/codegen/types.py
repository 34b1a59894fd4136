"""LLVM types of XLA element types, and loading/storing/constants of one element.

Two views of an element type:

* ``memory_type``: how one element is laid out in a buffer (what numpy stores).
* ``register_type``: the type of a value while the code computes with it.

They differ for ``pred`` and the sub-byte integers (a byte in memory, ``i1``..``i4``
in registers).

Conventions (the rest of ``xlac/codegen`` relies on them):

=========  ==================  =================  ===========================================
type       memory              register           note
=========  ==================  =================  ===========================================
pred       i8 (0/1)            i1                 a load treats any non-zero byte as true
sN / uN    iN                  iN                 signedness lives in the PrimitiveType only
s1..s4,    i8 (low N bits,     i1, i2, i4         one element per byte as ml_dtypes and
u1..u4     upper bits zero)                       XLA:CPU store them; a load ignores the
                                                  upper bits, a store clears them
f16        half                half               arithmetic is done in f32 (scalar_ops)
bf16       i16 (raw bits)      i16 (raw bits)     LLVM's ``bfloat`` is avoided: its
                                                  conversions may become libcalls
f8 types   i8 (raw bits)       i8 (raw bits)      computed in f32, like bf16
f4e2m1fn   i8 (low 4 bits)     i8 (raw bits)      a load masks the upper bits off
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
    **{pt: _I8 for pt in PT if pt.is_sub_byte or pt.float_format is not None},
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
    """The LLVM type of a value of ``pt`` in registers (``i1`` for pred, ``iN``
    for an N-bit integer, the raw bits for bf16 and the f8/f4 types)."""
    if pt is PT.PRED:
        return _I1
    if pt.is_sub_byte and pt.is_integral:
        return ir.IntType(pt.bit_width)
    return memory_type(pt)


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
    elif pt.is_sub_byte:
        # Only the low bits count, whatever the upper bits hold.
        ty = register_type(pt)
        value = builder.trunc(value, ty) if ty != _I8 else builder.and_(value, ir.Constant(_I8, (1 << pt.bit_width) - 1))
    return value


def store_element(builder: ir.IRBuilder, value: ir.Value, ptr: ir.Value, pt: PT) -> None:
    """Store a register-type ``value`` of ``pt`` to ``ptr`` (pred as a 0/1 byte)."""
    if pt is PT.PRED or (pt.is_sub_byte and value.type != _I8):
        value = builder.zext(value, _I8)          # upper bits zero, as ml_dtypes stores them
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
    if pt.is_float:
        # From the bits of the value rounded to the element type, so that NaN
        # payloads and the sign of a NaN stay as they are.
        arr = np.asarray(value)
        arr = arr if arr.dtype == pt.dtype else arr.astype(pt.dtype)
        raw = int(arr.reshape(()).view(_BITS_DTYPE[pt.byte_size]))
        ty = register_type(pt)
        if isinstance(ty, ir.IntType):                 # bf16, f8, f4: the bits themselves
            return ir.Constant(ty, raw)
        return _float_constant_from_bits(ty, raw, pt.bit_width)
    if pt.is_complex:
        c = np.asarray(value, dtype=pt.dtype)                 # numpy's parts keep a NaN's bits
        part = pt.component_type
        return ir.Constant(register_type(pt), [constant(part, c.real), constant(part, c.imag)])
    raise UnsupportedError(f"constant of {pt.value}")


_BITS_DTYPE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _float_constant_from_bits(ty: ir.Type, raw: int, width: int) -> ir.Constant:
    """A half/float/double constant with exactly the bits ``raw``.

    Finite values and plain infinities go through a Python float (exact); a NaN
    is written as LLVM's hexadecimal of the type's own bits (``0xH7E01`` for
    half, the double's bits for float and double), so that its sign and payload,
    even a signaling one, survive (a float NaN goes through the double of the
    same payload, which LLVM reads back exactly).
    """
    fmt_bits = {16: (5, 10), 32: (8, 23), 64: (11, 52)}[width]
    exp_mask = ((1 << fmt_bits[0]) - 1) << fmt_bits[1]
    if raw & exp_mask != exp_mask or raw & ((1 << fmt_bits[1]) - 1) == 0:
        dt = {16: np.float16, 32: np.float32, 64: np.float64}[width]
        return ir.Constant(ty, float(np.array(raw, _BITS_DTYPE[width // 8]).view(dt)))
    if width == 16:
        return _HexConstant(ty, f"0xH{raw:04X}")
    if width == 32:
        # LLVM spells a float as the double of the same value: widen the bits by
        # hand (sign, all-ones exponent, payload shifted up by 29 bits).
        sign = (raw >> 31) << 63
        raw = sign | (0x7FF << 52) | ((raw & 0x7FFFFF) << 29)
    return _HexConstant(ty, f"0x{raw:016X}")


class _HexConstant(ir.Constant):
    """An ``ir.Constant`` printed as the given LLVM hexadecimal literal."""

    def __init__(self, ty, text: str):
        super().__init__(ty, None)
        self._text = text

    def _get_reference(self) -> str:
        return self._text


def accumulation_type(pt: PT) -> PT:
    """The type a sum of products of ``pt`` (a dot, a convolution) accumulates
    in: f32 for the floats narrower than f32 (f16, bf16, f8, f4), rounded to
    ``pt`` once at the end, as XLA's CPU backend computes such dots in f32;
    ``pt`` otherwise."""
    return PT.F32 if pt.is_narrow_float else pt
