"""The PJRT_Api function table of xlac's plugin, and the PyCapsule jax takes.

Each PJRT function is a Python function below, registered with
``@implements("<name>")`` (the header's name without ``PJRT_``); it gets the
call's ``*_Args`` structure and fills its out fields.  ``function_table()``
wraps each in a ctypes callback that turns any exception into a
``PJRT_Error`` (nothing escapes into C++), behind a native trampoline that
takes the GIL and sets aside a pending Python exception
(:mod:`xlac.pjrt.trampolines`), and fills every slot the plugin
does not implement with a function returning an UNIMPLEMENTED error naming
it, so no slot jax could call is NULL.
"""
from __future__ import annotations

import ctypes
import sys

from ..runtime import c_memory
from . import buffer as buffers
from . import capi, compile_options, debug_options, errors, events, handles, host_callbacks
from .buffer import Buffer
from .client import Client, Device, DeviceDescription, Memory, Topology, named_values, use_native_user_data
from .errors import PjrtError
from .executable import Executable, deserialize
from .program import read as read_program, stablehlo_version
from .trampolines import CONTEXT_SLOTS, Native, Trampolines, context_user_data

_IMPLEMENTATIONS: dict = {}


def implements(name: str):
    """Register the implementation of ``PJRT_<name>``."""
    assert name in capi.FUNCTIONS or name in capi.EXTENSION_FUNCTIONS, name

    def register(fn):
        _IMPLEMENTATIONS[name] = fn
        return fn
    return register


# -- handles ----------------------------------------------------------------------------
def _client(h) -> Client:
    return handles.lookup(h, Client, "PJRT_Client")


def _device(h) -> Device:
    return handles.lookup(h, Device, "PJRT_Device")


def _description(h) -> DeviceDescription:
    return handles.lookup(h, DeviceDescription, "PJRT_DeviceDescription")


def _memory(h) -> Memory:
    return handles.lookup(h, Memory, "PJRT_Memory")


def _buffer(h) -> Buffer:
    return handles.lookup(h, Buffer, "PJRT_Buffer")


def _executable(h) -> Executable:
    return handles.lookup(h, Executable, "PJRT_Executable")


def _topology(h) -> Topology:
    return handles.lookup(h, Topology, "PJRT_TopologyDescription")


def _string(a, field: str, strings, text: str) -> None:
    """Set out fields ``field`` and ``field_size`` to ``text`` (kept by ``strings``)."""
    address, size = strings.get(text)
    setattr(a, field, address)
    setattr(a, field + "_size", size)


def _bytes(address, size) -> bytes:
    return ctypes.string_at(address, size) if size else b""


def _options(values, count) -> dict:
    """Client options (PJRT_NamedValue array) as a dict."""
    out = {}
    for k in range(count):
        v = values[k]
        name = ctypes.string_at(v.name, v.name_size).decode()
        if v.type == capi.NV_STRING:
            out[name] = ctypes.string_at(v.string_value, v.value_size).decode()
        elif v.type == capi.NV_INT64:
            out[name] = v.int64_value
        elif v.type == capi.NV_BOOL:
            out[name] = bool(v.bool_value)
        elif v.type == capi.NV_FLOAT:
            out[name] = v.float_value
        else:
            out[name] = [v.int64_array_value[j] for j in range(v.value_size)]
    return out


# -- errors ---------------------------------------------------------------------------
@implements("Error_Destroy")
def error_destroy(a):
    errors.destroy(a.error)


@implements("Error_Message")
def error_message(a):
    a.message, a.message_size = errors.message(a.error)


@implements("Error_GetCode")
def error_get_code(a):
    a.code = errors.code(a.error)


@implements("Error_ForEachPayload")
def error_for_each_payload(a):
    errors.error_object(a.error)          # xlac's errors carry no payloads


# -- plugin ---------------------------------------------------------------------------
@implements("Plugin_Initialize")
def plugin_initialize(a):
    pass


_ATTRIBUTES = None


@implements("Plugin_Attributes")
def plugin_attributes(a):
    global _ATTRIBUTES
    if _ATTRIBUTES is None:
        values = {"xla_version": 2}
        version = stablehlo_version()
        if version:
            # jax writes programs at this StableHLO version (this process's jaxlib reads them back).
            values["stablehlo_current_version"] = version
            values["stablehlo_minimum_version"] = version
        _ATTRIBUTES = named_values(values)
        _ATTRIBUTES._count = len(values)
    a.attributes, a.num_attributes = ctypes.addressof(_ATTRIBUTES), _ATTRIBUTES._count


# -- events ---------------------------------------------------------------------------
@implements("Event_Destroy")
def event_destroy(a):
    events.destroy(a.event)


@implements("Event_IsReady")
def event_is_ready(a):
    a.is_ready = events.lookup(a.event).is_ready


def _event_error(a):
    event = events.lookup(a.event)
    if not event.is_ready:
        raise PjrtError(capi.FAILED_PRECONDITION, "PJRT_Event_Error on an event that is not ready")
    return event.error_handle()


@implements("Event_Error")
def event_error(a):
    return _event_error(a)


@implements("Event_Await")
def event_await(a):
    event = events.lookup(a.event)
    if not event.is_ready:
        # Only a caller-made event (PJRT_Event_Create) can be unready; nothing in
        # xlac will ever set it, so waiting would hang.
        raise PjrtError(capi.FAILED_PRECONDITION, "PJRT_Event_Await on an event nothing has set")
    return event.error_handle()


