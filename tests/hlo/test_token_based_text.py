"""HLO text is token-based, as XLA's parser reads it: line ends are white space.

Each module below is written for this test in the form of a module of XLA's own
tests (``xla/hlo/parser/hlo_parser_test.cc``, ``xla/tests/*.cc``,
``xla/service/cpu/tests/``) that XLA's parser (jaxlib 0.10.2) accepts and that
a line-based reader refused: several instructions on a line, shapes, operands,
attribute values and computation headers over several lines, strings across a
line end, computations written inside an attribute, and an array constant
written as one scalar.  Each must parse, print back to text that parses to the
same text, and compute what XLA computes.
"""
from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.errors import HloParseError
from xlac.hlo.parser import parse_hlo

ADD = """add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
"""

# name -> (module text, inputs, expected result)
FORMS = {
    "two_instructions_on_a_line": ("""HloModule m
ENTRY e {
  a = f32[2] parameter(0)  b = f32[2] parameter(1)
  c = f32[2] add(a, b), metadata={op_name="c"} ROOT d = f32[2] multiply(c, b) }
""", [np.float32([1, 2]), np.float32([3, 4])], np.float32([12, 24])),

    "whole_module_on_one_line": (
        "HloModule m, entry_computation_layout={(f32[4]{0})->f32[]} " + ADD.replace("\n", " ") +
        "ENTRY e { a = f32[4] parameter(0) z = f32[] constant(0) "
        "ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=add }",
        [np.float32([1, 2, 3, 4])], np.float32(10)),

    "tuple_shapes_over_lines": ("""HloModule m
ENTRY e (p: (f32[2],
             s32[3])) -> f32[2] {
  p = (f32[2]{0}
       , s32[3]{
       0}) parameter(0)
  ROOT g = f32[2] get-tuple-element((f32[2],
      s32[3]) p), index=0
}
""", [(np.float32([5, 6]), np.int32([1, 2, 3]))], np.float32([5, 6])),

    "instruction_over_lines": ("""HloModule m
ENTRY e {
  a
    =
    f32[2]
    parameter(0)
  ROOT
  n = f32[2] negate(
     a
  )
}
""", [np.float32([1, -2])], np.float32([-1, 2])),

    "attribute_values_over_lines": ("""HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  t = f32[3,2] transpose(a),
     dimensions={1,
                 0}, metadata={op_name="t"
                 source_file="f.py" source_line=3}
  s = f32[2,2] slice(t), slice={[0:
     2], [0:2]}
  ROOT r = f32[2,2] negate(s), frontend_attributes={
        _xla_a="0",
        _xla_b="1"
     }
}
""", [np.arange(6, dtype=np.float32).reshape(2, 3)], -np.float32([[0, 3], [1, 4]])),

    "attribute_value_on_the_next_line": ("""HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(a), custom_call_target=
    "xlac.test_identity", backend_config=
    "a
b"
}
""", None, None),

    "window_over_lines": ("""HloModule m
ENTRY e {
  a = f32[1,3,3,1] parameter(0)
  k = f32[2,2,1,1] parameter(1)
  ROOT c = f32[1,2,2,1] convolution(a, k), window={size=2x2
     stride=1x1}, dim_labels=b01f_01io->b01f
}
""", [np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1), np.ones((2, 2, 1, 1), np.float32)],
        np.float32([8, 12, 20, 24]).reshape(1, 2, 2, 1)),

    "computation_headers_and_attributes_over_lines": ("""HloModule m,
  entry_computation_layout={(f32[4]{0})->f32[]},
  replica_count=1
add
  (x: f32[], y: f32[])
  -> f32[]
{
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
, execution_thread="main"
ENTRY
  e
{
  a = f32[4] parameter(0)  // a comment
  z = f32[] /* another */ constant(0)
  ROOT r = f32[] reduce(a, z),
    dimensions={0},
    to_apply=add
}
""", [np.float32([1, 2, 3, 4])], np.float32(10)),

    "computation_written_in_the_attribute": ("""HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  z = f32[] constant(1)
  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply={
    x = f32[] parameter(0)
    y = f32[] parameter(1)
    ROOT p = f32[] multiply(x, y)
  }
}
""", [np.float32([1, 2, 3, 4])], np.float32(24)),

    "async_call_with_its_computation_in_the_attribute": ("""HloModule m
ENTRY e {
  p0 = f32[] parameter(0)
  p1 = s32[] parameter(1)
  call-start = ((f32[], s32[]), (f32[], s32[]), s32[]) call-start(p0, p1), to_apply={
    q0 = f32[] parameter(0)
    q1 = s32[] parameter(1)
    ROOT t = (f32[], s32[]) tuple(q0, q1)
  }, async_execution_thread="parallel_thread"
  ROOT call-done = (f32[], s32[]) call-done(call-start)
}
""", [np.float32(2.5), np.int32(7)], (np.float32(2.5), np.int32(7))),

    "array_constant_written_as_a_scalar": ("""HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[4]{0} constant(5)
  ROOT r = f32[4] add(a, c)
}
""", [np.float32([1, 1, 1, 1])], np.float32([6, 1, 1, 1])),

    "custom_call_literal_shape_then_value": ("""HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(a), custom_call_target="xlac.test_identity", literal=s32[2]{0} {1, 2}
}
""", None, None),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_form_parses_and_prints_back(name):
    text = FORMS[name][0]
    printed = parse_hlo(text).to_text()
    assert parse_hlo(printed).to_text() == printed


