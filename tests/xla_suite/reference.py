"""Record XLA:CPU's results for the suite's cases (run with a Python that has jax and jaxlib).

    /path/to/jax-venv/bin/python -m tests.xla_suite.reference --xla PATH --out RESULTS.npz

Each case is parsed by XLA's own parser, converted to StableHLO (as jax hands programs to
PJRT) and compiled and run on jax's CPU client on ``inputs.argument`` values.  RESULTS holds,
per case key, what happened (``ok``, or why XLA:CPU did not run it) and, for ``ok``, the
flattened outputs.  jax is needed here only, never by xlac.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from tests.xla_suite import extract, inputs, store

def run_on_xla_cpu(text: str):
    """("ok", [outputs]) or (status, message) for one module's text."""
    import jax
    from jax._src import xla_bridge
    from jax._src.lib import _jax, xla_client
    from jaxlib import _hlo
    try:
        module = _hlo.hlo_module_from_text(text)
    except Exception as e:                 # noqa: BLE001
        return ("xla-refuses-text", str(e).splitlines()[0][:300])
    computation = _hlo.XlaComputation(module.as_serialized_hlo_module_proto())
    shape = computation.program_shape()
    params = shape.parameter_shapes()
    if any(p.is_tuple() or p.is_token() for p in params):
        return ("tuple-parameter", "an entry parameter is a tuple or a token (PJRT takes arrays)")
    try:
        mlir = _jax.mlir.xla_computation_to_mlir_module(computation)
        client = xla_bridge.get_backend("cpu")
        device = client.local_devices()[0]
        exe = client.compile_and_load(mlir, xla_client.DeviceList((device,)), xla_client.CompileOptions())
    except Exception as e:                 # noqa: BLE001
        return ("xla-refuses-module", str(e).splitlines()[0][:300])
    args = [inputs.argument(p.numpy_dtype(), p.dimensions(), i) for i, p in enumerate(params)]
    try:
        out = exe.execute_sharded([jax.device_put(a, device) for a in args])
        results = [np.asarray(r[0]) for r in out.disassemble_into_single_device_arrays()]
    except Exception as e:                 # noqa: BLE001
        return ("xla-fails-at-run", str(e).splitlines()[0][:300])
    return ("ok", results)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--xla", required=True, help="a checkout of openxla/xla")
    p.add_argument("--out", required=True, help="the results file to write (.npz)")
    p.add_argument("--timeout", type=float, default=120, help="seconds per case (default 120)")
    p.add_argument("-k", default="", help="only cases whose file name contains this")
    args = p.parse_args(argv)
    from tests.xla_suite.worker import Worker
    worker = Worker(run_on_xla_cpu)
    results = {}
    todo = [c for c in extract.cases(args.xla) if args.k in c.source]
    t0 = time.perf_counter()
    for i, case in enumerate(todo):
        results[case.key] = ("multi-device", "runs on several devices") if case.multi_device \
            else worker.call(case.text, args.timeout)
        if (i + 1) % 50 == 0:
            print(f"{i + 1}/{len(todo)} cases, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    worker.close()
    store.save(args.out, results)
    counts = {}
    for status, _ in results.values():
        counts[status] = counts.get(status, 0) + 1
    print(json.dumps(counts, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