@implements("Event_OnReady")
def event_on_ready(a):
    events.lookup(a.event).on_ready(a.callback, a.user_arg)


@implements("Event_Create")
def event_create(a):
    a.event = events.Event(is_ready=False).handle


@implements("Event_Set")
def event_set(a):
    error = None
    if a.error_code != capi.OK:
        error = (a.error_code, _bytes(a.error_message, a.error_message_size).decode("utf-8", "replace"))
    events.lookup(a.event).set(error)


# -- client ---------------------------------------------------------------------------
@implements("Client_Create")
def client_create(a):
    a.client = Client(_options(a.create_options, a.num_options)).handle


@implements("Client_Destroy")
def client_destroy(a):
    _client(a.client).destroy()


@implements("Client_ProcessIndex")
def client_process_index(a):
    _client(a.client)
    a.process_index = 0


@implements("Client_TopologyDescription")
def client_topology(a):
    a.topology = _client(a.client).topology.handle


@implements("Client_Devices")
def client_devices(a):
    c = _client(a.client)
    a.devices, a.num_devices = ctypes.addressof(c.device_array), len(c.devices)


@implements("Client_AddressableDevices")
def client_addressable_devices(a):
    c = _client(a.client)
    a.addressable_devices, a.num_addressable_devices = ctypes.addressof(c.device_array), len(c.devices)


@implements("Client_LookupDevice")
def client_lookup_device(a):
    a.device = _client(a.client).device(a.id).handle


@implements("Client_LookupAddressableDevice")
def client_lookup_addressable_device(a):
    a.addressable_device = _client(a.client).device(a.local_hardware_id).handle


@implements("Client_AddressableMemories")
def client_addressable_memories(a):
    c = _client(a.client)
    a.addressable_memories, a.num_addressable_memories = ctypes.addressof(c.memory_array), len(c.memories)


@implements("Client_DefaultDeviceAssignment")
def client_default_device_assignment(a):
    c = _client(a.client)
    count = a.num_replicas * a.num_partitions
    if count > len(c.devices) or count > a.default_assignment_size:
        raise PjrtError(capi.INVALID_ARGUMENT, f"{a.num_replicas} replicas x {a.num_partitions} partitions need "
                                               f"{count} devices; the xlac client has {len(c.devices)} "
                                               f"(XLAC_NUM_DEVICES)")
    for k in range(count):
        a.default_assignment[k] = k


@implements("Client_Compile")
def client_compile(a):
    c = _client(a.client)
    program = a.program.contents
    code = _bytes(program.code, program.code_size)
    fmt = _bytes(program.format, program.format_size).decode()
    options = compile_options.parse(_bytes(a.compile_options, a.compile_options_size))
    try:
        debug_options.check(options.overrides)
    except debug_options.OptionError as e:
        raise PjrtError(capi.INVALID_ARGUMENT, str(e)) from None
    a.executable = Executable(c, read_program(code, fmt), options).handle


@implements("Client_BufferFromHostBuffer")
def client_buffer_from_host_buffer(a):
    c = _client(a.client)
    memory = _memory(a.memory) if a.memory else (_device(a.device) if a.device else c.devices[0]).memory
    if a.device_layout:
        _check_default_layout(a.device_layout.contents, a.num_dims, "BufferFromHostBuffer device_layout")
    strides = [a.byte_strides[k] for k in range(a.num_byte_strides)] if a.byte_strides else None
    dims = [a.dims[k] for k in range(a.num_dims)]
    a.buffer = buffers.from_host(a.data, a.type, dims, strides, memory.device, memory).handle
    a.done_with_host_buffer = events.ready()     # the data was copied: the caller may reuse it now


@implements("Client_CreateViewOfDeviceBuffer")
def client_create_view_of_device_buffer(a):
    c = _client(a.client)
    # (`memory` is the header's last field, absent from an older caller's struct)
    has_memory = a.struct_size > capi.ARGS["Client_CreateViewOfDeviceBuffer"].memory.offset
    memory = _memory(a.memory) if has_memory and a.memory else \
        (_device(a.device) if a.device else c.devices[0]).memory
    if a.stream:
        raise errors.unimplemented("CreateViewOfDeviceBuffer of a `stream` (a CPU device has none)")
    if a.layout:
        _check_default_layout(a.layout.contents, a.num_dims, "CreateViewOfDeviceBuffer layout")
    dims = [a.dims[k] for k in range(a.num_dims)]
    a.buffer = buffers.view_of(a.device_buffer_ptr or 0, a.element_type, dims, memory.device,
                               a.on_delete_callback or 0, a.on_delete_callback_arg or 0, memory).handle


def _check_default_layout(layout, rank: int, what: str) -> None:
    """xlac buffers are row-major: refuse any other device layout."""
    if layout.type == capi.LAYOUT_TILED and not layout.tiled.num_tiles:
        m2m = [layout.tiled.minor_to_major[k] for k in range(layout.tiled.minor_to_major_size)]
        if m2m == list(range(rank - 1, -1, -1)):
            return
    raise errors.unimplemented(f"{what} other than row-major (xlac buffers are row-major)")


# -- device descriptions, devices, memories ----------------------------------------------
@implements("DeviceDescription_Id")
def description_id(a):
    a.id = _description(a.device_description).id


@implements("DeviceDescription_ProcessIndex")
def description_process_index(a):
    a.process_index = _description(a.device_description).process_index


