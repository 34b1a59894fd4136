"""What xlac supports, op by op and stage by stage: the support matrix.

For every opcode of ``xlac.hlo.opcodes`` (the one definition per op), which
stage handles it — the builder function (``xlac.ops``), shape inference, the
numpy evaluator, code generation (an elemental generator, a kernel, an
expansion into other ops, or buffer plumbing) and HLO text (every defined op
parses and prints) — and, for elementwise ops, the kinds of element type the
shape rule accepts and the code generator emits.  Everything is read from the
per-stage tables themselves, never written down twice.

``python -m xlac.support`` prints ``docs/ops.md``; a test checks the file is
current.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from . import evaluator
from .codegen.compiler import codegen_rule, is_expanded
from .codegen.scalar_ops import element_kinds
from .errors import ShapeError, UnsupportedError
from .frontend import ops
from .hlo import dynamic, shape_inference
from .hlo.opcodes import CATEGORIES, OPCODES, OpDef
from .hlo.stablehlo import imported_ops
from .passes.dynamic_padder import REPLACED_OPCODES
from .shape import C64, F32, PRED, S32, Shape

__all__ = ["Support", "support", "matrix", "markdown", "KINDS"]

#: The kinds of element type, and the type each is probed with.
KINDS = {"pred": PRED, "int": S32, "float": F32, "complex": C64}

#: Opcodes that only tests define (tests/conftest.py): not in the matrix.
_TEST_ONLY_PREFIX = "xlac-test-"


@dataclass(frozen=True)
class Support:
    """How far one opcode goes through the compiler."""

    op: OpDef
    builders: tuple          # names of the xlac.ops functions that build it
    shape: bool              # a shape inference rule
    evaluator: bool          # an evaluator rule
    codegen: str | None      # "elemental", "kernel", "expanded", "plumbing", "elemental+expanded", "padded", or None
    kinds: tuple | None      # elementwise: element kinds both shape inference and codegen take
    not_yet: tuple = ()      # elementwise: kinds shape inference accepts, codegen does not yet
    dynamic: bool = False    # takes operands with dynamic dimensions (xlac/hlo/dynamic.py)

    @property
    def compiles(self) -> bool:
        return self.codegen is not None


def _accepted_kinds(op: OpDef) -> set:
    """The element kinds the shape rule of elementwise ``op`` accepts (probed with scalars)."""
    out = set()
    for kind, pt in KINDS.items():
        scalar = Shape(pt, ())
        operands, attrs = [scalar] * (op.arity or 1), {}
        if op.name == "compare":
            attrs = {"direction": "LT"}
        elif op.name == "select":
            operands = [Shape(PRED, ()), scalar, scalar]
        elif op.name == "reduce-precision":
            attrs = {"exponent_bits": 5, "mantissa_bits": 10}
        try:
            shape_inference.infer_shape(op.name, operands, attrs, shape=scalar)
            out.add(kind)
        except (ShapeError, UnsupportedError, ValueError, TypeError):
            pass
    return out


def support(op: OpDef) -> Support:
    name = op.name
    if name in REPLACED_OPCODES:
        codegen = "padded"
    else:
        codegen = codegen_rule(name)
        if is_expanded(name):
            # Expanded; or, when it also has code of its own, expanded in some forms only
            # (bitcast-convert between types of different widths).
            codegen = "expanded" if codegen is None else f"{codegen}+expanded"
    kinds, not_yet = None, ()
    if op.is_elementwise and name not in ("convert", "bitcast-convert", "stochastic-convert"):
        emitted, accepted = element_kinds(name), _accepted_kinds(op)
        kinds = tuple(k for k in KINDS if k in accepted and k in emitted)
        not_yet = tuple(k for k in KINDS if k in accepted and k not in emitted)
    return Support(op, tuple(ops.BUILDERS.get(name, ())), shape_inference.has_rule(name),
                   name in evaluator.supported_opcodes(), codegen, kinds, not_yet,
                   name in dynamic.supported_opcodes())


def matrix() -> list[Support]:
    """Every defined opcode's support, by category then name."""
    order = {c: k for k, c in enumerate(CATEGORIES)}
    defs = [op for op in OPCODES.values() if not op.name.startswith(_TEST_ONLY_PREFIX)]
    return [support(op) for op in sorted(defs, key=lambda o: (order.get(o.category, 99), o.name))]


