"""``--busy-core``: a process spinning on one CPU while the kernels run.

The spinner is pinned to the last CPU of the harness's affinity mask, so the
kernels see a machine with one core taken by someone else (the case where a
static split of a loop makes the whole call wait for the thread that shares
the busy core).  :class:`BusyCore` is a context manager: the spinner starts
(and has pinned itself) before the body runs and is killed when it ends,
also on an error or Ctrl-C.  Should the harness die without cleaning up, the
spinner follows it: it asks the kernel for ``SIGKILL`` when its parent dies
(Linux's ``PR_SET_PDEATHSIG``) and checks its parent between spins anyway.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

_SPINNER = r"""
import ctypes, os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)        # the harness stops it, not the terminal
cpu, parent = int(sys.argv[1]), int(sys.argv[2])
try:
    ctypes.CDLL(None).prctl(1, 9)                    # PR_SET_PDEATHSIG, SIGKILL
except (AttributeError, OSError):
    pass
os.sched_setaffinity(0, {cpu})
print(os.sched_getaffinity(0).pop(), flush=True)
while os.getppid() == parent:
    for _ in range(100000):
        pass
"""

#: seconds the spinner has to start and report its CPU.
START_TIMEOUT_S = 30.0


def last_cpu() -> int:
    """The last CPU this process may run on."""
    if not hasattr(os, "sched_getaffinity"):
        raise ValueError("--busy-core needs os.sched_getaffinity/sched_setaffinity (Linux)")
    return max(os.sched_getaffinity(0))


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of ``pid`` (from /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class BusyCore:
    """A spinning process pinned to ``cpu`` (default: :func:`last_cpu`) for the
    duration of a ``with`` block; :meth:`report` says what it did."""

    def __init__(self, cpu: int | None = None):
        self.cpu = last_cpu() if cpu is None else cpu
        self.proc: subprocess.Popen | None = None
        self.started = self.stopped = None
        self.cpu_s = None
        self.alive_at_end = None

    def __enter__(self) -> "BusyCore":
        self.proc = subprocess.Popen([sys.executable, "-c", _SPINNER, str(self.cpu), str(os.getpid())],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, encoding="utf-8")
        try:
            self._wait_ready()
        except BaseException:
            self._stop()
            raise
        self.started = time.monotonic()
        return self

    def _wait_ready(self) -> None:
        import selectors
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            ready = sel.select(START_TIMEOUT_S)
        line = self.proc.stdout.readline().strip() if ready else ""
        if line != str(self.cpu):
            self.proc.kill()
            err = (self.proc.communicate(timeout=10)[1] or "").strip().splitlines()
            raise RuntimeError(f"--busy-core: the spinning process did not start on CPU {self.cpu}"
                               + (f": {err[-1]}" if err else f" (got {line!r})"))

    def __exit__(self, *exc) -> bool:
        self._stop()
        return False

    def _stop(self) -> None:
        if self.proc is None:
            return
        self.alive_at_end = self.proc.poll() is None
        self.cpu_s = _cpu_seconds(self.proc.pid)
        self.stopped = time.monotonic()
        if self.alive_at_end:
            self.proc.kill()
        try:
            self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:   # pragma: no cover - SIGKILL not taken yet
            pass

    def report(self) -> dict:
        """{"cpu", "pid", "wall_s", "cpu_s", "alive_at_end"} (times once stopped)."""
        wall = (self.stopped or time.monotonic()) - self.started if self.started else None
        return {"cpu": self.cpu, "pid": self.proc.pid if self.proc else None, "wall_s": wall,
                "cpu_s": self.cpu_s, "alive_at_end": self.alive_at_end}
