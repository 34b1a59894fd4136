"""Task grids of matrix products and convolutions, chosen at run time from the
number of threads the call runs on.

The code of a module is compiled once for every thread count (it is cached
per module text), but the best split of a GEMM depends on the threads: on
one thread a few large tasks keep the blocks at their efficient sizes; on
16 threads the 1024^3 product needs several tasks per thread (the tasks are
grabbed dynamically, so a late or descheduled thread leaves its share to
the others), and a small product such as the MLP's 256x784x512 needs tasks
smaller than the single-thread minimums to give every core work at all.

So a plan holds one :class:`Grid` per *thread class* (:data:`THREAD_CLASSES`;
a call on ``t`` threads takes the grid of the smallest class ``>= t``), and
the kernel picks one at run time (:func:`select`) from
``opts->num_threads`` (:func:`thread_count`, ``xlac_run_options`` version 5).
The class of one thread keeps the grid the compile-time planner always
chose, so the single-threaded code (``parallel_for`` NULL) computes what it
did.  Every grid adds the K blocks of a C element in the same order, so the
results are bitwise the same for every thread count.

How a grid is split (:func:`split`; XLA's ``parallel_task_assignment.cc``
sizes tasks by flops for compute-bound ops the same way): the flops bound
the tasks (no task under a minimum), then the axes are divided in order
(batch, then M, then N) while each chunk stays at least one efficient block
(the single-thread minimums); with threads, when that leaves fewer than
:data:`TASKS_PER_THREAD` tasks per thread, the larger of the M and N chunks
is halved again (keeping the tasks square-ish, which minimises the operand
traffic per flop) down to smaller minimums.
"""
from __future__ import annotations

import contextvars
import math
from dataclasses import dataclass

from llvmlite import ir

from ..runtime import abi
from .ir_array import I64, i64

__all__ = ["THREAD_CLASSES", "TASKS_PER_THREAD", "Grid", "GridTable", "Chosen", "split", "select", "choose",
           "workers", "thread_count", "product", "as_value", "pow2_floor"]

#: The thread counts grids are planned for (a call on more threads than the
#: last takes the last one's grid).
THREAD_CLASSES = (1, 2, 4, 8, 16, 32)
#: Tasks per thread a threaded grid aims at: enough for the dynamic grab to
#: even out a late thread or edge tasks that cost more.
TASKS_PER_THREAD = 4

#: At most this many workers (and so scratch regions, each a task's packed
#: blocks) per kernel: the JIT's code runs on this host, so no call has more
#: threads than the CPUs the process may use (``compiler.lower(native=True)``
#: sets it); None (objects for other machines) plans one region per task a
#: grid may start.  Workers take tasks from a shared counter, so fewer workers
#: than tasks only means each does more of them.
REGION_CAP: contextvars.ContextVar = contextvars.ContextVar("xlac_region_cap", default=None)


def pow2_floor(x: int) -> int:
    """The largest power of two <= ``x`` (``x >= 1``)."""
    return 1 << (int(x).bit_length() - 1)


@dataclass(frozen=True)
class Grid:
    """One task grid: ``split`` tasks along each axis (task numbers run along
    the last axis fastest) and whatever else the kernel sizes from the chunk
    (``sizes``: e.g. the M and N blocks), all Python ints."""

    split: tuple
    sizes: tuple = ()

    @property
    def n_tasks(self) -> int:
        return math.prod(self.split)


@dataclass(frozen=True)
class GridTable:
    """One grid per thread class (``grids[k]`` for ``THREAD_CLASSES[k]``)."""

    grids: tuple

    @property
    def serial(self) -> Grid:
        """The grid of one thread (what the kernel runs without ``parallel_for``)."""
        return self.grids[0]

    @property
    def max_workers(self) -> int:
        """Workers a kernel may start over all classes (one per thread, at
        most one per task; with an unknown thread count one per task of the
        one-thread grid): the scratch regions it needs, a worker owning one
        and keeping it from task to task."""
        n = max([self.serial.n_tasks] + [min(g.n_tasks, cls) for g, cls in zip(self.grids, THREAD_CLASSES)])
        cap = REGION_CAP.get()
        return n if cap is None else max(1, min(n, cap))

    @property
    def fixed(self) -> bool:
        """Every class has the same grid: the kernel needs no run-time choice."""
        return all(g == self.grids[0] for g in self.grids)


