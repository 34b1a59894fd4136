"""Inputs for a module and a benchmark of it: what ``xlac run`` and ``xlac bench
MODULE`` use, shipped inside the package (the kernel harness in the source
tree's ``benchmarks/`` is not installed).

* :func:`load_inputs` — a module's entry parameters from an ``.npz``, keyed by
  position (``arr_0, arr_1, ...``, what ``np.savez(path, *args)`` writes) or by
  parameter name (``np.savez(path, x=..., w=...)``; HLO's ``.N`` suffix may be
  left out: ``x`` names ``x.1``).
* :func:`read_npz` / :func:`write_npz` — the arrays of an ``.npz`` by name,
  every problem a ``ValueError`` naming the file (and the array); the arrays
  written to exactly the path given (``np.savez`` of a path would add
  ``.npz``).
* :func:`random_arrays` — arrays of given shapes and dtypes from a seeded
  generator (normal floats and complex, integers in [0, 8), random booleans),
  for timing a module nobody has inputs for; :func:`random_inputs` of a
  module's parameters.  For what an executable takes (a leading device axis
  for a per-replica module, global arrays for a sharded one) use
  ``random_arrays(exe.argument_shapes)``.
* :func:`benchmark` — compile time (and, on several devices, the device
  processes' start-up), then ``repeat`` timed samples of calls (median, min,
  max seconds per call) and the rates of the executable's cost analysis.

Timing: one untimed warm-up call, then ``repeat`` samples, each ``inner`` calls
timed together with ``time.perf_counter`` and divided by ``inner``, where
``inner`` makes one sample last at least ``min_sample_s`` (so a tiny module is
not timed at the clock's resolution).  Every call allocates its results, as a
user's ``exe(*args)`` does.
"""
from __future__ import annotations

import io
import os
import re
import stat
import statistics
import time
import zipfile
import zlib
from dataclasses import dataclass, field

import numpy as np

from .hlo.ir import HloModule
from .shape import Shape

__all__ = ["load_inputs", "random_inputs", "random_arrays", "read_npz", "write_npz", "benchmark", "BenchResult",
           "parameter_keys", "format_seconds", "xla_cpu_times", "roofline_chart"]

_SUFFIX = re.compile(r"\.\d+$")


def parameter_keys(module: HloModule) -> list[tuple[str, ...]]:
    """For each entry parameter, the npz keys that may hold it: ``arr_k``, its
    HLO name, and its name without XLA's ``.N`` uniquing suffix."""
    keys = []
    for k, p in enumerate(module.entry.parameters):
        names = [f"arr_{k}"]
        if p.name:
            names.append(p.name)
            bare = _SUFFIX.sub("", p.name)
            if bare != p.name:
                names.append(bare)
        keys.append(tuple(dict.fromkeys(names)))
    return keys


_NPZ_HOW = "np.savez(path, *arrays) writes one"


def read_npz(path: str) -> dict:
    """Every array of the ``.npz`` file at ``path``, by name.

    Raises ``OSError`` when the file cannot be opened, and ``ValueError``
    naming the file for anything else: an empty file, a single ``.npy``
    array, a file that is no zip archive, a damaged archive, an array of Python
    objects (which would need pickle: the message names the array and says to
    save the arrays themselves)."""
    with open(path, "rb") as fh:
        head = fh.read(6)
        fh.seek(0)
        if not head:
            raise ValueError(f"{path}: empty file, expected an .npz of arrays ({_NPZ_HOW})")
        if head.startswith(b"\x93NUMPY"):
            raise ValueError(f"{path}: a single .npy array (np.save), expected an .npz ({_NPZ_HOW})")
        if not head.startswith(b"PK"):
            raise ValueError(f"{path}: not an .npz file ({_NPZ_HOW})")
        try:
            with np.load(fh, allow_pickle=False) as data:
                return {name: _npz_member(data, name, path) for name in data.files}
        except ValueError as e:
            if str(e).startswith(f"{path}: "):
                raise
            raise _damaged(path, e) from None
        except (zipfile.BadZipFile, zlib.error, EOFError, KeyError, OSError, OverflowError) as e:
            raise _damaged(path, e) from None


