"""HLO text as XLA writes it: every form XLA's parser accepts reads, prints back
with the same meaning (byte for byte where XLA's printer would print it so), and
runs.

The forms were found in XLA's ``xla/hlo/parser/hlo_parser.cc`` and its tests;
the snippets here are written for these tests.  ``xla_dumps/`` holds modules
XLA:CPU printed after optimisation (``jax.jit(f).lower(...).compile().as_text()``,
jax 0.10 on the CPU) with their inputs and jax's results.
"""
from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac.errors import HloParseError, UnsupportedError
from xlac.hlo.parser import MAX_OPERAND_NESTING, parse_hlo
from xlac.shape import FLOAT_FORMATS, PrimitiveType as PT, shape as parse_shape

DUMPS = Path(__file__).parent / "xla_dumps"
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def roundtrip(text: str) -> str:
    """Parse, print; the printed text parses back to the same text."""
    out = parse_hlo(text).to_text()
    assert parse_hlo(out).to_text() == out
    return out


def body(text: str) -> str:
    """The printed module without its header line."""
    return roundtrip(text).split("\n", 2)[2]


def parse_error(text: str) -> str:
    with pytest.raises(HloParseError) as info:
        parse_hlo(text)
    return str(info.value)


# ----------------------------------------------------------------------------
# Modules XLA printed after optimising them
# ----------------------------------------------------------------------------

def _load(name: str):
    with np.load(DUMPS / f"{name}.npz") as d:
        meta = json.loads(bytes(d["meta"]).decode())

        def arr(entry):
            name = entry["dtype"]
            dt = np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)
            return d[entry["key"]].view(dt).reshape(entry["shape"])
        return [arr(e) for e in meta["inputs"]], [arr(e) for e in meta["expected"]]


@pytest.mark.parametrize("name", sorted(p.stem for p in DUMPS.glob("*.hlo")))
def test_optimised_xla_dumps_read_print_and_run(name):
    text = (DUMPS / f"{name}.hlo").read_text(encoding="utf-8")
    printed = roundtrip(text)
    module = parse_hlo(text)
    assert module.stack_frame_index and "StackFrames" in printed   # kept for metadata's stack_frame_id
    assert printed.splitlines()[0] == text.splitlines()[0]           # header as written
    inputs, expected = _load(name)
    got = xlac.jit(text)(*inputs)
    ref = xlac.evaluate(text, *inputs)
    for results in (got, ref):
        results = results if isinstance(results, tuple) else (results,)
        for g, e in zip(results, expected):
            np.testing.assert_allclose(np.asarray(g).astype(np.float64), e.astype(np.float64),
                                       rtol=2e-5, atol=1e-5)


def test_packed_sub_byte_entry_is_refused_in_objects_only(tmp_path):
    text = (DUMPS / "int4.hlo").read_text(encoding="utf-8")
    assert "s4[64]{0:E(4)}" in text
    with pytest.raises(UnsupportedError, match=r"s4\[64\]\{0:E\(4\)\}.*packed"):
        xlac.compile_aot(text, tmp_path / "int4.o")


# ----------------------------------------------------------------------------
# Module structure
# ----------------------------------------------------------------------------

def test_header_name_with_colon_comments_and_line_ends():
    text = "/* about */\nHloModule old_style:\r\n// a comment\r\nENTRY c1 {\r\n  ROOT c = f32[1]{0} constant({7}) // end\r\n}"
    m = parse_hlo(text)
    assert m.name == "old_style" and m.entry.root.literal.tolist() == [7]
    assert parse_hlo(text.replace("\r\n", "\r")).to_text() == m.to_text()


def test_module_without_header_and_entry_defaulting_to_the_last_computation():
    m = parse_hlo("ENTRY main {\n  ROOT p = f32[1,64]{0,1} parameter(0)\n}")
    assert m.name == "module_main" and str(m.entry.root.shape) == "f32[1,64]{0,1}"
    m = parse_hlo("c1 {\n  ROOT a = f32[] constant(1)\n}\nc2 {\n  ROOT b = f32[] constant(2)\n}")
    assert m.entry.name == "c2"
    assert "expected 'HloModule'" in parse_error("garbage\nHloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}")


