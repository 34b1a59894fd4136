"""The PJRT C API table of xlac's plugin, called through its own function
pointers, without jax (xlac/pjrt/api.py, docs/jax_backend.md)."""
import ctypes
import re
import struct

import numpy as np
import pytest

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


def _map_entry(name: str, value: bytes) -> bytes:
    f, n = compile_options._field, compile_options._encode_varint
    body = f(1, 2, n(len(name)) + name.encode()) + f(2, 2, n(len(value)) + value)
    return f(7, 2, n(len(body)) + body)


def test_compile_options_read_the_overrides():
    """jax's compiler_options (``env_option_overrides``): each value kind."""
    f, n = compile_options._field, compile_options._encode_varint
    data = (_map_entry("a_string", f(1, 2, n(3) + b"abc")) + _map_entry("a_bool", f(2, 0, n(1)))
            + _map_entry("an_int", f(3, 0, n(-5))) + _map_entry("a_double", f(4, 1, struct.pack("<d", 0.5))))
    assert compile_options.parse(data).overrides == {"a_string": "abc", "a_bool": True, "an_int": -5,
                                                     "a_double": 0.5}


def test_compiler_options_are_checked_as_xla_checks_them():
    """An unknown name and a value of the wrong kind are refused with XLA's
    messages; strings parse as XLA's ApplyOptionFromString parses them."""
    from xlac.pjrt.debug_options import OptionError, check
    known = {"xla_flag": "bool", "xla_count": "int32", "xla_ratio": "float", "xla_path": "string",
             "xla_mode": "enum"}
    check({"xla_flag": True, "xla_count": 200, "xla_ratio": 0.5, "xla_path": "/tmp"}, known)
    check({"xla_flag": "False", "xla_count": " 12", "xla_ratio": "1e-3"}, known)
    refused = [({"invalid_key": "invalid_value"}, "No such compile option: 'invalid_key'"),
               ({"xla_flag": "invalid_value"}, "While setting option xla_flag, 'invalid_value' is not a valid "
                                                "bool value."),
               ({"xla_flag": 1}, "'1' is not a valid bool value."),
               ({"xla_count": 0.5}, "'0.5' is not a valid int32 value."),
               ({"xla_count": "many"}, "'many' is not a valid int32 value."),
               ({"xla_ratio": True}, "'1' is not a valid float value."),
               ({"xla_mode": "FAST"}, "'FAST' is not a valid enum value.")]
    for options, words in refused:
        with pytest.raises(OptionError, match=re.escape(words)):
            check(options, known)


def test_debug_options_read_from_a_file_descriptor():
    """The DebugOptions fields of a serialized xla.proto file descriptor
    (what jaxlib's library embeds), up to the blob's end."""
    from xlac.pjrt import debug_options
    f, n = compile_options._field, compile_options._encode_varint

    def sub(number, body):
        return f(number, 2, n(len(body)) + body)

    def field(name, kind):
        return sub(2, sub(1, name.encode()) + f(3, 0, n(1)) + f(4, 0, n(1)) + f(5, 0, n(kind)))
    other = sub(4, sub(1, b"Other") + field("x", 8))
    debug = sub(4, sub(1, b"DebugOptions") + field("xla_a", 8) + field("xla_b", 5) + field("xla_c", 2))
    blob = debug_options._FILE_START + other + debug + b"\x00\xff garbage after the descriptor"
    assert debug_options._debug_option_fields(blob) == {"xla_a": "bool", "xla_b": "int32", "xla_c": "float"}


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


_ADD = """module @add {
  func.func public @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}"""


def _execute(exe, arguments: list):
    """PJRT_LoadedExecutable_Execute of ``exe`` on one device: (error, output handle)."""
    args = (ctypes.c_void_p * max(1, len(arguments)))(*arguments)
    outs = (ctypes.c_void_p * 1)()
    arg_lists = (ctypes.POINTER(ctypes.c_void_p) * 1)(ctypes.cast(args, ctypes.POINTER(ctypes.c_void_p)))
    out_lists = (ctypes.POINTER(ctypes.c_void_p) * 1)(ctypes.cast(outs, ctypes.POINTER(ctypes.c_void_p)))
    done = (ctypes.c_void_p * 1)()
    options = capi.ExecuteOptions()
    error, _ = call("LoadedExecutable_Execute", executable=exe.handle, options=ctypes.pointer(options),
                    argument_lists=arg_lists, num_devices=1, num_args=len(arguments), output_lists=out_lists,
                    device_complete_events=done)
    return error, outs[0], done[0]


def _client_with_buffers(*arrays):
    from xlac.pjrt import handles
    from xlac.pjrt.client import Client
    options = (capi.NamedValue * 1)()
    _, created = call("Client_Create", create_options=options, num_options=0)
    _, devices = call("Client_Devices", client=created.client)
    device = ctypes.c_void_p.from_address(devices.devices).value
    made = []
    for data in arrays:
        _, b = call("Client_BufferFromHostBuffer", client=created.client, data=data.ctypes.data,
                    type=capi.BUFFER_TYPES.index("F32"), dims=(ctypes.c_int64 * 1)(data.size), num_dims=1,
                    device=device)
        made.append(b.buffer)
    return created.client, handles.lookup(created.client, Client, "PJRT_Client"), made


def _host(buffer) -> list:
    out = np.zeros(8, np.float32)
    error, _ = call("Buffer_ToHostBuffer", src=buffer, dst=out.ctypes.data, dst_size=out.nbytes)
    assert not error
    return out.tolist()