_CODEGEN_WORDS = {"elemental": "yes (elemental)", "kernel": "yes (kernel)",
                  "expanded": "yes (expanded)", "plumbing": "yes (no code)",
                  "view": "yes (a view of the operand's buffer; elemental in a fusion)",
                  "elemental+expanded": "yes (elemental; expanded in some forms)",
                  "kernel+expanded": "yes (kernel; expanded in some forms)",
                  "padded": "yes (dynamic-padder)", None: "no"}


def markdown() -> str:
    """docs/ops.md."""
    rows = matrix()
    done = sum(s.compiles for s in rows)
    lines = [
        "# Supported operations",
        "",
        "Generated by `python -m xlac.support > docs/ops.md` from the op definitions",
        "(`xlac/hlo/opcodes.py`) and each stage's own table; `tests/test_support.py` checks",
        "that this file is current.",
        "",
        f"{done} of {len(rows)} HLO opcodes compile.  Every opcode listed parses and prints",
        "(HLO text); an op a stage does not handle is refused there with",
        '"not supported yet: <op>", never computed wrongly.',
        "",
        "- **builder**: the `xlac.ops` functions that build it;",
        "- **shape**: shape inference (errors name the op, the shapes and the rule);",
        "- **evaluator**: the numpy reference `xlac.evaluate`;",
        "- **compiled**: `xlac.jit` and `xlac.compile_aot`: elemental (a generator fused",
        "  into loops), kernel (kernels of its own, tried in order, the elemental loop",
        "  when they decline; `xlac dump` says which ran and why), expanded (rewritten",
        "  into other ops by `op-expander`; \"in some forms\": only those, e.g.",
        "  `bitcast-convert` between types of different widths), no code (buffer plumbing),",
        "  a view (no code: its operand's buffer read with its own shape),",
        "  dynamic-padder (replaced by the pass that pads dynamic dimensions);",
        "- **dynamic**: takes operands with dynamic dimensions (`f32[<=10]`) in every stage",
        "  (`xlac/hlo/dynamic.py`; reductions and dots combine only the valid elements);",
        "  the others refuse them by name;",
        "- **element types**: for elementwise ops, the kinds the shape rule accepts and",
        "  the code generator emits (int: every signed and unsigned width; float: f16,",
        "  bf16, f32, f64), and after \"not yet:\" the kinds the shape rule accepts that",
        "  the code generator refuses by name; other ops take any element type their",
        "  shape rule accepts.",
        "",
        "| op | category | spec section | builder | shape | evaluator | compiled | dynamic | element types |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in rows:
        builders = ", ".join(f"`{b}`" for b in s.builders) or "-"
        kinds = ", ".join(s.kinds) if s.kinds is not None else ("any" if s.compiles else "")
        if s.not_yet:
            kinds += ("; " if kinds else "") + "not yet: " + ", ".join(s.not_yet)
        lines.append(f"| `{s.op.name}` | {s.op.category} | {s.op.spec or '-'} | {builders} | "
                     f"{'yes' if s.shape else 'no'} | {'yes' if s.evaluator else 'no'} | "
                     f"{_CODEGEN_WORDS[s.codegen]} | {'yes' if s.dynamic else 'no'} | {kinds} |")
    lines += ["", "## StableHLO import", "",
              "`xlac.parse_stablehlo` (and `xlac.jit`, `xlac run`, `xlac compile` given StableHLO text)",
              "imports these MLIR ops into the HLO opcodes above (`xlac/hlo/stablehlo/`,",
              "[docs/stablehlo.md](stablehlo.md)); any other op is refused with",
              '"not supported yet: <op>" and its place in the text.', ""]
    by_dialect: dict = {}
    for name in imported_ops():
        dialect, _, op = name.rpartition(".")
        by_dialect.setdefault(dialect or "(func, unprefixed)", []).append(f"`{op}`")
    for dialect, names in by_dialect.items():
        lines.append(f"- **{dialect}**: {', '.join(names)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - the generator's command line
    sys.stdout.write(markdown())
