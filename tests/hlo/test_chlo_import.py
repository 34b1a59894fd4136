"""The ``chlo`` dialect in StableHLO text: every op of ``ChloOps.td`` imports
(``xlac/hlo/stablehlo/chlo.py``), in the forms jaxlib prints.  The numerics
against jax's CPU results are ``tests/stablehlo_corpus/chlo`` (run by
``tests/test_corpus.py``)."""
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.hlo.stablehlo import imported_ops

HERE = Path(__file__).resolve().parent
FORMS = HERE / "chlo_forms"

#: The ops of openxla/stablehlo's ``stablehlo/dialect/ChloOps.td`` (at 3c9301c, 2026;
#: jaxlib 0.10.2's ``_chlo_ops_gen.py`` has the same list).
CHLO_OPS = """_asin_acos_kernel acos acosh asin asinh atan atanh bessel_i1e broadcast_add broadcast_and
broadcast_atan2 broadcast_compare broadcast_complex broadcast_divide broadcast_maximum broadcast_minimum
broadcast_multiply broadcast_next_after broadcast_or broadcast_polygamma broadcast_power broadcast_remainder
broadcast_select broadcast_shift_left broadcast_shift_right_arithmetic broadcast_shift_right_logical
broadcast_subtract broadcast_xor broadcast_zeta conj constant constant_like cosh digamma erf erf_inv erfc
is_inf is_neg_inf is_pos_inf lgamma mulhi next_after polygamma ragged_dot scan sinh square tan top_k
zeta""".split()


def test_every_chlo_op_has_an_import_rule():
    missing = sorted(set(f"chlo.{op}" for op in CHLO_OPS) - set(imported_ops()))
    assert not missing


def _inputs():
    rng = np.random.default_rng(0)
    a = np.array([[1.5, -np.inf, 0.25], [np.inf, -2.0, 3.0]], np.float32)
    b = np.array([0.5, 1.0, 4.0], np.float32)
    p = np.array([[True, False, True], [False, True, False]])
    i = np.array([7, -2**31, 2**31 - 1], np.int32)
    g = np.array([2, 4], np.int64)
    lhs = rng.standard_normal((6, 4)).astype(np.float32)
    rhs = rng.standard_normal((2, 4, 5)).astype(np.float32)
    c = np.array([10.0, 20.0], np.float32)
    return [a, b, p, i, g, lhs, rhs, c]


def _kernel(z):
    """asin_acos_kernel's definition: sqrt(a^2 - x^2) + i log(a + sqrt(a^2 - 1)) on |x|, |y|."""
    x, y = np.abs(z.real).astype(np.float64), np.abs(z.imag).astype(np.float64)
    a = (np.hypot(x + 1, y) + np.hypot(x - 1, y)) / 2
    return np.sqrt(a * a - x * x) + 1j * np.log(a + np.sqrt(a * a - 1))


@pytest.mark.parametrize("form", ["pretty", "generic"])
def test_chlo_forms_as_jaxlib_prints_them(form):
    special = pytest.importorskip("scipy.special")
    a, b, p, i, g, lhs, rhs, c = args = _inputs()
    got = xlac.jit(xlac.parse_stablehlo((FORMS / f"{form}.mlir").read_text(encoding="utf-8"), f"{form}.mlir"))(*args)
    (add, gt, sel, like, const, isinf, ispos, isneg, top_v, top_i, mulhi, ragged, scan_out, scan_carry, sub,
     conj, like_c, kernel, zeta, erfc) = got
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(add, a + b)
        np.testing.assert_array_equal(gt, a > b)
        np.testing.assert_array_equal(sel, np.where(p, a, b))
        np.testing.assert_array_equal(like, np.full((2, 3), 1.5, np.float32))
        np.testing.assert_array_equal(const, np.arange(1, 7, dtype=np.float32).reshape(2, 3))
        np.testing.assert_array_equal(isinf, np.isinf(a))
        np.testing.assert_array_equal(ispos, np.isposinf(a))
        np.testing.assert_array_equal(isneg, np.isneginf(a))
        order = np.argsort(-a, axis=1, kind="stable")[:, :2]
        np.testing.assert_array_equal(top_i, order)
        np.testing.assert_array_equal(top_v, np.take_along_axis(a, order, 1))
        np.testing.assert_array_equal(mulhi, ((i.astype(np.int64) * i) >> 32).astype(np.int32))
        groups = np.repeat([0, 1], g)                       # rows 0-1 use rhs[0], rows 2-5 rhs[1]
        np.testing.assert_allclose(ragged, np.einsum("mk,mkn->mn", lhs, rhs[groups]), rtol=1e-5, atol=1e-6)
        # a reverse scan: outputs[k] = a[k] + ... + a[1] + b, the carry the last sum
        np.testing.assert_array_equal(scan_out, np.cumsum(a[::-1], axis=0)[::-1] + b)
        np.testing.assert_array_equal(scan_carry, a.sum(axis=0) + b)
        np.testing.assert_array_equal(sub, a - c[:, None])          # broadcast_dimensions = [0]
        z = a + 1j * b
        np.testing.assert_array_equal(conj, np.conj(z))
        np.testing.assert_array_equal(like_c, np.full((2, 3), 1 + 2j, np.complex64))
        finite = np.isfinite(z)
        np.testing.assert_allclose(kernel[finite], _kernel(z)[finite], rtol=1e-5)
        np.testing.assert_allclose(zeta, special.zeta(1.5, np.broadcast_to(b, (2, 3))), rtol=1e-5)
        np.testing.assert_allclose(erfc, special.erfc(a), rtol=1e-5, atol=1e-7)


