"""The ``custom_call`` service of the JIT's run options (ABI version 4).

Generated code calls ``opts->custom_call(runtime_ctx, op)`` for a custom call
whose target xlac does not provide (``codegen/kernels/custom_call.py``).  This
service looks the target up in the registry (``xlac.register_custom_call``,
:mod:`xlac.custom_calls`) at each call:

* a C function is called straight on the buffers, with XLA's calling
  convention of the instruction's API version;
* a Python callable gets numpy arrays (views of the operand buffers, in
  logical order whatever their layout); what it returns is checked against
  the result shapes and written into the result buffers in their layouts.

A Python exception must not cross the native frames: it is recorded for the
calling thread (``threads.record_error``; the executable raises it when the
native call returns: ``xlac.CustomCallError`` for a failing target,
``TypeError``/``ValueError`` for results of the wrong dtype or shape), its
message is written into ``op->error`` and the service returns
``XLAC_ERROR_SERVICE_FAILED``.
"""
from __future__ import annotations

import ctypes

import numpy as np

from .. import custom_calls
from ..shape import from_buffer, to_buffer
from . import abi, c_memory
from .threads import record_error

__all__ = ["CUSTOM_CALL_CALLBACK", "decode"]


def _strings(array, n: int) -> tuple:
    return tuple(array[k].decode("utf-8") for k in range(n))


def decode(op: abi.CustomCallOp) -> tuple:
    """(CallInfo, result addresses, operand addresses) of ``op``."""
    shapes_in = tuple(custom_calls.shape_of_text(s) for s in _strings(op.operand_shapes, op.num_operands))
    shapes_out = tuple(custom_calls.shape_of_text(s) for s in _strings(op.result_shapes, op.num_results))
    opaque = ctypes.string_at(op.opaque, op.opaque_len) if op.opaque_len else b""
    info = custom_calls.CallInfo((op.target or b"").decode("utf-8"), (op.instruction or b"").decode("utf-8"),
                                 int(op.api_version), shapes_in, shapes_out, bool(op.result_is_tuple), opaque)
    results = [op.results[k] or 0 for k in range(op.num_results)]
    operands = [op.operands[k] or 0 for k in range(op.num_operands)]
    return info, results, operands


def _view(address: int, shape) -> np.ndarray:
    """The buffer at ``address`` as a logical numpy array of ``shape`` (a view);
    None for a token."""
    if shape.is_token:
        return None
    count = shape.buffer_element_count()
    if count == 0 or not address:
        return np.zeros(shape.dimensions, shape.dtype)
    raw = c_memory.memory(address, count * shape.dtype.itemsize)
    return from_buffer(np.frombuffer(raw, shape.dtype), shape)


def _write(address: int, value: np.ndarray, shape) -> None:
    if shape.is_token:
        return
    data = to_buffer(value, shape)
    if data.nbytes:
        ctypes.memmove(address, data.ctypes.data, data.nbytes)


def _fail(op: abi.CustomCallOp, exc: BaseException) -> int:
    record_error(exc)
    try:
        text = str(exc).encode("utf-8", "replace")[: max(0, op.error_capacity - 1)]
        if op.error and op.error_capacity > 0:
            ctypes.memmove(op.error, text + b"\0", len(text) + 1)
    except BaseException:  # noqa: BLE001
        pass
    return abi.XLAC_ERROR_SERVICE_FAILED


def _service(runtime_ctx, op_ptr) -> int:
    op = op_ptr.contents
    try:
        info, results, operands = decode(op)
        entry = custom_calls.check_target(info.target, info.api_version, info.instruction)
        if entry.is_c:
            custom_calls.call_c(entry, info, results, operands)
            return abi.XLAC_OK
        args = [None if s.is_token else _view(p, s).copy() for p, s in zip(operands, info.operand_shapes)]
        values = custom_calls.call_python(entry, info, args)
        for address, value, shape in zip(results, values, info.result_shapes):
            _write(address, value, shape)
        return abi.XLAC_OK
    except BaseException as e:  # noqa: BLE001 - must not unwind through native frames
        return _fail(op, e)


#: The ctypes callback (kept alive for the life of the process).
CUSTOM_CALL_CALLBACK = abi.CUSTOM_CALL(_service)
