"""Collectives between the device processes of one host, over shared memory.

Every device of a group of processes (one process per device, global device
ids ``0 .. n-1``, at most 64) maps one ``multiprocessing.shared_memory``
segment:

* a header: the device count, the slot size, an *abort* word (0, or the id of
  a failed device plus one) and the failure message;
* one control line (64 bytes) per device: its *round* counter and the
  signatures of its last two rounds' collectives;
* one data slot per device, in two halves used by alternate *pieces*.

A collective runs as one or more pieces (a buffer bigger than half a slot is
cut up).  In a piece every member of the group writes into its own slot half,
then meets the others at a *round*: it publishes its round counter and waits
until every member's has reached it (each device only ever writes its own
counter, so no shared atomic is needed, and any subset of devices can meet),
then reads the others' halves.  Before a device writes a half again it waits
until the devices that read that half last have published a later round
(groups may differ from one collective to the next), so no closing barrier
is needed.  The signatures of the members are compared at every round, so a
device running a different collective (another op, channel or size) is
reported, not silently mixed.

The waiting and everything that fits one slot half is native code
(``xlac.codegen.shm_collective``, reached through ``xlac.runtime.native``:
the code generator's ``runtime_code`` must have been imported, as ``xlac.jit``
does): one round — write, meet, read — with an all-reduce of up to
``small_bytes`` reduced whole by every member, in group order.  Generated code
calls it directly (``collective_service.make_native_service``), so a
collective in a compiled loop costs no Python.  Bigger buffers go in pieces
from here over the native barrier: a big all-reduce is a reduce-scatter then
an all-gather — every member writes the chunks the others own into its half,
member k reduces chunk k of every half (its own from its input) into chunk k
of its own half, a second round, then everyone copies every chunk out; each
device reduces 1/N of the data, with numpy ufuncs over whole chunks.

The wait spins, then yields, then sleeps in short steps (processes may
outnumber cores), watching the abort word and a deadline: a device that
fails sets the abort word (its process's parent does so for a device that
died) and every waiter raises :class:`CollectiveError` naming the device,
the collective and the channel; a device that is never reached is reported
after ``timeout`` seconds, naming the devices that did not arrive.

Memory order: a device writes its data, then publishes its round with release
semantics; readers load rounds with acquire semantics.
"""
from __future__ import annotations

import ctypes
import hashlib
import mmap
import os
from dataclasses import dataclass
from multiprocessing import shared_memory

import numpy as np

from ..errors import CollectiveError
from ..shape import PrimitiveType as PT
from . import abi, native

__all__ = ["CollectiveError", "Segment", "ShmTransport", "ShmState", "DEFAULT_SLOT_BYTES", "DEFAULT_TIMEOUT", "signature",
           "REDUCTIONS"]

#: Bytes of each device's data slot (two halves of half this size).  Bigger
#: slots mean fewer rounds per big collective (a 16 MiB all-reduce on 2
#: devices: twice the rate with 32 MiB than with 8 MiB).
DEFAULT_SLOT_BYTES = 32 << 20
#: Seconds a device waits for the others at a collective before it gives up.
DEFAULT_TIMEOUT = float(os.environ.get("XLAC_COLLECTIVE_TIMEOUT", "10"))

_HEADER = 4096
_LINE = 64
_MESSAGE = 2048
_ALIGN = 64

# numpy reductions by name (``xlac_reduction``); and/or are logical for pred,
# bitwise for integers.
REDUCTIONS = {
    "sum": np.add,
    "product": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
}


@dataclass(frozen=True)
class Layout:
    num_devices: int
    slot_bytes: int

    @property
    def controls(self) -> int:
        return _HEADER

    @property
    def slots(self) -> int:
        return _HEADER + _round_up(self.num_devices * _LINE, _ALIGN)

    @property
    def size(self) -> int:
        return self.slots + self.num_devices * self.slot_bytes


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


