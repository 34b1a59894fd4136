"""Writes ``tests/stablehlo_corpus/chlo/``: the StableHLO text jax emits for
programs that leave ``chlo`` ops in it, with inputs covering the special
values (0, -0, negative, large, tiny, NaN, +-inf, near poles) and jax's CPU
outputs, in the corpus format (``NAME.mlir``, ``NAME.npz``,
``NAME.expected.npz``, ``manifest.json``).  ``tests/test_corpus.py`` runs
every case from its StableHLO text (there is no HLO beside it: the point is
xlac's own expansion of the ``chlo`` ops).

Each case names the ``chlo`` ops its text must contain; a case whose text
lacks one (jax lowered it differently) is an error, so the set stays one of
programs that really exercise the ``chlo`` import.  Run it where jax is
installed (jax 0.10.2 wrote the committed files)::

    /tmp/jaxenv/bin/python tests/stablehlo_corpus/chlo/generate.py

As for ``tests/jax_cases``, XLA runs with ``--xla_allow_excess_precision=false``
so bf16/f16 results are rounded where the program says.
"""
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_allow_excess_precision=false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as sp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

OUT = Path(__file__).resolve().parent
bf, hf = jnp.bfloat16, jnp.float16
inf, nan = np.inf, np.nan

#: (rtol, atol) of floating outputs, by dtype (``tests/jax_cases``'s).
TOLERANCE = {"float64": (1e-9, 1e-12), "float32": (1e-4, 1e-5), "complex64": (1e-4, 1e-5),
             "complex128": (1e-9, 1e-12), "bfloat16": (8e-3, 1e-3), "float16": (8e-3, 1e-3)}

#: Special values every real input starts with.
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.5, 1e-30, -1e-30, 1e-6, 30.0, -30.0, 88.0, -88.0,
           100.0, 1e10, -1e10, 3e38, -3e38, inf, -inf, nan]


def real(dtype, extra=(), n=24, scale=3.0, seed=0):
    """Special values, ``extra`` and ``n`` random ones of ``dtype``."""
    rng = np.random.default_rng(seed)
    values = np.array(SPECIAL + list(extra), np.float64)
    values = np.concatenate([values, rng.standard_normal(n) * scale])
    with np.errstate(over="ignore"):
        return np.asarray(jnp.asarray(values.astype(np.float64)).astype(dtype)) if dtype in (bf, hf) \
            else values.astype(dtype)


def complex_(dtype, seed=1):
    """A grid of complex values: the real and imaginary parts from the special
    values (finite ones and the infinities) and random ones."""
    parts = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 1e-20, 1e20, 3e38, inf, -inf, nan], np.float64)
    rng = np.random.default_rng(seed)
    re_, im_ = np.meshgrid(np.concatenate([parts, rng.standard_normal(4) * 2]),
                           np.concatenate([parts, rng.standard_normal(4) * 2]))
    z = np.empty(re_.size, dtype)           # set the parts: 1j * inf would make the real part NaN
    z.real, z.imag = re_.ravel(), im_.ravel()
    return z


def unit(dtype, seed=2):
    """Values in [-1, 1], the end points and beyond, for inverse functions."""
    return real(dtype, extra=[0.9999, -0.9999, 0.999999, 1.0000001, 1.5, -1.5], scale=0.5, seed=seed)


