"""Kernels and elemental generators for the opcodes that are not plain
elementwise loops, and :func:`register_all`, the one place that says which
kernel candidates each opcode has, in the order they are tried
(``codegen/kernel_choice.py``), and which opcodes have elemental generators
defined here.  Importing a module registers nothing.
"""
from __future__ import annotations

from .. import elemental
from ..kernel_choice import KernelRegistry
from . import (block_copy, cholesky_blocked, collectives, control_flow, conv_amx, conv_gemm, convolution, custom_call, dot,
               dynamic_slice, feeds, fft, gather, lapack, linalg, loop, lu_blocked, map_op, pad, reduce, rng, scan, scatter, sort,
               transpose, triangular_solve_blocked, windows)

#: Elemental generators defined in this package (the elementwise ones and the
#: data-movement ones live in ``elemental.py`` itself).
GENERATORS = {
    "convolution": convolution.convolution_generator,
    "dynamic-slice": dynamic_slice.dynamic_slice_generator,
    "gather": gather.gather_generator,
    "map": map_op.map_generator,
    "reduce-window": windows.reduce_window_generator,
}


def register_all(registry: KernelRegistry | None = None) -> KernelRegistry:
    """Fill ``registry`` (a new one by default) with every kernel candidate,
    register this package's elemental generators, and return the registry."""
    r = KernelRegistry() if registry is None else registry
    for opcode, generator in GENERATORS.items():
        elemental.register_generator(opcode, generator)
    # Control flow and ops that update a buffer or need scratch: one kernel each.
    r.add("call", control_flow.CALL)
    r.add("conditional", control_flow.CONDITIONAL)
    r.add("while", control_flow.WHILE)
    r.add("dynamic-update-slice", block_copy.DYNAMIC_UPDATE_SLICE, dynamic_slice.DYNAMIC_UPDATE_SLICE)
    r.add(("scatter", "fusion:kInput:scatter"), scatter.SCATTER)
    r.add("select-and-scatter", windows.SELECT_AND_SCATTER)
    r.add("reduce-window", scan.SCAN)
    r.add("sort", sort.SORT)
    r.add("topk", sort.TOPK)
    r.add("fft", fft.FFT, fft.FFT_BLUESTEIN)
    r.add("cholesky", cholesky_blocked.CHOLESKY_BLOCKED)
    r.add("cholesky", linalg.CHOLESKY)
    r.add("triangular-solve", triangular_solve_blocked.TRIANGULAR_SOLVE_BLOCKED)
    r.add("triangular-solve", linalg.TRIANGULAR_SOLVE)
    # What the run options say: the device, and the collectives between devices.
    r.add("replica-id", collectives.REPLICA_ID)
    r.add("partition-id", collectives.PARTITION_ID)
    # The generator state of rng (a variable of the program's code).
    r.add("rng-get-and-update-state", rng.RNG_GET_AND_UPDATE_STATE)
    r.add(("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute"),
          collectives.COLLECTIVES)
    # The host's streams: opts->infeed and opts->outfeed.
    r.add("infeed", feeds.INFEED)
    r.add("outfeed", feeds.OUTFEED)
    # Custom calls: jax's LAPACK targets call LAPACK (a big getrf: the native blocked LU);
    # the rest go to the caller's service.
    r.add("custom-call", lu_blocked.GETRF_BLOCKED, lapack.LAPACK, custom_call.SERVICE_CALL)
    # Contractions: GEMM kernels first, the elemental loop when they decline.
    r.add("dot", *dot.CANDIDATES)
    r.add("convolution", *conv_amx.CANDIDATES, *conv_gemm.CANDIDATES)
    r.add("fusion:kOutput", *conv_amx.CANDIDATES, *conv_gemm.CANDIDATES, *dot.CANDIDATES)
    # Memory-order changes and reductions the plain loop runs badly.
    r.add("slice", block_copy.SLICE)
    r.add("concatenate", block_copy.CONCATENATE)
    r.add(("transpose", "copy"), transpose.BLOCKS)
    r.add(("reduce", "fusion:kInput"), reduce.COLUMN, reduce.SPLIT)
    r.add(("pad", "fusion:kLoop:pad"), pad.PHASED)
    # Everything else, and whatever the candidates above decline.
    r.add_fallback(loop.LOOP)
    return r


__all__ = ["GENERATORS", "register_all"]
