"""The ``xlac`` command line (also ``python -m xlac``).

    xlac run MODULE [--inputs IN.npz | --random-inputs [--seed S]] [--out OUT.npz]
                    [--expected EXP.npz [--rtol R] [--atol A]] [--time] [--reference] [--devices N]
    xlac dump MODULE [--llvm] [--optimized-llvm] [--asm] [--dot] [--after-each-pass]
    xlac opt MODULE --passes p1,p2,... [-o OUT]      xlac opt --list-passes
    xlac compile MODULE -o OUT.o [--header OUT.h] [--name FN] [--target-triple T] [--cpu C]
    xlac bench MODULE [--inputs IN.npz | --seed S] [--repeat N] [--threads N]
    xlac bench [--kernels k1,k2] [--repeat N] [--threads N] [--out DIR] [--quick] ...
    xlac ops            xlac --version

MODULE is an HLO or StableHLO (MLIR) text file, told apart by content; every
command reads it the same way (:func:`_load_module`) and verifies it.

``run``: IN.npz holds the entry parameters as ``arr_0, arr_1, ...`` in
parameter-number order (what ``np.savez(path, *args)`` writes) or by parameter
name (``np.savez(path, x=...)``); ``--random-inputs`` makes them instead, of
the shapes the executable takes (a leading device axis for a per-replica
module, the global arrays for a sharded one).  OUT.npz gets the results as
``arr_0, ...`` (a tuple result flattened in order, a non-tuple result as
``arr_0``), written to exactly the path given.  Without ``--out`` each
result's shape and a short summary is printed.  ``--expected`` compares the
results with an npz written the same way (``numpy.isclose`` with
``--rtol``/``--atol``; NaNs equal) and fails naming the first result that
differs.  ``--time`` prints the compile and run times (and, on several
devices, the device processes' start-up).  ``--reference`` runs the numpy
evaluator instead of compiled code.

``bench MODULE``: compile time, run time (median, min, max) and the rates of
the cost analysis (:mod:`xlac.bench`); without a module, the kernel harness of
the source tree (``python -m benchmarks``).

Errors: one line on stderr, ``xlac: error: MESSAGE``, with ``FILE:LINE:COL:``
after the prefix when the error has a place in the module (:func:`error_line`
formats every one), and the exit status says what kind: 2 a bad command line
(argparse's own errors included, as ``xlac: error: COMMAND: MESSAGE (see
'xlac COMMAND --help')``), 1 bad input (a file, a module, arrays, a failing
run), 3 a bug in xlac, 130 Ctrl-C, 141 standard output closed early (``xlac
dump m.hlo | head``: nothing on stderr).  A success prints nothing on stderr.
"""
from __future__ import annotations

import argparse
import importlib.util
import contextlib
import difflib
import math
import os
import re
import sys
import time

import numpy as np

from .errors import error_line

EXIT_INPUT = 1          # bad input: a file, a module, arrays, a run that fails
EXIT_USAGE = 2          # a bad command line (as argparse)
EXIT_INTERNAL = 3       # a bug in xlac
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_BROKEN_PIPE = 141  # standard output closed early (128 + SIGPIPE)

_MODULE_HELP = "HLO or StableHLO file (told apart by content)"


# ---------------------------------------------------------------------------
# errors: one formatter, one line
# ---------------------------------------------------------------------------

class UsageError(Exception):
    """A bad command line; ``command`` is the subcommand it was for (None:
    xlac's own options or the command word itself)."""

    def __init__(self, message: str, command: str | None = None):
        super().__init__(message)
        self.command = command


def _say(message: str, place: str | None = None) -> None:
    print(error_line(message, place), file=sys.stderr)


def _usage_line(e: UsageError) -> str:
    if e.command is None:
        return error_line(f"{e} (see 'xlac --help')")
    return error_line(f"{e.command}: {e} (see 'xlac {e.command} --help')")


class _ArgumentParser(argparse.ArgumentParser):
    """argparse, whose errors raise :class:`UsageError` (``main`` prints one
    line) instead of printing the usage and exiting."""

    def error(self, message: str):
        command = self.prog.split(" ", 1)[1] if " " in self.prog else None
        if command is None:
            message = _command_word_problem(message, self)
        raise UsageError(message, command)


