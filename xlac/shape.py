"""Element types, layouts and shapes (spec: *Shapes and Layout*).

A :class:`Shape` is an array shape (element type, dimensions, layout), a tuple
shape (``tuple_shapes``) or a token.  Shapes are immutable and hashable.

HLO text syntax, parsed by :func:`parse_shape` (``xlac.shape``) and printed by
``str(shape)``::

    f32[2,3]{1,0}            array, minor_to_major = (1, 0)
    f32[2,3]{0,1:P(3,5)}     padded_dimensions = (3, 5), padding_value zero
    f32[2,3]{0,1:P(3,5)V(1)} padding_value one (V takes zero/one/lowest/highest or a number)
    f32[<=10,4]              dimension 0 dynamic: at most 10 (the bound), its size known at run time
    f32[8,128]{1,0:T(8,128)S(1)}  XLA's annotations (tiles, memory space, ...: see Layout)
    (f32[], s32[4]{0})       tuple
    token[]                  token

Element types: pred, s1/s2/s4/s8/.../s64, u1/u2/u4/u8/.../u64, f16, bf16, f32,
f64, c64, c128 and the f8/f4 types (f8e4m3fn, f8e5m2, f8e4m3b11fnuz,
f8e4m3fnuz, f8e5m2fnuz, f8e8m0fnu, f8e4m3, f8e3m4, f4e2m1fn; their bit layouts
in :data:`FLOAT_FORMATS`), the narrow ones stored as ml_dtypes stores them:
one element per byte.

The index utilities map a multi-dimensional index to the linear element index in
the buffer (and back) for any ``minor_to_major``, padded or not (spec:
*Indexing into arrays*).

Limits (XLA has none written down; xlac needs them so that no shape can make a
recursive walk exceed Python's recursion limit or numpy's dimension limit):

* :data:`MAX_TUPLE_DEPTH` = 64 levels of tuple nesting (``(f32[])`` is 1 level);
* :data:`MAX_RANK` = 32 dimensions per array;
* :data:`MAX_BYTE_SIZE` = 2**63 - 1 bytes per array buffer (XLA's limit).

``Shape(...)`` raises :class:`xlac.ShapeError` past any limit; the shape
parser raises ``ValueError`` with the column of the offending text.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from .errors import ShapeError

try:  # numpy has no bfloat16 nor the narrow types; ml_dtypes supplies them.
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is a declared dependency
    _ml_dtypes = None


class PrimitiveType(enum.Enum):
    """XLA element types. ``value`` is the HLO text name (``f32``, ``pred`` ...)."""

    PRED = "pred"
    S1 = "s1"
    S2 = "s2"
    S4 = "s4"
    S8 = "s8"
    S16 = "s16"
    S32 = "s32"
    S64 = "s64"
    U1 = "u1"
    U2 = "u2"
    U4 = "u4"
    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    F4E2M1FN = "f4e2m1fn"
    F8E3M4 = "f8e3m4"
    F8E4M3 = "f8e4m3"
    F8E4M3FN = "f8e4m3fn"
    F8E4M3B11FNUZ = "f8e4m3b11fnuz"
    F8E4M3FNUZ = "f8e4m3fnuz"
    F8E5M2 = "f8e5m2"
    F8E5M2FNUZ = "f8e5m2fnuz"
    F8E8M0FNU = "f8e8m0fnu"
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"
    C64 = "c64"
    C128 = "c128"
    TUPLE = "tuple"
    TOKEN = "token"

    def __repr__(self) -> str:
        return f"xlac.{self.name}"

    # Members are singletons compared by identity: hash them by identity too
    # (in C), not by name as Enum does (in Python); tables keyed by element
    # type (bit widths, dtypes, LLVM types) are read ~10^5 times while a
    # training step compiles.
    __hash__ = object.__hash__

    # -- classification -------------------------------------------------
    @property
    def is_array(self) -> bool:
        return self is not _TUPLE and self is not _TOKEN   # module globals: faster than PrimitiveType.X

    # The kinds below are sets made once after the class (``.value`` goes
    # through Enum's Python-level descriptor, ~10^4 times per training step).
    @property
    def is_pred(self) -> bool:
        return self is _PRED

    @property
    def is_signed_int(self) -> bool:
        return self in _SIGNED_INTS

    @property
    def is_unsigned_int(self) -> bool:
        return self in _UNSIGNED_INTS

    @property
    def is_integral(self) -> bool:
        """Signed or unsigned integer (not pred)."""
        return self in _SIGNED_INTS or self in _UNSIGNED_INTS

    @property
    def is_float(self) -> bool:
        return self in _FLOATS

    @property
    def is_complex(self) -> bool:
        return self is _C64 or self is _C128

    @property
    def is_narrow_float(self) -> bool:
        """A float narrower than f32 (f16, bf16, the f8 and f4 types): stored as
        its bits, computed in f32 and rounded back after every op."""
        return self.is_float and _BIT_WIDTH[self] < 32

    @property
    def is_sub_byte(self) -> bool:
        """An integer or float type of fewer than 8 bits (s4, u2, f4e2m1fn, ...),
        stored one element per byte in its low bits, as XLA's CPU backend does."""
        return self.is_array and not self.is_pred and _BIT_WIDTH[self] < 8

    @property
    def float_format(self) -> "FloatFormat | None":
        """Bit layout and special values of an f8/f4 type (see :class:`FloatFormat`)."""
        return FLOAT_FORMATS.get(self)

    @property
    def bit_width(self) -> int:
        return _BIT_WIDTH[self]

    @property
    def byte_size(self) -> int:
        """Bytes one element occupies in a buffer (pred and the sub-byte types take one)."""
        return max(1, _BIT_WIDTH[self] // 8)

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of one element (bf16, f8, f4 and sub-byte integers through ml_dtypes)."""
        try:
            return _DTYPES[self]
        except KeyError:
            if self.is_array:
                raise TypeError(f"{self.value} needs the ml_dtypes package") from None
            raise TypeError(f"{self.value} has no numpy dtype") from None

    @property
    def component_type(self) -> "PrimitiveType":
        """The real type of a complex type's parts (f32 for c64); else itself."""
        return {PrimitiveType.C64: PrimitiveType.F32, PrimitiveType.C128: PrimitiveType.F64}.get(self, self)

    @staticmethod
    def from_dtype(dtype) -> "PrimitiveType":
        dt = np.dtype(dtype)
        try:
            return _BY_DTYPE[dt]
        except KeyError:
            raise TypeError(f"no XLA element type for numpy dtype {dt}") from None

    @staticmethod
    def from_name(name: str) -> "PrimitiveType":
        try:
            return PrimitiveType(name)
        except ValueError:
            raise ValueError(f"unknown element type {name!r}") from None


_TUPLE, _TOKEN = PrimitiveType.TUPLE, PrimitiveType.TOKEN
_PRED, _C64, _C128 = PrimitiveType.PRED, PrimitiveType.C64, PrimitiveType.C128
_SIGNED_INTS = frozenset(t for t in PrimitiveType if t.value[0] == "s")
_UNSIGNED_INTS = frozenset(t for t in PrimitiveType if t.value[0] == "u")
_FLOATS = frozenset(t for t in PrimitiveType if t.value[0] == "f" or t is PrimitiveType.BF16)


@dataclass(frozen=True)
class FloatFormat:
    """How an f8/f4 type (an ml_dtypes type) lays out its bits, keyed in
    :data:`FLOAT_FORMATS` by element type.

    ``bits`` wide: a sign bit (unless ``signed`` is false), ``exponent`` bits of
    bias ``bias``, ``mantissa`` bits; subnormals below the smallest normal.
    The special values follow ml_dtypes (and XLA, which uses it):

    * ``nan``: the bits of the quiet NaN a conversion produces (``None``: no NaN,
      a NaN converts to ``nan_bits`` anyway as ml_dtypes does);
    * ``inf``: the bits an infinite or overflowing value converts to: a real
      infinity (IEEE-like types), the NaN (``fn``/``fnuz`` types), or the
      largest finite value (f4e2m1fn, which saturates);
    * ``fnuz``: one zero and one NaN (``0x80``), no negative zero;
    * ``has_zero``: false for f8e8m0fnu (its smallest value is 2**-127).
    """

    bits: int
    exponent: int
    mantissa: int
    bias: int
    nan: int | None
    inf: int
    max_finite: int
    signed: bool = True
    fnuz: bool = False
    has_zero: bool = True
    nan_payload_bits: int = 0    # mantissa bits a NaN constant may set (IEEE-like types)

    @property
    def nan_bits(self) -> int:
        """What a NaN converts to (f4e2m1fn has no NaN: ml_dtypes gives -0)."""
        return self.nan if self.nan is not None else 1 << (self.bits - 1)

    @property
    def sign_bit(self) -> int:
        return 1 << (self.bits - 1) if self.signed else 0

    def negate(self, rep: int) -> int:
        """The bits of -x (ml_dtypes' operator-: fnuz keeps zero and NaN)."""
        if not self.signed:
            return rep
        if self.fnuz and rep & (self.sign_bit - 1) == 0:
            return rep
        return rep ^ self.sign_bit


def _ieee(exponent: int, mantissa: int) -> FloatFormat:
    """An IEEE-like format: infinities and NaNs in the all-ones exponent."""
    bits = 1 + exponent + mantissa
    inf = ((1 << exponent) - 1) << mantissa
    return FloatFormat(bits, exponent, mantissa, (1 << (exponent - 1)) - 1, nan=inf | (1 << (mantissa - 1)),
                       inf=inf, max_finite=inf - 1, nan_payload_bits=mantissa)


def _fn(exponent: int, mantissa: int) -> FloatFormat:
    """Finite and NaN only: NaN is the all-ones pattern, overflow gives NaN."""
    nan = (1 << (exponent + mantissa)) - 1
    return FloatFormat(1 + exponent + mantissa, exponent, mantissa, (1 << (exponent - 1)) - 1, nan=nan,
                       inf=nan, max_finite=nan - 1)


def _fnuz(exponent: int, mantissa: int, bias: int) -> FloatFormat:
    """Finite, NaN (0x80, the would-be negative zero) and one unsigned zero."""
    return FloatFormat(1 + exponent + mantissa, exponent, mantissa, bias, nan=0x80, inf=0x80,
                       max_finite=0x7F, fnuz=True)


PT_ = PrimitiveType
#: The f8 and f4 formats, by element type.
FLOAT_FORMATS: dict = {
    PT_.F8E5M2: _ieee(5, 2),
    PT_.F8E4M3: _ieee(4, 3),
    PT_.F8E3M4: _ieee(3, 4),
    PT_.F8E4M3FN: _fn(4, 3),
    PT_.F8E4M3B11FNUZ: _fnuz(4, 3, 11),
    PT_.F8E4M3FNUZ: _fnuz(4, 3, 8),
    PT_.F8E5M2FNUZ: _fnuz(5, 2, 16),
    PT_.F8E8M0FNU: FloatFormat(8, 8, 0, 127, nan=0xFF, inf=0xFF, max_finite=0xFE, signed=False,
                               has_zero=False),
    PT_.F4E2M1FN: FloatFormat(4, 2, 1, 1, nan=None, inf=0b0111, max_finite=0b0111),
}

_BIT_WIDTH = {
    PT_.PRED: 1, PT_.S1: 1, PT_.S2: 2, PT_.S4: 4, PT_.S8: 8, PT_.S16: 16, PT_.S32: 32, PT_.S64: 64,
    PT_.U1: 1, PT_.U2: 2, PT_.U4: 4, PT_.U8: 8, PT_.U16: 16, PT_.U32: 32, PT_.U64: 64,
    PT_.F16: 16, PT_.BF16: 16, PT_.F32: 32, PT_.F64: 64, PT_.C64: 64, PT_.C128: 128,
    PT_.TUPLE: 0, PT_.TOKEN: 0,
    **{pt: fmt.bits for pt, fmt in FLOAT_FORMATS.items()},
}

#: numpy dtypes; the ml_dtypes ones by their ml_dtypes names.
_DTYPES = {
    PT_.PRED: np.dtype(np.bool_), PT_.S8: np.dtype(np.int8),
    PT_.S16: np.dtype(np.int16), PT_.S32: np.dtype(np.int32),
    PT_.S64: np.dtype(np.int64), PT_.U8: np.dtype(np.uint8),
    PT_.U16: np.dtype(np.uint16), PT_.U32: np.dtype(np.uint32),
    PT_.U64: np.dtype(np.uint64), PT_.F16: np.dtype(np.float16),
    PT_.F32: np.dtype(np.float32), PT_.F64: np.dtype(np.float64),
    PT_.C64: np.dtype(np.complex64), PT_.C128: np.dtype(np.complex128),
}
_ML_DTYPE_NAMES = {
    PT_.BF16: "bfloat16", PT_.S1: "int1", PT_.S2: "int2", PT_.S4: "int4", PT_.U1: "uint1",
    PT_.U2: "uint2", PT_.U4: "uint4", PT_.F4E2M1FN: "float4_e2m1fn", PT_.F8E3M4: "float8_e3m4",
    PT_.F8E4M3: "float8_e4m3", PT_.F8E4M3FN: "float8_e4m3fn", PT_.F8E4M3B11FNUZ: "float8_e4m3b11fnuz",
    PT_.F8E4M3FNUZ: "float8_e4m3fnuz", PT_.F8E5M2: "float8_e5m2", PT_.F8E5M2FNUZ: "float8_e5m2fnuz",
    PT_.F8E8M0FNU: "float8_e8m0fnu",
}
if _ml_dtypes is not None:
    for _pt, _name in _ML_DTYPE_NAMES.items():
        if hasattr(_ml_dtypes, _name):     # an older ml_dtypes may lack the newest types
            _DTYPES[_pt] = np.dtype(getattr(_ml_dtypes, _name))
_BY_DTYPE = {dt: pt for pt, dt in _DTYPES.items()}
del PT_

PRED = PrimitiveType.PRED
S1, S2, S4, S8, S16, S32, S64 = (PrimitiveType.S1, PrimitiveType.S2, PrimitiveType.S4, PrimitiveType.S8,
                                 PrimitiveType.S16, PrimitiveType.S32, PrimitiveType.S64)
U1, U2, U4, U8, U16, U32, U64 = (PrimitiveType.U1, PrimitiveType.U2, PrimitiveType.U4, PrimitiveType.U8,
                                 PrimitiveType.U16, PrimitiveType.U32, PrimitiveType.U64)
F16, BF16, F32, F64 = PrimitiveType.F16, PrimitiveType.BF16, PrimitiveType.F32, PrimitiveType.F64
F4E2M1FN, F8E3M4, F8E4M3, F8E4M3FN = (PrimitiveType.F4E2M1FN, PrimitiveType.F8E3M4, PrimitiveType.F8E4M3,
                                      PrimitiveType.F8E4M3FN)
F8E4M3B11FNUZ, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0FNU = (
    PrimitiveType.F8E4M3B11FNUZ, PrimitiveType.F8E4M3FNUZ, PrimitiveType.F8E5M2, PrimitiveType.F8E5M2FNUZ,
    PrimitiveType.F8E8M0FNU)
C64, C128 = PrimitiveType.C64, PrimitiveType.C128
TUPLE, TOKEN = PrimitiveType.TUPLE, PrimitiveType.TOKEN

#: padding_value names of the Layout proto's PaddingValue enum.
PADDING_VALUES = ("zero", "one", "lowest", "highest")

#: Deepest tuple nesting a Shape may have (``(f32[])`` is depth 1, ``((f32[]))``
#: depth 2).  XLA programs nest tuples a few levels at most (JAX flattens pytrees
#: into one flat tuple; a while loop's state is one tuple), so 64 is far beyond
#: any real program while keeping every recursive walk over a shape (printer,
#: verifier, evaluator, buffer assignment, code generation: a few Python frames
#: per level each) well inside Python's default recursion limit of 1000.
MAX_TUPLE_DEPTH = 64

#: Most dimensions an array shape may have.  32 is the most numpy 1.x can hold
#: (``NPY_MAXDIMS``; xlac supports numpy >= 1.24), and xlac's arguments, results
#: and evaluator values are numpy arrays, so a higher rank could never be run.
#: Real programs stay below rank 10.
MAX_RANK = 32

#: Largest dimension size: XLA's dimensions are int64.
MAX_DIMENSION = 2**63 - 1

#: Largest buffer an array shape may describe, in bytes (padding included):
#: XLA's ShapeUtil::ValidateShape refuses shapes whose size overflows int64,
#: and generated code computes offsets in int64.  A shape that fits may still
#: not fit the machine: ``xlac.jit`` checks buffers against its memory.
MAX_BYTE_SIZE = 2**63 - 1


@dataclass(frozen=True)
class Layout:
    """How an array lies in memory (spec: *Layout*).

    ``minor_to_major``: a permutation of ``range(rank)``, most-minor first.
    ``padded_dimensions``: per dimension, the width it is padded to (>= its size),
    or ``None`` for no padding.  ``padding_value``: what fills the padding, one of
    ``"zero", "one", "lowest", "highest"`` or a number (default ``"zero"``).

    XLA's other layout annotations, read and printed as XLA writes them
    (``{1,0:T(8,128)(2,1)E(4)S(1)}``): ``tiles`` (each a tuple of sizes, ``None``
    for ``*``), ``tail_padding_alignment`` (``L``), ``index_type`` and
    ``pointer_type`` (``#(u32)``, ``*(u32)``, sparse arrays), ``element_size_in_bits``
    (``E``), ``memory_space`` (``S``), ``split_configs`` (``SC``, each
    ``(dimension, (indices...))``), ``dynamic_shape_metadata_prefix_bytes``
    (``M``), ``dim_level_types`` (``D``, sparse arrays).  The CPU has one memory
    and unpacked, untiled buffers: the code generator drops what does not change
    where an element is (``xlac.passes.layout_normalization``) and refuses, naming
    it, what does where it cannot be dropped.
    """

    minor_to_major: tuple = ()
    padded_dimensions: tuple | None = None
    padding_value: object = "zero"
    tiles: tuple = ()
    tail_padding_alignment: int = 1
    index_type: str = ""
    pointer_type: str = ""
    element_size_in_bits: int = 0
    memory_space: int = 0
    split_configs: tuple = ()
    dynamic_shape_metadata_prefix_bytes: int = 0
    dim_level_types: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "minor_to_major", tuple(int(d) for d in self.minor_to_major))
        if self.padded_dimensions is not None:
            object.__setattr__(self, "padded_dimensions", tuple(int(d) for d in self.padded_dimensions))
        pv = self.padding_value
        if isinstance(pv, str) and pv not in PADDING_VALUES:
            raise ValueError(f"padding_value must be one of {PADDING_VALUES} or a number, got {pv!r}")
        object.__setattr__(self, "tiles", tuple(tuple(None if d is None else int(d) for d in t)
                                                for t in self.tiles))
        object.__setattr__(self, "split_configs", tuple((int(d), tuple(int(i) for i in idx))
                                                        for d, idx in self.split_configs))
        object.__setattr__(self, "dim_level_types", tuple(self.dim_level_types))

    @property
    def is_padded(self) -> bool:
        return self.padded_dimensions is not None

    @property
    def annotations(self) -> dict:
        """XLA's layout annotations that differ from their defaults, by field name."""
        return {f: getattr(self, f) for f, default in _ANNOTATION_DEFAULTS.items()
                if getattr(self, f) != default}

    def without(self, *fields: str) -> "Layout":
        """This layout with the annotations ``fields`` set back to their defaults."""
        return dataclasses.replace(self, **{f: _ANNOTATION_DEFAULTS[f] for f in fields})

    def __str__(self) -> str:
        s = ",".join(str(d) for d in self.minor_to_major)
        extra = ""
        if self.dim_level_types:
            extra += "D(" + ",".join(self.dim_level_types) + ")"
        if self.tiles:
            extra += "T" + "".join("(" + ",".join("*" if d is None else str(d) for d in t) + ")"
                                   for t in self.tiles)
        if self.tail_padding_alignment != 1:
            extra += f"L({self.tail_padding_alignment})"
        if self.index_type:
            extra += f"#({self.index_type})"
        if self.pointer_type:
            extra += f"*({self.pointer_type})"
        if self.element_size_in_bits:
            extra += f"E({self.element_size_in_bits})"
        if self.memory_space:
            extra += f"S({self.memory_space})"
        if self.split_configs:
            extra += "SC" + "".join(f"({d}:{','.join(map(str, idx))})" for d, idx in self.split_configs)
        if self.padded_dimensions is not None:
            extra += "P(" + ",".join(str(d) for d in self.padded_dimensions) + ")"
            if self.padding_value != "zero":
                extra += f"V({self.padding_value})"
        if self.dynamic_shape_metadata_prefix_bytes:
            extra += f"M({self.dynamic_shape_metadata_prefix_bytes})"
        return "{" + s + (":" + extra if extra else "") + "}"


