"""Machine limits measured in the same run as the kernels.

* STREAM triad ``a[i] = b[i] + s*c[i]`` on float32 arrays, as native code that
  does not go through numpy: a loop written in LLVM IR here, compiled with
  llvmlite at O3 for the host CPU, called through ctypes (which releases the
  GIL) from 1 and 2 Python threads, each on its own contiguous part, buffers
  allocated once.  As STREAM's OpenMP threads do, the threads live for the
  whole measurement, each bound to its own CPU, and start every repetition
  together (a barrier); unbound threads woken for each repetition were seen
  sharing one CPU for milliseconds after a pause (Linux's wake-affine
  placement), halving the measured bandwidth.  Bytes counted as STREAM counts them: 3 arrays x 4 bytes per
  element (the write-allocate read of ``a`` is not counted).
* The same triad compiled by xlac (``xlac.jit``), for comparison.
* The best sgemm at hand: numpy's BLAS ``matmul`` of two 4096x4096 float32
  matrices into a preallocated result, and jax.jit's (XLA's own GEMM) when jax
  is installed; the faster one is the reference.  xlac's own product of the
  same matrices (``xlac.jit`` of an HLO ``dot``, result allocated per call)
  is measured beside them, not counted as a reference; the three are sampled
  in the same rounds (:func:`sgemm_rates`).
"""
from __future__ import annotations

import ctypes
import time

import numpy as np

