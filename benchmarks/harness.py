"""Timing of the benchmark kernels: xlac (from the JAX-exported HLO and from the
builder), numpy, and jax.jit / numba when they are installed.

Timing rules (the same for every implementation):

* one warm-up call first (for jax and numba it also compiles; its time is
  recorded as their first-call time; jax's is the best of ``COMPILE_SAMPLES``
  first calls of freshly jitted functions);
* then ``repeat`` samples (default 15) timed with ``time.perf_counter``,
  interleaved round-robin across the implementations of a kernel (so a change in
  the load of a shared machine hits them alike); each timed sample follows one
  untimed run of the same implementation (calls for at least ``SETTLE_S``),
  so that its worker threads are awake and the previous implementation's idle
  threads (OpenBLAS and others spin for a while after a call) have settled,
  and each round runs the implementations in a new (seeded) order, so that
  none always follows the same other; a sample is ``inner`` calls
  divided by ``inner``, where ``inner`` makes a sample
  last at least ~1 ms (so an 8-element add is timed over many calls); the
  median is reported.  A kernel so slow that ``repeat`` samples would take more
  than ``budget`` seconds gets fewer samples (never fewer than 3) and the table
  says how many;
* "every call allocating its output": each call returns a new array that is
  dropped before the next call, as ``f(x)`` does for a user (numpy's
  temporaries, jax's output buffer, xlac's result array);
* "steady state with buffer reuse": xlac with the argument of the result's
  shape donated (``donate_argnums``) and each result fed back as the next
  call's argument; otherwise not measured.

Before timing, each implementation's result is checked against numpy's:
``max|result - numpy| / max|numpy|`` must be at most the kernel's tolerance.

Compile time is ``xlac.jit`` of the HLO text (parsing included) in this
process, the best of ``COMPILE_SAMPLES`` compilations; when the runtime has an
on-disk cache (``XLAC_CACHE_DIR``) the harness also times ``xlac.jit`` in two
fresh processes sharing a new cache directory
(the first compiles and fills it, the second loads the object from it), each
after ``import xlac`` and its runtime modules (timed separately: a fresh
interpreter's imports are not the cache's cost).
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import gc
import inspect
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from . import kernels as K

REPO = Path(__file__).resolve().parent.parent
DEFAULT_HLO_DIR = REPO / "benchmarks" / "hlo"


#: Before each timed sample an implementation runs untimed for at least this
#: long (seconds), so that the previous implementation's after-effects have
#: passed: idle threads (jax's, OpenBLAS's, OpenMP's) spin for a while after
#: a call, and right after numpy's softmax (16 MiB temporaries freed) xlac's
#: softmax ran 0.76 ms instead of 0.58 for the first ~5 ms (3 ms of settling
#: left a 20% gap between two identical programs, 10 ms none).
SETTLE_S = 0.01
#: Compile times (xlac.jit of the HLO text, jax's first call) are the best of
#: this many compilations: one sample caught another library's idle threads
#: still spinning on both cores (a 48 ms compile timed at 137 ms).
COMPILE_SAMPLES = 3


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------
# what the installed xlac runtime supports (feature detection, never assumed)
# ---------------------------------------------------------------------------------

def _accepts(fn, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params


def capabilities() -> dict:
    """Which optional runtime features this xlac has (looked up, never assumed)."""
    import importlib.util

    import xlac
    from xlac import executable as ex
    src = ""
    for p in Path(xlac.__file__).parent.rglob("*.py"):
        try:
            src += p.read_text(errors="replace")
        except OSError:
            pass
    return {
        "num_threads": _accepts(xlac.jit, "num_threads"),
        "donate_argnums": _accepts(xlac.jit, "donate_argnums"),
        "out": _accepts(ex.Executable.__call__, "out"),
        "disk_cache": "XLAC_CACHE_DIR" in src,
        "caching_allocator": importlib.util.find_spec("xlac.runtime.allocator") is not None,
    }


def jit_kwargs(caps: dict, threads: int | None) -> dict:
    return {"num_threads": threads} if threads and caps.get("num_threads") else {}


def reuse_call(source, args, caps: dict, threads: int | None = None, result_index=None):
    """(callable, description, first result) calling xlac with its output in reused memory,
    or (None, reason, None).

    With ``out=`` in the runtime: outputs preallocated once.  Otherwise with
    ``donate_argnums``: the argument of the output's shape is donated and each
    call's result is the next call's argument (``y = f(y, ...)``), so no call
    allocates.  The result of the first call is checked against the memory it was
    donated, so a donation the runtime declines is reported, not timed.
    """
    import xlac
    kw = jit_kwargs(caps, threads)
    if caps.get("out"):
        exe = xlac.jit(source, **kw)
        try:
            first = exe(*args)
            exe(*args, out=first)
        except Exception as e:  # noqa: BLE001 - an unsupported form of out=: not measured
            return None, f"out= failed: {type(e).__name__}: {e}", None
        return (lambda: exe(*args, out=first)), "outputs preallocated (out=)", first.copy()
    if not caps.get("donate_argnums"):
        return None, "runtime has neither out= nor donate_argnums", None
    k = result_index
    if k is None:
        return None, "no argument of the result's shape to donate", None
    exe = xlac.jit(source, donate_argnums=(k,), **kw)
    if not getattr(exe, "donations", [True]):
        return None, f"runtime declines to donate argument {k}", None
    state = [np.array(args[k], copy=True)]
    rest = list(args)

    def call():
        rest[k] = state[0]
        state[0] = exe(*rest)
        return state[0]
    before = state[0]
    out = call()
    if not isinstance(out, np.ndarray) or not np.shares_memory(out, before):
        return None, "donated argument's memory not reused", None
    return call, f"argument {k} donated, result fed back", out.copy()


def donatable_index(args, ref) -> int | None:
    """The first argument with the result's shape and dtype (the one to donate)."""
    if not isinstance(ref, np.ndarray) or ref.ndim == 0:
        return None
    for k, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.shape == ref.shape and a.dtype == ref.dtype:
            return k
    return None


