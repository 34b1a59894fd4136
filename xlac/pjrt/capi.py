"""The PJRT C API's data layouts, as ctypes structures.

Written from openxla/xla's ``xla/pjrt/c/pjrt_c_api.h`` (API version
``MAJOR.MINOR`` below, the one jaxlib 0.10.2 was built with).  Only what xlac's
plugin reads or writes is declared.  Conventions of the header kept here:

* every function takes one pointer to an ``*_Args`` structure and returns a
  ``PJRT_Error*`` (NULL: success); ``PJRT_Error_Destroy`` and
  ``PJRT_Error_Message`` return nothing;
* every ``*_Args`` structure starts with ``struct_size`` and
  ``extension_start``; the caller sets ``struct_size`` to the size it knows, so
  a caller built against a newer header may pass a larger structure: the
  plugin reads and writes only the fields declared here, which every caller
  of this major version has;
* handles (``PJRT_Client*``, ``PJRT_Buffer*`` ...) are opaque to the caller,
  except ``PJRT_Error`` and ``PJRT_Memory``, whose first field is a pointer to
  a function table the caller may use (see :mod:`xlac.pjrt.errors`).
"""
from __future__ import annotations

import ctypes
from ctypes import (POINTER, Structure, Union, c_bool, c_char_p, c_float, c_int, c_int64, c_size_t, c_ssize_t,
                    c_uint64, c_void_p)

MAJOR = 0
MINOR = 112

# The function table's slots, in the header's order (PJRT_Api after its
# version field).  The order is the ABI: never sort or edit this list except
# by appending what a newer header appends.
FUNCTIONS = """
Error_Destroy Error_Message Error_GetCode
Plugin_Initialize Plugin_Attributes
Event_Destroy Event_IsReady Event_Error Event_Await Event_OnReady
Client_Create Client_Destroy Client_PlatformName Client_ProcessIndex Client_PlatformVersion Client_Devices
Client_AddressableDevices Client_LookupDevice Client_LookupAddressableDevice Client_AddressableMemories
Client_Compile Client_DefaultDeviceAssignment Client_BufferFromHostBuffer
DeviceDescription_Id DeviceDescription_ProcessIndex DeviceDescription_Attributes DeviceDescription_Kind
DeviceDescription_DebugString DeviceDescription_ToString
Device_GetDescription Device_IsAddressable Device_LocalHardwareId Device_AddressableMemories
Device_DefaultMemory Device_MemoryStats
Memory_Id Memory_Kind Memory_DebugString Memory_ToString Memory_AddressableByDevices
Executable_Destroy Executable_Name Executable_NumReplicas Executable_NumPartitions Executable_NumOutputs
Executable_SizeOfGeneratedCodeInBytes Executable_GetCostAnalysis Executable_OutputMemoryKinds
Executable_OptimizedProgram Executable_Serialize
LoadedExecutable_Destroy LoadedExecutable_GetExecutable LoadedExecutable_AddressableDevices
LoadedExecutable_Delete LoadedExecutable_IsDeleted LoadedExecutable_Execute Executable_DeserializeAndLoad
LoadedExecutable_Fingerprint
Buffer_Destroy Buffer_ElementType Buffer_Dimensions Buffer_UnpaddedDimensions Buffer_DynamicDimensionIndices
Buffer_GetMemoryLayout Buffer_OnDeviceSizeInBytes Buffer_Device Buffer_Memory Buffer_Delete Buffer_IsDeleted
Buffer_CopyToDevice Buffer_ToHostBuffer Buffer_IsOnCpu Buffer_ReadyEvent Buffer_UnsafePointer
Buffer_IncreaseExternalReferenceCount Buffer_DecreaseExternalReferenceCount
Buffer_OpaqueDeviceMemoryDataPointer
CopyToDeviceStream_Destroy CopyToDeviceStream_AddChunk CopyToDeviceStream_TotalBytes
CopyToDeviceStream_GranuleSize CopyToDeviceStream_CurrentBytes
TopologyDescription_Create TopologyDescription_Destroy TopologyDescription_PlatformName
TopologyDescription_PlatformVersion TopologyDescription_GetDeviceDescriptions TopologyDescription_Serialize
TopologyDescription_Attributes
Compile
Executable_OutputElementTypes Executable_OutputDimensions
Buffer_CopyToMemory
Client_CreateViewOfDeviceBuffer
Executable_Fingerprint
Client_TopologyDescription
Executable_GetCompiledMemoryStats
Memory_Kind_Id
ExecuteContext_Create ExecuteContext_Destroy Buffer_CopyRawToHost
AsyncHostToDeviceTransferManager_Destroy AsyncHostToDeviceTransferManager_TransferData
Client_CreateBuffersForAsyncHostToDevice AsyncHostToDeviceTransferManager_RetrieveBuffer
AsyncHostToDeviceTransferManager_Device AsyncHostToDeviceTransferManager_BufferCount
AsyncHostToDeviceTransferManager_BufferSize AsyncHostToDeviceTransferManager_SetBufferError
AsyncHostToDeviceTransferManager_AddMetadata Client_DmaMap Client_DmaUnmap
Client_CreateUninitializedBuffer Client_UpdateGlobalProcessInfo TopologyDescription_Deserialize
Client_CreateAliasBuffer Client_FulfillAliasBuffer LoadedExecutable_GetDeviceAssignment
Client_CreateErrorBuffer AsyncHostToDeviceTransferManager_TransferLiteral Buffer_CopyRawToHostFuture
Device_PoisonExecution Device_CreateAsyncTrackingEvent AsyncTrackingEvent_Destroy
Executable_GetCompileOptions Buffer_DonateWithControlDependency Event_Create Event_Set Device_GetAttributes
Client_Load LoadedExecutable_AddressableDeviceLogicalIds Buffer_Bitcast
Error_ForEachPayload TopologyDescription_Fingerprint Executable_ParameterMemoryKinds Device_ClearMemoryStats
TopologyDescription_MakeCanonicalShapeForMemorySpace TopologyDescription_GetMemorySpaceKindIds
""".split()