def cases_32() -> dict:
    """{name: (function, inputs, chlo ops the text must contain)} with 32-bit types."""
    f32 = np.float32
    x = real(f32)
    pos = real(f32, extra=[1e-3, 1e-8, 3.5, 7.0, 20.0, 1e3])
    poles = real(f32, extra=[-1.0, -2.0, -3.0, -10.0, -0.999, -1.0001, -1e5 - 0.5, -1e7, 1e6, 1e15])
    zeta_x = np.array([1.0, 1.0001, 1.5, 2.0, 2.0, 3.0, 4.0, 6.5, 10.0, 50.0, 0.5, -1.0, 2.0, 3.0, 2.0, 4.0, nan,
                       inf, 2.0, 3.5], f32)
    zeta_q = np.array([1.0, 1.0, 2.0, 1.0, 0.5, 3.7, -2.0, 10.0, 1e-3, 2.0, 1.0, 1.0, -1.5, -2.0, 0.0, -3.0, 1.0,
                       2.0, nan, 1e20], f32)
    poly_n = np.array([0, 1, 2, 3, 4, 1, 2, 0, 1, 3, 5, 2, 1, 0, 1, 2, 1, 1], np.int32)
    poly_x = np.array([0.5, 0.5, 1.5, 2.5, 10.0, -0.5, -1.5, -2.0, 0.0, 1e-3, 3.0, 100.0, inf, nan, -1.0, 7.25,
                       1e-20, 1e6], f32)
    c = complex_(np.complex64)
    u = unit(f32)
    ints = np.array([0, 1, -1, 7, -7, 65535, 65536, 2**31 - 1, -2**31, 123456789, -987654321, 46341], np.int32)
    uints = np.array([0, 1, 2**32 - 1, 2**31, 65536, 123456789, 3000000000, 4294967295, 7, 99999, 2**16 + 1, 5],
                     np.uint32)
    top = np.array([[3, 1, nan, 2, -inf, 2, 0.0, -0.0, inf, 5],
                    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
                    [-1, -2, -3, -4, -5, nan, nan, -6, -7, -8]], f32)
    lower = (np.tril(np.random.default_rng(3).standard_normal((4, 4)) + 1j *
                     np.random.default_rng(4).standard_normal((4, 4))) + 3 * np.eye(4)).astype(np.complex64)
    rhs = (np.random.default_rng(5).standard_normal((4, 3)) + 1j).astype(np.complex64)
    return {
        "erfc_f32": (sp.erfc, [real(f32, extra=[0.999, 1.001, 1.999, 2.001, 7.99, 8.01, 9.0, 10.0, 26.0, -26.0])],
                     ["erfc"]),
        "erfc_bf16_f16": (lambda x: (sp.erfc(x.astype(bf)), sp.erfc(x.astype(hf))), [x], ["erfc"]),
        "erf_f32": (sp.erf, [real(f32, extra=[3.9, 4.1, -4.1])], ["erf"]),
        "erf_inv_f32": (sp.erfinv, [u], ["erf_inv"]),
        "erf_inv_bf16_f16": (lambda x: (sp.erfinv(x.astype(bf)), sp.erfinv(x.astype(hf))), [u], ["erf_inv"]),
        "lgamma_f32": (sp.gammaln, [poles], ["lgamma"]),
        "lgamma_bf16_f16": (lambda x: (lax.lgamma(x.astype(bf)), lax.lgamma(x.astype(hf))), [poles], ["lgamma"]),
        "digamma_f32": (sp.digamma, [poles], ["digamma"]),
        "digamma_bf16_f16": (lambda x: (lax.digamma(x.astype(bf)), lax.digamma(x.astype(hf))), [poles],
                             ["digamma"]),
        "polygamma_f32": (sp.polygamma, [poly_n, poly_x], ["polygamma"]),
        "polygamma_bcast": (lambda x: (sp.polygamma(1, x), sp.polygamma(3, x)), [pos], ["polygamma"]),
        "zeta_f32": (sp.zeta, [zeta_x, zeta_q], ["zeta"]),
        "zeta_bcast": (lambda q: (sp.zeta(2.0, q), sp.zeta(4.5, q)), [pos], ["zeta"]),
        "bessel_i1e_f32": (sp.i1e, [real(f32, extra=[7.9, 8.0, 8.1, -8.1, 700.0])], ["bessel_i1e"]),
        "bessel_i1_f32": (sp.i1, [real(f32, extra=[7.9, 8.1, 80.0, -80.0])], ["bessel_i1e"]),
        "bessel_i1e_bf16_f16": (lambda x: (sp.i1e(x.astype(bf)), sp.i1e(x.astype(hf))), [x], ["bessel_i1e"]),
        "next_after_f32": (jnp.nextafter, [x, real(f32, seed=7)[::-1].copy()], ["next_after"]),
        "next_after_zero_inf": (jnp.nextafter,
                                [np.array([0.0, -0.0, 0.0, -0.0, 1.0, inf, -inf, 3e38, 1e-45, -1e-45, nan, 1.0], f32),
                                 np.array([1.0, 1.0, -0.0, 0.0, inf, 0.0, 0.0, inf, 0.0, 0.0, 1.0, nan], f32)],
                                ["next_after"]),
        "next_after_bf16_f16": (lambda a, b: (jnp.nextafter(a.astype(bf), b.astype(bf)),
                                              jnp.nextafter(a.astype(hf), b.astype(hf))),
                                [x, real(f32, seed=8)], ["next_after"]),
        "square_f32_c64": (lambda x, z: (jnp.square(x), jnp.square(z)), [x, c], ["square"]),
        "sinh_cosh_f32": (lambda x: (jnp.sinh(x), jnp.cosh(x)),
                          [real(f32, extra=[89.0, -89.0, 89.5, 0.999, 1.001, 1e-4])], ["sinh", "cosh"]),
        "sinh_cosh_bf16_f16": (lambda x: (jnp.sinh(x.astype(bf)), jnp.cosh(x.astype(bf)),
                                          jnp.sinh(x.astype(hf)), jnp.cosh(x.astype(hf))), [x], ["sinh", "cosh"]),
        "sinh_cosh_c64": (lambda z: (jnp.sinh(z), jnp.cosh(z)), [c], ["sinh", "cosh"]),
        "asin_acos_atan_f32": (lambda x: (jnp.arcsin(x), jnp.arccos(x), jnp.arctan(x)), [u],
                               ["asin", "acos", "atan"]),
        "asinh_acosh_atanh_f32": (lambda x: (jnp.arcsinh(x), jnp.arccosh(x), jnp.arctanh(x)),
                                  [real(f32, extra=[0.9999, -0.9999, 1.0001, 1e19, 2e19, 1.8e38])],
                                  ["asinh", "acosh", "atanh"]),
        "inverse_trig_bf16_f16": (lambda x: tuple(f(x.astype(t)) for t in (bf, hf) for f in (
            jnp.arcsin, jnp.arccos, jnp.arctan, jnp.arcsinh, jnp.arccosh, jnp.arctanh)), [u],
            ["asin", "acos", "atan", "asinh", "acosh", "atanh"]),
        "asin_acos_c64": (lambda z: (jnp.arcsin(z), jnp.arccos(z)), [c], ["asin", "acos"]),
        "asinh_acosh_c64": (lambda z: (jnp.arcsinh(z), jnp.arccosh(z)), [c], ["asinh", "acosh"]),
        "atan_atanh_c64": (lambda z: (jnp.arctan(z), jnp.arctanh(z)), [c], ["atan", "atanh"]),
        "top_k_f32": (lambda x: lax.top_k(x, 4), [top], ["top_k"]),
        "top_k_int_bf16": (lambda a, x: (lax.top_k(a, 3), lax.top_k(x.astype(bf), 2)),
                           [np.array([[5, -1, 7, 7, 0, -9], [1, 2, 3, 4, 5, 6]], np.int32), top], ["top_k"]),
        "mulhi_s32_u32": (lambda a, b, p, q: (lax.mulhi(a, b), lax.mulhi(p, q)),
                          [ints, ints[::-1].copy(), uints, uints[::-1].copy()], ["mulhi"]),
        "conj_triangular_solve": (lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True,
                                                                           conjugate_a=True),
                                  [lower, rhs], ["conj"]),
        "log_ndtr_ndtri": (lambda x, p: (sp.log_ndtr(x), sp.ndtri(p)),
                           [real(f32, extra=[-5.0, -20.0, 5.0, 8.0, -40.0]),
                            np.array([0.0, 1e-30, 1e-7, 0.01, 0.3, 0.5, 0.7, 0.999, 1.0, -0.5, 2.0, nan], f32)],
                           ["erf", "erfc"]),
        "gammainc_betainc": (lambda a, x: (sp.gammainc(a, x), sp.gammaincc(a, x), sp.betainc(a, a + 1.0, x / 8)),
                             [np.array([0.5, 1.0, 2.0, 3.5, 10.0, 0.1, 5.0, 1.0], f32),
                              np.array([0.3, 1.0, 5.0, 2.0, 8.0, 0.01, 4.0, 0.0], f32)], ["lgamma"]),
        "random_gamma": (lambda k: jax.random.gamma(jax.random.wrap_key_data(k), jnp.array([0.5, 1.0, 3.0, 20.0])),
                         [np.asarray(jax.random.key_data(jax.random.key(7)))], ["erf_inv"]),
    }