# ---------------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------------

@dataclass
class Timing:
    median_s: float
    runs: int
    inner: int
    min_s: float
    first_call_s: float | None = None


def check(result, ref, tol: float) -> tuple[bool, float, str]:
    """(ok, normalised error, text) comparing ``result`` with the numpy reference."""
    try:
        # complex results compared as complex (a float cast would drop the imaginary part)
        wide = np.complex128 if np.iscomplexobj(result) or np.iscomplexobj(ref) else np.float64
        r = np.asarray(result, dtype=wide)
        e = np.asarray(ref, dtype=wide)
    except Exception as ex:  # noqa: BLE001
        return False, float("inf"), f"not an array: {type(ex).__name__}"
    if r.shape != e.shape:
        return False, float("inf"), f"shape {r.shape} != {e.shape}"
    if r.size == 0:
        return True, 0.0, "ok"
    same_nan = np.isnan(r) == np.isnan(e)
    if not same_nan.all():
        return False, float("inf"), "NaN mismatch"
    fin = ~np.isnan(e)
    err = float(np.max(np.abs(r[fin] - e[fin]), initial=0.0))
    scale = float(np.max(np.abs(e[fin]), initial=0.0))
    rel = err / scale if scale > 0 else err
    ok = rel <= tol or err == 0.0
    return ok, rel, ("ok" if ok else "FAIL")


# ---------------------------------------------------------------------------------
# optional comparison libraries
# ---------------------------------------------------------------------------------

def _optional(name: str):
    try:
        return __import__(name)
    except Exception:  # noqa: BLE001 - absent or broken: that column is skipped
        return None


def versions() -> dict:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "llvmlite", "jax", "jaxlib", "numba", "matplotlib"):
        m = _optional(mod)
        out[mod] = getattr(m, "__version__", None) if m else None
    return out


def _loadavg() -> list | None:
    """1-, 5- and 15-minute load averages (other processes compete for the cores)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def sweep_record(repeat: int, rows: list) -> dict:
    """A sweep's rows with the machine (and its load average now), the
    versions, the samples per measurement and the date (UTC)."""
    info = machine()
    load = _loadavg()
    if load:
        info["load_average"] = load
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return {"machine": info, "versions": versions(), "repeat": repeat, "date": when, "rows": rows}


def publish(text: str, res: dict, out: str | None, name: str) -> None:
    """Print a sweep's Markdown ``text``; with ``out``, write it and ``res``
    as ``out/name.md`` and ``out/name.json``."""
    print(text)
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"{name}.md"), "w", encoding="utf-8") as fh:
            fh.write(text)
        with open(os.path.join(out, f"{name}.json"), "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=1)


def machine() -> dict:
    cpu, mem = platform.processor() or platform.machine(), None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal"):
                    mem = f"{int(line.split()[1]) / 1024 ** 2:.1f} GiB"
                    break
    except OSError:
        pass
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("flags"):
                    fl = line.split()
                    flags = ",".join(f for f in ("avx2", "fma", "avx512f", "avx512_bf16") if f in fl)
                    break
    except OSError:
        pass
    commit = None
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, encoding="utf-8", timeout=10).stdout.strip() or None
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "xlac"],
                               capture_output=True, encoding="utf-8", timeout=10).stdout.strip()
        if commit and dirty:
            commit += " with uncommitted changes to xlac/"
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    return {"cpu": cpu, "cores": os.cpu_count(), "usable_cpus": usable, "memory": mem, "simd": flags,
            "os": f"{platform.system()} {platform.release()}", "xlac_commit": commit}


# ---------------------------------------------------------------------------------
# one kernel
# ---------------------------------------------------------------------------------

@dataclass
class Impl:
    """One implementation's result for one kernel."""
    ms: float | None = None
    runs: int = 0
    first_call_ms: float | None = None
    check: str = ""
    error: float | None = None
    ok: bool | None = None
    note: str = ""


