"""The numpy-style operators and methods of traced values type their results as jax
does, for every pair of xlac's element types and Python scalars, and refuse (TypeError)
what jax refuses.

The expectations, ``jax_dtypes/promotion.json``, are jax's own answers, written by
``jax_dtypes/generate.py`` (run where jax is installed; jax is no test dependency).  An
operation with a 64-bit operand is held to jax with ``jax_enable_x64``, any other to jax
without it, as xlac keeps 64-bit arrays 64-bit but types Python scalars as 32-bit.
"""
import json
import operator
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.shape import PrimitiveType, Shape

from jax_dtypes.generate import SCALARS, UNARY     # the operations jax was asked about

pytestmark = pytest.mark.timeout(600)

TABLE = json.loads((Path(__file__).parent / "jax_dtypes" / "promotion.json").read_text(encoding="utf-8"))
OPERANDS = TABLE["operands"]
BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
          "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
          "<": operator.lt, "==": operator.eq, "@": operator.matmul}


def _arg(label: str, matrix: bool = False):
    """A Python scalar (an argument of the jitted function: weakly typed, bools strong) or
    an array of the element type."""
    if label in SCALARS:
        return SCALARS[label]
    return np.zeros((2, 2) if matrix else (2,), Shape(PrimitiveType.from_name(label), ()).dtype)


def _outcomes(fns: dict, *args) -> dict:
    """name -> ``dtype`` / ``dtype~`` (weakly typed) / ``!TypeError`` of each ``fns[name](*args)``,
    traced in one function."""
    out = {}

    def f(*xs):
        for name, fn in fns.items():
            try:
                r = fn(*xs)
            except TypeError:
                out[name] = "!TypeError"
                continue
            out[name] = r.xla_shape.element_type.value + ("~" if r.weak else "")
        return xs[0]
    xlac.jit(f).lower(*args)
    return out


def _expected(result: str) -> str:
    if result.startswith("!"):             # jax's TypePromotionError is xlac's TypeError
        return "!TypeError"
    return result.replace("pred~", "pred")  # (a weak bool behaves as a bool in jax)


def _differences(got: dict, want: dict, what: str) -> list:
    return [f"{what.format(k)}: xlac {got[k]}, jax {want[k]}" for k in want if want[k] != "-" and got[k] != want[k]]


def _assert_none(bad: list) -> None:
    assert not bad, f"{len(bad)} differ from jax:\n" + "\n".join(bad[:40])


@pytest.mark.parametrize("lhs", OPERANDS)
def test_binary_operators_type_results_as_jax(lhs):
    bad = []
    for rhs in OPERANDS:
        want = {op: _expected(TABLE["binary"][op][lhs].split()[OPERANDS.index(rhs)]) for op in BINARY}
        got = _outcomes({op: BINARY[op] for op in BINARY if op != "@"}, _arg(lhs), _arg(rhs))
        if want["@"] != "-":
            got.update(_outcomes({"@": BINARY["@"]}, _arg(lhs, True), _arg(rhs, True)))
        bad += _differences(got, want, f"{lhs} {{}} {rhs}")
    _assert_none(bad)


def test_unary_operators_and_methods_type_results_as_jax():
    bad = []
    for x in OPERANDS:
        want = {name: _expected(TABLE["unary"][name].split()[OPERANDS.index(x)]) for name in UNARY}
        bad += _differences(_outcomes(UNARY, _arg(x)), want, f"{{}} of {x}")
    _assert_none(bad)


def test_narrow_types_promote_as_jax():
    """s4, u2, f8e4m3fn & co. meet only themselves, bool and Python scalars (and wider
    integers meet the narrow floats through Python floats' place on the lattice)."""
    names = TABLE["narrow_operands"]
    bad = []
    for lhs in names:
        want = dict(zip(names, map(_expected, TABLE["narrow_add"][lhs].split())))
        got = {rhs: _outcomes({"+": operator.add}, _arg(lhs), _arg(rhs))["+"] for rhs in names if want[rhs] != "-"}
        bad += _differences(got, want, f"{lhs} + {{}}")
    _assert_none(bad)
