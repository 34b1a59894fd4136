"""The multi-device reference evaluator: every device of a module, in one process.

``evaluate_replicated(module, per_device_args, num_replicas=None,
num_partitions=None, timeout=...)`` runs the module once per device of
``num_replicas x num_partitions`` (global device id ``replica *
num_partitions + partition``, as everywhere in xlac), each on a Python thread
of its own with the numpy evaluator (``xlac.evaluator``), and returns the
per-device results in device order.  ``per_device_args[d]`` holds device
``d``'s entry arguments.  The counts default to the module header's
``replica_count=`` / ``num_partitions=``; without them, to one partition and
one replica per argument list.

The devices meet at their collectives (all-reduce, all-gather, reduce-scatter,
all-to-all, collective-permute and the -start forms): the k-th time a device
reaches a collective with a given group of devices, it waits until every
member of the group has reached its k-th collective with that group, checks
they all reached the same one (the same opcode, and the same ``channel_id``
— or the same instruction when there is none), then each takes the values it
needs (``xlac.evaluator``'s rules say which: the spec's semantics).  Sends are
buffered until the matching recv-done (the k-th send from device s to device t
on a channel meets the k-th recv at t from s on that channel).

Nothing hangs: devices that reach different collectives, a device that
finishes or fails while others wait for it, and a state where every device is
waiting and none can go on raise :class:`CollectiveError` at once, naming
every device and where it stands; a wait longer than ``timeout`` seconds (a
device busy elsewhere) raises it too.  An exception on one device stops the
others (at their next collective or while-loop iteration) and is re-raised,
with a note naming the device.  Ctrl-C stops every device.

Layers: this module is part of the evaluator layer (it imports the evaluator,
``xlac.hlo``, ``xlac.shape`` and ``xlac.errors`` only).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from .evaluator import (CollectiveError, Device, _as_module, _check_argument, _copy_out, evaluate_computation,
                        running_as)
from .hlo import collectives
from .hlo.verifier import check_call_graph

__all__ = ["evaluate_replicated", "CollectiveError", "DEFAULT_TIMEOUT"]

#: Seconds a device waits at a collective for the others before the run fails.
DEFAULT_TIMEOUT = 300.0


def evaluate_replicated(module, per_device_args, num_replicas: int | None = None,
                        num_partitions: int | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> list:
    """Run ``module`` (XlaComputation, HloModule or HLO text) on every one of its
    devices, device ``d`` on ``per_device_args[d]``; returns the list of the
    devices' results (numpy arrays, or tuples for tuple results).

    ``TypeError``/``ValueError`` for a wrong number of argument lists or
    arguments (naming the device and the parameter), device counts that
    disagree with each other or with the module; :class:`CollectiveError` when
    the devices do not meet at the same collectives; any error of a device's
    evaluation, re-raised with a note naming the device.
    """
    module = _as_module(module)
    check_call_graph(module)
    if isinstance(per_device_args, (str, bytes)) or not hasattr(per_device_args, "__len__"):
        raise TypeError(f"evaluate_replicated: per_device_args must be a list of argument lists, one per "
                        f"device, got {type(per_device_args).__name__}")
    replicas, partitions = _device_counts(module, len(per_device_args), num_replicas, num_partitions)
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"evaluate_replicated: timeout must be a positive number of seconds, got {timeout!r}")
    n = replicas * partitions
    entry = module.entry
    params = entry.parameters
    values = []
    for d, args in enumerate(per_device_args):
        who = f"device {d} (replica {d // partitions}, partition {d % partitions})"
        if isinstance(args, (str, bytes)) or not isinstance(args, (list, tuple)):
            raise TypeError(f"evaluate_replicated: the arguments of {who} must be a list or tuple, got "
                            f"{type(args).__name__}")
        if len(args) != len(params):
            want = ", ".join(f"{p.parameter_number}: {p.name} {p.shape}" for p in params)
            raise TypeError(f"{module.name} takes {len(params)} argument(s) ({want}), {who} got {len(args)}")
        try:
            values.append([_check_argument(p, p.shape, a) for p, a in zip(params, args)])
        except (TypeError, ValueError) as e:
            raise type(e)(f"{who}: {e}") from None

    rendezvous = _Rendezvous(n, float(timeout))
    results: list = [None] * n

    def run(d: int) -> None:
        device = _ThreadDevice(d, replicas, partitions, rendezvous)
        try:
            with running_as(device):
                results[d] = _copy_out(evaluate_computation(entry, values[d]))
        except _Abandoned:
            rendezvous.finished(d, failed=True)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            if not isinstance(e, CollectiveError):
                e.add_note(f"on {device} of {replicas} replica(s) x {partitions} partition(s) "
                           "(xlac.evaluate_replicated)")
            rendezvous.fail(d, e)
        else:
            rendezvous.finished(d)

    threads = [threading.Thread(target=run, args=(d,), name=f"xlac-device-{d}", daemon=True)
               for d in range(n)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.05)
    except KeyboardInterrupt:
        rendezvous.abandon(KeyboardInterrupt())
        for t in threads:
            t.join(1.0)
        raise
    if rendezvous.error is not None:
        raise rendezvous.error
    return results


def _device_counts(module, count: int, num_replicas, num_partitions) -> tuple:
    """(replicas, partitions) from the arguments, the module header and the number of argument lists."""
    header_r, header_p = collectives.device_counts(module)
    given = {"replica_count": num_replicas, "num_partitions": num_partitions}
    counts = {}
    for key, value, header in (("replica_count", num_replicas, header_r), ("num_partitions", num_partitions,
                                                                             header_p)):
        if value is not None:
            name = "num_replicas" if key == "replica_count" else "num_partitions"
            try:
                value = collectives.check_device_count(name, value)
            except collectives.DeviceGroupError as e:
                raise ValueError(f"evaluate_replicated: {e}") from None
            if key in module.attrs and value != header:
                raise ValueError(f"evaluate_replicated: {key} is {value} here but {header} in the header of "
                                 f"module {module.name}")
            counts[key] = value
        elif key in module.attrs:
            counts[key] = header
    r, p = counts.get("replica_count"), counts.get("num_partitions")
    if count < 1:
        raise ValueError("evaluate_replicated: per_device_args is empty; it needs one argument list per device")
    if r is None and p is None:
        r, p = count, 1
    elif r is None:
        r = count // p if count % p == 0 else None
    elif p is None:
        p = count // r if count % r == 0 else None
    if r is None or p is None or r * p != count:
        shown = f"{r if r is not None else '?'} replica(s) x {p if p is not None else '?'} partition(s)"
        source = ", ".join(f"{k}={v}" for k, v in given.items() if v is not None) or "counts from the header"
        raise ValueError(f"evaluate_replicated: {count} argument list(s) for {shown} of module {module.name} "
                         f"({source}); give one argument list per device")
    try:                        # counts made from the number of argument lists: one thread per device
        return collectives.check_device_counts(r, p, ("num_replicas", "num_partitions"))
    except collectives.DeviceGroupError as e:
        raise ValueError(f"evaluate_replicated: {e}") from None


# ----------------------------------------------------------------------------
# The rendezvous
# ----------------------------------------------------------------------------

class _Abandoned(Exception):
    """This device stops because the run failed elsewhere (the caller gets that error)."""


@dataclass
class _Meeting:
    """The k-th collective of a group of devices: who has arrived, with what."""

    group: tuple
    arrived: dict = field(default_factory=dict)     # device -> (instruction, value)
    taken: int = 0


def _label(inst) -> str:
    channel = inst.attrs.get("channel_id")
    where = f" in {inst.parent.name}" if getattr(inst, "parent", None) is not None else ""
    return f"{inst.opcode} {inst.name}{where}" + (f" (channel_id={channel})" if channel is not None else "")


def _signature(inst) -> tuple:
    """What must agree between the devices of a meeting: the opcode and the
    channel, or the instruction itself when it has no channel."""
    channel = inst.attrs.get("channel_id")
    return (inst.opcode, ("channel", int(str(channel))) if channel is not None else ("instruction", id(inst)))


class _Rendezvous:
    """Where the devices' threads meet; every field is guarded by ``cond``."""

    def __init__(self, num_devices: int, timeout: float):
        self.num_devices, self.timeout = num_devices, timeout
        self.cond = threading.Condition()
        self.meetings: dict = {}                # (group, k) -> _Meeting
        self.mail: dict = {}                    # (channel, source, target, k) -> value
        self.state = ["running"] * num_devices  # running, waiting, done, failed
        self.waits: list = [None] * num_devices  # (description, ready) of a waiting device
        self.error: BaseException | None = None

    # -- what the devices call ----------------------------------------------------------
    def exchange(self, device: "_ThreadDevice", inst, group: tuple, value) -> list:
        me = device.device_id
        with self.cond:
            self._check_running()
            key = (group, device.next_in_sequence(("meeting", group)))
            meeting = self.meetings.setdefault(key, _Meeting(group))
            meeting.arrived[me] = (inst, value)
            self.cond.notify_all()

            def describe() -> str:
                missing = [d for d in group if d not in meeting.arrived]
                return (f"waits at {_label(inst)} for devices {missing} (its group is "
                        f"{{{','.join(map(str, group))}}})")
            self._wait(me, describe, lambda: len(meeting.arrived) == len(group))
            first = meeting.arrived[group[0]][0]
            if any(_signature(meeting.arrived[d][0]) != _signature(first) for d in group):
                at = "; ".join(f"device {d} at {_label(meeting.arrived[d][0])}" for d in group)
                self._end(CollectiveError(
                    f"the devices of group {{{','.join(map(str, group))}}} reached different collectives "
                    f"(collective number {key[1]} of the group): {at}"))
            values = [meeting.arrived[d][1] for d in group]
            meeting.taken += 1
            if meeting.taken == len(group):
                del self.meetings[key]
            return values

    def post(self, device: "_ThreadDevice", inst, key: tuple, value) -> None:
        with self.cond:
            self._check_running()
            self.mail[key] = value
            self.cond.notify_all()

    def fetch(self, device: "_ThreadDevice", inst, key: tuple):
        channel, source, target, k = key
        with self.cond:
            self._check_running()
            self._wait(device.device_id,
                       lambda: f"waits at {_label(inst)} for send number {k} of device {source} on channel {channel}",
                       lambda: key in self.mail)
            return self.mail.pop(key)

    def poll(self) -> None:
        if self.error is not None:
            raise _Abandoned()

    def finished(self, device: int, failed: bool = False) -> None:
        with self.cond:
            self.state[device] = "failed" if failed else "done"
            self.cond.notify_all()

    def fail(self, device: int, error: BaseException) -> None:
        with self.cond:
            self.state[device] = "failed"
            if self.error is None:
                self.error = error
            self.cond.notify_all()

    def abandon(self, error: BaseException) -> None:
        with self.cond:
            if self.error is None:
                self.error = error
            self.cond.notify_all()

    # -- inside the lock ----------------------------------------------------------------
    def _check_running(self) -> None:
        if self.error is not None:
            raise _Abandoned()

    def _end(self, error: BaseException):
        """Fail the run with ``error`` (unless it failed already) and raise it here."""
        if self.error is None:
            self.error = error
        self.cond.notify_all()
        raise _Abandoned()

    def _wait(self, me: int, describe, ready) -> None:
        if ready():
            return
        deadline = time.monotonic() + self.timeout
        self.state[me], self.waits[me] = "waiting", (describe, ready)
        try:
            while not ready():
                self._check_running()
                if self._stuck():
                    self._end(CollectiveError("the devices cannot go on, every one waits for another: "
                                              + self._where_everyone_is()))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._end(CollectiveError(
                        f"timed out after {self.timeout:g} s: device {me} {describe()}; "
                        + self._where_everyone_is()))
                self.cond.wait(remaining)
        finally:
            self.state[me], self.waits[me] = "running", None

    def _stuck(self) -> bool:
        """No device runs, and no waiting device can go on."""
        for d, state in enumerate(self.state):
            if state == "running":
                return False
            if state == "waiting" and self.waits[d][1]():
                return False
        return True

    def _where_everyone_is(self) -> str:
        out = []
        for d, state in enumerate(self.state):
            if state == "waiting":
                out.append(f"device {d} {self.waits[d][0]()}")
            elif state == "done":
                out.append(f"device {d} has finished")
            elif state == "failed":
                out.append(f"device {d} has failed")
            else:
                out.append(f"device {d} is running (not at a collective)")
        return "; ".join(out)


class _ThreadDevice(Device):
    """A device of :func:`evaluate_replicated`: exchanges through the rendezvous."""

    def __init__(self, device_id: int, num_replicas: int, num_partitions: int, rendezvous: _Rendezvous):
        super().__init__(device_id, num_replicas, num_partitions)
        self.rendezvous = rendezvous

    def exchange(self, inst, group: tuple, value) -> list:
        return self.rendezvous.exchange(self, inst, tuple(group), value)

    def post(self, inst, key: tuple, value) -> None:
        self.rendezvous.post(self, inst, key, value)

    def fetch(self, inst, key: tuple):
        return self.rendezvous.fetch(self, inst, key)

    def poll(self) -> None:
        self.rendezvous.poll()