_ANNOTATION_DEFAULTS = {"tiles": (), "tail_padding_alignment": 1, "index_type": "", "pointer_type": "",
                        "element_size_in_bits": 0, "memory_space": 0, "split_configs": (),
                        "dynamic_shape_metadata_prefix_bytes": 0, "dim_level_types": ()}


def default_layout(rank: int) -> Layout:
    """Major-to-minor (row-major) layout: ``minor_to_major = (rank-1, ..., 0)``."""
    # One per rank (layouts are immutable): every Shape made without a layout
    # asks, and making the Layout was a third of making the Shape (shape
    # inference makes one per instruction the verifier checks).
    layout = _DEFAULT_LAYOUTS.get(rank)
    if layout is None:
        layout = _DEFAULT_LAYOUTS[rank] = Layout(tuple(range(rank - 1, -1, -1)))
    return layout


_DEFAULT_LAYOUTS: dict[int, Layout] = {}


@dataclass(frozen=True, init=False)
class Shape:
    """An array, tuple or token shape.

    ``Shape(F32, (2, 3))`` is an array with the default (major-to-minor) layout;
    ``Shape(F32, (2, 3), layout=Layout((0, 1)))`` column-major;
    ``Shape.tuple([s1, s2])`` a tuple; ``Shape.token()`` a token.
    ``dynamic_dimensions``: one flag per dimension, True where the dimension is
    dynamic (``f32[<=10,4]``: its size is known at run time, ``dimensions``
    holds its bound); ``Shape(F32, (10, 4), dynamic_dimensions=[True, False])``.
    Raises ``ValueError`` for negative dimensions or a layout that does not fit.
    """

    element_type: PrimitiveType
    dimensions: tuple
    layout: Layout | None
    tuple_shapes: tuple
    dynamic_dimensions: tuple

    def __init__(self, element_type, dimensions=(), layout=None, tuple_shapes=(), dynamic_dimensions=None):
        if not isinstance(element_type, PrimitiveType):
            element_type = PrimitiveType.from_name(element_type) if isinstance(element_type, str) \
                else PrimitiveType.from_dtype(element_type)
        # Shapes are made ~10^4 times while a training step compiles (shape
        # inference makes one per instruction verified): C-level loops, one
        # write of the (frozen) fields.
        dims = tuple(map(int, dimensions))
        tuple_shapes = tuple(tuple_shapes)
        # _tuple_depth is not a dataclass field: kept out of ==, hash and repr.
        self.__dict__.update(element_type=element_type, dimensions=dims, tuple_shapes=tuple_shapes,
                             dynamic_dimensions=_dynamic_flags(dynamic_dimensions, dims),
                             _tuple_depth=_tuple_depth_of(element_type, tuple_shapes))
        if element_type.is_array:
            if len(dims) > MAX_RANK:
                raise ShapeError(f"{element_type.value} array of rank {len(dims)}: xlac allows at "
                                 f"most {MAX_RANK} dimensions (xlac.shape.MAX_RANK)")
            if dims and min(dims) < 0:
                raise ValueError(f"negative dimension in {element_type.value}{list(dims)}")
            if layout is None:
                layout = default_layout(len(dims))   # fits any dimensions of its rank
            else:
                _check_layout(layout, dims)
        else:
            layout = None
        self.__dict__["layout"] = layout
        # (Worked out once: every pass and the emitter ask a buffer's size.)
        nbytes = self.__dict__["_byte_size"] = self._buffer_bytes()
        if nbytes > MAX_BYTE_SIZE:
            raise ShapeError(f"{self} would take {self.byte_size()} bytes: more than a 64-bit size "
                             f"can hold (xlac.shape.MAX_BYTE_SIZE, XLA's limit too)")

    # -- constructors -----------------------------------------------------
    @staticmethod
    def array(element_type, dimensions, minor_to_major=None) -> "Shape":
        layout = None if minor_to_major is None else Layout(tuple(minor_to_major))
        return Shape(element_type, dimensions, layout)

    @staticmethod
    def tuple(shapes: Iterable["Shape"]) -> "Shape":
        return Shape(PrimitiveType.TUPLE, (), None, tuple(shapes))

    @staticmethod
    def token() -> "Shape":
        return Shape(PrimitiveType.TOKEN)

    @staticmethod
    def scalar(element_type) -> "Shape":
        return Shape(element_type, ())

    # -- queries ------------------------------------------------------------
    # The kind of a shape is asked ~10^5 times while a training step compiles:
    # worked out once per (immutable) shape, then read from its __dict__.
    @functools.cached_property
    def is_array(self) -> bool:
        return self.element_type.is_array

    @functools.cached_property
    def is_tuple(self) -> bool:
        return self.element_type is _TUPLE

    @functools.cached_property
    def is_token(self) -> bool:
        return self.element_type is _TOKEN

    @property
    def rank(self) -> int:
        return len(self.dimensions)

    @property
    def tuple_depth(self) -> int:
        """Levels of tuple nesting: 0 for an array or token, 1 for ``(f32[])``."""
        depth = self.__dict__.get("_tuple_depth")
        if depth is None:  # e.g. a Shape unpickled from before the attribute existed
            depth = _tuple_depth_of(self.element_type, self.tuple_shapes)
        return depth

    @property
    def is_scalar(self) -> bool:
        return self.is_array and not self.dimensions

    @property
    def dtype(self) -> np.dtype:
        return self.element_type.dtype

    def element_count(self) -> int:
        """Logical number of elements (product of dimensions)."""
        return math.prod(self.dimensions)

    def physical_dimensions(self) -> tuple:
        """Per-dimension extent in memory: padded width, or the size itself (a
        tiling that amounts to padding, ``f32[5,100]{1,0:T(8,128)}``, pads)."""
        if self.layout is not None and self.layout.padded_dimensions is not None:
            return self.layout.padded_dimensions
        if self.layout is not None and self.layout.tiles:
            padded = tiling_as_padding(self)
            if padded is not None:
                return padded
        return self.dimensions

    def buffer_element_count(self) -> int:
        """Elements the buffer holds, padding included."""
        return math.prod(self.physical_dimensions())

    def byte_size(self) -> int:
        """Bytes of the array's buffer (padding included); 0 for tuples/tokens."""
        nbytes = self.__dict__.get("_byte_size")
        if nbytes is None:  # a Shape unpickled from before the attribute existed
            nbytes = self._buffer_bytes()
        return nbytes

    def _buffer_bytes(self) -> int:
        return self.buffer_element_count() * self.element_type.byte_size if self.element_type.is_array else 0

    def leaves(self) -> list:
        """The array (and token) shapes of a tuple, flattened depth-first, in order."""
        return list(self._flat_leaves())

    def leaf_count(self) -> int:
        """``len(self.leaves())`` in constant time (1 for an array or token)."""
        return len(self._flat_leaves())

    def leaf_offsets(self) -> tuple:
        """For a tuple, the number of the first leaf of each element (depth-first
        numbering, as :meth:`leaves`); ``()`` for an array or token."""
        offsets = self.__dict__.get("_leaf_offsets")
        if offsets is None:
            offsets, n = [], 0
            for s in self.tuple_shapes:
                offsets.append(n)
                n += s.leaf_count()
            offsets = tuple(offsets)
            object.__setattr__(self, "_leaf_offsets", offsets)
        return offsets

    def _flat_leaves(self) -> tuple:
        # Computed once per Shape (shapes are immutable): a module's root tuple
        # of thousands of leaves is asked for its leaves once per leaf, and
        # rebuilding them each time made such queries quadratic.
        if not self.is_tuple:
            return (self,)
        flat = self.__dict__.get("_leaves")
        if flat is None:
            flat = tuple(leaf for s in self.tuple_shapes for leaf in s._flat_leaves())
            object.__setattr__(self, "_leaves", flat)
        return flat

    def with_layout(self, layout: Layout | Sequence[int] | None) -> "Shape":
        if layout is not None and not isinstance(layout, Layout):
            layout = Layout(tuple(layout))
        return Shape(self.element_type, self.dimensions, layout, dynamic_dimensions=self.dynamic_dimensions)

    def with_element_type(self, element_type: PrimitiveType) -> "Shape":
        return Shape(element_type, self.dimensions, self.layout, dynamic_dimensions=self.dynamic_dimensions)

    # -- dynamic dimensions (XLA's bounded dynamic shapes) ----------------------
    def is_dynamic_dimension(self, d: int) -> bool:
        """Whether dimension ``d`` is dynamic: ``dimensions[d]`` is then its bound
        (the buffer holds that many), its size is known at run time."""
        return bool(self.dynamic_dimensions) and self.dynamic_dimensions[d]

    @property
    def is_dynamic(self) -> bool:
        """Whether any dimension (of any tuple element) is dynamic."""
        if self.is_tuple:
            return any(s.is_dynamic for s in self.tuple_shapes)
        return any(self.dynamic_dimensions)

    @property
    def is_static(self) -> bool:
        return not self.is_dynamic

    def with_dynamic_dimension(self, d: int, dynamic: bool = True) -> "Shape":
        """This array shape with dimension ``d`` dynamic (or static)."""
        flags = list(self.dynamic_dimensions or (False,) * self.rank)
        flags[d] = bool(dynamic)
        return Shape(self.element_type, self.dimensions, self.layout, dynamic_dimensions=flags)

    def with_dynamic_dimensions(self, flags) -> "Shape":
        """This array shape with the dynamic flags ``flags`` (one per dimension)."""
        return Shape(self.element_type, self.dimensions, self.layout, dynamic_dimensions=flags)

    def static(self) -> "Shape":
        """The shape with every dynamic dimension made static at its bound (XLA's
        ``ShapeUtil::MakeStaticShape``), tuple elements included."""
        if self.is_tuple:
            return Shape.tuple([s.static() for s in self.tuple_shapes]) if self.is_dynamic else self
        if not self.is_dynamic:
            return self
        return Shape(self.element_type, self.dimensions, self.layout)

    def has_default_layout(self) -> bool:
        return self.layout == default_layout(self.rank)

    def compatible(self, other: "Shape") -> bool:
        """Equal ignoring layout and which dimensions are dynamic (XLA's
        ``ShapeUtil::Compatible``; the test HLO shape rules use).  ``==`` tells
        ``f32[<=10]`` from ``f32[10]``, as XLA's ``Shape::Equal``."""
        if self.is_tuple or other.is_tuple:
            return (self.is_tuple and other.is_tuple and len(self.tuple_shapes) == len(other.tuple_shapes)
                    and all(a.compatible(b) for a, b in zip(self.tuple_shapes, other.tuple_shapes)))
        return self.element_type == other.element_type and self.dimensions == other.dimensions

    # -- hashing --------------------------------------------------------------
    def __hash__(self) -> int:
        # Computed once per shape object (immutable): CSE and other tables key on
        # shapes ~10^5 times for a training step, and the generated hash of the
        # fields hashes the Layout and the element type (Python code) each time.
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.element_type, self.dimensions, self.layout, self.tuple_shapes,
                      self.dynamic_dimensions))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict:
        # A hash is only valid in the process that computed it (str hashing is salted).
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    # -- text -----------------------------------------------------------------
    def __str__(self) -> str:
        # Printed once per shape object (the shape is immutable): kernel sharing
        # keys, the HLO printer and cache keys print the same shapes many times.
        text = self.__dict__.get("_text")
        if text is None:
            text = self.to_string(print_layout=True)
            object.__setattr__(self, "_text", text)  # not a field: out of ==, hash and repr
        return text

    def to_string(self, print_layout: bool = True) -> str:
        if print_layout and self.__dict__.get("_text") is not None:
            return self._text
        if self.is_tuple:
            return "(" + ", ".join(s.to_string(print_layout) for s in self.tuple_shapes) + ")"
        if self.is_token:
            return "token[]"
        s = f"{self.element_type.value}[{','.join(self._dimension_text(d) for d in range(self.rank))}]"
        if print_layout and (self.dimensions or (self.layout and (self.layout.is_padded
                                                                  or self.layout.annotations))):
            s += str(self.layout)
        return s

    def _dimension_text(self, d: int) -> str:
        return f"<={self.dimensions[d]}" if self.is_dynamic_dimension(d) else str(self.dimensions[d])

    def __repr__(self) -> str:
        return f"xlac.shape({str(self)!r})"


