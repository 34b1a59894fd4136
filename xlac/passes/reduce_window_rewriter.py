"""Scans written as reduce-windows (``jnp.cumsum``, ``cumprod``, ``cummax``,
``cummin``, ``logcumsumexp``'s parts) as a tree: XLA's ReduceWindowRewriter,
registered in ``op-expander``'s table by ``expanders.py``.

jax lowers a cumulative reduction along a dimension of length L to a
``reduce-window`` whose window covers the whole dimension, padded by L-1 on
one side (``window={size=L pad=L-1_0}``): computed as written that is L
operations per element, quadratic (65,536 elements: 2^32 additions).  A scan
longer than :data:`BASE` becomes, along its dimension moved last and padded to
a multiple K of BASE with the reducer's identity:

1. the reshape ``[..., K/BASE, BASE]`` scanned along its last dimension (a
   reduce-window of BASE: inclusive scans of each row);
2. each row's total (its last element; the first for a reverse scan) scanned
   across the rows (a reduce-window of K/BASE, itself rewritten when longer
   than BASE) and shifted by one row (an exclusive scan: the total of the
   rows before);
3. the two combined with the reducer, reshaped back, the padding sliced off.

That is about BASE/2 operations per element per level and log_BASE(L)
levels, in independent rows.  XLA:CPU's base is 128; xlac's reduce-window
kernel pays for each window position it visits, and 16 measured fastest
(65,536 elements: 0.12 ms at 16, 0.9 ms at 32, 5.7 ms at 128; XLA:CPU's
cumsum 1.8 ms).  It applies to a
single-operand reduce-window of an ``add``, ``multiply``, ``maximum``,
``minimum``, ``and`` or ``or`` reducer whose init value is that operation's
identity (as jax's are), with one non-trivial window dimension, stride 1 and
no dilation; anything else stays as written.
"""
from __future__ import annotations

import numpy as np

from ..hlo.ir import HloInstruction
from ..hlo.window import Window, WindowDimension, format_window, window_of
from ..shape import Shape
from .rewriter import PatternRewriter, PatternSet

__all__ = ["register", "BASE", "scan_of", "runs_sequentially"]

#: The length of the rows scanned in full (see the module docstring).
BASE = 16

_REDUCERS = ("add", "multiply", "maximum", "minimum", "and", "or")


def _reducer_op(inst: HloInstruction) -> str | None:
    """The elementwise opcode of ``inst``'s reducer, if it is one of ours applied to
    its two parameters."""
    op = inst.attrs["to_apply"].binary_root_opcode()
    return op if op in _REDUCERS else None