def test_execute_takes_the_lean_path_and_falls_back_for_what_it_must_report(monkeypatch):
    """A one-device execution without donation or host callbacks runs from the
    argument handles (Executable.execute_handles) with no Executable.execute;
    anything unusual (a deleted or unknown argument, a wrong count) goes to the
    general path, whose errors say what is wrong; nothing leaks."""
    from xlac.pjrt import events, handles
    from xlac.pjrt.buffer import Buffer
    from xlac.pjrt.compile_options import CompileOptions
    from xlac.pjrt.executable import Executable
    from xlac.pjrt.program import Program
    x, y = np.arange(8, dtype=np.float32), np.full(8, 10, np.float32)
    client_handle, client, (bx, by) = _client_with_buffers(x, y)
    exe = Executable(client, Program(_ADD, ()), CompileOptions())
    assert exe.lean
    live = handles.live_count(Buffer)
    general = []
    real_execute = Executable.execute
    monkeypatch.setattr(Executable, "execute", lambda self, *a, **k: general.append(1) or real_execute(self, *a, **k))
    error, out, done = _execute(exe, [bx, by])
    assert not error and general == [] and done == events.ready()
    assert _host(out) == (x + y).tolist()
    assert handles.live_count(Buffer) == live + 1
    assert not call("Buffer_Destroy", buffer=out)[0]
    api.release_destroyed()
    assert handles.live_count(Buffer) == live
    # Errors from the compiled code are PJRT errors.
    monkeypatch.setattr(exe, "compiled", lambda *a: 1 / 0)
    code, text = message(_execute(exe, [bx, by])[0])
    assert code == capi.INTERNAL or "division by zero" in text
    monkeypatch.undo()
    monkeypatch.setattr(Executable, "execute", lambda self, *a, **k: general.append(1) or real_execute(self, *a, **k))
    # A wrong count, an unknown handle, a deleted buffer: the general path reports them.
    code, text = message(_execute(exe, [bx])[0])
    assert code == capi.INVALID_ARGUMENT and "takes 2 arguments, got 1" in text
    code, text = message(_execute(exe, [bx, 12345])[0])
    assert code == capi.INVALID_ARGUMENT and "is not a live PJRT_Buffer" in text
    assert not call("Buffer_Delete", buffer=by)[0]
    code, text = message(_execute(exe, [bx, by])[0])
    assert code == capi.FAILED_PRECONDITION and "argument 1 of" in text and "deleted or donated" in text
    assert len(general) == 2 and handles.live_count(Buffer) == live
    for b in (bx, by):
        assert not call("Buffer_Destroy", buffer=b)[0]
    api.release_destroyed()
    exe.unref()
    assert not call("Client_Destroy", client=client_handle)[0]


def test_execute_of_a_donating_program_takes_the_general_path():
    """Donation is the general path's (it consumes the argument)."""
    from xlac.pjrt.compile_options import CompileOptions
    from xlac.pjrt.executable import Executable
    from xlac.pjrt.program import Program
    x, y = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    client_handle, client, (bx, by) = _client_with_buffers(x, y)
    exe = Executable(client, Program(_ADD, (0,)), CompileOptions())
    assert not exe.lean
    error, out, _ = _execute(exe, [bx, by])
    assert not error and _host(out) == (x + y).tolist()
    error, is_deleted = call("Buffer_IsDeleted", buffer=bx)
    assert not error and is_deleted.is_deleted
    for b in (bx, by, out):
        assert not call("Buffer_Destroy", buffer=b)[0]
    api.release_destroyed()
    exe.unref()
    assert not call("Client_Destroy", client=client_handle)[0]


def test_an_executable_and_its_loaded_form_give_one_fingerprint():
    from xlac.pjrt.compile_options import CompileOptions
    from xlac.pjrt.executable import Executable
    from xlac.pjrt.program import Program
    client_handle, client, buffers = _client_with_buffers(np.zeros(8, np.float32))
    exe = Executable(client, Program(_ADD, ()), CompileOptions())
    prints = []
    for name in ("Executable_Fingerprint", "LoadedExecutable_Fingerprint"):
        error, got = call(name, executable=exe.handle)
        assert not error
        prints.append(ctypes.string_at(got.executable_fingerprint, got.executable_fingerprint_size))
    assert prints[0] == prints[1] and len(prints[0]) > 8
    for b in buffers:
        assert not call("Buffer_Destroy", buffer=b)[0]
    api.release_destroyed()
    exe.unref()
    assert not call("Client_Destroy", client=client_handle)[0]


def test_after_close_destroy_entries_do_nothing_on_other_threads():
    """At exit (atexit) other threads' ``*_Destroy`` calls return without
    Python, other calls go on, and the close waits for calls already under
    way: a thread waiting for the GIL when the interpreter finalizes is ended
    inside jaxlib's destructors (abort)."""
    import threading
    import time

    from xlac.pjrt.trampolines import Trampolines
    calls, started = [], threading.Event()

    def slot(_args):
        calls.append(threading.get_ident())
        if len(calls) == 1:
            started.set()
            time.sleep(0.2)  # under way when close() is called
        return None

    proto = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
    callback = proto(slot)
    table = Trampolines([callback] * 3, void=set(), skippable={1})
    destroy, other_call = proto(table.addresses[1]), proto(table.addresses[2])
    busy = threading.Thread(target=destroy, args=(None,))
    busy.start()
    started.wait(5)
    t0 = time.monotonic()
    table.close()
    assert not busy.is_alive() and time.monotonic() - t0 > 0.1
    for entry, expected in ((destroy, 1), (other_call, 2)):
        thread = threading.Thread(target=entry, args=(None,))
        thread.start()
        thread.join()
        assert len(calls) == expected
    t0 = time.monotonic()
    table.close()              # the uncounted call ended: nothing to wait for
    assert time.monotonic() - t0 < 1.0
    assert destroy(None) is None and len(calls) == 3 and calls[-1] == threading.get_ident()
