"""HLO text -> :class:`HloModule` (``xlac.parse_hlo``).

Reads XLA's HLO text as JAX prints it (short form) and as XLA dumps it (long
form: ``%`` name prefixes, operand shapes before operand names, computation
signatures, ``/*index=5*/`` comments).  The grammar, after the ``::=`` comments
of XLA's ``hlo_parser.cc``::

    module       ::= 'HloModule' name (',' attribute)* computation+
    computation  ::= ['ENTRY'] name [signature] '{' instruction+ '}'
                     [',' 'execution_thread=' string]
    signature    ::= '(' [name ':' shape (',' name ':' shape)*] ')' '->' shape
    instruction  ::= ['ROOT'] name '=' shape opcode '(' operands ')' (',' attribute)*
    operands     ::= [[shape] name (',' [shape] name)*]
                   | integer                       (parameter)
                   | literal                       (constant)
    attribute    ::= attr_name '=' value

The parser is a recursive-descent scanner over the text with a position (no
separate token list): shapes are read by :func:`xlac.shape.parse_shape_prefix`,
everything else by small regexes.  Each attribute value is interpreted by the
*kind* its name has in :data:`ATTR_KINDS` (int list, int, enum word, bool,
slice, padding, computation reference(s), or raw text); the printer formats
values through the same table, so a kind's parse and format live side by side.

Attribute values must end on the line they start on (XLA prints one instruction
per line); an unclosed bracket at the end of a line is reported there, which
gives a precise error instead of swallowing the rest of the module.

Every malformed input raises :class:`xlac.errors.HloParseError` with the 1-based
line and column of the offending token.
"""
from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import HloParseError
from ..shape import PrimitiveType, Shape, parse_shape_prefix
from .ir import HloComputation, HloInstruction, HloModule, Raw
from .opcodes import OPCODES

__all__ = ["parse_hlo", "ATTR_KINDS", "attr_kind", "AttrKind", "format_attr_value",
           "format_literal", "format_scalar"]

_NAME_RE = re.compile(r"%?([A-Za-z_][\w.\-]*)")
_WORD_RE = re.compile(r"[A-Za-z_][\w.\-]*")
_INT_RE = re.compile(r"[-+]?\d+")
# A scalar literal token: number, inf/nan (XLA may print a NaN payload), bool.
_SCALAR_RE = re.compile(
    r"[-+]?(?:inf|nan(?:\(0x[0-9a-fA-F]+\))?|true|false|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
    r"(?![\w.])")
# The start of a shape, as opposed to an instruction name: `f32[`, `token[` or `(`.
_SHAPE_START_RE = re.compile(r"\(|[a-z]+\d*\[")


