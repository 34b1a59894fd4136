"""HLO text parser and printer: the corpus parses, print -> parse -> print is a
fixed point, values come out typed, and malformed text fails with a position."""
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac.errors import HloParseError
from xlac.hlo.ir import HloComputation, Raw
from xlac.hlo.parser import parse_hlo
from xlac.hlo.printer import format_literal
from xlac.hlo.printer import instruction_to_text

REPO_ROOT = Path(__file__).resolve().parents[2]
PUBLIC_CORPUS = REPO_ROOT / "tests" / "hlo_corpus"
CORPUS = sorted(PUBLIC_CORPUS.glob("*.hlo")) + sorted((REPO_ROOT / "benchmarks" / "hlo").glob("*.hlo"))


def module(body: str, header: str = "HloModule m") -> xlac.HloModule:
    return parse_hlo(f"{header}\n\n{body}\n")


def entry(lines: str):
    """Parse one ENTRY computation made of ``lines``; returns (module, name -> instruction)."""
    m = module("ENTRY main {\n" + lines + "\n}")
    return m, {i.name: i for i in m.entry.instructions}


# ----------------------------------------------------------------------------
# The corpus
# ----------------------------------------------------------------------------

def test_corpus_is_there():
    assert len(CORPUS) >= 40, f"expected the public corpus at {PUBLIC_CORPUS}"


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_corpus_parses_and_round_trips(path):
    src = path.read_text(encoding="utf-8")
    m = parse_hlo(src)
    assert m.entry is m.computations[-1] and m.entry.is_entry
    for comp in m.computations:
        assert comp.parent is m and comp.root is not None
        for inst in comp.instructions:
            assert inst.parent is comp
            for op in inst.operands:
                assert inst in op.users
    text = m.to_text()
    again = parse_hlo(text).to_text()
    assert again == text
    # Apart from XLA's 9-digit f32 constants (xlac prints the shortest text that
    # round-trips), the printer reproduces JAX's text byte for byte.
    src_lines, out_lines = src.strip().splitlines(), text.strip().splitlines()
    assert len(src_lines) == len(out_lines)
    differing = [(a, b) for a, b in zip(src_lines, out_lines) if a != b]
    assert all(" constant(" in a for a, _ in differing), differing[:3]


def test_plain_lines_read_in_one_match_parse_as_token_by_token(monkeypatch):
    # The parser reads the common instruction line in one match (Parser._plain_instruction):
    # the same module, names, attributes and error positions as the token-by-token reading.
    from xlac.hlo.parser import Parser
    srcs = [p.read_text(encoding="utf-8") for p in CORPUS]
    taken = []
    plain = Parser._plain_instruction
    monkeypatch.setattr(Parser, "_plain_instruction", lambda self, *a: taken.append(plain(self, *a)) or taken[-1])
    fast = [parse_hlo(s) for s in srcs]
    assert sum(t is not None for t in taken) > 1000        # the one-match reading was taken
    monkeypatch.setattr(Parser, "_plain_instruction", lambda self, *a: None)
    slow = [parse_hlo(s) for s in srcs]
    for a, b in zip(fast, slow):
        assert a.to_text() == b.to_text()
        assert [i.location for i in a.instructions()] == [i.location for i in b.instructions()]


def test_corpus_argmax_structure():
    m = parse_hlo((PUBLIC_CORPUS / "argmax_argmin.hlo").read_text(encoding="utf-8"))
    assert [c.name for c in m.computations][-1] == "main.6"
    assert len(m.computations) == 6
    assert len(m.entry.instructions) == 6
    assert m.name == "jit_f"
    reduce = m.entry.instruction("reduce_max.7")
    assert reduce.attrs["dimensions"] == (1,)
    assert reduce.attrs["to_apply"] is m.computation("region_2.5")
    assert isinstance(reduce.attrs["to_apply"], HloComputation)
    assert reduce.operands == [m.entry.instruction("x.1"), m.entry.instruction("constant.9")]
    c = m.entry.instruction("constant.9").literal
    assert c.dtype == np.float32 and c.shape == () and c == -np.inf
    gte = m.computation("argmax.2").instruction("reduce.13")
    assert gte.attrs == {"index": 1}
    assert m.computation("argmax.2").root is gte
    iota = m.computation("argmax.2").instruction("iota.2")
    assert iota.attrs == {"iota_dimension": 0}
    cmp = m.computation("region_0.1").instruction("gt.1")
    assert cmp.attrs == {"direction": "GT"}
    params, result = m.entry_computation_layout
    assert [str(s) for s in params] == ["f32[12,20]{1,0}"]
    assert str(result) == "(s32[12]{0}, s32[20]{0}, f32[12]{0})"