# The two functions that return nothing; every other returns PJRT_Error*.
VOID_FUNCTIONS = ("Error_Destroy", "Error_Message")

# PJRT_Error_Code
OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, NOT_FOUND = 0, 1, 2, 3, 5
RESOURCE_EXHAUSTED, FAILED_PRECONDITION, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL = 8, 9, 11, 12, 13

# PJRT_Buffer_Type, in the header's order: the index is the enum value.
BUFFER_TYPES = """INVALID PRED S8 S16 S32 S64 U8 U16 U32 U64 F16 F32 F64 BF16 C64 C128
F8E5M2 F8E4M3FN F8E4M3B11FNUZ F8E5M2FNUZ F8E4M3FNUZ S4 U4 TOKEN S2 U2 F8E4M3 F8E3M4 F8E8M0FNU
F4E2M1FN S1 U1""".split()

# PJRT_NamedValue_Type
NV_STRING, NV_INT64, NV_INT64_LIST, NV_FLOAT, NV_BOOL = range(5)

# PJRT_Buffer_MemoryLayout_Type
LAYOUT_TILED, LAYOUT_STRIDES = 0, 1

_p = c_void_p           # any handle or pointer the plugin does not look into


class Api_Version(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", _p),
                ("major_version", c_int), ("minor_version", c_int)]


Api = type("Api", (Structure,), {"_fields_": [("struct_size", c_size_t), ("extension_start", _p),
                                              ("pjrt_api_version", Api_Version)]
                                 + [(name, _p) for name in FUNCTIONS]})


class ErrorFunctionTable(Structure):
    _fields_ = [("struct_size", c_size_t), ("instance_size", c_size_t), ("extension_start", _p),
                ("destroy", _p), ("message", _p), ("get_code", _p), ("for_each_payload", _p)]


class MemoryFunctionTable(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", _p), ("instance_struct_size", c_size_t),
                ("get_user_data", _p), ("set_user_data", _p)]


class _NamedValueUnion(Union):
    _fields_ = [("string_value", c_char_p), ("int64_value", c_int64), ("int64_array_value", POINTER(c_int64)),
                ("float_value", c_float), ("bool_value", c_bool)]


class NamedValue(Structure):
    _anonymous_ = ("u",)
    _fields_ = [("struct_size", c_size_t), ("extension_start", _p), ("name", c_char_p), ("name_size", c_size_t),
                ("type", c_int), ("u", _NamedValueUnion), ("value_size", c_size_t)]


