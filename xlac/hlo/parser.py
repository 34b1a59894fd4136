"""HLO text -> :class:`HloModule` (``xlac.parse_hlo``).

Reads XLA's HLO text as JAX prints it (short form) and as XLA dumps it (long
form: ``%`` name prefixes, operand shapes before operand names, computation
signatures, ``/*index=5*/`` comments).  The grammar, after the ``::=`` comments
of XLA's ``hlo_parser.cc``::

    module       ::= 'HloModule' name (',' attribute)* stack_frame_table* computation+
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
everything else by small regexes.  Each attribute value is read by the *kind*
the opcode's definition gives it (``xlac.hlo.opcodes``; the kinds are in
``xlac.hlo.attributes``: int list, int, float, enum word, bool, slice,
padding, computation reference(s), replica groups (``{{0,1},{2,3}}`` or the
iota form ``[2,2]<=[2,2]T(1,0)``), source-target pairs, or text kept
verbatim); the printer writes values with the same kinds.  The module header's
``replica_count=`` and ``num_partitions=`` are read as ints from 1 to 1024,
their product too (``collectives.MAX_MODULE_DEVICES``).

The grammar is token-based, as XLA's: line ends are white space like any
other, so several instructions may share a line and a shape, an instruction,
an attribute value or a computation header may go on over several lines.  An
attribute value is one run of text without white space outside brackets and
quotes (``dimensions={1,0}``, ``dim_labels=b01f_01io->b01f``, a quoted string)
whose brackets may span lines; it ends at a ``,``, at white space or a comment
outside brackets, or at a closing bracket it did not open.  An unclosed bracket
is reported at the bracket.  A computation-valued attribute may hold the
computation itself (``to_apply={ x = ... ROOT ... }``), as XLA reads it: a
computation named ``_`` (made unique) is added to the module.

An array constant written as one scalar (``f32[4] constant(5)``) is read as
XLA's parser reads it: that value in the first element and zeros elsewhere
(``{5, 0, 0, 0}``), for a non-complex array with at least one element.

Every malformed input raises :class:`xlac.errors.HloParseError` with the 1-based
line and column of the offending token.  Each instruction keeps its own
``location`` (line and column of its first character) for the verifier's errors.

Limits (XLA's text has none written down; these keep every later walk, most of
them recursive, inside Python's stack and numpy's arrays), each an
``HloParseError`` at the offending text:

* tuple shapes nest at most :data:`xlac.shape.MAX_TUPLE_DEPTH` (64) levels, and
  so do tuple constants such as ``(((1)))``, whose nesting follows their shape;
* arrays have at most :data:`xlac.shape.MAX_RANK` (32) dimensions;
* computations nest (one calling the next through ``call``, ``while``,
  ``conditional``, ``to_apply``, ...) at most :data:`xlac.hlo.ir.MAX_CALL_DEPTH`
  (64) deep, and no computation may call itself, directly or through others;
* integers (attribute values, parameter numbers, dimensions) fit int64; an
  integer constant fits its element type (``s8[] constant(300)`` and
  ``u32[] constant(-1)`` are errors), except that, as in XLA, a ``u64`` element
  may be written as a negative int64 meaning its two's complement
  (``u64[] constant(-1)`` is 2**64 - 1); a number of more digits than any
  64-bit value has is rejected before it is converted.

Instruction chains (tens of thousands of operands deep) and tuple widths have
no limit: the parser and every walk over operands are iterative.

The syntax is ASCII, as XLA's lexer: names are ``[A-Za-z_][A-Za-z0-9_.-]*``
(after an optional ``%``), numbers use the digits 0-9 (never another script's,
such as ``٣``), white space is ASCII; other characters may appear only inside
quoted strings and comments.  Text that cannot be encoded as UTF-8 (a lone
surrogate in a Python string) is rejected at that character.
"""
from __future__ import annotations

import bisect
import math
import re

import numpy as np

from ..errors import HloParseError, ShapeError, UnsupportedError
from ..shape import PrimitiveType, Shape, parse_shape_prefix, round_float
from .ir import (EntryComputationLayout, gc_paused, HloComputation, HloInstruction, HloModule, Raw,
                 find_call_graph_problem)
from .attributes import COMPUTATION, COMPUTATIONS, CompRef
from .collectives import MAX_MODULE_DEVICES, DeviceGroupError, check_device_count, check_device_counts
from .opcodes import OPCODES
from .shape_inference import has_rule, infer_shape

__all__ = ["parse_hlo", "Parser"]

# Every pattern is ASCII-only (re.ASCII): without it \d and \w also match other
# scripts' digits and letters, and int() reads '٣' as 3.  XLA's lexer takes ASCII.
_NAME_RE = re.compile(r"%?([A-Za-z_][\w.\-]*)", re.ASCII)
_WORD_RE = re.compile(r"[A-Za-z_][\w.\-]*", re.ASCII)
_INT_RE = re.compile(r"[-+]?[0-9]+", re.ASCII)
# A scalar literal token: number, inf/nan (XLA may print a NaN payload), bool.
_SCALAR_RE = re.compile(
    r"[-+]?(?:inf|nan(?:\(0x[0-9a-fA-F]+\))?|true|false|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"
    r"(?![\w.])", re.ASCII)
# The start of a shape, as opposed to an instruction name: `f32[`, `token[` or `(`.
_SHAPE_START_RE = re.compile(r"\(|[a-z][a-z0-9]*\[", re.ASCII)
# What the lexer skips between tokens (besides comments): ASCII white space only.
_BLANKS = " \t\r\n\f\v"
_BLANKS_RE = re.compile(r"[ \t\r\n\f\v]*")
# The common shape: a static array with an optional plain layout, e.g.
# ``f32[64,128]{1,0}`` (not a prefix of a longer shape: no ``{`` may follow
# unless the layout matched).  Its parse is cached by its text (see Parser.shape).
_SIMPLE_SHAPE_RE = re.compile(r"[a-z][a-z0-9]*\[[0-9,]*\](?:\{[0-9,]*\}|(?!\{))", re.ASCII)
# The common operand: a name (``%``-prefixed or not) between blanks, before the
# ``,`` or ``)`` that ends it.  Parser.operands reads it in one match; anything
# else (a comment, a declared shape, a nested instruction, an error) goes the
# token-by-token way.
_PLAIN_OPERAND_RE = re.compile(r"[ \t\r\n\f\v]*%?([A-Za-z_][\w.\-]*)[ \t\r\n\f\v]*(?=[,)])", re.ASCII)
# The common start of an instruction: ``[ROOT] [%]name =``, read in one match by
# Parser.instruction (names ROOT and ENTRY, comments, errors: token by token).
_PLAIN_HEADER_RE = re.compile(r"(ROOT[ \t]+)?(%?([A-Za-z_][\w.\-]*))[ \t]*=", re.ASCII)
# The common instruction up to its attributes, read in one match by
# Parser.instruction: ``[ROOT] name = <simple shape> opcode(name, ...)`` with
# plain operand names (two thirds of a training step's time in the parser was
# the token-by-token reading of such lines).  Anything else goes that way.
_PLAIN_INSTRUCTION_RE = re.compile(
    r"(ROOT[ \t]+)?%?([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*"
    r"([a-z][a-z0-9]*\[[0-9,]*\](?:\{[0-9,]*\}|(?!\{)))[ \t]+([A-Za-z_][\w.\-]*)\("
    r"((?:[ \t]*%?[A-Za-z_][\w.\-]*[ \t]*,)*[ \t]*%?[A-Za-z_][\w.\-]*[ \t]*)?\)", re.ASCII)
