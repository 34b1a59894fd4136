"""Generates ``tests/jax_linalg/``: jax's linear algebra on the CPU as HLO, with inputs and outputs.

Every program uses one of ``jnp.linalg.cholesky, solve, inv, det, slogdet, qr,
eigh, svd, lstsq, pinv, eig`` or ``jax.scipy.linalg.solve_triangular, lu,
schur, hessenberg`` or ``jax.lax.linalg.tridiagonal``, ``tridiagonal_solve``, in
f32 and f64 and, where jax supports it, c64 and c128, on single and batched
matrices.  jax lowers them to its LAPACK custom calls (``lapack_<p><routine>_ffi``,
typed FFI; ``tridiagonal_solve(..., perturb_singular=True)`` to jaxlib's own
``tridiagonal_solve_perturbed_ffi``); the
script checks that the HLO text and XLA's compiled module both have them and
records the targets in the manifest.

The format is the corpus's (``NAME.hlo``, ``NAME.npz``, ``NAME.expected.npz``,
``manifest.json``, as ``tests/jax_cases``), plus, per output, how to compare
it (``compare``): ``allclose``; ``phase_columns`` / ``phase_rows`` (vectors
that LAPACK may return times a sign or a unit complex number: each column /
row is compared after dividing out the phase of its largest element); or
``abs`` (a matrix unique up to the signs of its rows and columns, such as the
Schur or Hessenberg form).  ``tests/test_jax_linalg.py`` runs them.

jax is not a dependency of xlac: run this in a scratch environment that has it,

    /tmp/benchvenv/bin/python tests/jax_linalg/generate.py

and commit the files it writes.
"""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_allow_excess_precision=false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parent
TYPES = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
#: (rtol, atol) by dtype: decompositions of small well-conditioned matrices.
TOLERANCE = {"float32": (2e-4, 2e-5), "complex64": (2e-4, 2e-5), "float64": (1e-9, 1e-11),
             "complex128": (1e-9, 1e-11)}


def _matrix(rng, shape, t, kind="general"):
    x = rng.standard_normal(shape)
    if t.startswith("c"):
        x = x + 1j * rng.standard_normal(shape)
    n = shape[-1]
    if kind == "spd":
        x = x @ np.swapaxes(x.conj(), -1, -2) + n * np.eye(n)
    elif kind == "hermitian":
        x = (x + np.swapaxes(x.conj(), -1, -2)) / 2
    elif kind == "well":
        x = x + 2 * n ** 0.5 * np.eye(shape[-2], shape[-1])
    return np.asarray(x, TYPES[t])