class Program(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", _p), ("code", _p), ("code_size", c_size_t),
                ("format", _p), ("format_size", c_size_t)]


class MemoryLayout_Tiled(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", _p), ("minor_to_major", POINTER(c_int64)),
                ("minor_to_major_size", c_size_t), ("tile_dims", POINTER(c_int64)),
                ("tile_dim_sizes", POINTER(c_size_t)), ("num_tiles", c_size_t)]


class MemoryLayout_Strides(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", _p), ("byte_strides", POINTER(c_int64)),
                ("num_byte_strides", c_size_t)]


class _LayoutUnion(Union):
    _fields_ = [("tiled", MemoryLayout_Tiled), ("strides", MemoryLayout_Strides)]


class MemoryLayout(Structure):
    _anonymous_ = ("u",)
    _fields_ = [("struct_size", c_size_t), ("extension_start", _p), ("u", _LayoutUnion), ("type", c_int)]


class ExecuteOptions(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", _p), ("send_callbacks", _p),
                ("recv_callbacks", _p), ("num_send_ops", c_size_t), ("num_recv_ops", c_size_t),
                ("launch_id", c_int), ("non_donatable_input_indices", POINTER(c_int64)),
                ("num_non_donatable_input_indices", c_size_t), ("context", _p)]


class LogicalDeviceIds(Structure):
    _fields_ = [("replica", c_int), ("partition", c_int)]


def _args(name: str, *fields) -> type:
    """An ``PJRT_<name>_Args`` structure: the common head, then ``fields``."""
    return type(name + "_Args", (Structure,),
                {"_fields_": [("struct_size", c_size_t), ("extension_start", _p), *fields]})


