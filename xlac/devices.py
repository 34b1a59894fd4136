"""Devices on one host: one worker process per device, collectives over shared memory.

A module runs on ``replica_count x num_partitions`` devices (XLA's counting:
global device id = ``replica * num_partitions + partition``).  A
:class:`DevicePool` of ``n`` devices is ``n`` worker processes, started once
(``spawn``: never a fork of a process that has threads) and reused, and one
shared-memory segment (``xlac.runtime.shm_transport``) through which their
collectives go.  Every worker runs the same compiled code: device 0 compiles
the module into the pool's disk cache (``XLAC_CACHE_DIR``, or a private
directory the pool removes at close), the others load the object from there.
That happens when the executable is made (``jit`` time), so a module that
does not compile raises then, the error keeping its type and message.

Each worker runs its executable as its device (``Executable.set_device``):
``opts->replica_id``/``partition_id`` and the ``collective`` service over the
segment.  Generated code calls the service natively, so a ``while`` loop with
an all-reduce inside runs with no Python per iteration beyond the service.
A worker's main thread reads the parent's messages from one socket (both
sides spin briefly before they sleep when the pool's processes fit the
CPUs: ``SPIN_S``); a thread of its own reads a second, control socket, so
the parent can stop a running call: a cancel naming the message sets the
flag the worker's code polls (``opts->cancel``, the worker's own: Ctrl-C's
is the parent's), and the call stops at its next check as a call stops for
Ctrl-C on one device.

Python custom-call targets (``xlac.register_custom_call`` with a callable,
the jax backend's host callbacks) run in this process, the one they were
registered in: each worker registers a stand-in that sends the call's
operands here (:func:`_python_targets` names them when the module is
loaded) and waits; this process calls the target while it waits for the
devices' answers, and sends its result back.  Several devices calling at
once are served one after the other, in the order they asked.

Failures: a worker whose call raises marks the segment failed (the others'
collectives then raise at once, naming it); a worker that dies (a crash,
``kill -9``) is noticed by the parent — its end of the socket reads as end
of file, or breaks when written to — which marks the segment the same way.
The call then fails with the first device's error (a
:class:`~xlac.errors.CollectiveError` for a death), naming the device and
keeping the error's type; calls still running elsewhere are cancelled.  A
pool whose devices all answered stays as it is; one with a device dead or
stopped is rebuilt on the next call.  A collective that some device never
reaches times out (``timeout`` seconds, default ``XLAC_COLLECTIVE_TIMEOUT``
or 10).

Ctrl-C (``KeyboardInterrupt`` in the parent while it waits) marks the segment
failed and cancels every device's call; the devices answer within
microseconds of their next check and the pool stays usable; a device that
has not answered within ``CANCEL_GRACE`` seconds (a compilation, one very
long kernel) is killed with the pool.  The workers run in a session of their
own, so the terminal's signals reach only this process.

Clean-up: the segment is unlinked when the pool closes (at exit at the
latest), and by multiprocessing's resource tracker if this process dies
first.  Should this process end without closing the pool (SIGTERM, ``kill
-9``, ``os._exit``), its workers see end of file, stop their calls, remove
the private cache directory and exit.
"""
from __future__ import annotations

import atexit
import ctypes
import importlib
import os
import pickle
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection, wait

import numpy as np

from . import custom_calls
from .errors import CollectiveError, UnsupportedError
from .executable import Executable
from .executable import jit as single_device_jit
from .hlo.collectives import check_device_counts
from .hlo.feeds import feed_instructions
from .hlo.parser import parse_hlo
from .hlo.source import module_text
from .hlo.sharding import parameter_shardings, result_sharding, stacked_shape
from .mpi import MpiExecutable, launched_by_mpiexec
from .passes.dynamic_padder import is_dynamic_module
from .passes.shard_map import partition_global_program
from .passes.spmd_partitioner import assemble_results, partition_module, split_arguments
from .program import as_module
from .runtime import disk_cache
from .runtime.collective_service import make_native_service
from .runtime.shm_arrays import Mailbox, MailboxReader, Placed
from .runtime.shm_transport import DEFAULT_SLOT_BYTES, DEFAULT_TIMEOUT, MAX_DEVICES as MAX_POOL_DEVICES, \
    Segment, ShmTransport

__all__ = ["DevicePool", "ReplicatedExecutable", "GlobalExecutable", "SpmdExecutable", "PartitionedExecutable", "jit",
           "pool", "close_pools", "device_counts_of"]


#: Seconds the devices get to answer once their calls are cancelled after a
#: Ctrl-C (a call stops at its next check of the cancel flag: a loop
#: iteration, a task, the end of a long kernel); a device still busy then (a
#: compilation, one very long kernel) is killed with the pool, which the next
#: call rebuilds.
CANCEL_GRACE = 0.5
#: How long a process of a pool whose processes fit the CPUs (the devices'
#: and this one) spins for the other side's message before it sleeps
#: (seconds).  A sleeping process's wake-up costs the writer tens of
#: microseconds on a VM: on the 2-core VM a call of an 8-element all-reduce
#: on one device takes 0.13-0.16 ms, 0.26-0.39 ms with both sides sleeping
#: (docs/devices.md).
SPIN_S = 200e-6


def _spin_for_any(connections, seconds: float) -> None:
    """Until one of ``connections`` can be read, or ``seconds`` have gone by."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for c in connections:
            if c.poll(0):
                return


def _fits_cpus(threads: int) -> bool:
    """Whether the devices' ``threads`` (all their processes') and their parent each have a CPU."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return threads + 1 <= cpus


