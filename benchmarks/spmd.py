"""Automatically sharded programs on 1, 2 and 4 devices: xlac's partitioned
program on its device processes beside XLA's partitioned program of the same
module, in one run.

    python -m benchmarks.spmd [--quick] [--devices 1,2,4] [--out DIR]

Two programs, written by jax (``jax.jit`` with ``NamedSharding``s over a 1-D
mesh of n devices) and lowered to HLO text, so both compilers get the same
module:

* **data-parallel**: an MLP training step (tanh hidden layer, mean squared
  error, SGD): the batch split over the devices, the parameters replicated;
* **tensor-parallel**: a Megatron MLP (the first weight split by columns, the
  second by rows, one all-reduce of the partial sums).

For each, per device count: the step time (median of warm calls; xlac's
global arrays in and out of its device processes through shared memory, jax's
arrays left placed on its devices), the bytes the collectives move per device per step (xlac's from
its per-device program, :func:`xlac.passes.spmd_partitioner.collective_bytes`;
XLA's from ``compile().as_text()``, counted the same way), and the per-device
peak memory (xlac's as ``xlac dump`` gives it: parameters, results and the
temporary arena; XLA's from ``compile().memory_analysis()``: arguments,
outputs and temporaries).  Writes ``spmd.md`` and ``spmd.json`` to ``--out``
(default ``benchmarks/results``).  Needs jax (the ``test`` extra installs it)
to write the programs; jax runs on its CPU backend with
``--xla_force_host_platform_device_count=4``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

import numpy as np

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
os.environ["JAX_PLATFORMS"] = "cpu,xlac"          # jax's CPU the default; xlac's devices beside
os.environ.setdefault("XLAC_NUM_DEVICES", "4")
os.environ.pop("XLAC_CACHE_DIR", None)

from benchmarks import harness  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
SIZES = {"full": {"batch": 256, "d": 512, "hidden": 2048}, "quick": {"batch": 16, "d": 32, "hidden": 64}}


def programs(jax, jnp, sizes: dict) -> dict:
    """name: (function, in_specs, out_specs or None, argument shapes)."""
    from jax.sharding import PartitionSpec as P
    b, d, h = sizes["batch"], sizes["d"], sizes["hidden"]

    def dp_step(w1, b1, w2, x, y):
        def loss(params):
            a, c, e = params
            return jnp.mean((jnp.tanh(x @ a + c) @ e - y) ** 2)
        lval, (g1, gb, g2) = jax.value_and_grad(loss)((w1, b1, w2))
        return w1 - 0.01 * g1, b1 - 0.01 * gb, w2 - 0.01 * g2, lval

    def megatron(x, w1, b1, w2):
        return jax.nn.gelu(x @ w1 + b1) @ w2

    return {
        "data-parallel": (dp_step, (P(), P(), P(), P("d", None), P("d", None)), None,
                          [(d, h), (h,), (h, d), (b, d), (b, d)]),
        "tensor-parallel": (megatron, (P(), P(None, "d"), P("d"), P("d", None)), P(),
                            [(b, d), (d, h), (h,), (h, d)]),
    }


def xla_collective_bytes(text: str) -> int:
    """Bytes one device receives per step in XLA's per-device program, counted
    as xlac counts its own (ring algorithms)."""
    sizes = {"f32": 4, "s32": 4, "pred": 1, "f64": 8, "u32": 4, "bf16": 2}
    total = 0
    for line in text.splitlines():
        m = re.search(r"= (.*?) (all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute)"
                      r"(?:-start)?\(", line)
        if not m:
            continue
        nbytes = sum(int(np.prod([int(v) for v in dims.split(",") if v] or [1])) * sizes.get(t, 4)
                     for t, dims in re.findall(r"(\w+)\[([\d,]*)\]", m.group(1)))
        g = re.search(r"replica_groups=\[(\d+),(\d+)\]", line)
        lists = re.search(r"replica_groups=\{\{([\d,]*)\}", line)
        size = int(g.group(2)) if g else (len(lists.group(1).split(",")) if lists else 1)
        mesh = re.search(r"replica_groups=mesh\[(.*?)\] \{(.*?)\}", line)
        if mesh:
            axes = {k: int(v) for k, v in re.findall(r"'(\w+)'=(\d+)", mesh.group(1))}
            size = int(np.prod([axes[a] for a in re.findall(r"'(\w+)'", mesh.group(2))]))
        op = m.group(2)
        if op == "all-gather":
            total += nbytes - nbytes // size
        elif op == "all-reduce":
            total += 2 * nbytes * (size - 1) // size
        elif op == "reduce-scatter":
            total += nbytes * (size - 1)
        elif op == "collective-permute":
            total += nbytes
        else:
            total += nbytes * (size - 1) // size
    return total


def xlac_figures(text: str) -> tuple[int, int, int]:
    """(bytes moved per device per step, per-device peak memory, the largest
    kernel scratch in it) of xlac's per-device program of ``text`` (what
    ``xlac dump`` reports)."""
    import xlac
    from xlac.codegen.compiler import lower
    from xlac.passes.spmd_partitioner import collective_bytes, partition_module
    module = xlac.parse_hlo(text)
    partition_module(module)
    moved = sum(b for _, _, b in collective_bytes(module))
    lowered = lower(module, native=True)      # as the device processes' JIT plans it
    entry = lowered.hlo.entry
    params = sum(s.byte_size() for p in entry.parameters for s in p.shape.leaves() if s.is_array)
    results = sum(s.byte_size() for s in entry.root.shape.leaves() if s.is_array)
    return moved, params + results + lowered.assignment.temp_size, lowered.assignment.largest_scratch()


def measure(quick: bool, devices: list[int]) -> list[dict]:
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, Mesh, NamedSharding

    import xlac
    rng = np.random.default_rng(0)
    rows = []
    for name, (fn, in_specs, out_spec, shapes) in programs(jax, jnp, SIZES["quick" if quick else "full"]).items():
        args = [rng.standard_normal(s).astype(np.float32) * 0.1 for s in shapes]
        for n in devices:
            mesh = Mesh(np.array(jax.devices()[:n]), ("d",), axis_types=(AxisType.Auto,))
            in_sh = tuple(NamedSharding(mesh, s) for s in in_specs)
            kwargs = {"in_shardings": in_sh}
            if out_spec is not None:
                kwargs["out_shardings"] = NamedSharding(mesh, out_spec)
            jf = jax.jit(fn, **kwargs)
            lowered = jf.lower(*args)
            text = lowered.as_text(dialect="hlo")
            compiled = lowered.compile()
            mem = compiled.memory_analysis()
            xla_peak = mem.argument_size_in_bytes + mem.output_size_in_bytes + mem.temp_size_in_bytes
            placed = [jax.device_put(a, s) for a, s in zip(args, in_sh)]
            want = jf(*placed)
            exe = xlac.jit(text)
            got = exe(*args)
            for g, w in zip(got if isinstance(got, tuple) else [got], want if isinstance(want, tuple) else [want]):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=2e-4)
            moved, peak, scratch = xlac_figures(text)
            # The same jax.jit on xlac's devices (the jax backend): arrays left placed there too.
            x_mesh = Mesh(np.array(jax.devices("xlac")[:n]), ("d",), axis_types=(AxisType.Auto,))
            x_in = tuple(NamedSharding(x_mesh, s) for s in in_specs)
            x_kwargs = {"in_shardings": x_in}
            if out_spec is not None:
                x_kwargs["out_shardings"] = NamedSharding(x_mesh, out_spec)
            xf = jax.jit(fn, **x_kwargs)
            x_placed = [jax.device_put(a, s) for a, s in zip(args, x_in)]
            for g, w in zip(jax.tree.leaves(xf(*x_placed)), jax.tree.leaves(want)):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=2e-4)
            timings = harness.time_interleaved({
                "xlac": lambda: exe(*args),
                "xlac_jax": lambda: jax.block_until_ready(xf(*x_placed)),
                "xla": lambda: jax.block_until_ready(jf(*placed)),
            }, repeat=3 if quick else 11, budget=3 if quick else 20)
            rows.append({"program": name, "devices": n,
                         "xlac_ms": timings["xlac"].median_s * 1e3, "xla_ms": timings["xla"].median_s * 1e3,
                         "xlac_jax_ms": timings["xlac_jax"].median_s * 1e3,
                         "xlac_bytes": moved, "xla_bytes": xla_collective_bytes(compiled.as_text()),
                         "xlac_peak": peak, "xlac_scratch": scratch, "xla_peak": int(xla_peak)})
            harness.log(f"{name} on {n}: {rows[-1]}")
    return rows


def _size(b: int) -> str:
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k:
            return f"{b / k:.1f} {unit}"
    return f"{b} B"


def report(res: dict) -> str:
    lines = ["# Automatic sharding: xlac's partitioned programs beside XLA's", "",
             f"{res['sizes']}; jax {res['jax']}, one run on {res['machine']}.", "",
             "Step time: median of warm calls (*xlac.jit*: global arrays in and out of its device "
             "processes, through shared memory; *jax on xlac*: the same `jax.jit` on xlac's devices "
             "(the jax backend), its arrays left placed there; "
             "XLA: jax's arrays left on its devices). Bytes: what the collectives move per device per step. "
             "Peak: per-device memory (parameters, results, temporaries); xlac's temporaries include "
             "its matrix products' packing buffers (*of which scratch*: the largest kernel scratch), XLA's "
             "memory analysis leaves Eigen's out.", "",
             "| program | devices | xlac.jit step (ms) | jax on xlac step (ms) | XLA step (ms) | xlac bytes moved "
             "| XLA bytes moved | xlac peak / device | of which scratch | XLA peak / device |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        jax_ms = f"{r['xlac_jax_ms']:.3f}" if "xlac_jax_ms" in r else "—"
        lines.append(f"| {r['program']} | {r['devices']} | {r['xlac_ms']:.3f} | {jax_ms} | {r['xla_ms']:.3f} | "
                     f"{_size(r['xlac_bytes'])} | {_size(r['xla_bytes'])} | {_size(r['xlac_peak'])} | "
                     f"{_size(r.get('xlac_scratch', 0))} | {_size(r['xla_peak'])} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.spmd", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small programs, few samples")
    p.add_argument("--devices", default="1,2,4", help="device counts (default 1,2,4)")
    p.add_argument("--out", default=str(OUT), help="directory for spmd.md and spmd.json")
    args = p.parse_args(argv)
    try:
        devices = [int(v) for v in args.devices.split(",")]
        if any(n not in (1, 2, 4) for n in devices):
            raise ValueError
    except ValueError:
        print(f"benchmarks.spmd: --devices {args.devices!r}: a list of 1, 2 and 4", file=sys.stderr)
        return 2
    try:
        import jax
    except ImportError:
        print("benchmarks.spmd: needs jax to write the programs (pip install 'xlac[test]')", file=sys.stderr)
        return 2
    res = {"sizes": SIZES["quick" if args.quick else "full"], "jax": jax.__version__,
           "machine": harness.machine().get("cpu", "this machine"), "rows": measure(args.quick, devices)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "spmd.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    (out / "spmd.md").write_text(report(res), encoding="utf-8")
    return 0


if __name__ == "__main__":
    from xlac.cli import utf8_stdout
    utf8_stdout()                  # reports are Markdown in UTF-8, whatever the locale
    sys.exit(main())
