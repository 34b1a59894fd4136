"""The HLO verifier catches hand-made broken modules and accepts good ones."""
import numpy as np
import pytest

import xlac
from xlac import ShapeError, ops
from xlac.hlo.ir import HloComputation, HloInstruction, HloModule
from xlac.hlo.verifier import VerifierError, verify

S = xlac.shape


def param(n, shape, name=None):
    return HloInstruction("parameter", S(shape), attrs={"parameter_number": n}, name=name or f"p{n}")


def good_module():
    """add(p0, p1) plus a reduce calling a scalar add computation."""
    a, b = param(0, "f32[]", "a"), param(1, "f32[]", "b")
    add = HloComputation("add", [a, b, HloInstruction("add", S("f32[]"), [a, b], name="sum")])
    x, y = param(0, "f32[2,3]", "x"), param(1, "f32[2,3]{0,1}", "y")
    s = HloInstruction("add", S("f32[2,3]"), [x, y], name="s")
    zero = HloInstruction("constant", S("f32[]"), attrs={"literal": np.float32(0)}, name="zero")
    r = HloInstruction("reduce", S("f32[2]"), [s, zero], {"dimensions": (1,), "to_apply": add}, name="r")
    entry = HloComputation("main", [x, y, s, zero, r])
    return HloModule("m", [add, entry]), entry


def test_good_module_passes():
    m, _ = good_module()
    verify(m)


def test_layouts_may_differ():
    m, entry = good_module()
    entry.instruction("s").shape = S("f32[2,3]{0,1}")
    verify(m)


def test_wrong_shape():
    m, entry = good_module()
    entry.instruction("s").shape = S("f32[3,2]")
    with pytest.raises(ShapeError, match="'s'.*differs from the inferred shape f32\\[2,3\\]"):
        verify(m)


def test_a_repeated_signature_is_checked_by_its_shape_and_attributes():
    """Shape checks already passed are not repeated (the same op on the same
    shapes), but a different result shape or attribute is checked again."""
    x, y = param(0, "f32[2,3]", "x"), param(1, "f32[2,3]", "y")
    first = HloInstruction("add", S("f32[2,3]"), [x, y], name="first")
    again = HloInstruction("add", S("f32[2,3]"), [x, first], name="again")
    wrong = HloInstruction("add", S("f32[3,2]"), [x, again], name="wrong")
    with pytest.raises(ShapeError, match="wrong.*differs"):
        verify(HloModule("m", [HloComputation("main", [x, y, first, again, wrong])]))
    t1 = HloInstruction("transpose", S("f32[3,2]"), [x], {"dimensions": (1, 0)}, name="t1")
    t2 = HloInstruction("transpose", S("f32[3,2]"), [x], {"dimensions": (0, 1)}, name="t2")
    with pytest.raises(ShapeError, match="t2"):
        verify(HloModule("m", [HloComputation("main", [x, t1, t2])]))


def test_wrong_element_type():
    m, entry = good_module()
    entry.instruction("r").shape = S("f64[2]")
    with pytest.raises(ShapeError, match="main.*'r'"):
        verify(m)


def test_shape_rule_failure_is_reported():
    m, entry = good_module()
    entry.instruction("y").shape = S("f32[2,4]")
    with pytest.raises(ShapeError, match="'s' \\(add\\): add: operands must have identical dimensions"):
        verify(m)


def test_operand_from_other_computation():
    m, entry = good_module()
    stranger = m.computation("add").instruction("a")
    entry.instruction("s").operands[1] = stranger
    with pytest.raises(VerifierError, match="not an instruction of this computation"):
        verify(m)


def test_use_before_definition():
    m, entry = good_module()
    # make s use r, which comes after it
    entry.instruction("s").operands[0] = entry.instruction("r")
    with pytest.raises(VerifierError, match="used before it is defined"):
        verify(m)


def test_duplicate_names():
    m, entry = good_module()
    entry.instruction("zero").name = "s"
    with pytest.raises(VerifierError, match="name 's' is duplicated"):
        verify(m)


