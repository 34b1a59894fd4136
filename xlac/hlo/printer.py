"""HloModule -> HLO text, in the short form JAX prints::

    HloModule NAME, entry_computation_layout={(f32[16,32]{1,0})->f32[16]{0}}

    region_0.1 {
      p.1 = f32[] parameter(0)
      ROOT x.2 = f32[] add(p.1, p.1)
    }

    ENTRY main.2 {
      ...
    }

The output parses back (:func:`xlac.parse_hlo`) to the same module, and printing
that again gives the same text.  Attribute values are written with the kinds
the opcode's definition gives them (``xlac.hlo.opcodes``), the kinds the
parser reads them with.

The printer takes the IR's objects as they come (it does not import
``xlac.hlo.ir``, which calls it for ``HloModule.to_text``).
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import math

import numpy as np

from ..shape import PrimitiveType, Shape
from .attributes import RAW_KINDS, Raw, format_int_list
from .opcodes import OPCODES

__all__ = ["module_to_text", "computation_to_text", "instruction_to_text", "shape_to_text",
           "format_attr_value", "format_literal", "format_scalar"]

#: Attributes that are printed inside the parentheses rather than after them.
_OPERAND_ATTRS = {"parameter": ("parameter_number",), "constant": ("literal", "elided")}


def module_to_text(module) -> str:
    header = f"HloModule {module.name}"
    declared = module.declared_entry_layout if module.entry is not None else None
    if declared is None and module.entry is not None and module.entry.root is not None:
        # Not written (or no longer true): the entry's own, first, as JAX prints it.
        params, result = module.entry_computation_layout
        header += f", entry_computation_layout={_entry_layout(params, result)}"
    for key, value in module.attrs.items():
        if key == "entry_computation_layout":
            if declared is not None:             # kept where and as it was written
                header += f", {key}={_entry_layout(declared.parameters, declared.result)}"
        else:
            header += f", {key}={format_attr_value('', key, value)}"
    parts = [header]
    if module.stack_frame_index:
        parts.append("\n\n".join("\n".join((heading,) + entries)
                                 for heading, entries in module.stack_frame_index))
    hidden = _short_form_async_computations(module)
    parts += [computation_to_text(c) for c in module.computations if id(c) not in hidden]
    return "\n\n".join(parts) + "\n"


def _entry_layout(params, result) -> str:
    return "{(" + _elements(params) + f")->{shape_to_text(result)}}}"


def computation_to_text(comp) -> str:
    is_entry = comp.parent.entry is comp if comp.parent is not None else comp.is_entry
    lines = [f"{'ENTRY ' if is_entry else ''}{comp.name} {{"]
    lines += ["  " + instruction_to_text(inst, inst is comp.root) for inst in comp.instructions]
    lines.append("}" + "".join(f", {k}={format_attr_value('', k, v)}" for k, v in comp.attrs.items()))
    return "\n".join(lines)


_ASYNC_OPS = ("async-start", "async-update", "async-done")


def _async_computation(inst):
    """The computation an async op wraps: its chain's async-start's ``calls``."""
    start = inst
    while start.opcode in ("async-update", "async-done") and start.operands:
        start = start.operands[0]
    comp = start.attrs.get("calls") if start.opcode == "async-start" else None
    return comp if _is_computation(comp) else None


def _one_instruction(comp) -> bool:
    """XLA's CanExpandIntoSingleInstruction: only parameters and the root."""
    return all(i is comp.root or i.opcode == "parameter" for i in comp.instructions)


def _short_form(inst):
    """The wrapped instruction when ``inst`` prints as ``X-start``/``-update``/``-done``."""
    if inst.opcode not in _ASYNC_OPS:
        return None
    comp = _async_computation(inst)
    return comp.root if comp is not None and comp.root is not None and _one_instruction(comp) else None


