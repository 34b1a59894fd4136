"""PJRT_Buffer: an array on an xlac device.

An xlac device's memory is the host's, so a buffer is a C-contiguous numpy
array (row-major: the default layout, ``minor_to_major`` = rank-1 ... 0) owned
by the buffer.  Arrays come in by copy (``PJRT_Client_BufferFromHostBuffer``:
the caller's memory is never kept, which every host-buffer semantics allows)
and go out by copy (``PJRT_Buffer_ToHostBuffer``) or without one: jax's
``np.asarray`` of an array on a ``cpu``-platform device takes the buffer's
address (``PJRT_Buffer_UnsafePointer`` / ``OpaqueDeviceMemoryDataPointer``)
under an external reference, which keeps the memory alive even after the
buffer is deleted.
"""
from __future__ import annotations

import ctypes
import weakref

import numpy as np

from ..shape import PrimitiveType
from ..runtime import c_memory
from . import capi, handles
from .errors import PjrtError, unimplemented


def dtype_of(type_code: int) -> np.dtype:
    """The numpy dtype of PJRT_Buffer_Type ``type_code``; INVALID_ARGUMENT for
    one that is no array element type."""
    name = capi.BUFFER_TYPES[type_code] if 0 <= type_code < len(capi.BUFFER_TYPES) else None
    if name in (None, "INVALID", "TOKEN"):
        raise PjrtError(capi.INVALID_ARGUMENT, f"PJRT_Buffer_Type {type_code} is not an array element type")
    return PrimitiveType[name].dtype


def type_code_of(element_type: PrimitiveType) -> int:
    """The PJRT_Buffer_Type of xlac's ``element_type``."""
    return capi.BUFFER_TYPES.index(element_type.name)


#: PJRT_Buffer_Type of a token.
TOKEN_CODE = capi.BUFFER_TYPES.index("TOKEN")

_CODE_OF_DTYPE = {}


def type_code_of_dtype(dtype: np.dtype) -> int:
    """The PJRT_Buffer_Type of a numpy dtype xlac uses for an element type."""
    code = _CODE_OF_DTYPE.get(dtype)
    if code is not None:
        return code
    if not _CODE_OF_DTYPE:
        for code, name in enumerate(capi.BUFFER_TYPES):
            if name not in ("INVALID", "TOKEN") and name in PrimitiveType.__members__:
                _CODE_OF_DTYPE.setdefault(np.dtype(PrimitiveType[name].dtype), code)
    return _CODE_OF_DTYPE[np.dtype(dtype)]