@implements("DeviceDescription_Attributes")
def description_attributes(a):
    d = _description(a.device_description)
    a.attributes, a.num_attributes = ctypes.addressof(d.attributes), 1


@implements("Device_GetDescription")
def device_get_description(a):
    a.device_description = _device(a.device).description.handle


@implements("Device_IsAddressable")
def device_is_addressable(a):
    _device(a.device)
    a.is_addressable = True


@implements("Device_LocalHardwareId")
def device_local_hardware_id(a):
    a.local_hardware_id = _device(a.device).id


@implements("Device_AddressableMemories")
def device_addressable_memories(a):
    d = _device(a.device)
    a.memories, a.num_memories = ctypes.addressof(d.memories), len(d.all_memories)


@implements("Device_DefaultMemory")
def device_default_memory(a):
    a.memory = _device(a.device).memory.handle


_NO_DELETE = capi.DELETER(lambda p: None)


@implements("Device_GetAttributes")
def device_get_attributes(a):
    d = _device(a.device).description
    a.attributes, a.num_attributes = ctypes.addressof(d.attributes), 1
    a.device_attributes = None                     # the attributes live with the device
    a.attributes_deleter = ctypes.cast(_NO_DELETE, ctypes.c_void_p).value


@implements("Device_CreateAsyncTrackingEvent")
def device_create_async_tracking_event(a):
    _device(a.device)
    a.event = None                                 # xlac does not track asynchronous work (none is)


@implements("AsyncTrackingEvent_Destroy")
def async_tracking_event_destroy(a):
    pass


@implements("Memory_Id")
def memory_id(a):
    a.id = _memory(a.memory).id


@implements("Memory_Kind_Id")
def memory_kind_id(a):
    a.kind_id = _memory(a.memory).kind_id


@implements("Memory_AddressableByDevices")
def memory_addressable_by_devices(a):
    m = _memory(a.memory)
    a.devices, a.num_devices = ctypes.addressof(m.devices), 1


# -- topology -----------------------------------------------------------------------------
@implements("TopologyDescription_Destroy")
def topology_destroy(a):
    _topology(a.topology)                          # the client's topology lives with the client


@implements("TopologyDescription_GetDeviceDescriptions")
def topology_device_descriptions(a):
    t = _topology(a.topology)
    a.descriptions, a.num_descriptions = ctypes.addressof(t.descriptions), len(t.client.devices)


@implements("TopologyDescription_Attributes")
def topology_attributes(a):
    a.attributes, a.num_attributes = ctypes.addressof(_topology(a.topology).attributes), 0


@implements("TopologyDescription_Fingerprint")
def topology_fingerprint(a):
    a.fingerprint = len(_topology(a.topology).client.devices)


@implements("TopologyDescription_GetMemorySpaceKindIds")
def topology_memory_space_kind_ids(a):
    t = _topology(a.topology)
    a.memory_space_kind_ids, a.num_memory_space_kind_ids = ctypes.addressof(t.kind_ids), len(t.kind_ids)


# -- executables --------------------------------------------------------------------------
# One object is both the PJRT_LoadedExecutable and the PJRT_Executable
# GetExecutable hands out; each holder destroys its own, so the handle lives
# until the last of them is destroyed.
@implements("Executable_Destroy")
def executable_destroy(a):
    _executable(a.executable).unref()


@implements("LoadedExecutable_Destroy")
def loaded_executable_destroy(a):
    _executable(a.executable).unref()


@implements("LoadedExecutable_GetExecutable")
def loaded_get_executable(a):
    e = _executable(a.loaded_executable)
    e.references += 1
    a.executable = e.handle


@implements("Executable_NumReplicas")
def executable_num_replicas(a):
    a.num_replicas = _executable(a.executable).options.num_replicas


@implements("Executable_NumPartitions")
def executable_num_partitions(a):
    a.num_partitions = _executable(a.executable).options.num_partitions


@implements("Executable_NumOutputs")
def executable_num_outputs(a):
    a.num_outputs = len(_executable(a.executable).outputs)


@implements("Executable_SizeOfGeneratedCodeInBytes")
def executable_code_size(a):
    a.size_in_bytes = _executable(a.executable).memory_analysis().generated_code_size_in_bytes


@implements("Executable_GetCompiledMemoryStats")
def executable_memory_stats(a):
    m = _executable(a.executable).memory_analysis()
    for field in ("generated_code_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes",
                  "alias_size_in_bytes", "temp_size_in_bytes"):
        setattr(a, field, getattr(m, field))
    for field in ("host_generated_code_size_in_bytes", "host_argument_size_in_bytes",
                  "host_output_size_in_bytes", "host_alias_size_in_bytes", "host_temp_size_in_bytes"):
        setattr(a, field, 0)
    a.peak_memory_in_bytes = m.peak_memory_in_bytes
    a.total_size_in_bytes = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes


@implements("Executable_GetCostAnalysis")
def executable_cost_analysis(a):
    values = _executable(a.executable).cost_properties()
    a.properties, a.num_properties = ctypes.addressof(values), len(values) if values[0].name else 0


@implements("Executable_OutputElementTypes")
def executable_output_types(a):
    e = _executable(a.executable)
    a.output_types, a.num_output_types = ctypes.addressof(e.c_output_types), len(e.outputs)


@implements("Executable_OutputDimensions")
def executable_output_dimensions(a):
    e = _executable(a.executable)
    a.num_outputs = len(e.outputs)
    a.dims, a.dim_sizes = ctypes.addressof(e.c_output_dims), ctypes.addressof(e.c_output_ranks)


