"""What the parser fuzzers hold HLO and StableHLO text to (shared by
test_parser_fuzz.py and the atheris harness).

Text goes through ``parse_module_text`` (HLO or StableHLO, by content) and the
verifier; for bad text only the documented errors may escape
(``HloParseError``, ``ShapeError``, ``VerifierError``, ``UnsupportedError``).
A module that verifies must print (``to_text``), and its text must parse back
to a module that prints the same text; optionally it must compile
(``xlac.jit``, not run: a mutated loop may never end).  No warning may be
issued on the way (a numpy ``RuntimeWarning`` for an out-of-range literal
reaches the command line's stderr, which stays empty on success).  Anything
else — an IndexError, a RecursionError (also when the parser wraps it into an
HloParseError), a warning, a round trip that fails or differs — is a bug.
"""
from __future__ import annotations

import traceback
import warnings

import xlac
from xlac.hlo.stablehlo import parse_module_text
from xlac.hlo.verifier import VerifierError, verify

ALLOWED = (xlac.HloParseError, xlac.ShapeError, VerifierError, xlac.UnsupportedError)


class RoundTripError(AssertionError):
    """A verified module whose printed text does not parse back to the same text."""


class WarningIssued(AssertionError):
    """A warning (numpy's RuntimeWarning, ...) issued while parsing, verifying,
    printing or compiling; ``where`` is the file and line that issued it."""

    def __init__(self, w: warnings.WarningMessage):
        super().__init__(f"{w.category.__name__}: {w.message}")
        self.where = f"{w.filename.rsplit('/xlac/', 1)[-1]}:{w.lineno}"


class InternalError(AssertionError):
    """An internal exception that the parser wrapped into an HloParseError
    ("cannot parse HLO text (IndexError: ...)"): a parser bug, whatever the wrapper."""


def check_text(text: str, compile_it: bool = False) -> None:
    """Raise if ``text`` makes xlac fail in a way it must not (see the module docstring)."""
    with warnings.catch_warnings(record=True) as issued:
        warnings.simplefilter("always")
        _check_text(text, compile_it)
    if issued:
        raise WarningIssued(issued[0])


def _check_text(text: str, compile_it: bool) -> None:
    try:
        module = parse_module_text(text)
        verify(module)
    except ALLOWED as e:
        cause = e.__cause__
        if cause is not None and not isinstance(cause, ALLOWED):
            raise InternalError(f"{type(cause).__name__} inside {type(e).__name__}: {e}") from cause
        return
    printed = module.to_text()
    again = xlac.parse_hlo(printed)
    verify(again)
    if again.to_text() != printed:
        raise RoundTripError("to_text -> parse_hlo -> to_text changed the text")
    if compile_it:
        try:
            xlac.jit(module)
        except ALLOWED:
            pass


def failure_kind(exc: BaseException) -> str:
    """A short key for an exception: its type and the innermost xlac frame (so
    one bug found by many mutations is reported once)."""
    if isinstance(exc, WarningIssued):
        return f"{exc} at {exc.where}"
    if isinstance(exc, InternalError):
        exc = exc.__cause__
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/xlac/" in f.filename]
    where = f"{frames[-1].filename.rsplit('/xlac/', 1)[-1]}:{frames[-1].name}" if frames else "?"
    return f"{type(exc).__name__} in {where}"


def fails_the_same_way(kind: str, compile_it: bool = False):
    """A predicate for the minimiser: the text still fails with this ``kind``."""
    def still(text: str) -> bool:
        try:
            check_text(text, compile_it)
        except Exception as e:  # noqa: BLE001 - we are looking for exactly these
            return failure_kind(e) == kind
        return False
    return still
