"""StableHLO text at the edges of its syntax: constants out of range for their
element type read as MLIR's parser reads them (values checked against jax
0.10.2's own import) without a numpy warning, result groups ``%0:N`` bounded
before any name is made, integers of thousands of digits, deep nesting, and
module names the HLO parser reads back.  Each is an HloParseError with a
place, or the value jax gives; never a warning, a raw Python exception or a
spin."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import xlac
from xlac.hlo.stablehlo import parse_module_text


def constant(element: str, value: str) -> str:
    t = f"tensor<{element}>"
    return (f"module @m {{\n  func.func public @main() -> {t} {{\n"
            f"    %0 = stablehlo.constant dense<{value}> : {t}\n    return %0 : {t}\n  }}\n}}\n")


def value_of(text: str):
    """The module's result on the evaluator, with every warning an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module = parse_module_text(text)
        return np.asarray(xlac.evaluate(module))


# (element type, literal, what jax's StableHLO import gives)
ACCEPTED = [
    ("f16", "1.0e+10", np.inf), ("f16", "-1.0e+10", -np.inf), ("f16", "65519.0", 65504.0),
    ("f16", "65520.0", np.inf), ("bf16", "1.0e+300", np.inf), ("f32", "3.5e+38", np.inf),
    ("f64", "1.0e+400", np.inf), ("f8E4M3FN", "464.0", 448.0), ("f8E4M3FN", "465.0", np.nan),
    ("f8E4M3FN", "1000.0", np.nan), ("f8E5M2", "1.0e+10", np.inf), ("f8E4M3FNUZ", "1000.0", np.nan),
    ("f8E5M2FNUZ", "1.0e+10", np.nan), ("f4E2M1FN", "100.0", 6.0), ("f16", "0x7C01", np.nan),
    ("f16", "0xFFFF", np.nan), ("bf16", "0x7F80", np.inf), ("f32", "1.0e-50", 0.0),
    ("i8", "255", -1), ("i8", "128", -128), ("i8", "-128", -128), ("i8", "0xFF", -1), ("i8", "-0x80", -128),
    ("i16", "65535", -1), ("i64", "18446744073709551615", -1), ("ui8", "0xFF", 255),
    ("ui64", "18446744073709551615", 2 ** 64 - 1), ("i32", "023", 23),
    ("i1", "-1", True), ("i1", "1", True), ("i1", "true", True), ("i1", "0", False),
]


@pytest.mark.parametrize("element, literal, expected", ACCEPTED)
def test_literal_values_as_mlir_reads_them(element, literal, expected):
    got = value_of(constant(element, literal))
    if isinstance(expected, float) and np.isnan(expected):
        assert np.isnan(got.astype(np.float64))
    else:
        assert got.astype(np.float64 if isinstance(expected, float) else object) == expected


# (element type, literal, message): jax refuses each of these too.
REFUSED = [
    ("i8", "300", "integer constant 300 out of range for i8"),
    ("i8", "-129", "integer constant -129 out of range for i8"),
    ("i16", "-32769", "out of range for i16"),
    ("ui8", "256", "integer constant 256 out of range for ui8"),
    ("ui8", "-1", "expected unsigned integer elements of ui8, found -1"),
    ("i32", "4294967296", "out of range for i32"),
    ("i64", "18446744073709551616", "out of range for i64"),
    ("i64", "-9223372036854775809", "out of range for i64"),
    ("ui8", "0x100", "out of range for ui8"),
    ("i64", "1" * 5000, "(5000 characters) out of range for i64"),
    ("i1", "2", "expected true, false, 0 or 1 for an i1 element, found 2"),
    ("i8", "1.5", "expected integer elements of i8, found 1.5"),
    ("f8E4M3FN", "0x1FF", "hexadecimal float constant 0x1FF out of range for f8e4m3fn"),
    ("f16", "0x17C00", "hexadecimal float constant 0x17C00 out of range for f16"),
]


@pytest.mark.parametrize("element, literal, message", REFUSED)
def test_literals_out_of_range_are_errors_at_the_constant(element, literal, message):
    with pytest.raises(xlac.HloParseError, match=r"stablehlo.constant at line 3, column 10: .*" +
                       message.replace("(", r"\(").replace(")", r"\)")) as info:
        value_of(constant(element, literal))
    assert info.value.__cause__ is None


def test_arrays_and_complex_out_of_range():
    text = constant("2xf16", "[1.0e+10, 1.0]").replace("tensor<2xf16>", "tensor<2xf16>")
    np.testing.assert_array_equal(value_of(text), np.array([np.inf, 1.0], np.float16))
    got = value_of(constant("2xcomplex<f32>", "[(1.0e+39, 1.0), (0.0, -1.0e+300)]"))
    np.testing.assert_array_equal(got, np.array([complex(np.inf, 1), complex(0, -np.inf)], np.complex64))