def _short_form_async_computations(module) -> set:
    """ids of the computations that async ops print in short form (not printed:
    the parser makes them again), unless something else calls them too."""
    if not any(i.opcode in _ASYNC_OPS for c in module.computations for i in c.instructions):
        return set()                    # (most modules: their attributes need not be searched)
    wrapped, other = set(), set()
    for comp in module.computations:
        for inst in comp.instructions:
            calls = [v for v in inst.attrs.values() if _is_computation(v)]
            calls += [c for v in inst.attrs.values() if isinstance(v, tuple) for c in v if _is_computation(c)]
            if inst.opcode in _ASYNC_OPS and _short_form(inst) is not None:
                wrapped.update(id(c) for c in calls)
            else:
                other.update(id(c) for c in calls)
    return wrapped - other


def instruction_to_text(inst, is_root: bool = False) -> str:
    if inst.opcode in _ASYNC_OPS:
        op = _short_form(inst)
        if op is not None:
            return _short_form_text(inst, op, is_root)
    if inst.opcode == "parameter":
        inside = str(inst.attrs["parameter_number"])
    elif inst.opcode == "constant":
        inside = format_literal(inst.attrs["literal"], inst.shape, bool(inst.attrs.get("elided")))
    else:
        inside = ", ".join(op.name for op in inst.operands)
    text = (f"{'ROOT ' if is_root else ''}{inst.name} = {shape_to_text(inst.shape)} "
            f"{inst.opcode}({inside})")
    skip = _OPERAND_ATTRS.get(inst.opcode, ())
    for key, value in inst.attrs.items():
        if key not in skip:
            text += f", {key}={format_attr_value(inst.opcode, key, value)}"
    return text


def _short_form_text(inst, op, is_root: bool) -> str:
    """``X-start(ops), <async-start's own attributes>, <X's attributes>``, as XLA prints it."""
    suffix = inst.opcode[len("async"):]
    text = (f"{'ROOT ' if is_root else ''}{inst.name} = {shape_to_text(inst.shape)} "
            f"{op.opcode}{suffix}({', '.join(o.name for o in inst.operands)})")
    start = inst.opcode == "async-start"
    for key, value in inst.attrs.items():
        if key == "calls" or (start and key in op.attrs and op.attrs[key] == value):
            continue                       # the computation, and what the wrapped op repeats
        text += f", {key}={format_attr_value(inst.opcode, key, value)}"
    if start:
        for key, value in op.attrs.items():
            text += f", {key}={format_attr_value(op.opcode, key, value)}"
    return text


def shape_to_text(shape: Shape) -> str:
    """``str(shape)``, plus XLA's ``/*index=N*/`` before every fifth tuple element.

    The comments are what XLA and JAX print; keeping them makes JAX's text
    round-trip byte for byte.  (The parser skips comments.)
    """
    if shape.is_tuple:
        return "(" + _elements(shape.tuple_shapes) + ")"
    return str(shape)


def _elements(shapes) -> str:
    return ", ".join(("" if i == 0 or i % 5 else f"/*index={i}*/") + shape_to_text(s)
                     for i, s in enumerate(shapes))


# ----------------------------------------------------------------------------
# Attribute values and literals
# ----------------------------------------------------------------------------

def format_attr_value(opcode: str, name: str, value) -> str:
    """Attribute value -> HLO text (the inverse of the parser's reading)."""
    if isinstance(value, Raw):                  # kept as read
        return value.text
    op = OPCODES.get(opcode)
    kind = op.attribute_kind(name) if op is not None else None
    if kind is not None and kind not in RAW_KINDS:
        return kind.format(value)
    return _format_by_type(value)


def _format_by_type(value) -> str:
    # An attribute a pass set under a name the table does not know: go by its type.
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if _is_computation(value):
        return value.name
    if isinstance(value, tuple):
        if value and all(_is_computation(v) for v in value):
            return "{" + ", ".join(v.name for v in value) + "}"
        if all(isinstance(v, (int, np.integer)) for v in value):
            return format_int_list(value)
    return str(value)