@implements("Executable_OutputMemoryKinds")
def executable_output_memory_kinds(a):
    e = _executable(a.executable)
    a.num_outputs = len(e.outputs)
    a.memory_kinds, a.memory_kind_sizes = ctypes.addressof(e.c_output_kinds), ctypes.addressof(e.c_output_kind_sizes)


@implements("Executable_ParameterMemoryKinds")
def executable_parameter_memory_kinds(a):
    e = _executable(a.executable)
    a.num_parameters = e.num_parameters
    a.memory_kinds = ctypes.addressof(e.c_parameter_kinds)
    a.memory_kind_sizes = ctypes.addressof(e.c_parameter_kind_sizes)


_MLIR = ctypes.create_string_buffer(b"mlir")


@implements("Executable_OptimizedProgram")
def executable_optimized_program(a):
    # The program as jax gave it (StableHLO text, format "mlir"): jax reads
    # layouts, shardings and the HLO of `compiled.as_text()` from it.  First
    # call: code is NULL, tell the size; second call: copy into the caller's code.
    e = _executable(a.executable)
    program = a.program.contents
    text = e.optimized_text
    program.format, program.format_size = ctypes.addressof(_MLIR), 4
    if program.code:
        if program.code_size < len(text):
            raise PjrtError(capi.INVALID_ARGUMENT, f"OptimizedProgram: {program.code_size} bytes for a "
                                                   f"program of {len(text)}")
        ctypes.memmove(program.code, text, len(text))
    program.code_size = len(text)


_kept_bytes: dict = {}
_FREE_KEPT = capi.DELETER(lambda address: _kept_bytes.pop(address, None) and None)


def _hand_out(data: bytes) -> tuple[int, int, int]:
    """(address, size, backing handle) of a copy of ``data`` the caller frees with ``_FREE_KEPT``."""
    block = bytes(data)
    address = c_memory.address_of(block)
    _kept_bytes[address] = block
    return address, len(data), address


@implements("Executable_Serialize")
def executable_serialize(a):
    address, size, backing = _hand_out(_executable(a.executable).serialize())
    a.serialized_bytes, a.serialized_bytes_size, a.serialized_executable = address, size, backing
    a.serialized_executable_deleter = ctypes.cast(_FREE_KEPT, ctypes.c_void_p).value


@implements("Executable_DeserializeAndLoad")
def executable_deserialize_and_load(a):
    data = _bytes(a.serialized_executable, a.serialized_executable_size)
    a.loaded_executable = deserialize(_client(a.client), data).handle


@implements("LoadedExecutable_GetDeviceAssignment")
def loaded_device_assignment(a):
    address, size, backing = _hand_out(_executable(a.executable).device_assignment)
    a.serialized_bytes, a.serialized_bytes_size, a.serialized_device_assignment = address, size, backing
    a.serialized_device_assignment_deleter = ctypes.cast(_FREE_KEPT, ctypes.c_void_p).value


@implements("LoadedExecutable_AddressableDevices")
def loaded_addressable_devices(a):
    e = _executable(a.executable)
    a.addressable_devices, a.num_addressable_devices = ctypes.addressof(e.c_devices), len(e.devices)


@implements("LoadedExecutable_AddressableDeviceLogicalIds")
def loaded_logical_ids(a):
    e = _executable(a.executable)
    a.addressable_device_logical_ids = ctypes.addressof(e.c_logical_ids)
    a.num_addressable_device_logical_ids = len(e.devices)


@implements("LoadedExecutable_Delete")
def loaded_delete(a):
    _executable(a.executable).deleted = True


@implements("LoadedExecutable_IsDeleted")
def loaded_is_deleted(a):
    a.is_deleted = _executable(a.executable).deleted


#: Outputs up to this many are stored one by one; more with one memmove (its
#: casts cost about as much as four stores).
_OUTPUTS_ONE_BY_ONE = 4


@implements("LoadedExecutable_Execute")
def loaded_execute(a):
    e = _executable(a.executable)
    options = a.options
    options = options.contents if options else None
    if e.lean and a.num_devices == 1 and not a.execute_device and not (
            options and (options.num_send_ops or options.num_recv_ops)):
        outputs = e.execute_handles(a.argument_lists[0][:a.num_args])
        if outputs is not None:                      # else the general path, which reports why
            n = len(outputs)
            if n <= _OUTPUTS_ONE_BY_ONE:
                out = a.output_lists[0]
                for k in range(n):
                    out[k] = outputs[k]
            else:
                ctypes.memmove(ctypes.cast(a.output_lists[0], ctypes.c_void_p).value,
                               (ctypes.c_void_p * n)(*outputs), n * ctypes.sizeof(ctypes.c_void_p))
            done = a.device_complete_events
            if done:
                done[0] = e.device.native_fields[2]      # the ready event
            return
    if options and (options.num_send_ops or options.num_recv_ops):
        raise errors.unimplemented("send/recv callbacks in PJRT_LoadedExecutable_Execute")
    non_donatable = set()
    if options and options.non_donatable_input_indices:
        non_donatable = {options.non_donatable_input_indices[k]
                         for k in range(options.num_non_donatable_input_indices)}
    argument_lists = [[_buffer(a.argument_lists[d][k]) for k in range(a.num_args)] for d in range(a.num_devices)]
    if e.multi is not None:
        if a.execute_device:
            raise errors.unimplemented(f"running a program on {len(e.devices)} devices on one of them alone "
                                       f"(execute_device)")
        callbacks = _host_callbacks(options) if e.host_callbacks else None
        output_lists = e.execute_devices(argument_lists, non_donatable, callbacks)
    else:
        if a.num_devices != 1:
            raise PjrtError(capi.INVALID_ARGUMENT, f"{e.name} runs on one device, got argument lists for "
                                                   f"{a.num_devices}")
        device = _device(a.execute_device) if a.execute_device else None
        callbacks = _host_callbacks(options) if e.host_callbacks else None
        output_lists = [e.execute(argument_lists[0], non_donatable, device, callbacks)]
    for d, outputs in enumerate(output_lists):
        for k, out in enumerate(outputs):
            a.output_lists[d][k] = out.handle
    if a.device_complete_events:
        for d in range(len(output_lists)):
            a.device_complete_events[d] = events.ready()


