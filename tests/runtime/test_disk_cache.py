"""The on-disk object cache (XLAC_CACHE_DIR): hits across processes, corrupt
entries rebuilt, atomic writes, what the key depends on, compile-time records."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.runtime import disk_cache
from xlac import program as ex

SOFTPLUS = """HloModule softplus_cache_test
ENTRY main {
  x = f32[300]{0} parameter(0)
  y = f32[300]{0} parameter(1)
  e = f32[300]{0} exponential(x)
  o = f32[] constant(1)
  ob = f32[300]{0} broadcast(o), dimensions={}
  a = f32[300]{0} add(e, ob)
  l = f32[300]{0} log(a)
  m = f32[300]{0} multiply(l, y)
  ROOT r = (f32[300]{0}, f32[300]{0}) tuple(m, l)
}"""

CHILD = r"""
import json, sys, time
import numpy as np
import xlac
text = sys.stdin.read()
t = time.perf_counter()
exe = xlac.jit(text, donate_argnums=1)
dt = time.perf_counter() - t
x = np.linspace(-3, 3, 300, dtype=np.float32)
y = np.linspace(1, 2, 300, dtype=np.float32)
y0 = y.copy()
m, l = exe(x, y)
print(json.dumps({"from_cache": exe.from_cache, "jit_s": dt, "m": m.tolist(), "l": l.tolist(),
                  "shares": bool(np.shares_memory(m, y)), "donations": exe.donations,
                  "stats": {k: v for k, v in exe.compile_stats.items() if isinstance(v, (int, float, str))}}))
"""


@pytest.fixture
def cache_env(tmp_path, monkeypatch):
    """XLAC_CACHE_DIR in a fresh directory, and an empty in-memory cache."""
    d = tmp_path / "cache"
    monkeypatch.setenv("XLAC_CACHE_DIR", str(d))
    monkeypatch.setattr(ex, "_cache", ex.ProgramCache())
    return d


def _fresh_jit(text, monkeypatch, **kw):
    monkeypatch.setattr(ex, "_cache", ex.ProgramCache())       # forget in-memory code: only the disk is left
    return xlac.jit(text, **kw)


def _module_entries(d: Path) -> list:
    """The metadata files of modules' entries (not the runtime helpers' ones,
    e.g. the thread pool's, which the first process to jit writes there too)."""
    return sorted(p for p in d.glob("*.json") if json.loads(p.read_text(encoding="utf-8")).get("entry") == "xlac_entry")


def _entry_files(d: Path):
    metas = _module_entries(d)
    assert len(metas) == 1, metas
    return metas[0].with_suffix(".o"), metas[0]


def test_hit_in_another_process(tmp_path):
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "c"),
               XLAC_CACHE_CODE_VERSION="test-disk-cache")   # keys stable while sources change
    env.pop("XLAC_DUMP_TO", None)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", CHILD], input=SOFTPLUS, env=env, capture_output=True,
                             encoding="utf-8", timeout=120)
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout))
    first, second = runs
    assert first["from_cache"] is None and second["from_cache"] == "disk"
    assert first["m"] == second["m"] and first["l"] == second["l"]
    x = np.linspace(-3, 3, 300, dtype=np.float32)
    y = np.linspace(1, 2, 300, dtype=np.float32)
    np.testing.assert_allclose(second["l"], np.log1p(np.exp(x)), rtol=1e-5)
    np.testing.assert_allclose(second["m"], np.log1p(np.exp(x)) * y, rtol=1e-5)
    # Donation pairs come from the metadata too.
    assert first["donations"] == second["donations"] == [[0, 1]] and second["shares"]
    print(f"\ncompiled in {first['jit_s'] * 1e3:.1f} ms; loaded from the disk cache in another "
          f"process in {second['jit_s'] * 1e3:.2f} ms ({second['stats']})")


