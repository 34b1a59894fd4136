"""The results of a run as Markdown (tables, machine, limits) and as a PNG bar chart.

``markdown(res)`` is the whole report; ``summary(res)`` the part the README
shows (between ``<!-- benchmarks:begin -->`` and ``<!-- benchmarks:end -->``,
replaced by ``update_readme``); ``bar_chart(res, path)`` needs matplotlib and
returns False without it.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

BEGIN, END = "<!-- benchmarks:begin -->", "<!-- benchmarks:end -->"

COLUMNS = [("xlac_hlo", "xlac (HLO)"), ("xlac_builder", "xlac (builder)"),
           ("xlac_hlo_reuse", "xlac (HLO, reused buffer)"), ("numpy", "numpy"), ("jax", "jax.jit"),
           ("numba", "numba")]


def _num(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - mag)
    return f"{x:.{decimals}f}"


def _imp(row: dict, col: str) -> dict | None:
    return row["impls"].get(col)


def _ms(row: dict, col: str, repeat: int) -> str:
    imp = _imp(row, col)
    if imp is None:
        return "—"
    if imp["ms"] is None:
        return "error" if imp.get("note") else "—"
    cell = _num(imp["ms"])
    if imp["runs"] and imp["runs"] < repeat:
        cell += f" (n={imp['runs']})"
    return cell


def xlac_ms(row: dict) -> float | None:
    """The xlac time the ratios and rates use: the kernel's primary column (from the HLO
    file unless the kernel says otherwise), else the other one."""
    first = row.get("primary", "xlac_hlo")
    for col in (first, "xlac_builder" if first == "xlac_hlo" else "xlac_hlo"):
        imp = _imp(row, col)
        if imp and imp["ms"] is not None:
            return imp["ms"]
    return None


def _ratio(row: dict, other: str) -> str:
    x, imp = xlac_ms(row), _imp(row, other)
    if x is None or imp is None or not imp["ms"]:
        return "—"
    return _num(x / imp["ms"], 2)


def rate(row: dict) -> tuple[float | None, str]:
    t = xlac_ms(row)
    if t is None or t <= 0:
        return None, ""
    if row["kind"] == "memory":
        return row["nbytes"] / (t * 1e-3) / 1e9, "GB/s"
    if row["kind"] == "compute":
        return row["flops"] / (t * 1e-3) / 1e9, "GFLOP/s"
    return None, ""


def fraction(row: dict, limits: dict | None) -> str:
    r, unit = rate(row)
    if r is not None and unit == "GFLOP/s" and row.get("gemm_gflops"):
        return f"{100 * r / row['gemm_gflops']:.0f}% of xlac GEMM {row['gemm_label']}"
    if r is None or not limits:
        return "—"
    if unit == "GB/s" and row.get("stream_gbs"):
        return f"{100 * r / row['stream_gbs']:.0f}% of {_num(row['stream_gbs'])}"
    if unit == "GB/s" and limits.get("stream_gbs") and math.isfinite(limits["stream_gbs"]):
        return f"{100 * r / limits['stream_gbs']:.0f}% STREAM"
    if unit == "GFLOP/s" and limits.get("sgemm_gflops"):
        return f"{100 * r / limits['sgemm_gflops']:.0f}% sgemm"
    return "—"


def _check(row: dict) -> str:
    parts = []
    for col, name in (("xlac_hlo", "HLO"), ("xlac_builder", "builder")):
        imp = _imp(row, col)
        if imp is None:
            continue
        if imp["ok"]:
            continue
        err = imp.get("error")
        parts.append(f"{name} {imp['check'] or 'error'}" + (f" {err:.1e}" if err not in (None, float('inf')) and
                                                            math.isfinite(err) else ""))
    if parts:
        return "; ".join(parts)
    errs = [_imp(row, c)["error"] for c in ("xlac_hlo", "xlac_builder")
            if _imp(row, c) and _imp(row, c).get("error") is not None]
    return f"ok ({max(errs):.0e})" if errs else "—"


def main_table(res: dict) -> str:
    repeat = res["settings"]["repeat"]
    limits = res.get("limits")
    show_reuse = any("xlac_hlo_reuse" in r["impls"] for r in res["rows"])
    cols = [c for c in COLUMNS if show_reuse or c[0] != "xlac_hlo_reuse"]
    head = (["kernel", "size", "check"] + [f"{name} ms" for _, name in cols]
            + ["xlac/jax", "xlac/numpy", "rate", "of limit", "compile ms"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in res["rows"]:
        if row["kind"] == "overhead":
            continue
        r, unit = rate(row)
        cells = [row["label"], row["size"], _check(row)]
        cells += [_ms(row, c, repeat) for c, _ in cols]
        cells += [_ratio(row, "jax"), _ratio(row, "numpy"),
                  f"{_num(r)} {unit}" if r is not None else "—", fraction(row, limits),
                  _num(row["compile_ms"].get("hlo", row["compile_ms"].get("builder")))]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [f"- {r['label']}: {r['kernel_note']}." for r in res["rows"] if r.get("kernel_note")]
    if notes:
        lines += [""] + notes
    return "\n".join(lines)


def overhead_table(res: dict) -> str:
    rows = [r for r in res["rows"] if r["kind"] == "overhead"]
    if not rows:
        return ""
    lines = ["| kernel | check | " + " | ".join(f"{n} µs" for c, n in COLUMNS if c != "xlac_hlo_reuse")
             + " |", "|" + "---|" * (2 + len(COLUMNS) - 1)]
    for row in rows:
        cells = [row["label"], _check(row)]
        for c, _ in COLUMNS:
            if c == "xlac_hlo_reuse":
                continue
            imp = _imp(row, c)
            cells.append(_num(imp["ms"] * 1e3) if imp and imp["ms"] is not None else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def library_text(res: dict) -> str:
    """A line on the GEMM library code the run loaded (counted in the compile time of the
    first kernel that used each variant)."""
    events = res.get("gemm_library") or {}
    if not events:
        return ""
    by = {}
    for how, ms in events.values():
        n, total = by.get(how, (0, 0.0))
        by[how] = (n + 1, total + ms)
    what = {"disk": "loaded from the library cache", "compiled": "built (nothing cached yet)"}
    told = "; ".join(f"{n} {what.get(how, how)} in {_num(total)} ms" for how, (n, total) in sorted(by.items()))
    return ("GEMM library (shape-generic GEMM code compiled once per machine and shared by "
            f"every module, `~/.cache/xlac`): {len(events)} variant(s) used; {told}, before "
            "the compile times above were taken (a one-time cost per machine).")


def compile_table(res: dict) -> str:
    disk = any("disk_hit" in r["compile_ms"] for r in res["rows"])
    head = ["kernel", "xlac.jit(HLO text) ms (best of 3)", "builder: build ms", "xlac.jit(builder) ms"]
    if disk:
        head += ["fresh process ms", "fresh process, from XLAC_CACHE_DIR ms",
                 "fresh process: imports ms"]
    head += ["jax first call ms (best of 3)", "numba first call ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in res["rows"]:
        c = row["compile_ms"]
        cells = [f"{row['label']} {row['size']}", _num(c.get("hlo")), _num(c.get("build")),
                 _num(c.get("builder"))]
        if disk:
            cells += [_num(c.get("disk_cold")), _num(c.get("disk_hit")), _num(c.get("fresh_import"))]
        for col in ("jax", "numba"):
            imp = _imp(row, col)
            cells.append(_num(imp["first_call_ms"]) if imp and imp.get("first_call_ms") else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def limits_text(res: dict) -> str:
    L = res.get("limits")
    if not L:
        return "Machine limits were not measured (`--no-limits`)."
    mib = L["stream_bytes"] >> 20
    parts = []
    def threads(key):
        n = key.split("_")[2][:-1]
        return "1 thread" if n == "1" else f"{n} threads"
    nat = [f"{_num(v)} GB/s with {threads(k)}" for k, v in L.items()
           if k.startswith("stream_native_") and isinstance(v, float)]
    if nat:
        parts.append(f"STREAM triad `a = b + s*c` (float32, 3 x {mib} MiB, native llvmlite loop, "
                     f"buffers reused): " + ", ".join(nat))
    xl = [f"{_num(v)} GB/s with {threads(k)}" for k, v in L.items()
          if k.startswith("stream_xlac_") and isinstance(v, float)]
    if xl:
        parts.append("the same triad compiled by xlac: " + ", ".join(xl)
                     + f" ({L.get('stream_xlac_how', '')})")
    errs = [f"{k}: {v}" for k, v in L.items() if k.endswith("_error")]
    if errs:
        parts.append("errors: " + "; ".join(errs))
    sg = f"sgemm {L['sgemm_n']}^3 float32: numpy's BLAS {_num(L.get('sgemm_numpy_gflops', L['sgemm_gflops']))} GFLOP/s"
    if L.get("sgemm_jax_gflops"):
        sg += f", jax.jit {_num(L['sgemm_jax_gflops'])} GFLOP/s"
    if L.get("sgemm_xlac_gflops"):
        sg += (f"; xlac {_num(L['sgemm_xlac_gflops'])} GFLOP/s "
               f"({L['sgemm_xlac_gflops'] / L['sgemm_gflops']:.2f}x the best)")
    parts.append(sg)
    parts.append(f"the fractions in the table are of {_num(L['stream_gbs'])} GB/s (best native "
                 f"STREAM triad) and {_num(L['sgemm_gflops'])} GFLOP/s (best sgemm, "
                 f"{L.get('sgemm_best', 'numpy')})")
    text = "Machine limits measured in the same run: " + "; ".join(parts) + "."
    a, b = res.get("limits_start"), res.get("limits_end")
    if a and b:
        def pair(key):
            return f"{_num(a.get(key))} / {_num(b.get(key))}"
        text += (" Each limit was measured before and after the kernels and the better one kept "
                 f"(before / after: STREAM 2 threads {pair('stream_native_2t')} GB/s, 1 thread "
                 f"{pair('stream_native_1t')} GB/s; sgemm numpy {pair('sgemm_numpy_gflops')}"
                 + (f", jax {pair('sgemm_jax_gflops')}" if a.get("sgemm_jax_gflops") else "")
                 + (f", xlac {pair('sgemm_xlac_gflops')}" if a.get("sgemm_xlac_gflops") else "")
                 + " GFLOP/s).")
    return text


def _threads_setting(s: dict) -> str:
    if s.get("threads_sweep"):
        return "xlac's num_threads swept over " + ", ".join(map(str, s["threads_sweep"]))
    return str(s["threads"] or "runtime default")


def busy_text(res: dict) -> str:
    """``; **busy core** ...`` when a spinning process ran beside the kernels (--busy-core)."""
    b = res.get("busy_core")
    if not b:
        return ""
    share = ""
    if b.get("cpu_s") is not None and b.get("wall_s"):
        share = f", it got {100 * b['cpu_s'] / b['wall_s']:.0f}% of a CPU over {b['wall_s']:.0f} s"
    died = "" if b.get("alive_at_end") is not False else "; it DIED before the end"
    return (f"; **busy core (`--busy-core`)**: a process spinning on CPU {b['cpu']} throughout the "
            f"kernels and the dispatch measurement (not the machine limits){share}{died}")


def machine_text(res: dict) -> str:
    m, v, s, caps = res["machine"], res["versions"], res["settings"], res["capabilities"]
    ver = ", ".join(f"{k} {val}" for k, val in v.items() if val) + \
        "".join(f", no {k}" for k in ("jax", "numba", "matplotlib") if not v.get(k))
    on = [k for k, val in caps.items() if val]
    off = [k for k, val in caps.items() if not val]
    return (f"Taken {res['date']} on {m['cpu']} ({m['cores']} cores, {m['memory']}, {m['simd']}; "
            f"{m['os']}); {ver}. "
            f"Runtime features used: {', '.join(on) or 'none'}"
            + (f" (absent: {', '.join(off)})" if off else "")
            + f"; threads: {_threads_setting(s)}; "
            f"median of {s['repeat']} samples{' (quick sizes)' if s['quick'] else ''}"
            + busy_text(res)
            + (f"; load average {res['loadavg_start'][0]} at the start, "
               f"{res['loadavg_end'][0]} at the end" if res.get("loadavg_start") and res.get("loadavg_end")
               else "") + ".")


def dispatch_text(res: dict) -> str:
    """The cost of one ``parallel_for`` dispatch: a sentence and a table (or why not)."""
    if res.get("dispatch_error"):
        return f"`parallel_for` dispatch cost: not measured ({res['dispatch_error']})."
    d = res.get("dispatch")
    if not d:
        return ""
    tasks = d["tasks"]
    lines = [f"One `parallel_for` dispatch (empty body; µs per call, median of {d['samples']} samples "
             f"of {d['reps']} back-to-back calls from native code; the pool has {d['workers']} "
             "worker(s) besides the caller; num_threads 1: the pool's function runs the tasks "
             "inline, as generated code with num_threads=1 never calls it):", "",
             "| num_threads | " + " | ".join(f"{n} tasks µs" for n in tasks) + " |",
             "|" + "---|" * (len(tasks) + 1)]
    for t, per in d["us"].items():
        lines.append(f"| {t} | " + " | ".join(_num(per.get(str(n))) for n in tasks) + " |")
    return "\n".join(lines)


def _failures(res: dict, key: str = "rows") -> str:
    notes = []
    for row in res.get(key, []):
        for col, imp in row["impls"].items():
            if imp.get("note") and imp["ms"] is None:
                notes.append(f"- {row['label']} {row['size']}, {col}: {imp['note']}")
        if row.get("note"):
            notes.append(f"- {row['label']}: {row['note']}")
    return "\n".join(notes)


LEGEND = (
    "Times are medians in ms, every call allocating its output (`f(x)` returning a new array"
    ", as a user calls it). *xlac (HLO)* runs the JAX-exported HLO in `benchmarks/hlo/`, "
    "*xlac (builder)* the same computation built with `xlac.ops`; *xlac/jax* and *xlac/numpy* "
    "are time ratios of xlac (HLO) to the other (below 1: xlac is faster). *rate* is xlac (HLO) "
    "in GB/s (bytes each kernel must move: inputs read once, output written once) for "
    "memory-bound kernels or GFLOP/s for matmul-like ones; *of limit* is that rate as a fraction "
    "of the STREAM triad or of the best sgemm measured in the same run (for memory-bound "
    "kernels: *x% of B*, B the GB/s of the native STREAM triad sampled in the same rounds as "
    "the kernel, because this machine's bandwidth drifts by up to 2x within minutes; for cholesky "
    "and the triangular solve: *x% of xlac GEMM n^3 t*, xlac's own `dot` of the same size and "
    "element type sampled in the same rounds). *check*: the largest "
    "`|xlac - numpy| / max|numpy|` of both xlac columns, within the kernel's tolerance. "
    "*compile ms*: `xlac.jit` of the HLO text, parsing included (the GEMM library the dots call "
    "is built or loaded first, see the full report). (n=N): fewer samples, "
    "the kernel being slow (time budget per measurement). *xlac (HLO, reused buffer)*: steady "
    "state with no allocation: the argument of the result's shape donated (`donate_argnums`) "
    "and each result fed back as the next call's argument (— where no argument can be donated: "
    "the result's shape differs from every argument's, or the runtime declines).")


def summary(res: dict) -> str:
    """Machine, limits, the main table and per-call overhead (the README's part)."""
    parts = [machine_text(res), "", main_table(res), "", limits_text(res)]
    ov = overhead_table(res)
    if ov:
        parts += ["", "Per-call overhead (8-element add, µs per call):", "", ov]
    disp = dispatch_text(res)
    if disp:
        parts += ["", disp]
    parts += ["", LEGEND]
    return "\n".join(parts)


def markdown(res: dict) -> str:
    """The whole report (a thread sweep's when the run was one)."""
    if "sweep" in res:
        return sweep_markdown(res)
    parts = ["# xlac benchmarks", "", summary(res), "", "## Compile times", "", compile_table(res)]
    lib = library_text(res)
    if lib:
        parts += ["", lib]
    fails = _failures(res)
    if fails:
        parts += ["", "## Errors", "", fails]
    parts += ["", f"Run took {res.get('elapsed_s', 0):.0f} s. Re-run: `python -m benchmarks "
              "--out benchmarks/results` (see `python -m benchmarks --help`)."]
    return "\n".join(parts) + "\n"


def update_readme(path: Path, res: dict, png: str | None = None) -> bool:
    """Replace the text between the benchmark markers in ``path``; False if it has none."""
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        return False
    body = summary(res)
    if png:
        body += f"\n\n![benchmark chart]({png})"
    new = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END),
                 lambda m: f"{BEGIN}\n{body}\n{END}", text, count=1, flags=re.S)
    path.write_text(new, encoding="utf-8")
    return True