# -- the shardings extension: where each device's piece of a parameter or output is ------
def _shardings(a, count_field: str, which: int) -> None:
    """Out fields of a shardings-extension call: the executable's serialized
    xla.OpSharding protos (NULL for one without shardings: jax then takes its own)."""
    e = _executable(a.executable)
    protos = (e.c_parameter_shardings, e.c_output_shardings)[which]
    if protos is None:
        a.shardings = a.sharding_sizes = None
        setattr(a, count_field, 0)
        return
    pointers, sizes, _, count = protos
    a.shardings, a.sharding_sizes = ctypes.addressof(pointers), ctypes.addressof(sizes)
    setattr(a, count_field, count)


@implements("Shardings_PJRT_Executable_ParameterShardings")
def executable_parameter_shardings(a):
    _shardings(a, "num_parameters", 0)


@implements("Shardings_PJRT_Executable_OutputShardings")
def executable_output_shardings(a):
    _shardings(a, "num_outputs", 1)


# -- the layouts extension: every array xlac holds is row-major ---------------------------
class Layout:
    """A PJRT_Layouts_MemoryLayout: the row-major layout of a rank (xlac's buffers are
    C-contiguous numpy arrays, and every executable takes and gives them so)."""

    def __init__(self, rank: int):
        self.text = "{" + ",".join(str(d) for d in range(rank - 1, -1, -1)) + "}"   # Layout::ToString
        self.handle = handles.new(self)


def _layout(h) -> Layout:
    return handles.lookup(h, Layout, "PJRT_Layouts_MemoryLayout")


def _executable_layouts(e, which: int) -> tuple:
    """(C array of layout handles, count) of ``e``'s parameters (0) or outputs (1),
    owned by the executable (made on the first call)."""
    if getattr(e, "c_layouts", None) is None:
        params = [len(s.dimensions) for s in e.module.entry.parameter_shapes()]
        outs = [len(s.dimensions) for s in e.outputs]
        e.layouts = [[Layout(r) for r in ranks] for ranks in (params, outs)]
        e.c_layouts = [c_memory.array(ctypes.c_void_p, [x.handle for x in ls]) for ls in e.layouts]
    return e.c_layouts[which], len(e.layouts[which])


@implements("Layouts_MemoryLayout_Destroy")
def layout_destroy(a):
    handles.release(_layout(a.layout).handle)


@implements("Layouts_MemoryLayout_Serialize")
def layout_serialize(a):
    address, size, backing = _hand_out(_layout(a.layout).text.encode())
    a.serialized_bytes, a.serialized_bytes_size, a.serialized_layout = address, size, backing
    a.serialized_layout_deleter = ctypes.cast(_FREE_KEPT, ctypes.c_void_p).value


@implements("Layouts_PJRT_Client_GetDefaultLayout")
def client_default_layout(a):
    _client(a.client)
    a.layout = Layout(a.num_dims).handle


@implements("Layouts_PJRT_Topology_GetDefaultLayout")
def topology_default_layout(a):
    _topology(a.topology_description)
    a.layout = Layout(a.num_dims).handle


@implements("Layouts_PJRT_Buffer_MemoryLayout")
def buffer_layout(a):
    a.layout = Layout(_buffer(a.buffer).ndim).handle


@implements("Layouts_PJRT_Executable_GetOutputLayouts")
def executable_output_layouts(a):
    array, a.num_outputs = _executable_layouts(_executable(a.executable), 1)
    a.layouts = ctypes.addressof(array)


@implements("Layouts_PJRT_Executable_GetParameterLayouts")
def executable_parameter_layouts(a):
    array, a.num_parameters = _executable_layouts(_executable(a.executable), 0)
    a.layouts = ctypes.addressof(array)


# The execute context jaxlib makes for every execution is answered in native code
# (trampolines.CONTEXT_SLOTS pairs of FFI user data); Python only reports failures.
@implements("ExecuteContext_Create")
def execute_context_create(a):
    raise MemoryError("no memory for a PJRT_ExecuteContext")


@implements("ExecuteContext_Destroy")
def execute_context_destroy(a):
    pass                                         # freed natively


# -- the FFI extension: user data of an execution (xlac runs no FFI handlers of the caller's)
_ffi_types: dict = {}


@implements("FFI_Type_Register")
def ffi_type_register(a):
    name = _bytes(a.type_name, a.type_name_size).decode()
    if a.type_id == 0:
        a.type_id = _ffi_types.setdefault(name, (1 << 62) + len(_ffi_types))
    else:
        _ffi_types.setdefault(name, a.type_id)


