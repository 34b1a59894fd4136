"""The infeed and outfeed of an executable: two thread-safe queues, and the
``infeed`` / ``outfeed`` services of ``xlac_run_options`` that serve them.

``exe.infeed.put(value)`` queues a value (an array, or a tuple of arrays, as
the module's infeeds read them); it is checked at once against the data
shapes of the module's infeeds — dtype and dimensions, a Python scalar taking
the leaf's dtype — and copied, so the caller may reuse its arrays.
``exe.outfeed.get(timeout=...)`` returns the values the module's outfeeds
wrote, in the order they ran (fresh arrays, or tuples of them).

Generated code calls the services once per array leaf of a transfer
(``xlac.hlo.feeds``: the buffer, its byte size and a descriptor naming the
leaf's shape, the instruction and its data shape).  The infeed service takes a
whole value off the queue at a transfer's first leaf — waiting up to
``exe.infeed.timeout`` seconds, with the GIL released, for one to come — checks
it against the instruction's data shape (a value that does not fit stays in
the queue), and lays each leaf out as its buffer's layout says.  The outfeed
service copies each leaf out and queues the value once its last leaf came.
Concurrent calls of one executable share its queues; the leaves of one
transfer are kept per calling thread.

Failures never cross the native frames: the exception (``FeedTimeoutError``
naming the instruction and its shape, ``FeedError`` for a value that does not
fit) is recorded for the calling thread (``threads.record_error``), the
service returns ``XLAC_ERROR_SERVICE_FAILED``, the generated code returns, and
the executable re-raises it.  A call on the main thread blocked on an infeed
stops at Ctrl-C (the flag of ``xlac.runtime.interrupt``, polled while it
waits) with ``KeyboardInterrupt``.
"""
from __future__ import annotations

import collections
import ctypes
import threading
import time
from ctypes import c_int, c_int64, c_void_p

import numpy as np

from ..errors import FeedError, FeedTimeoutError
from ..hlo import feeds
from ..hlo.feeds import FeedInstruction, Transfer
from ..shape import Shape, from_buffer, parse_shape, to_buffer
from . import abi, interrupt
from .threads import record_error

__all__ = ["DEFAULT_TIMEOUT", "FeedQueue", "InfeedQueue", "OutfeedQueue", "make_infeed_service",
           "make_outfeed_service"]

#: Seconds an infeed waits for a value, and ``get`` for one, unless told otherwise.
DEFAULT_TIMEOUT = 60.0
#: Seconds between two looks at the Ctrl-C flag while an infeed waits.
_POLL = 0.05
_DEFAULT = object()


class FeedQueue:
    """A thread-safe FIFO of values, for the feeds of one module.

    ``timeout`` (seconds, None: no limit) is how long ``get`` waits by
    default — and, for the infeed, how long the compiled code waits for a
    value before failing with :class:`~xlac.errors.FeedTimeoutError`."""

    kind = "feed"

    def __init__(self, module_name: str, instructions=(), timeout: float | None = DEFAULT_TIMEOUT):
        self.module_name = module_name
        #: The module's infeeds (or outfeeds): :class:`xlac.hlo.feeds.FeedInstruction`.
        self.instructions = tuple(instructions)
        self.timeout = timeout
        self._items: collections.deque = collections.deque()
        self._cond = threading.Condition()

    def __len__(self) -> int:
        return len(self._items)

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def clear(self) -> None:
        """Drop every queued value."""
        with self._cond:
            self._items.clear()

    def __repr__(self) -> str:
        return f"<xlac {self.kind} of {self.module_name}: {len(self)} value(s) queued>"

    def _append(self, value) -> None:
        with self._cond:
            self._items.append(value)
            self._cond.notify()

    def get(self, timeout=_DEFAULT):
        """The oldest value, waiting up to ``timeout`` seconds (default: the
        queue's ``timeout``; None waits as long as it takes) for one to come;
        :class:`~xlac.errors.FeedTimeoutError` when none does (at once, as a
        :class:`~xlac.errors.FeedError`, when the module has no such feed)."""
        wait = self.timeout if timeout is _DEFAULT else timeout
        if not self.instructions and not self._items:
            raise FeedError(f"module {self.module_name} has no {self.kind}: no value will ever come")
        return self._take(lambda value: None, wait, self._nothing_came)

    def get_nowait(self):
        return self.get(timeout=0)

    def _nothing_came(self, timeout) -> FeedTimeoutError:
        names = ", ".join(str(i) for i in self.instructions) or f"it has no {self.kind}"
        return FeedTimeoutError(f"{self.kind} of module {self.module_name}: no value came within "
                                f"{timeout} s (the module's {self.kind}s: {names})")

    def _take(self, check, timeout, nothing_came, cancellable: bool = False):
        """Pop the oldest value once ``check(value)`` has not raised on it (a
        value it refuses stays at the head); wait up to ``timeout`` seconds.
        ``cancellable``: stop with ``KeyboardInterrupt`` once Ctrl-C's flag is set."""
        deadline = None if timeout is None else time.monotonic() + max(0.0, float(timeout))
        with self._cond:
            while not self._items:
                if cancellable and interrupt.pending():
                    raise KeyboardInterrupt
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise nothing_came(timeout)
                step = left
                if cancellable:
                    step = _POLL if left is None else min(_POLL, left)
                self._cond.wait(step)
            check(self._items[0])
            return self._items.popleft()