def bar_chart(res: dict, path: Path) -> bool:
    """A PNG: each kernel's time relative to numpy (log scale) per implementation."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # noqa: BLE001 - no matplotlib: no chart
        return False
    rows = [r for r in res["rows"] if (r["impls"].get("numpy") or {}).get("ms")]
    series = [(c, n) for c, n in COLUMNS if c != "xlac_hlo_reuse"
              and c != "numpy" and any((r["impls"].get(c) or {}).get("ms") for r in rows)]
    if not rows or not series:
        return False
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(rows) + 2), 5))
    width = 0.8 / len(series)
    colors = {"xlac_hlo": "#1f77b4", "xlac_builder": "#6baed6", "jax": "#d62728", "numba": "#2ca02c"}
    for i, (col, name) in enumerate(series):
        xs, ys = [], []
        for j, r in enumerate(rows):
            imp = r["impls"].get(col)
            if imp and imp.get("ms"):
                xs.append(j + (i - (len(series) - 1) / 2) * width)
                ys.append(imp["ms"] / r["impls"]["numpy"]["ms"])
        ax.bar(xs, ys, width, label=name, color=colors.get(col))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("time / numpy time (log scale; < 1: faster)")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"{r['name']}\n{r['size']}" for r in rows], rotation=45, ha="right",
                       fontsize=8)
    m = res["machine"]
    ax.set_title(f"xlac benchmarks, {res['date']}: {m['cpu']}, {m['cores']} cores", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------------
# --threads-sweep
# ---------------------------------------------------------------------------------

SWEEP_OTHERS = [("jax", "jax.jit"), ("numpy", "numpy")]


def _sweep_ms(row: dict, col: str) -> float | None:
    imp = row["impls"].get(col)
    return imp["ms"] if imp and imp.get("ms") else None


def _best_xlac(row: dict, counts) -> tuple[int | None, float | None]:
    """(count, ms) of the fastest xlac thread count of ``row``."""
    times = [(ms, n) for n in counts if (ms := _sweep_ms(row, f"xlac_t{n}")) is not None]
    return (min(times)[1], min(times)[0]) if times else (None, None)


def _sweep_check(row: dict) -> str:
    imps = [imp for c, imp in row["impls"].items() if c.startswith("xlac_t")]
    bad = [imp for imp in imps if not imp.get("ok")]
    if bad:
        return "FAIL" if any(i.get("check") == "FAIL" for i in bad) else "error"
    errs = [i["error"] for i in imps if i.get("error") is not None]
    return f"ok ({max(errs):.0e})" if errs else "—"


def sweep_ms_table(res: dict) -> str:
    counts = res["settings"]["threads_sweep"]
    repeat = res["settings"]["repeat"]
    head = (["kernel", "size", "check"] + [f"xlac {n} ms" for n in counts]
            + [f"{name} ms" for _, name in SWEEP_OTHERS] + ["best xlac"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in res["sweep"]:
        best, _ = _best_xlac(row, counts)
        cells = [row["label"], row["size"], _sweep_check(row)]
        cells += [_ms(row, f"xlac_t{n}", repeat) for n in counts]
        cells += [_ms(row, c, repeat) for c, _ in SWEEP_OTHERS]
        cells.append((f"{best} thread" + ("s" if best > 1 else "")) if best else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sweep_ratio_table(res: dict) -> str:
    counts = res["settings"]["threads_sweep"]
    head = ["kernel"] + [str(n) for n in counts] + [name for _, name in SWEEP_OTHERS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in res["sweep"]:
        _, best = _best_xlac(row, counts)
        cols = [f"xlac_t{n}" for n in counts] + [c for c, _ in SWEEP_OTHERS]
        cells = [_num(ms / best, 3) if best and (ms := _sweep_ms(row, c)) else "—" for c in cols]
        lines.append(f"| {row['label']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def oversubscription_text(res: dict) -> str:
    """The worst slowdown of each count above the usable CPUs against the largest count
    that fits them (what issue 16 asks: at most 1.10)."""
    counts = res["settings"]["threads_sweep"]
    cpus = res["machine"].get("usable_cpus") or res["machine"]["cores"]
    base = max((n for n in counts if n <= cpus), default=None)
    over = [n for n in counts if n > cpus]
    if base is None or not over:
        return ""
    parts = []
    for n in over:
        worst = max(((_sweep_ms(r, f"xlac_t{n}") / _sweep_ms(r, f"xlac_t{base}"), r["name"])
                     for r in res["sweep"] if _sweep_ms(r, f"xlac_t{n}") and _sweep_ms(r, f"xlac_t{base}")),
                    default=None)
        if worst:
            parts.append(f"num_threads={n}: at most {worst[0]:.2f}x ({worst[1]})")
    if not parts:
        return ""
    return (f"Oversubscription (thread counts above the {cpus} CPUs this process may use, against "
            f"num_threads={base}, the worst kernel): " + "; ".join(parts) + ".")


def library_threads_text(res: dict) -> str:
    lt = res.get("library_threads") or {}
    if not lt:
        return ""
    return ("jax and numpy do not take xlac's thread count and ran once each with their own "
            f"settings: numpy: {lt.get('numpy')}; jax: {lt.get('jax')}.")


SWEEP_LEGEND = (
    "Times are medians in ms of every thread count, jax and numpy sampled in the same rounds "
    "(a new seeded order each round, each sample after 10 ms of untimed calls of the same "
    "implementation), every call allocating its output. *xlac N*: `xlac.jit(..., "
    "num_threads=N)` of the JAX-exported HLO (the builder's computation without one); the "
    "code is the same at every N, only the run options differ. *check*: the largest "
    "`|xlac - numpy| / max|numpy|` over the thread counts. The ratio table divides each time "
    "by the kernel's best xlac time (1 = that count; below 1 in the jax or numpy column: "
    "faster than xlac's best).")


def sweep_summary(res: dict) -> str:
    parts = [machine_text(res), "", sweep_ms_table(res), "", "Ratio to the best xlac time:", "",
             sweep_ratio_table(res)]
    for extra in (oversubscription_text(res), library_threads_text(res), dispatch_text(res)):
        if extra:
            parts += ["", extra]
    parts += ["", SWEEP_LEGEND]
    return "\n".join(parts)


def sweep_markdown(res: dict) -> str:
    parts = ["# xlac thread sweep", "", sweep_summary(res)]
    fails = _failures(res, "sweep")
    if fails:
        parts += ["", "## Errors", "", fails]
    counts = ",".join(map(str, res["settings"]["threads_sweep"]))
    parts += ["", f"Run took {res.get('elapsed_s', 0):.0f} s. Re-run: `python -m benchmarks "
              f"--threads-sweep {counts} --out DIR` (see `python -m benchmarks --help`)."]
    return "\n".join(parts) + "\n"


def threads_chart(res: dict, path: Path) -> bool:
    """A PNG: each kernel's speed-up over xlac's first thread count against the thread
    count (log-log), jax.jit as a dashed line of the same colour; False without
    matplotlib or without data."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # noqa: BLE001 - no matplotlib: no chart
        return False
    counts = res["settings"]["threads_sweep"]
    rows = [r for r in res.get("sweep", []) if _sweep_ms(r, f"xlac_t{counts[0]}")]
    if not rows or len(counts) < 2:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, r in enumerate(rows):
        _plot_kernel(ax, r, counts, f"C{i % 10}")
    cpus = res["machine"].get("usable_cpus") or res["machine"]["cores"]
    ax.plot(counts, [min(n, cpus) / counts[0] for n in counts], ":", color="gray",
            label=f"ideal ({cpus} CPUs)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(counts, [str(n) for n in counts])
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.set_xlabel("xlac num_threads")
    ax.set_ylabel(f"speed-up over num_threads={counts[0]} (log)")
    m = res["machine"]
    ax.set_title(f"xlac thread sweep, {res['date']}: {m['cpu']}, {cpus} CPUs"
                 + (", one core busy" if res.get("busy_core") else ""), fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _plot_kernel(ax, row: dict, counts, color: str) -> None:
    base = _sweep_ms(row, f"xlac_t{counts[0]}")
    pts = [(n, base / ms) for n in counts if (ms := _sweep_ms(row, f"xlac_t{n}"))]
    ax.plot([n for n, _ in pts], [s for _, s in pts], "o-", color=color, label=f"{row['name']} (xlac)")
    jax_ms = _sweep_ms(row, "jax")
    if jax_ms:
        ax.axhline(base / jax_ms, color=color, linestyle="--", linewidth=1,
                   label=f"{row['name']} (jax.jit, its own threads)")
