"""bitcast-convert between element types of different widths (spec:
BitcastConvertType, "Bitcast-converting to primitive type of different
width"): a narrower type adds a minor-most dimension of the width ratio, a
wider one removes it; the bytes are those of memory, little-endian as XLA on
x86.  Builder, shape rule and errors, evaluator, the op-expander expansion
(JIT, and an object from C), HLO text."""
import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.codegen.compiler import lower
from test_aot import build_and_run, needs_cc, runtime_obj  # noqa: F401  (runtime_obj is a fixture)

# (operand shape, new element type, result shape)
CASES = [
    ("f32[4]", "u8", "u8[4,4]"),                 # the examples
    ("u8[4,4]", "f32", "f32[4]"),
    ("f64[]", "s32", "s32[2]"),
    ("s32[2]", "f64", "f64[]"),
    ("u32[3]", "u16", "u16[3,2]"),
    ("u16[3,2]", "u32", "u32[3]"),
    ("f32[10]", "f16", "f16[10,2]"),             # the spec's examples
    ("f32[]", "f16", "f16[2]"),
    ("f16[10,2]", "f32", "f32[10]"),
    ("f64[2,3]", "s8", "s8[2,3,8]"),
    ("s8[2,3,8]", "f64", "f64[2,3]"),
    ("bf16[5]", "u8", "u8[5,2]"),
    ("u8[5,2]", "bf16", "bf16[5]"),
    ("s64[3]", "f16", "f16[3,4]"),
    ("f16[3,4]", "u64", "u64[3]"),
    ("c128[3]", "c64", "c64[3,2]"),
    ("c64[3,2]", "c128", "c128[3]"),
    ("c128[]", "c64", "c64[2]"),
    ("s16[2,0,2]", "s32", "s32[2,0]"),
    ("f32[0]", "u16", "u16[0,2]"),
]


def build(operand: str, new_type: str):
    b = xlac.XlaBuilder("bc")
    x = ops.parameter(b, 0, xlac.shape(operand), "x")
    return b.build(ops.bitcast_convert_type(x, xlac.PrimitiveType.from_name(new_type)))


def random_bits(shape: xlac.Shape, seed: int = 0) -> np.ndarray:
    """Any bit patterns at all (NaN payloads, denormals, negative zeros)."""
    raw = np.random.default_rng(seed).integers(0, 256, shape.byte_size(), dtype=np.uint8)
    return np.frombuffer(raw.tobytes(), shape.dtype).reshape(shape.dimensions)


def reference(x: np.ndarray, result: xlac.Shape) -> np.ndarray:
    # The bytes in memory order on a little-endian machine, reinterpreted.
    return np.ascontiguousarray(x).reshape(-1).view(result.dtype).reshape(result.dimensions)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("operand, new_type, result", CASES)
def test_bits_move_as_in_memory(operand, new_type, result, optimize):
    comp = build(operand, new_type)
    assert comp.module.entry.root.shape.compatible(xlac.shape(result))
    x = random_bits(xlac.shape(operand))
    want = reference(x, xlac.shape(result))
    assert same_bits(xlac.evaluate(comp, x), want)
    assert same_bits(xlac.jit(comp, optimize=optimize)(x), want)


def test_little_endian_by_value():
    b = xlac.XlaBuilder("le")
    x = ops.parameter(b, 0, xlac.shape("u32[2]"), "x")
    comp = b.build(ops.bitcast_convert_type(x, xlac.U8))
    got = xlac.jit(comp)(np.array([0x04030201, 0xA0B0C0D0], np.uint32))
    np.testing.assert_array_equal(got, [[1, 2, 3, 4], [0xD0, 0xC0, 0xB0, 0xA0]])
    one = xlac.jit(build("f64[]", "s32"))(np.float64(1.0))
    np.testing.assert_array_equal(one, [0, 0x3FF00000])


def test_round_trip_keeps_every_bit():
    # f32 -> u8 -> f32 and f64 -> u16 -> f64 return NaN payloads and -0 unchanged.
    text = """
HloModule m
ENTRY e {
  x = f32[6]{0} parameter(0)
  y = f64[2]{0} parameter(1)
  bx = u8[6,4]{1,0} bitcast-convert(x)
  by = u16[2,4]{1,0} bitcast-convert(y)
  x2 = f32[6]{0} bitcast-convert(bx)
  y2 = f64[2]{0} bitcast-convert(by)
  ROOT t = (f32[6]{0}, f64[2]{0}) tuple(x2, y2)
}
"""
    x = np.array([0x7FC00001, 0xFF800000, 0x80000000, 1, 0x7F7FFFFF, 0x7FBFFFFF], np.uint32).view(np.float32)
    y = np.array([0x7FF0000000000ABC, 0x8000000000000001], np.uint64).view(np.float64)
    for got in (xlac.evaluate(text, x, y), xlac.jit(text)(x, y)):
        assert same_bits(got[0], x) and same_bits(got[1], y)


def test_layouts_are_logical():
    # The new dimension is the minor-most *logical* dimension whatever the layouts.
    text = """
HloModule m
ENTRY e {
  x = f32[4,3]{0,1} parameter(0)
  y = u8[4,3,4]{0,2,1} bitcast-convert(x)
  z = f32[4,3]{1,0} bitcast-convert(y)
  ROOT t = (u8[4,3,4]{0,2,1}, f32[4,3]{1,0}) tuple(y, z)
}
"""
    x = np.arange(12, dtype=np.float32).reshape(4, 3) * 1.5 - 3
    for y, z in (xlac.evaluate(text, x), xlac.jit(text)(x)):
        assert same_bits(y, x.view(np.uint8).reshape(4, 3, 4))
        assert same_bits(z, x)


