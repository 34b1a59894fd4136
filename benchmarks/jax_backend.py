"""jax on xlac against jax on its own CPU backend (XLA:CPU), in one process.

    python -m benchmarks.jax_backend [--quick] [--only NAME,...] [--out DIR]

Three tables, each xlac's PJRT plugin beside jax's CPU client, measured in this run
(``JAX_PLATFORMS=cpu,xlac``; xlac's disk cache off, so compiles are real):

* **dispatch**: a jitted function on small arrays called again and again (``x + 1``
  on 8 floats; a 3-argument elementwise function; a 64x64 matmul): microseconds per
  call, the array left on the device, sampled round-robin with the harness's
  ``time_interleaved``;
* **compile**: jax's eager mode compiles one tiny program per primitive and shape:
  ``jax.jit(f).lower(x).compile()`` for a few such programs, best of ``REPEAT`` with
  both backends' in-memory caches emptied (``jax.clear_caches()``,
  ``xlac.clear_caches()``);
* **models**: the real training and inference steps of ``benchmarks/models``
  (flax, optax, equinox programs written out as HLO): each module converted to the
  StableHLO jax sends a backend and compiled by each client as jax compiles
  (``compile_and_load``), run on the committed inputs, checked against the
  committed outputs (the manifest's tolerances), and timed (median of warm calls).

Writes ``jax_backend.md`` and ``jax_backend.json`` to ``--out`` (default
``benchmarks/results``).  Needs jax (the ``test`` extra installs it).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu,xlac")
os.environ.pop("XLAC_CACHE_DIR", None)

from benchmarks import harness, models  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
BACKENDS = ("cpu", "xlac")
REPEAT = 5


def _jax():
    import jax
    import jax.numpy as jnp
    return jax, jnp


# -- dispatch -----------------------------------------------------------------------------
def dispatch_programs(jnp) -> dict:
    """name: (function, argument shapes and dtypes)."""
    return {
        "x + 1 (f32[8])": (lambda x: x + 1, [((8,), np.float32)]),
        "a*b + c (f32[1024])": (lambda a, b, c: a * b + c, [((1024,), np.float32)] * 3),
        "matmul f32[64,64]": (lambda a, b: a @ b, [((64, 64), np.float32)] * 2),
    }


def measure_dispatch(quick: bool) -> list[dict]:
    jax, jnp = _jax()
    rows = []
    rng = np.random.default_rng(0)
    for name, (fn, specs) in dispatch_programs(jnp).items():
        f = jax.jit(fn)
        calls = {}
        for backend in BACKENDS:
            device = jax.devices(backend)[0]
            args = [jax.device_put(rng.standard_normal(s).astype(t), device) for s, t in specs]
            f(*args).block_until_ready()

            def call(args=args):
                f(*args)
            calls[backend] = call
        timings = harness.time_interleaved(calls, repeat=5 if quick else 15, budget=5 if quick else 20,
                                           min_sample=2e-3)
        row = {"program": name}
        for backend in BACKENDS:
            row[f"{backend}_us"] = timings[backend].median_s * 1e6
        rows.append(row)
    return rows


# -- compile ------------------------------------------------------------------------------
def compile_programs(jnp) -> dict:
    return {
        "sin f32[8]": (jnp.sin, [((8,), np.float32)]),
        "add f32[3,4]": (lambda a, b: a + b, [((3, 4), np.float32)] * 2),
        "sum f32[128]": (jnp.sum, [((128,), np.float32)]),
        "dot f32[16,16]": (jnp.dot, [((16, 16), np.float32)] * 2),
        "softmax f32[4,32]": (lambda x: jnp.exp(x) / jnp.exp(x).sum(-1, keepdims=True), [((4, 32), np.float32)]),
    }


def measure_compile(quick: bool) -> list[dict]:
    import xlac
    jax, jnp = _jax()
    rows = []
    for name, (fn, specs) in compile_programs(jnp).items():
        row = {"program": name}
        for backend in BACKENDS:
            device = jax.devices(backend)[0]
            args = [jax.device_put(np.zeros(s, t), device) for s, t in specs]
            best = math.inf
            for _ in range(2 if quick else REPEAT):
                jax.clear_caches()
                xlac.clear_caches()
                lowered = jax.jit(fn).lower(*args)
                t0 = time.perf_counter()
                lowered.compile()
                best = min(best, time.perf_counter() - t0)
            row[f"{backend}_ms"] = best * 1e3
        rows.append(row)
    return rows


# -- models -------------------------------------------------------------------------------
def _compiled(client, text: str):
    """The HLO module ``text`` compiled by ``client`` as jax compiles a program: its
    StableHLO (what jax sends a PJRT backend), one device, default options."""
    from jax._src.lib import _jax, xla_client
    from jaxlib import _hlo
    module = _hlo.hlo_module_from_text(text)
    computation = _hlo.XlaComputation(module.as_serialized_hlo_module_proto())
    mlir = _jax.mlir.xla_computation_to_mlir_module(computation)
    device = client.local_devices()[0]
    t0 = time.perf_counter()
    exe = client.compile_and_load(mlir, xla_client.DeviceList((device,)), xla_client.CompileOptions())
    return exe, device, time.perf_counter() - t0


def measure_models(quick: bool, only: list[str] | None) -> list[dict]:
    jax, _ = _jax()
    from jax._src import xla_bridge
    rows = []
    # What each client builds once per process (xlac's GEMM library, XLA's runtime
    # pieces) is not a model's compile time: one small dot program first.
    warm = "HloModule w\nENTRY e {\n a = f32[64,64] parameter(0)\n ROOT d = f32[64,64] dot(a, a), " \
           "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"
    for backend in BACKENDS:
        _compiled(xla_bridge.get_backend(backend), warm)
    for case in models.cases(only):
        name = case["name"]
        text = (models.DIR / f"{name}.hlo").read_text(encoding="utf-8")
        inputs = models.load_arrays(models.DIR / f"{name}.npz")
        expected = models.load_arrays(models.DIR / f"{name}.expected.npz")
        row, calls = {"program": name}, {}
        for backend in BACKENDS:
            client = xla_bridge.get_backend(backend)
            exe, device, seconds = _compiled(client, text)
            args = [jax.device_put(a, device) for a in inputs]

            def call(exe=exe, args=args):
                for out in exe.execute_sharded(args).disassemble_into_single_device_arrays():
                    out[0].block_until_ready()
            got = [np.asarray(out[0]) for out in exe.execute_sharded(args).disassemble_into_single_device_arrays()]
            bad = models.mismatches(case, got, expected)
            row[f"{backend}_compile_s"] = seconds
            row[f"{backend}_check"] = "ok" if not bad else bad[0]
            calls[backend] = call
        timings = harness.time_interleaved(calls, repeat=3 if quick else 11, budget=5 if quick else 20)
        for backend in BACKENDS:
            row[f"{backend}_ms"] = timings[backend].median_s * 1e3
        rows.append(row)
        harness.log(f"{name}: xlac {row['xlac_ms']:.3f} ms, cpu {row['cpu_ms']:.3f} ms")
    return rows


# -- report -------------------------------------------------------------------------------
def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def report(res: dict) -> str:
    m = res["machine"]
    lines = [f"# jax on xlac vs jax on XLA:CPU ({m.get('cpu', '?')}, {m.get('cores', '?')} cores; "
             f"{res['date']}; jax {res['versions'].get('jax', '?')})", "",
             "Measured in one process (`JAX_PLATFORMS=cpu,xlac`), the same programs on both "
             "backends; xlac's disk cache off. `python -m benchmarks.jax_backend`.", "",
             "## Dispatch: a jitted call on small arrays (microseconds per call, median)", "",
             "| program | XLA:CPU us | xlac us | xlac / XLA:CPU |", "|---|---|---|---|"]
    for r in res["dispatch"]:
        lines.append(f"| {r['program']} | {r['cpu_us']:.1f} | {r['xlac_us']:.1f} | {r['xlac_us'] / r['cpu_us']:.1f}x |")
    lines += ["", "## Compile time of tiny programs (jax's eager mode: one per primitive and shape; "
              "milliseconds, best of several with the caches emptied)", "",
              "| program | XLA:CPU ms | xlac ms | xlac / XLA:CPU |", "|---|---|---|---|"]
    for r in res["compile"]:
        lines.append(f"| {r['program']} | {r['cpu_ms']:.1f} | {r['xlac_ms']:.1f} | {r['xlac_ms'] / r['cpu_ms']:.1f}x |")
    if res["models"]:
        lines += ["", "## Real models through each PJRT client (milliseconds per step, median of warm calls)", "",
                  "| program | XLA:CPU ms | xlac ms | xlac / XLA:CPU | XLA:CPU compile s | xlac compile s | check |",
                  "|---|---|---|---|---|---|---|"]
        for r in res["models"]:
            check = r["xlac_check"] if r["xlac_check"] != "ok" else ("ok" if r["cpu_check"] == "ok" else
                                                                      f"ok (XLA:CPU: {r['cpu_check']})")
            lines.append(f"| {r['program']} | {r['cpu_ms']:.3f} | {r['xlac_ms']:.3f} | "
                         f"{r['xlac_ms'] / r['cpu_ms']:.2f}x | {r['cpu_compile_s']:.2f} | {r['xlac_compile_s']:.2f} | "
                         f"{check} |")
        ratios = [r["xlac_ms"] / r["cpu_ms"] for r in res["models"]]
        worst = max(res["models"], key=lambda r: r["xlac_ms"] / r["cpu_ms"])
        lines += ["", f"Run time, xlac / XLA:CPU: geometric mean **{_geomean(ratios):.2f}x**, worst "
                      f"**{max(ratios):.2f}x** ({worst['program']}), over {len(ratios)} programs."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer samples, two models")
    p.add_argument("--only", help="models to run, comma-separated (default: all)")
    p.add_argument("--no-models", action="store_true", help="dispatch and compile tables only")
    p.add_argument("--out", default=str(OUT), help="directory for jax_backend.md/.json")
    args = p.parse_args(argv)
    try:
        jax, _ = _jax()
        jax.devices("xlac")
    except Exception as e:                 # noqa: BLE001 - one line: what is missing
        print(f"benchmarks.jax_backend: needs jax with xlac's plugin: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    only = args.only.split(",") if args.only else (["eqx_cnn_train", "gpt_sample"] if args.quick else None)
    res = {"machine": harness.machine(), "versions": harness.versions(),
           "date": time.strftime("%Y-%m-%d"),
           "dispatch": measure_dispatch(args.quick), "compile": measure_compile(args.quick),
           "models": [] if args.no_models else measure_models(args.quick, only)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "jax_backend.json").write_text(json.dumps(res, indent=1, default=str), encoding="utf-8")
    text = report(res)
    (out / "jax_backend.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    from xlac.cli import utf8_stdout
    utf8_stdout()                  # reports are Markdown in UTF-8, whatever the locale
    sys.exit(main())