# Arguments of each function the plugin implements, by the function's name
# (without the PJRT_ prefix).  Field names are the header's.
ARGS = {
    "Error_Destroy": _args("Error_Destroy", ("error", _p)),
    "Error_Message": _args("Error_Message", ("error", _p), ("message", _p), ("message_size", c_size_t)),
    "Error_GetCode": _args("Error_GetCode", ("error", _p), ("code", c_int)),
    "Error_ForEachPayload": _args("Error_ForEachPayload", ("error", _p), ("visitor", _p), ("user_arg", _p)),
    "Plugin_Initialize": _args("Plugin_Initialize"),
    "Plugin_Attributes": _args("Plugin_Attributes", ("attributes", _p), ("num_attributes", c_size_t)),
    "Event_Destroy": _args("Event_Destroy", ("event", _p)),
    "Event_IsReady": _args("Event_IsReady", ("event", _p), ("is_ready", c_bool)),
    "Event_Error": _args("Event_Error", ("event", _p)),
    "Event_Await": _args("Event_Await", ("event", _p)),
    "Event_OnReady": _args("Event_OnReady", ("event", _p), ("callback", _p), ("user_arg", _p)),
    "Event_Create": _args("Event_Create", ("event", _p)),
    "Event_Set": _args("Event_Set", ("event", _p), ("error_code", c_int), ("error_message", _p),
                       ("error_message_size", c_size_t)),
    "Client_Create": _args("Client_Create", ("create_options", POINTER(NamedValue)), ("num_options", c_size_t),
                           ("kv_get_callback", _p), ("kv_get_user_arg", _p), ("kv_put_callback", _p),
                           ("kv_put_user_arg", _p), ("client", _p)),
    "Client_Destroy": _args("Client_Destroy", ("client", _p)),
    "Client_PlatformName": _args("Client_PlatformName", ("client", _p), ("platform_name", _p),
                                 ("platform_name_size", c_size_t)),
    "Client_ProcessIndex": _args("Client_ProcessIndex", ("client", _p), ("process_index", c_int)),
    "Client_PlatformVersion": _args("Client_PlatformVersion", ("client", _p), ("platform_version", _p),
                                    ("platform_version_size", c_size_t)),
    "Client_TopologyDescription": _args("Client_TopologyDescription", ("client", _p), ("topology", _p)),
    "Client_Devices": _args("Client_Devices", ("client", _p), ("devices", _p), ("num_devices", c_size_t)),
    "Client_AddressableDevices": _args("Client_AddressableDevices", ("client", _p), ("addressable_devices", _p),
                                       ("num_addressable_devices", c_size_t)),
    "Client_LookupDevice": _args("Client_LookupDevice", ("client", _p), ("id", c_int), ("device", _p)),
    "Client_LookupAddressableDevice": _args("Client_LookupAddressableDevice", ("client", _p),
                                            ("local_hardware_id", c_int), ("addressable_device", _p)),
    "Client_AddressableMemories": _args("Client_AddressableMemories", ("client", _p),
                                        ("addressable_memories", _p), ("num_addressable_memories", c_size_t)),
    "Client_Compile": _args("Client_Compile", ("client", _p), ("program", POINTER(Program)),
                            ("compile_options", _p), ("compile_options_size", c_size_t), ("executable", _p)),
    "Client_DefaultDeviceAssignment": _args("Client_DefaultDeviceAssignment", ("client", _p),
                                            ("num_replicas", c_int), ("num_partitions", c_int),
                                            ("default_assignment_size", c_size_t),
                                            ("default_assignment", POINTER(c_int))),
    "Client_BufferFromHostBuffer": _args("Client_BufferFromHostBuffer", ("client", _p), ("data", _p),
                                         ("type", c_int), ("dims", POINTER(c_int64)), ("num_dims", c_size_t),
                                         ("byte_strides", POINTER(c_int64)), ("num_byte_strides", c_size_t),
                                         ("host_buffer_semantics", c_int), ("device", _p), ("memory", _p),
                                         ("device_layout", POINTER(MemoryLayout)),
                                         ("done_with_host_buffer", _p), ("buffer", _p)),
    "Client_CreateViewOfDeviceBuffer": _args("Client_CreateViewOfDeviceBuffer", ("client", _p),
                                             ("device_buffer_ptr", _p), ("dims", POINTER(c_int64)),
                                             ("num_dims", c_size_t), ("element_type", c_int),
                                             ("layout", POINTER(MemoryLayout)), ("device", _p),
                                             ("on_delete_callback", _p), ("on_delete_callback_arg", _p),
                                             ("stream", c_ssize_t), ("buffer", _p), ("memory", _p)),
    "DeviceDescription_Id": _args("DeviceDescription_Id", ("device_description", _p), ("id", c_int)),
    "DeviceDescription_ProcessIndex": _args("DeviceDescription_ProcessIndex", ("device_description", _p),
                                            ("process_index", c_int)),
    "DeviceDescription_Attributes": _args("DeviceDescription_Attributes", ("device_description", _p),
                                          ("num_attributes", c_size_t), ("attributes", _p)),
    "DeviceDescription_Kind": _args("DeviceDescription_Kind", ("device_description", _p), ("device_kind", _p),
                                    ("device_kind_size", c_size_t)),
    "DeviceDescription_DebugString": _args("DeviceDescription_DebugString", ("device_description", _p),
                                           ("debug_string", _p), ("debug_string_size", c_size_t)),
    "DeviceDescription_ToString": _args("DeviceDescription_ToString", ("device_description", _p),
                                        ("to_string", _p), ("to_string_size", c_size_t)),
    "Device_GetDescription": _args("Device_GetDescription", ("device", _p), ("device_description", _p)),
    "Device_IsAddressable": _args("Device_IsAddressable", ("device", _p), ("is_addressable", c_bool)),
    "Device_LocalHardwareId": _args("Device_LocalHardwareId", ("device", _p), ("local_hardware_id", c_int)),
    "Device_AddressableMemories": _args("Device_AddressableMemories", ("device", _p), ("memories", _p),
                                        ("num_memories", c_size_t)),
    "Device_DefaultMemory": _args("Device_DefaultMemory", ("device", _p), ("memory", _p)),
    "Device_GetAttributes": _args("Device_GetAttributes", ("device", _p), ("attributes", _p),
                                  ("num_attributes", c_size_t), ("device_attributes", _p),
                                  ("attributes_deleter", _p)),
    "Device_CreateAsyncTrackingEvent": _args("Device_CreateAsyncTrackingEvent", ("device", _p),
                                             ("description", _p), ("description_size", c_size_t),
                                             ("event", _p)),
    "Memory_Id": _args("Memory_Id", ("memory", _p), ("id", c_int)),
    "Memory_Kind": _args("Memory_Kind", ("memory", _p), ("kind", _p), ("kind_size", c_size_t)),
    "Memory_Kind_Id": _args("Memory_Kind_Id", ("memory", _p), ("kind_id", c_int)),
    "Memory_DebugString": _args("Memory_DebugString", ("memory", _p), ("debug_string", _p),
                                ("debug_string_size", c_size_t)),
    "Memory_ToString": _args("Memory_ToString", ("memory", _p), ("to_string", _p), ("to_string_size", c_size_t)),
    "Memory_AddressableByDevices": _args("Memory_AddressableByDevices", ("memory", _p), ("devices", _p),
                                         ("num_devices", c_size_t)),
    "Executable_Destroy": _args("Executable_Destroy", ("executable", _p)),
    "Executable_Name": _args("Executable_Name", ("executable", _p), ("executable_name", _p),
                             ("executable_name_size", c_size_t)),
    "Executable_NumReplicas": _args("Executable_NumReplicas", ("executable", _p), ("num_replicas", c_size_t)),
    "Executable_NumPartitions": _args("Executable_NumPartitions", ("executable", _p),
                                      ("num_partitions", c_size_t)),
    "Executable_NumOutputs": _args("Executable_NumOutputs", ("executable", _p), ("num_outputs", c_size_t)),
    "Executable_SizeOfGeneratedCodeInBytes": _args("Executable_SizeOfGeneratedCodeInBytes", ("executable", _p),
                                                   ("size_in_bytes", c_int64)),
    "Executable_Fingerprint": _args("Executable_Fingerprint", ("executable", _p),
                                    ("executable_fingerprint", _p), ("executable_fingerprint_size", c_size_t)),
    "Executable_GetCostAnalysis": _args("Executable_GetCostAnalysis", ("executable", _p),
                                        ("num_properties", c_size_t), ("properties", _p)),
    "Executable_OutputElementTypes": _args("Executable_OutputElementTypes", ("executable", _p),
                                           ("output_types", _p), ("num_output_types", c_size_t)),
    "Executable_OutputDimensions": _args("Executable_OutputDimensions", ("executable", _p),
                                         ("num_outputs", c_size_t), ("dims", _p), ("dim_sizes", _p)),
    "Executable_OutputMemoryKinds": _args("Executable_OutputMemoryKinds", ("executable", _p),
                                          ("num_outputs", c_size_t), ("memory_kinds", _p),
                                          ("memory_kind_sizes", _p)),
    "Executable_ParameterMemoryKinds": _args("Executable_ParameterMemoryKinds", ("executable", _p),
                                             ("num_parameters", c_size_t), ("memory_kinds", _p),
                                             ("memory_kind_sizes", _p)),
    "Executable_OptimizedProgram": _args("Executable_OptimizedProgram", ("executable", _p),
                                         ("program", POINTER(Program))),
    "Executable_GetCompiledMemoryStats": _args(
        "Executable_GetCompiledMemoryStats", ("executable", _p),
        *[(f, c_int64) for f in ("generated_code_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes",
                                 "alias_size_in_bytes", "temp_size_in_bytes", "host_generated_code_size_in_bytes",
                                 "host_argument_size_in_bytes", "host_output_size_in_bytes",
                                 "host_alias_size_in_bytes", "host_temp_size_in_bytes", "peak_memory_in_bytes",
                                 "total_size_in_bytes")]),
    "LoadedExecutable_Destroy": _args("LoadedExecutable_Destroy", ("executable", _p)),
    "LoadedExecutable_GetExecutable": _args("LoadedExecutable_GetExecutable", ("loaded_executable", _p),
                                            ("executable", _p)),
    "LoadedExecutable_AddressableDevices": _args("LoadedExecutable_AddressableDevices", ("executable", _p),
                                                 ("addressable_devices", _p),
                                                 ("num_addressable_devices", c_size_t)),
    "LoadedExecutable_AddressableDeviceLogicalIds": _args(
        "LoadedExecutable_AddressableDeviceLogicalIds", ("executable", _p),
        ("addressable_device_logical_ids", _p), ("num_addressable_device_logical_ids", c_size_t)),
    "LoadedExecutable_GetDeviceAssignment": _args(
        "LoadedExecutable_GetDeviceAssignment", ("executable", _p), ("serialized_bytes", _p),
        ("serialized_bytes_size", c_size_t), ("serialized_device_assignment", _p),
        ("serialized_device_assignment_deleter", _p)),
    "LoadedExecutable_Delete": _args("LoadedExecutable_Delete", ("executable", _p)),
    "LoadedExecutable_IsDeleted": _args("LoadedExecutable_IsDeleted", ("executable", _p), ("is_deleted", c_bool)),
    "LoadedExecutable_Fingerprint": _args("LoadedExecutable_Fingerprint", ("executable", _p),
                                          ("executable_fingerprint", _p),
                                          ("executable_fingerprint_size", c_size_t)),
    "LoadedExecutable_Execute": _args("LoadedExecutable_Execute", ("executable", _p),
                                      ("options", POINTER(ExecuteOptions)),
                                      ("argument_lists", POINTER(POINTER(c_void_p))), ("num_devices", c_size_t),
                                      ("num_args", c_size_t), ("output_lists", POINTER(POINTER(c_void_p))),
                                      ("device_complete_events", POINTER(c_void_p)), ("execute_device", _p)),
    "Buffer_Destroy": _args("Buffer_Destroy", ("buffer", _p)),
    "Buffer_ElementType": _args("Buffer_ElementType", ("buffer", _p), ("type", c_int)),
    "Buffer_Dimensions": _args("Buffer_Dimensions", ("buffer", _p), ("dims", _p), ("num_dims", c_size_t)),
    "Buffer_UnpaddedDimensions": _args("Buffer_UnpaddedDimensions", ("buffer", _p), ("unpadded_dims", _p),
                                       ("num_dims", c_size_t)),
    "Buffer_DynamicDimensionIndices": _args("Buffer_DynamicDimensionIndices", ("buffer", _p),
                                            ("dynamic_dim_indices", _p), ("num_dynamic_dims", c_size_t)),
    "Buffer_GetMemoryLayout": _args("Buffer_GetMemoryLayout", ("buffer", _p), ("layout", MemoryLayout)),
    "Buffer_ToHostBuffer": _args("Buffer_ToHostBuffer", ("src", _p), ("host_layout", POINTER(MemoryLayout)),
                                 ("dst", _p), ("dst_size", c_size_t), ("event", _p)),
    "Buffer_OnDeviceSizeInBytes": _args("Buffer_OnDeviceSizeInBytes", ("buffer", _p),
                                        ("on_device_size_in_bytes", c_size_t)),
    "Buffer_Delete": _args("Buffer_Delete", ("buffer", _p)),
    "Buffer_IsDeleted": _args("Buffer_IsDeleted", ("buffer", _p), ("is_deleted", c_bool)),
    "Buffer_CopyRawToHost": _args("Buffer_CopyRawToHost", ("buffer", _p), ("dst", _p), ("offset", c_int64),
                                  ("transfer_size", c_int64), ("event", _p)),
    "Buffer_CopyToDevice": _args("Buffer_CopyToDevice", ("buffer", _p), ("dst_device", _p), ("dst_buffer", _p)),
    "Buffer_CopyToMemory": _args("Buffer_CopyToMemory", ("buffer", _p), ("dst_memory", _p), ("dst_buffer", _p)),
    "Buffer_IsOnCpu": _args("Buffer_IsOnCpu", ("buffer", _p), ("is_on_cpu", c_bool)),
    "Buffer_Device": _args("Buffer_Device", ("buffer", _p), ("device", _p)),
    "Buffer_Memory": _args("Buffer_Memory", ("buffer", _p), ("memory", _p)),
    "Buffer_ReadyEvent": _args("Buffer_ReadyEvent", ("buffer", _p), ("event", _p)),
    "Buffer_UnsafePointer": _args("Buffer_UnsafePointer", ("buffer", _p), ("buffer_pointer", ctypes.c_size_t)),
    "Buffer_IncreaseExternalReferenceCount": _args("Buffer_IncreaseExternalReferenceCount", ("buffer", _p)),
    "Buffer_DecreaseExternalReferenceCount": _args("Buffer_DecreaseExternalReferenceCount", ("buffer", _p)),
    "Buffer_OpaqueDeviceMemoryDataPointer": _args("Buffer_OpaqueDeviceMemoryDataPointer", ("buffer", _p),
                                                  ("device_memory_ptr", _p)),
    "TopologyDescription_Destroy": _args("TopologyDescription_Destroy", ("topology", _p)),
    "TopologyDescription_PlatformName": _args("TopologyDescription_PlatformName", ("topology", _p),
                                              ("platform_name", _p), ("platform_name_size", c_size_t)),
    "TopologyDescription_PlatformVersion": _args("TopologyDescription_PlatformVersion", ("topology", _p),
                                                 ("platform_version", _p), ("platform_version_size", c_size_t)),
    "TopologyDescription_GetDeviceDescriptions": _args("TopologyDescription_GetDeviceDescriptions",
                                                       ("topology", _p), ("descriptions", _p),
                                                       ("num_descriptions", c_size_t)),
    "TopologyDescription_Attributes": _args("TopologyDescription_Attributes", ("topology", _p),
                                            ("attributes", _p), ("num_attributes", c_size_t)),
    "TopologyDescription_Fingerprint": _args("TopologyDescription_Fingerprint", ("topology", _p),
                                             ("fingerprint", c_uint64)),
    "TopologyDescription_GetMemorySpaceKindIds": _args("TopologyDescription_GetMemorySpaceKindIds",
                                                       ("topology", _p), ("memory_space_kind_ids", _p),
                                                       ("num_memory_space_kind_ids", c_size_t)),
    "ExecuteContext_Create": _args("ExecuteContext_Create", ("context", _p)),
    "ExecuteContext_Destroy": _args("ExecuteContext_Destroy", ("context", _p)),
    "Executable_Serialize": _args("Executable_Serialize", ("executable", _p), ("serialized_bytes", _p),
                                  ("serialized_bytes_size", c_size_t), ("serialized_executable", _p),
                                  ("serialized_executable_deleter", _p)),
    "Executable_DeserializeAndLoad": _args("Executable_DeserializeAndLoad", ("client", _p),
                                           ("serialized_executable", _p), ("serialized_executable_size", c_size_t),
                                           ("loaded_executable", _p),
                                           ("overridden_serialized_compile_options", _p),
                                           ("overridden_serialized_compile_options_size", c_size_t)),
    "AsyncTrackingEvent_Destroy": _args("AsyncTrackingEvent_Destroy", ("event", _p)),
}