@dataclass
class Row:
    name: str
    label: str
    size: str
    kind: str
    nbytes: int
    flops: int
    primary: str = "xlac_hlo"                       # the xlac column ratios and rates use
    kernel_note: str = ""
    impls: dict = field(default_factory=dict)       # column -> Impl
    compile_ms: dict = field(default_factory=dict)  # hlo / builder / build / disk_cold / disk_hit
    note: str = ""
    reuse_note: str = ""
    stream_gbs: float | None = None     # the native STREAM triad, sampled in the same rounds
    gemm_gflops: float | None = None    # xlac's GEMM of ``gemm_label``, sampled in the same rounds
    gemm_label: str = ""


def _prepare(row: Row, col: str, make_call, ref, tol: float) -> "object | None":
    """Build ``col``'s call, warm it up (timed as its first call) and check its result
    against ``ref``; the call, or None when it failed (recorded in the row)."""
    imp = Impl()
    row.impls[col] = imp
    try:
        call = make_call()
        t = time.perf_counter()
        result = call()
        imp.first_call_ms = (time.perf_counter() - t) * 1e3
        imp.ok, imp.error, imp.check = check(result, ref, tol)
        del result
        return call
    except Exception as e:  # noqa: BLE001 - recorded in the table, the run goes on
        _failed(imp, col, e)
        return None
    finally:
        gc.collect()


def _failed(imp: Impl, col: str, e: BaseException) -> None:
    imp.ok = False if imp.ok is None else imp.ok
    imp.check = imp.check or "error"
    imp.ms = None
    imp.note = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160]
    log(f"    {col}: {imp.note}")


#: :func:`_one_call_s` times at most this many calls, for at most this long (seconds).
CALIBRATION_CALLS, CALIBRATION_S = 5, 0.05


def _one_call_s(fn) -> float:
    """The time of one call of ``fn``, for sizing samples: the fastest of a few calls.
    One call was not enough: the first call of an implementation after another's ran
    up to 40x slower (90 µs for a 2.4 µs add), giving it 11 calls per sample instead
    of 111, and samples that short came out 50% slower (3.8 against 2.5 µs per call,
    the same executable)."""
    best, spent = float("inf"), 0.0
    for _ in range(CALIBRATION_CALLS):
        t = time.perf_counter()
        fn()
        took = time.perf_counter() - t
        best, spent = min(best, took), spent + took
        if spent > CALIBRATION_S:
            break
    return max(best, 1e-9)


def time_interleaved(calls: dict, repeat: int = 15, budget: float = 30.0, min_sample: float = 1e-3,
                     min_runs: int = 3) -> dict:
    """{name: Timing} of warm callables, sampled round-robin (one sample of each per round,
    so a change in the machine's load hits them all alike).  The fastest of a few timed
    calls of each (:func:`_one_call_s`) sets its ``inner`` (calls per sample, so that a sample lasts ``min_sample``) and its number
    of samples (``repeat``, fewer but at least ``min_runs`` when they would take more than
    ``budget`` seconds).  A callable that raises is dropped and its exception returned in
    place of its Timing."""
    plan, out = {}, {}
    for name, fn in calls.items():
        try:
            one = _one_call_s(fn)
        except Exception as e:  # noqa: BLE001
            out[name] = e
            continue
        inner = max(1, int(min_sample / one)) if one < min_sample else 1
        runs = repeat
        if one * inner * repeat > budget:
            runs = max(min_runs, int(budget / (one * inner)))
        plan[name] = (fn, inner, runs, [])
    names = list(plan)
    order = np.random.default_rng(0)
    for r in range(max((v[2] for v in plan.values()), default=0)):
        # A new order each round (seeded), so that no implementation always
        # follows the same one (whose after-effects the settling may miss).
        for name in [names[k] for k in order.permutation(len(names))]:
            fn, inner, runs, samples = plan[name]
            if r >= runs or name in out:
                continue
            try:
                if len(plan) > 1:   # settle: see the module docstring
                    t = time.perf_counter()
                    fn()
                    while time.perf_counter() - t < SETTLE_S:
                        fn()
                t = time.perf_counter()
                for _ in range(inner):
                    fn()
                samples.append((time.perf_counter() - t) / inner)
            except Exception as e:  # noqa: BLE001
                out[name] = e
    for name, (fn, inner, runs, samples) in plan.items():
        if name not in out:
            out[name] = Timing(float(np.median(samples)), runs, inner, float(np.min(samples)))
    return out


