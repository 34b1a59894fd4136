"""The exceptions xlac raises on bad input (never a crash, never a wrong answer),
and :func:`error_line`, the one form in which xlac's programs print an error."""
import re


class ShapeError(ValueError):
    """An ill-shaped graph, raised at build or verify time.

    The message names the op, the operand shapes and the rule that was broken,
    e.g. ``add: shapes f32[7,2,5] and f32[7,2,6] are not compatible: dimension 2
    has sizes 5 and 6 (broadcasting needs equal sizes or 1)``.
    """


class UnsupportedError(NotImplementedError):
    """An operation (or a variant of one) that this stage does not handle yet.

    The message starts with ``not supported yet: <opcode>`` so a user knows which op.
    """

    def __init__(self, what: str, detail: str = ""):
        self.what = what
        super().__init__(f"not supported yet: {what}" + (f" ({detail})" if detail else ""))


class HloParseError(ValueError):
    """HLO text that does not parse; ``line`` and ``column`` are 1-based,
    ``message`` is the text without them (what follows ``FILE:LINE:COL:``)."""

    def __init__(self, message: str, line: int = 0, column: int = 0):
        self.line, self.column, self.message = line, column, message
        where = f"line {line}, column {column}: " if line else ""
        super().__init__(where + message)


ERROR_PREFIX = "xlac: error: "


def error_line(message: str, place: str | None = None) -> str:
    """The one line an xlac program prints for an error (the command line and
    every rank under ``mpiexec``): ``xlac: error:``, then ``place: `` when
    there is one (``FILE:LINE:COL``, a file), then the message with any line
    breaks folded."""
    text = re.sub(r"\s*[\r\n]+\s*", " ", str(message)).strip()
    return ERROR_PREFIX + (f"{place}: " if place else "") + text


def at_location(error: Exception, location, message: str | None = None) -> Exception:
    """``error`` with a place in the text its module was read from:
    ``location`` is ``(line, column)``, 1-based (None: no place), set as
    ``error.line``/``error.column`` as an :class:`HloParseError` has them, and
    ``message`` (default ``str(error)``) the text to print after the place
    (``model.hlo:12:3: <message>`` on the command line).  A place the error
    already has is kept."""
    if location and not getattr(error, "line", 0):
        error.line, error.column = location
        error.message = str(error) if message is None else message
    return error


class CollectiveError(RuntimeError):
    """A collective that cannot complete: devices that do not reach the same
    collective (another op, channel or size), a device that fails, dies,
    finishes or times out while others wait for it, or a module of several
    devices given to a one-device entry point.  The message names the
    instruction and the devices."""


class FeedError(RuntimeError):
    """An infeed or outfeed transfer that cannot happen: a value of the wrong
    shape at the head of the infeed queue, the evaluator's infeed values used
    up, an outfeed with nowhere to put its value.  The message names the
    instruction and the shape it transfers."""


class FeedTimeoutError(FeedError, TimeoutError):
    """An infeed that waited its timeout for a value and none came (or an
    ``outfeed.get`` that waited for one); a ``TimeoutError`` too."""


class CustomCallError(RuntimeError):
    """A custom-call target that failed while running: a C function that set
    a failure status (``XlaCustomCallStatusSetFailure``) or a Python callable
    that raised (chained as the cause).  The message names the target and the
    instruction."""
