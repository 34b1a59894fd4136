"""MLIR text (the subset StableHLO modules use) -> a small syntax tree.

Reads both the generic form (``"stablehlo.add"(%a, %b) : (tensor<4xf32>,
tensor<4xf32>) -> tensor<4xf32>``) and the pretty forms jax prints
(``stablehlo.add %a, %b : tensor<4xf32>``), after MLIR's LangRef and the
assembly formats of openxla/stablehlo's ``StablehloOps.td``.  The parser is a
scanner over the text with a position (as ``xlac.hlo.parser``): MLIR's syntax is
context sensitive (``4x3xf32`` in a type, ``[0] x [1]`` in ``dot_general``),
so there is no separate token list.

A pretty op is read as a sequence of *items* up to its type signature
(operands, ``key = value`` attributes, bare words such as ``GT``, bracketed
index groups such as ``[1:3:2]``, parenthesised operand groups, symbols,
strings, an attribute dictionary); what each item means is the importer's
business (``xlac.hlo.stablehlo.importer``), keyed by op name.  Ops with pretty
regions (``stablehlo.reduce ... reducer(...) {...}``, ``stablehlo.while ...
cond {...} do {...}``) read their regions after the signature.

Every malformed input raises :class:`xlac.errors.HloParseError` with the
1-based line and column.  Locations (``loc(...)``, ``#loc`` aliases at the end
of the module) are kept as text per op and resolved by :class:`Locations`.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from ...errors import HloParseError

__all__ = ["Op", "Block", "Attr", "DialectAttr", "Dense", "TypeAttr", "Symbol", "Word", "ArrayAttr",
           "Item", "ModuleSyntax", "parse_mlir", "Locations"]

_BARE = re.compile(r"[A-Za-z_][\w$.\-]*", re.ASCII)
_VALUE = re.compile(r"%[\w$.\-]+(?:#[0-9]+)?", re.ASCII)
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_INTEGER = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|[0-9]+)", re.ASCII)
#: The most digits an integer literal may have (MLIR's integers are at most
#: 64 bits wide where xlac reads them; 40 digits is past any of them).
MAX_INT_DIGITS = 40
_SYMBOL = re.compile(r"@(?:[\w$.\-]+|\"(?:[^\"\\]|\\.)*\")", re.ASCII)
_NUMBER = re.compile(r"[-+]?(?:0x[0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]+)?)|inf|nan)", re.ASCII)
_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"", re.DOTALL)
_BLOCK_LABEL = re.compile(r"\^[\w$.\-]+", re.ASCII)
#: Attributes whose text is also kept (``key#text``): custom calls' backend configs,
#: passed to HLO verbatim.
_RAW_TEXT_KEYS = frozenset({"backend_config", "mhlo.backend_config"})
#: ``%x =`` or ``%x:2 =``: the start of the next op's results.
_DEFINES = re.compile(r"%[\w$.\-]+(?::[0-9]+)?\s*=", re.ASCII)
#: Scalar types written after a scalar attribute (``1 : i64``, ``#complex.number<...> : complex<f32>``).
_SCALAR_TYPE = re.compile(r"(?:(?:[su]?i[0-9]+|f[0-9]+|bf16|index)\b|complex<)", re.ASCII)
_DIALECT_ATTR = re.compile(r"#[A-Za-z_][\w$.\-]*", re.ASCII)
#: Words that start a type where an attribute or a type may stand.
_TYPE_WORD = re.compile(r"(?:tensor|tuple|complex|vector|memref|none|index|bf16|f16|f32|f64|f8\w+|f4\w+|"
                        r"[su]?i[0-9]+)\b|!", re.ASCII)


# ---------------------------------------------------------------------------
# the tree
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class DialectAttr:
    """``#dialect<body>`` or ``#dialect.name<body>`` (body kept as text), or an alias ``#name``."""

    name: str
    body: str | None


@dataclass(frozen=True)
class Dense:
    """``dense<...>``: ``value`` is a nested list of number/bool texts (a float may be
    a ``0x...`` bit pattern; a complex a ``("complex", re, im)``), one such text (a
    splat), or ``("blob", "0x...")`` (the quoted hex form: the elements' bytes);
    ``type`` the tensor type after ``:``."""

    value: object
    type: object


@dataclass(frozen=True)
class TypeAttr:
    """A type written where an attribute stands (``function_type = (...) -> ...``)."""

    type: object


@dataclass(frozen=True)
class Symbol:
    name: str


@dataclass(frozen=True)
class Word:
    """A bare identifier (an enum value such as ``GT``, ``DEFAULT``, ``e5m10``)."""

    text: str


@dataclass(frozen=True)
class ArrayAttr:
    """``array<i64: 1, 2>``: the element type and the values."""

    element: str
    values: tuple


Attr = object  # int | float | str | bool | list | dict | DialectAttr | Dense | TypeAttr | Symbol | Word | ArrayAttr


