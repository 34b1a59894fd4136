"""``python -m benchmarks`` (also ``xlac bench``): run the benchmark kernels.

    python -m benchmarks [--kernels k1,k2] [--repeat N] [--threads N] [--out DIR] [--quick]
                         [--budget S] [--hlo-dir DIR] [--no-jax] [--no-numba] [--no-limits]
                         [--no-disk-cache] [--readme README.md]

Prints the Markdown report on stdout (progress on stderr).  ``--out DIR``
also writes DIR/results.md, DIR/results.json and DIR/results.png (with
matplotlib); ``--readme PATH`` rewrites the benchmark section of PATH.
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
                   help="directory of the JAX-exported HLO (default: ../shared/bench_hlo)")
    p.add_argument("--no-jax", action="store_true", help="skip jax even if installed")
    p.add_argument("--no-numba", action="store_true", help="skip numba even if installed")
    p.add_argument("--no-limits", action="store_true", help="skip the STREAM and sgemm measurements")
    p.add_argument("--no-disk-cache", action="store_true",
                   help="skip the fresh-process compile times with XLAC_CACHE_DIR")
    p.add_argument("--readme", help="rewrite the benchmark section of this README")
    return p


def main(argv=None, prog: str = "python -m benchmarks") -> int:
    args = build_parser(prog).parse_args(argv)
    from . import harness, report
    if args.repeat < 1:
        print(f"{prog}: error: --repeat must be at least 1, got {args.repeat}", file=sys.stderr)
        return 2
    if args.threads is not None and args.threads < 1:
        print(f"{prog}: error: --threads must be at least 1, got {args.threads}", file=sys.stderr)
        return 2
    names = [n.strip() for n in args.kernels.split(",") if n.strip()] if args.kernels else None
    hlo_dir = Path(args.hlo_dir) if args.hlo_dir else harness.DEFAULT_HLO_DIR
    try:
        res = harness.run(names, quick=args.quick, repeat=args.repeat, budget=args.budget,
                          threads=args.threads, hlo_dir=hlo_dir, use_jax=not args.no_jax,
                          use_numba=not args.no_numba, disk_cache=not args.no_disk_cache,
                          limits=not args.no_limits)
    except ValueError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    png_rel = None
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        harness.save_json(res, out / "results.json")
        if report.bar_chart(res, out / "results.png"):
            png_rel = out / "results.png"
        else:
            harness.log("note: no matplotlib: no PNG chart")
        (out / "results.md").write_text(report.markdown(res))
        harness.log(f"wrote {out / 'results.md'}, {out / 'results.json'}"
                    + (f", {png_rel}" if png_rel else ""))
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
    failed = [r["name"] for r in res["rows"]
              for c in ("xlac_hlo", "xlac_builder") if (r["impls"].get(c) or {}).get("ok") is False]
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
