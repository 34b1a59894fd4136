"""The in-memory compile cache: an LRU bounded by bytes (issue 12, item 5),
``xlac.clear_caches()``, and native code released once nothing uses it."""
import ctypes
import ctypes.util
import gc
import os
import weakref
from types import SimpleNamespace

import numpy as np
import pytest

import xlac
from xlac import program as ex


def _text(i: int, n: int = 16) -> str:
    """A small module of its own for every ``i`` (the constant differs)."""
    return f"""HloModule m{i}
ENTRY main {{
  x = f32[{n}]{{0}} parameter(0)
  c = f32[] constant({i})
  b = f32[{n}]{{0}} broadcast(c), dimensions={{}}
  ROOT a = f32[{n}]{{0}} add(x, b)
}}"""


def _big_text(i: int, n: int) -> str:
    """A module with a constant of ``n`` floats of its own (a big object)."""
    vals = ", ".join(str(float((k + i) % 1009)) for k in range(n))
    return f"""HloModule big{i}
ENTRY main {{
  x = f32[{n}]{{0}} parameter(0)
  c = f32[{n}]{{0}} constant({{{vals}}})
  ROOT a = f32[{n}]{{0}} add(x, c)
}}"""


@pytest.fixture
def fresh_cache(monkeypatch):
    """An empty in-memory cache of the environment's limit, no disk cache."""
    monkeypatch.delenv("XLAC_CACHE_DIR", raising=False)
    monkeypatch.delenv(ex.MEMORY_CACHE_ENV, raising=False)
    cache = ex.ProgramCache()
    monkeypatch.setattr(ex, "_cache", cache)
    return cache


def _fake(nbytes: int):
    return SimpleNamespace(cache_bytes=nbytes)


# -- the LRU itself --------------------------------------------------------------------

def test_lru_evicts_least_recently_used_first():
    cache = ex.ProgramCache(limit=300)
    a, b, c, d = (_fake(100) for _ in range(4))
    for key, p in zip("abc", (a, b, c)):
        assert cache.put(key, p) is p
    assert cache.nbytes == 300 and len(cache) == 3
    assert cache.get("a") is a                  # a is now the most recently used
    cache.put("d", d)                           # ... so b goes
    assert "b" not in cache and {k for k in "acd" if k in cache} == set("acd")
    assert cache.nbytes == 300
    cache.put("e", _fake(150))                  # two go: c, then a
    assert "c" not in cache and "a" not in cache and "d" in cache and "e" in cache
    assert cache.nbytes == 250 and len(cache) == 2


def test_one_program_under_several_keys_is_counted_once():
    cache = ex.ProgramCache(limit=250)
    p, q = _fake(100), _fake(100)
    cache.put("printed", p)
    assert cache.put("raw text", p) is p and cache.nbytes == 100 and len(cache) == 1
    assert cache.put("printed", q) is p         # the first one stays (shared code)
    cache.put("other", q)
    cache.get("raw text")                       # a hit under either key refreshes it
    cache.put("third", _fake(100))              # q goes, p stays under both keys
    assert "other" not in cache and "printed" in cache and "raw text" in cache
    cache.put("fourth", _fake(100))             # now p, with both its keys
    assert "printed" not in cache and "raw text" not in cache and cache.nbytes == 200


def test_limits_program_bigger_than_the_limit_and_no_limit(monkeypatch):
    monkeypatch.setenv(ex.MEMORY_CACHE_ENV, "1000")
    cache = ex.ProgramCache()
    assert cache.limit() == 1000
    big = _fake(1001)
    assert cache.put("big", big) is big and "big" not in cache and cache.nbytes == 0
    for i in range(5):
        cache.put(str(i), _fake(300))
    assert len(cache) == 3 and cache.nbytes == 900
    cache.set_limit(600)                        # the API wins over the environment, at once
    assert len(cache) == 2 and cache.nbytes == 600 and "4" in cache and "3" in cache
    cache.set_limit(0)                          # 0: no limit
    for i in range(5, 50):
        cache.put(str(i), _fake(10**9))
    assert len(cache) == 47
    cache.set_limit(None)                       # back to the environment
    monkeypatch.setenv(ex.MEMORY_CACHE_ENV, "nonsense")
    assert cache.limit() == ex.DEFAULT_MEMORY_CACHE_BYTES == 256 << 20
    monkeypatch.delenv(ex.MEMORY_CACHE_ENV)
    assert cache.limit() == ex.DEFAULT_MEMORY_CACHE_BYTES
    for bad in ("1", 1.5, True):
        with pytest.raises(TypeError, match="max_bytes"):
            cache.set_limit(bad)
    cache.set_limit(np.int64(5))
    assert cache.limit() == 5
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0


# -- with real programs ----------------------------------------------------------------

