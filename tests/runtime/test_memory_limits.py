"""Buffers too big for the machine or for 64 bits (issue 12, item 9): a clear
error naming the buffer, its shape and bytes and what memory there is — at
build or compile time where the size is known, at call time otherwise."""
import errno

import numpy as np
import pytest

import xlac
from xlac.cli import main
from xlac.runtime import allocator


@pytest.mark.parametrize("shape", ["f32[4294967296,4294967296]", "f32[9223372036854775807]",
                                   "(s32[], f64[2305843009213693952])"])
def test_shapes_past_64_bits_are_refused_where_they_are_written(shape):
    text = f"HloModule m\nENTRY e {{\n  ROOT p = {shape} parameter(0)\n}}"
    with pytest.raises(xlac.HloParseError, match="more than a 64-bit size can hold") as info:
        xlac.jit(text)                  # was: OverflowError from ctypes
    column = 12 + (shape.index("f64") if shape.startswith("(") else 0)   # the array's own text
    assert (info.value.line, info.value.column) == (3, column)


def test_builder_refuses_shapes_past_64_bits():
    with pytest.raises(xlac.ShapeError, match="MAX_BYTE_SIZE"):
        xlac.Shape(xlac.F32, (2 ** 61,))
    assert xlac.Shape(xlac.U8, (2 ** 62,)).byte_size() == 2 ** 62     # big, but addressable


def _too_big():
    limits = allocator.memory_limits()
    bound = allocator.most_one_buffer_can_take(limits)
    if bound is None:
        pytest.skip("this platform does not say how much memory it has")
    return bound // 4 + 1                  # f32 elements: one byte more than the machine


def test_a_result_bigger_than_the_machine_is_refused_at_jit():
    n = _too_big()
    text = f"HloModule m\nENTRY e {{\n  ROOT i = f32[{n}] iota(), iota_dimension=0\n}}"
    with pytest.raises(MemoryError) as info:
        xlac.jit(text)                     # was: OSError ENOMEM at the first call
    message = str(info.value)
    assert f"result 0 (f32[{n}]" in message and f"{4 * n} bytes" in message
    assert "of memory" in message


def test_a_temp_arena_bigger_than_the_machine_is_refused_at_jit():
    n = _too_big()
    text = f"""HloModule m
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY e {{
  i = f32[{n}] iota(), iota_dimension=0
  x = f32[{n}] exponential(i)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={{0}}, to_apply=add
}}"""
    with pytest.raises(MemoryError, match="the temp arena needs"):
        xlac.jit(text, optimize=False)


def test_cli_says_so_in_one_line(tmp_path, capsys):
    path = tmp_path / "big.hlo"
    path.write_text(f"HloModule m\nENTRY e {{\n  ROOT i = f32[{_too_big()}] iota(), iota_dimension=0\n}}", encoding="utf-8")
    assert main(["run", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("xlac: error: module m: result 0") and "\n" not in err


def test_allocation_failures_at_call_time_name_the_buffer(monkeypatch):
    # (a result above executable.FAST_RESULT_MAX: its memory comes from the pool)
    exe = xlac.jit("HloModule m\nENTRY e {\n  p = f32[32768] parameter(0)\n"
                   "  ROOT n = f32[32768] negate(p)\n}")
    allocator.trim()

    def no_memory(self, size):
        raise OSError(errno.ENOMEM, "Cannot allocate memory")
    monkeypatch.setattr(allocator.Block, "_allocate", no_memory)
    monkeypatch.setattr(allocator.GuardBlock, "_allocate", no_memory)
    with pytest.raises(MemoryError) as info:
        exe(np.ones(32768, np.float32))
    message = str(info.value)
    assert "result 0 (f32[32768]" in message and "131072 bytes" in message
    assert "of memory" in message
    monkeypatch.undo()
    np.testing.assert_array_equal(exe(np.ones(32768, np.float32)), -np.ones(32768, np.float32))


def test_a_failed_frame_leaves_no_noise(monkeypatch, capsys):
    # "Exception ignored ... '_Frame' object has no attribute 'temp'" was
    # printed when the temp arena could not be had.
    from xlac import executable
    monkeypatch.setattr(allocator, "acquire_temp", lambda n: (_ for _ in ()).throw(
        allocator.OutOfMemory("cannot allocate", n)))
    with pytest.raises(MemoryError):
        executable._Frame(1, 1, 1 << 20)
    import gc
    gc.collect()
    assert "Exception ignored" not in capsys.readouterr().err
