"""jax's ``compiler_options``, checked as XLA checks them.

``jax.jit(f, compiler_options={...})`` and ``lowered.compile(compiler_options=
{...})`` reach a PJRT plugin as the ``env_option_overrides`` of the
CompileOptionsProto (jax itself applies the effort and level knobs,
``exec_time_optimization_effort`` and the like).  XLA applies each to its
``DebugOptions`` proto by name (``CompileOptions::ApplyOption``,
``xla/pjrt/compile_options.cc``) and refuses what it cannot apply:

* a name that is no field of ``DebugOptions``: ``No such compile option:
  'NAME'``;
* a value of the wrong kind: ``While setting option NAME, 'VALUE' is not a
  valid TYPE value.``  A bool sets a bool field, an int an int32/int64
  field, a float a float/double field; a string any field it parses as:
  any string for a string field, an integer for an int field, a number for
  a float field, ``True``/``False`` for a bool field.

xlac compiles with its own pipeline, so an option XLA accepts changes
nothing here; it is checked all the same, so that a misspelt or mistyped
option is an error on xlac as on jax's CPU backend.  The fields and their
types are those of the jaxlib in use: its ``DebugOptions`` descriptor is
read from the serialized ``xla/xla.proto`` file descriptor that the
protobuf code generator embeds in jaxlib's shared library (found once per
process, ~25 ms).  If it cannot be found (another build of jaxlib), no
option is refused.
"""
from __future__ import annotations

import functools
import importlib.util
import mmap
import os

from .compile_options import fields

#: The start of the serialized FileDescriptorProto of xla/xla.proto: name
#: (field 1) and package (field 2).
_FILE_START = b"\n\rxla/xla.proto\x12\x03xla"
#: The libraries of jaxlib that may hold it.
_LIBRARIES = ("libjax_common.so", "_jax.so", "xla_extension.so")
#: FieldDescriptorProto.Type numbers -> the names XLA's messages use.
_TYPES = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32", 8: "bool",
          9: "string", 10: "group", 11: "message", 12: "bytes", 13: "uint32", 14: "enum", 15: "sfixed32",
          16: "sfixed64", 17: "sint32", 18: "sint64"}
_INTS = {"int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64"}
_FLOATS = {"float", "double"}


class OptionError(ValueError):
    """An option XLA would refuse; the message is XLA's."""


def _file_descriptor(data) -> list:
    """(number, value) of the top-level fields of the FileDescriptorProto at
    the start of ``data``, up to the first bytes that are not one (the blob's
    end: what follows it in the library is not a FileDescriptorProto field)."""
    out = []
    try:
        for number, wire, value in fields(data):
            if not 1 <= number <= 20 or wire not in (0, 2):
                break
            out.append((number, value))
    except ValueError:          # a field cut short: past the blob's end
        pass
    return out


def _debug_option_fields(blob) -> dict:
    """name -> type name of the fields of message ``DebugOptions`` in a
    serialized xla.proto file descriptor."""
    for number, message in _file_descriptor(blob):
        if number != 4:                                  # message_type
            continue
        parts = list(fields(message))
        if next((v for n, _, v in parts if n == 1), b"") != b"DebugOptions":
            continue
        found = {}
        for n, _, v in parts:
            if n == 2:                                   # field: name 1, type 5
                f = {k: x for k, _, x in fields(v)}
                found[f[1].decode()] = _TYPES.get(f.get(5), "unknown")
        return found
    return {}


@functools.lru_cache(maxsize=1)
def known_fields() -> dict | None:
    """The installed jaxlib's ``DebugOptions`` fields (name -> type name), or
    None when its descriptor cannot be found."""
    spec = importlib.util.find_spec("jaxlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        for name in _LIBRARIES:
            path = os.path.join(folder, name)
            if not os.path.exists(path):
                continue
            with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                at = mm.find(_FILE_START)
                if at < 0:
                    continue
                found = _debug_option_fields(mm[at:at + (1 << 20)])
                if found:
                    return found
    return None


def _text(value) -> str:
    """``absl::StrCat`` of an override's value (a bool prints as 1 or 0)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _parses(text: str, kind: str) -> bool:
    """Whether XLA's ``ApplyOptionFromString`` takes ``text`` for a field of type ``kind``."""
    if kind == "string":
        return True
    if kind == "bool":
        return text in ("True", "False")
    try:
        if kind in _INTS:
            int(text.strip())
        elif kind in _FLOATS:
            float(text.strip())
        else:
            return False
    except ValueError:
        return False
    return True


def check(overrides: dict, known: dict | None = None) -> None:
    """Raise OptionError for the first override XLA would refuse
    (``known``: the fields to check against, default the jaxlib's)."""
    known = known_fields() if known is None else known
    if not overrides or known is None:
        return
    for name, value in overrides.items():
        kind = known.get(name)
        if kind is None:
            raise OptionError(f"No such compile option: '{name}'")
        ok = (isinstance(value, bool) and kind == "bool"
              or isinstance(value, str) and _parses(value, kind)
              or isinstance(value, int) and not isinstance(value, bool) and kind in ("int32", "int64")
              or isinstance(value, float) and kind in _FLOATS)
        if not ok:
            raise OptionError(f"While setting option {name}, '{_text(value)}' is not a valid {kind} value.")