def _npz_member(data, name: str, path: str) -> np.ndarray:
    try:
        return data[name]
    except ValueError as e:
        if "allow_pickle" in str(e) or "bject" in str(e):
            raise ValueError(f"{path}: array {name} holds Python objects (dtype=object), which xlac does "
                             "not load (that needs pickle): save the arrays themselves, e.g. "
                             "np.savez(f, *jax.tree.leaves(params)) for a dict or list of arrays") from None
        raise ValueError(f"{path}: array {name} cannot be read ({e})") from None
    except MemoryError:
        raise ValueError(f"{path}: array {name} is too large to load") from None


def _damaged(path: str, e: Exception) -> ValueError:
    return ValueError(f"{path}: damaged .npz file ({type(e).__name__}: {e})")


def write_npz(path: str, arrays: list) -> None:
    """``arrays`` as ``arr_0, arr_1, ...`` in an ``.npz`` at exactly ``path``
    (``np.savez`` given a path without ``.npz`` adds the suffix; given a file
    it writes there).  A path that is no regular file (``/dev/stdout``, a
    pipe) gets the archive made in memory first: a zip archive is written
    with seeks."""
    with open(path, "wb") as fh:
        if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            np.savez(fh, *arrays)
        else:
            buffer = io.BytesIO()
            np.savez(buffer, *arrays)
            fh.write(buffer.getbuffer())


def typed_as(array: np.ndarray, dtype) -> np.ndarray:
    """``array`` viewed as ``dtype`` when numpy stored it as raw bytes.

    ``np.save`` keeps arrays of ml_dtypes' types (bf16, the f8 and f4 types,
    s4/u4, ...) as plain void items (``V2``, ``V1``) and ``np.load`` gives them
    back so; one of ``dtype``'s item size is its bytes, read as ``dtype``.
    Anything else is returned as it is (the call names a dtype mismatch)."""
    dtype = np.dtype(dtype)
    if (array.dtype.type is np.void and array.dtype.names is None and dtype.type is not np.void
            and array.dtype.itemsize == dtype.itemsize):
        return array.view(dtype)
    return array


def load_inputs(path: str | None, module: HloModule) -> list:
    """The entry parameters of ``module`` from the ``.npz`` at ``path`` (see the
    module docstring for the keys).  A token parameter may be left out (None).

    Raises ``ValueError`` naming the file for a missing parameter, an array that
    matches no parameter, a parameter given twice, or a file that is not an npz
    (:func:`read_npz`); without ``path``, for a module that has parameters.
    """
    params = module.entry.parameters
    if path is None:
        if params:
            raise ValueError(f"{module.name} has {len(params)} parameter(s); give them with "
                             "--inputs IN.npz (or --random-inputs)")
        return []
    data = read_npz(path)
    out, used, missing = [], set(), []
    for p, keys in zip(params, parameter_keys(module)):
        found = [k for k in keys if k in data]
        if len(found) > 1:
            raise ValueError(f"{path}: parameter {p.parameter_number} given twice, as "
                             f"{' and '.join(found)}")
        if found:
            used.add(found[0])
            array = data[found[0]]
            out.append(array if p.shape.is_tuple or p.shape.is_token else typed_as(array, p.shape.dtype))
        elif p.shape.is_token:        # a token carries no data
            out.append(None)
        else:
            missing.append("/".join(keys))
            out.append(None)
    if missing:
        raise ValueError(f"{path}: missing {', '.join(missing)} for the module's {len(params)} "
                         f"parameter(s) (found {', '.join(sorted(data)) or 'nothing'})")
    extra = sorted(set(data) - used)
    if extra:
        names = ", ".join("/".join(k) for k in parameter_keys(module))
        raise ValueError(f"{path}: unexpected arrays {', '.join(extra)}: the module's "
                         f"parameters are {names or 'none'}")
    return out


def _random_array(shape: Shape, rng: np.random.Generator):
    if shape.is_token:
        return None
    if shape.is_tuple:
        return tuple(_random_array(s, rng) for s in shape.tuple_shapes)
    dims = tuple(shape.dimensions)
    dtype = np.dtype(shape.dtype)
    if dtype == np.bool_:
        return rng.random(dims) < 0.5
    if dtype.kind in "iu":
        # Small non-negative values: safe as indices, shifts and divisors alike.
        return rng.integers(0, 8, size=dims).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(dtype)
    return rng.standard_normal(dims).astype(dtype)