def _disk_cache_times(hlo_text: str, threads: int | None, caps: dict) -> tuple[float, float, float]:
    """(cold ms, from-cache ms, import ms) of xlac.jit of ``hlo_text`` in two fresh
    processes sharing a new XLAC_CACHE_DIR, timed after the imports (import ms: the
    second process's ``import xlac`` and runtime modules)."""
    code = ("import sys, time\n"
            "t0 = time.perf_counter()\n"
            "import xlac, xlac.executable, xlac.codegen.compiler, xlac.codegen.jit\n"
            "import xlac.hlo.parser, llvmlite.binding\n"
            "t1 = time.perf_counter()\n"
            "text = open(sys.argv[1]).read()\n"
            "kw = {'num_threads': int(sys.argv[2])} if sys.argv[2] != '0' else {}\n"
            "t = time.perf_counter(); xlac.jit(text, **kw)\n"
            "print((t1 - t0) * 1e3, (time.perf_counter() - t) * 1e3)\n")
    with tempfile.TemporaryDirectory(prefix="xlac-bench-cache-") as d:
        path = os.path.join(d, "module.hlo")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(hlo_text)
        env = dict(os.environ, XLAC_CACHE_DIR=os.path.join(d, "cache"))
        env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
        th = str(threads if threads and caps.get("num_threads") else 0)
        out = []
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", code, path, th], env=env, capture_output=True,
                               encoding="utf-8", timeout=600)
            if r.returncode != 0:
                lines = (r.stderr or r.stdout).strip().splitlines()
                raise RuntimeError(f"fresh process failed: {lines[-1] if lines else r.returncode}")
            out.append([float(x) for x in r.stdout.strip().splitlines()[-1].split()])
    return out[0][1], out[1][1], out[1][0]


def jax_call(row: Row, k: K.Kernel, args, ref, jax_mod, compile_samples: int = COMPILE_SAMPLES):
    """``k``'s jax.jit call, warmed up and checked (None when it failed, recorded in
    ``row``); its first-call time is the best of ``compile_samples`` freshly jitted
    functions."""
    jargs: list = []
    if any(np.asarray(a).dtype == np.float64 for a in args):
        jax_mod.config.update("jax_enable_x64", True)     # or jax computes f64 inputs in f32

    def make_jax():
        f = jax_mod.jit(k.jax)
        jargs[:] = [jax_mod.device_put(a) for a in args]
        return lambda: f(*jargs).block_until_ready()
    call = _prepare(row, "jax", make_jax, ref, max(k.tol, 1e-4))
    imp = row.impls["jax"]
    for _ in range(1, compile_samples if call is not None else 0):
        f = jax_mod.jit(lambda *a: k.jax(*a))   # a new function: jax traces and compiles again
        t = time.perf_counter()
        try:
            f(*jargs).block_until_ready()
        except Exception as e:  # noqa: BLE001 - the first call worked: keep its time
            log(f"    jax: compiling again failed: {type(e).__name__}: {e}")
            break
        imp.first_call_ms = min(imp.first_call_ms, (time.perf_counter() - t) * 1e3)
    return call


def record_timings(row: Row, timings: dict) -> None:
    """Each column's median (ms) and sample count, or its failure, into ``row``."""
    for col, t in timings.items():
        if isinstance(t, Timing):
            row.impls[col].ms, row.impls[col].runs = t.median_s * 1e3, t.runs
        else:
            _failed(row.impls[col], col, t)