def test_corpus_typed_attributes():
    m = parse_hlo((PUBLIC_CORPUS / "slice_concat_pad.hlo").read_text(encoding="utf-8"))
    main = m.entry
    assert main.instruction("slice.4").attrs["slice"] == ((1, 8, 2), (0, 12, 3))
    pad = m.computation("_pad.2").root
    assert pad.opcode == "pad" and pad.attrs["padding"] == ((1, 2, 0), (0, 3, 0))
    assert "padding=1_2x0_3" in instruction_to_text(pad)

    m = parse_hlo((PUBLIC_CORPUS / "sort_argsort_f32.hlo").read_text(encoding="utf-8"))
    sort = next(i for i in m.instructions() if i.opcode == "sort")
    assert sort.attrs["is_stable"] is True and isinstance(sort.attrs["to_apply"], HloComputation)

    m = parse_hlo((PUBLIC_CORPUS / "topk_accuracy.hlo").read_text(encoding="utf-8"))
    topk = next(i for i in m.instructions() if i.opcode == "topk")
    assert topk.attrs == {"k": 3, "largest": True}

    m = parse_hlo((PUBLIC_CORPUS / "rfft_irfft.hlo").read_text(encoding="utf-8"))
    fft = m.computation("fft.1").root
    assert fft.attrs == {"fft_type": "RFFT", "fft_length": (16,)}

    m = parse_hlo((PUBLIC_CORPUS / "cond_scalar_pred.hlo").read_text(encoding="utf-8"))
    cond = next(i for i in m.instructions() if i.opcode == "conditional")
    branches = cond.attrs["branch_computations"]
    assert isinstance(branches, tuple) and len(branches) == 2
    assert all(isinstance(b, HloComputation) and b.parent is m for b in branches)

    m = parse_hlo((PUBLIC_CORPUS / "fori_loop_power_iter.hlo").read_text(encoding="utf-8"))
    w = next(i for i in m.instructions() if i.opcode == "while")
    assert isinstance(w.attrs["condition"], HloComputation) and isinstance(w.attrs["body"], HloComputation)
    idx = {c.name: k for k, c in enumerate(m.computations)}
    assert idx[w.attrs["condition"].name] < idx[m.entry.name]

    m = parse_hlo((PUBLIC_CORPUS / "gather_index_take_along.hlo").read_text(encoding="utf-8"))
    g = next(i for i in m.instructions() if i.opcode == "gather" and "operand_batching_dims" in i.attrs)
    assert g.attrs["offset_dims"] == () and g.attrs["slice_sizes"] == (1, 1)
    assert g.attrs["index_vector_dim"] == 2 and g.attrs["start_index_map"] == (1,)

    m = parse_hlo((PUBLIC_CORPUS / "conv2d_nhwc_stride_same.hlo").read_text(encoding="utf-8"))
    conv = next(i for i in m.instructions() if i.opcode == "convolution")
    assert conv.attrs["window"] == Raw("{size=3x3 stride=2x2 pad=1_1x1_1}")
    assert conv.attrs["dim_labels"] == Raw("b01f_01io->b01f")


# ----------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------