def test_duplicate_computation_names():
    m, entry = good_module()
    m.computation("add").name = "main"
    with pytest.raises(VerifierError, match="computation name 'main' is duplicated"):
        verify(m)


def test_parameter_numbers_with_gap():
    m, entry = good_module()
    entry.instruction("y").attrs["parameter_number"] = 2
    with pytest.raises(VerifierError, match="parameter numbers \\[0, 2\\]"):
        verify(m)


def test_parameter_numbers_repeated():
    m, entry = good_module()
    entry.instruction("y").attrs["parameter_number"] = 0
    with pytest.raises(VerifierError, match="parameter numbers \\[0, 0\\]"):
        verify(m)


def test_root_not_in_computation():
    m, entry = good_module()
    entry.root = HloInstruction("constant", S("f32[]"), attrs={"literal": np.float32(1)}, name="ghost")
    with pytest.raises(VerifierError, match="root 'ghost'"):
        verify(m)


def test_called_computation_not_in_module():
    m, entry = good_module()
    m.computations.remove(m.computation("add"))
    with pytest.raises(VerifierError, match="calls computation 'add', which is not in the module"):
        verify(m)


def test_entry_not_in_module():
    m, entry = good_module()
    m.computations.remove(entry)
    with pytest.raises(VerifierError, match="entry"):
        verify(m)


def test_wrong_operand_count():
    m, entry = good_module()
    s = entry.instruction("s")
    s.operands.append(entry.instruction("x"))
    with pytest.raises(VerifierError, match="takes 2 operand\\(s\\), has 3"):
        verify(m)


def test_wrong_operand_count_variadic_table_entries():
    x = param(0, "f32[4]")
    sl = HloInstruction("slice", S("f32[2]"), [x, x], {"slice": ((0, 2, 1),)}, name="sl")
    with pytest.raises(VerifierError, match="takes 1 operand"):
        verify(HloModule("m", [HloComputation("main", [x, sl])]))


def test_unknown_opcode():
    x = param(0, "f32[4]")
    bad = HloInstruction("frobnicate", S("f32[4]"), [x], name="bad")
    with pytest.raises(VerifierError, match="unknown opcode 'frobnicate'"):
        verify(HloModule("m", [HloComputation("main", [x, bad])]))


def test_reduce_with_wrong_reducer_signature():
    m, entry = good_module()
    add = m.computation("add")
    for p in add.parameters:
        p.shape = S("s32[]")
    add.root.shape = S("s32[]")
    with pytest.raises(ShapeError, match="reducer add must have the signature"):
        verify(m)


def test_opcode_without_rule_is_not_shape_checked():
    x = param(0, "f32[1,4,4,1]")
    conv = HloInstruction("xlac-test-unimplemented", S("f32[9]"), [x], name="conv")
    verify(HloModule("m", [HloComputation("main", [x, conv])]))


def test_broken_broadcast_and_gte():
    x = param(0, "f32[3]")
    bc = HloInstruction("broadcast", S("f32[3,2]"), [x], {"dimensions": (1,)}, name="bc")
    with pytest.raises(ShapeError, match="broadcast"):
        verify(HloModule("m", [HloComputation("main", [x, bc])]))
    t = param(0, "(f32[3], s32[])")
    g = HloInstruction("get-tuple-element", S("f32[3]"), [t], {"index": 5}, name="g")
    with pytest.raises(ShapeError, match="index 5 is out of range"):
        verify(HloModule("m", [HloComputation("main", [t, g])]))


def test_builder_output_verifies():
    sub = xlac.XlaBuilder("add")
    ops.add(ops.parameter(sub, 0, S("f32[]"), "a"), ops.parameter(sub, 1, S("f32[]"), "b"))
    add = sub.build()
    b = xlac.XlaBuilder("f")
    x = ops.parameter(b, 0, S("f32[2,3]"), "x")
    v = ops.parameter(b, 1, S("f32[3]"), "v")
    y = ops.add(x, v, broadcast_dimensions=[1]) * 2.0
    r = ops.reduce(y, 0.0, add, [0])
    ops.tuple(b, [r, ops.dot(x, v), ops.pad(x, 0.0, [(1, -1, 1), (0, 0, 0)]),
                  ops.slice(x, [0, 1], [2, 3]), ops.transpose(x, [1, 0]), ops.reshape(x, [6]),
                  ops.call(b, add, [ops.constant(b, 1.0), ops.constant(b, 2.0)])])
    verify(b.build().module)


