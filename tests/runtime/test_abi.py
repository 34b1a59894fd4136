"""The ctypes mirror of runtime/xlac_runtime.h has the header's exact layout."""
import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

from xlac.runtime import abi

HEADER_DIR = Path(__file__).resolve().parents[2] / "runtime"
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

STRUCTS = {"xlac_run_options": abi.RunOptions, "xlac_collective_op": abi.CollectiveOp,
           "xlac_custom_call_op": abi.CustomCallOp, "XlaCustomCallStatus": abi.XlaCustomCallStatus}


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_struct_layouts_match_the_header(tmp_path):
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "xlac_runtime.h"', "int main(void) {"]
    for cname, cls in STRUCTS.items():
        lines.append(f'  printf("{cname} sizeof %zu\\n", sizeof({cname}));')
        for field, _ in cls._fields_:
            lines.append(f'  printf("{cname} {field} %zu\\n", offsetof({cname}, {field}));')
    lines += [f'  printf("ABI %d ALIGN %d\\n", XLAC_ABI_VERSION, XLAC_ALIGNMENT);',
              f'  printf("CUSTOM %d %d %d %d %d\\n", XLAC_CUSTOM_CALL_MESSAGE_MAX, XLAC_CUSTOM_CALL_API_ORIGINAL,'
              ' XLAC_CUSTOM_CALL_API_STATUS_RETURNING, XLAC_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED,'
              ' XLAC_CUSTOM_CALL_API_TYPED_FFI);', "  return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    exe = tmp_path / "layout"
    subprocess.run([CC, "-std=c99", f"-I{HEADER_DIR}", str(src), "-o", str(exe)], check=True,
                   capture_output=True, timeout=60)
    out = subprocess.run([str(exe)], check=True, capture_output=True, encoding="utf-8", timeout=60).stdout
    got = {}
    for line in out.splitlines():
        if line.startswith("ABI"):
            _, version, _, align = line.split()
            assert int(version) == abi.ABI_VERSION and int(align) == abi.ALIGNMENT
            continue
        if line.startswith("CUSTOM"):
            assert [int(v) for v in line.split()[1:]] == [
                abi.CUSTOM_CALL_MESSAGE_MAX, abi.CUSTOM_CALL_API_ORIGINAL, abi.CUSTOM_CALL_API_STATUS_RETURNING,
                abi.CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED, abi.CUSTOM_CALL_API_TYPED_FFI]
            continue
        cname, field, value = line.split()
        got[(cname, field)] = int(value)
    for cname, cls in STRUCTS.items():
        assert got[(cname, "sizeof")] == ctypes.sizeof(cls), cname
        for field, _ in cls._fields_:
            assert got[(cname, field)] == getattr(cls, field).offset, (cname, field)
