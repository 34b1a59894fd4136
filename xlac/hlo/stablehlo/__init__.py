"""StableHLO MLIR text in (``xlac.parse_stablehlo``): what ``jax.jit(f).lower(x).as_text()``
and ``jax.export`` give by default, imported into xlac's HLO IR.

``parse_stablehlo(text)`` -> :class:`xlac.hlo.ir.HloModule`; ``parse_module_text``
reads HLO or StableHLO, telling them apart by content (:func:`is_stablehlo`).
The reader (``syntax.py``) is a small scanner with recursive descent written
for this subset of MLIR; ``docs/stablehlo.md`` says why not xDSL's parser.
"""
from __future__ import annotations

import re

from ...errors import HloParseError, ShapeError, UnsupportedError
from ..ir import HloModule

__all__ = ["parse_stablehlo", "is_stablehlo", "parse_module_text", "imported_ops"]

# The first token of a StableHLO module: `module`, `func.func`, a generic
# `"builtin.module"`/`"func.func"`, or a `#loc` alias line; HLO starts `HloModule`.
_STABLEHLO_START = re.compile(r"\s*(?://[^\n]*\n\s*)*(module\b|func\.func\b|\"builtin\.module\"|\"func\.func\"|#)")


def is_stablehlo(text: str) -> bool:
    """Whether ``text`` is StableHLO (MLIR) rather than HLO text, by its first token."""
    return bool(_STABLEHLO_START.match(text)) and not text.lstrip().startswith("HloModule")


def parse_stablehlo(text: str, filename: str | None = None) -> HloModule:
    """Import StableHLO MLIR text (generic or pretty form) as an :class:`HloModule`.

    Raises :class:`xlac.errors.HloParseError` (1-based ``line``/``column``) for
    text that does not parse or a malformed op, :class:`xlac.UnsupportedError`
    naming the op (``not supported yet: stablehlo.foo``) for an op without an
    import rule, :class:`xlac.ShapeError` for an op whose declared type is not
    the one HLO infers; each message gives the op's place in the text
    (``filename:line:col`` when ``filename`` is given) and the source location
    of its ``loc(...)`` when the module has one.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_stablehlo expects StableHLO text (str), got {type(text).__name__}")
    from .importer import import_module
    from .syntax import parse_mlir
    syntax = parse_mlir(text)
    try:
        return import_module(syntax, filename)
    except (HloParseError, ShapeError, UnsupportedError):
        raise
    except Exception as e:  # an importer bug or pathological input must still say what
        raise HloParseError(f"StableHLO: cannot import ({type(e).__name__}: {e})") from e


def imported_ops() -> list:
    """The names of the MLIR ops the importer converts (``stablehlo.*``, ``chlo.*``, ``func.*`` ...)."""
    from . import chlo, ops, sdy  # noqa: F401  (fill the table)
    from .importer import CONVERTERS
    return sorted(set(CONVERTERS) | {"func.func", "func.return", "stablehlo.return"})


def parse_module_text(text: str, filename: str | None = None) -> HloModule:
    """HLO or StableHLO text -> HloModule, by content (:func:`is_stablehlo`)."""
    if isinstance(text, str) and is_stablehlo(text):
        return parse_stablehlo(text, filename)
    from ..parser import parse_hlo
    return parse_hlo(text)