@implements("FFI_UserData_Add")
def ffi_user_data_add(a):
    if not a.context:
        raise PjrtError(capi.INVALID_ARGUMENT, "PJRT_FFI_UserData_Add: no execute context")
    raise PjrtError(capi.RESOURCE_EXHAUSTED, f"PJRT_FFI_UserData_Add: an execute context holds at most "
                                             f"{CONTEXT_SLOTS} user data")


@implements("FFI_Register_Handler")
def ffi_register_handler(a):
    target = _bytes(a.target_name, a.target_name_size).decode()
    raise errors.unimplemented(f"FFI handlers of the caller's (target {target}): xlac compiles custom calls "
                               f"itself; register a Python or C target with xlac.register_custom_call")


def _host_callbacks(options) -> list | None:
    """The Python functions of jax's host callbacks an execution's options carry."""
    if options is None or options.struct_size <= capi.ExecuteOptions.context.offset or not options.context:
        return None
    address = context_user_data(options.context).get(host_callbacks.FFI_LOADED_HOST_CALLBACKS)
    return host_callbacks.from_user_data(address) if address else None


# -- buffers ------------------------------------------------------------------------------
@implements("Buffer_Destroy")
def buffer_destroy(a):
    b = _buffer(a.buffer)
    b.delete()
    handles.release(b.handle)


@implements("Buffer_ElementType")
def buffer_element_type(a):
    a.type = _buffer(a.buffer).type_code


@implements("Buffer_Dimensions")
def buffer_dimensions(a):
    b = _buffer(a.buffer)
    a.dims, a.num_dims = ctypes.addressof(b.dims), b.ndim


@implements("Buffer_UnpaddedDimensions")
def buffer_unpadded_dimensions(a):
    b = _buffer(a.buffer)
    a.unpadded_dims, a.num_dims = ctypes.addressof(b.dims), b.ndim


@implements("Buffer_DynamicDimensionIndices")
def buffer_dynamic_dimension_indices(a):
    _buffer(a.buffer)
    a.dynamic_dim_indices, a.num_dynamic_dims = None, 0


@implements("Buffer_GetMemoryLayout")
def buffer_memory_layout(a):
    b = _buffer(a.buffer)
    layout = a.layout
    layout.struct_size = ctypes.sizeof(capi.MemoryLayout)
    layout.type = capi.LAYOUT_TILED
    layout.tiled.struct_size = ctypes.sizeof(capi.MemoryLayout_Tiled)
    layout.tiled.minor_to_major = ctypes.cast(b.minor_to_major, ctypes.POINTER(ctypes.c_int64))
    layout.tiled.minor_to_major_size = b.ndim
    layout.tiled.num_tiles = 0


@implements("Buffer_OnDeviceSizeInBytes")
def buffer_size(a):
    a.on_device_size_in_bytes = _buffer(a.buffer).data("PJRT_Buffer_OnDeviceSizeInBytes").nbytes


@implements("Buffer_Device")
def buffer_device(a):
    a.device = _buffer(a.buffer).device.handle


@implements("Buffer_Memory")
def buffer_memory(a):
    a.memory = _buffer(a.buffer).memory.handle


@implements("Buffer_Delete")
def buffer_delete(a):
    _buffer(a.buffer).delete()


@implements("Buffer_IsDeleted")
def buffer_is_deleted(a):
    a.is_deleted = _buffer(a.buffer).deleted


@implements("Buffer_CopyToDevice")
def buffer_copy_to_device(a):
    b = _buffer(a.buffer)
    # Buffers are never written in place, so the copy may share the array.
    a.dst_buffer = Buffer(b.data("PJRT_Buffer_CopyToDevice"), _device(a.dst_device)).handle


@implements("Buffer_CopyToMemory")
def buffer_copy_to_memory(a):
    b = _buffer(a.buffer)
    memory = _memory(a.dst_memory)
    a.dst_buffer = Buffer(b.data("PJRT_Buffer_CopyToMemory"), memory.device, memory).handle


@implements("Buffer_ToHostBuffer")
def buffer_to_host(a):
    b = _buffer(a.src)
    layout = a.host_layout.contents if a.host_layout else None
    if not a.dst:
        a.dst_size = b.data("PJRT_Buffer_ToHostBuffer").nbytes
        return
    buffers.to_host(b, a.dst, a.dst_size, layout)
    a.event = events.ready()


@implements("Buffer_CopyRawToHost")
def buffer_copy_raw_to_host(a):
    array = _buffer(a.buffer).data("PJRT_Buffer_CopyRawToHost")
    if a.offset < 0 or a.transfer_size < 0 or a.offset + a.transfer_size > array.nbytes:
        raise PjrtError(capi.INVALID_ARGUMENT, f"CopyRawToHost: bytes [{a.offset}, {a.offset + a.transfer_size})"
                                               f" of a buffer of {array.nbytes}")
    ctypes.memmove(a.dst, array.ctypes.data + a.offset, a.transfer_size)
    a.event = events.ready()


@implements("Buffer_IsOnCpu")
def buffer_is_on_cpu(a):
    _buffer(a.buffer)
    a.is_on_cpu = True


@implements("Buffer_ReadyEvent")
def buffer_ready_event(a):
    _buffer(a.buffer)
    a.event = events.ready()


@implements("Buffer_UnsafePointer")
def buffer_unsafe_pointer(a):
    a.buffer_pointer = _buffer(a.buffer).address("PJRT_Buffer_UnsafePointer")