@dataclass
class Item:
    """One piece of a pretty op before its signature; ``kind`` is one of
    ``value`` (``%x``), ``group`` (``(...)``: a list of items), ``keyword``
    (``key = value``: ``(key, attr)``), ``word``, ``index`` (``[1:3, 4]``: a list
    of int tuples), ``symbol``, ``string``, ``attr`` (an attribute value), ``init``
    (``%x init: %y``: the pair), ``bind`` (``%iterArg = %x``: the pair)."""

    kind: str
    value: object
    pos: int


@dataclass
class Block:
    """A region's only block: its arguments ``[(name, type, loc)]`` and ops."""

    args: list
    ops: list
    pos: int


@dataclass
class Op:
    """One operation.  ``results``: SSA names defined (``%0#1`` style for
    multi-result ops); ``operands``: SSA names used (generic form); ``items``:
    the pretty form's pieces; ``attrs``: properties and attributes (generic) or
    the attribute dictionary (pretty); ``signature``: ``(operand types, result
    types)``, either list possibly None when the text did not say."""

    name: str
    pos: int
    results: list = field(default_factory=list)
    operands: list = field(default_factory=list)
    items: list = field(default_factory=list)
    attrs: dict = field(default_factory=dict)
    regions: list = field(default_factory=list)
    signature: tuple = (None, None)
    loc: object = None
    generic: bool = False
    func: dict | None = None      # func.func: name, visibility, args, results, body


@dataclass
class ModuleSyntax:
    name: str | None
    attrs: dict
    funcs: list
    locations: "Locations"
    text: str


# ---------------------------------------------------------------------------
# types (as nested tuples, turned into Shapes by the importer)
# ---------------------------------------------------------------------------
# ("tensor", dims, element, encoding)  dims: int or None (``?``); element: str or ("complex", str)
# ("tuple", [types]); ("token",); ("func", [ins], [outs]); ("other", text)


class Locations:
    """The ``#locN = loc(...)`` aliases of a module; :meth:`describe` turns a
    ``loc(...)`` into ``file:line:col`` (the first file location inside it,
    through aliases, names and call sites) or its name."""

    _FILE = re.compile(r"\"((?:[^\"\\]|\\.)*)\":([0-9]+):([0-9]+)")
    _REF = re.compile(r"#loc[0-9]*\b|#[\w.]+")
    _NAME = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")

    def __init__(self):
        self.aliases: dict[str, str] = {}
        self._memo: dict[str, str | None] = {}

    def describe(self, loc: str | None, depth: int = 0) -> str | None:
        if not loc or depth > 64:
            return None
        if loc in self._memo:                 # aliases form a DAG: each is resolved once
            return self._memo[loc]
        self._memo[loc] = None                # a cycle resolves to nothing
        m = self._FILE.search(loc)
        out = None
        for r in self._REF.findall(loc):      # a call site's callee comes first in the text
            if m and loc.find(r) > m.start():
                break
            got = self.describe(self.aliases.get(r), depth + 1)
            if got and ":" in got:
                out = got
                break
        if out is None and m:
            out = f"{m.group(1)}:{m.group(2)}:{m.group(3)}"
        if out is None:
            n = self._NAME.search(loc)
            out = n.group(1) if n else None
        self._memo[loc] = out
        return out


# ---------------------------------------------------------------------------
# the scanner
# ---------------------------------------------------------------------------

def int_text(text: str) -> int:
    """The value of an integer literal (``_INTEGER``): decimal, leading zeros
    allowed as MLIR reads them (Python's ``int(text, 0)`` refuses ``023``), or
    ``0x`` hexadecimal."""
    body = text.lstrip("+-")
    value = int(body[2:], 16) if body[:2].lower() == "0x" else int(body, 10)
    return -value if text.startswith("-") else value


#: The deepest nesting of types, attributes, dense literals and regions read
#: (as the HLO side's MAX_TUPLE_DEPTH and MAX_CALL_DEPTH): past it, an error at
#: once, where Python's recursion limit would otherwise end the parse with a
#: RecursionError and no place.
MAX_NESTING = 64


def _nested(method):
    """``method`` counted as one level of nesting (see MAX_NESTING)."""
    @functools.wraps(method)
    def counted(self, *args, **kwargs):
        if self.depth >= MAX_NESTING:
            raise self.error(f"nesting deeper than {MAX_NESTING} levels (types, attributes, dense "
                             "literals or regions within one another)")
        self.depth += 1
        try:
            return method(self, *args, **kwargs)
        finally:
            self.depth -= 1
    return counted


