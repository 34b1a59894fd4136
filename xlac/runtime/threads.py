"""Threads for generated code: the ``parallel_for`` service of ``xlac_run_options``.

Generated code splits a big loop into tasks and calls
``opts->parallel_for(opts->runtime_ctx, n, body, ctx)`` (``runtime_ctx``:
the executable's ``num_threads``).  The JIT supplies a native function
(``xlac_pool_parallel_for``, built by ``xlac.codegen.thread_pool``) over one
process-wide pool of native worker threads: the dispatch runs no Python and
takes no GIL.  The caller publishes the job and wakes the workers (one store,
and a ``futex`` call only when some sleep); everyone, the caller included,
grabs tasks one at a time from a shared counter, so a thread that is late
or descheduled leaves its share to the others; the caller returns when every
task has ended.  Workers spin for ``XLAC_POOL_SPIN_US`` microseconds (50)
between jobs, then sleep.  Workers are kept off the caller's CPU: when it
changes, their affinity becomes the process's CPUs minus that one (Linux's
wake-affine placement would otherwise put a waking worker on its waker's busy
CPU, where it waits for the load balancer).

This module owns the pool's life: :class:`ThreadPool` starts the workers
(``pthread_create`` on the native worker loop) when an executable asks for
threads, at most one per CPU of the process besides the caller (no
oversubscription: ``num_threads`` beyond the CPUs changes nothing, the
run options carry the threads that can take part);
stops and joins them at exit (before the JIT's code goes) and forgets them
in a forked child.  A ``parallel_for`` that finds the pool busy — nested in
a task, or from another thread — runs its tasks inline.

A Python exception in a callback that native code makes (a service such as
``report_error``, maybe on a worker thread) must not cross the native frames
above it: it is recorded for the thread that made the top-level call
(:func:`record_error`; a worker's errors belong to the thread that
dispatched its job), and :class:`~xlac.executable.Executable` re-raises it
when the native call has returned (:func:`take_error`).
"""
from __future__ import annotations

import atexit
import ctypes
import os
import threading

from . import abi
from . import native as _native
from .pool_state import CPU_SET_WORDS, MAX_WORKERS, PoolState

__all__ = ["default_num_threads", "REPORT_ERROR_CALLBACK", "ThreadPool", "pool", "make_run_options",
           "record_error", "take_error"]

def default_num_threads() -> int:
    """The number of CPUs this process may run on (its affinity mask)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# ---------------------------------------------------------------------------------------
# Errors raised inside callbacks
# ---------------------------------------------------------------------------------------

_tls = threading.local()
#: thread ident of a top-level caller -> the first exception its call raised in a callback
_errors: dict[int, BaseException] = {}


def record_error(exc: BaseException, owner: int | None = None) -> None:
    """Remember ``exc`` for the thread that made the native call being served."""
    if owner is None:
        ident = threading.get_ident()
        owner = getattr(_tls, "owner", None) or _pool.owner_of(ident) or ident
    _errors.setdefault(owner, exc)


def take_error() -> BaseException | None:
    """The exception recorded for this thread's last native call, if any (and forget it)."""
    if not _errors:
        return None
    return _errors.pop(threading.get_ident(), None)


# ---------------------------------------------------------------------------------------
# The pool
# ---------------------------------------------------------------------------------------

def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:      # pragma: no cover - no C library to call
        return None


_c = _libc()
#: ``sched_getcpu`` (None where the C library has none).
_sched_getcpu = getattr(_c, "sched_getcpu", None)
if _sched_getcpu is not None:
    _sched_getcpu.restype, _sched_getcpu.argtypes = ctypes.c_int, []


def _allowed_cpus() -> frozenset:
    try:
        return frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return frozenset()


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