class DevicePool:
    """``num_devices`` worker processes sharing one segment (see the module docstring).

    :meth:`load` compiles a module on every device, :meth:`run` runs it with
    per-device arguments and returns per-device results (lists of numpy
    arrays, in device order).
    """

    def __init__(self, num_devices: int, *, num_threads: int = 1, timeout: float = DEFAULT_TIMEOUT,
                 slot_bytes: int = DEFAULT_SLOT_BYTES):
        if num_devices < 1:
            raise ValueError(f"a device pool needs at least one device, got {num_devices}")
        if num_devices > MAX_POOL_DEVICES:      # before a process is started
            raise ValueError(f"a device pool on one host runs at most {MAX_POOL_DEVICES} devices (its "
                             f"collectives use 64-bit device masks), got {num_devices}; run more under mpiexec")
        self.num_devices = num_devices
        self.num_threads = num_threads
        self.timeout = timeout
        self.slot_bytes = slot_bytes
        self._lock = threading.Lock()
        self._private_cache = None
        # The runtime library's code (the native helpers, the GEMM library)
        # comes from this process's library cache: a private module cache
        # would otherwise be the workers' library cache too, and every new
        # pool built the library again (2.8 s before a first collective).
        self._library_dir = disk_cache.library_dir()
        self.cache_dir = disk_cache.cache_dir()
        if self.cache_dir is None:
            # Removed by close(), or by the workers should this process end
            # without closing the pool (a signal, os._exit): see _worker_main.
            self._private_cache = self.cache_dir = tempfile.mkdtemp(prefix="xlac-devices-")
        self._segment = None
        self._workers: list = []
        self._loaded: dict = {}      # text -> its number on the devices (a call names it, not its text)
        self._broken = False
        # A call's arguments and results, per device (xlac.runtime.shm_arrays),
        # and the arguments every device is given alike, once for all.
        self._arguments = [Mailbox("xlac_args") for _ in range(num_devices)]
        self._results = [Mailbox("xlac_results") for _ in range(num_devices)]
        self._common = Mailbox("xlac_common")
        self._spin = _fits_cpus(num_devices * num_threads)
        self._start()

    # -- workers ----------------------------------------------------------------------
    def _start(self) -> None:
        self._segment = Segment.create(self.num_devices, self.slot_bytes)
        self._workers = []
        self._broken = False
        owns_cache = "1" if self._private_cache is not None else "0"
        for d in range(self.num_devices):
            # A fresh interpreter running this module (not multiprocessing's
            # spawn, which would import the user's main script again), in a
            # session of its own: signals for the terminal's process group
            # (Ctrl-C, Ctrl-\) are this process's to handle; it stops the
            # workers' calls itself (_interrupt).
            # Two sockets: the messages, and the control (a call's "cancel").
            mine, theirs = socket.socketpair()
            control, their_control = socket.socketpair()
            proc = subprocess.Popen(
                [sys.executable, "-m", "xlac.devices", str(theirs.fileno()), str(their_control.fileno()),
                 self._segment.name, str(d), str(self.num_devices), self.cache_dir, str(self.num_threads),
                 repr(self.timeout), owns_cache, str(os.getpid())],
                pass_fds=(theirs.fileno(), their_control.fileno()), stdin=subprocess.DEVNULL,
                start_new_session=True, env={**os.environ, disk_cache.LIBRARY_ENV: self._library_dir or "off"})
            theirs.close()
            their_control.close()
            self._workers.append(_Worker(proc, Connection(mine.detach()), Connection(control.detach())))
        self._loaded = {}

    def _stop(self, grace: float = 2.0) -> None:
        """Stop the workers: the segment is marked failed (no collective holds a
        worker), every running call is cancelled and every worker asked to exit;
        those still alive ``grace`` seconds later (waited for together, not one
        after the other) are killed.  ``grace=0``: kill them now (a worker
        whose stream may be cut mid-message cannot be told anything)."""
        if self._segment is not None:
            self._segment.abort(self.num_devices, "the device pool is stopping")
        if grace > 0:
            for w in self._workers:
                try:
                    w.cancel()
                    w.conn.send(None)
                except (OSError, ValueError):
                    pass
        deadline = time.monotonic() + grace
        for w in self._workers:
            try:
                w.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                break
        for w in self._workers:
            if w.proc.poll() is None:
                w.proc.kill()
        for w in self._workers:
            w.proc.wait()
            w.conn.close()
            w.control.close()
        self._workers = []
        if self._segment is not None:
            self._segment.close()
            self._segment = None

    def close(self) -> None:
        """Stop the workers, unlink the segment, remove a private cache directory."""
        with self._lock:
            self._stop()
            for box in self._arguments + self._results + [self._common]:
                box.close()
            if self._private_cache is not None:
                shutil.rmtree(self._private_cache, ignore_errors=True)
                self._private_cache = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def _healthy(self) -> bool:
        """Every worker alive and in step (each has answered every message it
        was sent).  A call that failed on a device leaves the pool healthy: the
        segment is reset before the next call and the devices start their
        protocol state afresh."""
        return bool(self._workers) and not self._broken and all(w.proc.poll() is None for w in self._workers)

    # -- running ----------------------------------------------------------------------
    def run(self, text: str, per_device_args: list, *, replica_count: int, num_partitions: int = 1,
            keys: list | None = None) -> list:
        """Run HLO ``text`` on every device; ``per_device_args[d]`` are device
        ``d``'s arguments.  Returns ``[results of device d]`` (each a list of arrays,
        a tuple result flattened).  Raises the first device's error, naming it.
        ``keys[d]``: device ``d``'s arguments' keys (``Mailbox.put``: an
        immutable argument passed again at its place is not copied again)."""
        self._check_counts(replica_count, num_partitions)
        if len(per_device_args) != self.num_devices:
            raise ValueError(f"{len(per_device_args)} argument lists for {self.num_devices} devices")
        with self._lock:
            program = self._load(text, replica_count, num_partitions)
            self._segment.reset()
            common = _common_positions(per_device_args)
            shared = None
            if common:
                shared = (self._common.put([per_device_args[0][k] for k in common],
                                           [keys[0][k] for k in common] if keys else None), common)
            placed = [self._arguments[d].put(*_own(per_device_args[d], keys[d] if keys else None, common))
                      for d in range(self.num_devices)]
            try:
                replies = self._exchange(range(self.num_devices), lambda d: (
                    "run", program, replica_count, num_partitions, placed[d],
                    self._results[d].name, self._results[d].capacity, shared))
            except BaseException:
                for box in self._arguments + [self._common]:   # (a device stopped part-way: trust nothing)
                    box.forget()
                raise
            return [self._received(d, r) for d, r in enumerate(replies)]

    def _received(self, d: int, reply) -> list:
        """Device ``d``'s results: copied out of its result mailbox, or sent
        in the message when they did not fit it (then it grows for the next
        call)."""
        if isinstance(reply, Placed):
            return self._results[d].get(reply)
        self._results[d].reserve(sum(a.nbytes for a in reply if isinstance(a, np.ndarray)))
        return reply

    def warm_up(self, text: str, *, replica_count: int, num_partitions: int = 1) -> dict:
        """What :meth:`run` does before it runs: wait until every device
        process is up, then compile ``text`` on every device (device 0 into the
        pool's cache, then the others from it).  A module that does not compile
        raises here the very error (type, message) compiling it raises on one
        device.  Returns the seconds each step took, ``{"start-up": s,
        "compile": s}`` (0 for what was done before)."""
        self._check_counts(replica_count, num_partitions)
        with self._lock:
            t0 = time.perf_counter()
            if not self._healthy():
                self._stop(grace=0 if self._broken else 2.0)
                self._start()
            self._exchange(range(self.num_devices), lambda d: ("ping",))
            t1 = time.perf_counter()
            self._load(text, replica_count, num_partitions)
            return {"start-up": t1 - t0, "compile": time.perf_counter() - t1}

    def _check_counts(self, replica_count: int, num_partitions: int) -> None:
        if replica_count * num_partitions != self.num_devices:
            raise ValueError(f"the module runs on {replica_count} replicas x {num_partitions} partitions, "
                             f"this pool has {self.num_devices} devices")

    def _load(self, text: str, replica_count: int, num_partitions: int) -> int:
        """Rebuild the pool if it is not healthy; compile ``text`` on every device
        unless done.  Returns its number, which a call names instead of the text
        (a training step's text, a megabyte, took milliseconds a call to send)."""
        if not self._healthy():
            self._stop(grace=0 if self._broken else 2.0)
            self._start()
        program = self._loaded.get(text)
        if program is not None:
            return program
        program = len(self._loaded)
        targets = _python_targets(text)
        message = lambda d: ("load", text, replica_count, num_partitions, targets, program)   # noqa: E731
        # Device 0 compiles into the cache directory first; the others load it.
        # A compile error is the module's, not a device's: raised as it is.
        self._exchange([0], message, name_device=False)
        self._exchange(range(1, self.num_devices), message, name_device=False)
        self._loaded[text] = program
        return program

    def _exchange(self, devices, message, *, name_device: bool = True) -> list:
        """Send ``message(d)`` to each device and collect the replies.

        A worker found gone (its end of the socket broken or at end of file)
        is a CollectiveError naming the device, and the segment is marked
        failed so that the others' collectives fail at once.  Once a device
        has failed, the calls still running are cancelled; devices that have
        not answered ``timeout`` seconds later are stopped with the pool.
        Ctrl-C cancels every call (:meth:`_interrupt`).  Errors name the
        device (``name_device``) and keep their type."""
        devices = list(devices)
        pending: dict = {}           # connection -> device, for every message sent and not yet answered
        replies: dict = {}
        errors: dict = {}            # device -> error record (_error_record)
        try:
            for d in devices:
                worker = self._workers[d]
                try:
                    worker.send(message(d))
                except OSError:                    # BrokenPipeError...: the worker is gone
                    errors[d] = self._died(d)
                    break                          # the rest are not started
                pending[worker.conn] = d
        except BaseException:
            self._stop(grace=0)      # Ctrl-C part-way through a message: that stream is cut
            raise
        try:
            self._collect(pending, replies, errors)
        except KeyboardInterrupt:
            self._interrupt(pending)
            raise
        except BaseException:
            self._stop(grace=0)
            raise
        if errors:
            raise _first_error(errors, name_device)
        return [replies[d] for d in devices]

    def _collect(self, pending: dict, replies: dict, errors: dict) -> None:
        """Read every pending device's answer into ``replies`` or ``errors``."""
        deadline = None
        while pending:
            if errors and deadline is None:
                # A device failed: the others' collectives fail by themselves
                # (the segment says so); this also stops calls busy elsewhere.
                self._cancel(pending)
                deadline = time.monotonic() + self.timeout
            if deadline is not None and time.monotonic() > deadline:
                first = min(errors)
                for d in pending.values():
                    errors[d] = _error_record(CollectiveError(f"stopped: device {first} failed"), own=False)
                self._stop()
                return
            if self._spin:
                _spin_for_any(pending, SPIN_S)
            for r in wait(list(pending), timeout=0.5):
                d = pending[r]
                try:
                    status, payload = r.recv()
                    if status == "custom-call":           # a Python target, run here (see the docstring)
                        self._answer_custom_call(r, payload)
                        continue
                except (EOFError, OSError):        # a dead worker's end reads as end of file
                    errors[d] = self._died(d)
                except BaseException as e:
                    # Cut part-way (Ctrl-C) or unreadable: this stream is out of step.
                    self._broken = True
                    if not isinstance(e, Exception):
                        raise
                    errors[d] = _error_record(CollectiveError(
                        f"the answer of device {d} could not be read: {type(e).__name__}: {e}"), own=True)
                else:
                    if status == "ok":
                        replies[d] = payload
                    else:
                        errors[d] = payload
                del pending[r]

    @staticmethod
    def _answer_custom_call(conn, payload) -> None:
        """Call the Python target a device asked for (``(target, operands,
        keywords)``) and send it the result, or the error it raised."""
        target, operands, keywords = payload
        entry = custom_calls.lookup(target)
        try:
            if entry is None or entry.fn is None:
                raise UnsupportedError("custom-call", f"target {target!r} is no longer registered as a Python "
                                                      "callable in the calling process")
            answer = ("ok", entry.fn(*operands, **keywords))
        except Exception as e:  # noqa: BLE001 - the device's call fails with it
            answer = ("error", _error_record(e, own=True))
        conn.send(("custom-call-result",) + answer)

    def _cancel(self, pending: dict) -> None:
        """Stop the running calls of the ``pending`` devices (their cancel flag)."""
        for d in pending.values():
            try:
                self._workers[d].cancel()
            except (OSError, ValueError):
                pass

    def _interrupt(self, pending: dict) -> None:
        """Ctrl-C during an exchange: stop every pending call and read the
        answers (:meth:`_drain`), so that the pool stays in step and the next
        call uses it as it is.  A device that has not answered within
        ``CANCEL_GRACE`` seconds, or a stream cut mid-message, stops the whole
        pool at once (rebuilt on the next call)."""
        if self._broken or not self._drain(pending):
            self._stop(grace=0)

    def _drain(self, pending: dict) -> bool:
        """Mark the segment failed (no collective waits any longer), cancel the
        ``pending`` calls and drop their answers; whether all came in time."""
        try:
            self._segment.abort(self.num_devices, "the call was interrupted (KeyboardInterrupt)")
            self._cancel(pending)
            deadline = time.monotonic() + CANCEL_GRACE
            while pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                for r in wait(list(pending), timeout=left):
                    r.recv()
                    del pending[r]
            return True
        except BaseException:  # noqa: BLE001 - a worker gone, a second Ctrl-C: stop them all
            return False

    def _died(self, d: int) -> tuple:
        proc = self._workers[d].proc
        try:
            code = proc.wait(1)
        except subprocess.TimeoutExpired:
            code = None
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        message = f"the process of device {d} died ({how})"
        if self._segment is not None:
            self._segment.abort(d, message)
        return _error_record(CollectiveError(message), own=True)


