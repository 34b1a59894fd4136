"""Windows and convolution dimension labels: the two attributes the parser keeps as text.

``window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}``
(convolution, reduce-window, select-and-scatter) and
``dim_labels=b01f_01io->b01f`` (convolution) stay :class:`~xlac.hlo.ir.Raw` in the
IR, so printing gives back exactly what was parsed.  Shape inference, the
evaluator and the code generator read them through :func:`window_of` and
:func:`conv_dimension_numbers_of`, which parse the text once (cached) into the
small frozen dataclasses below; the builder makes the text with
:func:`format_window` / :func:`format_dim_labels`.

Field names follow XLA's ``WindowDimension`` and ``ConvolutionDimensionNumbers``.
In the text, ``lhs_dilate`` is the base dilation and ``rhs_dilate`` the window
dilation; every field but ``size`` is optional (default 1, padding 0, no reversal).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["WindowDimension", "Window", "ConvDimensionNumbers", "parse_window", "format_window",
           "window_of", "parse_dim_labels", "format_dim_labels", "conv_dimension_numbers_of",
           "WindowError"]


class WindowError(ValueError):
    """Malformed window or dim_labels text."""


@dataclass(frozen=True)
class WindowDimension:
    """One dimension of a window (XLA's ``WindowDimension``)."""

    size: int
    stride: int = 1
    padding_low: int = 0
    padding_high: int = 0
    window_dilation: int = 1   # rhs_dilate
    base_dilation: int = 1     # lhs_dilate
    window_reversal: bool = False

    @property
    def dilated_size(self) -> int:
        """Extent of the window once dilated: ``(size - 1) * window_dilation + 1``."""
        return 0 if self.size == 0 else (self.size - 1) * self.window_dilation + 1

    def output_size(self, base: int) -> int:
        """Number of valid window positions over a base of ``base`` elements
        (after base dilation and padding); 0 when the window does not fit."""
        dilated_base = 0 if base == 0 else (base - 1) * self.base_dilation + 1
        padded = dilated_base + self.padding_low + self.padding_high
        if padded < self.dilated_size or self.stride <= 0:
            return 0
        return (padded - self.dilated_size) // self.stride + 1


@dataclass(frozen=True)
class Window:
    """A window: one :class:`WindowDimension` per (spatial) dimension."""

    dimensions: tuple

    @property
    def rank(self) -> int:
        return len(self.dimensions)

    def __iter__(self):
        return iter(self.dimensions)

    def __len__(self) -> int:
        return len(self.dimensions)

    def __getitem__(self, k):
        return self.dimensions[k]

    def __str__(self) -> str:
        return format_window(self)

    @property
    def sizes(self) -> tuple:
        return tuple(d.size for d in self.dimensions)

    @property
    def has_padding(self) -> bool:
        return any(d.padding_low or d.padding_high for d in self.dimensions)

    @property
    def has_base_dilation(self) -> bool:
        return any(d.base_dilation != 1 for d in self.dimensions)

    @property
    def has_window_dilation(self) -> bool:
        return any(d.window_dilation != 1 for d in self.dimensions)

    @property
    def has_reversal(self) -> bool:
        return any(d.window_reversal for d in self.dimensions)

    @staticmethod
    def make(sizes, strides=None, padding=None, base_dilations=None, window_dilations=None,
             reversal=None) -> "Window":
        """A window from per-dimension lists (``padding`` a list of (low, high) pairs)."""
        n = len(sizes)

        def get(values, default):
            values = list(values) if values is not None and len(values) else [default] * n
            if len(values) != n:
                raise WindowError(f"window: {len(values)} values for {n} dimensions")
            return values

        pads = get(padding, (0, 0))
        return Window(tuple(
            WindowDimension(int(s), int(st), int(p[0]), int(p[1]), int(wd), int(bd), bool(r))
            for s, st, p, bd, wd, r in zip(sizes, get(strides, 1), pads, get(base_dilations, 1),
                                           get(window_dilations, 1), get(reversal, False))))


# ---------------------------------------------------------------------------
# window text
# ---------------------------------------------------------------------------

_WINDOW_KEYS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")


@functools.lru_cache(maxsize=1024)
def parse_window(text: str) -> Window:
    """``{size=3x3 stride=2x2 pad=1_1x1_1 ...}`` (braces optional) -> :class:`Window`."""
    body = text.strip()
    if body.startswith("{"):
        if not body.endswith("}"):
            raise WindowError(f"window {text!r}: unbalanced braces")
        body = body[1:-1].strip()
    if not body:
        return Window(())
    fields: dict[str, list] = {}
    for item in body.split():
        key, eq, value = item.partition("=")
        if not eq or key not in _WINDOW_KEYS:
            raise WindowError(f"window {text!r}: unknown field {item!r} "
                              f"(expected one of {', '.join(_WINDOW_KEYS)})")
        if key in fields:
            raise WindowError(f"window {text!r}: field {key} given twice")
        try:
            if key == "pad":
                parts = []
                for p in value.split("x"):
                    lo, sep, hi = _split_pad(p)
                    if not sep:
                        raise ValueError
                    parts.append((_window_int(lo), _window_int(hi)))
                fields[key] = parts
            else:
                fields[key] = [_window_int(v) for v in value.split("x")]
        except ValueError:
            raise WindowError(f"window {_short(text)}: bad value in {_short(item)}") from None
    if "size" not in fields:
        raise WindowError(f"window {text!r}: no size")
    n = len(fields["size"])
    for key, values in fields.items():
        if len(values) != n:
            raise WindowError(f"window {text!r}: {key} has {len(values)} entries, size has {n}")
    return Window.make(fields["size"], fields.get("stride"), fields.get("pad"),
                       fields.get("lhs_dilate"), fields.get("rhs_dilate"),
                       [bool(v) for v in fields["rhs_reversal"]] if "rhs_reversal" in fields else None)


# ASCII digits only: int() also reads other scripts' digits ('٣' is 3), and more
# digits than an int64 has cannot be a size (int() refuses over 4300 of them).
_WINDOW_INT_RE = re.compile(r"[-+]?[0-9]{1,19}", re.ASCII)


def _short(text: str) -> str:
    """``repr(text)``, cut to a readable length (a value may be thousands of digits)."""
    return repr(text) if len(text) <= 60 else repr(text[:50]) + f"... ({len(text)} characters)"


def _window_int(text: str) -> int:
    """One number of a window field; ValueError (reported by the caller) if it is not one."""
    if not _WINDOW_INT_RE.fullmatch(text):
        raise ValueError(text)
    return int(text)


def _split_pad(p: str):
    # "1_2", "-1_-2", "-1_2": the separator is the first "_" after the first character.
    k = p.find("_", 1)
    if k < 0:
        return p, "", ""
    return p[:k], "_", p[k + 1:]


def format_window(window: Window) -> str:
    """The HLO text of ``window``, braces included (fields at their defaults left out)."""
    dims = window.dimensions
    if not dims:
        return "{}"
    parts = ["size=" + "x".join(str(d.size) for d in dims)]
    if any(d.stride != 1 for d in dims):
        parts.append("stride=" + "x".join(str(d.stride) for d in dims))
    if any(d.padding_low or d.padding_high for d in dims):
        parts.append("pad=" + "x".join(f"{d.padding_low}_{d.padding_high}" for d in dims))
    if any(d.base_dilation != 1 for d in dims):
        parts.append("lhs_dilate=" + "x".join(str(d.base_dilation) for d in dims))
    if any(d.window_dilation != 1 for d in dims):
        parts.append("rhs_dilate=" + "x".join(str(d.window_dilation) for d in dims))
    if any(d.window_reversal for d in dims):
        parts.append("rhs_reversal=" + "x".join(str(int(d.window_reversal)) for d in dims))
    return "{" + " ".join(parts) + "}"


def window_of(attrs: dict, name: str = "window") -> Window:
    """The window attribute of an instruction (Raw text, str or Window); a missing
    attribute is the empty window."""
    value = attrs.get(name)
    if value is None:
        return Window(())
    if isinstance(value, Window):
        return value
    return parse_window(str(value))


# ---------------------------------------------------------------------------
# dim_labels
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ConvDimensionNumbers:
    """Which dimension of lhs, rhs and the output plays which part (XLA's
    ``ConvolutionDimensionNumbers``); spatial lists are in spatial order 0, 1, ..."""

    input_batch_dimension: int
    input_feature_dimension: int
    input_spatial_dimensions: tuple
    kernel_input_feature_dimension: int
    kernel_output_feature_dimension: int
    kernel_spatial_dimensions: tuple
    output_batch_dimension: int
    output_feature_dimension: int
    output_spatial_dimensions: tuple

    @property
    def num_spatial_dims(self) -> int:
        return len(self.input_spatial_dimensions)

    def __str__(self) -> str:
        return format_dim_labels(self)

    @staticmethod
    def default(num_spatial: int) -> "ConvDimensionNumbers":
        """``bf01_oi01->bf01``: batch/output-feature first, then feature/input-feature."""
        sp = tuple(range(2, 2 + num_spatial))
        return ConvDimensionNumbers(0, 1, sp, 1, 0, sp, 0, 1, sp)


def _labels(text: str, part: str, a: str, b: str, whole: str):
    """Positions of the letters ``a`` and ``b`` and of the digits 0..n-1 in ``part``."""
    pos_a = pos_b = None
    spatial: dict[int, int] = {}
    for k, ch in enumerate(part):
        if ch == a and pos_a is None:
            pos_a = k
        elif ch == b and pos_b is None:
            pos_b = k
        elif ch in "0123456789" and int(ch) not in spatial:  # not isdigit(): '٣' is one
            spatial[int(ch)] = k
        else:
            raise WindowError(f"dim_labels {whole!r}: unexpected or repeated {ch!r} in {part!r}")
    if pos_a is None or pos_b is None or sorted(spatial) != list(range(len(spatial))):
        raise WindowError(f"dim_labels {whole!r}: {part!r} needs {a!r}, {b!r} and spatial "
                          "digits 0..n-1")
    return pos_a, pos_b, tuple(spatial[d] for d in range(len(spatial)))


@functools.lru_cache(maxsize=256)
def parse_dim_labels(text: str) -> ConvDimensionNumbers:
    """``b01f_01io->b01f`` -> :class:`ConvDimensionNumbers`."""
    text = text.strip()
    lhs_rhs, arrow, out = text.partition("->")
    lhs, us, rhs = lhs_rhs.partition("_")
    if not arrow or not us:
        raise WindowError(f"dim_labels {text!r}: expected LHS_RHS->OUT, e.g. b01f_01io->b01f")
    ib, if_, isp = _labels(text, lhs, "b", "f", text)
    ki, ko, ksp = _labels(text, rhs, "i", "o", text)
    ob, of, osp = _labels(text, out, "b", "f", text)
    if not len(isp) == len(ksp) == len(osp):
        raise WindowError(f"dim_labels {text!r}: lhs, rhs and output have different numbers "
                          "of spatial dimensions")
    return ConvDimensionNumbers(ib, if_, isp, ki, ko, ksp, ob, of, osp)


def format_dim_labels(dn: ConvDimensionNumbers) -> str:
    def part(rank, a, pa, b, pb, spatial):
        chars = ["?"] * rank
        chars[pa], chars[pb] = a, b
        for k, d in enumerate(spatial):
            chars[d] = str(k)
        return "".join(chars)

    n = len(dn.input_spatial_dimensions) + 2
    return (part(n, "b", dn.input_batch_dimension, "f", dn.input_feature_dimension,
                 dn.input_spatial_dimensions) + "_"
            + part(n, "i", dn.kernel_input_feature_dimension, "o",
                   dn.kernel_output_feature_dimension, dn.kernel_spatial_dimensions) + "->"
            + part(n, "b", dn.output_batch_dimension, "f", dn.output_feature_dimension,
                   dn.output_spatial_dimensions))


def conv_dimension_numbers_of(attrs: dict) -> ConvDimensionNumbers:
    """The convolution's dimension numbers from ``dim_labels`` (Raw, str or the
    dataclass); without the attribute, the default ``bf01_oi01->bf01`` layout is
    not guessable (its rank is unknown), so a WindowError is raised."""
    value = attrs.get("dim_labels")
    if value is None:
        raise WindowError("convolution without dim_labels")
    if isinstance(value, ConvDimensionNumbers):
        return value
    return parse_dim_labels(str(value))
