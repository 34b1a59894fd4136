"""jax's linear algebra: cholesky, solve, inv, det and eigh of 512x512 f32/f64 matrices,
xlac against jax.jit, numpy and scipy, in one run.

    python -m benchmarks.linalg [--n 512] [--repeat 15] [--out DIR] [--quick] [--no-jax] [--kernels solve,inv]
    python -m benchmarks.linalg --export        # (with jax) rewrite benchmarks/linalg_hlo/*.hlo

xlac runs the HLO jax emits for ``jnp.linalg.cholesky(a)``, ``jnp.linalg.solve(a,
b)`` (``b`` a vector), ``jnp.linalg.inv(a)``, ``jnp.linalg.det(a)`` and
``jnp.linalg.eigh(a)`` (committed in
``benchmarks/linalg_hlo``, exported at n = 512; other sizes rewrite its
dimensions): LAPACK custom calls (``lapack_?potrf_ffi``, ``?getrf`` +
``?trsm`` for solve and inv, ``?getrf`` for det, ``?syevd``) that xlac's generated code runs with the LAPACK scipy
bundles (but ``getrf``, and ``trsm`` with several right-hand sides: xlac's
own blocked LU and triangular solve), plus the elementwise work around them
(symmetrising the input, replacing a failed factorisation by NaNs).  jax.jit runs the same programs
(the same LAPACK: jaxlib calls scipy's too); numpy and scipy call their
LAPACKs from Python (``np.linalg.cholesky/solve/eigh``,
``scipy.linalg.cholesky(lower=True)/solve/eigh``).  Every result is checked
against numpy's first.  Timing follows ``benchmarks/harness.py``: warm
calls, samples interleaved round-robin, the median reported.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from .harness import log, machine, publish, time_interleaved, versions
from .kernels import scale_hlo

HLO_DIR = Path(__file__).resolve().parent / "linalg_hlo"
EXPORT_N = 512
KERNELS = ("cholesky", "solve", "inv", "det", "eigh")
DTYPES = {"f32": np.float32, "f64": np.float64}


def _inputs(kernel: str, n: int, dtype, rng) -> list:
    a = rng.standard_normal((n, n))
    if kernel == "cholesky":
        a = a @ a.T + n * np.eye(n)
        return [a.astype(dtype)]
    if kernel == "solve":
        return [(a + 2 * np.sqrt(n) * np.eye(n)).astype(dtype), rng.standard_normal(n).astype(dtype)]
    if kernel in ("inv", "det"):      # det: scaled so that it stays finite in f32
        return [((a + 2 * np.sqrt(n) * np.eye(n)) / (2 * np.sqrt(n))).astype(dtype)]
    return [((a + a.T) / 2).astype(dtype)]


def _numpy(kernel: str):
    return {"cholesky": np.linalg.cholesky, "solve": np.linalg.solve, "inv": np.linalg.inv, "det": np.linalg.det,
            "eigh": lambda a: np.linalg.eigh(a)}[kernel]


def _scipy(kernel: str):
    try:
        import scipy.linalg as sl
    except ImportError:
        return None
    return {"cholesky": lambda a: sl.cholesky(a, lower=True), "solve": sl.solve, "inv": sl.inv, "det": sl.det,
            "eigh": lambda a: sl.eigh(a)}[kernel]


def _jax_fn(kernel: str):
    import jax.numpy as jnp
    return {"cholesky": jnp.linalg.cholesky, "solve": jnp.linalg.solve, "inv": jnp.linalg.inv,
            "det": jnp.linalg.det, "eigh": lambda a: tuple(jnp.linalg.eigh(a))}[kernel]


def _checked(kernel: str, got, ref) -> float:
    """max relative error of the part of the result that is unique (eigh: the eigenvalues)."""
    if kernel == "eigh":
        got, ref = got[0], ref[0]
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30))


def export(kernels=KERNELS) -> None:
    """Write the HLO jax emits for ``kernels`` and every type (needs jax)."""
    import jax
    HLO_DIR.mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    for t, dtype in DTYPES.items():
        jax.config.update("jax_enable_x64", t == "f64")
        for kernel in kernels:
            args = _inputs(kernel, EXPORT_N, dtype, rng)
            text = jax.jit(_jax_fn(kernel)).lower(*args).as_text(dialect="hlo")
            assert "lapack_" in text, f"{kernel} {t}: no LAPACK custom call"
            (HLO_DIR / f"{kernel}_{t}.hlo").write_text(text, encoding="utf-8")
            log(f"wrote {kernel}_{t}.hlo")
    jax.config.update("jax_enable_x64", False)


def _hlo(kernel: str, t: str, n: int) -> str:
    text = (HLO_DIR / f"{kernel}_{t}.hlo").read_text(encoding="utf-8")
    # Constants too: solve's pivots-to-permutation loop runs to constant(n).
    return scale_hlo(text, {"n": EXPORT_N}, {"n": n}, constants=True)


def run(n: int = EXPORT_N, repeat: int = 15, budget: float = 20.0, use_jax: bool = True,
        kernels=KERNELS) -> dict:
    import xlac
    jax = None
    if use_jax:
        try:
            import jax
        except ImportError:
            jax = None
    rows = []
    for t, dtype in DTYPES.items():
        if jax is not None:
            jax.config.update("jax_enable_x64", t == "f64")
        for kernel in kernels:
            args = _inputs(kernel, n, dtype, np.random.default_rng(1))
            ref = _numpy(kernel)(*args)
            exe = xlac.jit(_hlo(kernel, t, n))
            calls = {"xlac": lambda exe=exe: exe(*args), "numpy": lambda: _numpy(kernel)(*args)}
            sp = _scipy(kernel)
            if sp is not None:
                calls["scipy"] = lambda sp=sp: sp(*args)
            if jax is not None:
                jf = jax.jit(_jax_fn(kernel))
                dev = [jax.device_put(a) for a in args]
                calls["jax"] = lambda jf=jf, dev=dev: jax.block_until_ready(jf(*dev))
            tol = 1e-3 if t == "f32" else 1e-9
            errors = {}
            for name, fn in calls.items():
                errors[name] = _checked(kernel, fn(), ref)
                if errors[name] > tol:
                    raise AssertionError(f"{kernel} {t} {name}: relative error {errors[name]:.2e} > {tol}")
            log(f"timing {kernel} {t} n={n} ({', '.join(calls)})")
            timings = time_interleaved(calls, repeat=repeat, budget=budget)
            ms = {name: (tm.median_s * 1e3 if not isinstance(tm, Exception) else None)
                  for name, tm in timings.items()}
            best = {name: (tm.min_s * 1e3 if not isinstance(tm, Exception) else None)
                    for name, tm in timings.items()}
            rows.append({"kernel": kernel, "dtype": t, "n": n, "ms": ms, "best_ms": best, "errors": errors,
                         "samples": {k: getattr(v, "runs", None) for k, v in timings.items()}})
    if jax is not None:
        jax.config.update("jax_enable_x64", False)
    info = machine()
    try:
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        pass
    return {"machine": info, "versions": versions(), "repeat": repeat, "rows": rows}


def _ratio(a, b) -> str:
    return f"{a / b:.2f}x" if a and b else "—"


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = [f"Linear algebra ({m['cpu']}, {m['cores']} cores; xlac {m['xlac_commit']}; "
             f"median of up to {res['repeat']} samples, ms)", "",
             "| kernel | type | n | xlac | jax.jit | numpy | scipy | xlac / jax | xlac / numpy | xlac / scipy "
             "| xlac / jax, best samples |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        ms, best = r["ms"], r.get("best_ms", {})

        def cell(name):
            return f"{ms[name]:.2f}" if ms.get(name) else "—"
        lines.append(f"| {r['kernel']} | {r['dtype']} | {r['n']} | {cell('xlac')} | {cell('jax')} | {cell('numpy')} | "
                     f"{cell('scipy')} | {_ratio(ms.get('xlac'), ms.get('jax'))} | "
                     f"{_ratio(ms.get('xlac'), ms.get('numpy'))} | {_ratio(ms.get('xlac'), ms.get('scipy'))} | "
                     f"{_ratio(best.get('xlac'), best.get('jax'))} |")
    load = m.get("load_average")
    lines += ["", f"Load average while measuring: {load}" if load else ""]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.linalg", description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=EXPORT_N, help=f"matrix size (default {EXPORT_N})")
    p.add_argument("--repeat", type=int, default=15, help="timed samples per implementation (default 15)")
    p.add_argument("--budget", type=float, default=20.0, help="seconds per measurement (default 20)")
    p.add_argument("--quick", action="store_true", help="n = 16, 3 samples (a smoke test)")
    p.add_argument("--no-jax", action="store_true", help="skip jax even if installed")
    p.add_argument("--out", help="directory for linalg.md and linalg.json")
    p.add_argument("--export", action="store_true", help="write benchmarks/linalg_hlo from jax and stop")
    p.add_argument("--kernels", default=",".join(KERNELS), help=f"comma-separated subset of {','.join(KERNELS)}")
    args = p.parse_args(argv)
    kernels = tuple(k for k in args.kernels.split(",") if k)
    unknown = sorted(set(kernels) - set(KERNELS))
    if unknown or not kernels:
        print(f"python -m benchmarks.linalg: error: --kernels: unknown kernel(s) "
              f"{', '.join(unknown) or '(none given)'}; choose from {', '.join(KERNELS)}", file=sys.stderr)
        return 2
    if args.export:
        export(kernels)
        return 0
    n, repeat = (16, 3) if args.quick else (args.n, args.repeat)
    if n < 1 or repeat < 1:
        print("python -m benchmarks.linalg: error: --n and --repeat must be positive", file=sys.stderr)
        return 2
    res = run(n, repeat, args.budget, use_jax=not args.no_jax, kernels=kernels)
    publish(markdown(res), res, args.out, "linalg")
    return 0


if __name__ == "__main__":
    from xlac.cli import utf8_stdout
    utf8_stdout()                  # reports are Markdown in UTF-8, whatever the locale
    sys.exit(main())
