"""The cost of one ``parallel_for`` dispatch of xlac's thread pool.

A small native driver (LLVM IR compiled with xlac's own ``compile_ir``) calls
``parallel_for(runtime_ctx, n_tasks, body, ctx)`` ``reps`` times in a loop
with an empty ``body``, the way generated code calls it, so neither ctypes
nor Python is on the measured path: one Python call of the driver makes
``REPS`` dispatches.  ``parallel_for`` is the pool's own function
(``xlac.runtime.threads.make_run_options(n).parallel_for``, ``runtime_ctx``
= ``n``); for one thread the same function is called with ``runtime_ctx`` = 1,
which runs the tasks inline (generated code with ``num_threads=1`` does not
call it at all).  Before timing, each configuration runs once with a body
that counts its tasks, and every task must have run exactly once.

Samples are taken with the harness's :func:`~benchmarks.harness.time_interleaved`
(rounds across every configuration, settling, median), so a change in the
load of the machine hits them alike.
"""
from __future__ import annotations

import ctypes

import numpy as np

#: dispatches per call of the driver (a call is then ~0.1-1 ms: ctypes' cost vanishes).
REPS = 200
#: task counts timed by default.
TASKS = (2, 8, 64)

_IR = r"""
define void @xlac_bench_noop(ptr %ctx, i64 %i) {
  ret void
}
define void @xlac_bench_count(ptr %ctx, i64 %i) {
  %p = getelementptr i64, ptr %ctx, i64 %i
  %old = atomicrmw add ptr %p, i64 1 seq_cst
  ret void
}
define void @xlac_bench_drive(ptr %pf, ptr %rc, i64 %n, i64 %reps, ptr %body, ptr %ctx) {
entry:
  %any = icmp sgt i64 %reps, 0
  br i1 %any, label %loop, label %done
loop:
  %r = phi i64 [0, %entry], [%r1, %loop]
  call void %pf(ptr %rc, i64 %n, ptr %body, ptr %ctx)
  %r1 = add i64 %r, 1
  %more = icmp slt i64 %r1, %reps
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""

_DRIVE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                          ctypes.c_void_p, ctypes.c_void_p)


class Driver:
    """The compiled driver and its two bodies (``noop``, ``count``)."""

    def __init__(self):
        import xlac.codegen.runtime_code  # noqa: F401  (registers the pool's native code)
        from xlac.codegen.jit import compile_ir
        self._jit = compile_ir(_IR, "xlac_bench_drive")
        engine = self._jit.engine
        self.drive = _DRIVE(self._jit.address)
        self.noop = engine.get_function_address("xlac_bench_noop")
        self.count = engine.get_function_address("xlac_bench_count")


def pool_function(num_threads: int) -> tuple[int, int, object]:
    """(address of the pool's ``parallel_for``, ``runtime_ctx``, what keeps it alive)."""
    from xlac.runtime import threads
    if num_threads == 1:        # make_run_options(1) passes NULL: call the pool's function inline
        return threads.pool().parallel_for_address(), 1, None
    opts = threads.make_run_options(num_threads)
    return ctypes.cast(opts.parallel_for, ctypes.c_void_p).value, int(opts.runtime_ctx), opts


def check_config(driver: Driver, pf: int, rc: int, n: int) -> None:
    """Run ``n`` counting tasks through ``pf`` once; each must run exactly once."""
    counts = np.zeros(n, np.int64)
    driver.drive(pf, rc, n, 1, driver.count, counts.ctypes.data)
    wrong = np.flatnonzero(counts != 1)
    if wrong.size:
        raise RuntimeError(f"parallel_for(num_threads={rc}, n={n}) ran tasks {wrong[:8].tolist()} "
                           f"{counts[wrong[:8]].tolist()} times (each must run once)")


def _calls(driver: Driver, thread_counts, tasks) -> tuple[dict, list]:
    calls, keep = {}, []
    for t in thread_counts:
        pf, rc, holder = pool_function(t)
        keep.append(holder)
        for n in tasks:
            check_config(driver, pf, rc, n)
            calls[(t, n)] = (lambda pf=pf, rc=rc, n=n: driver.drive(pf, rc, n, REPS, driver.noop, None))
    return calls, keep


def measure(thread_counts, tasks=TASKS, repeat: int = 15, budget: float = 30.0) -> dict:
    """``{"us": {threads: {tasks: µs per dispatch}}, "workers": pool workers, ...}``."""
    from xlac.runtime import threads

    from .harness import Timing, time_interleaved
    thread_counts = sorted(set(thread_counts))
    driver = Driver()
    calls, keep = _calls(driver, thread_counts, tasks)
    named = {f"{t}/{n}": fn for (t, n), fn in calls.items()}
    timings = time_interleaved(named, repeat, budget)
    us: dict = {}
    for (t, n) in calls:
        got = timings[f"{t}/{n}"]
        if not isinstance(got, Timing):
            raise RuntimeError(f"parallel_for dispatch, {t} thread(s), {n} tasks: {got}")
        us.setdefault(str(t), {})[str(n)] = got.median_s / REPS * 1e6
    del keep
    return {"us": us, "tasks": list(tasks), "threads": thread_counts, "reps": REPS,
            "workers": threads.pool().size() - 1, "samples": repeat}