class InfeedQueue(FeedQueue):
    """``exe.infeed``: values for the module's infeeds, oldest first."""

    kind = "infeed"

    def put(self, value) -> None:
        """Queue ``value`` for the next infeed that runs: an array or a tuple of
        arrays of one of the module's infeed data shapes (``TypeError`` for a
        wrong dtype or kind of value, ``ValueError`` for wrong dimensions,
        naming the infeed and its shape).  The value is copied."""
        self._append(self._checked(value))

    def _checked(self, value):
        shapes = list({str(i.shape): i for i in self.instructions}.values())
        if not shapes:
            raise ValueError(f"module {self.module_name} has no infeed: there is nothing to put values for")
        if len(shapes) == 1:
            return feeds.check_value(value, shapes[0].shape, f"exe.infeed.put: {shapes[0]}")
        errors = []
        for inst in shapes:
            try:
                return feeds.check_value(value, inst.shape, str(inst))
            except (TypeError, ValueError) as e:
                errors.append(e)
        kind = TypeError if all(isinstance(e, TypeError) for e in errors) else ValueError
        raise kind(f"exe.infeed.put: {feeds.describe(value)} fits none of the infeeds of module "
                   f"{self.module_name} ({'; '.join(str(e) for e in errors)})")

    def take_for(self, transfer: Transfer, data: Shape):
        """The value for one run of the infeed ``transfer`` names (a service call on
        its first leaf): waits, checks it fits ``data``, takes it off the queue."""
        what = feeds.label("infeed", transfer.label, data)

        def check(value):
            if not feeds.matches(value, data):
                raise FeedError(f"{what}: the next value in exe.infeed is {feeds.describe(value)}, "
                                "which does not fit (it stays in the queue)")

        def nothing_came(timeout):
            return FeedTimeoutError(f"{what}: no value came within {timeout} s (exe.infeed.put(...) "
                                    "supplies them; exe.infeed.timeout sets the wait)")

        main = threading.current_thread() is threading.main_thread()
        return self._take(check, self.timeout, nothing_came, cancellable=main)


class OutfeedQueue(FeedQueue):
    """``exe.outfeed``: the values the module's outfeeds wrote, oldest first."""

    kind = "outfeed"

    def put(self, value) -> None:
        """Queue ``value`` (the outfeed service does; so can ``xlac.evaluate(..., outfeed=exe.outfeed)``)."""
        self._append(value)


# ---------------------------------------------------------------------------------------
# The services
# ---------------------------------------------------------------------------------------

#: The C signature of xlac_infeed_fn / xlac_outfeed_fn, with the descriptor as an
#: address (its strings past the first NUL are read too).
_RAW_FEED = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_int64, c_void_p)


class _Descriptors:
    """Descriptors by address (the strings are constants of the loaded code),
    read once each: (transfer, leaf shape, data shape)."""

    def __init__(self):
        self._known: dict[int, tuple] = {}

    def __call__(self, address: int) -> tuple:
        hit = self._known.get(address)
        if hit is None:
            raw, at = [], address
            for _ in range(4):
                s = ctypes.string_at(at)
                raw.append(s)
                at += len(s) + 1
            t = feeds.parse_descriptor(b"\0".join(raw) + b"\0")
            hit = self._known[address] = (t, parse_shape(t.leaf_shape), parse_shape(t.data_shape))
        return hit


