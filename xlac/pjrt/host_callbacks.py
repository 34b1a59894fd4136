"""jax's host callbacks (``jax.debug.print``, ``jax.debug.callback``,
``jax.pure_callback``, ``io_callback``) in programs run through the plugin.

jax lowers a callback, on the CPU platform, to a custom call of
``xla_ffi_python_cpu_callback`` whose typed-FFI attribute ``index`` names the
Python function among the program's host callbacks.  The functions never
reach the compiler: jaxlib keeps them with its loaded executable and hands
them to each execution as FFI user data of the execute context
(``PJRT_ExecuteOptions.context``, filled through the FFI extension's
``user_data_add``): an ``xla::FfiLoadedHostCallbacks`` (``void **callbacks;
uint32_t num_callbacks``, type id :data:`FFI_LOADED_HOST_CALLBACKS`) whose
entries are the ``PyObject*`` of the functions.  jaxlib forwards them only to
a client whose platform is ``cpu``, which xlac's is.

:func:`prepare` points the program's callback custom calls at xlac's own
targets (registered here with ``xlac.register_custom_call``); the executable
runs the program inside :func:`running`, which makes that execution's
functions the ones the targets call, in program order, with the values
jaxlib's handler would pass: read-only numpy arrays, ``None`` for a token.
A program without the functions (a plain ``xlac.jit`` of jax's text) keeps
jax's target names, which the compiler refuses by name.
"""
from __future__ import annotations

import contextlib
import ctypes
import threading

import numpy as np

from .. import custom_calls
from ..errors import CustomCallError
from ..hlo import custom_call as hcc
from ..hlo.attributes import Raw

__all__ = ["FFI_LOADED_HOST_CALLBACKS", "prepare", "running", "from_user_data"]

#: ``xla::FfiLoadedHostCallbacks::id`` (xla/pjrt/host_callback.cc: the first 64
#: bits of SHA-512 of "xla::FfiLoadedHostCallbacks").
FFI_LOADED_HOST_CALLBACKS = 7357244197867843242

#: xlac's targets: one for a callback whose result is a tuple (several values,
#: none, or a token with values), one for a single array.
TUPLE_TARGET = "xlac.pjrt.host_callback"
ARRAY_TARGET = "xlac.pjrt.host_callback.array"


class _LoadedHostCallbacks(ctypes.Structure):
    _fields_ = [("callbacks", ctypes.POINTER(ctypes.c_void_p)), ("num_callbacks", ctypes.c_uint32)]


def from_user_data(address: int) -> list:
    """The Python functions an ``FfiLoadedHostCallbacks`` at ``address`` lists
    (jaxlib keeps them alive for the execution)."""
    loaded = _LoadedHostCallbacks.from_address(address)
    return [ctypes.cast(ctypes.c_void_p(loaded.callbacks[k]), ctypes.py_object).value
            for k in range(loaded.num_callbacks)]


def prepare(module) -> bool:
    """Point every host-callback custom call of ``module`` at xlac's targets
    (in place); whether there was one."""
    found = False
    for inst in module.instructions():
        if inst.opcode == "custom-call" and hcc.host_callback_error(hcc.target_of(inst)) is not None:
            target = TUPLE_TARGET if inst.shape.is_tuple else ARRAY_TARGET
            inst.attrs["custom_call_target"] = Raw(f'"{target}"')
            found = True
    return found


_local = threading.local()


@contextlib.contextmanager
def running(callbacks: list | None):
    """Within: the host callbacks of the execution on this thread."""
    saved = getattr(_local, "callbacks", None)
    _local.callbacks = callbacks
    try:
        yield
    finally:
        _local.callbacks = saved


def _call(args: tuple, index: int) -> tuple:
    callbacks = getattr(_local, "callbacks", None)
    if callbacks is None:
        raise CustomCallError("a host callback ran without the execution's Python functions "
                              "(jax passes them to each execution of the program)")
    if not 0 <= index < len(callbacks):
        raise CustomCallError(f"host callback {index} of a program with {len(callbacks)}")
    for a in args:
        if a is not None:
            a.flags.writeable = False          # as jaxlib's handler passes them
    out = callbacks[index](*args)
    return tuple(np.asarray(v) if v is not None else None for v in out)


def _tuple_target(*args, index: int, **_):
    return _call(args, int(index))


def _array_target(*args, index: int, **_):
    out = _call(args, int(index))
    if len(out) != 1:
        raise CustomCallError(f"host callback {index} returned {len(out)} values, the program takes one")
    return out[0]


custom_calls.register_custom_call(TUPLE_TARGET, _tuple_target)
custom_calls.register_custom_call(ARRAY_TARGET, _array_target)