@pytest.mark.parametrize("name", sorted(n for n, f in FORMS.items() if f[1] is not None))
def test_form_computes_what_xla_computes(name):
    text, inputs, expected = FORMS[name]
    for fn in (xlac.jit(text), lambda *a: xlac.evaluate(text, *a)):
        got = fn(*inputs)
        if isinstance(expected, tuple):
            for g, e in zip(got, expected):
                np.testing.assert_array_equal(np.asarray(g), e)
        else:
            np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_values_spanning_lines_are_read_whole():
    m = parse_hlo(FORMS["attribute_values_over_lines"][0])
    r = m.entry.root
    assert "_xla_b" in str(r.attrs["frontend_attributes"])
    t = next(i for i in m.entry.instructions if i.name == "t")
    assert tuple(t.attrs["dimensions"]) == (1, 0)
    c = parse_hlo(FORMS["attribute_value_on_the_next_line"][0]).entry.root
    assert str(c.attrs["backend_config"]) == '"a\nb"'
    c = parse_hlo(FORMS["custom_call_literal_shape_then_value"][0]).entry.root
    assert str(c.attrs["literal"]) == "s32[2]{0} {1, 2}"


def test_computation_in_an_attribute_is_named_as_xla_names_it():
    m = parse_hlo(FORMS["computation_written_in_the_attribute"][0])
    (nested,) = [c for c in m.computations if not c.is_entry]
    assert nested.name == "_" and m.entry.root.attrs["to_apply"] is nested
    # A second one, and a module computation named `_`, get unique names.
    text = ("HloModule m\n_ {\n  ROOT c = f32[] constant(0)\n}\n" + ADD +
            "ENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] call(), to_apply=_\n"
            "  r1 = f32[] reduce(a, z), dimensions={0}, to_apply={ x = f32[] parameter(0)\n"
            "    y = f32[] parameter(1) ROOT m = f32[] maximum(x, y) }\n"
            "  ROOT r2 = f32[] reduce(a, r1), dimensions={0}, to_apply={ x = f32[] parameter(0)\n"
            "    y = f32[] parameter(1) ROOT m = f32[] minimum(x, y) }\n}\n")
    m = parse_hlo(text)
    assert sorted(c.name for c in m.computations) == ["_", "_.1", "_.2", "add", "e"]
    assert float(xlac.jit(text)(np.float32([3, 1, 2, 0]))) == 0