STACK_FRAMES = """HloModule m, entry_computation_layout={()->pred[]}

FileNames
1 "<embedded module>"
2 "some/module.py"

FunctionNames
1 "main"
2 "method"

FileLocations
1 {file_name_id=1 function_name_id=1 line=153 end_line=153 column=2 end_column=31}
2 {file_name_id=2 function_name_id=2 line=35 end_line=35 column=2 end_column=24}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}

ENTRY constant_pred {
  ROOT constant = pred[] constant(true), metadata={op_type="const" op_name="opname" stack_frame_id=2}
}
"""


def test_stack_frame_tables_are_kept_and_printed_back():
    assert roundtrip(STACK_FRAMES) == STACK_FRAMES
    m = parse_hlo(STACK_FRAMES)
    assert m.stack_frame_index[0] == ("FileNames", ('1 "<embedded module>"', '2 "some/module.py"'))
    assert [t[0] for t in m.stack_frame_index] == ["FileNames", "FunctionNames", "FileLocations",
                                                   "StackFrames"]
    assert m.clone().to_text() == STACK_FRAMES
    broken = STACK_FRAMES.replace("FileLocations\n", "Locations\n")
    assert "expected 'FileLocations'" in parse_error(broken)


def test_multi_line_header_attribute_and_computation_execution_thread():
    text = ('HloModule m, entry_computation_layout={(f32[])->f32[]}, origin_recovery_table={\n'
            '  {"a"} : {"b"},\n  "\n    inner text\n  "\n}\n\n'
            'ENTRY e {\n  ROOT p = f32[] parameter(0)\n}, execution_thread="main_thread"\n')
    assert roundtrip(text) == text


# ----------------------------------------------------------------------------
# Instructions without a result shape; nested operands
# ----------------------------------------------------------------------------

def test_result_shapes_are_inferred_where_xla_infers_them():
    text = """HloModule m
negate_it {
  x = f32[] parameter(0)
  ROOT n = negate(x)
}
same {
  y = f32[] parameter(0)
  ROOT c = copy(y)
}
ENTRY e {
  a = f32[2,10]{1,0} parameter(0)
  b = f32[10,2]{1,0} parameter(1)
  p = pred[] parameter(2)
  s = f32[] parameter(3)
  v = abs(a)
  d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = tuple(v, d)
  g = get-tuple-element(t), index=1
  k = select(p, s, s)
  cond = conditional(p, s, k), true_computation=negate_it, false_computation=same
  ROOT r = tuple(g, cond)
}
"""
    m = parse_hlo(text)
    shapes = {i.name: str(i.shape) for i in m.entry.instructions}
    assert shapes["v"] == "f32[2,10]{1,0}" and shapes["d"] == "f32[2,2]{1,0}"
    assert shapes["g"] == "f32[2,2]{1,0}" and shapes["cond"] == "f32[]"
    assert shapes["r"] == "(f32[2,2]{1,0}, f32[])"
    assert "v = f32[2,10]{1,0} abs(a)" in roundtrip(text)
    a = np.ones((2, 10), np.float32)
    b = np.ones((10, 2), np.float32)
    out = xlac.jit(text)(a, b, np.bool_(True), np.float32(3))
    assert out[0].tolist() == [[10, 10], [10, 10]] and out[1] == -3


@pytest.mark.parametrize("line, words", [
    ("ROOT c = constant(1)", "constant needs its result shape"),
    ("ROOT c = broadcast(s), dimensions={}", "broadcast needs its result shape"),
    ("ROOT c = slice(a), slice={[0:1]}", "slice needs its result shape"),
    ("ROOT c = add(a, s)", "cannot infer the shape of add"),
    ("ROOT c = call(s), to_apply=later", "computation 'later' must be defined before it"),
])
def test_shapes_xla_does_not_infer_are_errors(line, words):
    text = f"HloModule m\nENTRY e {{\n  a = f32[4] parameter(0)\n  s = f32[] parameter(1)\n  {line}\n}}\n" \
           "later {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n"
    assert words in parse_error(text)