def cases(rng, t: str) -> dict:
    """{name: (function, inputs, compare per output or None)} for element type ``t``."""
    complex_ = t.startswith("c")

    def m(*shape, kind="general"):
        return _matrix(rng, shape, t, kind)
    out = {
        "cholesky": (jnp.linalg.cholesky, [m(5, 5, kind="spd")], None),
        "cholesky_batched": (jnp.linalg.cholesky, [m(2, 3, 4, 4, kind="spd")], None),
        "cholesky_upper": (lambda a: jsl.cholesky(a, lower=False), [m(4, 4, kind="spd")], None),
        "solve": (jnp.linalg.solve, [m(6, 6, kind="well"), m(6, 3)], None),
        "solve_batched": (jnp.linalg.solve, [m(3, 5, 5, kind="well"), m(3, 5, 2)], None),
        "inv": (jnp.linalg.inv, [m(5, 5, kind="well")], None),
        "det": (jnp.linalg.det, [m(2, 4, 4, kind="well")], None),
        "slogdet": (lambda a: tuple(jnp.linalg.slogdet(a)), [m(3, 5, 5, kind="well")], None),
        "qr": (lambda a: tuple(jnp.linalg.qr(a)), [m(6, 4)], ["phase_columns", "phase_rows"]),
        "qr_complete": (lambda a: tuple(jnp.linalg.qr(a, mode="complete")), [m(5, 3)],
                        ["phase_columns", "phase_rows"]),
        "qr_wide_batched": (lambda a: tuple(jnp.linalg.qr(a)), [m(2, 3, 5)], ["phase_columns", "phase_rows"]),
        "eigh": (lambda a: tuple(jnp.linalg.eigh(a)), [m(6, 6, kind="hermitian")], ["allclose", "phase_columns"]),
        "eigh_batched_upper": (lambda a: tuple(jnp.linalg.eigh(a, UPLO="U")), [m(2, 4, 4, kind="hermitian")],
                               ["allclose", "phase_columns"]),
        "eigvalsh": (jnp.linalg.eigvalsh, [m(5, 5, kind="hermitian")], None),
        "svd": (lambda a: tuple(jnp.linalg.svd(a)), [m(6, 4)], ["phase_columns", "allclose", "phase_rows"]),
        "svd_thin_batched": (lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), [m(2, 3, 5)],
                             ["phase_columns", "allclose", "phase_rows"]),
        "svdvals": (lambda a: jnp.linalg.svd(a, compute_uv=False), [m(5, 7)], None),
        "svd_qr_algorithm": (lambda a: tuple(jax.lax.linalg.svd(a, algorithm=jax.lax.linalg.SvdAlgorithm.QR)),
                             [m(5, 4)], ["phase_columns", "allclose", "phase_rows"]),
        "lstsq": (lambda a, b: tuple(jnp.linalg.lstsq(a, b)), [m(7, 4), m(7, 2)], None),
        "pinv": (jnp.linalg.pinv, [m(5, 3)], None),
        "solve_triangular": (lambda a, b: jsl.solve_triangular(a, b, lower=True),
                             [m(5, 5, kind="well"), m(5, 3)], None),
        "solve_triangular_trans": (lambda a, b: jsl.solve_triangular(a, b, trans="C" if complex_ else "T",
                                                                     unit_diagonal=True),
                                   [m(4, 4, kind="well"), m(4, 2)], None),
        "solve_triangular_batched": (lambda a, b: jsl.solve_triangular(a, b, lower=False),
                                     [m(2, 4, 4, kind="well"), m(2, 4, 3)], None),
        "lu": (lambda a: tuple(jsl.lu(a)), [m(5, 5)], None),
        "lu_wide": (lambda a: tuple(jsl.lu(a)), [m(3, 5)], None),
        "lu_factor": (lambda a: tuple(jsl.lu_factor(a)), [m(4, 4)], None),
        "eig": (lambda a: tuple(jnp.linalg.eig(a)), [m(5, 5)], ["allclose", "phase_columns"]),
        "eigvals": (jnp.linalg.eigvals, [m(4, 4)], None),
        "schur": (lambda a: tuple(jsl.schur(a)), [m(4, 4, kind="hermitian" if not complex_ else "general")],
                  ["abs", "phase_columns"]),
        "hessenberg": (lambda a: tuple(jsl.hessenberg(a, calc_q=True)), [m(5, 5)], ["abs", "phase_columns"]),
        "tridiagonal": (lambda a: tuple(jax.lax.linalg.tridiagonal(a)[1:3]), [m(5, 5, kind="hermitian")],
                        ["allclose", "abs"]),
    }
    return {f"{name}_{t}": case for name, case in out.items()}


def extra_cases(rng, t: str) -> dict:
    """Cases added later (their own random numbers, so the others' stay as they were):
    ``ormqr``/``unmqr``, ``geqp3`` and ``gtsv``."""
    import jax._src.lax.linalg as lax_linalg

    def m(*shape, kind="general"):
        return _matrix(rng, shape, t, kind)
    out = {
        "householder_multiply": (lambda a, c: jax.lax.linalg.ormqr(*lax_linalg.geqrf(a), c, left=True,
                                                                   transpose=True), [m(2, 5, 3), m(2, 5, 4)], None),
        "householder_multiply_right": (lambda a, c: jax.lax.linalg.ormqr(*lax_linalg.geqrf(a), c, left=False),
                                       [m(5, 3), m(2, 5)], None),
        "qr_pivoting": (lambda a: tuple(jsl.qr(a, pivoting=True)), [m(5, 4)],
                        ["phase_columns", "phase_rows", "equal"]),
        "tridiagonal_solve": (jax.lax.linalg.tridiagonal_solve,
                              [m(2, 6), m(2, 6) + 4, m(2, 6), m(2, 6, 3)], None),
    }
    return {f"{name}_{t}": case for name, case in out.items()}