def parse_hlo(text: str) -> HloModule:
    """Parse HLO text into an :class:`HloModule`.

    Raises :class:`HloParseError` (with ``line`` and ``column``) on malformed input.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_hlo expects HLO text (str), got {type(text).__name__}")
    parser = _Parser(text)
    try:
        return parser.module()
    except HloParseError:
        raise
    except Exception as e:  # a parser bug or pathological input must still say where
        raise parser.error(f"cannot parse HLO text ({type(e).__name__}: {e})") from e


# ----------------------------------------------------------------------------
# Attribute kinds: how each attribute's value is parsed and printed
# ----------------------------------------------------------------------------

@dataclass(frozen=True)
class AttrKind:
    """How one kind of attribute value is read (``parse(parser)``) and written (``format(value)``)."""

    name: str
    parse: Callable[["_Parser"], object]
    format: Callable[[object], str]
    allow_empty: bool = False


@dataclass(frozen=True)
class _CompRef:
    """A computation named in an attribute, resolved once the whole module is read."""

    name: str
    pos: int


def _parse_int_list(p: "_Parser") -> tuple:
    p.expect("{")
    out = []
    if not p.accept("}"):
        while True:
            out.append(p.integer())
            if p.accept("}"):
                break
            p.expect(",", "',' or '}'")
    return tuple(out)


def _parse_slice(p: "_Parser") -> tuple:
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


def _parse_padding(p: "_Parser") -> tuple:
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


def _parse_bool(p: "_Parser") -> bool:
    pos = p.skip_ws()
    word = p.word("true or false")
    if word not in ("true", "false"):
        raise p.error(f"expected true or false, found '{word}'", pos)
    return word == "true"


def _parse_comp_ref(p: "_Parser") -> _CompRef:
    name, pos = p.name("computation name")
    return _CompRef(name, pos)


def _parse_comp_refs(p: "_Parser") -> tuple:
    p.expect("{")
    out = []
    if not p.accept("}"):
        while True:
            out.append(_parse_comp_ref(p))
            if p.accept("}"):
                break
            p.expect(",", "',' or '}'")
    return tuple(out)


def _format_int_list(value) -> str:
    return "{" + ",".join(str(int(v)) for v in value) + "}"


def _comp_name(c) -> str:
    return c.name


INTS = AttrKind("int list", _parse_int_list, _format_int_list)
INT = AttrKind("int", lambda p: p.integer(), lambda v: str(int(v)))
ENUM = AttrKind("enum word", lambda p: p.word("an enum word"), str)
BOOL = AttrKind("bool", _parse_bool, lambda v: "true" if v else "false")
SLICE = AttrKind("slice", _parse_slice, _format_slice)
PADDING = AttrKind("padding", _parse_padding, _format_padding, allow_empty=True)
COMPUTATION = AttrKind("computation", _parse_comp_ref, _comp_name)
COMPUTATIONS = AttrKind("computation list", _parse_comp_refs,
                        lambda v: "{" + ", ".join(c.name for c in v) + "}")
RAW = AttrKind("raw", None, str)  # parsed specially: the value's text, verbatim

#: Attribute name -> kind.  Names not listed fall back to suffix rules in
#: :func:`attr_kind` (``*_dims``/``*_dimensions`` are int lists, ``*_dimension``
#: an int) and then to :data:`RAW`.
ATTR_KINDS: dict[str, AttrKind] = {
    **{n: INTS for n in ("dimensions", "slice_sizes", "dynamic_slice_sizes", "fft_length",
                         "start_index_map")},
    **{n: INT for n in ("index", "iota_dimension", "exponent_bits", "mantissa_bits", "k",
                        "index_vector_dim", "feature_group_count", "batch_group_count",
                        "channel_id", "feature_index")},
    **{n: ENUM for n in ("direction", "type", "fft_type", "distribution", "algorithm", "kind")},
    **{n: BOOL for n in ("largest", "is_stable", "indices_are_sorted", "unique_indices",
                         "constrain_layout", "use_global_device_ids", "is_host_transfer")},
    "slice": SLICE,
    **{n: COMPUTATION for n in ("to_apply", "calls", "condition", "body", "select", "scatter",
                                "true_computation", "false_computation", "comparator")},
    "branch_computations": COMPUTATIONS,
}

#: Kinds that depend on the opcode: `padding` is typed only on `pad` (convolution
#: and reduce-window carry their padding inside the raw `window={...}`).
_OPCODE_ATTR_KINDS: dict[tuple[str, str], AttrKind] = {("pad", "padding"): PADDING}


def attr_kind(opcode: str, name: str) -> AttrKind:
    """The kind of attribute ``name`` on an instruction with ``opcode``."""
    kind = _OPCODE_ATTR_KINDS.get((opcode, name)) or ATTR_KINDS.get(name)
    if kind is not None:
        return kind
    if name.endswith(("_dims", "_dimensions")):
        return INTS
    if name.endswith("_dimension"):
        return INT
    return RAW


def format_attr_value(opcode: str, name: str, value) -> str:
    """Attribute value -> HLO text (the inverse of the parser's reading)."""
    if isinstance(value, Raw):
        return value.text
    kind = attr_kind(opcode, name)
    if kind is not RAW:
        return kind.format(value)
    return _format_by_type(value)


def _format_by_type(value) -> str:
    # An attribute a pass set under a name the table does not know: go by its type.
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, HloComputation):
        return value.name
    if isinstance(value, tuple):
        if value and all(isinstance(v, HloComputation) for v in value):
            return "{" + ", ".join(v.name for v in value) + "}"
        if all(isinstance(v, (int, np.integer)) for v in value):
            return _format_int_list(value)
    return str(value)