def test_nested_operands_become_instructions_named_as_xla_names_them():
    text = """HloModule test

ENTRY test {
    ROOT root = add(f32[10] parameter(0), multiply(f32[10] parameter(1), f32[10] parameter(2)))
}"""
    assert body(text) == """ENTRY test {
  parameter.anon = f32[10]{0} parameter(0)
  parameter.anon.1 = f32[10]{0} parameter(1)
  parameter.anon.2 = f32[10]{0} parameter(2)
  multiply.anon = f32[10]{0} multiply(parameter.anon.1, parameter.anon.2)
  ROOT root = f32[10]{0} add(parameter.anon, multiply.anon)
}
"""
    # a name followed by '(' is an instruction, a name alone an operand
    text = """HloModule test
ENTRY test {
  add = add(f32[10] parameter(0), f32[10] parameter(1))
  ROOT root = tuple(add, add(add, add), add)
}"""
    assert "add.anon = f32[10]{0} add(add, add)" in body(text)
    assert "ROOT root = (f32[10]{0}, f32[10]{0}, f32[10]{0}) tuple(add, add.anon, add)" in body(text)
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(xlac.jit(text)(x, x)[1], 4 * x)


def test_nested_tuple_over_lines_and_broadcast_of_a_scalar():
    text = """HloModule test
ENTRY test {
  ROOT root = get-tuple-element(
    (f32[10], f16[10]) tuple(f32[10] parameter(0), f16[10] parameter(1))
  ), index=0
}"""
    assert "tuple.anon = (f32[10]{0}, f16[10]{0}) tuple(parameter.anon, parameter.anon.1)" in body(text)
    text = "HloModule test\nENTRY test {\n  ROOT root = sqrt(f32[10,10] broadcast(f32[] parameter(0)))\n}"
    assert "broadcast.anon = f32[10,10]{1,0} broadcast(parameter.anon), dimensions={}" in body(text)
    assert xlac.jit(text)(np.float32(4)).tolist() == [[2] * 10] * 10
    bad = "HloModule test\nENTRY test {\n  ROOT root = sqrt(f32[10,10] broadcast(f32[10] parameter(0)))\n}"
    with pytest.raises(xlac.ShapeError, match="dimensions"):      # the verifier's
        xlac.jit(bad)


def test_operand_nesting_is_bounded():
    deep = "f32[] constant(0)"
    for _ in range(MAX_OPERAND_NESTING + 1):
        deep = f"f32[] negate({deep})"
    assert "nested more than" in parse_error(f"HloModule m\nENTRY e {{\n  ROOT r = {deep}\n}}\n")
    ok = "f32[] constant(2)"
    for _ in range(MAX_OPERAND_NESTING - 1):
        ok = f"f32[] negate({ok})"
    assert xlac.evaluate(f"HloModule m\nENTRY e {{\n  ROOT r = {ok}\n}}\n") == 2 * (-1) ** (MAX_OPERAND_NESTING - 1)


# ----------------------------------------------------------------------------
# Async wrappers
# ----------------------------------------------------------------------------

SHORT_FORM = """HloModule AsyncShort, entry_computation_layout={(s32[], s32[])->s32[]}

ENTRY main {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  add-start = ((s32[], s32[]), s32[], s32[]) add-start(a, b), async_execution_thread="parallel", metadata={op_type="add" op_name="sum"}, backend_config="cfg"
  add-update = ((s32[], s32[]), s32[], s32[]) add-update(add-start)
  ROOT add-done = s32[] add-done(add-update), metadata={op_name="done"}
}
"""


def test_short_form_async_ops_print_back_and_run():
    assert roundtrip(SHORT_FORM) == SHORT_FORM
    m = parse_hlo(SHORT_FORM)
    start = m.entry.instruction("add-start")
    assert start.opcode == "async-start"
    wrapped = start.attrs["calls"]
    assert wrapped.root.opcode == "add" and wrapped.root.attrs["metadata"] == start.attrs["metadata"]
    assert [p.name for p in wrapped.parameters] == ["async_param", "async_param.1"]
    assert "async_execution_thread" not in wrapped.root.attrs
    assert xlac.jit(SHORT_FORM)(np.int32(3), np.int32(4)) == 7
    assert xlac.evaluate(SHORT_FORM, np.int32(3), np.int32(4)) == 7