def test_attribute_values_are_typed_and_print_back():
    m, i = entry("""  p = f32[4,6]{1,0} parameter(0)
  z = f32[] constant(0)
  s = f32[2,2]{1,0} slice(p), slice={[0:2], [1:5:2]}
  d = f32[7,9]{1,0} pad(p, z), padding=0_1x1_2_1
  e = f32[5,8]{1,0} pad(p, z), padding=1_0x-1_3
  b = f32[3,4,6]{2,1,0} broadcast(p), dimensions={1,2}
  r = f32[6,4]{0,1} transpose(p), dimensions={1,0}, metadata={op_name="a, b" source_line=3}
  c = pred[4,6]{1,0} compare(p, p), direction=LT, type=TOTALORDER
  ROOT t = (f32[2,2]{1,0}, f32[7,9]{1,0}) tuple(s, d)""")
    assert i["p"].attrs == {"parameter_number": 0}
    assert i["s"].attrs["slice"] == ((0, 2, 1), (1, 5, 2))
    assert i["d"].attrs["padding"] == ((0, 1, 0), (1, 2, 1))
    assert i["e"].attrs["padding"] == ((1, 0, 0), (-1, 3, 0))
    assert i["b"].attrs["dimensions"] == (1, 2)
    assert i["r"].attrs["metadata"] == Raw('{op_name="a, b" source_line=3}')
    assert i["r"].shape.layout.minor_to_major == (0, 1)
    assert i["c"].attrs == {"direction": "LT", "type": "TOTALORDER"}
    text = m.to_text()
    assert "slice={[0:2], [1:5:2]}" in text
    assert "padding=0_1_0x1_2_1" in text and "padding=1_0x-1_3" in text
    assert "dimensions={1,2}" in text
    assert 'metadata={op_name="a, b" source_line=3}' in text
    assert "direction=LT, type=TOTALORDER" in text
    assert parse_hlo(text).to_text() == text


@pytest.mark.parametrize("shape,text,expected", [
    ("f32[]", "-inf", -np.inf),
    ("f32[]", "inf", np.inf),
    ("f32[]", "1e-06", np.float32(1e-06)),
    ("f32[]", "0.027777778", np.float32(0.027777778)),
    ("pred[]", "true", True),
    ("pred[]", "false", False),
    ("s32[]", "-2147483648", -2**31),
    ("u64[]", "18446744073709551615", 2**64 - 1),
    ("s64[]", "-9223372036854775808", -2**63),
    ("s64[]", "9223372036854775807", 2**63 - 1),
    ("u32[]", "2147483648", 2**31),
    ("f64[]", "0.1", 0.1),
    ("f16[]", "0.1", np.float16(0.1)),
    ("bf16[]", "0.1", ml_dtypes.bfloat16(0.1)),
    ("c64[]", "(1, -2.5)", 1 - 2.5j),
])
def test_scalar_constants(shape, text, expected):
    m, i = entry(f"  ROOT c = {shape} constant({text})")
    lit = i["c"].literal
    assert isinstance(lit, np.ndarray) and lit.shape == ()
    assert lit.dtype == xlac.shape(shape).element_type.dtype
    assert lit[()] == expected  # exact, also for the 64-bit extremes
    again = parse_hlo(m.to_text()).entry.root.literal
    assert again.dtype == lit.dtype and again[()] == lit[()]


def test_nan_and_integral_float_print_like_jax():
    m, i = entry("  a = f32[] constant(nan)\n  b = f32[] constant(1.0)\n  ROOT c = f32[] constant(-0)")
    assert np.isnan(i["a"].literal)
    assert np.signbit(i["c"].literal)
    text = m.to_text()
    assert "constant(nan)" in text and "constant(1)\n" in text and "constant(-0)" in text


def test_array_constants():
    m, i = entry("""  a = s32[2,3]{1,0} constant({ { 1, 2, 3 }, { -4, 5, 6 } })
  b = u32[4]{0} constant({13, 15, 26, 6})
  c = pred[2]{0} constant({true, false})
  d = f32[0]{0} constant({})
  e = f32[2,0]{1,0} constant({ {}, {} })
  f = c64[2]{0} constant({(1, 2), (3, -inf)})
  g = f32[2,2,2]{2,1,0} constant({ { {1, 2}, {3, 4} }, { {5, 6}, {7, 8.5} } })
  ROOT h = f32[100]{0} constant({...})""")
    np.testing.assert_array_equal(i["a"].literal, np.array([[1, 2, 3], [-4, 5, 6]], np.int32))
    assert i["a"].literal.dtype == np.int32
    assert i["b"].literal.dtype == np.uint32 and list(i["b"].literal) == [13, 15, 26, 6]
    assert i["c"].literal.tolist() == [True, False]
    assert i["d"].literal.shape == (0,) and i["e"].literal.shape == (2, 0)
    assert i["f"].literal.dtype == np.complex64 and i["f"].literal[1] == complex(3, -np.inf)
    assert i["g"].literal.shape == (2, 2, 2) and i["g"].literal[1, 1, 1] == 8.5
    assert i["h"].attrs["elided"] is True and i["h"].literal.shape == (100,)
    text = m.to_text()
    assert "constant({13, 15, 26, 6})" in text
    assert "constant({ {1, 2, 3}, {-4, 5, 6} })" in text
    assert "constant({...})" in text
    m2 = parse_hlo(text)
    assert m2.to_text() == text
    for inst in m2.entry.instructions:
        np.testing.assert_array_equal(inst.literal, i[inst.name].literal)


