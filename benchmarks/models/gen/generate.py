"""Writes ``benchmarks/models/``: whole training and inference steps of real model
code (flax, equinox, optax), as the HLO ``jax.jit`` emits, their inputs and
jax's outputs, in the corpus format of ``tests/hlo_corpus`` (``NAME.hlo``,
``NAME.npz`` with ``arr_0..``, ``NAME.expected.npz``, ``manifest.json``), plus
jax's compile time (``jax.jit(f).lower(*args).compile()``, best of 3, caches
cleared before each) and run time on this machine.

jax, flax, optax and equinox are not dependencies of xlac: run this in a scratch
environment that has them,

    python3.11 -m venv /tmp/modelsvenv
    /tmp/modelsvenv/bin/pip install jax==0.10.2 flax optax equinox numpy
    /tmp/modelsvenv/bin/python benchmarks/models/gen/generate.py [--only NAME,...]

and commit the files it writes (``backend_check.py`` beside it runs the same
programs by ``jax.jit`` on xlac's PJRT plugin and on jax's CPU, and compares
them; docs/jax_backend.md).  ``--measure`` writes nothing: it prints jax's
compile and run times of the programs as JSON on stdout (what
``python -m benchmarks.models --jax-python ...`` reads).  As for the shared
corpus, XLA runs with ``--xla_allow_excess_precision=false`` and programs are
lowered with ``keep_unused=True``.
"""
import argparse
import datetime
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_allow_excess_precision=false")
import jax  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import eqx_models  # noqa: E402
import lm  # noqa: E402
import optimizers  # noqa: E402
import sequence  # noqa: E402
import vision  # noqa: E402

OUT = Path(__file__).resolve().parent.parent
#: {name: builder}; a builder returns (function, args), args a tuple of pytrees of arrays.
PROGRAMS = {**lm.PROGRAMS, **vision.PROGRAMS, **sequence.PROGRAMS, **optimizers.PROGRAMS, **eqx_models.PROGRAMS}
#: (rtol, atol) of floating outputs, by dtype (a builder's ``tolerance`` attribute overrides).
TOLERANCE = {"float64": (1e-9, 1e-12), "float32": (1e-4, 1e-5), "bfloat16": (8e-3, 1e-3), "float16": (8e-3, 1e-3)}
COMPILE_SAMPLES = 3


def _opcode(line: str):
    """The opcode of an HLO instruction line (after the shape, which may be a tuple), or None."""
    rest = line.split(" = ", 1)[1]
    if rest.startswith("("):
        depth = 0
        for k, ch in enumerate(rest):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                rest = rest[k + 1:]
                break
    else:
        rest = rest.split(" ", 1)[1] if " " in rest else ""
    m = re.match(r"\s*([a-z][a-z0-9-]*)\(", rest)
    return m.group(1) if m else None


def counts(text: str) -> tuple[int, int, list]:
    """(instructions, computations, opcodes) of HLO text."""
    instructions = [line for line in text.splitlines() if " = " in line and not line.startswith("HloModule")]
    computations = [line for line in text.splitlines()
                    if line.rstrip().endswith("{") and " = " not in line and not line.startswith("HloModule")]
    opcodes = sorted({_opcode(line) for line in instructions} - {None})
    return len(instructions), len(computations), opcodes


def _block(tree):
    return jax.block_until_ready(tree)


def jax_times(fn, args, repeat: int = 20) -> dict:
    """jax's lowering and compile time (best of COMPILE_SAMPLES, caches cleared before
    each; ``compile_cpu_s`` the CPU seconds of the best, all threads) and run time (median
    of ``repeat`` samples of warm calls on device arrays)."""
    lower, compile_, cpu = [], [], []
    for _ in range(COMPILE_SAMPLES):
        jax.clear_caches()
        t0 = time.perf_counter()
        lowered = jax.jit(fn, keep_unused=True).lower(*args)
        c1, t1 = time.process_time(), time.perf_counter()
        compiled = lowered.compile()
        t2, c2 = time.perf_counter(), time.process_time()
        lower.append(t1 - t0)
        compile_.append(t2 - t1)
        cpu.append(c2 - c1)
    dev = jax.device_put(args)
    _block(compiled(*dev))
    t0 = time.perf_counter()
    _block(compiled(*dev))
    one = time.perf_counter() - t0
    inner = max(1, int(1e-3 / max(one, 1e-7)))      # a sample lasts at least ~1 ms
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            _block(compiled(*dev))
        samples.append((time.perf_counter() - t0) / inner)
    best = compile_.index(min(compile_))
    return {"compile_s": compile_[best], "compile_cpu_s": cpu[best], "lower_s": min(lower),
            "run_s": float(np.median(samples)),
            "compile_samples": COMPILE_SAMPLES, "run_samples": repeat}


#: Updated parameters whose gradient is zero up to rounding, by program: the
#: attention key biases (softmax ignores a shift shared by all of a query's
#: logits).  Adam divides that noise by its own size, a step of up to lr in a
#: direction rounding picks, so two correct compilers differ by up to twice
#: the step.  (Parameters come first among both the inputs and the outputs.)
NOISE_OUTPUTS = {"vit_train": [0, 16, 32, 48], "gpt_train_adamw": [8, 24, 40, 56, 72, 88],
                 "gpt_scan_remat_train": [11]}
