"""Task grids of GEMMs and convolutions chosen at run time from
``opts->num_threads`` (``codegen/task_grid.py``).

The grids are planned per thread class at compile time; these tests check
the plans (the one-thread grid is the compile-time planner's, more threads
get enough tasks of efficient sizes), and run compiled kernels with run
options of every thread count 1..16 through a ``parallel_for`` that runs the
workers in shuffled order on the calling thread: the kernel must start
``min(tasks, threads)`` workers and compute the same bits as on one thread,
for the GEMM library, the module's own GEMM and the convolution, over shapes
with edge tiles.
"""
import ctypes
import random

import numpy as np
import pytest

import xlac
from xlac.codegen import gemm_library, task_grid
from xlac.codegen.compiler import KERNELS, lower
from xlac.codegen.gemm_kernel import blocking_for
from xlac.codegen.jit import compile_ir
from xlac.codegen.kernels import conv_gemm, dot as dot_kernel, dot_plan
from xlac.runtime import abi
from xlac.shape import F32, from_buffer, to_buffer


def _grids(nb, m, n, k):
    blk = blocking_for(F32, m, n)
    return dot_plan.gemm_grids(nb, -(-m // blk.mr), -(-n // blk.nr), 2 * nb * m * n * k, blk), blk


def _for(table, threads):
    """The grid ``task_grid.select`` picks for ``threads``."""
    for cls, g in zip(task_grid.THREAD_CLASSES, table.grids):
        if threads <= cls:
            return g
    return table.grids[-1]


# ---------------------------------------------------------------------------
# The plans
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape, serial, serial_avx2", [
    # the grids docs/threads.md lists for one thread (AVX-512's 6 x 64 tile);
    # AVX2's 4 x 24 tile splits some of them differently
    ((1, 1024, 1024, 1024), (1, 8, 2), (1, 8, 4)),
    ((1, 2048, 2048, 2048), (1, 16, 2), (1, 16, 2)),
    ((64, 128, 128, 128), (32, 1, 1), (32, 1, 1)),
    ((1, 256, 512, 784), (1, 2, 1), (1, 2, 2)),
    ((1, 8, 8, 8), (1, 1, 1), (1, 1, 1)),
])
def test_one_thread_keeps_the_compile_time_grid(shape, serial, serial_avx2, pinned_target):
    table, _ = _grids(*shape)
    assert table.serial.split == (serial if pinned_target.vector_bits >= 512 else serial_avx2)


def test_the_1024_cube_has_tasks_for_16_threads():
    table, blk = _grids(1, 1024, 1024, 1024)
    g = _for(table, 16)
    assert g.n_tasks >= 2 * 16
    nbt, nmt, nnt = g.split
    # Chunks stay whole blocks of the micro-kernel: at least MC-ish rows and 2 NR panels.
    assert 1024 // nmt >= 64 and 1024 // nnt >= 2 * blk.nr
    mc, nc = g.sizes
    assert mc % blk.mr == 0 and nc % blk.nr == 0 and mc >= 64
    # More threads never get fewer tasks.
    counts = [_for(table, t).n_tasks for t in range(1, 33)]
    assert counts == sorted(counts)