_TRIAD_IR = r"""
define void @triad(ptr noalias nocapture %a, ptr noalias nocapture readonly %b,
                   ptr noalias nocapture readonly %c, float %s, i64 %n) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  %pc = getelementptr inbounds float, ptr %c, i64 %i
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %vb = load float, ptr %pb, align 4
  %vc = load float, ptr %pc, align 4
  %m = fmul float %s, %vc
  %r = fadd float %vb, %m
  store float %r, ptr %pa, align 4
  %i1 = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""

_TRIAD_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_float, ctypes.c_int64)
_engine = None
_triad = None


def native_triad():
    """The ctypes function of the llvmlite-compiled triad (compiled once)."""
    global _engine, _triad
    if _triad is not None:
        return _triad
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                      features=llvm.get_host_cpu_features().flatten(), opt=3)
    mod = llvm.parse_assembly(_TRIAD_IR)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    _engine = engine
    _triad = _TRIAD_FN(engine.get_function_address("triad"))
    return _triad


def _median_time(fn, runs: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


class NativeTriad:
    """The native triad on three arrays of ``nbytes`` each, run by ``threads`` threads
    that live until :meth:`close`, each bound to its own CPU (when there are enough)
    and on its own contiguous part.  Calling the object runs one repetition (all
    threads start together at a barrier) and returns when every part is done."""

    def __init__(self, nbytes: int, threads: int):
        import os
        import threading

        self.fn = native_triad()
        self.n = n = nbytes // 4
        self.threads = threads
        self.a = np.zeros(n, np.float32)
        self.b, self.c = np.ones(n, np.float32), np.full(n, 2.0, np.float32)
        # Parts aligned to 16 elements (one cache line).
        self.bounds = [min(n, (n * k // threads + 15) // 16 * 16) for k in range(threads + 1)]
        self.bounds[-1] = n
        try:
            self.cpus = sorted(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            self.cpus = []
        self._start = threading.Barrier(threads + 1)
        self._end = threading.Barrier(threads + 1)
        self._stop = False
        self.calls = 0
        self._workers = [threading.Thread(target=self._work, args=(k,), daemon=True)
                         for k in range(threads)]
        for w in self._workers:
            w.start()

    def _work(self, k: int) -> None:
        import os
        if len(self.cpus) >= self.threads:
            os.sched_setaffinity(0, {self.cpus[k]})      # this thread only
        lo, ln = self.bounds[k], self.bounds[k + 1] - self.bounds[k]
        pa, pb, pc = (x.ctypes.data + 4 * lo for x in (self.a, self.b, self.c))
        s = ctypes.c_float(3.0)
        while True:
            self._start.wait()
            if self._stop:
                return
            self.fn(pa, pb, pc, s, ln)
            self._end.wait()

    def __call__(self) -> None:
        self._start.wait()
        self._end.wait()
        self.calls += 1

    def gbs(self, seconds: float) -> float:
        """The bandwidth of one repetition that took ``seconds`` (STREAM's bytes: 3 arrays)."""
        return 3 * self.n * 4 / seconds / 1e9

    def close(self) -> None:
        """Stop the threads and check the result (``a`` must hold ``b + 3*c`` = 7 once
        the triad has run; a run of only compute-bound kernels never calls it)."""
        self._stop = True
        self._start.wait()
        for w in self._workers:
            w.join()
        if self.calls and not np.allclose(self.a[:: max(1, self.n // 1000)], 7.0):
            raise RuntimeError("native triad computed wrong values")


def stream_triad_native(nbytes: int, threads: int, runs: int = 15) -> float:
    """GB/s of the native triad on three arrays of ``nbytes`` each with ``threads`` threads
    (median of ``runs`` repetitions after two warm-up ones)."""
    triad = NativeTriad(nbytes, threads)
    try:
        t = _median_time(triad, runs)
    finally:
        triad.close()
    return triad.gbs(t)


def stream_triad_xlac(nbytes: int, threads: int | None, runs: int = 15, caps=None):
    """(GB/s, how) of an xlac-compiled triad; ``how`` says whether buffers were reused."""
    import xlac
    from xlac import ops

    from .harness import capabilities, reuse_call
    caps = caps or capabilities()
    n = nbytes // 4
    bld = xlac.XlaBuilder("triad")
    b = ops.parameter(bld, 0, xlac.Shape(xlac.F32, (n,)), "b")
    c = ops.parameter(bld, 1, xlac.Shape(xlac.F32, (n,)), "c")
    s = ops.parameter(bld, 2, xlac.Shape(xlac.F32, ()), "s")
    comp = bld.build(ops.add(b, ops.mul(ops.broadcast(s, (n,)), c)))
    # b is donated and each result fed back as the next b (it grows by 6 a call).
    args = [np.ones(n, np.float32), np.full(n, 2.0, np.float32), np.float32(3.0)]
    call, how, _ = reuse_call(comp, args, caps, threads, 0)
    if call is None:
        exe = xlac.jit(comp, **({"num_threads": threads} if threads and caps.get("num_threads") else {}))
        call, how = (lambda: exe(*args)), f"output allocated per call ({how})"
    t = _median_time(call, runs)
    return 3 * n * 4 / t / 1e9, how


def _matrices(n: int) -> tuple:
    rng = np.random.default_rng(0)
    return (rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32))


def sgemm_jax_call(n: int):
    """A call of jax.jit's n x n x n float32 product (XLA's CPU GEMM), or None without jax."""
    try:
        import jax
    except Exception:  # noqa: BLE001 - absent or broken
        return None
    A, B = (jax.device_put(m) for m in _matrices(n))
    f = jax.jit(lambda a, b: a @ b)
    f(A, B).block_until_ready()
    return lambda: f(A, B).block_until_ready()


def sgemm_numpy_call(n: int):
    """A call of numpy's BLAS on an n x n x n float32 product into a preallocated result."""
    A, B = _matrices(n)
    C = np.empty((n, n), np.float32)
    return lambda: np.matmul(A, B, out=C)


def sgemm_xlac_call(n: int, threads: int | None = None):
    """A call of xlac's n x n x n float32 ``dot`` (its GEMM), as a user calls it."""
    import xlac
    A, B = _matrices(n)
    text = (f"HloModule sgemm\nENTRY e {{\n  a = f32[{n},{n}]{{1,0}} parameter(0)\n"
            f"  b = f32[{n},{n}]{{1,0}} parameter(1)\n"
            f"  ROOT d = f32[{n},{n}]{{1,0}} dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n}}")
    exe = xlac.jit(text, **({"num_threads": threads} if threads else {}))
    exe(A, B)
    return lambda: exe(A, B)


def sgemm_rates(n: int, calls: dict, runs: int = 5) -> dict:
    """{name: GFLOP/s, or the exception raised} of n x n x n products ``calls`` ({name: callable}), timed
    interleaved with the kernels' rules (``harness.time_interleaved``: a new order
    each round, each sample after an untimed call of the same implementation).
    Timed one after the other, a product that followed another library's ran with
    that library's idle threads still spinning: xlac's 4096^3 on 2 threads measured
    0.93x OpenBLAS's speed right after an OpenBLAS call and 1.02x 0.3 s later."""
    from .harness import time_interleaved
    got = time_interleaved(calls, repeat=runs, budget=float("inf"))
    return {k: v if isinstance(v, BaseException) else 2.0 * n ** 3 / v.median_s / 1e9 for k, v in got.items()}
