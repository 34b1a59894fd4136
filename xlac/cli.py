"""The ``xlac`` command line (also ``python -m xlac``).

    xlac run MODULE.hlo [--inputs IN.npz | --random-inputs [--seed S]] [--out OUT.npz]
                        [--expected EXP.npz [--rtol R] [--atol A]] [--time] [--reference]
    xlac dump MODULE.hlo [--llvm] [--optimized-llvm] [--asm] [--dot] [--after-each-pass]
    xlac compile MODULE.hlo -o OUT.o [--header OUT.h] [--name FN] [--target-triple T] [--cpu C]
    xlac bench MODULE.hlo [--inputs IN.npz | --seed S] [--repeat N] [--threads N]
    xlac bench [--kernels k1,k2] [--repeat N] [--threads N] [--out DIR] [--quick] ...
    xlac ops            xlac --version

``run``: IN.npz holds the entry parameters as ``arr_0, arr_1, ...`` in
parameter-number order (what ``np.savez(path, *args)`` writes) or by parameter
name (``np.savez(path, x=...)``); ``--random-inputs`` makes them instead
(:func:`xlac.bench.random_inputs`).  OUT.npz gets the results as ``arr_0, ...``
(a tuple result flattened in order, a non-tuple result as ``arr_0``).  Without
``--out`` each result's shape and a short summary is printed.  ``--expected``
compares the results with an npz written the same way (``numpy.allclose``
with ``--rtol``/``--atol``; NaNs equal) and fails naming the first result that
differs.  ``--time`` prints the compile and run times.  ``--reference`` runs
the numpy evaluator instead of compiled code.

``bench MODULE``: compile time, run time (median, min, max) and the rates of
the cost analysis (:mod:`xlac.bench`); without a module, the kernel harness of
the source tree (``python -m benchmarks``).

Errors are one clear line on stderr and a non-zero exit status (1 for bad
input, 2 for bad usage), never a traceback.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def _flatten(value) -> list:
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def _read_module_text(path: str) -> str:
    """The HLO text in ``path`` (:func:`xlac.hlo.source.read_module_file`: an
    ``.npz`` or binary file is refused with what to do)."""
    from .hlo.source import read_module_file
    return read_module_file(path, arrays_hint="with --inputs IN.npz")


def _module_inputs(args, module) -> list:
    """The arguments ``run``/``bench`` call the module with."""
    from .bench import load_inputs, random_inputs
    if getattr(args, "random_inputs", False):
        if args.inputs:
            raise ValueError("give either --inputs or --random-inputs, not both")
        return random_inputs(module, args.seed)
    return load_inputs(args.inputs, module)


def _compare(leaves: list, path: str, rtol: float, atol: float) -> None:
    """Raise ``ValueError`` naming the first result that is not close to ``path``'s."""
    with np.load(path, allow_pickle=False) as data:
        names = [f"arr_{k}" for k in range(len(leaves))]
        missing = [n for n in names if n not in data.files]
        if missing or len(data.files) != len(leaves):
            raise ValueError(f"{path}: holds {', '.join(sorted(data.files)) or 'nothing'}, the module has "
                             f"{len(leaves)} result(s) ({', '.join(names)})")
        for n, got in zip(names, leaves):
            want = data[n]
            if got.shape != want.shape or got.dtype != want.dtype:
                raise ValueError(f"result {n} is {got.dtype}{list(got.shape)}, {path} has "
                                 f"{want.dtype}{list(want.shape)}")
            _check_close(n, got, want, path, rtol, atol)


def _check_close(name: str, got: np.ndarray, want: np.ndarray, path: str, rtol: float, atol: float) -> None:
    if got.dtype.kind not in "fc" and got.dtype.itemsize <= 8 and got.dtype.kind in "biu":
        bad = got != want
    else:
        g, w = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64), \
            want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    raise ValueError(f"result {name} differs from {path} at {int(bad.sum())} of {bad.size} element(s); "
                     f"first at index {list(at)}: got {got[at].item()!r}, expected {want[at].item()!r} "
                     f"(rtol={rtol:g}, atol={atol:g})")


def _read_module(path: str):
    """The module in ``path``: HLO text or StableHLO (MLIR) text, told apart by content."""
    from .hlo.stablehlo import parse_module_text
    return parse_module_text(_read_module_text(path), path)


def _summary(a: np.ndarray) -> str:
    head = f"{a.dtype}{list(a.shape)}"
    if a.size == 0:
        return head + " (empty)"
    if a.dtype == np.bool_:
        return f"{head} true={int(a.sum())}/{a.size}"
    vals = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    if np.iscomplexobj(a):
        return f"{head} first={a.reshape(-1)[0]}"
    with np.errstate(all="ignore"):
        return f"{head} min={np.nanmin(vals):.6g} max={np.nanmax(vals):.6g} mean={np.nanmean(vals):.6g}"