def test_the_mlp_product_gets_tasks_for_every_thread():
    table, blk = _grids(1, 256, 784, 512)
    for threads in (2, 4, 8):
        g = _for(table, threads)
        assert g.n_tasks >= 2 * threads, (threads, g)
        _, nmt, nnt = g.split
        assert -(-256 // nmt) >= dot_plan.THREADED_MIN_M_PANELS * blk.mr
        assert -(-512 // nnt) >= dot_plan.THREADED_MIN_N_PANELS * blk.nr
    assert _for(table, 2).n_tasks <= 4 * 2    # no finer than needed on 2 threads


def test_small_products_stay_one_task():
    table, _ = _grids(1, 64, 64, 64)
    assert table.fixed and table.serial.n_tasks == 1 and table.max_workers == 1


def test_split_keeps_whole_batches_and_minimums():
    assert task_grid.split(8, (3, 100, 100), (0, 10, 10), (1, 4, 4)) == (3, 2, 1)
    assert task_grid.split(4, (64, 100, 100), (0, 10, 10), (1, 4, 4)) == (4, 1, 1)
    # The longer chunk is halved first, down to the small minimums only.
    assert task_grid.split(1, (1, 64, 64), (0, 100, 100), (1, 1, 1), (8, 8), 16) == (1, 4, 4)
    assert task_grid.split(1, (1, 16, 64), (0, 100, 100), (1, 1, 1), (8, 8), 64) == (1, 2, 8)


def test_conv_grids_scale_with_threads():
    blk = conv_gemm.Blocking(16, conv_gemm.INDIRECT_MR, 32, 256, 120, 2048)
    m_panels, n_panels = -(-32 * 56 * 56 // blk.mr), 2
    table = conv_gemm.conv_grids(m_panels, n_panels, 2 * 32 * 56 * 56 * 64 * 576, blk)
    assert table.serial.n_tasks == 32
    assert _for(table, 16).n_tasks >= 64


# ---------------------------------------------------------------------------
# Compiled kernels under every thread count
# ---------------------------------------------------------------------------

class _Recorder:
    """A ``parallel_for`` that runs the tasks in shuffled order on the calling
    thread and records each call's task count."""

    def __init__(self):
        self.calls = []
        self.fn = abi.PARALLEL_FOR(self._run)

    def _run(self, runtime_ctx, n, body, ctx):
        self.calls.append(n)
        order = list(range(n))
        random.Random(n).shuffle(order)
        call = abi.PARALLEL_BODY(body)
        for i in order:
            call(ctx, i)


class _Compiled:
    def __init__(self, text):
        self.lowered = lower(xlac.parse_hlo(text))
        self.jf = compile_ir(self.lowered.llvm_module, self.lowered.entry_name,
                             before_load=gemm_library.ensure_symbols)
        self.entry = abi.ENTRY(self.jf.address)

    def __call__(self, args, num_threads=None, version=abi.ABI_VERSION, recorder=None):
        params = self.lowered.hlo.entry.parameters
        bufs = [np.ascontiguousarray(to_buffer(a, p.shape)) for a, p in zip(args, params)]
        (rshape,) = self.lowered.assignment.result_shapes
        result = np.zeros(max(1, rshape.buffer_element_count()), rshape.dtype)
        temp = np.zeros(self.lowered.assignment.temp_size + 64, np.uint8)
        temp_addr = temp.ctypes.data + (-temp.ctypes.data) % 64
        p_arr = (ctypes.c_void_p * len(bufs))(*[x.ctypes.data for x in bufs])
        r_arr = (ctypes.c_void_p * 1)(result.ctypes.data)
        opts = None
        if num_threads is not None:
            opts = abi.RunOptions(abi_version=version, num_replicas=1, num_partitions=1,
                                  num_threads=num_threads)
            opts.parallel_for = recorder.fn
        self.entry(ctypes.addressof(r_arr), ctypes.addressof(p_arr), temp_addr,
                   ctypes.addressof(opts) if opts is not None else None)
        return from_buffer(result[:rshape.buffer_element_count()], rshape)


def _dot_text(m, k, n, epilogue=False):
    if not epilogue:
        return (f"HloModule m\n\nENTRY e {{\n  a = f32[{m},{k}]{{1,0}} parameter(0)\n"
                f"  b = f32[{k},{n}]{{1,0}} parameter(1)\n"
                f"  ROOT d = f32[{m},{n}]{{1,0}} dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n}}\n")
    # An operand producer (negate) inside the output fusion keeps the
    # module's own GEMM (written fused: the fusion pass leaves a matrix
    # product's operands out).
    return (f"HloModule m\n\nfused {{\n  p0 = f32[{m},{k}]{{1,0}} parameter(0)\n"
            f"  p1 = f32[{k},{n}]{{1,0}} parameter(1)\n  na = f32[{m},{k}]{{1,0}} negate(p0)\n"
            f"  d = f32[{m},{n}]{{1,0}} dot(na, p1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n"
            f"  ROOT t = f32[{m},{n}]{{1,0}} tanh(d)\n}}\n\n"
            f"ENTRY e {{\n  a = f32[{m},{k}]{{1,0}} parameter(0)\n  b = f32[{k},{n}]{{1,0}} parameter(1)\n"
            f"  ROOT f = f32[{m},{n}]{{1,0}} fusion(a, b), kind=kOutput, calls=fused\n}}\n")


def _conv_text(n, h, w, ci, co, k):
    return (f"HloModule m\n\nENTRY e {{\n  x = f32[{n},{h},{w},{ci}]{{3,2,1,0}} parameter(0)\n"
            f"  f = f32[{k},{k},{ci},{co}]{{3,2,1,0}} parameter(1)\n"
            f"  ROOT c = f32[{n},{h},{w},{co}]{{3,2,1,0}} convolution(x, f), "
            f"window={{size={k}x{k} pad=1_1x1_1}}, dim_labels=b01f_01io->b01f\n}}\n")


def _table_of(compiled):
    inst = compiled.lowered.hlo.entry.root
    plan = dot_plan.plan_dot(inst)
    if plan is not None:
        return plan.grids
    return conv_gemm.plan_conv(inst).grids


CASES = {
    # name: (module text, argument shapes, the kernel expected)
    "library": (_dot_text(301, 257, 203), [(301, 257), (257, 203)], "dot.library-gemm"),
    "mlp": (_dot_text(256, 784, 512), [(256, 784), (784, 512)], "dot.library-gemm"),
    "module_gemm": (_dot_text(259, 190, 203, epilogue=True), [(259, 190), (190, 203)], "dot.gemm"),
    "conv": (_conv_text(4, 29, 31, 24, 40, 3), [(4, 29, 31, 24), (3, 3, 24, 40)],
             "convolution.implicit-gemm"),
}


@pytest.fixture(scope="module")
def compiled():
    return {}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_thread_count_computes_the_same_bits(case, compiled):
    text, shapes, kernel = CASES[case]
    c = compiled.get(case) or compiled.setdefault(case, _Compiled(text))
    assert KERNELS.choose(c.lowered.hlo.entry.root).candidate.name == kernel
    table = _table_of(c)
    assert not table.fixed, "the case should have different grids per thread count"
    rng = np.random.default_rng(len(case))
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    serial = c(args)
    want = xlac.evaluate(xlac.parse_hlo(text), *args)
    np.testing.assert_allclose(serial, want, rtol=2e-4, atol=2e-4)
    for threads in range(1, 17):
        rec = _Recorder()
        got = c(args, threads, recorder=rec)
        np.testing.assert_array_equal(got, serial, err_msg=f"{case}, {threads} threads")
        g = _for(table, threads)
        # The product's (or convolution's) own call: min(tasks, threads) workers.
        assert min(g.n_tasks, threads, table.max_workers) in rec.calls, (threads, rec.calls, g)
        assert max(rec.calls) <= max(threads, conv_gemm.MAX_TASKS), rec.calls


@pytest.mark.parametrize("version, num_threads", [(4, 8), (abi.ABI_VERSION, 0)])
def test_an_unknown_thread_count_runs_the_one_thread_grid(version, num_threads, compiled):
    """Run options older than version 5, or num_threads < 1: the one-thread
    grid, as many workers as it has tasks (what objects before version 5 did)."""
    text, shapes, _ = CASES["library"]
    c = compiled.get("library") or compiled.setdefault("library", _Compiled(text))
    table = _table_of(c)
    rng = np.random.default_rng(3)
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    rec = _Recorder()
    got = c(args, num_threads, version=version, recorder=rec)
    np.testing.assert_array_equal(got, c(args))
    assert rec.calls == [table.serial.n_tasks]


def test_jit_threads_are_capped_at_the_cpus():
    """``num_threads`` beyond the CPUs splits work as the CPUs would: the run
    options carry the threads that can take part."""
    import xlac.codegen.runtime_code  # noqa: F401  (provides the pool's native code)
    from xlac.runtime import threads
    cpus = threads.default_num_threads()
    opts = threads.make_run_options(64)
    assert opts.num_threads == min(64, threads.pool().size()) <= max(1, cpus)
    assert threads.make_run_options(1).num_threads == 1
