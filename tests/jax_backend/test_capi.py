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
