"""PJRT_Client, PJRT_Device, PJRT_DeviceDescription, PJRT_Memory and the
client's PJRT_TopologyDescription.

A client has ``XLAC_NUM_DEVICES`` devices (default 1; also the client option
``num_devices``), all addressable, in process 0.  Each device has XLA:CPU's
three memories, of kinds ``device`` (the default), ``pinned_host`` and
``unpinned_host``: all three are the host's, so a buffer's memory is only a
name it carries (where jax's memory kinds put it: ``jax.device_put(x,
memory_kind=...)``, host offloading).  The client's platform name is ``cpu`` (see
docs/jax_backend.md: jax lowers programs for this client with its CPU rules);
jax knows the backend itself by the plugin's name, ``xlac``.
"""
from __future__ import annotations

import ctypes
import os
import sys

from .. import __version__ as xlac_version
from ..runtime import c_memory
from . import capi, events, handles
from .errors import PjrtError

PLATFORM_NAME = "cpu"
DEVICE_KIND = "xlac"
MEMORY_KIND = "device"
#: The memory kinds of a device, the default first; a kind's id is its position.
MEMORY_KINDS = (MEMORY_KIND, "pinned_host", "unpinned_host")


class Strings:
    """C strings kept alive with their owner: ``get(text) -> (address, size)``."""

    def __init__(self):
        self._kept = {}

    def get(self, text: str) -> tuple[int, int]:
        if text not in self._kept:
            data = text.encode()
            self._kept[text] = (data, c_memory.address_of(data))
        data, address = self._kept[text]
        return address, len(data)


def handle_array(objects) -> ctypes.Array:
    """A C array of the handles of ``objects`` (keep it alive with its owner)."""
    return c_memory.array(ctypes.c_void_p, [o.handle for o in objects])


def named_values(values: dict) -> ctypes.Array:
    """A C array of PJRT_NamedValue for ``values`` (str, bool, int, float or
    tuple of ints); the strings it points to live as long as the array."""
    array = c_memory.array(capi.NamedValue, length=max(1, len(values)))
    keep = []
    for entry, (name, value) in zip(array, values.items()):
        key = name.encode()
        keep.append(key)
        entry.struct_size, entry.name, entry.name_size = ctypes.sizeof(capi.NamedValue), key, len(key)
        if isinstance(value, str):
            data = value.encode()
            keep.append(data)
            entry.type, entry.string_value, entry.value_size = capi.NV_STRING, data, len(data)
        elif isinstance(value, bool):
            entry.type, entry.bool_value, entry.value_size = capi.NV_BOOL, value, 1
        elif isinstance(value, int):
            entry.type, entry.int64_value, entry.value_size = capi.NV_INT64, value, 1
        elif isinstance(value, float):
            entry.type, entry.float_value, entry.value_size = capi.NV_FLOAT, value, 1
        else:
            ints = c_memory.array(ctypes.c_int64, value)
            keep.append(ints)
            entry.type, entry.value_size = capi.NV_INT64_LIST, len(value)
            entry.int64_array_value = ctypes.cast(ints, ctypes.POINTER(ctypes.c_int64))
    array._keep = keep
    return array


class Memory:
    """A PJRT_Memory: one of device ``device``'s memories, of ``kind`` (ids: the
    device's id for its ``device`` memory, then one per kind and device)."""

    def __init__(self, device: "Device", kind: str = MEMORY_KIND):
        self.device, self.kind = device, kind
        self.kind_id = MEMORY_KINDS.index(kind)
        self.id = self.kind_id * device.client_size + device.id
        self.strings = Strings()
        self.devices = handle_array([device])
        # PJRT_Memory_FunctionTable's get/set_user_data: (key, data) pairs the native
        # getter reads (xlac.pjrt.trampolines), and each key's destructor.
        self.user_slots = c_memory.array(ctypes.c_void_p, length=2 * handles.USER_DATA_SLOTS)
        self.user_dtors = {}
        kind_text = self.strings.get(self.kind)                            # PJRT_Memory_Kind's answer
        self.handle = handles.new(self, head=ctypes.addressof(_MEMORY_TABLE), tag=handles.MEMORY_TAG,
                                  fields=(*kind_text, ctypes.addressof(self.user_slots)))
        #: What a buffer in this memory carries for the native entries (Buffer_Device,
        #: Buffer_Memory, Buffer_ReadyEvent), and its handle block (``xlac.pjrt.buffer``:
        #: no function table, the buffer tag, the native fields).
        self.native_fields = (device.handle, self.handle, events.ready())
        self.buffer_block = handles.template(0, handles.BUFFER_TAG, self.native_fields)

    def get_user_data(self, key):
        slots = self.user_slots
        for k in range(0, len(slots), 2):
            if slots[k] == key:
                return slots[k + 1]
        return None

    def set_user_data(self, key, data, dtor) -> None:
        slots = self.user_slots
        free = None
        for k in range(0, len(slots), 2):
            if slots[k] == key or (free is None and slots[k] is None):
                free = k
                if slots[k] == key:
                    break
        if free is None:
            raise RuntimeError(f"PJRT_Memory set_user_data: more than {handles.USER_DATA_SLOTS} keys")
        slots[free], slots[free + 1] = key, data
        self.user_dtors[key] = dtor

    @property
    def debug_string(self) -> str:
        # (as XLA:CPU's: CpuDeviceMemory(...), PinnedHostMemorySpace(...), ...)
        name = {"device": "XlacDeviceMemory", "pinned_host": "PinnedHostMemorySpace",
                "unpinned_host": "UnpinnedHostMemorySpace"}[self.kind]
        return f"{name}(id={self.id}, process_index=0, client=xlac)"