def _command_word_problem(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's messages about the command word, said in words (with the
    closest command when it looks like a typo)."""
    commands = [c for a in parser._actions if isinstance(a, argparse._SubParsersAction) for c in a.choices]
    known = ", ".join(commands)
    bad = re.match(r"argument command: invalid choice: '(.*?)'", message)
    if bad:
        close = difflib.get_close_matches(bad.group(1), commands, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return f"unknown command '{bad.group(1)}' (the commands are {known}{hint})"
    if "required: command" in message:
        return f"no command given (the commands are {known})"
    return message


def _integer(low: int, high: int, why: str = "", high_text: str | None = None):
    """An argparse ``type=``: an integer in ``[low, high]``; argparse's error
    names the option (``argument --seed: ...``)."""
    def integer(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text[:40]!r}") from None
        if not low <= value <= high:
            shown = value if abs(value) < 10**12 else f"{str(value)[:8]}... ({len(str(value))} digits)"
            raise argparse.ArgumentTypeError(f"must be an integer from {low} to {high_text or high}{why}, "
                                             f"got {shown}")
        return value
    return integer


def _tolerance(text: str) -> float:
    """An argparse ``type=``: a finite tolerance >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text[:40]!r}")
    return value


def _c_identifier(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)")
    return text


def _numeric_types():
    """The bounds of the numeric options, from the limits they meet."""
    from .runtime.pool_state import MAX_WORKERS
    from .runtime.shm_transport import MAX_DEVICES
    return {
        "seed": _integer(0, 2**64 - 1, high_text="2**64-1"),
        "repeat": _integer(1, 100_000),
        "threads": _integer(1, MAX_WORKERS + 1, f" (the thread pool's {MAX_WORKERS} workers and the caller)"),
        "devices": _integer(1, MAX_DEVICES, " (devices on one host)"),
    }