# ----------------------------------------------------------------------------
# Literals (the operand of `constant`)
# ----------------------------------------------------------------------------

def format_scalar(value, element_type: PrimitiveType) -> str:
    """One element as XLA prints it; the parser reads it back to the same value."""
    if element_type.is_pred:
        return "true" if value else "false"
    if element_type.is_integral:
        return str(int(value))
    if element_type.is_complex:
        c = complex(value)
        part = element_type.component_type
        return f"({format_scalar(c.real, part)}, {format_scalar(c.imag, part)})"
    return _format_float(value, element_type.dtype)


def _format_float(value, dtype: np.dtype) -> str:
    x = dtype.type(value)
    f = float(x)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if dtype.kind == "f":
        s = str(x)  # numpy prints the shortest text that round-trips the dtype
    else:
        # bf16 (ml_dtypes) prints with %g's 6 digits; find the shortest that round-trips.
        s = next(t for t in (f"{f:.{p}g}" for p in range(1, 18)) if dtype.type(float(t)) == x)
    # JAX prints integral floats without a fraction: constant(1), not constant(1.0).
    return s[:-2] if s.endswith(".0") else s


def format_literal(value, shape: Shape, elided: bool = False) -> str:
    """The text inside ``constant(...)`` for ``value`` of ``shape``."""
    if elided:
        return "{...}"
    if shape.is_tuple:
        return "(" + ", ".join(format_literal(v, s) for v, s in zip(value, shape.tuple_shapes)) + ")"
    arr = np.asarray(value)
    et = shape.element_type
    if arr.ndim == 0:
        return format_scalar(arr[()], et)

    def nested(a: np.ndarray) -> str:
        if a.ndim == 1:
            return "{" + ", ".join(format_scalar(v, et) for v in a) + "}"
        if a.shape[0] == 0:
            return "{}"
        return "{ " + ", ".join(nested(sub) for sub in a) + " }"

    return nested(arr)


# ----------------------------------------------------------------------------
# The parser
# ----------------------------------------------------------------------------

