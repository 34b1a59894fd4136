"""StableHLO types and dense literals -> xlac Shapes and numpy arrays.

``tensor<2x3xf32>`` is ``f32[2,3]``; ``tensor<f32>`` a scalar; ``i1`` is
``pred``, ``iN``/``siN`` ``sN``, ``uiN`` ``uN``, ``complex<f32>`` ``c64``, the f8
and f4 types by their lower-case names (``f8E4M3FN`` is ``f8e4m3fn``);
``tuple<...>`` a tuple, ``!stablehlo.token`` a token.  A bounded dynamic size
(``tensor<?x4xf32, #stablehlo.bounds<10, ?>>``) is a dynamic dimension of
its bound (``f32[<=10,4]``); a ``?`` without a bound cannot be compiled
ahead of its size and is refused.
"""
from __future__ import annotations

import re

import numpy as np

from ...errors import UnsupportedError
from ...shape import PrimitiveType, Shape
from .syntax import Dense, DialectAttr

__all__ = ["to_shape", "element_type", "dense_literal", "TypeProblem"]


class TypeProblem(ValueError):
    """A type or literal the importer cannot represent (the caller adds the location)."""


_INT = re.compile(r"(s|u)?i([0-9]+)$")


def element_type(name) -> PrimitiveType:
    """The PrimitiveType of an MLIR element type (``f32``, ``ui8``, ``complex<f32>`` ...)."""
    if isinstance(name, tuple):                       # ("complex", inner)
        inner = name[1]
        if inner == "f32":
            return PrimitiveType.C64
        if inner == "f64":
            return PrimitiveType.C128
        raise UnsupportedError(f"complex<{inner}>", "XLA has complex<f32> and complex<f64>")
    m = _INT.match(name)
    if m:
        bits = int(m.group(2))
        if bits == 1 and m.group(1) is None:
            return PrimitiveType.PRED
        kind = "U" if m.group(1) == "u" else "S"
        try:
            return PrimitiveType[f"{kind}{bits}"]
        except KeyError:
            raise UnsupportedError(name, f"no XLA element type of {bits} bits") from None
    try:
        return PrimitiveType.from_name(name.lower())
    except (KeyError, ValueError):
        raise UnsupportedError(name, "element type") from None


def _bounds(encoding) -> list | None:
    if encoding is None:
        return None
    if isinstance(encoding, DialectAttr) and encoding.name in ("#stablehlo.bounds", "#stablehlo.type_extensions",
                                                               "#mhlo.type_extensions"):
        body = encoding.body or ""
        m = re.search(r"bounds\s*=\s*\[([^\]]*)\]", body)
        items = (m.group(1) if m else body).split(",")
        return [None if s.strip() in ("?", "") else int(s) for s in items]
    raise UnsupportedError(f"tensor encoding {encoding.name}", "only #stablehlo.bounds")


def to_shape(t, layout=None) -> Shape:
    """The Shape of a parsed type (``xlac.hlo.stablehlo.syntax`` tuples)."""
    kind = t[0]
    if kind == "tensor":
        _, dims, elt, encoding = t[:4]
        et = element_type(elt)
        if None not in dims:
            return Shape(et, dims) if layout is None else Shape.array(et, dims, layout)
        bounds = _bounds(encoding)
        out, dynamic = [], []
        for k, d in enumerate(dims):
            if d is not None:
                out.append(d)
                dynamic.append(False)
            elif bounds is not None and k < len(bounds) and bounds[k] is not None:
                out.append(bounds[k])
                dynamic.append(True)
            else:
                raise UnsupportedError("unbounded dynamic dimension",
                                       f"dimension {k} of {format_type(t)} has no #stablehlo.bounds")
        return Shape(et, out, dynamic_dimensions=dynamic)
    if kind == "tuple":
        return Shape.tuple([to_shape(e) for e in t[1]])
    if kind == "token":
        return Shape.token()
    if kind == "func":
        raise TypeProblem(f"a function type {format_type(t)} where a value type belongs")
    raise UnsupportedError(f"type {t[1]}")


