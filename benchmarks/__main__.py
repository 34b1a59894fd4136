"""``python -m benchmarks`` (also ``xlac bench``): run the benchmark kernels.

    python -m benchmarks [--kernels k1,k2] [--repeat N] [--threads N] [--out DIR] [--quick]
                         [--budget S] [--hlo-dir DIR] [--no-jax] [--no-numba] [--no-limits]
                         [--no-disk-cache] [--readme README.md] [--busy-core]
                         [--threads-sweep 1,2,4,8,16]

Prints the Markdown report on stdout (progress on stderr).  ``--out DIR``
also writes DIR/results.md, DIR/results.json and DIR/results.png (with
matplotlib); ``--readme PATH`` rewrites the benchmark section of PATH.
Every run also measures one ``parallel_for`` dispatch (``dispatch.py``).
``--busy-core``: a process spins on the last CPU while the kernels run
(``busy.py``).  ``--threads-sweep``: xlac at each thread count beside jax and
numpy instead of the main table (``sweep.py``); ``--out DIR`` then writes
DIR/threads.md, DIR/threads.json and DIR/threads.png.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser(prog: str = "python -m benchmarks") -> argparse.ArgumentParser:
    from .kernels import KERNELS
    p = argparse.ArgumentParser(prog=prog, description="xlac benchmarks: xlac vs numpy "
                                "(and jax.jit, numba when installed); Markdown table and PNG chart.")
    p.add_argument("--kernels", help="comma-separated kernel names (default: all): "
                   + ",".join(k.name for k in KERNELS))
    p.add_argument("--repeat", type=int, default=15, help="timed samples per measurement (default 15)")
    p.add_argument("--threads", type=int, default=None,
                   help="num_threads for xlac.jit when the runtime has it (default: its default)")
    p.add_argument("--out", help="directory for results.md, results.json and results.png")
    p.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test, not a benchmark)")
    p.add_argument("--budget", type=float, default=30.0,
                   help="seconds per measurement before taking fewer samples (default 30)")
    p.add_argument("--hlo-dir", default=None,
                   help="directory of the JAX-exported HLO (default: benchmarks/hlo)")
    p.add_argument("--no-jax", action="store_true", help="skip jax even if installed")
    p.add_argument("--no-numba", action="store_true", help="skip numba even if installed")
    p.add_argument("--no-limits", action="store_true", help="skip the STREAM and sgemm measurements")
    p.add_argument("--no-disk-cache", action="store_true",
                   help="skip the fresh-process compile times with XLAC_CACHE_DIR")
    p.add_argument("--readme", help="rewrite the benchmark section of this README")
    p.add_argument("--busy-core", action="store_true",
                   help="keep a process spinning on the last CPU of the affinity mask while the "
                   "kernels run (the case of a machine with one core taken)")
    p.add_argument("--threads-sweep", metavar="N1,N2,...",
                   help="instead of the main table, time xlac at each num_threads (e.g. "
                   "1,2,4,8,16) beside jax and numpy; --out DIR writes threads.md, threads.json "
                   "and threads.png (the plot needs matplotlib)")
    return p


def _check_args(args) -> str | None:
    """The first problem with the options, as an error message, or None."""
    if args.repeat < 1:
        return f"--repeat must be at least 1, got {args.repeat}"
    if args.threads is not None and args.threads < 1:
        return f"--threads must be at least 1, got {args.threads}"
    if args.kernels:
        from .kernels import BY_NAME
        unknown = [n.strip() for n in args.kernels.split(",") if n.strip() and n.strip() not in BY_NAME]
        if unknown:
            return f"unknown kernel(s) {', '.join(unknown)} (known: {', '.join(BY_NAME)})"
    if args.threads_sweep is not None:
        from .sweep import parse_counts
        try:
            args.threads_sweep = parse_counts(args.threads_sweep)
        except ValueError as e:
            return str(e)
        if args.threads is not None:
            return "--threads and --threads-sweep exclude each other (the sweep sets num_threads itself)"
        if args.readme:
            return "--readme takes the main table: run it without --threads-sweep"
    return None


def _write_outputs(res: dict, out: Path) -> Path | None:
    """results.* (threads.* for a sweep) in ``out``; the PNG's path, or None without one."""
    from . import harness, report
    stem, chart = ("threads", report.threads_chart) if "sweep" in res else ("results", report.bar_chart)
    out.mkdir(parents=True, exist_ok=True)
    harness.save_json(res, out / f"{stem}.json")
    png = out / f"{stem}.png"
    if not chart(res, png):
        harness.log("note: no matplotlib (or nothing to plot): no PNG chart")
        png = None
    (out / f"{stem}.md").write_text(report.markdown(res), encoding="utf-8")
    harness.log(f"wrote {out / (stem + '.md')}, {out / (stem + '.json')}" + (f", {png}" if png else ""))
    return png


def _failed(res: dict) -> list[str]:
    from .sweep import failed
    if "sweep" in res:
        return failed(res["sweep"])
    return [r["name"] for r in res["rows"]
            for c in ("xlac_hlo", "xlac_builder") if (r["impls"].get(c) or {}).get("ok") is False]


def main(argv=None, prog: str = "python -m benchmarks") -> int:
    args = build_parser(prog).parse_args(argv)
    from . import harness, report
    problem = _check_args(args)
    if problem:
        print(f"{prog}: error: {problem}", file=sys.stderr)
        return 2
    names = [n.strip() for n in args.kernels.split(",") if n.strip()] if args.kernels else None
    hlo_dir = Path(args.hlo_dir) if args.hlo_dir else harness.DEFAULT_HLO_DIR
    try:
        res = harness.run(names, quick=args.quick, repeat=args.repeat, budget=args.budget,
                          threads=args.threads, hlo_dir=hlo_dir, use_jax=not args.no_jax,
                          use_numba=not args.no_numba, disk_cache=not args.no_disk_cache,
                          limits=not args.no_limits, busy_core=args.busy_core,
                          threads_sweep=args.threads_sweep)
    except ValueError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    png_rel = _write_outputs(res, Path(args.out)) if args.out else None
    if args.readme:
        readme = Path(args.readme)
        rel = None
        if png_rel is not None:
            try:
                rel = str(png_rel.resolve().relative_to(readme.resolve().parent))
            except ValueError:
                rel = str(png_rel)
        if not report.update_readme(readme, res, rel):
            print(f"{prog}: error: {readme} has no {report.BEGIN} ... {report.END} section",
                  file=sys.stderr)
            return 1
        harness.log(f"updated {readme}")
    sys.stdout.write(report.markdown(res))
    return 1 if _failed(res) else 0


if __name__ == "__main__":  # pragma: no cover
    from xlac.cli import utf8_stdout
    utf8_stdout()                  # reports are Markdown in UTF-8, whatever the locale
    sys.exit(main())