def _dynamic_flags(flags, dims: tuple) -> tuple:
    """Per-dimension dynamic flags, () when none is dynamic (so a static shape
    compares and hashes the same however it was made)."""
    flags = tuple(bool(f) for f in flags) if flags is not None else ()
    if not flags:
        return ()
    if len(flags) != len(dims):
        raise ValueError(f"dynamic_dimensions {list(flags)} must have one entry per dimension of {list(dims)}")
    return flags if any(flags) else ()


def tiling_as_padding(shape: Shape) -> tuple | None:
    """The padded dimensions that address ``shape``'s elements as its tiled
    layout does, or None when the tiling is more than padding.

    XLA's first tile splits the minor-most dimensions (in memory order) into
    tiles laid out one after the other, each tile row-major.  When every tiled
    dimension but the most major one fits in one tile, that is the untiled
    layout with those dimensions padded to the tile and the most major one to a
    multiple of it.  Further tiles (sub-tiles within a tile) must be trivial:
    all ones, or the tile itself.  A ``*`` (combined dimension) is not padding.
    """
    layout = shape.layout
    if not layout.tiles:
        return shape.dimensions
    if layout.padded_dimensions is not None:
        return None
    tile = layout.tiles[0]
    if None in tile or any(None in t for t in layout.tiles[1:]):
        return None
    for sub in layout.tiles[1:]:
        if not (all(d == 1 for d in sub) or tuple(sub) == tuple(tile[-len(sub):])):
            return None
    order = list(reversed(layout.minor_to_major))       # major to minor
    k = min(len(tile), len(order))
    padded = list(shape.dimensions)
    for j, (d, t) in enumerate(zip(order[len(order) - k:], tile[len(tile) - k:])):
        if t <= 0:
            return None
        if j == 0:
            padded[d] = -(-shape.dimensions[d] // t) * t
        elif shape.dimensions[d] > t:
            return None
        else:
            padded[d] = t
    return tuple(padded)


def _tuple_depth_of(element_type: PrimitiveType, tuple_shapes: tuple) -> int:
    """Nesting depth of a tuple of ``tuple_shapes``; raises ShapeError past MAX_TUPLE_DEPTH.

    Each element already knows its own depth, so this looks one level down only
    and building a shape stays linear in its size.
    """
    if element_type is not PrimitiveType.TUPLE:
        return 0
    for s in tuple_shapes:
        if not isinstance(s, Shape):
            raise TypeError(f"tuple elements must be Shapes, got {type(s).__name__}")
    depth = 1 + max((s.tuple_depth for s in tuple_shapes), default=0)
    if depth > MAX_TUPLE_DEPTH:
        raise ShapeError(f"tuple shape nested {depth} levels deep: xlac allows at most "
                         f"{MAX_TUPLE_DEPTH} (xlac.shape.MAX_TUPLE_DEPTH)")
    return depth


def _check_layout(layout: Layout, dims: tuple) -> None:
    rank = len(dims)
    if sorted(layout.minor_to_major) != list(range(rank)):
        raise ValueError(f"minor_to_major {list(layout.minor_to_major)} is not a permutation of "
                         f"the {rank} dimensions of {list(dims)}")
    if layout.padded_dimensions is not None:
        pd = layout.padded_dimensions
        if len(pd) != rank:
            raise ValueError(f"padded_dimensions {list(pd)} must have one entry per dimension of {list(dims)}")
        if any(p < d for p, d in zip(pd, dims)):
            raise ValueError(f"padded_dimensions {list(pd)} smaller than dimensions {list(dims)}")


def round_to_odd_f32(x) -> np.ndarray:
    """f64 (or integer) values -> f32 rounded to odd: an inexact result takes the
    neighbour whose last bit is 1.  Rounding that to nearest even again, to any
    narrower float (bf16, f16, f8, f4), gives the correctly rounded value of the
    original: one rounding, not two (ml_dtypes' numpy cast from f64 goes through
    a plain f32 and may round twice).  64-bit integers beyond 2**53 still round
    twice (through f64)."""
    f = np.asarray(x).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = f.astype(np.float32)
    back = r.astype(np.float64)
    inexact = (back != f) & ~np.isnan(f)
    even = (r.view(np.uint32) & np.uint32(1)) == 0
    nudge = inexact & even
    if np.any(nudge):
        toward = np.where(f > back, np.float32(np.inf), np.float32(-np.inf))
        r = np.where(nudge, np.nextafter(r, toward), r).astype(np.float32)
    return r


def round_float(values, element_type: PrimitiveType) -> np.ndarray:
    """f64 values rounded once, to nearest even, to the float type ``element_type``."""
    f = np.asarray(values, dtype=np.float64)
    dt = element_type.dtype
    with np.errstate(over="ignore", invalid="ignore"):
        if dt in (np.float64, np.float32, np.float16):
            return f.astype(dt)           # numpy rounds f64 -> f32/f16 once
        return round_to_odd_f32(f).astype(dt)


# ----------------------------------------------------------------------------
# Index utilities (IndexUtil)
# ----------------------------------------------------------------------------

def strides(shape: Shape) -> tuple:
    """Per logical dimension, the step in elements between neighbours in the buffer."""
    phys = shape.physical_dimensions()
    out = [0] * shape.rank
    step = 1
    for d in shape.layout.minor_to_major:
        out[d] = step
        step *= phys[d]
    return tuple(out)


def multi_index_to_linear(shape: Shape, index: Sequence[int]) -> int:
    """Linear element offset in the buffer of ``shape`` of a multi-dimensional index."""
    if len(index) != shape.rank:
        raise ValueError(f"index {list(index)} has rank {len(index)}, shape {shape} has rank {shape.rank}")
    for i, (x, d) in enumerate(zip(index, shape.dimensions)):
        if not 0 <= x < d:
            raise IndexError(f"index {list(index)} out of bounds in dimension {i} of {shape}")
    return sum(int(x) * s for x, s in zip(index, strides(shape)))


def linear_to_multi_index(shape: Shape, linear: int) -> tuple:
    """Inverse of :func:`multi_index_to_linear` (the index may land in padding)."""
    phys = shape.physical_dimensions()
    index = [0] * shape.rank
    for d in shape.layout.minor_to_major:
        linear, index[d] = divmod(linear, phys[d])
    return tuple(index)


def padding_scalar(shape: Shape):
    """The numpy scalar that fills a padded layout's padding."""
    pv = shape.layout.padding_value if shape.layout else "zero"
    dt = shape.dtype
    et = shape.element_type
    if pv == "zero":
        return dt.type(0)
    if pv == "one":
        return dt.type(1)
    if pv in ("lowest", "highest"):
        return extreme_scalar(et, pv == "highest")
    return dt.type(pv)


def extreme_scalar(et: PrimitiveType, highest: bool):
    """The lowest or highest value of real element type ``et`` (a numpy
    scalar): -inf/+inf, or the extreme finite values of a float type with no
    infinity; False/True for pred; the integer limits."""
    dt = np.dtype(et.dtype)
    if et.is_pred:
        return dt.type(highest)
    if et.is_float:
        fmt = et.float_format
        if fmt is not None and fmt.inf != (((1 << fmt.exponent) - 1) << fmt.mantissa):
            # No infinity: the extreme finite values.
            rep = fmt.max_finite if highest or not fmt.signed else fmt.max_finite | fmt.sign_bit
            if not fmt.signed and not highest:
                rep = 0
            return np.array([rep], np.uint8).view(dt)[0]
        return dt.type(np.inf if highest else -np.inf)
    info = _ml_dtypes.iinfo(dt) if et.is_sub_byte else np.iinfo(dt)
    return dt.type(info.max if highest else info.min)


def to_buffer(array: np.ndarray, shape: Shape) -> np.ndarray:
    """Lay a logical (C-ordered) numpy array out in memory as ``shape`` says.

    Returns a 1-D array of ``shape.buffer_element_count()`` elements.
    """
    a = np.asarray(array, dtype=shape.dtype).reshape(shape.dimensions)
    phys = shape.physical_dimensions()
    if phys != shape.dimensions:
        full = np.full(phys, padding_scalar(shape), dtype=shape.dtype)
        full[tuple(slice(0, d) for d in shape.dimensions)] = a
        a = full
    major_to_minor = tuple(reversed(shape.layout.minor_to_major))
    return np.ascontiguousarray(a.transpose(major_to_minor)).reshape(-1)


def from_buffer(buffer: np.ndarray, shape: Shape) -> np.ndarray:
    """Inverse of :func:`to_buffer`: a logical C-ordered array (a view where possible)."""
    major_to_minor = tuple(reversed(shape.layout.minor_to_major))
    phys = shape.physical_dimensions()
    stored = np.asarray(buffer).reshape(tuple(phys[d] for d in major_to_minor))
    logical = stored.transpose(np.argsort(major_to_minor))
    if phys != shape.dimensions:
        logical = logical[tuple(slice(0, d) for d in shape.dimensions)]
    return logical


# ----------------------------------------------------------------------------
# HLO shape text
# ----------------------------------------------------------------------------

# Shape syntax is ASCII.  Python's \d, \s, str.isdigit(), str.isspace() and int()
# also take other scripts' digits and spaces (int('٣') is 3), which XLA rejects.
_ARRAY_RE = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]", re.ASCII)
_DIM_RE = re.compile(r"(<=)?([0-9]+)", re.ASCII)  # `<=N`: a bounded dynamic dimension
_UINT_RE = re.compile(r"[0-9]+", re.ASCII)
_PAD_RE = re.compile(r"P\(([0-9, ]*)\)(?:V\(([^)]*)\))?", re.ASCII)
_NUMBER_RE = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", re.ASCII)
_BLANKS = " \t\r\n\f\v"


