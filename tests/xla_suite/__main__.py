"""Run XLA's test modules through xlac and compare with XLA:CPU's recorded results.

    python -m tests.xla_suite --xla PATH [--reference RESULTS.npz] [-k TEXT] [--json OUT]

PATH is a checkout of openxla/xla (the commit the reference jaxlib was built from);
RESULTS is what ``tests.xla_suite.reference`` recorded there (default: the committed
``xla_cpu.npz``).  Prints one line per case that does not pass, then the count of each
cause.  A case is in the set when XLA:CPU ran it on one device; the rest are counted
apart by why XLA did not (its parser refused a test template, it needs several devices,
...).  Exit status 0 when every case of the set passes or is implementation-defined.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from tests.xla_suite import extract, store
from tests.xla_suite.compare import judge, run_exact, run_on_xlac
from tests.xla_suite.worker import Worker

HERE = Path(__file__).resolve().parent
DEFAULT_REFERENCE = HERE / "xla_cpu.npz"

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--xla", required=True, help="a checkout of openxla/xla")
    p.add_argument("--reference", default=str(DEFAULT_REFERENCE), help="XLA:CPU's results (.npz)")
    p.add_argument("--timeout", type=float, default=120, help="seconds per case (default 120)")
    p.add_argument("-k", default="", help="only cases whose file name contains this")
    p.add_argument("--json", help="write {case: [cause, detail]} here")
    args = p.parse_args(argv)
    reference = store.load(args.reference)
    todo = [c for c in extract.cases(args.xla) if args.k in c.source]
    missing = [c for c in todo if c.key not in reference]
    if missing:
        print(f"xla_suite: {len(missing)} case(s) have no XLA:CPU result in {args.reference} "
              f"(another XLA commit?), e.g. {missing[0].where}", file=sys.stderr)
    worker, exact, verdicts, left_out = Worker(run_on_xlac), Worker(run_exact), {}, Counter()
    t0 = time.perf_counter()
    for case in todo:
        if case.key not in reference:
            continue
        if case.multi_device:
            left_out["multi-device"] += 1
            continue
        status, expected = reference[case.key]
        if status != "ok":
            left_out[status] += 1
            continue
        cause, detail = judge(case.text, expected, worker.call(case.text, args.timeout), case.key,
                              lambda: exact.call(case.text, args.timeout))
        verdicts[case.key] = (cause, detail)
        if cause != "pass":
            print(f"{case.where}: {cause}: {detail}")
    worker.close()
    exact.close()
    counts = Counter(cause for cause, _ in verdicts.values())
    print(f"\n{len(verdicts)} modules XLA:CPU runs on one device, in {time.perf_counter() - t0:.0f} s:")
    for cause, n in counts.most_common():
        print(f"  {cause:24s} {n}")
    print("left out (XLA:CPU did not run them): " + ", ".join(f"{k} {n}" for k, n in left_out.most_common()))
    if args.json:
        Path(args.json).write_text(json.dumps(verdicts, indent=1), encoding="utf-8")
    return 0 if set(counts) <= {"pass", "implementation-defined", "xla-deviates"} else 1


if __name__ == "__main__":
    sys.exit(main())