def _evaluate_reference(module, inputs: list):
    """The numpy evaluator's results (every device of a multi-device module, stacked)."""
    devices = module.replica_count * module.num_partitions
    if devices > 1:
        from .evaluator_replicated import evaluate_replicated
        per_device = [[a[d] for a in inputs] for d in range(devices)] if inputs else [[]] * devices
        outs = evaluate_replicated(module, per_device)
        outs = [o if isinstance(o, tuple) else (o,) for o in outs]
        return tuple(np.stack([o[k] for o in outs]) for k in range(len(outs[0])))
    from .evaluator import evaluate
    return evaluate(module, *inputs)


def cmd_run(args) -> int:
    from .bench import format_seconds
    from .hlo.collectives import check_device_count
    devices = None if args.devices is None else check_device_count("--devices", args.devices)
    module = _read_module(args.module)
    if devices is not None:
        if module.replica_count * module.num_partitions != 1:
            raise ValueError(f"--devices: {module.name} says it runs on {module.replica_count} replica(s) x "
                             f"{module.num_partitions} partition(s) already")
        module.replica_count = devices
    inputs = _module_inputs(args, module)
    t0 = time.perf_counter()
    if args.reference:
        result = _evaluate_reference(module, inputs)
        timing = f"evaluate {format_seconds(time.perf_counter() - t0)} (numpy reference evaluator)"
    else:
        from .devices import jit
        exe = jit(module)
        t1 = time.perf_counter()
        result = exe(*inputs)
        t2 = time.perf_counter()
        if getattr(exe, "rank", 0) != 0:
            return 0            # under mpiexec, rank 0 writes the results
        where = {"memory": "in-memory cache", "disk": "disk cache"}.get(getattr(exe, "from_cache", None),
                                                                        "compiled")
        timing = (f"compile {format_seconds(t1 - t0)} ({where}), run {format_seconds(t2 - t1)} "
                  "(one call; xlac bench for repeated timing)")
    if args.time:
        print(timing)
    # A token result is written as an empty u8 array (what the evaluator returns).
    shapes = module.entry.root.shape.leaves()
    leaves = [np.zeros(0, np.uint8) if s.is_token else np.asarray(x) for s, x in zip(shapes, _flatten(result))]
    if args.out:
        np.savez(args.out, *leaves)
    elif not args.expected:
        for k, (s, a) in enumerate(zip(shapes, leaves)):
            print(f"arr_{k}: {'token' if s.is_token else _summary(a)}")
    if args.expected:
        _compare(leaves, args.expected, args.rtol, args.atol)
        print(f"all {len(leaves)} result(s) match {args.expected} (rtol={args.rtol:g}, atol={args.atol:g})")
    return 0


def _print_after_pass(pipeline: str, pass_name: str, module, changed: bool) -> None:
    """``--after-each-pass``: a header per pass run, the module when it changed."""
    print(f"// ---- after {pipeline}.{pass_name}{'' if changed else ' (no change)'} ----")
    if changed:
        print(module.to_text())


def cmd_opt(args) -> int:
    """Run the named passes on the module and print it (as mlir-opt / hlo-opt)."""
    from .hlo.verifier import verify
    from .passes.pipeline import PASSES, run_passes
    if args.list_passes:
        print("\n".join(PASSES))
        return 0
    if args.module is None or args.passes is None:
        raise ValueError("opt: give a module and --passes p1,p2,... (--list-passes lists them)")
    module = _read_module(args.module)
    verify(module)
    run_passes(module, args.passes, verify=not args.no_verify)
    text = module.to_text() + "".join(f"// {d}\n" for d in module.diagnostics)
    if args.output:
        with open(args.output, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_dump(args) -> int:
    import contextlib

    from .codegen.compiler import lower
    from .passes.pipeline import dump_hook
    module = _read_module(args.module)
    hook = contextlib.nullcontext()
    from .hlo.stablehlo import is_stablehlo
    if is_stablehlo(_read_module_text(args.module)):
        print("// ---- imported from StableHLO ----")
        print(module.to_text())
    if args.after_each_pass:
        print("// ---- input ----")
        print(module.to_text())
        hook = dump_hook(_print_after_pass)
    with hook:
        lowered = lower(module)
    if args.after_each_pass:
        print("// ---- final module and buffer assignment ----")
    print(lowered.hlo.to_text())
    for note in lowered.hlo.diagnostics:
        print(f"// {note}")
    print(lowered.assignment.summary())
    if args.llvm:
        print(lowered.llvm_ir)
    if args.optimized_llvm:
        from .codegen.jit import optimized_ir
        print(optimized_ir(lowered.llvm_module, lowered.entry_name))
    if args.asm:
        from .codegen.jit import assembly, host_target_machine, parse_and_optimize
        print(assembly(parse_and_optimize(lowered.llvm_module, host_target_machine())))
    if args.dot:
        from .hlo.dot_graph import to_dot
        print(to_dot(lowered.hlo))
    return 0


def cmd_compile(args) -> int:
    from .aot import compile_aot
    module = _read_module(args.module)
    header = args.header
    if header is None:
        header = (args.output[:-2] if args.output.endswith(".o") else args.output) + ".h"
    res = compile_aot(module, args.output, header=header, name=args.name, target=args.target_triple,
                      cpu=args.cpu, features=args.features)
    print(f"wrote {res.object_path} ({res.name}, {res.name}_info) and {res.header_path} for CPU "
          f"{res.cpu or 'generic'}: {len(res.params)} parameter(s), {len(res.results)} result(s), "
          f"temp {res.temp_size} bytes")
    return 0


def _bench_module_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="xlac bench", description="compile a module and time calls of it")
    p.add_argument("module", help="HLO text file")
    p.add_argument("--inputs", help=".npz of the parameters (arr_0, ... or by name); default: random")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--repeat", type=int, default=15, help="timed samples (default 15)")
    p.add_argument("--threads", type=int, help="threads of the executable (default: every CPU)")
    return p