def test_program_keeps_only_what_calling_needs(fresh_cache):
    exe = xlac.jit(_text(1))
    p = exe._program
    assert p.jit.object_code is None and p.jit.optimized_ir is None
    assert not hasattr(p, "lowered")
    assert p.object_bytes == exe.compile_stats["object_bytes"] > 0
    assert p.cache_bytes == ex.PROGRAM_OVERHEAD_BYTES + ex.OBJECT_BYTES_FACTOR * p.object_bytes
    assert fresh_cache.nbytes == p.cache_bytes
    # The executable that compiled keeps its own lowering without the LLVM
    # module; one from the cache lowers again on first use.
    assert exe._lowered is not None and exe._lowered.llvm_module is None
    hit = xlac.jit(_text(1))
    assert hit.from_cache == "memory" and hit._lowered is None
    assert hit.llvm_ir == exe.llvm_ir and hit._lowered is None     # (lowered again, not kept)
    assert hit.lowered is hit.lowered and hit.lowered.llvm_module is None
    assert exe.optimized_hlo.entry.root.shape.dimensions == (16,)
    assert "define" in exe.llvm_ir and exe.lowered.entry_name == ex.ENTRY_NAME
    assert "define" in exe.optimized_llvm_ir
    assert exe.lowered is exe.lowered and exe.optimized_llvm_ir is exe.optimized_llvm_ir
    assert exe.llvm_ir is exe.llvm_ir
    assert fresh_cache.nbytes == p.cache_bytes            # ... kept by the executable, not the cache


def test_an_executable_keeps_no_llvm_module(fresh_cache):
    """Its LLVM module (a Python object per instruction) is freed once compiled:
    nothing reachable from the executable is an llvmlite object."""
    import gc
    import types
    from llvmlite import ir

    def reachable_llvm(root) -> list:
        seen, todo, found = {id(root)}, [root], []
        while todo:
            for r in gc.get_referents(todo.pop()):
                if id(r) not in seen and not isinstance(r, (type, types.ModuleType)):
                    seen.add(id(r))
                    todo.append(r)
                    if isinstance(r, (ir.Module, ir.Function, ir.Instruction)):
                        found.append(r)
        return found

    exe = xlac.jit(_text(2))
    exe.optimized_hlo, exe.cost_analysis(), exe.llvm_ir
    assert "define" in exe.llvm_ir
    assert reachable_llvm(exe) == []


def test_a_compilation_and_its_calls_leave_no_cyclic_garbage(fresh_cache):
    """What a compilation made is freed by reference counting or collected
    before it returns; a call makes no cycles (as jax's core_test checks of a
    jitted call).  Introspection lowers again and leaves none either."""
    import gc
    xlac.jit(_text(4, 1000))(np.ones(1000, np.float32))    # what a process sets up once
    gc.collect()
    debug = gc.get_debug()
    try:
        exe = xlac.jit(_text(3, 1000))
        exe(np.ones(1000, np.float32))
        exe.llvm_ir, exe.optimized_llvm_ir, exe.optimized_hlo
        gc.set_debug(gc.DEBUG_SAVEALL)
        found = gc.collect()
        kinds = sorted({type(o).__qualname__ for o in gc.garbage})
    finally:
        gc.set_debug(debug)
        gc.garbage.clear()
    assert found == 0, kinds


def test_evicted_program_still_runs_and_is_compiled_again(fresh_cache):
    x = np.arange(16, dtype=np.float32)
    fresh_cache.set_limit(1)                    # every program is bigger: nothing is kept
    first = xlac.jit(_text(7))
    assert len(fresh_cache) == 0
    again = xlac.jit(_text(7))
    assert again.from_cache is None and again._program is not first._program
    np.testing.assert_array_equal(first(x), x + 7)
    np.testing.assert_array_equal(again(x), x + 7)
    fresh_cache.set_limit(None)
    held = xlac.jit(_text(8))
    assert xlac.jit(_text(8)).from_cache == "memory"
    fresh_cache.set_limit(held._program.cache_bytes)   # room for one: _text(9) evicts it
    xlac.jit(_text(9))
    assert xlac.jit(_text(8)).from_cache is None
    np.testing.assert_array_equal(held(x), x + 8)


