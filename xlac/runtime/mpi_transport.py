"""Collectives across hosts over MPI (mpi4py), with the shared-memory transport's interface.

Device ``d`` is rank ``d`` of the communicator (``MPI.COMM_WORLD`` under
``mpiexec``).  A replica group becomes a sub-communicator made once, by its
members only (``MPI_Comm_create_group``), and kept: every member of a group
has seen the same groups before, so all of them find it made or make it
together.  Each collective is the MPI call HPC codes use for it:

* all-reduce: ``MPI_Allreduce`` (sum, product, min, max; and/or logical for
  pred, bitwise for integers);
* all-gather: ``MPI_Allgather`` of bytes, in group order;
* reduce-scatter: ``MPI_Reduce_scatter_block``;
* all-to-all: ``MPI_Alltoall`` of bytes;
* collective-permute: ``MPI_Isend`` to each target and ``MPI_Recv`` from the
  source (zeros where there is none).

Types MPI does not reduce (f16, bf16; min/max of complex numbers are not
valid HLO anyway) are gathered and reduced here with numpy, in group order.

Every call is the nonblocking form (``MPI_Iallreduce``, ...) waited for with
a deadline (``timeout``, 10 s by default; ``XLAC_COLLECTIVE_TIMEOUT``), so a
device that never comes — it failed, died, or runs another sequence of
collectives — is a :class:`CollectiveError` naming the collective, the
device and the group, never a hang.  Before the data moves, the members
compare the *signature* of the collective each is at (its instruction, kind,
channel, type and size: one small ``MPI_Iallreduce`` of ``(s, -s)`` with
``MPI_MAX``, equal only when every member has the same ``s``), so a device
running a different collective is reported, not mixed into the data.
mpi4py is an optional dependency (``pip install 'xlac[mpi]'``, which brings
the ``mpich`` wheel too); :func:`mpi` imports it with a clear error.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..errors import CollectiveError
from .shm_transport import DEFAULT_TIMEOUT, REDUCTIONS, signature

__all__ = ["MpiTransport", "mpi", "launched_by_mpiexec"]


def mpi():
    """The ``mpi4py.MPI`` module; ``ImportError`` naming the extra when absent."""
    try:
        from mpi4py import MPI
    except ImportError:
        raise ImportError("running under MPI needs mpi4py: pip install 'xlac[mpi]' "
                          "(mpi4py and the mpich wheel)") from None
    return MPI


def launched_by_mpiexec() -> int:
    """The world size ``mpiexec`` (MPICH's hydra or Open MPI) started this
    process with, from its environment (0 when not launched by one)."""
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS"):
        value = os.environ.get(var)
        if value and value.isdigit():
            return int(value)
    return 0


def _bytes(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1).view(np.uint8)


class MpiTransport:
    """The collectives of device ``device`` (= rank) of ``comm``; buffers are
    contiguous numpy arrays, ``group`` the ordered device ids taking part."""

    def __init__(self, comm, device: int | None = None, timeout: float = DEFAULT_TIMEOUT):
        self.MPI = mpi()
        self.comm = comm
        self.device = comm.Get_rank() if device is None else device
        self.timeout = timeout
        self._subs: dict = {}

    # -- waiting and checking ---------------------------------------------------------
    def _wait(self, requests: list, what: str, group) -> None:
        """Wait for ``requests``: spin on ``MPI_Testall``, then sleep in short
        steps; CollectiveError after ``timeout`` seconds."""
        test = self.MPI.Request.Testall
        spins = 0
        deadline = None
        while not test(requests):
            spins += 1
            if spins < 1000:
                continue
            now = time.monotonic()
            if deadline is None:
                deadline = now + self.timeout
            elif now > deadline:
                raise CollectiveError(
                    f"{what}: not complete within {self.timeout:g} s on device {self.device}: a device of "
                    f"group {list(group)} did not reach it (it failed, or runs another sequence of collectives)")
            time.sleep(0 if spins < 10000 else 50e-6)

    def _meet(self, comm, group, what: str, *parts) -> None:
        """Check that every member of ``comm`` is at the same collective."""
        sig = signature(what, *parts)
        mine = np.array([sig, -sig], np.int64)
        top = np.empty(2, np.int64)
        self._wait([comm.Iallreduce(mine, top, self.MPI.MAX)], what, group)
        if top[0] != -top[1]:
            raise CollectiveError(f"{what}: a device of group {list(group)} is running a different collective at "
                                  f"this point (mismatched sequence of collectives; device {self.device} is at "
                                  f"{what})")

    def _start(self, group, what: str, *parts):
        """The sub-communicator of ``group``, once its members agree on the collective."""
        sub = self._sub(tuple(group))
        self._meet(sub, group, what, *parts)
        return sub

    def _sub(self, group: tuple):
        sub = self._subs.get(group)
        if sub is None:
            world = self.comm.Get_group()
            members = world.Incl(list(group))
            sub = self._subs[group] = self.comm.Create_group(members)
            members.Free()
            world.Free()
        return sub

    def _op(self, reduction: str, dtype: np.dtype):
        """The MPI reduction for ``reduction`` over ``dtype``, or None (reduce here)."""
        M = self.MPI
        if dtype.isbuiltin != 1 or dtype.kind not in "biufc" or dtype.name == "float16":
            return None                 # MPI has no f16, bf16, f8 or s4: reduced here
        if dtype.kind == "c" and reduction in ("min", "max"):
            return None
        logical = dtype.kind == "b"
        return {"sum": M.LOR if logical else M.SUM, "product": M.LAND if logical else M.PROD,
                "min": M.LAND if logical else M.MIN, "max": M.LOR if logical else M.MAX,
                "and": M.LAND if logical else M.BAND, "or": M.LOR if logical else M.BOR}.get(reduction)

    def _reduce_here(self, x: np.ndarray, reduction: str, sub, group, what: str) -> np.ndarray:
        """Every member's ``x`` gathered, reduced with numpy in group order."""
        n = len(group)
        everything = np.empty((n,) + x.shape, x.dtype)
        self._wait([sub.Iallgather([_bytes(np.ascontiguousarray(x)), self.MPI.BYTE],
                                   [_bytes(everything), self.MPI.BYTE])], what, group)
        acc = everything[0].copy()
        for k in range(1, n):
            REDUCTIONS[reduction](acc, everything[k], out=acc)
        return acc

    # -- collectives ------------------------------------------------------------------
    def all_reduce(self, x, out, reduction, group, what="all-reduce"):
        sub = self._start(group, what, "all-reduce", reduction, x.dtype, x.nbytes)
        op = self._op(reduction, x.dtype)
        if op is None:
            out[...] = self._reduce_here(x, reduction, sub, group, what)
        else:
            self._wait([sub.Iallreduce(x, out, op)], what, group)

    def all_gather(self, x, out, group, what="all-gather"):
        if out.nbytes != x.nbytes * len(group):
            raise CollectiveError(f"{what}: output of {out.nbytes} bytes for {len(group)} inputs of {x.nbytes}")
        sub = self._start(group, what, "all-gather", x.nbytes)
        self._wait([sub.Iallgather([_bytes(x), self.MPI.BYTE], [_bytes(out), self.MPI.BYTE])], what, group)

    def reduce_scatter(self, x, out, reduction, group, what="reduce-scatter"):
        sub = self._start(group, what, "reduce-scatter", reduction, x.dtype, x.nbytes)
        n = len(group)
        op = self._op(reduction, x.dtype)
        if op is None:
            total = self._reduce_here(x, reduction, sub, group, what).reshape(n, -1)
            out.reshape(-1)[...] = total[group.index(self.device)]
        else:
            self._wait([sub.Ireduce_scatter_block(x, out, op)], what, group)

    def all_to_all(self, x, out, group, what="all-to-all"):
        sub = self._start(group, what, "all-to-all", x.nbytes)
        self._wait([sub.Ialltoall([_bytes(x), self.MPI.BYTE], [_bytes(out), self.MPI.BYTE])], what, group)

    def permute(self, x, out, pairs, what="collective-permute"):
        everyone = range(self.comm.Get_size())
        self._meet(self.comm, everyone, what, "collective-permute", sorted(pairs), x.nbytes)
        src = _bytes(np.ascontiguousarray(x))
        requests = [self.comm.Isend([src, self.MPI.BYTE], dest=t, tag=7) for s, t in pairs if s == self.device]
        source = next((s for s, t in pairs if t == self.device), None)
        if source is None:
            out[...] = 0
        else:
            requests.append(self.comm.Irecv([_bytes(out), self.MPI.BYTE], source=source, tag=7))
        self._wait(requests, what, everyone)
