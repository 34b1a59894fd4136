"""Pipelines: order of the codegen pipeline, dump hooks, XLAC_DUMP_TO files,
``xlac dump --after-each-pass``, and the IR helpers the passes rely on."""
import os
import re

import numpy as np
import pytest

import xlac
from passtest import parse
from xlac.cli import main
from xlac.hlo.ir import HloInstruction
from xlac.hlo.verifier import verify
from xlac.passes.pipeline import Pipeline, codegen_pipeline, dump_hook, dump_text

TEXT = """
HloModule m
ENTRY e {
  x = f32[4]{0} parameter(0)
  one = f32[] constant(1)
  b = f32[4]{0} broadcast(one), dimensions={}
  y = f32[4]{0} multiply(x, b)
  ROOT n = f32[4]{0} negate(y)
}
"""


def _names(p):
    return [(q.name, _names(q)) if isinstance(q, Pipeline) else q.name for q in p.passes]


def test_codegen_pipeline_order():
    p = codegen_pipeline()
    # The declared entry layout and XLA's layout annotations, inline calls, expand,
    # split tuple constants, inline the calls expansions made, simplify to a fixed
    # point, combine all-reduces, merge identical control-flow computations, then
    # layouts and fusion, and bitcasts.
    assert _names(p)[:2] == ["entry-computation-layout", "layout-normalization"]
    assert _names(p)[7:] == ["all-reduce-combiner", "computation-deduplicator", "layout-assignment", "fusion",
                             "multi-output-fusion", "fused-cse", "reshape-to-bitcast"]
    assert _names(p)[2:7] == ["call-inliner", "op-expander", "split-tuple-constants", "call-inliner",
                              ("simplify", ["algebraic-simplifier", "constant-folding",
                                            "cse", "dce", "tuple-simplifier",
                                            "while-loop-invariant-code-motion"])]
    assert p.passes[6].fixed_point


class _Counting:
    name = "counting"

    def __init__(self, limit):
        self.limit, self.runs = limit, 0

    def run(self, module):
        self.runs += 1
        return self.runs < self.limit


def test_fixed_point_and_hooks_see_every_pass_in_order():
    seen = []
    inner = Pipeline("inner", [_Counting(3)], fixed_point=True)
    outer = Pipeline("outer", [_Counting(1), inner], dump=lambda *a: seen.append(a[:2] + (a[3],)))
    assert outer.run(parse(TEXT))
    assert seen == [("outer", "counting", False), ("inner", "counting", True),
                    ("inner", "counting", True), ("inner", "counting", False)]


def test_dump_hook_context_and_no_hooks_outside():
    seen = []
    module = parse(TEXT)
    with dump_hook(lambda pipe, name, mod, changed: seen.append((pipe, name, changed, mod.to_text()))):
        codegen_pipeline(verify=True).run(module)
    assert [s[:2] for s in seen[:8]] == [("codegen", "entry-computation-layout"),
                                         ("codegen", "layout-normalization"),
                                         ("codegen", "call-inliner"),
                                         ("codegen", "op-expander"),
                                         ("codegen", "split-tuple-constants"),
                                         ("codegen", "call-inliner"),
                                         ("simplify", "algebraic-simplifier"),
                                         ("simplify", "constant-folding")]
    first_change = next(s for s in seen if s[2])
    assert first_change[1] == "algebraic-simplifier" and "multiply" not in first_change[3]
    n = len(seen)
    codegen_pipeline().run(parse(TEXT))
    assert len(seen) == n