LONG_FORM = """HloModule module, entry_computation_layout={(s32[8]{0}, s32[])->s32[16]{0}}

wrapped {
  p0 = s32[16]{0} parameter(0)
  c = s32[16]{0} copy(p0)
  p1 = s32[8]{0} parameter(1)
  p2 = s32[] parameter(2)
  ROOT dus = s32[16]{0} dynamic-update-slice(c, p1, p2)
}

ENTRY main {
  x = s32[] parameter(1)
  b = s32[16]{0} broadcast(x), dimensions={}
  u = s32[8]{0} parameter(0)
  start = ((s32[16]{0}, s32[8]{0}, s32[]), s32[16]{0}, u32[]) async-start(b, u, x), calls=wrapped
  ROOT done = s32[16]{0} async-done(start), calls=wrapped
}
"""


def test_long_form_async_ops_print_back_and_run():
    assert roundtrip(LONG_FORM) == LONG_FORM
    u = np.arange(8, dtype=np.int32)
    want = np.full(16, 5, np.int32)
    want[5:13] = u
    np.testing.assert_array_equal(xlac.jit(LONG_FORM)(u, np.int32(5)), want)
    np.testing.assert_array_equal(xlac.evaluate(LONG_FORM, u, np.int32(5)), want)


def test_long_form_of_one_instruction_prints_in_short_form():
    text = """HloModule m
wrapped {
  p = f32[4]{0} parameter(0)
  ROOT e = f32[4]{0} exponential(p)
}
ENTRY main {
  x = f32[4]{0} parameter(0)
  s = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(x), calls=wrapped
  ROOT d = f32[4]{0} async-done(s)
}
"""
    printed = roundtrip(text)
    assert "exponential-start(x)" in printed and "exponential-done(s)" in printed
    assert "wrapped {" not in printed                         # XLA does not print it either
    np.testing.assert_allclose(xlac.jit(printed)(np.zeros(4, np.float32)), np.ones(4))


@pytest.mark.parametrize("old, new, words", [
    ("((s32[], s32[]), s32[], s32[]) add-start", "(s32[], s32[], s32[]) add-start",
     "add-start's shape must be ((operands), result, context...)"),
    ("add-update(add-start)", "multiply-update(add-start)", "continues an async add, not a multiply"),
    ("add-done(add-update)", "add-done(a)", "takes one operand, the add-start or add-update"),
])
def test_async_short_form_errors(old, new, words):
    assert words in parse_error(SHORT_FORM.replace(old, new))


def test_async_wrapped_shapes_are_verified():
    bad = LONG_FORM.replace("async-start(b, u, x)", "async-start(u, b, x)")
    with pytest.raises(xlac.ShapeError, match="async-start: operand 0 is s32.8.*expects s32.16"):
        xlac.jit(bad)
    bad = LONG_FORM.replace("((s32[16]{0}, s32[8]{0}, s32[]), s32[16]{0}, u32[]) async-start",
                            "((s32[16]{0}, s32[8]{0}, s32[]), s32[8]{0}, u32[]) async-start")
    with pytest.raises(xlac.ShapeError, match="element 1 of the result"):
        xlac.jit(bad)


# ----------------------------------------------------------------------------
# Element types and constants
# ----------------------------------------------------------------------------

NARROW = sorted(FLOAT_FORMATS, key=lambda t: t.value) + [PT.S1, PT.S2, PT.S4, PT.U1, PT.U2, PT.U4]


@pytest.mark.parametrize("pt", NARROW, ids=lambda t: t.value)
def test_every_value_of_a_narrow_type_round_trips_bit_for_bit(pt):
    values = np.arange(1 << pt.bit_width, dtype=np.uint8).view(pt.dtype)
    text = f"HloModule m\nENTRY e {{\n  ROOT c = {pt.value}[{len(values)}]{{0}} constant({{...}})\n}}\n"
    from xlac.hlo.printer import format_literal
    text = text.replace("{...}", format_literal(values, xlac.Shape(pt, values.shape)))
    got = parse_hlo(text).entry.root.literal
    assert got.dtype == pt.dtype and got.tobytes() == values.tobytes()
    assert roundtrip(text) == roundtrip(roundtrip(text))
    # and through evaluation and compiled code: the constant is the result
    assert xlac.evaluate(text).tobytes() == values.tobytes()
    assert xlac.jit(text)().tobytes() == values.tobytes()


