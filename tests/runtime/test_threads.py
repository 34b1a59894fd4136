"""parallel_for: the callback directly (hand-written kernels), through compiled
modules (num_threads=1 vs 2), nesting, concurrency, errors, and its overhead."""
import ctypes
import os
import threading
import time

import numpy as np
import pytest

import xlac
from xlac.runtime import abi, threads


@pytest.mark.parametrize("num_threads", [2, 3, 8])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 64, 1000])
def test_every_index_runs_exactly_once(flat_kernel, num_threads, n):
    opts = threads.make_run_options(num_threads)
    assert (flat_kernel(opts, n, size=n) == 1).all()


def test_one_thread_passes_no_parallel_for(flat_kernel):
    opts = threads.make_run_options(1)
    assert opts.abi_version == abi.ABI_VERSION == 6
    assert opts.custom_call and opts.report_error           # the JIT's services
    assert not opts.parallel_for and opts.num_replicas == 1 and opts.replica_id == 0
    assert opts.num_partitions == 1 and opts.partition_id == 0
    assert (flat_kernel(opts, 100, size=100) == 1).all()     # the kernel loops itself
    opts2 = threads.make_run_options(2)
    assert opts2.parallel_for and opts2.runtime_ctx == 2


def test_nested_parallel_for_runs_inline(nested_kernel):
    opts = threads.make_run_options(4)
    for n, m in [(2, 3), (4, 64), (13, 7), (1, 50)]:
        assert (nested_kernel(opts, n, m, size=n * m) == 1).all()
    # The pool never grows beyond what was asked for (nested calls take no workers).
    assert threads.pool().size() <= threads.pool().requested


def test_concurrent_callers_share_the_pool(flat_kernel, nested_kernel):
    opts = threads.make_run_options(2)
    bad = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(30):
            n = int(rng.integers(0, 200))
            if not (flat_kernel(opts, n, size=n) == 1).all():
                bad.append(("flat", n))
            n, m = int(rng.integers(1, 9)), int(rng.integers(1, 9))
            if not (nested_kernel(opts, n, m, size=n * m) == 1).all():
                bad.append(("nested", n, m))

    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not any(t.is_alive() for t in ts), "parallel_for hung"
    assert bad == []


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or threads._sched_getcpu is None,
                    reason="needs two CPUs and sched_getcpu")
def test_workers_are_kept_off_the_callers_cpu(flat_kernel):
    opts = threads.make_run_options(2)
    for _ in range(3):            # the first dispatch may start the worker
        assert (flat_kernel(opts, 64, size=64) == 1).all()
    pool = threads.pool()
    workers = [pool.state.ktids[k] for k in range(pool.state.num_workers)]
    avoid = pool.state.avoid_cpu
    assert workers and all(workers) and avoid >= 0
    for tid in workers:
        mask = os.sched_getaffinity(tid)
        assert avoid not in mask and mask == pool._cpus - {avoid}


def test_default_num_threads_is_the_affinity_mask():
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert threads.default_num_threads() == expected
    exe = xlac.jit(ADD)
    assert exe.num_threads == expected
    assert bool(exe._opts.parallel_for) == (expected > 1)


@pytest.mark.parametrize("bad", [0, -1, 2.5, "2", True])
def test_num_threads_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="num_threads"):
        xlac.jit(ADD, num_threads=bad)


def test_an_error_recorded_in_a_task_on_a_worker_reaches_the_caller():
    """A task that reports an error (a Python callback recording it) on a
    worker thread: it is the dispatching thread's error, taken once."""
    pool = threads.pool()
    pool.request(2)
    if pool.size() < 2:
        pytest.skip("one CPU: no worker")
    ran_on = set()

    @abi.PARALLEL_BODY
    def body(ctx, i):
        ran_on.add(threading.get_ident())
        if i == 63:
            threads.record_error(RuntimeError(f"boom in task {i}"))
    parallel_for = abi.PARALLEL_FOR(pool.parallel_for_address())
    for _ in range(20):
        parallel_for(2, 64, ctypes.cast(body, ctypes.c_void_p).value, None)
        err = threads.take_error()
        assert isinstance(err, RuntimeError) and "boom in task 63" in str(err)
        assert threads.take_error() is None                  # taken once
    assert threading.get_ident() in ran_on                   # the caller takes part


