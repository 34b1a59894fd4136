"""Runs the real programs of ``generate.py`` with ``jax.jit`` on jax's CPU and on
xlac's PJRT plugin in one process (``JAX_PLATFORMS=cpu,xlac``) and compares
their outputs; writes nothing.

    /tmp/modelsvenv/bin/python benchmarks/models/gen/backend_check.py [--only NAME,...] [--steps N] [--json]

(the scratch environment of ``generate.py`` with xlac installed in it,
``pip install -e . --no-deps``, so that jax finds the plugin through its entry
point).  Per program:

- ``one step``: the generator's function and arguments, the arguments put on
  ``jax.devices("cpu")[0]`` and on ``jax.devices("xlac")[0]``,
  ``jax.jit(f, keep_unused=True)`` compiled and run on each; every output leaf
  compared with the manifest's tolerances (``benchmarks.models.mismatches``,
  jax's CPU as the expected side); compile and run times on each backend.
- ``loop``: ``--steps`` steps of ``jax.jit(f, donate_argnums=...)`` on the
  xlac device, the arguments a step returns again in the same place (a
  training state: parameters, optimizer state, batch statistics) fed back as
  the next step's arguments and donated; each step checked against jax's CPU
  run from a copy of the same state.  This exercises buffers that stay on the
  device, outputs becoming arguments, and donation.

Each program reports ok, mismatch (the first difference) or error (the
exception's first line).  The exit status is 0 when every program is ok.
"""
import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu,xlac")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402  (sets XLA_FLAGS as the generator does, imports jax)

jax = generate.jax
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from benchmarks.models import cases as manifest_cases, mismatches  # noqa: E402

RUN_SAMPLES = 5


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def _leaves(tree) -> list:
    return jax.tree_util.tree_leaves(tree)


def _run_time(compiled, args) -> float:
    """Median seconds of RUN_SAMPLES warm calls (each waited for)."""
    samples = []
    for _ in range(RUN_SAMPLES):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def one_step(fn, args, device) -> tuple[list, dict]:
    """(output leaves as numpy, times) of ``fn`` compiled and run on ``device``."""
    on_device = jax.device_put(args, device)
    t0 = time.perf_counter()
    compiled = jax.jit(fn, keep_unused=True).lower(*on_device).compile()
    t1 = time.perf_counter()
    out = jax.block_until_ready(compiled(*on_device))
    wrong = [leaf.devices() for leaf in _leaves(out) if leaf.devices() != {device}]
    if wrong:
        raise AssertionError(f"an output is on {wrong[0]}, not on {device}")
    return [generate.np.asarray(leaf) for leaf in _leaves(out)], {
        "compile_s": t1 - t0, "run_s": _run_time(compiled, on_device)}


def _signature(tree):
    return jax.tree_util.tree_structure(tree), [(leaf.shape, str(leaf.dtype)) for leaf in _leaves(tree)]


def fed_back(args, out) -> list[int]:
    """The argument positions a step's result gives back in the same place, with the
    same structure, shapes and dtypes: the state a training loop feeds to the next step."""
    if not isinstance(out, (tuple, list)):
        return []
    return [k for k in range(min(len(args), len(out))) if _signature(args[k]) == _signature(out[k])]


def _deleted(state: list, positions: list) -> list[bool]:
    return [leaf.is_deleted() for k in positions for leaf in _leaves(state[k])]


def loop(case: dict, fn, args, steps: int) -> dict:
    """``steps`` steps on the xlac device, the state fed back and donated; each
    checked against jax's CPU from a copy of the same state, donating it too."""
    xd, cd = jax.devices("xlac")[0], jax.devices("cpu")[0]
    fed = fed_back(args, jax.eval_shape(fn, *args))
    # Plain jax.jit, as a training loop writes it (unused arguments dropped, unlike one_step's:
    # jax deletes no donated argument the program does not use, on either backend).
    on_xlac = jax.jit(fn, donate_argnums=tuple(fed))
    on_cpu = jax.jit(fn, donate_argnums=tuple(fed))
    state = list(jax.device_put(args, xd))
    for step in range(steps):
        here = list(jax.block_until_ready(jax.device_put(state, cd)))   # copied before the call donates it
        out = on_xlac(*state)
        expected = on_cpu(*here)
        if _deleted(state, fed) != _deleted(here, fed):
            return {"status": "mismatch", "detail": f"step {step}: donated arguments deleted on xlac "
                                                    f"{_deleted(state, fed)}, on jax's CPU {_deleted(here, fed)}"}
        problems = mismatches(case, [generate.np.asarray(x) for x in _leaves(out)],
                              [generate.np.asarray(x) for x in _leaves(expected)])
        if problems:
            return {"status": "mismatch", "detail": f"step {step}: {problems[0]}"}
        for k in fed:
            state[k] = out[k]
    return {"status": "ok", "fed_back": fed, "steps": steps}


def check(name: str, builder, case: dict, steps: int) -> dict:
    fn, args = builder()
    res = {"name": name}
    try:
        expected, res["cpu"] = one_step(fn, args, jax.devices("cpu")[0])
    except Exception as e:  # noqa: BLE001 - reported per program
        return {**res, "status": "error", "detail": "on jax's CPU: " + _first_line(e)}
    try:
        got, res["xlac"] = one_step(fn, args, jax.devices("xlac")[0])
    except Exception as e:  # noqa: BLE001
        return {**res, "status": "error", "detail": _first_line(e)}
    problems = mismatches(case, got, expected)
    if problems:
        return {**res, "status": "mismatch", "detail": problems[0]}
    try:
        res["loop"] = loop(case, fn, args, steps)
    except Exception as e:  # noqa: BLE001
        res["loop"] = {"status": "error", "detail": _first_line(e)}
    if res["loop"]["status"] != "ok":
        return {**res, "status": res["loop"]["status"], "detail": "loop: " + res["loop"]["detail"]}
    return {**res, "status": "ok", "detail": ""}


def _row(r: dict) -> str:
    def t(side, key, scale=1.0, fmt="{:.2f}"):
        return fmt.format(r[side][key] * scale) if side in r else "—"
    return (f"| {r['name']} | {r['status']}{': ' + r['detail'] if r['detail'] else ''} | "
            f"{t('cpu', 'compile_s')} | {t('xlac', 'compile_s')} | {t('cpu', 'run_s', 1e3, '{:.3f}')} | "
            f"{t('xlac', 'run_s', 1e3, '{:.3f}')} | {', '.join(map(str, r.get('loop', {}).get('fed_back', []))) or '—'} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", help="comma-separated program names (default: all)")
    p.add_argument("--steps", type=int, default=3, help="steps of the loop on the xlac device (default 3)")
    p.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = p.parse_args(argv)
    if args.steps < 1:
        p.error("--steps must be at least 1")
    selected = generate._selected(args.only)
    by_name = {c["name"]: c for c in manifest_cases()}
    print("| program | result | cpu compile s | xlac compile s | cpu run ms | xlac run ms | fed back |")
    print("|---|---|---|---|---|---|---|", flush=True)
    for device in (jax.devices("cpu")[0], jax.devices("xlac")[0]):    # each backend's first-compile set-up, untimed
        jax.block_until_ready(jax.jit(lambda x: x + 1)(jax.device_put(1.0, device)))
    results = []
    for name, builder in selected.items():
        results.append(check(name, builder, by_name[name], args.steps))
        print(_row(results[-1]), flush=True)
    if args.json:
        print(json.dumps(results, indent=1))
    ok = sum(r["status"] == "ok" for r in results)
    print(f"\n{ok} of {len(results)} programs ok", flush=True)
    return 0 if ok == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
