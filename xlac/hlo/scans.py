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


#: Reducers under which a reverse scan of integers (or pred) may run from the
#: end: exact, associative and commutative, so the bits are the window's.
_EXACT_REVERSIBLE = frozenset({"add", "multiply", "maximum", "minimum", "and", "or", "xor"})
#: Reducers under which a reverse scan of floats (complex: ``add`` and
#: ``multiply``) runs from the end: associative and commutative but for
#: rounding, which the order changes as XLA's tree does.
_FLOAT_REVERSIBLE = frozenset({"add", "multiply", "maximum", "minimum"})


def runs_sequentially(inst: HloInstruction) -> bool:
    """Whether the code generator runs the ``reduce-window`` ``inst`` as a scan:
    a forward scan (output ``i`` is the reducer of output ``i-1`` and ``x[i]``,
    exactly the window's fold), and a reverse scan of one operand, read from
    the end (output ``i`` is the reducer of ``x[i]`` and output ``i+1``), whose
    reducer is associative and commutative: for integers and pred exact
    (:data:`_EXACT_REVERSIBLE`: the window's bits), for floats and complex
    numbers the sum or product rounded in the other order (the same error
    bound as a forward scan's; XLA:CPU's tree reorders it too)."""
    scan = scan_of(inst)
    if scan is None:
        return False
    if scan[1]:
        return True
    if len(inst.operands) != 2:
        return False
    pt = inst.operands[0].shape.element_type
    op = inst.attrs["to_apply"].binary_root_opcode()
    if pt.is_integral or pt.is_pred:
        return op in _EXACT_REVERSIBLE
    if pt.is_complex:
        return op in ("add", "multiply")
    return pt.is_float and op in _FLOAT_REVERSIBLE
