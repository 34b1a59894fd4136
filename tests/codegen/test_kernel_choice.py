"""Kernel choice (``xlac/codegen/kernel_choice.py``): an ordered list of
candidates per opcode, filled by ``kernels.register_all``; the reasons the
skipped candidates gave are diagnostics that ``xlac dump`` prints."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import xlac
from xlac.codegen import kernels
from xlac.codegen.compiler import KERNELS, lower
from xlac.codegen.kernel_choice import KernelCandidate, KernelRegistry, NotApplicable, plan_function
from xlac.codegen.kernels import dot as dot_kernel
from xlac.errors import UnsupportedError


def _module(body: str) -> str:
    return f"HloModule m\n\nENTRY e {{\n{body}\n}}\n"


DOT = """  a = {t}[64,32]{{1,0}} parameter(0)
  b = {t}[32,48]{{1,0}} parameter(1)
  ROOT d = {t}[64,48]{{1,0}} dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}"""

SUM = """  x = f32[512,1024]{{1,0}} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[{kept}]{{0}} reduce(x, z), dimensions={{{dim}}}, to_apply=add
}}

add {{
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)"""


def _notes(text: str) -> list[str]:
    return [str(d) for d in lower(xlac.parse_hlo(text)).hlo.diagnostics if d.source == "kernel-choice"]


def test_every_key_ends_with_the_loop_kernel_and_names_are_unique():
    for key in KERNELS.keys():
        names = [c.name for c in KERNELS.candidates(key)]
        assert names[-1] == "loop", key
        assert len(names) == len(set(names)), key
    assert [c.name for c in KERNELS.candidates("dot")] == ["dot.library-gemm", "dot.gemv", "dot.gemm",
                                                          "dot.library-gemm.amx-bf16", "dot.library-gemm.bf16",
                                                          "dot.library-gemm.amx-int8", "dot.library-gemm.vnni",
                                                          "dot.library-gemm.widen", "dot.gemm.widen", "loop"]
    # An opcode with no kernels of its own has the fallback only.
    assert [c.name for c in KERNELS.candidates("add")] == ["loop"]


def test_register_all_fills_a_fresh_registry_the_same_way():
    fresh = kernels.register_all(KernelRegistry())
    assert fresh.keys() == KERNELS.keys()
    for key in KERNELS.keys():
        assert fresh.candidates(key) == KERNELS.candidates(key)


def test_an_integer_dot_says_why_the_gemm_kernels_declined():
    notes = _notes(_module(DOT.format(t="s32")))
    assert len(notes) == 1
    assert notes[0].startswith("kernel d: loop (not dot.library-gemm: not a dot of f32 or f64")
    assert "not dot.gemm:" in notes[0]


def test_a_float_dot_takes_the_library_and_switching_it_off_is_a_reason(monkeypatch):
    text = _module(DOT.format(t="f32"))
    assert _notes(text) == []      # the first candidate applied: nothing to say
    monkeypatch.setattr(dot_kernel, "USE_LIBRARY", False)
    (note,) = _notes(text)
    assert note.startswith("kernel d: dot.gemm (not dot.library-gemm: the GEMM library is switched off")
    assert "not dot.gemv: a gemm, not a gemv" in note


@pytest.mark.parametrize("dim, kept, chosen", [(0, 1024, "reduce.column"), (1, 512, "loop")])
def test_reduce_strategies_are_candidates(dim, kept, chosen):
    text = _module(SUM.format(dim=dim, kept=kept))
    notes = _notes(text)
    if chosen == "reduce.column":
        assert notes == []
    else:
        (note,) = notes
        # (the reduce is a kInput fusion by now)
        assert re.match(r"kernel \S*r: loop \(not reduce.column: the reduced dimensions are not all major", note)
        assert "not reduce.split:" in note
    x = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
    np.testing.assert_allclose(xlac.jit(text)(x), x.sum(dim), rtol=1e-4, atol=1e-3)


def test_candidates_are_tried_in_order_and_none_applying_is_an_error():
    calls = []
    first = KernelCandidate("first", lambda ctx: None, lambda inst: calls.append("first") or "no reason")
    second = KernelCandidate("second", lambda ctx: None, lambda inst: calls.append("second"))
    r = KernelRegistry()
    r.add("negate", first, second)
    inst = xlac.parse_hlo(_module("  x = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(x)")).entry.root
    choice = r.choose(inst)
    assert choice.candidate is second and choice.skipped == (("first", "no reason"),)
    assert calls == ["first", "second"]
    r2 = KernelRegistry()
    r2.add("negate", first)
    with pytest.raises(UnsupportedError, match=r"negate.*n: no kernel applies \(first: no reason\)"):
        r2.choose(inst)


def test_plan_function_gives_the_plan_or_the_reason():
    @plan_function
    def plan(inst):
        if inst.opcode != "negate":
            raise NotApplicable(f"{inst.opcode} is not negate")
        return ("plan", inst.name)
    m = xlac.parse_hlo(_module("  x = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(x)"))
    n, x = m.entry.root, m.entry.root.operands[0]
    assert plan(n) == ("plan", "n") and plan.why_not(n) is None
    assert plan(x) is None and plan.why_not(x) == "parameter is not negate"


def test_xlac_dump_prints_the_kernel_choice(tmp_path):
    path = tmp_path / "dot.hlo"
    path.write_text(_module(DOT.format(t="s32")), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "xlac", "dump", str(path)], capture_output=True, encoding="utf-8",
                         check=True)
    assert "// kernel d: loop (not dot.library-gemm:" in out.stdout
    assert out.stderr == ""