class Buffer:
    """A PJRT_Buffer on ``device``: ``array`` (C-contiguous, owned), deleted or not.

    ``external_references`` counts the caller's holds on the memory
    (PJRT_Buffer_IncreaseExternalReferenceCount): while any is held, deleting
    the buffer does not free its array.
    """

    __slots__ = ("array", "device", "type_code", "deleted", "external_references", "_held", "ndim", "_shape",
                 "_c_dims", "_c_m2m", "handle", "_memory")

    def __init__(self, array: np.ndarray, device, memory=None):
        # (not np.ascontiguousarray: it makes a 0-d array 1-d)
        self.array = array = array if array.flags.c_contiguous else array.copy(order="C")
        self.device = device
        self._memory = memory                 # None: the device's default memory
        self.type_code = type_code_of_dtype(array.dtype)
        self.deleted = False
        self.external_references = 0
        self._held = None                     # the array while deleted but referenced
        self.ndim = array.ndim
        self._shape = array.shape
        self._c_dims = None                   # made when asked for (not on the dispatch path)
        self.handle = handles.new_from(self, (memory or device).buffer_block)

    @property
    def memory(self):
        """The PJRT_Memory the buffer is in (a name: every memory is the host's)."""
        return self._memory or self.device.memory

    @classmethod
    def results(cls, arrays, device, type_codes, block: bytes) -> list:
        """The handles of new buffers of a compiled program's fresh results
        ``arrays`` (C-contiguous) of elements ``type_codes``; ``block``: their
        handles' contents (``device.buffer_block``).  What ``Buffer(array,
        device)`` makes, without the checks and conversions, in one pass: a
        training step returns hundreds."""
        new, bind = object.__new__, handles.new_many(block)
        out = []
        for array, code in zip(arrays, type_codes):
            self = new(cls)
            self.array, self.device, self.type_code, self._memory = array, device, code, None
            self.deleted, self.external_references, self._held, self._c_dims = False, 0, None, None
            self.ndim, self._shape = array.ndim, array.shape
            self.handle = h = bind(self)
            out.append(h)
        return out

    @classmethod
    def token(cls, device) -> "Buffer":
        """A token (PJRT_Buffer_Type TOKEN, no dimensions): what a program returns
        for an HLO token.  Its array is an empty pred, which a program taking a
        token parameter is given."""
        self = cls(np.zeros(0, np.bool_), device)
        self.type_code, self.ndim, self._shape = TOKEN_CODE, 0, ()
        return self

    @property
    def dims(self) -> ctypes.Array:
        """The dimensions as a C array of int64 (kept with the buffer)."""
        self._c_arrays()
        return self._c_dims

    @property
    def minor_to_major(self) -> ctypes.Array:
        """The (row-major) layout's minor_to_major as a C array of int64."""
        self._c_arrays()
        return self._c_m2m

    def _c_arrays(self) -> None:
        if self._c_dims is None:
            n = max(1, self.ndim)
            self._c_dims = c_memory.array(ctypes.c_int64, self._shape, n)
            self._c_m2m = c_memory.array(ctypes.c_int64, range(self.ndim - 1, -1, -1), n)

    @property
    def nbytes(self) -> int:
        return self.array.nbytes if self.array is not None else 0

    def data(self, what: str) -> np.ndarray:
        """The array; FAILED_PRECONDITION naming ``what`` if the buffer was deleted or donated."""
        if self.deleted:
            raise PjrtError(capi.FAILED_PRECONDITION,
                            f"{what}: the buffer has been deleted or donated (xlac buffer {self.handle:#x})")
        return self.array

    def delete(self) -> None:
        """PJRT_Buffer_Delete: the memory goes once no external reference holds it."""
        if not self.deleted:
            handles.set_tag(self.handle, handles.DELETED_BUFFER_TAG)     # IsDeleted & co. go to Python
            self.destroyed()

    def destroyed(self) -> None:
        """Deleted (what PJRT_Buffer_Destroy leaves, its handle released by the
        caller): the memory kept only for external references."""
        self.deleted = True
        if self.external_references:
            self._held = self.array
        else:
            self._held = self.array = None

    def add_reference(self, delta: int) -> None:
        self.external_references = max(0, self.external_references + delta)
        if self.deleted and not self.external_references:
            self._held = self.array = None

    def address(self, what: str) -> int:
        """The address of the buffer's first element (its memory stays put while it lives)."""
        return self.data(what).ctypes.data


def from_host(data: int, type_code: int, dims, byte_strides, device, memory=None) -> Buffer:
    """PJRT_Client_BufferFromHostBuffer: a buffer in ``memory`` (None: the
    device's default) holding a copy of the host array at address ``data`` of
    ``dims`` (element ``type_code``), laid out by ``byte_strides`` (None: dense
    row-major)."""
    dtype = dtype_of(type_code)
    shape = tuple(int(d) for d in dims)
    if any(d < 0 for d in shape):
        raise PjrtError(capi.INVALID_ARGUMENT, f"BufferFromHostBuffer: negative dimension in {list(shape)}")
    strides = tuple(int(s) for s in byte_strides) if byte_strides is not None else None
    if strides is not None and len(strides) != len(shape):
        raise PjrtError(capi.INVALID_ARGUMENT, f"BufferFromHostBuffer: {len(strides)} byte strides for "
                                               f"{len(shape)} dimensions")
    if 0 in shape:
        return Buffer(np.empty(shape, dtype), device, memory)
    if not data:
        raise PjrtError(capi.INVALID_ARGUMENT, "BufferFromHostBuffer: data is NULL")
    if strides is None:
        strides = tuple(int(np.prod(shape[k + 1:], dtype=np.int64)) * dtype.itemsize for k in range(len(shape)))
    low = sum(min(0, (d - 1) * s) for d, s in zip(shape, strides))
    high = sum(max(0, (d - 1) * s) for d, s in zip(shape, strides)) + dtype.itemsize
    raw = c_memory.memory(data + low, high - low, writable=False)
    view = np.ndarray(shape, dtype, buffer=raw, offset=-low, strides=strides)
    return Buffer(view.copy(order="C"), device, memory)