def run_kernel(k: K.Kernel, *, quick: bool, repeat: int, budget: float, threads: int | None,
               hlo_dir: Path | None, jax_mod, numba_mod, caps: dict, disk_cache: bool,
               seed: int = 0, triad=None) -> Row:
    """Compile, check, then time every implementation of ``k`` (samples interleaved)."""
    import xlac
    p = k.quick if quick else k.full
    row = Row(k.name, k.label, k.size(p), k.kind, int(k.nbytes(p)), int(k.flops(p)),
              primary=k.primary, kernel_note=k.note)
    args = k.inputs(np.random.default_rng(seed), p)
    ref = k.numpy(*args)
    kw = jit_kwargs(caps, threads)
    calls: dict = {}

    # xlac from the JAX-exported HLO
    hlo_text = _hlo_text(k, hlo_dir, p)
    if hlo_text is not None:
        def make_hlo():
            t = time.perf_counter()
            exe = xlac.jit(hlo_text, **kw)
            best = time.perf_counter() - t
            row.compile_ms["hlo_source"] = getattr(exe, "from_cache", None)
            for r in range(1, COMPILE_SAMPLES):    # renamed: the in-memory cache would hit
                t = time.perf_counter()
                xlac.jit(hlo_text.replace("HloModule ", f"HloModule again{r}_", 1), **kw)
                best = min(best, time.perf_counter() - t)
            row.compile_ms["hlo"] = best * 1e3
            return lambda: exe(*args)
        calls["xlac_hlo"] = _prepare(row, "xlac_hlo", make_hlo, ref, k.tol)
        if calls["xlac_hlo"] is not None:
            try:
                call, how, first_out = reuse_call(hlo_text, args, caps, threads,
                                                  donatable_index(args, ref))
            except Exception as e:  # noqa: BLE001 - reported, not timed
                call, how, first_out = None, f"{type(e).__name__}: {e}", None
            if call is not None:
                imp = row.impls["xlac_hlo_reuse"] = Impl(note=how)
                # Checked on the first call (reuse_call made it): later calls see their own
                # outputs as inputs.
                imp.ok, imp.error, imp.check = check(first_out, ref, k.tol)
                calls["xlac_hlo_reuse"] = call
            else:
                row.reuse_note = how
            del first_out
        if disk_cache and caps.get("disk_cache"):
            try:
                row.compile_ms["disk_cold"], row.compile_ms["disk_hit"], \
                    row.compile_ms["fresh_import"] = _disk_cache_times(hlo_text, threads, caps)
            except (OSError, subprocess.SubprocessError, ValueError, RuntimeError) as e:
                row.note = (row.note + "; " if row.note else "") + f"XLAC_CACHE_DIR timing: {e}"[:200]
                log(f"    XLAC_CACHE_DIR timing: {e}")
    elif k.hlo:
        row.note = f"no HLO file {k.hlo} in {hlo_dir}"

    # xlac from the builder
    def make_builder():
        t = time.perf_counter()
        comp = k.build(p)
        t1 = time.perf_counter()
        exe = xlac.jit(comp, **kw)
        row.compile_ms["build"] = (t1 - t) * 1e3
        row.compile_ms["builder"] = (time.perf_counter() - t1) * 1e3
        return lambda: exe(*args)
    calls["xlac_builder"] = _prepare(row, "xlac_builder", make_builder, ref, k.tol)

    # numpy (the reference itself: checked trivially)
    calls["numpy"] = _prepare(row, "numpy", lambda: (lambda: k.numpy(*args)), ref, max(k.tol, 1e-6))

    if jax_mod is not None and k.jax is not None:
        calls["jax"] = jax_call(row, k, args, ref, jax_mod)

    if numba_mod is not None and k.numba is not None:
        def make_numba():
            f = numba_mod.njit(k.numba)
            return lambda: f(*args)
        calls["numba"] = _prepare(row, "numba", make_numba, ref, max(k.tol, 1e-4))

    if triad is not None and k.kind == "memory":
        # STREAM sampled in the same rounds as the kernel: the memory bandwidth of a
        # shared machine drifts by 2x within minutes, so the fraction of it a kernel
        # reaches is only meaningful against a triad timed alongside it.
        calls["stream"] = triad
    gemm_flops = None
    if k.gemm is not None:
        # The kernel's own yardstick: xlac's GEMM of the same size and element type,
        # sampled in the same rounds (the best sgemm of a bigger size is unfair to f64).
        try:
            n, dtype = k.gemm(p)
            calls["gemm"], gemm_flops = _gemm_call(n, dtype, kw), 2 * n ** 3
            row.gemm_label = f"{n}^3 {np.dtype(dtype).name}"
        except Exception as e:  # noqa: BLE001 - the column falls back to the machine limit
            log(f"    xlac GEMM for {k.name}: {type(e).__name__}: {e}")
    timings = time_interleaved({c: f for c, f in calls.items() if f is not None}, repeat, budget)
    stream = timings.pop("stream", None)
    if isinstance(stream, Timing):
        row.stream_gbs = triad.gbs(stream.median_s)
    gemm = timings.pop("gemm", None)
    if isinstance(gemm, Timing):
        row.gemm_gflops = gemm_flops / gemm.median_s / 1e9
    record_timings(row, timings)
    calls.clear()          # the closures hold the inputs
    gc.collect()
    return row