def test_array_constant_written_as_a_scalar_is_read_as_xla_reads_it():
    # XLA's dense-literal reader stores the scalar as the first element and
    # leaves the others zero (jaxlib 0.10.2 prints `{5, 0, 0, 0}` for it).
    def const(decl):
        return parse_hlo(f"HloModule m\nENTRY e {{\n  ROOT c = {decl}\n}}\n").entry.root.literal

    assert const("f32[4] constant(5)").tolist() == [5, 0, 0, 0]
    assert const("s8[2,2]{0,1} constant(-3)").tolist() == [[-3, 0], [0, 0]]
    assert const("pred[3] constant(true)").tolist() == [True, False, False]
    assert const("bf16[2] constant(inf)").astype(np.float32).tolist() == [np.inf, 0]
    assert parse_hlo("HloModule m\nENTRY e {\n  ROOT c = f32[4] constant(5)\n}\n").to_text().count(
        "constant({5, 0, 0, 0})") == 1


@pytest.mark.parametrize("decl,words", [
    ("c64[2] constant(1)", "a complex constant of shape c64[2]{0} is written as nested braces"),
    ("f32[2,0] constant(1)", "a constant with no elements"),
    ("u8[3] constant(300)", "300 is out of range for u8"),
    ("s32[3] constant(1.5)", "expected an integer"),
    ("f32[3] constant(5, 6)", "expected ')' after the value, found ','"),
    ("f32[3] constant(x)", "expected '{' of dimension 0 of the constant, found 'x'"),
])
def test_scalar_array_constants_xla_refuses(decl, words):
    with pytest.raises(HloParseError, match="line 3, column") as info:
        parse_hlo(f"HloModule m\nENTRY e {{\n  ROOT c = {decl}\n}}\n")
    assert words in str(info.value)


def test_empty_padding_still_ends_with_its_line():
    # A scalar's pad prints `padding=` with nothing after it: the next line is
    # the next instruction, not the value.
    text = ("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  z = f32[] constant(0)\n"
            "  p = f32[] pad(a, z), padding=\n  ROOT n = f32[] negate(p)\n}\n")
    m = parse_hlo(text)
    assert parse_hlo(m.to_text()).to_text() == m.to_text()
    assert float(xlac.jit(text)(np.float32(2))) == -2


@pytest.mark.parametrize("text,line,column,words", [
    # A bracket left open in a value that spans lines takes the computation's '}':
    # the error names the bracket and where it closes.
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p), metadata={op_name=\"x\"\n}\n",
     4, 39, "unterminated '{' of attribute 'metadata': it closes only at line 5, column 1"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p), metadata={op_name=\"x\"\n",
     4, 39, "unterminated '{'"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT b = f32[2] broadcast(p), dimensions={0, a=1\n}\n",
     4, 48, "expected an integer, found 'a' (the '{' of attribute 'dimensions' at line 4, column 44 closes "
     "only at line 5, column 1: is it unterminated?)"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p), backend_config=\"abc\n}\n",
     4, 45, "unterminated string"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p) 7\n}\n",
     4, 29, "unexpected '7' after instruction 'a'"),
    ("HloModule m\nENTRY e {\n  p = (f32[2],\n    f33[2]) parameter(0)\n  ROOT a = f32[2] get-tuple-element(p), index=0\n}\n",
     4, 5, "bad shape: unknown element type"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] negate(p), metadata=\n}\n",
     4, 39, "missing value for attribute 'metadata'"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] all-reduce(p), replica_groups="
     "mesh['x'=2], device_ids=(0,1) {'z'}, to_apply=add\n}\n",
     4, 49, "axis 'z' is not an axis of the mesh"),
])
def test_errors_keep_line_and_column(text, line, column, words):
    with pytest.raises(HloParseError) as info:
        parse_hlo(text)
    assert words in str(info.value)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)


@pytest.mark.parametrize("literal", ["{...}", "1"])
def test_constants_not_written_out_are_bounded(literal):
    # Their size is not bounded by the text's: a clear error, not a MemoryError.
    with pytest.raises(HloParseError, match=r"not written out in full.*MAX_IMPLICIT_CONSTANT_BYTES"):
        parse_hlo(f"HloModule m\nENTRY e {{\n  ROOT c = s4[4294967296,7]{{1,0}} constant({literal})\n}}\n")