def perturbed_cases(rng, t: str) -> dict:
    """``tridiagonal_solve(..., perturb_singular=True)``: a batch of random systems,
    singular ones (zero pivots, a zero matrix: perturbed pivots) and ``T - lambda I``
    for an eigenvalue ``lambda`` of ``T`` (inverse iteration's system)."""
    dt = TYPES[t]

    def m(*shape):
        return _matrix(rng, shape, t, "general")
    n = 7
    ones = np.r_[0, np.ones(n - 1)].astype(dt)
    shift = np.full(n, -2 * np.cos(np.pi / (n + 1)), dt)
    singular = [m(3, 5), m(3, 5), m(3, 5), m(3, 5, 2)]
    singular[1][0] = 0                                     # a zero diagonal: pivoting on every row
    singular[0][1, 1::2], singular[1][1] = 0, 0            # zero pivots
    singular[0][2], singular[1][2], singular[2][2] = 0, 0, 0   # the zero matrix

    def solve(dl, d, du, b):
        return jax.lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)
    out = {
        "tridiagonal_solve_perturbed": (solve, [m(2, 6), m(2, 6) + 4, m(2, 6), m(2, 6, 3)], None),
        "tridiagonal_solve_perturbed_singular": (solve, singular, None),
        "tridiagonal_solve_perturbed_eigen": (solve, [ones, shift, ones[::-1].copy(), np.ones((n, 1), dt)], None),
    }
    return {f"{name}_{t}": case for name, case in out.items()}


def _targets(text: str) -> list:
    import re
    return sorted(set(re.findall(r'custom_call_target="(lapack_[a-z0-9]+_ffi|tridiagonal_solve_perturbed_ffi)"',
                                 text)))


def write_case(name: str, fn, args, compare, x64: bool) -> dict:
    jf = jax.jit(fn, keep_unused=True)
    lowered = jf.lower(*args)
    text = lowered.as_text(dialect="hlo")
    targets = _targets(text)
    if not targets:
        raise RuntimeError(f"{name}: no LAPACK (or jaxlib) custom call in the HLO")
    compiled = _targets(lowered.compile().as_text())
    if not compiled:
        raise RuntimeError(f"{name}: no LAPACK custom call in XLA's compiled module")
    result = jf(*args)
    leaves = jax.tree_util.tree_leaves(result)
    outs = [np.asarray(leaf) for leaf in leaves]
    ins = [np.asarray(a) for a in args]
    (OUT / f"{name}.hlo").write_text(text, encoding="utf-8")
    np.savez(OUT / f"{name}.npz", *ins)
    np.savez(OUT / f"{name}.expected.npz", *outs)
    compare = compare or ["allclose"] * len(outs)
    outputs = []
    for k, o in enumerate(outs):
        rtol, atol = TOLERANCE.get(str(o.dtype), (0.0, 0.0))
        outputs.append({"name": f"arr_{k}", "dtype": str(o.dtype), "shape": list(o.shape), "rtol": rtol,
                        "atol": atol, "compare": compare[k] if np.issubdtype(o.dtype, np.inexact) else "equal"})
    return {"name": name, "opcodes": ["custom-call"], "x64": x64, "targets": targets, "compiled_targets": compiled,
            "equal_nan": False,
            "inputs": [{"name": f"arr_{k}", "dtype": str(a.dtype), "shape": list(a.shape)} for k, a in enumerate(ins)],
            "outputs": outputs}


def main() -> None:
    manifest = []
    for t in TYPES:
        x64 = t in ("f64", "c128")
        jax.config.update("jax_enable_x64", x64)
        for name, (fn, args, compare) in cases(np.random.default_rng(len(manifest)), t).items():
            try:
                manifest.append(write_case(name, fn, args, compare, x64))
            except Exception as e:  # noqa: BLE001 - a program jax cannot lower is left out, said so
                print(f"skipped {name}: {type(e).__name__}: {e}", file=sys.stderr)
    for k, t in enumerate(TYPES):
        x64 = t in ("f64", "c128")
        jax.config.update("jax_enable_x64", x64)
        for name, (fn, args, compare) in extra_cases(np.random.default_rng(1000 + k), t).items():
            manifest.append(write_case(name, fn, args, compare, x64))
    for k, t in enumerate(TYPES):
        x64 = t in ("f64", "c128")
        jax.config.update("jax_enable_x64", x64)
        for name, (fn, args, compare) in perturbed_cases(np.random.default_rng(2000 + k), t).items():
            manifest.append(write_case(name, fn, args, compare, x64))
    jax.config.update("jax_enable_x64", False)
    (OUT / "manifest.json").write_text(json.dumps(
        {"format": "xlac-hlo-corpus/1", "set": "xlac jax linalg",
         "generator": f"jax {jax.__version__}, XLA:CPU, XLA_FLAGS={os.environ['XLA_FLAGS']}",
         "num_cases": len(manifest), "cases": manifest}, indent=1), encoding="utf-8")
    print(f"{len(manifest)} cases written to {OUT}")


if __name__ == "__main__":
    main()
