"""Mutations of HLO text for the parser fuzzer, and a minimiser for what they find.

``mutate(text, rng, donors)`` applies one to three of: byte flips (to HLO
punctuation, digits, or hostile characters: non-ASCII digits, a lone
surrogate, NUL, right-to-left marks), deletions, duplications, token swaps,
number replacements (huge, negative, non-ASCII, 5,000 digits), opcode and
shape edits, truncation, deep nesting, line shuffles, splices of lines from
other files, constants' elements made out of range for their type (f16
overflow, integers past their width, hex patterns too wide), and StableHLO
result groups ``%0:N`` given a huge, zero or wrong ``N``.  The texts are HLO
or StableHLO.  Everything is drawn from ``rng`` (a ``random.Random``), so a
mutation is reproduced by its seed.
"""
from __future__ import annotations

import random
import re
import time

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*|-?\d+(?:\.\d+)?(?:e-?\d+)?|\S")
NUMBER = re.compile(r"(?<![A-Za-z_.])-?\d+(?:\.\d+)?")
SHAPE = re.compile(r"\b(?:pred|[suf]\d+|bf16|c64|c128)\[[^\]]*\](?:\{[^}]*\})?")
OPCODES = ("add", "multiply", "dot", "reduce", "broadcast", "reshape", "transpose", "slice", "pad",
           "concatenate", "gather", "scatter", "dynamic-slice", "while", "conditional", "tuple",
           "get-tuple-element", "parameter", "constant", "iota", "sort", "fusion", "call", "convert",
           "bitcast", "custom-call", "compare", "select", "reduce-window", "convolution", "fft", "copy")
PUNCTUATION = "{}[](),=:%.-_ \n\"/*<>+xX0123456789"
HOSTILE = ("\u0663", "\ud800", "\x00", "\u200f", "\ufeff", "\u00a0", "\U0001F600", "\u0661\u0662",
           "\\", "\t", "\r", "ſ", "\uff11")
NUMBERS = ("0", "-1", "-2147483649", "4294967296", "9223372036854775807", "18446744073709551616",
           "-9223372036854775809", "1" * 5000, "\u0663", "1e309", "-0", "nan", "inf", "0x10", "+5",
           "1_000", "00", "3.5", "99999999999999999999999999999")


def _pos(rng: random.Random, text: str) -> int:
    return rng.randrange(len(text) + 1)


def flip(text: str, rng: random.Random, donors) -> str:
    i = rng.randrange(max(len(text), 1))
    ch = rng.choice(HOSTILE) if rng.random() < 0.3 else rng.choice(PUNCTUATION)
    return text[:i] + ch + text[i + 1:]


def delete(text: str, rng: random.Random, donors) -> str:
    if rng.random() < 0.4:
        lines = text.split("\n")
        del lines[rng.randrange(len(lines))]
        return "\n".join(lines)
    i = _pos(rng, text)
    return text[:i] + text[i + rng.randint(1, 20):]


def duplicate(text: str, rng: random.Random, donors) -> str:
    if rng.random() < 0.5:
        lines = text.split("\n")
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
        return "\n".join(lines)
    i = _pos(rng, text)
    span = text[i:i + rng.randint(1, 40)]
    j = _pos(rng, text)
    return text[:j] + span + text[j:]


def swap_tokens(text: str, rng: random.Random, donors) -> str:
    tokens = list(TOKEN.finditer(text))
    if len(tokens) < 2:
        return text
    a, b = sorted(rng.sample(range(len(tokens)), 2))
    ta, tb = tokens[a], tokens[b]
    if rng.random() < 0.5:          # replace one token by another of the file
        return text[:ta.start()] + tb.group() + text[ta.end():]
    return (text[:ta.start()] + tb.group() + text[ta.end():tb.start()] + ta.group() + text[tb.end():])


def replace_number(text: str, rng: random.Random, donors) -> str:
    numbers = list(NUMBER.finditer(text))
    if not numbers:
        return text
    m = rng.choice(numbers)
    return text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]


def replace_opcode(text: str, rng: random.Random, donors) -> str:
    found = [m for m in re.finditer(r"(?<= )([a-z][a-z\-]*)(?=\()", text)]
    if not found:
        return text
    m = rng.choice(found)
    return text[:m.start()] + rng.choice(OPCODES) + text[m.end():]


def edit_shape(text: str, rng: random.Random, donors) -> str:
    shapes = list(SHAPE.finditer(text))
    if not shapes:
        return text
    m = rng.choice(shapes)
    et = rng.choice(("f32", "s32", "pred", "bf16", "u8", "f64", "c64", "s4", "token", "f8e4m3fn"))
    dims = ",".join(rng.choice(("0", "1", "2", "3", "7", "-1", "4294967296", "?")) for _ in range(rng.randint(0, 4)))
    layout = rng.choice(("", "{}", "{0}", "{1,0}", "{0,1}", "{0,0}", "{5}", "{1,0:T(8,128)}", "{0:P(9)}"))
    return text[:m.start()] + f"{et}[{dims}]{layout}" + text[m.end():]


