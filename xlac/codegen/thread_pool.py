"""The native thread pool behind ``parallel_for``: LLVM IR built once per process.

``xlac.runtime.threads`` starts the workers (``pthread_create`` with
:data:`WORKER` as their start routine) and hands generated code
``xlac_pool_parallel_for`` as ``opts->parallel_for``; from then on a
dispatch runs no Python and takes no GIL:

* the dispatching thread takes the pool (a compare-and-swap on ``lock``; a
  ``parallel_for`` that finds it taken — nested inside a task, or from
  another thread — runs its tasks inline), publishes the job (body, context,
  task count, how many workers take part: no more than the tasks besides
  its own first), bumps ``generation`` and wakes that many of the workers
  that sleep on it (one ``futex`` call, only when some do);
* a worker that sees the new generation joins the job by taking one of its
  places (``joined`` = ``(generation << 32) | count``, compare-and-swap;
  first come, spinning or woken), or waits again when none is left;
* every participant, the dispatching thread included, grabs tasks from one
  counter, ``next`` = ``(generation << 32) | task``, by compare-and-swap: a
  thread that comes late, or is descheduled, leaves its share to the others,
  and a stale thread cannot take a task of a newer job (the generation in
  the word would differ);
* the dispatching thread waits until ``done`` counts every task, then lets
  the pool go.  The body's context lives on its stack: no task runs after.

Workers between jobs spin (``pause``) for ``spin_ns``, then sleep on the
futex.  When the dispatching thread's CPU changes, the workers' affinity is
set to the process's CPUs minus that one (Linux's wake-affine placement
would otherwise put a waking worker on the busy CPU of its waker).
"""
from __future__ import annotations

import ctypes

from llvmlite import ir

from ..runtime import native
from ..runtime.pool_state import CPU_SET_WORDS, PoolState
from .compile_cache import load_runtime_code
from .ir_text import final_text
from .native_function import (I1, I32, I64, PTR, SYS_FUTEX, SYS_GETTID, VOID, Callee, NativeFunction, cpu_relax, i32, i64,
                              monotonic_ns)

__all__ = ["build_module", "native_functions"]

STATE = "xlac_pool_state"
PARALLEL_FOR = "xlac_pool_parallel_for"
WORKER = "xlac_pool_worker"
STOP = "xlac_pool_stop"
_FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE = 128, 129
_BODY = ir.FunctionType(VOID, [PTR, I64])


class _PoolFunction(NativeFunction):
    def state(self, m: ir.Module):
        return self.b.load(m.globals[STATE], typ=PTR)

    def at(self, state, name: str):
        return self.field(state, PoolState, name)

    def get(self, state, name: str, ty=I64, ordering: str | None = None):
        return self.load_field(state, PoolState, name, ty, ordering)

    def put(self, state, name: str, value) -> None:
        self.store_field(state, PoolState, name, value)

    def rmw(self, op: str, state, name: str, value, ordering: str = "seq_cst"):
        return self.b.atomic_rmw(op, self.at(state, name), value, ordering)


def _emit_run_range(m: ir.Module) -> ir.Function:
    f = _PoolFunction(m, "xlac_pool_run_range", VOID, [PTR, PTR, I64, I64], "body ctx lo hi", internal=True)
    body, ctx, lo, hi = f.args
    f.for_range(lo, hi, lambda i: f.b.call(Callee(body, _BODY), [ctx, i]), "i")
    f.b.ret_void()
    return f.fn


def _emit_work(m: ir.Module, run_range) -> ir.Function:
    """``void work(state, generation)``: grab and run tasks of the job until none is left."""
    f = _PoolFunction(m, "xlac_pool_work", VOID, [PTR, I64], "state generation", internal=True)
    state, gen = f.args
    b = f.b
    head = f.loop("grab")
    word = f.get(state, "next", I64, "acquire")
    f.ret_if(b.icmp_unsigned("!=", b.lshr(word, i64(32)), gen))
    task = b.and_(word, i64(0xFFFFFFFF))
    n = f.get(state, "n", I64, "acquire")
    f.ret_if(b.icmp_signed(">=", task, n))
    body, ctx = f.get(state, "body", PTR, "acquire"), f.get(state, "ctx", PTR, "acquire")
    stop = b.add(task, f.get(state, "chunk"))
    stop = b.select(b.icmp_signed("<", stop, n), stop, n)
    claimed = b.cmpxchg(f.at(state, "next"), word, b.or_(b.shl(gen, i64(32)), stop), "seq_cst", "acquire")
    with b.if_then(b.not_(b.extract_value(claimed, 1))):
        b.branch(head)
    b.call(run_range, [body, ctx, task, stop])
    f.rmw("add", state, "done", b.sub(stop, task), "release")
    b.branch(head)
    return f.fn