# -- extensions (``PJRT_Api.extension_start``: a chain of PJRT_Extension_Base) -------------
# xla/pjrt/c/pjrt_c_api.h's PJRT_Extension_Type, the value of PJRT_Extension_Type_Shardings.
EXTENSION_SHARDINGS = 19

# ... and of PJRT_Extension_Type_Layouts.
EXTENSION_LAYOUTS = 4

# ... and of PJRT_Extension_Type_FFI.
EXTENSION_FFI = 5

#: Functions of the extensions, by name (``PJRT_<name>``), in the order of their slots.
EXTENSION_FUNCTIONS = ("Shardings_PJRT_Executable_ParameterShardings",
                       "Shardings_PJRT_Executable_OutputShardings",
                       "Layouts_MemoryLayout_Destroy", "Layouts_MemoryLayout_Serialize",
                       "Layouts_PJRT_Client_GetDefaultLayout", "Layouts_PJRT_Buffer_MemoryLayout",
                       "Layouts_PJRT_Topology_GetDefaultLayout", "Layouts_PJRT_Executable_GetOutputLayouts",
                       "Layouts_PJRT_Executable_GetParameterLayouts",
                       "FFI_Type_Register", "FFI_UserData_Add", "FFI_Register_Handler")

ARGS["Shardings_PJRT_Executable_ParameterShardings"] = _args(
    "Shardings_PJRT_Executable_ParameterShardings", ("executable", _p), ("num_parameters", c_size_t),
    ("shardings", _p), ("sharding_sizes", _p))
