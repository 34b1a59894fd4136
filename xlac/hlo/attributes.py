"""Attribute kinds: how each kind of attribute value is read from HLO text and written back.

An :class:`AttrKind` pairs a parse function (given the parser: ``p.integer()``,
``p.expect("{")``, ...) with a format function, so a kind's reading and
writing live side by side.  The op definitions (``xlac.hlo.opcodes``) give
every attribute of every opcode its kind; the parser reads values with it and
the printer writes them with it, so printed text parses back to the same
attributes.  Values of kind :data:`RAW` (and attributes no definition
names, such as ``metadata`` or ``sharding``) are kept as their text
(:class:`xlac.hlo.ir.Raw`), verbatim.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from .collectives import DeviceGroupError, IotaGroups, ReplicaGroups, format_pairs, mesh_axes_groups

if TYPE_CHECKING:            # annotations only: the parser builds on this module
    from .parser import Parser

__all__ = ["Raw", "AttrKind", "CompRef", "INTS", "INT", "FLOAT", "ENUM", "BOOL", "SLICE", "PADDING",
           "COMPUTATION", "COMPUTATIONS", "RAW", "WINDOW", "DIM_LABELS", "RAW_KINDS", "format_int_list",
           "REPLICA_GROUPS", "SOURCE_TARGET_PAIRS", "SHAPE"]


@dataclass(frozen=True)
class Raw:
    """An attribute value xlac does not interpret, kept as HLO text for printing."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, eq=False)
class AttrKind:
    """How one kind of attribute value is read (``parse(parser)``) and written (``format(value)``).

    Each kind is one object (the constants below), compared by identity: the
    printer's ``kind not in RAW_KINDS`` ran the generated field-by-field
    ``__eq__`` three times per attribute printed (30k times to fingerprint a
    training step's kernels)."""

    name: str
    parse: Callable[["Parser"], object]
    format: Callable[[object], str]
    allow_empty: bool = False


@dataclass(frozen=True)
class CompRef:
    """A computation named in an attribute, resolved once the whole module is read."""

    name: str
    pos: int


#: An int list as XLA and jax print it (``{0,1}``, ``{}``): no blanks, at most
#: 18 digits a number (so it fits int64).  Two thirds of a training step's
#: attributes are such lists; anything else (blanks, a sign, a bad number)
#: goes through the scanner, which also says what is wrong.
_PLAIN_INT_LIST_RE = re.compile(r"\{(-?[0-9]{1,18}(?:,-?[0-9]{1,18})*)?\}", re.ASCII)


def _parse_int_list(p: "Parser") -> tuple:
    plain = _PLAIN_INT_LIST_RE.fullmatch(p.text, p.pos, p.end)
    if plain is not None:
        p.pos = p.end
        return tuple(map(int, plain.group(1).split(","))) if plain.group(1) else ()
    p.expect("{")
    out = []
    if not p.accept("}"):
        while True:
            out.append(p.integer())
            if p.accept("}"):
                break
            p.expect(",", "',' or '}'")
    return tuple(out)


def _parse_slice(p: "Parser") -> tuple:
    # slice={[start:limit], [start:limit:stride]}: stride defaults to 1.
    p.expect("{")
    out = []
    if not p.accept("}"):
        while True:
            p.expect("[")
            start = p.integer()
            p.expect(":")
            limit = p.integer()
            stride = p.integer() if p.accept(":") else 1
            p.expect("]")
            out.append((start, limit, stride))
            if p.accept("}"):
                break
            p.expect(",", "',' or '}'")
    return tuple(out)


def _format_slice(value) -> str:
    # JAX prints [a:b] when the stride is 1; keep that spelling.
    parts = [f"[{a}:{b}]" if s == 1 else f"[{a}:{b}:{s}]" for a, b, s in value]
    return "{" + ", ".join(parts) + "}"


