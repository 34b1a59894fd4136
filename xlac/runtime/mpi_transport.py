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
mpi4py is an optional dependency (``pip install 'xlac[mpi]'``, which brings
the ``mpich`` wheel too); :func:`mpi` imports it with a clear error.
"""
from __future__ import annotations

import os

import numpy as np

from ..errors import CollectiveError
from .shm_transport import REDUCTIONS

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

    def __init__(self, comm, device: int | None = None):
        self.MPI = mpi()
        self.comm = comm
        self.device = comm.Get_rank() if device is None else device
        self._subs: dict = {}

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
        if dtype.kind not in "biufc" or dtype.itemsize < 1 or dtype.name in ("float16", "bfloat16"):
            return None
        if dtype.kind == "c" and reduction in ("min", "max"):
            return None
        logical = dtype.kind == "b"
        return {"sum": M.LOR if logical else M.SUM, "product": M.LAND if logical else M.PROD,
                "min": M.LAND if logical else M.MIN, "max": M.LOR if logical else M.MAX,
                "and": M.LAND if logical else M.BAND, "or": M.LOR if logical else M.BOR}.get(reduction)

    def _reduce_here(self, x: np.ndarray, reduction: str, sub, n: int) -> np.ndarray:
        """Every member's ``x`` gathered, reduced with numpy in group order."""
        everything = np.empty((n,) + x.shape, x.dtype)
        sub.Allgather([_bytes(np.ascontiguousarray(x)), self.MPI.BYTE], [_bytes(everything), self.MPI.BYTE])
        acc = everything[0].copy()
        for k in range(1, n):
            REDUCTIONS[reduction](acc, everything[k], out=acc)
        return acc

    def all_reduce(self, x, out, reduction, group, what="all-reduce"):
        sub = self._sub(tuple(group))
        op = self._op(reduction, x.dtype)
        if op is None:
            out[...] = self._reduce_here(x, reduction, sub, len(group))
        else:
            sub.Allreduce(x, out, op)

    def all_gather(self, x, out, group, what="all-gather"):
        sub = self._sub(tuple(group))
        if out.nbytes != x.nbytes * len(group):
            raise CollectiveError(f"{what}: output of {out.nbytes} bytes for {len(group)} inputs of {x.nbytes}")
        sub.Allgather([_bytes(x), self.MPI.BYTE], [_bytes(out), self.MPI.BYTE])

    def reduce_scatter(self, x, out, reduction, group, what="reduce-scatter"):
        sub = self._sub(tuple(group))
        n = len(group)
        op = self._op(reduction, x.dtype)
        if op is None:
            total = self._reduce_here(x, reduction, sub, n).reshape(n, -1)
            out.reshape(-1)[...] = total[group.index(self.device)]
        else:
            sub.Reduce_scatter_block(x, out, op)

    def all_to_all(self, x, out, group, what="all-to-all"):
        sub = self._sub(tuple(group))
        sub.Alltoall([_bytes(x), self.MPI.BYTE], [_bytes(out), self.MPI.BYTE])

    def permute(self, x, out, pairs, what="collective-permute"):
        src = _bytes(np.ascontiguousarray(x))
        requests = [self.comm.Isend([src, self.MPI.BYTE], dest=t, tag=7) for s, t in pairs if s == self.device]
        source = next((s for s, t in pairs if t == self.device), None)
        if source is None:
            out[...] = 0
        else:
            self.comm.Recv([_bytes(out), self.MPI.BYTE], source=source, tag=7)
        self.MPI.Request.Waitall(requests)
