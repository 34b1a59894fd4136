"""jax's host callbacks (``jax.debug.print``, ``jax.debug.callback``,
``jax.pure_callback``, ``io_callback``, ``buffer_callback``) in programs run
through the plugin.

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
jax's target names, which the compiler refuses by name.  In a program on
several devices the callbacks of ``shard_map`` bodies run once per device,
as on XLA: the device processes ask this process to call the target
(``xlac.devices``); one outside a ``shard_map`` body is refused
(:func:`outside_manual_computations`).

``jax.experimental.buffer_callback`` lowers to ``xla_buffer_python_cpu_callback``,
whose function takes an execution context and the buffers instead: the
operands, read-only, then the results, which it fills in place (XLA's FFI
``Buffer`` objects: ``shape``, ``dtype``, ``ndim``, ``writeable``,
``__array__``, ``__dlpack__``).  :func:`prepare` writes the results' shapes and
the instruction's ``output_to_operand_aliasing`` into its attributes, so the
target can make the result arrays: zeros, or for an aliased result a copy of
its operand that the operand's read-only buffer views (one memory, as XLA
gives the two buffers).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import re
import threading

import numpy as np

from .. import custom_calls
from ..errors import CustomCallError
from ..hlo import custom_call as hcc
from ..hlo.attributes import Raw

__all__ = ["FFI_LOADED_HOST_CALLBACKS", "prepare", "running", "from_user_data", "outside_manual_computations"]

#: ``xla::FfiLoadedHostCallbacks::id`` (xla/pjrt/host_callback.cc: the first 64
#: bits of SHA-512 of "xla::FfiLoadedHostCallbacks").
FFI_LOADED_HOST_CALLBACKS = 7357244197867843242

#: xlac's targets: one for a callback whose result is a tuple (several values,
#: none, or a token with values), one for a single array.
TUPLE_TARGET = "xlac.pjrt.host_callback"
ARRAY_TARGET = "xlac.pjrt.host_callback.array"
#: ... and one for ``buffer_callback``'s (jax's ``xla_buffer_python_cpu_callback``).
BUFFER_TARGET = "xlac.pjrt.buffer_callback"
_JAX_BUFFER_TARGET = re.compile(r"xla_buffer_python_(?:cpu|gpu)_callback")


class _LoadedHostCallbacks(ctypes.Structure):
    _fields_ = [("callbacks", ctypes.POINTER(ctypes.c_void_p)), ("num_callbacks", ctypes.c_uint32)]


def from_user_data(address: int) -> list:
    """The Python functions an ``FfiLoadedHostCallbacks`` at ``address`` lists
    (jaxlib keeps them alive for the execution)."""
    loaded = _LoadedHostCallbacks.from_address(address)
    return [ctypes.cast(ctypes.c_void_p(loaded.callbacks[k]), ctypes.py_object).value
            for k in range(loaded.num_callbacks)]


def outside_manual_computations(module) -> list:
    """The host-callback custom calls (after :func:`prepare`) of a program on
    several devices that are not inside a ``shard_map`` body
    (``xla.sdy.manual_computation_body*`` and what it calls): there every
    xlac device computes the global program, and would call it once each
    where XLA calls it once."""
    inside = module.reachable_computations(c for c in module.computations
                                           if c.name.startswith("xla.sdy.manual_computation"))
    return [inst for comp in module.computations if id(comp) not in inside for inst in comp.instructions
            if inst.opcode == "custom-call" and hcc.target_of(inst) in (TUPLE_TARGET, ARRAY_TARGET, BUFFER_TARGET)]


def prepare(module) -> bool:
    """Point every host-callback custom call of ``module`` at xlac's targets
    (in place); whether there was one."""
    found = False
    for inst in module.instructions():
        target = hcc.target_of(inst) if inst.opcode == "custom-call" else ""
        if _JAX_BUFFER_TARGET.fullmatch(target):
            _describe_buffers(inst)
            inst.attrs["custom_call_target"] = Raw(f'"{BUFFER_TARGET}"')
            found = True
        elif hcc.host_callback_error(target) is not None:
            target = TUPLE_TARGET if inst.shape.is_tuple else ARRAY_TARGET
            inst.attrs["custom_call_target"] = Raw(f'"{target}"')
            found = True
    return found


# ``{{0}: (1, {})}``: result 0 (of a tuple; ``{}`` for an array result) is operand 1's buffer.
_ALIAS = re.compile(r"\{\s*(\d*)\s*\}\s*:\s*\(\s*(\d+)\s*,\s*\{[^}]*\}\s*\)")


def _describe_buffers(inst) -> None:
    """Add ``xlac_results`` (the result shape's text) and ``xlac_aliases``
    (``"result:operand ..."``) to a buffer callback's typed-FFI attributes."""
    aliases = " ".join(f"{out or 0}:{opnd}" for out, opnd in
                       _ALIAS.findall(str(inst.attrs.get("output_to_operand_aliasing", ""))))
    config = hcc.unquote(str(inst.attrs.get("backend_config", "{}"))).strip() or "{}"
    extra = f'xlac_results = "{inst.shape}", xlac_aliases = "{aliases}"'
    body = config[1:-1].strip()
    inst.attrs["backend_config"] = Raw("{" + (f"{body}, {extra}" if body else extra) + "}")


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


def _function(index: int):
    """The execution's host callback ``index``."""
    callbacks = getattr(_local, "callbacks", None)
    if callbacks is None:
        raise CustomCallError("a host callback ran without the execution's Python functions "
                              "(jax passes them to each execution of the program)")
    if not 0 <= index < len(callbacks):
        raise CustomCallError(f"host callback {index} of a program with {len(callbacks)}")
    return callbacks[index]


#: The threads callbacks run on (a few: programs called from several threads at once).
_CALLBACK_THREADS = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="xlac-host-callback")