def _identity(op: str, dtype: np.dtype):
    """The identity of ``op`` in ``dtype`` (None: it has none we rewrite with)."""
    if op in ("add", "or"):
        return np.zeros((), dtype)
    if op in ("multiply", "and"):
        return np.ones((), dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array(info.min if op == "maximum" else info.max, dtype)
    if dtype.kind == "b":
        return None
    inf = np.array(np.inf, dtype)              # floats, bf16 and the f8 types alike
    return -inf if op == "maximum" else inf


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


#: Reducers under which a reverse scan of integers may run from the end.
_EXACT_REVERSIBLE = ("add", "multiply", "maximum", "minimum", "and", "or", "xor")


def runs_sequentially(inst: HloInstruction) -> bool:
    """Whether the code generator runs the scan ``inst`` as one (the
    ``reduce-window.scan`` kernel), so it is not rewritten: a forward scan
    (output ``i`` is the reducer of output ``i-1`` and ``x[i]``, exactly the
    window's fold), and a reverse scan of one integer or pred operand whose
    reducer is exact, associative and commutative (read from the end: the
    reducer of ``x[i]`` and output ``i+1``)."""
    scan = scan_of(inst)
    if scan is None:
        return False
    if scan[1]:
        return True
    pt = inst.operands[0].shape.element_type
    return len(inst.operands) == 2 and (pt.is_integral or pt.is_pred) and \
        inst.attrs["to_apply"].binary_root_opcode() in _EXACT_REVERSIBLE


def reduce_window_scan(inst: HloInstruction, rw: PatternRewriter) -> bool:
    if len(inst.operands) != 2 or inst.shape.is_tuple:
        return False
    scan = scan_of(inst)
    op = _reducer_op(inst)
    x, init = inst.operands
    if scan is None or op is None or init.opcode != "constant" or runs_sequentially(inst):
        return False
    d, forward = scan
    n = x.shape.dimensions[d]
    if window_of(inst.attrs)[d].size != n or n <= BASE:
        return False
    identity = _identity(op, x.shape.dtype)
    if identity is None or not np.array_equal(np.asarray(init.literal), identity):
        return False
    return rw.replace(inst, _Tree(rw, inst, op).scan(x, d, n, forward))


class _Tree:
    """Instructions of the rewrite, shapes in ``inst``'s element type."""

    def __init__(self, rw: PatternRewriter, inst: HloInstruction, op: str):
        self.rw, self.inst, self.op = rw, inst, op
        self.et = inst.shape.element_type
        self.init = inst.operands[1]

    def new(self, opcode: str, dims: tuple, operands: list, attrs: dict | None = None) -> HloInstruction:
        return self.rw.create(opcode, Shape(self.et, tuple(dims)), operands, attrs)

    def window(self, x: HloInstruction, size: int, forward: bool) -> HloInstruction:
        """An inclusive scan of ``x`` along its last dimension (``size`` long)."""
        rank = x.shape.rank
        dims = [WindowDimension(1)] * (rank - 1)
        pad = (size - 1, 0) if forward else (0, size - 1)
        dims.append(WindowDimension(size, padding_low=pad[0], padding_high=pad[1]))
        return self.new("reduce-window", x.shape.dimensions, [x, self.init],
                        {"window": format_window(Window(tuple(dims))), "to_apply": self.inst.attrs["to_apply"]})

    def slice_last(self, x: HloInstruction, start: int, stop: int) -> HloInstruction:
        dims = x.shape.dimensions
        spec = tuple((0, k, 1) for k in dims[:-1]) + ((start, stop, 1),)
        return self.new("slice", dims[:-1] + (stop - start,), [x], {"slice": spec})

    def pad_last(self, x: HloInstruction, low: int, high: int) -> HloInstruction:
        dims = x.shape.dimensions
        spec = tuple((0, 0, 0) for _ in dims[:-1]) + ((low, high, 0),)
        return self.new("pad", dims[:-1] + (dims[-1] + low + high,), [x, self.init], {"padding": spec})

    def scan(self, x: HloInstruction, d: int, n: int, forward: bool) -> HloInstruction:
        rank = x.shape.rank
        perm = tuple(k for k in range(rank) if k != d) + (d,)
        moved = x if d == rank - 1 else \
            self.new("transpose", tuple(x.shape.dimensions[k] for k in perm), [x], {"dimensions": perm})
        batch = moved.shape.dimensions[:-1]
        rows = -(-n // BASE)
        padded = self.pad_last(moved, 0, rows * BASE - n) if rows * BASE != n else moved
        tiled = self.new("reshape", batch + (rows, BASE), [padded])
        inner = self.window(tiled, BASE, forward)                            # 1. rows scanned
        edge = (BASE - 1, BASE) if forward else (0, 1)
        totals = self.new("reshape", batch + (rows,), [self.slice_last(inner, *edge)])
        across = self.window(totals, rows, forward)                          # 2. rows' totals scanned
        before = self.slice_last(self.pad_last(across, 1, 0), 0, rows) if forward else \
            self.slice_last(self.pad_last(across, 0, 1), 1, rows + 1)        # ... of the rows before
        spread = self.new("broadcast", batch + (rows, BASE), [before], {"dimensions": tuple(range(rank))})
        joined = self.new(self.op, batch + (rows, BASE), [inner, spread])    # 3. combined
        flat = self.new("reshape", batch + (rows * BASE,), [joined])
        out = self.slice_last(flat, 0, n) if rows * BASE != n else flat
        if d == rank - 1:
            return out
        back = tuple(perm.index(k) for k in range(rank))
        return self.new("transpose", x.shape.dimensions, [out], {"dimensions": back})


def register(patterns: PatternSet) -> None:
    """Add the tree rewrite of scan reduce-windows to ``patterns``."""
    patterns.register("reduce-window")(reduce_window_scan)
