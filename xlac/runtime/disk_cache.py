"""On-disk cache of compiled object code (``XLAC_CACHE_DIR``).

When the environment variable ``XLAC_CACHE_DIR`` names a directory, every
module the JIT compiles leaves two files there::

    <key>.o      the optimised object code, as the host TargetMachine emitted it
    <key>.json   what an Executable needs besides the code: entry name,
                 parameter and result shapes (HLO shape text), temp size,
                 donatable (parameter, result) pairs, compile time, and the
                 object's size and SHA-256

``key`` is a SHA-256 over the module text, the optimize flag, xlac's version
and a fingerprint of its source files, the llvmlite and LLVM versions, the
host's triple, CPU name and CPU features, and this file format's version: a
later process (or Executable) with the same key loads the object straight into
MCJIT (:func:`xlac.codegen.jit.load_object`) without lowering, parsing LLVM IR
or optimising.

HLO text handed to the JIT as a string also leaves ``<text key>.alias``: the
text key itself, the key of the entry compiled from it and that entry's
metadata digest, so a later process with the same text loads the object
without even parsing the text.

Every lookup checks that what it loads belongs to what was asked: an alias
must record the text key it is looked up by (an alias file copied or swapped
under another text's name names another module's entry), the metadata must
record the key it is looked up by (and the digest the alias recorded), the
object the size and SHA-256 the metadata records.  Any disagreement is a miss.

Writes are atomic (a temporary file in the same directory, then
``os.replace``; the object before its metadata, so metadata never names a
missing object).  An entry that cannot be read, does not parse, whose metadata
does not match its own recorded hash, or whose object does not match the
recorded size and hash is ignored (a miss, then rebuilt and
overwritten), never an error; failures to write are ignored too.

Every file read here (objects, metadata, aliases; the GEMM library's and the
thread helper's entries too) is opened without following a symbolic link and
without blocking (``O_NOFOLLOW | O_NONBLOCK``), and read only if it is a
regular file of bounded size, exactly that size: metadata and aliases at most
``MAX_METADATA_BYTES`` (1 MiB), objects exactly the size their metadata
records, at most ``MAX_OBJECT_BYTES`` (1 GiB).  So a FIFO, a device, a
directory, a link (to ``/dev/zero``, or to a file outside the directory) or a
huge sparse file in place of an entry's file is a miss, not a hang.  The
rebuilt entry's ``os.replace`` replaces such a name itself (it never writes
through a link); a directory in the way makes the write fail (ignored: that
module is compiled in every process).

The directory is kept under ``XLAC_CACHE_MAX_BYTES`` (default 1 GiB; 0: no
limit): when a write may have taken it past the limit, the least recently
used entries (a load refreshes an entry's time) are deleted until the rest
take at most 90% of it.  The scan stats every file, so a write does not scan
when the last scan's total (this process's, or the one it left in
``usage.txt``), plus what this process wrote since, is under the limit and
that scan is less than a minute old; other processes' writes of that minute
may take the directory past its limit until the next scan.  The scan
follows no link and deletes nothing outside the directory (see :func:`evict`);
only entries count (``machine.json`` and other files are left alone).

``XLAC_CACHE_CODE_VERSION`` replaces the source-file fingerprint in the key
(for deployments that want keys independent of file times).

The runtime library's code (the GEMM library's variants,
``xlac.codegen.gemm_library``, and the native helpers: the thread pool, the
Ctrl-C handler, the shared-memory collectives, the PJRT trampolines; each
compiled once per process) is cached even when ``XLAC_CACHE_DIR`` is not
set, as compiled-kernel caches usually are (CuPy's, Triton's): in
:func:`library_dir` — ``XLAC_LIBRARY_CACHE_DIR`` if set (empty or ``off``:
no library cache), else ``XLAC_CACHE_DIR``, else ``$XDG_CACHE_HOME/xlac`` or
``~/.cache/xlac``.  So only the very first process on a machine pays for
building it.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
import tempfile
import time

from .. import __version__

FORMAT_VERSION = 1
ENV = "XLAC_CACHE_DIR"
LIBRARY_ENV = "XLAC_LIBRARY_CACHE_DIR"
CODE_VERSION_ENV = "XLAC_CACHE_CODE_VERSION"
MAX_BYTES_ENV = "XLAC_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 1 << 30
#: Largest metadata (``.json``) or alias file read (bytes); real ones take ~1-2 KiB.
MAX_METADATA_BYTES = 1 << 20
#: Largest object file read (bytes); the biggest modules' objects take a few MiB.
MAX_OBJECT_BYTES = 1 << 30
_MAGIC = b"\x7fELF"
#: An entry's name: its key, a SHA-256 (other files, such as ``machine.json``
#: of :mod:`xlac.roofline`, are not entries and are never evicted).
_ENTRY = re.compile(r"[0-9a-f]{64}\.json")
#: The last scan's total (``evict``): "<bytes> <unix time>", so that a
#: process's first write need not scan the directory.
USAGE_FILE = "usage.txt"
#: How long a scan's total is trusted (seconds): other processes' writes since
#: are not in it, so the directory may exceed its limit by what they wrote
#: in that time until a scan.
SCAN_TRUST_S = 60.0
# Never follow a link (a ``.json`` linked to /dev/zero would be read without
# end), never wait (opening a FIFO for reading blocks until a writer comes).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
    | getattr(os, "O_CLOEXEC", 0)

__all__ = ["cache_dir", "library_dir", "make_key", "load", "store", "store_alias", "load_alias", "evict",
           "max_bytes",
           "code_fingerprint",
           "FORMAT_VERSION"]


def cache_dir() -> str | None:
    """The directory ``XLAC_CACHE_DIR`` names, or None (the cache is off)."""
    return os.environ.get(ENV) or None


def library_dir() -> str | None:
    """Where the runtime library's compiled code is cached (see the module
    docstring), or None when ``XLAC_LIBRARY_CACHE_DIR`` turns it off."""
    explicit = os.environ.get(LIBRARY_ENV)
    if explicit is not None:
        return None if explicit.strip().lower() in ("", "0", "off", "none") else explicit
    if cache_dir():
        return cache_dir()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "xlac")


@functools.lru_cache(maxsize=1)
def _source_fingerprint() -> str:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # the xlac package
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(path, root)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()


def code_fingerprint() -> str:
    """What identifies the compiler's code: ``XLAC_CACHE_CODE_VERSION`` if set,
    else the names, sizes and modification times of xlac's source files."""
    return os.environ.get(CODE_VERSION_ENV) or _source_fingerprint()