class ThreadPool:
    """The process's native worker threads for ``parallel_for`` (see the module
    docstring and ``xlac.codegen.thread_pool``); the caller takes part too.

    A pool of ``size()`` participants has ``size() - 1`` workers: as many as
    the largest ``num_threads`` an executable asked for, minus one, and never
    more than the process's CPUs minus one (more would only take turns on
    the same cores).  It grows on demand and never shrinks.
    """

    def __init__(self):
        self._lock = threading.Lock()      # starting and stopping workers
        self.state = PoolState()
        self.requested = 1                 # the largest num_threads asked for
        self._cpus = _allowed_cpus()
        self._tids: list[int] = []
        self._native = None

    def size(self) -> int:
        return self.state.num_workers + 1

    def parallel_for_address(self) -> int:
        """``xlac_pool_parallel_for``, bound to this pool's state."""
        return self._load()["parallel_for"]

    def _load(self) -> dict:
        if self._native is None:
            fns = _native.get("thread_pool")
            ctypes.c_void_p.from_address(fns["state_slot"]).value = ctypes.addressof(self.state)
            st = self.state
            st.spin_ns = int(_env_float("XLAC_POOL_SPIN_US", 50.0) * 1000)
            st.avoid_cpu = -1
            for cpu in self._cpus:
                if cpu < 64 * CPU_SET_WORDS:
                    st.allowed[cpu // 64] |= 1 << (cpu % 64)
            st.affinity = int(_sched_getcpu is not None and len(self._cpus) >= 2)
            self._native = fns
        return self._native

    def request(self, num_threads: int) -> None:
        """Make sure ``num_threads`` can take part (workers start now)."""
        if num_threads > self.requested:
            self.requested = num_threads
        cap = max(1, len(self._cpus) or default_num_threads()) - 1
        self._ensure(min(num_threads - 1, cap, MAX_WORKERS))

    def _ensure(self, workers: int) -> None:
        if workers <= self.state.num_workers:
            return
        fns = self._load()
        with self._lock:
            while self.state.num_workers < workers:
                index = self.state.num_workers
                tid = ctypes.c_uint64()
                self.state.alive += 1
                status = _c.pthread_create(ctypes.byref(tid), None, ctypes.c_void_p(fns["worker"]),
                                           ctypes.c_void_p(index))
                if status != 0:
                    self.state.alive -= 1
                    raise OSError(status, f"xlac: could not start worker thread {index + 1}: "
                                          f"{os.strerror(status)}")
                self.state.tids[index] = tid.value
                self._tids.append(tid.value)
                self.state.avoid_cpu = -1          # the new worker's affinity is the process's
                self.state.num_workers = index + 1

    def owner_of(self, ident: int) -> int | None:
        """The thread that dispatched the job a worker ``ident`` runs, or None if
        ``ident`` is not one of the workers."""
        return self.state.owner if ident in self._tids else None

    def shutdown(self) -> None:
        """Stop the workers and wait for them (at exit, and in tests)."""
        with self._lock:
            if not self._tids:
                return
            st = self.state
            self._load()["stop"]()
            for tid in self._tids:
                _c.pthread_join(ctypes.c_uint64(tid), None)
            self._tids = []
            st.num_workers = 0
            st.stop = 0
            st.avoid_cpu = -1

    def reset_after_fork(self) -> None:
        """In a forked child: no worker came along."""
        st = self.state
        self._tids = []
        self._lock = threading.Lock()
        st.lock = st.sleepers = st.num_workers = st.alive = st.stop = 0
        st.avoid_cpu = -1


_pool = ThreadPool()


def pool() -> ThreadPool:
    """The process-wide pool."""
    return _pool


@atexit.register
def _stop_workers() -> None:
    # Before the JIT's code (which the workers run) is freed.
    _pool.shutdown()


def _reset_after_fork() -> None:
    global _tls
    _pool.reset_after_fork()
    _tls = threading.local()
    _errors.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


# ---------------------------------------------------------------------------------------
# The services
# ---------------------------------------------------------------------------------------

def _report_error(runtime_ctx, status, message) -> None:
    try:
        text = message.decode("utf-8", "replace") if message else ""
        record_error(RuntimeError(f"xlac: a service failed (status {status}): {text}"))
    except BaseException:  # noqa: BLE001
        pass


#: The ctypes callback (kept alive for the life of the process).
REPORT_ERROR_CALLBACK = abi.REPORT_ERROR(_report_error)


def make_run_options(num_threads: int) -> abi.RunOptions:
    """An ``xlac_run_options`` for an executable using ``num_threads`` threads,
    with the ``report_error`` and ``custom_call`` services.

    ``num_threads == 1`` leaves ``parallel_for`` NULL (generated code runs its
    loops itself); otherwise ``runtime_ctx`` carries ``num_threads``, and the
    ``num_threads`` field the threads that can really take part (the pool
    has at most one worker per CPU besides the caller): generated code sizes
    its GEMM and convolution task grids from it, so ``num_threads=16`` on 2
    CPUs splits work exactly as ``num_threads=2`` does.
    """
    opts = abi.RunOptions()
    opts.abi_version = abi.ABI_VERSION
    opts.replica_id = 0
    opts.num_replicas = 1
    opts.partition_id = 0
    opts.num_partitions = 1
    opts.num_threads = 1
    opts.report_error = REPORT_ERROR_CALLBACK
    from .custom_call_service import CUSTOM_CALL_CALLBACK   # (it records errors through this module)
    opts.custom_call = CUSTOM_CALL_CALLBACK
    if num_threads > 1:
        _pool.request(num_threads)
        opts.runtime_ctx = num_threads
        opts.num_threads = min(num_threads, _pool.size())
        opts.parallel_for = abi.PARALLEL_FOR(_pool.parallel_for_address())
    return opts