ARGS["Shardings_PJRT_Executable_OutputShardings"] = _args(
    "Shardings_PJRT_Executable_OutputShardings", ("executable", _p), ("num_outputs", c_size_t),
    ("shardings", _p), ("sharding_sizes", _p))


ARGS["Layouts_MemoryLayout_Destroy"] = _args("Layouts_MemoryLayout_Destroy", ("layout", _p))
ARGS["Layouts_MemoryLayout_Serialize"] = _args(
    "Layouts_MemoryLayout_Serialize", ("layout", _p), ("serialized_bytes", _p), ("serialized_bytes_size", c_size_t),
    ("serialized_layout", _p), ("serialized_layout_deleter", _p))
ARGS["Layouts_PJRT_Client_GetDefaultLayout"] = _args(
    "Layouts_PJRT_Client_GetDefaultLayout", ("client", _p), ("type", c_int), ("dims", _p), ("num_dims", c_size_t),
    ("layout", _p))
ARGS["Layouts_PJRT_Buffer_MemoryLayout"] = _args("Layouts_PJRT_Buffer_MemoryLayout", ("buffer", _p), ("layout", _p))
ARGS["Layouts_PJRT_Topology_GetDefaultLayout"] = _args(
    "Layouts_PJRT_Topology_GetDefaultLayout", ("topology_description", _p), ("type", c_int), ("dims", _p),
    ("num_dims", c_size_t), ("layout", _p))