def _parse_padding(p: "Parser") -> tuple:
    # padding=low_high[_interior]x... (of `pad`); a scalar pad has an empty value.
    out = []
    if p.at_end():
        return ()
    while True:
        low = p.integer()
        p.expect("_")
        high = p.integer()
        interior = p.integer() if p.accept("_") else 0
        out.append((low, high, interior))
        if not p.accept("x"):
            return tuple(out)


def _format_padding(value) -> str:
    # XLA omits the interior part when every dimension has none.
    with_interior = any(i for _, _, i in value)
    return "x".join(f"{lo}_{hi}_{i}" if with_interior else f"{lo}_{hi}" for lo, hi, i in value)


def _parse_bool(p: "Parser") -> bool:
    pos = p.skip_ws()
    word = p.word("true or false")
    if word not in ("true", "false"):
        raise p.error(f"expected true or false, found '{word}'", pos)
    return word == "true"


def _parse_comp_ref(p: "Parser"):
    """A computation's name (a :class:`CompRef`), or the computation itself
    written in braces (``to_apply={ x = ... }``, read into a computation)."""
    if p.peek("{"):
        return p.nested_computation()
    name, pos = p.name("computation name (or a computation in braces)")
    return CompRef(name, pos)


def _parse_comp_refs(p: "Parser") -> tuple:
    p.expect("{")
    out = []
    if not p.accept("}"):
        while True:
            out.append(_parse_comp_ref(p))
            if p.accept("}"):
                break
            p.expect(",", "',' or '}'")
    return tuple(out)


def format_int_list(value) -> str:
    return "{" + ",".join(str(int(v)) for v in value) + "}"


def _comp_name(c) -> str:
    return c.name


INTS = AttrKind("int list", _parse_int_list, format_int_list)
INT = AttrKind("int", lambda p: p.integer(), lambda v: str(int(v)))
ENUM = AttrKind("enum word", lambda p: p.word("an enum word"), str)
BOOL = AttrKind("bool", _parse_bool, lambda v: "true" if v else "false")
SLICE = AttrKind("slice", _parse_slice, _format_slice)
PADDING = AttrKind("padding", _parse_padding, _format_padding, allow_empty=True)
COMPUTATION = AttrKind("computation", _parse_comp_ref, _comp_name)
COMPUTATIONS = AttrKind("computation list", _parse_comp_refs,
                        lambda v: "{" + ", ".join(c.name for c in v) + "}")
RAW = AttrKind("raw", None, str)  # the parser keeps the value's text, verbatim
def _format_float(value) -> str:
    # repr: the shortest text that reads back to the same double.
    return repr(float(value))


FLOAT = AttrKind("float", lambda p: p.number(), _format_float)


def _parse_replica_groups(p: "Parser") -> ReplicaGroups:
    """``{{0,1},{2,3}}``, ``{}``, the iota form ``[2,2]<=[4]`` / ``[2,2]<=[2,2]T(1,0)``,
    or the mesh-axes form ``mesh['a'=2,'b'=2] {'b'}`` (read into the list form)."""
    pos = p.skip_ws()
    if p.accept_keyword("mesh"):
        return _parse_mesh_axes_groups(p, pos)
    if p.accept("["):
        num_groups = p.integer()
        p.expect(",")
        group_size = p.integer()
        p.expect("]")
        p.expect("<=", "'<=' of an iota replica group list such as [2,2]<=[4]")
        dims = _ints(p, "[", "]")
        perm = _ints(p, "(", ")") if p.accept("T") else None
        try:
            return ReplicaGroups(None, IotaGroups(num_groups, group_size, tuple(dims),
                                                  None if perm is None else tuple(perm)))
        except DeviceGroupError as e:
            raise p.error(str(e), pos) from None
    return ReplicaGroups(_parse_int_list_list(p, "replica group"))


def _ints(p: "Parser", opening: str, closing: str) -> list:
    """``[1,2,3]`` (with ``opening``/``closing`` brackets; ``opening`` "" when
    already read): the integers."""
    if opening:
        p.expect(opening)
    values = [p.integer()]
    while p.accept(","):
        values.append(p.integer())
    p.expect(closing)
    return values