class _Worker:
    """A device's process as the parent sees it: the process, the messages'
    socket, the control socket and how many messages were sent (a cancel
    names the message it stops: the worker counts them too)."""

    def __init__(self, proc, conn, control):
        self.proc, self.conn, self.control, self.sent = proc, conn, control, 0

    def send(self, message) -> None:
        self.conn.send(message)
        self.sent += 1

    def cancel(self) -> None:
        """Stop the call of the last message sent (its flag), however far the worker has got with it."""
        self.control.send(("cancel", self.sent))


# ---------------------------------------------------------------------------------------
# Errors across the process boundary: the type, the message and the attributes
# ---------------------------------------------------------------------------------------

#: Built-in exception types a device's error keeps (their message is their
#: first argument); any other type outside xlac becomes a RuntimeError
#: naming it.
_BUILTIN_ERRORS = {c.__name__: c for c in (ValueError, TypeError, MemoryError, RuntimeError, NotImplementedError,
                                           OverflowError, ZeroDivisionError, IndexError, ArithmeticError,
                                           FloatingPointError, AssertionError, RecursionError)}


def _error_record(e: BaseException, own: bool) -> tuple:
    """What the parent needs to raise ``e`` again: (module, class name,
    message, pickled attributes or None, whether the device failed by itself
    rather than echoing another device's failure)."""
    try:
        state = pickle.dumps(vars(e))       # HloParseError's line, notes (__notes__), ...
    except Exception:  # noqa: BLE001 - attributes that do not pickle are dropped
        state = None
    return (type(e).__module__, type(e).__qualname__, str(e), state, own)