class Segment:
    """The shared segment of a device group (see the module docstring).

    ``Segment.create(n)`` makes it (the parent of the device processes owns it
    and unlinks it); ``Segment.attach(name)`` maps it in a device process.
    """

    def __init__(self, name: str, buf, owner: shared_memory.SharedMemory | None, mapping=None):
        self.name = name
        self.buf = buf
        self._owner = owner          # the creator's SharedMemory (it unlinks), else None
        self._mapping = mapping      # an attached process's mmap
        head = np.ndarray((4,), np.int64, buf, 0)
        self.address = head.ctypes.data    # for the native protocol; valid until close()
        self.layout = Layout(int(head[1]), int(head[2]))
        self._head = head
        self.controls = np.ndarray((self.layout.num_devices, _LINE // 8), np.int64, buf, self.layout.controls)
        self._message = np.ndarray((_MESSAGE,), np.uint8, buf, 64)

    @classmethod
    def create(cls, num_devices: int, slot_bytes: int = DEFAULT_SLOT_BYTES) -> "Segment":
        if num_devices < 1:
            raise ValueError(f"a device group needs at least one device, got {num_devices}")
        slot_bytes = _round_up(max(slot_bytes, 2 * _ALIGN), 2 * _ALIGN)
        layout = Layout(num_devices, slot_bytes)
        # Registered with multiprocessing's resource tracker, which unlinks
        # it should this process die before close().
        shm = shared_memory.SharedMemory(create=True, size=layout.size,
                                         name=f"xlac_{os.getpid()}_{os.urandom(4).hex()}")
        head = np.ndarray((4,), np.int64, shm.buf, 0)
        head[:] = (0x78_6C_61_63, num_devices, slot_bytes, 0)     # magic "xlac"
        np.ndarray((layout.slots,), np.uint8, shm.buf, 0)[64:] = 0
        del head
        return cls(shm.name, shm.buf, shm)

    @classmethod
    def attach(cls, name: str) -> "Segment":
        """Map the segment ``name`` made by another process.  Mapped directly
        (not through ``SharedMemory``), so this process's resource tracker
        never unlinks the owner's segment when this process exits."""
        fd = os.open(os.path.join("/dev/shm", name.lstrip("/")), os.O_RDWR)
        try:
            mapping = mmap.mmap(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
        head = np.ndarray((4,), np.int64, mapping, 0)
        if int(head[0]) != 0x78_6C_61_63:
            raise ValueError(f"{name} is not an xlac device segment")
        del head
        return cls(name, memoryview(mapping), None, mapping)

    def slot(self, device: int) -> np.ndarray:
        return np.ndarray((self.layout.slot_bytes,), np.uint8, self.buf,
                          self.layout.slots + device * self.layout.slot_bytes)

    # -- failure ----------------------------------------------------------------------
    def abort(self, device: int, message: str) -> None:
        """Record that ``device`` failed (the first failure wins).  ``device``
        may be the device count: the process that owns the devices stops
        their call (Ctrl-C, closing the pool)."""
        if self._head[3]:
            return
        data = message.encode("utf-8", "replace")[:_MESSAGE - 1]
        self._message[:len(data)] = np.frombuffer(data, np.uint8)
        self._message[len(data)] = 0
        self._head[3] = device + 1

    def failure(self) -> tuple[int, str] | None:
        """(device, message) of the recorded failure, or None."""
        who = int(self._head[3])
        if not who:
            return None
        raw = bytes(self._message)
        return who - 1, raw[:raw.index(0) if 0 in raw else len(raw)].decode("utf-8", "replace")

    def reset(self) -> None:
        """Clear counters and the failure (the owner, before a new set of devices starts)."""
        self._head[3] = 0
        self.controls[:] = 0

    def close(self) -> None:
        """Unmap (and, for the owner, unlink) the segment.  Views still held
        elsewhere keep the mapping alive until they go; the name goes now."""
        self._head = self.controls = self._message = None
        buf, self.buf = self.buf, None
        if self._owner is not None:
            try:
                self._owner.unlink()
            except FileNotFoundError:
                pass
            try:
                self._owner.close()
            except BufferError:
                pass
        elif self._mapping is not None:
            buf.release()
            try:
                self._mapping.close()
            except BufferError:
                pass


# -- the native side ------------------------------------------------------------------------

#: Statuses of the native protocol (``xlac.codegen.shm_collective``): done, not
#: handled natively (too big for one round: the Python pieces do it), and the
#: failures ``state.error_kind`` records.
NOT_HANDLED = -1
ERROR_PEER_FAILED, ERROR_TIMEOUT, ERROR_MISMATCH = 1, 2, 3

#: Devices of one segment at most: groups are 64-bit masks.
MAX_DEVICES = 64
#: All-reduces up to this many bytes are one round in which every member
#: reduces the whole buffer (one barrier); bigger ones split the reduction.
DEFAULT_SMALL_BYTES = 64 << 10


class ShmState(ctypes.Structure):
    """One device's view of the protocol, shared by the native code and the
    Python pieces (every field is 8 bytes; the native code reads them by offset)."""

    _fields_ = [
        ("base", ctypes.c_void_p),          # the segment (head words: magic, devices, slot bytes, abort)
        ("controls", ctypes.c_void_p),      # the control lines
        ("slots", ctypes.c_void_p),         # the data slots
        ("everyone", ctypes.c_void_p),      # int64[num_devices]: 0, 1, ..., the group of all devices
        ("half_bytes", ctypes.c_int64),
        ("slot_bytes", ctypes.c_int64),
        ("device", ctypes.c_int64),
        ("num_devices", ctypes.c_int64),
        ("round", ctypes.c_int64),          # this device's last round
        ("pieces", ctypes.c_int64),         # pieces so far: the parity picks the slot half
        ("timeout_ns", ctypes.c_int64),
        ("small_bytes", ctypes.c_int64),
        ("fallback", ctypes.c_void_p),      # the collective service for what is not native
        ("fail", ctypes.c_void_p),          # int fail(state, op): raise the recorded error in Python
        ("error_kind", ctypes.c_int64),     # ERROR_*
        ("error_detail", ctypes.c_int64),   # the failed device, or a mask of late / mismatched ones
        ("error_round", ctypes.c_int64),
        ("readers", ctypes.c_int64 * 2),    # per half: the devices that may still read it...
        ("readers_round", ctypes.c_int64 * 2),  # ...until they publish this round
    ]

    # Control line columns: the round counter, then the signatures of the
    # collectives of the last even and odd rounds.  A member is at most one
    # round ahead of a device waiting for it (it cannot pass the next barrier
    # alone), so the signature of the round being checked is still there.
    ROUND, SIGNATURE = 0, 1


class ShmTransport:
    """The collectives of device ``device`` of a segment's group.

    Buffers are numpy arrays (any contiguous dtype); ``group`` is the ordered
    tuple of global device ids taking part (this device among them).
    ``what`` labels errors and signatures.  What fits one slot half is done by
    the native protocol in one round; bigger buffers go in pieces from here,
    with the native barrier.
    """

    def __init__(self, segment: Segment, device: int, timeout: float = DEFAULT_TIMEOUT,
                 small_bytes: int = DEFAULT_SMALL_BYTES):
        n = segment.layout.num_devices
        if not 0 <= device < n:
            raise ValueError(f"device {device} is not in a group of {n}")
        if n > MAX_DEVICES:
            raise ValueError(f"at most {MAX_DEVICES} devices share a segment, got {n}")
        self.seg = segment
        self.device = device
        self.timeout = timeout
        self.half = segment.layout.slot_bytes // 2
        self._everyone = np.arange(n, dtype=np.int64)
        self._small_bytes = small_bytes
        self.state = ShmState()
        self.restart()
        self._address = ctypes.addressof(self.state)
        self._native = native.get("shm_collective")

    def restart(self) -> None:
        """Start afresh from the segment's counters as they are now (after the
        owner's ``Segment.reset``: the next call of a pool).  The state keeps
        its address and its ``fallback``/``fail`` services, so a service bound
        to it (``collective_service.make_native_service``) stays valid."""
        st, segment = self.state, self.seg
        fallback, fail = st.fallback, st.fail
        ctypes.memset(ctypes.addressof(st), 0, ctypes.sizeof(st))
        st.base = segment.address
        st.controls = segment.address + segment.layout.controls
        st.slots = segment.address + segment.layout.slots
        st.everyone = self._everyone.ctypes.data
        st.half_bytes, st.slot_bytes = self.half, segment.layout.slot_bytes
        st.device, st.num_devices = self.device, segment.layout.num_devices
        st.round = int(segment.controls[self.device, ShmState.ROUND])
        st.timeout_ns = int(self.timeout * 1e9)
        st.small_bytes = self._small_bytes
        st.fallback, st.fail = fallback, fail

    @property
    def round(self) -> int:
        return self.state.round

    @property
    def pieces(self) -> int:
        return self.state.pieces

    # -- errors -----------------------------------------------------------------------
    def error(self, what: str) -> CollectiveError:
        """The failure the native protocol recorded, as a CollectiveError."""
        st = self.state
        devices = [d for d in range(MAX_DEVICES) if (st.error_detail >> d) & 1]
        if st.error_kind == ERROR_PEER_FAILED:
            dev, msg = self.seg.failure() or (st.error_detail, "")
            if dev >= self.seg.layout.num_devices:
                return CollectiveError(f"{what}: stopped: {msg}")
            return CollectiveError(f"{what}: device {dev} failed: {msg}")
        if st.error_kind == ERROR_TIMEOUT:
            return CollectiveError(f"{what}: device(s) {devices} did not reach it within {self.timeout:g} s "
                                   f"(device {self.device} waited at round {st.error_round})")
        if st.error_kind == ERROR_MISMATCH:
            return CollectiveError(f"{what}: device(s) {devices} are running a different collective at this "
                                   f"point (mismatched sequence of collectives; device {self.device} is at {what})")
        return CollectiveError(f"{what}: failed (status {st.error_kind})")

    # -- the barrier and the pieces -----------------------------------------------------
    def _arrive(self, group: tuple, signature: int, what: str) -> None:
        """Advance this device's round and wait for every member of ``group``."""
        if self._native["xlac_shm_barrier"](self._address, _mask(group), signature):
            raise self.error(what)

    def _half(self, device: int, nbytes: int) -> np.ndarray:
        """The first ``nbytes`` of ``device``'s half for the current piece."""
        offset = (self.state.pieces % 2) * self.half
        return self.seg.slot(device)[offset:offset + nbytes]

    def _pieces(self, nbytes: int, unit: int, readers: tuple, what: str, room: int | None = None):
        """(start, stop) byte ranges of at most ``room`` bytes (half a slot),
        whole ``unit``s each; one empty range when ``nbytes`` is 0.  Each piece
        takes the next slot half once its last ``readers`` are done with it."""
        room = self.half if room is None else room
        step = room // unit * unit
        if step < unit:
            raise CollectiveError(f"an element group of {unit} bytes does not fit a slot half of "
                                  f"{self.half} bytes (raise the slot size)")
        mask = _mask(readers)
        for lo in range(0, max(nbytes, 1), step):
            if self._native["xlac_shm_begin_piece"](self._address):
                raise self.error(what)
            yield lo, min(nbytes, lo + step)
            self._native["xlac_shm_end_piece"](self._address, mask)

    def _one_round(self, kind: str, x: np.ndarray, out: np.ndarray, group: tuple, what: str,
                   reduction: str = "none", pairs: tuple = ()) -> bool:
        """Do the collective natively in one round if it fits; False if not (nothing done)."""
        op = abi.CollectiveOp()
        op.kind = abi.COLLECTIVE_KINDS[kind]
        op.element_type = _element_type(x.dtype)
        op.reduction = abi.REDUCTIONS[reduction]
        op.input, op.input_bytes = _address(x), x.nbytes
        op.output, op.output_bytes = _address(out), out.nbytes
        op.instruction = what.encode()
        g = np.asarray([group], np.int64)
        op.num_groups, op.group_size = g.shape
        op.groups = g.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        p = np.asarray(pairs, np.int64).reshape(-1, 2)
        op.num_pairs = len(p)
        op.pairs = p.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        if op.element_type < 0:
            return False
        status = self._native["xlac_shm_collective"](self._address, ctypes.addressof(op))
        if status == NOT_HANDLED:
            return False
        if status:
            raise self.error(what)
        return True

    # -- collectives ------------------------------------------------------------------
    def all_reduce(self, x: np.ndarray, out: np.ndarray, reduction: str, group: tuple,
                   what: str = "all-reduce") -> None:
        """``out = reduce(x of every member)``, elementwise, in group order."""
        if self._one_round("all-reduce", x, out, group, what, reduction):
            return
        op = REDUCTIONS[reduction]
        src, dst = _bytes(x), _bytes(out)
        n = len(group)
        me = group.index(self.device)
        item = x.dtype.itemsize
        sig = signature(what, reduction, x.dtype, src.size)
        for lo, hi in self._pieces(src.size, item, group, what):
            nbytes = hi - lo
            count = nbytes // item
            # Chunk k of the piece (elements) belongs to member k: the others
            # need this device's other chunks; its own it reads from ``x``.
            bounds = [count * k // n * item for k in range(n + 1)]
            mine = self._half(self.device, nbytes)
            for k in range(n):
                if k != me:
                    mine[bounds[k]:bounds[k + 1]] = src[lo + bounds[k]:lo + bounds[k + 1]]
            self._arrive(group, sig, what)
            a, b = bounds[me], bounds[me + 1]
            if b > a:
                # Reduced in group order into this device's own chunk of its
                # half, which nobody reads until the next barrier.
                views = [src[lo + a:lo + b].view(x.dtype) if d == self.device else
                         self._half(d, nbytes)[a:b].view(x.dtype) for d in group]
                acc = mine[a:b].view(x.dtype)
                if n > 1:
                    op(views[0], views[1], out=acc)
                else:
                    acc[...] = views[0]
                for v in views[2:]:
                    op(acc, v, out=acc)
            self._arrive(group, sig, what)
            for d in group:
                k = group.index(d)
                dst[lo + bounds[k]:lo + bounds[k + 1]] = self._half(d, nbytes)[bounds[k]:bounds[k + 1]]

    def all_gather(self, x: np.ndarray, out: np.ndarray, group: tuple, what: str = "all-gather") -> None:
        """``out`` = every member's ``x``, concatenated in group order (as bytes)."""
        src, dst = _bytes(x), _bytes(out)
        size = src.size
        if dst.size != size * len(group):
            raise ValueError(f"{what}: output of {dst.size} bytes for {len(group)} inputs of {size}")
        if self._one_round("all-gather", x, out, group, what):
            return
        sig = signature(what, size)
        for lo, hi in self._pieces(size, 1, group, what):
            self._half(self.device, hi - lo)[:] = src[lo:hi]
            self._arrive(group, sig, what)
            for k, d in enumerate(group):
                dst[k * size + lo:k * size + hi] = self._half(d, hi - lo)

    def reduce_scatter(self, x: np.ndarray, out: np.ndarray, reduction: str, group: tuple,
                       what: str = "reduce-scatter") -> None:
        """``x`` is ``len(group)`` equal blocks; member k gets the reduction of block k."""
        src, dst = _bytes(x), _bytes(out)
        n = len(group)
        me = group.index(self.device)
        block = dst.size
        if src.size != block * n:
            raise ValueError(f"{what}: input of {src.size} bytes is not {n} blocks of {block}")
        if self._one_round("reduce-scatter", x, out, group, what, reduction):
            return
        op = REDUCTIONS[reduction]
        item = x.dtype.itemsize
        sig = signature(what, reduction, x.dtype, src.size)
        # Every member sends the same piece of each of the n blocks at once.
        for lo, hi in self._pieces(block, item, group, what, self.half // n):
            w = hi - lo
            mine = self._half(self.device, w * n)
            for k in range(n):
                mine[k * w:(k + 1) * w] = src[k * block + lo:k * block + hi]
            self._arrive(group, sig, what)
            if w:
                acc = self._half(group[0], w * n)[me * w:(me + 1) * w].view(x.dtype).copy()
                for d in group[1:]:
                    op(acc, self._half(d, w * n)[me * w:(me + 1) * w].view(x.dtype), out=acc)
                dst[lo:hi] = acc.view(np.uint8)

    def all_to_all(self, x: np.ndarray, out: np.ndarray, group: tuple, what: str = "all-to-all") -> None:
        """``x`` is ``len(group)`` equal blocks; block k goes to member k; ``out`` holds the
        blocks received, in group order."""
        src, dst = _bytes(x), _bytes(out)
        n = len(group)
        me = group.index(self.device)
        block = src.size // n
        if src.size != block * n or dst.size != src.size:
            raise ValueError(f"{what}: {src.size} bytes in, {dst.size} out, for {n} equal blocks")
        if self._one_round("all-to-all", x, out, group, what):
            return
        sig = signature(what, src.size)
        for lo, hi in self._pieces(block, 1, group, what, self.half // n):
            w = hi - lo
            mine = self._half(self.device, w * n)
            for k in range(n):
                mine[k * w:(k + 1) * w] = src[k * block + lo:k * block + hi]
            self._arrive(group, sig, what)
            for k, d in enumerate(group):
                dst[k * block + lo:k * block + hi] = self._half(d, w * n)[me * w:(me + 1) * w]

    def permute(self, x: np.ndarray, out: np.ndarray, pairs: tuple, what: str = "collective-permute") -> None:
        """Send ``x`` to the target of every ``(source, target)`` pair whose source is
        this device; ``out`` gets the buffer of this device's source, or zeros
        when it has none.  Every device of the segment takes part."""
        everyone = tuple(range(self.seg.layout.num_devices))
        if self._one_round("collective-permute", x, out, everyone, what, pairs=pairs):
            return
        src, dst = _bytes(x), _bytes(out)
        source = next((s for s, t in pairs if t == self.device), None)
        sig = signature(what, sorted(pairs), src.size)
        for lo, hi in self._pieces(src.size, 1, everyone, what):
            self._half(self.device, hi - lo)[:] = src[lo:hi]
            self._arrive(everyone, sig, what)
            if source is None:
                dst[lo:hi] = 0
            else:
                dst[lo:hi] = self._half(source, hi - lo)


def signature(*parts) -> int:
    """A 56-bit hash of a collective's description (what, kind, type, size...):
    equal on every device at the same collective (both transports compare them)."""
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=7).digest()
    return int.from_bytes(digest, "little")


def _bytes(a: np.ndarray) -> np.ndarray:
    if not a.flags.c_contiguous:
        raise ValueError("collective buffers must be contiguous")
    return a.reshape(-1).view(np.uint8)


def _address(a: np.ndarray) -> int:
    _bytes(a)
    return a.ctypes.data if a.nbytes else 0


def _mask(group) -> int:
    """The devices of ``group`` as a bit mask (a signed 64-bit value)."""
    m = 0
    for d in group:
        m |= 1 << int(d)
    return m - (1 << 64) if m >= 1 << 63 else m


_TYPE_NUMBERS = {np.dtype(np.bool_): abi.ELEMENT_TYPE_NUMBERS[PT.PRED]}
_TYPE_NUMBERS.update({pt.dtype: number for pt, number in abi.ELEMENT_TYPE_NUMBERS.items()
                      if pt.is_array and pt is not PT.PRED})


def _element_type(dtype: np.dtype) -> int:
    """xlac_element_type of ``dtype``, -1 for a dtype the ABI does not name."""
    return _TYPE_NUMBERS.get(np.dtype(dtype), -1)
