"""Threads for generated code: the ``parallel_for`` service of ``xlac_run_options``.

Generated code splits a big loop into tasks and calls
``opts->parallel_for(opts->runtime_ctx, n, body, ctx)``; the JIT supplies
:data:`PARALLEL_FOR_CALLBACK`, a ctypes callback that

* splits ``[0, n)`` into at most ``num_threads`` contiguous ranges
  (``num_threads`` is the executable's, passed as ``runtime_ctx``);
* hands all ranges but the first to the workers of one persistent, process-wide
  :class:`ThreadPool` and runs the first on the calling thread;
* runs each range with one call of a tiny native helper (``xlac_run_range``,
  JIT-compiled once per process) that calls ``body(ctx, i)`` for each ``i``:
  ctypes releases the GIL around the foreign call, so the ranges truly run in
  parallel and no Python runs per iteration;
* returns when every range has finished.

Workers are kept off the caller's CPU: before a dispatch each worker's
affinity is set to the process's CPUs minus the one the caller runs on (only
when that changed since the last dispatch: one ``sched_getcpu`` per call).
Without it Linux's wake-affine placement puts a worker that has slept a while
on the caller's busy CPU, and it waits there for the load balancer (a few ms,
seen as a 2-thread kernel running at 1-thread speed after an idle pause).

No oversubscription: there is one pool per process, grown to the largest
``num_threads`` any executable asked for (minus one: the caller works too);
calls from several Python threads at once take turns; a ``parallel_for``
reached from inside a body (on a worker, or on the caller while it runs its own
range) runs its whole range inline, never nested on the pool.

A Python exception inside the callback (it should not happen, but a
``MemoryError`` or ``KeyboardInterrupt`` can) must not cross the native frames
above it: it is caught, recorded for the thread that made the top-level call
(:func:`record_error`), and :class:`~xlac.executable.Executable`
re-raises it when the native call has returned (:func:`take_error`).
"""
from __future__ import annotations

import ctypes
import os
import threading

from . import abi
from . import native as _native

__all__ = ["default_num_threads", "PARALLEL_FOR_CALLBACK", "REPORT_ERROR_CALLBACK", "ThreadPool",
           "pool", "make_run_options", "record_error", "take_error", "run_range_function"]

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
        owner = getattr(_tls, "owner", None) or threading.get_ident()
    _errors.setdefault(owner, exc)


def take_error() -> BaseException | None:
    """The exception recorded for this thread's last native call, if any (and forget it)."""
    if not _errors:
        return None
    return _errors.pop(threading.get_ident(), None)


# ---------------------------------------------------------------------------------------
# The native range helper
# ---------------------------------------------------------------------------------------

def run_range_function():
    """``xlac_run_range(body, ctx, lo, hi)`` as a ctypes function: calls
    ``body(ctx, i)`` for i in [lo, hi) (``xlac.codegen.runtime_code`` builds it)."""
    return _native.get("run_range")


# ---------------------------------------------------------------------------------------
# The pool
# ---------------------------------------------------------------------------------------

