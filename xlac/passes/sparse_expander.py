"""jaxlib's ``cpu_csr_sparse_dense_ffi`` custom call, expanded into HLO.

``bcsr @ x`` (``jax.experimental.sparse``: a BCSR matrix of ``rows x cols``
times a dense vector ``[cols]`` or matrix ``[cols, n]``) lowers on the CPU to a
kernel of jaxlib's own, Eigen's row-major sparse product: row ``i`` of the
result is the sum, over the entries ``k`` in ``indptr[i] <= k < indptr[i+1]``,
of ``data[k] * rhs[indices[k]]``, in the order of ``k``.  xlac computes it as
XLA's expanders compute what a back end lacks, in HLO, with no loop over the
rows:

* the row of every entry, a prefix sum over the entries of the row ends
  ``indptr[1:]`` marked by a scatter (``indptr`` is non-decreasing, as BCSR
  requires; the prefix sum is a scan, ``kernels/scan.py``);
* the rows of ``rhs`` the entries name, gathered and scaled by ``data``;
* a ``scatter`` adding each product into its row, in entry order.

An entry outside ``[indptr[0], indptr[rows])`` or naming a column outside
``[0, cols)`` (jax pads BCSR matrices with such entries) adds nothing: its row
is made ``rows``, past the end, and the scatter skips it (Eigen would read past
``rhs``; generated code never does).  The evaluator's rule
(``xlac.evaluator``) computes the same sums with numpy.
"""
from __future__ import annotations

import numpy as np

from ..hlo import custom_call as hcc
from ..hlo.attributes import Raw
from ..hlo.ir import HloInstruction
from ..hlo.window import Window, WindowDimension, format_window
from ..shape import PRED, Shape
from .rewriter import PatternRewriter, PatternSet

__all__ = ["register"]


class _Ops:
    """Instructions made through the rewriter, shapes given or taken from the first operand."""

    def __init__(self, rw: PatternRewriter):
        self.rw = rw

    def scalar(self, et, value) -> HloInstruction:
        return self.rw.create("constant", Shape(et, ()), [], {"literal": np.array(value, et.dtype)})

    def full(self, et, value, dims) -> HloInstruction:
        return self.rw.create("broadcast", Shape(et, tuple(dims)), [self.scalar(et, value)], {"dimensions": ()})

    def op(self, opcode: str, x, *ys, et=None, attrs=None) -> HloInstruction:
        return self.rw.create(opcode, Shape(et or x.shape.element_type, x.shape.dimensions), [x, *ys], attrs)

    def cmp(self, direction: str, x, y) -> HloInstruction:
        return self.op("compare", x, y, et=PRED, attrs={"direction": direction})

    def select(self, p, x, y) -> HloInstruction:
        return self.op("select", p, x, y, et=x.shape.element_type)

    def gather_rows(self, table, index) -> HloInstruction:
        """``table[index]`` for a vector ``index`` [m]: rows of ``table`` [r] or [r, n]
        as [m] or [m, n] (an index out of bounds clamps, as gather does)."""
        m = index.shape.dimensions[0]
        rest = table.shape.dimensions[1:]
        column = self.rw.create("reshape", Shape(index.shape.element_type, (m, 1)), [index])
        return self.rw.create("gather", Shape(table.shape.element_type, (m,) + rest), [table, column], {
            "offset_dims": tuple(range(1, 1 + len(rest))), "collapsed_slice_dims": (0,),
            "start_index_map": (0,), "index_vector_dim": 1, "slice_sizes": (1,) + rest})