def format_type(t) -> str:
    kind = t[0]
    if kind == "tensor":
        dims, elt = t[1], t[2]
        e = f"complex<{elt[1]}>" if isinstance(elt, tuple) else elt
        return "tensor<" + "".join(("?" if d is None else str(d)) + "x" for d in dims) + e + ">"
    if kind == "tuple":
        return "tuple<" + ", ".join(format_type(e) for e in t[1]) + ">"
    if kind == "token":
        return "!stablehlo.token"
    if kind == "func":
        return "(" + ", ".join(map(format_type, t[1])) + ") -> (" + ", ".join(map(format_type, t[2])) + ")"
    return str(t[1])


def _flatten(v, out: list) -> None:
    if isinstance(v, list):
        for x in v:
            _flatten(x, out)
    else:
        out.append(v)


def _bits_dtype(nbits: int):
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[nbits]


def _float_values(texts: list, dtype: np.dtype) -> np.ndarray:
    """Float elements: decimal texts, or ``0x...`` bit patterns (NaN payloads, inf)."""
    if not any(isinstance(s, str) and s.lower().startswith(("0x", "-0x")) for s in texts):
        return np.array([float(s) for s in texts], dtype=np.float64).astype(dtype)
    nbits = dtype.itemsize * 8
    bits = np.empty(len(texts), dtype=_bits_dtype(max(nbits, 8)))
    for k, s in enumerate(texts):
        if s.lower().startswith("0x"):
            bits[k] = int(s, 16)
        else:
            bits[k] = np.array([float(s)], dtype=np.float64).astype(dtype).view(bits.dtype)[0]
    return bits.view(dtype)


def dense_literal(dense: Dense, shape: Shape) -> np.ndarray:
    """The numpy array of a ``dense<...>`` of ``shape`` (a splat, nested lists, or a hex blob)."""
    et, dims = shape.element_type, shape.dimensions
    dtype = shape.dtype
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    value = dense.value
    if isinstance(value, tuple) and value[0] == "blob":
        if not value[1].lower().startswith("0x"):
            raise TypeProblem(f"dense literal string {value[1][:20]!r}: expected 0x and hex digits")
        raw = bytes.fromhex(value[1][2:])
        itemsize = 1 if et is PrimitiveType.PRED else dtype.itemsize
        if len(raw) == itemsize:
            arr = np.frombuffer(raw * count, dtype=np.uint8 if et is PrimitiveType.PRED else dtype)
        elif len(raw) == itemsize * count:
            arr = np.frombuffer(raw, dtype=np.uint8 if et is PrimitiveType.PRED else dtype)
        else:
            raise TypeProblem(f"hex dense literal of {len(raw)} bytes for {shape} ({itemsize * count} bytes)")
        return arr.astype(dtype).reshape(dims)
    texts: list = []
    _flatten(value, texts)
    if len(texts) not in (1, count):
        raise TypeProblem(f"dense literal of {len(texts)} elements for {shape} ({count} elements)")
    if et is PrimitiveType.PRED:
        arr = np.array([t == "true" or (t not in ("false",) and float(t) != 0) for t in texts], dtype=np.bool_)
    elif et.is_complex:
        part = np.float32 if et is PrimitiveType.C64 else np.float64
        pairs = [t if isinstance(t, tuple) else ("complex", t, "0") for t in texts]
        re_ = _float_values([p[1] for p in pairs], np.dtype(part))
        im = _float_values([p[2] for p in pairs], np.dtype(part))
        arr = (re_.astype(dtype) + 1j * im.astype(dtype)).astype(dtype)
    elif et.is_float:
        arr = _float_values(texts, dtype)
    else:
        ints = [int(t, 0) for t in texts]
        info = np.iinfo(dtype) if dtype.kind in "iu" else None
        if info is not None:
            bits = dtype.itemsize * 8
            ints = [v % (1 << bits) if v < 0 and dtype.kind == "u" else v for v in ints]
        arr = np.array(ints, dtype=object).astype(dtype)
    if len(texts) == 1 and count != 1:
        return np.full(dims, arr[0], dtype=dtype)
    return arr.reshape(dims)
