"""Reading jax's serialized ``xla.CompileOptionsProto`` and writing an
``xla.DeviceAssignmentProto``: the few fields xlac uses, by protobuf's wire
format (no protobuf dependency).

Read: ``executable_build_options`` (field 3) -> ``num_replicas`` (4),
``num_partitions`` (5), ``device_assignment`` (9) of
``ExecutableBuildOptionsProto``; ``env_option_overrides`` (field 7, a map
from a name to an ``OptionOverrideProto``: string 1, bool 2, int64 3,
double 4), what jax's ``compiler_options`` become; the rest is ignored.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field


@dataclass
class CompileOptions:
    """What xlac takes from a CompileOptionsProto."""
    num_replicas: int = 1
    num_partitions: int = 1
    device_ids: tuple | None = None     # device assignment, replica-major, or None (the default)
    #: ``env_option_overrides``: name -> str, bool, int or float, in the order given.
    overrides: dict = field(default_factory=dict)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("CompileOptionsProto: truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def fields(data: bytes):
    """(field number, wire type, value) of each field of message ``data``:
    value is an int (varint, fixed) or bytes (length-delimited)."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = int.from_bytes(data[pos:pos + 8], "little"), pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = int.from_bytes(data[pos:pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"CompileOptionsProto: unsupported wire type {wire}")
        if pos > len(data):
            raise ValueError("CompileOptionsProto: truncated message")
        yield number, wire, value


def _packed_ints(wire: int, value) -> list:
    if wire == 0:
        return [value]
    out, pos = [], 0
    while pos < len(value):
        v, pos = _varint(value, pos)
        out.append(v)
    return out


def _device_assignment(data: bytes) -> tuple[int, int, tuple]:
    replicas = computations = 0
    columns = []
    for number, wire, value in fields(data):
        if number == 1:
            replicas = value
        elif number == 2:
            computations = value
        elif number == 3:
            columns.append([v for n, w, x in fields(value) if n == 1 for v in _packed_ints(w, x)])
    # computation_devices[c].replica_device_ids[r]: device of replica r, partition c.
    ids = tuple(columns[c][r] for r in range(replicas) for c in range(computations)) if columns else None
    return replicas, computations, ids


def _override(data: bytes) -> tuple[str, object]:
    """(name, value) of an ``env_option_overrides`` map entry."""
    name, value = "", None
    for number, wire, v in fields(data):
        if number == 1 and wire == 2:
            name = v.decode("utf-8", "replace")
        elif number == 2 and wire == 2:
            for n, w, x in fields(v):
                if n == 1 and w == 2:
                    value = x.decode("utf-8", "replace")
                elif n == 2 and w == 0:
                    value = bool(x)
                elif n == 3 and w == 0:
                    value = x - (1 << 64) if x >> 63 else x
                elif n == 4 and w == 1:
                    value = struct.unpack("<d", x.to_bytes(8, "little"))[0]
    return name, value


def parse(data: bytes) -> CompileOptions:
    """The CompileOptions in serialized CompileOptionsProto ``data``; ValueError if malformed."""
    options = CompileOptions()
    for number, wire, value in fields(data):
        if number == 7 and wire == 2:
            name, v = _override(value)
            options.overrides[name] = v
        if number != 3 or wire != 2:
            continue
        for n, w, v in fields(value):
            if n == 4 and w == 0:
                options.num_replicas = max(1, v)
            elif n == 5 and w == 0:
                options.num_partitions = max(1, v)
            elif n == 9 and w == 2:
                options.device_ids = _device_assignment(v)[2]
    return options


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | wire) + payload


def device_assignment_proto(num_replicas: int, num_partitions: int, device_ids) -> bytes:
    """A serialized DeviceAssignmentProto: ``device_ids`` replica-major
    (device of replica r, partition p at r * num_partitions + p)."""
    out = _field(1, 0, _encode_varint(num_replicas)) + _field(2, 0, _encode_varint(num_partitions))
    for p in range(num_partitions):
        ids = b"".join(_encode_varint(device_ids[r * num_partitions + p]) for r in range(num_replicas))
        column = _field(1, 2, _encode_varint(len(ids)) + ids)
        out += _field(3, 2, _encode_varint(len(column)) + column)
    return out