def split(tasks: int, extents: tuple, minimums: tuple, units: tuple,
          small_minimums: tuple | None = None, small_tasks: int = 0) -> tuple:
    """Tasks along each axis, at most ``tasks`` in all.

    ``extents``: units per axis (batch elements, micro-panels of M, NR
    panels of N); ``units``: elements per unit of each axis; ``minimums``:
    units a chunk keeps at least (0 for a batch axis: it is split first,
    into ``tasks`` chunks when it has more, else into single batches, and
    the other axes share what is left).  Other axes are split in order, each
    by a power of two, while the chunks keep ``minimums``; then, with
    ``small_minimums`` (the last two axes', M and N), the longer chunk (in
    elements) of those two is halved while it keeps ``small_minimums`` and
    the tasks stay within ``small_tasks``."""
    parts = [1] * len(extents)
    left = tasks
    for k, (extent, least) in enumerate(zip(extents, minimums)):
        if left <= 1:
            break
        if least == 0:
            if extent > left:
                parts[k] = left
                return tuple(parts)
            parts[k] = extent
        else:
            parts[k] = pow2_floor(min(left, max(1, extent // least)))
        left //= parts[k]
    if small_minimums is None or len(extents) < 2:
        return tuple(parts)
    m, n = len(extents) - 2, len(extents) - 1
    while math.prod(parts) * 2 <= small_tasks:
        can = [extents[a] // (parts[a] * 2) >= least for a, least in zip((m, n), small_minimums)]
        if not any(can):
            break
        longer_m = extents[m] * units[m] / parts[m] >= extents[n] * units[n] / parts[n]
        parts[m if can[0] and (longer_m or not can[1]) else n] *= 2
    return tuple(parts)


def class_splits(flops: int, extents: tuple, units: tuple, minimums: tuple, threaded_minimums: tuple,
                 serial: tuple, threaded: tuple) -> list:
    """The split (:func:`split`) of a GEMM-like loop for each of ``THREAD_CLASSES``.

    ``serial`` and ``threaded`` are (flops per task at least, tasks at most).
    One thread: ``flops / serial[0]`` tasks (a power of two, at most
    ``serial[1]``) in chunks that keep ``minimums``.  ``p`` threads: up to
    ``TASKS_PER_THREAD * p`` tasks within ``threaded``, the longer chunk
    halved down to ``threaded_minimums`` while there are fewer."""
    serial_tasks = pow2_floor(max(1, min(serial[1], flops // serial[0])))
    splits = []
    for threads in THREAD_CLASSES:
        if threads == 1:
            splits.append(split(serial_tasks, extents, minimums, units))
            continue
        target = pow2_floor(max(1, min(threaded[1], TASKS_PER_THREAD * threads, flops // threaded[0])))
        splits.append(split(max(serial_tasks, target), extents, minimums, units, threaded_minimums, target))
    return splits


def select(b: ir.IRBuilder, threads: ir.Value, table: GridTable) -> tuple:
    """The grid of ``table`` for ``threads`` (an i64; 0, unknown, takes the
    one-thread grid): ``(split, sizes)`` with i64 values where the classes
    differ and ints where they agree (a table with one grid emits nothing)."""
    flat = [tuple(g.split) + tuple(g.sizes) for g in table.grids]
    out = []
    for field in zip(*flat):
        if all(v == field[0] for v in field):
            out.append(field[0])
            continue
        # From the largest class down: the smallest class >= threads wins.
        value = i64(field[-1])
        for cls, v in reversed(list(zip(THREAD_CLASSES[:-1], field[:-1]))):
            value = b.select(b.icmp_signed("<=", threads, i64(cls)), i64(v), value)
        out.append(value)
    ns = len(table.grids[0].split)
    return tuple(out[:ns]), tuple(out[ns:])


def product(b: ir.IRBuilder, values) -> object:
    """The product of ints and i64 values (an int when all are ints)."""
    known = math.prod(v for v in values if isinstance(v, int))
    dynamic = [v for v in values if not isinstance(v, int)]
    if not dynamic:
        return known
    out = dynamic[0]
    for v in dynamic[1:]:
        out = b.mul(out, v)
    return out if known == 1 else b.mul(out, i64(known))


def as_value(x) -> ir.Value:
    return x if isinstance(x, ir.Value) else i64(x)


#: ``opts->num_threads``: its field index (every field 8 bytes) and the
#: ``xlac_run_options`` version that has it.
NUM_THREADS_FIELD = abi.RunOptions.num_threads.offset // 8
NUM_THREADS_ABI_VERSION = 5
_THREADS_FN = "xlac.thread_count"
_PTR = ir.PointerType()


def thread_count(b: ir.IRBuilder, opts: ir.Value) -> ir.Value:
    """An i64: the threads this call's ``parallel_for`` runs tasks on.

    1 when ``opts`` or ``opts->parallel_for`` is NULL (the loops run on the
    caller); 0, *unknown*, when ``opts`` is older than version 5 (no
    ``num_threads`` field) or ``num_threads`` is below 1: the kernels then
    run the single-thread grid and start as many workers as it has tasks,
    leaving it to ``parallel_for`` how many run at once (what objects before
    version 5 did)."""
    module = b.module
    fn = module.globals.get(_THREADS_FN)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(I64, [_PTR]), _THREADS_FN)
        fn.linkage = "internal"
        _emit_thread_count(fn)
    return b.call(fn, [opts])


def _emit_thread_count(fn: ir.Function) -> None:
    (opts,) = fn.args
    entry, check_pf, check_version, read, one = (fn.append_basic_block(n) for n in
                                                 ("entry", "pf", "version", "read", "one"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_unsigned("==", opts, ir.Constant(_PTR, None)), one, check_pf)
    b.position_at_end(check_pf)
    pf = b.load(b.gep(opts, [i64(2)], source_etype=_PTR), typ=_PTR)     # opts->parallel_for
    b.cbranch(b.icmp_unsigned("==", pf, ir.Constant(_PTR, None)), one, check_version)
    b.position_at_end(check_version)
    version = b.load(opts, typ=I64)
    unknown = fn.append_basic_block("unknown")
    b.cbranch(b.icmp_signed("<", version, i64(NUM_THREADS_ABI_VERSION)), unknown, read)
    b.position_at_end(read)
    n = b.load(b.gep(opts, [i64(NUM_THREADS_FIELD)], source_etype=I64), typ=I64)
    b.ret(b.select(b.icmp_signed("<", n, i64(1)), i64(0), n))
    b.position_at_end(unknown)
    b.ret(i64(0))
    b.position_at_end(one)
    b.ret(i64(1))


@dataclass
class Chosen:
    """The grid a call runs (:func:`choose`): ``split`` and ``sizes`` (ints
    or i64 values), ``n_tasks`` and the ``threads`` it was chosen for."""

    split: tuple
    sizes: tuple
    n_tasks: object
    threads: ir.Value | None


def choose(b: ir.IRBuilder, opts: ir.Value, table: GridTable) -> Chosen:
    """The grid of ``table`` for this call's thread count (``opts``: the
    kernel's ``xlac_run_options``); nothing is emitted when every class has
    the same grid."""
    if table.fixed:
        g = table.serial
        return Chosen(tuple(g.split), tuple(g.sizes), g.n_tasks, None)
    threads = thread_count(b, opts)
    parts, sizes = select(b, threads, table)
    return Chosen(parts, sizes, product(b, parts), threads)


def workers(b: ir.IRBuilder, chosen: Chosen, cap: int):
    """Workers to start for ``chosen``: one per thread that can take part,
    no more than its tasks, nor than ``cap`` (the scratch regions); as many
    as its tasks when the thread count is unknown (0), up to ``cap``."""
    if chosen.threads is None:
        return min(chosen.n_tasks, cap) if isinstance(chosen.n_tasks, int) else chosen.n_tasks
    n = as_value(chosen.n_tasks)
    t = chosen.threads
    limit = b.select(b.icmp_signed("<", t, i64(1)), n, t)
    n = b.select(b.icmp_signed("<", limit, n), limit, n)
    return b.select(b.icmp_signed("<", n, i64(cap)), n, i64(cap))