def cases_64() -> dict:
    """The same families in f64/c128/s64/u64 (``jax_enable_x64``)."""
    f64 = np.float64
    x = real(f64)
    poles = real(f64, extra=[-1.0, -2.0, -0.999, -1.0001, 1e6])
    c = complex_(np.complex128)
    return {
        "erf_erfc_f64": (lambda x: (sp.erf(x), sp.erfc(x)),
                         [real(f64, extra=[0.999, 1.001, 7.99, 8.01, 26.0, -26.0, 27.3, 30.0])], ["erf", "erfc"]),
        "erf_inv_f64": (sp.erfinv, [unit(f64)], ["erf_inv"]),
        "lgamma_digamma_f64": (lambda x: (sp.gammaln(x), sp.digamma(x)), [poles], ["lgamma", "digamma"]),
        "polygamma_zeta_f64": (lambda n, x: (sp.polygamma(n, x), sp.zeta(x + 2.0, x * x + 0.25)),
                               [np.array([0, 1, 2, 3, 1, 2, 0, 4, 1, 1, 2, 3], np.int64),
                                np.array([0.5, 1.5, 2.5, 10.0, -0.5, -1.5, -2.0, 1e-3, 100.0, inf, 3.0, 0.25], f64)],
                               ["polygamma", "zeta"]),
        "bessel_i1e_f64": (lambda x: (sp.i1e(x), sp.i1(x)), [real(f64, extra=[7.9, 8.1, 80.0, 700.0])],
                           ["bessel_i1e"]),
        "next_after_f64": (jnp.nextafter, [x, real(f64, seed=9)], ["next_after"]),
        "sinh_cosh_f64_c128": (lambda x, z: (jnp.sinh(x), jnp.cosh(x), jnp.sinh(z), jnp.cosh(z)),
                               [real(f64, extra=[710.0, -710.0, 709.0]), c], ["sinh", "cosh"]),
        "inverse_trig_f64": (lambda x: (jnp.arcsin(x), jnp.arccos(x), jnp.arctan(x), jnp.arcsinh(x),
                                        jnp.arccosh(x + 2), jnp.arctanh(x)), [unit(f64)],
                             ["asin", "acos", "atan", "asinh", "acosh", "atanh"]),
        "inverse_trig_c128": (lambda z: (jnp.arcsin(z), jnp.arccos(z), jnp.arctan(z), jnp.arcsinh(z),
                                         jnp.arccosh(z), jnp.arctanh(z), jnp.square(z)), [c],
                              ["asin", "acos", "atan", "asinh", "acosh", "atanh", "square"]),
        "mulhi_s64_u64": (lambda a, b, p, q: (lax.mulhi(a, b), lax.mulhi(p, q)),
                          [np.array([0, 1, -1, 2**62, -2**63, 2**63 - 1, 123456789012345, -98765432109876], np.int64),
                           np.array([5, -1, -1, 4, -2**63, 2**63 - 1, -55555555555, 1234567], np.int64),
                           np.array([0, 1, 2**64 - 1, 2**63, 2**32, 2**64 - 1, 12345678901234567, 3], np.uint64),
                           np.array([9, 2**64 - 1, 2**64 - 1, 2, 2**32, 2, 98765432109, 2**63], np.uint64)],
                          ["mulhi"]),
        "top_k_f64": (lambda x: lax.top_k(x, 3), [real(f64)[None, :].repeat(2, 0)], ["top_k"]),
    }