def truncate(text: str, rng: random.Random, donors) -> str:
    return text[:_pos(rng, text)]


def nest(text: str, rng: random.Random, donors) -> str:
    """Deep nesting: a shape inside many tuple parentheses, or deeply nested braces."""
    depth = rng.choice((2, 10, 64, 65, 200, 1000, 5000))
    shapes = list(SHAPE.finditer(text))
    if shapes and rng.random() < 0.6:
        m = rng.choice(shapes)
        return text[:m.start()] + "(" * depth + m.group() + ")" * depth + text[m.end():]
    i = _pos(rng, text)
    open_, close = rng.choice((("{", "}"), ("(", ")"), ("[", "]")))
    return text[:i] + open_ * depth + "1" + close * depth + text[i:]


def shuffle_lines(text: str, rng: random.Random, donors) -> str:
    lines = text.split("\n")
    if len(lines) < 2:
        return text
    a, b = rng.sample(range(len(lines)), 2)
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


def splice(text: str, rng: random.Random, donors) -> str:
    """A line of another corpus file inserted here (foreign names and shapes)."""
    other = rng.choice(donors).split("\n")
    lines = text.split("\n")
    lines.insert(rng.randrange(len(lines) + 1), rng.choice(other))
    return "\n".join(lines)


#: Literals out of range for most element types: past f16/bf16/f32/f64, past
#: 8/16/32/64-bit integers, negative for unsigned ones, hex patterns too wide.
OUT_OF_RANGE = ("1.0e+10", "-1.0e+10", "65520.0", "1.0e+39", "-1.0e+300", "1.0e+400", "1e10", "300", "-129",
                "256", "-1", "65536", "4294967296", "18446744073709551616", "-9223372036854775809",
                "0x1FFFF", "0xFFFFFFFFFFFFFFFFFF", "2", "1" * 50)
LITERAL = re.compile(r"dense<([^<>]*)>|constant\(([^()]*)\)")
#: One element of a literal: a decimal (with its exponent) or a hex pattern.
ELEMENT = re.compile(r"(?<![\w.])[-+]?(?:0x[0-9A-Fa-f]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)(?![\w.])")


def out_of_range_literal(text: str, rng: random.Random, donors) -> str:
    """One element of a constant (HLO ``constant(...)``, StableHLO ``dense<...>``)
    replaced by a value out of range for most types."""
    sites = list(LITERAL.finditer(text))
    if not sites:
        return text
    m = rng.choice(sites)
    group = 1 if m.group(1) is not None else 2
    start, end = m.start(group), m.end(group)
    numbers = list(ELEMENT.finditer(text, start, end))
    new = rng.choice(OUT_OF_RANGE)
    if not numbers:
        return text[:start] + new + text[end:]
    n = rng.choice(numbers)
    return text[:n.start()] + new + text[n.end():]


RESULT = re.compile(r"^(\s*%[\w$.\-]+)(:[0-9]+)?(?=\s*=)", re.M)
RESULT_COUNTS = ("0", "1", "3", "1000", "300000000", "9223372036854775808", "1" * 5000)


def result_count(text: str, rng: random.Random, donors) -> str:
    """A StableHLO result group ``%0:N`` (or a single result made one) given a
    huge, zero or wrong ``N``."""
    sites = list(RESULT.finditer(text))
    if not sites:
        return text
    m = rng.choice(sites)
    return text[:m.end(1)] + ":" + rng.choice(RESULT_COUNTS) + text[m.end():]


MUTATORS = (flip, delete, duplicate, swap_tokens, replace_number, replace_opcode, edit_shape, truncate,
            nest, shuffle_lines, splice, out_of_range_literal, result_count)


def mutate(text: str, rng: random.Random, donors) -> str:
    for _ in range(rng.choice((1, 1, 2, 3))):
        text = rng.choice(MUTATORS)(text, rng, donors)
    return text


# ---------------------------------------------------------------------------
# minimising a failing text
# ---------------------------------------------------------------------------

_PIECES = re.compile(r"\s+|[A-Za-z_][\w.\-]*|\d+|.", re.S)


def _lines(text: str) -> list:
    return text.splitlines(keepends=True)


def _tokens(text: str) -> list:
    return _PIECES.findall(text)


def minimize(text: str, still_fails, budget_s: float = 20.0) -> str:
    """A smaller text for which ``still_fails(text)`` holds: delta debugging
    (remove chunks while the failure stays) over lines, then tokens, then
    characters, within ``budget_s`` seconds."""
    deadline = time.monotonic() + budget_s
    for split in (_lines, _tokens, list):
        parts = split(text)
        n = 2
        while len(parts) >= 2 and time.monotonic() < deadline:
            chunk = max(1, len(parts) // n)
            for start in range(0, len(parts), chunk):
                if time.monotonic() > deadline:
                    break
                candidate = parts[:start] + parts[start + chunk:]
                if candidate and still_fails("".join(candidate)):
                    parts = candidate
                    n = max(n - 1, 2)
                    break
            else:
                if chunk == 1:
                    break
                n = min(len(parts), n * 2)
        text = "".join(parts)
    return text
