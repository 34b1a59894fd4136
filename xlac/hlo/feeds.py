"""Infeed and outfeed: what they transfer, and how one transfer names itself.

``infeed(token) -> (data, token[])`` reads one value from the device's infeed
stream; ``outfeed(data, token) -> token[]`` writes one to its outfeed stream,
laid out as its ``outfeed_shape`` (the operand's shape with the layout the
data is transferred in).  The data is an array or a tuple of arrays: nested
tuples are not supported (spec: *Infeed*), and an empty tuple transfers
nothing.

Every stage agrees on how a value moves: leaf by leaf, tuple element 0 first
(XLA:CPU's order), each leaf one call of the run options' ``infeed`` /
``outfeed`` service with the leaf's buffer, its byte size and a *transfer
descriptor* (:func:`descriptor`): the leaf's shape as HLO text with its
layout, then — past that string's NUL, for services that want them — the
instruction's name, the shape of all its data, and the leaf's index, each
NUL-terminated.  ``runtime/xlac_runtime.h`` documents it for C services.

The numpy values that go in and come out are checked here
(:func:`check_value`): an array of exactly the leaf's dtype and dimensions
(a Python scalar takes the leaf's dtype), a tuple of them for a tuple.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..shape import Shape, parse_shape

__all__ = ["FeedInstruction", "label", "data_shape", "data_leaves", "quote", "descriptor", "Transfer",
           "parse_descriptor", "check_value", "matches", "describe", "feed_instructions"]


@dataclass(frozen=True)
class FeedInstruction:
    """An infeed or outfeed of a module: its opcode, name and data shape."""

    opcode: str
    name: str
    shape: Shape

    def __str__(self) -> str:
        return label(self.opcode, self.name, self.shape)


def label(opcode: str, name: str, shape) -> str:
    """How messages name a transfer: ``infeed infeed.3 of (f32[2]{0}, s32[])``."""
    return f"{opcode} {name} of {shape}"


def data_shape(inst) -> Shape:
    """The data ``inst`` transfers: an infeed's result element 0, an outfeed's
    ``outfeed_shape`` (its operand's shape when the attribute is missing)."""
    if inst.opcode == "infeed":
        return inst.shape.tuple_shapes[0]
    given = inst.attrs.get("outfeed_shape")
    if given is None:
        return inst.operands[0].shape
    return given if isinstance(given, Shape) else parse_shape(str(given))


def data_leaves(shape: Shape) -> list[Shape]:
    """The arrays of a data shape, in transfer order."""
    return list(shape.tuple_shapes) if shape.is_tuple else [shape]


def feed_instructions(module) -> list[FeedInstruction]:
    """Every infeed and outfeed of ``module``, computation by computation in program order."""
    return [FeedInstruction(inst.opcode, inst.name, data_shape(inst))
            for comp in module.computations for inst in comp.instructions
            if inst.opcode in ("infeed", "outfeed")]


# -- HLO string attributes ---------------------------------------------------------------

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quote(text: str) -> str:
    """``text`` as an HLO string literal (``infeed_config="..."``), escaped as XLA's CEscape does."""
    if not isinstance(text, str):
        raise TypeError(f"config must be a str, got {type(text).__name__}")
    out = []
    for c in text:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\{ord(c):03o}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


# -- transfer descriptors -------------------------------------------------------------------

@dataclass(frozen=True)
class Transfer:
    """One leaf of one transfer, as a service reads it from its descriptor."""

    leaf_shape: str     # HLO text of the leaf's buffer, with its layout
    instruction: str    # the infeed's or outfeed's name
    data_shape: str     # HLO text of all the instruction's data
    leaf: int           # index of the leaf in the data (0 for an array)

    @property
    def label(self) -> str:
        return self.instruction or "(unnamed)"


def descriptor(leaf_shape: Shape, instruction: str, data: Shape, leaf: int) -> bytes:
    """The bytes behind the service's ``shape`` argument (see the module docstring)."""
    fields = (str(leaf_shape), instruction, str(data), str(int(leaf)))
    return b"".join(f.encode("utf-8") + b"\0" for f in fields)


def parse_descriptor(raw: bytes) -> Transfer:
    """Read :func:`descriptor`'s bytes (``raw`` holds at least its four strings)."""
    parts = raw.split(b"\0")
    if len(parts) < 4:
        raise ValueError(f"bad transfer descriptor {raw!r}")
    leaf_shape, name, data, leaf = (p.decode("utf-8", "replace") for p in parts[:4])
    return Transfer(leaf_shape, name, data, int(leaf))


# -- values ------------------------------------------------------------------------------------

def describe(value) -> str:
    """A short description of a value given to a feed (for error messages)."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(describe(v) for v in value) + ")"
    if isinstance(value, np.generic):
        return f"{value.dtype} scalar"
    return type(value).__name__


def _check_leaf(value, shape: Shape, what: str) -> np.ndarray:
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        a = np.asarray(value).astype(shape.dtype)
        if not (a == value or (a != a and value != value)):
            raise TypeError(f"{what}: expected {shape}, got Python {type(value).__name__} {value!r}")
    else:
        try:
            a = np.asarray(value) if value is not None else None
        except (TypeError, ValueError):
            a = None
        if a is None or a.dtype == object:
            raise TypeError(f"{what}: expected an array {shape}, got {describe(value)}")
        if a.dtype != shape.dtype:
            raise TypeError(f"{what}: expected dtype {shape.dtype} ({shape}), got {a.dtype}")
    if a.shape != tuple(shape.dimensions):
        raise ValueError(f"{what}: expected shape {tuple(shape.dimensions)} ({shape}), got {a.shape}")
    return np.array(a, order="C", copy=True)


def check_value(value, shape: Shape, what: str):
    """``value`` as the feed holds it for data of ``shape``: a fresh C-ordered
    array (a tuple of them for a tuple), or ``TypeError`` (wrong kind or dtype)
    / ``ValueError`` (wrong dimensions or tuple size) starting with ``what``."""
    if not shape.is_tuple:
        return _check_leaf(value, shape, what)
    n = len(shape.tuple_shapes)
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{what}: expected a tuple {shape}, got {describe(value)}")
    if len(value) != n:
        raise ValueError(f"{what}: expected a tuple of {n} element(s) {shape}, got {len(value)}: "
                         f"{describe(value)}")
    return tuple(_check_leaf(v, s, f"{what}, element {i}")
                 for i, (v, s) in enumerate(zip(value, shape.tuple_shapes)))


def matches(value, shape: Shape) -> bool:
    """Whether a checked value (:func:`check_value`'s result) has ``shape``'s dtypes and dimensions."""
    if shape.is_tuple:
        return (isinstance(value, tuple) and len(value) == len(shape.tuple_shapes)
                and all(matches(v, s) for v, s in zip(value, shape.tuple_shapes)))
    return (isinstance(value, np.ndarray) and value.dtype == shape.dtype
            and value.shape == tuple(shape.dimensions))