# Runs of characters value_end has nothing to decide about, skipped in one
# match: outside brackets (ASCII, not a quote, bracket, comma, slash or blank)
# and inside them (commas and blanks too).
_VALUE_RUN_RE = re.compile(r'[^"\'/{}\[\]()\x00- ,\x7f-\U0010ffff]+')
_BRACKETED_RUN_RE = re.compile(r'[^"\'/{}\[\]()\x80-\U0010ffff]+')
# The comma inside replica_groups=mesh[...], device_ids=(...) {...}.
_DEVICE_IDS_RE = re.compile(r"[ \t]*(device_ids[ \t]*=[ \t]*\()")
# Module header attributes read as ints: how many devices the module runs on.
_DEVICE_COUNTS = ("replica_count", "num_partitions")
# Integer attribute values (dimensions, indices, parameter numbers, ...) are int64 in XLA.
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1

#: Largest constant (in bytes) made from text that does not list its elements
#: (an elided ``{...}`` or an array written as one scalar).
MAX_IMPLICIT_CONSTANT_BYTES = 1 << 30

#: Deepest nesting of instructions written as operands (``add(f32[] negate(...), ...)``).
MAX_OPERAND_NESTING = 64

#: The opcodes whose result shape XLA infers when the text leaves it out (its
#: parser's ``CanInferShape``); the others must be written with their shape.
_INFERABLE = frozenset("""abs add add-dependency after-all atan2 batch-norm-grad batch-norm-inference
batch-norm-training call cbrt ceil cholesky clamp complex compare concatenate conditional convolution
copy cosine count-leading-zeros divide domain dot erf exponential exponential-minus-one fft floor gather
get-dimension-size get-tuple-element imag is-finite log log-plus-one logistic and not or xor map maximum
minimum multiply negate opt-barrier pad partition-id popcnt power real reduce reduce-window remainder
replica-id reverse round-nearest-afz round-nearest-even rsqrt scatter select select-and-scatter
set-dimension-size shift-left shift-right-arithmetic shift-right-logical sign sine sort sqrt subtract
tan tanh topk transpose triangular-solve tuple while""".split())

#: XLA's short forms of the async wrappers: ``custom-call-start`` is an
#: ``async-start`` whose computation is one ``custom-call``.
_ASYNC_SUFFIXES = (("-start", "async-start"), ("-update", "async-update"), ("-done", "async-done"))
#: Attributes of a short-form async op that stay on the async-start only, and
#: those XLA gives both the async-start and the op it wraps.
_ASYNC_OWN = frozenset({"async_execution_thread", "output_to_operand_aliasing", "sharding",
                        "control-predecessors"})
_ASYNC_SHARED = frozenset({"metadata", "backend_config", "frontend_attributes", "statistics", "origin"})


def _async_chain_start(inst: HloInstruction) -> HloInstruction | None:
    """The async-start an async-start or async-update operand belongs to."""
    while inst.opcode == "async-update" and inst.operands:
        inst = inst.operands[0]
    return inst if inst.opcode == "async-start" else None


def _can_infer(opcode: str) -> bool:
    return opcode in _INFERABLE and has_rule(opcode)


class _Taken:
    """The names a nested operand's generated name must avoid: the computation's
    so far and the one of the instruction being read."""

    def __init__(self, scope: dict, pending: str | None):
        self.scope, self.pending = scope, pending

    def __contains__(self, name: str) -> bool:
        return name in self.scope or name == self.pending


def _fresh_name(base: str, taken) -> str:
    """``base``, or ``base.1``, ``base.2``, ... (XLA's NameUniquer) not in ``taken``."""
    if base not in taken:
        return base
    k = 1
    while f"{base}.{k}" in taken:
        k += 1
    return f"{base}.{k}"