def _row_of_entries(o: _Ops, indptr, nse: int, rows: int):
    """(row, inside): for each entry ``k`` the row holding it, the number of
    ``i`` in ``1..rows`` with ``indptr[i] <= k``, and whether ``k`` is in a row at
    all (``indptr[0] <= k < indptr[rows]``).  The count is a prefix sum over the
    entries of a 1 added at each row's end, ``indptr[i]`` (a row end past the
    entries is skipped by the scatter; one below 0 counts from entry 0)."""
    it = indptr.shape.element_type
    rw = o.rw
    ends = rw.create("slice", Shape(it, (rows,)), [indptr], {"slice": ((1, rows + 1, 1),)})
    ends = o.op("maximum", ends, o.full(it, 0, (rows,)))
    marks = rw.create("scatter", Shape(it, (nse,)), [
        o.full(it, 0, (nse,)), rw.create("reshape", Shape(it, (rows, 1)), [ends]), o.full(it, 1, (rows,))], {
        "update_window_dims": (), "inserted_window_dims": (0,), "scatter_dims_to_operand_dims": (0,),
        "index_vector_dim": 1, "to_apply": rw.scalar_computation("add", it)})
    window = format_window(Window((WindowDimension(size=nse, padding_low=nse - 1),)))
    row = rw.create("reduce-window", Shape(it, (nse,)), [marks, o.scalar(it, 0)],
                    {"window": Raw(window), "to_apply": rw.scalar_computation("add", it)})
    k = rw.create("iota", Shape(it, (nse,)), [], {"iota_dimension": 0})
    first = rw.create("reshape", Shape(it, ()), [rw.create("slice", Shape(it, (1,)), [indptr], {"slice": ((0, 1, 1),)})])
    first = rw.create("broadcast", Shape(it, (nse,)), [first], {"dimensions": ()})
    inside = o.op("and", o.cmp("LE", first, k), o.cmp("LT", row, o.full(it, rows, (nse,))))
    return row, inside


def csr_sparse_dense(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """``cpu_csr_sparse_dense_ffi`` as HLO (see the module docstring)."""
    if hcc.target_of(inst) != hcc.CSR_SPARSE_DENSE:
        return False
    hcc.check_csr_sparse_dense([o.shape for o in inst.operands], inst.shape)
    data, indptr, indices, rhs = inst.operands
    o = _Ops(rw)
    et, it = data.shape.element_type, indptr.shape.element_type
    nse, rows, cols = data.shape.dimensions[0], indptr.shape.dimensions[0] - 1, rhs.shape.dimensions[0]
    n = rhs.shape.dimensions[1] if rhs.shape.rank == 2 else 1
    if nse == 0 or rows == 0 or cols == 0 or n == 0:
        return rw.supersede(inst, o.full(et, 0, inst.shape.dimensions))
    row, inside = _row_of_entries(o, indptr, nse, rows)
    column_ok = o.op("and", o.cmp("GE", indices, o.full(it, 0, (nse,))), o.cmp("LT", indices, o.full(it, cols, (nse,))))
    # A dropped entry goes to row `rows`, past the end: the scatter skips its
    # window (and the rows stay in order, which lets the scatter split them
    # between threads); the gather clamps its column.
    target_row = o.select(o.op("and", inside, column_ok), row, o.full(it, rows, (nse,)))
    matrix = rhs if rhs.shape.rank == 2 else rw.create("reshape", Shape(et, (cols, 1)), [rhs])
    grid = Shape(et, (nse, n))
    products = rw.create("multiply", grid, [rw.create("broadcast", grid, [data], {"dimensions": (0,)}),
                                            o.gather_rows(matrix, indices)])
    out = rw.create("scatter", Shape(et, (rows, n)), [
        o.full(et, 0, (rows, n)), rw.create("reshape", Shape(it, (nse, 1)), [target_row]), products], {
        "update_window_dims": (1,), "inserted_window_dims": (0,), "scatter_dims_to_operand_dims": (0,),
        "index_vector_dim": 1, "to_apply": rw.scalar_computation("add", et)})
    if out.shape.dimensions != inst.shape.dimensions:
        out = rw.create("reshape", Shape(et, inst.shape.dimensions), [out])
    return rw.supersede(inst, out if out.shape == inst.shape else rw.create("copy", inst.shape, [out]))


def register(patterns: PatternSet) -> None:
    """Add the expansion of jaxlib's ``cpu_csr_sparse_dense_ffi`` to ``patterns``."""
    patterns.register("custom-call")(csr_sparse_dense)
