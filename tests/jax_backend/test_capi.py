"""The PJRT C API table of xlac's plugin, called through its own function
pointers, without jax (xlac/pjrt/api.py, docs/jax_backend.md)."""
import ctypes

import numpy as np

from xlac.pjrt import api, capi, compile_options


def call(name: str, **fields):
    """Call slot PJRT_<name> as C does; (error handle, the args)."""
    kind = capi.ARGS.get(name) or capi.ARGS["Plugin_Initialize"]     # the common head only
    args = kind(struct_size=ctypes.sizeof(kind), **fields)
    fn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(getattr(api.function_table(), name))
    return fn(ctypes.addressof(args)), args


def message(error) -> tuple[int, str]:
    _, code = call("Error_GetCode", error=error)
    m = capi.ARGS["Error_Message"](struct_size=ctypes.sizeof(capi.ARGS["Error_Message"]), error=error)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(api.function_table().Error_Message)(ctypes.addressof(m))
    text = ctypes.string_at(m.message, m.message_size).decode()
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(api.function_table().Error_Destroy)(
        ctypes.addressof(capi.ARGS["Error_Destroy"](error=error)))
    return code.code, text


def test_every_slot_is_set_and_the_version_is_the_headers():
    table = api.function_table()
    assert (table.pjrt_api_version.major_version, table.pjrt_api_version.minor_version) == (0, 112)
    assert all(getattr(table, name) for name in capi.FUNCTIONS)
    assert ctypes.sizeof(capi.Api) == 16 + 24 + 8 * len(capi.FUNCTIONS)     # head, version, slots


def test_unimplemented_slot_names_the_function():
    error, _ = call("Client_DmaMap")
    code, text = message(error)
    assert code == capi.UNIMPLEMENTED
    assert text == "xlac: error: not supported yet: PJRT_Client_DmaMap (xlac's PJRT plugin)"


def test_client_devices_buffers_and_a_bad_handle():
    options = (capi.NamedValue * 1)()
    error, created = call("Client_Create", create_options=options, num_options=0)
    assert not error
    error, devices = call("Client_Devices", client=created.client)
    assert not error and devices.num_devices == 1
    device = ctypes.c_void_p.from_address(devices.devices).value
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    dims = (ctypes.c_int64 * 2)(2, 3)
    error, made = call("Client_BufferFromHostBuffer", client=created.client, data=data.ctypes.data,
                       type=capi.BUFFER_TYPES.index("F32"), dims=dims, num_dims=2, device=device)
    assert not error
    out = np.zeros(6, np.float32)
    error, _ = call("Buffer_ToHostBuffer", src=made.buffer, dst=out.ctypes.data, dst_size=out.nbytes)
    assert not error and out.tolist() == list(range(6))
    error, _ = call("Buffer_Dimensions", buffer=12345)
    code, text = message(error)
    assert code == capi.INVALID_ARGUMENT and "is not a live PJRT_Buffer" in text
    for name, field, handle in (("Buffer_Destroy", "buffer", made.buffer),
                                ("Client_Destroy", "client", created.client)):
        assert not call(name, **{field: handle})[0]


def test_compile_options_and_device_assignment_round_trip():
    da = compile_options.device_assignment_proto(2, 3, [0, 1, 2, 3, 4, 5])
    build = b"\x20\x02\x28\x03" + b"\x4a" + bytes([len(da)]) + da        # num_replicas, num_partitions, da
    options = compile_options.parse(b"\x1a" + bytes([len(build)]) + build)
    assert (options.num_replicas, options.num_partitions, options.device_ids) == (2, 3, (0, 1, 2, 3, 4, 5))