class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.end = len(text)  # narrowed while one attribute value is read
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        # (instruction, attribute name, _CompRef or tuple of them), resolved at the end.
        self._comp_refs: list = []

    # -- positions and errors ----------------------------------------------------
    def line_col(self, pos: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._line_starts, pos) - 1
        return i + 1, pos - self._line_starts[i] + 1

    def error(self, message: str, pos: int | None = None) -> HloParseError:
        line, col = self.line_col(self.pos if pos is None else pos)
        return HloParseError(message, line, col)

    def _where(self, pos: int) -> str:
        line, col = self.line_col(pos)
        return f"line {line}, column {col}"

    def _found(self) -> str:
        """What is at the current position, for 'expected X, found Y' messages."""
        self.skip_ws()
        if self.pos >= self.end:
            return "end of line" if self.end < len(self.text) else "end of input"
        m = _WORD_RE.match(self.text, self.pos, self.end) or _INT_RE.match(self.text, self.pos, self.end)
        return f"'{m.group(0) if m else self.text[self.pos]}'"

    # -- scanning ----------------------------------------------------------------
    def skip_ws(self) -> int:
        """Skip blanks and comments; returns the new position."""
        text, end = self.text, self.end
        pos = self.pos
        while pos < end:
            c = text[pos]
            if c.isspace():
                pos += 1
            elif text.startswith("/*", pos, end):
                close = text.find("*/", pos + 2, end)
                if close < 0:
                    raise self.error("unterminated comment '/*'", pos)
                pos = close + 2
            elif text.startswith("//", pos, end):
                nl = text.find("\n", pos, end)
                pos = end if nl < 0 else nl + 1
            else:
                break
        self.pos = pos
        return pos

    def skip_blanks(self) -> int:
        """Skip spaces and tabs only: an attribute value starts on its name's line."""
        while self.pos < self.end and self.text[self.pos] in " \t":
            self.pos += 1
        return self.pos

    def at_end(self) -> bool:
        return self.skip_ws() >= self.end

    def peek(self, s: str) -> bool:
        self.skip_ws()
        return self.text.startswith(s, self.pos, self.end)

    def accept(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, what: str | None = None) -> int:
        """Consume ``s``; returns its position."""
        pos = self.skip_ws()
        if not self.accept(s):
            raise self.error(f"expected {what or repr(s)}, found {self._found()}", pos)
        return pos

    def accept_keyword(self, word: str) -> bool:
        self.skip_ws()
        m = _WORD_RE.match(self.text, self.pos, self.end)
        if m and m.group(0) == word:
            self.pos = m.end()
            return True
        return False

    def name(self, what: str) -> tuple[str, int]:
        """A name with an optional ``%`` prefix (dropped); returns (name, position)."""
        pos = self.skip_ws()
        m = _NAME_RE.match(self.text, pos, self.end)
        if not m:
            raise self.error(f"expected {what}, found {self._found()}", pos)
        self.pos = m.end()
        return m.group(1), pos

    def word(self, what: str) -> str:
        pos = self.skip_ws()
        m = _WORD_RE.match(self.text, pos, self.end)
        if not m:
            raise self.error(f"expected {what}, found {self._found()}", pos)
        self.pos = m.end()
        return m.group(0)

    def integer(self) -> int:
        pos = self.skip_ws()
        m = _INT_RE.match(self.text, pos, self.end)
        if not m:
            raise self.error(f"expected an integer, found {self._found()}", pos)
        self.pos = m.end()
        return int(m.group(0))

    def shape(self) -> Shape:
        pos = self.skip_ws()
        # Shapes never span lines; handing the shape parser one line makes the
        # columns in its messages the real columns.
        line_start = self._line_starts[self.line_col(pos)[0] - 1]
        line_end = self.text.find("\n", pos)
        line_end = len(self.text) if line_end < 0 else line_end
        line = self.text[line_start:min(line_end, self.end)]
        try:
            shape, end = parse_shape_prefix(line, pos - line_start)
        except (ValueError, TypeError, IndexError) as e:
            m = re.search(r"at column (\d+)", str(e))
            col_pos = line_start + int(m.group(1)) - 1 if m else pos
            raise self.error(f"bad shape: {e}", col_pos) from None
        self.pos = line_start + end
        return shape

    def _string_end(self, pos: int) -> int:
        """Position after the quoted string starting at ``pos`` (backslash escapes)."""
        text = self.text
        i = pos + 1
        while i < self.end:
            c = text[i]
            if c == "\\":
                i += 2
            elif c == '"':
                return i + 1
            elif c == "\n":
                break
            else:
                i += 1
        raise self.error("unterminated string", pos)

    def value_end(self, start: int) -> int:
        """End of an attribute value starting at ``start``.

        The value runs to the first ``,`` outside brackets and quotes, the end of
        the line, or a closing bracket that belongs to an enclosing construct.
        Brackets inside it must match and close on the same line.
        """
        text = self.text
        closers = {"}": "{", "]": "[", ")": "("}
        stack: list[tuple[str, int]] = []
        i = start
        while i < self.end:
            c = text[i]
            if c == '"':
                i = self._string_end(i)
                continue
            if c in "{[(":
                stack.append((c, i))
            elif c in closers:
                if not stack:
                    break
                opener, opos = stack.pop()
                if opener != closers[c]:
                    raise self.error(f"'{c}' does not match '{opener}' at {self._where(opos)}", i)
            elif c == "\n" or (c == "," and not stack):
                break
            i += 1
        if stack:
            opener, opos = stack[-1]
            raise self.error(f"unterminated '{opener}'", opos)
        while i > start and text[i - 1].isspace():
            i -= 1
        return i

    # -- module --------------------------------------------------------------------
    def module(self) -> HloModule:
        pos = self.skip_ws()
        if not self.accept_keyword("HloModule"):
            raise self.error(f"expected 'HloModule' at the start of the module, found {self._found()}",
                             pos)
        name, _ = self.name("module name")
        attrs: dict = {}
        while self.accept(","):
            key, value, _ = self.raw_attribute()
            # Recomputed from the entry computation when printing.
            if key != "entry_computation_layout":
                attrs[key] = value

        comps: list[HloComputation] = []
        by_name: dict[str, tuple[HloComputation, int]] = {}
        entry, entry_pos = None, None
        while not self.at_end():
            start = self.pos
            comp, is_entry, name_pos = self.computation()
            if comp.name in by_name:
                raise self.error(f"duplicate computation '{comp.name}' (first defined at "
                                 f"{self._where(by_name[comp.name][1])})", name_pos)
            by_name[comp.name] = (comp, name_pos)
            comps.append(comp)
            if is_entry:
                if entry is not None:
                    raise self.error(f"second ENTRY computation '{comp.name}' (the first is "
                                     f"'{entry.name}' at {self._where(entry_pos)})", start)
                entry, entry_pos = comp, start
        if not comps:
            raise self.error("module has no computations")
        if entry is None:
            if len(comps) > 1:
                raise self.error("no computation is marked ENTRY (needed when a module has "
                                 "several computations)", by_name[comps[0].name][1])
            entry = comps[0]

        self._resolve_comp_refs({n: c for n, (c, _) in by_name.items()})
        module = HloModule(name, comps, entry=entry, attrs=attrs)
        for c in comps:
            c.is_entry = c is entry
            c.compute_users()
        module.sort_computations()
        return module

    def raw_attribute(self) -> tuple[str, Raw, int]:
        key, pos = self.name("attribute name")
        self.expect("=")
        start = self.skip_blanks()
        end = self.value_end(start)
        if end == start:
            raise self.error(f"missing value for attribute '{key}'", start)
        self.pos = end
        return key, Raw(self.text[start:end]), pos

    def _resolve_comp_refs(self, comps: dict[str, HloComputation]) -> None:
        def resolve(ref: _CompRef) -> HloComputation:
            try:
                return comps[ref.name]
            except KeyError:
                raise self.error(f"undefined computation '{ref.name}'", ref.pos) from None

        for inst, key, value in self._comp_refs:
            inst.attrs[key] = (tuple(resolve(r) for r in value) if isinstance(value, tuple)
                               else resolve(value))

    # -- computation -----------------------------------------------------------------
    def computation(self) -> tuple[HloComputation, bool, int]:
        is_entry = self.accept_keyword("ENTRY")
        name, name_pos = self.name("computation name (or ENTRY)")
        if self.peek("("):
            self.signature()
        brace = self.expect("{", f"'{{' to open computation '{name}'")
        scope: dict[str, HloInstruction] = {}
        root: HloInstruction | None = None
        root_pos = None
        while True:
            if self.at_end():
                raise self.error(f"unterminated '{{': computation '{name}' has no closing '}}'",
                                 brace)
            if self.accept("}"):
                break
            inst, is_root, pos = self.instruction(scope, name, brace)
            if is_root:
                if root is not None:
                    raise self.error(f"second ROOT in computation '{name}' (the first is "
                                     f"'{root.name}' at {self._where(root_pos)})", pos)
                root, root_pos = inst, pos
        if not scope:
            raise self.error(f"computation '{name}' has no instructions", brace)
        # XLA may tag a computation with `, execution_thread="..."`; xlac runs one
        # thread, so the tag is read and dropped.
        while self.accept(","):
            self.raw_attribute()
        comp = HloComputation(name, scope.values(), root=root, is_entry=is_entry)
        return comp, is_entry, name_pos

    def signature(self) -> None:
        """``(p0: f32[], p1: s32[]) -> f32[]``: checked, then dropped (the parameters say it)."""
        self.expect("(")
        if not self.accept(")"):
            while True:
                self.name("parameter name")
                self.expect(":")
                self.shape()
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')'")
        self.expect("->")
        self.shape()

    # -- instruction ---------------------------------------------------------------------
    def instruction(self, scope: dict, comp_name: str, brace: int):
        start = self.skip_ws()
        is_root = self.accept_keyword("ROOT")
        name, name_pos = self.name("instruction name (or '}')")
        if not is_root and (name == "ENTRY" or self.peek("{") or self.peek("(")):
            # A computation header where an instruction should be: the '}' is missing.
            raise self.error(f"expected '}}' to close computation '{comp_name}' (opened at "
                             f"{self._where(brace)})", start)
        self.expect("=", f"'=' after instruction name '{name}'")
        if name in scope:
            raise self.error(f"duplicate instruction name '{name}' in computation "
                             f"'{comp_name}'", name_pos)
        shape = self.shape()
        op_pos = self.skip_ws()
        opcode = self.word("opcode")
        info = OPCODES.get(opcode)
        if info is None:
            raise self.error(f"unknown opcode '{opcode}'", op_pos)
        self.expect("(", f"'(' after opcode {opcode}")
        attrs: dict = {}
        operands: list[HloInstruction] = []
        if opcode == "parameter":
            num_pos = self.skip_ws()
            number = self.integer()
            if number < 0:
                raise self.error(f"parameter number must be >= 0, got {number}", num_pos)
            attrs["parameter_number"] = number
        elif opcode == "constant":
            literal, elided = self.literal(shape)
            attrs["literal"] = literal
            if elided:
                attrs["elided"] = True
        else:
            operands = self.operands(scope)
        self.expect(")", "',' or ')'")
        if info.arity is not None and len(operands) != info.arity:
            raise self.error(f"{opcode} takes {info.arity} operand{'s' * (info.arity != 1)}, "
                             f"got {len(operands)}", op_pos)
        inst = HloInstruction(opcode, shape, operands, attrs, name)
        while self.accept(","):
            self.attribute(inst)
        scope[name] = inst
        return inst, is_root, start

    def operands(self, scope: dict) -> list[HloInstruction]:
        out: list[HloInstruction] = []
        if self.peek(")"):
            return out
        while True:
            pos = self.skip_ws()
            declared = None
            if _SHAPE_START_RE.match(self.text, pos, self.end):
                declared = self.shape()  # long form: `f32[2]{0} %x`
            name, name_pos = self.name("operand name")
            inst = scope.get(name)
            if inst is None:
                raise self.error(f"undefined operand '{name}'", name_pos)
            if declared is not None and not declared.compatible(inst.shape):
                raise self.error(f"operand '{name}' is declared {declared} but has shape "
                                 f"{inst.shape}", pos)
            out.append(inst)
            if not self.accept(","):
                return out

    def attribute(self, inst: HloInstruction) -> None:
        key, key_pos = self.name("attribute name")
        if key in inst.attrs:
            raise self.error(f"duplicate attribute '{key}'", key_pos)
        self.expect("=", f"'=' after attribute name '{key}'")
        start = self.skip_blanks()
        end = self.value_end(start)
        kind = attr_kind(inst.opcode, key)
        if end == start and not kind.allow_empty:
            raise self.error(f"missing value for attribute '{key}'", start)
        if kind is RAW:
            value = Raw(self.text[start:end])
            self.pos = end
        else:
            # Read the value with the scanner confined to its extent, so a kind's
            # parser can neither run past it nor leave part of it unread.
            saved_end, self.end = self.end, end
            try:
                value = kind.parse(self)
                if not self.at_end():
                    raise self.error(f"unexpected {self._found()} in the value of attribute "
                                     f"'{key}' ({kind.name})")
            finally:
                self.end = saved_end
            self.pos = end
            if kind is COMPUTATION or kind is COMPUTATIONS:
                self._comp_refs.append((inst, key, value))
        inst.attrs[key] = value

    # -- literals --------------------------------------------------------------------------
    def literal(self, shape: Shape):
        """A constant's literal for ``shape``; returns (value, elided)."""
        pos = self.skip_ws()
        if shape.is_tuple:
            self.expect("(")
            out = []
            for i, sub in enumerate(shape.tuple_shapes):
                if i:
                    self.expect(",", "',' in tuple constant")
                if _SHAPE_START_RE.match(self.text, self.skip_ws(), self.end) and not self.peek("("):
                    self.shape()  # XLA may print each element's shape
                out.append(self.literal(sub)[0])
            self.expect(")", "')' closing the tuple constant")
            return tuple(out), False
        if shape.is_token:
            raise self.error("a token cannot be a constant", pos)
        et = shape.element_type
        dims = shape.dimensions
        if not dims:
            return self._convert([self.scalar_text(et)], et).reshape(()), False
        # `{...}`: XLA elides large constants; keep the shape, remember the elision.
        if self.text.startswith("{", pos, self.end):
            self.pos = pos + 1
            if self.accept("..."):
                self.expect("}")
                return np.zeros(dims, dtype=et.dtype), True
            self.pos = pos
        texts: list = []
        self._array_level(dims, 0, et, texts)
        return self._convert(texts, et).reshape(dims), False

    def _array_level(self, dims: tuple, d: int, et: PrimitiveType, out: list) -> None:
        brace = self.expect("{", f"'{{' of dimension {d} of the constant")
        count = 0
        if self.accept("}"):
            if math.prod(dims[d:]) != 0:
                raise self.error(f"constant dimension {d} has 0 elements, the shape says {dims[d]}",
                                 brace)
            return
        while True:
            if d + 1 < len(dims):
                self._array_level(dims, d + 1, et, out)
            else:
                out.append(self.scalar_text(et))
            count += 1
            if self.accept("}"):
                break
            if self.at_end():
                raise self.error("unterminated '{' in constant", brace)
            self.expect(",", "',' or '}' in constant")
        if count != dims[d]:
            raise self.error(f"constant dimension {d} has {count} elements, the shape says "
                             f"{dims[d]}", brace)

    def scalar_text(self, et: PrimitiveType):
        """One element's text with its position: (text, pos), or a pair of them for complex."""
        pos = self.skip_ws()
        if et.is_complex and self.accept("("):
            re_part = self.scalar_text(et.component_type)
            self.expect(",", "',' in complex constant")
            im_part = self.scalar_text(et.component_type)
            self.expect(")", "')' closing complex constant")
            return (re_part, im_part)
        m = _SCALAR_RE.match(self.text, pos, self.end)
        if not m:
            raise self.error(f"expected a {et.value} constant value, found {self._found()}", pos)
        self.pos = m.end()
        return (m.group(0), pos)

    def _convert(self, texts: list, et: PrimitiveType) -> np.ndarray:
        """Element texts (from :meth:`scalar_text`) -> a 1-D array of the element type."""
        if et.is_complex:
            part = et.component_type
            values = []
            for t in texts:
                pair = t if isinstance(t[0], tuple) else (t, None)  # a bare real number
                re_v = float(self._convert([pair[0]], part)[0])
                im_v = 0.0 if pair[1] is None else float(self._convert([pair[1]], part)[0])
                values.append(complex(re_v, im_v))
            return np.array(values, dtype=et.dtype)
        values = []
        if et.is_pred:
            for text, pos in texts:
                if text not in ("true", "false", "0", "1"):
                    raise self.error(f"expected true or false for a pred constant, found '{text}'",
                                     pos)
                values.append(text in ("true", "1"))
            return np.array(values, dtype=et.dtype)
        if et.is_integral:
            info = np.iinfo(et.dtype)
            for text, pos in texts:
                if not _INT_RE.fullmatch(text):
                    raise self.error(f"expected an integer for a {et.value} constant, found "
                                     f"'{text}'", pos)
                v = int(text)  # exact: never through float
                if not info.min <= v <= info.max:
                    raise self.error(f"{v} is out of range for {et.value}", pos)
                values.append(v)
            return np.array(values, dtype=et.dtype)
        for text, pos in texts:
            if text in ("true", "false"):
                raise self.error(f"expected a number for a {et.value} constant, found '{text}'", pos)
            # Decimal text -> Python float -> the dtype; a NaN payload (`nan(0x...)`) is dropped.
            values.append(float(text.split("(")[0]))
        with np.errstate(over="ignore"):
            return np.array(values, dtype=np.float64).astype(et.dtype)