@implements("Buffer_OpaqueDeviceMemoryDataPointer")
def buffer_opaque_pointer(a):
    a.device_memory_ptr = _buffer(a.buffer).address("PJRT_Buffer_OpaqueDeviceMemoryDataPointer")


@implements("Buffer_IncreaseExternalReferenceCount")
def buffer_increase_references(a):
    _buffer(a.buffer).add_reference(1)


@implements("Buffer_DecreaseExternalReferenceCount")
def buffer_decrease_references(a):
    _buffer(a.buffer).add_reference(-1)


# -- the table ------------------------------------------------------------------------------
def _entry(name: str, fn):
    """The C callback of PJRT_<name>: ``fn`` on the Args, exceptions as PJRT_Error."""
    args_type = capi.ARGS[name]

    def call(address):
        try:
            release_destroyed()
            return fn(args_type.from_address(address))
        except BaseException as exc:     # noqa: BLE001 - nothing may escape into C++
            return errors.from_exception(exc, "PJRT_" + name)

    def call_void(address):
        try:
            fn(args_type.from_address(address))
        except BaseException as exc:     # noqa: BLE001
            print(f"xlac PJRT plugin: PJRT_{name}: {errors.message_of(exc)}", file=sys.stderr)

    if name in capi.VOID_FUNCTIONS:
        return capi.VOID_ENTRY(call_void)
    return capi.ENTRY(call)


def _unimplemented(name: str):
    def call(address):
        try:
            return errors.from_exception(errors.unimplemented("PJRT_" + name))
        except BaseException:            # noqa: BLE001 - out of memory making the error
            return None
    return capi.ENTRY(call)


_TABLE = None
_TRAMPOLINES = None            # the native entries and the ctypes callbacks behind them
_FFI = None                    # the FFI extension, first in the table's chain
_SHARDINGS = None              # the shardings extension, after it
_LAYOUTS = None                # the layouts extension, last


def _native(name: str, handle: str, tag: int = 0, copies: dict | None = None, constants: dict | None = None,
            callback: tuple | None = None, destroy: bool = False, null: bool = False,
            context: tuple | None = None) -> Native:
    """PJRT_<name>'s native answer (:class:`trampolines.Native`), by field names of
    its arguments: ``copies`` {out field: block field index}, ``constants`` {out
    field: value}, ``callback`` (function field, user argument field), ``destroy``,
    ``null`` (see :class:`trampolines.Native`)."""
    args = capi.ARGS[name]

    def at(field):
        return getattr(args, field).offset

    def bits(field):
        return 8 * getattr(args, field).size
    return Native(at(handle), tag,
                  tuple((k, at(f), bits(f)) for f, k in (copies or {}).items()),
                  tuple((at(f), bits(f), int(v)) for f, v in (constants or {}).items()),
                  (at(callback[0]), at(callback[1])) if callback else None, destroy, null,
                  (context[0], *map(at, context[1:])) if context else None)


_EXE, _BUF, _MEM, _READY = handles.EXECUTABLE_TAG, handles.BUFFER_TAG, handles.MEMORY_TAG, handles.READY_EVENT_TAG
#: The calls jax makes around every execution, answered in native code from the
#: handles' blocks (see :mod:`xlac.pjrt.trampolines`): the Python implementations
#: above answer the same for any handle the native path passes on.  A buffer
#: destroyed there waits on the destroyed list until jax next calls a function
#: implemented in Python (an execution, a transfer: :func:`release_destroyed`).
NATIVE = {
    "Executable_NumReplicas": dict(handle="executable", tag=_EXE, copies={"num_replicas": 0}),
    "Executable_NumPartitions": dict(handle="executable", tag=_EXE, copies={"num_partitions": 1}),
    "Executable_NumOutputs": dict(handle="executable", tag=_EXE, copies={"num_outputs": 2}),
    "Buffer_Device": dict(handle="buffer", tag=_BUF, copies={"device": 0}),
    "Buffer_Memory": dict(handle="buffer", tag=_BUF, copies={"memory": 1}),
    "Buffer_Destroy": dict(handle="buffer", tag=_BUF, destroy=True),
    "Buffer_ReadyEvent": dict(handle="buffer", tag=_BUF, copies={"event": 2}),
    "Buffer_IsDeleted": dict(handle="buffer", tag=_BUF, constants={"is_deleted": 0}),   # deleted: another tag
    "Error_Destroy": dict(handle="error", tag=0, null=True),
    "Memory_Kind": dict(handle="memory", tag=_MEM, copies={"kind": 0, "kind_size": 1}),
    "Event_Destroy": dict(handle="event", tag=_READY),
    "Event_Error": dict(handle="event", tag=_READY),
    "Event_Await": dict(handle="event", tag=_READY),
    "Event_IsReady": dict(handle="event", tag=_READY, constants={"is_ready": 1}),
    "Event_OnReady": dict(handle="event", tag=_READY, callback=("callback", "user_arg")),
    "ExecuteContext_Create": dict(handle="context", context=("create", "context")),
    "ExecuteContext_Destroy": dict(handle="context", context=("destroy", "context")),
    "FFI_UserData_Add": dict(handle="context", context=("add", "context", "type_id", "data")),
}


def release_destroyed() -> None:
    """Release the buffers destroyed in native code since the last call (a step
    of a training loop destroys its hundreds of outputs: one pass over them)."""
    if _TRAMPOLINES is None:
        return
    head = _TRAMPOLINES.take_destroyed()
    if head:
        handles.release_buffers(head, Buffer)


