"""Scans written as reduce-windows: which ``reduce-window`` is one, and which
the code generator runs as one (``codegen/kernels/scan.py``).

jax lowers a cumulative reduction along a dimension of length L (``cumsum``,
``cumprod``, ``cummax``, ``cummin``, ``cumlogsumexp``) to a ``reduce-window``
whose window covers the whole dimension, padded by L-1 on one side
(``window={size=L pad=L-1_0}``; padded after for ``reverse=True``, and in the
gradient of a forward one).  Computed as written that is L reducer
applications per element, quadratic; as a scan it is one.  XLA:CPU rewrites
such windows into a tree of short ones (its ``ReduceWindowRewriter``, base
128: about 64 operations per element per level); xlac runs them as scans.
"""
from __future__ import annotations

from .ir import HloInstruction
from .window import window_of

__all__ = ["scan_of", "runs_sequentially"]


def scan_of(inst: HloInstruction) -> tuple[int, bool] | None:
    """``(dimension, forward)`` when the ``reduce-window`` ``inst`` is a scan: one
    dimension whose window, at least as long as the dimension, is padded by the
    window's length minus one on one side (before: forward), with stride 1, no
    dilation and no reversal, every other dimension's window one element with no
    padding; else None."""
    window = window_of(inst.attrs)
    dims = inst.operands[0].shape.dimensions
    if any(w.stride != 1 or w.base_dilation != 1 or w.window_dilation != 1 or w.window_reversal
           for w in window):
        return None
    scans = [d for d, w in enumerate(window) if w.size != 1 or w.padding_low or w.padding_high]
    if len(scans) != 1:
        return None
    d = scans[0]
    w = window[d]
    if w.size < dims[d]:
        return None
    if (w.padding_low, w.padding_high) == (w.size - 1, 0):
        return d, True
    if (w.padding_low, w.padding_high) == (0, w.size - 1):
        return d, False
    return None


def runs_sequentially(inst: HloInstruction) -> bool:
    """Whether the code generator runs the ``reduce-window`` ``inst`` as a scan:
    every scan.  A forward one folds each window exactly as written (output
    ``i`` is the reducer of output ``i-1`` and ``x[i]``); a reverse one is
    read from the end (output ``i`` is the reducer of ``x[i]`` and output
    ``i+1``, the operands kept in the window's order), which is the window's
    fold where the spec's conditions hold: the reducer associative and the
    init value its identity (spec: Reduce; "the evaluation order of the
    reduction function is arbitrary", ReduceWindow).  Integer and pred sums,
    products, maxima and minima keep the window's bits; a float sum or product
    is rounded in the other order (XLA:CPU's tree of short windows reorders it
    too)."""
    return scan_of(inst) is not None