def random_arrays(shapes: list, seed: int = 0) -> list:
    """A random array of each of ``shapes`` (its dimensions and dtype; bounded
    dynamic dimensions at their bound; None for a token, a tuple for a tuple),
    from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    return [_random_array(s, rng) for s in shapes]


def random_inputs(module: HloModule, seed: int = 0) -> list:
    """Random arrays of the shape and dtype of each entry parameter of
    ``module`` (:func:`random_arrays`).  A module on several devices takes
    other arrays: ``random_arrays(xlac.jit(module).argument_shapes, seed)``."""
    return random_arrays([p.shape for p in module.entry.parameters], seed)


@dataclass
class BenchResult:
    """What :func:`benchmark` measured (seconds)."""

    module_name: str
    compile_s: float
    from_cache: str | None                    # "memory", "disk", or None: compiled now
    samples_s: list = field(default_factory=list)    # per-call seconds, one per sample
    inner: int = 1                            # calls per sample
    cost: dict | None = None                  # exe.cost_analysis(), when it has one
    memory: object | None = None              # exe.memory_analysis(), when it has one
    threads: int | None = None
    devices: int = 1
    startup_s: float | None = None            # the device processes' start-up (several devices)
    roofline: object | None = None            # roofline.Position of the median, when asked for
    xla: dict | None = None                   # XLA:CPU's compile_s / median_s on the same module

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples_s)

    def report(self) -> str:
        """The lines ``xlac bench MODULE`` prints."""
        where = {None: "compiled", "memory": "in-memory cache", "disk": "disk cache"}[self.from_cache]
        lines = [f"module {self.module_name}"
                 + (f" ({self.threads} thread(s))" if self.threads else "")
                 + (f" on {self.devices} devices" if self.devices > 1 else ""),
                 f"  compile  {format_seconds(self.compile_s)} ({where})"]
        if self.startup_s is not None:
            lines.append(f"  start-up {format_seconds(self.startup_s)} (the device processes)")
        lines.append(f"  run      median {format_seconds(self.median_s)}  "
                     f"min {format_seconds(min(self.samples_s))}  max {format_seconds(max(self.samples_s))}  "
                     f"({len(self.samples_s)} samples of {self.inner} call(s))")
        if self.cost:
            flops, trans, nbytes = (self.cost.get(k, 0.0) for k in
                                    ("flops", "transcendentals", "bytes accessed"))
            t = self.median_s
            lines.append(f"  cost     {flops:.4g} flops, {trans:.4g} transcendentals, "
                         f"{nbytes:.4g} bytes accessed")
            lines.append(f"  rates    {flops / t / 1e9:.3g} GFLOP/s, {trans / t / 1e9:.3g} "
                         f"Gtranscendentals/s, {nbytes / t / 1e9:.3g} GB/s (at the median)")
        if self.roofline is not None:
            lines += _roofline_lines(self.roofline)
        if self.xla is not None:
            x = self.xla
            lines.append(f"  XLA:CPU  compile {format_seconds(x['compile_s'])}, run median "
                         f"{format_seconds(x['median_s'])} (jax {x.get('jax', '?')}); xlac / XLA:CPU "
                         f"{self.median_s / x['median_s']:.2f}x run, {self.compile_s / x['compile_s']:.2f}x compile")
        if self.memory is not None:
            m = self.memory
            lines.append(f"  memory   arguments {m.argument_size_in_bytes} B, outputs "
                         f"{m.output_size_in_bytes} B, temp {m.temp_size_in_bytes} B, code "
                         f"{m.generated_code_size_in_bytes} B")
        return "\n".join(lines)


def _roofline_lines(p) -> list:
    peak, bw = p.peak / 1e9, p.bandwidth / 1e9
    return [f"  roofline {p.intensity:.3g} flop/byte: attainable {p.attainable / 1e9:.4g} GFLOP/s "
            f"({p.bound}-bound), reached {p.rate / 1e9:.4g} = {100 * p.fraction:.0f}%",
            f"           peak {peak:.4g} GFLOP/s ({p.peak_how}); STREAM triad {bw:.3g} GB/s ({p.bandwidth_how})"]


def format_seconds(s: float) -> str:
    """``0.123 ms``, ``5.318 us``: seconds in the unit that reads best."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3f} {unit}"
    return f"{s / 1e-9:.1f} ns"


