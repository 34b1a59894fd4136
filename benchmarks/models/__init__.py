"""Compile time on real models: whole training and inference steps written
with flax, equinox and optax (``benchmarks/models/*.hlo``, written by
``gen/generate.py``), xlac against jax.

    python -m benchmarks.models [--only NAME,...] [--repeat N] [--rounds R] [--out DIR] [--quick]
                                [--jax-python PATH] [--no-jax] [--no-run]

Per program: xlac's compile time (``xlac.jit`` of the parsed module with the
in-memory cache emptied, ``xlac.clear_caches()``, and no disk cache; best of
``--repeat``, 3), jax's compile time (``jax.jit(f).lower(*args).compile()``, best
of 3 with ``jax.clear_caches()`` before each), measured one after the other,
``--rounds`` times (the best kept), their ratio, xlac's and jax's run
times (median of warm calls), and where xlac's compile time goes: parsing the
HLO text, the HLO passes (the three slowest named), emitting LLVM IR, LLVM's
optimisation, machine-code generation and loading.  Compile times are wall
seconds; the CPU seconds of the same compilations are recorded beside them
(``time.process_time``: less sensitive to other processes on a shared
machine).

jax's figures are measured live by re-running the generators: in this
process when jax, flax, optax and equinox import, else in ``--jax-python``'s
interpreter (``gen/generate.py --measure``), else the manifest's figures,
recorded when the programs were written, are used and marked "recorded".
xlac's results are checked against jax's outputs (the manifest's tolerances).
The GEMM library code xlac's dots call is built once per machine and then
loaded from its cache; what a compilation spent on it is reported apart.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DIR = Path(__file__).resolve().parent
GEN = DIR / "gen" / "generate.py"


def manifest() -> dict:
    return json.loads((DIR / "manifest.json").read_text(encoding="utf-8"))


def cases(only: list[str] | None = None) -> list[dict]:
    """The manifest's programs (all, or those named in ``only``, in its order)."""
    every = manifest()["cases"]
    if not only:
        return every
    known = {c["name"] for c in every}
    unknown = [n for n in only if n not in known]
    if unknown:
        raise ValueError(f"unknown program(s) {unknown}; known: {sorted(known)}")
    return [c for c in every if c["name"] in only]


def load_arrays(path: Path) -> list:
    with np.load(path) as data:
        return [data[f"arr_{k}"] for k in range(len(data.files))]


def flatten(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in flatten(v)]
    return [value]


def mismatches(case: dict, got: list, expected: list) -> list[str]:
    """What differs between xlac's outputs and jax's beyond the manifest's tolerances
    (an empty list when everything matches)."""
    if len(got) != len(expected):
        return [f"{len(got)} outputs, expected {len(expected)}"]
    out = []
    for k, (a, e) in enumerate(zip(got, expected)):
        spec, a = case["outputs"][k], np.asarray(a)
        if a.dtype != e.dtype or a.shape != e.shape:
            out.append(f"arr_{k}: {a.dtype}{list(a.shape)}, expected {e.dtype}{list(e.shape)}")
        elif np.issubdtype(e.dtype, np.inexact) and (spec["rtol"] or spec["atol"]):
            if not np.allclose(a, e, rtol=spec["rtol"], atol=spec["atol"], equal_nan=case.get("equal_nan", False)):
                out.append(f"arr_{k}: max |diff| {np.nanmax(np.abs(a.astype(np.float64) - e)):.3g} "
                           f"(rtol {spec['rtol']}, atol {spec['atol']})")
        elif not np.array_equal(a, e):
            out.append(f"arr_{k}: {int(np.sum(a != e))} of {a.size} elements differ")
    return out


# -- xlac -------------------------------------------------------------------------------

def _gemm_ms() -> float:
    """Milliseconds this process has spent building or loading GEMM library code."""
    try:
        from xlac.codegen import gemm_library
    except ImportError:
        return 0.0
    return sum(secs for _, secs in gemm_library.loaded_from.values()) * 1e3


