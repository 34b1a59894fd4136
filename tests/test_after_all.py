"""after-all with any number of operands (spec: AfterAll), zero included, in
every stage: builder, shape rule and errors, evaluator, code generation (JIT,
tokens through while/conditional/call, an object from C), HLO text, and
`xlac run` with a token result."""
import subprocess
import sys

import numpy as np
import pytest

import xlac
from xlac import ops
from test_aot import build_and_run, needs_cc, runtime_obj  # noqa: F401  (runtime_obj is a fixture)

ORDERED = """
HloModule m

ENTRY e {
  p = f32[4]{0} parameter(0)
  t0 = token[] parameter(1)
  a = token[] after-all()
  b = token[] after-all(a)
  c = token[] after-all(t0, a, b, a)
  r = f32[4]{0} add-dependency(p, c)
  ROOT out = (f32[4]{0}, token[]) tuple(r, c)
}
"""


@pytest.mark.parametrize("count", [0, 1, 2, 3, 5])
def test_builder_takes_any_number_of_tokens(count):
    b = xlac.XlaBuilder("aa")
    tokens = [ops.create_token(b) for _ in range(count)]
    joined = ops.after_all(b, tokens)
    assert joined.shape.is_token
    comp = b.build(joined)
    root = comp.module.entry.root
    assert root.opcode == "after-all" and len(root.operands) == count
    text = comp.as_hlo_text()
    assert xlac.parse_hlo(text).to_text() == text
    assert xlac.evaluate(comp).size == 0          # the evaluator's token: no data
    assert xlac.jit(comp)() is None               # a token result is None, as a token argument is


def test_a_single_token_op_is_accepted():
    b = xlac.XlaBuilder("aa")
    t = ops.create_token(b)
    assert b.build(ops.after_all(b, t)).module.entry.root.operands[0].name == t.name


def test_operands_must_be_tokens():
    b = xlac.XlaBuilder("aa")
    t = ops.create_token(b)
    x = ops.parameter(b, 0, xlac.shape("f32[2]"), "x")
    with pytest.raises(xlac.ShapeError, match=r"after-all: operand 2 must be a token, got f32\[2\]"):
        ops.after_all(b, [t, t, x])
    with pytest.raises(TypeError, match="after_all: builder must be an XlaBuilder"):
        ops.after_all(t, [t])
    with pytest.raises(TypeError, match="after_all: operand 1 must be an XlaOp"):
        ops.after_all(b, [t, 3])


@pytest.mark.parametrize("optimize", [True, False])
def test_variadic_after_all_runs(optimize):
    x = np.arange(4, dtype=np.float32)
    r, tok = xlac.jit(ORDERED, optimize=optimize)(x, None)
    np.testing.assert_array_equal(r, x)
    assert tok is None
    r, tok = xlac.evaluate(ORDERED, x, None)
    np.testing.assert_array_equal(r, x)
    assert tok.size == 0


def test_text_round_trip():
    module = xlac.parse_hlo(ORDERED)
    text = module.to_text()
    assert "c = token[] after-all(t0, a, b, a)" in text and "a = token[] after-all()" in text
    assert xlac.parse_hlo(text).to_text() == text


def test_text_with_a_non_token_operand_is_an_error():
    text = ORDERED.replace("after-all(t0, a, b, a)", "after-all(t0, p)")
    with pytest.raises(xlac.ShapeError, match=r"after-all: operand 1 must be a token"):
        xlac.jit(text)


TOKENS_THROUGH_CONTROL_FLOW = """
HloModule m

cond {
  s = (s32[], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  t = token[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  t1 = token[] after-all()
  t2 = token[] after-all(t, t1, t)
  ROOT r = (s32[], token[]) tuple(i2, t2)
}

twice {
  x = s32[] parameter(0)
  t = token[] parameter(1)
  y = s32[] add(x, x)
  u = token[] after-all(t, t)
  ROOT r = (s32[], token[]) tuple(y, u)
}

negate {
  a = (s32[], token[]) parameter(0)
  x = s32[] get-tuple-element(a), index=0
  t = token[] get-tuple-element(a), index=1
  n = s32[] negate(x)
  ROOT r = (s32[], token[]) tuple(n, t)
}

keep {
  a = (s32[], token[]) parameter(0)
  x = s32[] get-tuple-element(a), index=0
  t = token[] get-tuple-element(a), index=1
  ROOT r = (s32[], token[]) tuple(x, t)
}

ENTRY e {
  z = s32[] parameter(0)
  flag = pred[] parameter(1)
  t0 = token[] after-all()
  init = (s32[], token[]) tuple(z, t0)
  w = (s32[], token[]) while(init), condition=cond, body=body
  i = s32[] get-tuple-element(w), index=0
  t = token[] get-tuple-element(w), index=1
  c = (s32[], token[]) call(i, t), to_apply=twice
  k = (s32[], token[]) conditional(flag, c, c), true_computation=negate, false_computation=keep
  j = s32[] get-tuple-element(k), index=0
  u = token[] get-tuple-element(k), index=1
  ROOT out = (s32[], token[]) tuple(j, u)
}
"""


@pytest.mark.parametrize("optimize", [True, False])
def test_tokens_through_while_call_and_conditional(optimize):
    text = TOKENS_THROUGH_CONTROL_FLOW
    exe = xlac.jit(text, optimize=optimize)
    for flag, want in ((True, -6), (False, 6)):
        j, u = exe(np.int32(0), np.bool_(flag))
        assert int(j) == want and u is None
        j, u = xlac.evaluate(text, np.int32(0), np.bool_(flag))
        assert int(j) == want


@needs_cc
def test_from_c(tmp_path, runtime_obj):  # noqa: F811
    text = """
HloModule m
ENTRY e {
  p = f32[3]{0} parameter(0)
  a = token[] after-all()
  b = token[] after-all()
  c = token[] after-all(a, b, a)
  ROOT r = f32[3]{0} add-dependency(p, c)
}
"""
    x = np.array([1, 2, 3], np.float32)
    _, outputs, _ = build_and_run(xlac.parse_hlo(text), [x], tmp_path, runtime_obj, name="aa")
    np.testing.assert_array_equal(outputs[0], x)


@pytest.mark.parametrize("reference", [False, True])
def test_cli_run_writes_a_token_result_as_an_empty_array(tmp_path, reference):
    module = tmp_path / "m.hlo"
    module.write_text(ORDERED, encoding="utf-8")
    np.savez(tmp_path / "in.npz", np.arange(4, dtype=np.float32))   # the token parameter may be left out
    cmd = [sys.executable, "-m", "xlac", "run", str(module), "--inputs", str(tmp_path / "in.npz")]
    cmd += ["--reference"] if reference else []
    proc = subprocess.run(cmd + ["--out", str(tmp_path / "out.npz")], capture_output=True, encoding="utf-8")
    assert proc.returncode == 0 and proc.stderr == ""
    with np.load(tmp_path / "out.npz", allow_pickle=False) as d:
        np.testing.assert_array_equal(d["arr_0"], np.arange(4, dtype=np.float32))
        assert d["arr_1"].dtype == np.uint8 and d["arr_1"].size == 0
    proc = subprocess.run(cmd, capture_output=True, encoding="utf-8")
    assert proc.returncode == 0 and proc.stderr == "" and "arr_1: token" in proc.stdout