def benchmark(x, inputs: list | None = None, *, repeat: int = 15, threads: int | None = None,
              min_sample_s: float = 1e-3, seed: int = 0, roofline: bool = False,
              refresh_stream: bool = False) -> BenchResult:
    """Compile ``x`` (HLO or StableHLO text, an HloModule or an
    XlaComputation) with ``xlac.jit`` and time calls on ``inputs`` (see the
    module docstring); ``inputs=None``: random arrays of the shapes the
    executable takes (:func:`random_arrays` with ``seed``).

    ``repeat``: timed samples (at least 1); ``threads``: ``num_threads`` of the
    executable (None: xlac's default); ``roofline``: also place the median on
    the machine's roofline (:mod:`xlac.roofline`; the STREAM triad is measured
    on first use).  Raises ``ValueError`` for ``repeat < 1`` and whatever
    ``xlac.jit`` and the call raise.
    """
    from .devices import jit
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a positive integer, got {repeat!r}")
    t0 = time.perf_counter()
    exe = jit(x, num_threads=threads)
    compile_s = time.perf_counter() - t0
    startup_s = None
    if hasattr(exe, "warm_up"):                    # several devices: processes, then their compiles
        steps = exe.warm_up()                      # jit started the processes, then compiled on each
        startup_s, compile_s = steps["start-up"], compile_s - steps["start-up"]
    if inputs is None:
        inputs = random_arrays(exe.argument_shapes, seed)
    name = exe.module.name if hasattr(exe, "module") else _module_name(x)
    exe(*inputs)                                   # warm-up: threads, pools, first-touch pages
    t0 = time.perf_counter()
    exe(*inputs)
    one = max(time.perf_counter() - t0, 1e-9)
    inner = max(1, min(10_000, int(min_sample_s / one)))
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            exe(*inputs)
        samples.append((time.perf_counter() - t0) / inner)
    cost = exe.cost_analysis() if hasattr(exe, "cost_analysis") else None
    memory = exe.memory_analysis() if hasattr(exe, "memory_analysis") else None
    result = BenchResult(name, compile_s, getattr(exe, "from_cache", None), samples, inner, cost,
                         memory, threads, getattr(exe, "num_devices", 1), startup_s)
    if roofline and cost and cost.get("flops") and hasattr(exe, "module"):
        from . import roofline as rl
        from .runtime.threads import default_num_threads
        result.roofline = rl.position(cost["flops"], cost.get("bytes accessed", 0.0), result.median_s,
                                      rl.dominant_type(exe.module), threads or default_num_threads(),
                                      refresh_stream)
    return result


def _module_name(x) -> str:
    module = getattr(x, "module", x)
    return getattr(module, "name", None) or "module"


def xla_cpu_times(path: str, inputs_path: str | None, seed: int, repeat: int, timeout: float = 900) -> dict:
    """XLA:CPU's ``compile_s`` and ``median_s`` on the module file at ``path``,
    measured by jax in a process of its own (``python -m xlac.pjrt.xla_cpu``:
    xlac's core does not import jax); ``RuntimeError`` with its message if it
    failed (jax missing, a module XLA refuses)."""
    import json
    import subprocess
    import sys
    cmd = [sys.executable, "-m", "xlac.pjrt.xla_cpu", path, "--repeat", str(repeat)]
    cmd += ["--inputs", inputs_path] if inputs_path else ["--seed", str(seed)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, JAX_PLATFORMS="cpu"))
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(why)
    return json.loads(lines[-1])


def roofline_chart(result: BenchResult, path: str) -> None:
    """A PNG at ``path``: the machine's roofline (log-log, operations per byte
    against GFLOP/s) and the module on it (xlac's median; XLA:CPU's too when
    measured).  Needs matplotlib: ``ImportError`` saying so."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("--plot needs matplotlib (pip install matplotlib)") from e
    p = result.roofline
    if p is None:
        raise ValueError(f"{result.module_name}: no roofline (the module's cost analysis counts no flops)")
    ridge = p.peak / p.bandwidth
    lo, hi = min(p.intensity, ridge) / 100, max(p.intensity, ridge) * 100
    xs = np.geomspace(lo, hi, 200)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.loglog(xs, np.minimum(p.peak, xs * p.bandwidth) / 1e9, color="black", label="roofline")
    ax.loglog([p.intensity], [p.rate / 1e9], "o", label=f"xlac ({format_seconds(result.median_s)})")
    if result.xla is not None:
        ax.loglog([p.intensity], [p.rate * result.median_s / result.xla["median_s"] / 1e9], "s",
                  label=f"XLA:CPU ({format_seconds(result.xla['median_s'])})")
    ax.set_xlabel("flops per byte accessed")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"{result.module_name}: peak {p.peak / 1e9:.4g} GFLOP/s, STREAM {p.bandwidth / 1e9:.3g} GB/s",
                 fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