def test_xlac_dump_to_writes_numbered_files(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAC_DUMP_TO", str(tmp_path))
    codegen_pipeline().run(parse(TEXT))
    names = sorted(os.listdir(tmp_path))
    # As XLA's --xla_dump_to names them: module number, module name, step, pipeline, pass.
    m = re.fullmatch(r"module_(\d{4})\.(\w+)\.0000\.codegen\.before_optimizations\.hlo", names[0])
    assert m and m.group(2) == parse(TEXT).name
    prefix = f"module_{m.group(1)}.{m.group(2)}."
    assert all(n.startswith(prefix) for n in names)
    rest = [n[len(prefix):] for n in names]
    assert rest[1:8] == ["0001.codegen.after_entry-computation-layout.hlo",
                         "0002.codegen.after_layout-normalization.hlo",
                         "0003.codegen.after_call-inliner.hlo",
                         "0004.codegen.after_op-expander.hlo",
                         "0005.codegen.after_split-tuple-constants.hlo",
                         "0006.codegen.after_call-inliner.hlo",
                         "0007.simplify.after_algebraic-simplifier.hlo"]
    for n in names:
        verify(xlac.parse_hlo((tmp_path / n).read_text(encoding="utf-8")))
    assert "multiply" in (tmp_path / names[0]).read_text(encoding="utf-8")
    assert "multiply" not in (tmp_path / names[7]).read_text(encoding="utf-8")
    path = dump_text("llvm.ll", "; some IR")
    assert path is not None and re.fullmatch(r"module_\d{4}\.xlac\.llvm\.ll", os.path.basename(path))
    assert open(path, encoding="utf-8").read() == "; some IR"


def test_two_modules_in_one_process_get_their_own_numbers_and_names(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAC_DUMP_TO", str(tmp_path))
    xlac.clear_caches()
    xlac.jit(TEXT.replace("HloModule ", "HloModule first_", 1))
    xlac.jit(TEXT.replace("HloModule ", "HloModule second_", 1))
    names = sorted(os.listdir(tmp_path))
    modules = sorted({n.split(".")[0] + "." + n.split(".")[1] for n in names
                      if "first_" in n or "second_" in n})
    assert len(modules) == 2 and "first_" in modules[0] and "second_" in modules[1]
    assert modules[0].split(".")[0] != modules[1].split(".")[0]
    for mod in modules:    # each compilation: its passes, its IR before and after O3, its assembly
        own = [n[len(mod) + 1:] for n in names if n.startswith(mod + ".")]
        assert {"ir-no-opt.ll", "ir-with-opt.ll", "s"} <= set(own)
        assert any(o.endswith("codegen.after_fusion.hlo") for o in own)
        assert "xlac_entry:" in (tmp_path / f"{mod}.s").read_text(encoding="utf-8")   # the entry's label


def test_no_dump_without_the_setting(monkeypatch):
    monkeypatch.delenv("XLAC_DUMP_TO", raising=False)
    assert dump_text("x.txt", "text") is None


def test_jit_dumps_llvm_ir_before_and_after_optimisation(tmp_path, monkeypatch):
    from xlac.codegen.compiler import lower
    from xlac.codegen.jit import compile_ir
    lowered = lower(parse(TEXT))
    monkeypatch.setenv("XLAC_DUMP_TO", str(tmp_path))
    compile_ir(lowered.llvm_module, lowered.entry_name)
    names = sorted(os.listdir(tmp_path))
    assert [n.split(".", 2)[2] for n in names] == ["ir-no-opt.ll", "ir-with-opt.ll", "s"]
    assert all(n.split(".")[1] == lowered.entry_name for n in names)


def test_cli_dump_after_each_pass(tmp_path, capsys):
    path = tmp_path / "m.hlo"
    path.write_text(TEXT, encoding="utf-8")
    assert main(["dump", str(path), "--after-each-pass"]) == 0
    out = capsys.readouterr().out
    headers = re.findall(r"^// ---- (.*) ----$", out, re.M)
    assert headers[0] == "input"
    assert headers[1] == "after codegen.entry-computation-layout (no change)"
    assert headers[2] == "after codegen.layout-normalization (no change)"
    assert headers[3] == "after codegen.call-inliner (no change)"
    assert headers[4] == "after codegen.op-expander (no change)"
    assert headers[5] == "after codegen.split-tuple-constants (no change)"
    assert headers[6] == "after codegen.call-inliner (no change)"
    assert headers[7] == "after simplify.algebraic-simplifier"
    assert headers[-1] == "final module and buffer assignment"
    assert "temp arena" in out.split("final module and buffer assignment")[1]
    assert main(["dump", str(path)]) == 0
    assert "// ----" not in capsys.readouterr().out


def test_simplified_module_still_computes_the_same_when_compiled():
    module = parse(TEXT)
    x = np.array([1, -0.0, np.inf, np.nan], np.float32)
    np.testing.assert_array_equal(xlac.jit(module)(x), xlac.evaluate(module, x))


# -- IR helpers ------------------------------------------------------------------

def test_ir_helpers():
    module = parse(TEXT)
    comp = module.entry
    x, y, n = comp.instruction("x"), comp.instruction("y"), comp.instruction("n")
    names = module.name_uniquer()
    assert names("negate") == "negate.1" and names("negate") == "negate.2"
    names.reserve("abs.1")
    assert names("abs") == "abs.2"
    e = HloInstruction("exponential", x.shape, [x], name=names("exponential"))
    comp.add_instruction_before(e, y)
    assert comp.instructions.index(e) == comp.instructions.index(y) - 1 and e in x.users
    comp.replace_all_uses(y, e)
    assert n.operands == [e] and n in e.users and y.users == []
    comp.remove_instructions([y, comp.instruction("b"), comp.instruction("one")])
    verify(module)
    with pytest.raises(ValueError):
        comp.remove_instruction(e)  # still used by n
    late = HloInstruction("abs", x.shape, [x], name=names("abs"))
    late.parent = comp
    comp.instructions.append(late)
    n.operands = [late]
    comp.sort_topologically()
    comp.compute_users()
    assert comp.instructions.index(late) < comp.instructions.index(n)
    comp.remove_instruction(e)
    verify(module)


def test_a_compilation_of_its_own_inside_another_gets_its_own_number(tmp_path, monkeypatch):
    from xlac.passes.pipeline import dump_module
    monkeypatch.setenv("XLAC_DUMP_TO", str(tmp_path))
    with dump_module("program"):
        outer = dump_text("ir-no-opt.ll", "; the program")
        with dump_module("inner"):                 # the same compilation: the same file names
            assert dump_text("x.txt", "inner") == os.path.join(os.path.dirname(outer),
                                                             os.path.basename(outer)[:-len("ir-no-opt.ll")] + "x.txt")
        with dump_module("gemm_library.v", own=True):
            library = dump_text("ir-no-opt.ll", "; the library")
    assert os.path.basename(outer).split(".")[0] != os.path.basename(library).split(".")[0]
    assert ".gemm_library.v." in library and open(outer, encoding="utf-8").read() == "; the program"


def test_a_library_variant_built_while_a_program_compiles_keeps_its_own_dump(tmp_path):
    # A fresh process with an empty library cache builds the dot's GEMM variant while the
    # program loads; the program's IR dump must still be the program's.
    import subprocess
    import sys
    code = ("import numpy as np, xlac\n"
            "f = xlac.jit('HloModule dotprog\\nENTRY e {\\n a = f32[64,64]{1,0} parameter(0)\\n"
            " ROOT d = f32[64,64]{1,0} dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\\n}')\n"
            "a = np.ones((64, 64), np.float32)\n"
            "assert (f(a) == 64).all()\n")
    env = dict(os.environ, XLAC_DUMP_TO=str(tmp_path / "dumps"), XLAC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("XLAC_LIBRARY_CACHE_DIR", None)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    names = os.listdir(tmp_path / "dumps")
    program = [n for n in names if ".dotprog." in n and n.endswith("ir-no-opt.ll")]
    assert len(program) == 1
    assert '@"xlac_entry"(' in (tmp_path / "dumps" / program[0]).read_text(encoding="utf-8")
    assert any(".gemm_library." in n and n.endswith("ir-no-opt.ll") for n in names)