def test_tuple_constant():
    m, i = entry("  ROOT t = (f32[], s32[2]{0}) constant((1.5, {3, 4}))")
    a, b = i["t"].literal
    assert a == np.float32(1.5) and b.tolist() == [3, 4] and b.dtype == np.int32
    assert "constant((1.5, {3, 4}))" in m.to_text()


@pytest.mark.parametrize("et", [xlac.F16, xlac.BF16, xlac.F32, xlac.F64, xlac.C64])
def test_float_constants_round_trip_exactly(et):
    # Random bit patterns: subnormals, huge and tiny values, inf and nan.
    rng = np.random.default_rng(1)
    dt = et.dtype
    width = dt.itemsize if not et.is_complex else dt.itemsize // 2
    bits = rng.integers(0, 2 ** (8 * width), 1000, dtype=np.uint64).astype(f"u{width}")
    values = bits.view(et.component_type.dtype)
    if et.is_complex:
        pairs = values
        values = np.empty(len(pairs) // 2, dt)
        values.real, values.imag = pairs[::2], pairs[1::2]
    shape = xlac.Shape(et, values.shape)
    m, i = entry(f"  ROOT c = {shape} constant({format_literal(values, shape)})")
    got = i["c"].literal
    assert got.dtype == dt
    # Compare bit patterns: -0.0 counts, and NaNs keep their sign and payload.
    parts = lambda a: a.view(f"u{width}").reshape(len(values), -1)
    np.testing.assert_array_equal(parts(got), parts(values))
    assert parse_hlo(m.to_text()).to_text() == m.to_text()


# ----------------------------------------------------------------------------
# Module structure, long form
# ----------------------------------------------------------------------------

LONG_FORM = r"""HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2]{0}, f32[2]{0})->(f32[2]{0}, f32[])}

%region_0.3 (Arg_0.4: f32[], Arg_1.5: f32[]) -> f32[] {
  %Arg_0.4 = f32[] parameter(0), metadata={op_name="jit(f)/reduce_sum"}
  %Arg_1.5 = f32[] parameter(1)
  ROOT %add.6 = f32[] add(f32[] %Arg_0.4, f32[] %Arg_1.5), metadata={op_name="jit(f)/reduce_sum" source_file="/tmp/x.py" source_line=4}
}

ENTRY %main.10 (x.1: f32[2], y.2: f32[2]) -> (f32[2], f32[]) {
  %x.1 = f32[2]{0} parameter(0), sharding={replicated}
  %y.2 = f32[2]{0} parameter(1), frontend_attributes={_xla_x="1"}
  %add.3 = f32[2]{0} add(f32[2]{0} %x.1, f32[2]{0} %y.2), backend_config="{\"a\": 1, \"b\": [1,2]}"
  %constant.7 = f32[] constant(0)
  %reduce.8 = f32[] reduce(f32[2]{0} %add.3, f32[] %constant.7), dimensions={0}, to_apply=%region_0.3
  %cc = f32[2]{0} custom-call(f32[2]{0} %x.1), custom_call_target="foo", api_version=API_VERSION_TYPED_FFI
  %t = (f32[2]{0}, f32[], f32[], f32[], f32[], /*index=5*/f32[]) tuple(%add.3, %reduce.8, %reduce.8, %reduce.8, %reduce.8, /*index=5*/%reduce.8)
  ROOT %tuple.9 = (f32[2]{0}, f32[]) tuple(f32[2]{0} %add.3, f32[] %reduce.8)
}
"""


def test_long_form():
    m = parse_hlo(LONG_FORM)
    assert [c.name for c in m.computations] == ["region_0.3", "main.10"]
    assert list(m.attrs) == ["is_scheduled", "entry_computation_layout"]
    assert m.attrs["is_scheduled"] == Raw("true")
    main = m.entry
    assert [i.name for i in main.parameters] == ["x.1", "y.2"]
    add = main.instruction("add.3")
    assert add.operands == [main.instruction("x.1"), main.instruction("y.2")]
    assert add.attrs["backend_config"] == Raw(r'"{\"a\": 1, \"b\": [1,2]}"')
    assert main.instruction("reduce.8").attrs["to_apply"] is m.computations[0]
    assert main.instruction("cc").attrs["custom_call_target"] == Raw('"foo"')
    assert len(main.instruction("t").operands) == 6
    assert main.root.name == "tuple.9"
    text = m.to_text()
    assert text.startswith("HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2]{0}, "
                           "f32[2]{0})->(f32[2]{0}, f32[])}\n\n")     # as written
    assert "ENTRY main.10 {" in text and "%" not in text
    assert "sharding={replicated}" in text and 'frontend_attributes={_xla_x="1"}' in text
    assert "/*index=5*/f32[]" in text
    assert parse_hlo(text).to_text() == text


def test_forward_computation_reference_and_order():
    m = module("""ENTRY main {
  p = f32[4]{0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}""")
    assert [c.name for c in m.computations] == ["add", "main"]
    assert m.entry.root.attrs["to_apply"] is m.computation("add")
    assert m.to_text().index("add {") < m.to_text().index("ENTRY main {")


def test_root_defaults_to_last_and_explicit_root_anywhere():
    _, i = entry("  p = f32[] parameter(0)\n  n = f32[] negate(p)")
    assert i["n"].parent.root is i["n"]
    m, i = entry("  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n  q = f32[] abs(p)")
    assert m.entry.root is i["n"]
    assert "ROOT n = f32[] negate(p)\n  q = f32[] abs(p)" in m.to_text()
    assert i["p"].users == [i["n"], i["q"]]


def test_single_computation_without_entry_keyword():
    m = module("main {\n  ROOT p = f32[] parameter(0)\n}")
    assert m.entry.name == "main" and "ENTRY main {" in m.to_text()


def test_module_attributes_kept_in_order():
    src = ("HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }, "
           "entry_computation_layout={(f32[])->f32[]}, replica_count=2\n\n"
           "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    m = parse_hlo(src)
    assert list(m.attrs) == ["is_scheduled", "input_output_alias", "entry_computation_layout", "replica_count"]
    assert m.to_text().splitlines()[0] == src.splitlines()[0]
    # A module that was not given one prints the entry's first, as JAX does.
    m.attrs.pop("entry_computation_layout")
    assert m.to_text().splitlines()[0] == (
        "HloModule m, entry_computation_layout={(f32[])->f32[]}, is_scheduled=true, "
        "input_output_alias={ {0}: (0, {}, may-alias) }, replica_count=2")


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------

GOOD = """HloModule m

ENTRY main {
  p = f32[2]{0} parameter(0)
  ROOT a = f32[2]{0} add(p, p)
}
"""


@pytest.mark.parametrize("text,line,column,words", [
    (GOOD.replace("add(p, p)", "frobnicate(p, p)"), 5, 22, "unknown opcode 'frobnicate'"),
    (GOOD.replace("add(p, p)", "add(p, q)"), 5, 29, "undefined operand 'q'"),
    (GOOD.replace("add(p, p)", "add(p, %q)"), 5, 29, "undefined operand 'q'"),
    (GOOD.replace("ROOT a = f32[2]{0}", "ROOT a = f33[2]{0}"), 5, 12, "f33"),
    (GOOD.replace("ROOT a = f32[2]{0}", "ROOT a = f32[2]{1}"), 5, 12, "bad shape"),
    (GOOD.rstrip().rstrip("}"), 3, 12, "unterminated '{'"),
    (GOOD.replace("add(p, p)", 'add(p, p), metadata={op_name="x"'), 5, 42, "unterminated '{'"),
    (GOOD.replace("add(p, p)", "broadcast(p), dimensions={0"), 5, 47, "unterminated '{'"),
    (GOOD.replace("add(p, p)", 'add(p, p), backend_config="abc'), 5, 48, "unterminated string"),
    (GOOD.replace("add(p, p)", "add(p)"), 5, 22, "add takes 2 operands, got 1"),
    (GOOD.replace("add(p, p)", "negate(p, p)"), 5, 22, "negate takes 1 operand, got 2"),
    (GOOD + "\n@@@ junk\n", 8, 1, "expected computation name"),
    (GOOD + "\nfoo bar\n", 8, 5, "expected '{'"),
    ("garbage\n" + GOOD, 1, 1, "expected 'HloModule'"),
    ("", 1, 1, "expected 'HloModule'"),
    (GOOD.replace("ROOT a = f32[2]{0} add", "p = f32[2]{0} add"), 5, 3, "duplicate instruction name 'p'"),
    (GOOD.replace("add(p, p)", "reduce(p, p), dimensions={0}, to_apply=nope"), 5, 61,
     "undefined computation 'nope'"),
    (GOOD.replace("add(p, p)", "broadcast(p), dimensions={0,a}"), 5, 50, "expected an integer"),
    (GOOD.replace("add(p, p)", "slice(p), slice={[0:2:]}"), 5, 44, "expected an integer"),
    (GOOD.replace("add(p, p)", "constant({1, 2, 3})"), 5, 31, "3 elements, the shape says 2"),
    (GOOD.replace("add(p, p)", "constant({1, x})"), 5, 35, "constant value"),
    (GOOD.replace("f32[2]{0} add(p, p)", "s32[] constant(1.5)"), 5, 27, "expected an integer"),
    (GOOD.replace("f32[2]{0} add(p, p)", "s8[] constant(128)"), 5, 26, "out of range for s8"),
    (GOOD.replace("f32[2]{0} add(p, p)", "u64[] constant(18446744073709551616)"), 5, 27, "out of range"),
    (GOOD.replace("ROOT a = ", "ROOT a "), 5, 10, "expected '='"),
    (GOOD.replace("  p = f32", "  ROOT p = f32"), 5, 3, "second ROOT"),
    (GOOD.replace("add(p, p)", "get-tuple-element(p), index=1 2"), 5, 52, "unexpected '2'"),
    (GOOD.replace("add(p, p)", "add(f32[3] p, p)"), 5, 26, "declared f32[3]"),
    (GOOD.replace("add(p, p)", "get-tuple-element(p), index="), 5, 50, "missing value for attribute 'index'"),
    ("HloModule m\n\nc {\n  x = f32[] parameter(0)\n\nENTRY main {\n  ROOT y = f32[] parameter(0)\n}\n",
     6, 1, "expected '}' to close computation 'c'"),
    ("HloModule m\n\nENTRY e {\n}\n", 3, 9, "no instructions"),
    ("HloModule m\nENTRY a {\n  ROOT x = f32[] parameter(0)\n}\nENTRY b {\n  ROOT x = f32[] parameter(0)\n}\n",
     5, 1, "second ENTRY"),
    ("HloModule m\na {\n  ROOT x = f32[] parameter(0)\n}\nENTRY a {\n  ROOT x = f32[] parameter(0)\n}\n",
     5, 7, "duplicate computation 'a'"),
])
def test_parse_errors(text, line, column, words):
    with pytest.raises(HloParseError) as info:
        parse_hlo(text)
    err = info.value
    assert words in str(err)
    assert (err.line, err.column) == (line, column), str(err)
    assert str(err).startswith(f"line {line}, column {column}: ")


def test_errors_are_always_hlo_parse_errors():
    # Truncating valid text anywhere must give an HloParseError, never another exception.
    src = (PUBLIC_CORPUS / "argmax_argmin.hlo").read_text(encoding="utf-8")
    for cut in range(0, len(src), 7):
        try:
            parse_hlo(src[:cut])
        except HloParseError as e:
            assert e.line >= 1 and e.column >= 1