_ON_DELETE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
#: The alignment a view's memory must have (XLA:CPU's ``MinAlign``).
VIEW_ALIGNMENT = 16


def view_of(address: int, type_code: int, dims, device, on_delete: int, on_delete_arg: int,
            memory=None) -> Buffer:
    """PJRT_Client_CreateViewOfDeviceBuffer: a buffer over the caller's
    row-major memory at ``address`` (no copy: what ``jnp.from_dlpack`` of a
    numpy array gives), aligned to :data:`VIEW_ALIGNMENT` bytes as XLA:CPU
    requires.  ``on_delete(address, on_delete_arg)`` (a C function,
    or 0) is called once nothing xlac holds reads the memory any more: the
    buffer destroyed and every array made from it (a result that is the
    argument itself, say) gone."""
    dtype = dtype_of(type_code)
    shape = tuple(int(d) for d in dims)
    if any(d < 0 for d in shape):
        raise PjrtError(capi.INVALID_ARGUMENT, f"CreateViewOfDeviceBuffer: negative dimension in {list(shape)}")
    if not address:
        raise PjrtError(capi.INVALID_ARGUMENT, "CreateViewOfDeviceBuffer: device_buffer_ptr is NULL")
    if address % VIEW_ALIGNMENT:
        # XLA:CPU's words: jaxlib reads the alignment from them, and copies
        # (``copy=None``) what cannot be viewed.
        raise PjrtError(capi.INVALID_ARGUMENT, f"Can't create a view of buffer with unaligned data, ptr: "
                                               f"{address:#x} is not aligned to {VIEW_ALIGNMENT} bytes. ")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = (ctypes.c_char * max(nbytes, 1)).from_address(address)
    if on_delete:
        weakref.finalize(raw, _ON_DELETE(on_delete), address, on_delete_arg or None)
    return Buffer(np.ndarray(shape, dtype, buffer=raw), device, memory)


def to_host(buffer: Buffer, dst: int, dst_size: int, layout) -> None:
    """PJRT_Buffer_ToHostBuffer: copy ``buffer`` to ``dst`` (``dst_size`` bytes)
    in ``layout`` (a ``capi.MemoryLayout`` or None: row-major)."""
    array = buffer.data("PJRT_Buffer_ToHostBuffer")
    if dst_size < array.nbytes:
        raise PjrtError(capi.INVALID_ARGUMENT, f"ToHostBuffer: destination of {dst_size} bytes for a buffer "
                                               f"of {array.nbytes}")
    if array.nbytes == 0:
        return
    strides = _host_strides(layout, array)
    raw = c_memory.memory(dst, dst_size)
    out = np.ndarray(array.shape, array.dtype, buffer=raw, strides=strides)
    np.copyto(out, array)


def _host_strides(layout, array: np.ndarray) -> tuple:
    """The byte strides of the host layout ``layout`` for ``array``."""
    if layout is None:
        return array.strides
    if layout.type == capi.LAYOUT_STRIDES:
        n = layout.strides.num_byte_strides
        return tuple(layout.strides.byte_strides[k] for k in range(n))
    tiled = layout.tiled
    if tiled.num_tiles:
        raise unimplemented("ToHostBuffer into a tiled host layout")
    minor_to_major = [tiled.minor_to_major[k] for k in range(tiled.minor_to_major_size)]
    if sorted(minor_to_major) != list(range(array.ndim)):
        raise PjrtError(capi.INVALID_ARGUMENT, f"ToHostBuffer: layout {{{minor_to_major}}} for rank {array.ndim}")
    strides, step = [0] * array.ndim, array.itemsize
    for dim in minor_to_major:
        strides[dim] = step
        step *= array.shape[dim]
    return tuple(strides)