class MlirParser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.end = len(text)
        self._lines = None
        self.depth = 0                  # nesting now (MAX_NESTING)

    # -- positions and errors -------------------------------------------------
    def line_col(self, pos: int) -> tuple:
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return line, col

    def error(self, message: str, pos: int | None = None) -> HloParseError:
        line, col = self.line_col(self.pos if pos is None else pos)
        return HloParseError(f"StableHLO: {message}", line, col)

    def found(self) -> str:
        self.skip_ws()
        if self.pos >= self.end:
            return "the end of the text"
        return repr(self.text[self.pos:self.pos + 20].split("\n")[0])

    def skip_ws(self) -> int:
        t, n = self.text, self.end
        p = self.pos
        while p < n:
            c = t[p]
            if c in " \t\r\n":
                p += 1
            elif t.startswith("//", p):
                q = t.find("\n", p)
                p = n if q < 0 else q + 1
            else:
                break
        self.pos = p
        return p

    def peek(self, s: str) -> bool:
        self.skip_ws()
        return self.text.startswith(s, self.pos)

    def accept(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, what: str | None = None) -> int:
        if not self.accept(s):
            raise self.error(f"expected {what or repr(s)}, found {self.found()}")
        return self.pos

    def match(self, regex: re.Pattern) -> str | None:
        self.skip_ws()
        m = regex.match(self.text, self.pos)
        if not m:
            return None
        self.pos = m.end()
        return m.group(0)

    def keyword(self, word: str) -> bool:
        self.skip_ws()
        m = _BARE.match(self.text, self.pos)
        if m and m.group(0) == word:
            self.pos = m.end()
            return True
        return False

    def bare(self, what: str) -> str:
        w = self.match(_BARE)
        if w is None:
            raise self.error(f"expected {what}, found {self.found()}")
        return w

    def integer(self) -> int:
        pos = self.skip_ws()
        n = self.match(_NUMBER)
        if n is None or not _INTEGER.fullmatch(n):
            raise self.error(f"expected an integer, found {self.found() if n is None else repr(n)}", pos)
        return self.int_literal(n, pos)

    def int_literal(self, text: str, pos: int, what: str = "integer") -> int:
        """The value of an integer literal (``_INTEGER``, :func:`int_text`) of at
        most ``MAX_INT_DIGITS`` digits: longer is an error at ``pos``, before
        Python's int() of thousands of digits (slow, then refused without a
        position)."""
        digits = text.lstrip("+-")
        if len(digits) > MAX_INT_DIGITS:
            raise self.error(f"{what} {digits[:20]}... ({len(digits)} digits) is too large", pos)
        return int_text(text)

    def number(self):
        """An integer or float literal as a Python int or float (``inf``/``nan`` too)."""
        pos = self.skip_ws()
        n = self.match(_NUMBER)
        if n is None:
            raise self.error(f"expected a number, found {self.found()}", pos)
        return self.int_literal(n, pos) if _INTEGER.fullmatch(n) else float(n)

    def string(self) -> str:
        s = self.match(_STRING)
        if s is None:
            raise self.error(f"expected a string, found {self.found()}")
        return _unescape(s[1:-1])

    def balanced(self, open_: str, close: str) -> str:
        """The text up to the ``close`` that matches the ``open_`` just read
        (strings and ``->`` skipped), consumed with it."""
        depth, p, t = 1, self.pos, self.text
        start = p
        while p < self.end:
            c = t[p]
            if c == '"':
                m = _STRING.match(t, p)
                if not m:
                    break
                p = m.end()
                continue
            if c == "-" and t.startswith("->", p):
                p += 2
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    self.pos = p + 1
                    return t[start:p]
            p += 1
        raise self.error(f"no matching {close!r}", start - 1)

    # -- the module -------------------------------------------------------------
    def module(self) -> ModuleSyntax:
        locs = Locations()
        self._aliases(locs)
        name, attrs, funcs = None, {}, []
        self.skip_ws()
        if self.keyword("module"):
            sym = self.match(_SYMBOL)
            name = sym[1:].strip('"') if sym else None
            if self.keyword("attributes"):
                attrs = self.attr_dict()
            self.expect("{")
            funcs = self._module_body()
            self.expect("}")
            self.loc()
        elif self.peek('"builtin.module"'):
            op = self.operation()
            name = op.attrs.get("sym_name")
            attrs = {k: v for k, v in op.attrs.items() if k != "sym_name"}
            funcs = [o for o in (op.regions[0].ops if op.regions else [])]
        else:
            funcs = self._module_body()
        self._aliases(locs)
        if self.skip_ws() < self.end:
            raise self.error(f"expected the end of the module, found {self.found()}")
        meshes = [f for f in funcs if f.name == "sdy.mesh"]
        funcs = [f for f in funcs if f.name != "sdy.mesh"]
        if meshes:
            attrs = dict(attrs, **{"sdy.meshes": [(m.attrs["sym_name"], m.attrs["mesh"]) for m in meshes]})
        for f in funcs:
            if f.func is None:
                raise self.error(f"expected a func.func in the module, found {f.name}", f.pos)
        return ModuleSyntax(name, attrs, funcs, locs, self.text)

    def _aliases(self, locs: Locations) -> None:
        """``#name = ...`` lines (location aliases; any other alias is kept by name too)."""
        while True:
            self.skip_ws()
            m = re.compile(r"(#[\w$.\-]+)\s*=\s*", re.ASCII).match(self.text, self.pos)
            if not m:
                return
            self.pos = m.end()
            line_end = self.text.find("\n", self.pos)
            line_end = self.end if line_end < 0 else line_end
            locs.aliases[m.group(1)] = self.text[self.pos:line_end].strip()
            self.pos = line_end

    def _module_body(self) -> list:
        ops = []
        while self.skip_ws() < self.end and not self.peek("}"):
            ops.append(self.operation())
        return ops

    # -- operations ---------------------------------------------------------------
    def operation(self) -> Op:
        start = self.skip_ws()
        groups = []                     # (name, count) of ``%x:count``; count None for ``%x``
        if self.peek("%"):
            while True:
                v = self.match(_VALUE)
                if v is None:
                    raise self.error(f"expected a result name, found {self.found()}")
                groups.append((v, self._result_count(v) if self.accept(":") else None))
                if not self.accept(","):
                    break
            self.expect("=")
        self.skip_ws()
        pos = self.pos
        if self.peek('"'):
            op = self._generic(pos)
        else:
            name = self.bare("an operation name")
            op = Op(name, pos)
            if name in ("func.func", "func"):
                self._func(op)
            elif name == "module":
                raise self.error("nested modules are not supported", pos)
            elif name in _CUSTOM_FORMS:
                _CUSTOM_FORMS[name](self, op)
            else:
                self._pretty(op)
        op.results = self._result_names(groups, start)
        op.loc = self.loc() or op.loc
        if start != pos:
            op.pos = pos
        return op

    def _result_count(self, name: str) -> int:
        """``N`` of ``%x:N``: a decimal of at least 1 (MLIR: a named op has a result)."""
        pos = self.skip_ws()
        m = self.match(_DIGITS)
        if m is None:
            raise self.error(f"expected the number of results after '{name}:', found {self.found()}", pos)
        if len(m) > 9 or int(m) < 1:
            shown = m if len(m) <= 12 else f"{m[:8]}... ({len(m)} digits)"
            raise self.error(f"{name}:{shown}: the number of results must be from 1 to {10 ** 9 - 1}", pos)
        return int(m)

    def _result_names(self, groups: list, start: int) -> list:
        """The names of an op's results, ``%x:N`` as ``%x#0`` .. ``%x#N-1``, made
        once the op is parsed: every result has a type in the op's text (two
        characters and a separator at least), so more results than half the
        op's text length is an error at once, not millions of names made
        first (``%0:300000000 = ...``).  Whether the count is the op's own is
        the importer's check."""
        total = sum(1 if n is None else n for _, n in groups)
        if total > max(1, (self.pos - start) // 2):
            raise self.error(f"{total} results named, more than the op's text gives types for "
                             f"({self.pos - start} characters)", start)
        return [v if n is None else f"{v}#{k}" for v, n in groups for k in range(1 if n is None else n)]

    def loc(self) -> str | None:
        self.skip_ws()
        if self.text.startswith("loc(", self.pos):
            self.pos += 4
            return "loc(" + self.balanced("(", ")") + ")"
        return None

    def _generic(self, pos: int) -> Op:
        op = Op(self.string(), pos, generic=True)
        self.expect("(")
        if not self.accept(")"):
            while True:
                v = self.match(_VALUE)
                if v is None:
                    raise self.error(f"expected an operand, found {self.found()}")
                op.operands.append(v)
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')'")
        if self.accept("<{"):
            self.pos -= 1
            op.attrs.update(self.attr_dict())
            self.expect(">")
        if self.peek("["):
            raise self.error(f"{op.name}: successor blocks are not supported")
        if self.accept("("):
            while True:
                op.regions.append(self.region())
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')'")
        if self.peek("{"):
            op.attrs.update(self.attr_dict())
        self.expect(":", "':' and the op's function type")
        t = self.type()
        if t[0] != "func":
            raise self.error(f"{op.name}: expected a function type", pos)
        op.signature = (t[1], t[2])
        if op.name == "func.func":
            self._generic_func(op)
        return op

    def _generic_func(self, op: Op) -> None:
        ft = op.attrs.get("function_type")
        if not isinstance(ft, TypeAttr) or not op.regions:
            raise self.error("func.func without function_type or body", op.pos)
        body = op.regions[0]
        op.func = {"name": str(op.attrs.get("sym_name")), "visibility": op.attrs.get("sym_visibility", "public"),
                   "args": [(a[0], a[1], a[2]) for a in body.args], "arg_attrs": op.attrs.get("arg_attrs"),
                   "results": ft.type[2], "result_attrs": op.attrs.get("res_attrs"), "body": body}

    def _func(self, op: Op) -> None:
        visibility = "public"
        if self.keyword("private"):
            visibility = "private"
        elif self.keyword("public"):
            pass
        sym = self.match(_SYMBOL)
        if sym is None:
            raise self.error(f"expected a function name, found {self.found()}")
        self.expect("(")
        args, arg_attrs = [], []
        if not self.accept(")"):
            while True:
                self.skip_ws()
                apos = self.pos
                v = self.match(_VALUE)
                if v is None:
                    raise self.error(f"expected an argument, found {self.found()}")
                self.expect(":")
                t = self.type()
                arg_attrs.append(self.attr_dict() if self.peek("{") else {})
                args.append((v, t, self.loc(), apos))
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')'")
        results, res_attrs = [], []
        if self.accept("->"):
            if self.accept("("):
                if not self.accept(")"):
                    while True:
                        results.append(self.type())
                        res_attrs.append(self.attr_dict() if self.peek("{") else {})
                        if self.accept(")"):
                            break
                        self.expect(",", "',' or ')'")
            else:
                results.append(self.type())
                res_attrs.append({})
        if self.keyword("attributes"):
            op.attrs.update(self.attr_dict())
        self.skip_ws()
        body_pos = self.pos
        body = self.region(args=[(a[0], a[1], a[2]) for a in args])
        body.pos = body_pos
        op.func = {"name": sym[1:].strip('"'), "visibility": visibility, "args": body.args,
                   "arg_attrs": arg_attrs, "results": results, "result_attrs": res_attrs, "body": body}

    @_nested
    def region(self, args=None) -> Block:
        pos = self.expect("{") - 1
        block_args = list(args or [])
        self.skip_ws()
        if self.peek("^"):
            self.match(_BLOCK_LABEL)
            if self.accept("("):
                if not self.accept(")"):
                    while True:
                        v = self.match(_VALUE)
                        if v is None:
                            raise self.error(f"expected a block argument, found {self.found()}")
                        self.expect(":")
                        block_args.append((v, self.type(), self.loc()))
                        if self.accept(")"):
                            break
                        self.expect(",", "',' or ')'")
            self.expect(":")
        ops = []
        while not self.accept("}"):
            if self.skip_ws() >= self.end:
                raise self.error("region not closed with '}'", pos)
            if self.peek("^"):
                raise self.error("regions of more than one block are not supported")
            ops.append(self.operation())
        return Block(block_args, ops, pos)

    # -- pretty forms -----------------------------------------------------------------
    def _pretty(self, op: Op) -> None:
        op.items = self._items(top=True)
        if self.peek("{"):
            op.attrs.update(self.attr_dict())
        if self.accept(":"):
            op.signature = self._signature()
        if op.name == "stablehlo.while":
            self._while_regions(op)
        elif op.name == "stablehlo.reduce" and self.keyword("reducer"):
            self._reducer_region(op)
        elif op.name in ("stablehlo.case", "stablehlo.if") and self.peek("{"):
            while self.peek("{"):
                op.regions.append(self.region())
                self.keyword("else")

    @_nested
    def _group(self) -> list:
        """The items of a parenthesised group within an op's items."""
        return self._items(top=False)

    def _items(self, top: bool) -> list:
        items = []
        while True:
            before = self.pos
            self.skip_ws()
            p = self.pos
            if p >= self.end:
                break
            if top and "\n" in self.text[before:p]:
                break                # the printer writes a pretty op's operands on its first line
            c = self.text[p]
            if c == "%":
                if top and _DEFINES.match(self.text, p):
                    break                                  # the next op (this one had no signature)
                v = self.match(_VALUE)
                if v is None:
                    raise self.error(f"expected a value name, found {self.found()}")
                if self.keyword("init"):
                    self.expect(":")
                    items.append(Item("init", (v, self.match(_VALUE)), p))
                elif self.accept("="):
                    items.append(Item("bind", (v, self.match(_VALUE)), p))   # while's %iterArg = %x
                else:
                    items.append(Item("value", v, p))
            elif c == ",":
                self.pos += 1
            elif c == "(":
                self.pos += 1
                items.append(Item("group", self._group(), p))
                self.expect(")")
            elif c == ")" and not top:
                break
            elif c == "[":
                items.append(Item("index", self._index_groups(), p))
            elif c == "@":
                sym = self.match(_SYMBOL)
                if sym is None:
                    raise self.error(f"expected a symbol name after '@', found {self.found()}")
                items.append(Item("symbol", sym[1:].strip('"'), p))
            elif c == '"':
                items.append(Item("string", self.string(), p))
            elif c == "{" or c == ":" or self.text.startswith("loc(", p) or c == "}":
                break
            elif c.isalpha() or c == "_":
                save = self.pos
                word = self.bare("a word")
                if self.accept("="):
                    items.append(Item("keyword", (word, self._keyword_value(word)), p))
                elif word in ("dense", "array", "true", "false") or self.peek("<"):
                    self.pos = save
                    items.append(Item("attr", self.attribute(), p))
                else:
                    items.append(Item("word", word, p))
            else:
                items.append(Item("attr", self.attribute(), p))
            if self.pos == p:                       # every item consumes text: no endless loop
                raise self.error(f"unexpected {self.found()}")
        return items

    def _keyword_value(self, key: str):
        """The value after ``key =`` in a pretty op: an attribute, or the special
        forms ``[0] x [1]`` (dot_general dims) and ``[b, 0, f]x[0, i, o]->[b, 0, f]``
        (convolution dim_numbers)."""
        self.skip_ws()
        if key == "dim_numbers":
            start, depth = self.pos, 0
            while self.pos < self.end:
                c = self.text[self.pos]
                depth += (c == "[") - (c == "]")
                if depth == 0 and c in ",\n":
                    break
                self.pos += 1
            return Word(self.text[start:self.pos].strip())
        if key == "algorithm" and self.accept("<"):     # dot_general's, printed without its name
            return DialectAttr("stablehlo.dot_algorithm", self.balanced("<", ">"))
        if self.text.startswith("[", self.pos):
            first = self.attribute()
            if self.keyword("x"):
                return ("pair", first, self.attribute())
            return first
        if self.text.startswith("{", self.pos):
            return self.attr_dict()
        return self.attribute()

    def _index_groups(self) -> list:
        """``[1:3, 4:8:2]`` or ``[1]``: a list of int tuples."""
        self.expect("[")
        groups = []
        if self.accept("]"):
            return groups
        while True:
            g = [self.integer()]
            while self.accept(":"):
                g.append(self.integer())
            groups.append(tuple(g))
            if self.accept("]"):
                return groups
            self.expect(",", "',' or ']'")

    def _signature(self) -> tuple:
        """``: t``, ``: t1, t2`` (all operands/results of these types) or ``: (ins) -> outs``."""
        t = self.type()
        if t[0] == "func":
            return (t[1], t[2])
        types = [t]
        while self._comma_type():
            types.append(self.type())
        if self.accept("->"):                     # chlo's ``: t1, t2 -> t`` or ``-> (t1, t2)``
            if self.accept("("):
                outs = [self.type()]
                while self.accept(","):
                    outs.append(self.type())
                self.expect(")")
                return (types, outs)
            return (types, [self.type()])
        return (types, None) if len(types) > 1 else (None, types)

    def _comma_type(self) -> bool:
        save = self.pos
        if self.accept(","):
            self.skip_ws()
            if _TYPE_WORD.match(self.text, self.pos):
                return True
        self.pos = save
        return False

    def _while_regions(self, op: Op) -> None:
        for word in ("cond", "do"):
            if not self.keyword(word):
                raise self.error(f"stablehlo.while: expected '{word}' and a region, found {self.found()}")
            op.regions.append(self.region())

    def _reducer_region(self, op: Op) -> None:
        pairs = []
        while self.accept("("):
            group = []
            while not self.accept(")"):
                v = self.match(_VALUE)
                if v is None:
                    raise self.error(f"expected a reducer argument, found {self.found()}")
                self.expect(":")
                group.append((v, self.type(), self.loc()))
                self.accept(",")
            pairs.append(group)
        # reducer(%lhs0: t, %rhs0: t) (%lhs1: t, %rhs1: t): block args are all lhs then all rhs.
        args = [g[0] for g in pairs] + [g[1] for g in pairs if len(g) > 1]
        op.regions.append(self.region(args=args))

    # -- attributes -----------------------------------------------------------------
    def attr_dict(self) -> dict:
        self.expect("{")
        out = {}
        if self.accept("}"):
            return out
        while True:
            self.skip_ws()
            if self.peek('"'):
                key = self.string()
            else:
                key = self.bare("an attribute name")
            if self.accept("="):
                start = self.skip_ws()
                out[key] = self.attribute()
                if key in _RAW_TEXT_KEYS:
                    out[key + "#text"] = self.text[start:self.pos]
            else:
                out[key] = True                      # a unit attribute
            if self.accept("}"):
                return out
            self.expect(",", "',' or '}'")

    @_nested
    def attribute(self):
        self.skip_ws()
        p, t = self.pos, self.text
        c = t[p] if p < self.end else ""
        if c == '"':
            s = self.string()
            return self._typed_suffix(s)
        if c == "[":
            self.pos += 1
            out = []
            if self.accept("]"):
                return out
            while True:
                out.append(self.attribute())
                if self.accept("]"):
                    return out
                self.expect(",", "',' or ']'")
        if c == "{":
            return self.attr_dict()
        if c == "@":
            sym = self.match(_SYMBOL)
            if sym is None:
                raise self.error(f"expected a symbol name after '@', found {self.found()}")
            return Symbol(sym[1:].strip('"'))
        if c == "#":
            name = self.match(_DIALECT_ATTR)
            if name is None:
                raise self.error(f"expected an attribute after '#', found {self.found()}")
            if self.text.startswith("<", self.pos):
                self.pos += 1
                return self._typed_suffix(DialectAttr(name, self.balanced("<", ">")))
            return DialectAttr(name, None)
        if c == "(" or (c == "!") or (_TYPE_WORD.match(t, p) and not t.startswith("true", p)):
            return TypeAttr(self.type())
        if c.isdigit() or c in "-+":
            return self._typed_suffix(self.number())
        word = self.bare("an attribute value")
        if word in ("true", "false"):
            return self._typed_suffix(word == "true")
        if word == "unit":
            return True
        if word in ("dense", "dense_resource", "sparse", "array"):
            self.expect("<")
            if word == "array":
                elt = self.bare("an element type")
                values = []
                if self.accept(":"):
                    while True:
                        self.skip_ws()
                        if _NUMBER.match(self.text, self.pos):
                            values.append(self.number())
                        else:
                            word = self.bare("an array element")
                            if word not in ("true", "false"):
                                raise self.error(f"expected a number, true or false in array<...>, "
                                                 f"found {word!r}")
                            values.append(word == "true")
                        if not self.accept(","):
                            break
                self.expect(">")
                return ArrayAttr(elt, tuple(values))
            if word != "dense":
                raise self.error(f"{word}<...> attributes are not supported (write the data inline "
                                 f"as dense<...>)", p)
            value = self._dense_value()
            self.expect(">")
            self.expect(":", "':' and the dense attribute's type")
            return Dense(value, self.type())
        return Word(word)

    def _typed_suffix(self, value):
        """``1 : i64``: the type after a scalar is dropped (the importer knows what it wants)."""
        save = self.pos
        if self.accept(":"):
            self.skip_ws()
            if _SCALAR_TYPE.match(self.text, self.pos):
                self.type()
                return value
        self.pos = save
        return value

    def _dense_value(self):
        self.skip_ws()
        if self.peek('"'):
            return ("blob", self.string())             # "0x...": every element's bytes, hex
        if self.peek(">"):
            return []
        return self._dense_element()

    @_nested
    def _dense_element(self):
        if self.accept("["):
            out = []
            if self.accept("]"):
                return out
            while True:
                out.append(self._dense_element())
                if self.accept("]"):
                    return out
                self.expect(",", "',' or ']'")
        if self.accept("("):                            # complex (re, im)
            re_ = self._dense_element()
            self.expect(",")
            im = self._dense_element()
            self.expect(")")
            return ("complex", re_, im)
        n = self.match(_NUMBER)
        if n is not None:
            return n
        w = self.bare("a dense element")
        if w not in ("true", "false"):
            raise self.error(f"bad dense element {w!r}")
        return w

    # -- types ------------------------------------------------------------------------
    @_nested
    def type(self):
        self.skip_ws()
        p = self.pos
        if self.accept("("):
            ins = []
            if not self.accept(")"):
                while True:
                    ins.append(self.type())
                    if self.accept(")"):
                        break
                    self.expect(",", "',' or ')'")
            if not self.accept("->"):
                raise self.error("expected '->' in a function type", p)
            if self.peek("("):
                self.expect("(")
                outs = []
                if not self.accept(")"):
                    while True:
                        outs.append(self.type())
                        self.skip_ws()
                        if self.peek("{"):
                            self.attr_dict()      # result attributes in a func signature
                        if self.accept(")"):
                            break
                        self.expect(",", "',' or ')'")
            else:
                outs = [self.type()]
            return ("func", ins, outs)
        if self.accept("!"):
            name = self.bare("a type name")
            body = None
            if self.text.startswith("<", self.pos):
                self.pos += 1
                body = self.balanced("<", ">")
            if name == "stablehlo.token":
                return ("token",)
            return ("other", "!" + name + (f"<{body}>" if body is not None else ""), p)
        word = self.bare("a type")
        if word == "tensor":
            self.expect("<")
            return self._tensor_body(p)
        if word == "tuple":
            self.expect("<")
            elems = []
            if not self.accept(">"):
                while True:
                    elems.append(self.type())
                    if self.accept(">"):
                        break
                    self.expect(",", "',' or '>'")
            return ("tuple", elems)
        if word == "complex":
            self.expect("<")
            inner = self.bare("an element type")
            self.expect(">")
            return ("tensor", (), ("complex", inner), None, p)
        return ("tensor", (), word, None, p)           # a scalar element type

    def _tensor_body(self, p: int):
        dims = []
        t = self.text
        while True:
            self.skip_ws()
            m = re.compile(r"(\?|[0-9]+)x", re.ASCII).match(t, self.pos)
            if not m:
                if t.startswith("*", self.pos):
                    raise self.error("unranked tensors (tensor<*x...>) are not supported", p)
                break
            dims.append(None if m.group(1) == "?" else self.int_literal(m.group(1), self.pos, "dimension"))
            self.pos = m.end()
        if self.keyword("complex"):
            self.expect("<")
            element = ("complex", self.bare("an element type"))
            self.expect(">")
        else:
            element = self.bare("an element type")
        encoding = None
        if self.accept(","):
            encoding = self.attribute()
        self.expect(">")
        return ("tensor", tuple(dims), element, encoding, p)


def _sdy_mesh(p: MlirParser, op: Op) -> None:
    """``sdy.mesh @mesh = <["x"=2, "y"=4]> {...}``: the mesh text kept."""
    sym = p.match(_SYMBOL)
    if sym is None:
        raise p.error(f"sdy.mesh: expected a mesh name, found {p.found()}")
    p.expect("=")
    p.expect("<")
    op.attrs["sym_name"] = sym[1:].strip('"')
    op.attrs["mesh"] = "<" + p.balanced("<", ">") + ">"
    if p.peek("{"):
        p.attr_dict()


def _sdy_manual_computation(p: MlirParser, op: Op) -> None:
    """``sdy.manual_computation(%x) in_shardings=[...] out_shardings=[...]
    manual_axes={...} (%local: t) {body} : (global types) -> (global types)``."""
    p.expect("(")
    if not p.accept(")"):
        while True:
            v = p.match(_VALUE)
            if v is None:
                raise p.error(f"expected an operand, found {p.found()}")
            op.operands.append(v)
            if p.accept(")"):
                break
            p.expect(",", "',' or ')'")
    for key, open_, close in (("in_shardings", "[", "]"), ("out_shardings", "[", "]"), ("manual_axes", "{", "}")):
        if not p.keyword(key):
            raise p.error(f"sdy.manual_computation: expected {key}=, found {p.found()}")
        p.expect("=")
        p.expect(open_)
        op.attrs[key] = open_ + p.balanced(open_, close) + close
    args = []
    p.expect("(")
    if not p.accept(")"):
        while True:
            v = p.match(_VALUE)
            if v is None:
                raise p.error(f"expected a block argument, found {p.found()}")
            p.expect(":")
            args.append((v, p.type(), p.loc()))
            if p.accept(")"):
                break
            p.expect(",", "',' or ')'")
    op.regions.append(p.region(args=args))
    p.expect(":", "':' and the op's function type")
    t = p.type()
    if t[0] != "func":
        raise p.error("sdy.manual_computation: expected a function type", op.pos)
    op.signature = (t[1], t[2])
    op.generic = True                 # its operands are in op.operands


def _sdy_sharding_constraint(p: MlirParser, op: Op) -> None:
    """``sdy.sharding_constraint %x <@mesh, [{"a"}, {}]> : tensor<...>``: the
    operand, the sharding text (``sharding``) and the result type."""
    v = p.match(_VALUE)
    if v is None:
        raise p.error(f"sdy.sharding_constraint: expected an operand, found {p.found()}")
    op.operands.append(v)
    p.expect("<")
    op.attrs["sharding"] = "<" + p.balanced("<", ">") + ">"
    if p.peek("{"):
        op.attrs.update(p.attr_dict())
    p.expect(":", "':' and the result type")
    t = p.type()
    op.signature = ([t], [t])
    op.generic = True                 # its operand is in op.operands


def _value_list(p: MlirParser, what: str) -> list:
    """``(%a, %b)``: the names."""
    p.expect("(")
    out = []
    if p.accept(")"):
        return out
    while True:
        v = p.match(_VALUE)
        if v is None:
            raise p.error(f"expected {what}, found {p.found()}")
        out.append(v)
        if p.accept(")"):
            return out
        p.expect(",", "',' or ')'")


def _chlo_scan(p: MlirParser, op: Op) -> None:
    """``chlo.scan(%x) inits (%c) dimension=0 attributes {...} {body} : (ins) -> outs``
    (``ScanOp::print``): read as the generic form, with its operand segment sizes."""
    inputs = _value_list(p, "a scan input")
    if not p.keyword("inits"):
        raise p.error(f"chlo.scan: expected 'inits', found {p.found()}")
    inits = _value_list(p, "a scan init")
    if not p.keyword("dimension"):
        raise p.error(f"chlo.scan: expected 'dimension=', found {p.found()}")
    p.expect("=")
    op.attrs["dimension"] = p.integer()
    if p.keyword("attributes"):
        op.attrs.update(p.attr_dict())
    op.regions.append(p.region())
    p.expect(":", "':' and the op's function type")
    t = p.type()
    if t[0] != "func":
        raise p.error("chlo.scan: expected a function type", op.pos)
    op.signature = (t[1], t[2])
    op.operands = inputs + inits
    op.attrs["operandSegmentSizes"] = ArrayAttr("i32", (len(inputs), len(inits)))
    op.generic = True                 # its operands are in op.operands


#: Ops whose syntax is neither generic nor items-then-type.
_CUSTOM_FORMS = {"sdy.mesh": _sdy_mesh, "sdy.manual_computation": _sdy_manual_computation,
                 "sdy.sharding_constraint": _sdy_sharding_constraint, "chlo.scan": _chlo_scan}


_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{2})|(.))", re.DOTALL)


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1)
                       else {"n": "\n", "t": "\t"}.get(m.group(2), m.group(2)), s)


def parse_mlir(text: str) -> ModuleSyntax:
    """The syntax tree of an MLIR module; ``HloParseError`` with line and column."""
    p = MlirParser(text)
    try:
        return p.module()
    except HloParseError:
        raise
    except (ValueError, IndexError, TypeError, RecursionError) as e:
        raise p.error(f"cannot parse ({type(e).__name__}: {e})") from e