def _gemm_call(n: int, dtype, kw: dict):
    """A warm call of xlac's ``dot`` of two n x n matrices of ``dtype``."""
    import xlac
    from xlac import ops
    pt = xlac.F64 if np.dtype(dtype) == np.float64 else xlac.F32
    b = xlac.XlaBuilder(f"gemm{n}")
    x = ops.parameter(b, 0, xlac.Shape(pt, (n, n)), "x")
    y = ops.parameter(b, 1, xlac.Shape(pt, (n, n)), "y")
    exe = xlac.jit(b.build(ops.dot(x, y)), **kw)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((n, n)).astype(dtype) for _ in range(2)]
    exe(*args)
    return lambda: exe(*args)


# ---------------------------------------------------------------------------------
# the whole run
# ---------------------------------------------------------------------------------

def _hlo_text(k: K.Kernel, hlo_dir, p: dict) -> str | None:
    """The JAX-exported HLO of ``k`` scaled to the sizes ``p``, or None without one."""
    if not k.hlo or hlo_dir is None or not (Path(hlo_dir) / k.hlo).is_file():
        return None
    return K.scale_hlo((Path(hlo_dir) / k.hlo).read_text(encoding="utf-8"), k.full, p, k.scale_constants)


def _warm_gemm_library(names: list, quick: bool, hlo_dir) -> None:
    """Compile each kernel's HLO once, under another module name, before any compile is
    timed, so that the GEMM library variants the dots need are built (or loaded from
    the library cache) first: a one-time cost per machine, reported on its own
    (:func:`_gemm_library_events`), as jax's prebuilt kernels are not part of its
    compile time either.  Kernels with a ``gemm`` yardstick and no HLO (cholesky, the
    triangular solve: their routines are library units too) compile their builder's
    computation instead, and the in-memory cache is emptied after."""
    import xlac
    built = False
    for name in names:
        k = K.BY_NAME[name]
        p = k.quick if quick else k.full
        text = _hlo_text(k, hlo_dir, p)
        try:
            if text is None and k.gemm is not None:
                xlac.jit(k.build(p))
                built = True
                continue
            if text is None or ("dot(" not in text and "convolution(" not in text):
                continue
            xlac.jit(text.replace("HloModule ", "HloModule warm_", 1))
        except Exception as e:  # noqa: BLE001 - the kernel's own run reports it
            log(f"  warming the GEMM library with {name}: {type(e).__name__}: {e}")
    if built:
        xlac.clear_caches()


def _gemm_library_events() -> dict:
    """{variant: [how, ms]} of the GEMM library code this process loaded ("disk": from
    the library cache, "compiled": built here), when the runtime has such a library."""
    try:
        from xlac.codegen import gemm_library
    except ImportError:
        return {}
    return {tag: [how, secs * 1e3] for tag, (how, secs) in gemm_library.loaded_from.items()}