def _emit_futex(m: ir.Module):
    """``futex(addr, op, value)`` through ``syscall`` (None without futexes)."""
    if SYS_FUTEX is None:
        return None
    syscall = ir.Function(m, ir.FunctionType(I64, [I64], var_arg=True), "syscall")

    def call(b, addr, op: int, value):
        return b.call(syscall, [i64(SYS_FUTEX), addr, i32(op), value, ir.Constant(PTR, None)])
    return call


def _emit_join(m: ir.Module) -> ir.Function:
    """``i1 join(state, generation)``: take one of the job's ``max_workers``
    places (first come: a woken sleeper and a spinning worker alike), or
    false when they are taken or the job is not the current one any more.
    ``joined`` holds the generation beside the count, so a worker late for
    one job cannot take a place of the next."""
    f = _PoolFunction(m, "xlac_pool_join", I1, [PTR, I64], "state generation", internal=True)
    state, gen = f.args
    b = f.b
    head = f.loop("try")
    word = f.get(state, "joined", I64, "acquire")
    no = ir.Constant(I1, 0)
    with b.if_then(b.icmp_unsigned("!=", b.lshr(word, i64(32)), gen)):
        b.ret(no)
    with b.if_then(b.icmp_signed(">=", b.and_(word, i64(0xFFFFFFFF)), f.get(state, "max_workers", I64, "acquire"))):
        b.ret(no)
    claimed = b.cmpxchg(f.at(state, "joined"), word, b.add(word, i64(1)), "acq_rel", "acquire")
    with b.if_then(b.not_(b.extract_value(claimed, 1))):
        b.branch(head)
    b.ret(ir.Constant(I1, 1))
    return f.fn


def _emit_worker(m: ir.Module, work, join, now, futex) -> ir.Function:
    """``void *xlac_pool_worker(void *index)``: a worker's life."""
    relax = cpu_relax(m)
    nanosleep = ir.Function(m, ir.FunctionType(I32, [PTR, PTR]), "nanosleep")
    f = _PoolFunction(m, WORKER, PTR, [PTR], "index")
    b = f.b
    state = f.state(m)
    index = b.ptrtoint(f.args[0], I64)
    if SYS_GETTID is not None:     # for tests and tools: which kernel thread is which worker
        syscall = m.globals.get("syscall") or ir.Function(m, ir.FunctionType(I64, [I64], var_arg=True), "syscall")
        b.store(b.call(syscall, [i64(SYS_GETTID)]), b.gep(f.at(state, "ktids"), [index], source_etype=I64))
    seen = f.local(I32, f.get(state, "generation", I32, "acquire"), "seen")
    since = f.local(I64, i64(0), "since")
    spins = f.local(I64, i64(0), "spins")
    nap = b.alloca(ir.ArrayType(I64, 2))
    b.store(i64(0), b.gep(nap, [i64(0), i64(0)]))
    b.store(i64(50_000), b.gep(nap, [i64(0), i64(1)]))
    exit_block = b.append_basic_block("exit")
    head = f.loop("wait")
    with b.if_then(b.icmp_unsigned("!=", f.get(state, "stop", I64, "acquire"), i64(0)), likely=False):
        b.branch(exit_block)
    g = f.get(state, "generation", I32, "acquire")
    with b.if_then(b.icmp_unsigned("!=", g, b.load(seen))):
        b.store(g, seen)
        b.store(i64(0), since)
        g64 = b.zext(g, I64)
        with b.if_then(b.call(join, [state, g64])):
            b.call(work, [state, g64])
        b.branch(head)
    if relax is not None:
        b.call(relax, [])
    count = b.add(b.load(spins), i64(1))
    b.store(count, spins)
    # The clock every 64 spins: sleep once ``spin_ns`` have gone by.
    with b.if_then(b.icmp_unsigned("!=", b.and_(count, i64(63)), i64(0)), likely=True):
        b.branch(head)
    t = b.call(now, [])
    with b.if_then(b.icmp_unsigned("==", b.load(since), i64(0))):
        b.store(t, since)
        b.branch(head)
    with b.if_then(b.icmp_signed("<", b.sub(t, b.load(since)), f.get(state, "spin_ns"))):
        b.branch(head)
    f.rmw("add", state, "sleepers", i64(1))
    still = b.and_(b.icmp_unsigned("==", f.get(state, "generation", I32, "seq_cst"), b.load(seen)),
                   b.icmp_unsigned("==", f.get(state, "stop", I64, "seq_cst"), i64(0)))
    with b.if_then(still):
        if futex is not None:
            futex(b, f.at(state, "generation"), _FUTEX_WAIT_PRIVATE, b.load(seen))
        else:
            b.call(nanosleep, [nap, ir.Constant(PTR, None)])
    f.rmw("sub", state, "sleepers", i64(1))
    b.store(i64(0), since)
    b.branch(head)
    b.position_at_end(exit_block)
    f.rmw("sub", state, "alive", i64(1))
    b.ret(ir.Constant(PTR, None))
    return f.fn


