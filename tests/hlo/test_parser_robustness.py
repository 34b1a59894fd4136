"""Hostile HLO text (issue 12, items 6 and 10): deep nesting, long chains, odd
characters and absurd numbers are either handled or rejected with an
``HloParseError`` at the right line and column -- never a RecursionError, a
UnicodeEncodeError or Python's int-conversion ValueError."""
import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.errors import HloParseError, ShapeError
from xlac.hlo.ir import MAX_CALL_DEPTH, HloComputation, HloInstruction, HloModule
from xlac.hlo.parser import parse_hlo
from xlac.hlo.verifier import VerifierError, verify
from xlac.hlo.window import WindowError, parse_dim_labels, parse_window
from xlac.shape import MAX_RANK, MAX_TUPLE_DEPTH, Shape

F32 = xlac.shape("f32[]")


def nested_shape(depth: int) -> str:
    return "(" * depth + "f32[]" + ")" * depth


def nested_value(depth: int) -> str:
    return "(" * depth + "1" + ")" * depth


def entry(*lines: str) -> str:
    return "HloModule m\nENTRY e {\n" + "\n".join(f"  {line}" for line in lines) + "\n}\n"


def parse_error(text: str) -> HloParseError:
    with pytest.raises(HloParseError) as info:
        parse_hlo(text)
    return info.value


def test_limits_are_the_documented_ones():
    assert (MAX_TUPLE_DEPTH, MAX_RANK, MAX_CALL_DEPTH) == (64, 32, 64)


# ----------------------------------------------------------------------------
# Item 6: tuple nesting
# ----------------------------------------------------------------------------

def test_shape_text_nesting_limit():
    assert xlac.shape(nested_shape(MAX_TUPLE_DEPTH)).tuple_depth == MAX_TUPLE_DEPTH
    for depth in (MAX_TUPLE_DEPTH + 1, 1000, 100_000):
        with pytest.raises(ValueError, match=r"nested deeper than 64 levels at column 65 "
                                             r"\(the limit is xlac.shape.MAX_TUPLE_DEPTH\)"):
            xlac.shape(nested_shape(depth))


def test_shape_constructor_refuses_deeper_tuples():
    s = F32
    for _ in range(MAX_TUPLE_DEPTH):
        s = Shape.tuple([s])
    assert s.tuple_depth == MAX_TUPLE_DEPTH and F32.tuple_depth == 0
    with pytest.raises(ShapeError, match="nested 65 levels deep.*MAX_TUPLE_DEPTH"):
        Shape.tuple([F32, s])
    # The depth is bookkeeping, not part of the value.
    assert Shape.tuple([F32]) == xlac.shape("(f32[])") and "depth" not in repr(s)


def test_builder_refuses_deeper_tuples():
    b = xlac.XlaBuilder("deep")
    x = ops.parameter(b, 0, F32, "x")
    for _ in range(MAX_TUPLE_DEPTH):
        x = ops.tuple(b, [x])
    with pytest.raises(ShapeError, match="MAX_TUPLE_DEPTH"):
        ops.tuple(b, [x])


@pytest.mark.parametrize("depth", [MAX_TUPLE_DEPTH + 1, 250, 400, 1000, 50_000])
def test_parser_rejects_deep_tuple_shapes_at_the_offending_parenthesis(depth):
    e = parse_error(entry("a = f32[] parameter(0)", f"ROOT p = {nested_shape(depth)} tuple(a)"))
    # "  ROOT p = " is 11 characters: the 65th '(' is at column 12 + 64.
    assert (e.line, e.column) == (4, 12 + MAX_TUPLE_DEPTH)
    assert "nested deeper than 64 levels" in str(e) and "MAX_TUPLE_DEPTH" in str(e)


def test_parser_rejects_deep_shapes_in_signatures_and_operands():
    deep = nested_shape(MAX_TUPLE_DEPTH + 1)
    e = parse_error(f"HloModule m\nENTRY e (p: {deep}) -> f32[] {{\n  ROOT a = f32[] parameter(0)\n}}\n")
    assert (e.line, e.column) == (2, 13 + MAX_TUPLE_DEPTH)
    e = parse_error(entry("a = f32[] parameter(0)", f"ROOT n = f32[] negate({deep} a)"))
    assert e.line == 4 and "MAX_TUPLE_DEPTH" in str(e)