def parse_shape(text: str) -> Shape:
    """Parse HLO shape syntax (``f32[2,3]{0,1}``, ``(f32[], s32[2])``, ``token[]``).

    Raises ``ValueError`` saying at which column the text stops making sense,
    including for tuples nested deeper than :data:`MAX_TUPLE_DEPTH`, arrays of
    rank above :data:`MAX_RANK`, dimensions that do not fit int64 and any
    non-ASCII character.
    """
    shape, pos = parse_shape_prefix(text, 0)
    if text[pos:].strip(_BLANKS):
        raise ValueError(f"unexpected text after shape at column {pos + 1}: {text[pos:pos + 30]!r}")
    return shape


def parse_shape_prefix(text: str, pos: int) -> tuple:
    """Parse one shape starting at ``pos``; returns ``(shape, end_pos)``.

    Errors as :func:`parse_shape` (``ValueError`` with "at column N", 1-based).
    """
    return _parse_shape_at(text, pos, 0)


def _parse_shape_at(text: str, pos: int, depth: int) -> tuple:
    """One shape at ``pos`` inside ``depth`` enclosing tuples."""
    pos = _skip_blanks(text, pos)
    if text.startswith("(", pos):
        return _parse_tuple(text, pos, depth)
    return _parse_array(text, pos)


