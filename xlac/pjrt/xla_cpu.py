"""XLA:CPU's times on a module, for ``xlac bench MODULE`` to print beside xlac's.

    python -m xlac.pjrt.xla_cpu MODULE [--inputs IN.npz | --seed S] [--repeat N]

Run in a process of its own (xlac's core never imports jax): the module (HLO
text, or StableHLO as jax writes it) is compiled by jax's CPU client as jax
compiles a program (``compile_and_load`` of its StableHLO), run on the inputs
(``--inputs``, else xlac's random arrays of the parameters' shapes with
``--seed``), and timed as ``xlac.bench`` times xlac: one warm-up call, then
``--repeat`` samples of enough calls to last a millisecond, each call waiting
for its results.  Prints one JSON line: ``compile_s``, ``median_s``, ``jax``
(its version).  Errors go to stderr, exit status 1.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time


def _mlir(text: str):
    """The module as what jax hands a client: StableHLO (HLO text converted)."""
    if not text.lstrip().startswith("HloModule"):
        return text
    from .program import hlo_to_stablehlo
    return hlo_to_stablehlo(text)


def measure(text: str, inputs: list, repeat: int, min_sample_s: float = 1e-3) -> dict:
    """XLA:CPU's compile time and median time per call of ``text`` on ``inputs``."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    from jax._src import xla_bridge
    from jax._src.lib import xla_client
    client = xla_bridge.get_backend("cpu")
    device = client.local_devices()[0]
    mlir = _mlir(text)
    t0 = time.perf_counter()
    exe = client.compile_and_load(mlir, xla_client.DeviceList((device,)), xla_client.CompileOptions())
    compile_s = time.perf_counter() - t0
    args = [jax.device_put(a, device) for a in inputs]

    def call():
        for out in exe.execute_sharded(args).disassemble_into_single_device_arrays():
            out[0].block_until_ready()
    call()
    t0 = time.perf_counter()
    call()
    inner = max(1, min(10_000, int(min_sample_s / max(time.perf_counter() - t0, 1e-9))))
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            call()
        samples.append((time.perf_counter() - t0) / inner)
    return {"compile_s": compile_s, "median_s": statistics.median(samples), "jax": jax.__version__}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m xlac.pjrt.xla_cpu")
    p.add_argument("module")
    p.add_argument("--inputs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=15)
    args = p.parse_args(argv)
    try:
        from .. import bench
        text = open(args.module, encoding="utf-8").read()
        import xlac
        module = xlac.parse_stablehlo(text) if not text.lstrip().startswith("HloModule") else xlac.parse_hlo(text)
        if args.inputs:
            inputs = bench.load_inputs(args.inputs, module)
        else:
            inputs = bench.random_inputs(module, args.seed)
        print(json.dumps(measure(text, inputs, args.repeat)))
        return 0
    except Exception as e:  # noqa: BLE001 - one line for the caller
        print(f"XLA:CPU: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
