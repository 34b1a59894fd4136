"""IrArray: an LLVM pointer plus the Shape (and so the layout) of what it points to.

An :class:`Index` is a multi-dimensional index of LLVM ``i64`` values, optionally
carrying the linear element offset it corresponds to in a buffer of a given
shape.  When a consumer reads an operand of the same shape and layout (the
common elementwise case) the linear offset is reused and the address needs no
arithmetic per dimension; otherwise the address is
``sum(index[d] * stride[d])`` with strides from ``minor_to_major`` and the
padded extents (see ``xlac.shape.strides``).  Size-1 dimensions contribute
nothing, so they are skipped.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ..shape import Shape, strides
from . import types
from .emission import context_of

I64 = ir.IntType(64)


def i64(value: int) -> ir.Constant:
    return ir.Constant(I64, int(value))


@dataclass
class Index:
    """A multi-dimensional index into an array of ``shape``'s dimensions.

    ``multi``: one ``i64`` value per dimension.  ``linear``: the element offset
    of this index in a buffer laid out as ``linear_shape`` (None when unknown).
    ``bounds``: per dimension, the ``(low, high)`` range its value is known to
    lie in, narrower than the dimension (a slice's window of its operand;
    None: the whole dimension), so that a generator can leave out what the
    index never reaches (a concatenate's other operands).
    An Index is only a value: where it sits in the loop nest being emitted,
    and what was generated at it, are kept by the module's
    :class:`~xlac.codegen.emission.EmissionContext`.
    """

    multi: list
    linear: ir.Value | None = None
    linear_shape: Shape | None = None
    bounds: tuple | None = None

    @property
    def rank(self) -> int:
        return len(self.multi)

    def linear_for(self, shape: Shape):
        """The linear offset if it is valid for a buffer of ``shape`` (same dims and layout)."""
        if self.linear is None or self.linear_shape is None:
            return None
        ls = self.linear_shape
        if ls.dimensions == shape.dimensions and ls.layout == shape.layout:
            return self.linear
        return None

    def drop_linear(self) -> "Index":
        return Index(list(self.multi))


def scalar_index() -> Index:
    return Index([], i64(0), None)


class IrArray:
    """A typed view of a buffer: ``ptr`` (an LLVM pointer) holding an array of ``shape``."""

    def __init__(self, ptr: ir.Value, shape: Shape):
        if not (shape.is_array or shape.is_token):
            raise TypeError(f"IrArray needs an array shape, got {shape}")
        self.ptr = ptr
        self.shape = shape
        self.element_type = shape.element_type
        # A token (a control-flow leaf that orders side effects) has no elements.
        self._strides = strides(shape) if shape.is_array else ()

    def linear_offset(self, builder: ir.IRBuilder, index: Index) -> ir.Value:
        """Element offset of ``index`` in this buffer."""
        fast = index.linear_for(self.shape)
        if fast is not None:
            return fast
        offset = None
        for value, dim, stride in zip(index.multi, self.shape.dimensions, self._strides):
            if dim == 1:
                continue  # the index along a size-1 dimension is always 0
            term = value if stride == 1 else builder.mul(value, i64(stride), flags=["nsw", "nuw"])
            offset = term if offset is None else builder.add(offset, term, flags=["nsw", "nuw"])
        return offset if offset is not None else i64(0)

    def element_pointer(self, builder: ir.IRBuilder, index: Index) -> ir.Value:
        offset = self.linear_offset(builder, index)
        return builder.gep(self.ptr, [offset], inbounds=True,
                           source_etype=types.memory_type(self.element_type))

    def read(self, builder: ir.IRBuilder, index: Index) -> ir.Value:
        """Load the element at ``index`` (register type, see ``types.register_type``)."""
        ptr = self.element_pointer(builder, index)
        start = len(builder.block.instructions)
        value = types.load_element(builder, ptr, self.element_type)
        _tag_accesses(builder, start)
        return value

    def write(self, builder: ir.IRBuilder, index: Index, value: ir.Value) -> None:
        ptr = self.element_pointer(builder, index)
        start = len(builder.block.instructions)
        types.store_element(builder, value, ptr, self.element_type)
        _tag_accesses(builder, start)


def _tag_accesses(builder: ir.IRBuilder, start: int) -> None:
    """Put the loads and stores emitted since ``start`` into the innermost
    parallel loop's access group, if one is open (see loops.parallel_loops)."""
    groups = context_of(builder.module).access_groups
    if not groups:
        return
    for inst in builder.block.instructions[start:]:
        if inst.opname in ("load", "store"):
            inst.set_metadata("llvm.access.group", groups[-1])
