"""Buffer assignment: dead buffers reused, updates in place, results written in place."""
import numpy as np
import pytest

import xlac
from xlac.passes.buffer_assignment import BufferAssignment, may_update_in_place

CHAIN = """
HloModule m

ENTRY e {
  x = f32[64]{0} parameter(0)
  a = f32[64]{0} exponential(x)
  b = f32[64]{0} tanh(a)
  c = f32[64]{0} sine(a)
  d = f32[64]{0} add(b, c)
  ROOT r = f32[64]{0} log(d)
}
"""


def test_unfused_chain_reuses_dead_buffers_and_updates_in_place():
    exe = xlac.jit(CHAIN, optimize=False)
    a = exe.lowered.assignment
    # The root r updates d in place, d updates b: d and b are computed in the
    # result buffer; c takes a's buffer (a dies at c): one temp.
    assert a.temp_size == 256 == a.peak_live_bytes()
    pairs = {(w.name, o.name) for w, o in a.in_place}
    assert pairs == {("c", "a"), ("d", "b"), ("r", "d")}
    assert "in place: c overwrites a" in a.summary()
    x = np.linspace(0, 1, 64).astype(np.float32)
    np.testing.assert_allclose(exe(x), xlac.evaluate(CHAIN, x), rtol=1e-6)


def test_root_is_computed_into_the_result_buffer():
    a = xlac.jit(CHAIN, optimize=False).lowered.assignment
    root = a.computation.root
    assert a.slice_of(root).kind == "result" and not a.copies


def test_no_in_place_when_the_operand_is_still_needed():
    text = """
HloModule m

ENTRY e {
  x = f32[8]{0} parameter(0)
  a = f32[8]{0} negate(x)
  b = f32[8]{0} exponential(a)
  ROOT t = (f32[8]{0}, f32[8]{0}) tuple(a, b)
}
"""
    a = xlac.jit(text, optimize=False).lowered.assignment
    assert not a.in_place
    x = np.arange(8, dtype=np.float32)
    got = xlac.jit(text, optimize=False)(x)
    np.testing.assert_allclose(got[1], np.exp(-x), rtol=1e-6)


def test_no_in_place_for_transposes_or_different_layouts():
    module = xlac.parse_hlo("""
HloModule m

ENTRY e {
  x = f32[4,4]{1,0} parameter(0)
  a = f32[4,4]{1,0} negate(x)
  t = f32[4,4]{1,0} transpose(a), dimensions={1,0}
  c = f32[4,4]{0,1} negate(t)
  ROOT r = f32[4,4]{1,0} add(c, x)
}
""")
    insts = {i.name: i for i in module.entry.instructions}
    assert may_update_in_place(insts["t"]) == []
    assert may_update_in_place(insts["c"]) == []          # layouts differ
    assert may_update_in_place(insts["a"]) == [0]
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(xlac.jit(module, optimize=False)(x), (x.T) + x)


def test_parameters_and_constants_are_copied_to_results():
    text = """
HloModule m

ENTRY e {
  x = f32[3]{0} parameter(0)
  c = f32[3]{0} constant({1, 2, 3})
  ROOT t = (f32[3]{0}, f32[3]{0}, f32[3]{0}) tuple(x, c, x)
}
"""
    a = BufferAssignment(xlac.parse_hlo(text))
    assert [n for n, _ in a.copies] == [0, 1, 2] and a.temp_size == 0



@pytest.mark.timeout(120)
def test_tuples_sharing_elements_are_walked_once():
    """Each tuple holds an element of the previous one twice: 2**40 paths from the
    root down to ``a``, so reading through tuples must visit each instruction once
    (an equinox train step's optimizer state lowered for minutes before)."""
    depth = 40
    lines = ["HloModule nested", "ENTRY e {", "  p = f32[4] parameter(0)",
             "  a = f32[4] negate(p)", "  t0 = (f32[4], f32[4]) tuple(a, a)"]
    for k in range(1, depth + 1):
        lines += [f"  g{k} = f32[4] get-tuple-element(t{k - 1}), index=0",
                  f"  t{k} = (f32[4], f32[4]) tuple(g{k}, g{k})"]
    lines += [f"  ROOT r = f32[4] get-tuple-element(t{depth}), index=1", "}"]
    a = BufferAssignment(xlac.parse_hlo("\n".join(lines)))
    assert a.temp_size >= 0


FRAGMENTS = """
HloModule m

ENTRY e {
  x = f32[1024]{0} parameter(0)
  y = f32[16]{0} parameter(1)
  a = f32[1024]{0} exponential(x)
  s = f32[16]{0} exponential(y)
  c = f32[1040]{0} concatenate(a, s), dimensions={0}
  zero = f32[] constant(0)
  p = f32[1536]{0} pad(c, zero), padding=0_496
  ROOT r = f32[1536]{0} reverse(p), dimensions={0}
}
"""


def test_temps_are_placed_again_by_size_when_first_fit_leaves_holes():
    """First fit puts the small s between a and c, and the bigger p finds no
    hole when a and s die: placed again largest first, the arena is the
    largest live set (c and p)."""
    exe = xlac.jit(FRAGMENTS, optimize=False)
    a = exe.lowered.assignment
    assert a.temp_size == a.peak_live_bytes() == 4160 + 6144, a.summary()
    x, y = np.linspace(0, 1, 1024).astype(np.float32), np.linspace(0, 1, 16).astype(np.float32)
    np.testing.assert_allclose(exe(x, y), xlac.evaluate(FRAGMENTS, x, y), rtol=1e-6)
