"""The machine's limits and a module's place under them (the roofline model).

``xlac bench MODULE`` reports a module's rate against two limits of this
machine, for the threads the executable runs on:

* **peak arithmetic rate** of the module's element type (:func:`peak_ops`),
  from the CPU's features and clock: vector width x 2 fused multiply-add pipes
  x 2 operations per FMA per core (AMD cores run 512-bit operations as two
  256-bit halves: counted at 256 bits); 8-bit integers with AVX512_VNNI
  (``vpdpbusd``: 4 products per 32-bit lane), bf16 and 8-bit integers with AMX
  (1,024 and 2,048 operations per cycle per core). The clock is the CPU's
  maximum frequency from ``/sys/devices/system/cpu/cpu0/cpufreq``, else the
  nominal one of ``/proc/cpuinfo``: an upper bound, as rooflines take it.
* **memory bandwidth** (:func:`stream_bandwidth`): a STREAM triad
  ``a = b + s * c`` on float32 arrays of 64 MiB each compiled by xlac,
  best of 5, counted as STREAM counts (3 arrays), measured once per CPU and
  thread count and kept in ``machine.json`` of the library cache directory
  (``disk_cache.library_dir()``; measured again when that is off).

:func:`position` puts a module there: its arithmetic intensity (flops per
byte accessed, from the cost analysis), the attainable rate
``min(peak, intensity x bandwidth)`` and the fraction of it the module
reaches, and which roof bounds it.  A module whose data fits in the caches can
beat the DRAM roof: the fraction is then above 1.
"""
from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import dataclass

import numpy as np

from .codegen import target as _target
from .runtime import disk_cache
from .shape import PrimitiveType as PT

__all__ = ["peak_ops", "clock_hz", "stream_bandwidth", "position", "Position", "cpu_model"]

#: Operations per cycle per core of each kind beyond the vector FMA peak.
AMX_OPS = {"bf16": 1024, "int8": 2048}
STREAM_BYTES = 64 << 20           # each of the triad's three arrays
STREAM_RUNS = 5


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else ``platform.processor()``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _vendor() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def clock_hz() -> float:
    """The CPU's maximum clock (Hz): cpufreq's ``cpuinfo_max_freq``, else the
    largest ``cpu MHz`` of ``/proc/cpuinfo``, else 3 GHz (said in the report)."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", encoding="utf-8") as fh:
            return float(fh.read().strip()) * 1e3
    except (OSError, ValueError):
        pass
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            mhz = [float(line.split(":", 1)[1]) for line in fh if line.startswith("cpu MHz")]
        if mhz:
            return max(mhz) * 1e6
    except (OSError, ValueError):
        pass
    return 3e9


def _kind(et: PT) -> str:
    if et in (PT.BF16,):
        return "bf16"
    if et.is_integral and et.bit_width <= 8:
        return "int8"
    if et.is_float or et.is_complex:
        return "f64" if et in (PT.F64, PT.C128) else "f32"
    return "int32"


def peak_ops(element_type: PT, threads: int) -> tuple[float, str]:
    """(operations per second, how it was counted) of ``threads`` cores on
    ``element_type`` (see the module docstring)."""
    feats = set(_target.features_of(_target.current()))
    bits = _target.vector_bits(_target.current())
    if bits == 512 and _vendor() == "AuthenticAMD":
        bits = 256
    hz = clock_hz()
    kind = _kind(element_type)
    lanes = bits // (64 if kind == "f64" else 32)
    per_cycle = lanes * 2 * 2                       # 2 FMA pipes, 2 operations each
    how = f"{bits}-bit FMA x 2 pipes"
    if kind == "int8" and "avx512vnni" in feats:
        per_cycle, how = lanes * 4 * 2 * 2, f"{bits}-bit VNNI x 2 pipes"
    amx = {"bf16": "amx-bf16", "int8": "amx-int8"}.get(kind)
    if amx and amx in feats:
        per_cycle, how = AMX_OPS[kind], "AMX tiles"
    return per_cycle * hz * threads, f"{how} at {hz / 1e9:.2f} GHz x {threads} core(s)"


# -- the STREAM triad ---------------------------------------------------------------------
_TRIAD = """HloModule stream_triad
ENTRY triad {
  b = f32[{n}] parameter(0)
  c = f32[{n}] parameter(1)
  s = f32[] constant(3)
  sc = f32[{n}] broadcast(s), dimensions={}
  m = f32[{n}] multiply(sc, c)
  ROOT a = f32[{n}] add(b, m)
}
"""


def _measure_triad(threads: int) -> float:
    from .executable import jit
    n = STREAM_BYTES // 4
    exe = jit(_TRIAD.replace("{n}", str(n)), num_threads=threads)
    b = np.ones(n, np.float32)
    c = np.full(n, 2.0, np.float32)
    exe(b, c)
    best = float("inf")
    for _ in range(STREAM_RUNS):
        t0 = time.perf_counter()
        exe(b, c)
        best = min(best, time.perf_counter() - t0)
    return 3 * STREAM_BYTES / best


def _machine_file() -> str | None:
    d = disk_cache.library_dir()
    return os.path.join(d, "machine.json") if d else None


def stream_bandwidth(threads: int, refresh: bool = False) -> tuple[float, str]:
    """(bytes per second of the STREAM triad on ``threads`` threads, where it
    came from: "measured" or "cached")."""
    key = f"{cpu_model()}|{threads}"
    path = _machine_file()
    known = {}
    if path and not refresh:
        try:
            with open(path, encoding="utf-8") as fh:
                known = json.load(fh)
        except (OSError, ValueError):
            known = {}
        if isinstance(known.get(key), (int, float)) and known[key] > 0:
            return float(known[key]), "cached"
    gbs = _measure_triad(threads)
    if path:
        known = known if isinstance(known, dict) else {}
        known[key] = gbs
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(known, fh)
            os.replace(tmp, path)
        except OSError:
            pass
    return gbs, "measured"


@dataclass(frozen=True)
class Position:
    """A module on the roofline: ``rate`` (operations per second it reached),
    ``intensity`` (operations per byte accessed), the two roofs, the attainable
    rate, and the bound."""

    rate: float
    intensity: float
    peak: float
    peak_how: str
    bandwidth: float
    bandwidth_how: str

    @property
    def attainable(self) -> float:
        return min(self.peak, self.intensity * self.bandwidth)

    @property
    def bound(self) -> str:
        return "memory" if self.intensity * self.bandwidth < self.peak else "compute"

    @property
    def fraction(self) -> float:
        return self.rate / self.attainable if self.attainable > 0 else 0.0


def dominant_type(module) -> PT:
    """The element type whose arithmetic a module's rate is about: that of its
    dots and convolutions if it has any (their result type; an 8-bit integer or
    bf16 operand type when the operands are such), else its root's."""
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode in ("dot", "convolution"):
                op = inst.operands[0].shape.element_type
                return op if _kind(op) in ("bf16", "int8") else inst.shape.element_type
    root = module.entry.root.shape
    while root.is_tuple and root.tuple_shapes:
        root = root.tuple_shapes[0]
    return root.element_type if root.is_array else PT.F32


def position(flops: float, nbytes: float, seconds: float, element_type: PT, threads: int,
             refresh: bool = False) -> Position:
    """Where ``flops`` operations on ``nbytes`` bytes in ``seconds`` stand."""
    peak, peak_how = peak_ops(element_type, threads)
    bw, bw_how = stream_bandwidth(threads, refresh)
    return Position(flops / seconds, flops / nbytes if nbytes else float("inf"), peak, peak_how, bw, bw_how)