def _module(body: str, args: str, results: str) -> str:
    return f"func.func @main({args}) -> ({results}) {{\n{body}\n}}"


def test_integer_and_narrow_types():
    """square and conj take integers (conj is the identity on real numbers);
    f16/bf16 special functions are computed in f32 and rounded once."""
    text = _module("""
    %0 = chlo.square %arg0 : tensor<4xi32> -> tensor<4xi32>
    %1 = chlo.conj %arg0 : tensor<4xi32> -> tensor<4xi32>
    %2 = chlo.lgamma %arg1 : tensor<4xf16> -> tensor<4xf16>
    return %0, %1, %2 : tensor<4xi32>, tensor<4xi32>, tensor<4xf16>""",
                   "%arg0: tensor<4xi32>, %arg1: tensor<4xf16>", "tensor<4xi32>, tensor<4xi32>, tensor<4xf16>")
    module = xlac.parse_stablehlo(text)
    assert [i.opcode for i in module.entry.instructions].count("convert") == 2
    x = np.array([3, -4, 46341, 0], np.int32)
    h = np.array([0.5, 3.0, 10.0, -0.5], np.float16)
    square, same, lg = xlac.jit(module)(x, h)
    np.testing.assert_array_equal(square, x * x)
    np.testing.assert_array_equal(same, x)
    np.testing.assert_allclose(lg.astype(np.float32), [0.5723649, 0.6931472, 12.801827, 1.2655121], rtol=1e-3)


@pytest.mark.parametrize("body,args,results,match", [
    ("%0 = chlo.erfc %arg0 : tensor<4xi32> -> tensor<4xi32>", "%arg0: tensor<4xi32>", "tensor<4xi32>",
     r"chlo\.erfc: operand types s32\[4\].*: the op takes floating-point operands"),
    ("%0 = chlo.mulhi %arg0, %arg0 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>", "%arg0: tensor<4xf32>",
     "tensor<4xf32>", r"chlo\.mulhi: operand types f32\[4\].*the op takes integer operands"),
    ("%0 = chlo.broadcast_add %arg0, %arg1 : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>",
     "%arg0: tensor<2x3xf32>, %arg1: tensor<2xf32>", "tensor<2x3xf32>",
     r"chlo\.broadcast_add: operand shapes f32\[2,3\].*, f32\[2\].* do not broadcast to f32\[2,3\]"),
])
def test_ill_typed_chlo_ops_are_shape_errors(body, args, results, match):
    text = _module(f"    {body}\n    return %0 : {results}", args, results)
    with pytest.raises(xlac.ShapeError, match=match):
        xlac.parse_stablehlo(text, "bad.mlir")


def test_unknown_chlo_op_is_refused_by_name():
    text = _module("    %0 = chlo.frobnicate %arg0 : tensor<4xf32> -> tensor<4xf32>\n    return %0 : tensor<4xf32>",
                   "%arg0: tensor<4xf32>", "tensor<4xf32>")
    with pytest.raises(xlac.UnsupportedError, match=r"not supported yet: chlo\.frobnicate \(no StableHLO import rule"):
        xlac.parse_stablehlo(text)


def test_an_mhlo_op_serialised_as_a_custom_call_is_the_op():
    """A portable artifact holds MHLO ops StableHLO lacks as custom calls to their names
    with their attributes in ``mhlo.attributes`` (jax's serialisation of a program read
    from HLO: ``topk``); XLA reads them back as the ops, and so does xlac."""
    text = """module @m {
  func.func public @main(%arg0: tensor<4x10xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
    %0:2 = stablehlo.custom_call @mhlo.topk(%arg0) {mhlo.attributes = {k = 3 : i64, largest = true}, mhlo.version = 1 : i64} : (tensor<4x10xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
    return %0#0, %0#1 : tensor<4x3xf32>, tensor<4x3xi32>
  }
}"""
    module = xlac.parse_stablehlo(text)
    assert [i.opcode for i in module.instructions() if i.opcode in ("topk", "custom-call")] == ["topk"]
    x = np.random.default_rng(0).standard_normal((4, 10)).astype(np.float32)
    values, indices = xlac.jit(module)(x)
    np.testing.assert_array_equal(values, -np.sort(-x, axis=1)[:, :3])
    np.testing.assert_array_equal(indices, np.argsort(-x, axis=1, kind="stable")[:, :3])