def chlo_ops(text: str) -> list:
    """The ``chlo`` op names a text uses, sorted."""
    return sorted(set(re.findall(r"\bchlo\.([a-z_0-9]+)", text)))


def write_case(name: str, fn, args, wanted: list, x64: bool) -> dict:
    jf = jax.jit(fn, keep_unused=True)
    text = jf.lower(*args).as_text()
    used = chlo_ops(text)
    missing = sorted(set(wanted) - set(used))
    if missing:
        raise AssertionError(f"{name}: jax {jax.__version__} left no chlo.{', chlo.'.join(missing)} in the text")
    outs = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(jf(*args))]
    ins = [np.asarray(a) for a in args]
    (OUT / f"{name}.mlir").write_text(text, encoding="utf-8")
    np.savez(OUT / f"{name}.npz", *ins)
    np.savez(OUT / f"{name}.expected.npz", *outs)
    outputs = []
    for k, o in enumerate(outs):
        rtol, atol = TOLERANCE.get(str(o.dtype), (0.0, 0.0))
        outputs.append({"name": f"arr_{k}", "dtype": str(o.dtype), "shape": list(o.shape),
                        "rtol": rtol, "atol": atol})
    return {"name": name, "opcodes": [f"chlo.{op}" for op in used], "x64": x64,
            "equal_nan": bool(any(str(o.dtype) in TOLERANCE and np.isnan(o.astype(np.complex128)).any()
                                  for o in outs)),
            "inputs": [{"name": f"arr_{k}", "dtype": str(a.dtype), "shape": list(a.shape)}
                       for k, a in enumerate(ins)],
            "outputs": outputs}


def main() -> None:
    manifest = []
    for x64, make in ((False, cases_32), (True, cases_64)):
        jax.config.update("jax_enable_x64", x64)
        for name, (fn, args, wanted) in make().items():
            manifest.append(write_case(name, fn, args, wanted, x64))
    jax.config.update("jax_enable_x64", False)
    (OUT / "manifest.json").write_text(json.dumps(
        {"format": "xlac-hlo-corpus/1", "set": "chlo ops in jax's StableHLO",
         "generator": f"jax {jax.__version__}, XLA:CPU, XLA_FLAGS={os.environ['XLA_FLAGS']}",
         "num_cases": len(manifest), "cases": manifest}, indent=1), encoding="utf-8")
    print(f"{len(manifest)} cases written to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