def test_evicted_program_loads_from_disk(fresh_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("XLAC_CACHE_DIR", str(tmp_path))
    x = np.ones(16, np.float32)
    assert xlac.jit(_text(11)).from_cache is None
    xlac.clear_caches()
    exe = xlac.jit(_text(11))
    assert exe.from_cache == "disk"
    np.testing.assert_array_equal(exe(x), x + 11)
    assert "define" in exe.optimized_llvm_ir        # introspection works after a disk hit too


def test_clear_caches(fresh_cache):
    x = np.ones(16, np.float32)
    exe = xlac.jit(_text(3))
    assert xlac.jit(_text(3)).from_cache == "memory" and len(fresh_cache) == 1
    assert "clear_caches" in xlac.__all__ and "set_memory_cache_limit" in xlac.__all__
    xlac.clear_caches()
    assert len(fresh_cache) == 0 and fresh_cache.nbytes == 0
    assert xlac.jit(_text(3)).from_cache is None
    np.testing.assert_array_equal(exe(x), x + 3)          # a live executable keeps its code


def test_set_memory_cache_limit_api(fresh_cache):
    for i in range(4):
        xlac.jit(_text(20 + i))
    assert len(fresh_cache) == 4
    try:
        xlac.set_memory_cache_limit(2 * ex.PROGRAM_OVERHEAD_BYTES + 4096)
        assert len(fresh_cache) <= 2 and fresh_cache.nbytes <= fresh_cache.limit()
        assert xlac.jit(_text(23)).from_cache == "memory"   # the most recent stays
    finally:
        xlac.set_memory_cache_limit(None)


def test_engines_are_released_with_the_last_user(fresh_cache):
    """An evicted (or cleared) program's engine lives while an executable uses
    it and is disposed when the last one goes, not just dropped from a dict."""
    fresh_cache.set_limit(3 * ex.PROGRAM_OVERHEAD_BYTES + 30_000)     # room for ~3 small programs
    engines, kept = [], xlac.jit(_text(30))
    engines.append(weakref.ref(kept._program.jit.engine))
    for i in range(31, 45):
        engines.append(weakref.ref(xlac.jit(_text(i))._program.jit.engine))
    gc.collect()
    alive = [r for r in engines if r() is not None]
    assert len(alive) <= 4 and engines[0]() is not None            # the cached ones + `kept`
    np.testing.assert_array_equal(kept(np.zeros(16, np.float32)), np.full(16, 30, np.float32))
    del kept
    xlac.clear_caches()
    gc.collect()
    assert all(r() is None for r in engines)


# -- memory: what the issue measured ------------------------------------------------------

def _malloc_trim():
    """glibc's ``malloc_trim``, or None (another C library)."""
    name = ctypes.util.find_library("c")
    return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None


def _rss_bytes() -> int:
    """This process's resident set, after handing what glibc keeps in its free
    lists back to the system (so that RSS shows what was freed)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
    with open("/proc/self/statm", encoding="utf-8") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_jitting_and_dropping_many_modules_keeps_rss_bounded(monkeypatch):
    """Issue 12: 1,200 distinct small modules jitted and dropped took RSS from
    37 MiB to 1,268 MiB (~880 KiB each; MCJIT engines holding their codegen
    TargetMachine, and llvmlite's never-freed pass pipelines).  Under a 1 MiB
    limit the cache keeps ~15 programs and each module leaves ~3 KiB (an
    unbounded cache: ~57 KiB, its entries)."""
    monkeypatch.delenv("XLAC_CACHE_DIR", raising=False)
    monkeypatch.setenv(ex.MEMORY_CACHE_ENV, str(1 << 20))      # the environment variable
    monkeypatch.setattr(ex, "_cache", ex.ProgramCache())
    x = np.ones(16, np.float32)
    for i in range(20):                         # warm-up: imports, helpers, pools
        xlac.jit(_text(-1 - i))(x)
    n, before = 200, _rss_bytes()
    for i in range(n):
        exe = xlac.jit(_text(i))
        assert exe(x)[0] == 1 + i
        del exe
    per_module = (_rss_bytes() - before) / n
    print(f"\nRSS growth per module jitted and dropped: {per_module / 1024:.0f} KiB (was ~880 KiB)")
    assert ex._cache.nbytes <= 1 << 20
    assert per_module < 32 << 10


@pytest.mark.skipif(not os.path.exists("/proc/self/statm") or _malloc_trim() is None,
                    reason="needs /proc and glibc's malloc_trim")
def test_clear_caches_gives_the_memory_back(fresh_cache):
    """Programs with big objects (a 128 KiB constant each): RSS comes back down
    by about what the cache counted for them when it lets go."""
    n = 32768
    texts = [_big_text(i, n) for i in range(10)]
    x = np.zeros(n, np.float32)
    fresh_cache.set_limit(0)
    for t in texts:
        xlac.jit(t)(x)
    counted = fresh_cache.nbytes
    assert counted > 10 * ex.OBJECT_BYTES_FACTOR * 4 * n
    before = _rss_bytes()
    xlac.clear_caches()
    freed = before - _rss_bytes()
    print(f"\nclear_caches: RSS down {freed / 2**20:.1f} MiB; the cache counted {counted / 2**20:.1f} MiB")
    assert freed > counted / 2