def measure_limits(quick: bool, threads: int | None, caps: dict, repeat: int,
                   use_jax: bool = True) -> dict:
    from . import limits as L
    nbytes = (4 << 20) if quick else (64 << 20)
    out: dict = {"stream_bytes": nbytes}
    tcounts = sorted({1, min(2, os.cpu_count() or 1)})
    for t in tcounts:
        log(f"  STREAM triad, native, {t} thread(s), 3 x {nbytes >> 20} MiB")
        try:
            out[f"stream_native_{t}t"] = L.stream_triad_native(nbytes, t, runs=max(repeat, 5))
        except Exception as e:  # noqa: BLE001 - reported, the xlac triad still runs
            out[f"stream_native_{t}t_error"] = f"{type(e).__name__}: {e}"
    xt = tcounts if caps.get("num_threads") else [None]
    for t in xt:
        log(f"  STREAM triad, xlac, {t or 'default'} thread(s)")
        try:
            gbs, how = L.stream_triad_xlac(nbytes, t, runs=max(repeat, 5), caps=caps)
            out[f"stream_xlac_{t or 'default'}t"] = gbs
            out["stream_xlac_how"] = how
        except Exception as e:  # noqa: BLE001
            out[f"stream_xlac_{t or 'default'}t_error"] = f"{type(e).__name__}: {e}"
    n = 512 if quick else 4096
    out["sgemm_n"] = n
    calls: dict = {}
    log(f"  sgemm {n}^3: numpy BLAS" + (", jax.jit" if use_jax else "") + ", xlac (interleaved)")
    calls["numpy"] = L.sgemm_numpy_call(n)
    if use_jax:
        try:
            calls["jax"] = L.sgemm_jax_call(n)
        except Exception as e:  # noqa: BLE001
            out["sgemm_jax_error"] = f"{type(e).__name__}: {e}"
    try:
        calls["xlac"] = L.sgemm_xlac_call(n, threads=threads if caps.get("num_threads") else None)
    except Exception as e:  # noqa: BLE001 - reported beside the references
        out["sgemm_xlac_error"] = f"{type(e).__name__}: {e}"
    rates = L.sgemm_rates(n, {k: f for k, f in calls.items() if f is not None}, runs=3 if quick else 5)
    for name, r in rates.items():
        if isinstance(r, BaseException):
            out[f"sgemm_{name}_error"] = f"{type(r).__name__}: {r}"
        else:
            out[f"sgemm_{name}_gflops"] = r
    out["sgemm_gflops"], out["sgemm_best"] = out.get("sgemm_numpy_gflops", float("nan")), "numpy"
    if out.get("sgemm_jax_gflops", 0) > out["sgemm_gflops"]:
        out["sgemm_gflops"], out["sgemm_best"] = out["sgemm_jax_gflops"], "jax.jit"
    native = [v for k_, v in out.items() if k_.startswith("stream_native_") and isinstance(v, float)]
    xl = [v for k_, v in out.items() if k_.startswith("stream_xlac_") and isinstance(v, float)]
    out["stream_gbs"] = max(native or xl or [float("nan")])
    return out


def combine_limits(a: dict, b: dict) -> dict:
    """The better of two measurements of each limit (the larger bandwidth or GFLOP/s)."""
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, float) and isinstance(out.get(k), float):
            out[k] = max(out[k], v)
        elif k not in out:
            out[k] = v
    best = max((out.get("sgemm_numpy_gflops", 0.0), "numpy"),
               (out.get("sgemm_jax_gflops") or 0.0, "jax.jit"))
    out["sgemm_gflops"], out["sgemm_best"] = best
    return out


def _kernel_names(kernel_names: list[str] | None) -> list[str]:
    names = kernel_names or [k.name for k in K.KERNELS]
    unknown = [n for n in names if n not in K.BY_NAME]
    if unknown:
        raise ValueError(f"unknown kernel(s) {', '.join(unknown)} (known: {', '.join(K.BY_NAME)})")
    return names


def _check_sweep(threads_sweep, threads, caps: dict) -> list[int] | None:
    if threads_sweep is None:
        return None
    counts = sorted(set(threads_sweep))
    if not counts or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in counts):
        raise ValueError(f"threads_sweep must be positive thread counts, got {threads_sweep!r}")
    if threads is not None:
        raise ValueError("--threads and --threads-sweep exclude each other (the sweep sets xlac's "
                         "num_threads itself)")
    if not caps.get("num_threads"):
        raise ValueError("this xlac's jit takes no num_threads: nothing to sweep")
    return counts


def dispatch_threads(threads: int | None, sweep: list[int] | None) -> list[int]:
    """The thread counts the dispatch cost is measured with: 1, 2, ``threads`` and the sweep's."""
    return sorted({1, 2} | ({threads} if threads else set()) | set(sweep or ()))


def _measure_dispatch(res: dict, threads, sweep, repeat: int, budget: float) -> None:
    from . import dispatch
    counts = dispatch_threads(threads, sweep)
    log(f"parallel_for dispatch cost, num_threads {', '.join(map(str, counts))}")
    try:
        res["dispatch"] = dispatch.measure(counts, repeat=repeat, budget=budget)
    except Exception as e:  # noqa: BLE001 - reported, the kernels still run
        res["dispatch_error"] = f"{type(e).__name__}: {e}"[:300]
        log(f"  {res['dispatch_error']}")


def _run_kernels(names, *, quick, repeat, budget, threads, hlo_dir, jax_mod, numba_mod, caps,
                 disk_cache, limits) -> list[Row]:
    rows = []
    triad = None
    if limits:
        from . import limits as L
        triad = L.NativeTriad((4 << 20) if quick else (64 << 20),
                              max(1, min(threads or os.cpu_count() or 1, os.cpu_count() or 1)))
    try:
        for name in names:
            k = K.BY_NAME[name]
            log(f"{name} ({k.size(k.quick if quick else k.full)})")
            rows.append(run_kernel(k, quick=quick, repeat=repeat, budget=budget, threads=threads,
                                   hlo_dir=hlo_dir, jax_mod=jax_mod, numba_mod=numba_mod, caps=caps,
                                   disk_cache=disk_cache, triad=triad))
    finally:
        if triad is not None:
            triad.close()
    return rows