def _parse_tuple(text: str, pos: int, depth: int) -> tuple:
    # Checked before descending, so the recursion never goes deeper than the limit.
    if depth >= MAX_TUPLE_DEPTH:
        raise ValueError(f"tuple shape nested deeper than {MAX_TUPLE_DEPTH} levels at column "
                         f"{pos + 1} (the limit is xlac.shape.MAX_TUPLE_DEPTH)")
    n = len(text)
    pos += 1
    elems = []
    while True:
        pos = _skip_comment(text, _skip_blanks(text, pos))
        if pos < n and text[pos] == ")":
            return Shape.tuple(elems), pos + 1
        elem, pos = _parse_shape_at(text, pos, depth + 1)
        elems.append(elem)
        pos = _skip_blanks(text, pos)
        if pos < n and text[pos] == ",":
            pos += 1
        elif pos < n and text[pos] == ")":
            return Shape.tuple(elems), pos + 1
        else:
            raise ValueError(f"expected ',' or ')' in tuple shape at column {pos + 1}: {text!r}")


def _parse_array(text: str, pos: int) -> tuple:
    """``f32[2,3]{1,0}`` or ``token[]`` at ``pos``."""
    m = _ARRAY_RE.match(text, pos)
    if not m:
        raise ValueError(f"expected a shape at column {pos + 1}: {text[pos:pos + 30]!r}")
    ty = m.group(1)
    if ty == "token":
        return Shape.token(), m.end()
    try:
        et = PrimitiveType.from_name(ty)
    except ValueError as e:
        raise ValueError(f"{e} at column {pos + 1}") from None
    if et is PrimitiveType.TUPLE:
        raise ValueError(f"'tuple' is not an element type at column {pos + 1}")
    dims, dynamic = _parse_dims(text, m.start(2), m.end(2))
    if len(dims) > MAX_RANK:
        raise ValueError(f"{ty} array of rank {len(dims)} at column {pos + 1}: xlac allows at most "
                         f"{MAX_RANK} dimensions (xlac.shape.MAX_RANK)")
    pos = m.end()
    layout = None
    if text.startswith("{", pos):
        end = text.find("}", pos)
        if end < 0:
            raise ValueError(f"unterminated layout at column {pos + 1}")
        layout = _parse_layout(text[pos + 1:end], len(dims), pos + 2)
        pos = end + 1
    try:
        return Shape(et, dims, layout, dynamic_dimensions=dynamic), pos
    except ShapeError as e:
        raise ValueError(f"{e} at column {m.start() + 1}") from None