def test_cli_run_of_an_overflowing_constant_prints_nothing_on_stderr(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(constant("f16", "1.0e+10"), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "xlac", "run", str(path), "--out", str(tmp_path / "o.npz")],
                         capture_output=True, encoding="utf-8", timeout=120)
    assert out.returncode == 0 and out.stderr == ""
    assert np.load(tmp_path / "o.npz")["arr_0"] == np.inf


def test_hlo_constants_out_of_range_are_parse_errors_without_a_warning():
    """XLA's HLO parser refuses them (hlo_parser.cc: "out of range for literal's primitive type")."""
    for text in ("f16[] constant(1e10)", "f16[2] constant({1e10, 1})", "bf16[] constant(1e300)",
                 "s8[] constant(300)", "u8[] constant(256)", "f8e4m3fn[] constant(1000)"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(xlac.HloParseError, match="out of range"):
                xlac.parse_hlo(f"HloModule m\nENTRY e {{\n  ROOT c = {text}\n}}\n")


# -- result groups --------------------------------------------------------------------

BARRIER = """module @m {
  func.func public @main(%arg0: tensor<f32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
    %0:N = stablehlo.optimization_barrier %arg0, %arg1 : tensor<f32>, tensor<f32>
    return %0#0, %0#1 : tensor<f32>, tensor<f32>
  }
}
"""


@pytest.mark.timeout(10)
@pytest.mark.parametrize("count, message", [
    ("300000000", "300000000 results named, more than the op's text gives types for"),
    ("9223372036854775808", r"%0:92233720... \(19 digits\): the number of results must be from 1"),
    ("1" * 5000, r"\(5000 digits\): the number of results must be from 1"),
    ("0", "%0:0: the number of results must be from 1"),
    ("3", "3 results named, the op has 2"),
])
def test_result_group_sizes_are_bounded_before_names_are_made(count, message):
    with pytest.raises(xlac.HloParseError, match=message) as info:
        parse_module_text(BARRIER.replace(":N", ":" + count))
    assert info.value.line == 3


def test_result_group_of_the_right_size():
    m = parse_module_text(BARRIER.replace(":N", ":2"))
    a, b = np.float32(1), np.float32(2)
    assert [float(v) for v in xlac.evaluate(m, a, b)] == [1.0, 2.0]


# -- integers, nesting and names the parser once let through as internal errors --------

@pytest.mark.parametrize("text, message", [
    (constant("f32", "1.0").replace("module @m {", "module @m attributes {a = " + "1" * 5000 + "} {"),
     r"integer 11111111111111111111... \(5000 digits\) is too large"),
    (constant("f32", "1.0").replace("tensor<f32>", "tensor<" + "9" * 5000 + "xf32>", 1),
     r"dimension 99999999999999999999... \(5000 digits\) is too large"),
    (constant("f32", "1.0").replace("module @m {", "module @m attributes {a = @} {"),
     "expected a symbol name after '@'"),
    (constant("f32", "1.0").replace("module @m {", "module @m attributes {a = -x} {"),
     "expected a number"),
    (constant("f32", "1.0").replace("tensor<f32>", "(" * 500 + "tensor<f32>", 1),
     "nesting deeper than 64 levels"),
    (constant("i" + "9" * 5000, "1"), "not supported yet"),
])
def test_pathological_syntax_is_a_clear_error(text, message):
    with pytest.raises((xlac.HloParseError, xlac.UnsupportedError), match=message) as info:
        parse_module_text(text)
    assert not isinstance(info.value.__cause__, (ValueError, TypeError, RecursionError))


def test_integer_attribute_of_inf_is_a_clear_error():
    text = """module @m {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.transpose %arg0, dims = [0x7FFFFFFFFFFFFFFFFFFF] : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
    with pytest.raises((xlac.HloParseError, xlac.ShapeError)) as info:
        parse_module_text(text.replace("[0x7FFFFFFFFFFFFFFFFFFF]", "array<i64: 1.0e+400>"))
    assert "OverflowError" not in str(info.value) and info.value.__cause__ is None


def test_module_names_become_hlo_names():
    text = constant("f32", "1.0").replace("module @m", 'module @"9 {odd} name"')
    m = parse_module_text(text)
    assert m.name == "_9__odd__name"
    assert xlac.parse_hlo(m.to_text()).to_text() == m.to_text()