def _emit_keep_off(m: ir.Module) -> ir.Function:
    """``void keep_off(state)``: the workers' affinity without the caller's CPU
    (only when it changed since the last dispatch)."""
    getcpu = ir.Function(m, ir.FunctionType(I32, []), "sched_getcpu")
    setaffinity = ir.Function(m, ir.FunctionType(I32, [I64, I64, PTR]), "pthread_setaffinity_np")
    f = _PoolFunction(m, "xlac_pool_keep_off", VOID, [PTR], "state", internal=True)
    (state,) = f.args
    b = f.b
    cpu = b.sext(b.call(getcpu, []), I64)
    unknown = b.or_(b.icmp_signed("<", cpu, i64(0)), b.icmp_signed(">=", cpu, i64(64 * CPU_SET_WORDS)))
    f.ret_if(b.or_(unknown, b.icmp_unsigned("==", cpu, f.get(state, "avoid_cpu"))))
    f.put(state, "avoid_cpu", cpu)
    mask = b.alloca(ir.ArrayType(I64, CPU_SET_WORDS))
    allowed = f.at(state, "allowed")
    f.for_range(i64(0), i64(CPU_SET_WORDS), lambda k: b.store(
        b.load(b.gep(allowed, [k], source_etype=I64), typ=I64), b.gep(mask, [i64(0), k])), "w")
    word = b.gep(mask, [i64(0), b.udiv(cpu, i64(64))])
    b.store(b.and_(b.load(word), b.not_(b.shl(i64(1), b.urem(cpu, i64(64))))), word)
    tids = f.at(state, "tids")
    f.for_range(i64(0), f.get(state, "num_workers"), lambda w: b.call(
        setaffinity, [b.load(b.gep(tids, [w], source_etype=I64), typ=I64), i64(8 * CPU_SET_WORDS), mask]), "t")
    b.ret_void()
    return f.fn


