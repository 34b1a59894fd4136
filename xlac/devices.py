"""Devices on one host: one worker process per device, collectives over shared memory.

A module runs on ``replica_count x num_partitions`` devices (XLA's counting:
global device id = ``replica * num_partitions + partition``).  A
:class:`DevicePool` of ``n`` devices is ``n`` worker processes, started once
(``spawn``: never a fork of a process that has threads) and reused, and one
shared-memory segment (``xlac.runtime.shm_transport``) through which their
collectives go.  Every worker runs the same compiled code: device 0 compiles
the module into the pool's disk cache (``XLAC_CACHE_DIR``, or a private
directory the pool removes at close), the others load the object from there.

Each worker runs its executable as its device (``Executable.set_device``):
``opts->replica_id``/``partition_id`` and the ``collective`` service over the
segment.  Generated code calls the service natively, so a ``while`` loop with
an all-reduce inside runs with no Python per iteration beyond the service.

Failures: a worker whose call raises marks the segment failed (the others'
collectives then raise at once, naming it); a worker that dies (a crash,
``kill -9``) is noticed by the parent, which marks the segment the same way.
Every call then fails with a :class:`~xlac.runtime.shm_transport.CollectiveError`
naming the device, and the pool is rebuilt on the next call.  A collective
that some device never reaches times out (``timeout`` seconds, default
``XLAC_COLLECTIVE_TIMEOUT`` or 10).  The segment is unlinked when the pool
closes (at exit at the latest), and by multiprocessing's resource tracker if
this process dies first.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from multiprocessing.connection import Connection, wait

import numpy as np

from .errors import CollectiveError, UnsupportedError
from .executable import Executable
from .executable import jit as single_device_jit
from .hlo.feeds import feed_instructions
from .hlo.parser import parse_hlo
from .hlo.source import module_text
from .hlo.sharding import parameter_shardings, result_sharding, stacked_shape
from .mpi import MpiExecutable, launched_by_mpiexec
from .passes.dynamic_padder import is_dynamic_module
from .passes.shard_map import partition_global_program
from .program import as_module
from .runtime import disk_cache, interrupt
from .runtime.collective_service import make_native_service
from .runtime.shm_transport import DEFAULT_SLOT_BYTES, DEFAULT_TIMEOUT, Segment, ShmTransport

__all__ = ["DevicePool", "ReplicatedExecutable", "GlobalExecutable", "SpmdExecutable", "jit", "pool", "close_pools", "device_counts_of"]


class DevicePool:
    """``num_devices`` worker processes sharing one segment (see the module docstring).

    :meth:`run` runs one module on every device with per-device arguments and
    returns per-device results (lists of numpy arrays, in device order).
    """

    def __init__(self, num_devices: int, *, num_threads: int = 1, timeout: float = DEFAULT_TIMEOUT,
                 slot_bytes: int = DEFAULT_SLOT_BYTES):
        if num_devices < 1:
            raise ValueError(f"a device pool needs at least one device, got {num_devices}")
        self.num_devices = num_devices
        self.num_threads = num_threads
        self.timeout = timeout
        self.slot_bytes = slot_bytes
        self._lock = threading.Lock()
        self._private_cache = None
        self.cache_dir = disk_cache.cache_dir()
        if self.cache_dir is None:
            self._private_cache = self.cache_dir = tempfile.mkdtemp(prefix="xlac-devices-")
        self._segment = None
        self._workers: list = []
        self._loaded: set = set()
        self._start()

    # -- workers ----------------------------------------------------------------------
    def _start(self) -> None:
        self._segment = Segment.create(self.num_devices, self.slot_bytes)
        self._workers = []
        for d in range(self.num_devices):
            # A fresh interpreter running this module (not multiprocessing's
            # spawn, which would import the user's main script again).
            mine, theirs = socket.socketpair()
            proc = subprocess.Popen(
                [sys.executable, "-m", "xlac.devices", str(theirs.fileno()), self._segment.name, str(d),
                 str(self.num_devices), self.cache_dir, str(self.num_threads), repr(self.timeout)],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
            theirs.close()
            self._workers.append((proc, Connection(mine.detach())))
        self._loaded = set()

    def _stop(self) -> None:
        for proc, conn in self._workers:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
        for proc, conn in self._workers:
            try:
                proc.wait(2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(2)
            conn.close()
        self._workers = []
        if self._segment is not None:
            self._segment.close()
            self._segment = None

    def close(self) -> None:
        """Stop the workers, unlink the segment, remove a private cache directory."""
        with self._lock:
            self._stop()
            if self._private_cache is not None:
                shutil.rmtree(self._private_cache, ignore_errors=True)
                self._private_cache = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def _healthy(self) -> bool:
        return bool(self._workers) and all(p.poll() is None for p, _ in self._workers) \
            and self._segment is not None and self._segment.failure() is None

    # -- running ----------------------------------------------------------------------
    def run(self, text: str, per_device_args: list, *, replica_count: int, num_partitions: int = 1) -> list:
        """Run HLO ``text`` on every device; ``per_device_args[d]`` are device
        ``d``'s arguments.  Returns ``[results of device d]`` (each a list of arrays,
        a tuple result flattened).  Raises the first device's error, naming it."""
        if len(per_device_args) != self.num_devices:
            raise ValueError(f"{len(per_device_args)} argument lists for {self.num_devices} devices")
        with self._lock:
            self._load(text, replica_count, num_partitions)
            return self._exchange(range(self.num_devices),
                                  lambda d: ("run", text, replica_count, num_partitions, per_device_args[d]))

    def warm_up(self, text: str, *, replica_count: int, num_partitions: int = 1) -> dict:
        """What :meth:`run` does before it runs: wait until every device
        process is up, then compile ``text`` on every device.  Returns the
        seconds each took, ``{"start-up": s, "compile": s}`` (0 for what was
        done before)."""
        with self._lock:
            t0 = time.perf_counter()
            self._restart_if_needed()
            self._exchange(range(self.num_devices), lambda d: ("ping",))
            t1 = time.perf_counter()
            self._load(text, replica_count, num_partitions)
            return {"start-up": t1 - t0, "compile": time.perf_counter() - t1}

    def _restart_if_needed(self) -> None:
        if not self._healthy():
            self._stop()
            self._start()

    def _load(self, text: str, replica_count: int, num_partitions: int) -> None:
        """Healthy workers, a fresh segment, and ``text`` compiled on every device."""
        if replica_count * num_partitions != self.num_devices:
            raise ValueError(f"the module runs on {replica_count} replicas x {num_partitions} partitions, "
                             f"this pool has {self.num_devices} devices")
        self._restart_if_needed()
        self._segment.reset()
        key = hash(text)
        if key not in self._loaded:
            # Device 0 compiles into the cache directory first; the others load it.
            self._exchange([0], lambda d: ("load", text, replica_count, num_partitions))
            self._exchange(range(1, self.num_devices), lambda d: ("load", text, replica_count, num_partitions))
            self._loaded.add(key)

    def _exchange(self, devices, message) -> list:
        """Send ``message(d)`` to each device and collect the replies.  When a
        device fails or dies, the others get ``timeout`` seconds to finish
        (their collectives fail at once; a device busy with no collective to
        fail is stopped), then the pool is stopped and rebuilt on the next call."""
        devices = list(devices)
        for d in devices:
            self._workers[d][1].send(message(d))
        pending = {self._workers[d][1]: d for d in devices}
        replies: dict = {}
        errors: dict = {}
        deadline = None
        try:
            while pending:
                if errors and deadline is None:
                    deadline = time.monotonic() + self.timeout
                if deadline is not None and time.monotonic() > deadline:
                    for d in pending.values():
                        errors[d] = ("CollectiveError", f"stopped: device {min(errors)} failed", False)
                    self._stop()
                    break
                for r in wait(list(pending), timeout=0.5):
                    d = pending.pop(r)
                    try:                  # a dead worker's end reads as end of file
                        status, payload = r.recv()
                    except (EOFError, OSError):
                        errors[d] = self._died(d)
                        continue
                    if status == "ok":
                        replies[d] = payload
                    else:
                        errors[d] = payload
        except BaseException:
            self._stop()          # Ctrl-C, or a broken pipe: the workers' state is unknown
            raise
        if errors:
            raise _first_error(errors)
        return [replies[d] for d in devices]

    def _died(self, d: int) -> tuple:
        proc = self._workers[d][0]
        try:
            code = proc.wait(1)
        except subprocess.TimeoutExpired:
            code = None
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        message = f"the process of device {d} died ({how})"
        if self._segment is not None:
            self._segment.abort(d, message)
        return ("CollectiveError", message, True)