@contextlib.contextmanager
def _file_of(option: str, path: str):
    """Errors reading or writing the file of ``option`` name the option and
    the file (``--inputs in.npz: ...``)."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as e:
        raise ValueError(f"{option} {path}: {e.strerror or e}") from None
    except ValueError as e:
        if str(e).startswith(f"{path}: "):
            raise ValueError(f"{option} {e}") from None
        raise


# ---------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------

def _load_module(path: str, devices: int | None = None):
    """The module in ``path`` (HLO or StableHLO text, told apart by content),
    on ``devices`` devices when given, verified: every command reads its
    module here, so every error about it has the same form."""
    from .hlo.source import read_module_file
    from .hlo.stablehlo import parse_module_text
    from .hlo.verifier import verify
    text = read_module_file(path, arrays_hint="with --inputs IN.npz")
    module = parse_module_text(text, path)
    if devices is not None:
        if module.replica_count * module.num_partitions != 1:
            raise ValueError(f"--devices: {module.name} says it runs on {module.replica_count} replica(s) x "
                             f"{module.num_partitions} partition(s) already")
        module.replica_count = devices
    verify(module)
    return module


def _same_file(a: str, b: str | None) -> bool:
    if not b:
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _check_output(option: str, path: str, inputs: dict) -> None:
    """Refuse, before any work, an output the command could not write or
    that would overwrite one of its inputs (``inputs``: option -> path)."""
    if os.path.isdir(path):
        raise ValueError(f"{option} {path}: is a directory, expected a file name")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ValueError(f"{option} {path}: the directory {os.path.dirname(path) or parent} does not exist")
    for what, other in inputs.items():
        if _same_file(path, other):
            raise ValueError(f"{option} {path}: is the {what} file too; refusing to overwrite it")


# ---------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------

def _flatten(value) -> list:
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def _read_expected(path: str) -> dict:
    """The arrays of ``--expected``, read before anything runs."""
    from .bench import read_npz
    with _file_of("--expected", path):
        return read_npz(path)


def _compare(leaves: list, data: dict, path: str, rtol: float, atol: float) -> None:
    """Raise ``ValueError`` naming the first result that is not close to ``data``'s (``path``'s)."""
    names = [f"arr_{k}" for k in range(len(leaves))]
    missing = [n for n in names if n not in data]
    if missing or len(data) != len(leaves):
        raise ValueError(f"--expected {path}: holds {', '.join(sorted(data)) or 'nothing'}, the module has "
                         f"{len(leaves)} result(s) ({', '.join(names)})")
    from .bench import typed_as
    for n, got in zip(names, leaves):
        want = typed_as(data[n], got.dtype)
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


def _reference_argument_shapes(module) -> list:
    """What ``--reference`` takes: the parameters, with a leading device axis
    on several devices (:func:`_evaluate_reference` gives device d entry d)."""
    from .hlo.sharding import stacked_shape
    devices = module.replica_count * module.num_partitions
    shapes = [p.shape for p in module.entry.parameters]
    return shapes if devices == 1 else [stacked_shape(s, devices) for s in shapes]


def _check_run_options(args) -> None:
    if args.inputs and args.random_inputs:
        raise UsageError("give either --inputs or --random-inputs, not both", "run")
    if args.expected is None and (args.rtol is not None or args.atol is not None):
        raise UsageError("--rtol and --atol are the tolerances of --expected, which is not given", "run")
    if args.seed is not None and not args.random_inputs:
        raise UsageError("--seed is the seed of --random-inputs, which is not given", "run")
    args.rtol = 1e-5 if args.rtol is None else args.rtol
    args.atol = 1e-6 if args.atol is None else args.atol
    args.seed = 0 if args.seed is None else args.seed


def _run_compiled(module, inputs, seed: int):
    """Compile and call ``module``: (results, executable, timing text)."""
    from .bench import format_seconds, random_arrays
    from .devices import jit
    t0 = time.perf_counter()
    exe = jit(module)
    compile_s, startup = time.perf_counter() - t0, ""
    where = {"memory": "in-memory cache", "disk": "disk cache"}.get(getattr(exe, "from_cache", None), "compiled")
    if hasattr(exe, "warm_up"):      # several devices: start their processes, compile on each
        steps = exe.warm_up()            # jit started the processes, then compiled on each
        compile_s -= steps["start-up"]
        where = f"on {exe.num_devices} devices"
        startup = f", device start-up {format_seconds(steps['start-up'])}"
    if inputs is None:
        inputs = random_arrays(exe.argument_shapes, seed)
    t1 = time.perf_counter()
    result = exe(*inputs)
    run_s = time.perf_counter() - t1
    timing = (f"compile {format_seconds(compile_s)} ({where}){startup}, run {format_seconds(run_s)} "
              "(one call; xlac bench for repeated timing)")
    return result, exe, timing


def cmd_run(args) -> int:
    from .bench import format_seconds, load_inputs, random_arrays, write_npz
    _check_run_options(args)
    module = _load_module(args.module, args.devices)
    if args.out:
        _check_output("--out", args.out, {"module": args.module, "--inputs": args.inputs,
                                          "--expected": args.expected})
    inputs = None
    if not args.random_inputs:
        with _file_of("--inputs", args.inputs):
            inputs = load_inputs(args.inputs, module)
    expected = _read_expected(args.expected) if args.expected else None
    if args.reference:
        if inputs is None:
            inputs = random_arrays(_reference_argument_shapes(module), args.seed)
        t0 = time.perf_counter()
        result = _evaluate_reference(module, inputs)
        timing = f"evaluate {format_seconds(time.perf_counter() - t0)} (numpy reference evaluator)"
    else:
        result, exe, timing = _run_compiled(module, inputs, args.seed)
        if getattr(exe, "rank", 0) != 0:
            return 0            # under mpiexec, rank 0 writes the results
    if args.time:
        print(timing)
    # A token result is written as an empty u8 array (what the evaluator returns).
    shapes = module.entry.root.shape.leaves()
    leaves = [np.zeros(0, np.uint8) if s.is_token else np.asarray(x) for s, x in zip(shapes, _flatten(result))]
    if args.out:
        with _file_of("--out", args.out):
            write_npz(args.out, leaves)
    elif not args.expected:
        for k, (s, a) in enumerate(zip(shapes, leaves)):
            print(f"arr_{k}: {'token' if s.is_token else _summary(a)}")
    if args.expected:
        _compare(leaves, expected, args.expected, args.rtol, args.atol)
        print(f"all {len(leaves)} result(s) match {args.expected} (rtol={args.rtol:g}, atol={args.atol:g})")
    return 0


# ---------------------------------------------------------------------------
# opt, dump, compile, ops
# ---------------------------------------------------------------------------

def _print_after_pass(pipeline: str, pass_name: str, module, changed: bool) -> None:
    """``--after-each-pass``: a header per pass run, the module when it changed."""
    print(f"// ---- after {pipeline}.{pass_name}{'' if changed else ' (no change)'} ----")
    if changed:
        print(module.to_text())


def cmd_opt(args) -> int:
    """Run the named passes on the module and print it (as mlir-opt / hlo-opt)."""
    from .passes.pipeline import PASSES, run_passes
    if args.list_passes:
        print("\n".join(PASSES))
        return 0
    if args.module is None or args.passes is None:
        raise UsageError("give a module and --passes p1,p2,... (--list-passes lists them)", "opt")
    if args.output:
        _check_output("-o", args.output, {"module": args.module})
    module = _load_module(args.module)
    run_passes(module, args.passes, verify=not args.no_verify)
    text = module.to_text() + "".join(f"// {d}\n" for d in module.diagnostics)
    if args.output:
        with _file_of("-o", args.output), open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_dump(args) -> int:
    from .codegen.compiler import lower
    from .hlo.source import read_module_file
    from .hlo.stablehlo import is_stablehlo
    from .passes.pipeline import dump_hook
    from .passes.spmd_partitioner import partition_module, spmd_report
    module = _load_module(args.module)
    hook = contextlib.nullcontext()
    if is_stablehlo(read_module_file(args.module)):
        print("// ---- imported from StableHLO ----")
        print(module.to_text())
    # A global program with automatic shardings: what is lowered and printed
    # is the per-device program (as XLA's compiled.as_text() shows).
    partitioned = partition_module(module) is not None
    if args.after_each_pass:
        print("// ---- input ----")
        print(module.to_text())
        hook = dump_hook(_print_after_pass)
    with hook:
        # The per-device program runs on this host's device processes (the
        # JIT): planned as the JIT plans it (GEMM scratch for the threads the
        # process may use), so the peak memory reported is what a device holds.
        lowered = lower(module, native=partitioned)
    if args.after_each_pass:
        print("// ---- final module and buffer assignment ----")
    print(lowered.hlo.to_text())
    for note in lowered.hlo.diagnostics:
        print(f"// {note}")
    print(lowered.assignment.summary())
    if partitioned:
        for line in spmd_report(lowered.hlo, lowered.assignment.temp_size, lowered.assignment.largest_scratch()):
            print(f"// {line}")
    if args.llvm:
        print(lowered.llvm_ir)
    if args.optimized_llvm:
        from .codegen.jit import optimized_ir
        print(optimized_ir(lowered.llvm_module, lowered.entry_name))
    if args.asm:
        from .codegen.jit import PROGRAM_SPEED_LEVEL, assembly, host_target_machine, parse_and_optimize
        print(assembly(parse_and_optimize(lowered.llvm_module, host_target_machine(), PROGRAM_SPEED_LEVEL)))
    if args.dot:
        from .hlo.dot_graph import to_dot
        print(to_dot(lowered.hlo))
    return 0


def cmd_compile(args) -> int:
    from .aot import compile_aot
    header = args.header
    if header is None:
        header = (args.output[:-2] if args.output.endswith(".o") else args.output) + ".h"
    _check_output("-o", args.output, {"module": args.module})
    _check_output("--header", header, {"module": args.module, "-o": args.output})
    module = _load_module(args.module)
    res = compile_aot(module, args.output, header=header, name=args.name, target=args.target_triple,
                      cpu=args.cpu, features=args.features)
    print(f"wrote {res.object_path} ({res.name}, {res.name}_info) and {res.header_path} for CPU "
          f"{res.cpu or 'generic'}: {len(res.params)} parameter(s), {len(res.results)} result(s), "
          f"temp {res.temp_size} bytes")
    return 0


def cmd_ops(args) -> int:
    """``xlac ops``: the support matrix (what ``docs/ops.md`` holds)."""
    from .support import markdown
    sys.stdout.write(markdown())
    return 0


# ---------------------------------------------------------------------------
# bench
# ---------------------------------------------------------------------------

def _bench_module_parser() -> argparse.ArgumentParser:
    types = _numeric_types()
    p = _ArgumentParser(prog="xlac bench", description="compile a module and time calls of it")
    p.add_argument("module", help=_MODULE_HELP)
    given = p.add_mutually_exclusive_group()
    given.add_argument("--inputs", help=".npz of the parameters (arr_0, ... or by name); default: random")
    given.add_argument("--seed", type=types["seed"], default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--repeat", type=types["repeat"], default=15, help="timed samples (default 15)")
    p.add_argument("--threads", type=types["threads"], help="threads of the executable (default: every CPU)")
    xla = p.add_mutually_exclusive_group()
    xla.add_argument("--xla", action="store_true", default=None,
                     help="time XLA:CPU on the same module too (default: when jax is installed and "
                          "XLAC_BENCH_XLA is not 0)")
    xla.add_argument("--no-xla", dest="xla", action="store_false", help="do not time XLA:CPU")
    p.add_argument("--no-roofline", action="store_true", help="do not place the module on the roofline")
    p.add_argument("--refresh-stream", action="store_true",
                   help="measure the STREAM triad again instead of using the cached bandwidth")
    p.add_argument("--plot", metavar="PNG", help="write the roofline chart to PNG (needs matplotlib)")
    return p


def _xla_by_default() -> bool:
    """``xlac bench MODULE`` times XLA:CPU too unless told not to: jax installed and
    ``XLAC_BENCH_XLA`` not ``0`` (the tests' setting: each run starts jax)."""
    return os.environ.get("XLAC_BENCH_XLA", "1") != "0" and importlib.util.find_spec("jax") is not None


def cmd_bench_module(argv: list) -> int:
    """``xlac bench MODULE ...``: compile time, run times and the cost analysis's rates."""
    from .bench import benchmark, load_inputs
    args = _bench_module_parser().parse_args(argv)
    module = _load_module(args.module)
    inputs = None                   # random, of the shapes the executable takes
    if args.inputs:
        with _file_of("--inputs", args.inputs):
            inputs = load_inputs(args.inputs, module)
    result = benchmark(module, inputs, repeat=args.repeat, threads=args.threads, seed=args.seed,
                       roofline=not args.no_roofline, refresh_stream=args.refresh_stream)
    xla = args.xla if args.xla is not None else _xla_by_default()
    if xla and result.devices == 1:
        from .bench import xla_cpu_times
        try:
            result.xla = xla_cpu_times(args.module, args.inputs, args.seed, args.repeat)
        except RuntimeError as e:
            if args.xla:                    # asked for by name: its failure is the command's
                raise ValueError(f"--xla: XLA:CPU on {args.module}: {e}") from None
    if args.plot:
        from .bench import roofline_chart
        roofline_chart(result, args.plot)
    print(result.report())
    return 0


def _harness():
    """``benchmarks/__main__.py`` of the source tree (not installed with the package)."""
    try:
        import benchmarks.__main__ as bench
    except ImportError:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if not os.path.isfile(os.path.join(root, "benchmarks", "__main__.py")):
            raise ValueError("bench: the benchmarks/ directory of xlac's source tree is not "
                             "here (it is not installed with the package)") from None
        sys.path.insert(0, root)
        import benchmarks.__main__ as bench
    return bench


def _check_harness_args(bench, argv: list) -> None:
    """The harness's options checked here, so that a bad one is the same one
    line as every other usage error (the harness may run in a new process)."""
    parser = bench.build_parser("xlac bench")

    def error(message):
        raise UsageError(message, "bench")
    parser.error = error
    if "-h" in argv or "--help" in argv:
        return                      # the harness prints its help
    problem = bench._check_args(parser.parse_args(argv))
    if problem:
        raise UsageError(problem, "bench")


def cmd_bench(args) -> int:
    """``xlac bench MODULE ...``: one module (:mod:`xlac.bench`); ``xlac bench
    [options]``: the kernel harness of the source tree (``python -m benchmarks``)."""
    if args.bench_args and not args.bench_args[0].startswith("-"):
        args.module = args.bench_args[0]
        return cmd_bench_module(args.bench_args)
    blas_timeout_set = "OPENBLAS_THREAD_TIMEOUT" in os.environ   # before benchmarks/ sets it
    bench = _harness()
    _check_harness_args(bench, args.bench_args)
    # (`xlac ...` or `python -m xlac ...`; not another program's `python -m`, e.g. pytest's)
    started_as_cli = os.path.basename(sys.argv[0]) == "xlac" or \
        sys.argv[0].endswith(os.path.join("xlac", "__main__.py"))
    if not blas_timeout_set and "numpy" in sys.modules and started_as_cli:
        # numpy (imported by xlac) has loaded OpenBLAS before the harness could set
        # the variable (see benchmarks/__init__.py): start the harness afresh with it
        # (only when this process is the command line, never inside a caller's process).
        root = os.path.dirname(os.path.dirname(os.path.abspath(bench.__file__)))
        env = dict(os.environ, OPENBLAS_THREAD_TIMEOUT="4",
                   PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, "-m", "benchmarks", *args.bench_args], env)
    return bench.main(args.bench_args, prog="xlac bench")


