"""CompositeCall (spec: CompositeCall): a ``call`` with ``is_composite=true``
and ``composite.name`` / ``composite.attributes`` / ``composite.version``
frontend attributes.  Builder, the checks XLA's verifier makes, evaluator,
code generation (the decomposition runs; JIT and an object from C), HLO text
in XLA's forms, and the attributes kept through every pass."""
import subprocess
import sys

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.codegen.compiler import lower
from xlac.hlo import collectives
from xlac.passes.call_inliner import CallInliner
from xlac.passes.pipeline import codegen_pipeline
from test_aot import build_and_run, needs_cc, runtime_obj  # noqa: F401  (runtime_obj is a fixture)

ATTRIBUTES = "{n = 1 : i32, tensor = dense<1> : tensor<i32>}"
FRONTEND = f'{{composite.attributes={ATTRIBUTES},composite.name="foo.bar",composite.version="1"}}'

# XLA's own parser tests (xla/hlo/parser/hlo_parser_test.cc): the forms of the text.
XLA_FORMS = {
    "full": FRONTEND,
    "extra_frontend_attributes": FRONTEND[:-1] + ',foo="bar"}',
    "optional_attributes_and_version": '{composite.name="foo.bar"}',
    "optional_attributes": '{composite.name="foo.bar",composite.version="1"}',
    "optional_version": f'{{composite.attributes={ATTRIBUTES},composite.name="foo.bar"}}',
}


def xla_text(frontend: str) -> str:
    return f"""HloModule CompositeCall, entry_computation_layout={{()->f32[]}}

%add (x: f32[]) -> f32[] {{
  %x = f32[] parameter(0)
  %constant = f32[] constant(2)
  ROOT %z = f32[] add(f32[] %x, f32[] %constant)
}}

ENTRY %CompositeCall.v2 () -> f32[] {{
  %constant.1 = f32[] constant(42)
  ROOT %call = f32[] call(f32[] %constant.1), to_apply=%add, is_composite=true, frontend_attributes={frontend}
}}
"""


def decomposition():
    """(x, y) -> (x * y + 1, x - y): a tuple of two results."""
    b = xlac.XlaBuilder("decomposition")
    x = ops.parameter(b, 0, xlac.shape("f32[3,4]"), "x")
    y = ops.parameter(b, 1, xlac.shape("f32[3,4]"), "y")
    one = ops.constant(b, np.float32(1))
    return b.build(ops.tuple(b, [ops.add(ops.mul(x, y), ops.broadcast(one, (3, 4))), ops.sub(x, y)]))


def build(name="foo.bar", attributes=ATTRIBUTES, version=1):
    b = xlac.XlaBuilder("main")
    x = ops.parameter(b, 0, xlac.shape("f32[3,4]"), "x")
    y = ops.parameter(b, 1, xlac.shape("f32[3,4]"), "y")
    c = ops.composite_call(b, decomposition(), [ops.neg(x), y], name, attributes, version)
    return b.build(ops.add(ops.get_tuple_element(c, 0), ops.get_tuple_element(c, 1)))


def args():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2)]


def want(x, y):
    return (-x * y + 1) + (-x - y)


def composite_calls(module):
    return [i for c in module.computations for i in c.instructions
            if i.opcode == "call" and i.attrs.get("is_composite") is True]


# -- builder ------------------------------------------------------------------------------

def test_builder_writes_xla_text():
    text = build().as_hlo_text()
    assert f"is_composite=true, frontend_attributes={FRONTEND}" in text
    assert xlac.parse_hlo(text).to_text() == text


def test_builder_defaults_attributes_and_version_as_xla():
    b = xlac.XlaBuilder("main")
    x = ops.parameter(b, 0, xlac.shape("f32[3,4]"), "x")
    c = ops.composite_call(b, decomposition(), [x, x], "foo.bar")
    fields = collectives.parse_frontend_attributes(c.builder.build(c).module.entry.root.attrs["frontend_attributes"])
    assert fields == {"composite.attributes": "{}", "composite.name": "foo.bar", "composite.version": "0"}


def test_a_name_with_quotes_round_trips():
    comp = build(name='a"b\\c')
    module = xlac.parse_hlo(comp.as_hlo_text())
    assert module.to_text() == comp.as_hlo_text()


@pytest.mark.parametrize("kwargs, message", [
    (dict(name=""), "a composite call must have frontend attributes with key composite.name whose value "
                    "is non-empty"),
    (dict(attributes=""), "key composite.attributes whose value is default: {} or non-empty"),
    (dict(version=-1), "a composite.version whose value is a non-negative integer but got: -1"),
])
def test_builder_errors_are_xlas(kwargs, message):
    with pytest.raises(xlac.ShapeError, match="^call: ") as info:
        build(**kwargs)
    assert message in str(info.value)


@pytest.mark.parametrize("kwargs, message", [
    (dict(name=3), "name must be a string"),
    (dict(attributes={"n": 1}), "attributes must be the text"),
    (dict(version="1"), "version must be an integer"),
])
def test_bad_argument_types(kwargs, message):
    with pytest.raises(TypeError, match=f"composite_call: {message}"):
        build(**kwargs)