NAN_CONSTANTS = """HloModule nans
ENTRY e {
  a = bf16[4]{0} constant({-nan(0x7f), -nan(0x3f), nan, -nan})
  b = f32[3]{0} constant({nan(0x1), -nan, -nan(0x400001)})
  c = f64[2]{0} constant({nan(0x8000000000001), -nan(0x1)})
  d = f16[2]{0} constant({nan(0x1), -nan(0x3ff)})
  e = f8e5m2[2]{0} constant({nan(0x1), -nan})
  f = f8e4m3fn[2]{0} constant({nan, -nan})
  g = f8e4m3b11fnuz[1]{0} constant({-nan})
  ROOT t = (bf16[4]{0}, f32[3]{0}, f64[2]{0}, f16[2]{0}, f8e5m2[2]{0}, f8e4m3fn[2]{0}, f8e4m3b11fnuz[1]{0}) tuple(a, b, c, d, e, f, g)
}
"""


def test_nan_signs_and_payloads_survive_parse_print_evaluate_and_compile():
    m = parse_hlo(NAN_CONSTANTS)
    bits = {i.name: i.literal.view(_UINT[i.literal.dtype.itemsize]).tolist()
            for i in m.entry.instructions if i.opcode == "constant"}
    assert bits["a"] == [0xFFFF, 0xFFBF, 0x7FC0, 0xFFC0]
    assert bits["b"] == [0x7F800001, 0xFFC00000, 0xFFC00001]
    assert bits["c"] == [0x7FF8000000000001, 0xFFF0000000000001]
    assert bits["d"] == [0x7C01, 0xFFFF] and bits["e"] == [0x7D, 0xFE]
    assert bits["f"] == [0x7F, 0xFF] and bits["g"] == [0x80]
    printed = roundtrip(NAN_CONSTANTS)
    assert "-nan(0x7f), -nan(0x3f), nan, -nan" in printed and "nan(0x1), -nan, -nan(0x400001)" in printed
    for results in (xlac.evaluate(NAN_CONSTANTS), xlac.jit(NAN_CONSTANTS)()):
        for r, name in zip(results, "abcdefg"):
            assert np.asarray(r).view(_UINT[r.dtype.itemsize]).tolist() == bits[name], name


@pytest.mark.parametrize("decl, words", [
    ("bf16[] constant(nan(0x3ff))", "NaN payload 0x3ff does not fit the 7 mantissa bits of bf16"),
    ("f8e4m3fn[] constant(nan(0x1))", "f8e4m3fn has a single NaN: it takes no payload"),
    ("f8e4m3b11fnuz[] constant(nan(0x1))", "single NaN"),
    ("f32[] constant(nan(0x0))", "must not be 0"),
    ("f16[] constant(-65520)", "out of range for f16"),
    ("bf16[] constant(1e100)", "out of range for bf16"),
    ("f64[] constant(1.8e308)", "out of range for f64"),
    ("f32[] constant(1e39)", "out of range for f32"),
    ("c64[] constant((1e100, 0))", "out of range for f32"),
    ("f8e4m3fn[] constant(1000)", "out of range for f8e4m3fn"),
    ("f8e8m0fnu[] constant(0)", "out of range for f8e8m0fnu"),
    ("u4[] constant(16)", "out of range for u4"),
    ("u4[] constant(-1)", "out of range for u4"),
    ("s4[] constant(-9)", "out of range for s4"),
    ("s4[] constant(8)", "out of range for s4"),
    ("u32[] constant(4294967296)", "out of range for u32"),
])
def test_constants_xla_rejects(decl, words):
    assert words in parse_error(f"HloModule m\nENTRY e {{\n  ROOT c = {decl}\n}}\n")


@pytest.mark.parametrize("decl, bits", [
    ("u64[] constant(-1)", 2**64 - 1),                          # a negative int64: two's complement
    ("u64[] constant(9223372036854775808)", 2**63),
    ("bf16[] constant(-65505)", 0xC780),                        # rounds into range
    ("f16[] constant(65519)", 0x7BFF),
    ("f8e4m3fn[] constant(460)", 0x7E),                          # 448, not NaN
    ("f8e4m3fn[] constant(inf)", 0x7F),                          # no inf: its NaN, as ml_dtypes
    ("f4e2m1fn[] constant(100)", 0x7),                           # saturates, as ml_dtypes
    ("s4[] constant(-8)", 0x8),
])
def test_constants_xla_accepts(decl, bits):
    literal = parse_hlo(f"HloModule m\nENTRY e {{\n  ROOT c = {decl}\n}}\n").entry.root.literal
    assert int(literal.view(_UINT[literal.dtype.itemsize])) == bits