def make_key(*parts: str) -> str:
    """The cache key of ``parts`` (e.g. the host, module text, optimize flag) for
    this version of xlac's code (``xlac.codegen.compile_cache.cache_key`` adds
    the host)."""
    h = hashlib.sha256()
    for part in (f"xlac-disk-cache-{FORMAT_VERSION}", __version__, code_fingerprint(), *parts):
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else bytes(part)
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _meta_digest(meta: dict) -> str:
    """SHA-256 of the metadata without its own digest: a flipped digit in a shape
    (which would still parse) must not be trusted."""
    body = {k: v for k, v in meta.items() if k != "meta_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _paths(directory: str, key: str) -> tuple[str, str]:
    return os.path.join(directory, key + ".o"), os.path.join(directory, key + ".json")


def load(key: str, directory: str | None = None) -> tuple[dict, bytes] | None:
    """``(metadata, object bytes)`` of ``key``, or None (no cache, a miss, or a bad entry)."""
    directory = directory or cache_dir()
    if directory is None:
        return None
    obj_path, meta_path = _paths(directory, key)
    try:
        raw = _read_file(meta_path, MAX_METADATA_BYTES)
        if raw is None:
            return None
        meta = json.loads(raw)
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION or meta.get("key") != key \
                or meta.get("meta_sha256") != _meta_digest(meta):
            return None
        size = meta.get("object_size")
        if type(size) is not int or not 0 < size <= MAX_OBJECT_BYTES:
            return None
        data = _read_file(obj_path, MAX_OBJECT_BYTES, size)
        if data is None or not data.startswith(_MAGIC) \
                or hashlib.sha256(data).hexdigest() != meta.get("object_sha256"):
            return None
        _touch(meta_path)
        return meta, data
    except (OSError, ValueError, TypeError, AttributeError, RecursionError):   # deep JSON nesting
        return None


def _read_file(path: str, max_size: int, size: int | None = None) -> bytes | None:
    """The contents of ``path`` when it is a regular file of at most ``max_size``
    bytes (exactly ``size`` when given), else None: missing, unreadable, a
    symbolic link, a FIFO, a device, a directory, too big.  Never blocks on the
    file and never reads more than its size said."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):   # a device is not even opened
            return None
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)        # what was opened, had the name changed since lstat
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_size \
                or (size is not None and st.st_size != size):
            return None
        return _read_exactly(fd, st.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_exactly(fd: int, n: int) -> bytes | None:
    """``n`` bytes from ``fd``, or None if the file ends first (truncated meanwhile)."""
    chunks = []
    while n > 0:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _touch(path: str) -> None:
    """Mark an entry used now (its metadata file's time orders eviction); a link
    put there since it was read is not followed."""
    try:
        if os.utime in os.supports_follow_symlinks:
            os.utime(path, follow_symlinks=False)
        else:
            os.utime(path)
    except OSError:
        pass


def store(key: str, meta: dict, data: bytes, directory: str | None = None) -> dict | None:
    """Write an entry atomically; returns its metadata as written, or None (and
    raises nothing) when it cannot."""
    directory = directory or cache_dir()
    if directory is None or not data:
        return None
    meta = dict(meta, format=FORMAT_VERSION, key=key, object_size=len(data),
                object_sha256=hashlib.sha256(data).hexdigest())
    meta["meta_sha256"] = _meta_digest(meta)
    obj_path, meta_path = _paths(directory, key)
    try:
        os.makedirs(directory, exist_ok=True)
        _atomic_write(obj_path, data)
        meta_bytes = json.dumps(meta, indent=1, sort_keys=True).encode()
        _atomic_write(meta_path, meta_bytes)
    except (OSError, ValueError, TypeError):
        return None
    _evict_if_full(directory, key, len(data) + len(meta_bytes))
    return meta


def max_bytes() -> int:
    """The size the cache directory is kept under (``XLAC_CACHE_MAX_BYTES``;
    0 or negative: no limit)."""
    try:
        return int(os.environ.get(MAX_BYTES_ENV, DEFAULT_MAX_BYTES))
    except ValueError:
        return DEFAULT_MAX_BYTES


#: directory -> [its total at the last scan plus what this process wrote since, the scan's time]
_usage: dict = {}


def _evict_if_full(directory: str, keep: str, added: int) -> None:
    """After a write of ``added`` bytes: :func:`evict` when the directory may
    be over its limit: the last scan's total (this process's, else the one
    ``USAGE_FILE`` records) plus what this process wrote since exceeds it, or
    that scan is older than ``SCAN_TRUST_S``.  A scan stats every file (0.15
    s for 25,000 files here), so it is not done on every write."""
    limit = max_bytes()
    if limit <= 0:
        return
    known = _usage.get(directory) or _read_usage(directory)
    if known is not None and known[0] + added <= limit and 0 <= time.time() - known[1] < SCAN_TRUST_S:
        _usage[directory] = [known[0] + added, known[1]]
        return
    evict(directory, keep=keep)


def _read_usage(directory: str) -> list | None:
    data = _read_file(os.path.join(directory, USAGE_FILE), 100)
    try:
        total, when = data.split()
        return [int(total), float(when)]
    except (AttributeError, ValueError):
        return None


def evict(directory: str, keep: str | None = None) -> int:
    """Delete the least recently used entries of ``directory`` (by the time of
    their metadata file, which a load refreshes) until their objects and
    metadata total at most 90% of :func:`max_bytes`, never ``keep``; then the
    aliases whose entry is gone or that were written for another name.
    Returns the number of entries deleted.  Errors (another process deleting
    the same files) are ignored.

    Links are never followed: a link, FIFO or device in place of an entry's
    file counts 0 bytes and deleting the entry removes the name itself (a
    directory stays); nothing outside ``directory`` is read or deleted."""
    limit = max_bytes()
    if limit <= 0:
        return 0
    files: dict = {}            # name -> (mtime, size), one directory scan
    try:
        with os.scandir(directory) as it:
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                files[entry.name] = (st.st_mtime, st.st_size if stat.S_ISREG(st.st_mode) else 0)
    except OSError:
        return 0
    entries, total = [], 0
    for name, (used, size) in files.items():
        if _ENTRY.fullmatch(name):
            key = name[:-5]
            size += files.get(key + ".o", (0, 0))[1]
            entries.append((used, key, size))
            total += size
    deleted = 0
    if total > limit:
        for _used, key, size in sorted(entries):
            if total <= 0.9 * limit:
                break
            if key == keep:
                continue
            for path in _paths(directory, key)[::-1]:     # metadata first: it names the object
                try:
                    os.unlink(path)
                except OSError:
                    pass
            total -= size
            deleted += 1
        _drop_stale_aliases(directory, files)
    _usage[directory] = [total, time.time()]
    try:
        _atomic_write(os.path.join(directory, USAGE_FILE), f"{total} {_usage[directory][1]}".encode())
    except OSError:
        pass
    return deleted


def _drop_stale_aliases(directory: str, files) -> None:
    """Delete the aliases among ``files`` whose entry is gone or that were
    written for another name."""
    for name in files:
        if name.endswith(".alias"):
            path = os.path.join(directory, name)
            target = _alias_target(_read_file(path, MAX_METADATA_BYTES))
            try:
                if target is None or target[0] != name[:-6] \
                        or not os.path.lexists(_paths(directory, target[1])[1]):
                    os.unlink(path)
            except OSError:
                pass


def store_alias(alias: str, meta: dict, directory: str | None = None) -> bool:
    """Record that ``alias`` (e.g. the key of HLO text as given, before it is
    parsed and printed) names the entry whose metadata (as :func:`load` or
    :func:`store` returned it) is ``meta``; False when it cannot."""
    directory = directory or cache_dir()
    if directory is None:
        return False
    try:
        os.makedirs(directory, exist_ok=True)
        # The alias's own key goes in too: the file's name alone does not say
        # which text it was written for (a swapped or copied file would be trusted).
        _atomic_write(os.path.join(directory, alias + ".alias"),
                      f"{alias} {meta['key']} {meta['meta_sha256']}".encode())
        return True
    except (OSError, KeyError, TypeError):
        return False


def load_alias(alias: str, directory: str | None = None) -> tuple[dict, bytes] | None:
    """The entry ``alias`` names (:func:`store_alias`), as :func:`load` gives it,
    or None: no alias, an alias written for another text (its recorded text key
    is not ``alias``), or the entry is missing, bad, or not the one the alias
    was written for (its metadata changed since)."""
    directory = directory or cache_dir()
    if directory is None:
        return None
    target = _alias_target(_read_file(os.path.join(directory, alias + ".alias"), MAX_METADATA_BYTES))
    if target is None or target[0] != alias:
        return None
    _, key, digest = target
    entry = load(key, directory)
    return entry if entry is not None and entry[0].get("meta_sha256") == digest else None


def _alias_target(raw: bytes | None) -> tuple[str, str, str] | None:
    """``(text key, entry key, metadata digest)`` from an alias file's contents,
    or None when they are not three words of which the first two are keys (64
    hexadecimal digits)."""
    try:
        alias, key, digest = raw.decode("ascii").split()
    except (AttributeError, UnicodeDecodeError, ValueError):      # None, not ASCII, not three words
        return None
    if not (_is_key(alias) and _is_key(key)):
        return None
    return alias, key, digest


def _is_key(word: str) -> bool:
    return len(word) == 64 and all(c in "0123456789abcdef" for c in word)


def _atomic_write(path: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