ARGS["Layouts_PJRT_Executable_GetOutputLayouts"] = _args(
    "Layouts_PJRT_Executable_GetOutputLayouts", ("executable", _p), ("num_outputs", c_size_t), ("layouts", _p))
ARGS["Layouts_PJRT_Executable_GetParameterLayouts"] = _args(
    "Layouts_PJRT_Executable_GetParameterLayouts", ("executable", _p), ("num_parameters", c_size_t),
    ("layouts", _p))

# xla/pjrt/c/pjrt_c_api_ffi_extension.h
ARGS["FFI_Type_Register"] = _args("FFI_Type_Register", ("type_name", _p), ("type_name_size", c_size_t),
                                  ("type_id", c_int64), ("type_info", _p))
ARGS["FFI_UserData_Add"] = _args("FFI_UserData_Add", ("context", _p), ("type_id", c_int64), ("data", _p))
# (the header's PJRT_FFI_Register_Handler_Args has no extension_start)
ARGS["FFI_Register_Handler"] = type("FFI_Register_Handler_Args", (Structure,), {"_fields_": [
    ("struct_size", c_size_t), ("target_name", _p), ("target_name_size", c_size_t), ("handler", _p),
    ("platform_name", _p), ("platform_name_size", c_size_t), ("traits", c_int)]})


