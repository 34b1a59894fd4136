"""Dots and convolutions of complex operands as four real ones (``expanders.complex_products``):
the real products run on the packed GEMM / implicit-GEMM convolution; results match the
evaluator's complex arithmetic."""
import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import lower

TYPES = {"c64": (np.complex64, 1e-5), "c128": (np.complex128, 1e-12)}


def _complex(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _kernels(text: str) -> list:
    return [str(d) for d in lower(xlac.parse_hlo(text)).hlo.diagnostics if d.source == "kernel-choice"]


@pytest.mark.parametrize("t", TYPES)
def test_batched_dot_with_a_transposed_operand(t):
    dtype, tol = TYPES[t]
    text = f"""HloModule m
ENTRY e {{
  a = {t}[3,40,24]{{1,2,0}} parameter(0)
  b = {t}[3,24,36] parameter(1)
  ROOT d = {t}[3,40,36] dot(a, b), lhs_batch_dims={{0}}, rhs_batch_dims={{0}}, lhs_contracting_dims={{2}}, rhs_contracting_dims={{1}}
}}"""
    rng = np.random.default_rng(0)
    a, b = _complex(rng, (3, 40, 24), dtype), _complex(rng, (3, 24, 36), dtype)
    got = xlac.jit(text)(a, b)
    want = np.einsum("bmk,bkn->bmn", a.astype(np.complex128), b.astype(np.complex128))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    assert got.dtype == dtype
    notes = _kernels(text)
    assert notes and all("gemm" in n for n in notes if "dot" in n.split(":")[1]), notes


@pytest.mark.parametrize("t", TYPES)
def test_convolution_matches_the_evaluator(t):
    dtype, tol = TYPES[t]
    text = f"""HloModule m
ENTRY e {{
  x = {t}[2,9,9,4] parameter(0)
  k = {t}[3,3,4,5] parameter(1)
  ROOT c = {t}[2,9,9,5] convolution(x, k), window={{size=3x3 pad=1_1x1_1}}, dim_labels=b01f_01io->b01f
}}"""
    rng = np.random.default_rng(1)
    x, k = _complex(rng, (2, 9, 9, 4), dtype), _complex(rng, (3, 3, 4, 5), dtype)
    got = xlac.jit(text)(x, k)
    want = xlac.evaluate(text, x, k)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def test_special_values_as_the_textbook_product():
    # Infinite and NaN parts: each result part is the sum over k of the parts' real
    # products, (a_re c_re - a_im c_im) and (a_re c_im + a_im c_re), as XLA's complex
    # multiply-add has it (inf * (2+0j) is inf + nan*i; its real part stays inf).
    text = """HloModule m
ENTRY e {
  a = c64[2,2] parameter(0)
  b = c64[2,2] parameter(1)
  ROOT d = c64[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}"""
    a = np.array([[np.inf + 0j, 1 + 1j], [0 + 1j, 2 - 1j]], np.complex64)
    b = np.array([[2 + 0j, 1j], [1 - 1j, np.nan + 0j]], np.complex64)
    with np.errstate(invalid="ignore"):
        re = a.real @ b.real - a.imag @ b.imag
        im = a.real @ b.imag + a.imag @ b.real
    got = xlac.jit(text)(a, b)
    np.testing.assert_array_equal(got.real, re.astype(np.float32))
    np.testing.assert_array_equal(got.imag, im.astype(np.float32))