def _raise_again(record: tuple, prefix: str = "") -> BaseException:
    """The exception ``record`` describes, of the same type (xlac's errors and
    the common built-in ones), its message prefixed with ``prefix``."""
    module, name, message, state, _ = record
    cls = _BUILTIN_ERRORS.get(name) if module == "builtins" else None
    if module.split(".")[0] == "xlac":
        try:
            cls = getattr(importlib.import_module(module), name, None)
        except ImportError:
            cls = None
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        return RuntimeError(f"{prefix}{name}: {message}")
    err = cls.__new__(cls)         # not __init__: UnsupportedError(what, detail) would reword the message
    err.args = (prefix + message,)
    if state is not None:
        try:
            vars(err).update(pickle.loads(state))
        except Exception:  # noqa: BLE001
            pass
    return err


def _first_error(errors: dict, name_device: bool = True) -> BaseException:
    """The error of the device that failed first (its own, not a peer's echo)."""
    own = [d for d, record in errors.items() if record[4]]
    d = min(own) if own else min(errors)
    return _raise_again(errors[d], f"device {d}: " if name_device else "")


# ---------------------------------------------------------------------------------------
# The worker process
# ---------------------------------------------------------------------------------------

class _Inbox:
    """A worker's two sockets from the parent.  Its messages are read by the
    main thread (spinning first, ``spin_s``, then sleeping: no thread
    switch per message, which costs tens of microseconds on a VM), also
    while a call waits for a Python target's result (:meth:`ask_parent`).
    The control socket is read by a thread of its own, so that the parent
    can reach a running call: ``("cancel", n)`` stops the call of message
    ``n`` (the messages are counted on both sides) by setting the flag its
    code polls (``opts->cancel``), however far the main thread has got with
    it, or before it starts; a cancel of a message already answered does
    nothing.  End of file on either — the parent is gone — stops the call,
    marks the segment failed (no device waits for this one) and ends the
    worker."""

    def __init__(self, conn, control, segment, device: int, spin_s: float = 0.0):
        self.conn, self.control, self.segment, self.device, self.spin_s = conn, control, segment, device, spin_s
        self.flag = (ctypes.c_int32 * 1)()
        self.lock = threading.Lock()     # guards the counts and the flag
        self.taken = 0                   # messages the main thread has taken
        self.cancelled = 0               # messages up to this number are cancelled
        self.later: list = []            # a message read while waiting for a target's result
        self.parent_gone = False
        self.thread = threading.Thread(target=self._watch, name="xlac-device-control", daemon=True)
        self.thread.start()

    def get(self):
        """The next message (None: stop); the flag says whether it is cancelled already."""
        msg = self.later.pop(0) if self.later else None
        while msg is None:
            if self.spin_s > 0:
                _spin_for_any((self.conn,), self.spin_s)
            msg = self._receive()
            if _is_result(msg):
                msg = None                # for a call already given up (cancelled)
        if msg is _STOP:
            return None
        with self.lock:
            self.taken += 1
            self.flag[0] = int(self.cancelled >= self.taken)
        return msg

    def stop_call(self) -> None:
        """Stop the running call (a collective failed on this device)."""
        self.flag[0] = 1

    def _receive(self):
        """One message: _STOP for the parent's None and at end of file (the
        parent is gone); an ``_Unreadable`` for one that cannot be read."""
        try:
            msg = self.conn.recv()
        except (EOFError, OSError):
            self._parent_gone()
            return _STOP
        except BaseException as e:  # noqa: BLE001 - answered, then the worker ends
            return _Unreadable(e)
        return _STOP if msg is None else msg

    def _parent_gone(self) -> None:
        self.parent_gone = True
        self.segment.abort(self.device, "the parent process is gone")
        self.flag[0] = 1

    def _watch(self) -> None:
        while True:
            try:
                _, n = self.control.recv()
            except (EOFError, OSError):
                self._parent_gone()
                return
            except Exception:  # noqa: BLE001 - cut short (the parent stops the pool): read no more
                return
            with self.lock:
                self.cancelled = max(self.cancelled, n)
                if self.taken == n:
                    self.flag[0] = 1

    def ask_parent(self, target: str, operands: tuple, keywords: dict):
        """Run the Python target ``target`` in the parent (see the module
        docstring) and return its result; raises the error it raised, or
        CollectiveError when the call is cancelled meanwhile."""
        self.conn.send(("custom-call", (target, operands, keywords)))
        while True:
            if self.flag[0]:
                raise CollectiveError("stopped: the call was cancelled")
            if not self.conn.poll(0.1):
                continue
            msg = self._receive()
            if not _is_result(msg):
                self.later.append(msg)    # the parent stops the pool (its None), or out of step
                self.flag[0] = 1
                continue
            status, value = msg[1:]
            if status == "ok":
                return value
            raise _raise_again(value)