def test_tuples_at_the_limit_work_everywhere():
    deep, inner = nested_shape(MAX_TUPLE_DEPTH), nested_shape(MAX_TUPLE_DEPTH - 1)
    text = entry(f"p = {deep} parameter(0)",
                 f"c = {deep} constant({nested_value(MAX_TUPLE_DEPTH)})",
                 f"g = {inner} get-tuple-element(p), index=0",
                 f"h = {inner} get-tuple-element(c), index=0",
                 f"ROOT t = ({inner}, {inner}) tuple(g, h)")
    m = parse_hlo(text)
    assert parse_hlo(m.to_text()).to_text() == m.to_text()
    verify(m)
    arg = np.float32(2)
    for _ in range(MAX_TUPLE_DEPTH):
        arg = (arg,)
    assert leaves(xlac.evaluate(m, arg)) == [2.0, 1.0]
    for optimize in (False, True):
        assert leaves(xlac.jit(m, optimize=optimize)(arg)) == [2.0, 1.0]


def leaves(value) -> list:
    """The numbers in a nested tuple, in order (iterative: the tuples are deep)."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, tuple):
            stack.extend(reversed(v))
        else:
            out.append(float(v))
    return out


def test_tuple_constants_follow_their_shape_depth():
    # A literal nested deeper than its shape is an error at the extra parenthesis.
    e = parse_error(entry("ROOT c = (((f32[]))) constant((((((1))))))"))
    assert (e.line, e.column) == (3, 36)  # the 4th "(" of the literal
    # And no shape can make the literal deeper than the limit.
    e = parse_error(entry(f"ROOT c = {nested_shape(1000)} constant({nested_value(1000)})"))
    assert e.line == 3 and "MAX_TUPLE_DEPTH" in str(e)


# ----------------------------------------------------------------------------
# Item 6: rank
# ----------------------------------------------------------------------------

def test_rank_limit():
    with pytest.raises(ShapeError, match="rank 33.*MAX_RANK"):
        Shape(xlac.F32, (1,) * (MAX_RANK + 1))
    with pytest.raises(ValueError, match="rank 100 at column 1.*MAX_RANK"):
        xlac.shape("f32[" + ",".join(["1"] * 100) + "]")
    dims = ",".join(["1"] * 100)
    literal = "{" * 100 + "1" + "}" * 100
    e = parse_error(entry(f"ROOT c = f32[{dims}] constant({literal})"))
    assert (e.line, e.column) == (3, 12) and "at most 32 dimensions" in str(e)


def test_rank_32_constants_work():
    dims = (1,) * (MAX_RANK - 1) + (2,)
    text = ",".join(map(str, dims))
    literal = "{" * (MAX_RANK - 1) + "{1, 2}" + "}" * (MAX_RANK - 1)
    m = parse_hlo(entry(f"p = f32[{text}] parameter(0)", f"c = f32[{text}] constant({literal})",
                        f"ROOT a = f32[{text}] add(p, c)"))
    a = np.full(dims, 10, np.float32)
    np.testing.assert_array_equal(xlac.evaluate(m, a).ravel(), [11, 12])
    np.testing.assert_array_equal(xlac.jit(m)(a).ravel(), [11, 12])


# ----------------------------------------------------------------------------
# Item 6: long chains and nested computations
# ----------------------------------------------------------------------------

def add_chain(n: int) -> str:
    lines = ["a0 = f32[] parameter(0)"] + [f"a{i} = f32[] add(a{i - 1}, a0)" for i in range(1, n + 1)]
    lines[-1] = "ROOT " + lines[-1]
    return entry(*lines)


def test_twenty_thousand_chained_adds():
    m = parse_hlo(add_chain(20_000))
    verify(m)
    assert m.to_text().endswith("  ROOT a20000 = f32[] add(a19999, a0)\n}\n")
    assert float(xlac.evaluate(m.clone(), np.float32(1))) == 20_001


@pytest.mark.parametrize("optimize", [False, True])
def test_chains_longer_than_the_recursion_limit_compile(optimize):
    # 1,100 > Python's 1,000 frames: any recursion along operands would fail.
    assert float(xlac.jit(add_chain(1_100), optimize=optimize)(np.float32(1))) == 1_101


def call_chain(n: int, callers_first: bool = False) -> str:
    comps = ["c0 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] add(p, p)\n}"]
    comps += [f"c{i} {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c{i - 1}\n}}"
              for i in range(1, n)]
    if callers_first:
        comps.reverse()
    return ("HloModule m\n" + "\n".join(comps) + "\nENTRY e {\n  p = f32[] parameter(0)\n"
            f"  ROOT r = f32[] call(p), to_apply=c{n - 1}\n}}\n")


@pytest.mark.parametrize("callers_first", [False, True])
def test_calls_nested_to_the_limit_work(callers_first):
    m = parse_hlo(call_chain(MAX_CALL_DEPTH, callers_first))
    assert m.computations[0].name == "c0" and m.entry is m.computations[-1]
    verify(m)
    assert float(xlac.evaluate(m, np.float32(3))) == 6
    for optimize in (False, True):
        assert float(xlac.jit(m, optimize=optimize)(np.float32(3))) == 6


@pytest.mark.parametrize("n", [MAX_CALL_DEPTH + 1, 300, 3000])
def test_calls_nested_deeper_are_rejected_at_the_call(n):
    e = parse_error(call_chain(n))
    # The 65th call: c{n-64}'s `to_apply=c{n-65}`.
    assert e.line == 4 * (n - MAX_CALL_DEPTH) + 4 and e.column == 36
    assert f"calls c{n - MAX_CALL_DEPTH - 1} at depth 65" in str(e) and "MAX_CALL_DEPTH" in str(e)


def nested_whiles(n: int) -> str:
    """Loop body k runs a while loop over body k-1, once; the entry runs body n-1."""
    state = "(s32[], f32[])"
    head = [f"p = {state} parameter(0)", "i = s32[] get-tuple-element(p), index=0",
            "x = f32[] get-tuple-element(p), index=1", "one = s32[] constant(1)",
            "i1 = s32[] add(i, one)"]
    comps = ["cond {\n  " + "\n  ".join(head[:2] + ["one = s32[] constant(1)",
                                                   "ROOT lt = pred[] compare(i, one), direction=LT"])
             + "\n}",
             "body0 {\n  " + "\n  ".join(head + ["x1 = f32[] add(x, x)", f"ROOT t = {state} tuple(i1, x1)"])
             + "\n}"]
    for k in range(1, n):
        comps.append(f"body{k} {{\n  " + "\n  ".join(head + [
            "z = s32[] constant(0)", f"t0 = {state} tuple(z, x)",
            f"w = {state} while(t0), condition=cond, body=body{k - 1}",
            "x1 = f32[] get-tuple-element(w), index=1", f"ROOT t = {state} tuple(i1, x1)"]) + "\n}")
    return ("HloModule m\n" + "\n".join(comps) + "\n" + entry(
        "x = f32[] parameter(0)", "z = s32[] constant(0)", f"t0 = {state} tuple(z, x)",
        f"w = {state} while(t0), condition=cond, body=body{n - 1}",
        "ROOT r = f32[] get-tuple-element(w), index=1").replace("HloModule m\n", ""))


def test_nested_while_loops_to_the_limit():
    from xlac.codegen.compiler import lower  # what jit runs before LLVM (LLVM itself is slow here)
    m = parse_hlo(nested_whiles(MAX_CALL_DEPTH))
    verify(m)
    assert float(xlac.evaluate(m, np.float32(1))) == 2
    for optimize in (False, True):
        lower(m, optimize=optimize)
    e = parse_error(nested_whiles(MAX_CALL_DEPTH + 1))
    assert "nested more than 64 deep" in str(e) and e.line > 1


def hand_built_calls(n: int) -> HloModule:
    """``n`` computations each calling the next, built without the parser or verifier."""
    comps = []
    for k in range(n):
        p = HloInstruction("parameter", F32, attrs={"parameter_number": 0}, name="p")
        body = (HloInstruction("call", F32, [p], {"to_apply": comps[-1]}, name="r") if comps
                else HloInstruction("negate", F32, [p], name="r"))
        comps.append(HloComputation(f"c{k}", [p, body]))
    return HloModule("m", comps[::-1], entry=comps[-1])


def test_sort_computations_is_iterative():
    m = hand_built_calls(3000)  # callers first: a recursive sort would go 3,000 deep
    m.sort_computations()
    assert [c.name for c in m.computations[:2]] == ["c0", "c1"] and m.computations[-1] is m.entry


def test_too_deep_modules_from_python_are_refused_before_any_recursion():
    m = hand_built_calls(MAX_CALL_DEPTH + 2)
    with pytest.raises(VerifierError, match="nested more than 64 deep"):
        verify(m)
    with pytest.raises(VerifierError, match="MAX_CALL_DEPTH"):
        xlac.evaluate(m, np.float32(1))
    with pytest.raises(VerifierError, match="MAX_CALL_DEPTH"):
        xlac.jit(m)


def test_recursive_computations_are_rejected():
    e = parse_error(entry("p = f32[] parameter(0)", "ROOT r = f32[] call(p), to_apply=e"))
    assert (e.line, e.column) == (4, 36) and "recursive call: e -> e" in str(e)
    text = ("HloModule m\na {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=b\n}\n"
            "b {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=a\n}\n"
            + entry("p = f32[] parameter(0)", "ROOT r = f32[] call(p), to_apply=a")[len("HloModule m\n"):])
    e = parse_error(text)
    assert "recursive call: a -> b -> a" in str(e) and e.line == 8
    m = hand_built_calls(3)
    c0 = m.computations[-1]                                  # c2 -> c1 -> c0 -> c2
    c0.root.opcode, c0.root.attrs["to_apply"] = "call", m.entry
    with pytest.raises(VerifierError, match="recursive call"):
        verify(m)
    with pytest.raises(VerifierError, match="recursive call"):
        xlac.evaluate(m, np.float32(1))


def test_a_computation_held_by_an_opcode_that_calls_none_is_rejected():
    """A computation only calls where its opcode's definition has a
    computation attribute: a hand-built ``negate`` holding one (here a
    recursion, were it a call) is refused, naming the attribute, as XLA's
    parser refuses an attribute the opcode does not take."""
    m = hand_built_calls(3)
    m.computations[-1].root.attrs["to_apply"] = m.entry
    with pytest.raises(VerifierError, match="attribute 'to_apply' holds computation 'c2', but negate calls "
                                            "no computation"):
        verify(m)
    m = hand_built_calls(2)
    m.computations[-1].root.attrs["branches"] = (m.entry, m.entry)
    with pytest.raises(VerifierError, match="attribute 'branches' holds computation 'c1'"):
        verify(m)


# ----------------------------------------------------------------------------
# Item 10: characters
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("line, column, snippet", [
    (3, 4, "p\ud800 = f32[] parameter(0)"),                                 # in a name
    (3, 6, "// \ud800\n  p = f32[] parameter(0)"),                           # in a comment
    (3, 46, 'p = f32[] parameter(0), metadata={op_name="\udcff"}'),          # in a string
])
def test_lone_surrogates_are_rejected_where_they_are(line, column, snippet):
    text = entry(snippet, "ROOT r = f32[] negate(p)")
    e = parse_error(text)
    assert (e.line, e.column) == (line, column) and "lone surrogate" in str(e)
    assert "cannot be encoded as UTF-8" in str(e)
    with pytest.raises(HloParseError):  # not a UnicodeEncodeError when the module is used
        xlac.evaluate(text, np.float32(1))
    with pytest.raises(HloParseError):  # jit hashes the text before parsing it
        xlac.jit(text)


def test_utf8_in_strings_and_comments_is_fine():
    m = parse_hlo(entry('p = f32[] parameter(0), metadata={op_name="jit(ж)/ü"}  // ünïcödé',
                        "ROOT r = f32[] negate(p)"))
    assert 'op_name="jit(ж)/ü"' in m.to_text()
    assert float(xlac.jit(m)(np.float32(2))) == -2


@pytest.mark.parametrize("lines, line, column, message", [
    (["p = f32[] parameter(٣)"], 3, 23, "expected an integer, found non-ASCII character '٣' (U+0663)"),
    (["ROOT c = s32[] constant(٣)"], 3, 27, "found non-ASCII character '٣'"),
    (["ROOT c = f32[] constant(1٣)"], 3, 28, "found non-ASCII character '٣'"),
    (["ROOT c = s32[2] constant({1, ٣})"], 3, 32, "found non-ASCII character '٣'"),
    (["p = f32[2,3] parameter(0)", "ROOT t = f32[3,2] transpose(p), dimensions={1,٠}"], 4, 49,
     "non-ASCII character '٠' (U+0660) in an attribute value"),
    (["p = f32[٣] parameter(0)"], 3, 11, "bad dimension '٣'"),
    (["p = f32[3]{٠} parameter(0)"], 3, 14, "non-ASCII character '٠' in layout"),
    (["p = f32[²] parameter(0)"], 3, 11, "bad dimension '²'"),
    (["p = f32[4] parameter(0)", "z = f32[] constant(0)",
      "ROOT r = f32[2] reduce-window(p, z), window={size=٢ stride=2}, to_apply=e"], 5, 53,
     "non-ASCII character '٢'"),
])
def test_non_ascii_digits_are_not_numbers(lines, line, column, message):
    e = parse_error(entry(*lines))
    assert (e.line, e.column) == (line, column) and message in str(e), str(e)


def test_windows_and_dim_labels_read_ascii_digits_only():
    assert parse_window("{size=3x3 pad=-1_1x0_0}").dimensions[0].padding_low == -1
    for bad in ("{size=٣}", "{size=²}", "{size=" + "9" * 5000 + "}"):
        with pytest.raises(WindowError, match="bad value"):
            parse_window(bad)
    assert len(str(pytest.raises(WindowError, parse_window, "{size=" + "9" * 5000 + "}").value)) < 300
    for bad in ("b٠f_٠io->b٠f", "b²f_²io->b²f"):
        with pytest.raises(WindowError, match="unexpected or repeated"):
            parse_dim_labels(bad)


@pytest.mark.parametrize("lines, line, column", [
    (["пар = f32[] parameter(0)"], 3, 3),
    (["pж = f32[] parameter(0)"], 3, 4),
    (["%pж = f32[] parameter(0)"], 3, 5),
    (["p = f32[] parameter(0)", "ROOT r = f32[] negate(%ж)"], 4, 26),
])
def test_names_are_ascii(lines, line, column):
    e = parse_error(entry(*lines))
    assert (e.line, e.column) == (line, column)
    assert "in a name: HLO names are made of ASCII letters, digits" in str(e)
    e = parse_error("HloModule m\nENTRY тест {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert (e.line, e.column) == (2, 7)


def test_only_ascii_white_space_separates_tokens():
    e = parse_error(entry("p =\u00a0f32[] parameter(0)"))
    assert (e.line, e.column) == (3, 6) and "\\xa0" in str(e)
    e = parse_error(entry("p = f32[] parameter(0)\u2003"))
    assert (e.line, e.column) == (3, 25) and "U+2003" in str(e)


# ----------------------------------------------------------------------------
# Item 10: absurd integers and constants out of range
# ----------------------------------------------------------------------------

HUGE = "9" * 5000


@pytest.mark.parametrize("lines, line, column, message", [
    ([f"p = f32[] parameter({HUGE})"], 3, 23, "integer 99999999999999999999... (5000 digits) does "
                                              "not fit in 64 bits"),
    (["p = f32[] parameter(9223372036854775808)"], 3, 23, "does not fit in 64 bits"),
    ([f"ROOT c = s32[] constant({HUGE})"], 3, 27, "(5000 digits) is out of range for s32"),
    ([f"ROOT c = u64[2] constant({{1, -{HUGE}}})"], 3, 32, "(5000 digits) is out of range for u64"),
    (["p = f32[2,3] parameter(0)", f"ROOT t = f32[3,2] transpose(p), dimensions={{1,{HUGE}}}"], 4, 49,
     "does not fit in 64 bits"),
    ([f"p = f32[{HUGE}] parameter(0)"], 3, 11, "dimension 99999999999999999999... (5000 digits) "
                                               "does not fit in 64 bits"),
    (["p = f32[18446744073709551616] parameter(0)"], 3, 11, "does not fit in 64 bits"),
    ([f"p = f32[2]{{{HUGE}}} parameter(0)"], 3, 14, "does not fit in 64 bits"),
])
def test_absurd_integers_are_rejected_with_a_location(lines, line, column, message):
    e = parse_error(entry(*lines))
    assert (e.line, e.column) == (line, column) and message in str(e), str(e)
    assert len(str(e)) < 300


@pytest.mark.parametrize("text, column, message", [
    ("s8[] constant(300)", 26, "300 is out of range for s8"),
    ("s8[] constant(-129)", 26, "-129 is out of range for s8"),
    ("u8[] constant(256)", 26, "256 is out of range for u8"),
    ("u32[] constant(-1)", 27, "-1 is out of range for u32"),
    ("u32[] constant(4294967296)", 27, "out of range for u32"),
    ("s64[] constant(9223372036854775808)", 27, "out of range for s64"),
    ("u64[] constant(18446744073709551616)", 27, "out of range for u64"),
    ("u64[] constant(-9223372036854775809)", 27, "out of range for u64"),
])
def test_integer_constants_must_fit_their_type(text, column, message):
    e = parse_error(entry(f"ROOT c = {text}"))
    assert (e.line, e.column) == (3, column) and message in str(e), str(e)


def test_integer_constants_at_the_edges():
    def value(text):
        return parse_hlo(entry(f"ROOT c = {text}")).entry.root.literal.tolist()
    assert value("s8[2] constant({-128, 127})") == [-128, 127]
    assert value("s64[] constant(-9223372036854775808)") == -2**63
    assert value("u64[] constant(18446744073709551615)") == 2**64 - 1
    assert value("s32[] constant(" + "0" * 5000 + "7)") == 7
    # As in XLA (hlo_parser_test's ConstantUnsignedUnderflow): a u64 may be written
    # as a negative int64, meaning its two's complement.
    assert value("u64[2] constant({-1, -9223372036854775808})") == [2**64 - 1, 2**63]
