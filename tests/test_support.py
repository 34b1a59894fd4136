"""The support matrix (xlac/support.py) and docs/ops.md, generated from it."""
from pathlib import Path

import numpy as np

import xlac
from xlac import support
from xlac.hlo.opcodes import OPCODES

DOC = Path(__file__).resolve().parents[1] / "docs" / "ops.md"


def test_docs_ops_md_is_current():
    # Regenerate with: python -m xlac.support > docs/ops.md
    assert DOC.read_text(encoding="utf-8") == support.markdown(), "docs/ops.md is stale: python -m xlac.support > docs/ops.md"


def test_every_opcode_walks_through_every_stage():
    rows = {s.op.name: s for s in support.matrix()}
    assert set(rows) == {n for n in OPCODES if not n.startswith("xlac-test-")}
    print()
    for s in rows.values():
        print(f"{s.op.name:28} builder={','.join(s.builders) or '-':24} shape={s.shape:d} "
              f"evaluator={s.evaluator:d} codegen={s.codegen or '-':10} kinds={s.kinds}")
    # What compiles is evaluated too (the evaluator is every compiled op's oracle).
    for s in rows.values():
        if s.compiles and s.codegen != "plumbing" and s.op.name not in ("fusion",):
            assert s.evaluator, s.op.name


def test_the_matrix_tells_the_truth_about_elementwise_kinds():
    # A kind the matrix lists compiles; a kind it says "not yet" is refused by name.
    scalars = {"pred": np.bool_(True), "int": np.int32(3), "float": np.float32(0.5),
               "complex": np.complex64(0.5 + 0.25j)}
    types = {"pred": "pred", "int": "s32", "float": "f32", "complex": "c64"}
    for s in support.matrix():
        if s.kinds is None or s.op.category not in ("unary", "binary"):
            continue
        for kind in s.kinds + s.not_yet:
            t = types[kind]
            n = s.op.arity
            params = "\n".join(f"  p{k} = {t}[] parameter({k})" for k in range(n))
            root_t = t
            if s.op.name in ("is-finite",):
                root_t = "pred"
            elif s.op.name in ("real", "imag", "abs") and kind == "complex":
                root_t = "f32"
            elif s.op.name == "complex":
                root_t = "c64"
            text = (f"HloModule m\nENTRY e {{\n{params}\n  ROOT r = {root_t}[] {s.op.name}("
                    + ", ".join(f"p{k}" for k in range(n)) + ")\n}")
            args = [scalars[kind]] * n
            if kind in s.kinds:
                xlac.jit(text)(*args)
            else:
                try:
                    xlac.jit(text)
                except xlac.UnsupportedError as e:
                    assert s.op.name in str(e)
                else:
                    raise AssertionError(f"{s.op.name} for {kind} compiled, the matrix says not yet")