def phases(parse_s: float, stats: dict) -> dict:
    """Seconds of each phase of one xlac compilation (``exe.compile_stats`` plus the
    parse timed here): parse, passes (the HLO passes), emit (LLVM IR: ``lower`` less
    the passes), optimize (LLVM's O3), codegen (machine code) — their shares of the
    back end's wall time when it ran in parts on several threads —, load; ``top_passes``:
    the three slowest passes."""
    passes = stats.get("passes_s") or {}
    spent = sum(passes.values())
    optimize, codegen = stats.get("optimize_s") or 0.0, stats.get("codegen_s") or 0.0
    # A module compiled in parts on several threads reports optimize and codegen
    # summed over the parts; their wall time together is ``backend``: shown as
    # the shares of it, so that the phases still add up to the wall time.
    backend = stats.get("backend_s")
    if backend and optimize + codegen > backend:
        optimize, codegen = (x * backend / (optimize + codegen) for x in (optimize, codegen))
    return {"parse": parse_s, "passes": spent, "emit": max(0.0, (stats.get("lower_s") or 0.0) - spent),
            "optimize": optimize, "codegen": codegen,
            "load": stats.get("load_s") or 0.0,
            "top_passes": sorted(passes.items(), key=lambda kv: -kv[1])[:3]}


PHASES = ("parse", "passes", "emit", "optimize", "codegen", "load", "other")


def compile_xlac(text: str, repeat: int) -> tuple[object, dict]:
    """(executable, figures) of the best of ``repeat`` compilations of ``text``, each with
    the in-memory cache emptied; figures: wall and CPU seconds, phases, GEMM library ms."""
    import xlac
    from xlac.runtime import disk_cache
    best, exe = None, None
    # No disk cache: a compilation it served would time a file read, not the compiler.
    saved = os.environ.pop(disk_cache.ENV, None)
    try:
        for _ in range(repeat):
            exe, got = _compile_once(xlac, text)
            if best is None or got["compile_s"] < best["compile_s"]:
                best = got
    finally:
        if saved is not None:
            os.environ[disk_cache.ENV] = saved
    return exe, best


def _compile_once(xlac, text: str) -> tuple[object, dict]:
    """One timed compilation of ``text``, the in-memory cache emptied first."""
    xlac.clear_caches()
    gemm0 = _gemm_ms()
    c0, t0 = time.process_time(), time.perf_counter()
    module = xlac.parse_hlo(text)
    t1 = time.perf_counter()
    exe = xlac.jit(module)
    t2, c2 = time.perf_counter(), time.process_time()
    got = {"compile_s": t2 - t0, "compile_cpu_s": c2 - c0, "gemm_library_ms": _gemm_ms() - gemm0,
           "phases": phases(t1 - t0, exe.compile_stats)}
    # The driver's own work around the phases: printing the module for its cache key, ...
    got["phases"]["other"] = max(0.0, got["compile_s"] - sum(got["phases"][p] for p in PHASES[:-1]))
    return exe, got


def run_time_s(fn, repeat: int) -> float:
    from ..harness import time_interleaved
    timing = time_interleaved({"f": fn}, repeat=repeat, budget=10.0)["f"]
    if isinstance(timing, Exception):
        raise timing
    return timing.median_s


# -- jax ----------------------------------------------------------------------------------

def _generator():
    """The generator module when jax, flax, optax and equinox import here, else None."""
    try:
        import equinox  # noqa: F401
        import flax  # noqa: F401
        import jax  # noqa: F401
        import optax  # noqa: F401
    except Exception:  # noqa: BLE001 - absent or broken: the figures come from elsewhere
        return None
    sys.path.insert(0, str(GEN.parent))
    try:
        import generate
    finally:
        sys.path.remove(str(GEN.parent))
    return generate


def jax_figures(names: list[str], jax_python: str | None, use_jax: bool) -> tuple[dict, str]:
    """({name: {"compile_s", "run_s", ...}}, source) with source "live" (measured now,
    in this process or in ``jax_python``) or "recorded" (the manifest's figures)."""
    if use_jax:
        gen = _generator()
        if gen is not None:
            out = {}
            for name in names:
                fn, args = gen.PROGRAMS[name]()
                out[name] = gen.jax_times(fn, args)
            return out, "live"
        if jax_python:
            proc = subprocess.run([jax_python, str(GEN), "--measure", "--only", ",".join(names)],
                                  capture_output=True, encoding="utf-8", timeout=3600)
            if proc.returncode != 0:
                raise RuntimeError(f"{jax_python} {GEN.name} --measure failed:\n{proc.stderr[-2000:]}")
            return json.loads(proc.stdout)["programs"], "live"
    return {c["name"]: c["jax"] for c in manifest()["cases"] if c["name"] in names}, "recorded"


# -- the run ------------------------------------------------------------------------------

