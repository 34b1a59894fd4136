"""Small helpers shared by the kernel emitters of this package.

* :func:`dyn_range` — a loop whose bounds are run-time values;
* :func:`copy_array` — copy one buffer into another of the same logical shape,
  converting layouts when they differ (a ``memcpy`` when they are identical);
* :func:`index_to_i64` — an integer index of any HLO integer type as ``i64``;
* :class:`ScratchPlan` — carve an instruction's scratch space into aligned
  regions, computed the same way by ``scratch_bytes`` and by the emitter.
"""
from __future__ import annotations

from llvmlite import ir

from ...shape import PrimitiveType as PT, Shape
from .. import types
from ..ir_array import I64, Index, IrArray, i64
from ..loops import dyn_range, fill_padding, loop_nest  # noqa: F401  (dyn_range: kernels take it from here)

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
PTR = ir.PointerType()
ALIGN = 64


def align(n: int) -> int:
    return (int(n) + ALIGN - 1) // ALIGN * ALIGN


class ScratchPlan:
    """Named, 64-byte aligned regions of one scratch slice, in the order added."""

    def __init__(self):
        self.regions: dict[str, tuple[int, int]] = {}
        self.size = 0

    def add(self, name: str, nbytes: int) -> None:
        self.regions[name] = (self.size, int(nbytes))
        self.size += align(max(int(nbytes), 1))

    def pointer(self, b: ir.IRBuilder, base: ir.Value, name: str) -> ir.Value:
        offset, _ = self.regions[name]
        return b.gep(base, [i64(offset)], inbounds=True, source_etype=I8) if offset else base

    def __contains__(self, name: str) -> bool:
        return name in self.regions


def index_to_i64(b: ir.IRBuilder, value: ir.Value, pt: PT) -> ir.Value:
    """An index value of integer type ``pt`` (signed or unsigned) as ``i64``."""
    if not pt.is_integral:
        raise TypeError(f"index of type {pt.value} is not an integer")
    width = value.type.width
    if width == 64:
        return value
    return b.sext(value, I64) if pt.is_signed_int else b.zext(value, I64)


def clamp_start(b: ir.IRBuilder, start: ir.Value, pt: PT, limit: int) -> ir.Value:
    """``clamp(start, 0, limit)`` as i64 for an index of type ``pt`` (limit >= 0).

    Unsigned indices are compared unsigned, so a huge u64 clamps to ``limit``."""
    if limit <= 0:
        return i64(0)
    s = index_to_i64(b, start, pt)
    lim = i64(limit)
    if pt.is_unsigned_int:
        return b.select(b.icmp_unsigned("<", s, lim), s, lim)
    s = b.select(b.icmp_signed("<", s, i64(0)), i64(0), s)
    return b.select(b.icmp_signed("<", s, lim), s, lim)


def memcpy(b: ir.IRBuilder, dst: ir.Value, src: ir.Value, nbytes: int | ir.Value) -> None:
    """``llvm.memcpy`` of ``nbytes`` bytes: a Python int (nothing when <= 0) or an i64 value."""
    if isinstance(nbytes, int):
        if nbytes <= 0:
            return
        nbytes = i64(nbytes)
    fnty = ir.FunctionType(ir.VoidType(), [PTR, PTR, I64, I1])
    module = b.module
    fn = module.globals.get("llvm.memcpy.p0.p0.i64")
    if fn is None:
        fn = ir.Function(module, fnty, "llvm.memcpy.p0.p0.i64")
    b.call(fn, [dst, src, nbytes, ir.Constant(I1, 0)])


def copy_array(b: ir.IRBuilder, dst: IrArray, src) -> None:
    """Copy ``src`` (an IrArray, or a generator ``Index -> value``) into ``dst``.

    Identical shapes (layouts and padding included) are one ``memcpy``; other
    layouts are converted element by element (padding refilled).  A token has
    no data: nothing is copied."""
    if dst.shape.is_token:
        return
    if isinstance(src, IrArray) and src.shape == dst.shape:
        memcpy(b, dst.ptr, src.ptr, dst.shape.byte_size())
        return
    read = (lambda index: src.read(b, index)) if isinstance(src, IrArray) else src
    fill_padding(b, dst)
    if dst.shape.element_count() == 0:
        return
    with loop_nest(b, dst.shape) as index:
        dst.write(b, index, read(index))


def leaf_shapes(shape: Shape) -> list[Shape]:
    return shape.leaves() if shape.is_tuple else [shape]


def alloca_var(ctx, ty: ir.Type, init: ir.Value, name: str) -> ir.Value:
    """A stack variable (in the kernel's alloca block) initialised at the current point."""
    slot = ctx.alloca_builder.alloca(ty, name=name)
    ctx.b.store(init, slot)
    return slot


def fill(b: ir.IRBuilder, pt: PT, ptr: ir.Value, count: ir.Value, value: ir.Value) -> None:
    """``count`` elements of ``pt`` at ``ptr`` set to ``value`` (a loop: the
    NaNs of a failed factorisation)."""
    with dyn_range(b, i64(0), count, name="fill") as j:
        b.store(value, element_pointer(b, ptr, j, pt))


def zero_elements(b: ir.IRBuilder, pt: PT, ptr: ir.Value, count: ir.Value) -> None:
    """``count`` zeros of ``pt`` at ``ptr`` (``llvm.memset``, libc's: for kernels
    compiled without the loop vectoriser, ``KernelCandidate.glue``)."""
    fn = b.module.globals.get("llvm.memset.p0.i64")
    if fn is None:
        fn = ir.Function(b.module, ir.FunctionType(ir.VoidType(), [PTR, I8, I64, I1]), "llvm.memset.p0.i64")
    b.call(fn, [ptr, ir.Constant(I8, 0), b.mul(count, i64(pt.byte_size)), ir.Constant(I1, 0)])


def constant_table(module: ir.Module, name: str, values: list, align: int = 8) -> ir.GlobalVariable:
    """The module's internal constant i64 array ``name`` of ``values`` (made
    once: the name must say what the values are), aligned to ``align`` bytes."""
    g = module.globals.get(name)
    if g is None:
        ty = ir.ArrayType(I64, len(values))
        g = ir.GlobalVariable(module, ty, name)
        g.initializer = ir.Constant(ty, values)
        g.global_constant = True
        g.linkage = "internal"
        g.align = align
    return g


def element_pointer(b: ir.IRBuilder, base: ir.Value, index: ir.Value, pt: PT) -> ir.Value:
    """Pointer to element ``index`` of a dense 1-D buffer of ``pt``."""
    return b.gep(base, [index], inbounds=True, source_etype=types.memory_type(pt))


def load(b, base, index, pt: PT) -> ir.Value:
    return types.load_element(b, element_pointer(b, base, index, pt), pt)


def store(b, value, base, index, pt: PT) -> None:
    types.store_element(b, value, element_pointer(b, base, index, pt), pt)


__all__ = ["ScratchPlan", "dyn_range", "index_to_i64", "clamp_start", "memcpy", "fill", "zero_elements",
           "constant_table", "fill_padding",
           "copy_array", "leaf_shapes", "alloca_var", "element_pointer", "load", "store",
           "Index", "IrArray", "i64", "I32", "I64", "I8", "I1", "PTR", "align"]