def test_entry_contents_and_atomic_writes(cache_env, monkeypatch):
    exe = xlac.jit(SOFTPLUS)
    assert exe.from_cache is None and exe.compile_time_s > 0
    stats = exe.compile_stats
    assert stats["from_cache"] is None and {"lower_s", "optimize_s", "codegen_s", "load_s"} <= set(stats)
    obj, meta_path = _entry_files(cache_env)
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    assert obj.read_bytes().startswith(b"\x7fELF") and meta["object_size"] == obj.stat().st_size
    assert meta["entry"] == "xlac_entry" and meta["temp_size"] == exe.temp_size
    assert [p["shape"] for p in meta["params"]] == ["f32[300]{0}", "f32[300]{0}"]
    assert meta["result_shape"] == "(f32[300]{0}, f32[300]{0})"
    assert not [p for p in cache_env.iterdir() if p.name.startswith(".tmp-")]

    again = _fresh_jit(SOFTPLUS, monkeypatch)
    assert again.from_cache == "disk" and again.compile_stats["load_s"] is not None
    x = np.linspace(-1, 1, 300, dtype=np.float32)
    for a, b in zip(exe(x, x), again(x, x)):
        np.testing.assert_array_equal(a, b)
    # Everything that needs the lowering is still there, lowered on demand.
    assert again.temp_size == exe.temp_size
    assert "define" in again.llvm_ir and "define" in again.optimized_llvm_ir
    assert again.optimized_hlo.entry.root.shape == exe.optimized_hlo.entry.root.shape
    # The in-memory cache is consulted first.
    assert xlac.jit(SOFTPLUS).from_cache == "memory"