def parse_hlo(text: str) -> HloModule:
    """Parse HLO text into an :class:`HloModule`.

    Raises :class:`HloParseError` (with ``line`` and ``column``) on malformed input.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_hlo expects HLO text (str), got {type(text).__name__}")
    parser = Parser(text)
    try:
        with gc_paused():
            parser.reject_unencodable()
            return parser.module()
    except HloParseError:
        raise
    except Exception as e:  # a parser bug or pathological input must still say where
        raise parser.error(f"cannot parse HLO text ({type(e).__name__}: {e})") from e


def _describe_char(c: str) -> str:
    """A character for an error message, with its code point when it is not plain ASCII."""
    if c.isascii() and c.isprintable():
        return f"character '{c}'"
    kind = "character" if c.isascii() else "non-ASCII character"
    return f"{kind} {c!r} (U+{ord(c):04X})"


# ----------------------------------------------------------------------------
# The parser
# ----------------------------------------------------------------------------

class Parser:
    def __init__(self, text: str):
        if "\r" in text:                 # Windows (\r\n) and old Mac (\r) line ends, as XLA's lexer
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.text = text
        self.pos = 0
        self.end = len(text)  # narrowed while one attribute value is read
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        # (instruction, attribute name, CompRef or tuple of them), resolved at the end.
        self._comp_refs: list = []
        # (id(instruction), callee name) -> position of the name, for call-graph errors.
        self._call_sites: dict = {}
        # Computations read so far, by name (an instruction written without its
        # shape may need its callee's), and those made for short-form async ops.
        self._done: dict[str, HloComputation] = {}
        self._generated: list[HloComputation] = []
        self._pending_name: str | None = None      # the instruction being read (nested ones avoid it)
        # Shapes repeat (a training step has thousands of instructions and tens of
        # shapes): the Shape of each simple shape text, parsed once (shapes are immutable).
        self._shapes: dict[str, Shape] = {}
        # (attribute name, start, end) of the last attribute value that spanned
        # lines: a bracket left open there swallows the computation's '}'.
        self._spanning: tuple | None = None

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
            return "end of the attribute value" if self.end < len(self.text) else "end of input"
        c = self.text[self.pos]
        if not (c.isascii() and c.isprintable()):
            return _describe_char(c)
        m = _WORD_RE.match(self.text, self.pos, self.end) or _INT_RE.match(self.text, self.pos, self.end)
        return f"'{m.group(0) if m else c}'"

    def reject_unencodable(self) -> None:
        """HLO text is UTF-8: a character that cannot be encoded (a lone surrogate,
        which Python strings may hold) is an error at its position, rather than a
        ``UnicodeEncodeError`` when the module is later hashed or compiled."""
        if self.text.isascii():
            return
        try:
            self.text.encode("utf-8")
        except UnicodeEncodeError as e:
            code = ord(self.text[e.start])
            # U+DC80..U+DCFF is how Python's surrogateescape keeps a byte that is not UTF-8.
            byte = f" (it stands for the byte 0x{code - 0xDC00:02X}, which is not UTF-8)" \
                if 0xDC80 <= code <= 0xDCFF else ""
            raise self.error(f"lone surrogate U+{code:04X} cannot be encoded as UTF-8{byte}: "
                             "HLO text must be valid Unicode", e.start) from None

    # -- scanning ----------------------------------------------------------------
    def skip_ws(self) -> int:
        """Skip blanks and comments; returns the new position."""
        text, end = self.text, self.end
        pos = _BLANKS_RE.match(text, self.pos, end).end()  # the common case: blanks only
        if pos >= end or text[pos] != "/":  # no comment follows (called ~30 times an instruction)
            self.pos = pos
            return pos
        while pos < end:
            c = text[pos]
            if c in _BLANKS:
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
        """Skip spaces and tabs only (an empty attribute value ends at its line's end)."""
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
        if not self.text.startswith(s, pos, self.end):
            raise self.error(f"expected {what or repr(s)}, found {self._found()}", pos)
        self.pos = pos + len(s)
        return pos

    def accept_keyword(self, word: str) -> bool:
        self.skip_ws()
        m = _WORD_RE.match(self.text, self.pos, self.end)
        if m and m.group(0) == word:
            self.pos = m.end()
            return True
        return False

    def name(self, what: str) -> tuple[str, int]:
        """A name with an optional ``%`` prefix (dropped); returns (name, position).

        Names are ASCII, as in XLA: ``[A-Za-z_][A-Za-z0-9_.-]*``."""
        pos = self.skip_ws()
        m = _NAME_RE.match(self.text, pos, self.end)
        after_percent = pos + 1 if self.text.startswith("%", pos, self.end) else pos
        self._reject_non_ascii_name(m.end() if m else after_percent)
        if not m:
            raise self.error(f"expected {what}, found {self._found()}", pos)
        self.pos = m.end()
        return m.group(1), pos

    def word(self, what: str) -> str:
        pos = self.skip_ws()
        m = _WORD_RE.match(self.text, pos, self.end)
        self._reject_non_ascii_name(m.end() if m else pos)
        if not m:
            raise self.error(f"expected {what}, found {self._found()}", pos)
        self.pos = m.end()
        return m.group(0)

    def _reject_non_ascii_name(self, pos: int) -> None:
        """A non-ASCII letter or digit where a name goes on is an error of its own:
        'expected =' would hide that only ASCII names exist."""
        if pos < self.end:
            c = self.text[pos]
            if not c.isascii() and (c.isalnum() or c == "_"):
                raise self.error(f"{_describe_char(c)} in a name: HLO names are made of ASCII "
                                 "letters, digits, '_', '.' and '-'", pos)

    def integer(self) -> int:
        """A decimal integer that fits int64 (what every integer attribute of XLA is)."""
        pos = self.skip_ws()
        m = _INT_RE.match(self.text, pos, self.end)
        if not m:
            raise self.error(f"expected an integer, found {self._found()}", pos)
        self.pos = m.end()
        value = self.bounded_int(m.group(0), pos, 19)
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise self.error(f"integer {value} does not fit in 64 bits (HLO integers are int64)", pos)
        return value

    def number(self) -> float:
        """A decimal or exponent-form number (``epsilon=0.001``), as a float."""
        pos = self.skip_ws()
        m = _SCALAR_RE.match(self.text, pos, self.end)
        if not m or m.group(0).lstrip("+-")[:1] in ("t", "f"):
            raise self.error(f"expected a number, found {self._found()}", pos)
        self.pos = m.end()
        text = m.group(0)
        if len(text) > 64:
            raise self.error(f"number {text[:20]}... is too long", pos)
        return float(text.split("(")[0])

    def bounded_int(self, text: str, pos: int, max_digits: int, what: str = "integer",
                    limit: str = "does not fit in 64 bits (HLO integers are int64)") -> int:
        """``int(text)`` for a decimal of at most ``max_digits`` significant digits.

        Longer text is an error at ``pos`` ("<what> 1234... (N digits) <limit>")
        before Python converts it: int() of a long string is slow and refuses
        more than 4300 digits with a message that says nothing about where.
        """
        digits = text.lstrip("+-").lstrip("0") or "0"
        if len(digits) > max_digits:
            shown = text if len(text) <= 24 else f"{text[:20]}... ({len(digits)} digits)"
            raise self.error(f"{what} {shown} {limit}", pos)
        return -int(digits) if text.startswith("-") else int(digits)

    def shape(self) -> Shape:
        pos = self.skip_ws()
        simple = _SIMPLE_SHAPE_RE.match(self.text, pos, self.end)
        if simple is not None:
            shape = self._shapes.get(simple.group(0))
            if shape is None:
                shape = self._parse_shape(pos)
                if self.pos == simple.end():  # the same text parsed: the same shape wherever it is
                    self._shapes[simple.group(0)] = shape
            else:
                self.pos = simple.end()
            return shape
        return self._parse_shape(pos)

    def _parse_shape(self, pos: int) -> Shape:
        # A shape may span lines (a tuple shape broken after a comma): the shape
        # parser reads the text itself, so its "column N" is a position in it.
        text = self.text if self.end == len(self.text) else self.text[:self.end]
        try:
            shape, end = parse_shape_prefix(text, pos)
        except (ValueError, TypeError, IndexError) as e:
            m = re.search(r" at column ([0-9]+)", str(e))
            err_pos = int(m.group(1)) - 1 if m else pos
            # The error's own prefix gives line and column; the shape parser's is dropped.
            message = str(e).replace(m.group(0), "", 1) if m else str(e)
            raise self.error(f"bad shape: {message}", err_pos) from None
        self.pos = end
        return shape

    def _string_end(self, pos: int) -> int:
        """Position after the string quoted by ``"`` or ``'`` at ``pos`` (backslash
        escapes; it may span lines, as in XLA's lexer)."""
        text, quote = self.text, self.text[pos]
        i = pos + 1
        while i < self.end:
            c = text[i]
            if c == "\\":
                i += 2
            elif c == quote:
                return i + 1
            else:
                i += 1
        raise self.error("unterminated string", pos)

    def value_end(self, start: int) -> int:
        """End of an attribute value starting at ``start``.

        A value is one run of text as XLA's lexer makes one token (or one
        bracketed group) of it: it ends at a ``,``, a blank or a comment outside
        brackets and quotes, or at a closing bracket that belongs to an
        enclosing construct.  Brackets and quoted strings inside it may span
        lines and must match.  Outside strings and comments it must be ASCII.
        """
        text, end = self.text, self.end
        closers = {"}": "{", "]": "[", ")": "("}
        stack: list[tuple[str, int]] = []
        i = start
        while i < end:
            run = (_BRACKETED_RUN_RE if stack else _VALUE_RUN_RE).match(text, i, end)
            if run is not None:
                i = run.end()
                if i >= end:
                    break
            c = text[i]
            if c == '"' or c == "'":
                i = self._string_end(i)
                continue
            if c == "/" and text.startswith(("//", "/*"), i, end):
                if not stack:
                    break                       # a comment after the value (skip_ws skips it)
                i = self._comment_end(i)
                continue
            if not c.isascii():
                raise self.error(f"{_describe_char(c)} in an attribute value: outside quoted "
                                 "strings HLO text is ASCII", i)
            if c in "{[(":
                stack.append((c, i))
            elif c in closers:
                if not stack:
                    break
                opener, opos = stack.pop()
                if opener != closers[c]:
                    raise self.error(f"'{c}' does not match '{opener}' at {self._where(opos)}", i)
            elif not stack and (c == "," or c in _BLANKS):
                nxt = self._value_continues(i)
                if nxt is None:
                    break
                i = nxt
                continue
            i += 1
        if stack:
            opener, opos = stack[-1]
            raise self.error(f"unterminated '{opener}'", opos)
        return i

    def _value_continues(self, pos: int) -> int | None:
        """Where a value goes on after the blanks at ``pos``, or None if it ends.

        Two of XLA's attribute forms have a blank inside: ``literal=f32[] 0.1``
        (a shape, then the literal) and ``replica_groups=mesh[...] {...}``.  What
        follows the blank there (a bracket, a number, or on the same line
        true/false/inf/nan) cannot start a next attribute or instruction, so a
        blank before it is inside the value.  The mesh form also has a comma
        inside, before ``device_ids=(...)`` (no instruction has an attribute
        of that name)."""
        text, end = self.text, self.end
        if text[pos] == ",":
            m = _DEVICE_IDS_RE.match(text, pos + 1, end)
            return m.start(1) if m else None
        nxt = _BLANKS_RE.match(text, pos, end).end()
        if nxt >= end:
            return None
        if text[nxt] in "{([0123456789+-.":
            return nxt
        word = _WORD_RE.match(text, nxt, end)
        if word and word.group(0) in ("true", "false", "inf", "nan") and "\n" not in text[pos:nxt]:
            return nxt
        return None

    def _comment_end(self, pos: int) -> int:
        """Position after the ``//`` or ``/* */`` comment at ``pos``."""
        if self.text.startswith("//", pos, self.end):
            nl = self.text.find("\n", pos, self.end)
            return self.end if nl < 0 else nl + 1
        close = self.text.find("*/", pos + 2, self.end)
        if close < 0:
            raise self.error("unterminated comment '/*'", pos)
        return close + 2

    # -- module --------------------------------------------------------------------
    #: The stack-frame index XLA prints after the module header of a compiled
    #: module: four tables, in this order, of numbered lines (a quoted string,
    #: or ``{key=value ...}``), which ``metadata={... stack_frame_id=N}`` refers to.
    _STACK_FRAME_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")

    def stack_frame_index(self) -> tuple:
        """The tables as ``((heading, (entry text, ...)), ...)``, kept for printing;
        ``()`` when the module has none."""
        tables = []
        for heading in self._STACK_FRAME_TABLES:
            pos = self.skip_ws()
            m = _WORD_RE.match(self.text, pos, self.end)
            if m is None or m.group(0) != heading or self._starts_computation(m.end()):
                if tables:
                    raise self.error(f"expected '{heading}' (the stack-frame tables come in the order "
                                     f"{', '.join(self._STACK_FRAME_TABLES)})", pos)
                return ()
            self.pos = m.end()
            entries = []
            while _INT_RE.match(self.text, self.skip_ws(), self.end) and not self.peek("-"):
                start = self.pos
                self.integer()
                self.skip_blanks()
                if self.text.startswith('"', self.pos, self.end):
                    self.pos = self._string_end(self.pos)
                else:
                    end = self.value_end(self.pos)
                    if not self.text.startswith("{", self.pos, self.end) or end == self.pos:
                        raise self.error(f"expected a quoted name or {{...}} in table {heading}")
                    self.pos = end
                entries.append(self.text[start:self.pos])
            tables.append((heading, tuple(entries)))
        return tuple(tables)

    def _starts_computation(self, pos: int) -> bool:
        """Whether the word ending at ``pos`` names a computation (``FileNames {``)."""
        saved = self.pos
        self.pos = pos
        try:
            return self.peek("{") or self.peek("(")
        finally:
            self.pos = saved

    def module(self) -> HloModule:
        pos = self.skip_ws()
        attrs: dict = {}
        if self.accept_keyword("HloModule"):
            name, _ = self.name("module name")
            if self.text.startswith(":", self.pos, self.end):
                self.pos += 1                         # `HloModule name:`, an older spelling
            while self.accept(","):
                key_pos = self.skip_ws()
                if self._next_key_is("entry_computation_layout"):
                    key, value = "entry_computation_layout", self.entry_computation_layout()
                else:
                    key, value, _ = self.raw_attribute()
                if key in attrs:
                    raise self.error(f"duplicate module attribute '{key}'", key_pos)
                if key in _DEVICE_COUNTS:
                    value = self._device_count(key, value.text, key_pos)
                attrs[key] = value
            try:
                check_device_counts(attrs.get("replica_count", 1), attrs.get("num_partitions", 1))
            except DeviceGroupError as e:
                raise self.error(str(e), pos) from None
        elif not self._headerless_start(pos):
            raise self.error(f"expected 'HloModule' at the start of the module, found {self._found()}",
                             pos)
        else:
            name = None                               # XLA: module_<entry name>
        stack_frames = self.stack_frame_index()
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
            self._done[comp.name] = comp
            comps.append(comp)
            if is_entry:
                if entry is not None:
                    raise self.error(f"second ENTRY computation '{comp.name}' (the first is "
                                     f"'{entry.name}' at {self._where(entry_pos)})", start)
                entry, entry_pos = comp, start
        if not comps:
            raise self.error("module has no computations")
        if entry is None:
            entry = comps[-1]                          # as XLA: the last one
        declared = attrs.get("entry_computation_layout")
        if declared is not None and not declared.fits(entry):
            params, result = entry.parameter_shapes(), entry.root.shape
            raise self.error(f"entry_computation_layout ({', '.join(map(str, declared.parameters))}) -> "
                             f"{declared.result} does not describe ENTRY {entry.name}: "
                             f"({', '.join(map(str, params))}) -> {result}", declared.pos)
        for comp in self._generated:                    # short-form async ops' computations
            comp.name = _fresh_name(comp.name, by_name)
            by_name[comp.name] = (comp, 0)
            comps.append(comp)

        self._resolve_comp_refs({n: c for n, (c, _) in by_name.items()})
        self._check_call_graph(comps)
        module = HloModule(name or f"module_{entry.name}", comps, entry=entry, attrs=attrs)
        if stack_frames:
            module.stack_frame_index = stack_frames
        for c in comps:
            c.is_entry = c is entry
            c.compute_users()
        module.sort_computations()
        return module

    def _next_key_is(self, key: str) -> bool:
        m = _NAME_RE.match(self.text, self.pos, self.end)
        return m is not None and m.group(1) == key

    def entry_computation_layout(self) -> EntryComputationLayout:
        """``entry_computation_layout={(shape, ...)->shape}``: the calling convention
        (a shape written without a layout has the default one, as in XLA)."""
        self.name("attribute name")
        self.expect("=")
        brace = self.expect("{")
        self.expect("(", "'(' opening the parameter shapes")
        params = []
        if not self.accept(")"):
            while True:
                params.append(self.shape())
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')' in the parameter shapes")
        self.expect("->", "'->' before the result shape")
        result = self.shape()
        self.expect("}", "'}' closing entry_computation_layout")
        return EntryComputationLayout(tuple(params), result, brace)

    def _headerless_start(self, pos: int) -> bool:
        """Text that starts with a computation (``ENTRY main {``, ``c (...) -> ...``):
        XLA reads it as a module without its header line."""
        m = _NAME_RE.match(self.text, pos, self.end)
        if m is None:
            return False
        if m.group(1) == "ENTRY":
            return True
        return self._starts_computation(m.end())

    def _device_count(self, key: str, text: str, pos: int) -> int:
        """``replica_count=N`` / ``num_partitions=N`` of the module header: an int
        from 1 to ``MAX_MODULE_DEVICES`` (``collectives.check_device_count``)."""
        if not _INT_RE.fullmatch(text):
            raise self.error(f"{key}={text} must be an integer from 1 to {MAX_MODULE_DEVICES}", pos)
        value = self.bounded_int(text, pos, 19, key, f"is out of range: a module runs on 1 to "
                                 f"{MAX_MODULE_DEVICES} devices (replica_count x num_partitions)")
        try:
            return check_device_count(key, value)
        except DeviceGroupError as e:
            raise self.error(str(e), pos) from None

    def raw_attribute(self) -> tuple[str, Raw, int]:
        """``key=value`` kept as text (module and computation attributes)."""
        key, pos = self.name("attribute name")
        after = self.expect("=") + 1
        start = self.skip_ws()
        end = self.value_end(start)
        if end == start:
            raise self.error(f"missing value for attribute '{key}'", after)
        self.pos = end
        return key, Raw(self.text[start:end]), pos

    def _resolve_comp_refs(self, comps: dict[str, HloComputation]) -> None:
        def resolve(ref) -> HloComputation:
            if isinstance(ref, HloComputation):     # written in the attribute itself
                return ref
            try:
                return comps[ref.name]
            except KeyError:
                raise self.error(f"undefined computation '{ref.name}'", ref.pos) from None

        for inst, key, value in self._comp_refs:
            inst.attrs[key] = (tuple(resolve(r) for r in value) if isinstance(value, tuple)
                               else resolve(value))
            for ref in value if isinstance(value, tuple) else (value,):
                if isinstance(ref, CompRef):
                    self._call_sites.setdefault((id(inst), ref.name), ref.pos)

    def _check_call_graph(self, comps: list) -> None:
        """No computation calls itself and no calls nest deeper than MAX_CALL_DEPTH
        (reported at the callee's name in the offending instruction).  Checked
        before anything walks the call graph, so nothing downstream recurses without end."""
        problem = find_call_graph_problem(comps)
        if problem is not None:
            inst, callee, message = problem
            raise self.error(message, self._call_sites.get((id(inst), callee.name), 0))

    # -- computation -----------------------------------------------------------------
    def computation(self) -> tuple[HloComputation, bool, int]:
        is_entry = self.accept_keyword("ENTRY")
        name, name_pos = self.name("computation name (or ENTRY)")
        if self.peek("("):
            self.signature()
        comp = self.instruction_list(name, is_entry)
        # XLA may tag a computation with `, execution_thread="..."`: kept for
        # printing (xlac runs every computation on the calling thread).
        while self.accept(","):
            key, value, _ = self.raw_attribute()
            comp.attrs[key] = value
        return comp, is_entry, name_pos

    def instruction_list(self, name: str, is_entry: bool = False) -> HloComputation:
        """``{ instruction+ }``: the body of computation ``name``."""
        brace = self.expect("{", f"'{{' to open computation '{name}'")
        scope: dict[str, HloInstruction] = {}
        root: HloInstruction | None = None
        root_pos = None
        while True:
            pos = self.skip_ws()
            if pos >= self.end:
                raise self._unterminated_computation(name, brace)
            if self.text[pos] == "}":
                self.pos = pos + 1
                break
            inst, is_root, pos = self.instruction(scope, name, brace)
            if is_root:
                if root is not None:
                    raise self.error(f"second ROOT in computation '{name}' (the first is "
                                     f"'{root.name}' at {self._where(root_pos)})", pos)
                root, root_pos = inst, pos
        if not scope:
            raise self.error(f"computation '{name}' has no instructions", brace)
        return HloComputation(name, scope.values(), root=root, is_entry=is_entry)

    def _unterminated_computation(self, name: str, brace: int) -> HloParseError:
        """The error for a computation the input ends in.  When an attribute value
        inside it spanned lines, its unclosed bracket most likely took the
        computation's '}' for its own: that bracket is named."""
        spanning = self._spanning
        if spanning is not None and spanning[1] > brace:
            key, start, end = spanning
            return self.error(f"unterminated '{self.text[start]}' of attribute '{key}': it closes only "
                              f"at {self._where(end - 1)}, which leaves computation '{name}' without "
                              "its '}'", start)
        return self.error(f"unterminated '{{': computation '{name}' has no closing '}}'", brace)

    def nested_computation(self) -> HloComputation:
        """A computation written in an attribute (``to_apply={ ... }``), as XLA
        reads it: named ``_`` (made unique with the module's names) and added
        to the module."""
        saved = self._pending_name
        try:
            comp = self.instruction_list("_")
        finally:
            self._pending_name = saved
        self._generated.append(comp)
        return comp

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
        fast = self._plain_instruction(scope, start)
        if fast is not None:
            return fast
        plain = _PLAIN_HEADER_RE.match(self.text, start, self.end)
        if plain is not None and plain.group(3) not in ("ROOT", "ENTRY"):
            is_root, name, name_pos = plain.group(1) is not None, plain.group(3), plain.start(2)
            self.pos = plain.end()
        else:
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
        self._pending_name = name
        inst = self.instruction_rhs(scope, name, allow_attributes=True, depth=0)
        inst.location = self.line_col(start)       # where the verifier's errors point
        scope[name] = inst
        return inst, is_root, start

    def _plain_instruction(self, scope: dict, start: int):
        """``instruction``'s result for the common form (``_PLAIN_INSTRUCTION_RE``)
        when every part of it is what the token-by-token reading would accept
        (a shape read before, a known opcode, defined operands, the opcode's
        arity), else None: that reading then parses the line and makes the
        error if there is one."""
        m = _PLAIN_INSTRUCTION_RE.match(self.text, start, self.end)
        if m is None:
            return None
        root, name, shape_text, opcode, listed = m.groups()
        shape = self._shapes.get(shape_text)
        definition = OPCODES.get(opcode)
        if shape is None or definition is None or name in scope or name in ("ROOT", "ENTRY") or \
                opcode in ("parameter", "constant"):
            return None
        operands = []
        if listed is not None:
            for operand in listed.split(","):
                inst = scope.get(operand.strip(" \t").lstrip("%"))
                if inst is None:
                    return None
                operands.append(inst)
        if definition.arity is not None and len(operands) != definition.arity:
            return None
        self._pending_name = name
        self.pos = m.end()
        inst = self._instruction_end(HloInstruction(opcode, shape, operands, {}, name), opcode,
                                     allow_attributes=True)
        inst.location = self.line_col(start)
        scope[name] = inst
        return inst, root is not None, start

    def instruction_rhs(self, scope: dict, name: str | None, allow_attributes: bool,
                        depth: int) -> HloInstruction:
        """``[shape] opcode(operands) [, attribute]*``: one instruction.

        The shape may be left out where XLA infers it (``ROOT v = abs(a)``); a
        nested operand (``add(f32[] parameter(0), ...)``) is an instruction of its
        own, named ``<opcode>.anon`` (``.anon.1``, ...) as XLA names it, and takes
        no attributes (a comma there separates operands).  ``name`` is None for
        those.  ``X-start``/``-update``/``-done`` of an opcode X that is not an
        opcode itself is XLA's short form of ``async-start``/... wrapping one X.
        """
        if depth > MAX_OPERAND_NESTING:
            raise self.error(f"operands nested more than {MAX_OPERAND_NESTING} deep (xlac.hlo.parser."
                             "MAX_OPERAND_NESTING)")
        pos = self.skip_ws()
        shape = self.shape() if _SHAPE_START_RE.match(self.text, pos, self.end) else None
        op_pos = self.skip_ws()
        word = self.word("opcode")
        opcode, wrapped = self._opcode(word, op_pos)
        if shape is None and not _can_infer(opcode):
            raise self.error(f"{word} needs its result shape written before the opcode (XLA does not "
                             "infer it)", op_pos)
        self.expect("(", f"'(' after opcode {word}")
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
            operands = self.operands(scope, depth)
        self.expect(")", "')' after the value" if opcode in ("constant", "parameter") else "',' or ')'")
        arity = OPCODES[wrapped or opcode].arity
        if arity is not None and len(operands) != arity and opcode != "async-update" and \
                opcode != "async-done":
            raise self.error(f"{wrapped or opcode} takes {arity} operand{'s' * (arity != 1)}, "
                             f"got {len(operands)}", op_pos)
        if name is None:
            name = _fresh_name(f"{wrapped or opcode}.anon", _Taken(scope, self._pending_name))
        # A short-form async op reads its attributes as the wrapped op's.
        inst = self._instruction_end(HloInstruction(wrapped or opcode, shape, operands, attrs, name), opcode,
                                     allow_attributes)
        if wrapped is not None:
            inst = self._async_short_form(inst, opcode, op_pos)
        if inst.shape is None:
            inst.shape = self._infer_shape(inst, op_pos)
        if depth:
            inst.location = self.line_col(pos)        # (``instruction`` sets a named one's)
            if name not in scope:
                scope[name] = inst                    # a nested operand joins its computation
        return inst

    def _instruction_end(self, inst: HloInstruction, opcode: str, allow_attributes: bool) -> HloInstruction:
        """``inst``'s attributes, read after its ``)``, and what XLA assumes of an absent one."""
        if allow_attributes:
            key = None
            while True:
                pos = self.skip_ws()
                if not self.text.startswith(",", pos, self.end):
                    break
                self.pos = pos + 1
                key = self.attribute(inst)
            self._check_instruction_end(inst.name, key, pos)
        if opcode == "broadcast" and "dimensions" not in inst.attrs and inst.operands and \
                inst.operands[0].shape.is_array and not inst.operands[0].shape.dimensions:
            inst.attrs["dimensions"] = ()            # a scalar's broadcast needs none (XLA)
        return inst

    def _async_short_form(self, inst: HloInstruction, opcode: str, pos: int) -> HloInstruction:
        """``X-start(ops), attrs`` (read as an X) -> an ``async-start`` calling a new
        computation of one X over parameters; ``X-update``/``X-done`` -> the
        async op on the chain, checked against the X its async-start wraps."""
        wrapped = inst.opcode
        if opcode != "async-start":
            chain = _async_chain_start(inst.operands[0]) if len(inst.operands) == 1 else None
            if chain is None:
                raise self.error(f"{wrapped}{opcode[5:]} takes one operand, the {wrapped}-start or "
                                 f"{wrapped}-update it continues", pos)
            comp = chain.attrs.get("calls")
            comp = self._done.get(comp.name) if isinstance(comp, CompRef) else comp
            if comp is not None and comp.root is not None and comp.root.opcode != wrapped:
                raise self.error(f"{wrapped}{opcode[5:]} continues an async {comp.root.opcode}, not a "
                                 f"{wrapped}", pos)
            return HloInstruction(opcode, inst.shape, inst.operands, inst.attrs, inst.name)
        shape = inst.shape
        if not (shape.is_tuple and len(shape.tuple_shapes) >= 2 and shape.tuple_shapes[0].is_tuple):
            raise self.error(f"{wrapped}-start's shape must be ((operands), result, context...), got "
                             f"{shape}", pos)
        params = [HloInstruction("parameter", o.shape, [], {"parameter_number": k},
                                 "async_param" + (f".{k}" if k else "")) for k, o in enumerate(inst.operands)]
        op = HloInstruction(wrapped, shape.tuple_shapes[1], params,
                            {k: v for k, v in inst.attrs.items() if k not in _ASYNC_OWN}, "async_op")
        self._comp_refs = [(op if i is inst else i, key, value) for i, key, value in self._comp_refs]
        comp = HloComputation("async_wrapped", params + [op], root=op)
        self._generated.append(comp)
        attrs = {"calls": comp}
        attrs.update((k, v) for k, v in inst.attrs.items() if k in _ASYNC_OWN or k in _ASYNC_SHARED)
        return HloInstruction("async-start", shape, inst.operands, attrs, inst.name)

    def _opcode(self, word: str, pos: int) -> tuple[str, str | None]:
        """(opcode, wrapped opcode of an async short form such as ``custom-call-start``)."""
        if word in OPCODES:
            return word, None
        for suffix, opcode in _ASYNC_SUFFIXES:
            if word.endswith(suffix) and word[:-len(suffix)] in OPCODES:
                return opcode, word[:-len(suffix)]
        raise self.error(f"unknown opcode '{word}'", pos)

    def _infer_shape(self, inst: HloInstruction, pos: int) -> Shape:
        """The result shape XLA infers for an instruction written without one."""
        attrs = dict(inst.attrs)
        for key, value in attrs.items():
            refs = value if isinstance(value, tuple) else (value,)
            if not any(isinstance(r, CompRef) for r in refs):
                continue
            for ref in refs:
                if isinstance(ref, CompRef) and ref.name not in self._done:
                    raise self.error(f"cannot infer the shape of {inst.opcode} '{inst.name}': computation "
                                     f"'{ref.name}' must be defined before it (or write the shape)", ref.pos)
            comps = tuple(self._done[r.name] if isinstance(r, CompRef) else r for r in refs)
            attrs[key] = comps if isinstance(value, tuple) else comps[0]
        try:
            return infer_shape(inst.opcode, [o.shape for o in inst.operands], attrs)
        except (ShapeError, UnsupportedError) as e:
            raise self.error(f"cannot infer the shape of {inst.opcode} '{inst.name}': {e}", pos) from None

    def operands(self, scope: dict, depth: int = 0) -> list[HloInstruction]:
        """``operand (, operand)*``: ``[shape] name``, or a nested instruction
        ``[shape] opcode(operands)``."""
        out: list[HloInstruction] = []
        if self.peek(")"):
            return out
        text = self.text
        while True:
            plain = _PLAIN_OPERAND_RE.match(text, self.pos, self.end)
            if plain is not None:                     # ~10k operands in a training step
                inst = scope.get(plain.group(1))
                if inst is not None:
                    out.append(inst)
                    self.pos = plain.end()            # at the ',' or ')' that follows
                    if text[self.pos] != ",":
                        return out
                    self.pos += 1
                    continue
            pos = self.skip_ws()
            declared = None
            if _SHAPE_START_RE.match(self.text, pos, self.end):
                declared = self.shape()  # long form: `f32[2]{0} %x`
            name, name_pos = self.name("operand name (or a nested instruction)")
            if self.peek("(") and not self.text.startswith("%", name_pos):
                self.pos = pos                        # `f32[2] negate(x)`: an instruction
                out.append(self.instruction_rhs(scope, None, allow_attributes=False, depth=depth + 1))
            else:
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
        after = self.expect("=", f"'=' after attribute name '{key}'") + 1
        kind = OPCODES[inst.opcode].attribute_kind(key)
        # A value may start on a later line, but one that may be empty (a
        # scalar's `padding=`) ends with its line: the next line is the next instruction.
        start = self.skip_blanks() if kind.allow_empty else self.skip_ws()
        end = self.value_end(start)
        if end == start and not kind.allow_empty:
            raise self.error(f"missing value for attribute '{key}'", after)
        if self.text.find("\n", start, end) >= 0:
            self._spanning = (key, start, end)
        if kind.parse is None:                      # kept as text (RAW, window, dim_labels)
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
            except HloParseError as e:
                raise self._spanning_hint(e, key, start, end) from None
            finally:
                self.end = saved_end
            self.pos = end
            if kind is COMPUTATION or kind is COMPUTATIONS:
                self._comp_refs.append((inst, key, value))
        inst.attrs[key] = value
        return key

    def _spanning_hint(self, e: HloParseError, key: str, start: int, end: int) -> HloParseError:
        """``e``, with a hint when the value spans lines and a bracket opened on
        its first line closes only on a later one (most likely left open)."""
        if self.text.find("\n", start, end) < 0 or self.text[start] not in "{[(" or \
                self.text[end - 1] not in "}])":
            return e
        hint = (f" (the '{self.text[start]}' of attribute '{key}' at {self._where(start)} closes only at "
                f"{self._where(end - 1)}: is it unterminated?)")
        message = str(e).split(": ", 1)[1] if e.line else str(e)
        return HloParseError(message + hint, e.line, e.column)

    def _check_instruction_end(self, name: str, key: str | None, pos: int) -> None:
        """After an instruction (at ``pos``, past blanks and comments) come '}' or
        the next instruction's name (on the same line or not); anything else is
        an error here rather than a confusing one at the next instruction."""
        if pos >= self.end or self.text[pos] in "}%" or _NAME_RE.match(self.text, pos, self.end):
            return
        after = f"the value of attribute '{key}'" if key else f"instruction '{name}'"
        raise self.error(f"unexpected {self._found()} after {after} (expected ',', '}}' or the "
                         "next instruction)", pos)

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
                return self._zeros(shape, pos), True
            self.pos = pos
        if not self.text.startswith("{", pos, self.end):
            return self._scalar_as_array(shape, pos), False
        texts: list = []
        self._array_level(dims, 0, et, texts)
        return self._convert(texts, et).reshape(dims), False

    def _scalar_as_array(self, shape: Shape, pos: int) -> np.ndarray:
        """``f32[4] constant(5)``: XLA's dense-literal reader takes one scalar
        where the nested braces should be and stores it as the first element,
        the others staying zero (``{5, 0, 0, 0}``); it refuses this for complex
        types and for arrays without elements."""
        et = shape.element_type
        if et.is_complex or math.prod(shape.dimensions) == 0 or \
                not _SCALAR_RE.match(self.text, pos, self.end):
            why = ("a complex constant" if et.is_complex else "a constant with no elements"
                   if math.prod(shape.dimensions) == 0 else "an array constant")
            raise self.error(f"expected '{{' of dimension 0 of the constant, found {self._found()} "
                             f"({why} of shape {shape} is written as nested braces)", pos)
        values = self._zeros(shape, pos)
        values.reshape(-1)[0] = self._convert([self.scalar_text(et)], et)[0]
        return values

    def _zeros(self, shape: Shape, pos: int) -> np.ndarray:
        """The zero array of a constant whose text does not hold its elements
        (``{...}``, one scalar): its size is not bounded by the text's, so by
        :data:`MAX_IMPLICIT_CONSTANT_BYTES`."""
        size = math.prod(shape.dimensions) * shape.element_type.dtype.itemsize
        if size > MAX_IMPLICIT_CONSTANT_BYTES:
            raise self.error(f"constant of shape {shape} ({size} bytes) is not written out in full: "
                             f"xlac makes such constants up to {MAX_IMPLICIT_CONSTANT_BYTES} bytes "
                             "(xlac.hlo.parser.MAX_IMPLICIT_CONSTANT_BYTES)", pos)
        return np.zeros(shape.dimensions, dtype=shape.element_type.dtype)

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

    def _integer_element(self, text: str, pos: int, et: PrimitiveType) -> int:
        """One integer constant element: exact (never through float) and in range.

        As in XLA, a ``u64`` element may be written as a negative int64 and means
        its two's complement (``u64[] constant(-1)`` is 2**64 - 1); every other
        value outside the element type's range is an error.
        """
        if not _INT_RE.fullmatch(text):
            raise self.error(f"expected an integer for a {et.value} constant, found '{text}'", pos)
        # 20 digits hold every 64-bit value; more can only be out of range.
        v = self.bounded_int(text, pos, 20, limit=f"is out of range for {et.value}")
        if et is PrimitiveType.U64 and _INT64_MIN <= v < 0:
            v += 2**64
        lo, hi = _int_range(et)
        if not lo <= v <= hi:
            raise self.error(f"{v} is out of range for {et.value} (namely [{lo}, {hi}])", pos)
        return v

    def _float_element(self, text: str, pos: int, et: PrimitiveType) -> int:
        """One float constant element as the bits of ``et``, as XLA's parser makes it.

        A decimal is rounded once to ``et``; one outside the type's finite range
        (after rounding: ``f16[] constant(65519)`` is 65504, 65520 would be inf)
        is an error.  ``inf`` converts as ml_dtypes does (a NaN for the fn
        types, the largest value for f4e2m1fn).  ``nan``/``-nan`` keep their
        sign; ``nan(0x7f)`` sets the mantissa bits to the payload (types with
        IEEE NaNs only; plain ``nan`` is the quiet NaN); a type with one NaN
        (f8e4m3fn, the fnuz types, f8e8m0fnu) accepts no payload.
        """
        nan = _NAN_RE.fullmatch(text)
        if nan:
            return self._nan_bits(nan, pos, et)
        if text in ("true", "false"):
            raise self.error(f"expected a number for a {et.value} constant, found '{text}'", pos)
        value = float(text)
        if math.isinf(value) and text.lstrip("+-") != "inf":
            raise self.error(f"{text} is out of range for {et.value} (it overflows even f64)", pos)
        rounded = round_float(value, et)
        if math.isfinite(value):
            wide = float(np.asarray(rounded).astype(np.float64))
            check = wide if math.isfinite(wide) else value
            lo, hi = _float_range(et)
            if not lo <= check <= hi:
                raise self.error(f"{text} is out of range for {et.value} (its finite values are in "
                                 f"[{lo:g}, {hi:g}])", pos)
        return int(np.asarray(rounded).reshape(()).view(_UINT[et.byte_size]))

    def _nan_bits(self, m, pos: int, et: PrimitiveType) -> int:
        negative = m.group(1) == "-"
        payload = int(m.group(2), 16) if m.group(2) else None
        if payload == 1 << 51:          # f64's own quiet bit: what plain `nan` means
            payload = None
        bits, mantissa, payload_bits = _nan_layout(et)
        if payload == 0:
            raise self.error("a NaN payload must not be 0 (nan(0x0) would be infinity)", pos)
        if payload_bits == 0:
            if payload is not None:
                raise self.error(f"{et.value} has a single NaN: it takes no payload (nan(0x{payload:x}))", pos)
            # What converting a NaN gives (ml_dtypes): the one NaN, or -0 for f4e2m1fn.
            rounded = round_float(-math.nan if negative else math.nan, et)
            return int(np.asarray(rounded).reshape(()).view(_UINT[et.byte_size]))
        if payload is None:
            payload = 1 << (payload_bits - 1)             # the quiet NaN
        if payload >= 1 << payload_bits:
            raise self.error(f"NaN payload 0x{payload:x} does not fit the {payload_bits} mantissa bits "
                             f"of {et.value} (at most 0x{(1 << payload_bits) - 1:x})", pos)
        exponent = ((1 << (bits - 1 - mantissa)) - 1) << mantissa
        return (int(negative) << (bits - 1)) | exponent | payload

    def _convert(self, texts: list, et: PrimitiveType) -> np.ndarray:
        """Element texts (from :meth:`scalar_text`) -> a 1-D array of the element type."""
        if et.is_complex:
            part = et.component_type
            pairs = []
            for t in texts:
                pair = t if isinstance(t[0], tuple) else (t, ("0", t[1]))  # a bare real number
                pairs.extend(self._float_element(text, pos, part) for text, pos in pair)
            return np.array(pairs, _UINT[part.byte_size]).view(et.dtype)
        if et.is_pred:
            values = []
            for text, pos in texts:
                if text not in ("true", "false", "0", "1"):
                    raise self.error(f"expected true or false for a pred constant, found '{text}'",
                                     pos)
                values.append(text in ("true", "1"))
            return np.array(values, dtype=et.dtype)
        if et.is_integral:
            values = [self._integer_element(text, pos, et) for text, pos in texts]
            if et.is_sub_byte:
                return np.array(values, np.int64).astype(et.dtype)
            return np.array(values, dtype=et.dtype)
        bits = [self._float_element(text, pos, et) for text, pos in texts]
        return np.array(bits, _UINT[et.byte_size]).view(et.dtype)


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_NAN_RE = re.compile(r"([-+]?)nan(?:\(0x([0-9a-fA-F]+)\))?", re.ASCII)
#: (bits, mantissa bits) of the IEEE types, whose NaNs all take a payload.
_IEEE_LAYOUT = {PrimitiveType.F16: (16, 10), PrimitiveType.BF16: (16, 7), PrimitiveType.F32: (32, 23),
                PrimitiveType.F64: (64, 52)}


def _nan_layout(et: PrimitiveType) -> tuple:
    """(bits, mantissa bits, NaN payload bits) of a float type."""
    if et in _IEEE_LAYOUT:
        bits, mantissa = _IEEE_LAYOUT[et]
        return bits, mantissa, mantissa
    fmt = et.float_format
    return fmt.bits, fmt.mantissa, fmt.nan_payload_bits


def _int_range(et: PrimitiveType) -> tuple:
    if et.is_sub_byte:
        n = et.bit_width
        return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if et.is_signed_int else (0, (1 << n) - 1)
    info = np.iinfo(et.dtype)
    return int(info.min), int(info.max)


def _float_range(et: PrimitiveType) -> tuple:
    """(lowest, largest) finite value of a float type."""
    if et in (PrimitiveType.F16, PrimitiveType.F32, PrimitiveType.F64):
        info = np.finfo(et.dtype)
    else:
        import ml_dtypes
        info = ml_dtypes.finfo(et.dtype)
    return float(info.min), float(info.max)