def function_table() -> capi.Api:
    """The PJRT_Api structure (made once; lives as long as the process).  Its
    slots are native trampolines (:mod:`xlac.pjrt.trampolines`) calling the
    ctypes callbacks of the implementations."""
    global _TABLE, _TRAMPOLINES, _SHARDINGS, _LAYOUTS, _FFI
    if _TABLE is None:
        names = list(capi.FUNCTIONS) + list(capi.EXTENSION_FUNCTIONS)
        callbacks = [_entry(name, _IMPLEMENTATIONS[name]) if name in _IMPLEMENTATIONS else _unimplemented(name)
                     for name in names]
        void = {k for k, name in enumerate(names) if name in capi.VOID_FUNCTIONS}
        native = {k: _native(name, **NATIVE[name]) for k, name in enumerate(names) if name in NATIVE}
        skippable = {k for k, name in enumerate(names) if name.endswith("_Destroy")}
        _TRAMPOLINES = Trampolines(callbacks, void, native, skippable)
        use_native_user_data(_TRAMPOLINES.memory_get_user_data)
        address = dict(zip(names, _TRAMPOLINES.addresses))
        table = capi.Api()
        table.struct_size = ctypes.sizeof(capi.Api)
        table.pjrt_api_version = capi.Api_Version(ctypes.sizeof(capi.Api_Version), None, capi.MAJOR, capi.MINOR)
        for name in capi.FUNCTIONS:
            setattr(table, name, address[name])
        # jax asks a multi-device executable for its parameter and output
        # shardings through this extension (without it jaxlib looks for them in
        # the optimized program's HLO module, spmd_output_sharding, which has none).
        # Executable layouts through this one: without it jaxlib reads them from the
        # optimized program, which it converts from StableHLO (~4 ms a compile).
        _LAYOUTS = capi.LayoutsExtension(
            base=capi.ExtensionBase(ctypes.sizeof(capi.LayoutsExtension), capi.EXTENSION_LAYOUTS, None),
            **{name: address[name] for name in capi.EXTENSION_FUNCTIONS if name.startswith("Layouts_")})
        _SHARDINGS = capi.ShardingsExtension(
            base=capi.ExtensionBase(ctypes.sizeof(capi.ShardingsExtension), capi.EXTENSION_SHARDINGS,
                                    ctypes.addressof(_LAYOUTS)),
            ParameterShardings=address["Shardings_PJRT_Executable_ParameterShardings"],
            OutputShardings=address["Shardings_PJRT_Executable_OutputShardings"])
        # jaxlib hands each execution its host callbacks as FFI user data of the
        # execute context, through this one.
        _FFI = capi.FfiExtension(
            base=capi.ExtensionBase(ctypes.sizeof(capi.FfiExtension), capi.EXTENSION_FFI,
                                    ctypes.addressof(_SHARDINGS)),
            type_register=address["FFI_Type_Register"], user_data_add=address["FFI_UserData_Add"],
            register_handler=address["FFI_Register_Handler"])
        table.extension_start = ctypes.addressof(_FFI)
        _TABLE = table
    return _TABLE


_CAPSULE_NAME = ctypes.create_string_buffer(b"pjrt_c_api")


def capsule():
    """A PyCapsule named ``pjrt_c_api`` holding the address of the PJRT_Api
    table: what ``jax._src.xla_bridge.register_plugin(c_api=...)`` takes."""
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.addressof(function_table()), ctypes.cast(_CAPSULE_NAME, ctypes.c_char_p), None)


# -- string out-fields ------------------------------------------------------------------
def _topology_client(h) -> Client:
    return _topology(h).client


def _string_getter(handle: str, owner, field: str, attribute: str):
    """``PJRT_*`` that sets out field ``field`` to ``attribute`` of the object the handle
    ``a.<handle>`` names (``owner`` looks it up; it keeps the strings alive)."""
    def get(a):
        obj = owner(getattr(a, handle))
        _string(a, field, obj.strings, getattr(obj, attribute))
    return get


#: function: (handle field, owner lookup, out field, attribute)
_STRING_GETTERS = {
    "Client_PlatformName": ("client", _client, "platform_name", "platform_name"),
    "Client_PlatformVersion": ("client", _client, "platform_version", "platform_version"),
    "DeviceDescription_Kind": ("device_description", _description, "device_kind", "kind"),
    "DeviceDescription_DebugString": ("device_description", _description, "debug_string", "debug_string"),
    "DeviceDescription_ToString": ("device_description", _description, "to_string", "to_string"),
    "Memory_Kind": ("memory", _memory, "kind", "kind"),
    "Memory_DebugString": ("memory", _memory, "debug_string", "debug_string"),
    "Memory_ToString": ("memory", _memory, "to_string", "debug_string"),
    "TopologyDescription_PlatformName": ("topology", _topology_client, "platform_name", "platform_name"),
    "TopologyDescription_PlatformVersion": ("topology", _topology_client, "platform_version", "platform_version"),
    "Executable_Name": ("executable", _executable, "executable_name", "name"),
    "Executable_Fingerprint": ("executable", _executable, "executable_fingerprint", "fingerprint"),
    "LoadedExecutable_Fingerprint": ("executable", _executable, "executable_fingerprint", "fingerprint"),
}
for _name, _spec in _STRING_GETTERS.items():
    implements(_name)(_string_getter(*_spec))
