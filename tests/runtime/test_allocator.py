"""The caching allocator: size classes, alignment, reuse of freed results, bounds,
temp arenas under concurrent calls."""
import gc
import mmap
import threading

import numpy as np
import pytest

import xlac
from xlac.runtime import allocator
from xlac.runtime.allocator import HUGE_BLOCK, Block, BlockPool, size_class

# Results this big come from the pool (smaller ones take the native fast call's memory).
NEG = """HloModule neg
ENTRY main {
  x = f32[256,256]{1,0} parameter(0)
  ROOT r = f32[256,256]{1,0} negate(x)
}"""


def _addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 511, 512, 513, 1000, 4096, 4097, 100_000,
                               HUGE_BLOCK - 1, HUGE_BLOCK, 3 * HUGE_BLOCK + 5, 10 ** 9])
def test_size_classes(n):
    c = size_class(n)
    assert c >= max(n, 64) and c % 64 == 0
    assert c <= max(64, n * 1.125 + 64)
    if c >= HUGE_BLOCK:
        assert c % mmap.PAGESIZE == 0
    assert size_class(c) == c                 # classes are fixed points


@pytest.mark.parametrize("size", [64, 4096, 100_032, HUGE_BLOCK, HUGE_BLOCK + mmap.PAGESIZE])
def test_blocks_are_aligned_and_usable(size):
    b = Block(size)
    assert b.address % 64 == 0 and b.size == size and b.huge == (size >= HUGE_BLOCK)
    a = allocator.wrap(b, (size // 8,), np.dtype(np.float64))
    a[:] = np.arange(size // 8)
    assert _addr(a) == b.address and a[-1] == size // 8 - 1


def test_freed_block_is_handed_out_again():
    pool = BlockPool()
    b = pool.acquire(4096)
    pool.release(b)
    assert pool.acquire(4096) is b
    assert pool.stats()["hits"] == 1 and pool.stats()["misses"] == 1


def test_result_memory_returns_to_the_pool_when_the_last_view_dies():
    exe = xlac.jit(NEG)
    x = np.arange(256 * 256, dtype=np.float32).reshape(256, 256)
    r = exe(x)
    first = _addr(r)
    assert first % 64 == 0 and type(r.base).__name__ == "ResultMemory"
    del r
    r = exe(x)                                # steady state: the same block again
    assert _addr(r) == first
    v = r[3:]                                 # a view keeps the memory alive ...
    del r
    gc.collect()
    r2 = exe(x + 1)
    assert _addr(r2) != first                 # ... so it is not handed out
    np.testing.assert_array_equal(v, -x[3:])  # and still holds its values
    np.testing.assert_array_equal(r2, -(x + 1))


def test_consecutive_results_do_not_alias():
    exe = xlac.jit(NEG)
    x = np.ones((256, 256), np.float32)
    a, b = exe(x), exe(2 * x)
    assert not np.shares_memory(a, b)
    assert (a == -1).all() and (b == -2).all()
    a[:] = 7                                  # results are ordinary writeable arrays
    assert (b == -2).all()


def test_small_classes_keep_more_blocks():
    # A training step returns hundreds of small results of a few sizes: a class
    # of small blocks keeps as many as fit in class_idle_bytes (64 here), a
    # class of large ones max_blocks_per_class.
    pool = BlockPool(max_idle_bytes=1 << 20, max_blocks_per_class=2, class_idle_bytes=64 * 1024)
    assert pool.class_limit(1024) == 64 and pool.class_limit(64 * 1024) == 2
    small = [pool.acquire(1024) for _ in range(100)]
    large = [pool.acquire(64 * 1024) for _ in range(4)]
    for b in small + large:
        pool.release(b)
    s = pool.stats()
    assert s["idle_blocks"] == 64 + 2 and s["evictions"] == 36 + 2
    again = [pool.acquire(1024) for _ in range(64)]
    assert pool.stats()["hits"] == 64 and len({b.address for b in again}) == 64


def test_pool_is_bounded():
    pool = BlockPool(max_idle_bytes=10_000, max_blocks_per_class=2)
    blocks = [pool.acquire(1024) for _ in range(4)]
    for b in blocks:
        pool.release(b)
    s = pool.stats()
    assert s["idle_blocks"] == 2 and s["idle_bytes"] == 2048 and s["evictions"] == 2
    big = [pool.acquire(4096) for _ in range(2)]
    for b in big:                             # 2048 + 8192 > 10000: the oldest go first
        pool.release(b)
    s = pool.stats()
    assert s["idle_bytes"] <= 10_000
    pool.release(Block(64 * 1024))            # larger than the whole budget: freed
    assert pool.stats()["idle_bytes"] <= 10_000
    pool.trim()
    assert pool.stats()["idle_bytes"] == 0 and pool.stats()["idle_blocks"] == 0


def test_huge_results_come_from_mmap():
    text = """HloModule big
ENTRY main {
  x = f32[1024,1024]{1,0} parameter(0)
  ROOT r = f32[1024,1024]{1,0} negate(x)
}"""
    exe = xlac.jit(text)
    x = np.ones((1024, 1024), np.float32)
    r = exe(x)
    assert r.base._block.huge and _addr(r) % 64 == 0
    assert (r == -1).all()
    first = _addr(r)
    del r
    assert _addr(exe(x)) == first


def test_concurrent_calls_do_not_share_temp_arenas():
    # optimize=False: one kernel per instruction, so intermediates live in the temp arena.
    text = """HloModule chain
ENTRY main {
  x = f32[256,64]{1,0} parameter(0)
  a = f32[256,64]{1,0} multiply(x, x)
  b = f32[256,64]{1,0} add(a, x)
  c = f32[256,64]{1,0} subtract(b, a)
  d = f32[256,64]{1,0} multiply(c, b)
  ROOT r = f32[256,64]{1,0} add(d, c)
}"""
    exe = xlac.jit(text, optimize=False, num_threads=1)
    assert exe.temp_size > 0
    bad = []

    def work(seed):
        x = np.full((256, 64), float(seed), np.float32)
        a = x * x
        b = a + x
        c = b - a
        want = c * b + c
        for _ in range(200):
            if not np.array_equal(exe(x), want):
                bad.append(seed)
                return

    ts = [threading.Thread(target=work, args=(s,)) for s in range(1, 5)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert bad == []
    assert len(exe._frames) <= 4              # arenas are kept for reuse, but boundedly


def test_small_results_and_multiple_results():
    text = """HloModule m
ENTRY main {
  x = f32[2000]{0} parameter(0)
  y = f32[2000]{0} parameter(1)
  s = f32[2000]{0} add(x, y)
  m = f32[2000]{0} multiply(x, y)
  k = f32[] constant(3)
  n = f32[5]{0} negate(f32[5]{0} slice(x), slice={[0:5]})
  ROOT r = (f32[2000]{0}, f32[2000]{0}, f32[], f32[5]{0}) tuple(s, m, k, n)
}"""
    text = text.replace("  n = f32[5]{0} negate(f32[5]{0} slice(x), slice={[0:5]})\n",
                        "  h = f32[5]{0} slice(x), slice={[0:5]}\n  n = f32[5]{0} negate(h)\n")
    exe = xlac.jit(text)
    x = np.arange(2000, dtype=np.float32)
    s, m, k, n = exe(x, x)
    np.testing.assert_array_equal(s, 2 * x)
    np.testing.assert_array_equal(m, x * x)
    assert k == 3 and k.shape == ()
    np.testing.assert_array_equal(n, -x[:5])