def _off_thread(fn, *args):
    """``fn(*args)`` on a thread of its own, as XLA:CPU calls a program's
    callbacks from its threads: the caller's thread-local settings (jax's
    context mesh, default device) are not the callback's.  A callback that
    runs a program with callbacks of its own runs those where it is."""
    if threading.current_thread().name.startswith("xlac-host-callback"):
        return fn(*args)
    return _CALLBACK_THREADS.submit(fn, *args).result()


def _call(args: tuple, index: int) -> tuple:
    fn = _function(index)
    for a in args:
        if a is not None:
            a.flags.writeable = False          # as jaxlib's handler passes them
    out = _off_thread(fn, *args)
    return tuple(np.asarray(v) if v is not None else None for v in out)


def _tuple_target(*args, index: int, **_):
    return _call(args, int(index))


def _array_target(*args, index: int, **_):
    out = _call(args, int(index))
    if len(out) != 1:
        raise CustomCallError(f"host callback {index} returned {len(out)} values, the program takes one")
    return out[0]


class FfiBuffer:
    """One buffer as ``buffer_callback``'s function gets it (XLA's FFI
    ``Buffer``): an operand (read-only) or a result (writable) of the call."""

    __slots__ = ("_array",)

    def __init__(self, array: np.ndarray):
        self._array = array

    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    ndim = property(lambda self: self._array.ndim)
    writeable = property(lambda self: bool(self._array.flags.writeable))

    def __array__(self, dtype=None, copy=None):
        if copy:
            return np.array(self._array, dtype=dtype)
        return self._array if dtype is None else self._array.astype(dtype, copy=False)

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class ExecutionContext:
    """XLA's FFI execution context as a CPU program's ``buffer_callback`` sees it."""

    @property
    def stage(self):
        from jax.experimental.buffer_callback import ExecutionStage
        return ExecutionStage.EXECUTE

    @property
    def stream(self):
        import jax
        raise jax.errors.JaxRuntimeError("XLA FFI GPU context is not available")


def _buffer_target(*args, index: int, xlac_results: str, xlac_aliases: str = "", **_):
    shape = custom_calls.shape_of_text(xlac_results)        # (parsed once per text)
    shapes = list(shape.tuple_shapes) if shape.is_tuple else [shape]
    aliased = {int(out): int(opnd) for out, opnd in (a.split(":") for a in xlac_aliases.split())}
    ins = [a.view() if a is not None else None for a in args]
    outs = []
    for k, s in enumerate(shapes):
        if k in aliased:
            out = np.array(args[aliased[k]])          # the operand's values, in the result's memory
            ins[aliased[k]] = out.view()
        else:
            out = np.zeros(s.dimensions, s.dtype)
        outs.append(out)
    for a in ins:
        if a is not None:
            a.flags.writeable = False
    _off_thread(_function(int(index)), ExecutionContext(), *[FfiBuffer(a) if a is not None else None for a in ins],
                *map(FfiBuffer, outs))
    return tuple(outs) if shape.is_tuple else outs[0]


custom_calls.register_custom_call(TUPLE_TARGET, _tuple_target)
custom_calls.register_custom_call(ARRAY_TARGET, _array_target)
custom_calls.register_custom_call(BUFFER_TARGET, _buffer_target)
