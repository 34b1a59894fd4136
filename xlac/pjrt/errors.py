"""PJRT_Error: how an xlac exception reaches jax.

Every failing plugin function returns a ``PJRT_Error*`` carrying a code and
xlac's one-line message (``xlac.errors.error_line``); jax turns it into an
``XlaRuntimeError`` whose text starts with the code's name, e.g.
``UNIMPLEMENTED: xlac: error: not supported yet: stablehlo.foo``.  The caller
frees the error with ``PJRT_Error_Destroy`` and reads it with
``PJRT_Error_Message`` / ``PJRT_Error_GetCode``, or through the function table
the header puts in every ``PJRT_Error`` (first word of the handle), which is
provided too.
"""
from __future__ import annotations

import ctypes
import sys

from ..errors import (CollectiveError, CustomCallError, FeedError, HloParseError, ShapeError, UnsupportedError,
                      error_line)
from ..runtime import c_memory
from . import capi, handles


class PjrtError(Exception):
    """An error with an explicit PJRT_Error_Code (``capi.UNIMPLEMENTED`` ...)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def unimplemented(what: str) -> PjrtError:
    """The error of a PJRT function or variant xlac does not provide."""
    return PjrtError(capi.UNIMPLEMENTED, f"not supported yet: {what} (xlac's PJRT plugin)")


class _Error:
    """What a PJRT_Error handle names: a code and the message bytes."""

    def __init__(self, code: int, message: str):
        self.code = code
        self.message = message.encode("utf-8", "replace")


def code_of(exc: BaseException) -> int:
    """The PJRT_Error_Code that fits ``exc``."""
    if isinstance(exc, PjrtError):
        return exc.code
    if isinstance(exc, (UnsupportedError, NotImplementedError)):
        return capi.UNIMPLEMENTED
    if isinstance(exc, (ShapeError, HloParseError, ValueError, TypeError, handles.HandleError)):
        return capi.INVALID_ARGUMENT
    if isinstance(exc, KeyboardInterrupt):
        return capi.CANCELLED
    if isinstance(exc, MemoryError):
        return capi.RESOURCE_EXHAUSTED
    return capi.INTERNAL


def message_of(exc: BaseException, function: str | None = None) -> str:
    """xlac's one-line message for ``exc``; an exception that is not one of
    xlac's errors (a bug in the plugin) also names its type and the PJRT
    ``function`` it came from."""
    known = (PjrtError, UnsupportedError, ShapeError, HloParseError, CollectiveError, CustomCallError, FeedError,
             ValueError, TypeError, MemoryError, KeyboardInterrupt, NotImplementedError)
    where = f" ({function})" if function else ""
    text = str(exc) if isinstance(exc, known) else f"internal error in xlac's PJRT plugin{where}: " \
                                                     f"{type(exc).__name__}: {exc}"
    return error_line(text or type(exc).__name__)


def new_error(code: int, message: str) -> int:
    """A new PJRT_Error handle (the caller destroys it)."""
    return handles.new(_Error(code, message), head=ctypes.addressof(_TABLE))


def from_exception(exc: BaseException, function: str | None = None) -> int:
    """A PJRT_Error handle for ``exc`` raised by PJRT function ``function``."""
    return new_error(code_of(exc), message_of(exc, function))


def error_object(address) -> _Error:
    return handles.lookup(address, _Error, "PJRT_Error")


def destroy(address) -> None:
    handles.release(address)


def code(address) -> int:
    return error_object(address).code


def message(address) -> tuple[int, int]:
    """(address, size) of the message of error ``address``."""
    err = error_object(address)
    return c_memory.address_of(err.message), len(err.message)


def _guarded(fn, default=None):
    """``fn`` made safe to call from C: an exception is reported on stderr
    (these functions have no way to return an error) and ``default`` returned."""
    def call(*args):
        try:
            return fn(*args)
        except BaseException as exc:   # noqa: BLE001 - nothing may escape into C++
            print(error_line(f"xlac PJRT plugin: {message_of(exc)}"), file=sys.stderr)
            return default
    return call


def _table_message(err, out_message, out_size):
    addr, size = message(err)
    ctypes.c_void_p.from_address(out_message).value = addr
    ctypes.c_size_t.from_address(out_size).value = size


_DESTROY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_guarded(destroy))
_MESSAGE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(_guarded(_table_message))
_GET_CODE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(_guarded(code, capi.INTERNAL))
_FOR_EACH_PAYLOAD = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    _guarded(lambda err, visitor, arg: None))      # xlac's errors carry no payloads
_TABLE = capi.ErrorFunctionTable(
    struct_size=ctypes.sizeof(capi.ErrorFunctionTable), instance_size=ctypes.sizeof(ctypes.c_void_p),
    extension_start=None,
    destroy=ctypes.cast(_DESTROY, ctypes.c_void_p), message=ctypes.cast(_MESSAGE, ctypes.c_void_p),
    get_code=ctypes.cast(_GET_CODE, ctypes.c_void_p),
    for_each_payload=ctypes.cast(_FOR_EACH_PAYLOAD, ctypes.c_void_p))