# ----------------------------------------------------------------------------
# Layouts: annotations, and the entry computation layout
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "f32[8,128]{1,0:T(8,128)S(1)}", "f32[123,456,789]{0,1,2:T(2,*,128)}", "bf16[12,45,78]{2,1,0:T(2,*,128)(2,1)}",
    "s4[12,45]{1,0:T(2,128)E(4)}", "pred[12,45]{1,0:T(2,128)S(3)SC(1:200)}", "pred[12,45]{1,0:S(3)SC(0:10)(1:4,5)}",
    "f32[12,45]{1,0:T(16,128)M(1024)}", "u32[]{:S(2)}", "u32[]{:T(128)}", "f32[4]{0:L(8)}",
    "f32[2,3]{0,1:P(3,5)V(1)}", "f32[4]{0:D(D)}", "f32[4]{0:#(u32)*(u16)}",
])
def test_layout_annotations_print_back(text):
    assert str(parse_shape(text)) == text


def test_layout_annotation_spellings_and_errors():
    assert str(parse_shape("f32[2,3,4]{0,1,2:T(2, * , 128)}")) == "f32[2,3,4]{0,1,2:T(2,*,128)}"
    for bad, words in [("f32[10,10]{1,0:D(X,C)}", "dimension level type"),
                       ("f32[10,10]{1,0:T(128,8)P(f32[10,10])}", "only for sparse arrays"),
                       ("f32[10,10]{1,0:S(1)T(8,128)}", "in this order")]:
        with pytest.raises(ValueError, match=words):
            parse_shape(bad)


TPU_STYLE = """HloModule m, entry_computation_layout={(f32[8,4,1]{0,1,2:T(4,128)})->f32[8,4,1]{0,1,2:T(4,128)}}

ENTRY main {
  p = f32[8,4,1]{0,1,2:T(4,128)} parameter(0)
  c = f32[8,4,1]{1,2,0:T(1,128)} copy(p)
  n = f32[8,4,1]{1,2,0:T(1,128)S(1)} negate(c)
  ROOT r = f32[8,4,1]{0,1,2:T(4,128)} copy(n)
}
"""


def test_annotated_layouts_run_where_their_meaning_allows(tmp_path):
    assert roundtrip(TPU_STYLE) == TPU_STYLE
    x = np.random.default_rng(0).standard_normal((8, 4, 1)).astype(np.float32)
    np.testing.assert_array_equal(xlac.jit(TPU_STYLE)(x), -x)
    np.testing.assert_array_equal(xlac.evaluate(TPU_STYLE, x), -x)
    # In an object for C the entry's buffers are laid out as written.  T(4,128) on
    # [8,4,1] with minor-to-major {0,1,2} tiles dimensions 1 and 0 (4 and 8 elements)
    # by one 4x128 tile: that is padding dimension 0 to 128.
    res = xlac.compile_aot(TPU_STYLE, tmp_path / "m.o", header=tmp_path / "m.h")
    assert str(res.params[0].shape) == "f32[8,4,1]{0,1,2:P(128,4,1)}"
    assert "padded to [128,4,1]" in (tmp_path / "m.h").read_text(encoding="utf-8")
    # Two 8x128 tiles along the minor dimension reorder the elements: refused by name.
    tiled = TPU_STYLE.replace("f32[8,4,1]{0,1,2:T(4,128)}", "f32[16,256]{1,0:T(8,128)}").replace(
        "f32[8,4,1]{1,2,0:T(1,128)}", "f32[16,256]{1,0}").replace("f32[8,4,1]{1,2,0:T(1,128)S(1)}",
                                                                  "f32[16,256]{1,0}")
    np.testing.assert_array_equal(xlac.jit(tiled)(np.ones((16, 256), np.float32)), -np.ones((16, 256)))
    with pytest.raises(UnsupportedError, match=r"tiled layout f32\[16,256\]\{1,0:T\(8,128\)\} of p"):
        xlac.compile_aot(tiled, tmp_path / "t.o")