def test_operands_must_match_the_decomposition():
    b = xlac.XlaBuilder("main")
    x = ops.parameter(b, 0, xlac.shape("f32[3,4]"), "x")
    with pytest.raises(xlac.ShapeError, match="call: computation decomposition takes 2 parameter"):
        ops.composite_call(b, decomposition(), [x], "foo.bar")


# -- text ---------------------------------------------------------------------------------

@pytest.mark.parametrize("form", list(XLA_FORMS))
def test_xla_forms_parse_print_and_run(form):
    module = xlac.parse_hlo(xla_text(XLA_FORMS[form]))
    root = module.entry.root
    assert root.opcode == "call" and root.attrs["is_composite"] is True
    text = module.to_text()
    assert f"is_composite=true, frontend_attributes={XLA_FORMS[form]}" in text
    assert xlac.parse_hlo(text).to_text() == text
    assert float(xlac.evaluate(module)) == 44.0
    assert float(xlac.jit(xla_text(XLA_FORMS[form]))()) == 44.0


@pytest.mark.parametrize("frontend, message", [
    (None, "key composite.name whose value is non-empty"),
    ('{composite.name=""}', "key composite.name whose value is non-empty"),
    ('{composite.name="a",composite.attributes=""}', "composite.attributes whose value is default"),
    ('{composite.name="a",composite.version="-1"}', "non-negative integer but got: -1"),
    ('{composite.name="a",composite.version="one"}', "non-negative integer but got: one"),
])
def test_verifier_checks_text(frontend, message):
    text = xla_text(frontend) if frontend else xla_text("").replace(", frontend_attributes=", "")
    with pytest.raises(xlac.ShapeError, match="call: a composite call") as info:
        xlac.jit(text)
    assert message in str(info.value)


def test_not_composite_needs_no_attributes():
    text = xla_text("").replace("is_composite=true, frontend_attributes=", "is_composite=false")
    assert float(xlac.jit(text)()) == 44.0


# -- running the decomposition ---------------------------------------------------------------

@pytest.mark.parametrize("optimize", [True, False])
def test_runs_the_decomposition(optimize):
    comp = build()
    x, y = args()
    np.testing.assert_allclose(xlac.evaluate(comp, x, y), want(x, y), rtol=1e-6)
    np.testing.assert_allclose(xlac.jit(comp, optimize=optimize)(x, y), want(x, y), rtol=1e-6)


@needs_cc
def test_from_c(tmp_path, runtime_obj):  # noqa: F811
    comp = build()
    x, y = args()
    _, outputs, _ = build_and_run(comp.module, [x, y], tmp_path, runtime_obj, name="cc")
    np.testing.assert_array_equal(outputs[0], xlac.jit(comp)(x, y))


def test_nested_composites():
    inner = xlac.XlaBuilder("inner")
    a = ops.parameter(inner, 0, xlac.shape("f32[4]"), "a")
    inner_comp = inner.build(ops.exp(a))
    outer = xlac.XlaBuilder("outer")
    p = ops.parameter(outer, 0, xlac.shape("f32[4]"), "p")
    outer_comp = outer.build(ops.add(ops.composite_call(outer, inner_comp, [p], "my.exp"), p))
    b = xlac.XlaBuilder("main")
    x = ops.parameter(b, 0, xlac.shape("f32[4]"), "x")
    comp = b.build(ops.composite_call(b, outer_comp, [x], "my.exp_plus", "{}", 3))
    lowered = lower(comp.module)
    names = {collectives.frontend_attributes(c)["composite.name"] for c in composite_calls(lowered.hlo)}
    assert names == {"my.exp", "my.exp_plus"}
    v = np.linspace(-1, 1, 4).astype(np.float32)
    np.testing.assert_allclose(xlac.jit(comp)(v), np.exp(v) + v, rtol=1e-6)


# -- kept through every pass ------------------------------------------------------------------

def test_kept_through_the_pipeline_and_round_trips():
    module = build().module.clone()
    seen = []

    def after_each(pipeline, pass_name, m, changed):
        seen.append((pass_name, [collectives.frontend_attributes(c) for c in composite_calls(m)]))
    pipeline = codegen_pipeline(verify=True)
    pipeline.dump = after_each
    pipeline.run(module)
    expected = {"composite.attributes": ATTRIBUTES, "composite.name": "foo.bar", "composite.version": "1"}
    assert seen and all(calls == [expected] for _, calls in seen), seen
    text = module.to_text()
    assert xlac.parse_hlo(text).to_text() == text
    # The decomposition is fused like the entry: x * y + 1 is one loop.
    (call,) = composite_calls(module)
    opcodes = [i.opcode for i in call.attrs["to_apply"].instructions]
    assert "fusion" in opcodes and "multiply" not in opcodes and "add" not in opcodes


def test_xlac_dump_shows_it(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(build().as_hlo_text(), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "xlac", "dump", str(path)], capture_output=True, encoding="utf-8")
    assert proc.returncode == 0, proc.stderr
    assert f"is_composite=true, frontend_attributes={FRONTEND}" in proc.stdout


def test_inlined_on_request_as_xla_does():
    module = build().module.clone()
    assert CallInliner(inline_composites=True).run(module)
    assert not composite_calls(module)
    x, y = args()
    np.testing.assert_allclose(xlac.jit(module)(x, y), want(x, y), rtol=1e-6)