def _is_result(msg) -> bool:
    """Whether ``msg`` is the parent's answer to a Python target (``ask_parent``)."""
    return type(msg) is tuple and msg[:1] == ("custom-call-result",)


def _same_memory(a, b) -> bool:
    """Whether arrays ``a`` and ``b`` are the same elements (views of one
    memory alike: what a broadcast global array gives every device)."""
    if a is b:
        return True
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
            and a.strides == b.strides and a.dtype == b.dtype)


def _common_positions(per_device_args: list) -> tuple:
    """The arguments every device is given alike (the same elements): they go
    into the pool's common block once, not into each device's.  (Devices
    only read their arguments: they are compiled with no donation.)"""
    if len(per_device_args) < 2:
        return ()
    first = per_device_args[0]
    return tuple(k for k, a in enumerate(first)
                 if isinstance(a, np.ndarray) and a.dtype.kind != "O" and a.nbytes > 0
                 and all(_same_memory(a, args[k]) for args in per_device_args[1:]))


def _own(args: list, keys, common: tuple) -> tuple:
    """(arrays, keys) of a device's own argument block: ``args`` less the common ones."""
    if not common:
        return args, keys
    skip = set(common)
    return ([a for k, a in enumerate(args) if k not in skip],
            [x for k, x in enumerate(keys) if k not in skip] if keys else None)


def _arguments(own: list, shared, common_reader: MailboxReader) -> list:
    """A device's arguments: its own block's, with the common block's at their places."""
    if shared is None:
        return own
    placed, positions = shared
    out, rest = [], iter(own)
    common = dict(zip(positions, common_reader.views(placed)))
    for k in range(len(own) + len(positions)):
        out.append(common[k] if k in common else next(rest))
    return out


def _python_targets(text: str) -> list:
    """The custom-call targets of HLO ``text`` registered here as Python
    callables: ``[(target, api_version)]``, stood in for on the devices."""
    found = []
    for target in sorted(set(re.findall(r'custom_call_target="([^"]+)"', text))):
        entry = custom_calls.lookup(target)
        if entry is not None and entry.fn is not None:
            found.append((target, entry.api_version))
    return found


def _stand_in(inbox: _Inbox, target: str):
    return lambda *operands, **keywords: inbox.ask_parent(target, operands, keywords)


#: What ``_Inbox`` reads as the end of messages: the parent's None, or end of file.
_STOP = object()


class _Unreadable:
    """A message the worker could not read: answered with the error, then the
    worker ends (its stream may be out of step; the parent rebuilds the pool)."""

    def __init__(self, error: BaseException):
        self.error = error


class _Cancelled(Exception):
    """The parent stopped this call (its results, if any, are dropped)."""