def _emit_parallel_for(m: ir.Module, run_range, work, now, futex, keep_off) -> ir.Function:
    """``void xlac_pool_parallel_for(runtime_ctx, n, body, ctx)`` (``runtime_ctx``: the thread count)."""
    relax = cpu_relax(m)
    sched_yield = ir.Function(m, ir.FunctionType(I32, []), "sched_yield")
    pthread_self = ir.Function(m, ir.FunctionType(I64, []), "pthread_self")
    f = _PoolFunction(m, PARALLEL_FOR, VOID, [PTR, I64, PTR, PTR], "runtime_ctx n body ctx")
    runtime_ctx, n, body, ctx = f.args
    b = f.b
    state = f.state(m)
    threads = b.ptrtoint(runtime_ctx, I64)
    workers = b.sub(threads, i64(1))
    have = f.get(state, "num_workers", I64, "acquire")
    workers = b.select(b.icmp_signed("<", workers, have), workers, have)
    # No more workers than the job has tasks besides the caller's first:
    # a worker that would find nothing left costs a wake-up and a cache line.
    useful = b.sub(n, i64(1))
    workers = b.select(b.icmp_signed("<", useful, workers), useful, workers)
    inline = b.or_(b.or_(b.icmp_signed("<=", n, i64(1)), b.icmp_signed("<=", workers, i64(0))),
                   b.icmp_signed(">=", n, i64(1 << 31)))
    with b.if_then(inline, likely=False):
        b.call(run_range, [body, ctx, i64(0), n])
        b.ret_void()
    taken = b.cmpxchg(f.at(state, "lock"), i64(0), i64(1), "acquire", "monotonic")
    with b.if_then(b.not_(b.extract_value(taken, 1)), likely=False):
        b.call(run_range, [body, ctx, i64(0), n])       # nested, or another thread has the pool
        b.ret_void()
    with b.if_then(b.icmp_unsigned("!=", f.get(state, "affinity"), i64(0))):
        b.call(keep_off, [state])
    gen = b.add(f.get(state, "generation", I32), i32(1))
    gen64 = b.zext(gen, I64)
    f.put(state, "done", i64(0))
    f.rmw("xchg", state, "joined", b.shl(gen64, i64(32)))
    f.rmw("xchg", state, "next", b.shl(gen64, i64(32)))
    b.fence("release")          # a stale worker that sees this job's fields sees its ``next`` too
    f.put(state, "body", body)
    f.put(state, "ctx", ctx)
    f.put(state, "n", n)
    f.put(state, "chunk", i64(1))
    f.put(state, "max_workers", workers)
    f.put(state, "owner", b.call(pthread_self, []))
    f.rmw("xchg", state, "generation", gen)
    with b.if_then(b.icmp_signed(">", f.get(state, "sleepers", I64, "seq_cst"), i64(0))):
        if futex is not None:
            # Wake only as many as may take part (spinning workers may take
            # places first; a sleeper woken too many goes back to sleep).
            futex(b, f.at(state, "generation"), _FUTEX_WAKE_PRIVATE, b.trunc(workers, I32))
    f.put(state, "dispatches", b.add(f.get(state, "dispatches"), i64(1)))
    b.call(work, [state, gen64])
    # Tasks still running on workers: spin, then give the core to them.
    start = f.local(I64, i64(0), "start")
    spins = f.local(I64, i64(0), "spins")
    head = f.loop("finish")
    finished = b.icmp_signed(">=", f.get(state, "done", I64, "acquire"), n)
    with b.if_then(finished):
        f.rmw("xchg", state, "lock", i64(0), "release")
        b.ret_void()
    count = b.add(b.load(spins), i64(1))
    b.store(count, spins)
    if relax is not None:
        b.call(relax, [])
    with b.if_then(b.icmp_unsigned("!=", b.and_(count, i64(63)), i64(0)), likely=True):
        b.branch(head)
    t = b.call(now, [])
    with b.if_then(b.icmp_unsigned("==", b.load(start), i64(0))):
        b.store(t, start)
    with b.if_then(b.icmp_signed(">", b.sub(t, b.load(start)), f.get(state, "spin_ns"))):
        b.call(sched_yield, [])
    b.branch(head)
    return f.fn


def _emit_stop(m: ir.Module, futex) -> ir.Function:
    """``void xlac_pool_stop(void)``: every worker leaves its loop (a new
    generation wakes the sleepers; they see ``stop``)."""
    f = _PoolFunction(m, STOP, VOID, [])
    b = f.b
    state = f.state(m)
    f.rmw("xchg", state, "stop", i64(1))
    f.rmw("add", state, "generation", i32(1))
    if futex is not None:
        futex(b, f.at(state, "generation"), _FUTEX_WAKE_PRIVATE, i32(0x7FFFFFFF))
    b.ret_void()
    return f.fn


def build_module() -> ir.Module:
    m = ir.Module("xlac_pool")
    g = ir.GlobalVariable(m, PTR, STATE)
    g.initializer = ir.Constant(PTR, None)
    now = monotonic_ns(m)
    futex = _emit_futex(m)
    run_range = _emit_run_range(m)
    work = _emit_work(m, run_range)
    _emit_worker(m, work, _emit_join(m), now, futex)
    _emit_parallel_for(m, run_range, work, now, futex, _emit_keep_off(m))
    _emit_stop(m, futex)
    return m


def native_functions() -> dict:
    """``{"parallel_for": address, "worker": address, "stop": ctypes function,
    "state_slot": address of the global the state's address goes in}``,
    compiled once per process (``compile_cache.load_runtime_code``)."""
    jf = load_runtime_code(PARALLEL_FOR, lambda: final_text(build_module()))
    return {"_jit": jf, "parallel_for": jf.address, "worker": jf.engine.get_function_address(WORKER),
            "stop": ctypes.CFUNCTYPE(None)(jf.engine.get_function_address(STOP)),
            "state_slot": jf.engine.get_global_value_address(STATE)}


native.provide("thread_pool", native_functions)