class ExtensionBase(Structure):
    _fields_ = [("struct_size", c_size_t), ("type", c_int), ("next", _p)]


class ShardingsExtension(Structure):
    """PJRT_Shardings_Extension (xla/pjrt/c/pjrt_c_api_shardings_extension.h)."""
    _fields_ = [("base", ExtensionBase), ("ParameterShardings", _p), ("OutputShardings", _p)]


class LayoutsExtension(Structure):
    """PJRT_Layouts_Extension (xla/pjrt/c/pjrt_c_api_layouts_extension.h): the slots
    are the ``Layouts_*`` functions of EXTENSION_FUNCTIONS, in order."""
    _fields_ = [("base", ExtensionBase)] + [(name, _p) for name in EXTENSION_FUNCTIONS
                                            if name.startswith("Layouts_")]


class FfiExtension(Structure):
    """PJRT_FFI_Extension (xla/pjrt/c/pjrt_c_api_ffi_extension.h)."""
    _fields_ = [("base", ExtensionBase), ("type_register", _p), ("user_data_add", _p), ("register_handler", _p)]


# C function types: what the caller's pointers are called as.
ENTRY = ctypes.CFUNCTYPE(c_void_p, c_void_p)          # PJRT_Error* fn(Args*)
VOID_ENTRY = ctypes.CFUNCTYPE(None, c_void_p)         # void fn(Args*)
EVENT_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)    # void (*)(PJRT_Error*, void* user_arg)
DELETER = ctypes.CFUNCTYPE(None, c_void_p)            # void (*)(T*): frees what a function handed out

__all__ = ["MAJOR", "MINOR", "FUNCTIONS", "ARGS", "Api", "NamedValue", "MemoryLayout", "Program",
           "BUFFER_TYPES"]