def _axis_name(p: "Parser") -> str:
    """A mesh axis name, bare or quoted (``a``, ``'a'``)."""
    pos = p.skip_ws()
    if p.text.startswith(("'", '"'), pos):
        end = p._string_end(pos)
        p.pos = end
        return p.text[pos + 1:end - 1]
    return p.word("a mesh axis name")


def _parse_mesh_axes_groups(p: "Parser", pos: int) -> ReplicaGroups:
    """After ``mesh``: ``['a'=2,'b'=2]``, optionally ``, device_ids=(ids)`` (a
    list of ids, or the iota form ``[2,2]T(1,0)``), then ``{'b','a':(1)2}``."""
    p.expect("[", "'[' opening the mesh axes")
    mesh = []
    while True:
        name = _axis_name(p)
        p.expect("=")
        mesh.append((name, p.integer()))
        if p.accept("]"):
            break
        p.expect(",", "',' or ']'")
    device_ids = None
    if p.accept(","):                       # (the value goes on past a comma only before device_ids)
        p.expect("device_ids")
        p.expect("=")
        p.expect("(")
        if p.peek("["):                     # the iota form [2,2]T(1,0)
            reshape = _ints(p, "[", "]")
            perm = _ints(p, "(", ")") if p.accept("T") else list(range(len(reshape)))
            if sorted(perm) != list(range(len(reshape))):
                raise p.error(f"device_ids: T{tuple(perm)} is not a permutation of {len(reshape)} dimensions", pos)
            device_ids = np.arange(math.prod(reshape)).reshape(reshape).transpose(perm).reshape(-1).tolist()
            p.expect(")")
        else:                               # the ids listed: 3,2,1,0
            device_ids = _ints(p, "", ")")
    p.expect("{", "'{' opening the grouped mesh axes")
    axes = []
    while True:
        name = _axis_name(p)
        pre = size = None
        if p.accept(":"):
            p.expect("(")
            pre = p.integer()
            p.expect(")")
            size = p.integer()
        axes.append((name, pre, size))
        if p.accept("}"):
            break
        p.expect(",", "',' or '}'")
    try:
        return ReplicaGroups(mesh_axes_groups(mesh, device_ids, axes))
    except DeviceGroupError as e:
        raise p.error(str(e), pos) from None


def _parse_int_list_list(p: "Parser", what: str) -> tuple:
    p.expect("{", f"'{{' opening the list of {what}s")
    out = []
    if not p.accept("}"):
        while True:
            out.append(_parse_int_list(p))
            if p.accept("}"):
                break
            p.expect(",", "',' or '}'")
    return tuple(out)


def _parse_pairs(p: "Parser") -> tuple:
    pos = p.skip_ws()
    pairs = _parse_int_list_list(p, "source-target pair")
    for pair in pairs:
        if len(pair) != 2:
            raise p.error(f"source-target pair {{{','.join(map(str, pair))}}} must have 2 ids "
                          "(source, target)", pos)
    return pairs


def _format_replica_groups(value) -> str:
    return str(ReplicaGroups.of(value))


#: ``replica_groups``: a :class:`xlac.hlo.collectives.ReplicaGroups`, printed in the form it was read.
REPLICA_GROUPS = AttrKind("replica groups", _parse_replica_groups, _format_replica_groups)
#: ``source_target_pairs={{0,1},{1,2}}``: a tuple of (source, target) pairs.
SOURCE_TARGET_PAIRS = AttrKind("source-target pairs", _parse_pairs, format_pairs)

#: A shape with its layout (``outfeed_shape=(f32[2]{0}, s32[])``): an :class:`xlac.shape.Shape`.
SHAPE = AttrKind("shape", lambda p: p.shape(), str)

#: Kept as text, as XLA prints it; read where it is used (``xlac.hlo.window``).
WINDOW = AttrKind("window", None, str)
DIM_LABELS = AttrKind("dim labels", None, str)
RAW_KINDS = (RAW, WINDOW, DIM_LABELS)