def _busy(on: bool):
    """A :class:`~benchmarks.busy.BusyCore` (not started yet) when ``on``, else None."""
    if not on:
        return None
    from .busy import BusyCore
    hog = BusyCore()
    log(f"--busy-core: a process spins on CPU {hog.cpu} while the kernels run")
    return hog


def _header(caps: dict, settings: dict) -> dict:
    """What the report says about the run before any result: date, machine, versions."""
    return {"date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "machine": machine(), "versions": versions(), "capabilities": caps,
            "loadavg_start": _loadavg(), "settings": settings}


def run(kernel_names: list[str] | None = None, *, quick: bool = False, repeat: int = 15,
        budget: float = 30.0, threads: int | None = None, hlo_dir: Path | None = DEFAULT_HLO_DIR,
        use_jax: bool = True, use_numba: bool = True, disk_cache: bool = True,
        limits: bool = True, busy_core: bool = False, threads_sweep: list[int] | None = None,
        dispatch: bool = True) -> dict:
    """Run the benchmarks; returns the results as a JSON-able dict (see report.py).

    ``busy_core``: a process spins on the last CPU of the affinity mask while the
    kernels and the dispatch cost are measured (``benchmarks/busy.py``; the machine
    limits are measured without it).  ``threads_sweep``: thread counts; instead of
    the main table (``rows``), xlac is timed at each count beside jax and numpy
    (``sweep``, see ``benchmarks/sweep.py``; no limits, compile times or numba).
    ``dispatch``: the cost of one ``parallel_for`` (``benchmarks/dispatch.py``) with
    1, 2, ``threads`` and the sweep's thread counts.
    """
    names = _kernel_names(kernel_names)
    caps = capabilities()
    sweep = _check_sweep(threads_sweep, threads, caps)
    limits = limits and sweep is None
    jax_mod = _optional("jax") if use_jax else None
    numba_mod = _optional("numba") if use_numba and sweep is None else None
    if hlo_dir is not None and not Path(hlo_dir).is_dir():
        log(f"note: no HLO directory {hlo_dir}: the 'from HLO' column is skipped")
        hlo_dir = None
    hlo_dir = Path(hlo_dir) if hlo_dir else None
    started = time.time()
    res = _header(caps, {"quick": quick, "repeat": repeat, "budget_s": budget, "threads": threads,
                         "hlo_dir": str(hlo_dir) if hlo_dir else None, "jax": jax_mod is not None,
                         "numba": numba_mod is not None, "busy_core": busy_core,
                         "threads_sweep": sweep})
    if limits:
        log("machine limits (before the kernels)")
        res["limits_start"] = measure_limits(quick, threads, caps, repeat, use_jax)
    _warm_gemm_library(names, quick, hlo_dir)
    hog = _busy(busy_core)
    with hog or contextlib.nullcontext():
        if dispatch:
            _measure_dispatch(res, threads, sweep, repeat, budget)
        if sweep is not None:
            from . import sweep as S
            res["library_threads"] = S.library_threads(jax_mod)
            res["sweep"] = [asdict(r) for r in S.run_kernels(
                names, sweep, quick=quick, repeat=repeat, budget=budget, hlo_dir=hlo_dir, jax_mod=jax_mod)]
        else:
            res["rows"] = [asdict(r) for r in _run_kernels(
                names, quick=quick, repeat=repeat, budget=budget, threads=threads, hlo_dir=hlo_dir,
                jax_mod=jax_mod, numba_mod=numba_mod, caps=caps, disk_cache=disk_cache, limits=limits)]
    if hog is not None:
        res["busy_core"] = hog.report()
    res["gemm_library"] = _gemm_library_events()
    if limits:
        # Measured again after the kernels; the table uses the better of the two (on a
        # shared machine the load may have changed in between).
        log("machine limits (after the kernels)")
        res["limits_end"] = measure_limits(quick, threads, caps, repeat, use_jax)
        res["limits"] = combine_limits(res["limits_start"], res["limits_end"])
    res["elapsed_s"] = time.time() - started
    res["loadavg_end"] = _loadavg()
    return res


def save_json(res: dict, path: Path) -> None:
    path.write_text(json.dumps(res, indent=1, default=str) + "\n", encoding="utf-8")
