"""The ``collective`` service of ``xlac_run_options`` (ABI version 3).

Generated code calls ``opts->collective(opts->runtime_ctx, op)`` with an
``xlac_collective_op``: the kind, the element type, the reduction, this
device's input and output buffers, and the participating devices already
resolved to global device ids (``groups``, ``pairs``).  Buffers are plain
contiguous bytes in the order the exchange needs: the code generator has
already laid the operand out so that an all-gather concatenates, a
reduce-scatter or all-to-all splits, whole contiguous blocks in group order.

:func:`make_service` wraps a *transport* — an object with ``all_reduce``,
``all_gather``, ``reduce_scatter``, ``all_to_all`` and ``permute`` on numpy
arrays (``shm_transport.ShmTransport``; the MPI one has the same methods) —
into the ctypes callback.  A Python exception must not cross the native
frames: it is recorded for the calling thread (``threads.record_error``,
re-raised by the executable when the native call returns), the transport is
told (so the other devices stop waiting and fail too), and the callback
returns ``XLAC_ERROR_SERVICE_FAILED``.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..shape import PrimitiveType as PT
from . import abi, c_memory, native
from .threads import record_error

__all__ = ["make_service", "make_native_service", "decode"]

_DTYPES = {number: pt for pt, number in abi.ELEMENT_TYPE_NUMBERS.items() if pt.is_array}
_KINDS = {number: name for name, number in abi.COLLECTIVE_KINDS.items()}
_REDUCTIONS = {number: name for name, number in abi.REDUCTIONS.items()}


def _array(address: int, nbytes: int, dtype: np.dtype) -> np.ndarray:
    if nbytes == 0:
        return np.empty(0, dtype)
    raw = c_memory.memory(address, nbytes)
    return np.frombuffer(raw, np.uint8).view(dtype)


def decode(op: abi.CollectiveOp, device: int) -> dict:
    """The fields of ``op`` as Python values: kind, reduction, dtype, input and
    output arrays (views of the buffers), this device's group and the pairs."""
    pt = _DTYPES.get(op.element_type)
    if pt is None:
        raise ValueError(f"collective: unknown element type number {op.element_type}")
    kind = _KINDS.get(op.kind)
    if kind is None:
        raise ValueError(f"collective: unknown kind {op.kind}")
    dtype = np.dtype(np.bool_) if pt is PT.PRED else pt.dtype
    group = None
    if op.groups and op.num_groups > 0:
        ids = np.ctypeslib.as_array(op.groups, (op.num_groups, op.group_size))
        for row in ids:
            if device in row:
                group = tuple(int(d) for d in row)
                break
        if group is None:
            raise ValueError(f"collective {op.instruction.decode()}: device {device} is in no group")
    pairs = ()
    if op.pairs and op.num_pairs > 0:
        flat = np.ctypeslib.as_array(op.pairs, (op.num_pairs, 2))
        pairs = tuple((int(s), int(t)) for s, t in flat)
    return dict(kind=kind, reduction=_REDUCTIONS.get(op.reduction, "none"), dtype=dtype,
                input=_array(op.input, op.input_bytes, dtype), output=_array(op.output, op.output_bytes, dtype),
                group=group, pairs=pairs, channel_id=op.channel_id,
                instruction=(op.instruction or b"").decode("utf-8", "replace"))


def _label(f: dict) -> str:
    channel = f", channel_id={f['channel_id']}" if f["channel_id"] else ""
    return f"{f['kind']} {f['instruction']}{channel}"


def make_service(transport, device: int, num_devices: int, on_failure=None):
    """The ``xlac_collective_fn`` of device ``device`` of ``num_devices``
    over ``transport``.  ``on_failure(message)`` is called when a collective
    fails on this device, so the others stop waiting (the transport keeps
    the first failure reported)."""
    everyone = tuple(range(num_devices))

    def service(runtime_ctx, op_ptr) -> int:
        try:
            f = decode(op_ptr.contents, device)
            group = f["group"] or everyone
            what = _label(f)
            x, out, kind = f["input"], f["output"], f["kind"]
            if kind == "all-reduce":
                transport.all_reduce(x, out, f["reduction"], group, what=what)
            elif kind == "all-gather":
                transport.all_gather(x, out, group, what=what)
            elif kind == "reduce-scatter":
                transport.reduce_scatter(x, out, f["reduction"], group, what=what)
            elif kind == "all-to-all":
                transport.all_to_all(x, out, group, what=what)
            else:
                transport.permute(x, out, f["pairs"], what=what)
            return abi.XLAC_OK
        except BaseException as e:  # noqa: BLE001 - must not unwind through native frames
            return _failed(e, on_failure)

    return abi.COLLECTIVE(service)


def _failed(err: BaseException, on_failure) -> int:
    """Record ``err`` for the calling thread, tell ``on_failure``; the status to return."""
    record_error(err)
    if on_failure is not None:
        try:
            on_failure(f"{type(err).__name__}: {err}")
        except BaseException:  # noqa: BLE001
            pass
    return abi.XLAC_ERROR_SERVICE_FAILED


def make_native_service(transport, device: int, num_devices: int, on_failure=None):
    """The ``collective`` service of device ``device`` over a shared-memory
    ``transport`` (``shm_transport.ShmTransport``) with the native protocol in
    front: what fits one round never leaves native code; the rest goes to
    :func:`make_service`'s callback; a native failure is raised here in
    Python terms (recorded, ``on_failure`` told) as that callback does."""
    fallback = make_service(transport, device, num_devices, on_failure)

    def fail(state, op_ptr) -> int:
        try:
            err = transport.error(_label(decode(op_ptr.contents, device)))
        except BaseException as e:  # noqa: BLE001
            err = e
        return _failed(err, on_failure)

    fail_fn = abi.COLLECTIVE(fail)
    transport.state.fallback = ctypes.cast(fallback, ctypes.c_void_p).value
    transport.state.fail = ctypes.cast(fail_fn, ctypes.c_void_p).value
    service = native.get("shm_bind")(ctypes.addressof(transport.state))
    service._keep = (fallback, fail_fn, transport)
    return service