def _parse_dims(text: str, start: int, end: int) -> tuple:
    """The dimension sizes in ``text[start:end]`` (between the brackets) and
    which are dynamic (``<=N``)."""
    body = text[start:end]
    if not body.strip(_BLANKS):
        return [], []
    dims, dynamic = [], []
    offset = start
    for part in body.split(","):
        d = part.strip(_BLANKS)
        column = offset + len(part) - len(part.lstrip(_BLANKS)) + 1
        m = _DIM_RE.fullmatch(d)
        if not m:
            if d == "?":
                raise ValueError(f"unbounded dynamic dimension '?' in shape at column {column}: "
                                 "xlac needs a bound (write <=N)")
            raise ValueError(f"bad dimension {d!r} in shape at column {column}")
        dims.append(_decimal(m.group(2), "dimension", column))
        dynamic.append(m.group(1) is not None)
        offset += len(part) + 1
    return dims, dynamic


def _decimal(digits: str, what: str, column: int) -> int:
    """ASCII ``digits`` as an int that fits int64, else ValueError naming ``what``.

    The length is checked before converting: int() of a long text is slow, and
    Python refuses more than 4300 digits with a message that names nothing.
    """
    significant = digits.lstrip("0") or "0"
    if len(significant) > 19 or int(significant) > MAX_DIMENSION:
        shown = digits if len(digits) <= 24 else f"{digits[:20]}... ({len(digits)} digits)"
        raise ValueError(f"{what} {shown} does not fit in 64 bits at column {column}")
    return int(significant)


