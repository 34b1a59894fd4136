"""Common jax operations against jax.jit: what a jax user writes (products,
convolutions of every kind and their gradients, scatters, scans, attention,
normalisations, random numbers, linear algebra, FFTs ...), each run by
``jax.jit`` and by ``xlac.jit`` of the HLO jax emits for it, in one process.

    python -m benchmarks.jax_ops [--size 1024] [--ops cosine_sim,scatter_max] [--out DIR]

Needs jax (``pip install 'xlac[jax]'``).  Shapes scale with ``--size`` (the
side of the square matrices; images, sequences and batches in proportion);
rows where xlac is more than 10% slower are marked.  Each result is checked
against jax's (relative and absolute tolerance 2e-3 of the largest
magnitude; random numbers and sorts' tie orders are compared as jax computes
them, bit for bit where xlac follows XLA).  Timing follows
``benchmarks/harness.py``: warm calls, samples interleaved round-robin, the
median reported.  Compile times are each side's best of 3 with its cache of
compiled programs cleared (xlac's after the GEMM library's variants the
operation uses are built: the first compilation, in the JSON as
``first_compile_s``, includes that).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from .harness import publish, sweep_record, time_interleaved


def _ops(n: int):
    """name -> (fn, argument arrays) at base size ``n`` (a multiple of 16)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    rng = np.random.default_rng(0)
    q = n // 16                                   # 64 at n = 1024

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    def i32(hi, *s):
        return rng.integers(0, hi, s).astype(np.int32)

    def conv(x, w, groups=1, strides=(1, 1), padding="SAME"):
        return lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        feature_group_count=groups)

    def grouped_grad(x, w):
        return jax.grad(lambda x, w: (conv(x, w, 4) ** 2).sum(), argnums=(0, 1))(x, w)

    def gru(h, x, w, u):
        return lax.fori_loop(0, q, lambda i, h: jax.nn.sigmoid(x @ w + h @ u) * h, h)

    def cosine(x, y):
        return (x @ y.T) / (jnp.linalg.norm(x, axis=-1)[:, None] * jnp.linalg.norm(y, axis=-1)[None, :])

    img = (8, n // 32, n // 32)                    # 8 x 32 x 32 images at n = 1024
    return {
        "matmul": (lambda x, y: x @ y, (f32(n, n), f32(n, n))),
        "matvec": (lambda m, x: m @ x, (f32(4 * n, 4 * n), f32(4 * n))),
        "vecmat": (lambda x, m: x @ m, (f32(4 * n), f32(4 * n, 4 * n))),
        "dot_1d": (lambda a, b: a @ b, (f32(n * n), f32(n * n))),
        "batched_matmul": (lambda x, y: jnp.einsum("bij,bjk->bik", x, y), (f32(q, 2 * q, q), f32(q, q, 2 * q))),
        "cosine_sim": (cosine, (f32(n // 2, n // 8), f32(n // 2, n // 8))),
        "attention": (lambda qq, k, v: jax.nn.dot_product_attention(qq, k, v),
                      (f32(4, n // 8, 8, q), f32(4, n // 8, 8, q), f32(4, n // 8, 8, q))),
        "conv2d": (conv, (f32(*img, 128), f32(3, 3, 128, 128))),
        "conv2d_grouped": (lambda x, w: conv(x, w, 4), (f32(*img, 64), f32(3, 3, 16, 64))),
        "conv2d_grouped_grad": (grouped_grad, (f32(*img, 64), f32(3, 3, 16, 64))),
        "conv2d_depthwise": (lambda x, w: conv(x, w, 64), (f32(*img, 64), f32(3, 3, 1, 64))),
        "conv2d_stride2": (lambda x, w: conv(x, w, strides=(2, 2)), (f32(8, n // 16, n // 16, 32), f32(3, 3, 32, 64))),
        "conv1d_causal": (lambda x, w: lax.conv_general_dilated(x, w, (1,), [(3, 0)],
                                                                dimension_numbers=("NWC", "WIO", "NWC")),
                          (f32(8, n, 128), f32(4, 128, 128))),
        "conv_transpose": (lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
                           (f32(8, n // 64, n // 64, 128), f32(4, 4, 128, 64))),
        "maxpool": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                    (f32(8, n // 8, n // 8, 16),)),
        "softmax": (lambda x: jax.nn.softmax(x, -1), (f32(n, n),)),
        "layernorm_grad": (jax.grad(lambda x, g: ((x - x.mean(-1, keepdims=True))
                                                  / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5) * g).sum(),
                                    argnums=(0, 1)), (f32(n, n), f32(n))),
        "gelu": (jax.nn.gelu, (f32(n, n),)),
        "sum_axis0": (lambda x: x.sum(0), (f32(n, n),)),
        "argmax": (lambda x: jnp.argmax(x, -1), (f32(n, n),)),
        "cumsum": (lambda x: jnp.cumsum(x, 1), (f32(n, n),)),
        "associative_scan": (lambda x: lax.associative_scan(jnp.add, x, axis=1), (f32(n, n),)),
        "sort": (lambda x: jnp.sort(x, -1), (f32(n, n),)),
        "top_k": (lambda x: lax.top_k(x, 8)[0], (f32(n, n),)),
        "concatenate": (lambda x, y: jnp.concatenate([x, y], 1), (f32(n, n), f32(n, n))),
        "transpose": (lambda x: x.T + 0, (f32(n, n),)),
        "gather_rows": (lambda x, i: x[i], (f32(n, n), i32(n, n))),
        "scatter_add": (lambda x, i, u: x.at[i].add(u), (f32(n * 64), i32(n * 64, n * 256), f32(n * 256))),
        "scatter_max": (lambda x, i, u: x.at[i].max(u), (f32(n * 64), i32(n * 64, n * 256), f32(n * 256))),
        "segment_sum": (lambda d, s: jax.ops.segment_sum(d, s, n), (f32(n * 64, 64), i32(n, n * 64))),
        "fori_gru": (gru, (f32(q, n // 4), f32(q, n // 4), f32(n // 4, n // 4), f32(n // 4, n // 4))),
        "while_newton": (lambda x: lax.while_loop(lambda s: s[1] < 50, lambda s: (s[0] - (s[0] * s[0] - x) / (2 * s[0]),
                                                                               s[1] + 1), (x + 1, 0))[0],
                         (np.abs(f32(n, n)) + 1,)),
        "random_normal": (lambda k: jax.random.normal(k, (n, n)), (np.asarray(jax.random.PRNGKey(0)),)),
        "fft": (lambda x: jnp.fft.fft(x), ((f32(n, n) + 1j * f32(n, n)).astype(np.complex64),)),
        "cholesky": (lambda x: jnp.linalg.cholesky(x), ((lambda m: (m @ m.T + n * np.eye(n // 2)).astype(np.float32))(f32(n // 2, n // 2)),)),
        "solve": (lambda a, b: jnp.linalg.solve(a, b), ((f32(n // 2, n // 2) + n * np.eye(n // 2)).astype(np.float32), f32(n // 2, 8))),
        "resize_bilinear": (lambda x: jax.image.resize(x, (8, n // 4, n // 4, 16), "bilinear"), (f32(8, n // 8, n // 8, 16),)),
    }


def _close(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    wide = np.complex128 if np.iscomplexobj(want) else np.float64
    g, w = got.astype(wide), want.astype(wide)
    scale = float(np.max(np.abs(w))) if w.size else 0.0
    return bool(np.allclose(g, w, rtol=2e-3, atol=2e-3 * max(scale, 1.0), equal_nan=True))


def _leaves(v) -> list:
    return [x for e in v for x in _leaves(e)] if isinstance(v, (tuple, list)) else [v]


def run(size: int, repeat: int, budget: float, names: tuple, compile_rounds: int = 3) -> dict:
    import jax
    import xlac
    cpu = jax.devices("cpu")[0]
    table = _ops(size)
    rows = []
    for name in names:
        fn, args = table[name]
        f = jax.jit(fn)
        jargs = [jax.device_put(a, cpu) for a in args]                      # XLA:CPU
        text = f.lower(*jargs).as_text(dialect="hlo")
        t0 = time.perf_counter()
        g = xlac.jit(text)
        first_s = time.perf_counter() - t0          # with the library variants it is the first to use
        compile_s, jax_compile_s = _compile_times(xlac, text, jax, fn, jargs, compile_rounds)
        want, got = _leaves(jax.device_get(f(*jargs))), _leaves(g(*args))
        ok = len(want) == len(got) and all(_close(a, b) for a, b in zip(got, want))
        timings = time_interleaved({"jax": lambda: jax.block_until_ready(f(*jargs)), "xlac": lambda: g(*args)},
                                   repeat=repeat, budget=budget)
        ms = {k: (v.median_s * 1e3 if not isinstance(v, Exception) else None) for k, v in timings.items()}
        shapes = ", ".join("x".join(map(str, np.shape(a))) or "scalar" for a in args)
        rows.append({"op": name, "shapes": shapes, "ok": ok, "ms": ms, "compile_s": compile_s,
                     "first_compile_s": first_s, "jax_compile_s": jax_compile_s})
    return sweep_record(repeat, rows)


def _compile_times(xlac, text: str, jax, fn, jargs, rounds: int = 3) -> tuple:
    """(xlac's, XLA's) compile time of one operation, seconds, best of
    ``rounds`` with the caches of compiled programs cleared first:
    ``xlac.jit`` of the HLO text (the GEMM library's variants built already)
    and ``jax.jit(fn).lower(...).compile()``."""
    xs, js = [], []
    for _ in range(rounds):
        xlac.clear_caches()
        t0 = time.perf_counter()
        xlac.jit(text)
        xs.append(time.perf_counter() - t0)
        jax.clear_caches()
        lowered = jax.jit(fn).lower(*jargs)
        t0 = time.perf_counter()
        lowered.compile()
        js.append(time.perf_counter() - t0)
    return min(xs), min(js)


def markdown(res: dict) -> str:
    m, v = res["machine"], res["versions"]
    lines = [f"Common jax operations against jax.jit ({res['date']}; {m['cpu']}, {m['cores']} cores, {m['simd']}; "
             f"xlac {m['xlac_commit']}, jax {v.get('jax')}; median of up to {res['repeat']} samples, ms)", "",
             "| op | operands | xlac | jax.jit | xlac / jax | xlac compile s | jax compile s | check |",
             "|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        a, b = r["ms"].get("xlac"), r["ms"].get("jax")
        ratio = f"{a / b:.2f}" + (" (slower)" if a > 1.1 * b else "") if a and b else "—"
        cells = [f"{x:.3f}" if x else "—" for x in (a, b)]
        jc = r.get("jax_compile_s")
        lines.append(f"| {r['op']} | {r['shapes']} | {cells[0]} | {cells[1]} | {ratio} | {r['compile_s']:.3f} | "
                     f"{f'{jc:.3f}' if jc is not None else '—'} | {'ok' if r['ok'] else 'MISMATCH'} |")
    load = m.get("load_average")
    lines += ["", f"Load average while measuring: {load}" if load else ""]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.jax_ops", description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=1024, help="side of the square matrices (default 1024)")
    p.add_argument("--repeat", type=int, default=15, help="timed samples per implementation (default 15)")
    p.add_argument("--budget", type=float, default=10.0, help="seconds per measurement (default 10)")
    p.add_argument("--quick", action="store_true", help="size 64, 3 samples, one compilation each (a smoke test)")
    p.add_argument("--ops", default="", help="comma-separated subset of the operations (default: all)")
    p.add_argument("--out", help="directory for jax_ops.md and jax_ops.json")
    args = p.parse_args(argv)
    try:
        import jax  # noqa: F401
    except ImportError:
        print("python -m benchmarks.jax_ops: error: needs jax (pip install 'xlac[jax]')", file=sys.stderr)
        return 2
    size, repeat = (64, 3) if args.quick else (args.size, args.repeat)
    if size < 64 or size % 64 or repeat < 1:
        print("python -m benchmarks.jax_ops: error: --size must be a positive multiple of 64, --repeat positive",
              file=sys.stderr)
        return 2
    known = tuple(_ops(64))
    names = tuple(v for v in args.ops.split(",") if v) or known
    unknown = sorted(set(names) - set(known))
    if unknown:
        print(f"python -m benchmarks.jax_ops: error: --ops: unknown {', '.join(unknown)}; choose from "
              f"{', '.join(known)}", file=sys.stderr)
        return 2
    res = run(size, repeat, args.budget, names, compile_rounds=1 if args.quick else 3)
    publish(markdown(res), res, args.out, "jax_ops")
    return 0


if __name__ == "__main__":
    from xlac.cli import utf8_stdout
    utf8_stdout()                  # reports are Markdown in UTF-8, whatever the locale
    sys.exit(main())