def _libc_sched_getcpu():
    """``sched_getcpu()`` from the C library (None where there is none)."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (OSError, AttributeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_int, []
    return fn


_sched_getcpu = _libc_sched_getcpu()


def _allowed_cpus() -> frozenset:
    try:
        return frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return frozenset()


class _Worker:
    __slots__ = ("thread", "go", "finished", "job", "tid", "avoid")

    def __init__(self):
        self.tid = None             # the thread's native id (set when it starts)
        self.avoid = None           # the CPU its affinity currently excludes
        self.go = threading.Lock()
        self.go.acquire()           # released by the dispatcher: a job is ready
        # Set by the worker when its job has finished.  An Event, not a lock: a
        # waiter that Ctrl-C interrupts (KeyboardInterrupt can come out of the
        # wait even after it succeeded) can wait again without losing the news.
        self.finished = threading.Event()
        self.job = None


_STOP = object()


def _worker_main(w: _Worker) -> None:
    _tls.busy = True                # a parallel_for from a body runs inline here
    w.tid = threading.get_native_id()
    go, finished = w.go, w.finished
    while True:
        go.acquire()
        job = w.job
        if job is _STOP:
            return
        run, body, ctx, lo, hi, owner = job
        _tls.owner = owner
        try:
            run(body, ctx, lo, hi)
        except BaseException as e:  # noqa: BLE001 - recorded, re-raised by the caller
            record_error(e, owner)
        finally:
            w.job = None
            _tls.owner = None
            finished.set()


def _wait_for(workers) -> None:
    """Wait until every one of ``workers`` has finished its range.

    A signal handler's exception (Ctrl-C's ``KeyboardInterrupt``) can come out
    of a lock wait; the ranges still running use the caller's buffers, so the
    wait goes on, and the exception is raised once they have all ended (the
    generated code checks the cancel flag at each task: they end soon)."""
    pending = None
    for w in workers:
        while not w.finished.is_set():
            try:
                w.finished.wait()
            except BaseException as e:  # noqa: BLE001 - re-raised below
                pending = pending or e
    if pending is not None:
        raise pending


class ThreadPool:
    """Persistent worker threads for ``parallel_for``; the caller takes part too.

    A pool of ``size()`` participants has ``size() - 1`` worker threads. It grows
    on demand (``run`` with more threads than it has) and never shrinks.
    """

    def __init__(self):
        self._lock = threading.Lock()      # one parallel_for on the pool at a time
        self._workers: list[_Worker] = []
        self.requested = 1                 # the largest num_threads asked for
        self._cpus = _allowed_cpus()       # the process's CPUs when the pool was made

    def size(self) -> int:
        return len(self._workers) + 1

    def request(self, num_threads: int) -> None:
        """Note that an executable will use ``num_threads`` (workers start on first use)."""
        if num_threads > self.requested:
            self.requested = num_threads

    def _ensure(self, workers: int) -> None:
        while len(self._workers) < workers:
            w = _Worker()
            t = threading.Thread(target=_worker_main, args=(w,), daemon=True,
                                 name=f"xlac-worker-{len(self._workers) + 1}")
            w.thread = t
            t.start()
            self._workers.append(w)

    def _keep_off_caller_cpu(self, workers) -> None:
        """Exclude the caller's current CPU from ``workers``' affinity (see the module
        docstring); a no-op when it is unknown, unchanged, or the only CPU."""
        if _sched_getcpu is None or len(self._cpus) < 2:
            return
        cpu = _sched_getcpu()
        if cpu < 0 or cpu not in self._cpus:
            return
        for w in workers:
            if w.avoid != cpu and w.tid is not None:
                try:
                    os.sched_setaffinity(w.tid, self._cpus - {cpu})
                    w.avoid = cpu
                except OSError:     # the thread's mask cannot be set here: leave it
                    w.avoid = cpu

    def run(self, num_threads: int, n: int, body: int, ctx) -> None:
        """Run ``body(ctx, i)`` for i in [0, n) over ``min(num_threads, n)`` threads."""
        run = run_range_function()
        parts = min(num_threads, n)
        if parts <= 1 or getattr(_tls, "busy", False):
            run(body, ctx, 0, n)
            return
        owner = threading.get_ident()
        with self._lock:
            self._ensure(parts - 1)
            workers = self._workers
            base, extra = divmod(n, parts)
            first = base + (1 if extra else 0)   # the caller's range: [0, first)
            self._keep_off_caller_cpu(workers[:parts - 1])
            used = []
            try:
                start = first
                for j in range(1, parts):
                    stop = start + base + (1 if j < extra else 0)
                    w = workers[j - 1]
                    w.finished.clear()
                    w.job = (run, body, ctx, start, stop, owner)
                    w.go.release()
                    used.append(w)
                    start = stop
                _tls.busy = True
                try:
                    run(body, ctx, 0, first)
                finally:
                    _tls.busy = False
            finally:
                # Always wait: the ranges use the caller's stack (ctx) until they end.
                _wait_for(used)

    def shutdown(self) -> None:
        """Stop the workers (tests; the process exits fine without it)."""
        with self._lock:
            for w in self._workers:
                w.job = _STOP
                w.go.release()
            for w in self._workers:
                w.thread.join()
            self._workers = []


_pool = ThreadPool()


def pool() -> ThreadPool:
    """The process-wide pool."""
    return _pool


def _reset_after_fork() -> None:
    # Worker threads do not survive fork(): the child starts with an empty pool.
    global _pool, _tls
    _pool = ThreadPool()
    _tls = threading.local()
    _errors.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


# ---------------------------------------------------------------------------------------
# The services
# ---------------------------------------------------------------------------------------

def _parallel_for(runtime_ctx, n, body, ctx) -> None:
    try:
        if n <= 0:
            return
        threads = runtime_ctx or 1
        if n == 1 or threads <= 1 or getattr(_tls, "busy", False):
            run_range_function()(body, ctx, 0, n)
        else:
            _pool.run(threads, n, body, ctx)
    except BaseException as e:  # noqa: BLE001 - must not unwind through native frames
        record_error(e)


def _report_error(runtime_ctx, status, message) -> None:
    try:
        text = message.decode("utf-8", "replace") if message else ""
        record_error(RuntimeError(f"xlac: a service failed (status {status}): {text}"))
    except BaseException:  # noqa: BLE001
        pass


#: The ctypes callbacks (kept alive for the life of the process).
PARALLEL_FOR_CALLBACK = abi.PARALLEL_FOR(_parallel_for)
REPORT_ERROR_CALLBACK = abi.REPORT_ERROR(_report_error)


def make_run_options(num_threads: int) -> abi.RunOptions:
    """An ``xlac_run_options`` for an executable using ``num_threads`` threads,
    with the ``report_error`` and ``custom_call`` services.

    ``num_threads == 1`` leaves ``parallel_for`` NULL (generated code runs its
    loops itself); otherwise ``runtime_ctx`` carries ``num_threads``.
    """
    opts = abi.RunOptions()
    opts.abi_version = abi.ABI_VERSION
    opts.replica_id = 0
    opts.num_replicas = 1
    opts.partition_id = 0
    opts.num_partitions = 1
    opts.report_error = REPORT_ERROR_CALLBACK
    from .custom_call_service import CUSTOM_CALL_CALLBACK   # (it records errors through this module)
    opts.custom_call = CUSTOM_CALL_CALLBACK
    if num_threads > 1:
        opts.runtime_ctx = num_threads
        opts.parallel_for = PARALLEL_FOR_CALLBACK
        _pool.request(num_threads)
    return opts