def _skip_blanks(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos] in _BLANKS:
        pos += 1
    return pos


def _skip_comment(text: str, pos: int) -> int:
    if text.startswith("/*", pos):
        end = text.find("*/", pos)
        return end + 2 if end >= 0 else len(text)
    return pos


def _parse_layout(body: str, rank: int, column: int) -> Layout:
    """The text between a layout's braces; ``column`` is where it starts (1-based)."""
    for k, c in enumerate(body):
        if not c.isascii():
            raise ValueError(f"non-ASCII character {c!r} in layout at column {column + k}")
    m2m_txt, colon, extra = body.partition(":")
    m2m = _layout_ints(m2m_txt, "minor_to_major entry", column)
    fields: dict = {}
    if colon:
        fields = _LayoutAnnotations(extra, column + len(m2m_txt) + 1).read()
    if not m2m and rank:
        m2m = default_layout(rank).minor_to_major
    return Layout(m2m, **fields)


class _LayoutAnnotations:
    """The part of a layout after ``:``, in XLA's order:
    ``D(...) T(...)(...) L(n) #(type) *(type) E(n) S(n) SC(d:i,...)(...) P(...)V(...) M(n)``
    (``P``/``V`` are the padded dimensions and padding value of xlac's layouts)."""

    def __init__(self, text: str, column: int):
        self.text, self.column, self.pos = text, column, 0

    def read(self) -> dict:
        fields: dict = {}
        for prefix, field, reader in (
                ("D(", "dim_level_types", self._dim_level_types), ("T(", "tiles", self._tiles),
                ("L(", "tail_padding_alignment", self._int), ("#(", "index_type", self._type),
                ("*(", "pointer_type", self._type), ("E(", "element_size_in_bits", self._int),
                ("S(", "memory_space", self._int), ("SC(", "split_configs", self._split_configs),
                ("P(", "padded_dimensions", self._padded), ("M(", "dynamic_shape_metadata_prefix_bytes",
                                                            self._int)):
            self._skip()
            if self.text.startswith(prefix, self.pos):
                self.pos += len(prefix) - 1
                fields[field] = reader()
                if field == "padded_dimensions":
                    self._skip()
                    if self.text.startswith("V(", self.pos):
                        self.pos += 1
                        at = self.pos
                        fields["padding_value"] = _padding_value(self._group().strip(_BLANKS), self._col(at))
        self._skip()
        if self.pos < len(self.text):
            raise ValueError(f"unexpected {self.text[self.pos:self.pos + 10]!r} in layout at column "
                             f"{self._col(self.pos)} (after ':' come D(...) T(...) L(n) #(type) *(type) "
                             "E(n) S(n) SC(...) P(...) M(n), in this order)")
        return fields

    def _col(self, pos: int) -> int:
        return self.column + pos

    def _skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _BLANKS:
            self.pos += 1

    def _group(self) -> str:
        """The text of ``( ... )`` at pos (without the parentheses)."""
        end = self.text.find(")", self.pos)
        if not self.text.startswith("(", self.pos) or end < 0:
            raise ValueError(f"expected '(...)' in layout at column {self._col(self.pos)}")
        body = self.text[self.pos + 1:end]
        self.pos = end + 1
        return body

    def _int(self) -> int:
        at = self.pos + 1
        values = _layout_ints(self._group(), "layout attribute", self._col(at))
        if len(values) != 1:
            raise ValueError(f"expected one integer in layout at column {self._col(at)}")
        return values[0]

    def _type(self) -> str:
        at = self.pos + 1
        name = self._group().strip(_BLANKS)
        if not re.fullmatch(r"u(8|16|32|64)", name):
            raise ValueError(f"expected an unsigned integer type, got {name!r} in layout at column "
                             f"{self._col(at)}")
        return name

    def _dim_level_types(self) -> tuple:
        at = self.pos + 1
        out = tuple(t.strip(_BLANKS) for t in self._group().split(","))
        for t in out:
            if not re.fullmatch(r"[DCSH][+~]*", t):
                raise ValueError(f"expected a dimension level type (D, C, S or H), got {t!r} in layout "
                                 f"at column {self._col(at)}")
        return out

    def _tiles(self) -> tuple:
        tiles = []
        while self.text.startswith("(", self.pos):
            at = self.pos + 1
            tile = []
            for part in self._group().split(","):
                d = part.strip(_BLANKS)
                if d == "*":
                    tile.append(None)                 # XLA's combined dimension
                elif _UINT_RE.fullmatch(d):
                    tile.append(_decimal(d, "tile size", self._col(at)))
                else:
                    raise ValueError(f"bad tile size {d!r} in layout at column {self._col(at)}")
            tiles.append(tuple(tile))
        return tuple(tiles)

    def _split_configs(self) -> tuple:
        configs = []
        while self.text.startswith("(", self.pos):
            at = self.pos + 1
            dim, colon, idx = self._group().partition(":")
            if not colon:
                raise ValueError(f"expected (dimension:indices) in layout at column {self._col(at)}")
            configs.append((_layout_ints(dim, "split dimension", self._col(at))[0],
                            _layout_ints(idx, "split index", self._col(at))))
        return tuple(configs)

    def _padded(self) -> tuple:
        at = self.pos + 1
        body = self._group()
        if body.strip(_BLANKS)[:1].isalpha():
            raise ValueError(f"P({body}) at column {self._col(at)}: a physical shape is only for sparse "
                             "arrays (xlac's P(...) lists padded dimension sizes)")
        return _layout_ints(body, "padded dimension", self._col(at))


