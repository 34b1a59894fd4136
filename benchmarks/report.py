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
                 + " GFLOP/s).")
    return text


def machine_text(res: dict) -> str:
    m, v, s, caps = res["machine"], res["versions"], res["settings"], res["capabilities"]
    ver = ", ".join(f"{k} {val}" for k, val in v.items() if val) + \
        "".join(f", no {k}" for k in ("jax", "numba", "matplotlib") if not v.get(k))
    on = [k for k, val in caps.items() if val]
    off = [k for k, val in caps.items() if not val]
    return (f"Taken {res['date']} on {m['cpu']} ({m['cores']} cores, {m['memory']}, {m['simd']}; "
            f"{m['os']}), xlac commit {m['xlac_commit'] or '?'}; {ver}. "
            f"Runtime features used: {', '.join(on) or 'none'}"
            + (f" (absent: {', '.join(off)})" if off else "")
            + f"; threads: {s['threads'] or 'runtime default'}; "
            f"median of {s['repeat']} samples{' (quick sizes)' if s['quick'] else ''}"
            + (f"; load average {res['loadavg_start'][0]} at the start, "
               f"{res['loadavg_end'][0]} at the end" if res.get("loadavg_start") and res.get("loadavg_end")
               else "") + ".")


def _failures(res: dict) -> str:
    notes = []
    for row in res["rows"]:
        for col, imp in row["impls"].items():
            if imp.get("note") and imp["ms"] is None:
                notes.append(f"- {row['label']} {row['size']}, {col}: {imp['note']}")
        if row.get("note"):
            notes.append(f"- {row['label']}: {row['note']}")
    return "\n".join(notes)


LEGEND = (
    "Times are medians in ms, every call allocating its output (`f(x)` returning a new array"
    ", as a user calls it). *xlac (HLO)* runs the JAX-exported HLO in `../shared/bench_hlo/`, "
    "*xlac (builder)* the same computation built with `xlac.ops`; *xlac/jax* and *xlac/numpy* "
    "are time ratios of xlac (HLO) to the other (below 1: xlac is faster). *rate* is xlac (HLO) "
    "in GB/s (bytes each kernel must move: inputs read once, output written once) for "
    "memory-bound kernels or GFLOP/s for matmul-like ones; *of limit* is that rate as a fraction "
    "of the STREAM triad or of the best sgemm measured in the same run (for memory-bound "
    "kernels: *x% of B*, B the GB/s of the native STREAM triad sampled in the same rounds as "
    "the kernel, because this machine's bandwidth drifts by up to 2x within minutes). *check*: the largest "
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
    parts += ["", LEGEND]
    return "\n".join(parts)


def markdown(res: dict) -> str:
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
    text = path.read_text()
    if BEGIN not in text or END not in text:
        return False
    body = summary(res)
    if png:
        body += f"\n\n![benchmark chart]({png})"
    new = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END),
                 lambda m: f"{BEGIN}\n{body}\n{END}", text, count=1, flags=re.S)
    path.write_text(new)
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