def test_dispatch_calls_are_answered_without_python(monkeypatch):
    """What jax asks around every execution (a buffer's device and memory, the
    memory's kind, the ready event) is answered from the handles' blocks in native
    code; a handle the native path does not know (released) goes to Python, which
    reports it."""
    from xlac.pjrt import events, handles
    options = (capi.NamedValue * 1)()
    _, created = call("Client_Create", create_options=options, num_options=0)
    _, devices = call("Client_Devices", client=created.client)
    device = ctypes.c_void_p.from_address(devices.devices).value
    data = np.arange(3, dtype=np.float32)
    _, made = call("Client_BufferFromHostBuffer", client=created.client, data=data.ctypes.data,
                   type=capi.BUFFER_TYPES.index("F32"), dims=(ctypes.c_int64 * 1)(3), num_dims=1, device=device)
    # Whatever enters Python looks its handle up: count the lookups.
    lookups = []
    real_lookup = handles.lookup
    monkeypatch.setattr(handles, "lookup", lambda *a: lookups.append(a[2]) or real_lookup(*a))
    error, dev = call("Buffer_Device", buffer=made.buffer)
    assert not error and dev.device == device
    error, mem = call("Buffer_Memory", buffer=made.buffer)
    assert not error and mem.memory
    error, kind = call("Memory_Kind", memory=mem.memory)
    assert not error and ctypes.string_at(kind.kind, kind.kind_size) == b"device"
    ready = made.done_with_host_buffer
    assert ready == events.ready()
    error, is_ready = call("Event_IsReady", event=ready)
    assert not error and is_ready.is_ready
    seen = []
    callback = capi.EVENT_CALLBACK(lambda err, arg: seen.append((err, arg)))
    error, _ = call("Event_OnReady", event=ready, callback=ctypes.cast(callback, ctypes.c_void_p), user_arg=7)
    assert not error and seen == [(None, 7)]
    assert not call("Event_Destroy", event=ready)[0] and not call("Event_Await", event=ready)[0]
    assert lookups == []                     # none of these entered Python
    assert events.lookup(ready).is_ready     # destroying the ready event left it in place
    # Destroyed in native code: listed, released when jax next enters Python; a
    # released buffer's block has no tag, so the Python path says what is wrong.
    buffer = handles.lookup(made.buffer, object, "PJRT_Buffer")
    lookups.clear()
    assert not call("Buffer_Destroy", buffer=made.buffer)[0]
    assert lookups == [] and not buffer.deleted
    api.release_destroyed()
    assert buffer.deleted and buffer.array is None
    error, _ = call("Buffer_Device", buffer=made.buffer)
    code, text = message(error)
    assert code == capi.INVALID_ARGUMENT and "is not a live PJRT_Buffer" in text
    assert not call("Client_Destroy", client=created.client)[0]


def _extension(kind: int, struct):
    """The extension of type ``kind`` on the table's chain, as ``struct``."""
    address = api.function_table().extension_start
    while address:
        base = capi.ExtensionBase.from_address(address)
        if base.type == kind:
            return struct.from_address(address)
        address = base.next
    raise AssertionError(f"no extension of type {kind}")


def test_layouts_extension_reports_row_major_layouts():
    """jaxlib reads executables' layouts through the layouts extension (else from the
    optimized program, converted from StableHLO at every compile)."""
    ext = _extension(capi.EXTENSION_LAYOUTS, capi.LayoutsExtension)

    def ext_call(name, **fields):
        kind = capi.ARGS[name]
        args = kind(struct_size=ctypes.sizeof(kind), **fields)
        error = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(getattr(ext, name))(ctypes.addressof(args))
        assert not error
        return args
    options = (capi.NamedValue * 1)()
    _, created = call("Client_Create", create_options=options, num_options=0)
    dims = (ctypes.c_int64 * 3)(2, 3, 4)
    made = ext_call("Layouts_PJRT_Client_GetDefaultLayout", client=created.client, type=11,
                    dims=ctypes.addressof(dims), num_dims=3)
    text = ext_call("Layouts_MemoryLayout_Serialize", layout=made.layout)
    assert ctypes.string_at(text.serialized_bytes, text.serialized_bytes_size) == b"{2,1,0}"
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(text.serialized_layout_deleter)(text.serialized_layout)
    ext_call("Layouts_MemoryLayout_Destroy", layout=made.layout)
    assert not call("Client_Destroy", client=created.client)[0]


def _ffi_call(name: str, **fields):
    """Call the FFI extension's function ``name`` through its slot in the chain."""
    ext = api.function_table().extension_start
    while ext:
        base = capi.ExtensionBase.from_address(ext)
        if base.type == capi.EXTENSION_FFI:
            break
        ext = base.next
    assert ext, "no FFI extension in the table's chain"
    slot = getattr(capi.FfiExtension.from_address(ext), name)
    kind = capi.ARGS[{"user_data_add": "FFI_UserData_Add"}[name]]
    args = kind(struct_size=ctypes.sizeof(kind), **fields)
    return ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(slot)(ctypes.addressof(args))


def test_execute_contexts_carry_ffi_user_data_in_native_code(monkeypatch):
    """jaxlib makes an execute context for every execution and adds FFI user data to
    it (its host callbacks): made, filled and freed without Python, read back by the
    execution; a full context is an error."""
    from xlac.pjrt import trampolines
    entered = []
    monkeypatch.setattr(api, "release_destroyed", lambda: entered.append(1))
    error, made = call("ExecuteContext_Create")
    assert not error and made.context
    for k in range(trampolines.CONTEXT_SLOTS):
        assert not _ffi_call("user_data_add", context=made.context, type_id=100 + k, data=0x1000 + k)
    assert trampolines.context_user_data(made.context) == {100 + k: 0x1000 + k
                                                           for k in range(trampolines.CONTEXT_SLOTS)}
    assert not entered                                       # no Python so far
    code, text = message(_ffi_call("user_data_add", context=made.context, type_id=7, data=8))
    assert code == capi.RESOURCE_EXHAUSTED and "at most 8 user data" in text
    error, _ = call("ExecuteContext_Destroy", context=made.context)
    assert not error