def _layout_ints(text: str, what: str, column: int) -> tuple:
    """Comma-separated non-negative integers; ``column`` is where ``text`` starts."""
    out = []
    for part in text.split(","):
        x = part.strip(_BLANKS)
        at = column + len(part) - len(part.lstrip(_BLANKS))
        column += len(part) + 1
        if not x:
            continue
        if not _UINT_RE.fullmatch(x):
            raise ValueError(f"bad {what} {x!r} in layout at column {at}")
        out.append(_decimal(x, what, at))
    return tuple(out)


def _padding_value(v: str, column: int):
    """``V(...)``: a PaddingValue name or a number."""
    if v in PADDING_VALUES:
        return v
    if not _NUMBER_RE.fullmatch(v):
        raise ValueError(f"bad padding value {v!r} in layout at column {column}")
    if any(c in v for c in ".eE"):
        return float(v)
    value = _decimal(v.lstrip("+-"), "padding value", column)
    return -value if v.startswith("-") else value


def shape(text: str) -> Shape:
    """``xlac.shape("f32[2,3]{0,1}")``: parse HLO shape text (see :func:`parse_shape`)."""
    return parse_shape(text)


def shape_of(array) -> Shape:
    """The default-layout Shape of a numpy array or scalar."""
    a = np.asarray(array)
    return Shape(PrimitiveType.from_dtype(a.dtype), a.shape)