# ---------------------------------------------------------------------------
# the parser and main
# ---------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    types = _numeric_types()
    p = _ArgumentParser(prog="xlac", description="XLA for the CPU, in Python. The user "
                        "guide is docs/guide.md of the source tree.")
    p.add_argument("--version", action="version", version=f"xlac {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="compile and run a module on inputs from an .npz")
    r.add_argument("module", help=_MODULE_HELP)
    r.add_argument("--inputs", help=".npz with arr_0, arr_1, ... in parameter order, or keyed by "
                   "parameter name")
    r.add_argument("--out", help="file to write the results to, as an .npz (arr_0, arr_1, ...)")
    r.add_argument("--random-inputs", action="store_true",
                   help="call the module on random arrays of the shapes it takes (see --seed)")
    r.add_argument("--seed", type=types["seed"], help="seed of --random-inputs (default 0)")
    r.add_argument("--expected", help=".npz of the expected results (arr_0, ...): compare, fail on a mismatch")
    r.add_argument("--rtol", type=_tolerance, help="relative tolerance of --expected (default 1e-5)")
    r.add_argument("--atol", type=_tolerance, help="absolute tolerance of --expected (default 1e-6)")
    r.add_argument("--time", action="store_true", help="print the compile time and the run time")
    r.add_argument("--reference", action="store_true", help="use the numpy reference evaluator")
    r.add_argument("--devices", type=types["devices"], help="run a per-replica module that does not say "
                   "replica_count on N devices (arguments and results then have a leading axis of N)")
    r.set_defaults(fn=cmd_run)
    d = sub.add_parser("dump", help="print the optimised module and its buffer assignment")
    d.add_argument("module", help=_MODULE_HELP)
    d.add_argument("--llvm", action="store_true", help="also print the LLVM IR as emitted")
    d.add_argument("--optimized-llvm", action="store_true", help="also print the LLVM IR after LLVM's optimisation")
    d.add_argument("--asm", action="store_true", help="also print the host assembly of the module")
    d.add_argument("--dot", action="store_true",
                   help="also print the optimised module as a Graphviz graph (dot -Tsvg)")
    d.add_argument("--after-each-pass", action="store_true",
                   help="first print the module after every pass (pass name as a header)")
    d.set_defaults(fn=cmd_dump)
    o = sub.add_parser("opt", help="run HLO passes on a module and print the result")
    o.add_argument("module", nargs="?", help=_MODULE_HELP)
    o.add_argument("--passes", help="comma-separated pass names, run in order (see --list-passes)")
    o.add_argument("--list-passes", action="store_true", help="print the names of the passes")
    o.add_argument("--no-verify", action="store_true", help="do not run the verifier after each pass")
    o.add_argument("-o", "--output", help="file to write the module to (default: standard output)")
    o.set_defaults(fn=cmd_opt)
    c = sub.add_parser("compile", help="compile ahead of time to an object file and a C header")
    c.add_argument("module", help=_MODULE_HELP)
    c.add_argument("-o", "--output", required=True, help="object file to write (ELF, position independent)")
    c.add_argument("--header", help="C header to write (default: OUT.o with .h)")
    c.add_argument("--name", default="fn", type=_c_identifier, help="C name of the entry function (default: fn)")
    c.add_argument("--target-triple", help="LLVM target triple (default: this host, its CPU and features)")
    c.add_argument("--cpu", help="LLVM CPU name the object is for (default: this machine's, with every "
                   "extension it has; generic for --target-triple); an older CPU's for an object that runs "
                   "on older machines: x86-64-v2, x86-64-v3, x86-64-v4, haswell, znver2, generic, ...")
    c.add_argument("--features", help="LLVM features on top of the CPU's, e.g. +avx2,+fma or -avx512f")
    c.set_defaults(fn=cmd_compile)
    # Options after `bench` are the module benchmark's or the harness's own
    # (xlac bench MODULE --help, xlac bench --help): main() hands them over unparsed.
    bn = sub.add_parser("bench", add_help=False, help="time a module (xlac bench MODULE --help), "
                        "or run the kernel benchmarks (xlac bench --help)")
    bn.set_defaults(fn=cmd_bench, bench_args=[])
    ops = sub.add_parser("ops", help="print which operations xlac supports, stage by stage (markdown)")
    ops.set_defaults(fn=cmd_ops)
    return p


def _parse(argv):
    args, extra = build_parser().parse_known_args(argv)
    if args.command == "bench":
        args.bench_args = extra
    elif extra:
        raise UsageError(f"unrecognized arguments: {' '.join(extra)}", args.command)
    return args


def utf8_stdout() -> None:
    """Standard output carries module text, IR and assembly, which are UTF-8
    whatever the locale says (HLO and MLIR text are; a module's metadata may
    hold any character): in an ASCII locale (``LC_ALL=C`` with
    ``PYTHONUTF8=0``) it is switched to UTF-8, and a command-line argument
    that was not decodable (a file name) goes out as the bytes it came as
    (``surrogateescape``).  Standard error needs no switch: Python escapes
    what its encoding cannot show."""
    import codecs
    try:
        utf8 = codecs.lookup(sys.stdout.encoding).name == "utf-8"
    except (AttributeError, TypeError, LookupError):
        utf8 = False
    if not utf8 and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8", errors="surrogateescape")


def _stdout_closed() -> bool:
    """Whether standard output is a pipe nobody reads any more (``| head``)."""
    try:
        import select
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, ValueError, OSError):
        return False