def _first_error(errors: dict) -> Exception:
    """The error of the device that failed first (its own, not a peer's echo)."""
    own = {d: e for d, e in errors.items() if e[2]}
    d = min(own) if own else min(errors)
    kind, message, _ = errors[d]
    text = f"device {d}: {message}"
    exc_type = {"CollectiveError": CollectiveError, "ValueError": ValueError, "TypeError": TypeError,
                "MemoryError": MemoryError}.get(kind, RuntimeError)
    if kind == "UnsupportedError":
        return UnsupportedError("device", text)
    return exc_type(text)


# ---------------------------------------------------------------------------------------
# The worker process
# ---------------------------------------------------------------------------------------

def _worker_main(conn, segment_name: str, device: int, num_devices: int, cache_dir: str,
                 num_threads: int, timeout: float) -> None:
    os.environ["XLAC_CACHE_DIR"] = cache_dir
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the parent's Ctrl-C is the parent's

    segment = Segment.attach(segment_name)
    executables: dict = {}
    transport = None
    service = None

    def failed(message: str) -> None:
        segment.abort(device, message)
        view = interrupt.flag_view()          # stop the generated code at its next check
        if view is not None:
            view[0] = 1

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        if msg is None:
            break
        if msg[0] == "ping":                  # DevicePool.warm_up: this process is up
            conn.send(("ok", None))
            continue
        try:
            if transport is None or transport.seg is not segment or segment.controls[device, 0] < transport.round:
                # A reset segment (a new run after a failure) starts the rounds again.
                transport = ShmTransport(segment, device, timeout=timeout)
                service = make_native_service(transport, device, num_devices, on_failure=failed)
            op, text, replicas, partitions = msg[:4]
            exe = executables.get(text)
            if exe is None:
                exe = executables[text] = Executable(text, num_threads=num_threads)
            exe.set_device(device // partitions, replicas, device % partitions, partitions, service)
            if op == "load":
                conn.send(("ok", None))
                continue
            out = exe(*msg[4])
            leaves = list(out) if isinstance(out, tuple) else [out]
            conn.send(("ok", leaves))
        except BaseException as e:  # noqa: BLE001 - report everything to the parent
            # A CollectiveError echoes another device's failure (or names the
            # devices that never came); anything else is this device's own.
            own = not isinstance(e, CollectiveError)
            if own:
                segment.abort(device, f"{type(e).__name__}: {e}")
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            try:
                conn.send(("error", (type(e).__name__, detail, own)))
            except (OSError, ValueError):
                break
    segment.close()


# ---------------------------------------------------------------------------------------
# Per-replica executables: arguments and results with a leading device axis
# ---------------------------------------------------------------------------------------

class ReplicatedExecutable:
    """A module compiled for ``replica_count x num_partitions`` devices, run on
    the pool of that many devices.  As ``jax.pmap`` takes them, every argument
    and result carries a leading axis of one entry per device (in global device
    id order); a tuple result is a tuple of such arrays.

    Raises ``ValueError`` when an argument's leading axis is not the device
    count, and the first device's error (naming the device) when a device fails.
    """

    def __init__(self, text: str, num_replicas: int, num_partitions: int = 1, *, num_threads: int = 1,
                 timeout: float | None = None):
        self.text = text
        self.num_replicas = num_replicas
        self.num_partitions = num_partitions
        self.num_devices = num_replicas * num_partitions
        self._options = {"num_threads": num_threads}
        if timeout is not None:
            self._options["timeout"] = timeout

    def __call__(self, *args):
        n = self.num_devices
        per_device = [[] for _ in range(n)]
        for k, a in enumerate(args):
            a = np.asarray(a)
            if a.ndim == 0 or a.shape[0] != n:
                raise ValueError(f"parameter {k}: expected a leading axis of {n} (one entry per device: "
                                 f"{self.num_replicas} replicas x {self.num_partitions} partitions), "
                                 f"got shape {a.shape}")
            for d in range(n):
                per_device[d].append(np.asarray(a[d], order="C"))   # (ascontiguousarray makes 0-d arrays 1-d)
        results = pool(n, **self._options).run(self.text, per_device, replica_count=self.num_replicas,
                                               num_partitions=self.num_partitions)
        stacked = [np.stack([results[d][k] for d in range(n)]) for k in range(len(results[0]))]
        return stacked[0] if not self._tuple_result else tuple(stacked)

    def warm_up(self) -> dict:
        """Start the device processes and compile the module on each (what the
        first call does first): ``{"start-up": s, "compile": s}`` seconds."""
        return pool(self.num_devices, **self._options).warm_up(
            self.text, replica_count=self.num_replicas, num_partitions=self.num_partitions)

    @property
    def argument_shapes(self) -> list:
        """Each parameter's shape with a leading axis of one entry per device."""
        return [stacked_shape(p.shape, self.num_devices) for p in self._module.entry.parameters]

    @property
    def _module(self):
        if not hasattr(self, "_parsed"):
            self._parsed = parse_hlo(self.text)
        return self._parsed

    @property
    def _tuple_result(self) -> bool:
        return self._module.entry.root.shape.is_tuple


class GlobalExecutable:
    """A global program with shardings (what ``jax.jit`` of a ``pmap`` or
    ``shard_map`` function lowers to), partitioned for its mesh
    (``xlac.passes.shard_map``) and run on that many devices: it takes and
    returns the *global* arrays, as ``jax.jit`` of the function does.  Every
    device receives the whole arguments, takes its tiles, and ends with the
    whole results."""

    def __init__(self, module, *, num_threads: int = 1, timeout: float | None = None):
        self.num_devices = module.replica_count * module.num_partitions
        self.text = module.to_text()
        self.argument_shapes = [p.shape for p in module.entry.parameters]     # the global arrays
        self._replicated = ReplicatedExecutable(self.text, module.replica_count, module.num_partitions,
                                                num_threads=num_threads, timeout=timeout)

    def __call__(self, *args):
        n = self.num_devices
        out = self._replicated(*[np.broadcast_to(np.asarray(a), (n,) + np.shape(a)) for a in args])
        return tuple(o[0] for o in out) if isinstance(out, tuple) else out[0]

    def warm_up(self) -> dict:
        """See :meth:`ReplicatedExecutable.warm_up`."""
        return self._replicated.warm_up()


def device_counts_of(x) -> tuple[int, int]:
    """(replica_count, num_partitions) a module, or HLO text, says (1, 1 when silent)."""
    if isinstance(x, str):
        header = x.lstrip().split("\n", 1)[0]
        if not header.startswith("HloModule"):
            return 1, 1
        counts = dict(re.findall(r"\b(replica_count|num_partitions)\s*=\s*(\d+)", header))
        return int(counts.get("replica_count", 1)), int(counts.get("num_partitions", 1))
    module = getattr(x, "module", x)
    return int(getattr(module, "replica_count", 1) or 1), int(getattr(module, "num_partitions", 1) or 1)


class SpmdExecutable:
    """XLA's partitioned per-device program (``num_partitions`` > 1, the
    parameters annotated ``sharding={devices=[...]...}`` with their local
    shapes: what ``jax.jit(...).lower(...).compile().as_text()`` prints), run on
    that many devices from the *global* arguments: each device takes its tile
    of each argument as the parameter's sharding says.  Results are put back
    together by the root's sharding when it has one; otherwise every result
    has a leading axis of one entry per device (the module does not say how
    its tiles make the global value)."""

    def __init__(self, module, shardings: list, *, num_threads: int = 1, timeout: float | None = None):
        self.num_devices = module.replica_count * module.num_partitions
        self.shardings = shardings
        # The global arrays a call takes, of which each device gets its tile.
        self.argument_shapes = [s.global_shape(p.shape) for p, s in zip(module.entry.parameters, shardings)]
        self.result_sharding = result_sharding(module)
        self._replicated = ReplicatedExecutable(module.to_text(), module.replica_count, module.num_partitions,
                                                num_threads=num_threads, timeout=timeout)

    def __call__(self, *args):
        n = self.num_devices
        if len(args) != len(self.shardings):
            raise TypeError(f"expected {len(self.shardings)} arguments, got {len(args)}")
        stacked = [np.stack([s.tile(np.asarray(a), d) for d in range(n)]) for a, s in zip(args, self.shardings)]
        out = self._replicated(*stacked)
        if self.result_sharding is not None:
            return self.result_sharding.assemble([out[d] for d in range(n)])
        return out

    def warm_up(self) -> dict:
        """See :meth:`ReplicatedExecutable.warm_up`."""
        return self._replicated.warm_up()


def _may_be_global_program(x) -> bool:
    """Cheap test before parsing: jax's global programs carry a Shardy mesh."""
    if isinstance(x, str):     # HLO's module attribute, or StableHLO's sdy.mesh op
        return "xla.sdy.meshes" in x[:4096] or "sdy.mesh @" in x[:65536]
    module = getattr(x, "module", x)
    return isinstance(getattr(module, "attrs", None), dict) and "frontend_attributes" in module.attrs


def jit(x, *, num_threads: int | None = None, donate_argnums=(), optimize: bool = True,
        num_replicas: int | None = None):
    """``xlac.jit``: an :class:`~xlac.executable.Executable` for a module on one
    device; for a module on several devices (its ``replica_count`` x
    ``num_partitions``, or ``num_replicas=`` for a builder computation) a
    :class:`ReplicatedExecutable`, whose arguments and results carry a leading
    device axis; under ``mpiexec``, an :class:`~xlac.mpi.MpiExecutable` (this
    rank is one device).  See ``xlac.executable.jit`` for the other arguments.
    ``x`` may also be the path of an HLO text file."""
    x = module_text(x)
    if launched_by_mpiexec() > 1:
        # Under mpiexec every rank is one device (xlac.mpi).
        return MpiExecutable(x, num_threads=num_threads, optimize=optimize)
    if _may_be_global_program(x):
        module = as_module(x)
        if partition_global_program(module):
            _refuse_feeds(module, module.replica_count * module.num_partitions)
            return GlobalExecutable(module, num_threads=num_threads or 1)
    replicas, partitions = device_counts_of(x)
    if num_replicas is not None:
        if isinstance(num_replicas, bool) or not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(f"num_replicas must be a positive integer, got {num_replicas!r}")
        replicas = num_replicas
    if replicas * partitions == 1:
        return single_device_jit(x, num_threads=num_threads, donate_argnums=donate_argnums, optimize=optimize)
    module = as_module(x)
    if is_dynamic_module(module):
        raise UnsupportedError("dynamic shapes on several devices",
                               f"module {module.name} runs on {replicas * partitions} devices")
    _refuse_feeds(module, replicas * partitions)
    shardings = parameter_shardings(module) if num_replicas is None else None
    if shardings is not None:
        return SpmdExecutable(module, shardings, num_threads=num_threads or 1)
    module.replica_count = replicas
    return ReplicatedExecutable(module.to_text(), replicas, partitions, num_threads=num_threads or 1)


def _refuse_feeds(module, devices: int) -> None:
    """Infeed and outfeed are served on one device (``exe.infeed``/``exe.outfeed``)."""
    found = feed_instructions(module)
    if found:
        raise UnsupportedError(found[0].opcode, f"instruction {found[0].name} in a module run on {devices} "
                                                "devices: infeed and outfeed work on one device")


# ---------------------------------------------------------------------------------------
# Pools by device count
# ---------------------------------------------------------------------------------------

_pools: dict = {}
_pools_lock = threading.Lock()


def pool(num_devices: int, **options) -> DevicePool:
    """The process-wide pool of ``num_devices`` devices (started on first use)."""
    with _pools_lock:
        p = _pools.get(num_devices)
        if p is None:
            p = _pools[num_devices] = DevicePool(num_devices, **options)
        return p


def close_pools() -> None:
    """Stop every pool's workers and unlink their segments (also run at exit)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for p in pools:
        p.close()


atexit.register(close_pools)


if __name__ == "__main__":       # a device process (DevicePool._start)
    _fd, _name, _device, _n, _cache, _threads, _timeout = sys.argv[1:8]
    _worker_main(Connection(int(_fd)), _name, int(_device), int(_n), _cache, int(_threads), float(_timeout))