def test_report_error_becomes_an_exception(report_kernel):
    report_kernel(threads.make_run_options(1), size=0)
    err = threads.take_error()
    assert isinstance(err, RuntimeError)
    assert "status 5" in str(err) and "the service broke" in str(err)


# ---------------------------------------------------------------------------------------
# Compiled modules: identical results with 1 and 2 threads
# ---------------------------------------------------------------------------------------

ADD = """HloModule add8
ENTRY main {
  a = f32[8]{0} parameter(0)
  b = f32[8]{0} parameter(1)
  ROOT r = f32[8]{0} add(a, b)
}"""

BIG_ELEMENTWISE = """HloModule big
ENTRY main {
  x = f32[512,512]{1,0} parameter(0)
  y = f32[512,512]{1,0} parameter(1)
  m = f32[512,512]{1,0} multiply(x, y)
  ROOT r = f32[512,512]{1,0} add(m, x)
}"""

ROW_SUM = """HloModule rows
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[1024,384]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1024]{0} reduce(x, z), dimensions={1}, to_apply=add
}"""

COL_SUM = ROW_SUM.replace("HloModule rows", "HloModule cols").replace(
    "f32[1024]{0} reduce(x, z), dimensions={1}", "f32[384]{0} reduce(x, z), dimensions={0}")

SOFTMAX = """HloModule softmax
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[512,300]{1,0} parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[512]{0} reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[512,300]{1,0} broadcast(mx), dimensions={0}
  d = f32[512,300]{1,0} subtract(x, mb)
  e = f32[512,300]{1,0} exponential(d)
  z = f32[] constant(0)
  s = f32[512]{0} reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[512,300]{1,0} broadcast(s), dimensions={0}
  ROOT r = f32[512,300]{1,0} divide(e, sb)
}"""

TRANSPOSE_ADD = """HloModule tadd
ENTRY main {
  x = f32[640,384]{1,0} parameter(0)
  y = f32[384,640]{1,0} parameter(1)
  t = f32[384,640]{1,0} transpose(x), dimensions={1,0}
  ROOT r = f32[384,640]{1,0} add(t, y)
}"""

MULTI = """HloModule multi
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[600,400]{1,0} parameter(0)
  e = f32[600,400]{1,0} tanh(x)
  z = f32[] constant(0)
  s = f32[] reduce(e, z), dimensions={0,1}, to_apply=add
  ROOT r = (f32[600,400]{1,0}, f32[]) tuple(e, s)
}"""


def _reference(name, args):
    x = args[0].astype(np.float64)
    if name == "big":
        return x * args[1] + x
    if name == "rows":
        return x.sum(axis=1)
    if name == "cols":
        return x.sum(axis=0)
    if name == "softmax":
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if name == "tadd":
        return x.T + args[1]
    if name == "multi":
        return (np.tanh(x), np.tanh(x).sum())
    raise KeyError(name)


@pytest.mark.parametrize("name,text", [("big", BIG_ELEMENTWISE), ("rows", ROW_SUM), ("cols", COL_SUM),
                                       ("softmax", SOFTMAX), ("tadd", TRANSPOSE_ADD), ("multi", MULTI)])
