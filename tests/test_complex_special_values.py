"""Complex element-wise ops on special values, against XLA:CPU's own results.

``tests/complex_values/xla_cpu.npz`` (made by ``generate.py`` there, with jaxlib's
XLA client compiling the same HLO text) holds XLA:CPU's results for divide, power,
sqrt, log, exponential, abs, sign and tanh on c64 and c128 operands whose parts run
over 0, -0, finite values, +-inf, NaN, huge and tiny values.  The evaluator and the
compiled code must give the same: NaN where XLA has NaN, infinities and zeros of
the same sign, finite values close.

Two things XLA:CPU does that xlac does not, and which the comparison allows:

* it flushes subnormal results to zero, so a subnormal part here counts as a zero of
  either sign (xlac keeps subnormals, docs/numerics.md);
* it fuses a multiply and an add into an FMA (LLVM's contraction), so where a
  product with a tiny or huge part is rounded, the sign of a zero it cancels to can
  differ: for inputs with a tiny or huge part zeros are compared without their sign.  Likewise sin and cos of an argument
  beyond 2**24 (``power`` with huge exponents) are XLA's own approximations there,
  not libm's, so those results are compared by kind only (NaN or not).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import xlac

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DATA = np.load(Path(__file__).parent / "complex_values" / "xla_cpu.npz")
UNARY = {"sqrt": None, "log": None, "exponential": None, "abs": "real", "sign": None, "tanh": None}
BINARY = ("divide", "power")
REAL = {"c64": "f32", "c128": "f64"}
RTOL = {"c64": 2e-5, "c128": 1e-12}


def _module(op: str, dtype: str, n: int, arity: int) -> str:
    result = REAL[dtype] if UNARY.get(op) else dtype
    params = "\n".join(f"  p{i} = {dtype}[{n}] parameter({i})" for i in range(arity))
    args = ", ".join(f"p{i}" for i in range(arity))
    return f"HloModule {op}_{dtype}\n\nENTRY main {{\n{params}\n  ROOT r = {result}[{n}] {op}({args})\n}}\n"


def _case(op: str, dtype: str):
    args = (DATA[f"x_{dtype}"],) if op in UNARY else (DATA[f"bx_{dtype}"], DATA[f"by_{dtype}"])
    return _module(op, dtype, len(args[0]), len(args)), args, DATA[f"{op}_{dtype}"]


def _kind(v: np.ndarray, signed_zero: np.ndarray) -> np.ndarray:
    """NaN 4, +-inf +-3, finite 0, zero (and subnormal) +-1, or 1 where the sign of a
    zero is not compared."""
    tiny = np.finfo(v.dtype).tiny
    zero_sign = np.where(signed_zero & np.signbit(v), -1, 1)
    return np.select([np.isnan(v), np.isinf(v), np.abs(v) < tiny],
                     [4, np.sign(np.nan_to_num(v)) * 3, zero_sign], 0)


def _mismatches(op: str, dtype: str, args, got, want) -> list:
    parts = np.concatenate([np.stack([a.real, a.imag]) for a in args])
    real = want.real.dtype
    huge = (np.abs(parts) > 2.0 ** 24) & np.isfinite(parts)
    tiny_or_huge = (huge | (np.abs(parts) > 0) & (np.abs(parts) < np.finfo(real).eps)).any(axis=0)
    kind_only = (op == "power") & huge[-2:].any(axis=0)
    bad = np.zeros(len(want), bool)
    for part in (np.real, np.imag) if want.dtype.kind == "c" else (np.real,):
        g, w = part(np.asarray(got)).astype(real), part(want)
        kg, kw = _kind(g, ~tiny_or_huge), _kind(w, ~tiny_or_huge)
        finite = (kw == 0) & (kg == 0)
        close = np.abs(g - w) <= RTOL[dtype] * np.abs(w)
        wrong = (kg != kw) | (finite & ~close)
        bad |= np.where(kind_only, np.isnan(g) != np.isnan(w), wrong)
    return [(tuple(a[i] for a in args), want[i], np.asarray(got)[i]) for i in np.nonzero(bad)[0]]


OPS = list(UNARY) + list(BINARY)


@pytest.mark.parametrize("dtype", ["c64", "c128"])
@pytest.mark.parametrize("op", OPS)
def test_evaluator_matches_xla(op, dtype):
    text, args, want = _case(op, dtype)
    got = xlac.evaluate(text, *args)
    assert _mismatches(op, dtype, args, got, want)[:5] == []


@pytest.mark.parametrize("dtype", ["c64", "c128"])
@pytest.mark.parametrize("op", OPS)
def test_compiled_matches_xla(op, dtype):
    text, args, want = _case(op, dtype)
    got = xlac.jit(text)(*args)
    assert _mismatches(op, dtype, args, got, want)[:5] == []


def test_division_c99_cases():
    """The cases C99 Annex G defines, spelled out (XLA's values)."""
    inf, nan = np.inf, np.nan
    x = np.array([1 + 1j, 1 + 1j, complex(inf, 1), complex(inf, inf), 1 + 2j, 0j], np.complex64)
    y = np.array([complex(nan, inf), complex(inf, 1), 1 + 1j, complex(2, 0), 0j, 0j], np.complex64)
    text = _module("divide", "c64", len(x), 2)
    for got in (xlac.evaluate(text, x, y), xlac.jit(text)(x, y)):
        assert got[0] == 0 and np.signbit(got[0].imag) and not np.signbit(got[0].real)   # -0j
        assert got[1] == 0 and not np.signbit(got[1].real)                                # 0j
        assert got[2].real == inf and got[2].imag == -inf                                 # inf - inf j
        assert got[3].real == inf and got[3].imag == inf
        assert got[4].real == inf and got[4].imag == inf                                  # 1+2j / 0
        assert np.isnan(got[5].real) and np.isnan(got[5].imag)                            # 0 / 0


@pytest.mark.parametrize("dtype", ["c64", "c128"])
@pytest.mark.parametrize("op, ref", [("rsqrt", lambda z: 1 / np.sqrt(z)), ("sine", np.sin), ("cosine", np.cos),
                                     ("tan", np.tan), ("exponential-minus-one", np.expm1),
                                     ("log-plus-one", np.log1p)])
def test_more_complex_ops_on_ordinary_values(op, ref, dtype):
    """The complex ops jax's lax tests use beyond the table above, on values where
    numpy's complex functions are accurate: near zero (expm1, log1p must not
    cancel), on both sides of the branch cut and of moderate size."""
    parts = np.array([-3.5, -1.0, -1e-4, 0.0, 1e-6, 0.3, 2.0, 7.5])
    z = (parts[:, None] + 1j * parts[None, :]).ravel()
    z = z[z != 0] if op == "rsqrt" else z
    z = z.astype(np.complex64 if dtype == "c64" else np.complex128)
    want = ref(z.astype(np.complex128))
    text = _module(op, dtype, len(z), 1)
    rtol = 1e-5 if dtype == "c64" else 1e-12
    for got in (xlac.evaluate(text, z), xlac.jit(text)(z)):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-3)
