"""The state the native thread pool and Python share (``xlac.codegen.thread_pool``).

One per process.  The fields that change at every dispatch sit on cache
lines of their own, so workers polling the generation and grabbing tasks do
not slow each other down through false sharing.
"""
from __future__ import annotations

import ctypes
from ctypes import c_int32, c_int64, c_uint64, c_void_p

__all__ = ["PoolState", "MAX_WORKERS", "CPU_SET_WORDS"]

#: Worker threads at most (a 257-core machine still gets 256 of them).
MAX_WORKERS = 256
#: ``cpu_set_t``: 1024 bits.
CPU_SET_WORDS = 16


class PoolState(ctypes.Structure):
    _fields_ = [
        # -- written by the dispatching thread ----------------------------------------
        ("lock", c_int64),                 # 1 while a parallel_for owns the pool
        ("_pad0", c_int64 * 7),
        ("generation", c_int32),           # the futex word: a new job is published
        ("_pad1a", c_int32),
        ("sleepers", c_int64),             # workers asleep on the futex
        ("_pad1", c_int64 * 6),
        ("next", c_int64),                 # (generation << 32) | the next task to grab
        ("_pad2", c_int64 * 7),
        ("done", c_int64),                 # tasks of the job finished
        ("_pad3", c_int64 * 7),
        ("joined", c_int64),               # (generation << 32) | workers that took part in the job
        ("_pad3b", c_int64 * 7),
        # -- the job (read by the workers once it is published) -------------------
        ("body", c_void_p),                # void body(void *ctx, int64_t i)
        ("ctx", c_void_p),
        ("n", c_int64),                    # tasks
        ("chunk", c_int64),                # tasks per grab
        ("max_workers", c_int64),          # workers that take part (the first to join)
        ("owner", c_uint64),               # pthread_self() of the dispatching thread
        ("_pad4", c_int64 * 2),
        # -- the pool -----------------------------------------------------------------
        ("num_workers", c_int64),
        ("stop", c_int64),                 # workers exit
        ("spin_ns", c_int64),              # how long a waiting thread spins before it sleeps/yields
        ("avoid_cpu", c_int64),            # the CPU the workers' affinity leaves out (-1: none)
        ("affinity", c_int64),             # 1: keep workers off the dispatching thread's CPU
        ("alive", c_int64),                # workers running
        ("dispatches", c_int64),           # parallel_for calls that went to the pool
        ("_pad5", c_int64),
        ("allowed", c_uint64 * CPU_SET_WORDS),   # the process's CPUs (cpu_set_t)
        ("tids", c_uint64 * MAX_WORKERS),        # pthread_t of each worker
        ("ktids", c_int64 * MAX_WORKERS),        # each worker's kernel thread id (set as it starts)
    ]