def run(names: list[str] | None = None, *, repeat: int = 3, rounds: int = 1, run_repeat: int = 15,
        jax_python: str | None = None, use_jax: bool = True, run_times: bool = True, progress=None) -> dict:
    """The figures of every program named (all by default), smallest first;
    ``progress(res)`` is called after each program with the results so far.

    Per program, ``rounds`` times: jax's figures (best of its 3 compilations),
    then xlac's (best of ``repeat``); the best round of each is kept.  The
    two are measured next to each other, not all of jax's first: a shared
    machine's speed drifts over minutes (by 2x on this one)."""
    from ..harness import log, machine, versions
    selected = sorted(cases(names), key=lambda c: c["instructions"])
    res = {"machine": machine(), "versions": versions(), "repeat": repeat, "rounds": rounds, "jax_source": None,
           "jax_versions": manifest().get("versions"), "rows": []}
    res["machine"]["load_average"] = _loadavg()
    res["date"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    for case in selected:
        name = case["name"]
        log(f"{name}: {case['instructions']} instructions, {case['computations']} computations")
        text = (DIR / f"{name}.hlo").read_text(encoding="utf-8")
        jax, exe, figures = {}, None, None
        for _ in range(rounds):
            got, res["jax_source"] = jax_figures([name], jax_python, use_jax)
            if not jax or got[name]["compile_s"] < jax[name]["compile_s"]:
                jax = got
            exe_now, now = compile_xlac(text, repeat)
            if figures is None or now["compile_s"] < figures["compile_s"]:
                exe, figures = exe_now, now
        inputs = load_arrays(DIR / f"{name}.npz")
        expected = load_arrays(DIR / f"{name}.expected.npz")
        problems = mismatches(case, flatten(exe(*inputs)), expected)
        row = {"name": name, "instructions": case["instructions"], "computations": case["computations"],
               "xlac": figures, "jax": jax.get(name), "check": problems}
        if run_times:
            row["xlac"]["run_s"] = run_time_s(lambda: exe(*inputs), run_repeat)
        res["rows"].append(row)
        res["machine"]["load_average_end"] = _loadavg()
        log(f"  xlac compile {figures['compile_s']:.2f} s ({figures['compile_cpu_s']:.2f} CPU s), "
            f"jax {row['jax']['compile_s']:.2f} s" + (f"; MISMATCH {problems}" if problems else ""))
        if progress is not None:
            progress(res)
    return res


def _loadavg() -> list | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _ratios(rows: list, key: str = "compile_s") -> list:
    return [r["xlac"][key] / r["jax"][key] for r in rows if r.get("jax") and r["jax"].get(key)]


def geomean(values: list) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _s(x) -> str:
    return "—" if x is None else (f"{x:.2f}" if x >= 0.995 else f"{x:.3f}")


def _x(a, b) -> str:
    return f"{a / b:.1f}x" if a and b else "—"


def _ms(x) -> str:
    return "—" if x is None else (f"{x * 1e3:.1f}" if x >= 0.1 else f"{x * 1e3:.3f}")


def compile_table(res: dict) -> str:
    recorded = " (recorded)" if res["jax_source"] == "recorded" else ""
    lines = ["| program | instructions | computations | xlac compile s | jax compile s" + recorded
             + " | xlac / jax | xlac CPU s | jax CPU s | xlac / jax (CPU) | xlac run ms | jax run ms" + recorded
             + " | check |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        x, j = r["xlac"], r.get("jax") or {}
        lines.append(f"| {r['name']} | {r['instructions']} | {r['computations']} | {_s(x['compile_s'])} | "
                     f"{_s(j.get('compile_s'))} | {_x(x['compile_s'], j.get('compile_s'))} | "
                     f"{_s(x['compile_cpu_s'])} | {_s(j.get('compile_cpu_s'))} | "
                     f"{_x(x['compile_cpu_s'], j.get('compile_cpu_s'))} | {_ms(x.get('run_s'))} | {_ms(j.get('run_s'))} | "
                     f"{'ok' if not r['check'] else 'MISMATCH: ' + '; '.join(r['check'])} |")
    ratios = _ratios(res["rows"])
    if ratios:
        worst = max(res["rows"], key=lambda r: r["xlac"]["compile_s"] / r["jax"]["compile_s"] if r.get("jax") else 0)
        lines += ["", f"Compile time, xlac / jax: geometric mean **{geomean(ratios):.2f}x**, worst "
                  f"**{max(ratios):.1f}x** ({worst['name']}), over {len(ratios)} programs."]
        cpu = [r["xlac"]["compile_cpu_s"] / r["jax"]["compile_cpu_s"] for r in res["rows"]
               if r.get("jax") and r["jax"].get("compile_cpu_s")]
        if cpu:
            lines.append(f"In CPU seconds: geometric mean {geomean(cpu):.2f}x, worst {max(cpu):.1f}x.")
    return "\n".join(lines)




def phase_table(res: dict) -> str:
    lines = ["| program | xlac compile s | " + " | ".join(f"{p} s" for p in PHASES)
             + " | slowest passes (s) | GEMM library ms |",
             "|---|---|" + "---|" * len(PHASES) + "---|---|"]
    for r in sorted(res["rows"], key=lambda r: -r["xlac"]["compile_s"]):
        x, ph = r["xlac"], r["xlac"]["phases"]
        total = x["compile_s"]
        cells = " | ".join(f"{_s(ph[p])} ({100 * ph[p] / total:.0f}%)" for p in PHASES)
        top = ", ".join(f"{n} {s:.2f}" for n, s in ph["top_passes"])
        lines.append(f"| {r['name']} | {_s(total)} | {cells} | {top} | {x['gemm_library_ms']:.0f} |")
    return "\n".join(lines)


def markdown(res: dict) -> str:
    m, v = res["machine"], res.get("jax_versions") or {}
    load = f"{m.get('load_average')} at the start, {m.get('load_average_end')} at the end"
    jax_how = res.get("jax_note") or ("measured in this run" if res["jax_source"] == "live" else
                                      "recorded in manifest.json by gen/generate.py, not in this run")
    return "\n".join([
        f"Compile time on real models ({res.get('date', 'date not recorded')}; {m['cpu']}, {m['cores']} cores; "
        f"xlac {m['xlac_commit']}; "
        f"jax {v.get('jax')}, flax {v.get('flax')}, optax {v.get('optax')}, equinox {v.get('equinox')})", "",
        f"xlac: `xlac.jit` of the parsed HLO text with `xlac.clear_caches()` first and no disk cache, best of "
        f"{res['repeat']}; jax: `jax.jit(f).lower(*args).compile()`, best of 3 ({jax_how}); per program "
        f"{res.get('rounds', 1)} round(s) of jax's then xlac's compilations, the best of each kept. Wall seconds, and "
        "the CPU seconds of the same compilations (all threads; on a loaded machine the wall time grows with "
        "the load, the CPU time much less). Run times are medians of warm calls. A shared machine: figures move "
        "by 20% or more between runs.", "",
        compile_table(res), "", "Where xlac's compile time goes (wall seconds, share of the compile):", "",
        phase_table(res), "", f"Load average (1, 5, 15 minutes): {load}."]) + "\n"


def main(argv=None) -> int:
    import argparse
    p = argparse.ArgumentParser(prog="python -m benchmarks.models", description=__doc__.split("\n\n")[0])
    p.add_argument("--only", help="comma-separated program names (default: all in manifest.json)")
    p.add_argument("--repeat", type=int, default=3,
                   help="xlac compilations per program and round, best taken (default 3, as jax's)")
    p.add_argument("--rounds", type=int, default=1,
                   help="rounds of jax's then xlac's compilations per program, best taken (default 1)")
    p.add_argument("--run-repeat", type=int, default=15, help="timed samples of xlac's run time (default 15)")
    p.add_argument("--quick", action="store_true", help="the smallest program only, no run times (a smoke test)")
    p.add_argument("--jax-python", help="a Python with jax, flax, optax, equinox to measure jax live "
                   "(when they do not import here)")
    p.add_argument("--no-jax", action="store_true", help="use the manifest's recorded jax figures")
    p.add_argument("--no-run", action="store_true", help="skip the run times")
    p.add_argument("--out", help="directory for models.md and models.json")
    args = p.parse_args(argv)
    if args.repeat < 1 or args.run_repeat < 1 or args.rounds < 1:
        p.error("--repeat, --rounds and --run-repeat must be at least 1")
    names = args.only.split(",") if args.only else None
    if args.quick:
        names = [min(cases(), key=lambda c: c["instructions"])["name"]]
    try:
        cases(names)
    except ValueError as e:
        p.error(str(e))

    def save(res):      # after every program: a long run interrupted keeps what it measured
        os.makedirs(args.out, exist_ok=True)
        Path(args.out, "models.md").write_text(markdown(res), encoding="utf-8")
        Path(args.out, "models.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    res = run(names, repeat=args.repeat, rounds=args.rounds, run_repeat=args.run_repeat, jax_python=args.jax_python,
              use_jax=not args.no_jax, run_times=not (args.no_run or args.quick), progress=save if args.out else None)
    print(markdown(res))
    return 0 if all(not r["check"] for r in res["rows"]) else 1
