"""Running a multi-device module under ``mpiexec``: one rank per device.

``mpiexec -n N python -m xlac run MODULE.hlo --inputs IN.npz --out OUT.npz``
(or a user script calling ``xlac.jit``) runs device ``d`` of the module in
rank ``d`` of ``MPI.COMM_WORLD``, on hosts the MPI launcher chooses (a
hostfile: ``mpiexec -f hosts -n 8 ...``).  The module is compiled on every
rank (from ``XLAC_CACHE_DIR`` when it is shared), and its collectives go
through ``xlac.runtime.mpi_transport`` (MPI_Allreduce, ...), called natively
from the generated code through ``opts->collective``.

The calling convention is the one device processes on one host have
(``xlac.devices``): every argument of a per-replica module has a leading
axis of one entry per device; every rank passes the whole arrays and takes
its own entry, and every rank gets the whole results (``MPI_Allgather``).
jax's global programs (``pmap``/``shard_map``) take and return the global
arrays on every rank; XLA's partitioned per-device programs take the global
arguments (each rank its tile, as the parameters' shardings say) and return
the results as the device processes do.  A module that does not say
its device count runs on the ``N`` ranks.  An error on one rank is printed
on stderr, naming the rank, and ends the job (``MPI_Abort``): the others are
waiting in collectives that will never complete.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from .errors import error_line
from .executable import Executable
from .hlo.sharding import parameter_shardings, result_sharding, stacked_shape
from .passes.shard_map import partition_global_program
from .passes.spmd_partitioner import assemble_results, partition_module, split_arguments
from .program import as_module
from .runtime.collective_service import make_service
from .runtime.mpi_transport import MpiTransport, launched_by_mpiexec, mpi
from .runtime.threads import default_num_threads

__all__ = ["MpiExecutable", "launched_by_mpiexec"]


_services: dict = {}


def _service(comm):
    """The collective service of this rank in ``comm``, one per process: its
    transport makes each group's sub-communicator once for every executable."""
    key = id(comm)
    if key not in _services:
        rank = comm.Get_rank()
        _services[key] = make_service(MpiTransport(comm, rank), rank, comm.Get_size())
    return _services[key]


class MpiExecutable:
    """A module run by this rank as its device, the other devices being the
    other ranks (see the module docstring).  ``rank`` and ``size`` are this
    process's place in ``MPI.COMM_WORLD``."""

    def __init__(self, x, *, num_threads: int | None = None, optimize: bool = True):
        MPI = mpi()
        self.comm = MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        module = as_module(x)
        # jax's automatically sharded program (NamedShardings): partitioned,
        # each rank takes its tiles of the global arguments, the results are
        # put together from every rank's.
        self.signature = partition_module(module)
        # jax's global program (pmap / shard_map): every rank takes the whole
        # arguments and ends with the whole results.
        self.global_program = self.signature is None and partition_global_program(module)
        # XLA's partitioned per-device program: each rank takes its tile of
        # every global argument as the parameter's sharding says.
        self.shardings = None if self.global_program or self.signature else parameter_shardings(module)
        self.result_sharding = result_sharding(module) if self.shardings else None
        devices = module.replica_count * module.num_partitions
        if devices == 1:
            module.replica_count = devices = self.size
        if devices != self.size:
            raise ValueError(f"{module.name} runs on {module.replica_count} replica(s) x {module.num_partitions} "
                             f"partition(s) = {devices} devices, but mpiexec started {self.size} rank(s)")
        self.num_replicas, self.num_partitions = module.replica_count, module.num_partitions
        self.argument_shapes = self._argument_shapes(module)
        if num_threads is None:
            # Ranks on one host share its cores (MPICH and Open MPI say how many there are).
            local = int(os.environ.get("MPI_LOCALNRANKS") or os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE") or 1)
            num_threads = max(1, default_num_threads() // max(1, local))
        self._exe = self._guard(lambda: Executable(module, optimize, num_threads=num_threads))
        self._service = _service(self.comm)
        p = self.num_partitions
        self._exe.set_device(self.rank // p, self.num_replicas, self.rank % p, p, self._service)

    def _argument_shapes(self, module) -> list:
        """What a call takes: the global arrays (a global or partitioned
        program), else each parameter with a leading axis of one entry per rank."""
        params = module.entry.parameters
        if self.signature is not None:
            return [shape for _, shape in self.signature.params]
        if self.global_program:
            return [p.shape for p in params]
        if self.shardings is not None:
            return [s.global_shape(p.shape) for p, s in zip(params, self.shardings)]
        return [stacked_shape(p.shape, self.size) for p in params]

    def _guard(self, fn):
        """``fn()``, or the error on stderr naming the rank and the whole job aborted."""
        try:
            return fn()
        except BaseException as e:  # noqa: BLE001 - the other ranks must not hang
            sys.stderr.write(error_line(f"rank {self.rank} of {self.size}: {type(e).__name__}: {e}") + "\n")
            sys.stderr.flush()
            # The launcher forwards output asynchronously and drops what is
            # still in flight when MPI_Abort kills the job: give it a moment.
            time.sleep(0.5)
            self.comm.Abort(1)
            raise

    def __call__(self, *args):
        def run():
            if self.global_program:
                return self._exe(*[np.asarray(a) for a in args])
            mine = split_arguments(self.signature, args, [self.rank])[0] if self.signature else self._mine(args)
            out = self._exe(*mine)
            leaves = list(out) if isinstance(out, tuple) else [out]
            gathered = []
            for leaf in leaves:
                leaf = np.asarray(leaf, order="C")
                whole = np.empty((self.size,) + leaf.shape, leaf.dtype)
                self.comm.Allgather([leaf.reshape(-1).view(np.uint8), mpi().BYTE],
                                    [whole.reshape(-1).view(np.uint8), mpi().BYTE])
                gathered.append(whole)
            if self.signature is not None:
                return assemble_results(self.signature, [[g[d] for g in gathered] for d in range(self.size)])
            if self.result_sharding is not None:
                return self.result_sharding.assemble(list(gathered[0]))
            return gathered[0] if not isinstance(out, tuple) else tuple(gathered)
        return self._guard(run)

    def _mine(self, args) -> list:
        """This rank's arguments: its tile of each global argument (a
        partitioned program), else its entry of each argument's device axis."""
        if self.shardings is not None:
            if len(args) != len(self.shardings):
                raise TypeError(f"expected {len(self.shardings)} arguments, got {len(args)}")
            return [np.asarray(s.tile(np.asarray(a), self.rank), order="C") for a, s in zip(args, self.shardings)]
        mine = []
        for k, a in enumerate(args):
            a = np.asarray(a)
            if a.ndim == 0 or a.shape[0] != self.size:
                raise ValueError(f"parameter {k}: expected a leading axis of {self.size} (one entry per "
                                 f"device), got shape {a.shape}")
            mine.append(np.asarray(a[self.rank], order="C"))   # (ascontiguousarray makes 0-d arrays 1-d)
        return mine
