"""A call's arrays between a process and its device processes, through shared memory.

Pickling a call's arguments into a socket copies every byte three times
(pickle, the socket, unpickle) and makes the writer wait for the reader: a
Megatron MLP's 9 MiB of weights took ~20 ms per call that way, several times
the compute.  A :class:`Mailbox` is a shared-memory block the parent owns
per device and direction: the parent copies the arguments in once and sends
only their places (:class:`Placed`); the device process maps the block and
runs its executable on views of it (no copy); results go back the same way
through the device's result mailbox.  An immutable argument (a jax buffer)
passed again at its place is not copied again (:meth:`Mailbox.put`'s keys):
a training step's weights cross once.

The block grows (a new segment, a new name) when a call's arrays do not fit;
a device process keeps one mapping per mailbox and maps again when the name
changes.  What is not a fixed-size numpy array (a token's ``None``, an
object array) travels in the message itself.  Segments are made with
``multiprocessing.shared_memory`` (the owner's resource tracker unlinks them
if the owner dies) and mapped directly elsewhere (as
:meth:`xlac.runtime.shm_transport.Segment.attach`, so the device process's
tracker never unlinks the owner's block).
"""
from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from multiprocessing import shared_memory

import numpy as np

from .allocator import copy_of

__all__ = ["Mailbox", "MailboxReader", "Placed", "place", "fits"]

_ALIGN = 64


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


@dataclass(frozen=True)
class Placed:
    """Where a list of arrays lies in mailbox ``name``: per item either
    ``(offset, shape, dtype)`` or ``("value", object)`` for what is sent
    as it is."""
    name: str
    items: tuple


def _is_plain(a) -> bool:
    return isinstance(a, (np.ndarray, np.generic)) and a.dtype.kind != "O" and a.dtype.itemsize > 0


def fits(arrays, capacity: int) -> bool:
    """Whether the numpy arrays among ``arrays`` fit ``capacity`` bytes."""
    return _layout_size(arrays) <= capacity


def _layout_size(arrays) -> int:
    return sum(_round_up(a.nbytes, _ALIGN) for a in arrays if _is_plain(a))


def place(buf, name: str, arrays, there=None) -> Placed:
    """Copy ``arrays`` into ``buf`` (the mapping of mailbox ``name``); what
    is not a fixed-size array goes in the descriptor as it is.  ``there(k,
    offset)``: whether array ``k`` is at ``offset`` already (not copied)."""
    items, offset = [], 0
    for k, a in enumerate(arrays):
        if not _is_plain(a):
            items.append(("value", a))
            continue
        if there is None or not there(k, offset):
            np.ndarray(a.shape, a.dtype, buf, offset)[...] = a
        items.append((offset, a.shape, a.dtype))
        offset += _round_up(a.nbytes, _ALIGN)
    return Placed(name, tuple(items))


def views(buf, placed: Placed) -> list:
    """The arrays ``placed`` describes, as views of ``buf`` (no copy)."""
    return [item[1] if item[0] == "value" else np.ndarray(item[1], _canonical(item[2]), buf, item[0])
            for item in placed.items]


def _canonical(dtype: np.dtype) -> np.dtype:
    """numpy's own descriptor of ``dtype``'s type where it is the same dtype: an
    unpickled dtype is a copy, and an executable's native fast path takes an
    array only with the parameter's very descriptor (else the Python path)."""
    same = np.dtype(dtype.type)
    return same if same == dtype else dtype


class Mailbox:
    """A shared-memory block this process owns (one per device and direction)."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self._shm: shared_memory.SharedMemory | None = None
        self._kept: dict = {}        # offset -> (key, nbytes) of the previous put's keyed arrays

    @property
    def name(self) -> str | None:
        return self._shm.name if self._shm is not None else None

    @property
    def capacity(self) -> int:
        return self._shm.size if self._shm is not None else 0

    def reserve(self, nbytes: int) -> None:
        """Make room for ``nbytes`` (a new, bigger segment if need be: half as
        much again, so that slowly growing calls do not remake it each time)."""
        if self._shm is not None and nbytes <= self.capacity:
            return
        self.close()
        size = _round_up(max(nbytes + nbytes // 2, 1 << 16), mmap.PAGESIZE)
        self._shm = shared_memory.SharedMemory(create=True, size=size,
                                               name=f"{self.prefix}_{os.getpid()}_{os.urandom(4).hex()}")

    def put(self, arrays, keys=None) -> Placed:
        """Copy ``arrays`` in (growing the block first if need be).

        ``keys``: per array, an object that stands for its bytes as long as
        it lives (an immutable buffer: a PJRT buffer of the jax backend), or
        None.  An array whose key is the one the previous put left at the
        same offset with as many bytes is not copied again: its bytes are
        there still (a device only reads its arguments).  A weight passed
        on every step is copied once."""
        self.reserve(_layout_size(arrays))
        kept = self._kept
        keys = keys or ()

        def there(k: int, offset: int) -> bool:
            key = keys[k] if k < len(keys) else None
            old = kept.get(offset)
            return key is not None and old is not None and old[0] is key and old[1] == arrays[k].nbytes

        placed = place(self._shm.buf, self._shm.name, arrays, there)
        # (holding the keys keeps them from being another object's identity later)
        self._kept = {item[0]: (keys[k], arrays[k].nbytes) for k, item in enumerate(placed.items)
                      if k < len(keys) and keys[k] is not None and item[0] != "value"}
        return placed

    def get(self, placed: Placed) -> list:
        """Copies of the arrays a device process put here (in the result
        pool's blocks: ``allocator.copy_of``)."""
        return [copy_of(a) if isinstance(a, np.ndarray) and placed.items[k][0] != "value" else a
                for k, a in enumerate(views(self._shm.buf, placed))]

    def forget(self) -> None:
        """Copy every array of the next put (what is in the block is not trusted)."""
        self._kept = {}

    def close(self) -> None:
        """Unlink and unmap the block (views still held keep the memory until they go)."""
        shm, self._shm = self._shm, None
        self._kept = {}
        if shm is None:
            return
        try:
            shm.unlink()
        except FileNotFoundError:
            pass
        try:
            shm.close()
        except BufferError:
            pass


class MailboxReader:
    """A device process's mapping of one mailbox of its parent's, mapped
    again when the parent has made a new one."""

    def __init__(self):
        self.name: str | None = None
        self._mapping = None
        self.buf = None

    def attach(self, name: str):
        """The mapping of mailbox ``name`` (the buffer views are made on)."""
        if name != self.name:
            self.close()
            fd = os.open(os.path.join("/dev/shm", name.lstrip("/")), os.O_RDWR)
            try:
                self._mapping = mmap.mmap(fd, os.fstat(fd).st_size)
            finally:
                os.close(fd)
            self.buf, self.name = memoryview(self._mapping), name
        return self.buf

    def views(self, placed: Placed) -> list:
        return views(self.attach(placed.name), placed)

    def put(self, name: str, capacity: int, arrays) -> Placed | None:
        """Copy ``arrays`` into mailbox ``name`` of ``capacity`` bytes; None
        when they do not fit (then they are sent in the message)."""
        if not fits(arrays, capacity):
            return None
        return place(self.attach(name), name, arrays)

    def close(self) -> None:
        buf, self.buf, self.name = self.buf, None, None
        if buf is not None:
            try:                      # views still held keep the mapping until they go
                buf.release()
                self._mapping.close()
            except BufferError:
                pass
            self._mapping = None