def test_parsed_text_verifies():
    parser = pytest.importorskip("xlac.hlo.parser")
    text = """
HloModule m
ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  c = f32[] constant(1)
  b = f32[2,3]{1,0} broadcast(c), dimensions={}
  ROOT s = f32[2,3]{1,0} add(x, b)
}
"""
    verify(parser.parse_hlo(text))
    with pytest.raises(ShapeError):
        verify(parser.parse_hlo(text.replace("ROOT s = f32[2,3]{1,0}", "ROOT s = f32[3,2]{1,0}")))


@pytest.mark.parametrize("body, message", [
    ("a = f32[] parameter(0)\n  ROOT f = f32[] fusion(a, a), kind=kLoop", "missing attribute 'calls'"),
    ("a = f32[] parameter(0)\n  ROOT f = f32[] fusion(a, a), kind=kLoop, calls=one", "takes 1 parameter"),
    ("a = f32[] parameter(0)\n  ROOT f = s32[] fusion(a), kind=kLoop, calls=one", "differs from the inferred"),
])
def test_fusion_needs_a_matching_fused_computation(body, message):
    # Found by the parser fuzzer: a fusion without calls= was accepted, and jit
    # and evaluate then failed with KeyError: 'calls'.
    text = f"HloModule m\none {{\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}}\n" \
           f"ENTRY e {{\n  {body}\n}}"
    with pytest.raises(xlac.ShapeError, match=message):
        verify(xlac.parse_hlo(text))


# -- errors say where the instruction is in the text it was read from ----------------------
LOCATED = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  ROOT z = f32[3] add(x, y)
}
"""


def _located_error(text):
    with pytest.raises((VerifierError, ShapeError)) as e:
        verify(xlac.parse_hlo(text))
    return e.value


def test_parsed_instructions_know_their_line_and_column():
    m = xlac.parse_hlo(LOCATED)
    assert m.entry.root.location == (12, 3)
    assert m.computation("add").instruction("b").location == (5, 3)
    assert m.clone().entry.root.location == (12, 3)          # a clone keeps them (compiles clone)
    nested = xlac.parse_hlo("HloModule m\nENTRY e {\n  ROOT n = f32[] negate(f32[] parameter(0))\n}\n")
    assert nested.entry.root.operands[0].location == (3, 25)


def test_shape_errors_carry_the_instruction_place():
    e = _located_error(LOCATED)
    assert isinstance(e, ShapeError) and (e.line, e.column) == (12, 3)
    assert e.message == str(e) and "instruction 'z' (add)" in e.message


def test_structural_errors_carry_the_instruction_place():
    e = _located_error(LOCATED.replace("y = f32[2] parameter(1)", "y = f32[2] parameter(2)")
                       .replace("f32[3] add(x, y)", "f32[2] add(x, y)"))
    assert isinstance(e, VerifierError) and (e.line, e.column) == (11, 3)     # the misnumbered parameter
    e = _located_error(LOCATED.replace("ROOT z = f32[3] add(x, y)", "  c = f32[] call(x), to_apply=add\n"
                                       "  ROOT z = f32[2] add(x, y)"))
    assert isinstance(e, VerifierError) and (e.line, e.column) == (12, 5) and "calls add" in str(e)


def test_collective_errors_carry_the_instruction_place():
    text = ("HloModule m, replica_count=2\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[2] parameter(0)\n"
            "  ROOT r = f32[2] all-reduce(x), replica_groups={{0}}, to_apply=add\n}\n")
    e = _located_error(text)
    assert isinstance(e, VerifierError) and (e.line, e.column) == (11, 3) and "replica groups" in str(e)


def test_built_modules_have_no_place():
    m, entry = good_module()
    entry.instruction("s").shape = S("f32[3]")
    with pytest.raises(ShapeError) as e:
        verify(m)
    assert not getattr(e.value, "line", 0)