def _truncate(obj, meta):
    obj.write_bytes(obj.read_bytes()[: obj.stat().st_size // 2])


def _flip_byte(obj, meta):
    data = bytearray(obj.read_bytes())
    data[len(data) // 2] ^= 0xFF
    obj.write_bytes(bytes(data))


def _garbage_meta(obj, meta):
    meta.write_text("{not json", encoding="utf-8")


def _empty_files(obj, meta):
    obj.write_bytes(b"")
    meta.write_bytes(b"")


def _missing_object(obj, meta):
    obj.unlink()


def _bad_shape(obj, meta):
    m = json.loads(meta.read_text(encoding="utf-8"))
    m["params"][0]["shape"] = "f32[oops"
    m["meta_sha256"] = disk_cache._meta_digest(m)
    meta.write_text(json.dumps(m), encoding="utf-8")


def _wrong_types(obj, meta):
    m = json.loads(meta.read_text(encoding="utf-8"))
    m["temp_size"] = "lots"
    m["donatable"] = 7
    m["meta_sha256"] = disk_cache._meta_digest(m)
    meta.write_text(json.dumps(m), encoding="utf-8")


def _not_elf(obj, meta):
    import hashlib
    data = b"junk" * 100
    obj.write_bytes(data)
    m = json.loads(meta.read_text(encoding="utf-8"))
    m["object_size"], m["object_sha256"] = len(data), hashlib.sha256(data).hexdigest()
    m["meta_sha256"] = disk_cache._meta_digest(m)
    meta.write_text(json.dumps(m), encoding="utf-8")


def _plausible_shape(obj, meta):
    # Still valid JSON and a valid shape, but smaller than what the code writes.
    meta.write_text(meta.read_text(encoding="utf-8").replace("f32[300]", "f32[100]"), encoding="utf-8")


def _plausible_shape_rehashed(obj, meta):
    m = json.loads(meta.read_text(encoding="utf-8").replace("f32[300]", "f32[100]"))
    m["meta_sha256"] = disk_cache._meta_digest(m)          # caught by the module cross-check
    meta.write_text(json.dumps(m), encoding="utf-8")


@pytest.mark.parametrize("damage", [_truncate, _flip_byte, _garbage_meta, _empty_files, _missing_object,
                                    _bad_shape, _wrong_types, _not_elf, _plausible_shape,
                                    _plausible_shape_rehashed])
def test_corrupt_entry_is_ignored_and_rebuilt(cache_env, monkeypatch, damage):
    x = np.linspace(-2, 2, 300, dtype=np.float32)
    want = xlac.jit(SOFTPLUS)(x, x)
    obj, meta = _entry_files(cache_env)
    damage(obj, meta)
    exe = _fresh_jit(SOFTPLUS, monkeypatch)
    assert exe.from_cache is None                      # rebuilt ...
    for a, b in zip(exe(x, x), want):
        np.testing.assert_array_equal(a, b)
    assert _fresh_jit(SOFTPLUS, monkeypatch).from_cache == "disk"   # ... and rewritten


def test_unusable_cache_directory_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("XLAC_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(ex, "_cache", ex.ProgramCache())
    exe = xlac.jit(SOFTPLUS)
    assert exe.from_cache is None
    np.testing.assert_allclose(exe(np.zeros(300, np.float32), np.ones(300, np.float32))[1], np.log(2),
                               rtol=1e-6)


def test_what_the_key_depends_on(monkeypatch):
    base = disk_cache.make_key(SOFTPLUS, "optimize=1", "xlac_entry")
    assert base == disk_cache.make_key(SOFTPLUS, "optimize=1", "xlac_entry")
    assert base != disk_cache.make_key(SOFTPLUS, "optimize=0", "xlac_entry")
    assert base != disk_cache.make_key(SOFTPLUS + " ", "optimize=1", "xlac_entry")
    monkeypatch.setenv("XLAC_CACHE_CODE_VERSION", "another compiler")
    assert base != disk_cache.make_key(SOFTPLUS, "optimize=1", "xlac_entry")


def test_optimize_flag_and_text_spelling(cache_env, monkeypatch):
    xlac.jit(SOFTPLUS)
    assert _fresh_jit(SOFTPLUS, monkeypatch, optimize=False).from_cache is None
    # The key is the module as printed: the same module spelt differently hits.
    respelt = SOFTPLUS.replace("\n  ", "\n    ")
    assert _fresh_jit(respelt, monkeypatch).from_cache == "disk"
    assert _fresh_jit(xlac.parse_hlo(SOFTPLUS), monkeypatch).from_cache == "disk"


def test_text_alias_skips_parsing(cache_env, monkeypatch):
    """HLO text compiled once is found again by its own hash, without parsing;
    text spelt differently finds the entry through the parsed module and gets
    an alias of its own; an alias naming no good entry is a miss."""
    x = np.linspace(-2, 2, 300, dtype=np.float32)
    want = xlac.jit(SOFTPLUS)(x, x)
    assert len(list(cache_env.glob("*.alias"))) == 1

    def no_parsing(_x):
        raise AssertionError("parsed the text")
    with monkeypatch.context() as m:
        m.setattr(ex, "as_module", no_parsing)
        exe = _fresh_jit(SOFTPLUS, monkeypatch)
    assert exe.from_cache == "disk"
    for a, b in zip(exe(x, x), want):
        np.testing.assert_array_equal(a, b)
    assert exe.optimized_hlo.entry.root.shape.is_tuple        # the module, parsed on demand

    respelt = SOFTPLUS.replace("\n  ", "\n    ")
    assert _fresh_jit(respelt, monkeypatch).from_cache == "disk"
    assert len(list(cache_env.glob("*.alias"))) == 2 and len(list(cache_env.glob("*.o"))) == 1

    for alias in cache_env.glob("*.alias"):
        alias.write_text("0" * 64, encoding="utf-8")
    assert _fresh_jit(SOFTPLUS, monkeypatch).from_cache == "disk"   # through the parsed module
    with monkeypatch.context() as m:
        m.setattr(ex, "as_module", no_parsing)
        assert _fresh_jit(SOFTPLUS, monkeypatch).from_cache == "disk"   # the alias was rewritten


def test_dumping_compiles_for_real(cache_env, monkeypatch, tmp_path):
    xlac.jit(SOFTPLUS)
    monkeypatch.setenv("XLAC_DUMP_TO", str(tmp_path / "dumps"))
    assert _fresh_jit(SOFTPLUS, monkeypatch).from_cache is None


def test_disk_cache_load_time(cache_env, monkeypatch):
    """Prints compile vs disk-cache load time for a few modules (no timing asserts)."""
    texts = {"softplus": SOFTPLUS}
    bench = Path(__file__).resolve().parents[2] / "benchmarks" / "hlo"
    for name in ("mlp", "layernorm", "softmax", "matmul_1024"):
        texts[name] = (bench / f"{name}.hlo").read_text(encoding="utf-8")
    lines = []
    for name, text in texts.items():
        t0 = time.perf_counter()
        xlac.jit(text)
        t1 = time.perf_counter()
        exe = _fresh_jit(text, monkeypatch)
        t2 = time.perf_counter()
        assert exe.from_cache == "disk"
        lines.append(f"{name}: compiled {1e3 * (t1 - t0):.1f} ms, from disk {1e3 * (t2 - t1):.2f} ms")
    print("\n" + "\n".join(lines))


def test_library_dir_resolution(tmp_path, monkeypatch):
    for var in (disk_cache.LIBRARY_ENV, disk_cache.ENV, "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert disk_cache.library_dir() == str(tmp_path / "home" / ".cache" / "xlac")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert disk_cache.library_dir() == str(tmp_path / "xdg" / "xlac")
    monkeypatch.setenv(disk_cache.ENV, str(tmp_path / "modules"))
    assert disk_cache.library_dir() == str(tmp_path / "modules")     # XLAC_CACHE_DIR wins
    monkeypatch.setenv(disk_cache.LIBRARY_ENV, str(tmp_path / "lib"))
    assert disk_cache.library_dir() == str(tmp_path / "lib")         # the explicit one wins
    for off in ("", "off", "0"):
        monkeypatch.setenv(disk_cache.LIBRARY_ENV, off)
        assert disk_cache.library_dir() is None


RUNTIME_HELPERS_CHILD = r"""
import json, os, sys, numpy as np, xlac
d = sys.argv[1]
f = xlac.jit('''HloModule helpers
ENTRY e {
  x = f32[300000]{0} parameter(0)
  ROOT y = f32[300000]{0} exponential(x)
}''', num_threads=2)                     # the thread pool's code too
f(np.zeros(300000, np.float32))
entries = [json.load(open(os.path.join(d, n))).get("entry") for n in os.listdir(d) if n.endswith(".json")]
print(" ".join(sorted(e for e in entries if e)))
"""


def test_runtime_helpers_are_cached_in_the_library_directory(tmp_path):
    """Without XLAC_CACHE_DIR, the runtime's native helpers (the thread pool's
    code) go to the library cache like the GEMM library; a second process
    loads them from there and writes nothing new."""
    env = {k: v for k, v in os.environ.items() if k not in (disk_cache.ENV, "XLAC_GUARD_PAGES")}
    env[disk_cache.LIBRARY_ENV] = str(tmp_path)

    def run() -> tuple:
        out = subprocess.run([sys.executable, "-c", RUNTIME_HELPERS_CHILD, str(tmp_path)], env=env,
                             capture_output=True, encoding="utf-8", timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout.split(), sorted(os.listdir(tmp_path))
    entries, files = run()
    assert "xlac_pool_parallel_for" in entries
    again, files_again = run()
    assert again == entries and files_again == files

def test_eviction_keeps_the_directory_under_its_limit(tmp_path, monkeypatch):
    """Past XLAC_CACHE_MAX_BYTES, a write deletes the least recently used
    entries (a load counts as a use) down to 90% of the limit, never the one
    just written, and the aliases of deleted entries."""
    d = str(tmp_path)
    blob = b"\x7fELF" + bytes(10_000)
    keys = [f"{k:064x}" for k in range(5)]
    for age, key in enumerate(keys):
        meta = disk_cache.store(key, {"entry": "f"}, blob, d)
        assert meta is not None
        disk_cache.store_alias(f"{age + 100:064x}", meta, d)
        t = 1_000_000 + age                      # oldest first, whole seconds apart
        os.utime(os.path.join(d, key + ".json"), (t, t))
    assert disk_cache.load(keys[0], d) is not None          # the oldest is used again
    per_entry = os.path.getsize(os.path.join(d, keys[0] + ".o")) + \
        os.path.getsize(os.path.join(d, keys[0] + ".json"))
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(4 * per_entry))
    new = f"{99:064x}"
    assert disk_cache.store(new, {"entry": "f"}, blob, d) is not None
    left = sorted(p.name[:-5] for p in tmp_path.glob("*.json"))
    # 6 entries against a limit of 4: down to 3 (90%): the new one, the one
    # just loaded, and the most recent of the others.
    assert left == sorted([new, keys[0], keys[4]])
    assert not (tmp_path / (keys[1] + ".o")).exists()
    aliases = {p.read_text(encoding="utf-8").split()[1] for p in tmp_path.glob("*.alias")}
    assert aliases == {keys[0], keys[4]}
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, "0")       # no limit
    for key in keys[1:4]:
        disk_cache.store(key, {"entry": "f"}, blob, d)
    assert len(list(tmp_path.glob("*.json"))) == 6



def test_a_write_scans_the_directory_only_when_it_may_be_past_its_limit(tmp_path, monkeypatch):
    """The eviction scan stats every file, so a write skips it while the last
    scan's total (this process's, or another's in usage.txt) plus what was
    written since is under the limit and the scan is recent; past the limit
    it scans and evicts, and files that are not entries (machine.json) stay."""
    d = str(tmp_path)
    blob = b"\x7fELF" + bytes(10_000)
    scans = []
    real_evict = disk_cache.evict
    monkeypatch.setattr(disk_cache, "evict", lambda *a, **k: scans.append(a[0]) or real_evict(*a, **k))
    monkeypatch.setattr(disk_cache, "_usage", {})
    (tmp_path / "machine.json").write_text("{}", encoding="utf-8")
    os.utime(tmp_path / "machine.json", (1, 1))              # older than every entry
    keys = [f"{k:064x}" for k in range(6)]
    disk_cache.store(keys[0], {"entry": "f"}, blob, d)
    assert scans == [d]                                       # nothing known yet: a scan
    total, when = (tmp_path / disk_cache.USAGE_FILE).read_text(encoding="utf-8").split()
    assert int(total) > len(blob)
    for key in keys[1:3]:
        disk_cache.store(key, {"entry": "f"}, blob, d)
    assert scans == [d]
    monkeypatch.setattr(disk_cache, "_usage", {})           # another process: usage.txt
    disk_cache.store(keys[3], {"entry": "f"}, blob, d)
    assert scans == [d]
    per_entry = int(total)
    # This process knows of 2 entries (usage.txt's and its own), and a third
    # takes it past the limit: a scan finds 5 and keeps 2 (90% of 2.5).
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(2 * per_entry + per_entry // 2))
    disk_cache.store(keys[4], {"entry": "f"}, blob, d)
    assert scans == [d, d]
    assert len(list(tmp_path.glob("*.o"))) == 2 and (tmp_path / (keys[4] + ".o")).exists()
    assert (tmp_path / "machine.json").exists()
    disk_cache._usage[d][1] -= disk_cache.SCAN_TRUST_S + 1   # the scan is old: scan again
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(100 * per_entry))
    disk_cache.store(keys[5], {"entry": "f"}, blob, d)
    assert scans == [d, d, d] and (tmp_path / "machine.json").exists()

# -- files that are not what they seem (issue 12, item 8) ------------------------------
# Each once hung ``jit`` (a FIFO blocks open(); a link to /dev/zero is read
# without end) or read a file of any size.  The timeout makes a regression fail.

def _fifo_object(obj, meta):
    obj.unlink()
    os.mkfifo(obj)


def _fifo_metadata(obj, meta):
    meta.unlink()
    os.mkfifo(meta)


def _metadata_links_to_dev_zero(obj, meta):
    meta.unlink()
    meta.symlink_to("/dev/zero")


def _object_links_outside(obj, meta):
    # A good object, but through a link to a file outside the directory.
    outside = obj.parent.parent / "outside.o"
    outside.write_bytes(obj.read_bytes())
    obj.unlink()
    obj.symlink_to(outside)


def _directory_object(obj, meta):
    obj.unlink()
    obj.mkdir()


def _huge_sparse_object(obj, meta):
    with open(obj, "r+b") as f:
        f.truncate(1 << 40)                  # 1 TiB of holes: no disk space used


def _huge_sparse_object_recorded(obj, meta):
    # The metadata (hash fixed) even claims the huge size: past MAX_OBJECT_BYTES.
    _huge_sparse_object(obj, meta)
    m = json.loads(meta.read_text(encoding="utf-8"))
    m["object_size"] = 1 << 40
    m["meta_sha256"] = disk_cache._meta_digest(m)
    meta.write_text(json.dumps(m), encoding="utf-8")


def _deeply_nested_metadata(obj, meta):
    meta.write_text("[" * 100_000, encoding="utf-8")          # json.loads: RecursionError


@pytest.mark.timeout(20)
@pytest.mark.parametrize("damage", [_fifo_object, _fifo_metadata, _metadata_links_to_dev_zero,
                                    _object_links_outside, _directory_object, _huge_sparse_object,
                                    _huge_sparse_object_recorded, _deeply_nested_metadata])
def test_non_regular_entry_files_are_a_miss(cache_env, monkeypatch, damage):
    x = np.linspace(-2, 2, 300, dtype=np.float32)
    want = xlac.jit(SOFTPLUS)(x, x)
    obj, meta = _entry_files(cache_env)
    damage(obj, meta)
    exe = _fresh_jit(SOFTPLUS, monkeypatch)
    assert exe.from_cache is None                       # compiled again ...
    for a, b in zip(exe(x, x), want):
        np.testing.assert_array_equal(a, b)
    outside = cache_env.parent / "outside.o"
    if damage is _directory_object:                     # os.replace cannot replace a directory
        assert obj.is_dir() and _fresh_jit(SOFTPLUS, monkeypatch).from_cache is None
        return
    assert not obj.is_symlink() and not meta.is_symlink()      # ... and rewritten in place of
    assert obj.stat().st_size < 1 << 20                        # the names, not through them
    assert _fresh_jit(SOFTPLUS, monkeypatch).from_cache == "disk"
    if damage is _object_links_outside:
        assert outside.read_bytes().startswith(b"\x7fELF")     # the link's target untouched


@pytest.mark.timeout(20)
def test_non_regular_alias_is_a_miss(cache_env, monkeypatch):
    """An alias that is a FIFO or a link to /dev/zero: the text is parsed and
    found through its module's entry."""
    x = np.linspace(-2, 2, 300, dtype=np.float32)
    want = xlac.jit(SOFTPLUS)(x, x)
    (alias,) = cache_env.glob("*.alias")
    for make in (os.mkfifo, lambda p: os.symlink("/dev/zero", p)):
        alias.unlink()
        make(alias)
        exe = _fresh_jit(SOFTPLUS, monkeypatch)
        assert exe.from_cache == "disk"                 # through the parsed module
        for a, b in zip(exe(x, x), want):
            np.testing.assert_array_equal(a, b)
        assert alias.is_file() and not alias.is_symlink()   # rewritten


@pytest.mark.timeout(20)
def test_eviction_follows_no_link(tmp_path, monkeypatch):
    """The eviction scan neither blocks on a FIFO nor follows a link: a link
    to a file outside the directory counts 0 bytes and deleting its entry
    removes the link, not the file; a directory in the way stays."""
    d = tmp_path / "cache"
    d.mkdir()
    outside = tmp_path / "precious"
    outside.write_bytes(b"\x7fELF" + bytes(50_000))
    blob = b"\x7fELF" + bytes(10_000)
    keys = [f"{k:064x}" for k in range(4)]
    for age, key in enumerate(keys):
        assert disk_cache.store(key, {"entry": "f"}, blob, str(d)) is not None
        t = 1_000_000 + age
        os.utime(d / (key + ".json"), (t, t))
    (d / (keys[0] + ".o")).unlink()
    (d / (keys[0] + ".o")).symlink_to(outside)          # the oldest: a link out
    (d / (keys[1] + ".o")).unlink()
    (d / (keys[1] + ".o")).mkdir()                      # then a directory
    os.mkfifo(d / (f"{7:064x}" + ".alias"))             # aliases: a FIFO, a link to /dev/zero
    (d / (f"{8:064x}" + ".alias")).symlink_to("/dev/zero")
    (d / (f"{9:064x}" + ".json")).symlink_to(outside)   # metadata linking out
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, "15000")   # 2 objects + metadata: over
    assert disk_cache.evict(str(d), keep=keys[3]) >= 2
    assert outside.read_bytes().startswith(b"\x7fELF") and len(outside.read_bytes()) == 50_004
    assert not (d / (keys[0] + ".o")).is_symlink()      # the link itself was deleted
    assert (d / (keys[1] + ".o")).is_dir()
    assert not list(d.glob("*.alias"))                  # unreadable aliases name nothing
    assert (d / (keys[3] + ".json")).is_file()


def test_read_file_bounds(tmp_path):
    """What ``_read_file`` accepts: a regular file within its bound (exactly the
    size asked for, when one is); nothing else."""
    f = tmp_path / "f"
    f.write_bytes(b"abc")
    assert disk_cache._read_file(str(f), 3) == b"abc"
    assert disk_cache._read_file(str(f), 2) is None
    assert disk_cache._read_file(str(f), 10, size=3) == b"abc"
    assert disk_cache._read_file(str(f), 10, size=4) is None
    (tmp_path / "link").symlink_to(f)
    assert disk_cache._read_file(str(tmp_path / "link"), 10) is None
    assert disk_cache._read_file(str(tmp_path), 10) is None
    assert disk_cache._read_file(str(tmp_path / "missing"), 10) is None
    assert disk_cache._read_file("/dev/null", 10) is None


# -- entries that belong to another module ----------------------------------------------
# Two modules of the same signature: a file of one put in place of the other's
# must never make ``jit`` of one run the other's code.

NEGATE = """HloModule negate_cache_test
ENTRY main {
  x = f32[8]{0} parameter(0)
  ROOT r = f32[8]{0} negate(x)
}"""

EXP = """HloModule exp_cache_test
ENTRY main {
  x = f32[8]{0} parameter(0)
  ROOT r = f32[8]{0} exponential(x)
}"""

X8 = np.linspace(-2, 2, 8, dtype=np.float32)


def _entries_of_two(d: Path):
    """jit NEGATE then EXP; each one's files by suffix (``.alias``, ``.json``, ``.o``)."""
    files = {}
    for text in (NEGATE, EXP):
        before = set(_module_entries(d)) if d.exists() else set()
        aliases = set(d.glob("*.alias")) if d.exists() else set()
        xlac.jit(text)(X8)
        (meta,) = set(_module_entries(d)) - before
        (alias,) = set(d.glob("*.alias")) - aliases
        files[text] = {".alias": alias, ".json": meta, ".o": meta.with_suffix(".o")}
    return files


def _swap(a: Path, b: Path) -> None:
    da, db = a.read_bytes(), b.read_bytes()
    a.write_bytes(db)
    b.write_bytes(da)


@pytest.mark.parametrize("suffixes", [(".alias",), (".json",), (".o",), (".json", ".o"),
                                      (".alias", ".json", ".o")])
def test_files_swapped_between_entries_are_a_miss(cache_env, monkeypatch, suffixes):
    """Swapping aliases (the text's key names the other entry), metadata (it
    records the other key) or objects (the hash differs), or all at once:
    each module still runs its own code."""
    files = _entries_of_two(cache_env)
    for suffix in suffixes:
        _swap(files[NEGATE][suffix], files[EXP][suffix])
    for text, want in ((NEGATE, -X8), (EXP, np.exp(X8))):
        exe = _fresh_jit(text, monkeypatch)
        np.testing.assert_allclose(exe(X8), want, rtol=1e-6)
    for text in (NEGATE, EXP):              # rewritten: both found again through their aliases
        with monkeypatch.context() as m:
            m.setattr(ex, "as_module", lambda _x: pytest.fail("parsed the text"))
            exe = _fresh_jit(text, monkeypatch)
        assert exe.from_cache == "disk"
        np.testing.assert_allclose(exe(X8), -X8 if text is NEGATE else np.exp(X8), rtol=1e-6)


def test_alias_records_its_own_text_key(tmp_path, monkeypatch):
    """An alias file names the text key it was written for; under another name it
    names nothing (and an eviction scan deletes it)."""
    d = str(tmp_path)
    key, alias, other = (f"{k:064x}" for k in (1, 2, 3))
    meta = disk_cache.store(key, {"entry": "f"}, b"\x7fELF" + bytes(100), d)
    assert disk_cache.store_alias(alias, meta, d)
    assert disk_cache.load_alias(alias, d)[0]["key"] == key
    os.replace(tmp_path / (alias + ".alias"), tmp_path / (other + ".alias"))
    assert disk_cache.load_alias(other, d) is None
    (tmp_path / (alias + ".alias")).write_text(f"{key} {meta['meta_sha256']}", encoding="utf-8")   # the old format
    assert disk_cache.load_alias(alias, d) is None
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, "1")       # over the limit: a scan
    disk_cache.evict(d, keep=key)
    assert not list(tmp_path.glob("*.alias")) and (tmp_path / (key + ".json")).exists()