def _quiet_broken_pipe() -> int:
    """Standard output went away (``xlac dump m.hlo | head``): stop quietly,
    as a C program killed by SIGPIPE does; what Python still holds for
    stdout goes to /dev/null at exit instead of another error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, ValueError, OSError):
        pass
    return EXIT_BROKEN_PIPE


def _input_errors() -> tuple:
    from .errors import CollectiveError, CustomCallError, FeedError, ShapeError, UnsupportedError
    return (ShapeError, UnsupportedError, CollectiveError, CustomCallError, FeedError, TypeError, ValueError,
            KeyError, MemoryError)


def _is_internal(ex: BaseException) -> bool:
    """An error no input explains: a bug in xlac."""
    return not isinstance(ex, (UsageError, KeyboardInterrupt, RecursionError, OSError) + _input_errors())


def _report(ex: BaseException, args) -> int:
    """Print ``ex`` as one line; the exit status (see the module docstring)."""
    module = getattr(args, "module", None)
    if isinstance(ex, UsageError):
        print(_usage_line(ex), file=sys.stderr)
        return EXIT_USAGE
    if isinstance(ex, KeyboardInterrupt):
        _say("interrupted")
        return EXIT_INTERRUPTED
    if isinstance(ex, RecursionError):
        # The parser and verifier bound nesting (MAX_TUPLE_DEPTH, MAX_RANK,
        # MAX_CALL_DEPTH) so this should not happen; if a combination of deep
        # structures still exhausts Python's stack, say so in words.
        _say("the module nests too deeply for xlac (Python's recursion limit was reached); see the "
             "limits in xlac.hlo.parser", module)
        return EXIT_INPUT
    if isinstance(ex, OSError) and not isinstance(ex, BrokenPipeError):
        _say(ex.strerror or str(ex), None if ex.filename is None else str(ex.filename))
        return EXIT_INPUT
    if not _is_internal(ex):
        line = getattr(ex, "line", 0)
        if line and module:          # a place in the module: FILE:LINE:COL
            _say(getattr(ex, "message", None) or str(ex), f"{module}:{line}:{getattr(ex, 'column', 0) or 1}")
        else:
            _say(str(ex) or type(ex).__name__)
        return EXIT_INPUT
    _say(f"internal error: {type(ex).__name__}: {ex} (a bug in xlac: XLAC_TRACEBACK=1 shows where; "
         "please report it)")
    return EXIT_INTERNAL


def main(argv=None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); the exit status."""
    args = None
    utf8_stdout()
    try:
        args = _parse(argv)
        code = args.fn(args)
        sys.stdout.flush()          # a closed pipe shows here, not at exit
        return code
    except SystemExit as e:         # --help, --version: argparse has printed them
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        raise
    except BrokenPipeError:
        if _stdout_closed():
            return _quiet_broken_pipe()
        return _report(OSError("a pipe closed early (broken pipe)"), args)
    except Exception as ex:  # noqa: BLE001 - every error is one line, never a traceback
        if os.environ.get("XLAC_TRACEBACK") and _is_internal(ex):
            raise
        return _report(ex, args)
    except KeyboardInterrupt as ex:
        return _report(ex, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