def test_one_and_two_threads_agree(name, text):
    rng = np.random.default_rng(1)
    e1 = xlac.jit(text, num_threads=1)
    e2 = xlac.jit(text, num_threads=2)
    assert e1._jit is e2._jit                      # the same code, different run options
    args = [rng.standard_normal(s.dimensions).astype(np.float32) for s in e1.parameter_shapes]
    r1, r2 = e1(*args), e2(*args)
    ref = _reference(name, args)
    if not isinstance(r1, tuple):
        r1, r2, ref = (r1,), (r2,), (ref,)
    for a, b, c in zip(r1, r2, ref):
        # Same code and the same task boundaries: only the order of float
        # reductions across tasks could differ.
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(a, c, rtol=2e-4, atol=2e-3)


def test_parallel_for_overhead(flat_kernel):
    """Prints the cost of one parallel_for call (no timing asserts)."""
    lines = []
    for nt in (1, 2):
        opts = threads.make_run_options(nt)
        for n in (2, 8, 64):
            counts = np.zeros(n, np.int64)
            nn = np.array(n, np.int64)
            res = (ctypes.c_void_p * 1)(counts.ctypes.data)
            par = (ctypes.c_void_p * 1)(nn.ctypes.data)
            call = (ctypes.addressof(res), ctypes.addressof(par), None, ctypes.addressof(opts))
            flat_kernel.fn(*call)
            best = float("inf")
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(200):
                    flat_kernel.fn(*call)
                best = min(best, (time.perf_counter() - t0) / 200)
            assert (counts == 1 + 5 * 200).all()
            lines.append(f"num_threads={nt} n={n}: {best * 1e6:.2f} us per call"
                         + (" (parallel_for NULL: the kernel loops)" if nt == 1 else ""))
    print("\nparallel_for overhead:\n  " + "\n  ".join(lines))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
# jax, when another test of this worker imported it, warns about any fork; the child
# here runs xlac's pool only.
@pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called:RuntimeWarning")
def test_fork_after_the_pool_started(flat_kernel):
    """A child forked while the pool has workers (none come along) starts its
    own; the parent's pool goes on working."""
    opts = threads.make_run_options(2)
    assert (flat_kernel(opts, 64, size=64) == 1).all()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # the child: no worker survived fork()
        try:
            ok = threads.pool().state.num_workers == 0
            child_opts = threads.make_run_options(2)
            ok = ok and all((flat_kernel(child_opts, n, size=n) == 1).all() for n in (2, 64, 1000))
            os.write(w, b"ok" if ok else b"bad")
        finally:
            os._exit(0)
    os.close(w)
    try:
        got = os.read(r, 16)
    finally:
        os.close(r)
        os.waitpid(pid, 0)
    assert got == b"ok"
    assert (flat_kernel(opts, 1000, size=1000) == 1).all()


def test_workers_never_outnumber_the_cpus(flat_kernel):
    """num_threads beyond the CPUs makes no more workers (no oversubscription)."""
    opts = threads.make_run_options(16)
    assert (flat_kernel(opts, 640, size=640) == 1).all()
    assert threads.pool().size() <= max(1, len(os.sched_getaffinity(0)))


@pytest.mark.timeout(120)
def test_a_job_takes_no_more_workers_than_its_tasks(flat_kernel):
    """A job of n tasks admits at most n - 1 workers besides the caller (the
    first to join), whether they were spinning or asleep; every task still
    runs once.  The pool is grown past the CPUs here (test only) so that
    there are workers to refuse, and stopped afterwards."""
    pool = threads.pool()
    opts = threads.make_run_options(8)
    opts.runtime_ctx = 8
    try:
        pool._ensure(6)
        st = pool.state
        for rep in range(300):
            n = 2 + rep % 4
            if rep % 50 == 49:
                time.sleep(0.002)       # let the workers fall asleep: the futex path
            assert (flat_kernel(opts, n, size=n) == 1).all(), n
            joined = st.joined
            assert joined >> 32 == st.generation, "joined belongs to the last job"
            assert (joined & 0xFFFFFFFF) <= min(n - 1, st.max_workers) <= n - 1
        assert (flat_kernel(opts, 1000, size=1000) == 1).all()
    finally:
        pool.shutdown()