NOISE_NOTE = ("attention key bias: its gradient is zero up to rounding (softmax ignores a shift shared by all of a "
              "query's logits) and Adam turns that noise into steps of up to lr; atol: twice the largest such "
              "step jax took")


def _noise_tolerance(name: str, ins: list, outs: list, outputs: list) -> None:
    noisy = NOISE_OUTPUTS.get(name, [])
    if not noisy:
        return
    step = max(float(np.abs(outs[k].astype(np.float64) - ins[k]).max()) for k in noisy)
    for k in noisy:
        outputs[k].update(atol=float(f"{2 * step:.3g}"), note=NOISE_NOTE)


def write_case(name: str, builder) -> dict:
    fn, args = builder()
    text = jax.jit(fn, keep_unused=True).lower(*args).as_text(dialect="hlo")
    ins = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(args)]
    outs = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(jax.jit(fn, keep_unused=True)(*args))]
    (OUT / f"{name}.hlo").write_text(text, encoding="utf-8")
    np.savez_compressed(OUT / f"{name}.npz", *ins)
    np.savez_compressed(OUT / f"{name}.expected.npz", *outs)
    outputs = []
    for k, o in enumerate(outs):
        rtol, atol = getattr(builder, "tolerance", None) or TOLERANCE.get(str(o.dtype), (0.0, 0.0))
        if not np.issubdtype(o.dtype, np.inexact):
            rtol = atol = 0.0
        outputs.append({"name": f"arr_{k}", "dtype": str(o.dtype), "shape": list(o.shape), "rtol": rtol, "atol": atol})
    _noise_tolerance(name, ins, outs, outputs)
    instructions, computations, opcodes = counts(text)
    case = {"name": name, "description": (builder.__doc__ or "").strip(), "instructions": instructions,
            "computations": computations, "opcodes": opcodes, "x64": False,
            "equal_nan": bool(any(np.issubdtype(o.dtype, np.inexact) and np.isnan(o).any() for o in outs)),
            "inputs": [{"name": f"arr_{k}", "dtype": str(a.dtype), "shape": list(a.shape)} for k, a in enumerate(ins)],
            "outputs": outputs, "jax": jax_times(fn, args)}
    print(f"{name}: {instructions} instructions, {computations} computations, "
          f"jax compile {case['jax']['compile_s']:.3f} s, run {case['jax']['run_s'] * 1e3:.3f} ms", file=sys.stderr)
    return case


def _versions() -> dict:
    out = {"python": platform.python_version()}
    for mod in ("jax", "jaxlib", "flax", "optax", "equinox", "numpy"):
        try:
            out[mod] = __import__(mod).__version__
        except ImportError:
            out[mod] = None
    return out


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            return next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.machine()


def _selected(only: str | None) -> dict:
    if not only:
        return PROGRAMS
    names = only.split(",")
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        raise SystemExit(f"unknown program(s) {unknown}; known: {sorted(PROGRAMS)}")
    return {n: PROGRAMS[n] for n in names}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", help="comma-separated program names (default: all)")
    p.add_argument("--measure", action="store_true", help="print jax's compile/run times as JSON, write nothing")
    p.add_argument("--remeasure", action="store_true",
                   help="measure jax's compile/run times again into manifest.json, keeping the data files")
    args = p.parse_args(argv)
    selected = _selected(args.only)
    if args.measure:
        out = {}
        for name, builder in selected.items():
            fn, fargs = builder()
            out[name] = jax_times(fn, fargs)
            print(f"{name}: jax compile {out[name]['compile_s']:.3f} s ({out[name]['compile_cpu_s']:.3f} CPU s), "
                  f"run {out[name]['run_s'] * 1e3:.3f} ms", file=sys.stderr)
        print(json.dumps({"versions": _versions(), "cpu": _cpu(), "programs": out}))
        return 0
    path = OUT / "manifest.json"
    old = {c["name"]: c for c in json.loads(path.read_text(encoding="utf-8"))["cases"]} if path.exists() and (
        args.only or args.remeasure) else {}
    for name, builder in selected.items():
        if args.remeasure:
            old[name]["jax"] = jax_times(*builder())
            print(f"{name}: jax compile {old[name]['jax']['compile_s']:.3f} s", file=sys.stderr)
        else:
            old[name] = write_case(name, builder)
    cases = [old[n] for n in PROGRAMS if n in old]
    path.write_text(json.dumps(
        {"format": "xlac-hlo-corpus/1", "set": "xlac models (issue 17)",
         "generator": f"jax {jax.__version__}, XLA:CPU, XLA_FLAGS={os.environ['XLA_FLAGS']}",
         "versions": _versions(), "cpu": _cpu(), "cores": os.cpu_count(),
         "written": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
         "jax_times": "compile_s: lowered.compile(), best of 3 with jax.clear_caches() before each; lower_s: "
                      "tracing + lowering, best of 3; run_s: median of 20 samples of warm calls on device arrays "
                      "(shared 2-core machine: +-20%)",
         "num_cases": len(cases), "cases": cases}, indent=1), encoding="utf-8")
    print(f"{len(cases)} programs in {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