def _orphaned(parent: int, wait_s: float = 2.0) -> bool:
    """Whether this process's parent ``parent`` has ended: the kernel gives an
    orphan a new parent moments after the old one's sockets close."""
    deadline = time.monotonic() + wait_s
    while os.getppid() == parent:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _worker_main(conn, control, segment_name: str, device: int, num_devices: int, cache_dir: str,
                 num_threads: int, timeout: float, owns_cache: bool, parent: int) -> None:
    os.environ["XLAC_CACHE_DIR"] = cache_dir
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C is the parent's; it cancels our call

    segment = Segment.attach(segment_name)
    inbox = _Inbox(conn, control, segment, device, spin_s=SPIN_S if _fits_cpus(num_devices * num_threads) else 0.0)
    cancel = ctypes.addressof(inbox.flag)     # every executable's opts->cancel
    programs: dict = {}                       # the parent's number of a text -> its executable
    bound: dict = {}                          # number -> the (replicas, partitions, service) its executable runs with
    transport = None
    service = None
    arguments, results = MailboxReader(), MailboxReader()    # the parent's mailboxes of this device
    common = MailboxReader()                                  # and the one of every device

    def failed(message: str) -> None:
        segment.abort(device, message)
        inbox.stop_call()                 # stop the generated code at its next check

    while True:
        msg = inbox.get()
        if msg is None:
            break
        if type(msg) is tuple and msg[0] == "ping":      # DevicePool.warm_up: this process is up
            conn.send(("ok", None))
            continue
        try:
            if isinstance(msg, _Unreadable):
                raise msg.error
            if transport is None or transport.seg is not segment:
                transport = ShmTransport(segment, device, timeout=timeout)
                service = make_native_service(transport, device, num_devices, on_failure=failed)
            elif segment.controls[device, 0] < transport.round:
                # A reset segment (the next call) starts the rounds again; the
                # service stays bound to the transport (binding compiles code: ms).
                transport.restart()
            op, program, replicas, partitions = msg[:4]
            if op == "load":            # ("load", text, ..., targets, its number)
                text, program = program, msg[5]
                for target, api_version in msg[4]:
                    custom_calls.register_custom_call(target, _stand_in(inbox, target), api_version=api_version)
                programs[program] = Executable(text, num_threads=num_threads)     # (each text loaded once)
            exe = programs[program]
            if bound.get(program) != (replicas, partitions, service):    # (ctypes writes: ~10 us a call)
                exe.set_device(device // partitions, replicas, device % partitions, partitions, service, cancel)
                bound[program] = (replicas, partitions, service)
            if op == "load":
                conn.send(("ok", None))
                continue
            if inbox.flag[0]:
                raise _Cancelled()
            out = exe(*_arguments(arguments.views(msg[4]), msg[7], common))
            if inbox.flag[0]:             # the call stopped early: its results are not
                raise _Cancelled()
            leaves = list(out) if isinstance(out, tuple) else [out]
            placed = results.put(msg[5], msg[6], leaves) if msg[5] is not None else None
            conn.send(("ok", placed if placed is not None else leaves))
        except BaseException as e:  # noqa: BLE001 - report everything to the parent
            transport = None          # a failed call may have stopped mid-round: the next starts afresh
            if isinstance(e, _Cancelled):
                record = _error_record(CollectiveError("stopped: the call was cancelled"), own=False)
            else:
                # A CollectiveError echoes another device's failure (or names
                # the devices that never came); anything else is this device's own.
                own = not isinstance(e, CollectiveError)
                if own:
                    segment.abort(device, f"{type(e).__name__}: {e}")
                record = _error_record(e, own)
            try:
                conn.send(("error", record))
            except (OSError, ValueError):
                pass                   # the parent is gone: the inbox ends the loop
            if isinstance(msg, _Unreadable):
                break
    arguments.close()
    results.close()
    segment.close()
    if inbox.parent_gone and owns_cache and _orphaned(parent):
        # The parent ended without closing the pool (SIGTERM, kill -9,
        # os._exit): its private cache directory goes with its devices.
        shutil.rmtree(cache_dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# Per-replica executables: arguments and results with a leading device axis
# ---------------------------------------------------------------------------------------

class ReplicatedExecutable:
    """A module compiled for ``replica_count x num_partitions`` devices, run on
    the pool of that many devices.  As ``jax.pmap`` takes them, every argument
    and result carries a leading axis of one entry per device (in global device
    id order); a tuple result is a tuple of such arrays.

    The module is compiled when the executable is made (on the devices of
    the pool, started then if need be), so a module that does not compile
    raises here, with the error and message it raises on one device.  A call
    raises ``ValueError`` when an argument's leading axis is not the device
    count, and the first device's error (naming the device, keeping its type)
    when a device fails.
    """

    def __init__(self, text: str, num_replicas: int, num_partitions: int = 1, *, num_threads: int = 1,
                 timeout: float | None = None):
        check_device_counts(num_replicas, num_partitions, ("num_replicas", "num_partitions"))
        self.text = text
        self.num_replicas = num_replicas
        self.num_partitions = num_partitions
        self.num_devices = num_replicas * num_partitions
        self._options = {"num_threads": num_threads}
        if timeout is not None:
            self._options["timeout"] = timeout
        self._warm_up = pool(self.num_devices, **self._options).warm_up(
            text, replica_count=num_replicas, num_partitions=num_partitions)

    def __call__(self, *args):
        n = self.num_devices
        per_device = [[] for _ in range(n)]
        for k, a in enumerate(args):
            a = np.asarray(a)
            if a.ndim == 0 or a.shape[0] != n:
                raise ValueError(f"parameter {k}: expected a leading axis of {n} (one entry per device: "
                                 f"{self.num_replicas} replicas x {self.num_partitions} partitions), "
                                 f"got shape {a.shape}")
            for d in range(n):
                per_device[d].append(np.asarray(a[d], order="C"))   # (ascontiguousarray makes 0-d arrays 1-d)
        results = self.run_per_device(per_device)
        stacked = [np.stack([results[d][k] for d in range(n)]) for k in range(len(results[0]))]
        return stacked[0] if not self._tuple_result else tuple(stacked)

    def run_per_device(self, per_device: list, keys: list | None = None) -> list:
        """One call with the arguments of each device given apart:
        ``per_device[d]`` is device ``d``'s list of arrays (global device id
        order); returns each device's results (a list of arrays, a tuple
        result flattened).  What a PJRT client hands over and wants back;
        ``keys[d]``: device ``d``'s arguments' keys (``Pool.run``: its
        immutable buffers)."""
        return pool(self.num_devices, **self._options).run(self.text, per_device, replica_count=self.num_replicas,
                                                           num_partitions=self.num_partitions, keys=keys)

    def warm_up(self) -> dict:
        """What making this executable took, apart: ``{"start-up": s,
        "compile": s}``, the seconds spent starting the device processes (or
        checking they are up) and compiling the module on each."""
        return dict(self._warm_up)

    @property
    def argument_shapes(self) -> list:
        """Each parameter's shape with a leading axis of one entry per device."""
        return [stacked_shape(p.shape, self.num_devices) for p in self._module.entry.parameters]

    @property
    def _module(self):
        if not hasattr(self, "_parsed"):
            self._parsed = parse_hlo(self.text)
        return self._parsed

    @property
    def _tuple_result(self) -> bool:
        return self._module.entry.root.shape.is_tuple


class GlobalExecutable:
    """A global program with shardings (what ``jax.jit`` of a ``pmap`` or
    ``shard_map`` function lowers to), partitioned for its mesh
    (``xlac.passes.shard_map``) and run on that many devices: it takes and
    returns the *global* arrays, as ``jax.jit`` of the function does.  Every
    device receives the whole arguments, takes its tiles, and ends with the
    whole results."""

    def __init__(self, module, *, num_threads: int = 1, timeout: float | None = None):
        self.num_devices = module.replica_count * module.num_partitions
        _refuse_feeds(module, self.num_devices)
        self.text = module.to_text()
        self.argument_shapes = [p.shape for p in module.entry.parameters]     # the global arrays
        self._replicated = ReplicatedExecutable(self.text, module.replica_count, module.num_partitions,
                                                num_threads=num_threads, timeout=timeout)

    def __call__(self, *args):
        n = self.num_devices
        out = self._replicated(*[np.broadcast_to(np.asarray(a), (n,) + np.shape(a)) for a in args])
        return tuple(o[0] for o in out) if isinstance(out, tuple) else out[0]

    def run_per_device(self, per_device: list, keys: list | None = None) -> list:
        """Each device's results (a list per device, a tuple result
        flattened) from each device's global arguments (``per_device[d]``:
        the global arrays, or where the program takes them so, device ``d``'s
        own parts of unreduced ones): the same global arrays on every
        device, except a replicated result a ``shard_map`` body left
        different per device (``pmap(..., out_axes=None)`` of a varying
        value) and an unreduced one handed out in parts, which XLA leaves
        each device its own of.  ``keys``: see :meth:`ReplicatedExecutable.run_per_device`."""
        return self._replicated.run_per_device([[np.asarray(a, order="C") for a in args] for args in per_device],
                                               keys)

    def warm_up(self) -> dict:
        """See :meth:`ReplicatedExecutable.warm_up`."""
        return self._replicated.warm_up()


class PartitionedExecutable:
    """A global program with automatic shardings (``jax.jit`` with
    ``NamedSharding``s), partitioned into the per-device program
    (``xlac.passes.spmd_partitioner``) and run on that many devices: it takes
    and returns the *global* arrays, as ``jax.jit`` of the function does, but
    each device receives only its tiles of the arguments and computes only
    its tiles of the results, which are put back together here."""

    def __init__(self, module, signature, *, num_threads: int = 1, timeout: float | None = None):
        self.signature = signature
        self.num_devices = signature.num_devices
        self.module = module
        self.text = module.to_text()
        self.argument_shapes = [shape for _, shape in signature.params]
        self._replicated = ReplicatedExecutable(self.text, 1, self.num_devices, num_threads=num_threads,
                                                timeout=timeout)

    def __call__(self, *args):
        per_device = split_arguments(self.signature, args, contiguous=False)   # (copied into the argument blocks)
        return assemble_results(self.signature, self._replicated.run_per_device(per_device))

    def run_per_device(self, per_device: list, keys: list | None = None) -> list:
        """One call with each device's tiles given apart (``per_device[d]``,
        padded as :func:`~xlac.passes.spmd_partitioner.split_arguments` cuts
        them); returns each device's result tiles.  What a PJRT client with
        the arrays already on its devices hands over (``keys``: see
        :meth:`ReplicatedExecutable.run_per_device`)."""
        return self._replicated.run_per_device(per_device, keys)

    def warm_up(self) -> dict:
        """See :meth:`ReplicatedExecutable.warm_up`."""
        return self._replicated.warm_up()


def device_counts_of(x) -> tuple[int, int]:
    """(replica_count, num_partitions) a module, or HLO or StableHLO text, says
    (1, 1 when silent)."""
    if isinstance(x, str):
        header = x.lstrip().split("\n", 1)[0]
        if not header.startswith("HloModule"):
            # StableHLO says it in module attributes (jax.pmap's mhlo.num_replicas):
            # read by the importer, which checks them.
            if "mhlo.num_replicas" in x or "mhlo.num_partitions" in x:
                return device_counts_of(as_module(x))
            return 1, 1
        counts = dict(re.findall(r"\b(replica_count|num_partitions)\s*=\s*(\d+)", header))
        return int(counts.get("replica_count", 1)), int(counts.get("num_partitions", 1))
    module = getattr(x, "module", x)
    return int(getattr(module, "replica_count", 1) or 1), int(getattr(module, "num_partitions", 1) or 1)


class SpmdExecutable:
    """XLA's partitioned per-device program (``num_partitions`` > 1, the
    parameters annotated ``sharding={devices=[...]...}`` with their local
    shapes: what ``jax.jit(...).lower(...).compile().as_text()`` prints), run on
    that many devices from the *global* arguments: each device takes its tile
    of each argument as the parameter's sharding says.  Results are put back
    together by the root's sharding when it has one; otherwise every result
    has a leading axis of one entry per device (the module does not say how
    its tiles make the global value)."""

    def __init__(self, module, shardings: list, *, num_threads: int = 1, timeout: float | None = None):
        self.num_devices = module.replica_count * module.num_partitions
        self.shardings = shardings
        # The global arrays a call takes, of which each device gets its tile.
        self.argument_shapes = [s.global_shape(p.shape) for p, s in zip(module.entry.parameters, shardings)]
        self.result_sharding = result_sharding(module)
        self._replicated = ReplicatedExecutable(module.to_text(), module.replica_count, module.num_partitions,
                                                num_threads=num_threads, timeout=timeout)

    def __call__(self, *args):
        n = self.num_devices
        if len(args) != len(self.shardings):
            raise TypeError(f"expected {len(self.shardings)} arguments, got {len(args)}")
        stacked = [np.stack([s.tile(np.asarray(a), d) for d in range(n)]) for a, s in zip(args, self.shardings)]
        out = self._replicated(*stacked)
        if self.result_sharding is not None:
            return self.result_sharding.assemble([out[d] for d in range(n)])
        return out

    def warm_up(self) -> dict:
        """See :meth:`ReplicatedExecutable.warm_up`."""
        return self._replicated.warm_up()


def _may_be_global_program(x) -> bool:
    """Cheap test before parsing: jax's global programs carry a Shardy mesh,
    or (the GSPMD form) tiled shardings."""
    if isinstance(x, str):     # HLO's module attribute, or StableHLO's sdy.mesh op
        return "xla.sdy.meshes" in x[:4096] or "sdy.mesh @" in x[:65536] or \
            ("sharding={devices=" in x and "num_partitions=" not in x[:4096]) or 'mhlo.sharding = "{devices=' in x
    module = getattr(x, "module", x)
    if not isinstance(getattr(module, "attrs", None), dict):
        return False
    return "frontend_attributes" in module.attrs or ("num_partitions" not in module.attrs and any(
        "devices=" in str(p.attrs.get("sharding", "")) for p in module.entry.parameters))


def jit(x, *, num_threads: int | None = None, donate_argnums=(), optimize: bool = True,
        num_replicas: int | None = None):
    """``xlac.jit``: an :class:`~xlac.executable.Executable` for a module on one
    device; for a module on several devices (its ``replica_count`` x
    ``num_partitions``, or ``num_replicas=`` for a builder computation) a
    :class:`ReplicatedExecutable`, whose arguments and results carry a leading
    device axis; under ``mpiexec``, an :class:`~xlac.mpi.MpiExecutable` (this
    rank is one device).  See ``xlac.executable.jit`` for the other arguments.
    ``x`` may also be the path of an HLO text file."""
    x = module_text(x)
    if launched_by_mpiexec() > 1:
        # Under mpiexec every rank is one device (xlac.mpi).
        return MpiExecutable(x, num_threads=num_threads, optimize=optimize)
    if _may_be_global_program(x):
        module = as_module(x)
        signature = partition_module(module)
        if signature is not None:
            _refuse_feeds(module, signature.num_devices)
            return PartitionedExecutable(module, signature, num_threads=num_threads or 1)
        if partition_global_program(module):
            if module.replica_count * module.num_partitions == 1:
                # A mesh of one device: the program as it is, in this process.
                return single_device_jit(module, num_threads=num_threads, donate_argnums=donate_argnums,
                                         optimize=optimize)
            return GlobalExecutable(module, num_threads=num_threads or 1)
    replicas, partitions = device_counts_of(x)
    if num_replicas is not None:
        replicas, partitions = check_device_counts(num_replicas, partitions, ("num_replicas", "num_partitions"))
    if replicas * partitions == 1:
        return single_device_jit(x, num_threads=num_threads, donate_argnums=donate_argnums, optimize=optimize)
    module = as_module(x)
    if is_dynamic_module(module):
        raise UnsupportedError("dynamic shapes on several devices",
                               f"module {module.name} runs on {replicas * partitions} devices")
    _refuse_feeds(module, replicas * partitions)
    shardings = parameter_shardings(module) if num_replicas is None else None
    if shardings is not None:
        return SpmdExecutable(module, shardings, num_threads=num_threads or 1)
    module.replica_count = replicas
    return ReplicatedExecutable(module.to_text(), replicas, partitions, num_threads=num_threads or 1)


def _refuse_feeds(module, devices: int) -> None:
    """Infeed and outfeed are served on one device (``exe.infeed``/``exe.outfeed``)."""
    found = feed_instructions(module)
    if found:
        raise UnsupportedError(found[0].opcode, f"instruction {found[0].name} in a module run on {devices} "
                                                "devices: infeed and outfeed work on one device")


# ---------------------------------------------------------------------------------------
# Pools by device count
# ---------------------------------------------------------------------------------------

_pools: dict = {}
_pools_lock = threading.Lock()


def pool(num_devices: int, **options) -> DevicePool:
    """The process-wide pool of ``num_devices`` devices (started on first use)."""
    with _pools_lock:
        p = _pools.get(num_devices)
        if p is None:
            p = _pools[num_devices] = DevicePool(num_devices, **options)
        return p


def close_pools() -> None:
    """Stop every pool's workers and unlink their segments (also run at exit)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for p in pools:
        p.close()


atexit.register(close_pools)


if __name__ == "__main__":       # a device process (DevicePool._start)
    _fd, _control, _name, _device, _n, _cache, _threads, _timeout, _owns, _parent = sys.argv[1:11]
    _worker_main(Connection(int(_fd)), Connection(int(_control)), _name, int(_device), int(_n), _cache,
                 int(_threads), float(_timeout), _owns == "1", int(_parent))
