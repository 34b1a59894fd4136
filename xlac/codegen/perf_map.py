"""Name JIT code for Linux ``perf``: with ``XLAC_PERF_MAP=1`` in the
environment, every object the JIT loads (a program's parts, the GEMM and
linear-algebra library) adds its functions to ``/tmp/perf-<pid>.map``, the
file ``perf report`` and ``perf top`` read for code they find no binary for.
Samples in JIT code then carry the kernel's name (``xlac_entry.fusion.3``,
``xlac_entry.dot.1.task``, ``xlac_gemm_..._run``) instead of a bare address.

Each line is ``START SIZE NAME`` in hex (perf's JIT map format): the address
MCJIT gave the function, and its size from the object's ELF symbol table.
The file is appended to for the life of the process and never read back.
"""
from __future__ import annotations

import os
import struct

#: The environment variable that turns the map on ("1").
ENV = "XLAC_PERF_MAP"

_SHT_SYMTAB = 2
_STT_FUNC = 2


def enabled() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


def path(pid: int | None = None) -> str:
    """The map file of process ``pid`` (default: this one)."""
    return f"/tmp/perf-{os.getpid() if pid is None else pid}.map"


def functions(obj: bytes) -> list[tuple[str, int]]:
    """``(name, size in bytes)`` of the functions an ELF64 little-endian
    relocatable object defines (its ``.symtab``'s ``STT_FUNC`` symbols of
    non-zero size); ``[]`` for anything else."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return []
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + k * shentsize) for k in range(shnum)]
    out = []
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind != _SHT_SYMTAB or not entsize:
            continue
        strtab = sections[link][4]
        for at in range(offset, offset + size, entsize):
            st_name, st_info, _other, shndx, _value, st_size = struct.unpack_from("<IBBHQQ", obj, at)
            if st_info & 0xF == _STT_FUNC and shndx and st_size:
                end = obj.index(b"\0", strtab + st_name)
                out.append((obj[strtab + st_name:end].decode(), st_size))
    return out


def record(engine, objects: list[bytes]) -> None:
    """Append the functions of ``objects`` (loaded and finalised in
    ``engine``, an MCJIT engine) to this process's map."""
    lines = []
    for obj in objects:
        for name, size in functions(obj):
            address = engine.get_function_address(name)
            if address:
                lines.append(f"{address:x} {size:x} {name}\n")
    if lines:
        with open(path(), "a", encoding="utf-8") as f:
            f.write("".join(lines))
