"""Every element type against jax.jit: small jnp programs (elementwise maps,
reductions, pooling, conversions, sorts, FFTs) in bf16, f16, f32, f64, s8, u8, s32,
s64 and c64, each run by ``jax.jit`` and by ``xlac.jit`` of the HLO jax emits for
it, in one process.

    python -m benchmarks.types [--size 1024] [--programs chain,sum_cols] [--types bf16,f16] [--out DIR]

Needs jax (``pip install 'xlac[jax]'``).  A program takes ``x`` (and, for
binary ones, ``y``) of shape ``size x size``; rows where xlac is more than 10%
slower are marked.  Each result is checked against jax's (relative and absolute
tolerance 2e-2: the 16-bit types round differently only where XLA:CPU's
approximations do), a bf16/f16 one that misses it against the same program
computed in f32 and rounded (XLA's bf16 ``cumsum`` is the further from that).  Timing follows ``benchmarks/harness.py``: warm calls,
samples interleaved round-robin, the median reported.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from .harness import publish, sweep_record, time_interleaved

#: Element types, by XLA's names.
TYPES = ("bf16", "f16", "f32", "f64", "s8", "u8", "s32", "s64", "c64")
_FLOAT, _REAL = {"bf16", "f16", "f32", "f64"}, {"bf16", "f16", "f32", "f64", "s8", "u8", "s32", "s64"}
_INT = {"s8", "u8", "s32", "s64"}


def _programs():
    """name -> (fn(x, y) with jax.numpy, the element types it takes)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def pool(x, op, init):
        x = x.reshape(4, x.shape[0] // 4, x.shape[1])
        return lax.reduce_window(x, init, op, (1, 2, 2), (1, 2, 2), "VALID")

    def lowest(x):
        return -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min

    return {
        "chain": (lambda x, y: jnp.tanh(x * 0.5 + y) * 1.5 + x, _FLOAT | {"c64"}),
        "add": (lambda x, y: x + y, set(TYPES)),
        "erf": (lambda x, y: jax.scipy.special.erf(x), _FLOAT),
        "sincos": (lambda x, y: jnp.sin(x) * y + jnp.cos(x * 3.0), _FLOAT),
        "sum_rows": (lambda x, y: x.sum(-1), set(TYPES)),
        "sum_cols": (lambda x, y: x.sum(0), set(TYPES)),
        "max_rows": (lambda x, y: x.max(-1), _REAL),
        "abs_max": (lambda x, y: jnp.abs(x).max(), _REAL),
        "softmax": (lambda x, y: jax.nn.softmax(x, -1), _FLOAT),
        "maxpool": (lambda x, y: pool(x, lax.max, jnp.array(lowest(x), x.dtype)), _REAL),
        "to_f32": (lambda x, y: x.astype(jnp.float32), _REAL - {"f32"}),
        "from_f32": (lambda x, y: (x.astype(jnp.float32) * 2).astype(x.dtype), _REAL - {"f32"}),
        "cumsum": (lambda x, y: jnp.cumsum(x, -1), set(TYPES)),
        # a reverse scan along the major dimension (a forward cumsum's gradient)
        "cumsum_rev": (lambda x, y: lax.cumsum(x, 0, reverse=True), _FLOAT),
        "sort": (lambda x, y: jnp.sort(x, -1), _REAL),
        "fft": (lambda x, y: jnp.fft.fft(x), {"c64"}),
        "fft2": (lambda x, y: jnp.fft.fft2(x), {"c64"}),
        "rfft": (lambda x, y: jnp.fft.rfft(x), {"f32", "f64"}),
        # a length of 8 * 5^3 (1000 of 1024 columns): radix-5 passes
        "rfft_1000": (lambda x, y: jnp.fft.rfft(x[:, :x.shape[1] * 125 // 128]), {"f32"}),
        "irfft": (lambda x, y: jnp.fft.irfft(x[:, :x.shape[1] // 2 + 1]), {"c64"}),
    }


def _inputs(t: str, size: int, rng) -> tuple:
    import xlac
    dt = xlac.Shape(getattr(xlac, t.upper()), ()).dtype
    shape = (size, size)
    if t in _INT:
        lo = 0 if t == "u8" else -100
        return rng.integers(lo, 100, shape).astype(dt), rng.integers(1, 50, shape).astype(dt)
    x, y = rng.standard_normal(shape), rng.standard_normal(shape)
    if t == "c64":
        x, y = x + 1j * rng.standard_normal(shape), y + 1j * rng.standard_normal(shape)
    return x.astype(dt), y.astype(dt)


def _close(got, want) -> bool:
    wide = np.complex128 if np.iscomplexobj(want) else np.float64
    return bool(np.allclose(got.astype(wide), want.astype(wide), rtol=2e-2, atol=2e-2, equal_nan=True))


def run(size: int, repeat: int, budget: float, programs: tuple, types: tuple) -> dict:
    import jax
    import xlac
    jax.config.update("jax_enable_x64", True)     # s64, f64 as such
    table = _programs()
    cpu = jax.devices("cpu")[0]
    rng = np.random.default_rng(0)
    rows = []
    for name in programs:
        fn, accepts = table[name]
        for t in types:
            if t not in accepts:
                continue
            x, y = _inputs(t, size, rng)
            f = jax.jit(fn, keep_unused=True)
            jx, jy = jax.device_put(x, cpu), jax.device_put(y, cpu)          # XLA:CPU
            g = xlac.jit(f.lower(jx, jy).as_text(dialect="hlo"))
            want, got = np.asarray(f(jx, jy)), np.asarray(g(x, y))
            ok = _close(got, want)
            if not ok and t in ("bf16", "f16"):
                # The same program in f32, rounded: where XLA's 16-bit result is the
                # further from it (a bf16 cumsum's error is 5x xlac's f32-accumulated one).
                exact = np.asarray(f(*(jax.device_put(v.astype(np.float32), cpu) for v in (x, y))))
                ok = _close(got, exact.astype(x.dtype))
            timings = time_interleaved({"jax": lambda: f(jx, jy).block_until_ready(), "xlac": lambda: g(x, y)},
                                       repeat=repeat, budget=budget)
            ms = {k: (v.median_s * 1e3 if not isinstance(v, Exception) else None) for k, v in timings.items()}
            rows.append({"program": name, "type": t, "size": size, "ok": ok, "ms": ms})
    jax.config.update("jax_enable_x64", False)
    return sweep_record(repeat, rows)


def markdown(res: dict) -> str:
    m = res["machine"]
    v = res["versions"]
    lines = [f"Every element type against jax.jit ({res['date']}; {m['cpu']}, {m['cores']} cores, {m['simd']}; "
             f"xlac {m['xlac_commit']}, jax {v.get('jax')}; median of up to {res['repeat']} samples, ms)", "",
             "| program | type | size | xlac | jax.jit | xlac / jax | check |", "|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        a, b = r["ms"].get("xlac"), r["ms"].get("jax")
        ratio = f"{a / b:.2f}" + (" (slower)" if a > 1.1 * b else "") if a and b else "—"
        cells = [f"{v:.3f}" if v else "—" for v in (a, b)]
        lines.append(f"| {r['program']} | {r['type']} | {r['size']}x{r['size']} | {cells[0]} | {cells[1]} | "
                     f"{ratio} | {'ok' if r['ok'] else 'MISMATCH'} |")
    load = m.get("load_average")
    lines += ["", f"Load average while measuring: {load}" if load else ""]
    return "\n".join(lines) + "\n"


def _subset(value: str, known: tuple, what: str):
    chosen = tuple(v for v in value.split(",") if v)
    unknown = sorted(set(chosen) - set(known))
    if unknown or not chosen:
        print(f"python -m benchmarks.types: error: --{what}: unknown {what} "
              f"{', '.join(unknown) or '(none given)'}; choose from {', '.join(known)}", file=sys.stderr)
        return None
    return chosen


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.types", description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=1024, help="rows and columns of x and y (default 1024)")
    p.add_argument("--repeat", type=int, default=15, help="timed samples per implementation (default 15)")
    p.add_argument("--budget", type=float, default=10.0, help="seconds per measurement (default 10)")
    p.add_argument("--quick", action="store_true", help="8 x 8, 3 samples (a smoke test)")
    p.add_argument("--programs", default="", help="comma-separated subset of the programs (default: all)")
    p.add_argument("--types", default=",".join(TYPES), help=f"comma-separated subset of {','.join(TYPES)}")
    p.add_argument("--out", help="directory for types.md and types.json")
    args = p.parse_args(argv)
    try:
        import jax  # noqa: F401
    except ImportError:
        print("python -m benchmarks.types: error: needs jax (pip install 'xlac[jax]')", file=sys.stderr)
        return 2
    names = tuple(_programs())
    programs = _subset(args.programs or ",".join(names), names, "programs")
    types = _subset(args.types, TYPES, "types")
    if programs is None or types is None:
        return 2
    size, repeat = (8, 3) if args.quick else (args.size, args.repeat)
    if size < 4 or size % 4 or repeat < 1:
        print("python -m benchmarks.types: error: --size must be a positive multiple of 4, --repeat positive",
              file=sys.stderr)
        return 2
    res = run(size, repeat, args.budget, programs, types)
    publish(markdown(res), res, args.out, "types")
    return 0


if __name__ == "__main__":
    from xlac.cli import utf8_stdout
    utf8_stdout()                  # reports are Markdown in UTF-8, whatever the locale
    sys.exit(main())
