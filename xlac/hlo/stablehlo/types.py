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
from ...shape import PrimitiveType, Shape, round_float
from .syntax import Dense, DialectAttr, int_text

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
        if len(m.group(2)) > 4:                       # i99999...: no such type (and no int() of it)
            raise UnsupportedError(name[:24], "no XLA element type of that many bits")
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


def _is_hex(s) -> bool:
    return isinstance(s, str) and s.lower().lstrip("+-").startswith("0x")


def _shown(s) -> str:
    s = str(s)
    return s if len(s) <= 24 else f"{s[:20]}... ({len(s)} characters)"


def _type_name(et: PrimitiveType) -> str:
    """The MLIR spelling of an element type, for messages (``i8``, ``ui8``, ``f16``)."""
    if et.is_integral:
        return f"{'i' if et.dtype.kind == 'i' else 'ui'}{et.bit_width}"
    return et.value


def _float_values(texts: list, et: PrimitiveType) -> np.ndarray:
    """Float elements of type ``et``, as MLIR's parser reads them: a decimal is
    rounded once to the type (past its largest finite value: inf, or NaN or
    the largest value for types without inf; no numpy warning), ``0x...`` is
    the element's bit pattern (NaN payloads, inf) and must fit its width."""
    dtype = et.dtype
    out = np.empty(len(texts), dtype=dtype)
    decimals = [k for k, t in enumerate(texts) if not _is_hex(t)]
    if decimals:
        values = []
        for k in decimals:
            try:
                values.append(float(texts[k]))
            except (TypeError, ValueError):
                raise TypeProblem(f"expected a {_type_name(et)} element, found {_shown(texts[k])}") from None
        out[decimals] = round_float(values, et)
    hexes = sorted(set(range(len(texts))) - set(decimals))
    if hexes:
        bits = out.view(_bits_dtype(max(dtype.itemsize * 8, 8)))
        for k in hexes:
            t = texts[k]
            if t.startswith("-") or len(t) > 2 + 16:
                raise TypeProblem(f"hexadecimal float constant {_shown(t)} out of range for {_type_name(et)}")
            v = int_text(t)
            if v >= 1 << et.bit_width:
                raise TypeProblem(f"hexadecimal float constant {t} out of range for {_type_name(et)} "
                                  f"({et.bit_width} bits)")
            bits[k] = v
    return out


def _int_values(texts: list, et: PrimitiveType) -> np.ndarray:
    """Integer elements of type ``et``, as MLIR's parser reads them: a signless
    ``iN`` takes -2^(N-1) .. 2^N - 1 (the upper half wraps to negative), an
    unsigned ``uiN`` 0 .. 2^N - 1; anything else is an error (numpy would
    raise OverflowError, or wrap a negative)."""
    bits = et.bit_width
    signed = et.dtype.kind == "i"
    lo, hi = (-(1 << (bits - 1)) if signed else 0), (1 << bits) - 1
    values = []
    for t in texts:
        if not isinstance(t, str) or not re.fullmatch(r"[-+]?(?:0[xX][0-9a-fA-F]+|[0-9]+)", t):
            raise TypeProblem(f"expected integer elements of {_type_name(et)}, found {_shown(t)}")
        digits = t.lstrip("+-")
        v = int_text(t) if len(digits) <= 40 else None      # int() of thousands of digits: slow, then refused
        if v is None or not lo <= v <= hi:
            if v is not None and v < 0 and not signed:
                raise TypeProblem(f"expected unsigned integer elements of {_type_name(et)}, found {_shown(t)}")
            raise TypeProblem(f"integer constant {_shown(t)} out of range for {_type_name(et)} ([{lo}, {hi}])")
        values.append(v - (1 << bits) if signed and v >= 1 << (bits - 1) else v)
    return np.array(values, dtype=object).astype(et.dtype)


def _pred_values(texts: list) -> np.ndarray:
    """``i1`` elements: true, false, or the integers -1, 0, 1 (MLIR's range of i1)."""
    out = []
    for t in texts:
        if t in ("true", "false"):
            out.append(t == "true")
        elif isinstance(t, str) and t.lstrip("+-") in ("0", "1"):
            out.append(t.lstrip("+-") == "1")
        else:
            raise TypeProblem(f"expected true, false, 0 or 1 for an i1 element, found {_shown(t)}")
    return np.array(out, dtype=np.bool_)


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
        arr = _pred_values(texts)
    elif et.is_complex:
        part = PrimitiveType.F32 if et is PrimitiveType.C64 else PrimitiveType.F64
        pairs = [t if isinstance(t, tuple) else ("complex", t, "0") for t in texts]
        arr = np.empty(len(pairs), dtype=dtype)
        arr.real = _float_values([p[1] for p in pairs], part)
        arr.imag = _float_values([p[2] for p in pairs], part)
    elif et.is_float:
        arr = _float_values(texts, et)
    else:
        arr = _int_values(texts, et)
    if len(texts) == 1 and count != 1:
        return np.full(dims, arr[0], dtype=dtype)
    return arr.reshape(dims)