class DeviceDescription:
    """A PJRT_DeviceDescription: what a device is, without the device."""

    def __init__(self, device_id: int):
        self.id, self.process_index, self.kind = device_id, 0, DEVICE_KIND
        self.strings = Strings()
        self.attributes = named_values({"xlac_version": xlac_version})
        self.handle = handles.new(self)

    @property
    def debug_string(self) -> str:
        return f"xlac:{self.id}"

    @property
    def to_string(self) -> str:
        return f"XlacDevice(id={self.id})"


class Device:
    """A PJRT_Device: one xlac device (``id`` = local hardware id)."""

    def __init__(self, client: "Client", device_id: int, client_size: int = 1):
        self.client, self.id, self.client_size = client, device_id, client_size
        self.description = DeviceDescription(device_id)
        self.handle = handles.new(self)
        self.all_memories = [Memory(self, kind) for kind in MEMORY_KINDS]
        self.memory = self.all_memories[0]
        self.memories = handle_array(self.all_memories)
        self.native_fields = self.memory.native_fields
        self.buffer_block = self.memory.buffer_block

    def memory_of(self, kind: str | None) -> Memory:
        """The device's memory of ``kind`` (None: the default); PjrtError for another kind."""
        if kind is None:
            return self.memory
        for m in self.all_memories:
            if m.kind == kind:
                return m
        raise PjrtError(capi.INVALID_ARGUMENT, f"no memory of kind {kind!r} on xlac device {self.id} (its kinds: "
                                               f"{', '.join(MEMORY_KINDS)})")


class Topology:
    """The client's PJRT_TopologyDescription (owned by the client)."""

    def __init__(self, client: "Client"):
        self.client = client
        self.descriptions = c_memory.array(ctypes.c_void_p, [d.description.handle for d in client.devices])
        self.attributes = named_values({})
        self.kind_ids = c_memory.array(ctypes.c_int, range(len(MEMORY_KINDS)))
        self.handle = handles.new(self)


def device_count(options: dict) -> int:
    """The client's device count: option ``num_devices``, else ``XLAC_NUM_DEVICES``, else 1."""
    raw = options.get("num_devices", os.environ.get("XLAC_NUM_DEVICES", "1"))
    try:
        count = int(raw)
    except (TypeError, ValueError):
        count = 0
    if not 1 <= count <= 1024:
        raise PjrtError(capi.INVALID_ARGUMENT, f"XLAC_NUM_DEVICES / num_devices must be an integer from 1 to "
                                               f"1024, got {raw!r}")
    return count


class Client:
    """A PJRT_Client: the devices, their memories, the compiled executables."""

    def __init__(self, options: dict):
        self.options = options
        self.platform_name = PLATFORM_NAME
        self.platform_version = f"xlac {xlac_version}"
        self.strings = Strings()
        count = device_count(options)
        self.devices = [Device(self, k, count) for k in range(count)]
        self.device_array = handle_array(self.devices)
        self.memories = [m for d in self.devices for m in d.all_memories]
        self.memory_array = handle_array(self.memories)
        self.topology = Topology(self)
        self.handle = handles.new(self)

    def device(self, device_id: int) -> Device:
        if not 0 <= device_id < len(self.devices):
            raise PjrtError(capi.INVALID_ARGUMENT, f"no xlac device with id {device_id} (the client has "
                                                   f"{len(self.devices)})")
        return self.devices[device_id]

    def destroy(self) -> None:
        for device in self.devices:
            for memory in device.all_memories:
                handles.release(memory.handle)
            handles.release(device.description.handle)
            handles.release(device.handle)
        handles.release(self.topology.handle)
        handles.release(self.handle)


# PJRT_Memory's function table: the caller attaches its own data to a memory.
def _get_user_data(memory, key):
    try:
        return handles.lookup(memory, Memory, "PJRT_Memory").get_user_data(key)
    except BaseException:   # noqa: BLE001 - nothing may escape into C++
        return None


def _set_user_data(memory, key, data, dtor):
    try:
        handles.lookup(memory, Memory, "PJRT_Memory").set_user_data(key, data, dtor)
    except BaseException as exc:   # noqa: BLE001 - nothing may escape into C++
        print(f"xlac PJRT plugin: PJRT_Memory set_user_data: {exc}", file=sys.stderr)


def use_native_user_data(address: int) -> None:
    """Point PJRT_Memory's function table at the native get_user_data."""
    _MEMORY_TABLE.get_user_data = address


_GET_USER_DATA = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(_get_user_data)
_SET_USER_DATA = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                  ctypes.c_void_p)(_set_user_data)
_MEMORY_TABLE = capi.MemoryFunctionTable(
    struct_size=ctypes.sizeof(capi.MemoryFunctionTable), extension_start=None,
    instance_struct_size=ctypes.sizeof(ctypes.c_void_p),
    get_user_data=ctypes.cast(_GET_USER_DATA, ctypes.c_void_p),
    set_user_data=ctypes.cast(_SET_USER_DATA, ctypes.c_void_p))