def test_bitcast_reads_memory_in_both_layouts():
    text = """HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  t = f32[3,2]{0,1} bitcast(p)
  i = s32[3,2]{0,1} bitcast(t)
  ROOT r = (f32[3,2]{0,1}, s32[3,2]{0,1}) tuple(t, i)
}
"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for out in (xlac.jit(text)(x), xlac.evaluate(text, x)):
        np.testing.assert_array_equal(out[0], x.T)
        np.testing.assert_array_equal(out[1], x.T.view(np.int32))


ENTRY_LAYOUT = """HloModule layouts, entry_computation_layout={(f32[8,16,6]{1,2,0}) -> f32[8,16]}

add {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT add = f32[] add(lhs, rhs)
}

ENTRY reduce {
  input = f32[8,16,6]{0,1,2} parameter(0)
  zero = f32[] constant(0)
  ROOT reduce = f32[8,16]{0,1} reduce(input, zero), dimensions={2}, to_apply=add
}
"""


def test_entry_computation_layout_is_kept_and_is_the_calling_convention():
    m = parse_hlo(ENTRY_LAYOUT)
    # kept as written (a shape without a layout has the default one, as in XLA)
    assert roundtrip(ENTRY_LAYOUT).splitlines()[0] == (
        "HloModule layouts, entry_computation_layout={(f32[8,16,6]{1,2,0})->f32[8,16]{1,0}}")
    params, result = m.calling_convention
    assert str(params[0]) == "f32[8,16,6]{1,2,0}" and str(result) == "f32[8,16]{1,0}"
    assert str(m.entry_computation_layout[0][0]) == "f32[8,16,6]{0,1,2}"   # the entry's own
    x = np.random.default_rng(1).standard_normal((8, 16, 6)).astype(np.float32)
    exe = xlac.jit(ENTRY_LAYOUT)
    np.testing.assert_allclose(exe(x), x.sum(-1), rtol=1e-5)
    assert [str(s) for s in exe.parameter_shapes] == ["f32[8,16,6]{1,2,0}"]
    bad = ENTRY_LAYOUT.replace("(f32[8,16,6]{1,2,0})", "(f32[8,16,7]{1,2,0})")
    with pytest.raises(Exception, match="entry_computation_layout"):
        parse_hlo(bad)


# ----------------------------------------------------------------------------
# XLA's newer elementwise opcodes
# ----------------------------------------------------------------------------

TRIG = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh"]
NUMPY = {"acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
         "atan": np.arctan, "atanh": np.arctanh, "cosh": np.cosh, "sinh": np.sinh}


@pytest.mark.parametrize("et", ["f32", "f64", "bf16"])
def test_inverse_and_hyperbolic_trigonometry(et):
    lines = [f"  p = {et}[41] parameter(0)"] + [f"  r{k} = {et}[41] {op}(p)" for k, op in enumerate(TRIG)]
    lines.append(f"  ROOT t = ({', '.join([f'{et}[41]'] * len(TRIG))}) tuple({', '.join(f'r{k}' for k in range(len(TRIG)))})")
    text = "HloModule trig\nENTRY e {\n" + "\n".join(lines) + "\n}\n"
    assert roundtrip(text) == roundtrip(roundtrip(text))
    dt = parse_shape(f"{et}[]").dtype
    x = np.linspace(-3, 3, 41).astype(dt)
    tol = 1e-2 if et == "bf16" else 1e-6
    for results in (xlac.jit(text)(x), xlac.evaluate(text, x)):
        for op, r in zip(TRIG, results):
            with np.errstate(invalid="ignore", divide="ignore"):
                want = NUMPY[op](x.astype(np.float64))
            np.testing.assert_allclose(np.asarray(r).astype(np.float64), want, rtol=tol, atol=tol, err_msg=op)


def test_inverse_trigonometry_type_errors():
    with pytest.raises(xlac.ShapeError, match="acos: needs a floating-point or complex"):
        xlac.jit("HloModule m\nENTRY e {\n  p = s32[2] parameter(0)\n  ROOT r = s32[2] acos(p)\n}\n")
    with pytest.raises(UnsupportedError, match="sinh"):
        xlac.jit("HloModule m\nENTRY e {\n  p = c64[2] parameter(0)\n  ROOT r = c64[2] sinh(p)\n}\n")