def cmd_bench_module(argv: list) -> int:
    """``xlac bench MODULE.hlo ...``: compile time, run times and the cost analysis's rates."""
    from .bench import benchmark, load_inputs, random_inputs
    from .hlo.parser import parse_hlo
    args = _bench_module_parser().parse_args(argv)
    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads must be at least 1, got {args.threads}")
    text = _read_module_text(args.module)
    module = parse_hlo(text)
    inputs = load_inputs(args.inputs, module) if args.inputs else random_inputs(module, args.seed)
    print(benchmark(text, inputs, repeat=args.repeat, threads=args.threads).report())
    return 0


def cmd_bench(args) -> int:
    """``xlac bench MODULE ...``: one module (:mod:`xlac.bench`); ``xlac bench
    [options]``: the kernel harness of the source tree (``python -m benchmarks``)."""
    import os
    if args.bench_args and not args.bench_args[0].startswith("-"):
        args.module = args.bench_args[0]
        return cmd_bench_module(args.bench_args)
    blas_timeout_set = "OPENBLAS_THREAD_TIMEOUT" in os.environ   # before benchmarks/ sets it
    try:
        import benchmarks.__main__ as bench
    except ImportError:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if not os.path.isfile(os.path.join(root, "benchmarks", "__main__.py")):
            raise ValueError("bench: the benchmarks/ directory of xlac's source tree is not "
                             "here (it is not installed with the package)") from None
        sys.path.insert(0, root)
        import benchmarks.__main__ as bench
    started_as_cli = os.path.basename(sys.argv[0]) in ("xlac", "__main__.py")
    if not blas_timeout_set and "numpy" in sys.modules and started_as_cli:
        # numpy (imported by xlac) has loaded OpenBLAS before the harness could set
        # the variable (see benchmarks/__init__.py): start the harness afresh with it
        # (only when this process is the command line, never inside a caller's process).
        root = os.path.dirname(os.path.dirname(os.path.abspath(bench.__file__)))
        env = dict(os.environ, OPENBLAS_THREAD_TIMEOUT="4",
                   PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        os.execve(sys.executable, [sys.executable, "-m", "benchmarks", *args.bench_args], env)
    return bench.main(args.bench_args, prog="xlac bench")


def cmd_ops(args) -> int:
    """``xlac ops``: the support matrix (what ``docs/ops.md`` holds)."""
    from .support import markdown
    sys.stdout.write(markdown())
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    p = argparse.ArgumentParser(prog="xlac", description="XLA for the CPU, in Python. The user "
                                "guide is docs/guide.md of the source tree.")
    p.add_argument("--version", action="version", version=f"xlac {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="compile and run an HLO module on inputs from an .npz")
    r.add_argument("module", help="HLO text file")
    r.add_argument("--inputs", help=".npz with arr_0, arr_1, ... in parameter order, or keyed by "
                   "parameter name")
    r.add_argument("--out", help=".npz to write the results to (arr_0, arr_1, ...)")
    r.add_argument("--random-inputs", action="store_true",
                   help="call the module on random arrays of its parameters' shapes (see --seed)")
    r.add_argument("--seed", type=int, default=0, help="seed of --random-inputs (default 0)")
    r.add_argument("--expected", help=".npz of the expected results (arr_0, ...): compare, fail on a mismatch")
    r.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance of --expected (default 1e-5)")
    r.add_argument("--atol", type=float, default=1e-6, help="absolute tolerance of --expected (default 1e-6)")
    r.add_argument("--time", action="store_true", help="print the compile time and the run time")
    r.add_argument("--reference", action="store_true", help="use the numpy reference evaluator")
    r.add_argument("--devices", type=int, help="run a per-replica module that does not say replica_count "
                   "on N devices (arguments and results then have a leading axis of N)")
    r.set_defaults(fn=cmd_run)
    d = sub.add_parser("dump", help="print the optimised module and its buffer assignment")
    d.add_argument("module", help="HLO text file")
    d.add_argument("--llvm", action="store_true", help="also print the LLVM IR as emitted")
    d.add_argument("--optimized-llvm", action="store_true", help="also print the LLVM IR after O3")
    d.add_argument("--asm", action="store_true", help="also print the host assembly of the module")
    d.add_argument("--dot", action="store_true",
                   help="also print the optimised module as a Graphviz graph (dot -Tsvg)")
    d.add_argument("--after-each-pass", action="store_true",
                   help="first print the module after every pass (pass name as a header)")
    d.set_defaults(fn=cmd_dump)
    o = sub.add_parser("opt", help="run HLO passes on a module and print the result")
    o.add_argument("module", nargs="?", help="HLO text file")
    o.add_argument("--passes", help="comma-separated pass names, run in order (see --list-passes)")
    o.add_argument("--list-passes", action="store_true", help="print the names of the passes")
    o.add_argument("--no-verify", action="store_true", help="do not run the verifier after each pass")
    o.add_argument("-o", "--output", help="file to write the module to (default: standard output)")
    o.set_defaults(fn=cmd_opt)
    c = sub.add_parser("compile", help="compile ahead of time to an object file and a C header")
    c.add_argument("module", help="HLO text file")
    c.add_argument("-o", "--output", required=True, help="object file to write (ELF, position independent)")
    c.add_argument("--header", help="C header to write (default: OUT.o with .h)")
    c.add_argument("--name", default="fn", help="C name of the entry function (default: fn)")
    c.add_argument("--target-triple", help="LLVM target triple (default: this host, its CPU and features)")
    c.add_argument("--cpu", help="LLVM CPU name the object is for (default: this machine's, with every "
                   "extension it has; generic for --target-triple); an older CPU's for an object that runs "
                   "on older machines: x86-64-v2, x86-64-v3, x86-64-v4, haswell, znver2, generic, ...")
    c.add_argument("--features", help="LLVM features on top of the CPU's, e.g. +avx2,+fma or -avx512f")
    c.set_defaults(fn=cmd_compile)
    # Options after `bench` are the harness's own (python -m benchmarks --help): main()
    # hands them over unparsed.
    bn = sub.add_parser("bench", add_help=False, help="time a module (xlac bench MODULE.hlo --help), "
                        "or run the kernel benchmarks (xlac bench --help)")
    bn.set_defaults(fn=cmd_bench, bench_args=[])
    ops = sub.add_parser("ops", help="print which operations xlac supports, stage by stage (markdown)")
    ops.set_defaults(fn=cmd_ops)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "bench":
        args.bench_args = extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    from .errors import HloParseError, ShapeError, UnsupportedError
    try:
        return args.fn(args)
    except HloParseError as ex:
        print(f"xlac: {args.module}: {ex}", file=sys.stderr)
    except (ShapeError, UnsupportedError, TypeError, ValueError, KeyError, MemoryError) as ex:
        print(f"xlac: error: {ex}", file=sys.stderr)
    except OSError as ex:
        print(f"xlac: {ex.filename or ''}: {ex.strerror or ex}", file=sys.stderr)
    except KeyboardInterrupt:
        print("xlac: interrupted", file=sys.stderr)
        return 130
    except RecursionError:
        # The parser and verifier bound nesting (MAX_TUPLE_DEPTH, MAX_RANK,
        # MAX_CALL_DEPTH) so this should not happen; if a combination of deep
        # structures still exhausts Python's stack, say so in words.
        where = f"{args.module}: " if getattr(args, "module", None) else ""
        print(f"xlac: error: {where}the module nests too deeply for xlac (Python's recursion "
              "limit was reached); see the limits in xlac.hlo.parser", file=sys.stderr)
    except Exception as ex:  # noqa: BLE001 - a bug in xlac: still one line, not a traceback
        import os
        if os.environ.get("XLAC_TRACEBACK"):
            raise
        print(f"xlac: internal error: {type(ex).__name__}: {ex} (set XLAC_TRACEBACK=1 for details)",
              file=sys.stderr)
        return 3
    return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