def test_expanded_into_one_loop():
    lowered = lower(build("f64[64,32]", "u16").module)
    entry = [i.opcode for i in lowered.hlo.entry.instructions if i.opcode != "parameter"]
    assert entry == ["fusion"]
    fused = lowered.hlo.entry.root.attrs["calls"]
    assert any(i.opcode == "shift-right-logical" for i in fused.instructions)
    lowered = lower(build("u16[64,32,4]", "f64").module)
    assert [i.opcode for i in lowered.hlo.entry.instructions if i.opcode != "parameter"] == ["fusion"]


def test_same_width_stays_elementwise():
    lowered = lower(build("f32[8]", "s32").module)
    fused = [i.opcode for c in lowered.hlo.computations for i in c.instructions]
    assert "bitcast-convert" in fused and "shift-right-logical" not in fused


@needs_cc
def test_from_c(tmp_path, runtime_obj):  # noqa: F811
    text = """
HloModule m
ENTRY e {
  x = f32[4]{0} parameter(0)
  y = u8[3,8]{1,0} parameter(1)
  z = c128[2]{0} parameter(2)
  a = u8[4,4]{1,0} bitcast-convert(x)
  b = f64[3]{0} bitcast-convert(y)
  c = c64[2,2]{1,0} bitcast-convert(z)
  ROOT t = (u8[4,4]{1,0}, f64[3]{0}, c64[2,2]{1,0}) tuple(a, b, c)
}
"""
    module = xlac.parse_hlo(text)
    args = [random_bits(p.shape, k) for k, p in enumerate(module.entry.parameters)]
    _, outputs, _ = build_and_run(module, args, tmp_path, runtime_obj, name="bc")
    for got, want in zip(outputs, xlac.evaluate(text, *args)):
        assert same_bits(got, want)


def test_text_round_trip():
    text = build("f32[10]", "f16").as_hlo_text()
    assert "f16[10,2]{1,0} bitcast-convert(x)" in text
    module = xlac.parse_hlo(text)
    assert module.to_text() == text


@pytest.mark.parametrize("operand, new_type, message", [
    ("f16[10,3]", "f32", "bitcast f16 -> f32 needs a last dimension of size 2, the operand has dimensions [10, 3]"),
    ("u8[]", "u16", "needs a last dimension of size 2, the operand has dimensions []"),
    ("u8[4,2]", "f64", "needs a last dimension of size 8"),
    ("c64[2]", "u8", "cannot bitcast between complex and real types (c64 -> u8)"),
    ("f64[2]", "c64", "cannot bitcast between complex and real types"),
    ("pred[8]", "u8", "cannot bitcast to or from pred"),
    ("u8[8]", "pred", "cannot bitcast to or from pred"),
])
def test_shape_errors_name_the_op_and_the_rule(operand, new_type, message):
    with pytest.raises(xlac.ShapeError, match="^bitcast-convert: ") as info:
        build(operand, new_type)
    assert message in str(info.value) and operand.split("[")[0] in str(info.value)


def test_text_with_a_wrong_result_shape_is_an_error():
    text = """
HloModule m
ENTRY e {
  x = f32[4]{0} parameter(0)
  ROOT y = u8[4,2]{1,0} bitcast-convert(x)
}
"""
    with pytest.raises(xlac.ShapeError, match=r"bitcast-convert: result u8\[4,2\]\{1,0\} should be u8\[4,4\]"):
        xlac.jit(text)


def test_bf16_view_matches_ml_dtypes():
    x = np.array([1.5, -2.25, np.inf], ml_dtypes.bfloat16)
    got = xlac.jit(build("bf16[3]", "u8"))(x)
    np.testing.assert_array_equal(got, x.view(np.uint8).reshape(3, 2))


def _nibbles(x: np.ndarray) -> np.ndarray:
    """The 4-bit pieces of ``x``'s bytes in memory order, lowest nibble first, as
    XLA:CPU gives them (checked against jax on its CPU: tests' doc)."""
    raw = np.frombuffer(np.ascontiguousarray(x).tobytes(), np.uint8)
    return np.stack([raw & 0xF, raw >> 4], axis=-1).reshape(-1)


@pytest.mark.parametrize("operand, new_type, result", [
    ("s8[3]", "u4", "u4[3,2]"), ("f32[2]", "s4", "s4[2,8]"), ("bf16[]", "u4", "u4[4]"),
    ("u4[3,2]", "u8", "u8[3]"), ("s4[2,16]", "f64", "f64[2]"), ("s4[4]", "f16", "f16[]")])
def test_four_bit_types_split_and_join_nibbles(operand, new_type, result):
    """4-bit types of another width (jax's lax_test: int4 <-> every type), with
    the nibble order of XLA:CPU (a byte's low nibble first)."""
    comp = build(operand, new_type)
    src, out = xlac.shape(operand), xlac.shape(result)
    if src.element_type.bit_width == 4:
        x = np.random.default_rng(1).integers(0, 16, src.dimensions).astype(src.dtype)
        packed = (x.reshape(-1, 2)[:, 0].astype(np.uint8) & 0xF) | (x.reshape(-1, 2)[:, 1].astype(np.uint8) << 4)
        want = packed.view(out.dtype).reshape(out.dimensions)
    else:
        x = random_bits(src)
        want = _nibbles(x).astype(out.dtype).reshape(out.dimensions)
    assert same_bits(xlac.jit(comp)(x), want)
    assert same_bits(xlac.evaluate(comp, x), want)