def _is_computation(value) -> bool:
    return hasattr(value, "instructions") and hasattr(value, "root")


def format_scalar(value, element_type: PrimitiveType) -> str:
    """One element as XLA prints it; the parser reads it back to the same value."""
    if element_type.is_pred:
        return "true" if value else "false"
    if element_type.is_integral:
        return str(int(value))
    if element_type.is_complex:
        c = np.asarray(value, dtype=element_type.dtype)      # numpy's parts keep a NaN's bits
        part = element_type.component_type
        return f"({format_scalar(c.real, part)}, {format_scalar(c.imag, part)})"
    return _format_float(value, element_type.dtype)


def _format_float(value, dtype: np.dtype) -> str:
    x = np.asarray(value, dtype=dtype).reshape(())
    with np.errstate(invalid="ignore"):
        f = float(x.astype(np.float64))
    if math.isnan(f):
        return _format_nan(x)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if dtype.type in (np.float16, np.float32, np.float64):
        s = str(x[()])  # numpy prints the shortest text that round-trips the dtype
    else:
        texts = [f"{f:.{p}g}" for p in range(1, 18)]
        # f8/f4: the exact value when it is short (0.25, not 0.2); bf16 (and a long
        # f8 value such as 2**-127): the shortest text that round-trips.
        exact = next((t for t in texts if float(t) == f), None) if dtype.itemsize == 1 else None
        s = exact or next(t for t in texts if np.float64(t).astype(dtype) == x)
    # JAX prints integral floats without a fraction: constant(1), not constant(1.0).
    return s[:-2] if s.endswith(".0") else s


#: (bits, mantissa bits) of the IEEE floats, whose NaN payload XLA prints.
_IEEE_NAN = {"float16": (16, 10), "bfloat16": (16, 7), "float32": (32, 23), "float64": (64, 52)}
_UINTS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _format_nan(x: np.ndarray) -> str:
    """A NaN as XLA prints it: ``nan`` or ``-nan`` (the sign of its value), and
    ``(0x...)`` with the mantissa bits when they are not the quiet NaN's
    (``-nan(0x7f)`` for that bf16); the parser reads it back bit for bit."""
    with np.errstate(invalid="ignore"):
        sign = "-" if np.signbit(x.astype(np.float32)) else ""
    et = PrimitiveType.from_dtype(x.dtype)
    if x.dtype.name in _IEEE_NAN:
        bits, mantissa = _IEEE_NAN[x.dtype.name]
    else:
        bits, mantissa = et.float_format.bits, et.float_format.nan_payload_bits
    if not mantissa:
        return sign + "nan"
    payload = int(x.view(_UINTS[x.dtype.itemsize])) & ((1 << mantissa) - 1)
    return sign + "nan" + ("" if payload == 1 << (mantissa - 1) else f"(0x{payload:x})")


#: Inside :func:`digesting_literals`: arrays of more elements than this print as
#: a digest of their bytes (a cache key's text; XLA's own printing takes 6 us an
#: element, minutes for a constant of millions).
_DIGEST_ABOVE: contextvars.ContextVar = contextvars.ContextVar("xlac_digest_literals_above", default=None)


@contextlib.contextmanager
def digesting_literals(above: int = 1024):
    """Within: constants of more than ``above`` elements print as ``{sha256:...}``
    — text for a key, which no parser reads back."""
    token = _DIGEST_ABOVE.set(above)
    try:
        yield
    finally:
        _DIGEST_ABOVE.reset(token)


def format_literal(value, shape: Shape, elided: bool = False) -> str:
    """The text inside ``constant(...)`` for ``value`` of ``shape``."""
    if elided:
        return "{...}"
    above = _DIGEST_ABOVE.get()
    if above is not None and not shape.is_tuple and np.size(value) > above:
        arr = np.ascontiguousarray(value)
        return "{sha256:" + hashlib.sha256(arr.tobytes()).hexdigest() + "}"
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