def _leaf_count(data: Shape) -> int:
    return len(data.tuple_shapes) if data.is_tuple else 1


def _write_leaf(buffer: int, nbytes: int, value: np.ndarray, shape: Shape, what: str) -> None:
    raw = to_buffer(value, shape)
    if raw.nbytes != nbytes:
        raise FeedError(f"{what}: the buffer has {nbytes} bytes, {shape} needs {raw.nbytes}")
    if nbytes:
        ctypes.memmove(buffer, raw.ctypes.data, nbytes)


def _read_leaf(buffer: int, nbytes: int, shape: Shape) -> np.ndarray:
    if nbytes == 0:
        return np.zeros(shape.dimensions, shape.dtype)
    raw = np.frombuffer(ctypes.string_at(buffer, nbytes), dtype=shape.dtype)
    return np.array(from_buffer(raw, shape), order="C", copy=True)


def _service(body, stop):
    """A ctypes feed callback running ``body(buffer, nbytes, descriptor address)``;
    an exception is recorded for the calling thread, ``stop()`` asks the call
    to stop (no later transfer of it may run), and the call reports a failure."""
    def service(runtime_ctx, buffer, nbytes, descriptor) -> int:
        try:
            body(buffer, nbytes, descriptor)
            return abi.XLAC_OK
        except BaseException as e:  # noqa: BLE001 - must not unwind through native frames
            record_error(e)
            try:
                if stop is not None:
                    stop()
            except BaseException:  # noqa: BLE001
                pass
            return abi.XLAC_ERROR_SERVICE_FAILED
    return _RAW_FEED(service)


def make_infeed_service(queue: InfeedQueue, stop=None):
    """The ``infeed`` service (an ``abi.INFEED``) reading from ``queue``; keep
    the returned pair ``(service, keep_alive)`` alive while code may call it.
    ``stop()`` is called on a failure, to stop the running call."""
    describe = _Descriptors()
    pending: dict[int, list] = {}        # thread -> the leaves still to hand out

    def body(buffer, nbytes, descriptor):
        t, leaf_shape, data = describe(descriptor)
        me = threading.get_ident()
        if t.leaf == 0:
            value = queue.take_for(t, data)
            leaves = list(value) if data.is_tuple else [value]
            pending[me] = leaves[1:]
            leaf = leaves[0]
        else:
            rest = pending.get(me)
            if not rest:
                raise FeedError(f"{feeds.label('infeed', t.label, data)}: leaf {t.leaf} asked for "
                                "before leaf 0")
            leaf = rest.pop(0)
        _write_leaf(buffer, nbytes, leaf, leaf_shape, feeds.label("infeed", t.label, data))

    callback = _service(body, stop)
    return ctypes.cast(callback, abi.INFEED), callback


def make_outfeed_service(queue: OutfeedQueue, stop=None):
    """The ``outfeed`` service (an ``abi.OUTFEED``) writing to ``queue``; keep
    the returned pair ``(service, keep_alive)`` alive while code may call it.
    ``stop()`` is called on a failure, to stop the running call."""
    describe = _Descriptors()
    pending: dict[int, list] = {}        # thread -> the leaves of the value so far

    def body(buffer, nbytes, descriptor):
        t, leaf_shape, data = describe(descriptor)
        me = threading.get_ident()
        parts = [] if t.leaf == 0 else pending.get(me, [])
        parts.append(_read_leaf(buffer, nbytes, leaf_shape))
        if len(parts) < _leaf_count(data):
            pending[me] = parts
            return
        pending.pop(me, None)
        queue.put(tuple(parts) if data.is_tuple else parts[0])

    callback = _service(body, stop)
    return ctypes.cast(callback, abi.OUTFEED), callback


def queues_for(module_name: str, instructions: list[FeedInstruction]) -> tuple[InfeedQueue, OutfeedQueue]:
    """The (infeed, outfeed) queues of a module with these feed instructions."""
    return (InfeedQueue(module_name, [i for i in instructions if i.opcode == "infeed"]),
            OutfeedQueue(module_name, [i for i in instructions if i.opcode == "outfeed"]))
